#![no_main]
//! Typed ACP decoding against the independent oracle (plain serde derives
//! generated from the same spec): the same lines accepted, equal JSON.

#[path = "../checks/acp_oracle.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
