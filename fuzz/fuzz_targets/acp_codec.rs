#![no_main]
//! Split invariance, the line-codec oracle and stable re-encoding for
//! `AcpCodec`.

#[path = "../checks/acp_codec.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
