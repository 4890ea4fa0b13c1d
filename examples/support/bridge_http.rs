//! The bridge's HTTP side, transport-agnostic: read a request head from any
//! `AsyncRead + AsyncWrite` stream (plain TCP, or TLS with `--tls-cert`),
//! answer `GET /health`, check the token and the Origin, and hand
//! the stream, with the bytes already read, to the WebSocket handshake.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// Largest request head accepted (bytes).
pub const MAX_HEAD: usize = 16 * 1024;

/// The parts of a request head the bridge looks at.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Head {
    /// `GET`, …
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// `token` from the query string.
    pub query_token: Option<String>,
    /// The bearer token of the `Authorization` header.
    pub bearer: Option<String>,
    /// The `Origin` header.
    pub origin: Option<String>,
    /// Whether the request asks for a WebSocket upgrade.
    pub upgrade: bool,
}

/// Who may connect.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The bearer token, when one is required.
    pub token: Option<String>,
    /// Origins a browser page may connect from (exact match, such as
    /// `http://localhost:5173`); requests without `Origin` (non-browser
    /// clients) are not affected.
    pub allowed_origins: Vec<String>,
}

/// Why a request is refused: the HTTP status and a one-line reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The status code.
    pub status: u16,
    /// The reason, sent as the body.
    pub reason: String,
}

/// What to do with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `GET /health`: answer `200 ok`.
    Health,
    /// A WebSocket upgrade that passed the checks.
    Upgrade,
    /// Refused.
    Refuse(Refusal),
}

/// Compares in time independent of where the first difference is.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Decides what to do with a request.
pub fn route(head: &Head, access: &Access) -> Route {
    if head.path == "/health" && !head.upgrade {
        return if head.method == "GET" || head.method == "HEAD" {
            Route::Health
        } else {
            Route::Refuse(Refusal {
                status: 405,
                reason: "method not allowed".into(),
            })
        };
    }
    if !head.upgrade || head.method != "GET" {
        return Route::Refuse(Refusal {
            status: 404,
            reason: "not found: use a websocket upgrade or GET /health".into(),
        });
    }
    if let Some(origin) = &head.origin {
        if !access.allowed_origins.iter().any(|o| o == origin) {
            return Route::Refuse(Refusal {
                status: 403,
                reason: format!("origin {origin} is not allowed"),
            });
        }
    }
    if let Some(token) = &access.token {
        let given = head.bearer.as_deref().or(head.query_token.as_deref());
        match given {
            Some(g) if same_secret(g, token) => {}
            Some(_) => {
                return Route::Refuse(Refusal {
                    status: 401,
                    reason: "wrong token".into(),
                })
            }
            None => {
                return Route::Refuse(Refusal {
                    status: 401,
                    reason: "token required: Authorization: Bearer TOKEN or ?token=TOKEN".into(),
                })
            }
        }
    }
    Route::Upgrade
}

/// Parses a complete request head.
pub fn parse_head(bytes: &[u8]) -> Result<Option<(Head, usize)>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("bad request head: {e}")),
    };
    let mut head = Head {
        method: req.method.unwrap_or_default().to_owned(),
        ..Head::default()
    };
    let target = req.path.unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    head.path = path.to_owned();
    head.query_token = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(str::to_owned);
    for h in req.headers.iter() {
        let value = std::str::from_utf8(h.value).unwrap_or("").trim();
        if h.name.eq_ignore_ascii_case("authorization") {
            let mut parts = value.splitn(2, ' ');
            if parts
                .next()
                .is_some_and(|s| s.eq_ignore_ascii_case("bearer"))
            {
                head.bearer = parts.next().map(|t| t.trim().to_owned());
            }
        } else if h.name.eq_ignore_ascii_case("origin") {
            head.origin = Some(value.to_owned());
        } else if h.name.eq_ignore_ascii_case("upgrade") {
            head.upgrade = value.eq_ignore_ascii_case("websocket");
        }
    }
    Ok(Some((head, len)))
}

/// Reads a request head (at most [`MAX_HEAD`] bytes). Returns it with every
/// byte read so far, to replay into the WebSocket handshake.
pub async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<(Head, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed before the request head ended",
            ));
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
        match parse_head(&buf) {
            Ok(Some((head, _))) => return Ok((head, buf)),
            Ok(None) if buf.len() > MAX_HEAD => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("request head over {MAX_HEAD} bytes"),
                ))
            }
            Ok(None) => {}
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        }
    }
}

/// Writes a small plain-text HTTP response and shuts the stream down.
pub async fn respond<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: u16,
    body: &str,
    head_only: bool,
) -> io::Result<()> {
    let text = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Error",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if status == 401 {
        out.push_str("www-authenticate: Bearer\r\n");
    }
    out.push_str("\r\n");
    if !head_only {
        out.push_str(body);
    }
    stream.write_all(out.as_bytes()).await?;
    stream.shutdown().await
}

/// A stream that first replays bytes already read from it.
#[derive(Debug)]
pub struct Replay<S> {
    prefix: Vec<u8>,
    at: usize,
    inner: S,
}

impl<S> Replay<S> {
    /// `inner`, with `prefix` read first.
    pub fn new(prefix: Vec<u8>, inner: S) -> Self {
        Self {
            prefix,
            at: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Replay<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at < this.prefix.len() {
            let rest = this.prefix.get(this.at..).unwrap_or_default();
            let n = rest.len().min(buf.remaining());
            buf.put_slice(rest.get(..n).unwrap_or_default());
            this.at += n;
            if this.at == this.prefix.len() {
                this.prefix = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Replay<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
