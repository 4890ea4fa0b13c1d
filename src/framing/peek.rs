//! Reading a JSON-RPC `"id"` from the first bytes of an oversized line.
//!
//! A bounded, allocation-free scan of the top-level object's keys: enough to
//! answer a request that is too long to decode, never a JSON parser.

use core::fmt;

use crate::json::scan::{is_delimiter, key_at, skip_str, skip_value, skip_ws};

/// Longest string id kept, in bytes.
const MAX_STR_ID: usize = 128;

/// A JSON-RPC id read from the first bytes of a line, kept inline so that
/// reading it needs no allocation.
///
/// String ids longer than [`PeekedId::MAX_STR_ID`] (128) bytes, or holding
/// escapes, and numbers that are not 64-bit integers are not captured; a
/// UUID, a ULID or a prefixed counter always is, and
/// [`FrameError`](crate::FrameError) keeps every id captured here. Displays
/// like the JSON it came from (string ids quoted).
///
/// ```
/// use acp_codec::PeekedId;
///
/// assert_eq!(PeekedId::Number(5).to_string(), "5");
/// assert_eq!(PeekedId::from_str_id("a-1").unwrap().to_string(), "\"a-1\"");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeekedId {
    /// `null`.
    Null,
    /// An integer id.
    Number(i64),
    /// A string id (see [`PeekedId::as_str`]).
    Str(ShortId),
}

/// A short string id stored inline; see [`PeekedId`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShortId {
    len: u8,
    bytes: [u8; MAX_STR_ID],
}

impl ShortId {
    /// The id's text.
    pub fn as_str(&self) -> &str {
        // `from_str_id`, the one constructor, copied `len` bytes of a `&str`
        // here, so the text is always there; debug builds (the tests and
        // the fuzz targets) check it instead of trusting it.
        let text = self
            .bytes
            .get(..usize::from(self.len))
            .and_then(|bytes| core::str::from_utf8(bytes).ok());
        debug_assert!(text.is_some(), "a ShortId holds the bytes of a &str");
        text.unwrap_or_default()
    }
}

impl PeekedId {
    /// The longest string id kept, in bytes.
    pub const MAX_STR_ID: usize = MAX_STR_ID;

    /// A string id, if it is at most [`MAX_STR_ID`](Self::MAX_STR_ID) bytes
    /// long.
    pub fn from_str_id(id: &str) -> Option<Self> {
        let len = u8::try_from(id.len()).ok()?;
        let mut bytes = [0u8; MAX_STR_ID];
        bytes.get_mut(..id.len())?.copy_from_slice(id.as_bytes());
        Some(Self::Str(ShortId { len, bytes }))
    }

    /// The id's text when it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s.as_str()),
            _ => None,
        }
    }
}

impl fmt::Display for PeekedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Number(n) => write!(f, "{n}"),
            Self::Str(s) => write!(f, "\"{}\"", s.as_str()),
        }
    }
}

impl fmt::Debug for PeekedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Debug for ShortId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// What the first bytes of a line say about it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peek {
    pub(crate) id: Option<PeekedId>,
    pub(crate) is_request: bool,
}

/// Scans the top-level keys of the JSON object at the start of `window`.
///
/// Linear in `window.len()`, no recursion, no allocation; stops at the first
/// byte that is not what a JSON object would have there, or where the window
/// cuts a value off. Keys are compared as written (an escaped `"id"` is not
/// recognised).
pub(crate) fn peek(window: &[u8]) -> Peek {
    let mut out = Peek::default();
    let mut i = skip_ws(window, 0);
    if window.get(i) != Some(&b'{') {
        return out;
    }
    loop {
        i = skip_ws(window, i.saturating_add(1));
        let Ok((key, value)) = key_at(window, i) else {
            return out;
        };
        let at_value = window.get(value).copied();
        let id = (key == b"\"id\"").then(|| id_at(window, value)).flatten();
        if let Some((id, _)) = id {
            out.id = Some(id);
        }
        if key == b"\"method\"" {
            // A string value, even one cut off by the window's end.
            out.is_request = at_value == Some(b'"');
        }
        let end = match id {
            Some((_, end)) => Ok(end),
            None => skip_value(window, value),
        };
        let Ok(end) = end else {
            return out;
        };
        i = skip_ws(window, end);
        if window.get(i) != Some(&b',') {
            return out;
        }
    }
}

/// An id value at `i`: `null`, a 64-bit integer, or a short string without
/// escapes, with the offset after it. A scalar must be followed by a
/// delimiter, so `1.5` or `1e3` is not taken for `1`, nor `12` for a number
/// the window cut off.
fn id_at(b: &[u8], i: usize) -> Option<(PeekedId, usize)> {
    let (id, end) = match b.get(i)? {
        b'n' => (
            PeekedId::Null,
            b.get(i..)?
                .starts_with(b"null")
                .then(|| i.saturating_add(4))?,
        ),
        b'"' => {
            let end = skip_str(b, i).ok()?;
            let text = b.get(i.saturating_add(1)..end.saturating_sub(1))?;
            if text.contains(&b'\\') {
                return None;
            }
            return Some((
                PeekedId::from_str_id(core::str::from_utf8(text).ok()?)?,
                end,
            ));
        }
        b'-' | b'0'..=b'9' => {
            let (negative, start) = match b.get(i) {
                Some(b'-') => (true, i.saturating_add(1)),
                _ => (false, i),
            };
            let digits = b
                .get(start..)?
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .count();
            let mut n: i64 = 0;
            for &d in b.get(start..start.saturating_add(digits))? {
                let d = i64::from(d.wrapping_sub(b'0'));
                n = n.checked_mul(10)?;
                n = if negative {
                    n.checked_sub(d)?
                } else {
                    n.checked_add(d)?
                };
            }
            if digits == 0 {
                return None;
            }
            (PeekedId::Number(n), start.saturating_add(digits))
        }
        _ => return None,
    };
    b.get(end)
        .copied()
        .is_some_and(is_delimiter)
        .then_some((id, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    fn p(s: &str) -> Peek {
        peek(s.as_bytes())
    }

    #[test]
    fn reads_request_ids() {
        let r = p(r#"{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"#);
        assert_eq!(r.id, Some(PeekedId::Number(12)));
        assert!(r.is_request);
        let r = p(r#"{ "method" : "x", "params": {"a":[1,{"b":"}"}]}, "id" : "abc" }"#);
        assert_eq!(r.id, PeekedId::from_str_id("abc"));
        assert!(r.is_request);
        let r = p(r#"{"id":null,"method":"m"}"#);
        assert_eq!(r.id, Some(PeekedId::Null));
        let r = p(r#"{"id":-9223372036854775808,"method":"m"}"#);
        assert_eq!(r.id, Some(PeekedId::Number(i64::MIN)));
    }

    #[test]
    fn responses_and_junk() {
        let r = p(r#"{"jsonrpc":"2.0","id":3,"result":{"x":"#);
        assert_eq!(r.id, Some(PeekedId::Number(3)));
        assert!(!r.is_request);
        assert_eq!(p("not json"), Peek::default());
        assert_eq!(p(r#"{"id":1.5,"method":"m"}"#).id, None);
        assert_eq!(p(r#"{"id":99999999999999999999,"method":"m"}"#).id, None);
        assert_eq!(p(r#"{"id":"a\"b","method":"m"}"#).id, None);
        let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
        let line = format!(r#"{{"id":"{uuid}","method":"m"}}"#);
        assert_eq!(p(&line).id, PeekedId::from_str_id(uuid));
        let longest = "x".repeat(PeekedId::MAX_STR_ID);
        let line = format!(r#"{{"id":"{longest}","method":"m"}}"#);
        assert_eq!(p(&line).id.unwrap().as_str(), Some(longest.as_str()));
        let too_long = "x".repeat(PeekedId::MAX_STR_ID + 1);
        assert_eq!(p(&format!(r#"{{"id":"{too_long}"}}"#)).id, None);
        assert_eq!(p(r#"{"params":{"huge":"#).id, None);
        assert_eq!(p(r#"["#), Peek::default());
        // Cut off by the window: not a whole id.
        assert_eq!(p(r#"{"id":12"#).id, None);
        assert_eq!(p(r#"{"id":nul"#).id, None);
    }
}
