//! `terminal/*` as `acp-client` serves it (commands in their own process
//! group, output bounded by `acp_codec::client::terminal::TerminalOutput`), and
//! its permission default: nothing approved without asking.
#![cfg(target_os = "linux")]

use acp_codec::acp::Mode;
use std::process::{Command, Stdio};
use std::time::Duration;

use acp_bridge::terminals::Terminals;
use acp_codec::acp::{CreateTerminalRequest, Message, RequestParams};
use serde_json::{json, Value};

fn create(t: &mut Terminals, params: Value) -> String {
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "terminal/create", "params": params})
        .to_string();
    let Message::Request(r) = Message::decode(&line).unwrap() else {
        panic!()
    };
    let RequestParams::CreateTerminal(req) = r.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    let req: CreateTerminalRequest<'_> = req;
    t.create(&req, std::env::temp_dir()).unwrap()
}

/// Whether any process of the group `pgid` is alive.
fn group_alive(pgid: &str) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

#[tokio::test]
async fn output_is_bounded_and_exit_reported() {
    let mut t = Terminals::default();
    let id = create(
        &mut t,
        json!({"sessionId": "s", "command": "sh", "args": ["-c", "seq 1 3000; echo err >&2; exit 3"],
               "outputByteLimit": 1000}),
    );
    let exit = tokio::time::timeout(Duration::from_secs(20), t.wait(&id).unwrap())
        .await
        .unwrap();
    assert_eq!(exit.exit_code, Some(3));
    let out = t.output(&id).unwrap();
    assert!(out.truncated);
    assert!(out.output.len() <= 1000 && out.output.len() > 900);
    // stdout and stderr share one stream, in the order the command wrote
    // them: the kept tail ends with the last stdout line, then stderr.
    assert!(
        out.output.ends_with("2999\n3000\nerr\n"),
        "stderr is kept too, after stdout: {:?}",
        out.output
    );
    assert_eq!(out.exit_status.unwrap().exit_code, Some(3));
    t.release(&id).unwrap();
    let gone = t.output(&id).unwrap_err();
    assert_eq!(gone.code.0, -32002);
}

#[tokio::test]
async fn kill_takes_the_whole_process_group() {
    let mut t = Terminals::default();
    // A child in the background and one in the foreground.
    let id = create(
        &mut t,
        json!({"sessionId": "s", "command": "sh", "args": ["-c", "sleep 60 & echo $$; sleep 60"]}),
    );
    let pgid = loop {
        let out = t.output(&id).unwrap().output.to_string();
        if let Some(line) = out.lines().next() {
            break line.trim().to_owned();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(group_alive(&pgid));
    t.kill(&id).unwrap();
    let exit = tokio::time::timeout(Duration::from_secs(20), t.wait(&id).unwrap())
        .await
        .unwrap();
    assert_eq!(exit.signal.as_deref(), Some("SIGKILL"));
    for _ in 0..100 {
        if !group_alive(&pgid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!group_alive(&pgid), "a process of the group survived");
    // Released with the command still running: killed too.
    let id = create(
        &mut t,
        json!({"sessionId": "s", "command": "sh", "args": ["-c", "echo $$; sleep 60"]}),
    );
    let pgid = loop {
        if let Some(line) = t.output(&id).unwrap().output.lines().next() {
            break line.trim().to_owned();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    t.release(&id).unwrap();
    for _ in 0..100 {
        if !group_alive(&pgid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!group_alive(&pgid));
}

fn client(args: &[&str]) -> (Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .arg("--summary-json")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary = serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();
    (summary, stdout)
}

#[test]
fn acp_client_serves_terminals_to_the_mock() {
    let (s, out) = client(&["--mock-terminal"]);
    assert_eq!(s["stopReason"], "end_turn", "{out}");
    assert_eq!(s["terminals"], 2, "{out}");
    assert!(
        out.contains("terminal: exit 3, truncated true, kept 1000 bytes ending \"3000\""),
        "{out}"
    );
    assert!(out.contains("killed: signal \"SIGKILL\""), "{out}");
}

#[test]
fn nothing_is_approved_without_asking() {
    let dir = std::env::temp_dir().join(format!("acp-client-terminal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("README.md"), "# x\n").unwrap();
    // In the user's directory, stdin not a terminal: every request rejected.
    let (s, out) = client(&["--mock-terminal", "--cwd", dir.to_str().unwrap()]);
    assert_eq!(s["stopReason"], "end_turn", "{out}");
    assert_eq!(s["permissionRequests"], 3, "{out}");
    assert_eq!(s["permissionsAllowed"], 0, "{out}");
    assert_eq!(s["terminals"], 0, "{out}");
    assert!(!dir.join("NOTES.md").exists());
    // Unless told.
    let (s, _) = client(&[
        "--mock-terminal",
        "--permission",
        "allow",
        "--cwd",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(s["permissionsAllowed"], 3);
    assert!(dir.join("NOTES.md").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
