#![no_main]
//! `remote::ResumeLog`, what a server keeps so a client resumes: every
//! message exactly once and in order, or a reported gap.

#[path = "../checks/resume_log.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
