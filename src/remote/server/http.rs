//! What the server answers before a message reaches a connection: the
//! HTTP request's method and headers, the connection its
//! `Acp-Connection-Id` names, a body over the limit, a refused token or
//! origin, a connection that cannot be named, `/health` and unknown
//! paths. The caller reads the requests and writes the answers; every
//! status and body a client sees is decided here.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write as _;
use core::time::Duration;

use super::{ConnectionId, HttpRefusal, PostOutcome, Principal, Profile, Server};
use crate::remote::router::MessageKind;
use crate::remote::transport::oversize;
use crate::remote::RemoteError;

/// The parts of a request to the ACP endpoint the server's rules read
/// (empty header values count as absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HttpHead<'a> {
    /// The method: `POST`, `GET`, `DELETE` (anything else is `405`).
    pub method: &'a str,
    /// `Content-Type`.
    pub content_type: Option<&'a str>,
    /// `Accept`.
    pub accept: Option<&'a str>,
    /// `Acp-Connection-Id`.
    pub connection_id: Option<&'a str>,
}

/// A Streamable HTTP request whose head the server accepted: what to do
/// with it next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpRoute {
    /// Read the body (at most `max_body` bytes, twice the message limit,
    /// else answer [`Server::body_too_large`]) and hand it to
    /// [`Server::handle_post`], which answers a request over the
    /// limit by its id.
    Post {
        /// The connection it names (`None`: no `Acp-Connection-Id`, only
        /// an `initialize` may come so).
        conn: Option<ConnectionId>,
        /// The largest body to read.
        max_body: usize,
    },
    /// Open a stream of `conn`: [`Server::handle_stream_opened`].
    Get {
        /// The connection.
        conn: ConnectionId,
    },
    /// Close `conn`: it is closed already, answer `202`.
    Deleted {
        /// The connection, for the caller's own records.
        conn: ConnectionId,
    },
}

/// Why a request's credentials were refused (the comparison of tokens is
/// the caller's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessRefusal<'a> {
    /// A browser page from an origin not allowed.
    Origin(&'a str),
    /// No token given, and one is required.
    NoToken,
    /// A token nobody holds.
    WrongToken,
}

impl HttpRefusal {
    /// The answer to a request naming a connection that is not open (or
    /// not the requester's): `404`.
    pub fn unknown_connection() -> Self {
        unknown_connection()
    }

    /// Whether the answer must carry `WWW-Authenticate: Bearer` (every
    /// `401`).
    pub const fn challenges(&self) -> bool {
        self.status == 401
    }
}

/// How much of an oversized message is looked at for its request id.
pub(super) const OVERSIZE_HEAD: usize = 4096;

/// The answer to a path the server does not serve.
const NOT_FOUND: &str = "not found: use /acp (websocket upgrade or streamable http) or GET /health";

impl Server {
    /// The answer to `GET /health`: `200` with `ok` while the server runs.
    pub fn health(&self) -> HttpRefusal {
        HttpRefusal::text(200, "ok")
    }

    /// The answer to a path the server does not serve (`404`), and to `/`
    /// without a WebSocket upgrade.
    pub fn not_found(&self) -> HttpRefusal {
        HttpRefusal::text(404, NOT_FOUND)
    }

    /// The answer to a refused origin (`403`) or token (`401`, with the
    /// challenge: [`HttpRefusal::challenges`]).
    pub fn refuse_access(&self, why: AccessRefusal<'_>) -> HttpRefusal {
        match why {
            AccessRefusal::Origin(origin) => {
                HttpRefusal::text(403, format!("origin {origin} is not allowed"))
            }
            AccessRefusal::NoToken => HttpRefusal::text(
                401,
                "token required: Authorization: Bearer TOKEN or ?token=TOKEN",
            ),
            AccessRefusal::WrongToken => HttpRefusal::text(401, "wrong token"),
        }
    }

    /// The answer to a `POST` whose body is over twice
    /// [`ServerConfig::max_message`](super::ServerConfig::max_message), too
    /// large to read for its id (`413`).
    pub fn body_too_large(&self) -> HttpRefusal {
        let max = self.config.max_message;
        HttpRefusal::text(413, format!("body exceeds the {max}-byte limit"))
    }

    /// A Streamable HTTP request's head, from `principal`: its method and
    /// headers checked, the connection its `Acp-Connection-Id` names found
    /// (only among `principal`'s own), a `DELETE` carried out.
    ///
    /// # Errors
    ///
    /// The refusal: `405` for another method, `415` for a `POST` not of
    /// `application/json`, `406` for a `GET` not accepting
    /// `text/event-stream`, `400` for a `GET` or `DELETE` without
    /// `Acp-Connection-Id`, `404` for one naming no connection of
    /// `principal`'s.
    pub fn handle_http_head(
        &mut self,
        now: Duration,
        principal: &Principal,
        head: &HttpHead<'_>,
    ) -> Result<HttpRoute, HttpRefusal> {
        let named = head.connection_id.filter(|v| !v.is_empty());
        match head.method {
            "POST" => {
                Self::check_post_headers(head.content_type)?;
                let conn = named.map(|n| self.named(principal, n)).transpose()?;
                Ok(HttpRoute::Post {
                    conn,
                    max_body: self.config.max_message.saturating_mul(2),
                })
            }
            "GET" => {
                Self::check_get_headers(head.accept)?;
                let conn = self.named(principal, named.ok_or_else(missing_connection)?)?;
                Ok(HttpRoute::Get { conn })
            }
            "DELETE" => {
                let conn = self.named(principal, named.ok_or_else(missing_connection)?)?;
                self.handle_closed(now, conn, super::Ending::Clean);
                Ok(HttpRoute::Deleted { conn })
            }
            _ => Err(HttpRefusal::text(405, "method not allowed")),
        }
    }

    /// The largest WebSocket message to read whole: twice
    /// [`ServerConfig::max_message`](super::ServerConfig::max_message), so a
    /// request just over the limit is answered by its id before the
    /// connection closes; a larger one is [`handle_too_large`](Self::handle_too_large).
    pub fn websocket_read_limit(&self) -> usize {
        self.config.max_message.saturating_mul(2)
    }

    /// The connection `name` (an `Acp-Connection-Id`) is, when it is
    /// `principal`'s.
    fn named(&self, principal: &Principal, name: &str) -> Result<ConnectionId, HttpRefusal> {
        self.names
            .get(name)
            .copied()
            .filter(|c| self.is_connection_of(*c, principal))
            .ok_or_else(unknown_connection)
    }

    /// The `Acp-Connection-Id` of `conn`, when it was opened with one.
    pub fn connection_name(&self, conn: ConnectionId) -> Option<&str> {
        self.conns.get(&conn).and_then(|c| c.name.as_deref())
    }

    /// A WebSocket connection opened by `principal` before its `101`
    /// (so the user's connection limit is exact), named from `random`
    /// (16 bytes of the operating system's random source; `None` when it
    /// failed): the name goes in the `101`'s `Acp-Connection-Id`.
    ///
    /// # Errors
    ///
    /// The refusal of the upgrade: `503` without a random source, the
    /// [`ConnectError`](super::super::ConnectError)'s status otherwise.
    pub fn open_websocket(
        &mut self,
        now: Duration,
        principal: &Principal,
        random: Option<[u8; 16]>,
    ) -> Result<(ConnectionId, String), HttpRefusal> {
        let random = random.ok_or_else(no_random_source)?;
        let conn = self
            .open(now, Profile::WebSocket, principal)
            .map_err(|e| HttpRefusal::text(e.http_status(), e.to_string()))?;
        Ok((conn, self.name(conn, random)))
    }

    /// One Streamable HTTP `POST`'s body (after
    /// [`handle_http_head`](Self::handle_http_head) gave
    /// [`HttpRoute::Post`], so its `Content-Type` is `application/json`):
    /// `conn` is the connection its `Acp-Connection-Id` names (`None`
    /// without the header), `session` its `Acp-Session-Id` (empty counts
    /// as absent). An `initialize` without a connection opens one for
    /// `principal`, named from `random` (16 bytes of the operating
    /// system's random source; `None` when it failed):
    /// [`connection_name`](Self::connection_name) is its
    /// `Acp-Connection-Id`.
    ///
    /// # Errors
    ///
    /// The refusal to answer the `POST` with: the transport's (a
    /// malformed message, a missing header, a response naming another
    /// session), `404` for a connection that is not open or not
    /// `principal`'s, `413` for a body over the limit (with the JSON-RPC
    /// error answering it by its id when it is a request, its first
    /// bytes naming it), `503` for an `initialize` without a random
    /// source or past the connections' limit, a [`ConnectError`]'s
    /// status for one the user may not open.
    ///
    /// [`ConnectError`]: super::super::ConnectError
    pub fn handle_post(
        &mut self,
        now: Duration,
        principal: &Principal,
        conn: Option<ConnectionId>,
        session: Option<&str>,
        body: &str,
        random: Option<[u8; 16]>,
    ) -> Result<PostOutcome, HttpRefusal> {
        let limit = self.config.max_message;
        if body.len() > limit {
            let head = body
                .as_bytes()
                .get(..OVERSIZE_HEAD)
                .unwrap_or(body.as_bytes());
            return Err(refusal(&oversize(head, body.len(), limit)));
        }
        let session = session.filter(|s| !s.is_empty());
        let naming = match random {
            Some(random) => Naming::Random(random),
            None => Naming::NoSource,
        };
        self.post(now, principal, conn, session, body, naming)
    }

    /// Names `conn` from `random`: its `Acp-Connection-Id`, 32 hex digits.
    pub(super) fn name(&mut self, conn: ConnectionId, random: [u8; 16]) -> String {
        let mut name = String::with_capacity(32);
        for b in random {
            let _ = write!(name, "{b:02x}");
        }
        if self.set_name(conn, &name) {
            self.names.insert(name.clone(), conn);
        }
        name
    }
}

fn missing_connection() -> HttpRefusal {
    HttpRefusal::text(400, "missing Acp-Connection-Id")
}

pub(super) fn unknown_connection() -> HttpRefusal {
    HttpRefusal::text(404, "unknown Acp-Connection-Id")
}

/// How a connection an `initialize` opens is named.
#[derive(Debug, Clone, Copy)]
pub(super) enum Naming {
    /// From these random bytes.
    Random([u8; 16]),
    /// The random source failed: no connection opens.
    NoSource,
}

pub(super) fn no_random_source() -> HttpRefusal {
    HttpRefusal::text(
        503,
        "no random source for a connection id: the connection is refused".to_owned(),
    )
}

/// The JSON-RPC reply to a refused message, as text, and what it
/// answers, when it has one.
pub(super) fn reply_text(e: &RemoteError) -> Option<(String, MessageKind)> {
    let mut line = Vec::new();
    let reply = e.reply()?;
    reply.encode(&mut line).ok()?;
    let text = String::from_utf8_lossy(line.trim_ascii_end()).into_owned();
    Some((text, MessageKind::answer(&reply.id)))
}

/// The answer to a refused `POST`: its status, and its JSON-RPC reply as
/// the body when it has one.
pub(super) fn refusal(e: &RemoteError) -> HttpRefusal {
    match reply_text(e) {
        Some((body, _)) => HttpRefusal {
            status: e.http_status(),
            body,
            json: true,
        },
        None => HttpRefusal::text(e.http_status(), e.to_string()),
    }
}
