//! A clean close ends things at once, through the real binaries: after
//! `acp-client`'s run (a WebSocket close frame, or Streamable HTTP's
//! `DELETE`), the user's agent stops within `--agent-idle-secs`, not after
//! the resume grace (120 s) and then the idle time; a WebSocket client
//! that asked for positions and whose connection broke (no close frame)
//! is held for its resume, its agent with it.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::ws_harness::{connect_with, Bridge};

const ANA: &str = "ana-0123456789abcdef-token";
const BO: &str = "bo-0123456789abcdef-token";
const CY: &str = "cy-0123456789abcdef-token";

/// Well under the 120 s grace a held connection would add, and over
/// the 1 s idle time with room for a slow machine.
const WITHIN: Duration = Duration::from_secs(20);

fn start(name: &str) -> Bridge {
    let dir = crate::ws_harness::scratch_dir(name);
    let tokens = json!({"tokens": {
        ANA: {"userId": "ana", "permissions": ["read", "write"]},
        BO: {"userId": "bo", "permissions": ["read", "write"]},
        CY: {"userId": "cy", "permissions": ["read", "write"]},
    }});
    let file = dir.join("tokens.json");
    std::fs::write(&file, tokens.to_string()).unwrap();
    let state = dir.join("agents");
    let args = [
        "--token-file",
        file.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
        "--agent-idle-secs",
        "1",
    ];
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Bridge::start_in(dir, &args, &[])
}

fn log(bridge: &Bridge) -> String {
    bridge.stderr.lock().unwrap().clone()
}

/// One turn of `acp-client --connect URL` as the holder of `token`
/// (resuming, as by default); `Instant` when it exited.
fn turn(url: &str, token: &str, cwd: &Path) -> Instant {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args(["--connect", url, "--cwd"])
        .arg(cwd)
        .args(["--permission", "allow", "--summary-json", "hello"])
        .env("ACP_BRIDGE_TOKEN", token)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let exited = Instant::now();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(r#""stopReason":"end_turn""#),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exited
}

/// Waits for `text` in the bridge's log, within [`WITHIN`] of `since`.
fn logged_within(bridge: &Bridge, text: &str, since: Instant) {
    while !log(bridge).contains(text) {
        assert!(
            since.elapsed() < WITHIN,
            "no {text:?} within {WITHIN:?}:\n{}",
            log(bridge)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_close_stops_the_agent_within_its_idle_time_a_broken_one_is_held() {
    let bridge = start("close");
    let cwd = bridge.dir.join("work");
    std::fs::create_dir_all(&cwd).unwrap();

    // WebSocket: acp-client's close frame at the end of its run.
    let url = format!("ws://{}/acp", bridge.addr);
    let exited = turn(&url, ANA, &cwd);
    logged_within(&bridge, "agent of ana stopped: idle", exited);
    // Streamable HTTP: its DELETE at the end of its run.
    let url = format!("http://{}/acp", bridge.addr);
    let exited = turn(&url, BO, &cwd);
    logged_within(&bridge, "agent of bo stopped: idle", exited);

    // A WebSocket client that asked for positions, whose TCP connection
    // drops without a close frame: held for its resume, its agent too.
    let url = format!("ws://{}/acp", bridge.addr);
    let asking = json!({"protocolVersion": 1, "_meta": {"acp-codec/resume": {}}});
    let mut cy = connect_with(&url, Some(CY), None).await.expect("connect");
    let init = cy.request("initialize", asking.clone()).await;
    let result = &init["result"]["_meta"];
    let held = result["acp-codec/resume"]["connection"].clone();
    let pid = result["acp-mock-agent"]["pid"]
        .as_u64()
        .expect("the agent's pid");
    assert!(held.is_string(), "{init}");
    cy.open_session(&cwd).await;
    let left = log(&bridge).matches("websocket left").count();
    drop(cy);
    let broke = Instant::now();
    while log(&bridge).matches("websocket left").count() == left {
        assert!(broke.elapsed() < WITHIN, "{}", log(&bridge));
        std::thread::sleep(Duration::from_millis(50));
    }
    // Three idle times later, cy's agent still runs, and her next
    // connection takes the held one over.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !log(&bridge).contains("agent of cy stopped"),
        "{}",
        log(&bridge)
    );
    let mut back = connect_with(&url, Some(CY), None).await.expect("connect");
    let mut resuming = asking;
    resuming["_meta"]["acp-codec/cursor"] = json!({"connection": held, "position": 2});
    let init = back.request("initialize", resuming).await;
    let result = &init["result"]["_meta"];
    assert_eq!(result["acp-mock-agent"]["pid"], json!(pid), "{init}");
    assert!(
        log(&bridge).contains(&format!("resumes connection {}", held.as_str().unwrap())),
        "{}",
        log(&bridge)
    );
}
