//! The invariant behind the `remote_transport` fuzz target (the remote
//! transport's rules and replay buffer: `acp_codec::remote::{Gate,
//! check_post, oversize, ReplayBuffer}`), shared with `tests/integration/fuzz_corpus.rs`.
//!
//! Input: records separated by `0xFF` (never in UTF-8). A record's first
//! byte picks the call, the rest (invalid UTF-8 replaced) is its text:
//! `0` a WebSocket frame through one connection's `Gate`; `1` a `POST` body
//! through `check_post`, the byte's bits `0x10`/`0x20` giving it a
//! connection / session header; `2` the text as the head of an oversized
//! message; `3` a replay push for session `byte >> 4 & 3`; `4` a take.
//! Asserted:
//! - every error has a reply or a close code, and every reply is one valid
//!   JSON-RPC error line;
//! - the gate forwards only decodable messages, its first only an
//!   `initialize` request with a non-null id, and an error leaves it as it
//!   was;
//! - `check_post` makes a connection only from an `initialize` without a
//!   connection header, and names the session of every session-scoped
//!   message it accepts;
//! - the replay buffer keeps at most its budget per session, and what it
//!   hands over plus what it dropped is every message pushed.

use std::collections::HashMap;

use acp_codec::acp::{Message, RequestId};
use acp_codec::remote::parts::{check_post, Checked, Gate, Post, ReplayBuffer};
use acp_codec::remote::{is_session_scoped, oversize, RemoteError};

const BUDGET: usize = 256;
const MAX_ID: usize = 64;

fn check_reply(e: &RemoteError) {
    let reply = e.reply();
    assert!(
        reply.is_some() || e.close_code().is_some() || e.http_status() != 0,
        "{e}: nothing to answer with"
    );
    if let Some(reply) = reply {
        assert_eq!(reply.error.code, e.code());
        let mut line = Vec::new();
        reply.encode(&mut line).expect("a reply encodes");
        assert_eq!(line.pop(), Some(b'\n'));
        let line = std::str::from_utf8(&line).expect("utf-8");
        assert!(!line.contains('\n'));
        match Message::decode(line) {
            Ok(Message::Error(err)) => {
                assert_eq!(err.error.code, e.code());
                assert_eq!(err.id, reply.id);
            }
            other => panic!("reply {line:?} is not an error: {other:?}"),
        }
    }
}

pub fn check(data: &[u8]) {
    let mut gate = Gate::new().with_max_id_len(MAX_ID);
    let mut replay = ReplayBuffer::new(BUDGET).with_max_sessions(3);
    let mut pushed: HashMap<String, u64> = HashMap::new();
    for record in data.split(|&b| b == 0xFF) {
        let Some((&op, rest)) = record.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(rest);
        match op % 5 {
            0 => {
                let before = gate.clone();
                match gate.check(&text) {
                    Ok(Checked::Forward(m)) => {
                        assert_eq!(Message::decode(&text).ok().as_ref(), Some(&m));
                        if !before.is_initialized() {
                            let Message::Request(r) = &m else {
                                panic!("first forwarded is not a request: {text:?}")
                            };
                            assert_eq!(r.method, "initialize");
                            assert_ne!(r.id, RequestId::Null);
                        }
                        assert!(gate.is_initialized());
                    }
                    Ok(Checked::Ignore) => assert_eq!(gate, before),
                    Err(e) => {
                        assert_eq!(gate, before, "{e} changed the gate");
                        check_reply(&e);
                    }
                }
            }
            1 => {
                let connection = (op & 0x10 != 0).then_some("c");
                let header = (op & 0x20 != 0).then_some("s");
                match check_post(&text, connection, header, MAX_ID) {
                    Ok(Post::Initialize(r)) => {
                        assert!(connection.is_none());
                        assert_eq!(r.method, "initialize");
                        assert_ne!(r.id, RequestId::Null);
                    }
                    Ok(Post::Message { message, session }) => {
                        assert!(connection.is_some());
                        if message.method().is_some_and(is_session_scoped) {
                            assert!(session.is_some(), "{text:?} has no session");
                        }
                        if let Some(s) = &session {
                            assert!(s.len() <= MAX_ID);
                        }
                    }
                    Err(e) => check_reply(&e),
                }
            }
            2 => {
                let e = oversize(rest, rest.len().saturating_add(1), rest.len());
                assert!(e.close_code().is_some());
                assert_eq!(e.http_status(), 413);
                check_reply(&e);
            }
            3 => {
                let session = format!("s{}", (op >> 4) & 3);
                let _ = replay.push(&session, &text);
                *pushed.entry(session).or_default() += 1;
                assert!(replay.bytes() <= BUDGET * replay.sessions());
            }
            _ => {
                let session = format!("s{}", (op >> 4) & 3);
                let got = replay.take(&session);
                let bytes: usize = got.messages.iter().map(String::len).sum();
                assert!(bytes <= BUDGET);
                let n = pushed.remove(&session).unwrap_or(0);
                // A push refused for the session limit is counted by the
                // push alone, so the take may account for fewer.
                assert!(got.messages.len() as u64 + got.dropped.messages <= n);
            }
        }
    }
}
