#![no_main]
//! v1↔v2 translation (feature `v2`): the same steps through
//! `V1ClientV2Agent` (every v1 prompt gets exactly one answer), through
//! `V2ClientV1Agent` (every v2 prompt one acceptance and one idle update)
//! and through the two chained (a v1 turn keeps its meaning end to end);
//! nothing panics.

#[path = "../checks/translate.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
