//! The listener and the routes: `/acp` (and `/`, for older clients) with
//! both transport profiles, `GET /health`, the token and Origin checks, and
//! TLS when configured. HTTP/1.1 and HTTP/2 come from hyper, the routes
//! from axum.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::http::{self, Connections, Http};
use crate::respond::answer;
use crate::ws;
use acp_bridge::serve::access::{self, Listen};
use acp_bridge::serve::door::{Door, Ticket};
use acp_bridge::serve::driver::Driver;
use acp_bridge::serve::metrics;
use acp_bridge::users::Identity;
use acp_codec::remote::{Principal, Refusal};

/// Longest wait for a request head (the first is also bounded by
/// `--handshake-secs`).
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// What every handler gets: the core's driver and the Streamable HTTP
/// connections.
#[derive(Clone)]
pub struct App {
    pub driver: Arc<Driver>,
    pub http: Arc<Connections>,
    pub listen: Arc<Listen>,
    /// What `/metrics` encodes.
    pub metrics: Arc<prometheus_client::registry::Registry>,
}

/// The peer's address, put in each request's extensions.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

/// Accepts connections on `listener` until the process ends.
pub async fn serve(listener: TcpListener, app: App) {
    let (ws, http) = match app.listen.tls {
        Some(_) => ("wss", "https"),
        None => ("ws", "http"),
    };
    match listener.local_addr() {
        Ok(addr) => eprintln!(
            "acp-bridge: listening on {ws}://{addr} (ACP endpoint: {ws}://{addr}/acp and {http}://{addr}/acp; health: {http}://{addr}/health)"
        ),
        Err(e) => eprintln!("acp-bridge: listening ({e})"),
    }
    let driver = app.driver.clone();
    let routes = routes(app.clone());
    let tls = app.listen.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let door = Door::new(app.listen.door);
    let handshake = door.limits().handshake;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // Out of file descriptors and the like: wait, go on.
                tracing::warn!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // Past the caps on unauthenticated connections: closed at once.
        let ticket = match door.admit(peer.ip()) {
            Ok(ticket) => ticket,
            Err(reason) => {
                drop(stream);
                driver.refused(
                    reason,
                    Some(peer),
                    "at the door: too many connections not yet authenticated",
                );
                continue;
            }
        };
        let ticket = Arc::new(ticket);
        let _ = stream.set_nodelay(true);
        let routes = routes.clone();
        let tls = tls.clone();
        let door = door.clone();
        let driver = driver.clone();
        tokio::spawn(async move {
            let served = async {
                match tls {
                    None => serve_connection(stream, peer, routes, ticket.clone()).await,
                    Some(tls) => match tls.accept(stream).await {
                        Ok(stream) => serve_connection(stream, peer, routes, ticket.clone()).await,
                        Err(e) => Err(format!("tls handshake: {e}")),
                    },
                }
            };
            let result = tokio::select! {
                r = served => r,
                () = door.expired(&ticket) => {
                    let why = format!("not authenticated within {} s: closed", handshake.as_secs());
                    driver.refused(Refusal::Handshake, Some(peer), &why);
                    return;
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, "connection ended: {e}");
            }
        });
    }
}

/// HTTP/1.1 (with upgrades for WebSocket) or HTTP/2 on one stream, plain
/// or TLS. The Streamable HTTP profile asks for HTTP/2: over TLS the client
/// picks it by ALPN (the server offers `h2` and `http/1.1`), on plain TCP
/// by starting with HTTP/2's connection preface (prior knowledge, `h2c`);
/// anything else is HTTP/1.1, which WebSocket upgrades and older clients
/// use.
async fn serve_connection<S>(
    stream: S,
    peer: SocketAddr,
    routes: Router,
    ticket: Arc<Ticket>,
) -> Result<(), String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service =
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(Peer(peer));
            req.extensions_mut().insert(ticket.clone());
            routes.clone().oneshot(req.map(Body::new))
        });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    builder
        .serve_connection_with_upgrades(TokioIo::new(stream), service)
        .await
        .map_err(|e| format!("http: {e}"))
}

fn routes(app: App) -> Router {
    let max_body = app.listen.max_message;
    let acp = Router::new()
        .route("/acp", any(acp))
        .route("/", any(acp))
        .route(
            "/metrics",
            get(|State(app): State<App>| async move { metrics_text(&app.metrics) }),
        )
        .layer(middleware::from_fn_with_state(app.clone(), check_access))
        .layer(DefaultBodyLimit::max(max_body));
    Router::new()
        .route(
            "/health",
            get(|State(app): State<App>| async move {
                closing(answer(app.driver.with(|s, _| s.health())))
            }),
        )
        .merge(acp)
        .fallback(|State(app): State<App>| async move {
            closing(answer(app.driver.with(|s, _| s.not_found())))
        })
        .with_state(app)
}

/// `/acp`: a WebSocket upgrade, or a Streamable HTTP request. `/` serves
/// WebSocket upgrades only (what clients used before `/acp`).
async fn acp(State(app): State<App>, mut req: Request) -> Response {
    let peer = req
        .extensions()
        .get::<Peer>()
        .map_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)), |p| p.0);
    let identity = req
        .extensions()
        .get::<Identity>()
        .cloned()
        .unwrap_or_else(Identity::anonymous);
    let tag = identity.tag();
    let who = Principal {
        user: (!identity.user.is_empty()).then_some(identity.user),
        permissions: identity.permissions,
    };
    if let Some(upgrade) = ws::Upgrade::take(&mut req) {
        return ws::upgrade(app.driver, upgrade, peer, who, tag, req.headers());
    }
    if req.uri().path() != "/acp" {
        return answer(app.driver.with(|s, _| s.not_found()));
    }
    let http = Http {
        driver: app.driver,
        conns: app.http,
        peer,
    };
    http::handle(http, req, who, tag).await
}

/// [`access::who`]: the request goes on with the token's [`Identity`] in
/// its extensions.
async fn check_access(State(app): State<App>, mut req: Request, next: Next) -> Response {
    match access::who(&app.listen.access, req.headers(), req.uri().query()) {
        Ok(identity) => {
            // Authenticated: the connection leaves the front door's count.
            if let Some(ticket) = req.extensions().get::<Arc<Ticket>>() {
                ticket.pass();
            }
            req.extensions_mut().insert(identity);
            next.run(req).await
        }
        Err(why) => {
            let reason = access::refusal_reason(&why);
            let refusal = app.driver.with(|s, _| s.refuse_access(why));
            let peer = req.extensions().get::<Peer>().map(|p| p.0);
            let detail = format!("{} {}: {}", refusal.status, req.uri().path(), refusal.body);
            app.driver.refused(reason, peer, &detail);
            closing(answer(refusal))
        }
    }
}

/// The Prometheus text of `registry` (format 0.0.4).
fn metrics_text(registry: &prometheus_client::registry::Registry) -> Response {
    let body = metrics::encode(registry);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

/// Serves `/metrics` alone, with no token, on `listener` (`--metrics-addr`,
/// loopback only): HTTP/1.1, one request at a time per connection.
pub async fn serve_metrics(
    listener: TcpListener,
    registry: Arc<prometheus_client::registry::Registry>,
) {
    let routes = Router::new()
        .route(
            "/metrics",
            get(
                |State(r): State<Arc<prometheus_client::registry::Registry>>| async move {
                    metrics_text(&r)
                },
            ),
        )
        .with_state(registry);
    if let Err(e) = axum::serve(listener, routes).await {
        tracing::warn!("metrics listener: {e}");
    }
}

/// `resp`, ending its connection: one-off requests (health checks,
/// refusals) do not hold a connection open.
fn closing(mut resp: Response) -> Response {
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}
