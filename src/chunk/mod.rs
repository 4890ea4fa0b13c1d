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
//! - [`Reassembler`] (receiver): events in, the rebuilt [`ToolResult`](crate::stream_json::ToolResult) out,
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
pub use error::{ChunkError, ChunkErrorKind, LineError};
pub use reassembler::{Pushed, Reassembler};

// The frame types are stream-json events; the chunk layer builds on them.
pub use crate::stream_json::{FrameKind, ToolResultChunk, ToolResultEnd, ToolResultStart};
