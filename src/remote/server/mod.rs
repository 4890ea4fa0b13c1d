//! The team server's rules as one sans-IO state machine: connections of
//! both transport profiles and their users, the agent processes (one
//! shared, or one per user), flow control, resumable delivery, limits and
//! every error a client sees.
//!
//! The caller owns the sockets, the HTTP server and the processes. It
//! tells the [`Server`] what happened (`handle_*` and the other inputs,
//! each with its `now`) and does what [`poll_action`](Server::poll_action)
//! hands out, until it returns `None`; then it sleeps until
//! [`poll_timeout`](Server::poll_timeout) or the next input.

#[cfg(feature = "v2")]
mod bridge;
mod conn;
mod hashed;
mod http;
mod mcp;
mod oversize;
mod paths;
mod pool;
mod resume;
mod stats;

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use super::resume::Position;
use super::router::{error_answer, AgentLine, MessageKind, Out, Permissions, Router};
use super::transport::{CloseCode, Stream, DEFAULT_MAX_BUFFERED_SESSION_STREAMS};
use super::DEFAULT_RESUME_BUDGET;
use crate::ErrorCode;
#[cfg(test)]
mod tests;

use conn::Conn;
pub use conn::BINARY_REFUSED;
pub use http::{AccessRefusal, HttpHead, HttpRoute};
pub use mcp::{McpLink, McpRefusal, McpRelay, DEFAULT_MCP_TIMEOUT, MAX_MCP_DECLARED};
pub use oversize::HEADER_MAX_MESSAGE;
use pool::Agent;
pub use stats::{Census, Event, Refusal, Stats, MAX_EVENTS};

/// The error answering a request of a user whose agent may not start:
/// as many agents run as the pool allows, each with a connection.
/// `-32012`, in JSON-RPC's range for server errors.
pub const AGENTS_FULL: ErrorCode = ErrorCode(-32012);

/// The notification a client gets when the agent wrote a line longer than
/// the server's limit that was not an answer to one of its requests (an
/// answer becomes that request's error instead): `size` (the bytes seen,
/// at least), `limit`, `sessionId` when the line's first bytes named its
/// session (it goes to that session's user then, on the session's
/// stream), and `id` when the line was a request of the agent (which the
/// server answered with an error). The line itself is gone.
pub const LINE_DROPPED: &str = "_bridge/line_dropped";

/// The notification a client that reattaches a session without
/// positions gets, before the messages the session missed while no client
/// held it, when the budget ([`ServerConfig::replay_bytes`]) dropped some
/// of them (`sessionId`, `droppedMessages`, `droppedBytes`): always the
/// oldest, or a single message larger than the budget.
pub const REPLAY_DROPPED: &str = "_bridge/replay_dropped";

/// The default longest silence on an SSE stream
/// ([`ServerConfig::sse_keep_alive`]): 15 seconds, half the time a
/// client waits before it counts a silent connection as dead.
pub const DEFAULT_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One connection of a [`Server`], numbered by it from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u64);

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "connection {}", self.0)
    }
}

/// One start of an agent process, numbered by the [`Server`] from 1: its
/// lines, its exit and what to write to it name it, so nothing of a
/// stopped process reaches the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentRun(pub u64);

impl fmt::Display for AgentRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent run {}", self.0)
    }
}

/// How a connection ended, as its caller saw it: what
/// [`Server::handle_closed`] keeps for the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The client said goodbye: a WebSocket close frame, a Streamable
    /// HTTP `DELETE`. Nothing is kept for a resume: the connection's
    /// sessions are released at once (cancelled, as for any client that
    /// leaves) and its agent's idle clock starts.
    Clean,
    /// The connection broke without a goodbye (the TCP connection
    /// dropped, no close frame). A WebSocket client that asked for
    /// positions is held for
    /// [`DEFAULT_RESUME_GRACE`](super::DEFAULT_RESUME_GRACE), for its
    /// next connection to resume; any other leaves as on a clean close.
    Broken,
}

/// Who a connection is, and what they may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The user; `None` for the one user of a server without a token file
    /// (open on loopback, or one token).
    pub user: Option<String>,
    /// What they may do.
    pub permissions: Permissions,
}

impl Principal {
    /// The one user of a server without users: every permission.
    pub const fn anonymous() -> Self {
        Self {
            user: None,
            permissions: Permissions::READ_WRITE,
        }
    }

    /// A named user with `permissions`.
    pub fn user(name: &str, permissions: Permissions) -> Self {
        Self {
            user: Some(name.to_owned()),
            permissions,
        }
    }
}

/// The transport profile of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// One WebSocket: text messages both ways.
    WebSocket,
    /// Streamable HTTP: `POST`s in, SSE streams out.
    StreamableHttp,
}

/// Which agent process serves a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolMode {
    /// One agent process for every connection, started with the server.
    #[default]
    Shared,
    /// One agent process per user (the anonymous user counts as one),
    /// started on the user's first message, stopped once idle, at most
    /// [`ServerConfig::max_agents`] at once.
    PerUser,
}

/// The limits and timings a [`Server`] runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Shared agent or one per user.
    pub pool: PoolMode,
    /// Per user: most agent processes at once (past it, the one without a
    /// connection the longest is stopped to make room).
    pub max_agents: usize,
    /// Per user: an agent with no connection and no message either way
    /// for this long is stopped.
    pub agent_idle: Duration,
    /// First restart delay after an agent exits; doubles up to
    /// `backoff_max`, back to this after a run of 30 s.
    pub backoff_min: Duration,
    /// Longest restart delay.
    pub backoff_max: Duration,
    /// Longest wait of a client's message for its starting agent.
    pub start_wait: Duration,
    /// Largest message from a client (bytes); one of at most twice this
    /// is answered before its connection closes.
    pub max_message: usize,
    /// Most connections of one user. A detached connection (its client
    /// gone, waiting to be resumed) does not count; as many of those are
    /// kept again per user, the oldest leaving past that.
    pub max_user_connections: usize,
    /// Most sessions one user holds open.
    pub max_user_sessions: usize,
    /// Most bytes queued, unsent, for all of one user's connections; past
    /// it the connection a message is for is closed.
    pub max_user_buffered_bytes: usize,
    /// Streamable HTTP: most bytes queued for one connection before the
    /// stall clock runs.
    pub max_buffered_bytes: usize,
    /// A connection whose queue does not move for this long (a WebSocket
    /// with anything queued, a Streamable HTTP connection past
    /// `max_buffered_bytes`) is closed.
    pub slow_client: Duration,
    /// The one budget of resumable delivery, in bytes of message text
    /// ([`DEFAULT_RESUME_BUDGET`]; 0: nothing kept): each stream's log (a
    /// connection's, a session's, on either profile), and what a session
    /// whose client left keeps for the client that reattaches it.
    pub replay_bytes: usize,
    /// Streamable HTTP: most connections at once.
    pub max_http_connections: usize,
    /// Streamable HTTP: most session streams of one connection.
    pub max_session_streams: usize,
    /// Streamable HTTP: a connection with no connection stream open and no
    /// request for this long is closed. By default the resume grace
    /// ([`DEFAULT_RESUME_GRACE`](super::DEFAULT_RESUME_GRACE), 120 s), so
    /// a client away as long as a WebSocket client may be still resumes
    /// its streams.
    pub http_idle: Duration,
    /// Streamable HTTP: the longest silence on an SSE stream; the caller
    /// writes a comment (a keep-alive) after this long without an event,
    /// so a client notices a dead connection even when no FIN arrives.
    pub sse_keep_alive: Duration,
    /// WebSocket: a connection that sends no message for this long after
    /// it opened is closed.
    pub first_message: Duration,
    /// The key of the routers' records of evicted sessions, and the seed
    /// of the server's tables keyed by user names (16 bytes from the
    /// operating system's random source: users whose names a peer picks
    /// cannot aim them at one place of those tables).
    pub hash_key: [u8; 16],
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            pool: PoolMode::Shared,
            max_agents: 16,
            agent_idle: Duration::from_secs(600),
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(10),
            start_wait: Duration::from_secs(10),
            max_message: crate::limits::DEFAULT_MAX_LINE_LEN,
            max_user_connections: super::DEFAULT_MAX_USER_CONNECTIONS,
            max_user_sessions: super::DEFAULT_MAX_USER_SESSIONS,
            max_user_buffered_bytes: 64 * 1024 * 1024,
            max_buffered_bytes: super::DEFAULT_MAX_BACKLOG_BYTES,
            slow_client: Duration::from_secs(30),
            replay_bytes: DEFAULT_RESUME_BUDGET,
            max_http_connections: 256,
            max_session_streams: DEFAULT_MAX_BUFFERED_SESSION_STREAMS,
            http_idle: super::DEFAULT_RESUME_GRACE,
            sse_keep_alive: DEFAULT_SSE_KEEP_ALIVE,
            first_message: Duration::from_secs(10),
            hash_key: [0; 16],
        }
    }
}

impl ServerConfig {
    /// The defaults: a shared agent, the limits of the module docs.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Why an agent process is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartReason {
    /// The shared agent, with the server.
    Shared,
    /// A user's first message (or first since their agent stopped).
    FirstMessage,
    /// The previous run exited; the backoff is over.
    Restart,
}

/// Why an agent process is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// No connection and no message for [`ServerConfig::agent_idle`].
    Idle,
    /// Another user's agent needed its place ([`ServerConfig::max_agents`]).
    Evicted,
    /// Its user was removed from the users the server knows
    /// ([`Server::handle_user_removed`]).
    UserRemoved,
}

impl StopReason {
    /// `idle`, `evicted` or `user removed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Evicted => "evicted",
            Self::UserRemoved => "user removed",
        }
    }
}

/// What the caller must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Queue one JSON-RPC message (no `\n`) for a connection: a WebSocket
    /// text message, or one event on a Streamable HTTP stream. Report it
    /// with [`Server::handle_sent`] once written (or dropped).
    Send {
        /// The connection.
        to: ConnectionId,
        /// Its stream (Streamable HTTP; a WebSocket has one).
        stream: Stream,
        /// The message.
        text: String,
        /// Its position on its stream, for a Streamable HTTP stream: the
        /// SSE event's `id:` (a reader that reopens the stream with it in
        /// `Last-Event-ID` gets what followed). `None` on WebSocket (a
        /// client that asked for positions finds them in the message's
        /// `_meta`).
        position: Option<Position>,
    },
    /// A reader took a Streamable HTTP stream (a `GET`,
    /// [`Server::handle_stream_opened`]): what is queued for `stream`, and
    /// what is queued after this action, goes to reader `reader`; an older
    /// reader of the stream ends.
    ///
    /// With `replace` (the `GET` resumed the stream, `Last-Event-ID`),
    /// what is still queued for the stream is dropped first (each of it is
    /// among these events or known to the client; report its bytes with
    /// [`Server::handle_sent`]) and these events, oldest first, each with
    /// its position (the SSE `id:`), are queued in its place. They are
    /// not counted as queued (no `handle_sent` for them). Everything the
    /// core queues for the stream after this action comes after them.
    Read {
        /// The connection.
        to: ConnectionId,
        /// The stream.
        stream: Stream,
        /// The reader ([`OpenedStream::reader`]).
        reader: u64,
        /// What the stream's queue becomes, when the reader resumed it.
        replace: Option<Vec<(Position, String)>>,
    },
    /// The answer to a Streamable HTTP connection's `initialize`: the body
    /// of the `POST` that opened it (not counted as queued).
    Answer {
        /// The connection.
        to: ConnectionId,
        /// The message.
        text: String,
    },
    /// Close a connection: send `last` (when there is one) and a close
    /// frame with `code` and `reason` (a Streamable HTTP connection is
    /// dropped, its streams ended). The server has forgotten it already.
    Close {
        /// The connection.
        conn: ConnectionId,
        /// The WebSocket close code.
        code: CloseCode,
        /// Why, for the close frame and the log.
        reason: String,
        /// A last message to send before the close frame.
        last: Option<String>,
    },
    /// Write one line (with its `\n`) to an agent's stdin: its
    /// [`parts`](AgentLine::parts), in order.
    WriteAgent {
        /// The process.
        run: AgentRun,
        /// The line.
        line: AgentLine,
    },
    /// Start an agent process; report [`Server::handle_agent_started`],
    /// or [`Server::handle_agent_exited`] if it could not start.
    StartAgent {
        /// The run the process is.
        run: AgentRun,
        /// The user it serves alone (`None`: the shared agent, or the
        /// anonymous user's own).
        user: Option<String>,
        /// Why.
        why: StartReason,
    },
    /// Stop an agent process (and everything it started); report
    /// [`Server::handle_agent_exited`] once it is gone.
    StopAgent {
        /// The process.
        run: AgentRun,
        /// Why.
        why: StopReason,
    },
    /// Write one line (with its `\n`) to an MCP relay the agent started
    /// ([`Server::handle_mcp_open`]).
    WriteMcp {
        /// The relay.
        link: McpLink,
        /// The MCP message.
        line: Vec<u8>,
    },
    /// Close an MCP relay: the server has forgotten it.
    CloseMcp {
        /// The relay.
        link: McpLink,
        /// Why, for the log.
        reason: String,
    },
    /// One line for the server's log.
    Log(String),
}

/// A Streamable HTTP request refused: its HTTP status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRefusal {
    /// The status.
    pub status: u16,
    /// The body: a JSON-RPC error when `json`, else plain text.
    pub body: String,
    /// Whether `body` is JSON.
    pub json: bool,
}

impl HttpRefusal {
    fn text(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            body: body.into(),
            json: false,
        }
    }
}

/// A Streamable HTTP stream a `GET` opened
/// ([`Server::handle_stream_opened`]); what its queue holds and becomes
/// comes as [`Action::Read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedStream {
    /// The stream.
    pub stream: Stream,
    /// Which reader of the connection's streams the `GET` is, numbered
    /// by the server from 1: its [`Action::Read`] names it, and
    /// [`Server::handle_stream_closed`] gives it back.
    pub reader: u64,
}

/// What a Streamable HTTP `POST` became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostOutcome {
    /// An `initialize` opened this connection: answer the `POST` with the
    /// [`Action::Answer`] for it (and the connection's id in
    /// `Acp-Connection-Id`).
    Opened(ConnectionId),
    /// Taken: answer `202`.
    Accepted,
}

/// The team server's core, sans-IO: the caller owns the sockets, the HTTP
/// server and the processes; it tells the server what happened
/// (`handle_*` and the other inputs, each with its `now`) and does what
/// [`poll_action`](Self::poll_action) hands out, until it returns `None`;
/// then it sleeps until [`poll_timeout`](Self::poll_timeout) or the next
/// input.
///
/// ```
/// use std::time::Duration;
/// use acp_codec::remote::{Action, Principal, Server, ServerConfig, Stream};
///
/// let t = Duration::ZERO;
/// // One shared agent (the default pool): started with the server.
/// let mut server = Server::new(ServerConfig::new(), t);
/// let Some(Action::StartAgent { run, .. }) = server.poll_action() else { panic!() };
/// server.handle_agent_started(t, run, 4242); // the process is up
///
/// // A WebSocket connection of the one anonymous user sends its first message.
/// // Before its `101`: named from 16 random bytes (its `Acp-Connection-Id`).
/// let (conn, _name) = server.open_websocket(t, &Principal::anonymous(), Some([1; 16])).unwrap();
/// server.handle_text(t, conn, r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}"#);
/// // It goes to the agent with the server's own id...
/// let Some(Action::WriteAgent { line, .. }) = server.poll_action() else { panic!() };
/// assert!(line.to_vec().starts_with(br#"{"jsonrpc":"2.0","id":0,"method":"initialize""#));
/// // ...and the agent's answer back to the connection with the client's.
/// server.handle_agent_line(t, run, r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#);
/// let Some(Action::Send { to, stream, text, .. }) = server.poll_action() else { panic!() };
/// assert_eq!((to, stream), (conn, Stream::Connection));
/// assert_eq!(text, r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1}}"#);
/// // Written to the socket: the connection's queue is empty again.
/// server.handle_sent(t, conn, text.len());
/// assert_eq!(server.user_queued(None), 0);
/// ```
///
/// # The rules it adds to the router's
///
/// - Connections: a WebSocket's first message within
///   [`ServerConfig::first_message`], through the transport's gate
///   (else closed `1002`), each message at most
///   [`ServerConfig::max_message`] (a larger one is answered when it is a
///   request, then closed `1009`); a Streamable HTTP `POST` through
///   the transport's checks, a `GET` of a stream only for a
///   session of the connection's user, one reader per stream, the
///   connection closed after [`ServerConfig::http_idle`] with no reader of
///   its connection stream and no request.
/// - Flow control: what is queued for a connection counts against its
///   [`Backlog`](super::Backlog) (a WebSocket whose queue does not move
///   for [`ServerConfig::slow_client`] is closed, a Streamable HTTP
///   connection past [`ServerConfig::max_buffered_bytes`] likewise) and
///   against its user's [`ServerConfig::max_user_buffered_bytes`] (past
///   it the connection a message is for closes); the caller reports what
///   it wrote with [`Server::handle_sent`].
/// - The agent pool ([`PoolMode`]): one shared agent, or one per user,
///   started on the user's first message (messages wait up to
///   [`ServerConfig::start_wait`]), stopped after
///   [`ServerConfig::agent_idle`] without a connection or a message, at
///   most [`ServerConfig::max_agents`] (past it the one without a
///   connection the longest is evicted; when each has one, requests get
///   [`AGENTS_FULL`]); a run that exits is restarted after a backoff
///   doubling from [`ServerConfig::backoff_min`] to
///   [`ServerConfig::backoff_max`]. Sessions stay their user's across
///   every stop and restart.
/// - Resumable delivery: every Streamable HTTP event has its position on
///   its stream ([`Action::Send`]'s `position`, the SSE `id:`), kept
///   within [`ServerConfig::replay_bytes`] per stream; a `GET` with
///   `Last-Event-ID` gets what followed
///   ([`handle_stream_opened`](Self::handle_stream_opened): `400` for a
///   malformed one, `409` for a gap or a position never reached); a
///   request `POST`ed again runs once. A WebSocket client that asks for
///   positions (`_meta["acp-codec/resume"]` in `initialize`) is detached
///   for 120 s when its connection breaks ([`Ending::Broken`]) and
///   resumed by the next connection that names it; a clean close
///   ([`Ending::Clean`]) keeps nothing.
/// - Where a session lives: a per-user pool's user whose room the caller
///   named ([`Server::set_session_dir`]) has every session's `cwd` told
///   to their agent as that directory, and the paths between the agent
///   and each client moved between it and the client's own `cwd` (on
///   whole path components; `fs/*` paths, `terminal/create`'s `cwd`,
///   tool-call locations and diff paths one way, the session methods'
///   `cwd` and a prompt's `file://` links the other).
/// - An agent line over the limit: an answer to a client's request
///   becomes that request's error, a request of the agent is answered
///   with an error, and the user whose session it named is told with
///   [`LINE_DROPPED`] (its session, size and the limit; a line naming no
///   session only when the agent's connections are all one user's).
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    conns: BTreeMap<ConnectionId, Conn>,
    /// The agents by their user (`None`: the shared one).
    agents: hashed::Hashed<Option<String>, Agent>,
    /// Each run's agent (its place in `agents`).
    runs: BTreeMap<AgentRun, hashed::Slot>,
    /// Bytes queued per user (`None`: the anonymous user).
    /// (A user's entry is made when their first connection opens and is
    /// kept, at zero when nothing is queued: each connection holds its
    /// place.)
    queued: hashed::Hashed<Option<String>, usize>,
    /// The connections by their `Acp-Connection-Id`.
    names: BTreeMap<String, ConnectionId>,
    next_conn: u64,
    next_run: u64,
    actions: VecDeque<Action>,
    /// The router's output for an agent line, kept empty between lines.
    outs: Vec<Out>,
    /// Resumable delivery's logs and detached connections.
    resume: resume::Resumes,
    stats: Stats,
    events: stats::Events,
    /// MCP over ACP, bridged for agents that only start stdio servers.
    mcp: mcp::Bridges,
}

impl Server {
    /// A server with `config`; a shared pool's agent is started at once
    /// (the first [`Action::StartAgent`]).
    pub fn new(config: ServerConfig, now: Duration) -> Self {
        let hash_key = config.hash_key;
        let mut server = Self {
            config,
            conns: BTreeMap::new(),
            agents: hashed::Hashed::new(hash_key),
            runs: BTreeMap::new(),
            queued: hashed::Hashed::new(hash_key),
            names: BTreeMap::new(),
            next_conn: 1,
            next_run: 1,
            actions: VecDeque::new(),
            outs: Vec::new(),
            resume: resume::Resumes::default(),
            stats: Stats::default(),
            events: stats::Events::new(),
            mcp: mcp::Bridges::default(),
        };
        if server.config.pool == PoolMode::Shared {
            server.agent_entry(None, now);
            server.start(&None, StartReason::Shared, now);
        }
        server
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The next thing to do, until `None`.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// How many connections are open.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// How many bytes are queued, unsent, for `user`'s connections.
    pub fn user_queued(&self, user: Option<&str>) -> usize {
        self.queued
            .get(&user.map(ToOwned::to_owned))
            .copied()
            .unwrap_or(0)
    }

    /// The router of the agent serving `user` (for inspection).
    pub fn router_of(&self, user: Option<&str>) -> Option<&Router> {
        self.agents.get(&self.agent_key(user)).map(|a| &a.router)
    }

    fn log(&mut self, text: String) {
        self.actions.push_back(Action::Log(text));
    }

    /// Which agent serves `user`.
    fn agent_key(&self, user: Option<&str>) -> Option<String> {
        match self.config.pool {
            PoolMode::Shared => None,
            PoolMode::PerUser => user.map(ToOwned::to_owned),
        }
    }

    /// `conn` is gone, as `ending` says: its sessions stay its user's,
    /// its agent is told, and the agent's idle clock starts once no
    /// connection is left; a broken connection of a client that resumes
    /// is held for it instead ([`Ending::Broken`]).
    pub fn handle_closed(&mut self, now: Duration, conn: ConnectionId, ending: Ending) {
        if ending == Ending::Broken && self.resume_detach(now, conn) {
            return;
        }
        self.resume_forget(conn);
        self.mcp_forget(conn);
        let Some(c) = self.unplug(now, conn) else {
            return;
        };
        self.disconnect(&c.agent, c.client, now);
    }

    /// `user` is no longer one of the server's users (a re-read token
    /// file): their connections become read-only from their next message,
    /// and their own agent, when one runs ([`PoolMode::PerUser`]), is
    /// stopped ([`StopReason::UserRemoved`]), with every process it
    /// started. A read-only connection of theirs that is still open may
    /// start it again.
    pub fn handle_user_removed(&mut self, now: Duration, user: &str) {
        self.set_permissions(user, Permissions::READ_ONLY);
        if self.config.pool == PoolMode::PerUser {
            self.retire_user(user, now);
        }
    }

    /// Closes `conn` now, from the server's side.
    fn close(&mut self, now: Duration, conn: ConnectionId, code: CloseCode, reason: String) {
        self.close_with(now, conn, code, reason, None);
    }

    fn close_with(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        code: CloseCode,
        reason: String,
        last: Option<String>,
    ) {
        if !self.conns.contains_key(&conn) {
            return;
        }
        self.actions.push_back(Action::Close {
            conn,
            code,
            reason,
            last,
        });
        // The client said no goodbye: one that resumes may come back.
        self.handle_closed(now, conn, Ending::Broken);
    }

    /// Turns a router's output into actions: client messages through flow
    /// control, agent lines to the agent's current run, what a left
    /// session missed into its log (and out of it to the client that
    /// reattaches it).
    fn dispatch(&mut self, key: &Option<String>, outs: Vec<Out>, now: Duration) {
        for out in outs {
            match out {
                Out::Agent(line) => {
                    if let Some(run) = self.agents.get(key).and_then(Agent::live_run) {
                        self.actions.push_back(Action::WriteAgent { run, line });
                    }
                }
                Out::Client {
                    to,
                    stream,
                    text,
                    kind,
                } => {
                    // The agent looked up once: its paths, its prompts
                    // waiting for a first message, its client's connection.
                    let Some(agent) = self.agents.get_mut(key) else {
                        continue;
                    };
                    let (text, first, conn) = agent.toward_client(
                        to,
                        &stream,
                        text,
                        now,
                        &mut crate::remote::transport::Passed::default(),
                    );
                    self.send_to_client(now, conn, stream, text, kind, first);
                }
                Out::InitializeRefused { to } => {
                    let conn = self
                        .agents
                        .get(key)
                        .and_then(|a| a.clients.get(&to).copied());
                    if let Some(conn) = conn {
                        self.reopen(conn);
                    }
                }
                Out::Missed { session, text } => self.keep_missed(key, session, &text),
                Out::Reattached { to, session } => {
                    let missed = self.take_missed(key, to, &session);
                    self.dispatch(key, missed, now);
                }
                Out::Forget { session } => self.forget_missed(key, session),
            }
        }
    }

    /// [`Out::Client`]'s second half, once its agent has had its say
    /// ([`Agent::toward_client`](pool::Agent::toward_client)): the
    /// session's first update noted, the message sent to its client's
    /// connection (when it has one).
    fn send_to_client(
        &mut self,
        now: Duration,
        conn: Option<ConnectionId>,
        stream: Stream,
        text: String,
        kind: MessageKind,
        first: Option<stats::Event>,
    ) {
        if let Some(event) = first {
            self.event(event);
        }
        if let Some(conn) = conn {
            self.send(now, conn, stream, text, kind);
        }
    }

    /// Queues `text` for `conn`, unless its user's queue is full (then
    /// `conn` closes) or it answers the connection's `initialize`.
    ///
    /// `kind` is what the router (or the rule that wrote the message)
    /// knows of it: every stage below reads it, none reads `text` again
    /// to learn it.
    fn send(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        stream: Stream,
        text: String,
        kind: MessageKind,
    ) {
        let text = self.mcp_outbound(conn, text, &kind);
        #[cfg(feature = "v2")]
        let Some(text) = self.bridge_outbound(now, conn, &stream, text, &kind) else {
            return;
        };
        self.send_translated(now, conn, stream, text, kind);
    }

    /// [`send`](Self::send) past the bridge (a message in its client's
    /// version).
    fn send_translated(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        stream: Stream,
        text: String,
        kind: MessageKind,
    ) {
        let Some(text) = self.within_client_limit(now, conn, &stream, text, &kind) else {
            return;
        };
        self.send_within_limit(now, conn, stream, text, &kind);
    }

    /// [`send`](Self::send) of a message known to be within its client's
    /// limit.
    fn send_within_limit(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        stream: Stream,
        text: String,
        kind: &MessageKind,
    ) {
        // The opening `POST`'s body: no stream, no position.
        if self.answers_initialize(conn, kind) {
            let text = self.http_initialize_answer(conn, text);
            self.actions.push_back(Action::Answer { to: conn, text });
            return;
        }
        let Some((text, position)) = self.resume_outbound(conn, &stream, text, kind) else {
            return;
        };
        self.send_raw(now, conn, stream, text, position);
    }

    /// The next deadline: call [`handle_timeout`](Self::handle_timeout)
    /// then (or at the next input, whichever comes first).
    pub fn poll_timeout(&self) -> Option<Duration> {
        let conns = self.conns.values().filter_map(|c| c.deadline(&self.config));
        let agents = self
            .agents
            .values()
            .filter_map(|a| a.deadline(&self.config));
        conns
            .chain(agents)
            .chain(self.resume_deadline())
            .chain(self.mcp.deadline())
            .min()
    }

    /// Time passed: closes stalled and idle connections, restarts agents
    /// whose backoff is over, stops idle ones, lets messages that waited
    /// too long for a starting agent go on.
    pub fn handle_timeout(&mut self, now: Duration) {
        let due: Vec<(ConnectionId, Option<Refusal>, String)> = self
            .conns
            .iter()
            .filter_map(|(id, c)| {
                c.expired(now, &self.config)
                    .map(|(refusal, why)| (*id, refusal, why))
            })
            .collect();
        for (conn, refusal, why) in due {
            self.close(now, conn, CloseCode::POLICY_VIOLATION, why);
            if let Some(refusal) = refusal {
                self.refused(refusal, Some(conn));
            }
        }
        let mut keys: Vec<Option<String>> = self.agents.keys().cloned().collect();
        // By name, as the agents have always been visited.
        keys.sort_unstable();
        for key in keys {
            self.agent_timeout(&key, now);
        }
        self.resume_timeout(now);
        self.mcp_timeout(now);
    }
}

/// `bytes` of the queued bytes of the user at `slot` (of `queued`, the
/// server's count) were sent or dropped (a user with none left keeps
/// their entry, at zero).
fn release(queued: &mut hashed::Hashed<Option<String>, usize>, slot: hashed::Slot, bytes: usize) {
    if let Some((_, q)) = queued.at_mut(slot) {
        *q = q.saturating_sub(bytes);
    }
}

/// [`LINE_DROPPED`]: a message of `size` bytes over `limit` was dropped
/// (the request it was, or answered, and its session, when known).
fn line_dropped(
    size: usize,
    limit: usize,
    id: Option<&crate::acp::RequestId<'_>>,
    session: Option<&str>,
) -> String {
    let mut params = serde_json::json!({"size": size, "limit": limit});
    if let Some(obj) = params.as_object_mut() {
        if let Some(id) = id {
            obj.insert("id".into(), serde_json::to_value(id).unwrap_or_default());
        }
        if let Some(session) = session {
            obj.insert("sessionId".into(), session.into());
        }
    }
    alloc::string::ToString::to_string(
        &serde_json::json!({"jsonrpc": "2.0", "method": LINE_DROPPED, "params": params}),
    )
}
