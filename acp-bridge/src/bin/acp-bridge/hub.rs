//! The hub: one agent shared by many clients. The sans-IO router decides
//! who gets what; the hub holds each client's outbound channel and delivers
//! the router's output under a per-client time limit. Both transports (the
//! WebSocket profile and Streamable HTTP) plug in the same way: `join` with
//! a channel, `input` for each message, `leave` at the end.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, Notify};

use crate::server::Access;
use acp_bridge::users::Identity;
use acp_codec::remote::{ClientId, ConnectError, Out, ReplayBuffer, Router, Stream};

/// Name of the agent's log file.
pub const LOG_NAME: &str = "gemini-acp.log";
/// The log is rotated to `.old` past this size: 2 MiB.
pub const LOG_LIMIT: u64 = 2 * 1024 * 1024;

/// Everything the bridge runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub bind: SocketAddr,
    /// Token and Origin checks.
    pub access: Access,
    /// Largest WebSocket message from a client, and largest agent line
    /// relayed (bytes).
    pub max_message: usize,
    /// TLS (`wss://`, `https://…/health`), when set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The agent command: program and arguments.
    pub agent: Vec<String>,
    /// Directory of `gemini-acp.log`.
    pub log_dir: PathBuf,
    /// Log rotation size.
    pub log_limit: u64,
    /// First restart delay; doubles up to `backoff_max`.
    pub backoff_min: Duration,
    /// Longest restart delay.
    pub backoff_max: Duration,
    /// A client that takes longer than this to accept one message is
    /// disconnected (so it cannot stall the others).
    pub slow_client: Duration,
    /// Streamable HTTP: most connections at once.
    pub max_http_connections: usize,
    /// Streamable HTTP: most bytes queued for one connection's SSE streams
    /// before the bridge waits for its client to read (and, past
    /// `slow_client`, drops it).
    pub max_buffered_bytes: usize,
    /// Bytes kept per session whose client left, replayed to the client
    /// that reattaches it (0: none).
    pub replay_bytes: usize,
    /// Most connections of one user of the token file.
    pub max_user_connections: usize,
    /// Most sessions one user holds open.
    pub max_user_sessions: usize,
    /// Most bytes queued, unsent, for all of one user's connections; past
    /// it the connection a message is for is closed.
    pub max_user_buffered_bytes: usize,
    /// Streamable HTTP: most session streams of one connection.
    pub max_session_streams: usize,
    /// Streamable HTTP: a connection with no open connection stream and no
    /// request for this long is closed.
    pub http_idle: Duration,
}

/// One JSON-RPC message for a client, as text, with the Streamable HTTP
/// stream it belongs on (a WebSocket client ignores it), and its charge
/// to its user's buffered bytes (released when the message is dropped:
/// sent, or discarded with its connection).
pub type ToClient = (Stream, String, Charge);

/// Bytes queued for one user's connections, against a limit.
#[derive(Debug)]
pub struct Meter {
    bytes: AtomicUsize,
    limit: usize,
}

impl Meter {
    fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            bytes: AtomicUsize::new(0),
            limit,
        })
    }

    /// Charges `n` bytes, unless that would pass the limit with something
    /// already queued (one message always fits, however large).
    fn charge(self: &Arc<Self>, n: usize) -> Option<Charge> {
        let mut now = self.bytes.load(Ordering::Relaxed);
        loop {
            if now != 0 && now.saturating_add(n) > self.limit {
                return None;
            }
            match self.bytes.compare_exchange_weak(
                now,
                now.saturating_add(n),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Some(Charge {
                        meter: Some(self.clone()),
                        bytes: n,
                    })
                }
                Err(seen) => now = seen,
            }
        }
    }
}

/// A message's share of its user's [`Meter`], given back on drop.
#[derive(Debug)]
pub struct Charge {
    meter: Option<Arc<Meter>>,
    bytes: usize,
}

impl Charge {
    /// For messages the bridge itself answers with (not counted).
    pub fn free() -> Self {
        Self {
            meter: None,
            bytes: 0,
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if let Some(m) = &self.meter {
            m.bytes.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

/// How the hub tells a client's transport to close it, and why.
#[derive(Debug, Default)]
pub struct Kick {
    notify: Notify,
    reason: Mutex<Option<String>>,
}

impl Kick {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Asks for the close; the first reason given stays.
    pub fn kick(&self, reason: &str) {
        let mut r = self
            .reason
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        r.get_or_insert_with(|| reason.to_owned());
        self.notify.notify_one();
    }

    /// Resolves once a close is asked for.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }

    /// Why the close was asked for.
    pub fn reason(&self) -> String {
        self.reason
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .unwrap_or_else(|| "closed by the bridge".to_owned())
    }
}

/// Where the hub sends a client's messages, how it closes the client, and
/// its user's meter.
struct ClientTx {
    tx: mpsc::UnboundedSender<ToClient>,
    kick: Arc<Kick>,
    meter: Arc<Meter>,
}

pub(crate) struct State {
    pub(crate) router: Router,
    pub(crate) agent_tx: Option<mpsc::Sender<Vec<u8>>>,
    clients: HashMap<ClientId, ClientTx>,
    meters: HashMap<String, Arc<Meter>>,
}

/// State shared by the agent supervisor and the connections.
pub struct Shared {
    state: Mutex<State>,
    /// The configuration the bridge runs with.
    pub config: Config,
    epoch: Instant,
    pub(crate) log: Mutex<Log>,
}

pub(crate) enum Send {
    Agent(mpsc::Sender<Vec<u8>>, Vec<u8>),
    Client {
        tx: mpsc::UnboundedSender<ToClient>,
        kick: Arc<Kick>,
        meter: Arc<Meter>,
        message: (Stream, String),
    },
}

impl Shared {
    /// A hub for `config`, with the log opened (and rotated if past its
    /// limit).
    pub fn new(config: Config) -> Arc<Self> {
        let router =
            Router::new().with_user_limits(config.max_user_connections, config.max_user_sessions);
        let router = match config.replay_bytes {
            0 => router,
            n => router.with_replay(ReplayBuffer::new(n)),
        };
        Arc::new(Self {
            state: Mutex::new(State {
                router,
                agent_tx: None,
                clients: HashMap::new(),
                meters: HashMap::new(),
            }),
            log: Mutex::new(Log::open(&config.log_dir, config.log_limit)),
            config,
            epoch: Instant::now(),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// Whether `who` may open one more connection now (checked again by
    /// [`join`](Self::join)), so a refusal can be an HTTP status.
    pub fn may_join(&self, who: &Identity) -> Result<(), ConnectError> {
        if who.user.is_empty() {
            return Ok(());
        }
        if !who.permissions.read() {
            return Err(ConnectError::NotPermitted);
        }
        let limit = self.config.max_user_connections;
        if self.lock().router.user_connections(&who.user) >= limit {
            return Err(ConnectError::TooManyConnections { limit });
        }
        Ok(())
    }

    /// A new client of `who` whose messages go to `tx`; `kick` is told
    /// when its user holds too many bytes unread (its transport also uses
    /// it when the client takes longer than `--slow-client-ms` to accept
    /// one).
    pub fn join(
        &self,
        who: &Identity,
        tx: mpsc::UnboundedSender<ToClient>,
        kick: Arc<Kick>,
    ) -> Result<ClientId, ConnectError> {
        let mut st = self.lock();
        let id = if who.user.is_empty() {
            st.router.connect()
        } else {
            st.router.connect_as(&who.user, who.permissions)?
        };
        let limit = self.config.max_user_buffered_bytes;
        let meter = st
            .meters
            .entry(who.user.clone())
            .or_insert_with(|| Meter::new(limit))
            .clone();
        st.clients.insert(id, ClientTx { tx, kick, meter });
        Ok(id)
    }

    /// One JSON-RPC message from `client`.
    pub async fn input(&self, client: ClientId, text: &str) {
        let now = self.now();
        let sends = self.with_router(|r, out| r.handle_client(client, text, now, out));
        self.deliver(sends).await;
    }

    /// `client` is gone: the router cancels its sessions and answers the
    /// agent's requests to it.
    pub async fn leave(&self, client: ClientId) {
        let sends = self.with_router(|r, out| r.disconnect(client, out));
        self.lock().clients.remove(&client);
        self.deliver(sends).await;
    }

    /// One line from the agent's stdout, or the error of one too long.
    pub(crate) async fn agent_line(&self, line: Result<&str, acp_codec::FrameError>) {
        let now = self.now();
        let sends = match line {
            Ok(line) => self.with_router(|r, out| r.handle_agent(line, now, out)),
            Err(e) => {
                self.log_line(&format!("agent line skipped: {e}"));
                self.with_router(|r, out| r.agent_line_too_long(&e, now, out))
            }
        };
        self.deliver(sends).await;
    }

    /// Runs `f` on the router under the lock, resolving its output to
    /// channels while the lock still holds (so a line meant for one agent
    /// process never reaches the next).
    fn with_router(&self, f: impl FnOnce(&mut Router, &mut Vec<Out>)) -> Vec<Send> {
        let mut st = self.lock();
        let mut outs = Vec::new();
        f(&mut st.router, &mut outs);
        resolve(&st, outs)
    }

    pub(crate) async fn deliver(&self, sends: Vec<Send>) {
        for s in sends {
            match s {
                Send::Agent(tx, line) => {
                    // A closed channel means the agent died: the router has
                    // answered the request already.
                    let _ = tx.send(line).await;
                }
                Send::Client {
                    tx,
                    kick,
                    meter,
                    message: (stream, text),
                } => {
                    let Some(charge) = meter.charge(text.len()) else {
                        kick.kick(&format!(
                            "this user's connections hold more than {} bytes unread (--max-user-buffered-bytes)",
                            meter.limit
                        ));
                        continue;
                    };
                    // Never waits: a client that does not read fills its
                    // user's meter and is closed, nobody else waits on it.
                    // A closed channel: the client is leaving.
                    let _ = tx.send((stream, text, charge));
                }
            }
        }
    }

    /// Writes one bridge event to the log and to stderr.
    pub fn log_line(&self, text: &str) {
        let mut log = self
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(format!("[bridge] {text}\n").as_bytes());
        eprintln!("acp-bridge: {text}");
    }
}

pub(crate) fn resolve(st: &State, outs: Vec<Out>) -> Vec<Send> {
    let mut sends = Vec::with_capacity(outs.len());
    for o in outs {
        match o {
            Out::Agent(line) => {
                if let Some(tx) = &st.agent_tx {
                    sends.push(Send::Agent(tx.clone(), line));
                }
            }
            Out::Client { to, stream, text } => {
                if let Some(ct) = st.clients.get(&to) {
                    sends.push(Send::Client {
                        tx: ct.tx.clone(),
                        kick: ct.kick.clone(),
                        meter: ct.meter.clone(),
                        message: (stream, text),
                    });
                }
            }
        }
    }
    sends
}

/// `gemini-acp.log`, rotated to `gemini-acp.log.old` past the limit, at
/// startup and while running.
pub struct Log {
    path: PathBuf,
    limit: u64,
    file: Option<File>,
    size: u64,
}

impl Log {
    /// Opens (rotating first if the file is already past the limit).
    pub fn open(dir: &std::path::Path, limit: u64) -> Self {
        let mut log = Self {
            path: dir.join(LOG_NAME),
            limit,
            file: None,
            size: 0,
        };
        let size = fs::metadata(&log.path).map(|m| m.len()).unwrap_or(0);
        if size > limit {
            log.rotate();
        } else {
            log.reopen();
        }
        log
    }

    fn reopen(&mut self) {
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .ok();
        self.size = fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
    }

    fn rotate(&mut self) {
        self.file = None;
        let mut old = self.path.clone().into_os_string();
        old.push(".old");
        let _ = fs::rename(&self.path, old);
        self.reopen();
    }

    /// Appends bytes, rotating once the file is past the limit.
    pub fn write(&mut self, bytes: &[u8]) {
        if let Some(f) = &mut self.file {
            if f.write_all(bytes).is_ok() {
                self.size = self.size.saturating_add(bytes.len() as u64);
            }
        }
        if self.size > self.limit {
            self.rotate();
        }
    }
}
