//! The team server's real core for the client's resume tests, without
//! sockets: `acp_codec::remote::Server` (the sans-IO core `acp-bridge`
//! runs) with its shared agent played by a script whose turn is a fixed
//! list of updates, with a permission request after the third. A test
//! opens and breaks connections, hands the core what the client sends,
//! and decides when the agent makes its next step; what the core sends
//! each connection is returned in order. Resume, replay, gaps and the
//! prompt ledger are the core's own rules: the script only counts the
//! prompts that reach the agent.

use std::collections::BTreeMap;
use std::time::Duration;

use acp_codec::remote::{Action, AgentRun, ConnectionId, Ending, Principal, Server, ServerConfig};
use serde_json::{json, Value};

/// The session every test uses.
pub const SESSION: &str = "s1";

/// One step of the scripted turn.
#[derive(Debug, Clone)]
enum Step {
    Update(String),
    /// A permission request (the agent's id); the turn waits for its
    /// answer.
    Ask(i64),
}

/// The core and its scripted agent; see the module docs.
pub struct ResumingServer {
    server: Server,
    run: AgentRun,
    /// The core's clock: each event moves it a millisecond.
    now: Duration,
    script: Vec<Step>,
    /// The running turn: the prompt's id at the agent, the next step.
    turn: Option<(Value, usize)>,
    waiting: Option<i64>,
    /// What the core sent each connection, not yet taken.
    outbox: BTreeMap<ConnectionId, Vec<String>>,
    /// How many `session/prompt` requests reached the agent.
    pub prompts_run: usize,
}

impl ResumingServer {
    /// The core with resume logs of `budget` bytes; the agent's turn sends
    /// `updates` texts, with a permission request after the
    /// `ask_after`-th.
    pub fn new(budget: usize, updates: &[&str], ask_after: Option<usize>) -> Self {
        let mut script = Vec::new();
        for (n, text) in updates.iter().enumerate() {
            script.push(Step::Update((*text).to_owned()));
            if ask_after == Some(n + 1) {
                script.push(Step::Ask(1000));
            }
        }
        let mut config = ServerConfig::new();
        config.replay_bytes = budget;
        let mut server = Server::new(config, Duration::ZERO);
        let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
            panic!("the shared agent starts with the server")
        };
        server.handle_agent_started(Duration::ZERO, run, 1);
        Self {
            server,
            run,
            now: Duration::ZERO,
            script,
            turn: None,
            waiting: None,
            outbox: BTreeMap::new(),
            prompts_run: 0,
        }
    }

    fn tick(&mut self) -> Duration {
        self.now += Duration::from_millis(1);
        self.now
    }

    /// A new WebSocket connection, anonymous.
    pub fn open(&mut self) -> ConnectionId {
        let now = self.tick();
        let conn = self
            .server
            .open_websocket(now, &Principal::anonymous(), Some([1; 16]))
            .map(|(c, _)| c)
            .expect("the core takes the connection");
        self.drain();
        conn
    }

    /// The connection broke (no close frame): what it had not read is
    /// lost.
    pub fn broken(&mut self, conn: ConnectionId) {
        let now = self.tick();
        self.server.handle_closed(now, conn, Ending::Broken);
        self.drain();
        self.outbox.remove(&conn);
    }

    /// A line from the client on `conn`; the messages the core sends
    /// `conn`, in order.
    pub fn handle(&mut self, conn: ConnectionId, line: &str) -> Vec<String> {
        let now = self.tick();
        self.server.handle_text(now, conn, line);
        self.drain();
        self.take(conn)
    }

    /// What the core sent `conn` since the last take.
    pub fn take(&mut self, conn: ConnectionId) -> Vec<String> {
        self.outbox.remove(&conn).unwrap_or_default()
    }

    /// The agent's next step, if its turn can go on (`None` when it has
    /// no turn or waits for the permission's answer). What it sends goes
    /// through the core: [`take`](Self::take) what a connection got.
    pub fn step(&mut self) -> Option<()> {
        if self.waiting.is_some() {
            return None;
        }
        let (id, next) = self.turn.clone()?;
        let line = match self.script.get(next).cloned() {
            Some(Step::Update(text)) => {
                json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})
            }
            Some(Step::Ask(ask)) => {
                self.waiting = Some(ask);
                json!({"jsonrpc": "2.0", "id": ask, "method": "session/request_permission", "params": {"sessionId": SESSION, "toolCall": {"toolCallId": "t1"}, "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}})
            }
            None => json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}}),
        };
        self.turn = self.script.get(next).map(|_| (id, next + 1));
        self.agent(&line);
        Some(())
    }

    fn agent(&mut self, message: &Value) {
        let now = self.tick();
        self.server
            .handle_agent_line(now, self.run, message.to_string());
        self.drain();
    }

    /// Plays the transport (every message counts as written) and the
    /// agent for each action of the core.
    fn drain(&mut self) {
        while let Some(action) = self.server.poll_action() {
            match action {
                Action::Send { to, text, .. } => {
                    self.server.handle_sent(self.now, to, text.len());
                    self.outbox.entry(to).or_default().push(text);
                }
                Action::WriteAgent { line, .. } => {
                    let message: Value =
                        serde_json::from_slice(&line.to_vec()).expect("the core writes JSON");
                    self.agent_reads(&message);
                }
                Action::StartAgent { run, .. } => {
                    self.run = run;
                    self.server.handle_agent_started(self.now, run, 1);
                }
                Action::Close { conn, reason, .. } => {
                    panic!("the core closed connection {conn:?}: {reason}")
                }
                _ => {}
            }
        }
    }

    /// What the scripted agent does with a line the core wrote it.
    fn agent_reads(&mut self, message: &Value) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match message.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                self.agent(&answer(
                    json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": true}}),
                ));
            }
            Some("session/new") => self.agent(&answer(json!({"sessionId": SESSION}))),
            Some("session/resume" | "session/load") => self.agent(&answer(json!({}))),
            // The client left or cancelled: the turn ends there.
            Some("session/cancel") => {
                if let Some((id, _)) = self.turn.take() {
                    self.waiting = None;
                    self.agent(
                        &json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "cancelled"}}),
                    );
                }
            }
            Some("session/prompt") => {
                self.prompts_run += 1;
                assert!(self.turn.is_none(), "a second prompt while one runs");
                self.turn = Some((id, 0));
            }
            Some(other) => panic!("the scripted agent does not know {other}"),
            // An answer: the permission request's lets the turn go on.
            None => {
                if self.waiting.is_some() && Some(&id) == self.waiting.map(|w| json!(w)).as_ref() {
                    self.waiting = None;
                }
            }
        }
    }
}
