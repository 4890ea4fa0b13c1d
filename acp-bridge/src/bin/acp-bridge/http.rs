//! The Streamable HTTP profile's I/O: the requests (`POST`, `GET` of an
//! SSE stream with or without `Last-Event-ID`, `DELETE`), the SSE streams
//! and the queues behind them. Every rule (what a `POST` must carry, who may
//! read which stream, flow control, when a connection closes, what a resume
//! gets, which reader a stream's queue goes to and when it is replaced) is
//! the core's: a queue holds what the core's actions put there, in their
//! order; the profile is described in acp-bridge/README.md.

// Handlers return `Result<Response, Response>`: the error is the HTTP answer
// itself, built once per request, so its size does not matter.
#![allow(clippy::result_large_err)]

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use acp_codec::remote::{
    ConnectionId, Ending, HttpHead, HttpRefusal, HttpRoute, Position, PostOutcome, Principal,
    Refusal, Stream, HEADER_CONNECTION_ID, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID,
};
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot, Notify};

use crate::driver::{Driver, ToConn};
use crate::respond::{answer, random_name, text};

/// Longest wait for the agent's answer to `initialize`.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);

/// The open Streamable HTTP connections' queues, by the core's id.
#[derive(Default)]
pub struct Connections {
    map: Mutex<HashMap<ConnectionId, Arc<Conn>>>,
}

impl Connections {
    fn lock(&self) -> MutexGuard<'_, HashMap<ConnectionId, Arc<Conn>>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The queues of `conn`, a connection the core found (gone already
    /// when its writer just ended: the core's answer for an unknown one).
    fn get(&self, conn: ConnectionId) -> Result<Arc<Conn>, Response> {
        self.lock()
            .get(&conn)
            .cloned()
            .ok_or_else(|| answer(HttpRefusal::unknown_connection()))
    }
}

/// One Streamable HTTP connection: the queues of its SSE streams.
pub struct Conn {
    name: String,
    conn: ConnectionId,
    tag: String,
    state: Mutex<ConnState>,
}

#[derive(Default)]
struct ConnState {
    closed: bool,
    streams: HashMap<Stream, Mailbox>,
    /// Where the answer to the opening `initialize` goes.
    initialize: Option<oneshot::Sender<String>>,
}

#[derive(Default)]
struct Mailbox {
    queue: VecDeque<Queued>,
    wake: Arc<Notify>,
    /// The reader the core gave the stream to (`Action::Read`): an older
    /// reader ends, a newer one waits for its turn.
    reader: u64,
}

/// A message for a stream.
struct Queued {
    /// Its position (the SSE `id:`), when it has one.
    at: Option<Position>,
    text: String,
    /// Counted by the core as queued (a resume's replay is not).
    counted: bool,
}

impl Conn {
    fn lock(&self) -> MutexGuard<'_, ConnState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Everything a Streamable HTTP handler needs.
#[derive(Clone)]
pub struct Http {
    pub driver: Arc<Driver>,
    pub conns: Arc<Connections>,
    /// The request's peer.
    pub peer: std::net::SocketAddr,
}

/// Serves one Streamable HTTP request to `/acp`: the core checks its head
/// (method, headers, the connection it names), then it goes on as a
/// `POST`, a `GET` or a `DELETE`.
pub async fn handle(app: Http, req: Request, who: Principal, tag: String) -> Response {
    let headers = req.headers();
    let method = req.method().clone();
    let head = HttpHead {
        method: method.as_str(),
        content_type: header_str(headers, header::CONTENT_TYPE.as_str()),
        accept: header_str(headers, header::ACCEPT.as_str()),
        connection_id: header_str(headers, HEADER_CONNECTION_ID),
    };
    let route = app
        .driver
        .with(|s, now| s.handle_http_head(now, &who, &head));
    let route = match route {
        Ok(route) => route,
        Err(r) => return answer(r),
    };
    let result = match route {
        HttpRoute::Post { conn, max_body } => post(app, req, who, tag, conn, max_body).await,
        HttpRoute::Get { conn } => get(&app, req.headers(), &who, conn),
        HttpRoute::Deleted { conn } => {
            app.driver.deleted(conn);
            Ok(StatusCode::ACCEPTED.into_response())
        }
    };
    result.unwrap_or_else(|r| r)
}

async fn post(
    app: Http,
    req: Request,
    who: Principal,
    tag: String,
    named: Option<ConnectionId>,
    max_body: usize,
) -> Result<Response, Response> {
    let session = header_str(req.headers(), HEADER_SESSION_ID).map(ToOwned::to_owned);
    let body = match axum::body::to_bytes(req.into_body(), max_body).await {
        Ok(body) => body,
        Err(_) => {
            let refusal = app.driver.with(|s, _| s.body_too_large());
            let detail = format!("{}: {}", refusal.status, refusal.body);
            app.driver
                .refused(Refusal::Oversize, Some(app.peer), &detail);
            return Err(answer(refusal));
        }
    };
    let body = String::from_utf8(body.into())
        .map_err(|_| text(StatusCode::BAD_REQUEST, "body is not utf-8"))?;
    // Drawn only where a connection may open: a `POST` naming none.
    let random = named.is_none().then(random_name).flatten();
    let (answer_tx, answer_rx) = oneshot::channel();
    let conns = app.conns.clone();
    // The connection's queues are registered under the core's lock, before
    // any action can name it.
    let outcome = app.driver.with_from(Some(app.peer), |s, now| {
        let out = s.handle_post(now, &who, named, session.as_deref(), &body, random);
        if let Ok(PostOutcome::Opened(conn)) = &out {
            let c = Arc::new(Conn {
                name: s.connection_name(*conn).unwrap_or_default().to_owned(),
                conn: *conn,
                tag: tag.clone(),
                state: Mutex::new(ConnState {
                    initialize: Some(answer_tx),
                    ..ConnState::default()
                }),
            });
            let (tx, rx) = mpsc::unbounded_channel::<ToConn>();
            app.driver
                .attach(*conn, tx, Arc::new(Notify::new()), app.peer);
            conns.lock().insert(*conn, c.clone());
            tokio::spawn(run(app.clone(), c, rx));
        }
        out.map(|o| {
            let name = match o {
                PostOutcome::Opened(conn) => s.connection_name(conn).map(ToOwned::to_owned),
                PostOutcome::Accepted => None,
            };
            (o, name)
        })
    });
    match outcome.map_err(answer)? {
        (PostOutcome::Accepted, _) => Ok(StatusCode::ACCEPTED.into_response()),
        (PostOutcome::Opened(_), name) => {
            let name = name.unwrap_or_default();
            app.driver
                .log_line(&format!("http connection {name} ({tag}) opened"));
            match tokio::time::timeout(INITIALIZE_TIMEOUT, answer_rx).await {
                Ok(Ok(body)) => {
                    let mut resp =
                        ([(header::CONTENT_TYPE, "application/json")], body).into_response();
                    if let Ok(v) = HeaderValue::from_str(&name) {
                        resp.headers_mut().insert(HEADER_CONNECTION_ID, v);
                    }
                    Ok(resp)
                }
                _ => Err(text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "initialize failed: no answer from the agent",
                )),
            }
        }
    }
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
}

/// Puts the core's messages for `conn` on its streams until the core
/// closes it or the client deletes it.
async fn run(app: Http, conn: Arc<Conn>, mut rx: mpsc::UnboundedReceiver<ToConn>) {
    let why = loop {
        match rx.recv().await {
            Some(ToConn::Send(stream, text)) => {
                let mut st = conn.lock();
                let mailbox = st.streams.entry(stream).or_default();
                mailbox.queue.push_back(Queued {
                    at: None,
                    text,
                    counted: true,
                });
                mailbox.wake.notify_waiters();
            }
            Some(ToConn::Event(stream, at, text)) => {
                let mut st = conn.lock();
                let mailbox = st.streams.entry(stream).or_default();
                mailbox.queue.push_back(Queued {
                    at: Some(at),
                    text,
                    counted: true,
                });
                mailbox.wake.notify_waiters();
            }
            Some(ToConn::Read {
                stream,
                reader,
                replace,
            }) => {
                let dropped = {
                    let mut st = conn.lock();
                    let mailbox = st.streams.entry(stream).or_default();
                    mailbox.reader = reader;
                    let mut dropped = 0;
                    if let Some(events) = replace {
                        dropped = mailbox
                            .queue
                            .drain(..)
                            .filter(|q| q.counted)
                            .map(|q| q.text.len())
                            .sum();
                        mailbox
                            .queue
                            .extend(events.into_iter().map(|(at, text)| Queued {
                                at: Some(at),
                                text,
                                counted: false,
                            }));
                    }
                    // The new reader starts; an older one ends.
                    mailbox.wake.notify_waiters();
                    dropped
                };
                if dropped > 0 {
                    let id = conn.conn;
                    app.driver.with(|s, now| s.handle_sent(now, id, dropped));
                }
            }
            Some(ToConn::Answer(text)) => {
                if let Some(answer) = conn.lock().initialize.take() {
                    let _ = answer.send(text);
                }
            }
            Some(ToConn::Close { reason, .. }) => break reason,
            None => break "deleted".to_owned(),
        }
    };
    app.conns.lock().remove(&conn.conn);
    {
        let mut st = conn.lock();
        st.closed = true;
        st.initialize = None;
        for mailbox in st.streams.values() {
            mailbox.wake.notify_waiters();
        }
    }
    app.driver.log_line(&format!(
        "http connection {} ({}) closed: {why}",
        conn.name, conn.tag
    ));
    // The core closed or deleted it already: nothing is left to hold.
    app.driver.closed(conn.conn, Ending::Clean);
}

/// `GET`: the connection's SSE stream, or a session's; with
/// `Last-Event-ID`, resumed after that position.
fn get(
    app: &Http,
    headers: &HeaderMap,
    who: &Principal,
    conn: ConnectionId,
) -> Result<Response, Response> {
    let conn = app.conns.get(conn)?;
    let session = header_str(headers, HEADER_SESSION_ID);
    let last_event_id = header_str(headers, HEADER_LAST_EVENT_ID);
    // The stream's queue comes to this reader (replaced, for a resume) with
    // the core's `Action::Read`, in order with what the core queued.
    let (opened, keep_alive) = app
        .driver
        .with(|s, now| {
            let opened = s.handle_stream_opened(now, who, conn.conn, session, last_event_id)?;
            Ok((opened, s.config().sse_keep_alive))
        })
        .map_err(answer)?;
    let (stream, reader) = (opened.stream, opened.reader);
    let lease = Lease {
        driver: app.driver.clone(),
        conn,
        stream,
        reader,
    };
    let events = futures_util::stream::unfold(lease, |lease| async move {
        let event = lease.next().await?;
        Some((Ok::<_, Infallible>(event), lease))
    });
    Ok(sse(events, keep_alive))
}

fn sse(
    events: impl futures_util::Stream<Item = Result<Event, Infallible>> + Send + 'static,
    keep_alive: Duration,
) -> Response {
    // A comment at once: a front that holds a response's headers until its
    // first body bytes (nginx's HTTP/2 side) passes the stream on now,
    // not with the first event or keep-alive.
    let opened =
        futures_util::stream::once(std::future::ready(Ok(Event::default().comment("open"))));
    let mut resp = Sse::new(opened.chain(events))
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response();
    // Behind nginx: pass events on as they come.
    resp.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}

/// The right to read one stream, given back when the SSE response ends
/// (unless a newer reader took the stream over).
struct Lease {
    driver: Arc<Driver>,
    conn: Arc<Conn>,
    stream: Stream,
    /// Which reader of the stream this is.
    reader: u64,
}

impl Lease {
    /// The next message as an SSE event (its position as the `id:`);
    /// `None` once the connection closed and the stream is drained, or a
    /// newer reader took the stream. Until the core's `Action::Read`
    /// gives this reader the stream, it waits.
    async fn next(&self) -> Option<Event> {
        loop {
            let wake = {
                let mut st = self.conn.lock();
                let closed = st.closed;
                let mailbox = st.streams.entry(self.stream.clone()).or_default();
                if mailbox.reader > self.reader {
                    return None;
                }
                // Registered before the lock goes: a wake in between is
                // not missed.
                let wake = mailbox.wake.clone();
                let next = if mailbox.reader == self.reader {
                    mailbox.queue.pop_front()
                } else {
                    None
                };
                if let Some(q) = next {
                    drop(st);
                    if q.counted {
                        let (conn, len) = (self.conn.conn, q.text.len());
                        self.driver.with(|s, now| s.handle_sent(now, conn, len));
                    }
                    let event = Event::default();
                    let event = match q.at {
                        Some(at) => event.id(at.to_string()),
                        None => event,
                    };
                    return Some(event.data(q.text));
                }
                if closed {
                    return None;
                }
                wake
            };
            let notified = wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            // Looked at again now that the wake is armed.
            let again = {
                let st = self.conn.lock();
                st.closed
                    || st.streams.get(&self.stream).is_none_or(|m| {
                        m.reader > self.reader || (m.reader == self.reader && !m.queue.is_empty())
                    })
            };
            if !again {
                notified.await;
            }
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // The core ignores a reader a newer one replaced.
        let (conn, stream, reader) = (self.conn.conn, self.stream.clone(), self.reader);
        self.driver
            .with(|s, now| s.handle_stream_closed(now, conn, &stream, reader));
    }
}
