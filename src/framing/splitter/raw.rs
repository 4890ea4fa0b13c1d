//! Pass-through splitting: every byte of the input handed back, in items
//! that are lines with their terminators, so a relay can re-emit exactly
//! what it read.

use memchr::memchr;

use super::LineSplitter;
use crate::framing::LineTooLong;

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
    /// the non-pass-through splitting skips. Pass-through keeps it; skip it
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

/// One item of pass-through splitting ([`LineSplitter::decode_raw`]):
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
    /// front of the buffer after [`LineSplitter::decode_raw`].
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

impl LineSplitter {
    /// Pass-through splitting: the next item of `buf` (the unconsumed
    /// bytes), which always starts at `buf[0]`; drop
    /// [`item.len()`](RawItem::len) bytes from the front of the buffer
    /// before the next call. `None` when `buf` holds no complete line:
    /// read more.
    ///
    /// Unlike [`decode`](Self::decode), nothing is stripped or skipped and
    /// UTF-8 is not checked: items carry their terminators, blank lines are
    /// items, and the items' bytes put end to end are the input. The limit
    /// holds as in `decode` (see [`RawItem`] for the pieces of an oversized
    /// line). Use one splitter for one way of splitting: call
    /// [`reset`](Self::reset) before switching.
    ///
    /// ```
    /// use acp_codec::framing::{Ending, RawItem};
    /// use acp_codec::LineSplitter;
    ///
    /// let input = b"{\"a\":1}\r\n\n{\"b\":2}";
    /// let mut splitter = LineSplitter::new();
    /// let mut rest = &input[..];
    /// let mut out = Vec::new();
    /// let mut endings = Vec::new();
    /// loop {
    ///     // At the end of the input, `decode_raw_eof` hands out the last line.
    ///     let Some(item) = splitter.decode_raw_eof(rest) else { break };
    ///     rest = &rest[item.len()..];
    ///     if let RawItem::Line(line) = &item {
    ///         endings.push(line.ending());
    ///     }
    ///     out.extend_from_slice(item.as_bytes());
    /// }
    /// assert_eq!(out, input);
    /// assert_eq!(endings, [Ending::CrLf, Ending::Lf, Ending::Unterminated]);
    /// ```
    pub fn decode_raw<'b>(&mut self, buf: &'b [u8]) -> Option<RawItem<&'b [u8]>> {
        self.raw_item(buf, false)
    }

    /// [`decode_raw`](Self::decode_raw) at the end of the input: once no
    /// complete line is left, the remaining bytes are the last item (a
    /// [`RawLine`] with [`Ending::Unterminated`], or the last piece of an
    /// oversized line). When no item comes back, the splitter is reset.
    pub fn decode_raw_eof<'b>(&mut self, buf: &'b [u8]) -> Option<RawItem<&'b [u8]>> {
        self.raw_item(buf, true)
    }

    fn raw_item<'b>(&mut self, buf: &'b [u8], eof: bool) -> Option<RawItem<&'b [u8]>> {
        let (len, kind) = self.find_raw(buf, eof)?;
        let (bytes, _) = buf.split_at_checked(len)?;
        Some(kind.with(bytes))
    }

    /// The length of the next pass-through item at the start of `buf`, and
    /// what it is; `None` when more input is needed (or, at the end of the
    /// input, nothing is left).
    pub(crate) fn find_raw(&mut self, buf: &[u8], eof: bool) -> Option<(usize, RawKind)> {
        if buf.is_empty() {
            if eof {
                self.reset();
            }
            return None;
        }
        if self.discarding {
            return Some(match memchr(b'\n', buf) {
                Some(i) => {
                    self.discarding = false;
                    self.scanned = 0;
                    (i.saturating_add(1), RawKind::Rest { done: true })
                }
                None => {
                    if eof {
                        self.reset();
                    }
                    (buf.len(), RawKind::Rest { done: eof })
                }
            });
        }
        let skip = self.scanned.min(buf.len());
        let newline =
            memchr(b'\n', buf.get(skip..).unwrap_or_default()).map(|i| skip.saturating_add(i));
        match newline {
            Some(at) => {
                self.scanned = 0;
                let line = buf.get(..at).unwrap_or_default();
                let len = at.saturating_add(1);
                if line.len() > self.max_line_len {
                    let error = self.too_long(line, line.len());
                    return Some((len, RawKind::TooLong { error, done: true }));
                }
                let ending = match line.last() {
                    Some(b'\r') => Ending::CrLf,
                    _ => Ending::Lf,
                };
                Some((len, RawKind::Line(ending)))
            }
            None if buf.len() > self.max_line_len => {
                let error = self.too_long(buf, buf.len());
                self.scanned = 0;
                self.discarding = !eof;
                Some((buf.len(), RawKind::TooLong { error, done: eof }))
            }
            None if eof => {
                self.reset();
                Some((buf.len(), RawKind::Line(Ending::Unterminated)))
            }
            None => {
                self.scanned = buf.len();
                None
            }
        }
    }
}

/// What [`LineSplitter::find_raw`] found, without its bytes.
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
