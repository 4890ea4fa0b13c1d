//! A client's side of `terminal/*`, sans-IO: the bounded output of one
//! command and the answer to `terminal/output`.
//!
//! An agent that runs a shell command through the client
//! (`terminal/create`) may set `outputByteLimit`; the client keeps at most
//! that many bytes of the command's output, dropping from the start, and
//! says so with `truncated: true`. The cut falls on a character boundary, so
//! the kept text never starts with half a character. Output that is not
//! UTF-8 is answered with U+FFFD in place of each bad sequence; a character
//! split across two reads waits for its second half instead.
//!
//! ```
//! use acp_codec::client::terminal::TerminalOutput;
//!
//! let mut out = TerminalOutput::new(Some(6));
//! out.push(b"line 1\n");
//! out.push("€ ok\n".as_bytes());
//! // The last 6 bytes start inside '€' (3 bytes): its rest is dropped too.
//! let answer = out.response();
//! assert_eq!(answer.output, " ok\n");
//! assert!(answer.truncated);
//! assert!(answer.exit_status.is_none());
//!
//! out.exited(Some(0), None);
//! assert_eq!(out.response().exit_status.unwrap().exit_code, Some(0));
//! ```

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::acp::{TerminalExitStatus, TerminalOutputResponse};

/// The output of one terminal command, bounded by `outputByteLimit`.
#[derive(Debug, Clone, Default)]
pub struct TerminalOutput {
    buf: Vec<u8>,
    /// Where the kept output starts in `buf`.
    start: usize,
    limit: Option<usize>,
    truncated: bool,
    exit: Option<TerminalExitStatus<'static>>,
}

impl TerminalOutput {
    /// An empty buffer keeping at most `limit` bytes (`None`: no limit; the
    /// caller then bounds the command some other way).
    pub fn new(limit: Option<usize>) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// A buffer for `terminal/create`'s `outputByteLimit`, with `cap` as the
    /// client's own most (used when the agent asks for more, or sets none).
    pub fn with_cap(output_byte_limit: Option<u64>, cap: usize) -> Self {
        let asked = output_byte_limit.map_or(cap, |l| usize::try_from(l).unwrap_or(usize::MAX));
        Self::new(Some(asked.min(cap)))
    }

    /// Appends bytes the command wrote (stdout and stderr alike), dropping
    /// from the start past the limit. Amortised linear: the dropped bytes
    /// are moved out once the dropped part is as long as the kept one, so
    /// the buffer holds at most twice the limit.
    pub fn push(&mut self, bytes: &[u8]) {
        let Some(limit) = self.limit else {
            self.buf.extend_from_slice(bytes);
            return;
        };
        match bytes.len().checked_sub(limit) {
            Some(skip) if skip > 0 => {
                // Only the tail of this read survives: never hold more.
                self.buf.clear();
                self.start = 0;
                self.buf.extend(bytes.iter().skip(skip));
                self.cut();
            }
            _ => {
                self.buf.extend_from_slice(bytes);
                let from = self.buf.len().checked_sub(limit);
                if let Some(from) = from.filter(|&f| f > self.start) {
                    self.start = from;
                    self.cut();
                } else if self.truncated {
                    // The rest of a character whose start an earlier cut
                    // dropped (its first bytes were all the kept text then).
                    self.skip_partial();
                }
            }
        }
        if self.start > 0 && self.start >= self.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }

    /// After dropping from the start: mark it, and drop the rest of a
    /// character the cut split (at most three bytes).
    fn cut(&mut self) {
        self.truncated = true;
        self.skip_partial();
    }

    /// Moves the start past the continuation bytes it falls on: the rest of
    /// a character whose first byte was dropped.
    fn skip_partial(&mut self) {
        let partial = self
            .kept()
            .iter()
            .take(3)
            .take_while(|&&b| is_continuation(b))
            .count();
        self.start = self.start.saturating_add(partial).min(self.buf.len());
    }

    /// The kept bytes (`start` never passes the end).
    fn kept(&self) -> &[u8] {
        self.buf
            .split_at_checked(self.start)
            .map_or(&[], |(_, kept)| kept)
    }

    /// Records how the command ended.
    pub fn exited(&mut self, exit_code: Option<u32>, signal: Option<String>) {
        self.exit = Some(TerminalExitStatus {
            exit_code,
            signal: signal.map(Cow::Owned),
            meta: None,
            extra: crate::acp::Extra::new(),
        });
    }

    /// How the command ended, once it has.
    pub fn exit_status(&self) -> Option<&TerminalExitStatus<'static>> {
        self.exit.as_ref()
    }

    /// Whether output was dropped from the start.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.kept().len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kept output as text: bad sequences as U+FFFD; a character still
    /// missing its last bytes is left out until they come (or shown as
    /// U+FFFD once the command has exited).
    pub fn text(&self) -> Cow<'_, str> {
        let kept = self.kept();
        let held = if self.exit.is_some() {
            0
        } else {
            incomplete_tail(kept)
        };
        let shown = kept.len().checked_sub(held).and_then(|n| kept.get(..n));
        String::from_utf8_lossy(shown.unwrap_or(kept))
    }

    /// The answer to `terminal/output`.
    pub fn response(&self) -> TerminalOutputResponse<'_> {
        TerminalOutputResponse {
            output: self.text(),
            truncated: self.truncated,
            exit_status: self.exit.clone(),
            meta: None,
            extra: crate::acp::Extra::new(),
        }
    }
}

const fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Bytes at the end of `buf` that start a character not yet complete.
fn incomplete_tail(buf: &[u8]) -> usize {
    for (back, &b) in (1..=3).zip(buf.iter().rev()) {
        if is_continuation(b) {
            continue;
        }
        let width = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0,
        };
        return if back < width { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_character_waits_for_its_end() {
        let mut out = TerminalOutput::new(None);
        out.push(&"✓".as_bytes()[..2]);
        assert_eq!(out.text(), "");
        out.push(&"✓".as_bytes()[2..]);
        assert_eq!(out.text(), "✓");
    }

    #[test]
    fn exited_shows_a_dangling_byte_as_replacement() {
        let mut out = TerminalOutput::new(None);
        out.push(&[b'a', 0xE2]);
        assert_eq!(out.text(), "a");
        out.exited(None, Some("SIGKILL".into()));
        assert_eq!(out.text(), "a\u{FFFD}");
    }

    #[test]
    fn a_character_cut_across_reads_is_dropped_whole() {
        // Limit 1: the first read ends inside a 4-byte character (its last
        // kept byte is a continuation, dropped); the next read brings the
        // character's last byte alone, which must be dropped as well.
        let c = "𞹾".as_bytes();
        let mut out = TerminalOutput::new(Some(1));
        out.push(&[b'a', c[0], c[1], c[2]]);
        assert!(out.is_empty());
        out.push(&c[3..]);
        assert!(out.is_empty(), "{:?}", out.text());
        out.push(b"b");
        assert_eq!(out.text(), "b");
    }

    #[test]
    fn limit_zero_keeps_nothing() {
        let mut out = TerminalOutput::new(Some(0));
        out.push(b"abc");
        assert!(out.is_empty() && out.truncated());
    }

    #[test]
    fn with_cap_takes_the_smaller() {
        assert_eq!(TerminalOutput::with_cap(Some(10), 4).limit, Some(4));
        assert_eq!(TerminalOutput::with_cap(None, 4).limit, Some(4));
        assert_eq!(TerminalOutput::with_cap(Some(2), 4).limit, Some(2));
    }
}
