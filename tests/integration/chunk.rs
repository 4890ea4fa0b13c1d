//! Chunked tool results through the public API: encoder invariants, round
//! trips, interleavings, and every fault the reassembler reports (each a
//! typed `ChunkErrorKind`, the transfer dropped, the next one unharmed).
#![cfg(feature = "alloc")]

use acp_codec::chunk::{ChunkEncoder, FrameKind, LineError, Pushed, Reassembler};
use acp_codec::stream_json::{Event, Status, Text, ToolError, ToolResult};
use acp_codec::{ChunkError, ChunkErrorKind, Limits};
use proptest::prelude::*;

fn result<'a>(id: &'a str, output: &'a str) -> ToolResult<'a> {
    ToolResult {
        timestamp: Some(Text::from("2025-10-01T12:00:00.000Z")),
        tool_id: Text::from(id),
        status: Status::Success,
        output: Some(Text::from(output)),
        error: None,
    }
}

/// Every line (without `\n`) the encoder emits for `r`.
fn encode(r: &ToolResult<'_>, frame_len: usize) -> Vec<String> {
    let mut enc = ChunkEncoder::new(r, frame_len).unwrap();
    let mut out = Vec::new();
    let mut lines = Vec::new();
    while let Some(n) = enc.next_frame(&mut out) {
        assert_eq!(n, out.len());
        assert_eq!(out.pop(), Some(b'\n'));
        assert!(!out.contains(&b'\n'));
        assert!(
            out.len() <= frame_len,
            "line of {} > {frame_len}",
            out.len()
        );
        lines.push(String::from_utf8(std::mem::take(&mut out)).unwrap());
    }
    lines
}

/// Pushes every line; returns the completed results and the errors.
fn push_all(
    r: &mut Reassembler,
    lines: &[String],
) -> (Vec<ToolResult<'static>>, Vec<ChunkError>, usize) {
    let mut done = Vec::new();
    let mut errors = Vec::new();
    let mut passed = 0;
    for line in lines {
        match r.push_line(line) {
            Ok(Pushed::Complete(res)) => done.push(res),
            Ok(Pushed::Event(_)) => passed += 1,
            Ok(Pushed::Consumed | Pushed::Dropped) => {}
            Err(LineError::Chunk(e)) => errors.push(e),
            Err(e) => panic!("{e}"),
        }
        assert!(r.buffered_bytes() <= r.limits().max_buffered_bytes);
    }
    (done, errors, passed)
}

fn round_trip(output: &str, frame_len: usize) {
    let r = result("run_shell_command-1700000000000-0", output);
    let lines = encode(&r, frame_len);
    let mut re = Reassembler::new();
    let (done, errors, passed) = push_all(&mut re, &lines);
    assert!(errors.is_empty(), "{errors:?}");
    if lines.len() == 1 {
        assert_eq!(passed, 1);
        let Event::ToolResult(got) = Event::decode(&lines[0]).unwrap() else {
            panic!()
        };
        assert_eq!(got, r);
    } else {
        assert_eq!(done, vec![r.clone().into_owned()]);
        // Chunks concatenate to exactly the output.
        let mut joined = String::new();
        for l in &lines {
            if let Event::ToolResultChunk(c) = Event::decode(l).unwrap() {
                let piece = c.data.to_text().unwrap();
                assert!(!piece.is_empty());
                joined.push_str(&piece);
            }
        }
        assert_eq!(joined, output);
    }
    assert!(re.finish().is_empty());
}

#[test]
fn worst_case_escaping_stays_within_the_frame() {
    let long_id = "t".repeat(5000);
    let cases = [
        "\u{1}".repeat(100_000),
        "😀".repeat(30_000),
        "\"\\".repeat(40_000),
        "\u{2028}\u{2029}".repeat(20_000),
        "a\u{1f}é😀\"\\\n".repeat(10_000),
    ];
    for output in &cases {
        for frame in [32 * 1024, 1000, 300] {
            round_trip(output, frame);
        }
        let r = result(&long_id, output);
        let lines = encode(&r, 32 * 1024);
        let mut re = Reassembler::new();
        let (done, errors, _) = push_all(&mut re, &lines);
        assert!(errors.is_empty());
        assert_eq!(done[0].output.as_deref(), Some(output.as_str()));
    }
}

#[test]
fn small_results_stay_legacy() {
    let r = result("id", "short");
    let lines = encode(&r, 32 * 1024);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with(r#"{"type":"tool_result","#));
    // Exactly at the limit: still legacy; one byte less: frames.
    let len = lines[0].len();
    assert_eq!(encode(&r, len).len(), 1);
    assert!(ChunkEncoder::new(&r, len - 1).is_err() || encode(&r, len - 1).len() > 1);
}

#[test]
fn frame_limit_below_minimum_is_a_typed_error() {
    let out = "x".repeat(1000);
    let r = result("id", &out);
    let min = ChunkEncoder::min_frame_len(&r);
    assert!(ChunkEncoder::new(&r, min).is_ok());
    let e = ChunkEncoder::new(&r, min - 1).unwrap_err();
    assert_eq!(
        e.kind(),
        ChunkErrorKind::FrameTooSmall {
            limit: min - 1,
            needed: min
        }
    );
    assert_eq!(e.tool_id(), None);
    assert!(min < 200, "{min}");
    // A huge error message on start cannot be chunked.
    let mut r = result("id", &out);
    r.error = Some(ToolError {
        kind: Text::from("E"),
        message: Text::from(out.as_str()),
    });
    assert!(matches!(
        ChunkEncoder::new(&r, 500),
        Err(ref e) if matches!(e.kind(), ChunkErrorKind::FrameTooSmall { .. })
    ));
    // Without output, an oversized line cannot be split.
    r.output = None;
    assert!(matches!(
        ChunkEncoder::new(&r, 500),
        Err(ref e) if matches!(e.kind(), ChunkErrorKind::FrameTooSmall { .. })
    ));
}

#[test]
fn error_rides_on_start() {
    let out = "y".repeat(5000);
    let mut r = result("id", &out);
    r.status = Status::Error;
    r.error = Some(ToolError {
        kind: Text::from("FatalToolExecutionError"),
        message: Text::from("exit 2"),
    });
    let lines = encode(&r, 1024);
    assert!(lines[0].contains(r#""status":"error","total_bytes":5000,"error":{"type":"FatalToolExecutionError","message":"exit 2"}"#));
    let (done, errors, _) = push_all(&mut Reassembler::new(), &lines);
    assert!(errors.is_empty());
    assert_eq!(done, vec![r.into_owned()]);
}

fn frames(id: &str, output: &str, frame: usize) -> Vec<String> {
    let lines = encode(&result(id, output), frame);
    assert!(lines.len() >= 4, "{}", lines.len());
    lines
}

/// After a fault, a fresh transfer with the same id still succeeds.
fn next_still_works(re: &mut Reassembler) {
    let lines = frames("id", &"n".repeat(3000), 1000);
    let (done, errors, _) = push_all(re, &lines);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(done.len(), 1);
    assert!(re.finish().is_empty());
}

#[test]
fn every_fault_is_typed_and_recoverable() {
    let good = frames("id", &"abcdefghij".repeat(500), 1000);
    let n = good.len();
    let check = |lines: Vec<String>, matcher: &dyn Fn(&ChunkErrorKind) -> bool| {
        let mut re = Reassembler::new();
        let (done, errors, _) = push_all(&mut re, &lines);
        let mut errors = errors;
        errors.extend(re.finish());
        assert!(done.is_empty());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(matcher(&errors[0].kind()), "{}", errors[0]);
        assert_eq!(errors[0].tool_id(), Some("id"));
        assert!(!errors[0].to_string().ends_with('.'));
        next_still_works(&mut re);
    };
    // Unknown transfer: chunk or end without start.
    check(good[1..].to_vec(), &|e| {
        matches!(
            e,
            ChunkErrorKind::UnknownTransfer {
                frame: FrameKind::Chunk,
                ..
            }
        )
    });
    check(vec![good[n - 1].clone()], &|e| {
        matches!(
            e,
            ChunkErrorKind::UnknownTransfer {
                frame: FrameKind::End,
                ..
            }
        )
    });
    // Gap and repeat.
    let mut l = good.clone();
    l.remove(2);
    check(l, &|e| {
        matches!(
            e,
            ChunkErrorKind::SeqGap {
                expected: 1,
                got: 2,
                ..
            }
        )
    });
    let mut l = good.clone();
    l.insert(2, good[1].clone());
    check(l, &|e| {
        matches!(
            e,
            ChunkErrorKind::SeqRepeat {
                expected: 1,
                got: 0,
                ..
            }
        )
    });
    // Count and size mismatch at end.
    let mut l = good.clone();
    l[n - 1] = l[n - 1].replace(&format!("\"chunks\":{}", n - 2), "\"chunks\":99");
    check(l, &|e| {
        matches!(e, ChunkErrorKind::CountMismatch { declared: 99, .. })
    });
    let mut l = good.clone();
    l[n - 1] = l[n - 1].replace("\"total_bytes\":5000", "\"total_bytes\":5001");
    check(l, &|e| {
        matches!(
            e,
            ChunkErrorKind::SizeMismatch {
                declared: 5001,
                received: 5000,
                ..
            }
        )
    });
    let mut l = good.clone();
    l[0] = l[0].replace("\"total_bytes\":5000", "\"total_bytes\":4000");
    check(l, &|e| {
        matches!(
            e,
            ChunkErrorKind::SizeMismatch {
                declared: 4000,
                received: 5000,
                ..
            }
        )
    });
    // Truncated: the stream stops.
    check(good[..3].to_vec(), &|e| {
        matches!(e, ChunkErrorKind::Truncated { chunks: 2, .. })
    });
    // A chunk with a broken escape.
    let mut l = good.clone();
    l[1] = r#"{"type":"tool_result_chunk","tool_id":"id","seq":0,"data":"\ud800"}"#.to_string();
    check(l, &|e| {
        matches!(e, ChunkErrorKind::InvalidData { seq: 0, .. })
    });
}

#[test]
fn duplicate_start_aborts_the_old_transfer() {
    let good = frames("id", &"q".repeat(5000), 1000);
    let mut lines = good[..3].to_vec();
    lines.extend(good.iter().cloned());
    let mut re = Reassembler::new();
    let (done, errors, _) = push_all(&mut re, &lines);
    assert_eq!(errors.len(), 1);
    assert!(
        matches!(errors[0].kind(), ChunkErrorKind::DuplicateStart { received } if received > 0),
        "{}",
        errors[0]
    );
    assert_eq!(done.len(), 1);
    assert!(re.finish().is_empty());
}

fn kinds(errors: &[ChunkError]) -> Vec<ChunkErrorKind> {
    errors.iter().map(ChunkError::kind).collect()
}

#[test]
fn caps_are_enforced() {
    let out = "z".repeat(5000);
    let good = frames("id", &out, 1000);
    // Result cap, by declaration and by data.
    let limits = Limits::new().with_max_result_bytes(4999);
    let mut re = Reassembler::with_limits(&limits);
    let (_, errors, _) = push_all(&mut re, &good);
    assert!(
        matches!(
            kinds(&errors)[..],
            [ChunkErrorKind::ResultTooLarge {
                size: 5000,
                limit: 4999,
            }]
        ),
        "{errors:?}"
    );
    let mut l = good.clone();
    l[0] = l[0].replace("\"total_bytes\":5000", "\"total_bytes\":10");
    let (_, errors, _) = push_all(&mut re, &l);
    assert!(
        matches!(
            kinds(&errors)[..],
            [ChunkErrorKind::ResultTooLarge { limit: 4999, .. }]
        ),
        "{errors:?}"
    );
    next_still_works(&mut Reassembler::with_limits(
        &Limits::new().with_max_result_bytes(3000),
    ));
    // Chunk cap.
    let mut re = Reassembler::with_limits(&Limits::new().with_max_chunks_per_transfer(2));
    let (_, errors, _) = push_all(&mut re, &good);
    assert!(
        matches!(
            kinds(&errors)[..],
            [ChunkErrorKind::TooManyChunks { limit: 2 }]
        ),
        "{errors:?}"
    );
    // Open-transfer cap.
    let mut re = Reassembler::with_limits(&Limits::new().with_max_open_transfers(1));
    let other = frames("other", &out, 1000);
    let lines = vec![good[0].clone(), other[0].clone(), other[1].clone()];
    let (_, errors, _) = push_all(&mut re, &lines);
    assert!(
        matches!(
            kinds(&errors)[..],
            [ChunkErrorKind::TooManyTransfers { limit: 1 }]
        ) && errors[0].tool_id() == Some("other"),
        "{errors:?}"
    );
    assert_eq!(re.reset().len(), 1);
    // Shared budget.
    let limits = Limits::new().with_max_buffered_bytes(8000);
    let mut re = Reassembler::with_limits(&limits);
    let mut lines = vec![good[0].clone(), other[0].clone(), good[1].clone()];
    lines.extend(other[1..].iter().cloned());
    let (_, errors, _) = push_all(&mut re, &lines);
    assert!(
        matches!(kinds(&errors)[..], [ChunkErrorKind::BudgetExceeded { .. }])
            && errors[0].tool_id() == Some("other"),
        "{errors:?}"
    );
}

#[test]
fn ten_gigabyte_declaration_allocates_nothing() {
    let line = r#"{"type":"tool_result_start","tool_id":"big","status":"success","total_bytes":10000000000}"#;
    let mut re = Reassembler::new();
    assert!(matches!(
        re.push_line(line),
        Err(LineError::Chunk(ref e)) if matches!(e.kind(), ChunkErrorKind::ResultTooLarge {
            size: 10_000_000_000,
            ..
        })
    ));
    assert_eq!(re.buffered_bytes(), 0);
    // With the result cap lifted, the shared budget still bounds it.
    let limits = Limits::new()
        .with_max_result_bytes(usize::MAX)
        .with_max_buffered_bytes(1 << 20);
    let mut re = Reassembler::with_limits(&limits);
    assert!(matches!(re.push_line(line), Ok(Pushed::Consumed)));
    assert!(re.buffered_bytes() <= 1 << 20);
}

#[test]
fn other_events_pass_through_between_frames() {
    let mut lines = frames("a", &"1".repeat(3000), 800);
    let b = frames("b", &"2".repeat(3000), 800);
    let msg = r#"{"type":"message","timestamp":"t","role":"assistant","content":"x"}"#.to_string();
    // Interleave a and b one by one, with a message between each.
    let mut mixed = Vec::new();
    for i in 0..lines.len().max(b.len()) {
        if let Some(l) = lines.get(i) {
            mixed.push(l.clone());
        }
        mixed.push(msg.clone());
        if let Some(l) = b.get(i) {
            mixed.push(l.clone());
        }
    }
    lines = mixed;
    let (done, errors, passed) = push_all(&mut Reassembler::new(), &lines);
    assert!(errors.is_empty());
    assert_eq!(done.len(), 2);
    assert_eq!(passed, lines.iter().filter(|l| **l == msg).count());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn encode_then_reassemble_is_identity(output in "(?s).{0,3000}", frame in 160usize..4000) {
        let r = result("p-1", &output);
        let min = ChunkEncoder::min_frame_len(&r);
        prop_assume!(frame >= min);
        round_trip(&output, frame);
    }

    #[test]
    fn random_interleavings(a in "(?s).{0,2000}", b in "[\\x00-\\x20\"\\\\é😀]{0,800}", seed: u64) {
        let la = encode(&result("a", &a), 300);
        let lb = encode(&result("b", &b), 300);
        let other = r#"{"type":"error","severity":"warning","message":"m"}"#.to_string();
        let (mut i, mut j, mut s) = (0, 0, seed);
        let mut mixed = Vec::new();
        while i < la.len() || j < lb.len() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            match (s >> 33) % 3 {
                0 if i < la.len() => { mixed.push(la[i].clone()); i += 1; }
                1 if j < lb.len() => { mixed.push(lb[j].clone()); j += 1; }
                _ => mixed.push(other.clone()),
            }
        }
        let mut re = Reassembler::new();
        let mut results = Vec::new();
        let mut passed = 0;
        for line in &mixed {
            match re.push_line(line).unwrap() {
                Pushed::Complete(r) => results.push(r),
                Pushed::Event(Event::ToolResult(r)) => results.push(r.into_owned()),
                Pushed::Event(_) => passed += 1,
                _ => {}
            }
        }
        results.sort_by(|x, y| x.tool_id.cmp(&y.tool_id));
        prop_assert_eq!(results.len(), 2);
        prop_assert_eq!(results[0].output.as_deref(), Some(a.as_str()));
        prop_assert_eq!(results[1].output.as_deref(), Some(b.as_str()));
        prop_assert_eq!(passed, mixed.iter().filter(|l| **l == other).count());
        prop_assert!(re.finish().is_empty());
    }

    #[test]
    fn dropping_any_frame_is_one_fault_then_recovery(output in "[a-z😀\\n]{400,1500}", drop_at: prop::sample::Index) {
        let lines = encode(&result("id", &output), 200);
        prop_assume!(lines.len() > 1);
        let k = drop_at.index(lines.len());
        let mut l = lines.clone();
        l.remove(k);
        let mut re = Reassembler::new();
        let (done, mut errors, _) = push_all(&mut re, &l);
        errors.extend(re.finish());
        prop_assert!(done.is_empty());
        prop_assert!(!errors.is_empty());
        let (done, errors, _) = push_all(&mut re, &lines);
        prop_assert!(errors.is_empty());
        prop_assert_eq!(done.len(), 1);
    }
}

/// The outcome of pushing `lines`, through `push_line` (which takes the
/// fast path for canonical chunk lines) or through `Event::decode` + `push`.
fn outcome(lines: &[String], fast: bool) -> Vec<String> {
    let mut re = Reassembler::new();
    let mut seen = Vec::new();
    for line in lines {
        let pushed = if fast {
            re.push_line(line)
        } else {
            Event::decode(line)
                .map_err(LineError::from)
                .and_then(|e| re.push(e).map_err(LineError::from))
        };
        seen.push(match pushed {
            Ok(Pushed::Complete(r)) => format!("complete {:?}", r.output),
            Ok(Pushed::Event(e)) => format!("event {}", e.kind()),
            Ok(Pushed::Consumed) => "consumed".into(),
            Ok(Pushed::Dropped) => "dropped".into(),
            Err(LineError::Chunk(e)) => format!("chunk error {e}"),
            Err(LineError::Event(_)) => "event error".into(),
            Err(e) => format!("other error {e}"),
        });
    }
    seen.extend(re.finish().iter().map(ToString::to_string));
    seen
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_agrees_with_the_general_path(
        output in "[a-z\"\\\\\\x00-\\x1f😀é]{0,600}",
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), prop::sample::select(vec!["\"", "\\", "\\u", "\\ud800", "\u{1}", "0", "}", " ", "x"])), 0..3),
    ) {
        let mut lines = encode(&result("id", &output), 200);
        for (which, at, text) in edits {
            let k = which.index(lines.len());
            let line = &mut lines[k];
            let mut pos = at.index(line.len() + 1);
            while !line.is_char_boundary(pos) { pos -= 1; }
            line.insert_str(pos, text);
        }
        prop_assert_eq!(outcome(&lines, true), outcome(&lines, false));
    }
}
