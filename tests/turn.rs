//! The turn view through its public API: recorded sessions replayed into
//! their expected event sequences (`tests/turn_golden/<session>.txt`), and
//! table tests for the rules.
//!
//! `UPDATE_TURN_GOLDEN=1 cargo test --test turn` rewrites the golden files;
//! review the diff before committing it.
#![cfg(feature = "std")]

mod turn_support;

use std::path::PathBuf;

use acp_codec::turn::TurnLimits;
use turn_support::{transcript, Driver};

fn sessions_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions")
}

fn replay(name: &str) -> Driver {
    let text =
        std::fs::read_to_string(sessions_dir().join(name).join("transcript.ndjson")).unwrap();
    let mut d = Driver::new(TurnLimits::default());
    for (from, line) in transcript(&text) {
        d.feed(&from, &line);
    }
    d
}

fn golden(name: &str, d: &Driver) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/turn_golden")
        .join(format!("{name}.txt"));
    let got = d.log.join("\n") + "\n";
    if std::env::var_os("UPDATE_TURN_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_TURN_GOLDEN=1 writes it)", path.display()));
    assert_eq!(got, want, "{name}: events differ from {}", path.display());
}

#[test]
fn gemini_turn() {
    let name = "gemini-cli-0.61.0-acp-turn";
    let d = replay(name);
    golden(name, &d);
}

#[test]
fn ts_sdk_example_agent() {
    let name = "ts-sdk-1.9.0-example-agent";
    let d = replay(name);
    golden(name, &d);
}
