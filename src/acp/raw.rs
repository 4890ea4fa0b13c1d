//! Borrowed raw JSON, borrowed strings, and the helpers every typed message
//! uses: `into_owned`, string enums with an `Unknown` variant, tag peeking.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::json::unescape::unquote;

/// A JSON value kept as its text: borrowed from the decoded line, or owned.
///
/// Free-form JSON (`rawInput`, `rawOutput`, `_meta`, extension params, and
/// every unknown variant) is kept this way: nothing is parsed until asked for
/// ([`RawJson::parse`]), and encoding writes the text back unchanged (a
/// pretty-printed value handed in by a caller is compacted by the encoder).
/// The text is always exactly one valid JSON value.
///
/// ```
/// use acp_codec::acp::RawJson;
///
/// let raw = RawJson::from_text("{\"a\": [1, 2]}").unwrap();
/// assert_eq!(raw.get(), "{\"a\": [1, 2]}");
/// let v: serde_json::Value = raw.parse().unwrap();
/// assert_eq!(v["a"][1], 2);
/// assert!(RawJson::from_text("{\"a\":").is_err());
/// ```
#[derive(Clone)]
pub struct RawJson<'a>(Cow<'a, str>);

impl<'a> RawJson<'a> {
    /// Wraps borrowed raw JSON.
    pub fn borrowed(raw: &'a RawValue) -> Self {
        Self(Cow::Borrowed(raw.get()))
    }

    /// Text already checked to be one JSON value.
    pub(crate) fn from_validated(text: &'a str) -> Self {
        Self(Cow::Borrowed(text))
    }

    /// `null`.
    pub(crate) const fn null() -> Self {
        Self(Cow::Borrowed("null"))
    }

    /// Checks that `text` is one JSON value and borrows it.
    ///
    /// # Errors
    ///
    /// The `serde_json` error if `text` is not exactly one JSON value.
    pub fn from_text(text: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str::<&RawValue>(text).map(Self::borrowed)
    }

    /// Checks that `text` is one JSON value and takes it.
    ///
    /// # Errors
    ///
    /// The `serde_json` error if `text` is not exactly one JSON value.
    pub fn from_string(text: String) -> Result<RawJson<'static>, serde_json::Error> {
        RawValue::from_string(text).map(|b| RawJson(Cow::Owned(Box::<str>::from(b).into_string())))
    }

    /// Serializes `value` into owned raw JSON.
    ///
    /// # Errors
    ///
    /// The `serde_json` error if `value` cannot be serialized.
    pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<RawJson<'static>, serde_json::Error> {
        serde_json::to_string(value).map(|s| RawJson(Cow::Owned(s)))
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// The text, as borrowed or owned.
    pub(crate) fn into_text(self) -> Cow<'a, str> {
        self.0
    }

    /// A copy borrowing from this one.
    pub fn reborrow(&self) -> RawJson<'_> {
        RawJson(Cow::Borrowed(&self.0))
    }

    /// Whether the value is JSON `null`.
    pub fn is_null(&self) -> bool {
        self.get() == "null"
    }

    /// Decodes the value as `T`, borrowing from it where `T` allows.
    ///
    /// # Errors
    ///
    /// The `serde_json` error if the JSON does not fit `T`.
    pub fn parse<'b, T: Deserialize<'b>>(&'b self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.get())
    }

    /// The value with its text copied, for callers that keep it.
    pub fn into_owned(self) -> RawJson<'static> {
        RawJson(Cow::Owned(self.0.into_owned()))
    }
}

impl fmt::Debug for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl fmt::Display for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

/// Compares the JSON text, byte for byte.
impl PartialEq for RawJson<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawJson<'_> {}

/// Writes the text unchanged (`serde_json`'s raw value, which checks it again).
impl Serialize for RawJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(self.get()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawJson<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(Self::borrowed)
    }
}

/// Turns a borrowed value into one that owns its text (`'static`).
///
/// Every message type has an inherent `into_owned` built on this trait.
pub trait IntoOwned {
    /// The owned form.
    type Owned: 'static;
    /// Copies whatever is borrowed.
    fn into_owned(self) -> Self::Owned;
}

impl IntoOwned for Cow<'_, str> {
    type Owned = Cow<'static, str>;
    fn into_owned(self) -> Cow<'static, str> {
        Cow::Owned(self.into_owned())
    }
}

impl IntoOwned for RawJson<'_> {
    type Owned = RawJson<'static>;
    fn into_owned(self) -> Self::Owned {
        RawJson::into_owned(self)
    }
}

impl<T: IntoOwned> IntoOwned for Option<T> {
    type Owned = Option<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.map(IntoOwned::into_owned)
    }
}

/// A loop: `collect` reuses the allocation, through code built per item type.
impl<T: IntoOwned> IntoOwned for Vec<T> {
    type Owned = Vec<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        let mut owned = Vec::with_capacity(self.len());
        for item in self {
            owned.push(item.into_owned());
        }
        owned
    }
}

impl<T: IntoOwned> IntoOwned for Box<T> {
    type Owned = Box<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        Box::new((*self).into_owned())
    }
}

/// `IntoOwned` for types that own all they hold: the value itself.
macro_rules! copy_into_owned {
    ($($t:ty),*) => {$(
        impl IntoOwned for $t {
            type Owned = $t;
            fn into_owned(self) -> Self::Owned { self }
        }
    )*};
}
copy_into_owned!(bool, u16, u32, u64, i64, f64, serde_json::Number);

/// A string that borrows from the input when it holds no escapes, and
/// costs exactly one allocation when it does.
///
/// serde's `#[serde(borrow)]` does not reach through `Option` or `Vec`, and
/// `serde_json` unescapes into a growing scratch buffer before copying; this
/// reads the string token raw and unescapes it once into a string of the
/// right capacity.
pub(crate) struct CowStr<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for CowStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        unquote(raw.get()).map(CowStr)
    }
}

/// `deserialize_with` for `Cow<str>` fields (see [`CowStr`]).
pub(crate) fn cow<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Cow<'a, str>, D::Error> {
    CowStr::deserialize(d).map(|s| s.0)
}

/// `deserialize_with` for fields whose presence matters even when `null`
/// (`"result": null`, `"id": null`): present gives `Some`.
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cow_borrows_through_option() {
        use crate::acp::ContentChunk;
        let s: ContentChunk<'_> =
            serde_json::from_str(r#"{"content":{"type":"text","text":"x"},"messageId":"plain"}"#)
                .unwrap();
        assert!(matches!(s.message_id, Some(Cow::Borrowed("plain"))));
        let s: ContentChunk<'_> =
            serde_json::from_str(r#"{"content":{"type":"text","text":"x"},"messageId":"esc\n"}"#)
                .unwrap();
        assert!(matches!(s.message_id, Some(Cow::Owned(_))));
    }
}
