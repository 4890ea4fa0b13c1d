//! Lines of tens of megabytes through the real server, on both profiles:
//! an agent's 40 MB tool output reaches the client whole; a 70 MB one is
//! dropped, its session's client is told (`_bridge/line_dropped`: the
//! session, the size, the limit) and the turn goes on; a client's request
//! over the limit is answered by its id. The server runs with a 64 MiB
//! limit (`--max-message-bytes`), and its peak memory relaying a line of
//! nearly 64 MiB is printed (BENCHMARKS.md records it).
#![cfg(target_os = "linux")]

use std::io::BufReader;
use std::net::{SocketAddr, TcpStream};

use serde_json::{json, Value};

use crate::bridge::{http_request, next_event, open_sse};
use crate::ws_harness::{close_code, connect, Bridge};

/// The server's limit: 64 MiB, what peers send.
const LIMIT: usize = 64 * 1024 * 1024;

fn start(name: &str, big_bytes: usize) -> Bridge {
    let limit = LIMIT.to_string();
    let mock = format!("--big-bytes {big_bytes}");
    Bridge::start(name, &["--max-message-bytes", &limit, "--mock-args", &mock])
}

/// What the mock agent prints for `--big-bytes N`: `seq 1 …` cut at N.
fn seq_output(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 16);
    let mut n = 1u64;
    while out.len() < bytes {
        out.push_str(&format!("{n}\n"));
        n += 1;
    }
    out.truncate(bytes);
    out
}

/// The big tool output among `seen`, if it came.
fn big_output(seen: &[Value]) -> Option<&str> {
    seen.iter().find_map(|m| {
        let u = &m["params"]["update"];
        (u["sessionUpdate"] == "tool_call_update" && u["title"] == "seq 1 1000000")
            .then(|| u["content"][0]["content"]["text"].as_str())
            .flatten()
    })
}

/// Checks the turn's messages after a dropped line: the notice names the
/// session, its size and the limit, and the turn went on after it.
fn assert_dropped(seen: &[Value], session: &str) {
    let at = seen
        .iter()
        .position(|m| m["method"] == "_bridge/line_dropped")
        .unwrap_or_else(|| panic!("no _bridge/line_dropped among {} messages", seen.len()));
    let p = &seen[at]["params"];
    assert_eq!(p["sessionId"], session, "{p}");
    assert_eq!(p["limit"], LIMIT, "{p}");
    assert!(p["size"].as_u64().unwrap() > LIMIT as u64, "{p}");
    assert!(big_output(seen).is_none(), "the oversized line was relayed");
    assert!(
        seen[at + 1..]
            .iter()
            .any(|m| m["method"] == "session/update"),
        "nothing of the turn after the dropped line"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_40_mb_whole_70_mb_dropped_and_reported() {
    const BIG: usize = 40_000_000;
    let bridge = start("big40ws", BIG);
    let mut c = connect(&bridge).await;
    let session = c.open_session(&bridge.dir).await;
    let t = c.turn(&session, "print a long sequence").await;
    assert_eq!(t.stop_reason, "end_turn");
    let big = big_output(&c.seen).expect("the 40 MB output relayed");
    assert_eq!(big.len(), BIG);
    assert!(big == seq_output(BIG), "the 40 MB output differs");
    drop(bridge);

    let bridge = start("big70ws", 70_000_000);
    let mut c = connect(&bridge).await;
    let session = c.open_session(&bridge.dir).await;
    let t = c.turn(&session, "print a long sequence").await;
    assert_eq!(t.stop_reason, "end_turn");
    assert_dropped(&c.seen, &session);
    // The session still works.
    assert_eq!(c.turn(&session, "again").await.stop_reason, "end_turn");

    // A client's request over the limit: answered by its id (then the
    // WebSocket closes with 1009); another connection is untouched.
    let mut other = connect(&bridge).await;
    other.init().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":"huge","method":"_test/x","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000_000)
    );
    other.send_text(big).await;
    let r = other.recv().await.expect("an answer before the close");
    assert_eq!(
        (&r["id"], &r["error"]["code"]),
        (&json!("huge"), &json!(-32600)),
        "{r}"
    );
    assert_eq!(close_code(&mut other).await, 1009);
    assert_eq!(
        c.turn(&session, "still there?").await.stop_reason,
        "end_turn"
    );
}

/// One Streamable HTTP client: its connection id.
fn http_open(addr: SocketAddr) -> String {
    let json = ("Content-Type", "application/json");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let (status, head, body) = http_request(addr, "POST", &[json], init);
    assert_eq!(status, 200, "{head}{body}");
    head.lines()
        .find_map(|l| l.strip_prefix("acp-connection-id: "))
        .expect("acp-connection-id")
        .trim()
        .to_owned()
}

fn post(addr: SocketAddr, conn: &str, session: Option<&str>, body: &str) -> (u16, String) {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Acp-Connection-Id", conn),
    ];
    if let Some(s) = session {
        headers.push(("Acp-Session-Id", s));
    }
    let (status, _, body) = http_request(addr, "POST", &headers, body);
    (status, body)
}

/// A prompt over Streamable HTTP: the session stream's messages until its
/// answer (agent requests answered on the way), and the stop reason.
fn http_turn(
    addr: SocketAddr,
    conn: &str,
    session: &str,
    events: &mut BufReader<TcpStream>,
    id: u64,
) -> (Vec<Value>, String) {
    let prompt = json!({"jsonrpc":"2.0","id":id,"method":"session/prompt","params":{"sessionId":session,"prompt":[{"type":"text","text":"go"}]}});
    assert_eq!(post(addr, conn, Some(session), &prompt.to_string()).0, 202);
    let mut seen = Vec::new();
    loop {
        let m = next_event(events);
        if m.get("method").is_none() && m["id"] == id {
            return (
                seen,
                m["result"]["stopReason"].as_str().unwrap_or("").to_owned(),
            );
        }
        if m.get("method").is_some() && m.get("id").is_some() {
            let reply = if m["method"] == "session/request_permission" {
                let option = &m["params"]["options"][0]["optionId"];
                json!({"jsonrpc":"2.0","id":m["id"],"result":{"outcome":{"outcome":"selected","optionId":option}}})
            } else {
                json!({"jsonrpc":"2.0","id":m["id"],"error":{"code":-32601,"message":"no"}})
            };
            assert_eq!(post(addr, conn, Some(session), &reply.to_string()).0, 202);
        }
        seen.push(m);
    }
}

/// A session of a new Streamable HTTP connection, with its stream open.
fn http_session(bridge: &Bridge) -> (String, String, BufReader<TcpStream>, BufReader<TcpStream>) {
    let addr = bridge.addr;
    let conn = http_open(addr);
    let (status, mut main) = open_sse(addr, &conn, None);
    assert_eq!(status, 200);
    let new = json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":bridge.dir.to_str().unwrap(),"mcpServers":[]}});
    assert_eq!(post(addr, &conn, None, &new.to_string()).0, 202);
    let created = next_event(&mut main);
    let session = created["result"]["sessionId"].as_str().unwrap().to_owned();
    let (status, events) = open_sse(addr, &conn, Some(&session));
    assert_eq!(status, 200);
    (conn, session, main, events)
}

#[test]
fn streamable_http_40_mb_whole_70_mb_dropped_and_reported() {
    const BIG: usize = 40_000_000;
    let bridge = start("big40http", BIG);
    let (conn, session, _main, mut events) = http_session(&bridge);
    let (seen, stop) = http_turn(bridge.addr, &conn, &session, &mut events, 2);
    assert_eq!(stop, "end_turn");
    let big = big_output(&seen).expect("the 40 MB output relayed");
    assert_eq!(big.len(), BIG);
    assert!(big == seq_output(BIG), "the 40 MB output differs");
    drop(bridge);

    let bridge = start("big70http", 70_000_000);
    let addr = bridge.addr;
    let (conn, session, _main, mut events) = http_session(&bridge);
    let (seen, stop) = http_turn(addr, &conn, &session, &mut events, 2);
    assert_eq!(stop, "end_turn");
    assert_dropped(&seen, &session);
    // A client's request over the limit: 413 with the error for its id;
    // the connection goes on.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"_test/x","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000_000)
    );
    let (status, body) = post(addr, &conn, None, &big);
    assert_eq!(status, 413);
    let r: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&r["id"], &r["error"]["code"]),
        (&json!(9), &json!(-32600)),
        "{r}"
    );
    let (_, stop) = http_turn(addr, &conn, &session, &mut events, 3);
    assert_eq!(stop, "end_turn");
}

/// The server's peak memory relaying one line of nearly 64 MiB to a
/// WebSocket client, printed for BENCHMARKS.md: at most twice the line
/// (the agent reader's copy is freed before the writer's starts), with
/// 16 MiB to spare, and nothing of it resident after the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peak_memory_relaying_a_64_mib_line() {
    // `seq` text escapes one `\n` in about 8 bytes: ~66 MB of JSON.
    const BIG: usize = 59_000_000;
    let bridge = start("big64rss", BIG);
    let mut c = connect(&bridge).await;
    let session = c.open_session(&bridge.dir).await;
    let before = bridge.status_kib("VmHWM:");
    let t = c.turn(&session, "print a long sequence").await;
    assert_eq!(t.stop_reason, "end_turn");
    let line = t.largest;
    assert!(line > 60 << 20 && line <= LIMIT, "line of {line} bytes");
    let peak = bridge.status_kib("VmHWM:");
    let after = bridge.status_kib("VmRSS:");
    let line_kib = (line / 1024) as u64;
    println!(
        "server peak RSS relaying a {line}-byte line: {peak} KiB (before the turn {before} KiB; {:.2}x the line over the baseline; resident after the turn {after} KiB)",
        (peak - before) as f64 / line_kib as f64
    );
    assert!(
        peak.saturating_sub(before) <= 2 * line_kib + 16 * 1024,
        "peak {peak} KiB, baseline {before} KiB, line {line_kib} KiB"
    );
    // No copy of the line stays allocated once it is sent (the agent
    // reader's buffer, the socket's write buffer).
    assert!(
        after.saturating_sub(before) <= 16 * 1024,
        "resident after the turn {after} KiB, baseline {before} KiB"
    );
}

/// The same over Streamable HTTP: the server's peak relaying one line of
/// nearly 64 MiB on a session's SSE stream, printed for BENCHMARKS.md and
/// held to twice the line with 16 MiB to spare.
#[test]
fn peak_memory_relaying_a_64_mib_line_over_streamable_http() {
    const BIG: usize = 59_000_000;
    let bridge = start("big64rsshttp", BIG);
    let (conn, session, _main, mut events) = http_session(&bridge);
    let before = bridge.status_kib("VmHWM:");
    let (seen, stop) = http_turn(bridge.addr, &conn, &session, &mut events, 2);
    assert_eq!(stop, "end_turn");
    let peak = bridge.status_kib("VmHWM:");
    let output = big_output(&seen).expect("the output relayed");
    assert_eq!(output.len(), BIG);
    // The line as the agent wrote it (compact JSON, as re-encoded here).
    let line = seen.iter().map(|m| m.to_string().len()).max().unwrap_or(0);
    assert!(line > 60 << 20 && line <= LIMIT, "line of {line} bytes");
    let line_kib = (line / 1024) as u64;
    println!(
        "server peak RSS relaying a {line}-byte line over Streamable HTTP: {peak} KiB (before the turn {before} KiB; {:.2}x the line over the baseline)",
        (peak - before) as f64 / line_kib as f64
    );
    assert!(
        peak.saturating_sub(before) <= 2 * line_kib + 16 * 1024,
        "peak {peak} KiB, baseline {before} KiB, line {line_kib} KiB"
    );
}

/// `acp-client` reading at most 8 MiB a message, through the real server
/// on each profile, with a tool output three times that: the turn ends
/// as usual, the messages after it arrive, and the dropped output is
/// shown. On WebSocket the server sends the client nothing over its
/// limit (the client stated it on connecting) and says what it dropped, a
/// problem of the turn; on Streamable HTTP the client's SSE reader skips
/// the event as it comes, and the reconnecting relay between it and the
/// turn hands the error on: a problem of the turn too.
#[test]
fn acp_client_is_told_of_a_message_three_times_its_limit_and_the_turn_goes_on() {
    use std::process::{Command, Stdio};
    const CLIENT_LIMIT: usize = 8 * 1024 * 1024;
    let bridge = start("bigclientlimit", 3 * CLIENT_LIMIT);
    for (scheme, shown, problems) in [
        ("ws", "the bridge dropped a message from the agent of ", 1),
        (
            "http",
            "skipped a message from the agent: line of more than ",
            1,
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
            .args(["--summary-json", "--permission", "allow", "--timeout", "60"])
            .args(["--max-message-bytes", &CLIENT_LIMIT.to_string()])
            .arg("--connect")
            .arg(format!("{scheme}://{}/acp", bridge.addr))
            .arg("--cwd")
            .arg(&bridge.dir)
            .arg("print a long sequence")
            .env_remove("ACP_BRIDGE_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{scheme}: {e}: {stdout}\n{stderr}"));
        assert_eq!(
            summary["stopReason"], "end_turn",
            "{scheme}: {summary}\n{stderr}"
        );
        assert_eq!(summary["error"], Value::Null, "{scheme}: {summary}");
        assert_eq!(
            summary["reconnects"], 0,
            "{scheme}: the connection broke: {stderr}"
        );
        assert_eq!(
            summary["turnProblems"], problems,
            "{scheme}: {summary}\n{stderr}"
        );
        assert!(
            stderr.contains(shown) && stderr.contains(&CLIENT_LIMIT.to_string()),
            "{scheme}: {stderr}"
        );
        assert!(
            summary["largestLineBytes"].as_u64().unwrap() <= CLIENT_LIMIT as u64,
            "{scheme}: {summary}"
        );
        // What the agent said after the dropped output reached the client.
        assert!(
            stdout.contains("Done. I listed the project"),
            "{scheme}: {stdout}"
        );
    }
}

/// The server's peak relaying one line of nearly 64 MiB to `acp-client`,
/// which asks for positions (resumable delivery: every message to it is
/// stamped, a new string), printed for BENCHMARKS.md and held to twice
/// the line with 16 MiB to spare.
#[test]
fn peak_memory_relaying_a_64_mib_line_to_acp_client_with_positions() {
    use std::process::{Command, Stdio};
    const BIG: usize = 59_000_000;
    let bridge = start("big64rssclient", BIG);
    let before = bridge.status_kib("VmHWM:");
    let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args(["--summary-json", "--permission", "allow", "--timeout", "60"])
        .arg("--connect")
        .arg(format!("ws://{}/acp", bridge.addr))
        .arg("--cwd")
        .arg(&bridge.dir)
        .arg("print a long sequence")
        .env_remove("ACP_BRIDGE_TOKEN")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let peak = bridge.status_kib("VmHWM:");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(summary["stopReason"], "end_turn", "{summary}");
    assert_eq!(summary["badLines"], 0, "{summary}");
    let line = summary["largestLineBytes"].as_u64().unwrap();
    assert!(
        line > 60 << 20 && line <= LIMIT as u64,
        "line of {line} bytes"
    );
    let line_kib = line / 1024;
    println!(
        "server peak RSS relaying a {line}-byte line to acp-client (positions asked): {peak} KiB (before {before} KiB; {:.2}x the line over the baseline)",
        (peak - before) as f64 / line_kib as f64
    );
    assert!(
        peak.saturating_sub(before) <= 2 * line_kib + 16 * 1024,
        "peak {peak} KiB, baseline {before} KiB, line {line_kib} KiB"
    );
}
