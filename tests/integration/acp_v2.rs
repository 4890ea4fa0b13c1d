//! ACP v2 (feature `v2`): the v2 docs' example messages decode by v2
//! method and re-encode as sent; generated v2 values round-trip through
//! encode and decode; unknown members, variants and values come back as
//! sent; every encoded v2 message validates against the v2 JSON schema
//! (`scripts/check_acp_schema.py --v2`, Python `jsonschema`; skipped with
//! a message when it is missing, unless `ACP_SCHEMA_CHECK=require`); the
//! crate's strict decoding agrees with an independent oracle
//! (`tests/oracle_v2/`: plain serde derives generated from the v2 schema,
//! sharing no code with the crate).
#![cfg(feature = "v2")]

use crate::acp_support;

use acp_codec::acp::v2::*;
use acp_codec::acp::{encode_response, Message, MethodKind, Mode, RawJson, RequestId};
use acp_support::arb_v2::{arb_notification_params, arb_request_params, arb_response_result};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

#[path = "../oracle_v2/mod.rs"]
mod oracle;

const EXAMPLES: &str = include_str!("../fixtures/acp/v2-examples.ndjson");

fn line_of(out: &[u8]) -> &str {
    std::str::from_utf8(out).unwrap().trim_end()
}

/// Every example message of the v2 docs: a request's or notification's
/// params decode strictly by v2 method (an extension method's as sent) and
/// re-encode to the JSON sent. Two `initialize` examples leave out the
/// required `info` (the v2 schema refuses them too): an error.
#[test]
fn the_docs_examples_decode_and_re_encode() {
    let (mut typed, mut refused) = (0, 0);
    for line in EXAMPLES.lines() {
        let msg = Message::decode(line).unwrap();
        let (json, method) = match &msg {
            Message::Request(r) if r.method == names::INITIALIZE && !line.contains("\"info\"") => {
                let e = r.typed_v2(Mode::Lenient).unwrap_err();
                assert_eq!(
                    e.to_string(),
                    "invalid params for initialize: missing field `info`"
                );
                refused += 1;
                continue;
            }
            Message::Request(r) => {
                let p = r
                    .typed_v2(Mode::Strict)
                    .unwrap_or_else(|e| panic!("{e}: {line}"));
                assert!(!matches!(p.value, RequestParams::Unknown { .. }), "{line}");
                (
                    serde_json::to_value(&p.value).unwrap(),
                    r.method.to_string(),
                )
            }
            Message::Notification(n) => {
                let p = n
                    .typed_v2(Mode::Strict)
                    .unwrap_or_else(|e| panic!("{e}: {line}"));
                assert!(
                    !matches!(p.value, NotificationParams::Unknown { .. }),
                    "{line}"
                );
                assert!(!format!("{:?}", p.value).contains("Unknown("), "{line}");
                (
                    serde_json::to_value(&p.value).unwrap(),
                    n.method.to_string(),
                )
            }
            _ => continue,
        };
        let sent: Value = serde_json::from_str(line).unwrap();
        assert_eq!(json, sent["params"], "{method}: {line}");
        typed += 1;
    }
    assert_eq!((typed, refused), (39, 2));
}

/// A v2 `session/prompt` answer acknowledges the prompt (`messageId`);
/// the turn's end is a `state_update`, its stop reason there.
#[test]
fn a_prompt_is_acknowledged_and_ends_with_a_state_update() {
    let line = r#"{"jsonrpc":"2.0","id":2,"result":{"messageId":"m-1"}}"#;
    let Message::Response(r) = Message::decode(line).unwrap() else {
        panic!()
    };
    let ResponseResult::Prompt(p) = r
        .typed_v2(names::SESSION_PROMPT, Mode::Strict)
        .unwrap()
        .value
    else {
        panic!()
    };
    assert_eq!(p.message_id, "m-1");
    let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"state":"idle","sessionUpdate":"state_update","stopReason":"error","error":{"code":-32603,"message":"boom"},"background":[{"type":"terminal","terminalId":"t1"}]}}}"#;
    let Message::Notification(n) = Message::decode(line).unwrap() else {
        panic!()
    };
    let NotificationParams::UpdateSession(u) = n.typed_v2(Mode::Strict).unwrap().value else {
        panic!()
    };
    let SessionUpdate::StateUpdate(s) = &u.update else {
        panic!("{:?}", u.update)
    };
    assert_eq!(s.state, SessionState::Idle);
    assert_eq!(s.stop_reason, Some(IdleStopReason::Error));
    assert_eq!(s.error.as_ref().unwrap().code, -32603);
    let background = s.background.as_ref().unwrap();
    assert!(matches!(&background[0], BackgroundWork::Terminal(t) if t.terminal_id == "t1"));
}

/// Unknown members, tags and enum values, and `null`s that clear a member,
/// decode (strictly) and re-encode as sent.
#[test]
fn unknown_members_variants_and_values_are_kept() {
    let lines = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","title":null,"status":"x_future","kind":"x_kind","content":[{"type":"x_new","a":1},{"type":"diff","changes":[{"operation":"rename","path":"/a","to":"/b"}],"future":true}],"newMember":{"x":[1,2.50]}},"_meta":{"k":1}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"x_update_kind","any":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi","x":null},{"type":"x_block","y":[]}],"extra":1}}"#,
        r#"{"jsonrpc":"2.0","method":"_vendor/ping","params":{"n":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x/unknown","params":[1]}"#,
    ];
    for line in lines {
        let msg = Message::decode(line).unwrap();
        let (json, debug) = match &msg {
            Message::Request(r) => {
                let v = r.typed_v2(Mode::Strict).unwrap().value;
                let mut out = Vec::new();
                encode_request(&r.id, &v, &mut out).unwrap();
                (line_of(&out).to_owned(), format!("{v:?}"))
            }
            Message::Notification(n) => {
                let v = n.typed_v2(Mode::Strict).unwrap().value;
                let mut out = Vec::new();
                encode_notification(&v, &mut out).unwrap();
                (line_of(&out).to_owned(), format!("{v:?}"))
            }
            _ => unreachable!(),
        };
        let (a, b): (Value, Value) = (
            serde_json::from_str(&json).unwrap(),
            serde_json::from_str(line).unwrap(),
        );
        assert_eq!(a, b, "{line}");
        assert!(
            debug.contains("Unknown") || debug.contains("Ext"),
            "{debug}"
        );
    }
}

fn samples<T, S: Strategy<Value = T>>(runner: &mut TestRunner, s: S, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| s.new_tree(runner).unwrap().current())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Generated params and results (unknown variants and values too)
    /// encode to one line that decodes, strictly, to an equal value.
    #[test]
    fn generated_values_round_trip(
        req in arb_request_params(false),
        note in arb_notification_params(false),
        res in arb_response_result(false),
    ) {
        let mut out = Vec::new();
        encode_request(&RequestId::Number(1), &req, &mut out).unwrap();
        let Message::Request(r) = Message::decode(line_of(&out)).unwrap() else { panic!() };
        prop_assert_eq!(r.typed_v2(Mode::Strict).unwrap().value, req);
        let mut out = Vec::new();
        encode_notification(&note, &mut out).unwrap();
        let Message::Notification(n) = Message::decode(line_of(&out)).unwrap() else { panic!() };
        prop_assert_eq!(n.typed_v2(Mode::Strict).unwrap().value, note);
        let mut out = Vec::new();
        encode_response(&RequestId::Number(1), &res, &mut out).unwrap();
        let Message::Response(r) = Message::decode(line_of(&out)).unwrap() else { panic!() };
        let method = res.method().unwrap_or("_x/y");
        prop_assert_eq!(r.typed_v2(method, Mode::Strict).unwrap().value, res);
    }
}

/// The `Arbitrary` values (feature `arbitrary`) round-trip too, through the
/// `acp_v2` fuzz target's check, from seeded pseudo-random bytes.
#[cfg(feature = "arbitrary")]
#[test]
fn arbitrary_values_round_trip() {
    let mut state = 0x5EED_0002_u64;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let z = (state ^ (state >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for family in 0u8..3 {
        for _ in 0..600 {
            let len = 1 + (next() % 2048) as usize;
            let mut data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            data[0] = family;
            crate::checks::acp_v2::check(&data);
        }
    }
    for line in EXAMPLES.lines() {
        crate::checks::acp_v2::check(line.as_bytes());
    }
}

/// Every kind of v2 message the encoder writes, from the schema-valid
/// strategies, validates against the v2 schema (the message, and its
/// params or result against the def of its method).
#[test]
fn encoded_v2_messages_validate_against_the_v2_schema() {
    let mut runner = TestRunner::deterministic();
    let mut lines = Vec::new();
    let mut push = |method: &str, part: &str, out: &[u8]| {
        let message: Value = serde_json::from_str(line_of(out)).unwrap();
        lines.push(
            json!({"def": null, "method": method, "part": part, "message": message}).to_string(),
        );
    };
    for p in samples(&mut runner, arb_request_params(true), 600) {
        let mut out = Vec::new();
        encode_request(&RequestId::Number(3), &p, &mut out).unwrap();
        push(p.method(), "params", &out);
    }
    for p in samples(&mut runner, arb_notification_params(true), 600) {
        let mut out = Vec::new();
        encode_notification(&p, &mut out).unwrap();
        push(p.method(), "params", &out);
    }
    for r in samples(&mut runner, arb_response_result(true), 600) {
        let mut out = Vec::new();
        encode_response(&RequestId::from("r-1"), &r, &mut out).unwrap();
        push(r.method().unwrap_or(""), "result", &out);
    }
    let flags: &[&str] = if cfg!(feature = "unstable") {
        &["--v2", "--unstable"]
    } else {
        &["--v2"]
    };
    crate::schema_check::validate("acp-v2-schema-samples.ndjson", &lines, flags);
}

/// `value` without its `null` members (the oracle drops them, the crate
/// keeps them in `extra`).
fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

/// The crate's strict v2 decoding of `msg` (a response's as the result of
/// `method`) against the oracle's: both refuse, or both accept and encode
/// to equal JSON but for `null` members. Whether the oracle types it.
fn agrees_with_the_oracle(line: &str, msg: &Message<'_>, method: &str) -> bool {
    let params = |p: Option<&RawJson<'_>>| match p.map(|p| p.get()) {
        Some(text) if text != "null" => text.to_owned(),
        _ => "{}".to_owned(),
    };
    let json = |v: Result<Value, acp_codec::MessageError>| v.map_err(|e| e.to_string());
    let (ours, theirs) = match msg {
        Message::Request(r) => (
            json(
                r.typed_v2(Mode::Strict)
                    .map(|t| serde_json::to_value(&t.value).unwrap()),
            ),
            oracle::request(&r.method, &params(r.params.as_ref())),
        ),
        Message::Notification(n) => (
            json(
                n.typed_v2(Mode::Strict)
                    .map(|t| serde_json::to_value(&t.value).unwrap()),
            ),
            oracle::notification(&n.method, &params(n.params.as_ref())),
        ),
        Message::Response(r) => (
            json(
                r.typed_v2(method, Mode::Strict)
                    .map(|t| serde_json::to_value(&t.value).unwrap()),
            ),
            oracle::result(method, r.result.get()),
        ),
        Message::Error(_) => return false,
    };
    let Some(theirs) = theirs else {
        return false;
    };
    match (ours, theirs) {
        (Ok(a), Ok((b, _))) => assert_eq!(normalize(&a), normalize(&b), "{method}: {line}"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("the crate says {a:?}, the oracle {b:?} ({method}): {line}"),
    }
    true
}

/// The docs' examples (a response's result as that of every v2 request
/// method) and generated messages, unknown variants and values included.
#[test]
fn strict_decoding_agrees_with_the_oracle() {
    let mut typed = 0;
    let mut check = |line: &str| {
        let msg = Message::decode(line).unwrap();
        if oracle::names_a_member_twice(line) {
            return;
        }
        for m in METHODS.iter().filter(|m| m.kind == MethodKind::Request) {
            typed += usize::from(agrees_with_the_oracle(line, &msg, m.name));
            if !matches!(msg, Message::Response(_)) {
                break;
            }
        }
    };
    for line in EXAMPLES.lines() {
        check(line);
    }
    let mut runner = TestRunner::deterministic();
    for p in samples(&mut runner, arb_request_params(false), 300) {
        let mut out = Vec::new();
        encode_request(&RequestId::Number(3), &p, &mut out).unwrap();
        check(line_of(&out));
    }
    for p in samples(&mut runner, arb_notification_params(false), 300) {
        let mut out = Vec::new();
        encode_notification(&p, &mut out).unwrap();
        check(line_of(&out));
    }
    for r in samples(&mut runner, arb_response_result(false), 300) {
        let mut out = Vec::new();
        encode_response(&RequestId::Number(3), &r, &mut out).unwrap();
        check(line_of(&out));
    }
    assert!(typed > 1000, "{typed} decodings compared");
}
