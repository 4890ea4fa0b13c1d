//! The agent process: spawned, its stdout split into lines for the hub, its
//! stderr appended to the log, restarted with backoff when it exits.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_codec::codec::LineCodec;
use acp_codec::Limits;
use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::FramedRead;

use crate::hub::{resolve, Shared};

/// Keeps one agent process running: spawn, relay, restart with backoff.
/// `up` fires once the first agent runs (or failed to start).
pub async fn supervise(shared: Arc<Shared>, up: oneshot::Sender<()>) {
    let cfg = shared.config.clone();
    let mut backoff = cfg.backoff_min;
    let mut restarts: u64 = 0;
    let mut up = Some(up);
    loop {
        let started = Instant::now();
        let status = run_agent(&shared, restarts, &mut up).await;
        if let Some(up) = up.take() {
            let _ = up.send(());
        }
        // A run that lasted a while resets the backoff.
        if started.elapsed() > Duration::from_secs(30) {
            backoff = cfg.backoff_min;
        }
        shared.log_line(&format!(
            "agent exited ({status}); restarting in {} ms",
            backoff.as_millis()
        ));
        let sends = {
            let mut st = shared.lock();
            st.agent_tx = None;
            let mut outs = Vec::new();
            st.router.agent_exited(&status, backoff, &mut outs);
            resolve(&st, outs)
        };
        shared.deliver(sends).await;
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(cfg.backoff_max);
        restarts += 1;
    }
}

/// Runs the agent once; returns how it ended.
async fn run_agent(
    shared: &Arc<Shared>,
    restarts: u64,
    up: &mut Option<oneshot::Sender<()>>,
) -> String {
    let cfg = &shared.config;
    let (mut child, stdin, stdout, stderr) = match spawn(&cfg.agent) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let pid = child.id().unwrap_or(0);
    shared.log_line(&format!(
        "agent started: pid {pid}, {}",
        cfg.agent.join(" ")
    ));
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(write_stdin(stdin, rx));
    let stderr_task = tokio::spawn(log_stderr(shared.clone(), stderr));
    let sends = {
        let mut st = shared.lock();
        st.agent_tx = Some(tx);
        let mut outs = Vec::new();
        st.router.agent_started(pid, restarts, &mut outs);
        resolve(&st, outs)
    };
    shared.deliver(sends).await;
    if let Some(up) = up.take() {
        let _ = up.send(());
    }
    read_stdout(shared, stdout).await;
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
    status
}

type Spawned = (Child, ChildStdin, ChildStdout, ChildStderr);

fn spawn(command: &[String]) -> Result<Spawned, String> {
    let Some((program, args)) = command.split_first() else {
        return Err("no agent command".to_owned());
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
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

async fn log_stderr(shared: Arc<Shared>, mut stderr: ChildStderr) {
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n) = stderr.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut log = shared
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(chunk.get(..n).unwrap_or_default());
    }
}

/// Splits stdout into lines (each at most `--max-message-bytes`) with the
/// crate's tokio-util codec and hands them to the hub, until stdout closes.
async fn read_stdout(shared: &Shared, stdout: ChildStdout) {
    let limits = Limits::default().with_max_line_len(shared.config.max_message);
    let mut lines = FramedRead::with_capacity(stdout, LineCodec::with_limits(&limits), 256 * 1024);
    // An `Err` from the stream is an I/O error: stdout is gone.
    while let Some(Ok(item)) = lines.next().await {
        match item {
            // The codec hands out valid UTF-8 only.
            Ok(line) => match std::str::from_utf8(&line) {
                Ok(text) => shared.agent_line(Ok(text)).await,
                Err(_) => shared.log_line("agent line skipped: not utf-8"),
            },
            Err(e) => shared.agent_line(Err(e)).await,
        }
    }
}
