//! The invariant behind the `server_resume` fuzz target on Streamable
//! HTTP: `acp_codec::remote::Server`'s SSE positions and `Last-Event-ID`,
//! shared with `tests/integration/fuzz_corpus.rs` and the proptest in
//! `tests/integration/remote_resume.rs`.
//!
//! One Streamable HTTP connection runs one turn on a scripted shared
//! agent, with its connection stream and its session's stream. The
//! caller's side is played as `acp-bridge` plays it: a queue per stream,
//! events written from its front (each reported with `handle_sent`), the
//! queue replaced as a resume's `Action::Read` says. Each input byte is
//! an event: the agent sends the
//! session's next numbered update, or asks for a permission; a stream's
//! reader reads some events; a stream breaks (the events in flight are
//! lost; the server may or may not notice); a stream is reopened with
//! `Last-Event-ID` (the client's last position on it; a `409` makes the
//! client open it afresh, a gap it knows of); the client sends its
//! prompt again (its `POST` went unanswered); the agent ends the turn;
//! the client sends 8 to 64 requests of its own (`session/set_mode`),
//! each answered by the agent at once, so the retry ledger goes past its
//! bound of [`DEFAULT_MAX_PROMPT_KEYS`] answered requests; the client
//! sends one of those again.
//!
//! Asserted:
//! - on each stream the positions the client reads follow each other
//!   without a hole, unless the server refused a resume of that stream
//!   (`409`); no position is read twice;
//! - the updates the client reads are the agent's, in the order it sent
//!   them, each once;
//! - a resume is refused only for a gap (the budget pushed what the client
//!   missed out) and with `409`, never another status;
//! - a request sent again runs again exactly when the retry ledger no
//!   longer holds it (oracle: the keys answered, in order, the last
//!   [`DEFAULT_MAX_PROMPT_KEYS`] kept): while it runs or while the ledger
//!   holds it, it is dropped or answered from the log (or refused with
//!   `-32012`), never run; so the prompt reaches the agent once, and again
//!   only after its key was forgotten;
//! - at the end, after every stream is reopened and read to its end, the
//!   client has every update, every permission request and the turn's
//!   answer, unless a resume was refused.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use acp_codec::remote::{
    Action, AgentRun, ConnectionId, Position, PostOutcome, Principal, Server, ServerConfig, Stream,
    DEFAULT_MAX_PROMPT_KEYS,
};
use serde_json::{json, Value};

const SESSION: &str = "s1";

const PROMPT: &str = r#"{"jsonrpc":"2.0","id":100,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;

/// The prompt's id, and the first of the client's other requests'.
const PROMPT_ID: u64 = 100;
const OTHER_IDS: u64 = 10_000;
/// Most other requests in one run.
const MAX_OTHERS: u64 = 400;

/// The client's `n`th other request.
fn other(n: u64) -> String {
    let id = OTHER_IDS + n;
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/set_mode","params":{{"sessionId":"s1","modeId":"m{n}"}}}}"#
    )
}

/// A message queued for a stream, as the bridge keeps it.
struct Queued {
    at: Option<Position>,
    text: String,
    counted: bool,
}

#[derive(Default)]
struct Side {
    /// The bridge's queue for the stream.
    queue: VecDeque<Queued>,
    /// Its reader, as the server numbered it.
    reader: Option<u64>,
    /// Whether a reader is there (the client's view).
    reading: bool,
    /// The client's last position on the stream.
    last: Option<Position>,
    /// A resume of this stream was refused: a gap the client knows of.
    lost: bool,
    /// Opened before: a new open resumes it.
    opened: bool,
}

struct World {
    server: Server,
    run: AgentRun,
    now: Duration,
    conn: ConnectionId,
    sides: BTreeMap<Stream, Side>,
    sent_updates: u64,
    kept_updates: Vec<u64>,
    asked: u64,
    asks_kept: Vec<u64>,
    prompt_at_agent: Option<Value>,
    prompts_run: usize,
    prompt_answered_by_agent: bool,
    prompt_answer_kept: bool,
    closed: bool,
    /// The oracle of the retry ledger: the ids of requests answered, in
    /// order, at most [`DEFAULT_MAX_PROMPT_KEYS`].
    ledger: VecDeque<u64>,
    /// The prompt runs at the agent, unanswered (the oracle's view).
    prompt_running: bool,
    /// How many times the prompt should have reached the agent.
    prompt_runs_due: usize,
    /// The client's other requests sent, and how many times each reached
    /// the agent.
    others: u64,
    others_run: BTreeMap<u64, usize>,
    /// What the run met: resumes refused, events replayed.
    seen: Seen,
}

/// What a run met, so a test can tell the check is not vacuous.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// Resumes refused with `409` (gaps).
    pub gaps: usize,
    /// Events a resume's replay held.
    pub replayed: usize,
    /// Requests the retry ledger forgot (more answered after them than
    /// it keeps).
    pub evicted: usize,
    /// Requests sent again while the ledger held them (not run again).
    pub retried_kept: usize,
    /// Requests sent again after the ledger forgot them (run again).
    pub retried_forgotten: usize,
}

impl World {
    fn new(budget: usize) -> Self {
        let mut config = ServerConfig::new();
        config.replay_bytes = budget;
        let mut server = Server::new(config, Duration::ZERO);
        let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
            panic!("the shared agent starts with the server")
        };
        server.handle_agent_started(Duration::ZERO, run, 1);
        let init = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"_meta":{"acp-codec/resume":{}}}}"#;
        let opened = server
            .handle_post(
                Duration::ZERO,
                &Principal::anonymous(),
                None,
                None,
                init,
                Some([7; 16]),
            )
            .unwrap();
        let PostOutcome::Opened(conn) = opened else {
            panic!("initialize opens a connection")
        };
        let mut w = Self {
            server,
            run,
            now: Duration::ZERO,
            conn,
            sides: BTreeMap::new(),
            sent_updates: 0,
            kept_updates: Vec::new(),
            asked: 0,
            asks_kept: Vec::new(),
            prompt_at_agent: None,
            prompts_run: 0,
            prompt_answered_by_agent: false,
            prompt_answer_kept: false,
            closed: false,
            ledger: VecDeque::new(),
            prompt_running: false,
            prompt_runs_due: 0,
            others: 0,
            others_run: BTreeMap::new(),
            seen: Seen::default(),
        };
        w.drain();
        w.open(Stream::Connection);
        w.post(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#);
        w.answered(1);
        w.read(&Stream::Connection, usize::MAX);
        w.open(Stream::Session(SESSION.into()));
        w.post(PROMPT);
        w.prompt_running = true;
        w.prompt_runs_due = 1;
        w
    }

    /// The oracle: the request `id` was answered.
    fn answered(&mut self, id: u64) {
        if self.ledger.len() == DEFAULT_MAX_PROMPT_KEYS {
            self.ledger.pop_front();
            self.seen.evicted += 1;
        }
        self.ledger.push_back(id);
    }

    /// The client sends its prompt again.
    fn retry_prompt(&mut self) {
        if !self.prompt_running {
            if self.ledger.contains(&PROMPT_ID) {
                self.seen.retried_kept += 1;
            } else {
                self.seen.retried_forgotten += 1;
                self.prompt_running = true;
                self.prompt_runs_due += 1;
            }
        }
        self.post(PROMPT);
    }

    /// The client sends `n` requests of its own, each answered at once.
    fn others(&mut self, n: u64) {
        for _ in 0..n.min(MAX_OTHERS.saturating_sub(self.others)) {
            let n = self.others;
            self.others += 1;
            self.post(&other(n));
            assert_eq!(self.others_run.get(&n), Some(&1), "request {n} runs once");
        }
    }

    /// The client sends the other request `back` before its last again.
    fn retry_other(&mut self, back: u64) {
        let Some(n) = self.others.checked_sub(1 + back) else {
            return;
        };
        let before = self.others_run.get(&n).copied().unwrap_or(0);
        let kept = self.ledger.contains(&(OTHER_IDS + n));
        self.post(&other(n));
        let after = self.others_run.get(&n).copied().unwrap_or(0);
        if kept {
            self.seen.retried_kept += 1;
            assert_eq!(
                after, before,
                "request {n} ran again while the ledger held it"
            );
        } else {
            self.seen.retried_forgotten += 1;
            assert_eq!(
                after,
                before + 1,
                "request {n}, forgotten, did not run again"
            );
        }
    }

    fn post(&mut self, body: &str) {
        let session = body.contains(SESSION).then_some(SESSION);
        let _ = self.server.handle_post(
            self.now,
            &Principal::anonymous(),
            Some(self.conn),
            session,
            body,
            None,
        );
        self.drain();
    }

    /// Plays the agent and the bridge's queues for every action.
    fn drain(&mut self) {
        while let Some(action) = self.server.poll_action() {
            match action {
                Action::Send {
                    to,
                    stream,
                    text,
                    position,
                } => {
                    assert_eq!(to, self.conn, "a message for another connection");
                    let at = position.expect("every Streamable HTTP event has a position");
                    let side = self.sides.entry(stream).or_default();
                    if let Some(last) = side.queue.back().and_then(|q| q.at) {
                        assert!(at > last, "{at} queued after {last}");
                    }
                    side.queue.push_back(Queued {
                        at: Some(at),
                        text,
                        counted: true,
                    });
                }
                Action::Read {
                    to,
                    stream,
                    reader,
                    replace,
                } => {
                    assert_eq!(to, self.conn, "a read of another connection");
                    let side = self.sides.entry(stream).or_default();
                    side.reader = Some(reader);
                    if let Some(replay) = replace {
                        self.seen.replayed += replay.len();
                        let dropped: usize = side
                            .queue
                            .drain(..)
                            .filter(|q| q.counted)
                            .map(|q| q.text.len())
                            .sum();
                        side.queue
                            .extend(replay.into_iter().map(|(at, text)| Queued {
                                at: Some(at),
                                text,
                                counted: false,
                            }));
                        if dropped > 0 {
                            self.server.handle_sent(self.now, to, dropped);
                        }
                    }
                }
                Action::WriteAgent { line, .. } => {
                    let v: Value = serde_json::from_slice(&line.to_vec()).unwrap();
                    let id = v.get("id").cloned();
                    match v.get("method").and_then(Value::as_str) {
                        Some("session/new") => self.agent(
                            json!({"jsonrpc": "2.0", "id": id, "result": {"sessionId": SESSION}}),
                        ),
                        Some("session/prompt") => {
                            self.prompts_run += 1;
                            self.prompt_at_agent = id;
                        }
                        Some("session/set_mode") => {
                            let mode = v["params"]["modeId"].as_str().unwrap_or_default();
                            let n: u64 = mode.trim_start_matches('m').parse().unwrap();
                            *self.others_run.entry(n).or_default() += 1;
                            self.answered(OTHER_IDS + n);
                            self.agent(json!({"jsonrpc": "2.0", "id": id, "result": {}}));
                        }
                        _ => {}
                    }
                }
                Action::Answer { .. } => {}
                Action::Close { .. } => self.closed = true,
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

    /// Opens `stream` afresh, or resumes it after the client's last
    /// position.
    fn open(&mut self, stream: Stream) {
        let resume = self
            .sides
            .get(&stream)
            .filter(|s| s.opened)
            .map(|s| s.last.unwrap_or(Position::START));
        let id = resume.map(|p| p.to_string());
        let session = match &stream {
            Stream::Session(s) => Some(s.as_str()),
            Stream::Connection => None,
        };
        let principal = Principal::anonymous();
        let opened = self.server.handle_stream_opened(
            self.now,
            &principal,
            self.conn,
            session,
            id.as_deref(),
        );
        if let Err(refusal) = opened {
            assert!(id.is_some(), "a fresh open refused: {refusal:?}");
            assert_eq!(refusal.status, 409, "{refusal:?}");
            // A gap: the client opens the stream afresh, knowing it.
            self.seen.gaps += 1;
            let side = self.sides.entry(stream.clone()).or_default();
            side.lost = true;
            if let Some(reader) = side.reader {
                self.server
                    .handle_stream_closed(self.now, self.conn, &stream, reader);
            }
            self.server
                .handle_stream_opened(self.now, &principal, self.conn, session, None)
                .unwrap_or_else(|r| panic!("a fresh open after a gap refused: {r:?}"));
        }
        let side = self.sides.entry(stream).or_default();
        side.reading = true;
        side.opened = true;
        // The queue becomes what the open's `Action::Read` says.
        self.drain();
    }

    /// The reader of `stream` reads up to `n` events.
    fn read(&mut self, stream: &Stream, n: usize) {
        for _ in 0..n {
            let Some(side) = self.sides.get_mut(stream) else {
                return;
            };
            if !side.reading {
                return;
            }
            let Some(q) = side.queue.pop_front() else {
                return;
            };
            if q.counted {
                self.server.handle_sent(self.now, self.conn, q.text.len());
            }
            let at = q.at.expect("positioned");
            let side = self.sides.get_mut(stream).expect("just read");
            if let Some(last) = side.last {
                if at <= last && side.lost {
                    // Queued before the gap: the client drops it.
                    continue;
                }
                assert!(
                    at > last,
                    "{stream:?}: position {at} read again after {last}"
                );
                assert!(
                    at.0 == last.0 + 1 || side.lost,
                    "a hole on {stream:?}: {at} after {last}: {}",
                    q.text
                );
            }
            side.last = Some(at);
            self.receive(&q.text);
        }
    }

    fn receive(&mut self, text: &str) {
        let v: Value = serde_json::from_str(text).unwrap();
        if let Some(n) = v["params"]["update"]["n"].as_u64() {
            if let Some(&prev) = self.kept_updates.last() {
                assert!(n > prev, "update {n} after {prev}");
                assert!(
                    n == prev + 1 || self.any_lost(),
                    "update {n} after {prev} without a gap reported"
                );
            }
            self.kept_updates.push(n);
        } else if v["method"] == "session/request_permission" {
            self.asks_kept.push(v["params"]["n"].as_u64().unwrap_or(0));
        } else if v["id"] == 100 && v["error"]["code"] == -32012 {
            // A retry whose answer the server no longer kept: it ran.
            assert!(self.prompt_answered_by_agent, "{text}");
        } else if v["id"] == 100 {
            assert!(!self.prompt_answer_kept, "the prompt's answer read twice");
            self.prompt_answer_kept = true;
        }
    }

    fn any_lost(&self) -> bool {
        self.sides.values().any(|s| s.lost)
    }

    /// A stream breaks: `lost` events in flight never arrive; the server
    /// notices (its response ends) or not (no FIN).
    fn break_stream(&mut self, stream: &Stream, lost: usize, noticed: bool) {
        let Some(side) = self.sides.get_mut(stream) else {
            return;
        };
        if !side.reading {
            return;
        }
        side.reading = false;
        let mut gone = 0;
        for _ in 0..lost {
            match side.queue.pop_front() {
                Some(q) if q.counted => gone += q.text.len(),
                Some(_) => {}
                None => break,
            }
        }
        if gone > 0 {
            self.server.handle_sent(self.now, self.conn, gone);
        }
        if let (true, Some(reader)) = (noticed, side.reader) {
            self.server
                .handle_stream_closed(self.now, self.conn, stream, reader);
        }
    }

    fn update(&mut self) {
        self.sent_updates += 1;
        let n = self.sent_updates;
        self.agent(json!({"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": SESSION, "update": {"sessionUpdate": "agent_message_chunk", "n": n}}}));
    }
}

fn stream_of(b: u8) -> Stream {
    if b & 0x40 == 0 {
        Stream::Session(SESSION.into())
    } else {
        Stream::Connection
    }
}

/// Runs the events `data` describes and checks the invariant; what the
/// run met.
pub fn check(data: &[u8]) -> Seen {
    // The budget: small enough that breaks meet gaps.
    let budget = 300 + usize::from(data.first().copied().unwrap_or(0)) * 4;
    let mut w = World::new(budget);
    for &b in data.iter().skip(1) {
        if w.closed {
            return w.seen;
        }
        let arg = usize::from(b >> 3 & 0x7);
        match b & 0x7 {
            0 | 1 if w.sent_updates < 200 => w.update(),
            2 => w.read(&stream_of(b), arg + 1),
            3 => w.break_stream(&stream_of(b), arg, b & 0x80 != 0),
            4 => w.open(stream_of(b)),
            5 if b & 0x80 != 0 => w.others(8 * (arg as u64 + 1)),
            5 if arg == 0 => w.retry_prompt(),
            5 => w.retry_other((arg as u64 - 1) * 12),
            6 if !w.prompt_answered_by_agent && w.prompt_at_agent.is_some() => {
                w.prompt_answered_by_agent = true;
                w.prompt_running = false;
                w.answered(PROMPT_ID);
                let id = w.prompt_at_agent.clone();
                w.agent(json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}}));
            }
            7 if w.asked < 8 => {
                w.asked += 1;
                let n = w.asked;
                w.agent(
                    json!({"jsonrpc": "2.0", "id": 1000 + n, "method": "session/request_permission",
                    "params": {"sessionId": SESSION, "n": n, "toolCall": {}, "options": []}}),
                );
            }
            _ => {}
        }
        assert_eq!(
            w.prompts_run, w.prompt_runs_due,
            "the prompt ran {} times, due {}",
            w.prompts_run, w.prompt_runs_due
        );
    }
    if w.closed {
        return w.seen;
    }
    // The end: every stream reopened and read to its end.
    for stream in [Stream::Connection, Stream::Session(SESSION.into())] {
        w.break_stream(&stream, 0, true);
        w.open(stream.clone());
        w.read(&stream, usize::MAX);
    }
    assert_eq!(
        w.prompts_run, w.prompt_runs_due,
        "the prompt reaches the agent once, and again only once forgotten"
    );
    if !w.any_lost() {
        let all: Vec<u64> = (1..=w.sent_updates).collect();
        assert_eq!(w.kept_updates, all, "every update, once, in order");
        let asks: Vec<u64> = (1..=w.asked).collect();
        assert_eq!(w.asks_kept, asks, "every permission request, once");
        assert_eq!(
            w.prompt_answer_kept, w.prompt_answered_by_agent,
            "the turn's answer reaches the client"
        );
    }
    w.seen
}
