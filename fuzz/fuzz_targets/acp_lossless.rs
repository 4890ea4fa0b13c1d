#![no_main]
//! Typed ACP decoding: lenient never fails where strict succeeds and agrees
//! with it where nothing was salvaged; what decodes re-encodes to equal JSON.

#[path = "../checks/acp_lossless.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
