//! Reading a JSON-RPC `"id"` and `params.sessionId` from the first bytes of
//! an oversized line.
//!
//! A bounded, allocation-free scan of the top-level object's keys (and of
//! the members of `params`): enough to answer a request that is too long to
//! decode, and to tell the session's owner what was dropped, never a JSON
//! parser.

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
    /// `text`, if it is at most [`PeekedId::MAX_STR_ID`] bytes long.
    pub(crate) fn new(text: &str) -> Option<Self> {
        let len = u8::try_from(text.len()).ok()?;
        let mut bytes = [0u8; MAX_STR_ID];
        bytes
            .get_mut(..text.len())?
            .copy_from_slice(text.as_bytes());
        Some(Self { len, bytes })
    }

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
        ShortId::new(id).map(Self::Str)
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
    /// `params.sessionId`: a string without escapes of at most
    /// [`PeekedId::MAX_STR_ID`] bytes, whole in the window.
    pub(crate) session: Option<ShortId>,
}

/// Scans the top-level keys of the JSON object at the start of `window`.
///
/// Linear in `window.len()`, no recursion, no allocation; stops at the first
/// byte that is not what a JSON object would have there, or where the window
/// cuts a value off. Keys are compared as written (an escaped `"id"` is not
/// recognised); of a key given twice, the last in the window is read. An object
/// `"params"` is walked member by member for `"sessionId"`, so a session
/// named before the window's end is read even when the params go on past
/// it.
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
            Some((_, end)) => Some(end),
            None if key == b"\"params\"" && at_value == Some(b'{') => {
                params_at(window, value, &mut out.session)
            }
            None => skip_value(window, value).ok(),
        };
        let Some(end) = end else {
            return out;
        };
        i = skip_ws(window, end);
        if window.get(i) != Some(&b',') {
            return out;
        }
    }
}

/// Walks the object at `i` (its `{`) for a `"sessionId"` member, kept in
/// `session` (the last one in the window); the offset after
/// the object, or `None` where the window cuts it off or it is not JSON.
fn params_at(window: &[u8], i: usize, session: &mut Option<ShortId>) -> Option<usize> {
    let mut j = skip_ws(window, i.saturating_add(1));
    if window.get(j) == Some(&b'}') {
        return Some(j.saturating_add(1));
    }
    loop {
        let (key, value) = key_at(window, j).ok()?;
        let short = (key == b"\"sessionId\"")
            .then(|| short_str_at(window, value))
            .flatten();
        let end = match short {
            Some((text, end)) => {
                *session = Some(text);
                end
            }
            None => skip_value(window, value).ok()?,
        };
        j = skip_ws(window, end);
        match window.get(j) {
            Some(b',') => j = skip_ws(window, j.saturating_add(1)),
            Some(b'}') => return Some(j.saturating_add(1)),
            _ => return None,
        }
    }
}

/// A whole string at `i` without escapes, of at most
/// [`PeekedId::MAX_STR_ID`] bytes, with the offset after it.
fn short_str_at(b: &[u8], i: usize) -> Option<(ShortId, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let end = skip_str(b, i).ok()?;
    let text = b.get(i.saturating_add(1)..end.saturating_sub(1))?;
    if text.contains(&b'\\') {
        return None;
    }
    Some((ShortId::new(core::str::from_utf8(text).ok()?)?, end))
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
            let (text, end) = short_str_at(b, i)?;
            return Some((PeekedId::Str(text), end));
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

    fn session(s: &str) -> Option<alloc::string::String> {
        p(s).session.map(|x| x.as_str().into())
    }

    #[test]
    fn reads_the_session_of_params_cut_off_by_the_window() {
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"content":{"text":"aaaa"#;
        assert_eq!(session(update).as_deref(), Some("s-1"));
        let r = p(
            r#"{"id":4,"method":"m","params":{"a":[1,{"sessionId":"no"}],"sessionId":"yes"},"x":1}"#,
        );
        assert_eq!(r.session.map(|s| s.as_str() == "yes"), Some(true));
        assert_eq!(r.id, Some(PeekedId::Number(4)));
        // The id after whole params is still read.
        let r = p(r#"{"method":"m","params":{"sessionId":"s"},"id":"x"}"#);
        assert_eq!(r.id, PeekedId::from_str_id("x"));
        assert!(r.session.is_some());
        // Not taken: nested, escaped, too long, not a string, cut off, not params.
        assert_eq!(session(r#"{"params":{"update":{"sessionId":"n"}}}"#), None);
        assert_eq!(session(r#"{"params":{"sessionId":"a\"b"}}"#), None);
        let long = "x".repeat(PeekedId::MAX_STR_ID + 1);
        assert_eq!(
            session(&format!(r#"{{"params":{{"sessionId":"{long}"}}}}"#)),
            None
        );
        assert_eq!(session(r#"{"params":{"sessionId":7}}"#), None);
        assert_eq!(session(r#"{"params":{"sessionId":"s-1"#), None);
        assert_eq!(session(r#"{"result":{"sessionId":"s"}}"#), None);
        assert_eq!(session(r#"{"params":{}}"#), None);
        assert_eq!(session(r#"{"params":["sessionId","s"]}"#), None);
    }

    /// One member of a generated message: its key and its JSON value.
    fn member(
    ) -> impl proptest::strategy::Strategy<Value = (alloc::string::String, serde_json::Value)> {
        use proptest::prelude::*;
        let text = prop_oneof!["[a-z0-9-]{0,40}", "\\PC{0,20}", "[\"\\\\\n\t a]{0,8}",];
        let leaf = prop_oneof![
            text.clone().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
        ];
        let value = leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                proptest::collection::vec(("[a-zA-Z]{1,9}", inner), 0..4)
                    .prop_map(|m| { serde_json::Value::Object(m.into_iter().collect()) }),
            ]
        });
        let key = prop_oneof![
            Just("sessionId".into()),
            Just("update".into()),
            "[a-zA-Z]{1,9}",
        ];
        (key, value)
    }

    proptest::proptest! {
        /// The peek against serde_json: on every prefix of a message, the
        /// session it reads is the one serde_json reads from the whole
        /// line, exactly when the prefix holds that value whole (a string
        /// without escapes, short enough); never another.
        #[test]
        fn session_matches_serde_json_on_every_prefix(
            params in proptest::collection::vec(member(), 0..6),
            session_text in prop_oneof_session(),
            session_at in 0usize..6,
            id in proptest::option::of(0i64..1000),
            cut in 0usize..1000,
        ) {
            let mut params: alloc::vec::Vec<_> = params
                .into_iter()
                .filter(|(k, _)| k != "sessionId")
                .collect();
            if let Some(text) = &session_text {
                let at = session_at.min(params.len());
                params.insert(at, ("sessionId".into(), serde_json::Value::from(text.as_str())));
            }
            // Written member by member, so the order is the one generated.
            let mut line = alloc::string::String::from(r#"{"jsonrpc":"2.0","#);
            if let Some(id) = id {
                line.push_str(&format!(r#""id":{id},"#));
            }
            line.push_str(r#""method":"session/update","params":{"#);
            let mut session_end = None;
            for (i, (k, v)) in params.iter().enumerate() {
                if i > 0 {
                    line.push(',');
                }
                line.push_str(&serde_json::to_string(k).unwrap());
                line.push(':');
                line.push_str(&serde_json::to_string(v).unwrap());
                if k == "sessionId" {
                    session_end = Some(line.len());
                }
            }
            line.push_str("}}");
            let whole: serde_json::Value = serde_json::from_str(&line).unwrap();
            let oracle = whole["params"]["sessionId"].as_str();
            let cut = cut.min(line.len());
            let window = &line.as_bytes()[..cut];
            let got = peek(window).session;
            let plain = oracle.is_some_and(|s| {
                !serde_json::to_string(s).unwrap().contains('\\') && s.len() <= PeekedId::MAX_STR_ID
            });
            let expected = match session_end {
                Some(end) if plain && cut >= end => oracle,
                _ => None,
            };
            proptest::prop_assert_eq!(got.as_ref().map(ShortId::as_str), expected, "{}", &line[..cut]);
        }
    }

    fn prop_oneof_session(
    ) -> impl proptest::strategy::Strategy<Value = Option<alloc::string::String>> {
        use proptest::prelude::*;
        proptest::option::of(prop_oneof![
            "[a-f0-9-]{36}",
            "\\PC{0,12}",
            "[a\"\\\\]{1,6}",
            "x{120,140}",
        ])
    }
}
