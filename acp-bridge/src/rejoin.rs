//! The client's side of resumable delivery, without I/O: what a client
//! (or a relay between an editor and a server) must remember so that a
//! new connection picks up where the broken one left off, and what it
//! sends first on it.
//!
//! [`Rejoin`] sits between the client's own lines and the server's:
//!
//! - [`outgoing`](Rejoin::outgoing) sees each line the client sends: an
//!   `initialize` is remembered and asks for positions
//!   (`_meta["acp-codec/resume"]`); a request is kept until answered; an
//!   answer to one of the agent's requests is kept until the connection
//!   changes (a server drops an answer to a request no longer pending, so
//!   sending it again is harmless).
//! - [`incoming`](Rejoin::incoming) sees each message from the server: its
//!   stamp (stream and position) is read and removed, so the client gets
//!   the bytes the agent sent; a message at or before the stream's last
//!   position is dropped (never shown twice), one past the next position
//!   of a session's stream is a gap (never a silent loss); answers to the client's
//!   requests settle them (and the answers sent before them, which the
//!   server read first); a session the client creates, loads or resumes
//!   is remembered for the next connection; the answers to what `Rejoin`
//!   sent itself are kept from the client.
//! - [`reconnected`](Rejoin::reconnected) gives the line to send first on
//!   a new connection: `initialize` again, with the connection's cursor.
//!   What follows depends on its answer, and is then taken with
//!   [`poll_to_server`](Rejoin::poll_to_server):
//!   - the server took the connection over (its answer advertises resume):
//!     the answers not known to have arrived, `session/resume` of each
//!     session with its cursor, the requests still unanswered, with their
//!     ids (a server runs a retried `session/prompt` once);
//!   - the server does not know the connection (another server behind the
//!     same address, after the one that served it died, or the same one
//!     after its grace): nothing can be resumed. [`Rejoin`] asks for a
//!     clean connection ([`take_restart`](Rejoin::take_restart)), on which
//!     it starts its positions again and loads each session
//!     (`session/load`) from what the agent keeps (the same when the
//!     transport itself learns that the server will not take the
//!     connection up: [`start_over`](Rejoin::start_over)); the history the load
//!     replays is not handed to the client (it has seen it); a
//!     `session/prompt` still unanswered fails with an error for the
//!     client ([`poll_to_client`](Rejoin::poll_to_client)) rather than run
//!     a second time (the turn in progress died with the server that ran
//!     it); the other unanswered requests are sent again.
//!
//! On a connection that speaks ACP v2 (its `initialize` answer says
//! `protocolVersion` 2: a v2 client, or acp-client's translator in front
//! of a v2 agent), a session's position goes in `session/resume`'s
//! `replayFrom` as the server's own type
//! (`{"type":"_acp-codec/cursor","position":p}`, [`REPLAY_CURSOR`]) rather
//! than in `_meta`, and a session is loaded with `session/resume` from
//! `{"type":"start"}` (v2 has no `session/load`).
//!
//! A server that does not advertise resume gets the client's bytes
//! unchanged except the opt-in member of `initialize`, and nothing is
//! stamped; [`Rejoin::is_resumable`] then says a reconnect cannot resume.

use std::collections::{BTreeMap, BTreeSet};

use acp_codec::acp::Message;
use acp_codec::remote::{
    session_of, unstamp, Position, SessionField, META_CURSOR, META_RESUME, REPLAY_CURSOR,
    RESUME_GAP,
};
use serde_json::{json, Map, Value};

/// The most answers to the agent's requests kept for a resend.
const MAX_ANSWERS: usize = 256;

/// The id prefix of the requests [`Rejoin`] sends itself.
const OWN_ID: &str = "acp-client/rejoin-";

/// What a `session/prompt` unanswered when its server died (or when the
/// client missed more of it than the server keeps) is answered (JSON-RPC
/// internal error): the turn is lost, the session goes on.
pub const TURN_LOST: &str = "the turn in progress is lost (its server is gone, or the client missed more of it than the server keeps); the session was loaded again: send the prompt again";

/// Why a new connection could not take up the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejoinError {
    /// The server no longer holds everything after the client's position:
    /// some of the session's messages are lost to this client (it may
    /// `session/load` the session to see its history).
    Gap {
        /// The session.
        session: String,
        /// The server's words.
        detail: String,
    },
    /// The server refused the reattach otherwise.
    Refused {
        /// The session.
        session: String,
        /// The server's words.
        detail: String,
    },
    /// The server answered a reconnect's `initialize` with an error.
    Initialize {
        /// The server's words.
        detail: String,
    },
}

impl std::fmt::Display for RejoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Gap { session, detail } => write!(
                f,
                "session {session} cannot be resumed without losing messages ({detail}); load it again to see its history"
            ),
            Self::Refused { session, detail } => {
                write!(f, "session {session} could not be resumed: {detail}")
            }
            Self::Initialize { detail } => {
                write!(f, "the server refused the new connection: {detail}")
            }
        }
    }
}

impl std::error::Error for RejoinError {}

#[derive(Debug, Clone)]
struct Pending {
    line: String,
    method: String,
    params: Value,
    /// When it was (last) put on the wire.
    seq: u64,
}

/// What the client remembers across connections; see the
/// [module docs](self).
#[derive(Debug, Default)]
pub struct Rejoin {
    /// The last position of each stream (`None`: the connection's own).
    positions: BTreeMap<Option<String>, Position>,
    /// Sessions to reattach, with the `cwd` they work in.
    sessions: BTreeMap<String, String>,
    /// The client's requests not yet answered, by id (as JSON text).
    pending: BTreeMap<String, Pending>,
    /// The client's answers to the agent not yet known to have arrived,
    /// with when they were put on the wire: an answer to a request sent
    /// after one shows the server read it (it reads in order).
    answers: Vec<(u64, String)>,
    seq: u64,
    /// The client's `initialize` params.
    init: Option<Value>,
    /// Our own requests in flight: id → session (`None` for initialize)
    /// and when it was put on the wire.
    own: BTreeMap<String, (Option<String>, u64)>,
    next_own: u64,
    resumable: bool,
    /// The connection speaks ACP v2 (its `initialize` answer said so): a
    /// session is resumed with the server's cursor in `replayFrom`, and
    /// loaded with `session/resume` from the start (v2 has no
    /// `session/load`).
    v2: bool,
    connection: Option<String>,
    dropped_twice: u64,
    /// A reconnect's `initialize` is on the wire: what follows it waits
    /// for its answer.
    awaiting: bool,
    /// The next connection starts over (positions, no cursor) and loads
    /// the sessions.
    fresh: bool,
    /// The relay must replace the connection now (see [`Rejoin::take_restart`]).
    restart: bool,
    /// Sessions whose own `session/load` is in flight: their replayed
    /// history is not the client's.
    loading: BTreeSet<String>,
    to_server: Vec<String>,
    to_client: Vec<String>,
    /// Errors for the client's lost prompts, handed over once the
    /// sessions are loaded (the client can prompt again then).
    lost: Vec<String>,
    replayed: u64,
}

impl Rejoin {
    /// A client that has sent nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a new connection can resume: the server said it keeps
    /// positions (its `initialize` answer's `_meta`) and its messages carry
    /// them (a client that cannot say where it is would be handed
    /// everything again).
    pub fn is_resumable(&self) -> bool {
        self.resumable && !self.positions.is_empty()
    }

    /// Whether the next connection starts over (see
    /// [`take_restart`](Self::take_restart)): redial even though nothing
    /// can be resumed.
    pub fn is_starting_over(&self) -> bool {
        self.fresh
    }

    /// Requests of the client still unanswered.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The ids (as JSON text) and methods of the requests still unanswered.
    pub fn pending_requests(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pending
            .iter()
            .map(|(id, p)| (id.as_str(), p.method.as_str()))
    }

    /// Messages dropped because the client already had their position.
    pub fn dropped_twice(&self) -> u64 {
        self.dropped_twice
    }

    /// History updates a `session/load` of [`Rejoin`]'s own replayed, kept
    /// from the client.
    pub fn replayed(&self) -> u64 {
        self.replayed
    }

    /// Lines to send on the current connection now (what follows a
    /// reconnect's `initialize`, once it is answered).
    pub fn poll_to_server(&mut self) -> Vec<String> {
        std::mem::take(&mut self.to_server)
    }

    /// Lines for the client that no server sent: the errors of requests
    /// that cannot be sent again (a turn lost with its server).
    pub fn poll_to_client(&mut self) -> Vec<String> {
        std::mem::take(&mut self.to_client)
    }

    /// Whether the current connection must be replaced by a new one now:
    /// its server does not know the connection named by the cursor, so
    /// its positions would start again under the client's. The next
    /// [`reconnected`](Self::reconnected) starts over and loads the
    /// sessions. Reading it clears it.
    pub fn take_restart(&mut self) -> bool {
        std::mem::take(&mut self.restart)
    }

    /// The transport learned that the server will not take the connection
    /// up again (on Streamable HTTP: a `404` for the connection, or a
    /// `409` for a stream's `Last-Event-ID`, which the transport resumes
    /// by itself): the next [`reconnected`](Self::reconnected) starts over
    /// and loads the sessions, as when a server answers a reconnect's
    /// `initialize` without knowing the connection.
    pub fn start_over(&mut self) {
        self.positions.clear();
        self.connection = None;
        self.fresh = true;
    }

    /// The id of the current connection, when the transport knows it
    /// (`Acp-Connection-Id`): its stream's cursor names it on the next.
    pub fn set_connection(&mut self, id: Option<String>) {
        self.connection = id;
    }

    fn tick(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// A request sent at `seq` was answered: the answers sent before it
    /// arrived.
    fn settled(&mut self, seq: u64) {
        self.answers.retain(|(at, _)| *at > seq);
    }

    /// A line the client sends; returns what to put on the wire.
    pub fn outgoing(&mut self, line: &str) -> String {
        let seq = self.tick();
        let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(line) else {
            return line.to_owned();
        };
        let id = message.get("id").map(Value::to_string);
        match (message.get("method").and_then(Value::as_str), id) {
            (Some("initialize"), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(json!({}));
                let mut asked = params.clone();
                set_meta(&mut asked, META_RESUME, json!({}));
                message.insert("params".into(), asked);
                let wire = Value::Object(message).to_string();
                self.init = Some(params);
                self.pending.insert(
                    id,
                    Pending {
                        line: wire.clone(),
                        method: "initialize".into(),
                        params: Value::Null,
                        seq,
                    },
                );
                wire
            }
            (Some(method), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                self.pending.insert(
                    id,
                    Pending {
                        line: line.to_owned(),
                        method: method.to_owned(),
                        params,
                        seq,
                    },
                );
                line.to_owned()
            }
            (None, Some(_)) => {
                if self.answers.len() < MAX_ANSWERS {
                    self.answers.push((seq, line.to_owned()));
                }
                line.to_owned()
            }
            _ => line.to_owned(),
        }
    }

    /// A message from the server: `Ok(Some(line))` to hand to the client,
    /// `Ok(None)` when it is not the client's (already seen, or the answer
    /// to what [`reconnected`](Self::reconnected) sent).
    ///
    /// # Errors
    ///
    /// [`RejoinError`] when the server refused to resume a session.
    pub fn incoming(&mut self, text: &str) -> Result<Option<String>, RejoinError> {
        let line = match unstamp(text) {
            Some((stream, position, original)) => {
                match self.positions.get_mut(&stream) {
                    Some(last) if position <= *last => {
                        self.dropped_twice += 1;
                        return Ok(None);
                    }
                    // A session's stream on one connection has no holes: a
                    // jump means messages were lost.
                    Some(last) if stream.is_some() && position.0 > last.0 + 1 => {
                        let detail = format!("position {position} arrived after {last}");
                        return Err(RejoinError::Gap {
                            session: stream.unwrap_or_default(),
                            detail,
                        });
                    }
                    Some(last) => *last = position,
                    // The first message of a stream may come at any position
                    // (a session another connection created).
                    None => {
                        self.positions.insert(stream, position);
                    }
                }
                original
            }
            None => text.to_owned(),
        };
        // Requests and notifications (a long tool output among them) are
        // read without building a tree: only the envelope and
        // `params.sessionId` matter.
        if let Ok(decoded) = Message::decode(&line) {
            if let Message::Request(_) | Message::Notification(_) = decoded {
                let loading = matches!(decoded, Message::Notification(_))
                    && matches!(session_of(&decoded), SessionField::Id(s) if self.loading.contains(s.as_ref()));
                if loading {
                    self.replayed += 1;
                    return Ok(None);
                }
                return Ok(Some(line));
            }
        }
        let Ok(Value::Object(message)) = serde_json::from_str::<Value>(&line) else {
            return Ok(Some(line));
        };
        if message.contains_key("method") {
            return Ok(Some(line));
        }
        let Some(id) = message.get("id").map(Value::to_string) else {
            return Ok(Some(line));
        };
        if let Some((session, seq)) = self.own.remove(&id) {
            self.settled(seq);
            return self.own_answer(session, &message).map(|()| None);
        }
        let Some(request) = self.pending.remove(&id) else {
            return Ok(Some(line));
        };
        self.settled(request.seq);
        let result = message.get("result");
        match (request.method.as_str(), result) {
            ("initialize", Some(result)) => self.initialized(result),
            ("session/new", Some(result)) => {
                if let Some(session) = result.get("sessionId").and_then(Value::as_str) {
                    self.sessions
                        .insert(session.to_owned(), cwd_of(&request.params));
                }
            }
            ("session/load" | "session/resume", Some(_)) => {
                if let Some(session) = request.params.get("sessionId").and_then(Value::as_str) {
                    self.sessions
                        .insert(session.to_owned(), cwd_of(&request.params));
                }
            }
            _ => {}
        }
        Ok(Some(line))
    }

    fn own_answer(
        &mut self,
        session: Option<String>,
        message: &Map<String, Value>,
    ) -> Result<(), RejoinError> {
        let Some(session) = session else {
            // Our initialize: the server may have changed its mind.
            if let Some(result) = message.get("result") {
                self.initialized(result);
                return Ok(());
            }
            // Refused: nothing can follow it on this connection.
            return Err(RejoinError::Initialize {
                detail: error_message(message),
            });
        };
        if self.loading.remove(&session) {
            self.loaded();
        }
        let Some(error) = message.get("error") else {
            return Ok(());
        };
        let detail = error_message(message);
        if error.get("code").and_then(Value::as_i64) == Some(i64::from(RESUME_GAP.0)) {
            Err(RejoinError::Gap { session, detail })
        } else {
            Err(RejoinError::Refused { session, detail })
        }
    }

    /// An `initialize` answer: whether the server resumes, and the id it
    /// gives the connection (the next connection's cursor names it).
    fn initialized(&mut self, result: &Value) {
        self.resumable = advertises(result);
        let version = result.get("protocolVersion").and_then(Value::as_u64);
        self.v2 = version.is_some_and(|v| v >= 2);
        let named = result
            .get("_meta")
            .and_then(|m| m.get(META_RESUME))
            .and_then(|r| r.get("connection"))
            .and_then(Value::as_str);
        if let Some(id) = named {
            self.connection = Some(id.to_owned());
        }
        if std::mem::take(&mut self.awaiting) {
            self.follow_up();
        }
    }

    /// A reconnect's `initialize` was answered: what goes next.
    fn follow_up(&mut self) {
        if self.fresh {
            // A clean connection (or a server that never resumes): the
            // sessions are loaded from what the agent keeps.
            self.fresh = false;
            self.load_sessions();
        } else if self.resumable {
            self.resume_sessions();
        } else {
            // The server does not know the connection the cursor named: a
            // clean one, where positions start again.
            self.positions.clear();
            self.connection = None;
            self.fresh = true;
            self.restart = true;
        }
    }

    /// The sessions the client holds, with their directories, to take up
    /// again on a new connection.
    fn sessions_held(&self) -> Vec<(String, String)> {
        self.sessions
            .iter()
            .map(|(s, cwd)| (s.clone(), cwd.clone()))
            .collect()
    }

    /// The server took the connection over: the answers again, each
    /// session resumed at its position, the unanswered requests again.
    fn resume_sessions(&mut self) {
        // The answers again (a server drops one whose request is no longer
        // pending), each with a new place on the wire.
        let answers = std::mem::take(&mut self.answers);
        for (_, answer) in answers {
            let seq = self.tick();
            self.to_server.push(answer.clone());
            self.answers.push((seq, answer));
        }
        for (session, cwd) in self.sessions_held() {
            let position = self
                .positions
                .get(&Some(session.clone()))
                .copied()
                .unwrap_or_default();
            let mut params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
            if self.v2 {
                params["replayFrom"] = json!({"type": REPLAY_CURSOR, "position": position.0});
            } else {
                set_meta(&mut params, META_CURSOR, json!({ "position": position.0 }));
            }
            let line = self.own_request(Some(session), "session/resume", params);
            self.to_server.push(line);
        }
        self.send_pending_again();
    }

    /// A server that does not know the connection: each session loaded,
    /// a prompt in flight failed for the client, the rest sent again.
    fn load_sessions(&mut self) {
        // The agent that asked is gone with its server.
        self.answers.clear();
        for (session, cwd) in self.sessions_held() {
            let mut params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
            let method = if self.v2 {
                params["replayFrom"] = json!({"type": "start"});
                "session/resume"
            } else {
                "session/load"
            };
            self.loading.insert(session.clone());
            let line = self.own_request(Some(session), method, params);
            self.to_server.push(line);
        }
        let lost: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.method == "session/prompt")
            .map(|(id, _)| id.clone())
            .collect();
        for id in lost {
            self.pending.remove(&id);
            let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": TURN_LOST}});
            self.lost.push(error.to_string());
        }
        self.send_pending_again();
        self.loaded();
    }

    /// Once every session is loaded, the client learns of its lost turns.
    fn loaded(&mut self) {
        if self.loading.is_empty() {
            self.to_client.append(&mut self.lost);
        }
    }

    fn send_pending_again(&mut self) {
        let mut seq = self.seq;
        for pending in self.pending.values_mut() {
            if pending.method != "initialize" {
                seq += 1;
                pending.seq = seq;
                self.to_server.push(pending.line.clone());
            }
        }
        self.seq = seq;
    }

    /// A new connection is up (`connection`: its id, when known): the lines
    /// to send on it before anything else (`initialize` again, with the
    /// cursor; what follows comes from [`poll_to_server`](Self::poll_to_server)
    /// once it is answered).
    pub fn reconnected(&mut self, connection: Option<String>) -> Vec<String> {
        let mut lines = Vec::new();
        // (`own` stays: a resumed stream may hand over the answer to an
        // earlier connection's request of ours.)
        self.to_server.clear();
        self.loading.clear();
        self.to_client.append(&mut self.lost);
        // A connection whose initialize answer never came has no id of
        // its own to the client: the one before it is still the one to name.
        let previous = match connection {
            Some(id) => self.connection.replace(id),
            None => self.connection.clone(),
        };
        let Some(init) = self.init.clone() else {
            // Nothing to initialize: nothing to resume either.
            self.send_pending_again();
            lines.append(&mut self.to_server);
            return lines;
        };
        let mut params = init;
        set_meta(&mut params, META_RESUME, json!({}));
        if !self.fresh {
            let position = self.positions.get(&None).copied().unwrap_or_default();
            let mut cursor = json!({ "position": position.0 });
            if let Some(previous) = previous {
                cursor["connection"] = json!(previous);
            }
            set_meta(&mut params, META_CURSOR, cursor);
        }
        // The client's own initialize when its answer never came (the
        // answer is the client's), else ours.
        let seq = self.tick();
        let unanswered = self
            .pending
            .iter_mut()
            .find(|(_, p)| p.method == "initialize");
        match unanswered {
            Some((id, pending)) => {
                let id: Value = serde_json::from_str(id).unwrap_or(Value::Null);
                pending.line =
                    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params})
                        .to_string();
                pending.seq = seq;
                lines.push(pending.line.clone());
            }
            None => lines.push(self.own_request(None, "initialize", params)),
        }
        // The answers did not arrive through this connection: its
        // initialize's answer does not settle them (they go again after it).
        let mut seq = self.seq;
        for (at, _) in &mut self.answers {
            seq += 1;
            *at = seq;
        }
        self.seq = seq;
        self.awaiting = true;
        lines
    }

    fn own_request(&mut self, session: Option<String>, method: &str, params: Value) -> String {
        self.next_own += 1;
        let id = format!("{OWN_ID}{}", self.next_own);
        let seq = self.tick();
        self.own.insert(json!(id).to_string(), (session, seq));
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    }
}

/// The `error.message` of an error answer.
fn error_message(message: &Map<String, Value>) -> String {
    message
        .get("error")
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("no reason given")
        .to_owned()
}

/// Whether an `initialize` result advertises resume.
fn advertises(result: &Value) -> bool {
    result
        .get("_meta")
        .and_then(|m| m.get(META_RESUME))
        .is_some()
}

fn cwd_of(params: &Value) -> String {
    params
        .get("cwd")
        .and_then(Value::as_str)
        .unwrap_or("/")
        .to_owned()
}

/// Sets `params._meta[key]`, making `params` an object if it is not one.
fn set_meta(params: &mut Value, key: &str, value: Value) {
    if !params.is_object() {
        *params = json!({});
    }
    if let Some(object) = params.as_object_mut() {
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if !meta.is_object() {
            *meta = json!({});
        }
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(key.to_owned(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_codec::remote::stamp;

    /// A connection initialized in `version`, holding session `s1` with
    /// its stream at position 3, broken: what the reconnect sends once its
    /// `initialize` is answered (`resumes`: the server took the
    /// connection over).
    fn after_reconnect(version: u64, resumes: bool) -> Vec<Value> {
        let mut r = Rejoin::new();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version}});
        let _ = r.outgoing(&init.to_string());
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version,
            "_meta": {META_RESUME: {"connection": "c1"}}}});
        let answer = stamp(&answer.to_string(), None, Position(1));
        assert!(r.incoming(&answer).unwrap().is_some());
        let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}"#;
        let _ = r.outgoing(new);
        let made = stamp(
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
            None,
            Position(2),
        );
        assert!(r.incoming(&made).unwrap().is_some());
        for at in 1..=3 {
            let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
            let _ = r.incoming(&stamp(update, Some("s1"), Position(at)));
        }
        let again = r.reconnected(Some("c2".into()));
        let first: Value = serde_json::from_str(&again[0]).unwrap();
        assert_eq!(first["method"], "initialize");
        let id = first["id"].clone();
        let mut meta = json!({});
        if resumes {
            meta = json!({META_RESUME: {"connection": "c2"}});
        }
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version, "_meta": meta}});
        assert_eq!(r.incoming(&answer.to_string()).unwrap(), None);
        let mut sent: Vec<Value> = r
            .poll_to_server()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if !resumes && r.take_restart() {
            let _ = r.reconnected(None);
            let id = json!(format!("{OWN_ID}{}", r.next_own));
            let answer =
                json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version}});
            assert_eq!(r.incoming(&answer.to_string()).unwrap(), None);
            sent = r
                .poll_to_server()
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        sent
    }

    #[test]
    fn a_v1_session_resumes_with_its_cursor_in_meta_and_loads_with_session_load() {
        let sent = after_reconnect(1, true);
        assert_eq!(sent[0]["method"], "session/resume", "{sent:?}");
        assert_eq!(sent[0]["params"]["_meta"][META_CURSOR]["position"], 3);
        assert!(sent[0]["params"].get("replayFrom").is_none());
        let sent = after_reconnect(1, false);
        assert_eq!(sent[0]["method"], "session/load", "{sent:?}");
    }

    #[test]
    fn a_v2_session_resumes_with_the_servers_cursor_in_replay_from() {
        let sent = after_reconnect(2, true);
        assert_eq!(sent[0]["method"], "session/resume", "{sent:?}");
        let from = &sent[0]["params"]["replayFrom"];
        assert_eq!(from["type"], REPLAY_CURSOR, "{sent:?}");
        assert_eq!(from["position"], 3, "{sent:?}");
        assert!(sent[0]["params"].get("_meta").is_none(), "{sent:?}");
        // Nothing to resume from: loaded from the start, v2's way.
        let sent = after_reconnect(2, false);
        assert_eq!(sent[0]["method"], "session/resume", "{sent:?}");
        assert_eq!(sent[0]["params"]["replayFrom"], json!({"type": "start"}));
    }
}
