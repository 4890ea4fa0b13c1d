#![no_main]
//! `remote::Server`, the team server's sans-IO core: sessions never reach
//! another user, owners never change, every request is answered once,
//! queues stay within their budget.

#[path = "../checks/server_core.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
