//! Hand-written encoders for `tool_result` and the chunk frames, sharing one
//! code path for writing and for computing exact lengths.

use alloc::vec::Vec;

use super::{Status, Text, ToolError, ToolResult, ToolResultEnd, ToolResultStart};
use crate::json;

/// Where a line goes: bytes, or only its length.
pub(crate) trait JsonOut {
    fn raw(&mut self, bytes: &[u8]);
    fn string(&mut self, s: &str);
    fn number(&mut self, n: u64);
}

/// Writes into a byte buffer.
pub(crate) struct IntoVec<'o>(pub(crate) &'o mut Vec<u8>);

impl JsonOut for IntoVec<'_> {
    fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn string(&mut self, s: &str) {
        json::push_string(self.0, s);
    }
    fn number(&mut self, n: u64) {
        json::push_u64(self.0, n);
    }
}

/// Counts bytes; strings stop being measured once the total passes `cap`
/// (the total is then only known to be above it).
pub(crate) struct Measure {
    pub(crate) len: usize,
    pub(crate) cap: usize,
}

impl Measure {
    pub(crate) const fn new(cap: usize) -> Self {
        Self { len: 0, cap }
    }
}

impl JsonOut for Measure {
    fn raw(&mut self, bytes: &[u8]) {
        self.len = self.len.saturating_add(bytes.len());
    }
    fn string(&mut self, s: &str) {
        let cap = self.cap.saturating_sub(self.len);
        let n = json::escaped_len_capped(s, cap);
        self.len = self.len.saturating_add(n).saturating_add(2);
    }
    fn number(&mut self, n: u64) {
        self.len = self.len.saturating_add(json::digits(n));
    }
}

fn status(out: &mut impl JsonOut, status: Status) {
    out.raw(match status {
        Status::Success => b",\"status\":\"success\"",
        Status::Error => b",\"status\":\"error\"",
    });
}

fn timestamp(out: &mut impl JsonOut, ts: Option<&Text<'_>>) {
    if let Some(ts) = ts {
        out.raw(b",\"timestamp\":");
        out.string(ts);
    }
}

fn error(out: &mut impl JsonOut, error: Option<&ToolError<'_>>) {
    if let Some(e) = error {
        out.raw(b",\"error\":{\"type\":");
        out.string(&e.kind);
        out.raw(b",\"message\":");
        out.string(&e.message);
        out.raw(b"}");
    }
}

/// The legacy line, without `\n`.
pub(crate) fn tool_result(out: &mut impl JsonOut, r: &ToolResult<'_>) {
    out.raw(b"{\"type\":\"tool_result\"");
    timestamp(out, r.timestamp.as_ref());
    out.raw(b",\"tool_id\":");
    out.string(&r.tool_id);
    status(out, r.status);
    if let Some(output) = &r.output {
        out.raw(b",\"output\":");
        out.string(output);
    }
    error(out, r.error.as_ref());
    out.raw(b"}");
}

/// The start frame, without `\n`.
pub(crate) fn start(out: &mut impl JsonOut, s: &ToolResultStart<'_>) {
    start_parts(
        out,
        s.timestamp.as_ref(),
        &s.tool_id,
        s.status,
        s.total_bytes,
        s.error.as_ref(),
    );
}

/// The start frame from its parts, without `\n`.
pub(crate) fn start_parts(
    out: &mut impl JsonOut,
    ts: Option<&Text<'_>>,
    tool_id: &str,
    st: Status,
    total_bytes: u64,
    err: Option<&ToolError<'_>>,
) {
    out.raw(b"{\"type\":\"tool_result_start\"");
    timestamp(out, ts);
    out.raw(b",\"tool_id\":");
    out.string(tool_id);
    status(out, st);
    out.raw(b",\"total_bytes\":");
    out.number(total_bytes);
    error(out, err);
    out.raw(b"}");
}

/// A chunk frame up to the `data` value (excluded).
pub(crate) fn chunk_head(out: &mut impl JsonOut, tool_id: &str, seq: u64) {
    out.raw(b"{\"type\":\"tool_result_chunk\",\"tool_id\":");
    out.string(tool_id);
    out.raw(b",\"seq\":");
    out.number(seq);
    out.raw(b",\"data\":");
}

/// Bytes of a chunk frame around its data: the head, the data's quotes and
/// the closing brace.
pub(crate) fn chunk_envelope_len(tool_id: &str, seq: u64) -> usize {
    let mut len = Measure::new(usize::MAX);
    chunk_head(&mut len, tool_id, seq);
    len.len.saturating_add(3)
}

/// The end frame, without `\n`.
pub(crate) fn end(out: &mut impl JsonOut, e: &ToolResultEnd<'_>) {
    end_parts(out, &e.tool_id, e.chunks, e.total_bytes);
}

/// The end frame from its parts, without `\n`.
pub(crate) fn end_parts(out: &mut impl JsonOut, tool_id: &str, chunks: u64, total_bytes: u64) {
    out.raw(b"{\"type\":\"tool_result_end\",\"tool_id\":");
    out.string(tool_id);
    out.raw(b",\"chunks\":");
    out.number(chunks);
    out.raw(b",\"total_bytes\":");
    out.number(total_bytes);
    out.raw(b"}");
}
