//! The Streamable HTTP profile of `/acp`.
//!
//! - `POST` with an `initialize` request and no `Acp-Connection-Id` opens a
//!   connection: the response body is the agent's answer, the
//!   `Acp-Connection-Id` header names the connection. Every other `POST`
//!   carries that header (and `Acp-Session-Id` for a session's messages: the
//!   session-scoped methods, or any `params.sessionId`) and is answered
//!   `202` at once; answers come on the SSE streams.
//! - `GET` (`Accept: text/event-stream`) with `Acp-Connection-Id` opens the
//!   connection's stream; adding `Acp-Session-Id` opens that session's
//!   stream. One receiver per stream (another gets `409`). Messages for a
//!   stream nobody reads yet wait for it, counted against
//!   `--max-buffered-bytes`.
//! - `DELETE` with `Acp-Connection-Id` closes the connection.
//!
//! Where a message goes: a request or notification with `params.sessionId`
//! to that session's stream, others to the connection stream; a response to
//! the stream its request was posted for (`session/load`'s to the
//! connection stream). A JSON array (a batch) is answered `400` with one
//! `-32600` error whose `id` is `null`.

// Handlers return `Result<Response, Response>`: the error is the HTTP answer
// itself, built once per request, so its size does not matter.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_codec::acp::{Message, RawJson, RequestId};
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot, Notify};

use crate::bridge_router::ClientId;
use crate::server::{text, App};

/// The connection header of the transport.
pub const HEADER_CONNECTION_ID: &str = "acp-connection-id";
/// The session header of the transport.
pub const HEADER_SESSION_ID: &str = "acp-session-id";
/// Longest wait for the agent's answer to `initialize`.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);

/// Methods whose `POST` must name the session in `Acp-Session-Id`.
const SESSION_SCOPED: &[&str] = &[
    "session/cancel",
    "session/close",
    "session/delete",
    "session/fork",
    "session/load",
    "session/prompt",
    "session/resume",
    "session/set_config_option",
    "session/set_mode",
    "session/set_model",
];

const BATCH_REFUSED: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"json-rpc batches are not supported"}}"#;

/// The open Streamable HTTP connections, by `Acp-Connection-Id`.
#[derive(Default)]
pub struct Connections {
    map: Mutex<HashMap<String, Arc<Conn>>>,
}

impl Connections {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Conn>>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn get(&self, headers: &HeaderMap) -> Result<Arc<Conn>, Response> {
        let Some(id) = header_str(headers, HEADER_CONNECTION_ID) else {
            return Err(text(StatusCode::BAD_REQUEST, "missing Acp-Connection-Id"));
        };
        self.lock()
            .get(id)
            .cloned()
            .ok_or_else(|| text(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id"))
    }
}

/// One Streamable HTTP connection: a client of the hub whose messages are
/// sorted into SSE streams.
struct Conn {
    id: String,
    client: ClientId,
    state: Mutex<ConnState>,
    /// A reader took a message (room in the buffer).
    taken: Notify,
    /// `DELETE` asked to close.
    stop: Notify,
}

#[derive(Default)]
struct ConnState {
    closed: bool,
    /// `None` is the connection stream; `Some(session)` a session's.
    streams: HashMap<Option<String>, Mailbox>,
    /// The stream each pending client request is answered on, by id.
    routes: HashMap<String, Option<String>>,
    /// The pending `initialize`: its id and where its answer goes.
    initialize: Option<(String, oneshot::Sender<String>)>,
    buffered: usize,
    last_seen: Option<Instant>,
}

#[derive(Default)]
struct Mailbox {
    queue: VecDeque<String>,
    leased: bool,
    wake: Arc<Notify>,
}

impl Conn {
    fn lock(&self) -> MutexGuard<'_, ConnState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A fresh, unguessable connection id: 128 bits of `SipHash` keyed by the
/// process's random hasher seed, over a counter.
pub fn new_connection_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut id = String::with_capacity(32);
    for half in 0..2u8 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_u8(half);
        let _ = write!(id, "{:016x}", h.finish());
    }
    id
}

/// Serves one Streamable HTTP request to `/acp`.
pub async fn handle(app: App, req: Request) -> Response {
    match *req.method() {
        Method::POST => post(app, req).await.unwrap_or_else(|r| r),
        Method::GET => get(app, req.headers()).unwrap_or_else(|r| r),
        Method::DELETE => delete(app, req.headers()).unwrap_or_else(|r| r),
        _ => text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
    }
}

async fn post(app: App, req: Request) -> Result<Response, Response> {
    let is_json = header_str(req.headers(), header::CONTENT_TYPE.as_str())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "content-type must be application/json",
        ));
    }
    let headers = req.headers().clone();
    let max = app.shared.config.max_message;
    let body = axum::body::to_bytes(req.into_body(), max)
        .await
        .map_err(|_| {
            text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("body exceeds the {max}-byte limit"),
            )
        })?;
    let body = String::from_utf8(body.into())
        .map_err(|_| text(StatusCode::BAD_REQUEST, "body is not utf-8"))?;
    if body.trim_start().starts_with('[') {
        let json = [(header::CONTENT_TYPE, "application/json")];
        return Err((StatusCode::BAD_REQUEST, json, BATCH_REFUSED).into_response());
    }
    let message =
        Message::decode(&body).map_err(|e| text(StatusCode::BAD_REQUEST, &e.to_string()))?;
    let initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
    let Some(_) = header_str(&headers, HEADER_CONNECTION_ID) else {
        if !initialize {
            return Err(text(
                StatusCode::BAD_REQUEST,
                "missing Acp-Connection-Id: the first message must be initialize",
            ));
        }
        let key = message.id().map(id_key).unwrap_or_default();
        return Ok(open(app, key, &body).await);
    };
    if initialize {
        return Err(text(
            StatusCode::BAD_REQUEST,
            "initialize is not allowed on an open connection",
        ));
    }
    let conn = app.http.get(&headers)?;
    let session = header_str(&headers, HEADER_SESSION_ID);
    let route = route_of(&message, session).map_err(|e| text(StatusCode::BAD_REQUEST, e))?;
    {
        let mut st = conn.lock();
        st.last_seen = Some(Instant::now());
        if let (Message::Request(r), Some(route)) = (&message, route) {
            st.routes.insert(id_key(&r.id), route);
        }
    }
    app.shared.input(conn.client, &body).await;
    Ok(StatusCode::ACCEPTED.into_response())
}

/// The stream a request's answer goes to (`None`: not a request), after the
/// `Acp-Session-Id` checks.
fn route_of(
    message: &Message<'_>,
    header: Option<&str>,
) -> Result<Option<Option<String>>, &'static str> {
    let (method, params, is_request) = match message {
        Message::Request(r) => (&*r.method, r.params.as_ref(), true),
        Message::Notification(n) => (&*n.method, n.params.as_ref(), false),
        Message::Response(_) | Message::Error(_) => return Ok(None),
    };
    let from_params = params.and_then(session_of);
    if (SESSION_SCOPED.contains(&method) || from_params.is_some()) && header.is_none() {
        return Err("missing Acp-Session-Id");
    }
    if let (Some(h), Some(p)) = (header, from_params.as_deref()) {
        if h != p {
            return Err("Acp-Session-Id does not match params.sessionId");
        }
    }
    let session = header
        .map(str::to_owned)
        .or(from_params.map(Cow::into_owned));
    let route = if method == "session/load" {
        None
    } else {
        session
    };
    Ok(is_request.then_some(route))
}

/// `params.sessionId` when it is a string.
fn session_of<'a>(params: &'a RawJson<'_>) -> Option<Cow<'a, str>> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "sessionId")]
        session_id: Option<Cow<'a, str>>,
    }
    params.parse::<Params<'a>>().ok().and_then(|p| p.session_id)
}

fn id_key(id: &RequestId<'_>) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
}

/// `initialize` without a connection: opens one and answers with the
/// agent's response and the new `Acp-Connection-Id`.
async fn open(app: App, key: String, body: &str) -> Response {
    if app.http.lock().len() >= app.shared.config.max_http_connections {
        return text(StatusCode::SERVICE_UNAVAILABLE, "too many connections");
    }
    let (tx, rx) = mpsc::channel::<String>(8);
    let kick = Arc::new(Notify::new());
    let (answer_tx, answer_rx) = oneshot::channel();
    let client = app.shared.join(tx, kick.clone());
    let conn = Arc::new(Conn {
        id: new_connection_id(),
        client,
        state: Mutex::new(ConnState {
            initialize: Some((key, answer_tx)),
            last_seen: Some(Instant::now()),
            ..ConnState::default()
        }),
        taken: Notify::new(),
        stop: Notify::new(),
    });
    app.http.lock().insert(conn.id.clone(), conn.clone());
    tokio::spawn(run(app.clone(), conn.clone(), rx, kick));
    app.shared.input(client, body).await;
    match tokio::time::timeout(INITIALIZE_TIMEOUT, answer_rx).await {
        Ok(Ok(answer)) => {
            let mut resp = ([(header::CONTENT_TYPE, "application/json")], answer).into_response();
            if let Ok(v) = HeaderValue::from_str(&conn.id) {
                resp.headers_mut().insert(HEADER_CONNECTION_ID, v);
            }
            resp
        }
        _ => {
            conn.stop.notify_one();
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "initialize failed: no answer from the agent",
            )
        }
    }
}

/// Sorts the hub's messages for `conn` into its streams until the client
/// deletes the connection, falls behind, or stays away too long.
async fn run(app: App, conn: Arc<Conn>, mut rx: mpsc::Receiver<String>, kick: Arc<Notify>) {
    let config = &app.shared.config;
    let mut tick = tokio::time::interval(Duration::from_secs(1).min(config.http_idle));
    let why = loop {
        tokio::select! {
            m = rx.recv() => match m {
                Some(text) => {
                    if let Err(e) = sort(&conn, text, config.max_buffered_bytes, config.max_session_streams).await {
                        break e;
                    }
                }
                None => break "closed".to_owned(),
            },
            () = kick.notified() => break "client too slow to read its streams".to_owned(),
            () = conn.stop.notified() => break "deleted".to_owned(),
            _ = tick.tick() => {
                if idle(&conn, config.http_idle) {
                    break "idle".to_owned();
                }
            }
        }
    };
    app.http.lock().remove(&conn.id);
    {
        let mut st = conn.lock();
        st.closed = true;
        st.initialize = None;
        for mailbox in st.streams.values() {
            mailbox.wake.notify_one();
        }
    }
    if why != "deleted" {
        app.shared
            .log_line(&format!("http connection {} closed: {why}", conn.id));
    }
    app.shared.leave(conn.client).await;
}

fn idle(conn: &Conn, limit: Duration) -> bool {
    let st = conn.lock();
    let reading = st.streams.get(&None).is_some_and(|m| m.leased);
    !reading && st.last_seen.is_some_and(|t| t.elapsed() > limit)
}

/// Puts one message on the stream it belongs to, first waiting while the
/// connection holds more than `max_buffered` bytes nobody has read.
async fn sort(
    conn: &Conn,
    text: String,
    max_buffered: usize,
    max_streams: usize,
) -> Result<(), String> {
    let stream = match Message::decode(&text) {
        Ok(Message::Request(r)) => r.params.as_ref().and_then(session_of).map(Cow::into_owned),
        Ok(Message::Notification(n)) => n.params.as_ref().and_then(session_of).map(Cow::into_owned),
        Ok(m) => {
            let key = m.id().map(id_key).unwrap_or_default();
            let mut st = conn.lock();
            if st.initialize.as_ref().is_some_and(|(k, _)| *k == key) {
                if let Some((_, answer)) = st.initialize.take() {
                    let _ = answer.send(text);
                }
                return Ok(());
            }
            st.routes.remove(&key).flatten()
        }
        Err(_) => None,
    };
    loop {
        let wait = conn.taken.notified();
        {
            let mut st = conn.lock();
            if st.buffered == 0 || st.buffered + text.len() <= max_buffered {
                if stream.is_some()
                    && !st.streams.contains_key(&stream)
                    && st.streams.len() > max_streams
                {
                    return Err(format!("more than {max_streams} session streams"));
                }
                st.buffered += text.len();
                let mailbox = st.streams.entry(stream).or_default();
                mailbox.queue.push_back(text);
                mailbox.wake.notify_one();
                return Ok(());
            }
        }
        wait.await;
    }
}

/// `GET`: the connection's SSE stream, or a session's.
fn get(app: App, headers: &HeaderMap) -> Result<Response, Response> {
    let accepts = header_str(headers, header::ACCEPT.as_str())
        .is_some_and(|a| a.contains("text/event-stream"));
    if !accepts {
        return Err(text(
            StatusCode::NOT_ACCEPTABLE,
            "accept must include text/event-stream",
        ));
    }
    let conn = app.http.get(headers)?;
    let stream = header_str(headers, HEADER_SESSION_ID).map(str::to_owned);
    {
        let mut st = conn.lock();
        if st.closed {
            return Err(text(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id"));
        }
        let full = st.streams.len() > app.shared.config.max_session_streams;
        if stream.is_some() && full && !st.streams.contains_key(&stream) {
            return Err(text(StatusCode::BAD_REQUEST, "too many session streams"));
        }
        let mailbox = st.streams.entry(stream.clone()).or_default();
        if mailbox.leased {
            return Err(text(
                StatusCode::CONFLICT,
                "this stream already has a receiver",
            ));
        }
        mailbox.leased = true;
        st.last_seen = Some(Instant::now());
    }
    let events = futures_util::stream::unfold(Lease { conn, stream }, |lease| async move {
        let event = lease.next().await?;
        Some((Ok::<_, Infallible>(event), lease))
    });
    Ok(sse(events))
}

fn sse(events: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    let mut resp = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    // Behind nginx: pass events on as they come.
    resp.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}

/// The right to read one stream, given back when the SSE response ends.
struct Lease {
    conn: Arc<Conn>,
    stream: Option<String>,
}

impl Lease {
    /// The next message as an SSE event; `None` once the connection closed
    /// and the stream is drained.
    async fn next(&self) -> Option<Event> {
        loop {
            let wake = {
                let mut st = self.conn.lock();
                let closed = st.closed;
                let mailbox = st.streams.get_mut(&self.stream)?;
                if let Some(text) = mailbox.queue.pop_front() {
                    st.buffered -= text.len();
                    self.conn.taken.notify_one();
                    return Some(Event::default().data(text));
                }
                if closed {
                    return None;
                }
                mailbox.wake.clone()
            };
            wake.notified().await;
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut st = self.conn.lock();
        st.last_seen = Some(Instant::now());
        if let Some(mailbox) = st.streams.get_mut(&self.stream) {
            mailbox.leased = false;
        }
    }
}

/// `DELETE`: closes the connection.
fn delete(app: App, headers: &HeaderMap) -> Result<Response, Response> {
    let conn = app.http.get(headers)?;
    app.http.lock().remove(&conn.id);
    conn.stop.notify_one();
    Ok(StatusCode::ACCEPTED.into_response())
}
