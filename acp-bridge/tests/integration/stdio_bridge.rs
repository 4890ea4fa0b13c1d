//! `acp-client --stdio` as an editor's agent, on the real `acp-bridge`
//! (its built-in mock agent) through the fault-injecting proxy: a
//! scripted editor on its stdio (`tests/support/editor.rs`) runs a turn
//! while the connection breaks several times. The editor sees one
//! unbroken stream: the turn's updates are the unbroken turn's, each once
//! and in order, its prompt is answered once and ran once, and the
//! agent's `fs/*` requests and permission requests reach the editor.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::editor::Editor;
use crate::fault_proxy::{plan, FaultProxy};
use crate::ws_harness::{scratch_dir, Bridge};

/// What the editor saw of one turn.
struct Turn {
    /// The turn's updates, the session directory's name replaced.
    updates: Vec<String>,
    stop: Value,
    answers: usize,
    fs_requests: usize,
    permissions: usize,
    /// The prompts the agent's history holds (`session/load`'s replay).
    prompts_in_history: usize,
    stderr: String,
    clean_exit: bool,
}

fn turn(addr: SocketAddr) -> Turn {
    let cwd = scratch_dir("stdio-cwd");
    let cwd_text = cwd.display().to_string();
    let url = format!("ws://{addr}/acp");
    let mut editor = Editor::start(&["--reconnect-secs", "20", "--connect", &url], &[]);
    editor.initialize();
    let session = editor.new_session(&cwd_text);
    let from = editor.seen.len();
    let id = editor.prompt(&session, "go");
    let answer = editor.answer(id, "session/prompt");
    let updates = editor
        .updates(&session, from)
        .iter()
        .map(|u| u.to_string().replace(&cwd_text, "CWD"))
        .collect();
    // Nothing more for this prompt (an answer twice would come now).
    while editor.next(std::time::Duration::from_millis(300)).is_some() {}
    let answers = editor
        .seen
        .iter()
        .filter(|m| m.get("method").is_none() && m["id"] == serde_json::json!(id))
        .count();
    // The agent's own record: how many prompts the session ran.
    let from = editor.seen.len();
    let load = editor.request(
        "session/load",
        serde_json::json!({"sessionId": session, "cwd": cwd_text, "mcpServers": []}),
    );
    let loaded = editor.answer(load, "session/load");
    assert!(loaded.get("result").is_some(), "{loaded}");
    let prompts_in_history = editor
        .updates(&session, from)
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .count();
    let stderr = editor.stderr.lock().unwrap().clone();
    let (fs_requests, permissions) = (editor.fs_requests, editor.permissions);
    let clean_exit = editor.finish();
    let _ = std::fs::remove_dir_all(&cwd);
    Turn {
        updates,
        stop: answer["result"]["stopReason"].clone(),
        answers,
        fs_requests,
        permissions,
        prompts_in_history,
        stderr,
        clean_exit,
    }
}

/// Several breaks a turn (resets and closes at byte offsets from a seed),
/// for several seeds: the editor's stream is the unbroken one.
#[test]
fn an_editor_on_stdio_sees_one_unbroken_turn_through_breaks() {
    let bridge = Bridge::start("stdio-real", &[]);
    let reference = turn(bridge.addr);
    assert_eq!(reference.stop, "end_turn", "{}", reference.stderr);
    assert!(reference.fs_requests >= 2, "fs/* reach the editor");
    assert!(reference.permissions >= 1);
    assert_eq!(reference.prompts_in_history, 1);
    assert!(reference.clean_exit);
    for seed in [7u64, 43, 2026] {
        let bridge = Bridge::start("stdio-real", &[]);
        let faults = plan(seed, 4, 1_500, 6_000);
        let proxy = FaultProxy::start(bridge.addr, faults.clone());
        let got = turn(proxy.addr);
        let broken = proxy.broken.load(Ordering::Relaxed);
        let why = format!(
            "seed {seed}, plan {faults:?}, {broken} breaks; acp-client:\n{}\nbridge:\n{}",
            got.stderr,
            bridge.stderr.lock().unwrap()
        );
        assert!(broken >= 2, "{why}");
        assert!(got.stderr.contains("reconnected; resuming"), "{why}");
        assert_eq!(got.stop, "end_turn", "{why}");
        assert_eq!(got.updates, reference.updates, "{why}");
        assert_eq!(got.answers, 1, "the prompt answered once: {why}");
        assert_eq!(got.prompts_in_history, 1, "the prompt ran once: {why}");
        assert_eq!(got.fs_requests, reference.fs_requests, "{why}");
        assert_eq!(got.permissions, reference.permissions, "{why}");
        assert!(got.clean_exit, "{why}");
    }
}
