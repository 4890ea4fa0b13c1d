//! One declaration per type: the macros that turn a type's declaration
//! (its members, their wire names, their docs) into the type and its code.
//!
//! The type modules (`content.rs`, `init.rs`, `session.rs`, `update.rs`,
//! `client.rs`, `unstable.rs`) hold declarations only, one [`acp_types`]
//! block a module, one item a type:
//!
//! ```text
//! acp_types! {
//!     /// An HTTP header to set when making requests to the MCP server.
//!     struct HttpHeader + meta {
//!         name: req str = "name", "The name of the HTTP header.";
//!         value: req str = "value", "The value to set for the HTTP header.";
//!     }
//! }
//! ```
//!
//! A member is `field: req TYPE = "wireName", "doc";` (required) or
//! `field: opt TYPE = "wireName", with_field, "doc";` (optional, with its
//! setter), its doc on its line, behind `#[cfg(feature = "unstable")]`
//! when only the unstable schema has it; `+ meta` appends the `_meta`
//! member. `TYPE` is one token of the spec's vocabulary (see [`acp_ty`]):
//! `str`, `raw`, `id`, `bool`, `u16`, `u32`, `u64`, `i64`, `f64`, a
//! generated type's name, or `[T]` for a list.
//!
//! From a declaration, [`acp_struct`] writes what the generator wrote out
//! in full before: the struct with its docs and `extra`, `new` and the
//! `with_*` setters, `into_owned`, the one decoder (`Decode`, and
//! `Object::members`: one pass, members read by key into their fields,
//! each member's presence in a local flag, unknown members and optional
//! `null`s kept in `extra`), `Serialize` (the typed members, then the
//! `extra` ones not shadowed) and `Deserialize`. [`acp_enum`] does the
//! same for a string enum, [`acp_tried`] for a union told apart by shape.
//! A change to how members decode is one edit here.

/// A module's declarations, one after the other: each item is
/// `struct`, `enum`, `union` (told apart by shape) or `tagged` (told apart
/// by a tag member) before its name, and goes to [`acp_struct`],
/// [`acp_enum`], [`acp_tried`] or [`acp_tagged`]. `struct Name + meta`
/// appends the `_meta` member every ACP object may carry (last, kept raw);
/// a `#[cfg(...)]` before an item's docs gates the whole item.
macro_rules! acp_types {
    () => {};
    (
        $(#[cfg($cfg:meta)])? $(#[doc = $doc:literal])*
        struct $name:ident $(: $by_hand:ident)? $(+ $meta:ident)? { $($body:tt)* }
        $($rest:tt)*
    ) => {
        $(#[cfg($cfg)])?
        acp_struct! {
            $(#[doc = $doc])*
            $name $(: $by_hand)? {
                $($body)*
                $($meta: opt raw = "_meta", with_meta, "Extension metadata (`_meta`), kept raw.";)?
            }
        }
        acp_types! { $($rest)* }
    };
    (
        $(#[cfg($cfg:meta)])? $(#[doc = $doc:literal])*
        $kind:ident $name:ident { $($body:tt)* }
        $($rest:tt)*
    ) => {
        $(#[cfg($cfg)])?
        acp_types! { @$kind $(#[doc = $doc])* $name { $($body)* } }
        acp_types! { $($rest)* }
    };
    (
        $(#[cfg($cfg:meta)])? $(#[doc = $doc:literal])*
        tagged $name:ident by $tag:literal { $($body:tt)* }
        $(absent $avariant:ident($aty:ident);)?
        guess { $($guess:tt)* }
        same { $($same:tt)* }
        $($rest:tt)*
    ) => {
        $(#[cfg($cfg)])?
        acp_tagged! {
            $(#[doc = $doc])*
            $name by $tag { $($body)* }
            $(absent $avariant($aty);)?
            guess { $($guess)* }
            same { $($same)* }
        }
        acp_types! { $($rest)* }
    };
    (@enum $($item:tt)*) => { acp_enum! { $($item)* } };
    (@union $($item:tt)*) => { acp_tried! { $($item)* } };
}

/// The method names (`methods::names`): `NAME = "wire", "doc";` a
/// constant.
macro_rules! acp_names {
    ($($(#[cfg($cfg:meta)])? $name:ident = $wire:literal, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            $(#[cfg($cfg)])?
            pub const $name: &str = $wire;
        )*
    };
}

/// The Rust type of a member of spec type `$t` (one token): `str` is
/// `Cow<'a, str>`, `raw` [`RawJson`](super::RawJson), `id`
/// [`RequestId`](super::RequestId), `f64` a [`serde_json::Number`] (kept
/// as sent), `[T]` a `Vec`, a name the generated type of that name.
macro_rules! acp_ty {
    (str) => { alloc::borrow::Cow<'a, str> };
    (raw) => { $crate::acp::raw::RawJson<'a> };
    (id) => { $crate::acp::id::RequestId<'a> };
    (f64) => { serde_json::Number };
    (bool) => { bool };
    (u16) => { u16 };
    (u32) => { u32 };
    (u64) => { u64 };
    (i64) => { i64 };
    ([$t:tt]) => { alloc::vec::Vec<acp_ty!($t)> };
    ($name:ident) => { $name<'a> };
}

/// The field type of a member: the value, or an `Option` of it.
macro_rules! acp_field_ty {
    (req $t:tt) => { acp_ty!($t) };
    (opt $t:tt) => { Option<acp_ty!($t)> };
}

/// What a constructor or setter takes for a member of type `$t`: text
/// as anything that becomes a `Cow<str>`, the rest as it is.
macro_rules! acp_param_ty {
    (str) => { impl Into<alloc::borrow::Cow<'a, str>> };
    ($t:tt) => { acp_ty!($t) };
}

/// The value a constructor or setter stores for its parameter `$v`.
macro_rules! acp_param_val {
    (str $v:expr) => {
        $v.into()
    };
    ($t:tt $v:expr) => {
        $v
    };
}

/// `IntoOwned` for a declared type, through its inherent `into_owned`.
macro_rules! acp_owned {
    ($name:ident) => {
        impl $crate::acp::raw::IntoOwned for $name<'_> {
            type Owned = $name<'static>;

            fn into_owned(self) -> Self::Owned {
                $name::into_owned(self)
            }
        }
    };
}

/// `Deserialize` for a declared type: its one decoder, strictly, from
/// the value's raw text.
macro_rules! acp_deserialize {
    ($name:ident) => {
        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::acp::wire::deserialize(d)
            }
        }
    };
}

/// A generated value of a member (`Arbitrary`, feature `arbitrary`):
/// `text` for text, `raw` for raw JSON (`meta`, an object or nothing, for
/// `_meta`), `number` for an `f64` kept as sent, a bounded `list` for a
/// list, the type's own `Arbitrary` for the rest; `=> leaf` names the
/// generator of a member whose values are constrained. Every value
/// encodes to JSON that decodes back to an equal one.
#[cfg(feature = "arbitrary")]
macro_rules! acp_arb {
    ($u:ident; $field:ident req $t:tt => $leaf:ident) => { $crate::acp::leaf::$leaf($u)? };
    ($u:ident; $field:ident opt $t:tt => $leaf:ident) => {
        $crate::acp::leaf::option($u, $crate::acp::leaf::$leaf)?
    };
    // `_meta` (the field `meta`): an object, or nothing.
    ($u:ident; meta opt raw) => { $crate::acp::leaf::option($u, $crate::acp::leaf::meta)? };
    ($u:ident; $field:ident req $t:tt) => { acp_arb!(@value $u $t)? };
    ($u:ident; $field:ident opt $t:tt) => { $crate::acp::leaf::option($u, acp_arb!(@fn $t))? };
    (@value $u:ident str) => { $crate::acp::leaf::text($u) };
    (@value $u:ident raw) => { $crate::acp::leaf::raw($u) };
    (@value $u:ident f64) => { $crate::acp::leaf::number($u) };
    (@value $u:ident [$t:tt]) => { $crate::acp::leaf::list($u, acp_arb!(@fn $t)) };
    (@value $u:ident $t:tt) => { $u.arbitrary() };
    (@fn str) => { $crate::acp::leaf::text };
    (@fn raw) => { $crate::acp::leaf::raw };
    (@fn f64) => { $crate::acp::leaf::number };
    (@fn [$t:tt]) => { |u| $crate::acp::leaf::list(u, acp_arb!(@fn $t)) };
    (@fn $t:tt) => { |u| u.arbitrary() };
}

/// A generated struct: see the [module docs](self).
macro_rules! acp_struct {
    (
        $(#[doc = $doc:literal])*
        $name:ident $(: $by_hand:ident)? {
            $(
                $(#[cfg($cfg:meta)])?
                $field:ident : $kind:ident $t:tt = $wire:literal $(, $setter:ident)? $(=> $leaf:ident)?, $fdoc:literal;
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub struct $name<'a> {
            $(
                #[doc = $fdoc]
                $(#[cfg($cfg)])?
                pub $field: acp_field_ty!($kind $t),
            )*
            /// Members this version does not know, `null`s sent for
            /// optional members, and (lenient decoding) optional members
            /// whose value did not fit: kept as sent and re-encoded.
            pub extra: $crate::acp::Extra<'a>,
        }

        impl $name<'_> {
            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                $name {
                    $(
                        $(#[cfg($cfg)])?
                        $field: $crate::acp::raw::IntoOwned::into_owned(self.$field),
                    )*
                    extra: self.extra.into_owned(),
                }
            }
        }

        acp_struct!(@new $name [] [] $( $(#[cfg($cfg)])? $field $kind $t; )*);

        acp_struct!(@arbitrary $($by_hand)? ; $name $( $(#[cfg($cfg)])? $field $kind $t $wire $(=> $leaf)?; )*);

        impl<'a> $name<'a> {
            $(acp_struct!(@setter $(#[cfg($cfg)])? $field $kind $t $wire $(, $setter)?);)*
        }

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
                $name {
                    $(
                        $(#[cfg($cfg)])?
                        $field: acp_struct!(@blank $kind),
                    )*
                    extra: $crate::acp::Extra::new(),
                }
            }

            fn decode_in(
                r: &mut $crate::acp::read::Reader<'de>,
                cx: &mut $crate::acp::wire::Cx<'de>,
                slot: &mut Self,
            ) -> Result<(), $crate::acp::read::Fail> {
                r.open_object(concat!("struct ", stringify!($name)))?;
                <Self as $crate::acp::wire::Object<'de>>::members(r, cx, None, true, slot)
            }
        }

        impl<'de: 'a, 'a> $crate::acp::wire::Object<'de> for $name<'a> {
            #[allow(unused_mut)]
            fn members(
                r: &mut $crate::acp::read::Reader<'de>,
                cx: &mut $crate::acp::wire::Cx<'de>,
                mut tag: Option<&mut $crate::acp::wire::UnionTag<'de>>,
                mut first: bool,
                out: &mut Self,
            ) -> Result<(), $crate::acp::read::Fail> {
                // Whether each member was met: a local named as its field.
                $(
                    $(#[cfg($cfg)])?
                    let mut $field = false;
                )*
                let mut extra = $crate::acp::Extra::new();
                while let Some(key) = r.key(&mut first, true)? {
                    #[allow(clippy::match_single_binding)]
                    match &*key {
                        $(
                            $(#[cfg($cfg)])?
                            $wire => {
                                if $field {
                                    return Err($crate::acp::wire::duplicate($wire));
                                }
                                $field = true;
                                acp_struct!(@read $kind r cx key extra $wire out.$field);
                            }
                        )*
                        _ => {
                            let raw = r.skip()?;
                            if !$crate::acp::wire::is_tag(&mut tag, &key, raw)? {
                                extra.push(key, $crate::acp::raw::RawJson::from_validated(raw));
                            }
                        }
                    }
                }
                $(
                    $(#[cfg($cfg)])?
                    acp_struct!(@absent $kind $field $wire out.$field);
                )*
                if !(extra.unused() && out.extra.unused()) { out.extra = extra; }
                Ok(())
            }
        }

        acp_owned!($name);
        acp_deserialize!($name);

        /// The typed members, then the [`Extra`](crate::acp::Extra) ones
        /// not shadowed by a typed member that is set.
        impl serde::Serialize for $name<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(None)?;
                $(
                    $(#[cfg($cfg)])?
                    acp_struct!(@put $kind map $wire self.$field);
                )*
                for (key, value) in self.extra.iter() {
                    #[allow(clippy::match_like_matches_macro, clippy::match_single_binding)]
                    let shadowed = match key {
                        $(
                            $(#[cfg($cfg)])?
                            $wire => acp_struct!(@set $kind self.$field),
                        )*
                        _ => false,
                    };
                    if !shadowed {
                        map.serialize_entry(key, value)?;
                    }
                }
                map.end()
            }
        }
    };

    // `new`: the required members as parameters, in order (gathered one
    // member at a time), the optional ones absent.
    (@new $name:ident [$($p:tt)*] [$($i:tt)*]) => {
        acp_struct!(@new_done $name [$($p)*] [$($i)*]);
    };
    (@new $name:ident [$($p:tt)*] [$($i:tt)*]
        $(#[cfg($cfg:meta)])? $field:ident req $t:tt; $($rest:tt)*) => {
        acp_struct!(@new $name
            [$($p)* $(#[cfg($cfg)])? $field: acp_param_ty!($t),]
            [$($i)* $(#[cfg($cfg)])? $field: acp_param_val!($t $field),]
            $($rest)*);
    };
    (@new $name:ident [$($p:tt)*] [$($i:tt)*]
        $(#[cfg($cfg:meta)])? $field:ident opt $t:tt; $($rest:tt)*) => {
        acp_struct!(@new $name
            [$($p)*]
            [$($i)* $(#[cfg($cfg)])? $field: None,]
            $($rest)*);
    };
    (@new_done $name:ident [] [$($i:tt)*]) => {
        impl<'a> $name<'a> {
            #[doc = concat!("A `", stringify!($name), "` with every (optional) member absent.")]
            pub fn new() -> Self {
                Self {
                    $($i)*
                    extra: $crate::acp::Extra::new(),
                }
            }
        }

        impl Default for $name<'_> {
            fn default() -> Self {
                Self::new()
            }
        }
    };
    (@new_done $name:ident [$($p:tt)+] [$($i:tt)*]) => {
        impl<'a> $name<'a> {
            #[doc = concat!("A `", stringify!($name), "` from its required members; the optional ones absent.")]
            pub fn new($($p)+) -> Self {
                Self {
                    $($i)*
                    extra: $crate::acp::Extra::new(),
                }
            }
        }
    };

    (@setter $(#[cfg($cfg:meta)])? $field:ident req $t:tt $wire:literal) => {};
    (@setter $(#[cfg($cfg:meta)])? $field:ident opt $t:tt $wire:literal, $setter:ident) => {
        #[doc = concat!("Sets `", $wire, "`.")]
        $(#[cfg($cfg)])?
        #[must_use]
        pub fn $setter(mut self, value: acp_param_ty!($t)) -> Self {
            self.$field = Some(acp_param_val!($t value));
            self
        }
    };

    (@blank req) => { $crate::acp::wire::Decode::blank() };
    (@blank opt) => { None };

    (@read req $r:ident $cx:ident $key:ident $extra:ident $wire:literal $slot:expr) => {
        $crate::acp::wire::read_required($r, $cx, $wire, &mut $slot)?
    };
    (@read opt $r:ident $cx:ident $key:ident $extra:ident $wire:literal $slot:expr) => {
        if let Some(raw) = $crate::acp::wire::read_optional($r, $cx, $wire, &mut $slot)? {
            $extra.push($key, $crate::acp::raw::RawJson::from_validated(raw));
        }
    };

    (@absent req $seen:ident $wire:literal $slot:expr) => {
        if !$seen {
            return Err($crate::acp::read::Fail::Missing($wire));
        }
    };
    (@absent opt $seen:ident $wire:literal $slot:expr) => {
        if !$seen {
            $slot = None;
        }
    };

    (@put req $map:ident $wire:literal $value:expr) => {
        $map.serialize_entry($wire, &$value)?;
    };
    (@put opt $map:ident $wire:literal $value:expr) => {
        if let Some(v) = &$value {
            $map.serialize_entry($wire, v)?;
        }
    };

    // `Arbitrary`: each member by its type (see `acp_arb`), in order;
    // none for a type whose members are tied together (`: by_hand`, its
    // impl hand-written in `crate::fuzzing`).
    (@arbitrary by_hand ; $($rest:tt)*) => {};
    (@arbitrary ; $name:ident $( $(#[cfg($cfg:meta)])? $field:ident $kind:ident $t:tt $wire:literal $(=> $leaf:ident)?; )*) => {
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for $name<'static> {
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                Ok(Self {
                    $(
                        $(#[cfg($cfg)])?
                        $field: acp_arb!(u; $field $kind $t $(=> $leaf)?),
                    )*
                    extra: $crate::acp::Extra::new(),
                })
            }
        }
    };

    (@set req $value:expr) => { true };
    (@set opt $value:expr) => { $value.is_some() };
}

/// A string enum: its known values, each `Variant = "wire"`, and
/// `Unknown` for the rest, kept as sent.
macro_rules! acp_enum {
    (
        $(#[doc = $doc:literal])*
        $name:ident {
            $(
                $(#[cfg($cfg:meta)])?
                $variant:ident = $wire:literal,
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name<'a> {
            $(
                #[doc = concat!("`\"", $wire, "\"`.")]
                $(#[cfg($cfg)])?
                $variant,
            )*
            /// A value this version does not know, kept as sent.
            Unknown(alloc::borrow::Cow<'a, str>),
        }

        impl<'a> $name<'a> {
            /// The wire text of the value.
            pub fn as_str(&self) -> &str {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant => $wire,
                    )*
                    Self::Unknown(s) => s,
                }
            }

            /// The value for wire text (`Unknown` when not a known value).
            pub fn from_wire(text: alloc::borrow::Cow<'a, str>) -> Self {
                match &*text {
                    $(
                        $(#[cfg($cfg)])?
                        $wire => Self::$variant,
                    )*
                    _ => Self::Unknown(text),
                }
            }

            /// The value with its text copied.
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant => $name::$variant,
                    )*
                    Self::Unknown(s) => $name::Unknown($crate::acp::raw::IntoOwned::into_owned(s)),
                }
            }
        }

        impl<'de: 'a, 'a> $crate::acp::wire::Decode<'de> for $name<'a> {
            fn decode(
                r: &mut $crate::acp::read::Reader<'de>,
                _: &mut $crate::acp::wire::Cx<'de>,
            ) -> Result<Self, $crate::acp::read::Fail> {
                r.string().map(Self::from_wire)
            }

            fn blank() -> Self {
                Self::Unknown(alloc::borrow::Cow::Borrowed(""))
            }
        }

        acp_owned!($name);

        /// The wire text ([`as_str`](Self::as_str)), as sent: an unknown
        /// value as it came.
        impl core::fmt::Display for $name<'_> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        /// A known value, or (one time in eight) an unknown word.
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for $name<'static> {
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                const KNOWN: &[&str] = &[$($(#[cfg($cfg)])? $wire,)*];
                if u.ratio(1u8, 8)? {
                    return Ok(Self::Unknown($crate::acp::leaf::unknown_word(u, KNOWN)?));
                }
                Ok(Self::from_wire(alloc::borrow::Cow::Borrowed(u.choose(KNOWN)?)))
            }
        }

        acp_deserialize!($name);
    };
}

/// A union told apart by shape: each `Variant(TYPE)` tried in order
/// (strictly, so a variant that does not quite fit gives way to the
/// next), `Unknown` for a value that fits none.
macro_rules! acp_tried {
    (
        $(#[doc = $doc:literal])*
        $name:ident {
            $( $variant:ident($t:tt) $(=> $leaf:ident)?, )*
        }
    ) => {
        $(#[doc = $doc])*
        ///
        /// A value that fits no variant decodes to `Unknown`, which keeps its
        /// raw JSON and re-encodes it byte for byte.
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        pub enum $name<'a> {
            $(
                #[doc = concat!("`", stringify!($t), "`.")]
                $variant(acp_ty!($t)),
            )*
            /// A shape this version does not know, as sent.
            Unknown($crate::acp::raw::RawJson<'a>),
        }

        /// Each variant, or an unknown shape (a JSON scalar no variant
        /// accepts).
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for $name<'static> {
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                type Make<'u> = fn(&mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<$name<'static>>;
                let arms: &[Make<'u>] = &[
                    $(|u| Ok($name::$variant(acp_arb!(u; $variant req $t $(=> $leaf)?))),)*
                    |u| Ok($name::Unknown($crate::acp::leaf::unknown_shape(u)?)),
                ];
                u.choose(arms)?(u)
            }
        }

        /// Never fails on JSON: what fits no variant is `Unknown`, strictly
        /// too.
        impl<'de: 'a, 'a> $crate::acp::wire::Decode<'de> for $name<'a> {
            fn decode(
                r: &mut $crate::acp::read::Reader<'de>,
                _: &mut $crate::acp::wire::Cx<'de>,
            ) -> Result<Self, $crate::acp::read::Fail> {
                let start = r.mark();
                $(
                    let mut trial = $crate::acp::wire::Cx::new($crate::acp::wire::Mode::Strict);
                    match <acp_ty!($t) as $crate::acp::wire::Decode<'de>>::decode(r, &mut trial) {
                        Ok(v) => return Ok(Self::$variant(v)),
                        Err(why) if why.is_syntax() => return Err(why),
                        Err(_) => r.reset(start),
                    }
                )*
                r.skip().map(|raw| Self::Unknown($crate::acp::raw::RawJson::from_validated(raw)))
            }

            fn blank() -> Self {
                Self::Unknown($crate::acp::raw::RawJson::from_validated("null"))
            }
        }

        impl $name<'_> {
            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $(
                        Self::$variant(v) => $name::$variant($crate::acp::raw::IntoOwned::into_owned(v)),
                    )*
                    Self::Unknown(v) => $name::Unknown(v.into_owned()),
                }
            }
        }

        acp_owned!($name);
        acp_deserialize!($name);
    };
}

/// A union told apart by a tag member: the tag, then the variant's
/// members in the same pass (see `super::tagged`), each variant
/// `Variant(Type) = "wire"`; `absent Variant(Type);` the variant of an
/// object with no tag; `guess` the variant that a first member (its name
/// and the shape of its value) tells when the tag is not first; `same`
/// the variants of the same type as an earlier one (`First -> Other`),
/// which a tag met later may turn the guess into. Unknown tags decode to
/// `Unknown`, which keeps the object's JSON.
macro_rules! acp_tagged {
    (
        $(#[doc = $doc:literal])*
        $name:ident by $tag:literal {
            $(
                $(#[cfg($cfg:meta)])?
                $variant:ident($t:ident) = $wire:literal,
            )*
        }
        $(absent $avariant:ident($aty:ident);)?
        guess {
            $(
                $(#[cfg($gcfg:meta)])?
                ($gkey:literal, $gshape:literal) => $gwire:literal,
            )*
        }
        same {
            $(
                $(#[cfg($scfg:meta)])?
                $sfirst:ident -> $sother:ident = $swire:literal,
            )*
        }
    ) => {
        $(#[doc = $doc])*
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
            $(
                #[doc = concat!("`", $tag, "`: `\"", $wire, "\"`.")]
                $(#[cfg($cfg)])?
                #[serde(rename = $wire)]
                $variant($t<'a>),
            )*
            $(
                #[doc = concat!("No `", $tag, "` member.")]
                #[serde(untagged)]
                $avariant($aty<'a>),
            )?
            /// A variant this version does not know: the whole object as sent.
            #[serde(untagged)]
            Unknown($crate::acp::raw::RawJson<'a>),
        }

        impl $name<'_> {
            /// The variant that the first member, `key` with a value of
            /// shape `shape`, tells when the tag is not first (see
            /// [`Guess`](crate::acp::tagged::Guess)).
            #[allow(clippy::match_single_binding, unused_variables)]
            fn guess(key: &str, shape: u8) -> Option<&'static str> {
                match (key, shape) {
                    $(
                        $(#[cfg($gcfg)])?
                        ($gkey, $gshape) => Some($gwire),
                    )*
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
                    $(
                        $(#[cfg($scfg)])?
                        ($name::$sfirst(v), $swire) => {
                            let v = core::mem::replace(v, $crate::acp::wire::Decode::blank());
                            *slot = $name::$sother(v);
                            true
                        }
                    )*
                    _ => false,
                }
            }

            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(v) => $name::$variant($crate::acp::raw::IntoOwned::into_owned(v)),
                    )*
                    $(
                        Self::$avariant(v) => $name::$avariant($crate::acp::raw::IntoOwned::into_owned(v)),
                    )?
                    Self::Unknown(v) => $name::Unknown(v.into_owned()),
                }
            }

            /// The wire tag of a known variant (`None` for `Unknown` and a
            /// variant that has no tag).
            pub fn tag(&self) -> Option<&'static str> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(_) => Some($wire),
                    )*
                    _ => None,
                }
            }
        }

        /// Each variant, or an unknown one: an object carrying a tag no
        /// variant has.
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for $name<'static> {
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                const TAGS: &[&str] = &[$($(#[cfg($cfg)])? $wire,)*];
                type Make<'u> = fn(&mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<$name<'static>>;
                let arms: &[Make<'u>] = &[
                    $($(#[cfg($cfg)])? |u| Ok($name::$variant(u.arbitrary()?)),)*
                    $(|u| Ok($name::$avariant(u.arbitrary()?)),)?
                    |u| Ok($name::Unknown($crate::acp::leaf::unknown_object(u, $tag, TAGS)?)),
                ];
                u.choose(arms)?(u)
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
                $name::Unknown($crate::acp::raw::RawJson::from_validated("null"))
            }

            fn decode_in(
                r: &mut $crate::acp::read::Reader<'de>,
                cx: &mut $crate::acp::wire::Cx<'de>,
                slot: &mut Self,
            ) -> Result<(), $crate::acp::read::Fail> {
                use $crate::acp::tagged::Tag;
                let start = r.mark();
                let since = cx.salvaged.len();
                let tag = match r.tight_tag(concat!("{\"", $tag, "\":\"")) {
                    Some(t) => Tag::First(alloc::borrow::Cow::Borrowed(t)),
                    None => $crate::acp::tagged::read_tag(r, $tag, cx.guess.then_some(Self::guess))?,
                };
                let (text, first, guessed) = match &tag {
                    Tag::First(t) => (Some(&**t), false, false),
                    Tag::Later(t) => (Some(&**t), true, false),
                    Tag::Guess(t) => (Some(*t), true, true),
                    Tag::Absent => (None, true, false),
                };
                let mut met = $crate::acp::wire::UnionTag::new($tag, !first);
                // The variant is set, then its members read into it.
                let read = match text {
                    $(
                        $(#[cfg($cfg)])?
                        Some($wire) => {
                            if first {
                                r.open_object("a json object")?;
                            }
                            *slot = $name::$variant($crate::acp::wire::Decode::blank());
                            let $name::$variant(inner) = slot else {
                                unreachable!("the variant was set just above")
                            };
                            <$t<'a> as $crate::acp::wire::Object<'de>>::members(
                                r, cx, Some(&mut met), first, inner,
                            )
                        }
                    )*
                    $(
                        None => <$aty<'a> as $crate::acp::wire::Decode<'de>>::decode(r, cx).map(|v| {
                            *slot = $name::$avariant(v);
                        }),
                    )?
                    _ if guessed => Err($crate::acp::read::Fail::Missing($tag)),
                    _ => {
                        r.reset(start);
                        *slot = $name::Unknown($crate::acp::raw::RawJson::from_validated(r.skip()?));
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
                    let again = Self::decode_in(r, cx, slot);
                    cx.guess = true;
                    return again;
                }
                let why = match read {
                    Ok(()) => return Ok(()),
                    Err(why) => why,
                };
                let raw = cx.recover(
                    r,
                    start,
                    since,
                    $crate::acp::salvage::SalvageKind::UnknownVariant,
                    why,
                )?;
                *slot = $name::Unknown($crate::acp::raw::RawJson::from_validated(raw));
                Ok(())
            }
        }

        acp_owned!($name);
        acp_deserialize!($name);
    };
}

/// The typed params of requests or notifications, by method: one
/// `Variant(Type) = NAME` a method (`NAME` its constant in `names`), and
/// `Ext` and `Unknown` for the others, params as sent; decoding by
/// method's name, `Serialize`, `into_owned` and `Arbitrary`.
macro_rules! acp_params {
    (
        $(#[doc = $doc:literal])*
        $name:ident {
            $(
                $(#[cfg($cfg:meta)])?
                $variant:ident($t:ident) = $method:ident, $vdoc:literal;
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        // Decoded once per message and matched at once: boxing the big
        // variants would cost an allocation for nothing.
        #[allow(clippy::large_enum_variant)]
        pub enum $name<'a> {
            $(
                #[doc = $vdoc]
                $(#[cfg($cfg)])?
                $variant($t<'a>),
            )*
            /// An extension method (its name starts with `_`), params as sent.
            Ext {
                /// The method name.
                method: alloc::borrow::Cow<'a, str>,
                /// The params as sent.
                params: Option<$crate::acp::raw::RawJson<'a>>,
            },
            /// A method this version does not know, params as sent.
            Unknown {
                /// The method name.
                method: alloc::borrow::Cow<'a, str>,
                /// The params as sent.
                params: Option<$crate::acp::raw::RawJson<'a>>,
            },
        }

        impl<'a> $name<'a> {
            /// Decodes the params of `method`, one valid JSON value (absent
            /// or `null` read as `{}`), borrowing from them.
            pub(crate) fn decode_text(
                method: alloc::borrow::Cow<'a, str>,
                raw: Option<&'a str>,
                mode: $crate::acp::wire::Mode,
            ) -> Result<$crate::acp::salvage::Typed<'a, Self>, $crate::acp::MessageError> {
                Ok(match &*method {
                    $(
                        $(#[cfg($cfg)])?
                        names::$method => {
                            $crate::acp::method::params(names::$method, raw, mode)?.map(Self::$variant)
                        }
                    )*
                    _ => $crate::acp::salvage::Typed::clean(Self::other(
                        method,
                        raw.map($crate::acp::raw::RawJson::from_validated),
                    )),
                })
            }

            /// A placeholder, overwritten by [`decode_known`](Self::decode_known).
            pub(crate) fn blank() -> Self {
                Self::Unknown {
                    method: alloc::borrow::Cow::Borrowed(""),
                    params: None,
                }
            }

            acp_params!(@decode_known $name $($(#[cfg($cfg)])? $variant $method)* => params_at);

            /// An extension or unknown method's params, as sent.
            pub(crate) fn other(
                method: alloc::borrow::Cow<'a, str>,
                params: Option<$crate::acp::raw::RawJson<'a>>,
            ) -> Self {
                if $crate::acp::method::is_extension(&method) {
                    Self::Ext { method, params }
                } else {
                    Self::Unknown { method, params }
                }
            }

            /// The method name.
            pub fn method(&self) -> &str {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(_) => names::$method,
                    )*
                    Self::Ext { method, .. } | Self::Unknown { method, .. } => method,
                }
            }

            /// Whether the message carries params (only `Ext` and `Unknown`
            /// can have none).
            pub fn has_params(&self) -> bool {
                match self {
                    Self::Ext { params, .. } | Self::Unknown { params, .. } => params.is_some(),
                    _ => true,
                }
            }

            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                use $crate::acp::raw::IntoOwned;
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(v) => $name::$variant(v.into_owned()),
                    )*
                    Self::Ext { method, params } => $name::Ext {
                        method: IntoOwned::into_owned(method),
                        params: IntoOwned::into_owned(params),
                    },
                    Self::Unknown { method, params } => $name::Unknown {
                        method: IntoOwned::into_owned(method),
                        params: IntoOwned::into_owned(params),
                    },
                }
            }
        }

        /// Any known method with params that decode back to an equal value,
        /// an extension method (`_…`) or an unknown one, params as sent.
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for $name<'static> {
            #[allow(clippy::vec_init_then_push)]
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                use $crate::acp::leaf;
                type Make<'u> = fn(&mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<$name<'static>>;
                // Pushed one by one: a variant may be behind feature `unstable`.
                let mut arms: alloc::vec::Vec<Make<'u>> = alloc::vec::Vec::new();
                $(
                    $(#[cfg($cfg)])?
                    arms.push(|u| Ok($name::$variant(u.arbitrary()?)));
                )*
                arms.extend_from_slice(&[
                    |u| {
                        Ok($name::Ext {
                            method: leaf::extension_method(u)?,
                            params: leaf::option(u, leaf::raw)?,
                        })
                    },
                    |u| {
                        Ok($name::Unknown {
                            method: leaf::unknown_method(u, |m| {
                                matches!(
                                    $name::decode_text(
                                        alloc::borrow::Cow::Borrowed(m),
                                        None,
                                        $crate::acp::wire::Mode::Strict,
                                    ),
                                    Ok($crate::acp::salvage::Typed { value: $name::Unknown { .. }, .. })
                                )
                            })?,
                            params: leaf::option(u, leaf::raw)?,
                        })
                    },
                ]);
                u.choose(&arms)?(u)
            }
        }

        /// Serializes the params object only (the envelope is written by
        /// the `encode_*` functions).
        impl serde::Serialize for $name<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(v) => v.serialize(s),
                    )*
                    Self::Ext { params, .. } | Self::Unknown { params, .. } => params.serialize(s),
                }
            }
        }

        acp_owned!($name);
    };

    // `decode_known`: the variant of `method` set in the slot, then its
    // value read into it by `$read`.
    (@decode_known $name:ident $($(#[cfg($cfg:meta)])? $variant:ident $method:ident)* => $read:ident) => {
        /// Decodes the params or result of `method` at the reader's
        /// position, in the pass over a whole line, when this version types
        /// them: `slot` is asked for the place they go, the variant is set
        /// there and its value read into it, never moved. `None`, and
        /// `slot` never called, for a method this version does not type.
        /// After an error the slot holds part of a value.
        pub(crate) fn decode_known<'s>(
            method: &str,
            r: &mut $crate::acp::read::Reader<'a>,
            cx: &mut $crate::acp::wire::Cx<'a>,
            slot: impl FnOnce() -> &'s mut Self,
        ) -> Option<Result<(), $crate::acp::read::Fail>>
        where
            'a: 's,
        {
            match method {
                $(
                    $(#[cfg($cfg)])?
                    names::$method => {
                        let out = slot();
                        *out = Self::$variant($crate::acp::wire::Decode::blank());
                        let Self::$variant(v) = out else {
                            unreachable!("the variant was set just above")
                        };
                        Some(acp_params!(@read $read r cx v))
                    }
                )*
                _ => None,
            }
        }
    };
    (@read params_at $r:ident $cx:ident $v:ident) => {
        $crate::acp::method::params_at($r, $cx, $v)
    };
    (@read decode_in $r:ident $cx:ident $v:ident) => {
        $crate::acp::wire::Decode::decode_in($r, $cx, $v)
    };
}

/// The typed result of a response, by the method of the request it
/// answers: one `Variant(Type) = NAME` a request method, `Other` for the
/// rest, as sent.
macro_rules! acp_results {
    (
        $(#[doc = $doc:literal])*
        $name:ident {
            $(
                $(#[cfg($cfg:meta)])?
                $variant:ident($t:ident) = $method:ident, $vdoc:literal;
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant)]
        pub enum $name<'a> {
            $(
                #[doc = $vdoc]
                $(#[cfg($cfg)])?
                $variant($t<'a>),
            )*
            /// The result of an extension or unknown method, as sent.
            Other($crate::acp::raw::RawJson<'a>),
        }

        impl<'a> $name<'a> {
            /// Decodes `raw` as the result of `method`.
            pub(crate) fn decode(
                method: &str,
                raw: &'a $crate::acp::raw::RawJson<'_>,
                mode: $crate::acp::wire::Mode,
            ) -> Result<$crate::acp::salvage::Typed<'a, Self>, $crate::acp::MessageError> {
                Self::decode_text(method, raw.get(), mode)
            }

            /// Decodes `text` (one valid JSON value) as the result of
            /// `method`, borrowing from it.
            pub(crate) fn decode_text(
                method: &str,
                text: &'a str,
                mode: $crate::acp::wire::Mode,
            ) -> Result<$crate::acp::salvage::Typed<'a, Self>, $crate::acp::MessageError> {
                Ok(match method {
                    $(
                        $(#[cfg($cfg)])?
                        names::$method => $crate::acp::wire::decode_text(text, mode)
                            .map_err(|why| $crate::acp::MessageError::InvalidResult {
                                method: names::$method,
                                error: serde::de::Error::custom(why.reason()),
                            })?
                            .map(Self::$variant),
                    )*
                    _ => $crate::acp::salvage::Typed::clean(Self::Other(
                        $crate::acp::raw::RawJson::from_validated(text),
                    )),
                })
            }

            /// A placeholder, overwritten by [`decode_known`](Self::decode_known).
            pub(crate) fn blank() -> Self {
                Self::Other($crate::acp::raw::RawJson::from_validated("null"))
            }

            acp_params!(@decode_known $name $($(#[cfg($cfg)])? $variant $method)* => decode_in);

            /// The method whose result this is (`None` for
            /// [`Other`](Self::Other), the result of a method this version
            /// does not know).
            pub fn method(&self) -> Option<&'static str> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(_) => Some(names::$method),
                    )*
                    Self::Other(_) => None,
                }
            }

            /// The value with all borrowed text copied (`'static`).
            pub fn into_owned(self) -> $name<'static> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(v) => $name::$variant(v.into_owned()),
                    )*
                    Self::Other(v) => $name::Other(v.into_owned()),
                }
            }
        }

        /// The result of any known method, decoding back to an equal value
        /// for [`method`](Self::method), or any JSON as
        /// [`Other`](Self::Other).
        #[cfg(feature = "arbitrary")]
        impl<'u> ::arbitrary::Arbitrary<'u> for $name<'static> {
            #[allow(clippy::vec_init_then_push)]
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<Self> {
                type Make<'u> = fn(&mut ::arbitrary::Unstructured<'u>) -> ::arbitrary::Result<$name<'static>>;
                // Pushed one by one: a variant may be behind feature `unstable`.
                let mut arms: alloc::vec::Vec<Make<'u>> = alloc::vec::Vec::new();
                $(
                    $(#[cfg($cfg)])?
                    arms.push(|u| Ok($name::$variant(u.arbitrary()?)));
                )*
                arms.push(|u| Ok($name::Other($crate::acp::leaf::raw(u)?)));
                u.choose(&arms)?(u)
            }
        }

        /// Serializes the result object only.
        impl serde::Serialize for $name<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Self::$variant(v) => v.serialize(s),
                    )*
                    Self::Other(v) => v.serialize(s),
                }
            }
        }

        acp_owned!($name);
    };
}
