//! Memory of reassembly, measured with a counting allocator (this test
//! binary only): one 50 MiB transfer allocates at most 3 times and peaks at
//! most 1.1x its payload; a 10 GB declaration allocates nothing beyond the
//! budget.
#![cfg(feature = "std")]

use acp_codec::chunk::{ChunkEncoder, LineError, Pushed, Reassembler};
use acp_codec::stream_json::{Status, Text, ToolResult};
use acp_codec::{ChunkErrorKind, Limits};

const SIZE: usize = 50 * 1024 * 1024;

fn frames(output: &str) -> Vec<String> {
    let r = ToolResult {
        timestamp: Some(Text::from("2025-10-01T12:00:00.000Z")),
        tool_id: Text::from("run_shell_command-1700000000000-0"),
        status: Status::Success,
        output: Some(Text::from(output)),
        error: None,
    };
    let mut enc = ChunkEncoder::new(&r, 32 * 1024).unwrap();
    let mut out = Vec::new();
    let mut lines = Vec::new();
    while enc.next_frame(&mut out).is_some() {
        out.pop();
        lines.push(String::from_utf8(std::mem::take(&mut out)).unwrap());
    }
    lines
}

fn reassemble_measured(output: &str) -> allocation_counter::AllocationInfo {
    let lines = frames(output);
    let mut r = Reassembler::new();
    let mut rebuilt = None;
    let info = allocation_counter::measure(|| {
        for line in &lines {
            if let Pushed::Complete(res) = r.push_line(line).unwrap() {
                rebuilt = Some(res);
            }
        }
    });
    assert_eq!(rebuilt.unwrap().output.as_deref(), Some(output));
    info
}

// One test function: the counts are per thread, but keep the big buffers
// from overlapping in time.
#[test]
fn reassembly_memory() {
    // Plain text: data borrowed from each line, appended in place.
    let plain: String = "drwxr-xr-x 2 root root 4096 Jan  1 00:00 directory-name\n"
        .repeat(SIZE / 56 + 1)[..SIZE]
        .to_owned();
    let info = reassemble_measured(&plain);
    eprintln!("plain: {info:?}");
    assert!(info.count_total <= 3, "{} allocations", info.count_total);
    assert!(
        info.bytes_max as f64 <= 1.1 * SIZE as f64,
        "peak {} bytes",
        info.bytes_max
    );
    drop(plain);

    // Escaped data (control characters, quotes, emoji): unescaped straight
    // into the buffer, still no allocation per chunk.
    let unit = "a\u{1}\"\\😀\t";
    let escaped: String = unit.repeat(SIZE / unit.len());
    let info = reassemble_measured(&escaped);
    eprintln!("escaped: {info:?}");
    assert!(info.count_total <= 3, "{} allocations", info.count_total);
    assert!(
        info.bytes_max as f64 <= 1.1 * escaped.len() as f64,
        "peak {} bytes",
        info.bytes_max
    );
    drop(escaped);

    // A 10 GB declaration: refused outright by the 50 MiB result cap…
    let start = r#"{"type":"tool_result_start","tool_id":"big","status":"success","total_bytes":10000000000}"#;
    let mut r = Reassembler::new();
    let info = allocation_counter::measure(|| {
        let e = r.push_line(start).unwrap_err();
        assert!(matches!(
            e,
            LineError::Chunk(ref e) if matches!(e.kind(), ChunkErrorKind::ResultTooLarge { .. })
        ));
    });
    // (the error's id and the remembered id only)
    assert!(info.bytes_max < 1024, "{info:?}");
    // …and with the result cap lifted, bounded by the shared budget.
    let budget = 8 << 20;
    let limits = Limits::new()
        .with_max_result_bytes(usize::MAX)
        .with_max_buffered_bytes(budget);
    let mut r = Reassembler::with_limits(&limits);
    let info = allocation_counter::measure(|| {
        assert!(matches!(r.push_line(start), Ok(Pushed::Consumed)));
        let chunk = format!(
            r#"{{"type":"tool_result_chunk","tool_id":"big","seq":0,"data":"{}"}}"#,
            "x".repeat(32_000)
        );
        for seq in 0..1000 {
            let line = chunk.replacen("\"seq\":0", &format!("\"seq\":{seq}"), 1);
            if let Err(e) = r.push_line(&line) {
                assert!(
                    matches!(e, LineError::Chunk(ref e) if matches!(e.kind(), ChunkErrorKind::BudgetExceeded { .. })),
                    "{e}"
                );
                break;
            }
        }
    });
    eprintln!("10 GB declared: {info:?}");
    // The test's own lines are a few 32 KB strings at a time.
    assert!(info.bytes_max <= budget as u64 + (1 << 20), "{info:?}");
    assert!(r.buffered_bytes() <= budget);
}
