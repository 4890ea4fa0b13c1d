//! The listener and the routes: `/acp` (and `/`, for older clients) with
//! both transport profiles, `GET /health`, the token and Origin checks, and
//! TLS when configured. HTTP/1.1 comes from hyper, the routes from axum.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ws::{rejection::WebSocketUpgradeRejection, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::http::{self, Connections};
use crate::hub::Shared;
use crate::ws;
use acp_examples::users::{Identity, TokenFile};

/// Longest TLS handshake, and longest wait for a request head.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// Who may connect.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The bearer token, when one is required (the single-user case).
    pub token: Option<String>,
    /// The users of a token file, when one is given instead.
    pub users: Option<Arc<TokenFile>>,
    /// Origins a browser page may connect from (exact match, such as
    /// `http://localhost:5173`); requests without `Origin` (non-browser
    /// clients) are not affected.
    pub allowed_origins: Vec<String>,
}

/// What every handler gets: the hub and the Streamable HTTP connections.
#[derive(Clone)]
pub struct App {
    pub shared: Arc<Shared>,
    pub http: Arc<Connections>,
}

/// The peer's address, put in each request's extensions.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

/// Accepts connections on `listener` until the process ends.
pub async fn serve(listener: TcpListener, app: App) {
    let (ws, http) = match app.shared.config.tls {
        Some(_) => ("wss", "https"),
        None => ("ws", "http"),
    };
    match listener.local_addr() {
        Ok(addr) => eprintln!(
            "ws_bridge: listening on {ws}://{addr} (ACP endpoint: {ws}://{addr}/acp and {http}://{addr}/acp; health: {http}://{addr}/health)"
        ),
        Err(e) => eprintln!("ws_bridge: listening ({e})"),
    }
    let routes = routes(app.clone());
    let tls = app
        .shared
        .config
        .tls
        .clone()
        .map(tokio_rustls::TlsAcceptor::from);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // Out of file descriptors and the like: wait, go on.
                eprintln!("ws_bridge: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let routes = routes.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let result = match tls {
                None => serve_connection(stream, peer, routes).await,
                Some(tls) => match tokio::time::timeout(HANDSHAKE, tls.accept(stream)).await {
                    Ok(Ok(stream)) => serve_connection(stream, peer, routes).await,
                    Ok(Err(e)) => Err(format!("tls handshake: {e}")),
                    Err(_) => Err("no tls handshake within 10 s".to_owned()),
                },
            };
            if let Err(e) = result {
                eprintln!("ws_bridge: {peer}: {e}");
            }
        });
    }
}

/// HTTP/1.1 on one stream (plain or TLS), with upgrades for WebSocket.
async fn serve_connection<S>(stream: S, peer: SocketAddr, routes: Router) -> Result<(), String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service =
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(Peer(peer));
            routes.clone().oneshot(req.map(Body::new))
        });
    hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HANDSHAKE)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await
        .map_err(|e| format!("http: {e}"))
}

fn routes(app: App) -> Router {
    let max_body = app.shared.config.max_message;
    let acp = Router::new()
        .route("/acp", any(acp))
        .route("/", any(acp))
        .layer(middleware::from_fn_with_state(app.clone(), check_access))
        .layer(DefaultBodyLimit::max(max_body));
    Router::new()
        .route(
            "/health",
            get(|| async { closing(text(StatusCode::OK, "ok")) }),
        )
        .merge(acp)
        .fallback(|| async {
            closing(text(
                StatusCode::NOT_FOUND,
                "not found: use /acp (websocket upgrade or streamable http) or GET /health",
            ))
        })
        .with_state(app)
}

/// `/acp`: a WebSocket upgrade, or a Streamable HTTP request. `/` serves
/// WebSocket upgrades only (what clients used before `/acp`).
async fn acp(
    State(app): State<App>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    req: Request,
) -> Response {
    let peer = req
        .extensions()
        .get::<Peer>()
        .map_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)), |p| p.0);
    let who = req
        .extensions()
        .get::<Identity>()
        .cloned()
        .unwrap_or_else(Identity::anonymous);
    if let Ok(upgrade) = upgrade {
        return ws::upgrade(app.shared, upgrade, peer, who);
    }
    if req.uri().path() != "/acp" {
        return text(
            StatusCode::NOT_FOUND,
            "not found: use /acp (websocket upgrade or streamable http) or GET /health",
        );
    }
    http::handle(app, req, who).await
}

/// The Origin allow-list, then the bearer token (`Authorization: Bearer T`
/// or `?token=T`, compared in constant time): the request goes on with the
/// token's [`Identity`] in its extensions.
async fn check_access(State(app): State<App>, mut req: Request, next: Next) -> Response {
    match who(&app.shared.config.access, req.headers(), req.uri().query()) {
        Ok(identity) => {
            req.extensions_mut().insert(identity);
            next.run(req).await
        }
        Err((status, reason)) => {
            let peer = req.extensions().get::<Peer>().map(|p| p.0.to_string());
            app.shared.log_line(&format!(
                "{}: refused {} {}: {reason}",
                peer.unwrap_or_default(),
                status.as_u16(),
                req.uri().path()
            ));
            let mut resp = closing(text(status, &reason));
            if status == StatusCode::UNAUTHORIZED {
                resp.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            resp
        }
    }
}

/// The identity a request's token gives, or the refusal.
fn who(
    access: &Access,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Identity, (StatusCode, String)> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !access.allowed_origins.iter().any(|o| o == origin) {
            return Err((
                StatusCode::FORBIDDEN,
                format!("origin {origin} is not allowed"),
            ));
        }
    }
    if access.token.is_none() && access.users.is_none() {
        return Ok(Identity::anonymous());
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    let from_query = query
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="));
    let Some(given) = bearer.or(from_query) else {
        return Err((
            StatusCode::UNAUTHORIZED,
            "token required: Authorization: Bearer TOKEN or ?token=TOKEN".to_owned(),
        ));
    };
    let found = match (&access.users, &access.token) {
        (Some(users), _) => users.lookup(given),
        (None, Some(token)) => {
            bool::from(given.as_bytes().ct_eq(token.as_bytes())).then(Identity::anonymous)
        }
        (None, None) => None,
    };
    found.ok_or((StatusCode::UNAUTHORIZED, "wrong token".to_owned()))
}

/// `resp`, ending its connection: one-off requests (health checks,
/// refusals) do not hold a connection open.
fn closing(mut resp: Response) -> Response {
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// The JSON-RPC line (without `\n`) answering a refused message, when it
/// can be answered.
pub fn reply_line(e: &acp_codec::remote::RemoteError) -> Option<String> {
    let mut line = Vec::new();
    e.reply()?.encode(&mut line).ok()?;
    line.pop();
    String::from_utf8(line).ok()
}

/// A plain-text response.
pub fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.to_owned(),
    )
        .into_response()
}
