#![no_main]
//! JSON string unescaping, on the line decoder's path: the text of a
//! chunk decodes as `serde_json` reads it, or is refused where it refuses.

#[path = "../checks/unescape.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
