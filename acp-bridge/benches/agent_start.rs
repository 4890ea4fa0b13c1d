//! `agent start`: how long an agent takes from being started to its first
//! line on stdout, through the launcher a user's agent goes through
//! (`acp_bridge::room::Rooms::command`, then `acp_bridge::supervisor::spawn`:
//! a re-executed launcher that enters a user and a PID namespace, applies
//! the room's Landlock rules and starts the agent under an init, PID 1 of
//! its namespace), against the anchor in the same group: the same program
//! started with a plain `tokio::process::Command`. The agent is
//! `sh -c 'echo x'`, so the times are the launch's own.
//!
//! - `tokio Command (anchor)`: `sh -c 'echo x'`, stdout piped;
//! - `launcher, namespaces only`: through the launcher with `--unconfined`
//!   (user and PID namespace, the init; no Landlock rules);
//! - `launcher, confined`: a user's own agent: namespaces and Landlock, its
//!   room's environment and working directory.
//!
//! The launcher re-executes the program that starts it: this bench's
//! `main` hands over to `supervisor::run_if_launcher` first, as
//! `acp-bridge` and `acp-client` do.
//!
//! Run: `cargo bench -p acp-bridge --bench agent_start -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use acp_bridge::room::{Rooms, UserDirs};
use acp_bridge::supervisor;
use acp_bridge::users::UserRoom;
use criterion::Criterion;
use tokio::io::{AsyncBufReadExt, BufReader};

const AGENT: [&str; 3] = ["/bin/sh", "-c", "echo x"];

/// Starts `cmd`, reads its first line, waits for it to exit; the line.
async fn first_line(mut cmd: tokio::process::Command, launcher: bool) -> String {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = if launcher {
        supervisor::spawn(cmd).await
    } else {
        cmd.spawn()
    }
    .expect("agent started");
    let stdout = child.stdout.take().expect("stdout piped");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .await
        .expect("stdout read");
    let status = child.wait().await.expect("agent waited for");
    assert!(status.success(), "agent exited with {status}");
    assert_eq!(line, "x\n", "the agent's first line");
    line
}

fn agent_start(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let agent: Vec<String> = AGENT.iter().map(|s| (*s).to_owned()).collect();
    let scratch =
        std::env::temp_dir().join(format!("acp-bench-agent-start-{}", std::process::id()));
    let base: PathBuf = scratch.join("ana");
    // Made by the first launcher (each later one finds them).
    let dirs = UserDirs::beside(&base.join("home"), &base.join("work"));
    let room = UserRoom::default();
    let confined = Rooms::default();
    let namespaces_only = Rooms {
        unconfined: true,
        ..Rooms::default()
    };
    assert!(confined.confines(true) && !namespaces_only.confines(true));

    let mut group = c.benchmark_group("agent start");
    group.bench_function("tokio Command (anchor)", |b| {
        b.iter(|| {
            let mut cmd = tokio::process::Command::new(AGENT[0]);
            cmd.args(&AGENT[1..]);
            black_box(rt.block_on(first_line(cmd, false)))
        });
    });
    group.bench_function("launcher, namespaces only", |b| {
        b.iter(|| {
            let cmd = namespaces_only
                .command(&agent, Some((&dirs, &room)))
                .expect("launcher command");
            black_box(rt.block_on(first_line(cmd, true)))
        });
    });
    group.bench_function("launcher, confined", |b| {
        b.iter(|| {
            let cmd = confined
                .command(&agent, Some((&dirs, &room)))
                .expect("launcher command");
            black_box(rt.block_on(first_line(cmd, true)))
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&scratch);
}

fn main() -> ExitCode {
    // This binary is also the agents' launcher (and their init).
    if let Some(code) = supervisor::run_if_launcher() {
        return code;
    }
    let mut criterion = Criterion::default().configure_from_args();
    agent_start(&mut criterion);
    criterion.final_summary();
    ExitCode::SUCCESS
}
