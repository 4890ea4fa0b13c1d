//! Real traffic against the official `agent-client-protocol-schema` types:
//! every `session/update` line of the recorded peer sessions
//! (`tests/fixtures/sessions`), one group per shape, and the requests and
//! results of `session/prompt`, `fs/*` and `session/request_permission`.
//! In each group `acp::decode_line` (a result typed in the same pass, with
//! a `Tracker` that has its request pending), the official types
//! (the whole line into its JSON-RPC envelope type, the params or result
//! type chosen by the method) and `serde_json::Value` (with
//! `preserve_order`, as the official crate builds it), one run.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

mod decode;
#[path = "../support/real_traffic.rs"]
mod real_traffic;

use decode::official;
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
        "/../../tests/fixtures/sessions"
    )));
    for row in &rows {
        assert!(!row.lines.is_empty(), "{}: no lines", row.name);
        let rejected = row
            .lines
            .iter()
            .filter(|line| !official(row.kind, line))
            .count();
        for (line, tracker) in row.each() {
            assert!(real_traffic::acp_codec(row.kind, line, tracker), "{line}");
        }
        println!(
            "{}: {} lines, {} bytes; the official types reject {rejected}",
            row.name,
            row.lines.len(),
            row.bytes()
        );
        let kind = row.kind;
        let mut g = c.benchmark_group(format!("acp_traffic/{} vs official", row.name));
        g.throughput(throughput(row));
        g.bench_function("acp_codec", |b| {
            b.iter(|| {
                for (line, tracker) in row.each() {
                    black_box(real_traffic::acp_codec(kind, black_box(line), tracker));
                }
            })
        });
        g.bench_function("agent-client-protocol-schema (anchor)", |b| {
            b.iter(|| {
                for line in &row.lines {
                    black_box(official(kind, black_box(line)));
                }
            })
        });
        g.bench_function("serde_json::Value with preserve_order (anchor)", |b| {
            b.iter(|| {
                for line in &row.lines {
                    black_box(real_traffic::value(black_box(line)));
                }
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
