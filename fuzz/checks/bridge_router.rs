//! The invariant behind the `bridge_router` fuzz target
//! (`acp_codec::remote::parts::Router`, the multiplexer a bridge runs), shared with
//! `tests/integration/fuzz_corpus.rs`.
//!
//! Input: records separated by `0xFF` (never in UTF-8). A record's first
//! byte picks the event, the rest (invalid UTF-8 replaced) is its text:
//! `0`-`2` a WebSocket message from client 0-2 (clients 0 and 1 are
//! connections of user `ana`, client 2 of user `bo`), `3` an agent stdout
//! line, `4` client 0 leaves (and a new connection of `ana` takes its
//! slot), `5` the agent exits, `6` it starts again, `7` a message from
//! client 3 (user `cy`, who may only read). Each user may hold
//! [`MAX_USER_SESSIONS`] sessions and keeps as many left ones in full, so
//! older ones are evicted to compact records. Asserted, after every event:
//! - every line for the agent is exactly one line (one `\n`, at the end)
//!   and a valid JSON-RPC message;
//! - every message for a client has no raw newline, goes to a connected
//!   client, and is valid JSON-RPC, or else an agent's line forwarded as
//!   it came (the router reads an agent's line up to the members it
//!   routes on, not its inside): its strings and brackets closed, and a
//!   notification naming no `sessionId` when it goes to more than one
//!   client;
//! - a client message holding a raw newline never reaches the agent;
//! - an agent line goes to at most one client unless it is a notification
//!   without a `sessionId`;
//! - nothing panics, and the pending tables never outgrow the requests;
//! - what a session whose client left misses is handed out (`Out::Missed`)
//!   as the agent's very line, only while no connection holds the session
//!   and for at most `DEFAULT_MAX_REPLAY_SESSIONS` sessions at once; a
//!   reattach hands it over (`Out::Reattached`) to a connected client of
//!   the session's first owner that now holds it, before the answer, and
//!   nothing is handed over twice (the server keeps it between the two,
//!   within its budget: the `remote_transport` check);
//! - a client message naming a session another user owns never reaches
//!   the agent, nor does a `session/load` or `session/resume` of a
//!   session the router has never seen (every user here is named, and
//!   the agent shared);
//! - ownership never lapses and never moves: once the router names a
//!   session's user, it names the same one after every later event
//!   (evictions and agent restarts included), and every message on a
//!   session's stream goes to a connection of that first owner;
//! - a read-only user reaches the agent only with `initialize`,
//!   `session/list`, `session/load`, `session/resume` and
//!   `$/cancel_request` (its answers and every other method stop at the
//!   router), and is never handed one of the agent's requests.
use std::collections::BTreeMap;
use std::time::Duration;

use acp_codec::acp::{Message, RequestId};
use acp_codec::remote::parts::{ClientId, MessageKind, Out, Router};
use acp_codec::remote::{Permissions, Stream, DEFAULT_MAX_REPLAY_SESSIONS};

/// What `message` is, read from its JSON alone (the oracle of the kind the
/// router carries with it).
pub fn kind_in(message: &serde_json::Value) -> MessageKind {
    use serde_json::Value;
    let id = match message.get("id") {
        Some(Value::Number(n)) => RequestId::Number(n.as_i64().unwrap()),
        Some(Value::String(s)) => RequestId::Str(s.clone().into()),
        _ => RequestId::Null,
    };
    match (message.get("method"), message.get("id")) {
        (Some(_), Some(_)) => MessageKind::Request(id),
        (Some(_), None) => MessageKind::Notification,
        _ => MessageKind::Answer(id),
    }
}

/// The members of the JSON object `text` (raw keys, quotes included, and
/// raw values), read one byte at a time by its strings and brackets
/// alone; `None` when those do not close, or `text` is not one object
/// (the oracle of an agent's line forwarded without a full decode; it
/// shares no code with the router's peek).
pub fn raw_members(text: &str) -> Option<Vec<(&str, &str)>> {
    let b = text.as_bytes();
    let ws = |mut i: usize| {
        while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    };
    // The end of the value at `i`, by its strings and brackets.
    let end = |mut i: usize| -> Option<usize> {
        let mut open = Vec::new();
        loop {
            match *b.get(i)? {
                b'"' => {
                    i += 1;
                    loop {
                        match *b.get(i)? {
                            b'\\' => i += 2,
                            b'"' => break,
                            _ => i += 1,
                        }
                    }
                }
                c @ (b'{' | b'[') => open.push(c),
                c @ (b'}' | b']') => {
                    let want = if c == b'}' { b'{' } else { b'[' };
                    if open.pop()? != want {
                        return None;
                    }
                }
                b',' | b':' if open.is_empty() => return Some(i),
                _ => {}
            }
            i += 1;
            if open.is_empty() && matches!(b.get(i), None | Some(b',' | b'}' | b']' | b':')) {
                return Some(i);
            }
        }
    };
    let mut i = ws(0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    i = ws(i + 1);
    if b.get(i) == Some(&b'}') {
        return (ws(i + 1) == b.len()).then_some(members);
    }
    loop {
        let key_end = end(i)?;
        let key = text.get(i..key_end)?.trim_end();
        i = ws(key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(i + 1);
        let value_end = end(i)?;
        members.push((key, text.get(i..value_end)?.trim_end()));
        i = ws(value_end);
        match b.get(i)? {
            b',' => i = ws(i + 1),
            b'}' => return (ws(i + 1) == b.len()).then_some(members),
            _ => return None,
        }
    }
}

/// The user of each client slot, and what that user may do.
const USERS: [(&str, Permissions); 4] = [
    ("ana", Permissions::READ_WRITE),
    ("ana", Permissions::READ_WRITE),
    ("bo", Permissions::READ_WRITE),
    ("cy", Permissions::READ_ONLY),
];

/// The slot of the read-only user.
const READER: usize = 3;

/// What a read-only user may send the agent, restated from the
/// permissions' documentation (not the router's own table).
fn reader_may_send(text: &str) -> bool {
    match Message::decode(text) {
        Ok(Message::Request(r)) => matches!(
            &*r.method,
            "initialize" | "session/list" | "session/load" | "session/resume"
        ),
        Ok(Message::Notification(n)) => n.method == "$/cancel_request",
        _ => false,
    }
}

/// The `sessionId` in the params of a request or notification.
fn named_session(text: &str) -> Option<String> {
    let params = match Message::decode(text).ok()? {
        Message::Request(r) => r.params,
        Message::Notification(n) => n.params,
        _ => None,
    }?;
    let v: serde_json::Value = serde_json::from_str(params.get()).ok()?;
    v.get("sessionId")?.as_str().map(str::to_owned)
}

/// Small, so the fuzzer reaches the eviction paths.
const MAX_USER_SESSIONS: usize = 2;

/// Whether `text` is a `session/load` or `session/resume` request.
fn is_reattach(text: &str) -> bool {
    matches!(
        Message::decode(text),
        Ok(Message::Request(r)) if matches!(&*r.method, "session/load" | "session/resume")
    )
}

/// The `result.sessionId` of a response.
fn result_session(text: &str) -> Option<String> {
    let Ok(Message::Response(r)) = Message::decode(text) else {
        return None;
    };
    let v: serde_json::Value = serde_json::from_str(r.result.get()).ok()?;
    v.get("sessionId")?.as_str().map(str::to_owned)
}

pub fn check(data: &[u8]) {
    let mut router = Router::new().with_user_limits(4, MAX_USER_SESSIONS);
    // What each left session missed, as handed out, until it is handed
    // over or forgotten.
    let mut missed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Each session's first owner, as the router first named it.
    let mut first_owner: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::new();
    router.agent_started(1, 0, &mut out);
    let mut clients: Vec<ClientId> = USERS
        .iter()
        .map(|&(u, p)| router.connect_as(u, p).unwrap())
        .collect();
    let mut requests = 0usize;
    for (step, record) in data.split(|&b| b == 0xFF).enumerate() {
        let Some((&op, rest)) = record.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(rest);
        let now = Duration::from_millis(step as u64);
        out.clear();
        let mut from_agent = false;
        // Sessions this event may have made known.
        let mut named: Vec<String> = named_session(&text).into_iter().collect();
        match op % 8 {
            c @ (0..=2 | 7) => {
                requests += 1;
                let slot = if c == 7 { READER } else { usize::from(c) };
                let user = USERS[slot].0;
                let foreign = named_session(&text)
                    .and_then(|s| router.session_user(&s).map(|u| u != user))
                    .unwrap_or(false);
                let unseen_reattach = is_reattach(&text)
                    && named_session(&text).is_some_and(|s| router.session_user(&s).is_none());
                router.handle_client(clients[slot], &text, now, &mut out);
                if slot == READER && !reader_may_send(&text) {
                    assert!(
                        !out.iter().any(|o| matches!(o, Out::Agent(_))),
                        "a read-only user's message reached the agent: {text:?}"
                    );
                }
                if foreign {
                    assert!(
                        !out.iter().any(|o| matches!(o, Out::Agent(_))),
                        "another user's session reached the agent: {text:?}"
                    );
                }
                if unseen_reattach {
                    assert!(
                        !out.iter().any(|o| matches!(o, Out::Agent(_))),
                        "a reattach of a session never seen reached the agent: {text:?}"
                    );
                }
                if text.contains('\n') {
                    assert!(
                        !out.iter().any(|o| matches!(o, Out::Agent(_))),
                        "a message with a raw newline was forwarded: {text:?}"
                    );
                }
            }
            3 => {
                router.handle_agent(&text, now, &mut out);
                from_agent = true;
                named.extend(result_session(&text));
            }
            4 => {
                router.disconnect(clients[0], &mut out);
                clients[0] = router.connect_as(USERS[0].0, USERS[0].1).unwrap();
            }
            5 => router.agent_exited("exit status: 1", Duration::from_millis(100), &mut out),
            _ => router.agent_started(2, 1, &mut out),
        }
        // Distinct recipients: a reattach hands one client the replayed
        // messages and the answer together.
        let mut to_clients = std::collections::BTreeSet::new();
        let mut handed_out = 0;
        for (n, o) in out.iter().enumerate() {
            match o {
                Out::Missed { session, text: msg } => {
                    assert!(from_agent, "a message missed without an agent line");
                    assert_eq!(*msg, text, "a missed message is the agent's line");
                    assert_eq!(router.owner(session), None, "{session:?} is held");
                    assert!(
                        router.session_user(session).is_some(),
                        "{session:?} is nobody's"
                    );
                    handed_out += 1;
                    missed.entry(session.clone()).or_default().push(msg.clone());
                }
                Out::Reattached { to, session } => {
                    assert!(clients.contains(to), "a reattach of a client that is gone");
                    assert_eq!(router.owner(session), Some(*to), "handed to another");
                    let first = first_owner.get(session).map(String::as_str);
                    let first = first.or(router.session_user(session));
                    assert_eq!(router.user_of(*to), first, "handed to another user");
                    // Before the answer, which follows.
                    assert!(
                        matches!(out.get(n + 1), Some(Out::Client { to: c, .. }) if c == to),
                        "no answer follows the reattach of {session:?}"
                    );
                    missed.remove(session);
                }
                Out::Forget { session } => {
                    missed.remove(session);
                }
                Out::Agent(line) => {
                    let line = line.to_vec();
                    assert_eq!(line.last(), Some(&b'\n'));
                    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
                    let s = std::str::from_utf8(&line[..line.len() - 1]).unwrap();
                    Message::decode(s)
                        .unwrap_or_else(|e| panic!("bad line for the agent {s:?}: {e}"));
                }
                Out::InitializeRefused { to } => {
                    assert!(clients.contains(to), "a refusal for a client that is gone");
                }
                Out::Client {
                    to: c,
                    text: msg,
                    stream,
                    kind,
                } => {
                    assert!(clients.contains(c), "message for a client that is gone");
                    if let Stream::Session(s) = stream {
                        let owner = match (first_owner.get(s), router.session_user(s)) {
                            (Some(first), _) => first.clone(),
                            (None, Some(now)) => now.to_owned(),
                            // No owner named yet: whoever gets it is.
                            (None, None) => router.user_of(*c).unwrap_or_default().to_owned(),
                        };
                        assert_eq!(
                            router.user_of(*c),
                            Some(owner.as_str()),
                            "a message of session {s:?} went to another user than its first owner"
                        );
                        first_owner.entry(s.clone()).or_insert(owner);
                    }
                    assert!(!msg.contains('\n'));
                    let decoded = match Message::decode(msg) {
                        Ok(decoded) => decoded,
                        Err(e) => {
                            // An agent's line, not JSON inside: forwarded
                            // as it came, its structure sound.
                            assert!(
                                from_agent && *msg == text && raw_members(msg).is_some(),
                                "bad message for a client {msg:?}: {e}"
                            );
                            to_clients.insert(*c);
                            continue;
                        }
                    };
                    // What travels with it is what its JSON says.
                    let value: serde_json::Value = serde_json::from_str(msg).unwrap();
                    assert_eq!(*kind, kind_in(&value), "the kind of {msg:?}");
                    if *c == clients[READER] {
                        assert!(
                            !matches!(decoded, Message::Request(_)),
                            "the agent's request reached a read-only user: {msg:?}"
                        );
                    }
                    to_clients.insert(*c);
                }
            }
        }
        if handed_out > 0 {
            assert!(
                handed_out == 1 && to_clients.is_empty(),
                "a missed line also sent"
            );
        }
        if from_agent && to_clients.len() > 1 && Message::decode(&text).is_err() {
            // Not JSON inside: a notification naming no session, by the
            // members of the line and of its params.
            let members = raw_members(&text).unwrap_or_default();
            let member = |name: &str| members.iter().find(|(k, _)| *k == name).map(|m| m.1);
            assert!(
                member("\"method\"").is_some() && member("\"id\"").is_none(),
                "agent line sent to {} clients: {text:?}",
                to_clients.len()
            );
            let params = member("\"params\"")
                .and_then(raw_members)
                .unwrap_or_default();
            assert!(
                params
                    .iter()
                    .all(|(k, v)| *k != "\"sessionId\"" || *v == "null"),
                "a notification naming a session was broadcast: {text:?}"
            );
        } else if from_agent && to_clients.len() > 1 {
            let Ok(Message::Notification(n)) = Message::decode(&text) else {
                panic!("agent line sent to {} clients: {text:?}", to_clients.len());
            };
            let session = n
                .params
                .as_ref()
                .and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok())
                .and_then(|v| v.get("sessionId").cloned());
            assert!(
                session.is_none_or(|s| s.is_null()),
                "a notification naming a session was broadcast: {text:?}"
            );
        }
        for s in named {
            if let Some(u) = router.session_user(&s) {
                first_owner.entry(s).or_insert_with(|| u.to_owned());
            }
        }
        for (s, first) in &first_owner {
            assert_eq!(
                router.session_user(s),
                Some(first.as_str()),
                "session {s:?} changed owner or was forgotten"
            );
        }
        assert!(missed.len() <= DEFAULT_MAX_REPLAY_SESSIONS);
        let (forwarded, asked) = router.pending();
        assert!(forwarded <= requests);
        assert!(asked <= step + 1);
    }
}
