//! The framing layer's errors: a bad line in, a value that cannot be one
//! line out.

use core::fmt;

#[cfg(feature = "alloc")]
use super::peek::ShortId;
use super::PeekedId;
use crate::ErrorCode;

/// An error of the framing layer: one line of input.
///
/// After any of these the [`LineSplitter`](crate::LineSplitter) goes on with
/// the next line. 40 bytes on 64-bit targets with feature `alloc` (the rare
/// string id longer than 13 bytes is boxed), 152 without it (every id is
/// kept inline); see [`LineTooLong`].
///
/// ```
/// use acp_codec::{FrameError, LineSplitter, PeekedId};
///
/// let mut splitter = LineSplitter::with_max_line_len(32);
/// let buf = b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"session/prompt\",\"params\":{}}\n";
/// let err = splitter.decode(buf).item.unwrap().unwrap_err();
/// let FrameError::LineTooLong(long) = &err else { panic!("{err}") };
/// assert_eq!((long.limit(), long.seen()), (32, 63));
/// assert_eq!(long.id(), Some(PeekedId::Number(12)));
/// assert!(long.is_request());
/// assert_eq!(err.to_string(), "line of more than 32 bytes (request id 12)");
/// assert_eq!(err.code().0, -32600);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FrameError {
    /// A line is longer than the limit. Reported once per line, as soon as
    /// more than the limit was seen; the rest of the line is skipped.
    LineTooLong(LineTooLong),
    /// A line is not valid UTF-8.
    InvalidUtf8 {
        /// The line's length in bytes.
        len: usize,
        /// Bytes of the line that are valid UTF-8 before the first bad one.
        valid_up_to: usize,
    },
}

/// What [`FrameError::LineTooLong`] knows of an oversized line: the limit,
/// the bytes seen, and the JSON-RPC id its first bytes hold, so that a
/// request can be answered instead of leaving the peer waiting.
///
/// Every id the peek reads is kept: `null`, a 64-bit integer, or a string
/// without escapes of at most [`PeekedId::MAX_STR_ID`] (128) bytes, so a
/// client numbering its requests with UUIDs gets its answer. How it is
/// stored depends on feature `alloc`:
///
/// - with `alloc`, a number, `null` or a string id of at most 13 bytes is
///   kept inline and a longer
///   string id is boxed: one allocation on a rare path (a line over the
///   limit whose id is long), so that the error stays 40 bytes on 64-bit
///   targets and every `Result` carrying it stays small;
/// - without `alloc` there is nothing to box with, so the error is sized
///   for the longest id: 152 bytes on 64-bit targets.
///
/// ```
/// use acp_codec::framing::LineTooLong;
/// use acp_codec::{FrameError, PeekedId};
///
/// let e = LineTooLong::new(8, 20, PeekedId::from_str_id("req-7"), true);
/// assert_eq!(e.id().unwrap().as_str(), Some("req-7"));
/// assert_eq!(FrameError::LineTooLong(e).to_string(), "line of more than 8 bytes (request id \"req-7\")");
/// let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
/// let e = LineTooLong::new(8, 20, PeekedId::from_str_id(uuid), true);
/// assert_eq!(e.request_id().unwrap().as_str(), Some(uuid));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct LineTooLong {
    // First, so that its `IdKind` byte gives `FrameError` and `Error` their
    // tags without a word of their own.
    head: Head,
    limit: usize,
    seen: usize,
    /// A string id longer than `head` holds (`IdKind::Boxed`), and the
    /// line's `params.sessionId`: boxed, a rare path, so the error stays
    /// small.
    #[cfg(feature = "alloc")]
    boxed: Option<alloc::boxed::Box<Boxed>>,
}

/// What [`LineTooLong`] keeps out of line.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Boxed {
    id: Option<ShortId>,
    session: Option<ShortId>,
}

/// The id and `is_request` of [`LineTooLong`], of alignment 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
struct Head {
    kind: IdKind,
    is_request: bool,
    /// Bytes of `bytes` in use by a string id.
    len: u8,
    /// A string id's bytes, or a number's eight little-endian bytes.
    bytes: [u8; INLINE],
}

/// Bytes of a string id kept in [`Head`]: 13 with `alloc` (16 bytes in
/// all, a longer id is boxed), the longest id the peek reads without.
#[cfg(feature = "alloc")]
const INLINE: usize = 13;
#[cfg(not(feature = "alloc"))]
const INLINE: usize = PeekedId::MAX_STR_ID;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
enum IdKind {
    None,
    Null,
    Number,
    Str,
    /// A string id in `LineTooLong::boxed`.
    #[cfg(feature = "alloc")]
    Boxed,
}

impl LineTooLong {
    /// The error for a line of which `seen` bytes went past `limit`, with
    /// what its first bytes hold (any `id` is kept; see the type's docs).
    pub fn new(limit: usize, seen: usize, id: Option<PeekedId>, is_request: bool) -> Self {
        let mut head = Head {
            kind: IdKind::None,
            is_request,
            len: 0,
            bytes: [0; INLINE],
        };
        #[cfg(feature = "alloc")]
        let mut boxed = None;
        match id {
            None => {}
            Some(PeekedId::Null) => head.kind = IdKind::Null,
            Some(PeekedId::Number(n)) => {
                if let Some(slot) = head.bytes.get_mut(..8) {
                    slot.copy_from_slice(&n.to_le_bytes());
                }
                head.kind = IdKind::Number;
            }
            Some(PeekedId::Str(s)) => {
                let text = s.as_str().as_bytes();
                match (head.bytes.get_mut(..text.len()), u8::try_from(text.len())) {
                    (Some(slot), Ok(len)) => {
                        slot.copy_from_slice(text);
                        head.len = len;
                        head.kind = IdKind::Str;
                    }
                    #[cfg(feature = "alloc")]
                    _ => {
                        boxed = Some(alloc::boxed::Box::new(Boxed {
                            id: Some(s),
                            session: None,
                        }));
                        head.kind = IdKind::Boxed;
                    }
                    // Without `alloc`, `bytes` holds the longest id a
                    // `PeekedId` can.
                    #[cfg(not(feature = "alloc"))]
                    _ => debug_assert!(false, "a PeekedId string fits the inline bytes"),
                }
            }
        }
        Self {
            head,
            limit,
            seen,
            #[cfg(feature = "alloc")]
            boxed,
        }
    }

    /// The limit, in bytes.
    pub const fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes of the line seen when it was reported (the whole line when its
    /// end was already in the buffer).
    pub const fn seen(&self) -> usize {
        self.seen
    }

    /// The line's JSON-RPC `"id"`, when its first bytes hold one the peek
    /// reads (see [`PeekedId`]).
    pub fn id(&self) -> Option<PeekedId> {
        let h = &self.head;
        match h.kind {
            IdKind::None => None,
            IdKind::Null => Some(PeekedId::Null),
            IdKind::Number => {
                // An array pattern: the compiler checks the 8 bytes are there.
                let [a, b, c, d, e, f, g, h, ..] = h.bytes;
                Some(PeekedId::Number(i64::from_le_bytes([
                    a, b, c, d, e, f, g, h,
                ])))
            }
            IdKind::Str => {
                let text = h.bytes.get(..usize::from(h.len))?;
                PeekedId::from_str_id(core::str::from_utf8(text).ok()?)
            }
            #[cfg(feature = "alloc")]
            IdKind::Boxed => self.boxed.as_deref().and_then(|b| b.id).map(PeekedId::Str),
        }
    }

    /// The same error, naming the session the line was for (its
    /// `params.sessionId`, as its first bytes hold it): kept when it is at
    /// most [`PeekedId::MAX_STR_ID`] bytes long, with feature `alloc`
    /// (without it the error stays sized for the id alone, and keeps no
    /// session).
    ///
    /// ```
    /// use acp_codec::framing::LineTooLong;
    ///
    /// let e = LineTooLong::new(8, 20, None, false).with_session("sess-1");
    /// assert_eq!(e.session_id(), Some("sess-1"));
    /// ```
    #[must_use]
    pub fn with_session(self, session: &str) -> Self {
        #[cfg(feature = "alloc")]
        {
            let mut this = self;
            let Some(session) = ShortId::new(session) else {
                return this;
            };
            match &mut this.boxed {
                Some(b) => b.session = Some(session),
                None => {
                    this.boxed = Some(alloc::boxed::Box::new(Boxed {
                        id: None,
                        session: Some(session),
                    }));
                }
            }
            this
        }
        #[cfg(not(feature = "alloc"))]
        {
            let _ = session;
            self
        }
    }

    /// The line's `params.sessionId`, when its first bytes (the
    /// [`id_peek_window`](crate::Limits::id_peek_window)) hold it whole (a
    /// string without escapes; see [`with_session`](Self::with_session)):
    /// whose session the dropped line was for.
    ///
    /// ```
    /// use acp_codec::{FrameError, Limits, LineSplitter};
    ///
    /// let mut splitter = LineSplitter::with_limits(&Limits::default().with_max_line_len(64));
    /// let line = format!(
    ///     r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s-7","update":{{"text":"{}"}}}}}}"#,
    ///     "x".repeat(100),
    /// );
    /// let Some(Err(FrameError::LineTooLong(e))) = splitter.decode(line.as_bytes()).item else { panic!() };
    /// assert_eq!(e.session_id(), Some("s-7"));
    /// ```
    pub fn session_id(&self) -> Option<&str> {
        #[cfg(feature = "alloc")]
        {
            self.boxed
                .as_deref()
                .and_then(|b| b.session.as_ref())
                .map(ShortId::as_str)
        }
        #[cfg(not(feature = "alloc"))]
        {
            None
        }
    }

    /// Whether the first bytes hold a `"method"` too, so the line is a
    /// request the peer waits an answer for.
    pub const fn is_request(&self) -> bool {
        self.head.is_request
    }

    /// The id to answer with an error: the line's id when it is a request.
    ///
    /// ```
    /// use acp_codec::framing::LineTooLong;
    /// use acp_codec::PeekedId;
    ///
    /// let request = LineTooLong::new(8, 9, Some(PeekedId::Number(4)), true);
    /// assert_eq!(request.request_id(), Some(PeekedId::Number(4)));
    /// let response = LineTooLong::new(8, 9, Some(PeekedId::Number(4)), false);
    /// assert_eq!(response.request_id(), None);
    /// ```
    pub fn request_id(&self) -> Option<PeekedId> {
        self.id().filter(|_| self.is_request())
    }
}

impl fmt::Debug for LineTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineTooLong")
            .field("limit", &self.limit)
            .field("seen", &self.seen)
            .field("id", &self.id())
            .field("is_request", &self.is_request())
            .field("session_id", &self.session_id())
            .finish()
    }
}

impl FrameError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::LineTooLong(_) => ErrorCode::INVALID_REQUEST,
            Self::InvalidUtf8 { .. } => ErrorCode::PARSE_ERROR,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LineTooLong(e) => e.fmt(f),
            Self::InvalidUtf8 { len, valid_up_to } => write!(
                f,
                "line of {len} bytes is not valid utf-8 after byte {valid_up_to}"
            ),
        }
    }
}

/// `line of more than N bytes`, N the limit (the line's end may not have
/// been read: the limit is what is known to be exceeded), then the id.
impl fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line of more than {} bytes", self.limit)?;
        match (self.id(), self.is_request()) {
            (Some(id), true) => write!(f, " (request id {id})"),
            (Some(id), false) => write!(f, " (id {id})"),
            (None, _) => Ok(()),
        }
    }
}

impl core::error::Error for FrameError {}

/// An error while encoding a value as one line.
///
/// The output buffer is left as it was before the call.
#[cfg(feature = "alloc")]
#[derive(Debug)]
#[non_exhaustive]
pub enum EncodeError {
    /// The value could not be serialized as JSON.
    Json(serde_json::Error),
    /// The JSON holds a raw newline inside a string, so it cannot be one line
    /// (raw JSON handed in by a caller; serialized values never do).
    RawNewline {
        /// Offset of the newline in the encoded JSON.
        offset: usize,
    },
    /// Raw JSON handed in by a caller is not valid JSON.
    InvalidJson {
        /// Line of the error in the raw JSON, 1-based.
        line: usize,
        /// Column of the error in the raw JSON, 1-based.
        column: usize,
    },
}

#[cfg(feature = "alloc")]
impl EncodeError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Json(_) => ErrorCode::INTERNAL_ERROR,
            Self::RawNewline { .. } | Self::InvalidJson { .. } => ErrorCode::INVALID_REQUEST,
        }
    }
}

/// Equal when of the same kind at the same place; two
/// [`EncodeError::Json`]s when `serde_json` classifies them alike at the
/// same line and column with the same message.
#[cfg(feature = "alloc")]
impl PartialEq for EncodeError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Json(a), Self::Json(b)) => {
                (a.classify(), a.line(), a.column()) == (b.classify(), b.line(), b.column())
                    && alloc::string::ToString::to_string(a)
                        == alloc::string::ToString::to_string(b)
            }
            (Self::RawNewline { offset: a }, Self::RawNewline { offset: b }) => a == b,
            (
                Self::InvalidJson { line: a, column: c },
                Self::InvalidJson { line: b, column: d },
            ) => (a, c) == (b, d),
            _ => false,
        }
    }
}

#[cfg(feature = "alloc")]
impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(e) => write!(f, "cannot encode as json: {e}"),
            Self::RawNewline { offset } => write!(
                f,
                "raw newline inside a json string at byte {offset} cannot be sent as one line"
            ),
            Self::InvalidJson { line, column } => {
                write!(f, "raw json is invalid at line {line} column {column}")
            }
        }
    }
}

#[cfg(feature = "alloc")]
impl core::error::Error for EncodeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Json(e) => Some(e),
            _ => None,
        }
    }
}
