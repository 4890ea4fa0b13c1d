//! The wire constants of ACP's Streamable HTTP & WebSocket transport: the
//! endpoint and its headers, the default limits, the fixed answers and the
//! WebSocket close codes. Both the transport's rules and its error use
//! them; this module imports neither.

use core::fmt;
use core::time::Duration;

/// The conventional path of the one endpoint both profiles share.
pub const ENDPOINT_PATH: &str = "/acp";

/// The header naming a connection: the server sets it on the `initialize`
/// response (and on the WebSocket upgrade's `101`); a Streamable HTTP
/// client sends it on every later request.
pub const HEADER_CONNECTION_ID: &str = "Acp-Connection-Id";

/// The header naming the session a Streamable HTTP request concerns, and
/// the session a `GET` event stream is for.
pub const HEADER_SESSION_ID: &str = "Acp-Session-Id";

/// The header a client may send with the negotiated protocol version.
pub const HEADER_PROTOCOL_VERSION: &str = "Acp-Protocol-Version";

/// The media type of the `GET` event streams (Server-Sent Events).
pub const EVENT_STREAM_MIME_TYPE: &str = "text/event-stream";

/// The media type of a `POST` body and of the `initialize` answer.
pub const JSON_MIME_TYPE: &str = "application/json";

/// The most output a server holds for one connection before it stops
/// reading the agent ([`Backlog`](crate::remote::Backlog)'s limit): 64 MiB,
/// the SDK's default (its `maxBufferedBytes`). Not the chunk reassembler's
/// budget, [`limits::DEFAULT_MAX_BUFFERED_BYTES`](crate::limits::DEFAULT_MAX_BUFFERED_BYTES).
pub const DEFAULT_MAX_BACKLOG_BYTES: usize = 64 * 1024 * 1024;

/// The longest session id or string request id a server accepts: 1,024
/// bytes, the SDK's default (it counts UTF-16 units).
pub const DEFAULT_MAX_ID_LENGTH: usize = 1024;

/// The most session streams one connection buffers without a reader: 1,024.
pub const DEFAULT_MAX_BUFFERED_SESSION_STREAMS: usize = 1024;

/// How long a server waits for a client that reads none of its output
/// before closing the connection: 60 seconds.
pub const DEFAULT_MAX_OUTPUT_STALL: Duration = Duration::from_secs(60);

/// The answer to a JSON array: one `-32600` error with `id: null`, the
/// SDK's exact text. The array's elements are never processed.
pub const BATCH_ERROR: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: JSON-RPC batches are not supported"}}"#;

/// The answer to text that is not JSON: `-32700` with `id: null`.
pub const PARSE_ERROR: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

/// The answer to JSON that is not a JSON-RPC message: `-32600` with
/// `id: null`.
pub const INVALID_REQUEST: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}"#;

/// A WebSocket close code (RFC 6455, section 7.4).
///
/// ```
/// use acp_codec::remote::CloseCode;
///
/// assert_eq!(CloseCode::MESSAGE_TOO_BIG.0, 1009);
/// assert_eq!(CloseCode::PROTOCOL_ERROR.to_string(), "1002 protocol error");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// `1000`: a normal close.
    pub const NORMAL: Self = Self(1000);
    /// `1001`: the server is shutting down.
    pub const GOING_AWAY: Self = Self(1001);
    /// `1002`: the first message is not an `initialize` request with an id.
    pub const PROTOCOL_ERROR: Self = Self(1002);
    /// `1008`: a limit of the connection was exceeded (buffered bytes, an
    /// over-long id, a client that stopped reading).
    pub const POLICY_VIOLATION: Self = Self(1008);
    /// `1009`: a message over the size limit.
    pub const MESSAGE_TOO_BIG: Self = Self(1009);
    /// `1011`: the server failed (the agent's `initialize` failed, a send
    /// failed).
    pub const INTERNAL_ERROR: Self = Self(1011);

    /// The standard name of a known code, `None` for others.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1000 => "normal closure",
            1001 => "going away",
            1002 => "protocol error",
            1008 => "policy violation",
            1009 => "message too big",
            1011 => "internal error",
            _ => return None,
        })
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} {}", self.0, name),
            None => write!(f, "{}", self.0),
        }
    }
}
