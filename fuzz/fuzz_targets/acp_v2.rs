#![no_main]
//! ACP v2 (feature `v2`): every v2 message kind decoded by method; lenient
//! agrees with strict, nothing a peer sent is lost, and decode, encode,
//! decode gives the same value (for lines and for generated values alike).

#[path = "../checks/acp_v2.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
