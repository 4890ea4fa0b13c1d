//! The WebSocket profile's I/O: the upgrade (with `Acp-Connection-Id`),
//! a reader handing each frame to the core, a writer sending what the
//! core queues for the connection and the close it asks for. What a frame
//! means, and every answer and close, is the core's.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::http::HeaderValue;
use axum::response::Response;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};

use crate::driver::{Driver, ToConn};
use crate::respond::{answer, random_name};
use acp_codec::remote::{ConnectionId, Principal, HEADER_CONNECTION_ID};

/// Bytes read from a socket at a time: an idle connection holds this
/// much, not tungstenite's default 128 KiB (a larger message still grows
/// its buffer as it arrives).
const READ_CHUNK: usize = 8 * 1024;

/// Accepts the upgrade: the connection opens in the core before the `101`
/// (so a user's connection limit is exact), and is served once the
/// handshake is done; a failed handshake closes it again.
pub fn upgrade(
    driver: Arc<Driver>,
    upgrade: WebSocketUpgrade,
    peer: SocketAddr,
    who: Principal,
    tag: String,
) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<ToConn>();
    let kill = Arc::new(Notify::new());
    let random = random_name();
    let (conn, id) = match driver.with(|s, now| s.open_websocket(now, &who, random)) {
        Ok(c) => c,
        Err(r) => {
            driver.log_line(&format!("{peer} {tag}: refused: {}", r.body));
            return answer(r);
        }
    };
    driver.attach(conn, tx, kill.clone());
    let opened = Opened {
        driver: driver.clone(),
        conn: Some(conn),
    };
    let read_limit = driver.with(|s, _| s.websocket_read_limit());
    let mut response = upgrade
        .read_buffer_size(READ_CHUNK)
        .max_message_size(read_limit)
        .max_frame_size(read_limit)
        .on_upgrade(move |socket| client(opened, socket, format!("{peer} {tag}"), rx, kill));
    if let Ok(id) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER_CONNECTION_ID, id);
    }
    response
}

/// A connection opened in the core; closed there when dropped unserved
/// (the handshake after the `101` failed).
struct Opened {
    driver: Arc<Driver>,
    conn: Option<ConnectionId>,
}

impl Drop for Opened {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.driver.closed(conn);
        }
    }
}

/// Serves one WebSocket client until it leaves or the core closes it.
async fn client(
    mut opened: Opened,
    socket: WebSocket,
    tag: String,
    rx: mpsc::UnboundedReceiver<ToConn>,
    kill: Arc<Notify>,
) {
    let driver = opened.driver.clone();
    let Some(conn) = opened.conn.take() else {
        return;
    };
    let (sink, mut source) = socket.split();
    let done = Arc::new(Notify::new());
    let writer = tokio::spawn(write(
        driver.clone(),
        (conn, tag.clone()),
        sink,
        rx,
        kill,
        done.clone(),
    ));
    driver.log_line(&format!("{tag}: websocket connected ({conn})"));
    tokio::select! {
        () = read_frames(&driver, conn, &mut source) => {}
        () = done.notified() => {}
    }
    driver.closed(conn);
    finish(writer).await;
    driver.log_line(&format!("{tag}: websocket left ({conn})"));
}

/// Lets the writer send the close frame, for at most 5 s; then stops it.
async fn finish(mut writer: tokio::task::JoinHandle<()>) {
    if tokio::time::timeout(Duration::from_secs(5), &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
}

/// Hands the client's frames to the core until the client leaves.
async fn read_frames(
    driver: &Arc<Driver>,
    conn: ConnectionId,
    source: &mut SplitStream<WebSocket>,
) {
    while let Some(next) = source.next().await {
        match next {
            Ok(Message::Text(text)) => driver.with(|s, now| s.handle_text(now, conn, &text)),
            Ok(Message::Binary(_)) => driver.with(|s, now| s.handle_binary(now, conn)),
            Ok(Message::Close(_)) => return,
            Ok(_) => {}
            Err(e) => {
                if let Some(size) = too_big(e) {
                    driver.with(|s, now| s.handle_too_large(now, conn, size));
                }
                return;
            }
        }
    }
}

/// Sends what the core queues for `conn`, reporting each message sent;
/// on a close, its last message and the close frame. A write the core
/// gave up on (`kill`: the client too slow) ends it.
async fn write(
    driver: Arc<Driver>,
    (conn, tag): (ConnectionId, String),
    mut sink: SplitSink<WebSocket, Message>,
    mut rx: mpsc::UnboundedReceiver<ToConn>,
    kill: Arc<Notify>,
    done: Arc<Notify>,
) {
    while let Some(m) = rx.recv().await {
        match m {
            ToConn::Send(_, text) | ToConn::Event(_, _, text) | ToConn::Answer(text) => {
                let len = text.len();
                tokio::select! {
                    sent = sink.send(Message::Text(text.into())) => {
                        if sent.is_err() {
                            break;
                        }
                        driver.with(|s, now| s.handle_sent(now, conn, len));
                    }
                    () = kill.notified() => {
                        // The close is queued behind: send it if the
                        // socket takes it at all.
                        continue;
                    }
                }
            }
            ToConn::Close { code, reason, last } => {
                driver.log_line(&format!("{tag}: closing with {code}: {reason}"));
                let close = async {
                    if let Some(text) = last {
                        let _ = sink.send(Message::Text(text.into())).await;
                    }
                    let frame = CloseFrame {
                        code: code.0,
                        reason: reason.into(),
                    };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                };
                let _ = tokio::time::timeout(Duration::from_secs(5), close).await;
                break;
            }
        }
    }
    done.notify_one();
    let _ = sink.close().await;
}

/// The size of a message over the read limit, when `e` is one.
fn too_big(e: axum::Error) -> Option<usize> {
    let inner = e.into_inner();
    match inner.downcast_ref::<WsError>() {
        Some(WsError::Capacity(CapacityError::MessageTooLong { size, .. })) => Some(*size),
        Some(WsError::Capacity(_)) => Some(usize::MAX),
        _ => None,
    }
}
