//! One call per line: [`decode_line`] decodes the envelope and, for a
//! notification, its params by method.

use alloc::borrow::Cow;

use super::message::{not_an_object, Envelope, Message, Notification};
use super::methods::NotificationParams;
use super::raw::RawJson;
use super::read::Reader;
use super::salvage::Typed;
use super::wire::{Cx, Mode};
use super::MessageError;
use crate::json::scan::skip_ws;

/// A line read by [`decode_line`]: a notification with its params decoded
/// by method, or any other message as [`Message::decode`] gives it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum Incoming<'a> {
    /// A notification, its params typed ([`Notification::typed`]), with
    /// what lenient decoding salvaged (nothing in [`Mode::Strict`]).
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

/// Decodes a line, and a notification's params by method in `mode`, in
/// one call: what [`Message::decode`] then [`Notification::typed`] give.
///
/// This is the hot path of a client: nearly every line an agent sends
/// during a turn is a `session/update` notification. The line is read
/// once: the envelope's members are checked as they come, and a
/// notification's params are decoded by its method where they stand (when
/// `method` comes before `params`, as every peer writes it), the typed
/// value built in place. Requests and responses come back as
/// [`Incoming::Message`], decoded once.
///
/// # Errors
///
/// As [`Message::decode`] for the line, then as [`Notification::typed`]
/// for a notification's params. A notification is never answered, so no
/// id is lost with an error; the next line decodes on its own.
///
/// ```
/// use acp_codec::acp::{decode_line, ContentBlock, Incoming, Message, Mode, NotificationParams, SessionUpdate};
///
/// let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}}}"#;
/// let Incoming::Notification(typed) = decode_line(line, Mode::Lenient)? else { unreachable!() };
/// let NotificationParams::SessionUpdate(n) = &typed.value else { unreachable!() };
/// let SessionUpdate::AgentMessageChunk(chunk) = &n.update else { unreachable!() };
/// let ContentBlock::Text(text) = &chunk.content else { unreachable!() };
/// assert_eq!((n.session_id.as_ref(), text.text.as_ref()), ("s1", "Hello"));
///
/// // A request comes back as the message; stray text is still -32700.
/// let request = r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}"#;
/// assert!(matches!(decode_line(request, Mode::Lenient)?, Incoming::Message(Message::Request(_))));
/// assert_eq!(decode_line("Loaded cached credentials.", Mode::Lenient).unwrap_err().code().0, -32700);
/// # Ok::<(), acp_codec::MessageError>(())
/// ```
pub fn decode_line(line: &str, mode: Mode) -> Result<Incoming<'_>, MessageError> {
    match one_pass(line, mode) {
        Some(done) => done,
        None => two_steps(line, mode),
    }
}

/// The pass over the line; `None` when the text is not JSON somewhere, for
/// [`two_steps`] to report it exactly as [`Message::decode`] does.
fn one_pass(line: &str, mode: Mode) -> Option<Result<Incoming<'_>, MessageError>> {
    let start = skip_ws(line.as_bytes(), 0);
    if line.as_bytes().get(start) != Some(&b'{') {
        return Some(Err(not_an_object(line, start)));
    }
    let mut r = Reader::new(line);
    r.open_line().ok()?;
    let mut env = Envelope::default();
    let mut cx = Cx::new(mode);
    let mut typed = None;
    let mut first = true;
    loop {
        let key = match r.key(&mut first, false) {
            Ok(Some(key)) => key,
            Ok(None) => break,
            Err(why) if why.is_syntax() => return None,
            // A key whose escapes do not decode names no envelope member.
            Err(_) => {
                r.skip().ok()?;
                continue;
            }
        };
        let from = {
            r.peek();
            r.pos()
        };
        // A notification's params, after its method: decoded in place.
        if &*key == "params" && env.params.is_none() && env.id.is_none() && typed.is_none() {
            if let Some(method) = env.method.and_then(plain_string) {
                let mark = r.mark();
                match NotificationParams::decode_at(method, &mut r, &mut cx) {
                    Some(Ok(v)) => typed = Some(v),
                    Some(Err(why)) if why.is_syntax() => return None,
                    // Decoded again from their text, for the error.
                    Some(Err(_)) => {
                        cx.salvaged.clear();
                        r.reset(mark);
                    }
                    None => {}
                }
            }
        }
        if r.pos() == from {
            r.skip().ok()?;
        }
        if let Err(e) = env.take(&key, line.get(from..r.pos()).unwrap_or_default()) {
            return Some(Err(e));
        }
    }
    if !r.at_end() {
        return None;
    }
    let (method, params) = match env.into_message() {
        Ok(Message::Notification(Notification { method, params })) => (method, params),
        other => return Some(other.map(Incoming::Message)),
    };
    Some(match typed {
        Some(value) => Ok(Incoming::Notification(Typed {
            value,
            salvaged: cx.salvaged,
        })),
        // Params before the method, escapes in the method's name, an
        // unknown method, or params that do not fit: typed from their text.
        None => typed_text(method, params, mode),
    })
}

/// [`Message::decode`], then a notification's params typed from its text.
fn two_steps(line: &str, mode: Mode) -> Result<Incoming<'_>, MessageError> {
    match Message::decode(line)? {
        Message::Notification(Notification { method, params }) => typed_text(method, params, mode),
        other => Ok(Incoming::Message(other)),
    }
}

/// A notification's params typed from their text.
fn typed_text<'a>(
    method: Cow<'a, str>,
    params: Option<RawJson<'a>>,
    mode: Mode,
) -> Result<Incoming<'a>, MessageError> {
    let params = match params.map(RawJson::into_text) {
        None => NotificationParams::decode_text(method, None, mode)?,
        Some(Cow::Borrowed(text)) => NotificationParams::decode_text(method, Some(text), mode)?,
        // Lines borrow their params; an owned text (never, today) would be
        // copied once more.
        Some(Cow::Owned(text)) => {
            NotificationParams::decode_text(method, Some(text.as_str()), mode)?.into_owned()
        }
    };
    Ok(Incoming::Notification(params))
}

/// The text of a JSON string token without escapes.
fn plain_string(token: &str) -> Option<&str> {
    let body = token.strip_prefix('"')?.strip_suffix('"')?;
    (!body.contains('\\')).then_some(body)
}
