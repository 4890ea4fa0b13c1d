//! Lines of the unstable ACP v1 schema (what `agent-client-protocol-schema`
//! 1.20.0 derives with its `unstable` feature). With feature `unstable`
//! they decode typed, leniently and strictly without a salvage, and
//! re-encode to equal JSON; without it they decode too, the additions kept
//! as `Unknown` variants and `extra` members, and re-encode just the same.
//! And lines of what that version made stable (plans, subagents, session
//! messages, system prompts and their capabilities): typed with or without
//! the feature.
#![cfg(feature = "alloc")]

use acp_codec::acp::Mode;
use acp_codec::acp::*;
use serde_json::Value;

/// What the stable schema 1.20.0 has and an older one had only as
/// unstable: `(line, method of the request a response answers)`.
const STABLE: &[(&str, &str)] = &[
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","title":"child","description":"looks around","cwd":"/p","additionalDirectories":["/q"],"state":{"state":"idle","stopReason":"end_turn"},"capabilities":{"cancel":{}}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","state":{"state":"running"}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p1","content":"- a","path":"/p/PLAN.md"}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p2","entries":[{"content":"a","priority":"high","status":"pending"}]}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan_removed","planId":"p2"}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"session_message","messageId":"m0","senderSessionId":"c1","content":[{"type":"text","text":"done"}]}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"session_message_chunk","messageId":"m1","content":{"type":"text","text":"hi"}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/p","mcpServers":[],"systemPrompt":{"mode":"override","content":[{"type":"text","text":"You are terse."}]}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"plan":{},"subagents":{}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"systemPrompt":{"mode":{"override":{}}}}}}}"#,
        "initialize",
    ),
];

/// `(line, method of the request a response answers)`.
const LINES: &[(&str, &str)] = &[
    (
        r#"{"jsonrpc":"2.0","id":1,"method":"session/fork","params":{"sessionId":"s1","cwd":"/p","mcpServers":[{"type":"acp","name":"tools","serverId":"m1"}],"systemPrompt":{"mode":"append","content":[{"type":"text","text":"be brief"}]}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s2","modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"}]}}}"#,
        "session/fork",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","title":"child","state":{"state":"idle","stopReason":"end_turn","usage":{"totalTokens":10,"inputTokens":6,"outputTokens":4}},"capabilities":{"cancel":{}}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"totalTokens":3,"inputTokens":2,"outputTokens":1,"cachedReadTokens":0}}}"#,
        "session/prompt",
    ),
    (
        r#"{"jsonrpc":"2.0","id":4,"method":"session/list","params":{"archived":"include"}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":5,"result":{"state":"unknown","accounts":[{"label":"me","active":true}]}}"#,
        "auth/status",
    ),
    (
        r#"{"jsonrpc":"2.0","id":6,"method":"mcp/message","params":{"serverId":"m1","requestId":"r1","method":"tools/list","params":null}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":6,"result":{"result":null}}"#,
        "mcp/message",
    ),
    (
        r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1,"agentCapabilities":{"providers":{},"mcpCapabilities":{"acp":true},"sessionCapabilities":{"fork":{},"title":{},"systemPrompt":{"mode":{"override":{}}}},"auth":{"status":{}}}}}"#,
        "initialize",
    ),
    (
        r#"{"jsonrpc":"2.0","id":8,"method":"session/options","params":{"cwd":"/p","additionalDirectories":["/q"],"sessionId":"s1"}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":8,"result":{"modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"}]},"configOptions":[{"type":"select","id":"speed","name":"Speed","category":"speed","currentValue":"fast","options":[{"value":"fast","name":"Fast"}]}]}}"#,
        "session/options",
    ),
    (
        r#"{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"/p","mcpServers":[],"configOptions":[{"configId":"yolo","type":"boolean","value":true},{"configId":"model","value":"fast"}]}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"cursor_update","cursorId":"k1","capabilities":{"fork":{}},"anchor":{"type":"tool_call","toolCallId":"t1","position":"after"}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"prompt_suggestions_update","suggestions":[{"prompt":[{"type":"text","text":"run the tests"}]}]}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"session":{"promptSuggestions":{"image":{}},"cursors":{}}}}}"#,
        "",
    ),
    // MCP over ACP: `mcp/connect` and `mcp/disconnect` as the RFD writes
    // them, `mcp/message` as the schema does plus the RFD's
    // `connectionId`, both ways.
    (
        r#"{"jsonrpc":"2.0","id":11,"method":"mcp/connect","params":{"acpId":"m1"}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":11,"result":{"connectionId":"c1"}}"#,
        "mcp/connect",
    ),
    (
        r#"{"jsonrpc":"2.0","id":12,"method":"mcp/message","params":{"serverId":"m1","requestId":"r2","connectionId":"c1","method":"tools/call","params":{"name":"read","arguments":{"path":"a\u00e9.txt","n":1.50e3}}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":12,"result":{"error":{"code":-32602,"message":"no such tool","data":null}}}"#,
        "mcp/message",
    ),
    (
        r#"{"jsonrpc":"2.0","method":"mcp/message","params":{"serverId":"m1","requestId":"r2","connectionId":"c1","method":"notifications/progress","params":{"progress":1}}}"#,
        "",
    ),
    (
        r#"{"jsonrpc":"2.0","id":13,"method":"mcp/disconnect","params":{"connectionId":"c1"}}"#,
        "",
    ),
    (r#"{"jsonrpc":"2.0","id":13,"result":{}}"#, "mcp/disconnect"),
];

/// Decodes the line's params or result leniently and strictly, and gives
/// the lenient one's JSON, whether it was clean, and its Debug text.
fn typed(line: &str, method: &str) -> (Value, bool, String) {
    let msg = Message::decode(line).unwrap();
    match &msg {
        Message::Request(r) => {
            let t = r.typed(Mode::Lenient).unwrap();
            let strict = r.typed(Mode::Strict).map(|t| t.value);
            assert!(
                strict.is_ok() || !cfg!(feature = "unstable"),
                "{line}: {strict:?}"
            );
            (
                serde_json::to_value(&t.value).unwrap(),
                t.is_clean() && strict.is_ok(),
                format!("{:?}", t.value),
            )
        }
        Message::Notification(n) => {
            let t = n.typed(Mode::Lenient).unwrap();
            let strict = n.typed(Mode::Strict).map(|t| t.value);
            assert!(
                strict.is_ok() || !cfg!(feature = "unstable"),
                "{line}: {strict:?}"
            );
            (
                serde_json::to_value(&t.value).unwrap(),
                t.is_clean() && strict.is_ok(),
                format!("{:?}", t.value),
            )
        }
        Message::Response(r) => {
            let t = r.typed(method, Mode::Lenient).unwrap();
            let strict = r.typed(method, Mode::Strict).map(|t| t.value);
            assert!(
                strict.is_ok() || !cfg!(feature = "unstable"),
                "{line}: {strict:?}"
            );
            (
                serde_json::to_value(&t.value).unwrap(),
                t.is_clean() && strict.is_ok(),
                format!("{:?}", t.value),
            )
        }
        Message::Error(_) => unreachable!(),
    }
}

fn payload(line: &str) -> Value {
    let v: Value = serde_json::from_str(line).unwrap();
    v.get("params")
        .or_else(|| v.get("result"))
        .cloned()
        .unwrap()
}

#[test]
fn every_line_re_encodes_to_equal_json() {
    for (line, method) in LINES.iter().chain(STABLE) {
        let (json, _, _) = typed(line, method);
        assert_eq!(json, payload(line), "{line}");
    }
}

/// Clean, strict, nothing `Unknown`, no `Other` result, no `extra`.
fn assert_typed_cleanly(line: &str, method: &str) {
    let (_, clean, debug) = typed(line, method);
    assert!(clean, "{line}");
    assert!(
        !debug.contains("Unknown(") && !debug.contains("Unknown {"),
        "{line}: {debug}"
    );
    assert!(!debug.contains("Other("), "{line}: {debug}");
    assert!(!debug.contains("extra: {\""), "{line}: {debug}");
}

#[test]
fn what_the_stable_schema_has_is_typed_with_or_without_the_feature() {
    for (line, method) in STABLE {
        assert_typed_cleanly(line, method);
    }
    let Message::Notification(n) = Message::decode(STABLE[2].0).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Strict).map(|t| t.value).unwrap()
    else {
        panic!()
    };
    let SessionUpdate::PlanUpdate(p) = u.update else {
        panic!()
    };
    let PlanUpdateContent::Markdown(m) = p.plan else {
        panic!()
    };
    assert_eq!(m.path.as_deref(), Some("/p/PLAN.md"));
    let Message::Request(r) = Message::decode(STABLE[8].0).unwrap() else {
        panic!()
    };
    let RequestParams::Initialize(i) = r.typed(Mode::Strict).map(|t| t.value).unwrap() else {
        panic!()
    };
    let caps = i.client_capabilities.unwrap();
    assert!(caps.plan.is_some() && caps.subagents.is_some());
}

#[cfg(feature = "unstable")]
#[test]
fn with_the_feature_every_line_is_typed_cleanly() {
    for (line, method) in LINES {
        assert_typed_cleanly(line, method);
    }
}

#[cfg(feature = "unstable")]
#[test]
fn typed_values() {
    let Message::Request(r) = Message::decode(LINES[0].0).unwrap() else {
        panic!()
    };
    let RequestParams::ForkSession(f) = r.typed(Mode::Strict).map(|t| t.value).unwrap() else {
        panic!()
    };
    assert_eq!(f.session_id, "s1");
    assert!(matches!(f.mcp_servers.as_deref(), Some([McpServer::Acp(a)]) if a.server_id == "m1"));
    let sp = f.system_prompt.unwrap();
    assert_eq!(sp.mode, SystemPromptMode::Append);

    let Message::Notification(n) = Message::decode(LINES[2].0).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Strict).map(|t| t.value).unwrap()
    else {
        panic!()
    };
    let SessionUpdate::SubagentUpdate(s) = u.update else {
        panic!()
    };
    let Some(StateUpdate::Idle(idle)) = s.state else {
        panic!()
    };
    assert_eq!(idle.stop_reason, Some(IdleStopReason::EndTurn));
    assert_eq!(idle.usage.unwrap().total_tokens, 10);

    let Message::Response(r) = Message::decode(LINES[3].0).unwrap() else {
        panic!()
    };
    let ResponseResult::Prompt(p) = r
        .typed("session/prompt", Mode::Strict)
        .map(|t| t.value)
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(p.usage.unwrap().cached_read_tokens, Some(0));

    let Message::Response(r) = Message::decode(LINES[5].0).unwrap() else {
        panic!()
    };
    let ResponseResult::AuthStatus(a) = r
        .typed("auth/status", Mode::Strict)
        .map(|t| t.value)
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(a.state, AuthState::UnknownState);

    // `"result": null` is an outcome, kept apart from an absent result.
    let Message::Response(r) = Message::decode(LINES[7].0).unwrap() else {
        panic!()
    };
    let ResponseResult::McpMessage(m) = r
        .typed("mcp/message", Mode::Strict)
        .map(|t| t.value)
        .unwrap()
    else {
        panic!()
    };
    assert!(m.result.unwrap().is_null());
    assert!(m.error.is_none());

    let Message::Request(r) = Message::decode(LINES[9].0).unwrap() else {
        panic!()
    };
    let RequestParams::SessionOptions(o) = r.typed(Mode::Strict).map(|t| t.value).unwrap() else {
        panic!()
    };
    assert_eq!((&*o.cwd, o.session_id.as_deref()), ("/p", Some("s1")));

    let Message::Response(r) = Message::decode(LINES[10].0).unwrap() else {
        panic!()
    };
    let ResponseResult::SessionOptions(o) = r
        .typed("session/options", Mode::Strict)
        .map(|t| t.value)
        .unwrap()
    else {
        panic!()
    };
    let Some([SessionConfigOption::Select(speed)]) = o.config_options.as_deref() else {
        panic!()
    };
    assert_eq!(speed.category, Some(SessionConfigOptionCategory::Speed));

    let Message::Request(r) = Message::decode(LINES[11].0).unwrap() else {
        panic!()
    };
    let RequestParams::NewSession(n) = r.typed(Mode::Strict).map(|t| t.value).unwrap() else {
        panic!()
    };
    let Some([yolo, model]) = n.config_options.as_deref() else {
        panic!()
    };
    assert_eq!(yolo.value, ConfigValue::Bool(true));
    assert_eq!(model.value, ConfigValue::Id("fast".into()));

    let Message::Notification(n) = Message::decode(LINES[12].0).unwrap() else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Strict).map(|t| t.value).unwrap()
    else {
        panic!()
    };
    let SessionUpdate::CursorUpdate(c) = u.update else {
        panic!()
    };
    let Some(CursorAnchor::ToolCall(at)) = c.anchor else {
        panic!()
    };
    assert_eq!(
        (&*at.tool_call_id, at.position),
        ("t1", CursorAnchorPosition::After)
    );

    // Built with the constructors, encoded, decoded back.
    let params = RequestParams::SetSessionTitle(SetSessionTitleRequest::new("s1", "Title"));
    let mut out = Vec::new();
    encode_request(&RequestId::Number(9), &params, &mut out).unwrap();
    let line = std::str::from_utf8(&out).unwrap().trim_end();
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":9,"method":"session/set_title","params":{"sessionId":"s1","title":"Title"}}"#
    );
    let Message::Request(r) = Message::decode(line).unwrap() else {
        panic!()
    };
    assert_eq!(r.typed(Mode::Strict).map(|t| t.value).unwrap(), params);
}

/// The names of the `extra` members of `debug` (a value's Debug text).
#[cfg(not(feature = "unstable"))]
fn extra_names(debug: &str) -> Vec<String> {
    let re = regex::Regex::new(r#"extra: \{"([^"]+)""#).unwrap();
    re.captures_iter(debug).map(|c| c[1].to_owned()).collect()
}

#[cfg(not(feature = "unstable"))]
#[test]
fn without_the_feature_the_additions_are_kept_as_unknown_and_extra() {
    // New methods: unknown methods (requests, notifications) or `Other`
    // results; new sessionUpdates and tags: `Unknown`; new members: `extra`;
    // new enum values (the `speed` category): `Unknown`.
    for (i, method) in [(0, ""), (9, "")] {
        let (_, _, debug) = typed(LINES[i].0, method);
        assert!(debug.starts_with("Unknown {"), "{debug}");
    }
    for (i, method) in [(1, "session/fork"), (10, "session/options")] {
        let (_, _, debug) = typed(LINES[i].0, method);
        assert!(debug.starts_with("Other("), "{debug}");
    }
    for i in [12, 13] {
        let Message::Notification(n) = Message::decode(LINES[i].0).unwrap() else {
            panic!()
        };
        let t = n.typed(Mode::Lenient).unwrap();
        assert!(t.is_clean());
        let NotificationParams::SessionUpdate(u) = t.value else {
            panic!()
        };
        assert!(
            matches!(u.update, SessionUpdate::Unknown(_)),
            "{:?}",
            u.update
        );
    }
    for (i, method, extra) in [
        (2, "", "usage"),
        (3, "session/prompt", "usage"),
        (11, "", "configOptions"),
        (14, "", "promptSuggestions"),
    ] {
        let (_, clean, debug) = typed(LINES[i].0, method);
        assert!(clean, "{debug}");
        assert_eq!(extra_names(&debug)[0], extra, "{debug}");
    }
    let Message::Response(r) = Message::decode(LINES[10].0).unwrap() else {
        panic!()
    };
    let ResponseResult::LoadSession(s) = r.typed("session/load", Mode::Lenient).unwrap().value
    else {
        panic!()
    };
    let Some([SessionConfigOption::Select(speed)]) = s.config_options.as_deref() else {
        panic!()
    };
    assert_eq!(
        speed.category,
        Some(SessionConfigOptionCategory::Unknown("speed".into()))
    );
    let resume = LINES[0].0.replace("session/fork", "session/resume");
    let Message::Request(r) = Message::decode(&resume).unwrap() else {
        panic!()
    };
    let RequestParams::ResumeSession(s) = r.typed(Mode::Strict).map(|t| t.value).unwrap() else {
        panic!()
    };
    assert!(matches!(
        s.mcp_servers.as_deref(),
        Some([McpServer::Unknown(_)])
    ));
    assert_eq!(s.system_prompt.unwrap().mode, SystemPromptMode::Append);
}

/// MCP over ACP through the two users of the request table: the agent's
/// `mcp/*` requests are paired with the client's answers, and the
/// client's `mcp/message` request (a server-originated MCP request) with
/// the agent's, each answer typed by its request's method; the inner MCP
/// payload comes back as its bytes.
#[cfg(all(feature = "unstable", feature = "std"))]
#[test]
fn mcp_requests_are_paired_by_the_tracker_and_the_observer() {
    use std::time::Duration;
    let t = Duration::ZERO;
    let connect = LINES[15].0;
    let connected = LINES[16].0;
    let call = LINES[17].0;
    let failed = LINES[18].0;
    let progress = LINES[19].0;
    // The client's own request to the agent: an MCP server asks for roots.
    let roots = r#"{"jsonrpc":"2.0","id":0,"method":"mcp/message","params":{"serverId":"m1","requestId":"7","connectionId":"c1","method":"roots/list"}}"#;
    let roots_answer = r#"{"jsonrpc":"2.0","id":0,"result":{"result":{"roots":[]}}}"#;

    let mut observer = Observer::new();
    for (side, line, method) in [
        (Side::Agent, connect, None),
        (Side::Client, connected, Some("mcp/connect")),
        (Side::Agent, call, None),
        (Side::Client, roots, None),
        (Side::Client, progress, None),
        (Side::Agent, roots_answer, Some("mcp/message")),
        (Side::Client, failed, Some("mcp/message")),
    ] {
        let msg = decode_line(line, observer.decoding(side, Mode::Strict)).unwrap();
        if let Incoming::Response { result, .. } = &msg {
            assert_eq!(result.value.method(), method, "{line}");
        } else {
            assert!(method.is_none(), "{line} was not typed as a response");
        }
        let paired = observer.handle(side, &msg).unwrap();
        assert_eq!(
            paired.map(|p| p.method.into_owned()).as_deref(),
            method,
            "{line}"
        );
    }
    assert_eq!(
        (
            observer.pending_len(Side::Agent),
            observer.pending_len(Side::Client)
        ),
        (0, 0)
    );

    // The client's tracker: the agent's requests are the peer's, its own
    // `mcp/message` request is paired with the agent's answer.
    let mut tracker = Tracker::new();
    let mut out = Vec::new();
    let inner = RawJson::from_text(r#"{"name":"read"}"#).unwrap();
    let mine = RequestParams::McpMessage(
        MessageMcpRequest::new("m1", "7", "roots/list").with_params(inner),
    );
    let id = tracker.encode_request(&mine, t, &mut out).unwrap();
    assert_eq!(id.to_string(), "0");
    let msg = Message::decode(connect).unwrap();
    assert_eq!(tracker.handle(&msg, t).unwrap(), None);
    let msg = decode_line(
        roots_answer,
        Decoding::new(Mode::Strict).with_tracker(&tracker),
    )
    .unwrap();
    let Incoming::Response { response, result } = &msg else {
        panic!("{msg:?}")
    };
    let ResponseResult::McpMessage(m) = &result.value else {
        panic!("{result:?}")
    };
    assert_eq!(m.result.as_ref().map(RawJson::get), Some(r#"{"roots":[]}"#));
    let done = tracker.handle_response(&response.id, t).unwrap();
    assert_eq!(done.method, "mcp/message");
    assert_eq!(tracker.pending_len(), 0);
    // The agent's `mcp/connect` waits for the client's answer, once.
    assert_eq!(tracker.peer_pending_len(), 1);
    let Message::Request(req) = Message::decode(connect).unwrap() else {
        panic!()
    };
    let mut out = Vec::new();
    let answer = ConnectMcpResponse::new("c1");
    tracker.encode_response(&req.id, &answer, &mut out).unwrap();
    assert_eq!(tracker.peer_pending_len(), 0);
    assert!(tracker.encode_response(&req.id, &answer, &mut out).is_err());

    // Lossless: the inner params are the bytes sent, escapes and number
    // spelling included.
    let Message::Request(r) = Message::decode(call).unwrap() else {
        panic!()
    };
    let RequestParams::McpMessage(m) = r.typed(Mode::Strict).unwrap().value else {
        panic!()
    };
    assert_eq!(m.connection_id.as_deref(), Some("c1"));
    assert_eq!(
        m.params.as_ref().map(RawJson::get),
        Some(r#"{"name":"read","arguments":{"path":"a\u00e9.txt","n":1.50e3}}"#)
    );
    let mut out = Vec::new();
    encode_request(&r.id, &RequestParams::McpMessage(m), &mut out).unwrap();
    assert!(String::from_utf8(out).unwrap().contains(r#""n":1.50e3"#));
}
