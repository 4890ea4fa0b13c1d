//! The invariant behind the `remote_transport` fuzz target (the remote
//! transport's rules, `acp_codec::remote::{Gate, check_post, oversize}`,
//! and what `remote::Server` keeps for a session whose client left),
//! shared with `tests/integration/fuzz_corpus.rs`.
//!
//! Input: records separated by `0xFF` (never in UTF-8). A record's first
//! byte picks the call, the rest (invalid UTF-8 replaced) is its text:
//! `0` a WebSocket frame through one connection's `Gate`; `1` a `POST` body
//! through `check_post`, the byte's bits `0x10`/`0x20` giving it a
//! connection / session header; `2` the text as the head of an oversized
//! message; `3` an agent update (the text in it) for session
//! `byte >> 4 & 3`, whose client left; `4` a new connection reattaching
//! that session (`session/load`), then leaving it again.
//! Asserted:
//! - every error has a reply or a close code, and every reply is one valid
//!   JSON-RPC error line;
//! - the gate forwards only decodable messages, its first only an
//!   `initialize` request with a non-null id, and an error leaves it as it
//!   was;
//! - `check_post` makes a connection only from an `initialize` without a
//!   connection header, and names the session of every session-scoped
//!   message it accepts;
//! - a reattaching client gets, before the load's answer, the newest
//!   updates its session missed that fit the budget (one larger than the
//!   budget is never kept), once each and in order, after a
//!   `_bridge/replay_dropped` counting every other one (and their bytes)
//!   when there are others.

use std::collections::HashMap;
use std::time::Duration;

use acp_codec::acp::{Message, RequestId};
use acp_codec::remote::parts::{check_post, Checked, Gate, Post};
use acp_codec::remote::{
    is_session_scoped, oversize, Action, AgentRun, ConnectionId, Ending, Principal, RemoteError,
    Server, ServerConfig, Stream, REPLAY_DROPPED,
};
use serde_json::{json, Value};

/// Each session's kept messages, at most: small, so the fuzzer reaches
/// the dropping paths.
const BUDGET: usize = 512;
const MAX_ID: usize = 64;
const SESSIONS: [&str; 4] = ["s0", "s1", "s2", "s3"];

/// A [`Server`] (one shared agent, played here) whose one client opened
/// sessions and left them: what the agent sends for them meanwhile is
/// kept, within a budget a session, for the client that reattaches them.
pub struct Away {
    pub server: Server,
    run: AgentRun,
    now: Duration,
    /// Connections opened, for their names.
    opened: u64,
    /// The server's log lines, in order.
    pub logs: Vec<String>,
}

impl Away {
    /// A server keeping `budget` bytes a left session; its client opened
    /// `sessions` and left.
    pub fn new(budget: usize, sessions: &[&str]) -> Self {
        let mut config = ServerConfig::new();
        config.replay_bytes = budget;
        let now = Duration::ZERO;
        let mut server = Server::new(config, now);
        let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
            panic!("no agent started")
        };
        server.handle_agent_started(now, run, 1);
        let mut away = Self {
            server,
            run,
            now,
            opened: 0,
            logs: Vec::new(),
        };
        let conn = away.connect();
        for s in sessions {
            let id = away.request(conn, "session/new", json!({"cwd":"/","mcpServers":[]}));
            away.agent(&json!({"jsonrpc":"2.0","id":id,"result":{"sessionId":s}}).to_string());
        }
        away.leave(conn);
        away
    }

    /// Carries out the server's actions: the lines written to the agent,
    /// and the messages sent (each written at once).
    pub fn settle(&mut self) -> (Vec<Value>, Vec<(ConnectionId, Stream, String)>) {
        let (mut lines, mut sent) = (Vec::new(), Vec::new());
        while let Some(action) = self.server.poll_action() {
            match action {
                Action::WriteAgent { line, .. } => {
                    lines.push(serde_json::from_slice(&line.to_vec()).unwrap());
                }
                Action::Send {
                    to, stream, text, ..
                } => {
                    self.server.handle_sent(self.now, to, text.len());
                    sent.push((to, stream, text));
                }
                Action::StartAgent { run, .. } => {
                    self.run = run;
                    self.server.handle_agent_started(self.now, run, 2);
                }
                Action::Log(text) => self.logs.push(text),
                _ => {}
            }
        }
        (lines, sent)
    }

    /// A new WebSocket connection of the anonymous user, initialized.
    pub fn connect(&mut self) -> ConnectionId {
        self.opened += 1;
        let mut name = [0; 16];
        name[..8].copy_from_slice(&self.opened.to_le_bytes());
        let (conn, _) = self
            .server
            .open_websocket(self.now, &Principal::anonymous(), Some(name))
            .unwrap();
        let id = self.request(conn, "initialize", json!({"protocolVersion":1}));
        self.agent(&json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1}}).to_string());
        conn
    }

    /// `conn` sends a request with id 1: the id the agent gets it with.
    pub fn request(&mut self, conn: ConnectionId, method: &str, params: Value) -> Value {
        let text = json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string();
        self.server.handle_text(self.now, conn, &text);
        let (lines, _) = self.settle();
        let line = lines.iter().find(|l| l["method"] == method);
        line.unwrap_or_else(|| panic!("{method} did not reach the agent"))["id"].clone()
    }

    /// A line from the agent: what was sent for it.
    pub fn agent(&mut self, line: &str) -> Vec<(ConnectionId, Stream, String)> {
        self.server.handle_agent_line(self.now, self.run, line);
        self.settle().1
    }

    /// The agent's update for `session`, whose client left, carrying
    /// `text`: its line (sent to nobody).
    pub fn update(&mut self, session: &str, text: &str) -> String {
        let line = json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":session,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":text}}}}).to_string();
        let sent = self.agent(&line);
        assert!(
            sent.is_empty(),
            "an update of a left session was sent: {sent:?}"
        );
        line
    }

    /// A new connection loads `session` (request id 1), the agent
    /// answering with `answer`'s members (`result` or `error`): the
    /// connection, what it got before the answer (each on the session's
    /// stream), and the answer.
    pub fn reattach(&mut self, session: &str, answer: Value) -> (ConnectionId, Vec<String>, Value) {
        let conn = self.connect();
        let params = json!({"sessionId":session,"cwd":"/","mcpServers":[]});
        let id = self.request(conn, "session/load", params);
        let mut line = json!({"jsonrpc":"2.0","id":id});
        if let (Some(line), Some(answer)) = (line.as_object_mut(), answer.as_object()) {
            line.extend(answer.clone());
        }
        let mut sent = self.agent(&line.to_string());
        let (to, stream, last) = sent.pop().expect("the load's answer");
        let last: Value = serde_json::from_str(&last).unwrap();
        assert_eq!(
            (to, &last["id"]),
            (conn, &json!(1)),
            "the answer comes last: {last}"
        );
        if last.get("result").is_some() {
            assert_eq!(stream, Stream::Session(session.into()));
        }
        let before = sent
            .into_iter()
            .map(|(to, stream, text)| {
                assert_eq!(
                    (to, stream),
                    (conn, Stream::Session(session.into())),
                    "{text}"
                );
                text
            })
            .collect();
        (conn, before, last)
    }

    /// `conn` closes cleanly: its sessions are left again.
    pub fn leave(&mut self, conn: ConnectionId) {
        self.server.handle_closed(self.now, conn, Ending::Clean);
        self.settle();
    }

    /// The agent exits, and is restarted after its backoff (for the
    /// integration tests; the fuzz target does not).
    #[allow(dead_code)]
    pub fn agent_restarts(&mut self) {
        self.server
            .handle_agent_exited(self.now, self.run, "exit status: 1");
        self.settle();
        self.now += Duration::from_secs(60);
        self.server.handle_timeout(self.now);
        self.settle();
    }
}

/// The oracle of what a reattach gets of `missed` (oldest first) within
/// `budget`: the longest run of the newest that fit, skipping any larger
/// than the budget; and how many messages and bytes were dropped.
pub fn kept_of(missed: &[String], budget: usize) -> (Vec<String>, u64, u64) {
    let mut keep = Vec::new();
    let mut sum = 0;
    for m in missed.iter().rev().filter(|m| m.len() <= budget) {
        if sum + m.len() > budget {
            break;
        }
        sum += m.len();
        keep.push(m.clone());
    }
    keep.reverse();
    let total: usize = missed.iter().map(String::len).sum();
    let dropped = (missed.len() - keep.len()) as u64;
    (keep, dropped, (total - sum) as u64)
}

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
    let mut away: Option<Away> = None;
    let mut missed: HashMap<String, Vec<String>> = HashMap::new();
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
                let away = away.get_or_insert_with(|| Away::new(BUDGET, &SESSIONS));
                let line = away.update(&session, &text);
                missed.entry(session).or_default().push(line);
            }
            _ => {
                let session = format!("s{}", (op >> 4) & 3);
                let away = away.get_or_insert_with(|| Away::new(BUDGET, &SESSIONS));
                let (conn, mut got, _) = away.reattach(&session, json!({"result": {}}));
                let missed = missed.remove(&session).unwrap_or_default();
                let (keep, dropped, bytes) = kept_of(&missed, BUDGET);
                if dropped > 0 {
                    assert!(!got.is_empty(), "nothing reports the {dropped} dropped");
                    let note: Value = serde_json::from_str(&got.remove(0)).unwrap();
                    assert_eq!(note["method"], REPLAY_DROPPED);
                    let counts = json!({"sessionId": session, "droppedMessages": dropped, "droppedBytes": bytes});
                    assert_eq!(note["params"], counts);
                }
                assert_eq!(got, keep, "what {session} missed");
                away.leave(conn);
            }
        }
    }
}
