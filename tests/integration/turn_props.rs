//! Properties of the turn view: however notifications are split across
//! turns, no text is lost (every chunk comes back whole as a delta, and
//! what the view retains plus what it reports dropped is the whole input);
//! the limits hold.
#![cfg(feature = "std")]

use std::collections::BTreeMap;

use acp_codec::acp::SessionNotification;
use acp_codec::turn::{MessageKind, TurnEvent, TurnLimits, TurnView};
use acp_codec::{TurnError, TurnLimit};
use proptest::prelude::*;

const KINDS: [&str; 3] = [
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
];
const IDS: [Option<&str>; 3] = [None, Some("m1"), Some("m-ü")];

#[derive(Debug, Clone)]
struct Chunk {
    kind: usize,
    id: Option<&'static str>,
    text: String,
    /// `begin_turn` before this chunk.
    begin: bool,
}

fn chunks() -> impl Strategy<Value = Vec<Chunk>> {
    prop::collection::vec(
        (
            0..3usize,
            0..3usize,
            "\\PC{0,12}",
            prop::bool::weighted(0.2),
        )
            .prop_map(|(kind, id, text, begin)| Chunk {
                kind,
                id: IDS[id],
                text,
                begin,
            }),
        0..60,
    )
}

fn line(c: &Chunk) -> String {
    let mut u = serde_json::json!({
        "sessionUpdate": KINDS[c.kind],
        "content": {"type": "text", "text": c.text},
    });
    if let Some(id) = c.id {
        u["messageId"] = id.into();
    }
    serde_json::json!({"sessionId": "s", "update": u}).to_string()
}

fn kind_index(kind: MessageKind) -> usize {
    match kind {
        MessageKind::User => 0,
        MessageKind::Agent => 1,
        MessageKind::Thought => 2,
    }
}

/// Feeds the chunks; checks every push; returns the concatenated deltas per
/// kind.
fn feed(limits: TurnLimits, chunks: &[Chunk]) -> [String; 3] {
    let mut view = TurnView::new(limits);
    let mut deltas: [String; 3] = Default::default();
    // The retained length of each (kind, id) message of the current turn.
    let mut retained: BTreeMap<(usize, Option<&str>), usize> = BTreeMap::new();
    for c in chunks {
        if c.begin {
            view.begin_turn();
            retained.clear();
        }
        let text = line(c);
        let n: SessionNotification<'_> = serde_json::from_str(&text).unwrap();
        let events: Vec<TurnEvent<'_>> = view.push_update(&n).collect();
        let mut dropped = 0;
        let mut problems = 0;
        for e in &events {
            if let TurnEvent::Problem(p) = e {
                problems += 1;
                if let TurnError::LimitExceeded {
                    limit: TurnLimit::TextBytes,
                    dropped: d,
                    ..
                } = p.error
                {
                    dropped += d;
                }
            }
        }
        let delta: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                TurnEvent::TextDelta {
                    kind,
                    text,
                    message,
                    ..
                } => Some((*kind, *text, *message)),
                TurnEvent::ThoughtDelta { text, message, .. } => {
                    Some((MessageKind::Thought, *text, *message))
                }
                _ => None,
            })
            .collect();
        assert_eq!(delta.len(), 1, "{events:?}");
        let (kind, text, message) = delta[0];
        assert_eq!(kind_index(kind), c.kind);
        assert_eq!(text, c.text);
        deltas[c.kind].push_str(text);
        match message {
            None => assert!(problems > 0, "a chunk not retained must be reported"),
            Some(m) => {
                assert_eq!(m.id(), c.id);
                let before = retained.get(&(c.kind, c.id)).copied().unwrap_or(0);
                let growth = m.text().len() - before;
                assert_eq!(growth + dropped, c.text.len(), "kept + reported = chunk");
                assert!(m.text().ends_with(&c.text[..growth]));
                retained.insert((c.kind, c.id), m.text().len());
            }
        }
        assert!(view.text_bytes() <= limits.max_text_bytes);
        assert!(view.messages().len() + view.thoughts().len() <= limits.max_messages);
    }
    deltas
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// With the default limits the view retains every chunk: each message
    /// of a turn is the concatenation of that turn's chunks with its kind
    /// and id, and the deltas are the input.
    #[test]
    fn split_across_turns_never_loses_text(chunks in chunks()) {
        let deltas = feed(TurnLimits::default(), &chunks);
        let mut want: [String; 3] = Default::default();
        for c in &chunks {
            want[c.kind].push_str(&c.text);
        }
        prop_assert_eq!(deltas, want);

        // Per turn: the retained messages equal the turn's chunks.
        let mut view = TurnView::default();
        let mut turn: BTreeMap<(usize, Option<&str>), String> = BTreeMap::new();
        let check = |view: &TurnView, turn: &BTreeMap<(usize, Option<&str>), String>| {
            let mut got = BTreeMap::new();
            for m in view.messages().iter().chain(view.thoughts()) {
                assert_eq!(m.dropped_bytes(), 0);
                got.insert((kind_index(m.kind()), m.id()), m.text().to_owned());
            }
            assert_eq!(&got, turn);
        };
        for c in &chunks {
            if c.begin {
                check(&view, &turn);
                view.begin_turn();
                turn.clear();
            }
            let text = line(c);
            let n: SessionNotification<'_> = serde_json::from_str(&text).unwrap();
            let _ = view.push_update(&n);
            turn.entry((c.kind, c.id)).or_default().push_str(&c.text);
        }
        check(&view, &turn);
    }

    /// With small limits, deltas are still whole, and what is not retained
    /// is reported (checked push by push in `feed`).
    #[test]
    fn limits_report_what_they_drop(
        chunks in chunks(),
        max_text in 0..64usize,
        max_messages in 0..4usize,
    ) {
        let limits = TurnLimits::default()
            .with_max_text_bytes(max_text)
            .with_max_messages(max_messages);
        let deltas = feed(limits, &chunks);
        let mut want: [String; 3] = Default::default();
        for c in &chunks {
            want[c.kind].push_str(&c.text);
        }
        prop_assert_eq!(deltas, want);
    }
}
