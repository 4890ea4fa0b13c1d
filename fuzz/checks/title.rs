//! The invariant behind the `title` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs` (which replays the committed seeds) and
//! `tests/integration/title_props.rs` (which uses the naive oracle).
//!
//! Input: byte 0 picks the tool kind (`None`, `execute`, `edit`, `other`);
//! the rest is the title, then, after the first `0xFF` byte (never in UTF-8),
//! an explanation text; invalid UTF-8 is replaced. Asserted:
//! - every returned part is a slice of the title (or of the explanation);
//! - `Title::parse(t).to_string() == t`, and the parts agree with a naive,
//!   quadratic oracle of the documented rule (inputs up to 2 KiB);
//! - the kind only chooses between the shell grammar and `Title::plain`;
//! - `Explanation::parse(x)` displays back as `x.trim()`, and a recognized
//!   explanation keeps the title whole as the command;
//! - `tool_name_from_id` returns a prefix followed by `-<digits>-<digits>`.
#![allow(dead_code)]

use acp_codec::title::{tool_name_from_id, Explanation, Title, WorkingDir};

/// (command, working dir, description, background).
pub type Parts<'a> = (&'a str, Option<WorkingDir<'a>>, &'a str, bool);

pub fn check(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let kind = [None, Some("execute"), Some("edit"), Some("other")][usize::from(selector % 4)];
    let (title, explanation) = match rest.iter().position(|&b| b == 0xFF) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let title = String::from_utf8_lossy(title);
    let explanation = explanation.map(String::from_utf8_lossy);
    check_strs(&title, kind, explanation.as_deref());
}

pub fn check_strs(title: &str, kind: Option<&str>, explanation: Option<&str>) {
    let parsed = Title::parse(title);
    assert_slices(&parsed, &[title]);
    assert_eq!(parsed.as_str(), title);
    assert_eq!(parsed.to_string(), title);
    if title.len() <= 2048 {
        assert_eq!(parts(&parsed), oracle(title), "title {title:?}");
    }
    let plain = Title::plain(title);
    assert_slices(&plain, &[title]);
    assert_eq!(parts(&plain), (title, None, "", false));
    let keyed = Title::parse_for_kind(title, kind);
    match kind {
        None | Some("execute") => assert_eq!(keyed, parsed),
        Some(_) => assert_eq!(keyed, plain),
    }
    if let Some(name) = tool_name_from_id(title) {
        let tail = &title[name.len()..];
        let mut numbers = tail.strip_prefix('-').unwrap().split('-');
        for _ in 0..2 {
            let n = numbers.next().unwrap();
            assert!(
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
                "{title:?}"
            );
        }
        assert!(numbers.next().is_none() && !name.is_empty());
    }
    if let Some(x) = explanation {
        let combined = keyed.with_explanation(x);
        assert_slices(&combined, &[title, x]);
        match Explanation::parse(x) {
            Some(e) => {
                assert_eq!(e.to_string(), x.trim());
                assert_eq!(combined.command(), title);
                if let Explanation::Shell { .. } = e {
                    assert_eq!(combined.to_string(), format!("{title} {}", x.trim()));
                }
            }
            None => assert_eq!(combined, keyed),
        }
    }
}

pub fn parts<'a>(t: &Title<'a>) -> Parts<'a> {
    (
        t.command(),
        t.working_dir(),
        t.description(),
        t.is_background(),
    )
}

fn within(outer: &str, inner: &str) -> bool {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    i >= o && i + inner.len() <= o + outer.len()
}

pub fn assert_slices(t: &Title<'_>, sources: &[&str]) {
    let mut all = vec![t.as_str(), t.command(), t.description()];
    all.extend(t.working_dir().map(WorkingDir::path));
    all.extend(t.inputs());
    for p in all {
        assert!(
            sources.iter().any(|s| within(s, p)),
            "{p:?} not within {sources:?}"
        );
    }
}

// ---- A naive oracle of the documented rule (quadratic, std string ops). ----

fn is_balanced(s: &str) -> bool {
    let mut depth = 0i64;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

fn oracle_description(s: &str) -> Option<(&str, &str)> {
    if !s.ends_with(')') {
        return None;
    }
    // The `(` balancing the final `)` is the rightmost one whose group is balanced.
    let (open, _) = s
        .char_indices()
        .rev()
        .find(|&(i, c)| c == '(' && is_balanced(&s[i..]))?;
    let desc = &s[open + 1..s.len() - 1];
    (s[..open].ends_with(' ') && !desc.is_empty()).then(|| (&s[..open - 1], desc))
}

fn oracle_dir(s: &str) -> Option<(&str, WorkingDir<'_>)> {
    if !s.ends_with(']') {
        return None;
    }
    let i = s.rfind(" [in ");
    let c = s.rfind(" [current working directory ");
    let body = &s[..s.len() - 1];
    match (i, c) {
        (Some(i), c) if c.is_none_or(|c| i > c) => Some((&s[..i], WorkingDir::In(&body[i + 5..]))),
        (_, Some(c)) => Some((&s[..c], WorkingDir::Current(&body[c + 28..]))),
        _ => None,
    }
}

fn oracle_details(s: &str) -> Option<Parts<'_>> {
    let (rest, desc) = oracle_description(s).unwrap_or((s, ""));
    match oracle_dir(rest) {
        Some((cmd, dir)) => Some((cmd, Some(dir), desc, false)),
        None if !desc.is_empty() => Some((rest, None, desc, false)),
        None => None,
    }
}

/// The parts the documented rule gives for a title.
pub fn oracle(t: &str) -> Parts<'_> {
    if let Some(head) = t.strip_suffix(" [background]") {
        if let Some((c, d, e, _)) = oracle_details(head) {
            return (c, d, e, true);
        }
    }
    oracle_details(t).unwrap_or((t, None, "", false))
}
