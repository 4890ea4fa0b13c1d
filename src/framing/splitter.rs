//! The streaming line splitter.

use core::ops::Range;

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
    /// Inside an oversized line that was already reported.
    discarding: bool,
}

/// A line found in a buffer, as ranges (so the `bytes` variant can split
/// without copying).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) consumed: usize,
    pub(crate) item: Option<Result<(Range<usize>, bool), FrameError>>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl LineSplitter {
    /// A splitter with the default limits
    /// ([`DEFAULT_MAX_LINE_LEN`](crate::limits::DEFAULT_MAX_LINE_LEN)).
    pub const fn new() -> Self {
        Self::with_limits(&Limits::new())
    }

    /// A splitter with the given limits (`max_line_len`, `id_peek_window`).
    pub const fn with_limits(limits: &Limits) -> Self {
        Self {
            max_line_len: limits.max_line_len,
            id_peek_window: limits.id_peek_window,
            scanned: 0,
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
        self.discarding = false;
    }

    /// Finds the next line in `buf`, the unconsumed bytes of the input.
    ///
    /// See the [type docs](Self) for the driving loop.
    pub fn decode<'b>(&mut self, buf: &'b [u8]) -> Decoded<'b> {
        let found = self.find(buf);
        to_decoded(buf, found)
    }

    /// Like [`decode`](Self::decode), at the end of the input: once no
    /// complete line is left, the remaining bytes are handed out as a last
    /// line with [`Line::is_terminated`] false (unless blank). When no item
    /// comes back, everything was consumed and the splitter is reset.
    pub fn decode_eof<'b>(&mut self, buf: &'b [u8]) -> Decoded<'b> {
        let found = self.find_eof(buf);
        to_decoded(buf, found)
    }

    pub(crate) fn find_eof(&mut self, buf: &[u8]) -> Found {
        let found = self.find(buf);
        if found.item.is_some() {
            return found;
        }
        let consumed = found.consumed;
        let was_discarding = self.discarding;
        self.reset();
        let start = consumed.min(buf.len());
        if was_discarding || start == buf.len() {
            return Found {
                consumed: buf.len(),
                item: None,
            };
        }
        let item = self.line_at(buf, start, buf.len(), false);
        Found {
            consumed: buf.len(),
            item,
        }
    }

    pub(crate) fn find(&mut self, buf: &[u8]) -> Found {
        let mut consumed: usize = 0;
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
            let from = self.scanned.min(rest.len());
            let tail = rest.get(from..).unwrap_or_default();
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
            let line_end = consumed.saturating_add(from).saturating_add(i);
            consumed = line_end.saturating_add(1);
            if let Some(item) = self.line_at(buf, line_start, line_end, true) {
                return Found {
                    consumed,
                    item: Some(item),
                };
            }
        }
    }

    /// The item for the line `buf[start..end]` (without `\n`); `None` if it is
    /// blank.
    fn line_at(
        &self,
        buf: &[u8],
        start: usize,
        end: usize,
        terminated: bool,
    ) -> Option<Result<(Range<usize>, bool), FrameError>> {
        let raw = buf.get(start..end).unwrap_or_default();
        if raw.len() > self.max_line_len {
            return Some(Err(self.too_long(raw, raw.len())));
        }
        let text = match raw.split_last() {
            Some((b'\r', head)) => head,
            _ => raw,
        };
        if text.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            return None;
        }
        Some(match core::str::from_utf8(text) {
            Ok(_) => Ok((start..start.saturating_add(text.len()), terminated)),
            Err(e) => Err(FrameError::InvalidUtf8 {
                len: text.len(),
                valid_up_to: e.valid_up_to(),
            }),
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

fn to_decoded(buf: &[u8], found: Found) -> Decoded<'_> {
    let item = found.item.map(|r| {
        r.map(|(range, terminated)| Line {
            // The range was validated as UTF-8 by `line_at`.
            text: buf
                .get(range)
                .and_then(|b| core::str::from_utf8(b).ok())
                .unwrap_or_default(),
            terminated,
        })
    });
    Decoded {
        consumed: found.consumed,
        item,
    }
}

#[cfg(feature = "bytes")]
mod with_bytes {
    use bytes::{Buf, Bytes, BytesMut};

    use super::{Found, LineSplitter};
    use crate::error::FrameError;

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
            let found = self.find(buf);
            split(buf, found)
        }

        /// Like [`decode_eof`](Self::decode_eof), over a [`BytesMut`].
        pub fn decode_bytes_eof(
            &mut self,
            buf: &mut BytesMut,
        ) -> Option<Result<Bytes, FrameError>> {
            let found = self.find_eof(buf);
            split(buf, found)
        }
    }

    fn split(buf: &mut BytesMut, found: Found) -> Option<Result<Bytes, FrameError>> {
        let consumed = found.consumed.min(buf.len());
        match found.item {
            None => {
                buf.advance(consumed);
                None
            }
            Some(Err(e)) => {
                buf.advance(consumed);
                Some(Err(e))
            }
            Some(Ok((range, _))) => {
                let mut head = buf.split_to(consumed);
                head.advance(range.start.min(head.len()));
                head.truncate(range.end.saturating_sub(range.start));
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
