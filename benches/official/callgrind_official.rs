//! Instruction counts of the recorded real traffic, ours against the
//! official types: for each row of `traffic.rs`, the row's lines decoded
//! into the official `agent-client-protocol-schema` types, then with
//! `acp::decode_line` (as `traffic.rs` times them).
//!
//! Not a criterion bench: a program for callgrind, whose counts do not
//! depend on the machine's load (`scripts/callgrind_rows.sh --official`
//! builds it, runs it under valgrind collecting only inside [`counted`],
//! one dump per call, and prints each row's two counts and their ratio).
//! Run alone (as `cargo bench` does), it decodes every row once both ways
//! and checks both take every line; given an argument, only the rows whose
//! name contains it.

use std::hint::black_box;
use std::path::Path;

mod decode;
#[path = "../support/real_traffic.rs"]
mod real_traffic;

use decode::official;
use real_traffic::Row;

/// Runs `job`: the one function callgrind counts in (the name the script
/// gives `--toggle-collect` and `--dump-after`).
#[inline(never)]
fn counted(job: &mut dyn FnMut() -> usize) -> usize {
    job()
}

/// The row's lines into the official types: how many it took.
#[inline(never)]
fn official_row(row: &Row) -> usize {
    row.lines
        .iter()
        .filter(|line| official(row.kind, black_box(line)))
        .count()
}

/// The row's lines through `acp::decode_line`: how many came back typed.
#[inline(never)]
fn acp_codec_row(row: &Row) -> usize {
    row.each()
        .filter(|(line, tracker)| real_traffic::acp_codec(row.kind, black_box(line), tracker))
        .count()
}

fn main() {
    let rows = real_traffic::rows(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/sessions"
    )));
    let only = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    for row in rows
        .iter()
        .filter(|row| only.as_deref().is_none_or(|o| row.name.contains(o)))
    {
        // The row's name first: the counts' dumps come in this order.
        println!("{}\t{}", row.name, row.lines.len());
        assert_eq!(
            counted(&mut || official_row(row)),
            row.lines.len(),
            "{}",
            row.name
        );
        assert_eq!(
            counted(&mut || acp_codec_row(row)),
            row.lines.len(),
            "{}",
            row.name
        );
    }
}
