#![no_main]
//! `remote::parts::Router`, the multiplexer a bridge runs: only single, valid lines
//! reach the agent; clients get valid messages, routed by session.

#[path = "../checks/bridge_router.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
