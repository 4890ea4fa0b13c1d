//! A client's own limit on the messages it reads.
//!
//! A WebSocket layer reads a message whole before its reader sees it, so a
//! client cannot skip a message far over its limit: its layer ends the
//! connection instead. A client that states its limit when it connects
//! ([`Server::set_client_limit`], from [`HEADER_MAX_MESSAGE`]) is never
//! sent a longer message; what it would have got is replaced by what
//! tells it (and the agent, when the agent waits for an answer).

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use core::time::Duration;

use super::http::OVERSIZE_HEAD;
use super::{ConnectionId, Server};
use crate::acp::RequestId;
use crate::framing::peek::{peek, Peek};
use crate::remote::router::MessageKind;
use crate::remote::Stream;
use crate::ErrorCode;
use crate::PeekedId;

/// The request header in which a WebSocket client states the longest
/// message it reads, in bytes (decimal). The server then never sends it a
/// longer one (see [`Server::set_client_limit`]).
pub const HEADER_MAX_MESSAGE: &str = "Acp-Bridge-Max-Message-Bytes";

impl Server {
    /// `conn`'s client reads messages of at most `max` bytes (it said so
    /// when it connected, in [`HEADER_MAX_MESSAGE`]).
    ///
    /// A longer message for it is not sent (nor one within a few hundred
    /// bytes of `max`: the room a position stamp takes). An answer to one of its
    /// requests becomes that request's error (`-32603`, with the size and
    /// the limit); a request of the agent is answered for the client with
    /// an error (`-32600`), so the agent does not wait for it; and the
    /// client is told with [`LINE_DROPPED`](super::LINE_DROPPED) (`size`, `limit`, the
    /// `sessionId` of the stream it was for, and `id` for a request), on
    /// the stream the message was for. The connection goes on.
    ///
    /// For a WebSocket connection (a Streamable HTTP client reads an
    /// event as it comes and can skip it; the call is ignored there).
    pub fn set_client_limit(&mut self, conn: ConnectionId, max: usize) {
        self.set_max_incoming(conn, max);
    }

    /// `text` when `conn`'s client reads a message of its size (with the
    /// room resumable delivery's stamp may add); `None` when it is over
    /// the client's limit, with what replaces it queued.
    pub(super) fn within_client_limit(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        stream: &Stream,
        text: String,
        kind: &MessageKind,
    ) -> Option<String> {
        let limit = self.conns.get(&conn).and_then(|c| c.max_incoming);
        let room = stamp_room(stream);
        let Some(limit) = limit.filter(|l| text.len().saturating_add(room) > *l) else {
            return Some(text);
        };
        let size = text.len();
        // Its id is the one it was routed with; its session, when its
        // stream does not say, from its first bytes (this runs only for a
        // message dropped).
        let (id, is_request) = match kind {
            MessageKind::Request(id) => (Some(id.clone()), true),
            MessageKind::Answer(id) => (Some(id.clone()), false),
            MessageKind::Notification => (None, false),
        };
        let named = match stream {
            Stream::Session(_) => None,
            Stream::Connection => {
                let head = text.as_bytes();
                peek(head.get(..OVERSIZE_HEAD).unwrap_or(head)).session
            }
        };
        drop(text);
        self.log(format!(
            "{conn}: a message of {size} bytes not sent: over its client's {limit}-byte limit"
        ));
        match (id, is_request) {
            // An answer to the client's request: that request's error.
            (Some(id), false) => {
                let msg = format!(
                    "the agent's response of {size} bytes exceeds this client's {limit}-byte limit"
                );
                let line = super::error_answer(&id, ErrorCode::INTERNAL_ERROR, msg);
                let kind = MessageKind::Answer(id);
                self.send_within_limit(now, conn, stream.clone(), line, &kind);
            }
            (id, is_request) => {
                let request = id.filter(|_| is_request);
                if let Some(id) = &request {
                    // Answered as the client would answer a request it
                    // could not read.
                    let msg = format!(
                        "the agent's request of {size} bytes exceeds the client's {limit}-byte limit"
                    );
                    let line = super::error_answer(id, ErrorCode::INVALID_REQUEST, msg);
                    self.handle_text(now, conn, &line);
                }
                let session = match stream {
                    Stream::Session(s) => Some(s.clone()),
                    Stream::Connection => named.map(|s| s.as_str().to_string()),
                };
                let notice = super::line_dropped(size, limit, request.as_ref(), session.as_deref());
                let kind = MessageKind::Notification;
                self.send_within_limit(now, conn, stream.clone(), notice, &kind);
            }
        }
        None
    }
}

impl Server {
    /// A message a resume sends `conn` again (`text`: from a log, stamped
    /// at its position, or the resume's own error) as its client may read
    /// it: `text` when within the client's stated limit; else what the
    /// live path sends in a message's place
    /// ([`within_client_limit`](Self::within_client_limit): an answer's
    /// error under its id, or [`LINE_DROPPED`](super::LINE_DROPPED) with
    /// the size, the limit, a request's id and the session), stamped at
    /// the same position, so that the client sees no gap. A message logged
    /// for an earlier connection may be longer than the limit the resuming
    /// client states. An agent's request dropped so is not answered for
    /// the client here: it was asked of an earlier connection.
    pub(super) fn replay_within_limit(
        &mut self,
        conn: ConnectionId,
        stream: &Stream,
        text: String,
    ) -> String {
        let limit = self.conns.get(&conn).and_then(|c| c.max_incoming);
        let Some(limit) = limit.filter(|l| text.len() > *l) else {
            return text;
        };
        let size = text.len();
        let head = text.as_bytes();
        let peeked = peek(head.get(..OVERSIZE_HEAD).unwrap_or(head));
        let at = crate::remote::unstamp(&text).map(|(session, at, _)| (session, at));
        drop(text);
        self.log(format!(
            "{conn}: a message of {size} bytes not sent again: over its client's {limit}-byte limit"
        ));
        let line = match kind_of(&peeked) {
            MessageKind::Answer(id) => {
                let msg = format!(
                    "the agent's response of {size} bytes exceeds this client's {limit}-byte limit"
                );
                super::error_answer(&id, ErrorCode::INTERNAL_ERROR, msg)
            }
            kind => {
                let request = match &kind {
                    MessageKind::Request(id) => Some(id),
                    _ => None,
                };
                let session = match stream {
                    Stream::Session(s) => Some(s.clone()),
                    Stream::Connection => peeked.session.map(|s| s.as_str().to_string()),
                };
                super::line_dropped(size, limit, request, session.as_deref())
            }
        };
        match at {
            Some((session, at)) => crate::remote::stamp(&line, session.as_deref(), at),
            None => line,
        }
    }
}

/// The kind of a message no router routed (a translator's line, a
/// resume's replay), as its first bytes say (`peeked`).
pub(super) fn kind_of(peeked: &Peek) -> MessageKind {
    let id = peeked.id.as_ref().map(|id| match id {
        PeekedId::Null => RequestId::Null,
        PeekedId::Number(n) => RequestId::Number(*n),
        PeekedId::Str(s) => RequestId::Str(s.as_str().to_owned().into()),
    });
    match (id, peeked.is_request) {
        (Some(id), true) => MessageKind::Request(id),
        (Some(id), false) => MessageKind::Answer(id),
        (None, _) => MessageKind::Notification,
    }
}

/// The most bytes resumable delivery's stamp adds to a message on
/// `stream` (its position, and the session's id escaped): the limit is
/// checked before the stamp, so that a message dropped takes no position
/// (the notice replacing it takes the next one, and the client sees no
/// gap).
fn stamp_room(stream: &Stream) -> usize {
    let session = match stream {
        Stream::Session(s) => s.len().saturating_mul(6),
        Stream::Connection => 0,
    };
    STAMP_ROOM.saturating_add(session)
}

/// The stamp's bytes besides the session's id: its members' names and
/// punctuation, and a position of up to 20 digits, with room to spare.
const STAMP_ROOM: usize = 128;
