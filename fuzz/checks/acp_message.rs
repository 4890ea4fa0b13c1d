//! The invariant behind the `acp_message` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: one line of arbitrary bytes. Asserted:
//! - decoding never panics, and a failure has the code `serde_json`'s reading
//!   of the bytes calls for: -32600 (invalid request) when they are JSON
//!   text; when they are not (invalid UTF-8 included), -32700 (parse
//!   error), or -32600 for an envelope fault met before the bad byte (the
//!   envelope is read in one pass, which stops at the first fault);
//! - a decoded message encodes as exactly one line, to JSON equal to the
//!   input's, and decoding that line gives the same message;
//! - typed params or results that decode (leniently, the default)
//!   re-encode to a line whose typed decoding is equal again (encoding is
//!   stable after one round);
//! - `acp::decode_line` (one pass over the line) gives exactly what
//!   `Message::decode` then `typed` give: the same value and salvage
//!   report, or an error with the same code and message, in both modes;
//! - a response to request 0 to 15, decoded by `decode_line` with a
//!   `Tracker` that has it pending as each request method in turn, gives
//!   what `Message::decode` then `Response::typed` give: the typed result,
//!   or the response as sent when it is not typed;
//! - lenient against strict: the same value, nothing salvaged, where strict
//!   decoding succeeds; something salvaged where only lenient decoding
//!   succeeds; the same error where both fail. (The typed values are held
//!   against an independent oracle in the `acp_oracle` check.)

use acp_codec::acp::Mode;
use acp_codec::acp::{
    decode_line, encode_notification, encode_request, Decoding, Incoming, Message, MethodKind,
    RequestId, Response, Typed, METHODS,
};

/// Shared with the tests (through this check) and the real-traffic benches.
#[path = "../../tests/support/pending.rs"]
pub mod pending;

fn one_line(out: &[u8]) -> &str {
    let text = std::str::from_utf8(out).expect("encoder wrote invalid utf-8");
    assert_eq!(text.matches('\n').count(), 1, "not one line: {text:?}");
    assert!(text.ends_with('\n'));
    text.trim_end_matches('\n')
}

/// A message as comparable parts: kind, id, method, and its params, result
/// or error data as compact JSON text (raw JSON is kept as sent, so the
/// input and its re-encoding may differ in whitespace only).
fn parts(m: &Message<'_>) -> (u8, Option<String>, Option<String>, String) {
    // Text without the whitespace between tokens (numbers such as 1e999
    // do not fit a `serde_json::Value`, so compare the text).
    let value = |raw: Option<&acp_codec::acp::RawJson<'_>>| {
        let (mut out, mut in_str, mut esc) = (String::new(), false, false);
        for c in raw.map_or("null", |r| r.get()).chars() {
            match (in_str, esc, c) {
                (true, true, _) => esc = false,
                (true, false, '\\') => esc = true,
                (_, false, '"') => in_str = !in_str,
                (false, _, ' ' | '\t' | '\n' | '\r') => continue,
                _ => {}
            }
            out.push(c);
        }
        out
    };
    match m {
        Message::Request(r) => (
            0,
            Some(r.id.to_string()),
            Some(r.method.to_string()),
            value(r.params.as_ref()),
        ),
        Message::Notification(n) => (
            1,
            None,
            Some(n.method.to_string()),
            value(n.params.as_ref()),
        ),
        Message::Response(r) => (2, Some(r.id.to_string()), None, value(Some(&r.result))),
        Message::Error(e) => (
            3,
            Some(e.id.to_string()),
            Some(format!("{} {}", e.error.code.0, e.error.message)),
            value(e.error.data.as_ref()),
        ),
    }
}

type Outcome = Result<Incoming<'static>, (acp_codec::ErrorCode, String)>;

/// `Message::decode` then `typed` (in `Mode::Strict` when `strict`): a
/// request whose params do not fit stays the message, and so does a
/// notification's in lenient mode (strict, it is the error).
fn two_step(line: &str, strict: bool) -> Outcome {
    let mode = if strict { Mode::Strict } else { Mode::Lenient };
    match Message::decode(line) {
        Err(e) => Err((e.code(), e.to_string())),
        Ok(Message::Notification(n)) => match n.typed(mode) {
            Ok(t) => Ok(Incoming::Notification(t.into_owned())),
            Err(e) if strict => Err((e.code(), e.to_string())),
            Err(_) => Ok(Incoming::Message(Message::Notification(n.into_owned()))),
        },
        Ok(Message::Request(r)) => Ok(match r.typed(mode) {
            Ok(params) => Incoming::Request {
                params: Box::new(params.into_owned()),
                request: r.clone().into_owned(),
            },
            Err(_) => Incoming::Message(Message::Request(r.into_owned())),
        }),
        Ok(m) => Ok(Incoming::Message(m.into_owned())),
    }
}

/// The one-pass decoder against the two-step path, on any text, lenient
/// and strict.
fn one_pass_agrees(line: &str) {
    let one_pass = decode_line(line, Mode::Lenient)
        .map(Incoming::into_owned)
        .map_err(|e| (e.code(), e.to_string()));
    assert_eq!(
        one_pass,
        two_step(line, false),
        "decode_line differs on {line:?}"
    );
    let strict = decode_line(line, Mode::Strict)
        .map(Incoming::into_owned)
        .map_err(|e| (e.code(), e.to_string()));
    assert_eq!(
        strict,
        two_step(line, true),
        "decode_line (strict) differs on {line:?}"
    );
    // Lenient against strict: the same value with nothing salvaged where
    // strict decoding succeeds; something salvaged where lenient decoding
    // succeeds and strict does not; the same error where both fail.
    match (&strict, &one_pass) {
        (Ok(Incoming::Notification(s)), Ok(Incoming::Notification(l))) => {
            assert!(s.is_clean(), "strict salvaged on {line:?}");
            assert!(
                l.is_clean(),
                "lenient salvaged what strict takes on {line:?}"
            );
            assert_eq!(s.value, l.value, "strict and lenient differ on {line:?}");
        }
        (
            Ok(Incoming::Request {
                request: rs,
                params: s,
            }),
            Ok(Incoming::Request {
                request: rl,
                params: l,
            }),
        ) => {
            assert_eq!(rs, rl, "strict and lenient requests differ on {line:?}");
            assert!(s.is_clean(), "strict salvaged on {line:?}");
            assert!(
                l.is_clean(),
                "lenient salvaged what strict takes on {line:?}"
            );
            assert_eq!(s.value, l.value, "strict and lenient differ on {line:?}");
        }
        (Ok(Incoming::Message(s)), Ok(Incoming::Message(l))) => assert_eq!(s, l),
        (Err(_), Ok(Incoming::Notification(l))) => {
            assert!(!l.is_clean(), "strict fails, nothing salvaged, on {line:?}")
        }
        // Params that fit neither way: an error strictly, the message as
        // sent leniently.
        (Err(_), Ok(Incoming::Message(Message::Notification(_)))) => {}
        (Ok(Incoming::Message(Message::Request(_))), Ok(Incoming::Request { params: l, .. })) => {
            assert!(!l.is_clean(), "strict fails, nothing salvaged, on {line:?}")
        }
        (Err(s), Err(l)) => assert_eq!(s, l, "strict and lenient errors differ on {line:?}"),
        other => panic!("strict and lenient disagree on {line:?}: {other:?}"),
    }
}

/// A response to request `n` (0 to 15), decoded with a tracker that has
/// it pending as each request method, against `Response::typed`.
fn responses_agree(line: &str, response: &Response<'_>) {
    let RequestId::Number(n @ 0..=15) = response.id else {
        return;
    };
    let sent = Incoming::Message(Message::Response(response.clone().into_owned()));
    for info in METHODS.iter().filter(|m| m.kind == MethodKind::Request) {
        let tracker = pending::tracker_with(n, info.name);
        for mode in [Mode::Lenient, Mode::Strict] {
            let got = decode_line(line, Decoding::new(mode).with_tracker(&tracker))
                .map(Incoming::into_owned)
                .map_err(|e| e.to_string());
            let want = match response.typed(info.name, mode) {
                Ok(t) if t.value.method().is_some() => Incoming::Response {
                    response: response.clone().into_owned(),
                    result: Box::new(t.into_owned()),
                },
                _ => sent.clone(),
            };
            assert_eq!(got, Ok(want), "{} ({mode:?}) on {line:?}", info.name);
        }
    }
}

pub fn check(data: &[u8]) {
    if let Ok(line) = std::str::from_utf8(data) {
        one_pass_agrees(line);
        if let Ok(Message::Response(response)) = Message::decode(line) {
            responses_agree(line, &response);
        }
    }
    let msg = match Message::decode_bytes(data) {
        Ok(m) => m,
        Err(e) => {
            // Syntax alone (no number range): serde's ignoring deserializer,
            // on text (it skips a string's bytes unchecked, so invalid UTF-8
            // inside a string would pass as JSON).
            let is_json = std::str::from_utf8(data)
                .is_ok_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok());
            let code = e.code().0;
            let text = String::from_utf8_lossy(data);
            if is_json {
                assert_eq!(code, -32600, "{e} on json {text:?}");
            } else {
                assert!(matches!(code, -32700 | -32600), "{e} on {text:?}");
            }
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let mut out = Vec::new();
    msg.encode(&mut out).expect("a decoded message must encode");
    let line = one_line(&out);
    let again = Message::decode(line).expect("an encoded message must decode");
    assert_eq!(
        parts(&again),
        parts(&msg),
        "the re-encoded line decodes to another message"
    );
    // Equal JSON, but for members outside the envelope (ignored).
    if let (Ok(serde_json::Value::Object(mut a)), Ok(b)) = (
        serde_json::from_slice::<serde_json::Value>(data),
        serde_json::from_str::<serde_json::Value>(line),
    ) {
        a.retain(|k, _| {
            ["jsonrpc", "id", "method", "params", "result", "error"].contains(&k.as_str())
        });
        if let Some(serde_json::Value::Object(e)) = a.get_mut("error") {
            e.retain(|k, _| ["code", "message", "data"].contains(&k.as_str()));
        }
        assert_eq!(serde_json::Value::Object(a), b, "re-encoded json differs");
    }
    // The envelope is stable: encoding the re-decoded message gives the
    // same bytes.
    let mut out2 = Vec::new();
    again.encode(&mut out2).unwrap();
    assert_eq!(out, out2);

    match &msg {
        Message::Request(r) => {
            if let Ok(t) = r.typed(Mode::Lenient).map(Typed::into_value) {
                let mut o = Vec::new();
                encode_request(&r.id, &t, &mut o).expect("typed params must encode");
                let l = one_line(&o);
                let Ok(Message::Request(r2)) = Message::decode(l) else {
                    panic!("{l}")
                };
                let t2 = r2
                    .typed(Mode::Lenient)
                    .expect("re-encoded params must decode")
                    .value;
                let mut o2 = Vec::new();
                encode_request(&RequestId::Null, &t2, &mut o2).unwrap();
                let mut o1 = Vec::new();
                encode_request(&RequestId::Null, &t, &mut o1).unwrap();
                assert_eq!(o1, o2, "typed params not stable");
            }
        }
        Message::Notification(n) => {
            if let Ok(t) = n.typed(Mode::Lenient).map(Typed::into_value) {
                let mut o = Vec::new();
                encode_notification(&t, &mut o).expect("typed params must encode");
                let l = one_line(&o);
                let Ok(Message::Notification(n2)) = Message::decode(l) else {
                    panic!("{l}")
                };
                let t2 = n2
                    .typed(Mode::Lenient)
                    .expect("re-encoded params must decode")
                    .value;
                let mut o2 = Vec::new();
                encode_notification(&t2, &mut o2).unwrap();
                assert_eq!(o, o2, "typed params not stable");
            }
        }
        Message::Response(r) => {
            let methods = METHODS.iter().filter(|m| m.kind == MethodKind::Request);
            for method in methods.map(|m| m.name) {
                if let Ok(t) = r.typed(method, Mode::Lenient).map(Typed::into_value) {
                    let json = serde_json::to_string(&t).expect("typed result must encode");
                    let raw = acp_codec::acp::RawJson::from_text(&json).unwrap();
                    let again = acp_codec::acp::Response {
                        id: r.id.clone(),
                        result: raw,
                    };
                    let t2 = again
                        .typed(method, Mode::Lenient)
                        .expect("re-encoded result must decode")
                        .value;
                    assert_eq!(
                        serde_json::to_string(&t2).unwrap(),
                        json,
                        "typed result not stable"
                    );
                }
            }
        }
        Message::Error(_) => {}
    }
}
