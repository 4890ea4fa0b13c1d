//! The `acp-bridge` binary with a token file: one agent process per user
//! (its own `HOME`, working directory, log and crash domain), started on
//! the user's first message, stopped once idle, at most `--max-agents`
//! (past it, the agent left without a connection the longest is evicted);
//! no session of one user reachable by another (a reattach of her old
//! session id, after her sessions were evicted or her agent restarted);
//! a Streamable HTTP `GET` only for a session of its user; the
//! per-user connection limit exact under concurrent connects.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::ws_harness;
use ws_harness::*;

const ANA: &str = "ana-0123456789abcdef-token";
const BO: &str = "bo-0123456789abcdef-token";

fn token_file(dir: &Path) -> String {
    let tokens = json!({"tokens": {
        ANA: {"userId": "ana", "permissions": ["read", "write"]},
        BO: {"userId": "bo", "permissions": ["read", "write"]},
    }});
    let path = dir.join("tokens.json");
    std::fs::write(&path, tokens.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn start(name: &str, extra: &[&str]) -> Bridge {
    let dir = scratch_dir(name);
    let file = token_file(&dir);
    let state = dir.join("agents");
    let mut args = vec![
        "--token-file",
        &file,
        "--state-dir",
        state.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Bridge::start_in(dir, &args, &[])
}

async fn user(bridge: &Bridge, token: &str) -> Client {
    connect_with(&bridge.url(), Some(token), None)
        .await
        .expect("connect")
}

/// `initialize`; the mock agent's `_meta`: where its process runs.
async fn init(c: &mut Client) -> Value {
    let r = c
        .request("initialize", json!({"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}}}))
        .await;
    r["result"]["_meta"]["acp-mock-agent"].clone()
}

fn log(bridge: &Bridge) -> String {
    bridge.stderr.lock().unwrap().clone()
}

fn wait_log(bridge: &Bridge, text: &str) {
    let deadline = Instant::now() + STEP;
    while !log(bridge).contains(text) {
        assert!(
            Instant::now() < deadline,
            "no {text:?} in:\n{}",
            log(bridge)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The next message of `c` whose method starts with `_bridge/`, which must
/// be `method` (session updates before it are skipped).
async fn next_method(c: &mut Client, method: &str) -> Value {
    loop {
        let m = c.recv().await.unwrap();
        if m["method"].as_str().unwrap_or("").starts_with("_bridge/") {
            assert_eq!(m["method"], method, "{m}");
            return m;
        }
    }
}

fn wait_count(bridge: &Bridge, text: &str, n: usize) {
    let deadline = Instant::now() + STEP;
    while log(bridge).matches(text).count() < n {
        assert!(
            Instant::now() < deadline,
            "not {n} {text:?} in:\n{}",
            log(bridge)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill(pid: u64) {
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

fn alive(pid: u64) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (up to `STEP`) for the process `pid`, `what`, to be gone.
fn wait_gone(pid: u64, what: &str) {
    let deadline = Instant::now() + STEP;
    while alive(pid) {
        assert!(Instant::now() < deadline, "{what} still runs");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn error_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_user_has_their_own_agent_home_and_crash_domain() {
    let bridge = start("own_agents", &["--mock-args", "--delay-ms 150"]);
    let state = bridge.dir.join("agents");
    // No agent before a user's first message.
    let mut ana = user(&bridge, ANA).await;
    let mut bo = user(&bridge, BO).await;
    assert!(bridge.agent_pid().is_none());
    let a = init(&mut ana).await;
    let b = init(&mut bo).await;
    assert_eq!(a["home"], json!(state.join("ana/home").to_str().unwrap()));
    assert_eq!(a["cwd"], json!(state.join("ana/work").to_str().unwrap()));
    assert_eq!(b["home"], json!(state.join("bo/home").to_str().unwrap()));
    assert_eq!(b["cwd"], json!(state.join("bo/work").to_str().unwrap()));
    let (ana_pid, bo_pid) = (a["pid"].as_u64().unwrap(), b["pid"].as_u64().unwrap());
    assert_ne!(ana_pid, bo_pid);
    // HOME only the bridge's OS user can read.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(state.join("ana/home"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    // Both sessions are "mock-session-1": each agent numbers its own.
    let ana_session = ana.open_session(&bridge.dir).await;
    let bo_session = bo.open_session(&bridge.dir).await;
    assert_eq!(ana_session, bo_session);
    // bo's turn runs (slowly); ana's agent is killed meanwhile.
    let bo_turn = tokio::spawn(async move {
        let t = bo.turn(&bo_session, "bo's turn").await;
        (bo, t)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    kill(ana_pid);
    let exited = next_method(&mut ana, "_bridge/agent_exited").await;
    assert_eq!(exited["method"], "_bridge/agent_exited", "{exited}");
    assert_eq!(exited["params"]["lostSessions"], json!([ana_session]));
    let started = next_method(&mut ana, "_bridge/agent_started").await;
    assert_eq!(started["method"], "_bridge/agent_started", "{started}");
    let (bo, t) = bo_turn.await.unwrap();
    assert_eq!(t.stop_reason, "end_turn");
    assert!(alive(bo_pid));
    assert!(
        bo.seen
            .iter()
            .all(|m| !m["method"].as_str().unwrap_or("").starts_with("_bridge/")),
        "bo noticed ana's agent: {:?}",
        bo.seen
    );
    // Each agent's stderr goes to its own log, beside the bridge's, after
    // its run's start line; an agent that says nothing there (the mock)
    // leaves no file: its starts are in the bridge's log.
    wait_log(&bridge, "agent of ana exited");
    let log = std::fs::read_to_string(bridge.dir.join("gemini-acp.log")).unwrap();
    assert_eq!(log.matches("agent of ana started").count(), 2, "{log}");
    for user in ["ana", "bo"] {
        let own = bridge.dir.join(format!("gemini-acp.{user}.log"));
        assert!(!own.exists(), "{}", own.display());
    }
    // ana's restarted agent serves her.
    let s = ana.open_session(&bridge.dir).await;
    assert_eq!(ana.turn(&s, "again").await.stop_reason, "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_agents_stop_and_max_agents_refuse_clearly() {
    let bridge = start(
        "max_agents",
        &["--max-agents", "1", "--agent-idle-secs", "1"],
    );
    let mut ana = user(&bridge, ANA).await;
    let a = init(&mut ana).await;
    // The bridge runs one agent, ana's: bo's initialize gets a clear error,
    // ana notices nothing.
    let mut bo = user(&bridge, BO).await;
    let r = bo
        .request("initialize", json!({"protocolVersion": 1}))
        .await;
    assert_eq!(error_code(&r), -32012, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("--max-agents"), "{message}");
    let s = ana.open_session(&bridge.dir).await;
    assert_eq!(ana.turn(&s, "hello").await.stop_reason, "end_turn");
    // ana leaves: a second later her agent stops, and bo's starts.
    drop(ana);
    drop(bo);
    wait_log(&bridge, "agent of ana stopped: idle");
    wait_gone(a["pid"].as_u64().unwrap(), "ana's idle agent");
    let mut bo = user(&bridge, BO).await;
    let b = init(&mut bo).await;
    assert!(b["pid"].is_u64(), "{b}");
    let s = bo.open_session(&bridge.dir).await;
    assert_eq!(bo.turn(&s, "hello").await.stop_reason, "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_without_a_connection_makes_room_for_another_user() {
    // Idle agents would run ten minutes: only eviction frees the one slot.
    let bridge = start("evict", &["--max-agents", "1", "--agent-idle-secs", "600"]);
    let mut ana = user(&bridge, ANA).await;
    let a = init(&mut ana).await;
    let s = ana.open_session(&bridge.dir).await;
    assert_eq!(ana.turn(&s, "hello").await.stop_reason, "end_turn");
    drop(ana);
    // ana is gone (her connection closes a moment later): bo's agent
    // starts in place of hers.
    let mut bo = user(&bridge, BO).await;
    let deadline = Instant::now() + STEP;
    let b = loop {
        let r = bo
            .request("initialize", json!({"protocolVersion": 1}))
            .await;
        if r["error"].is_null() {
            break r["result"]["_meta"]["acp-mock-agent"].clone();
        }
        assert_eq!(error_code(&r), -32012, "{r}");
        assert!(Instant::now() < deadline, "ana's agent not evicted: {r}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(b["pid"].is_u64(), "{b}");
    wait_log(&bridge, "agent of ana evicted");
    wait_log(&bridge, "agent of ana stopped: evicted");
    wait_gone(a["pid"].as_u64().unwrap(), "ana's evicted agent");
    let s = bo.open_session(&bridge.dir).await;
    assert_eq!(bo.turn(&s, "hello").await.stop_reason, "end_turn");
    // bo is connected: ana, back, is refused, clearly.
    let mut ana = user(&bridge, ANA).await;
    let r = ana
        .request("initialize", json!({"protocolVersion": 1}))
        .await;
    assert_eq!(error_code(&r), -32012, "{r}");
    assert_eq!(bo.turn(&s, "still here").await.stop_reason, "end_turn");
}

/// Every message of `c` so far, as text: nothing of ana's may be in bo's.
fn all_text(c: &Client) -> String {
    c.seen.iter().map(Value::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_takeover_of_an_evicted_session_nor_after_a_restart() {
    // A small keep limit: ana's oldest left sessions are evicted.
    let bridge = start("takeover", &["--max-user-sessions", "2"]);
    let mut old = String::new();
    for n in 1..=4 {
        let mut ana = user(&bridge, ANA).await;
        let s = ana.open_session(&bridge.dir).await;
        let t = ana
            .turn(&s, if n == 1 { "ana's secret plan" } else { "more" })
            .await;
        assert_eq!(t.stop_reason, "end_turn");
        if n == 1 {
            old = s;
        }
        drop(ana);
        wait_count(&bridge, "user ana: websocket left", n);
    }
    // bo asks for ana's oldest session by its id: refused, nothing of hers.
    let mut bo = user(&bridge, BO).await;
    bo.init().await;
    let load = json!({"sessionId": old, "cwd": bridge.dir.to_str().unwrap(), "mcpServers": []});
    for method in ["session/load", "session/resume"] {
        let r = bo.request(method, load.clone()).await;
        assert!(r.get("error").is_some(), "{method}: {r}");
    }
    let r = bo
        .request(
            "session/prompt",
            json!({"sessionId": old, "prompt": [{"type":"text","text":"hi"}]}),
        )
        .await;
    assert!(r.get("error").is_some(), "{r}");
    assert!(!all_text(&bo).contains("secret"), "{}", all_text(&bo));
    // ana gets her session back, its history replayed.
    let mut ana = user(&bridge, ANA).await;
    ana.init().await;
    let r = ana.request("session/load", load.clone()).await;
    assert!(r.get("result").is_some(), "{r}");
    assert!(all_text(&ana).contains("ana's secret plan"));
    // The restart variant: ana's agent dies; bo still gets nothing of hers.
    let ana_pid = bridge_agent_of(&bridge, "ana");
    kill(ana_pid);
    wait_log(&bridge, "agent of ana started: pid");
    let mut bo = user(&bridge, BO).await;
    bo.init().await;
    for method in ["session/load", "session/resume"] {
        let r = bo.request(method, load.clone()).await;
        assert!(r.get("error").is_some(), "{method}: {r}");
    }
    assert!(!all_text(&bo).contains("secret"), "{}", all_text(&bo));
}

/// The pid of `user`'s agent, from the bridge's log.
fn bridge_agent_of(bridge: &Bridge, user: &str) -> u64 {
    let needle = format!("agent of {user} started: pid ");
    let all = log(bridge);
    let at = all
        .rfind(&needle)
        .unwrap_or_else(|| panic!("no {needle:?}"));
    all[at + needle.len()..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// One raw HTTP/1.1 request to `/acp`; the status and what was read
/// within `wait` (a stream stays open).
fn http(addr: SocketAddr, head: &str, body: &str, wait: Duration) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    write!(s, "{head}Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = s.read(&mut chunk) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&chunk[..n]);
    }
    let out = String::from_utf8_lossy(&out).into_owned();
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

fn post(addr: SocketAddr, token: &str, conn: Option<&str>, body: &str) -> (u16, String) {
    let conn = conn.map_or(String::new(), |c| format!("Acp-Connection-Id: {c}\r\n"));
    let head = format!(
        "POST /acp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n{conn}Content-Type: application/json\r\nConnection: close\r\n"
    );
    http(addr, &head, body, STEP)
}

fn get(
    addr: SocketAddr,
    token: &str,
    conn: &str,
    session: Option<&str>,
    wait: Duration,
) -> (u16, String) {
    let session = session.map_or(String::new(), |s| format!("Acp-Session-Id: {s}\r\n"));
    let head = format!(
        "GET /acp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nAcp-Connection-Id: {conn}\r\n{session}Accept: text/event-stream\r\nConnection: close\r\n"
    );
    http(addr, &head, "", wait)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_of_a_session_bos_agent_never_saw_opens_empty() {
    let bridge = start("get_404", &[]);
    let addr = bridge.addr;
    // ana's session, on her WebSocket.
    let mut ana = user(&bridge, ANA).await;
    let hers = ana.open_session(&bridge.dir).await;
    // bo's Streamable HTTP connection.
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let (status, out) = post(addr, BO, None, init);
    assert_eq!(status, 200, "{out}");
    let conn = out
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("acp-connection-id: ")
                .map(str::to_owned)
        })
        .unwrap();
    assert_eq!(conn.trim().len(), 32, "{conn}");
    assert!(conn.trim().bytes().all(|b| b.is_ascii_hexdigit()), "{conn}");
    let conn = conn.trim();
    // ana's session id, and a session nobody opened. bo's agent is his
    // own process: neither is a session it has seen, and either may be
    // one it kept (a session another server ran on the same state), so
    // the stream opens, empty, for the `session/load` that may follow (the
    // official TypeScript SDK's client opens a session's stream before it
    // loads it). Nothing of ana's comes on it: her session lives in her
    // agent, and bo learns nothing of which ids exist elsewhere (both
    // answers are alike).
    for session in [hers.as_str(), "mock-session-77"] {
        let (status, out) = get(addr, BO, conn, Some(session), Duration::from_millis(300));
        assert_eq!(status, 200, "{out}");
        assert!(!out.contains("data:"), "{out}");
    }
    // bo's own session: its stream opens.
    let new = json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd": bridge.dir.to_str().unwrap(),"mcpServers":[]}});
    assert_eq!(post(addr, BO, Some(conn), &new.to_string()).0, 202);
    let (status, events) = get(addr, BO, conn, None, Duration::from_millis(1500));
    assert_eq!(status, 200, "{events}");
    let his = events
        .split("\"sessionId\":\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no session/new answer in {events}"));
    let (status, out) = get(addr, BO, conn, Some(his), Duration::from_millis(300));
    assert_eq!(status, 200, "{out}");
    // Another connection of bo may open it too (to reattach it): the
    // session is his.
    let (_, out) = post(addr, BO, None, init);
    let other = out
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("acp-connection-id: ")
                .map(str::to_owned)
        })
        .unwrap();
    assert_ne!(other.trim(), conn);
    let (status, out) = get(
        addr,
        BO,
        other.trim(),
        Some(his),
        Duration::from_millis(300),
    );
    assert_eq!(status, 200, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_limit_exact_under_concurrent_connects() {
    let bridge = Arc::new(start("exact_limit", &["--max-user-connections", "20"]));
    let mut tries = Vec::new();
    for _ in 0..30 {
        let bridge = bridge.clone();
        tries.push(tokio::spawn(async move {
            connect_with(&bridge.url(), Some(ANA), None).await
        }));
    }
    let mut held = Vec::new();
    let mut refused = 0;
    for t in tries {
        match t.await.unwrap() {
            Ok(c) => held.push(c),
            Err(e) => {
                assert_eq!(refused_status(e), 429);
                refused += 1;
            }
        }
    }
    assert_eq!((held.len(), refused), (20, 10));
    // Every connection upgraded is served.
    for c in &mut held {
        c.init().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_silent_after_the_upgrade_is_closed() {
    let bridge = start("first_message", &["--first-message-secs", "1"]);
    let mut quiet = user(&bridge, ANA).await;
    let t0 = Instant::now();
    assert_eq!(close_code(&mut quiet).await, 1008);
    assert!(t0.elapsed() < Duration::from_secs(5));
    wait_log(&bridge, "no message within 1 s");
    // A client that speaks in time is served.
    let mut c = user(&bridge, ANA).await;
    let s = c.open_session(&bridge.dir).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(c.turn(&s, "still here").await.stop_reason, "end_turn");
}

/// An authenticated HTTP/1.1 connection kept alive and then silent is
/// closed by the server: the wait for the next request head is bounded as
/// the first one is (10 s), so idle keep-alive connections cannot pile up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed() {
    let bridge = start("keep_alive", &[]);
    let addr = bridge.addr;
    tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        // Two requests on the connection (a 404 does not close it), then
        // silence.
        let mut seen = String::new();
        for _ in 0..2 {
            write!(
                s,
                "GET / HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {ANA}\r\n\r\n"
            )
            .unwrap();
            let mut chunk = [0u8; 4096];
            let n = s.read(&mut chunk).unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
        assert_eq!(seen.matches("HTTP/1.1 404").count(), 2, "{seen}");
        let idle = Instant::now();
        let mut chunk = [0u8; 4096];
        let n = s
            .read(&mut chunk)
            .expect("the server closes an idle connection");
        assert_eq!(n, 0, "{}", String::from_utf8_lossy(&chunk[..n]));
        let waited = idle.elapsed();
        assert!(
            (Duration::from_secs(8)..Duration::from_secs(25)).contains(&waited),
            "closed after {waited:?}"
        );
    })
    .await
    .unwrap();
}
