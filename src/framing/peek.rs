//! Reading a JSON-RPC `"id"` from the first bytes of an oversized line.
//!
//! A bounded, allocation-free scan of the top-level object's keys: enough to
//! answer a request that is too long to decode, never a JSON parser.

use core::fmt;

/// Longest string id kept inline, in bytes (a UUID fits).
const MAX_STR_ID: usize = 38;

/// A JSON-RPC id read from the first bytes of a line, kept inline so errors
/// that carry it need no allocation.
///
/// String ids longer than 38 bytes, or holding escapes, and numbers that are
/// not 64-bit integers are not captured. Displays like the JSON it came from
/// (string ids quoted).
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
        let bytes = self.bytes.get(..usize::from(self.len)).unwrap_or_default();
        core::str::from_utf8(bytes).unwrap_or_default()
    }
}

impl PeekedId {
    /// A string id, if it is at most 38 bytes long.
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
/// byte that is not what a JSON object would have there.
pub(crate) fn peek(window: &[u8]) -> Peek {
    let mut out = Peek::default();
    let mut s = Scanner {
        buf: window,
        pos: 0,
    };
    s.ws();
    if !s.eat(b'{') {
        return out;
    }
    loop {
        s.ws();
        let Some(key) = s.string() else {
            return out;
        };
        s.ws();
        if !s.eat(b':') {
            return out;
        }
        s.ws();
        match key {
            b"id" => match s.id_value() {
                Some(id) => out.id = Some(id),
                None => {
                    if !s.skip_value() {
                        return out;
                    }
                }
            },
            b"method" => {
                // A string value, even one cut off by the window's end.
                out.is_request = s.at() == Some(b'"');
                if s.string().is_none() {
                    return out;
                }
            }
            _ => {
                if !s.skip_value() {
                    return out;
                }
            }
        }
        s.ws();
        if !s.eat(b',') {
            return out;
        }
    }
}

struct Scanner<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn at(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.at() == Some(b) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        while matches!(self.at(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.bump();
        }
    }

    /// A string; returns its raw contents (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        loop {
            match self.at()? {
                b'"' => {
                    let raw = self.buf.get(start..self.pos)?;
                    self.bump();
                    return Some(raw);
                }
                b'\\' => {
                    self.bump();
                    self.at()?;
                    self.bump();
                }
                _ => self.bump(),
            }
        }
    }

    /// An id value: `null`, a 64-bit integer, or a short string without
    /// escapes. Leaves the position unchanged when it is none of these.
    fn id_value(&mut self) -> Option<PeekedId> {
        let start = self.pos;
        let id = self.id_value_inner();
        if id.is_none() {
            self.pos = start;
        }
        id
    }

    fn id_value_inner(&mut self) -> Option<PeekedId> {
        match self.at()? {
            b'n' => {
                let rest = self.buf.get(self.pos..)?;
                if rest.starts_with(b"null") {
                    self.pos = self.pos.saturating_add(4);
                    self.end_of_scalar().then_some(PeekedId::Null)
                } else {
                    None
                }
            }
            b'"' => {
                let raw = self.string()?;
                if raw.contains(&b'\\') {
                    return None;
                }
                let text = core::str::from_utf8(raw).ok()?;
                PeekedId::from_str_id(text)
            }
            b'-' | b'0'..=b'9' => {
                let negative = self.eat(b'-');
                let mut n: i64 = 0;
                let mut digits = 0usize;
                while let Some(d @ b'0'..=b'9') = self.at() {
                    let d = i64::from(d.wrapping_sub(b'0'));
                    n = n.checked_mul(10)?;
                    n = if negative {
                        n.checked_sub(d)?
                    } else {
                        n.checked_add(d)?
                    };
                    digits = digits.saturating_add(1);
                    self.bump();
                }
                (digits > 0 && self.end_of_scalar()).then_some(PeekedId::Number(n))
            }
            _ => None,
        }
    }

    /// Whether a scalar ends here (so `1.5` or `1e3` is not taken for `1`).
    fn end_of_scalar(&self) -> bool {
        matches!(
            self.at(),
            None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
        )
    }

    /// Skips one value of any kind; false when the window ends inside it or
    /// it is malformed.
    fn skip_value(&mut self) -> bool {
        let mut depth: usize = 0;
        loop {
            match self.at() {
                None => return false,
                Some(b'"') => {
                    if self.string().is_none() {
                        return false;
                    }
                }
                Some(b'{' | b'[') => {
                    depth = depth.saturating_add(1);
                    self.bump();
                }
                Some(b'}' | b']') => {
                    if depth == 0 {
                        return false;
                    }
                    depth = depth.saturating_sub(1);
                    self.bump();
                }
                Some(_) => {
                    if depth == 0 {
                        // A scalar: runs to the next delimiter.
                        while !self.end_of_scalar() {
                            self.bump();
                        }
                        return true;
                    }
                    self.bump();
                }
            }
            if depth == 0 {
                return true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let long = r#"{"id":"0123456789012345678901234567890123456789"}"#;
        assert_eq!(p(long).id, None);
        assert_eq!(p(r#"{"params":{"huge":"#).id, None);
        assert_eq!(p(r#"["#), Peek::default());
    }
}
