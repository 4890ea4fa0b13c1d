//! The client's side of resumable delivery, sans-IO, for both profiles:
//! what a client (or a relay between an editor and a server) remembers so
//! that a new connection picks up where the broken one left off, and what
//! it sends first on it. The server's side is [`ResumeLog`](crate::remote::ResumeLog).
//!
//! The rules are in [`Rejoin`]'s documentation.

mod reconnect;
mod streams;

use alloc::borrow::{Cow, ToOwned};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde_json::{json, Map, Value};

use crate::acp::{Message, RpcError};
use crate::remote::{session_of, unstamp, SessionField, META_RESUME, RESUME_GAP};

pub use streams::{Delivery, StreamPositions};

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
#[non_exhaustive]
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

impl fmt::Display for RejoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

impl core::error::Error for RejoinError {}

/// A request of the client's not yet answered.
#[derive(Debug, Clone)]
struct Pending {
    line: String,
    method: String,
    /// For `session/new`, `session/load` and `session/resume`: the session
    /// named (`None` for `session/new`) and the directory it works in.
    session: Option<(Option<String>, String)>,
    /// When it was (last) put on the wire.
    seq: u64,
}

/// What a client remembers across connections, and what it sends first
/// on a new one.
///
/// # The rules
///
/// Positions, per stream (a session's, or the connection's own), one rule
/// for both profiles ([`StreamPositions`]): a message at or before the
/// stream's last position is dropped (never shown twice); on a stream
/// without holes (a session's on WebSocket) one more than one past it is
/// a gap (never a silent loss). On WebSocket a position is the server's
/// stamp in the message's `_meta` ([`unstamp`](crate::remote::unstamp)), read and
/// removed by [`Rejoin::incoming`](Self::incoming), so the client gets the bytes the agent
/// sent; on Streamable HTTP it is the SSE event's `id:`, and a stream
/// reopened after a break sends [`StreamPositions::resume_from`] as
/// `Last-Event-ID`.
///
/// Requests, answers and sessions ([`Rejoin`], either profile):
///
/// - [`outgoing`](Self::outgoing) sees each line the client sends: an
///   `initialize` is remembered and asks for positions
///   (`_meta["acp-codec/resume"]`, [`ask_for_positions`]); a request is
///   kept until answered (a server runs a request sent again with the same
///   id once); an answer to one of the agent's requests is kept until the
///   connection changes (a server drops an answer to a request no longer
///   pending, so sending it again is harmless).
/// - [`incoming`](Self::incoming) sees each message from the server:
///   positions as above; answers to the client's requests settle them
///   (and the answers sent before them, which the server read first); a
///   session the client creates, loads or resumes is remembered for the
///   next connection; the answers to what [`Rejoin`] sent itself are kept
///   from the client.
/// - [`reconnected`](Self::reconnected) gives the line to send first on
///   a new connection: `initialize` again, with the connection's cursor.
///   What follows depends on its answer, and is then taken with
///   [`poll_to_server`](Self::poll_to_server):
///   - the server took the connection over (its answer advertises resume):
///     the answers not known to have arrived, `session/resume` of each
///     session with its cursor, the requests still unanswered, with their
///     ids (a server runs a retried `session/prompt` once);
///   - the server does not know the connection (another server behind the
///     same address, after the one that served it died, or the same one
///     after its grace): nothing can be resumed. [`Rejoin`] asks for a
///     clean connection ([`take_restart`](Self::take_restart)), on which
///     it starts its positions again and loads each session
///     (`session/load`) from what the agent keeps (the same when the
///     transport itself learns that the server will not take the
///     connection up: [`start_over`](Self::start_over)); the history the
///     load replays is not handed to the client (it has seen it); a
///     `session/prompt` still unanswered fails with [`TURN_LOST`] for the
///     client ([`poll_to_client`](Self::poll_to_client)) rather than run
///     a second time (the turn in progress died with the server that ran
///     it); the other unanswered requests are sent again.
///
/// On a connection that speaks ACP v2 (its `initialize` answer says
/// `protocolVersion` 2), a session's position goes in `session/resume`'s
/// `replayFrom` as the server's own type
/// (`{"type":"_acp-codec/cursor","position":p}`,
/// [`REPLAY_CURSOR`](crate::remote::REPLAY_CURSOR)) rather than in `_meta`, and a
/// session is loaded with `session/resume` from `{"type":"start"}` (v2 has
/// no `session/load`).
///
/// A server that does not advertise resume gets the client's bytes
/// unchanged except the opt-in member of `initialize`, and nothing is
/// stamped; [`Rejoin::is_resumable`] then says a reconnect cannot resume.
///
/// On Streamable HTTP the transport reopens each event stream by itself
/// (with [`StreamPositions`]) and sends a `POST` whose answer never came
/// again, byte for byte; [`Rejoin`] above it steps in when the server
/// will not take the connection up ([`start_over`](Self::start_over)).
///
/// # Example
///
/// A WebSocket connection that breaks and resumes:
///
/// ```
/// use acp_codec::remote::{stamp, Position, Rejoin};
///
/// let mut rejoin = Rejoin::new();
/// let init = rejoin.outgoing(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
/// assert!(init.contains(r#""acp-codec/resume":{}"#));
/// // The server answers, advertising resume; every message is stamped.
/// let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"_meta":{"acp-codec/resume":{"connection":"c1"}}}}"#;
/// assert!(rejoin.incoming(&stamp(answer, None, Position(1)))?.is_some());
/// let _ = rejoin.outgoing(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#);
/// let made = r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#;
/// assert!(rejoin.incoming(&stamp(made, None, Position(2)))?.is_some());
/// let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
/// // The client gets the agent's bytes, once.
/// assert_eq!(rejoin.incoming(&stamp(update, Some("s1"), Position(1)))?.as_deref(), Some(update));
/// assert_eq!(rejoin.incoming(&stamp(update, Some("s1"), Position(1)))?, None);
/// assert!(rejoin.is_resumable());
///
/// // The connection breaks: `initialize` again with the cursor, then,
/// // once the server takes the connection over, the session resumed.
/// let first = rejoin.reconnected(None);
/// assert!(first[0].contains(r#""acp-codec/cursor":{"connection":"c1","position":2}"#));
/// let again = r#"{"jsonrpc":"2.0","id":"acp-client/rejoin-1","result":{"protocolVersion":1,"_meta":{"acp-codec/resume":{"connection":"c2"}}}}"#;
/// assert_eq!(rejoin.incoming(again)?, None);
/// let next = rejoin.poll_to_server();
/// assert!(next[0].contains(r#""method":"session/resume""#));
/// assert!(next[0].contains(r#""acp-codec/cursor":{"position":1}"#));
/// # Ok::<(), acp_codec::remote::RejoinError>(())
/// ```
#[derive(Debug, Default)]
pub struct Rejoin {
    /// The last position of each stream.
    positions: StreamPositions,
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
    /// Our own requests in flight: id (as JSON text) → session (`None` for
    /// initialize) and when it was put on the wire.
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
        core::mem::take(&mut self.to_server)
    }

    /// Lines for the client that no server sent: the errors of requests
    /// that cannot be sent again (a turn lost with its server).
    pub fn poll_to_client(&mut self) -> Vec<String> {
        core::mem::take(&mut self.to_client)
    }

    /// Whether the current connection must be replaced by a new one now:
    /// its server does not know the connection named by the cursor, so
    /// its positions would start again under the client's. The next
    /// [`reconnected`](Self::reconnected) starts over and loads the
    /// sessions. Reading it clears it.
    pub fn take_restart(&mut self) -> bool {
        core::mem::take(&mut self.restart)
    }

    /// The transport learned that the server will not take the connection
    /// up again (on Streamable HTTP: a `404` for the connection, or a
    /// `409` for a stream's `Last-Event-ID`, which the transport resumes
    /// by itself; on WebSocket: a [`RejoinError::Gap`]): the next
    /// [`reconnected`](Self::reconnected) starts over and loads the
    /// sessions, as when a server answers a reconnect's `initialize`
    /// without knowing the connection.
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
        // A count of lines: a u64 does not run out.
        self.seq = self.seq.saturating_add(1);
        self.seq
    }

    /// A request sent at `seq` was answered: the answers sent before it
    /// arrived.
    fn settled(&mut self, seq: u64) {
        self.answers.retain(|(at, _)| *at > seq);
    }

    /// A line the client sends; returns what to put on the wire (the line
    /// itself, but for `initialize`, which asks for positions).
    pub fn outgoing(&mut self, line: &str) -> String {
        let seq = self.tick();
        let Ok(message) = Message::decode(line) else {
            return line.to_owned();
        };
        match message {
            Message::Request(r) if r.method == "initialize" => {
                let Some((wire, params)) = asking(line) else {
                    return line.to_owned();
                };
                self.init = Some(params);
                let pending = Pending {
                    line: wire.clone(),
                    method: "initialize".into(),
                    session: None,
                    seq,
                };
                self.pending.insert(r.id.to_string(), pending);
                wire
            }
            Message::Request(r) => {
                let session = match r.method.as_ref() {
                    "session/new" | "session/load" | "session/resume" => {
                        Some(named_session(r.params.as_ref().map(|p| p.get())))
                    }
                    _ => None,
                };
                let pending = Pending {
                    line: line.to_owned(),
                    method: r.method.into_owned(),
                    session,
                    seq,
                };
                self.pending.insert(r.id.to_string(), pending);
                line.to_owned()
            }
            Message::Response(_) | Message::Error(_) => {
                if self.answers.len() < MAX_ANSWERS {
                    self.answers.push((seq, line.to_owned()));
                }
                line.to_owned()
            }
            Message::Notification(_) => line.to_owned(),
        }
    }

    /// A message from the server: `Ok(Some(line))` to hand to the client
    /// (its stamp removed), `Ok(None)` when it is not the client's
    /// (already seen, history a load of [`Rejoin`]'s own replayed, or the
    /// answer to what [`reconnected`](Self::reconnected) sent).
    ///
    /// # Errors
    ///
    /// [`RejoinError`] when the server refused to resume a session, when
    /// a session's stream skipped positions ([`RejoinError::Gap`]), or when
    /// the server refused a reconnect's `initialize`.
    pub fn incoming(&mut self, text: &str) -> Result<Option<String>, RejoinError> {
        let line = match unstamp(text) {
            Some((stream, position, original)) => {
                // A session's stream on one connection has no holes: a
                // jump means messages were lost.
                let contiguous = stream.is_some();
                match self.positions.push(stream.as_deref(), position, contiguous) {
                    Delivery::New => Cow::Owned(original),
                    Delivery::Seen => {
                        self.dropped_twice = self.dropped_twice.saturating_add(1);
                        return Ok(None);
                    }
                    Delivery::Gap { last } => {
                        return Err(RejoinError::Gap {
                            session: stream.unwrap_or_default(),
                            detail: format!("position {position} arrived after {last}"),
                        });
                    }
                }
            }
            None => Cow::Borrowed(text),
        };
        // Read once, without building a tree: the envelope, and
        // `params.sessionId` of a notification.
        let to_client = match Message::decode(&line) {
            Ok(message) => self.read(&message)?,
            Err(_) => true,
        };
        Ok(to_client.then(|| line.into_owned()))
    }

    /// What a decoded message from the server does; whether it is the
    /// client's.
    fn read(&mut self, message: &Message<'_>) -> Result<bool, RejoinError> {
        let (id, outcome) = match message {
            Message::Request(_) => return Ok(true),
            Message::Notification(_) => {
                let replayed = matches!(session_of(message),
                    SessionField::Id(s) if self.loading.contains(s.as_ref()));
                if replayed {
                    self.replayed = self.replayed.saturating_add(1);
                }
                return Ok(!replayed);
            }
            Message::Response(r) => (r.id.to_string(), Ok(r.result.get())),
            Message::Error(e) => (e.id.to_string(), Err(&e.error)),
        };
        if let Some((session, seq)) = self.own.remove(&id) {
            self.settled(seq);
            return self.own_answer(session, outcome).map(|()| false);
        }
        let Some(request) = self.pending.remove(&id) else {
            return Ok(true);
        };
        self.settled(request.seq);
        let Ok(result) = outcome else {
            return Ok(true);
        };
        match (request.method.as_str(), request.session) {
            ("initialize", _) => self.initialized(&parse(result)),
            ("session/new", Some((_, cwd))) => {
                if let Some(session) = parse(result).get("sessionId").and_then(Value::as_str) {
                    self.sessions.insert(session.to_owned(), cwd);
                }
            }
            ("session/load" | "session/resume", Some((Some(session), cwd))) => {
                self.sessions.insert(session, cwd);
            }
            _ => {}
        }
        Ok(true)
    }

    fn own_answer(
        &mut self,
        session: Option<String>,
        outcome: Result<&str, &RpcError<'_>>,
    ) -> Result<(), RejoinError> {
        let Some(session) = session else {
            // Our initialize: the server may have changed its mind.
            return match outcome {
                Ok(result) => {
                    self.initialized(&parse(result));
                    Ok(())
                }
                // Refused: nothing can follow it on this connection.
                Err(error) => Err(RejoinError::Initialize {
                    detail: error.message.clone().into_owned(),
                }),
            };
        };
        if self.loading.remove(&session) {
            self.loaded();
        }
        let Err(error) = outcome else {
            return Ok(());
        };
        let detail = error.message.clone().into_owned();
        if error.code == RESUME_GAP {
            Err(RejoinError::Gap { session, detail })
        } else {
            Err(RejoinError::Refused { session, detail })
        }
    }

    /// An `initialize` answer: whether the server resumes, and the id it
    /// gives the connection (the next connection's cursor names it).
    fn initialized(&mut self, result: &Value) {
        let resume = result.get("_meta").and_then(|m| m.get(META_RESUME));
        self.resumable = resume.is_some();
        let version = result.get("protocolVersion").and_then(Value::as_u64);
        self.v2 = version.is_some_and(|v| v >= 2);
        let named = resume
            .and_then(|r| r.get("connection"))
            .and_then(Value::as_str);
        if let Some(id) = named {
            self.connection = Some(id.to_owned());
        }
        if core::mem::take(&mut self.awaiting) {
            self.follow_up();
        }
    }
}

/// The client's `initialize` line with `params._meta["acp-codec/resume"]`
/// set, which asks the server for positions (a server then runs a request
/// the client sends again, its answer unseen, once); `None` when the line
/// is not a JSON object. [`Rejoin::outgoing`] does this itself.
///
/// ```
/// use acp_codec::remote::ask_for_positions;
///
/// let asked = ask_for_positions(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
/// assert!(asked.unwrap().contains(r#""_meta":{"acp-codec/resume":{}}"#));
/// assert_eq!(ask_for_positions("[1]"), None);
/// ```
pub fn ask_for_positions(initialize: &str) -> Option<String> {
    asking(initialize).map(|(wire, _)| wire)
}

/// [`ask_for_positions`], and the params as the client sent them (an
/// empty object when there were none).
fn asking(initialize: &str) -> Option<(String, Value)> {
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(initialize) else {
        return None;
    };
    let params = message.get("params").cloned().unwrap_or(json!({}));
    let mut asked = params.clone();
    set_meta(&mut asked, META_RESUME, json!({}));
    message.insert("params".into(), asked);
    Some((Value::Object(message).to_string(), params))
}

/// A result read as a tree (only `initialize`'s and `session/new`'s, which
/// are small); `null` when it does not parse.
fn parse(result: &str) -> Value {
    serde_json::from_str(result).unwrap_or(Value::Null)
}

/// The session a `session/new`, `session/load` or `session/resume`
/// names (`None` for `session/new`), and its `cwd` (`/` when it has none).
fn named_session(params: Option<&str>) -> (Option<String>, String) {
    let params = params.map(parse).unwrap_or(Value::Null);
    let session = params.get("sessionId").and_then(Value::as_str);
    let cwd = params.get("cwd").and_then(Value::as_str).unwrap_or("/");
    (session.map(ToOwned::to_owned), cwd.to_owned())
}

/// Sets `object[key]`, making `object` an object if it is not one.
fn set_member(object: &mut Value, key: &str, value: Value) {
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    if let Some(object) = object.as_object_mut() {
        object.insert(key.to_owned(), value);
    }
}

/// Sets `params._meta[key]`, making `params` and its `_meta` objects if
/// they are not.
fn set_meta(params: &mut Value, key: &str, value: Value) {
    if !params.is_object() {
        *params = Value::Object(Map::new());
    }
    if let Some(object) = params.as_object_mut() {
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        set_member(meta, key, value);
    }
}

#[cfg(test)]
mod tests;
