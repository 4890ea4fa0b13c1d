//! The invariant behind the `acp_v2` fuzz target, shared with
//! `tests/integration/acp_v2.rs`, which replays the committed seeds and
//! generated input.
//!
//! Input: one line of arbitrary bytes when it starts with `{`; otherwise
//! a first byte choosing what an `Arbitrary` v2 value is built from the
//! rest (request params, notification params or a result).
//! For a line, its params (or its result, read as every v2 request
//! method's) decoded by v2 method, asserted:
//! - lenient decoding never fails where strict decoding succeeds, and
//!   agrees with it whenever either one salvaged nothing;
//! - whatever decodes re-encodes to JSON equal to what came in (nothing a
//!   peer sent is lost), unless a list item was skipped;
//! - decode, encode, decode gives the same value.
//!
//! For a generated value: encoded, decoded strictly, it is the same value.

use std::fmt::Debug;

use acp_codec::acp::v2::{
    encode_notification, encode_request, NotificationParams, RequestParams, ResponseResult, METHODS,
};
use acp_codec::acp::{
    encode_response, Message, MethodKind, Mode, RawJson, RequestId, SalvageKind, Typed,
};
use acp_codec::MessageError;
use arbitrary::{Arbitrary, Unstructured};
use serde::Serialize;

pub fn check(data: &[u8]) {
    match data.split_first() {
        Some((b'{', _)) => line(data),
        Some((&family, rest)) => generated(family % 3, &mut Unstructured::new(rest)),
        None => {}
    }
}

fn line(data: &[u8]) {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(msg) = Message::decode(line) else {
        return;
    };
    match &msg {
        Message::Request(r) => {
            let lenient = r.typed_v2(Mode::Lenient);
            agree(
                r.typed_v2(Mode::Strict).map(|t| t.value),
                &lenient,
                r.params.as_ref(),
            );
            if let Ok(t) = &lenient {
                let mut out = Vec::new();
                encode_request(&r.id, &t.value, &mut out).expect("a typed request encodes");
                assert_eq!(request_again(&out, Mode::Lenient), t.value);
            }
        }
        Message::Notification(n) => {
            let lenient = n.typed_v2(Mode::Lenient);
            agree(
                n.typed_v2(Mode::Strict).map(|t| t.value),
                &lenient,
                n.params.as_ref(),
            );
            if let Ok(t) = &lenient {
                let mut out = Vec::new();
                encode_notification(&t.value, &mut out).expect("a typed notification encodes");
                assert_eq!(notification_again(&out, Mode::Lenient), t.value);
            }
        }
        Message::Response(r) => {
            for m in METHODS.iter().filter(|m| m.kind == MethodKind::Request) {
                let lenient = r.typed_v2(m.name, Mode::Lenient);
                agree(
                    r.typed_v2(m.name, Mode::Strict).map(|t| t.value),
                    &lenient,
                    Some(&r.result),
                );
                if let Ok(t) = &lenient {
                    let mut out = Vec::new();
                    encode_response(&r.id, &t.value, &mut out).expect("a typed result encodes");
                    assert_eq!(result_again(&out, m.name, Mode::Lenient), t.value);
                }
            }
        }
        _ => {}
    }
}

fn generated(family: u8, u: &mut Unstructured<'_>) {
    let mut out = Vec::new();
    let id = RequestId::Number(7);
    match family {
        0 => {
            let Ok(p) = RequestParams::arbitrary(u) else {
                return;
            };
            encode_request(&id, &p, &mut out).expect("a generated request encodes");
            assert_eq!(request_again(&out, Mode::Strict), p);
        }
        1 => {
            let Ok(p) = NotificationParams::arbitrary(u) else {
                return;
            };
            encode_notification(&p, &mut out).expect("a generated notification encodes");
            assert_eq!(notification_again(&out, Mode::Strict), p);
        }
        _ => {
            let Ok(r) = ResponseResult::arbitrary(u) else {
                return;
            };
            encode_response(&id, &r, &mut out).expect("a generated result encodes");
            let method = r.method().unwrap_or("_x/unknown");
            assert_eq!(result_again(&out, method, Mode::Strict), r);
        }
    }
}

fn text(out: &[u8]) -> &str {
    std::str::from_utf8(out).expect("utf-8").trim_end()
}

fn request_again(out: &[u8], mode: Mode) -> RequestParams<'static> {
    let Ok(Message::Request(r)) = Message::decode(text(out)) else {
        panic!("not a request: {}", text(out))
    };
    let t = r
        .typed_v2(mode)
        .unwrap_or_else(|e| panic!("{e}: {}", text(out)));
    t.value.into_owned()
}

fn notification_again(out: &[u8], mode: Mode) -> NotificationParams<'static> {
    let Ok(Message::Notification(n)) = Message::decode(text(out)) else {
        panic!("not a notification: {}", text(out))
    };
    let t = n
        .typed_v2(mode)
        .unwrap_or_else(|e| panic!("{e}: {}", text(out)));
    t.value.into_owned()
}

fn result_again(out: &[u8], method: &str, mode: Mode) -> ResponseResult<'static> {
    let Ok(Message::Response(r)) = Message::decode(text(out)) else {
        panic!("not a response: {}", text(out))
    };
    let t = r
        .typed_v2(method, mode)
        .unwrap_or_else(|e| panic!("{e}: {}", text(out)));
    t.value.into_owned()
}

fn agree<T: Serialize + PartialEq + Debug>(
    strict: Result<T, MessageError>,
    lenient: &Result<Typed<'_, T>, MessageError>,
    sent: Option<&RawJson<'_>>,
) {
    match (&strict, lenient) {
        (Ok(s), Ok(l)) => {
            assert!(
                l.is_clean(),
                "strict succeeded, lenient salvaged {:?}",
                l.salvaged
            );
            assert_eq!(&l.value, s);
        }
        (Ok(_), Err(e)) => panic!("lenient decoding failed where strict succeeded: {e}"),
        (Err(e), Ok(l)) => assert!(
            !l.is_clean(),
            "strict failed ({e}), lenient salvaged nothing"
        ),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
    }
    let Ok(typed) = lenient else {
        return;
    };
    if typed
        .salvaged
        .iter()
        .any(|s| s.kind == SalvageKind::ItemSkipped)
    {
        return;
    }
    let Some(Ok(sent)) = sent.map(|s| serde_json::from_str::<serde_json::Value>(s.get())) else {
        return;
    };
    if sent.is_null() {
        return;
    }
    let again = serde_json::to_value(&typed.value).expect("a typed value encodes");
    assert_eq!(again, sent, "re-encoded JSON differs from what came in");
}
