//! One call per line: [`decode_line`] decodes the envelope and, for a
//! notification or a request, its params by method; for a response to a
//! request a [`Tracker`] has pending, its result.

use alloc::borrow::Cow;
use alloc::boxed::Box;

use super::id::RequestId;
use super::message::{not_an_object, parse_id, Envelope, Message, Notification, Request, Response};
use super::methods::{NotificationParams, RequestParams, ResponseResult};
use super::pending::RequestTable;
use super::raw::RawJson;
use super::read::Reader;
use super::salvage::Typed;
use super::tracker::Tracker;
use super::wire::{Cx, Mode};
use super::MessageError;
use crate::json::scan::skip_ws;
use crate::json::swar::short_special;

/// A line read by [`decode_line`]: a notification or a request with its
/// params decoded by method, or any other message as [`Message::decode`]
/// gives it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum Incoming<'a> {
    /// A notification, its params typed ([`Notification::typed`]), with
    /// what lenient decoding salvaged (nothing in [`Mode::Strict`]).
    Notification(Typed<'a, NotificationParams<'a>>),
    /// A request whose params fit its method.
    Request {
        /// The request as sent: answer to its `id`; its params as sent.
        request: Request<'a>,
        /// Its params typed ([`Request::typed`]), with what lenient
        /// decoding salvaged. Boxed: the params of every request method
        /// take far more room than a notification's, which make up most
        /// lines and would be moved at that size.
        params: Box<Typed<'a, RequestParams<'a>>>,
    },
    /// A response to a request pending in the [`Tracker`] given to
    /// [`Decoding::with_tracker`] (or waiting in the
    /// [`Observer`](super::Observer) whose
    /// [`decoding`](super::Observer::decoding) was used), whose result fits
    /// that request's method.
    Response {
        /// The response as sent: its id, its result as sent.
        response: Response<'a>,
        /// Its result typed ([`Response::typed`] for the request's method,
        /// which [`ResponseResult::method`] names), with what lenient
        /// decoding salvaged. Boxed, as a request's params.
        result: Box<Typed<'a, ResponseResult<'a>>>,
    },
    /// An error response; a response decoded without a tracker, to a
    /// request the tracker does not have pending or of a method not typed
    /// here, or whose result does not fit (then [`Response::typed`] gives
    /// the error); a request whose params do not fit its method
    /// ([`Request::typed`] then gives the `-32602` error to answer with);
    /// or, in [`Mode::Lenient`], a notification whose params do not fit
    /// ([`Notification::typed`] gives the error).
    Message(Message<'a>),
}

impl Incoming<'_> {
    /// The value with all borrowed text copied (`'static`).
    pub fn into_owned(self) -> Incoming<'static> {
        match self {
            Self::Notification(p) => Incoming::Notification(p.into_owned()),
            Self::Request { request, params } => Incoming::Request {
                request: request.into_owned(),
                params: Box::new(params.into_owned()),
            },
            Self::Response { response, result } => Incoming::Response {
                response: response.into_owned(),
                result: Box::new(result.into_owned()),
            },
            Self::Message(m) => Incoming::Message(m.into_owned()),
        }
    }
}

/// How [`decode_line`] reads a line: in which [`Mode`], and, given a
/// [`Tracker`], with the result of a response to one of its pending
/// requests typed by that request's method in the same pass
/// ([`Incoming::Response`]).
///
/// A [`Mode`] converts into one (no tracker): `decode_line(line,
/// Mode::Lenient)`. The tracker is only read: complete the request with
/// [`Tracker::handle`] as for any response. A program between the two
/// sides (a tap, a proxy) gets its `Decoding` from
/// [`Observer::decoding`](super::Observer::decoding), which types a
/// response by the request the other side sent.
///
/// ```
/// use std::time::Duration;
/// use acp_codec::acp::{decode_line, Decoding, Incoming, Mode, ResponseResult, Tracker};
///
/// let mut tracker = Tracker::new();
/// let id = tracker.start("fs/read_text_file", Duration::ZERO);
/// let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":"fn main() {{}}\n"}}}}"#);
/// let how = Decoding::new(Mode::Lenient).with_tracker(&tracker);
/// let Incoming::Response { response, result } = decode_line(&line, how)? else { unreachable!() };
/// let ResponseResult::ReadTextFile(read) = &result.value else { unreachable!() };
/// assert_eq!(read.content, "fn main() {}\n");
/// // The request is completed as for any response.
/// let done = tracker.handle_response(&response.id, Duration::from_millis(3))?;
/// assert_eq!(done.method, "fs/read_text_file");
///
/// // Without a tracker, the response as sent.
/// assert!(matches!(decode_line(&line, Mode::Lenient)?, Incoming::Message(_)));
/// # Ok::<(), acp_codec::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Decoding<'t> {
    mode: Mode,
    pairing: Pairing<'t>,
}

/// Where [`Decoding`] finds the method of the request a response answers.
#[derive(Debug, Clone, Copy, Default)]
enum Pairing<'t> {
    #[default]
    None,
    /// Our requests, pending in an endpoint's tracker.
    Tracker(&'t Tracker),
    /// The other side's requests, as an [`Observer`](super::Observer)
    /// recorded them.
    Table(&'t RequestTable),
}

impl<'t> Decoding<'t> {
    /// Decoding in `mode`, without a tracker.
    pub const fn new(mode: Mode) -> Self {
        Self {
            mode,
            pairing: Pairing::None,
        }
    }

    /// Types the result of a response to a request `tracker` has pending
    /// (an integer id it gave), by that request's method.
    #[must_use]
    pub const fn with_tracker(self, tracker: &'t Tracker) -> Self {
        Self {
            mode: self.mode,
            pairing: Pairing::Tracker(tracker),
        }
    }

    /// Types the result of a response to a request in `table` (an
    /// observer's table of the other side's requests).
    pub(crate) const fn with_table(self, table: &'t RequestTable) -> Self {
        Self {
            mode: self.mode,
            pairing: Pairing::Table(table),
        }
    }

    /// Whether responses are typed at all.
    const fn pairs(&self) -> bool {
        !matches!(self.pairing, Pairing::None)
    }

    /// The method of the request answered by a response with id `id`.
    fn method_of(&self, id: &RequestId<'_>) -> Option<&'t str> {
        match self.pairing {
            Pairing::None => None,
            Pairing::Tracker(tracker) => tracker.method_of(id),
            Pairing::Table(table) => table.method_of(id),
        }
    }

    /// [`method_of`](Self::method_of) for an id as its JSON text.
    fn method_for(&self, id: &str) -> Option<&'t str> {
        if !self.pairs() {
            return None;
        }
        self.method_of(&parse_id(id).ok()?)
    }
}

impl From<Mode> for Decoding<'_> {
    fn from(mode: Mode) -> Self {
        Self::new(mode)
    }
}

/// Decodes a line, and a notification's or a request's params by method,
/// in one call: what [`Message::decode`] then [`Notification::typed`] or
/// [`Request::typed`] give. `how` is the [`Mode`], or a [`Decoding`] that
/// also names a [`Tracker`]: a response to one of its pending requests
/// then has its result typed by that request's method
/// ([`Incoming::Response`]), what [`Response::typed`] gives.
///
/// This is the hot path of a client: nearly every line an agent sends
/// during a turn is a `session/update` notification, and the rest are
/// mostly its requests (`fs/*`, `session/request_permission`); an agent
/// gets the responses to its own (file contents). The line is read once:
/// the envelope's members are checked as they come, and the params are
/// decoded by method where they stand (when `method` comes before
/// `params`, as every peer writes it; a request's `id` too), the typed
/// value built in place; so is a result that follows its `id`. Other
/// responses come back as [`Incoming::Message`], decoded once.
///
/// # Errors
///
/// As [`Message::decode`]: an error means the line is not a JSON-RPC
/// message (not JSON, a batch, a broken envelope). A message whose params
/// or result do not fit its method is not an error: a request, a
/// notification (in [`Mode::Lenient`]) or a response comes back as sent,
/// [`Incoming::Message`], for [`Request::typed`], [`Notification::typed`]
/// or [`Response::typed`] to give what does not fit (and a request's id is
/// there to answer `-32602`). In [`Mode::Strict`] a notification whose
/// params do not fit is the error [`Notification::typed`] gives.
///
/// A line from the [`LineSplitter`](crate::LineSplitter) is UTF-8
/// already: pass [`Line::as_str`](crate::Line::as_str), which is not
/// checked again. Bytes not yet checked (a pass-through
/// [`RawLine`](crate::framing::RawLine), a `Bytes` line) go to
/// [`decode_line_bytes`].
///
/// ```
/// use acp_codec::acp::{decode_line, ContentBlock, Incoming, Message, Mode, NotificationParams, RequestParams, SessionUpdate};
///
/// let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}}}"#;
/// let Incoming::Notification(typed) = decode_line(line, Mode::Lenient)? else { unreachable!() };
/// let NotificationParams::SessionUpdate(n) = &typed.value else { unreachable!() };
/// let SessionUpdate::AgentMessageChunk(chunk) = &n.update else { unreachable!() };
/// let ContentBlock::Text(text) = &chunk.content else { unreachable!() };
/// assert_eq!((n.session_id.as_ref(), text.text.as_ref()), ("s1", "Hello"));
///
/// // A request comes back typed, with the id to answer.
/// let line = r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}"#;
/// let Incoming::Request { request, params } = decode_line(line, Mode::Lenient)? else { unreachable!() };
/// let RequestParams::ReadTextFile(read) = &params.value else { unreachable!() };
/// assert_eq!((request.id.to_string(), read.path.as_ref()), ("1".to_string(), "/a"));
///
/// // Params that do not fit: the request as sent, for a -32602 answer.
/// let bad = r#"{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"path":7}}"#;
/// let Incoming::Message(Message::Request(request)) = decode_line(bad, Mode::Lenient)? else { unreachable!() };
/// assert_eq!(request.typed(Mode::Lenient).unwrap_err().code().0, -32602);
///
/// // So do a notification's, in lenient mode: the line is JSON-RPC.
/// let odd = r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":7}}"#;
/// assert!(matches!(decode_line(odd, Mode::Lenient)?, Incoming::Message(Message::Notification(_))));
/// assert_eq!(decode_line(odd, Mode::Strict).unwrap_err().code().0, -32602);
///
/// // Stray text is not: -32700.
/// assert_eq!(decode_line("Loaded cached credentials.", Mode::Lenient).unwrap_err().code().0, -32700);
/// # Ok::<(), acp_codec::MessageError>(())
/// ```
#[inline]
pub fn decode_line<'a, 't>(
    line: &'a str,
    how: impl Into<Decoding<'t>>,
) -> Result<Incoming<'a>, MessageError> {
    decode(line, how.into())
}

/// [`decode_line`] for a line given as bytes: checks its UTF-8 (once,
/// with a vectorised check), then decodes it. For the items of
/// pass-through splitting ([`RawLine::content`](crate::framing::RawLine::content))
/// and other lines the splitter did not check.
///
/// # Errors
///
/// [`MessageError::NotJson`] (column 0) for bytes that are not UTF-8;
/// otherwise as [`decode_line`].
///
/// ```
/// use acp_codec::acp::{decode_line_bytes, Incoming, Mode};
/// use acp_codec::framing::{RawItem, RawLineSplitter};
///
/// let mut splitter = RawLineSplitter::new();
/// let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}\r\n";
/// let Some(RawItem::Line(line)) = splitter.decode(input) else { unreachable!() };
/// assert!(matches!(decode_line_bytes(line.content(), Mode::Lenient)?, Incoming::Notification(_)));
/// assert_eq!(decode_line_bytes(b"\xff{}", Mode::Lenient).unwrap_err().code().0, -32700);
/// # Ok::<(), acp_codec::MessageError>(())
/// ```
#[inline]
pub fn decode_line_bytes<'a, 't>(
    line: &'a [u8],
    how: impl Into<Decoding<'t>>,
) -> Result<Incoming<'a>, MessageError> {
    match simdutf8::basic::from_utf8(line) {
        Ok(text) => decode(text, how.into()),
        Err(_) => Err(MessageError::NotJson { line: 1, column: 0 }),
    }
}

/// [`decode_line`], compiled here once (the generic call above is
/// instantiated in the caller's crate, where the pass could not be
/// inlined). What the pass decodes is built in `out` in place (`Incoming`
/// is large, and each move of it is a copy); `None` until it has decoded
/// something.
fn decode<'a>(line: &'a str, how: Decoding<'_>) -> Result<Incoming<'a>, MessageError> {
    let mut out = None;
    match one_pass(line, how, &mut out) {
        Some(Ok(())) => match out {
            Some(decoded) => Ok(decoded),
            None => two_steps(line, how),
        },
        Some(Err(e)) => Err(e),
        None => two_steps(line, how),
    }
}

/// The pass over the line, which puts what it decoded in `out`: built there
/// in place (`Incoming` is large, and each move of it is a copy). `None`
/// when the text is not JSON somewhere, for [`two_steps`] to report it
/// exactly as [`Message::decode`] does.
fn one_pass<'a>(
    line: &'a str,
    how: Decoding<'_>,
    out: &mut Option<Incoming<'a>>,
) -> Option<Result<(), MessageError>> {
    let mode = how.mode;
    let start = skip_ws(line.as_bytes(), 0);
    if line.as_bytes().get(start) != Some(&b'{') {
        return Some(Err(not_an_object(line, start)));
    }
    let mut r = Reader::new(line);
    r.open_line().ok()?;
    let mut env = Envelope::default();
    let mut cx = Cx::new(mode);
    let mut first = true;
    // The members every peer writes first, read at once; the loop goes on
    // after them as if it had read them.
    let lead = Lead::read(line, start);
    if lead.end > start {
        env.jsonrpc = Some(JSONRPC);
        env.id = lead.id.map(|(token, _)| token);
        env.method = lead.method.map(|(token, _)| token);
        r.advance_to(lead.end);
        first = false;
    }
    let mut params_read = lead.params;
    loop {
        let key = if core::mem::take(&mut params_read) {
            Ok(Some(Cow::Borrowed("params")))
        } else {
            r.key(&mut first, false)
        };
        let key = match key {
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
        // The params, after the method (and a request's id): decoded in
        // place. A line that turns out to be something else (an id after
        // the params) has them typed again from their text below.
        if &*key == "params" && env.params.is_none() && out.is_none() {
            let method = match lead.method {
                Some((_, name)) => Some(name),
                None => env.method.and_then(plain_string),
            };
            if let Some(method) = method {
                let mark = r.mark();
                // For a method typed here the result is built in its final
                // shape at once (the request and what was salvaged are
                // filled in at the end) and the params read into it, never
                // moved; the method's name is matched once.
                let place = &mut *out;
                let failed = if env.id.is_some() {
                    RequestParams::decode_known(method, &mut r, &mut cx, move || {
                        *place = Some(Incoming::Request {
                            request: Request::placeholder(),
                            params: Box::new(Typed::clean(RequestParams::blank())),
                        });
                        match place {
                            Some(Incoming::Request { params, .. }) => &mut params.value,
                            _ => unreachable!("a request was set just above"),
                        }
                    })
                } else {
                    NotificationParams::decode_known(method, &mut r, &mut cx, move || {
                        *place = Some(Incoming::Notification(Typed::clean(
                            NotificationParams::blank(),
                        )));
                        match place {
                            Some(Incoming::Notification(t)) => &mut t.value,
                            _ => unreachable!("a notification was set just above"),
                        }
                    })
                };
                match failed {
                    Some(Err(why)) if why.is_syntax() => return None,
                    // Decoded again from their text, for the error.
                    Some(Err(_)) => {
                        *out = None;
                        cx.salvaged.clear();
                        r.reset(mark);
                    }
                    _ => {}
                }
            }
        }
        // A response's result, after its id, to a request the tracker has
        // pending: decoded in place as the params are.
        if how.pairs()
            && env.method.is_none()
            && &*key == "result"
            && env.result.is_none()
            && out.is_none()
        {
            let method = match lead.id {
                Some((_, n)) => how.method_of(&RequestId::Number(n)),
                None => env.id.and_then(|id| how.method_for(id)),
            };
            if let Some(method) = method {
                if result_in_place(method, &mut r, &mut cx, out).is_err() {
                    return None;
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
    let params_text = env.params;
    let salvaged = cx.salvaged;
    // A notification or a request whose envelope was read at once and
    // whose params were typed in place is built here: `into_message` would
    // find what the lead already checked (`"2.0"`, an integer id, a plain
    // method) and no result or error.
    if let (Some((_, method)), None, None) = (lead.method, env.result, env.error) {
        match (lead.id, &mut *out) {
            (None, Some(Incoming::Notification(t))) if env.id.is_none() => {
                t.salvaged = salvaged;
                return Some(Ok(()));
            }
            (Some((_, id)), Some(Incoming::Request { request, params })) => {
                *request = Request {
                    id: RequestId::Number(id),
                    method: Cow::Borrowed(method),
                    params: params_text.map(RawJson::from_validated),
                };
                params.salvaged = salvaged;
                return Some(Ok(()));
            }
            _ => {}
        }
    }
    // So is a response whose result was typed in place after its id.
    if let (Some((_, id)), None, Some(result), None, None) =
        (lead.id, env.method, env.result, env.error, env.params)
    {
        if let Some(Incoming::Response {
            response,
            result: typed,
        }) = out
        {
            *response = Response {
                id: RequestId::Number(id),
                result: RawJson::from_validated(result),
            };
            typed.salvaged = salvaged;
            return Some(Ok(()));
        }
    }
    match (env.into_message(), &mut *out) {
        (Ok(Message::Notification(_)), Some(Incoming::Notification(t))) => t.salvaged = salvaged,
        (
            Ok(Message::Request(request)),
            Some(Incoming::Request {
                request: slot,
                params,
            }),
        ) => {
            *slot = request;
            params.salvaged = salvaged;
        }
        // Params before the method, escapes in the method's name, an
        // unknown method, or params that do not fit: typed from their text.
        (Ok(Message::Notification(n)), _) => match typed_notification(n, params_text, mode) {
            Ok(v) => *out = Some(v),
            Err(e) => return Some(Err(e)),
        },
        (
            Ok(Message::Response(response)),
            Some(Incoming::Response {
                response: slot,
                result,
            }),
        ) => {
            *slot = response;
            result.salvaged = salvaged;
        }
        (Ok(Message::Request(request)), _) => {
            *out = Some(typed_request(request, params_text, mode));
        }
        // A result before the id: typed from its text. (A result read above
        // that did not fit is read again here, to no avail: rare, and a flag
        // for it cost the notifications' pass 1.5%.)
        (Ok(Message::Response(response)), _) => *out = Some(typed_response(response, how)),
        (Ok(message), _) => *out = Some(Incoming::Message(message)),
        (Err(e), _) => return Some(Err(e)),
    }
    Some(Ok(()))
}

/// Reads the result of a response to `method` at the reader's position
/// into `out`, built there in place; leaves `out` empty and the reader
/// where it was when the result does not fit (it is then typed from its
/// text, for the error). `Err` when the
/// text is not JSON.
fn result_in_place<'a>(
    method: &str,
    r: &mut Reader<'a>,
    cx: &mut Cx<'a>,
    out: &mut Option<Incoming<'a>>,
) -> Result<(), ()> {
    let mark = r.mark();
    let place = &mut *out;
    let failed = ResponseResult::decode_known(method, r, cx, move || {
        *place = Some(Incoming::Response {
            response: Response::placeholder(),
            result: Box::new(Typed::clean(ResponseResult::blank())),
        });
        match place {
            Some(Incoming::Response { result, .. }) => &mut result.value,
            _ => unreachable!("a response was set just above"),
        }
    });
    match failed {
        Some(Err(why)) if why.is_syntax() => return Err(()),
        // Left as sent, for `Response::typed` to report.
        Some(Err(_)) => {
            *out = None;
            cx.salvaged.clear();
            r.reset(mark);
        }
        _ => {}
    }
    Ok(())
}

/// [`Message::decode`], then a notification's or a request's params, or a
/// response's result, typed from their text.
fn two_steps<'a>(line: &'a str, how: Decoding<'_>) -> Result<Incoming<'a>, MessageError> {
    let mode = how.mode;
    // Lines borrow their params; owned text (never, today) would be typed
    // from a copy and copied once more.
    match Message::decode(line)? {
        Message::Notification(n) => match n.params.clone().map(RawJson::into_text) {
            None => typed_notification(n, None, mode),
            Some(Cow::Borrowed(text)) => typed_notification(n, Some(text), mode),
            Some(Cow::Owned(text)) => {
                typed_notification(n.into_owned(), Some(&text), mode).map(Incoming::into_owned)
            }
        },
        Message::Request(request) => Ok(match request.params.clone().map(RawJson::into_text) {
            None => typed_request(request, None, mode),
            Some(Cow::Borrowed(text)) => typed_request(request, Some(text), mode),
            Some(Cow::Owned(text)) => {
                typed_request(request.into_owned(), Some(&text), mode).into_owned()
            }
        }),
        Message::Response(response) => Ok(typed_response(response, how)),
        other => Ok(Incoming::Message(other)),
    }
}

/// A response with its result typed from its text when the tracker has
/// the request pending, or as sent.
fn typed_response<'a>(response: Response<'a>, how: Decoding<'_>) -> Incoming<'a> {
    let Some(method) = how.method_of(&response.id) else {
        return Incoming::Message(Message::Response(response));
    };
    // Lines borrow their results; owned text (never, today) is left as
    // sent, for `Response::typed`.
    let Cow::Borrowed(text) = response.result.clone().into_text() else {
        return Incoming::Message(Message::Response(response));
    };
    match ResponseResult::decode_text(method, text, how.mode) {
        Ok(Typed {
            value: ResponseResult::Other(_),
            ..
        })
        | Err(_) => Incoming::Message(Message::Response(response)),
        Ok(result) => Incoming::Response {
            response,
            result: Box::new(result),
        },
    }
}

/// A notification's params typed from their text: the notification with
/// them; as sent when they do not fit, in lenient mode (as a request is);
/// the error in strict mode.
fn typed_notification<'a>(
    notification: Notification<'a>,
    params: Option<&'a str>,
    mode: Mode,
) -> Result<Incoming<'a>, MessageError> {
    match NotificationParams::decode_text(notification.method.clone(), params, mode) {
        Ok(params) => Ok(Incoming::Notification(params)),
        Err(e) if mode == Mode::Strict => Err(e),
        Err(_) => Ok(Incoming::Message(Message::Notification(notification))),
    }
}

/// A request's params typed from their text: the request with them, or as
/// sent when they do not fit (for the caller to answer `-32602`).
fn typed_request<'a>(request: Request<'a>, params: Option<&'a str>, mode: Mode) -> Incoming<'a> {
    match RequestParams::decode_text(request.method.clone(), params, mode) {
        Ok(params) => Incoming::Request {
            request,
            params: Box::new(params),
        },
        Err(_) => Incoming::Message(Message::Request(request)),
    }
}

/// The `jsonrpc` member's value as [`Lead`] reads it.
const JSONRPC: &str = "\"2.0\"";

/// The members that open a line as every peer writes them, without
/// whitespace: `{"jsonrpc":"2.0"`, then `,"id":` and an integer, then
/// `,"method":"` and a name without escapes, then the key `,"params":`,
/// each only if the one before was read. What `one_pass` would read from
/// them, found without its member loop: the member loop reads on from
/// `end` (the params' value, its key taken as read; `start` when not even
/// `jsonrpc` is there), so any other layout, an id of another kind (a
/// string, `null`, a fraction) or a method with an escape is read by the
/// loop as before, and a member repeated later is a duplicate as before.
struct Lead<'a> {
    /// The offset after the last member read.
    end: usize,
    /// The id's token and its value.
    id: Option<(&'a str, i64)>,
    /// The method's token (quotes included) and its name.
    method: Option<(&'a str, &'a str)>,
    /// Whether `,"params":` was read after the method (`end` after it).
    params: bool,
}

impl<'a> Lead<'a> {
    fn read(line: &'a str, start: usize) -> Self {
        let b = line.as_bytes();
        let mut lead = Lead {
            end: start,
            id: None,
            method: None,
            params: false,
        };
        let Some(after) = start.checked_add(16) else {
            return lead;
        };
        if b.get(start..after) != Some(br#"{"jsonrpc":"2.0""#.as_slice()) {
            return lead;
        }
        lead.end = after;
        if let Some((end, id)) = lead_id(line, after) {
            lead.end = end;
            lead.id = Some(id);
        }
        if let Some((end, method)) = lead_method(line, lead.end) {
            lead.method = Some(method);
            lead.params = b.get(end..end.saturating_add(10)) == Some(br#","params":"#.as_slice());
            lead.end = if lead.params {
                end.saturating_add(10)
            } else {
                end
            };
        }
        lead
    }
}

/// `,"id":` and an integer id at `at` (an integer token JSON and
/// [`parse_id`] take: no sign on a zero, no leading zero, no fraction or
/// exponent, at most eighteen digits so that it fits an `i64`): the offset
/// after it, its token and its value.
fn lead_id(line: &str, at: usize) -> Option<(usize, (&str, i64))> {
    let b = line.as_bytes();
    let from = at.checked_add(6)?;
    if b.get(at..from)? != br#","id":"#.as_slice() {
        return None;
    }
    let negative = b.get(from) == Some(&b'-');
    let digits_from = from.saturating_add(usize::from(negative));
    let mut end = digits_from;
    let mut value: i64 = 0;
    while let Some(&c) = b.get(end) {
        if !c.is_ascii_digit() {
            break;
        }
        value = value
            .checked_mul(10)?
            .checked_add(i64::from(c.wrapping_sub(b'0')))?;
        end = end.saturating_add(1);
    }
    let len = end.saturating_sub(digits_from);
    let leading_zero = b.get(digits_from) == Some(&b'0') && (len > 1 || negative);
    if len == 0 || len > 18 || leading_zero || matches!(b.get(end), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let value = if negative {
        value.checked_neg()?
    } else {
        value
    };
    Some((end, (line.get(from..end)?, value)))
}

/// `,"method":"` and a name without escapes or control characters at
/// `at`: the offset after it, its token and its name.
fn lead_method(line: &str, at: usize) -> Option<(usize, (&str, &str))> {
    let b = line.as_bytes();
    let quote = at.checked_add(10)?;
    if b.get(at..quote.checked_add(1)?)? != br#","method":""#.as_slice() {
        return None;
    }
    let from = quote.saturating_add(1);
    let close = short_special(b, from).filter(|&n| b.get(n) == Some(&b'"'))?;
    let token = line.get(quote..close.saturating_add(1))?;
    let name = token.strip_prefix('"')?.strip_suffix('"')?;
    Some((quote.saturating_add(token.len()), (token, name)))
}

/// The text of a JSON string token without escapes.
fn plain_string(token: &str) -> Option<&str> {
    let body = token.strip_prefix('"')?.strip_suffix('"')?;
    (!body.contains('\\')).then_some(body)
}
