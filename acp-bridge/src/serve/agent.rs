//! An agent process: spawned, its stdout split into lines for the core,
//! its stderr appended to its log, stopped when the core says so. When to
//! start, restart and stop is the core's decision.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_codec::remote::{AgentLine, AgentRun};

use crate::limits::{self, AgentCgroup};
use crate::room::UserDirs;
use crate::supervisor;
use crate::users::UserRoom;
use acp_codec::codec::RawLineCodec;
use acp_codec::framing::{FrameError, RawItem};
use acp_codec::Limits;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, Notify};
use tokio_util::codec::{Decoder, FramedRead};

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
    super::mcp::prepare(&driver, user.as_deref());
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
    // Named here, made by the agent's launcher, removed here.
    let (cgroup, applied) = AgentCgroup::plan(limits);
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
        // Written before the run's first byte on stderr: a user's log
        // holds the runs that said something there, each after its start
        // line (every start is in the bridge's log above).
        let mut log = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.hold(format!("[bridge] {started}\n").into_bytes());
    }
    let (tx, rx) = mpsc::unbounded_channel::<AgentLine>();
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
    // the agent's processes see it (symbolic links resolved, as far as it
    // exists: its launcher may not have made it yet).
    let session_dir = dirs.as_ref().and_then(|d| {
        let dir = crate::room::resolve_beneath(&processes.state_dir, &d.work)?;
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
/// room (`user`: a user's own agent, its directories made private to the
/// bridge's OS user by the launcher when missing) and confinement from
/// `--agent-*`, `--confine` and `--unconfined`; killing the child ends the
/// agent and every process it started.
async fn spawn(
    cfg: &Processes,
    user: Option<(&UserDirs, &UserRoom)>,
    limits: &limits::Applied,
) -> Result<Spawned, String> {
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

/// Writes the core's lines to the agent's stdin, each part as it is: a
/// part lent from a client's message (a long prompt's params) is written
/// from the client's own bytes, never gathered into one buffer first.
async fn write_stdin(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<AgentLine>) {
    while let Some(line) = rx.recv().await {
        for part in line.parts() {
            if !part.is_empty() && stdin.write_all(part).await.is_err() {
                return;
            }
        }
    }
}

/// The most an agent's stderr is read at a time.
const STDERR_CHUNK: usize = 16 * 1024;

/// Appends what the agent writes on stderr to its log. The buffer starts
/// empty and doubles (up to [`STDERR_CHUNK`]) whenever a read fills it:
/// an agent that writes little there (most do) holds little for it.
async fn log_stderr(log: Arc<Mutex<Log>>, mut stderr: ChildStderr) {
    let mut chunk = Vec::new();
    while let Ok(n) = stderr.read_buf(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut log = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(&chunk);
        drop(log);
        let full = n == chunk.capacity();
        chunk.clear();
        if full && chunk.capacity() < STDERR_CHUNK {
            chunk.reserve_exact(chunk.capacity().saturating_mul(2).min(STDERR_CHUNK));
        }
    }
}

/// The read buffer of an agent's stdout: what it starts with and what it
/// is brought back to after a long line. Small: the buffer moves forward
/// through its allocation as lines are taken off its front, so every
/// agent ends up with all of it resident (300 agents: 300 times this),
/// and a pipe gives at most 64 KiB a read anyway.
const READ_BUFFER: usize = 16 * 1024;

/// Splits stdout into lines (each at most `--max-message-bytes`) with the
/// crate's tokio-util codec and hands them to the core, until stdout
/// closes.
///
/// A long line grows the read buffer to its size, at the start of an
/// allocation of its own ([`StdoutCodec`]), and the line's bytes are
/// split off that buffer's front. Before the core gets such a line, the
/// bytes after it move to a fresh buffer of [`READ_BUFFER`], so that the
/// line alone holds the large allocation and becomes the core's `String`
/// without a copy (`RawLine::into_text_checked_from`: only what
/// [`StdoutCodec`] had not checked as it came is checked then, and, a
/// splitter's line, the core does not search it for a newline); the core
/// (`handle_agent_line` with that text) frees it once routed, before the
/// router's copy is stamped and queued.
/// So a long line is held twice at most, and the core's copy is the only
/// one left when the connection's writer starts on it; no long line stays
/// resident in the reader.
async fn read_stdout(driver: &Arc<Driver>, run: AgentRun, stdout: ChildStdout) {
    let limits = Limits::default().with_max_line_len(driver.processes.max_line);
    // Pass-through splitting: the line's bytes as read, UTF-8 checked once
    // below, where they become the core's text (the splitting codec would
    // check them too, a second pass over every line); as a splitter's
    // line, the core does not search it for a newline again.
    let codec = StdoutCodec::new(RawLineCodec::with_limits(&limits));
    let mut lines = FramedRead::with_capacity(stdout, codec, READ_BUFFER);
    // An `Err` from the stream is an I/O error: stdout is gone.
    while let Some(Ok(item)) = lines.next().await {
        renew_after(lines.read_buffer_mut(), item.as_bytes().len());
        match item {
            RawItem::Line(line) if line.is_blank() => {}
            // A long line's bytes become the core's string without a copy
            // (they hold their allocation alone now), and the core frees
            // it once routed; a short one is lent (its bytes share the
            // read buffer).
            RawItem::Line(line) if line.content().len() > READ_BUFFER => {
                // What the codec checked as the line came (the content's
                // prefix is taken: a `\r` cut from its `\n` by a read was
                // checked too).
                let checked = lines.decoder().item_checked();
                // SAFETY: the line's first `checked` bytes are UTF-8 ending
                // at a character's end: `StdoutCodec` checked those very
                // bytes as they were read (`item_checked`).
                match unsafe { line.into_text_checked_from(checked) } {
                    Ok(text) => driver.with(move |s, now| s.handle_agent_line(now, run, text)),
                    Err(_) => driver.log_line("agent line skipped: not utf-8"),
                }
            }
            RawItem::Line(line) => match line.text() {
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
        rewind_if_drained(lines.read_buffer_mut());
    }
}

/// Once a read buffer is drained (its lines taken, and dropped), moves its
/// start back to the front of its allocation, with no copy and no
/// allocation: the next read lands where the last one did, so an agent
/// that writes short lines keeps a page or two of the buffer resident
/// instead of all of it (the buffer would otherwise walk through its whole
/// allocation before wrapping).
fn rewind_if_drained(buffer: &mut BytesMut) {
    if buffer.is_empty() {
        // Asking for more than is left past the start makes `bytes`
        // reclaim the front; `try_reclaim` never allocates.
        let _ = buffer.try_reclaim(buffer.capacity() + 1);
    }
}

/// After an item of `taken` bytes, when it was long or the buffer grew
/// large, moves what a read buffer holds into a fresh one of
/// [`READ_BUFFER`] bytes (more if it holds more), so that the allocation a
/// long line grew is freed once that line is.
fn renew_after(buffer: &mut BytesMut, taken: usize) {
    if buffer.capacity() <= 2 * READ_BUFFER && taken <= READ_BUFFER {
        return;
    }
    let mut fresh = BytesMut::with_capacity(READ_BUFFER.max(buffer.len()));
    fresh.extend_from_slice(buffer);
    *buffer = fresh;
}

/// The crate's pass-through line codec, with a long line kept at the
/// start of an allocation of its own, and checked as UTF-8 as it arrives.
///
/// The read buffer moves forward through its allocation as lines are
/// split off its front, and growing keeps that offset: a long line would
/// sit some way into its allocation, and turning its bytes into a `Vec`
/// (then the core's `String`) would move all of them down to the start,
/// a copy of the whole line. So once the line being read passes
/// [`READ_BUFFER`] bytes, what the buffer holds (that much, and one read
/// more at most) moves to a fresh allocation, once per line, where the
/// line then grows from the start: the conversion moves its bytes onto
/// themselves, which the C library's `memmove` skips.
///
/// From then on, each read's bytes are checked as UTF-8 right after the
/// read, while they are in the cache ([`item_checked`](Self::item_checked) says how
/// far): a line of megabytes is not read from memory once more at its end
/// for the check alone.
struct StdoutCodec {
    inner: RawLineCodec,
    /// The line being read was moved to an allocation of its own.
    moved: bool,
    /// How many bytes at the front of the buffer (the line being read,
    /// once `moved`) are known to be UTF-8, ending at a character's end.
    checked: usize,
    /// Those bytes hold a sequence that is not UTF-8 (no use checking on).
    broken: bool,
    /// What `checked` was when the last item came out.
    last_checked: usize,
}

impl StdoutCodec {
    fn new(inner: RawLineCodec) -> Self {
        Self {
            inner,
            moved: false,
            checked: 0,
            broken: false,
            last_checked: 0,
        }
    }

    /// How many bytes at the start of the last item are known to be UTF-8
    /// (a prefix ending at a character's end; zero when nothing was
    /// checked, as for a line that came whole in one read).
    fn item_checked(&self) -> usize {
        self.last_checked
    }

    /// Checks the bytes of the line being read past those known good.
    fn check_on(&mut self, buffer: &[u8]) {
        if self.broken {
            return;
        }
        let Some(rest) = buffer.get(self.checked..) else {
            return;
        };
        match simdutf8::compat::from_utf8(rest) {
            Ok(_) => self.checked = buffer.len(),
            // A character cut by the read: checked again with its rest.
            Err(e) if e.error_len().is_none() => self.checked += e.valid_up_to(),
            Err(_) => self.broken = true,
        }
    }
}

impl Decoder for StdoutCodec {
    type Item = RawItem<Bytes>;
    type Error = std::io::Error;

    fn decode(&mut self, buffer: &mut BytesMut) -> std::io::Result<Option<Self::Item>> {
        let item = self.inner.decode(buffer)?;
        if item.is_some() {
            self.item_out();
        } else if buffer.len() > READ_BUFFER {
            // No line ends in the buffer: it holds one line being read.
            if !self.moved {
                let mut fresh = BytesMut::with_capacity(buffer.len().saturating_mul(2));
                fresh.extend_from_slice(buffer);
                *buffer = fresh;
                self.moved = true;
            }
            self.check_on(buffer);
        }
        Ok(item)
    }

    fn decode_eof(&mut self, buffer: &mut BytesMut) -> std::io::Result<Option<Self::Item>> {
        let item = self.inner.decode_eof(buffer)?;
        if item.is_some() {
            self.item_out();
        }
        Ok(item)
    }
}

impl StdoutCodec {
    /// An item came off the front of the buffer: what was checked was its
    /// start (a line over the limit comes out in pieces, and the front is
    /// the next line's after each, so nothing carries over).
    fn item_out(&mut self) {
        self.last_checked = if self.broken { 0 } else { self.checked };
        self.moved = false;
        self.checked = 0;
        self.broken = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long line fed in reads of every size, with characters of two to
    /// four bytes cut by the reads: what the codec checked as the line
    /// came is a prefix ending at a character's end, and most of the
    /// line; the string made from it is the line's (the standard check as
    /// the oracle). A line with a bad byte anywhere is refused, whether the
    /// codec met the byte or the final check does.
    #[test]
    fn a_long_line_is_checked_as_it_comes() {
        let unit = "ab\u{e9}\u{20ac}\u{1f600}z";
        let long = unit.repeat(READ_BUFFER / 4);
        for piece in [1, 2, 3, 7, 4096, 5000, 65536] {
            for bad_at in [None, Some(10), Some(long.len() - 3)] {
                let mut line = long.clone().into_bytes();
                if let Some(at) = bad_at {
                    line[at] = 0xff;
                }
                let mut input = line.clone();
                input.extend_from_slice(b"\r\nnext\n");
                let limits = Limits::default().with_max_line_len(1 << 20);
                let mut codec = StdoutCodec::new(RawLineCodec::with_limits(&limits));
                let mut buffer = BytesMut::new();
                let mut got = Vec::new();
                for chunk in input.chunks(piece) {
                    buffer.extend_from_slice(chunk);
                    while let Some(item) = codec.decode(&mut buffer).unwrap() {
                        let RawItem::Line(l) = item else { panic!() };
                        let len = l.content().len();
                        let checked = codec.item_checked().min(len);
                        let bytes = l.content().to_vec();
                        // All but the last read, and a character it cut.
                        if len > READ_BUFFER + piece && bad_at.is_none() {
                            assert!(
                                checked + piece + 4 >= len,
                                "piece {piece}: {checked} of {len}"
                            );
                        }
                        assert!(std::str::from_utf8(&bytes[..checked]).is_ok());
                        let oracle = String::from_utf8(bytes).ok();
                        // SAFETY: just asserted: the content's first
                        // `checked` bytes are UTF-8 (the codec's prefix is
                        // handed on as it is, past the content or not).
                        let text = unsafe { l.into_text_checked_from(codec.item_checked()) };
                        got.push(text.ok().map(|t| t.into_cow().into_owned()));
                        assert_eq!(
                            got.last().unwrap(),
                            &oracle,
                            "piece {piece}, bad at {bad_at:?}"
                        );
                    }
                }
                assert_eq!(got.len(), 2);
                assert_eq!(got[0].is_some(), bad_at.is_none());
                assert_eq!(got[1].as_deref(), Some("next"));
            }
        }
    }

    /// Feeds `input` in pieces of `piece` bytes, taking every item after
    /// each (as `FramedRead` does); the lines' contents, and whether each
    /// one became a `Vec` in place (no copy), with the read buffer renewed
    /// after a long line as `read_stdout` does.
    fn lines(
        codec: &mut impl Decoder<Item = RawItem<Bytes>>,
        input: &[u8],
    ) -> Vec<(Vec<u8>, bool)> {
        let mut buffer = BytesMut::with_capacity(READ_BUFFER);
        let mut out = Vec::new();
        for piece in input.chunks(5000) {
            buffer.extend_from_slice(piece);
            while let Some(item) = codec.decode(&mut buffer).ok().flatten() {
                let RawItem::Line(line) = item else {
                    panic!("only lines within the limit here");
                };
                renew_after(&mut buffer, line.as_bytes().len());
                let content = line.content().to_vec();
                let at = line.content().as_ptr();
                let whole = Vec::from(line.into_bytes());
                out.push((content, whole.as_ptr() == at));
            }
        }
        out
    }

    #[test]
    fn a_drained_read_buffer_reads_again_at_its_front() {
        let mut buffer = BytesMut::with_capacity(READ_BUFFER);
        let front = buffer.as_ptr();
        for n in 0..1000 {
            buffer.extend_from_slice(format!("line {n}\n").as_bytes());
            let line = buffer.split_to(buffer.len()).freeze();
            drop(line);
            rewind_if_drained(&mut buffer);
            assert_eq!(buffer.as_ptr(), front, "line {n}");
            assert!(buffer.capacity() >= READ_BUFFER);
        }
        // A buffer still holding part of a line is left where it is.
        buffer.extend_from_slice(b"whole\npart");
        let whole = buffer.split_to(6);
        rewind_if_drained(&mut buffer);
        assert_eq!(&buffer[..], b"part");
        drop(whole);
    }

    #[test]
    fn stdout_lines_are_the_input_lines_and_a_long_one_is_not_copied() {
        let long = "x".repeat(READ_BUFFER * 5 + 123);
        let input = format!("first\n{long}\nsecond line\n{long}y\nlast\n");
        let limits = Limits::default().with_max_line_len(1 << 20);
        let got = lines(
            &mut StdoutCodec::new(RawLineCodec::with_limits(&limits)),
            input.as_bytes(),
        );
        // The oracle: the input split at its newlines, nothing shared with the codec.
        let want: Vec<&[u8]> = input
            .as_bytes()
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let contents: Vec<&[u8]> = got.iter().map(|(c, _)| c.as_slice()).collect();
        assert_eq!(contents, want);
        let in_place: Vec<bool> = got.iter().map(|&(_, p)| p).collect();
        assert!(
            in_place[1],
            "a long line after a short one is converted in place"
        );
        assert!(in_place[3], "so is the next one");
        // The codec alone leaves a long line where the buffer had moved to:
        // the conversion copies it (what the wrapper is for).
        let plain = lines(&mut RawLineCodec::with_limits(&limits), input.as_bytes());
        assert_eq!(
            plain.iter().map(|(c, _)| c.as_slice()).collect::<Vec<_>>(),
            want
        );
        assert!(!plain[1].1);
    }
}
