//! `remote::Server`, the team server's sans-IO core, relaying agent output
//! to the client holding each session, with its anchors in the same group:
//!
//! - `relay/recorded`: every `session/update` of the recorded real-peer
//!   sessions (`tests/fixtures/sessions`), as one stdout stream;
//! - `relay/5MiB`: one 5 MiB `tool_call_update` line.
//!
//! Rows per input: `anchor copy` (the bytes copied once), `anchor split`
//! (the line splitter alone: lines found, UTF-8 checked), `anchor
//! split+decode` (the splitter and `Message::decode` of each line: what
//! any relay that validates its lines pays), and `core` (the splitter,
//! then `Server::handle_agent_line` routing each line to its session's
//! connection, the actions drained and the bytes reported written);
//! `core user` (the same through a user's own agent) and `core room` (a
//! user's own agent whose sessions live in a room: the recorded tool
//! calls' paths moved to the client's directory, every other line
//! searched for the room's directory once).

use std::collections::BTreeSet;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use acp_codec::acp::Message;
use acp_codec::remote::{
    Action, AgentRun, ConnectionId, Permissions, PoolMode, Principal, Server, ServerConfig,
};
use acp_codec::LineSplitter;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::{json, Value};

const MAX: usize = 64 * 1024 * 1024;

/// Where the recorded sessions ran: the room of `core room`'s user.
const RECORDED_DIR: &str = "/tmp/acp-codec-fixture/project";

/// Which agent a bench's client talks to.
#[derive(Clone, Copy, PartialEq)]
enum Setup {
    /// The one shared agent.
    Shared,
    /// A user's own agent, no room named: paths pass as they are.
    User,
    /// A user's own agent whose sessions live in [`RECORDED_DIR`], its
    /// client in `/home/ana/proj`: each path of the recordings' tool calls
    /// moved.
    Room,
}

/// A core with one WebSocket client holding each of `sessions`.
fn core(sessions: &BTreeSet<String>, setup: Setup) -> (Server, AgentRun, ConnectionId) {
    let user = setup != Setup::Shared;
    let room = setup == Setup::Room;
    let mut config = ServerConfig::new();
    config.max_message = MAX;
    config.max_user_buffered_bytes = usize::MAX;
    config.replay_bytes = 0;
    if user {
        config.pool = PoolMode::PerUser;
    }
    let t = Duration::ZERO;
    let mut s = Server::new(config, t);
    let principal = if user {
        Principal::user("ana", Permissions::READ_WRITE)
    } else {
        Principal::anonymous()
    };
    let c = s
        .open_websocket(t, &principal, Some([1; 16]))
        .map(|(c, _)| c)
        .unwrap();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    s.handle_text(t, c, init);
    let Some(Action::StartAgent { run, .. }) = s.poll_action() else {
        panic!("no start")
    };
    if room {
        s.set_session_dir("ana", RECORDED_DIR);
    }
    s.handle_agent_started(t, run, 1);
    drain(&mut s, c);
    s.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    );
    drain(&mut s, c);
    let cwd = if room { "/home/ana/proj" } else { "/" };
    for (i, sid) in sessions.iter().enumerate() {
        let new = json!({"jsonrpc":"2.0","id":i + 1,"method":"session/new","params":{"cwd":cwd,"mcpServers":[]}});
        s.handle_text(t, c, &new.to_string());
        let mut id = None;
        while let Some(a) = s.poll_action() {
            if let Action::WriteAgent { line, .. } = a {
                let v: Value = serde_json::from_slice(&line.to_vec()).unwrap();
                id = v["id"].as_i64();
            }
        }
        let answer = json!({"jsonrpc":"2.0","id":id.unwrap(),"result":{"sessionId":sid}});
        s.handle_agent_line(t, run, answer.to_string());
        drain(&mut s, c);
    }
    (s, run, c)
}

/// Takes the actions, reporting each message written; how many bytes
/// went to clients.
fn drain(s: &mut Server, c: ConnectionId) -> usize {
    let mut n = 0;
    while let Some(a) = s.poll_action() {
        if let Action::Send { text, .. } = a {
            n += text.len();
            s.handle_sent(Duration::ZERO, c, text.len());
        }
    }
    n
}

/// Every `session/update` line of the recorded real-peer sessions.
fn recorded() -> Vec<String> {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions"
    ));
    let mut lines = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    names.sort_by_key(|e| e.file_name());
    for entry in names {
        if entry.file_name() == "spec-examples" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path().join("agent.ndjson")) else {
            continue;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if v["method"] == "session/update" && v["params"]["sessionId"].is_string() {
                lines.push(line.to_owned());
            }
        }
    }
    assert!(!lines.is_empty());
    lines
}

fn tool_call_update(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 64);
    let mut i = 0u64;
    while text.len() < bytes {
        text.push_str(&format!(
            "src/module_{i}/file.rs:{}: match \"found\"\n",
            i * 31 % 977
        ));
        i += 1;
    }
    text.truncate(bytes);
    json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{
        "sessionUpdate":"tool_call_update","toolCallId":"run_shell_command-1-0","status":"completed",
        "content":[{"type":"content","content":{"type":"text","text":text}}]}}})
    .to_string()
}

fn relay(c: &mut Criterion) {
    let mut g = c.benchmark_group("server_core/relay");
    g.sample_size(20);
    let inputs = [
        ("recorded", recorded()),
        ("5MiB", vec![tool_call_update(5 << 20)]),
    ];
    for (name, lines) in inputs {
        let sessions: BTreeSet<String> = lines
            .iter()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["params"]["sessionId"].as_str().unwrap().to_owned()
            })
            .collect();
        let mut stream = lines.join("\n").into_bytes();
        stream.push(b'\n');
        g.throughput(Throughput::Bytes(stream.len() as u64));
        g.bench_function(format!("anchor copy {name}"), |b| {
            b.iter(|| black_box(black_box(&stream).to_vec()))
        });
        g.bench_function(format!("anchor split {name}"), |b| {
            b.iter(|| {
                let mut splitter = LineSplitter::with_max_line_len(MAX);
                let mut n = 0usize;
                for line in splitter.lines(black_box(&stream)) {
                    n += line.map_or(0, |l| l.len());
                }
                black_box(n)
            })
        });
        g.bench_function(format!("anchor split+decode {name}"), |b| {
            b.iter(|| {
                let mut splitter = LineSplitter::with_max_line_len(MAX);
                let mut n = 0usize;
                for line in splitter.lines(black_box(&stream)).flatten() {
                    n += usize::from(Message::decode(line.as_str()).is_ok());
                }
                black_box(n)
            })
        });
        for setup in [Setup::Shared, Setup::User, Setup::Room] {
            let room = setup == Setup::Room;
            let (mut s, run, conn) = core(&sessions, setup);
            // Every line reaches the client, as it came (with `room`, its
            // paths moved).
            let mut splitter = LineSplitter::with_max_line_len(MAX);
            let mut sent = 0;
            for line in splitter.lines(&stream).flatten() {
                s.handle_agent_line(Duration::ZERO, run, line.as_str());
                sent += drain(&mut s, conn);
            }
            if room {
                assert!(sent + lines.len() <= stream.len(), "{name}: grew");
                assert!(sent > 0, "{name}: nothing relayed");
            } else {
                assert_eq!(sent + lines.len(), stream.len(), "{name}: not all relayed");
            }
            let row = match setup {
                Setup::Shared => "core",
                Setup::User => "core user",
                Setup::Room => "core room",
            };
            g.bench_function(format!("{row} {name}"), |b| {
                b.iter(|| {
                    let mut splitter = LineSplitter::with_max_line_len(MAX);
                    let mut n = 0usize;
                    for line in splitter.lines(black_box(&stream)).flatten() {
                        s.handle_agent_line(Duration::ZERO, run, line.as_str());
                        n += drain(&mut s, conn);
                    }
                    black_box(n)
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, relay);
criterion_main!(benches);
