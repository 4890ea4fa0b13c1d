//! JSON-RPC request ids.

use alloc::borrow::Cow;
use core::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::raw::IntoOwned;

/// A JSON-RPC request id: `null`, an integer or a string.
///
/// Each side numbers its own requests, so the same id may be in flight in
/// both directions at once (see [`Tracker`](super::Tracker)). String ids
/// display quoted, like the JSON they came from, so `7` and `"7"` never look
/// alike in logs.
///
/// ```
/// use acp_codec::acp::RequestId;
///
/// assert_eq!(RequestId::Number(7).to_string(), "7");
/// assert_eq!(RequestId::from("7").to_string(), "\"7\"");
/// assert_eq!(RequestId::Null.to_string(), "null");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId<'a> {
    /// `null`.
    Null,
    /// An integer id (the schema's `int64`).
    Number(i64),
    /// A string id, borrowed from the line when it holds no escapes.
    Str(Cow<'a, str>),
}

impl RequestId<'_> {
    /// The id with its text copied.
    pub fn into_owned(self) -> RequestId<'static> {
        match self {
            Self::Null => RequestId::Null,
            Self::Number(n) => RequestId::Number(n),
            Self::Str(s) => RequestId::Str(IntoOwned::into_owned(s)),
        }
    }

    /// A copy that owns its text.
    pub fn to_owned_id(&self) -> RequestId<'static> {
        self.clone().into_owned()
    }
}

impl IntoOwned for RequestId<'_> {
    type Owned = RequestId<'static>;
    fn into_owned(self) -> Self::Owned {
        RequestId::into_owned(self)
    }
}

impl From<i64> for RequestId<'_> {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl<'a> From<&'a str> for RequestId<'a> {
    fn from(s: &'a str) -> Self {
        Self::Str(Cow::Borrowed(s))
    }
}

impl fmt::Display for RequestId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Number(n) => write!(f, "{n}"),
            Self::Str(s) => write_json_str(f, s),
        }
    }
}

/// Writes `s` as a JSON string literal.
pub(crate) fn write_json_str(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    use fmt::Write;
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

impl Serialize for RequestId<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => s.serialize_unit(),
            Self::Number(n) => s.serialize_i64(*n),
            Self::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RequestId<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = RequestId<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request id: null, a 64-bit integer or a string")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(RequestId::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(RequestId::Null)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(RequestId::Number(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(RequestId::Number)
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(RequestId::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(RequestId::Str(Cow::Owned(v.into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn decodes_all_forms() {
        let ids: alloc::vec::Vec<RequestId<'_>> =
            serde_json::from_str(r#"[null, 0, -5, "a", "b\"c", 9223372036854775807]"#).unwrap();
        assert_eq!(ids[0], RequestId::Null);
        assert_eq!(ids[2], RequestId::Number(-5));
        assert!(matches!(ids[3], RequestId::Str(Cow::Borrowed("a"))));
        assert_eq!(ids[4].to_string(), "\"b\\\"c\"");
        assert_eq!(ids[5], RequestId::Number(i64::MAX));
        assert!(serde_json::from_str::<RequestId<'_>>("9223372036854775808").is_err());
        assert!(serde_json::from_str::<RequestId<'_>>("1.5").is_err());
        assert!(serde_json::from_str::<RequestId<'_>>("[]").is_err());
    }
}
