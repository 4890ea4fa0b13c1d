//! The invariant behind the `bridge_router` fuzz target
//! (`acp_codec::remote::Router`, the multiplexer a bridge runs), shared with
//! `tests/fuzz_corpus.rs`.
//!
//! Input: records separated by `0xFF` (never in UTF-8). A record's first
//! byte picks the event, the rest (invalid UTF-8 replaced) is its text:
//! `0`-`2` a WebSocket message from client 0-2 (clients 0 and 1 are
//! connections of user `ana`, client 2 of user `bo`), `3` an agent stdout
//! line, `4` client 0 leaves (and a new connection of `ana` takes its
//! slot), `5` the agent exits, `6` it starts again, `7` a message from
//! client 3 (user `cy`, who may only read). Asserted, after every event:
//! - every line for the agent is exactly one line (one `\n`, at the end)
//!   and a valid JSON-RPC message;
//! - every message for a client is valid JSON-RPC without a raw newline,
//!   and goes to a connected client;
//! - a client message holding a raw newline never reaches the agent;
//! - an agent line goes to at most one client unless it is a notification
//!   without a `sessionId`;
//! - nothing panics, and the pending tables never outgrow the requests;
//! - the replay buffer (on, so sessions of a client that left wait for a
//!   reattach) never holds more than its budget per session;
//! - a client message naming a session another user owns never reaches
//!   the agent, and every message on a session's stream goes to a
//!   connection of the user who owns that session;
//! - a read-only user reaches the agent only with `initialize`,
//!   `session/list`, `session/load`, `session/resume` and
//!   `$/cancel_request` (its answers and every other method stop at the
//!   router), and is never handed one of the agent's requests.
use std::time::Duration;

use acp_codec::acp::Message;
use acp_codec::remote::{ClientId, Out, Permissions, ReplayBuffer, Router, Stream};

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

/// Small, so the fuzzer reaches the dropping paths.
const REPLAY_BUDGET: usize = 4096;

pub fn check(data: &[u8]) {
    let mut router = Router::new().with_replay(ReplayBuffer::new(REPLAY_BUDGET));
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
        match op % 8 {
            c @ (0..=2 | 7) => {
                requests += 1;
                let slot = if c == 7 { READER } else { usize::from(c) };
                let user = USERS[slot].0;
                let foreign = named_session(&text)
                    .and_then(|s| router.session_user(&s).map(|u| u != user))
                    .unwrap_or(false);
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
        for o in &out {
            match o {
                Out::Agent(line) => {
                    assert_eq!(line.last(), Some(&b'\n'));
                    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
                    let s = std::str::from_utf8(&line[..line.len() - 1]).unwrap();
                    Message::decode(s)
                        .unwrap_or_else(|e| panic!("bad line for the agent {s:?}: {e}"));
                }
                Out::Client {
                    to: c,
                    text: msg,
                    stream,
                } => {
                    assert!(clients.contains(c), "message for a client that is gone");
                    if let Stream::Session(s) = stream {
                        if let Some(owner) = router.session_user(s) {
                            assert_eq!(
                                router.user_of(*c),
                                Some(owner),
                                "a message of session {s:?} went to another user"
                            );
                        }
                    }
                    assert!(!msg.contains('\n'));
                    let decoded = Message::decode(msg)
                        .unwrap_or_else(|e| panic!("bad message for a client {msg:?}: {e}"));
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
        if from_agent && to_clients.len() > 1 {
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
        let replay = router.replay().unwrap();
        assert!(replay.bytes() <= REPLAY_BUDGET * replay.sessions());
        let (forwarded, asked) = router.pending();
        assert!(forwarded <= requests);
        assert!(asked <= step + 1);
    }
}
