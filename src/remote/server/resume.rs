//! Resumable delivery: the [`ResumeLog`]s of a [`Server`] and the hooks
//! its connections go through.
//!
//! On Streamable HTTP, every connection has positions, asked for or not
//! (SSE's own mechanism, which a client that does not know it ignores);
//! an `initialize` that asks (`params._meta["acp-codec/resume"]`) gets
//! the capability, `{"budget":N}`, in its answer's `_meta`:
//!
//! - Every event on a connection's stream or a session's stream carries
//!   its position as the SSE `id:` ([`Action::Send`](super::Action::Send)'s `position`): one
//!   log for the connection's stream, one per session.
//! - A `GET` that reopens a stream with `Last-Event-ID: N` gets exactly
//!   the events after `N` from the log, to write before anything new
//!   (they replace what the caller still holds for the stream), and takes
//!   the stream over from a reader the server still thinks is there (a
//!   connection that broke without a FIN). A `Last-Event-ID` that is not
//!   a position is `400`; one the stream never reached, or one older
//!   than what the log still holds (a gap), is `409`: the client opens
//!   the stream afresh and reloads the session (`session/load`).
//! - A request sent again (the client did not learn whether its `POST`
//!   arrived) runs once: the same id (or idempotency key) while it runs
//!   is dropped (its answer will come); after it was answered, while the
//!   log holds its answer, it is dropped too (the answer is on its stream
//!   at its position: a message at a position its stream was given
//!   already is never queued again, and a resume of the stream brings it
//!   back), after that it is answered with [`RESUME_GAP`] (`-32012`): it
//!   ran, and is never run twice.
//! - A `GET` that reopens a stream gives its queue to the new reader
//!   ([`Action::Read`](super::Action::Read)); one that resumes it
//!   replaces what the queue holds with the replay, and nothing the core
//!   queued before reaches the queue after it.
//!
//! On WebSocket, for a client that asks:
//!
//! - A WebSocket client whose `initialize` asks for positions
//!   (`params._meta["acp-codec/resume"]`) gets the capability in the
//!   answer's `_meta`, with its connection's id; from then on every
//!   message to it is [`stamp`]ed with its stream and position and kept:
//!   one log for the connection's own stream, one per session.
//! - When such a connection breaks ([`Ending::Broken`](super::Ending::Broken):
//!   no close frame), it is *detached*, not closed: its
//!   sessions, the requests it has in flight and the agent's requests to
//!   it (a permission request) stay open, and what the agent sends goes
//!   into the logs, for [`DEFAULT_RESUME_GRACE`]. After that it leaves as
//!   any connection does. A clean close (a close frame) leaves at once.
//! - A new connection's `initialize` with the cursor
//!   `{"connection":"N","position":p}` takes the detached connection `N`
//!   over (same user): it gets the connection stream's messages after
//!   `p` before the `initialize` answer, and everything the old one had.
//!   Its sessions' messages wait until the client names its position on
//!   each (`session/resume` or `session/load` with `{"position":p}`): the
//!   server answers that itself, after the missed messages; a gap is the
//!   error [`RESUME_GAP`] followed by what is owed. A v2 client names it
//!   in `session/resume`'s `replayFrom`,
//!   `{"type":"_acp-codec/cursor","position":p}` ([`REPLAY_CURSOR`]), and
//!   gets the session's last `state_update` again before the server's
//!   answer (idle when the agent never sent one), as a v2 agent sends
//!   after its own replay; a resume the server leaves to the agent goes
//!   without that `replayFrom` (the agent would refuse it), and
//!   `{"type":"start"}` is the agent's, passed on.
//! - A `session/prompt` retried with the same id (or idempotency key,
//!   within its session) runs once, by the same [`Ledger`] as a
//!   Streamable HTTP connection's requests: while it runs the retry is
//!   dropped, once answered the answer is sent again at its position, or
//!   [`RESUME_GAP`] once the log no longer holds it.
//!
//! For a client that reattaches a session without positions (a
//! `session/load` or `session/resume` after its connection left, on either
//! profile), what the agent sent for the session while no client held it
//! (the router's [`Out::Missed`]) is kept in a [`ResumeLog`] per session,
//! within the same budget, and handed over when the router says the
//! reattach succeeded ([`Out::Reattached`]): a resume from the first
//! position kept, on the session's stream before the answer,
//! [`REPLAY_DROPPED`](super::REPLAY_DROPPED) first when the budget
//! dropped some.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

use super::{ConnectionId, HttpRefusal, Profile, Server};
use crate::acp::{Message, Request};
#[cfg(doc)]
use crate::remote::resume::REPLAY_CURSOR;
use crate::remote::resume::{
    capability, stamp, Admit, Cursor, Kind, Ledger, Position, PromptKey, ResumeError, ResumeLog,
    DEFAULT_RESUME_GRACE, META_RESUME, RESUME_GAP,
};
use crate::remote::router::{ClientId, MessageKind, Out};
use crate::remote::transport::{decode, Stream};
use crate::version::Dialect;

/// The resume state of a [`Server`]: one [`Delivery`] per connection
/// that has positions (either profile), one [`SessionLog`] per session
/// stream, the WebSocket connections waiting for their client, and what
/// each session whose client left missed.
#[derive(Debug, Default)]
pub(super) struct Resumes {
    /// Connections with positions: every Streamable HTTP one, the
    /// WebSocket ones that asked.
    conns: BTreeMap<ConnectionId, Delivery>,
    /// Session streams, by agent and session.
    sessions: BTreeMap<(Option<String>, String), SessionLog>,
    /// WebSocket connections whose client left, waiting for it.
    detached: BTreeMap<ConnectionId, Detached>,
    /// Sessions whose client left (the router hands their messages out,
    /// [`Out::Missed`]), by agent and session: for the client that
    /// reattaches them without positions.
    missed: BTreeMap<(Option<String>, String), Missed>,
}

/// What a session missed while no client held it: its log (positions
/// from the first message missed, within the budget), and what the budget
/// dropped. A client that reattaches the session without positions
/// resumes from the first position kept.
#[derive(Debug)]
struct Missed {
    log: ResumeLog,
    /// Messages larger than the whole budget: dropped alone (what was
    /// kept before them stays), counted here.
    too_large: u64,
    /// Bytes of every message dropped.
    dropped_bytes: u64,
}

impl Missed {
    fn push(&mut self, text: &str) {
        let len = text.len();
        let wide = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        if len > self.log.budget() {
            self.too_large = self.too_large.saturating_add(1);
            self.dropped_bytes = self.dropped_bytes.saturating_add(wide(len));
            return;
        }
        // Fits: the log pushes its oldest out as the budget needs.
        let before = self.log.bytes().saturating_add(len);
        let _ = self.log.push(Kind::Plain, text);
        let evicted = before.saturating_sub(self.log.bytes());
        self.dropped_bytes = self.dropped_bytes.saturating_add(wide(evicted));
    }

    /// Messages dropped: those before the first kept, and those too large.
    fn dropped(&self) -> u64 {
        let before_first = self.log.first_kept().0.saturating_sub(1);
        before_first.saturating_add(self.too_large)
    }
}

/// One connection's delivery, either profile: its own stream's log, and
/// its ledger of requests so that one sent again runs once.
#[derive(Debug)]
struct Delivery {
    /// The connection's own stream.
    log: ResumeLog,
    /// Requests run, by key (a WebSocket connection's `session/prompt`s,
    /// keyed within their session; a Streamable HTTP connection's every
    /// request, once its client asked for positions).
    ledger: Ledger,
    /// The `initialize` whose answer gets the capability.
    initialize: Option<PromptKey>,
    /// The client asked for positions: it resends what it did not see
    /// answered, so a request sent again is a retry (run once). A
    /// Streamable HTTP client that did not ask may reuse an id once its
    /// request is answered, as JSON-RPC lets it: each of its requests runs.
    retries: bool,
    /// WebSocket: the id the client names it by (the first connection's,
    /// kept by every connection that takes it over); `None` on
    /// Streamable HTTP, which never detaches.
    id: Option<u64>,
    /// WebSocket: sessions whose messages wait for the client's position.
    held: BTreeSet<String>,
}

impl Delivery {
    fn new(budget: usize) -> Self {
        Self {
            log: ResumeLog::new(budget),
            ledger: Ledger::default(),
            initialize: None,
            retries: false,
            id: None,
            held: BTreeSet::new(),
        }
    }
}

#[derive(Debug)]
struct SessionLog {
    log: ResumeLog,
    /// The connection the last message was for.
    conn: ConnectionId,
    /// v2: the last `state_update` sent for the session, as sent (a
    /// resume the server answers repeats it before its answer).
    state: Option<String>,
}

#[derive(Debug)]
struct Detached {
    user: Option<String>,
    agent: Option<String>,
    client: ClientId,
    opted: Delivery,
    /// Its translator: what the agent sends meanwhile is translated into
    /// the logs, and the connection that takes it over goes on with it.
    #[cfg(feature = "v2")]
    bridge: super::bridge::Bridge,
}

/// Whether a message of `kind` must survive a gap: an answer, or a
/// request of the agent.
fn kind_of(kind: &MessageKind) -> Kind {
    match kind {
        MessageKind::Notification => Kind::Plain,
        MessageKind::Request(_) | MessageKind::Answer(_) => Kind::Owed,
    }
}

/// The key of the request a message of `kind` answers, when it answers
/// one.
fn answered(kind: &MessageKind) -> Option<PromptKey> {
    kind.answered().map(|id| PromptKey::of(id, None))
}

/// The log of `session` of `agent`'s, made with `budget` when new; its
/// messages now go to `conn`.
fn session_log<'s>(
    sessions: &'s mut BTreeMap<(Option<String>, String), SessionLog>,
    agent: Option<String>,
    session: &str,
    conn: ConnectionId,
    budget: usize,
) -> &'s mut SessionLog {
    let entry = sessions
        .entry((agent, session.to_owned()))
        .or_insert_with(|| SessionLog {
            log: ResumeLog::new(budget),
            conn,
            state: None,
        });
    entry.conn = conn;
    entry
}

fn params_text<'r>(req: &'r Request<'_>) -> Option<&'r str> {
    req.params.as_ref().map(|p| p.get())
}

fn asks_for_positions(params: Option<&str>) -> bool {
    let Some(params) = params else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(params)
        .ok()
        .and_then(|v| v.get("_meta")?.get(META_RESUME).map(|_| ()))
        .is_some()
}

/// The longest params of a v2 `state_update` looked into.
const STATE_UPDATE_PARAMS: usize = 4096;

/// Whether `text`, a notification, is a v2 `state_update` (decoded
/// only when short: a state update is).
fn is_state_update(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        update: Update<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Update<'a> {
        #[serde(rename = "sessionUpdate", borrow)]
        kind: alloc::borrow::Cow<'a, str>,
    }
    if text.len() > 2 * STATE_UPDATE_PARAMS {
        return false;
    }
    let Ok(Message::Notification(n)) = decode(text) else {
        return false;
    };
    let Some(params) = n.params.as_ref().map(|p| p.get()) else {
        return false;
    };
    n.method == crate::acp::names::SESSION_UPDATE
        && params.len() <= STATE_UPDATE_PARAMS
        && serde_json::from_str::<Params<'_>>(params).is_ok_and(|p| p.update.kind == "state_update")
}

/// A v2 `state_update` saying `session` is idle: the state of a session
/// whose agent never said otherwise through this server.
fn idle_state(session: &str) -> String {
    let params = serde_json::json!({
        "sessionId": session,
        "update": {"sessionUpdate": "state_update", "state": "idle"},
    });
    serde_json::json!({"jsonrpc": "2.0", "method": "session/update", "params": params}).to_string()
}

/// A v2 `session/resume` without its `replayFrom` (the rest of its
/// params as sent). The router re-encodes a request from its params, so
/// the text it came as does not matter.
fn without_replay_from(message: Message<'_>) -> Message<'_> {
    let Message::Request(req) = message else {
        return message;
    };
    let rewritten = req
        .params
        .as_ref()
        .and_then(|p| {
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(p.get()).ok()
        })
        .and_then(|mut params| {
            params.remove("replayFrom");
            crate::acp::RawJson::from_string(serde_json::Value::Object(params).to_string()).ok()
        });
    match rewritten {
        Some(params) => Message::Request(Request {
            params: Some(params),
            ..req
        }),
        None => Message::Request(req),
    }
}

/// `answer` (an `initialize` result) with `member` added to its result's
/// `_meta`.
fn with_capability(answer: &str, member: &str) -> Option<String> {
    let mut value: serde_json::Value = serde_json::from_str(answer).ok()?;
    let extra: serde_json::Value = serde_json::from_str(&format!("{{{member}}}")).ok()?;
    let result = value.get_mut("result")?.as_object_mut()?;
    let meta = result
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    let meta = meta.as_object_mut()?;
    if let serde_json::Value::Object(extra) = extra {
        meta.extend(extra);
    }
    Some(value.to_string())
}

/// The answer to a `GET` whose `Last-Event-ID` cannot be resumed from.
fn refuse_resume(e: &ResumeError) -> HttpRefusal {
    let body = match e {
        ResumeError::BadCursor => {
            format!("Last-Event-ID is not a position of this stream: {e}")
        }
        _ => format!(
            "{e}: open the stream without Last-Event-ID, and load the session again (session/load) to see what was lost"
        ),
    };
    HttpRefusal::text(e.http_status(), body)
}

fn error_text(req: &Request<'_>, e: &ResumeError) -> String {
    super::error_answer(&req.id, e.code(), e.to_string())
}

fn empty_result(req: &Request<'_>) -> String {
    let mut line = Vec::new();
    let _ = crate::acp::encode_response(&req.id, &serde_json::Map::new(), &mut line);
    String::from_utf8_lossy(line.trim_ascii_end()).into_owned()
}

impl Server {
    /// The version `conn`'s client speaks: its own when it is bridged to
    /// an agent of another, else the one its router reads.
    fn client_dialect(
        &self,
        conn: ConnectionId,
        agent: &Option<String>,
        client: ClientId,
    ) -> Option<Dialect> {
        #[cfg(feature = "v2")]
        if let Some(d) = self
            .conns
            .get(&conn)
            .and_then(|c| c.bridge.client_dialect())
        {
            return Some(d);
        }
        #[cfg(not(feature = "v2"))]
        let _ = conn;
        self.agents
            .get(agent)
            .and_then(|a| a.router.dialect_of(client))
    }

    /// The translator of the detached connection `conn`.
    #[cfg(feature = "v2")]
    pub(super) fn resume_detached_bridge(
        &mut self,
        conn: ConnectionId,
    ) -> Option<&mut super::bridge::Bridge> {
        self.resume.detached.get_mut(&conn).map(|d| &mut d.bridge)
    }

    /// The agent and the router's client of the detached connection
    /// `conn`.
    #[cfg(feature = "v2")]
    pub(super) fn resume_detached_client(
        &self,
        conn: ConnectionId,
    ) -> Option<(&Option<String>, ClientId)> {
        self.resume
            .detached
            .get(&conn)
            .map(|d| (&d.agent, d.client))
    }

    /// A request of `conn` before it goes to the router: the resume rules
    /// take what is theirs (`None`), the rest goes on.
    pub(super) fn resume_inbound<'m>(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        message: Message<'m>,
    ) -> Option<Message<'m>> {
        let Message::Request(req) = &message else {
            return Some(message);
        };
        let (profile, agent, client) = match self.conns.get(&conn) {
            Some(c) => (c.profile, c.agent.clone(), c.client),
            None => return Some(message),
        };
        let params = params_text(req);
        let method: &str = &req.method;
        if profile == Profile::StreamableHttp {
            return self.http_inbound(now, conn, agent, message);
        }
        if method == crate::acp::names::INITIALIZE {
            if let Some(opted) = self.resume.conns.get_mut(&conn) {
                // Another `initialize` after a refused one (its version):
                // the connection's stream and its positions go on.
                opted.initialize = Some(PromptKey::of(&req.id, None));
                return Some(message);
            }
            // No budget, no log: the server does not resume.
            if profile != Profile::WebSocket
                || self.config.replay_bytes == 0
                || !asks_for_positions(params)
            {
                return Some(message);
            }
            let budget = self.config.replay_bytes;
            let mut opted = Delivery {
                initialize: Some(PromptKey::of(&req.id, None)),
                retries: true,
                id: Some(conn.0),
                ..Delivery::new(budget)
            };
            let cursor = params.and_then(|p| Cursor::from_params(p).ok().flatten());
            // A cursor that names a stream (a reconnect, not a first
            // connection).
            let wanted = cursor
                .as_ref()
                .is_some_and(|c| c.position > Position::START || c.connection.is_some());
            let adopted = cursor.as_ref().and_then(|c| {
                let named: u64 = c.connection.as_deref()?.parse().ok()?;
                let old = self
                    .resume
                    .detached
                    .iter()
                    .find(|(_, d)| d.opted.id == Some(named))
                    .map(|(id, _)| *id)?;
                Some((old, c.position))
            });
            let mut replay = Vec::new();
            if wanted && adopted.is_none() {
                // The stream it names is gone (its grace ended, or another
                // server's): positions would start again, under the
                // client's. No positions: the client learns it cannot
                // resume, and sees every message.
                self.log(format!(
                    "connection {} names a connection stream no longer kept: not resumable",
                    conn.0
                ));
                return Some(message);
            }
            if let Some((old, after)) = adopted {
                if let Some(d) = self.take_detached(now, old, conn, &agent, client) {
                    opted.id = d.opted.id;
                    opted.log = d.opted.log;
                    opted.ledger = d.opted.ledger;
                    for ((_, s), log) in &mut self.resume.sessions {
                        if log.conn == old {
                            log.conn = conn;
                            opted.held.insert(s.clone());
                        }
                    }
                    // A gap on the connection's stream: what is owed still
                    // comes, the rest is the client's to recover.
                    let gap = match opted.log.resume(after) {
                        Ok(missed) => {
                            replay.extend(missed.map(|(p, t)| stamp(t, None, p)));
                            false
                        }
                        Err(_) => true,
                    };
                    self.count_resume(gap);
                    if gap {
                        replay.extend(opted.log.owed_after(after).map(|(p, t)| stamp(t, None, p)));
                    }
                    self.log(format!(
                        "connection {} resumes connection {}",
                        conn.0, old.0
                    ));
                }
            }
            self.resume.conns.insert(conn, opted);
            for text in replay {
                let text = self.replay_within_limit(conn, &Stream::Connection, text);
                self.send_raw(now, conn, Stream::Connection, text, None);
            }
            return Some(message);
        }
        if !self.resume.conns.contains_key(&conn) {
            return Some(message);
        }
        let Some(session) = crate::remote::session_field(req.params.as_ref()).into_id() else {
            return Some(message);
        };
        let session: String = session.into_owned();
        // The client's own version (a bridged client's is not its agent's).
        let dialect = self.client_dialect(conn, &agent, client);
        let v2 = dialect == Some(Dialect::V2);
        let table = crate::remote::routing::table(dialect.unwrap_or(Dialect::V1));
        if table.is_reattach(method) {
            // v1: the cursor in `_meta`; v2: `replayFrom` of the server's
            // own type.
            let read = if v2 {
                Cursor::from_replay_from
            } else {
                Cursor::from_params
            };
            let cursor = match params.map(read) {
                Some(Ok(Some(c))) => c,
                _ => {
                    // No position: the client takes the session as the
                    // agent gives it now, its messages (the answer among
                    // them) wait for nothing.
                    if let Some(o) = self.resume.conns.get_mut(&conn) {
                        o.held.remove(&session);
                    }
                    return Some(message);
                }
            };
            let handled = self.reattach(now, conn, &agent, client, req, &session, cursor.position);
            if handled {
                return None;
            }
            // The server replayed what it kept: a v2 agent resumes without
            // a replay (it would refuse the server's cursor).
            return Some(if v2 {
                without_replay_from(message)
            } else {
                message
            });
        }
        if method == crate::acp::names::SESSION_PROMPT {
            let key = PromptKey::of(&req.id, params).within(&session);
            if !self.admit(now, conn, &agent, req, key) {
                return None;
            }
        }
        Some(message)
    }

    /// A reattach with a cursor: the missed messages first; then the
    /// answer, the server's own when this connection holds the session
    /// (`true`: the request is handled), else the agent's. A gap is the
    /// error [`RESUME_GAP`], then what is owed.
    #[allow(clippy::too_many_arguments)]
    fn reattach(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        agent: &Option<String>,
        client: ClientId,
        req: &Request<'_>,
        session: &str,
        after: Position,
    ) -> bool {
        let holds = self
            .agents
            .get(agent)
            .is_some_and(|a| a.router.owner(session) == Some(client));
        let v2 = self.client_dialect(conn, agent, client) == Some(Dialect::V2);
        let key = (agent.clone(), session.to_owned());
        let Some(entry) = self.resume.sessions.get_mut(&key) else {
            if after == Position::START {
                // Nothing kept, nothing received: the agent answers.
                return false;
            }
            // Positions the server no longer knows: lost.
            let e = ResumeError::Ahead {
                after,
                last: Position::START,
            };
            self.count_resume(true);
            let text = error_text(req, &e);
            self.send_raw(now, conn, Stream::Session(session.to_owned()), text, None);
            return true;
        };
        entry.conn = conn;
        let stream = Stream::Session(session.to_owned());
        let mut out = Vec::new();
        let gap = match entry.log.resume(after) {
            Ok(missed) => {
                out.extend(missed.map(|(p, t)| stamp(t, Some(session), p)));
                None
            }
            Err(e) => Some(e),
        };
        let counted = gap.is_some();
        let handled = match gap {
            None => {
                if holds {
                    if v2 {
                        // v2: the session's state as it is now, after the
                        // replay and before the answer (what an agent
                        // sends after its own replay).
                        let state = entry.state.clone().unwrap_or_else(|| idle_state(session));
                        let at = entry.log.push(Kind::Plain, &state);
                        out.push(stamp(&state, Some(session), at));
                    }
                    let answer = empty_result(req);
                    let at = entry.log.push(Kind::Owed, &answer);
                    out.push(stamp(&answer, Some(session), at));
                }
                holds
            }
            Some(e) => {
                out.push(error_text(req, &e));
                out.extend(
                    entry
                        .log
                        .owed_after(after)
                        .map(|(p, t)| stamp(t, Some(session), p)),
                );
                true
            }
        };
        if let Some(o) = self.resume.conns.get_mut(&conn) {
            o.held.remove(session);
        }
        self.count_resume(counted);
        for text in out {
            let text = self.replay_within_limit(conn, &stream, text);
            self.send_raw(now, conn, stream.clone(), text, None);
        }
        handled
    }

    /// Takes the detached connection `old` over for `conn` (same user,
    /// same agent): `conn` becomes the router's client `old` was.
    fn take_detached(
        &mut self,
        now: Duration,
        old: ConnectionId,
        conn: ConnectionId,
        agent: &Option<String>,
        client: ClientId,
    ) -> Option<Detached> {
        let user = self.conns.get(&conn)?.user.clone();
        let d = self.resume.detached.get(&old)?;
        if d.user != user || &d.agent != agent {
            return None;
        }
        #[cfg_attr(not(feature = "v2"), allow(unused_mut))]
        let mut d = self.resume.detached.remove(&old)?;
        self.adopt(
            conn,
            d.client,
            #[cfg(feature = "v2")]
            core::mem::take(&mut d.bridge),
        );
        if !self.rebind(agent, client, d.client, conn, now) {
            return None;
        }
        Some(d)
    }

    /// A message for `conn` before it is queued: kept and stamped when
    /// the connection asked for positions; `None` when it must not go out
    /// now (the connection is detached, or its session waits for the
    /// client's position).
    pub(super) fn resume_outbound(
        &mut self,
        conn: ConnectionId,
        stream: &Stream,
        text: String,
        kind: &MessageKind,
    ) -> Option<(String, Option<Position>)> {
        if self
            .conns
            .get(&conn)
            .is_some_and(|c| c.profile == Profile::StreamableHttp)
        {
            return Some(self.http_outbound(conn, stream, text, kind));
        }
        let detached = self.resume.detached.contains_key(&conn);
        if !detached && !self.resume.conns.contains_key(&conn) {
            return self.conns.contains_key(&conn).then_some((text, None));
        }
        let agent = match self.resume.detached.get(&conn) {
            Some(d) => d.agent.clone(),
            None => self.conns.get(&conn)?.agent.clone(),
        };
        let budget = self.config.replay_bytes;
        let state = *kind == MessageKind::Notification && is_state_update(&text);
        let answered = answered(kind);
        let kind = kind_of(kind);
        let opted = match self.resume.detached.get_mut(&conn) {
            Some(d) => &mut d.opted,
            None => self.resume.conns.get_mut(&conn)?,
        };
        let text = match (&answered, &opted.initialize) {
            (Some(id), Some(init)) if id == init => {
                opted.initialize = None;
                let member = format!(
                    "{},\"connection\":\"{}\"}}",
                    capability(budget).trim_end_matches('}'),
                    opted.id.unwrap_or(conn.0)
                );
                with_capability(&text, &member).unwrap_or(text)
            }
            _ => text,
        };
        let (stamped, held, at) = match stream {
            Stream::Session(s) => {
                let held = opted.held.contains(s);
                let entry = session_log(&mut self.resume.sessions, agent, s, conn, budget);
                let at = entry.log.push(kind, &text);
                if state {
                    entry.state = Some(text.clone());
                }
                (stamp(&text, Some(s), at), held, at)
            }
            Stream::Connection => {
                let at = opted.log.push(kind, &text);
                (stamp(&text, None, at), false, at)
            }
        };
        if let Some(id) = &answered {
            opted.ledger.answered(id, stream, at);
        }
        (!detached && !held).then_some((stamped, None))
    }

    /// `conn` broke: when it is a WebSocket connection that asked for
    /// positions, it is detached instead of closed (`true`): its sessions
    /// and requests wait for the client.
    pub(super) fn resume_detach(&mut self, now: Duration, conn: ConnectionId) -> bool {
        // Streamable HTTP never detaches: only a WebSocket connection
        // with positions does.
        match self.resume.conns.get(&conn) {
            Some(d) if d.id.is_some() => {}
            _ => return false,
        }
        let Some(mut opted) = self.resume.conns.remove(&conn) else {
            return false;
        };
        let Some(c) = self.unplug(now, conn) else {
            return false;
        };
        opted.log.detach(now);
        let (user, agent) = (c.user.clone(), c.agent.clone());
        self.resume.detached.insert(
            conn,
            Detached {
                user: c.user,
                agent: c.agent,
                client: c.client,
                opted,
                #[cfg(feature = "v2")]
                bridge: c.bridge,
            },
        );
        // Detached connections do not count toward the user's connection
        // limit (see `open`); as many as it are kept, the oldest leaves
        // past that.
        while self.detached_of(user.as_deref(), &agent) > self.config.max_user_connections {
            let oldest = self
                .resume
                .detached
                .iter()
                .filter(|(_, d)| d.user == user && d.agent == agent)
                .min_by_key(|(id, d)| (d.opted.log.deadline(), id.0))
                .map(|(id, _)| *id);
            match oldest {
                Some(old) => self.detached_leaves(now, old),
                None => break,
            }
        }
        true
    }

    /// `conn` closed for good (a clean close, or one that cannot
    /// resume): its logs go with it. A Streamable HTTP connection is
    /// never resumable past its end.
    pub(super) fn resume_forget(&mut self, conn: ConnectionId) {
        if self.resume.conns.remove(&conn).is_some() {
            self.resume.sessions.retain(|_, s| s.conn != conn);
        }
    }

    /// How many of `user`'s connections to `agent` are detached.
    pub(super) fn detached_of(&self, user: Option<&str>, agent: &Option<String>) -> usize {
        self.resume
            .detached
            .values()
            .filter(|d| d.user.as_deref() == user && &d.agent == agent)
            .count()
    }

    /// When the first detached connection's grace ends.
    pub(super) fn resume_deadline(&self) -> Option<Duration> {
        self.resume
            .detached
            .values()
            .filter_map(|d| d.opted.log.deadline())
            .min()
    }

    /// Detached connections whose grace is over leave as any connection
    /// does; their sessions' logs go with them.
    pub(super) fn resume_timeout(&mut self, now: Duration) {
        let gone: Vec<ConnectionId> = self
            .resume
            .detached
            .iter()
            .filter(|(_, d)| d.opted.log.expired(now))
            .map(|(id, _)| *id)
            .collect();
        for conn in gone {
            self.log(format!(
                "connection {} not resumed within {} s: it leaves",
                conn.0,
                DEFAULT_RESUME_GRACE.as_secs()
            ));
            self.detached_leaves(now, conn);
        }
    }

    /// The detached connection `conn` leaves as any connection does; its
    /// sessions' logs go with it.
    fn detached_leaves(&mut self, now: Duration, conn: ConnectionId) {
        let Some(d) = self.resume.detached.remove(&conn) else {
            return;
        };
        self.resume.sessions.retain(|_, s| s.conn != conn);
        self.agent_active(&d.agent, now);
        self.disconnect(&d.agent, d.client, now);
    }

    /// `conn`'s delivery, made at the configured budget.
    fn delivery(&mut self, conn: ConnectionId) -> &mut Delivery {
        let budget = self.config.replay_bytes;
        self.resume
            .conns
            .entry(conn)
            .or_insert_with(|| Delivery::new(budget))
    }

    /// Whether the request `req` of `conn`, with `key`, runs: the
    /// connection's ledger decides, for both profiles. One sent again
    /// while it runs is dropped (its answer will come); one answered gets
    /// that answer again from its stream's log, at its position, or
    /// [`RESUME_GAP`] once the log no longer holds it: it ran, and never
    /// runs twice.
    fn admit(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        agent: &Option<String>,
        req: &Request<'_>,
        key: PromptKey,
    ) -> bool {
        let Some(delivery) = self.resume.conns.get_mut(&conn) else {
            return true;
        };
        let stamped = delivery.id.is_some();
        let forgotten = delivery.ledger.forgotten_running();
        let again = match delivery.ledger.admit(PromptKey::of(&req.id, None), key) {
            Admit::Run => {
                if delivery.ledger.forgotten_running() > forgotten {
                    let max = delivery.ledger.max();
                    self.log(format!(
                        "connection {}: more than {max} requests running, the oldest forgotten by the retry ledger (sent again, it would run again)",
                        conn.0
                    ));
                }
                return true;
            }
            Admit::Running => None,
            // The session waits for the client's position: its resume
            // brings the answer back in its place.
            Admit::Answered(Stream::Session(s), _) if delivery.held.contains(&s) => None,
            Admit::Answered(stream, at) => {
                let log = match &stream {
                    Stream::Connection => Some(&delivery.log),
                    Stream::Session(s) => self
                        .resume
                        .sessions
                        .get(&(agent.clone(), s.clone()))
                        .map(|e| &e.log),
                };
                let kept = log.and_then(|l| l.message(at)).map(str::to_owned);
                Some((stream, at, kept))
            }
        };
        self.log(format!(
            "connection {}: {} sent again, not run twice",
            conn.0, req.method
        ));
        match again {
            Some((stream, at, Some(text))) if stamped => {
                let session = match &stream {
                    Stream::Session(s) => Some(s.as_str()),
                    Stream::Connection => None,
                };
                let text = stamp(&text, session, at);
                let text = self.replay_within_limit(conn, &stream, text);
                self.send_raw(now, conn, stream, text, None);
            }
            Some((stream, at, Some(text))) => self.send_raw(now, conn, stream, text, Some(at)),
            Some((stream, _, None)) => {
                // Its answer is no longer kept: it ran, and says so.
                let text = super::error_answer(
                    &req.id,
                    RESUME_GAP,
                    "request sent again: it ran already, and its answer is no longer kept"
                        .to_owned(),
                );
                self.send(now, conn, stream, text, MessageKind::answer(&req.id));
            }
            None => {}
        }
        false
    }

    /// A Streamable HTTP request before the router: on a connection whose
    /// `initialize` asked for positions, one sent again while it runs, or
    /// after it was answered, goes no further (`None`).
    fn http_inbound<'m>(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        agent: Option<String>,
        message: Message<'m>,
    ) -> Option<Message<'m>> {
        let Message::Request(req) = &message else {
            return Some(message);
        };
        if req.method == crate::acp::names::INITIALIZE {
            if self.config.replay_bytes > 0 && asks_for_positions(params_text(req)) {
                let delivery = self.delivery(conn);
                delivery.initialize = Some(PromptKey::of(&req.id, None));
                delivery.retries = true;
            }
            return Some(message);
        }
        if !self.resume.conns.get(&conn).is_some_and(|d| d.retries) {
            return Some(message);
        }
        let key = PromptKey::of(&req.id, params_text(req));
        if self.admit(now, conn, &agent, req, key) {
            Some(message)
        } else {
            None
        }
    }

    /// A message for a Streamable HTTP connection: kept in its stream's
    /// log, with the position that becomes its SSE `id:`.
    fn http_outbound(
        &mut self,
        conn: ConnectionId,
        stream: &Stream,
        text: String,
        kind: &MessageKind,
    ) -> (String, Option<Position>) {
        let Some(agent) = self.conns.get(&conn).map(|c| c.agent.clone()) else {
            return (text, None);
        };
        let budget = self.config.replay_bytes;
        let (kind, answered) = (kind_of(kind), answered(kind));
        let delivery = self
            .resume
            .conns
            .entry(conn)
            .or_insert_with(|| Delivery::new(budget));
        let log = match stream {
            Stream::Connection => &mut delivery.log,
            Stream::Session(s) => {
                &mut session_log(&mut self.resume.sessions, agent, s, conn, budget).log
            }
        };
        let at = log.push(kind, &text);
        if let Some(id) = &answered {
            delivery.ledger.answered(id, stream, at);
        }
        (text, Some(at))
    }

    /// `text`, a notification for `session` of `agent`'s whose client
    /// left: kept in the session's log of what it missed (nothing is kept
    /// without a budget).
    pub(super) fn keep_missed(&mut self, agent: &Option<String>, session: String, text: &str) {
        let budget = self.config.replay_bytes;
        if budget == 0 {
            return;
        }
        self.resume
            .missed
            .entry((agent.clone(), session))
            .or_insert_with(|| Missed {
                log: ResumeLog::new(budget),
                too_large: 0,
                dropped_bytes: 0,
            })
            .push(text);
    }

    /// The router's client `to` reattached `session` of `agent`'s without
    /// positions: a resume from the first position kept, for the router's
    /// output, on the session's stream (before the reattach's answer).
    /// [`REPLAY_DROPPED`](super::REPLAY_DROPPED) comes first when the budget
    /// dropped some.
    pub(super) fn take_missed(
        &mut self,
        agent: &Option<String>,
        to: ClientId,
        session: &str,
    ) -> Vec<Out> {
        let Some(mut missed) = self
            .resume
            .missed
            .remove(&(agent.clone(), session.to_owned()))
        else {
            return Vec::new();
        };
        let out = |text: String| Out::Client {
            to,
            stream: Stream::Session(session.to_owned()),
            text,
            kind: MessageKind::Notification,
        };
        let mut outs = Vec::new();
        let dropped = missed.dropped();
        if dropped > 0 {
            let params = serde_json::json!({
                "sessionId": session,
                "droppedMessages": dropped,
                "droppedBytes": missed.dropped_bytes,
            });
            let note = serde_json::json!({"jsonrpc": "2.0", "method": super::REPLAY_DROPPED, "params": params});
            outs.push(out(note.to_string()));
        }
        // Everything the log holds: what follows the last position
        // pushed out.
        let before = Position(missed.log.first_kept().0.saturating_sub(1));
        if let Ok(kept) = missed.log.resume(before) {
            outs.extend(kept.map(|(_, text)| out(text.to_owned())));
        }
        outs
    }

    /// What `session` of `agent`'s missed is wanted no more.
    pub(super) fn forget_missed(&mut self, agent: &Option<String>, session: String) {
        let key = (agent.clone(), session);
        let Some(missed) = self.resume.missed.remove(&key) else {
            return;
        };
        let kept = missed.log.bytes();
        if kept > 0 || missed.dropped_bytes > 0 {
            // Nothing will reach the client: its reattach, if any, finds
            // no log (the session left the router's list).
            self.log(format!(
                "session {}: what its client missed is forgotten unsent ({kept} bytes kept, {} bytes dropped before)",
                key.1, missed.dropped_bytes
            ));
        }
    }

    /// The answer to a Streamable HTTP connection's `initialize` (the
    /// opening `POST`'s body): with the capability in its result's
    /// `_meta` when the request asked for positions.
    pub(super) fn http_initialize_answer(&mut self, conn: ConnectionId, text: String) -> String {
        let asked = self
            .resume
            .conns
            .get_mut(&conn)
            .is_some_and(|d| d.initialize.take().is_some());
        if !asked {
            return text;
        }
        let member = capability(self.config.replay_bytes);
        with_capability(&text, &member).unwrap_or(text)
    }

    /// What a Streamable HTTP stream reopened with `Last-Event-ID` gets:
    /// the events after that position, oldest first (everything before
    /// it is acknowledged).
    ///
    /// # Errors
    ///
    /// `400` for a `Last-Event-ID` that is not a position, `409` for one
    /// the stream never reached or one older than the log holds (a gap).
    pub(super) fn http_replay(
        &mut self,
        conn: ConnectionId,
        stream: &Stream,
        last_event_id: &str,
    ) -> Result<Vec<(Position, String)>, HttpRefusal> {
        let after = Position::parse(last_event_id).map_err(|e| refuse_resume(&e))?;
        let agent = self.conns.get(&conn).map(|c| c.agent.clone());
        let log = match stream {
            Stream::Connection => self.resume.conns.get_mut(&conn).map(|d| &mut d.log),
            Stream::Session(s) => agent
                .and_then(|a| self.resume.sessions.get_mut(&(a, s.clone())))
                .map(|e| &mut e.log),
        };
        let Some(log) = log else {
            if after == Position::START {
                return Ok(Vec::new());
            }
            let e = ResumeError::Ahead {
                after,
                last: Position::START,
            };
            self.count_resume(true);
            return Err(refuse_resume(&e));
        };
        let missed: Result<Vec<(Position, String)>, _> = log
            .resume(after)
            .map(|missed| missed.map(|(p, t)| (p, t.to_owned())).collect());
        self.count_resume(missed.is_err());
        let missed = missed.map_err(|e| refuse_resume(&e))?;
        self.log(format!(
            "connection {}: a stream resumed after position {after}: {} events again",
            conn.0,
            missed.len()
        ));
        Ok(missed)
    }

    /// A resume from a position, with a gap (what the client missed no
    /// longer kept) or without.
    fn count_resume(&mut self, gap: bool) {
        let stats = &mut self.stats;
        stats.resumes = stats.resumes.saturating_add(1);
        if gap {
            stats.gaps = stats.gaps.saturating_add(1);
        }
    }

    /// Connections detached and waiting for their client.
    pub fn detached_connections(&self) -> usize {
        self.resume.detached.len()
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;
    use core::time::Duration;

    use super::super::{Action, AgentRun, Ending, Principal, Profile, Server, ServerConfig};
    use super::*;
    use crate::remote::resume::unstamp;

    /// Client id 3's prompt in session `s1`.
    const PROMPT_S1: &str = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;

    const OPT_IN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"acp-codec/resume":{}}}}"#;

    struct H {
        server: Server,
        run: AgentRun,
        now: Duration,
        /// The protocol version the client and the agent speak.
        version: u16,
    }

    impl H {
        /// A v2 client and agent.
        fn v2() -> Self {
            Self {
                version: 2,
                ..Self::new()
            }
        }

        fn new() -> Self {
            let mut server = Server::new(ServerConfig::new(), Duration::ZERO);
            let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
                panic!("no agent started")
            };
            server.handle_agent_started(Duration::ZERO, run, 1);
            let _ = server.take_actions();
            Self {
                server,
                run,
                now: Duration::ZERO,
                version: 1,
            }
        }

        fn open(&mut self) -> ConnectionId {
            self.server
                .open(self.now, Profile::WebSocket, &Principal::anonymous())
                .unwrap()
        }

        fn client(&mut self, c: ConnectionId, text: &str) -> Vec<Action> {
            self.server.handle_text(self.now, c, text);
            self.server.take_actions()
        }

        fn agent(&mut self, line: &str) -> Vec<Action> {
            self.server.handle_agent_line(self.now, self.run, line);
            self.server.take_actions()
        }

        /// The id the agent sees on the last line written to it.
        fn agent_id(acts: &[Action]) -> u64 {
            let line = writes(acts)
                .pop()
                .unwrap_or_else(|| panic!("nothing written to the agent: {acts:?}"));
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            v["id"].as_u64().unwrap()
        }

        /// The agent's answer to the `initialize` `acts` wrote to it, and
        /// what the core did with it.
        fn answer_initialize(&mut self, acts: &[Action]) -> Vec<Action> {
            let (id, v) = (Self::agent_id(acts), self.version);
            self.agent(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":{v}}}}}"#
            ))
        }

        /// A new connection whose `initialize` resumes `c` from
        /// `position`, and what that `initialize` did.
        fn reopen(&mut self, c: ConnectionId, position: u64) -> (ConnectionId, Vec<Action>) {
            let d = self.open();
            let back = format!(
                r#"{{"jsonrpc":"2.0","id":"r1","method":"initialize","params":{{"_meta":{{"acp-codec/resume":{{}},"acp-codec/cursor":{{"connection":"{}","position":{position}}}}}}}}}"#,
                c.0
            );
            let acts = self.client(d, &back);
            (d, acts)
        }

        /// An opted-in connection with session `s1`, and the session's
        /// `session/new` answer read.
        fn opted_with_session(&mut self) -> ConnectionId {
            let c = self.open();
            let acts = self.client(c, &OPT_IN.replace("1,", &format!("{},", self.version)));
            let id = Self::agent_id(&acts);
            let v = self.version;
            let _ = self.agent(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":{v}}}}}"#
            ));
            let acts = self.client(
                c,
                r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
            );
            let id = Self::agent_id(&acts);
            let _ = self.agent(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"s1"}}}}"#
            ));
            c
        }
    }

    fn writes(acts: &[Action]) -> Vec<String> {
        acts.iter()
            .filter_map(|a| match a {
                Action::WriteAgent { line, .. } => {
                    Some(String::from_utf8_lossy(&line.to_vec()).trim_end().into())
                }
                _ => None,
            })
            .collect()
    }

    /// What was sent to `c`, unstamped: (stream, position, message).
    fn sent(acts: &[Action], c: ConnectionId) -> Vec<(Option<String>, u64, String)> {
        acts.iter()
            .filter_map(|a| match a {
                Action::Send { to, text, .. } if *to == c => {
                    let (s, p, m) = unstamp(text).expect("not stamped");
                    Some((s, p.0, m))
                }
                _ => None,
            })
            .collect()
    }

    fn update(n: u32) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","n":{n}}}}}"#
        )
    }

    #[test]
    fn only_a_client_that_asks_gets_positions_and_the_capability() {
        let mut h = H::new();
        let plain = h.open();
        let acts = h.client(
            plain,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        );
        let acts = h.answer_initialize(&acts);
        let Some(Action::Send { text, .. }) = acts.first() else {
            panic!("{acts:?}")
        };
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#
        );

        let c = h.open();
        let acts = h.client(c, OPT_IN);
        let acts = h.answer_initialize(&acts);
        let got = sent(&acts, c);
        assert_eq!(got.len(), 1);
        let (stream, position, answer) = &got[0];
        assert_eq!((stream.as_deref(), *position), (None, 1));
        let v: serde_json::Value = serde_json::from_str(answer).unwrap();
        let cap = &v["result"]["_meta"]["acp-codec/resume"];
        assert_eq!(cap["budget"], crate::remote::DEFAULT_RESUME_BUDGET);
        assert_eq!(cap["connection"], format!("{}", c.0));
    }

    /// A broken connection is taken over and nothing is lost or repeated,
    /// over v1 (the session's cursor in `_meta`) and over v2 (in
    /// `replayFrom`, the server's own type; the session's state repeated
    /// before the server's answer).
    #[test]
    fn a_broken_connection_is_taken_over_and_nothing_is_lost_or_repeated() {
        for mut h in [H::new(), H::v2()] {
            taken_over(&mut h);
        }
    }

    fn taken_over(h: &mut H) {
        let v = h.version;
        let c = h.opted_with_session();
        let acts = h.client(c, PROMPT_S1);
        let prompt_id = H::agent_id(&acts);
        let got = sent(&h.agent(&update(1)), c);
        assert_eq!(got[0].0.as_deref(), Some("s1"));
        let first = got[0].1;

        // The connection breaks: nothing is cancelled, the turn goes on.
        h.server.handle_closed(h.now, c, Ending::Broken);
        let acts = h.server.take_actions();
        assert!(writes(&acts).is_empty(), "{acts:?}");
        assert_eq!(h.server.detached_connections(), 1);
        assert!(h.agent(&update(2)).is_empty());
        assert!(h
            .agent(&format!(
                r#"{{"jsonrpc":"2.0","id":{prompt_id},"result":{{"stopReason":"end_turn"}}}}"#
            ))
            .is_empty());

        // The client comes back: the connection's stream, then the session's.
        let d = h.open();
        let back = format!(
            r#"{{"jsonrpc":"2.0","id":"r1","method":"initialize","params":{{"protocolVersion":{v},"_meta":{{"acp-codec/resume":{{}},"acp-codec/cursor":{{"connection":"{}","position":1}}}}}}}}"#,
            c.0
        );
        let acts = h.client(d, &back);
        assert_eq!(writes(&acts).len(), 1, "initialize goes to the agent");
        assert_eq!(h.server.detached_connections(), 0);
        // The client had the initialize answer only: the session/new
        // answer comes again, at its position, before anything else.
        let got = sent(&acts, d);
        assert_eq!(got.len(), 1, "{acts:?}");
        assert_eq!((got[0].0.as_deref(), got[0].1), (None, 2));
        assert!(got[0].2.contains(r#""sessionId":"s1""#));
        // Session messages wait for the client's position (over v2, the
        // idle state that ends the turn).
        let third = if v == 1 {
            update(3)
        } else {
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","n":3,"update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}"#.into()
        };
        assert!(sent(&h.agent(&third), d).is_empty());
        let cursor = if v == 1 {
            format!(r#""_meta":{{"acp-codec/cursor":{{"position":{first}}}}}"#)
        } else {
            format!(r#""replayFrom":{{"type":"_acp-codec/cursor","position":{first}}}"#)
        };
        let resume = format!(
            r#"{{"jsonrpc":"2.0","id":"r2","method":"session/resume","params":{{"sessionId":"s1","cwd":"/",{cursor}}}}}"#
        );
        let acts = h.client(d, &resume);
        assert!(writes(&acts).is_empty(), "answered by the server: {acts:?}");
        let got = sent(&acts, d);
        let positions: Vec<u64> = got.iter().map(|g| g.1).collect();
        // v2: the session's state, before the answer.
        let state = u64::from(v == 2);
        assert_eq!(
            positions,
            (first + 1..=first + 4 + state).collect::<Vec<_>>(),
            "{got:?}"
        );
        assert!(got[0].2.contains(r#""n":2"#));
        assert!(got[1].2.contains("end_turn") && got[1].2.contains(r#""id":3"#));
        assert!(got[2].2.contains(r#""n":3"#));
        if v == 2 {
            assert_eq!(got[3].2, third, "the state as the agent last sent it");
        }
        assert_eq!(
            got[got.len() - 1].2,
            r#"{"jsonrpc":"2.0","id":"r2","result":{}}"#
        );
        // The prompt retried with its id: not run again, its answer again.
        let acts = h.client(
            d,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#,
        );
        assert!(writes(&acts).is_empty());
        let got = sent(&acts, d);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1, first + 2);
        // Live again.
        assert_eq!(sent(&h.agent(&update(4)), d)[0].1, first + 5 + state);
    }

    /// A resumed connection's session waits for the client's position;
    /// a `session/load` without one takes the session as the agent gives
    /// it: its history and its answer (on the session's stream, behind
    /// the history) go out, nothing waits.
    #[test]
    fn a_load_without_a_position_takes_a_waiting_session_as_it_is() {
        let mut h = H::new();
        let c = h.opted_with_session();
        assert_eq!(sent(&h.agent(&update(0)), c).len(), 1);
        h.server.handle_closed(h.now, c, Ending::Broken);
        let _ = h.server.take_actions();
        let d = h.open();
        let back = format!(
            r#"{{"jsonrpc":"2.0","id":"r1","method":"initialize","params":{{"protocolVersion":1,"_meta":{{"acp-codec/resume":{{}},"acp-codec/cursor":{{"connection":"{}","position":2}}}}}}}}"#,
            c.0
        );
        let _ = h.client(d, &back);
        assert!(sent(&h.agent(&update(1)), d).is_empty(), "it waits");
        let acts = h.client(
            d,
            r#"{"jsonrpc":"2.0","id":"l","method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}"#,
        );
        let id = H::agent_id(&acts);
        let mut acts = h.agent(&update(7));
        acts.extend(h.agent(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)));
        let got = sent(&acts, d);
        assert_eq!(got.len(), 2, "{acts:?}");
        assert_eq!(got[0].0.as_deref(), Some("s1"));
        assert!(got[0].2.contains(r#""n":7"#), "{got:?}");
        assert_eq!(got[1].0.as_deref(), Some("s1"));
        assert_eq!(got[1].2, r#"{"jsonrpc":"2.0","id":"l","result":{}}"#);
        assert!(got[0].1 < got[1].1, "{got:?}");
    }

    #[test]
    fn a_retried_prompt_runs_once() {
        let mut h = H::new();
        let c = h.opted_with_session();
        let p = r#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;
        assert_eq!(writes(&h.client(c, p)).len(), 1);
        assert!(writes(&h.client(c, p)).is_empty());
    }

    #[test]
    fn a_gap_is_the_resume_gap_error_then_what_is_owed() {
        let mut h = H::new();
        h.server.config.replay_bytes = 200;
        let c = h.opted_with_session();
        let acts = h.client(c, PROMPT_S1);
        let prompt_id = H::agent_id(&acts);
        h.server.handle_closed(h.now, c, Ending::Broken);
        let _ = h.agent(&format!(
            r#"{{"jsonrpc":"2.0","id":{prompt_id},"result":{{"stopReason":"end_turn"}}}}"#
        ));
        for n in 0..10 {
            let _ = h.agent(&update(n));
        }
        let (d, _) = h.reopen(c, 2);
        let acts = h.client(
            d,
            r#"{"jsonrpc":"2.0","id":"r2","method":"session/resume","params":{"sessionId":"s1","_meta":{"acp-codec/cursor":{"position":0}}}}"#,
        );
        let texts: Vec<&str> = acts
            .iter()
            .filter_map(|a| match a {
                Action::Send { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(texts[0].contains("-32012"), "{texts:?}");
        assert!(texts[1].contains("end_turn"), "{texts:?}");
        assert_eq!(texts.len(), 2);
    }

    /// Both methods that reattach a session read its cursor (a position
    /// the log no longer holds is the gap error), and a method that does
    /// not reattach carries a cursor to the agent unread: the core asks the
    /// method table which methods reattach, as the router does.
    #[test]
    fn the_reattaching_methods_and_only_they_resume_from_a_cursor() {
        for (method, reattaches) in [
            ("session/resume", true),
            ("session/load", true),
            ("session/set_mode", false),
        ] {
            let mut h = H::new();
            h.server.config.replay_bytes = 200;
            let c = h.opted_with_session();
            h.server.handle_closed(h.now, c, Ending::Broken);
            for n in 0..10 {
                let _ = h.agent(&update(n));
            }
            let (d, _) = h.reopen(c, 2);
            let acts = h.client(
                d,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":"r2","method":"{method}","params":{{"sessionId":"s1","cwd":"/","_meta":{{"acp-codec/cursor":{{"position":0}}}}}}}}"#
                ),
            );
            let gap = acts
                .iter()
                .any(|a| matches!(a, Action::Send { text, .. } if text.contains("-32012")));
            assert_eq!(gap, reattaches, "{method}: {acts:?}");
        }
    }

    /// A v2 `session/resume` the server does not answer itself (another
    /// connection holds the session) reaches the agent without the
    /// server's cursor, which the agent would refuse; `{"type":"start"}`
    /// is the agent's, passed as sent.
    #[test]
    fn a_v2_agent_never_sees_the_servers_cursor() {
        let mut h = H::v2();
        let _holder = h.opted_with_session();
        let other = h.open();
        let acts = h.client(other, &OPT_IN.replace("1,", "2,"));
        let acts = h.answer_initialize(&acts);
        assert!(
            sent(&acts, other)[0].2.contains(r#""protocolVersion":2"#),
            "{acts:?}"
        );
        for (from, to_agent) in [
            (r#"{"type":"_acp-codec/cursor","position":0}"#, None),
            (
                r#"{"type":"start"}"#,
                Some(r#""replayFrom":{"type":"start"}"#),
            ),
        ] {
            let resume = format!(
                r#"{{"jsonrpc":"2.0","id":"r","method":"session/resume","params":{{"sessionId":"s1","cwd":"/","replayFrom":{from}}}}}"#
            );
            let acts = h.client(other, &resume);
            let [line] = &writes(&acts)[..] else {
                panic!("{acts:?}")
            };
            assert!(line.contains(r#""method":"session/resume""#), "{line}");
            match to_agent {
                Some(kept) => assert!(line.contains(kept), "{line}"),
                None => assert!(!line.contains("replayFrom"), "{line}"),
            }
        }
    }

    #[test]
    fn a_client_that_never_comes_back_leaves_after_the_grace() {
        let mut h = H::new();
        let c = h.opted_with_session();
        h.server.handle_closed(h.now, c, Ending::Broken);
        let _ = h.server.take_actions();
        let end = h.server.poll_timeout().unwrap();
        assert_eq!(end, DEFAULT_RESUME_GRACE);
        h.server.handle_timeout(end);
        let acts = h.server.take_actions();
        assert!(
            writes(&acts).iter().any(|w| w.contains("session/cancel")),
            "{acts:?}"
        );
        assert_eq!(h.server.detached_connections(), 0);
    }

    /// A client that says goodbye (a close frame) is not waited for:
    /// its sessions are cancelled now, nothing is held, no grace runs,
    /// and a later cursor naming it resumes nothing.
    #[test]
    fn a_clean_close_keeps_nothing_for_a_resume() {
        let mut h = H::new();
        let c = h.opted_with_session();
        let _ = h.client(c, PROMPT_S1);
        h.server.handle_closed(h.now, c, Ending::Clean);
        let acts = h.server.take_actions();
        assert!(
            writes(&acts).iter().any(|w| w.contains("session/cancel")),
            "{acts:?}"
        );
        assert_eq!(h.server.detached_connections(), 0);
        assert_eq!(h.server.connections(), 0);
        assert_eq!(h.server.poll_timeout(), None, "no grace runs");
        // What the agent still says goes nowhere, and is not kept.
        assert!(sent(&h.agent(&update(1)), c).is_empty());
        let (_, acts) = h.reopen(c, 1);
        assert_eq!(writes(&acts).len(), 1, "a fresh initialize, to the agent");
        let acts = h.answer_initialize(&acts);
        let Some(Action::Send { text, .. }) = acts.first() else {
            panic!("{acts:?}")
        };
        assert!(unstamp(text).is_none(), "nothing resumed: {text}");
    }

    /// The same connection broken instead: nothing is cancelled, it is
    /// held for the grace.
    #[test]
    fn a_broken_connection_is_held_where_a_clean_close_is_not() {
        let mut h = H::new();
        let c = h.opted_with_session();
        h.server.handle_closed(h.now, c, Ending::Broken);
        let acts = h.server.take_actions();
        assert!(writes(&acts).is_empty(), "{acts:?}");
        assert_eq!(h.server.detached_connections(), 1);
        assert_eq!(h.server.poll_timeout(), Some(DEFAULT_RESUME_GRACE));
    }

    #[test]
    fn after_the_grace_a_reconnect_gets_no_positions_and_a_cursor_is_a_gap() {
        let mut h = H::new();
        let c = h.opted_with_session();
        h.server.handle_closed(h.now, c, Ending::Broken);
        h.now = DEFAULT_RESUME_GRACE;
        h.server.handle_timeout(h.now);
        let _ = h.server.take_actions();
        // The stream it names is gone: no positions, the agent answers.
        let (_, acts) = h.reopen(c, 2);
        let acts = h.answer_initialize(&acts);
        let Some(Action::Send { text, .. }) = acts.first() else {
            panic!("{acts:?}")
        };
        assert!(unstamp(text).is_none(), "{text}");
        assert!(!text.contains("acp-codec/resume"), "{text}");
        // A fresh connection that asks, naming session positions the
        // server no longer keeps: a gap, not positions starting again.
        let e = h.open();
        let acts = h.client(e, OPT_IN);
        let _ = h.answer_initialize(&acts);
        let acts = h.client(
            e,
            r#"{"jsonrpc":"2.0","id":"r2","method":"session/resume","params":{"sessionId":"s1","_meta":{"acp-codec/cursor":{"position":5}}}}"#,
        );
        assert!(writes(&acts).is_empty(), "{acts:?}");
        let Some(Action::Send { text, .. }) = acts.first() else {
            panic!("{acts:?}")
        };
        assert!(text.contains(r#""code":-32012"#), "{text}");
    }
}
