#![no_main]
//! ACP message decoding: never panics; what decodes re-encodes to one line
//! of equal JSON that decodes to the same message.

#[path = "../checks/acp_message.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
