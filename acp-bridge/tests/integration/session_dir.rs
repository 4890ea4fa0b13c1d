//! Where a remote session lives, through the real `acp-bridge`: a token
//! file's user, whose agent (the mock, writing `OWN.md` itself as well as
//! `NOTES.md` through `fs/*`) works in its room. The agent is told the
//! room's directory as its `cwd`; what it writes itself lands there, what
//! it writes through `fs/*` lands in the client's `--cwd`, and every path
//! the client is shown is its own.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::ws_harness::*;

const ANA: &str = "ana-0123456789abcdef-token";

/// Every path member of what a client was sent: `fs/*` paths, terminal
/// directories, tool-call locations and diff paths.
fn paths_seen(seen: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |v: &Value| {
        if let Some(p) = v.as_str() {
            out.push(p.to_owned());
        }
    };
    for m in seen {
        let params = &m["params"];
        push(&params["path"]);
        push(&params["cwd"]);
        for call in [&params["update"], &params["toolCall"]] {
            for l in call["locations"].as_array().into_iter().flatten() {
                push(&l["path"]);
            }
            for c in call["content"].as_array().into_iter().flatten() {
                push(&c["path"]);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_session_lives_in_their_room_and_the_client_sees_its_own_paths() {
    let dir = scratch_dir("session_dir");
    let tokens = dir.join("tokens.json");
    let file = json!({"tokens": {ANA: {"userId": "ana", "permissions": ["read", "write"]}}});
    std::fs::write(&tokens, file.to_string()).unwrap();
    let state = dir.join("state");
    let agent = format!("{} --own-write", env!("CARGO_BIN_EXE_acp-mock-agent"));
    let args = [
        "--token-file",
        tokens.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
        "--agent",
        &agent,
    ];
    let bridge = Bridge::start_in(dir.clone(), &args, &[]);
    let room = std::fs::canonicalize(state.join("ana"))
        .unwrap_or_else(|_| state.join("ana"))
        .join("work");
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("README.md"), "# the user's project\n").unwrap();

    // acp-client from the user's project directory.
    let url = format!("ws://{}/acp", bridge.addr);
    let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args(["--connect", &url, "--cwd"])
        .arg(&project)
        .args(["--permission", "allow", "--summary-json", "take notes"])
        .env("ACP_BRIDGE_TOKEN", ANA)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let log = || bridge.stderr.lock().unwrap().clone();
    assert!(
        out.status.success() && stdout.contains(r#""stopReason":"end_turn""#),
        "{stdout}{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        log()
    );
    assert!(stdout.contains(r#""fsWrites":1"#), "{stdout}");
    assert!(stdout.contains(r#""fsRefused":0"#), "{stdout}");
    // Through fs/*: the user's directory, with the user's paths shown.
    let notes = std::fs::read_to_string(project.join("NOTES.md")).expect("NOTES.md in --cwd");
    // The agent wrote where it was told it works: the room.
    assert!(notes.contains(room.to_str().unwrap()), "{notes}");
    let wrote = format!("fs: wrote {}", project.join("NOTES.md").display());
    assert!(stdout.contains(&wrote), "{wrote} not in {stdout}");
    assert!(!stdout.contains(room.to_str().unwrap()), "{stdout}");
    // By the agent itself: the room, and nothing in the user's directory.
    assert!(room.join("OWN.md").is_file(), "OWN.md not in {room:?}");
    assert!(!project.join("OWN.md").exists());
    assert!(!room.join("NOTES.md").exists());

    // A raw client sees each path member: all under its own directory.
    let mut c = connect_with(&url, Some(ANA), None).await.expect("connect");
    let session = c.open_session(&project).await;
    let turn = c.turn(&session, "again").await;
    assert_eq!(turn.stop_reason, "end_turn");
    let paths = paths_seen(&c.seen);
    let expected = ["README.md", "NOTES.md", "OWN.md"].map(|f| project.join(f));
    for want in &expected {
        assert!(
            paths.iter().any(|p| Path::new(p) == want),
            "{want:?} not among {paths:?}"
        );
    }
    for p in &paths {
        assert!(
            Path::new(p).starts_with(&project),
            "{p} outside {project:?}"
        );
    }
}
