//! The chunked protocol's acceptance, library level: a 20 MB `tool_result`
//! (a recursive listing with non-ASCII names and control characters) becomes lines of at
//! most 32 KiB, rebuilds exactly, and re-encodes to the original line
//! byte-for-byte. The end-to-end version with `rechunk` and a Python asyncio
//! reader is `scripts/seed000_acceptance.sh`.
#![cfg(feature = "std")]

use acp_codec::chunk::{ChunkEncoder, Pushed, Reassembler};
use acp_codec::limits::DEFAULT_FRAME_LEN;
use acp_codec::stream_json::Event;
use acp_codec::LineSplitter;

fn listing() -> String {
    let names = [
        "bin",
        "données",
        "日本語",
        "emoji😀",
        "tab\there",
        "bell\u{7}",
        "q\"uote",
        "back\\slash",
        "ls\u{2028}sep",
        "x\u{1f}",
    ];
    let mut out = String::new();
    let mut d = 0;
    while out.len() < 20_000_000 {
        out.push_str(&format!("/srv/tree/{d}/{}:\n", names[d % names.len()]));
        for i in 0..60 {
            out.push_str(&format!("{}-{i:04}.txt\n", names[(d + i) % names.len()]));
        }
        out.push('\n');
        d += 1;
    }
    out
}

#[test]
fn twenty_megabyte_listing_crosses_in_small_lines() {
    let output = listing();
    let legacy = format!(
        "{}\n",
        serde_json::json!({"type": "tool_result", "timestamp": "2025-10-01T12:00:00.000Z",
            "tool_id": "run_shell_command-1700000000000-0", "status": "success", "output": output})
    );
    // serde_json's map is sorted without preserve_order: rebuild in wire order.
    let Event::ToolResult(r) = Event::decode(legacy.trim_end()).unwrap() else {
        panic!()
    };
    let mut original = Vec::new();
    Event::ToolResult(r.clone()).encode(&mut original).unwrap();

    let mut stream = Vec::new();
    stream.extend_from_slice(
        b"{\"type\":\"init\",\"timestamp\":\"t\",\"session_id\":\"s\",\"model\":\"m\"}\n",
    );
    let mut enc = ChunkEncoder::new(&r, DEFAULT_FRAME_LEN).unwrap();
    assert!(enc.is_chunked());
    while enc.next_frame(&mut stream).is_some() {}
    stream.extend_from_slice(b"{\"type\":\"result\",\"timestamp\":\"t\",\"status\":\"success\"}\n");

    // Split as a reader would, with a line limit of 32 KiB.
    let mut splitter = LineSplitter::with_max_line_len(DEFAULT_FRAME_LEN);
    let mut re = Reassembler::new();
    let mut rest = &stream[..];
    let (mut lines, mut rebuilt, mut passed) = (0, None, 0);
    loop {
        let d = splitter.decode(rest);
        rest = &rest[d.consumed..];
        let Some(item) = d.item else { break };
        let line = item.expect("every line within 32 KiB");
        lines += 1;
        match re.push_line(line.as_str()).unwrap() {
            Pushed::Complete(done) => rebuilt = Some(done),
            Pushed::Event(_) => passed += 1,
            _ => {}
        }
    }
    assert!(rest.is_empty());
    assert!(lines > 600, "{lines}");
    assert_eq!(passed, 2);
    let rebuilt = rebuilt.unwrap();
    assert_eq!(rebuilt.output.as_deref(), Some(output.as_str()));
    let mut joined = Vec::new();
    Event::ToolResult(rebuilt).encode(&mut joined).unwrap();
    assert!(
        joined == original,
        "re-encoded line differs from the original"
    );
    assert!(re.finish().is_empty());
}
