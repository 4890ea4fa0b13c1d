//! Resumable delivery, sans-IO: positions on what a server sends, a
//! byte-bounded log per stream that answers "what followed position N?",
//! acknowledgements, and a [`Ledger`] that keeps a request sent again
//! from running twice: one component for both profiles.
//!
//! The rules and the wire format are in [`ResumeLog`]'s documentation.

use alloc::collections::VecDeque;
use alloc::string::{String, ToString};
use core::fmt;
use core::time::Duration;

use serde::Deserialize;

use crate::acp::RequestId;
use crate::tally::Tally;
use crate::ErrorCode;

mod ledger;

pub use ledger::{Admit, Ledger};

/// The `_meta` key of the cursor: a server's stamp on each WebSocket
/// message, a reattach's last position, an `initialize` resuming a
/// WebSocket connection's stream.
pub const META_CURSOR: &str = "acp-codec/cursor";

/// The `type` of a v2 `session/resume`'s `replayFrom` that names a
/// position of this crate's server, `{"type":"_acp-codec/cursor","position":17}`:
/// what [`META_CURSOR`] is to a v1 reattach (v2 keeps `replayFrom` types
/// that begin with `_` for implementations' own cursors). A server that
/// takes it replays what it kept itself; the agent never sees it.
pub const REPLAY_CURSOR: &str = "_acp-codec/cursor";

/// The `_meta` key of the resume capability: sent by a client in
/// `initialize`'s params to ask for positions, answered by a server in
/// `initialize`'s result to say it keeps them.
pub const META_RESUME: &str = "acp-codec/resume";

/// The `_meta` key of a `session/prompt`'s idempotency key: a retry with
/// the same key, within the session, never runs twice.
pub const META_IDEMPOTENCY_KEY: &str = "acp-codec/idempotencyKey";

/// The request header of a reconnecting SSE reader: the `id:` of the last
/// event it has.
pub const HEADER_LAST_EVENT_ID: &str = "Last-Event-ID";

/// The error of a resume that would lose messages: `-32012`, in JSON-RPC's
/// range for server errors.
pub const RESUME_GAP: ErrorCode = ErrorCode(-32012);

/// The default budget of one stream's log, and of what a session whose
/// client left keeps for a reattach: 4 MiB of message text
/// ([`ServerConfig::replay_bytes`](crate::remote::ServerConfig::replay_bytes)).
pub const DEFAULT_RESUME_BUDGET: usize = 4 * 1024 * 1024;

/// How long a log waits for its client to come back: 120 seconds.
pub const DEFAULT_RESUME_GRACE: Duration = Duration::from_secs(120);

/// The most requests a [`Ledger`] remembers, of those answered and of
/// those running each: 64.
pub const DEFAULT_MAX_PROMPT_KEYS: usize = 64;

/// A message's place on its stream: `1` for the first, `0`
/// ([`START`](Self::START)) for "nothing yet".
///
/// ```
/// use acp_codec::remote::Position;
///
/// assert_eq!(Position::parse(" 42 "), Ok(Position(42)));
/// assert!(Position::parse("-1").is_err());
/// assert_eq!(Position(7).to_string(), "7");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position(pub u64);

impl Position {
    /// Before the first message.
    pub const START: Self = Self(0);

    /// Reads a decimal position (SSE's `Last-Event-ID`), spaces around it
    /// allowed.
    ///
    /// # Errors
    ///
    /// [`ResumeError::BadCursor`] for anything but ASCII digits that fit
    /// in a `u64`.
    pub fn parse(text: &str) -> Result<Self, ResumeError> {
        let digits = text.trim_matches(' ');
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ResumeError::BadCursor);
        }
        digits.parse().map(Self).map_err(|_| ResumeError::BadCursor)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What a refused resume or cursor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResumeError {
    /// Messages after `after` were dropped (the budget, or an
    /// acknowledgement past `after`): the first one still held is
    /// `first_kept`.
    Gap {
        /// The client's last position.
        after: Position,
        /// The oldest position the log still holds (or the next to be
        /// sent, when it holds none).
        first_kept: Position,
    },
    /// The client claims a position the stream has not reached: it names
    /// another stream, or another server's.
    Ahead {
        /// The client's position.
        after: Position,
        /// The last position sent.
        last: Position,
    },
    /// A cursor that is not a position.
    BadCursor,
}

impl ResumeError {
    /// The JSON-RPC code to answer with: [`RESUME_GAP`] for a gap or a
    /// position ahead of the stream, `-32602` for a malformed cursor.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Gap { .. } | Self::Ahead { .. } => RESUME_GAP,
            Self::BadCursor => ErrorCode::INVALID_PARAMS,
        }
    }

    /// The HTTP status for an event stream's `GET`: `409` for a gap or a
    /// position ahead, `400` for a malformed `Last-Event-ID`.
    pub const fn http_status(&self) -> u16 {
        match self {
            Self::Gap { .. } | Self::Ahead { .. } => 409,
            Self::BadCursor => 400,
        }
    }
}

impl fmt::Display for ResumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gap { after, first_kept } => write!(
                f,
                "cannot resume after position {after}: the oldest message kept is at {first_kept}"
            ),
            Self::Ahead { after, last } => write!(
                f,
                "cannot resume after position {after}: the stream has only reached {last}"
            ),
            Self::BadCursor => f.write_str("resume cursor is not a position"),
        }
    }
}

impl core::error::Error for ResumeError {}

/// How a message is kept past the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A notification, or anything a gap may drop (the client recovers it
    /// with `session/load`).
    Plain,
    /// The answer to a client's request, or a request of the agent: kept,
    /// within the budget, until the client acknowledges it.
    Owed,
}

#[derive(Debug)]
struct Entry {
    position: Position,
    kind: Kind,
    text: String,
}

/// What identifies a request across retries: within a Streamable HTTP
/// connection, or within a WebSocket connection's session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PromptKey(String);

impl PromptKey {
    /// The key of a prompt: `params._meta[`[`META_IDEMPOTENCY_KEY`]`]`
    /// when it is a string, else the request id.
    ///
    /// ```
    /// use acp_codec::acp::RequestId;
    /// use acp_codec::remote::PromptKey;
    ///
    /// let by_id = PromptKey::of(&RequestId::Number(5), Some(r#"{"sessionId":"s"}"#));
    /// let by_key = PromptKey::of(
    ///     &RequestId::Number(6),
    ///     Some(r#"{"sessionId":"s","_meta":{"acp-codec/idempotencyKey":"k1"}}"#),
    /// );
    /// assert_ne!(by_id, by_key);
    /// assert_eq!(by_id, PromptKey::of(&RequestId::Number(5), None));
    /// ```
    pub fn of(id: &RequestId<'_>, params: Option<&str>) -> Self {
        if let Some(key) = params.and_then(idempotency_key) {
            let mut text = String::from("key:");
            text.push_str(&key);
            return Self(text);
        }
        let mut text = String::from("id:");
        match id {
            RequestId::Null => text.push_str("null"),
            RequestId::Number(n) => text.push_str(&n.to_string()),
            RequestId::Str(s) => {
                text.push('"');
                text.push_str(s);
            }
        }
        Self(text)
    }

    /// The key scoped to `session`: the same id or idempotency key in
    /// another session is another request.
    pub(crate) fn within(mut self, session: &str) -> Self {
        self.0.push('\0');
        self.0.push_str(session);
        self
    }
}

#[derive(Deserialize)]
struct ReplayKeys<'a> {
    #[serde(rename = "replayFrom", borrow, default)]
    replay_from: Option<ReplayFrom<'a>>,
}

#[derive(Deserialize)]
struct ReplayFrom<'a> {
    #[serde(rename = "type", borrow)]
    kind: alloc::borrow::Cow<'a, str>,
    #[serde(default)]
    position: Option<Position>,
}

#[derive(Deserialize)]
struct MetaKeys<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaMembers<'a>>,
}

#[derive(Deserialize)]
struct MetaMembers<'a> {
    #[serde(rename = "acp-codec/idempotencyKey", borrow, default)]
    key: Option<alloc::borrow::Cow<'a, str>>,
    #[serde(rename = "acp-codec/cursor", default)]
    cursor: Option<Cursor>,
}

fn idempotency_key(params: &str) -> Option<String> {
    let keys: MetaKeys<'_> = serde_json::from_str(params).ok()?;
    keys.meta?.key.map(alloc::borrow::Cow::into_owned)
}

/// A cursor as a client sends it in `_meta` ([`META_CURSOR`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Cursor {
    /// The last position the client has.
    pub position: Position,
    /// The connection whose stream it resumes (`initialize` on a new
    /// WebSocket only).
    #[serde(default)]
    pub connection: Option<String>,
}

impl<'de> Deserialize<'de> for Position {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        u64::deserialize(d).map(Self)
    }
}

impl Cursor {
    /// The cursor in `params._meta[`[`META_CURSOR`]`]` of a request
    /// (`session/resume`, `session/load`, `initialize`), `None` when there
    /// is none.
    ///
    /// ```
    /// use acp_codec::remote::{Cursor, Position};
    ///
    /// let params = r#"{"sessionId":"s1","_meta":{"acp-codec/cursor":{"position":17}}}"#;
    /// let cursor = Cursor::from_params(params).unwrap().unwrap();
    /// assert_eq!(cursor.position, Position(17));
    /// assert_eq!(Cursor::from_params(r#"{"sessionId":"s1"}"#), Ok(None));
    /// assert!(Cursor::from_params(r#"{"_meta":{"acp-codec/cursor":{"position":-1}}}"#).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`ResumeError::BadCursor`] when the member is there but is not a
    /// cursor (or the params are not a JSON object or array).
    pub fn from_params(params: &str) -> Result<Option<Self>, ResumeError> {
        let keys: MetaKeys<'_> =
            serde_json::from_str(params).map_err(|_| ResumeError::BadCursor)?;
        Ok(keys.meta.and_then(|m| m.cursor))
    }

    /// The cursor in `params.replayFrom` of a v2 `session/resume`, when
    /// its `type` is [`REPLAY_CURSOR`]; `None` for any other (`start`,
    /// another implementation's), or none.
    ///
    /// ```
    /// use acp_codec::remote::{Cursor, Position};
    ///
    /// let params = r#"{"sessionId":"s1","cwd":"/","replayFrom":{"type":"_acp-codec/cursor","position":17}}"#;
    /// assert_eq!(Cursor::from_replay_from(params).unwrap().unwrap().position, Position(17));
    /// let start = r#"{"sessionId":"s1","cwd":"/","replayFrom":{"type":"start"}}"#;
    /// assert_eq!(Cursor::from_replay_from(start), Ok(None));
    /// assert!(Cursor::from_replay_from(r#"{"replayFrom":{"type":"_acp-codec/cursor"}}"#).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`ResumeError::BadCursor`] when a [`REPLAY_CURSOR`] holds no
    /// position (or the params are not a JSON object, or `replayFrom` has
    /// no string `type`).
    pub fn from_replay_from(params: &str) -> Result<Option<Self>, ResumeError> {
        let keys: ReplayKeys<'_> =
            serde_json::from_str(params).map_err(|_| ResumeError::BadCursor)?;
        match keys.replay_from {
            Some(r) if r.kind == REPLAY_CURSOR => {
                let position = r.position.ok_or(ResumeError::BadCursor)?;
                Ok(Some(Self {
                    position,
                    connection: None,
                }))
            }
            _ => Ok(None),
        }
    }
}

/// A server's answer to [`META_RESUME`] in `initialize`'s result `_meta`:
/// the member to add, `"acp-codec/resume":{"budget":N}`.
///
/// ```
/// assert_eq!(acp_codec::remote::capability(1024), r#""acp-codec/resume":{"budget":1024}"#);
/// ```
pub fn capability(budget: usize) -> String {
    let mut out = String::from("\"");
    out.push_str(META_RESUME);
    out.push_str("\":{\"budget\":");
    out.push_str(&budget.to_string());
    out.push('}');
    out
}

/// One SSE event for `message` at `position`: `id: N`, `data: …`, a blank
/// line. `message` holds no raw newline (it is one JSON-RPC message).
///
/// ```
/// use acp_codec::remote::{sse_event, Position};
///
/// assert_eq!(sse_event(Position(3), "{}"), "id: 3\ndata: {}\n\n");
/// ```
pub fn sse_event(position: Position, message: &str) -> String {
    let mut out = String::with_capacity(message.len().saturating_add(32));
    out.push_str("id: ");
    out.push_str(&position.0.to_string());
    out.push_str("\ndata: ");
    out.push_str(message);
    out.push_str("\n\n");
    out
}

/// `message` (one JSON-RPC object) with its cursor at the front, for a
/// WebSocket client that asked for positions: `{"_meta":{"acp-codec/cursor":
/// {"session":…,"position":N}},…`. `session` is `None` for the
/// connection's own stream. Anything but an object is returned unchanged.
///
/// ```
/// use acp_codec::remote::{stamp, unstamp, Position};
///
/// let m = r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#;
/// let stamped = stamp(m, Some("s1"), Position(9));
/// assert_eq!(
///    stamped,
///    r#"{"_meta":{"acp-codec/cursor":{"session":"s1","position":9}},"jsonrpc":"2.0","method":"session/update","params":{}}"#
/// );
/// let (stream, position, original) = unstamp(&stamped).unwrap();
/// assert_eq!((stream.as_deref(), position, original.as_str()), (Some("s1"), Position(9), m));
/// ```
pub fn stamp(message: &str, session: Option<&str>, position: Position) -> String {
    let Some(rest) = message.trim_start().strip_prefix('{') else {
        return message.into();
    };
    let rest_trimmed = rest.trim_start();
    let mut out = String::with_capacity(message.len().saturating_add(64));
    out.push_str("{\"_meta\":{\"");
    out.push_str(META_CURSOR);
    out.push_str("\":{");
    if let Some(session) = session {
        out.push_str("\"session\":");
        out.push_str(&serde_json::Value::from(session).to_string());
        out.push(',');
    }
    out.push_str("\"position\":");
    out.push_str(&position.0.to_string());
    out.push_str("}}");
    if !rest_trimmed.starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
    out
}

#[derive(Deserialize)]
struct StampMeta {
    #[serde(rename = "acp-codec/cursor")]
    cursor: StampCursor,
}

#[derive(Deserialize)]
struct StampCursor {
    #[serde(default)]
    session: Option<String>,
    position: Position,
}

/// Reads what [`stamp`] added: the stream (`None`: the connection's), the
/// position, and the message as it was before. `None` when `message` does
/// not start with a stamp.
pub fn unstamp(message: &str) -> Option<(Option<String>, Position, String)> {
    let after = message.strip_prefix("{\"_meta\":")?;
    let mut values = serde_json::Deserializer::from_str(after).into_iter::<StampMeta>();
    let meta = values.next()?.ok()?;
    let rest = after.get(values.byte_offset()..)?;
    let rest = rest.strip_prefix(',').unwrap_or(rest);
    let mut original = String::with_capacity(rest.len().saturating_add(1));
    original.push('{');
    original.push_str(rest);
    Some((meta.cursor.session, meta.cursor.position, original))
}

/// One stream's log of what was sent, by position, within a byte budget.
///
/// # The rules
///
/// - Every message a server sends on a stream (a session's, or a
///   connection's own) gets the next [`Position`] of that stream: `1`, `2`,
///   … ([`ResumeLog::push`]). [`Position::START`] (`0`) means "nothing
///   received yet".
/// - A client that reconnects names the last position it has on each
///   stream; [`ResumeLog::resume`] yields exactly the messages after it, in
///   order: nothing lost, nothing twice. When the log no longer holds all
///   of them (its byte budget pushed the oldest out) the answer is a
///   [`ResumeError::Gap`], never a silent loss; the client then falls back
///   to `session/load`.
/// - What the client must not lose even past a gap is *owed*
///   ([`Kind::Owed`]): the answer to one of its requests, or a request of
///   the agent (a permission request) that it has not seen. An owed
///   message pushed out of the window by newer messages is kept aside,
///   within the same budget, until the client acknowledges a position at
///   or after it ([`ResumeLog::ack`], or the position it resumes from);
///   [`ResumeLog::owed_after`] hands those over after a gap.
/// - A request is admitted once per [`PromptKey`] (its request id, or the
///   idempotency key in its `_meta`) by the connection's [`Ledger`]: a
///   retry while it runs is dropped, one after it was answered gets the
///   answer again from the log, or `-32012` once the log no longer holds
///   it; never a second run.
/// - Time is a parameter: a log whose client left is kept for
///   [`DEFAULT_RESUME_GRACE`] after [`ResumeLog::detach`]; the owner asks
///   [`ResumeLog::deadline`] when to look again and [`ResumeLog::expired`]
///   whether to give up (then answer the agent's pending requests as a
///   client that left, and drop the log).
///
/// # On the wire
///
/// | where | what carries the position |
/// |---|---|
/// | Streamable HTTP, each `GET` event stream | SSE's `id:` field, the stream's position in decimal ([`sse_event`]); a reconnecting `GET` sends it back in `Last-Event-ID` ([`HEADER_LAST_EVENT_ID`], read with [`Position::parse`]) |
/// | WebSocket, every message from the server | a `_meta` member at the top of the message ([`stamp`]): `{"_meta":{"`[`META_CURSOR`]`":{"session":"s1","position":17}},…}` (no `session` for the connection's stream); the client strips it again ([`unstamp`]) |
/// | reattaching a session on a new connection (`session/resume`, `session/load`) | `params._meta[`[`META_CURSOR`]`] = {"position": 17}` ([`Cursor::from_params`]) |
/// | resuming a WebSocket connection's own stream | `initialize`'s `params._meta[`[`META_CURSOR`]`] = {"connection": "<old Acp-Connection-Id>", "position": 4}` |
/// | opting in and advertising | the client sends `params._meta[`[`META_RESUME`]`]` in `initialize`; a server that resumes answers with `result._meta[`[`META_RESUME`]`] = {"budget": <bytes>}` ([`capability`]). Only then are WebSocket messages stamped: other clients get the bytes unchanged |
/// | a retried prompt | its same request id, or `params._meta[`[`META_IDEMPOTENCY_KEY`]`]` ([`PromptKey::of`]) |
///
/// A gap is answered with [`RESUME_GAP`] (`-32012`): the reattach request's
/// error, or the `GET`'s `409`, says that positions were lost.
///
/// # Example
///
/// ```
/// use acp_codec::remote::{Kind, Position, ResumeError, ResumeLog};
///
/// let mut log = ResumeLog::new(64);
/// let first = log.push(Kind::Plain, r#"{"n":1}"#);
/// let second = log.push(Kind::Plain, r#"{"n":2}"#);
/// assert_eq!((first, second), (Position(1), Position(2)));
///
/// // The client had position 1 when its connection broke: it gets 2 only.
/// let missed: Vec<_> = log.resume(first).unwrap().collect();
/// assert_eq!(missed, [(Position(2), r#"{"n":2}"#)]);
///
/// // The budget is 64 bytes: three 30-byte messages push the oldest out.
/// for _ in 0..3 {
///     let _ = log.push(Kind::Plain, &"x".repeat(30));
/// }
/// let gap = log.resume(Position(2)).err().unwrap();
/// assert_eq!(gap, ResumeError::Gap { after: Position(2), first_kept: Position(4) });
/// assert_eq!(gap.to_string(), "cannot resume after position 2: the oldest message kept is at 4");
/// ```
///
/// Memory: at most `budget` bytes of message text, plus about 48 bytes a
/// message.
#[derive(Debug)]
pub struct ResumeLog {
    budget: usize,
    grace: Duration,
    next: Position,
    /// Contiguous positions, oldest first.
    window: VecDeque<Entry>,
    /// Owed messages pushed out of the window, oldest first.
    owed: VecDeque<Entry>,
    bytes: Tally,
    detached_at: Option<Duration>,
}

impl Default for ResumeLog {
    fn default() -> Self {
        Self::new(DEFAULT_RESUME_BUDGET)
    }
}

impl ResumeLog {
    /// A log keeping at most `budget` bytes of message text.
    pub const fn new(budget: usize) -> Self {
        Self {
            budget,
            grace: DEFAULT_RESUME_GRACE,
            next: Position(1),
            window: VecDeque::new(),
            owed: VecDeque::new(),
            bytes: Tally::holding(0),
            detached_at: None,
        }
    }

    /// Sets how long the log waits for a client that left.
    #[must_use]
    pub const fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The budget, in bytes of message text.
    pub const fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes of message text held.
    pub const fn bytes(&self) -> usize {
        self.bytes.get()
    }

    /// The position of the last message pushed ([`Position::START`] when
    /// none).
    pub const fn last(&self) -> Position {
        Position(self.next.0.saturating_sub(1))
    }

    /// The oldest position the window holds, or the next to be pushed
    /// when it holds none: a client can resume after any position from
    /// one before this one to [`last`](Self::last).
    pub fn first_kept(&self) -> Position {
        self.window.front().map_or(self.next, |e| e.position)
    }

    /// Gives `message` the stream's next position and keeps it, pushing the
    /// oldest messages out as the budget needs (owed ones aside, while
    /// they fit). A message larger than the whole budget gets its position
    /// but is not kept: a client that missed it gets a gap.
    #[must_use = "the position goes on the wire with the message"]
    pub fn push(&mut self, kind: Kind, message: &str) -> Position {
        let position = self.next;
        self.next = Position(position.0.saturating_add(1));
        let len = message.len();
        if len > self.budget {
            // The window must stay contiguous: what it held is older than
            // a message no client can get back.
            while let Some(entry) = self.window.pop_front() {
                self.set_aside(entry);
            }
            self.trim(0);
            return position;
        }
        self.trim(len);
        self.bytes.add(len);
        self.window.push_back(Entry {
            position,
            kind,
            text: message.into(),
        });
        position
    }

    /// Makes room for `len` more bytes: the window's oldest go first (owed
    /// ones set aside), then the oldest set aside.
    fn trim(&mut self, len: usize) {
        while len > self.bytes.room(self.budget) {
            if let Some(entry) = self.window.pop_front() {
                self.set_aside(entry);
            } else if let Some(entry) = self.owed.pop_front() {
                self.bytes.release(entry.text.len());
            } else {
                break;
            }
        }
    }

    fn set_aside(&mut self, entry: Entry) {
        match entry.kind {
            Kind::Owed => self.owed.push_back(entry),
            Kind::Plain => self.bytes.release(entry.text.len()),
        }
    }

    /// The client has every message up to `upto`: they are forgotten.
    ///
    /// # Errors
    ///
    /// [`ResumeError::Ahead`] when `upto` is past [`last`](Self::last);
    /// nothing changes.
    pub fn ack(&mut self, upto: Position) -> Result<(), ResumeError> {
        let last = self.last();
        if upto > last {
            return Err(ResumeError::Ahead { after: upto, last });
        }
        while self.window.front().is_some_and(|e| e.position <= upto) {
            if let Some(e) = self.window.pop_front() {
                self.bytes.release(e.text.len());
            }
        }
        while self.owed.front().is_some_and(|e| e.position <= upto) {
            if let Some(e) = self.owed.pop_front() {
                self.bytes.release(e.text.len());
            }
        }
        Ok(())
    }

    /// A client is back with `after` as its last position: acknowledges up
    /// to `after`, ends a detach, and yields every message after it, oldest
    /// first.
    ///
    /// # Errors
    ///
    /// [`ResumeError::Gap`] when a message after `after` is no longer held
    /// (hand over [`owed_after`](Self::owed_after) and the window, then let
    /// the client reload), [`ResumeError::Ahead`] when `after` is past
    /// [`last`](Self::last) (nothing changes).
    pub fn resume(
        &mut self,
        after: Position,
    ) -> Result<impl Iterator<Item = (Position, &str)> + '_, ResumeError> {
        self.ack(after)?;
        self.detached_at = None;
        let first_kept = self.first_kept();
        if after.0.saturating_add(1) < first_kept.0 {
            return Err(ResumeError::Gap { after, first_kept });
        }
        Ok(self.window.iter().map(|e| (e.position, e.text.as_str())))
    }

    /// What is owed after `after` and no longer in the window (after a
    /// gap: the answers and the agent's requests the client must still
    /// get), oldest first.
    pub fn owed_after(&self, after: Position) -> impl Iterator<Item = (Position, &str)> + '_ {
        self.owed
            .iter()
            .filter(move |e| e.position > after)
            .map(|e| (e.position, e.text.as_str()))
    }

    /// The message at `position`, while held.
    pub fn message(&self, position: Position) -> Option<&str> {
        let in_window = self.window.front().and_then(|first| {
            let index = usize::try_from(position.0.checked_sub(first.position.0)?).ok()?;
            self.window.get(index)
        });
        in_window
            .or_else(|| self.owed.iter().find(|e| e.position == position))
            .map(|e| e.text.as_str())
    }

    /// The client left at `now`: the log waits [`DEFAULT_RESUME_GRACE`]
    /// (or [`with_grace`](Self::with_grace)) for it.
    pub fn detach(&mut self, now: Duration) {
        self.detached_at.get_or_insert(now);
    }

    /// When the grace of a detached log ends (`None` while a client holds
    /// it).
    pub fn deadline(&self) -> Option<Duration> {
        self.detached_at.map(|at| at.saturating_add(self.grace))
    }

    /// Whether the client left more than the grace ago: the owner gives up
    /// on it.
    pub fn expired(&self, now: Duration) -> bool {
        self.deadline().is_some_and(|end| now >= end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn texts<'a>(it: impl Iterator<Item = (Position, &'a str)>) -> Vec<(u64, String)> {
        it.map(|(p, t)| (p.0, t.into())).collect()
    }

    #[test]
    fn resume_yields_what_followed_and_acks_before() {
        let mut log = ResumeLog::new(100);
        for n in 1..=4 {
            assert_eq!(log.push(Kind::Plain, &n.to_string()), Position(n));
        }
        assert_eq!(
            texts(log.resume(Position(2)).unwrap()),
            [(3, "3".into()), (4, "4".into())]
        );
        assert_eq!(log.bytes(), 2);
        // Resuming again from the same place gives the same.
        assert_eq!(texts(log.resume(Position(2)).unwrap()).len(), 2);
        // From before what was acknowledged: a gap.
        assert_eq!(
            log.resume(Position(1)).map(|_| ()),
            Err(ResumeError::Gap {
                after: Position(1),
                first_kept: Position(3)
            })
        );
        // Ahead: refused, nothing changes.
        assert_eq!(
            log.resume(Position(9)).map(|_| ()),
            Err(ResumeError::Ahead {
                after: Position(9),
                last: Position(4)
            })
        );
        assert_eq!(log.bytes(), 2);
        assert_eq!(texts(log.resume(Position(4)).unwrap()), []);
        assert_eq!(log.bytes(), 0);
    }

    #[test]
    fn owed_messages_outlive_the_window_within_the_budget() {
        let mut log = ResumeLog::new(10);
        let ask = log.push(Kind::Owed, "ask");
        for _ in 0..3 {
            let _ = log.push(Kind::Plain, "abc");
        }
        // 3 + 3 * 3 > 10: "ask" is set aside, still counted, and the
        // oldest plain message makes the room.
        assert_eq!(log.first_kept(), Position(3));
        assert_eq!(log.bytes(), 9);
        let gap = log.resume(Position::START).map(|_| ()).unwrap_err();
        assert_eq!(gap.code(), RESUME_GAP);
        assert_eq!(
            texts(log.owed_after(Position::START)),
            [(ask.0, "ask".into())]
        );
        assert_eq!(log.message(ask), Some("ask"));
        // More plain messages push the owed one out last.
        let _ = log.push(Kind::Plain, "0123456789");
        assert_eq!(
            (log.bytes(), log.owed_after(Position::START).count()),
            (10, 0)
        );
        // Too large for any budget: positioned, not kept, the window emptied.
        let big = log.push(Kind::Owed, "01234567890");
        assert_eq!(
            (big, log.bytes(), log.first_kept()),
            (Position(6), 0, Position(7))
        );
        assert!(log.resume(Position(5)).is_err());
        assert!(log.resume(Position(6)).is_ok());
    }

    #[test]
    fn grace_is_counted_from_the_first_detach() {
        let mut log = ResumeLog::new(10).with_grace(Duration::from_secs(5));
        assert_eq!(log.deadline(), None);
        log.detach(Duration::from_secs(1));
        log.detach(Duration::from_secs(3));
        assert_eq!(log.deadline(), Some(Duration::from_secs(6)));
        assert!(!log.expired(Duration::from_secs(5)));
        assert!(log.expired(Duration::from_secs(6)));
        let _ = log.resume(Position::START).map(|_| ());
        assert!(!log.expired(Duration::from_secs(60)));
    }

    #[test]
    fn stamps_round_trip_and_refuse_others() {
        assert_eq!(stamp("[1]", None, Position(1)), "[1]");
        let empty = stamp("{}", None, Position(2));
        assert_eq!(empty, r#"{"_meta":{"acp-codec/cursor":{"position":2}}}"#);
        assert_eq!(unstamp(&empty), Some((None, Position(2), "{}".into())));
        let odd = stamp("{\"a\":1}", Some("s\"\n"), Position(3));
        let (s, p, m) = unstamp(&odd).unwrap();
        assert_eq!(
            (s.as_deref(), p, m.as_str()),
            (Some("s\"\n"), Position(3), "{\"a\":1}")
        );
        assert_eq!(unstamp(r#"{"_meta":{}}"#), None);
        assert_eq!(unstamp(r#"{"a":1}"#), None);
        assert_eq!(Position::parse(""), Err(ResumeError::BadCursor));
        assert_eq!(
            Position::parse("99999999999999999999"),
            Err(ResumeError::BadCursor)
        );
        assert_eq!(ResumeError::BadCursor.http_status(), 400);
    }
}
