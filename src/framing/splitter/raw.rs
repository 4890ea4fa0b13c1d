//! Pass-through splitting: every byte of the input handed back, in items
//! that are lines with their terminators, so a relay can re-emit exactly
//! what it read.

use super::scan::{Scan, Step};
use crate::framing::LineTooLong;
use crate::limits::Limits;

/// How a line ended on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
    /// No terminator: the input ended first (the peer's last write had no
    /// newline, or it died mid-write).
    Unterminated,
}

impl Ending {
    /// The terminator's length in bytes: 1, 2 or 0.
    pub const fn len(self) -> usize {
        match self {
            Self::Lf => 1,
            Self::CrLf => 2,
            Self::Unterminated => 0,
        }
    }

    /// Whether there is no terminator ([`Ending::Unterminated`]).
    pub const fn is_empty(self) -> bool {
        matches!(self, Self::Unterminated)
    }
}

/// A line within the limit, exactly as read: its content and its
/// terminator. `B` is `&[u8]` (borrowed from the caller's buffer) or
/// `bytes::Bytes` (split off a `BytesMut`).
///
/// Its bytes are not checked for UTF-8: a relay forwards them as they
/// are, and a decoder checks them once
/// ([`decode_line_bytes`](crate::acp::decode_line_bytes)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawLine<B> {
    bytes: B,
    ending: Ending,
}

impl<B: AsRef<[u8]>> RawLine<B> {
    /// The line as read: content and terminator.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The line without its terminator (a lone `\r` before the end of the
    /// input stays: only `\r\n` is a terminator).
    pub fn content(&self) -> &[u8] {
        let bytes = self.bytes.as_ref();
        let len = bytes.len().saturating_sub(self.ending.len());
        bytes.get(..len).unwrap_or_default()
    }

    /// How the line ended.
    pub const fn ending(&self) -> Ending {
        self.ending
    }

    /// Whether the line had its `\n`. Only the last line of the input can
    /// be unterminated.
    pub const fn is_terminated(&self) -> bool {
        !self.ending.is_empty()
    }

    /// Whether the content is empty or only spaces, tabs and `\r`: a line
    /// [`LineSplitter`](super::LineSplitter) skips. Pass-through keeps it; skip it
    /// here if the relay should not forward it.
    pub fn is_blank(&self) -> bool {
        self.content()
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r'))
    }

    /// The bytes, terminator included.
    pub fn into_bytes(self) -> B {
        self.bytes
    }
}

/// One item of pass-through splitting ([`RawLineSplitter::decode`]):
/// bytes exactly as read. Writing out every item's bytes in order gives
/// back the input, whatever the read sizes, blank lines, `\r\n` and an
/// unterminated last line included.
///
/// A line over the limit is never buffered whole: it comes out as pieces.
/// The first, [`RawItem::TooLong`], carries the error (with the request id
/// read from the line's first bytes, to answer it: see
/// [`LineTooLong::encode_reply`]) and the bytes read so far; then
/// [`RawItem::Rest`] pieces carry the rest as it arrives, the one holding
/// the line's `\n` marked `done`. A relay drops the pieces to skip the line,
/// or forwards them to pass it on without holding it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RawItem<B> {
    /// A line within the limit.
    Line(RawLine<B>),
    /// The first piece of a line over the limit.
    TooLong {
        /// The bytes of the line read so far (its terminator too when
        /// `done`).
        bytes: B,
        /// The limit, the bytes seen and the peeked id.
        error: LineTooLong,
        /// Whether this piece ends the line (its `\n` was already in the
        /// buffer, or the input ended).
        done: bool,
    },
    /// A further piece of a line over the limit.
    Rest {
        /// The piece's bytes.
        bytes: B,
        /// Whether this piece ends the line (it holds the `\n`, or the
        /// input ended).
        done: bool,
    },
}

impl<B: AsRef<[u8]>> RawItem<B> {
    /// The item's bytes, as read.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Line(line) => line.as_bytes(),
            Self::TooLong { bytes, .. } | Self::Rest { bytes, .. } => bytes.as_ref(),
        }
    }

    /// How many bytes of the input the item holds: what to drop from the
    /// front of the buffer after [`RawLineSplitter::decode`].
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the item holds no bytes (never, for an item handed out).
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }

    /// The item's bytes, as read.
    pub fn into_bytes(self) -> B {
        match self {
            Self::Line(line) => line.bytes,
            Self::TooLong { bytes, .. } | Self::Rest { bytes, .. } => bytes,
        }
    }
}

/// A streaming, sans-IO splitter that passes lines through: every byte of
/// the input comes back, in [`RawItem`]s that are lines with their
/// terminators, so a relay, a tap or a proxy can write out exactly what it
/// read, or skip a line.
///
/// Unlike [`LineSplitter`](super::LineSplitter), nothing is stripped or
/// skipped and UTF-8 is not checked: items carry their terminators, blank
/// lines are items, and the items' bytes put end to end are the input. The
/// scan, the limit and the recovery are the same (one scan serves both):
/// a line over [`max_line_len`](Self::max_line_len) is never buffered
/// whole but comes out in pieces, the first carrying the error (see
/// [`RawItem`]), and the next line comes out whole.
///
/// # Contract
///
/// Call [`decode`](Self::decode) with the buffer of unconsumed bytes: the
/// next item always starts at `buf[0]`; drop [`item.len()`](RawItem::len)
/// bytes from the front of the buffer before the next call. `None` when
/// `buf` holds no complete line: read more. At the end of the input, call
/// [`decode_eof`](Self::decode_eof) until it returns `None`. As with
/// `LineSplitter`, a line fed a byte per call costs linear time in total
/// when each call's buffer starts where the consumed bytes end; call
/// [`reset`](Self::reset) before handing it an unrelated buffer.
///
/// ```
/// use acp_codec::framing::{Ending, RawItem, RawLineSplitter};
///
/// let input = b"{\"a\":1}\r\n\n{\"b\":2}";
/// let mut splitter = RawLineSplitter::new();
/// let mut rest = &input[..];
/// let mut out = Vec::new();
/// let mut endings = Vec::new();
/// loop {
///     // At the end of the input, `decode_eof` hands out the last line.
///     let Some(item) = splitter.decode_eof(rest) else { break };
///     rest = &rest[item.len()..];
///     if let RawItem::Line(line) = &item {
///         endings.push(line.ending());
///     }
///     out.extend_from_slice(item.as_bytes());
/// }
/// assert_eq!(out, input);
/// assert_eq!(endings, [Ending::CrLf, Ending::Lf, Ending::Unterminated]);
/// ```
#[derive(Debug, Clone)]
pub struct RawLineSplitter {
    scan: Scan,
}

impl Default for RawLineSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl RawLineSplitter {
    /// A splitter with the default limits
    /// ([`DEFAULT_MAX_LINE_LEN`](crate::limits::DEFAULT_MAX_LINE_LEN)).
    pub const fn new() -> Self {
        Self::with_limits(&Limits::new())
    }

    /// A splitter with the given limits (`max_line_len`, and
    /// `id_peek_window` for the id an oversized line's error carries).
    pub const fn with_limits(limits: &Limits) -> Self {
        Self {
            scan: Scan::with_limits(limits),
        }
    }

    /// The longest line passed whole, in bytes, excluding the `\n`.
    pub const fn max_line_len(&self) -> usize {
        self.scan.max_line_len()
    }

    /// Forgets the scan position and any oversized line being passed in
    /// pieces.
    pub fn reset(&mut self) {
        self.scan.reset();
    }

    /// The next item of `buf`, the unconsumed bytes; `None` when `buf`
    /// holds no complete line. See the [type docs](Self).
    pub fn decode<'b>(&mut self, buf: &'b [u8]) -> Option<RawItem<&'b [u8]>> {
        self.item(buf, false)
    }

    /// [`decode`](Self::decode) at the end of the input: once no complete
    /// line is left, the remaining bytes are the last item (a [`RawLine`]
    /// with [`Ending::Unterminated`], or the last piece of an oversized
    /// line). When no item comes back, the splitter is reset.
    ///
    /// ```
    /// use acp_codec::framing::{RawItem, RawLineSplitter};
    /// use acp_codec::Limits;
    ///
    /// let mut splitter = RawLineSplitter::with_limits(&Limits::new().with_max_line_len(3));
    /// // Cut by the limit before its `\n`: pieces until the `\n`, then
    /// // the next line whole.
    /// assert!(matches!(splitter.decode(b"abcd"), Some(RawItem::TooLong { done: false, .. })));
    /// assert!(matches!(splitter.decode(b"ef\nok"), Some(RawItem::Rest { done: true, .. })));
    /// let Some(RawItem::Line(last)) = splitter.decode_eof(b"ok") else { panic!() };
    /// assert_eq!((last.content(), last.is_terminated()), (&b"ok"[..], false));
    /// ```
    pub fn decode_eof<'b>(&mut self, buf: &'b [u8]) -> Option<RawItem<&'b [u8]>> {
        self.item(buf, true)
    }

    fn item<'b>(&mut self, buf: &'b [u8], eof: bool) -> Option<RawItem<&'b [u8]>> {
        let (len, kind) = self.find(buf, eof)?;
        let (bytes, _) = buf.split_at_checked(len)?;
        Some(kind.with(bytes))
    }

    /// The length of the next item at the start of `buf`, and what it is;
    /// `None` when more input is needed (or, at the end of the input,
    /// nothing is left).
    pub(crate) fn find(&mut self, buf: &[u8], eof: bool) -> Option<(usize, RawKind)> {
        let step = self.scan.step(buf, eof);
        let len = step.consumed();
        let kind = match step {
            Step::More => return None,
            Step::Line {
                terminated: false, ..
            } => RawKind::Line(Ending::Unterminated),
            Step::Line { len, .. } => {
                let cr = len.checked_sub(1).and_then(|last| buf.get(last)) == Some(&b'\r');
                RawKind::Line(if cr { Ending::CrLf } else { Ending::Lf })
            }
            Step::TooLong { error, done, .. } => RawKind::TooLong { error, done },
            Step::Rest { done, .. } => RawKind::Rest { done },
        };
        Some((len, kind))
    }
}

/// What [`RawLineSplitter::find`] found, without its bytes.
#[derive(Debug)]
pub(crate) enum RawKind {
    Line(Ending),
    TooLong { error: LineTooLong, done: bool },
    Rest { done: bool },
}

impl RawKind {
    /// The item of these bytes.
    pub(crate) fn with<B>(self, bytes: B) -> RawItem<B> {
        match self {
            Self::Line(ending) => RawItem::Line(RawLine { bytes, ending }),
            Self::TooLong { error, done } => RawItem::TooLong { bytes, error, done },
            Self::Rest { done } => RawItem::Rest { bytes, done },
        }
    }
}
