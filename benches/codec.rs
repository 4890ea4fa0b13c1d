//! `AcpCodec` (lines decoded into owned ACP messages) against its anchor in
//! the same group: tokio-util's `LinesCodec` plus `serde_json::Value` per
//! line (what a tokio user writes by hand), and `LineCodec` plus the
//! borrowed `Message::decode` (the zero-copy path `AcpCodec` gives up to
//! hand out `'static` items). Input: the recorded Gemini CLI 0.61 session,
//! repeated, fed in 64 KiB reads.

use std::hint::black_box;

use acp_codec::acp::Message;
use acp_codec::codec::{AcpCodec, LineCodec};
use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tokio_util::codec::{Decoder, LinesCodec};

const READ: usize = 64 * 1024;
const TOTAL: usize = 8 << 20;
const MAX: usize = 16 << 20;

fn input() -> Vec<u8> {
    let one = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions/gemini-cli-0.61.0-acp-turn/agent.ndjson"
    ))
    .expect("fixture");
    let mut all = Vec::with_capacity(TOTAL + one.len());
    while all.len() < TOTAL {
        all.extend_from_slice(&one);
    }
    all
}

/// Feeds `input` to `codec` in reads; `each` sees every item.
fn drive<D: Decoder>(mut codec: D, input: &[u8], mut each: impl FnMut(D::Item)) {
    let mut buf = BytesMut::with_capacity(2 * READ);
    for read in input.chunks(READ) {
        buf.extend_from_slice(read);
        while let Ok(Some(item)) = codec.decode(&mut buf) {
            each(item);
        }
    }
    while let Ok(Some(item)) = codec.decode_eof(&mut buf) {
        each(item);
    }
}

fn bench(c: &mut Criterion) {
    let input = input();
    let mut g = c.benchmark_group("acp_codec");
    g.throughput(Throughput::Bytes(input.len() as u64));
    g.sample_size(20);
    g.bench_function("AcpCodec (owned Message)", |b| {
        b.iter(|| {
            let mut n = 0usize;
            drive(AcpCodec::new(), &input, |m| n += usize::from(m.is_ok()));
            black_box(n)
        });
    });
    g.bench_function("LineCodec + Message::decode (borrowed)", |b| {
        b.iter(|| {
            let mut n = 0usize;
            drive(LineCodec::new(), &input, |line| {
                if let Ok(line) = line {
                    n += usize::from(Message::decode_bytes(&line).is_ok());
                }
            });
            black_box(n)
        });
    });
    g.bench_function("anchor: LinesCodec + serde_json::Value", |b| {
        b.iter(|| {
            let mut n = 0usize;
            drive(LinesCodec::new_with_max_length(MAX), &input, |line| {
                n += usize::from(serde_json::from_str::<serde_json::Value>(&line).is_ok());
            });
            black_box(n)
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
