//! A small HTTP front for the tests: a reverse proxy on 127.0.0.1 that
//! stands where a load balancer would, in front of one `acp-bridge`, and
//! notes every request it gets (method, HTTP version, `Cookie` header,
//! the status it answered). It speaks HTTP/1.1 only, or HTTP/1.1 and
//! HTTP/2 (by ALPN over TLS, by the preface on plain TCP), so a test can
//! tell which version a client used. With `affinity` it pins clients by
//! cookie the way some load balancers do (see [`AFFINITY`]). To the bridge it speaks HTTP/1.1, one
//! connection per request, WebSocket upgrades relayed byte for byte.
//!
//! Written on hyper directly and sharing nothing with the client under
//! test. Its runtime, and every connection, stops when it is dropped.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// How the front behaves.
#[derive(Debug, Clone, Default)]
pub struct FrontConfig {
    /// Serve HTTP/2 as well as HTTP/1.1; else HTTP/1.1 only (an HTTP/2
    /// preface is dropped, ALPN offers `http/1.1` alone).
    pub http2: bool,
    /// TLS with this certificate chain and key (PEM files).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Pin clients by cookie ([`AFFINITY`]).
    pub affinity: bool,
}

/// The affinity cookie: a request without it is refused with `307` to the
/// same URL and the cookie set (a load balancer's challenge).
pub const AFFINITY: &str = "lb=pinned-1";
/// The route cookie, set on the first response the bridge gave; every
/// request after it without it is refused `403`.
pub const ROUTE: &str = "route=b1";
/// Set beside the route cookie, and never to be sent back: expired at
/// once, expired long ago, for another path.
pub const NEVER_SENT: [&str; 3] = [
    "stale=1; Max-Age=0",
    "old=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
    "elsewhere=1; Path=/other",
];

/// One request the front got.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub version: Version,
    /// The `Cookie` header as sent.
    pub cookie: Option<String>,
    /// What the front answered.
    pub status: u16,
}

struct State {
    upstream: SocketAddr,
    affinity: bool,
    /// The route cookie was set.
    routed: AtomicBool,
    seen: Mutex<Vec<Seen>>,
}

pub struct Front {
    pub addr: SocketAddr,
    state: Arc<State>,
    _runtime: tokio::runtime::Runtime,
}

impl Front {
    /// A front on a free loopback port, proxying to `upstream`.
    pub fn start(upstream: SocketAddr, config: FrontConfig) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            upstream,
            affinity: config.affinity,
            routed: AtomicBool::new(false),
            seen: Mutex::new(Vec::new()),
        });
        let tls = config.tls.as_ref().map(|(cert, key)| {
            let base = acp_bridge::tls::server_config(cert, key).unwrap();
            let mut server = (*base).clone();
            server.alpn_protocols = if config.http2 {
                vec![b"h2".to_vec(), b"http/1.1".to_vec()]
            } else {
                vec![b"http/1.1".to_vec()]
            };
            tokio_rustls::TlsAcceptor::from(Arc::new(server))
        });
        let shared = state.clone();
        let http2 = config.http2;
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (state, tls) = (shared.clone(), tls.clone());
                tokio::spawn(async move {
                    match tls {
                        None => serve(tcp, state, http2).await,
                        Some(tls) => {
                            if let Ok(stream) = tls.accept(tcp).await {
                                serve(stream, state, http2).await;
                            }
                        }
                    }
                });
            }
        });
        Self {
            addr,
            state,
            _runtime: runtime,
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far, in the order they came.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }
}

async fn serve<S>(stream: S, state: Arc<State>, http2: bool)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(proxy(req, &state).await) }
    });
    // (`auto::Builder::http1_only` does not hold with upgrades.)
    let _ = if http2 {
        auto::Builder::new(TokioExecutor::new())
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .await
    } else {
        hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades()
            .await
            .map_err(Into::into)
    };
}

/// Headers that belong to one hop, not passed on (but kept for an upgrade).
const HOP: [header::HeaderName; 5] = [
    header::CONNECTION,
    header::TE,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::HOST,
];

fn pass_on(from: &HeaderMap, to: &mut HeaderMap, upgrade: bool) {
    for (name, value) in from {
        let hop = HOP.contains(name) || name.as_str() == "keep-alive";
        let keep = upgrade && (name == header::CONNECTION || name == header::UPGRADE);
        if !hop || keep {
            to.append(name.clone(), value.clone());
        }
    }
}

async fn proxy(mut req: Request<hyper::body::Incoming>, state: &State) -> Response<ProxyBody> {
    let cookie = req
        .headers()
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (method, version) = (req.method().to_string(), req.version());
    let has = |c: &str| {
        cookie
            .as_deref()
            .is_some_and(|all| all.split("; ").any(|pair| pair == c))
    };
    let resp = if state.affinity && !has(AFFINITY) {
        let mut resp = text(StatusCode::TEMPORARY_REDIRECT, "no affinity cookie");
        let headers = resp.headers_mut();
        headers.insert(header::LOCATION, req.uri().path().parse().unwrap());
        let set = format!("{AFFINITY}; Path=/; HttpOnly");
        headers.insert(header::SET_COOKIE, set.parse().unwrap());
        resp
    } else if state.affinity && state.routed.load(Ordering::SeqCst) && !has(ROUTE) {
        text(StatusCode::FORBIDDEN, "misrouted: no route cookie")
    } else {
        let upgrade = req.headers().contains_key(header::UPGRADE);
        let client_side = upgrade.then(|| hyper::upgrade::on(&mut req));
        let mut resp = forward(req, client_side, state).await;
        let ok = resp.status().is_success() || resp.status() == StatusCode::SWITCHING_PROTOCOLS;
        if state.affinity && ok && !state.routed.swap(true, Ordering::SeqCst) {
            let headers = resp.headers_mut();
            let set = format!("{ROUTE}; Path=/acp; Max-Age=3600");
            for line in std::iter::once(set.as_str()).chain(NEVER_SENT) {
                headers.append(header::SET_COOKIE, line.parse().unwrap());
            }
        }
        resp
    };
    state.seen.lock().unwrap().push(Seen {
        method,
        version,
        cookie,
        status: resp.status().as_u16(),
    });
    resp
}

/// The request sent on to the bridge; its response (or a `502`).
async fn forward(
    req: Request<hyper::body::Incoming>,
    client_side: Option<hyper::upgrade::OnUpgrade>,
    state: &State,
) -> Response<ProxyBody> {
    let (parts, body) = req.into_parts();
    let upgrade = client_side.is_some();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut out = Request::builder()
        .method(parts.method.clone())
        .uri(path)
        .header(header::HOST, state.upstream.to_string());
    pass_on(&parts.headers, out.headers_mut().unwrap(), upgrade);
    let out = out.body(body.boxed()).unwrap();
    let Ok(tcp) = tokio::net::TcpStream::connect(state.upstream).await else {
        return text(StatusCode::BAD_GATEWAY, "upstream down");
    };
    let Ok((mut send, conn)) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await
    else {
        return text(StatusCode::BAD_GATEWAY, "upstream handshake");
    };
    tokio::spawn(conn.with_upgrades());
    let Ok(mut resp) = send.send_request(out).await else {
        return text(StatusCode::BAD_GATEWAY, "upstream failed");
    };
    let switching = resp.status() == StatusCode::SWITCHING_PROTOCOLS;
    if let (true, Some(client_side)) = (switching, client_side) {
        let upstream_side = hyper::upgrade::on(&mut resp);
        tokio::spawn(async move {
            if let (Ok(a), Ok(b)) = (client_side.await, upstream_side.await) {
                let (mut a, mut b) = (TokioIo::new(a), TokioIo::new(b));
                let _ = tokio::io::copy_bidirectional(&mut a, &mut b).await;
            }
        });
    }
    let mut back = Response::builder().status(resp.status());
    pass_on(resp.headers(), back.headers_mut().unwrap(), switching);
    back.body(resp.into_body().boxed()).unwrap()
}

pub fn text(status: StatusCode, body: &str) -> Response<ProxyBody> {
    let mut resp = Response::new(
        Full::new(Bytes::from(body.to_owned()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}
