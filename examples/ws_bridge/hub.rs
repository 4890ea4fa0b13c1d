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
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, Notify};

use crate::server::Access;
use acp_codec::remote::{ClientId, Out, ReplayBuffer, Router, Stream};

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
    /// Streamable HTTP: most session streams of one connection.
    pub max_session_streams: usize,
    /// Streamable HTTP: a connection with no open connection stream and no
    /// request for this long is closed.
    pub http_idle: Duration,
}

/// One JSON-RPC message for a client, as text, with the Streamable HTTP
/// stream it belongs on (a WebSocket client ignores it).
pub type ToClient = (Stream, String);

/// Where the hub sends a client's messages, and how it tells the client's
/// transport that the client was too slow to take one.
struct ClientTx {
    tx: mpsc::Sender<ToClient>,
    kick: Arc<Notify>,
}

pub(crate) struct State {
    pub(crate) router: Router,
    pub(crate) agent_tx: Option<mpsc::Sender<Vec<u8>>>,
    clients: HashMap<ClientId, ClientTx>,
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
    Client(mpsc::Sender<ToClient>, Arc<Notify>, ToClient),
}

impl Shared {
    /// A hub for `config`, with the log opened (and rotated if past its
    /// limit).
    pub fn new(config: Config) -> Arc<Self> {
        let router = match config.replay_bytes {
            0 => Router::new(),
            n => Router::new().with_replay(ReplayBuffer::new(n)),
        };
        Arc::new(Self {
            state: Mutex::new(State {
                router,
                agent_tx: None,
                clients: HashMap::new(),
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

    /// A new client whose messages go to `tx`; `kick` is notified when the
    /// client takes longer than `--slow-client-ms` to accept one.
    pub fn join(&self, tx: mpsc::Sender<ToClient>, kick: Arc<Notify>) -> ClientId {
        let mut st = self.lock();
        let id = st.router.connect();
        st.clients.insert(id, ClientTx { tx, kick });
        id
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
                Send::Client(tx, kick, text) => {
                    match tokio::time::timeout(self.config.slow_client, tx.send(text)).await {
                        Ok(_) => {}
                        Err(_) => kick.notify_one(),
                    }
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
        eprintln!("ws_bridge: {text}");
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
                    sends.push(Send::Client(ct.tx.clone(), ct.kick.clone(), (stream, text)));
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
