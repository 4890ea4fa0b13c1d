//! An agent process: spawned, its stdout split into lines for the core,
//! its stderr appended to its log, stopped when the core says so. When to
//! start, restart and stop is the core's decision.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_codec::remote::AgentRun;

use crate::limits::{self, AgentCgroup};
use crate::room::UserDirs;
use crate::supervisor;
use crate::users::UserRoom;
use acp_codec::codec::RawLineCodec;
use acp_codec::framing::{FrameError, RawItem};
use acp_codec::Limits;
use bytes::BytesMut;
use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, Notify};
use tokio_util::codec::FramedRead;

use super::driver::{user_dirs, Driver, Processes, RunIo};
use super::log::Log;

/// The starter of the driver: one task per agent run.
pub fn start(driver: Arc<Driver>, run: AgentRun, user: Option<String>) {
    tokio::spawn(supervise(driver, run, user));
}

/// Runs one agent process: spawns it, hands its stdout lines to the core,
/// appends its stderr to its log, stops it when the core asks; reports its
/// start and its exit (restarts are the core's decision).
async fn supervise(driver: Arc<Driver>, run: AgentRun, user: Option<String>) {
    super::mcp::prepare(&driver, user.as_deref()).await;
    let processes = &driver.processes;
    let name = user
        .as_deref()
        .map_or_else(|| "agent".to_owned(), |u| format!("agent of {u}"));
    let dirs = user.as_deref().map(|u| {
        let (home, work) = user_dirs(&processes.state_dir, u);
        UserDirs::beside(&home, &work)
    });
    let room = match (user.as_deref(), &processes.users) {
        (Some(u), Some(users)) => users.room(u),
        _ => UserRoom::default(),
    };
    let limits = processes.rooms.limits_of(user.as_ref().map(|_| &room));
    let cgroup = match AgentCgroup::create(limits) {
        Ok(c) => c,
        Err(e) => {
            driver.with(|s, now| s.handle_agent_exited(now, run, &e));
            return;
        }
    };
    let (cgroup, applied) = cgroup;
    let spawned = spawn(processes, dirs.as_ref().map(|d| (d, &room)), &applied).await;
    let (mut child, stdin, stdout, stderr) = match spawned {
        Ok(x) => x,
        Err(e) => {
            release(cgroup).await;
            driver.with(|s, now| s.handle_agent_exited(now, run, &e));
            return;
        }
    };
    let pid = child.id().unwrap_or(0);
    let place = dirs.as_ref().map_or(String::new(), |d| {
        format!(" (HOME {}, in {})", d.home.display(), d.work.display())
    });
    let started = format!(
        "{name} started: pid {pid}, {}{place}; limits: {}",
        processes.command.join(" "),
        show_limits(limits)
    );
    driver.log_line(&started);
    let log = driver.agent_log(user.as_deref());
    if user.is_some() {
        let mut log = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(format!("[bridge] {started}\n").as_bytes());
    }
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let stop = Arc::new(Notify::new());
    driver.attach_run(
        run,
        RunIo {
            stdin: tx,
            stop: stop.clone(),
        },
    );
    let writer = tokio::spawn(write_stdin(stdin, rx));
    let stderr_task = tokio::spawn(log_stderr(log, stderr));
    // Where the user's sessions live: the room's working directory, as
    // the agent's processes see it (symbolic links resolved).
    let session_dir = dirs.as_ref().and_then(|d| {
        let dir = std::fs::canonicalize(&d.work).ok()?;
        dir.to_str().map(str::to_owned)
    });
    driver.with(|s, now| {
        if let (Some(u), Some(dir)) = (user.as_deref(), &session_dir) {
            s.set_session_dir(u, dir);
        }
        s.handle_agent_started(now, run, pid);
    });
    let stopped = tokio::select! {
        () = read_stdout(&driver, run, stdout) => false,
        () = stop.notified() => true,
    };
    driver.detach_run(run);
    let status = if stopped {
        let _ = child.kill().await;
        "stopped".to_owned()
    } else {
        // Stdout closed: make sure the process is gone, then its status.
        match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
            Ok(Ok(s)) => s.to_string(),
            Ok(Err(e)) => format!("wait failed: {e}"),
            Err(_) => {
                let _ = child.kill().await;
                "closed its stdout; killed".to_owned()
            }
        }
    };
    writer.abort();
    if stopped {
        stderr_task.abort();
    } else {
        let _ = tokio::time::timeout(Duration::from_secs(1), stderr_task).await;
    }
    // Which limit the tree ran into, if one did: its user's error says so.
    let status = match cgroup.hit(limits) {
        Some(hit) => format!("{status}; {hit}"),
        None => status,
    };
    release(cgroup).await;
    driver.with(|s, now| s.handle_agent_exited(now, run, &status));
}

/// `1024 processes, 4 GiB of memory (cgroup v1)`, for the start line.
fn show_limits(limits: limits::Limits) -> String {
    let how = match limits::probe() {
        limits::Mechanism::CgroupV2(_) => "cgroup v2, the whole tree",
        limits::Mechanism::CgroupV1 { .. } => "cgroup v1, the whole tree",
        limits::Mechanism::Rlimits { nproc: true } => {
            "RLIMIT_NPROC per room, RLIMIT_DATA per process"
        }
        limits::Mechanism::Rlimits { nproc: false } => {
            "RLIMIT_DATA per process; no process limit for root without a cgroup"
        }
    };
    format!(
        "{} processes, {} of memory ({how})",
        limits.max_processes,
        limits::show_bytes(limits.max_memory)
    )
}

/// Removes an agent's cgroup once its processes are gone.
async fn release(cgroup: AgentCgroup) {
    let _ = tokio::task::spawn_blocking(move || cgroup.remove()).await;
}

type Spawned = (Child, ChildStdin, ChildStdout, ChildStderr);

/// Starts the agent through its launcher (`crate::supervisor`): its
/// room (`user`: a user's own agent, its directories created private to
/// the bridge's OS user when missing) and confinement from `--agent-*`,
/// `--confine` and `--unconfined`; killing the child ends the agent and
/// every process it started.
async fn spawn(
    cfg: &Processes,
    user: Option<(&UserDirs, &UserRoom)>,
    limits: &limits::Applied,
) -> Result<Spawned, String> {
    if let Some((dirs, _)) = user {
        dirs.create()?;
    }
    let program = cfg.command.first().map_or("", String::as_str);
    let mut cmd = cfg
        .rooms
        .limited_command(&cfg.command, user, limits)
        .map_err(|e| format!("cannot launch {program}: {e}"))?;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = supervisor::spawn(cmd)
        .await
        .map_err(|e| format!("spawn of {program} failed: {e}"))?;
    match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
        (Some(i), Some(o), Some(e)) => Ok((child, i, o, e)),
        _ => Err("agent pipes missing".to_owned()),
    }
}

async fn write_stdin(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(line) = rx.recv().await {
        if stdin.write_all(&line).await.is_err() {
            break;
        }
    }
}

async fn log_stderr(log: Arc<Mutex<Log>>, mut stderr: ChildStderr) {
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n) = stderr.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut log = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(chunk.get(..n).unwrap_or_default());
    }
}

/// The read buffer of an agent's stdout: what it starts with and what it
/// is brought back to after a long line.
const READ_BUFFER: usize = 256 * 1024;

/// Splits stdout into lines (each at most `--max-message-bytes`) with the
/// crate's tokio-util codec and hands them to the core, until stdout
/// closes.
///
/// A long line grows the read buffer to its size, and the line's bytes
/// are split off that buffer's front (sharing its allocation). Before
/// the core gets such a line, the bytes after it move to a fresh buffer
/// of [`READ_BUFFER`], so that the line alone holds the large allocation;
/// the line is handed to the core (`handle_agent_line` with the `String`), which
/// frees it once routed, before the router's copy is stamped and queued.
/// So a long line is held twice at most, and the core's copy is the only
/// one left when the connection's writer starts on it; no long line stays
/// resident in the reader.
async fn read_stdout(driver: &Arc<Driver>, run: AgentRun, stdout: ChildStdout) {
    let limits = Limits::default().with_max_line_len(driver.processes.max_line);
    // Pass-through splitting: the line's bytes as read, UTF-8 checked once
    // below, where they become the core's string (the splitting codec
    // would check them too, a second pass over every line).
    let codec = RawLineCodec::with_limits(&limits);
    let mut lines = FramedRead::with_capacity(stdout, codec, READ_BUFFER);
    // An `Err` from the stream is an I/O error: stdout is gone.
    while let Some(Ok(item)) = lines.next().await {
        if lines.read_buffer().capacity() > 2 * READ_BUFFER || item.as_bytes().len() > READ_BUFFER {
            renew(lines.read_buffer_mut());
        }
        match item {
            RawItem::Line(line) if line.is_blank() => {}
            // A long line's bytes become the core's string without a copy
            // (they hold their allocation alone now), and the core frees
            // it once routed; a short one is lent (its bytes share the
            // read buffer).
            RawItem::Line(line) if line.content().len() > READ_BUFFER => {
                let len = line.content().len();
                let mut bytes = Vec::from(line.into_bytes());
                bytes.truncate(len);
                match String::from_utf8(bytes) {
                    Ok(text) => driver.with(move |s, now| s.handle_agent_line(now, run, text)),
                    Err(_) => driver.log_line("agent line skipped: not utf-8"),
                }
            }
            RawItem::Line(line) => match std::str::from_utf8(line.content()) {
                Ok(text) => driver.with(|s, now| s.handle_agent_line(now, run, text)),
                Err(_) => driver.log_line("agent line skipped: not utf-8"),
            },
            RawItem::TooLong { error, .. } => {
                let error = FrameError::LineTooLong(error);
                driver.with(|s, now| s.handle_agent_line_too_long(now, run, &error));
            }
            // The rest of a line over the limit: skipped, reported above.
            RawItem::Rest { .. } => {}
        }
    }
}

/// Moves what a read buffer holds into a fresh one of [`READ_BUFFER`]
/// bytes (more if it holds more), so that the allocation a long line grew
/// is freed once that line is.
fn renew(buffer: &mut BytesMut) {
    let mut fresh = BytesMut::with_capacity(READ_BUFFER.max(buffer.len()));
    fresh.extend_from_slice(buffer);
    *buffer = fresh;
}
