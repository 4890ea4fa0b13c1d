//! The real-traffic rows of `traffic.rs` timed the way `unescape_ab`
//! times the unescapers: `acp::decode_line` and the official types in one
//! process, blocks of passes of each alternating, so that a busy or
//! drifting machine slows both alike; per row the best and the median
//! block of each, and the ratio of the medians (the official crate's
//! time over ours).
//!
//!     cd benches/official && cargo bench --bench traffic_ab -- 40
//!     cargo bench --bench traffic_ab -- 40 write_text_file read_text_file
//!
//! The number is the blocks of each; words after it keep the rows whose
//! name contains one of them. Without a number (as `cargo bench` and
//! `cargo test` run it) it only checks that both read every line.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

mod decode;
#[path = "../support/real_traffic.rs"]
mod real_traffic;

use decode::official;
use real_traffic::Row;

/// Passes over a row's lines in a block.
const PASSES: u32 = 10;

fn main() {
    let rows = real_traffic::rows(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/sessions"
    )));
    for row in &rows {
        for (line, tracker) in row.each() {
            assert!(real_traffic::acp_codec(row.kind, line, tracker), "{line}");
        }
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(blocks) = args.iter().find_map(|a| a.parse::<usize>().ok()) else {
        println!("{} rows read by acp_codec", rows.len());
        return;
    };
    let words: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-') && a.parse::<usize>().is_err())
        .map(String::as_str)
        .collect();
    println!("{blocks} blocks of {PASSES} passes each, alternating; µs a pass");
    for row in &rows {
        if !words.is_empty() && !words.iter().any(|w| row.name.contains(w)) {
            continue;
        }
        let (ours, theirs) = time(row, blocks);
        println!(
            "{:45} acp_codec best {:9.1} median {:9.1} | official best {:9.1} median {:9.1} | {:.2}x (medians) {:.2}x (bests)",
            row.name,
            ours[0],
            median(&ours),
            theirs[0],
            median(&theirs),
            median(&theirs) / median(&ours),
            theirs[0] / ours[0]
        );
    }
}

/// Each way's block times (µs a pass), sorted.
fn time(row: &Row, blocks: usize) -> (Vec<f64>, Vec<f64>) {
    let kind = row.kind;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..blocks {
        let start = Instant::now();
        for _ in 0..PASSES {
            for (line, tracker) in row.each() {
                black_box(real_traffic::acp_codec(kind, black_box(line), tracker));
            }
        }
        ours.push(start.elapsed().as_secs_f64() * 1e6 / f64::from(PASSES));
        let start = Instant::now();
        for _ in 0..PASSES {
            for line in &row.lines {
                black_box(official(kind, black_box(line)));
            }
        }
        theirs.push(start.elapsed().as_secs_f64() * 1e6 / f64::from(PASSES));
    }
    ours.sort_by(f64::total_cmp);
    theirs.sort_by(f64::total_cmp);
    (ours, theirs)
}

fn median(sorted: &[f64]) -> f64 {
    sorted[sorted.len() / 2]
}
