//! Hostile line streams: valid ACP and stream-json traffic mixed with what
//! misbehaving peers and attackers send, cut into reads by the fuzzer.

use alloc::borrow::Cow;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use ::arbitrary::{Arbitrary, Result, Unstructured};

use crate::acp::{
    encode_error, encode_notification, encode_request, encode_response, ContentBlock, ContentChunk,
    Message, NotificationParams, PromptRequest, RequestId, RequestParams, ResponseResult, RpcError,
    SessionNotification, SessionUpdate, TextContent, ToolCall, ToolKind,
};
use crate::chunk::{ChunkEncoder, ToolResultEnd};
use crate::stream_json::{Event, Status, Text, ToolResult};

use crate::acp::leaf::{future_object, future_word, raw, text};

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
/// use acp_codec::acp::decode_line;
/// use acp_codec::fuzzing::{HostileStream, LineKind};
/// use acp_codec::LineSplitter;
/// use arbitrary::{Arbitrary, Unstructured};
///
/// /// The handler under test: how many lines it understood.
/// fn handle(line: &str, understood: &mut usize) {
///     *understood += usize::from(decode_line(line).is_ok());
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
        let mut g = Builder {
            config,
            out: Self::default(),
            request_ids: Vec::new(),
            transfers: Vec::new(),
            line: Vec::new(),
        };
        let mut steps = 0usize;
        while steps < config.max_lines && !u.is_empty() {
            steps = steps.saturating_add(1);
            let open = g.transfers.len();
            if open > 0 && u.ratio(1u8, 2)? {
                let i = u.choose_index(open)?;
                g.next_frame(i);
            } else {
                g.piece(u)?;
            }
        }
        // What is left of the open transfers goes out in order.
        while !g.transfers.is_empty() {
            g.next_frame(0);
        }
        if u.ratio(1u8, 8)? {
            g.truncated(u)?;
        }
        g.out.cut(u, config.max_read)?;
        Ok(g.out)
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

/// Lines a CLI prints on stdout beside its JSON.
const STRAY: &[&str] = &[
    "Loaded cached credentials.",
    "Data collection is disabled.",
    "[DEBUG] [MemoryDiscovery] Loading server hierarchical memory for CWD: /home/u/p",
    "(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.",
    "\u{1b}[33mWarning:\u{1b}[0m falling back to API key",
    "Error: spawn rg ENOENT",
    "undefined",
];

/// Invalid UTF-8: `0xFF`, a lone continuation byte, an overlong `/`, a
/// truncated three-byte sequence, a surrogate, a code point past U+10FFFF.
const BAD_UTF8: &[&[u8]] = &[
    &[0xFF],
    &[0x80],
    &[0xC0, 0xAF],
    &[0xE2, 0x98],
    &[0xED, 0xA0, 0x80],
    &[0xF4, 0x90, 0x80, 0x80],
];

/// Transfer ids, few so that transfers collide.
const TOOL_IDS: &[&str] = &["run_shell_command-1-0", "read_file-2-0", "t"];

struct Builder<'c> {
    config: &'c HostileConfig,
    out: HostileStream,
    request_ids: Vec<RequestId<'static>>,
    /// The frames still to send of each open transfer, with their kind.
    transfers: Vec<(LineKind, VecDeque<Vec<u8>>)>,
    /// Scratch line.
    line: Vec<u8>,
}

impl Builder<'_> {
    fn emit(&mut self, kind: LineKind) -> LineKind {
        let kind = self
            .out
            .push_line(kind, &self.line, self.config.max_line_len);
        self.line.clear();
        kind
    }

    /// Emits a request line and remembers its id, unless it came out too
    /// long (a handler never sees it).
    fn emit_request(&mut self, kind: LineKind, id: Option<RequestId<'static>>) {
        if self.emit(kind) != LineKind::Oversized {
            self.request_ids.extend(id);
        }
    }

    fn next_frame(&mut self, i: usize) {
        let Some((kind, frames)) = self.transfers.get_mut(i) else {
            return;
        };
        let kind = *kind;
        match frames.pop_front() {
            Some(frame) => {
                self.out.push_line(kind, &frame, self.config.max_line_len);
            }
            None => {
                self.transfers.remove(i);
            }
        }
    }

    /// One piece: a line, or the start of a transfer.
    fn piece(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        match u.choose_index(15)? {
            0..=2 => self.message(u),
            3 => self.crlf(u),
            4 => self.duplicate_id(u),
            5 => self.unknown_id(u),
            6 => self.unknown_variant(u),
            7 => self.event(u),
            8 => self.transfer(u),
            9 => self.oversized(u),
            10 => self.invalid_utf8(u),
            11 => self.stray(u),
            12 => {
                self.blank(u)?;
                Ok(())
            }
            13 => self.deep(u),
            _ => self.transfer(u),
        }
    }

    /// Encodes a generated message into `self.line`: the id if it is a
    /// request, or `None` if it did not encode.
    fn encode_message(
        &mut self,
        u: &mut Unstructured<'_>,
    ) -> Result<Option<Option<RequestId<'static>>>> {
        let message = Message::arbitrary(u)?;
        let id = match &message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        Ok(message.encode(&mut self.line).is_ok().then_some(id))
    }

    fn message(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        if let Some(id) = self.encode_message(u)? {
            self.emit_request(LineKind::Message, id);
        }
        Ok(())
    }

    fn crlf(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        if let Some(id) = self.encode_message(u)? {
            self.line.pop();
            self.line.extend_from_slice(b"\r\n");
            self.emit_request(LineKind::Crlf, id);
        }
        Ok(())
    }

    fn duplicate_id(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let Ok(id) = u.choose(&self.request_ids).cloned() else {
            return self.message(u);
        };
        let params = RequestParams::arbitrary(u)?;
        if encode_request(&id, &params, &mut self.line).is_ok() {
            self.emit_request(LineKind::DuplicateId, Some(id));
        }
        Ok(())
    }

    fn unknown_id(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let mut n = u64::arbitrary(u)?;
        let mut id = RequestId::Str(Cow::Owned(alloc::format!("never-sent-{n}")));
        while self.request_ids.contains(&id) {
            n = n.wrapping_add(1);
            id = RequestId::Str(Cow::Owned(alloc::format!("never-sent-{n}")));
        }
        let encoded = if u.arbitrary()? {
            encode_response(&id, &ResponseResult::arbitrary(u)?, &mut self.line)
        } else {
            encode_error(&id, &RpcError::arbitrary(u)?, &mut self.line)
        };
        if encoded.is_ok() {
            self.emit(LineKind::UnknownId);
        }
        Ok(())
    }

    fn unknown_variant(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let session_id = text(u)?;
        let update = match u.choose_index(4)? {
            0 => SessionUpdate::Unknown(future_object(u, "sessionUpdate")?),
            1 => SessionUpdate::AgentMessageChunk(ContentChunk {
                content: ContentBlock::Unknown(future_object(u, "type")?),
                message_id: None,
                meta: None,
            }),
            2 => SessionUpdate::ToolCall(ToolCall {
                tool_call_id: text(u)?,
                title: text(u)?,
                name: None,
                kind: Some(ToolKind::Unknown(future_word(u)?)),
                status: None,
                content: None,
                locations: None,
                raw_input: None,
                raw_output: None,
                meta: None,
            }),
            _ => {
                let params = RequestParams::Unknown {
                    method: Cow::Owned(alloc::format!("session/{}", future_word(u)?)),
                    params: Some(raw(u)?),
                };
                if encode_request(&RequestId::Number(u.arbitrary()?), &params, &mut self.line)
                    .is_ok()
                {
                    self.emit(LineKind::UnknownVariant);
                }
                return Ok(());
            }
        };
        let params = NotificationParams::SessionUpdate(SessionNotification {
            session_id,
            update,
            meta: None,
        });
        if encode_notification(&params, &mut self.line).is_ok() {
            self.emit(LineKind::UnknownVariant);
        }
        Ok(())
    }

    fn event(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let event = Event::arbitrary(u)?;
        if event.encode(&mut self.line).is_ok() {
            self.emit(LineKind::Event);
        }
        Ok(())
    }

    /// A chunked transfer, intact or broken, whose frames go out between
    /// the following pieces.
    fn transfer(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let tool_id = if u.ratio(3u8, 4)? {
            Cow::Borrowed(*u.choose(TOOL_IDS)?)
        } else {
            text(u)?
        };
        let mut output = String::arbitrary(u)?;
        let filler = u.int_in_range(0..=600usize)?;
        output.extend(core::iter::repeat_n('x', filler));
        let result = ToolResult {
            timestamp: None,
            tool_id: Text(tool_id),
            status: if u.arbitrary()? {
                Status::Success
            } else {
                Status::Error
            },
            output: Some(Text(Cow::Owned(output))),
            error: None,
        };
        let min = ChunkEncoder::min_frame_len(&result);
        let max = self.config.max_line_len.max(min);
        let frame_len = u.int_in_range(min..=max.min(min.saturating_add(256)))?;
        let Ok(mut encoder) = ChunkEncoder::new(&result, frame_len) else {
            return Ok(());
        };
        let chunks = encoder.chunks();
        let mut frames = VecDeque::new();
        let mut frame = Vec::new();
        while encoder.next_frame(&mut frame).is_some() {
            frames.push_back(core::mem::take(&mut frame));
        }
        let broken = u.ratio(1u8, 3)? && frames.len() > 1;
        if broken {
            break_transfer(u, &mut frames, &result, chunks)?;
        }
        let kind = if broken {
            LineKind::BrokenFrame
        } else {
            LineKind::ChunkFrame
        };
        self.transfers.push((kind, frames));
        Ok(())
    }

    fn oversized(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let limit = self.config.max_line_len;
        let target = limit
            .saturating_add(1)
            .saturating_add(u.int_in_range(0..=limit / 2)?);
        let session_id = text(u)?;
        let request = u.arbitrary::<bool>()?;
        let id = RequestId::Number(u.arbitrary()?);
        let mut pad = String::new();
        for _ in 0..2 {
            self.line.clear();
            let block = ContentBlock::Text(TextContent {
                annotations: None,
                text: Cow::Borrowed(&pad),
                meta: None,
            });
            let encoded = if request {
                let prompt = RequestParams::Prompt(PromptRequest {
                    session_id: session_id.clone(),
                    prompt: vec![block],
                    meta: None,
                });
                encode_request(&id, &prompt, &mut self.line)
            } else {
                let update = NotificationParams::SessionUpdate(SessionNotification {
                    session_id: session_id.clone(),
                    update: SessionUpdate::AgentMessageChunk(ContentChunk {
                        content: block,
                        message_id: None,
                        meta: None,
                    }),
                    meta: None,
                });
                encode_notification(&update, &mut self.line)
            };
            if encoded.is_err() {
                self.line.clear();
                return Ok(());
            }
            let short = target.saturating_sub(self.line.len().saturating_sub(1));
            pad.extend(core::iter::repeat_n('x', short));
        }
        self.emit(LineKind::Oversized);
        Ok(())
    }

    fn invalid_utf8(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        if self.encode_message(u)?.is_none() {
            return Ok(());
        }
        self.line.pop();
        let at = u.int_in_range(0..=self.line.len())?;
        let bad = u.choose(BAD_UTF8)?;
        let tail = self.line.split_off(at);
        self.line.extend_from_slice(bad);
        self.line.extend_from_slice(&tail);
        if core::str::from_utf8(&self.line).is_ok() {
            self.line.push(0xFF);
        }
        self.line.push(b'\n');
        self.emit(LineKind::InvalidUtf8);
        Ok(())
    }

    fn stray(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        match u.choose_index(3)? {
            0 => self.line.extend_from_slice(u.choose(STRAY)?.as_bytes()),
            1 => {
                // A log prefix keeps whatever follows from being JSON.
                self.line.extend_from_slice(b"[DEBUG] ");
                let t = String::arbitrary(u)?;
                self.line
                    .extend(t.bytes().map(|b| if b == b'\n' { b' ' } else { b }));
            }
            _ => {
                // A message cut short: an object never closed.
                if self.encode_message(u)?.is_none() {
                    return Ok(());
                }
                let mut at = u.int_in_range(1..=self.line.len().saturating_sub(2).max(1))?;
                // Cut on a character boundary, so the line stays UTF-8 (an
                // invalid one is `LineKind::InvalidUtf8`'s job).
                while at > 1 && self.line.get(at).is_some_and(|b| b & 0xC0 == 0x80) {
                    at = at.saturating_sub(1);
                }
                self.line.truncate(at);
            }
        }
        // A trailing `\r` would be stripped as a CRLF ending.
        while self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        self.line.push(b'\n');
        self.emit(LineKind::Stray);
        Ok(())
    }

    fn blank(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let blank: &[u8] = u.choose(&[&b"\n"[..], b"\r\n", b"  \t \n", b"\t\r\n"])?;
        self.line.extend_from_slice(blank);
        self.emit(LineKind::Blank);
        Ok(())
    }

    fn deep(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let depth = u.int_in_range(1..=self.config.max_depth.max(1))?;
        let objects = u.arbitrary::<bool>()?;
        self.line
            .extend_from_slice(br#"{"jsonrpc":"2.0","method":"_deep","params":"#);
        for _ in 0..depth {
            self.line
                .extend_from_slice(if objects { br#"{"a":"# } else { b"[" });
        }
        self.line.extend_from_slice(b"0");
        for _ in 0..depth {
            self.line.push(if objects { b'}' } else { b']' });
        }
        self.line.extend_from_slice(b"}\n");
        self.emit(LineKind::DeepNesting);
        Ok(())
    }

    /// A message cut short at the end of the stream.
    fn truncated(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        if self.encode_message(u)?.is_none() {
            return Ok(());
        }
        let at = u.int_in_range(1..=self.line.len().saturating_sub(2).max(1))?;
        self.line.truncate(at);
        while self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        self.emit(LineKind::Truncated);
        Ok(())
    }
}

/// Breaks a transfer of at least two frames: drops, repeats or swaps a
/// frame, or replaces the end with wrong counts.
fn break_transfer(
    u: &mut Unstructured<'_>,
    frames: &mut VecDeque<Vec<u8>>,
    result: &ToolResult<'_>,
    chunks: u64,
) -> Result<()> {
    let last = frames.len().saturating_sub(1);
    match u.choose_index(4)? {
        0 => {
            let i = u.int_in_range(0..=last)?;
            frames.remove(i);
        }
        1 => {
            let i = u.int_in_range(0..=last)?;
            if let Some(f) = frames.get(i).cloned() {
                frames.insert(i, f);
            }
        }
        2 => {
            let i = u.int_in_range(0..=last.saturating_sub(1))?;
            frames.swap(i, i.saturating_add(1));
        }
        _ => {
            let total = result.output.as_ref().map_or(0, |o| o.len());
            let end = Event::ToolResultEnd(ToolResultEnd {
                tool_id: result.tool_id.clone(),
                chunks: chunks.wrapping_add(u.int_in_range(1..=3)?),
                total_bytes: u64::try_from(total)
                    .unwrap_or(u64::MAX)
                    .wrapping_sub(u.int_in_range(0..=1)?),
            });
            let mut line = Vec::new();
            if end.encode(&mut line).is_ok() {
                frames.pop_back();
                frames.push_back(line);
            }
        }
    }
    Ok(())
}
