//! The streaming line splitter.

use memchr::memchr;

use super::peek::peek;
use crate::error::FrameError;
use crate::limits::Limits;

/// One line found by the [`LineSplitter`]: valid UTF-8, without its `\n` or a
/// trailing `\r`, never blank.
///
/// Derefs to `str`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    text: &'a str,
    terminated: bool,
}

impl<'a> Line<'a> {
    /// The line's text.
    pub const fn as_str(&self) -> &'a str {
        self.text
    }

    /// The line's bytes.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Whether the line ended with `\n`. Only the last line handed out by
    /// [`LineSplitter::decode_eof`] can be unterminated: the input stopped
    /// before its newline, which may mean the peer died mid-write.
    pub const fn is_terminated(&self) -> bool {
        self.terminated
    }
}

impl core::ops::Deref for Line<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        self.text
    }
}

impl AsRef<[u8]> for Line<'_> {
    fn as_ref(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

/// What one call to [`LineSplitter::decode`] found.
///
/// Always drop `consumed` bytes from the front of the buffer (or start the
/// next call that many bytes further on), whether or not an item came back:
/// skipped blank lines and the skipped rest of an oversized line are consumed
/// without an item.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "drop `consumed` bytes from the front of the buffer"]
pub struct Decoded<'a> {
    /// Bytes of the buffer to drop before the next call.
    pub consumed: usize,
    /// The next line, or the error for a bad one; `None` when the buffer
    /// holds no complete line (feed more bytes).
    pub item: Option<Result<Line<'a>, FrameError>>,
}

/// A streaming, sans-IO line splitter: finds `\n`-delimited lines in a buffer
/// the caller owns and fills, without allocating.
///
/// # Contract
///
/// Call [`decode`](Self::decode) with the buffer of unconsumed bytes. It
/// returns the next line (borrowed from the buffer) or an error for a bad
/// line, plus how many bytes it consumed. Drop those bytes, then call again
/// until no item comes back; then read more bytes, append them, and go on.
/// At the end of input call [`decode_eof`](Self::decode_eof) until it
/// returns no item.
///
/// The splitter remembers how far it has scanned the unconsumed bytes, so a
/// line fed one byte per call costs linear time in total; this needs the next
/// call's buffer to start where the consumed bytes end (the usual case).
/// Call [`reset`](Self::reset) before handing it an unrelated buffer.
///
/// # Invariants
///
/// - The lines and errors are the same however the input is split into
///   pieces.
/// - An oversized line is reported once, as soon as more than
///   `max_line_len` bytes of it are in the buffer, and its bytes are consumed
///   at once, so the caller's buffer never holds more than
///   `max_line_len` plus one read.
/// - After an error the next line decodes normally.
///
/// # Example
///
/// ```
/// use acp_codec::LineSplitter;
///
/// let mut splitter = LineSplitter::new();
/// let mut buf: Vec<u8> = Vec::new();
/// let mut lines = Vec::new();
/// for read in [&b"{\"a\":1}\r\n\n{\"b\""[..], b":2}\n{\"c\":3}"] {
///     buf.extend_from_slice(read);
///     let mut start = 0;
///     loop {
///         let decoded = splitter.decode(&buf[start..]);
///         start += decoded.consumed;
///         match decoded.item {
///             Some(Ok(line)) => lines.push(line.as_str().to_owned()),
///             Some(Err(e)) => eprintln!("skipped: {e}"),
///             None => break,
///         }
///     }
///     buf.drain(..start);
/// }
/// // End of input: the last line has no newline.
/// let decoded = splitter.decode_eof(&buf);
/// let last = decoded.item.unwrap().unwrap();
/// assert!(!last.is_terminated());
/// lines.push(last.as_str().to_owned());
/// assert_eq!(lines, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
/// ```
#[derive(Debug, Clone)]
pub struct LineSplitter {
    max_line_len: usize,
    id_peek_window: usize,
    /// Bytes at the start of the buffer already known to hold no `\n`.
    scanned: usize,
    /// For the `bytes` path: bytes at the start of the buffer known to be
    /// valid UTF-8, so each byte is validated once across calls.
    #[cfg_attr(not(feature = "bytes"), allow(dead_code))]
    valid: usize,
    /// Inside an oversized line that was already reported.
    discarding: bool,
}

/// What [`LineSplitter::find`] found: the line with its offset in the buffer
/// (so the `bytes` variant can split without copying or validating again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found<'b> {
    pub(crate) consumed: usize,
    /// The line's start and length in the buffer, and the line (whose text
    /// is empty on the `bytes` path, which needs only the offsets).
    pub(crate) item: Option<Result<(usize, usize, Line<'b>), FrameError>>,
}

/// How [`LineSplitter::line_at`] knows a line is UTF-8.
enum Check<'b> {
    /// Borrowed paths: a validated span to slice `&str` lines from; a fresh
    /// validation reaches `lookahead` bytes past the line.
    Span { span: Span<'b>, lookahead: usize },
    /// The `bytes` path needs no `&str`: `valid` bytes from the start of
    /// the buffer are known valid, across calls.
    #[cfg(feature = "bytes")]
    Prefix { valid: usize },
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::new()
    }
}

/// How far past a line the batch path validates, so short lines share one
/// SIMD-wide validation pass.
const LOOKAHEAD: usize = 64 * 1024;

/// A validated span of the buffer: `text` is `buf[start..start + text.len()]`.
#[derive(Debug, Clone, Copy)]
struct Span<'b> {
    start: usize,
    text: &'b str,
}

impl<'b> Span<'b> {
    const fn empty() -> Self {
        Span { start: 0, text: "" }
    }

    /// The line `start..end` as `&str`, if the span covers it. Only the two
    /// ends are checked (for character boundaries), in constant time.
    fn get(&self, start: usize, end: usize) -> Option<&'b str> {
        let from = start.checked_sub(self.start)?;
        let to = end.checked_sub(self.start)?;
        self.text.get(from..to)
    }
}

impl LineSplitter {
    /// A splitter with the default limits
    /// ([`DEFAULT_MAX_LINE_LEN`](crate::limits::DEFAULT_MAX_LINE_LEN)).
    pub const fn new() -> Self {
        Self::with_limits(&Limits::new())
    }

    /// A splitter with the given limits (`max_line_len`, `id_peek_window`).
    ///
    /// ```
    /// use acp_codec::{FrameError, Limits, LineSplitter};
    ///
    /// let limits = Limits::default().with_max_line_len(8);
    /// let mut splitter = LineSplitter::with_limits(&limits);
    /// // Reported as soon as more than 8 bytes are in, before the `\n` arrives.
    /// let decoded = splitter.decode(b"[1,2,3,4,5");
    /// assert!(matches!(decoded.item, Some(Err(FrameError::LineTooLong { limit: 8, .. }))));
    /// assert_eq!(decoded.consumed, 10); // dropped at once, never buffered
    /// // The rest of the line is skipped quietly; the next line decodes.
    /// let decoded = splitter.decode(b",6]\n[7]\n");
    /// assert_eq!(decoded.item.unwrap().unwrap().as_str(), "[7]");
    /// ```
    pub const fn with_limits(limits: &Limits) -> Self {
        Self {
            max_line_len: limits.max_line_len,
            id_peek_window: limits.id_peek_window,
            scanned: 0,
            valid: 0,
            discarding: false,
        }
    }

    /// A splitter with the default limits but this line length limit.
    pub const fn with_max_line_len(max_line_len: usize) -> Self {
        Self::with_limits(&Limits::new().with_max_line_len(max_line_len))
    }

    /// The longest line accepted, in bytes, excluding the `\n`.
    pub const fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// Forgets the scan position and any oversized line being skipped.
    pub fn reset(&mut self) {
        self.scanned = 0;
        self.valid = 0;
        self.discarding = false;
    }

    /// Finds the next line in `buf`, the unconsumed bytes of the input.
    ///
    /// See the [type docs](Self) for the driving loop. To take every
    /// complete line of a buffer in one go, [`lines`](Self::lines) is
    /// faster for short lines.
    pub fn decode<'b>(&mut self, buf: &'b [u8]) -> Decoded<'b> {
        self.find(buf).into()
    }

    /// Like [`decode`](Self::decode), at the end of the input: once no
    /// complete line is left, the remaining bytes are handed out as a last
    /// line with [`Line::is_terminated`] false (unless blank). When no item
    /// comes back, everything was consumed and the splitter is reset.
    ///
    /// ```
    /// use acp_codec::LineSplitter;
    ///
    /// let mut splitter = LineSplitter::new();
    /// // The peer exited: the buffer holds one full line and half of another.
    /// let mut buf = b"{\"a\":1}\n{\"b\":".to_vec();
    /// let mut last = Vec::new();
    /// loop {
    ///     let decoded = splitter.decode_eof(&buf);
    ///     let consumed = decoded.consumed;
    ///     let Some(item) = decoded.item else { break };
    ///     let line = item.unwrap();
    ///     last.push((line.as_str().to_owned(), line.is_terminated()));
    ///     buf.drain(..consumed);
    /// }
    /// assert_eq!(last, [("{\"a\":1}".to_owned(), true), ("{\"b\":".to_owned(), false)]);
    /// assert!(buf.is_empty());
    /// ```
    pub fn decode_eof<'b>(&mut self, buf: &'b [u8]) -> Decoded<'b> {
        self.find_eof(buf).into()
    }

    /// Every complete line of `buf`, as an iterator; then
    /// [`Lines::consumed`] says how many bytes to drop.
    ///
    /// The same items as calling [`decode`](Self::decode) until it returns
    /// none, but UTF-8 is validated over whole spans of the buffer at once
    /// instead of line by line, which is several times faster for short
    /// lines.
    ///
    /// ```
    /// use acp_codec::LineSplitter;
    ///
    /// let mut splitter = LineSplitter::new();
    /// let mut buf = b"{\"a\":1}\n{\"b\":2}\n{\"c\"".to_vec();
    /// let mut lines = splitter.lines(&buf);
    /// let texts: Vec<String> = lines.by_ref().map(|l| l.unwrap().as_str().to_owned()).collect();
    /// let consumed = lines.consumed();
    /// buf.drain(..consumed);
    /// assert_eq!(texts, ["{\"a\":1}", "{\"b\":2}"]);
    /// assert_eq!(buf, b"{\"c\"");
    /// ```
    pub fn lines<'s, 'b>(&'s mut self, buf: &'b [u8]) -> Lines<'s, 'b> {
        self.valid = 0;
        Lines {
            splitter: self,
            buf,
            consumed: 0,
            span: Span::empty(),
        }
    }

    /// The common case the fast paths take in one step: `rest` starts with
    /// a complete, non-blank line within the limit and nothing is being
    /// skipped or was half-scanned. Returns the line's length without
    /// `\r` and the bytes it takes with its `\n`; `None` leaves the line to
    /// `find_from` (UTF-8 is the caller's to check).
    #[inline]
    fn simple_line(&self, rest: &[u8]) -> Option<(usize, usize)> {
        if self.discarding || self.scanned != 0 {
            return None;
        }
        if matches!(rest.first(), None | Some(b' ' | b'\t' | b'\r' | b'\n')) {
            return None;
        }
        let i = memchr(b'\n', rest)?;
        if i > self.max_line_len {
            return None;
        }
        let len = match rest.get(..i)?.split_last() {
            Some((b'\r', head)) => head.len(),
            _ => i,
        };
        Some((len, i.saturating_add(1)))
    }

    pub(crate) fn find<'b>(&mut self, buf: &'b [u8]) -> Found<'b> {
        self.valid = 0;
        let mut check = Check::Span {
            span: Span::empty(),
            lookahead: 0,
        };
        self.find_from(buf, 0, &mut check)
    }

    /// `find` for the `bytes` path: validity without `&str`, remembered
    /// across calls.
    #[cfg(feature = "bytes")]
    pub(crate) fn find_valid<'b>(&mut self, buf: &'b [u8]) -> Found<'b> {
        let mut check = Check::Prefix { valid: self.valid };
        let found = self.find_from(buf, 0, &mut check);
        if let Check::Prefix { valid } = check {
            self.valid = valid.saturating_sub(found.consumed);
        }
        found
    }

    pub(crate) fn find_eof<'b>(&mut self, buf: &'b [u8]) -> Found<'b> {
        let found = self.find(buf);
        if found.item.is_some() {
            return found;
        }
        let start = found.consumed.min(buf.len());
        let was_discarding = self.discarding;
        self.reset();
        if was_discarding || start == buf.len() {
            return Found {
                consumed: buf.len(),
                item: None,
            };
        }
        let mut check = Check::Span {
            span: Span::empty(),
            lookahead: 0,
        };
        let item = self.line_at(buf, start, buf.len(), false, &mut check);
        Found {
            consumed: buf.len(),
            item,
        }
    }

    /// Finds the next line in `buf[from..]`; `consumed` in the result is an
    /// offset into `buf`.
    fn find_from<'b>(&mut self, buf: &'b [u8], from: usize, check: &mut Check<'b>) -> Found<'b> {
        let mut consumed = from;
        loop {
            let rest = buf.get(consumed..).unwrap_or_default();
            if self.discarding {
                match memchr(b'\n', rest) {
                    Some(i) => {
                        self.discarding = false;
                        self.scanned = 0;
                        consumed = consumed.saturating_add(i).saturating_add(1);
                        continue;
                    }
                    None => {
                        return Found {
                            consumed: buf.len(),
                            item: None,
                        }
                    }
                }
            }
            let skip = self.scanned.min(rest.len());
            let tail = rest.get(skip..).unwrap_or_default();
            let Some(i) = memchr(b'\n', tail) else {
                if rest.len() > self.max_line_len {
                    // Report once, consume what we have, skip to the newline.
                    let error = self.too_long(rest, rest.len());
                    self.scanned = 0;
                    self.discarding = true;
                    return Found {
                        consumed: buf.len(),
                        item: Some(Err(error)),
                    };
                }
                self.scanned = rest.len();
                return Found {
                    consumed,
                    item: None,
                };
            };
            self.scanned = 0;
            let line_start = consumed;
            let line_end = consumed.saturating_add(skip).saturating_add(i);
            consumed = line_end.saturating_add(1);
            if let Some(item) = self.line_at(buf, line_start, line_end, true, check) {
                return Found {
                    consumed,
                    item: Some(item),
                };
            }
        }
    }

    /// The item for the line `buf[start..end]` (without `\n`); `None` if it is
    /// blank.
    fn line_at<'b>(
        &self,
        buf: &'b [u8],
        start: usize,
        end: usize,
        terminated: bool,
        check: &mut Check<'b>,
    ) -> Option<Result<(usize, usize, Line<'b>), FrameError>> {
        let raw = buf.get(start..end).unwrap_or_default();
        if raw.len() > self.max_line_len {
            return Some(Err(self.too_long(raw, raw.len())));
        }
        let len = match raw.split_last() {
            Some((b'\r', head)) => head.len(),
            _ => raw.len(),
        };
        if raw.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            return None;
        }
        let end = start.saturating_add(len);
        let checked = match check {
            Check::Span { span, lookahead } => match span.get(start, end) {
                Some(text) => Ok(text),
                None => {
                    *span = validate(buf, start, end.saturating_add(*lookahead));
                    span.get(start, end).ok_or(span.text.len())
                }
            },
            #[cfg(feature = "bytes")]
            Check::Prefix { valid } => {
                if end > *valid {
                    let from = (*valid).max(start);
                    let to = end.saturating_add(LOOKAHEAD).min(buf.len());
                    let bytes = buf.get(from..to).unwrap_or_default();
                    let good = valid_prefix(bytes).len();
                    *valid = from.saturating_add(good);
                }
                // The text is not needed on this path, only its validity.
                if end <= *valid {
                    Ok("")
                } else {
                    Err(valid.saturating_sub(start))
                }
            }
        };
        Some(match checked {
            Ok(text) => Ok((start, len, Line { text, terminated })),
            Err(valid_up_to) => Err(FrameError::InvalidUtf8 { len, valid_up_to }),
        })
    }

    fn too_long(&self, line: &[u8], seen: usize) -> FrameError {
        let window = line
            .get(..self.id_peek_window.min(line.len()))
            .unwrap_or_default();
        let peeked = peek(window);
        FrameError::LineTooLong {
            limit: self.max_line_len,
            seen,
            id: peeked.id,
            is_request: peeked.is_request,
        }
    }
}

/// Validates `buf[start..end]` (`end` clamped to the buffer) in one SIMD pass;
/// the span is the valid prefix. A character cut off at `end` only shortens
/// the span, and whole lines never end inside a character.
fn validate(buf: &[u8], start: usize, end: usize) -> Span<'_> {
    let bytes = buf.get(start..end.min(buf.len())).unwrap_or_default();
    Span {
        start,
        text: valid_prefix(bytes),
    }
}

/// The longest valid UTF-8 prefix of `bytes`. The common case (all valid)
/// takes `simdutf8`'s faster `basic` check; only a failure pays for the
/// `compat` pass that finds where the bad byte is.
fn valid_prefix(bytes: &[u8]) -> &str {
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return text;
    }
    let up_to = match simdutf8::compat::from_utf8(bytes) {
        Ok(text) => return text,
        Err(e) => e.valid_up_to(),
    };
    let valid = bytes.get(..up_to).unwrap_or_default();
    simdutf8::basic::from_utf8(valid).unwrap_or_default()
}

/// Every complete line of a buffer: see [`LineSplitter::lines`].
///
/// Dropping it early is fine: [`consumed`](Self::consumed) then covers only
/// the lines taken.
#[derive(Debug)]
#[must_use = "iterate, then drop `consumed()` bytes from the front of the buffer"]
pub struct Lines<'s, 'b> {
    splitter: &'s mut LineSplitter,
    buf: &'b [u8],
    consumed: usize,
    span: Span<'b>,
}

impl<'b> Lines<'_, 'b> {
    /// Bytes of the buffer to drop before the next call.
    pub const fn consumed(&self) -> usize {
        self.consumed
    }

    /// The common case in one tight step: a complete line within the limit,
    /// not blank, inside the span already validated. Anything else (a
    /// partial or oversized line, a line being skipped, a blank line, a
    /// span to extend, invalid UTF-8) is left to `find_from`, which gives
    /// the same items.
    #[inline]
    fn fast_line(&mut self) -> Option<Line<'b>> {
        let start = self.consumed;
        let (len, next) = self.splitter.simple_line(self.buf.get(start..)?)?;
        let text = self.span.get(start, start.saturating_add(len))?;
        self.consumed = start.saturating_add(next);
        Some(Line {
            text,
            terminated: true,
        })
    }
}

impl<'b> Iterator for Lines<'_, 'b> {
    type Item = Result<Line<'b>, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(line) = self.fast_line() {
            return Some(Ok(line));
        }
        let mut check = Check::Span {
            span: self.span,
            lookahead: LOOKAHEAD,
        };
        let found = self.splitter.find_from(self.buf, self.consumed, &mut check);
        #[cfg_attr(not(feature = "bytes"), allow(irrefutable_let_patterns))]
        if let Check::Span { span, .. } = check {
            self.span = span;
        }
        self.consumed = found.consumed;
        found.item.map(|r| r.map(|(_, _, line)| line))
    }
}

impl<'b> From<Found<'b>> for Decoded<'b> {
    fn from(found: Found<'b>) -> Self {
        Decoded {
            consumed: found.consumed,
            item: found.item.map(|r| r.map(|(_, _, line)| line)),
        }
    }
}

#[cfg(feature = "bytes")]
pub use with_bytes::BytesLines;

#[cfg(feature = "bytes")]
mod with_bytes {
    use bytes::{Buf, Bytes, BytesMut};

    use memchr::memrchr;

    use super::{valid_prefix, Check, Found, LineSplitter, LOOKAHEAD};
    use crate::error::FrameError;

    /// A [`Found`] as offsets, so the borrow of the buffer can end.
    struct Offsets {
        consumed: usize,
        /// The line's start and length.
        item: Option<Result<(usize, usize), FrameError>>,
    }

    impl From<Found<'_>> for Offsets {
        fn from(found: Found<'_>) -> Self {
            Self {
                consumed: found.consumed,
                item: found.item.map(|r| r.map(|(start, len, _)| (start, len))),
            }
        }
    }

    impl LineSplitter {
        /// Like [`decode`](Self::decode), over a [`BytesMut`]: splits the next
        /// line off the front of `buf` and hands it out as [`Bytes`] without
        /// copying (valid UTF-8, without `\n` or trailing `\r`). Consumed bytes
        /// are removed from `buf`.
        ///
        /// `None` when `buf` holds no complete line: read more into it.
        ///
        /// ```
        /// use acp_codec::LineSplitter;
        /// use bytes::BytesMut;
        ///
        /// let mut splitter = LineSplitter::new();
        /// let mut buf = BytesMut::from(&b"{\"a\":1}\n\n{\"b\""[..]);
        /// let line = splitter.decode_bytes(&mut buf).unwrap().unwrap();
        /// assert_eq!(&line[..], b"{\"a\":1}");
        /// assert!(splitter.decode_bytes(&mut buf).is_none());
        /// assert_eq!(&buf[..], b"{\"b\"");
        /// ```
        pub fn decode_bytes(&mut self, buf: &mut BytesMut) -> Option<Result<Bytes, FrameError>> {
            if let Some(line) = self.fast_bytes(buf) {
                return Some(Ok(line));
            }
            let at = Offsets::from(self.find_valid(buf));
            split(buf, at)
        }

        /// The common case of [`decode_bytes`](Self::decode_bytes) in one
        /// step: a complete, non-blank line within the limit and valid
        /// UTF-8. Anything else is left to the general path, which gives the
        /// same items.
        #[inline]
        fn fast_bytes(&mut self, buf: &mut BytesMut) -> Option<Bytes> {
            let (len, consumed) = self.simple_line(buf)?;
            if len > self.valid {
                let from = self.valid;
                let to = len.saturating_add(LOOKAHEAD).min(buf.len());
                let good = valid_prefix(buf.get(from..to)?).len();
                self.valid = from.saturating_add(good);
                if len > self.valid {
                    return None;
                }
            }
            let mut head = buf.split_to(consumed);
            head.truncate(len);
            self.valid = self.valid.saturating_sub(consumed);
            Some(head.freeze())
        }

        /// Every complete line of `buf` as [`Bytes`], as an iterator: the
        /// batch form of [`decode_bytes`](Self::decode_bytes), as
        /// [`lines`](Self::lines) is of [`decode`](Self::decode). The
        /// complete lines are split off `buf` in one go and each line is a
        /// slice of that block, which saves most of the per-line cost of
        /// `decode_bytes` on short lines. The same items come out in the
        /// same order; what is left in `buf` afterwards is the unfinished
        /// last line.
        ///
        /// Dropping the iterator before the end puts the lines not taken
        /// back in front of `buf` (a copy of them): nothing is lost.
        ///
        /// ```
        /// use acp_codec::LineSplitter;
        /// use bytes::BytesMut;
        ///
        /// let mut splitter = LineSplitter::new();
        /// let mut buf = BytesMut::from(&b"{\"a\":1}\r\n\n{\"b\":2}\n{\"c\""[..]);
        /// let lines: Vec<_> = splitter.lines_bytes(&mut buf).map(Result::unwrap).collect();
        /// assert_eq!(lines, [&b"{\"a\":1}"[..], &b"{\"b\":2}"[..]]);
        /// assert_eq!(&buf[..], b"{\"c\"");
        /// ```
        pub fn lines_bytes<'a>(&'a mut self, buf: &'a mut BytesMut) -> BytesLines<'a> {
            // The first `scanned` bytes hold no newline (an unfinished line
            // seen before): searching only what came since keeps a long line
            // fed in many reads linear.
            let from = self.scanned.min(buf.len());
            let end = memrchr(b'\n', buf.get(from..).unwrap_or_default())
                .map_or(0, |i| from.saturating_add(i).saturating_add(1));
            let block = buf.split_to(end).freeze();
            let valid = self.valid.min(end);
            self.valid = self.valid.saturating_sub(end);
            BytesLines {
                splitter: self,
                buf,
                block,
                consumed: 0,
                valid,
                tail_done: false,
            }
        }

        /// Like [`decode_eof`](Self::decode_eof), over a [`BytesMut`].
        pub fn decode_bytes_eof(
            &mut self,
            buf: &mut BytesMut,
        ) -> Option<Result<Bytes, FrameError>> {
            let at = Offsets::from(self.find_eof(buf));
            split(buf, at)
        }
    }

    /// Every complete line of a [`BytesMut`] as [`Bytes`]: see
    /// [`LineSplitter::lines_bytes`].
    #[derive(Debug)]
    #[must_use = "iterate to take the lines; dropped early, they go back into the buffer"]
    pub struct BytesLines<'a> {
        splitter: &'a mut LineSplitter,
        buf: &'a mut BytesMut,
        /// The complete lines split off `buf`.
        block: Bytes,
        /// Bytes of `block` taken.
        consumed: usize,
        /// Bytes of `block` known to be UTF-8.
        valid: usize,
        /// The unfinished line left in `buf` was looked at (it may be over
        /// the limit already).
        tail_done: bool,
    }

    impl BytesLines<'_> {
        /// The common case in one step (as `Lines::fast_line`).
        #[inline]
        fn fast_line(&mut self) -> Option<Bytes> {
            let start = self.consumed;
            let (len, next) = self.splitter.simple_line(self.block.get(start..)?)?;
            let end = start.saturating_add(len);
            if end > self.valid {
                let to = end.saturating_add(LOOKAHEAD).min(self.block.len());
                let good = valid_prefix(self.block.get(self.valid..to)?).len();
                self.valid = self.valid.saturating_add(good);
                if end > self.valid {
                    return None;
                }
            }
            self.consumed = start.saturating_add(next);
            Some(self.block.slice(start..end))
        }
    }

    impl Iterator for BytesLines<'_> {
        type Item = Result<Bytes, FrameError>;

        fn next(&mut self) -> Option<Self::Item> {
            if self.consumed < self.block.len() {
                if let Some(line) = self.fast_line() {
                    return Some(Ok(line));
                }
                let mut check = Check::Prefix { valid: self.valid };
                let found = self
                    .splitter
                    .find_from(&self.block, self.consumed, &mut check);
                if let Check::Prefix { valid } = check {
                    self.valid = valid;
                }
                self.consumed = found.consumed;
                match found.item {
                    Some(Ok((start, len, _))) => {
                        let end = start.saturating_add(len).min(self.block.len());
                        return Some(Ok(self.block.slice(start.min(end)..end)));
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    // Blank lines to the end of the block.
                    None => {}
                }
            }
            // The block is done; the unfinished line in `buf` may already be
            // over the limit (reported once, then skipped as it arrives).
            if self.tail_done {
                return None;
            }
            match self.splitter.decode_bytes(self.buf) {
                None => {
                    self.tail_done = true;
                    None
                }
                other => other,
            }
        }
    }

    impl Drop for BytesLines<'_> {
        fn drop(&mut self) {
            let rest = self.block.get(self.consumed..).unwrap_or_default();
            if rest.is_empty() {
                return;
            }
            // Lines not taken go back in front of what is left.
            let mut back = BytesMut::with_capacity(rest.len().saturating_add(self.buf.len()));
            back.extend_from_slice(rest);
            back.extend_from_slice(self.buf);
            *self.buf = back;
            self.splitter.valid = 0;
        }
    }

    fn split(buf: &mut BytesMut, at: Offsets) -> Option<Result<Bytes, FrameError>> {
        let consumed = at.consumed.min(buf.len());
        match at.item {
            None => {
                buf.advance(consumed);
                None
            }
            Some(Err(e)) => {
                buf.advance(consumed);
                Some(Err(e))
            }
            Some(Ok((start, len))) => {
                let mut head = buf.split_to(consumed);
                head.advance(start.min(head.len()));
                head.truncate(len);
                Some(Ok(head.freeze()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PeekedId;

    /// Feeds `input` in pieces of `step` bytes; collects items as strings.
    fn run(
        splitter: &mut LineSplitter,
        input: &[u8],
        step: usize,
    ) -> alloc::vec::Vec<alloc::string::String> {
        use alloc::string::ToString;
        let mut out = alloc::vec::Vec::new();
        let mut buf = alloc::vec::Vec::new();
        for piece in input.chunks(step.max(1)) {
            buf.extend_from_slice(piece);
            let mut start = 0;
            loop {
                let d = splitter.decode(&buf[start..]);
                start += d.consumed;
                match d.item {
                    Some(Ok(l)) => out.push(l.as_str().to_string()),
                    Some(Err(e)) => out.push(alloc::format!("error: {e}")),
                    None => break,
                }
            }
            buf.drain(..start);
            assert!(buf.len() <= splitter.max_line_len() + step.max(1));
        }
        loop {
            let d = splitter.decode_eof(&buf);
            let consumed = d.consumed;
            let item = d.item.map(|r| {
                r.map(|l| {
                    alloc::format!(
                        "{}{}",
                        l.as_str(),
                        if l.is_terminated() { "" } else { " (eof)" }
                    )
                })
            });
            buf.drain(..consumed);
            match item {
                Some(Ok(l)) => out.push(l),
                Some(Err(e)) => out.push(alloc::format!("error: {e}")),
                None => break,
            }
        }
        out
    }

    #[test]
    fn crlf_blank_and_eof() {
        let mut s = LineSplitter::new();
        let out = run(&mut s, b"a\r\n \t\r\n\n\r\nb\nc", 1);
        assert_eq!(out, ["a", "b", "c (eof)"]);
    }

    #[test]
    fn oversized_then_good_in_any_piece_size() {
        let input = b"{\"id\":4,\"method\":\"x\",\"params\":\"0123456789\"}\nok\n";
        for step in 1..input.len() + 1 {
            let mut s = LineSplitter::with_max_line_len(24);
            let out = run(&mut s, input, step);
            assert_eq!(out.len(), 2, "step {step}: {out:?}");
            assert!(
                out[0].contains("exceeds the 24-byte limit (request id 4)"),
                "{out:?}"
            );
            assert_eq!(out[1], "ok");
        }
    }

    #[test]
    fn oversized_reported_once_with_id() {
        let mut s = LineSplitter::with_max_line_len(8);
        let d = s.decode(b"{\"id\":\"q\",\"method\":\"m\"");
        assert_eq!(d.consumed, 22);
        assert_eq!(
            d.item,
            Some(Err(FrameError::LineTooLong {
                limit: 8,
                seen: 22,
                id: PeekedId::from_str_id("q"),
                is_request: true
            }))
        );
        let d = s.decode(b"more bytes of it");
        assert_eq!((d.consumed, d.item), (16, None));
        let d = s.decode(b"end}\nnext\n");
        assert_eq!(d.consumed, 10);
        assert_eq!(d.item.unwrap().unwrap().as_str(), "next");
    }

    #[test]
    fn invalid_utf8_is_one_line() {
        let mut s = LineSplitter::new();
        let out = run(&mut s, b"ok\n\xff\xfe\nnext\n", 2);
        assert_eq!(out[0], "ok");
        assert!(out[1].starts_with("error: line of 2 bytes is not valid utf-8"));
        assert_eq!(out[2], "next");
    }

    #[test]
    fn eof_in_oversized_line_resets() {
        let mut s = LineSplitter::with_max_line_len(3);
        let out = run(&mut s, b"abcdef", 2);
        assert_eq!(out.len(), 1);
        assert!(out[0].starts_with("error: line of 4 bytes"));
        let d = s.decode(b"ok\n");
        assert_eq!(d.item.unwrap().unwrap().as_str(), "ok");
    }

    #[test]
    fn limit_is_inclusive_and_counts_cr() {
        let mut s = LineSplitter::with_max_line_len(3);
        assert_eq!(s.decode(b"abc\n").item.unwrap().unwrap().as_str(), "abc");
        assert!(s.decode(b"ab\r\n").item.unwrap().is_ok());
        assert!(s.decode(b"abc\r\n").item.unwrap().is_err());
        assert!(s.decode(b"abcd").item.unwrap().is_err());
    }
}
