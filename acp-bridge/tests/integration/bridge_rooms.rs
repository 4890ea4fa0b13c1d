//! Each user's room, with a hostile agent: the real `acp-bridge` with a
//! token file of two users, ana and bo, whose agent is a shell script that
//! tries to read, write and list bo's room, the state directory, the token
//! file and a path outside them all, then starts children (plain, `setsid`,
//! double-forked) and leaves them. Every attempt is refused, its own room
//! works, only its own variables reach it, `--agent-net` lets it connect
//! to its one port only, and no child outlives the agent's idle stop, its
//! user's removal from the token file, the bridge's SIGTERM or its SIGKILL.
//!
//! These need Landlock (ABI 3) and unprivileged user namespaces: where the
//! kernel lacks them the bridge refuses to start and the tests fail. Under
//! the ARM stage's emulator (`GEMINI_BRIDGE_UNCONFINED` set) they do not
//! run: the emulator does not pass those system calls through.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::ws_harness::*;

const ANA: &str = "ana-0123456789abcdef-token";
const BO: &str = "bo-0123456789abcdef-token";

/// The hostile agent. Its targets come from its own environment (ana's
/// `env` in the token file); it reports to `report` in its working
/// directory and lists the pids of the children it left in `pids`.
const HOSTILE: &str = r#"#!/bin/sh
try() { if sh -c "$1" >/dev/null 2>&1; then echo "ALLOWED $2"; else echo "refused $2"; fi; }
{
try "cat '$OTHER/home/secret'" "read other room"
try "ls '$OTHER'" "list other room"
try "ls '$OTHER/home'" "list other home"
try "echo x > '$OTHER/home/pwned'" "write other room"
try "ls '$STATE'" "list state dir"
try "echo x > '$STATE/pwned'" "write state dir"
try "cat '$TOKENS'" "read token file"
try "cat '$LOGS/gemini-acp.log'" "read bridge log"
try "cat '$OUTSIDE/secret'" "read outside"
try "ls '$OUTSIDE'" "list outside"
try "echo x > '$OUTSIDE/pwned'" "write outside"
try "echo x > /tmp/acp-room-pwned-$$" "write shared tmp"
try "echo mine > '$HOME/own' && cat '$HOME/own'" "own home"
try "echo mine > '$TMPDIR/own' && cat '$TMPDIR/own'" "own tmp"
try "echo mine > ./own && cat ./own" "own work"
try "bash -c 'exec 3<>/dev/tcp/127.0.0.1/$NET_OK'" "tcp to the allowed port"
try "bash -c 'exec 3<>/dev/tcp/127.0.0.1/$NET_NO'" "tcp to another port"
echo "server secret: ${SERVER_SECRET:-none}"
echo "bo key: ${BO_KEY:-none}"
echo "ana key: ${ANA_KEY:-none}"
echo "token var: ${GEMINI_BRIDGE_TOKEN_FILE:-none}"
} > report.tmp
# Children left behind, each writing its pid as the bridge sees it
# (/proc/self is the bridge's /proc).
sh -c 'read -r p rest < /proc/self/stat; echo "$p" >> pids; exec sleep 4242' &
setsid sh -c 'read -r p rest < /proc/self/stat; echo "$p" >> pids; exec sleep 4242' &
sh -c 'sh -c "read -r p rest < /proc/self/stat; echo \$p >> pids; exec sleep 4242" &' &
while [ "$(wc -l < pids 2>/dev/null || echo 0)" -lt 3 ]; do sleep 0.05; done
read -r p rest < /proc/self/stat; echo "$p" > agent.pid
mv report.tmp report
exec cat > /dev/null
"#;

struct Rooms {
    bridge: Bridge,
    ana_work: PathBuf,
    /// Listening while the agent tries them: `--agent-net` allows the
    /// first only.
    _ports: [std::net::TcpListener; 2],
}

/// Fails loudly, with what is missing, where the kernel cannot confine.
fn kernel_confines() {
    let out = std::process::Command::new(bridge_exe())
        .arg("--check-confinement")
        .output()
        .unwrap();
    // 0: fully, 3: partly (a right or a limit missing; agents still run
    // confined).
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "this kernel cannot confine agents (these tests need Landlock ABI 3 and unprivileged user namespaces):\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn under_emulator() -> bool {
    std::env::var_os("GEMINI_BRIDGE_UNCONFINED").is_some()
}

/// The bridge with ana's hostile agent started (its report written, its
/// children running).
async fn start(name: &str, idle_secs: &str, extra: &[&str]) -> Rooms {
    kernel_confines();
    let dir = scratch_dir(name);
    let state = dir.join("state");
    let bo_home = state.join("bo").join("home");
    std::fs::create_dir_all(&bo_home).unwrap();
    std::fs::write(bo_home.join("secret"), "bo's secret").unwrap();
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "outside secret").unwrap();
    let bin = dir.join("agent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let agent = bin.join("hostile");
    std::fs::write(&agent, HOSTILE).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tokens = dir.join("tokens.json");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let listen = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ports = [listen(), listen()];
    let port = |i: usize| ports[i].local_addr().unwrap().port().to_string();
    let file = json!({"tokens": {
        ANA: {"userId": "ana", "permissions": ["read", "write"], "env": {
            "ANA_KEY": "ana-key", "OTHER": s(&state.join("bo")), "STATE": s(&state),
            "TOKENS": s(&tokens), "OUTSIDE": s(&outside), "LOGS": s(&dir),
            "NET_OK": port(0), "NET_NO": port(1)}},
        BO: {"userId": "bo", "permissions": ["read", "write"], "env": {"BO_KEY": "bo-key"}},
    }});
    std::fs::write(&tokens, file.to_string()).unwrap();
    let net = port(0);
    let mut args = vec![
        "--token-file",
        tokens.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
        "--agent",
        agent.to_str().unwrap(),
        "--agent-idle-secs",
        idle_secs,
        "--agent-net",
        &net,
    ];
    args.extend_from_slice(extra);
    let bridge = Bridge::start_in(dir.clone(), &args, &[("SERVER_SECRET", "server-secret")]);
    // Ana's first message starts her agent (it never answers).
    let mut ana = connect_with(&bridge.url(), Some(ANA), None)
        .await
        .expect("connect");
    ana.send(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}))
        .await;
    let ana_work = state.join("ana").join("work");
    let deadline = Instant::now() + STEP;
    while !ana_work.join("report").exists() {
        assert!(
            Instant::now() < deadline,
            "the hostile agent wrote no report; bridge stderr:\n{}",
            bridge.stderr.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(ana);
    Rooms {
        bridge,
        ana_work,
        _ports: ports,
    }
}

/// The pids of the children the agent left, each checked to be its
/// `sleep 4242`.
fn children(rooms: &Rooms) -> Vec<u32> {
    let text = std::fs::read_to_string(rooms.ana_work.join("pids")).unwrap();
    let pids: Vec<u32> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 3, "pids: {text:?}");
    for pid in &pids {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            String::from_utf8_lossy(&cmdline).contains("4242"),
            "pid {pid} is not the agent's child: {cmdline:?}"
        );
    }
    pids
}

/// Whether `pid` is gone (or a zombie, dead and waiting to be reaped).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Asserts every pid is gone within 5 s of `since`.
fn all_gone_within_5s(pids: &[u32], since: Instant, how: &str) {
    while pids.iter().any(|p| !gone(*p)) {
        if since.elapsed() > Duration::from_secs(5) {
            let alive: Vec<_> = pids.iter().filter(|p| !gone(**p)).collect();
            // Leave nothing behind for the next test.
            for p in &alive {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &p.to_string()])
                    .status();
            }
            panic!("after {how}, the agent's children {alive:?} outlived it");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_agent_is_refused_everything_outside_its_room() {
    if under_emulator() {
        eprintln!("confinement tests run natively only (GEMINI_BRIDGE_UNCONFINED is set)");
        return;
    }
    let rooms = start("rooms_refused", "600", &[]).await;
    let report = std::fs::read_to_string(rooms.ana_work.join("report")).unwrap();
    for line in [
        "refused read other room",
        "refused list other room",
        "refused list other home",
        "refused write other room",
        "refused list state dir",
        "refused write state dir",
        "refused read token file",
        "refused read bridge log",
        "refused read outside",
        "refused list outside",
        "refused write outside",
        "refused write shared tmp",
        "ALLOWED own home",
        "ALLOWED own tmp",
        "ALLOWED own work",
        "ALLOWED tcp to the allowed port",
        "refused tcp to another port",
        "server secret: none",
        "bo key: none",
        "ana key: ana-key",
        "token var: none",
    ] {
        assert!(
            report.contains(line),
            "no {line:?} in the report:\n{report}"
        );
    }
    let dir = &rooms.bridge.dir;
    assert!(!dir
        .join("state")
        .join("bo")
        .join("home")
        .join("pwned")
        .exists());
    assert!(!dir.join("outside").join("pwned").exists());
    assert!(!dir.join("state").join("pwned").exists());
    let pids = children(&rooms);
    drop(rooms);
    // Dropping the bridge SIGKILLs it: its agents' trees end with it.
    all_gone_within_5s(&pids, Instant::now(), "the bridge's SIGKILL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_child_outlives_the_idle_stop() {
    if under_emulator() {
        return;
    }
    let rooms = start("rooms_idle", "1", &[]).await;
    let pids = children(&rooms);
    let deadline = Instant::now() + STEP;
    while !rooms
        .bridge
        .stderr
        .lock()
        .unwrap()
        .contains("stopped: idle")
    {
        assert!(
            Instant::now() < deadline,
            "the agent was not stopped for idleness"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    all_gone_within_5s(&pids, Instant::now(), "the idle stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_child_outlives_its_agent_killed_and_restarted() {
    if under_emulator() {
        return;
    }
    let rooms = start("rooms_restart", "600", &[]).await;
    let pids = children(&rooms);
    let agent = std::fs::read_to_string(rooms.ana_work.join("agent.pid")).unwrap();
    std::fs::remove_file(rooms.ana_work.join("report")).unwrap();
    let sent = Instant::now();
    assert!(std::process::Command::new("kill")
        .args(["-KILL", agent.trim()])
        .status()
        .unwrap()
        .success());
    all_gone_within_5s(&pids, sent, "its agent's death");
    // The bridge restarts it (the new run writes a new report).
    let deadline = Instant::now() + STEP;
    while !rooms.ana_work.join("report").exists() {
        assert!(Instant::now() < deadline, "the agent was not restarted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_child_outlives_its_eviction_by_the_agent_cap() {
    if under_emulator() {
        return;
    }
    let rooms = start("rooms_cap", "600", &["--max-agents", "1"]).await;
    let pids = children(&rooms);
    // Bo's first message needs an agent: ana's, without a connection, is
    // evicted to make room.
    let mut bo = connect_with(&rooms.bridge.url(), Some(BO), None)
        .await
        .expect("connect");
    let sent = Instant::now();
    bo.send(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}))
        .await;
    all_gone_within_5s(&pids, sent, "its eviction by --max-agents");
    assert!(rooms.bridge.stderr.lock().unwrap().contains("evicted"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_child_outlives_the_bridges_sigterm() {
    if under_emulator() {
        return;
    }
    let mut rooms = start("rooms_sigterm", "600", &[]).await;
    let pids = children(&rooms);
    let pid = rooms.bridge.pid().to_string();
    let sent = Instant::now();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let _ = rooms.bridge.child.wait();
    all_gone_within_5s(&pids, sent, "the bridge's SIGTERM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_child_outlives_its_user_removed_from_the_token_file() {
    if under_emulator() {
        return;
    }
    let rooms = start("rooms_removed", "600", &[]).await;
    let pids = children(&rooms);
    let tokens = rooms.bridge.dir.join("tokens.json");
    let only_bo = json!({"tokens": {BO: {"userId": "bo", "permissions": ["read"]}}});
    std::fs::write(&tokens, only_bo.to_string()).unwrap();
    let sent = Instant::now();
    assert!(std::process::Command::new("kill")
        .args(["-HUP", &rooms.bridge.pid().to_string()])
        .status()
        .unwrap()
        .success());
    all_gone_within_5s(&pids, sent, "its user's removal");
    // Logged once the launcher has been reaped, just after its tree died.
    let logged = Instant::now();
    while !rooms
        .bridge
        .stderr
        .lock()
        .unwrap()
        .contains("agent of ana stopped: user removed")
    {
        assert!(
            logged.elapsed() < Duration::from_secs(5),
            "no log of ana's agent stopping"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The bridge's exit status and stderr for `args` (it must refuse to
/// start).
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(bridge_exe())
        .args(["--port", "0"])
        .args(args)
        .env_remove("GEMINI_BRIDGE_UNCONFINED")
        .env_remove("GEMINI_BRIDGE_TOKEN")
        .env_remove("GEMINI_BRIDGE_TOKEN_FILE")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn secrets_beneath_a_path_agents_may_read_are_refused_and_unconfined_is_loud() {
    let dir = scratch_dir("rooms_refusals");
    let tokens = dir.join("tokens.json");
    std::fs::write(
        &tokens,
        json!({"tokens": {ANA: {"userId": "ana", "permissions": ["read"]}}}).to_string(),
    )
    .unwrap();
    let (t, d) = (tokens.to_str().unwrap(), dir.to_str().unwrap());
    let state = dir.join("state");
    let s = state.to_str().unwrap();
    // The token file (and the logs) beneath an --agent-ro path.
    let (code, err) = refused(&[
        "--token-file",
        t,
        "--state-dir",
        s,
        "--log-dir",
        d,
        "--agent-ro",
        d,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("beneath") && err.contains("which confined agents may read"),
        "{err}"
    );
    // An operator path that does not exist.
    let missing = dir.join("missing");
    let (code, err) = refused(&[
        "--token-file",
        t,
        "--state-dir",
        s,
        "--log-dir",
        d,
        "--agent-rw",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not an existing absolute path"), "{err}");
    // --unconfined: started, and said loudly (on stderr, before the
    // listening line, and in the bridge's log).
    std::fs::create_dir_all(dir.join("run")).unwrap();
    let bridge = Bridge::start_in(
        dir.join("run"),
        &["--token-file", t, "--state-dir", s, "--unconfined"],
        &[],
    );
    let log = std::fs::read_to_string(dir.join("run").join("gemini-acp.log")).unwrap_or_default();
    assert!(
        log.contains("WARNING: --unconfined: agents are NOT confined"),
        "{log}"
    );
    drop(bridge);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_shared_agent_is_confined_with_confine() {
    if under_emulator() {
        return;
    }
    kernel_confines();
    let dir = scratch_dir("rooms_confine");
    let (work, outside, bin, logs) = (
        dir.join("work"),
        dir.join("outside"),
        dir.join("agent-bin"),
        dir.join("logs"),
    );
    for d in [&work, &outside, &bin, &logs] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(outside.join("secret"), "outside").unwrap();
    let agent = bin.join("shared");
    let script = format!(
        "#!/bin/sh\n{{ cat '{o}/secret' && echo ALLOWED read outside || echo refused read outside\n\
         echo pwned >> '{l}/gemini-acp.log' && echo ALLOWED write bridge log || echo refused write bridge log\n\
         echo mine > own && echo ALLOWED own work || echo refused own work; }} > report.tmp 2>/dev/null\n\
         mv report.tmp report\nexec cat > /dev/null\n",
        o = outside.display(),
        l = logs.display()
    );
    std::fs::write(&agent, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bridge = |log_dir: Option<&Path>| {
        let mut cmd = std::process::Command::new(bridge_exe());
        cmd.args(["--port", "0", "--confine"]);
        if let Some(l) = log_dir {
            cmd.arg("--log-dir").arg(l);
        }
        cmd.arg("--agent")
            .arg(&agent)
            .current_dir(&work)
            .env_remove("GEMINI_BRIDGE_UNCONFINED")
            .env_remove("GEMINI_BRIDGE_TOKEN")
            .env_remove("GEMINI_BRIDGE_TOKEN_FILE")
            .env_remove("GEMINI_BRIDGE_AGENT")
            .env_remove("GEMINI_BRIDGE_LOG_DIR")
            .env("HOME", &work)
            .env("TMPDIR", &work)
            .stdin(std::process::Stdio::null());
        cmd
    };
    // The default log directory, `.`, is the working directory the shared
    // agent may write: refused, naming it.
    let refused = bridge(None).output().unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("holds the bridge's log directory"),
        "{said}"
    );
    let mut child = bridge(Some(&logs))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + STEP;
    while !work.join("report").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let report = std::fs::read_to_string(work.join("report")).unwrap_or_default();
    let log = std::fs::read_to_string(logs.join("gemini-acp.log")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.contains("refused read outside"), "{report:?}");
    assert!(report.contains("refused write bridge log"), "{report:?}");
    assert!(!log.contains("pwned"), "{log}");
    assert!(report.contains("ALLOWED own work"), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_closing_its_stdout_is_seen_through_its_launcher() {
    if under_emulator() {
        return;
    }
    kernel_confines();
    let dir = scratch_dir("rooms_stdout");
    let bin = dir.join("agent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let agent = bin.join("mute");
    std::fs::write(&agent, "#!/bin/sh\nexec >&-\nexec sleep 4243\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tokens = dir.join("tokens.json");
    std::fs::write(
        &tokens,
        json!({"tokens": {ANA: {"userId": "ana", "permissions": ["read", "write"]}}}).to_string(),
    )
    .unwrap();
    let state = dir.join("state");
    let bridge = Bridge::start_in(
        dir.clone(),
        &[
            "--token-file",
            tokens.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
            "--agent",
            agent.to_str().unwrap(),
        ],
        &[],
    );
    let mut ana = connect_with(&bridge.url(), Some(ANA), None)
        .await
        .expect("connect");
    ana.send(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}))
        .await;
    let deadline = Instant::now() + STEP;
    loop {
        let log = bridge.stderr.lock().unwrap().clone();
        if log.contains("closed its stdout; killed") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the closed stdout went unseen:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
