//! The sender side: one tool result in, frames out.

use alloc::vec::Vec;

use super::{ChunkError, ChunkErrorKind};
use crate::json;
use crate::stream_json::write::{self, Measure};
use crate::stream_json::ToolResult;

/// The largest escaped size of one character: a control character written
/// as `\u00xx`.
const MAX_CHAR_ESCAPED: usize = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Legacy,
    Start,
    Chunks,
    Done,
}

/// Turns one tool result into lines of at most `frame_len` bytes: the
/// unchanged legacy `tool_result` line when it fits, else a
/// `tool_result_start`, chunks and a `tool_result_end`.
///
/// Sans-IO and copy-free: the encoder borrows the result and writes one
/// frame at a time into the caller's buffer with
/// [`next_frame`](Self::next_frame), so a 50 MiB output is never copied
/// whole a second time.
///
/// # Invariants
///
/// - Every line is at most `frame_len` bytes, excluding its `\n`, whatever
///   the escaping costs (control characters take 6 bytes, quotes and
///   backslashes 2); sizes are computed exactly, not estimated.
/// - Chunks split the output only on UTF-8 character boundaries and
///   concatenate to exactly the output; each carries at least one character.
/// - Lines use Gemini CLI's escaping (`serde_json`'s and `JSON.stringify`'s),
///   so the legacy line is what Gemini CLI would have written.
///
/// # Minimum frame length
///
/// [`new`](Self::new) accepts a `frame_len` only if every frame fits with at
/// least one character of output in each chunk: the largest of the start
/// frame, the end frame and a chunk frame's envelope (with the largest
/// possible `seq`) plus 6 bytes. For a short `tool_id` and timestamp this is
/// about 160 bytes; [`min_frame_len`](Self::min_frame_len) gives the exact
/// value for a result. The sender should also keep outputs within the
/// receiver's [`Limits::max_result_bytes`](crate::Limits::max_result_bytes);
/// the encoder itself does not cap them.
///
/// ```
/// use acp_codec::chunk::ChunkEncoder;
/// use acp_codec::stream_json::{Status, Text, ToolResult};
///
/// let output = "\u{1}".repeat(1000); // 6 bytes each once escaped
/// let result = ToolResult {
///     timestamp: None,
///     tool_id: Text::from("t"),
///     status: Status::Success,
///     output: Some(Text::from(output.as_str())),
///     error: None,
/// };
/// let mut encoder = ChunkEncoder::new(&result, 512)?;
/// assert!(encoder.is_chunked());
/// let mut out = Vec::new();
/// let mut lines = 0;
/// while let Some(n) = encoder.next_frame(&mut out) {
///     lines += 1;
///     assert!(n - 1 <= 512);
///     out.clear();
/// }
/// assert!(lines > 12);
/// assert!(ChunkEncoder::new(&result, 20).is_err());
/// # Ok::<(), acp_codec::ChunkError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ChunkEncoder<'r> {
    result: &'r ToolResult<'r>,
    output: &'r str,
    frame_len: usize,
    stage: Stage,
    pos: usize,
    seq: u64,
}

impl<'r> ChunkEncoder<'r> {
    /// An encoder for `result`, emitting lines of at most `frame_len` bytes
    /// (excluding `\n`); [`DEFAULT_FRAME_LEN`](crate::limits::DEFAULT_FRAME_LEN)
    /// is the usual value.
    ///
    /// Reads only about `frame_len` bytes of the output to choose between
    /// the legacy line and frames.
    ///
    /// # Errors
    ///
    /// [`ChunkErrorKind::FrameTooSmall`] if `frame_len` is below
    /// [`min_frame_len`](Self::min_frame_len) for this result (for a result
    /// without output: below its legacy line).
    ///
    /// ```
    /// use acp_codec::chunk::ChunkEncoder;
    /// use acp_codec::limits::DEFAULT_FRAME_LEN;
    /// use acp_codec::stream_json::{Status, Text, ToolResult};
    ///
    /// // A small result fits in one frame: the legacy line, unchanged.
    /// let small = ToolResult {
    ///     timestamp: None,
    ///     tool_id: Text::from("read_file-1-0"),
    ///     status: Status::Success,
    ///     output: Some(Text::from("hello")),
    ///     error: None,
    /// };
    /// let mut encoder = ChunkEncoder::new(&small, DEFAULT_FRAME_LEN)?;
    /// assert!(!encoder.is_chunked());
    /// let mut out = Vec::new();
    /// assert_eq!(encoder.next_frame(&mut out), Some(out.len()));
    /// assert_eq!(out, concat!(r#"{"type":"tool_result","tool_id":"read_file-1-0","status":"success","output":"hello"}"#, "\n").as_bytes());
    /// assert_eq!(encoder.next_frame(&mut out), None);
    /// # Ok::<(), acp_codec::ChunkError>(())
    /// ```
    pub fn new(result: &'r ToolResult<'r>, frame_len: usize) -> Result<Self, ChunkError> {
        let mut legacy = Measure::new(frame_len);
        write::tool_result(&mut legacy, result);
        let mut encoder = Self {
            result,
            output: result.output.as_deref().unwrap_or_default(),
            frame_len,
            stage: Stage::Legacy,
            pos: 0,
            seq: 0,
        };
        if legacy.len <= frame_len {
            return Ok(encoder);
        }
        let needed = match result.output {
            Some(_) => Self::min_frame_len(result),
            None => {
                let mut exact = Measure::new(usize::MAX);
                write::tool_result(&mut exact, result);
                exact.len
            }
        };
        if needed > frame_len || result.output.is_none() {
            return Err(ChunkError::without_transfer(
                ChunkErrorKind::FrameTooSmall {
                    limit: frame_len,
                    needed,
                },
            ));
        }
        encoder.stage = Stage::Start;
        Ok(encoder)
    }

    /// The smallest `frame_len` at which `result` can be sent as frames: the
    /// largest of its start frame, its end frame and a chunk envelope with
    /// the largest possible `seq`, plus 6 bytes for one character.
    pub fn min_frame_len(result: &ToolResult<'_>) -> usize {
        let output = result.output.as_deref().unwrap_or_default();
        let total = u64::try_from(output.len()).unwrap_or(u64::MAX);
        let mut start = Measure::new(usize::MAX);
        write::start_parts(
            &mut start,
            result.timestamp.as_ref(),
            &result.tool_id,
            result.status,
            total,
            result.error.as_ref(),
        );
        // At most one chunk per byte of output.
        let mut end = Measure::new(usize::MAX);
        write::end_parts(&mut end, &result.tool_id, total, total);
        let chunk =
            write::chunk_envelope_len(&result.tool_id, total).saturating_add(MAX_CHAR_ESCAPED);
        start.len.max(end.len).max(chunk)
    }

    /// Whether the result goes as frames (false: one legacy line).
    pub fn is_chunked(&self) -> bool {
        self.stage != Stage::Legacy
    }

    /// The number of chunks emitted so far.
    pub fn chunks(&self) -> u64 {
        self.seq
    }

    /// Appends the next line, `\n` included, to `out` and returns its length;
    /// `None` once every line was emitted.
    pub fn next_frame(&mut self, out: &mut Vec<u8>) -> Option<usize> {
        let start = out.len();
        let r = self.result;
        let total = u64::try_from(self.output.len()).unwrap_or(u64::MAX);
        match self.stage {
            Stage::Done => return None,
            Stage::Legacy => {
                write::tool_result(&mut write::IntoVec(out), r);
                self.stage = Stage::Done;
            }
            Stage::Start => {
                write::start_parts(
                    &mut write::IntoVec(out),
                    r.timestamp.as_ref(),
                    &r.tool_id,
                    r.status,
                    total,
                    r.error.as_ref(),
                );
                self.stage = Stage::Chunks;
            }
            Stage::Chunks if self.pos < self.output.len() => {
                let envelope = write::chunk_envelope_len(&r.tool_id, self.seq);
                let budget = self.frame_len.saturating_sub(envelope);
                out.reserve(self.frame_len.saturating_add(1));
                write::chunk_head(&mut write::IntoVec(out), &r.tool_id, self.seq);
                out.push(b'"');
                self.pos = json::push_escaped_within(out, self.output, self.pos, budget);
                out.extend_from_slice(b"\"}");
                self.seq = self.seq.saturating_add(1);
            }
            Stage::Chunks => {
                write::end_parts(&mut write::IntoVec(out), &r.tool_id, self.seq, total);
                self.stage = Stage::Done;
            }
        }
        out.push(b'\n');
        Some(out.len().saturating_sub(start))
    }
}
