//! The invariant behind the `server_core` fuzz target
//! (`acp_codec::remote::Server`, the team server's sans-IO core), shared
//! with `tests/integration/fuzz_corpus.rs`.
//!
//! Input: a first byte choosing the agent pool (even: one shared agent,
//! odd: one per user), then records separated by `0xFF` (never in UTF-8).
//! A record's first byte picks the event (low four bits) and the
//! connection slot (next two bits: slots 0 and 1 are user `ana`, 2 `bo`,
//! 3 `cy`, who may only read); the rest (invalid UTF-8 replaced) is its
//! text. Events: a WebSocket text message of the slot (its connection
//! opened on first use), a Streamable HTTP `POST` of the slot (its
//! `Acp-Session-Id` the message's `params.sessionId`), a line from the
//! slot's user's agent, the slot's connections closing (cleanly when
//! the record's top bit is set, else broken), that agent
//! exiting, time passing (the text's length in 100 ms steps), the slot's
//! queued messages written, an oversized line from that agent, a `GET`
//! of a session's stream, the slot's WebSocket client stating its limit
//! (`set_client_limit`: 200 bytes plus 4 per byte of text), a line from
//! the agent handed over (`handle_agent_line` with a `String`), MCP over ACP bridged
//! (`set_mcp_relay` for the slot's user's agent; a relay of that user's
//! agent opening for the server id the text names; a line from, or with
//! the top bit set the end of, that user's last relay; an agent's exit
//! ends its user's relays). Every agent start asked for succeeds at once.
//! With feature `v2` (the fuzz build's), a client whose version its agent
//! refuses is bridged through a translator (seed `bridged_both_ways`: a
//! v1 client of a v2 agent, a v2 client of a v1 agent, garbage from
//! both), and every assertion below holds for it as well.
//!
//! Asserted, after every event:
//! - no message of a session (on its stream, naming it in its params, or
//!   the answer that opens or reattaches it) reaches a connection of
//!   another user than the session's owner (an answer to another request
//!   is the agent's word to its requester, whatever it names);
//! - an owner never changes: once a router names a session's user it names
//!   the same one after every later event;
//! - every client request (with a non-null id) gets at most one answer;
//!   at the end, after every agent exits, every request of a connection
//!   still open has exactly one (a refused `POST` is answered by its HTTP
//!   refusal);
//! - a `session/load`'s result goes on its session's stream, where it
//!   follows the history the agent replayed before it (never on the
//!   connection's stream, which nothing orders with the session's);
//! - no message longer than a client's stated limit reaches it;
//! - what a relay of a user's agent says (and the answers to it) reaches
//!   that user's connections only, and the core writes only to relays
//!   that are open;
//! - what is queued for a user's connections stays within
//!   `max_user_buffered_bytes` (or one message, which always fits);
//! - actions name only open connections and live agent runs, and nothing
//!   panics.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use acp_codec::acp::Message;
use acp_codec::framing::LineTooLong;
use acp_codec::remote::{
    Action, AgentRun, ConnectionId, Ending, McpLink, McpRelay, Permissions, PoolMode, PostOutcome,
    Principal, Server, ServerConfig, Stream, LINE_DROPPED,
};
use acp_codec::{FrameError, PeekedId};

/// The user of each slot, and what they may do.
const USERS: [(&str, Permissions); 4] = [
    ("ana", Permissions::READ_WRITE),
    ("ana", Permissions::READ_WRITE),
    ("bo", Permissions::READ_WRITE),
    ("cy", Permissions::READ_ONLY),
];

/// Small, so the fuzzer reaches the closing paths.
const MAX_USER_BUFFERED: usize = 4096;

fn config(pool: PoolMode) -> ServerConfig {
    let mut c = ServerConfig::new();
    c.pool = pool;
    c.max_agents = 2;
    c.agent_idle = Duration::from_secs(5);
    c.max_message = 8192;
    c.max_user_sessions = 3;
    c.max_user_buffered_bytes = MAX_USER_BUFFERED;
    c.max_buffered_bytes = 2048;
    c.slow_client = Duration::from_secs(2);
    c.replay_bytes = 1024;
    c.first_message = Duration::from_secs(3);
    c.http_idle = Duration::from_secs(10);
    c.start_wait = Duration::from_secs(1);
    c
}

/// The agent serving `user`.
fn w_key(pool: PoolMode, user: &str) -> Option<String> {
    (pool == PoolMode::PerUser).then(|| user.to_owned())
}

fn principal(slot: usize) -> Principal {
    let (user, permissions) = USERS[slot];
    Principal::user(user, permissions)
}

/// A request's id, as JSON text, unless it is `null`.
fn request_id(text: &str) -> Option<String> {
    match Message::decode(text) {
        Ok(Message::Request(r)) => {
            let id = serde_json::to_string(&r.id).ok()?;
            (id != "null").then_some(id)
        }
        _ => None,
    }
}

/// Whether an `initialize` may ask for positions (its params'
/// `_meta["acp-codec/resume"]`): any text that names the key, so that no
/// way of writing it is missed (a connection wrongly counted here is only
/// checked less).
fn asks_for_positions(text: &str) -> bool {
    text.contains("acp-codec/resume") || text.contains("acp-codec\\/resume") || text.contains("\\u")
}

/// A notification's method.
fn notification_method(text: &str) -> Option<String> {
    match Message::decode(text) {
        Ok(Message::Notification(n)) => Some(n.method.into_owned()),
        _ => None,
    }
}

/// A request's method.
fn request_method(text: &str) -> Option<String> {
    match Message::decode(text) {
        Ok(Message::Request(r)) => Some(r.method.into_owned()),
        _ => None,
    }
}

/// An answer's id, as JSON text.
fn answer_id(text: &str) -> Option<String> {
    let m = Message::decode(text).ok()?;
    match m {
        Message::Response(_) | Message::Error(_) => serde_json::to_string(m.id()?).ok(),
        _ => None,
    }
}

/// The `sessionId` in the params of a request or notification, or in a
/// response's result.
fn named_session(text: &str) -> Option<String> {
    let raw = match Message::decode(text).ok()? {
        Message::Request(r) => r.params?.get().to_owned(),
        Message::Notification(n) => n.params?.get().to_owned(),
        Message::Response(r) => r.result.get().to_owned(),
        Message::Error(_) => return None,
    };
    let v: serde_json::Value = serde_json::from_str(&raw).ok()?;
    v.get("sessionId")?.as_str().map(str::to_owned)
}

/// Whether `text` is what the core sends instead of a message over a
/// client's `limit`: `_bridge/line_dropped` with a size over it, or the
/// error of the client's request naming it (either is short, but carries
/// the session's and the request's ids, which may be long).
fn replaces_one_over(text: &str, limit: usize) -> bool {
    match Message::decode(text) {
        Ok(Message::Notification(n)) if n.method == LINE_DROPPED => n
            .params
            .and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok())
            .and_then(|p| p["size"].as_u64())
            .is_some_and(|size| size > limit as u64),
        Ok(Message::Error(e)) => e
            .error
            .message
            .ends_with(&format!("exceeds this client's {limit}-byte limit")),
        _ => false,
    }
}

/// A request waiting for its answer: its method, and the session it
/// named.
type Asked = (String, Option<String>);

#[derive(Default)]
struct World {
    now: Duration,
    /// Open connections: their slot and user.
    conns: BTreeMap<ConnectionId, usize>,
    ws: [Option<ConnectionId>; 4],
    http: [Option<ConnectionId>; 4],
    /// Bytes queued (sent by the core, not yet written) per connection.
    queued: BTreeMap<ConnectionId, usize>,
    /// Requests waiting for an answer, by connection and id: their
    /// methods and the sessions they named, oldest first.
    pending: BTreeMap<(ConnectionId, String), Vec<Asked>>,
    /// Ids of `pending` that had two requests waiting at once since they
    /// last had none: which request an answer is for, only the core knows.
    ambiguous: BTreeSet<(ConnectionId, String)>,
    /// The live agent runs, by the user they serve (`None`: shared).
    runs: BTreeMap<AgentRun, Option<String>>,
    /// Each session's first owner, per agent (`None`: shared).
    owners: BTreeMap<(Option<String>, String), String>,
    sessions: BTreeSet<String>,
    largest: usize,
    /// The limits clients stated, by connection.
    limits: BTreeMap<ConnectionId, usize>,
    /// Streamable HTTP connections whose `initialize` asked for
    /// positions: a request sent again there is a retry, run once (the
    /// `server_resume` check holds those rules); requests and answers are
    /// not paired here.
    retrying: BTreeSet<ConnectionId>,
    /// The open MCP relays, by the user whose agent started them.
    links: BTreeMap<McpLink, &'static str>,
    /// During an event of the MCP bridge (a relay's, or a client's): the
    /// user every `mcp/*` message sent may reach.
    mcp_user: Option<&'static str>,
}

impl World {
    fn user(&self, conn: ConnectionId) -> &'static str {
        USERS[self.conns[&conn]].0
    }

    fn agent_key(&self, pool: PoolMode, user: &str) -> Option<String> {
        (pool == PoolMode::PerUser).then(|| user.to_owned())
    }

    /// Counts an answer; the method of the request it answers, and the
    /// session that request named when it is known (no two requests with
    /// that id were waiting at once: which of several an answer is for,
    /// only the core knows).
    fn answered(&mut self, conn: ConnectionId, text: &str) -> Option<Asked> {
        let id = answer_id(text)?;
        if id == "null" {
            return None;
        }
        let Some(methods) = self.pending.get_mut(&(conn, id.clone())) else {
            if self.retrying.contains(&conn) {
                return None;
            }
            panic!("an answer to {id} on {conn}, which has no such request waiting");
        };
        let (method, session) = methods.remove(0);
        let key = (conn, id);
        let known = !self.ambiguous.contains(&key);
        if methods.is_empty() {
            self.pending.remove(&key);
            self.ambiguous.remove(&key);
        }
        Some((method, session.filter(|_| known)))
    }

    fn asked(&mut self, conn: ConnectionId, text: &str) {
        if self.retrying.contains(&conn) {
            return;
        }
        if let (Some(id), Some(method)) = (request_id(text), request_method(text)) {
            let session = named_session(text);
            let waiting = self.pending.entry((conn, id.clone())).or_default();
            if !waiting.is_empty() {
                self.ambiguous.insert((conn, id));
            }
            waiting.push((method, session));
        }
    }

    /// Ends the relays of the users `which` picks, as the binary does
    /// when their sockets close.
    fn close_links(&mut self, server: &mut Server, pool: PoolMode, which: impl Fn(&str) -> bool) {
        let links: Vec<McpLink> = self
            .links
            .iter()
            .filter(|(_, u)| which(u))
            .map(|(l, _)| *l)
            .collect();
        for link in links {
            self.links.remove(&link);
            server.handle_mcp_closed(self.now, link);
            self.drain(server, pool);
        }
    }

    fn forget(&mut self, conn: ConnectionId) {
        self.conns.remove(&conn);
        self.queued.remove(&conn);
        self.limits.remove(&conn);
        self.retrying.remove(&conn);
        self.pending.retain(|(c, _), _| *c != conn);
        self.ambiguous.retain(|(c, _)| *c != conn);
        for slot in self.ws.iter_mut().chain(self.http.iter_mut()) {
            if *slot == Some(conn) {
                *slot = None;
            }
        }
    }

    /// Carries out the core's actions, checking each.
    fn drain(&mut self, server: &mut Server, pool: PoolMode) {
        while let Some(action) = server.poll_action() {
            match action {
                Action::Send {
                    to, stream, text, ..
                } => {
                    assert!(self.conns.contains_key(&to), "a message for {to}, not open");
                    assert!(!text.contains('\n'), "a raw newline to a client: {text:?}");
                    if let Some(&limit) = self.limits.get(&to) {
                        assert!(
                            text.len() <= limit || replaces_one_over(&text, limit),
                            "{} bytes to {to}, whose client reads {limit}",
                            text.len()
                        );
                    }
                    let user = self.user(to);
                    if let (Some(only), Some(method)) = (
                        self.mcp_user,
                        request_method(&text).or_else(|| notification_method(&text)),
                    ) {
                        if method.starts_with("mcp/") {
                            assert_eq!(user, only, "{method} of {only}'s relay reached {user}");
                        }
                    }
                    let asked = self.answered(to, &text);
                    if let Some(("session/load", Some(s))) =
                        asked.as_ref().map(|(m, s)| (m.as_str(), s))
                    {
                        if is_result(&text) {
                            assert_eq!(
                                stream,
                                Stream::Session(s.clone()),
                                "a session/load's result off its session's stream: {text:?}"
                            );
                        }
                    }
                    let method = asked.map(|(m, _)| m);
                    // A session's messages: on its stream, or naming it
                    // (a request or notification, or the answer that
                    // opens or reattaches it). Other answers are the
                    // agent's words to their requester.
                    let names = match &method {
                        Some(m) => matches!(
                            m.as_str(),
                            "session/new" | "session/fork" | "session/load" | "session/resume"
                        ),
                        None => true,
                    };
                    let session = match &stream {
                        Stream::Session(s) => Some(s.clone()),
                        Stream::Connection if names => named_session(&text),
                        Stream::Connection => None,
                    };
                    if let Some(s) = session {
                        let key = self.agent_key(pool, user);
                        if let Some(owner) = self.owners.get(&(key, s.clone())) {
                            assert_eq!(
                                owner, user,
                                "a message of {s:?} (its owner {owner}) reached {user}: {text:?}"
                            );
                        }
                    }
                    self.largest = self.largest.max(text.len());
                    *self.queued.entry(to).or_default() += text.len();
                }
                Action::Read { to, replace, .. } => {
                    assert!(self.conns.contains_key(&to), "a read of {to}, not open");
                    assert!(replace.is_none(), "a stream opened afresh replaced");
                }
                Action::Answer { to, text } => {
                    assert!(self.conns.contains_key(&to), "an answer for {to}, not open");
                    let _ = self.answered(to, &text);
                }
                Action::Close { conn, last, .. } => {
                    assert!(
                        self.conns.contains_key(&conn),
                        "a close of {conn}, not open"
                    );
                    if let Some(last) = last {
                        let _ = self.answered(conn, &last);
                    }
                    self.forget(conn);
                }
                Action::WriteAgent { run, line } => {
                    assert!(self.runs.contains_key(&run), "a line for {run}, not live");
                    let line = line.to_vec();
                    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
                    assert_eq!(line.last(), Some(&b'\n'));
                }
                Action::StartAgent { run, user, .. } => {
                    // A user's own agent works in its room: paths under
                    // `/rooms/USER` are moved on the way (the checks hold
                    // all the same).
                    if let Some(u) = &user {
                        server.set_session_dir(u, &format!("/rooms/{u}"));
                    }
                    self.runs.insert(run, user);
                    server.handle_agent_started(self.now, run, 1000);
                }
                Action::StopAgent { run, .. } => {
                    assert!(
                        self.runs.remove(&run).is_some(),
                        "a stop of {run}, not live"
                    );
                    server.handle_agent_exited(self.now, run, "stopped");
                }
                Action::WriteMcp { link, line } => {
                    assert!(
                        self.links.contains_key(&link),
                        "a line for {link}, not open"
                    );
                    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
                }
                Action::CloseMcp { link, .. } => {
                    assert!(
                        self.links.remove(&link).is_some(),
                        "a close of {link}, not open"
                    );
                }
                Action::Log(_) => {}
            }
        }
    }

    /// The checks after each event: owners never change, queues within
    /// the budget.
    fn check(&mut self, server: &Server, pool: PoolMode) {
        let users: [Option<&str>; 3] = [Some("ana"), Some("bo"), Some("cy")];
        for user in users {
            let queued = server.user_queued(user);
            assert!(
                queued <= MAX_USER_BUFFERED.max(self.largest),
                "{queued} bytes queued for {user:?}"
            );
        }
        let keys: Vec<Option<String>> = match pool {
            PoolMode::Shared => vec![None],
            PoolMode::PerUser => users.iter().map(|u| u.map(str::to_owned)).collect(),
        };
        for key in keys {
            let Some(router) = server.router_of(key.as_deref()) else {
                continue;
            };
            for s in &self.sessions {
                let now = router.session_user(s).map(str::to_owned);
                match (self.owners.get(&(key.clone(), s.clone())), now) {
                    (Some(first), now) => {
                        assert_eq!(Some(first), now.as_ref(), "the owner of {s:?} changed")
                    }
                    (None, Some(now)) => {
                        self.owners.insert((key.clone(), s.clone()), now);
                    }
                    (None, None) => {}
                }
            }
        }
    }
}

pub fn check(data: &[u8]) {
    let Some((&mode, data)) = data.split_first() else {
        return;
    };
    let pool = if mode % 2 == 0 {
        PoolMode::Shared
    } else {
        PoolMode::PerUser
    };
    let mut server = Server::new(config(pool), Duration::ZERO);
    let mut w = World::default();
    w.drain(&mut server, pool);
    let mut posts = 0u8;
    for record in data.split(|&b| b == 0xFF) {
        let Some((&op, rest)) = record.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(rest).into_owned();
        let slot = usize::from((op >> 4) & 3);
        let user = USERS[slot].0;
        w.sessions.extend(named_session(&text));
        w.mcp_user = matches!(op & 15, 0 | 1 | 11 | 12 | 13).then_some(user);
        match op & 15 {
            0 => {
                let conn = match w.ws[slot] {
                    Some(c) => c,
                    None => match server
                        .open_websocket(w.now, &principal(slot), Some([1; 16]))
                        .map(|(c, _)| c)
                    {
                        Ok(c) => {
                            w.conns.insert(c, slot);
                            w.ws[slot] = Some(c);
                            c
                        }
                        Err(_) => continue,
                    },
                };
                w.asked(conn, &text);
                server.handle_text(w.now, conn, &text);
            }
            1 => {
                let conn = w.http[slot];
                let session = named_session(&text);
                // Named from bytes of their own.
                posts = posts.wrapping_add(1);
                let random = Some([posts; 16]);
                match server.handle_post(
                    w.now,
                    &principal(slot),
                    conn,
                    session.as_deref(),
                    &text,
                    random,
                ) {
                    Ok(PostOutcome::Opened(c)) => {
                        w.conns.insert(c, slot);
                        w.http[slot] = Some(c);
                        if asks_for_positions(&text) {
                            w.retrying.insert(c);
                        }
                        w.asked(c, &text);
                    }
                    Ok(PostOutcome::Accepted) => {
                        let c = conn.expect("a post accepted without a connection");
                        w.asked(c, &text);
                    }
                    // Answered by the refusal itself.
                    Err(_) => {}
                }
            }
            2 | 7 | 10 => {
                let key = w.agent_key(pool, user);
                let run = w.runs.iter().find(|(_, u)| **u == key).map(|(r, _)| *r);
                if let Some(run) = run {
                    if op & 15 == 2 {
                        server.handle_agent_line(w.now, run, &text);
                    } else if op & 15 == 10 {
                        server.handle_agent_line(w.now, run, text.clone());
                    } else {
                        let id = PeekedId::from_str_id(&text);
                        let mut long =
                            LineTooLong::new(64, 100 + text.len(), id, text.len() % 2 == 0);
                        // Naming a session (any user's, or none known): its
                        // notice must reach that session's user alone.
                        if text.len() % 3 == 0 {
                            long = long.with_session(&text);
                        }
                        server.handle_agent_line_too_long(
                            w.now,
                            run,
                            &FrameError::LineTooLong(long),
                        );
                    }
                }
            }
            3 => {
                let ending = if op & 0x80 == 0 {
                    Ending::Broken
                } else {
                    Ending::Clean
                };
                for conn in [w.ws[slot], w.http[slot]].into_iter().flatten() {
                    server.handle_closed(w.now, conn, ending);
                    w.forget(conn);
                }
            }
            4 => {
                let key = w.agent_key(pool, user);
                let run = w.runs.iter().find(|(_, u)| **u == key).map(|(r, _)| *r);
                if let Some(run) = run {
                    w.runs.remove(&run);
                    server.handle_agent_exited(w.now, run, "exit status: 1");
                    // Its relays end with it.
                    w.mcp_user = Some(user);
                    w.close_links(&mut server, pool, |u| w_key(pool, u) == key);
                }
            }
            5 => {
                w.now += Duration::from_millis(100) * u32::try_from(text.len()).unwrap_or(0);
                server.handle_timeout(w.now);
            }
            6 => {
                for conn in [w.ws[slot], w.http[slot]].into_iter().flatten() {
                    let bytes = w.queued.remove(&conn).unwrap_or(0);
                    server.handle_sent(w.now, conn, bytes);
                }
            }
            8 => {
                if let Some(conn) = w.http[slot] {
                    let session = (!text.is_empty()).then_some(text.as_str());
                    if let Ok(opened) =
                        server.handle_stream_opened(w.now, &principal(slot), conn, session, None)
                    {
                        server.handle_stream_closed(w.now, conn, &opened.stream, opened.reader);
                    }
                }
            }
            9 => {
                if let Some(conn) = w.ws[slot] {
                    let limit = 200 + 4 * text.len();
                    server.set_client_limit(conn, limit);
                    w.limits.insert(conn, limit);
                }
            }
            11 => {
                let relay = McpRelay::new(
                    "/bin/relay".into(),
                    vec!["--mcp-relay".into()],
                    vec![("TOKEN".into(), user.into())],
                )
                .with_timeout(Duration::from_secs(3));
                server.set_mcp_relay(Some(user), Some(relay));
            }
            12 => {
                if let Ok(link) = server.handle_mcp_open(w.now, Some(user), &text) {
                    w.links.insert(link, user);
                }
            }
            13 => {
                let link = w
                    .links
                    .iter()
                    .rev()
                    .find(|(_, u)| **u == user)
                    .map(|(l, _)| *l);
                if let Some(link) = link {
                    if op & 0x80 == 0 {
                        server.handle_mcp_line(w.now, link, &text);
                    } else {
                        w.links.remove(&link);
                        server.handle_mcp_closed(w.now, link);
                    }
                }
            }
            _ => {}
        }
        w.drain(&mut server, pool);
        w.check(&server, pool);
    }
    // Every relay ends: what a client asked of one is answered.
    w.mcp_user = None;
    w.close_links(&mut server, pool, |_| true);
    // Every agent exits: whatever is still pending is answered now.
    let runs: Vec<AgentRun> = w.runs.keys().copied().collect();
    for run in runs {
        w.runs.remove(&run);
        server.handle_agent_exited(w.now, run, "exit status: 1");
        w.drain(&mut server, pool);
    }
    // Messages that waited for an agent's start go on after their wait.
    w.now += Duration::from_secs(2);
    server.handle_timeout(w.now);
    w.drain(&mut server, pool);
    let runs: Vec<AgentRun> = w.runs.keys().copied().collect();
    for run in runs {
        w.runs.remove(&run);
        server.handle_agent_exited(w.now, run, "exit status: 1");
        w.drain(&mut server, pool);
    }
    assert!(
        w.pending.is_empty(),
        "requests never answered: {:?}",
        w.pending
    );
}

/// Whether `text` is a JSON-RPC result (not an error).
fn is_result(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.get("result").is_some())
}
