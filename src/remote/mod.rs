//! The server side of ACP's remote transport, sans-IO: the rules of the
//! "Streamable HTTP & WebSocket Transport" (as the official TypeScript SDK
//! 2.4 applies them) and the team server's core, [`Server`]: a
//! multiplexing router that lets many client connections share one agent
//! process, and positions and logs for clients that reconnect.
//!
//! The caller owns the sockets, the HTTP server and the agent process; the
//! types here decide, per message, what to forward, what to answer and
//! where each message goes.
//!
//! # The transport
//!
//! One endpoint ([`ENDPOINT_PATH`], `/acp`), two profiles:
//!
//! - **WebSocket**: a `GET` with `Upgrade: websocket`; the `101` answer
//!   carries [`HEADER_CONNECTION_ID`]. One JSON-RPC message per text frame.
//!   Each frame goes through the connection's gate: the first message
//!   must be an `initialize` request with an id (else close with
//!   [`CloseCode::PROTOCOL_ERROR`]), a second `initialize` is answered with
//!   an error, a JSON array with [`BATCH_ERROR`] (one `-32600`, `id: null`),
//!   and a frame over the size limit closes with
//!   [`CloseCode::MESSAGE_TOO_BIG`] after answering its request
//!   ([`oversize`]).
//! - **Streamable HTTP**: client→server messages are `POST`ed: an
//!   `initialize` without [`HEADER_CONNECTION_ID`]
//!   creates a connection and is answered `200` with the agent's response
//!   and the new id in that header; everything else names the connection
//!   and is answered `202`; session-scoped methods ([`is_session_scoped`])
//!   also carry [`HEADER_SESSION_ID`]. Server→client messages flow on
//!   long-lived `GET` event streams ([`EVENT_STREAM_MIME_TYPE`]), one for
//!   the connection and one per session ([`Stream`]). `DELETE` with the
//!   connection id ends it.
//!
//! Each refusal is a [`RemoteError`] that knows its JSON-RPC code, HTTP
//! status, WebSocket close code and the JSON-RPC reply to send, if any.
//!
//! # The router
//!
//! Inside [`Server`], one router per agent process takes one input per
//! call and says what to send: lines for the agent's stdin, messages for
//! clients (with the [`Stream`] each belongs on). The rules:
//!
//! - Protocol versions: each client's is read from its `initialize` (a
//!   [`Negotiator`](crate::version::Negotiator) over v1 and v2), the
//!   agent's from its answer; a client is routed by its version's method
//!   table (which methods name a session, open one, reattach one, and may
//!   be sent with `read` alone: v1's, or v2's, derived from the v2
//!   schema). A client of another version than the agent's is refused at
//!   `initialize` with `-32022` and `{"requested":N,"supported":[M]}`,
//!   `M` the agent's; an `initialize` without a version the router reads
//!   goes to the agent, which answers it.
//! - Client requests get router-unique ids toward the agent (a
//!   [`Tracker`](crate::acp::Tracker)); the response goes back to the
//!   requester with its own id.
//! - Each client is a connection of a user ([`Principal`]; anonymous in
//!   the single-user case). A session belongs to
//!   the user whose `session/new` (or `session/fork`) response created
//!   it, or whose `session/load` / `session/resume` asked for it, across
//!   that user's connections and reconnects; one connection of the user
//!   holds it at a time (the creator, then whichever reattached it last).
//!   `session/update` and other notifications, and agent requests
//!   (`session/request_permission`, `fs/*`, `terminal/*`, …), go to the
//!   connection holding `params.sessionId`. Another user naming the session
//!   (`session/prompt`, `session/cancel`, `session/load`,
//!   `session/set_mode`, …) is refused with `-32602`, in words that name no
//!   user; the owner's other connections must reattach it first. A named
//!   user's requests on a session the router has never seen (say, the
//!   agent's from before the bridge started) are refused the same way;
//!   so is a reattach of one, unless the agent is that user's own (one
//!   agent per user, [`PoolMode`]; a shared agent is the anonymous
//!   user's), which then makes it theirs. A `session/list` answer shows a named user their own
//!   sessions only.
//! - Ownership never lapses: a session the router has seen stays its
//!   user's for the router's lifetime, across the agent's restarts and
//!   whatever is evicted for memory. Past the user's limit, the oldest left
//!   sessions are evicted to a compact record: a 64-bit SipHash-2-4 of the
//!   id, keyed ([`ServerConfig::hash_key`]), and the user, about 30 bytes a
//!   session whatever the id's length, kept for the router's lifetime.
//!   Evicted sessions stay reattachable by their user alone; should two
//!   users' sessions share a hash, neither may be reattached by anyone
//!   (a collision refuses, it never hands a session over).
//! - [`Permissions`]: `read` lets a user watch their own sessions,
//!   `write` also lets them prompt, change sessions and answer the agent
//!   (see its docs for the exact methods); a refused request gets
//!   [`FORBIDDEN`].
//! - Per user, at most [`DEFAULT_MAX_USER_CONNECTIONS`] connections and
//!   [`DEFAULT_MAX_USER_SESSIONS`] open sessions
//!   ([`ServerConfig::max_user_connections`],
//!   [`ServerConfig::max_user_sessions`]): a connection past the limit is
//!   refused ([`ConnectError`]), a request opening a session past it gets
//!   [`USER_LIMIT`]; other users never notice.
//! - The agent's own request ids are unique among its pending requests, so
//!   they are forwarded unchanged; a reply is accepted only from the client
//!   the request was sent to.
//! - A client that leaves: its sessions get `session/cancel`, its pending
//!   permission requests are answered `cancelled` and other agent requests
//!   an error; responses to its requests are dropped. Nobody else notices.
//!   What the agent sends for its sessions afterwards is kept, within
//!   the budget ([`ServerConfig::replay_bytes`]), for the client that
//!   reattaches them.
//! - The agent exiting: every pending client request is answered with an
//!   error, every client gets [`AGENT_EXITED`] (with the sessions it lost),
//!   later [`AGENT_STARTED`]. Each session stays its user's, for them
//!   alone to reattach on the restarted agent.
//!
//! # The team server
//!
//! [`Server`] is a whole server's rules over the router: connections of
//! both profiles with their users ([`Principal`]), the agent processes (one
//! shared, or one per user: [`PoolMode`]), flow control, limits and every
//! error a client sees; events in with `now`, [`Action`]s out. A binary
//! around it only moves bytes and runs processes. See [`Server`]
//! for an example.
//!
//! # The client
//!
//! A client's side of resumable delivery, for both profiles, is
//! [`Rejoin`] (positions per stream, [`StreamPositions`], from WebSocket's
//! stamps or SSE's `id:`s; unanswered requests sent again; sessions
//! resumed or loaded on a new connection): see the [`Rejoin`] docs.
//!
//! # Limits
//!
//! | what | default | when exceeded |
//! |---|---|---|
//! | a message either way (a `POST` body, a WebSocket message, an agent line) | the codec's line limit, [`DEFAULT_MAX_LINE_LEN`](crate::limits::DEFAULT_MAX_LINE_LEN) ([`ServerConfig::max_message`]) | `413` or close `1009`, a request answered by its id ([`RemoteError::TooLarge`]); an agent line dropped and reported ([`LINE_DROPPED`]) |
//! | output held for a connection | 64 MiB ([`DEFAULT_MAX_BACKLOG_BYTES`]) | stop reading the agent; close with `1008` after [`DEFAULT_MAX_OUTPUT_STALL`] without progress ([`Backlog`]) |
//! | a session or string request id | 1,024 bytes ([`DEFAULT_MAX_ID_LENGTH`]) | [`RemoteError::IdTooLong`]: `400`, or close `1008` |
//! | session streams without a reader | 1,024 ([`DEFAULT_MAX_BUFFERED_SESSION_STREAMS`]) | close the connection |
//! | a client's requests waiting on the agent | 1,024 ([`DEFAULT_MAX_PENDING_PER_CLIENT`]) | refused with `-32603` |
//! | a user's connections | 256 ([`DEFAULT_MAX_USER_CONNECTIONS`]) | [`ConnectError::TooManyConnections`]: `429` |
//! | a user's open sessions | 256 ([`DEFAULT_MAX_USER_SESSIONS`]) | refused with [`USER_LIMIT`] (`-32011`) |
//! | a user's left sessions kept in full for a reattach | as many as open sessions | the oldest evicted to a compact record (about 30 bytes each, kept for the router's lifetime), still the user's |
//! | resume and replay, per stream | 4 MiB of text ([`DEFAULT_RESUME_BUDGET`], [`ServerConfig::replay_bytes`]) | oldest dropped first; a resume past it is a gap (`-32012`, `409`), a replay reports it ([`REPLAY_DROPPED`]) |
//! | requests remembered for retries, per connection | 64 answered and 64 running ([`DEFAULT_MAX_PROMPT_KEYS`], [`Ledger`]) | the oldest of each forgotten |
//! | replay, sessions | 64 ([`DEFAULT_MAX_REPLAY_SESSIONS`]) | messages for more sessions are dropped |

mod backlog;
mod error;
mod rejoin;
mod resume;
mod router;
mod routing;
mod server;
mod transport;
mod wire;

pub use backlog::{Backlog, BacklogError};
pub use error::{RemoteError, Reply};
pub use rejoin::{ask_for_positions, Delivery, Rejoin, RejoinError, StreamPositions, TURN_LOST};
pub use resume::{
    capability, sse_event, stamp, unstamp, Admit, Cursor, Kind, Ledger, Position, PromptKey,
    ResumeError, ResumeLog, DEFAULT_MAX_PROMPT_KEYS, DEFAULT_RESUME_BUDGET, DEFAULT_RESUME_GRACE,
    HEADER_LAST_EVENT_ID, META_CURSOR, META_IDEMPOTENCY_KEY, META_RESUME, REPLAY_CURSOR,
    RESUME_GAP,
};
pub use router::{
    AgentLine, ClientText, ConnectError, Permissions, UnknownPermission, AGENT_EXITED,
    AGENT_STARTED, DEFAULT_MAX_PENDING_PER_CLIENT, DEFAULT_MAX_REPLAY_SESSIONS,
    DEFAULT_MAX_USER_CONNECTIONS, DEFAULT_MAX_USER_SESSIONS, FORBIDDEN, USER_LIMIT,
};
pub use server::{
    AccessRefusal, Action, AgentRun, Census, ConnectionId, Ending, Event, HttpHead, HttpRefusal,
    HttpRoute, McpLink, McpRefusal, McpRelay, OpenedStream, PoolMode, PostOutcome, Principal,
    Profile, Refusal, Server, ServerConfig, StartReason, Stats, StopReason, AGENTS_FULL,
    BINARY_REFUSED, DEFAULT_MCP_TIMEOUT, DEFAULT_SSE_KEEP_ALIVE, HEADER_MAX_MESSAGE, LINE_DROPPED,
    MAX_EVENTS, MAX_MCP_DECLARED, REPLAY_DROPPED,
};
pub use transport::{
    answer_stream, check_response_session, error_stream, is_reattach, is_session_scoped, oversize,
    session_field, session_of, CloseCode, SessionField, Stream, BATCH_ERROR,
    DEFAULT_MAX_BACKLOG_BYTES, DEFAULT_MAX_BUFFERED_SESSION_STREAMS, DEFAULT_MAX_ID_LENGTH,
    DEFAULT_MAX_OUTPUT_STALL, ENDPOINT_PATH, EVENT_STREAM_MIME_TYPE, HEADER_CONNECTION_ID,
    HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, INVALID_REQUEST, JSON_MIME_TYPE, PARSE_ERROR,
};

/// Not part of the API: the parts [`Server`] is built of, on their own, for
/// this crate's benches, fuzz targets and tests (which hold each part's
/// rules apart from the whole server). No user of the crate needs them (the
/// application, `acp-bridge`, drives [`Server`] alone); they may change or
/// go in any release.
#[doc(hidden)]
pub mod parts {
    pub use super::router::{ClientId, MessageKind, Out, Router};
    pub use super::transport::{check_post, Checked, Gate, Post};
}
