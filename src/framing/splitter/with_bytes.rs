//! The `bytes::Bytes` variants of the splitter: lines handed out as
//! `Bytes` without copying.

use bytes::{Buf, Bytes, BytesMut};

use memchr::memrchr;

use super::{valid_through, Found, LineSplitter, PrefixCheck, RawItem, RawLineSplitter};
use crate::framing::FrameError;

/// A [`Found`] as offsets, so the borrow of the buffer can end.
struct Offsets {
    consumed: usize,
    /// The line's start and length.
    item: Option<Result<(usize, usize), FrameError>>,
}

impl<T> From<Found<T>> for Offsets {
    fn from(found: Found<T>) -> Self {
        Self {
            consumed: found.consumed,
            item: found.item.map(|r| r.map(|spot| (spot.start, spot.len))),
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
        let at = Offsets::from(self.find_valid(buf, false));
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
            self.valid = valid_through(buf, self.valid, len);
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
        let from = self.scan.scanned().min(buf.len());
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
    pub fn decode_bytes_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Bytes, FrameError>> {
        let at = Offsets::from(self.find_valid(buf, true));
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
            self.valid = valid_through(&self.block, self.valid, end);
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
            let mut check = PrefixCheck { valid: self.valid };
            let found = self
                .splitter
                .find_from(&self.block, self.consumed, false, &mut check);
            self.valid = check.valid;
            self.consumed = found.consumed;
            match found.item {
                Some(Ok(super::Spot { start, len, .. })) => {
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

impl RawLineSplitter {
    /// Like [`decode`](Self::decode), over a [`BytesMut`]: the next item
    /// split off the front of `buf` as [`Bytes`] without copying. `None`
    /// when `buf` holds no complete line: read more into it.
    ///
    /// ```
    /// use acp_codec::framing::{RawItem, RawLineSplitter};
    /// use bytes::BytesMut;
    ///
    /// let mut splitter = RawLineSplitter::new();
    /// let mut buf = BytesMut::from(&b"{\"a\":1}\r\n\n{\"b\""[..]);
    /// let first = splitter.decode_bytes(&mut buf).unwrap();
    /// assert_eq!(first.as_bytes(), b"{\"a\":1}\r\n");
    /// let RawItem::Line(blank) = splitter.decode_bytes(&mut buf).unwrap() else { panic!() };
    /// assert!(blank.is_blank());
    /// assert!(splitter.decode_bytes(&mut buf).is_none());
    /// assert_eq!(&buf[..], b"{\"b\"");
    /// ```
    pub fn decode_bytes(&mut self, buf: &mut BytesMut) -> Option<RawItem<Bytes>> {
        let (len, kind) = self.find(buf, false)?;
        Some(kind.with(buf.split_to(len.min(buf.len())).freeze()))
    }

    /// [`decode_bytes`](Self::decode_bytes) at the end of the input, as
    /// [`decode_eof`](Self::decode_eof).
    pub fn decode_bytes_eof(&mut self, buf: &mut BytesMut) -> Option<RawItem<Bytes>> {
        let (len, kind) = self.find(buf, true)?;
        Some(kind.with(buf.split_to(len.min(buf.len())).freeze()))
    }
}
