//! The error of the remote transport layer.

use core::fmt;

use alloc::string::String;

use super::wire::{CloseCode, HEADER_CONNECTION_ID, HEADER_SESSION_ID};
use crate::acp::{encode_error, EnvelopeFault, RequestId, RpcError};
use crate::{EncodeError, ErrorCode};

/// A message the remote transport's rules refuse, with what to answer.
///
/// Each variant knows the JSON-RPC code ([`code`](Self::code)), the HTTP
/// status of the Streamable HTTP profile ([`http_status`](Self::http_status))
/// and, where the WebSocket profile closes the socket for it, the close
/// code ([`close_code`](Self::close_code)). Nothing is left half done: the
/// state that reported it (a connection's gate) is unchanged and takes
/// the next message.
///
/// ```
/// use acp_codec::remote::{oversize, CloseCode, RemoteError};
///
/// let head = br#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"#;
/// let err = oversize(head, 40_000_000, 33_554_432);
/// assert!(matches!(err, RemoteError::TooLarge { seen: 40_000_000, .. }));
/// assert_eq!(err.close_code(), Some(CloseCode::MESSAGE_TOO_BIG));
/// assert_eq!(err.http_status(), 413);
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

    /// The JSON-RPC error to answer with, when the peer can be answered:
    /// `-32700` with `id: null` for text that is not JSON
    /// ([`PARSE_ERROR`](super::PARSE_ERROR)), one `-32600` with `id: null`
    /// for a batch ([`BATCH_ERROR`](super::BATCH_ERROR)) or a message that is
    /// not JSON-RPC ([`INVALID_REQUEST`](super::INVALID_REQUEST)), an error
    /// with the request's id for a second `initialize` and for an oversized
    /// request whose id was read. `None` when the answer is a close code or
    /// an HTTP status alone.
    ///
    /// ```
    /// use acp_codec::remote::{RemoteError, BATCH_ERROR};
    ///
    /// let reply = RemoteError::Batch.reply().unwrap();
    /// assert_eq!(reply.error.code.0, -32600);
    /// let mut line = Vec::new();
    /// reply.encode(&mut line)?;
    /// assert_eq!(line, [BATCH_ERROR.as_bytes(), b"\n"].concat());
    /// # Ok::<(), acp_codec::EncodeError>(())
    /// ```
    pub fn reply(&self) -> Option<Reply> {
        let null = |code, message: &str| {
            Some(Reply {
                id: RequestId::Null,
                error: RpcError::new(code, String::from(message)),
            })
        };
        let id = match self {
            Self::NotJson => return null(ErrorCode::PARSE_ERROR, "Parse error"),
            Self::Batch => {
                return null(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid request: JSON-RPC batches are not supported",
                )
            }
            Self::InvalidMessage { .. } => {
                return null(ErrorCode::INVALID_REQUEST, "Invalid request")
            }
            Self::AlreadyInitialized { id } => id,
            Self::TooLarge { id: Some(id), .. } => id,
            _ => return None,
        };
        Some(Reply {
            id: id.clone(),
            error: RpcError::new(self.code(), alloc::format!("{self}")),
        })
    }
}

/// The JSON-RPC error answering a [`RemoteError`] (see
/// [`RemoteError::reply`]): the id to answer (`null` when none could be
/// read) and the error.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Reply {
    /// The id of the request answered.
    pub id: RequestId<'static>,
    /// The error.
    pub error: RpcError<'static>,
}

impl Reply {
    /// Appends the reply to `out` as one JSON-RPC error response line,
    /// `\n` included; returns the bytes appended.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when the error cannot be encoded (its `data`, which
    /// the replies of [`RemoteError::reply`] never carry); `out` is left as
    /// it was.
    pub fn encode(&self, out: &mut alloc::vec::Vec<u8>) -> Result<usize, EncodeError> {
        encode_error(&self.id, &self.error, out)
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
