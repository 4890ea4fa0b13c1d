//! `remote::parts::Router`, the multiplexer a bridge runs, sans-IO, each path with
//! its anchor in the same group:
//!
//! - `agent_to_client`: `Router::handle_agent` routing a `session/update` line
//!   (a 1 MiB tool output, and a 200-byte message chunk) to its session's
//!   owner, against `Message::decode` of the same line alone (the check every
//!   relayed line gets).
//! - `client_to_agent`: `Router::handle_client` checking, id-rewriting and
//!   re-encoding a `session/prompt` (64 KiB of text) and answering it,
//!   against `encode_raw_line` (validate and copy) of the same text.
//! - `gate`: `Gate::check` of the same prompt on an initialized connection
//!   (the RFD's per-frame rules), against `Message::decode` alone.
//! - `replay`: a 1 KiB update for a session whose client left, through
//!   `Server::handle_agent_line` (routed, then kept in the session's log of
//!   what it missed, whose budget is full: every one also drops the
//!   oldest), against `Router::handle_agent` of it alone (routing, the
//!   line handed out as missed) and copying the same text into a `String`.

use std::hint::black_box;
use std::time::Duration;

use acp_codec::acp::Message;
use acp_codec::encode_raw_line;
use acp_codec::remote::parts::{Checked, ClientId, Gate, Out, Router};
use acp_codec::remote::{Action, Ending, Principal, Server, ServerConfig};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;

/// A router with one client owning session `s1`.
fn router() -> (Router, ClientId) {
    let mut r = Router::new();
    let mut out = Vec::new();
    r.agent_started(1, 0, &mut out);
    let c = r.connect();
    r.handle_client(
        c,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
        Duration::ZERO,
        &mut out,
    );
    r.handle_agent(
        r#"{"jsonrpc":"2.0","id":0,"result":{"sessionId":"s1"}}"#,
        Duration::ZERO,
        &mut out,
    );
    (r, c)
}

fn tool_output(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 32);
    let mut i = 0u64;
    while s.len() < bytes {
        s.push_str(&format!(
            "src/module_{i}/file.rs:{}: match found\n",
            i * 31 % 977
        ));
        i += 1;
    }
    s.truncate(bytes);
    s
}

fn update_line(text: &str) -> String {
    json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{
        "sessionUpdate":"tool_call_update","toolCallId":"run_shell_command-1-0","status":"completed",
        "content":[{"type":"content","content":{"type":"text","text":text}}]}}})
    .to_string()
}

fn agent_to_client(c: &mut Criterion) {
    let mut g = c.benchmark_group("bridge_router/agent_to_client");
    for (name, line) in [
        ("1MiB", update_line(&tool_output(1 << 20))),
        (
            "200B",
            update_line("Here is the plan: read the README first."),
        ),
    ] {
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_function(format!("anchor Message::decode {name}"), |b| {
            b.iter(|| black_box(Message::decode(black_box(&line)).is_ok()))
        });
        let (mut r, client) = router();
        let mut out = Vec::new();
        g.bench_function(format!("Router::handle_agent {name}"), |b| {
            b.iter(|| {
                out.clear();
                r.handle_agent(black_box(&line), Duration::ZERO, &mut out);
                assert!(matches!(out.first(), Some(Out::Client { to, .. }) if *to == client));
            })
        });
    }
    g.finish();
}

fn client_to_agent(c: &mut Criterion) {
    let mut g = c.benchmark_group("bridge_router/client_to_agent");
    let prompt = prompt_text();
    g.throughput(Throughput::Bytes(prompt.len() as u64));
    let mut line = Vec::with_capacity(prompt.len() + 1);
    g.bench_function("anchor encode_raw_line 64KiB", |b| {
        b.iter(|| {
            line.clear();
            black_box(encode_raw_line(black_box(&prompt), &mut line).is_ok())
        })
    });
    let (mut r, client) = router();
    let mut out = Vec::new();
    g.bench_function("Router::handle_client 64KiB", |b| {
        b.iter(|| {
            out.clear();
            r.handle_client(client, black_box(&prompt), Duration::ZERO, &mut out);
            let Some(Out::Agent(sent)) = out.first() else {
                panic!("not forwarded")
            };
            let sent = sent.to_vec();
            // Answer it, so the pending table stays empty.
            let id = Message::decode(std::str::from_utf8(&sent[..sent.len() - 1]).unwrap())
                .unwrap()
                .id()
                .unwrap()
                .to_owned_id();
            let reply =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"end_turn"}}}}"#);
            out.clear();
            r.handle_agent(&reply, Duration::ZERO, &mut out);
        })
    });
    g.finish();
}

fn prompt_text() -> String {
    json!({"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1",
        "prompt":[{"type":"text","text": tool_output(64 << 10)}]}})
    .to_string()
}

fn gate(c: &mut Criterion) {
    let mut g = c.benchmark_group("bridge_router/gate");
    let prompt = prompt_text();
    g.throughput(Throughput::Bytes(prompt.len() as u64));
    g.bench_function("anchor Message::decode 64KiB", |b| {
        b.iter(|| black_box(Message::decode(black_box(&prompt)).is_ok()))
    });
    let mut gate = Gate::new();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    assert!(matches!(gate.check(init), Ok(Checked::Forward(_))));
    g.bench_function("Gate::check 64KiB", |b| {
        b.iter(|| {
            black_box(matches!(
                gate.check(black_box(&prompt)),
                Ok(Checked::Forward(_))
            ))
        })
    });
    g.finish();
}

/// A server (shared agent, `budget` bytes kept a left session) whose one
/// client opened `s1` and left: the agent's run, to send its lines.
fn server_with_s1_left(budget: usize) -> (Server, acp_codec::remote::AgentRun) {
    let t = Duration::ZERO;
    let mut config = ServerConfig::new();
    config.replay_bytes = budget;
    let mut server = Server::new(config, t);
    let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
        panic!("no agent started")
    };
    server.handle_agent_started(t, run, 1);
    let (conn, _) = server
        .open_websocket(t, &Principal::anonymous(), Some([1; 16]))
        .unwrap();
    for (ask, answer) in [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
        ),
    ] {
        server.handle_text(t, conn, ask);
        server.handle_agent_line(t, run, answer);
        while server.poll_action().is_some() {}
    }
    server.handle_closed(t, conn, Ending::Clean);
    while server.poll_action().is_some() {}
    (server, run)
}

fn replay(c: &mut Criterion) {
    let mut g = c.benchmark_group("bridge_router/replay");
    let line = update_line(&tool_output(1 << 10));
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.bench_function("anchor String::from 1KiB", |b| {
        b.iter(|| black_box(String::from(black_box(line.as_str()))))
    });
    let (mut r, client) = router();
    let mut out = Vec::new();
    r.disconnect(client, &mut out);
    g.bench_function("anchor Router::handle_agent 1KiB, session left", |b| {
        b.iter(|| {
            out.clear();
            r.handle_agent(black_box(&line), Duration::ZERO, &mut out);
            black_box(out.len())
        })
    });
    let budget = 256 << 10;
    let (mut server, run) = server_with_s1_left(budget);
    for _ in 0..=budget / line.len() {
        server.handle_agent_line(Duration::ZERO, run, line.as_str());
    }
    assert!(
        server.poll_action().is_none(),
        "a left session's line was sent"
    );
    g.bench_function(
        "Server::handle_agent_line 1KiB, session left, log full",
        |b| b.iter(|| server.handle_agent_line(Duration::ZERO, run, black_box(line.as_str()))),
    );
    g.finish();
}

criterion_group!(benches, agent_to_client, client_to_agent, gate, replay);
criterion_main!(benches);
