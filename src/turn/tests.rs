use super::*;
use crate::tally::Tally;

#[test]
fn char_boundaries() {
    assert_eq!(floor_char_boundary("aé", 0), 0);
    assert_eq!(floor_char_boundary("aé", 1), 1);
    assert_eq!(floor_char_boundary("aé", 2), 1);
    assert_eq!(floor_char_boundary("aé", 3), 3);
    assert_eq!(floor_char_boundary("aé", 99), 3);
    assert_eq!(floor_char_boundary("🦀", 3), 0);
}

#[test]
fn budget_replaces_or_clears() {
    let mut total = Tally::holding(10);
    let mut item = Tally::holding(4);
    let mut b = Budget {
        total: &mut total,
        limit: 12,
        dropped: 0,
    };
    assert!(b.admit(&mut item, 4, 6));
    assert!(!b.admit(&mut item, 6, 9));
    assert_eq!(b.dropped, 9);
    // The refused value cleared the old one.
    assert_eq!((total.get(), item.get()), (6, 0));
    let mut total = Tally::holding(usize::MAX - 1);
    let mut item = Tally::default();
    let mut b = Budget {
        total: &mut total,
        limit: usize::MAX,
        dropped: 0,
    };
    assert!(!b.admit(&mut item, 0, 5));
}

/// A push that emits more codes than are kept inline loses none: each
/// comes back, in order.
#[test]
fn codes_keep_every_event_past_the_inline_ones() {
    let mut codes = Codes::default();
    codes.push(Code::Plan);
    for _ in 0..event::INLINE + 3 {
        codes.push(Code::Mode);
    }
    codes.problem(TurnError::AfterTurnEnd);
    let view = TurnView::default();
    let update = SessionUpdate::CurrentModeUpdate(crate::acp::CurrentModeUpdate::new("m"));
    let events: Vec<_> = Events::new(&view, Source::Update(&update), codes).collect();
    // The plan code does not resolve against a mode update.
    assert_eq!(events.len(), event::INLINE + 4);
    assert!(events[..event::INLINE + 3]
        .iter()
        .all(|e| *e == TurnEvent::ModeChanged("m")));
    assert!(matches!(
        events.last(),
        Some(TurnEvent::Problem(p)) if p.error == TurnError::AfterTurnEnd
    ));
}

/// Byte accounting equals a recount from scratch after any sequence.
fn recount(view: &TurnView) -> usize {
    let tools: usize = view.tool_calls.iter().map(|t| t.bytes.get()).sum();
    let perms: usize = view.permissions.iter().map(|p| p.bytes.get()).sum();
    tools + perms
}

#[test]
fn tool_bytes_match_the_fields() {
    let mut view = TurnView::default();
    let text = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"ab","title":"xyz","kind":"read","status":"in_progress","locations":[{"path":"/p"}],"content":[{"type":"diff","path":"/p","oldText":"o","newText":"nn"}],"rawInput":{}}}"#;
    let n: SessionNotification<'_> = serde_json::from_str(text).unwrap();
    let _ = view.push_update(&n);
    let t = &view.tool_calls[0];
    // id 2 + title 3 + location (2 + 16) + raw input 2
    // + diff (2 + 1 + 2 + 16); known statuses and kinds hold no text.
    assert_eq!(t.bytes.get(), 2 + 3 + 18 + 2 + 21);
    assert_eq!(view.tool_bytes.get(), recount(&view));
    let text = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"ab","status":"completed","content":[],"locations":[]}}"#;
    let n: SessionNotification<'_> = serde_json::from_str(text).unwrap();
    let _ = view.push_update(&n);
    assert_eq!(view.tool_calls[0].bytes.get(), 2 + 3 + 2);
    let text = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"ab","status":"paused","kind":"warp"}}"#;
    let n: SessionNotification<'_> = serde_json::from_str(text).unwrap();
    let _ = view.push_update(&n);
    assert_eq!(view.tool_calls[0].bytes.get(), 2 + 3 + 2 + 6 + 4);
    assert_eq!(view.tool_bytes.get(), recount(&view));
    assert_eq!(view.tool_bytes.get(), recount(&view));
}
