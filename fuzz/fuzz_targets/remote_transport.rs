#![no_main]
//! The remote transport's rules and replay buffer: every refusal has an
//! answer, the gate holds initialize-first, the replay buffer its budget.

#[path = "../checks/remote_transport.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
