//! The JSON-RPC envelope: request, notification, response, error; params and
//! results kept as borrowed raw JSON until asked for.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::id::RequestId;
use super::methods::{NotificationParams, RequestParams, ResponseResult};
use super::raw::{cow, present, IntoOwned, RawJson};
use super::salvage::Typed;
use super::wire::Mode;
use super::{EnvelopeFault, MessageError};
use crate::framing::EncodeError;
use crate::json::scan;
use crate::json::unescape::unquote;
use crate::ErrorCode;

/// One ACP message: a JSON-RPC 2.0 request, notification, response or
/// error response, decoded from one line without copying.
///
/// `params` and `result` stay raw JSON borrowed from the line until
/// [`Request::typed`], [`Notification::typed`] or [`Response::typed`] asks
/// for the typed form; [`Message::encode`] writes the message back as one
/// line, raw parts unchanged.
///
/// ```
/// use acp_codec::acp::Mode;
/// use acp_codec::acp::{Message, NotificationParams, SessionUpdate, ContentBlock};
///
/// let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}}}"#;
/// let msg = Message::decode(line).unwrap();
/// let Message::Notification(n) = &msg else { panic!() };
/// let NotificationParams::SessionUpdate(update) = n.typed(Mode::Lenient).unwrap().value else { panic!() };
/// let SessionUpdate::AgentMessageChunk(chunk) = &update.update else { panic!() };
/// let ContentBlock::Text(text) = &chunk.content else { panic!() };
/// assert_eq!(text.text, "Hi");
///
/// let mut out = Vec::new();
/// msg.encode(&mut out).unwrap();
/// assert_eq!(out, format!("{line}\n").into_bytes());
///
/// // Stray text on stdout is a typed error, mapped to -32700.
/// let err = Message::decode("Loaded cached credentials.").unwrap_err();
/// assert_eq!(err.code().0, -32700);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Message<'a> {
    /// A request: the peer waits for a response with the same id.
    Request(Request<'a>),
    /// A notification: no response.
    Notification(Notification<'a>),
    /// A successful response.
    Response(Response<'a>),
    /// An error response.
    Error(ErrorResponse<'a>),
}

/// A JSON-RPC request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request<'a> {
    /// The id to answer with.
    pub id: RequestId<'a>,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The params as sent (`None` when absent; `Some(null)` is kept).
    pub params: Option<RawJson<'a>>,
}

/// A JSON-RPC notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification<'a> {
    /// The method name.
    pub method: Cow<'a, str>,
    /// The params as sent.
    pub params: Option<RawJson<'a>>,
}

/// A successful JSON-RPC response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response<'a> {
    /// The id of the request answered.
    pub id: RequestId<'a>,
    /// The result as sent.
    pub result: RawJson<'a>,
}

/// A JSON-RPC error response.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse<'a> {
    /// The id of the request answered (`null` when it could not be read).
    pub id: RequestId<'a>,
    /// The error.
    pub error: RpcError<'a>,
}

/// The `error` object of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError<'a> {
    /// The code; ACP's are the [`ErrorCode`] constants.
    pub code: ErrorCode,
    /// A short description.
    #[serde(borrow, deserialize_with = "cow")]
    pub message: Cow<'a, str>,
    /// Extra data, as sent.
    #[serde(
        borrow,
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub data: Option<RawJson<'a>>,
}

impl<'a> RpcError<'a> {
    /// An error with `code` and `message`, without `data`.
    ///
    /// ```
    /// use acp_codec::acp::{encode_error, RequestId, RpcError};
    /// use acp_codec::ErrorCode;
    ///
    /// let error = RpcError::new(ErrorCode::RESOURCE_NOT_FOUND, "no such file: /a");
    /// let mut out = Vec::new();
    /// encode_error(&RequestId::Number(3), &error, &mut out)?;
    /// assert_eq!(out, concat!(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"no such file: /a"}}"#, "\n").as_bytes());
    /// # Ok::<(), acp_codec::EncodeError>(())
    /// ```
    pub fn new(code: ErrorCode, message: impl Into<Cow<'a, str>>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The error with its text copied.
    pub fn into_owned(self) -> RpcError<'static> {
        RpcError {
            code: self.code,
            message: IntoOwned::into_owned(self.message),
            data: self.data.map(RawJson::into_owned),
        }
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(self.0)
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        i32::deserialize(d).map(ErrorCode)
    }
}

fn invalid(reason: EnvelopeFault) -> MessageError {
    MessageError::InvalidEnvelope { reason }
}

impl<'a> Message<'a> {
    /// Decodes one line (without its `\n`) into a message, borrowing from it.
    ///
    /// # Errors
    ///
    /// - [`MessageError::NotJson`] (`-32700`) for text that is not JSON,
    ///   such as log lines an agent printed on stdout;
    /// - [`MessageError::Batch`] (`-32600`) for a JSON array: ACP v1 has no
    ///   batches;
    /// - [`MessageError::InvalidEnvelope`] (`-32600`) for JSON that is not a
    ///   JSON-RPC 2.0 message.
    ///
    /// Nothing is kept between calls: the next line decodes on its own.
    ///
    /// ```
    /// use acp_codec::acp::{Message, RequestId};
    ///
    /// let line = r#"{"jsonrpc":"2.0","id":"r-1","method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#;
    /// let msg = Message::decode(line)?;
    /// assert_eq!(msg.method(), Some("fs/read_text_file"));
    /// assert_eq!(msg.id(), Some(&RequestId::from("r-1")));
    /// let Message::Request(req) = msg else { unreachable!() };
    /// // Params stay raw JSON, borrowed from the line, until asked for.
    /// assert_eq!(req.params.unwrap().get(), r#"{"sessionId":"s","path":"/a"}"#);
    ///
    /// // A batch is not ACP v1: -32600, and the next line decodes as usual.
    /// let err = Message::decode(r#"[{"jsonrpc":"2.0","method":"x"}]"#).unwrap_err();
    /// assert_eq!(err.code().0, -32600);
    /// # Ok::<(), acp_codec::MessageError>(())
    /// ```
    pub fn decode(line: &'a str) -> Result<Self, MessageError> {
        let b = line.as_bytes();
        let start = scan::skip_ws(b, 0);
        if b.get(start) != Some(&b'{') {
            return Err(not_an_object(line, start));
        }
        let mut members = scan::Members::new(line).map_err(|e| not_json(line, e.offset))?;
        let mut env = Envelope::default();
        for m in &mut members {
            let (k, v) = m.map_err(|e| not_json(line, e.offset))?;
            env.take_token(k, v)?;
        }
        let end = scan::skip_ws(b, members.end());
        if end != b.len() {
            return Err(not_json(line, end));
        }
        env.into_message()
    }

    /// Decodes one line given as bytes (see [`Message::decode`]).
    ///
    /// # Errors
    ///
    /// As [`Message::decode`]; bytes that are not UTF-8 are
    /// [`MessageError::NotJson`].
    pub fn decode_bytes(line: &'a [u8]) -> Result<Self, MessageError> {
        match core::str::from_utf8(line) {
            Ok(s) => Self::decode(s),
            Err(_) => Err(MessageError::NotJson { line: 1, column: 0 }),
        }
    }

    /// Appends the message to `out` as one compact line plus `\n`; returns
    /// the bytes written.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when raw JSON handed in by the caller holds a newline
    /// inside a string; `out` is then left as it was.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, EncodeError> {
        crate::framing::encode_line(self, out)
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&RequestId<'a>> {
        match self {
            Self::Request(r) => Some(&r.id),
            Self::Response(r) => Some(&r.id),
            Self::Error(r) => Some(&r.id),
            Self::Notification(_) => None,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Self::Request(r) => Some(&r.method),
            Self::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// The message with all borrowed text copied (`'static`).
    pub fn into_owned(self) -> Message<'static> {
        match self {
            Self::Request(r) => Message::Request(r.into_owned()),
            Self::Notification(n) => Message::Notification(n.into_owned()),
            Self::Response(r) => Message::Response(r.into_owned()),
            Self::Error(e) => Message::Error(ErrorResponse {
                id: e.id.into_owned(),
                error: e.error.into_owned(),
            }),
        }
    }
}

#[cfg(feature = "remote")]
/// The `sessionId` member of the params (a response's result), read by
/// [`Message::decode_with_session`] in the walk that decodes the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionMember<'a> {
    /// No such member, or params (result) that are not an object.
    Absent,
    /// One: its raw value text.
    One(&'a str),
    /// More than one.
    Repeated,
}

#[cfg(feature = "remote")]
impl<'a> Message<'a> {
    /// [`Message::decode`], reading the params' (a response's result's) `sessionId` in the
    /// same walk, member by member (same grammar, same nesting limit): a router finds the
    /// session without a second pass over a large message.
    pub(crate) fn decode_with_session(
        line: &'a str,
    ) -> Result<(Self, SessionMember<'a>), MessageError> {
        let b = line.as_bytes();
        let bad = |offset: usize| not_json(line, offset);
        let start = scan::skip_ws(b, 0);
        if b.get(start) != Some(&b'{') {
            return Err(not_an_object(line, start));
        }
        let mut env = Envelope::default();
        let (mut in_params, mut in_result) = (SessionMember::Absent, SessionMember::Absent);
        let mut i = scan::skip_ws(b, start.saturating_add(1));
        if b.get(i) == Some(&b'}') {
            i = i.saturating_add(1);
        } else {
            loop {
                let (key, v) = scan::key_at(b, i).map_err(|e| bad(e.offset))?;
                let key = line
                    .get(i..i.saturating_add(key.len()))
                    .ok_or_else(|| bad(i))?;
                let name = member_name(key);
                let inner =
                    matches!(name.as_deref(), Some("params" | "result")) && b.get(v) == Some(&b'{');
                let v_end = if inner {
                    let (end, found) = object_session(line, v)?;
                    match name.as_deref() {
                        Some("params") => in_params = found,
                        _ => in_result = found,
                    }
                    end
                } else {
                    scan::skip_value(b, v).map_err(|e| bad(e.offset))?
                };
                let value = line.get(v..v_end).ok_or_else(|| bad(v))?;
                if let Some(name) = name {
                    env.take(&name, value)?;
                }
                i = scan::skip_ws(b, v_end);
                match b.get(i) {
                    Some(b',') => i = scan::skip_ws(b, i.saturating_add(1)),
                    Some(b'}') => {
                        i = i.saturating_add(1);
                        break;
                    }
                    _ => return Err(bad(i)),
                }
            }
        }
        let end = scan::skip_ws(b, i);
        if end != b.len() {
            return Err(bad(end));
        }
        let message = env.into_message()?;
        let session = match message {
            Message::Response(_) => in_result,
            _ => in_params,
        };
        Ok((message, session))
    }
}

/// A key's name (its raw token unquoted); `None` when its escapes do not
/// decode (it names no envelope member).
#[cfg(feature = "remote")]
fn member_name(key: &str) -> Option<Cow<'_, str>> {
    match key.get(1..key.len().saturating_sub(1)) {
        Some(name) if !name.contains('\\') => Some(Cow::Borrowed(name)),
        _ => unquote::<serde_json::Error>(key).ok(),
    }
}

/// Walks the object at `v` (a member of the envelope): the offset after
/// it, and its `sessionId` members.
#[cfg(feature = "remote")]
fn object_session(line: &str, v: usize) -> Result<(usize, SessionMember<'_>), MessageError> {
    let b = line.as_bytes();
    let bad = |offset: usize| not_json(line, offset);
    let mut found = SessionMember::Absent;
    let mut i = scan::skip_ws(b, v.saturating_add(1));
    if b.get(i) == Some(&b'}') {
        return Ok((i.saturating_add(1), found));
    }
    loop {
        let (key, at) = scan::key_at(b, i).map_err(|e| bad(e.offset))?;
        let key = line
            .get(i..i.saturating_add(key.len()))
            .ok_or_else(|| bad(i))?;
        // Its members are one container deep in the value `skip_value`
        // would have skipped.
        let end = scan::skip_value_within(b, at, scan::MAX_DEPTH.saturating_sub(1))
            .map_err(|e| bad(e.offset))?;
        if member_name(key).as_deref() == Some("sessionId") {
            found = match found {
                SessionMember::Absent => {
                    SessionMember::One(line.get(at..end).ok_or_else(|| bad(at))?)
                }
                _ => SessionMember::Repeated,
            };
        }
        i = scan::skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = scan::skip_ws(b, i.saturating_add(1)),
            Some(b'}') => return Ok((i.saturating_add(1), found)),
            _ => return Err(bad(i)),
        }
    }
}

/// The envelope's members, as raw value texts: what a walk over a line
/// found, checked by [`Envelope::into_message`] (the one place the
/// JSON-RPC rules are written).
#[derive(Default)]
pub(crate) struct Envelope<'a> {
    pub(crate) jsonrpc: Option<&'a str>,
    pub(crate) id: Option<&'a str>,
    pub(crate) method: Option<&'a str>,
    pub(crate) params: Option<&'a str>,
    pub(crate) result: Option<&'a str>,
    pub(crate) error: Option<&'a str>,
}

impl<'a> Envelope<'a> {
    /// Takes the member whose key is the raw token `key` (quotes included).
    fn take_token(&mut self, key: &str, value: &'a str) -> Result<(), MessageError> {
        let name = match key.get(1..key.len().saturating_sub(1)) {
            Some(name) if !name.contains('\\') => Cow::Borrowed(name),
            // A key whose escapes do not decode names no envelope member:
            // it is left to the params' or result's decoder.
            _ => match unquote::<serde_json::Error>(key) {
                Ok(name) => name,
                Err(_) => return Ok(()),
            },
        };
        self.take(&name, value)
    }

    /// Takes member `key` (unescaped) if it is an envelope member.
    pub(crate) fn take(&mut self, key: &str, value: &'a str) -> Result<(), MessageError> {
        let slot = match key {
            "jsonrpc" => &mut self.jsonrpc,
            "id" => &mut self.id,
            "method" => &mut self.method,
            "params" => &mut self.params,
            "result" => &mut self.result,
            "error" => &mut self.error,
            _ => return Ok(()),
        };
        if slot.is_some() {
            return Err(invalid(EnvelopeFault::DuplicateMember));
        }
        *slot = Some(value);
        Ok(())
    }

    /// The message the members make, by JSON-RPC 2.0's rules.
    pub(crate) fn into_message(self) -> Result<Message<'a>, MessageError> {
        match self.jsonrpc {
            Some(v)
                if v == "\"2.0\"" || unquote::<serde_json::Error>(v).is_ok_and(|s| s == "2.0") => {}
            Some(_) => return Err(invalid(EnvelopeFault::JsonrpcNot20)),
            None => return Err(invalid(EnvelopeFault::JsonrpcMissing)),
        }
        let id = match self.id {
            Some(v) => Some(parse_id(v)?),
            None => None,
        };
        let method = match self.method {
            Some(v) => Some(
                unquote::<serde_json::Error>(v)
                    .map_err(|_| invalid(EnvelopeFault::MethodNotString))?,
            ),
            None => None,
        };
        let params = self.params.map(RawJson::from_validated);
        match (method, self.result, self.error) {
            (Some(method), None, None) => Ok(match id {
                Some(id) => Message::Request(Request { id, method, params }),
                None => Message::Notification(Notification { method, params }),
            }),
            (Some(_), _, _) => Err(invalid(EnvelopeFault::MethodWithResultOrError)),
            (None, Some(_), Some(_)) => Err(invalid(EnvelopeFault::ResultAndError)),
            (None, Some(result), None) => match id {
                Some(id) if params.is_none() => Ok(Message::Response(Response {
                    id,
                    result: RawJson::from_validated(result),
                })),
                Some(_) => Err(invalid(EnvelopeFault::ParamsInResponse)),
                None => Err(invalid(EnvelopeFault::ResponseWithoutId)),
            },
            (None, None, Some(error)) => match id {
                Some(id) if params.is_none() => {
                    let error = serde_json::from_str(error)
                        .map_err(|_| invalid(EnvelopeFault::ErrorNotErrorObject))?;
                    Ok(Message::Error(ErrorResponse { id, error }))
                }
                Some(_) => Err(invalid(EnvelopeFault::ParamsInResponse)),
                None => Err(invalid(EnvelopeFault::ErrorResponseWithoutId)),
            },
            (None, None, None) => Err(invalid(EnvelopeFault::NoMethodResultOrError)),
        }
    }
}

/// An id from its JSON text: null, a 64-bit integer or a string.
pub(crate) fn parse_id(text: &str) -> Result<RequestId<'_>, MessageError> {
    match text.as_bytes().first() {
        Some(b'n') => Ok(RequestId::Null),
        Some(b'"') => unquote::<serde_json::Error>(text)
            .map(RequestId::Str)
            .map_err(|_| invalid(EnvelopeFault::IdInvalidString)),
        // `-0` is a float to serde_json, so not an integer id.
        _ if text == "-0" => Err(invalid(EnvelopeFault::IdInvalidType)),
        _ => text
            .parse::<i64>()
            .map(RequestId::Number)
            .map_err(|_| invalid(EnvelopeFault::IdInvalidType)),
    }
}

pub(crate) fn not_json(line: &str, offset: usize) -> MessageError {
    // Line and column of the offset, like serde_json reports them.
    let before = line.get(..offset).unwrap_or(line);
    let row = before
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        .saturating_add(1);
    let col = before.rfind('\n').map_or(before.len(), |p| {
        before.len().saturating_sub(p).saturating_sub(1)
    });
    MessageError::NotJson {
        line: row,
        column: col.saturating_add(1),
    }
}

/// Why a line that does not start with `{` is not a message.
pub(crate) fn not_an_object(line: &str, start: usize) -> MessageError {
    if let Err(e) = scan::validate(line) {
        return not_json(line, e.offset);
    }
    if line.as_bytes().get(start) == Some(&b'[') {
        let mut len = 0usize;
        let b = line.as_bytes();
        let mut i = scan::skip_ws(b, start.saturating_add(1));
        while let Some(&c) = b.get(i) {
            if c == b']' {
                break;
            }
            i = match scan::skip_value(b, i) {
                Ok(end) => end,
                Err(_) => break,
            };
            len = len.saturating_add(1);
            i = scan::skip_ws(b, i);
            if b.get(i) == Some(&b',') {
                i = scan::skip_ws(b, i.saturating_add(1));
            }
        }
        return MessageError::Batch { len };
    }
    invalid(EnvelopeFault::NotAnObject)
}

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        match self {
            Self::Request(r) => {
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Self::Notification(n) => {
                m.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Self::Response(r) => {
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("result", &r.result)?;
            }
            Self::Error(e) => {
                m.serialize_entry("id", &e.id)?;
                m.serialize_entry("error", &e.error)?;
            }
        }
        m.end()
    }
}

impl Notification<'_> {
    /// The notification with all borrowed text copied (`'static`).
    pub fn into_owned(self) -> Notification<'static> {
        Notification {
            method: IntoOwned::into_owned(self.method),
            params: self.params.map(RawJson::into_owned),
        }
    }
}

impl Request<'_> {
    /// The request with all borrowed text copied (`'static`).
    pub fn into_owned(self) -> Request<'static> {
        Request {
            id: self.id.into_owned(),
            method: IntoOwned::into_owned(self.method),
            params: self.params.map(RawJson::into_owned),
        }
    }
}

impl<'a> Request<'a> {
    /// A request with no id, method or params, to be overwritten: the
    /// place [`decode_line`](super::decode_line) builds a line's result in
    /// before it has read the whole envelope.
    pub(crate) const fn placeholder() -> Self {
        Self {
            id: RequestId::Null,
            method: Cow::Borrowed(""),
            params: None,
        }
    }

    /// Decodes the params by method (see [`RequestParams`]) in `mode`:
    /// leniently ([`Mode::Lenient`], the default) what does not fit the
    /// schema is salvaged and listed in [`Typed::salvaged`]; strictly it is
    /// an error.
    ///
    /// # Errors
    ///
    /// [`MessageError::InvalidParams`] (`-32602`) when the params of a known
    /// method do not fit its schema (leniently: not even with salvages).
    /// Unknown methods are not errors.
    ///
    /// ```
    /// use acp_codec::acp::{Message, Mode, RequestParams};
    ///
    /// let line = r#"{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/src/main.rs","line":10}}"#;
    /// let Message::Request(req) = Message::decode(line)? else { unreachable!() };
    /// let RequestParams::ReadTextFile(read) = req.typed(Mode::Lenient)?.value else { unreachable!() };
    /// assert_eq!((read.path.as_ref(), read.line), ("/src/main.rs", Some(10)));
    ///
    /// // A known method with params that do not fit: -32602, to answer with.
    /// let bad = r#"{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"path":7}}"#;
    /// let Message::Request(req) = Message::decode(bad)? else { unreachable!() };
    /// assert_eq!(req.typed(Mode::Lenient).unwrap_err().code().0, -32602);
    /// # Ok::<(), acp_codec::MessageError>(())
    /// ```
    pub fn typed(&self, mode: Mode) -> Result<Typed<'_, RequestParams<'_>>, MessageError> {
        RequestParams::decode_text(
            Cow::Borrowed(&self.method),
            self.params.as_ref().map(RawJson::get),
            mode,
        )
    }
}

impl<'a> Notification<'a> {
    /// Decodes the params by method (see [`NotificationParams`]) in
    /// `mode`, as [`Request::typed`].
    ///
    /// # Errors
    ///
    /// [`MessageError::InvalidParams`] when the params of a known method do
    /// not fit its schema. Unknown methods are not errors.
    ///
    /// ```
    /// use acp_codec::acp::{Message, Mode, NotificationParams};
    ///
    /// let line = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#;
    /// let Message::Notification(n) = Message::decode(line)? else { unreachable!() };
    /// let NotificationParams::Cancel(cancel) = n.typed(Mode::Lenient)?.value else { unreachable!() };
    /// assert_eq!(cancel.session_id, "s1");
    ///
    /// // Extension methods (leading `_`) are not errors either.
    /// let ext = r#"{"jsonrpc":"2.0","method":"_zed/ping","params":{}}"#;
    /// let Message::Notification(n) = Message::decode(ext)? else { unreachable!() };
    /// assert_eq!(n.typed(Mode::Strict)?.value.method(), "_zed/ping");
    /// # Ok::<(), acp_codec::MessageError>(())
    /// ```
    pub fn typed(&self, mode: Mode) -> Result<Typed<'_, NotificationParams<'_>>, MessageError> {
        NotificationParams::decode_text(
            Cow::Borrowed(&self.method),
            self.params.as_ref().map(RawJson::get),
            mode,
        )
    }
}

impl Response<'_> {
    /// The response with all borrowed text copied (`'static`).
    pub fn into_owned(self) -> Response<'static> {
        Response {
            id: self.id.into_owned(),
            result: self.result.into_owned(),
        }
    }
}

impl<'a> Response<'a> {
    /// A `null` result to request `null`, to be overwritten, as
    /// [`Request::placeholder`].
    pub(crate) const fn placeholder() -> Self {
        Self {
            id: RequestId::Null,
            result: RawJson::null(),
        }
    }

    /// Decodes the result as the result of `method` (the method of the
    /// request it answers, as the [`Tracker`](super::Tracker) reports it),
    /// in `mode` as [`Request::typed`].
    ///
    /// # Errors
    ///
    /// [`MessageError::InvalidResult`] when the result does not fit.
    ///
    /// ```
    /// use std::time::Duration;
    /// use acp_codec::acp::{Message, Mode, ResponseResult, StopReason, Tracker};
    ///
    /// let mut tracker = Tracker::new();
    /// let id = tracker.start("session/prompt", Duration::ZERO);
    /// let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"end_turn"}}}}"#);
    /// let msg = Message::decode(&line)?;
    /// // The tracker knows which method the response answers.
    /// let done = tracker.handle(&msg, Duration::from_secs(1))?.unwrap();
    /// let Message::Response(resp) = &msg else { unreachable!() };
    /// let ResponseResult::Prompt(result) = resp.typed(&done.method, Mode::Lenient)?.value else { unreachable!() };
    /// assert_eq!(result.stop_reason, StopReason::EndTurn);
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    pub fn typed(
        &self,
        method: &str,
        mode: Mode,
    ) -> Result<Typed<'_, ResponseResult<'_>>, MessageError> {
        ResponseResult::decode(method, &self.result, mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    fn enc(m: &Message<'_>) -> String {
        let mut out = Vec::new();
        m.encode(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn kinds_and_presence() {
        let m = Message::decode(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap();
        assert!(matches!(&m, Message::Request(r) if r.id == RequestId::Null && r.params.is_none()));
        let m = Message::decode(r#"{"jsonrpc":"2.0","method":"x","params":null}"#).unwrap();
        assert!(matches!(&m, Message::Notification(n) if n.params.as_ref().unwrap().is_null()));
        assert_eq!(
            enc(&m),
            "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":null}\n"
        );
        let m = Message::decode(r#"{"jsonrpc":"2.0","id":"a","result":null}"#).unwrap();
        assert!(matches!(&m, Message::Response(r) if r.result.is_null()));
        let m = Message::decode(
            r#"{"id":3,"jsonrpc":"2.0","error":{"code":-32800,"message":"c","data":{"x":1}}}"#,
        )
        .unwrap();
        assert_eq!(enc(&m), "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32800,\"message\":\"c\",\"data\":{\"x\":1}}}\n");
    }

    #[test]
    fn bad_lines_are_typed() {
        let code = |l: &str| Message::decode(l).unwrap_err().code().0;
        assert_eq!(code("hello"), -32700);
        assert_eq!(code("[INFO] starting"), -32700);
        assert_eq!(code("{\"jsonrpc\":\"2.0\""), -32700);
        assert_eq!(code("[]"), -32600);
        assert!(matches!(
            Message::decode("[{},{}]"),
            Err(MessageError::Batch { len: 2 })
        ));
        assert_eq!(code("42"), -32600);
        assert_eq!(code(r#"{"jsonrpc":"1.0","method":"x"}"#), -32600);
        assert_eq!(code(r#"{"method":"x"}"#), -32600);
        assert_eq!(code(r#"{"jsonrpc":"2.0","method":5}"#), -32600);
        assert_eq!(code(r#"{"jsonrpc":"2.0","result":1}"#), -32600);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#),
            -32600
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#),
            -32600
        );
        assert!(Message::decode(r#"{"jsonrpc":"2.0","method":"ok"}"#).is_ok());
    }
}

#[cfg(all(test, feature = "remote"))]
mod session_walk {
    use super::*;
    use alloc::format;
    use alloc::string::{String, ToString};

    /// `decode_with_session` against `Message::decode` (the message, or
    /// the error) and against reading `sessionId` from the decoded params
    /// with `serde_json::Value`, an independent reader.
    fn same(line: &str) {
        let walked = Message::decode_with_session(line);
        let decoded = Message::decode(line);
        match (&walked, &decoded) {
            (Ok((a, member)), Ok(b)) => {
                assert_eq!(a, b, "{line}");
                let raw = match b {
                    Message::Response(r) => Some(r.result.get()),
                    Message::Request(r) => r.params.as_ref().map(RawJson::get),
                    Message::Notification(n) => n.params.as_ref().map(RawJson::get),
                    Message::Error(_) => None,
                };
                let oracle = raw
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
                    .and_then(|v| v.get("sessionId").map(|s| s.to_string()));
                let got = match member {
                    SessionMember::One(v) => Some(
                        serde_json::from_str::<serde_json::Value>(v)
                            .unwrap()
                            .to_string(),
                    ),
                    SessionMember::Absent => None,
                    SessionMember::Repeated => return,
                };
                assert_eq!(got, oracle, "{line}");
            }
            (Err(_), Err(_)) => {}
            _ => panic!("{line}: {walked:?} against {decoded:?}"),
        }
    }

    #[test]
    fn one_walk_decodes_as_decode_and_finds_the_session() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let lines: [String; 14] = [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"x":"a \"sessionId\":\"no\""}}}"#.into(),
            r#"{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"/a","sessionId":"s\u00e9"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"new"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#.into(),
            r#"{"jsonrpc":"2.0","method":"x","par\u0061ms":{"session\u0049d":"esc"}}"#.into(),
            r#"{"jsonrpc":"2.0","method":"x","params":{"sessionId":"a","sessionId":"b"}}"#.into(),
            r#"{"jsonrpc":"2.0","method":"x","params":[1,2]}"#.into(),
            r#"{"jsonrpc":"2.0","method":"x","params":{}}"#.into(),
            r#" { "params" : { "sessionId" : null } , "method" : "x" , "jsonrpc" : "2.0" } "#.into(),
            r#"{"jsonrpc":"2.0","method":"x","params":{"a":1,}}"#.into(),
            r#"{"jsonrpc":"2.0","method":"x","params":{"a":1}} x"#.into(),
            format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{}}}}}"#, deep(126)),
            format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{}}}}}"#, deep(127)),
            format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{}}}}}"#, deep(128)),
        ];
        for line in &lines {
            same(line);
        }
        let (_, member) = Message::decode_with_session(&lines[5]).unwrap();
        assert_eq!(member, SessionMember::Repeated);
        let (_, member) = Message::decode_with_session(&lines[4]).unwrap();
        assert_eq!(member, SessionMember::One("\"esc\""));
    }
}
