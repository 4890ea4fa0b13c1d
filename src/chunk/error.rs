//! The chunked tool-result protocol's error.

use core::fmt;

use crate::ErrorCode;

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

impl core::error::Error for ChunkError {}

/// What [`Reassembler::push_line`](super::Reassembler::push_line) can fail
/// with: the line is not a stream-json event, or the event is a fault of
/// the chunked protocol. Converts into the crate-level
/// [`Error`](crate::Error) as [`Error::Event`](crate::Error::Event) or
/// [`Error::Chunk`](crate::Error::Chunk), so `?` keeps working.
///
/// ```
/// use acp_codec::chunk::{LineError, Reassembler};
///
/// let mut r = Reassembler::new();
/// assert!(matches!(r.push_line("not json"), Err(LineError::Event(_))));
/// let err = r.push_line(r#"{"type":"tool_result_chunk","tool_id":"t","seq":0,"data":"x"}"#).unwrap_err();
/// assert!(matches!(err, LineError::Chunk(_)));
/// assert_eq!(err.code().0, -32602);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum LineError {
    /// The line is not a stream-json event; nothing changed.
    Event(crate::stream_json::EventError),
    /// A fault of the chunked protocol, as for
    /// [`Reassembler::push`](super::Reassembler::push).
    Chunk(ChunkError),
}

impl LineError {
    /// The JSON-RPC code to answer with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Event(e) => e.code(),
            Self::Chunk(e) => e.code(),
        }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Event(e) => e.fmt(f),
            Self::Chunk(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for LineError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Event(e) => Some(e),
            Self::Chunk(e) => Some(e),
        }
    }
}

impl From<crate::stream_json::EventError> for LineError {
    fn from(e: crate::stream_json::EventError) -> Self {
        Self::Event(e)
    }
}

impl From<ChunkError> for LineError {
    fn from(e: ChunkError) -> Self {
        Self::Chunk(e)
    }
}
