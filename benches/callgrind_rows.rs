//! Instruction counts of the recorded real traffic, row by row: each row of
//! `benches/acp_traffic.rs` (`tests/fixtures/sessions`, one row per shape)
//! decoded with `acp::decode_line` (lenient, a result typed by the
//! `Tracker` that has its request pending, as the bench does), then the
//! decoded values encoded again (`encode_notification`, `encode_request`,
//! `encode_response`).
//!
//! Not a criterion bench: a program for callgrind, whose counts do not
//! depend on the machine's load. `scripts/callgrind_rows.sh` builds it with
//! the bench profile and runs it under `valgrind --tool=callgrind`,
//! collecting only inside [`counted`] (which runs [`decode_row`] or
//! [`encode_row`]) and dumping the counts after each call, and prints the
//! instructions of each row. Run
//! alone (as `cargo bench` does), it decodes and encodes every row once and
//! checks each line decodes to its kind; given an argument, only the rows
//! whose name contains it.

use std::hint::black_box;
use std::path::Path;

use acp_codec::acp::{
    decode_line, encode_notification, encode_request, encode_response, Decoding, Incoming, Mode,
};

#[path = "support/real_traffic.rs"]
mod real_traffic;

use real_traffic::Row;

/// Runs `job`: the one function callgrind counts in (its name is what
/// `scripts/callgrind_rows.sh` gives `--toggle-collect` and `--dump-after`;
/// one name, as callgrind 3.19 counts nothing with two).
#[inline(never)]
fn counted(job: &mut dyn FnMut() -> usize) -> usize {
    job()
}

/// Decodes every line of `row` as `benches/acp_traffic.rs` does, dropping
/// each value: what callgrind counts for the row's decoding.
#[inline(never)]
fn decode_row(row: &Row) -> usize {
    let mut ok = 0;
    for (line, tracker) in row.each() {
        let how = Decoding::new(Mode::Lenient).with_tracker(tracker);
        if black_box(decode_line(black_box(line), how)).is_ok() {
            ok += 1;
        }
    }
    ok
}

/// Encodes every decoded value of a row into `out` (cleared before each):
/// what callgrind counts for the row's encoding.
#[inline(never)]
fn encode_row(values: &[Incoming<'_>], out: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for value in values {
        out.clear();
        let n = match value {
            Incoming::Notification(typed) => encode_notification(&typed.value, out),
            Incoming::Request { request, params } => {
                encode_request(&request.id, &params.value, out)
            }
            Incoming::Response { response, result } => {
                encode_response(&response.id, &result.value, out)
            }
            _ => panic!("a recorded line decoded untyped"),
        };
        bytes += n.expect("a decoded value encodes");
        black_box(&*out);
    }
    bytes
}

fn main() {
    let rows = real_traffic::rows(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions"
    )));
    // An argument keeps only the rows whose name contains it (a profile of
    // one row: `valgrind --tool=callgrind --toggle-collect=... BIN ROW`).
    let only = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let mut out = Vec::with_capacity(1 << 20);
    for row in rows
        .iter()
        .filter(|row| only.as_deref().is_none_or(|o| row.name.contains(o)))
    {
        // The row's name first: the counts' dumps come in this order.
        println!("{}\t{}", row.name, row.lines.len());
        assert_eq!(
            counted(&mut || decode_row(row)),
            row.lines.len(),
            "{}",
            row.name
        );
        let values: Vec<Incoming<'_>> = row
            .each()
            .map(|(line, tracker)| {
                let how = Decoding::new(Mode::Lenient).with_tracker(tracker);
                decode_line(line, how).expect("a recorded line decodes")
            })
            .collect();
        for ((line, tracker), value) in row.each().zip(&values) {
            assert!(real_traffic::acp_codec(row.kind, line, tracker), "{line}");
            assert!(!matches!(value, Incoming::Message(_)), "{line}");
        }
        black_box(counted(&mut || encode_row(&values, &mut out)));
    }
}
