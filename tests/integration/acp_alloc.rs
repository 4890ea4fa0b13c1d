//! Heap allocations of decoding a typical `agent_message_chunk`: none when
//! its text has no escapes, one when it has, however long the text (one
//! more to trim it when unescaping made it much shorter).
#![cfg(feature = "std")]

use acp_codec::acp::Mode;
use acp_codec::acp::{
    decode_line, ContentBlock, Incoming, Message, NotificationParams, SessionNotification,
    SessionUpdate, Typed,
};

/// Runs `f`, counting the heap allocations of this thread (the
/// `allocation-counter` crate's global allocator; this crate forbids
/// `unsafe`, so it cannot define its own).
fn count<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (out.unwrap(), info.count_total)
}

fn chunk_line(text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c","update":{{"sessionUpdate":"agent_message_chunk","messageId":"msg_01HZX3K9Q2W8E7R6T5Y4U3I2O1","content":{{"type":"text","text":"{text}"}}}}}}}}"#
    )
}

/// Decodes the line fully (envelope and typed params) and returns the text.
fn decode_text(line: &str) -> usize {
    let msg = Message::decode(line).unwrap();
    let Message::Notification(n) = &msg else {
        panic!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else {
        panic!()
    };
    chunk_text_len(&u)
}

/// The same in one call, [`acp::decode_line`](acp_codec::acp::decode_line).
fn decode_line_text(line: &str) -> usize {
    let Incoming::Notification(Typed {
        value: NotificationParams::SessionUpdate(u),
        ..
    }) = decode_line(line, Mode::Lenient).unwrap()
    else {
        panic!()
    };
    chunk_text_len(&u)
}

fn chunk_text_len(u: &SessionNotification<'_>) -> usize {
    let SessionUpdate::AgentMessageChunk(c) = &u.update else {
        panic!()
    };
    let ContentBlock::Text(t) = &c.content else {
        panic!()
    };
    assert!(c.message_id.is_some());
    t.text.len()
}

#[test]
fn plain_text_decodes_without_allocating() {
    let text = "x".repeat(200);
    let line = chunk_line(&text);
    let (len, allocs) = count(|| decode_text(&line));
    assert_eq!(len, 200);
    assert_eq!(allocs, 0);
    let (len, allocs) = count(|| decode_line_text(&line));
    assert_eq!(len, 200);
    assert_eq!(allocs, 0);
}

#[test]
fn escaped_text_allocates_once() {
    let text = "line one\\nline \\\"two\\\" \\u00e9\\ud83e\\udd80 tab\\t".repeat(5);
    let line = chunk_line(&text);
    let (len, allocs) = count(|| decode_text(&line));
    assert!(len > 100);
    assert_eq!(allocs, 1);
    let (len2, allocs) = count(|| decode_line_text(&line));
    assert_eq!(len2, len);
    assert_eq!(allocs, 1);
}

#[test]
fn long_escaped_text_is_allocated_once() {
    // 1 MiB with an escaped quote every hundred bytes (an escaped quote
    // past 4 KiB stops the search for the string's end): read into one
    // allocation of the text's size, never grown; unescaped it is 99% of
    // that, so it is not trimmed either.
    let text = format!("{}\\\"", "x".repeat(98)).repeat(10_000);
    let line = chunk_line(&text);
    let want: String = serde_json::from_str(&format!("\"{text}\"")).unwrap();
    for decode in [decode_text, decode_line_text] {
        let (len, allocs) = count(|| decode(&line));
        assert_eq!(len, want.len());
        assert_eq!(allocs, 1);
    }
}

#[test]
fn long_escaped_text_that_shrinks_is_trimmed_once() {
    // 1 MiB, escapes all along, a third shorter unescaped: one allocation
    // of the text's size, then one trim (a realloc).
    let text = "row \\\"quoted\\\" caf\\u00e9\\n".repeat(40_000);
    let line = chunk_line(&text);
    let want: String = serde_json::from_str(&format!("\"{text}\"")).unwrap();
    for decode in [decode_text, decode_line_text] {
        let (len, allocs) = count(|| decode(&line));
        assert_eq!(len, want.len());
        assert!((1..=2).contains(&allocs), "{allocs} allocations");
    }
}
