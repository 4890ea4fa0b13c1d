//! The one ledger of requests a server remembers, so that a request sent
//! again runs once: used by both profiles (a WebSocket connection's
//! `session/prompt`s, every request of a Streamable HTTP connection).

use alloc::collections::VecDeque;

use super::{Position, PromptKey, DEFAULT_MAX_PROMPT_KEYS};
use crate::remote::transport::Stream;

/// What [`Ledger::admit`] decides for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Admit {
    /// New (or forgotten): run it.
    Run,
    /// The same request is running: do not run it again; its answer will
    /// come on its stream.
    Running,
    /// Already answered, on this stream at this position: send that answer
    /// again while the stream's log holds it, else answer
    /// [`RESUME_GAP`](super::RESUME_GAP) (`-32012`); never run it again.
    Answered(Stream, Position),
}

/// The requests a server ran for one client, so that one sent again (the
/// client did not see its answer) never runs twice.
///
/// A request is known by its id while it runs (its answer names only the
/// id) and by its [`PromptKey`] (the id, or the idempotency key in its
/// `_meta`) for a retry. The rule, one for both profiles:
///
/// - [`admit`](Self::admit) a request: [`Admit::Run`] the first time,
///   [`Admit::Running`] while it runs, [`Admit::Answered`] once
///   [`answered`](Self::answered) records where its answer went;
/// - at most `max` requests answered are remembered, and at most `max`
///   running: past either, the oldest of that kind is forgotten first (a
///   forgotten request sent again runs again). Nothing else forgets: a
///   client's acknowledgement does not (its retry after the answer left
///   the log is told `-32012`, not run).
///
/// ```
/// use acp_codec::acp::RequestId;
/// use acp_codec::remote::{Admit, Ledger, Position, PromptKey, Stream};
///
/// let mut ledger = Ledger::new(1);
/// let id = |n| PromptKey::of(&RequestId::Number(n), None);
/// assert_eq!(ledger.admit(id(1), id(1)), Admit::Run);
/// assert_eq!(ledger.admit(id(1), id(1)), Admit::Running);
/// ledger.answered(&id(1), &Stream::Connection, Position(4));
/// assert_eq!(ledger.admit(id(1), id(1)), Admit::Answered(Stream::Connection, Position(4)));
/// // One answered request is remembered: the second pushes the first out.
/// assert_eq!(ledger.admit(id(2), id(2)), Admit::Run);
/// ledger.answered(&id(2), &Stream::Connection, Position(5));
/// assert_eq!(ledger.admit(id(1), id(1)), Admit::Run);
/// ```
///
/// Memory: at most `2 × max` keys.
#[derive(Debug, Clone)]
pub struct Ledger {
    max: usize,
    /// Admitted and not answered, oldest first: its id, its key.
    running: VecDeque<(PromptKey, PromptKey)>,
    /// Answered, oldest answer first: its key, where the answer went.
    answered: VecDeque<(PromptKey, Stream, Position)>,
    /// Running requests forgotten past the bound, ever.
    forgotten_running: u64,
}

impl Default for Ledger {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PROMPT_KEYS)
    }
}

impl Ledger {
    /// A ledger remembering at most `max` requests answered and `max`
    /// running.
    pub const fn new(max: usize) -> Self {
        Self {
            max,
            running: VecDeque::new(),
            answered: VecDeque::new(),
            forgotten_running: 0,
        }
    }

    /// The bound, per kind (answered, running).
    pub const fn max(&self) -> usize {
        self.max
    }

    /// How many running requests it has forgotten past its bound, ever:
    /// a retry of one of those would run again, so its owner says so when
    /// this grows.
    pub const fn forgotten_running(&self) -> u64 {
        self.forgotten_running
    }

    /// How many requests it remembers, running and answered.
    pub fn len(&self) -> usize {
        self.running.len().saturating_add(self.answered.len())
    }

    /// Whether it remembers none.
    pub fn is_empty(&self) -> bool {
        self.running.is_empty() && self.answered.is_empty()
    }

    /// Decides whether the request `id` with `key` runs: [`Admit::Run`]
    /// records it as running (the owner reports its answer with
    /// [`answered`](Self::answered)).
    pub fn admit(&mut self, id: PromptKey, key: PromptKey) -> Admit {
        if self.running.iter().any(|(_, k)| *k == key) {
            return Admit::Running;
        }
        if let Some((_, stream, at)) = self.answered.iter().rev().find(|(k, _, _)| *k == key) {
            return Admit::Answered(stream.clone(), *at);
        }
        if self.max == 0 {
            return Admit::Run;
        }
        // An id reused while its request runs: the newer key is the one
        // its answer settles.
        self.running.retain(|(i, _)| *i != id);
        if self.running.len() >= self.max && self.running.pop_front().is_some() {
            self.forgotten_running = self.forgotten_running.saturating_add(1);
        }
        self.running.push_back((id, key));
        Admit::Run
    }

    /// The running request `id` was answered on `stream` at `at`; an id
    /// not running is ignored.
    pub fn answered(&mut self, id: &PromptKey, stream: &Stream, at: Position) {
        let Some(index) = self.running.iter().position(|(i, _)| i == id) else {
            return;
        };
        let Some((_, key)) = self.running.remove(index) else {
            return;
        };
        if self.answered.len() >= self.max {
            let _ = self.answered.pop_front();
        }
        self.answered.push_back((key, stream.clone(), at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acp::RequestId;
    use alloc::string::String;
    use alloc::vec::Vec;

    fn key(n: u8) -> PromptKey {
        PromptKey::of(&RequestId::Number(i64::from(n)), None)
    }

    /// The reference: two plain lists, the rule spelled out on them.
    #[derive(Default)]
    struct Model {
        running: Vec<u8>,
        answered: Vec<(u8, u64)>,
    }

    impl Model {
        fn admit(&mut self, n: u8, max: usize) -> Admit {
            if self.running.contains(&n) {
                return Admit::Running;
            }
            if let Some((_, at)) = self.answered.iter().find(|(k, _)| *k == n) {
                return Admit::Answered(Stream::Connection, Position(*at));
            }
            if max > 0 {
                if self.running.len() == max {
                    self.running.remove(0);
                }
                self.running.push(n);
            }
            Admit::Run
        }

        fn answer(&mut self, n: u8, at: u64, max: usize) {
            if let Some(i) = self.running.iter().position(|k| *k == n) {
                self.running.remove(i);
                if self.answered.len() == max {
                    self.answered.remove(0);
                }
                self.answered.push((n, at));
            }
        }
    }

    /// Runs `ops` (even: admit, odd: answer; the key is the rest) on both
    /// and compares every decision.
    fn agree(max: usize, ops: &[u8]) -> Result<(), String> {
        let (mut ledger, mut model) = (Ledger::new(max), Model::default());
        for (i, op) in ops.iter().enumerate() {
            let n = op >> 1;
            if op & 1 == 0 {
                let (got, want) = (ledger.admit(key(n), key(n)), model.admit(n, max));
                if got != want {
                    return Err(alloc::format!("op {i}: admit {n}: {got:?}, want {want:?}"));
                }
            } else {
                let at = u64::try_from(i).unwrap_or(u64::MAX);
                ledger.answered(&key(n), &Stream::Connection, Position(at));
                model.answer(n, at, max);
            }
            if ledger.len() > 2 * max {
                return Err(alloc::format!(
                    "op {i}: {} keys past 2 × {max}",
                    ledger.len()
                ));
            }
        }
        Ok(())
    }

    #[test]
    fn runs_once_and_forgets_the_oldest_answer_past_its_bound() {
        let mut ledger = Ledger::new(2);
        for n in 1..=3 {
            assert_eq!(ledger.admit(key(n), key(n)), Admit::Run);
            ledger.answered(&key(n), &Stream::Session("s".into()), Position(n.into()));
        }
        // 1 went (the oldest answer), 2 and 3 stay.
        assert_eq!(ledger.admit(key(1), key(1)), Admit::Run);
        assert_eq!(
            ledger.admit(key(2), key(2)),
            Admit::Answered(Stream::Session("s".into()), Position(2))
        );
        // An answer for a request not running changes nothing.
        ledger.answered(&key(9), &Stream::Connection, Position(9));
        assert_eq!(ledger.admit(key(9), key(9)), Admit::Run);
        assert_eq!(ledger.admit(key(9), key(9)), Admit::Running);
        // Running ones are bounded too: 1 and 9 run, 4 pushes 1 out.
        assert_eq!(ledger.forgotten_running(), 0);
        assert_eq!(ledger.admit(key(4), key(4)), Admit::Run);
        assert_eq!(ledger.forgotten_running(), 1);
        assert_eq!(ledger.admit(key(1), key(1)), Admit::Run);
        assert_eq!(ledger.forgotten_running(), 2);
        assert_eq!(ledger.len(), 4);
    }

    #[test]
    fn a_key_of_its_own_outlives_the_id() {
        let mut ledger = Ledger::default();
        let params = r#"{"_meta":{"acp-codec/idempotencyKey":"k"}}"#;
        let first = PromptKey::of(&RequestId::Number(3), Some(params));
        let retry = PromptKey::of(&RequestId::Number(9), Some(params));
        assert_eq!(ledger.admit(key(3), first), Admit::Run);
        assert_eq!(ledger.admit(key(9), retry.clone()), Admit::Running);
        // The answer names the first id.
        ledger.answered(&key(9), &Stream::Connection, Position(1));
        assert_eq!(ledger.admit(key(9), retry.clone()), Admit::Running);
        ledger.answered(&key(3), &Stream::Connection, Position(2));
        assert_eq!(
            ledger.admit(key(9), retry),
            Admit::Answered(Stream::Connection, Position(2))
        );
    }

    #[test]
    fn agrees_with_the_model_past_its_bound() {
        // Every admit and answer of 6 keys, at bounds 0 to 3, in a fixed
        // pseudo-random order long enough to pass each bound many times.
        let mut state = 0x9e37_79b9_u32;
        let ops: Vec<u8> = (0..2000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                u8::try_from(state % 12).unwrap_or(0)
            })
            .collect();
        for max in 0..=3 {
            assert_eq!(agree(max, &ops), Ok(()), "bound {max}");
        }
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn agrees_with_the_model(max in 0usize..5, ops in proptest::collection::vec(0u8..24, 0..300)) {
                prop_assert_eq!(agree(max, &ops), Ok(()));
            }
        }
    }
}
