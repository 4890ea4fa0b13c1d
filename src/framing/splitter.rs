//! The streaming line splitters: [`LineSplitter`] (lines as checked
//! text) and [`RawLineSplitter`] (every byte as read), two types over one
//! scan ([`scan`]).

use crate::framing::FrameError;
use crate::limits::Limits;
use scan::{Scan, Step};

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
/// To pass lines on byte for byte instead (terminators, blank lines and
/// bytes that are not UTF-8 kept), use [`RawLineSplitter`]: the same scan,
/// limit and recovery.
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
    scan: Scan,
    /// For the `bytes` path: bytes at the start of the buffer known to be
    /// valid UTF-8, so each byte is validated once across calls.
    #[cfg_attr(not(feature = "bytes"), allow(dead_code))]
    valid: usize,
}

/// What [`LineSplitter::find_from`] found: the line's place in the buffer (so
/// the `bytes` variant can split without copying or validating again) and
/// what its [`Check`] hands back of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found<T> {
    pub(crate) consumed: usize,
    pub(crate) item: Option<Result<Spot<T>, FrameError>>,
}

/// A line found in the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spot<T> {
    /// Its start in the buffer.
    pub(crate) start: usize,
    /// Its length, without `\n` and a trailing `\r`.
    pub(crate) len: usize,
    /// Whether a `\n` ended it.
    pub(crate) terminated: bool,
    /// Its text on the borrowed paths; `()` on the `bytes` path, which
    /// needs only the offsets.
    pub(crate) text: T,
}

/// How [`line_at`] knows a line is UTF-8, and what it hands
/// back of a valid one.
pub(crate) trait Check<'b> {
    /// What a valid line yields.
    type Text;

    /// The line `buf[start..end]` when it is valid UTF-8, else how many of
    /// its bytes are.
    fn check(&mut self, buf: &'b [u8], start: usize, end: usize) -> Result<Self::Text, usize>;
}

/// The borrowed paths: a validated span to slice `&str` lines from; a
/// fresh validation reaches `lookahead` bytes past the line.
struct SpanCheck<'b> {
    span: Span<'b>,
    lookahead: usize,
}

impl<'b> Check<'b> for SpanCheck<'b> {
    type Text = &'b str;

    fn check(&mut self, buf: &'b [u8], start: usize, end: usize) -> Result<&'b str, usize> {
        match self.span.get(start, end) {
            Some(text) => Ok(text),
            None => {
                let to = lookahead_end(buf, end, self.lookahead);
                self.span = validate(buf, start, to);
                self.span.get(start, end).ok_or(self.span.text.len())
            }
        }
    }
}

/// The `bytes` path needs no `&str`: `valid` bytes from the start of the
/// buffer are known valid, across calls.
#[cfg(feature = "bytes")]
pub(crate) struct PrefixCheck {
    pub(crate) valid: usize,
}

#[cfg(feature = "bytes")]
impl Check<'_> for PrefixCheck {
    type Text = ();

    fn check(&mut self, buf: &[u8], start: usize, end: usize) -> Result<(), usize> {
        if end > self.valid {
            self.valid = valid_through(buf, self.valid.max(start), end);
        }
        if end <= self.valid {
            Ok(())
        } else {
            Err(self.valid.saturating_sub(start))
        }
    }
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::new()
    }
}

/// How far past a line the batch path validates, so short lines share one
/// SIMD-wide validation pass.
const LOOKAHEAD: usize = 64 * 1024;

/// Where a validation pass that must cover `buf[..end]` and may look
/// `ahead` bytes further stops: at the start of a character, so that the
/// look-ahead never cuts one in two. A cut character would fail the fast check, and
/// the slow decode that then finds the valid prefix costs more than the
/// whole pass. At most three bytes of look-ahead are given up (a character
/// is at most four bytes), and the last byte of the buffer, which may begin
/// a character whose rest has not been read. `end` itself is never given
/// up: it is the end of a line (its `\n`, or the end of the input).
fn lookahead_end(buf: &[u8], end: usize, ahead: usize) -> usize {
    let want = end.saturating_add(ahead).min(buf.len());
    if want <= end {
        return want;
    }
    (end..=want)
        .rev()
        .take(4)
        .find(|&at| at == end || buf.get(at).is_some_and(|&c| c & 0xc0 != 0x80))
        .unwrap_or(end)
}

/// How far `buf` is known to be UTF-8 after checking it from `from` (known
/// valid before it) through the line ending at `end` and the look-ahead
/// past it ([`lookahead_end`]): the bytes paths' one step of validation.
#[cfg(feature = "bytes")]
fn valid_through(buf: &[u8], from: usize, end: usize) -> usize {
    let to = lookahead_end(buf, end, LOOKAHEAD);
    let good = buf
        .get(from..to)
        .map_or(0, |bytes| valid_prefix(bytes).len());
    from.saturating_add(good)
}

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
    /// assert!(matches!(decoded.item, Some(Err(FrameError::LineTooLong(e))) if e.limit() == 8));
    /// assert_eq!(decoded.consumed, 10); // dropped at once, never buffered
    /// // The rest of the line is skipped quietly; the next line decodes.
    /// let decoded = splitter.decode(b",6]\n[7]\n");
    /// assert_eq!(decoded.item.unwrap().unwrap().as_str(), "[7]");
    /// ```
    pub const fn with_limits(limits: &Limits) -> Self {
        Self {
            scan: Scan::with_limits(limits),
            valid: 0,
        }
    }

    /// A splitter with the default limits but this line length limit.
    pub const fn with_max_line_len(max_line_len: usize) -> Self {
        Self::with_limits(&Limits::new().with_max_line_len(max_line_len))
    }

    /// The longest line accepted, in bytes, excluding the `\n`.
    pub const fn max_line_len(&self) -> usize {
        self.scan.max_line_len()
    }

    /// Forgets the scan position and any oversized line being skipped.
    pub fn reset(&mut self) {
        self.scan.reset();
        self.valid = 0;
    }

    /// Finds the next line in `buf`, the unconsumed bytes of the input.
    ///
    /// See the [type docs](Self) for the driving loop. To take every
    /// complete line of a buffer in one go, [`lines`](Self::lines) is
    /// faster for short lines.
    pub fn decode<'b>(&mut self, buf: &'b [u8]) -> Decoded<'b> {
        self.find(buf, false).into()
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
        self.find(buf, true).into()
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

    /// The common case the batch paths take in one step: `rest` starts
    /// with a complete line within the limit that is not blank
    /// ([`Scan::complete_line`]). Returns the line's length without `\r`
    /// and the bytes it takes with its `\n`; `None` leaves the line to
    /// `find_from` (UTF-8 is the caller's to check).
    #[inline]
    fn simple_line(&self, rest: &[u8]) -> Option<(usize, usize)> {
        if matches!(rest.first(), None | Some(b' ' | b'\t' | b'\r' | b'\n')) {
            return None;
        }
        let i = self.scan.complete_line(rest)?;
        let len = match rest.get(..i)?.split_last() {
            Some((b'\r', head)) => head.len(),
            _ => i,
        };
        Some((len, i.saturating_add(1)))
    }

    pub(crate) fn find<'b>(&mut self, buf: &'b [u8], eof: bool) -> Found<&'b str> {
        self.valid = 0;
        let mut check = SpanCheck {
            span: Span::empty(),
            lookahead: 0,
        };
        self.find_from(buf, 0, eof, &mut check)
    }

    /// `find` for the `bytes` path: validity without `&str`, remembered
    /// across calls.
    #[cfg(feature = "bytes")]
    pub(crate) fn find_valid(&mut self, buf: &[u8], eof: bool) -> Found<()> {
        let mut check = PrefixCheck { valid: self.valid };
        let found = self.find_from(buf, 0, eof, &mut check);
        self.valid = check.valid.saturating_sub(found.consumed);
        found
    }

    /// Finds the next line in `buf[from..]`: the scan's next line that is
    /// not blank, or its error; an oversized line's further pieces are
    /// dropped. `consumed` in the result is an offset into `buf`.
    #[inline]
    fn find_from<'b, C: Check<'b>>(
        &mut self,
        buf: &'b [u8],
        from: usize,
        eof: bool,
        check: &mut C,
    ) -> Found<C::Text> {
        let mut consumed = from;
        loop {
            let step = self.scan.step(buf.get(consumed..).unwrap_or_default(), eof);
            let start = consumed;
            consumed = consumed.saturating_add(step.consumed());
            let item = match step {
                Step::More => None,
                Step::Rest { .. } => continue,
                Step::TooLong { error, .. } => Some(Err(FrameError::LineTooLong(error))),
                Step::Line { len, terminated } => match line_at(buf, start, len, terminated, check)
                {
                    Some(item) => Some(item),
                    None => continue,
                },
            };
            return Found { consumed, item };
        }
    }
}

/// The item for the line of `len` bytes at `start` in `buf` (without its
/// `\n`): `\r` stripped, UTF-8 checked; `None` if it is blank.
#[inline]
fn line_at<'b, C: Check<'b>>(
    buf: &'b [u8],
    start: usize,
    len: usize,
    terminated: bool,
    check: &mut C,
) -> Option<Result<Spot<C::Text>, FrameError>> {
    let raw = buf
        .get(start..start.saturating_add(len))
        .unwrap_or_default();
    let len = match raw.split_last() {
        Some((b'\r', head)) => head.len(),
        _ => raw.len(),
    };
    if raw.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return None;
    }
    let end = start.saturating_add(len);
    Some(match check.check(buf, start, end) {
        Ok(text) => Ok(Spot {
            start,
            len,
            terminated,
            text,
        }),
        Err(valid_up_to) => Err(FrameError::InvalidUtf8 { len, valid_up_to }),
    })
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
/// takes `simdutf8`'s fast check; only a failure pays for the standard
/// library's chunked decode, whose first chunk's valid part is exactly that
/// prefix (empty when the first byte is bad, or for no bytes at all).
fn valid_prefix(bytes: &[u8]) -> &str {
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return text;
    }
    bytes.utf8_chunks().next().map_or("", |chunk| chunk.valid())
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
        let mut check = SpanCheck {
            span: self.span,
            lookahead: LOOKAHEAD,
        };
        let found = self
            .splitter
            .find_from(self.buf, self.consumed, false, &mut check);
        self.span = check.span;
        self.consumed = found.consumed;
        found.item.map(|r| r.map(Line::from))
    }
}

impl<'b> From<Spot<&'b str>> for Line<'b> {
    fn from(spot: Spot<&'b str>) -> Self {
        Line {
            text: spot.text,
            terminated: spot.terminated,
        }
    }
}

impl<'b> From<Found<&'b str>> for Decoded<'b> {
    fn from(found: Found<&'b str>) -> Self {
        Decoded {
            consumed: found.consumed,
            item: found.item.map(|r| r.map(Line::from)),
        }
    }
}

#[cfg(feature = "bytes")]
pub use with_bytes::BytesLines;

#[cfg(feature = "bytes")]
mod with_bytes;

pub use raw::{Ending, RawItem, RawLine, RawLineSplitter};

mod raw;
mod scan;

#[cfg(test)]
mod tests;
