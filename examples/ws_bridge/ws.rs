//! The WebSocket profile: one JSON-RPC message per text frame. The upgrade
//! response carries `Acp-Connection-Id`; a message over
//! `--max-message-bytes` closes the socket with 1009, a client too slow to
//! take its messages with 1008.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::http::HeaderValue;
use axum::response::Response;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};

use crate::http::{new_connection_id, HEADER_CONNECTION_ID};
use crate::hub::{Shared, ToClient};
use acp_codec::remote::Stream;

/// Close codes the bridge sends.
const POLICY: u16 = 1008;
const TOO_BIG: u16 = 1009;

const BINARY_REFUSED: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"binary websocket messages are refused: send each json-rpc message as one text message"}}"#;

/// Accepts the upgrade; the socket is served once the handshake is done.
pub fn upgrade(shared: Arc<Shared>, upgrade: WebSocketUpgrade, peer: SocketAddr) -> Response {
    let max = shared.config.max_message;
    let mut response = upgrade
        .max_message_size(max)
        .max_frame_size(max)
        .on_upgrade(move |socket| client(shared, socket, peer));
    if let Ok(id) = HeaderValue::from_str(&new_connection_id()) {
        response.headers_mut().insert(HEADER_CONNECTION_ID, id);
    }
    response
}

/// Serves one WebSocket client until it leaves, is too slow, or sends a
/// message over the limit.
async fn client(shared: Arc<Shared>, socket: WebSocket, peer: SocketAddr) {
    let (sink, mut source) = socket.split();
    let (tx, rx) = mpsc::channel::<ToClient>(8);
    let (close_tx, close_rx) = tokio::sync::oneshot::channel::<(u16, String)>();
    let kick = Arc::new(Notify::new());
    let client = shared.join(tx.clone(), kick.clone());
    let writer = tokio::spawn(write(sink, rx, close_rx));
    let close = loop {
        let next = tokio::select! {
            m = source.next() => m,
            () = kick.notified() => break Some((POLICY, "client too slow to receive".to_owned())),
        };
        match next {
            Some(Ok(Message::Text(text))) => shared.input(client, text.as_str()).await,
            Some(Ok(Message::Binary(_))) => {
                let _ = tx
                    .send((Stream::Connection, BINARY_REFUSED.to_owned()))
                    .await;
            }
            Some(Ok(Message::Close(_))) | None => break None,
            Some(Ok(_)) => {}
            Some(Err(e)) => break too_big(e).map(|reason| (TOO_BIG, reason)),
        }
    };
    if let Some((code, reason)) = close {
        shared.log_line(&format!("{peer}: closing with {code}: {reason}"));
        let _ = close_tx.send((code, reason));
    }
    drop(tx);
    shared.leave(client).await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
}

/// Sends the hub's messages, then a close frame when one is asked for.
async fn write(
    mut sink: SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<ToClient>,
    mut close: tokio::sync::oneshot::Receiver<(u16, String)>,
) {
    loop {
        // A close asked for wins over the end of the hub's messages, which
        // follows it when the client leaves.
        tokio::select! {
            biased;
            c = &mut close => {
                if let Ok((code, reason)) = c {
                    let frame = CloseFrame { code, reason: reason.into() };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                }
                break;
            }
            m = rx.recv() => match m {
                Some((_, text)) => {
                    if sink.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                None => break,
            },
        }
    }
    let _ = sink.close().await;
}

/// The reason to close with 1009 when `e` is a message over the limit.
fn too_big(e: axum::Error) -> Option<String> {
    let inner = e.into_inner();
    match inner.downcast_ref::<WsError>() {
        Some(WsError::Capacity(CapacityError::MessageTooLong { size, max_size })) => Some(format!(
            "message of {size} bytes exceeds the {max_size}-byte limit"
        )),
        Some(WsError::Capacity(other)) => Some(other.to_string()),
        _ => None,
    }
}
