//! The invariant behind the `version` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: one line of arbitrary bytes, taken as a client's first line and
//! as `initialize` params or result text. Asserted:
//! - a `Negotiator` of each set of dialects never panics; an `initialize`
//!   it accepts chose the highest dialect spoken at or below the version
//!   asked (a reference written here as a downward count), and the same
//!   line again is accepted as a repeat; a refusal carries one of the
//!   codes the rules name (-32700, -32600, -32602, -32022), and the state
//!   is unchanged after it;
//! - `rewrite_initialize`, for each side and each pair of dialects: when
//!   it succeeds, the text is a JSON object (as `serde_json` reads it),
//!   the result is the same object with the role names renamed and
//!   `protocolVersion` set (compared as `serde_json::Value`s); rewriting
//!   back gives the input's object again (its `protocolVersion` set), and
//!   a second round the same text as the first; when the input has no
//!   escape and no `protocolVersion`, the way back gives it byte for byte;
//!   when it fails with `Taken`, the object does hold that name.

use acp_codec::acp::Side;
use acp_codec::version::{rewrite_initialize, Dialect, Negotiator, Step, VersionError};
use serde_json::Value;

/// The subsets of the dialects, each a list.
const SPOKEN: [&[Dialect]; 4] = [
    &[],
    &[Dialect::V1],
    &[Dialect::V2],
    &[Dialect::V1, Dialect::V2],
];

/// The reference choice: counting down from `asked`.
fn reference(spoken: &[Dialect], asked: u16) -> Option<Dialect> {
    (0..=asked)
        .rev()
        .find_map(|v| spoken.iter().copied().find(|d| d.version() == v))
}

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for spoken in SPOKEN {
        negotiate(spoken, text);
    }
    for side in [Side::Client, Side::Agent] {
        for from in Dialect::ALL {
            for to in Dialect::ALL {
                rewrite(text, side, from, to);
            }
        }
    }
}

fn negotiate(spoken: &[Dialect], line: &str) {
    let mut negotiator = Negotiator::new(spoken);
    match negotiator.handle_line(line) {
        Step::Initialize(init) => {
            assert_eq!(Some(init.dialect), reference(spoken, init.asked));
            assert_eq!(negotiator.dialect(), Some(init.dialect));
            assert!(!init.repeated);
            assert_eq!(init.written_as, Dialect::written_by(init.asked));
            match negotiator.handle_line(line) {
                Step::Initialize(again) => {
                    assert!(again.repeated);
                    assert_eq!(again.dialect, init.dialect);
                }
                other => panic!("a repeat of an accepted initialize gave {other:?}"),
            }
        }
        Step::Refuse { error, .. } => {
            assert!(
                [-32700, -32600, -32602, -32022].contains(&error.code.0),
                "refused with {}",
                error.code
            );
            assert_eq!(negotiator.dialect(), None);
        }
        Step::Ignore => assert_eq!(negotiator.dialect(), None),
        Step::Pass { .. } => panic!("passed a line before initialize"),
        _ => {}
    }
}

fn rewrite(text: &str, side: Side, from: Dialect, to: Dialect) {
    let mut out = String::from("kept");
    let result = rewrite_initialize(text, side, from, to, &mut out);
    let Ok(()) = result else {
        assert_eq!(out, "kept", "a failed rewrite left output behind");
        if let Err(VersionError::Taken { name }) = result {
            // The walk stops at the name: what follows may not be JSON.
            if let Ok(value) = serde_json::from_str::<Value>(text) {
                assert!(value.get(name).is_some(), "taken {name}, not in {text}");
            }
        }
        return;
    };
    let rewritten = out
        .strip_prefix("kept")
        .expect("the output's start was changed");
    let Ok(input) = serde_json::from_str::<Value>(text) else {
        // JSON a `Value` cannot hold (a lone surrogate, a number past
        // `f64`, serde_json's own raw-value key): judged on the grammar.
        match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => return,
            // The crate's nesting limit counts from the object's members.
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => return,
            Err(e) => panic!("rewritten, but not json ({e}): {text}"),
        }
    };
    let Value::Object(mut expected) = input else {
        panic!("rewritten, but not an object: {text}");
    };
    for (old, new) in names(from, side).into_iter().zip(names(to, side)) {
        if let Some(v) = expected.remove(old) {
            expected.insert(new.to_owned(), v);
        }
    }
    if let Some(v) = expected.get_mut("protocolVersion") {
        *v = Value::from(to.version());
    }
    let got: Value = serde_json::from_str(rewritten).expect("rewritten text is not json");
    assert_eq!(
        got,
        Value::Object(expected.clone()),
        "{text} rewritten as {rewritten}"
    );
    // And back: the same object again, then the same text again.
    let mut back = String::new();
    rewrite_initialize(rewritten, side, to, from, &mut back).expect("no rewrite back");
    let Value::Object(mut original) = serde_json::from_str(text).expect("json above") else {
        unreachable!()
    };
    if let Some(v) = original.get_mut("protocolVersion") {
        *v = Value::from(from.version());
    }
    let back_value: Value = serde_json::from_str(&back).expect("rewritten back is not json");
    assert_eq!(
        back_value,
        Value::Object(original),
        "{text} rewritten back as {back}"
    );
    let mut again = String::new();
    rewrite_initialize(&back, side, from, to, &mut again).expect("no second rewrite");
    assert_eq!(again, rewritten, "not stable after one round");
    // Byte for byte where nothing but the names changed.
    if !text.contains('\\') && !text.contains("protocolVersion") {
        assert_eq!(back, text, "rewritten as {rewritten}");
    }
}

/// The role-specific names of `side` in `dialect`, written out here.
fn names(dialect: Dialect, side: Side) -> [&'static str; 2] {
    match (dialect, side) {
        (Dialect::V1, Side::Client) => ["clientCapabilities", "clientInfo"],
        (Dialect::V1, Side::Agent) => ["agentCapabilities", "agentInfo"],
        _ => ["capabilities", "info"],
    }
}
