#![no_main]
//! `acp_bridge::users` and `acp_bridge::room`: a hostile token file and
//! server environment never give a user's agent another user's variables,
//! a token, a server variable outside the allow-list, or a path of
//! another user's room or of the bridge's own files.

#[path = "../checks/token_room.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
