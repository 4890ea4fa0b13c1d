//! Drives the library's sans-IO team server ([`Server`]): every input goes
//! in under one lock with the time since the bridge started, and the
//! actions it yields are carried out right there (a message onto a
//! connection's channel, a line onto an agent's stdin channel, a process
//! started or stopped, a log line). A timer task calls `handle_timeout` at
//! the core's next deadline. The rules are all in the core; this is the
//! plumbing between it and the sockets and processes.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_codec::remote::{
    Action, AgentLine, AgentRun, CloseCode, ConnectionId, Ending, Event, McpLink, Position,
    Refusal, Server, ServerConfig, Stream,
};
use prometheus_client::metrics::histogram::Histogram;
use tokio::sync::{mpsc, Notify};

use super::log::{Log, Throttle};
use super::metrics::Counts;

/// Name of the shared agent's log file (and of the bridge's events).
pub const LOG_NAME: &str = "gemini-acp.log";
/// A log is rotated to `.old` past this size: 2 MiB.
pub const LOG_LIMIT: u64 = 2 * 1024 * 1024;

/// What a connection's writer is told.
#[derive(Debug)]
pub enum ToConn {
    /// A message for one of its streams.
    Send(Stream, String),
    /// A Streamable HTTP event: a message at its position on its stream
    /// (the SSE `id:`).
    Event(Stream, Position, String),
    /// A Streamable HTTP stream's new reader (`Action::Read`): its queue
    /// goes to reader `reader`, replaced first when `replace` says.
    Read {
        /// The stream.
        stream: Stream,
        /// The reader.
        reader: u64,
        /// What the queue becomes (its messages dropped and reported as
        /// sent; these, not counted, in their place).
        replace: Option<Vec<(Position, String)>>,
    },
    /// The answer to a Streamable HTTP connection's `initialize`.
    Answer(String),
    /// Close it: `last`, then a close frame with `code` and `reason`.
    Close {
        /// The close frame's code.
        code: CloseCode,
        /// The close frame's reason.
        reason: String,
        /// A last message sent before the close frame.
        last: Option<String>,
    },
}

/// A connection's channel, and how to interrupt a write stuck on it.
struct ConnIo {
    tx: mpsc::UnboundedSender<ToConn>,
    kill: Arc<Notify>,
    /// Its peer's address, for the log.
    peer: SocketAddr,
}

/// An agent process's stdin channel, and how to stop it.
pub struct RunIo {
    /// Lines for its stdin, in order.
    pub stdin: mpsc::UnboundedSender<AgentLine>,
    /// Notified to stop it.
    pub stop: Arc<Notify>,
}

/// Where and how agent processes run (the binary's side of the pool).
#[derive(Clone)]
pub struct Processes {
    /// The agent command: program and arguments.
    pub command: Vec<String>,
    /// Directory of `gemini-acp.log` and of each user agent's log.
    pub log_dir: PathBuf,
    /// Directory of each user agent's `HOME` and working directory.
    pub state_dir: PathBuf,
    /// Log rotation size.
    pub log_limit: u64,
    /// Longest agent line relayed (bytes).
    pub max_line: usize,
    /// How agents are roomed and confined (`--agent-*`, `--confine`,
    /// `--unconfined`).
    pub rooms: crate::room::Rooms,
    /// The token file: each user's own paths and environment.
    pub users: Option<Arc<crate::users::TokenFile>>,
}

/// What an MCP relay's writer is told (see [`super::mcp`]).
pub enum ToRelay {
    /// One line (with its `\n`).
    Line(Vec<u8>),
    /// Close it.
    Close,
}

/// A socket's binding, put off until a client first offers an `"acp"`
/// server to its agent.
pub type Bind = Box<dyn FnOnce() + Send>;

/// The MCP relays agents started: which agents' sockets are named (by
/// user; `None`: the shared or anonymous agent), those not bound yet, and
/// each open link's channel.
#[derive(Default)]
pub struct Relays {
    listening: Mutex<HashSet<Option<String>>>,
    unbound: Mutex<HashMap<Option<String>, Bind>>,
    links: Mutex<HashMap<McpLink, mpsc::UnboundedSender<ToRelay>>>,
}

impl Relays {
    /// Whether `user`'s agent's socket is named (bound, or to be bound).
    pub fn listens(&self, user: &Option<String>) -> bool {
        lock(&self.listening).contains(user)
    }

    /// `user`'s agent's socket is named; `bind` binds it, when a client
    /// first offers an `"acp"` server to that agent (`Event::McpOffered`).
    pub fn listening(&self, user: Option<String>, bind: Bind) {
        lock(&self.listening).insert(user.clone());
        lock(&self.unbound).insert(user, bind);
    }

    /// `user`'s agent's socket is not named (it could not be bound).
    pub fn forget(&self, user: &Option<String>) {
        lock(&self.listening).remove(user);
        lock(&self.unbound).remove(user);
    }

    /// Carries out `Event::McpOffered`: binds `agent`'s socket, when not
    /// bound yet.
    fn offered(&self, agent: &Option<String>) {
        let bind = lock(&self.unbound).remove(agent);
        if let Some(bind) = bind {
            bind();
        }
    }

    /// Registers the channel of a link the core just opened.
    pub fn attach(&self, link: McpLink, tx: mpsc::UnboundedSender<ToRelay>) {
        lock(&self.links).insert(link, tx);
    }

    /// Forgets a link whose relay left.
    pub fn detach(&self, link: McpLink) {
        lock(&self.links).remove(&link);
    }

    /// Carries out `Action::WriteMcp`.
    fn write(&self, link: McpLink, line: Vec<u8>) {
        if let Some(tx) = lock(&self.links).get(&link) {
            let _ = tx.send(ToRelay::Line(line));
        }
    }

    /// Carries out `Action::CloseMcp`.
    fn close(&self, link: McpLink) {
        if let Some(tx) = lock(&self.links).remove(&link) {
            let _ = tx.send(ToRelay::Close);
        }
    }
}

/// Starts the process of one agent run: given by `main` (the supervisor
/// lives in [`super::agent`], which uses this module, not the other way round).
pub type Starter = fn(Arc<Driver>, AgentRun, Option<String>);

/// The core and the I/O handles its actions name.
pub struct Driver {
    core: Mutex<Server>,
    epoch: Instant,
    conns: Mutex<HashMap<ConnectionId, ConnIo>>,
    runs: Mutex<HashMap<AgentRun, RunIo>>,
    /// `gemini-acp.log`: the bridge's events, and the shared agent's stderr.
    log: Arc<Mutex<Log>>,
    user_logs: Mutex<HashMap<String, Arc<Mutex<Log>>>>,
    /// Tells the timer the deadline may have moved.
    wake: Notify,
    starter: Starter,
    /// Where and how agent processes run.
    pub processes: Processes,
    /// The counters `/metrics` reads beside the core's.
    pub counts: Counts,
    /// Time from a prompt to its session's first message.
    pub first_update: Histogram,
    /// Refusals' log lines, at most so many a second per reason.
    throttle: Throttle,
    /// The MCP relays agents started (MCP over ACP, bridged).
    pub relays: Relays,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Driver {
    /// A driver for a core with `config`; carries out its first actions
    /// (the shared agent's start) and runs its timer.
    pub fn start(config: ServerConfig, processes: Processes, starter: Starter) -> Arc<Self> {
        let log = Log::open(&processes.log_dir.join(LOG_NAME), processes.log_limit);
        let driver = Arc::new(Self {
            core: Mutex::new(Server::new(config, Duration::ZERO)),
            epoch: Instant::now(),
            conns: Mutex::new(HashMap::new()),
            runs: Mutex::new(HashMap::new()),
            log: Arc::new(Mutex::new(log)),
            user_logs: Mutex::new(HashMap::new()),
            wake: Notify::new(),
            starter,
            processes,
            counts: Counts::default(),
            first_update: super::metrics::first_update_histogram(),
            throttle: Throttle::default(),
            relays: Relays::default(),
        });
        driver.with(|_, _| ());
        tokio::spawn(timer(driver.clone()));
        driver
    }

    /// Runs `f` on the core with the time now, then carries out what it
    /// asked for (under the core's lock, so actions keep their order).
    pub fn with<R>(self: &Arc<Self>, f: impl FnOnce(&mut Server, Duration) -> R) -> R {
        self.with_from(None, f)
    }

    /// [`with`](Self::with) for an input from `peer`: a refusal of a
    /// connection not opened yet is logged with its address.
    pub fn with_from<R>(
        self: &Arc<Self>,
        peer: Option<SocketAddr>,
        f: impl FnOnce(&mut Server, Duration) -> R,
    ) -> R {
        let mut core = lock(&self.core);
        let r = f(&mut core, self.epoch.elapsed());
        // Events first: a refused connection's address is still known
        // before its close is carried out.
        while let Some(event) = core.poll_event() {
            self.note(event, peer);
        }
        while let Some(action) = core.poll_action() {
            self.act(action);
        }
        drop(core);
        self.wake.notify_one();
        r
    }

    /// Registers the channel of a connection the core just opened (no
    /// action can name it before: `open` yields none).
    pub fn attach(
        &self,
        conn: ConnectionId,
        tx: mpsc::UnboundedSender<ToConn>,
        kill: Arc<Notify>,
        peer: SocketAddr,
    ) {
        lock(&self.conns).insert(conn, ConnIo { tx, kill, peer });
    }

    /// Logs (and, for a turn, traces) one of the core's events; `peer`
    /// is the address of the input that caused it, when known.
    fn note(&self, event: Event, peer: Option<SocketAddr>) {
        match event {
            Event::Refused { reason, conn } => {
                let peer = conn
                    .and_then(|c| lock(&self.conns).get(&c).map(|io| io.peer))
                    .or(peer);
                let conn = conn.map_or_else(String::new, |c| c.to_string());
                self.log_refusal(reason, peer, &conn);
            }
            Event::Turn {
                conn,
                session,
                traceparent,
                tracestate,
            } => {
                let span = tracing::info_span!(
                    "turn",
                    conn = conn.0,
                    session = %session,
                    traceparent = traceparent.as_deref(),
                    tracestate = tracestate.as_deref(),
                );
                span.in_scope(|| tracing::info!("prompt"));
            }
            Event::McpOffered { agent } => self.relays.offered(&agent),
            Event::FirstUpdate { session, latency } => {
                self.first_update.observe(latency.as_secs_f64());
                tracing::debug!(%session, latency_ms = latency.as_millis() as u64, "first update");
            }
            _ => {}
        }
    }

    /// A refusal this program decided: counted, and logged (at most so
    /// many lines a second for each reason).
    pub fn refused(&self, reason: Refusal, peer: Option<SocketAddr>, detail: &str) {
        self.counts.refused(reason);
        self.log_refusal(reason, peer, detail);
    }

    fn log_refusal(&self, reason: Refusal, peer: Option<SocketAddr>, detail: &str) {
        let Some(suppressed) = self.throttle.admit(reason) else {
            return;
        };
        let peer = peer.map_or_else(|| "-".to_owned(), |p| p.to_string());
        let line = format!(
            "[bridge] refused ({}) from {peer}: {detail} ({suppressed} like it not logged)\n",
            reason.as_str()
        );
        lock(&self.log).write(line.as_bytes());
        tracing::warn!(
            reason = reason.as_str(),
            peer = %peer,
            suppressed,
            "refused {detail}"
        );
    }

    /// Registers a started agent process.
    pub fn attach_run(&self, run: AgentRun, io: RunIo) {
        lock(&self.runs).insert(run, io);
    }

    /// Forgets an agent process.
    pub fn detach_run(&self, run: AgentRun) {
        lock(&self.runs).remove(&run);
    }

    fn act(self: &Arc<Self>, action: Action) {
        match action {
            Action::Send {
                to,
                stream,
                text,
                position,
            } => {
                self.counts.to_client.add(text.len());
                if let Some(c) = lock(&self.conns).get(&to) {
                    let _ = c.tx.send(match position {
                        Some(at) => ToConn::Event(stream, at, text),
                        None => ToConn::Send(stream, text),
                    });
                }
            }
            Action::Read {
                to,
                stream,
                reader,
                replace,
            } => {
                if let Some(c) = lock(&self.conns).get(&to) {
                    let _ = c.tx.send(ToConn::Read {
                        stream,
                        reader,
                        replace,
                    });
                }
            }
            Action::Answer { to, text } => {
                self.counts.to_client.add(text.len());
                if let Some(c) = lock(&self.conns).get(&to) {
                    let _ = c.tx.send(ToConn::Answer(text));
                }
            }
            Action::Close {
                conn,
                code,
                reason,
                last,
            } => {
                if let Some(c) = lock(&self.conns).remove(&conn) {
                    let _ = c.tx.send(ToConn::Close { code, reason, last });
                    c.kill.notify_one();
                }
            }
            Action::WriteAgent { run, line } => {
                self.counts.to_agent.add(line.len());
                if let Some(r) = lock(&self.runs).get(&run) {
                    let _ = r.stdin.send(line);
                }
            }
            Action::StartAgent { run, user, why } => {
                let _ = why;
                (self.starter)(self.clone(), run, user);
            }
            Action::StopAgent { run, .. } => {
                if let Some(r) = lock(&self.runs).get(&run) {
                    r.stop.notify_one();
                }
            }
            Action::WriteMcp { link, line } => self.relays.write(link, line),
            Action::CloseMcp { link, reason } => {
                self.log_line(&format!("{link} closed: {reason}"));
                self.relays.close(link);
            }
            Action::Log(text) => self.log_line(&text),
        }
    }

    /// A connection is gone, as `ending` says (its peer said goodbye,
    /// or it broke).
    pub fn closed(self: &Arc<Self>, conn: ConnectionId, ending: Ending) {
        lock(&self.conns).remove(&conn);
        self.with(|s, now| s.handle_closed(now, conn, ending));
    }

    /// `conn` was deleted (the core closed it already): its writer ends.
    pub fn deleted(&self, conn: ConnectionId) {
        if let Some(c) = lock(&self.conns).remove(&conn) {
            let _ = c.tx.send(ToConn::Close {
                code: CloseCode::NORMAL,
                reason: "deleted".to_owned(),
                last: None,
            });
        }
    }

    /// Writes one bridge event to the log file and, through `tracing`,
    /// to stderr.
    pub fn log_line(&self, text: &str) {
        lock(&self.log).write(format!("[bridge] {text}\n").as_bytes());
        tracing::info!("{text}");
    }

    /// The log of `user`'s agent (`None`: the shared log); a user's is
    /// made at its first write ([`Log::lazy`]).
    pub fn agent_log(&self, user: Option<&str>) -> Arc<Mutex<Log>> {
        let Some(user) = user else {
            return self.log.clone();
        };
        lock(&self.user_logs)
            .entry(user.to_owned())
            .or_insert_with(|| {
                let path = self.processes.log_dir.join(user_log_name(user));
                Arc::new(Mutex::new(Log::lazy(&path, self.processes.log_limit)))
            })
            .clone()
    }
}

impl super::metrics::Source for Driver {
    fn snapshot(&self) -> (acp_codec::remote::Stats, acp_codec::remote::Census) {
        let core = lock(&self.core);
        (core.stats().clone(), core.census())
    }

    fn counts(&self) -> &Counts {
        &self.counts
    }
}

/// How long the timer lets inputs gather before it asks the core for its
/// next deadline again: `poll_timeout` looks at every connection and
/// agent, so asking after each input made a busy server's cost grow with
/// the square of its users (47% of its CPU at 300 users). The core's
/// deadlines are seconds apart; one is met at most this much late.
const TIMER_GATHER: Duration = Duration::from_millis(50);

/// Calls the core's `handle_timeout` at each deadline it asks for.
async fn timer(driver: Arc<Driver>) {
    loop {
        let next = lock(&driver.core).poll_timeout();
        let sleep = match next {
            Some(at) => at.saturating_sub(driver.epoch.elapsed()),
            None => Duration::from_secs(3600),
        };
        tokio::select! {
            biased;
            () = tokio::time::sleep(sleep) => {
                driver.with(|s, now| s.handle_timeout(now));
            }
            () = driver.wake.notified() => {
                tokio::time::sleep(TIMER_GATHER.min(sleep)).await;
            }
        }
    }
}

/// A user's name as one file name component: ASCII letters, digits, `-`
/// and `_` as they are, every other byte (and a leading `.`) as `%XX`.
pub fn file_component(user: &str) -> String {
    let mut out = String::with_capacity(user.len());
    for (i, b) in user.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0);
        if plain {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The log file of `user`'s agent: `gemini-acp.USER.log`.
pub fn user_log_name(user: &str) -> String {
    format!("gemini-acp.{}.log", file_component(user))
}

/// The `HOME` and working directory of `user`'s agent under `state_dir`:
/// `USER/home` and `USER/work`.
pub fn user_dirs(state_dir: &std::path::Path, user: &str) -> (PathBuf, PathBuf) {
    let base = state_dir.join(file_component(user));
    (base.join("home"), base.join("work"))
}
