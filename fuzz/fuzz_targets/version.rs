#![no_main]
//! Version negotiation: any first line, the negotiator never panics and
//! chooses as a reference does; the `initialize` rewrite between v1 and v2
//! renames only the role members and round-trips.

#[path = "../checks/version.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
