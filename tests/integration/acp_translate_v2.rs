//! v2 client, v1 agent (feature `v2`): a v2 client in front of a scripted
//! v1 agent through `translate::V2ClientV1Agent`, a whole session
//! (`initialize`, `auth/login`, `session/new`, config options and the mode,
//! two prompts with every update kind, a permission, an `fs/*` request, a
//! cancel by notification and by `$/cancel_request`, a refused prompt,
//! resumes from the start and otherwise, `session/list`, `close`,
//! `delete`); every line the translator sends the client validates
//! against the v2 JSON schema and every line it sends the agent against
//! the v1 one (`schema_check`). The generated checks (one acceptance and
//! one idle update a prompt; a v1 turn through both translators keeps its
//! meaning) are in `acp_translate.rs` with the fuzz target's seeds.
#![cfg(feature = "v2")]

use acp_codec::translate::{Out, Translator, V2ClientV1Agent};
use acp_codec::version::Dialect;

use crate::acp_translate::Bridge;
use serde_json::{json, Value};

/// A bridge around a new `V2ClientV1Agent`.
fn bridge() -> Bridge {
    Bridge::new(Translator::V2ClientV1Agent(V2ClientV1Agent::new()))
}

fn update(session: &str, update: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update",
           "params": {"sessionId": session, "update": update}})
}

/// Each line's update kind (`state_update` with its state), method or
/// `answer <id>`.
fn kinds(out: &[Value]) -> Vec<String> {
    out.iter()
        .map(|m| {
            let u = &m["params"]["update"];
            match (u["sessionUpdate"].as_str(), u["state"].as_str()) {
                (Some(kind), Some(state)) => format!("{kind} {state}"),
                (Some(kind), None) => kind.to_string(),
                _ => m["method"]
                    .as_str()
                    .map_or_else(|| format!("answer {}", m["id"]), String::from),
            }
        })
        .collect()
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// `initialize`, `auth/login` and `session/new` through the bridge; the
/// v1 agent offers `loadSession`, `list` and `close` but not `resume` or
/// `delete`.
fn setup(b: &mut Bridge) {
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": 2, "info": {"name": "v2-client", "version": "2.0"},
        "capabilities": {"_meta": {"k": 1}}, "x-extra": true}}),
    );
    assert_eq!(out.len(), 1);
    let p = &out[0]["params"];
    assert_eq!(out[0]["to"], "agent");
    assert_eq!(p["protocolVersion"], 1);
    assert_eq!(p["clientInfo"]["name"], "v2-client");
    assert_eq!(
        p["clientCapabilities"],
        json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false, "_meta": {"k": 1}})
    );
    assert_eq!(p["x-extra"], true);
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": 1, "agentInfo": {"name": "agent", "version": "1.0"},
        "agentCapabilities": {"loadSession": true,
            "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": false},
            "sessionCapabilities": {"list": {}, "close": {}},
            "auth": {"logout": {}}},
        "authMethods": [{"id": "login", "name": "Log in"}]}}));
    let r = &out[0]["result"];
    assert_eq!(r["protocolVersion"], 2);
    assert_eq!(r["info"]["name"], "agent");
    assert_eq!(
        r["capabilities"],
        json!({"session": {"prompt": {"image": {}, "embeddedContext": {}}, "mcp": {"http": {}, "stdio": {}}},
               "auth": {}})
    );
    assert_eq!(
        r["authMethods"],
        json!([{"methodId": "login", "name": "Log in", "type": "agent"}])
    );

    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 1, "method": "auth/login", "params": {"methodId": "login"}}),
    );
    assert_eq!(out[0]["method"], "authenticate");
    assert_eq!(
        b.agent(json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
        [json!({"jsonrpc": "2.0", "id": 1, "result": {}})]
    );

    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/w",
        "mcpServers": [{"type": "stdio", "name": "fs", "command": "/bin/fs"},
                       {"type": "http", "name": "web", "url": "https://x"}]}}),
    );
    assert_eq!(
        out[0]["params"]["mcpServers"],
        json!([{"name": "fs", "command": "/bin/fs", "args": [], "env": []},
               {"type": "http", "name": "web", "url": "https://x", "headers": []}])
    );
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1",
        "modes": {"currentModeId": "ask", "availableModes": [
            {"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code", "description": "writes code"}]},
        "configOptions": [{"id": "model", "name": "Model", "type": "select", "currentValue": "fast",
            "options": [{"group": "g", "name": "G", "options": [{"value": "fast", "name": "Fast"}]}]}]}}));
    let r = &out[0]["result"];
    assert!(r.get("modes").is_none());
    assert_eq!(
        r["configOptions"],
        json!([{"configId": "model", "name": "Model", "type": "select", "currentValue": "fast",
                "options": [{"groupId": "g", "name": "G", "options": [{"value": "fast", "name": "Fast"}]}]},
               {"configId": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": "ask",
                "options": [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code", "description": "writes code"}]}])
    );
}

#[test]
fn a_v2_client_runs_a_whole_session_with_a_v1_agent() {
    let mut b = bridge();
    setup(&mut b);

    // The mode option is the agent's modes: set_mode, and the options back.
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/set_config_option",
        "params": {"sessionId": "s1", "configId": "mode", "type": "id", "value": "code"}}),
    );
    assert_eq!(
        out,
        [
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/set_mode", "to": "agent",
                   "params": {"sessionId": "s1", "modeId": "code"}})
        ]
    );
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    assert_eq!(out[0]["result"]["configOptions"][1]["currentValue"], "code");
    // Another option: v1's untagged value.
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/set_config_option",
        "params": {"sessionId": "s1", "configId": "model", "type": "id", "value": "fast"}}),
    );
    assert_eq!(
        out[0]["params"],
        json!({"sessionId": "s1", "configId": "model", "value": "fast"})
    );
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 4, "result": {"configOptions": [
        {"id": "model", "name": "Model", "type": "select", "currentValue": "fast", "options": [{"value": "fast", "name": "Fast"}]}]}}));
    let options = &out[0]["result"]["configOptions"];
    assert_eq!(
        (&options[0]["configId"], &options[1]["configId"]),
        (&json!("model"), &json!("mode"))
    );

    // A prompt: accepted at once, with the user message and `running`.
    let prompt = json!([text("edit a.txt")]);
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 10, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": prompt}}),
    );
    assert_eq!(
        kinds(&out),
        [
            "session/prompt",
            "answer 10",
            "user_message",
            "state_update running"
        ]
    );
    let user = out[1]["result"]["messageId"].clone();
    assert!(user.is_string());
    assert_eq!(out[2]["params"]["update"]["messageId"], user);
    assert_eq!(out[2]["params"]["update"]["content"], prompt);

    let mut seen = Vec::new();
    for u in [
        json!({"sessionUpdate": "agent_thought_chunk", "content": text("hmm")}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("Editing")}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text(" it."), "_meta": {"m": 2}}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.txt", "kind": "edit", "status": "pending",
            "content": [{"type": "diff", "path": "/w/a.txt", "oldText": "a\n", "newText": "b\n"}]}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
            "content": [{"type": "content", "content": text("done")}]}),
        json!({"sessionUpdate": "plan", "entries": [{"content": "edit", "priority": "high", "status": "completed"}]}),
        json!({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "web", "description": "search", "input": {"hint": "q"}}]}),
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "ask"}),
        json!({"sessionUpdate": "config_option_update", "configOptions": [
            {"id": "model", "name": "Model", "type": "select", "currentValue": "slow", "options": [{"value": "slow", "name": "Slow"}]}]}),
        json!({"sessionUpdate": "session_info_update", "title": "Editing"}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("Next.")}),
    ] {
        seen.extend(b.agent(update("s1", u)));
    }
    assert_eq!(
        kinds(&seen),
        [
            "agent_thought_chunk",
            "agent_message_chunk",
            "agent_message_chunk",
            "tool_call_update",
            "tool_call_update",
            "plan_update",
            "available_commands_update",
            "config_option_update",
            "config_option_update",
            "session_info_update",
            "agent_message_chunk"
        ]
    );
    let id = |i: usize| seen[i]["params"]["update"]["messageId"].clone();
    assert_eq!(id(1), id(2), "one message, one id");
    assert!(id(0) != id(1) && id(1) != id(10) && id(0) != user);
    assert_eq!(seen[2]["params"]["update"]["_meta"], json!({"m": 2}));
    assert_eq!(
        seen[3]["params"]["update"]["content"],
        json!([{"type": "diff", "changes": [{"operation": "modify", "path": "/w/a.txt"}],
            "patch": {"format": "git_patch",
                "text": "diff --git /w/a.txt /w/a.txt\n--- /w/a.txt\n+++ /w/a.txt\n@@ -1,1 +1,1 @@\n-a\n+b\n"}}])
    );
    assert_eq!(
        seen[5]["params"]["update"]["plan"],
        json!({"type": "items", "planId": "plan", "entries": [{"content": "edit", "priority": "high", "status": "completed"}]})
    );
    assert_eq!(
        seen[6]["params"]["update"]["availableCommands"][0]["input"],
        json!({"type": "text", "hint": "q"})
    );
    let options = &seen[7]["params"]["update"]["configOptions"];
    assert_eq!(
        (&options[1]["configId"], &options[1]["currentValue"]),
        (&json!("mode"), &json!("ask"))
    );
    let options = &seen[8]["params"]["update"]["configOptions"];
    assert_eq!(
        (&options[0]["currentValue"], &options[1]["configId"]),
        (&json!("slow"), &json!("mode"))
    );

    // A v2 client has no fs or terminal: the agent hears so, the client
    // nothing.
    for (id, method) in [("fs-1", "fs/read_text_file"), ("term-1", "terminal/create")] {
        let out = b.agent(json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": {"sessionId": "s1", "path": "/w/a.txt", "command": "ls"}}));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["to"], "agent");
        assert_eq!(out[0]["error"]["code"], -32601);
        let message = out[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains("acp v2"), "{message}");
    }

    // A permission: requires_action while it waits, running after.
    let out = b.agent(
        json!({"jsonrpc": "2.0", "id": "p-1", "method": "session/request_permission", "params": {
        "sessionId": "s1", "toolCall": {"toolCallId": "t2", "title": "Write b.txt", "kind": "edit"},
        "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}}),
    );
    assert_eq!(
        kinds(&out),
        ["state_update requires_action", "session/request_permission"]
    );
    assert_eq!(out[1]["params"]["title"], "Write b.txt");
    assert_eq!(
        out[1]["params"]["subject"],
        json!({"type": "tool_call", "toolCall": {"toolCallId": "t2", "title": "Write b.txt", "kind": "edit"}})
    );
    assert!(out[1]["params"].get("toolCall").is_none());
    let answer = json!({"jsonrpc": "2.0", "id": "p-1", "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}});
    let out = b.client(answer.clone());
    assert_eq!(kinds(&out), ["answer \"p-1\"", "state_update running"]);
    assert_eq!(out[0]["result"], answer["result"]);

    // The agent's answer ends the turn: the idle update, not the answer.
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 10, "result": {"stopReason": "end_turn"}}));
    assert_eq!(
        out,
        [update(
            "s1",
            json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
        )]
    );

    // A cancel: the agent's `cancelled` answer is the idle update's reason.
    b.client(
        json!({"jsonrpc": "2.0", "id": 11, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [text("more")]}}),
    );
    let cancel =
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}});
    let out = b.client(cancel.clone());
    assert_eq!(out[0]["method"], "session/cancel");
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 11, "result": {"stopReason": "cancelled"}}));
    assert_eq!(
        out[0]["params"]["update"],
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
    );
    // `$/cancel_request` of a prompt is v1's session/cancel; the agent's
    // error answer is an idle update with the error.
    b.client(
        json!({"jsonrpc": "2.0", "id": 12, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [text("again")]}}),
    );
    let out = b.client(
        json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 12}}),
    );
    assert_eq!(
        out,
        [
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}, "to": "agent"})
        ]
    );
    let error = json!({"code": -32603, "message": "model failed"});
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 12, "error": error}));
    assert_eq!(
        out[0]["params"]["update"],
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": error})
    );
    assert_eq!(b.t.pending(), 0);

    // A resume from the start is a load: the replay, the state, the answer.
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 13, "method": "session/resume",
        "params": {"sessionId": "s1", "cwd": "/w", "replayFrom": {"type": "start"}}}),
    );
    assert_eq!(
        out,
        [
            json!({"jsonrpc": "2.0", "id": 13, "method": "session/load", "to": "agent",
                "params": {"sessionId": "s1", "cwd": "/w", "mcpServers": []}})
        ]
    );
    let mut seen = Vec::new();
    for u in [
        json!({"sessionUpdate": "user_message_chunk", "content": text("edit a.txt")}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("Editing it.")}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.txt", "status": "completed"}),
    ] {
        seen.extend(b.agent(update("s1", u)));
    }
    seen.extend(b.agent(json!({"jsonrpc": "2.0", "id": 13, "result": {
        "modes": {"currentModeId": "code", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}}})));
    assert_eq!(
        kinds(&seen),
        [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call_update",
            "state_update idle",
            "answer 13"
        ]
    );
    assert!(seen[0]["params"]["update"]["messageId"].is_string());
    assert_eq!(
        seen[4]["result"]["configOptions"][0]["currentValue"],
        "code"
    );

    // What the v1 agent lacks: resume without replay, other cursors, delete.
    for (id, method, params, code) in [
        (
            14,
            "session/resume",
            json!({"sessionId": "s1", "cwd": "/w"}),
            -32601,
        ),
        (
            15,
            "session/resume",
            json!({"sessionId": "s1", "cwd": "/w", "replayFrom": {"type": "_message", "messageId": "m"}}),
            -32602,
        ),
        (16, "session/delete", json!({"sessionId": "s1"}), -32601),
    ] {
        let out = b.client(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(out.len(), 1, "{method}");
        assert!(out[0].get("to").is_none());
        assert_eq!(out[0]["error"]["code"], code, "{out:?}");
    }
    // What it offers passes: list, close.
    let out = b.client(json!({"jsonrpc": "2.0", "id": 17, "method": "session/list", "params": {}}));
    assert_eq!(out[0]["method"], "session/list");
    b.agent(json!({"jsonrpc": "2.0", "id": 17, "result": {"sessions": [{"sessionId": "s1", "cwd": "/w"}]}}));
    let out = b.client(json!({"jsonrpc": "2.0", "id": 18, "method": "session/close", "params": {"sessionId": "s1"}}));
    assert_eq!(out[0]["method"], "session/close");
    b.agent(json!({"jsonrpc": "2.0", "id": 18, "result": {}}));

    // Extension methods and errors pass.
    let out =
        b.client(json!({"jsonrpc": "2.0", "id": 19, "method": "_x/ping", "params": {"a": 1}}));
    assert_eq!(out[0]["method"], "_x/ping");
    let out =
        b.agent(json!({"jsonrpc": "2.0", "id": 19, "error": {"code": -32601, "message": "no"}}));
    assert_eq!(out[0]["error"]["code"], -32601);
    assert_eq!(b.t.pending(), 0);
    b.validate("acp-translate-v2-client");
}

#[test]
fn a_v2_agent_is_relayed_unchanged_and_translator_picks_the_direction() {
    let mut t = Translator::between(Dialect::V2, Dialect::V1).unwrap();
    assert!(Translator::between(Dialect::V1, Dialect::V1).is_none());
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}"#;
    assert_eq!(t.client_line(init).len(), 1);
    let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}"#;
    assert_eq!(t.agent_line(answer), [Out::Client(answer.into())]);
    assert!(t.is_passthrough());
    let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#;
    assert_eq!(t.client_line(prompt), [Out::Agent(prompt.into())]);
    assert_eq!(t.pending(), 0);
    // Lines that are not JSON pass through for the peer to answer.
    let mut t = V2ClientV1Agent::new();
    assert_eq!(t.client_line("not json"), [Out::Agent("not json".into())]);
    assert_eq!(
        t.agent_line("{\"jsonrpc\""),
        [Out::Client("{\"jsonrpc\"".into())]
    );
}
