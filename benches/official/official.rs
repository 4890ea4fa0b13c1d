//! ACP decoding against the official `agent-client-protocol-schema` types
//! (newest on crates.io), in the same group, one run.
//!
//! In this package serde_json has `preserve_order` (the official crate
//! enables it), so `serde_json::Value` here is the slower, order-keeping
//! map; `benches/acp.rs` measures against the plain `Value`.

use std::hint::black_box;

use agent_client_protocol_schema::rpc::{JsonRpcMessage, Notification};
use agent_client_protocol_schema::v1::{
    ContentBlock as OfficialBlock, SessionNotification, SessionUpdate as OfficialUpdate,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "../support/acp_fixtures.rs"]
mod fixtures;

fn official(line: &str) -> usize {
    let m: JsonRpcMessage<Notification<SessionNotification>> = serde_json::from_str(line).unwrap();
    let n = m.into_inner();
    let OfficialUpdate::AgentMessageChunk(c) = n.params.unwrap().update else {
        unreachable!()
    };
    let OfficialBlock::Text(t) = c.content else {
        unreachable!()
    };
    t.text.len()
}

fn bench(c: &mut Criterion) {
    let line = fixtures::chunk_line();
    assert_eq!(fixtures::decode_chunk_text(&line), 200);
    assert_eq!(fixtures::decode_line_chunk_text(&line), 200);
    assert_eq!(official(&line), 200);
    let mut g = c.benchmark_group("acp/agent_message_chunk vs official");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.bench_function("acp_codec decode_line (one pass)", |b| {
        b.iter(|| fixtures::decode_line_chunk_text(black_box(&line)))
    });
    g.bench_function("acp_codec decode + typed (two steps)", |b| {
        b.iter(|| fixtures::decode_chunk_text(black_box(&line)))
    });
    g.bench_function("agent-client-protocol-schema (anchor)", |b| {
        b.iter(|| official(black_box(&line)))
    });
    g.bench_function("serde_json::Value with preserve_order (anchor)", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&line)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
