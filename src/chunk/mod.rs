//! Chunked tool results: big `tool_result` outputs cross a pipe as frames
//! of at most 32 KiB a line (so a reader with asyncio's 64 KiB line limit
//! never chokes on them), and are rebuilt within a hard memory
//! budget.
//!
//! A `tool_result` whose line fits in one frame is sent unchanged (the
//! legacy form). A larger one is sent as:
//!
//! ```text
//! {"type":"tool_result_start","timestamp":"…","tool_id":"T","status":"success","total_bytes":N}
//! {"type":"tool_result_chunk","tool_id":"T","seq":0,"data":"…"}
//! … seq 1, 2, … contiguous
//! {"type":"tool_result_end","tool_id":"T","chunks":K,"total_bytes":N}
//! ```
//!
//! `total_bytes` is the UTF-8 length of the output; `data` pieces split it
//! only on character boundaries and concatenate to exactly the output; an
//! `error` object, when present, rides on the start frame. Other events may
//! come between frames and transfers of different `tool_id`s may interleave.
//!
//! - [`ChunkEncoder`] (sender): one result in, frames out, each line at most
//!   [`Limits::frame_len`](crate::Limits::frame_len) bytes after escaping.
//! - [`Reassembler`] (receiver): events in, the rebuilt [`ToolResult`] out,
//!   every fault a typed, recoverable [`ChunkError`].
//!
//! ```
//! use acp_codec::chunk::{ChunkEncoder, Pushed, Reassembler};
//! use acp_codec::stream_json::{Event, Status, Text, ToolResult};
//!
//! let output = "entry ☃\n".repeat(20_000); // 200 KB
//! let result = ToolResult {
//!     timestamp: Some(Text::from("2025-01-01T00:00:00Z")),
//!     tool_id: Text::from("run_shell_command-1-0"),
//!     status: Status::Success,
//!     output: Some(Text::from(output.as_str())),
//!     error: None,
//! };
//! let mut encoder = ChunkEncoder::new(&result, 32 * 1024)?;
//! let mut reassembler = Reassembler::new();
//! let mut line = Vec::new();
//! let mut rebuilt = None;
//! while let Some(n) = encoder.next_frame(&mut line) {
//!     assert!(n - 1 <= 32 * 1024);
//!     let text = std::str::from_utf8(&line[..n - 1]).unwrap();
//!     if let Pushed::Complete(r) = reassembler.push(Event::decode(text)?)? {
//!         rebuilt = Some(r);
//!     }
//!     line.clear();
//! }
//! assert_eq!(rebuilt, Some(result.into_owned()));
//! # Ok::<(), acp_codec::Error>(())
//! ```

mod direct;
mod encoder;
mod error;
mod reassembler;

pub use encoder::ChunkEncoder;
pub use error::{ChunkError, LineError};
pub use reassembler::{Pushed, Reassembler};

#[cfg(doc)]
use crate::stream_json::ToolResult;
use crate::stream_json::{JsonStr, Status, Text, ToolError};

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
