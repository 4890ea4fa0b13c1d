use super::*;
use crate::stream_json::JsonStr;

fn start(id: &str, total: u64) -> Event<'_> {
    Event::ToolResultStart(ToolResultStart {
        timestamp: None,
        tool_id: Text::from(id),
        status: Status::Success,
        total_bytes: total,
        error: None,
    })
}

fn chunk<'a>(id: &'a str, seq: u64, lit: &'a str) -> Event<'a> {
    Event::ToolResultChunk(ToolResultChunk {
        tool_id: Text::from(id),
        seq,
        data: JsonStr::from_literal(lit).unwrap(),
    })
}

#[test]
fn budget_is_the_sum_of_capacities() {
    let limits = Limits::new()
        .with_max_buffered_bytes(100)
        .with_max_result_bytes(80);
    let mut r = Reassembler::with_limits(&limits);
    assert!(matches!(r.push(start("a", 60)), Ok(Pushed::Consumed)));
    assert_eq!(
        r.buffered_bytes(),
        r.open.iter().map(|t| t.output.capacity()).sum::<usize>()
    );
    assert!(r.buffered_bytes() >= 60);
    // The second transfer gets only what is left.
    assert!(matches!(r.push(start("b", 80)), Ok(Pushed::Consumed)));
    assert!(r.buffered_bytes() <= 100);
    let big = alloc::format!("\"{}\"", "x".repeat(70));
    let e = r.push(chunk("b", 0, &big)).unwrap_err();
    assert!(
        matches!(e.kind(), ChunkErrorKind::BudgetExceeded { needed: 70, .. })
            && e.tool_id() == Some("b"),
        "{e}"
    );
    assert_eq!(r.open_transfers(), 1);
    assert_eq!(
        r.buffered_bytes(),
        r.open.iter().map(|t| t.output.capacity()).sum::<usize>()
    );
    // Its later frames are dropped quietly; its end forgets it.
    assert!(matches!(
        r.push(chunk("b", 1, "\"y\"")),
        Ok(Pushed::Dropped)
    ));
    assert!(r.aborted.iter().any(|id| id == "b"));
}

#[test]
fn grow_without_hint_stays_within_limits() {
    let limits = Limits::new()
        .with_max_buffered_bytes(64)
        .with_max_result_bytes(64);
    let mut r = Reassembler::with_limits(&limits);
    let _ = r.push(start("a", 0)).unwrap();
    for seq in 0..8 {
        let _ = r.push(chunk("a", seq, "\"abcdefgh\"")).unwrap();
        assert!(r.buffered_bytes() <= 64);
    }
    let e = r.push(chunk("a", 8, "\"z\"")).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ChunkErrorKind::ResultTooLarge {
                size: 65,
                limit: 64,
            }
        ),
        "{e}"
    );
    assert_eq!(r.buffered_bytes(), 0);
}
