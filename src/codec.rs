//! tokio-util [`Decoder`]/[`Encoder`] implementations (feature `tokio-util`).
//!
//! A bad line is an *item* (`Err(FrameError)` inside `Ok`), not a stream
//! error: tokio-util's `FramedRead` ends the stream after a decoder error, and
//! one bad line must never cost the connection. The decoder's own error type
//! carries only I/O failures.

use std::io;

use bytes::{BufMut, Bytes, BytesMut};
use serde::Serialize;
use tokio_util::codec::{Decoder, Encoder};

use crate::error::{EncodeError, FrameError};
use crate::framing::{compact, LineSplitter};
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
    let written = dst.get_mut(start..).unwrap_or_default();
    match compact(written) {
        Ok(len) => {
            dst.truncate(start.saturating_add(len));
            dst.put_u8(b'\n');
            Ok(())
        }
        Err(e) => {
            dst.truncate(start);
            Err(e)
        }
    }
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
            Some(Err(FrameError::LineTooLong { .. }))
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
