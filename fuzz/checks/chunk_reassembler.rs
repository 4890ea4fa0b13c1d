//! The invariant behind the `chunk_reassembler` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: byte 0 picks the limits, then a program of frame operations (start,
//! chunk, end, other event, garbage line, reset) over three transfer ids with
//! small, tight limits. Asserted for any program:
//! - no panic; every line gets an item or a typed error;
//! - the reassembler's buffers never exceed the shared budget, and a
//!   completed output never exceeds the result limit;
//! - a completed output is exactly what was sent for it, in order;
//! - after `finish`, nothing is open and the budget is back to 0.
//!
//! Then the input, as text, is encoded with `ChunkEncoder` at a frame length
//! picked from byte 0 and must rebuild exactly, every line within the frame.

use acp_codec::chunk::{ChunkEncoder, Pushed, Reassembler};
use acp_codec::stream_json::{Event, Status, Text, ToolResult};
use acp_codec::Limits;

const IDS: [&str; 3] = ["a", "b\"c", "run_shell_command-1-0"];
const ALPHABET: [&str; 8] = ["x", "é", "😀", "\n", "\u{1}", "\"", "\\", "\u{2028}"];

fn program(limits: &Limits, ops: &[u8]) {
    let mut r = Reassembler::with_limits(limits);
    // What each transfer has been sent so far, to check completed outputs.
    let mut sent: [Option<String>; 3] = [None, None, None];
    let mut seq = [0u64; 3];
    let mut it = ops.iter().copied();
    while let Some(op) = it.next() {
        let arg = it.next().unwrap_or(0);
        let k = usize::from(arg % 3);
        let id = IDS[k];
        let id_json = serde_json::to_string(id).unwrap();
        let line = match op % 7 {
            0 => {
                sent[k] = Some(String::new());
                seq[k] = 0;
                let total = u64::from(it.next().unwrap_or(0)) * 3;
                format!(
                    r#"{{"type":"tool_result_start","tool_id":{id_json},"status":"success","total_bytes":{total}}}"#
                )
            }
            1 | 2 => {
                let n = usize::from(it.next().unwrap_or(0) % 16);
                let piece: String = (0..n)
                    .map(|i| ALPHABET[(usize::from(arg) + i) % 8])
                    .collect();
                // Mostly in order; sometimes a gap or a repeat.
                let s = match op % 5 {
                    0 => seq[k] + 1,
                    1 => seq[k].saturating_sub(1),
                    _ => seq[k],
                };
                if s == seq[k] {
                    if let Some(sent) = &mut sent[k] {
                        sent.push_str(&piece);
                    }
                    seq[k] += 1;
                }
                let data = serde_json::to_string(&piece).unwrap();
                format!(
                    r#"{{"type":"tool_result_chunk","tool_id":{id_json},"seq":{s},"data":{data}}}"#
                )
            }
            3 => {
                let (chunks, total) = match &sent[k] {
                    Some(s) if op % 2 == 1 => (seq[k], s.len()),
                    _ => (u64::from(arg), usize::from(arg)),
                };
                format!(
                    r#"{{"type":"tool_result_end","tool_id":{id_json},"chunks":{chunks},"total_bytes":{total}}}"#
                )
            }
            4 => r#"{"type":"message","role":"assistant","content":"m"}"#.to_string(),
            5 => String::from_utf8_lossy(&[op, arg, b'}']).into_owned(),
            _ => {
                let _ = r.reset();
                assert_eq!(r.buffered_bytes(), 0);
                sent = [None, None, None];
                continue;
            }
        };
        match r.push_line(&line) {
            Ok(Pushed::Complete(done)) => {
                let output = done.output.as_deref().unwrap();
                assert!(output.len() <= limits.max_result_bytes);
                let k = IDS.iter().position(|i| *i == &*done.tool_id).unwrap();
                assert_eq!(Some(output), sent[k].as_deref(), "transfer {}", IDS[k]);
                sent[k] = None;
            }
            Ok(_) => {}
            Err(e) => {
                assert!(!e.to_string().is_empty());
            }
        }
        assert!(r.buffered_bytes() <= limits.max_buffered_bytes);
    }
    let _ = r.finish();
    assert_eq!(r.open_transfers(), 0);
    assert_eq!(r.buffered_bytes(), 0);
}

fn round_trip(frame: usize, text: &str) {
    let result = ToolResult {
        timestamp: Some(Text::from("t")),
        tool_id: Text::from("id"),
        status: Status::Success,
        output: Some(Text::from(text)),
        error: None,
    };
    let Ok(mut enc) = ChunkEncoder::new(&result, frame) else {
        assert!(frame < ChunkEncoder::min_frame_len(&result));
        return;
    };
    let mut r = Reassembler::new();
    let mut out = Vec::new();
    let mut rebuilt = None;
    while let Some(n) = enc.next_frame(&mut out) {
        assert_eq!(out.len(), n);
        assert!(n - 1 <= frame, "line of {} > {frame}", n - 1);
        let line = std::str::from_utf8(&out[..n - 1]).unwrap();
        match r.push_line(line).unwrap() {
            Pushed::Complete(done) => rebuilt = Some(done),
            Pushed::Event(Event::ToolResult(done)) => rebuilt = Some(done.into_owned()),
            _ => {}
        }
        out.clear();
    }
    assert_eq!(rebuilt, Some(result.into_owned()));
}

pub fn check(data: &[u8]) {
    let Some((&sel, ops)) = data.split_first() else {
        return;
    };
    let limits = Limits::new()
        .with_max_result_bytes(usize::from(sel % 8) * 16 + 8)
        .with_max_buffered_bytes(usize::from(sel / 8 % 8) * 24 + 16)
        .with_max_chunks_per_transfer(u64::from(sel % 5) + 2)
        .with_max_open_transfers(usize::from(sel % 3) + 1);
    program(&limits, ops);
    let text = String::from_utf8_lossy(ops);
    round_trip(usize::from(sel) * 4 + 60, &text);
}
