//! The invariant behind the `acp_lossless` fuzz target, shared with
//! `tests/integration/acp_lossless.rs`, which replays the committed seeds.
//!
//! Input: one line of arbitrary bytes. For a request's or notification's
//! params, and for a response's result read as every known method's,
//! asserted:
//! - lenient decoding never fails where strict decoding succeeds, and
//!   agrees with it (same value, nothing salvaged) whenever either one
//!   salvaged nothing; where both fail, with the same error;
//! - whatever decodes re-encodes to JSON equal, as a value, to what came
//!   in: unknown members, `null`s and numbers as sent (unless a list item
//!   was skipped, the one salvage that leaves something out);
//! - `decode_line` gives what `typed` gives, in both modes.

use acp_codec::acp::Mode;
use std::fmt::Debug;

use acp_codec::acp::{
    decode_line, Incoming, Message, MethodKind, RawJson, SalvageKind, Typed, METHODS,
};
use acp_codec::MessageError;
use serde::Serialize;

pub fn check(data: &[u8]) {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(msg) = Message::decode(line) else {
        return;
    };
    match &msg {
        Message::Request(r) => agree(
            r.typed(Mode::Strict).map(|t| t.value),
            r.typed(Mode::Lenient),
            r.params.as_ref(),
        ),
        Message::Notification(n) => {
            let (strict, lenient) = (
                n.typed(Mode::Strict).map(|t| t.value),
                n.typed(Mode::Lenient),
            );
            match (decode_line(line, Mode::Lenient), &lenient) {
                (Ok(Incoming::Notification(a)), Ok(b)) => assert_eq!(&a, b),
                // Params that do not fit: the notification as sent.
                (Ok(Incoming::Message(a)), Err(_)) => assert_eq!(a, msg),
                (a, b) => panic!("decode_line {a:?} but typed {b:?}"),
            }
            match (decode_line(line, Mode::Strict), &strict) {
                (Ok(Incoming::Notification(a)), Ok(b)) => {
                    assert!(a.is_clean());
                    assert_eq!(&a.value, b);
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("decode_line (strict) {a:?} but typed (strict) {b:?}"),
            }
            agree(strict, lenient, n.params.as_ref());
        }
        Message::Response(r) => {
            // The result read as that of every request method.
            for m in METHODS.iter().filter(|m| m.kind == MethodKind::Request) {
                agree(
                    r.typed(m.name, Mode::Strict).map(|t| t.value),
                    r.typed(m.name, Mode::Lenient),
                    Some(&r.result),
                );
            }
        }
        _ => {}
    }
}

fn agree<T: Serialize + PartialEq + Debug>(
    strict: Result<T, MessageError>,
    lenient: Result<Typed<'_, T>, MessageError>,
    sent: Option<&RawJson<'_>>,
) {
    match (&strict, &lenient) {
        (Ok(s), Ok(l)) => {
            assert!(
                l.is_clean(),
                "strict decoding succeeded, lenient salvaged {:?}",
                l.salvaged
            );
            assert_eq!(&l.value, s);
        }
        (Ok(_), Err(e)) => panic!("lenient decoding failed where strict succeeded: {e}"),
        (Err(e), Ok(l)) => assert!(
            !l.is_clean(),
            "strict decoding failed ({e}), lenient salvaged nothing: {:?}",
            l.value
        ),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
    }
    let Ok(typed) = &lenient else {
        return;
    };
    if typed
        .salvaged
        .iter()
        .any(|s| s.kind == SalvageKind::ItemSkipped)
    {
        return;
    }
    // Absent and `null` params read as `{}`; JSON a `Value` cannot hold
    // (numbers beyond f64, lone surrogates) is compared nowhere.
    let Some(Ok(sent)) = sent.map(|s| serde_json::from_str::<serde_json::Value>(s.get())) else {
        return;
    };
    if sent.is_null() {
        return;
    }
    let again = serde_json::to_value(&typed.value).expect("a typed value encodes");
    assert_eq!(again, sent, "re-encoded JSON differs from what came in");
}
