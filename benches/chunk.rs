//! Chunked tool results: reassembly and encoding of a 50 MiB output, each
//! with its anchor in the same group.
//!
//! - reassemble: `Reassembler::push_line` over every 32 KiB frame, against
//!   `serde_json` borrowed-decoding the same frames alone (target >= 0.8x);
//!   plain text and base64-like output.
//! - encode: `ChunkEncoder` writing every frame, against
//!   `serde_json::to_writer` writing the output as one string (>= 0.7x).

use std::borrow::Cow;
use std::hint::black_box;

use acp_codec::chunk::{ChunkEncoder, Pushed, Reassembler};
use acp_codec::stream_json::{Status, Text, ToolResult};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::Deserialize;

const SIZE: usize = 50 * 1024 * 1024;

fn plain_text() -> String {
    let mut s = String::with_capacity(SIZE);
    let mut i = 0u64;
    while s.len() < SIZE - 100 {
        s.push_str(&format!(
            "/usr/share/doc/package-{i}/changelog.Debian.gz  {}\n",
            i * 7919 % 100_000
        ));
        i += 1;
    }
    s
}

fn base64_like() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..SIZE)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x % 64) as usize] as char
        })
        .collect()
}

fn result(output: &str) -> ToolResult<'_> {
    ToolResult {
        timestamp: Some(Text::from("2025-10-01T12:00:00.000Z")),
        tool_id: Text::from("run_shell_command-1700000000000-0"),
        status: Status::Success,
        output: Some(Text::from(output)),
        error: None,
    }
}

fn frames(output: &str) -> Vec<String> {
    let r = result(output);
    let mut enc = ChunkEncoder::new(&r, 32 * 1024).unwrap();
    let mut out = Vec::new();
    let mut lines = Vec::new();
    while enc.next_frame(&mut out).is_some() {
        out.pop();
        lines.push(String::from_utf8(std::mem::take(&mut out)).unwrap());
    }
    lines
}

/// The anchor's view of a frame: every field, text borrowed.
#[derive(Deserialize)]
#[allow(dead_code)]
struct AnchorFrame<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    tool_id: Cow<'a, str>,
    seq: Option<u64>,
    #[serde(borrow)]
    data: Option<Cow<'a, str>>,
    total_bytes: Option<u64>,
    chunks: Option<u64>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
}

fn reassemble(c: &mut Criterion, name: &str, output: &str) {
    let lines = frames(output);
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(output.len() as u64));
    group.sample_size(10);
    group.bench_function("serde_json_borrowed_decode_anchor", |b| {
        b.iter(|| {
            for line in &lines {
                let f: AnchorFrame<'_> = serde_json::from_str(line).unwrap();
                black_box(&f);
            }
        })
    });
    let mut r = Reassembler::new();
    group.bench_function("reassembler", |b| {
        b.iter(|| {
            for line in &lines {
                if let Pushed::Complete(done) = r.push_line(line).unwrap() {
                    let output = done.output.unwrap().into_string();
                    assert_eq!(output.len(), SIZE.min(output.len()));
                    r.recycle(black_box(output));
                }
            }
        })
    });
    group.finish();
}

fn encode(c: &mut Criterion, name: &str, output: &str) {
    let r = result(output);
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(output.len() as u64));
    group.sample_size(10);
    let mut out = Vec::with_capacity(SIZE + SIZE / 8);
    group.bench_function("serde_json_to_writer_anchor", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(output)).unwrap();
            black_box(out.len());
        })
    });
    group.bench_function("chunk_encoder", |b| {
        b.iter(|| {
            out.clear();
            let mut enc = ChunkEncoder::new(&r, 32 * 1024).unwrap();
            while enc.next_frame(&mut out).is_some() {}
            black_box(out.len());
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let plain = plain_text();
    let b64 = base64_like();
    reassemble(c, "reassemble_50MiB_plain", &plain);
    reassemble(c, "reassemble_50MiB_base64", &b64);
    encode(c, "encode_50MiB_plain", &plain);
    encode(c, "encode_50MiB_base64", &b64);
}

criterion_group!(chunk, benches);
criterion_main!(chunk);
