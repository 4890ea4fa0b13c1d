#![no_main]
//! The remote transport's rules, and what a server keeps for a left
//! session: every refusal has an answer, the gate holds initialize-first,
//! a reattach gets what its session missed within the budget, in order.

#[path = "../checks/remote_transport.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
