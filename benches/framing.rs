//! Line splitting throughput against its anchors, in the same groups
//! (pass-through splitting, `RawLineSplitter::decode_bytes`, among them):
//! a bare `memchr_iter` newline count (the bound) and tokio-util's
//! `LinesCodec::new_with_max_length` (what tokio users reach for).
//! Input is fed in 64 KiB reads, as from a pipe: mixed ACP traffic,
//! ~80-byte lines, and message chunks in Chinese (mostly not ASCII, so the
//! UTF-8 check does the most work).

use std::hint::black_box;

use acp_codec::framing::RawItem;
use acp_codec::{Limits, LineSplitter, RawLineSplitter};
use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tokio_util::codec::{Decoder, LinesCodec};

#[path = "support/traffic.rs"]
mod traffic;

const READ: usize = 64 * 1024;
const TOTAL: usize = 64 << 20;
const MAX: usize = 16 << 20;

fn memchr_count(input: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', input).count()
}

/// The borrowed splitter as a caller drives it: lines are decoded straight
/// from each read; only an unfinished line is copied into the carry buffer,
/// and completed there from the next read (up to its first `\n`).
/// `batch` takes each read's lines with `lines()`, else one `decode` a line.
fn borrowed(input: &[u8], batch: bool) -> usize {
    let mut splitter = LineSplitter::with_max_line_len(MAX);
    let mut carry: Vec<u8> = Vec::with_capacity(READ);
    let mut n = 0usize;
    for read in input.chunks(READ) {
        let mut read = read;
        if !carry.is_empty() {
            let end = memchr::memchr(b'\n', read).map_or(read.len(), |i| i + 1);
            carry.extend_from_slice(&read[..end]);
            read = &read[end..];
            let used = take_lines(&mut splitter, &carry, batch, &mut n);
            carry.drain(..used);
            if !carry.is_empty() {
                // Still unfinished (no `\n` in this read).
                carry.extend_from_slice(read);
                continue;
            }
        }
        let used = take_lines(&mut splitter, read, batch, &mut n);
        carry.extend_from_slice(&read[used..]);
    }
    n
}

/// Takes every complete line of `buf`; returns the bytes consumed.
fn take_lines(splitter: &mut LineSplitter, buf: &[u8], batch: bool, n: &mut usize) -> usize {
    if batch {
        let mut lines = splitter.lines(buf);
        for line in lines.by_ref() {
            *n += black_box(line.map_or(1, |l| l.len()));
        }
        return lines.consumed();
    }
    let mut start = 0;
    loop {
        let d = splitter.decode(&buf[start..]);
        start += d.consumed;
        match d.item {
            Some(Ok(line)) => *n += black_box(line.len()),
            Some(Err(_)) => *n += 1,
            None => return start,
        }
    }
}

fn bytes_variant(input: &[u8]) -> usize {
    let mut splitter = LineSplitter::with_max_line_len(MAX);
    let mut buf = BytesMut::with_capacity(READ * 2);
    let mut n = 0usize;
    for read in input.chunks(READ) {
        buf.reserve(read.len());
        buf.extend_from_slice(read);
        while let Some(line) = splitter.decode_bytes(&mut buf) {
            n += black_box(line.map_or(1, |l| l.len()));
        }
    }
    n
}

/// The batch `Bytes` variant: every complete line of each read at once.
fn bytes_batch(input: &[u8]) -> usize {
    let mut splitter = LineSplitter::with_max_line_len(MAX);
    let mut buf = BytesMut::with_capacity(READ * 2);
    let mut n = 0usize;
    for read in input.chunks(READ) {
        buf.reserve(read.len());
        buf.extend_from_slice(read);
        for line in splitter.lines_bytes(&mut buf) {
            n += black_box(line.map_or(1, |l| l.len()));
        }
    }
    n
}

/// Pass-through over a `BytesMut` (`RawLineSplitter::decode_bytes`, what
/// `RawLineCodec` does): every line with its terminator, UTF-8 unchecked.
/// Counts the bytes of the lines' contents, as the others count text.
fn raw_bytes(input: &[u8]) -> usize {
    let mut splitter = RawLineSplitter::with_limits(&Limits::new().with_max_line_len(MAX));
    let mut buf = BytesMut::with_capacity(READ * 2);
    let mut n = 0usize;
    for read in input.chunks(READ) {
        buf.reserve(read.len());
        buf.extend_from_slice(read);
        while let Some(item) = splitter.decode_bytes(&mut buf) {
            if let RawItem::Line(line) = &item {
                n += black_box(line.content().len());
            }
        }
    }
    n
}

fn lines_codec(input: &[u8]) -> usize {
    let mut codec = LinesCodec::new_with_max_length(MAX);
    let mut buf = BytesMut::with_capacity(READ * 2);
    let mut n = 0usize;
    for read in input.chunks(READ) {
        buf.reserve(read.len());
        buf.extend_from_slice(read);
        while let Ok(Some(line)) = codec.decode(&mut buf) {
            n += black_box(line.len());
        }
    }
    n
}

fn split(c: &mut Criterion) {
    for (name, input) in [
        ("mixed", traffic::mixed(TOTAL)),
        ("short_lines", traffic::short(TOTAL)),
        ("chinese", traffic::cjk(TOTAL)),
    ] {
        // Every way of reading takes the same text, the anchor's too.
        let text = lines_codec(&input);
        assert_eq!(borrowed(&input, true), text, "{name}: lines");
        assert_eq!(borrowed(&input, false), text, "{name}: decode");
        assert_eq!(bytes_variant(&input), text, "{name}: bytes");
        assert_eq!(bytes_batch(&input), text, "{name}: lines_bytes");
        assert_eq!(raw_bytes(&input), text, "{name}: raw_bytes");
        let mut g = c.benchmark_group(format!("split/{name}"));
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.sample_size(10);
        g.bench_function("anchor_memchr_count", |b| {
            b.iter(|| memchr_count(black_box(&input)))
        });
        g.bench_function("line_splitter_lines", |b| {
            b.iter(|| borrowed(black_box(&input), true))
        });
        g.bench_function("line_splitter_decode", |b| {
            b.iter(|| borrowed(black_box(&input), false))
        });
        g.bench_function("line_splitter_bytes", |b| {
            b.iter(|| bytes_variant(black_box(&input)))
        });
        g.bench_function("line_splitter_lines_bytes", |b| {
            b.iter(|| bytes_batch(black_box(&input)))
        });
        g.bench_function("line_splitter_raw_bytes", |b| {
            b.iter(|| raw_bytes(black_box(&input)))
        });
        g.bench_function("anchor_tokio_lines_codec", |b| {
            b.iter(|| lines_codec(black_box(&input)))
        });
        g.finish();
    }
}

/// A long line fed one byte per call: 2 MiB must cost about twice 1 MiB.
fn one_byte_per_call(c: &mut Criterion) {
    let mut g = c.benchmark_group("split/one_byte_per_call");
    g.sample_size(10);
    for mib in [1usize, 2] {
        let mut line = vec![b'x'; mib << 20];
        line.push(b'\n');
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("line_splitter", format!("{mib}MiB")),
            &line,
            |b, line| {
                b.iter(|| {
                    let mut splitter = LineSplitter::with_max_line_len(MAX);
                    let mut got = 0;
                    for end in 1..=line.len() {
                        let d = splitter.decode(&line[..end]);
                        if let Some(Ok(l)) = d.item {
                            got = l.len();
                        }
                    }
                    got
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, split, one_byte_per_call);
criterion_main!(benches);
