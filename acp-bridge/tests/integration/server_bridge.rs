//! The team server bridging versions: a v1 `acp-client` (`--protocol 1`)
//! reaches the v2 mock agent, and a v2 `acp-client` (`--protocol 2`) the
//! v1 mock, each in one full turn with a permission allowed; the server
//! translates, the client sees its own version.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::ws_harness::{scratch_dir, Bridge};

/// A one-shot turn of `acp-client --connect` with `protocol` against the
/// server started with `agent`: the client's stdout and `--summary-json`.
fn turn(name: &str, agent: &str, protocol: &str) -> (String, Value) {
    let bridge = Bridge::start(name, &["--agent", agent]);
    let cwd = scratch_dir(&format!("{name}-cwd"));
    let url = format!("ws://{}/acp", bridge.addr);
    let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args(["--connect", &url, "--protocol", protocol, "--cwd"])
        .arg(&cwd)
        .args(["--permission", "allow", "--summary-json", "look around"])
        .env_remove("ACP_BRIDGE_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let why = format!(
        "{stdout}\n{}\nserver: {}",
        String::from_utf8_lossy(&out.stderr),
        bridge.stderr.lock().unwrap()
    );
    assert!(out.status.success(), "{why}");
    let summary = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {why}"));
    let _ = std::fs::remove_dir_all(&cwd);
    (why, summary)
}

/// A v1 client, the v2 agent behind the server: the server takes the
/// agent's `-32022` and asks again in v2 through its translator; the
/// client speaks v1 throughout (`--protocol 1` translates nothing).
#[test]
fn a_v1_client_reaches_a_v2_agent_through_the_server() {
    let agent = format!("{} --protocol 2", env!("CARGO_BIN_EXE_acp-mock-agent"));
    let (why, summary) = turn("server-bridge-v1-v2", &agent, "1");
    assert!(why.contains("protocol v1\n"), "{why}");
    assert!(why.contains("Allow"), "{why}");
    assert_eq!(summary["stopReason"], "end_turn", "{why}");
    assert_eq!(summary["permissionsAllowed"], 1, "{why}");
    assert_eq!(summary["badLines"], 0, "{why}");
    assert!(why.contains("bridged to v2 through a translator"), "{why}");
}

/// A v2 client, the v1 agent behind the server: the agent answers the v2
/// `initialize` with version 1, the server asks again in v1 through its
/// translator, and the client gets its answer in v2.
#[test]
fn a_v2_client_reaches_a_v1_agent_through_the_server() {
    let agent = env!("CARGO_BIN_EXE_acp-mock-agent");
    let (why, summary) = turn("server-bridge-v2-v1", agent, "2");
    assert!(why.contains("protocol v2"), "{why}");
    // The v1 agent was told the client offers no `fs` (v2 has none).
    assert!(why.contains("The client offers no fs; skipped."), "{why}");
    assert_eq!(summary["stopReason"], "end_turn", "{why}");
    assert_eq!(summary["permissionsAllowed"], 2, "{why}");
    assert_eq!(summary["badLines"], 0, "{why}");
}
