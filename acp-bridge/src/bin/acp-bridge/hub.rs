//! The hub: the agents and their clients. Each agent process has its own
//! sans-IO router, which decides who gets what; the hub holds each client's
//! outbound channel and delivers the router's output under a per-client
//! time limit. Both transports (the WebSocket profile and Streamable HTTP)
//! plug in the same way: `join` with a channel, `input` for each message,
//! `leave` at the end.
//!
//! Without a token file every client shares one agent process, started
//! with the bridge. With a token file each user gets their own agent
//! process, with its own router, `HOME`, working directory and log: started
//! on the user's first message, stopped after `--agent-idle-secs` without a
//! connection or a message, at most `--max-agents` at once (past it, the
//! agent without a connection for the longest is stopped to make room).

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch, Notify};

use crate::log::Log;
use crate::server::Access;
use acp_bridge::users::Identity;
use acp_codec::acp::{encode_error, Message, RequestId, RpcError};
use acp_codec::remote::{
    answer_stream, session_field, ClientId, ConnectError, Out, Permissions, ReplayBuffer, Router,
    Stream,
};
use acp_codec::ErrorCode;

/// Name of the shared agent's log file (and of the bridge's events).
pub const LOG_NAME: &str = "gemini-acp.log";
/// A log is rotated to `.old` past this size: 2 MiB.
pub const LOG_LIMIT: u64 = 2 * 1024 * 1024;
/// The error answering a request of a user whose agent cannot start
/// because `--max-agents` others run, each with a connection: `-32012`,
/// in JSON-RPC's range for server errors.
pub const AGENTS_FULL: ErrorCode = ErrorCode(-32012);
/// Longest wait of a client's message for its starting agent; past it the
/// message goes on and the router refuses it (the agent is not running).
const START_WAIT: Duration = Duration::from_secs(10);

/// Everything the bridge runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub bind: SocketAddr,
    /// Token and Origin checks.
    pub access: Access,
    /// The caps and deadlines on connections not yet authenticated.
    pub door: crate::door::DoorLimits,
    /// Largest WebSocket message from a client, and largest agent line
    /// relayed (bytes).
    pub max_message: usize,
    /// TLS (`wss://`, `https://…/health`), when set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The agent command: program and arguments.
    pub agent: Vec<String>,
    /// Directory of `gemini-acp.log` and of each user agent's log.
    pub log_dir: PathBuf,
    /// With a token file: the directory of each user agent's `HOME` and
    /// working directory.
    pub state_dir: PathBuf,
    /// With a token file: a user agent with no connection and no message
    /// either way for this long is stopped.
    pub agent_idle: Duration,
    /// With a token file: most user agent processes at once.
    pub max_agents: usize,
    /// How agents are roomed and confined (`--agent-*`, `--confine`).
    pub rooms: acp_bridge::room::Rooms,
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

/// Where the hub sends a client's messages, and how it closes the client.
struct ClientTx {
    tx: mpsc::UnboundedSender<ToClient>,
    kick: Arc<Kick>,
}

/// A client of the hub: the bridge-wide handle of one connection, naming
/// its agent and its id in that agent's router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Member(u64);

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client {}", self.0)
    }
}

pub(crate) struct State {
    pub(crate) router: Router,
    pub(crate) agent_tx: Option<mpsc::Sender<Vec<u8>>>,
    clients: HashMap<ClientId, ClientTx>,
    /// The last connection, client message or agent line.
    last_active: Instant,
    /// A process runs (or is being restarted) for this agent: for a user
    /// agent, it holds one of `--max-agents`.
    running: bool,
    /// Which run of a supervisor this is: each start takes the next, so a
    /// supervisor whose agent was stopped from outside (evicted) sees it
    /// is no longer current.
    run: u64,
}

/// One agent process (started, restarted, stopped) and its router.
pub struct Agent {
    /// The user it serves alone; empty for the agent every client shares.
    pub user: String,
    state: Mutex<State>,
    /// Where its stderr goes.
    pub(crate) log: Arc<Mutex<Log>>,
    /// Bytes queued for its clients.
    meter: Arc<Meter>,
    /// Whether its process came up (or failed to start) since it was last
    /// started: a client's first message waits for it.
    pub(crate) up: watch::Sender<bool>,
    /// Told when the agent is evicted, to stop its process now rather than
    /// at its supervisor's next idle check.
    pub(crate) evicted: Notify,
}

impl Agent {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How log lines name it: `agent` or `agent of ana`.
    pub fn name(&self) -> String {
        if self.user.is_empty() {
            "agent".to_owned()
        } else {
            format!("agent of {}", self.user)
        }
    }

    /// Whether it is a user's own agent.
    pub fn is_dedicated(&self) -> bool {
        !self.user.is_empty()
    }
}

struct Agents {
    by_user: HashMap<String, Arc<Agent>>,
    /// User agents with a process (running, starting or restarting).
    running: usize,
}

/// State shared by the agent supervisors and the connections.
pub struct Shared {
    /// The configuration the bridge runs with.
    pub config: Config,
    epoch: Instant,
    /// `gemini-acp.log`: the bridge's events, and the shared agent's stderr.
    pub(crate) log: Arc<Mutex<Log>>,
    agents: Mutex<Agents>,
    members: Mutex<HashMap<Member, (Arc<Agent>, ClientId)>>,
    next_member: AtomicU64,
    /// The key under which each router remembers evicted sessions.
    hash_key: [u8; 16],
}

/// Stops counting an agent's process (`why` is what its router tells the
/// sessions' owners).
fn retire(agents: &mut Agents, st: &mut State, why: &str) {
    st.running = false;
    st.agent_tx = None;
    let mut outs = Vec::new();
    st.router.agent_exited(why, Duration::ZERO, &mut outs);
    agents.running = agents.running.saturating_sub(1);
}

/// The running user agent other than `besides` with no connection whose
/// last activity is the oldest.
fn least_recently_active(agents: &Agents, besides: &Arc<Agent>) -> Option<Arc<Agent>> {
    agents
        .by_user
        .values()
        .filter(|a| a.is_dedicated() && !Arc::ptr_eq(a, besides))
        .filter_map(|a| {
            let st = a.lock();
            (st.running && st.clients.is_empty()).then(|| (st.last_active, a.clone()))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, a)| a)
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
    ///
    /// # Errors
    ///
    /// The operating system's random source failing.
    pub fn new(config: Config) -> Result<Arc<Self>, String> {
        let mut hash_key = [0u8; 16];
        getrandom::fill(&mut hash_key).map_err(|e| format!("no random source: {e}"))?;
        let log = Log::open(&config.log_dir.join(LOG_NAME), config.log_limit);
        Ok(Arc::new(Self {
            log: Arc::new(Mutex::new(log)),
            agents: Mutex::new(Agents {
                by_user: HashMap::new(),
                running: 0,
            }),
            members: Mutex::new(HashMap::new()),
            next_member: AtomicU64::new(1),
            hash_key,
            config,
            epoch: Instant::now(),
        }))
    }

    /// Whether each user of the token file gets their own agent process.
    pub fn per_user(&self) -> bool {
        self.config.access.users.is_some()
    }

    fn agents(&self) -> MutexGuard<'_, Agents> {
        self.agents
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn members(&self) -> MutexGuard<'_, HashMap<Member, (Arc<Agent>, ClientId)>> {
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// The agent serving `user`: their own (made on first use) when each
    /// user has one, else the shared one.
    fn agent_of(&self, user: &str) -> Arc<Agent> {
        let key = if self.per_user() { user } else { "" };
        let mut agents = self.agents();
        if let Some(a) = agents.by_user.get(key) {
            return a.clone();
        }
        let agent = Arc::new(self.new_agent(key));
        agents.by_user.insert(key.to_owned(), agent.clone());
        agent
    }

    fn new_agent(&self, user: &str) -> Agent {
        let config = &self.config;
        let router = Router::new()
            .with_user_limits(config.max_user_connections, config.max_user_sessions)
            .with_hash_key(self.hash_key);
        let router = if user.is_empty() {
            router
        } else {
            router.with_dedicated_user(user)
        };
        let router = match config.replay_bytes {
            0 => router,
            n => router.with_replay(ReplayBuffer::new(n)),
        };
        let log = if user.is_empty() {
            self.log.clone()
        } else {
            let path = config.log_dir.join(user_log_name(user));
            Arc::new(Mutex::new(Log::open(&path, config.log_limit)))
        };
        Agent {
            user: user.to_owned(),
            state: Mutex::new(State {
                router,
                agent_tx: None,
                clients: HashMap::new(),
                last_active: Instant::now(),
                running: false,
                run: 0,
            }),
            log,
            meter: Meter::new(config.max_user_buffered_bytes),
            up: watch::Sender::new(false),
            evicted: Notify::new(),
        }
    }

    /// Starts the agent every client shares (no token file); the receiver
    /// turns `true` once it is up or failed to start.
    pub fn start_shared_agent(self: &Arc<Self>) -> watch::Receiver<bool> {
        let agent = self.agent_of("");
        let up = agent.up.subscribe();
        let run = {
            let mut st = agent.lock();
            st.running = true;
            st.run
        };
        tokio::spawn(crate::agent::supervise(self.clone(), agent, run));
        up
    }

    /// Makes sure a process runs for the user agent `agent`, starting one
    /// when fewer than `--max-agents` run. At the limit, the agent that
    /// has been without a connection the longest is evicted (stopped, as
    /// when idle) to make room; `false` when every running agent has a
    /// connection.
    fn ensure_running(self: &Arc<Self>, agent: &Arc<Agent>) -> bool {
        let mut agents = self.agents();
        if agent.lock().running {
            return true;
        }
        if agents.running >= self.config.max_agents {
            let Some(victim) = least_recently_active(&agents, agent) else {
                return false;
            };
            retire(&mut agents, &mut victim.lock(), "stopped: evicted");
            victim.evicted.notify_waiters();
            self.log_line(&format!(
                "{} evicted: {} agents run (--max-agents), {}'s starts",
                victim.name(),
                self.config.max_agents,
                agent.user
            ));
        }
        let mut st = agent.lock();
        agents.running += 1;
        st.running = true;
        st.run += 1;
        agent.up.send_replace(false);
        tokio::spawn(crate::agent::supervise(self.clone(), agent.clone(), st.run));
        true
    }

    /// Stops the running agent of `user` (removed from the token file), as
    /// when evicted: its process and every process it started end. `false`
    /// when none ran.
    pub fn stop_user_agent(&self, user: &str) -> bool {
        let mut agents = self.agents();
        let Some(agent) = agents.by_user.get(user).cloned() else {
            return false;
        };
        let mut st = agent.lock();
        if !agent.is_dedicated() || !st.running {
            return false;
        }
        retire(&mut agents, &mut st, "stopped: user removed");
        drop(st);
        agent.evicted.notify_waiters();
        true
    }

    /// Whether `run` is `agent`'s current start (false once it was
    /// evicted).
    pub(crate) fn is_current(&self, agent: &Agent, run: u64) -> bool {
        let st = agent.lock();
        st.running && st.run == run
    }

    /// Whether the supervisor of `run` must stop `agent`'s process: it was
    /// evicted (another run is current, or none), or it is a user agent
    /// that has had no client and no message for `--agent-idle-secs`, now
    /// stopped. Its router stays, and with it who owns which session.
    pub(crate) fn retire_if_idle(&self, agent: &Agent, run: u64) -> Option<&'static str> {
        if !agent.is_dedicated() {
            return None;
        }
        let mut agents = self.agents();
        let mut st = agent.lock();
        if st.run != run || !st.running {
            return Some("evicted");
        }
        if !st.clients.is_empty() || st.last_active.elapsed() < self.config.agent_idle {
            return None;
        }
        retire(&mut agents, &mut st, "stopped: idle");
        Some("idle")
    }

    /// A new client of `who` whose messages go to `tx`; `kick` is told
    /// when its agent's clients hold too many bytes unread (its transport
    /// also uses it when the client takes longer than `--slow-client-ms`
    /// to accept one).
    ///
    /// # Errors
    ///
    /// The router's refusal: no permission, or the user's connection
    /// limit.
    pub fn join(
        &self,
        who: &Identity,
        tx: mpsc::UnboundedSender<ToClient>,
        kick: Arc<Kick>,
    ) -> Result<Member, ConnectError> {
        let agent = self.agent_of(&who.user);
        let id = {
            let mut st = agent.lock();
            let id = if who.user.is_empty() {
                st.router.connect()
            } else {
                st.router.connect_as(&who.user, who.permissions)?
            };
            st.clients.insert(id, ClientTx { tx, kick });
            st.last_active = Instant::now();
            id
        };
        let member = Member(self.next_member.fetch_add(1, Ordering::Relaxed));
        self.members().insert(member, (agent, id));
        Ok(member)
    }

    fn member(&self, member: Member) -> Option<(Arc<Agent>, ClientId)> {
        self.members().get(&member).cloned()
    }

    /// One JSON-RPC message from `member`. A user agent not running yet is
    /// started first (the message waits for it).
    pub async fn input(self: &Arc<Self>, member: Member, text: &str) {
        let Some((agent, client)) = self.member(member) else {
            return;
        };
        if agent.is_dedicated() {
            if !self.ensure_running(&agent) {
                self.refuse_full(&agent, client, text);
                return;
            }
            let mut up = agent.up.subscribe();
            let _ = tokio::time::timeout(START_WAIT, up.wait_for(|up| *up)).await;
        }
        let now = self.now();
        let sends = with_router(&agent, |r, out| r.handle_client(client, text, now, out));
        self.deliver(sends).await;
    }

    /// Answers a request of `client` when its agent may not start: the
    /// bridge runs `--max-agents` already, each with a connection. Other
    /// messages are dropped.
    fn refuse_full(&self, agent: &Agent, client: ClientId, text: &str) {
        let Ok(Message::Request(req)) = Message::decode(text) else {
            return;
        };
        let max = self.config.max_agents;
        let msg = format!(
            "the bridge runs {max} agents, its limit (--max-agents), each with a connection: {}'s agent starts once another user has none",
            agent.user
        );
        let session = session_field(req.params.as_ref()).into_id();
        let stream = answer_stream(&req.method, session.as_deref());
        let reply = error_text(&req.id, AGENTS_FULL, msg);
        let st = agent.lock();
        if let Some(ct) = st.clients.get(&client) {
            let _ = ct.tx.send((stream, reply, Charge::free()));
        }
    }

    /// `member` is gone: its router cancels its sessions and answers the
    /// agent's requests to it.
    pub async fn leave(&self, member: Member) {
        let Some((agent, client)) = self.members().remove(&member) else {
            return;
        };
        let sends = {
            let mut st = agent.lock();
            let mut outs = Vec::new();
            st.router.disconnect(client, &mut outs);
            st.clients.remove(&client);
            st.last_active = Instant::now();
            resolve(&agent, &st, outs)
        };
        self.deliver(sends).await;
    }

    /// The session an agent request waiting on `member` was sent for.
    pub fn request_session(&self, member: Member, id: &RequestId<'_>) -> Option<String> {
        let (agent, client) = self.member(member)?;
        let st = agent.lock();
        st.router.request_session(client, id).map(str::to_owned)
    }

    /// Whether `member` may have a stream for `session`: it holds the
    /// session, or the session is its user's (held by another of their
    /// connections, or left for a reattach). A session its router has not
    /// seen, or another user's, has no stream.
    pub fn may_stream(&self, member: Member, session: &str) -> bool {
        let Some((agent, client)) = self.member(member) else {
            return false;
        };
        let st = agent.lock();
        let router = &st.router;
        router.owner(session) == Some(client)
            || router
                .user_of(client)
                .is_some_and(|user| router.session_user(session) == Some(user))
    }

    /// Sets `user`'s permissions on their connections (a re-read token
    /// file).
    pub fn set_permissions(&self, user: &str, permissions: Permissions) {
        let agents: Vec<Arc<Agent>> = self.agents().by_user.values().cloned().collect();
        for agent in agents {
            agent.lock().router.set_permissions(user, permissions);
        }
    }

    /// One line from `agent`'s stdout, or the error of one too long.
    pub(crate) async fn agent_line(
        &self,
        agent: &Agent,
        line: Result<&str, acp_codec::FrameError>,
    ) {
        let now = self.now();
        let sends = match line {
            Ok(line) => with_router(agent, |r, out| r.handle_agent(line, now, out)),
            Err(e) => {
                self.log_line(&format!("{} line skipped: {e}", agent.name()));
                with_router(agent, |r, out| r.agent_line_too_long(&e, now, out))
            }
        };
        self.deliver(sends).await;
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

/// Runs `f` on `agent`'s router under its lock, marking it active and
/// resolving the output to channels while the lock still holds (so a line
/// meant for one agent process never reaches the next).
fn with_router(agent: &Agent, f: impl FnOnce(&mut Router, &mut Vec<Out>)) -> Vec<Send> {
    let mut st = agent.lock();
    st.last_active = Instant::now();
    let mut outs = Vec::new();
    f(&mut st.router, &mut outs);
    resolve(agent, &st, outs)
}

pub(crate) fn resolve(agent: &Agent, st: &State, outs: Vec<Out>) -> Vec<Send> {
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
                        meter: agent.meter.clone(),
                        message: (stream, text),
                    });
                }
            }
        }
    }
    sends
}

fn error_text(id: &RequestId<'_>, code: ErrorCode, message: String) -> String {
    let mut line = Vec::new();
    // An id and a plain message always encode.
    let _ = encode_error(id, &RpcError::new(code, message), &mut line);
    String::from_utf8_lossy(line.trim_ascii_end()).into_owned()
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
