#![no_main]
//! `acp_bridge::mcp::relay::Relay`: any interleaving of the agent's
//! `mcp/connect`, `mcp/message` and `mcp/disconnect`, the servers' lines
//! and exits, time and the session's end: every agent request answered
//! once, by its own server or with an error, lines only to live
//! connections, in order.

#[path = "../checks/mcp_relay.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
