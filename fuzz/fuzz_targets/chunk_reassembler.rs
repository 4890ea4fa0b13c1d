#![no_main]
//! Budget, caps and exact rebuilding for `Reassembler` and `ChunkEncoder`.

#[path = "../checks/chunk_reassembler.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
