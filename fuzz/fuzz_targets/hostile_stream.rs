#![no_main]
//! Structure-aware: a `fuzzing::HostileStream` through a bridge's input path
//! (line splitter, ACP decoder, tracker, reassembler); each line gives what
//! its kind promises.

#[path = "../checks/hostile_stream.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
