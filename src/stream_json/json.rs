//! JSON string escaping and unescaping with exact sizes.
//!
//! The escaping is byte-for-byte the one `serde_json` and JavaScript's
//! `JSON.stringify` produce: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
//! control characters as `\u00xx` (lowercase hex), everything else (U+2028,
//! U+2029, DEL, non-ASCII) as is. So a line written here is identical to the
//! one Gemini CLI writes, and sizes computed here are exact.

use alloc::string::String;
use alloc::vec::Vec;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The escaped form of byte `b`: `0` for none, `b'u'` for `\u00xx`, else the
/// letter after the backslash.
#[inline]
const fn escape_of(b: u8) -> u8 {
    match b {
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        0x00..=0x1f => b'u',
        b'"' => b'"',
        b'\\' => b'\\',
        _ => 0,
    }
}

/// Escaped size of one byte (1 when it needs no escape).
#[inline]
const fn escaped_size(b: u8) -> usize {
    match escape_of(b) {
        0 => 1,
        b'u' => 6,
        _ => 2,
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether any of the 8 bytes in `w` needs escaping (SWAR).
#[inline]
const fn word_needs_escape(w: u64) -> bool {
    // Bytes below 0x20 (ignoring bytes >= 0x80, which never need escaping).
    let below = w.wrapping_sub(LO.wrapping_mul(0x20)) & !w;
    let q = w ^ (LO.wrapping_mul(b'"' as u64));
    let quote = q.wrapping_sub(LO) & !q;
    let s = w ^ (LO.wrapping_mul(b'\\' as u64));
    let slash = s.wrapping_sub(LO) & !s;
    (below | quote | slash) & HI != 0
}

/// Length of the longest prefix of `bytes` (at most `max` bytes) that needs
/// no escaping.
#[inline]
pub(crate) fn plain_prefix(bytes: &[u8], max: usize) -> usize {
    let bytes = bytes.get(..max.min(bytes.len())).unwrap_or_default();
    let mut i = 0usize;
    // Two words per step: independent checks keep the pipeline busy.
    let mut pairs = bytes.chunks_exact(16);
    for pair in pairs.by_ref() {
        let (a, b) = pair.split_at(8);
        let a = u64::from_le_bytes(<[u8; 8]>::try_from(a).unwrap_or([0; 8]));
        let b = u64::from_le_bytes(<[u8; 8]>::try_from(b).unwrap_or([0; 8]));
        if word_needs_escape(a) | word_needs_escape(b) {
            break;
        }
        i = i.saturating_add(16);
    }
    for &b in bytes.get(i..).unwrap_or_default() {
        if escape_of(b) != 0 {
            break;
        }
        i = i.saturating_add(1);
    }
    i
}

/// Escaped length of `s`, without the quotes.
#[cfg(test)]
pub(crate) fn escaped_len(s: &str) -> usize {
    escaped_len_capped(s, usize::MAX)
}

/// Escaped length of `s` without the quotes, or some value above `cap` as
/// soon as the length passes `cap` (reads only about `cap` bytes of `s`).
pub(crate) fn escaped_len_capped(s: &str, cap: usize) -> usize {
    let bytes = s.as_bytes();
    let mut len = 0usize;
    let mut pos = 0usize;
    while pos < bytes.len() {
        let rest = bytes.get(pos..).unwrap_or_default();
        let run = plain_prefix(rest, rest.len());
        len = len.saturating_add(run);
        pos = pos.saturating_add(run);
        if len > cap {
            return len;
        }
        if let Some(&b) = bytes.get(pos) {
            len = len.saturating_add(escaped_size(b));
            pos = pos.saturating_add(1);
        }
    }
    len
}

/// Appends the escape sequence for byte `b`, which needs one.
#[inline]
fn push_escape(out: &mut Vec<u8>, b: u8) {
    match escape_of(b) {
        0 => out.push(b),
        b'u' => {
            let hi = HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0');
            let lo = HEX.get(usize::from(b & 0xf)).copied().unwrap_or(b'0');
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hi, lo]);
        }
        c => out.extend_from_slice(&[b'\\', c]),
    }
}

/// Appends `s` escaped, without quotes.
pub(crate) fn push_escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let rest = bytes.get(pos..).unwrap_or_default();
        let run = plain_prefix(rest, rest.len());
        out.extend_from_slice(rest.get(..run).unwrap_or_default());
        pos = pos.saturating_add(run);
        if let Some(&b) = bytes.get(pos) {
            push_escape(out, b);
            pos = pos.saturating_add(1);
        }
    }
}

/// Appends `s` as a quoted JSON string.
pub(crate) fn push_string(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len().saturating_add(2));
    out.push(b'"');
    push_escaped(out, s);
    out.push(b'"');
}

/// Appends as much of `s[from..]` escaped as fits in `budget` bytes, cutting
/// only on character boundaries; returns the end offset in `s` reached.
///
/// Always makes progress when `budget >= 6` and `from < s.len()`.
pub(crate) fn push_escaped_within(out: &mut Vec<u8>, s: &str, from: usize, budget: usize) -> usize {
    let bytes = s.as_bytes();
    let mut pos = from;
    let mut left = budget;
    while pos < bytes.len() {
        let rest = bytes.get(pos..).unwrap_or_default();
        let mut run = plain_prefix(rest, left);
        if run == left && run < rest.len() {
            // Cut by the budget: back off to a character boundary.
            while run > 0 && !s.is_char_boundary(pos.saturating_add(run)) {
                run = run.saturating_sub(1);
            }
            out.extend_from_slice(rest.get(..run).unwrap_or_default());
            return pos.saturating_add(run);
        }
        out.extend_from_slice(rest.get(..run).unwrap_or_default());
        pos = pos.saturating_add(run);
        left = left.saturating_sub(run);
        let Some(&b) = bytes.get(pos) else { break };
        let size = escaped_size(b);
        if size > left {
            return pos;
        }
        push_escape(out, b);
        left = left.saturating_sub(size);
        pos = pos.saturating_add(1);
    }
    pos
}

/// Appends `n` in decimal.
pub(crate) fn push_u64(out: &mut Vec<u8>, n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i = i.saturating_sub(1);
        if let Some(slot) = buf.get_mut(i) {
            // `n % 10` is below 10, so the sum is an ASCII digit.
            *slot = b'0'.saturating_add(u8::try_from(n.checked_rem(10).unwrap_or(0)).unwrap_or(0));
        }
        n = n.checked_div(10).unwrap_or(0);
        if n == 0 || i == 0 {
            break;
        }
    }
    out.extend_from_slice(buf.get(i..).unwrap_or_default());
}

/// Number of decimal digits of `n`.
pub(crate) const fn digits(n: u64) -> usize {
    match n.checked_ilog10() {
        Some(d) => (d as usize).saturating_add(1),
        None => 1,
    }
}

/// A bad JSON string literal: bad escape, lone surrogate, missing quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadString;

/// The content of a JSON string literal `raw` (with its quotes): `Ok(None)`
/// when it holds no escape (the content is `raw[1..len-1]`).
pub(crate) fn literal_body(raw: &str) -> Result<&str, BadString> {
    raw.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or(BadString)
}

/// Length of the unescaped content of the string literal `raw`.
///
/// # Errors
///
/// [`BadString`] if `raw` is not a valid JSON string literal's escapes.
pub(crate) fn unescaped_len(raw: &str) -> Result<usize, BadString> {
    let body = literal_body(raw)?;
    let mut counter = Counter(0);
    unescape::<_, true>(body, &mut counter)?;
    Ok(counter.0)
}

/// Appends the unescaped content of the string literal `raw`, already
/// validated as JSON (unescaped text between escapes is not re-checked), to
/// `out`.
///
/// # Errors
///
/// [`BadString`] if an escape is invalid; `out` then holds a prefix of the
/// content (the caller truncates).
pub(crate) fn unescape_into(raw: &str, out: &mut String) -> Result<(), BadString> {
    let body = literal_body(raw)?;
    unescape::<_, false>(body, out)
}

/// Validates the content of a JSON string literal (between its quotes) and
/// appends it unescaped to `out`, in one pass.
///
/// # Errors
///
/// [`BadString`] if it is not valid JSON string content; `out` then holds a
/// prefix of the content (the caller truncates).
pub(crate) fn validate_unescape_into(body: &str, out: &mut String) -> Result<(), BadString> {
    unescape::<_, true>(body, out)
}

/// Whether `s` needs no escaping (no quote, backslash or control character).
pub(crate) fn is_plain(s: &str) -> bool {
    plain_prefix(s.as_bytes(), s.len()) == s.len()
}

trait Sink {
    fn put(&mut self, s: &str);
    fn put_char(&mut self, c: char);
}

struct Counter(usize);

impl Sink for Counter {
    fn put(&mut self, s: &str) {
        self.0 = self.0.saturating_add(s.len());
    }
    fn put_char(&mut self, c: char) {
        self.0 = self.0.saturating_add(c.len_utf8());
    }
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
    fn put_char(&mut self, c: char) {
        self.push(c);
    }
}

fn hex4(s: &str) -> Result<u32, BadString> {
    let digits = s.get(..4).ok_or(BadString)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(BadString);
    }
    u32::from_str_radix(digits, 16).map_err(|_| BadString)
}

/// The first backslash in `bytes`: a word at a time, as escapes in real
/// output are a few dozen bytes apart (too close for `memchr`'s setup).
#[inline]
fn find_backslash(bytes: &[u8]) -> Option<usize> {
    let mut i = 0usize;
    let mut words = bytes.chunks_exact(8);
    for chunk in words.by_ref() {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or([0; 8]));
        let x = w ^ LO.wrapping_mul(u64::from(b'\\'));
        if x.wrapping_sub(LO) & !x & HI != 0 {
            if let Some(j) = chunk.iter().position(|&b| b == b'\\') {
                return Some(i.saturating_add(j));
            }
        }
        i = i.saturating_add(8);
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\\')
        .map(|j| i.saturating_add(j))
}

fn unescape<S: Sink, const VALIDATE: bool>(body: &str, out: &mut S) -> Result<(), BadString> {
    let mut rest = body;
    loop {
        // Validating: stop at any byte that needs escaping, which must then
        // be a backslash. Otherwise: only backslashes matter.
        let i = if VALIDATE {
            plain_prefix(rest.as_bytes(), rest.len())
        } else {
            find_backslash(rest.as_bytes()).unwrap_or(rest.len())
        };
        let (plain, esc) = rest.split_at_checked(i).ok_or(BadString)?;
        out.put(plain);
        match esc.as_bytes().first() {
            None => return Ok(()),
            Some(b'\\') => {}
            Some(_) => return Err(BadString),
        }
        let c = esc.as_bytes().get(1).copied().ok_or(BadString)?;
        let mut next = esc.get(2..).ok_or(BadString)?;
        match c {
            b'"' => out.put_char('"'),
            b'\\' => out.put_char('\\'),
            b'/' => out.put_char('/'),
            b'b' => out.put_char('\u{8}'),
            b'f' => out.put_char('\u{c}'),
            b'n' => out.put_char('\n'),
            b'r' => out.put_char('\r'),
            b't' => out.put_char('\t'),
            b'u' => {
                let hi = hex4(next)?;
                next = next.get(4..).ok_or(BadString)?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    let lo_esc = next.strip_prefix("\\u").ok_or(BadString)?;
                    let lo = hex4(lo_esc)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(BadString);
                    }
                    next = lo_esc.get(4..).ok_or(BadString)?;
                    0x10000u32
                        .saturating_add((hi.saturating_sub(0xD800)) << 10)
                        .saturating_add(lo.saturating_sub(0xDC00))
                } else {
                    hi
                };
                out.put_char(char::from_u32(code).ok_or(BadString)?);
            }
            _ => return Err(BadString),
        }
        rest = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn escaped(s: &str) -> String {
        let mut out = Vec::new();
        push_escaped(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escaping_matches_serde_json() {
        let mut all = String::new();
        for c in (0u32..0x100).chain([0x2028, 0x2029, 0x1F600]) {
            all.push(char::from_u32(c).unwrap());
        }
        for s in [all.as_str(), "", "plain", "a\"b\\c\u{1}\u{7f}", "\u{2028}x"] {
            let expected = serde_json::to_string(s).unwrap();
            let got = escaped(s);
            assert_eq!(alloc::format!("\"{got}\""), expected);
            assert_eq!(escaped_len(s), got.len());
            let mut quoted = Vec::new();
            push_string(&mut quoted, s);
            assert_eq!(quoted, expected.as_bytes());
        }
    }

    #[test]
    fn within_budget_cuts_on_boundaries() {
        let s = "ab\u{1}😀\"x";
        // 'a','b' (2) + \u0001 (6) = 8; the emoji (4) does not fit in 9.
        let mut out = Vec::new();
        let end = push_escaped_within(&mut out, s, 0, 9);
        assert_eq!(end, 3);
        assert_eq!(out, b"ab\\u0001");
        let mut out = Vec::new();
        let end = push_escaped_within(&mut out, s, 3, 5);
        assert_eq!(end, 7);
        assert_eq!(out, "😀".as_bytes());
        let mut out = Vec::new();
        assert_eq!(push_escaped_within(&mut out, s, 0, 100), s.len());
    }

    #[test]
    fn unescape_round_trips() {
        for s in ["", "abc", "a\"\\/\u{8}\u{c}\n\r\t\u{1}😀\u{2028}"] {
            let lit = serde_json::to_string(s).unwrap();
            let mut out = String::new();
            unescape_into(&lit, &mut out).unwrap();
            assert_eq!(out, s);
            assert_eq!(unescaped_len(&lit).unwrap(), s.len());
        }
        let mut out = String::new();
        unescape_into("\"\\ud83d\\ude00\\u00e9\\/\"", &mut out).unwrap();
        assert_eq!(out, "😀é/");
        for bad in [
            "x",
            "\"a",
            "\"\\x\"",
            "\"\\ud83d\"",
            "\"\\u12\"",
            "\"\\udc00\"",
            "\"\u{1}\"",
            "\"\\",
        ] {
            assert_eq!(unescaped_len(bad), Err(BadString), "{bad}");
        }
    }

    #[test]
    fn numbers() {
        for n in [0u64, 9, 10, 12345, u64::MAX] {
            let mut out = Vec::new();
            push_u64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
            assert_eq!(digits(n), out.len());
        }
    }

    #[test]
    fn find_backslash_agrees_with_position() {
        for len in 0..40 {
            for at in 0..=len {
                let mut v = alloc::vec![b'a'; len];
                if at < len {
                    v[at] = b'\\';
                }
                v.extend_from_slice(b"\\");
                assert_eq!(find_backslash(&v), v.iter().position(|&b| b == b'\\'));
            }
        }
        assert_eq!(find_backslash(b"\xe9\x80"), None);
    }

    #[test]
    fn swar_agrees_with_bytewise() {
        for b in 0u8..=255 {
            let w = u64::from_le_bytes([b'a', b'a', b, b'a', b'a', b'a', b'a', b'a']);
            assert_eq!(word_needs_escape(w), escape_of(b) != 0, "{b}");
        }
    }
}
