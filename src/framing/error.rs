//! The framing layer's errors: a bad line in, a value that cannot be one
//! line out.

use core::fmt;

use super::PeekedId;
use crate::ErrorCode;

/// An error of the framing layer: one line of input.
///
/// After any of these the [`LineSplitter`](crate::LineSplitter) goes on with
/// the next line.
///
/// ```
/// use acp_codec::{FrameError, LineSplitter, PeekedId};
///
/// let mut splitter = LineSplitter::with_max_line_len(32);
/// let buf = b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"session/prompt\",\"params\":{}}\n";
/// let err = splitter.decode(buf).item.unwrap().unwrap_err();
/// assert_eq!(
///     err,
///     FrameError::LineTooLong { limit: 32, seen: 63, id: Some(PeekedId::Number(12)), is_request: true }
/// );
/// assert_eq!(err.to_string(), "line of 63 bytes exceeds the 32-byte limit (request id 12)");
/// assert_eq!(err.code().0, -32600);
/// ```
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
