//! The turn view replaying Gemini CLI 0.61.0's recorded turn (its
//! `session/update` notifications and permission requests, decoded once up
//! front), against its anchor in the same group: `into_owned()` of every
//! message, the copy a client that simply keeps what it receives makes.
//! `Throughput::Bytes` counts the recorded lines.

use acp_codec::acp::Mode;
use std::hint::black_box;

use acp_codec::acp::{
    Message, NotificationParams, RequestId, RequestParams, RequestPermissionRequest,
    SessionNotification, Typed,
};
use acp_codec::turn::TurnView;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

enum Item {
    Update(SessionNotification<'static>),
    Permission(RequestId<'static>, RequestPermissionRequest<'static>),
}

fn items() -> (Vec<Item>, u64) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions/gemini-cli-0.61.0-acp-turn/agent.ndjson"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut bytes = 0;
    for line in text.lines() {
        match Message::decode(line).unwrap() {
            Message::Notification(n) => {
                if let Ok(NotificationParams::SessionUpdate(u)) =
                    n.typed(Mode::Lenient).map(Typed::into_value)
                {
                    out.push(Item::Update(u.into_owned()));
                    bytes += line.len() as u64;
                }
            }
            Message::Request(r) => {
                if let Ok(RequestParams::RequestPermission(p)) =
                    r.typed(Mode::Lenient).map(Typed::into_value)
                {
                    out.push(Item::Permission(r.id.to_owned_id(), p.into_owned()));
                    bytes += line.len() as u64;
                }
            }
            _ => {}
        }
    }
    (out, bytes)
}

fn bench(c: &mut Criterion) {
    let (items, bytes) = items();
    let mut g = c.benchmark_group("turn");
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("turn_view_replay", |b| {
        b.iter(|| {
            let mut view = TurnView::default();
            view.begin_turn();
            let mut events = 0usize;
            for item in &items {
                events += match item {
                    Item::Update(u) => view.push_update(u).count(),
                    Item::Permission(id, p) => view.push_permission_request(id, p).count(),
                };
            }
            black_box((events, view.tool_calls().len()))
        })
    });
    g.bench_function("anchor_into_owned", |b| {
        b.iter(|| {
            let mut kept = Vec::with_capacity(items.len());
            for item in &items {
                match item {
                    Item::Update(u) => kept.push(Ok(u.clone().into_owned())),
                    Item::Permission(_, p) => kept.push(Err(p.clone().into_owned())),
                }
            }
            black_box(kept.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
