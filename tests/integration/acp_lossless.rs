//! Typed ACP messages that survive real traffic, through the public API:
//! - lossless: decode then re-encode gives JSON equal, as a value, to what
//!   came in (unknown members at any depth, `null`s, numbers as sent), over
//!   every recorded line under `tests/fixtures/` and over generated messages
//!   of every method with unknown members and `null`s injected at random
//!   depths;
//! - lenient by default, strict on request: the salvage rules, each
//!   reported with its path;
//! - the `acp_lossless` fuzz check over its committed seeds.
#![cfg(feature = "std")]

use acp_codec::acp::Mode;
use std::collections::BTreeMap;
use std::path::Path;

use acp_codec::acp::{
    decode_line, ContentBlock, Incoming, Message, NotificationParams, RawJson, RequestId,
    ResponseResult, SalvageKind, SessionUpdate, ToolCallContent,
};
use serde_json::Value;

use crate::acp_support;
use crate::checks::acp_lossless;

use acp_support::recorded_lines;

/// The params or result of `msg` re-encoded from its typed form, lenient
/// decoding, with the salvages' kinds; `None` for an error response.
fn retyped(
    msg: &Message<'_>,
    method_of: &BTreeMap<String, String>,
) -> Option<(Value, Vec<SalvageKind>)> {
    let kinds = |s: &[acp_codec::acp::Salvage<'_>]| s.iter().map(|s| s.kind).collect();
    Some(match msg {
        Message::Request(r) => {
            let t = r
                .typed(Mode::Lenient)
                .unwrap_or_else(|e| panic!("{}: {e}", r.method));
            (serde_json::to_value(&t.value).unwrap(), kinds(&t.salvaged))
        }
        Message::Notification(n) => {
            let t = n
                .typed(Mode::Lenient)
                .unwrap_or_else(|e| panic!("{}: {e}", n.method));
            (serde_json::to_value(&t.value).unwrap(), kinds(&t.salvaged))
        }
        Message::Response(r) => {
            let method = method_of.get(&r.id.to_string()).map_or("", String::as_str);
            let t = r
                .typed(method, Mode::Lenient)
                .unwrap_or_else(|e| panic!("result of {method}: {e}"));
            (serde_json::to_value(&t.value).unwrap(), kinds(&t.salvaged))
        }
        _ => return None,
    })
}

#[test]
fn every_recorded_line_re_encodes_to_equal_json() {
    let mut checked = 0;
    for (file, lines) in recorded_lines() {
        let mut method_of = BTreeMap::new();
        for (from, line) in &lines {
            let msg = Message::decode(line).unwrap_or_else(|e| panic!("{file}: {e}: {line}"));
            // A response answers the other side's request of that id.
            let key = |id: &RequestId<'_>, side: &str| format!("{side}{id}");
            let other = match from.as_str() {
                "agent" => "client",
                "client" => "agent",
                _ => "",
            };
            if let Message::Request(r) = &msg {
                method_of.insert(key(&r.id, from), r.method.to_string());
            }
            let method_of = match &msg {
                Message::Response(r) => method_of
                    .get(&key(&r.id, other))
                    .map(|m| BTreeMap::from([(r.id.to_string(), m.clone())]))
                    .unwrap_or_default(),
                _ => BTreeMap::new(),
            };
            let Some((again, salvaged)) = retyped(&msg, &method_of) else {
                continue;
            };
            let sent: Value = serde_json::from_str(line).unwrap();
            let payload = ["params", "result"]
                .iter()
                .find_map(|k| sent.get(*k).cloned())
                .unwrap_or(Value::Object(Default::default()));
            assert!(
                !salvaged.contains(&SalvageKind::ItemSkipped),
                "{file}: an item skipped: {line}"
            );
            assert_eq!(again, payload, "{file}: {line}");
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} lines checked");
}

/// The line of a `session/update` with `update` as its update.
fn update_line(update: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
    )
}

/// The params re-encoded from the lenient decoding of `line`.
fn re_encoded(line: &str) -> Value {
    let Incoming::Notification(t) = decode_line(line, Mode::Lenient).unwrap() else {
        panic!("not a notification")
    };
    serde_json::to_value(&t.value).unwrap()
}

fn params_of(line: &str) -> Value {
    serde_json::from_str::<Value>(line).unwrap()["params"].clone()
}

#[test]
fn unknown_members_nulls_and_numbers_come_back() {
    let lines = [
        // An unknown member on a tool call, `null` for an optional one, and
        // a member this crate does not know, deep inside a diff.
        update_line(
            r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"Edit","future":{"a":[1,2.50,-0]},"kind":null,"content":[{"type":"diff","path":"/a","oldText":null,"newText":"x","hunks":[{"at":1}]}]}"#,
        ),
        // Numbers as sent, in an unknown member and a typed one.
        update_line(
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","annotations":{"priority":1,"audience":null,"x":1e3}},"big":12345678901234567890123}"#,
        ),
        update_line(
            r#"{"sessionUpdate":"usage_update","used":10,"size":1000,"cost":{"amount":1.0,"currency":"USD","tax":null}}"#,
        ),
    ];
    for line in lines {
        assert_eq!(re_encoded(&line), params_of(&line), "{line}");
    }
}

#[test]
fn a_bad_optional_member_is_dropped_and_kept_raw() {
    // `annotations.priority` must be a number.
    let line = update_line(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","annotations":{"priority":"high"}}}"#,
    );
    let Incoming::Notification(t) = decode_line(&line, Mode::Lenient).unwrap() else {
        panic!()
    };
    assert_eq!(t.salvaged.len(), 1);
    let s = &t.salvaged[0];
    assert_eq!(s.path, "/update/content/annotations/priority");
    assert_eq!(s.kind, SalvageKind::MemberDropped);
    assert_eq!(s.raw.get(), "\"high\"");
    assert!(
        s.reason.starts_with("invalid type: string \"high\""),
        "{}",
        s.reason
    );
    let NotificationParams::SessionUpdate(n) = &t.value else {
        panic!()
    };
    let SessionUpdate::AgentMessageChunk(c) = &n.update else {
        panic!()
    };
    let ContentBlock::Text(text) = &c.content else {
        panic!()
    };
    let annotations = text.annotations.as_ref().unwrap();
    assert_eq!(annotations.priority, None);
    assert_eq!(
        annotations.extra.get("priority").map(RawJson::get),
        Some("\"high\"")
    );
    // Still re-encoded as sent.
    assert_eq!(re_encoded(&line), params_of(&line));
    // Strictly, the line fails as before.
    let e = decode_line(&line, Mode::Strict).unwrap_err();
    assert_eq!(e.code().0, -32602);
}

#[test]
fn a_list_item_that_does_not_fit_is_skipped() {
    let line = update_line(
        r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"Read","locations":[{"line":3},{"path":"/b"}]}"#,
    );
    let Incoming::Notification(t) = decode_line(&line, Mode::Lenient).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(n) = &t.value else {
        panic!()
    };
    let SessionUpdate::ToolCall(call) = &n.update else {
        panic!()
    };
    let locations = call.locations.as_ref().unwrap();
    assert_eq!(locations.len(), 1);
    assert_eq!(locations[0].path, "/b");
    assert_eq!(t.salvaged.len(), 1);
    assert_eq!(t.salvaged[0].path, "/update/locations/0");
    assert_eq!(t.salvaged[0].kind, SalvageKind::ItemSkipped);
    assert_eq!(t.salvaged[0].reason, "missing field `path`");
    assert_eq!(t.salvaged[0].raw.get(), r#"{"line":3}"#);
    assert!(decode_line(&line, Mode::Strict).is_err());
}

#[test]
fn a_known_variant_that_does_not_fit_is_kept_unknown() {
    // Claude's ACP adapter sends `used: null`.
    let line = update_line(r#"{"sessionUpdate":"usage_update","used":null,"size":1000}"#);
    let Incoming::Notification(t) = decode_line(&line, Mode::Lenient).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(n) = &t.value else {
        panic!()
    };
    let SessionUpdate::Unknown(raw) = &n.update else {
        panic!("{:?}", n.update)
    };
    assert_eq!(
        raw.get(),
        r#"{"sessionUpdate":"usage_update","used":null,"size":1000}"#
    );
    assert_eq!(t.salvaged[0].path, "/update");
    assert_eq!(t.salvaged[0].kind, SalvageKind::UnknownVariant);
    assert_eq!(re_encoded(&line), params_of(&line));
    let strict = decode_line(&line, Mode::Strict).unwrap_err().to_string();
    assert!(
        strict.contains("invalid type: null, expected u64"),
        "{strict}"
    );

    // A content block in a list: the block is kept unknown, not skipped.
    let line = update_line(
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"content","content":{"type":"image","data":5,"mimeType":"image/png"}}]}"#,
    );
    let Incoming::Notification(t) = decode_line(&line, Mode::Lenient).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(n) = &t.value else {
        panic!()
    };
    let SessionUpdate::ToolCallUpdate(u) = &n.update else {
        panic!()
    };
    let [ToolCallContent::Content(c)] = u.content.as_deref().unwrap() else {
        panic!()
    };
    assert!(matches!(c.content, ContentBlock::Unknown(_)));
    assert_eq!(t.salvaged[0].path, "/update/content/0/content");
    assert_eq!(re_encoded(&line), params_of(&line));
}

#[test]
fn missing_required_members_still_fail() {
    for (update, missing) in [
        (r#"{"sessionUpdate":"tool_call","title":"x"}"#, "toolCallId"),
        (r#"{"sessionUpdate":"usage_update","size":1000}"#, "used"),
        (
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}"#,
            "text",
        ),
    ] {
        // `decode_line` hands the notification back as sent (the line is
        // JSON-RPC); typing its params gives the error.
        let line = update_line(update);
        let Ok(Incoming::Message(Message::Notification(n))) = decode_line(&line, Mode::Lenient)
        else {
            panic!("not the message: {line}")
        };
        let e = n.typed(Mode::Lenient).unwrap_err();
        assert_eq!(e.code().0, -32602);
        assert!(
            e.to_string()
                .contains(&format!("missing field `{missing}`")),
            "{e}"
        );
    }
    let no_session = r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan","entries":[]}}}"#;
    let e = decode_line(no_session, Mode::Strict).unwrap_err();
    assert!(e.to_string().contains("missing field `sessionId`"), "{e}");
    // A required member of the wrong type at the top fails too.
    let bad = r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":7}}"#;
    let Message::Request(r) = Message::decode(bad).unwrap() else {
        panic!()
    };
    assert_eq!(r.typed(Mode::Lenient).unwrap_err().code().0, -32602);
    assert_eq!(
        r.typed(Mode::Strict).map(|t| t.value).unwrap_err().code().0,
        -32602
    );
}

#[test]
fn a_result_is_salvaged_too() {
    let line = r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s","modes":{"currentModeId":5,"availableModes":[]},"future":true}}"#;
    let Message::Response(r) = Message::decode(line).unwrap() else {
        panic!()
    };
    let t = r.typed("session/new", Mode::Lenient).unwrap();
    let ResponseResult::NewSession(new) = &t.value else {
        panic!()
    };
    assert_eq!(new.session_id, "s");
    assert!(new.modes.is_none());
    assert_eq!(t.salvaged[0].path, "/modes");
    assert_eq!(
        serde_json::to_value(&t.value).unwrap(),
        serde_json::from_str::<Value>(line).unwrap()["result"]
    );
    assert!(r
        .typed("session/new", Mode::Strict)
        .map(|t| t.value)
        .is_err());
}

#[test]
fn request_ids_and_raw_nulls_stay() {
    let line = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":null}}"#;
    let Message::Notification(n) = Message::decode(line).unwrap() else {
        panic!()
    };
    let t = n.typed(Mode::Lenient).unwrap();
    let NotificationParams::CancelRequest(c) = &t.value else {
        panic!()
    };
    assert_eq!(c.request_id, RequestId::Null);
    assert_eq!(serde_json::to_value(&t.value).unwrap(), params_of(line));
}

#[test]
fn fuzz_seeds_hold_the_invariant() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/acp_lossless");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        eprintln!("{}", path.display());
        acp_lossless::check(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 10, "only {n} seeds");
}

#[cfg(feature = "arbitrary")]
mod generated {
    //! Generated messages of every method (the `arbitrary` feature), with
    //! unknown members and `null`s injected at random depths.
    use super::*;
    use acp_codec::acp::{RequestParams, ResponseResult};
    use arbitrary::{Arbitrary, Unstructured};
    use proptest::prelude::*;

    /// Every member name and tag of the spec (the generated test oracle's
    /// list): injected as `null` where absent (an optional member sent as
    /// `null`, or an unknown one).
    use crate::checks::acp_oracle::oracle::MEMBERS as NAMES;

    /// Values for unknown members: numbers as peers write them, nesting.
    const VALUES: &[&str] = &[
        "null",
        "1e3",
        "-0",
        "2.50",
        "12345678901234567890123",
        "\"x\\u0041\"",
        "[1,{\"k\":null}]",
        "{\"deep\":{\"x\":[true,{}]}}",
    ];

    /// Adds members to every object of `v` as `dice` says.
    fn inject(v: &mut Value, dice: &mut impl Iterator<Item = u8>, depth: usize) {
        match v {
            Value::Object(map) => {
                let roll = dice.next().unwrap_or(0);
                if roll % 3 == 0 {
                    let value = VALUES[usize::from(roll / 3) % VALUES.len()];
                    map.insert(
                        format!("future{depth}"),
                        serde_json::from_str(value).unwrap(),
                    );
                }
                let name = NAMES[usize::from(dice.next().unwrap_or(0)) % NAMES.len()];
                if roll % 2 == 0 && !map.contains_key(name) {
                    map.insert(name.to_owned(), Value::Null);
                }
                for (_, child) in map.iter_mut() {
                    inject(child, dice, depth + 1);
                }
            }
            Value::Array(items) => {
                for item in items {
                    inject(item, dice, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn request<'a>(method: &'a str, raw: &RawJson<'a>) -> acp_codec::acp::Request<'a> {
        acp_codec::acp::Request {
            id: acp_codec::acp::RequestId::Number(1),
            method: method.into(),
            params: Some(raw.clone()),
        }
    }

    fn notification<'a>(method: &'a str, raw: &RawJson<'a>) -> acp_codec::acp::Notification<'a> {
        acp_codec::acp::Notification {
            method: method.into(),
            params: Some(raw.clone()),
        }
    }

    fn response<'a>(raw: &RawJson<'a>) -> acp_codec::acp::Response<'a> {
        acp_codec::acp::Response {
            id: acp_codec::acp::RequestId::Number(1),
            result: raw.clone(),
        }
    }

    /// Decodes `$value` (params or result) strictly and leniently: both
    /// give the same value, nothing salvaged, and it re-encodes to
    /// `$value`.
    macro_rules! holds {
        ($value:expr, |$raw:ident| $make:expr, |$m:ident, $mode:ident| $typed:expr) => {{
            let text = $value.to_string();
            let $raw = RawJson::from_text(&text).unwrap();
            let msg = $make;
            let typed = {
                let ($m, $mode) = (&msg, Mode::Strict);
                $typed
            }
            .map(|t| t.value)
            .map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
            prop_assert_eq!(
                serde_json::to_value(&typed).unwrap(),
                $value.clone(),
                "{}",
                text
            );
            let again = {
                let ($m, $mode) = (&msg, Mode::Lenient);
                $typed
            }
            .unwrap();
            prop_assert!(again.is_clean());
            prop_assert_eq!(again.value, typed);
        }};
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn generated_requests_with_injections_round_trip(
            seed in proptest::collection::vec(any::<u8>(), 64..2048),
            dice in proptest::collection::vec(any::<u8>(), 256),
        ) {
            let mut u = Unstructured::new(&seed);
            let Ok(params) = RequestParams::arbitrary(&mut u) else { return Ok(()) };
            let method = params.method().to_owned();
            let mut value = serde_json::to_value(&params).unwrap();
            if !value.is_object() { return Ok(()) }
            inject(&mut value, &mut dice.into_iter().cycle(), 0);
            holds!(
                value,
                |raw| request(&method, &raw),
                |m, mode| m.typed(mode)
            );
        }

        #[test]
        fn generated_notifications_with_injections_round_trip(
            seed in proptest::collection::vec(any::<u8>(), 64..2048),
            dice in proptest::collection::vec(any::<u8>(), 256),
        ) {
            let mut u = Unstructured::new(&seed);
            let Ok(params) = NotificationParams::arbitrary(&mut u) else { return Ok(()) };
            let method = params.method().to_owned();
            let mut value = serde_json::to_value(&params).unwrap();
            if !value.is_object() { return Ok(()) }
            inject(&mut value, &mut dice.into_iter().cycle(), 0);
            holds!(
                value,
                |raw| notification(&method, &raw),
                |m, mode| m.typed(mode)
            );
        }

        #[test]
        fn generated_results_with_injections_round_trip(
            seed in proptest::collection::vec(any::<u8>(), 64..2048),
            dice in proptest::collection::vec(any::<u8>(), 256),
        ) {
            let mut u = Unstructured::new(&seed);
            let Ok(result) = ResponseResult::arbitrary(&mut u) else { return Ok(()) };
            let Some(method) = result.method() else { return Ok(()) };
            let mut value = serde_json::to_value(&result).unwrap();
            if !value.is_object() { return Ok(()) }
            inject(&mut value, &mut dice.into_iter().cycle(), 0);
            holds!(
                value,
                |raw| response(&raw),
                |m, mode| m.typed(method, mode)
            );
        }
    }
}
