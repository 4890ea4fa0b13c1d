//! The scan both splitters share: where the next line ends, the limit, and
//! the recovery after an oversized line (report it once, drop its bytes as
//! they come, up to its `\n`, and go on with the next line).
//!
//! [`LineSplitter`](super::LineSplitter) and
//! [`RawLineSplitter`](super::RawLineSplitter) differ only in what they make
//! of a [`Step`]: the first strips, skips blank lines and checks UTF-8; the
//! second hands every byte back as it was read.

use memchr::memchr;

use super::super::peek::peek;
use crate::framing::LineTooLong;
use crate::limits::Limits;

/// The scan state: how far the unconsumed bytes are known to hold no `\n`,
/// and whether an oversized line is being dropped.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    max_line_len: usize,
    id_peek_window: usize,
    /// Bytes at the start of the buffer already known to hold no `\n`.
    scanned: usize,
    /// Inside an oversized line that was already reported.
    discarding: bool,
}

/// What [`Scan::step`] found at the start of the unconsumed bytes. Each
/// variant but [`Step::More`] consumes bytes: `len` for the pieces, the
/// line and its `\n` for a line.
#[derive(Debug)]
pub(crate) enum Step {
    /// A line within the limit: `len` bytes of content (a trailing `\r`
    /// included), then a `\n` when `terminated` (at the end of the input,
    /// the last line may have none).
    Line { len: usize, terminated: bool },
    /// The first `len` bytes of a line over the limit, reported once;
    /// `done` when they end it (its `\n` was in the buffer, or the input
    /// ended).
    TooLong {
        len: usize,
        error: LineTooLong,
        done: bool,
    },
    /// A further `len` bytes of an oversized line; `done` when they hold
    /// its `\n` or the input ended.
    Rest { len: usize, done: bool },
    /// No complete line: read more (at the end of the input: nothing is
    /// left, and the scan was reset).
    More,
}

impl Step {
    /// How many bytes of the buffer the step consumes.
    #[inline]
    pub(crate) fn consumed(&self) -> usize {
        match *self {
            Self::Line { len, terminated } => len.saturating_add(usize::from(terminated)),
            Self::TooLong { len, .. } | Self::Rest { len, .. } => len,
            Self::More => 0,
        }
    }
}

impl Scan {
    pub(crate) const fn with_limits(limits: &Limits) -> Self {
        Self {
            max_line_len: limits.max_line_len,
            id_peek_window: limits.id_peek_window,
            scanned: 0,
            discarding: false,
        }
    }

    pub(crate) const fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// Bytes at the start of the unconsumed bytes already known to hold
    /// no `\n` (the start of an unfinished line seen before).
    #[cfg(feature = "bytes")]
    pub(crate) const fn scanned(&self) -> usize {
        self.scanned
    }

    /// Forgets the scan position and any oversized line being dropped.
    pub(crate) fn reset(&mut self) {
        self.scanned = 0;
        self.discarding = false;
    }

    /// [`step`](Self::step)'s common case, without changing the state: a
    /// complete line within the limit at the start of `rest`, nothing
    /// being dropped or half scanned. Its length up to the `\n`; `None`
    /// leaves the line to `step`, which gives the same answer. The
    /// decoded splitter's batch paths take it first: short lines spend
    /// most of their cost outside the search for the `\n`.
    #[inline]
    pub(crate) fn complete_line(&self, rest: &[u8]) -> Option<usize> {
        if self.discarding || self.scanned != 0 {
            return None;
        }
        memchr(b'\n', rest).filter(|&i| i <= self.max_line_len)
    }

    /// The next step over `rest`, the unconsumed bytes (which must start
    /// where the last step's consumed bytes ended: the scan position
    /// carries over, so a line fed a byte at a time costs linear time).
    /// At the end of the input (`eof`), what is left is the last line, or
    /// the last piece of an oversized one.
    #[inline(always)]
    pub(crate) fn step(&mut self, rest: &[u8], eof: bool) -> Step {
        if rest.is_empty() {
            if eof {
                self.reset();
            }
            return Step::More;
        }
        if self.discarding {
            return match memchr(b'\n', rest) {
                Some(i) => {
                    self.reset();
                    Step::Rest {
                        len: i.saturating_add(1),
                        done: true,
                    }
                }
                None => {
                    if eof {
                        self.reset();
                    }
                    Step::Rest {
                        len: rest.len(),
                        done: eof,
                    }
                }
            };
        }
        let skip = self.scanned.min(rest.len());
        let newline =
            memchr(b'\n', rest.get(skip..).unwrap_or_default()).map(|i| skip.saturating_add(i));
        match newline {
            Some(at) => {
                self.scanned = 0;
                if at > self.max_line_len {
                    let line = rest.get(..at).unwrap_or_default();
                    return Step::TooLong {
                        len: at.saturating_add(1),
                        error: self.too_long(line),
                        done: true,
                    };
                }
                Step::Line {
                    len: at,
                    terminated: true,
                }
            }
            None if rest.len() > self.max_line_len => {
                // Report once, consume what is here, drop the rest as it
                // comes up to the `\n`.
                let error = self.too_long(rest);
                self.scanned = 0;
                self.discarding = !eof;
                Step::TooLong {
                    len: rest.len(),
                    error,
                    done: eof,
                }
            }
            None if eof => {
                self.reset();
                Step::Line {
                    len: rest.len(),
                    terminated: false,
                }
            }
            None => {
                self.scanned = rest.len();
                Step::More
            }
        }
    }

    /// The error for an oversized line of which `seen` bytes are in: the
    /// request id and session peeked from its first `id_peek_window` bytes.
    fn too_long(&self, seen: &[u8]) -> LineTooLong {
        let window = seen.get(..self.id_peek_window).unwrap_or(seen);
        let peeked = peek(window);
        let e = LineTooLong::new(self.max_line_len, seen.len(), peeked.id, peeked.is_request);
        match &peeked.session {
            Some(session) => e.with_session(session.as_str()),
            None => e,
        }
    }
}
