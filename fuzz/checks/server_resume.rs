//! The invariant behind the `server_resume` fuzz target: resumable
//! delivery in `acp_codec::remote::Server`, shared with
//! `tests/integration/fuzz_corpus.rs`.
//!
//! One WebSocket client that asks for positions runs one turn on a
//! scripted shared agent; each input byte is an event: the agent sends
//! the session's next numbered update, the transport delivers some of
//! what is queued, the connection breaks (whatever is queued and
//! undelivered is lost), the client reconnects (a new connection with
//! the cursors of its streams, the turn's prompt sent again), time passes
//! (past the grace, the server forgets the client), the agent ends the
//! turn, or (once it ended) the client sends the prompt again on the
//! connection it has, as one that did not see the answer would. A reconnect sends `initialize` with the connection's cursor; the
//! session's `session/resume` (and the retried prompt) go with the next
//! reconnect event once `initialize` is answered, so the agent may speak
//! in between, and only when the answer advertises resume (the server
//! took the connection over; after the grace it no longer knows it, and
//! `acp-client` reports the prompt failed rather than send it again). The
//! client drops a message at a position it already has, as `acp-client`
//! does. What a run met (gaps, messages replayed) is returned, so a test
//! can show the seeds reach both.
//!
//! Asserted:
//! - on each stream the positions the client keeps follow each other
//!   without a hole, unless the server said `-32012` (a gap) for that
//!   stream, or stopped giving positions;
//! - the updates the client keeps are the agent's, in the order it sent
//!   them, each once;
//! - the prompt reaches the agent exactly once, whatever the retries
//!   (not at most once: a core that dropped it would pass that); a retry
//!   after the answer gets that answer again, or `-32012` once the log no
//!   longer holds it (the connection's ledger still remembers the
//!   prompt), never a second run;
//! - at the end, after one more reconnect and every message delivered,
//!   the client has every update and the turn's answer, unless a gap was
//!   reported.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use acp_codec::remote::{
    unstamp, Action, AgentRun, ConnectionId, Ending, Principal, Server, ServerConfig,
};
use serde_json::{json, Value};

const SESSION: &str = "s1";

/// What a run met, so a test can tell the check is not vacuous.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// Resumes answered with `-32012` (gaps).
    pub gaps: usize,
    /// Messages the server sent again at a position it had sent before
    /// (a resume's replay).
    pub replayed: usize,
    /// Retries of the answered prompt refused with `-32012` (its answer
    /// no longer kept).
    pub refused_retries: usize,
}

struct World {
    server: Server,
    run: AgentRun,
    now: Duration,
    conn: Option<ConnectionId>,
    /// Sent by the server to the current connection, not yet delivered.
    wire: VecDeque<String>,
    /// The client's last position per stream (`None`: the connection's).
    positions: BTreeMap<Option<String>, u64>,
    connection_id: Option<String>,
    /// Whether the server stopped giving positions, or reported a gap.
    lost: bool,
    /// The update numbers the agent sent, and those the client kept.
    sent_updates: u64,
    kept_updates: Vec<u64>,
    /// The agent's id of the prompt, and how many times it came.
    prompt_at_agent: Option<u64>,
    prompts_run: usize,
    prompt_answered_by_agent: bool,
    prompt_answer_kept: bool,
    session_known: bool,
    /// A new connection whose session cursors are not sent yet.
    to_resume: bool,
    /// The answer to the current connection's `initialize`: whether it
    /// advertised resume (the server took the old connection over).
    taken_over: Option<bool>,
    /// The last position the server sent on each stream, over every
    /// connection: a message at or before it is a replay.
    sent_positions: BTreeMap<Option<String>, u64>,
    seen: Seen,
}

fn initialize(cursor: Option<Value>) -> String {
    let mut meta = json!({"acp-codec/resume": {}});
    if let Some(c) = cursor {
        meta["acp-codec/cursor"] = c;
    }
    json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": 1, "_meta": meta}})
    .to_string()
}

const PROMPT: &str = r#"{"jsonrpc":"2.0","id":100,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;

impl World {
    fn new() -> Self {
        let mut config = ServerConfig::new();
        config.replay_bytes = 700;
        let mut server = Server::new(config, Duration::ZERO);
        let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
            panic!("the shared agent starts with the server")
        };
        server.handle_agent_started(Duration::ZERO, run, 1);
        let mut w = Self {
            server,
            run,
            now: Duration::ZERO,
            conn: None,
            wire: VecDeque::new(),
            positions: BTreeMap::new(),
            connection_id: None,
            lost: false,
            sent_updates: 0,
            kept_updates: Vec::new(),
            prompt_at_agent: None,
            prompts_run: 0,
            prompt_answered_by_agent: false,
            prompt_answer_kept: false,
            session_known: false,
            to_resume: false,
            taken_over: None,
            sent_positions: BTreeMap::new(),
            seen: Seen::default(),
        };
        w.connect(initialize(None));
        w.client(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#);
        w.deliver(usize::MAX);
        w.client(PROMPT);
        w
    }

    fn connect(&mut self, init: String) {
        let conn = self
            .server
            .open_websocket(self.now, &Principal::anonymous(), Some([1; 16]))
            .map(|(c, _)| c)
            .unwrap();
        self.conn = Some(conn);
        self.client(&init);
    }

    fn client(&mut self, text: &str) {
        if let Some(conn) = self.conn {
            self.server.handle_text(self.now, conn, text);
            self.drain();
        }
    }

    /// Plays the agent and the transport for every action.
    fn drain(&mut self) {
        while let Some(action) = self.server.poll_action() {
            match action {
                Action::Send { to, text, .. } => {
                    assert_eq!(
                        Some(to),
                        self.conn,
                        "a message for a connection that is gone"
                    );
                    self.server.handle_sent(self.now, to, text.len());
                    if let Some((stream, position, _)) = unstamp(&text) {
                        let top = self.sent_positions.entry(stream).or_insert(0);
                        if position.0 <= *top {
                            self.seen.replayed += 1;
                        }
                        *top = (*top).max(position.0);
                    }
                    self.wire.push_back(text);
                }
                Action::WriteAgent { line, .. } => {
                    let v: Value = serde_json::from_slice(&line.to_vec()).unwrap();
                    let id = v.get("id").cloned();
                    match v.get("method").and_then(Value::as_str) {
                        Some("initialize") => self.agent(
                            json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": 1}}),
                        ),
                        Some("session/new") => self.agent(
                            json!({"jsonrpc": "2.0", "id": id, "result": {"sessionId": SESSION}}),
                        ),
                        Some("session/resume" | "session/load") => {
                            self.agent(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
                        }
                        Some("session/prompt") => {
                            self.prompts_run += 1;
                            self.prompt_at_agent = id.and_then(|i| i.as_u64());
                        }
                        _ => {}
                    }
                }
                Action::StartAgent { run, .. } => {
                    self.run = run;
                    self.server.handle_agent_started(self.now, run, 1);
                }
                _ => {}
            }
        }
    }

    fn agent(&mut self, message: Value) {
        self.server
            .handle_agent_line(self.now, self.run, message.to_string());
        self.drain();
    }

    /// The client reads `n` queued messages.
    fn deliver(&mut self, n: usize) {
        for _ in 0..n {
            let Some(text) = self.wire.pop_front() else {
                return;
            };
            self.receive(&text);
        }
    }

    fn receive(&mut self, text: &str) {
        let message = match unstamp(text) {
            Some((stream, position, original)) => {
                let last = self.positions.get(&stream).copied();
                match last {
                    Some(last) if position.0 <= last => return,
                    Some(last) if stream.is_some() && position.0 != last + 1 => {
                        assert!(
                            self.lost,
                            "a hole on {stream:?}: {position} after {last}: {text}"
                        );
                    }
                    _ => {}
                }
                self.positions.insert(stream, position.0);
                original
            }
            None => {
                // No positions: this connection cannot resume; what was
                // missed is the client's to reload.
                self.lost = true;
                text.to_owned()
            }
        };
        let v: Value = serde_json::from_str(&message).unwrap();
        if v.get("error").and_then(|e| e.get("code")) == Some(&json!(-32012)) {
            if v["id"] == json!(100) {
                // A retry of the prompt whose answer left the log: it
                // ran, and is not run again.
                assert!(self.prompt_answered_by_agent, "{text}");
                self.seen.refused_retries += 1;
                if self.prompt_answer_kept {
                    return;
                }
            }
            self.lost = true;
            self.seen.gaps += 1;
            return;
        }
        if let Some(result) = v.get("result") {
            if v["id"] == json!("init") {
                let capability = &result["_meta"]["acp-codec/resume"];
                self.taken_over = Some(capability.is_object());
                if let Some(id) = capability["connection"].as_str() {
                    self.connection_id = Some(id.to_owned());
                }
            }
            if v["id"] == json!(1) {
                self.session_known = true;
            }
            if v["id"] == json!(100) {
                assert!(
                    !self.prompt_answer_kept || self.lost,
                    "the prompt's answer twice"
                );
                self.prompt_answer_kept = true;
            }
        }
        if v["method"] == json!("session/update") {
            let n = v["params"]["n"].as_u64().unwrap();
            if !self.lost {
                let expected = self.kept_updates.last().map_or(1, |l| l + 1);
                assert_eq!(
                    n, expected,
                    "updates out of order or twice: {:?} then {n}",
                    self.kept_updates
                );
            }
            self.kept_updates.push(n);
        }
    }

    fn break_connection(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.wire.clear();
            self.server.handle_closed(self.now, conn, Ending::Broken);
            self.drain();
        }
    }

    /// A new connection's `initialize`; its sessions' cursors come with
    /// the next reconnect event (the agent may speak in between).
    fn reconnect(&mut self) {
        if self.conn.is_some() {
            // As `acp-client`: the sessions are resumed (and the prompt
            // sent again) once `initialize` is answered, and only when the
            // server took the connection over; one that no longer knows it
            // answers without the capability, and the prompt in flight is
            // reported failed rather than run a second time.
            match self.taken_over {
                Some(true) if std::mem::take(&mut self.to_resume) => self.resume_session(),
                Some(false) => self.to_resume = false,
                _ => {}
            }
            return;
        }
        let mut cursor = json!({"position": self.positions.get(&None).copied().unwrap_or(0)});
        if let Some(id) = &self.connection_id {
            cursor["connection"] = json!(id);
        }
        self.taken_over = None;
        self.connect(initialize(Some(cursor)));
        self.to_resume = true;
    }

    fn resume_session(&mut self) {
        if self.session_known {
            let at = self
                .positions
                .get(&Some(SESSION.to_owned()))
                .copied()
                .unwrap_or(0);
            self.client(
                &json!({"jsonrpc": "2.0", "id": "resume", "method": "session/resume",
                    "params": {"sessionId": SESSION, "cwd": "/", "_meta": {"acp-codec/cursor": {"position": at}}}})
                .to_string(),
            );
            if !self.prompt_answer_kept {
                self.client(PROMPT);
            }
        }
    }

    fn step(&mut self, op: u8, arg: u8) {
        match op % 6 {
            0 if !self.prompt_answered_by_agent && self.prompts_run > 0 => {
                self.sent_updates += 1;
                let n = self.sent_updates;
                self.agent(json!({"jsonrpc": "2.0", "method": "session/update",
                    "params": {"sessionId": SESSION, "n": n}}));
            }
            1 => self.deliver(usize::from(arg % 8) + 1),
            2 => self.break_connection(),
            3 => self.reconnect(),
            4 => {
                self.now += Duration::from_secs(u64::from(arg));
                self.server.handle_timeout(self.now);
                self.drain();
            }
            5 if !self.prompt_answered_by_agent => {
                if let Some(id) = self.prompt_at_agent {
                    self.prompt_answered_by_agent = true;
                    self.agent(
                        json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}}),
                    );
                }
            }
            5 if self.taken_over == Some(true) => self.client(PROMPT),
            _ => {}
        }
    }
}

/// Runs the script in `data` and checks the invariant; what the run met.
pub fn check(data: &[u8]) -> Seen {
    let mut w = World::new();
    for pair in data.chunks(2).take(400) {
        w.step(pair[0], pair.get(1).copied().unwrap_or(0));
    }
    if !w.prompt_answered_by_agent {
        w.step(5, 0);
    }
    w.reconnect();
    w.deliver(usize::MAX);
    w.reconnect();
    w.deliver(usize::MAX);
    assert_eq!(w.prompts_run, 1, "the prompt reaches the agent once");
    if !w.lost {
        let all: Vec<u64> = (1..=w.sent_updates).collect();
        assert_eq!(w.kept_updates, all, "updates lost");
        assert!(w.prompt_answer_kept, "the prompt's answer lost");
    }
    w.seen
}
