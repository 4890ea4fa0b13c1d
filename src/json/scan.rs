//! Allocation-free JSON scanning: where a value ends, the members of an
//! object, a key and its colon. The ACP envelope, the typed decoders'
//! reader (`acp::read`) and the framing layer's id peek all slice lines
//! with these, without building anything (`serde_json`'s own skipping allocates a stack
//! for nested values).
//!
//! The `skip_*` functions and [`validate`] check the full grammar.
//!
//! Nesting is limited to 128 levels, like `serde_json`'s recursion limit.

use super::swar::short_special;

/// Deepest nesting accepted.
pub(crate) const MAX_DEPTH: u32 = 128;

/// A syntax error at a byte offset of the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanError {
    /// Offset of the offending byte (or the end of the text).
    pub(crate) offset: usize,
}

fn err<T>(offset: usize) -> Result<T, ScanError> {
    Err(ScanError { offset })
}

/// The offset of the first non-whitespace byte at or after `i`.
#[inline]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(c) = b.get(i) {
        if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i = i.saturating_add(1);
    }
    i
}

/// Skips the string whose opening quote is at `i`; returns the offset after
/// its closing quote.
///
/// Always inlined: most values in the objects a decoder passes over
/// (`_meta`, a tool's raw input) are short strings, and a call would save
/// and restore the container walk's registers around each one (a
/// quarter of the instructions for Qwen Code's `_meta`).
#[inline(always)]
pub(crate) fn skip_str(b: &[u8], i: usize) -> Result<usize, ScanError> {
    if b.get(i) != Some(&b'"') {
        return err(i);
    }
    let mut i = i.saturating_add(1);
    #[cfg(all(
        feature = "alloc",
        any(
            target_feature = "sse2",
            all(target_arch = "aarch64", target_feature = "neon")
        )
    ))]
    let start = i;
    loop {
        // Keys and tags end within a word; long text falls through to the
        // sixteen-byte scan.
        let Some(n) = short_special(b, i) else {
            return err(b.len());
        };
        i = n;
        match b.get(i) {
            Some(b'"') => return Ok(i.saturating_add(1)),
            Some(b'\\') => {
                match b.get(i.saturating_add(1)) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                        i = i.saturating_add(2);
                    }
                    Some(b'u') => {
                        let hex = b.get(i.saturating_add(2)..i.saturating_add(6));
                        if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                            return err(i);
                        }
                        i = i.saturating_add(6);
                    }
                    _ => return err(i),
                }
                // Long text with escapes (a skill's body, a file kept
                // raw): the rest a block at a time, each escape a bit,
                // not a search from each to the next.
                #[cfg(all(
                    feature = "alloc",
                    any(
                        target_feature = "sse2",
                        all(target_arch = "aarch64", target_feature = "neon")
                    )
                ))]
                if i.wrapping_sub(start) >= LONG_TEXT {
                    use super::string_end::{checked_end_blocks, Checked};
                    match checked_end_blocks(b, i) {
                        Checked::End(end) => return Ok(end),
                        Checked::Bad(at) => return err(at),
                        Checked::Rest(at) => i = at,
                    }
                }
            }
            // A raw control character: not allowed in a JSON string.
            _ => return err(i),
        }
    }
}

/// The bytes of a string's text, up to an escape, past which
/// [`skip_str`] reads the rest a block at a time: shorter text (a key, a
/// tag, a path) ends sooner searched from special byte to special byte.
#[cfg(all(
    feature = "alloc",
    any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    )
))]
const LONG_TEXT: usize = 64;

/// Skips a number starting at `i` (JSON grammar). An integer (a count, a
/// line number, a timestamp) is read here; a fraction or an exponent by
/// [`skip_fraction`].
#[inline(always)]
fn skip_num(b: &[u8], mut i: usize) -> Result<usize, ScanError> {
    if b.get(i) == Some(&b'-') {
        i = i.saturating_add(1);
    }
    match b.get(i) {
        Some(b'0') => i = i.saturating_add(1),
        Some(b'1'..=b'9') => i = digits(b, i.saturating_add(1)),
        _ => return err(i),
    }
    match b.get(i) {
        Some(b'.' | b'e' | b'E') => skip_fraction(b, i),
        _ => Ok(i),
    }
}

/// The offset after the digits at `i`.
#[inline(always)]
fn digits(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i = i.saturating_add(1);
    }
    i
}

/// Skips the fraction and the exponent of a number, either of which starts
/// at `i`.
fn skip_fraction(b: &[u8], mut i: usize) -> Result<usize, ScanError> {
    if b.get(i) == Some(&b'.') {
        let start = i.saturating_add(1);
        i = digits(b, start);
        if i == start {
            return err(i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i = i.saturating_add(1);
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i = i.saturating_add(1);
        }
        let start = i;
        i = digits(b, start);
        if i == start {
            return err(i);
        }
    }
    Ok(i)
}

fn skip_lit(b: &[u8], i: usize, lit: &[u8]) -> Result<usize, ScanError> {
    let end = i.saturating_add(lit.len());
    if b.get(i..end) == Some(lit) {
        Ok(end)
    } else {
        err(i)
    }
}

/// Skips one JSON value starting at `i` (no leading whitespace); returns the
/// offset after it. Validates the full grammar.
pub(crate) fn skip_value(b: &[u8], i: usize) -> Result<usize, ScanError> {
    skip_value_within(b, i, MAX_DEPTH)
}

/// [`skip_value`] for a value found `MAX_DEPTH - max_depth` containers
/// deep: at most `max_depth` containers may nest in it.
#[inline]
pub(crate) fn skip_value_within(b: &[u8], i: usize, max_depth: u32) -> Result<usize, ScanError> {
    // Most values passed over are strings (`"2.0"`, a method, a key's
    // value kept raw): read here, without the containers' walk.
    if b.get(i) == Some(&b'"') {
        return skip_str(b, i);
    }
    skip_nested(b, i, max_depth)
}

/// [`skip_value_within`] for any value: containers walked with a stack of
/// one bit per level.
fn skip_nested(b: &[u8], i: usize, max_depth: u32) -> Result<usize, ScanError> {
    // One bit per open container: 1 object, 0 array.
    let mut stack: u128 = 0;
    let mut depth: u32 = 0;
    let mut i = i;
    loop {
        // Parse a value at i.
        match b.get(i) {
            Some(&open @ (b'{' | b'[')) => {
                let is_obj = open == b'{';
                if depth >= max_depth {
                    return err(i);
                }
                i = skip_ws(b, i.saturating_add(1));
                // `{` + 2 is `}`, `[` + 2 is `]`.
                if b.get(i) == Some(&open.wrapping_add(2)) {
                    i = i.saturating_add(1);
                } else {
                    stack = (stack << 1) | u128::from(is_obj);
                    depth = depth.saturating_add(1);
                    if is_obj {
                        i = member_value(b, i)?;
                    }
                    continue;
                }
            }
            Some(b'"') => i = skip_str(b, i)?,
            Some(b't') => i = skip_lit(b, i, b"true")?,
            Some(b'f') => i = skip_lit(b, i, b"false")?,
            Some(b'n') => i = skip_lit(b, i, b"null")?,
            Some(b'-' | b'0'..=b'9') => i = skip_num(b, i)?,
            _ => return err(i),
        }
        // After a value: close containers or move to the next element.
        while depth > 0 {
            let is_obj = stack & 1 == 1;
            let mut c = b.get(i).copied();
            if matches!(c, Some(b' ' | b'\t' | b'\n' | b'\r')) {
                i = skip_ws(b, i);
                c = b.get(i).copied();
            }
            match c {
                Some(b',') => {
                    i = skip_ws(b, i.saturating_add(1));
                    if is_obj {
                        i = member_value(b, i)?;
                    }
                    break;
                }
                Some(b'}') if is_obj => {}
                Some(b']') if !is_obj => {}
                _ => return err(i),
            }
            stack >>= 1;
            depth = depth.saturating_sub(1);
            i = i.saturating_add(1);
        }
        if depth == 0 {
            return Ok(i);
        }
    }
}

/// [`key_at`]'s offset of the value, for a key whose opening quote is at
/// `i`: a plain key is read inline ([`plain_key`]).
#[inline(always)]
fn member_value(b: &[u8], i: usize) -> Result<usize, ScanError> {
    match plain_key(b, i) {
        Some(found) => found.map(|(_, value)| value),
        None => key_at(b, i).map(|(_, value)| value),
    }
}

/// A key whose opening quote is at `i` and that holds no escape (its first
/// special byte is its closing quote), read in one scan: the offset of its
/// closing quote and of its value (after the colon and whitespace), or the
/// offset where the colon is missing. `None` for any other key, for
/// [`key_at`] to read.
#[inline(always)]
pub(crate) fn plain_key(b: &[u8], i: usize) -> Option<Result<(usize, usize), ScanError>> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let end = short_special(b, i.saturating_add(1)).filter(|&n| b.get(n) == Some(&b'"'))?;
    let colon = skip_ws(b, end.saturating_add(1));
    if b.get(colon) != Some(&b':') {
        return Some(err(colon));
    }
    Some(Ok((end, skip_ws(b, colon.saturating_add(1)))))
}

/// `head` at `at` after whitespace (an object's opening, a key and the
/// opening quote of a string value, written tight: `{"type":"`), then a
/// string without escapes or control characters: the offsets of its text
/// and of its closing quote. `None` for any other text.
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn tight_string_member(b: &[u8], at: usize, head: &[u8]) -> Option<(usize, usize)> {
    let at = skip_ws(b, at);
    let from = at.checked_add(head.len())?;
    if b.get(at..from)? != head {
        return None;
    }
    let end = short_special(b, from)?;
    (b.get(end) == Some(&b'"')).then_some((from, end))
}

/// The integer at `i` when it is written plainly (digits only: no sign,
/// no leading zero, no fraction or exponent), fits a `u64` and is followed
/// by a delimiter or the end: its value and the offset after it. `None`
/// for any other text.
#[cfg(feature = "alloc")]
#[inline]
pub(crate) fn plain_u64(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let mut end = i;
    let mut value: u64 = 0;
    while let Some(&c) = b.get(end).filter(|c| c.is_ascii_digit()) {
        value = value
            .checked_mul(10)?
            .checked_add(u64::from(c.wrapping_sub(b'0')))?;
        end = end.saturating_add(1);
    }
    let leading_zero = b.get(i) == Some(&b'0') && end > i.saturating_add(1);
    let delimited = b.get(end).is_none_or(|&c| is_delimiter(c));
    (end > i && !leading_zero && delimited).then_some((value, end))
}

/// Whether `c` can follow a scalar value: a separator, a closing bracket or
/// whitespace.
#[inline]
pub(crate) fn is_delimiter(c: u8) -> bool {
    matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
}

/// Reads an object key whose opening quote is at `i` (validating the string
/// grammar), then the `:` after it. Returns the key's raw token (quotes
/// included) and the offset of the value after the colon and whitespace.
///
/// The one key reader: the envelope's member walk ([`Members`]), the id
/// peek of the framing layer and the direct decoder all read keys here.
#[inline]
pub(crate) fn key_at(b: &[u8], i: usize) -> Result<(&[u8], usize), ScanError> {
    let key_end = skip_str(b, i)?;
    let key = b.get(i..key_end).ok_or(ScanError { offset: i })?;
    let colon = skip_ws(b, key_end);
    if b.get(colon) != Some(&b':') {
        return err(colon);
    }
    Ok((key, skip_ws(b, colon.saturating_add(1))))
}

#[cfg(feature = "alloc")]
/// Checks that `text` is exactly one JSON value (whitespace around allowed).
pub(crate) fn validate(text: &str) -> Result<(), ScanError> {
    let b = text.as_bytes();
    let end = skip_value(b, skip_ws(b, 0))?;
    let end = skip_ws(b, end);
    if end == b.len() {
        Ok(())
    } else {
        err(end)
    }
}

#[cfg(feature = "alloc")]
/// The members of the JSON object `text` (which must start with `{` after
/// whitespace): each key as its raw token (quotes included) and each value
/// as its text, without allocating.
pub(crate) struct Members<'a> {
    text: &'a str,
    pos: usize,
    first: bool,
    done: bool,
}

#[cfg(feature = "alloc")]
impl<'a> Members<'a> {
    /// Starts on an object; `Err` if `text` does not start with `{`.
    pub(crate) fn new(text: &'a str) -> Result<Self, ScanError> {
        let b = text.as_bytes();
        let i = skip_ws(b, 0);
        if b.get(i) != Some(&b'{') {
            return err(i);
        }
        Ok(Self {
            text,
            pos: i.saturating_add(1),
            first: true,
            done: false,
        })
    }

    /// The offset after the closing `}` once iteration ended.
    pub(crate) fn end(&self) -> usize {
        self.pos
    }

    fn step(&mut self) -> Result<Option<(&'a str, &'a str)>, ScanError> {
        let b = self.text.as_bytes();
        let mut i = skip_ws(b, self.pos);
        if self.first {
            self.first = false;
            if b.get(i) == Some(&b'}') {
                self.pos = i.saturating_add(1);
                return Ok(None);
            }
        } else {
            match b.get(i) {
                Some(b',') => i = skip_ws(b, i.saturating_add(1)),
                Some(b'}') => {
                    self.pos = i.saturating_add(1);
                    return Ok(None);
                }
                _ => return err(i),
            }
        }
        let (key, v) = key_at(b, i)?;
        let v_end = skip_value(b, v)?;
        self.pos = v_end;
        // Both spans start and end at ASCII punctuation of the text, so they
        // are on character boundaries.
        let key = self.text.get(i..i.saturating_add(key.len()));
        let value = self.text.get(v..v_end);
        match (key, value) {
            (Some(key), Some(value)) => Ok(Some((key, value))),
            _ => err(i),
        }
    }
}

#[cfg(feature = "alloc")]
impl<'a> Iterator for Members<'a> {
    type Item = Result<(&'a str, &'a str), ScanError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(m)) => Some(Ok(m)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(feature = "alloc")]
/// Makes the JSON text in `json` one line: if it holds a newline, removes
/// the insignificant whitespace in place and returns the new length. Linear,
/// no allocation; string bodies are skipped with `swar::find_special`.
///
/// # Errors
///
/// The offset of a raw newline inside a string (which no compaction can
/// remove: the text would still be two lines).
pub(crate) fn compact(json: &mut [u8]) -> Result<usize, usize> {
    if memchr::memchr(b'\n', json).is_none() {
        return Ok(json.len());
    }
    let mut read = 0usize;
    let mut write = 0usize;
    while let Some(&b) = json.get(read) {
        let end = if b == b'"' {
            string_end_or_newline(json, read)?
        } else {
            read.saturating_add(1)
        };
        if b == b'"' || !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            json.copy_within(read..end, write);
            write = write.saturating_add(end.saturating_sub(read));
        }
        read = end;
    }
    Ok(write)
}

#[cfg(feature = "alloc")]
/// The offset after the string whose opening quote is at `i` (the end of
/// the text when it is not closed); `Err` with the offset of a raw newline
/// inside it. Other control characters are left for the JSON check.
fn string_end_or_newline(b: &[u8], i: usize) -> Result<usize, usize> {
    let mut j = i.saturating_add(1);
    loop {
        let Some(n) = super::swar::find_special(b, j) else {
            return Ok(b.len());
        };
        match b.get(n) {
            Some(b'"') => return Ok(n.saturating_add(1)),
            Some(b'\\') => j = n.saturating_add(2).min(b.len()),
            Some(b'\n') => return Err(n),
            _ => j = n.saturating_add(1),
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Plain integers as `str::parse` and JSON's grammar read them: a
    /// token of digits without a leading zero, followed by a delimiter or
    /// the end, that fits; anything else is left to the full reader.
    #[test]
    fn plain_integers_are_read_as_parse_reads_them() {
        let tokens = [
            "0",
            "7",
            "10",
            "01",
            "00",
            "-1",
            "-0",
            "1.5",
            "1e3",
            "1E3",
            "2.",
            "12a",
            "1:",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "",
            "65535",
            "4294967296",
            "+1",
            " 1",
        ];
        for token in tokens {
            for after in ["", ",", "}", "]", " ", "\n", "x", "\"", "."] {
                let text = alloc::format!("{token}{after}");
                let plain = !token.is_empty()
                    && token.bytes().all(|c| c.is_ascii_digit())
                    && !(token.len() > 1 && token.starts_with('0'))
                    && after.bytes().next().is_none_or(is_delimiter);
                let want = token.parse::<u64>().ok().filter(|_| plain);
                let want = want.map(|v| (v, token.len()));
                assert_eq!(plain_u64(text.as_bytes(), 0), want, "{text:?}");
            }
        }
    }

    #[test]
    fn agrees_with_serde_json() {
        let cases = [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "1.5e-3",
            "-12E+2",
            "\"a\\u00e9\\n\"",
            "[]",
            "{}",
            "[1,[2,[3,{}]],{\"a\":[]}]",
            " { \"a\" : 1 , \"b\" : [ true , null ] } ",
            "01",
            "1.",
            "-",
            "1e",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "[1 2]",
            "\"\\x\"",
            "\"\\u12g4\"",
            "\"a\tb\"",
            "tru",
            "nul",
            "[",
            "{",
            "\"abc",
            "]",
            "{}}",
            "[]]",
            "\"\u{1}\"",
        ];
        for c in cases {
            let ours = validate(c).is_ok();
            let theirs = serde_json::from_str::<serde::de::IgnoredAny>(c).is_ok();
            assert_eq!(ours, theirs, "{c:?}");
        }
        let deep = "[".repeat(129) + &"]".repeat(129);
        assert!(validate(&deep).is_err());
        let ok = "[".repeat(128) + &"]".repeat(128);
        assert!(validate(&ok).is_ok());
    }

    /// Where a string token ends, one byte at a time: the reference the
    /// word-at-a-time [`skip_str`] is held against.
    fn naive_skip_str(b: &[u8], i: usize) -> Result<usize, ScanError> {
        if b.get(i) != Some(&b'"') {
            return err(i);
        }
        let mut j = i + 1;
        loop {
            match b.get(j) {
                None => return err(b.len()),
                Some(b'"') => return Ok(j + 1),
                Some(b'\\') => match b.get(j + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                    Some(b'u') => {
                        let hex = b.get(j + 2..j + 6);
                        if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                            return err(j);
                        }
                        j += 6;
                    }
                    _ => return err(j),
                },
                Some(&c) if c < 0x20 => return err(j),
                Some(_) => j += 1,
            }
        }
    }

    /// Where a value ends, or the offset of the first byte that is not
    /// JSON, by recursive descent over the grammar, one byte at a time:
    /// the reference the container walk ([`skip_value`]) is held against,
    /// error offsets included. `room` is how many containers may still
    /// open.
    fn naive_skip_value(b: &[u8], i: usize, room: u32) -> Result<usize, usize> {
        let ws = |mut j: usize| {
            while matches!(b.get(j), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                j += 1;
            }
            j
        };
        let digits = |mut j: usize| {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            j
        };
        match b.get(i) {
            Some(&open @ (b'{' | b'[')) => {
                if room == 0 {
                    return Err(i);
                }
                let close = if open == b'{' { b'}' } else { b']' };
                let mut j = ws(i + 1);
                if b.get(j) == Some(&close) {
                    return Ok(j + 1);
                }
                loop {
                    if open == b'{' {
                        j = naive_skip_str(b, j).map_err(|e| e.offset)?;
                        j = ws(j);
                        if b.get(j) != Some(&b':') {
                            return Err(j);
                        }
                        j = ws(j + 1);
                    }
                    j = ws(naive_skip_value(b, j, room - 1)?);
                    match b.get(j) {
                        Some(b',') => j = ws(j + 1),
                        Some(&c) if c == close => return Ok(j + 1),
                        _ => return Err(j),
                    }
                }
            }
            Some(b'"') => naive_skip_str(b, i).map_err(|e| e.offset),
            Some(b't' | b'f' | b'n') => ["true", "false", "null"]
                .iter()
                .find(|lit| b.get(i..i + lit.len()) == Some(lit.as_bytes()))
                .map(|lit| i + lit.len())
                .ok_or(i),
            Some(b'-' | b'0'..=b'9') => {
                let mut j = i + usize::from(b[i] == b'-');
                j = match b.get(j) {
                    Some(b'0') => j + 1,
                    Some(b'1'..=b'9') => digits(j + 1),
                    _ => return Err(j),
                };
                if b.get(j) == Some(&b'.') {
                    let after = digits(j + 1);
                    if after == j + 1 {
                        return Err(after);
                    }
                    j = after;
                }
                if matches!(b.get(j), Some(b'e' | b'E')) {
                    j += 1;
                    if matches!(b.get(j), Some(b'+' | b'-')) {
                        j += 1;
                    }
                    let after = digits(j);
                    if after == j {
                        return Err(after);
                    }
                    j = after;
                }
                Ok(j)
            }
            _ => Err(i),
        }
    }

    /// A JSON value, nested, with whitespace here and there, as text (all
    /// ASCII).
    fn json_value() -> impl proptest::strategy::Strategy<Value = alloc::string::String> {
        use proptest::prelude::*;
        let leaf = proptest::sample::select(alloc::vec![
            "null",
            "true",
            "false",
            "0",
            "-1",
            "12.5e-3",
            "-0.0E+2",
            "\"a\"",
            "\"\"",
            "\"\\u00e9\\n\\\"\"",
            "\"long text past sixteen bytes\"",
        ])
        .prop_map(alloc::string::String::from);
        let gap = || proptest::sample::select(alloc::vec!["", "", " ", "\n "]);
        leaf.prop_recursive(4, 24, 4, move |inner| {
            prop_oneof![
                proptest::collection::vec((gap(), inner.clone()), 0..4).prop_map(|items| {
                    let items: Vec<_> = items
                        .into_iter()
                        .map(|(g, v)| alloc::format!("{g}{v}{g}"))
                        .collect();
                    alloc::format!("[{}]", items.join(","))
                }),
                proptest::collection::vec((gap(), "[a-z]{1,20}", inner), 0..4).prop_map(
                    |members| {
                        let members: Vec<_> = members
                            .into_iter()
                            .map(|(g, k, v)| alloc::format!("{g}\"{k}\"{g}:{g}{v}"))
                            .collect();
                        alloc::format!("{{{}}}", members.join(","))
                    }
                ),
            ]
        })
    }

    /// A JSON value, most of the time with one byte deleted, inserted or
    /// replaced: valid values and every kind of near miss.
    fn json_near_miss() -> impl proptest::strategy::Strategy<Value = alloc::string::String> {
        use proptest::prelude::*;
        let byte = proptest::sample::select(alloc::vec![
            b'{', b'}', b'[', b']', b',', b':', b'"', b' ', b'\\', b'0', b'a', b'-', b'.', b'e',
        ]);
        (json_value(), any::<proptest::sample::Index>(), 0u8..4, byte).prop_map(
            |(text, at, op, c)| {
                let mut b = text.into_bytes();
                let i = at.index(b.len().saturating_add(1));
                match op {
                    1 if i < b.len() => drop(b.remove(i)),
                    2 => b.insert(i, c),
                    3 if i < b.len() => b[i] = c,
                    _ => {}
                }
                alloc::string::String::from_utf8(b).unwrap()
            },
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Any text of JSON pieces: valid exactly when `serde_json` reads
        /// one value from it; and a value followed by more text ends where
        /// `serde_json`'s stream reader ends it.
        #[test]
        fn validate_agrees_with_serde_json(text in json_near_miss()) {
            let theirs = serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
            proptest::prop_assert_eq!(validate(&text).is_ok(), theirs, "{:?}", text);
            let b = text.as_bytes();
            let start = skip_ws(b, 0);
            let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<serde::de::IgnoredAny>();
            if let Some(Ok(_)) = stream.next() {
                let end = stream.byte_offset();
                // serde_json reads a number up to a byte that cannot
                // continue it: compare where both end only when that byte
                // ends a value here too.
                if b.get(end).is_none_or(|&c| is_delimiter(c) || c == b'"' || c == b'{' || c == b'[' || c == b':') {
                    proptest::prop_assert_eq!(skip_value(b, start), Ok(end), "{:?}", text);
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Any text of JSON pieces, and the same nested past the depth
        /// limit: where a value ends, or the offset of the first byte that
        /// is not JSON, as recursive descent finds them.
        #[test]
        fn skip_value_agrees_with_recursive_descent(text in json_near_miss(), deep in 0usize..4) {
            let nested = alloc::format!(
                "{}{text}{}",
                "[".repeat(MAX_DEPTH as usize - 1 + deep),
                "]".repeat(MAX_DEPTH as usize - 1 + deep),
            );
            for text in [&text, &nested] {
                let b = text.as_bytes();
                let start = skip_ws(b, 0);
                let ours = skip_value(b, start).map_err(|e| e.offset);
                proptest::prop_assert_eq!(ours, naive_skip_value(b, start, MAX_DEPTH), "{:?}", text);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Text dense with specials, in every alignment: the same end or
        /// the same error offset as a byte loop.
        #[test]
        fn skip_str_agrees_with_a_byte_loop(
            pad in 0usize..9,
            body in crate::json::dense_string_text(),
        ) {
            let text = alloc::format!("{}\"{body}", " ".repeat(pad));
            let b = text.as_bytes();
            proptest::prop_assert_eq!(skip_str(b, pad), naive_skip_str(b, pad), "{:?}", text);
            if let Ok(end) = skip_str(b, pad) {
                let token = text.get(pad..end).unwrap();
                proptest::prop_assert!(serde_json::from_str::<serde::de::IgnoredAny>(token).is_ok(), "{:?}", token);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// Long text with escapes (past the bytes after which `skip_str`
        /// goes on a block at a time), the blocks at every alignment, the
        /// string closed or not and followed by more of a line or not:
        /// the same end or the same error offset as a byte loop.
        #[test]
        fn long_strings_skip_as_a_byte_loop(
            pad in 0usize..70,
            head in 0usize..90,
            parts in proptest::collection::vec(crate::json::dense_string_text(), 1..8),
            tail in proptest::sample::select(alloc::vec!["", "\"", "\", \"x\": [1, 2, \"\\n\"]}", "\"}}"]),
        ) {
            let body = parts.concat();
            let text = alloc::format!(
                "{}\"{}\\n{body}{tail}",
                " ".repeat(pad),
                "h".repeat(head)
            );
            let b = text.as_bytes();
            proptest::prop_assert_eq!(skip_str(b, pad), naive_skip_str(b, pad), "{:?}", text);
        }
    }

    /// Every escape, good and bad, a raw control character and a closing
    /// quote at every offset of the first blocks read a block at a time,
    /// after text with escapes (so that `skip_str` goes on a block at a
    /// time), followed by a closing quote and more: the same end or the
    /// same error offset as a byte loop; and the blocks were used.
    #[test]
    fn every_escape_at_every_offset_skips_as_a_byte_loop() {
        #[cfg(all(
            feature = "alloc",
            any(
                target_feature = "sse2",
                all(target_arch = "aarch64", target_feature = "neon")
            )
        ))]
        let before = crate::json::string_end::tests::CHECKED_BLOCKS
            .load(core::sync::atomic::Ordering::Relaxed);
        let head = alloc::format!("{}\\t{}\\\"", "x".repeat(70), "é".repeat(3));
        let marks = [
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\n",
            "\\r",
            "\\t",
            "\\u00e9",
            "\\uD83D\\uDE00",
            "\\u12",
            "\\u00G0",
            "\\x",
            "\\",
            "\u{1}",
            "\u{1f}",
            "\"",
            "\\\\\\",
        ];
        for offset in 0..200 {
            for mark in marks {
                for after in ["", "z", "\\n\\n", "\\u"] {
                    let text = alloc::format!(
                        "\"{head}{}{mark}{after}{}\" ,\"k\": 1}}",
                        "a".repeat(offset),
                        "b".repeat(offset % 67)
                    );
                    let b = text.as_bytes();
                    assert_eq!(skip_str(b, 0), naive_skip_str(b, 0), "{text:?}");
                }
            }
        }
        #[cfg(all(
            feature = "alloc",
            any(
                target_feature = "sse2",
                all(target_arch = "aarch64", target_feature = "neon")
            )
        ))]
        assert!(
            crate::json::string_end::tests::CHECKED_BLOCKS
                .load(core::sync::atomic::Ordering::Relaxed)
                > before,
            "the blocks were never used"
        );
    }

    #[test]
    fn members_slice_values() {
        let m: Vec<_> = Members::new(r#" {"a": [1, {"x":2}] ,"b\u0063":"s", "d":{}} "#)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            m,
            [
                ("\"a\"", "[1, {\"x\":2}]"),
                ("\"b\\u0063\"", "\"s\""),
                ("\"d\"", "{}")
            ]
        );
        assert!(Members::new("[1]").is_err());
        assert!(Members::new("{\"a\":}").unwrap().any(|r| r.is_err()));
    }
}
