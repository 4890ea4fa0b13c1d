#![no_main]
//! `remote::Server`'s resumable delivery, on WebSocket and on Streamable
//! HTTP: any breaks, reconnects and waits deliver every message once and
//! in order, or report the gap; the prompt runs exactly once, retries
//! and all.

#[path = "../checks/server_resume.rs"]
mod check;
#[path = "../checks/server_resume_http.rs"]
mod check_http;

// The same events, on each profile.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = check::check(data);
    let _ = check_http::check(data);
});
