//! One call per line: [`decode_line`] decodes the envelope and, for a
//! notification, its params by method.

use alloc::borrow::Cow;

use super::message::{Message, Notification};
use super::methods::NotificationParams;
use super::raw::RawJson;
use super::salvage::Typed;
use super::MessageError;

/// A line read by [`decode_line`]: a notification with its params decoded
/// by method, or any other message as [`Message::decode`] gives it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum Incoming<'a> {
    /// A notification, its params typed ([`Notification::typed`]), with
    /// what lenient decoding salvaged (nothing for [`decode_line_strict`]).
    Notification(Typed<'a, NotificationParams<'a>>),
    /// A request or a response: decode a request's params with
    /// [`Request::typed`](super::Request::typed), a result with
    /// [`Response::typed`](super::Response::typed) once the
    /// [`Tracker`](super::Tracker) named its method.
    Message(Message<'a>),
}

impl Incoming<'_> {
    /// The value with all borrowed text copied (`'static`).
    pub fn into_owned(self) -> Incoming<'static> {
        match self {
            Self::Notification(p) => Incoming::Notification(p.into_owned()),
            Self::Message(m) => Incoming::Message(m.into_owned()),
        }
    }
}

/// Decodes a line, and a notification's params by method, in one call: what
/// [`Message::decode`] then [`Notification::typed`] give.
///
/// This is the hot path of a client: nearly every line an agent sends
/// during a turn is a `session/update` notification. For the common ones
/// (content chunks, tool calls and their updates) the line is checked and
/// decoded in a single pass, the typed update built in place, instead of
/// being validated whole and then parsed again; any other line takes the
/// two steps, with the same result. Requests and responses come back as
/// [`Incoming::Message`], decoded once.
///
/// # Errors
///
/// As [`Message::decode`] for the line, then as [`Notification::typed`]
/// for a notification's params. A notification is never answered, so no
/// id is lost with an error; the next line decodes on its own.
///
/// ```
/// use acp_codec::acp::{decode_line, ContentBlock, Incoming, Message, NotificationParams, SessionUpdate};
///
/// let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}}}"#;
/// let Incoming::Notification(typed) = decode_line(line)? else { unreachable!() };
/// let NotificationParams::SessionUpdate(n) = &typed.value else { unreachable!() };
/// let SessionUpdate::AgentMessageChunk(chunk) = &n.update else { unreachable!() };
/// let ContentBlock::Text(text) = &chunk.content else { unreachable!() };
/// assert_eq!((n.session_id.as_ref(), text.text.as_ref()), ("s1", "Hello"));
///
/// // A request comes back as the message; stray text is still -32700.
/// let request = r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}"#;
/// assert!(matches!(decode_line(request)?, Incoming::Message(Message::Request(_))));
/// assert_eq!(decode_line("Loaded cached credentials.").unwrap_err().code().0, -32700);
/// # Ok::<(), acp_codec::MessageError>(())
/// ```
pub fn decode_line(line: &str) -> Result<Incoming<'_>, MessageError> {
    decode(line, false)
}

/// [`decode_line`] with params decoded strictly, as the schema is written
/// (for conformance tests): what `decode_line` would salvage is an error.
///
/// # Errors
///
/// As [`Message::decode`] for the line, then as
/// [`Notification::typed_strict`] for a notification's params.
pub fn decode_line_strict(line: &str) -> Result<Incoming<'_>, MessageError> {
    decode(line, true)
}

fn decode(line: &str, strict: bool) -> Result<Incoming<'_>, MessageError> {
    // Decoded straight into the value returned, which is a few hundred
    // bytes: moving it once more costs a measurable share of a short line.
    let mut out = Incoming::Notification(Typed::clean(NotificationParams::SessionUpdate(
        super::direct::blank(),
    )));
    if let Incoming::Notification(Typed {
        value: NotificationParams::SessionUpdate(n),
        ..
    }) = &mut out
    {
        if super::direct::session_update_line(line, n).is_some() {
            return Ok(out);
        }
    }
    let Notification { method, params } = match Message::decode(line)? {
        Message::Notification(n) => n,
        other => return Ok(Incoming::Message(other)),
    };
    let params = match params.map(RawJson::into_text) {
        None => typed(method, None, strict)?,
        Some(Cow::Borrowed(text)) => typed(method, Some(text), strict)?,
        // `Message::decode` borrows its params; an owned text would be
        // copied once more.
        Some(Cow::Owned(text)) => typed(method, Some(text.as_str()), strict)?.into_owned(),
    };
    Ok(Incoming::Notification(params))
}

fn typed<'t>(
    method: Cow<'t, str>,
    text: Option<&'t str>,
    strict: bool,
) -> Result<Typed<'t, NotificationParams<'t>>, MessageError> {
    if strict {
        NotificationParams::decode_text(method, text).map(Typed::clean)
    } else {
        NotificationParams::decode_text_lenient(method, text)
    }
}
