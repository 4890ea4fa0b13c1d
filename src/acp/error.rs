//! The ACP layer's errors: decoding a message, tracking requests.

use core::fmt;

use crate::framing::EncodeError;
use crate::ErrorCode;

/// An error decoding an ACP message (a JSON-RPC 2.0 envelope and its
/// typed params or result).
///
/// Decoding keeps no state: after any of these the next line decodes.
#[derive(Debug)]
#[non_exhaustive]
pub enum MessageError {
    /// The line is not JSON (agents print stray text on stdout).
    NotJson {
        /// Line of the error in the text, 1-based.
        line: usize,
        /// Column of the error, 1-based (0 when the bytes are not UTF-8).
        column: usize,
    },
    /// The line is a JSON array: ACP v1 has no batches.
    Batch {
        /// How many elements the array has.
        len: usize,
    },
    /// The JSON is not a JSON-RPC 2.0 message.
    InvalidEnvelope {
        /// What is wrong.
        reason: EnvelopeFault,
    },
    /// The params of a known method do not fit its schema.
    InvalidParams {
        /// The method.
        method: &'static str,
        /// What `serde_json` reported.
        error: serde_json::Error,
    },
    /// The result of a known method does not fit its schema.
    InvalidResult {
        /// The method of the request answered.
        method: &'static str,
        /// What `serde_json` reported.
        error: serde_json::Error,
    },
}

/// What makes JSON not a JSON-RPC 2.0 message, in
/// [`MessageError::InvalidEnvelope`].
///
/// ```
/// use acp_codec::acp::{EnvelopeFault, Message};
/// use acp_codec::MessageError;
///
/// let err = Message::decode(r#"{"jsonrpc":"1.0","method":"x"}"#).unwrap_err();
/// assert!(matches!(err, MessageError::InvalidEnvelope { reason: EnvelopeFault::JsonrpcNot20 }));
/// assert_eq!(err.to_string(), "invalid json-rpc message: jsonrpc is not \"2.0\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EnvelopeFault {
    /// JSON that is not an object (a string, a number, …).
    NotAnObject,
    /// A member appears twice.
    DuplicateMember,
    /// No `"jsonrpc"` member.
    JsonrpcMissing,
    /// `"jsonrpc"` is not `"2.0"`.
    JsonrpcNot20,
    /// `"method"` is not a string.
    MethodNotString,
    /// `"method"` beside `"result"` or `"error"`.
    MethodWithResultOrError,
    /// Both `"result"` and `"error"`.
    ResultAndError,
    /// `"params"` in a response.
    ParamsInResponse,
    /// A result without `"id"`.
    ResponseWithoutId,
    /// An error without `"id"`.
    ErrorResponseWithoutId,
    /// `"error"` is not an object with a code and a message.
    ErrorNotErrorObject,
    /// None of `"method"`, `"result"` or `"error"`.
    NoMethodResultOrError,
    /// A string id with an invalid escape.
    IdInvalidString,
    /// An id that is not null, a 64-bit integer or a string.
    IdInvalidType,
}

impl EnvelopeFault {
    /// What is wrong, lowercase.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotAnObject => "not a json object",
            Self::DuplicateMember => "duplicate member",
            Self::JsonrpcMissing => "jsonrpc member missing",
            Self::JsonrpcNot20 => "jsonrpc is not \"2.0\"",
            Self::MethodNotString => "method is not a string",
            Self::MethodWithResultOrError => "method with result or error",
            Self::ResultAndError => "both result and error",
            Self::ParamsInResponse => "params in a response",
            Self::ResponseWithoutId => "response without id",
            Self::ErrorResponseWithoutId => "error response without id",
            Self::ErrorNotErrorObject => "error is not a json-rpc error object",
            Self::NoMethodResultOrError => "no method, result or error",
            Self::IdInvalidString => "id is not a valid string",
            Self::IdInvalidType => "id is not null, a 64-bit integer or a string",
        }
    }
}

impl fmt::Display for EnvelopeFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl MessageError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::NotJson { .. } => ErrorCode::PARSE_ERROR,
            Self::Batch { .. } | Self::InvalidEnvelope { .. } => ErrorCode::INVALID_REQUEST,
            Self::InvalidParams { .. } => ErrorCode::INVALID_PARAMS,
            Self::InvalidResult { .. } => ErrorCode::INTERNAL_ERROR,
        }
    }
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson { line, column } => {
                write!(f, "line is not json (error at line {line} column {column})")
            }
            Self::Batch { len } => write!(
                f,
                "json array of {len} elements: batches are not part of acp v1"
            ),
            Self::InvalidEnvelope { reason } => write!(f, "invalid json-rpc message: {reason}"),
            Self::InvalidParams { method, error } => {
                write!(f, "invalid params for {method}: {error}")
            }
            Self::InvalidResult { method, error } => {
                write!(f, "invalid result for {method}: {error}")
            }
        }
    }
}

impl core::error::Error for MessageError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::InvalidParams { error, .. } | Self::InvalidResult { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// An error of the request [`Tracker`](crate::acp::Tracker).
///
/// The tracker's table is unchanged by any of these.
#[derive(Debug)]
#[non_exhaustive]
pub enum TrackerError {
    /// A response for an id this side never used.
    UnknownResponse {
        /// The id, as sent.
        id: crate::acp::RequestId<'static>,
    },
    /// A second response for a request already answered.
    DuplicateResponse {
        /// The id.
        id: crate::acp::RequestId<'static>,
    },
    /// A response for a request that had already expired.
    LateResponse {
        /// The id.
        id: crate::acp::RequestId<'static>,
    },
    /// The peer sent a request with an id it still has pending.
    DuplicateRequest {
        /// The id.
        id: crate::acp::RequestId<'static>,
    },
    /// An answer to a peer request that is not pending.
    NotPending {
        /// The id.
        id: crate::acp::RequestId<'static>,
    },
    /// The peer has more requests pending than the limit allows.
    TooManyPending {
        /// The limit.
        limit: usize,
    },
    /// Encoding the outgoing message failed.
    Encode(EncodeError),
}

impl TrackerError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Encode(e) => e.code(),
            Self::TooManyPending { .. } => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_REQUEST,
        }
    }
}

/// Equal when of the same kind with the same id or limit; two
/// [`TrackerError::Encode`]s as their [`EncodeError`]s are.
impl PartialEq for TrackerError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::UnknownResponse { id: a }, Self::UnknownResponse { id: b })
            | (Self::DuplicateResponse { id: a }, Self::DuplicateResponse { id: b })
            | (Self::LateResponse { id: a }, Self::LateResponse { id: b })
            | (Self::DuplicateRequest { id: a }, Self::DuplicateRequest { id: b })
            | (Self::NotPending { id: a }, Self::NotPending { id: b }) => a == b,
            (Self::TooManyPending { limit: a }, Self::TooManyPending { limit: b }) => a == b,
            (Self::Encode(a), Self::Encode(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for TrackerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownResponse { id } => write!(f, "response to unknown request id {id}"),
            Self::DuplicateResponse { id } => {
                write!(f, "duplicate response to request id {id}")
            }
            Self::LateResponse { id } => {
                write!(f, "response to request id {id} after it expired")
            }
            Self::DuplicateRequest { id } => {
                write!(f, "peer reused request id {id} while it is pending")
            }
            Self::NotPending { id } => write!(f, "no peer request with id {id} is pending"),
            Self::TooManyPending { limit } => {
                write!(f, "peer has more than {limit} requests pending")
            }
            Self::Encode(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for TrackerError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Encode(e) => Some(e),
            _ => None,
        }
    }
}

impl From<EncodeError> for TrackerError {
    fn from(e: EncodeError) -> Self {
        Self::Encode(e)
    }
}
