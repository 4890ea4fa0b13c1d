//! Limits per user and the launcher's promises, with the real `acp-bridge`:
//!
//! - a greedy agent (the mock agent as `ACP_MOCK_GREEDY_BYTES` makes it,
//!   given to one user by the token file) starts processes and takes
//!   memory past its user's `maxProcesses` and `maxMemory`; the other
//!   user's turn ends `end_turn` meanwhile, and the greedy user's turn
//!   ends in an error naming both limits;
//! - on a host that refuses namespaces (simulated with the launcher's
//!   test switch), a launcher killed with `SIGKILL` takes the agent's whole
//!   tree down, a double-forked grandchild included.
//!
//! These need what `acp-bridge --check-confinement` reports on CI's
//! machines: a cgroup (v1 or v2) the bridge may write, or a bridge that
//! does not run as root. Where the limits cannot hold, they fail.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::ws_harness::*;

const ANA: &str = "ana-0123456789abcdef-token";
const BO: &str = "bo-0123456789abcdef-token";

fn under_emulator() -> bool {
    std::env::var_os("GEMINI_BRIDGE_UNCONFINED").is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_greedy_agent_hits_both_limits_while_another_users_turn_ends() {
    if under_emulator() {
        return;
    }
    let dir = scratch_dir("limits_greedy");
    let tokens = dir.join("tokens.json");
    let file = json!({"tokens": {
        ANA: {"userId": "ana", "permissions": ["read", "write"],
              "env": {"ACP_MOCK_GREEDY_BYTES": (256u64 << 20).to_string()},
              "maxProcesses": 32, "maxMemory": "64M"},
        BO: {"userId": "bo", "permissions": ["read", "write"]},
    }});
    std::fs::write(&tokens, file.to_string()).unwrap();
    let state = dir.join("state");
    let bridge = Bridge::start_in(
        dir.clone(),
        &[
            "--token-file",
            tokens.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
            "--agent-max-processes",
            "200",
            "--agent-max-memory",
            "512M",
        ],
        &[],
    );
    let cwd = std::env::temp_dir();
    let mut ana = connect_with(&bridge.url(), Some(ANA), None)
        .await
        .expect("connect ana");
    let ana_session = ana.open_session(&cwd).await;
    let mut bo = connect_with(&bridge.url(), Some(BO), None)
        .await
        .expect("connect bo");
    let bo_session = bo.open_session(&cwd).await;
    // Ana's greedy turn starts; bo's whole turn runs while it hogs.
    let prompt = ana.next_id;
    ana.next_id += 1;
    ana.send(
        &json!({"jsonrpc":"2.0","id":prompt,"method":"session/prompt",
        "params":{"sessionId": ana_session, "prompt":[{"type":"text","text":"take it all"}]}}),
    )
    .await;
    let turn = bo.turn(&bo_session, "hello").await;
    assert_eq!(turn.stop_reason, "end_turn", "{turn:?}");
    let answer = ana.response_to(prompt).await;
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        answer.get("result").is_none() && !message.is_empty(),
        "the greedy turn was not refused: {answer}"
    );
    // Both limits named: by the cgroup's events (the kernel killed the
    // agent) or by the agent itself (a process and an allocation refused).
    let cgroup = message.contains("process limit of 32 reached")
        && message.contains("memory limit of 64 MiB reached");
    let rlimits = message.contains("refused") && message.contains("memory refused");
    assert!(cgroup || rlimits, "{message}");
    let log = std::fs::read_to_string(dir.join("gemini-acp.ana.log")).unwrap_or_default();
    assert!(
        log.contains("greedy agent: process") && log.contains("refused"),
        "no process was refused:\n{log}"
    );
    assert!(
        log.contains("limits: 32 processes, 64 MiB of memory"),
        "{log}"
    );
    // Bo is served again, and ana's agent, restarted, too.
    assert_eq!(bo.turn(&bo_session, "again").await.stop_reason, "end_turn");
}

/// Whether `pid` is alive (a zombie is not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s.get(s.rfind(')')? + 1..)?.to_owned();
            rest.split_whitespace().next().map(|st| st != "Z")
        })
        .unwrap_or(false)
}

fn wait_for_lines(path: &Path, n: usize) -> Vec<u32> {
    let deadline = Instant::now() + STEP;
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= n {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "{} never got {n} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_killed_launcher_takes_the_tree_down_without_namespaces() {
    if under_emulator() {
        return;
    }
    let dir = scratch_dir("limits_keeper");
    let pids = dir.join("pids");
    let agent = dir.join("agent");
    // A child, and a grandchild orphaned by a double fork; each writes its
    // pid. Then the agent waits on its stdin.
    let script = format!(
        "#!/bin/sh\n\
         sh -c 'read -r p rest < /proc/self/stat; echo \"$p\" >> {p}; exec sleep 4244' &\n\
         sh -c \"sh -c 'read -r p rest < /proc/self/stat; echo \\$p >> {p}; exec sleep 4244' &\" &\n\
         exec cat > /dev/null\n",
        p = pids.display()
    );
    std::fs::write(&agent, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bridge = Bridge::start_in(
        dir.clone(),
        &[
            "--agent",
            agent.to_str().unwrap(),
            "--agent-env",
            "ACP_LAUNCHER_NO_NAMESPACES",
        ],
        &[("ACP_LAUNCHER_NO_NAMESPACES", "1")],
    );
    let tree = wait_for_lines(&pids, 2);
    assert!(tree.iter().all(|p| alive(*p)), "{tree:?}");
    let log = std::fs::read_to_string(dir.join("gemini-acp.log")).unwrap_or_default();
    assert!(
        log.contains("no pid namespace (refused for a test"),
        "the launcher was not on its no-namespace path:\n{log}"
    );
    let launcher = bridge.agent_pid().expect("the launcher");
    // SAFETY: a plain kill(2) of the launcher this test's bridge started.
    assert_eq!(unsafe { libc::kill(launcher as i32, libc::SIGKILL) }, 0);
    let deadline = Instant::now() + Duration::from_secs(5);
    while tree.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = tree.iter().copied().filter(|p| alive(*p)).collect();
    for p in &left {
        // SAFETY: a plain kill(2) of a process this test's agent started.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "outlived their launcher: {left:?}");
    drop(bridge);
}
