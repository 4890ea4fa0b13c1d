//! The invariant behind the `turn_view` fuzz target, shared with
//! `tests/fuzz_corpus.rs` (which replays the committed seeds).
//!
//! Two input forms:
//! - **Lines** (input starts with `{` or `begin`): one JSON-RPC message a
//!   line, as a client sees them: `session/update` notifications,
//!   `session/request_permission` requests, responses (a result with
//!   `outcome` answers a permission request, one with `stopReason` ends the
//!   turn); a line `begin` starts a turn. Undecodable lines are skipped.
//! - **Templates** (anything else): byte 0 picks the limits (tiny ones, to
//!   hit every bound, or the defaults), then each op is an opcode byte and
//!   its parameters: chunks of the three kinds with a few message ids,
//!   `tool_call` / `tool_call_update` with any subset of fields (statuses,
//!   kinds, explanation blocks, diffs, locations, raw JSON) on a few ids,
//!   permission requests and outcomes on a few request ids, prompt
//!   responses, plans, modes, usage, other and unknown updates.
//!
//! Asserted after every push: no panic; at most 6 events; every text chunk
//! gives exactly one delta with its text; the retained byte counts equal the
//! sums over what is retained and stay within the limits; item counts stay
//! within the limits; an update for an id the view does not track is
//! reported as `UnknownToolCall` and changes nothing; every limit problem
//! reports a non-zero amount. At the end the concatenated deltas equal the
//! concatenated input text of each kind.
#![allow(dead_code)]

use acp_codec::acp::{
    Message, NotificationParams, PromptResponse, RequestId, RequestParams,
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification, ToolCallStatus,
};
use acp_codec::turn::{Events, MessageKind, TurnEvent, TurnLimits, TurnView};
use acp_codec::TurnError;
use serde_json::{json, Value};

pub fn check(data: &[u8]) {
    if data.starts_with(b"{") || data.starts_with(b"begin") {
        check_lines(&String::from_utf8_lossy(data));
    } else {
        check_templates(data);
    }
}

/// Checks a push's events and the view after it; returns the text deltas.
fn after(events: Events<'_>, texts: &mut [String; 3]) -> Vec<String> {
    let mut deltas = Vec::new();
    let mut n = 0;
    for e in events {
        n += 1;
        match e {
            TurnEvent::TextDelta {
                kind,
                text,
                message,
                ..
            } => {
                assert_ne!(kind, MessageKind::Thought);
                texts[usize::from(kind == MessageKind::Agent)].push_str(text);
                if let Some(m) = message {
                    assert_eq!(m.kind(), kind);
                }
                deltas.push(text.to_owned());
            }
            TurnEvent::ThoughtDelta { text, message, .. } => {
                texts[2].push_str(text);
                if let Some(m) = message {
                    assert_eq!(m.kind(), MessageKind::Thought);
                }
                deltas.push(text.to_owned());
            }
            TurnEvent::Problem(p) => {
                if let TurnError::LimitExceeded { dropped, .. } = p.error {
                    assert!(dropped > 0, "{p}");
                }
                assert!(!p.to_string().is_empty());
            }
            _ => {}
        }
    }
    assert!(n <= 6, "{n} events from one push");
    deltas
}

/// The view's bounds and byte accounting.
pub fn check_view(view: &TurnView) {
    let limits = view.limits();
    let mut text = 0usize;
    for m in view.messages().iter().chain(view.thoughts()) {
        text += m.text().len() + m.id().map_or(0, str::len);
    }
    for m in view.messages() {
        assert_ne!(m.kind(), MessageKind::Thought);
    }
    for m in view.thoughts() {
        assert_eq!(m.kind(), MessageKind::Thought);
    }
    assert_eq!(view.text_bytes(), text);
    assert!(text <= limits.max_text_bytes);
    assert!(view.messages().len() + view.thoughts().len() <= limits.max_messages);
    let mut tool = 0usize;
    for t in view.tool_calls() {
        let floor = t.id().len()
            + t.raw_title().len()
            + t.name().map_or(0, str::len)
            + t.explanation().map_or(0, str::len)
            + t.raw_input().map_or(0, |r| r.get().len())
            + t.raw_output().map_or(0, |r| r.get().len())
            + match t.status() {
                ToolCallStatus::Unknown(s) => s.len(),
                _ => 0,
            }
            + t.locations().iter().map(|l| l.path.len()).sum::<usize>();
        assert!(
            t.retained_bytes() >= floor,
            "{} < {floor}",
            t.retained_bytes()
        );
        // The parsed title never panics and is made of slices.
        let title = t.title();
        let _ = (title.command(), title.description(), title.working_dir());
        tool += t.retained_bytes();
    }
    for p in view.permissions() {
        assert!(p.retained_bytes() >= p.tool_call_id().len());
        tool += p.retained_bytes();
    }
    assert_eq!(view.tool_bytes(), tool);
    assert!(tool <= limits.max_tool_bytes);
    assert!(view.tool_calls().len() <= limits.max_tool_calls);
    assert!(view.permissions().len() <= limits.max_permissions);
    let mut ids: Vec<&str> = view.tool_calls().iter().map(|t| t.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len(),
        view.tool_calls().len(),
        "a tool call id tracked twice"
    );
}

fn check_lines(text: &str) {
    let mut view = TurnView::new(TurnLimits::default().with_max_text_bytes(1 << 16));
    let mut texts: [String; 3] = Default::default();
    let mut input: [String; 3] = Default::default();
    for line in text.lines() {
        if line == "begin" {
            view.begin_turn();
            check_view(&view);
            continue;
        }
        let Ok(msg) = Message::decode(line) else {
            continue;
        };
        match &msg {
            Message::Notification(n) => {
                let Ok(NotificationParams::SessionUpdate(u)) = n.typed() else {
                    continue;
                };
                record_input(&u, &mut input);
                let deltas = after(view.push_update(&u), &mut texts);
                assert_deltas(&u, &deltas);
            }
            Message::Request(r) => {
                let Ok(RequestParams::RequestPermission(p)) = r.typed() else {
                    continue;
                };
                after(view.push_permission_request(&r.id, &p), &mut texts);
            }
            Message::Response(r) => {
                if let Ok(p) = r.result.parse::<RequestPermissionResponse<'_>>() {
                    after(view.push_permission_outcome(&r.id, &p), &mut texts);
                } else if let Ok(p) = r.result.parse::<PromptResponse<'_>>() {
                    after(view.push_prompt_response(&p), &mut texts);
                }
            }
            _ => {}
        }
        check_view(&view);
    }
    assert_eq!(texts, input);
}

fn record_input(u: &SessionNotification<'_>, input: &mut [String; 3]) {
    use acp_codec::acp::{ContentBlock, SessionUpdate};
    let (i, chunk) = match &u.update {
        SessionUpdate::UserMessageChunk(c) => (0, c),
        SessionUpdate::AgentMessageChunk(c) => (1, c),
        SessionUpdate::AgentThoughtChunk(c) => (2, c),
        _ => return,
    };
    if let ContentBlock::Text(t) = &chunk.content {
        input[i].push_str(&t.text);
    }
}

fn assert_deltas(u: &SessionNotification<'_>, deltas: &[String]) {
    let mut input: [String; 3] = Default::default();
    record_input(u, &mut input);
    let text = input.concat();
    let is_text_chunk = matches!(
        &u.update,
        acp_codec::acp::SessionUpdate::UserMessageChunk(c)
        | acp_codec::acp::SessionUpdate::AgentMessageChunk(c)
        | acp_codec::acp::SessionUpdate::AgentThoughtChunk(c)
            if matches!(c.content, acp_codec::acp::ContentBlock::Text(_))
    );
    if is_text_chunk {
        assert_eq!(deltas, [text]);
    } else {
        assert!(deltas.is_empty());
    }
}

/// Reads parameters from the fuzz input; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[usize::from(self.byte()) % items.len()]
    }

    fn text(&mut self) -> String {
        let len = usize::from(self.byte() % 48);
        let len = len.min(self.0.len());
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        String::from_utf8_lossy(head).into_owned()
    }
}

const TOOL_IDS: [&str; 5] = ["t0", "t1", "t2", "run_shell_command-1761234567890-3", "é"];
const MESSAGE_IDS: [Option<&str>; 4] = [None, Some("m1"), Some("m2"), Some("ü")];
const STATUSES: [Option<&str>; 6] = [
    None,
    Some("pending"),
    Some("in_progress"),
    Some("completed"),
    Some("failed"),
    Some("stalled"),
];
const KINDS: [Option<&str>; 5] = [
    None,
    Some("execute"),
    Some("read"),
    Some("edit"),
    Some("teleport"),
];
const EXPLANATIONS: [&str; 4] = [
    "[in src] (List files (detailed))",
    "[current working directory /tmp/p] (Wait) [background]",
    "{\"sql\":\"select 1\"}",
    "not an explanation",
];

fn content(b: &mut Bytes<'_>) -> Value {
    let n = b.byte() % 4;
    let items: Vec<Value> = (0..n)
        .map(|_| match b.byte() % 5 {
            0 => json!({"type":"content","content":{"type":"text","text": b.pick(&EXPLANATIONS)}}),
            1 => json!({"type":"content","content":{"type":"text","text": b.text()}}),
            2 => json!({"type":"diff","path": b.text(),"oldText": b.text(),"newText": b.text()}),
            3 => json!({"type":"terminal","terminalId": b.text()}),
            _ => json!({"type":"hologram","x": b.text()}),
        })
        .collect();
    Value::Array(items)
}

/// A tool call object with the fields the mask selects.
fn tool_fields(b: &mut Bytes<'_>, id: &str, with_title: bool) -> Value {
    let mask = b.byte();
    let mut o = json!({"toolCallId": id});
    if with_title || mask & 1 != 0 {
        o["title"] = json!(match b.byte() % 3 {
            0 => "ls -la".to_owned(),
            1 => "ls [in a] (b) [background]".to_owned(),
            _ => b.text(),
        });
    }
    if mask & 2 != 0 {
        if let Some(s) = b.pick(&STATUSES) {
            o["status"] = json!(s);
        }
    }
    if mask & 4 != 0 {
        if let Some(k) = b.pick(&KINDS) {
            o["kind"] = json!(k);
        }
    }
    if mask & 8 != 0 {
        o["content"] = content(b);
    }
    if mask & 16 != 0 {
        let n = b.byte() % 3;
        o["locations"] = Value::Array(
            (0..n)
                .map(|_| json!({"path": b.text(), "line": 3}))
                .collect(),
        );
    }
    if mask & 32 != 0 {
        o["rawInput"] = json!({"command": b.text()});
    }
    if mask & 64 != 0 {
        o["rawOutput"] = json!([b.text()]);
    }
    if mask & 128 != 0 {
        o["name"] = json!(b.text());
    }
    o
}

fn request_id(b: &mut Bytes<'_>) -> RequestId<'static> {
    match b.byte() % 4 {
        3 => RequestId::from("p"),
        n => RequestId::Number(i64::from(n)),
    }
}

fn limits_for(selector: u8, b: &mut Bytes<'_>) -> TurnLimits {
    if selector & 1 == 0 {
        return TurnLimits::default();
    }
    TurnLimits::default()
        .with_max_tool_calls(usize::from(b.byte() % 6))
        .with_max_tool_bytes(usize::from(b.byte()) * 4)
        .with_max_messages(usize::from(b.byte() % 6))
        .with_max_text_bytes(usize::from(b.byte()) * 2)
        .with_max_permissions(usize::from(b.byte() % 4))
}

fn check_templates(data: &[u8]) {
    let mut b = Bytes(data);
    let selector = b.byte();
    let mut view = TurnView::new(limits_for(selector, &mut b));
    let mut texts: [String; 3] = Default::default();
    let mut input: [String; 3] = Default::default();
    let mut ops = 0;
    while !b.0.is_empty() && ops < 4096 {
        ops += 1;
        let op = b.byte() % 14;
        match op {
            0 => view.begin_turn(),
            1..=4 => {
                let kind = [
                    "user_message_chunk",
                    "agent_message_chunk",
                    "agent_thought_chunk",
                ][usize::from(op - 1) % 3];
                let kind = if op == 4 {
                    b.pick(&[
                        "user_message_chunk",
                        "agent_message_chunk",
                        "agent_thought_chunk",
                    ])
                } else {
                    kind
                };
                let mut chunk = if op == 4 {
                    json!({"sessionUpdate": kind, "content": {"type":"resource_link","name":"n","uri": b.text()}})
                } else {
                    json!({"sessionUpdate": kind, "content": {"type":"text","text": b.text()}})
                };
                if let Some(id) = b.pick(&MESSAGE_IDS) {
                    chunk["messageId"] = json!(id);
                }
                push_update(&mut view, chunk, &mut texts, &mut input);
            }
            5 => {
                let id = b.pick(&TOOL_IDS);
                let mut o = tool_fields(&mut b, id, true);
                o["sessionUpdate"] = json!("tool_call");
                push_update(&mut view, o, &mut texts, &mut input);
            }
            6 => {
                let id = b.pick(&TOOL_IDS);
                let mut o = tool_fields(&mut b, id, false);
                o["sessionUpdate"] = json!("tool_call_update");
                let known = view.tool_call(id).is_some();
                let before = view.tool_calls().len();
                let line = json!({"sessionId":"s","update": o}).to_string();
                let u: SessionNotification<'_> = serde_json::from_str(&line).unwrap();
                let events: Vec<String> = view.push_update(&u).map(|e| format!("{e:?}")).collect();
                if !known {
                    assert!(
                        events.iter().any(|e| e.contains("UnknownToolCall")),
                        "{events:?}"
                    );
                    assert_eq!(view.tool_calls().len(), before);
                }
            }
            7 => {
                let rid = request_id(&mut b);
                let id = b.pick(&TOOL_IDS);
                let call = tool_fields(&mut b, id, false);
                let n = b.byte() % 3;
                let options: Vec<Value> = (0..n)
                    .map(|i| json!({"optionId": format!("o{i}"), "name": b.text(), "kind": "allow_once"}))
                    .collect();
                let params =
                    json!({"sessionId":"s","toolCall": call,"options": options}).to_string();
                let request: RequestPermissionRequest<'_> = serde_json::from_str(&params).unwrap();
                let events = view.push_permission_request(&rid, &request);
                after(events, &mut texts);
            }
            8 => {
                let rid = request_id(&mut b);
                let outcome = match b.byte() % 3 {
                    0 => json!({"outcome": {"outcome":"selected","optionId": b.pick(&["o0","o1","zz"])}}),
                    1 => json!({"outcome": {"outcome":"cancelled"}}),
                    _ => json!({"outcome": {"outcome":"deferred","why": b.text()}}),
                }
                .to_string();
                let response: RequestPermissionResponse<'_> =
                    serde_json::from_str(&outcome).unwrap();
                after(view.push_permission_outcome(&rid, &response), &mut texts);
            }
            9 => {
                let reason = b.pick(&["end_turn", "cancelled", "max_tokens", "bored"]);
                let text = json!({"stopReason": reason}).to_string();
                let response: PromptResponse<'_> = serde_json::from_str(&text).unwrap();
                after(view.push_prompt_response(&response), &mut texts);
                assert!(view.is_finished());
            }
            10 => {
                let n = b.byte() % 4;
                let entries: Vec<Value> = (0..n)
                    .map(|_| json!({"content": b.text(), "priority":"high", "status":"pending"}))
                    .collect();
                push_update(
                    &mut view,
                    json!({"sessionUpdate":"plan","entries": entries}),
                    &mut texts,
                    &mut input,
                );
            }
            11 => push_update(
                &mut view,
                json!({"sessionUpdate":"current_mode_update","currentModeId": b.text()}),
                &mut texts,
                &mut input,
            ),
            12 => push_update(
                &mut view,
                json!({"sessionUpdate":"usage_update","used": b.byte(),"size": 1000}),
                &mut texts,
                &mut input,
            ),
            _ => {
                let u = if b.byte() % 2 == 0 {
                    json!({"sessionUpdate":"available_commands_update","availableCommands":[{"name": b.text(),"description":"d"}]})
                } else {
                    json!({"sessionUpdate":"weather_report","sunny": true})
                };
                push_update(&mut view, u, &mut texts, &mut input);
            }
        }
        check_view(&view);
    }
    assert_eq!(texts, input);
}

fn push_update(
    view: &mut TurnView,
    update: Value,
    texts: &mut [String; 3],
    input: &mut [String; 3],
) {
    let line = json!({"sessionId":"s","update": update}).to_string();
    let u: SessionNotification<'_> = serde_json::from_str(&line).unwrap();
    record_input(&u, input);
    let deltas = after(view.push_update(&u), texts);
    assert_deltas(&u, &deltas);
}
