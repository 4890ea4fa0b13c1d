//! How a typed member is read and written: strictly (serde, the schema as
//! written) or leniently (what does not fit is salvaged and reported), and
//! the struct macro built on it.
//!
//! - [`Value`]: a type that can be a member's value: its strict decoding
//!   (a borrowing `Deserialize`), and its lenient decoding from raw JSON.
//! - [`Field`]: a member of a struct, required (`T`) or optional
//!   (`Option<T>`): what absence and `null` mean, and what a value that does
//!   not fit becomes in lenient decoding.
//! - [`acp_struct!`]: a generated struct, with an [`Extra`] for every member
//!   it does not hold, so it re-encodes as it came.
//!
//! Lenient decoding is only run after strict decoding failed, so input that
//! fits costs nothing more.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::de::{Deserializer, MapAccess};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Number;

use super::id::RequestId;
use super::raw::{CowStr, RawJson};
use super::salvage::{Salvage, SalvageKind};

/// Why a value could not be typed, even leniently.
#[derive(Debug)]
pub(crate) enum Fail {
    /// A required member is absent: never salvaged below the nearest
    /// optional member or list item.
    Missing(&'static str),
    /// The value does not fit: a union salvages it as `Unknown`.
    Mismatch(String),
}

impl Fail {
    /// A mismatch from a `serde_json` error, without its position (which
    /// counts from the value, not the line).
    pub(crate) fn mismatch(e: impl fmt::Display) -> Self {
        let mut text = e.to_string();
        if let Some(at) = text.rfind(" at line ") {
            text.truncate(at);
        }
        Self::Mismatch(text)
    }

    fn reason(self) -> String {
        match self {
            Self::Missing(name) => alloc::format!("missing field `{name}`"),
            Self::Mismatch(text) => text,
        }
    }
}

/// One step of a [`Salvage`] path.
enum Step {
    Key(&'static str),
    Index(usize),
}

/// The context of a lenient decode: where it is, and what it salvaged.
pub(crate) struct Cx<'de> {
    path: Vec<Step>,
    pub(crate) salvaged: Vec<Salvage<'de>>,
}

impl<'de> Cx<'de> {
    pub(crate) fn new() -> Self {
        Self {
            path: Vec::new(),
            salvaged: Vec::new(),
        }
    }

    /// Runs `f` one step deeper, at member `key`.
    pub(crate) fn at_key<T>(&mut self, key: &'static str, f: impl FnOnce(&mut Self) -> T) -> T {
        self.path.push(Step::Key(key));
        let out = f(self);
        self.path.pop();
        out
    }

    fn at_index<T>(&mut self, i: usize, f: impl FnOnce(&mut Self) -> T) -> T {
        self.path.push(Step::Index(i));
        let out = f(self);
        self.path.pop();
        out
    }

    /// Records a salvage here.
    pub(crate) fn salvage(&mut self, kind: SalvageKind, why: Fail, raw: &'de RawValue) {
        let mut path = String::new();
        for step in &self.path {
            path.push('/');
            match step {
                Step::Key(k) => path.push_str(k),
                Step::Index(i) => path.push_str(&i.to_string()),
            }
        }
        self.salvaged.push(Salvage {
            path,
            kind,
            reason: why.reason(),
            raw: RawJson::borrowed(raw),
        });
    }
}

/// A type that can be the value of a member.
pub(crate) trait Value<'de>: Sized {
    /// Strict decoding (borrowing where it can).
    fn decode<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;

    /// What `null` for an optional member of this type decodes to: `None`
    /// (the default) leaves the field absent and keeps the `null` in the
    /// struct's [`Extra`]; raw JSON keeps it as its value.
    fn from_null() -> Option<Self> {
        None
    }

    /// Lenient decoding of one valid JSON value, salvaging into `cx`.
    fn lenient(raw: &'de RawValue, cx: &mut Cx<'de>) -> Result<Self, Fail> {
        let _ = cx;
        Self::decode(&mut serde_json::Deserializer::from_str(raw.get())).map_err(Fail::mismatch)
    }
}

/// A [`Value`] as a serde `Deserialize`, for serde's `Option` and `Vec`.
pub(crate) struct W<T>(pub(crate) T);

impl<'de, T: Value<'de>> Deserialize<'de> for W<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::decode(d).map(W)
    }
}

/// `Value` through the type's own `Deserialize`.
macro_rules! plain_value {
    ($($t:ty),* $(,)?) => {$(
        impl<'de> Value<'de> for $t {
            fn decode<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$t as Deserialize<'de>>::deserialize(d)
            }
        }
    )*};
}
plain_value!(bool, u16, u32, u64, i64, Number);

impl<'de: 'a, 'a> Value<'de> for Cow<'a, str> {
    fn decode<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        CowStr::deserialize(d).map(|s| s.0)
    }
}

impl<'de: 'a, 'a> Value<'de> for RawJson<'a> {
    fn decode<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawJson::deserialize(d)
    }
    fn from_null() -> Option<Self> {
        Some(RawJson::from_validated("null"))
    }
    fn lenient(raw: &'de RawValue, _: &mut Cx<'de>) -> Result<Self, Fail> {
        Ok(RawJson::borrowed(raw))
    }
}

impl<'de: 'a, 'a> Value<'de> for RequestId<'a> {
    fn decode<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RequestId::deserialize(d)
    }
    fn from_null() -> Option<Self> {
        Some(RequestId::Null)
    }
}

/// A list: strictly every item must fit; leniently an item that does not
/// is left out and reported.
impl<'de, T: Value<'de>> Value<'de> for Vec<T> {
    fn decode<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<W<T>>::deserialize(d)?;
        Ok(items.into_iter().map(|w| w.0).collect())
    }

    fn lenient(raw: &'de RawValue, cx: &mut Cx<'de>) -> Result<Self, Fail> {
        let items: Vec<&'de RawValue> = serde_json::from_str(raw.get()).map_err(Fail::mismatch)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            cx.at_index(i, |cx| match T::lenient(item, cx) {
                Ok(v) => out.push(v),
                Err(why) => cx.salvage(SalvageKind::ItemSkipped, why, item),
            });
        }
        Ok(out)
    }
}

/// A member of a generated struct: `T` for a required one, `Option<T>` for
/// an optional one.
pub(crate) trait Field<'de>: Sized {
    /// Reads the member's value from `map`; `None` when the value is kept in
    /// the struct's [`Extra`] instead (an optional member's `null`).
    fn read<A: MapAccess<'de>>(map: &mut A) -> Result<Option<Self>, A::Error>;

    /// Lenient [`read`](Self::read) of the member's raw value at `key`;
    /// `None` when the raw value is kept in [`Extra`] instead (`null`, or a
    /// value that did not fit, reported in `cx`).
    fn lenient(
        key: &'static str,
        raw: &'de RawValue,
        cx: &mut Cx<'de>,
    ) -> Result<Option<Self>, Fail>;

    /// The value when the member is absent (or held in [`Extra`]).
    fn absent(name: &'static str) -> Result<Self, Fail>;

    /// Whether encoding writes the member.
    fn is_set(&self) -> bool;

    /// Writes the member if it is set.
    fn write<M: SerializeMap>(&self, key: &'static str, map: &mut M) -> Result<(), M::Error>;
}

impl<'de, T: Value<'de> + Serialize> Field<'de> for Option<T> {
    fn read<A: MapAccess<'de>>(map: &mut A) -> Result<Option<Self>, A::Error> {
        Ok(match map.next_value::<Option<W<T>>>()? {
            Some(W(v)) => Some(Some(v)),
            None => T::from_null().map(Some),
        })
    }

    fn lenient(
        key: &'static str,
        raw: &'de RawValue,
        cx: &mut Cx<'de>,
    ) -> Result<Option<Self>, Fail> {
        if raw.get() == "null" {
            return Ok(T::from_null().map(Some));
        }
        cx.at_key(key, |cx| match T::lenient(raw, cx) {
            Ok(v) => Ok(Some(Some(v))),
            Err(why) => {
                cx.salvage(SalvageKind::MemberDropped, why, raw);
                Ok(None)
            }
        })
    }

    fn absent(_: &'static str) -> Result<Self, Fail> {
        Ok(None)
    }

    fn is_set(&self) -> bool {
        self.is_some()
    }

    fn write<M: SerializeMap>(&self, key: &'static str, map: &mut M) -> Result<(), M::Error> {
        match self {
            Some(v) => map.serialize_entry(key, v),
            None => Ok(()),
        }
    }
}

/// `Field` for a required member of type `$t`.
macro_rules! required_field {
    ($(#[$m:meta])* [$($g:tt)*] $t:ty $(where $($w:tt)*)?) => {
        $(#[$m])*
        impl<'de, $($g)*> $crate::acp::wire::Field<'de> for $t $(where $($w)*)? {
            fn read<A: serde::de::MapAccess<'de>>(map: &mut A) -> Result<Option<Self>, A::Error> {
                map.next_value::<$crate::acp::wire::W<$t>>().map(|w| Some(w.0))
            }
            fn lenient(
                key: &'static str,
                raw: &'de serde_json::value::RawValue,
                cx: &mut $crate::acp::wire::Cx<'de>,
            ) -> Result<Option<Self>, $crate::acp::wire::Fail> {
                cx.at_key(key, |cx| <$t as $crate::acp::wire::Value<'de>>::lenient(raw, cx)).map(Some)
            }
            fn absent(name: &'static str) -> Result<Self, $crate::acp::wire::Fail> {
                Err($crate::acp::wire::Fail::Missing(name))
            }
            fn is_set(&self) -> bool {
                true
            }
            fn write<M: serde::ser::SerializeMap>(&self, key: &'static str, map: &mut M) -> Result<(), M::Error> {
                map.serialize_entry(key, self)
            }
        }
    };
}
pub(crate) use required_field;

required_field!([] bool);
required_field!([] u16);
required_field!([] u32);
required_field!([] u64);
required_field!([] i64);
required_field!([] Number);
required_field!(['a] Cow<'a, str> where 'de: 'a);
required_field!(['a] RawJson<'a> where 'de: 'a);
required_field!(['a] RequestId<'a> where 'de: 'a);
required_field!([T] Vec<T> where T: Value<'de> + Serialize);

/// The members of an object as (key, raw value), in order, for lenient
/// decoding.
pub(crate) fn members<'de>(
    raw: &'de RawValue,
) -> Result<Vec<(Cow<'de, str>, &'de RawValue)>, Fail> {
    super::raw::Entries::deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
        .map(|e| e.0)
        .map_err(Fail::mismatch)
}

/// Defines a generated struct: public documented fields (each `"wire"
/// name: type`, `Option` for an optional member), `#[non_exhaustive]`, an
/// `extra` field for the members it does not hold, `into_owned`, and its
/// strict `Deserialize`, lossless `Serialize` and lenient decoding.
macro_rules! acp_struct {
    (
        $(#[$m:meta])*
        pub struct $name:ident<'a> { $( $(#[doc = $fd:literal])* $(#[cfg($c:meta)])? $wire:literal pub $f:ident : $t:ty, )* }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub struct $name<'a> {
            $( $(#[doc = $fd])* $(#[cfg($c)])? pub $f: $t, )*
            /// Members this version does not know, `null`s sent for
            /// optional members, and (lenient decoding) optional members
            /// whose value did not fit: kept as sent and re-encoded.
            pub extra: $crate::acp::Extra<'a>,
        }

        impl $name<'_> {
            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                $name {
                    $( $(#[cfg($c)])? $f: $crate::acp::raw::IntoOwned::into_owned(self.$f), )*
                    extra: self.extra.into_owned(),
                }
            }
        }

        $crate::acp::raw::forward_into_owned!($name);

        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V<'a>(core::marker::PhantomData<&'a ()>);
                impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
                    type Value = $name<'a>;
                    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                        f.write_str(concat!("struct ", stringify!($name)))
                    }
                    #[allow(unused_mut)]
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        use serde::de::Error as _;
                        $( $(#[cfg($c)])? let mut $f: (bool, Option<$t>) = (false, None); )*
                        let mut extra = $crate::acp::Extra::new();
                        while let Some(key) = map.next_key::<$crate::acp::raw::CowKey<'de>>()? {
                            match &*key.0 {
                                $( $(#[cfg($c)])? $wire => {
                                    if $f.0 {
                                        return Err(A::Error::duplicate_field($wire));
                                    }
                                    $f.0 = true;
                                    match <$t as $crate::acp::wire::Field<'de>>::read(&mut map)? {
                                        Some(v) => $f.1 = Some(v),
                                        None => extra.push(key.0, $crate::acp::RawJson::from_validated("null")),
                                    }
                                } )*
                                _ => {
                                    let v: &'de serde_json::value::RawValue = map.next_value()?;
                                    extra.push(key.0, $crate::acp::RawJson::borrowed(v));
                                }
                            }
                        }
                        Ok($name {
                            $( $(#[cfg($c)])? $f: match $f.1 {
                                Some(v) => v,
                                None => <$t as $crate::acp::wire::Field<'de>>::absent($wire)
                                    .map_err(|_| A::Error::missing_field($wire))?,
                            }, )*
                            extra,
                        })
                    }
                }
                d.deserialize_map(V(core::marker::PhantomData))
            }
        }

        /// The typed members, then the [`Extra`](crate::acp::Extra) ones
        /// not shadowed by a typed member that is set.
        impl serde::Serialize for $name<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap as _;
                let mut map = s.serialize_map(None)?;
                $( $(#[cfg($c)])? { $crate::acp::wire::Field::write(&self.$f, $wire, &mut map)?; } )*
                for (key, value) in self.extra.iter() {
                    let shadowed = match key {
                        $( $(#[cfg($c)])? $wire => $crate::acp::wire::Field::is_set(&self.$f), )*
                        _ => false,
                    };
                    if !shadowed {
                        map.serialize_entry(key, value)?;
                    }
                }
                map.end()
            }
        }

        impl<'de: 'a, 'a> $crate::acp::wire::Value<'de> for $name<'a> {
            fn decode<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <Self as serde::Deserialize<'de>>::deserialize(d)
            }

            #[allow(unused_mut)]
            fn lenient(
                raw: &'de serde_json::value::RawValue,
                cx: &mut $crate::acp::wire::Cx<'de>,
            ) -> Result<Self, $crate::acp::wire::Fail> {
                $( $(#[cfg($c)])? let mut $f: (bool, Option<$t>) = (false, None); )*
                let mut extra = $crate::acp::Extra::new();
                for (key, value) in $crate::acp::wire::members(raw)? {
                    match &*key {
                        $( $(#[cfg($c)])? $wire => {
                            if $f.0 {
                                return Err($crate::acp::wire::Fail::Mismatch(
                                    alloc::format!("duplicate field `{}`", $wire),
                                ));
                            }
                            $f.0 = true;
                            match <$t as $crate::acp::wire::Field<'de>>::lenient($wire, value, cx)? {
                                Some(v) => $f.1 = Some(v),
                                None => extra.push(key, $crate::acp::RawJson::borrowed(value)),
                            }
                        } )*
                        _ => extra.push(key, $crate::acp::RawJson::borrowed(value)),
                    }
                }
                Ok($name {
                    $( $(#[cfg($c)])? $f: match $f.1 {
                        Some(v) => v,
                        None => <$t as $crate::acp::wire::Field<'de>>::absent($wire)?,
                    }, )*
                    extra,
                })
            }
        }

        $crate::acp::wire::required_field!(['a] $name<'a> where 'de: 'a);
    };
}
pub(crate) use acp_struct;

/// Defines a string enum whose unknown values decode to `Unknown` and
/// re-encode unchanged.
macro_rules! string_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident { $( $(#[doc = $vd:literal])* $(#[cfg($vc:meta)])? $variant:ident = $text:literal, )* }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name<'a> {
            $( $(#[doc = $vd])* $(#[cfg($vc)])? $variant, )*
            /// A value this version does not know, kept as sent.
            Unknown(alloc::borrow::Cow<'a, str>),
        }

        impl<'a> $name<'a> {
            /// The wire text of the value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $(#[cfg($vc)])? Self::$variant => $text, )*
                    Self::Unknown(s) => s,
                }
            }

            /// The value for wire text (`Unknown` when not a known value).
            pub fn from_wire(text: alloc::borrow::Cow<'a, str>) -> Self {
                match &*text {
                    $( $(#[cfg($vc)])? $text => Self::$variant, )*
                    _ => Self::Unknown(text),
                }
            }

            /// The value with its text copied.
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $( $(#[cfg($vc)])? Self::$variant => $name::$variant, )*
                    Self::Unknown(s) => $name::Unknown($crate::acp::raw::IntoOwned::into_owned(s)),
                }
            }
        }

        $crate::acp::raw::forward_into_owned!($name);

        impl serde::Serialize for $name<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::acp::raw::CowStr::deserialize(d).map(|s| Self::from_wire(s.0))
            }
        }

        impl<'de: 'a, 'a> $crate::acp::wire::Value<'de> for $name<'a> {
            fn decode<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <Self as serde::Deserialize<'de>>::deserialize(d)
            }
        }

        $crate::acp::wire::required_field!(['a] $name<'a> where 'de: 'a);
    };
}
pub(crate) use string_enum;
