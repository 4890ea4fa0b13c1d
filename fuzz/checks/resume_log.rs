//! The invariant behind the `resume_log` fuzz target
//! (`acp_codec::remote::ResumeLog`, what a server keeps so a client that
//! reconnects resumes), shared with `tests/integration/remote_resume.rs`
//! and `tests/integration/fuzz_corpus.rs`.
//!
//! Input: the first byte sets the budget (`64 + 8 × byte`), then pairs of
//! bytes: an operation (`op % 9`) and its argument. A client follows the
//! stream: what the server pushes while the client is connected reaches
//! it, a disconnect loses what is in flight, a resume hands over what
//! followed the client's last position. The oracle is a plain `Vec` of
//! every message ever pushed. Asserted:
//! - positions are `1, 2, 3, …`, one per push;
//! - a resume yields exactly the messages after the client's position, in
//!   order, with their text, or reports a gap that starts right after it;
//! - a gap is reported only when the messages to hand over, plus the most
//!   owed ones the client had but had not acknowledged since its last
//!   resume, did not fit the budget;
//! - after a gap, what is owed is a subset of the owed messages after the
//!   client's position, in order, with their text;
//! - the client never gets a message twice or out of order, and every
//!   position it skipped lies in a reported gap;
//! - a position ahead of the stream is refused and changes nothing;
//! - the bytes held never exceed the budget;
//! - the [`Ledger`] beside the log (the prompts' answers are owed
//!   messages of the log): a prompt key runs once while the ledger
//!   remembers it, acknowledged or not; at most
//!   [`DEFAULT_MAX_PROMPT_KEYS`] running and as many answered are
//!   remembered, past either the oldest of that kind is forgotten (oracle:
//!   two lists, the keys running in the order they came and those
//!   answered in the order of their answers, the rule applied to them;
//!   eighty keys, so scenarios go past the bound); a retry of an answered
//!   prompt whose answer the log no longer holds is never run (the server
//!   answers `-32012`), and one whose answer it holds gets that text.
use acp_codec::acp::RequestId;
use acp_codec::remote::{
    Admit, Kind, Ledger, Position, PromptKey, ResumeError, ResumeLog, Stream,
    DEFAULT_MAX_PROMPT_KEYS,
};

/// How many prompt ids scenarios use: more than the ledger holds.
pub const PROMPT_IDS: u8 = 80;

/// What a run reached, so a test can show the check is not vacuous.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reached {
    /// Gaps reported.
    pub gaps: usize,
    /// Messages resumes handed over.
    pub replayed: usize,
    /// Prompt keys the ledger had to forget (running or answered, past
    /// its bound).
    pub evicted: usize,
    /// Retries of an answered prompt whose answer the log no longer held
    /// (answered `-32012`, not run).
    pub gone: usize,
}

/// One step of a scenario.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// The server sends a message of `len` bytes of filler.
    Push { owed: bool, len: usize },
    /// The connection breaks: what follows is in flight and lost.
    Disconnect,
    /// The client reconnects and resumes from its last position.
    Resume,
    /// The client acknowledges its last position.
    Ack,
    /// The client names a position past the stream.
    ResumeAhead(u8),
    /// A `session/prompt` with this id arrives.
    Prompt(u8),
    /// One of the prompts running at the agent is answered (an owed
    /// message): the oldest but this many, round the running ones.
    Answer(u8),
}

/// Reads a scenario from fuzz input.
pub fn decode(data: &[u8]) -> (usize, Vec<Op>) {
    let Some((&first, rest)) = data.split_first() else {
        return (64, Vec::new());
    };
    let budget = 64 + 8 * usize::from(first);
    let ops = rest
        .chunks(2)
        .map(|pair| {
            let arg = pair.get(1).copied().unwrap_or(0);
            match pair[0] % 9 {
                0 | 1 => Op::Push {
                    owed: false,
                    len: usize::from(arg),
                },
                2 => Op::Push {
                    owed: true,
                    len: usize::from(arg),
                },
                3 => Op::Disconnect,
                4 => Op::Resume,
                5 => Op::Ack,
                6 => Op::ResumeAhead(arg),
                7 => Op::Prompt(arg % PROMPT_IDS),
                _ => Op::Answer(arg),
            }
        })
        .collect();
    (budget, ops)
}

/// The fuzz target's entry point.
pub fn check(data: &[u8]) {
    let (budget, ops) = decode(data);
    let _ = run(budget, &ops);
}

fn text_of(position: u64, len: usize) -> String {
    format!("{position}:{}", "x".repeat(len))
}

/// Runs `ops` on a log of `budget` bytes and asserts the invariants;
/// what it reached.
pub fn run(budget: usize, ops: &[Op]) -> Reached {
    let mut reached = Reached::default();
    let mut log = ResumeLog::new(budget);
    let mut ledger = Ledger::default();
    // The oracle: every message pushed, by position - 1.
    let mut sent: Vec<(bool, String)> = Vec::new();
    let mut connected = true;
    // What the client has, and what it acknowledged.
    let mut have = 0u64;
    let mut acked = 0u64;
    let mut received: Vec<u64> = Vec::new();
    let mut gaps: Vec<(u64, u64)> = Vec::new();
    // The most bytes of owed messages the client had but had not
    // acknowledged, held since its last resume: they may have taken
    // budget the messages it missed needed.
    let mut pressure = 0usize;
    let owed_held = |sent: &[(bool, String)], acked: u64, have: u64| -> usize {
        sent.iter()
            .enumerate()
            .filter(|(i, (owed, _))| {
                let p = *i as u64 + 1;
                *owed && p > acked && p <= have
            })
            .map(|(_, (_, t))| t.len())
            .sum()
    };
    // The prompt oracle: the keys the ledger keeps running, in the order
    // they came, and answered, in the order of their answers with their
    // answer's position; and the prompts the agent runs.
    let mut prompts: Vec<u8> = Vec::new();
    let mut answers: Vec<(u8, u64)> = Vec::new();
    let mut running: Vec<u8> = Vec::new();
    let key = |n: u8| PromptKey::of(&RequestId::Number(i64::from(n)), None);
    let push = |log: &mut ResumeLog,
                sent: &mut Vec<(bool, String)>,
                owed: bool,
                len: usize,
                connected: bool,
                have: &mut u64,
                received: &mut Vec<u64>| {
        let expected = sent.len() as u64 + 1;
        let text = text_of(expected, len);
        let kind = if owed { Kind::Owed } else { Kind::Plain };
        let position = log.push(kind, &text);
        assert_eq!(position, Position(expected), "positions count the pushes");
        sent.push((owed, text));
        if connected {
            *have = expected;
            received.push(expected);
        }
        position
    };
    for op in ops {
        match *op {
            Op::Push { owed, len } => {
                let _ = push(
                    &mut log,
                    &mut sent,
                    owed,
                    len,
                    connected,
                    &mut have,
                    &mut received,
                );
            }
            Op::Disconnect => connected = false,
            Op::Ack => {
                log.ack(Position(have))
                    .expect("the client's position is sent");
                acked = acked.max(have);
            }
            Op::ResumeAhead(k) => {
                let ahead = sent.len() as u64 + 1 + u64::from(k);
                let bytes = log.bytes();
                let err = log.resume(Position(ahead)).err();
                assert_eq!(
                    err,
                    Some(ResumeError::Ahead {
                        after: Position(ahead),
                        last: Position(sent.len() as u64)
                    })
                );
                assert_eq!(log.bytes(), bytes, "a refused resume changes nothing");
            }
            Op::Resume => {
                let last = sent.len() as u64;
                let owed_held = pressure.max(owed_held(&sent, acked, have));
                let missed: usize = sent
                    .get(usize::try_from(have).unwrap()..)
                    .unwrap()
                    .iter()
                    .map(|(_, t)| t.len())
                    .sum();
                let result = log
                    .resume(Position(have))
                    .map(|replay| replay.map(|(p, t)| (p, t.to_owned())).collect::<Vec<_>>());
                match result {
                    Ok(got) => {
                        let want: Vec<(Position, String)> = (have + 1..=last)
                            .map(|p| (Position(p), sent[p as usize - 1].1.clone()))
                            .collect();
                        assert_eq!(got, want, "a resume after {have} hands over what followed");
                        reached.replayed += got.len();
                        received.extend(got.iter().map(|(p, _)| p.0));
                    }
                    Err(ResumeError::Gap { after, first_kept }) => {
                        assert_eq!(after, Position(have));
                        assert!(first_kept.0 > have + 1 && first_kept.0 <= last + 1);
                        assert!(
                            missed + owed_held > budget,
                            "gap after {have} though {missed} missed + {owed_held} owed bytes fit {budget}"
                        );
                        let owed: Vec<(Position, String)> = log
                            .owed_after(Position(have))
                            .map(|(p, t)| (p, t.to_owned()))
                            .collect();
                        let mut previous = have;
                        for (p, t) in &owed {
                            assert!(p.0 > previous && p.0 < first_kept.0, "owed in order");
                            let (is_owed, text) = &sent[p.0 as usize - 1];
                            assert!(*is_owed && text == t, "owed message {p} is what was sent");
                            previous = p.0;
                        }
                        // The client takes what is owed and the window, and
                        // reloads the rest.
                        received.extend(owed.iter().map(|(p, _)| p.0));
                        received.extend(first_kept.0..=last);
                        gaps.push((have, first_kept.0));
                    }
                    Err(other) => panic!("resume after {have} of {last}: {other}"),
                }
                acked = acked.max(have);
                have = last;
                connected = true;
                pressure = 0;
            }
            Op::Prompt(n) => {
                let answered = answers.iter().rev().find(|(k, _)| *k == n);
                let want = match answered {
                    _ if prompts.contains(&n) => Admit::Running,
                    Some((_, at)) => Admit::Answered(Stream::Connection, Position(*at)),
                    None => Admit::Run,
                };
                let got = ledger.admit(key(n), key(n));
                assert_eq!(got, want, "prompt {n}: {prompts:?} {answers:?}");
                match got {
                    Admit::Run => {
                        if prompts.len() == DEFAULT_MAX_PROMPT_KEYS {
                            prompts.remove(0);
                            reached.evicted += 1;
                        }
                        prompts.push(n);
                        running.retain(|&r| r != n);
                        running.push(n);
                    }
                    Admit::Answered(_, at) => match log.message(at) {
                        // Sent again as it was.
                        Some(text) => assert_eq!(text, sent[at.0 as usize - 1].1),
                        // Gone from the log: `-32012`, never a second run.
                        None => reached.gone += 1,
                    },
                    Admit::Running => {}
                }
            }
            Op::Answer(k) => {
                if !running.is_empty() {
                    let n = running.remove(usize::from(k) % running.len());
                    let at = push(
                        &mut log,
                        &mut sent,
                        true,
                        4,
                        connected,
                        &mut have,
                        &mut received,
                    );
                    ledger.answered(&key(n), &Stream::Connection, at);
                    if let Some(i) = prompts.iter().position(|&p| p == n) {
                        prompts.remove(i);
                        if answers.len() == DEFAULT_MAX_PROMPT_KEYS {
                            answers.remove(0);
                            reached.evicted += 1;
                        }
                        answers.push((n, at.0));
                    }
                }
            }
        }
        assert!(
            log.bytes() <= budget,
            "{} bytes held of {budget}",
            log.bytes()
        );
        pressure = pressure.max(owed_held(&sent, acked, have));
    }
    // Nothing twice, nothing out of order, every skip inside a gap.
    let mut previous = 0u64;
    for &p in &received {
        assert!(
            p > previous,
            "position {p} after {previous}: twice or out of order"
        );
        for skipped in previous + 1..p {
            assert!(
                gaps.iter()
                    .any(|&(after, first)| skipped > after && skipped < first),
                "position {skipped} skipped without a reported gap"
            );
        }
        previous = p;
    }
    reached.gaps = gaps.len();
    reached
}
