#![no_main]
//! v1↔v2 translation (feature `v2`): a v1 client and a v2 agent through
//! `V1ClientV2Agent`, steps in any order; nothing panics and every v1
//! prompt gets exactly one answer.

#[path = "../checks/translate.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
