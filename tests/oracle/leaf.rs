//! The hand-written part of the oracle: request ids, config values, the
//! macros the generated string enums and tagged unions expand, and
//! [`recode`]. Plain serde and `serde_json::Value`: nothing here calls the
//! crate.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON-RPC request id: `null`, a 64-bit integer or a string.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
    Str(String),
    Null,
}

/// The `value` of a session config option: a boolean or a value id.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ConfigValue {
    Bool(bool),
    Id(String),
}

/// `text` decoded as a `T`: the value encoded again, as JSON, and its
/// `Debug` text.
pub fn recode<T: DeserializeOwned + Serialize + std::fmt::Debug>(
    text: &str,
) -> Result<(Value, String), serde_json::Error> {
    let value: T = serde_json::from_str(text)?;
    let json = serde_json::to_value(&value).expect("an oracle value encodes");
    Ok((json, format!("{value:?}")))
}

/// The body of a tagged union's variant: the object without its tag.
pub fn variant<T: DeserializeOwned, E: serde::de::Error>(
    object: Map<String, Value>,
) -> Result<T, E> {
    serde_json::from_value(Value::Object(object)).map_err(E::custom)
}

/// An object of a tagged union, split by its tag: `Ok((tag, object
/// without it))` when the tag member holds a string, `Err(object)` (the
/// whole of it) when it is missing or holds anything else.
pub fn split_tag<E: serde::de::Error>(
    value: Value,
    tag: &str,
) -> Result<Result<(String, Map<String, Value>), Map<String, Value>>, E> {
    let Value::Object(mut object) = value else {
        return Err(E::custom("expected a json object"));
    };
    Ok(match object.remove(tag) {
        Some(Value::String(name)) => Ok((name, object)),
        Some(other) => {
            object.insert(tag.to_owned(), other);
            Err(object)
        }
        None => Err(object),
    })
}

/// A string enum: its known values, and `Unknown` keeping any other text.
/// (De)serialized through `String` with serde's `from`/`into`.
macro_rules! string_enum {
    (
        pub enum $name:ident { $( $(#[cfg($c:meta)])? $variant:ident = $text:literal, )* }
    ) => {
        #[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
        #[serde(from = "String", into = "String")]
        pub enum $name {
            $( $(#[cfg($c)])? $variant, )*
            Unknown(String),
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                match text.as_str() {
                    $( $(#[cfg($c)])? $text => Self::$variant, )*
                    _ => Self::Unknown(text),
                }
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                match value {
                    $( $(#[cfg($c)])? $name::$variant => $text.to_owned(), )*
                    $name::Unknown(text) => text,
                }
            }
        }
    };
}
pub(crate) use string_enum;

/// A union told apart by a tag member, the crate's rules read off its
/// spec: a known tag decodes its variant strictly (a body that does not
/// fit is an error); an unknown tag is `Unknown`, the object as sent; a
/// missing tag (or one that is not a string) is the `absent` variant when
/// there is one, else `Unknown`; anything but an object is an error.
/// Serialized with serde's internal tagging.
macro_rules! tagged_enum {
    (
        pub enum $name:ident tag $tag:literal {
            $( $(#[cfg($c:meta)])? $variant:ident($inner:ty) = $text:literal, )*
        } absent $avariant:ident($aty:ty)
    ) => {
        tagged_enum!(@define $name $tag { $( $(#[cfg($c)])? $variant($inner) = $text, )* } { #[serde(untagged)] $avariant($aty), }
            |object| leaf::variant(object).map($name::$avariant));
    };
    (
        pub enum $name:ident tag $tag:literal {
            $( $(#[cfg($c:meta)])? $variant:ident($inner:ty) = $text:literal, )*
        }
    ) => {
        tagged_enum!(@define $name $tag { $( $(#[cfg($c)])? $variant($inner) = $text, )* } {}
            |object| Ok($name::Unknown(serde_json::Value::Object(object))));
    };
    (
        @define $name:ident $tag:literal {
            $( $(#[cfg($c:meta)])? $variant:ident($inner:ty) = $text:literal, )*
        } { $($absent:tt)* } $untagged:expr
    ) => {
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(tag = $tag)]
        pub enum $name {
            $( $(#[cfg($c)])? #[serde(rename = $text)] $variant($inner), )*
            $($absent)*
            #[serde(untagged)]
            Unknown(serde_json::Value),
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                let untagged: fn(serde_json::Map<String, serde_json::Value>) -> Result<$name, D::Error> = $untagged;
                match leaf::split_tag::<D::Error>(value, $tag)? {
                    Ok((tag, object)) => match tag.as_str() {
                        $( $(#[cfg($c)])? $text => leaf::variant(object).map(Self::$variant), )*
                        _ => {
                            let mut object = object;
                            object.insert($tag.to_owned(), serde_json::Value::String(tag));
                            Ok(Self::Unknown(serde_json::Value::Object(object)))
                        }
                    },
                    Err(object) => untagged(object),
                }
            }
        }
    };
}
pub(crate) use tagged_enum;

/// Whether `text` is JSON in which some object names a member twice: the
/// oracle cannot say what that means (a `serde_json::Value` keeps the last
/// one; the crate refuses a known member named twice and reads a union's
/// first tag).
pub fn names_a_member_twice(text: &str) -> bool {
    /// Any JSON value, checked for members named twice while it is read.
    struct Unique;

    impl<'de> Deserialize<'de> for Unique {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(UniqueVisitor)
        }
    }

    struct UniqueVisitor;

    impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
        type Value = Unique;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key) {
                    return Err(serde::de::Error::custom("a member named twice"));
                }
                map.next_value::<Unique>()?;
            }
            Ok(Unique)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
            while seq.next_element::<Unique>()?.is_some() {}
            Ok(Unique)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
            Ok(Unique)
        }
        fn visit_unit<E>(self) -> Result<Unique, E> {
            Ok(Unique)
        }
    }

    serde_json::from_str::<Unique>(text).is_err() && serde_json::from_str::<Value>(text).is_ok()
}
