//! Unions: objects told apart by a tag member (`type`, `sessionUpdate`,
//! `outcome`) or by their shape, each with an `Unknown` variant that keeps
//! the raw JSON of anything this version does not know.
//!
//! Decoding reads the tag without building anything (the tag usually comes
//! first), then decodes the object once as the variant's struct: no
//! buffering, no allocation for borrowed text.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::raw::IntoOwned;

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

        /// Decodes in one pass when the tag is the first member (as peers
        /// write it); otherwise the members are collected and the object
        /// rebuilt compactly (an `Unknown` then holds that compact text).
        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V<'a>(core::marker::PhantomData<&'a ()>);
                impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
                    type Value = $name<'a>;
                    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                        f.write_str("a json object")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        use serde::de::Error as _;
                        let mut entries = alloc::vec::Vec::new();
                        if let Some(k) = map.next_key::<$crate::acp::raw::CowKey<'de>>()? {
                            let v: &'de serde_json::value::RawValue = map.next_value()?;
                            if k.0 == $tag {
                                if let Ok(tag) = $crate::json::unescape::unquote::<A::Error>(v.get()) {
                                    let rest = serde::de::value::MapAccessDeserializer::new(map);
                                    match &*tag {
                                        $( $(#[cfg($vc)])? $text => return <$inner<'a> as serde::Deserialize>::deserialize(rest).map($name::$variant), )*
                                        _ => {}
                                    }
                                    let text = $crate::acp::tagged::rebuild::<A::Error>(alloc::vec![(k.0, v)], rest_entries(rest)?)?;
                                    return $crate::acp::RawJson::from_string(text).map($name::Unknown).map_err(A::Error::custom);
                                }
                            }
                            entries.push((k.0, v));
                        }
                        while let Some((k, v)) = map.next_entry::<$crate::acp::raw::CowKey<'de>, &'de serde_json::value::RawValue>()? {
                            entries.push((k.0, v));
                        }
                        let text = $crate::acp::tagged::rebuild(entries, alloc::vec::Vec::new())?;
                        let tag = $crate::acp::raw::tag_of(&text, $tag).map_err(A::Error::custom)?;
                        Ok(match tag.as_deref() {
                            $( $(#[cfg($vc)])? Some($text) => {
                                let mut v = serde_json::from_str::<$inner<'_>>(&text).map_err(A::Error::custom)?;
                                v.extra.remove_first($tag);
                                $name::$variant($crate::acp::raw::IntoOwned::into_owned(v))
                            } )*
                            $( None => $name::$avariant($crate::acp::raw::IntoOwned::into_owned(
                                serde_json::from_str::<$aty<'_>>(&text).map_err(A::Error::custom)?)), )?
                            _ => $name::Unknown($crate::acp::RawJson::from_string(text.clone()).map_err(A::Error::custom)?),
                        })
                    }
                }
                fn rest_entries<'de, M: serde::de::MapAccess<'de>>(
                    rest: serde::de::value::MapAccessDeserializer<M>,
                ) -> Result<alloc::vec::Vec<(alloc::borrow::Cow<'de, str>, &'de serde_json::value::RawValue)>, M::Error> {
                    $crate::acp::raw::Entries::deserialize(rest).map(|e| e.0)
                }
                d.deserialize_map(V(core::marker::PhantomData))
            }
        }

        /// Leniently, a known variant whose body does not fit (but has
        /// every required member) is kept as `Unknown` and reported.
        impl<'de: 'a, 'a> $crate::acp::wire::Value<'de> for $name<'a> {
            fn decode<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <Self as serde::Deserialize<'de>>::deserialize(d)
            }

            fn lenient(
                raw: &'de serde_json::value::RawValue,
                cx: &mut $crate::acp::wire::Cx<'de>,
            ) -> Result<Self, $crate::acp::wire::Fail> {
                use $crate::acp::wire::{Fail, Value};
                let tag = $crate::acp::raw::tag_of(raw.get(), $tag).map_err(Fail::mismatch)?;
                let unknown = |cx: &mut $crate::acp::wire::Cx<'de>, why: Fail| match why {
                    Fail::Missing(_) => Err(why),
                    Fail::Mismatch(_) => {
                        cx.salvage($crate::acp::SalvageKind::UnknownVariant, why, raw);
                        Ok($name::Unknown($crate::acp::RawJson::borrowed(raw)))
                    }
                };
                match tag.as_deref() {
                    $( $(#[cfg($vc)])? Some($text) => match <$inner<'a> as Value<'de>>::lenient(raw, cx) {
                        Ok(mut v) => {
                            v.extra.remove_first($tag);
                            Ok($name::$variant(v))
                        }
                        Err(why) => unknown(cx, why),
                    }, )*
                    $( None => match <$aty<'a> as Value<'de>>::lenient(raw, cx) {
                        Ok(v) => Ok($name::$avariant(v)),
                        Err(why) => unknown(cx, why),
                    }, )?
                    _ => Ok($name::Unknown($crate::acp::RawJson::borrowed(raw))),
                }
            }
        }

        $crate::acp::wire::required_field!(['a] $name<'a> where 'de: 'a);
    };
}
pub(crate) use tagged_enum;

/// Rebuilds an object from its members, compactly.
pub(crate) fn rebuild<E: de::Error>(
    first: Vec<(Cow<'_, str>, &RawValue)>,
    rest: Vec<(Cow<'_, str>, &RawValue)>,
) -> Result<String, E> {
    let mut text = String::from("{");
    for (i, (k, v)) in first.iter().chain(rest.iter()).enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&serde_json::to_string(k).map_err(E::custom)?);
        text.push(':');
        text.push_str(v.get());
    }
    text.push('}');
    Ok(text)
}

/// Defines an enum told apart by shape: each variant is tried in order.
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

        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = <&'de serde_json::value::RawValue>::deserialize(d)?;
                $(
                    if let Ok(v) = serde_json::from_str(raw.get()) {
                        return Ok(Self::$variant(v));
                    }
                )*
                Ok(Self::Unknown($crate::acp::RawJson::borrowed(raw)))
            }
        }

        /// Never fails: what fits no variant is `Unknown`, strictly too.
        impl<'de: 'a, 'a> $crate::acp::wire::Value<'de> for $name<'a> {
            fn decode<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <Self as serde::Deserialize<'de>>::deserialize(d)
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

impl<'de: 'a, 'a> super::wire::Value<'de> for ConfigValue<'a> {
    fn decode<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ConfigValue::deserialize(d)
    }
}

super::wire::required_field!(['a] ConfigValue<'a> where 'de: 'a);
