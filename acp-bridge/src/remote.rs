//! `acp-client --connect URL`: ACP's remote transport as the client's line
//! transport, both profiles, as the transport requires of clients:
//!
//! - `ws://` / `wss://`: one WebSocket, one text message per JSON-RPC
//!   message, both ways;
//! - `http://` / `https://` (Streamable HTTP): each message is `POST`ed to
//!   the URL (the first, `initialize`, is answered in the `POST` with the
//!   new `Acp-Connection-Id`); messages from the server arrive on SSE
//!   streams (`GET`): one for the connection, opened after `initialize`,
//!   and one per session, opened before the first message naming it.
//!   Messages of a session carry `Acp-Session-Id`; a `DELETE` ends the
//!   connection when the client is done. HTTP/2 when the server speaks it
//!   (agreed by ALPN over TLS; tried with prior knowledge on plain TCP to
//!   a loopback address), else HTTP/1.1.
//!
//! A message over the client's limit (its size, and the limit, in
//! [`FrameError::LineTooLong`]) is skipped and reported as a bad line, on
//! both profiles; the connection goes on and the next message is
//! delivered. The WebSocket layer reads a message whole before it can
//! skip it, so the client states its limit in the upgrade request
//! (`Acp-Bridge-Max-Message-Bytes`): `acp-bridge` then sends nothing
//! longer, and tells the client what it dropped (`_bridge/line_dropped`,
//! or an answer's error). From a server that does not honour it, messages
//! up to [`OVERSIZE_CEILING`] times the limit are read and skipped, and a
//! longer one still ends the connection. The SSE reader counts an
//! oversized event's bytes and drops them as they come.
//!
//! Cookies the server sets are kept for the connection and sent on its
//! requests (see `cookie`); a first request refused with a new cookie
//! (a load balancer pinning clients) is made once more with it.
//!
//! Connecting goes through three stages, each with its own one-line error:
//! TCP (`cannot connect to URL: Connection refused`), TLS (`tls handshake
//! with URL failed: invalid peer certificate: UnknownIssuer …`) and the
//! WebSocket upgrade (`the bridge at URL refused the connection: HTTP 401
//! …`), all within one timeout. The token travels in the `Authorization:
//! Bearer` header, never in the URL, and never appears in anything printed:
//! URLs are shown with [`redact`].

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use acp_codec::framing::LineTooLong;
use acp_codec::limits::DEFAULT_ID_PEEK_WINDOW;
use acp_codec::remote::HEADER_MAX_MESSAGE;
use acp_codec::{FrameError, Limits, LineSplitter};
use futures_util::stream::SplitStream;
use futures_util::{SinkExt, StreamExt};
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::http::header::{HeaderMap, HeaderValue, AUTHORIZATION, COOKIE};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message as WsMessage};
use tokio_tungstenite::WebSocketStream;

use crate::lines::{LineSender, LineSource};
use cookie::CookieJar;

/// Where to connect, parsed from a `ws://` or `wss://` URL.
#[derive(Debug)]
pub struct Target {
    /// The URL as printed: any token in it replaced by `***`.
    pub shown: String,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    pub port: u16,
    /// `wss://` or `https://`.
    pub tls: bool,
    /// `http://` or `https://`: the Streamable HTTP profile.
    pub http: bool,
    /// The upgrade request, `Authorization` set when a token is known.
    request: Request,
}

/// `url` with the value of any `token=` query parameter and any
/// `user:password@` replaced by `***`, for printing.
pub fn redact(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = String::with_capacity(url.len());
    match base.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            out.push_str(scheme);
            out.push_str("://");
            match authority.rsplit_once('@') {
                Some((_, host)) => {
                    out.push_str("***@");
                    out.push_str(host);
                }
                None => out.push_str(authority),
            }
            out.push_str(path);
        }
        None => out.push_str(base),
    }
    if let Some(q) = query {
        out.push('?');
        let pairs: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some(("token", _)) => "token=***".to_owned(),
                _ => kv.to_owned(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

/// Parses `url`; a `token=` in its query is moved into the header (unless
/// `token` is given) so it stays out of proxies' access logs.
///
/// # Errors
///
/// A scheme other than `ws`, `wss`, `http` or `https`, or a URL without a
/// host.
pub fn target(url: &str, token: Option<&str>) -> Result<Target, String> {
    let shown = redact(url);
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, q),
        None => (url, ""),
    };
    let mut url_token = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .filter(|kv| match kv.strip_prefix("token=") {
            Some(t) => {
                url_token = Some(t.to_owned());
                false
            }
            None => true,
        })
        .collect();
    let clean = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let mut request = clean
        .as_str()
        .into_client_request()
        .map_err(|e| format!("bad --connect URL {shown}: {e}"))?;
    let uri = request.uri();
    let (tls, http) = match uri.scheme_str() {
        Some("ws") => (false, false),
        Some("wss") => (true, false),
        Some("http") => (false, true),
        Some("https") => (true, true),
        _ => {
            return Err(format!(
                "--connect needs a ws://, wss://, http:// or https:// URL, got {shown}"
            ))
        }
    };
    let host = uri
        .host()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("--connect URL {shown} has no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    if let Some(token) = token.map(str::to_owned).or(url_token) {
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| "the token holds characters not allowed in an HTTP header".to_owned())?;
        value.set_sensitive(true);
        request.headers_mut().insert(AUTHORIZATION, value);
    }
    Ok(Target {
        shown,
        host,
        port,
        tls,
        http,
        request,
    })
}

impl Target {
    /// The upgrade request (the token, if any, in a sensitive header).
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// Whether a token is sent.
    pub fn has_token(&self) -> bool {
        self.request.headers().contains_key(AUTHORIZATION)
    }

    /// A fresh upgrade request (a new `Sec-WebSocket-Key`), with the token
    /// and the cookies of `jar` that apply.
    fn upgrade_request(&self, jar: &mut CookieJar) -> Result<Request, String> {
        let mut request = self
            .request
            .uri()
            .into_client_request()
            .map_err(|e| format!("bad --connect URL {}: {e}", self.shown))?;
        let headers = request.headers_mut();
        if let Some(auth) = self.request.headers().get(AUTHORIZATION) {
            headers.insert(AUTHORIZATION, auth.clone());
        }
        if let Some(cookies) = jar.header(self.path(), self.tls, SystemTime::now()) {
            let value = HeaderValue::from_str(&cookies)
                .map_err(|_| format!("{}: a cookie the server set is not a header", self.shown))?;
            headers.insert(COOKIE, value);
        }
        Ok(request)
    }

    /// Puts the cookies a response sets in `jar`; whether that changed what
    /// the next request sends.
    fn keep_cookies(&self, jar: &mut CookieJar, headers: &HeaderMap) -> bool {
        jar.store_response(
            headers,
            &self.host,
            self.path(),
            self.tls,
            SystemTime::now(),
        )
    }

    /// The URL's path, where cookies go.
    fn path(&self) -> &str {
        self.request.uri().path()
    }

    /// Whether the host is a loopback address or `localhost`.
    pub fn is_loopback(&self) -> bool {
        self.host.eq_ignore_ascii_case("localhost")
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// Any byte stream the WebSocket runs over (TCP, or TLS over TCP).
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Ws = WebSocketStream<Box<dyn Io>>;

/// How often a quiet WebSocket connection is pinged.
const PING_EVERY: Duration = Duration::from_secs(10);

/// How long a WebSocket connection may stay silent (no message, no pong)
/// before it counts as dead: a connection that vanished without a FIN
/// (a laptop asleep, a NAT that forgot it) is noticed within this.
const DEAD_AFTER: Duration = Duration::from_secs(30);

/// Resolves with a description once the connection has ended.
pub type Closed = Pin<Box<dyn Future<Output = String> + Send>>;

/// An open connection, split into the client's transport halves.
pub struct Connection {
    /// Incoming messages, one line each.
    pub source: RemoteSource,
    /// Outgoing lines, each sent as one text message.
    pub sink: LineSender,
    /// Resolves once `source` has seen the connection end.
    pub closed: Closed,
    /// The writer task: ends after sending a close frame once every
    /// [`LineSender`] clone is dropped.
    pub writer: JoinHandle<()>,
    /// Set when the server refused to take the connection up again after
    /// a break: it does not know the connection (`404`: another server,
    /// after the one that served it died) or no longer holds what followed
    /// a stream's position (`409`: a gap). Nothing can be resumed; a new
    /// connection can load the sessions (see [`crate::reconnect`]).
    pub forgotten: Arc<AtomicBool>,
}

/// The server's end of a [`Connection`] without a socket, for tests of
/// what runs above the transport.
#[cfg(test)]
pub(crate) struct FakeServer {
    /// The client's lines, each ending in `\n`.
    pub from_client: mpsc::Receiver<Vec<u8>>,
    /// Messages to the client; an `Err` ends the connection with its words.
    pub to_client: mpsc::Sender<Result<Result<String, FrameError>, String>>,
    /// The connection's [`Connection::forgotten`].
    pub forgotten: Arc<AtomicBool>,
}

#[cfg(test)]
impl Connection {
    /// A connection whose server is the returned [`FakeServer`].
    pub(crate) fn fake() -> (Self, FakeServer) {
        let (sink, from_client) = LineSender::channel();
        let (to_client, rx) = mpsc::channel(64);
        let (end_tx, end_rx) = oneshot::channel();
        let forgotten = Arc::<AtomicBool>::default();
        let conn = Self {
            source: RemoteSource {
                incoming: Incoming::Http(rx),
                shown: "fake".to_owned(),
                ended: Some(end_tx),
                max_message: usize::MAX,
            },
            sink,
            closed: Box::pin(async move { end_rx.await.unwrap_or_default() }),
            writer: tokio::spawn(async {}),
            forgotten: Arc::clone(&forgotten),
        };
        let server = FakeServer {
            from_client,
            to_client,
            forgotten,
        };
        (conn, server)
    }
}

/// Connects to the bridge: TCP, TLS for `wss://` (with `tls`), the
/// WebSocket upgrade; `max_message` bounds one incoming message.
///
/// # Errors
///
/// One line for each way it can fail: refused or unreachable, a TLS
/// failure, an HTTP refusal (401 for a wrong or missing token), a timeout.
pub async fn connect(
    target: Target,
    tls: Option<Arc<ClientConfig>>,
    timeout: Duration,
    max_message: usize,
) -> Result<Connection, String> {
    let shown = target.shown.clone();
    let secs = timeout.as_secs_f64();
    if target.http {
        return match tokio::time::timeout(timeout, http::connect(target, tls, max_message, None))
            .await
        {
            Ok(r) => r,
            Err(_) => Err(format!(
                "no connection to {shown} within {secs:.1} s (--timeout)"
            )),
        };
    }
    let ws = match tokio::time::timeout(timeout, handshake(target, tls, max_message)).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(format!(
                "no connection to {shown} within {secs:.1} s (--timeout)"
            ))
        }
    };
    let (mut sink, stream) = ws.split();
    let (sender, mut rx) = LineSender::channel();
    let writer = tokio::spawn(async move {
        // A ping while the connection is quiet: the server's pong (or any
        // message) is what tells the reader the connection is alive.
        let mut ping =
            tokio::time::interval_at(tokio::time::Instant::now() + PING_EVERY, PING_EVERY);
        loop {
            let line = tokio::select! {
                line = rx.recv() => match line {
                    Some(line) => line,
                    None => break,
                },
                _ = ping.tick() => {
                    if sink.send(WsMessage::Ping(Vec::new().into())).await.is_err() {
                        return;
                    }
                    continue;
                }
            };
            if sink.feed(text_message(line)).await.is_err() {
                return;
            }
            // Send what is queued, then flush once.
            while let Ok(more) = rx.try_recv() {
                if sink.feed(text_message(more)).await.is_err() {
                    return;
                }
            }
            if sink.flush().await.is_err() {
                return;
            }
        }
        // Every sender is gone: say goodbye properly.
        let _ = sink.close().await;
    });
    let (end_tx, end_rx) = oneshot::channel();
    let closed_shown = shown.clone();
    let closed: Closed = Box::pin(async move {
        end_rx
            .await
            .unwrap_or_else(|_| format!("connection to the bridge at {closed_shown} closed"))
    });
    Ok(Connection {
        source: RemoteSource {
            incoming: Incoming::Ws(stream),
            shown,
            ended: Some(end_tx),
            max_message,
        },
        sink: sender,
        closed,
        writer,
        forgotten: Arc::default(),
    })
}

/// Connects over Streamable HTTP (an `http://` or `https://` target) as
/// [`connect`] does, with a connection that comes back by itself: when
/// one of its TCP connections breaks (or stays silent past the server's
/// keep-alives for 30 s), it is dialed again under `policy` and each event
/// stream resumes with `Last-Event-ID` (nothing lost, nothing twice).
/// `reconnects` counts the connections replaced. It ends only when the
/// budget is spent or the server cannot resume a stream (then
/// [`Connection::forgotten`] says whether a new connection can load the
/// sessions: [`crate::reconnect`] does that).
///
/// # Errors
///
/// As [`connect`]; and for a WebSocket target, which resumes through
/// [`crate::reconnect`] instead.
pub async fn connect_resuming(
    target: Target,
    tls: Option<Arc<ClientConfig>>,
    timeout: Duration,
    max_message: usize,
    policy: Policy,
    reconnects: Arc<AtomicU64>,
) -> Result<Connection, String> {
    let shown = target.shown.clone();
    if !target.http {
        return Err(format!(
            "{shown} is a websocket url: it resumes through the reconnecting relay"
        ));
    }
    let resume = Some((policy, reconnects));
    match tokio::time::timeout(timeout, http::connect(target, tls, max_message, resume)).await {
        Ok(conn) => conn,
        Err(_) => Err(format!(
            "no connection to {shown} within {:.1} s (--timeout)",
            timeout.as_secs_f64()
        )),
    }
}

/// One encoded line (ending in `\n`) as one text message.
fn text_message(mut line: Vec<u8>) -> WsMessage {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    // The crate's encoders write UTF-8 only.
    WsMessage::Text(String::from_utf8_lossy(&line).into_owned().into())
}

async fn handshake(
    target: Target,
    tls: Option<Arc<ClientConfig>>,
    max_message: usize,
) -> Result<Ws, String> {
    // Read up to the ceiling, so that a message over the limit is skipped
    // (see `RemoteSource::next_line`) instead of ending the connection.
    let ceiling = max_message.saturating_mul(OVERSIZE_CEILING);
    let config = WebSocketConfig::default()
        .max_message_size(Some(ceiling))
        .max_frame_size(Some(ceiling));
    let mut jar = CookieJar::default();
    let mut may_retry = true;
    loop {
        // No ALPN: the upgrade is HTTP/1.1, whatever else the server speaks.
        let stream = open_stream(&target, tls.clone(), &[]).await?.io;
        let mut request = target.upgrade_request(&mut jar)?;
        // The limit, stated: a server that honours it sends nothing
        // longer (it tells the client what it dropped instead).
        request
            .headers_mut()
            .insert(HEADER_MAX_MESSAGE, HeaderValue::from(max_message));
        match tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await {
            // Cookies of the `101` would go on the connection's later HTTP
            // requests: a WebSocket connection makes none (and acp-client
            // does not reconnect), so they end with it, as the transport
            // allows.
            Ok((ws, _response)) => return Ok(ws),
            Err(WsError::Http(response)) => {
                let changed = target.keep_cookies(&mut jar, response.headers());
                // A front that pins clients by cookie may refuse a first
                // request without one, setting it: once more, with it.
                if changed && std::mem::take(&mut may_retry) {
                    continue;
                }
                return Err(refusal(&target.shown, &response));
            }
            Err(e) => {
                let hint = match &e {
                    WsError::Protocol(ProtocolError::HttparseError(_)) if !target.tls => {
                        " (is it serving TLS? try wss://)"
                    }
                    _ => "",
                };
                return Err(format!(
                    "websocket handshake with {} failed: {e}{hint}",
                    target.shown
                ));
            }
        }
    }
}

/// A refused upgrade as one line.
fn refusal(
    shown: &str,
    response: &tokio_tungstenite::tungstenite::handshake::client::Response,
) -> String {
    let status = response.status();
    let body = response
        .body()
        .as_deref()
        .map(String::from_utf8_lossy)
        .map(|b| b.trim().chars().take(200).collect::<String>())
        .filter(|b| !b.is_empty());
    let mut msg = format!(
        "the bridge at {shown} refused the connection: HTTP {}",
        status.as_u16()
    );
    if let Some(reason) = status.canonical_reason() {
        msg.push(' ');
        msg.push_str(reason);
    }
    if let Some(body) = body {
        msg.push_str(": ");
        msg.push_str(&body.replace(['\r', '\n'], " "));
    }
    if status.as_u16() == 401 {
        msg.push_str(" (give the bridge's token with --token or ACP_BRIDGE_TOKEN)");
    }
    msg
}

/// A byte stream to the server.
struct Opened {
    io: Box<dyn Io>,
    /// The protocol TLS agreed on by ALPN (`None` on plain TCP, or when
    /// the server picked none).
    alpn: Option<Vec<u8>>,
}

/// TCP, then TLS for `wss://` / `https://`, offering the `alpn` protocols
/// (none: the configuration's own, if any).
async fn open_stream(
    target: &Target,
    tls: Option<Arc<ClientConfig>>,
    alpn: &[&[u8]],
) -> Result<Opened, String> {
    let Target {
        shown, host, port, ..
    } = target;
    let tcp = tokio::net::TcpStream::connect((host.as_str(), *port))
        .await
        .map_err(|e| format!("cannot connect to {shown}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    if !target.tls {
        return Ok(Opened {
            io: Box::new(tcp),
            alpn: None,
        });
    }
    let mut config =
        tls.ok_or_else(|| "wss:// and https:// need a TLS configuration".to_owned())?;
    if !alpn.is_empty() {
        let mut with_alpn = (*config).clone();
        with_alpn.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        config = Arc::new(with_alpn);
    }
    let name = ServerName::try_from(host.clone())
        .map_err(|e| format!("{shown}: {host:?} is not a valid TLS server name: {e}"))?;
    let tls = tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| tls_failure(shown, host, &e))?;
    let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    Ok(Opened {
        io: Box::new(tls),
        alpn,
    })
}

/// One line for a failed TLS handshake, with a hint for the usual causes.
fn tls_failure(shown: &str, host: &str, e: &io::Error) -> String {
    use rustls::{CertificateError, Error as TlsError};
    let hint = match crate::tls::rustls_error(e) {
        Some(TlsError::InvalidCertificate(CertificateError::UnknownIssuer)) => {
            " (signed by a CA we do not trust: give a private CA with --ca-cert FILE)".to_owned()
        }
        Some(TlsError::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        )) => format!(" (the certificate does not name {host})"),
        Some(TlsError::InvalidMessage(_)) => " (is it serving TLS? try ws://)".to_owned(),
        Some(TlsError::InvalidCertificate(CertificateError::Other(o)))
            if format!("{o:?}").contains("CaUsedAsEndEntity") =>
        {
            " (the server presents a CA certificate as its own: give it a leaf certificate signed by a CA)"
                .to_owned()
        }
        _ => String::new(),
    };
    format!("tls handshake with {shown} failed: {e}{hint}")
}

/// How long and how often to redial.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// The most time spent redialing after one break; zero never redials.
    pub budget: Duration,
    /// The first wait before a redial (doubled each failure, with jitter).
    pub first_delay: Duration,
    /// The longest wait between two redials.
    pub max_delay: Duration,
}

impl Policy {
    /// Redials for up to `budget`, from 250 ms up to 8 s between tries.
    pub fn new(budget: Duration) -> Self {
        Self {
            budget,
            first_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(8),
        }
    }

    /// The wait before try number `attempt` (0-based): the doubled delay,
    /// capped, scaled by a jitter factor in `[0.5, 1.0]` from `random`.
    pub fn delay(&self, attempt: u32, random: u32) -> Duration {
        let doubled = self
            .first_delay
            .saturating_mul(1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX));
        let capped = doubled.min(self.max_delay);
        let jitter = 0.5 + f64::from(random % 1000) / 2000.0;
        capped.mul_f64(jitter)
    }

    /// Dials with this backoff and jitter, after one break noticed at
    /// `since`, until `dial` succeeds or the next wait would end past
    /// `since` plus the budget; then the last failure (empty when there
    /// was no time for a try). The one redial loop of both profiles.
    ///
    /// # Errors
    ///
    /// The last failure, once the budget is spent.
    pub async fn redial<T, F, Fut>(&self, since: Instant, mut dial: F) -> Result<T, String>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, String>>,
    {
        let mut last = String::new();
        for attempt in 0u32.. {
            let wait = self.delay(attempt, jitter());
            if since.elapsed() + wait > self.budget {
                break;
            }
            tokio::time::sleep(wait).await;
            match dial().await {
                Ok(done) => return Ok(done),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// A few random bits for the jitter.
fn jitter() -> u32 {
    let mut bytes = [0u8; 4];
    // Without a random source the jitter is fixed; the backoff still holds.
    let _ = getrandom::fill(&mut bytes);
    u32::from_le_bytes(bytes)
}

/// The receiving half: each message is one line.
pub struct RemoteSource {
    incoming: Incoming,
    shown: String,
    ended: Option<oneshot::Sender<String>>,
    /// The longest message delivered; a longer one is reported and skipped.
    max_message: usize,
}

/// Where messages come from: the WebSocket, or the SSE readers of the
/// Streamable HTTP profile (a message or one skipped for its size, or why
/// the connection ended).
enum Incoming {
    Ws(SplitStream<Ws>),
    Http(mpsc::Receiver<Result<Result<String, FrameError>, String>>),
}

/// How many times the client's limit the WebSocket layer reads of one
/// message (to skip it when it is over the limit); a longer message ends
/// the connection, as the layer cannot skip what it has not read.
pub const OVERSIZE_CEILING: usize = 2;

/// The error for a message of `len` bytes over `max`, whose first bytes
/// are `head`: its id peeked there, as the line splitter peeks it, so that
/// a request too long to read can still be answered.
pub(crate) fn too_long(head: &[u8], len: usize, max: usize) -> FrameError {
    let limits = Limits::default().with_max_line_len(head.len().saturating_sub(1));
    let mut splitter = LineSplitter::with_limits(&limits);
    let (id, is_request) = match splitter.decode(head).item {
        Some(Err(FrameError::LineTooLong(e))) => (e.id(), e.is_request()),
        _ => (None, false),
    };
    FrameError::LineTooLong(LineTooLong::new(max, len, id, is_request))
}

impl RemoteSource {
    fn end(&mut self, detail: String) {
        if let Some(tx) = self.ended.take() {
            let _ = tx.send(detail);
        }
    }
}

impl LineSource for RemoteSource {
    /// Cancel-safe (the stream keeps partial frames).
    async fn next_line(&mut self) -> io::Result<Option<Result<String, FrameError>>> {
        let stream = match &mut self.incoming {
            Incoming::Ws(stream) => stream,
            Incoming::Http(rx) => {
                let detail = match rx.recv().await {
                    Some(Ok(message)) => return Ok(Some(message)),
                    Some(Err(detail)) => detail,
                    None => format!("connection to {} closed", self.shown),
                };
                self.end(detail);
                return Ok(None);
            }
        };
        loop {
            let Ok(next) = tokio::time::timeout(DEAD_AFTER, stream.next()).await else {
                let detail = format!(
                    "connection to the bridge at {} lost: no word for {} s (not even an answer to a ping)",
                    self.shown,
                    DEAD_AFTER.as_secs()
                );
                self.end(detail);
                return Ok(None);
            };
            let detail = match next {
                Some(Ok(WsMessage::Text(text))) if text.len() > self.max_message => {
                    let head = text.as_bytes();
                    let head = head.get(..DEFAULT_ID_PEEK_WINDOW).unwrap_or(head);
                    return Ok(Some(Err(too_long(head, text.len(), self.max_message))));
                }
                // The message's bytes become the string's (no copy when
                // the layer holds them alone).
                Some(Ok(WsMessage::Text(text))) => {
                    let bytes = Vec::from(bytes::Bytes::from(text));
                    return match String::from_utf8(bytes) {
                        Ok(text) => Ok(Some(Ok(text))),
                        Err(e) => Ok(Some(Ok(String::from_utf8_lossy(e.as_bytes()).into_owned()))),
                    };
                }
                Some(Ok(WsMessage::Binary(b))) => {
                    eprintln!(
                        "acp-client: skipped a binary message of {} bytes from the bridge",
                        b.len()
                    );
                    continue;
                }
                Some(Ok(WsMessage::Close(frame))) => match frame {
                    Some(f) if !f.reason.is_empty() => format!(
                        "the bridge at {} closed the connection ({} {})",
                        self.shown,
                        u16::from(f.code),
                        f.reason
                    ),
                    Some(f) => format!(
                        "the bridge at {} closed the connection ({})",
                        self.shown,
                        u16::from(f.code)
                    ),
                    None => format!("the bridge at {} closed the connection", self.shown),
                },
                Some(Ok(_)) => continue,
                Some(Err(e)) => format!("connection to the bridge at {} lost: {e}", self.shown),
                None => format!("connection to the bridge at {} closed", self.shown),
            };
            self.end(detail);
            return Ok(None);
        }
    }
}

mod cookie;
mod http;
