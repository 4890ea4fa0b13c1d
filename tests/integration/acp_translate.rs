//! v1↔v2 translation (feature `v2`): a v1 client in front of a scripted v2
//! agent through `translate::V1ClientV2Agent`, in full turns
//! (`initialize`, `session/new`, `session/set_mode`, a prompt with message chunks, a tool
//! call with content chunks, a plan, a permission request, the idle state
//! update ending it, a cancel, a `session/load`); every line the translator
//! sends the agent validates against the v2 JSON schema and every line it
//! sends the client against the v1 one (`scripts/check_acp_schema.py`,
//! Python `jsonschema`; skipped with a message when it is missing, unless
//! `ACP_SCHEMA_CHECK=require`); the fuzz target's invariant on generated
//! input and its committed seeds.
#![cfg(feature = "v2")]

use std::collections::HashMap;

use acp_codec::translate::{Out, Translator, V1ClientV2Agent};
use proptest::prelude::*;
use serde_json::{json, Value};

#[path = "../../fuzz/checks/translate.rs"]
mod check;

/// A translator of either direction with what each side asked, to name
/// the method of each answer, and every line sent, as schema samples (also
/// used by `acp_translate_v2.rs`).
pub(crate) struct Bridge {
    pub(crate) t: Translator,
    client_methods: HashMap<String, String>,
    agent_methods: HashMap<String, String>,
    /// (v2?, sample) for the schema check.
    samples: Vec<(bool, Value)>,
}

impl Default for Bridge {
    fn default() -> Self {
        Self::new(Translator::V1ClientV2Agent(V1ClientV2Agent::new()))
    }
}

impl Bridge {
    pub(crate) fn new(t: Translator) -> Self {
        Self {
            t,
            client_methods: HashMap::new(),
            agent_methods: HashMap::new(),
            samples: Vec::new(),
        }
    }

    pub(crate) fn client(&mut self, msg: Value) -> Vec<Value> {
        if let (Some(id), Some(m)) = (msg.get("id"), msg["method"].as_str()) {
            self.client_methods.insert(id.to_string(), m.to_string());
        }
        let out = self.t.client_line(&msg.to_string());
        self.record(out)
    }

    pub(crate) fn agent(&mut self, msg: Value) -> Vec<Value> {
        if let (Some(id), Some(m)) = (msg.get("id"), msg["method"].as_str()) {
            self.agent_methods.insert(id.to_string(), m.to_string());
        }
        let out = self.t.agent_line(&msg.to_string());
        self.record(out)
    }

    /// Every line out, parsed, recorded as a sample; those for the client
    /// returned (those for the agent too, tagged `"to": "agent"`).
    fn record(&mut self, out: Vec<Out>) -> Vec<Value> {
        let v2_agent = matches!(self.t, Translator::V1ClientV2Agent(_));
        let mut seen = Vec::new();
        for o in out {
            let (to_agent, text) = match &o {
                Out::Agent(text) => (true, text),
                Out::Client(text) => (false, text),
            };
            let msg: Value = serde_json::from_str(text).unwrap();
            let (method, part) = if let Some(m) = msg["method"].as_str() {
                (Some(m.to_string()), msg.get("params").map(|_| "params"))
            } else if msg.get("result").is_some() {
                // An answer to one side is to that side's request, named
                // in its version.
                let asked = if to_agent {
                    &self.agent_methods
                } else {
                    &self.client_methods
                };
                (asked.get(&msg["id"].to_string()).cloned(), Some("result"))
            } else {
                (None, None)
            };
            self.samples.push((
                to_agent == v2_agent,
                json!({"def": null, "method": method, "part": part, "message": msg}),
            ));
            let mut tagged = msg;
            if to_agent {
                tagged["to"] = "agent".into();
            }
            seen.push(tagged);
        }
        seen
    }

    /// Every sample validated against its version's schema, in files named
    /// after `name`.
    pub(crate) fn validate(&self, name: &str) {
        for v2 in [false, true] {
            let mine: Vec<&Value> = self
                .samples
                .iter()
                .filter(|(is_v2, _)| *is_v2 == v2)
                .map(|(_, s)| s)
                .collect();
            let file = format!("{name}-v{}.ndjson", if v2 { 2 } else { 1 });
            crate::schema_check::validate(&file, &mine, if v2 { &["--v2"] } else { &[] });
        }
    }
}

fn update(session: &str, update: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update",
           "params": {"sessionId": session, "update": update}})
}

fn kinds(out: &[Value]) -> Vec<String> {
    out.iter()
        .map(|m| match m["params"]["update"]["sessionUpdate"].as_str() {
            Some(kind) => kind.to_string(),
            None => m["method"]
                .as_str()
                .map_or_else(|| format!("answer {}", m["id"]), String::from),
        })
        .collect()
}

const MODES: &str = r#"[{"configId":"mode","name":"Mode","category":"mode","type":"select","currentValue":"ask",
    "options":[{"value":"ask","name":"Ask"},{"value":"code","name":"Code","description":"writes code"}]}]"#;

/// Initialize and session/new through the bridge.
fn setup(b: &mut Bridge) {
    let out = b.client(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true, "_meta": {"k": 1}},
        "clientInfo": {"name": "zed", "version": "0.1"}, "x-extra": true}}));
    assert_eq!(out.len(), 1);
    let p = &out[0]["params"];
    assert_eq!(out[0]["to"], "agent");
    assert_eq!(p["protocolVersion"], 2);
    assert_eq!(p["info"]["name"], "zed");
    assert_eq!(p["capabilities"], json!({"_meta": {"k": 1}}));
    assert_eq!(p["x-extra"], true);
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": 2, "info": {"name": "agent", "version": "2.0"},
        "capabilities": {"session": {"prompt": {"image": {}, "embeddedContext": {}}, "mcp": {"http": {}, "stdio": {}}, "delete": {}}},
        "authMethods": [{"type": "agent", "methodId": "login", "name": "Log in"}]}}));
    let r = &out[0]["result"];
    assert_eq!(r["protocolVersion"], 1);
    assert_eq!(r["agentInfo"]["name"], "agent");
    let caps = &r["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(
        caps["promptCapabilities"],
        json!({"image": true, "audio": false, "embeddedContext": true})
    );
    assert_eq!(caps["mcpCapabilities"], json!({"http": true, "sse": false}));
    assert_eq!(
        caps["sessionCapabilities"],
        json!({"delete": {}, "list": {}, "resume": {}, "close": {}})
    );
    assert_eq!(r["authMethods"][0]["id"], "login");

    let out = b.client(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}));
    assert_eq!(out[0]["method"], "session/new");
    let modes: Value = serde_json::from_str(MODES).unwrap();
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1", "configOptions": modes,
        "availableCommands": [{"name": "web", "description": "search", "input": {"type": "text", "hint": "query"}}]}}));
    assert_eq!(kinds(&out), ["answer 1", "available_commands_update"]);
    assert_eq!(
        out[0]["result"]["modes"],
        json!({"currentModeId": "ask", "availableModes": [
            {"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code", "description": "writes code"}]})
    );
    assert_eq!(
        out[1]["params"]["update"]["availableCommands"][0]["input"],
        json!({"hint": "query"})
    );
}

#[test]
fn a_v1_client_runs_full_turns_with_a_v2_agent() {
    let mut b = Bridge::default();
    setup(&mut b);

    // set_mode becomes set_config_option on the mode option.
    let out = b.client(json!({"jsonrpc": "2.0", "id": 2, "method": "session/set_mode", "params": {"sessionId": "s1", "modeId": "code"}}));
    assert_eq!(out[0]["method"], "session/set_config_option");
    assert_eq!(
        out[0]["params"],
        json!({"sessionId": "s1", "configId": "mode", "type": "id", "value": "code"})
    );
    let modes: Value = serde_json::from_str(MODES).unwrap();
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 2, "result": {"configOptions": modes}}));
    assert_eq!(out, [json!({"jsonrpc": "2.0", "id": 2, "result": {}})]);

    // A prompt: the v2 answer is held, the idle state update answers it.
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "read a.txt"}]}}),
    );
    assert_eq!(out[0]["method"], "session/prompt");
    assert!(b
        .agent(json!({"jsonrpc": "2.0", "id": 3, "result": {"messageId": "u1"}}))
        .is_empty());
    let mut seen = Vec::new();
    let text = |t: &str| json!({"type": "text", "text": t});
    for u in [
        json!({"sessionUpdate": "user_message", "messageId": "u1", "content": [text("read a.txt")]}),
        json!({"sessionUpdate": "state_update", "state": "running"}),
        json!({"sessionUpdate": "agent_thought_chunk", "messageId": "th", "content": text("hmm")}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("Reading")}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text(" it."), "_meta": {"m": 2}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read a.txt", "kind": "read", "status": "pending", "rawInput": {"path": "a.txt"}}),
        json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1", "content": {"type": "content", "content": text("line 1")}}),
        json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1", "content": {"type": "content", "content": text("line 2")}}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": [{"content": "read", "priority": "high", "status": "completed"}]}}),
        json!({"sessionUpdate": "state_update", "state": "requires_action"}),
    ] {
        seen.extend(b.agent(update("s1", u)));
    }
    assert_eq!(
        kinds(&seen),
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "tool_call_update",
            "plan"
        ]
    );
    assert_eq!(seen[0]["params"]["update"]["messageId"], "u1");
    assert_eq!(seen[3]["params"]["update"]["_meta"], json!({"m": 2}));
    assert_eq!(seen[4]["params"]["update"]["title"], "Read a.txt");
    assert_eq!(
        seen[6]["params"]["update"]["content"],
        json!([{"type": "content", "content": text("line 1")}, {"type": "content", "content": text("line 2")}])
    );
    assert_eq!(
        seen[7]["params"]["update"],
        json!({"sessionUpdate": "plan", "entries": [{"content": "read", "priority": "high", "status": "completed"}]})
    );

    // The permission request: the subject's tool call becomes `toolCall`.
    let out = b.agent(json!({"jsonrpc": "2.0", "id": "p-1", "method": "session/request_permission", "params": {
        "sessionId": "s1", "title": "Write b.txt?", "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t2", "kind": "edit"}},
        "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}}));
    assert_eq!(
        out[0]["params"]["toolCall"],
        json!({"toolCallId": "t2", "kind": "edit", "title": "Write b.txt?"})
    );
    let out = b.client(json!({"jsonrpc": "2.0", "id": "p-1", "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}}));
    assert_eq!(out[0]["to"], "agent");
    let mut seen = Vec::new();
    for u in [
        json!({"sessionUpdate": "state_update", "state": "running"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
        json!({"sessionUpdate": "terminal_update", "terminalId": "term"}),
        json!({"sessionUpdate": "agent_message", "messageId": "a2", "content": [text("Done"), text(".")]}),
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
    ] {
        seen.extend(b.agent(update("s1", u)));
    }
    assert_eq!(
        kinds(&seen),
        [
            "tool_call_update",
            "agent_message_chunk",
            "agent_message_chunk",
            "answer 3"
        ]
    );
    assert_eq!(seen[3]["result"], json!({"stopReason": "end_turn"}));

    // A cancel: the idle `cancelled` update ends the prompt.
    b.client(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [text("more")]}}),
    );
    assert!(b
        .agent(json!({"jsonrpc": "2.0", "id": 4, "result": {"messageId": "u2"}}))
        .is_empty());
    let out = b.client(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}),
    );
    assert_eq!(out[0]["method"], "session/cancel");
    let out = b.agent(update(
        "s1",
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}),
    ));
    assert_eq!(
        out,
        [json!({"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "cancelled"}})]
    );
    assert_eq!(b.t.pending(), 0);

    // session/load: a resume from the start; the replay, then the answer.
    let out = b.client(json!({"jsonrpc": "2.0", "id": 5, "method": "session/load",
        "params": {"sessionId": "s1", "cwd": "/w", "mcpServers": []}}));
    assert_eq!(out[0]["method"], "session/resume");
    assert_eq!(out[0]["params"]["replayFrom"], json!({"type": "start"}));
    let mut seen = Vec::new();
    for u in [
        json!({"sessionUpdate": "user_message", "messageId": "u1", "content": [text("read a.txt")]}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read a.txt", "status": "completed"}),
        json!({"sessionUpdate": "agent_message", "messageId": "a2", "content": [text("Done.")]}),
        json!({"sessionUpdate": "state_update", "state": "idle"}),
    ] {
        seen.extend(b.agent(update("s1", u)));
    }
    let modes: Value = serde_json::from_str(MODES).unwrap();
    seen.extend(b.agent(json!({"jsonrpc": "2.0", "id": 5, "result": {"configOptions": modes}})));
    assert_eq!(
        kinds(&seen),
        [
            "user_message_chunk",
            "tool_call",
            "agent_message_chunk",
            "answer 5"
        ]
    );
    assert_eq!(seen[3]["result"]["modes"]["currentModeId"], "ask");

    // v1's session/resume: v2's without a replay, its answer as load's.
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 7, "method": "session/resume",
        "params": {"sessionId": "s1", "cwd": "/w"}}),
    );
    assert_eq!(out[0]["method"], "session/resume");
    assert!(out[0]["params"].get("replayFrom").is_none(), "{}", out[0]);
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 7, "result": {"configOptions": modes}}));
    assert_eq!(out[0]["result"]["modes"]["currentModeId"], "ask");
    assert_eq!(out[0]["result"]["configOptions"][0]["id"], "mode");

    // An agent error passes through; an extension method too.
    let out = b.client(json!({"jsonrpc": "2.0", "id": 6, "method": "_x/ping", "params": {"a": 1}}));
    assert_eq!(out[0]["method"], "_x/ping");
    let out =
        b.agent(json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32601, "message": "no"}}));
    assert_eq!(out[0]["error"]["code"], -32601);
    assert_eq!(b.t.pending(), 0);
    b.validate("acp-translate");
}

#[test]
fn the_renamed_and_restructured_members_map() {
    let mut b = Bridge::default();
    setup(&mut b);
    // MCP servers: stdio gets its `type`, sse (gone in v2) is dropped.
    let out = b.client(json!({"jsonrpc": "2.0", "id": 20, "method": "session/new", "params": {"cwd": "/w", "mcpServers": [
        {"name": "fs", "command": "/bin/fs", "args": [], "env": []},
        {"type": "sse", "name": "old", "url": "http://x", "headers": []}]}}));
    assert_eq!(
        out[0]["params"]["mcpServers"],
        json!([{"type": "stdio", "name": "fs", "command": "/bin/fs", "args": [], "env": []}])
    );
    b.agent(json!({"jsonrpc": "2.0", "id": 20, "result": {"sessionId": "s2"}}));
    // set_config_option: v1's untagged value gets `type: "id"`; the options
    // come back with v1's `id` and `group`.
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 21, "method": "session/set_config_option",
        "params": {"sessionId": "s2", "configId": "model", "value": "fast"}}),
    );
    assert_eq!(out[0]["params"]["type"], "id");
    let grouped = json!([{"configId": "model", "name": "Model", "type": "select", "currentValue": "fast",
        "options": [{"groupId": "g", "name": "G", "options": [{"value": "fast", "name": "Fast"}]}]}]);
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 21, "result": {"configOptions": grouped}}));
    assert_eq!(out[0]["result"]["configOptions"][0]["id"], "model");
    assert_eq!(
        out[0]["result"]["configOptions"][0]["options"][0]["group"],
        "g"
    );
    // A mode option arriving by update also gives v1 its current mode.
    let modes: Value = serde_json::from_str(MODES).unwrap();
    let out = b.agent(update(
        "s2",
        json!({"sessionUpdate": "config_option_update", "configOptions": modes}),
    ));
    assert_eq!(kinds(&out), ["config_option_update", "current_mode_update"]);
    assert_eq!(out[1]["params"]["update"]["currentModeId"], "ask");
    // Commands: the v2 `command` tag dropped.
    let out = b.agent(update("s2", json!({"sessionUpdate": "available_commands_update", "availableCommands": [
        {"type": "command", "name": "web", "description": "search", "input": {"type": "text", "hint": "q"}}]})));
    assert_eq!(
        out[0]["params"]["update"]["availableCommands"],
        json!([{"name": "web", "description": "search", "input": {"hint": "q"}}])
    );
    // A v2 diff becomes text content (the patch).
    let out = b.agent(update(
        "s2",
        json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "e1",
        "content": {"type": "diff", "changes": [{"operation": "modify", "path": "/w/a"}],
                    "patch": {"format": "git_patch", "text": "diff --git a b"}}}),
    ));
    assert_eq!(
        out[0]["params"]["update"]["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "diff --git a b"}}])
    );
    assert_eq!(out[0]["params"]["update"]["sessionUpdate"], "tool_call");
    // A command subject: a synthetic tool call of kind execute.
    let out = b.agent(json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {
        "sessionId": "s2", "title": "Run tests?", "subject": {"type": "command", "command": "cargo test", "cwd": "/w"},
        "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}}));
    assert_eq!(
        out[0]["params"]["toolCall"],
        json!({"toolCallId": "permission-7", "kind": "execute", "title": "Run tests?",
               "rawInput": {"command": "cargo test", "cwd": "/w"}})
    );
    let out = b.client(
        json!({"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "cancelled"}}}),
    );
    assert_eq!(out[0]["to"], "agent");
    // Terminal display updates have no v1 counterpart.
    assert!(b
        .agent(update(
            "s2",
            json!({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "aGk="})
        ))
        .is_empty());
    b.validate("acp-translate");
}

#[test]
fn what_cannot_map_is_an_error_for_the_client() {
    let mut b = Bridge::default();
    setup(&mut b);
    // A session without a mode config option.
    let out = b.client(json!({"jsonrpc": "2.0", "id": 9, "method": "session/set_mode", "params": {"sessionId": "other", "modeId": "code"}}));
    assert_eq!(out.len(), 1);
    assert!(out[0].get("to").is_none());
    assert_eq!(out[0]["error"]["code"], -32601);
    // A refused prompt: the agent's error is the prompt's one answer.
    b.client(
        json!({"jsonrpc": "2.0", "id": 10, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": []}}),
    );
    let out =
        b.agent(json!({"jsonrpc": "2.0", "id": 10, "error": {"code": -32602, "message": "empty"}}));
    assert_eq!(out[0]["error"]["code"], -32602);
    let out = b.agent(update(
        "s1",
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
    ));
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(b.t.pending(), 0);
    // Lines that are not JSON pass through for the peer to answer.
    assert_eq!(b.t.client_line("not json"), [Out::Agent("not json".into())]);
}

#[test]
fn a_v1_agent_is_relayed_unchanged() {
    let mut t = V1ClientV2Agent::new();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    assert_eq!(t.client_line(init).len(), 1);
    let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
    assert_eq!(t.agent_line(answer), [Out::Client(answer.into())]);
    assert!(t.is_passthrough());
    let load = r#"{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}"#;
    assert_eq!(t.client_line(load), [Out::Agent(load.into())]);
}

#[test]
fn translate_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/translate");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        eprintln!("{}", path.display());
        check::check(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "no seeds in {}", dir.display());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// Any order of steps: nothing panics, every prompt gets one answer.
    #[test]
    fn every_prompt_gets_one_answer(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        check::v1_client(&data);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    /// A v2 client in front of a v1 agent: one acceptance and one idle
    /// update a prompt; and through both translators a v1 turn keeps its
    /// meaning.
    #[test]
    fn a_v2_client_and_the_composed_chain_keep_their_invariants(
        data in proptest::collection::vec(any::<u8>(), 0..160)
    ) {
        check::v2_client(&data);
        check::composed(&data);
    }
}
