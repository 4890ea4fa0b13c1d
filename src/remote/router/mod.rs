//! The multiplexer: many client connections, of one or many users, share
//! one agent process.

mod agent;
mod client;
mod dialect;
mod evicted;
mod line;
mod sessions;
mod users;

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use serde::Deserialize;

use super::transport::{session_field, Stream};
use crate::acp::{encode_error, RawJson, RequestId, RpcError, Tracker};
use crate::tally::Tally;
use crate::ErrorCode;
use sessions::Sessions;

pub(crate) use client::Inbound;
pub use line::{AgentLine, ClientText};
pub use users::{
    ConnectError, Permissions, UnknownPermission, DEFAULT_MAX_USER_CONNECTIONS,
    DEFAULT_MAX_USER_SESSIONS, FORBIDDEN, USER_LIMIT,
};

/// A client connection of a [`Router`], numbered by it from 1.
///
/// The bridge maps its own handles (a WebSocket task, an
/// `Acp-Connection-Id`) to these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(pub u64);

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client {}", self.0)
    }
}

/// What to send after an input, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// One line, with its `\n`, for the agent's stdin.
    Agent(AgentLine),
    /// One JSON-RPC message (no `\n`) for a client: a WebSocket text
    /// frame, or one event on the Streamable HTTP stream `stream`.
    Client {
        /// The client.
        to: ClientId,
        /// Its stream in the Streamable HTTP profile (a session's stream
        /// names the session).
        stream: Stream,
        /// The message.
        text: String,
        /// What the router learned of it while routing it: what follows
        /// reads this, never the text again.
        kind: MessageKind,
    },
    /// `to`'s `initialize` was refused for its version (`-32022`, sent
    /// just before): its connection is not initialized and may ask
    /// again, in a version the agent speaks.
    InitializeRefused {
        /// The client.
        to: ClientId,
    },
    /// A notification for `session`, whose client left: the router
    /// routed it nowhere. What keeps messages for a reattach keeps it
    /// for the client that reattaches the session ([`Out::Reattached`]).
    Missed {
        /// The session.
        session: String,
        /// The message.
        text: String,
    },
    /// `to` reattached `session` (`session/load`, `session/resume`
    /// answered with success) after its client left: what the session
    /// missed ([`Out::Missed`]) goes to `to` now, on the session's
    /// stream, before the answer (which follows).
    Reattached {
        /// The client.
        to: ClientId,
        /// The session.
        session: String,
    },
    /// What `session` missed is wanted no more: the session was evicted
    /// for memory, the agent gave its id to a new session, more left
    /// sessions were kept than [`DEFAULT_MAX_REPLAY_SESSIONS`], or the
    /// agent exited.
    Forget {
        /// The session.
        session: String,
    },
}

/// What a message for a client is, as the router learned while routing
/// it: carried with the message ([`Out::Client`]) so that no later stage
/// (resumable delivery, the answer to an `initialize`, flow control)
/// decodes or peeks it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageKind {
    /// A request of the agent's, with its id: the client owes an answer.
    Request(RequestId<'static>),
    /// A notification.
    Notification,
    /// An answer (a result or an error) to the client's request with this
    /// id, as the client numbered it ([`RequestId::Null`] for an error
    /// answering no request).
    Answer(RequestId<'static>),
}

impl MessageKind {
    /// The kind of `message`, for one decoded anyway.
    pub fn of(message: &crate::acp::Message<'_>) -> Self {
        use crate::acp::Message;
        match message {
            Message::Request(r) => Self::Request(r.id.to_owned_id()),
            Message::Notification(_) => Self::Notification,
            Message::Response(r) => Self::Answer(r.id.to_owned_id()),
            Message::Error(e) => Self::Answer(e.id.to_owned_id()),
        }
    }

    /// An answer to the client's request `id`.
    pub fn answer(id: &RequestId<'_>) -> Self {
        Self::Answer(id.to_owned_id())
    }

    /// Whether it answers the client's request `id`.
    pub fn answers(&self, id: &RequestId<'_>) -> bool {
        matches!(self, Self::Answer(a) if a == id)
    }

    /// The id of the request it answers, when it is an answer.
    pub fn answered(&self) -> Option<&RequestId<'static>> {
        match self {
            Self::Answer(id) => Some(id),
            _ => None,
        }
    }
}

/// The default most requests one client may have waiting on the agent:
/// 1,024.
pub const DEFAULT_MAX_PENDING_PER_CLIENT: usize = 1024;

/// The default most left sessions whose messages a router hands out as
/// [`Out::Missed`] at once: 64. A message for one more is dropped.
pub const DEFAULT_MAX_REPLAY_SESSIONS: usize = 64;

/// The user of [`Router::connect`]: the one user of a single-user bridge.
const ANONYMOUS: &str = "";

/// A prompt turn may take long; the tracker is used for ids and matching,
/// not for timeouts.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// A client request the agent has not answered yet.
#[derive(Debug)]
struct Forwarded {
    client: ClientId,
    /// The client's user (the client may leave before the answer).
    user: String,
    id: RequestId<'static>,
    method: String,
    /// `params.sessionId` of the request.
    session: Option<String>,
    /// Whether it opens a session (counted against the user's limit until
    /// answered).
    opens: bool,
    /// The session a `session/load`/`session/resume` bound when sent, and
    /// its owner before (so a failure gives it back).
    bound: Option<(String, Option<sessions::Owner>)>,
}

#[derive(Debug)]
struct AgentRequest {
    client: ClientId,
    method: String,
    session: String,
}

#[derive(Debug)]
struct Client {
    pending: Tally,
    user: String,
    permissions: Permissions,
    /// What its `initialize` asked for.
    asked: dialect::Asked,
}

/// Per user: connections, and session requests not answered yet.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct UserState {
    connections: Tally,
    opening: Tally,
}

#[derive(Deserialize)]
struct CancelRequestRef<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: RequestId<'a>,
}

fn cancel_target<'r>(params: Option<&'r RawJson<'_>>) -> Option<RequestId<'r>> {
    let params = params?;
    serde_json::from_str::<CancelRequestRef<'_>>(params.get())
        .ok()
        .map(|c| c.request_id)
}

/// `params.sessionId` (or `result.sessionId`) when it is a string.
fn session_of(raw: Option<&RawJson<'_>>) -> Option<String> {
    session_field(raw).into_id().map(|s| s.into_owned())
}

/// The error answer to `id` as one message (without its `\n`): every
/// error the router or the server core gives a client in the agent's place.
pub(in crate::remote) fn error_answer(
    id: &RequestId<'_>,
    code: ErrorCode,
    message: String,
) -> String {
    let mut out = Vec::new();
    // An id and a plain message always encode; an empty text would be
    // refused by every decoder, never mistaken for a message.
    let _ = encode_error(id, &RpcError::new(code, message), &mut out);
    line_to_text(out)
}

fn line_to_text(mut line: Vec<u8>) -> String {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    // serde_json writes UTF-8; were it ever not, the text is kept, repaired.
    String::from_utf8(line).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn bridge_notification(method: &str, params: serde_json::Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// The multiplexer: many client connections share one agent process,
/// sans-IO.
///
/// Each call takes one input (a client's message, an agent line, a client
/// leaving, the agent exiting or starting) and appends what to send to
/// `out`; the caller only delivers those. See the
/// [module docs](super#the-router) for the rules.
///
/// ```
/// use std::time::Duration;
/// use acp_codec::acp::RequestId;
/// use acp_codec::remote::parts::{MessageKind, Out, Router};
/// use acp_codec::remote::Stream;
///
/// let mut router = Router::new();
/// let mut out = Vec::new();
/// router.agent_started(1234, 0, &mut out);
/// let (a, b) = (router.connect(), router.connect());
/// let t = Duration::ZERO;
/// // Both clients number their requests from 1; the agent sees two ids.
/// let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
/// router.handle_client(a, new, t, &mut out);
/// router.handle_client(b, new, t, &mut out);
/// assert_eq!(out.len(), 2);
/// out.clear();
/// // The agent answers its id 1 (b's request): b gets it back as its id 1,
/// // and owns the session from now on.
/// router.handle_agent(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-b"}}"#, t, &mut out);
/// assert_eq!(out, [Out::Client {
///     to: b,
///     stream: Stream::Connection,
///     text: r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-b"}}"#.into(),
///     kind: MessageKind::Answer(RequestId::Number(1)),
/// }]);
/// out.clear();
/// // The session's updates go to b alone, on the session's stream.
/// router.handle_agent(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-b","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#, t, &mut out);
/// assert!(matches!(&out[..], [Out::Client { to, stream: Stream::Session(s), .. }] if *to == b && s == "s-b"));
/// out.clear();
/// // b leaves: the agent is told to cancel b's session; a notices nothing.
/// router.disconnect(b, &mut out);
/// assert_eq!(out, [Out::Agent(b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s-b\"}}\n".to_vec().into())]);
/// ```
#[derive(Debug)]
pub struct Router {
    tracker: Tracker,
    agent_up: bool,
    max_pending: usize,
    max_user_connections: usize,
    max_user_sessions: usize,
    clients: BTreeMap<ClientId, Client>,
    users: BTreeMap<String, UserState>,
    next_client: u64,
    /// Our id toward the agent -> the client request it carries.
    forwarded: BTreeMap<i64, Forwarded>,
    /// The agent's pending requests -> the client they were sent to.
    agent_requests: BTreeMap<RequestId<'static>, AgentRequest>,
    sessions: Sessions,
    /// The user whose own agent this is: may reattach sessions the router
    /// has never seen.
    agent_user: String,
    /// Left sessions whose messages go out as [`Out::Missed`], oldest
    /// first; at most `max_replaying`.
    replaying: VecDeque<String>,
    max_replaying: usize,
    dropped: u64,
    /// Requests refused for opening one session past the user's limit.
    session_refusals: u64,
    /// The version the agent answered `initialize` with, once it has.
    agent_dialect: Option<crate::version::Dialect>,
}

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

impl Router {
    /// A router with no agent yet (call [`agent_started`](Self::agent_started)),
    /// at most [`DEFAULT_MAX_PENDING_PER_CLIENT`] requests per client,
    /// [`DEFAULT_MAX_USER_CONNECTIONS`] and [`DEFAULT_MAX_USER_SESSIONS`]
    /// per user, and messages for at most [`DEFAULT_MAX_REPLAY_SESSIONS`]
    /// left sessions handed out ([`Out::Missed`]). Its agent is the anonymous user's
    /// of [`connect`](Self::connect) (see
    /// [`with_dedicated_user`](Self::with_dedicated_user)), and evicted
    /// sessions are remembered under the all-zero hash key (see
    /// [`with_hash_key`](Self::with_hash_key)).
    pub fn new() -> Self {
        Self {
            tracker: Tracker::new().with_default_timeout(FORWARD_TIMEOUT),
            agent_up: false,
            max_pending: DEFAULT_MAX_PENDING_PER_CLIENT,
            max_user_connections: DEFAULT_MAX_USER_CONNECTIONS,
            max_user_sessions: DEFAULT_MAX_USER_SESSIONS,
            clients: BTreeMap::new(),
            users: BTreeMap::new(),
            next_client: 1,
            forwarded: BTreeMap::new(),
            agent_requests: BTreeMap::new(),
            sessions: Sessions::default(),
            agent_user: ANONYMOUS.to_owned(),
            replaying: VecDeque::new(),
            max_replaying: DEFAULT_MAX_REPLAY_SESSIONS,
            dropped: 0,
            session_refusals: 0,
            agent_dialect: None,
        }
    }

    /// Sets the most requests one client may have waiting on the agent;
    /// more are refused with `-32603`.
    #[must_use]
    pub fn with_max_pending(mut self, limit: usize) -> Self {
        self.max_pending = limit;
        self
    }

    /// Sets the most connections one user may hold (more are refused by
    /// [`connect_as`](Self::connect_as)) and the most sessions one user
    /// may hold open (a request opening one more is answered with
    /// [`USER_LIMIT`]). As many sessions whose connection left keep a full
    /// record; past that the oldest are evicted to a compact one: they
    /// stay the user's, for a reattach by them alone.
    #[must_use]
    pub fn with_user_limits(mut self, connections: usize, sessions: usize) -> Self {
        self.max_user_connections = connections;
        self.max_user_sessions = sessions;
        self
    }

    /// Says the agent process serves `user` alone (a bridge running one
    /// agent per user, one router each): `user`'s `session/load` or
    /// `session/resume` of a session this router has never seen goes to
    /// the agent and makes the session theirs (the agent's sessions from
    /// before the router, or before the bridge restarted, are theirs).
    /// Other users may not connect ([`ConnectError::AnotherUsersAgent`]),
    /// and the anonymous user of [`connect`](Self::connect) acts only on
    /// sessions it holds, as any user of a shared agent.
    ///
    /// Without it, the agent is the anonymous user's of
    /// [`connect`](Self::connect) (the single-user bridge): only that user
    /// may reattach a session the router has never seen; a named user of
    /// [`connect_as`](Self::connect_as) is refused, in the same words as
    /// for another user's session, as the agent may be shared and the
    /// session another user's.
    #[must_use]
    pub fn with_dedicated_user(mut self, user: &str) -> Self {
        user.clone_into(&mut self.agent_user);
        self
    }

    /// Sets the key of the 64-bit SipHash-2-4 under which sessions evicted
    /// for memory are remembered (see the [module docs](super#the-router));
    /// give 16 bytes from the operating system's random source. Without
    /// one the key is all zeros: ownership never lapses either way, but
    /// anyone can compute which ids share a record. The router reads no
    /// randomness itself.
    ///
    /// Call it on a new router: once a session has been evicted, the key
    /// stays as it was (the records under it would no longer be found).
    #[must_use]
    pub fn with_hash_key(mut self, key: [u8; 16]) -> Self {
        let _ = self.sessions.set_key(key);
        self
    }

    /// Registers a new client of the anonymous user, with every permission
    /// and no connection limit: the single-user case, where every
    /// connection may reattach every session.
    pub fn connect(&mut self) -> ClientId {
        self.add_client(ANONYMOUS, Permissions::READ_WRITE)
    }

    /// Registers a new client of `user`: its sessions are `user`'s, across
    /// the user's connections and reconnects, and no other user's
    /// connection may touch them.
    ///
    /// # Errors
    ///
    /// [`ConnectError::NotPermitted`] when `permissions` has neither
    /// `read` nor `write`; [`ConnectError::AnotherUsersAgent`] when the
    /// router is [dedicated](Self::with_dedicated_user) to another user;
    /// [`ConnectError::TooManyConnections`] when the user holds as many
    /// connections as the limit allows.
    pub fn connect_as(
        &mut self,
        user: &str,
        permissions: Permissions,
    ) -> Result<ClientId, ConnectError> {
        self.connect_excusing(user, permissions, 0)
    }

    /// [`connect_as`](Self::connect_as), with `detached` of `user`'s
    /// connections not counted against the limit: those the server core
    /// holds for a client that may resume, which never keep their user
    /// from coming back. The one check of the per-user connection limit.
    pub(in crate::remote) fn connect_excusing(
        &mut self,
        user: &str,
        permissions: Permissions,
        detached: usize,
    ) -> Result<ClientId, ConnectError> {
        if !permissions.read() {
            return Err(ConnectError::NotPermitted);
        }
        if self.agent_user != ANONYMOUS && self.agent_user != user {
            return Err(ConnectError::AnotherUsersAgent);
        }
        let held = self.user_connections(user).saturating_sub(detached);
        if held >= self.max_user_connections {
            return Err(ConnectError::TooManyConnections {
                limit: self.max_user_connections,
            });
        }
        Ok(self.add_client(user, permissions))
    }

    fn add_client(&mut self, user: &str, permissions: Permissions) -> ClientId {
        let id = ClientId(self.next_client);
        self.next_client = self.next_client.wrapping_add(1);
        self.clients.insert(
            id,
            Client {
                pending: Tally::default(),
                user: user.to_owned(),
                permissions,
                asked: dialect::Asked::default(),
            },
        );
        let u = self.user_mut(user);
        u.connections.add(1);
        id
    }

    fn user_mut(&mut self, user: &str) -> &mut UserState {
        self.users.entry(user.to_owned()).or_default()
    }

    /// Drops `user`'s entry once it has no connection and no request.
    fn tidy_user(&mut self, user: &str) {
        if self.users.get(user) == Some(&UserState::default()) {
            self.users.remove(user);
        }
    }

    /// Sets the permissions of `user`'s connections, effective from their
    /// next message (a bridge re-reading its token file).
    pub fn set_permissions(&mut self, user: &str, permissions: Permissions) {
        for c in self.clients.values_mut().filter(|c| c.user == user) {
            c.permissions = permissions;
        }
    }

    /// How many clients are connected.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// How many connections `user` holds.
    pub fn user_connections(&self, user: &str) -> usize {
        self.users.get(user).map_or(0, |u| u.connections.get())
    }

    /// The user of `client`, while it is connected.
    pub fn user_of(&self, client: ClientId) -> Option<&str> {
        self.clients.get(&client).map(|c| c.user.as_str())
    }

    /// How many sessions are held by connected clients.
    pub fn sessions(&self) -> usize {
        self.sessions.held()
    }

    /// How many sessions `user` owns with a full record: held by one of
    /// their connections, and left (waiting for a reattach). Sessions
    /// evicted past the limit are not counted (they stay the user's).
    pub fn user_sessions(&self, user: &str) -> (usize, usize) {
        let c = self.sessions.counts(user);
        (c.held.get(), c.left.get())
    }

    /// The user who owns `session` (held by one of their connections, or
    /// left for a reattach, evicted or not), if any. `None` for a session
    /// the router has never seen, and for one nobody may claim (an evicted
    /// record that two users' sessions share).
    pub fn session_user(&self, session: &str) -> Option<&str> {
        self.sessions.user(session)
    }

    /// Whether `client` may reattach `session` (`session/load`,
    /// `session/resume`), as far as who owns it goes: a session of its
    /// user's, or one the router has never seen when its user is the
    /// agent's own (a session the agent kept from before the router, or
    /// another server's that shared its state). The user's session limit
    /// is checked when the request comes.
    pub fn may_reattach(&self, client: ClientId, session: &str) -> bool {
        let Some(user) = self.user_of(client) else {
            return false;
        };
        match self.sessions.whose(session) {
            sessions::Whose::Owner(o) => o.user == user,
            sessions::Whose::Nobody => false,
            sessions::Whose::Unseen => user == self.agent_user,
        }
    }

    /// The client that holds `session`, if any.
    pub fn owner(&self, session: &str) -> Option<ClientId> {
        self.sessions.holder(session)
    }

    /// The session an agent request still waiting on `client` was sent for
    /// (its [`Stream::Session`]); `None` when no such request waits on that
    /// client. For [`check_response_session`](super::check_response_session).
    pub fn request_session(&self, client: ClientId, id: &RequestId<'_>) -> Option<&str> {
        self.agent_requests
            .get(&id.to_owned_id())
            .filter(|a| a.client == client)
            .map(|a| a.session.as_str())
    }

    /// Requests of clients waiting on the agent, and agent requests waiting
    /// on clients.
    pub fn pending(&self) -> (usize, usize) {
        (self.forwarded.len(), self.agent_requests.len())
    }

    /// How many inputs were dropped: messages routed nowhere (a session
    /// nobody holds, a response nobody waits for, stray text from the
    /// agent), refused replies and cancels.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// How many requests were refused with [`USER_LIMIT`] for opening one
    /// session more than the user may hold (the server counts them as
    /// refusals).
    pub(crate) fn session_refusals(&self) -> u64 {
        self.session_refusals
    }

    fn drop_one(&mut self) {
        self.dropped = self.dropped.wrapping_add(1);
    }

    /// Hands `session`'s messages out for a reattach ([`Out::Missed`]),
    /// forgetting the oldest such session's past the limit.
    fn keep_for_replay(&mut self, session: String, out: &mut Vec<Out>) {
        if self.replaying.iter().any(|d| *d == session) {
            return;
        }
        while self.replaying.len() >= self.max_replaying {
            let Some(old) = self.replaying.pop_front() else {
                return;
            };
            out.push(Out::Forget { session: old });
        }
        self.replaying.push_back(session);
    }

    /// Stops handing `session`'s messages out (what was handed out waits
    /// for [`Out::Reattached`]); whether they were.
    fn stop_replay(&mut self, session: &str) -> bool {
        let before = self.replaying.len();
        self.replaying.retain(|d| d != session);
        self.replaying.len() != before
    }

    /// Stops handing `session`'s messages out, and forgets what was.
    fn drop_replay(&mut self, session: &str, out: &mut Vec<Out>) {
        if self.stop_replay(session) {
            out.push(Out::Forget {
                session: session.to_owned(),
            });
        }
    }

    /// Evicts `user`'s oldest left sessions past the limit (they stay
    /// theirs), forgetting what they missed.
    fn trim_left(&mut self, user: &str, out: &mut Vec<Out>) {
        for s in self.sessions.trim_left(user, self.max_user_sessions) {
            self.drop_replay(&s, out);
        }
    }

    /// `client` left: its sessions get `session/cancel` and stay its
    /// user's (waiting for a reattach, what they miss handed out as
    /// [`Out::Missed`]); the agent's pending permission requests to it
    /// are answered `cancelled` and other agent requests to it an error;
    /// responses to its requests are dropped when they come. Nobody else
    /// notices.
    pub fn disconnect(&mut self, client: ClientId, out: &mut Vec<Out>) {
        let Some(gone) = self.clients.remove(&client) else {
            return;
        };
        let u = self.user_mut(&gone.user);
        u.connections.release(1);
        self.tidy_user(&gone.user);
        for s in self.sessions.held_by(client) {
            if self.agent_up {
                let mut line = Vec::new();
                if self.tracker.cancel_session(&s, &mut line).is_ok() {
                    out.push(Out::Agent(line.into()));
                }
            }
            self.sessions.leave(&s, &gone.user);
            self.keep_for_replay(s, out);
        }
        self.trim_left(&gone.user, out);
        let asked: Vec<RequestId<'static>> = self
            .agent_requests
            .iter()
            .filter(|(_, a)| a.client == client)
            .map(|(id, _)| id.clone())
            .collect();
        for id in asked {
            if let Some(a) = self.agent_requests.remove(&id) {
                let _ = self.tracker.finish_peer_request(&id);
                if self.agent_up {
                    self.answer_agent_for_gone(&id, &a.method, out);
                }
            }
        }
    }

    /// The agent process exited: every pending client request is answered
    /// with `-32603`, every client gets `_bridge/agent_exited` (with
    /// `status`, `restartInMs` and the sessions it lost), and requests are
    /// refused until [`agent_started`](Self::agent_started). No connection
    /// holds a session any more, but each stays its user's: only they may
    /// reattach it (`session/load`) once the agent is back.
    pub fn agent_exited(&mut self, status: &str, restart_in: Duration, out: &mut Vec<Out>) {
        self.agent_up = false;
        for (_, f) in core::mem::take(&mut self.forwarded) {
            if f.opens {
                let u = self.user_mut(&f.user);
                u.opening.release(1);
                self.tidy_user(&f.user);
            }
            if let Some(c) = self.clients.get_mut(&f.client) {
                c.pending.release(1);
                let msg = format!("the agent exited ({status}) before answering {}", f.method);
                out.push(Out::Client {
                    to: f.client,
                    stream: super::error_stream(&f.method, f.session.as_deref()),
                    text: error_answer(&f.id, ErrorCode::INTERNAL_ERROR, msg),
                    kind: MessageKind::answer(&f.id),
                });
            }
        }
        self.tracker = Tracker::new().with_default_timeout(FORWARD_TIMEOUT);
        self.agent_requests.clear();
        for session in core::mem::take(&mut self.replaying) {
            out.push(Out::Forget { session });
        }
        let mut lost: BTreeMap<ClientId, Vec<String>> = BTreeMap::new();
        for (s, owner) in self.sessions.evict_all() {
            if let Some(c) = owner.client {
                lost.entry(c).or_default().push(s);
            }
        }
        let restart_ms = u64::try_from(restart_in.as_millis()).unwrap_or(u64::MAX);
        for &c in self.clients.keys() {
            let sessions = lost.remove(&c).unwrap_or_default();
            let params = serde_json::json!({"status": status, "restartInMs": restart_ms, "lostSessions": sessions});
            out.push(Out::Client {
                to: c,
                stream: Stream::Connection,
                text: bridge_notification(AGENT_EXITED, params),
                kind: MessageKind::Notification,
            });
        }
    }

    /// A new agent process is up: clients may `initialize` and open
    /// sessions again. After a restart (`restarts > 0`) every client gets
    /// `_bridge/agent_started` with `pid` and `restarts`.
    pub fn agent_started(&mut self, pid: u32, restarts: u64, out: &mut Vec<Out>) {
        let first = !self.agent_up && restarts == 0;
        self.agent_up = true;
        if first {
            return;
        }
        for &c in self.clients.keys() {
            let params = serde_json::json!({"pid": pid, "restarts": restarts});
            out.push(Out::Client {
                to: c,
                stream: Stream::Connection,
                text: bridge_notification(AGENT_STARTED, params),
                kind: MessageKind::Notification,
            });
        }
    }
}

/// The notification every client gets when the agent process exits.
pub const AGENT_EXITED: &str = "_bridge/agent_exited";
/// The notification every client gets when a restarted agent is up.
pub const AGENT_STARTED: &str = "_bridge/agent_started";

#[cfg(test)]
mod tests;
