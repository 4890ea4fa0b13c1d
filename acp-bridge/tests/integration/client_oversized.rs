//! The client's limit on one incoming message (`acp_bridge::remote`), on
//! both profiles, against a test server in this process: a 40 MB message
//! is delivered; a 70 MB one (over the 64 MiB default) is reported as
//! `FrameError::LineTooLong` with its size and the limit, and the message
//! after it is delivered on the same connection.

use std::convert::Infallible;
use std::time::Duration;

use acp_bridge::lines::LineSource;
use acp_bridge::remote;
use acp_codec::limits::DEFAULT_MAX_LINE_LEN;
use acp_codec::FrameError;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::{Request, Response};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message as WsMessage;

const ACCEPTED: usize = 40_000_000;
const REFUSED: usize = 70_000_000;

/// A notification of `len` bytes, its text `fill` repeated, with a request
/// id when `id` is given (a request, as an agent sends them).
fn message(len: usize, fill: char, id: Option<i64>) -> String {
    let head = match id {
        Some(id) => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"fs/write_text_file","params":{{"sessionId":"s","path":"/x","content":""#),
        None => r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#.to_owned(),
    };
    let tail = if id.is_some() { "\"}}" } else { "\"}}}}" };
    let mut m = String::with_capacity(len);
    m.push_str(&head);
    m.extend(std::iter::repeat_n(fill, len - head.len() - tail.len()));
    m.push_str(tail);
    assert_eq!(m.len(), len);
    m
}

/// What the server sends after the client's first message: the accepted
/// message, the refused one (a request, id 7), then a short one.
fn script() -> Vec<String> {
    vec![
        message(ACCEPTED, 'a', None),
        message(REFUSED, 'b', Some(7)),
        message(200, 'c', None),
    ]
}

/// Reads the three messages and checks each.
async fn check(source: &mut remote::RemoteSource) {
    let first = tokio::time::timeout(Duration::from_secs(60), source.next_line())
        .await
        .expect("first message in time")
        .unwrap()
        .expect("a message");
    let first = first.expect("the 40 MB message delivered");
    assert_eq!(first.len(), ACCEPTED);
    assert!(first.ends_with("aaa\"}}}}"));
    drop(first);
    let second = tokio::time::timeout(Duration::from_secs(60), source.next_line())
        .await
        .expect("second message in time")
        .unwrap()
        .expect("an item");
    match second {
        Err(FrameError::LineTooLong(e)) => {
            assert_eq!(e.limit(), DEFAULT_MAX_LINE_LEN);
            assert_eq!(e.seen(), REFUSED, "{e:?}");
            assert_eq!(
                e.request_id(),
                Some(acp_codec::PeekedId::Number(7)),
                "{e:?}"
            );
        }
        other => panic!("expected LineTooLong, got {:?}", other.map(|t| t.len())),
    }
    let third = tokio::time::timeout(Duration::from_secs(60), source.next_line())
        .await
        .expect("third message in time")
        .unwrap()
        .expect("a message")
        .expect("the next message delivered");
    assert_eq!(third.len(), 200);
}

#[tokio::test]
async fn websocket_skips_a_message_over_the_limit_and_goes_on() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let mut ws = tokio_tungstenite::accept_async_with_config(tcp, Some(config))
            .await
            .unwrap();
        let _hello = ws.next().await;
        for m in script() {
            ws.send(WsMessage::Text(m.into())).await.unwrap();
        }
        // Stay open until the client is done.
        let _ = tokio::time::timeout(Duration::from_secs(60), ws.next()).await;
    });
    let target = remote::target(&format!("ws://{addr}/"), None).unwrap();
    let mut conn = remote::connect(target, None, Duration::from_secs(10), DEFAULT_MAX_LINE_LEN)
        .await
        .unwrap();
    conn.sink.send(b"{}\n".to_vec()).await.unwrap();
    check(&mut conn.source).await;
    drop(conn);
    server.abort();
}

#[tokio::test]
async fn streamable_http_skips_an_event_over_the_limit_and_goes_on() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(|req: Request<hyper::body::Incoming>| async move {
                        let resp = match *req.method() {
                            hyper::Method::POST => Response::builder()
                                .header("content-type", "application/json")
                                .header("acp-connection-id", "c1")
                                .body(body_of(vec![Bytes::from_static(
                                    br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
                                )]))
                                .unwrap(),
                            hyper::Method::GET => {
                                // Each event in chunks of 64 KiB, as a server
                                // streams them.
                                let mut chunks = Vec::new();
                                for m in script() {
                                    let event = format!("data: {m}\n\n").into_bytes();
                                    for c in event.chunks(64 * 1024) {
                                        chunks.push(Bytes::copy_from_slice(c));
                                    }
                                }
                                Response::builder()
                                    .header("content-type", "text/event-stream")
                                    .body(body_of(chunks))
                                    .unwrap()
                            }
                            _ => Response::new(body_of(Vec::new())),
                        };
                        Ok::<_, Infallible>(resp)
                    });
                let io = hyper_util::rt::TokioIo::new(tcp);
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(io, service)
                .await;
            });
        }
    });
    let target = remote::target(&format!("http://{addr}/"), None).unwrap();
    let mut conn = remote::connect(target, None, Duration::from_secs(10), DEFAULT_MAX_LINE_LEN)
        .await
        .unwrap();
    conn.sink
        .send(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#
                .to_vec(),
        )
        .await
        .unwrap();
    // The answer to initialize first.
    let answer = tokio::time::timeout(Duration::from_secs(10), conn.source.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(answer.contains("protocolVersion"), "{answer}");
    check(&mut conn.source).await;
    drop(conn);
    server.abort();
}

/// A body of the given chunks, then its end.
fn body_of(chunks: Vec<Bytes>) -> http_body_util::combinators::BoxBody<Bytes, Infallible> {
    let stream = futures_util::stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<_, Infallible>(Frame::data(c))),
    );
    BodyExt::boxed(StreamBody::new(stream))
}
