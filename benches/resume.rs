//! `remote::ResumeLog`, what a server keeps so a client that reconnects
//! resumes: the time to hand over a session that missed 4 MiB (the default
//! budget, full of 512-byte `session/update` chunks), written out as the
//! server would (each message stamped with its position, as on a WebSocket,
//! into one send buffer), against the anchor: copying the same messages,
//! unstamped, from a `Vec<String>` into a buffer.

use std::hint::black_box;
use std::time::Duration;

use acp_codec::remote::{stamp, Kind, Position, ResumeLog, DEFAULT_RESUME_BUDGET};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// A `session/update` chunk of exactly `len` bytes.
fn chunk(n: usize, len: usize) -> String {
    let head = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{n} "#
    );
    let tail = r#""}}}}"#;
    let fill = len - head.len() - tail.len();
    format!("{head}{}{tail}", "x".repeat(fill))
}

fn resume(c: &mut Criterion) {
    let messages: Vec<String> = (0..DEFAULT_RESUME_BUDGET / 512)
        .map(|n| chunk(n, 512))
        .collect();
    let bytes: usize = messages.iter().map(String::len).sum();
    let mut log = ResumeLog::default();
    for m in &messages {
        let _ = log.push(Kind::Plain, m);
    }
    assert_eq!(log.first_kept(), Position(1), "the log holds all 4 MiB");
    let mut g = c.benchmark_group("resume");
    g.throughput(Throughput::Bytes(bytes as u64));
    let mut out: Vec<u8> = Vec::with_capacity(bytes * 2);
    g.bench_function("ResumeLog::resume 4MiB missed, stamped", |b| {
        b.iter(|| {
            out.clear();
            let replay = log.resume(black_box(Position::START)).ok().unwrap();
            for (position, text) in replay {
                out.extend_from_slice(stamp(text, Some("s1"), position).as_bytes());
            }
            black_box(out.len())
        })
    });
    g.bench_function("ResumeLog::resume 4MiB missed, unstamped", |b| {
        b.iter(|| {
            out.clear();
            let replay = log.resume(black_box(Position::START)).ok().unwrap();
            for (_, text) in replay {
                out.extend_from_slice(text.as_bytes());
            }
            black_box(out.len())
        })
    });
    g.bench_function("anchor copy 4MiB of messages", |b| {
        b.iter(|| {
            out.clear();
            for text in black_box(&messages) {
                out.extend_from_slice(text.as_bytes());
            }
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = resume
}
criterion_main!(benches);
