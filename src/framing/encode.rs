//! Encoding values as exactly one line.

use alloc::vec::Vec;

use serde::Serialize;

use super::{EncodeError, LineTooLong, PeekedId};
use crate::ErrorCode;

/// Appends `value` to `out` as compact JSON plus `\n`: exactly one line.
///
/// Serialized values never hold a raw newline, except raw JSON embedded by
/// the caller (a [`serde_json::value::RawValue`] may be pretty-printed): such
/// newlines and the whitespace around them are compacted away. Returns the
/// number of bytes appended, `\n` included.
///
/// # Errors
///
/// [`EncodeError::Json`] if serialization fails, [`EncodeError::RawNewline`]
/// if embedded raw JSON holds a newline inside a string (invalid JSON that
/// cannot be one line). On error `out` is left as it was.
///
/// ```
/// use acp_codec::encode_line;
/// use serde_json::value::RawValue;
///
/// let pretty = RawValue::from_string("{\n  \"a\": [1,\n 2]\n}".to_owned()).unwrap();
/// let mut out = Vec::new();
/// encode_line(&pretty, &mut out).unwrap();
/// assert_eq!(out, b"{\"a\":[1,2]}\n");
/// ```
pub fn encode_line<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError> {
    let start = out.len();
    // With `std`, serialized straight into `out`; without, serde_json has
    // no writer, so through a buffer of its own.
    #[cfg(feature = "std")]
    let written = serde_json::to_writer(&mut *out, value);
    #[cfg(not(feature = "std"))]
    let written = serde_json::to_vec(value).map(|json| out.extend_from_slice(&json));
    if let Err(e) = written {
        out.truncate(start);
        return Err(EncodeError::Json(e));
    }
    finish(out, start)
}

impl LineTooLong {
    /// Appends the error response to the oversized request, when the
    /// line's first bytes named one ([`request_id`](Self::request_id)):
    /// `{"jsonrpc":"2.0","id":ID,"error":{"code":-32600,"message":"line of
    /// more than N bytes (request id ID)"}}` plus `\n`, so the peer is not
    /// left waiting. `-32600` (invalid request) is
    /// [`FrameError::code`](super::FrameError::code) of the error.
    ///
    /// Returns the bytes appended, or `None` (nothing appended) when the
    /// line is not a request or its id could not be read.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] if the reply cannot be encoded (it always can: the
    /// id and the message are plain); `out` is then as it was.
    ///
    /// ```
    /// use acp_codec::{FrameError, LineSplitter};
    ///
    /// let mut splitter = LineSplitter::with_max_line_len(16);
    /// let line = b"{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"session/prompt\",\"params\":{}}\n";
    /// let Some(Err(FrameError::LineTooLong(e))) = splitter.decode(line).item else { panic!() };
    /// let mut out = Vec::new();
    /// assert!(e.encode_reply(&mut out)?.is_some());
    /// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"error\":{\"code\":-32600,\"message\":\"line of more than 16 bytes (request id \\\"r-1\\\")\"}}\n");
    /// # Ok::<(), acp_codec::EncodeError>(())
    /// ```
    pub fn encode_reply(&self, out: &mut Vec<u8>) -> Result<Option<usize>, EncodeError> {
        let Some(id) = self.request_id() else {
            return Ok(None);
        };
        let message = alloc::string::ToString::to_string(self);
        let reply = Reply {
            jsonrpc: "2.0",
            id: match &id {
                PeekedId::Null => ReplyId::Null,
                PeekedId::Number(n) => ReplyId::Number(*n),
                PeekedId::Str(s) => ReplyId::Str(s.as_str()),
            },
            error: ReplyError {
                code: ErrorCode::INVALID_REQUEST.0,
                message: &message,
            },
        };
        encode_line(&reply, out).map(Some)
    }
}

/// The error response [`LineTooLong::encode_reply`] writes.
#[derive(Serialize)]
struct Reply<'a> {
    jsonrpc: &'static str,
    id: ReplyId<'a>,
    error: ReplyError<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ReplyId<'a> {
    Null,
    Number(i64),
    Str(&'a str),
}

#[derive(Serialize)]
struct ReplyError<'a> {
    code: i32,
    message: &'a str,
}

/// Appends raw JSON text to `out` as one compact line plus `\n`, after
/// checking it is one valid JSON value.
///
/// For bridges that forward JSON they did not build: the text is validated
/// (without building a value) and compacted only if it spans several lines.
///
/// # Errors
///
/// [`EncodeError::InvalidJson`] if `json` is not exactly one JSON value. On
/// error `out` is left as it was.
///
/// ```
/// use acp_codec::encode_raw_line;
///
/// let mut out = Vec::new();
/// encode_raw_line("{\"a\": 1,\n \"b\": \"x y\"}", &mut out).unwrap();
/// assert_eq!(out, b"{\"a\":1,\"b\":\"x y\"}\n");
/// // Two messages in one piece of text are refused.
/// assert!(encode_raw_line("{}\n{}", &mut out).is_err());
/// ```
pub fn encode_raw_line(json: &str, out: &mut Vec<u8>) -> Result<usize, EncodeError> {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(json) {
        return Err(EncodeError::InvalidJson {
            line: e.line(),
            column: e.column(),
        });
    }
    let start = out.len();
    out.extend_from_slice(json.as_bytes());
    finish(out, start)
}

/// A buffer a line is written to: `Vec<u8>` here, `BytesMut` for the
/// tokio-util encoders, so both finish a line the one way ([`finish`]).
pub(crate) trait LineBuf {
    /// The bytes from `start` on.
    fn tail_mut(&mut self, start: usize) -> &mut [u8];
    /// Keeps the first `len` bytes.
    fn truncate_to(&mut self, len: usize);
    /// Appends `\n`.
    fn push_newline(&mut self);
}

impl LineBuf for Vec<u8> {
    fn tail_mut(&mut self, start: usize) -> &mut [u8] {
        self.get_mut(start..).unwrap_or_default()
    }

    fn truncate_to(&mut self, len: usize) {
        self.truncate(len);
    }

    fn push_newline(&mut self) {
        self.push(b'\n');
    }
}

#[cfg(feature = "bytes")]
impl LineBuf for bytes::BytesMut {
    fn tail_mut(&mut self, start: usize) -> &mut [u8] {
        self.get_mut(start..).unwrap_or_default()
    }

    fn truncate_to(&mut self, len: usize) {
        self.truncate(len);
    }

    fn push_newline(&mut self) {
        bytes::BufMut::put_u8(self, b'\n');
    }
}

/// Finishes the JSON written to `out[start..]` as one line: compacts it if
/// it holds a newline, then appends `\n`; returns the bytes of the line,
/// `\n` included. On error `out` is cut back to `start`.
pub(crate) fn finish<B: LineBuf + ?Sized>(out: &mut B, start: usize) -> Result<usize, EncodeError> {
    match compact(out.tail_mut(start)) {
        Ok(len) => {
            out.truncate_to(start.saturating_add(len));
            out.push_newline();
            Ok(len.saturating_add(1))
        }
        Err(e) => {
            out.truncate_to(start);
            Err(e)
        }
    }
}

/// Makes the JSON in `json` one line (`json::scan::compact`): removes the
/// insignificant whitespace in place if it holds a newline. Returns the new
/// length.
///
/// # Errors
///
/// [`EncodeError::RawNewline`] for a newline inside a string.
fn compact(json: &mut [u8]) -> Result<usize, EncodeError> {
    crate::json::scan::compact(json).map_err(|offset| EncodeError::RawNewline { offset })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::borrow::ToOwned;
    use serde_json::value::RawValue;

    #[test]
    fn plain_values_are_one_line() {
        let mut out = Vec::new();
        let n = encode_line(&serde_json::json!({"t": "a\nb", "u": "\u{2028}"}), &mut out).unwrap();
        assert_eq!(n, out.len());
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(out.last(), Some(&b'\n'));
    }

    #[test]
    fn pretty_raw_is_compacted_strings_kept() {
        let raw =
            RawValue::from_string("{ \"k\" : \"a b\\\" \\n\",\r\n\t\"n\": [ 1 ,2 ] }".to_owned())
                .unwrap();
        let mut out = b"prefix".to_vec();
        encode_line(&raw, &mut out).unwrap();
        assert_eq!(out, b"prefix{\"k\":\"a b\\\" \\n\",\"n\":[1,2]}\n");
    }

    #[test]
    fn raw_newline_in_string_is_refused() {
        let mut out = b"keep".to_vec();
        let err = encode_raw_line("\"a\nb\"", &mut out).unwrap_err();
        assert!(matches!(err, EncodeError::InvalidJson { .. }), "{err}");
        assert_eq!(out, b"keep");
        // Reaching the compactor directly: a newline inside a string.
        let mut buf = b"{\"a\":\"x\ny\"}".to_vec();
        let err = compact(&mut buf).unwrap_err();
        assert!(matches!(err, EncodeError::RawNewline { offset: 7 }));
    }
}
