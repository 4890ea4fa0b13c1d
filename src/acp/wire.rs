//! How a typed value is read, what the declared types' decoders call.
//!
//! - [`Decode`]: a type read from JSON by the [`Reader`], in one pass over
//!   the text, strictly or leniently ([`Cx`]): one decoder per type, for
//!   both modes, derived from each struct's, string enum's and union's
//!   declaration by the macros of `decl.rs` (`content.rs`, `update.rs` and
//!   the other type modules).
//! - [`Object`]: a struct's members, read after its opening brace (alone,
//!   or as a union's variant).
//! - [`read_required`] and [`read_optional`]: one member's value into its
//!   field: what absence and `null` mean, and what a value that does not
//!   fit becomes in lenient decoding.
//!
//! Lenient decoding salvages where it reads: a value that does not fit at
//! a salvage point (an optional member, a list item, a known variant of a
//! union) is passed over again from its start and kept raw, and decoding
//! goes on. Text that is not JSON is never salvaged.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde::de::Deserializer;
use serde::Deserialize;
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
    /// variant as its first member tells (see `super::tagged`): not while
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

impl<'de> Decode<'de> for u16 {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.integer::<u16>("u16")
    }
    fn blank() -> Self {
        0
    }
}

impl<'de> Decode<'de> for u32 {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.integer::<u32>("u32")
    }
    fn blank() -> Self {
        0
    }
}

impl<'de> Decode<'de> for u64 {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.integer::<u64>("u64")
    }
    fn blank() -> Self {
        0
    }
}

impl<'de> Decode<'de> for i64 {
    fn decode(r: &mut Reader<'de>, _: &mut Cx<'de>) -> Result<Self, Fail> {
        r.integer::<i64>("i64")
    }
    fn blank() -> Self {
        0
    }
}

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
/// is left out and reported. Each item is read in its place (`push` would
/// build it on the stack and copy it: a few hundred bytes).
impl<'de, T: Decode<'de>> Decode<'de> for Vec<T> {
    fn decode(r: &mut Reader<'de>, cx: &mut Cx<'de>) -> Result<Self, Fail> {
        let mut out = Vec::new();
        Self::decode_in(r, cx, &mut out)?;
        Ok(out)
    }
    fn blank() -> Self {
        Vec::new()
    }
    fn decode_in(r: &mut Reader<'de>, cx: &mut Cx<'de>, out: &mut Self) -> Result<(), Fail> {
        r.open_array()?;
        out.clear();
        let (mut first, mut i) = (true, 0usize);
        while r.item(&mut first)? {
            let (start, since) = (r.mark(), cx.salvaged.len());
            if out.capacity() == 0 {
                // At most 1 KiB at first (up to four items, as `push`
                // takes): what the allocator serves from its fast path.
                let fit = 1024usize.checked_div(size_of::<T>());
                out.reserve_exact(fit.map_or(4, |n| n.clamp(1, 4)));
            }
            out.resize_with(out.len().saturating_add(1), T::blank);
            let read = out.last_mut().map_or(Ok(()), |v| T::decode_in(r, cx, v));
            if let Err(why) = read {
                out.pop();
                cx.recover(r, start, since, SalvageKind::ItemSkipped, why)?;
            }
            cx.prefix(since, Step::Index(i));
            i = i.saturating_add(1);
        }
        Ok(())
    }
}

/// Reads the value of the required member `key` into `slot`, the field
/// itself (a struct or union is built there, see [`Decode::decode_in`]);
/// what it salvaged is reported under `key`.
#[inline]
pub(crate) fn read_required<'de, T: Decode<'de>>(
    r: &mut Reader<'de>,
    cx: &mut Cx<'de>,
    key: &'static str,
    slot: &mut T,
) -> Result<(), Fail> {
    let since = cx.salvaged.len();
    T::decode_in(r, cx, slot)?;
    cx.prefix(since, Step::Key(key));
    Ok(())
}

/// Reads the value of the optional member `key` into `slot`, or returns
/// the raw value to keep in the struct's [`Extra`](super::Extra) instead,
/// the field left `None`: a `null` (unless the type keeps it, see
/// [`Decode::from_null`]), or leniently a value that did not fit (a
/// salvage point: reported under `key`).
#[inline]
pub(crate) fn read_optional<'de, T: Decode<'de>>(
    r: &mut Reader<'de>,
    cx: &mut Cx<'de>,
    key: &'static str,
    slot: &mut Option<T>,
) -> Result<Option<&'de str>, Fail> {
    let (start, since) = (r.mark(), cx.salvaged.len());
    let kept = if r.null()? {
        *slot = T::from_null();
        slot.is_none().then_some("null")
    } else {
        match T::decode(r, cx) {
            Ok(v) => {
                *slot = Some(v);
                None
            }
            Err(why) => {
                *slot = None;
                Some(cx.recover(r, start, since, SalvageKind::MemberDropped, why)?)
            }
        }
    };
    cx.prefix(since, Step::Key(key));
    Ok(kept)
}

/// A member named twice.
pub(crate) fn duplicate(key: &str) -> Fail {
    Fail::Mismatch(alloc::format!("duplicate field `{key}`"))
}

/// The tag of a union (see `super::tagged`) whose variant's members are
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
