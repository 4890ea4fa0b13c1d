//! Errors: one small `#[non_exhaustive]` enum per layer, wrapped by [`Error`].
//!
//! Every error leaves the state that reported it clean and usable: the next
//! good message after a bad one is never lost. Display text is lowercase,
//! without a trailing period, and carries the numbers involved. Each error maps
//! to the JSON-RPC code an adapter should answer with ([`Error::code`]);
//! the crate docs have [the full mapping](crate#errors-and-json-rpc-codes)
//! and [what state each error leaves](crate#recovery).
//!
//! | layer | error | from |
//! |---|---|---|
//! | framing | [`FrameError`] | [`LineSplitter`](crate::LineSplitter) |
//! | encoding | [`EncodeError`] | [`encode_line`](crate::encode_line) and every `encode*` |
//! | ACP messages | [`MessageError`] | [`Message::decode`](crate::acp::Message::decode), `typed()` |
//! | request tracking | [`TrackerError`] | [`Tracker`](crate::acp::Tracker) |
//! | stream-json | [`EventError`] | [`Event::decode`](crate::stream_json::Event::decode) |
//! | chunked tool results | [`ChunkError`] | [`Reassembler`](crate::chunk::Reassembler), [`ChunkEncoder::new`](crate::chunk::ChunkEncoder::new) |
//! | turn view | [`TurnError`] | [`TurnView`](crate::turn::TurnView), as [`TurnEvent::Problem`](crate::turn::TurnEvent::Problem) |
//! | remote transport (feature `remote`) | `RemoteError` | `remote::Server` and the rest of `remote` |

use core::fmt;

#[cfg(feature = "alloc")]
pub use crate::acp::{MessageError, TrackerError};
#[cfg(feature = "alloc")]
pub use crate::chunk::{ChunkError, ChunkErrorKind};
pub use crate::error_code::ErrorCode;
#[cfg(feature = "alloc")]
pub use crate::framing::EncodeError;
pub use crate::framing::FrameError;
#[cfg(feature = "remote")]
pub use crate::remote::RemoteError;
#[cfg(feature = "alloc")]
pub use crate::stream_json::EventError;
#[cfg(feature = "alloc")]
pub use crate::turn::{TurnError, TurnLimit};

/// Any error of the crate: one variant per layer.
///
/// Every layer's error converts into it (`From`), so `?` works across
/// layers; [`Error::code`] gives the JSON-RPC code to answer with and
/// [`source`](core::error::Error::source) the layer's error.
///
/// ```
/// use acp_codec::acp::Message;
/// use acp_codec::{Error, LineSplitter};
///
/// /// Decodes the first line of `buf` as an ACP message's method.
/// fn first_method(buf: &[u8]) -> Result<Option<String>, Error> {
///     let mut splitter = LineSplitter::new();
///     let Some(line) = splitter.decode_eof(buf).item else { return Ok(None) };
///     let line = line?; // FrameError -> Error
///     let msg = Message::decode(&line)?; // MessageError -> Error
///     Ok(msg.method().map(str::to_owned))
/// }
///
/// assert_eq!(first_method(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n").unwrap().as_deref(), Some("x"));
/// let e = first_method(b"\xff\n").unwrap_err();
/// assert!(matches!(e, Error::Frame(_)));
/// assert_eq!(e.code().0, -32700);
/// let e = first_method(b"[1,2]\n").unwrap_err();
/// assert!(matches!(e, Error::Message(_)));
/// assert_eq!(e.to_string(), "json array of 2 elements: batches are not part of acp v1");
/// assert_eq!(e.code().0, -32600);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A framing error: one bad line.
    Frame(FrameError),
    /// An encoding error.
    #[cfg(feature = "alloc")]
    Encode(alloc::boxed::Box<EncodeError>),
    /// An ACP message error: one bad line.
    #[cfg(feature = "alloc")]
    Message(alloc::boxed::Box<MessageError>),
    /// A request tracker error.
    #[cfg(feature = "alloc")]
    Tracker(alloc::boxed::Box<TrackerError>),
    /// A stream-json line that is not a valid event.
    #[cfg(feature = "alloc")]
    Event(alloc::boxed::Box<EventError>),
    /// A fault of the chunked tool-result protocol.
    #[cfg(feature = "alloc")]
    Chunk(alloc::boxed::Box<ChunkError>),
    /// A turn view problem.
    #[cfg(feature = "alloc")]
    Turn(alloc::boxed::Box<TurnError>),
    /// A message the remote transport's rules refuse.
    #[cfg(feature = "remote")]
    Remote(alloc::boxed::Box<RemoteError>),
}

impl Error {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Frame(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Encode(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Message(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Tracker(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Event(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Chunk(e) => e.code(),
            #[cfg(feature = "alloc")]
            Self::Turn(e) => e.code(),
            #[cfg(feature = "remote")]
            Self::Remote(e) => e.code(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Frame(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Encode(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Message(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Tracker(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Event(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Chunk(e) => e.fmt(f),
            #[cfg(feature = "alloc")]
            Self::Turn(e) => e.fmt(f),
            #[cfg(feature = "remote")]
            Self::Remote(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Frame(e) => Some(e),
            #[cfg(feature = "alloc")]
            Self::Encode(e) => Some(&**e),
            #[cfg(feature = "alloc")]
            Self::Message(e) => Some(&**e),
            #[cfg(feature = "alloc")]
            Self::Tracker(e) => Some(&**e),
            #[cfg(feature = "alloc")]
            Self::Event(e) => Some(&**e),
            #[cfg(feature = "alloc")]
            Self::Chunk(e) => Some(&**e),
            #[cfg(feature = "alloc")]
            Self::Turn(e) => Some(&**e),
            #[cfg(feature = "remote")]
            Self::Remote(e) => Some(&**e),
        }
    }
}

impl From<FrameError> for Error {
    fn from(e: FrameError) -> Self {
        Self::Frame(e)
    }
}

#[cfg(feature = "alloc")]
impl From<EncodeError> for Error {
    fn from(e: EncodeError) -> Self {
        Self::Encode(alloc::boxed::Box::new(e))
    }
}

#[cfg(feature = "alloc")]
impl From<MessageError> for Error {
    fn from(e: MessageError) -> Self {
        Self::Message(alloc::boxed::Box::new(e))
    }
}

#[cfg(feature = "alloc")]
impl From<TrackerError> for Error {
    fn from(e: TrackerError) -> Self {
        Self::Tracker(alloc::boxed::Box::new(e))
    }
}

#[cfg(feature = "alloc")]
impl From<EventError> for Error {
    fn from(e: EventError) -> Self {
        Self::Event(alloc::boxed::Box::new(e))
    }
}

#[cfg(feature = "alloc")]
impl From<crate::chunk::LineError> for Error {
    fn from(e: crate::chunk::LineError) -> Self {
        match e {
            crate::chunk::LineError::Event(e) => e.into(),
            crate::chunk::LineError::Chunk(e) => e.into(),
        }
    }
}

#[cfg(feature = "alloc")]
impl From<ChunkError> for Error {
    fn from(e: ChunkError) -> Self {
        Self::Chunk(alloc::boxed::Box::new(e))
    }
}

#[cfg(feature = "alloc")]
impl From<TurnError> for Error {
    fn from(e: TurnError) -> Self {
        Self::Turn(alloc::boxed::Box::new(e))
    }
}

#[cfg(feature = "remote")]
impl From<RemoteError> for Error {
    fn from(e: RemoteError) -> Self {
        Self::Remote(alloc::boxed::Box::new(e))
    }
}

// Errors travel by value through every `Result`: the layers' errors but
// framing's (which needs no allocator) are boxed inside `Error`, allocated
// only when a fault is converted, and framing's keeps its id in a head whose
// tag byte holds `Error`'s too (see `LineTooLong`). With `alloc` a string id
// over 13 bytes is boxed, so the error is three words and a 16-byte head;
// without it the error holds the longest id the peek reads (128 bytes) inline.
#[cfg(feature = "alloc")]
const _: () = assert!(core::mem::size_of::<FrameError>() <= 40);
#[cfg(feature = "alloc")]
const _: () = assert!(core::mem::size_of::<Error>() <= 40);
#[cfg(not(feature = "alloc"))]
const _: () = assert!(core::mem::size_of::<FrameError>() <= 152);
#[cfg(not(feature = "alloc"))]
const _: () = assert!(core::mem::size_of::<Error>() <= 152);
#[cfg(feature = "alloc")]
const _: () = assert!(core::mem::size_of::<MessageError>() <= 40);
// The transfer's id behind a thin pointer plus a `Copy` kind.
#[cfg(feature = "alloc")]
const _: () = assert!(core::mem::size_of::<ChunkError>() <= 32);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::{LineTooLong, PeekedId};
    use alloc::string::ToString;

    #[test]
    fn messages_are_lowercase_with_numbers() {
        let e = FrameError::LineTooLong(LineTooLong::new(8_388_608, 9_437_184, None, false));
        assert_eq!(e.to_string(), "line of more than 8388608 bytes");
        let e = FrameError::LineTooLong(LineTooLong::new(10, 11, Some(PeekedId::Number(7)), true));
        assert_eq!(e.to_string(), "line of more than 10 bytes (request id 7)");
        assert_eq!(e.code(), ErrorCode::INVALID_REQUEST);
        let e = FrameError::InvalidUtf8 {
            len: 4,
            valid_up_to: 1,
        };
        assert_eq!(
            e.to_string(),
            "line of 4 bytes is not valid utf-8 after byte 1"
        );
        assert_eq!(Error::from(e).code(), ErrorCode::PARSE_ERROR);
    }

    #[cfg(feature = "remote")]
    #[test]
    fn remote_errors_convert_with_their_code() {
        let e = Error::from(RemoteError::Batch);
        assert!(matches!(&e, Error::Remote(r) if **r == RemoteError::Batch));
        assert_eq!(e.code(), ErrorCode::INVALID_REQUEST);
        assert_eq!(e.to_string(), "json-rpc batches are not supported");
        let source = core::error::Error::source(&e).map(ToString::to_string);
        assert_eq!(
            source.as_deref(),
            Some("json-rpc batches are not supported")
        );
    }

    #[test]
    fn codes_have_names() {
        assert_eq!(ErrorCode(-1).to_string(), "-1");
        assert_eq!(
            ErrorCode::AUTH_REQUIRED.name(),
            Some("authentication required")
        );
    }
}
