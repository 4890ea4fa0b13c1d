//! The WebSocket profile: one JSON-RPC message per text frame, each run
//! through the library's [`Gate`] before the router sees it: the first
//! message must be an `initialize` request (else close 1002), a second
//! `initialize` is answered with an error, a batch with one `-32600`
//! (`id: null`). The upgrade response carries `Acp-Connection-Id`. A
//! message over `--max-message-bytes` is answered (when it is a request
//! whose id its first bytes hold, up to twice the limit) and the socket
//! closed with 1009; a client too slow to take its messages is closed with
//! 1008.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::http::HeaderValue;
use axum::response::Response;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};

use crate::http::{new_connection_id, no_random_source, HEADER_CONNECTION_ID};
use crate::hub::{Charge, Kick, Member, Shared, ToClient};
use crate::server::{reply_line, text};
use acp_bridge::users::Identity;
use acp_codec::remote::{oversize, Checked, CloseCode, Gate, RemoteError, Stream};
use axum::http::StatusCode;

/// Bytes read from a socket at a time: an idle connection holds this
/// much, not tungstenite's default 128 KiB (a larger message still grows
/// its buffer as it arrives).
const READ_CHUNK: usize = 8 * 1024;

/// How much of an oversized message is looked at for its request id.
const OVERSIZE_HEAD: usize = 4096;

const BINARY_REFUSED: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"binary websocket messages are refused: send each json-rpc message as one text message"}}"#;

/// Why the bridge closes a socket, and the message to send just before.
struct Close {
    code: CloseCode,
    reason: String,
    last: Option<String>,
}

/// Accepts the upgrade: the client joins the hub before the `101` (so a
/// user's connection limit is exact), and is served once the handshake is
/// done; a failed handshake leaves the hub again.
pub fn upgrade(
    shared: Arc<Shared>,
    upgrade: WebSocketUpgrade,
    peer: SocketAddr,
    who: Identity,
) -> Response {
    let id = match new_connection_id() {
        Ok(id) => id,
        Err(e) => return no_random_source(e),
    };
    let (tx, rx) = mpsc::unbounded_channel::<ToClient>();
    let kick = Kick::new();
    let member = match shared.join(&who, tx.clone(), kick.clone()) {
        Ok(m) => m,
        Err(e) => {
            shared.log_line(&format!("{peer} {}: refused: {e}", who.tag()));
            let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::FORBIDDEN);
            return text(status, &e.to_string());
        }
    };
    let joined = Joined {
        shared: shared.clone(),
        member: Some(member),
    };
    // Messages up to twice the limit are read whole, so a request just over
    // it is answered before the close; larger ones close at once.
    let read_limit = shared.config.max_message.saturating_mul(2);
    let mut response = upgrade
        .read_buffer_size(READ_CHUNK)
        .max_message_size(read_limit)
        .max_frame_size(read_limit)
        .on_upgrade(move |socket| client(joined, socket, peer, who, (tx, rx), kick));
    if let Ok(id) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER_CONNECTION_ID, id);
    }
    response
}

/// A client that joined the hub; leaves it when dropped unserved (the
/// handshake after the `101` failed).
struct Joined {
    shared: Arc<Shared>,
    member: Option<Member>,
}

impl Drop for Joined {
    fn drop(&mut self) {
        if let Some(member) = self.member.take() {
            let shared = self.shared.clone();
            tokio::spawn(async move { shared.leave(member).await });
        }
    }
}

/// Serves one WebSocket client until it leaves, is too slow, or sends a
/// message over the limit.
async fn client(
    mut joined: Joined,
    socket: WebSocket,
    peer: SocketAddr,
    who: Identity,
    (tx, rx): (
        mpsc::UnboundedSender<ToClient>,
        mpsc::UnboundedReceiver<ToClient>,
    ),
    kick: Arc<Kick>,
) {
    let shared = joined.shared.clone();
    let Some(client) = joined.member.take() else {
        return;
    };
    let (sink, mut source) = socket.split();
    let (close_tx, close_rx) = tokio::sync::oneshot::channel::<Close>();
    let tag = format!("{peer} {}", who.tag());
    let slow = shared.config.slow_client;
    let writer = tokio::spawn(write(sink, rx, close_rx, kick.clone(), slow));
    shared.log_line(&format!("{tag}: websocket connected ({client})"));
    let close = read_frames(&shared, client, &mut source, &tx, &kick).await;
    if let Some(close) = close {
        shared.log_line(&format!(
            "{tag}: closing with {}: {}",
            close.code, close.reason
        ));
        let _ = close_tx.send(close);
    }
    drop(tx);
    shared.leave(client).await;
    finish(writer).await;
    shared.log_line(&format!("{tag}: websocket left ({client})"));
}

/// Lets the writer send what is queued and the close frame, for at most
/// 5 s; then stops it, which closes the socket and drops (uncharges) what
/// is still queued.
async fn finish(mut writer: tokio::task::JoinHandle<()>) {
    if tokio::time::timeout(std::time::Duration::from_secs(5), &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
}

/// Reads the client's frames into the hub until the client leaves or the
/// connection must close (the close to send, then).
async fn read_frames(
    shared: &Arc<Shared>,
    client: Member,
    source: &mut SplitStream<WebSocket>,
    tx: &mpsc::UnboundedSender<ToClient>,
    kick: &Kick,
) -> Option<Close> {
    let mut gate = Gate::new();
    // The first message must come within `--first-message-secs`.
    let first_wait = shared.config.door.first_message;
    let first_deadline = tokio::time::sleep(first_wait);
    tokio::pin!(first_deadline);
    let mut waiting = true;
    loop {
        let next = tokio::select! {
            m = source.next() => m,
            () = &mut first_deadline, if waiting => return Some(Close {
                code: CloseCode::POLICY_VIOLATION,
                reason: format!("no message within {} s", first_wait.as_secs()),
                last: None,
            }),
            () = kick.notified() => return Some(Close {
                code: CloseCode::POLICY_VIOLATION,
                reason: kick.reason(),
                last: None,
            }),
        };
        waiting = false;
        let text = match next {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(_))) => {
                let refused = BINARY_REFUSED.to_owned();
                let _ = tx.send((Stream::Connection, refused, Charge::free()));
                continue;
            }
            Some(Ok(Message::Close(_))) | None => return None,
            Some(Ok(_)) => continue,
            Some(Err(e)) => {
                return too_big(e).map(|reason| Close {
                    code: CloseCode::MESSAGE_TOO_BIG,
                    reason,
                    last: None,
                })
            }
        };
        match check(&mut gate, text.as_str(), shared.config.max_message) {
            Ok(true) => shared.input(client, text.as_str()).await,
            Ok(false) => {}
            // The answer goes just before the close frame.
            Err(e) => match e.close_code() {
                Some(code) => {
                    return Some(Close {
                        code,
                        reason: e.to_string(),
                        last: reply_line(&e),
                    })
                }
                None => {
                    if let Some(reply) = reply_line(&e) {
                        let _ = tx.send((Stream::Connection, reply, Charge::free()));
                    }
                }
            },
        }
    }
}

/// The transport's rules for one text frame: its size, then the gate.
/// `Ok(true)` when the message goes on to the router, `Ok(false)` when it
/// is dropped (a response before `initialize` answers nothing the bridge
/// sent).
fn check(gate: &mut Gate, text: &str, limit: usize) -> Result<bool, RemoteError> {
    if text.len() > limit {
        let head = text
            .as_bytes()
            .get(..OVERSIZE_HEAD)
            .unwrap_or(text.as_bytes());
        return Err(oversize(head, text.len(), limit));
    }
    Ok(matches!(gate.check(text)?, Checked::Forward(_)))
}

/// Sends the hub's messages, then a close frame when one is asked for. A
/// message the client takes longer than `slow` to accept ends it (`kick`).
async fn write(
    mut sink: SplitSink<WebSocket, Message>,
    mut rx: mpsc::UnboundedReceiver<ToClient>,
    mut close: tokio::sync::oneshot::Receiver<Close>,
    kick: Arc<Kick>,
    slow: std::time::Duration,
) {
    loop {
        // A close asked for wins over the end of the hub's messages, which
        // follows it when the client leaves.
        tokio::select! {
            biased;
            c = &mut close => {
                if let Ok(c) = c {
                    if let Some(text) = c.last {
                        let _ = sink.send(Message::Text(text.into())).await;
                    }
                    let frame = CloseFrame { code: c.code.0, reason: c.reason.into() };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                }
                break;
            }
            m = rx.recv() => match m {
                // The charge goes back once the message is on the socket.
                Some((_, text, _charge)) => {
                    match tokio::time::timeout(slow, sink.send(Message::Text(text.into()))).await {
                        Ok(Ok(())) => {}
                        Ok(Err(_)) => return,
                        Err(_) => {
                            kick.kick("client too slow to receive");
                            return;
                        }
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
