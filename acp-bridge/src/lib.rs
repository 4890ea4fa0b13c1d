//! The application on acp-codec: an ACP client, a team server and a mock
//! agent, installed as three binaries (`cargo install --path acp-bridge`):
//!
//! - `acp-client`: runs one prompt turn against an agent (the built-in mock
//!   by default, any `--agent CMD`, or a server with `--connect`);
//! - `acp-bridge`: ACP's remote transport (WebSocket and Streamable HTTP on
//!   `/acp`) in front of an agent on stdio, for one person or a team;
//! - `acp-mock-agent`: the scripted agent on stdio.
//!
//! The binaries are wiring on tokio, axum and rustls; what they share is
//! this library:
//!
//! - [`client`]: `acp-client`'s protocol side (initialize, session/new, one
//!   prompt turn, or a conversation: [`interactive`] with its prompt line
//!   in [`editor`]), with [`render`] printing the turn, [`confined`] serving
//!   `fs/*` inside the session directory and [`terminals`] serving
//!   `terminal/*`;
//! - [`dialect`]: which ACP version the agent speaks, and the v1↔v2
//!   translator in front of a v2 agent;
//! - [`remote`]: ACP's remote transport (WebSocket and Streamable HTTP) as a
//!   line transport for the client, with [`tls`] for `wss://`/`https://`
//!   (and the bridge's server side);
//! - [`profiles`]: `acp-client`'s saved server profiles;
//! - [`mcp`]: the user's MCP servers (`--mcp-config`), offered to a local
//!   agent as they are and to a remote one over ACP through a relay;
//! - [`reconnect`]: the relay that redials with backoff and resumes
//!   through the codec's `remote::Rejoin` (what a client remembers so a
//!   new connection resumes where a broken one left off);
//! - [`users`]: `acp-bridge`'s token file (users and their permissions);
//! - [`room`]: each agent's room (its paths, its environment), confined by
//!   [`sandbox`] (Landlock) and started by [`supervisor`] as a process tree
//!   that ends as one;
//! - `serve` (hidden: the `acp-bridge` binary's only): the team server's
//!   arguments, access check, driver around the sans-IO core, agent
//!   processes, MCP relay sockets, logs and metrics;
//! - [`mock_agent`]: a scripted agent that behaves like Gemini CLI in
//!   `--acp` mode, used in-process by `acp-client`, on stdio by the
//!   `acp-mock-agent` binary and `acp-bridge --mock`;
//! - [`lines`]: the line transport under all of it: stdio read with
//!   `FramedRead` and the crate's `LineCodec`, lines written in order.

pub mod client;
pub mod confined;
pub mod dialect;
pub mod editor;
pub mod interactive;
pub mod limits;
pub mod lines;
pub mod mcp;
pub mod mock_agent;
pub mod profiles;
pub mod reconnect;
pub mod remote;
pub mod render;
pub mod room;
pub mod sandbox;
#[doc(hidden)]
pub mod serve;
pub mod supervisor;
pub mod terminals;
pub mod tls;
pub mod tool_cancel;
pub mod users;
