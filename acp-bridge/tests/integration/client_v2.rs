//! `acp-client` in front of a v2 agent (`acp-mock-agent --protocol 2`,
//! which refuses a v1 `initialize` with `-32022`): the client asks for v1,
//! then speaks v2 through the translator. A one-shot turn renders as a v1
//! turn does and its `--summary-json` has the v1 run's fields; Ctrl-C
//! cancels; `--session` resumes; `--stdio` bridges a v1 editor (every line
//! it receives valid v1), and a v2 editor in front of the v1 mock (every
//! line it receives valid v2); the interactive mode runs a turn; the team
//! server's v2 agent is reached with `--connect`, and a connection broken
//! mid-turn resumes.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::editor::Editor;
use crate::ws_harness::{scratch_dir, Bridge};

/// The v2 mock's command line, with `extra` arguments.
fn mock_v2(extra: &str) -> String {
    format!(
        "{} --protocol 2 {extra}",
        env!("CARGO_BIN_EXE_acp-mock-agent")
    )
}

fn client(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-client"));
    cmd.args(args)
        .env_remove("ACP_BRIDGE_TOKEN")
        .stdin(Stdio::null());
    cmd
}

/// A one-shot run: its output, stdout and the `--summary-json` line.
fn run(args: &[&str]) -> (Output, String, Value) {
    let out = client(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let last = stdout.lines().last().unwrap_or_default();
    let summary = serde_json::from_str(last).unwrap_or(Value::Null);
    (out, stdout, summary)
}

fn keys(summary: &Value) -> BTreeSet<String> {
    summary.as_object().unwrap().keys().cloned().collect()
}

/// The v2 mock's turn as the client shows it: text, thought, plan, the
/// tool call and the permission answered by policy; the summary has the
/// v1 run's fields, with the counts of the v2 script. `--protocol 1`
/// leaves the refusal to the client.
#[test]
fn a_turn_against_a_v2_agent_is_shown_as_a_v1_turn() {
    let cwd = scratch_dir("client-v2-turn");
    let cwd_arg = cwd.display().to_string();
    let agent = mock_v2("");
    let common = ["--cwd", &cwd_arg, "--summary-json", "look around"];
    let (out, stdout, v2) =
        run(&[&["--agent", &agent, "--permission", "allow"], &common[..]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for shown in [
        "agent: acp-codec-mock-agent",
        "protocol v2, translated",
        "you: look around",
        "💭 **Surveying the project**",
        "  [>] List the project files",
        "• [execute] ls -la (pending)",
        "? permission: [execute] ls -la → Allow (proceed_once)",
        "✓ [execute] ls -la (completed)",
        "    README.md",
        "Done: the project has a README and a src directory.",
        "■ stop reason: end_turn",
    ] {
        assert!(
            stdout.contains(shown),
            "no {shown:?} in\n{stdout}\n{stderr}"
        );
    }
    let v1_agent = env!("CARGO_BIN_EXE_acp-mock-agent");
    let (_, v1_stdout, v1) =
        run(&[&["--agent", v1_agent, "--permission", "allow"], &common[..]].concat());
    assert!(v1_stdout.contains("protocol v1\n"), "{v1_stdout}");
    assert_eq!(keys(&v2), keys(&v1), "the same summary fields");
    for same in [
        "agent",
        "error",
        "stopReason",
        "sessionId",
        "turnProblems",
        "badLines",
    ] {
        assert_eq!(v2[same], v1[same], "{same}: {v2} vs {v1}");
    }
    let counts = json!({"messageChunks": 4, "thoughtChunks": 1, "toolCalls": 1, "plans": 3,
                        "permissionRequests": 1, "permissionsAllowed": 1, "fsReads": 0});
    for (key, want) in counts.as_object().unwrap() {
        assert_eq!(&v2[key], want, "{key}: {v2}");
    }

    // Rejected by policy: the command does not run.
    let (out, stdout, rejected) =
        run(&[&["--agent", &agent, "--permission", "reject"], &common[..]].concat());
    assert!(out.status.success(), "{stdout}");
    assert_eq!(rejected["permissionsAllowed"], 0, "{rejected}");
    assert!(stdout.contains("→ Reject"), "{stdout}");
    assert!(!stdout.contains("    README.md"), "{stdout}");

    // v1 only: the agent's refusal is the error.
    let (out, _, refused) = run(&[&["--agent", &agent, "--protocol", "1"], &common[..]].concat());
    assert_eq!(out.status.code(), Some(1));
    let error = refused["error"].as_str().unwrap_or_default();
    assert!(error.contains("-32022"), "{refused}");
    let _ = std::fs::remove_dir_all(&cwd);
}

/// Ctrl-C (SIGINT) mid-turn reaches the v2 agent as `session/cancel`: the
/// turn ends `cancelled`, status 130. `--session` takes the session up
/// again in a second process (`session/resume`, the mock reading what the
/// first saved) and runs a turn in it.
#[test]
fn a_v2_turn_is_cancelled_and_its_session_resumed() {
    let cwd = scratch_dir("client-v2-cancel");
    let state = cwd.join("state");
    let cwd_arg = cwd.display().to_string();
    let agent = mock_v2(&format!("--delay-ms 150 --state-dir {}", state.display()));
    let mut child = client(&[
        "--agent",
        &agent,
        "--cwd",
        &cwd_arg,
        "--permission",
        "allow",
        "--summary-json",
        "slowly",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("Surveying the project") {
        assert!(stdout.read_line(&mut seen).unwrap() > 0, "{seen}");
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: a signal to the child this test started (and has not reaped).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    let summary: Value = serde_json::from_str(rest.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert_eq!(summary["stopReason"], "cancelled", "{summary}");
    assert_eq!(summary["cancelledByUser"], true);
    assert!(rest.contains("■ stop reason: cancelled"), "{rest}");
    let session = summary["sessionId"].as_str().unwrap().to_owned();

    let agent = mock_v2(&format!("--state-dir {}", state.display()));
    let (out, stdout, resumed) = run(&[
        "--agent",
        &agent,
        "--cwd",
        &cwd_arg,
        "--permission",
        "allow",
        "--summary-json",
        "--session",
        &session,
        "again",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(resumed["sessionId"], session.as_str(), "{resumed}");
    assert_eq!(resumed["stopReason"], "end_turn", "{resumed}");
    assert!(
        stdout.contains(&format!("session {session} in")),
        "{stdout}"
    );
    // The agent's record holds both prompts.
    let saved = std::fs::read_to_string(state.join(format!("{session}.jsonl"))).unwrap();
    assert!(
        saved.contains("slowly") && saved.contains("again"),
        "{saved}"
    );
    let _ = std::fs::remove_dir_all(&cwd);
}

/// Validates `messages` (each with the method of the request it answers,
/// or its own) against the v1 schema, or the v2 one (`v2`); skipped
/// without Python's `jsonschema` unless `ACP_SCHEMA_CHECK=require`.
fn check_schema(messages: &[(String, Value)], v2: bool) {
    let require = std::env::var("ACP_SCHEMA_CHECK").is_ok_and(|v| v == "require");
    let has = Command::new("python3")
        .args(["-c", "import jsonschema"])
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        assert!(
            !require,
            "ACP_SCHEMA_CHECK=require but no python3 jsonschema"
        );
        eprintln!("skipped: python3 with jsonschema not found");
        return;
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "client-v2-stdio-{}-v{}.ndjson",
        std::process::id(),
        if v2 { 2 } else { 1 }
    ));
    let mut f = std::fs::File::create(&path).unwrap();
    for (method, message) in messages {
        let part = if message.get("method").is_some() {
            "params"
        } else if message.get("result").is_some() {
            "result"
        } else {
            "error"
        };
        // (An error is checked by the root schema only in v2: the checker
        // would take a method's error for its result or params.)
        let def = (part == "error" && !v2).then_some("Error");
        let method = if part == "error" && v2 { "" } else { method };
        let sample = json!({"def": def, "method": method, "part": part, "message": message});
        writeln!(f, "{sample}").unwrap();
    }
    drop(f);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/check_acp_schema.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .args(v2.then_some("--v2"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "schema check failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_file(&path);
}

/// A v1 editor on `acp-client --stdio` in front of the v2 mock: a turn
/// with its updates and a permission, a turn cancelled while its
/// permission question waits, and `session/load` replaying the session;
/// every line the editor receives is valid v1.
#[test]
fn a_v1_editor_on_stdio_drives_a_v2_agent() {
    let cwd = scratch_dir("client-v2-stdio");
    let cwd_arg = cwd.display().to_string();
    let agent = mock_v2("");
    let mut editor = Editor::start(&["--agent", &agent, "--cwd", &cwd_arg], &[]);
    let mut asked = HashMap::new();
    let init = editor.initialize();
    asked.insert(1, "initialize");
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    assert_eq!(
        init["result"]["agentInfo"]["name"], "acp-codec-mock-agent",
        "{init}"
    );
    let session = editor.new_session(&cwd_arg);
    asked.insert(2, "session/new");

    let from = editor.seen.len();
    let id = editor.prompt(&session, "go");
    asked.insert(id, "session/prompt");
    let answer = editor.answer(id, "session/prompt");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(editor.permissions, 1);
    let live = editor.updates(&session, from);
    let kinds: BTreeSet<&str> = live
        .iter()
        .filter_map(|u| u["sessionUpdate"].as_str())
        .collect();
    for kind in [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "plan",
        "tool_call",
        "tool_call_update",
    ] {
        assert!(kinds.contains(kind), "no {kind} in {live:?}");
    }

    // Cancelled while the permission question waits.
    editor.hold_permissions = true;
    let id = editor.prompt(&session, "wait");
    asked.insert(id, "session/prompt");
    while editor.held.is_empty() {
        editor
            .next(Duration::from_secs(10))
            .expect("a permission request");
    }
    let cancel =
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
    let held = editor.held.remove(0);
    let cancelled = json!({"jsonrpc": "2.0", "id": held["id"], "result": {"outcome": {"outcome": "cancelled"}}});
    editor.send(&cancel);
    editor.send(&cancelled);
    let answer = editor.answer(id, "the cancelled session/prompt");
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");

    // The session loaded: its history replayed as v1 updates.
    let from = editor.seen.len();
    let load = editor.request(
        "session/load",
        json!({"sessionId": session, "cwd": cwd_arg, "mcpServers": []}),
    );
    asked.insert(load, "session/load");
    let loaded = editor.answer(load, "session/load");
    assert!(loaded.get("result").is_some(), "{loaded}");
    let replay = editor.updates(&session, from);
    let said: Vec<&str> = replay
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(said, ["go", "wait"], "{replay:?}");
    let text = |updates: &[Value]| -> String {
        updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    };
    assert!(
        text(&replay).starts_with(&text(&live)),
        "{replay:?}\n{live:?}"
    );

    let messages = with_methods(&editor.seen, &asked);
    assert!(editor.finish(), "acp-client --stdio ends with the editor");
    check_schema(&messages, false);
    let _ = std::fs::remove_dir_all(&cwd);
}

/// Each message `seen` with the method of the request it answers (by
/// `asked`, the editor's requests) or its own.
fn with_methods(seen: &[Value], asked: &HashMap<u64, &str>) -> Vec<(String, Value)> {
    seen.iter()
        .map(|m| {
            let method = match (m["method"].as_str(), m["id"].as_u64()) {
                (Some(method), _) => method,
                (None, Some(id)) => asked.get(&id).copied().unwrap_or_default(),
                (None, None) => "",
            };
            (method.to_owned(), m.clone())
        })
        .collect()
}

/// Reads until `session`'s idle `state_update`; its stop reason.
fn until_idle(editor: &mut Editor, session: &str) -> String {
    loop {
        let m = editor
            .next(Duration::from_secs(10))
            .expect("the idle state_update");
        let update = &m["params"]["update"];
        if m["method"] == "session/update"
            && m["params"]["sessionId"] == session
            && update["sessionUpdate"] == "state_update"
            && update["state"] == "idle"
        {
            return update["stopReason"].as_str().unwrap_or_default().to_owned();
        }
    }
}

/// A v2 editor on `acp-client --stdio` in front of the v1 mock (`auto`:
/// the mock answers the v2 `initialize` with version 1, and the v2
/// client's translator comes in): a turn with a permission, whose answer
/// is v2's `messageId` and whose end is the idle `state_update`; a turn
/// cancelled while its permission question waits; `session/resume` from
/// the start replaying both; what the translator cannot serve refused
/// with its code. Every line the editor receives is valid v2. The same
/// editor with `--protocol 1` is translated from its first line, and with
/// the team server's v1 mock behind `--connect`, on both profiles.
#[test]
fn a_v2_editor_on_stdio_drives_a_v1_agent() {
    let cwd = scratch_dir("client-v2-editor");
    let cwd_arg = cwd.display().to_string();
    let agent = env!("CARGO_BIN_EXE_acp-mock-agent");
    let bridge = Bridge::start("client-v2-editor-remote", &["--agent", agent]);
    let (ws, http) = (
        format!("ws://{}/acp", bridge.addr),
        format!("http://{}/acp", bridge.addr),
    );
    for to in [
        ["--agent", agent, "--protocol", "auto"],
        ["--agent", agent, "--protocol", "1"],
        ["--connect", &ws, "--protocol", "auto"],
        ["--connect", &http, "--protocol", "auto"],
    ] {
        let protocol = to.join(" ");
        let mut editor = Editor::start(&[&to[..], &["--cwd", &cwd_arg]].concat(), &[]);
        let mut asked = HashMap::new();
        let id = editor.request(
            "initialize",
            json!({"protocolVersion": 2, "capabilities": {}, "info": {"name": "v2-editor", "version": "1"}}),
        );
        asked.insert(id, "initialize");
        let init = editor.answer(id, "initialize");
        assert_eq!(init["result"]["protocolVersion"], 2, "{init}");
        assert_eq!(
            init["result"]["info"]["name"], "acp-codec-mock-agent",
            "{init}"
        );
        let id = editor.request("session/new", json!({"cwd": cwd_arg}));
        asked.insert(id, "session/new");
        let session = editor.answer(id, "session/new")["result"]["sessionId"]
            .as_str()
            .expect("a session")
            .to_owned();

        let from = editor.seen.len();
        let id = editor.prompt(&session, "go");
        asked.insert(id, "session/prompt");
        let accepted = editor.answer(id, "session/prompt");
        assert!(
            accepted["result"]["messageId"].is_string(),
            "v2's early answer: {accepted}"
        );
        assert_eq!(until_idle(&mut editor, &session), "end_turn");
        assert!(editor.permissions >= 1, "{protocol}");
        assert_eq!(editor.fs_requests, 0, "a v2 editor is asked no fs/*");
        let kinds: BTreeSet<String> = editor
            .updates(&session, from)
            .iter()
            .filter_map(|u| u["sessionUpdate"].as_str().map(String::from))
            .collect();
        for kind in [
            "user_message",
            "agent_thought_chunk",
            "agent_message_chunk",
            "plan_update",
            "tool_call_update",
            "state_update",
        ] {
            assert!(kinds.contains(kind), "no {kind} in {kinds:?}");
        }
        assert!(!kinds.contains("tool_call"), "v1's tool_call: {kinds:?}");

        // Cancelled while the permission question waits.
        editor.hold_permissions = true;
        let id = editor.prompt(&session, "wait");
        asked.insert(id, "session/prompt");
        while editor.held.is_empty() {
            editor
                .next(Duration::from_secs(10))
                .expect("a permission request");
        }
        let held = editor.held.remove(0);
        assert_eq!(held["params"]["subject"]["type"], "tool_call", "{held}");
        editor.send(
            &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        );
        editor.send(
            &json!({"jsonrpc": "2.0", "id": held["id"], "result": {"outcome": {"outcome": "cancelled"}}}),
        );
        assert_eq!(until_idle(&mut editor, &session), "cancelled");

        // The session resumed from the start: its history replayed.
        let from = editor.seen.len();
        let id = editor.request(
            "session/resume",
            json!({"sessionId": session, "cwd": cwd_arg, "replayFrom": {"type": "start"}}),
        );
        asked.insert(id, "session/resume");
        let resumed = editor.answer(id, "session/resume");
        assert!(resumed.get("result").is_some(), "{resumed}");
        let replay = editor.updates(&session, from);
        let said: Vec<&str> = replay
            .iter()
            .filter(|u| u["sessionUpdate"] == "user_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect();
        assert_eq!(said, ["go", "wait"], "{replay:?}");
        let last = replay.last().expect("the state snapshot");
        assert_eq!(last["sessionUpdate"], "state_update", "{replay:?}");

        // What a v1 agent cannot do is the translator's error.
        let id = editor.request(
            "session/resume",
            json!({"sessionId": session, "cwd": cwd_arg, "replayFrom": {"type": "message", "messageId": "m"}}),
        );
        asked.insert(id, "session/resume");
        let refused = editor.answer(id, "session/resume from a message");
        assert_eq!(refused["error"]["code"], -32602, "{refused}");

        let messages = with_methods(&editor.seen, &asked);
        assert!(editor.finish(), "acp-client --stdio ends with the editor");
        check_schema(&messages, true);
    }
    let _ = std::fs::remove_dir_all(&cwd);
}

/// The team server whose agent is the v2 mock, with `--protocol 2`: the
/// server relays v2 as it is, and the client translates.
#[test]
fn a_remote_v2_agent_with_protocol_2() {
    let agent = mock_v2("");
    let bridge = Bridge::start("client-v2-remote", &["--agent", &agent]);
    let cwd = scratch_dir("client-v2-remote-cwd");
    let cwd_arg = cwd.display().to_string();
    for url in [
        format!("ws://{}/acp", bridge.addr),
        format!("http://{}/acp", bridge.addr),
    ] {
        let (out, stdout, summary) = run(&[
            "--connect",
            &url,
            "--protocol",
            "2",
            "--cwd",
            &cwd_arg,
            "--permission",
            "allow",
            "--summary-json",
            "remote",
        ]);
        let why = format!("{url}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{why}");
        assert_eq!(summary["stopReason"], "end_turn", "{why}");
        assert_eq!(summary["permissionsAllowed"], 1, "{why}");
        assert!(stdout.contains("protocol v2, translated"), "{why}");
    }
    let _ = std::fs::remove_dir_all(&cwd);
}

/// The same with the default `--protocol auto`: the client asks in v1 and
/// the team server, which bridges versions, takes the v2 agent's `-32022`
/// and speaks v2 to it through its own translator; the client's turn is a
/// v1 turn.
#[test]
fn a_remote_v2_agent_with_protocol_auto() {
    let agent = mock_v2("");
    let bridge = Bridge::start("client-v2-remote-auto", &["--agent", &agent]);
    let cwd = scratch_dir("client-v2-remote-auto-cwd");
    let cwd_arg = cwd.display().to_string();
    let url = format!("ws://{}/acp", bridge.addr);
    let (out, stdout, summary) = run(&[
        "--connect",
        &url,
        "--cwd",
        &cwd_arg,
        "--permission",
        "allow",
        "--summary-json",
        "remote",
    ]);
    let why = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{why}");
    assert_eq!(summary["stopReason"], "end_turn", "{why}");
    assert_eq!(summary["permissionsAllowed"], 1, "{why}");
    let _ = std::fs::remove_dir_all(&cwd);
}

/// `acp-client` in conversation on a terminal (`--permission ask`) with the
/// v2 mock started with `mock_args`, in a fresh directory named `name`,
/// once it has said it speaks v2 through its translator.
#[cfg(target_os = "linux")]
fn v2_conversation(name: &str, mock_args: &str) -> (std::path::PathBuf, crate::pty::Pty) {
    let cwd = scratch_dir(name);
    let cwd_arg = cwd.display().to_string();
    let agent = mock_v2(mock_args);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-client"));
    cmd.args(["--agent", &agent, "--permission", "ask", "--cwd", &cwd_arg])
        .env_remove("ACP_BRIDGE_TOKEN");
    let mut pty = crate::pty::Pty::spawn(&mut cmd);
    pty.expect("protocol v2, translated", 20);
    (cwd, pty)
}

/// The conversation on a terminal with the v2 mock: a permission question
/// answered at the keyboard, Ctrl-C cancelling the next turn, the
/// sessions listed.
#[cfg(target_os = "linux")]
#[test]
fn a_conversation_with_a_v2_agent() {
    let (cwd, mut pty) = v2_conversation("client-v2-pty", "--delay-ms 100");
    pty.line("look around");
    pty.expect("? [execute] ls -la", 20);
    pty.expect("choose 1-", 10);
    pty.send("2\r");
    pty.expect("→ Allow (proceed_once)", 10);
    pty.expect("stop reason: end_turn", 20);

    pty.line("take your time");
    pty.expect("Surveying the project", 20);
    pty.send("\x03");
    pty.expect("^C: cancelling the turn (again to quit)", 10);
    pty.expect("stop reason: cancelled", 10);

    pty.line("/sessions");
    pty.expect("* mock-session-1", 10);
    pty.expect("\n> ", 10);
    pty.send("\x04");
    let status = pty.wait(10);
    assert!(status.success(), "{status}\n{}", pty.seen());
    let _ = std::fs::remove_dir_all(&cwd);
}

/// A connection to the team server's v2 agent broken mid-turn (a reset
/// by the fault proxy, after the permission request), on both profiles
/// with `--protocol auto` (over Streamable HTTP the refused v1
/// `initialize` lets its connection go, and the v2 one opens another):
/// the client resumes it as it does a v1 agent's (WebSocket: a new
/// connection and `session/resume` with its cursor; Streamable HTTP: the
/// streams reopened with `Last-Event-ID`), the turn is the unbroken one
/// and the prompt ran once at the agent.
#[test]
fn a_broken_connection_to_a_remote_v2_agent_is_resumed() {
    use crate::fault_proxy::{Fault, FaultProxy};
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("client-v2-break");
    let log = dir.join("agent-stdin.log");
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntee -a '{}' | exec {}\n",
            log.display(),
            mock_v2("--delay-ms 50")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bridge = Bridge::start("client-v2-break", &["--agent", script.to_str().unwrap()]);
    let prompts = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(r#""method":"session/prompt""#))
            .count()
    };
    let cwd = scratch_dir("client-v2-break-cwd");
    let cwd_arg = cwd.display().to_string();
    let turn = |url: &str| {
        let (out, stdout, summary) = run(&[
            "--connect",
            url,
            "--reconnect-secs",
            "20",
            "--cwd",
            &cwd_arg,
            "--permission",
            "allow",
            "--summary-json",
            "look around",
        ]);
        let why = format!("{url}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        let shown: Vec<String> = stdout
            .lines()
            .filter(|l| !l.starts_with('{'))
            .map(String::from)
            .collect();
        (summary, shown, why)
    };
    let same = |s: &Value| {
        [
            "stopReason",
            "messageChunks",
            "thoughtChunks",
            "toolCalls",
            "plans",
            "permissionRequests",
            "permissionsAllowed",
        ]
        .map(|k| s[k].clone())
    };
    for scheme in ["ws", "http"] {
        let (reference, shown, why) = turn(&format!("{scheme}://{}/acp", bridge.addr));
        assert_eq!(reference["stopReason"], "end_turn", "{why}");
        let before = prompts();
        let proxy = FaultProxy::start(bridge.addr, vec![(1_800, Fault::Reset)]);
        let (broken, got, why) = turn(&format!("{scheme}://{}/acp", proxy.addr));
        assert_eq!(
            proxy.broken.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "{why}"
        );
        assert_eq!(broken["reconnects"], 1, "{why}");
        assert_eq!(same(&broken), same(&reference), "{why}");
        // The transcript, but for the session's name (one a run).
        let strip = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| !l.contains("mock-session-"))
                .cloned()
                .collect()
        };
        assert_eq!(strip(&got), strip(&shown), "{why}");
        assert_eq!(prompts() - before, 1, "the prompt ran once: {why}");
    }
    drop(bridge);
    let _ = std::fs::remove_dir_all(&cwd);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A one-shot run with stdin open but silent (a question waits for an
/// answer that never comes): its status, stdout and stderr.
fn run_silent(args: &[&str]) -> (std::process::ExitStatus, String, String) {
    let mut child = client(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status, text(&out.stdout), text(&out.stderr))
}

/// v2 cancellation, both ways, with the v2 mock's `--cancellable-tool`
/// and `--permission-timeout-ms`, locally and through the team server:
/// the permission question asked on stdin is withdrawn by the agent
/// (`$/cancel_request`): dismissed, answered with the `cancelled` outcome
/// (the mock says what it got), and the turn goes on; `--tool-timeout`
/// sends `tool_call/cancel` for the tool call advertising it, the agent
/// accepts and ends it `cancelled` (v1's `failed` here), and the turn ends
/// normally. Then Ctrl-C while a permission question waits: the
/// `session/cancel` cascade, the turn ended `cancelled` once the mock has
/// its answer.
#[test]
fn v2_cancellation_of_a_permission_request_and_a_tool_call() {
    let cwd = scratch_dir("client-v2-cancels");
    let cwd_arg = cwd.display().to_string();
    let agent = mock_v2("--cancellable-tool --permission-timeout-ms 150");
    let bridge = Bridge::start("client-v2-cancels", &["--agent", &agent]);
    let ws = format!("ws://{}/acp", bridge.addr);
    for to in [["--agent", &agent], ["--connect", &ws]] {
        let (status, stdout, stderr) = run_silent(
            &[
                &to[..],
                &[
                    "--cwd",
                    &cwd_arg,
                    "--permission",
                    "ask",
                    "--tool-timeout",
                    "0.1",
                    "--summary-json",
                    "go",
                ],
            ]
            .concat(),
        );
        let why = format!("{to:?}\n{stdout}\n{stderr}");
        assert!(status.success(), "{why}");
        for shown in [
            "? permission: [execute] ls -la → withdrawn by the agent (answered cancelled)",
            "Permission request withdrawn ($/cancel_request); the client answered with the cancelled outcome.",
            "tool call sleep 0.3 (task-1) still running after 0.1 s: cancelling it",
            "tool call task-1: the agent accepted to cancel it",
            "Cancelled by the client (tool_call/cancel).",
            "■ stop reason: end_turn",
        ] {
            assert!(stdout.contains(shown), "no {shown:?} in {why}");
        }
        assert!(!stdout.contains("    README.md"), "not run: {why}");
        assert!(!stderr.contains("no pending request"), "{why}");
    }

    // Ctrl-C at the question: session/cancel, the mock's $/cancel_request
    // for the request answered already, the turn ended cancelled.
    let mut child = client(&[
        "--agent",
        &mock_v2(""),
        "--cwd",
        &cwd_arg,
        "--permission",
        "ask",
        "--summary-json",
        "go",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let stdin = child.stdin.take();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("choose 1-") {
        let mut byte = [0; 256];
        let n = std::io::Read::read(&mut stdout, &mut byte).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&byte[..n]);
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: a signal to the child this test started (and has not reaped).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    std::io::Read::read_to_end(&mut stdout, &mut seen).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let seen = String::from_utf8_lossy(&seen);
    let why = format!("{seen}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{why}");
    assert!(
        seen.contains("the client answered with the cancelled outcome."),
        "{why}"
    );
    assert!(seen.contains("■ stop reason: cancelled"), "{why}");
    assert!(!why.contains("no pending request"), "answered once: {why}");
    let _ = std::fs::remove_dir_all(&cwd);
}

/// The conversation's side of v2 cancellation, on a terminal: a
/// permission question the agent withdraws says so on the prompt line and
/// waits for Enter, what is typed there not taken (the agent had its
/// answer, `cancelled`; the turn goes on); Ctrl-\ cancels the running
/// tool call that offers it.
#[cfg(target_os = "linux")]
#[test]
fn a_conversation_with_a_v2_agent_cancels_both_ways() {
    let (cwd, mut pty) = v2_conversation(
        "client-v2-pty-cancel",
        "--permission-timeout-ms 200 --cancellable-tool 20000",
    );
    pty.line("go");
    pty.expect("choose 1-", 20);
    pty.expect("the agent withdrew this question: press Enter to go on", 10);
    pty.send("2\r");
    pty.expect("→ withdrawn by the agent (answered cancelled)", 10);
    pty.expect("the client answered with the cancelled outcome.", 10);
    pty.expect("sleep 20.0", 10);
    pty.send("\x1c");
    pty.expect("cancelling tool call sleep 20.0 (task-1)", 10);
    pty.expect("tool call task-1: the agent accepted to cancel it", 10);
    pty.expect("stop reason: end_turn", 20);
    pty.send("\x04");
    let status = pty.wait(10);
    assert!(status.success(), "{status}\n{}", pty.seen());
    assert!(!pty.seen().contains("no pending request"), "{}", pty.seen());
    assert!(!pty.seen().contains("→ Allow"), "{}", pty.seen());
    let _ = std::fs::remove_dir_all(&cwd);
}
