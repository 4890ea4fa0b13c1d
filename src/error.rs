//! Errors: one small `#[non_exhaustive]` enum per layer, wrapped by [`Error`].
//!
//! Every error leaves the state that reported it clean and usable: the next
//! good message after a bad one is never lost. Display text is lowercase,
//! without a trailing period, and carries the numbers involved. Each error maps
//! to the JSON-RPC code an adapter should answer with ([`Error::code`]);
//! the crate docs have [the full mapping](crate#errors-and-json-rpc-codes)
//! and [what state each error leaves](crate#recovery).
//!
//! | layer | error | from |
//! |---|---|---|
//! | framing | [`FrameError`] | [`LineSplitter`](crate::LineSplitter) |
//! | encoding | [`EncodeError`] | [`encode_line`](crate::encode_line) and every `encode*` |
//! | ACP messages | [`MessageError`] | [`Message::decode`](crate::acp::Message::decode), `typed()` |
//! | request tracking | [`TrackerError`] | [`Tracker`](crate::acp::Tracker) |
//! | stream-json | [`EventError`] | [`Event::decode`](crate::stream_json::Event::decode) |
//! | chunked tool results | [`ChunkError`] | [`Reassembler`](crate::chunk::Reassembler), [`ChunkEncoder::new`](crate::chunk::ChunkEncoder::new) |
//! | turn view | [`TurnError`] | [`TurnView`](crate::turn::TurnView), as [`TurnEvent::Problem`](crate::turn::TurnEvent::Problem) |

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

/// An error decoding one stream-json line as an [`Event`](crate::stream_json::Event).
///
/// Nothing is kept from the bad line; the next line decodes normally.
#[cfg(feature = "alloc")]
#[derive(Debug)]
#[non_exhaustive]
pub enum EventError {
    /// The line is not a JSON object, or a field of a known event has the
    /// wrong JSON type.
    Json(serde_json::Error),
    /// A known event lacks a required field.
    MissingField {
        /// The event's `type` (`event` when `type` itself is missing).
        event: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field of a known event has a value outside its set (a `status`
    /// other than `success`/`error`, chunk `data` that is not a valid
    /// string).
    InvalidField {
        /// The event's `type`.
        event: &'static str,
        /// The field.
        field: &'static str,
    },
}

#[cfg(feature = "alloc")]
impl EventError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Json(_) => ErrorCode::PARSE_ERROR,
            Self::MissingField { .. } | Self::InvalidField { .. } => ErrorCode::INVALID_PARAMS,
        }
    }
}

#[cfg(feature = "alloc")]
impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(e) => write!(f, "not a stream-json event: {e}"),
            Self::MissingField { event, field } => {
                write!(f, "{event} event lacks the required field {field}")
            }
            Self::InvalidField { event, field } => {
                write!(f, "{event} event has an invalid {field}")
            }
        }
    }
}

#[cfg(feature = "alloc")]
impl core::error::Error for EventError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Json(e) => Some(e),
            _ => None,
        }
    }
}

/// A fault of the chunked tool-result protocol, or a
/// frame limit too small to encode with.
///
/// Reassembly faults name the transfer (`tool_id`). After any of them the
/// [`Reassembler`](crate::chunk::Reassembler) is clean: the faulty transfer
/// is gone, its remaining frames are dropped, others go on.
///
/// ```
/// use acp_codec::chunk::{Pushed, Reassembler};
/// use acp_codec::stream_json::Event;
/// use acp_codec::ChunkError;
///
/// let mut r = Reassembler::new();
/// r.push_line(r#"{"type":"tool_result_start","tool_id":"t","status":"success","total_bytes":2}"#)?;
/// let chunk = Event::decode(r#"{"type":"tool_result_chunk","tool_id":"t","seq":1,"data":"ab"}"#)?;
/// let err = r.push(chunk).unwrap_err();
/// assert!(matches!(err, ChunkError::SeqGap { expected: 0, got: 1, .. }));
/// assert_eq!(err.tool_id(), Some("t"));
/// assert_eq!(err.to_string(), "transfer \"t\": chunk 1 arrived, expected 0");
/// // The transfer is gone: its end frame is dropped quietly.
/// let end = r.push_line(r#"{"type":"tool_result_end","tool_id":"t","chunks":2,"total_bytes":2}"#)?;
/// assert!(matches!(end, Pushed::Dropped));
/// # Ok::<(), acp_codec::Error>(())
/// ```
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkError {
    /// A chunk or end frame for no open (or recently aborted) transfer.
    UnknownTransfer {
        /// The frame's `tool_id`.
        tool_id: alloc::boxed::Box<str>,
        /// Which frame.
        frame: crate::chunk::FrameKind,
    },
    /// A start for a transfer already open: the old transfer was aborted
    /// (this error reports it) and the new one is open.
    DuplicateStart {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// Bytes the old transfer had received.
        received: u64,
    },
    /// A chunk skipped ahead of the next expected `seq`.
    SeqGap {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// The `seq` expected.
        expected: u64,
        /// The `seq` that arrived.
        got: u64,
    },
    /// A chunk repeated an earlier `seq`.
    SeqRepeat {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// The `seq` expected.
        expected: u64,
        /// The `seq` that arrived.
        got: u64,
    },
    /// The end frame's `chunks` differs from the chunks received.
    CountMismatch {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// Chunks declared.
        declared: u64,
        /// Chunks received.
        received: u64,
    },
    /// A declared `total_bytes` (end, or start) differs from the bytes
    /// received.
    SizeMismatch {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// Bytes declared.
        declared: u64,
        /// Bytes received.
        received: u64,
    },
    /// The output would pass (or was declared to pass) the per-result limit.
    ResultTooLarge {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// The size reached or declared.
        size: u64,
        /// [`Limits::max_result_bytes`](crate::Limits::max_result_bytes).
        limit: usize,
    },
    /// The transfer needs more buffer than is left of the shared budget.
    BudgetExceeded {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// Bytes the transfer's buffer needed.
        needed: usize,
        /// Bytes of the budget available to it.
        available: usize,
    },
    /// The transfer passed the per-transfer chunk limit.
    TooManyChunks {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// [`Limits::max_chunks_per_transfer`](crate::Limits::max_chunks_per_transfer).
        limit: u64,
    },
    /// A start while the most transfers are already open.
    TooManyTransfers {
        /// The refused transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// [`Limits::max_open_transfers`](crate::Limits::max_open_transfers).
        limit: usize,
    },
    /// A chunk's `data` has an invalid escape (such as half a surrogate pair).
    InvalidData {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// The chunk's `seq`.
        seq: u64,
    },
    /// The stream ended (or was reset) with the transfer still open.
    Truncated {
        /// The transfer's id.
        tool_id: alloc::boxed::Box<str>,
        /// Bytes received.
        received: u64,
        /// Chunks received.
        chunks: u64,
    },
    /// The encoder's frame limit cannot hold this result's frames.
    FrameTooSmall {
        /// The frame limit given.
        limit: usize,
        /// The smallest limit that works for this result.
        needed: usize,
    },
}

#[cfg(feature = "alloc")]
impl ChunkError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::FrameTooSmall { .. } => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_PARAMS,
        }
    }

    /// The transfer concerned (`None` for [`ChunkError::FrameTooSmall`]).
    pub fn tool_id(&self) -> Option<&str> {
        match self {
            Self::UnknownTransfer { tool_id, .. }
            | Self::DuplicateStart { tool_id, .. }
            | Self::SeqGap { tool_id, .. }
            | Self::SeqRepeat { tool_id, .. }
            | Self::CountMismatch { tool_id, .. }
            | Self::SizeMismatch { tool_id, .. }
            | Self::ResultTooLarge { tool_id, .. }
            | Self::BudgetExceeded { tool_id, .. }
            | Self::TooManyChunks { tool_id, .. }
            | Self::TooManyTransfers { tool_id, .. }
            | Self::InvalidData { tool_id, .. }
            | Self::Truncated { tool_id, .. } => Some(tool_id),
            Self::FrameTooSmall { .. } => None,
        }
    }

    pub(crate) fn set_tool_id(&mut self, id: alloc::boxed::Box<str>) {
        match self {
            Self::UnknownTransfer { tool_id, .. }
            | Self::DuplicateStart { tool_id, .. }
            | Self::SeqGap { tool_id, .. }
            | Self::SeqRepeat { tool_id, .. }
            | Self::CountMismatch { tool_id, .. }
            | Self::SizeMismatch { tool_id, .. }
            | Self::ResultTooLarge { tool_id, .. }
            | Self::BudgetExceeded { tool_id, .. }
            | Self::TooManyChunks { tool_id, .. }
            | Self::TooManyTransfers { tool_id, .. }
            | Self::InvalidData { tool_id, .. }
            | Self::Truncated { tool_id, .. } => *tool_id = id,
            Self::FrameTooSmall { .. } => {}
        }
    }
}

#[cfg(feature = "alloc")]
impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTransfer { tool_id, frame } => {
                write!(f, "{} for unknown transfer {tool_id:?}", frame.as_str())
            }
            Self::DuplicateStart { tool_id, received } => write!(
                f,
                "duplicate tool_result_start for {tool_id:?}: the open transfer was aborted after {received} bytes"
            ),
            Self::SeqGap { tool_id, expected, got } | Self::SeqRepeat { tool_id, expected, got } => {
                write!(f, "transfer {tool_id:?}: chunk {got} arrived, expected {expected}")
            }
            Self::CountMismatch { tool_id, declared, received } => write!(
                f,
                "transfer {tool_id:?}: end declares {declared} chunks, {received} received"
            ),
            Self::SizeMismatch { tool_id, declared, received } => write!(
                f,
                "transfer {tool_id:?}: {declared} bytes declared, {received} received"
            ),
            Self::ResultTooLarge { tool_id, size, limit } => write!(
                f,
                "transfer {tool_id:?}: output of {size} bytes exceeds the {limit}-byte limit"
            ),
            Self::BudgetExceeded { tool_id, needed, available } => write!(
                f,
                "transfer {tool_id:?}: buffer of {needed} bytes exceeds the {available} bytes left of the shared budget"
            ),
            Self::TooManyChunks { tool_id, limit } => {
                write!(f, "transfer {tool_id:?}: more than {limit} chunks")
            }
            Self::TooManyTransfers { tool_id, limit } => write!(
                f,
                "transfer {tool_id:?} refused: {limit} transfers already open"
            ),
            Self::InvalidData { tool_id, seq } => write!(
                f,
                "transfer {tool_id:?}: chunk {seq} holds an invalid escape"
            ),
            Self::Truncated { tool_id, received, chunks } => write!(
                f,
                "transfer {tool_id:?} truncated after {received} bytes in {chunks} chunks"
            ),
            Self::FrameTooSmall { limit, needed } => write!(
                f,
                "frame limit of {limit} bytes is below the {needed} bytes this result needs"
            ),
        }
    }
}

#[cfg(feature = "alloc")]
impl core::error::Error for ChunkError {}

/// The limit of a [`TurnView`](crate::turn::TurnView) that was reached
/// (see [`TurnLimits`](crate::turn::TurnLimits)).
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TurnLimit {
    /// [`TurnLimits::max_tool_calls`](crate::turn::TurnLimits::max_tool_calls): items are tool calls.
    ToolCalls,
    /// [`TurnLimits::max_tool_bytes`](crate::turn::TurnLimits::max_tool_bytes): items are bytes.
    ToolBytes,
    /// [`TurnLimits::max_messages`](crate::turn::TurnLimits::max_messages): items are messages.
    Messages,
    /// [`TurnLimits::max_text_bytes`](crate::turn::TurnLimits::max_text_bytes): items are bytes.
    TextBytes,
    /// [`TurnLimits::max_permissions`](crate::turn::TurnLimits::max_permissions): items are
    /// permission requests.
    Permissions,
}

#[cfg(feature = "alloc")]
impl TurnLimit {
    /// What the limit counts, for messages: `tool calls`, `bytes`, ….
    pub const fn unit(self) -> &'static str {
        match self {
            Self::ToolCalls => "tool calls",
            Self::ToolBytes | Self::TextBytes => "bytes",
            Self::Messages => "messages",
            Self::Permissions => "permission requests",
        }
    }

    /// The limit's name, as in [`TurnLimits`](crate::turn::TurnLimits).
    pub const fn name(self) -> &'static str {
        match self {
            Self::ToolCalls => "max_tool_calls",
            Self::ToolBytes => "max_tool_bytes",
            Self::Messages => "max_messages",
            Self::TextBytes => "max_text_bytes",
            Self::Permissions => "max_permissions",
        }
    }
}

/// Something a [`TurnView`](crate::turn::TurnView) was fed that does not fit
/// the turn: reported as an [`TurnEvent::Problem`](crate::turn::TurnEvent::Problem),
/// never fatal. The view stays usable; what each variant did with the input
/// is documented on it.
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TurnError {
    /// A `tool_call_update` for a tool call id the turn does not track
    /// (never announced, from an earlier turn, or not tracked for a limit):
    /// the update was ignored.
    UnknownToolCall,
    /// A `tool_call` for an id the turn already tracks: it replaced the
    /// tool call's state whole.
    DuplicateToolCall,
    /// A turn update (message, thought, tool call, plan, permission request)
    /// after the turn's prompt response: it was applied all the same.
    AfterTurnEnd,
    /// A permission outcome for a request id with no pending permission
    /// request in the turn: ignored.
    UnknownPermission,
    /// A permission request whose id is already pending: it replaced the
    /// pending one.
    DuplicatePermission,
    /// A second prompt response for the turn: its stop reason replaced the
    /// first.
    AlreadyFinished,
    /// A limit was reached and something was not retained.
    LimitExceeded {
        /// Which limit.
        limit: TurnLimit,
        /// Its value.
        max: usize,
        /// How much was dropped, in [`TurnLimit::unit`]s.
        dropped: usize,
    },
}

#[cfg(feature = "alloc")]
impl TurnError {
    /// The JSON-RPC code for this error (for logs; the view answers nothing).
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::LimitExceeded { .. } => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_PARAMS,
        }
    }
}

#[cfg(feature = "alloc")]
impl fmt::Display for TurnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownToolCall => f.write_str("tool call update for an unknown tool call id"),
            Self::DuplicateToolCall => f.write_str("tool call announced twice"),
            Self::AfterTurnEnd => f.write_str("update after the end of the turn"),
            Self::UnknownPermission => f.write_str("permission outcome for no pending request"),
            Self::DuplicatePermission => f.write_str("permission request id already pending"),
            Self::AlreadyFinished => f.write_str("second prompt response for the turn"),
            Self::LimitExceeded {
                limit,
                max,
                dropped,
            } => write!(
                f,
                "{} of {max} reached: {dropped} {} dropped",
                limit.name(),
                limit.unit()
            ),
        }
    }
}

#[cfg(feature = "alloc")]
impl core::error::Error for TurnError {}

/// Any error of the crate: one variant per layer.
///
/// Every layer's error converts into it (`From`), so `?` works across
/// layers; [`Error::code`] gives the JSON-RPC code to answer with and
/// [`source`](core::error::Error::source) the layer's error.
///
/// ```
/// use acp_codec::acp::Message;
/// use acp_codec::{Error, LineSplitter};
///
/// /// Decodes the first line of `buf` as an ACP message's method.
/// fn first_method(buf: &[u8]) -> Result<Option<String>, Error> {
///     let mut splitter = LineSplitter::new();
///     let Some(line) = splitter.decode_eof(buf).item else { return Ok(None) };
///     let line = line?; // FrameError -> Error
///     let msg = Message::decode(&line)?; // MessageError -> Error
///     Ok(msg.method().map(str::to_owned))
/// }
///
/// assert_eq!(first_method(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n").unwrap().as_deref(), Some("x"));
/// let e = first_method(b"\xff\n").unwrap_err();
/// assert!(matches!(e, Error::Frame(_)));
/// assert_eq!(e.code().0, -32700);
/// let e = first_method(b"[1,2]\n").unwrap_err();
/// assert!(matches!(e, Error::Message(_)));
/// assert_eq!(e.to_string(), "json array of 2 elements: batches are not part of acp v1");
/// assert_eq!(e.code().0, -32600);
/// ```
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
    /// A stream-json line that is not a valid event.
    #[cfg(feature = "alloc")]
    Event(EventError),
    /// A fault of the chunked tool-result protocol.
    #[cfg(feature = "alloc")]
    Chunk(ChunkError),
    /// A turn view problem.
    #[cfg(feature = "alloc")]
    Turn(TurnError),
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
            #[cfg(feature = "alloc")]
            Self::Event(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Chunk(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Turn(e) => e.code(),
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
            #[cfg(feature = "alloc")]
            Self::Event(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Chunk(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Turn(e) => e.fmt(f),
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
            #[cfg(feature = "alloc")]
            Self::Event(e) => Some(e),
            #[cfg(feature = "alloc")]
            Self::Chunk(e) => Some(e),
            #[cfg(feature = "alloc")]
            Self::Turn(e) => Some(e),
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
#[cfg(feature = "alloc")]
impl From<EventError> for Error {
    fn from(e: EventError) -> Self {
        Self::Event(e)
    }
}

#[cfg(feature = "alloc")]
impl From<ChunkError> for Error {
    fn from(e: ChunkError) -> Self {
        Self::Chunk(e)
    }
}

#[cfg(feature = "alloc")]
impl From<TurnError> for Error {
    fn from(e: TurnError) -> Self {
        Self::Turn(e)
    }
}

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
