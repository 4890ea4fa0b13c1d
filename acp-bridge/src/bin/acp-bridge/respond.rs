//! What every handler answers with: plain-text responses, and the
//! connection ids both profiles hand out.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// A fresh, unguessable connection id: 128 bits from the operating
/// system's random source, in hex.
///
/// # Errors
///
/// The random source failing: without it there is no id nobody can
/// guess, and the connection is refused.
pub fn new_connection_id() -> Result<String, getrandom::Error> {
    use std::fmt::Write as _;
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

/// A plain-text response.
pub fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.to_owned(),
    )
        .into_response()
}
