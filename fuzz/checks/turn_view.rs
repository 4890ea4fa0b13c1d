//! The invariant behind the `turn_view` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs` (which replays the committed seeds).
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
//!
//! The sums are kept incrementally (`Shadow`): a push re-measures only the
//! items its events point at and the new ones, so checking a turn is linear
//! in its pushes rather than quadratic. The whole view is checked from
//! scratch before a new turn, after pushes 1, 2, 4, 8, … and at the end,
//! against the cached sums.
#![allow(dead_code)]

use acp_codec::acp::Mode;
use acp_codec::acp::{
    Message, NotificationParams, PromptResponse, RequestId, RequestParams,
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification, ToolCallStatus,
    Typed,
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

/// Checks a push's events, noting what they touched; returns the text
/// deltas.
fn after(events: Events<'_>, texts: &mut [String; 3], touched: &mut Touched) -> Vec<String> {
    let mut deltas = Vec::new();
    let mut n = 0;
    for e in events {
        n += 1;
        touched.note(&e);
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

/// The items a push's events point at, by address (turned into indices
/// once the events are gone).
#[derive(Default)]
struct Touched {
    messages: Vec<usize>,
    tool_calls: Vec<usize>,
    permissions: Vec<usize>,
}

impl Touched {
    fn note(&mut self, e: &TurnEvent<'_>) {
        match e {
            TurnEvent::TextDelta {
                message: Some(m), ..
            }
            | TurnEvent::ThoughtDelta {
                message: Some(m), ..
            } => self.messages.push(addr(*m)),
            TurnEvent::ToolCallStarted(t)
            | TurnEvent::ToolCallUpdated(t)
            | TurnEvent::ToolCallFinished(t) => self.tool_calls.push(addr(*t)),
            TurnEvent::PermissionRequested {
                permission,
                tool_call,
            }
            | TurnEvent::PermissionResolved {
                permission,
                tool_call,
            } => {
                self.permissions.push(addr(*permission));
                self.tool_calls.extend(tool_call.map(addr));
            }
            _ => {}
        }
    }
}

fn addr<T>(item: &T) -> usize {
    item as *const T as usize
}

/// The index in `items` of the item at address `addr`.
fn index_of<T>(items: &[T], addr: usize) -> Option<usize> {
    let size = std::mem::size_of::<T>().max(1);
    let offset = addr.checked_sub(items.as_ptr() as usize)?;
    (offset % size == 0 && offset / size < items.len()).then_some(offset / size)
}

/// One list of the view (messages, thoughts, tool calls, permissions) as
/// cached contributions to a byte sum, with their total.
#[derive(Default)]
struct Cached {
    bytes: Vec<usize>,
    ids: Vec<String>,
    sum: usize,
}

impl Cached {
    /// Brings the cache up to date for `items`: a shrunk list (a new turn)
    /// is rebuilt; otherwise only the `touched` and new items are measured
    /// (and checked by `each`), and the sum moves by their difference.
    fn update<T>(
        &mut self,
        items: &[T],
        touched: &[usize],
        mut each: impl FnMut(&T) -> (usize, String),
    ) {
        if items.len() < self.bytes.len() {
            *self = Self::default();
        }
        let old = self.bytes.len();
        let mut dirty: Vec<usize> = touched.iter().filter_map(|&a| index_of(items, a)).collect();
        dirty.extend(old..items.len());
        dirty.sort_unstable();
        dirty.dedup();
        for i in dirty {
            let (bytes, id) = each(&items[i]);
            if i < old {
                assert_eq!(self.ids[i], id, "item {i} changed its id");
                self.sum = self.sum - self.bytes[i] + bytes;
                self.bytes[i] = bytes;
            } else {
                self.sum += bytes;
                self.bytes.push(bytes);
                self.ids.push(id);
            }
        }
    }
}

/// The view's byte sums kept incrementally: after a push only the items
/// its events touched and the new ones are measured and checked, so a push
/// costs the size of what it changed, not of the whole turn. The view's
/// counters must equal the cached sums after every push. The whole view is
/// checked from scratch (`check_view`) at a new turn, after pushes 1, 2, 4,
/// 8, … and at the end, where the cached sums must equal recomputed ones:
/// a change no event reported cannot hide for long.
#[derive(Default)]
struct Shadow {
    messages: Cached,
    thoughts: Cached,
    tool_calls: Cached,
    permissions: Cached,
    tool_ids: std::collections::HashSet<String>,
    pushes: u64,
}

impl Shadow {
    fn check(&mut self, view: &TurnView, touched: &mut Touched) {
        let message = |m: &acp_codec::turn::MessageState| {
            (m.text().len() + m.id().map_or(0, str::len), String::new())
        };
        self.messages
            .update(view.messages(), &touched.messages, |m| {
                assert_ne!(m.kind(), MessageKind::Thought);
                message(m)
            });
        self.thoughts
            .update(view.thoughts(), &touched.messages, |m| {
                assert_eq!(m.kind(), MessageKind::Thought);
                message(m)
            });
        let old_tools = if view.tool_calls().len() < self.tool_calls.bytes.len() {
            self.tool_ids.clear();
            0
        } else {
            self.tool_calls.bytes.len()
        };
        let ids = &mut self.tool_ids;
        self.tool_calls
            .update(view.tool_calls(), &touched.tool_calls, |t| {
                check_tool_call(t);
                (t.retained_bytes(), t.id().to_owned())
            });
        for id in &self.tool_calls.ids[old_tools..] {
            assert!(ids.insert(id.clone()), "a tool call id tracked twice: {id}");
        }
        self.permissions
            .update(view.permissions(), &touched.permissions, |p| {
                assert!(p.retained_bytes() >= p.tool_call_id().len());
                (p.retained_bytes(), String::new())
            });
        *touched = Touched::default();

        let limits = view.limits();
        let text = self.messages.sum + self.thoughts.sum;
        assert_eq!(view.text_bytes(), text);
        assert!(text <= limits.max_text_bytes);
        assert!(view.messages().len() + view.thoughts().len() <= limits.max_messages);
        let tool = self.tool_calls.sum + self.permissions.sum;
        assert_eq!(view.tool_bytes(), tool);
        assert!(tool <= limits.max_tool_bytes);
        assert!(view.tool_calls().len() <= limits.max_tool_calls);
        assert!(view.permissions().len() <= limits.max_permissions);

        self.pushes += 1;
        if self.pushes.is_power_of_two() {
            self.full(view);
        }
    }

    /// Everything from scratch, and the cached sums against it.
    fn full(&self, view: &TurnView) {
        check_view(view);
        let mut fresh = Shadow::default();
        fresh.check_sums_only(view);
        assert_eq!(
            fresh.messages.sum, self.messages.sum,
            "cached message bytes stale"
        );
        assert_eq!(
            fresh.thoughts.sum, self.thoughts.sum,
            "cached thought bytes stale"
        );
        assert_eq!(
            fresh.tool_calls.bytes, self.tool_calls.bytes,
            "cached tool bytes stale"
        );
        assert_eq!(
            fresh.permissions.bytes, self.permissions.bytes,
            "cached permission bytes stale"
        );
    }

    fn check_sums_only(&mut self, view: &TurnView) {
        let message = |m: &acp_codec::turn::MessageState| {
            (m.text().len() + m.id().map_or(0, str::len), String::new())
        };
        self.messages.update(view.messages(), &[], message);
        self.thoughts.update(view.thoughts(), &[], message);
        self.tool_calls.update(view.tool_calls(), &[], |t| {
            (t.retained_bytes(), String::new())
        });
        self.permissions.update(view.permissions(), &[], |p| {
            (p.retained_bytes(), String::new())
        });
    }
}

/// One tool call: its bytes cover its fields; its title parses.
fn check_tool_call(t: &acp_codec::turn::ToolCallState) {
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
}

/// The view's bounds and byte accounting, recomputed from scratch.
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
        check_tool_call(t);
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
    let (mut shadow, mut touched) = (Shadow::default(), Touched::default());
    for line in text.lines() {
        if line == "begin" {
            check_view(&view);
            view.begin_turn();
            shadow.check(&view, &mut touched);
            continue;
        }
        let Ok(msg) = Message::decode(line) else {
            continue;
        };
        match &msg {
            Message::Notification(n) => {
                let Ok(NotificationParams::SessionUpdate(u)) =
                    n.typed(Mode::Lenient).map(Typed::into_value)
                else {
                    continue;
                };
                record_input(&u, &mut input);
                let deltas = after(view.push_update(&u), &mut texts, &mut touched);
                assert_deltas(&u, &deltas);
            }
            Message::Request(r) => {
                let Ok(RequestParams::RequestPermission(p)) =
                    r.typed(Mode::Lenient).map(Typed::into_value)
                else {
                    continue;
                };
                after(
                    view.push_permission_request(&r.id, &p),
                    &mut texts,
                    &mut touched,
                );
            }
            Message::Response(r) => {
                if let Ok(p) = r.result.parse::<RequestPermissionResponse<'_>>() {
                    after(
                        view.push_permission_outcome(&r.id, &p),
                        &mut texts,
                        &mut touched,
                    );
                } else if let Ok(p) = r.result.parse::<PromptResponse<'_>>() {
                    after(view.push_prompt_response(&p), &mut texts, &mut touched);
                }
            }
            _ => {}
        }
        shadow.check(&view, &mut touched);
    }
    shadow.full(&view);
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
    let (mut shadow, mut touched) = (Shadow::default(), Touched::default());
    let mut ops = 0;
    while !b.0.is_empty() && ops < 4096 {
        ops += 1;
        let op = b.byte() % 14;
        match op {
            0 => {
                check_view(&view);
                view.begin_turn();
            }
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
                push_update(&mut view, chunk, &mut texts, &mut input, &mut touched);
            }
            5 => {
                let id = b.pick(&TOOL_IDS);
                let mut o = tool_fields(&mut b, id, true);
                o["sessionUpdate"] = json!("tool_call");
                push_update(&mut view, o, &mut texts, &mut input, &mut touched);
            }
            6 => {
                let id = b.pick(&TOOL_IDS);
                let mut o = tool_fields(&mut b, id, false);
                o["sessionUpdate"] = json!("tool_call_update");
                let known = view.tool_call(id).is_some();
                let before = view.tool_calls().len();
                let line = json!({"sessionId":"s","update": o}).to_string();
                let u: SessionNotification<'_> = serde_json::from_str(&line).unwrap();
                let events: Vec<String> = view
                    .push_update(&u)
                    .map(|e| {
                        touched.note(&e);
                        format!("{e:?}")
                    })
                    .collect();
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
                after(events, &mut texts, &mut touched);
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
                after(
                    view.push_permission_outcome(&rid, &response),
                    &mut texts,
                    &mut touched,
                );
            }
            9 => {
                let reason = b.pick(&["end_turn", "cancelled", "max_tokens", "bored"]);
                let text = json!({"stopReason": reason}).to_string();
                let response: PromptResponse<'_> = serde_json::from_str(&text).unwrap();
                after(
                    view.push_prompt_response(&response),
                    &mut texts,
                    &mut touched,
                );
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
                    &mut touched,
                );
            }
            11 => push_update(
                &mut view,
                json!({"sessionUpdate":"current_mode_update","currentModeId": b.text()}),
                &mut texts,
                &mut input,
                &mut touched,
            ),
            12 => push_update(
                &mut view,
                json!({"sessionUpdate":"usage_update","used": b.byte(),"size": 1000}),
                &mut texts,
                &mut input,
                &mut touched,
            ),
            _ => {
                let u = if b.byte() % 2 == 0 {
                    json!({"sessionUpdate":"available_commands_update","availableCommands":[{"name": b.text(),"description":"d"}]})
                } else {
                    json!({"sessionUpdate":"weather_report","sunny": true})
                };
                push_update(&mut view, u, &mut texts, &mut input, &mut touched);
            }
        }
        shadow.check(&view, &mut touched);
    }
    shadow.full(&view);
    assert_eq!(texts, input);
}

fn push_update(
    view: &mut TurnView,
    update: Value,
    texts: &mut [String; 3],
    input: &mut [String; 3],
    touched: &mut Touched,
) {
    let line = json!({"sessionId":"s","update": update}).to_string();
    let u: SessionNotification<'_> = serde_json::from_str(&line).unwrap();
    record_input(&u, input);
    let deltas = after(view.push_update(&u), texts, touched);
    assert_deltas(&u, &deltas);
}
