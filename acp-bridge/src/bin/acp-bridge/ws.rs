//! The WebSocket profile's I/O: the upgrade (with `Acp-Connection-Id`),
//! a reader handing each frame to the core, a writer sending what the
//! core queues for the connection and the close it asks for. What a frame
//! means, and every answer and close, is the core's.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::{CloseFrame, Frame};
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::driver::{Driver, ToConn};
use crate::respond::{answer, random_name};
use acp_codec::remote::{
    ClientText, ConnectionId, Ending, Principal, HEADER_CONNECTION_ID, HEADER_MAX_MESSAGE,
};

/// Bytes read from a socket at a time: an idle connection holds this
/// much, not tungstenite's default 128 KiB (a larger message still grows
/// its buffer as it arrives).
const READ_CHUNK: usize = 8 * 1024;

/// A message longer than this goes out as frames of this size (one
/// message, fragmented as WebSocket allows), each sent from the message's
/// own bytes: the socket's write buffer then holds one frame, never a
/// copy of a long message (which it would keep allocated afterwards),
/// and the client's WebSocket layer builds the message from the frames'
/// payloads instead of holding its whole frame in its read buffer.
const FRAGMENT: usize = 256 * 1024;

/// Bytes of frames buffered before they are written to the socket.
const WRITE_BUFFER: usize = 128 * 1024;

type Socket = WebSocketStream<Heard<TokioIo<Upgraded>>>;

/// A WebSocket from which nothing has come for this long is pinged (any
/// byte counts, a pong among them).
const PING_AFTER: Duration = Duration::from_secs(8);

/// A WebSocket from which nothing has come for this long is broken: a
/// connection gone without a FIN (a proxy that stopped relaying, a
/// laptop asleep) is detached for resume as a reset one is. Shorter
/// than `acp-client`'s 30 s, so that its reconnect finds the connection
/// detached and resumes it; a client that answers pings (every
/// WebSocket client does) is never silent this long.
const DEAD_AFTER: Duration = Duration::from_secs(20);

/// The client's socket, stamping the time of every read that brings
/// bytes: liveness is measured in bytes, so a long message still
/// arriving keeps its connection alive.
struct Heard<T> {
    io: T,
    /// Milliseconds from `since` to the last read that brought bytes.
    last: Arc<AtomicU64>,
    since: Instant,
}

impl<T> Heard<T> {
    fn new(io: T) -> Self {
        Self {
            io,
            last: Arc::default(),
            since: Instant::now(),
        }
    }
}

/// How long the client has been silent, by its socket's stamp.
fn quiet(last: &AtomicU64, since: Instant) -> Duration {
    since
        .elapsed()
        .saturating_sub(Duration::from_millis(last.load(Ordering::Relaxed)))
}

impl<T: AsyncRead + Unpin> AsyncRead for Heard<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            let at = u64::try_from(self.since.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.last.store(at, Ordering::Relaxed);
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Heard<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Returns how long the client was silent once that reaches
/// [`DEAD_AFTER`]; while it is silent past [`PING_AFTER`], asks the
/// writer for a ping (`ping`) every 4 s. Wakes only at those times.
async fn silence(last: Arc<AtomicU64>, since: Instant, ping: Arc<Notify>) -> Duration {
    loop {
        let quiet = quiet(&last, since);
        if quiet >= DEAD_AFTER {
            return quiet;
        }
        let wait = if quiet >= PING_AFTER {
            ping.notify_one();
            (DEAD_AFTER - quiet).min(Duration::from_secs(4))
        } else {
            PING_AFTER - quiet
        };
        tokio::time::sleep(wait).await;
    }
}

/// A WebSocket upgrade request (HTTP/1.1): its key, and the connection
/// to take over once the `101` is sent.
pub struct Upgrade {
    key: HeaderValue,
    on_upgrade: OnUpgrade,
}

impl Upgrade {
    /// The upgrade `req` asks for (`GET` with `Connection: upgrade`,
    /// `Upgrade: websocket`, version 13 and a key), taken out of it; `None`
    /// when it asks for none (then `req` is as it was).
    pub fn take(req: &mut Request) -> Option<Self> {
        let headers = req.headers();
        let has = |name: header::HeaderName, token: &str| {
            headers.get_all(name).iter().any(|v| {
                v.to_str()
                    .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
            })
        };
        let asks = req.method() == Method::GET
            && req.version() <= Version::HTTP_11
            && has(header::CONNECTION, "upgrade")
            && has(header::UPGRADE, "websocket")
            && headers
                .get(header::SEC_WEBSOCKET_VERSION)
                .is_some_and(|v| v == "13");
        let key = headers.get(header::SEC_WEBSOCKET_KEY).cloned();
        match (asks, key) {
            (true, Some(key)) => {
                let on_upgrade = req.extensions_mut().remove::<OnUpgrade>()?;
                Some(Self { key, on_upgrade })
            }
            _ => None,
        }
    }
}

/// Accepts the upgrade: the connection opens in the core before the `101`
/// (so a user's connection limit is exact), and is served once the
/// handshake is done; a failed handshake closes it again. A client that
/// states the longest message it reads (`Acp-Bridge-Max-Message-Bytes`)
/// is sent nothing longer.
pub fn upgrade(
    driver: Arc<Driver>,
    upgrade: Upgrade,
    peer: SocketAddr,
    who: Principal,
    tag: String,
    headers: &HeaderMap,
) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<ToConn>();
    let kill = Arc::new(Notify::new());
    let random = random_name();
    // A refusal is logged with `peer` as the core reports it.
    let opened = driver.with_from(Some(peer), |s, now| s.open_websocket(now, &who, random));
    let (conn, id) = match opened {
        Ok(c) => c,
        Err(r) => return answer(r),
    };
    driver.attach(conn, tx, kill.clone(), peer);
    if let Some(max) = client_limit(headers) {
        driver.with(|s, _| s.set_client_limit(conn, max));
    }
    let opened = Opened {
        driver: driver.clone(),
        conn: Some(conn),
    };
    let read_limit = driver.with(|s, _| s.websocket_read_limit());
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_CHUNK)
        .write_buffer_size(WRITE_BUFFER)
        .max_message_size(Some(read_limit))
        .max_frame_size(Some(read_limit));
    let Upgrade { key, on_upgrade } = upgrade;
    let tag = format!("{peer} {tag}");
    tokio::spawn(async move {
        let upgraded = match on_upgrade.await {
            Ok(u) => u,
            Err(e) => {
                // `opened`, dropped here, closes the connection in the core.
                opened
                    .driver
                    .log_line(&format!("{tag}: upgrade failed: {e}"));
                return;
            }
        };
        let io = Heard::new(TokioIo::new(upgraded));
        let socket = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
        client(opened, socket, tag, rx, kill).await;
    });
    let accept = derive_accept_key(key.as_bytes());
    let mut response = (
        StatusCode::SWITCHING_PROTOCOLS,
        [
            (header::CONNECTION, "upgrade"),
            (header::UPGRADE, "websocket"),
            (header::SEC_WEBSOCKET_ACCEPT, accept.as_str()),
        ],
        Body::empty(),
    )
        .into_response();
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
            self.driver.closed(conn, Ending::Broken);
        }
    }
}

/// Serves one WebSocket client until it leaves or the core closes it.
async fn client(
    mut opened: Opened,
    socket: Socket,
    tag: String,
    rx: mpsc::UnboundedReceiver<ToConn>,
    kill: Arc<Notify>,
) {
    let driver = opened.driver.clone();
    let Some(conn) = opened.conn.take() else {
        return;
    };
    let (last, since) = (socket.get_ref().last.clone(), socket.get_ref().since);
    let (sink, mut source) = socket.split();
    let done = Arc::new(Notify::new());
    let ping = Arc::new(Notify::new());
    let writer = tokio::spawn(write(
        driver.clone(),
        (conn, tag.clone()),
        sink,
        rx,
        (kill, ping.clone()),
        done.clone(),
    ));
    driver.log_line(&format!("{tag}: websocket connected ({conn})"));
    let ending = tokio::select! {
        ending = read_frames(&driver, conn, &mut source) => ending,
        // The writer stopped: the core closed the connection (it knows),
        // or the socket failed.
        () = done.notified() => Ending::Broken,
        quiet = silence(last, since, ping) => {
            driver.log_line(&format!(
                "{tag}: nothing from the client in {} s: counted as broken",
                quiet.as_secs()
            ));
            Ending::Broken
        }
    };
    driver.closed(conn, ending);
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

/// Hands the client's frames to the core until the client leaves: with
/// a close frame ([`Ending::Clean`]), or without one.
async fn read_frames(
    driver: &Arc<Driver>,
    conn: ConnectionId,
    source: &mut SplitStream<Socket>,
) -> Ending {
    while let Some(next) = source.next().await {
        match next {
            Ok(Message::Text(text)) => {
                // Handed over: a long prompt goes to the agent from these bytes.
                let text = ClientText::new(text);
                driver.with(|s, now| s.handle_text(now, conn, text));
            }
            Ok(Message::Binary(_)) => driver.with(|s, now| s.handle_binary(now, conn)),
            Ok(Message::Close(_)) => return Ending::Clean,
            Ok(_) => {}
            Err(e) => {
                if let Some(size) = too_big(&e) {
                    driver.with(|s, now| s.handle_too_large(now, conn, size));
                }
                return Ending::Broken;
            }
        }
    }
    Ending::Broken
}

/// Sends what the core queues for `conn`, reporting each message sent;
/// on a close, its last message and the close frame. A write the core
/// gave up on (`kill`: the client too slow, or the core closed the
/// connection while a write was stuck) drops what is queued behind it and
/// goes straight to the close: a client that reads nothing must not keep
/// its close (and its log line) waiting behind messages it will never
/// read.
async fn write(
    driver: Arc<Driver>,
    (conn, tag): (ConnectionId, String),
    mut sink: SplitSink<Socket, Message>,
    mut rx: mpsc::UnboundedReceiver<ToConn>,
    (kill, ping): (Arc<Notify>, Arc<Notify>),
    done: Arc<Notify>,
) {
    // Whether the socket still takes writes (a close that timed out: no).
    let mut alive = true;
    // The lengths of the messages buffered and not yet written.
    let mut fed: Vec<usize> = Vec::new();
    // Both waits armed once and kept across messages (a wait made and
    // dropped at each message locks its `Notify` twice), made again only
    // once they fire.
    let mut pinged = std::pin::pin!(ping.notified());
    let mut killed = std::pin::pin!(kill.notified());
    loop {
        let m = tokio::select! {
            m = rx.recv() => match m {
                Some(m) => m,
                None => break,
            },
            () = &mut pinged => {
                pinged.set(ping.notified());
                if sink.send(Message::Ping(Bytes::new())).await.is_err() {
                    break;
                }
                continue;
            }
        };
        match m {
            ToConn::Send(_, text) | ToConn::Event(_, _, text) | ToConn::Answer(text) => {
                let len = text.len();
                // More queued behind it: buffered now, written with the
                // last of them (one write to the socket for a burst of
                // messages, not one each); the core hears they were sent
                // once they are.
                let more = !rx.is_empty() && len <= FRAGMENT;
                tokio::select! {
                    sent = write_text(&mut sink, text, more) => {
                        if sent.is_err() {
                            break;
                        }
                        fed.push(len);
                        if !more {
                            driver.with(|s, now| {
                                for len in fed.drain(..) {
                                    s.handle_sent(now, conn, len);
                                }
                            });
                        }
                    }
                    () = &mut killed => {
                        // The core closed the connection: its close is
                        // queued (the driver queues it before the kill).
                        if let Some(close) = skip_to_close(&mut rx).await {
                            alive = send_close(&driver, &tag, &mut sink, close).await;
                        }
                        break;
                    }
                }
            }
            // Streamable HTTP's alone.
            ToConn::Read { .. } => {}
            close @ ToConn::Close { .. } => {
                alive = send_close(&driver, &tag, &mut sink, close).await;
                break;
            }
        }
    }
    done.notify_one();
    if alive {
        let _ = sink.close().await;
    }
}

/// Drops the messages queued before the close; the close, if one comes.
async fn skip_to_close(rx: &mut mpsc::UnboundedReceiver<ToConn>) -> Option<ToConn> {
    while let Some(m) = rx.recv().await {
        if matches!(m, ToConn::Close { .. }) {
            return Some(m);
        }
    }
    None
}

/// Logs a close the core asked for and sends its last message and the
/// close frame, for at most 5 s: `false` when the socket took nothing
/// more in that time (it is then dropped, not closed).
async fn send_close(
    driver: &Driver,
    tag: &str,
    sink: &mut SplitSink<Socket, Message>,
    close: ToConn,
) -> bool {
    let ToConn::Close { code, reason, last } = close else {
        return true;
    };
    driver.log_line(&format!("{tag}: closing with {code}: {reason}"));
    let close = async {
        if let Some(text) = last {
            let _ = send_text(sink, text).await;
        }
        let frame = CloseFrame {
            code: CloseCode::from(code.0),
            reason: reason.into(),
        };
        let _ = sink.send(Message::Close(Some(frame))).await;
    };
    tokio::time::timeout(Duration::from_secs(5), close)
        .await
        .is_ok()
}

/// The longest message the client reads, when its upgrade request says
/// (`Acp-Bridge-Max-Message-Bytes`): nothing longer is sent to it.
fn client_limit(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(HEADER_MAX_MESSAGE)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Sends `text` as [`send_text`] does, or only buffers it (as one frame)
/// when `more` messages are about to follow.
async fn write_text(
    sink: &mut SplitSink<Socket, Message>,
    text: String,
    more: bool,
) -> Result<(), WsError> {
    if more {
        sink.feed(Message::Text(text.into())).await
    } else {
        send_text(sink, text).await
    }
}

/// Sends `text` as one text message: one frame, or frames of
/// [`FRAGMENT`] bytes cut from the message's own bytes (no copy of the
/// whole), flushed once at the end.
async fn send_text(sink: &mut SplitSink<Socket, Message>, text: String) -> Result<(), WsError> {
    if text.len() <= FRAGMENT {
        return sink.send(Message::Text(text.into())).await;
    }
    let bytes = Bytes::from(text);
    let mut at = 0;
    while at < bytes.len() {
        let end = bytes.len().min(at + FRAGMENT);
        let opcode = if at == 0 { Data::Text } else { Data::Continue };
        let frame = Frame::message(
            bytes.slice(at..end),
            OpCode::Data(opcode),
            end == bytes.len(),
        );
        sink.feed(Message::Frame(frame)).await?;
        at = end;
    }
    sink.flush().await
}

/// The size of a message over the read limit, when `e` is one.
fn too_big(e: &WsError) -> Option<usize> {
    match e {
        WsError::Capacity(CapacityError::MessageTooLong { size, .. }) => Some(*size),
        WsError::Capacity(_) => Some(usize::MAX),
        _ => None,
    }
}
