//! The application's integration tests: one test binary (one link of
//! tokio, hyper and rustls, where a binary per file linked them eight
//! times over). Each module is one suite; run one with its module name as
//! the filter: `cargo test -p acp-bridge --test integration remote::`.
//! The flood test (`tests/bridge_flood.rs`, 12,000 sockets) keeps a binary
//! of its own, so nothing else runs beside it.

// Helpers shared by several suites.
#[cfg(target_os = "linux")]
#[path = "../support/front.rs"]
mod front;
#[cfg(target_os = "linux")]
#[path = "../support/ws_harness.rs"]
mod ws_harness;

#[cfg(target_os = "linux")]
#[path = "../support/editor.rs"]
mod editor;
#[cfg(target_os = "linux")]
#[path = "../support/fault_proxy.rs"]
mod fault_proxy;
#[cfg(target_os = "linux")]
#[path = "../support/nginx.rs"]
mod nginx;
#[cfg(target_os = "linux")]
#[path = "../support/pty.rs"]
mod pty;
#[path = "../support/resume_server.rs"]
mod resume_server;
#[cfg(target_os = "linux")]
#[path = "../support/resume_ws.rs"]
mod resume_ws;

mod bridge;
mod bridge_agents;
mod bridge_big;
mod bridge_close;
mod bridge_command;
#[cfg(target_os = "linux")]
mod bridge_limits;
mod bridge_rooms;
mod bridge_users;
#[cfg(target_os = "linux")]
mod client_interactive;
mod client_mcp;
mod client_oversized;
mod client_profiles;
mod client_salvage;
mod client_terminal;
#[cfg(target_os = "linux")]
mod client_v2;
#[cfg(target_os = "linux")]
mod cluster;
mod library;
mod mcp_relay_seeds;
mod mock_v2;
#[cfg(target_os = "linux")]
mod operator;
mod rejoin;
#[cfg(target_os = "linux")]
mod rejoin_bridge;
mod remote;
mod room_env;
#[cfg(target_os = "linux")]
mod server_bridge;
#[cfg(target_os = "linux")]
mod session_dir;
#[cfg(target_os = "linux")]
mod stdio_bridge;
mod token_room_seeds;
