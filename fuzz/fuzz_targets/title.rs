#![no_main]
//! Title parsing: slices of the input, exact re-display, the naive oracle.

#[path = "../checks/title.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
