//! Borrowed text: [`Text`] (a string borrowed when it held no escapes) and
//! [`JsonStr`] (a JSON string literal kept escaped, for chunk data).

use alloc::borrow::Cow;
use alloc::string::String;
use core::fmt;
use core::ops::Deref;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

use super::EventError;
use crate::json;

/// A string field of an event: borrowed from the line when the JSON string
/// held no escapes, owned otherwise.
///
/// A transparent newtype around `Cow<str>`, so it borrows even inside an
/// `Option` (serde's `Cow<str>` impl always allocates there). Derefs to
/// `str`.
///
/// ```
/// use acp_codec::stream_json::Text;
///
/// let t: Text<'_> = serde_json::from_str("\"plain\"").unwrap();
/// assert!(t.is_borrowed());
/// let t: Text<'_> = serde_json::from_str("\"a\\nb\"").unwrap();
/// assert_eq!(&*t, "a\nb");
/// assert!(!t.is_borrowed());
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'a> Text<'a> {
    /// A borrowed text.
    pub const fn borrowed(s: &'a str) -> Self {
        Self(Cow::Borrowed(s))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the text is borrowed from the input.
    pub const fn is_borrowed(&self) -> bool {
        matches!(self.0, Cow::Borrowed(_))
    }

    /// An owned copy that no longer borrows from the input.
    pub fn into_owned(self) -> Text<'static> {
        Text(Cow::Owned(self.0.into_owned()))
    }

    /// The text as an owned `String` (no copy when already owned).
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(s: &'a str) -> Self {
        Self(Cow::Borrowed(s))
    }
}

impl From<String> for Text<'_> {
    fn from(s: String) -> Self {
        Self(Cow::Owned(s))
    }
}

impl PartialEq<str> for Text<'_> {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Text<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl Serialize for Text<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

struct TextVisitor<'a>(core::marker::PhantomData<Text<'a>>);

impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
    type Value = Text<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Text(Cow::Owned(String::from(v))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Text(Cow::Owned(v)))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(TextVisitor(core::marker::PhantomData))
    }
}

/// A JSON string literal kept as it was on the line, quotes and escapes
/// included: the `data` of a chunk frame.
///
/// Decoding a chunk does not unescape its data; the
/// [`Reassembler`](crate::chunk::Reassembler) unescapes it straight into the
/// transfer's buffer, so reassembly allocates nothing per chunk even when the
/// data holds escapes.
///
/// ```
/// use acp_codec::stream_json::JsonStr;
///
/// let s = JsonStr::from_literal("\"a\\u00e9\"").unwrap();
/// assert_eq!(s.as_literal(), "\"a\\u00e9\"");
/// assert_eq!(&*s.to_text().unwrap(), "aé");
/// assert_eq!(s.unescaped_len().unwrap(), 3);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JsonStr<'a> {
    literal: &'a str,
}

impl<'a> JsonStr<'a> {
    /// Wraps a JSON string literal (with its quotes).
    ///
    /// # Errors
    ///
    /// [`EventError::InvalidField`] if `literal` is not a valid JSON string
    /// literal.
    pub fn from_literal(literal: &'a str) -> Result<Self, EventError> {
        json::unescaped_len(literal).map_err(|_| EventError::InvalidField {
            event: "tool_result_chunk",
            field: "data",
        })?;
        Ok(Self { literal })
    }

    /// Wraps a literal already checked by the JSON parser.
    pub(crate) const fn from_checked(literal: &'a str) -> Self {
        Self { literal }
    }

    /// The literal as on the wire, quotes included.
    pub const fn as_literal(&self) -> &'a str {
        self.literal
    }

    /// The content when it holds no escape (borrowed, nothing to do).
    pub fn as_plain(&self) -> Option<&'a str> {
        let body = json::literal_body(self.literal).ok()?;
        if memchr::memchr(b'\\', body.as_bytes()).is_some() {
            None
        } else {
            Some(body)
        }
    }

    /// Length in bytes of the unescaped content.
    ///
    /// # Errors
    ///
    /// [`EventError::InvalidField`] if an escape is invalid (such as a lone
    /// surrogate).
    pub fn unescaped_len(&self) -> Result<usize, EventError> {
        if let Some(plain) = self.as_plain() {
            return Ok(plain.len());
        }
        json::unescaped_len(self.literal).map_err(|_| Self::invalid())
    }

    /// Appends the unescaped content to `out`.
    ///
    /// # Errors
    ///
    /// [`EventError::InvalidField`] if an escape is invalid; `out` is then
    /// left as it was.
    pub fn push_to(&self, out: &mut String) -> Result<(), EventError> {
        if let Some(plain) = self.as_plain() {
            out.push_str(plain);
            return Ok(());
        }
        let start = out.len();
        json::unescape_into(self.literal, out).map_err(|_| {
            out.truncate(start);
            Self::invalid()
        })
    }

    /// The content as [`Text`], borrowed when it holds no escape.
    ///
    /// # Errors
    ///
    /// [`EventError::InvalidField`] if an escape is invalid.
    pub fn to_text(&self) -> Result<Text<'a>, EventError> {
        if let Some(plain) = self.as_plain() {
            return Ok(Text::borrowed(plain));
        }
        let mut s = String::new();
        self.push_to(&mut s)?;
        Ok(Text::from(s))
    }

    const fn invalid() -> EventError {
        EventError::InvalidField {
            event: "tool_result_chunk",
            field: "data",
        }
    }
}

impl fmt::Debug for JsonStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.literal)
    }
}
