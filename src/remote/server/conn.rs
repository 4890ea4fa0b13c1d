//! Connections: the transport's rules for each message (size, the gate of
//! a WebSocket, a `POST`'s headers), their streams, and the flow control
//! of what is queued for them.

use alloc::borrow::ToOwned;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use core::time::Duration;

use super::http::{
    no_random_source, refusal, reply_text, unknown_connection, Naming, OVERSIZE_HEAD,
};
use super::stats::{self, Refusal, Stats};
use super::{
    Action, ConnectionId, HttpRefusal, OpenedStream, PostOutcome, Principal, Profile, Server,
    ServerConfig,
};
use crate::acp::{Message, RequestId};
use crate::remote::resume::Position;
use crate::remote::router::{ClientId, ClientText, ConnectError, Inbound, MessageKind};
use crate::remote::transport::{
    check_post_message, check_response_session, decode, decode_routed, oversize, Checked,
    CloseCode, Gate, Post, Routing, Stream, DEFAULT_MAX_ID_LENGTH,
};
use crate::remote::{Backlog, RemoteError};

/// The answer to a binary WebSocket message.
pub const BINARY_REFUSED: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"binary websocket messages are refused: send each json-rpc message as one text message"}}"#;

/// One connection of the server.
///
/// With feature `v2`, a client of one protocol version in front of an
/// agent of another is bridged by a translator, the connection's
/// `bridge` (`server/bridge.rs`): called on each line the client sends in
/// `Server::forward` (after the resume rules) and on each line for the
/// client in `Server::send` (before the resume rules and flow control).
/// The router then sees the client speak the agent's version. Without
/// the feature the router refuses such a client at `initialize` with
/// `-32022` (`router/dialect.rs`).
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) profile: Profile,
    pub(super) user: Option<String>,
    /// Its user's place in the server's count of queued bytes.
    pub(super) queued: super::hashed::Slot,
    /// Which agent serves it.
    pub(super) agent: Option<String>,
    pub(super) client: ClientId,
    /// What is queued for it, unsent, and since when nothing moved.
    pub(super) backlog: Backlog,
    gate: Gate,
    /// WebSocket: until the first message comes.
    first_deadline: Option<Duration>,
    /// Streamable HTTP: its streams.
    streams: BTreeMap<Stream, StreamState>,
    /// Streamable HTTP: the last reader numbered.
    readers: u64,
    /// Streamable HTTP: the last request, or the last reader leaving.
    last_seen: Duration,
    /// Streamable HTTP: the `initialize` whose answer is the opening
    /// `POST`'s body.
    initialize: Option<RequestId<'static>>,
    /// Its `Acp-Connection-Id`, when the server named it.
    pub(super) name: Option<String>,
    /// The longest message its client reads, when it said.
    pub(super) max_incoming: Option<usize>,
    /// Its translator, when its client's version is not its agent's.
    #[cfg(feature = "v2")]
    pub(super) bridge: super::bridge::Bridge,
}

/// A Streamable HTTP stream of a connection.
#[derive(Debug, Default)]
struct StreamState {
    /// The reader it has, when it has one.
    reader: Option<u64>,
    /// The last position put on its queue (by an event or a resume's
    /// replay): a message at or before it is on the queue or known to
    /// the client (an answer sent again at its position).
    top: Option<Position>,
}

impl Conn {
    /// Its `initialize` was refused for its version: it may ask again.
    pub(super) fn reopen(&mut self) {
        // Unless the refusal was taken and the `initialize` asked again
        // through a translator.
        #[cfg(feature = "v2")]
        if self.bridge.take_asked_again() {
            return;
        }
        self.gate.reopen();
    }

    pub(super) fn new(
        profile: Profile,
        (user, queued): (Option<String>, super::hashed::Slot),
        agent: Option<String>,
        client: ClientId,
        now: Duration,
        config: &ServerConfig,
    ) -> Self {
        let (max, first_deadline) = match profile {
            // Anything queued starts the stall clock: one message may take
            // `slow_client` to go out, no more.
            Profile::WebSocket => (1, Some(now.saturating_add(config.first_message))),
            Profile::StreamableHttp => (config.max_buffered_bytes.max(1), None),
        };
        Self {
            profile,
            user,
            queued,
            agent,
            client,
            backlog: Backlog::new(max, config.slow_client),
            gate: Gate::new(),
            first_deadline,
            streams: BTreeMap::new(),
            readers: 0,
            last_seen: now,
            initialize: None,
            name: None,
            max_incoming: None,
            #[cfg(feature = "v2")]
            bridge: super::bridge::Bridge::default(),
        }
    }

    /// Whether a message of `kind` is the answer to the pending
    /// `initialize`; it is no longer pending then.
    pub(super) fn answers_initialize(&mut self, kind: &MessageKind) -> bool {
        let Some(id) = &self.initialize else {
            return false;
        };
        let answers = kind.answers(id);
        if answers {
            self.initialize = None;
        }
        answers
    }

    /// Whether a message may go on `stream` (a new stream past the limit
    /// may not).
    pub(super) fn has_room_for(&self, stream: &Stream, max: usize) -> bool {
        self.streams.contains_key(stream) || self.streams.len() <= max
    }

    /// Whether a message at `position` on `stream` is on the stream's
    /// queue already, or known to its client: it is not queued again.
    pub(super) fn has_position(&self, stream: &Stream, position: Option<Position>) -> bool {
        let top = self.streams.get(stream).and_then(|s| s.top);
        matches!((position, top), (Some(at), Some(top)) if at <= top)
    }

    /// A message goes on `stream`'s queue, at `position`.
    pub(super) fn note_stream(&mut self, stream: &Stream, position: Option<Position>) {
        if self.profile == Profile::StreamableHttp {
            let state = self.streams.entry(stream.clone()).or_default();
            state.top = position.or(state.top);
        }
    }

    /// Its next deadline.
    pub(super) fn deadline(&self, config: &ServerConfig) -> Option<Duration> {
        let stall = self.backlog.stall_deadline();
        let idle = self.idle_deadline(config);
        [stall, self.first_deadline, idle]
            .into_iter()
            .flatten()
            .min()
    }

    fn idle_deadline(&self, config: &ServerConfig) -> Option<Duration> {
        let reading = self
            .streams
            .get(&Stream::Connection)
            .is_some_and(|s| s.reader.is_some());
        (self.profile == Profile::StreamableHttp && !reading)
            .then(|| self.last_seen.saturating_add(config.http_idle))
    }

    /// Why it must close at `now`, if it must.
    /// The refusal it counts as, when it is one (an idle connection
    /// closing is not).
    pub(super) fn expired(
        &self,
        now: Duration,
        config: &ServerConfig,
    ) -> Option<(Option<Refusal>, String)> {
        if self.backlog.is_stalled(now) {
            let why = match self.profile {
                Profile::WebSocket => "client too slow to receive".to_owned(),
                Profile::StreamableHttp => "client too slow to read its streams".to_owned(),
            };
            return Some((Some(Refusal::SlowClient), why));
        }
        if self.first_deadline.is_some_and(|d| now >= d) {
            let why = format!("no message within {} s", config.first_message.as_secs());
            return Some((Some(Refusal::FirstMessage), why));
        }
        if self.idle_deadline(config).is_some_and(|d| now > d) {
            return Some((None, "idle".to_owned()));
        }
        None
    }
}

impl Server {
    /// One WebSocket text message from `conn`: its size, the transport's
    /// gate, then its agent's router; whatever is refused is answered (and
    /// the connection closed when the rules say so).
    ///
    /// Hand the message over ([`ClientText::new`] with the WebSocket
    /// library's payload, or a `String`) rather than lend it (`&str`,
    /// copied): what goes to the agent unchanged (a prompt's params) is
    /// then written from its bytes ([`AgentLine`](crate::remote::AgentLine)).
    pub fn handle_text(&mut self, now: Duration, conn: ConnectionId, text: impl Into<ClientText>) {
        let held = text.into();
        let text = held.as_str();
        let limit = self.config.max_message;
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.first_deadline = None;
        if text.len() > limit {
            let head = text
                .as_bytes()
                .get(..OVERSIZE_HEAD)
                .unwrap_or(text.as_bytes());
            let e = oversize(head, text.len(), limit);
            self.refused(Refusal::Oversize, Some(conn));
            self.refuse_ws(now, conn, &e);
            return;
        }
        // Decoded once: the gate's rules, then the router, on the same
        // message.
        // `params.sessionId` read with the message, for the gate and the
        // router.
        let (checked, routing) = match decode_routed(text) {
            Ok((m, routing)) => (c.gate.check_message(m, routing.session.as_ref()), routing),
            Err(e) => (Err(e), Routing::default()),
        };
        let inbound = Inbound {
            held: Some(&held),
            session: routing.session.as_ref(),
            head: routing.head,
        };
        match checked {
            Ok(Checked::Forward(message)) => self.forward(now, conn, text, inbound, message),
            Ok(Checked::Ignore) => {}
            Err(e) => {
                if e.close_code().is_some() {
                    self.refused(Refusal::Protocol, Some(conn));
                }
                self.refuse_ws(now, conn, &e);
            }
        }
    }

    /// A WebSocket message too large to read (over twice the limit): the
    /// connection closes with `1009`.
    pub fn handle_too_large(&mut self, now: Duration, conn: ConnectionId, size: usize) {
        let limit = self.config.max_message;
        let reason = format!("message of {size} bytes exceeds the {limit}-byte limit");
        self.close(now, conn, CloseCode::MESSAGE_TOO_BIG, reason);
        self.refused(Refusal::Oversize, Some(conn));
    }

    /// A binary WebSocket message: answered with `-32700`.
    pub fn handle_binary(&mut self, now: Duration, conn: ConnectionId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.first_deadline = None;
        }
        let kind = MessageKind::Answer(RequestId::Null);
        self.send(
            now,
            conn,
            Stream::Connection,
            BINARY_REFUSED.to_owned(),
            kind,
        );
    }

    fn refuse_ws(&mut self, now: Duration, conn: ConnectionId, e: &RemoteError) {
        let reply = reply_text(e);
        match e.close_code() {
            Some(code) => {
                let reply = reply.map(|(text, _)| text);
                self.close_with(now, conn, code, e.to_string(), reply);
            }
            None => {
                if let Some((reply, kind)) = reply {
                    self.send(now, conn, Stream::Connection, reply, kind);
                }
            }
        }
    }

    /// [`handle_post`](Self::handle_post) past the size limit: the
    /// transport's rules, then the router.
    pub(super) fn post(
        &mut self,
        now: Duration,
        principal: &Principal,
        conn: Option<ConnectionId>,
        session: Option<&str>,
        body: &str,
        naming: Naming,
    ) -> Result<PostOutcome, HttpRefusal> {
        let header = conn.map(|_| "");
        // Decoded once: the transport's rules, then the router.
        let message = decode(body).map_err(|e| refusal(&e))?;
        let post = check_post_message(message, header, session, DEFAULT_MAX_ID_LENGTH)
            .map_err(|e| refusal(&e))?;
        match (post, conn) {
            (Post::Initialize(r), _) => {
                if self
                    .conns
                    .values()
                    .filter(|c| c.profile == Profile::StreamableHttp)
                    .count()
                    >= self.config.max_http_connections
                {
                    self.refused(Refusal::HttpConnections, None);
                    return Err(HttpRefusal::text(503, "too many connections"));
                }
                if let Naming::NoSource = naming {
                    return Err(no_random_source());
                }
                let id = self
                    .open(now, Profile::StreamableHttp, principal)
                    .map_err(|e| HttpRefusal::text(e.http_status(), e.to_string()))?;
                if let Naming::Random(random) = naming {
                    self.name(id, random);
                }
                if let Some(c) = self.conns.get_mut(&id) {
                    c.initialize = Some(r.id.to_owned_id());
                }
                self.forward(now, id, body, Inbound::default(), Message::Request(r));
                Ok(PostOutcome::Opened(id))
            }
            (Post::Message { message, .. }, Some(conn)) => {
                let c = self
                    .conns
                    .get_mut(&conn)
                    .filter(|c| c.user == principal.user)
                    .ok_or_else(unknown_connection)?;
                c.last_seen = now;
                let (key, client) = (c.agent.clone(), c.client);
                if let Message::Response(_) | Message::Error(_) = &message {
                    // A reply to the agent names the session its request
                    // came on.
                    let expected = message.id().and_then(|id| {
                        self.agents
                            .get(&key)
                            .and_then(|a| a.router.request_session(client, id))
                    });
                    check_response_session(expected, session).map_err(|e| refusal(&e))?;
                }
                self.forward(now, conn, body, Inbound::default(), message);
                Ok(PostOutcome::Accepted)
            }
            (Post::Message { .. }, None) => Err(refusal(&RemoteError::MissingConnectionId)),
        }
    }

    /// The headers of a Streamable HTTP `POST` before its body is read:
    /// `Content-Type` must be `application/json` (parameters allowed).
    ///
    /// # Errors
    ///
    /// `415` otherwise.
    pub fn check_post_headers(content_type: Option<&str>) -> Result<(), HttpRefusal> {
        let json = content_type
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case(crate::remote::JSON_MIME_TYPE));
        if json {
            Ok(())
        } else {
            Err(HttpRefusal::text(
                415,
                "content-type must be application/json",
            ))
        }
    }

    /// The headers of a Streamable HTTP `GET`: `Accept` must include
    /// `text/event-stream`.
    ///
    /// # Errors
    ///
    /// `406` otherwise.
    pub fn check_get_headers(accept: Option<&str>) -> Result<(), HttpRefusal> {
        if accept.is_some_and(|a| a.contains(crate::remote::EVENT_STREAM_MIME_TYPE)) {
            Ok(())
        } else {
            Err(HttpRefusal::text(
                406,
                "accept must include text/event-stream",
            ))
        }
    }

    /// A Streamable HTTP `GET`: a reader for `conn`'s stream, or for the
    /// stream of `session` when the session is the connection's user's,
    /// or one it may reattach (never seen, and the agent is the user's
    /// own: the router's `may_reattach`).
    /// Give it back with [`handle_stream_closed`](Self::handle_stream_closed).
    ///
    /// The stream's queue goes to the new reader with the
    /// [`Action::Read`](super::Action::Read) this queues. With
    /// `last_event_id` (the `Last-Event-ID` header: the reader had every
    /// event up to that position) the stream is resumed: that action
    /// replaces what is queued with the events after it, and a reader the
    /// server still counts (its connection broke without a FIN) is
    /// replaced.
    ///
    /// # Errors
    ///
    /// The refusal: `404` for another user's session (or one never seen,
    /// on an agent that is not the user's own),
    /// `409` when the stream has a reader (and no `last_event_id`), `400`
    /// past the streams' limit; `400` for a `last_event_id` that is not a
    /// position, `409` for one the stream never reached or one older than
    /// the stream's log still holds (a gap: the client opens the stream
    /// without it and reloads the session).
    pub fn handle_stream_opened(
        &mut self,
        now: Duration,
        principal: &Principal,
        conn: ConnectionId,
        session: Option<&str>,
        last_event_id: Option<&str>,
    ) -> Result<OpenedStream, HttpRefusal> {
        let max = self.config.max_session_streams;
        let c = self
            .conns
            .get(&conn)
            .filter(|c| c.user == principal.user && c.profile == Profile::StreamableHttp)
            .ok_or_else(unknown_connection)?;
        let stream = match session {
            Some(s) => {
                let router = self.agents.get(&c.agent).map(|a| &a.router);
                // Its own, another of its user's, or one it may reattach
                // (a client may open a session's stream before it sends
                // the `session/load` whose history and answer come there,
                // as the official TypeScript SDK's client does).
                let mine = router
                    .is_some_and(|r| r.owner(s) == Some(c.client) || r.may_reattach(c.client, s));
                if !mine {
                    return Err(HttpRefusal::text(
                        404,
                        "unknown Acp-Session-Id: not a session of this user",
                    ));
                }
                Stream::Session(s.to_owned())
            }
            None => Stream::Connection,
        };
        let replace = match last_event_id {
            Some(id) => Some(self.http_replay(conn, &stream, id)?),
            None => None,
        };
        let Some(c) = self.conns.get_mut(&conn) else {
            return Err(unknown_connection());
        };
        if c.streams.len() > max && !c.streams.contains_key(&stream) {
            return Err(HttpRefusal::text(400, "too many session streams"));
        }
        let state = c.streams.entry(stream.clone()).or_default();
        if state.reader.is_some() && last_event_id.is_none() {
            return Err(HttpRefusal::text(409, "this stream already has a receiver"));
        }
        if let Some(replay) = &replace {
            // The queue becomes the replay: what the core queued before,
            // up to its last position (or the reader's), arrives no more.
            let had = last_event_id.and_then(|id| Position::parse(id).ok());
            let last = replay.last().map(|(at, _)| *at).or(had);
            state.top = state.top.max(last);
        }
        c.readers = c.readers.saturating_add(1);
        let reader = c.readers;
        state.reader = Some(reader);
        c.last_seen = now;
        self.actions.push_back(super::Action::Read {
            to: conn,
            stream: stream.clone(),
            reader,
            replace,
        });
        Ok(OpenedStream { stream, reader })
    }

    /// The reader `reader` of `stream` left (ignored when a newer reader
    /// took the stream over).
    pub fn handle_stream_closed(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        stream: &Stream,
        reader: u64,
    ) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.last_seen = now;
            if let Some(state) = c.streams.get_mut(stream) {
                if state.reader == Some(reader) {
                    state.reader = None;
                }
            }
        }
    }

    /// Whether `conn` is open and `principal`'s.
    pub fn is_connection_of(&self, conn: ConnectionId, principal: &Principal) -> bool {
        self.conns
            .get(&conn)
            .is_some_and(|c| c.user == principal.user)
    }

    /// A message `conn` may send on: to its agent's router, or into the
    /// queue of messages waiting for the agent to start.
    fn forward(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        text: &str,
        inbound: Inbound<'_>,
        message: Message<'_>,
    ) {
        if !self.conns.contains_key(&conn) {
            return;
        }
        let Some(message) = self.resume_inbound(now, conn, message) else {
            return;
        };
        #[cfg(feature = "v2")]
        if self.bridge_inbound(now, conn, text, &message) {
            return;
        }
        self.onward(now, conn, text, inbound, message);
    }

    /// [`forward`](Self::forward) past the resume rules and the bridge:
    /// the MCP rules, then the agent's router. `inbound` is what was
    /// learned of `text` on its way in.
    pub(super) fn onward(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        text: &str,
        inbound: Inbound<'_>,
        message: Message<'_>,
    ) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let key = c.agent.clone();
        let rewritten = match self.mcp_inbound(now, conn, &message) {
            super::mcp::Inbound::Pass => None,
            super::mcp::Inbound::Taken => return,
            super::mcp::Inbound::Rewritten(text) => Some(text),
        };
        let (text, inbound, message) = match &rewritten {
            Some(new) => match decode(new) {
                Ok(m) => (new.as_str(), Inbound::default(), m),
                Err(_) => (text, inbound, message),
            },
            None => (text, inbound, message),
        };
        if let Message::Request(req) = &message {
            if req.method == crate::acp::names::SESSION_PROMPT {
                self.turn(&key, conn, req, inbound.head, now);
            }
        }
        self.client_message(&key, conn, text, inbound, message, now);
    }

    /// Refuses a client request when its agent may not start: the pool
    /// runs as many agents as it may, each with a connection.
    pub(super) fn refuse_full(&mut self, now: Duration, conn: ConnectionId, message: &Message<'_>) {
        let Message::Request(req) = message else {
            return;
        };
        let max = self.config.max_agents;
        let user = self
            .conns
            .get(&conn)
            .and_then(|c| c.user.clone())
            .unwrap_or_default();
        let msg = format!(
            "the bridge runs {max} agents, its limit (--max-agents), each with a connection: {user}'s agent starts once another user has none"
        );
        let session = crate::remote::session_field(req.params.as_ref()).into_id();
        let stream = crate::remote::error_stream(&req.method, session.as_deref());
        let text = super::error_answer(&req.id, super::AGENTS_FULL, msg);
        self.refused(Refusal::AgentsFull, Some(conn));
        self.send(now, conn, stream, text, MessageKind::answer(&req.id));
    }

    // The connection table: every change to `self.conns` is made in this
    // file, by the methods below and the rules above.

    /// A connection of `profile` opened by `principal`: the door of both
    /// profiles' openings ([`open_websocket`](Self::open_websocket), an
    /// `initialize` [`handle_post`](Self::handle_post)ed without a
    /// connection).
    ///
    /// # Errors
    ///
    /// [`ConnectError`]: no permission, or the user's connection limit.
    pub(super) fn open(
        &mut self,
        now: Duration,
        profile: Profile,
        principal: &Principal,
    ) -> Result<ConnectionId, ConnectError> {
        let key = self.agent_key(principal.user.as_deref());
        // The user's detached connections (waiting for their client to
        // resume) do not count: a client whose connection broke is never
        // refused for it when it comes back.
        let detached = self.detached_of(principal.user.as_deref(), &key);
        let id = ConnectionId(self.next_conn);
        let client = match self.attach(&key, principal, detached, id, now) {
            Ok(client) => client,
            Err(e) => {
                let reason = match e {
                    ConnectError::TooManyConnections { .. } => Refusal::UserConnections,
                    _ => Refusal::Permission,
                };
                self.refused(reason, None);
                return Err(e);
            }
        };
        self.next_conn = self.next_conn.wrapping_add(1);
        let queued = self
            .queued
            .slot_or_insert_with(principal.user.clone(), |_| 0);
        let conn = Conn::new(
            profile,
            (principal.user.clone(), queued),
            key,
            client,
            now,
            &self.config,
        );
        self.conns.insert(id, conn);
        stats::bump(&mut self.stats.connections, Stats::profile_index(profile));
        Ok(id)
    }

    /// Bytes of `conn`'s queue written to its client (or dropped): the
    /// counterpart of each [`Action::Send`].
    pub fn handle_sent(&mut self, now: Duration, conn: ConnectionId, bytes: usize) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let taken = bytes.min(c.backlog.bytes());
        // Never more than queued: the minimum above.
        let _ = c.backlog.taken(taken, now);
        super::release(&mut self.queued, c.queued, taken);
    }

    /// [`send`](Self::send) without the resume rules (a message already
    /// stamped, or given its position).
    pub(super) fn send_raw(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        stream: Stream,
        text: String,
        position: Option<Position>,
    ) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        // Never the answer to an opening `initialize`: `send_within_limit`
        // took that, and a message sent again from a log is not one.
        if c.has_position(&stream, position) {
            // Sent again at its position (an answer to a request sent
            // again): the stream's queue or its client has it.
            return;
        }
        let max = self.config.max_session_streams;
        if c.profile == Profile::StreamableHttp && !c.has_room_for(&stream, max) {
            self.close(
                now,
                conn,
                CloseCode::POLICY_VIOLATION,
                format!("more than {max} session streams"),
            );
            self.refused(Refusal::SessionStreams, Some(conn));
            return;
        }
        let queued = self.queued.at(c.queued).map_or(0, |(_, q)| *q);
        let limit = self.config.max_user_buffered_bytes;
        if queued != 0 && queued.saturating_add(text.len()) > limit {
            let reason = format!(
                "this user's connections hold more than {limit} bytes unread (--max-user-buffered-bytes)"
            );
            self.close(now, conn, CloseCode::POLICY_VIOLATION, reason);
            self.refused(Refusal::UserBuffered, Some(conn));
            return;
        }
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.backlog.queued(text.len(), now).is_err() {
            return;
        }
        c.note_stream(&stream, position);
        let more = queued.saturating_add(text.len());
        if let Some((_, q)) = self.queued.at_mut(c.queued) {
            *q = more;
        }
        self.actions.push_back(Action::Send {
            to: conn,
            stream,
            text,
            position,
        });
    }

    /// `conn`'s `initialize` was refused for its version: it may ask again.
    pub(super) fn reopen(&mut self, conn: ConnectionId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.reopen();
        }
    }

    /// Whether a message of `kind` answers `conn`'s pending `initialize`
    /// (the opening `POST`'s): it is no longer pending then.
    pub(super) fn answers_initialize(&mut self, conn: ConnectionId, kind: &MessageKind) -> bool {
        self.conns
            .get_mut(&conn)
            .is_some_and(|c| c.answers_initialize(kind))
    }

    /// Gives `conn` its `Acp-Connection-Id`; whether it is open.
    pub(super) fn set_name(&mut self, conn: ConnectionId, name: &str) -> bool {
        let Some(c) = self.conns.get_mut(&conn) else {
            return false;
        };
        c.name = Some(name.to_owned());
        true
    }

    /// The longest message `conn`'s client reads, on WebSocket.
    pub(super) fn set_max_incoming(&mut self, conn: ConnectionId, max: usize) {
        if let Some(c) = self.conns.get_mut(&conn) {
            if c.profile == Profile::WebSocket {
                c.max_incoming = Some(max);
            }
        }
    }

    /// The translator of the open connection `conn`.
    #[cfg(feature = "v2")]
    pub(super) fn bridge_of(&mut self, conn: ConnectionId) -> Option<&mut super::bridge::Bridge> {
        self.conns.get_mut(&conn).map(|c| &mut c.bridge)
    }

    /// Takes `conn` out of the connection table and releases what it held
    /// there: its name, its queued bytes, its place among its agent's
    /// connections waiting for a start (whose idle clock restarts now).
    /// Its router client is the caller's to disconnect or keep.
    pub(super) fn unplug(&mut self, now: Duration, conn: ConnectionId) -> Option<Conn> {
        let c = self.conns.remove(&conn)?;
        if let Some(name) = &c.name {
            self.names.remove(name);
        }
        super::release(&mut self.queued, c.queued, c.backlog.bytes());
        self.forget_waiting(&c.agent, conn, now);
        Some(c)
    }

    /// `conn` goes on as the router's `client` (a detached connection's,
    /// taken over), with its translator.
    pub(super) fn adopt(
        &mut self,
        conn: ConnectionId,
        client: ClientId,
        #[cfg(feature = "v2")] bridge: super::bridge::Bridge,
    ) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.client = client;
            #[cfg(feature = "v2")]
            {
                c.bridge = bridge;
            }
        }
    }

    #[cfg(test)]
    pub(super) fn pending_initialize(&self, conn: ConnectionId) -> bool {
        self.conns
            .get(&conn)
            .is_some_and(|c| c.initialize.is_some())
    }

    #[cfg(test)]
    pub(super) fn queued_for(&self, conn: ConnectionId) -> usize {
        self.conns.get(&conn).map_or(0, |c| c.backlog.bytes())
    }

    #[cfg(test)]
    pub(super) fn take_actions(&mut self) -> alloc::vec::Vec<super::Action> {
        self.actions.drain(..).collect()
    }
}
