//! The Streamable HTTP profile's rules for a `POST`: [`check_post`],
//! [`check_response_session`], and [`oversize`] for either profile.

use alloc::borrow::Cow;

use super::gate::check_initialize;
use super::{
    check_id_len, check_session_len, decode, is_session_scoped, session_field, SessionField,
};
use crate::acp::{names, Message, Request, RequestId};
use crate::framing::peek;
use crate::remote::RemoteError;
use crate::PeekedId;

/// What a Streamable HTTP `POST` body is, once the rules accept it.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Post<'a> {
    /// An `initialize` request without `Acp-Connection-Id`: create a
    /// connection, forward the request, and answer the `POST` with `200`,
    /// the agent's JSON response as the body, and the new connection's id
    /// in [`HEADER_CONNECTION_ID`](super::HEADER_CONNECTION_ID).
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
/// - a batch is answered `501` with [`BATCH_ERROR`](super::BATCH_ERROR) as the body;
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
/// [`Out::Client`] on [`Stream::Connection`](super::Stream::Connection) with the request's id: send it
/// as the `POST`'s body rather than on the event stream.
///
/// [`Router::request_session`]: crate::remote::parts::Router::request_session
/// [`Out::Client`]: crate::remote::parts::Out::Client
///
/// ```
/// use acp_codec::remote::parts::{check_post, Post};
/// use acp_codec::remote::{RemoteError, DEFAULT_MAX_ID_LENGTH as MAX};
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
    check_post_message(decode(body)?, connection_id, session_header, max_id_len)
}

/// [`check_post`] for a body its caller decoded already.
pub(crate) fn check_post_message<'a>(
    message: Message<'a>,
    connection_id: Option<&str>,
    session_header: Option<&'a str>,
    max_id_len: usize,
) -> Result<Post<'a>, RemoteError> {
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
/// let reply = err.reply().unwrap();
/// assert_eq!((reply.id.to_string(), reply.error.code.0), ("9".to_owned(), -32600));
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
