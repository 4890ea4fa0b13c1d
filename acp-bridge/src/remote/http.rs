//! The Streamable HTTP profile on hyper's client: HTTP/2 when the server
//! speaks it, as the transport asks, else HTTP/1.1.
//!
//! - Over TLS (`https://`) the version is agreed by ALPN (`h2`, then
//!   `http/1.1`).
//! - On plain TCP (`http://`) to a loopback address, HTTP/2 is tried first
//!   with prior knowledge (`h2c`). A server that speaks only HTTP/1.1 drops
//!   HTTP/2's preface before reading any request, so when the first request
//!   (`initialize`) gets no answer that way it is sent again over HTTP/1.1:
//!   nothing was processed twice.
//! - On plain TCP to any other host, HTTP/1.1: proxies on the way rarely
//!   pass `h2c`; `https://` gives HTTP/2 across a network.
//!
//! Over HTTP/2 every request (the `POST`s, the SSE streams, the `DELETE`)
//! is a stream of one connection; over HTTP/1.1 the `POST`s share one
//! kept-alive connection and each SSE stream has its own.
//!
//! Resuming ([`connect`] with a [`Policy`]): the ACP connection outlives
//! its TCP connections. When one breaks (an error, or no event and no
//! keep-alive for 30 s: the server writes a comment every 15 s), a new one
//! is dialed with the policy's backoff and jitter, each SSE stream is
//! opened again with `Last-Event-ID` (the `id:` of the last event it
//! read, `0` before the first) and a `POST` whose answer never came is
//! sent again, byte for byte (the server runs a retried request once).
//! The server answers the reopened stream with exactly what followed; an
//! event at or before a position already read is dropped, so nothing is
//! delivered twice: the positions are the codec's client component's
//! ([`StreamPositions`], the rule `acp_codec::remote::Rejoin` applies to
//! WebSocket's stamps), and `crate::reconnect` runs `Rejoin` above this
//! transport as above a WebSocket. A `409` (the server no longer holds what followed) or a `404`
//! (the server does not know the connection: another server, after the
//! one that served it died) ends the connection with the server's words
//! and marks it [`Connection::forgotten`]: nothing can be resumed, and
//! `crate::reconnect` goes on with a new connection that loads the
//! sessions (`session/load`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use acp_codec::acp::Message;
use acp_codec::limits::DEFAULT_ID_PEEK_WINDOW;
use acp_codec::remote::{
    ask_for_positions, session_of, Delivery, Position, SessionField, StreamPositions,
    HEADER_LAST_EVENT_ID,
};
use acp_codec::FrameError;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, COOKIE, HOST};
use hyper::{Method, Request as HttpRequest, Response, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::ClientConfig;
use tokio::sync::{mpsc, oneshot};

use super::cookie::CookieJar;
use super::{
    open_stream, too_long, Connection, Incoming, LineSender, Policy, RemoteSource, Target,
    DEAD_AFTER,
};
use crate::tls::ALPN_HTTP;

const CONNECTION_ID: &str = "acp-connection-id";
const SESSION_ID: &str = "acp-session-id";

type Body = Full<Bytes>;
/// A message (or one skipped for its size), or why the connection ended.
type Inbox = mpsc::Sender<Result<Result<String, FrameError>, String>>;

/// What every request needs: where, with which token, over what.
#[derive(Clone)]
struct Endpoint {
    target: Arc<Target>,
    tls: Option<Arc<ClientConfig>>,
    max_message: usize,
    inbox: Inbox,
    /// The session of each agent request still unanswered, by id.
    asked: Arc<Mutex<HashMap<String, String>>>,
    /// The cookies the server set on this connection, sent back on every
    /// request.
    jar: Arc<Mutex<CookieJar>>,
    /// When the connection comes back by itself after a break.
    resuming: Option<Arc<Resuming>>,
    /// Set when the server refused to take the connection up again (see
    /// [`Connection::forgotten`]).
    forgotten: Arc<AtomicBool>,
    /// `session/load` and `session/resume` requests not yet answered: id
    /// (as JSON text) to session.
    loads: Arc<Mutex<HashMap<String, String>>>,
    /// When each session's stream last had news (opened, an event, or a
    /// load sent on it).
    activity: Arc<Mutex<HashMap<String, tokio::time::Instant>>>,
    /// The last event read on each stream (the connection's, `None`, and
    /// each session's): the codec's one rule of positions, which drops an
    /// event read before a stream was reopened and says what to send as
    /// `Last-Event-ID`.
    positions: Arc<Mutex<StreamPositions>>,
}

/// What a connection that resumes needs: how to redial, how many times it
/// did, and the HTTP/2 connection every request shares (with its
/// generation, so that one break is redialed once).
struct Resuming {
    policy: Policy,
    reconnects: Arc<AtomicU64>,
    shared: tokio::sync::Mutex<Shared>,
}

#[derive(Default)]
struct Shared {
    generation: u64,
    h2: Option<http2::SendRequest<Body>>,
}

/// The longest wait for a `POST`'s answer while resuming: past it the
/// connection counts as dead (the answer to `initialize` may take longer:
/// the agent starts).
const POST_WAIT: Duration = Duration::from_secs(30);

/// The longest wait for a new TCP (and TLS) connection while redialing.
const DIAL_WAIT: Duration = Duration::from_secs(10);

/// How long a session's stream must be quiet before the answer to its
/// `session/load` is handed over, when a server sends that answer on the
/// connection's stream (see [`Endpoint::settled`]).
const SETTLE: Duration = Duration::from_millis(100);

/// The longest wait for that.
const SETTLE_MAX: Duration = Duration::from_secs(2);

/// A connection to the server, ready for requests.
enum Sender {
    /// One request at a time.
    Http1(http1::SendRequest<Body>),
    /// Any number of requests at once; clones share the connection.
    Http2(http2::SendRequest<Body>),
}

impl Sender {
    /// Sends `req` once the connection takes it; the response head.
    async fn send(
        &mut self,
        req: HttpRequest<Body>,
    ) -> Result<Response<hyper::body::Incoming>, hyper::Error> {
        match self {
            Self::Http1(send) => {
                send.ready().await?;
                send.send_request(req).await
            }
            Self::Http2(send) => {
                send.ready().await?;
                send.send_request(req).await
            }
        }
    }

    fn version(&self) -> Version {
        match self {
            Self::Http1(_) => Version::HTTP_11,
            Self::Http2(_) => Version::HTTP_2,
        }
    }

    /// The HTTP/2 connection, for more requests on it.
    fn shared(&self) -> Option<http2::SendRequest<Body>> {
        match self {
            Self::Http1(_) => None,
            Self::Http2(send) => Some(send.clone()),
        }
    }
}

/// Opens the `POST` connection; `initialize` (the client's first line)
/// then opens the ACP connection. With `resume`, the connection comes back
/// by itself after a break (see the module docs), and `reconnects` counts
/// the connections replaced.
pub async fn connect(
    target: Target,
    tls: Option<Arc<ClientConfig>>,
    max_message: usize,
    resume: Option<(Policy, Arc<AtomicU64>)>,
) -> Result<Connection, String> {
    let (inbox, rx) = mpsc::channel(64);
    let endpoint = Endpoint {
        target: Arc::new(target),
        tls,
        max_message,
        inbox,
        asked: Arc::default(),
        jar: Arc::default(),
        resuming: resume.map(|(policy, reconnects)| {
            Arc::new(Resuming {
                policy,
                reconnects,
                shared: tokio::sync::Mutex::default(),
            })
        }),
        forgotten: Arc::default(),
        loads: Arc::default(),
        activity: Arc::default(),
        positions: Arc::default(),
    };
    let http2 = endpoint.target.tls || endpoint.target.is_loopback();
    let post = endpoint.open(http2).await?;
    if let Some(r) = &endpoint.resuming {
        r.shared.lock().await.h2 = post.shared();
    }
    let (sink, lines) = LineSender::channel();
    let shown = endpoint.target.shown.clone();
    let forgotten = Arc::clone(&endpoint.forgotten);
    let writer = tokio::spawn(write(endpoint, post, lines));
    let (end_tx, end_rx) = oneshot::channel();
    let closed_shown = shown.clone();
    Ok(Connection {
        source: RemoteSource {
            incoming: Incoming::Http(rx),
            shown,
            ended: Some(end_tx),
            max_message,
        },
        sink,
        closed: Box::pin(async move {
            end_rx
                .await
                .unwrap_or_else(|_| format!("connection to {closed_shown} closed"))
        }),
        writer,
        forgotten,
    })
}

impl Endpoint {
    /// A new connection to the server: HTTP/2 when `http2` is asked for and
    /// TLS agrees on it by ALPN (or, on plain TCP, with prior knowledge),
    /// else HTTP/1.1.
    async fn open(&self, http2: bool) -> Result<Sender, String> {
        let alpn: &[&[u8]] = if http2 { &ALPN_HTTP } else { &[b"http/1.1"] };
        let opened = open_stream(&self.target, self.tls.clone(), alpn).await?;
        let agreed = match &opened.alpn {
            Some(p) => p.as_slice() == b"h2",
            None => !self.target.tls,
        };
        let io = TokioIo::new(opened.io);
        let failed =
            |e: hyper::Error| format!("http handshake with {} failed: {e}", self.target.shown);
        if http2 && agreed {
            let (send, conn) = http2::handshake(TokioExecutor::new(), io)
                .await
                .map_err(failed)?;
            tokio::spawn(conn);
            Ok(Sender::Http2(send))
        } else {
            let (send, conn) = http1::handshake(io).await.map_err(failed)?;
            tokio::spawn(conn);
            Ok(Sender::Http1(send))
        }
    }

    /// A connection in place of the broken one (generation `broken`):
    /// over HTTP/2 the one every request shares (dialed once however many
    /// requests saw the break), over HTTP/1.1 one of the caller's own;
    /// dialed with the policy's backoff until `since` plus its budget.
    async fn reconnect(
        &self,
        http2: bool,
        broken: u64,
        since: Instant,
        why: &str,
    ) -> Result<(u64, Sender), String> {
        let Some(r) = &self.resuming else {
            return Err("not resuming".to_owned());
        };
        let mut shared = r.shared.lock().await;
        if http2 && shared.generation != broken {
            if let Some(h2) = &shared.h2 {
                return Ok((shared.generation, Sender::Http2(h2.clone())));
            }
        }
        let dial = || async {
            tokio::time::timeout(DIAL_WAIT, self.open(http2))
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "no connection to {} within {} s",
                        self.target.shown,
                        DIAL_WAIT.as_secs()
                    ))
                })
        };
        let sender = r.policy.redial(since, dial).await.map_err(|last| {
            format!(
                "no new connection to {} within {} s (--reconnect-secs): {last}",
                self.target.shown,
                r.policy.budget.as_secs()
            )
        })?;
        // One line a reconnect, once it is done.
        eprintln!("acp-client: {why}; reconnected; resuming");
        r.reconnects.fetch_add(1, Ordering::Relaxed);
        if http2 {
            shared.generation += 1;
            shared.h2 = sender.shared();
        }
        Ok((shared.generation, sender))
    }

    /// A refusal of a request that names the connection, while resuming:
    /// `404` (the server does not know the connection: another server,
    /// after the one that served it died) or, for a stream reopened with
    /// `Last-Event-ID`, `409` (what followed is no longer held) means
    /// nothing can be resumed; a new connection may load the sessions.
    fn note_refusal(&self, status: StatusCode, reopened: bool) {
        if forgets(status, reopened) && self.resuming.is_some() {
            self.forgotten.store(true, Ordering::Relaxed);
        }
    }

    /// An event at `id` was read on `session`'s stream (`None`: the
    /// connection's): whether it is new. An SSE stream's positions may
    /// jump (the server refuses a reopened stream it cannot continue), so
    /// a jump is taken as it is.
    fn position(&self, session: Option<&str>, id: Position) -> Delivery {
        self.positions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(session, id, false)
    }

    /// Where `session`'s stream (`None`: the connection's) resumes: its
    /// `Last-Event-ID`.
    fn resume_from(&self, session: Option<&str>) -> Position {
        self.positions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .resume_from(session)
    }

    /// `session` had news now.
    fn touch(&self, session: &str) {
        if let Ok(mut activity) = self.activity.lock() {
            activity.insert(session.to_owned(), tokio::time::Instant::now());
        }
    }

    /// Hands over the answer to a `session/load` or `session/resume`
    /// (`text`, read on the connection's stream when `on_connection`):
    /// at once when it came on its session's stream, as acp-bridge sends
    /// it (behind the history the load replays there: one stream is read
    /// in order). A result on the connection's stream comes from a server
    /// that puts it there (the official TypeScript SDK's server does, as
    /// the transport's draft lists it): nothing orders it with the
    /// history, and what reads them (the client, or its relay that keeps a
    /// replayed history from it) takes the answer as the end of the
    /// history; it waits until the session's stream has been quiet for
    /// [`SETTLE`] (at most [`SETTLE_MAX`]). Such a server queues the
    /// history before the answer, so it arrives as one burst once the
    /// stream is open. An error does not wait: a failed load replays
    /// nothing.
    async fn settled(&self, text: &str, on_connection: bool) {
        if self.loads.lock().map_or(true, |l| l.is_empty()) {
            return;
        }
        let (id, failed) = match Message::decode(text) {
            Ok(Message::Response(r)) => (serde_json::to_string(&r.id).ok(), false),
            Ok(Message::Error(e)) => (serde_json::to_string(&e.id).ok(), true),
            _ => return,
        };
        let session = id.and_then(|id| self.loads.lock().ok()?.remove(&id));
        let Some(session) = session.filter(|_| on_connection && !failed) else {
            return;
        };
        // tokio's clock, which a test can pause and advance.
        let until = tokio::time::Instant::now() + SETTLE_MAX;
        while tokio::time::Instant::now() < until {
            let last = self
                .activity
                .lock()
                .ok()
                .and_then(|a| a.get(&session).copied());
            if last.is_some_and(|t| t.elapsed() >= SETTLE) {
                return;
            }
            tokio::time::sleep(SETTLE / 5).await;
        }
    }

    /// The HTTP/2 connection every request shares now (`None` over
    /// HTTP/1.1).
    async fn shared_now(&self) -> Option<http2::SendRequest<Body>> {
        self.resuming.as_ref()?.shared.lock().await.h2.clone()
    }

    /// The generation of the shared HTTP/2 connection now.
    async fn generation(&self) -> u64 {
        match &self.resuming {
            Some(r) => r.shared.lock().await.generation,
            None => 0,
        }
    }

    /// Whether `sender` is HTTP/2 that no server has answered yet: prior
    /// knowledge on plain TCP, which a server may not share.
    fn unconfirmed(&self, sender: &Sender) -> bool {
        matches!(sender, Sender::Http2(_)) && !self.target.tls
    }

    /// A request to the URL: over HTTP/1.1 its path with a `Host` header,
    /// over HTTP/2 the whole URL (the `:scheme` and `:authority` fields).
    fn request(
        &self,
        version: Version,
        method: Method,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Result<HttpRequest<Body>, String> {
        let uri = self.target.request().uri();
        let mut req = HttpRequest::builder().method(method).version(version);
        if version == Version::HTTP_2 {
            req = req.uri(uri.clone());
        } else {
            let path = uri.path_and_query().map_or("/", |p| p.as_str());
            let host = uri.authority().map_or("", |a| a.as_str());
            req = req.uri(path).header(HOST, host);
        }
        if let Some(auth) = self.target.request().headers().get(AUTHORIZATION) {
            req = req.header(AUTHORIZATION, auth.clone());
        }
        if let Some(cookies) = self.cookies() {
            req = req.header(COOKIE, cookies);
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req.body(Full::new(body))
            .map_err(|e| format!("bad request: {e}"))
    }

    /// A refused request as one line.
    async fn refused(&self, what: &str, resp: Response<hyper::body::Incoming>) -> String {
        let status = resp.status();
        let body = read_body(resp, 8 * 1024).await.unwrap_or_default();
        let body: String = body.trim().chars().take(200).collect();
        let mut msg = format!(
            "the server at {} refused {what}: HTTP {}",
            self.target.shown,
            status.as_u16()
        );
        if !body.is_empty() {
            msg.push_str(": ");
            msg.push_str(&body.replace(['\r', '\n'], " "));
        }
        if status == StatusCode::UNAUTHORIZED {
            msg.push_str(" (give the token with --token or ACP_BRIDGE_TOKEN)");
        }
        msg
    }

    /// Sends a request built by `build` for the connection's version; the
    /// cookies its response sets go in the jar.
    async fn send(
        &self,
        sender: &mut Sender,
        build: impl Fn(Version) -> Result<HttpRequest<Body>, String>,
    ) -> Result<Response<hyper::body::Incoming>, String> {
        let req = build(sender.version())?;
        let resp = sender
            .send(req)
            .await
            .map_err(|e| format!("{}: {e}", self.target.shown))?;
        self.target.keep_cookies(&mut self.jar(), resp.headers());
        Ok(resp)
    }

    /// [`send`](Self::send), and while resuming, again on a new
    /// connection when the request gets no answer (a break, or none
    /// within [`POST_WAIT`]); `generation` is the shared connection's the
    /// caller holds in `post`.
    async fn send_again(
        &self,
        post: &mut Sender,
        generation: &mut u64,
        build: impl Fn(Version) -> Result<HttpRequest<Body>, String>,
    ) -> Result<Response<hyper::body::Incoming>, String> {
        let Some(r) = &self.resuming else {
            return self.send(post, build).await;
        };
        let http2 = matches!(post, Sender::Http2(_));
        if http2 {
            // Another request may have redialed already.
            let shared = r.shared.lock().await;
            if let (true, Some(h2)) = (shared.generation != *generation, &shared.h2) {
                *post = Sender::Http2(h2.clone());
                *generation = shared.generation;
            }
        }
        let mut since = None;
        loop {
            let failure = match tokio::time::timeout(POST_WAIT, self.send(post, &build)).await {
                Ok(Ok(resp)) => return Ok(resp),
                Ok(Err(e)) => e,
                Err(_) => format!(
                    "{}: no answer within {} s",
                    self.target.shown,
                    POST_WAIT.as_secs()
                ),
            };
            // Each break gets the budget from when it is noticed (a new
            // connection may break too); all of them together, the
            // budget and the waits that notice them.
            let noticed = Instant::now();
            let first = *since.get_or_insert(noticed);
            if first.elapsed() > r.policy.budget + 2 * POST_WAIT {
                return Err(format!(
                    "connection to {} lost: {failure}; no answer within {} s (--reconnect-secs)",
                    self.target.shown,
                    r.policy.budget.as_secs()
                ));
            }
            let (g, sender) = self
                .reconnect(http2, *generation, noticed, &failure)
                .await
                .map_err(|why| {
                    format!("connection to {} lost: {failure}; {why}", self.target.shown)
                })?;
            *generation = g;
            *post = sender;
        }
    }

    fn jar(&self) -> MutexGuard<'_, CookieJar> {
        self.jar.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The `Cookie` header of the next request, if any cookie applies.
    fn cookies(&self) -> Option<String> {
        let path = self.target.request().uri().path();
        self.jar().header(path, self.target.tls, SystemTime::now())
    }
}

/// Whether a refusal means the server will not take the connection up
/// again: `404` (it does not know the connection), or `409` for a stream
/// `reopened` with `Last-Event-ID` (a gap; without one, `409` is a second
/// reader, which a new connection would not help).
fn forgets(status: StatusCode, reopened: bool) -> bool {
    status == StatusCode::NOT_FOUND || (reopened && status == StatusCode::CONFLICT)
}

/// Reads a whole body of at most `max` bytes as text.
async fn read_body(resp: Response<hyper::body::Incoming>, max: usize) -> Result<String, String> {
    let body = http_body_util::Limited::new(resp.into_body(), max)
        .collect()
        .await
        .map_err(|e| format!("reading a response: {e}"))?
        .to_bytes();
    String::from_utf8(body.into()).map_err(|_| "a response is not utf-8".to_owned())
}

/// Posts the client's lines in order until the client is done, then
/// deletes the connection.
async fn write(endpoint: Endpoint, mut post: Sender, mut lines: mpsc::Receiver<Vec<u8>>) {
    let mut connection: Option<String> = None;
    let mut streams: HashSet<String> = HashSet::new();
    let mut generation = 0;
    while let Some(mut line) = lines.recv().await {
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let sent = match &connection {
            None => initialize(&endpoint, &mut post, asking_for_positions(&endpoint, line))
                .await
                .map(|id| connection = id),
            Some(id) => {
                send(
                    &endpoint,
                    &mut post,
                    &mut generation,
                    id,
                    &mut streams,
                    line,
                )
                .await
            }
        };
        if let Err(e) = sent {
            let _ = endpoint.inbox.send(Err(e)).await;
            return;
        }
    }
    if let Some(id) = connection {
        let delete = |v| endpoint.request(v, Method::DELETE, &[(CONNECTION_ID, &id)], Bytes::new());
        let deleted = endpoint.send_again(&mut post, &mut generation, delete);
        let _ = tokio::time::timeout(POST_WAIT, deleted).await;
    }
}

/// The client's `initialize`, asking for positions when the connection
/// resumes (the codec's [`ask_for_positions`]): the server then runs a
/// request this client sends again (its answer unseen) once, as it must
/// for a client that resends; to a client that did not ask, each request
/// is its own. A line that is not a JSON object goes as it is.
fn asking_for_positions(endpoint: &Endpoint, line: Vec<u8>) -> Vec<u8> {
    if endpoint.resuming.is_none() {
        return line;
    }
    let asked = std::str::from_utf8(&line).ok().and_then(ask_for_positions);
    asked.map_or(line, String::into_bytes)
}

/// `initialize`: its answer comes in the `POST`'s response, with the
/// connection id; then the connection stream opens. An `initialize`
/// answered with an error (a version the agent does not speak: `acp-client
/// --protocol auto` asks again in the other) leaves the client free to
/// send another, as on any transport: the server's connection is deleted,
/// and the next line opens a new one (`Ok(None)`).
async fn initialize(
    endpoint: &Endpoint,
    post: &mut Sender,
    line: Vec<u8>,
) -> Result<Option<String>, String> {
    let body = Bytes::from(line);
    let json = [(CONTENT_TYPE.as_str(), "application/json")];
    let req = |v| endpoint.request(v, Method::POST, &json, body.clone());
    let cookies = endpoint.cookies();
    let mut resp = match endpoint.send(post, req).await {
        Err(_) if endpoint.unconfirmed(post) => {
            // No HTTP/2 there: the server never read the request.
            *post = endpoint.open(false).await?;
            endpoint.send(post, req).await?
        }
        sent => sent?,
    };
    if !resp.status().is_success() && endpoint.cookies() != cookies {
        // A front that pins clients by cookie may refuse a first request
        // without one, setting it: once more, with it, on a new connection
        // (the refused one may be closing).
        *post = endpoint.open(matches!(post, Sender::Http2(_))).await?;
        resp = endpoint.send(post, req).await?;
    }
    if !resp.status().is_success() {
        return Err(endpoint.refused("initialize", resp).await);
    }
    let id = resp
        .headers()
        .get(CONNECTION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "{}: the initialize response has no Acp-Connection-Id",
                endpoint.target.shown
            )
        })?;
    let answer = read_body(resp, endpoint.max_message).await?;
    if matches!(Message::decode(&answer), Ok(Message::Error(_))) {
        let delete = |v| endpoint.request(v, Method::DELETE, &[(CONNECTION_ID, &id)], Bytes::new());
        let _ = tokio::time::timeout(POST_WAIT, endpoint.send(post, delete)).await;
        let _ = endpoint.inbox.send(Ok(Ok(answer))).await;
        return Ok(None);
    }
    let _ = endpoint.inbox.send(Ok(Ok(answer))).await;
    let ready = sse(endpoint.clone(), post.shared(), id.clone(), None);
    ready
        .await
        .map_err(|_| "the connection stream closed".to_owned())??;
    Ok(Some(id))
}

/// Any later message: its session's stream opened first, then `POST`.
async fn send(
    endpoint: &Endpoint,
    post: &mut Sender,
    generation: &mut u64,
    connection: &str,
    streams: &mut HashSet<String>,
    line: Vec<u8>,
) -> Result<(), String> {
    let (session, attaches) = session_for(endpoint, &line);
    if let (Some(s), true) = (&session, attaches) {
        let id = Message::decode_bytes(&line)
            .ok()
            .and_then(|m| serde_json::to_string(m.id()?).ok());
        if let (Some(id), Ok(mut loads)) = (id, endpoint.loads.lock()) {
            loads.insert(id, s.clone());
        }
        if streams.contains(s) {
            endpoint.touch(s);
        } else if let Ok(mut activity) = endpoint.activity.lock() {
            // No news before the stream is open.
            activity.remove(s);
        }
    }
    let mut headers = vec![
        (CONTENT_TYPE.as_str(), "application/json"),
        (CONNECTION_ID, connection),
    ];
    // A session this server may not have seen (a load after another
    // server died) has a stream once its `session/load` or
    // `session/resume` is sent: that stream opens after the `POST` (what
    // comes for it meanwhile, the history and the answer, waits on the
    // server); any other session's before, so that nothing of it is
    // missed.
    let mut open_after = None;
    if let Some(s) = &session {
        if streams.insert(s.clone()) {
            if attaches {
                open_after = Some(s.clone());
            } else {
                open_session(endpoint, post, connection, s).await?;
            }
        }
        headers.push((SESSION_ID, s));
    }
    let body = Bytes::from(line);
    let req = |v| endpoint.request(v, Method::POST, &headers, body.clone());
    let resp = endpoint.send_again(post, generation, req).await?;
    if resp.status().is_success() {
        let _ = read_body(resp, 8 * 1024).await;
        if let Some(s) = open_after {
            open_session(endpoint, post, connection, &s).await?;
        }
        return Ok(());
    }
    endpoint.note_refusal(resp.status(), false);
    Err(endpoint.refused("a message", resp).await)
}

/// Opens `session`'s stream and waits until it is open (or refused).
async fn open_session(
    endpoint: &Endpoint,
    post: &Sender,
    connection: &str,
    session: &str,
) -> Result<(), String> {
    let ready = sse(
        endpoint.clone(),
        post.shared(),
        connection.to_owned(),
        Some(session.to_owned()),
    );
    ready
        .await
        .map_err(|_| "a session stream closed".to_owned())??;
    endpoint.touch(session);
    Ok(())
}

/// The session a message belongs to: its `params.sessionId`, or, for an
/// answer to the agent, the session the agent asked on; and whether it
/// attaches that session (`session/load`, `session/resume`).
fn session_for(endpoint: &Endpoint, line: &[u8]) -> (Option<String>, bool) {
    let Ok(message) = Message::decode_bytes(line) else {
        return (None, false);
    };
    let attaches = matches!(message.method(), Some("session/load" | "session/resume"));
    if let SessionField::Id(s) = session_of(&message) {
        return (Some(s.into_owned()), attaches);
    }
    let asked = || {
        let id = serde_json::to_string(message.id()?).ok()?;
        endpoint.asked.lock().ok()?.remove(&id)
    };
    (asked(), false)
}

/// Opens one SSE stream, on `shared` (the HTTP/2 connection) when given,
/// else on a connection of its own; the returned receiver fires once it is
/// open (or refused). Its events go to the client's inbox. While resuming,
/// a stream that breaks is opened again with `Last-Event-ID`.
fn sse(
    endpoint: Endpoint,
    shared: Option<http2::SendRequest<Body>>,
    connection: String,
    session: Option<String>,
) -> oneshot::Receiver<Result<(), String>> {
    let (ready_tx, ready_rx) = oneshot::channel();
    tokio::spawn(async move {
        let mut ready = Some(ready_tx);
        let mut generation = endpoint.generation().await;
        let mut sender = shared.map(Sender::Http2);
        let http2 = sender.is_some();
        let mut since: Option<Instant> = None;
        let end = loop {
            // Reopened: what follows the last event read.
            let after = ready
                .is_none()
                .then(|| endpoint.resume_from(session.as_deref()));
            let opened = open_sse(
                &endpoint,
                sender.take(),
                &connection,
                session.as_deref(),
                after,
            )
            .await;
            let (failure, broken) = match opened {
                Ok(resp) => {
                    if let Some(tx) = ready.take() {
                        let _ = tx.send(Ok(()));
                    }
                    since = None;
                    read_events(&endpoint, resp, session.as_deref()).await
                }
                Err(e) => {
                    if let Some(tx) = ready.take() {
                        let _ = tx.send(Err(e.why));
                        return;
                    }
                    if e.refused {
                        // The server's answer (a gap, a connection it closed).
                        break e.why;
                    }
                    (e.why, true)
                }
            };
            let Some(r) = endpoint
                .resuming
                .as_ref()
                .filter(|_| !endpoint.inbox.is_closed())
            else {
                break failure;
            };
            // Each break gets the budget from when it is noticed (a new
            // connection may break too, a reopened stream hang); all of
            // them together, the budget and the waits that notice them.
            let noticed = Instant::now();
            let first = *since.get_or_insert(noticed);
            if first.elapsed() > r.policy.budget + 2 * DEAD_AFTER {
                let secs = r.policy.budget.as_secs();
                break format!(
                    "{failure}; the stream did not come back within {secs} s (--reconnect-secs)"
                );
            }
            if !broken {
                // The server ended the stream, the connection is fine: open
                // it again there (the server says whether it is gone).
                tokio::time::sleep(r.policy.first_delay).await;
                sender = endpoint.shared_now().await.map(Sender::Http2);
                continue;
            }
            match endpoint
                .reconnect(http2, generation, noticed, &failure)
                .await
            {
                Ok((g, s)) => {
                    generation = g;
                    sender = Some(s);
                }
                Err(why) => break format!("{failure}; {why}"),
            }
        };
        if session.is_none() || endpoint.resuming.is_some() {
            let _ = endpoint.inbox.send(Err(end)).await;
        }
    });
    ready_rx
}

/// Why a stream did not open: the server's refusal, or a broken
/// connection.
struct NotOpened {
    refused: bool,
    why: String,
}

async fn open_sse(
    endpoint: &Endpoint,
    sender: Option<Sender>,
    connection: &str,
    session: Option<&str>,
    after: Option<Position>,
) -> Result<Response<hyper::body::Incoming>, NotOpened> {
    let broken = |why| NotOpened {
        refused: false,
        why,
    };
    let mut send = match sender {
        Some(sender) => sender,
        None => endpoint.open(false).await.map_err(broken)?,
    };
    let after = after.map(|p| p.to_string());
    let mut headers = vec![
        (ACCEPT.as_str(), "text/event-stream"),
        (CONNECTION_ID, connection),
    ];
    if let Some(s) = session {
        headers.push((SESSION_ID, s));
    }
    if let Some(after) = &after {
        headers.push((HEADER_LAST_EVENT_ID, after));
    }
    let req = |v| endpoint.request(v, Method::GET, &headers, Bytes::new());
    let resp = tokio::time::timeout(DEAD_AFTER, endpoint.send(&mut send, req))
        .await
        .map_err(|_| {
            broken(format!(
                "{}: no answer within {} s",
                endpoint.target.shown,
                DEAD_AFTER.as_secs()
            ))
        })?
        .map_err(broken)?;
    if !resp.status().is_success() {
        if after.is_some() {
            endpoint.note_refusal(resp.status(), true);
        }
        return Err(NotOpened {
            refused: true,
            why: endpoint.refused("an event stream", resp).await,
        });
    }
    // The connection task keeps the socket (and the stream); `send` may go.
    Ok(resp)
}

/// Reads SSE events (`data:` lines up to a blank line) until the stream
/// ends; returns why it ended, and whether the connection broke (else the
/// server ended the stream). An event at or before the last position read
/// on its stream is dropped ([`Endpoint::positions`]).
///
/// Each chunk is searched for line ends once (a long event arrives in many
/// chunks). An event whose data is one line takes that line's bytes as
/// they are (no copy: a 64 MiB message costs 64 MiB, and the chunk being
/// read). An event over the limit is dropped as its bytes come (its first
/// bytes kept, for its id) and reported as [`FrameError::LineTooLong`]
/// once it ends; the stream goes on.
async fn read_events(
    endpoint: &Endpoint,
    resp: Response<hyper::body::Incoming>,
    session: Option<&str>,
) -> (String, bool) {
    let shown = &endpoint.target.shown;
    let max = endpoint.max_message;
    let mut body = resp.into_body();
    let mut events = Events::default();
    loop {
        let frame = match tokio::time::timeout(DEAD_AFTER, body.frame()).await {
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => return (format!("connection to {shown} lost: {e}"), true),
            Ok(None) => {
                let why = format!("the server at {shown} closed the connection stream");
                return (why, false);
            }
            Err(_) => {
                let why = format!(
                    "connection to {shown} lost: no event and no keep-alive for {} s",
                    DEAD_AFTER.as_secs()
                );
                return (why, true);
            }
        };
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        if let Some(s) = session {
            endpoint.touch(s);
        }
        for (id, message) in events.push(&chunk, max) {
            if let Some(id) = id {
                if endpoint.position(session, id) == Delivery::Seen {
                    // Read already, before the stream was reopened.
                    continue;
                }
            }
            if let Ok(text) = &message {
                remember(endpoint, text, session);
                endpoint.settled(text, session.is_none()).await;
            }
            if endpoint.inbox.send(Ok(message)).await.is_err() {
                return (String::new(), false);
            }
        }
    }
}

/// An SSE stream's events, read from its chunks.
#[derive(Default)]
struct Events {
    /// Bytes after the last line end.
    buf: Vec<u8>,
    /// The event's data so far.
    data: String,
    /// The bytes of an event over the limit so far (`0`: none), from its
    /// data on (exact for an event of one data line): dropped, but for
    /// the first ones, in `head`.
    skipped: usize,
    head: Vec<u8>,
    /// While skipping: the last chunk ended inside a line.
    partial: bool,
    /// The event's `id:`, when it is a position.
    id: Option<Position>,
}

/// An event's position (its `id:`), and its message or the error for one
/// over the limit.
type Read = (Option<Position>, Result<String, FrameError>);

impl Events {
    /// Reads `chunk`: the events it ends, each a message or the error for
    /// one over `max` bytes.
    fn push(&mut self, chunk: &[u8], max: usize) -> Vec<Read> {
        let mut out = Vec::new();
        let mut rest = chunk;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(end);
            rest = after.get(1..).unwrap_or_default();
            if self.buf.is_empty() {
                self.line(line, max, &mut out);
            } else {
                let mut whole = std::mem::take(&mut self.buf);
                whole.extend_from_slice(line);
                self.line_owned(whole, max, &mut out);
            }
        }
        if self.skipped > 0 {
            if !rest.is_empty() {
                // A line begun after a newline, or the same line going on.
                let newline = usize::from(!self.partial);
                self.skipped = self
                    .skipped
                    .saturating_add(rest.len())
                    .saturating_add(newline);
                self.partial = true;
            }
        } else {
            self.buf.extend_from_slice(rest);
            // The data this line adds: after its field name, and after the
            // newline that joins it to the data before.
            let field = match self.buf.strip_prefix(b"data:") {
                Some(d) if d.starts_with(b" ") => 6,
                Some(_) => 5,
                None => 0,
            };
            let joined = usize::from(!self.data.is_empty());
            let pending = self.data.len() + joined + self.buf.len().saturating_sub(field);
            if pending > max {
                self.skip(pending, field);
                self.partial = true;
            }
        }
        out
    }

    /// Starts dropping the event: `len` bytes of data so far, the last
    /// ones in the buffer after its first `field` bytes (a line's field
    /// name).
    fn skip(&mut self, len: usize, field: usize) {
        let mut head = std::mem::take(&mut self.data).into_bytes();
        head.truncate(DEFAULT_ID_PEEK_WINDOW);
        let rest = self.buf.get(field..).unwrap_or_default();
        let room = DEFAULT_ID_PEEK_WINDOW.saturating_sub(head.len());
        head.extend_from_slice(rest.get(..room).unwrap_or(rest));
        self.head = head;
        self.buf = Vec::new();
        self.skipped = len;
    }

    /// One whole line, owned (it was split across chunks): taken as the
    /// event's data without a copy when it is its only line.
    fn line_owned(&mut self, mut line: Vec<u8>, max: usize, out: &mut Vec<Read>) {
        if self.skipped == 0 && self.data.is_empty() && line.starts_with(b"data:") {
            let prefix = if line.starts_with(b"data: ") { 6 } else { 5 };
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            line.drain(..prefix);
            if line.len() > max {
                let len = line.len();
                self.buf = line;
                self.skip(len, 0);
                return;
            }
            self.data = String::from_utf8(line)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            return;
        }
        self.line(&line, max, out);
    }

    /// One whole line.
    fn line(&mut self, line: &[u8], max: usize, out: &mut Vec<Read>) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if self.skipped > 0 && self.partial {
            // The end of the line the last chunk ended in.
            self.partial = false;
            self.skipped = self.skipped.saturating_add(line.len());
            return;
        }
        if line.is_empty() {
            let id = self.id.take();
            if self.skipped > 0 {
                let head = std::mem::take(&mut self.head);
                out.push((id, Err(too_long(&head, self.skipped, max))));
                self.skipped = 0;
            } else if !self.data.is_empty() {
                out.push((id, Ok(std::mem::take(&mut self.data))));
            }
            return;
        }
        if self.skipped > 0 {
            // A line more, after a newline.
            self.skipped = self.skipped.saturating_add(line.len()).saturating_add(1);
            return;
        }
        if let Some(id) = line.strip_prefix(b"id:") {
            let id = std::str::from_utf8(id).unwrap_or_default();
            self.id = Position::parse(id).ok();
            return;
        }
        let Some(d) = line.strip_prefix(b"data:") else {
            return;
        };
        let d = d.strip_prefix(b" ").unwrap_or(d);
        let newline = usize::from(!self.data.is_empty());
        if self.data.len() + newline + d.len() > max {
            let len = self.data.len() + newline + d.len();
            self.buf = d.to_vec();
            self.skip(len, 0);
            return;
        }
        if newline == 1 {
            self.data.push('\n');
        }
        self.data.push_str(&String::from_utf8_lossy(d));
    }
}

/// Notes the session of an agent request, so the answer names it.
fn remember(endpoint: &Endpoint, text: &str, session: Option<&str>) {
    let Some(session) = session else { return };
    if let Ok(Message::Request(r)) = Message::decode(text) {
        if let (Ok(id), Ok(mut asked)) = (serde_json::to_string(&r.id), endpoint.asked.lock()) {
            asked.insert(id, session.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer to a `session/load` on the connection's stream (a
    /// server that puts it there) waits for its session's stream to open
    /// and go quiet; on the session's stream (behind the history, as
    /// acp-bridge sends it) it does not, nor does an error, nor any other
    /// message.
    #[tokio::test(start_paused = true)]
    async fn a_loads_answer_waits_for_its_history_only_on_the_connections_stream() {
        // Paused time: the clock moves only when every task waits, so a
        // busy machine cannot stretch the history's 10 ms gaps past SETTLE.
        let (inbox, _rx) = mpsc::channel(1);
        let endpoint = Endpoint {
            target: Arc::new(super::super::target("http://127.0.0.1:1/acp", None).unwrap()),
            tls: None,
            max_message: 1024,
            inbox,
            asked: Arc::default(),
            jar: Arc::default(),
            resuming: None,
            forgotten: Arc::default(),
            loads: Arc::default(),
            activity: Arc::default(),
            positions: Arc::default(),
        };
        let load = |id: &str| {
            endpoint
                .loads
                .lock()
                .unwrap()
                .insert(format!("\"{id}\""), "s1".to_owned());
        };
        let other = r#"{"jsonrpc":"2.0","id":"x","result":{}}"#;
        let started = tokio::time::Instant::now();
        load("l0");
        endpoint.settled(other, true).await;
        let on_session = r#"{"jsonrpc":"2.0","id":"l0","result":{}}"#;
        endpoint.settled(on_session, false).await;
        load("e0");
        let failed = r#"{"jsonrpc":"2.0","id":"e0","error":{"code":-32002,"message":"no"}}"#;
        endpoint.settled(failed, true).await;
        assert!(started.elapsed() < SETTLE);
        assert!(endpoint.loads.lock().unwrap().is_empty());
        load("l1");
        let history = endpoint.clone();
        let stream = tokio::spawn(async move {
            // The stream opens after a while, then events come for 300 ms.
            tokio::time::sleep(Duration::from_millis(150)).await;
            let until = tokio::time::Instant::now() + Duration::from_millis(300);
            while tokio::time::Instant::now() < until {
                history.touch("s1");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::Instant::now()
        });
        let answer = r#"{"jsonrpc":"2.0","id":"l1","result":{}}"#;
        endpoint.settled(answer, true).await;
        let handed = tokio::time::Instant::now();
        let last = stream.await.unwrap();
        assert!(handed >= last, "the answer went before the history");
        assert!(handed.duration_since(started) < SETTLE_MAX);
        assert!(endpoint.loads.lock().unwrap().is_empty());
    }

    /// A `404`, and a `409` for a reopened stream, mean nothing can be
    /// resumed; nothing else does.
    #[test]
    fn only_an_unknown_connection_or_a_gap_forgets_the_connection() {
        assert!(forgets(StatusCode::NOT_FOUND, false));
        assert!(forgets(StatusCode::NOT_FOUND, true));
        assert!(forgets(StatusCode::CONFLICT, true));
        assert!(!forgets(StatusCode::CONFLICT, false));
        for other in [400, 401, 403, 413, 429, 500, 503] {
            let status = StatusCode::from_u16(other).unwrap();
            assert!(!forgets(status, true), "{other}");
        }
    }

    /// Events split into chunks of every size: the same messages, the
    /// oversized one reported with its size, the limit and its request
    /// id, the events after it delivered, each with its `id:` when that
    /// is a position.
    #[test]
    fn events_read_alike_in_chunks_of_every_size() {
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"x","params":"{}"}}"#,
            "y".repeat(40)
        );
        let stream = format!(
            ": comment\r\nid: 1\ndata: 0123456789\n\nevent: message\nid: x\ndata: a\ndata: b\r\n\r\nid: 3\ndata: {long}\n\ndata:{long}\ndata: z\n\nid:12\r\ndata: ok\n\n"
        );
        let max = 30;
        for size in 1..=stream.len() {
            let mut events = Events::default();
            let mut got = Vec::new();
            for chunk in stream.as_bytes().chunks(size) {
                got.extend(events.push(chunk, max));
            }
            let ids: Vec<Option<u64>> = got.iter().map(|(id, _)| id.map(|p| p.0)).collect();
            assert_eq!(ids, [Some(1), None, Some(3), None, Some(12)], "{size}");
            let mut got = got.into_iter().map(|(_, m)| m);
            assert_eq!(got.next().unwrap().unwrap(), "0123456789", "{size}");
            assert_eq!(got.next().unwrap().unwrap(), "a\nb", "{size}");
            // The second: its data, then a line more ("\ndata: z").
            for seen in [long.len(), long.len() + 8] {
                match got.next().unwrap() {
                    Err(FrameError::LineTooLong(e)) => {
                        assert_eq!((e.limit(), e.seen()), (max, seen), "{size}");
                        assert_eq!(e.id(), Some(acp_codec::PeekedId::Number(7)), "{size}");
                    }
                    other => panic!("{size}: {other:?}"),
                }
            }
            assert_eq!(got.next().unwrap().unwrap(), "ok", "{size}");
        }
    }
}
