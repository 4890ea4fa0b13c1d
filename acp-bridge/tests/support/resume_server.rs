//! A resuming server for the client's tests, without sockets: the rules a
//! team server follows for resume, on `acp_codec::remote::ResumeLog` (one
//! log for the connection's stream, one per session), around a scripted
//! agent whose turn is a fixed list of updates. A test decides when each
//! agent step happens and which of the server's messages reach the client,
//! so it can break the connection after any message.
//!
//! What it does, as the server core must:
//! - `initialize` asking for positions (`_meta["acp-codec/resume"]`) is
//!   answered with the capability; from then on every message is stamped
//!   with its stream and position. A cursor in `initialize` resumes the
//!   connection's stream.
//! - `session/resume` with a cursor hands over what the session's stream
//!   holds after it (after the answer), or `-32012` when it cannot.
//! - `session/prompt` runs once per `PromptKey`: a retry while it runs
//!   waits for the same answer; a retry after it was answered gets that
//!   answer again from the log.
//! - The agent's permission request is owed, and its answer (from any
//!   connection) lets the turn go on.

use std::collections::BTreeMap;

use acp_codec::acp::{Message, RequestId};
use acp_codec::remote::{
    capability, stamp, Admit, Cursor, Kind, Position, PromptKey, ResumeLog, RESUME_GAP,
};
use serde_json::{json, Value};

/// The session every test uses.
pub const SESSION: &str = "s1";

/// One step of the scripted turn.
#[derive(Debug, Clone)]
enum Step {
    Update(String),
    /// A permission request (id), the turn waits for its answer.
    Ask(i64),
}

/// The server; see the module docs.
pub struct ResumingServer {
    budget: usize,
    stamped: bool,
    connection: ResumeLog,
    sessions: BTreeMap<String, ResumeLog>,
    script: Vec<Step>,
    /// The running turn: the prompt's id and key, the next step.
    turn: Option<(Value, PromptKey, usize)>,
    waiting: Option<i64>,
    /// How many prompts the agent ran.
    pub prompts_run: usize,
}

impl ResumingServer {
    /// A server whose turn sends `updates` texts, with a permission
    /// request after the `ask_after`-th; logs of `budget` bytes.
    pub fn new(budget: usize, updates: &[&str], ask_after: Option<usize>) -> Self {
        let mut script = Vec::new();
        for (n, text) in updates.iter().enumerate() {
            script.push(Step::Update((*text).to_owned()));
            if ask_after == Some(n + 1) {
                script.push(Step::Ask(1000));
            }
        }
        Self {
            budget,
            stamped: false,
            connection: ResumeLog::new(budget),
            sessions: BTreeMap::new(),
            script,
            turn: None,
            waiting: None,
            prompts_run: 0,
        }
    }

    fn send(&mut self, session: Option<&str>, kind: Kind, message: &str, out: &mut Vec<String>) {
        let log = match session {
            Some(s) => self
                .sessions
                .entry(s.to_owned())
                .or_insert_with(|| ResumeLog::new(self.budget)),
            None => &mut self.connection,
        };
        let position = log.push(kind, message);
        out.push(if self.stamped {
            stamp(message, session, position)
        } else {
            message.to_owned()
        });
    }

    fn replay(&mut self, session: Option<&str>, after: Position, out: &mut Vec<String>) -> bool {
        let log = match session {
            Some(s) => match self.sessions.get_mut(s) {
                Some(log) => log,
                None => return after == Position::START,
            },
            None => &mut self.connection,
        };
        match log.resume(after) {
            Ok(replay) => {
                out.extend(replay.map(|(p, text)| stamp(text, session, p)));
                true
            }
            Err(_) => false,
        }
    }

    /// A line from the client; returns the messages to send it, in order.
    pub fn handle(&mut self, line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let value: Value = serde_json::from_str(line).expect("the client sends JSON");
        let id = value.get("id").cloned();
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        let Some(method) = value.get("method").and_then(Value::as_str) else {
            // An answer: the permission request's lets the turn go on.
            if self.waiting.is_some() && id == self.waiting.map(|w| json!(w)) {
                self.waiting = None;
            }
            return out;
        };
        let Some(id) = id else {
            return out;
        };
        let answer =
            |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        match method {
            "initialize" => {
                self.stamped = params
                    .get("_meta")
                    .and_then(|m| m.get("acp-codec/resume"))
                    .is_some();
                let cursor = Cursor::from_params(&params.to_string()).unwrap();
                let meta: Value =
                    serde_json::from_str(&format!("{{{}}}", capability(self.budget))).unwrap();
                // What the connection's stream missed goes first: the
                // answer is newer.
                if let Some(cursor) = cursor {
                    if !self.replay(None, cursor.position, &mut out) {
                        // What is owed, then the window: the client asks
                        // again for what it still misses.
                        let log = &mut self.connection;
                        out.extend(
                            log.owed_after(cursor.position)
                                .map(|(p, text)| stamp(text, None, p)),
                        );
                        let from = Position(log.first_kept().0 - 1);
                        out.extend(
                            log.resume(from)
                                .unwrap()
                                .map(|(p, text)| stamp(text, None, p)),
                        );
                    }
                }
                let reply =
                    answer(json!({"protocolVersion": 1, "agentCapabilities": {}, "_meta": meta}));
                self.send(None, Kind::Owed, &reply, &mut out);
            }
            "session/new" => {
                let reply = answer(json!({"sessionId": SESSION}));
                self.send(None, Kind::Owed, &reply, &mut out);
            }
            "session/resume" => {
                let session = params["sessionId"].as_str().unwrap().to_owned();
                let cursor = Cursor::from_params(&params.to_string())
                    .unwrap()
                    .unwrap_or_default();
                let mut replay = Vec::new();
                if self.replay(Some(&session), cursor.position, &mut replay) {
                    let reply = answer(json!({}));
                    self.send(Some(&session), Kind::Owed, &reply, &mut out);
                    // The answer is newer than the replay on the same
                    // stream: the replay goes first, in order.
                    out.splice(0..0, replay);
                } else {
                    let reply = json!({"jsonrpc": "2.0", "id": id, "error": {"code": RESUME_GAP.0, "message": "messages were lost"}}).to_string();
                    self.send(None, Kind::Owed, &reply, &mut out);
                }
            }
            "session/prompt" => {
                let session = params["sessionId"].as_str().unwrap().to_owned();
                let request_id = match &id {
                    Value::Number(n) => RequestId::Number(n.as_i64().unwrap()),
                    other => RequestId::Str(other.to_string().into()),
                };
                let key = PromptKey::of(&request_id, Some(&params.to_string()));
                let log = self
                    .sessions
                    .entry(session.clone())
                    .or_insert_with(|| ResumeLog::new(self.budget));
                match log.admit_prompt(key.clone()) {
                    Admit::Run => {
                        self.prompts_run += 1;
                        self.turn = Some((id, key, 0));
                    }
                    Admit::Running => {}
                    Admit::Answered(at) => {
                        if let Some(text) = log.message(at) {
                            out.push(stamp(text, Some(&session), at));
                        }
                    }
                }
            }
            other => panic!("the test server does not know {other}"),
        }
        assert!(out.iter().all(|m| Message::decode(m).is_ok()));
        out
    }

    /// The agent's next step, if the turn can go on: its messages.
    pub fn step(&mut self) -> Option<Vec<String>> {
        if self.waiting.is_some() {
            return None;
        }
        let (id, key, next) = self.turn.clone()?;
        let mut out = Vec::new();
        match self.script.get(next).cloned() {
            Some(Step::Update(text)) => {
                let m = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}});
                self.send(Some(SESSION), Kind::Plain, &m.to_string(), &mut out);
            }
            Some(Step::Ask(ask)) => {
                let m = json!({"jsonrpc": "2.0", "id": ask, "method": "session/request_permission", "params": {"sessionId": SESSION, "toolCall": {"toolCallId": "t1"}, "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}});
                self.send(Some(SESSION), Kind::Owed, &m.to_string(), &mut out);
                self.waiting = Some(ask);
            }
            None => {
                let m = json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}});
                self.send(Some(SESSION), Kind::Owed, &m.to_string(), &mut out);
                let at = self.sessions[SESSION].last();
                self.sessions.get_mut(SESSION).unwrap().answered(&key, at);
                self.turn = None;
                return Some(out);
            }
        }
        self.turn = Some((id, key, next + 1));
        Some(out)
    }
}
