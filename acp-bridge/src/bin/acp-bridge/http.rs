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
//!   stream, when the session is the connection's user's: held by this
//!   connection or another of theirs, or left for a reattach (else `404`,
//!   no stream: another user's session, or one the bridge has not seen
//!   since it started, whose stream opens once its `session/load` or
//!   `session/resume` is sent). One receiver per stream (another gets `409`). Messages for a
//!   stream nobody reads yet wait for it, counted against
//!   `--max-buffered-bytes`.
//! - `DELETE` with `Acp-Connection-Id` closes the connection.
//!
//! The transport's rules (what a `POST` must carry, a batch answered `501`
//! with one `-32600` whose `id` is `null`) are the library's `check_post`;
//! which stream each message goes on is decided by its router.

// Handlers return `Result<Response, Response>`: the error is the HTTP answer
// itself, built once per request, so its size does not matter.
#![allow(clippy::result_large_err)]

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_codec::acp::{Message, RequestId};
use acp_codec::remote::{
    check_post, check_response_session, Post, RemoteError, Stream, DEFAULT_MAX_ID_LENGTH,
};
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};

use tokio::sync::{mpsc, oneshot, Notify};

use crate::hub::{Charge, Config, Kick, Member, ToClient};
use crate::server::{reply_line, text, App};
use acp_bridge::users::Identity;

/// The connection header of the transport.
pub const HEADER_CONNECTION_ID: &str = "acp-connection-id";
/// The session header of the transport.
pub const HEADER_SESSION_ID: &str = "acp-session-id";
/// Longest wait for the agent's answer to `initialize`.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);

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

    /// The connection a request names, when it is `who`'s: another
    /// user's connection is as unknown as one that does not exist.
    fn get(&self, headers: &HeaderMap, who: &Identity) -> Result<Arc<Conn>, Response> {
        let Some(id) = header_str(headers, HEADER_CONNECTION_ID) else {
            return Err(text(StatusCode::BAD_REQUEST, "missing Acp-Connection-Id"));
        };
        self.lock()
            .get(id)
            .filter(|c| c.user == who.user)
            .cloned()
            .ok_or_else(|| text(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id"))
    }
}

/// One Streamable HTTP connection: a client of the hub whose messages are
/// sorted into SSE streams.
struct Conn {
    id: String,
    client: Member,
    /// Its user (empty: the anonymous user).
    user: String,
    /// How log lines name the user.
    tag: String,
    state: Mutex<ConnState>,
    /// A reader took a message (room in the buffer).
    taken: Notify,
    /// `DELETE` asked to close.
    stop: Notify,
}

#[derive(Default)]
struct ConnState {
    closed: bool,
    streams: HashMap<Stream, Mailbox>,
    /// The pending `initialize`: its id and where its answer goes.
    initialize: Option<(String, oneshot::Sender<String>)>,
    buffered: usize,
    last_seen: Option<Instant>,
}

#[derive(Default)]
struct Mailbox {
    queue: VecDeque<(String, Charge)>,
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

/// A fresh, unguessable connection id: 128 bits from the operating
/// system's random source, in hex.
///
/// # Errors
///
/// The random source failing: without it there is no id nobody can
/// guess, and the connection is refused.
pub fn new_connection_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    let mut id = String::with_capacity(32);
    for b in bytes {
        let _ = write!(id, "{b:02x}");
    }
    Ok(id)
}

/// The answer when [`new_connection_id`] fails.
pub fn no_random_source(e: getrandom::Error) -> Response {
    text(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("no random source for a connection id: {e}"),
    )
}

/// Serves one Streamable HTTP request to `/acp`.
pub async fn handle(app: App, req: Request, who: Identity) -> Response {
    match *req.method() {
        Method::POST => post(app, req, who).await.unwrap_or_else(|r| r),
        Method::GET => get(app, req.headers(), &who).unwrap_or_else(|r| r),
        Method::DELETE => delete(app, req.headers(), &who).unwrap_or_else(|r| r),
        _ => text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
    }
}

async fn post(app: App, req: Request, who: Identity) -> Result<Response, Response> {
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
    let connection = header_str(&headers, HEADER_CONNECTION_ID);
    let session = header_str(&headers, HEADER_SESSION_ID);
    match check_post(&body, connection, session, DEFAULT_MAX_ID_LENGTH) {
        Ok(Post::Initialize(r)) => {
            let key = id_key(&r.id);
            Ok(open(app, key, &body, who).await)
        }
        Ok(Post::Message { message, .. }) => {
            let conn = app.http.get(&headers, &who)?;
            // A reply to the agent names the session its request came on.
            if let Message::Response(_) | Message::Error(_) = &message {
                let expected = message
                    .id()
                    .and_then(|id| app.shared.request_session(conn.client, id));
                check_response_session(expected.as_deref(), session).map_err(refusal)?;
            }
            conn.lock().last_seen = Some(Instant::now());
            app.shared.input(conn.client, &body).await;
            Ok(StatusCode::ACCEPTED.into_response())
        }
        Err(e) => Err(refusal(e)),
    }
}

/// The answer to a refused `POST`: its status, and its JSON-RPC reply as
/// the body when it has one.
fn refusal(e: RemoteError) -> Response {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    match reply_line(&e) {
        Some(json) => (status, [(header::CONTENT_TYPE, "application/json")], json).into_response(),
        None => text(status, &e.to_string()),
    }
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
async fn open(app: App, key: String, body: &str, who: Identity) -> Response {
    if app.http.lock().len() >= app.shared.config.max_http_connections {
        return text(StatusCode::SERVICE_UNAVAILABLE, "too many connections");
    }
    let id = match new_connection_id() {
        Ok(id) => id,
        Err(e) => return no_random_source(e),
    };
    let (tx, rx) = mpsc::unbounded_channel::<ToClient>();
    let kick = Kick::new();
    let (answer_tx, answer_rx) = oneshot::channel();
    let client = match app.shared.join(&who, tx, kick.clone()) {
        Ok(c) => c,
        Err(e) => {
            app.shared
                .log_line(&format!("http {}: refused: {e}", who.tag()));
            let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::FORBIDDEN);
            return text(status, &e.to_string());
        }
    };
    let conn = Arc::new(Conn {
        id,
        client,
        user: who.user.clone(),
        tag: who.tag(),
        state: Mutex::new(ConnState {
            initialize: Some((key, answer_tx)),
            last_seen: Some(Instant::now()),
            ..ConnState::default()
        }),
        taken: Notify::new(),
        stop: Notify::new(),
    });
    app.http.lock().insert(conn.id.clone(), conn.clone());
    app.shared.log_line(&format!(
        "http connection {} ({}) opened",
        conn.id, conn.tag
    ));
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
async fn run(
    app: App,
    conn: Arc<Conn>,
    mut rx: mpsc::UnboundedReceiver<ToClient>,
    kick: Arc<Kick>,
) {
    let config = &app.shared.config;
    let mut tick = tokio::time::interval(Duration::from_secs(1).min(config.http_idle));
    let why = loop {
        tokio::select! {
            m = rx.recv() => match m {
                Some(message) => {
                    if let Err(e) = sort(&conn, &kick, message, config).await {
                        break e;
                    }
                }
                None => break "closed".to_owned(),
            },
            () = kick.notified() => break kick.reason(),
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
    app.shared.log_line(&format!(
        "http connection {} ({}) closed: {why}",
        conn.id, conn.tag
    ));
    app.shared.leave(conn.client).await;
}

fn idle(conn: &Conn, limit: Duration) -> bool {
    let st = conn.lock();
    let reading = st
        .streams
        .get(&Stream::Connection)
        .is_some_and(|m| m.leased);
    !reading && st.last_seen.is_some_and(|t| t.elapsed() > limit)
}

/// Puts one message on its stream, first waiting while the connection holds
/// more than `--max-buffered-bytes` nobody has read: at most
/// `--slow-client-ms`, as a WebSocket client may take to accept a message
/// (and not past the hub giving up on the client, `kick`, or a `DELETE`).
/// The answer to the connection's `initialize` goes to its `POST` instead.
async fn sort(
    conn: &Conn,
    kick: &Kick,
    (stream, text, charge): ToClient,
    config: &Config,
) -> Result<(), String> {
    let (max_buffered, max_streams) = (config.max_buffered_bytes, config.max_session_streams);
    let too_slow = tokio::time::sleep(config.slow_client);
    tokio::pin!(too_slow);
    if let Some(answer) = initialize_answer(conn, &text) {
        let _ = answer.send(text);
        return Ok(());
    }
    loop {
        let wait = conn.taken.notified();
        {
            let mut st = conn.lock();
            if st.buffered == 0 || st.buffered + text.len() <= max_buffered {
                if !st.streams.contains_key(&stream) && st.streams.len() > max_streams {
                    return Err(format!("more than {max_streams} session streams"));
                }
                st.buffered += text.len();
                let mailbox = st.streams.entry(stream).or_default();
                mailbox.queue.push_back((text, charge));
                mailbox.wake.notify_one();
                return Ok(());
            }
        }
        tokio::select! {
            () = wait => {}
            () = &mut too_slow => return Err("client too slow to read its streams".to_owned()),
            () = kick.notified() => return Err(kick.reason()),
            () = conn.stop.notified() => return Err("deleted".to_owned()),
        }
    }
}

/// Where to send `text` when it answers the pending `initialize`.
fn initialize_answer(conn: &Conn, text: &str) -> Option<oneshot::Sender<String>> {
    let mut st = conn.lock();
    let (pending, _) = st.initialize.as_ref()?;
    let id = Message::decode(text)
        .ok()
        .and_then(|m| m.id().map(id_key))?;
    if *pending != id {
        return None;
    }
    st.initialize.take().map(|(_, answer)| answer)
}

/// `GET`: the connection's SSE stream, or a session's.
fn get(app: App, headers: &HeaderMap, who: &Identity) -> Result<Response, Response> {
    let accepts = header_str(headers, header::ACCEPT.as_str())
        .is_some_and(|a| a.contains("text/event-stream"));
    if !accepts {
        return Err(text(
            StatusCode::NOT_ACCEPTABLE,
            "accept must include text/event-stream",
        ));
    }
    let conn = app.http.get(headers, who)?;
    let stream = match header_str(headers, HEADER_SESSION_ID) {
        // Only a session of this connection's user has a stream.
        Some(session) if !app.shared.may_stream(conn.client, session) => {
            return Err(text(
                StatusCode::NOT_FOUND,
                "unknown Acp-Session-Id: not a session of this user",
            ))
        }
        Some(session) => Stream::Session(session.to_owned()),
        None => Stream::Connection,
    };
    {
        let mut st = conn.lock();
        if st.closed {
            return Err(text(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id"));
        }
        let full = st.streams.len() > app.shared.config.max_session_streams;
        if full && !st.streams.contains_key(&stream) {
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

fn sse(
    events: impl futures_util::Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
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
    stream: Stream,
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
                if let Some((text, _charge)) = mailbox.queue.pop_front() {
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
fn delete(app: App, headers: &HeaderMap, who: &Identity) -> Result<Response, Response> {
    let conn = app.http.get(headers, who)?;
    app.http.lock().remove(&conn.id);
    conn.stop.notify_one();
    Ok(StatusCode::ACCEPTED.into_response())
}
