//! Errors: one small `#[non_exhaustive]` enum per layer, wrapped by [`Error`].
//!
//! Every error leaves the state that reported it clean and usable: the next
//! good message after a bad one is never lost. Display text is lowercase,
//! without a trailing period, and carries the numbers involved. Each error maps
//! to the JSON-RPC code an adapter should answer with ([`Error::code`]).

use core::fmt;

use crate::framing::PeekedId;

/// A JSON-RPC 2.0 error code, with the codes JSON-RPC and ACP define.
///
/// ```
/// use acp_codec::ErrorCode;
///
/// assert_eq!(ErrorCode::PARSE_ERROR.0, -32700);
/// assert_eq!(ErrorCode::REQUEST_CANCELLED.to_string(), "-32800 request cancelled");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: the line is not JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// `-32600`: the JSON is not a valid request (a batch, a bad envelope, a
    /// line over the size limit).
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// `-32601`: the method does not exist.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// `-32602`: the params do not fit the method.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// `-32603`: an internal error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// `-32800` (ACP): the request was cancelled.
    pub const REQUEST_CANCELLED: Self = Self(-32800);
    /// `-32000` (ACP): authentication is required.
    pub const AUTH_REQUIRED: Self = Self(-32000);
    /// `-32002` (ACP): a resource, such as a file, was not found.
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);

    /// The standard name of a known code, `None` for others.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "parse error",
            -32600 => "invalid request",
            -32601 => "method not found",
            -32602 => "invalid params",
            -32603 => "internal error",
            -32800 => "request cancelled",
            -32000 => "authentication required",
            -32002 => "resource not found",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} {}", self.0, name),
            None => write!(f, "{}", self.0),
        }
    }
}

/// An error of the framing layer: one line of input.
///
/// After any of these the [`LineSplitter`](crate::LineSplitter) goes on with
/// the next line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FrameError {
    /// A line is longer than the limit. Reported once per line, as soon as
    /// more than `limit` bytes of it were seen; the rest of the line is
    /// skipped.
    LineTooLong {
        /// The limit, in bytes.
        limit: usize,
        /// Bytes of the line seen when it was reported (the whole line when
        /// its end was already in the buffer).
        seen: usize,
        /// The line's JSON-RPC `"id"`, when its first bytes hold one.
        id: Option<PeekedId>,
        /// Whether the first bytes hold a `"method"` too, so the line is a
        /// request the peer waits an answer for.
        is_request: bool,
    },
    /// A line is not valid UTF-8.
    InvalidUtf8 {
        /// The line's length in bytes.
        len: usize,
        /// Bytes of the line that are valid UTF-8 before the first bad one.
        valid_up_to: usize,
    },
}

impl FrameError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::LineTooLong { .. } => ErrorCode::INVALID_REQUEST,
            Self::InvalidUtf8 { .. } => ErrorCode::PARSE_ERROR,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LineTooLong {
                limit,
                seen,
                id,
                is_request,
            } => {
                write!(f, "line of {seen} bytes exceeds the {limit}-byte limit")?;
                match (id, is_request) {
                    (Some(id), true) => write!(f, " (request id {id})"),
                    (Some(id), false) => write!(f, " (id {id})"),
                    (None, _) => Ok(()),
                }
            }
            Self::InvalidUtf8 { len, valid_up_to } => write!(
                f,
                "line of {len} bytes is not valid utf-8 after byte {valid_up_to}"
            ),
        }
    }
}

impl core::error::Error for FrameError {}

/// An error while encoding a value as one line.
///
/// The output buffer is left as it was before the call.
#[cfg(feature = "alloc")]
#[derive(Debug)]
#[non_exhaustive]
pub enum EncodeError {
    /// The value could not be serialized as JSON.
    Json(serde_json::Error),
    /// The JSON holds a raw newline inside a string, so it cannot be one line
    /// (raw JSON handed in by a caller; serialized values never do).
    RawNewline {
        /// Offset of the newline in the encoded JSON.
        offset: usize,
    },
    /// Raw JSON handed in by a caller is not valid JSON.
    InvalidJson {
        /// Line of the error in the raw JSON, 1-based.
        line: usize,
        /// Column of the error in the raw JSON, 1-based.
        column: usize,
    },
}

#[cfg(feature = "alloc")]
impl EncodeError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Json(_) => ErrorCode::INTERNAL_ERROR,
            Self::RawNewline { .. } | Self::InvalidJson { .. } => ErrorCode::INVALID_REQUEST,
        }
    }
}

#[cfg(feature = "alloc")]
impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(e) => write!(f, "cannot encode as json: {e}"),
            Self::RawNewline { offset } => write!(
                f,
                "raw newline inside a json string at byte {offset} cannot be sent as one line"
            ),
            Self::InvalidJson { line, column } => {
                write!(f, "raw json is invalid at line {line} column {column}")
            }
        }
    }
}

#[cfg(feature = "alloc")]
impl core::error::Error for EncodeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Json(e) => Some(e),
            _ => None,
        }
    }
}

/// An error decoding an ACP message (a JSON-RPC 2.0 envelope and its
/// typed params or result).
///
/// Decoding keeps no state: after any of these the next line decodes.
#[cfg(feature = "alloc")]
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
        /// What is wrong, lowercase.
        reason: &'static str,
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

#[cfg(feature = "alloc")]
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

#[cfg(feature = "alloc")]
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

#[cfg(feature = "alloc")]
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
#[cfg(feature = "alloc")]
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

#[cfg(feature = "alloc")]
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

#[cfg(feature = "alloc")]
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

#[cfg(feature = "alloc")]
impl core::error::Error for TrackerError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Encode(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "alloc")]
impl From<EncodeError> for TrackerError {
    fn from(e: EncodeError) -> Self {
        Self::Encode(e)
    }
}

/// Any error of the crate: one variant per layer.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A framing error: one bad line.
    Frame(FrameError),
    /// An encoding error.
    #[cfg(feature = "alloc")]
    Encode(EncodeError),
    /// An ACP message error: one bad line.
    #[cfg(feature = "alloc")]
    Message(MessageError),
    /// A request tracker error.
    #[cfg(feature = "alloc")]
    Tracker(TrackerError),
}

impl Error {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Frame(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Encode(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Message(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Tracker(e) => e.code(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Frame(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Encode(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Message(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Tracker(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Frame(e) => Some(e),
            #[cfg(feature = "alloc")]
            Self::Encode(e) => Some(e),
            #[cfg(feature = "alloc")]
            Self::Message(e) => Some(e),
            #[cfg(feature = "alloc")]
            Self::Tracker(e) => Some(e),
        }
    }
}

impl From<FrameError> for Error {
    fn from(e: FrameError) -> Self {
        Self::Frame(e)
    }
}

#[cfg(feature = "alloc")]
impl From<EncodeError> for Error {
    fn from(e: EncodeError) -> Self {
        Self::Encode(e)
    }
}

#[cfg(feature = "alloc")]
impl From<MessageError> for Error {
    fn from(e: MessageError) -> Self {
        Self::Message(e)
    }
}

#[cfg(feature = "alloc")]
impl From<TrackerError> for Error {
    fn from(e: TrackerError) -> Self {
        Self::Tracker(e)
    }
}

// Errors travel by value through every `Result`; keep them small.
const _: () = assert!(core::mem::size_of::<FrameError>() <= 64);
const _: () = assert!(core::mem::size_of::<Error>() <= 72);
#[cfg(feature = "alloc")]
const _: () = assert!(core::mem::size_of::<MessageError>() <= 40);

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn messages_are_lowercase_with_numbers() {
        let e = FrameError::LineTooLong {
            limit: 8_388_608,
            seen: 9_437_184,
            id: None,
            is_request: false,
        };
        assert_eq!(
            e.to_string(),
            "line of 9437184 bytes exceeds the 8388608-byte limit"
        );
        let e = FrameError::LineTooLong {
            limit: 10,
            seen: 11,
            id: Some(PeekedId::Number(7)),
            is_request: true,
        };
        assert_eq!(
            e.to_string(),
            "line of 11 bytes exceeds the 10-byte limit (request id 7)"
        );
        assert_eq!(e.code(), ErrorCode::INVALID_REQUEST);
        let e = FrameError::InvalidUtf8 {
            len: 4,
            valid_up_to: 1,
        };
        assert_eq!(
            e.to_string(),
            "line of 4 bytes is not valid utf-8 after byte 1"
        );
        assert_eq!(Error::from(e).code(), ErrorCode::PARSE_ERROR);
    }

    #[test]
    fn codes_have_names() {
        assert_eq!(ErrorCode(-1).to_string(), "-1");
        assert_eq!(
            ErrorCode::AUTH_REQUIRED.name(),
            Some("authentication required")
        );
    }
}
