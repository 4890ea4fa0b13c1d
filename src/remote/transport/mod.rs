//! The rules of ACP's Streamable HTTP & WebSocket transport, as the official
//! TypeScript SDK 2.4 applies them, for a server to call per message.

use alloc::borrow::Cow;
use alloc::string::String;

use super::error::RemoteError;

mod gate;
mod peek;
mod post;

pub use super::wire::{
    CloseCode, BATCH_ERROR, DEFAULT_MAX_BACKLOG_BYTES, DEFAULT_MAX_BUFFERED_SESSION_STREAMS,
    DEFAULT_MAX_ID_LENGTH, DEFAULT_MAX_OUTPUT_STALL, ENDPOINT_PATH, EVENT_STREAM_MIME_TYPE,
    HEADER_CONNECTION_ID, HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, INVALID_REQUEST,
    JSON_MIME_TYPE, PARSE_ERROR,
};
use crate::acp::MessageError;
use crate::acp::{names, Message, RawJson, RequestId, SessionMember};
use crate::json::scan::Members;
use crate::json::unescape::unquote;
pub use gate::{Checked, Gate};
pub(crate) use peek::{members, pass_over, peek, peek_passed, Passed, PEEK_FROM};
pub(crate) use post::check_post_message;
pub use post::{check_post, check_response_session, oversize, Post};

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
    super::routing::V1.is_session_scoped(method)
}

/// Whether a method reattaches a session after its client lost it
/// (`session/load`, `session/resume`): the SDK's client clears a session's
/// failure on these, and the server's replay hands
/// over what the session missed.
pub fn is_reattach(method: &str) -> bool {
    super::routing::V1.is_reattach(method)
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
    raw.map_or(SessionField::Absent, |raw| session_in(raw.get()))
}

/// [`session_field`] of the message `text` decoded to `message`, read
/// from `text` itself (so it lives as long as the text, and the message
/// can move on): `None` when the message's params are not a slice of
/// `text`, or it is not a request or a notification.
fn params_session<'t>(text: &'t str, message: &Message<'_>) -> Option<SessionField<'t>> {
    let params = match message {
        Message::Request(r) => r.params.as_ref(),
        Message::Notification(n) => n.params.as_ref(),
        Message::Response(_) | Message::Error(_) => return None,
    };
    let Some(params) = params else {
        return Some(SessionField::Absent);
    };
    let part = params.get();
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let range = start..start.checked_add(part.len())?;
    text.get(range).map(session_in)
}

/// The field the member the peek's walk found holds.
fn field_of(member: SessionMember<'_>) -> SessionField<'_> {
    match member {
        SessionMember::Absent | SessionMember::One("null") => SessionField::Absent,
        SessionMember::One(v) => match unquote::<serde_json::Error>(v) {
            Ok(s) => SessionField::Id(s),
            Err(_) => SessionField::Invalid,
        },
        SessionMember::Repeated => SessionField::Invalid,
    }
}

/// [`session_field`] of raw JSON's text.
fn session_in(text: &str) -> SessionField<'_> {
    // Raw JSON is valid JSON: the peek's walk passes over its values by
    // their structure alone (a 5 MiB tool output costs a `memchr`), and
    // tells the member unless a key is escaped.
    if let Some(member) = peek::session_member(text) {
        return field_of(member);
    }
    // One walk over the members with the crate's scanner: values are
    // skipped (never unescaped); every `sessionId` is looked at (escaped
    // keys too), so a repeated one is seen.
    let Ok(members) = Members::new(text) else {
        return SessionField::Absent;
    };
    let mut found = None;
    for member in members {
        let Ok((key, value)) = member else {
            return SessionField::Invalid;
        };
        let is_session = key == "\"sessionId\""
            || (key.contains('\\')
                && unquote::<serde_json::Error>(key).is_ok_and(|k| k == "sessionId"));
        if !is_session {
            continue;
        }
        if found.is_some() {
            return SessionField::Invalid;
        }
        found = Some(value);
    }
    match found {
        None | Some("null") => SessionField::Absent,
        Some(v) => match unquote::<serde_json::Error>(v) {
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
    /// `session/list`), a failed `session/load`'s error, and agent
    /// messages naming no session.
    Connection,
    /// The stream of one session (`GET` with `Acp-Session-Id` too):
    /// `session/update`s, the agent's requests for the session, and answers
    /// to the session's requests (a `session/load`'s result after the
    /// history it replays).
    Session(String),
}

/// Where the result of a client request about `session` goes: the
/// session's stream, the connection stream for a request without one.
///
/// A `session/load`'s result goes on the session's stream too, behind
/// the history the agent replays there before answering: one stream is
/// read in order, so the client has the whole history when the answer
/// comes. (On the connection stream nothing would order the two, and a
/// client could take the answer for the history's end while part of it
/// is still on the way.) Its error goes elsewhere:
/// [`error_stream`].
///
/// ```
/// use acp_codec::remote::{answer_stream, Stream};
///
/// // A `session/load` of s1, answered.
/// assert_eq!(answer_stream(Some("s1")), Stream::Session("s1".into()));
/// // A `session/new`.
/// assert_eq!(answer_stream(None), Stream::Connection);
/// ```
pub fn answer_stream(session: Option<&str>) -> Stream {
    match session {
        Some(s) => Stream::Session(s.into()),
        None => Stream::Connection,
    }
}

/// Where an error answering a client's `method` request about `session`
/// goes: as its result ([`answer_stream`]), except for `session/load`,
/// whose error goes on the connection stream. A load that failed leaves
/// its session unattached (the server may refuse a `GET` of its stream
/// then), and it has no history to be ordered behind.
///
/// ```
/// use acp_codec::remote::{error_stream, Stream};
///
/// assert_eq!(error_stream("session/load", Some("s1")), Stream::Connection);
/// assert_eq!(error_stream("session/prompt", Some("s1")), Stream::Session("s1".into()));
/// ```
pub fn error_stream(method: &str, session: Option<&str>) -> Stream {
    match session {
        Some(s) if method != names::SESSION_LOAD => Stream::Session(s.into()),
        _ => Stream::Connection,
    }
}

pub(crate) fn decode(text: &str) -> Result<Message<'_>, RemoteError> {
    decode_routed(text).map(|(message, _)| message)
}

/// What [`decode_routed`] read of a client message's params besides the
/// message.
#[derive(Debug, Default)]
pub(crate) struct Routing<'t> {
    /// Its [`session_field`] (a request's or a notification's).
    pub(crate) session: Option<SessionField<'t>>,
    /// The raw values of its params' `sessionId` and `_meta`, when the
    /// peek's walk read them (each at most once).
    pub(crate) head: Option<[Option<&'t str>; 2]>,
}

/// [`decode`], and what the same walk read of a request's or a
/// notification's params: a long message's by the peek, a short one's by
/// one walk of its params' text (no head then). Its params are walked
/// once.
pub(crate) fn decode_routed(text: &str) -> Result<(Message<'_>, Routing<'_>), RemoteError> {
    // A long message is read up to the members the server routes on.
    if text.len() >= PEEK_FROM {
        if let Some(p) = peek(text) {
            let routing = match p.message {
                Message::Request(_) | Message::Notification(_) => Routing {
                    head: plain_head(&p.session, &p.meta),
                    session: Some(field_of(p.session)),
                },
                Message::Response(_) | Message::Error(_) => Routing::default(),
            };
            return Ok((p.message, routing));
        }
    }
    let message = decode_full(text)?;
    let routing = Routing {
        session: params_session(text, &message),
        head: None,
    };
    Ok((message, routing))
}

/// The raw values of two members each found at most once.
fn plain_head<'t>(
    session: &SessionMember<'t>,
    meta: &SessionMember<'t>,
) -> Option<[Option<&'t str>; 2]> {
    let raw = |m: &SessionMember<'t>| match m {
        SessionMember::Absent => Some(None),
        SessionMember::One(v) => Some(Some(*v)),
        SessionMember::Repeated => None,
    };
    Some([raw(session)?, raw(meta)?])
}

/// [`Message::decode`], its errors the transport's.
fn decode_full(text: &str) -> Result<Message<'_>, RemoteError> {
    Message::decode(text).map_err(|e| match e {
        MessageError::NotJson { .. } => RemoteError::NotJson,
        MessageError::Batch { .. } => RemoteError::Batch,
        MessageError::InvalidEnvelope { reason } => RemoteError::InvalidMessage {
            fault: Some(reason),
        },
        MessageError::InvalidParams { .. } | MessageError::InvalidResult { .. } => {
            RemoteError::InvalidMessage { fault: None }
        }
    })
}

pub(super) fn check_id_len(id: &RequestId<'_>, limit: usize) -> Result<(), RemoteError> {
    match id {
        RequestId::Str(s) if s.len() > limit => Err(RemoteError::IdTooLong {
            len: s.len(),
            limit,
        }),
        _ => Ok(()),
    }
}

pub(super) fn check_session_len(session: Option<&str>, limit: usize) -> Result<(), RemoteError> {
    match session {
        Some(s) if s.len() > limit => Err(RemoteError::IdTooLong {
            len: s.len(),
            limit,
        }),
        _ => Ok(()),
    }
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

    /// The member walk against `serde_json::Value` (an independent
    /// reader) on objects without a repeated key.
    #[test]
    fn session_field_matches_serde_json() {
        let cases = [
            r#"{}"#,
            r#"{"sessionId":"s1"}"#,
            r#"{"prompt":[{"type":"text","text":"a \"sessionId\": \"x\""}],"sessionId":"s2"}"#,
            r#"{"session\u0049d":"s3"}"#,
            r#"{"sessionId":"a\nb\u00e9"}"#,
            r#"{"nested":{"sessionId":"no"},"x":1}"#,
            r#"{"sessionId":{"a":1}}"#,
            r#"{"sessionId":true}"#,
            r#" { "sessionId" : "s4" } "#,
        ];
        for text in cases {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            let oracle = match v.get("sessionId") {
                None | Some(serde_json::Value::Null) => SessionField::Absent,
                Some(serde_json::Value::String(s)) => SessionField::Id(Cow::Owned(s.clone())),
                Some(_) => SessionField::Invalid,
            };
            assert_eq!(field(text), oracle, "{text}");
        }
    }

    #[test]
    fn close_codes_and_streams() {
        use alloc::string::ToString;
        assert_eq!(CloseCode(4000).to_string(), "4000");
        assert_eq!(CloseCode::POLICY_VIOLATION.name(), Some("policy violation"));
        assert_eq!(answer_stream(Some("s")), Stream::Session("s".into()));
        assert_eq!(answer_stream(None), Stream::Connection);
        assert_eq!(error_stream("session/load", Some("s")), Stream::Connection);
        assert_eq!(
            error_stream("session/prompt", Some("s")),
            Stream::Session("s".into())
        );
        assert_eq!(error_stream("session/list", None), Stream::Connection);
        assert!(is_reattach("session/resume") && !is_reattach("session/new"));
        assert!(is_session_scoped("session/set_model") && is_session_scoped("session/fork"));
    }
}
