//! The invariants behind the `translate` fuzz target, shared with
//! `tests/integration/acp_translate.rs`, which replays the committed seeds
//! and generated input. [`check`] runs the same input through three checks:
//! [`v1_client`], [`v2_client`] and [`composed`].
//!
//! [`v1_client`]: each byte one step of a v1 client and a v2 agent talking through
//! `translate::V1ClientV2Agent` after an `initialize`: prompts,
//! cancels, the agent's acknowledgements, errors, updates of every kind and
//! state updates on one of four sessions, in any order, and lines of
//! arbitrary bytes on either side. At the end the agent acknowledges and
//! ends every prompt. Asserted: nothing panics, every line the translator
//! sends the client is JSON, and every v1 prompt got exactly one answer
//! (its stop reason or an error) with no request left pending (unless an
//! arbitrary line was itself a JSON-RPC message with an id, which may
//! answer or repeat a prompt's id).

use std::collections::{BTreeMap, VecDeque};

use acp_codec::translate::{Out, Translator, V1ClientV2Agent, V2ClientV1Agent, MAX_PENDING};
use serde_json::{json, Value};

/// The prompts a check sent: by id, their session; those still open.
#[derive(Default)]
struct Prompts {
    next_id: u64,
    sessions: BTreeMap<u64, &'static str>,
    open: VecDeque<u64>,
}

impl Prompts {
    /// A new `session/prompt` on `session`, recorded.
    fn send(&mut self, session: &'static str) -> String {
        self.next_id += 1;
        self.sessions.insert(self.next_id, session);
        self.open.push_back(self.next_id);
        json!({"jsonrpc": "2.0", "id": self.next_id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}})
        .to_string()
    }
}

fn update(session: &str, update: Value) -> String {
    update_value(session, update).to_string()
}

/// Every check on `data`.
pub fn check(data: &[u8]) {
    v1_client(data);
    v2_client(data);
    composed(data);
}

/// A v1 client in front of a v2 agent (see the module docs).
pub fn v1_client(data: &[u8]) {
    let mut t = Translator::V1ClientV2Agent(V1ClientV2Agent::new());
    let mut out = Vec::new();
    out.extend(t.client_line(
        r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}"#,
    ));
    out.extend(t.agent_line(
        r#"{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{}}}}"#,
    ));
    // Those still open: the agent has still to acknowledge them.
    let mut p = Prompts::default();
    let mut fed = Fed::default();
    let sessions = ["s0", "s1", "s2", "s3"];
    let mut i = 0;
    while let Some(&b) = data.get(i) {
        i += 1;
        let s = sessions[usize::from(b >> 3) % 4];
        let tool = format!("t{}", b >> 5);
        match b % 8 {
            0 => {
                out.extend(t.client_line(&p.send(s)));
            }
            1 => {
                let line = json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}});
                out.extend(t.client_line(&line.to_string()));
            }
            2 => {
                if let Some(id) = p.open.pop_front() {
                    let line = json!({"jsonrpc": "2.0", "id": id, "result": {"messageId": "m"}});
                    out.extend(t.agent_line(&line.to_string()));
                }
            }
            3 => {
                let u = match b >> 6 {
                    0 => json!({"sessionUpdate": "agent_message", "messageId": "m",
                        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
                    1 => {
                        json!({"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "cancelled"})
                    }
                    2 => json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool,
                        "content": {"type": "content", "content": {"type": "text", "text": "c"}}}),
                    _ => {
                        json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}})
                    }
                };
                out.extend(t.agent_line(&update(s, u)));
            }
            4 => {
                let reason = ["end_turn", "cancelled"][usize::from(b >> 7)];
                let u =
                    json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason});
                out.extend(t.agent_line(&update(s, u)));
            }
            5 => {
                let state = ["running", "requires_action"][usize::from(b >> 7)];
                let u = json!({"sessionUpdate": "state_update", "state": state});
                out.extend(t.agent_line(&update(s, u)));
            }
            6 => {
                // The agent refuses the oldest prompt it has not accepted.
                if let Some(id) = p.open.pop_front() {
                    let line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "no"}});
                    out.extend(t.agent_line(&line.to_string()));
                }
            }
            _ => out.extend(fed.feed(&mut t, b, data, &mut i)),
        }
    }
    // The agent accepts and ends everything.
    for id in p.open {
        out.extend(t.agent_line(&json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string()));
    }
    for s in p.sessions.values() {
        let u = json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"});
        out.extend(t.agent_line(&update(s, u)));
    }
    let mut answers: BTreeMap<u64, usize> = BTreeMap::new();
    for o in &out {
        let Out::Client(line) = o else { continue };
        let Some(v) = fed.parse(line) else { continue };
        if v.get("method").is_none() {
            if let Some(id) = v.get("id").and_then(Value::as_u64) {
                *answers.entry(id).or_default() += 1;
            }
        }
    }
    if fed.ids || t.is_passthrough() {
        return;
    }
    for id in p.sessions.keys() {
        assert_eq!(answers.get(id), Some(&1), "prompt {id}: {out:?}");
    }
    assert_eq!(t.pending(), 0, "{out:?}");
}

/// Lines the arbitrary steps fed, to tell an unread line relayed as it came
/// from a broken translation; and whether one held a JSON-RPC id (which may
/// answer or repeat a scripted one).
#[derive(Default)]
struct Fed {
    lines: std::collections::BTreeSet<String>,
    ids: bool,
}

impl Fed {
    /// Takes the arbitrary line of step `b` at `data[*i..]`, advancing `i`.
    fn take(&mut self, b: u8, data: &[u8], i: &mut usize) -> String {
        let end = data.len().min(*i + usize::from(b >> 3));
        let raw = String::from_utf8_lossy(data.get(*i..end).unwrap_or_default()).into_owned();
        *i = end;
        if serde_json::from_str::<Value>(&raw).is_ok_and(|v| v.get("id").is_some()) {
            self.ids = true;
        }
        self.lines.insert(raw.trim().to_owned());
        self.lines.insert(raw.clone());
        raw
    }

    /// Feeds the arbitrary line of step `b` to the client's side of `t`
    /// (high bit clear) or the agent's.
    fn feed(&mut self, t: &mut Translator, b: u8, data: &[u8], i: &mut usize) -> Vec<Out> {
        let raw = self.take(b, data, i);
        if b & 0x80 == 0 {
            t.client_line(&raw)
        } else {
            t.agent_line(&raw)
        }
    }

    /// `line` parsed, or `None` when it is a fed line relayed unread.
    fn parse(&self, line: &str) -> Option<Value> {
        let parsed = serde_json::from_str::<Value>(line);
        if parsed.is_err() {
            assert!(
                self.lines.contains(line) || self.lines.contains(line.trim()),
                "not JSON, and not a line fed: {line}"
            );
        }
        parsed.ok()
    }
}

/// A v2 client in front of a v1 agent through `V2ClientV1Agent`: each byte
/// one step (prompts, cancels by notification or `$/cancel_request`, the
/// agent's answers and errors, updates of every v1 kind, permission
/// requests and their answers, `fs/*` requests, arbitrary lines either
/// way) on one of four sessions. At the end the agent answers every prompt
/// and the client every permission request. Asserted: nothing panics; the
/// state stays bounded; every prompt got exactly one answer, and each
/// accepted one (answered `{messageId}`) exactly one idle `state_update`
/// on its session; every `fs/*` request got `-32601` and never reached the
/// client; nothing is left pending.
pub fn v2_client(data: &[u8]) {
    let mut t = Translator::V2ClientV1Agent(V2ClientV1Agent::new());
    let mut out = Vec::new();
    out.extend(t.client_line(
        r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"},"capabilities":{}}}"#,
    ));
    out.extend(t.agent_line(
        r#"{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
    ));
    let sessions = ["s0", "s1", "s2", "s3"];
    // Those open: the agent has still to answer them; and permission
    // requests the client has still to answer.
    let mut p = Prompts::default();
    let mut asks: VecDeque<u64> = VecDeque::new();
    let mut fs_asked = Vec::new();
    let mut fed = Fed::default();
    let mut i = 0;
    while let Some(&b) = data.get(i) {
        i += 1;
        let s = sessions[usize::from(b >> 3) % 4];
        match b % 8 {
            0 => {
                out.extend(t.client_line(&p.send(s)));
            }
            1 => {
                let line = match p.open.front() {
                    Some(id) if b & 0x80 != 0 => {
                        json!({"jsonrpc": "2.0", "method": "$/cancel_request",
                        "params": {"requestId": id}})
                    }
                    _ => {
                        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}})
                    }
                };
                out.extend(t.client_line(&line.to_string()));
            }
            2 => {
                if let Some(id) = p.open.pop_front() {
                    let line = match b >> 6 {
                        0 => {
                            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "no"}})
                        }
                        1 => {
                            json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "cancelled"}})
                        }
                        _ => {
                            json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}})
                        }
                    };
                    out.extend(t.agent_line(&line.to_string()));
                }
            }
            3 => {
                let tool = format!("t{}", b >> 5);
                let u = match b >> 6 {
                    0 => {
                        let kind =
                            ["agent_message_chunk", "agent_thought_chunk"][usize::from(b >> 5) % 2];
                        json!({"sessionUpdate": kind, "content": {"type": "text", "text": "a"}})
                    }
                    1 => json!({"sessionUpdate": "tool_call", "toolCallId": tool, "title": "t",
                        "content": [{"type": "diff", "path": "/a", "oldText": "x", "newText": "y"}]}),
                    2 => {
                        json!({"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "completed"})
                    }
                    _ => {
                        json!({"sessionUpdate": "plan", "entries": [{"content": "c", "priority": "low", "status": "pending"}]})
                    }
                };
                out.extend(t.agent_line(&update(s, u)));
            }
            4 => {
                p.next_id += 1;
                asks.push_back(p.next_id);
                let line = json!({"jsonrpc": "2.0", "id": p.next_id, "method": "session/request_permission",
                    "params": {"sessionId": s, "toolCall": {"toolCallId": "t"},
                        "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}});
                out.extend(t.agent_line(&line.to_string()));
            }
            5 => {
                if let Some(id) = asks.pop_front() {
                    let line = json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": {"outcome": "cancelled"}}});
                    out.extend(t.client_line(&line.to_string()));
                }
            }
            6 => {
                let id = format!("fs-{i}");
                let method = ["fs/read_text_file", "terminal/create"][usize::from(b >> 7)];
                let line = json!({"jsonrpc": "2.0", "id": id, "method": method,
                    "params": {"sessionId": s, "path": "/a"}});
                fs_asked.push(id);
                out.extend(t.agent_line(&line.to_string()));
            }
            _ => out.extend(fed.feed(&mut t, b, data, &mut i)),
        }
        assert!(t.pending() <= 2 * MAX_PENDING);
    }
    for id in p.open {
        let line = json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}});
        out.extend(t.agent_line(&line.to_string()));
    }
    for id in asks {
        let line =
            json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": {"outcome": "cancelled"}}});
        out.extend(t.client_line(&line.to_string()));
    }
    let mut answers: BTreeMap<u64, usize> = BTreeMap::new();
    let mut accepted: BTreeMap<&str, usize> = BTreeMap::new();
    let mut idles: BTreeMap<String, usize> = BTreeMap::new();
    let mut fs_errors = Vec::new();
    for o in &out {
        let (Out::Client(line) | Out::Agent(line)) = o;
        let Some(v) = fed.parse(line) else { continue };
        if let Out::Agent(_) = o {
            if v["error"]["code"] == -32601 {
                fs_errors.extend(v["id"].as_str().map(String::from));
            }
            continue;
        }
        let method = v["method"].as_str().unwrap_or_default();
        assert!(
            !method.starts_with("fs/") && !method.starts_with("terminal/"),
            "{line}"
        );
        let u = &v["params"]["update"];
        if u["sessionUpdate"] == "state_update" && u["state"] == "idle" {
            let s = v["params"]["sessionId"].as_str().unwrap_or_default();
            *idles.entry(s.to_string()).or_default() += 1;
        }
        if v.get("method").is_none() {
            if let Some(id) = v["id"].as_u64() {
                *answers.entry(id).or_default() += 1;
                if let (Some(s), true) = (p.sessions.get(&id), v["result"]["messageId"].is_string())
                {
                    *accepted.entry(s).or_default() += 1;
                }
            }
        }
    }
    if fed.ids || t.is_passthrough() {
        return;
    }
    assert_eq!(fs_errors, fs_asked, "{out:?}");
    for id in p.sessions.keys() {
        assert_eq!(answers.get(id), Some(&1), "prompt {id}: {out:?}");
    }
    for s in sessions {
        assert_eq!(
            idles.get(s).copied().unwrap_or_default(),
            accepted.get(s).copied().unwrap_or_default(),
            "idle updates of {s}: {out:?}"
        );
    }
    assert_eq!(t.pending(), 0, "{out:?}");
}

/// A v1 client and a v1 agent through both translators,
/// `V1ClientV2Agent` then `V2ClientV1Agent`; what reached either end.
#[derive(Default)]
struct Chain {
    a: V1ClientV2Agent,
    b: V2ClientV1Agent,
}

/// Where a line goes next in a [`Chain`].
enum Hop {
    AFromClient(String),
    AFromAgent(String),
    BFromClient(String),
    BFromAgent(String),
}

impl Chain {
    /// Runs `first` through until nothing is left in flight: the lines that
    /// reached the client and those that reached the agent, parsed.
    fn run(&mut self, first: Hop) -> (Vec<Value>, Vec<Value>) {
        let mut queue = VecDeque::from([first]);
        let (mut client, mut agent) = (Vec::new(), Vec::new());
        while let Some(hop) = queue.pop_front() {
            let (outs, from_a) = match hop {
                Hop::AFromClient(l) => (self.a.client_line(&l), true),
                Hop::AFromAgent(l) => (self.a.agent_line(&l), true),
                Hop::BFromClient(l) => (self.b.client_line(&l), false),
                Hop::BFromAgent(l) => (self.b.agent_line(&l), false),
            };
            for o in outs {
                match (o, from_a) {
                    (Out::Agent(l), true) => queue.push_back(Hop::BFromClient(l)),
                    (Out::Client(l), false) => queue.push_back(Hop::AFromAgent(l)),
                    (Out::Client(l), true) => client.push(serde_json::from_str(&l).unwrap()),
                    (Out::Agent(l), false) => agent.push(serde_json::from_str(&l).unwrap()),
                }
            }
        }
        (client, agent)
    }

    fn client_sends(&mut self, msg: &Value) -> (Vec<Value>, Vec<Value>) {
        self.run(Hop::AFromClient(msg.to_string()))
    }

    fn agent_sends(&mut self, msg: &Value) -> (Vec<Value>, Vec<Value>) {
        self.run(Hop::BFromAgent(msg.to_string()))
    }
}

/// A diff as the composed chain must keep it: `(path, old text, new text)`,
/// from v1's `diff` content or from the text of a git patch (the v1 client
/// sees v2's diff as its patch).
fn diff_meaning(item: &Value) -> Option<Value> {
    if item["type"] == "diff" {
        return Some(json!([item["path"], item["oldText"], item["newText"]]));
    }
    let text = item["content"]["text"].as_str()?;
    if item["type"] != "content" || !text.starts_with("diff --git ") {
        return None;
    }
    let (mut path, mut old, mut new, mut created) = (None, String::new(), String::new(), false);
    // Whether the last line was an added one (the side a "no newline"
    // marker applies to).
    let mut added = false;
    for l in text.split_inclusive('\n') {
        if l == "new file mode 100644\n" {
            created = true;
        } else if let Some(p) = l.strip_prefix("+++ ") {
            path = Some(p.trim_end().to_string());
        } else if l.starts_with("--- ") || l.starts_with("@@ ") || l.starts_with("diff --git ") {
        } else if let Some(rest) = l.strip_prefix('-') {
            old.push_str(rest);
            added = false;
        } else if let Some(rest) = l.strip_prefix('+') {
            new.push_str(rest);
            added = true;
        } else if l.starts_with("\\ No newline") {
            let side = if added { &mut new } else { &mut old };
            side.pop();
        }
    }
    let old = if created { Value::Null } else { old.into() };
    Some(json!([path, old, new]))
}

/// The meaning compared end to end, as the two tables define it; taken
/// out: chunks' `messageId` (v2 requires one, synthesized), a permission
/// request's `title` member (v2's prompt copy, kept by v1 as an unknown
/// member); a diff compared as (path, old text, new text) whether content
/// or patch.
fn meaning(msg: &Value) -> Value {
    let mut m = msg.clone();
    let method = m["method"].as_str().unwrap_or_default().to_string();
    let items = match method.as_str() {
        "session/update" => {
            let u = &mut m["params"]["update"];
            if u["sessionUpdate"]
                .as_str()
                .is_some_and(|k| k.ends_with("_chunk"))
            {
                if let Some(u) = u.as_object_mut() {
                    u.remove("messageId");
                }
            }
            u["content"].as_array_mut()
        }
        "session/request_permission" => {
            if let Some(p) = m["params"].as_object_mut() {
                p.remove("title");
            }
            m["params"]["toolCall"]["content"].as_array_mut()
        }
        _ => None,
    };
    for item in items.into_iter().flatten() {
        if let Some(diff) = diff_meaning(item) {
            *item = json!({"diff": diff});
        }
    }
    m
}

/// What reached the client, without what the table adds there on purpose:
/// the `user_message_chunk` echo of each prompt (v2 acknowledges the user
/// message; the scripted agent sends no user chunks) and the
/// `config_option_update` beside each `current_mode_update` (v2 has only
/// the option; the scripted agent sends no option updates).
fn at_client(lines: Vec<Value>) -> Vec<Value> {
    lines
        .iter()
        .filter(|m| {
            let kind = &m["params"]["update"]["sessionUpdate"];
            kind != "user_message_chunk" && kind != "config_option_update"
        })
        .map(meaning)
        .collect()
}

/// A v1 client in front of `V1ClientV2Agent` in front of `V2ClientV1Agent`
/// in front of a v1 agent: each byte one step of a v1 turn on one of two
/// sessions (`s0` has modes, `s1` none): prompts (one at a time a session:
/// v2's idle update does not name the prompt it ends), the agent's chunks,
/// tool calls with text or diff content and their updates, plans, command
/// lists, mode changes either way, permission requests (with or without a
/// title) and their answers, cancels, the prompt's answer or error, and
/// `fs/*` requests. Asserted after every step: what reached the other end
/// has the same [`meaning`] as what was sent, one to one, and nothing came
/// back, except that an `fs/*` request reaches only the agent, as a
/// `-32601` error (the v1 client's `fs` capability is one `V1ClientV2Agent`
/// drops) and a permission request sent without a title reaches the client
/// with one. At the end both translators hold nothing.
pub fn composed(data: &[u8]) {
    let mut c = Chain::default();
    let text = |t: &str| json!({"type": "text", "text": t});
    let (client, _) = c.client_sends(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
    assert!(client.is_empty());
    let (client, _) = c.agent_sends(
        &json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1,
        "agentCapabilities": {"loadSession": true, "promptCapabilities": {"image": true}},
        "agentInfo": {"name": "a", "version": "1"}}}),
    );
    assert_eq!(
        client[0]["result"]["agentCapabilities"]["loadSession"],
        true
    );
    let modes = json!({"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]});
    for (n, (s, result)) in [
        ("s0", json!({"sessionId": "s0", "modes": modes})),
        ("s1", json!({"sessionId": "s1"})),
    ]
    .into_iter()
    .enumerate()
    {
        c.client_sends(
            &json!({"jsonrpc": "2.0", "id": format!("new{n}"), "method": "session/new",
            "params": {"cwd": "/w", "mcpServers": []}}),
        );
        let (client, _) =
            c.agent_sends(&json!({"jsonrpc": "2.0", "id": format!("new{n}"), "result": result}));
        assert_eq!(client[0]["result"]["sessionId"], s);
        if s == "s0" {
            assert_eq!(client[0]["result"]["modes"], modes);
        }
    }
    let sessions = ["s0", "s1"];
    // Per session: the running prompt's id, the tool calls since its last
    // prompt ended.
    let mut running: [Option<u64>; 2] = [None, None];
    let mut tools: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let mut asks: VecDeque<String> = VecDeque::new();
    let mut n = 0u64;
    for (step, &b) in data.iter().enumerate() {
        n += 1;
        let k = usize::from(b >> 4) % 2;
        let s = sessions[k];
        // Sent by the client (true) or the agent, and what must arrive.
        let (from_client, msg) = match b % 13 {
            0 if running[k].is_none() => {
                running[k] = Some(n);
                (
                    true,
                    json!({"jsonrpc": "2.0", "id": n, "method": "session/prompt",
                    "params": {"sessionId": s, "prompt": [text(&format!("p{n}"))]}}),
                )
            }
            1 => {
                let kind = ["agent_message_chunk", "agent_thought_chunk"][usize::from(b >> 7)];
                (
                    false,
                    update_value(
                        s,
                        json!({"sessionUpdate": kind, "content": text(&format!("c{n}"))}),
                    ),
                )
            }
            2 => {
                let id = format!("t{n}");
                tools[k].push(id.clone());
                let content = if b & 0x80 == 0 {
                    json!({"type": "content", "content": text("out")})
                } else {
                    json!({"type": "diff", "path": "/w/a", "oldText": (b & 0x20 == 0).then_some("x\ny"), "newText": "x\nz\n"})
                };
                (
                    false,
                    update_value(
                        s,
                        json!({"sessionUpdate": "tool_call", "toolCallId": id,
                    "title": "Edit", "kind": "edit", "status": "pending", "content": [content]}),
                    ),
                )
            }
            3 => {
                let Some(id) = tools[k].last() else { continue };
                let status = ["in_progress", "completed"][usize::from(b >> 7)];
                (
                    false,
                    update_value(
                        s,
                        json!({"sessionUpdate": "tool_call_update", "toolCallId": id,
                    "status": status, "content": [{"type": "content", "content": text("more")}]}),
                    ),
                )
            }
            4 => {
                let status = ["pending", "in_progress"][usize::from(b >> 7)];
                (
                    false,
                    update_value(
                        s,
                        json!({"sessionUpdate": "plan", "entries": [
                    {"content": "a", "priority": "high", "status": "completed"},
                    {"content": "b", "priority": "low", "status": status}]}),
                    ),
                )
            }
            5 => {
                let id = format!("perm{n}");
                asks.push_back(id.clone());
                let mut tool =
                    json!({"toolCallId": tools[k].last().cloned().unwrap_or_else(|| "tx".into())});
                if b & 0x80 != 0 {
                    tool["title"] = "Allow?".into();
                }
                let msg = json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission",
                    "params": {"sessionId": s, "toolCall": tool,
                        "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}});
                let (client, agent) = c.agent_sends(&msg);
                assert!(agent.is_empty(), "step {step}: {agent:?}");
                let mut client = at_client(client);
                if b & 0x80 == 0 {
                    // The title v2 requires, synthesized.
                    let got = client
                        .first_mut()
                        .and_then(|m| m["params"]["toolCall"].as_object_mut());
                    assert!(
                        got.and_then(|t| t.remove("title")).is_some(),
                        "step {step}: {client:?}"
                    );
                }
                assert_eq!(client, [meaning(&msg)], "step {step}");
                continue;
            }
            6 => {
                let Some(id) = asks.pop_front() else { continue };
                let outcome = if b & 0x80 == 0 {
                    json!({"outcome": "selected", "optionId": "ok"})
                } else {
                    json!({"outcome": "cancelled"})
                };
                (
                    true,
                    json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}}),
                )
            }
            7 => (
                true,
                json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}}),
            ),
            8 => {
                let Some(id) = running[k].take() else {
                    continue;
                };
                tools[k].clear();
                let msg = match b >> 6 {
                    0 => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "boom"}})
                    }
                    r => {
                        let reason = ["end_turn", "cancelled", "max_tokens"][usize::from(r) - 1];
                        json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": reason}})
                    }
                };
                (false, msg)
            }
            9 => {
                let id = format!("fs{n}");
                let method = ["fs/read_text_file", "terminal/create"][usize::from(b >> 7)];
                let (client, agent) = c
                    .agent_sends(&json!({"jsonrpc": "2.0", "id": id, "method": method,
                    "params": {"sessionId": s, "path": "/w/a", "command": "ls"}}));
                assert!(client.is_empty(), "step {step}: {client:?}");
                assert_eq!(agent.len(), 1, "step {step}");
                assert_eq!(
                    (&agent[0]["id"], &agent[0]["error"]["code"]),
                    (&json!(id), &json!(-32601))
                );
                continue;
            }
            10 if k == 0 => {
                let mode = ["ask", "code"][usize::from(b >> 7)];
                let set = json!({"jsonrpc": "2.0", "id": n, "method": "session/set_mode",
                    "params": {"sessionId": s, "modeId": mode}});
                let (client, agent) = c.client_sends(&set);
                assert!(
                    client.is_empty() && agent == [set.clone()],
                    "step {step}: {client:?} {agent:?}"
                );
                (false, json!({"jsonrpc": "2.0", "id": n, "result": {}}))
            }
            11 => (
                false,
                update_value(
                    s,
                    json!({"sessionUpdate": "available_commands_update", "availableCommands": [
                {"name": "web", "description": "search", "input": {"hint": "query"}}]}),
                ),
            ),
            12 if k == 0 => {
                let mode = ["ask", "code"][usize::from(b >> 7)];
                (
                    false,
                    update_value(
                        s,
                        json!({"sessionUpdate": "current_mode_update", "currentModeId": mode}),
                    ),
                )
            }
            _ => continue,
        };
        // What reached the other end, and what came back.
        let (there, back) = if from_client {
            let (client, agent) = c.client_sends(&msg);
            (agent.iter().map(meaning).collect(), at_client(client))
        } else {
            let (client, agent) = c.agent_sends(&msg);
            (at_client(client), agent)
        };
        assert_eq!(there, [meaning(&msg)], "step {step}: {msg}");
        assert!(back.is_empty(), "step {step}: {msg} came back as {back:?}");
    }
    for (k, id) in running.iter().enumerate() {
        if let Some(id) = id {
            let end = json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}});
            let (client, _) = c.agent_sends(&end);
            assert_eq!(at_client(client), [end], "session {k}");
        }
    }
    for id in asks {
        c.client_sends(
            &json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": {"outcome": "cancelled"}}}),
        );
    }
    assert_eq!((c.a.pending(), c.b.pending()), (0, 0));
}

fn update_value(session: &str, update: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update",
           "params": {"sessionId": session, "update": update}})
}
