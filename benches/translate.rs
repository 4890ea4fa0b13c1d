//! The v1↔v2 translators' cost a message against relaying the line
//! unchanged (a copy): one turn's lines of each direction's agent (chunks,
//! tool calls with content, a plan, a permission request, the prompt's
//! end), fed through a translator that has accepted the prompt.

use std::hint::black_box;

use acp_codec::translate::{Out, Translator, V1ClientV2Agent, V2ClientV1Agent};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::{json, Value};

fn update(update: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "session/update",
           "params": {"sessionId": "s", "update": update}})
    .to_string()
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// A v1 agent's turn.
fn v1_turn() -> Vec<String> {
    let mut lines: Vec<String> = (0..8)
        .map(|i| update(json!({"sessionUpdate": "agent_message_chunk", "content": text(&format!("word {i} of the answer "))})))
        .collect();
    lines.extend([
        update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.rs", "kind": "edit", "status": "pending",
            "content": [{"type": "diff", "path": "/w/a.rs", "oldText": "fn a() {}\n", "newText": "fn a() -> u8 { 1 }\n"}]})),
        update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
            "content": [{"type": "content", "content": text("done")}]})),
        update(json!({"sessionUpdate": "plan", "entries": [{"content": "edit", "priority": "high", "status": "completed"}]})),
        json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {"sessionId": "s",
            "toolCall": {"toolCallId": "t2", "title": "Write b.rs"},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}})
        .to_string(),
    ]);
    lines
}

/// A v2 agent's turn.
fn v2_turn() -> Vec<String> {
    let mut lines: Vec<String> = (0..8)
        .map(|i| update(json!({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text(&format!("word {i} of the answer "))})))
        .collect();
    lines.extend([
        update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Edit a.rs", "kind": "edit", "status": "pending"})),
        update(json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1", "content": {"type": "content", "content": text("done")}})),
        update(json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": [{"content": "edit", "priority": "high", "status": "completed"}]}})),
        json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {"sessionId": "s",
            "title": "Write b.rs?", "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t2"}},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}})
        .to_string(),
    ]);
    lines
}

const PROMPT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}"#;

fn v2_client() -> V2ClientV1Agent {
    let mut t = V2ClientV1Agent::new();
    t.client_line(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}"#);
    t.agent_line(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#);
    t.client_line(PROMPT);
    t
}

fn v1_client() -> V1ClientV2Agent {
    let mut t = V1ClientV2Agent::new();
    t.client_line(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
    );
    t.agent_line(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{}}}}"#);
    t.client_line(PROMPT);
    t
}

fn bench(c: &mut Criterion) {
    for (name, lines) in [
        ("v1 agent to v2 client", v1_turn()),
        ("v2 agent to v1 client", v2_turn()),
    ] {
        let mut g = c.benchmark_group(format!("translate/{name}"));
        g.throughput(Throughput::Elements(lines.len() as u64));
        g.bench_function("relay unchanged (anchor)", |b| {
            b.iter(|| {
                for line in &lines {
                    black_box(Out::Client(black_box(line.as_str()).to_string()));
                }
            })
        });
        // A fresh translator each turn: the state of one turn, not of
        // thousands (tool content accumulates per tool call).
        let fresh = || {
            if name.starts_with("v1 agent") {
                Translator::V2ClientV1Agent(v2_client())
            } else {
                Translator::V1ClientV2Agent(v1_client())
            }
        };
        g.bench_function("translate", |b| {
            b.iter_batched(
                fresh,
                |mut t| {
                    for line in &lines {
                        black_box(t.agent_line(black_box(line)));
                    }
                    t
                },
                BatchSize::SmallInput,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
