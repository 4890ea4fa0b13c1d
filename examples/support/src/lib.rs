//! The code the examples share, as an ordinary (unpublished) crate:
//!
//! - [`client`]: `acp_client`'s protocol side (initialize, session/new, one
//!   prompt turn), with [`render`] printing the turn, [`confined`] serving
//!   `fs/*` inside the session directory and [`terminals`] serving
//!   `terminal/*`;
//! - [`remote`]: ACP's remote transport (WebSocket and Streamable HTTP) as a
//!   line transport for the client, with [`tls`] for `wss://`/`https://`
//!   (and the bridge's server side);
//! - [`profiles`]: `acp_client`'s saved server profiles;
//! - [`users`]: `ws_bridge`'s token file (users and their permissions);
//! - [`mock_agent`]: a scripted agent that behaves like Gemini CLI in
//!   `--acp` mode, used in-process by `acp_client`, on stdio by the
//!   `mock_agent` example and `ws_bridge --mock`;
//! - [`lines`]: the line transport under all of it: stdio read with
//!   `FramedRead` and the crate's `LineCodec`, lines written in order.

pub mod client;
pub mod confined;
pub mod lines;
pub mod mock_agent;
pub mod profiles;
pub mod remote;
pub mod render;
pub mod terminals;
pub mod tls;
pub mod users;
