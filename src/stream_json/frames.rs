//! The chunk frames of the chunked tool-result protocol, as stream-json
//! events: a big `tool_result` crosses a pipe as a start, contiguous chunks
//! and an end (see the `chunk` module for the encoder and reassembler).

use super::{JsonStr, Status, Text, ToolError};

/// `tool_result_start`: a chunked tool result begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultStart<'a> {
    /// ISO 8601 time, carried over to the rebuilt result.
    pub timestamp: Option<Text<'a>>,
    /// The call's id, naming the transfer.
    pub tool_id: Text<'a>,
    /// `success` or `error`.
    pub status: Status,
    /// UTF-8 length of the whole output (a hint for the receiver's buffer,
    /// checked at the end).
    pub total_bytes: u64,
    /// The error, for a failed call.
    pub error: Option<ToolError<'a>>,
}

/// `tool_result_chunk`: the piece number `seq` (from 0) of a transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultChunk<'a> {
    /// The transfer's `tool_id`.
    pub tool_id: Text<'a>,
    /// The piece's number: 0, 1, 2, … contiguous.
    pub seq: u64,
    /// The piece, still escaped as on the wire.
    pub data: JsonStr<'a>,
}

/// `tool_result_end`: a transfer is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultEnd<'a> {
    /// The transfer's `tool_id`.
    pub tool_id: Text<'a>,
    /// How many chunks were sent.
    pub chunks: u64,
    /// UTF-8 length of the whole output.
    pub total_bytes: u64,
}

/// The kind of a chunk frame, as named on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// `tool_result_start`.
    Start,
    /// `tool_result_chunk`.
    Chunk,
    /// `tool_result_end`.
    End,
}

impl FrameKind {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Start => "tool_result_start",
            Self::Chunk => "tool_result_chunk",
            Self::End => "tool_result_end",
        }
    }
}
