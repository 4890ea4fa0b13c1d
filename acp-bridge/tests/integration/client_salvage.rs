//! `acp-client` decodes what the agent sends leniently, and never silently:
//! every salvage (a member dropped, a list item skipped, a variant kept as
//! unknown) is reported as a warning on stderr, and the turn goes on.
#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};

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

#[test]
fn salvaged_updates_are_warned_about_and_the_turn_goes_on() {
    let dir = std::env::temp_dir().join(format!("acp-client_salvage_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("agent.sh");
    std::fs::write(&script, AGENT).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .arg("--agent")
        .arg(format!("sh {}", script.display()))
        .arg("--cwd")
        .arg(&dir)
        .args(["--timeout", "10", "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
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
