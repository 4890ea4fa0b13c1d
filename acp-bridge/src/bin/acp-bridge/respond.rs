//! What every handler answers with: the core's answers as HTTP
//! responses, and the random bytes the core names connections from.

use acp_codec::remote::HttpRefusal;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// 16 bytes of the operating system's random source, for the core to name
/// a connection from; `None` when the source failed (the core refuses
/// the connection then: without it there is no id nobody can guess).
pub fn random_name() -> Option<[u8; 16]> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes)
}

/// One of the core's answers (`200` for `/health`, or a refusal) as a
/// response: its status, its body (JSON or plain text), and the bearer
/// challenge a `401` carries.
pub fn answer(r: HttpRefusal) -> Response {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    let challenges = r.challenges();
    let mime = if r.json {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut resp = (status, [(header::CONTENT_TYPE, mime)], r.body).into_response();
    if challenges {
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    resp
}

/// A plain-text response of the binary's own (a failure of its I/O, not a
/// rule of the server's).
pub fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.to_owned(),
    )
        .into_response()
}
