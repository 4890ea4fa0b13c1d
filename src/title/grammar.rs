//! The scanners behind [`Title`](super::Title) and
//! [`Explanation`](super::Explanation): each one a right-to-left scan that
//! returns slices of its input, never allocates and never backtracks.

use super::WorkingDir;

/// The suffix Gemini 0.28+ appends for a backgrounded command.
pub(crate) const BACKGROUND: &str = " [background]";
/// Opens the bracket of a directory the model asked for.
pub(crate) const IN: &str = "[in ";
/// Opens the bracket of the process's own working directory.
pub(crate) const CURRENT: &str = "[current working directory ";
/// Introduces an `inputs: {…}` object in a title.
const INPUTS: &[u8] = b"inputs: {";

/// The empty slice at the end of `s`: what an absent part is, so that every
/// part handed out is a slice of the input.
pub(crate) fn end_of(s: &str) -> &str {
    // The end of a string is always a character boundary.
    s.split_at(s.len()).1
}

/// The pieces of the shell grammar found in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Details<'a> {
    pub(crate) command: &'a str,
    pub(crate) working_dir: Option<WorkingDir<'a>>,
    pub(crate) description: &'a str,
    pub(crate) background: bool,
}

/// Splits a trailing ` (DESC)` off `s`: `s` ends with `)`, whose matching
/// `(` (counting nested parentheses right to left) is preceded by a space,
/// and `DESC` is not empty. Returns what precedes the space, and `DESC`.
///
/// One right-to-left scan from the end; it stops at the matching `(` or, for
/// an unbalanced group, at the start of `s`.
pub(crate) fn split_description(s: &str) -> Option<(&str, &str)> {
    let bytes = s.as_bytes();
    let close = bytes.len().checked_sub(1)?;
    if bytes.get(close) != Some(&b')') {
        return None;
    }
    // A plain byte loop: memchr's per-call cost loses on dense parentheses
    // (about 10x on `)))…`), and titles are short.
    let mut depth: usize = 1;
    let mut open = None;
    for (at, &b) in bytes.get(..close)?.iter().enumerate().rev() {
        if b == b')' {
            depth = depth.saturating_add(1);
        } else if b == b'(' {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                open = Some(at);
                break;
            }
        }
    }
    let open = open?;
    let space = open.checked_sub(1)?;
    if bytes.get(space) != Some(&b' ') {
        return None;
    }
    let description = s.get(open.checked_add(1)?..close)?;
    if description.is_empty() {
        return None;
    }
    Some((s.get(..space)?, description))
}

/// Splits a trailing ` [in DIR]` or ` [current working directory DIR]` off
/// `s`: `s` ends with `]`, and the bracket is the last ` [in ` or
/// ` [current working directory ` in `s` (so `DIR` may hold `]`, `(` and
/// spaces, and the command may hold either marker). Returns what precedes
/// the space, and the directory.
///
/// One right-to-left scan of `s`, each `[` checked against the two markers
/// (at most 27 bytes compared).
pub(crate) fn split_working_dir(s: &str) -> Option<(&str, WorkingDir<'_>)> {
    let bytes = s.as_bytes();
    let close = bytes.len().checked_sub(1)?;
    if bytes.get(close) != Some(&b']') {
        return None;
    }
    let mut end = close;
    while let Some(at) = bytes.get(..end)?.iter().rposition(|&b| b == b'[') {
        if let Some(space) = at.checked_sub(1) {
            if bytes.get(space) == Some(&b' ') {
                if let Some(dir) = bracket(s.get(at..close)?) {
                    return Some((s.get(..space)?, dir));
                }
            }
        }
        end = at;
    }
    None
}

/// Reads a whole bracket `[in DIR]` / `[current working directory DIR]`,
/// anchored at both ends of `s`.
pub(crate) fn whole_working_dir(s: &str) -> Option<WorkingDir<'_>> {
    bracket(s.strip_suffix(']')?)
}

/// `[in DIR` or `[current working directory DIR` (the closing `]` removed).
fn bracket(open: &str) -> Option<WorkingDir<'_>> {
    if let Some(dir) = open.strip_prefix(IN) {
        Some(WorkingDir::In(dir))
    } else {
        open.strip_prefix(CURRENT).map(WorkingDir::Current)
    }
}

/// The shell grammar without the ` [background]` suffix: an optional
/// description, then an optional directory bracket before it. `None` when
/// neither is there.
fn details(s: &str) -> Option<Details<'_>> {
    let (rest, description) = split_description(s).unwrap_or((s, end_of(s)));
    match split_working_dir(rest) {
        Some((command, dir)) => Some(Details {
            command,
            working_dir: Some(dir),
            description,
            background: false,
        }),
        None if !description.is_empty() => Some(Details {
            command: rest,
            working_dir: None,
            description,
            background: false,
        }),
        None => None,
    }
}

/// The shell grammar on a whole title: ` [background]` counts only when the
/// rest of the grammar matches before it.
pub(crate) fn shell(title: &str) -> Option<Details<'_>> {
    if let Some(head) = title.strip_suffix(BACKGROUND) {
        if let Some(found) = details(head) {
            return Some(Details {
                background: true,
                ..found
            });
        }
    }
    details(title)
}

/// The explanation grammar: `[in DIR]` or `[current working directory DIR]`
/// at the start, then an optional ` (DESC)`, then an optional
/// ` [background]`, nothing else.
pub(crate) fn explanation(text: &str) -> Option<Details<'_>> {
    fn anchored(s: &str) -> Option<Details<'_>> {
        let (rest, description) = split_description(s).unwrap_or((s, end_of(s)));
        Some(Details {
            command: end_of(s),
            working_dir: Some(whole_working_dir(rest)?),
            description,
            background: false,
        })
    }
    if let Some(head) = text.strip_suffix(BACKGROUND) {
        if let Some(found) = anchored(head) {
            return Some(Details {
                background: true,
                ..found
            });
        }
    }
    anchored(text)
}

/// The `{…}` of the first `inputs: {` (at the start of `s` or after
/// whitespace) through the end of `s`, which must end with `}` (trailing
/// whitespace ignored). Not validated as JSON.
pub(crate) fn inputs(s: &str) -> Option<&str> {
    let trimmed = s.trim_end();
    if !trimmed.ends_with('}') {
        return None;
    }
    let bytes = trimmed.as_bytes();
    let at = memchr::memmem::find_iter(bytes, INPUTS).find(|&at| {
        at.checked_sub(1)
            .is_none_or(|before| bytes.get(before).is_some_and(u8::is_ascii_whitespace))
    })?;
    trimmed.get(at.checked_add(INPUTS.len().checked_sub(1)?)?..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn description_needs_a_space_and_balance() {
        assert_eq!(split_description("ls (a (b))"), Some(("ls", "a (b)")));
        assert_eq!(split_description("echo $(date)"), None);
        assert_eq!(split_description("f(x)"), None);
        assert_eq!(split_description("(x)"), None);
        assert_eq!(split_description("a ()"), None);
        assert_eq!(split_description("a (b))"), None);
        assert_eq!(split_description(")"), None);
        assert_eq!(split_description(""), None);
        assert_eq!(split_description(" (é)"), Some(("", "é")));
    }

    #[test]
    fn working_dir_is_the_last_marker() {
        assert_eq!(
            split_working_dir("a [in b] [in c]"),
            Some(("a [in b]", WorkingDir::In("c")))
        );
        assert_eq!(
            split_working_dir("a [in b] c]"),
            Some(("a", WorkingDir::In("b] c")))
        );
        assert_eq!(split_working_dir("a[in b]"), None);
        assert_eq!(split_working_dir("[in b]"), None);
        assert_eq!(split_working_dir("a [in b"), None);
        assert_eq!(
            split_working_dir(" [current working directory /]"),
            Some(("", WorkingDir::Current("/")))
        );
    }

    #[test]
    fn inputs_need_a_closing_brace() {
        assert_eq!(inputs("x inputs: {\"a\":1} \n"), Some("{\"a\":1}"));
        assert_eq!(inputs("inputs: {}"), Some("{}"));
        assert_eq!(inputs("xinputs: {} inputs: {a}"), Some("{a}"));
        assert_eq!(inputs("inputs: {a} and more"), None);
        assert_eq!(inputs("inputs: {"), None);
    }
}
