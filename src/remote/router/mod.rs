//! The multiplexer: many client connections share one agent process.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use serde::Deserialize;

use crate::acp::{
    encode_error, names, ErrorResponse, Message, RawJson, Request, RequestId, Response, RpcError,
    Tracker,
};
use crate::remote::replay::ReplayBuffer;
use crate::remote::transport::{answer_stream, is_reattach, session_field, SessionField, Stream};
use crate::ErrorCode;

mod agent;

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
    Agent(Vec<u8>),
    /// One JSON-RPC message (no `\n`) for a client: a WebSocket text
    /// frame, or one event on the Streamable HTTP stream `stream`.
    Client {
        /// The client.
        to: ClientId,
        /// Its stream in the Streamable HTTP profile.
        stream: Stream,
        /// The message.
        text: String,
    },
}

/// The default most requests one client may have waiting on the agent:
/// 1,024.
pub const DEFAULT_MAX_PENDING_PER_CLIENT: usize = 1024;

/// A prompt turn may take long; the tracker is used for ids and matching,
/// not for timeouts.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// A client request the agent has not answered yet.
#[derive(Debug)]
struct Forwarded {
    client: ClientId,
    id: RequestId<'static>,
    method: String,
    /// `params.sessionId` of the request.
    session: Option<String>,
    /// The session a `session/load`/`session/resume` bound when sent.
    bound: Option<String>,
}

#[derive(Debug)]
struct AgentRequest {
    client: ClientId,
    method: String,
    session: String,
}

#[derive(Debug, Default)]
struct Client {
    pending: usize,
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

fn error_text(id: &RequestId<'_>, code: ErrorCode, message: String) -> String {
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
    String::from_utf8(line).unwrap_or_default()
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
/// use acp_codec::remote::{Out, Router, Stream};
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
/// }]);
/// out.clear();
/// // The session's updates go to b alone, on the session's stream.
/// router.handle_agent(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-b","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#, t, &mut out);
/// assert!(matches!(&out[..], [Out::Client { to, stream: Stream::Session(s), .. }] if *to == b && s == "s-b"));
/// out.clear();
/// // b leaves: the agent is told to cancel b's session; a notices nothing.
/// router.disconnect(b, &mut out);
/// assert_eq!(out, [Out::Agent(b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s-b\"}}\n".to_vec())]);
/// ```
#[derive(Debug)]
pub struct Router {
    tracker: Tracker,
    agent_up: bool,
    max_pending: usize,
    clients: BTreeMap<ClientId, Client>,
    next_client: u64,
    /// Our id toward the agent -> the client request it carries.
    forwarded: BTreeMap<i64, Forwarded>,
    /// The agent's pending requests -> the client they were sent to.
    agent_requests: BTreeMap<RequestId<'static>, AgentRequest>,
    /// Session id -> owner.
    sessions: BTreeMap<String, ClientId>,
    /// Sessions whose owner left, oldest first, kept for a reattach while
    /// a replay buffer is on; at most its session limit.
    detached: VecDeque<String>,
    replay: Option<ReplayBuffer>,
    dropped: u64,
}

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

impl Router {
    /// A router with no agent yet (call [`agent_started`](Self::agent_started)),
    /// at most [`DEFAULT_MAX_PENDING_PER_CLIENT`] requests per client, and
    /// no replay buffer.
    pub fn new() -> Self {
        Self {
            tracker: Tracker::new().with_default_timeout(FORWARD_TIMEOUT),
            agent_up: false,
            max_pending: DEFAULT_MAX_PENDING_PER_CLIENT,
            clients: BTreeMap::new(),
            next_client: 1,
            forwarded: BTreeMap::new(),
            agent_requests: BTreeMap::new(),
            sessions: BTreeMap::new(),
            detached: VecDeque::new(),
            replay: None,
            dropped: 0,
        }
    }

    /// Sets the most requests one client may have waiting on the agent;
    /// more are refused with `-32603`.
    #[must_use]
    pub fn with_max_pending(mut self, limit: usize) -> Self {
        self.max_pending = limit;
        self
    }

    /// Keeps what the agent sends for a session whose client left, in
    /// `replay`, and hands it to the client that reattaches the session
    /// with `session/load` or `session/resume` (just before the answer).
    ///
    /// Without it, such messages are dropped. The session's turn is still
    /// cancelled when its client leaves; what the agent sends after that
    /// (the end of the turn, late updates) is what a reattaching client
    /// missed.
    #[must_use]
    pub fn with_replay(mut self, replay: ReplayBuffer) -> Self {
        self.replay = Some(replay);
        self
    }

    /// Registers a new client.
    pub fn connect(&mut self) -> ClientId {
        let id = ClientId(self.next_client);
        self.next_client = self.next_client.wrapping_add(1);
        self.clients.insert(id, Client::default());
        id
    }

    /// How many clients are connected.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// How many sessions are bound to clients.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// The client that owns `session`, if any.
    pub fn owner(&self, session: &str) -> Option<ClientId> {
        self.sessions.get(session).copied()
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
    /// nobody owns, a response nobody waits for, stray text from the
    /// agent), refused replies and cancels.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The replay buffer, when [`with_replay`](Self::with_replay) set one.
    pub fn replay(&self) -> Option<&ReplayBuffer> {
        self.replay.as_ref()
    }

    fn drop_one(&mut self) {
        self.dropped = self.dropped.wrapping_add(1);
    }

    fn refuse(
        &self,
        client: ClientId,
        id: &RequestId<'_>,
        code: ErrorCode,
        msg: String,
        out: &mut Vec<Out>,
    ) {
        out.push(Out::Client {
            to: client,
            stream: Stream::Connection,
            text: error_text(id, code, msg),
        });
    }

    /// One message from `client` (a WebSocket text frame, a `POST` body):
    /// checked, re-encoded and forwarded, or refused with a JSON-RPC
    /// error.
    ///
    /// Requests get router-unique ids toward the agent. A message holding a
    /// raw newline is refused, so one client message is never two agent
    /// lines. Naming another client's session is refused (`-32602`); a
    /// reply to an agent request is forwarded only from the client it was
    /// sent to. Unknown clients are ignored.
    pub fn handle_client(
        &mut self,
        client: ClientId,
        text: &str,
        now: Duration,
        out: &mut Vec<Out>,
    ) {
        if !self.clients.contains_key(&client) {
            return;
        }
        let decoded = Message::decode(text);
        if let Some(at) = memchr::memchr(b'\n', text.as_bytes()) {
            let id = decoded
                .as_ref()
                .ok()
                .and_then(Message::id)
                .cloned()
                .unwrap_or(RequestId::Null);
            let msg = format!(
                "message holds a raw newline at byte {at}: one message must be exactly one json-rpc message"
            );
            self.refuse(client, &id, ErrorCode::INVALID_REQUEST, msg, out);
            return;
        }
        let msg = match decoded {
            Ok(m) => m,
            Err(e) => {
                self.refuse(client, &RequestId::Null, e.code(), e.to_string(), out);
                return;
            }
        };
        match msg {
            Message::Request(r) => self.client_request(client, r, now, out),
            Message::Notification(n) => {
                if n.method == names::CANCEL_REQUEST {
                    self.client_cancel_request(client, n.params.as_ref(), out);
                    return;
                }
                if let SessionField::Id(s) = session_field(n.params.as_ref()) {
                    if self.sessions.get(&*s).is_some_and(|&o| o != client) {
                        self.drop_one();
                        return;
                    }
                }
                self.encode_to_agent(&Message::Notification(n), out);
            }
            Message::Response(Response { ref id, .. })
            | Message::Error(ErrorResponse { ref id, .. }) => {
                let key = id.to_owned_id();
                match self.agent_requests.get(&key) {
                    Some(a) if a.client == client => {
                        self.agent_requests.remove(&key);
                        let _ = self.tracker.finish_peer_request(&key);
                        self.encode_to_agent(&msg, out);
                    }
                    // Not a request of the agent to this client: never forwarded.
                    _ => self.drop_one(),
                }
            }
        }
    }

    /// `$/cancel_request` from a client: its id rewritten to ours.
    fn client_cancel_request(
        &mut self,
        client: ClientId,
        params: Option<&RawJson<'_>>,
        out: &mut Vec<Out>,
    ) {
        let Some(target) = cancel_target(params) else {
            self.drop_one();
            return;
        };
        let ours = self
            .forwarded
            .iter()
            .find_map(|(n, f)| (f.client == client && f.id == target).then_some(*n));
        let mut line = Vec::new();
        match ours {
            Some(ours)
                if self
                    .tracker
                    .cancel(&RequestId::Number(ours), &mut line)
                    .is_ok() =>
            {
                out.push(Out::Agent(line));
            }
            _ => self.drop_one(),
        }
    }

    fn encode_to_agent(&mut self, msg: &Message<'_>, out: &mut Vec<Out>) {
        let mut line = Vec::new();
        match msg.encode(&mut line) {
            Ok(_) => out.push(Out::Agent(line)),
            Err(_) => self.drop_one(),
        }
    }

    fn client_request(
        &mut self,
        client: ClientId,
        r: Request<'_>,
        now: Duration,
        out: &mut Vec<Out>,
    ) {
        if !self.agent_up {
            let msg = "the agent is not running (restarting); retry after _bridge/agent_started"
                .to_owned();
            self.refuse(client, &r.id, ErrorCode::INTERNAL_ERROR, msg, out);
            return;
        }
        let pending = self.clients.get(&client).map_or(0, |c| c.pending);
        if pending >= self.max_pending {
            let msg = format!(
                "{pending} requests already pending, limit {}",
                self.max_pending
            );
            self.refuse(client, &r.id, ErrorCode::INTERNAL_ERROR, msg, out);
            return;
        }
        let session = session_of(r.params.as_ref());
        let mut bound = None;
        if let Some(s) = &session {
            match self.sessions.get(s) {
                Some(&owner) if owner != client => {
                    let msg = format!("session {s} belongs to another connection");
                    self.refuse(client, &r.id, ErrorCode::INVALID_PARAMS, msg, out);
                    return;
                }
                Some(_) => {}
                None if is_reattach(&r.method) => {
                    // Bound now: a load replays history before its response.
                    self.sessions.insert(s.clone(), client);
                    bound = Some(s.clone());
                }
                None => {}
            }
        }
        let ours = self.tracker.start(&r.method, now);
        let rewritten = Message::Request(Request {
            id: ours.clone(),
            method: r.method.clone(),
            params: r.params.clone(),
        });
        let mut line = Vec::new();
        if let Err(e) = rewritten.encode(&mut line) {
            let _ = self.tracker.handle_response(&ours, now);
            if let Some(s) = bound {
                self.sessions.remove(&s);
            }
            self.refuse(client, &r.id, e.code(), e.to_string(), out);
            return;
        }
        let RequestId::Number(n) = ours else {
            // The tracker numbers its requests; a string id cannot happen.
            let _ = self.tracker.handle_response(&ours, now);
            self.drop_one();
            return;
        };
        self.forwarded.insert(
            n,
            Forwarded {
                client,
                id: r.id.to_owned_id(),
                method: r.method.into_owned(),
                session,
                bound,
            },
        );
        if let Some(c) = self.clients.get_mut(&client) {
            c.pending = c.pending.saturating_add(1);
        }
        out.push(Out::Agent(line));
    }

    /// `client` left: its sessions get `session/cancel`, its pending
    /// permission requests are answered `cancelled` and other agent
    /// requests to it an error; responses to its requests are dropped when
    /// they come. Nobody else notices. With a replay buffer, its sessions
    /// wait for a reattach.
    pub fn disconnect(&mut self, client: ClientId, out: &mut Vec<Out>) {
        if self.clients.remove(&client).is_none() {
            return;
        }
        let mine: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, &o)| o == client)
            .map(|(s, _)| s.clone())
            .collect();
        for s in mine {
            self.sessions.remove(&s);
            if self.agent_up {
                let mut line = Vec::new();
                if self.tracker.cancel_session(&s, &mut line).is_ok() {
                    out.push(Out::Agent(line));
                }
            }
            self.detach(s);
        }
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
    /// refused until [`agent_started`](Self::agent_started).
    pub fn agent_exited(&mut self, status: &str, restart_in: Duration, out: &mut Vec<Out>) {
        self.agent_up = false;
        for (_, f) in core::mem::take(&mut self.forwarded) {
            if let Some(c) = self.clients.get_mut(&f.client) {
                c.pending = c.pending.saturating_sub(1);
                let msg = format!("the agent exited ({status}) before answering {}", f.method);
                out.push(Out::Client {
                    to: f.client,
                    stream: answer_stream(&f.method, f.session.as_deref()),
                    text: error_text(&f.id, ErrorCode::INTERNAL_ERROR, msg),
                });
            }
        }
        self.tracker = Tracker::new().with_default_timeout(FORWARD_TIMEOUT);
        self.agent_requests.clear();
        self.detached.clear();
        if let Some(replay) = &mut self.replay {
            replay.clear();
        }
        let mut lost: BTreeMap<ClientId, Vec<String>> = BTreeMap::new();
        for (s, c) in core::mem::take(&mut self.sessions) {
            lost.entry(c).or_default().push(s);
        }
        let restart_ms = u64::try_from(restart_in.as_millis()).unwrap_or(u64::MAX);
        for &c in self.clients.keys() {
            let sessions = lost.remove(&c).unwrap_or_default();
            let params = serde_json::json!({"status": status, "restartInMs": restart_ms, "lostSessions": sessions});
            out.push(Out::Client {
                to: c,
                stream: Stream::Connection,
                text: bridge_notification(AGENT_EXITED, params),
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
            });
        }
    }
}

/// The notification every client gets when the agent process exits.
pub const AGENT_EXITED: &str = "_bridge/agent_exited";
/// The notification every client gets when a restarted agent is up.
pub const AGENT_STARTED: &str = "_bridge/agent_started";
/// The notification a reattaching client gets, before the replayed
/// messages, when the replay buffer had to drop some of what the session
/// missed (`sessionId`, `droppedMessages`, `droppedBytes`).
pub const REPLAY_DROPPED: &str = "_bridge/replay_dropped";

#[cfg(test)]
mod tests {
    use super::*;

    fn up_with_replay() -> Router {
        let mut r = Router::new().with_replay(ReplayBuffer::new(1024));
        r.agent_started(1, 0, &mut Vec::new());
        r
    }

    #[test]
    fn detached_sessions_are_forgotten_when_reused_or_reattached() {
        let mut r = up_with_replay();
        let a = r.connect();
        let mut out = Vec::new();
        r.handle_client(
            a,
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
            Duration::ZERO,
            &mut out,
        );
        r.handle_agent(
            r#"{"jsonrpc":"2.0","id":0,"result":{"sessionId":"s"}}"#,
            Duration::ZERO,
            &mut out,
        );
        r.disconnect(a, &mut out);
        assert!(r.detached.iter().any(|d| d == "s"));
        // A new session of the same name (an agent reusing ids) is not a
        // reattach: nothing to replay, no longer detached.
        let b = r.connect();
        r.handle_client(
            b,
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
            Duration::ZERO,
            &mut out,
        );
        r.handle_agent(
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#,
            Duration::ZERO,
            &mut out,
        );
        assert!(r.detached.is_empty());
        assert_eq!(r.sessions.get("s"), Some(&b));
        // Pending counts come back to zero.
        assert_eq!(r.clients.get(&b).map(|c| c.pending), Some(0));
        assert_eq!(r.pending(), (0, 0));
        // At most the replay buffer's session limit is kept: the oldest go.
        let mut r = Router::new().with_replay(ReplayBuffer::new(1024).with_max_sessions(2));
        r.agent_started(1, 0, &mut Vec::new());
        for n in 0..3 {
            let c = r.connect();
            r.handle_client(
                c,
                r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#,
                Duration::ZERO,
                &mut out,
            );
            r.handle_agent(
                &format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"sessionId":"s{n}"}}}}"#),
                Duration::ZERO,
                &mut out,
            );
            r.disconnect(c, &mut out);
            r.handle_agent(&format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s{n}","update":{{}}}}}}"#), Duration::ZERO, &mut out);
        }
        assert_eq!(r.detached, ["s1", "s2"]);
        assert_eq!(r.replay().map(ReplayBuffer::sessions), Some(2));
    }
}
