//! The receiver side: frames in, rebuilt tool results out.

use alloc::string::String;
use alloc::vec::Vec;

use super::{direct, FrameKind, ToolResultChunk, ToolResultEnd, ToolResultStart};
use super::{ChunkError, ChunkErrorKind, LineError};
use crate::limits::Limits;
use crate::stream_json::{Event, Status, Text, ToolError, ToolResult};
use crate::tally::Tally;

/// Most ids of aborted transfers remembered, so their remaining frames are
/// dropped quietly instead of each being reported as unknown.
const MAX_ABORTED_REMEMBERED: usize = 1024;

/// What to do after [`Reassembler::push`].
#[derive(Debug, Clone)]
#[must_use = "hand `Event` and `Complete` to the application"]
pub enum Pushed<'a> {
    /// Not a chunk frame: hand it to the application as is.
    Event(Event<'a>),
    /// A frame was taken into an open transfer; nothing to do yet.
    Consumed,
    /// A frame of a transfer aborted earlier (already reported), dropped.
    Dropped,
    /// A transfer completed: the event a legacy `tool_result` line would have
    /// given (`timestamp`, `status` and `error` from its start frame).
    Complete(ToolResult<'static>),
}

#[derive(Debug)]
struct Transfer {
    tool_id: String,
    timestamp: Option<String>,
    status: Status,
    error: Option<ToolError<'static>>,
    declared: u64,
    next_seq: u64,
    output: String,
}

/// The sans-IO state machine that rebuilds chunked tool results.
///
/// [`push`](Self::push) every decoded event (or [`push_line`](Self::push_line)
/// every line): chunk frames are consumed, other events come back as
/// [`Pushed::Event`] to hand on, and a finished transfer comes back as
/// [`Pushed::Complete`] with the rebuilt legacy [`ToolResult`]. At the end
/// of input call [`finish`](Self::finish); after the agent crashed or was
/// restarted, [`reset`](Self::reset).
///
/// # Limits
///
/// From [`Limits`] (defaults in [`limits`](crate::limits)):
/// - `max_result_bytes` (50 MiB): one output; a transfer that would pass it,
///   or declares more in `total_bytes`, is aborted with
///   [`ChunkErrorKind::ResultTooLarge`].
/// - `max_buffered_bytes` (50 MiB): the capacity of all open transfers'
///   buffers together. A declared `total_bytes` is a hint: the buffer is
///   reserved up to it at the start, but never beyond what is left of the
///   budget; a transfer that needs more than is left is aborted with
///   [`ChunkErrorKind::BudgetExceeded`].
/// - `max_chunks_per_transfer` (65,536) and `max_open_transfers` (32):
///   [`ChunkErrorKind::TooManyChunks`], [`ChunkErrorKind::TooManyTransfers`].
///
/// # Invariants
///
/// - Each transfer accumulates into one buffer, reserved once from the
///   declared size: at most 3 allocations per transfer (id, timestamp,
///   output) when the declaration is right, none per chunk, even for
///   escaped data, which is unescaped straight into the buffer.
/// - [`buffered_bytes`](Self::buffered_bytes) never exceeds
///   `max_buffered_bytes`.
/// - Every fault is a typed [`ChunkError`] that names the transfer. After
///   it the faulty transfer is gone (its remaining frames are
///   [`Pushed::Dropped`]), other transfers go on, and the next transfer with
///   the same id starts clean.
///
/// ```
/// use acp_codec::chunk::{Pushed, Reassembler};
/// use acp_codec::ChunkErrorKind;
///
/// let mut r = Reassembler::new();
/// let lines = [
///     r#"{"type":"tool_result_start","timestamp":"t0","tool_id":"a","status":"success","total_bytes":6}"#,
///     r#"{"type":"message","timestamp":"t1","role":"assistant","content":"working"}"#,
///     r#"{"type":"tool_result_chunk","tool_id":"a","seq":0,"data":"abc"}"#,
///     r#"{"type":"tool_result_chunk","tool_id":"a","seq":1,"data":"d\nf"}"#,
///     r#"{"type":"tool_result_end","tool_id":"a","chunks":2,"total_bytes":6}"#,
/// ];
/// let mut handed_on = 0;
/// for line in lines {
///     match r.push_line(line)? {
///         Pushed::Event(_) => handed_on += 1,
///         Pushed::Complete(result) => {
///             assert_eq!(result.output.as_deref(), Some("abcd\nf"));
///             assert_eq!(result.timestamp.as_deref(), Some("t0"));
///         }
///         _ => {}
///     }
/// }
/// assert_eq!(handed_on, 1);
///
/// // A stream that stops mid-transfer.
/// r.push_line(lines[0])?;
/// r.push_line(lines[2])?;
/// let open = r.finish();
/// assert_eq!(open.len(), 1);
/// assert_eq!(open[0].kind(), ChunkErrorKind::Truncated { received: 3, chunks: 1 });
/// assert_eq!(r.open_transfers(), 0);
/// # Ok::<(), acp_codec::Error>(())
/// ```
#[derive(Debug)]
pub struct Reassembler {
    limits: Limits,
    open: Vec<Transfer>,
    aborted: Vec<String>,
    /// A buffer handed back by [`Reassembler::recycle`], counted in
    /// `buffered`.
    spare: Option<String>,
    /// The capacity of every open transfer's buffer and of `spare`.
    buffered: Tally,
}

impl Default for Reassembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Reassembler {
    /// A reassembler with the default [`Limits`].
    pub fn new() -> Self {
        Self::with_limits(&Limits::new())
    }

    /// A reassembler with these limits (`max_result_bytes`,
    /// `max_buffered_bytes`, `max_chunks_per_transfer`, `max_open_transfers`).
    pub fn with_limits(limits: &Limits) -> Self {
        Self {
            limits: *limits,
            // Allocated once here, not on the first transfer.
            open: Vec::with_capacity(limits.max_open_transfers.clamp(1, 8)),
            aborted: Vec::new(),
            spare: None,
            buffered: Tally::default(),
        }
    }

    /// Hands back the buffer of a [`Pushed::Complete`] output the
    /// application is done with, so the next transfer reuses it instead of
    /// allocating (and page-faulting in) a fresh one. One buffer is kept; it
    /// counts against `max_buffered_bytes` and is dropped whenever a transfer
    /// needs the room.
    ///
    /// ```
    /// use acp_codec::chunk::{Pushed, Reassembler};
    ///
    /// let mut r = Reassembler::new();
    /// let frames = [
    ///     r#"{"type":"tool_result_start","tool_id":"a","status":"success","total_bytes":3}"#,
    ///     r#"{"type":"tool_result_chunk","tool_id":"a","seq":0,"data":"abc"}"#,
    ///     r#"{"type":"tool_result_end","tool_id":"a","chunks":1,"total_bytes":3}"#,
    /// ];
    /// for line in frames {
    ///     if let Pushed::Complete(result) = r.push_line(line)? {
    ///         let output = result.output.unwrap().into_string();
    ///         // … use it, then:
    ///         r.recycle(output);
    ///     }
    /// }
    /// assert!(r.buffered_bytes() >= 3);
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    pub fn recycle(&mut self, mut buffer: String) {
        self.drop_spare();
        let cap = buffer.capacity();
        if cap <= self.buffered.room(self.limits.max_buffered_bytes) && cap > 0 {
            buffer.clear();
            self.buffered.add(cap);
            self.spare = Some(buffer);
        }
    }

    fn drop_spare(&mut self) {
        if let Some(s) = self.spare.take() {
            self.buffered.release(s.capacity());
        }
    }

    /// A buffer for a new transfer, reserved up to `want` within the budget.
    fn new_buffer(&mut self, want: usize) -> String {
        let mut output = match self.spare.take() {
            Some(s) => {
                self.buffered.release(s.capacity());
                s
            }
            None => String::new(),
        };
        let left = self.buffered.room(self.limits.max_buffered_bytes);
        let want = want.min(left);
        if output.capacity() > left || (output.capacity() < want && output.capacity() > 0) {
            // Too big for what is left, or too small: a fresh one is cheaper
            // than growing (which would copy nothing but still reallocate).
            output = String::new();
        }
        if output.capacity() < want && output.try_reserve_exact(want).is_err() {
            output = String::new();
        }
        self.buffered.add(output.capacity());
        output
    }

    /// The limits in force.
    pub const fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Transfers open now.
    pub fn open_transfers(&self) -> usize {
        self.open.len()
    }

    /// Bytes reserved by the open transfers' buffers (their capacity), at
    /// most `max_buffered_bytes`.
    pub const fn buffered_bytes(&self) -> usize {
        self.buffered.get()
    }

    /// Decodes one line (without `\n`) and pushes the event.
    ///
    /// A chunk line in the exact shape [`ChunkEncoder`](super::ChunkEncoder)
    /// writes, for the next `seq` of an open transfer with room, takes a
    /// fast path: its data is validated and unescaped into the buffer in
    /// one pass. Every other line, and every fault, goes through
    /// [`Event::decode`] and [`push`](Self::push), with the same results.
    ///
    /// # Errors
    ///
    /// [`LineError::Event`] if the line is not a stream-json event (nothing
    /// changes), [`LineError::Chunk`] as for [`push`](Self::push).
    pub fn push_line<'a>(&mut self, line: &'a str) -> Result<Pushed<'a>, LineError> {
        if let Some(chunk) = direct::parse(line) {
            if self.chunk_direct(&chunk) {
                return Ok(Pushed::Consumed);
            }
        }
        let event = Event::decode(line)?;
        Ok(self.push(event)?)
    }

    /// Pushes one decoded event.
    ///
    /// # Errors
    ///
    /// A [`ChunkError`] for a fault of the chunked protocol (an unknown
    /// transfer, a gap or repeat in `seq`, a count or size mismatch, a cap
    /// exceeded); the faulty transfer is aborted and its later frames
    /// dropped, everything else goes on. One exception:
    /// [`ChunkErrorKind::DuplicateStart`] reports the *old* transfer aborted; the
    /// new start was accepted and its transfer is open.
    pub fn push<'a>(&mut self, event: Event<'a>) -> Result<Pushed<'a>, ChunkError> {
        match event {
            Event::ToolResultStart(s) => self.start(s),
            Event::ToolResultChunk(c) => self.chunk(&c),
            Event::ToolResultEnd(e) => self.end(&e),
            other => Ok(Pushed::Event(other)),
        }
    }

    /// At the end of input: reports each open transfer as
    /// [`ChunkErrorKind::Truncated`] with the bytes and chunks received, frees
    /// everything and leaves the reassembler as new.
    #[must_use = "each open transfer was lost: report it"]
    pub fn finish(&mut self) -> Vec<ChunkError> {
        self.reset()
    }

    /// After the agent crashed or restarted: the same as
    /// [`finish`](Self::finish).
    ///
    /// ```
    /// use acp_codec::chunk::{Pushed, Reassembler};
    /// use acp_codec::ChunkErrorKind;
    ///
    /// let mut r = Reassembler::new();
    /// r.push_line(r#"{"type":"tool_result_start","tool_id":"t","status":"success","total_bytes":6}"#)?;
    /// r.push_line(r#"{"type":"tool_result_chunk","tool_id":"t","seq":0,"data":"abc"}"#)?;
    /// // The agent died mid-transfer: report what was lost, start over.
    /// let lost = r.reset();
    /// assert_eq!(lost.len(), 1);
    /// assert_eq!(lost[0].kind(), ChunkErrorKind::Truncated { received: 3, chunks: 1 });
    /// assert_eq!((r.open_transfers(), r.buffered_bytes()), (0, 0));
    /// // The restarted agent's transfers work as on a new reassembler.
    /// r.push_line(r#"{"type":"tool_result_start","tool_id":"t","status":"success","total_bytes":1}"#)?;
    /// r.push_line(r#"{"type":"tool_result_chunk","tool_id":"t","seq":0,"data":"z"}"#)?;
    /// let done = r.push_line(r#"{"type":"tool_result_end","tool_id":"t","chunks":1,"total_bytes":1}"#)?;
    /// assert!(matches!(done, Pushed::Complete(res) if res.output.as_deref() == Some("z")));
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    #[must_use = "each open transfer was lost: report it"]
    pub fn reset(&mut self) -> Vec<ChunkError> {
        let truncated = self
            .open
            .drain(..)
            .map(|t| {
                ChunkError::transfer(
                    t.tool_id,
                    ChunkErrorKind::Truncated {
                        received: len_u64(&t.output),
                        chunks: t.next_seq,
                    },
                )
            })
            .collect();
        self.aborted.clear();
        self.spare = None;
        self.buffered = Tally::default();
        truncated
    }

    fn find(&self, tool_id: &str) -> Option<usize> {
        self.open.iter().position(|t| t.tool_id == tool_id)
    }

    fn forget_aborted(&mut self, tool_id: &str) -> bool {
        match self.aborted.iter().position(|id| id == tool_id) {
            Some(i) => {
                self.aborted.remove(i);
                true
            }
            None => false,
        }
    }

    fn remember_aborted(&mut self, tool_id: String) {
        let cap = self
            .limits
            .max_open_transfers
            .clamp(1, MAX_ABORTED_REMEMBERED);
        if self.aborted.len() >= cap {
            self.aborted.remove(0);
        }
        self.aborted.push(tool_id);
    }

    /// Removes transfer `i`, releasing its budget.
    fn remove(&mut self, i: usize) -> Transfer {
        let t = self.open.swap_remove(i);
        self.buffered.release(t.output.capacity());
        t
    }

    /// Aborts transfer `i`: its later frames are dropped.
    fn abort(&mut self, i: usize) {
        let t = self.remove(i);
        self.remember_aborted(t.tool_id);
    }

    fn start<'a>(&mut self, s: ToolResultStart<'a>) -> Result<Pushed<'a>, ChunkError> {
        let duplicate = self.find(&s.tool_id).map(|i| {
            let old = self.remove(i);
            ChunkError::transfer(
                old.tool_id,
                ChunkErrorKind::DuplicateStart {
                    received: len_u64(&old.output),
                },
            )
        });
        self.forget_aborted(&s.tool_id);
        let limit = self.limits.max_open_transfers;
        if self.open.len() >= limit {
            let tool_id = s.tool_id.into_string();
            let e =
                ChunkError::transfer(tool_id.as_str(), ChunkErrorKind::TooManyTransfers { limit });
            self.remember_aborted(tool_id);
            return Err(e);
        }
        let max = self.limits.max_result_bytes;
        let declared = usize::try_from(s.total_bytes).unwrap_or(usize::MAX);
        if declared > max {
            let tool_id = s.tool_id.into_string();
            let e = ChunkError::transfer(
                tool_id.as_str(),
                ChunkErrorKind::ResultTooLarge {
                    size: s.total_bytes,
                    limit: max,
                },
            );
            self.remember_aborted(tool_id);
            return Err(e);
        }
        // The declaration is a hint: never reserve beyond the budget left.
        let output = self.new_buffer(declared);
        self.open.push(Transfer {
            tool_id: s.tool_id.into_string(),
            timestamp: s.timestamp.map(Text::into_string),
            status: s.status,
            error: s.error.map(ToolError::into_owned),
            declared: s.total_bytes,
            next_seq: 0,
            output,
        });
        match duplicate {
            Some(e) => Err(e),
            None => Ok(Pushed::Consumed),
        }
    }

    /// The happy path for a canonical chunk line: the next `seq` of an open
    /// transfer whose buffer has room for the data (the usual case when
    /// `total_bytes` was right). Returns `false`, having changed nothing,
    /// when the general path must decide.
    fn chunk_direct(&mut self, c: &direct::DirectChunk<'_>) -> bool {
        let Some(i) = self.find(c.tool_id) else {
            return false;
        };
        let max_chunks = self.limits.max_chunks_per_transfer;
        let max_result = self.limits.max_result_bytes;
        let Some(t) = self.open.get_mut(i) else {
            return false;
        };
        // Unescaping never lengthens the data.
        let room = t.output.len().saturating_add(c.body.len());
        if c.seq != t.next_seq
            || t.next_seq >= max_chunks
            || room > t.output.capacity()
            || room > max_result
        {
            return false;
        }
        if !direct::append(c.body, &mut t.output) {
            return false;
        }
        t.next_seq = t.next_seq.saturating_add(1);
        true
    }

    fn chunk<'a>(&mut self, c: &ToolResultChunk<'_>) -> Result<Pushed<'a>, ChunkError> {
        let Some(i) = self.find(&c.tool_id) else {
            return self.unknown(&c.tool_id, FrameKind::Chunk, false);
        };
        let limits = self.limits;
        let needs_room = self.open.get(i).is_some_and(|t| {
            t.output.len().saturating_add(c.data.as_literal().len()) > t.output.capacity()
        });
        if needs_room {
            self.drop_spare();
        }
        let Some(t) = self.open.get_mut(i) else {
            return self.unknown(&c.tool_id, FrameKind::Chunk, false);
        };
        match append(t, c, &limits, &mut self.buffered) {
            Ok(()) => Ok(Pushed::Consumed),
            Err(kind) => {
                self.abort(i);
                Err(ChunkError::transfer(c.tool_id.as_str(), kind))
            }
        }
    }

    fn end<'a>(&mut self, e: &ToolResultEnd<'_>) -> Result<Pushed<'a>, ChunkError> {
        let Some(i) = self.find(&e.tool_id) else {
            return self.unknown(&e.tool_id, FrameKind::End, true);
        };
        let t = self.remove(i);
        let received = len_u64(&t.output);
        if e.chunks != t.next_seq {
            return Err(ChunkError::transfer(
                t.tool_id,
                ChunkErrorKind::CountMismatch {
                    declared: e.chunks,
                    received: t.next_seq,
                },
            ));
        }
        if e.total_bytes != received || t.declared != received {
            let declared = if e.total_bytes != received {
                e.total_bytes
            } else {
                t.declared
            };
            return Err(ChunkError::transfer(
                t.tool_id,
                ChunkErrorKind::SizeMismatch { declared, received },
            ));
        }
        Ok(Pushed::Complete(ToolResult {
            timestamp: t.timestamp.map(Text::from),
            tool_id: Text::from(t.tool_id),
            status: t.status,
            output: Some(Text::from(t.output)),
            error: t.error,
        }))
    }

    /// A chunk or end for no open transfer: dropped if the transfer was
    /// aborted or already reported (an end forgets it), else a fault.
    fn unknown<'a>(
        &mut self,
        tool_id: &str,
        frame: FrameKind,
        is_end: bool,
    ) -> Result<Pushed<'a>, ChunkError> {
        let known = if is_end {
            self.forget_aborted(tool_id)
        } else {
            self.aborted.iter().any(|id| id == tool_id)
        };
        if known {
            Ok(Pushed::Dropped)
        } else {
            if !is_end {
                // Report the transfer once; drop the rest of its frames.
                self.remember_aborted(String::from(tool_id));
            }
            Err(ChunkError::transfer(
                tool_id,
                ChunkErrorKind::UnknownTransfer { frame },
            ))
        }
    }
}

/// Appends chunk `c` to transfer `t` (the general path: any sequence
/// number, escaped data), keeping `buffered` in step; or the fault that
/// aborts the transfer.
fn append(
    t: &mut Transfer,
    c: &ToolResultChunk<'_>,
    limits: &Limits,
    buffered: &mut Tally,
) -> Result<(), ChunkErrorKind> {
    let expected = t.next_seq;
    if c.seq > expected {
        return Err(ChunkErrorKind::SeqGap {
            expected,
            got: c.seq,
        });
    }
    if c.seq < expected {
        return Err(ChunkErrorKind::SeqRepeat {
            expected,
            got: c.seq,
        });
    }
    if expected >= limits.max_chunks_per_transfer {
        return Err(ChunkErrorKind::TooManyChunks {
            limit: limits.max_chunks_per_transfer,
        });
    }
    let invalid = ChunkErrorKind::InvalidData { seq: c.seq };
    let plain = c.data.as_plain();
    // Escaped data unescapes to at most its literal's length less the
    // quotes: when that fits the buffer, unescape in one pass with no size
    // check.
    let upper = plain.map_or_else(|| c.data.as_literal().len().saturating_sub(2), str::len);
    let room = t.output.len().saturating_add(upper);
    let add = if plain.is_some() || room <= t.output.capacity() && room <= limits.max_result_bytes {
        upper
    } else {
        c.data.unescaped_len().map_err(|_| invalid)?
    };
    grow(t, add, limits, buffered)?;
    match plain {
        Some(p) => t.output.push_str(p),
        None => c.data.push_to(&mut t.output).map_err(|_| invalid)?,
    }
    // Below `max_chunks_per_transfer`, a `u64`: one more fits.
    t.next_seq = expected.saturating_add(1);
    Ok(())
}

/// Makes room for `add` more bytes in `t`'s buffer within the limits,
/// keeping `buffered` (which counts the buffer's capacity) in step; or says
/// what went wrong, with `t` and `buffered` unchanged.
fn grow(
    t: &mut Transfer,
    add: usize,
    limits: &Limits,
    buffered: &mut Tally,
) -> Result<(), ChunkErrorKind> {
    let len = t.output.len();
    let cap = t.output.capacity();
    let max = limits.max_result_bytes;
    // A sum past `usize::MAX` is over any limit: saturating keeps it so.
    let new_len = len.saturating_add(add);
    if new_len > max {
        return Err(ChunkErrorKind::ResultTooLarge {
            size: u64::try_from(new_len).unwrap_or(u64::MAX),
            limit: max,
        });
    }
    if new_len <= cap {
        return Ok(());
    }
    let mut others = *buffered;
    others.release(cap);
    let available = others.room(limits.max_buffered_bytes);
    if new_len > available {
        return Err(ChunkErrorKind::BudgetExceeded {
            needed: new_len,
            available,
        });
    }
    // At least double (amortised appends), never past either limit.
    let target = new_len.max(cap.saturating_mul(2)).min(max).min(available);
    // `len <= new_len <= target`.
    if t.output
        .try_reserve_exact(target.saturating_sub(len))
        .is_err()
    {
        return Err(ChunkErrorKind::BudgetExceeded {
            needed: new_len,
            available,
        });
    }
    others.add(t.output.capacity());
    *buffered = others;
    Ok(())
}

fn len_u64(s: &str) -> u64 {
    u64::try_from(s.len()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
