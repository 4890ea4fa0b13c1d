//! Hostile line streams: valid ACP and stream-json traffic mixed with what
//! misbehaving peers and attackers send, cut into reads by the fuzzer.

use alloc::vec::Vec;
use core::ops::Range;

use ::arbitrary::{Arbitrary, Result, Unstructured};

mod builder;

/// What one line of a [`HostileStream`] is, and so what a handler reading
/// it should make of it.
///
/// Every line but [`Oversized`](Self::Oversized) fits the configured
/// [`max_line_len`](HostileConfig::max_line_len) (its `\n` excluded, the
/// `\r` of a CRLF ending counted, as a line splitter counts); a line
/// generated as another kind that came out longer is reported as
/// `Oversized`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LineKind {
    /// A valid ACP message (any request, notification, response or error
    /// with typed params or result), ending in `\n`. It decodes, and its
    /// typed params decode.
    Message,
    /// A valid ACP message ending in `\r\n`, as Windows peers write it: it
    /// decodes once the `\r` is stripped.
    Crlf,
    /// A valid request reusing the id of an earlier request of the stream
    /// (while that one may still be pending).
    DuplicateId,
    /// A valid response or error response to an id no earlier request of
    /// the stream carried.
    UnknownId,
    /// A valid message using what a later protocol version may add: an
    /// unknown `sessionUpdate`, content `type`, enum value or method. It
    /// decodes, to the `Unknown` variants.
    UnknownVariant,
    /// A stream-json event (Gemini CLI's headless output), not ACP.
    Event,
    /// A frame of an intact chunked tool-result transfer
    /// (`tool_result_start`, `_chunk`, `_end`, or the one legacy
    /// `tool_result` line when the result fits a frame); transfers
    /// interleave with each other (their `tool_id`s may even collide) and
    /// with other lines.
    ChunkFrame,
    /// A frame of a broken transfer: one frame dropped, repeated or moved,
    /// the start or the end missing, or an end with wrong counts.
    BrokenFrame,
    /// A line longer than [`max_line_len`](HostileConfig::max_line_len), by
    /// up to half of it: a message with a long text, a deep nesting or any
    /// other kind that came out too long. A line splitter with that limit
    /// reports it as too long and goes on with the next line.
    Oversized,
    /// A message with invalid UTF-8 bytes inserted (`0xFF`, a lone
    /// continuation byte, an overlong or truncated sequence, a surrogate).
    InvalidUtf8,
    /// Text a CLI prints on stdout, not JSON: `Loaded cached credentials.`,
    /// debug logs, ANSI colours, a message cut short.
    Stray,
    /// An empty line, or one of spaces and tabs, or a lone `\r`.
    Blank,
    /// A notification (method `_deep`) whose params nest arrays and objects
    /// up to [`max_depth`](HostileConfig::max_depth) deep: valid JSON,
    /// deeper than `serde_json`'s recursion limit of 128.
    DeepNesting,
    /// The last line of the stream, cut short: no `\n` at the end, as when
    /// the peer dies mid-write.
    Truncated,
}

/// Settings of a [`HostileStream`].
///
/// The defaults keep a stream small (a few KiB to a few hundred KiB) so a
/// fuzzer runs thousands of them a second.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostileConfig {
    /// The line limit of the handler under test: [`LineKind::Oversized`]
    /// lines are longer, every other line fits. Default 4 KiB
    /// ([`DEFAULT_MAX_LINE_LEN`](Self::DEFAULT_MAX_LINE_LEN)).
    pub max_line_len: usize,
    /// The most pieces in a stream: lines, and chunked transfers, whose
    /// frames (up to a dozen) come on top. Default 64.
    pub max_lines: usize,
    /// The deepest nesting of a [`LineKind::DeepNesting`] line. Default 256.
    pub max_depth: usize,
    /// The largest read the stream is cut into. Default 4 KiB.
    pub max_read: usize,
}

impl HostileConfig {
    /// The default [`max_line_len`](Self::max_line_len): 4 KiB.
    pub const DEFAULT_MAX_LINE_LEN: usize = 4096;

    /// Sets [`max_line_len`](Self::max_line_len) (at least 512, so a
    /// chunked transfer's frames fit).
    #[must_use]
    pub fn with_max_line_len(mut self, max_line_len: usize) -> Self {
        self.max_line_len = max_line_len.max(512);
        self
    }

    /// Sets [`max_lines`](Self::max_lines).
    #[must_use]
    pub fn with_max_lines(mut self, max_lines: usize) -> Self {
        self.max_lines = max_lines;
        self
    }

    /// Sets [`max_depth`](Self::max_depth).
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// Sets [`max_read`](Self::max_read) (at least 1).
    #[must_use]
    pub fn with_max_read(mut self, max_read: usize) -> Self {
        self.max_read = max_read.max(1);
        self
    }
}

impl Default for HostileConfig {
    fn default() -> Self {
        Self {
            max_line_len: Self::DEFAULT_MAX_LINE_LEN,
            max_lines: 64,
            max_depth: 256,
            max_read: 4096,
        }
    }
}

/// One line of a [`HostileStream`]: its kind and its bytes as written,
/// terminator (`\n` or `\r\n`) included, or none for
/// [`LineKind::Truncated`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostileLine<'s> {
    /// What the line is.
    pub kind: LineKind,
    /// The bytes as written.
    pub bytes: &'s [u8],
}

/// A byte stream for a bridge's input: valid ACP messages and stream-json
/// events mixed with every [`LineKind`] of trouble real peers and attackers
/// send, cut into reads at points the fuzzer chooses.
///
/// Generated from fuzzer input with [`HostileStream::generate`], or with
/// the default [`HostileConfig`] through [`Arbitrary`]. Feed
/// [`reads`](Self::reads) to the handler under test one by one;
/// [`lines`](Self::lines) says what each line was, so a target can assert
/// more than "no panic" (valid messages decode, oversized lines are
/// reported once, the handler's state stays bounded, …).
///
/// A downstream fuzz target: the bridge's input loop (`handle`) driven by
/// the stream, asserting what it must hold. In the fuzz crate the body of
/// `fuzz_one` is `libfuzzer_sys::fuzz_target!(|stream: HostileStream| …)`;
/// here it runs on a fixed buffer.
///
/// ```
/// use acp_codec::acp::Mode;
/// use acp_codec::acp::decode_line;
/// use acp_codec::fuzzing::{HostileStream, LineKind};
/// use acp_codec::LineSplitter;
/// use arbitrary::{Arbitrary, Unstructured};
///
/// /// The handler under test: how many lines it understood.
/// fn handle(line: &str, understood: &mut usize) {
///     *understood += usize::from(decode_line(line, Mode::Lenient).is_ok());
/// }
///
/// fn fuzz_one(stream: HostileStream) {
///     let (mut splitter, mut buf, mut understood) = (LineSplitter::with_max_line_len(4096), Vec::new(), 0);
///     for read in stream.reads() {
///         buf.extend_from_slice(read);
///         let mut lines = splitter.lines(&buf);
///         lines.by_ref().flatten().for_each(|line| handle(line.as_str(), &mut understood));
///         let consumed = lines.consumed();
///         buf.drain(..consumed);
///     }
///     let valid = stream.lines().filter(|l| l.kind == LineKind::Message).count();
///     assert!(understood >= valid, "a valid message was not understood");
/// }
///
/// let data: Vec<u8> = (0..8192u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
/// let stream = HostileStream::arbitrary(&mut Unstructured::new(&data))?;
/// assert!(stream.lines().any(|l| l.kind == LineKind::Message));
/// fuzz_one(stream);
/// # Ok::<(), arbitrary::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostileStream {
    bytes: Vec<u8>,
    lines: Vec<(LineKind, Range<usize>)>,
    /// Where each read ends, increasing, the last one at `bytes.len()`.
    read_ends: Vec<usize>,
}

impl HostileStream {
    /// Generates a stream from fuzzer input.
    ///
    /// # Errors
    ///
    /// Only the errors of [`Unstructured`] (such as a choice out of an
    /// empty list); running out of input ends the stream early instead.
    pub fn generate(u: &mut Unstructured<'_>, config: &HostileConfig) -> Result<Self> {
        builder::build(u, config)
    }

    /// The whole stream.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The lines, in order, with their kinds.
    pub fn lines(&self) -> impl Iterator<Item = HostileLine<'_>> + '_ {
        self.lines.iter().filter_map(|(kind, range)| {
            Some(HostileLine {
                kind: *kind,
                bytes: self.bytes.get(range.clone())?,
            })
        })
    }

    /// The stream as the reads a handler receives: consecutive pieces,
    /// each at least one byte, that concatenate to [`bytes`](Self::bytes)
    /// and split it anywhere (inside a line, a UTF-8 character, a `\r\n`).
    pub fn reads(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let starts = core::iter::once(0).chain(self.read_ends.iter().copied());
        starts
            .zip(self.read_ends.iter().copied())
            .filter_map(|(start, end)| self.bytes.get(start..end))
    }

    /// Appends a line; returns its kind, [`LineKind::Oversized`] if it came
    /// out longer than `max_line_len` (its `\n` excluded; a line splitter
    /// counts the `\r` of a CRLF ending).
    fn push_line(&mut self, kind: LineKind, line: &[u8], max_line_len: usize) -> LineKind {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let kind = if body.len() > max_line_len {
            LineKind::Oversized
        } else {
            kind
        };
        let start = self.bytes.len();
        self.bytes.extend_from_slice(line);
        self.lines.push((kind, start..self.bytes.len()));
        kind
    }

    /// Chooses the read boundaries.
    fn cut(&mut self, u: &mut Unstructured<'_>, max_read: usize) -> Result<()> {
        let len = self.bytes.len();
        let mut at = 0usize;
        while at < len {
            let left = len.saturating_sub(at);
            let size = if u.is_empty() {
                left
            } else {
                match u.choose_index(4)? {
                    0 => 1,
                    1 => u.int_in_range(2..=16)?,
                    _ => u.int_in_range(1..=max_read.max(1))?,
                }
            };
            at = at.saturating_add(size.min(left));
            self.read_ends.push(at);
        }
        Ok(())
    }
}

/// The stream with the default [`HostileConfig`].
impl<'u> Arbitrary<'u> for HostileStream {
    fn arbitrary(u: &mut Unstructured<'u>) -> Result<Self> {
        Self::generate(u, &HostileConfig::default())
    }
}
