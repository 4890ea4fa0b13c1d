#![no_main]
//! Structure-aware: what the crate's `Arbitrary` impls generate (typed ACP
//! requests, notifications, results, messages, stream-json events, chunked
//! transfers) encodes to one line that decodes back to an equal value.

#[path = "../checks/round_trip.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
