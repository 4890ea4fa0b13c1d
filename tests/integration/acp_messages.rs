//! ACP messages through the public API: the schema's examples, bad lines,
//! forward compatibility, single-line encoding.
#![cfg(feature = "std")]

use crate::acp_support;

use acp_codec::acp::Mode;
use std::borrow::Cow;
use std::collections::BTreeMap;

use acp_codec::acp::*;
use acp_codec::ErrorCode;
use acp_support::{payload, typed};
use serde_json::Value;

const EXAMPLES: &str = include_str!("../fixtures/acp/examples.ndjson");

#[test]
fn every_example_decodes_and_reencodes_to_equal_json() {
    let mut methods = BTreeMap::new();
    let mut n = 0;
    for line in EXAMPLES.lines() {
        let msg = Message::decode(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let original: Value = serde_json::from_str(line).unwrap();
        // The envelope re-encodes exactly.
        let mut out = Vec::new();
        msg.encode(&mut out).unwrap();
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(
            serde_json::from_slice::<Value>(&out).unwrap(),
            original,
            "{line}"
        );
        // The typed form re-encodes to equal JSON.
        let t = typed(&msg, &methods);
        assert!(!t.debug.contains("Unknown"), "{line}: {}", t.debug);
        assert_eq!(t.json, payload(&original), "{line}");
        if let Message::Request(r) = &msg {
            methods.insert(r.id.to_owned_id(), r.method.to_string());
        }
        // Owned copies are equal.
        assert_eq!(msg.clone().into_owned(), msg);
        n += 1;
    }
    assert_eq!(n, 15);
}

#[test]
fn text_borrows_from_the_line_unless_escaped() {
    let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"plain"}}}}"#;
    let msg = Message::decode(line).unwrap();
    let Message::Notification(n) = &msg else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    assert!(matches!(u.session_id, Cow::Borrowed(_)));
    let SessionUpdate::AgentMessageChunk(c) = u.update else {
        panic!()
    };
    assert!(matches!(c.message_id, Some(Cow::Borrowed("m1"))));
    let ContentBlock::Text(t) = c.content else {
        panic!()
    };
    assert!(matches!(t.text, Cow::Borrowed("plain")));

    let escaped = line.replace("plain", "a\\nb");
    let msg = Message::decode(&escaped).unwrap();
    let Message::Notification(n) = &msg else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    let SessionUpdate::AgentMessageChunk(c) = u.update else {
        panic!()
    };
    let ContentBlock::Text(t) = c.content else {
        panic!()
    };
    assert_eq!(t.text, "a\nb");
}

#[test]
fn unknown_variants_keep_their_bytes() {
    let cases = [
        // unknown sessionUpdate
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"brand_new","x":[1, 2],"y":{"z":"\u00e9"}}}}"#,
        // unknown content type inside a known update
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"hologram","frames":3}}}}"#,
        // unknown tool call content and enum values
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","kind":"teleport","status":"paused","content":[{"type":"widget","w":1}]}}}"#,
        // unknown stop reason
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"out_of_coffee"}}"#,
    ];
    for line in cases {
        let msg = Message::decode(line).unwrap();
        let t = typed(
            &msg,
            &BTreeMap::from([(RequestId::Number(3), "session/prompt".to_string())]),
        );
        assert!(t.debug.contains("Unknown"), "{}", t.debug);
        // Typed re-encoding keeps the unknown parts byte for byte.
        let re = serde_json::to_string(&t.json).unwrap();
        let original: Value = serde_json::from_str(line).unwrap();
        assert_eq!(t.json, payload(&original));
        for raw in ["{\"sessionUpdate\":\"brand_new\",\"x\":[1, 2],\"y\":{\"z\":\"\\u00e9\"}}"] {
            if line.contains(raw) {
                let Message::Notification(n) = &msg else {
                    panic!()
                };
                let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value
                else {
                    panic!()
                };
                let SessionUpdate::Unknown(r) = &u.update else {
                    panic!()
                };
                assert_eq!(r.get(), raw);
                let mut out = Vec::new();
                encode_notification(&NotificationParams::SessionUpdate(u.clone()), &mut out)
                    .unwrap();
                assert!(std::str::from_utf8(&out).unwrap().contains(raw), "{re}");
            }
        }
    }
    // Unknown and extension methods.
    let msg =
        Message::decode(r#"{"jsonrpc":"2.0","id":"x","method":"_zed/ping","params":{"a":1}}"#)
            .unwrap();
    let Message::Request(r) = &msg else { panic!() };
    assert!(
        matches!(r.typed(Mode::Lenient).unwrap().value, RequestParams::Ext { ref method, .. } if method == "_zed/ping")
    );
    let msg = Message::decode(r#"{"jsonrpc":"2.0","method":"session/teleport"}"#).unwrap();
    let Message::Notification(n) = &msg else {
        panic!()
    };
    let t = n.typed(Mode::Lenient).unwrap().value;
    assert!(matches!(t, NotificationParams::Unknown { ref params, .. } if params.is_none()));
    let mut out = Vec::new();
    encode_notification(&t, &mut out).unwrap();
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"session/teleport\"}\n"
    );
}

#[test]
fn unknown_fields_are_ignored_meta_kept() {
    let line = r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","futureField":{"a":1},"_meta":{"k":[1]}}}"#;
    let Message::Response(r) = Message::decode(line).unwrap() else {
        panic!()
    };
    let ResponseResult::NewSession(s) = r.typed("session/new", Mode::Lenient).unwrap().value else {
        panic!()
    };
    assert_eq!(s.meta.unwrap().get(), "{\"k\":[1]}");
}

#[test]
fn bad_lines_map_to_codes_and_the_next_line_decodes() {
    let lines = [
        ("Data collection is disabled.", ErrorCode::PARSE_ERROR),
        (
            "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]",
            ErrorCode::INVALID_REQUEST,
        ),
        ("{\"jsonrpc\":\"2.0\",\"id\":1}", ErrorCode::INVALID_REQUEST),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"a\"}",
            ErrorCode::INVALID_REQUEST,
        ),
    ];
    for (line, code) in lines {
        let e = Message::decode(line).unwrap_err();
        assert_eq!(e.code(), code, "{line}: {e}");
        assert_eq!(e.to_string(), e.to_string().to_lowercase());
        assert!(Message::decode("{\"jsonrpc\":\"2.0\",\"method\":\"ok\"}").is_ok());
    }
    let e = Message::decode("[1,2,3]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "json array of 3 elements: batches are not part of acp v1"
    );
    // Params of a known method that do not fit: -32602.
    let Message::Request(r) = Message::decode(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}"#,
    )
    .unwrap() else {
        panic!()
    };
    let e = r.typed(Mode::Lenient).unwrap_err();
    assert_eq!(e.code(), ErrorCode::INVALID_PARAMS);
    assert!(
        e.to_string()
            .starts_with("invalid params for session/prompt: missing field `prompt`"),
        "{e}"
    );
}

#[test]
fn string_ids_display_quoted_and_round_trip() {
    let msg = Message::decode(r#"{"jsonrpc":"2.0","id":"7","result":null}"#).unwrap();
    assert_eq!(msg.id().unwrap().to_string(), "\"7\"");
    let mut out = Vec::new();
    msg.encode(&mut out).unwrap();
    assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":null}\n");
}

#[test]
fn pretty_raw_json_is_encoded_on_one_line() {
    let pretty = "{\n  \"a\": [\n    1,\n    \"x y\"\n  ]\n}";
    let call = ToolCallUpdate::new("t")
        .with_status(ToolCallStatus::Completed)
        .with_raw_input(RawJson::from_text(pretty).unwrap());
    let params = NotificationParams::SessionUpdate(SessionNotification::new(
        "s",
        SessionUpdate::ToolCallUpdate(call),
    ));
    let mut out = Vec::new();
    encode_notification(&params, &mut out).unwrap();
    let text = std::str::from_utf8(&out).unwrap();
    assert_eq!(text.matches('\n').count(), 1);
    assert!(text.contains("\"rawInput\":{\"a\":[1,\"x y\"]}"), "{text}");
    // A decoded envelope carrying pretty raw JSON re-encodes on one line too.
    let msg = Message::Notification(Notification {
        method: "x".into(),
        params: Some(RawJson::from_text(pretty).unwrap()),
    });
    let mut out = Vec::new();
    msg.encode(&mut out).unwrap();
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":[1,\"x y\"]}}\n"
    );
}

#[test]
fn extension_and_optional_shapes() {
    // McpServer without type is stdio; with type http; AuthMethod without type is agent.
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"name":"a","command":"c","args":[],"env":[]},{"type":"http","name":"h","url":"u","headers":[]},{"type":"carrier-pigeon","name":"p"}]}}"#;
    let Message::Request(r) = Message::decode(line).unwrap() else {
        panic!()
    };
    let RequestParams::NewSession(p) = r.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    assert!(matches!(p.mcp_servers[0], McpServer::Stdio(_)));
    assert!(matches!(p.mcp_servers[1], McpServer::Http(_)));
    assert!(matches!(p.mcp_servers[2], McpServer::Unknown(_)));
    // set_config_option with a boolean and with an id.
    for (v, expect) in [
        ("true", ConfigValue::Bool(true)),
        ("\"fast\"", ConfigValue::Id("fast".into())),
    ] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"session/set_config_option","params":{{"sessionId":"s","configId":"c","value":{v}}}}}"#
        );
        let Message::Request(r) = Message::decode(&line).unwrap() else {
            panic!()
        };
        let RequestParams::SetSessionConfigOption(p) = r.typed(Mode::Lenient).unwrap().value else {
            panic!()
        };
        assert_eq!(p.value, expect);
    }
    // session/set_model (Gemini CLI).
    let Message::Request(r) = Message::decode(r#"{"jsonrpc":"2.0","id":4,"method":"session/set_model","params":{"sessionId":"s","modelId":"gemini-2.5-pro"}}"#).unwrap() else { panic!() };
    let RequestParams::SetSessionModel(p) = r.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    assert_eq!(p.model_id, "gemini-2.5-pro");
    // logout with no params at all.
    let Message::Request(r) =
        Message::decode(r#"{"jsonrpc":"2.0","id":4,"method":"logout"}"#).unwrap()
    else {
        panic!()
    };
    assert!(matches!(
        r.typed(Mode::Lenient).unwrap().value,
        RequestParams::Logout(_)
    ));
}

#[test]
fn tags_need_not_come_first() {
    // Nested content with its tag last, and an update with its tag last.
    let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"hé","type":"text"},"sessionUpdate":"agent_thought_chunk"},"sessionId":"s"}}"#;
    let Message::Notification(n) = Message::decode(line).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    let SessionUpdate::AgentThoughtChunk(c) = &u.update else {
        panic!("{:?}", u.update)
    };
    assert!(matches!(&c.content, ContentBlock::Text(t) if t.text == "hé"));
    // An unknown nested variant with its tag last is kept, compacted.
    let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"frames":[1, 2],"type":"hologram"}}}}"#;
    let Message::Notification(n) = Message::decode(line).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    let SessionUpdate::AgentMessageChunk(c) = &u.update else {
        panic!()
    };
    let ContentBlock::Unknown(raw) = &c.content else {
        panic!()
    };
    assert_eq!(raw.get(), r#"{"frames":[1, 2],"type":"hologram"}"#);
}
