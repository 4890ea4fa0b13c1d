//! `remote::ResumeLog`, what a server keeps so a client that reconnects
//! resumes: the time to hand over a session that missed 4 MiB (the default
//! budget, full of 512-byte `session/update` chunks), written out as the
//! server would (each message stamped with its position, as on a WebSocket,
//! into one send buffer), against the anchor: copying the same messages,
//! unstamped, from a `Vec<String>` into a buffer. And the same through the
//! server core on Streamable HTTP: the `GET` that reopens a session's
//! stream with `Last-Event-ID: 0` (`Server::handle_stream_opened`), its
//! replay written out as SSE events (`id:` and `data:`).

use std::hint::black_box;
use std::time::Duration;

use acp_codec::remote::{
    sse_event, stamp, Action, Kind, Position, PostOutcome, Principal, ResumeLog, Server,
    ServerConfig, DEFAULT_RESUME_BUDGET,
};
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
    let (mut server, conn) = http_server_with(&messages);
    let me = Principal::anonymous();
    let session = "9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c";
    g.bench_function("Server GET Last-Event-ID 4MiB missed, SSE events", |b| {
        b.iter(|| {
            out.clear();
            server
                .handle_stream_opened(Duration::ZERO, &me, conn, Some(session), Some("0"))
                .ok()
                .unwrap();
            while let Some(action) = server.poll_action() {
                if let Action::Read {
                    replace: Some(replay),
                    ..
                } = action
                {
                    for (position, text) in replay {
                        out.extend_from_slice(sse_event(position, &text).as_bytes());
                    }
                }
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

/// A server core with one Streamable HTTP connection whose session's
/// stream was sent `messages` (each read by the client's transport).
fn http_server_with(messages: &[String]) -> (Server, acp_codec::remote::ConnectionId) {
    let t = Duration::ZERO;
    let mut server = Server::new(ServerConfig::new(), t);
    let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
        panic!("no agent")
    };
    server.handle_agent_started(t, run, 1);
    let me = Principal::anonymous();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;
    let Ok(PostOutcome::Opened(conn)) = server.handle_post(t, &me, None, None, init, Some([1; 16]))
    else {
        panic!("not opened")
    };
    let new =
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
    server
        .handle_post(t, &me, Some(conn), None, new, None)
        .unwrap();
    server.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    );
    server.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c"}}"#,
    );
    for m in messages {
        server.handle_agent_line(t, run, m);
    }
    let mut sent = 0;
    while let Some(action) = server.poll_action() {
        if let Action::Send { text, .. } = action {
            server.handle_sent(t, conn, text.len());
            sent += 1;
        }
    }
    assert_eq!(sent, messages.len() + 1, "every update went out");
    (server, conn)
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = resume
}
criterion_main!(benches);
