//! How a typed member is read and written, and the macros that define
//! the generated types on it.
//!
//! - [`Decode`]: a type read from JSON by the [`Reader`], in one pass over
//!   the text, strictly or leniently ([`Cx`]): one decoder per type, for
//!   both modes.
//! - [`Field`]: a member of a struct, required (`T`) or optional
//!   (`Option<T>`): what absence and `null` mean, and what a value that
//!   does not fit becomes in lenient decoding.
//! - [`acp_struct!`] and [`string_enum!`]: the generated structs (with an
//!   [`Extra`](super::Extra) for every member they do not hold, so they
//!   re-encode as they came) and string enums.
//!
//! Lenient decoding salvages where it reads: a value that does not fit at
//! a salvage point (an optional member, a list item, a known variant of a
//! union) is passed over again from its start and kept raw, and decoding
//! goes on. Text that is not JSON is never salvaged.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde::de::Deserializer;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Number;

use super::id::RequestId;
use super::raw::RawJson;
use super::read::{Fail, Mark, Reader};
use super::salvage::{Salvage, SalvageKind, Typed};

/// How a value that does not fit the schema is handled.
///
/// ```
/// use acp_codec::acp::{decode_line, Incoming, Mode};
///
/// // `priority` is a number in the schema: dropped (and reported) leniently,
/// // an error strictly.
/// let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","annotations":{"priority":"high"}}}}}"#;
/// let Incoming::Notification(typed) = decode_line(line, Mode::Lenient)? else { unreachable!() };
/// assert_eq!(typed.salvaged[0].path, "/update/content/annotations/priority");
/// assert!(decode_line(line, Mode::Strict).is_err());
/// # Ok::<(), acp_codec::MessageError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// What does not fit is salvaged and reported in
    /// [`Typed::salvaged`]: an optional member is dropped (its value kept
    /// in `extra`), a list item skipped, a known variant kept as
    /// `Unknown` (see [the policy](crate::acp#lenient-by-default-strict-on-request)).
    #[default]
    Lenient,
    /// The schema as written: what does not fit is an error (for
    /// conformance tests).
    Strict,
}

/// One step of a [`Salvage`] path.
#[derive(Clone, Copy)]
pub(crate) enum Step {
    Key(&'static str),
    Index(usize),
}

/// The context of a decode: its mode, and what it salvaged.
pub(crate) struct Cx<'de> {
    lenient: bool,
    pub(crate) salvaged: Vec<Salvage<'de>>,
    /// Whether a union whose tag is not its first member may read its
    /// variant as its first member tells (see `tagged_enum!`): not while
    /// a union reads itself again after such a guess proved wrong, so
    /// that no text is read more than a few times.
    pub(crate) guess: bool,
}

impl<'de> Cx<'de> {
    pub(crate) fn new(mode: Mode) -> Self {
        Self {
            lenient: mode == Mode::Lenient,
            salvaged: Vec::new(),
            guess: true,
        }
    }

    /// Prefixes the paths of the salvages reported since `since` with
    /// `step`: paths are built on the way out, so the way in costs nothing.
    #[inline]
    pub(crate) fn prefix(&mut self, since: usize, step: Step) {
        if since < self.salvaged.len() {
            self.prefix_each(since, step);
        }
    }

    /// [`prefix`](Self::prefix) when there are salvages to prefix.
    #[cold]
    fn prefix_each(&mut self, since: usize, step: Step) {
        for s in self.salvaged.iter_mut().skip(since) {
            let part = match step {
                Step::Key(k) => alloc::format!("/{k}"),
                Step::Index(i) => alloc::format!("/{i}"),
            };
            s.path.insert_str(0, &part);
        }
    }

    /// Recovers from `why`, the failure of the value that starts at
    /// `start`, as `kind`: in lenient mode, unless the text is not JSON
    /// (or, for a union, a required member is missing), the salvages
    /// reported inside it since `since` are withdrawn, the value is passed
    /// over again, reported, and its text returned to be kept raw.
    pub(crate) fn recover(
        &mut self,
        r: &mut Reader<'de>,
        start: Mark,
        since: usize,
        kind: SalvageKind,
        why: Fail,
    ) -> Result<&'de str, Fail> {
        let keep_missing = kind == SalvageKind::UnknownVariant && matches!(why, Fail::Missing(_));
        if !self.lenient || why.is_syntax() || keep_missing {
            return Err(why);
        }
        self.salvaged.truncate(since);
        r.reset(start);
        let raw = r.skip()?;
        self.salvaged.push(Salvage {
            path: String::new(),
            kind,
            reason: why.reason(),
            raw: RawJson::from_validated(raw),
        });
        Ok(raw)
    }

    /// Decodes with `T::decode` at a salvage point of `kind`: the value,
    /// or (recovered) its raw text.
    #[inline]
    pub(crate) fn salvage_point<T: Decode<'de>>(
        &mut self,
        r: &mut Reader<'de>,
        kind: SalvageKind,
    ) -> Result<Result<T, &'de str>, Fail> {
        let start = r.mark();
        let since = self.salvaged.len();
        match T::decode(r, self) {
            Ok(v) => Ok(Ok(v)),
            Err(why) => self.recover(r, start, since, kind, why).map(Err),
        }
    }
}

/// A type read from JSON by the [`Reader`]: the one decoder of every
/// generated type, strict or lenient by its [`Cx`].
pub(crate) trait Decode<'de>: Sized {
    /// Reads one value at the reader's position.
    fn decode(r: &mut Reader<'de>, cx: &mut Cx<'de>) -> Result<Self, Fail>;

    /// A placeholder, the value of a field before its member is read (see
    /// [`decode_in`](Self::decode_in)).
    fn blank() -> Self;

    /// Reads one value into `slot`, overwriting it. The generated structs
    /// and unions build their value there, member by member: a decoded
    /// update is a few hundred bytes, and moving it up from layer to layer
    /// (member, variant, struct, params) took more time than reading it.
    /// After an error `slot` holds part of a value, for the caller to
    /// overwrite or drop.
    #[inline]
    fn decode_in(r: &mut Reader<'de>, cx: &mut Cx<'de>, slot: &mut Self) -> Result<(), Fail> {
        *slot = Self::decode(r, cx)?;
        Ok(())
    }

    /// What `null` for an optional member of this type decodes to: `None`
    /// (the default) leaves the field absent and keeps the `null` in the
    /// struct's [`Extra`](super::Extra); raw JSON keeps it as its value.
    fn from_null() -> Option<Self> {
        None
    }
}

/// Decodes `text`, exactly one JSON value, as `T`. When even lenient
/// decoding fails, the error is the strict one: the first place the text
/// does not fit, not what was left after salvaging.
pub(crate) fn decode_text<'de, T: Decode<'de>>(
    text: &'de str,
    mode: Mode,
) -> Result<Typed<'de, T>, Fail> {
    let once = |mode| {
        let mut r = Reader::new(text);
        let mut cx = Cx::new(mode);
        let value = T::decode(&mut r, &mut cx)?;
        if !r.at_end() {
            return Err(Fail::Syntax(r.pos()));
        }
        Ok(Typed {
            value,
            salvaged: cx.salvaged,
        })
    };
    match once(mode) {
        Err(_) if mode == Mode::Lenient => once(Mode::Strict),
        done => done,
    }
}

/// `Deserialize` for a generated type: the JSON value as raw text (which
/// is why the types only deserialize from `serde_json`'s borrowing
/// deserializers), decoded strictly by its one decoder.
pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: Decode<'de>>(d: D) -> Result<T, D::Error> {
    let raw = <&'de RawValue>::deserialize(d)?;
    decode_text(raw.get(), Mode::Strict)
        .map(|t| t.value)
        .map_err(|why| serde::de::Error::custom(why.reason()))
}

impl<'de> Decode<'de> for bool {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.boolean()
    }
    fn blank() -> Self {
        false
    }
}

macro_rules! integer {
    ($($t:ident),*) => {$(
        impl<'de> Decode<'de> for $t {
            fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
                r.integer::<$t>(stringify!($t))
            }
            fn blank() -> Self {
                0
            }
        }
    )*};
}
integer!(u16, u32, u64, i64);

impl<'de> Decode<'de> for Number {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.number()
    }
    fn blank() -> Self {
        Number::from(0u8)
    }
}

impl<'de: 'a, 'a> Decode<'de> for Cow<'a, str> {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.string()
    }
    fn blank() -> Self {
        Cow::Borrowed("")
    }
}

impl<'de: 'a, 'a> Decode<'de> for RawJson<'a> {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.skip().map(RawJson::from_validated)
    }
    fn blank() -> Self {
        RawJson::from_validated("null")
    }
    fn from_null() -> Option<Self> {
        Some(RawJson::from_validated("null"))
    }
}

impl<'de: 'a, 'a> Decode<'de> for RequestId<'a> {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        match r.peek() {
            b'n' if r.null()? => Ok(RequestId::Null),
            b'"' => r.string().map(RequestId::Str),
            b'-' | b'0'..=b'9' => r.integer::<i64>("i64").map(RequestId::Number),
            _ => r.mismatch("a string, an integer or null"),
        }
    }
    fn blank() -> Self {
        RequestId::Null
    }
    fn from_null() -> Option<Self> {
        Some(RequestId::Null)
    }
}

/// A list: strictly every item must fit; leniently an item that does not
/// is left out and reported.
impl<'de, T: Decode<'de>> Decode<'de> for Vec<T> {
    fn decode(r: &mut Reader<'de>, cx: &mut Cx<'de>) -> Result<Self, Fail> {
        r.open_array()?;
        let mut out = Vec::new();
        let mut first = true;
        let mut i = 0usize;
        while r.item(&mut first)? {
            let since = cx.salvaged.len();
            if let Ok(v) = cx.salvage_point::<T>(r, SalvageKind::ItemSkipped)? {
                out.push(v);
            }
            cx.prefix(since, Step::Index(i));
            i = i.saturating_add(1);
        }
        Ok(out)
    }
    fn blank() -> Self {
        Vec::new()
    }
}

/// A member of a generated struct: `T` for a required one, `Option<T>` for
/// an optional one.
pub(crate) trait Field<'de>: Sized {
    /// Reads the member's value into `slot`, the field itself (a required
    /// member's struct or union is built there, see
    /// [`Decode::decode_in`]), or returns the raw value to keep in the
    /// struct's [`Extra`](super::Extra) instead, the field left `None`
    /// (an optional member's `null`, or leniently a value that did not
    /// fit, reported in `cx`).
    fn read(
        r: &mut Reader<'de>,
        cx: &mut Cx<'de>,
        slot: &mut Self,
    ) -> Result<Option<&'de str>, Fail>;

    /// The field before its member is read.
    fn blank() -> Self;

    /// The value when the member is absent (or held in `Extra`).
    fn absent(name: &'static str) -> Result<Self, Fail>;

    /// Whether encoding writes the member.
    fn is_set(&self) -> bool;

    /// Writes the member if it is set.
    fn write<M: SerializeMap>(&self, key: &'static str, map: &mut M) -> Result<(), M::Error>;
}

impl<'de, T: Decode<'de> + Serialize> Field<'de> for Option<T> {
    #[inline]
    fn read(
        r: &mut Reader<'de>,
        cx: &mut Cx<'de>,
        slot: &mut Self,
    ) -> Result<Option<&'de str>, Fail> {
        if r.null()? {
            *slot = T::from_null();
            return Ok(if slot.is_some() { None } else { Some("null") });
        }
        Ok(
            match cx.salvage_point::<T>(r, SalvageKind::MemberDropped)? {
                Ok(v) => {
                    *slot = Some(v);
                    None
                }
                Err(raw) => {
                    *slot = None;
                    Some(raw)
                }
            },
        )
    }

    fn blank() -> Self {
        None
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
    ([$($g:tt)*] $t:ty $(where $($w:tt)*)?) => {
        impl<'de, $($g)*> $crate::acp::wire::Field<'de> for $t $(where $($w)*)? {
            fn read(
                r: &mut $crate::acp::read::Reader<'de>,
                cx: &mut $crate::acp::wire::Cx<'de>,
                slot: &mut Self,
            ) -> Result<Option<&'de str>, $crate::acp::read::Fail> {
                <$t as $crate::acp::wire::Decode<'de>>::decode_in(r, cx, slot).map(|()| None)
            }
            fn blank() -> Self {
                <$t as $crate::acp::wire::Decode<'de>>::blank()
            }
            fn absent(name: &'static str) -> Result<Self, $crate::acp::read::Fail> {
                Err($crate::acp::read::Fail::Missing(name))
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
required_field!([T] Vec<T> where T: Decode<'de> + Serialize);

/// Reads member `key` of a struct as field type `F` into `slot` (see
/// [`Field::read`]); what it salvaged is reported under `key`.
#[inline]
pub(crate) fn member<'de, F: Field<'de>>(
    r: &mut Reader<'de>,
    cx: &mut Cx<'de>,
    key: &'static str,
    slot: &mut F,
) -> Result<Option<&'de str>, Fail> {
    let since = cx.salvaged.len();
    let got = F::read(r, cx, slot)?;
    cx.prefix(since, Step::Key(key));
    Ok(got)
}

/// A member named twice.
pub(crate) fn duplicate(key: &str) -> Fail {
    Fail::Mismatch(alloc::format!("duplicate field `{key}`"))
}

/// The tag of a union (see `tagged_enum!`) whose variant's members are
/// read: its name, whether it was met (read before the members, or among
/// them: met again, it is a duplicate), and its raw value when it was met
/// among them.
pub(crate) struct UnionTag<'de> {
    name: &'static str,
    seen: bool,
    pub(crate) value: Option<&'de str>,
}

impl UnionTag<'_> {
    /// The tag `name`, already read (`seen`) or not.
    pub(crate) fn new(name: &'static str, seen: bool) -> Self {
        Self {
            name,
            seen,
            value: None,
        }
    }
}

/// Whether the member `key`, whose value `raw` was passed over, is the
/// tag of the union a variant's members are read for (kept in `tag`); an
/// error the second time.
pub(crate) fn is_tag<'de>(
    tag: &mut Option<&mut UnionTag<'de>>,
    key: &str,
    raw: &'de str,
) -> Result<bool, Fail> {
    match tag {
        Some(t) if t.name == key => {
            if t.seen {
                return Err(duplicate(t.name));
            }
            t.seen = true;
            t.value = Some(raw);
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The members of a generated struct, read after its opening brace.
pub(crate) trait Object<'de>: Sized {
    /// Reads the members up to the closing brace into `out`, each into its
    /// field. `tag` is the tag of the union this struct is a variant of
    /// (met among the members, it is passed over and noted there); `first`
    /// whether no member has been read yet.
    fn members(
        r: &mut Reader<'de>,
        cx: &mut Cx<'de>,
        tag: Option<&mut UnionTag<'de>>,
        first: bool,
        out: &mut Self,
    ) -> Result<(), Fail>;
}

/// Defines a generated struct: public documented fields (each `"wire"
/// name: type`, `Option` for an optional member), `#[non_exhaustive]`, an
/// `extra` field for the members it does not hold, `into_owned`, its one
/// decoder ([`Decode`], [`Object`]: strict and lenient in one pass), and
/// `Serialize` (lossless) and `Deserialize` (through the decoder).
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
                    $( $(#[cfg($c)])? $f: <$t as $crate::acp::wire::Field<'de>>::blank(), )*
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
                use $crate::acp::wire::Field;
                // Whether each member was met.
                $( $(#[cfg($c)])? let mut $f = false; )*
                let mut extra = $crate::acp::Extra::new();
                while let Some(key) = r.key(&mut first, true)? {
                    match &*key {
                        $( $(#[cfg($c)])? $wire => {
                            if $f {
                                return Err($crate::acp::wire::duplicate($wire));
                            }
                            $f = true;
                            if let Some(raw) = $crate::acp::wire::member::<$t>(r, cx, $wire, &mut out.$f)? {
                                extra.push(key, $crate::acp::RawJson::from_validated(raw));
                            }
                        } )*
                        _ => {
                            let raw = r.skip()?;
                            if !$crate::acp::wire::is_tag(&mut tag, &key, raw)? {
                                extra.push(key, $crate::acp::RawJson::from_validated(raw));
                            }
                        }
                    }
                }
                $( $(#[cfg($c)])? if !$f {
                    out.$f = <$t as Field<'de>>::absent($wire)?;
                } )*
                out.extra = extra;
                Ok(())
            }
        }

        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::acp::wire::deserialize(d)
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

        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::acp::wire::deserialize(d)
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

        $crate::acp::wire::required_field!(['a] $name<'a> where 'de: 'a);
    };
}
pub(crate) use string_enum;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acp::{ContentChunk, SessionUpdate};

    /// `decode_in` over a slot that already holds a value (another variant,
    /// or the same one with members set) gives what `decode` gives: nothing
    /// of the old value is left, in either mode.
    #[test]
    fn decoding_in_place_keeps_nothing_of_the_slot() {
        let filled = r#"{"sessionUpdate":"agent_message_chunk","messageId":"m1","_meta":{"a":1},"content":{"type":"text","text":"old","annotations":{"priority":1}},"extra":true}"#;
        let texts = [
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"new"}}"#,
            r#"{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"image","data":"x","mimeType":"image/png"}}"#,
            // Leniently `messageId` does not fit: dropped, kept in `extra`.
            r#"{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"n"}}"#,
            r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}"#,
            r#"{"sessionUpdate":"not_yet_known","x":1}"#,
        ];
        for mode in [Mode::Lenient, Mode::Strict] {
            for text in texts {
                let want = decode_text::<SessionUpdate<'_>>(text, mode).map(|t| t.value);
                let mut slot = decode_text::<SessionUpdate<'_>>(filled, Mode::Strict)
                    .unwrap()
                    .value;
                let mut r = Reader::new(text);
                let mut cx = Cx::new(mode);
                let got = SessionUpdate::decode_in(&mut r, &mut cx, &mut slot).map(|()| slot);
                match (want, got) {
                    (Ok(want), Ok(got)) => assert_eq!(got, want, "{mode:?} {text}"),
                    (Err(_), Err(_)) => {}
                    (want, got) => panic!("{mode:?} {text}: {want:?} against {got:?}"),
                }
            }
        }
        // A struct read in place over a filled one: a member absent, or
        // (leniently) one that does not fit, leaves its field empty.
        for text in [
            r#"{"content":{"type":"text","text":"b"}}"#,
            r#"{"content":{"type":"text","text":"b"},"messageId":7}"#,
            r#"{"content":{"type":"text","text":"b"},"messageId":null}"#,
        ] {
            let mut chunk = decode_text::<ContentChunk<'_>>(
                r#"{"content":{"type":"text","text":"a"},"messageId":"m","k":1}"#,
                Mode::Strict,
            )
            .unwrap()
            .value;
            let mut cx = Cx::new(Mode::Lenient);
            ContentChunk::decode_in(&mut Reader::new(text), &mut cx, &mut chunk).unwrap();
            assert_eq!(
                chunk,
                decode_text::<ContentChunk<'_>>(text, Mode::Lenient)
                    .unwrap()
                    .value,
                "{text}"
            );
            assert!(chunk.message_id.is_none(), "{text}");
        }
    }
}
