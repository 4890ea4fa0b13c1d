//! Zero heap allocations per line in steady state, counted by a global
//! allocator (per thread, so parallel tests do not disturb the count).

use acp_codec::LineSplitter;

/// Allocations made while `f` runs (allocation-counter counts per thread).
fn allocs_during(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

/// About 1 MiB of ACP-like traffic, lines of varied lengths.
fn traffic() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u32;
    while out.len() < 1 << 20 {
        let text = "x".repeat(50 + (i as usize * 37) % 500);
        out.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"s\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"{text}\"}}}}}}}}\r\n"
            )
            .as_bytes(),
        );
        if i % 17 == 0 {
            out.extend_from_slice(b"\n  \n");
        }
        i += 1;
    }
    out
}

#[test]
fn borrowed_splitter_never_allocates() {
    let input = traffic();
    let mut splitter = LineSplitter::new();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut lines = 0usize;
    let during = allocs_during(|| {
        for read in input.chunks(65_536) {
            buf.extend_from_slice(read);
            let mut start = 0;
            loop {
                let d = splitter.decode(&buf[start..]);
                start += d.consumed;
                match d.item {
                    Some(Ok(line)) => lines += line.len().min(1),
                    Some(Err(e)) => panic!("{e}"),
                    None => break,
                }
            }
            buf.drain(..start);
        }
    });
    assert_eq!(during, 0);
    assert!(lines > 1000);
}

/// Feeds the traffic through a `BytesMut` in 64 KiB reads twice (the
/// first run warms up: the buffer becomes shared on its first split) and
/// asserts the second allocates nothing; `take` drains the buffer's lines.
#[cfg(feature = "bytes")]
fn assert_bytes_steady_state(
    mut take: impl FnMut(&mut LineSplitter, &mut bytes::BytesMut, &mut dyn FnMut(bytes::Bytes)),
) {
    let input = traffic();
    let mut splitter = LineSplitter::new();
    let mut buf = bytes::BytesMut::with_capacity(1 << 20);
    let mut run = |buf: &mut bytes::BytesMut| {
        let mut lines = 0usize;
        for read in input.chunks(65_536) {
            buf.reserve(read.len());
            buf.extend_from_slice(read);
            take(&mut splitter, buf, &mut |line| {
                assert_eq!(line.first(), Some(&b'{'));
                lines += 1;
            });
        }
        lines
    };
    run(&mut buf);
    let mut lines = 0;
    let during = allocs_during(|| lines = run(&mut buf));
    assert!(lines > 1000);
    assert_eq!(during, 0, "{during} allocations for {lines} lines");
}

#[cfg(feature = "bytes")]
#[test]
fn bytes_splitter_steady_state_has_no_allocation_per_line() {
    assert_bytes_steady_state(|splitter, buf, each| {
        while let Some(line) = splitter.decode_bytes(buf) {
            each(line.unwrap());
        }
    });
}

#[cfg(feature = "bytes")]
#[test]
fn bytes_batch_steady_state_has_no_allocation_per_line() {
    assert_bytes_steady_state(|splitter, buf, each| {
        for line in splitter.lines_bytes(buf) {
            each(line.unwrap());
        }
    });
}
