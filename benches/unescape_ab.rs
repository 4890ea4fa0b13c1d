//! The crate's two string unescapers timed against each other in one
//! process: the target's (`fuzzing::unescape_string`, the block loop where
//! the target has vector registers, dense text through its stage) and the
//! portable word loop
//! (`fuzzing::unescape_string_portable`), over the peers' long escaped
//! strings (those of the `acp/long escaped strings` group of
//! `benches/acp_traffic.rs`), with `serde_json` reading the same strings
//! as the anchor. Blocks of passes of each alternate, so that a busy
//! machine slows all three alike; the best and the median block of each
//! are printed, in microseconds a pass.
//!
//!     cargo bench --features arbitrary --bench unescape_ab -- 40
//!
//! (the number of blocks of each; without one, as `cargo bench` and
//! `cargo test` run it, it only checks that all three read the same
//! text). With `each`, every string
//! alone against `serde_json`; with `matrix`, the strings of the escape
//! matrix of `benches/acp_traffic.rs` through both unescapers and
//! `serde_json`, in nanoseconds an escape.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use acp_codec::fuzzing::{unescape_string, unescape_string_portable};

#[path = "support/escape_matrix.rs"]
mod escape_matrix;
#[path = "support/real_traffic.rs"]
mod real_traffic;

/// A way of reading a string token, by name: the length of its text.
type Way = (&'static str, fn(&str) -> usize);

/// Passes over the strings in a block.
const PASSES: u32 = 20;

fn main() {
    let rows = real_traffic::rows(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions"
    )));
    let tokens = real_traffic::long_escaped_strings(&rows);
    for token in &tokens {
        let want: String = serde_json::from_str(token).unwrap();
        let end = Ok((want, token.len()));
        assert_eq!(unescape_string(token, 1), end);
        assert_eq!(unescape_string_portable(token, 1), end);
    }
    if std::env::args().any(|a| a == "each") {
        each(&tokens);
        return;
    }
    if std::env::args().any(|a| a == "matrix") {
        matrix();
        return;
    }
    let Some(blocks) = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
    else {
        // `cargo bench` and `cargo test` without a count: the check alone.
        println!("{} strings read alike by all three", tokens.len());
        return;
    };
    let ways: [Way; 3] = [
        ("target's unescaper", |t| {
            unescape_string(t, 1).unwrap().0.len()
        }),
        ("portable unescaper", |t| {
            unescape_string_portable(t, 1).unwrap().0.len()
        }),
        ("serde_json String", |t| {
            serde_json::from_str::<String>(t).unwrap().len()
        }),
    ];
    let mut times = vec![Vec::new(); ways.len()];
    for _ in 0..blocks {
        for ((_, way), times) in ways.iter().zip(&mut times) {
            let start = Instant::now();
            for _ in 0..PASSES {
                for token in &tokens {
                    black_box(way(black_box(token)));
                }
            }
            times.push(start.elapsed().as_secs_f64() * 1e6 / f64::from(PASSES));
        }
    }
    let bytes: usize = tokens.iter().map(String::len).sum();
    println!(
        "{} strings, {bytes} bytes; {blocks} blocks of {PASSES} passes each",
        tokens.len()
    );
    let anchor = {
        let mut t = times[2].clone();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    for ((name, _), mut t) in ways.iter().zip(times) {
        t.sort_by(f64::total_cmp);
        let median = t[t.len() / 2];
        println!(
            "{name:20} best {:8.1} µs  median {median:8.1} µs  ({:.2}x serde_json's median)",
            t[0],
            anchor / median
        );
    }
}

/// `each`: every string alone, the target's unescaper against
/// `serde_json`, best of 30 blocks of 20 passes.
fn each(tokens: &[String]) {
    for token in tokens {
        let (mut ours, mut theirs) = (f64::MAX, f64::MAX);
        for _ in 0..30 {
            let start = Instant::now();
            for _ in 0..PASSES {
                black_box(unescape_string(black_box(token), 1).unwrap());
            }
            ours = ours.min(start.elapsed().as_secs_f64());
            let start = Instant::now();
            for _ in 0..PASSES {
                black_box(serde_json::from_str::<String>(black_box(token)).unwrap());
            }
            theirs = theirs.min(start.elapsed().as_secs_f64());
        }
        let us = |t: f64| t * 1e6 / f64::from(PASSES);
        println!(
            "{:7} bytes {:6} escapes: {:8.2} µs against {:8.2} µs, {:.2}x",
            token.len(),
            token.matches('\\').count(),
            us(ours),
            us(theirs),
            theirs / ours
        );
    }
}

/// `matrix`: each string of the escape matrix through the target's
/// unescaper, the portable one and `serde_json`, best of 30 blocks of 20
/// passes each, in nanoseconds an escape.
fn matrix() {
    use escape_matrix::{escape_matrix_token, MATRIX_ESCAPES};
    println!("gap script positions: target's, portable, serde_json (ns an escape)");
    for gap in [3, 8, 40, 200] {
        for cjk in [false, true] {
            for irregular in [false, true] {
                let token = escape_matrix_token(gap, cjk, irregular);
                let ways: [fn(&str) -> usize; 3] = [
                    |t| unescape_string(t, 1).unwrap().0.len(),
                    |t| unescape_string_portable(t, 1).unwrap().0.len(),
                    |t| serde_json::from_str::<String>(t).unwrap().len(),
                ];
                let mut best = [f64::MAX; 3];
                for _ in 0..30 {
                    for (way, best) in ways.iter().zip(&mut best) {
                        let start = Instant::now();
                        for _ in 0..PASSES {
                            black_box(way(black_box(&token)));
                        }
                        *best = best.min(start.elapsed().as_secs_f64());
                    }
                }
                let ns = |t: f64| t * 1e9 / f64::from(PASSES) / MATRIX_ESCAPES as f64;
                println!(
                    "{gap:3} {:5} {:9}: {:6.2} {:6.2} {:6.2}",
                    if cjk { "cjk" } else { "ascii" },
                    if irregular { "irregular" } else { "regular" },
                    ns(best[0]),
                    ns(best[1]),
                    ns(best[2])
                );
            }
        }
    }
}
