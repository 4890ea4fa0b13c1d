//! The client's peak memory for one long message from the server, on
//! either profile: run a server that sends one `agent_message_chunk` line
//! of a given size (its text with a `\n` escape every 80 bytes), and, in
//! another process, the client that receives it through
//! `acp_bridge::remote` and decodes it in one pass, as `acp-client` does;
//! `/usr/bin/time -v` gives the client's maximum resident set size.
//!
//! ```text
//! cargo build --release -p acp-bridge --example client_memory
//! E=target/release/examples/client_memory
//! $E ws-server 127.0.0.1:39001 67108864 &
//! /usr/bin/time -v $E client ws://127.0.0.1:39001/ 2>&1 | grep Maximum
//! $E http-server 127.0.0.1:39002 67108864 &
//! /usr/bin/time -v $E client http://127.0.0.1:39002/ 2>&1 | grep Maximum
//! ```
//!
//! `client URL transport-only` receives the line without decoding it.
//! The WebSocket server sends the line as `acp-bridge` does, in frames of
//! 256 KiB (one message, fragmented); `ws-server ADDR BYTES one-frame`
//! sends it as one frame, as a server that does not fragment would.

use std::convert::Infallible;
use std::time::Duration;

use acp_bridge::lines::LineSource;
use acp_bridge::remote;
use acp_codec::acp::{decode_line, Mode};
use acp_codec::limits::DEFAULT_MAX_LINE_LEN;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::{Method, Request, Response};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame as WsFrame;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message as WsMessage;

const INITIALIZE: &[u8] =
    br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;

/// An `agent_message_chunk` line of exactly `len` bytes.
fn line(len: usize) -> String {
    let head = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#;
    let tail = "\"}}}}";
    let body = len - head.len() - tail.len();
    let mut m = String::with_capacity(len);
    m.push_str(head);
    while m.len() < head.len() + body {
        let left = head.len() + body - m.len();
        if (m.len() - head.len()) % 80 == 78 && left >= 2 {
            m.push_str("\\n");
        } else {
            m.push('x');
        }
    }
    m.push_str(tail);
    m
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage =
        "usage: client_memory ws-server|http-server ADDR BYTES [one-frame] | client URL [transport-only]";
    let (Some(mode), Some(arg)) = (args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    match mode.as_str() {
        "ws-server" | "http-server" => {
            let len: usize = args.get(3).and_then(|n| n.parse().ok()).expect("BYTES");
            let listener = TcpListener::bind(arg).await.expect("bind");
            if mode == "ws-server" {
                ws_server(listener, len, args.get(4).is_some()).await;
            } else {
                http_server(listener, len).await;
            }
        }
        "client" => client(arg, args.get(3).is_some()).await,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}

async fn client(url: &str, transport_only: bool) {
    let target = remote::target(url, None).expect("url");
    let http = url.starts_with("http");
    let mut conn = remote::connect(target, None, Duration::from_secs(10), DEFAULT_MAX_LINE_LEN)
        .await
        .expect("connect");
    conn.sink.send(INITIALIZE.to_vec()).await.expect("send");
    if http {
        // The answer to `initialize`, in the `POST`.
        let _ = conn.source.next_line().await;
    }
    let got = match conn.source.next_line().await {
        Ok(Some(Ok(line))) => line,
        other => panic!("no line: {other:?}"),
    };
    if transport_only {
        println!("received {} bytes", got.len());
        return;
    }
    let decoded = decode_line(&got, Mode::Lenient).expect("decodes");
    println!(
        "received and decoded {} bytes: {}",
        got.len(),
        matches!(decoded, acp_codec::acp::Incoming::Notification(_))
    );
}

/// Frames of a long message, as `acp-bridge` sends them.
const FRAGMENT: usize = 256 * 1024;

async fn ws_server(listener: TcpListener, len: usize, one_frame: bool) {
    let (tcp, _) = listener.accept().await.expect("accept");
    let config = WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    let mut ws = tokio_tungstenite::accept_async_with_config(tcp, Some(config))
        .await
        .expect("upgrade");
    let _ = ws.next().await;
    let text = line(len);
    if one_frame {
        ws.send(WsMessage::Text(text.into())).await.expect("send");
    } else {
        let text = Bytes::from(text);
        let mut at = 0;
        while at < text.len() {
            let end = text.len().min(at + FRAGMENT);
            let opcode = if at == 0 { Data::Text } else { Data::Continue };
            let frame =
                WsFrame::message(text.slice(at..end), OpCode::Data(opcode), end == text.len());
            ws.feed(WsMessage::Frame(frame)).await.expect("send");
            at = end;
        }
        ws.flush().await.expect("send");
    }
    let _ = tokio::time::timeout(Duration::from_secs(60), ws.next()).await;
}

async fn http_server(listener: TcpListener, len: usize) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| async move {
                    let (kind, chunks): (&str, Vec<Bytes>) = match *req.method() {
                        Method::POST => ("application/json", vec![Bytes::from_static(INITIALIZED)]),
                        Method::GET => (
                            "text/event-stream",
                            format!("data: {}\n\n", line(len))
                                .into_bytes()
                                .chunks(64 * 1024)
                                .map(Bytes::copy_from_slice)
                                .collect(),
                        ),
                        _ => ("text/plain", Vec::new()),
                    };
                    let frames = chunks
                        .into_iter()
                        .map(|c| Ok::<_, Infallible>(Frame::data(c)));
                    let body = BodyExt::boxed(StreamBody::new(futures_util::stream::iter(frames)));
                    Response::builder()
                        .header("acp-connection-id", "c1")
                        .header("content-type", kind)
                        .body(body)
                });
            let io = hyper_util::rt::TokioIo::new(tcp);
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(io, service)
                    .await;
        });
    }
}
