//! `acp-client` reconnecting to the real `acp-bridge` (its built-in mock
//! agent) through the fault-injecting proxy, on both profiles: the team
//! server keeps what it sent; on WebSocket it detaches a broken
//! connection instead of cancelling its turn and hands the next
//! connection what it missed, on Streamable HTTP the connection outlives
//! its TCP connections and each event stream reopens with
//! `Last-Event-ID`. The agent is the built-in mock behind a wrapper that
//! logs every line the bridge writes it: each prompt is counted where it
//! runs, at the agent.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde_json::Value;

use acp_codec::remote::TURN_LOST;

use crate::fault_proxy::{plan, plan_with_stalls, Fault, FaultProxy};
use crate::ws_harness::{bridge_exe, scratch_dir, Bridge};

/// A bridge whose agent is the built-in mock behind a shell wrapper that
/// copies every line it is sent into a log; the bridge, and the log.
fn counted_bridge(name: &str, args: &[&str]) -> (Bridge, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir(name);
    let log = dir.join("agent-stdin.log");
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntee -a '{}' | exec '{}' --mock-agent\n",
            log.display(),
            bridge_exe().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let agent = script.to_str().unwrap().to_owned();
    let mut all = vec!["--agent", agent.as_str()];
    all.extend_from_slice(args);
    (Bridge::start_in(dir, &all, &[]), log)
}

/// How many `session/prompt` requests the agent was sent (its log).
fn prompts_at_agent(log: &std::path::Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "session/prompt")
        .count()
}

/// One turn of `acp-client --connect ws://addr/acp`: its summary and
/// stdout (the transcript).
fn turn(addr: SocketAddr, what: &str) -> (Value, String) {
    turn_at(&format!("ws://{addr}/acp"), what)
}

/// One turn of `acp-client --connect URL`: its summary and stdout (the
/// transcript).
fn turn_at(url: &str, what: &str) -> (Value, String) {
    let cwd = scratch_dir("rejoin-cwd");
    let (summary, stdout) = crate::rejoin::run_client_in(&cwd, url, "20", what);
    let transcript = stdout
        .lines()
        .filter(|l| !l.starts_with('{'))
        .map(|l| l.replace(&cwd.display().to_string(), "CWD"))
        // The notes the agent writes name the directory: their size
        // varies with its name's length.
        .map(|l| match l.split_once(" (") {
            Some((head, _)) if l.starts_with("fs: wrote ") => head.to_owned(),
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let _ = std::fs::remove_dir_all(&cwd);
    (summary, transcript)
}

/// The fields of a turn's summary that do not depend on the connection.
fn turn_of(summary: &Value) -> Value {
    let keep = [
        "stopReason",
        "messageChunks",
        "thoughtChunks",
        "permissionRequests",
        "permissionsAllowed",
        "toolCalls",
        "toolCallUpdates",
        "plans",
        "fsWrites",
        "updates",
        "sessionId",
    ];
    keep.iter()
        .map(|k| ((*k).to_owned(), summary[*k].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Five breaks a turn (resets and closes from a seed), for several seeds:
/// the turn is the unbroken turn, message for message, with no chunk
/// shown twice and the prompt run once (one session, one stop reason).
#[test]
fn a_turn_on_the_real_server_survives_five_random_breaks() {
    let (bridge, log) = counted_bridge("rejoin-real", &[]);
    let (reference, transcript) = turn(bridge.addr, "unbroken");
    assert_eq!(reference["stopReason"], "end_turn", "{reference}");
    assert_eq!(reference["reconnects"], 0);
    assert_eq!(prompts_at_agent(&log), 1);
    for seed in [1u64, 43, 2026, 77_777] {
        let (bridge, log) = counted_bridge("rejoin-real", &[]);
        let faults = plan(seed, 5, 1_200, 6_000);
        let proxy = FaultProxy::start(bridge.addr, faults.clone());
        let (summary, got) = turn(proxy.addr, &format!("seed {seed}"));
        let broken = proxy.broken.load(std::sync::atomic::Ordering::Relaxed);
        let why = format!(
            "seed {seed}, plan {faults:?}, {broken} breaks: {summary}\n{}",
            bridge.stderr.lock().unwrap()
        );
        assert_eq!(turn_of(&summary), turn_of(&reference), "{why}");
        assert_eq!(got, transcript, "{why}");
        // A break during a new connection's handshake is a failed dial,
        // not a reconnect.
        let reconnects = summary["reconnects"].as_u64().unwrap();
        assert!(reconnects >= 1 && reconnects <= broken as u64, "{why}");
        assert_eq!(prompts_at_agent(&log), 1, "the prompt at the agent: {why}");
    }
}

/// One reset mid-turn, after the first permission request: the turn is
/// the unbroken one.
#[test]
fn a_reset_on_the_real_server_is_resumed() {
    let (bridge, _) = counted_bridge("rejoin-real-reset", &[]);
    let (reference, _) = turn(bridge.addr, "unbroken");
    let (bridge, log) = counted_bridge("rejoin-real-reset", &[]);
    let proxy = FaultProxy::start(bridge.addr, vec![(1_500, Fault::Reset)]);
    let (summary, _) = turn(proxy.addr, "reset");
    assert_eq!(turn_of(&summary), turn_of(&reference), "{summary}");
    assert_eq!(summary["reconnects"], 1, "{summary}");
    assert_eq!(prompts_at_agent(&log), 1, "the prompt at the agent");
}

/// A WebSocket that goes silent mid-turn (no FIN, nothing more either
/// way): the server counts it broken after 20 s without a byte from the
/// client, before the client gives up on it (30 s without a pong), so
/// the client's reconnect resumes the turn: the unbroken turn, the
/// prompt run once.
#[test]
fn a_stall_over_websocket_is_noticed_by_both_ends_and_resumed() {
    let (bridge, _) = counted_bridge("rejoin-ws-stall", &[]);
    let (reference, _) = turn(bridge.addr, "unbroken");
    let (bridge, log) = counted_bridge("rejoin-ws-stall", &[]);
    let proxy = FaultProxy::start(bridge.addr, vec![(1_500, Fault::Stall)]);
    let (summary, _) = turn(proxy.addr, "stall");
    let why = format!("{summary}\n{}", bridge.stderr.lock().unwrap());
    assert_eq!(turn_of(&summary), turn_of(&reference), "{why}");
    assert_eq!(summary["reconnects"], 1, "{why}");
    assert!(
        bridge
            .stderr
            .lock()
            .unwrap()
            .contains("nothing from the client in"),
        "the server noticed the silence: {why}"
    );
    assert_eq!(prompts_at_agent(&log), 1, "the prompt at the agent");
}

/// Streamable HTTP: five breaks a turn (resets and closes from a seed,
/// over the one HTTP/2 connection every request shares), for several
/// seeds: the turn is the unbroken turn, message for message, none shown
/// twice, the prompt run once; each break is one reconnect at most.
#[test]
fn a_turn_over_http_on_the_real_server_survives_five_random_breaks() {
    let (bridge, _) = counted_bridge("rejoin-http", &[]);
    let (reference, transcript) = turn_at(&format!("http://{}/acp", bridge.addr), "unbroken");
    assert_eq!(reference["stopReason"], "end_turn", "{reference}");
    assert_eq!(reference["reconnects"], 0);
    for seed in [1u64, 43, 2026, 77_777] {
        let (bridge, log) = counted_bridge("rejoin-http", &[]);
        let faults = plan(seed, 5, 1_200, 6_000);
        let proxy = FaultProxy::start(bridge.addr, faults.clone());
        let (summary, got) = turn_at(
            &format!("http://{}/acp", proxy.addr),
            &format!("seed {seed}"),
        );
        let broken = proxy.broken.load(std::sync::atomic::Ordering::Relaxed);
        let why = format!(
            "seed {seed}, plan {faults:?}, {broken} breaks: {summary}\n{}",
            bridge.stderr.lock().unwrap()
        );
        assert_eq!(got, transcript, "{why}");
        assert_eq!(turn_of(&summary), turn_of(&reference), "{why}");
        let reconnects = summary["reconnects"].as_u64().unwrap();
        assert!(reconnects >= 1 && reconnects <= broken as u64, "{why}");
        assert_eq!(prompts_at_agent(&log), 1, "the prompt at the agent: {why}");
    }
}

/// Streamable HTTP: a stall (no FIN, nothing more either way) mid-turn is
/// noticed by the missing keep-alives and resumed on a new connection.
#[test]
fn a_stall_over_http_is_noticed_and_resumed() {
    let (bridge, _) = counted_bridge("rejoin-http-stall", &[]);
    let (reference, _) = turn_at(&format!("http://{}/acp", bridge.addr), "unbroken");
    let (bridge, log) = counted_bridge("rejoin-http-stall", &[]);
    let proxy = FaultProxy::start(bridge.addr, vec![(2_500, Fault::Stall)]);
    let (summary, _) = turn_at(&format!("http://{}/acp", proxy.addr), "stall");
    assert_eq!(turn_of(&summary), turn_of(&reference), "{summary}");
    assert_eq!(summary["reconnects"], 1, "{summary}");
    assert_eq!(prompts_at_agent(&log), 1, "the prompt at the agent");
}

/// Streamable HTTP: five breaks of a turn, resets, closes and stalls at
/// offsets from a seed (a stall is noticed by the missing keep-alives, or
/// a `POST` without an answer, within 30 s): the unbroken turn, nothing
/// twice, the prompt run once.
#[test]
fn a_turn_over_http_survives_five_breaks_with_stalls() {
    let (bridge, _) = counted_bridge("rejoin-http-stalls", &[]);
    let (reference, transcript) = turn_at(&format!("http://{}/acp", bridge.addr), "unbroken");
    let seed = 5u64;
    let faults = plan_with_stalls(seed, 5, 1_200, 6_000);
    assert!(
        faults.iter().any(|(_, f)| *f == Fault::Stall),
        "the seed's plan has a stall: {faults:?}"
    );
    let (bridge, log) = counted_bridge("rejoin-http-stalls", &[]);
    let proxy = FaultProxy::start(bridge.addr, faults.clone());
    let (summary, got) = turn_at(&format!("http://{}/acp", proxy.addr), "stalls");
    let broken = proxy.broken.load(std::sync::atomic::Ordering::Relaxed);
    let why = format!(
        "plan {faults:?}, {broken} breaks: {summary}\n{}",
        bridge.stderr.lock().unwrap()
    );
    assert_eq!(got, transcript, "{why}");
    assert_eq!(turn_of(&summary), turn_of(&reference), "{why}");
    let reconnects = summary["reconnects"].as_u64().unwrap();
    assert!(reconnects >= 1 && reconnects <= broken as u64, "{why}");
    assert_eq!(prompts_at_agent(&log), 1, "the prompt at the agent: {why}");
}

/// Streamable HTTP with a replay buffer too small for what a break
/// misses: the reopened stream's `Last-Event-ID` is refused (`409`, a
/// gap), and the client goes on with a new connection and
/// `session/load`; the running turn fails with the lost turn's error
/// rather than show a turn with messages missing, and the session goes
/// on (a next run continues it).
#[test]
fn a_gap_over_http_falls_back_to_loading_the_session() {
    let (bridge, log) = counted_bridge("rejoin-http-gap", &["--replay-bytes", "64"]);
    let proxy = FaultProxy::start(bridge.addr, vec![(1_500, Fault::Reset)]);
    let cwd = scratch_dir("rejoin-gap-cwd");
    let run = |addr: SocketAddr, more: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_acp-client"))
            .args(["--summary-json", "--permission", "allow"])
            .args(["--reconnect-secs", "20", "--connect"])
            .arg(format!("http://{addr}/acp"))
            .arg("--cwd")
            .arg(&cwd)
            .args(more)
            .env_remove("ACP_BRIDGE_TOKEN")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or("null")).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status, summary, stderr)
    };
    let (status, summary, said) = run(proxy.addr, &["go"]);
    assert!(!status.success(), "{summary}\n{said}");
    assert!(said.contains("HTTP 409"), "{said}");
    assert!(said.contains("loading the sessions again"), "{said}");
    let error = summary["error"].as_str().unwrap_or_default();
    assert!(error.contains(TURN_LOST), "{summary}");
    assert!(summary["reconnects"].as_u64().unwrap() >= 1, "{summary}");
    // The lost turn ran once at the agent: the client did not send it again.
    assert_eq!(prompts_at_agent(&log), 1, "the prompt at the agent");
    let session = summary["sessionId"].as_str().unwrap().to_owned();
    let (status, next, said) = run(bridge.addr, &["--session", &session, "again"]);
    assert!(status.success(), "{next}\n{said}");
    assert_eq!(next["stopReason"], "end_turn", "{next}\n{said}");
    assert_eq!(next["sessionId"], session.as_str());
    assert_eq!(prompts_at_agent(&log), 2, "one prompt a run, at the agent");
    let _ = std::fs::remove_dir_all(&cwd);
}
