#![no_main]
//! `remote::Server`'s resumable delivery: any breaks, reconnects and
//! waits deliver every message once and in order, or report the gap; a
//! retried prompt runs once.

#[path = "../checks/server_resume.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
