//! The rules of ACP's Streamable HTTP & WebSocket transport, as the official
//! TypeScript SDK 2.4 applies them, for a server to call per message.

use alloc::borrow::Cow;
use alloc::string::String;
use core::fmt;
use core::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::error::RemoteError;
use crate::acp::MessageError;
use crate::acp::{names, Message, RawJson, Request, RequestId};
use crate::framing::peek;
use crate::json::unescape::unquote;
use crate::PeekedId;

/// The conventional path of the one endpoint both profiles share.
pub const ENDPOINT_PATH: &str = "/acp";

/// The header naming a connection: the server sets it on the `initialize`
/// response (and on the WebSocket upgrade's `101`); a Streamable HTTP
/// client sends it on every later request.
pub const HEADER_CONNECTION_ID: &str = "Acp-Connection-Id";

/// The header naming the session a Streamable HTTP request concerns, and
/// the session a `GET` event stream is for.
pub const HEADER_SESSION_ID: &str = "Acp-Session-Id";

/// The header a client may send with the negotiated protocol version.
pub const HEADER_PROTOCOL_VERSION: &str = "Acp-Protocol-Version";

/// The media type of the `GET` event streams (Server-Sent Events).
pub const EVENT_STREAM_MIME_TYPE: &str = "text/event-stream";

/// The media type of a `POST` body and of the `initialize` answer.
pub const JSON_MIME_TYPE: &str = "application/json";

/// The largest message a client takes from a server: 32 MiB, the SDK's
/// default (`DEFAULT_MAX_MESSAGE_BYTES`).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// The largest `POST` body a server reads: 16 MiB, the SDK's default for
/// its Node adapter; a larger one is answered `413`.
pub const DEFAULT_MAX_REQUEST_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The most output a server holds for one connection before it stops
/// reading the agent: 64 MiB, the SDK's default.
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 64 * 1024 * 1024;

/// The longest session id or string request id a server accepts: 1,024
/// bytes, the SDK's default (it counts UTF-16 units).
pub const DEFAULT_MAX_ID_LENGTH: usize = 1024;

/// The most session streams one connection buffers without a reader: 1,024.
pub const DEFAULT_MAX_BUFFERED_SESSION_STREAMS: usize = 1024;

/// How long a server waits for a client that reads none of its output
/// before closing the connection: 60 seconds.
pub const DEFAULT_MAX_OUTPUT_STALL: Duration = Duration::from_secs(60);

/// The answer to a JSON array: one `-32600` error with `id: null`, the
/// SDK's exact text. The array's elements are never processed.
pub const BATCH_ERROR: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: JSON-RPC batches are not supported"}}"#;

/// The answer to text that is not JSON: `-32700` with `id: null`.
pub const PARSE_ERROR: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

/// The answer to JSON that is not a JSON-RPC message: `-32600` with
/// `id: null`.
pub const INVALID_REQUEST: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}"#;

/// A WebSocket close code (RFC 6455, section 7.4).
///
/// ```
/// use acp_codec::remote::CloseCode;
///
/// assert_eq!(CloseCode::MESSAGE_TOO_BIG.0, 1009);
/// assert_eq!(CloseCode::PROTOCOL_ERROR.to_string(), "1002 protocol error");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// `1000`: a normal close.
    pub const NORMAL: Self = Self(1000);
    /// `1001`: the server is shutting down.
    pub const GOING_AWAY: Self = Self(1001);
    /// `1002`: the first message is not an `initialize` request with an id.
    pub const PROTOCOL_ERROR: Self = Self(1002);
    /// `1008`: a limit of the connection was exceeded (buffered bytes, an
    /// over-long id, a client that stopped reading).
    pub const POLICY_VIOLATION: Self = Self(1008);
    /// `1009`: a message over the size limit.
    pub const MESSAGE_TOO_BIG: Self = Self(1009);
    /// `1011`: the server failed (the agent's `initialize` failed, a send
    /// failed).
    pub const INTERNAL_ERROR: Self = Self(1011);

    /// The standard name of a known code, `None` for others.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1000 => "normal closure",
            1001 => "going away",
            1002 => "protocol error",
            1008 => "policy violation",
            1009 => "message too big",
            1011 => "internal error",
            _ => return None,
        })
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} {}", self.0, name),
            None => write!(f, "{}", self.0),
        }
    }
}

/// Whether a client→agent method concerns one session, so a Streamable HTTP
/// `POST` of it must carry `Acp-Session-Id`: `session/cancel`, `close`,
/// `delete`, `fork`, `load`, `prompt`, `resume`, `set_config_option`,
/// `set_mode` and `set_model`. (`session/new` and `session/list` do not:
/// the session does not exist yet, or there are many.)
///
/// ```
/// use acp_codec::remote::is_session_scoped;
///
/// assert!(is_session_scoped("session/prompt"));
/// assert!(!is_session_scoped("session/new"));
/// ```
pub fn is_session_scoped(method: &str) -> bool {
    matches!(
        method,
        names::SESSION_CANCEL
            | names::SESSION_CLOSE
            | names::SESSION_DELETE
            | SESSION_FORK
            | names::SESSION_LOAD
            | names::SESSION_PROMPT
            | names::SESSION_RESUME
            | names::SESSION_SET_CONFIG_OPTION
            | names::SESSION_SET_MODE
            | names::SESSION_SET_MODEL
    )
}

/// `session/fork` (unstable ACP): answered with a new session's id.
pub(crate) const SESSION_FORK: &str = "session/fork";

/// Whether a method reattaches a session after its client lost it
/// (`session/load`, `session/resume`): the SDK's client clears a session's
/// failure on these, and a [`ReplayBuffer`](super::ReplayBuffer) hands
/// over what the session missed.
pub fn is_reattach(method: &str) -> bool {
    matches!(method, names::SESSION_LOAD | names::SESSION_RESUME)
}

/// What the `sessionId` member of params (or of a result) holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionField<'a> {
    /// No params, params that are not an object, no `sessionId`, or `null`.
    Absent,
    /// A string: the session. Borrowed when it holds no escapes.
    Id(Cow<'a, str>),
    /// Anything else, or an object that does not parse (a repeated
    /// `sessionId`): a message no session can own, and that must not be
    /// taken for one without a session either.
    Invalid,
}

impl<'a> SessionField<'a> {
    /// The session id, when there is one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Self::Id(s) => Some(s),
            _ => None,
        }
    }

    /// The session id, owned.
    pub fn into_id(self) -> Option<Cow<'a, str>> {
        match self {
            Self::Id(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct SessionRef<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<&'a RawValue>,
}

/// The `sessionId` of raw params or of a raw result (the SDK reads a
/// session from either: a request's params, `session/new`'s result).
///
/// ```
/// use acp_codec::acp::RawJson;
/// use acp_codec::remote::{session_field, SessionField};
///
/// let params = RawJson::from_text(r#"{"sessionId":"s1","prompt":[]}"#).unwrap();
/// assert_eq!(session_field(Some(&params)).id(), Some("s1"));
/// let params = RawJson::from_text(r#"{"sessionId":7}"#).unwrap();
/// assert_eq!(session_field(Some(&params)), SessionField::Invalid);
/// assert_eq!(session_field(None), SessionField::Absent);
/// ```
pub fn session_field<'r>(raw: Option<&'r RawJson<'_>>) -> SessionField<'r> {
    let Some(raw) = raw else {
        return SessionField::Absent;
    };
    let text = raw.get();
    let Ok(r) = serde_json::from_str::<SessionRef<'_>>(text) else {
        return if text.trim_start().starts_with('{') {
            SessionField::Invalid
        } else {
            SessionField::Absent
        };
    };
    match r.session_id {
        None => SessionField::Absent,
        Some(v) if v.get() == "null" => SessionField::Absent,
        Some(v) => match unquote::<serde_json::Error>(v.get()) {
            Ok(s) => SessionField::Id(s),
            Err(_) => SessionField::Invalid,
        },
    }
}

/// The session a message concerns: `params.sessionId` of a request or
/// notification, `result.sessionId` of a response, none for an error.
pub fn session_of<'r>(message: &'r Message<'_>) -> SessionField<'r> {
    match message {
        Message::Request(r) => session_field(r.params.as_ref()),
        Message::Notification(n) => session_field(n.params.as_ref()),
        Message::Response(r) => session_field(Some(&r.result)),
        Message::Error(_) => SessionField::Absent,
    }
}

/// Where a server→client message goes in the Streamable HTTP profile: the
/// connection's event stream, or the stream of one session.
///
/// The WebSocket profile has one socket and ignores it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stream {
    /// The connection-scoped stream (`GET` with `Acp-Connection-Id` only):
    /// answers to requests without a session (`initialize`, `session/new`,
    /// `session/list`, and `session/load`, whose client may not have the
    /// session's stream open yet), and agent messages naming no session.
    Connection,
    /// The stream of one session (`GET` with `Acp-Session-Id` too):
    /// `session/update`s, the agent's requests for the session, and answers
    /// to the session's requests.
    Session(String),
}

/// Where the answer to a client request goes: the session stream of its
/// session, except for `session/load`, answered on the connection stream.
pub fn answer_stream(method: &str, session: Option<&str>) -> Stream {
    match session {
        Some(s) if method != names::SESSION_LOAD => Stream::Session(s.into()),
        _ => Stream::Connection,
    }
}

fn decode(text: &str) -> Result<Message<'_>, RemoteError> {
    Message::decode(text).map_err(|e| match e {
        MessageError::NotJson { .. } => RemoteError::NotJson,
        MessageError::Batch { .. } => RemoteError::Batch,
        MessageError::InvalidEnvelope { reason } => RemoteError::InvalidMessage { reason },
        _ => RemoteError::InvalidMessage {
            reason: "invalid envelope",
        },
    })
}

fn check_id_len(id: &RequestId<'_>, limit: usize) -> Result<(), RemoteError> {
    match id {
        RequestId::Str(s) if s.len() > limit => Err(RemoteError::IdTooLong {
            len: s.len(),
            limit,
        }),
        _ => Ok(()),
    }
}

fn check_session_len(session: Option<&str>, limit: usize) -> Result<(), RemoteError> {
    match session {
        Some(s) if s.len() > limit => Err(RemoteError::IdTooLong {
            len: s.len(),
            limit,
        }),
        _ => Ok(()),
    }
}

/// What the rules make of one inbound message that may go on.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Checked<'a> {
    /// Pass it on (to the agent, or to a [`Router`](super::Router)).
    Forward(Message<'a>),
    /// Drop it silently: a response before `initialize`, which answers
    /// nothing the server sent.
    Ignore,
}

/// The per-connection rules of the WebSocket profile, one call per text
/// frame: the first message must be an `initialize` request with an id, a
/// second `initialize` is refused, a batch gets one `-32600`, ids are
/// bounded.
///
/// On `Err`, answer with [`RemoteError::reply`] if it has one, and close
/// the socket with [`RemoteError::close_code`] if it has one; otherwise go
/// on. The gate's state is unchanged by an error.
///
/// ```
/// use acp_codec::remote::{Checked, CloseCode, Gate, BATCH_ERROR};
///
/// let mut gate = Gate::new();
/// // A batch is answered, not processed, and the socket stays open.
/// let err = gate.check(r#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#).unwrap_err();
/// assert_eq!(err.reply().as_deref(), Some(BATCH_ERROR));
/// assert_eq!(err.close_code(), None);
///
/// let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
/// assert!(matches!(gate.check(init), Ok(Checked::Forward(_))));
/// assert!(gate.is_initialized());
/// // Once is enough: the second is answered with an error carrying its id.
/// let err = gate.check(init).unwrap_err();
/// assert!(err.reply().unwrap().starts_with(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32600"#));
///
/// // Before initialize, anything else closes the socket.
/// let err = Gate::new().check(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#).unwrap_err();
/// assert_eq!(err.close_code(), Some(CloseCode::PROTOCOL_ERROR));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    initialized: bool,
    max_id_len: usize,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    /// A gate for a new connection, with the default id limit
    /// ([`DEFAULT_MAX_ID_LENGTH`]).
    pub const fn new() -> Self {
        Self {
            initialized: false,
            max_id_len: DEFAULT_MAX_ID_LENGTH,
        }
    }

    /// Sets the longest session id or string request id accepted.
    #[must_use]
    pub const fn with_max_id_len(mut self, limit: usize) -> Self {
        self.max_id_len = limit;
        self
    }

    /// Whether the connection's `initialize` went through.
    pub const fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// Marks the connection initialized without a message, for a
    /// connection that the Streamable HTTP profile created from its
    /// `initialize` `POST` ([`check_post`]).
    pub fn set_initialized(&mut self) {
        self.initialized = true;
    }

    /// Checks one inbound message (the text of one WebSocket frame).
    ///
    /// # Errors
    ///
    /// Text that is not JSON, a batch, JSON that is not JSON-RPC, a first
    /// message that is not `initialize` (or has no id), a second
    /// `initialize`, an id longer than the limit. See [`RemoteError`] for
    /// what to answer.
    pub fn check<'a>(&mut self, text: &'a str) -> Result<Checked<'a>, RemoteError> {
        let message = decode(text)?;
        if !self.initialized {
            let request = match message {
                Message::Response(_) | Message::Error(_) => return Ok(Checked::Ignore),
                Message::Notification(n) => {
                    return Err(RemoteError::NotInitialized {
                        method: n.method.into_owned(),
                    })
                }
                Message::Request(r) => r,
            };
            check_initialize(&request)?;
            check_id_len(&request.id, self.max_id_len)?;
            self.initialized = true;
            return Ok(Checked::Forward(Message::Request(request)));
        }
        self.check_open(message).map(Checked::Forward)
    }

    fn check_open<'a>(&self, message: Message<'a>) -> Result<Message<'a>, RemoteError> {
        match &message {
            Message::Request(r) => {
                if r.method == names::INITIALIZE {
                    return Err(RemoteError::AlreadyInitialized {
                        id: r.id.to_owned_id(),
                    });
                }
                check_id_len(&r.id, self.max_id_len)?;
                check_session_len(session_field(r.params.as_ref()).id(), self.max_id_len)?;
            }
            Message::Notification(n) => {
                check_session_len(session_field(n.params.as_ref()).id(), self.max_id_len)?;
            }
            Message::Response(_) | Message::Error(_) => {}
        }
        Ok(message)
    }
}

fn check_initialize(request: &Request<'_>) -> Result<(), RemoteError> {
    if request.method != names::INITIALIZE {
        return Err(RemoteError::NotInitialized {
            method: request.method.clone().into_owned(),
        });
    }
    if request.id == RequestId::Null {
        return Err(RemoteError::InitializeWithoutId);
    }
    Ok(())
}

/// What a Streamable HTTP `POST` body is, once the rules accept it.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Post<'a> {
    /// An `initialize` request without `Acp-Connection-Id`: create a
    /// connection, forward the request, and answer the `POST` with `200`,
    /// the agent's JSON response as the body, and the new connection's id
    /// in [`HEADER_CONNECTION_ID`].
    Initialize(Request<'a>),
    /// A message for the connection named by `Acp-Connection-Id` (answer
    /// `404` if it is unknown, else forward it and answer `202`).
    Message {
        /// The message.
        message: Message<'a>,
        /// The session it concerns (`Acp-Session-Id`, else
        /// `params.sessionId`), for a request or notification.
        session: Option<Cow<'a, str>>,
    },
}

/// The Streamable HTTP profile's rules for one `POST` body, given its
/// `Acp-Connection-Id` and `Acp-Session-Id` headers:
///
/// - a batch is answered `400` with [`BATCH_ERROR`] as the body;
/// - an `initialize` request must come without a connection id (it makes
///   one) and with a non-null id;
/// - anything else needs a connection id;
/// - a session-scoped method ([`is_session_scoped`]), or params naming a
///   session, needs `Acp-Session-Id`, equal to `params.sessionId` when both
///   are present;
/// - ids are at most `max_id_len` bytes.
///
/// Responses from the client (to the agent's requests) pass here; check
/// their `Acp-Session-Id` with [`check_response_session`] against the
/// session the request went out on ([`Router::request_session`]).
///
/// For an `initialize`, the agent's answer comes back from the router as an
/// [`Out::Client`] on [`Stream::Connection`] with the request's id: send it
/// as the `POST`'s body rather than on the event stream.
///
/// [`Router::request_session`]: super::Router::request_session
/// [`Out::Client`]: super::Out::Client
///
/// ```
/// use acp_codec::remote::{check_post, Post, RemoteError, DEFAULT_MAX_ID_LENGTH as MAX};
///
/// let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
/// assert!(matches!(check_post(init, None, None, MAX), Ok(Post::Initialize(_))));
///
/// let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;
/// assert_eq!(check_post(prompt, Some("c1"), None, MAX).unwrap_err(), RemoteError::MissingSessionId);
/// assert_eq!(check_post(prompt, Some("c1"), Some("s2"), MAX).unwrap_err(), RemoteError::MismatchedSessionId);
/// let Ok(Post::Message { session, .. }) = check_post(prompt, Some("c1"), Some("s1"), MAX) else { panic!() };
/// assert_eq!(session.as_deref(), Some("s1"));
/// ```
///
/// # Errors
///
/// The [`RemoteError`] to answer the `POST` with ([`RemoteError::http_status`],
/// and [`RemoteError::reply`] as a JSON body when it has one, else its
/// display text as `text/plain`).
pub fn check_post<'a>(
    body: &'a str,
    connection_id: Option<&str>,
    session_header: Option<&'a str>,
    max_id_len: usize,
) -> Result<Post<'a>, RemoteError> {
    let message = decode(body)?;
    if let Message::Request(r) = &message {
        if r.method == names::INITIALIZE {
            if connection_id.is_some() {
                return Err(RemoteError::AlreadyInitialized {
                    id: r.id.to_owned_id(),
                });
            }
            check_initialize(r)?;
            check_id_len(&r.id, max_id_len)?;
            let Message::Request(r) = message else {
                return Err(RemoteError::InitializeWithoutId);
            };
            return Ok(Post::Initialize(r));
        }
    }
    if connection_id.is_none() {
        return Err(RemoteError::MissingConnectionId);
    }
    let (method, params, id) = match &message {
        Message::Request(r) => (&*r.method, r.params.as_ref(), Some(&r.id)),
        Message::Notification(n) => (&*n.method, n.params.as_ref(), None),
        Message::Response(_) | Message::Error(_) => {
            return Ok(Post::Message {
                message,
                session: None,
            })
        }
    };
    if let Some(id) = id {
        check_id_len(id, max_id_len)?;
    }
    let from_params = match session_field(params) {
        SessionField::Id(s) => Some(s.into_owned()),
        SessionField::Absent | SessionField::Invalid => None,
    };
    if (is_session_scoped(method) || from_params.is_some()) && session_header.is_none() {
        return Err(RemoteError::MissingSessionId);
    }
    if let (Some(h), Some(p)) = (session_header, from_params.as_deref()) {
        if h != p {
            return Err(RemoteError::MismatchedSessionId);
        }
    }
    let session = match (session_header, from_params) {
        (Some(h), _) => Some(Cow::Borrowed(h)),
        (None, p) => p.map(Cow::Owned),
    };
    check_session_len(session.as_deref(), max_id_len)?;
    Ok(Post::Message { message, session })
}

/// The Streamable HTTP rule for a client's response to an agent request
/// that went out on a session's stream (`expected`): the `POST` must name
/// that session in `Acp-Session-Id`. A request sent on the connection's
/// stream (`expected` is `None`) takes any header.
///
/// ```
/// use acp_codec::remote::{check_response_session, RemoteError};
///
/// assert_eq!(check_response_session(Some("s1"), Some("s1")), Ok(()));
/// assert_eq!(check_response_session(Some("s1"), None), Err(RemoteError::MissingSessionId));
/// assert_eq!(check_response_session(Some("s1"), Some("s2")), Err(RemoteError::MismatchedSessionId));
/// assert_eq!(check_response_session(None, Some("s2")), Ok(()));
/// ```
///
/// # Errors
///
/// [`RemoteError::MissingSessionId`] or [`RemoteError::MismatchedSessionId`],
/// answered `400`.
pub fn check_response_session(
    expected: Option<&str>,
    header: Option<&str>,
) -> Result<(), RemoteError> {
    match (expected, header) {
        (Some(_), None) => Err(RemoteError::MissingSessionId),
        (Some(e), Some(h)) if e != h => Err(RemoteError::MismatchedSessionId),
        _ => Ok(()),
    }
}

/// The error for a message over the size limit, carrying the request id
/// read from its first bytes (`head`) when one is there, so the request
/// can be answered before the socket closes with `1009`.
///
/// ```
/// use acp_codec::remote::{oversize, CloseCode};
///
/// let head = br#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"prompt":[{"#;
/// let err = oversize(head, 40_000_000, 33_554_432);
/// assert_eq!(err.close_code(), Some(CloseCode::MESSAGE_TOO_BIG));
/// assert!(err.reply().unwrap().starts_with(r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32600"#));
/// ```
pub fn oversize(head: &[u8], seen: usize, limit: usize) -> RemoteError {
    let p = peek::peek(head);
    let id = match p.id {
        Some(id) if p.is_request => Some(match id {
            PeekedId::Null => RequestId::Null,
            PeekedId::Number(n) => RequestId::Number(n),
            PeekedId::Str(s) => RequestId::Str(Cow::Owned(s.as_str().into())),
        }),
        _ => None,
    };
    RemoteError::TooLarge { seen, limit, id }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(text: &str) -> SessionField<'static> {
        let raw = RawJson::from_text(text).unwrap();
        match session_field(Some(&raw)) {
            SessionField::Id(s) => SessionField::Id(Cow::Owned(s.into_owned())),
            SessionField::Absent => SessionField::Absent,
            SessionField::Invalid => SessionField::Invalid,
        }
    }

    #[test]
    fn session_field_forms() {
        assert_eq!(field("[]"), SessionField::Absent);
        assert_eq!(field("null"), SessionField::Absent);
        assert_eq!(field(r#"{"sessionId":null}"#), SessionField::Absent);
        assert_eq!(field(r#"{"sessionId":"a\"b"}"#).id(), Some("a\"b"));
        assert_eq!(field(r#"{"sessionId":["s"]}"#), SessionField::Invalid);
        // Two of them: which one a peer reads is not certain, so neither.
        assert_eq!(
            field(r#"{"sessionId":"a","sessionId":"b"}"#),
            SessionField::Invalid
        );
        // Borrowed when there is nothing to unescape.
        let raw = RawJson::from_text(r#"{"x":1,"sessionId":"s1"}"#).unwrap();
        assert!(matches!(
            session_field(Some(&raw)),
            SessionField::Id(Cow::Borrowed("s1"))
        ));
    }

    #[test]
    fn close_codes_and_streams() {
        use alloc::string::ToString;
        assert_eq!(CloseCode(4000).to_string(), "4000");
        assert_eq!(CloseCode::POLICY_VIOLATION.name(), Some("policy violation"));
        assert_eq!(answer_stream("session/load", Some("s")), Stream::Connection);
        assert_eq!(
            answer_stream("session/prompt", Some("s")),
            Stream::Session("s".into())
        );
        assert_eq!(answer_stream("session/list", None), Stream::Connection);
        assert!(is_reattach("session/resume") && !is_reattach("session/new"));
        assert!(is_session_scoped("session/set_model") && is_session_scoped("session/fork"));
    }

    #[test]
    fn gate_state_survives_errors() {
        let mut gate = Gate::new();
        assert!(gate.check("[]").is_err());
        assert!(gate
            .check(r#"{"jsonrpc":"2.0","id":1,"method":"session/new"}"#)
            .is_err());
        assert!(!gate.initialized);
        gate.set_initialized();
        assert!(matches!(
            gate.check(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#),
            Ok(Checked::Forward(_))
        ));
        // Responses pass once initialized (answers to the agent's requests).
        assert!(matches!(
            gate.check(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Checked::Forward(_))
        ));
    }
}
