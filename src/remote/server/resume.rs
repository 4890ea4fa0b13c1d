//! Resumable delivery on WebSocket connections: the [`ResumeLog`]s of a
//! [`Server`] and the hooks its connections go through.
//!
//! - A WebSocket client whose `initialize` asks for positions
//!   (`params._meta["acp-codec/resume"]`) gets the capability in the
//!   answer's `_meta`, with its connection's id; from then on every
//!   message to it is [`stamp`]ed with its stream and position and kept:
//!   one log for the connection's own stream, one per session.
//! - When such a connection breaks, it is *detached*, not closed: its
//!   sessions, the requests it has in flight and the agent's requests to
//!   it (a permission request) stay open, and what the agent sends goes
//!   into the logs, for [`DEFAULT_RESUME_GRACE`]. After that it leaves as
//!   any connection does.
//! - A new connection's `initialize` with the cursor
//!   `{"connection":"N","position":p}` takes the detached connection `N`
//!   over (same user): it gets the connection stream's messages after
//!   `p` before the `initialize` answer, and everything the old one had.
//!   Its sessions' messages wait until the client names its position on
//!   each (`session/resume` or `session/load` with `{"position":p}`): the
//!   server answers that itself, after the missed messages; a gap is the
//!   error [`RESUME_GAP`] followed by what is owed.
//! - A `session/prompt` retried with the same id (or idempotency key)
//!   runs once: while it runs the retry is dropped, once answered the
//!   answer is sent again at its position.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

use super::{ConnectionId, Profile, Server};
use crate::acp::{Message, Request};
use crate::remote::resume::{
    capability, stamp, Admit, Cursor, Kind, Position, PromptKey, ResumeError, ResumeLog,
    DEFAULT_RESUME_GRACE, META_RESUME,
};
use crate::remote::router::ClientId;
use crate::remote::transport::{decode, Stream};

/// The resume state of a [`Server`].
#[derive(Debug, Default)]
pub(super) struct Resumes {
    /// Connections that asked for positions.
    conns: BTreeMap<ConnectionId, Opted>,
    /// Session streams, by agent and session.
    sessions: BTreeMap<(Option<String>, String), SessionLog>,
    /// Connections whose client left, waiting for it.
    detached: BTreeMap<ConnectionId, Detached>,
}

#[derive(Debug)]
struct Opted {
    /// The connection's own stream.
    log: ResumeLog,
    /// The `initialize` whose answer gets the capability.
    initialize: Option<PromptKey>,
    /// Sessions whose messages wait for the client's position.
    held: BTreeSet<String>,
    /// Prompts admitted and not yet answered: id → (session, key).
    prompts: BTreeMap<PromptKey, (String, PromptKey)>,
}

#[derive(Debug)]
struct SessionLog {
    log: ResumeLog,
    /// The connection the last message was for.
    conn: ConnectionId,
}

#[derive(Debug)]
struct Detached {
    user: Option<String>,
    agent: Option<String>,
    client: ClientId,
    opted: Opted,
}

/// Whether `message` must survive a gap: an answer, or a request of the
/// agent.
fn kind_of(message: &Message<'_>) -> Kind {
    match message {
        Message::Notification(_) => Kind::Plain,
        _ => Kind::Owed,
    }
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

fn error_text(req: &Request<'_>, e: &ResumeError) -> String {
    let mut line = Vec::new();
    let _ = crate::acp::encode_error(
        &req.id,
        &crate::acp::RpcError::new(e.code(), e.to_string()),
        &mut line,
    );
    String::from_utf8_lossy(line.trim_ascii_end()).into_owned()
}

fn empty_result(req: &Request<'_>) -> String {
    let mut line = Vec::new();
    let _ = crate::acp::encode_response(&req.id, &serde_json::Map::new(), &mut line);
    String::from_utf8_lossy(line.trim_ascii_end()).into_owned()
}

impl Server {
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
        if method == crate::acp::names::INITIALIZE {
            if profile != Profile::WebSocket || !asks_for_positions(params) {
                return Some(message);
            }
            let budget = self.config.replay_bytes;
            let mut opted = Opted {
                log: ResumeLog::new(budget),
                initialize: Some(PromptKey::of(&req.id, None)),
                held: BTreeSet::new(),
                prompts: BTreeMap::new(),
            };
            let cursor = params.and_then(|p| Cursor::from_params(p).ok().flatten());
            let adopted = cursor.and_then(|c| {
                let old = ConnectionId(c.connection.as_deref()?.parse().ok()?);
                Some((old, c.position))
            });
            let mut replay = Vec::new();
            if let Some((old, after)) = adopted {
                if let Some(d) = self.take_detached(now, old, conn, &agent, client) {
                    opted.log = d.opted.log;
                    opted.prompts = d.opted.prompts;
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
                    if gap {
                        replay.extend(opted.log.owed_after(after).map(|(p, t)| stamp(t, None, p)));
                    }
                    self.log(format!("connection {} resumes connection {}", conn.0, old.0));
                }
            }
            self.resume.conns.insert(conn, opted);
            for text in replay {
                self.send_raw(now, conn, Stream::Connection, text);
            }
            return Some(message);
        }
        if !self.resume.conns.contains_key(&conn) {
            return Some(message);
        }
        let session = crate::remote::session_field(req.params.as_ref()).into_id()?;
        let session: String = session.into_owned();
        let is_reattach = method == crate::acp::names::SESSION_RESUME
            || method == crate::acp::names::SESSION_LOAD;
        if is_reattach {
            let cursor = match params.map(Cursor::from_params) {
                Some(Ok(Some(c))) => c,
                _ => return Some(message),
            };
            let handled = self.reattach(now, conn, &agent, client, req, &session, cursor.position);
            return (!handled).then_some(message);
        }
        if method == crate::acp::names::SESSION_PROMPT {
            let key = PromptKey::of(&req.id, params);
            let log = &mut self
                .resume
                .sessions
                .entry((agent, session.clone()))
                .or_insert_with(|| SessionLog {
                    log: ResumeLog::new(self.config.replay_bytes),
                    conn,
                })
                .log;
            match log.admit_prompt(key.clone()) {
                Admit::Run => {
                    if let Some(o) = self.resume.conns.get_mut(&conn) {
                        o.prompts
                            .insert(PromptKey::of(&req.id, None), (session, key));
                    }
                }
                Admit::Running => return None,
                Admit::Answered(at) => {
                    let again = log.message(at).map(|t| stamp(t, Some(&session), at));
                    if let Some(text) = again {
                        self.send_raw(now, conn, Stream::Session(session), text);
                    }
                    return None;
                }
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
        let key = (agent.clone(), session.to_owned());
        let Some(entry) = self.resume.sessions.get_mut(&key) else {
            // Nothing kept for it here: the agent answers.
            return false;
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
        let handled = match gap {
            None => {
                if holds {
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
        for text in out {
            self.send_raw(now, conn, stream.clone(), text);
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
        let d = self.resume.detached.remove(&old)?;
        let a = self.agents.get_mut(agent)?;
        a.clients.remove(&client);
        a.clients.insert(d.client, conn);
        let mut outs = Vec::new();
        a.router.disconnect(client, &mut outs);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.client = d.client;
        }
        self.dispatch(agent, outs, now);
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
    ) -> Option<String> {
        let detached = self.resume.detached.contains_key(&conn);
        if !detached && !self.resume.conns.contains_key(&conn) {
            return self.conns.contains_key(&conn).then_some(text);
        }
        let agent = match self.resume.detached.get(&conn) {
            Some(d) => d.agent.clone(),
            None => self.conns.get(&conn)?.agent.clone(),
        };
        let budget = self.config.replay_bytes;
        let Ok(message) = decode(&text) else {
            return (!detached).then_some(text);
        };
        let kind = kind_of(&message);
        let answered = match &message {
            Message::Response(r) => Some(PromptKey::of(&r.id, None)),
            Message::Error(e) => Some(PromptKey::of(&e.id, None)),
            _ => None,
        };
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
                    conn.0
                );
                with_capability(&text, &member).unwrap_or(text)
            }
            _ => text,
        };
        let prompt = answered.and_then(|id| opted.prompts.remove(&id));
        let (stamped, held) = match stream {
            Stream::Session(s) => {
                let held = opted.held.contains(s);
                let entry = self
                    .resume
                    .sessions
                    .entry((agent, s.clone()))
                    .or_insert_with(|| SessionLog {
                        log: ResumeLog::new(budget),
                        conn,
                    });
                entry.conn = conn;
                let at = entry.log.push(kind, &text);
                if let Some((_, key)) = prompt {
                    entry.log.answered(&key, at);
                }
                (stamp(&text, Some(s), at), held)
            }
            Stream::Connection => {
                let at = opted.log.push(kind, &text);
                (stamp(&text, None, at), false)
            }
        };
        (!detached && !held).then_some(stamped)
    }

    /// `conn` closed: when it asked for positions, it is detached instead
    /// (`true`): its sessions and requests wait for the client.
    pub(super) fn resume_detach(&mut self, now: Duration, conn: ConnectionId) -> bool {
        let Some(mut opted) = self.resume.conns.remove(&conn) else {
            return false;
        };
        let Some(c) = self.conns.remove(&conn) else {
            return false;
        };
        self.release(&c.user, c.backlog.bytes());
        if let Some(agent) = self.agents.get_mut(&c.agent) {
            agent.last_active = now;
            agent.waiting.retain(|w| w.conn != conn);
        }
        opted.log.detach(now);
        self.resume.detached.insert(
            conn,
            Detached {
                user: c.user,
                agent: c.agent,
                client: c.client,
                opted,
            },
        );
        true
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
            let Some(d) = self.resume.detached.remove(&conn) else {
                continue;
            };
            self.resume.sessions.retain(|_, s| s.conn != conn);
            self.log(format!(
                "connection {} not resumed within {} s: it leaves",
                conn.0,
                DEFAULT_RESUME_GRACE.as_secs()
            ));
            let Some(agent) = self.agents.get_mut(&d.agent) else {
                continue;
            };
            agent.clients.remove(&d.client);
            agent.last_active = now;
            let mut outs = Vec::new();
            agent.router.disconnect(d.client, &mut outs);
            self.dispatch(&d.agent, outs, now);
        }
    }

    /// Connections detached and waiting for their client.
    pub fn detached_connections(&self) -> usize {
        self.resume.detached.len()
    }
}
