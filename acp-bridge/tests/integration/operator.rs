//! What an operator of `acp-bridge` sees: `/metrics` after real turns
//! and refusals, refusals in the log (human and JSON) with their reason
//! and address and a bound on a flood of them, `--log-dir` created or the
//! start refused, and W3C trace context passed through unchanged both
//! ways (and `OTEL_*` variables reaching an agent only when named).
#![cfg(target_os = "linux")]

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::ws_harness;
use ws_harness::*;

const TOKEN: &str = "operator-0123456789abcdef";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACESTATE: &str = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

/// `GET path` with the bearer token: the whole answer (head and body).
fn get(addr: SocketAddr, path: &str, token: Option<&str>) -> String {
    use std::io::Write;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(STEP)).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// The value of the sample `key` (name and labels, as written) in a
/// Prometheus text; panics when it is absent.
fn sample(text: &str, key: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

fn log(bridge: &Bridge) -> String {
    bridge.stderr.lock().unwrap().clone()
}

/// Waits until `f` holds of the bridge's stderr.
fn wait_log(bridge: &Bridge, f: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + STEP;
    loop {
        let text = log(bridge);
        if f(&text) {
            return text;
        }
        assert!(Instant::now() < deadline, "not in the log:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A connection to the bridge that is closed at once (past a cap of
/// the front door): the read sees the end, with nothing sent.
fn refused_at_the_door(addr: SocketAddr) -> bool {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(STEP)).unwrap();
    let mut buf = [0u8; 1];
    matches!(s.read(&mut buf), Ok(0) | Err(_))
}

/// `/metrics` once the front door lets a connection in again (the
/// connections held at it closed): the text, and how many scrapes the
/// door refused before (each a `per_address` refusal of its own).
fn scrape_past_the_door(addr: SocketAddr) -> (String, usize) {
    let deadline = Instant::now() + STEP;
    let mut refused = 0;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let m = get(addr, "/metrics", Some(TOKEN));
        if m.starts_with("HTTP/1.1 200") {
            return (m, refused);
        }
        assert!(m.is_empty(), "{m}");
        assert!(Instant::now() < deadline, "the door stays shut");
        refused += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_move_by_a_real_turn_and_each_refusal_by_its_reason() {
    let bridge = Bridge::start(
        "operator_metrics",
        &["--token", TOKEN, "--max-unauthenticated-per-address", "2"],
    );
    // Without the token, /metrics is refused like /acp.
    let refused = get(bridge.addr, "/metrics", None);
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let before = get(bridge.addr, "/metrics", Some(TOKEN));
    assert!(before.starts_with("HTTP/1.1 200"), "{before}");
    assert_eq!(sample(&before, "acp_bridge_turns_total"), 0.0);

    let mut c = connect_with(&bridge.url(), Some(TOKEN), None)
        .await
        .unwrap();
    let project = scratch_dir("operator_project");
    let session = c.open_session(&project).await;
    let turn = c.turn(&session, "hello").await;
    assert_eq!(turn.stop_reason, "end_turn");
    let m = get(bridge.addr, "/metrics", Some(TOKEN));
    assert_eq!(
        sample(
            &m,
            "acp_bridge_connections_opened_total{profile=\"websocket\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(&m, "acp_bridge_connections{profile=\"websocket\"}"),
        1.0
    );
    assert_eq!(sample(&m, "acp_bridge_users_connected"), 1.0);
    assert_eq!(sample(&m, "acp_bridge_turns_total"), 1.0);
    assert_eq!(sample(&m, "acp_bridge_agents{state=\"running\"}"), 1.0);
    assert_eq!(
        sample(&m, "acp_bridge_agent_starts_total{reason=\"shared\"}"),
        1.0
    );
    assert_eq!(sample(&m, "acp_bridge_first_update_seconds_count"), 1.0);
    // initialize, session/new, session/prompt and the answers to the
    // agent's requests went to the agent; their answers and the updates
    // came back.
    let to_agent = sample(
        &m,
        "acp_bridge_messages_total{direction=\"client_to_agent\"}",
    );
    let to_client = sample(
        &m,
        "acp_bridge_messages_total{direction=\"agent_to_client\"}",
    );
    assert!(to_agent >= 3.0, "{m}");
    assert!(to_client >= 3.0 + turn.message_chunks as f64, "{m}");
    assert!(
        sample(&m, "acp_bridge_bytes_total{direction=\"client_to_agent\"}") > to_agent * 20.0,
        "{m}"
    );
    assert!(
        sample(&m, "acp_bridge_bytes_total{direction=\"agent_to_client\"}") > to_client * 20.0,
        "{m}"
    );
    assert_eq!(
        sample(&m, "acp_bridge_refusals_total{reason=\"wrong_token\"}"),
        0.0
    );
    assert_eq!(
        sample(&m, "acp_bridge_refusals_total{reason=\"no_token\"}"),
        1.0,
        "the /metrics request without a token: {m}"
    );

    // A wrong token.
    let e = connect_with(&bridge.url(), Some("not-the-token"), None)
        .await
        .err()
        .expect("a wrong token is refused");
    assert_eq!(refused_status(e), 401);
    // The per-address cap: two connections held unauthenticated, the
    // third closed at once.
    let held: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(bridge.addr).unwrap())
        .collect();
    // Accepted in order: the third comes after both are counted.
    std::thread::sleep(Duration::from_millis(100));
    assert!(refused_at_the_door(bridge.addr));
    drop(held);
    let (m, early) = scrape_past_the_door(bridge.addr);
    assert_eq!(
        sample(&m, "acp_bridge_refusals_total{reason=\"wrong_token\"}"),
        1.0
    );
    assert_eq!(
        sample(&m, "acp_bridge_refusals_total{reason=\"per_address\"}"),
        1.0 + early as f64
    );
    assert_eq!(
        sample(&m, "acp_bridge_refusals_total{reason=\"agents_full\"}"),
        0.0
    );
    // Nothing else moved the turn count.
    assert_eq!(sample(&m, "acp_bridge_turns_total"), 1.0);
    drop(c);
    let _ = std::fs::remove_dir_all(&project);
}

/// A session past `--max-user-sessions` is refused (`-32011`) and counted
/// and logged as a refusal like the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_past_the_users_limit_is_counted_and_logged() {
    let bridge = Bridge::start(
        "operator_user_sessions",
        &["--token", TOKEN, "--max-user-sessions", "1"],
    );
    let mut c = connect_with(&bridge.url(), Some(TOKEN), None)
        .await
        .expect("connect");
    c.open_session(&bridge.dir).await;
    let refused = c
        .request(
            "session/new",
            json!({"cwd": bridge.dir.to_str().unwrap(), "mcpServers": []}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32011, "{refused}");
    let m = get(bridge.addr, "/metrics", Some(TOKEN));
    assert_eq!(
        sample(&m, "acp_bridge_refusals_total{reason=\"user_sessions\"}"),
        1.0,
        "{m}"
    );
    let text = wait_log(&bridge, |l| l.contains("reason=\"user_sessions\""));
    assert!(text.contains("peer=127.0.0.1:"), "{text}");
    let file = std::fs::read_to_string(bridge.dir.join("gemini-acp.log")).unwrap();
    assert!(
        file.contains("refused (user_sessions) from 127.0.0.1:"),
        "{file}"
    );
    drop(c);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_separate_metrics_listener_is_loopback_only_and_needs_no_token() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let at = format!("127.0.0.1:{port}");
    let bridge = Bridge::start(
        "operator_metrics_addr",
        &["--token", TOKEN, "--metrics-addr", &at],
    );
    let m = get(at.parse().unwrap(), "/metrics", None);
    assert!(m.starts_with("HTTP/1.1 200"), "{m}");
    assert!(m.contains("content-type: text/plain; version=0.0.4"), "{m}");
    assert_eq!(sample(&m, "acp_bridge_turns_total"), 0.0);
    // Only /metrics there.
    assert!(get(at.parse().unwrap(), "/acp", None).starts_with("HTTP/1.1 404"));
    drop(bridge);

    let out = Command::new(bridge_exe())
        .args([
            "--port",
            "0",
            "--token",
            TOKEN,
            "--metrics-addr",
            "0.0.0.0:9464",
        ])
        .env_remove("GEMINI_BRIDGE_TOKEN_FILE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--metrics-addr 0.0.0.0:9464 is not loopback"),
        "{err}"
    );
}

/// A refusal's log line, in either format, names its reason and the
/// peer's address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_is_logged_with_its_reason_and_address_in_both_formats() {
    for format in ["human", "json"] {
        let bridge = Bridge::start("operator_log", &["--token", TOKEN, "--log-format", format]);
        let e = connect_with(&bridge.url(), Some("not-the-token"), None)
            .await
            .err()
            .expect("a wrong token is refused");
        assert_eq!(refused_status(e), 401);
        let text = wait_log(&bridge, |t| t.contains("wrong_token"));
        let line = text
            .lines()
            .find(|l| l.contains("wrong_token"))
            .unwrap()
            .to_owned();
        match format {
            "human" => {
                assert!(line.contains("WARN"), "{line}");
                assert!(line.contains("reason=\"wrong_token\""), "{line}");
                assert!(line.contains("peer=127.0.0.1:"), "{line}");
            }
            _ => {
                // Every line but the start-up banner is one JSON object.
                for l in text.lines().filter(|l| !l.starts_with("acp-bridge: ")) {
                    let v: Value =
                        serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
                    assert!(v["level"].is_string(), "{l}");
                }
                let v: Value = serde_json::from_str(&line).unwrap();
                assert_eq!(v["level"], "WARN", "{line}");
                assert_eq!(v["fields"]["reason"], "wrong_token", "{line}");
                let peer = v["fields"]["peer"].as_str().unwrap();
                assert!(peer.parse::<SocketAddr>().is_ok(), "{line}");
                assert!(peer.starts_with("127.0.0.1:"), "{line}");
            }
        }
        // The bridge's own log file has it too.
        let file = std::fs::read_to_string(bridge.dir.join("gemini-acp.log")).unwrap();
        assert!(
            file.contains("refused (wrong_token) from 127.0.0.1:"),
            "{file}"
        );
    }
}

/// A flood of refusals writes a bounded number of lines, and says how
/// many it left out; the metrics count every one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_refusals_writes_a_bounded_log() {
    const FLOOD: usize = 300;
    let bridge = Bridge::start(
        "operator_flood",
        &["--token", TOKEN, "--max-unauthenticated-per-address", "1"],
    );
    let start = Instant::now();
    let held = TcpStream::connect(bridge.addr).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    for _ in 0..FLOOD {
        assert!(refused_at_the_door(bridge.addr));
    }
    let secs = start.elapsed().as_secs();
    drop(held);
    // One more a second later: its line says how many were left out.
    std::thread::sleep(Duration::from_millis(1100));
    let held = TcpStream::connect(bridge.addr).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(refused_at_the_door(bridge.addr));
    drop(held);
    let text = wait_log(&bridge, |t| {
        t.lines()
            .any(|l| l.contains("per_address") && !l.contains("suppressed=0"))
    });
    let lines = text.lines().filter(|l| l.contains("per_address")).count();
    // At most 10 a second, over the seconds the flood and the last one
    // took.
    let bound = 10 * (secs as usize + 3);
    assert!(lines <= bound, "{lines} lines over {secs} s:\n{text}");
    assert!(lines < FLOOD / 2, "{lines}");
    let (m, early) = scrape_past_the_door(bridge.addr);
    assert_eq!(
        sample(&m, "acp_bridge_refusals_total{reason=\"per_address\"}"),
        (FLOOD + 1 + early) as f64
    );
}

#[test]
fn a_missing_log_dir_is_created_and_an_uncreatable_one_stops_the_start() {
    use std::io::BufRead;
    let dir = scratch_dir("operator_logdir");
    let nested = dir.join("a").join("b");
    let mut child = Command::new(bridge_exe())
        .args(["--port", "0", "--log-dir"])
        .arg(&nested)
        .env_remove("GEMINI_BRIDGE_TOKEN")
        .env_remove("GEMINI_BRIDGE_TOKEN_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening on") {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "exited before listening"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(nested.join("gemini-acp.log").is_file());
    let _ = std::fs::remove_dir_all(&dir);

    let dir = scratch_dir("operator_logdir_file");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let under = file.join("logs");
    let out = Command::new(bridge_exe())
        .args(["--port", "0", "--log-dir"])
        .arg(&under)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot create the log directory") && err.contains(under.to_str().unwrap()),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An agent that records what it reads and its `OTEL_*` variables, and
/// answers a prompt with one update carrying the prompt's `_meta`.
const TRACE_AGENT: &str = r#"
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "env.json"), "w") as f:
    json.dump({k: v for k, v in os.environ.items() if k.startswith("OTEL_")}, f)
seen = open(os.path.join(here, "in.log"), "a")
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    seen.write(line)
    seen.flush()
    m = json.loads(line)
    method, id = m.get("method"), m.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": id, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        meta = m["params"].get("_meta", {})
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1",
              "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
              "_meta": meta}})
        send({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}})
    elif id is not None:
        send({"jsonrpc": "2.0", "id": id, "result": {}})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trace_context_passes_through_unchanged_and_otel_variables_only_when_named() {
    let dir = scratch_dir("operator_trace");
    let agent_dir = scratch_dir("operator_trace_agent");
    let script = agent_dir.join("agent.py");
    std::fs::write(&script, TRACE_AGENT).unwrap();
    let agent = format!("python3 {}", script.display());
    let bridge = Bridge::start_in(
        dir,
        &["--agent", &agent, "--agent-env", "OTEL_SERVICE_NAME"],
        &[
            ("OTEL_SERVICE_NAME", "team-agent"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ],
    );
    let mut c = connect(&bridge).await;
    let session = c.open_session(&agent_dir).await;
    let meta = json!({"traceparent": TRACEPARENT, "tracestate": TRACESTATE, "other": [1, "x"]});
    let answer = c
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}], "_meta": meta}),
        )
        .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // Agent to client: the update's `_meta` as the agent wrote it.
    let update = c
        .seen
        .iter()
        .find(|m| m["method"] == "session/update")
        .expect("an update");
    assert_eq!(update["params"]["_meta"], meta, "{update}");
    // Client to agent: the prompt's `_meta` as the client wrote it.
    let seen = std::fs::read_to_string(agent_dir.join("in.log")).unwrap();
    let prompt: Value = seen
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|m| m["method"] == "session/prompt")
        .expect("the prompt reached the agent");
    assert_eq!(prompt["params"]["_meta"], meta, "{prompt}");
    // The server's span of the turn carries the trace context.
    let text = wait_log(&bridge, |t| t.contains(TRACEPARENT));
    let line = text.lines().find(|l| l.contains(TRACEPARENT)).unwrap();
    assert!(line.contains("turn{"), "{line}");
    assert!(line.contains(TRACESTATE), "{line}");
    // Only the named OTEL_ variable reached the agent.
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(agent_dir.join("env.json")).unwrap())
            .unwrap();
    assert_eq!(env, json!({"OTEL_SERVICE_NAME": "team-agent"}));
    drop(bridge);
    let _ = std::fs::remove_dir_all(&agent_dir);
}

/// CPU time (user and system, ms) of process `pid`'s own threads.
fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command (which may hold spaces): state is the
    // first, utime the 12th, stime the 13th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().unwrap())
        .collect();
    // SAFETY: sysconf reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    (fields[0] + fields[1]) * 1000 / ticks
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The relay's CPU time over many turns, for comparing builds (with and
/// without metrics and tracing): `WS_BRIDGE_EXE=PATH cargo test --release
/// -p acp-bridge --test integration -- --ignored --exact
/// operator::relay_cpu --nocapture`; `OPERATOR_CPU_CLIENTS` (8),
/// `OPERATOR_CPU_TURNS` (50 each), `OPERATOR_CPU_BIG` (bytes of a tool's
/// output per turn, 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn relay_cpu() {
    let clients = env_or("OPERATOR_CPU_CLIENTS", 8);
    let turns = env_or("OPERATOR_CPU_TURNS", 50);
    let big = env_or("OPERATOR_CPU_BIG", 0);
    let mock = format!("--big-bytes {big}");
    let bridge = Bridge::start("operator_cpu", &["--mock-args", &mock]);
    let url = bridge.url();
    let before = cpu_ms(bridge.pid());
    let start = Instant::now();
    let runs: Vec<_> = (0..clients)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let mut c = connect_with(&url, None, None).await.unwrap();
                let project = scratch_dir("operator_cpu_project");
                let session = c.open_session(&project).await;
                let mut received = 0;
                for _ in 0..turns {
                    let t = c.turn(&session, "hello").await;
                    assert_eq!(t.stop_reason, "end_turn");
                    received = c.received;
                }
                let _ = std::fs::remove_dir_all(&project);
                received
            })
        })
        .collect();
    let mut bytes = 0;
    for r in runs {
        bytes += r.await.unwrap();
    }
    let wall = start.elapsed();
    let cpu = cpu_ms(bridge.pid()) - before;
    let all = clients * turns;
    println!(
        "relay CPU: {cpu} ms for {all} turns ({bytes} bytes to clients) in {:.2} s: {:.0} us a turn",
        wall.as_secs_f64(),
        cpu as f64 * 1000.0 / all as f64
    );
}
