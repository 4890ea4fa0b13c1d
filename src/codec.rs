//! tokio-util [`Decoder`]/[`Encoder`] implementations (feature `tokio-util`).
//!
//! A bad line is an *item* (`Err(FrameError)` inside `Ok`), not a stream
//! error: tokio-util's `FramedRead` ends the stream after a decoder error, and
//! one bad line must never cost the connection. The decoder's own error type
//! carries only I/O failures.
//!
//! [`LineCodec`] hands out lines as [`Bytes`]; [`RawLineCodec`] hands out
//! every byte as read, in lines with their terminators (pass-through, for
//! relays); [`AcpCodec`] decodes each line into an ACP [`Message`] (owned,
//! `'static`) and encodes messages as lines.
//!
//! With tokio, wrap an agent's stdout in a `FramedRead`; here a byte slice
//! stands in for it (tokio implements `AsyncRead` for `&[u8]`):
//!
//! ```
//! use acp_codec::codec::AcpCodec;
//! use futures_util::StreamExt;
//! use tokio_util::codec::FramedRead;
//!
//! let agent_stdout: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}\n\
//!                             Loaded cached credentials.\n\
//!                             {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n";
//! let rt = tokio::runtime::Builder::new_current_thread().build()?;
//! let items: Vec<String> = rt.block_on(async {
//!     let mut frames = FramedRead::new(agent_stdout, AcpCodec::new());
//!     let mut items = Vec::new();
//!     // `Err` from the stream would be an I/O error; a bad line is an `Err` item.
//!     while let Some(item) = frames.next().await.transpose()? {
//!         items.push(match item {
//!             Ok(msg) => msg.method().unwrap_or("(response)").to_owned(),
//!             Err(bad_line) => format!("skipped: {}", bad_line.code()),
//!         });
//!     }
//!     Ok::<_, std::io::Error>(items)
//! })?;
//! assert_eq!(items, ["session/update", "skipped: -32700 parse error", "(response)"]);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use serde::Serialize;
use tokio_util::codec::{Decoder, Encoder};

use crate::acp::Message;
use crate::error::Error;
use crate::framing::{finish, LineSplitter, RawItem, RawLineSplitter};
use crate::framing::{EncodeError, FrameError};
use crate::limits::Limits;

/// Newline-delimited lines as [`Bytes`] (valid UTF-8, without `\n` or a
/// trailing `\r`), with the crate's limits and recovery; encodes any
/// `Serialize` value as one compact JSON line.
///
/// ```
/// use acp_codec::codec::LineCodec;
/// use bytes::BytesMut;
/// use tokio_util::codec::{Decoder, Encoder};
///
/// let mut codec = LineCodec::new();
/// let mut buf = BytesMut::from(&b"\xff\n{\"a\":1}\n"[..]);
/// // A bad line is an item; the next line still decodes.
/// assert!(codec.decode(&mut buf).unwrap().unwrap().is_err());
/// assert_eq!(&codec.decode(&mut buf).unwrap().unwrap().unwrap()[..], b"{\"a\":1}");
///
/// let mut out = BytesMut::new();
/// codec.encode(&serde_json::json!({"b": "x\ny"}), &mut out).unwrap();
/// assert_eq!(&out[..], b"{\"b\":\"x\\ny\"}\n");
/// ```
#[derive(Debug, Clone, Default)]
pub struct LineCodec {
    splitter: LineSplitter,
}

impl LineCodec {
    /// A codec with the default limits.
    pub const fn new() -> Self {
        Self {
            splitter: LineSplitter::new(),
        }
    }

    /// A codec with the given limits.
    pub const fn with_limits(limits: &Limits) -> Self {
        Self {
            splitter: LineSplitter::with_limits(limits),
        }
    }
}

impl Decoder for LineCodec {
    type Item = Result<Bytes, FrameError>;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        Ok(self.splitter.decode_bytes(src))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        Ok(self.splitter.decode_bytes_eof(src))
    }
}

impl<T: Serialize + ?Sized> Encoder<&T> for LineCodec {
    type Error = io::Error;

    /// # Errors
    ///
    /// An [`io::ErrorKind::InvalidData`] error wrapping the [`EncodeError`]
    /// when the value cannot be one JSON line; `dst` is left as it was.
    fn encode(&mut self, item: &T, dst: &mut BytesMut) -> io::Result<()> {
        encode_into(item, dst).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// Pass-through lines ([`RawLineSplitter`] over a `BytesMut`): each item
/// is [`RawItem<Bytes>`], the line's bytes
/// exactly as read, its terminator (`\n` or `\r\n`) included; blank lines
/// are items ([`RawLine::is_blank`](crate::framing::RawLine::is_blank)),
/// an unterminated last line is one
/// ([`Ending::Unterminated`](crate::framing::Ending)), and a line over the
/// limit comes as pieces, the first with its error
/// ([`RawItem::TooLong`]). Writing every item's bytes in order gives back
/// the input: a relay forwards a line byte for byte, or skips it.
/// UTF-8 is not checked here; a decoder checks it once
/// ([`decode_line_bytes`](crate::acp::decode_line_bytes)).
///
/// ```
/// use acp_codec::codec::RawLineCodec;
/// use acp_codec::framing::RawItem;
/// use acp_codec::Limits;
/// use bytes::BytesMut;
/// use tokio_util::codec::Decoder;
///
/// let mut codec = RawLineCodec::with_limits(&Limits::default().with_max_line_len(8));
/// let input = b"{\"a\":1}\r\n\n[1,2,3,4,5,6]\nend";
/// let mut buf = BytesMut::from(&input[..]);
/// let mut out = Vec::new();
/// let mut too_long = 0;
/// while let Some(item) = codec.decode_eof(&mut buf).unwrap() {
///     too_long += usize::from(matches!(item, RawItem::TooLong { .. }));
///     out.extend_from_slice(item.as_bytes());
/// }
/// assert_eq!((out.as_slice(), too_long), (&input[..], 1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct RawLineCodec {
    splitter: RawLineSplitter,
}

impl RawLineCodec {
    /// A codec with the default limits.
    pub const fn new() -> Self {
        Self {
            splitter: RawLineSplitter::new(),
        }
    }

    /// A codec with the given limits.
    pub const fn with_limits(limits: &Limits) -> Self {
        Self {
            splitter: RawLineSplitter::with_limits(limits),
        }
    }
}

impl Decoder for RawLineCodec {
    type Item = RawItem<Bytes>;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        Ok(self.splitter.decode_bytes(src))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        Ok(self.splitter.decode_bytes_eof(src))
    }
}

/// ACP messages over newline-delimited JSON: each line decoded into an owned
/// [`Message<'static>`](Message), each message encoded as one line.
///
/// A bad line is an item, `Err(`[`Error`]`)`, and the next line decodes
/// normally: [`Error::Frame`] for a line over
/// [`Limits::max_line_len`](crate::Limits::max_line_len) (its
/// [`FrameError::LineTooLong`] carries the request id when the line's first
/// bytes hold one, so the caller can still answer) or invalid UTF-8, and
/// [`Error::Message`] for a line that is not a JSON-RPC message. Either maps
/// to a JSON-RPC code with `code()`.
///
/// # Why owned messages
///
/// A decoded [`Message`] borrows from its line, and a stream item cannot
/// borrow from the codec's buffer (nor, without `unsafe`, from a [`Bytes`]
/// it carries along). Items are therefore [`Message::into_owned`]: the
/// method, ids and params text are copied once, about the size of the line.
/// For zero-copy decoding, use [`LineCodec`] and call [`Message::decode`] on
/// each line while it is in scope.
///
/// ```
/// use acp_codec::acp::Message;
/// use acp_codec::codec::AcpCodec;
/// use bytes::BytesMut;
/// use tokio_util::codec::{Decoder, Encoder};
///
/// let mut codec = AcpCodec::new();
/// let mut buf = BytesMut::from(&b"Loaded cached credentials.\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"[..]);
/// // Stray text is an error item (-32700); the stream goes on.
/// let err = codec.decode(&mut buf).unwrap().unwrap().unwrap_err();
/// assert_eq!(err.code().0, -32700);
/// let msg = codec.decode(&mut buf).unwrap().unwrap().unwrap();
/// assert_eq!(msg.method(), Some("x"));
///
/// let mut out = BytesMut::new();
/// codec.encode(&msg, &mut out).unwrap();
/// assert_eq!(&out[..], b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
/// ```
#[derive(Debug, Clone, Default)]
pub struct AcpCodec {
    splitter: LineSplitter,
}

impl AcpCodec {
    /// A codec with the default limits.
    pub const fn new() -> Self {
        Self {
            splitter: LineSplitter::new(),
        }
    }

    /// A codec with the given limits.
    pub const fn with_limits(limits: &Limits) -> Self {
        Self {
            splitter: LineSplitter::with_limits(limits),
        }
    }

    /// The next message of `src`: the line found in the buffer (its UTF-8
    /// checked once, by the splitter) decoded while it is borrowed, then
    /// owned; the consumed bytes dropped.
    fn message(
        &mut self,
        src: &mut BytesMut,
        eof: bool,
    ) -> Option<Result<Message<'static>, Error>> {
        let decoded = if eof {
            self.splitter.decode_eof(src)
        } else {
            self.splitter.decode(src)
        };
        let consumed = decoded.consumed;
        let item = decoded.item.map(|item| match item {
            Ok(line) => Message::decode(line.as_str())
                .map(Message::into_owned)
                .map_err(Error::from),
            Err(e) => Err(Error::from(e)),
        });
        src.advance(consumed.min(src.len()));
        item
    }
}

impl Decoder for AcpCodec {
    type Item = Result<Message<'static>, Error>;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        Ok(self.message(src, false))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        Ok(self.message(src, true))
    }
}

impl Encoder<&Message<'_>> for AcpCodec {
    type Error = io::Error;

    /// # Errors
    ///
    /// An [`io::ErrorKind::InvalidData`] error wrapping the [`EncodeError`]
    /// when the message cannot be one JSON line; `dst` is left as it was.
    fn encode(&mut self, item: &Message<'_>, dst: &mut BytesMut) -> io::Result<()> {
        encode_into(item, dst).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

impl Encoder<Message<'_>> for AcpCodec {
    type Error = io::Error;

    /// # Errors
    ///
    /// As for `&Message`.
    fn encode(&mut self, item: Message<'_>, dst: &mut BytesMut) -> io::Result<()> {
        self.encode(&item, dst)
    }
}

/// Appends `value` as one compact JSON line to a `BytesMut`.
pub(crate) fn encode_into<T: Serialize + ?Sized>(
    value: &T,
    dst: &mut BytesMut,
) -> Result<(), EncodeError> {
    let start = dst.len();
    if let Err(e) = serde_json::to_writer(dst.writer(), value) {
        dst.truncate(start);
        return Err(EncodeError::Json(e));
    }
    finish(dst, start).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eof_line_and_limits() {
        let mut codec = LineCodec::with_limits(&Limits::default().with_max_line_len(4));
        let mut buf = BytesMut::from(&b"toolong\nok\nend"[..]);
        assert!(matches!(
            codec.decode(&mut buf).unwrap(),
            Some(Err(FrameError::LineTooLong(_)))
        ));
        assert_eq!(
            &codec.decode(&mut buf).unwrap().unwrap().unwrap()[..],
            b"ok"
        );
        assert!(codec.decode(&mut buf).unwrap().is_none());
        assert_eq!(
            &codec.decode_eof(&mut buf).unwrap().unwrap().unwrap()[..],
            b"end"
        );
        assert!(codec.decode_eof(&mut buf).unwrap().is_none());
    }

    #[test]
    fn pretty_raw_json_is_one_line() {
        let raw =
            serde_json::value::RawValue::from_string("{\n \"a\": [1,\n 2]\n}".into()).unwrap();
        let mut out = BytesMut::from(&b"x"[..]);
        LineCodec::new().encode(&*raw, &mut out).unwrap();
        assert_eq!(&out[..], b"x{\"a\":[1,2]}\n");
    }
}
