//! A direct decoder for the hottest message, `session/update` with a
//! content chunk, a tool call or a tool call update: agents send these by
//! the hundred per turn, and one can carry megabytes of tool output.
//!
//! It covers the common shapes only and returns `None` for anything else (a
//! tag that is not the first member, a key with escapes, annotations, an
//! unexpected type, a duplicate member, a missing required one); the caller
//! then takes the general path, which also produces every error. Whenever
//! it returns `Some`, the value equals what the general path gives for the
//! same text: `tests/acp_direct.rs` checks that with proptest, and the
//! `acp_message` fuzz target on every input.
//!
//! It runs in two modes, chosen at compile time:
//! - **trusted** (`V = false`), for [`Notification::typed`]: the params are
//!   already known to be one valid JSON value (every [`RawJson`] is), so it
//!   only looks for where things end;
//! - **validating** (`V = true`), for [`decode_line`]:
//!   it reads a whole line once, checking the grammar of everything it
//!   passes (as [`Message::decode`] would) while it builds the typed value,
//!   instead of validating the line first and parsing its params again.
//!
//! [`Notification::typed`]: super::Notification::typed
//! [`decode_line`]: super::decode_line
//! [`Message::decode`]: super::Message::decode

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::content::{ContentBlock, TextContent};
use super::raw::{escape, unquote, RawJson};
use super::scan::{find_special, skip_value_within, skip_ws, special_mask, MAX_DEPTH};
use super::update::{
    Content, ContentChunk, Diff, SessionNotification, SessionUpdate, Terminal, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind,
};

/// Strings with an escape more than this many bytes past their start are
/// unescaped while they are scanned (see [`Cur::unescape_long`]).
const LONG: usize = 4096;

/// The offset after the string whose opening quote is at `i`, and whether
/// it has escapes; `None` at a raw control character (not JSON) or the end
/// of the text. Escapes are skipped, not checked: whoever unescapes the
/// string checks them.
#[inline]
fn str_end(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i.checked_add(1)?;
    let mut escaped = false;
    loop {
        let n = find_special(b, j)?;
        match b.get(n)? {
            b'"' => return Some((n.checked_add(1)?, escaped)),
            b'\\' => {
                escaped = true;
                // Past the escaped byte; a `\u` escape's hex digits are
                // never special.
                j = n.checked_add(2)?;
            }
            _ => return None,
        }
    }
}

/// [`find_special`] for text where the special byte is usually within the
/// next eight (a key, a tag): one word, checked inline.
#[inline(always)]
fn short_special(b: &[u8], from: usize) -> Option<usize> {
    if let Some(word) = b.get(from..).and_then(|r| r.first_chunk::<8>()) {
        let m = special_mask(u64::from_le_bytes(*word));
        if m != 0 {
            return from.checked_add((m.trailing_zeros() / 8) as usize);
        }
    }
    find_special(b, from)
}

/// The offset after the value that starts at `i` (trusted mode: the text
/// is valid JSON).
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => str_end(b, i).map(|(end, _)| end),
        b'{' | b'[' => {
            let mut depth = 0u32;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = str_end(b, j)?.0;
                        continue;
                    }
                    b'{' | b'[' => depth = depth.checked_add(1)?,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return j.checked_add(1);
                        }
                    }
                    _ => {}
                }
                j = j.checked_add(1)?;
            }
        }
        _ => {
            let rest = b.get(i..)?;
            let len = rest
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            i.checked_add(len)
        }
    }
}

/// A position in the text. Every value is read once, where it stands:
/// nested objects are decoded in place, never skipped first. `V` is the
/// mode (see the module docs).
struct Cur<'a, const V: bool> {
    text: &'a str,
    pos: usize,
    /// Containers open around the position, counted from the values of the
    /// line's top-level object (as [`Message::decode`] limits them).
    ///
    /// [`Message::decode`]: super::Message::decode
    depth: u32,
}

impl<'a, const V: bool> Cur<'a, V> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 0,
            depth: 0,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    /// Enters the object that starts here.
    fn open(&mut self) -> Option<()> {
        let b = self.bytes();
        let i = skip_ws(b, self.pos);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        self.pos = i.checked_add(1)?;
        self.depth = self.depth.checked_add(1)?;
        Some(())
    }

    /// The next key of the object entered with [`Cur::open`], leaving the
    /// position on its value, which the caller must read or skip.
    /// `Some(None)` after the closing brace; `None` to give up (a key with
    /// escapes, or text that is not JSON).
    fn key(&mut self, first: &mut bool) -> Option<Option<&'a [u8]>> {
        let b = self.bytes();
        let mut i = skip_ws(b, self.pos);
        match b.get(i)? {
            b'}' => {
                self.pos = i.checked_add(1)?;
                self.depth = self.depth.saturating_sub(1);
                return Some(None);
            }
            b',' if !*first => i = skip_ws(b, i.checked_add(1)?),
            b'"' if *first => {}
            _ => return None,
        }
        *first = false;
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let from = i.checked_add(1)?;
        let key_end = short_special(b, from)?;
        if b.get(key_end) != Some(&b'"') {
            return None;
        }
        let key = b.get(from..key_end)?;
        let colon = skip_ws(b, key_end.checked_add(1)?);
        if b.get(colon) != Some(&b':') {
            return None;
        }
        self.pos = skip_ws(b, colon.checked_add(1)?);
        Some(Some(key))
    }

    /// Passes over the value here (validating it in `V` mode) and returns
    /// its text.
    fn take(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let b = self.bytes();
        let end = if V {
            skip_value_within(b, start, MAX_DEPTH.checked_sub(self.depth)?).ok()?
        } else {
            value_end(b, start)?
        };
        self.pos = end;
        self.text.get(start..end)
    }

    fn skip(&mut self) -> Option<()> {
        self.take().map(|_| ())
    }

    fn is_null(&self) -> bool {
        self.peek() == Some(b'n')
    }

    /// The string token here (quotes included) and whether it has escapes.
    /// In `V` mode a raw control character gives up; escapes are checked
    /// by whoever unescapes them.
    fn string_token(&mut self) -> Option<(&'a str, bool)> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos;
        let (end, escaped) = str_end(self.bytes(), start)?;
        self.pos = end;
        Some((self.text.get(start..end)?, escaped))
    }

    /// A string value, borrowed when it has no escapes, else unescaped
    /// into one allocation.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let b = self.bytes();
        let from = self.pos.checked_add(1)?;
        let mut j = from;
        let mut escaped = false;
        loop {
            let n = find_special(b, j)?;
            match b.get(n)? {
                b'"' => {
                    self.pos = n.checked_add(1)?;
                    let token = self.text.get(from.checked_sub(1)?..self.pos)?;
                    return if escaped {
                        unquote::<serde_json::Error>(token).ok()
                    } else {
                        token.get(1..token.len().checked_sub(1)?).map(Cow::Borrowed)
                    };
                }
                b'\\' if n.saturating_sub(from) > LONG => {
                    return self.unescape_long(from).map(Cow::Owned);
                }
                b'\\' => {
                    escaped = true;
                    // Past the escaped byte; a `\u` escape's hex digits
                    // are never special.
                    j = n.checked_add(2)?;
                }
                _ => return None,
            }
        }
    }

    /// Unescapes the long string whose text starts at `from` while finding
    /// its end (one pass instead of two: megabytes of tool output have an
    /// escape every line). Its length is not known yet, but the rest of the
    /// text bounds it: one allocation of that size, trimmed when much of it
    /// went unused. Only strings with an escape past their first
    /// [`LONG`] bytes come here, so there are few per line.
    fn unescape_long(&mut self, from: usize) -> Option<String> {
        let b = self.bytes();
        let mut out = String::with_capacity(b.len().checked_sub(from)?);
        let mut j = from;
        loop {
            let n = find_special(b, j)?;
            out.push_str(self.text.get(j..n)?);
            match b.get(n)? {
                b'"' => {
                    self.pos = n.checked_add(1)?;
                    if out.capacity() > out.len().saturating_mul(2).saturating_add(LONG) {
                        out.shrink_to_fit();
                    }
                    return Some(out);
                }
                b'\\' => {
                    let (c, used) = escape(b.get(n..)?).ok()?;
                    out.push(c);
                    j = n.checked_add(used)?;
                }
                _ => return None,
            }
        }
    }

    /// An optional string: `null` reads as `None`.
    fn opt_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.is_null() {
            self.skip()?;
            Some(None)
        } else {
            self.string().map(Some)
        }
    }

    /// A value kept raw (`_meta`, `rawInput`, `rawOutput`): `null` is kept.
    fn raw_json(&mut self) -> Option<RawJson<'a>> {
        self.take().map(RawJson::from_validated)
    }

    /// Exactly the string `token` (quotes included, no escapes).
    fn exact(&mut self, token: &str) -> Option<()> {
        let end = self.pos.checked_add(token.len())?;
        if self.text.get(self.pos..end)? != token {
            return None;
        }
        self.pos = end;
        Some(())
    }

    /// Enters the object here and reads the tag of a tagged union: its
    /// first member must be `name`, a string without escapes.
    fn tag(&mut self, name: &[u8], first: &mut bool) -> Option<&'a str> {
        self.open()?;
        if self.key(first)?? != name {
            return None;
        }
        let (token, escaped) = self.string_token()?;
        if escaped {
            return None;
        }
        token.strip_prefix('"')?.strip_suffix('"')
    }

    /// The elements of the array here, each read by `item`; `null` reads
    /// as `None`.
    fn opt_array<T>(&mut self, item: fn(&mut Self) -> Option<T>) -> Option<Option<Vec<T>>> {
        match self.peek()? {
            b'n' => {
                self.skip()?;
                return Some(None);
            }
            b'[' => {}
            _ => return None,
        }
        self.depth = self.depth.checked_add(1)?;
        let b = self.bytes();
        let mut out = Vec::new();
        self.pos = skip_ws(b, self.pos.checked_add(1)?);
        if self.peek() != Some(b']') {
            loop {
                out.push(item(self)?);
                let i = skip_ws(b, self.pos);
                match b.get(i)? {
                    b',' => self.pos = skip_ws(b, i.checked_add(1)?),
                    b']' => {
                        self.pos = i;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.pos = self.pos.checked_add(1)?;
        self.depth = self.depth.saturating_sub(1);
        Some(Some(out))
    }
}

/// Stores a member's value; `None` (give up) on a duplicate, which the
/// general path reports as an error.
fn set<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

/// A value to decode into: every field is overwritten before the decoder
/// returns `Some`.
pub(crate) fn blank<'a>() -> SessionNotification<'a> {
    SessionNotification {
        session_id: Cow::Borrowed(""),
        update: SessionUpdate::Unknown(RawJson::from_validated("{}")),
        meta: None,
    }
}

/// Decodes `session/update` params already known to be valid JSON, or
/// `None` for serde to do it.
pub(crate) fn session_notification(text: &str) -> Option<SessionNotification<'_>> {
    let mut out = blank();
    notification(&mut Cur::<false>::new(text), &mut out)?;
    Some(out)
}

/// Decodes a whole line that is a `session/update` notification into
/// `out`, checking it as [`Message::decode`](super::Message::decode)
/// would; `None` for the general path (which also reports every error),
/// with `out` then holding nothing of use.
///
/// The big values are written in place, never moved: a decoded update is
/// a few hundred bytes, and copying it from layer to layer cost more than
/// reading the line.
pub(crate) fn session_update_line<'a>(
    line: &'a str,
    out: &mut SessionNotification<'a>,
) -> Option<()> {
    let mut c = Cur::<true>::new(line);
    c.open()?;
    // The line's own object does not count towards the depth limit.
    c.depth = 0;
    let (mut version, mut method, mut params) = (false, false, false);
    let mut first = true;
    while let Some(k) = c.key(&mut first)? {
        match k {
            b"jsonrpc" if !version => {
                c.exact("\"2.0\"")?;
                version = true;
            }
            b"method" if !method => {
                c.exact("\"session/update\"")?;
                method = true;
            }
            // Params are read as `session/update`'s only once the line
            // has said it is one.
            b"params" if version && method && !params => {
                notification(&mut c, out)?;
                params = true;
            }
            b"jsonrpc" | b"method" | b"params" | b"id" | b"result" | b"error" => return None,
            _ => c.skip()?,
        }
    }
    if !params || skip_ws(c.bytes(), c.pos) != line.len() {
        return None;
    }
    Some(())
}

/// Decodes `session/update` params into `out`.
#[inline(always)]
fn notification<'a, const V: bool>(
    c: &mut Cur<'a, V>,
    out: &mut SessionNotification<'a>,
) -> Option<()> {
    c.open()?;
    let (mut session_id, mut update, mut meta) = (None, false, None);
    let mut first = true;
    while let Some(k) = c.key(&mut first)? {
        match k {
            b"sessionId" => set(&mut session_id, c.string()?)?,
            b"update" if !update => {
                session_update(c, &mut out.update)?;
                update = true;
            }
            b"update" => return None,
            b"_meta" => set(&mut meta, c.raw_json()?)?,
            _ => c.skip()?,
        }
    }
    if !update {
        return None;
    }
    out.session_id = session_id?;
    out.meta = meta;
    Some(())
}

#[inline(always)]
fn session_update<'a, const V: bool>(
    c: &mut Cur<'a, V>,
    out: &mut SessionUpdate<'a>,
) -> Option<()> {
    // A chunk variant is set first, then its fields decoded in place.
    macro_rules! chunk {
        ($variant:ident) => {{
            *out = SessionUpdate::$variant(blank_chunk());
            let SessionUpdate::$variant(chunk) = out else {
                return None;
            };
            chunk
        }};
    }
    let mut first = true;
    let chunk = match c.tag(b"sessionUpdate", &mut first)? {
        "agent_message_chunk" => chunk!(AgentMessageChunk),
        "agent_thought_chunk" => chunk!(AgentThoughtChunk),
        "user_message_chunk" => chunk!(UserMessageChunk),
        "tool_call_update" => {
            *out = SessionUpdate::ToolCallUpdate(tool_call_update(c)?);
            return Some(());
        }
        "tool_call" => {
            *out = SessionUpdate::ToolCall(tool_call(c)?);
            return Some(());
        }
        _ => return None,
    };
    content_chunk(c, chunk)
}

fn blank_chunk<'a>() -> ContentChunk<'a> {
    ContentChunk {
        content: ContentBlock::Unknown(RawJson::from_validated("{}")),
        message_id: None,
        meta: None,
    }
}

/// The members of a content chunk after its tag, into `out`.
#[inline(always)]
fn content_chunk<'a, const V: bool>(c: &mut Cur<'a, V>, out: &mut ContentChunk<'a>) -> Option<()> {
    let (mut content, mut message_id, mut meta) = (false, None, None);
    let mut first = false;
    while let Some(k) = c.key(&mut first)? {
        match k {
            b"content" if !content => {
                content_block(c, &mut out.content)?;
                content = true;
            }
            b"content" => return None,
            b"messageId" => set(&mut message_id, c.opt_string()?)?,
            b"_meta" => set(&mut meta, c.raw_json()?)?,
            _ => c.skip()?,
        }
    }
    if !content {
        return None;
    }
    out.message_id = message_id.flatten();
    out.meta = meta;
    Some(())
}

/// A content block into `out`: text only (without annotations); others
/// go to serde.
#[inline(always)]
fn content_block<'a, const V: bool>(c: &mut Cur<'a, V>, out: &mut ContentBlock<'a>) -> Option<()> {
    let mut first = true;
    if c.tag(b"type", &mut first)? != "text" {
        return None;
    }
    let (mut body, mut annotations, mut meta) = (None, None, None);
    while let Some(k) = c.key(&mut first)? {
        match k {
            b"text" => set(&mut body, c.string()?)?,
            // Only `null` (no annotations) is read here.
            b"annotations" => {
                c.is_null().then_some(())?;
                c.skip()?;
                set(&mut annotations, ())?;
            }
            b"_meta" => set(&mut meta, c.raw_json()?)?,
            _ => c.skip()?,
        }
    }
    *out = ContentBlock::Text(TextContent {
        annotations: None,
        text: body?,
        meta,
    });
    Some(())
}

fn tool_call_content<'a, const V: bool>(c: &mut Cur<'a, V>) -> Option<ToolCallContent<'a>> {
    let mut first = true;
    let kind = c.tag(b"type", &mut first)?;
    let mut meta = None;
    Some(match kind {
        "content" => {
            let mut block = ContentBlock::Unknown(RawJson::from_validated("{}"));
            let mut content = false;
            while let Some(k) = c.key(&mut first)? {
                match k {
                    b"content" if !content => {
                        content_block(c, &mut block)?;
                        content = true;
                    }
                    b"content" => return None,
                    b"_meta" => set(&mut meta, c.raw_json()?)?,
                    _ => c.skip()?,
                }
            }
            if !content {
                return None;
            }
            ToolCallContent::Content(Content {
                content: block,
                meta,
            })
        }
        "diff" => {
            let (mut path, mut old_text, mut new_text) = (None, None, None);
            while let Some(k) = c.key(&mut first)? {
                match k {
                    b"path" => set(&mut path, c.string()?)?,
                    b"oldText" => set(&mut old_text, c.opt_string()?)?,
                    b"newText" => set(&mut new_text, c.string()?)?,
                    b"_meta" => set(&mut meta, c.raw_json()?)?,
                    _ => c.skip()?,
                }
            }
            ToolCallContent::Diff(Diff {
                path: path?,
                old_text: old_text.flatten(),
                new_text: new_text?,
                meta,
            })
        }
        "terminal" => {
            let mut terminal_id = None;
            while let Some(k) = c.key(&mut first)? {
                match k {
                    b"terminalId" => set(&mut terminal_id, c.string()?)?,
                    b"_meta" => set(&mut meta, c.raw_json()?)?,
                    _ => c.skip()?,
                }
            }
            ToolCallContent::Terminal(Terminal {
                terminal_id: terminal_id?,
                meta,
            })
        }
        _ => return None,
    })
}

fn location<'a, const V: bool>(c: &mut Cur<'a, V>) -> Option<ToolCallLocation<'a>> {
    c.open()?;
    let (mut path, mut line, mut meta) = (None, None, None);
    let mut first = true;
    while let Some(k) = c.key(&mut first)? {
        match k {
            b"path" => set(&mut path, c.string()?)?,
            b"line" => {
                let value = if c.is_null() {
                    c.skip()?;
                    None
                } else {
                    Some(small_uint(c.take()?)?)
                };
                set(&mut line, value)?;
            }
            b"_meta" => set(&mut meta, c.raw_json()?)?,
            _ => c.skip()?,
        }
    }
    Some(ToolCallLocation {
        path: path?,
        line: line.flatten(),
        meta,
    })
}

/// A JSON number made of digits only that fits a `u32`.
fn small_uint(token: &str) -> Option<u32> {
    if token.is_empty() || !token.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// The members `tool_call` and `tool_call_update` share.
#[derive(Default)]
struct ToolFields<'a> {
    tool_call_id: Option<Cow<'a, str>>,
    title: Option<Option<Cow<'a, str>>>,
    name: Option<Option<Cow<'a, str>>>,
    kind: Option<Option<ToolKind<'a>>>,
    status: Option<Option<ToolCallStatus<'a>>>,
    content: Option<Option<Vec<ToolCallContent<'a>>>>,
    locations: Option<Option<Vec<ToolCallLocation<'a>>>>,
    raw_input: Option<RawJson<'a>>,
    raw_output: Option<RawJson<'a>>,
    meta: Option<RawJson<'a>>,
}

/// The members of a tool call after its tag.
fn tool_fields<'a, const V: bool>(c: &mut Cur<'a, V>) -> Option<ToolFields<'a>> {
    let mut f = ToolFields::default();
    let mut first = false;
    while let Some(k) = c.key(&mut first)? {
        match k {
            b"toolCallId" => set(&mut f.tool_call_id, c.string()?)?,
            b"title" => set(&mut f.title, c.opt_string()?)?,
            b"name" => set(&mut f.name, c.opt_string()?)?,
            b"kind" => set(&mut f.kind, c.opt_string()?.map(ToolKind::from_wire))?,
            b"status" => set(
                &mut f.status,
                c.opt_string()?.map(ToolCallStatus::from_wire),
            )?,
            b"content" => set(&mut f.content, c.opt_array(tool_call_content)?)?,
            b"locations" => set(&mut f.locations, c.opt_array(location)?)?,
            b"rawInput" => set(&mut f.raw_input, c.raw_json()?)?,
            b"rawOutput" => set(&mut f.raw_output, c.raw_json()?)?,
            b"_meta" => set(&mut f.meta, c.raw_json()?)?,
            _ => c.skip()?,
        }
    }
    Some(f)
}

fn tool_call_update<'a, const V: bool>(c: &mut Cur<'a, V>) -> Option<ToolCallUpdate<'a>> {
    let f = tool_fields(c)?;
    Some(ToolCallUpdate {
        tool_call_id: f.tool_call_id?,
        kind: f.kind.flatten(),
        status: f.status.flatten(),
        title: f.title.flatten(),
        name: f.name.flatten(),
        content: f.content.flatten(),
        locations: f.locations.flatten(),
        raw_input: f.raw_input,
        raw_output: f.raw_output,
        meta: f.meta,
    })
}

fn tool_call<'a, const V: bool>(c: &mut Cur<'a, V>) -> Option<ToolCall<'a>> {
    let f = tool_fields(c)?;
    Some(ToolCall {
        tool_call_id: f.tool_call_id?,
        // Required, and not nullable.
        title: f.title??,
        name: f.name.flatten(),
        kind: f.kind.flatten(),
        status: f.status.flatten(),
        content: f.content.flatten(),
        locations: f.locations.flatten(),
        raw_input: f.raw_input,
        raw_output: f.raw_output,
        meta: f.meta,
    })
}

#[cfg(test)]
#[path = "test_lines.rs"]
mod test_lines;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acp::{Message, NotificationParams};
    use alloc::format;

    fn serde(text: &str) -> Option<SessionNotification<'_>> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn common_shapes_take_the_direct_path_and_equal_serde() {
        let cases = [
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"a\nb\u00e9","_meta":{"x":1}}},"_meta":null}"#,
            r#" { "update" : { "sessionUpdate" : "user_message_chunk" , "messageId" : null , "content" : { "type" : "text" , "annotations" : null , "text" : "" } } , "sessionId" : "s\"q" , "extra" : [1,{"a":"]"}] } "#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls -la","kind":"execute","status":"pending","locations":[{"path":"/a","line":3},{"path":"/b","line":null}],"rawInput":{"command":"ls"}}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","kind":"brand_new","content":[{"type":"content","content":{"type":"text","text":"out\n"}},{"type":"diff","path":"/f","oldText":null,"newText":"x"},{"type":"terminal","terminalId":"term"}],"rawOutput":null,"title":null,"name":"shell"}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[],"locations":null}}"#,
        ];
        for c in cases {
            let fast = session_notification(c).unwrap_or_else(|| panic!("not direct: {c}"));
            assert_eq!(Some(&fast), serde(c).as_ref(), "{c}");
        }
    }

    #[test]
    fn everything_else_is_left_to_serde() {
        let cases = [
            // Tag not first, escaped key, annotations, image, unknown tag.
            r#"{"sessionId":"s","update":{"content":{"type":"text","text":"hi"},"sessionUpdate":"agent_message_chunk"}}"#,
            r#"{"session\u0049d":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","annotations":{"priority":1}}}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"","mimeType":"image/png"}}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}"#,
            // Errors: duplicate, missing, wrong type, lone surrogate, bad number.
            r#"{"sessionId":"s","sessionId":"t","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
            r#"{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
            r#"{"sessionId":7,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
            r#"{"sessionId":"\ud800","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":null}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","locations":[{"path":"/a","line":-1}]}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","locations":[{"path":"/a","line":4294967296}]}}"#,
            r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","content":{}}}"#,
            "[]",
            "{}",
        ];
        for c in cases {
            assert!(session_notification(c).is_none(), "{c}");
        }
    }

    #[test]
    fn borrowed_without_escapes() {
        let c = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#;
        let Some(SessionNotification {
            session_id,
            update: SessionUpdate::AgentMessageChunk(chunk),
            ..
        }) = session_notification(c)
        else {
            panic!()
        };
        assert!(matches!(session_id, Cow::Borrowed("s")));
        let ContentBlock::Text(t) = chunk.content else {
            panic!()
        };
        assert!(matches!(t.text, Cow::Borrowed("hi")));
    }

    fn chunk_params(text_token: &str, tail: &str) -> alloc::string::String {
        format!(
            r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{text_token}}}}},"_meta":{{"pad":"{tail}"}}}}"#
        )
    }

    fn chunk_text<'b>(n: &'b SessionNotification<'_>) -> &'b Cow<'b, str> {
        let SessionUpdate::AgentMessageChunk(c) = &n.update else {
            panic!()
        };
        let ContentBlock::Text(t) = &c.content else {
            panic!()
        };
        &t.text
    }

    #[test]
    fn long_strings_unescape_in_one_pass_and_equal_serde() {
        let plain = "x".repeat(5000);
        let far = format!(
            "{}\\n{}\\u00e9\\ud83d\\ude00",
            "y".repeat(5000),
            "z".repeat(10)
        );
        let dense = "line \\\"quoted\\\" \\t\\\\ end\\n".repeat(400);
        for (body, borrowed) in [(&plain, true), (&far, false), (&dense, false)] {
            let text = chunk_params(&format!("\"{body}\""), "");
            let fast = session_notification(&text).unwrap();
            assert_eq!(Some(&fast), serde(&text).as_ref());
            assert_eq!(matches!(chunk_text(&fast), Cow::Borrowed(_)), borrowed);
            let line = format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{text}}}"#);
            let mut out = blank();
            assert!(session_update_line(&line, &mut out).is_some());
            assert_eq!(out, fast);
        }
        // Bad escapes and raw control characters far into a long string.
        for bad in ["\\x", "\\ud800", "\u{1}", "\\u12"] {
            let text = chunk_params(&format!("\"{far}{bad}\""), "");
            let line = format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{text}}}"#);
            assert!(session_update_line(&line, &mut blank()).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_long_string_keeps_little_spare_capacity() {
        let far = format!("{}\\n", "y".repeat(5000));
        // Much more text after the string than in it: the bound it was
        // allocated with is trimmed.
        let text = chunk_params(&format!("\"{far}\""), &"p".repeat(100_000));
        let fast = session_notification(&text).unwrap();
        let Cow::Owned(kept) = chunk_text(&fast) else {
            panic!()
        };
        assert_eq!(kept.len(), 5001);
        assert!(
            kept.capacity() <= 2 * kept.len() + LONG,
            "{}",
            kept.capacity()
        );
    }

    /// The generated lines (near misses included) reach the direct paths
    /// often, and whatever they decode equals the general path's value.
    #[test]
    fn generated_lines_take_the_direct_paths_and_agree() {
        let (mut lines, mut direct, mut trusted) = (0, 0, 0);
        for seed in 0..20_000u64 {
            let line = super::test_lines::line(seed);
            lines += 1;
            let decoded = Message::decode(&line);
            let two_step = match &decoded {
                Ok(Message::Notification(n)) => n.typed().ok().map(NotificationParams::into_owned),
                _ => None,
            };
            let mut out = blank();
            if session_update_line(&line, &mut out).is_some() {
                direct += 1;
                assert_eq!(
                    two_step,
                    Some(NotificationParams::SessionUpdate(out.into_owned())),
                    "{line}"
                );
            }
            if let Ok(Message::Notification(n)) = &decoded {
                if let Some(v) = n
                    .params
                    .as_ref()
                    .and_then(|p| session_notification(p.get()))
                {
                    trusted += 1;
                    let p = n.params.as_ref().map(|p| p.get()).unwrap_or_default();
                    assert_eq!(serde(p).as_ref(), Some(&v), "{line}");
                }
            }
        }
        let summary = format!("{lines} lines: {direct} one pass, {trusted} trusted");
        assert!(direct * 100 > lines * 35, "{summary}");
        assert!(trusted >= direct, "{summary}");
    }
}
