//! Unions: objects told apart by a tag member (`type`, `sessionUpdate`,
//! `outcome`) or by their shape, each with an `Unknown` variant that keeps
//! the raw JSON of anything this version does not know.
//!
//! A tagged union reads its tag where it stands: when it is the first
//! member (as peers write it) the variant's members are read on from
//! there; otherwise the object's members are passed over once to find it,
//! and the variant is read from the object's start. Nothing is buffered
//! and borrowed text is not copied.

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
    /// No tag member, or one that is not a string: the reader is back at
    /// the object's start.
    Absent,
}

/// Reads the tag `name` of the object at the reader's position (a
/// mismatch when the value is not an object).
pub(crate) fn read_tag<'de>(r: &mut Reader<'de>, name: &str) -> Result<Tag<'de>, Fail> {
    let start = r.mark();
    r.open_object("a json object")?;
    let mut first = true;
    if let Some(key) = r.key(&mut first, true)? {
        if key == name && r.peek() == b'"' {
            return r.string().map(Tag::First);
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

/// Defines an enum told apart by a string tag member.
macro_rules! tagged_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident tag $tag:literal {
            $( $(#[doc = $vd:literal])* $(#[cfg($vc:meta)])? $variant:ident($inner:ident) = $text:literal, )*
            $( @absent $(#[$am:meta])* $avariant:ident($aty:ident), )?
        }
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
                use $crate::acp::wire::Object;
                let start = r.mark();
                let since = cx.salvaged.len();
                let tag = $crate::acp::tagged::read_tag(r, $tag)?;
                let (text, first) = match &tag {
                    Tag::First(t) => (Some(&**t), false),
                    Tag::Later(t) => (Some(&**t), true),
                    Tag::Absent => (None, true),
                };
                // The variant is set, then its members read into it.
                let why = match text {
                    $( $(#[cfg($vc)])? Some($text) => {
                        if first {
                            r.open_object("a json object")?;
                        }
                        *slot = $name::$variant(<$inner<'a> as $crate::acp::wire::Decode<'de>>::blank());
                        let $name::$variant(inner) = slot else {
                            unreachable!("the variant was set just above")
                        };
                        match <$inner<'a> as Object<'de>>::members(r, cx, Some(($tag, !first)), first, inner) {
                            Ok(()) => return Ok(()),
                            Err(why) => why,
                        }
                    } )*
                    $( None => match <$aty<'a> as $crate::acp::wire::Decode<'de>>::decode(r, cx) {
                        Ok(v) => {
                            *slot = $name::$avariant(v);
                            return Ok(());
                        }
                        Err(why) => why,
                    }, )?
                    _ => {
                        r.reset(start);
                        *slot = $name::Unknown($crate::acp::RawJson::from_validated(r.skip()?));
                        return Ok(());
                    }
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
