//! The chunked tool-result protocol's error.

use core::fmt;

use crate::ErrorCode;

/// A fault of the chunked tool-result protocol, or a frame limit too small
/// to encode with: the transfer it concerns ([`ChunkError::tool_id`]) and
/// what went wrong ([`ChunkError::kind`], a [`ChunkErrorKind`] to match).
///
/// After a reassembly fault the [`Reassembler`](crate::chunk::Reassembler)
/// is clean: the faulty transfer is gone, its remaining frames are dropped,
/// others go on.
///
/// ```
/// use acp_codec::chunk::{Pushed, Reassembler};
/// use acp_codec::stream_json::Event;
/// use acp_codec::{ChunkError, ChunkErrorKind};
///
/// let mut r = Reassembler::new();
/// r.push_line(r#"{"type":"tool_result_start","tool_id":"t","status":"success","total_bytes":2}"#)?;
/// let chunk = Event::decode(r#"{"type":"tool_result_chunk","tool_id":"t","seq":1,"data":"ab"}"#)?;
/// let err = r.push(chunk).unwrap_err();
/// assert_eq!(err.kind(), ChunkErrorKind::SeqGap { expected: 0, got: 1 });
/// assert_eq!(err.tool_id(), Some("t"));
/// assert_eq!(err.to_string(), "transfer \"t\": chunk 1 arrived, expected 0");
/// // The transfer is gone: its end frame is dropped quietly.
/// let end = r.push_line(r#"{"type":"tool_result_end","tool_id":"t","chunks":2,"total_bytes":2}"#)?;
/// assert!(matches!(end, Pushed::Dropped));
/// # Ok::<(), acp_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChunkError {
    /// The transfer's id; boxed twice so that the error stays 32 bytes (a
    /// thin pointer), allocated only when a fault happens.
    tool_id: Option<alloc::boxed::Box<alloc::boxed::Box<str>>>,
    kind: ChunkErrorKind,
}

/// What went wrong in a [`ChunkError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkErrorKind {
    /// A chunk or end frame for no open (or recently aborted) transfer.
    UnknownTransfer {
        /// Which frame.
        frame: crate::chunk::FrameKind,
    },
    /// A start for a transfer already open: the old transfer was aborted
    /// (this error reports it) and the new one is open.
    DuplicateStart {
        /// Bytes the old transfer had received.
        received: u64,
    },
    /// A chunk skipped ahead of the next expected `seq`.
    SeqGap {
        /// The `seq` expected.
        expected: u64,
        /// The `seq` that arrived.
        got: u64,
    },
    /// A chunk repeated an earlier `seq`.
    SeqRepeat {
        /// The `seq` expected.
        expected: u64,
        /// The `seq` that arrived.
        got: u64,
    },
    /// The end frame's `chunks` differs from the chunks received.
    CountMismatch {
        /// Chunks declared.
        declared: u64,
        /// Chunks received.
        received: u64,
    },
    /// A declared `total_bytes` (end, or start) differs from the bytes
    /// received.
    SizeMismatch {
        /// Bytes declared.
        declared: u64,
        /// Bytes received.
        received: u64,
    },
    /// The output would pass (or was declared to pass) the per-result limit.
    ResultTooLarge {
        /// The size reached or declared.
        size: u64,
        /// [`Limits::max_result_bytes`](crate::Limits::max_result_bytes).
        limit: usize,
    },
    /// The transfer needs more buffer than is left of the shared budget.
    BudgetExceeded {
        /// Bytes the transfer's buffer needed.
        needed: usize,
        /// Bytes of the budget available to it.
        available: usize,
    },
    /// The transfer passed the per-transfer chunk limit.
    TooManyChunks {
        /// [`Limits::max_chunks_per_transfer`](crate::Limits::max_chunks_per_transfer).
        limit: u64,
    },
    /// A start while the most transfers are already open.
    TooManyTransfers {
        /// [`Limits::max_open_transfers`](crate::Limits::max_open_transfers).
        limit: usize,
    },
    /// A chunk's `data` has an invalid escape (such as half a surrogate pair).
    InvalidData {
        /// The chunk's `seq`.
        seq: u64,
    },
    /// The stream ended (or was reset) with the transfer still open.
    Truncated {
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
    /// A fault of the transfer `tool_id`.
    pub fn transfer(tool_id: impl Into<alloc::string::String>, kind: ChunkErrorKind) -> Self {
        Self {
            tool_id: Some(alloc::boxed::Box::new(tool_id.into().into_boxed_str())),
            kind,
        }
    }

    /// A fault that concerns no transfer ([`ChunkErrorKind::FrameTooSmall`]).
    pub const fn without_transfer(kind: ChunkErrorKind) -> Self {
        Self {
            tool_id: None,
            kind,
        }
    }

    /// What went wrong.
    pub const fn kind(&self) -> ChunkErrorKind {
        self.kind
    }

    /// The transfer concerned (`None` for [`ChunkErrorKind::FrameTooSmall`]).
    pub fn tool_id(&self) -> Option<&str> {
        self.tool_id.as_deref().map(|id| &**id)
    }

    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self.kind {
            ChunkErrorKind::FrameTooSmall { .. } => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_PARAMS,
        }
    }
}

/// A transfer's id in a message: quoted, or `(no transfer)` for an error
/// built with [`ChunkError::without_transfer`] (only `FrameTooSmall` is
/// meant to be, and its message names none).
struct Transfer<'a>(Option<&'a str>);

impl fmt::Debug for Transfer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => write!(f, "{id:?}"),
            None => f.write_str("(no transfer)"),
        }
    }
}

impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tool_id = Transfer(self.tool_id());
        match self.kind {
            ChunkErrorKind::UnknownTransfer { frame } => {
                write!(f, "{} for unknown transfer {tool_id:?}", frame.as_str())
            }
            ChunkErrorKind::DuplicateStart { received } => write!(
                f,
                "duplicate tool_result_start for {tool_id:?}: the open transfer was aborted after {received} bytes"
            ),
            ChunkErrorKind::SeqGap { expected, got } | ChunkErrorKind::SeqRepeat { expected, got } => {
                write!(f, "transfer {tool_id:?}: chunk {got} arrived, expected {expected}")
            }
            ChunkErrorKind::CountMismatch { declared, received } => write!(
                f,
                "transfer {tool_id:?}: end declares {declared} chunks, {received} received"
            ),
            ChunkErrorKind::SizeMismatch { declared, received } => write!(
                f,
                "transfer {tool_id:?}: {declared} bytes declared, {received} received"
            ),
            ChunkErrorKind::ResultTooLarge { size, limit } => write!(
                f,
                "transfer {tool_id:?}: output of {size} bytes exceeds the {limit}-byte limit"
            ),
            ChunkErrorKind::BudgetExceeded { needed, available } => write!(
                f,
                "transfer {tool_id:?}: buffer of {needed} bytes exceeds the {available} bytes left of the shared budget"
            ),
            ChunkErrorKind::TooManyChunks { limit } => {
                write!(f, "transfer {tool_id:?}: more than {limit} chunks")
            }
            ChunkErrorKind::TooManyTransfers { limit } => write!(
                f,
                "transfer {tool_id:?} refused: {limit} transfers already open"
            ),
            ChunkErrorKind::InvalidData { seq } => write!(
                f,
                "transfer {tool_id:?}: chunk {seq} holds an invalid escape"
            ),
            ChunkErrorKind::Truncated { received, chunks } => write!(
                f,
                "transfer {tool_id:?} truncated after {received} bytes in {chunks} chunks"
            ),
            ChunkErrorKind::FrameTooSmall { limit, needed } => write!(
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
