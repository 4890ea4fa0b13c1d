//! The invariant behind the `acp_codec` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: byte 0 picks the line limit (16..=520 bytes) and the read size
//! (1, 8, 15 or 22 bytes); the rest is the stream. Asserted:
//! - `AcpCodec` gives the same items whether the input comes at once or in
//!   small reads, and never fails with an I/O error;
//! - its items match an oracle that shares no code with the crate: the
//!   input split on `\n` by hand (a trailing `\r` stripped, blank lines
//!   skipped, lines over the limit and invalid UTF-8 reported as such), each
//!   line read by `serde_json`. Item by item: a line over the limit is a
//!   framing error with code -32600, invalid UTF-8 one with -32700; text
//!   `serde_json` does not take as JSON is a message error; a message the
//!   codec yields has the kind, `id` and `method` the JSON says, and
//!   re-encodes to JSON equal to it (members outside the envelope aside);
//!   JSON that a plain reading of JSON-RPC 2.0 takes for a message is not
//!   refused;
//! - every message it yields encodes (through its `Encoder`) to exactly
//!   one line, and that line decodes and re-encodes to the same bytes.

use acp_codec::acp::Message;
use acp_codec::codec::AcpCodec;
use acp_codec::{Error, FrameError, Limits};
use bytes::BytesMut;
use serde_json::{Map, Value};
use tokio_util::codec::{Decoder, Encoder};

/// Every item of `codec` over `input` fed in reads of `read` bytes.
fn items<D: Decoder>(mut codec: D, input: &[u8], read: usize) -> Vec<D::Item>
where
    D::Error: core::fmt::Debug,
{
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in input.chunks(read.max(1)) {
        buf.extend_from_slice(piece);
        while let Some(item) = codec.decode(&mut buf).expect("no i/o error") {
            out.push(item);
        }
    }
    while let Some(item) = codec.decode_eof(&mut buf).expect("no i/o error") {
        out.push(item);
    }
    out
}

/// An item reduced to what must agree: the message's encoding or the
/// error's code.
fn key(item: &Result<Message<'_>, Error>) -> Result<Vec<u8>, i32> {
    match item {
        Ok(m) => {
            let mut out = Vec::new();
            m.encode(&mut out).expect("a decoded message encodes");
            Ok(out)
        }
        Err(e) => Err(e.code().0),
    }
}

/// What the oracle expects of one line.
#[derive(Debug)]
enum Want {
    TooLong,
    BadUtf8,
    Text(String),
}

/// The input's lines, split by hand.
fn naive_lines(limit: usize, input: &[u8]) -> Vec<Want> {
    let mut out = Vec::new();
    for part in input.split(|&b| b == b'\n') {
        if part.len() > limit {
            out.push(Want::TooLong);
            continue;
        }
        let text = part.strip_suffix(b"\r").unwrap_or(part);
        if text.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue;
        }
        out.push(match std::str::from_utf8(text) {
            Ok(t) => Want::Text(t.to_owned()),
            Err(_) => Want::BadUtf8,
        });
    }
    out
}

/// The envelope's members of a JSON object (what a message re-encodes).
fn envelope(mut v: Map<String, Value>) -> Value {
    v.retain(|k, _| ["jsonrpc", "id", "method", "params", "result", "error"].contains(&k.as_str()));
    if let Some(Value::Object(e)) = v.get_mut("error") {
        e.retain(|k, _| ["code", "message", "data"].contains(&k.as_str()));
    }
    Value::Object(v)
}

/// Whether a plain reading of JSON-RPC 2.0 takes `v` for one message: an
/// object with `"jsonrpc": "2.0"`; a request or notification has a string
/// `method`, an id that is a string or an integer if any, and object or
/// array params if any; a response has an id (or `null`) and exactly one
/// of `result` and an `error` object with an integer `code` and a string
/// `message`.
fn plainly_a_message(v: &Value) -> bool {
    let Value::Object(o) = v else { return false };
    let id_ok = |id: Option<&Value>| match id {
        None => true,
        Some(Value::String(_) | Value::Null) => true,
        Some(Value::Number(n)) => n.is_i64(),
        Some(_) => false,
    };
    if o.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return false;
    }
    match o.get("method") {
        Some(Value::String(_)) => {
            !o.contains_key("result")
                && !o.contains_key("error")
                && !matches!(o.get("id"), Some(Value::Null))
                && id_ok(o.get("id"))
                && matches!(
                    o.get("params"),
                    None | Some(Value::Object(_) | Value::Array(_))
                )
        }
        Some(_) => false,
        None => {
            let error_ok = match o.get("error") {
                Some(Value::Object(e)) => {
                    e.get("code")
                        .is_some_and(|c| c.as_i64().is_some_and(|c| i32::try_from(c).is_ok()))
                        && e.get("message").is_some_and(Value::is_string)
                }
                _ => false,
            };
            o.contains_key("id")
                && id_ok(o.get("id"))
                && !o.contains_key("params")
                && (o.contains_key("result") != o.contains_key("error"))
                && (!o.contains_key("error") || error_ok)
        }
    }
}

/// One codec item against the oracle's line.
fn agrees(item: &Result<Message<'_>, Error>, want: &Want) {
    match (want, item) {
        (Want::TooLong, Err(Error::Frame(FrameError::LineTooLong(_)))) => {
            assert_eq!(
                item.as_ref().map_err(Error::code).err().map(|c| c.0),
                Some(-32600)
            );
        }
        (Want::BadUtf8, Err(Error::Frame(FrameError::InvalidUtf8 { .. }))) => {
            assert_eq!(
                item.as_ref().map_err(Error::code).err().map(|c| c.0),
                Some(-32700)
            );
        }
        (Want::Text(text), _) => text_agrees(item, text),
        _ => panic!("codec gave {item:?}, the naive split {want:?}"),
    }
}

fn text_agrees(item: &Result<Message<'_>, Error>, text: &str) {
    // Syntax alone (no number range): serde's ignoring deserializer.
    let is_json = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    let value = serde_json::from_str::<Value>(text).ok();
    match item {
        Err(Error::Message(_)) if !is_json => {}
        Err(Error::Message(e)) => {
            // A member named twice is refused by the crate on purpose;
            // `Value` keeps the last one, so it cannot judge those.
            if let Some(v) = value.as_ref().filter(|_| !has_duplicate_keys(text)) {
                assert!(!plainly_a_message(v), "refused {text:?}: {e}");
            }
        }
        Ok(m) => {
            assert!(is_json, "a message from text that is not json: {text:?}");
            let Some(Value::Object(o)) = value else {
                // Numbers out of `Value`'s range: syntax checked above.
                return;
            };
            let kind = match (o.contains_key("method"), o.contains_key("id")) {
                (true, true) => "request",
                (true, false) => "notification",
                _ if o.contains_key("error") => "error",
                _ => "response",
            };
            let got = match m {
                Message::Request(_) => "request",
                Message::Notification(_) => "notification",
                Message::Response(_) => "response",
                Message::Error(_) => "error",
            };
            assert_eq!(got, kind, "{text:?}");
            assert_eq!(
                m.method(),
                o.get("method").and_then(Value::as_str),
                "{text:?}"
            );
            let mut line = Vec::new();
            m.encode(&mut line).expect("a decoded message encodes");
            let again: Value = serde_json::from_slice(&line).expect("encodes json");
            assert_eq!(again.get("id"), o.get("id"), "{text:?}");
            assert_eq!(again, envelope(o), "re-encoded json differs on {text:?}");
        }
        Err(e) => panic!("{e:?} for a line the naive split takes: {text:?}"),
    }
}

pub fn check(data: &[u8]) {
    let Some((&head, input)) = data.split_first() else {
        return;
    };
    let limit = 16 + usize::from(head & 0x3f) * 8;
    let limits = Limits::default().with_max_line_len(limit);
    let read = 1 + usize::from(head >> 6) * 7;

    let whole = items(AcpCodec::with_limits(&limits), input, input.len());
    let split = items(AcpCodec::with_limits(&limits), input, read);
    let whole_keys: Vec<_> = whole.iter().map(key).collect();
    let split_keys: Vec<_> = split.iter().map(key).collect();
    assert_eq!(whole_keys, split_keys, "split invariance");

    let oracle = naive_lines(limit, input);
    assert_eq!(
        whole.len(),
        oracle.len(),
        "items {whole:?}, naive lines {oracle:?}"
    );
    for (item, want) in whole.iter().zip(&oracle) {
        agrees(item, want);
    }

    for item in whole.iter().flatten() {
        let mut out = BytesMut::new();
        AcpCodec::new().encode(item, &mut out).expect("encodes");
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(out.last(), Some(&b'\n'));
        let line = std::str::from_utf8(&out[..out.len() - 1]).expect("utf-8");
        let again = Message::decode(line).expect("re-decodes");
        let mut twice = Vec::new();
        again.encode(&mut twice).expect("re-encodes");
        assert_eq!(&twice[..], &out[..], "encoding is stable");
    }
}

/// Whether some object of the JSON `text`, at any depth, names a member
/// twice (read with serde's visitor, independently of the crate).
fn has_duplicate_keys(text: &str) -> bool {
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::collections::HashSet;

    struct Dup(bool);
    struct Scan;
    impl<'de> Deserialize<'de> for Dup {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Scan)
        }
    }
    impl<'de> Visitor<'de> for Scan {
        type Value = Dup;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("json")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Dup, A::Error> {
            let (mut keys, mut dup) = (HashSet::new(), false);
            while let Some(key) = map.next_key::<String>()? {
                dup |= !keys.insert(key);
                dup |= map.next_value::<Dup>()?.0;
            }
            Ok(Dup(dup))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dup, A::Error> {
            let mut dup = false;
            while let Some(item) = seq.next_element::<Dup>()? {
                dup |= item.0;
            }
            Ok(Dup(dup))
        }
        fn visit_bool<E>(self, _: bool) -> Result<Dup, E> {
            Ok(Dup(false))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Dup, E> {
            Ok(Dup(false))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Dup, E> {
            Ok(Dup(false))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Dup, E> {
            Ok(Dup(false))
        }
        fn visit_str<E>(self, _: &str) -> Result<Dup, E> {
            Ok(Dup(false))
        }
        fn visit_unit<E>(self) -> Result<Dup, E> {
            Ok(Dup(false))
        }
    }
    serde_json::from_str::<Dup>(text).is_ok_and(|d| d.0)
}
