//! Who may use the server: how clients authenticate (open, one token, a
//! token file), the `Origin` allow-list, and the check of one request's
//! headers against them (the answer to a refusal is the core's,
//! `Server::refuse_access`).

use std::sync::Arc;

use acp_codec::remote::{AccessRefusal, Refusal};
use axum::http::{header, HeaderMap};
use subtle::ConstantTimeEq;

use super::door::DoorLimits;
use crate::users::{Identity, TokenFile};

/// How clients authenticate.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Nobody: open, on loopback only; everyone is the one anonymous user.
    Open,
    /// One bearer token; whoever has it is the one anonymous user.
    Token(String),
    /// A token file: each token names a user and their permissions.
    Users(Arc<TokenFile>),
}

/// Who may connect.
#[derive(Debug, Clone)]
pub struct Access {
    /// How clients authenticate.
    pub auth: Auth,
    /// Origins a browser page may connect from (exact match, such as
    /// `http://localhost:5173`); requests without `Origin` (non-browser
    /// clients) are not affected.
    pub allowed_origins: Vec<String>,
}

/// What the listener runs with.
#[derive(Debug, Clone)]
pub struct Listen {
    /// Token and Origin checks.
    pub access: Access,
    /// The caps and deadlines on connections not yet authenticated.
    pub door: DoorLimits,
    /// TLS (`wss://`, `https://…/health`), when set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Largest message from a client (bytes).
    pub max_message: usize,
}
/// The `Origin` allow-list, then the bearer token (`Authorization: Bearer
/// T` or `?token=T`, compared in constant time): the identity the
/// request's token gives, or why it is refused (the answer is the core's).
///
/// # Errors
///
/// [`AccessRefusal`]: an `Origin` not allowed, no token, a wrong token.
pub fn who<'r>(
    access: &Access,
    headers: &'r HeaderMap,
    query: Option<&str>,
) -> Result<Identity, AccessRefusal<'r>> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !access.allowed_origins.iter().any(|o| o == origin) {
            return Err(AccessRefusal::Origin(origin));
        }
    }
    if let Auth::Open = access.auth {
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
        return Err(AccessRefusal::NoToken);
    };
    let found = match &access.auth {
        Auth::Users(users) => users.lookup(given),
        Auth::Token(token) => {
            bool::from(given.as_bytes().ct_eq(token.as_bytes())).then(Identity::anonymous)
        }
        Auth::Open => None,
    };
    found.ok_or(AccessRefusal::WrongToken)
}

/// The refusal a failed access check counts as (`/metrics`, the log).
pub fn refusal_reason(why: &AccessRefusal<'_>) -> Refusal {
    match why {
        AccessRefusal::Origin(_) => Refusal::Origin,
        AccessRefusal::NoToken => Refusal::NoToken,
        _ => Refusal::WrongToken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn access(auth: Auth) -> Access {
        Access {
            auth,
            allowed_origins: vec!["http://localhost:5173".to_owned()],
        }
    }

    fn headers(pairs: &[(header::HeaderName, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(name.clone(), HeaderValue::from_static(value));
        }
        h
    }

    #[test]
    fn a_request_is_checked_for_its_origin_then_its_token() {
        let token = access(Auth::Token("s3cret".to_owned()));
        let bearer = headers(&[(header::AUTHORIZATION, "Bearer s3cret")]);
        assert!(who(&token, &bearer, None).is_ok());
        assert!(who(&token, &HeaderMap::new(), Some("a=1&token=s3cret")).is_ok());
        let wrong = headers(&[(header::AUTHORIZATION, "Bearer s3cre")]);
        assert!(matches!(
            who(&token, &wrong, None),
            Err(AccessRefusal::WrongToken)
        ));
        assert!(matches!(
            who(&token, &HeaderMap::new(), Some("tok=s3cret")),
            Err(AccessRefusal::NoToken)
        ));
        // The origin is checked first, even with the right token.
        let page = headers(&[
            (header::ORIGIN, "http://evil.example"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert!(matches!(
            who(&token, &page, None),
            Err(AccessRefusal::Origin("http://evil.example"))
        ));
        let allowed = headers(&[(header::ORIGIN, "http://localhost:5173")]);
        assert!(who(&access(Auth::Open), &allowed, None).is_ok());
        assert!(matches!(
            who(&access(Auth::Open), &page, None),
            Err(AccessRefusal::Origin(_))
        ));
    }
}
