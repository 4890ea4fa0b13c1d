#![no_main]
//! The turn view: arbitrary update sequences never panic, stay within the
//! limits, and never lose text.

#[path = "../checks/turn_view.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
