//! ACP decoding against `serde_json::Value` and `serde_json`'s own borrowed
//! structs, in the same groups (one run gives the ratios).
//!
//! `serde_json::Value` here is built without `preserve_order` (nothing in
//! this crate's build enables it). The comparison with the official
//! `agent-client-protocol-schema` types lives in `benches/official/`, a
//! separate package, because that crate turns on `serde_json`'s
//! `preserve_order`, which would slow every `Value` in this build.

use acp_codec::acp::Mode;
use std::borrow::Cow;
use std::hint::black_box;

use acp_codec::acp::{
    decode_line, ContentBlock, Incoming, Message, NotificationParams, SessionUpdate,
    ToolCallContent, Typed,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::Deserialize;

#[path = "support/acp_fixtures.rs"]
mod fixtures;

/// The 5 MiB line's text length, decoded in one pass.
fn one_pass_tool_output(line: &str) -> usize {
    let Incoming::Notification(Typed {
        value: NotificationParams::SessionUpdate(u),
        ..
    }) = decode_line(line, Mode::Lenient).unwrap()
    else {
        unreachable!()
    };
    text_len(&u)
}

/// The same in two steps.
fn two_step_tool_output(line: &str) -> usize {
    let msg = Message::decode(line).unwrap();
    let Message::Notification(n) = &msg else {
        unreachable!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else {
        unreachable!()
    };
    text_len(&u)
}

fn text_len(u: &acp_codec::acp::SessionNotification<'_>) -> usize {
    let SessionUpdate::ToolCallUpdate(c) = &u.update else {
        unreachable!()
    };
    let Some(ToolCallContent::Content(content)) = c.content.as_ref().and_then(|c| c.first()) else {
        unreachable!()
    };
    let ContentBlock::Text(t) = &content.content else {
        unreachable!()
    };
    t.text.len()
}

// serde_json's own throughput: a minimal borrowed mirror of the same line.
#[derive(Deserialize)]
struct Env<'a> {
    #[serde(borrow)]
    #[allow(dead_code)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: Params<'a>,
}
#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, rename = "sessionId")]
    #[allow(dead_code)]
    session_id: Cow<'a, str>,
    #[serde(borrow)]
    update: Update<'a>,
}
#[derive(Deserialize)]
struct Update<'a> {
    #[serde(borrow, rename = "toolCallId")]
    #[allow(dead_code)]
    tool_call_id: Cow<'a, str>,
    #[serde(borrow)]
    content: Vec<Item<'a>>,
}
#[derive(Deserialize)]
struct Item<'a> {
    #[serde(borrow)]
    content: Text<'a>,
}
#[derive(Deserialize)]
struct Text<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
}

fn bench(c: &mut Criterion) {
    let line = fixtures::chunk_line();
    let mut g = c.benchmark_group("acp/agent_message_chunk");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.bench_function("acp_codec decode_line (one pass)", |b| {
        b.iter(|| fixtures::decode_line_chunk_text(black_box(&line)))
    });
    g.bench_function("acp_codec decode + typed (two steps)", |b| {
        b.iter(|| fixtures::decode_chunk_text(black_box(&line)))
    });
    g.bench_function("acp_codec envelope only", |b| {
        b.iter(|| Message::decode(black_box(&line)).unwrap())
    });
    g.bench_function("serde_json::Value (anchor)", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&line)).unwrap())
    });
    g.finish();

    let big = fixtures::big_tool_call_update_line();
    let mut g = c.benchmark_group("acp/tool_call_update_5MiB");
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.sample_size(20);
    g.bench_function("acp_codec decode_line (one pass)", |b| {
        b.iter(|| one_pass_tool_output(black_box(&big)))
    });
    g.bench_function("acp_codec decode + typed (two steps)", |b| {
        b.iter(|| two_step_tool_output(black_box(&big)))
    });
    g.bench_function("acp_codec envelope only", |b| {
        b.iter(|| Message::decode(black_box(&big)).unwrap())
    });
    g.bench_function("serde_json borrowed struct (anchor)", |b| {
        b.iter(|| {
            let e: Env<'_> = serde_json::from_str(black_box(&big)).unwrap();
            e.params.update.content[0].content.text.len()
        })
    });
    g.finish();

    // What keeping the unknown members costs: the same tool call with
    // every member known (one pass), and with a member this version does
    // not know plus a `null` for an optional one (the general path, both
    // kept in `extra` to re-encode).
    let known = fixtures::tool_call_line("");
    let unknown = fixtures::tool_call_line(r#","name":null,"futureMember":{"x":[1,2]}"#);
    let mut g = c.benchmark_group("acp/tool_call");
    g.throughput(Throughput::Bytes(known.len() as u64));
    g.bench_function("acp_codec decode_line, members known", |b| {
        b.iter(|| decode_line(black_box(&known), Mode::Lenient).unwrap())
    });
    g.bench_function("acp_codec decode_line, unknown member and null kept", |b| {
        b.iter(|| decode_line(black_box(&unknown), Mode::Lenient).unwrap())
    });
    g.bench_function("serde_json::Value (anchor)", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&known)).unwrap())
    });
    g.finish();
}

/// A chunk of Chinese text, as UTF-8 and as a peer escapes it to ASCII
/// (a `\u` escape a character: Python's `json.dumps` by default, so the
/// Python SDK's agents), each against `serde_json::Value`.
fn non_latin(c: &mut Criterion) {
    let chinese = "读取文件并修复函数中的错误。".repeat(100);
    let escaped: String = chinese
        .chars()
        .map(|ch| format!("\\u{:04x}", u32::from(ch)))
        .collect();
    for (name, text) in [("utf8", chinese), ("escaped", escaped)] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
        );
        assert_eq!(fixtures::decode_line_chunk_text(&line), 1400 * 3);
        let mut g = c.benchmark_group(format!("acp/chinese_chunk_{name}"));
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_function("acp_codec decode_line (one pass)", |b| {
            b.iter(|| fixtures::decode_line_chunk_text(black_box(&line)))
        });
        g.bench_function("serde_json::Value (anchor)", |b| {
            b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&line)).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, bench, non_latin);
criterion_main!(benches);
