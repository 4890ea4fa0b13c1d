//! `terminal/*` served by the client: commands an agent runs through us, in
//! the session directory, each in its own process group, output bounded by
//! the crate's `acp_codec::client::terminal::TerminalOutput`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use acp_codec::acp::{CreateTerminalRequest, RpcError, TerminalExitStatus, TerminalOutputResponse};
use acp_codec::client::terminal::TerminalOutput;
use acp_codec::ErrorCode;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

/// The most output kept per command when the agent asks for more or sets no
/// `outputByteLimit`.
pub const OUTPUT_CAP: usize = 1 << 20;

/// The most commands open at once.
pub const MAX_TERMINALS: usize = 16;

/// Commands started by `terminal/create`, by terminal id.
#[derive(Default)]
pub struct Terminals {
    next: u64,
    open: HashMap<String, Terminal>,
}

struct Terminal {
    output: Arc<Mutex<TerminalOutput>>,
    /// `Some` once the command exited.
    exit: watch::Receiver<Option<TerminalExitStatus<'static>>>,
    /// The command's process group (its pid), `None` once reaped.
    pgid: Option<u32>,
    command: String,
}

fn not_found(id: &str) -> RpcError<'static> {
    RpcError::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("no terminal {id:?} (released or never created)"),
    )
}

impl Terminals {
    /// Starts the command of `terminal/create` in `cwd` (already confined to
    /// the session directory); returns its terminal id.
    ///
    /// # Errors
    ///
    /// Too many open terminals, or the command could not start.
    pub fn create(
        &mut self,
        req: &CreateTerminalRequest<'_>,
        cwd: PathBuf,
    ) -> Result<String, RpcError<'static>> {
        if self.open.len() >= MAX_TERMINALS {
            return Err(RpcError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("too many open terminals (at most {MAX_TERMINALS}); release one"),
            ));
        }
        let (ours, stdout, stderr) = output_stream().map_err(|e| {
            RpcError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("cannot make an output stream for {}: {e}", req.command),
            )
        })?;
        let mut cmd = tokio::process::Command::new(req.command.as_ref());
        cmd.args(req.args.iter().flatten().map(AsRef::<str>::as_ref))
            .envs(
                req.env
                    .iter()
                    .flatten()
                    .map(|v| (v.name.as_ref(), v.value.as_ref())),
            )
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0)
            .kill_on_drop(true);
        let spawned = cmd.spawn();
        // The command holds the child's ends of the stream: drop them here,
        // so that the read sees end of file once the child's group is done.
        drop(cmd);
        let mut child = spawned.map_err(|e| {
            RpcError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("cannot run {}: {e}", req.command),
            )
        })?;
        let output = Arc::new(Mutex::new(TerminalOutput::with_cap(
            req.output_byte_limit,
            OUTPUT_CAP,
        )));
        let (tx, exit) = watch::channel(None);
        let pgid = child.id();
        let out = Arc::clone(&output);
        tokio::spawn(async move {
            pump(ours, &out).await;
            let status = child.wait().await;
            let (code, signal) = match status {
                Ok(s) => {
                    use std::os::unix::process::ExitStatusExt;
                    (
                        s.code().and_then(|c| u32::try_from(c).ok()),
                        s.signal().map(signal_name),
                    )
                }
                Err(_) => (None, None),
            };
            let mut o = out.lock().unwrap_or_else(PoisonError::into_inner);
            o.exited(code, signal);
            let _ = tx.send(o.exit_status().cloned());
        });
        self.next += 1;
        let id = format!("term-{}", self.next);
        self.open.insert(
            id.clone(),
            Terminal {
                output,
                exit,
                pgid,
                command: req.command.to_string(),
            },
        );
        Ok(id)
    }

    /// `terminal/output`.
    ///
    /// # Errors
    ///
    /// An unknown id.
    pub fn output(&self, id: &str) -> Result<TerminalOutputResponse<'static>, RpcError<'static>> {
        let t = self.open.get(id).ok_or_else(|| not_found(id))?;
        let o = t.output.lock().unwrap_or_else(PoisonError::into_inner);
        let mut response = TerminalOutputResponse::new(o.text().into_owned(), o.truncated());
        response.exit_status = o.exit_status().cloned();
        Ok(response)
    }

    /// `terminal/wait_for_exit`: a future of the exit status, to await
    /// without holding the client.
    ///
    /// # Errors
    ///
    /// An unknown id.
    pub fn wait(
        &self,
        id: &str,
    ) -> Result<
        impl std::future::Future<Output = TerminalExitStatus<'static>> + Send + 'static,
        RpcError<'static>,
    > {
        let mut exit = self.open.get(id).ok_or_else(|| not_found(id))?.exit.clone();
        Ok(async move {
            loop {
                if let Some(status) = exit.borrow_and_update().clone() {
                    return status;
                }
                if exit.changed().await.is_err() {
                    return exit.borrow().clone().unwrap_or_default();
                }
            }
        })
    }

    /// `terminal/kill`: kills the command's whole process group; the
    /// terminal stays, with its output and (soon) its exit status.
    ///
    /// # Errors
    ///
    /// An unknown id.
    pub fn kill(&mut self, id: &str) -> Result<(), RpcError<'static>> {
        let t = self.open.get_mut(id).ok_or_else(|| not_found(id))?;
        if t.exit.borrow().is_none() {
            kill_group(t.pgid);
        }
        Ok(())
    }

    /// `terminal/release`: kills the command if it still runs and forgets
    /// the terminal.
    ///
    /// # Errors
    ///
    /// An unknown id.
    pub fn release(&mut self, id: &str) -> Result<(), RpcError<'static>> {
        self.kill(id)?;
        self.open.remove(id);
        Ok(())
    }

    /// The command of a terminal, for display.
    pub fn command(&self, id: &str) -> Option<&str> {
        self.open.get(id).map(|t| t.command.as_str())
    }

    /// Kills every command still running (cancel, exit).
    pub fn kill_all(&mut self) {
        for t in self.open.values() {
            if t.exit.borrow().is_none() {
                kill_group(t.pgid);
            }
        }
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// One stream for a command's stdout and stderr, as a terminal gives it:
/// our end, then the child's stdout and stderr (the same socket twice).
///
/// With two pipes read side by side, what the command wrote to stderr after
/// its stdout could land first in the output (and a later stdout read push
/// it out of the kept tail); one socket keeps the order the command wrote
/// in, and a character split across two writes is never interleaved with
/// the other stream.
fn output_stream() -> std::io::Result<(tokio::net::UnixStream, Stdio, Stdio)> {
    use std::os::fd::OwnedFd;
    let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
    let theirs_err = theirs.try_clone()?;
    ours.set_nonblocking(true)?;
    let ours = tokio::net::UnixStream::from_std(ours)?;
    Ok((
        ours,
        Stdio::from(OwnedFd::from(theirs)),
        Stdio::from(OwnedFd::from(theirs_err)),
    ))
}

/// Copies the command's output stream into the bounded output.
async fn pump(mut pipe: impl AsyncRead + Unpin, out: &Mutex<TerminalOutput>) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = pipe.read(&mut buf).await {
        if let Some(read) = buf.get(..n) {
            out.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(read);
        }
    }
}

/// SIGKILL to a process group (its leader's pid).
fn kill_group(pgid: Option<u32>) {
    if let Some(pgid) = pgid {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status();
    }
}

fn signal_name(sig: i32) -> String {
    match sig {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        9 => "SIGKILL".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}
