//! An agent process: spawned, its stdout split into lines for the hub, its
//! stderr appended to its log, restarted with backoff when it exits, and
//! (a user's own agent) stopped once idle.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_bridge::room::UserDirs;
use acp_bridge::supervisor;
use acp_bridge::users::UserRoom;
use acp_codec::codec::LineCodec;
use acp_codec::Limits;
use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

use crate::hub::{resolve, user_dirs, Agent, Config, Shared};

/// How one run of the process ended.
enum Ended {
    /// It exited (how).
    Exited(String),
    /// It was stopped: idle, or evicted (why).
    Retired(&'static str),
}

/// Keeps `agent`'s process running: spawn, relay, restart with backoff;
/// returns once a user's agent has been idle for `--agent-idle-secs`, or
/// evicted to make room for another (`run` is the start this supervisor
/// serves; a later one means it was evicted).
pub async fn supervise(shared: Arc<Shared>, agent: Arc<Agent>, run: u64) {
    let cfg = shared.config.clone();
    let mut backoff = cfg.backoff_min;
    let mut restarts: u64 = 0;
    loop {
        let started = Instant::now();
        let ended = run_agent(&shared, &agent, restarts, run).await;
        agent.up.send_replace(true);
        let status = match ended {
            Ended::Retired(why) => {
                shared.log_line(&format!("{} stopped: {why}", agent.name()));
                return;
            }
            // Evicted: its input closed, so it may have exited first.
            Ended::Exited(_) if !shared.is_current(&agent, run) => {
                shared.log_line(&format!("{} stopped: evicted", agent.name()));
                return;
            }
            Ended::Exited(status) => status,
        };
        // A run that lasted a while resets the backoff.
        if started.elapsed() > Duration::from_secs(30) {
            backoff = cfg.backoff_min;
        }
        shared.log_line(&format!(
            "{} exited ({status}); restarting in {} ms",
            agent.name(),
            backoff.as_millis()
        ));
        let sends = {
            let mut st = agent.lock();
            st.agent_tx = None;
            let mut outs = Vec::new();
            st.router.agent_exited(&status, backoff, &mut outs);
            resolve(&agent, &st, outs)
        };
        shared.deliver(sends).await;
        tokio::time::sleep(backoff).await;
        if let Some(why) = shared.retire_if_idle(&agent, run) {
            shared.log_line(&format!("{} not restarted: {why}", agent.name()));
            return;
        }
        backoff = (backoff * 2).min(cfg.backoff_max);
        restarts += 1;
    }
}

/// Runs the agent once; returns how it ended.
async fn run_agent(shared: &Arc<Shared>, agent: &Arc<Agent>, restarts: u64, run: u64) -> Ended {
    let cfg = &shared.config;
    let dirs = agent.is_dedicated().then(|| {
        let (home, work) = user_dirs(&cfg.state_dir, &agent.user);
        UserDirs::beside(&home, &work)
    });
    let room = match (&dirs, &cfg.access.users) {
        (Some(_), Some(users)) => users.room(&agent.user),
        _ => UserRoom::default(),
    };
    let spawned = spawn(cfg, dirs.as_ref().map(|d| (d, &room))).await;
    let (mut child, stdin, stdout, stderr) = match spawned {
        Ok(x) => x,
        Err(e) => return Ended::Exited(e),
    };
    let pid = child.id().unwrap_or(0);
    let place = dirs.as_ref().map_or(String::new(), |d| {
        format!(" (HOME {}, in {})", d.home.display(), d.work.display())
    });
    let started = format!(
        "{} started: pid {pid}, {}{place}",
        agent.name(),
        cfg.agent.join(" ")
    );
    shared.log_line(&started);
    if agent.is_dedicated() {
        let mut log = agent
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(format!("[bridge] {started}\n").as_bytes());
    }
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(write_stdin(stdin, rx));
    let stderr_task = tokio::spawn(log_stderr(agent.clone(), stderr));
    let sends = {
        let mut st = agent.lock();
        st.agent_tx = Some(tx);
        let mut outs = Vec::new();
        st.router.agent_started(pid, restarts, &mut outs);
        resolve(agent, &st, outs)
    };
    shared.deliver(sends).await;
    agent.up.send_replace(true);
    let retired = tokio::select! {
        () = read_stdout(shared, agent, stdout) => None,
        why = idle(shared, agent, run) => Some(why),
    };
    if let Some(why) = retired {
        let _ = child.kill().await;
        writer.abort();
        stderr_task.abort();
        return Ended::Retired(why);
    }
    // Stdout closed: make sure the process is gone, then report its status.
    let status = match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(s)) => s.to_string(),
        Ok(Err(e)) => format!("wait failed: {e}"),
        Err(_) => {
            let _ = child.kill().await;
            "closed its stdout; killed".to_owned()
        }
    };
    writer.abort();
    let _ = tokio::time::timeout(Duration::from_secs(1), stderr_task).await;
    Ended::Exited(status)
}

/// Resolves once `agent` is a user's own agent idle for `--agent-idle-secs`,
/// or evicted (never for the shared agent): why.
async fn idle(shared: &Shared, agent: &Agent, run: u64) -> &'static str {
    if !agent.is_dedicated() {
        return std::future::pending().await;
    }
    let tick =
        (shared.config.agent_idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
    loop {
        tokio::select! {
            () = tokio::time::sleep(tick) => {}
            () = agent.evicted.notified() => {}
        }
        if let Some(why) = shared.retire_if_idle(agent, run) {
            return why;
        }
    }
}

type Spawned = (Child, ChildStdin, ChildStdout, ChildStderr);

/// Starts the agent through its launcher (`acp_bridge::supervisor`): its
/// room (`user`: a user's own agent, its directories created private to
/// the bridge's OS user when missing) and confinement from `--agent-*`,
/// `--confine` and `--unconfined`; killing the child ends the agent and
/// every process it started.
async fn spawn(cfg: &Config, user: Option<(&UserDirs, &UserRoom)>) -> Result<Spawned, String> {
    if let Some((dirs, _)) = user {
        dirs.create()?;
    }
    let program = cfg.agent.first().map_or("", String::as_str);
    let mut cmd = cfg
        .rooms
        .command(&cfg.agent, user)
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

async fn write_stdin(mut stdin: ChildStdin, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = rx.recv().await {
        if stdin.write_all(&line).await.is_err() {
            break;
        }
    }
}

async fn log_stderr(agent: Arc<Agent>, mut stderr: ChildStderr) {
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n) = stderr.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut log = agent
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(chunk.get(..n).unwrap_or_default());
    }
}

/// Splits stdout into lines (each at most `--max-message-bytes`) with the
/// crate's tokio-util codec and hands them to the hub, until stdout closes.
async fn read_stdout(shared: &Shared, agent: &Agent, stdout: ChildStdout) {
    let limits = Limits::default().with_max_line_len(shared.config.max_message);
    let mut lines = FramedRead::with_capacity(stdout, LineCodec::with_limits(&limits), 256 * 1024);
    // An `Err` from the stream is an I/O error: stdout is gone.
    while let Some(Ok(item)) = lines.next().await {
        match item {
            // The codec hands out valid UTF-8 only.
            Ok(line) => match std::str::from_utf8(&line) {
                Ok(text) => shared.agent_line(agent, Ok(text)).await,
                Err(_) => shared.log_line(&format!("{} line skipped: not utf-8", agent.name())),
            },
            Err(e) => shared.agent_line(agent, Err(e)).await,
        }
    }
}
