//! Real traffic: every `session/update` line of the recorded peer sessions
//! (`tests/fixtures/sessions`), one group per shape, and the requests and
//! results of `session/prompt`, `fs/*` and `session/request_permission`;
//! `acp::decode_line` (a result typed in the same pass, with a `Tracker`
//! that has its request pending) against `serde_json::Value` in the same
//! group.
//!
//! Beside them, the peers' long escaped strings, each decoded as a chunk's
//! text, against `serde_json` unescaping the string alone; and a matrix of
//! made strings by escape gap, script and regularity (`acp/escapes/...`).
//!
//! `serde_json::Value` here is built without `preserve_order`; the official
//! crate's side (and `Value` as it builds it) is `benches/official`.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "support/escape_matrix.rs"]
mod escape_matrix;
#[path = "support/acp_fixtures.rs"]
mod fixtures;
#[path = "support/real_traffic.rs"]
mod real_traffic;
use escape_matrix::{escape_matrix_token, MATRIX_ESCAPES};

use real_traffic::{Row, ALL_UPDATES};

/// Lines per row as elements, the row of every line by bytes.
fn throughput(row: &Row) -> Throughput {
    if row.name == ALL_UPDATES {
        Throughput::Bytes(row.bytes())
    } else {
        Throughput::Elements(row.lines.len() as u64)
    }
}

fn bench(c: &mut Criterion) {
    let rows = real_traffic::rows(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions"
    )));
    for row in &rows {
        assert!(!row.lines.is_empty(), "{}: no lines", row.name);
        for (line, tracker) in row.each() {
            assert!(real_traffic::acp_codec(row.kind, line, tracker), "{line}");
        }
        let kind = row.kind;
        let mut g = c.benchmark_group(format!("acp_traffic/{}", row.name));
        g.throughput(throughput(row));
        g.bench_function("acp_codec", |b| {
            b.iter(|| {
                for (line, tracker) in row.each() {
                    black_box(real_traffic::acp_codec(kind, black_box(line), tracker));
                }
            })
        });
        g.bench_function("serde_json::Value (anchor)", |b| {
            b.iter(|| {
                for line in &row.lines {
                    black_box(real_traffic::value(black_box(line)));
                }
            })
        });
        g.finish();
    }
}

/// The peers' long strings with escapes, each the text of an
/// `agent_message_chunk` decoded by `acp::decode_line` (which unescapes it
/// in its one pass over the line), against `serde_json` reading the string
/// alone into a `String`, as the official crate's types read text. What
/// the rows made of such text can gain over the official crate is bounded
/// by this ratio (ours also reads the envelope, a few hundred nanoseconds a
/// line).
fn escaped_strings(c: &mut Criterion) {
    let rows = real_traffic::rows(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions"
    )));
    let tokens = real_traffic::long_escaped_strings(&rows);
    assert!(tokens.len() >= 5, "{} long escaped strings", tokens.len());
    let lines: Vec<String> = tokens.iter().map(|t| fixtures::chunk_line_of(t)).collect();
    for (line, token) in lines.iter().zip(&tokens) {
        let want: String = serde_json::from_str(token).unwrap();
        assert_eq!(fixtures::decode_line_chunk_text(line), want.len());
    }
    let mut g = c.benchmark_group("acp/long escaped strings");
    g.throughput(Throughput::Bytes(
        tokens.iter().map(|t| t.len() as u64).sum(),
    ));
    g.bench_function("acp_codec decode_line, the string as a chunk's text", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(fixtures::decode_line_chunk_text(black_box(line)));
            }
        })
    });
    g.bench_function("serde_json String (anchor)", |b| {
        b.iter(|| {
            for token in &tokens {
                black_box(serde_json::from_str::<String>(black_box(token)).unwrap());
            }
        })
    });
    g.finish();
}

/// Unescaping by escape gap (3, 8, 40, 200 bytes), ASCII or CJK text, and
/// regular or irregular positions: each string as a chunk's text through
/// `acp::decode_line` against `serde_json` reading it alone into a
/// `String`, in the same group. Throughput is in escapes: criterion's time
/// over 512 is the time per escape.
fn escape_matrix(c: &mut Criterion) {
    for gap in [3, 8, 40, 200] {
        for cjk in [false, true] {
            for irregular in [false, true] {
                let token = escape_matrix_token(gap, cjk, irregular);
                let want: String = serde_json::from_str(&token).unwrap();
                let line = fixtures::chunk_line_of(&token);
                assert_eq!(fixtures::decode_line_chunk_text(&line), want.len());
                let name = format!(
                    "acp/escapes/gap {gap} {} {}",
                    if cjk { "cjk" } else { "ascii" },
                    if irregular { "irregular" } else { "regular" }
                );
                let mut g = c.benchmark_group(name);
                g.throughput(Throughput::Elements(MATRIX_ESCAPES as u64));
                g.bench_function("acp_codec decode_line", |b| {
                    b.iter(|| black_box(fixtures::decode_line_chunk_text(black_box(&line))))
                });
                g.bench_function("serde_json String (anchor)", |b| {
                    b.iter(|| black_box(serde_json::from_str::<String>(black_box(&token)).unwrap()))
                });
                g.finish();
            }
        }
    }
}

criterion_group!(benches, bench, escaped_strings, escape_matrix);
criterion_main!(benches);
