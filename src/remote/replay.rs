//! What a session missed while no client held it, bounded in bytes: one
//! [`ResumeLog`] per session (the one byte-bounded log of what a server
//! sent), for clients that did not ask for positions.

use alloc::borrow::ToOwned;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::resume::{Kind, Position, ResumeLog, DEFAULT_RESUME_BUDGET};
use crate::tally::Tally;

/// The default most sessions buffered at once: 64.
pub const DEFAULT_MAX_REPLAY_SESSIONS: usize = 64;

/// Messages and bytes a [`ReplayBuffer`] dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Dropped {
    /// How many messages.
    pub messages: u64,
    /// Their bytes of text.
    pub bytes: u64,
}

impl Dropped {
    fn add(&mut self, bytes: usize) {
        self.messages = self.messages.saturating_add(1);
        self.bytes = self
            .bytes
            .saturating_add(u64::try_from(bytes).unwrap_or(u64::MAX));
    }
}

/// What [`ReplayBuffer::take`] hands over for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct Replay {
    /// The messages kept, oldest first.
    pub messages: Vec<String>,
    /// What was dropped to stay within the budget (always older than what
    /// was kept, or a single message larger than the budget).
    pub dropped: Dropped,
}

#[derive(Debug)]
struct Missed {
    /// What was kept: the oldest pushed out first, as the budget needs.
    log: ResumeLog,
    dropped: Dropped,
}

/// A byte-bounded buffer of the messages each session missed, so a client
/// that reconnects and reattaches the session (`session/load`,
/// `session/resume`) gets them. Each session's messages are kept in a
/// [`ResumeLog`] (the log a client that asked for positions resumes
/// from), without positions on the wire.
///
/// Each session holds at most `budget` bytes of message text: a message
/// that does not fit pushes out the oldest ones first, and one larger than
/// the whole budget is dropped itself. What was dropped is counted and
/// reported with the rest ([`Replay::dropped`]). At most `max_sessions`
/// sessions are buffered; a message for one more is dropped (reported by
/// [`push`](Self::push) only, as that session has no entry). Memory is
/// thus bounded by about `budget × max_sessions` plus a small overhead per
/// message.
///
/// ```
/// use acp_codec::remote::parts::{Dropped, ReplayBuffer};
///
/// let mut replay = ReplayBuffer::new(10);
/// assert_eq!(replay.push("s1", "aaaa"), Dropped::default());
/// assert_eq!(replay.push("s1", "bbbb"), Dropped::default());
/// // 4 + 4 + 4 > 10: the oldest goes.
/// assert_eq!(replay.push("s1", "cccc"), Dropped { messages: 1, bytes: 4 });
/// let missed = replay.take("s1");
/// assert_eq!(missed.messages, ["bbbb", "cccc"]);
/// assert_eq!(missed.dropped, Dropped { messages: 1, bytes: 4 });
/// // Taken: nothing is left for the session.
/// assert!(replay.take("s1").messages.is_empty());
/// ```
#[derive(Debug)]
pub struct ReplayBuffer {
    budget: usize,
    max_sessions: usize,
    bytes: Tally,
    sessions: BTreeMap<String, Missed>,
}

impl Default for ReplayBuffer {
    fn default() -> Self {
        Self::new(DEFAULT_RESUME_BUDGET)
    }
}

impl ReplayBuffer {
    /// A buffer keeping at most `budget` bytes of text per session, for at
    /// most [`DEFAULT_MAX_REPLAY_SESSIONS`] sessions.
    pub const fn new(budget: usize) -> Self {
        Self {
            budget,
            max_sessions: DEFAULT_MAX_REPLAY_SESSIONS,
            bytes: Tally::holding(0),
            sessions: BTreeMap::new(),
        }
    }

    /// Sets the most sessions buffered at once.
    #[must_use]
    pub const fn with_max_sessions(mut self, limit: usize) -> Self {
        self.max_sessions = limit;
        self
    }

    /// The per-session budget, in bytes.
    pub const fn budget(&self) -> usize {
        self.budget
    }

    /// The most sessions buffered at once.
    pub const fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Bytes of text held, all sessions together.
    pub const fn bytes(&self) -> usize {
        self.bytes.get()
    }

    /// How many sessions have something buffered (or something dropped to
    /// report).
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Keeps `message` for `session`, dropping its oldest messages as
    /// needed to stay within the budget; returns what this call dropped
    /// (older messages, or `message` itself when it is larger than the
    /// budget or the session limit is reached).
    pub fn push(&mut self, session: &str, message: &str) -> Dropped {
        let mut dropped = Dropped::default();
        let len = message.len();
        if !self.sessions.contains_key(session) && self.sessions.len() >= self.max_sessions {
            dropped.add(len);
            return dropped;
        }
        let budget = self.budget;
        let missed = self
            .sessions
            .entry(session.into())
            .or_insert_with(|| Missed {
                log: ResumeLog::new(budget),
                dropped: Dropped::default(),
            });
        if len > self.budget {
            // Dropped alone: what was kept before it stays.
            dropped.add(len);
            missed.dropped.add(len);
            return dropped;
        }
        // `len` fits the budget: the log pushes the oldest out until it
        // fits beside them.
        let (bytes, first) = (missed.log.bytes(), missed.log.first_kept());
        let _ = missed.log.push(Kind::Plain, message);
        let evicted = bytes.saturating_add(len).saturating_sub(missed.log.bytes());
        let count = missed.log.first_kept().0.saturating_sub(first.0);
        dropped.messages = dropped.messages.saturating_add(count);
        missed.dropped.messages = missed.dropped.messages.saturating_add(count);
        let evicted_bytes = u64::try_from(evicted).unwrap_or(u64::MAX);
        dropped.bytes = dropped.bytes.saturating_add(evicted_bytes);
        missed.dropped.bytes = missed.dropped.bytes.saturating_add(evicted_bytes);
        self.bytes.add(len);
        self.bytes.release(evicted);
        dropped
    }

    /// Hands over what `session` missed and forgets it.
    pub fn take(&mut self, session: &str) -> Replay {
        let Some(mut missed) = self.sessions.remove(session) else {
            return Replay::default();
        };
        self.bytes.release(missed.log.bytes());
        // Everything the log still holds: what follows the last position
        // pushed out.
        let before = Position(missed.log.first_kept().0.saturating_sub(1));
        let messages = match missed.log.resume(before) {
            Ok(kept) => kept.map(|(_, text)| text.to_owned()).collect(),
            Err(_) => Vec::new(),
        };
        Replay {
            messages,
            dropped: missed.dropped,
        }
    }

    /// Forgets what `session` missed (the session is gone for good).
    pub fn discard(&mut self, session: &str) {
        let _ = self.take(session);
    }

    /// Forgets every session (the agent exited).
    pub fn clear(&mut self) {
        self.sessions.clear();
        self.bytes = Tally::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_follow_every_path() {
        let mut r = ReplayBuffer::new(8).with_max_sessions(2);
        let _ = r.push("a", "1234");
        let _ = r.push("b", "12");
        assert_eq!(r.bytes(), 6);
        // Too big for the budget: dropped alone, the rest stays.
        assert_eq!(
            r.push("a", "123456789"),
            Dropped {
                messages: 1,
                bytes: 9
            }
        );
        assert_eq!(r.bytes(), 6);
        // Evicts the oldest of "a" only.
        assert_eq!(
            r.push("a", "12345"),
            Dropped {
                messages: 1,
                bytes: 4
            }
        );
        assert_eq!(
            (r.bytes(), r.sessions.get("a").map(|m| m.log.bytes())),
            (7, Some(5))
        );
        let a = r.take("a");
        assert_eq!(
            a.dropped,
            Dropped {
                messages: 2,
                bytes: 13
            }
        );
        assert_eq!(r.bytes(), 2);
        // An empty message fits any budget, even zero.
        let mut z = ReplayBuffer::new(0);
        assert_eq!(z.push("s", ""), Dropped::default());
        assert_eq!(
            z.push("s", "x"),
            Dropped {
                messages: 1,
                bytes: 1
            }
        );
        assert_eq!(z.take("s").messages, [""]);
    }
}
