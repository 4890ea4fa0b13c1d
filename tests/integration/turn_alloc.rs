//! The turn view is allocation-light: events borrow from the view and the
//! notification (iterating them allocates nothing), a text chunk costs at
//! most the growth of its message's `String`, and a status-only
//! `tool_call_update` or a permission outcome allocates nothing beyond the
//! outcome copy. Counted per thread by the `allocation-counter`
//! dev-dependency.
#![cfg(feature = "alloc")]

use acp_codec::acp::{PromptResponse, SessionNotification};
use acp_codec::turn::{TurnLimits, TurnView};

fn allocations_in(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

fn note(update: &str) -> String {
    format!(r#"{{"sessionId":"s","update":{update}}}"#)
}

#[test]
fn text_chunks_allocate_at_most_the_string_growth() {
    let mut view = TurnView::new(TurnLimits::default());
    let chunk = note(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"0123456789abcdef"}}"#,
    );
    let n: SessionNotification<'_> = serde_json::from_str(&chunk).unwrap();
    // The first chunk creates the message.
    let _ = view.push_update(&n).count();
    let mut total = 0;
    for _ in 0..1000 {
        let count = allocations_in(|| {
            let events = view.push_update(&n).count();
            assert_eq!(events, 1);
        });
        assert!(count <= 1, "{count} allocations for one text chunk");
        total += count;
    }
    // Amortized doubling: about log2(16000 / 16) reallocations.
    assert!(total <= 12, "{total} allocations for 1000 chunks");
    assert_eq!(view.messages()[0].text().len(), 16 * 1001);
}

#[test]
fn status_updates_and_events_allocate_nothing() {
    let mut view = TurnView::new(TurnLimits::default());
    let call = note(
        r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"ls [in src] (List)","kind":"execute","status":"pending"}"#,
    );
    let n: SessionNotification<'_> = serde_json::from_str(&call).unwrap();
    let _ = view.push_update(&n).count();
    let update =
        note(r#"{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"in_progress"}"#);
    let u: SessionNotification<'_> = serde_json::from_str(&update).unwrap();
    let count = allocations_in(|| {
        for event in view.push_update(&u) {
            let acp_codec::turn::TurnEvent::ToolCallUpdated(t) = event else {
                panic!("{event:?}")
            };
            // Rendering the parsed title allocates nothing either.
            assert_eq!(t.title().description(), "List");
        }
    });
    assert_eq!(count, 0);
    let done: PromptResponse<'_> = serde_json::from_str(r#"{"stopReason":"end_turn"}"#).unwrap();
    let count = allocations_in(|| {
        assert_eq!(view.push_prompt_response(&done).count(), 1);
    });
    assert_eq!(count, 0, "a known stop reason is copied without allocating");
}
