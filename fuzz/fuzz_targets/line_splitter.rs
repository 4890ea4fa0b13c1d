#![no_main]
//! Split invariance and the naive oracle for `LineSplitter`.

#[path = "../checks/line_splitter.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
