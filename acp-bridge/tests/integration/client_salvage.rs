//! `acp-client` decodes what the agent sends leniently, and never silently:
//! every salvage (a member dropped, a list item skipped, a variant kept as
//! unknown) is reported as a warning on stderr, and the turn goes on. The
//! agent's requests are answered each to its own id, a request whose params
//! do not fit with `-32602`.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// An agent in `sh`: answers initialize (id 0) and session/new (id 1),
/// then, for the prompt (id 2), sends updates that do not fit the schema
/// and ends the turn.
const AGENT: &str = r#"read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"scripted","version":"1"}}}'
read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}'
read -r line
printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"hello"}}}}'
printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","locations":[{"path":"/a"},{"path":5}]}}}'
printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":null,"size":1000}}}'
printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}'
"#;

/// A fresh scratch directory for the test `name`.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acp-client_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One turn of `acp-client` ("hi") against the agent `script` (a `sh`
/// program) in `dir`.
fn turn(dir: &Path, script: &str) -> Output {
    let path = dir.join("agent.sh");
    std::fs::write(&path, script).unwrap();
    Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .arg("--agent")
        .arg(format!("sh {}", path.display()))
        .arg("--cwd")
        .arg(dir)
        .args(["--timeout", "10", "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn salvaged_updates_are_warned_about_and_the_turn_goes_on() {
    let dir = scratch("salvage");
    let out = turn(&dir, AGENT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The salvaged values are used: the chunk's text and the tool call.
    assert!(stdout.contains("hello"), "{stdout}");
    assert!(stdout.contains("ls (pending)"), "{stdout}");
    assert!(stdout.contains("end_turn"), "{stdout}");
    // One warning per salvage, each naming where and what was done.
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("acp-client: warning: session/update notification"))
        .collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(
        warnings[0].contains("/update/messageId: member dropped: "),
        "{stderr}"
    );
    assert!(
        warnings[1].contains("/update/locations/1: list item skipped: "),
        "{stderr}"
    );
    assert!(
        warnings[2].contains("/update: kept as unknown: "),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An agent in `sh` that, during the prompt (id 2), sends the client a
/// request whose params do not fit (a UUID id), one with an unknown
/// method, and a read of a file in the session directory, writes each
/// answer to `REPLIES`, then ends the turn.
const REQUESTS: &str = r#"read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"scripted","version":"1"}}}'
read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}'
read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":"6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b","method":"fs/read_text_file","params":{"sessionId":"s1","path":7}}'
read -r reply; printf '%s\n' "$reply" >> REPLIES
printf '%s\n' '{"jsonrpc":"2.0","id":"x","method":"acme/unknown","params":{}}'
read -r reply; printf '%s\n' "$reply" >> REPLIES
printf '%s\n' '{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"DIR/note.txt","later":true}}'
read -r reply; printf '%s\n' "$reply" >> REPLIES
printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}'
"#;

#[test]
fn agent_requests_are_answered_each_to_its_id() {
    let dir = scratch("requests");
    std::fs::write(dir.join("note.txt"), "line one\n").unwrap();
    let replies = dir.join("replies.ndjson");
    let text = REQUESTS
        .replace("REPLIES", &replies.display().to_string())
        .replace("DIR", &dir.display().to_string());
    let out = turn(&dir, &text);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let replies = std::fs::read_to_string(&replies).unwrap();
    let replies: Vec<serde_json::Value> = replies
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 3, "{replies:?}\n{stderr}");
    // Params that do not fit: -32602, to the UUID id it came with.
    assert_eq!(replies[0]["id"], "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b");
    assert_eq!(replies[0]["error"]["code"], -32602, "{replies:?}");
    assert_eq!(replies[1]["id"], "x");
    assert_eq!(replies[1]["error"]["code"], -32601, "{replies:?}");
    // A typed request (an unknown member kept aside) served.
    assert_eq!(replies[2]["id"], 9);
    assert_eq!(replies[2]["result"]["content"], "line one\n", "{replies:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
