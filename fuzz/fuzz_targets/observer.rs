#![no_main]
//! `acp::Observer` pairing requests and responses in both directions,
//! against a plain list.

#[path = "../checks/observer.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
