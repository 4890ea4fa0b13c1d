//! Several servers behind nginx (`deploy/nginx/acp-bridge-cluster.conf`,
//! rendered with loopback ports and a throwaway certificate): two real
//! `acp-bridge`s sharing a token file and a state directory, each user's
//! connections hashed to one of them, agents that save their sessions in
//! their `HOME` (`acp-mock-agent --persist`). The server serving a user is
//! killed in the middle of a turn; the user's `acp-client --stdio` (a
//! scripted editor on its stdio) reconnects, lands on the other server,
//! loads the session from what the agent saved, tells the editor that the
//! running turn is lost, and the next turn works there, with the whole
//! history; on both profiles (on Streamable HTTP, the other server refuses
//! the reopened streams of a connection it does not know, and the client
//! loads the session on a new one). The one-turn client over Streamable
//! HTTP, its server killed the same way, ends with the lost turn's error, and
//! its next run continues the session on the other server.
//!
//! Without nginx the test prints a notice and passes, unless
//! `ACP_REQUIRE_NGINX=1` (CI), where it fails.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use acp_codec::remote::{stamp, Position};
use acp_codec::remote::{Rejoin, TURN_LOST};

use crate::editor::{Editor, WAIT};
use crate::nginx::{nginx_binary, pki, Nginx, Pki};
use crate::ws_harness::{scratch_dir, Bridge};

const ANA: &str = "ana-token-of-the-cluster-test-0123456789";

/// The texts of the prompts a `session/load` replayed, in order.
fn prompts_in(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Two bridges sharing a token file (ana's token) and a state
/// directory, each with a log directory of its own, behind nginx on the
/// rendered cluster file; `None` without nginx.
struct Cluster {
    bridges: [Bridge; 2],
    nginx: Nginx,
    pki: Pki,
    shared: PathBuf,
}

impl Cluster {
    fn start() -> Option<Self> {
        let bin = nginx_binary()?;
        let shared = scratch_dir("cluster-shared");
        let state = shared.join("agents");
        let tokens = shared.join("tokens.json");
        let file = json!({"tokens": {ANA: {"userId": "ana", "permissions": ["read", "write"]}}});
        std::fs::write(&tokens, file.to_string()).unwrap();
        let agent = format!("{} --persist", env!("CARGO_BIN_EXE_acp-mock-agent"));
        let args = [
            "--token-file",
            tokens.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
            "--agent",
            &agent,
        ];
        let bridges = [
            Bridge::start_in(scratch_dir("cluster-a"), &args, &[]),
            Bridge::start_in(scratch_dir("cluster-b"), &args, &[]),
        ];
        let certs = shared.join("pki");
        std::fs::create_dir_all(&certs).unwrap();
        let pki = pki(&certs);
        let ports = [bridges[0].addr.port(), bridges[1].addr.port()];
        let nginx = Nginx::start(&bin, "acp-bridge-cluster.conf", &pki, &ports);
        Some(Self {
            bridges,
            nginx,
            pki,
            shared,
        })
    }
}

#[test]
fn a_users_server_dies_mid_turn_and_another_takes_the_session_up() {
    a_server_dies_mid_turn("wss");
}

/// The same over Streamable HTTP: the client's streams, reopened with
/// `Last-Event-ID`, land on the other server, which does not know the
/// connection (`404`); the client goes on with a new connection there and
/// loads the session.
#[test]
fn over_streamable_http_a_users_server_dies_mid_turn_and_another_takes_the_session_up() {
    a_server_dies_mid_turn("https");
}

/// Ana's server killed mid-turn, her `acp-client --stdio` connected over
/// `scheme` (`wss` or `https`) through nginx.
fn a_server_dies_mid_turn(scheme: &str) {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let (bridges, nginx, pki, shared) = (
        &mut cluster.bridges,
        &cluster.nginx,
        &cluster.pki,
        &cluster.shared,
    );
    let url = format!("{scheme}://localhost:{}/acp", nginx.port);
    let mut editor = Editor::start(
        &[
            "--reconnect-secs",
            "30",
            "--connect",
            &url,
            "--ca-cert",
            pki.ca.to_str().unwrap(),
        ],
        &[("ACP_BRIDGE_TOKEN", ANA)],
    );
    let started = Instant::now();
    let init = editor.initialize();
    assert!(init.get("result").is_some(), "{init}");
    let project = shared.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let session = editor.new_session(project.to_str().unwrap());
    // The server that serves ana runs her agent; the other runs none.
    let serving = bridges.iter().position(|b| b.agent_pid().is_some());
    let serving = serving.expect("one server runs ana's agent");
    let other = 1 - serving;
    assert!(bridges[other].agent_pid().is_none());

    // A whole turn on it.
    let first = editor.prompt(&session, "first prompt");
    let answer = editor.answer(first, "the first prompt");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    // The next turn stops at a permission request, unanswered: then the
    // server dies (its agent with it).
    editor.hold_permissions = true;
    let second = editor.prompt(&session, "second prompt");
    let deadline = Instant::now() + WAIT;
    while editor.held.is_empty() {
        assert!(Instant::now() < deadline, "no permission request");
        let _ = editor.next(Duration::from_secs(1));
    }
    bridges[serving].child.kill().unwrap();
    let _ = bridges[serving].child.wait();
    editor.hold_permissions = false;

    // The turn in progress is lost, and the editor is told so (once the
    // session is loaded on the other server).
    let lost = editor.answer(second, "the second prompt");
    let message = lost["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("turn in progress is lost"), "{lost}");
    let said = editor.stderr.lock().unwrap().clone();
    assert!(said.contains("loading the sessions again"), "{said}");
    assert!(bridges[other].agent_pid().is_some(), "ana moved: {said}");

    // The next turn works on the other server, and the agent's history
    // (saved by the agent that died) is all there.
    let third = editor.prompt(&session, "third prompt");
    let answer = editor.answer(third, "the third prompt");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // The history the client's own load replayed never reached the
    // editor (it had it).
    assert_eq!(
        prompts_in(&editor.updates(&session, 0)),
        Vec::<String>::new()
    );
    let from = editor.seen.len();
    let load = editor.request(
        "session/load",
        json!({"sessionId": session, "cwd": project, "mcpServers": []}),
    );
    let loaded = editor.answer(load, "session/load");
    assert!(loaded.get("result").is_some(), "{loaded}");
    // The whole history came before the load's answer, on both profiles
    // (over Streamable HTTP both are on the session's stream, in order).
    assert_eq!(
        prompts_in(&editor.updates(&session, from)),
        ["first prompt", "second prompt", "third prompt"]
    );
    // Nothing reached the editor twice: one answer per request.
    let mut ids: Vec<&Value> = editor
        .seen
        .iter()
        .filter(|m| m.get("method").is_none())
        .map(|m| &m["id"])
        .collect();
    let all = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), all, "an answer came twice");
    assert!(editor.finish());

    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "{took:?}");
    let _ = std::fs::remove_dir_all(shared);
}

/// The client's side, without sockets: a reconnect lands on a server that
/// does not know the connection; `Rejoin` asks for a clean connection,
/// loads the session there, keeps the replayed history from the client,
/// and fails the prompt that was running once the session is loaded.
#[test]
fn a_server_that_does_not_know_the_connection_gets_the_sessions_loaded() {
    let mut rejoin = Rejoin::new();
    let _ = rejoin.outgoing(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    let answer =
        r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"acp-codec/resume":{"connection":"7"}}}}"#;
    assert!(rejoin
        .incoming(&stamp(answer, None, Position(1)))
        .unwrap()
        .is_some());
    let _ = rejoin.outgoing(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
    );
    let made = r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#;
    assert!(rejoin
        .incoming(&stamp(made, None, Position(2)))
        .unwrap()
        .is_some());
    let _ = rejoin.outgoing(
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#,
    );
    assert!(rejoin.is_resumable());

    // The server died; the new connection's server does not know "7".
    let lines = rejoin.reconnected(None);
    assert_eq!(lines.len(), 1, "initialize first, alone: {lines:?}");
    let init: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(
        init["params"]["_meta"]["acp-codec/cursor"]["connection"],
        "7"
    );
    let unknown = json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}});
    assert_eq!(rejoin.incoming(&unknown.to_string()).unwrap(), None);
    assert!(rejoin.poll_to_server().is_empty(), "nothing resumed there");
    assert!(rejoin.take_restart());
    assert!(rejoin.is_starting_over());

    // A clean connection: no cursor; the session loaded, not resumed, and
    // the prompt not sent again.
    let lines = rejoin.reconnected(None);
    let init: Value = serde_json::from_str(&lines[0]).unwrap();
    assert!(init["params"]["_meta"].get("acp-codec/cursor").is_none());
    assert!(init["params"]["_meta"].get("acp-codec/resume").is_some());
    let fresh = json!({"jsonrpc": "2.0", "id": init["id"], "result": {"_meta": {"acp-codec/resume": {"connection": "1"}}}});
    let fresh = stamp(&fresh.to_string(), None, Position(1));
    assert_eq!(rejoin.incoming(&fresh).unwrap(), None);
    assert!(!rejoin.take_restart());
    let next = rejoin.poll_to_server();
    assert_eq!(next.len(), 1, "{next:?}");
    let load: Value = serde_json::from_str(&next[0]).unwrap();
    assert_eq!(load["method"], "session/load");
    assert_eq!(load["params"]["sessionId"], "s1");
    assert_eq!(load["params"]["cwd"], "/p");
    // The history it replays is the client's already.
    let history =
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
    let history = stamp(history, Some("s1"), Position(1));
    assert_eq!(rejoin.incoming(&history).unwrap(), None);
    assert!(rejoin.poll_to_client().is_empty(), "not before the load");
    let loaded = json!({"jsonrpc": "2.0", "id": load["id"], "result": {}});
    let loaded = stamp(&loaded.to_string(), Some("s1"), Position(2));
    assert_eq!(rejoin.incoming(&loaded).unwrap(), None);
    let told = rejoin.poll_to_client();
    assert_eq!(told.len(), 1, "{told:?}");
    let lost: Value = serde_json::from_str(&told[0]).unwrap();
    assert_eq!(lost["id"], 3);
    assert_eq!(lost["error"]["message"], TURN_LOST);
    assert_eq!((rejoin.pending(), rejoin.replayed()), (0, 1));
    // Updates flow again, and the client may resume on this server.
    let live = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"n":1}}}"#;
    let got = rejoin
        .incoming(&stamp(live, Some("s1"), Position(3)))
        .unwrap();
    assert_eq!(got.as_deref(), Some(live));
    assert!(rejoin.is_resumable());
}

/// A reconnect's `initialize` refused (the agent cannot start there): the
/// relay gives up with the server's words, rather than wait for an answer
/// that will not come.
#[test]
fn a_refused_reconnect_is_an_error() {
    let mut rejoin = Rejoin::new();
    let _ = rejoin.outgoing(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    let answer =
        r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"acp-codec/resume":{"connection":"7"}}}}"#;
    let _ = rejoin.incoming(&stamp(answer, None, Position(1))).unwrap();
    let lines = rejoin.reconnected(None);
    let init: Value = serde_json::from_str(&lines[0]).unwrap();
    let refused = json!({"jsonrpc": "2.0", "id": init["id"], "error": {"code": -32012, "message": "too many agents"}});
    let e = rejoin.incoming(&refused.to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server refused the new connection: too many agents"
    );
}

/// Streamable HTTP through the same file: HTTP/2 from the client, SSE
/// passed on unbuffered; a whole turn of the one-turn client.
///
/// (nginx 1.22's HTTP/2 front holds a proxied SSE response's headers until
/// its first bytes: the bridge opens each stream with a comment, so the
/// turn does not wait for the first 15 s keep-alive.)
#[test]
fn streamable_http_runs_through_the_cluster_file() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let (nginx, pki) = (&cluster.nginx, &cluster.pki);
    let project = cluster.shared.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let started = Instant::now();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args([
            "--summary-json",
            "--permission",
            "allow",
            "--reconnect-secs",
            "0",
        ])
        .args([
            "--connect",
            &format!("https://localhost:{}/acp", nginx.port),
        ])
        .arg("--ca-cert")
        .arg(&pki.ca)
        .arg("--cwd")
        .arg(&project)
        .arg("over http")
        .env("ACP_BRIDGE_TOKEN", ANA)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or("null")).unwrap();
    assert_eq!(
        summary["stopReason"],
        "end_turn",
        "{summary}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let log = nginx.access_log();
    assert!(log.contains("\"POST /acp HTTP/2.0\" 200"), "{log}");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "{took:?}");
    let _ = std::fs::remove_dir_all(&cluster.shared);
}

/// What a child writes on one of its pipes, as it comes.
fn collect(
    mut pipe: impl std::io::Read + Send + 'static,
) -> std::sync::Arc<std::sync::Mutex<String>> {
    let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let into = std::sync::Arc::clone(&text);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            let chunk = String::from_utf8_lossy(&buf[..n]).into_owned();
            into.lock().unwrap().push_str(&chunk);
        }
    });
    text
}

/// Waits until `text` holds `what`.
fn wait_for(text: &std::sync::Mutex<String>, what: &str, also: &std::sync::Mutex<String>) {
    let deadline = Instant::now() + WAIT;
    while !text.lock().unwrap().contains(what) {
        assert!(
            Instant::now() < deadline,
            "no {what:?} in {}\n{}",
            text.lock().unwrap(),
            also.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The one-turn client over Streamable HTTP: its run waits on a
/// permission question when its server dies; the client loads the
/// session on the other server and the run ends with the lost turn's
/// error (exit 1). A next run with `--session` continues the session
/// there.
#[test]
fn a_one_turn_run_over_http_loses_its_turn_and_the_next_run_continues() {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let url = format!("https://localhost:{}/acp", cluster.nginx.port);
    let project = cluster.shared.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let client = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_acp-client"));
        c.args(["--reconnect-secs", "30", "--connect", &url])
            .arg("--ca-cert")
            .arg(&cluster.pki.ca)
            .arg("--cwd")
            .arg(&project)
            .args(args)
            .env("ACP_BRIDGE_TOKEN", ANA);
        c
    };
    let mut run = client(&["--permission", "ask", "first prompt"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = collect(run.stdout.take().unwrap());
    let err = collect(run.stderr.take().unwrap());
    wait_for(&out, "choose 1-", &err);
    let bridges = &mut cluster.bridges;
    let serving = bridges.iter().position(|b| b.agent_pid().is_some());
    let serving = serving.expect("one server runs ana's agent");
    bridges[serving].child.kill().unwrap();
    let _ = bridges[serving].child.wait();
    wait_for(&err, "loading the sessions again", &out);
    // The question's answer goes nowhere (its agent is gone); then the
    // client reads the lost turn.
    let mut stdin = run.stdin.take().unwrap();
    stdin.write_all(b"1\n").unwrap();
    drop(stdin);
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100));
    let (said, printed) = (err.lock().unwrap().clone(), out.lock().unwrap().clone());
    assert!(!status.success(), "{printed}\n{said}");
    assert!(said.contains(TURN_LOST), "{printed}\n{said}");
    let other = 1 - serving;
    assert!(bridges[other].agent_pid().is_some(), "ana moved: {said}");

    // The session goes on there.
    let session = printed
        .split("session ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("the run named its session")
        .to_owned();
    let next = client(&[
        "--permission",
        "allow",
        "--summary-json",
        "--session",
        &session,
        "second prompt",
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&next.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or("null")).unwrap();
    assert_eq!(
        summary["stopReason"],
        "end_turn",
        "{summary}\n{}",
        String::from_utf8_lossy(&next.stderr)
    );
    assert_eq!(summary["sessionId"], session.as_str());
    let _ = std::fs::remove_dir_all(&cluster.shared);
}
