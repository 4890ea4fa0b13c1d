//! The error of the remote transport layer.

use core::fmt;

use alloc::string::String;

use super::wire::{
    CloseCode, BATCH_ERROR, HEADER_CONNECTION_ID, HEADER_SESSION_ID, INVALID_REQUEST, PARSE_ERROR,
};
use crate::acp::{encode_error, EnvelopeFault, RequestId, RpcError};
use crate::ErrorCode;

/// A message the remote transport's rules refuse, with what to answer.
///
/// Each variant knows the JSON-RPC code ([`code`](Self::code)), the HTTP
/// status of the Streamable HTTP profile ([`http_status`](Self::http_status))
/// and, where the WebSocket profile closes the socket for it, the close
/// code ([`close_code`](Self::close_code)). Nothing is left half done: the
/// state that reported it (a [`Gate`](super::Gate)) is unchanged and takes
/// the next message.
///
/// ```
/// use acp_codec::remote::{CloseCode, Gate, RemoteError};
///
/// let mut gate = Gate::new();
/// let err = gate
///     .check(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#)
///     .unwrap_err();
/// assert_eq!(err, RemoteError::NotInitialized { method: "session/new".into() });
/// assert_eq!(err.to_string(), "the first message must be initialize, got session/new");
/// assert_eq!(err.close_code(), Some(CloseCode::PROTOCOL_ERROR));
/// assert_eq!(err.http_status(), 400);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteError {
    /// The text is not JSON.
    NotJson,
    /// A JSON array: ACP has no batches. Answered with one `-32600` error
    /// whose id is `null` ([`BATCH_ERROR`](super::BATCH_ERROR)); its
    /// elements are not looked at.
    Batch,
    /// JSON that is not a JSON-RPC message (a scalar, or an object without
    /// a valid envelope).
    InvalidMessage {
        /// What is wrong with the envelope; `None` when the envelope is
        /// fine but its params or result are not (the transport's own
        /// checks never decode those, so they do not raise it today).
        fault: Option<EnvelopeFault>,
    },
    /// A connection's first message is not an `initialize` request.
    NotInitialized {
        /// The method it had (empty for a response).
        method: String,
    },
    /// An `initialize` request with no id or a `null` id.
    InitializeWithoutId,
    /// A second `initialize` on a connection that has one (or an
    /// `initialize` `POST` that names a connection).
    AlreadyInitialized {
        /// Its id, to answer it with.
        id: RequestId<'static>,
    },
    /// A Streamable HTTP request without the `Acp-Connection-Id` header.
    MissingConnectionId,
    /// A session-scoped message without the `Acp-Session-Id` header.
    MissingSessionId,
    /// `Acp-Session-Id` names another session than the message's params.
    MismatchedSessionId,
    /// A session or request id longer than the limit.
    IdTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// A message over the size limit.
    TooLarge {
        /// Bytes seen.
        seen: usize,
        /// The limit in bytes.
        limit: usize,
        /// The request's id, when its first bytes hold one.
        id: Option<RequestId<'static>>,
    },
}

impl RemoteError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::NotJson => ErrorCode::PARSE_ERROR,
            Self::IdTooLong { .. } => ErrorCode::INVALID_PARAMS,
            _ => ErrorCode::INVALID_REQUEST,
        }
    }

    /// The HTTP status the Streamable HTTP profile answers a `POST` with:
    /// `413` for a body over the limit, `501` (Not Implemented) for a batch,
    /// as the transport requires, `400` for everything else.
    pub const fn http_status(&self) -> u16 {
        match self {
            Self::TooLarge { .. } => 413,
            Self::Batch => 501,
            _ => 400,
        }
    }

    /// The WebSocket close code, for the errors the WebSocket profile closes
    /// the socket for: `1002` when the first message is not a usable
    /// `initialize`, `1008` for an over-long id, `1009` for a message over
    /// the limit. The others are answered and the socket stays open.
    pub const fn close_code(&self) -> Option<CloseCode> {
        match self {
            Self::NotInitialized { .. } | Self::InitializeWithoutId => {
                Some(CloseCode::PROTOCOL_ERROR)
            }
            Self::IdTooLong { .. } => Some(CloseCode::POLICY_VIOLATION),
            Self::TooLarge { .. } => Some(CloseCode::MESSAGE_TOO_BIG),
            _ => None,
        }
    }

    /// The JSON-RPC message to answer with (one line, no `\n`), when the
    /// peer can be answered: `-32700` for text that is not JSON, one
    /// `-32600` with `id: null` for a batch or a message that is not
    /// JSON-RPC, an error with the request's id for a second `initialize`
    /// and for an oversized request whose id was read. `None` when the
    /// answer is a close code or an HTTP status alone.
    pub fn reply(&self) -> Option<String> {
        let id = match self {
            Self::NotJson => return Some(PARSE_ERROR.into()),
            Self::Batch => return Some(BATCH_ERROR.into()),
            Self::InvalidMessage { .. } => return Some(INVALID_REQUEST.into()),
            Self::AlreadyInitialized { id } => id,
            Self::TooLarge { id: Some(id), .. } => id,
            _ => return None,
        };
        let mut line = alloc::vec::Vec::new();
        let error = RpcError::new(self.code(), alloc::format!("{self}"));
        encode_error(id, &error, &mut line).ok()?;
        line.pop();
        String::from_utf8(line).ok()
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson => f.write_str("the message is not json"),
            Self::Batch => f.write_str("json-rpc batches are not supported"),
            Self::InvalidMessage { fault: Some(fault) } => {
                write!(f, "not a json-rpc message: {}", fault.as_str())
            }
            Self::InvalidMessage { fault: None } => {
                f.write_str("not a json-rpc message: invalid params or result")
            }
            Self::NotInitialized { method } if method.is_empty() => {
                f.write_str("the first message must be initialize, got a response")
            }
            Self::NotInitialized { method } => {
                write!(f, "the first message must be initialize, got {method}")
            }
            Self::InitializeWithoutId => f.write_str("the initialize request must have an id"),
            Self::AlreadyInitialized { .. } => {
                f.write_str("initialize is not allowed on an initialized connection")
            }
            Self::MissingConnectionId => write!(f, "missing {HEADER_CONNECTION_ID} header"),
            Self::MissingSessionId => write!(f, "missing {HEADER_SESSION_ID} header"),
            Self::MismatchedSessionId => write!(
                f,
                "the {HEADER_SESSION_ID} header does not match params.sessionId"
            ),
            Self::IdTooLong { len, limit } => {
                write!(f, "id of {len} bytes exceeds the {limit}-byte limit")
            }
            Self::TooLarge { seen, limit, .. } => {
                write!(f, "message of {seen} bytes exceeds the {limit}-byte limit")
            }
        }
    }
}

impl core::error::Error for RemoteError {}
