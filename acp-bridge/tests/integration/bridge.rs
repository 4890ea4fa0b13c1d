//! The `acp-bridge` example, end to end: the example binary is spawned on a
//! free loopback port (its built-in mock agent a real child process), and
//! driven by real WebSocket clients (tokio-tungstenite).
//!
//! `cargo test` builds the examples before running tests; when this file is
//! run alone (`cargo test --test acp-bridge`) it builds the example first.
//! Every wait is bounded; nothing leaves the loopback interface.
//!
//! The router's sans-IO rules (`acp_codec::remote::parts::Router`, which the
//! example wires to its sockets) are tested in `tests/remote_router.rs`.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use crate::ws_harness;
use ws_harness::*;

// ---------------------------------------------------------------- tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_turn_health_and_log() {
    let bridge = Bridge::start("turn", &[]);
    let health = http_get(bridge.addr, "/health");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.ends_with("\r\n\r\nok"), "{health}");
    assert!(http_get(bridge.addr, "/").starts_with("HTTP/1.1 404"));

    let mut c = connect(&bridge).await;
    let session = c.open_session(&bridge.dir).await;
    let t = c.turn(&session, "list the files").await;
    assert_eq!(t.stop_reason, "end_turn");
    assert!(t.message_chunks >= 2, "{t:?}");
    assert!(t.permission_requests >= 1, "{t:?}");
    // Client ids come back as sent, whatever id the agent saw.
    c.send_text(r#"{"jsonrpc":"2.0","id":"str-id","method":"_test/unknown"}"#.to_owned())
        .await;
    let r = c.recv().await.unwrap();
    assert_eq!(r["id"], "str-id");
    assert_eq!(r["error"]["code"], -32601);
    let log = std::fs::read_to_string(bridge.dir.join("gemini-acp.log")).unwrap();
    assert!(log.contains("agent started"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_mb_agent_line_relayed_intact() {
    const BIG: usize = 6_000_000;
    let bridge = Bridge::start("big", &["--mock-args", "--big-bytes 6000000"]);
    let mut c = connect(&bridge).await;
    let session = c.open_session(&bridge.dir).await;
    let t = c.turn(&session, "print a long sequence").await;
    assert_eq!(t.stop_reason, "end_turn");
    assert!(t.largest > BIG, "largest message {} bytes", t.largest);
    let big = c
        .seen
        .iter()
        .find_map(|m| {
            let u = &m["params"]["update"];
            (u["sessionUpdate"] == "tool_call_update" && u["title"] == "seq 1 1000000").then(|| {
                u["content"][0]["content"]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
        })
        .expect("big tool output relayed");
    let mut expected = String::with_capacity(BIG + 16);
    let mut n = 1u64;
    while expected.len() < BIG {
        expected.push_str(&format!("{n}\n"));
        n += 1;
    }
    expected.truncate(BIG);
    assert_eq!(big.len(), BIG);
    assert!(big == expected, "big output differs from the agent's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_newline_refused_never_forwarded() {
    let bridge = Bridge::start("newline", &[]);
    let mut c = connect(&bridge).await;
    c.init().await;
    // Two messages in one: not one JSON text, refused, id unknown.
    let two = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"_test/first"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"_test/second"}"#
    );
    c.send_text(two.to_owned()).await;
    let r = c.recv().await.unwrap();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    assert_eq!(r["id"], Value::Null);
    // One pretty-printed message: refused with its id.
    c.send_text("{\"jsonrpc\":\"2.0\",\n \"id\":3, \"method\":\"_test/third\"}".to_owned())
        .await;
    let r = c.recv().await.unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(3), json!(-32600)),
        "{r}"
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("raw newline"),
        "{r}"
    );
    // Not JSON-RPC at all.
    c.send_text("hello".to_owned()).await;
    assert_eq!(c.recv().await.unwrap()["error"]["code"], -32700);
    c.send_text("[]".to_owned()).await;
    assert_eq!(c.recv().await.unwrap()["error"]["code"], -32600);
    // An escaped newline inside a string is just text.
    c.send_text(
        r#"{"jsonrpc":"2.0","id":4,"method":"_test/fourth","params":{"t":"a\nb"}}"#.to_owned(),
    )
    .await;
    let r = c.recv().await.unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(4), json!(-32601)),
        "{r}"
    );
    // None of the refused ids ever reached the agent: the next answer is 5's.
    c.next_id = 5;
    let r = c.request("_test/fifth", json!({})).await;
    assert_eq!(r["id"], 5, "{r}");
    assert!(c.seen.is_empty(), "{:?}", c.seen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_message_closed_with_1009() {
    let bridge = Bridge::start("size", &["--max-message-bytes", "65536"]);
    let mut other = connect(&bridge).await;
    let session = other.open_session(&bridge.dir).await;
    let mut c = connect(&bridge).await;
    c.init().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"_test/x","params":{{"pad":"{}"}}}}"#,
        "x".repeat(100_000)
    );
    c.send_text(big).await;
    // Answered with its id first, then closed with 1009.
    let r = c.recv().await.expect("an answer before the close");
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(7), json!(-32600)),
        "{r}"
    );
    assert_eq!(close_code(&mut c).await, 1009);
    // Past twice the limit the message is not read: closed without an answer.
    let mut c = connect(&bridge).await;
    c.init().await;
    c.send_text(format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"_test/x","params":{{"pad":"{}"}}}}"#,
        "x".repeat(140_000)
    ))
    .await;
    assert_eq!(close_code(&mut c).await, 1009);
    // A message just under the limit still goes through on a fresh connection,
    // and the other client is untouched.
    let mut c = connect(&bridge).await;
    c.init().await;
    let fits = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"_test/x","params":{{"pad":"{}"}}}}"#,
        "x".repeat(60_000)
    );
    c.send_text(fits).await;
    assert_eq!(c.recv().await.unwrap()["error"]["code"], -32601);
    assert_eq!(
        other.turn(&session, "still there?").await.stop_reason,
        "end_turn"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_gate_initialize_first_once_and_no_batches() {
    let bridge = Bridge::start("gate", &[]);
    // Anything but initialize first: closed with 1002, never forwarded.
    for first in [
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#,
        r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}"#,
    ] {
        let mut c = connect(&bridge).await;
        c.send_text(first.to_owned()).await;
        assert_eq!(close_code(&mut c).await, 1002, "{first}");
    }
    let mut c = connect(&bridge).await;
    // A response before initialize answers nothing: dropped, socket open.
    c.send_text(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#.to_owned())
        .await;
    // A batch: one -32600 with id null, its elements never processed.
    c.send_text(
        r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]"#
            .to_owned(),
    )
    .await;
    let r = c.recv().await.unwrap();
    assert_eq!(r["id"], Value::Null, "{r}");
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("batches"),
        "{r}"
    );
    // Still open, and still waiting for its initialize.
    c.init().await;
    // A second initialize: answered with an error carrying its id.
    let r = c.request("initialize", json!({"protocolVersion":1})).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // The connection goes on: a whole turn.
    let session = c.open_session(&bridge.dir).await;
    assert_eq!(c.turn(&session, "hi").await.stop_reason, "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_and_origin_checked() {
    let bridge = Bridge::start(
        "auth",
        &[
            "--token",
            "s3cret-token",
            "--allow-origin",
            "http://localhost:5173",
        ],
    );
    let url = bridge.url();
    assert_eq!(
        refused_status(connect_with(&url, None, None).await.err().unwrap()),
        401
    );
    assert_eq!(
        refused_status(connect_with(&url, Some("wrong"), None).await.err().unwrap()),
        401
    );
    let wrong_query = format!("{url}?token=s3cret-tokeN");
    assert_eq!(
        refused_status(connect_with(&wrong_query, None, None).await.err().unwrap()),
        401
    );
    let foreign = connect_with(&url, Some("s3cret-token"), Some("https://evil.example")).await;
    assert_eq!(refused_status(foreign.err().unwrap()), 403);
    // A foreign origin is refused even with the token in the query.
    let q = format!("{url}?token=s3cret-token");
    assert_eq!(
        refused_status(
            connect_with(&q, None, Some("http://localhost:5174"))
                .await
                .err()
                .unwrap()
        ),
        403
    );
    // Accepted: header token; query token from an allowed origin.
    let mut c = connect_with(&url, Some("s3cret-token"), None)
        .await
        .unwrap();
    c.init().await;
    assert_eq!(
        c.request("_test/x", json!({})).await["error"]["code"],
        -32601
    );
    let mut c = connect_with(&q, None, Some("http://localhost:5173"))
        .await
        .unwrap();
    c.init().await;
    assert_eq!(
        c.request("_test/x", json!({})).await["error"]["code"],
        -32601
    );
    // Health needs no token.
    assert!(http_get(bridge.addr, "/health").starts_with("HTTP/1.1 200"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_rotated_at_startup_and_while_running() {
    const MIB: u64 = 1024 * 1024;
    let dir = scratch_dir("log");
    std::fs::write(dir.join("gemini-acp.log"), vec![1u8; 3 * MIB as usize]).unwrap();
    // An agent that writes 3 MB to stderr, then serves nothing.
    let script = dir.join("noisy.sh");
    std::fs::write(
        &script,
        "head -c 3000000 /dev/zero | tr '\\0' x >&2\necho done >&2\ncat >/dev/null\n",
    )
    .unwrap();
    let agent = format!("sh {}", script.display());
    let bridge = Bridge::start_in(dir.clone(), &["--agent", &agent], &[]);
    let old = dir.join("gemini-acp.log.old");
    let deadline = Instant::now() + STEP;
    // Startup moved the 3 MiB file away; the agent's 3 MB then filled the
    // new log past 2 MiB, which rotated again: `.old` now holds agent output.
    loop {
        let log = std::fs::read(dir.join("gemini-acp.log")).unwrap_or_default();
        let old_log = std::fs::read(&old).unwrap_or_default();
        if log.ends_with(b"done\n") && old_log.contains(&b'x') {
            assert!(
                !old_log.contains(&1u8),
                "the startup rotation's file was replaced"
            );
            assert!(old_log.len() as u64 > 2 * MIB && (log.len() as u64) < 2 * MIB);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "log not rotated: {} / {} bytes",
            log.len(),
            old_log.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(bridge);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_agent_command_from_env() {
    // A fake `gemini` on PATH records its arguments and runs the mock agent.
    let dir = scratch_dir("gemini");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("gemini");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nexec '{}' --mock-agent\n",
            dir.join("args.txt").display(),
            bridge_exe().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let bridge = Bridge::start_in(
        dir.clone(),
        &["--gemini"],
        &[
            ("PATH", &path),
            ("GEMINI_MODEL", "test-model"),
            ("GEMINI_APPROVAL_MODE", "yolo"),
        ],
    );
    let mut c = connect(&bridge).await;
    let session = c.open_session(&bridge.dir).await;
    assert_eq!(c.turn(&session, "hi").await.stop_reason, "end_turn");
    let args = std::fs::read_to_string(dir.join("args.txt")).unwrap();
    assert_eq!(args.trim(), "--acp -m test-model --approval-mode yolo");
}

#[test]
fn non_loopback_bind_without_token_refused() {
    let out = Command::new(bridge_exe())
        .args(["--host", "0.0.0.0", "--port", "0"])
        .env_remove("GEMINI_BRIDGE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a token"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_mid_turn_restarted() {
    let bridge = Bridge::start("kill", &[]);
    let mut watcher = connect(&bridge).await;
    let mut c = connect(&bridge).await;
    let session = c.open_session(&bridge.dir).await;
    let first_agent = bridge.agent_pid().expect("agent pid");
    c.send(&json!({"jsonrpc":"2.0","id":100,"method":"session/prompt",
        "params":{"sessionId": session, "prompt":[{"type":"text","text":"go"}]}}))
        .await;
    // Mid-turn: the agent waits for our permission answer; kill it then.
    loop {
        let m = c.recv().await.expect("open");
        if m["method"] == "session/request_permission" {
            break;
        }
    }
    // The shell's builtin, so no procps is needed.
    let killed = Command::new("sh")
        .args(["-c", &format!("kill -9 {first_agent}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut got_error = false;
    let mut exited = None;
    let mut started = false;
    while !(got_error && exited.is_some() && started) {
        let m = c.recv().await.expect("open");
        if m["id"] == 100 {
            assert_eq!(m["error"]["code"], -32603, "{m}");
            got_error = true;
        } else if m["method"] == "_bridge/agent_exited" {
            exited = Some(m);
        } else if m["method"] == "_bridge/agent_started" {
            assert!(exited.is_some());
            started = true;
        }
    }
    let exited = exited.unwrap();
    assert_eq!(
        exited["params"]["lostSessions"],
        json!([session]),
        "{exited}"
    );
    assert!(
        exited["params"]["status"]
            .as_str()
            .unwrap()
            .contains("signal"),
        "{exited}"
    );
    // The idle client is told too.
    let m = watcher.recv().await.unwrap();
    assert_eq!(m["method"], "_bridge/agent_exited");
    assert_eq!(m["params"]["lostSessions"], json!([]));
    assert_eq!(
        watcher.recv().await.unwrap()["method"],
        "_bridge/agent_started"
    );
    // A new agent, and the next turn works.
    let second_agent = bridge.agent_pid().expect("agent restarted");
    assert_ne!(first_agent, second_agent);
    let session = c.open_session(&bridge.dir).await;
    assert_eq!(c.turn(&session, "again").await.stop_reason, "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clients_each_a_full_turn_while_one_leaves() {
    let bridge = Arc::new(Bridge::start("fifty", &[]));
    // A client that leaves mid-turn, with a permission request pending.
    let mut leaver = connect(&bridge).await;
    let s = leaver.open_session(&bridge.dir).await;
    leaver
        .send(&json!({"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId": s,"prompt":[{"type":"text","text":"x"}]}}))
        .await;
    let mut tasks = Vec::new();
    for i in 0..50 {
        let bridge = bridge.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = connect(&bridge).await;
            let cwd = bridge.dir.join(format!("c{i}"));
            std::fs::create_dir_all(&cwd).unwrap();
            let session = c.open_session(&cwd).await;
            let t = c.turn(&session, &format!("client {i}")).await;
            (session, t)
        }));
    }
    loop {
        let m = leaver.recv().await.unwrap();
        if m["method"] == "session/request_permission" {
            break;
        }
    }
    drop(leaver);
    let mut sessions = std::collections::HashSet::new();
    for t in tasks {
        let (session, turn) = tokio::time::timeout(Duration::from_secs(120), t)
            .await
            .expect("turn timed out")
            .unwrap();
        assert_eq!(turn.stop_reason, "end_turn", "{turn:?}");
        assert!(turn.permission_requests >= 1);
        assert!(sessions.insert(session));
    }
    assert_eq!(sessions.len(), 50);
}

/// The first message of a connection to `blast_agent`: it never answers.
const BENCH_START: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;

fn rss_mib(b: &Bridge) -> f64 {
    b.status_kib("VmRSS:") as f64 / 1024.0
}

/// An agent that, after its first input line, writes `count` copies of a
/// `line_bytes`-byte notification (no `sessionId`: every client gets it),
/// then waits for stdin to close.
fn blast_agent(dir: &Path, line_bytes: usize, count: usize) -> (String, usize) {
    let pad = line_bytes
        - r#"{"jsonrpc":"2.0","method":"_bench/data","params":{"seq":0,"text":""}}"#.len();
    // Text like a tool's output: lines, so the JSON holds escapes.
    let text: String = "0123456789abcdef0123456789abcde\\n".repeat(pad / 30 + 1);
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","method":"_bench/data","params":{{"seq":0,"text":"{}"}}}}"#,
        &text[..pad]
    );
    line.truncate(line_bytes);
    // Keep it valid JSON whatever the cut: end the string and objects.
    let body = &line[..line_bytes - 4];
    let body = body.trim_end_matches('\\');
    let line = format!("{body}\"}}}}\n");
    serde_json::from_str::<Value>(line.trim_end()).expect("blast line is json");
    // One `cat` per file of about 1 MB, not per line.
    let per_file = (1_000_000 / line.len()).clamp(1, count);
    assert_eq!(
        count % per_file,
        0,
        "count must be a multiple of {per_file}"
    );
    std::fs::write(dir.join("lines.json"), line.repeat(per_file)).unwrap();
    let script = format!(
        "read first\ni=0\nwhile [ $i -lt {} ]; do cat '{}'; i=$((i+1)); done\ncat >/dev/null\n",
        count / per_file,
        dir.join("lines.json").display()
    );
    std::fs::write(dir.join("blast.sh"), script).unwrap();
    (
        format!("sh {}", dir.join("blast.sh").display()),
        line.len() - 1,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_flat_relaying_200_mb() {
    const LINE: usize = 2_000_000;
    const COUNT: usize = 100;
    let dir = scratch_dir("blast");
    let (agent, text_len) = blast_agent(&dir, LINE, COUNT);
    let bridge = Bridge::start("memory", &["--agent", &agent]);
    let mut c = connect(&bridge).await;
    // The agent starts on its first line: the connection's initialize.
    c.send_text(BENCH_START.to_owned()).await;
    let start = Instant::now();
    let (mut got, mut bytes, mut warm, mut max_rss) = (0usize, 0usize, None, 0.0f64);
    while got < COUNT {
        let m = tokio::time::timeout(STEP, c.ws.next())
            .await
            .expect("relay stalled");
        let Some(Ok(WsMessage::Text(t))) = m else {
            panic!("unexpected {m:?}")
        };
        assert_eq!(t.len(), text_len, "one line, one message, intact");
        bytes += t.len();
        got += 1;
        if got == 10 {
            warm = Some(rss_mib(&bridge));
        }
        if got % 10 == 0 {
            max_rss = max_rss.max(rss_mib(&bridge));
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let warm = warm.unwrap();
    let last = rss_mib(&bridge);
    let hwm = bridge.status_kib("VmHWM:") as f64 / 1024.0;
    println!(
        "relayed {COUNT} lines of {LINE} bytes ({:.1} MB) in {secs:.2} s: {:.1} MB/s; bridge RSS after 10 lines {warm:.1} MiB, max {max_rss:.1} MiB, last {last:.1} MiB, VmHWM {hwm:.1} MiB",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / secs
    );
    // Flat: no growth with the amount relayed, and a peak far below it.
    assert!(
        last - warm < 16.0,
        "rss grew from {warm:.1} to {last:.1} MiB"
    );
    assert!(hwm < 64.0, "peak rss {hwm:.1} MiB");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_messages_relayed_one_each() {
    const LINE: usize = 250;
    const COUNT: usize = 40_000;
    let dir = scratch_dir("small");
    let (agent, text_len) = blast_agent(&dir, LINE, COUNT);
    let bridge = Bridge::start("small", &["--agent", &agent]);
    let mut c = connect(&bridge).await;
    // The agent starts on its first line: the connection's initialize.
    c.send_text(BENCH_START.to_owned()).await;
    let start = Instant::now();
    for _ in 0..COUNT {
        let m = tokio::time::timeout(STEP, c.ws.next())
            .await
            .expect("relay stalled");
        let Some(Ok(WsMessage::Text(t))) = m else {
            panic!("unexpected {m:?}")
        };
        assert_eq!(t.len(), text_len);
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "relayed {COUNT} messages of {text_len} bytes in {secs:.2} s: {:.0} messages/s, {:.1} MB/s",
        COUNT as f64 / secs,
        (COUNT * text_len) as f64 / 1e6 / secs
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_through_the_bridge() {
    const N: usize = 2000;
    let bridge = Bridge::start("latency", &[]);
    let mut c = connect(&bridge).await;
    c.init().await;
    let mut times = Vec::with_capacity(N);
    for _ in 0..N {
        let t = Instant::now();
        let r = c.request("_test/ping", json!({})).await;
        times.push(t.elapsed());
        assert_eq!(r["error"]["code"], -32601);
    }
    // The same requests straight to the mock agent on stdio, for the
    // bridge's share of the round trip.
    let mut agent = Command::new(bridge_exe())
        .arg("--mock-agent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = agent.stdin.take().unwrap();
    let mut stdout = BufReader::new(agent.stdout.take().unwrap());
    let mut direct = Vec::with_capacity(N);
    let mut line = String::new();
    for i in 0..N {
        let t = Instant::now();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{i},"method":"_test/ping","params":{{}}}}"#
        )
        .unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        direct.push(t.elapsed());
    }
    let _ = agent.kill();
    let _ = agent.wait();
    let pct = |v: &mut Vec<Duration>, p: f64| {
        v.sort();
        v[((v.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e6
    };
    println!(
        "round trip of a small request ({N}): through the bridge p50 {:.0} us p99 {:.0} us; agent on stdio directly p50 {:.0} us p99 {:.0} us",
        pct(&mut times, 0.5),
        pct(&mut times, 0.99),
        pct(&mut direct, 0.5),
        pct(&mut direct, 0.99)
    );
}

// ------------------------------------------------- the transport on /acp

/// One HTTP/1.1 request on a fresh connection (closed after the answer):
/// the status, the head (lowercase) and the body.
pub(crate) fn http_request(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(STEP)).unwrap();
    let mut req = format!("{method} /acp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// Opens an SSE stream and reads its response head; the socket stays open.
pub(crate) fn open_sse(
    addr: SocketAddr,
    connection: &str,
    session: Option<&str>,
) -> (u16, BufReader<TcpStream>) {
    open_sse_as(addr, None, connection, session)
}

/// [`open_sse`] with a bearer token.
pub(crate) fn open_sse_as(
    addr: SocketAddr,
    bearer: Option<&str>,
    connection: &str,
    session: Option<&str>,
) -> (u16, BufReader<TcpStream>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(STEP)).unwrap();
    let session = session.map_or(String::new(), |s| format!("Acp-Session-Id: {s}\r\n"));
    let auth = bearer.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "GET /acp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\n{auth}{session}\r\n"
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    while line.trim() != "" {
        line.clear();
        r.read_line(&mut line).unwrap();
    }
    (status, r)
}

/// The next `data:` payload of an SSE stream, as JSON.
pub(crate) fn next_event(r: &mut BufReader<TcpStream>) -> Value {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(r.read_line(&mut line).unwrap() > 0, "stream ended");
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            return serde_json::from_str(data).unwrap();
        }
    }
}

#[test]
fn streamable_http_rules_on_acp() {
    let bridge = Bridge::start("http", &["--max-message-bytes", "65536"]);
    let addr = bridge.addr;
    let json = ("Content-Type", "application/json");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;

    // Refusals before a connection exists.
    assert_eq!(
        http_request(addr, "POST", &[json], new).0,
        400,
        "no connection id"
    );
    assert_eq!(
        http_request(addr, "POST", &[("Content-Type", "text/plain")], init).0,
        415
    );
    // A batch is 501 (Not Implemented), with one -32600 whose id is null.
    let (status, head, body) = http_request(addr, "POST", &[json], &format!("[{init}]"));
    assert_eq!(status, 501, "{head}{body}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let batch: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (batch["error"]["code"].as_i64(), &batch["id"]),
        (Some(-32600), &Value::Null)
    );
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000)
    );
    assert_eq!(http_request(addr, "POST", &[json], &big).0, 413);

    // initialize opens a connection: the answer in the body, its id in the header.
    let (status, head, body) = http_request(addr, "POST", &[json], init);
    assert_eq!(status, 200, "{head}{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 0);
    assert!(answer["result"]["protocolVersion"].is_number(), "{answer}");
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("acp-connection-id: "))
        .expect("acp-connection-id")
        .trim()
        .to_owned();
    let conn = ("Acp-Connection-Id", id.as_str());
    assert_eq!(
        http_request(addr, "POST", &[json, conn], init).0,
        400,
        "second initialize"
    );
    assert_eq!(
        http_request(addr, "POST", &[json, conn], &format!("[{new}]")).0,
        501,
        "a batch on a connection"
    );
    assert_eq!(
        http_request(addr, "POST", &[json, ("Acp-Connection-Id", "nope")], new).0,
        404
    );
    assert_eq!(http_request(addr, "GET", &[conn], "").0, 406, "no Accept");

    // One receiver per stream; answers come on it.
    let (status, mut events) = open_sse(addr, &id, None);
    assert_eq!(status, 200);
    assert_eq!(open_sse(addr, &id, None).0, 409);
    assert_eq!(http_request(addr, "POST", &[json, conn], new).0, 202);
    let created = next_event(&mut events);
    assert_eq!(created["id"], 1);
    let session = created["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[]}}}}"#
    );
    assert_eq!(
        http_request(addr, "POST", &[json, conn], &prompt).0,
        400,
        "no Acp-Session-Id"
    );
    let other = ("Acp-Session-Id", "other");
    assert_eq!(
        http_request(addr, "POST", &[json, conn, other], &prompt).0,
        400,
        "mismatch"
    );

    // The turn's messages come on the session's stream; a reply to the
    // agent's permission request must name that session.
    let (status, mut turn) = open_sse(addr, &id, Some(&session));
    assert_eq!(status, 200);
    let in_session = ("Acp-Session-Id", session.as_str());
    assert_eq!(
        http_request(addr, "POST", &[json, conn, in_session], &prompt).0,
        202
    );
    let ask = loop {
        let m = next_event(&mut turn);
        if m["method"] == "session/request_permission" {
            break m;
        }
        assert_eq!(m["params"]["sessionId"], session.as_str(), "{m}");
    };
    let option = &ask["params"]["options"][0]["optionId"];
    let reply = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": option}}}).to_string();
    assert_eq!(
        http_request(addr, "POST", &[json, conn], &reply).0,
        400,
        "reply without its session"
    );
    assert_eq!(
        http_request(addr, "POST", &[json, conn, in_session], &reply).0,
        202
    );

    // DELETE ends the connection: its stream closes, the id is gone.
    assert_eq!(http_request(addr, "DELETE", &[conn], "").0, 202);
    assert_eq!(http_request(addr, "DELETE", &[conn], "").0, 404);
    // The body ends (the last chunk of a chunked body is `0`), no event left.
    let mut line = String::new();
    loop {
        line.clear();
        assert!(events.read_line(&mut line).unwrap() > 0, "no end of stream");
        assert!(!line.starts_with("data:"), "{line}");
        if line.trim_end() == "0" {
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_upgrade_on_acp_names_the_connection() {
    let bridge = Bridge::start("wsacp", &[]);
    let url = format!("ws://{}/acp", bridge.addr);
    let (ws, resp) = tokio_tungstenite::connect_async(url).await.unwrap();
    let id = resp
        .headers()
        .get("acp-connection-id")
        .expect("acp-connection-id");
    assert_eq!(id.len(), 32, "{id:?}");
    drop(ws);
    // GET /acp without an upgrade or Accept is not a stream.
    assert_eq!(http_request(bridge.addr, "GET", &[], "").0, 406);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_client_that_does_not_read_is_dropped_without_stalling_others() {
    let bridge = Bridge::start(
        "httpslow",
        &["--max-buffered-bytes", "200", "--slow-client-ms", "500"],
    );
    let addr = bridge.addr;
    let json = ("Content-Type", "application/json");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let (status, head, _) = http_request(addr, "POST", &[json], init);
    assert_eq!(status, 200);
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("acp-connection-id: "))
        .unwrap()
        .trim()
        .to_owned();
    let conn = ("Acp-Connection-Id", id.as_str());
    let (_, mut events) = open_sse(addr, &id, None);
    let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
    assert_eq!(http_request(addr, "POST", &[json, conn], new).0, 202);
    let session = next_event(&mut events)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    // A turn whose session stream is never read: its updates cannot be
    // queued under a 200-byte budget.
    let prompt = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[]}}}}"#
    );
    let in_session = ("Acp-Session-Id", session.as_str());
    assert_eq!(
        http_request(addr, "POST", &[json, conn, in_session], &prompt).0,
        202
    );
    // A WebSocket client meanwhile runs a whole turn.
    let started = Instant::now();
    let mut ws = connect(&bridge).await;
    let s = ws.open_session(&bridge.dir).await;
    assert_eq!(ws.turn(&s, "hello").await.stop_reason, "end_turn");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // The reader-less connection is gone (after --slow-client-ms).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, _, _) = http_request(addr, "POST", &[json, conn, in_session], &prompt);
        if status == 404 {
            break;
        }
        assert!(Instant::now() < deadline, "connection not dropped");
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = bridge.stderr.lock().unwrap().clone();
    assert!(log.contains("too slow"), "{log}");
}

/// An agent (python3) that can load sessions: `session/new` gives `s1`; a
/// prompt sends one update at once, then, after `delay` seconds, `updates`
/// more and the answer; `session/load` answers `{}`.
fn loading_agent(dir: &Path, updates: usize, delay: f64) -> String {
    let script = format!(
        r#"import json, sys, time
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def update(n):
    send({{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"chunk %d" % n}}}}}}}})
while True:
    line = sys.stdin.readline()
    if not line:
        break
    m = json.loads(line)
    method, mid = m.get("method"), m.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({{"jsonrpc":"2.0","id":mid,"result":{{"protocolVersion":1,"agentCapabilities":{{"loadSession":True}}}}}})
    elif method == "session/new":
        send({{"jsonrpc":"2.0","id":mid,"result":{{"sessionId":"s1"}}}})
    elif method == "session/prompt":
        update(0)
        time.sleep({delay})
        for n in range(1, {updates} + 1):
            update(n)
        send({{"jsonrpc":"2.0","id":mid,"result":{{"stopReason":"cancelled"}}}})
    else:
        send({{"jsonrpc":"2.0","id":mid,"result":{{}}}})
"#
    );
    let path = dir.join("loading_agent.py");
    std::fs::write(&path, script).unwrap();
    format!("python3 {}", path.display())
}

/// A client that leaves mid-turn; a new connection loads the session and
/// gets the updates it missed (chunks 1..=n), before the load's answer.
async fn leave_and_reload(bridge: &Bridge) -> (Vec<Value>, Value) {
    let mut a = connect(bridge).await;
    a.init().await;
    let new = a
        .request("session/new", json!({"cwd":"/","mcpServers":[]}))
        .await;
    assert_eq!(new["result"]["sessionId"], "s1", "{new}");
    a.send(&json!({"jsonrpc":"2.0","id":50,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}))
        .await;
    let first = a.recv().await.unwrap();
    assert_eq!(
        first["params"]["update"]["content"]["text"], "chunk 0",
        "{first}"
    );
    drop(a);
    // The agent finishes the turn while nobody holds the session.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut b = connect(bridge).await;
    b.init().await;
    b.send(&json!({"jsonrpc":"2.0","id":60,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}))
        .await;
    let mut before = Vec::new();
    loop {
        let m = b.recv().await.expect("open");
        if m["id"] == 60 {
            return (before, m);
        }
        before.push(m);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reattaching_client_gets_what_it_missed() {
    let dir = scratch_dir("replay");
    let agent = loading_agent(&dir, 3, 0.5);
    let bridge = Bridge::start("replay", &["--agent", &agent]);
    let (missed, answer) = leave_and_reload(&bridge).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let texts: Vec<&str> = missed
        .iter()
        .map(|m| m["params"]["update"]["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["chunk 1", "chunk 2", "chunk 3"], "{missed:?}");
    drop(bridge);

    // A budget for about one update: the oldest are dropped, and reported.
    let bridge = Bridge::start(
        "replay-small",
        &["--agent", &agent, "--replay-bytes", "200"],
    );
    let (missed, _) = leave_and_reload(&bridge).await;
    assert_eq!(missed[0]["method"], "_bridge/replay_dropped", "{missed:?}");
    assert_eq!(missed[0]["params"]["droppedMessages"], 2, "{missed:?}");
    assert_eq!(missed.len(), 2, "{missed:?}");
    assert_eq!(missed[1]["params"]["update"]["content"]["text"], "chunk 3");
    drop(bridge);

    // Off: nothing replayed.
    let bridge = Bridge::start("replay-off", &["--agent", &agent, "--replay-bytes", "0"]);
    let (missed, _) = leave_and_reload(&bridge).await;
    assert!(missed.is_empty(), "{missed:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
