//! `acp_codec::remote::Rejoin`, the client's side of resume, against the
//! team server's real core, `acp_codec::remote::Server`, with a scripted
//! agent (`tests/support/resume_server.rs`; on a WebSocket,
//! `tests/support/resume_ws.rs`): the connection breaks after every
//! message, and after every pair of messages, either way; each time the
//! client shows every update exactly once and in order, answers the
//! permission request, gets the stop reason, and the prompt reaches the
//! agent once.

use std::collections::{BTreeSet, VecDeque};

use acp_codec::remote::{Rejoin, RejoinError};
use serde_json::{json, Value};

use crate::resume_server::{ResumingServer, SESSION};

const UPDATES: [&str; 6] = ["one ", "two ", "three ", "four ", "five ", "six"];

/// What the scripted client saw.
#[derive(Debug, Default)]
struct Seen {
    shown: Vec<String>,
    asked: usize,
    stop: Option<String>,
    reconnects: usize,
    error: Option<RejoinError>,
}

/// What the client sends on a message it was handed.
fn react(message: &Value, seen: &mut Seen) -> Vec<Value> {
    match (
        message.get("method").and_then(Value::as_str),
        message.get("id"),
    ) {
        (Some("session/update"), _) => {
            let text = message["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap();
            seen.shown.push(text.to_owned());
            vec![]
        }
        (Some("session/request_permission"), Some(id)) => {
            seen.asked += 1;
            vec![
                json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}}),
            ]
        }
        (None, Some(id)) if *id == json!(1) => {
            vec![
                json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
            ]
        }
        (None, Some(id)) if *id == json!(2) => {
            assert_eq!(message["result"]["sessionId"], SESSION);
            vec![
                json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": "go"}]}}),
            ]
        }
        (None, Some(id)) if *id == json!(3) => {
            assert!(seen.stop.is_none(), "the stop reason arrived twice");
            seen.stop = Some(message["result"]["stopReason"].as_str().unwrap().to_owned());
            vec![]
        }
        other => panic!("unexpected message {other:?}: {message}"),
    }
}

/// One run: the connection breaks at each event (a message either way)
/// whose number is in `breaks`; what crossed at that moment is lost, and
/// the agent makes up to `lag` more steps before the client is back.
fn run(budget: usize, breaks: &BTreeSet<usize>, lag: usize) -> (Seen, usize) {
    let mut server = ResumingServer::new(budget, &UPDATES, Some(3));
    let mut conn = server.open();
    let mut rejoin = Rejoin::new();
    let mut seen = Seen::default();
    let mut connected = true;
    let mut events = 0usize;
    // (to the server?, line)
    let mut wire: VecDeque<(bool, String)> = VecDeque::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    wire.push_back((true, rejoin.outgoing(&init.to_string())));
    for _ in 0..10_000 {
        if seen.stop.is_some() || seen.error.is_some() {
            break;
        }
        if let Some((to_server, line)) = wire.pop_front() {
            events += 1;
            if breaks.contains(&events) && connected {
                connected = false;
                server.broken(conn);
            }
            if !connected {
                continue;
            }
            if to_server {
                wire.extend(server.handle(conn, &line).into_iter().map(|m| (false, m)));
            } else {
                match rejoin.incoming(&line) {
                    Ok(Some(text)) => {
                        let message: Value = serde_json::from_str(&text).unwrap();
                        assert!(
                            message.get("_meta").is_none(),
                            "the stamp is removed: {text}"
                        );
                        for reply in react(&message, &mut seen) {
                            wire.push_back((true, rejoin.outgoing(&reply.to_string())));
                        }
                    }
                    Ok(None) => {}
                    Err(e) => seen.error = Some(e),
                }
                // What follows a reconnect's initialize, once answered.
                wire.extend(rejoin.poll_to_server().into_iter().map(|l| (true, l)));
            }
            continue;
        }
        if !connected {
            for _ in 0..lag {
                let _ = server.step();
            }
            // The transport noticed: a new connection, and what goes first.
            conn = server.open();
            connected = true;
            seen.reconnects += 1;
            wire.extend(rejoin.reconnected(None).into_iter().map(|l| (true, l)));
            continue;
        }
        match server.step() {
            Some(()) => wire.extend(server.take(conn).into_iter().map(|m| (false, m))),
            None => panic!("stalled after {events} events with breaks {breaks:?}: {seen:?}"),
        }
    }
    (seen, server.prompts_run)
}

#[test]
fn an_unbroken_turn_is_the_reference() {
    let (seen, prompts) = run(1 << 20, &BTreeSet::new(), 0);
    assert_eq!(seen.shown, UPDATES);
    assert_eq!((seen.asked, seen.reconnects, prompts), (1, 0, 1));
    assert_eq!(seen.stop.as_deref(), Some("end_turn"));
}

#[test]
fn one_and_two_breaks_anywhere_lose_nothing_and_show_nothing_twice() {
    // Count the events of an unbroken run by breaking past its end.
    let mut total = 0;
    for n in 1.. {
        let (seen, _) = run(1 << 20, &BTreeSet::from([n]), 0);
        if seen.reconnects == 0 {
            total = n - 1;
            break;
        }
    }
    assert!(total >= 14, "{total} events");
    let mut runs = 0;
    for i in 1..=total {
        for j in i..=total + 8 {
            let breaks = BTreeSet::from([i, j]);
            let lag = (i + j) % 3;
            let (seen, prompts) = run(1 << 20, &breaks, lag);
            assert_eq!(seen.error, None, "{breaks:?}");
            assert_eq!(seen.shown, UPDATES, "breaks {breaks:?}");
            assert_eq!(seen.stop.as_deref(), Some("end_turn"), "{breaks:?}");
            assert_eq!(prompts, 1, "the prompt ran twice with breaks {breaks:?}");
            assert!(seen.asked >= 1, "{breaks:?}");
            assert!(seen.reconnects >= 1);
            runs += 1;
        }
    }
    assert!(runs > 100);
}

#[test]
fn a_gap_is_an_error_not_a_silent_loss() {
    // Each update pushes the previous one out of a 300-byte log: a break
    // before the turn's end leaves the client behind what is kept.
    let mut gaps = 0;
    for i in 1..40 {
        let (seen, _) = run(300, &BTreeSet::from([i]), 3);
        match &seen.error {
            Some(e @ RejoinError::Gap { session, .. }) => {
                assert_eq!(session, SESSION);
                assert!(e
                    .to_string()
                    .contains("cannot be resumed without losing messages"));
                gaps += 1;
            }
            Some(other) => panic!("{other}"),
            // No gap: then nothing was lost.
            None => assert_eq!(seen.shown, UPDATES, "break at {i}"),
        }
    }
    assert!(gaps > 0);
}

#[test]
fn a_server_without_resume_gets_the_bytes_unchanged() {
    let mut rejoin = Rejoin::new();
    let plain = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#;
    let sent = rejoin.outgoing(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    assert!(sent.contains("acp-codec/resume"));
    assert_eq!(rejoin.incoming(plain).unwrap().as_deref(), Some(plain));
    assert!(!rejoin.is_resumable());
    let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#;
    assert_eq!(rejoin.incoming(update).unwrap().as_deref(), Some(update));
    assert_eq!(rejoin.pending(), 0);
}

#[test]
fn a_position_already_seen_is_dropped_and_the_stamp_removed() {
    use acp_codec::remote::{stamp, Position};
    let mut rejoin = Rejoin::new();
    let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}"#;
    let first = stamp(update, Some("s1"), Position(1));
    assert_eq!(rejoin.incoming(&first).unwrap().as_deref(), Some(update));
    assert_eq!(rejoin.incoming(&first).unwrap(), None);
    // Another stream counts on its own.
    let other = stamp(update, Some("s2"), Position(1));
    assert_eq!(rejoin.incoming(&other).unwrap().as_deref(), Some(update));
    assert_eq!(rejoin.dropped_twice(), 1);
}

/// `acp-client --connect` against the resuming server on a WebSocket that
/// drops the connection at the given messages; returns the summary and
/// stdout.
#[cfg(target_os = "linux")]
fn client_through_breaks(breaks: &[usize], reconnect_secs: &str) -> (Value, String, usize) {
    let server = crate::resume_ws::ResumeWs::start(&UPDATES, breaks.iter().copied().collect());
    let (summary, stdout) = run_client(server.addr, reconnect_secs, &format!("{breaks:?}"));
    let prompts = server.state.lock().unwrap().prompts_run;
    assert_eq!(
        server
            .connections
            .load(std::sync::atomic::Ordering::Relaxed),
        1 + summary["reconnects"].as_u64().unwrap() as usize
    );
    (summary, stdout, prompts)
}

/// Runs `acp-client --connect ws://addr/acp` for one turn (`what` names the
/// run in a failure); its summary and stdout.
#[cfg(target_os = "linux")]
fn run_client(addr: std::net::SocketAddr, reconnect_secs: &str, what: &str) -> (Value, String) {
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "acp-rejoin-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let out = run_client_in(&dir, &format!("ws://{addr}/acp"), reconnect_secs, what);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// [`run_client`] with its session directory `dir` (left in place).
#[cfg(target_os = "linux")]
pub(crate) fn run_client_in(
    dir: &std::path::Path,
    url: &str,
    reconnect_secs: &str,
    what: &str,
) -> (Value, String) {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args([
            "--summary-json",
            "--permission",
            "allow",
            "--reconnect-secs",
            reconnect_secs,
        ])
        .arg("--connect")
        .arg(url)
        .arg("--cwd")
        .arg(dir)
        .arg("go")
        .env_remove("ACP_BRIDGE_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("acp-client did not finish within 60 s ({what})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    (summary, stdout)
}

#[cfg(target_os = "linux")]
#[test]
fn acp_client_resumes_through_dropped_connections() {
    // The permission request's lines come between the third and fourth.
    let (before, after) = (UPDATES[..3].concat(), UPDATES[3..].concat());
    // Unbroken, then broken at the prompt's first update, at the
    // permission request, and three times in one turn.
    for breaks in [&[][..], &[4], &[7], &[4, 8, 11]] {
        let (summary, stdout, prompts) = client_through_breaks(breaks, "20");
        assert_eq!(summary["stopReason"], "end_turn", "{breaks:?}: {summary}");
        assert_eq!(summary["reconnects"], breaks.len(), "{breaks:?}: {summary}");
        assert_eq!(
            summary["messageChunks"],
            UPDATES.len(),
            "{breaks:?}: {summary}"
        );
        assert_eq!(summary["permissionRequests"], 1, "{breaks:?}: {summary}");
        assert_eq!(stdout.matches(&before).count(), 1, "{breaks:?}: {stdout}");
        assert_eq!(stdout.matches(&after).count(), 1, "{breaks:?}: {stdout}");
        assert_eq!(prompts, 1, "{breaks:?}: the prompt ran {prompts} times");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn acp_client_without_reconnecting_fails_as_before() {
    let (summary, _, _) = client_through_breaks(&[4], "0");
    assert_eq!(summary["stopReason"], Value::Null, "{summary}");
    assert_eq!(summary["reconnects"], 0);
    assert!(
        summary["error"].as_str().unwrap().contains("connection"),
        "{summary}"
    );
}

/// Through the fault-injecting proxy: five breaks a turn (resets and
/// closes at byte offsets from a seed, past the first connection's
/// `initialize` answer; later handshakes may break too),
/// for several seeds: the turn ends as an unbroken one, every chunk once,
/// the prompt run once.
#[cfg(target_os = "linux")]
#[test]
fn a_turn_survives_five_random_breaks() {
    let (before, after) = (UPDATES[..3].concat(), UPDATES[3..].concat());
    for seed in [1u64, 43, 2026, 77_777] {
        let server = crate::resume_ws::ResumeWs::start(&UPDATES, BTreeSet::new());
        let plan = crate::fault_proxy::plan(seed, 5, 400, 2_500);
        let proxy = crate::fault_proxy::FaultProxy::start(server.addr, plan.clone());
        let (summary, stdout) = run_client(proxy.addr, "20", &format!("seed {seed}"));
        let broken = proxy.broken.load(std::sync::atomic::Ordering::Relaxed);
        let why = format!("seed {seed}, plan {plan:?}, {broken} breaks: {summary}");
        assert_eq!(summary["stopReason"], "end_turn", "{why}");
        assert_eq!(summary["messageChunks"], UPDATES.len(), "{why}");
        assert_eq!(stdout.matches(&before).count(), 1, "{why}: {stdout}");
        assert_eq!(stdout.matches(&after).count(), 1, "{why}: {stdout}");
        assert_eq!(server.state.lock().unwrap().prompts_run, 1, "{why}");
        assert!(broken >= 3, "{why}");
    }
}

/// `acp-client --stdio` as an editor's agent, through a server that drops
/// the connection twice mid-turn: a scripted editor on its stdio sees one
/// unbroken stream (its own ids answered, every chunk once, the
/// permission request to answer, the stop reason), and the prompt runs
/// once.
#[cfg(target_os = "linux")]
#[test]
fn stdio_relay_hides_reconnects_from_the_editor() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;

    let server = crate::resume_ws::ResumeWs::start(&UPDATES, BTreeSet::from([4, 9]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args(["--stdio", "--reconnect-secs", "20", "--connect"])
        .arg(format!("ws://{}/acp", server.addr))
        .env_remove("ACP_BRIDGE_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let _ = tx.send(serde_json::from_str(&line).unwrap());
        }
    });
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    let mut seen = Seen::default();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
    );
    while seen.stop.is_none() {
        let message = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the relay answers within 20 s");
        assert!(
            message.get("_meta").is_none(),
            "no stamp reaches the editor: {message}"
        );
        for reply in react(&message, &mut seen) {
            send(reply);
        }
    }
    drop(stdin);
    assert_eq!(seen.shown, UPDATES);
    assert_eq!(seen.asked, 1);
    assert_eq!(seen.stop.as_deref(), Some("end_turn"));
    assert_eq!(server.state.lock().unwrap().prompts_run, 1);
    assert_eq!(
        server
            .connections
            .load(std::sync::atomic::Ordering::Relaxed),
        3,
        "two reconnects the editor never saw"
    );
    // The editor closed stdin: the relay ends cleanly.
    let status = child.wait().unwrap();
    assert!(status.success());
}

/// A connection that goes silent without a FIN (the proxy stops relaying
/// and holds it open): the client's pings go unanswered, it counts the
/// connection dead within 30 s and reconnects. This harness still holds
/// the silent connection (it has no liveness rule of its own, unlike
/// `acp-bridge`, which counts a WebSocket silent for 20 s as broken:
/// `rejoin_bridge`), and its writes land in the proxy's buffers: the
/// real core does not take over a connection it has not seen break, so
/// the new one cannot resume, and
/// the client reports the turn lost (it asks for the prompt again) rather
/// than run it a second time. The prompt reached the agent once.
#[cfg(target_os = "linux")]
#[test]
fn a_silent_connection_is_noticed_and_replaced() {
    use crate::fault_proxy::{Fault, FaultProxy};
    let server = crate::resume_ws::ResumeWs::start(&UPDATES, BTreeSet::new());
    let proxy = FaultProxy::start(server.addr, vec![(900, Fault::Stall)]);
    let started = std::time::Instant::now();
    let (summary, stdout) = run_client(proxy.addr, "20", "stall");
    let took = started.elapsed();
    assert_eq!(summary["reconnects"], 1, "{summary}");
    assert!(took < std::time::Duration::from_secs(45), "{took:?}");
    assert_eq!(summary["stopReason"], Value::Null, "{summary}: {stdout}");
    assert!(
        summary["error"]
            .as_str()
            .is_some_and(|e| e.contains("the turn in progress is lost")),
        "{summary}"
    );
    assert_eq!(server.state.lock().unwrap().prompts_run, 1);
}
