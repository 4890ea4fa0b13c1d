//! JSON string escaping with exact sizes: the crate's one escaper.
//!
//! The escaping is byte-for-byte the one `serde_json` and JavaScript's
//! `JSON.stringify` produce: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
//! control characters as `\u00xx` (lowercase hex), everything else (U+2028,
//! U+2029, DEL, non-ASCII) as is. So a line written here is identical to the
//! one Gemini CLI writes, and sizes computed here are exact.

use alloc::vec::Vec;

use super::swar::find_special;

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

/// Length of the longest prefix of `bytes` (at most `max` bytes) that needs
/// no escaping.
#[inline]
pub(crate) fn plain_prefix(bytes: &[u8], max: usize) -> usize {
    let bytes = bytes.get(..max.min(bytes.len())).unwrap_or(bytes);
    find_special(bytes, 0).unwrap_or(bytes.len())
}

/// Escaped length of `s`, without the quotes.
#[cfg(test)]
pub(crate) fn escaped_len(s: &str) -> usize {
    escaped_len_capped(s, usize::MAX)
}

/// Splits `bytes` after its longest prefix of at most `max` bytes that
/// needs no escaping.
#[inline]
fn split_plain(bytes: &[u8], max: usize) -> (&[u8], &[u8]) {
    // `plain_prefix` is at most `bytes.len()`, so the split holds.
    bytes.split_at(plain_prefix(bytes, max))
}

/// Escaped length of `s` without the quotes, or some value above `cap` as
/// soon as the length passes `cap` (reads only about `cap` bytes of `s`).
pub(crate) fn escaped_len_capped(s: &str, cap: usize) -> usize {
    let mut rest = s.as_bytes();
    // At most six bytes per byte of `s`; past `usize::MAX` is past any cap,
    // which saturating keeps.
    let mut len = 0usize;
    loop {
        let (plain, tail) = split_plain(rest, rest.len());
        len = len.saturating_add(plain.len());
        if len > cap {
            return len;
        }
        let Some((&b, tail)) = tail.split_first() else {
            return len;
        };
        len = len.saturating_add(escaped_size(b));
        rest = tail;
    }
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
    let mut rest = s.as_bytes();
    loop {
        let (plain, tail) = split_plain(rest, rest.len());
        out.extend_from_slice(plain);
        let Some((&b, tail)) = tail.split_first() else {
            return;
        };
        push_escape(out, b);
        rest = tail;
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
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Number of decimal digits of `n`.
pub(crate) const fn digits(n: u64) -> usize {
    match n.checked_ilog10() {
        Some(d) => (d as usize).saturating_add(1),
        None => 1,
    }
}

/// Whether `s` needs no escaping (no quote, backslash or control character).
pub(crate) fn is_plain(s: &str) -> bool {
    plain_prefix(s.as_bytes(), s.len()) == s.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};

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
    fn numbers() {
        for n in [0u64, 9, 10, 12345, u64::MAX] {
            let mut out = Vec::new();
            push_u64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
            assert_eq!(digits(n), out.len());
        }
    }
}
