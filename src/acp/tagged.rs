//! Unions: objects told apart by a tag member (`type`, `sessionUpdate`,
//! `outcome`) or by their shape, each with an `Unknown` variant that keeps
//! the raw JSON of anything this version does not know.
//!
//! A tagged union reads its tag where it stands: when it is the first
//! member (as most peers write it) the variant's members are read on from
//! there. When it is not (the Python SDK writes it last), the first
//! member's name and the shape of its value may tell the variant: the
//! generator lists, for each union, the members (by name and shape:
//! object, array, string, number, boolean) of which more than half of the
//! variants that have one are of one type, and not every type has (so
//! never `_meta`). The object is then read as the first variant of that
//! type, the tag noted when it is met among the members; when it names
//! that variant, or another of the same type (which the value moves to),
//! the union is read in one pass. Otherwise (a wrong guess, no tag, a tag
//! that is not a string or comes twice) it is read again from its start
//! as when nothing tells the variant: the object's members are passed over
//! once to find the tag, and the variant is read from the object's start.
//! Unions inside a union read again do not guess, so no text is read more
//! than a few times. Nothing is buffered and borrowed text is not copied.
//!
//! Each union's decoder (its `Decode::decode_in`, with the `guess` and
//! `told` tables it reads) is written out by the generator beside the
//! union, in its module; what they share is here: [`read_tag`] and
//! [`Tag`], [`Guess`] and [`shape`].

use alloc::borrow::Cow;
use core::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::raw::IntoOwned;
use super::read::{Fail, Reader};
use super::wire::{Cx, Decode};

/// Where a tagged union's tag is: read first, or found further on.
pub(crate) enum Tag<'de> {
    /// The first member: the reader is after it, in the object.
    First(Cow<'de, str>),
    /// A later member: the reader is back at the object's start.
    Later(Cow<'de, str>),
    /// Not the first member, but the first member tells the variant (its
    /// tag here, see [`Guess`]): the reader is back at the object's start.
    Guess(&'static str),
    /// No tag member, or one that is not a string: the reader is back at
    /// the object's start.
    Absent,
}

/// What tells a union's variant when its tag is not the first member:
/// from the first member's name and the [`shape`] of its value, the first
/// variant of the type more than half of the variants with such a member
/// are of (when not every type has one), as the generator tabulates it.
pub(crate) type Guess = fn(&str, u8) -> Option<&'static str>;

/// The shape of a JSON value by its first byte, as a union's [`Guess`]
/// takes it: `{`, `[`, `"`, `0` for a number, `t` for a boolean, `0u8`
/// for `null` (which any optional member may be) and what is not JSON.
pub(crate) fn shape(first: u8) -> u8 {
    match first {
        b'{' | b'[' | b'"' => first,
        b'-' | b'0'..=b'9' => b'0',
        b't' | b'f' => b't',
        _ => 0,
    }
}

/// Reads the tag `name` of the object at the reader's position (a
/// mismatch when the value is not an object). When the tag is not the
/// first member, `guess` (if given) may tell the variant from the first
/// member; otherwise the members are passed over to find the tag.
pub(crate) fn read_tag<'de>(
    r: &mut Reader<'de>,
    name: &str,
    guess: Option<Guess>,
) -> Result<Tag<'de>, Fail> {
    let start = r.mark();
    r.open_object("a json object")?;
    let mut first = true;
    if let Some(key) = r.key(&mut first, true)? {
        if key == name && r.peek() == b'"' {
            return r.string().map(Tag::First);
        }
        if let Some(variant) = guess.and_then(|guess| guess(&key, shape(r.peek()))) {
            r.reset(start);
            return Ok(Tag::Guess(variant));
        }
        // Looking ahead: the values are passed over unchecked, and checked
        // when the variant is read from the start.
        r.pass();
        while let Some(key) = r.key(&mut first, true)? {
            if key == name && r.peek() == b'"' {
                let tag = r.string()?;
                r.reset(start);
                return Ok(Tag::Later(tag));
            }
            r.pass();
        }
    }
    r.reset(start);
    Ok(Tag::Absent)
}

/// The `value` of `session/set_config_option`: a boolean (with
/// `"type": "boolean"`) or the id of a select option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigValue<'a> {
    /// A boolean option's value.
    Bool(bool),
    /// A select option's value id.
    Id(Cow<'a, str>),
}

impl ConfigValue<'_> {
    /// The value with its text copied.
    pub fn into_owned(self) -> ConfigValue<'static> {
        match self {
            Self::Bool(b) => ConfigValue::Bool(b),
            Self::Id(s) => ConfigValue::Id(IntoOwned::into_owned(s)),
        }
    }
}

impl IntoOwned for ConfigValue<'_> {
    type Owned = ConfigValue<'static>;
    fn into_owned(self) -> Self::Owned {
        ConfigValue::into_owned(self)
    }
}

impl Serialize for ConfigValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Bool(b) => s.serialize_bool(*b),
            Self::Id(v) => s.serialize_str(v),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ConfigValue<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ConfigValueVisitor)
    }
}

struct ConfigValueVisitor;

impl<'de> Visitor<'de> for ConfigValueVisitor {
    type Value = ConfigValue<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean or a value id string")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(ConfigValue::Bool(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(ConfigValue::Id(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(ConfigValue::Id(Cow::Owned(v.into())))
    }
}

impl<'de: 'a, 'a> Decode<'de> for ConfigValue<'a> {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        match r.peek() {
            b'"' => r.string().map(ConfigValue::Id),
            b't' | b'f' => r.boolean().map(ConfigValue::Bool),
            _ => r.mismatch("a boolean or a value id string"),
        }
    }
    fn blank() -> Self {
        ConfigValue::Bool(false)
    }
}
