//! A fixed amount of unescaping to count instructions by (callgrind), not
//! a timing: the peers' long escaped strings (those of the
//! `acp/long escaped strings` group of `benches/acp_traffic.rs`), each the
//! text of a chunk decoded by `acp::decode_line`, or each read alone into
//! a `String` by `serde_json` (the anchor), a given number of passes.
//!
//!     cargo bench --bench unescape_count --no-run
//!     B=$(ls -t target/release/deps/unescape_count-* | grep -v '\.d$' | head -1)
//!     valgrind --tool=callgrind --toggle-collect='*pass_acp_codec*' $B acp_codec 3
//!     valgrind --tool=callgrind --toggle-collect='*pass_serde_json*' $B serde_json 3
//!
//! Each prints the instructions of its passes; add `--branch-sim=yes` for
//! the branches a simple predictor would miss. Without arguments (as
//! `cargo bench` runs it) it makes one pass of each and checks that both
//! read the same text.

use std::hint::black_box;
use std::path::Path;

#[path = "support/acp_fixtures.rs"]
mod fixtures;
#[path = "support/real_traffic.rs"]
mod real_traffic;

/// One pass of ours: every string as a chunk's text, its length summed.
#[inline(never)]
fn pass_acp_codec(lines: &[String]) -> usize {
    lines
        .iter()
        .map(|line| fixtures::decode_line_chunk_text(black_box(line)))
        .sum()
}

/// One pass of the anchor: every string read alone into a `String`.
#[inline(never)]
fn pass_serde_json(tokens: &[String]) -> usize {
    tokens
        .iter()
        .map(|token| {
            let text: String = serde_json::from_str(black_box(token)).unwrap();
            black_box(text).len()
        })
        .sum()
}

fn main() {
    let rows = real_traffic::rows(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions"
    )));
    let tokens = real_traffic::long_escaped_strings(&rows);
    let lines: Vec<String> = tokens.iter().map(|t| fixtures::chunk_line_of(t)).collect();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let passes: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1);
    let (ours, anchor) = match args.first().map(String::as_str) {
        Some("acp_codec") => (passes, 0),
        Some("serde_json") => (0, passes),
        // `cargo bench` passes `--bench`: one pass of each.
        _ => (1, 1),
    };
    let (mut read, mut want) = (0, 0);
    for _ in 0..ours {
        read = pass_acp_codec(&lines);
    }
    for _ in 0..anchor {
        want = pass_serde_json(&tokens);
    }
    if ours > 0 && anchor > 0 {
        assert_eq!(read, want, "both read the same text");
    }
    let bytes: usize = tokens.iter().map(String::len).sum();
    println!(
        "{} strings, {bytes} bytes: {ours} passes of acp_codec, {anchor} of serde_json",
        tokens.len()
    );
}
