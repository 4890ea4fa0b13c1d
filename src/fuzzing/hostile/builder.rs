//! How a [`HostileStream`](super::HostileStream) is built: valid lines,
//! hostile ones, chunked transfers and their breakage.

use alloc::borrow::Cow;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use ::arbitrary::{Arbitrary, Result, Unstructured};

use super::{HostileConfig, HostileStream, LineKind};
use crate::acp::{
    encode_error, encode_notification, encode_request, encode_response, ContentBlock, ContentChunk,
    Extra, Message, NotificationParams, PromptRequest, RequestId, RequestParams, ResponseResult,
    RpcError, SessionNotification, SessionUpdate, TextContent, ToolCall, ToolKind,
};
use crate::chunk::{ChunkEncoder, ToolResultEnd};
use crate::stream_json::{Event, Status, Text, ToolResult};

use crate::acp::leaf::{future_object, future_word, raw, text};

/// A stream of at most `config.max_lines` lines drawn from `u`, cut into
/// reads.
pub(super) fn build(u: &mut Unstructured<'_>, config: &HostileConfig) -> Result<HostileStream> {
    let mut g = Builder::new(config);
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

impl<'c> Builder<'c> {
    fn new(config: &'c HostileConfig) -> Self {
        Self {
            config,
            out: HostileStream::default(),
            request_ids: Vec::new(),
            transfers: Vec::new(),
            line: Vec::new(),
        }
    }

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
                extra: Extra::new(),
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
                extra: Extra::new(),
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
            extra: Extra::new(),
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
                extra: Extra::new(),
            });
            let encoded = if request {
                let prompt = RequestParams::Prompt(PromptRequest {
                    session_id: session_id.clone(),
                    prompt: vec![block],
                    meta: None,
                    extra: Extra::new(),
                });
                encode_request(&id, &prompt, &mut self.line)
            } else {
                let update = NotificationParams::SessionUpdate(SessionNotification {
                    session_id: session_id.clone(),
                    update: SessionUpdate::AgentMessageChunk(ContentChunk {
                        content: block,
                        message_id: None,
                        meta: None,
                        extra: Extra::new(),
                    }),
                    meta: None,
                    extra: Extra::new(),
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

    /// A message cut short at the end of the stream, on a character
    /// boundary (the text stays UTF-8: a peer that dies mid-write, not bad
    /// bytes, which [`LineKind::InvalidUtf8`] covers).
    fn truncated(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        if self.encode_message(u)?.is_none() {
            return Ok(());
        }
        let mut at = u.int_in_range(1..=self.line.len().saturating_sub(2).max(1))?;
        while at > 1 && self.line.get(at).is_some_and(|&b| b & 0xC0 == 0x80) {
            at = at.saturating_sub(1);
        }
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
