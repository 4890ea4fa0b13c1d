//! The team server's parts that are not the sockets: `acp-bridge`'s
//! arguments and what they become ([`args`]), who may connect
//! ([`access`]) and the caps on connections not yet authenticated
//! ([`door`]), the pump around the sans-IO core `acp_codec::remote::Server`
//! ([`driver`]: every input under one lock, its actions handed to
//! channels, its timer), the agent processes ([`agent`]) and their MCP
//! relay sockets ([`mcp`], and the `--mcp-relay` process), the log files
//! and stderr's lines ([`log`]), `/metrics` ([`metrics`]) and the mock
//! agent's hidden mode ([`mock`]).
//!
//! Only the `acp-bridge` binary uses this module (hidden from the docs; no
//! promise of stability): the binary keeps the listeners, the HTTP routes,
//! the WebSocket and Streamable HTTP readers and writers, and the start.

pub mod access;
pub mod agent;
pub mod args;
pub mod door;
pub mod driver;
pub mod log;
pub mod mcp;
pub mod metrics;
pub mod mock;
