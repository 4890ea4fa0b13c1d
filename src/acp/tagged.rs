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

/// Defines an enum told apart by a string tag member: its variants (tag
/// text, type), the variant for an object without the tag if any, then
/// `guess`, the variant each first member (name, [`shape`]) tells when the
/// tag is not first, and `same`, for the first variant of each type that
/// several variants share, the others (the value moves to the one the tag
/// names).
macro_rules! tagged_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident tag $tag:literal {
            $( $(#[doc = $vd:literal])* $(#[cfg($vc:meta)])? $variant:ident($inner:ident) = $text:literal, )*
            $( @absent $(#[$am:meta])* $avariant:ident($aty:ident), )?
        }
        guess { $( $(#[cfg($gc:meta)])? ($gkey:literal, $gshape:literal) => $gtext:literal, )* }
        same { $( $(#[cfg($sc:meta)])? $from:ident => $to:ident = $stext:literal, )* }
    ) => {
        $(#[$m])*
        ///
        /// Unknown tags decode to `Unknown`, which keeps the object's raw
        /// JSON and re-encodes it byte for byte.
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(tag = $tag)]
        #[non_exhaustive]
        // Decoded in place and matched at once (as the method enums): boxing
        // a big variant would cost an allocation for nothing.
        #[allow(clippy::large_enum_variant)]
        pub enum $name<'a> {
            $( $(#[doc = $vd])* $(#[cfg($vc)])? #[serde(rename = $text)] $variant($inner<'a>), )*
            $( $(#[$am])* #[serde(untagged)] $avariant($aty<'a>), )?
            /// A variant this version does not know: the whole object as sent.
            #[serde(untagged)]
            Unknown($crate::acp::RawJson<'a>),
        }

        impl $name<'_> {
            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $( $(#[cfg($vc)])? Self::$variant(v) => $name::$variant($crate::acp::raw::IntoOwned::into_owned(v)), )*
                    $( Self::$avariant(v) => $name::$avariant($crate::acp::raw::IntoOwned::into_owned(v)), )?
                    Self::Unknown(v) => $name::Unknown(v.into_owned()),
                }
            }

            /// The wire tag of a known variant (`None` for `Unknown` and a
            /// variant that has no tag).
            pub fn tag(&self) -> Option<&'static str> {
                match self {
                    $( $(#[cfg($vc)])? Self::$variant(_) => Some($text), )*
                    _ => None,
                }
            }
        }

        $crate::acp::raw::forward_into_owned!($name);

        impl $name<'_> {
            /// The variant that the first member, `key` with a value of
            /// shape `shape`, tells when the tag is not first (see
            /// [`Guess`](crate::acp::tagged::Guess)).
            #[allow(clippy::match_single_binding)]
            fn guess(key: &str, shape: u8) -> Option<&'static str> {
                match (key, shape) {
                    $( $(#[cfg($gc)])? ($gkey, $gshape) => Some($gtext), )*
                    _ => None,
                }
            }

            /// Whether `raw`, the tag met among the members of the guessed
            /// variant in `slot`, names it or a variant of the same type
            /// (which `slot` then becomes).
            #[allow(clippy::match_single_binding)]
            fn told(slot: &mut Self, raw: Option<&str>) -> bool {
                let Some(told) = raw.and_then(|raw| {
                    $crate::json::unescape::unquote::<serde_json::Error>(raw).ok()
                }) else {
                    return false;
                };
                if slot.tag() == Some(&*told) {
                    return true;
                }
                match (&mut *slot, &*told) {
                    $( $(#[cfg($sc)])? ($name::$from(v), $stext) => {
                        let v = core::mem::replace(v, $crate::acp::wire::Decode::blank());
                        *slot = $name::$to(v);
                        true
                    } )*
                    _ => false,
                }
            }
        }

        /// The tag, then the variant's members in the same pass. Leniently,
        /// a known variant whose body does not fit (but has every required
        /// member) is kept as `Unknown` and reported.
        impl<'de: 'a, 'a> $crate::acp::wire::Decode<'de> for $name<'a> {
            fn decode(
                r: &mut $crate::acp::read::Reader<'de>,
                cx: &mut $crate::acp::wire::Cx<'de>,
            ) -> Result<Self, $crate::acp::read::Fail> {
                let mut v = <Self as $crate::acp::wire::Decode<'de>>::blank();
                <Self as $crate::acp::wire::Decode<'de>>::decode_in(r, cx, &mut v)?;
                Ok(v)
            }

            fn blank() -> Self {
                $name::Unknown($crate::acp::RawJson::from_validated("null"))
            }

            fn decode_in(
                r: &mut $crate::acp::read::Reader<'de>,
                cx: &mut $crate::acp::wire::Cx<'de>,
                slot: &mut Self,
            ) -> Result<(), $crate::acp::read::Fail> {
                use $crate::acp::tagged::Tag;
                use $crate::acp::wire::{Decode, Object, UnionTag};
                let start = r.mark();
                let since = cx.salvaged.len();
                let guess = cx.guess.then_some(Self::guess as $crate::acp::tagged::Guess);
                let tag = $crate::acp::tagged::read_tag(r, $tag, guess)?;
                let (text, first, guessed) = match &tag {
                    Tag::First(t) => (Some(&**t), false, false),
                    Tag::Later(t) => (Some(&**t), true, false),
                    Tag::Guess(t) => (Some(*t), true, true),
                    Tag::Absent => (None, true, false),
                };
                let mut met = UnionTag::new($tag, !first);
                // The variant is set, then its members read into it.
                let read = match text {
                    $( $(#[cfg($vc)])? Some($text) => {
                        if first {
                            r.open_object("a json object")?;
                        }
                        *slot = $name::$variant(<$inner<'a> as Decode<'de>>::blank());
                        let $name::$variant(inner) = slot else {
                            unreachable!("the variant was set just above")
                        };
                        <$inner<'a> as Object<'de>>::members(r, cx, Some(&mut met), first, inner)
                    } )*
                    $( None => <$aty<'a> as Decode<'de>>::decode(r, cx).map(|v| {
                        *slot = $name::$avariant(v);
                    }), )?
                    _ if guessed => Err($crate::acp::read::Fail::Missing($tag)),
                    _ => {
                        r.reset(start);
                        *slot = $name::Unknown($crate::acp::RawJson::from_validated(r.skip()?));
                        return Ok(());
                    }
                };
                if guessed {
                    if read.is_ok() && Self::told(slot, met.value) {
                        return Ok(());
                    }
                    // A wrong guess: read again, the tag looked for. Unions
                    // inside do not guess then, so no text is read more
                    // than a few times.
                    cx.salvaged.truncate(since);
                    r.reset(start);
                    cx.guess = false;
                    let again = <Self as Decode<'de>>::decode_in(r, cx, slot);
                    cx.guess = true;
                    return again;
                }
                let why = match read {
                    Ok(()) => return Ok(()),
                    Err(why) => why,
                };
                let raw = cx.recover(r, start, since, $crate::acp::SalvageKind::UnknownVariant, why)?;
                *slot = $name::Unknown($crate::acp::RawJson::from_validated(raw));
                Ok(())
            }
        }

        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::acp::wire::deserialize(d)
            }
        }

        $crate::acp::wire::required_field!(['a] $name<'a> where 'de: 'a);
    };
}
pub(crate) use tagged_enum;

/// Defines an enum told apart by shape: each variant is tried in order,
/// strictly.
macro_rules! tried_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident {
            $( $(#[$vm:meta])* $variant:ident($inner:ty), )*
        }
    ) => {
        $(#[$m])*
        ///
        /// A value that fits no variant decodes to `Unknown`, which keeps its
        /// raw JSON and re-encodes it byte for byte.
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        pub enum $name<'a> {
            $( $(#[$vm])* $variant($inner), )*
            /// A shape this version does not know, as sent.
            Unknown($crate::acp::RawJson<'a>),
        }

        impl $name<'_> {
            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $( Self::$variant(v) => $name::$variant($crate::acp::raw::IntoOwned::into_owned(v)), )*
                    Self::Unknown(v) => $name::Unknown(v.into_owned()),
                }
            }
        }

        $crate::acp::raw::forward_into_owned!($name);

        /// Never fails on JSON: what fits no variant is `Unknown`, strictly
        /// too.
        impl<'de: 'a, 'a> $crate::acp::wire::Decode<'de> for $name<'a> {
            fn decode(
                r: &mut $crate::acp::read::Reader<'de>,
                _: &mut $crate::acp::wire::Cx<'de>,
            ) -> Result<Self, $crate::acp::read::Fail> {
                let start = r.mark();
                $(
                    let mut trial = $crate::acp::wire::Cx::new($crate::acp::Mode::Strict);
                    match <$inner as $crate::acp::wire::Decode<'de>>::decode(r, &mut trial) {
                        Ok(v) => return Ok(Self::$variant(v)),
                        Err(why) if why.is_syntax() => return Err(why),
                        Err(_) => r.reset(start),
                    }
                )*
                r.skip().map(|raw| Self::Unknown($crate::acp::RawJson::from_validated(raw)))
            }
            fn blank() -> Self {
                Self::Unknown($crate::acp::RawJson::from_validated("null"))
            }
        }

        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::acp::wire::deserialize(d)
            }
        }

        $crate::acp::wire::required_field!(['a] $name<'a> where 'de: 'a);
    };
}
pub(crate) use tried_enum;

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

super::wire::required_field!(['a] ConfigValue<'a> where 'de: 'a);
