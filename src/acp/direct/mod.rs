//! A direct decoder for the hottest message, `session/update` with a
//! content chunk, a tool call or a tool call update: agents send these by
//! the hundred per turn, and one can carry megabytes of tool output.
//!
//! It covers the common shapes only and returns `None` for anything else (a
//! tag that is not the first member, a key with escapes, annotations, an
//! unexpected type, a duplicate member, a missing required one, a member
//! it does not know or a `null` for an optional one, which the general path
//! keeps in the struct's `extra`); the caller
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
use alloc::vec::Vec;

mod cursor;

use crate::json::scan::skip_ws;
use cursor::{set, Cur};

use super::content::{ContentBlock, TextContent};
use super::raw::RawJson;
use super::update::{
    Content, ContentChunk, Diff, SessionNotification, SessionUpdate, Terminal, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind,
};

/// Strings with an escape more than this many bytes past their start are
/// unescaped while they are scanned (see [`Cur::unescape_long`]).
pub(super) const LONG: usize = 4096;

/// A value to decode into: every field is overwritten before the decoder
/// returns `Some`.
pub(crate) fn blank<'a>() -> SessionNotification<'a> {
    SessionNotification {
        session_id: Cow::Borrowed(""),
        update: SessionUpdate::Unknown(RawJson::from_validated("{}")),
        meta: None,
        extra: crate::acp::Extra::new(),
    }
}

/// Decodes `session/update` params already known to be valid JSON, or
/// `None` for serde to do it (the unit tests' entry to the params decoder;
/// `Notification::typed` decodes params with serde).
#[cfg(test)]
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
    c.open_line()?;
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
            _ => return None,
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
        extra: crate::acp::Extra::new(),
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
            _ => return None,
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
    let (mut body, mut meta) = (None, None);
    while let Some(k) = c.key(&mut first)? {
        match k {
            b"text" => set(&mut body, c.string()?)?,
            b"_meta" => set(&mut meta, c.raw_json()?)?,
            _ => return None,
        }
    }
    *out = ContentBlock::Text(TextContent {
        annotations: None,
        text: body?,
        meta,
        extra: crate::acp::Extra::new(),
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
                    _ => return None,
                }
            }
            if !content {
                return None;
            }
            ToolCallContent::Content(Content {
                content: block,
                meta,
                extra: crate::acp::Extra::new(),
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
                    _ => return None,
                }
            }
            ToolCallContent::Diff(Diff {
                path: path?,
                old_text: old_text.flatten(),
                new_text: new_text?,
                meta,
                extra: crate::acp::Extra::new(),
            })
        }
        "terminal" => {
            let mut terminal_id = None;
            while let Some(k) = c.key(&mut first)? {
                match k {
                    b"terminalId" => set(&mut terminal_id, c.string()?)?,
                    b"_meta" => set(&mut meta, c.raw_json()?)?,
                    _ => return None,
                }
            }
            ToolCallContent::Terminal(Terminal {
                terminal_id: terminal_id?,
                meta,
                extra: crate::acp::Extra::new(),
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
            b"line" => set(&mut line, small_uint(c.take()?)?)?,
            b"_meta" => set(&mut meta, c.raw_json()?)?,
            _ => return None,
        }
    }
    Some(ToolCallLocation {
        path: path?,
        line,
        meta,
        extra: crate::acp::Extra::new(),
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
            _ => return None,
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
        extra: crate::acp::Extra::new(),
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
        extra: crate::acp::Extra::new(),
    })
}

#[cfg(test)]
mod tests;
