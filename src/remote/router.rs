//! The bridge's multiplexer, sans-IO: many WebSocket clients share one
//! agent process.
//!
//! Each call takes one input (a client's message, an agent line, a client
//! leaving, the agent exiting or starting) and appends what to send to
//! `out`; the I/O layer only delivers those. The rules:
//!
//! - Client requests get bridge-unique ids toward the agent (a
//!   [`Tracker`]); the response goes back to the requester with its own id.
//! - A session belongs to the client whose `session/new` (or `session/fork`)
//!   response created it, or whose `session/load` / `session/resume` asked
//!   for it. `session/update` and other notifications, and agent requests
//!   (`session/request_permission`, `fs/*`, `terminal/*`, …), go to the
//!   owner of `params.sessionId`; a client naming another client's session
//!   is refused.
//! - The agent's own request ids are unique among its pending requests, so
//!   they are forwarded unchanged; a reply is accepted only from the client
//!   the request was sent to.
//! - A client that leaves: its sessions get `session/cancel`, its pending
//!   permission requests are answered `cancelled` and other agent requests
//!   an error; responses to its requests are dropped. Nobody else notices.
//! - The agent exiting: every pending client request is answered with an
//!   error, every client gets `_bridge/agent_exited` (with the sessions it
//!   lost), later `_bridge/agent_started`.

use std::collections::HashMap;
use std::time::Duration;

use acp_codec::acp::{
    encode_error, encode_response, names, ErrorResponse, Message, RawJson, Request, RequestId,
    Response, RpcError, Tracker,
};
use acp_codec::{ErrorCode, FrameError, PeekedId};
use serde::Deserialize;

/// A connected client, numbered by the bridge.
pub type ClientId = u64;

/// What to send after an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// One line (with its `\n`) for the agent's stdin.
    Agent(Vec<u8>),
    /// One WebSocket text message for a client.
    Client(ClientId, String),
}

/// Most requests one client may have waiting on the agent.
pub const MAX_PENDING_PER_CLIENT: usize = 1024;

/// A prompt turn may take long; the tracker is used for ids and matching,
/// not for timeouts.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

#[derive(Debug)]
struct Forwarded {
    client: ClientId,
    id: RequestId<'static>,
    method: String,
    /// The session a `session/load`/`session/resume` bound when sent.
    bound: Option<String>,
}

#[derive(Debug)]
struct AgentRequest {
    client: ClientId,
    method: String,
}

#[derive(Debug, Default)]
struct Client {
    pending: usize,
}

/// The multiplexer state: see the module docs.
#[derive(Debug)]
pub struct Router {
    tracker: Tracker,
    agent_up: bool,
    clients: HashMap<ClientId, Client>,
    next_client: ClientId,
    /// Our id toward the agent -> the client request it carries.
    forwarded: HashMap<i64, Forwarded>,
    /// The agent's pending requests -> the client they were sent to.
    agent_requests: HashMap<RequestId<'static>, AgentRequest>,
    /// Session id -> owner.
    sessions: HashMap<String, ClientId>,
    /// Counters for the log.
    pub dropped: u64,
}

#[derive(Deserialize)]
struct SessionRef<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<&'a serde_json::value::RawValue>,
}

/// What `params.sessionId` (or `result.sessionId`) holds.
#[derive(Debug, PartialEq, Eq)]
enum SessionField {
    /// No params, params not an object, no member, or `null`.
    Absent,
    /// A string.
    Id(String),
    /// Anything else: a message no session can own.
    Invalid,
}

impl SessionField {
    fn id(self) -> Option<String> {
        match self {
            Self::Id(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct CancelRequestRef<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: RequestId<'a>,
}

/// `params.sessionId` (or `result.sessionId`) of raw JSON.
fn session_field(raw: Option<&RawJson<'_>>) -> SessionField {
    let Some(raw) = raw else {
        return SessionField::Absent;
    };
    let Ok(r) = serde_json::from_str::<SessionRef<'_>>(raw.get()) else {
        // An object that does not parse this way (say, a repeated
        // `sessionId`) is not trusted to name no session.
        return if raw.get().trim_start().starts_with('{') {
            SessionField::Invalid
        } else {
            SessionField::Absent
        };
    };
    match r.session_id {
        None => SessionField::Absent,
        Some(v) if v.get() == "null" => SessionField::Absent,
        Some(v) => match serde_json::from_str::<String>(v.get()) {
            Ok(s) => SessionField::Id(s),
            Err(_) => SessionField::Invalid,
        },
    }
}

/// `params.sessionId` (or `result.sessionId`) when it is a string.
fn session_of(raw: Option<&RawJson<'_>>) -> Option<String> {
    session_field(raw).id()
}

fn error_text(id: &RequestId<'_>, code: ErrorCode, message: String) -> String {
    let mut out = Vec::new();
    // Encoding an id and a plain message cannot fail.
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

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

impl Router {
    /// A router with no agent yet.
    pub fn new() -> Self {
        Self {
            tracker: Tracker::new().with_default_timeout(FORWARD_TIMEOUT),
            agent_up: false,
            clients: HashMap::new(),
            next_client: 1,
            forwarded: HashMap::new(),
            agent_requests: HashMap::new(),
            sessions: HashMap::new(),
            dropped: 0,
        }
    }

    /// Registers a new client.
    pub fn connect(&mut self) -> ClientId {
        let id = self.next_client;
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

    /// Requests of clients waiting on the agent, and agent requests waiting
    /// on clients.
    pub fn pending(&self) -> (usize, usize) {
        (self.forwarded.len(), self.agent_requests.len())
    }

    fn refuse(
        &self,
        client: ClientId,
        id: &RequestId<'_>,
        code: ErrorCode,
        msg: String,
        out: &mut Vec<Out>,
    ) {
        out.push(Out::Client(client, error_text(id, code, msg)));
    }

    /// One WebSocket text message from `client`: checked, re-encoded and
    /// forwarded, or refused with a JSON-RPC error.
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
                "message holds a raw newline at byte {at}: one websocket message must be exactly one json-rpc message"
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
                let method: &str = &n.method;
                if method == names::CANCEL_REQUEST {
                    // Rewrite the client's id to ours.
                    let Some(cancel) = n
                        .params
                        .as_ref()
                        .and_then(|p| serde_json::from_str::<CancelRequestRef<'_>>(p.get()).ok())
                    else {
                        self.dropped += 1;
                        return;
                    };
                    let ours = self.forwarded.iter().find_map(|(n, f)| {
                        (f.client == client && f.id == cancel.request_id).then_some(*n)
                    });
                    if let Some(ours) = ours {
                        let mut line = Vec::new();
                        if self
                            .tracker
                            .cancel(&RequestId::Number(ours), &mut line)
                            .is_ok()
                        {
                            out.push(Out::Agent(line));
                        }
                    } else {
                        self.dropped += 1;
                    }
                    return;
                }
                if let Some(s) = session_of(n.params.as_ref()) {
                    if self.sessions.get(&s).is_some_and(|&o| o != client) {
                        self.dropped += 1;
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
                    _ => self.dropped += 1,
                }
            }
        }
    }

    fn encode_to_agent(&mut self, msg: &Message<'_>, out: &mut Vec<Out>) {
        let mut line = Vec::new();
        match msg.encode(&mut line) {
            Ok(_) => out.push(Out::Agent(line)),
            Err(_) => self.dropped += 1,
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
        if pending >= MAX_PENDING_PER_CLIENT {
            let msg = format!("{pending} requests already pending, limit {MAX_PENDING_PER_CLIENT}");
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
                None if matches!(&*r.method, names::SESSION_LOAD | names::SESSION_RESUME) => {
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
        let RequestId::Number(n) = ours else { return };
        self.forwarded.insert(
            n,
            Forwarded {
                client,
                id: r.id.to_owned_id(),
                method: r.method.into_owned(),
                bound,
            },
        );
        if let Some(c) = self.clients.get_mut(&client) {
            c.pending += 1;
        }
        out.push(Out::Agent(line));
    }

    /// One line of the agent's stdout, routed to the client it concerns.
    ///
    /// `line` is one line without its `\n`, as the `LineSplitter` hands them
    /// out; anything holding a newline is dropped, so a client never gets
    /// two messages in one.
    pub fn handle_agent(&mut self, line: &str, now: Duration, out: &mut Vec<Out>) {
        if memchr::memchr(b'\n', line.as_bytes()).is_some() {
            self.dropped += 1;
            return;
        }
        let Ok(msg) = Message::decode(line) else {
            // Stray text on stdout (Gemini has printed some): not a message.
            self.dropped += 1;
            return;
        };
        match msg {
            Message::Response(Response { ref id, .. })
            | Message::Error(ErrorResponse { ref id, .. }) => {
                let Ok(done) = self.tracker.handle_response(id, now) else {
                    self.dropped += 1;
                    return;
                };
                let RequestId::Number(n) = done.id else {
                    return;
                };
                let Some(f) = self.forwarded.remove(&n) else {
                    return;
                };
                self.settle(&f, &msg);
                if let Some(c) = self.clients.get_mut(&f.client) {
                    c.pending = c.pending.saturating_sub(1);
                } else {
                    // The requester left.
                    self.dropped += 1;
                    return;
                }
                let back = match msg {
                    Message::Response(r) => Message::Response(Response {
                        id: f.id.clone(),
                        result: r.result,
                    }),
                    Message::Error(e) => Message::Error(ErrorResponse {
                        id: f.id.clone(),
                        error: e.error,
                    }),
                    _ => return,
                };
                let mut text = Vec::with_capacity(line.len().saturating_add(16));
                if back.encode(&mut text).is_ok() {
                    out.push(Out::Client(f.client, line_to_text(text)));
                }
            }
            Message::Request(ref r) => {
                let owner =
                    session_of(r.params.as_ref()).and_then(|s| self.sessions.get(&s).copied());
                let Some(owner) = owner else {
                    self.answer_agent_for_gone(&r.id, &r.method, out);
                    return;
                };
                if self.tracker.handle_peer_request(&r.id, &r.method).is_err() {
                    let msg = format!("request id {} is already pending or too many are", r.id);
                    let mut line = Vec::new();
                    let _ = encode_error(
                        &r.id,
                        &RpcError::new(ErrorCode::INVALID_REQUEST, msg),
                        &mut line,
                    );
                    out.push(Out::Agent(line));
                    return;
                }
                self.agent_requests.insert(
                    r.id.to_owned_id(),
                    AgentRequest {
                        client: owner,
                        method: r.method.to_string(),
                    },
                );
                out.push(Out::Client(owner, line.to_owned()));
            }
            Message::Notification(ref n) => {
                if &*n.method == names::CANCEL_REQUEST {
                    let target = n
                        .params
                        .as_ref()
                        .and_then(|p| serde_json::from_str::<CancelRequestRef<'_>>(p.get()).ok())
                        .and_then(|c| {
                            self.agent_requests
                                .get(&c.request_id.to_owned_id())
                                .map(|a| a.client)
                        });
                    match target {
                        Some(c) => out.push(Out::Client(c, line.to_owned())),
                        None => self.dropped += 1,
                    }
                    return;
                }
                match session_field(n.params.as_ref()) {
                    SessionField::Id(s) => match self.sessions.get(&s) {
                        Some(&owner) => out.push(Out::Client(owner, line.to_owned())),
                        None => self.dropped += 1,
                    },
                    SessionField::Invalid => self.dropped += 1,
                    SessionField::Absent => {
                        for &c in self.clients.keys() {
                            out.push(Out::Client(c, line.to_owned()));
                        }
                    }
                }
            }
        }
    }

    /// Session bookkeeping when the agent answers a forwarded request.
    fn settle(&mut self, f: &Forwarded, msg: &Message<'_>) {
        match msg {
            Message::Response(r) => match f.method.as_str() {
                names::SESSION_NEW | "session/fork" => {
                    if let Some(s) = session_of(Some(&r.result)) {
                        if self.clients.contains_key(&f.client) {
                            self.sessions.insert(s, f.client);
                        }
                    }
                }
                names::SESSION_CLOSE | names::SESSION_DELETE => {}
                _ => {}
            },
            Message::Error(_) => {
                if let Some(s) = &f.bound {
                    if self.sessions.get(s) == Some(&f.client) {
                        self.sessions.remove(s);
                    }
                }
            }
            _ => {}
        }
    }

    /// Answers an agent request whose client is gone or unknown.
    fn answer_agent_for_gone(&mut self, id: &RequestId<'_>, method: &str, out: &mut Vec<Out>) {
        let mut line = Vec::new();
        if method == names::SESSION_REQUEST_PERMISSION {
            let result = serde_json::json!({"outcome": {"outcome": "cancelled"}});
            let _ = encode_response(id, &result, &mut line);
        } else {
            let msg = format!("no client is connected for this {method} request");
            let _ = encode_error(
                id,
                &RpcError::new(ErrorCode::INTERNAL_ERROR, msg),
                &mut line,
            );
        }
        out.push(Out::Agent(line));
    }

    /// An agent line over the size limit: if it answers a client's request,
    /// that client gets an error instead of waiting forever.
    pub fn agent_line_too_long(&mut self, err: &FrameError, now: Duration, out: &mut Vec<Out>) {
        let FrameError::LineTooLong {
            id: Some(PeekedId::Number(n)),
            is_request: false,
            limit,
            seen,
        } = *err
        else {
            self.dropped += 1;
            return;
        };
        if self
            .tracker
            .handle_response(&RequestId::Number(n), now)
            .is_err()
        {
            return;
        }
        let Some(f) = self.forwarded.remove(&n) else {
            return;
        };
        if let Some(c) = self.clients.get_mut(&f.client) {
            c.pending = c.pending.saturating_sub(1);
            let msg = format!("the agent's response of at least {seen} bytes exceeds the bridge's {limit}-byte limit");
            out.push(Out::Client(
                f.client,
                error_text(&f.id, ErrorCode::INTERNAL_ERROR, msg),
            ));
        }
    }

    /// `client` left: cancel its sessions, answer the agent's requests to it.
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
        // Responses to its forwarded requests are dropped when they come.
    }

    /// The agent process exited: fail what waits on it, tell every client.
    pub fn agent_exited(&mut self, status: &str, restart_in: Duration, out: &mut Vec<Out>) {
        self.agent_up = false;
        let mut forwarded: Vec<(i64, Forwarded)> = self.forwarded.drain().collect();
        forwarded.sort_by_key(|(n, _)| *n);
        for (_, f) in forwarded {
            if let Some(c) = self.clients.get_mut(&f.client) {
                c.pending = c.pending.saturating_sub(1);
                let msg = format!("the agent exited ({status}) before answering {}", f.method);
                out.push(Out::Client(
                    f.client,
                    error_text(&f.id, ErrorCode::INTERNAL_ERROR, msg),
                ));
            }
        }
        self.tracker = Tracker::new().with_default_timeout(FORWARD_TIMEOUT);
        self.agent_requests.clear();
        let mut lost: HashMap<ClientId, Vec<String>> = HashMap::new();
        for (s, c) in self.sessions.drain() {
            lost.entry(c).or_default().push(s);
        }
        let restart_ms = u64::try_from(restart_in.as_millis()).unwrap_or(u64::MAX);
        let mut ids: Vec<ClientId> = self.clients.keys().copied().collect();
        ids.sort_unstable();
        for c in ids {
            let mut sessions = lost.remove(&c).unwrap_or_default();
            sessions.sort();
            let params = serde_json::json!({"status": status, "restartInMs": restart_ms, "lostSessions": sessions});
            out.push(Out::Client(
                c,
                bridge_notification("_bridge/agent_exited", params),
            ));
        }
    }

    /// A new agent process is up: clients may `initialize` and open
    /// sessions again.
    pub fn agent_started(&mut self, pid: u32, restarts: u64, out: &mut Vec<Out>) {
        let first = !self.agent_up && restarts == 0;
        self.agent_up = true;
        if first {
            return;
        }
        let mut ids: Vec<ClientId> = self.clients.keys().copied().collect();
        ids.sort_unstable();
        for c in ids {
            let params = serde_json::json!({"pid": pid, "restarts": restarts});
            out.push(Out::Client(
                c,
                bridge_notification("_bridge/agent_started", params),
            ));
        }
    }
}
