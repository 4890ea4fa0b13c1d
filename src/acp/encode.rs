//! Encoding messages: a typed request, notification, response or error as
//! one line of compact JSON.

use alloc::vec::Vec;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::id::RequestId;
use super::message::{ErrorResponse, Message, RpcError};
use super::methods::{NotificationParams, RequestParams};
use crate::framing::EncodeError;

/// Encodes a typed request as one line.
///
/// To number requests and match their responses, use
/// [`Tracker::encode_request`](super::Tracker::encode_request), which calls
/// this with the next id.
///
/// # Errors
///
/// [`EncodeError`] as [`encode_line`](crate::encode_line); `out` is left as it
/// was.
///
/// ```
/// use acp_codec::acp::{encode_request, ReadTextFileRequest, RequestId, RequestParams};
///
/// let read = RequestParams::ReadTextFile(
///     ReadTextFileRequest::new("s1", "/p/notes.txt").with_limit(20),
/// );
/// let mut out = Vec::new();
/// let n = encode_request(&RequestId::Number(9), &read, &mut out)?;
/// assert_eq!(n, out.len());
/// assert_eq!(out, concat!(r#"{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/p/notes.txt","limit":20}}"#, "\n").as_bytes());
/// # Ok::<(), acp_codec::EncodeError>(())
/// ```
pub fn encode_request(
    id: &RequestId<'_>,
    params: &RequestParams<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    crate::framing::encode_line(
        &Outgoing {
            id: Some(id),
            method: Some(params.method()),
            params: params.has_params().then_some(params),
            result: None::<&()>,
        },
        out,
    )
}

/// Encodes a typed notification as one line.
///
/// # Errors
///
/// [`EncodeError`] as [`encode_line`](crate::encode_line).
///
/// ```
/// use acp_codec::acp::{encode_notification, CancelNotification, NotificationParams};
///
/// let mut out = Vec::new();
/// let cancel = NotificationParams::Cancel(CancelNotification::new("s1"));
/// encode_notification(&cancel, &mut out)?;
/// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s1\"}}\n");
/// # Ok::<(), acp_codec::EncodeError>(())
/// ```
pub fn encode_notification(
    params: &NotificationParams<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    crate::framing::encode_line(
        &Outgoing {
            id: None,
            method: Some(params.method()),
            params: params.has_params().then_some(params),
            result: None::<&()>,
        },
        out,
    )
}

/// Encodes a successful response carrying `result` (a typed result such as
/// [`ResponseResult`](super::ResponseResult) or any of its payloads) as one line.
///
/// To also mark the peer's request answered, use
/// [`Tracker::encode_response`](super::Tracker::encode_response).
///
/// # Errors
///
/// [`EncodeError`] as [`encode_line`](crate::encode_line).
///
/// ```
/// use acp_codec::acp::{encode_response, ReadTextFileResponse, RequestId};
///
/// let result = ReadTextFileResponse::new("line 1\nline 2");
/// let mut out = Vec::new();
/// encode_response(&RequestId::from("r-1"), &result, &mut out)?;
/// // The newline inside the text is escaped: still one line.
/// assert_eq!(out, concat!(r#"{"jsonrpc":"2.0","id":"r-1","result":{"content":"line 1\nline 2"}}"#, "\n").as_bytes());
/// # Ok::<(), acp_codec::EncodeError>(())
/// ```
pub fn encode_response<R: Serialize + ?Sized>(
    id: &RequestId<'_>,
    result: &R,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    crate::framing::encode_line(
        &Outgoing::<(), R> {
            id: Some(id),
            method: None,
            params: None,
            result: Some(result),
        },
        out,
    )
}

/// Encodes an error response as one line.
///
/// # Errors
///
/// [`EncodeError`] as [`encode_line`](crate::encode_line).
///
/// ```
/// use acp_codec::acp::Mode;
/// use acp_codec::acp::{encode_error, Message, RequestId, RpcError};
///
/// // Answer a request whose params do not fit with the error's own code.
/// let line = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":1}}"#;
/// let Message::Request(req) = Message::decode(line)? else { unreachable!() };
/// let err = req.typed(Mode::Lenient).unwrap_err();
/// let mut out = Vec::new();
/// encode_error(&req.id, &RpcError::new(err.code(), "invalid params"), &mut out)?;
/// assert_eq!(out, concat!(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params"}}"#, "\n").as_bytes());
/// # Ok::<(), acp_codec::Error>(())
/// ```
pub fn encode_error(
    id: &RequestId<'_>,
    error: &RpcError<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    Message::Error(ErrorResponse {
        id: id.clone(),
        error: error.clone(),
    })
    .encode(out)
}

/// A request (with an `id`) or a notification of `method` as one line,
/// its params typed in any version's params enum: what
/// [`encode_request`] and [`encode_notification`] write.
#[cfg(feature = "v2")]
pub(super) fn encode_call<P: Serialize + ?Sized>(
    id: Option<&RequestId<'_>>,
    method: &str,
    params: Option<&P>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    let outgoing = Outgoing {
        id,
        method: Some(method),
        params,
        result: None::<&()>,
    };
    crate::framing::encode_line(&outgoing, out)
}

/// A message being encoded from typed parts, without building a [`Message`].
struct Outgoing<'x, P: ?Sized, R: ?Sized> {
    id: Option<&'x RequestId<'x>>,
    method: Option<&'x str>,
    params: Option<&'x P>,
    result: Option<&'x R>,
}

impl<P: Serialize + ?Sized, R: Serialize + ?Sized> Serialize for Outgoing<'_, P, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        if let Some(id) = self.id {
            m.serialize_entry("id", id)?;
        }
        if let Some(method) = self.method {
            m.serialize_entry("method", method)?;
        }
        if let Some(params) = self.params {
            m.serialize_entry("params", params)?;
        }
        if let Some(result) = self.result {
            m.serialize_entry("result", result)?;
        }
        m.end()
    }
}
