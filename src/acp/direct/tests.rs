//! The direct decoder against serde (the generated structs' `Deserialize`,
//! which keeps unknown members and `null`s), and the share of generated
//! lines it takes.

#[path = "../../../tests/support/update_lines.rs"]
mod test_lines;

use super::*;
use crate::acp::{Message, NotificationParams, Typed};
use alloc::format;

fn serde(text: &str) -> Option<SessionNotification<'_>> {
    serde_json::from_str(text).ok()
}

#[test]
fn common_shapes_take_the_direct_path_and_equal_serde() {
    let cases = [
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"a\nb\u00e9","_meta":{"x":1}}},"_meta":null}"#,
        r#" { "update" : { "sessionUpdate" : "user_message_chunk" , "messageId" : "m" , "content" : { "type" : "text" , "text" : "" } } , "sessionId" : "s\"q" } "#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls -la","kind":"execute","status":"pending","locations":[{"path":"/a","line":3},{"path":"/b"}],"rawInput":{"command":"ls"}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","kind":"brand_new","content":[{"type":"content","content":{"type":"text","text":"out\n"}},{"type":"diff","path":"/f","newText":"x"},{"type":"terminal","terminalId":"term"}],"rawOutput":null,"name":"shell"}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[]}}"#,
    ];
    for c in cases {
        let fast = session_notification(c).unwrap_or_else(|| panic!("not direct: {c}"));
        assert_eq!(Some(&fast), serde(c).as_ref(), "{c}");
    }
}

#[test]
fn everything_else_is_left_to_serde() {
    let cases = [
        // Tag not first, escaped key, annotations, image, unknown tag.
        r#"{"sessionId":"s","update":{"content":{"type":"text","text":"hi"},"sessionUpdate":"agent_message_chunk"}}"#,
        r#"{"session\u0049d":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","annotations":{"priority":1}}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"","mimeType":"image/png"}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}"#,
        // A member it does not know, or `null` for an optional member: the
        // general path keeps them in the struct's `extra`.
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}},"extra":[1,{"a":"]"}]}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":"hi"}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","annotations":null,"text":"hi"}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","locations":[{"path":"/b","line":null}]}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","locations":null}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"diff","path":"/f","oldText":null,"newText":"x"}]}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","future":1}}"#,
        // Errors: duplicate, missing, wrong type, lone surrogate, bad number.
        r#"{"sessionId":"s","sessionId":"t","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
        r#"{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
        r#"{"sessionId":7,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
        r#"{"sessionId":"\ud800","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":null}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","locations":[{"path":"/a","line":-1}]}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","locations":[{"path":"/a","line":4294967296}]}}"#,
        r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","content":{}}}"#,
        "[]",
        "{}",
    ];
    for c in cases {
        assert!(session_notification(c).is_none(), "{c}");
    }
}

#[test]
fn borrowed_without_escapes() {
    let c = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#;
    let Some(SessionNotification {
        session_id,
        update: SessionUpdate::AgentMessageChunk(chunk),
        ..
    }) = session_notification(c)
    else {
        panic!()
    };
    assert!(matches!(session_id, Cow::Borrowed("s")));
    let ContentBlock::Text(t) = chunk.content else {
        panic!()
    };
    assert!(matches!(t.text, Cow::Borrowed("hi")));
}

fn chunk_params(text_token: &str, tail: &str) -> alloc::string::String {
    format!(
        r#"{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":{text_token}}}}},"_meta":{{"pad":"{tail}"}}}}"#
    )
}

fn chunk_text<'b>(n: &'b SessionNotification<'_>) -> &'b Cow<'b, str> {
    let SessionUpdate::AgentMessageChunk(c) = &n.update else {
        panic!()
    };
    let ContentBlock::Text(t) = &c.content else {
        panic!()
    };
    &t.text
}

#[test]
fn long_strings_unescape_in_one_pass_and_equal_serde() {
    let plain = "x".repeat(5000);
    let far = format!(
        "{}\\n{}\\u00e9\\ud83d\\ude00",
        "y".repeat(5000),
        "z".repeat(10)
    );
    let dense = "line \\\"quoted\\\" \\t\\\\ end\\n".repeat(400);
    for (body, borrowed) in [(&plain, true), (&far, false), (&dense, false)] {
        let text = chunk_params(&format!("\"{body}\""), "");
        let fast = session_notification(&text).unwrap();
        assert_eq!(Some(&fast), serde(&text).as_ref());
        assert_eq!(matches!(chunk_text(&fast), Cow::Borrowed(_)), borrowed);
        let line = format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{text}}}"#);
        let mut out = blank();
        assert!(session_update_line(&line, &mut out).is_some());
        assert_eq!(out, fast);
    }
    // Bad escapes and raw control characters far into a long string.
    for bad in ["\\x", "\\ud800", "\u{1}", "\\u12"] {
        let text = chunk_params(&format!("\"{far}{bad}\""), "");
        let line = format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{text}}}"#);
        assert!(session_update_line(&line, &mut blank()).is_none(), "{bad}");
    }
}

#[test]
fn a_long_string_keeps_little_spare_capacity() {
    let far = format!("{}\\n", "y".repeat(5000));
    // Much more text after the string than in it: the bound it was
    // allocated with is trimmed.
    let text = chunk_params(&format!("\"{far}\""), &"p".repeat(100_000));
    let fast = session_notification(&text).unwrap();
    let Cow::Owned(kept) = chunk_text(&fast) else {
        panic!()
    };
    assert_eq!(kept.len(), 5001);
    assert!(
        kept.capacity() <= 2 * kept.len() + LONG,
        "{}",
        kept.capacity()
    );
}

/// The generated lines (near misses included) reach the direct paths
/// often, and whatever they decode equals the general path's value.
#[test]
fn generated_lines_take_the_direct_paths_and_agree() {
    let (mut lines, mut direct, mut trusted) = (0, 0, 0);
    for seed in 0..20_000u64 {
        let line = test_lines::line(seed);
        lines += 1;
        let decoded = Message::decode(&line);
        let two_step = match &decoded {
            // Lenient, and nothing salvaged: the direct path only takes
            // lines that fit the schema.
            Ok(Message::Notification(n)) => n.typed().ok().map(Typed::into_owned),
            _ => None,
        };
        let mut out = blank();
        if session_update_line(&line, &mut out).is_some() {
            direct += 1;
            assert_eq!(
                two_step,
                Some(Typed::clean(NotificationParams::SessionUpdate(
                    out.into_owned()
                ))),
                "{line}"
            );
        }
        if let Ok(Message::Notification(n)) = &decoded {
            if let Some(v) = n
                .params
                .as_ref()
                .and_then(|p| session_notification(p.get()))
            {
                trusted += 1;
                let p = n.params.as_ref().map(|p| p.get()).unwrap_or_default();
                assert_eq!(serde(p).as_ref(), Some(&v), "{line}");
            }
        }
    }
    let summary = format!("{lines} lines: {direct} one pass, {trusted} trusted");
    // Near misses (unknown members, `null`s, wrong types, duplicates, tags
    // not first) go to the general path; a quarter at least take this one.
    assert!(direct * 100 > lines * 25, "{summary}");
    assert!(trusted >= direct, "{summary}");
}

/// Closing a container that is not open is a bug of the decoder, loud in
/// debug builds (it was clamped to depth 0 and went unnoticed).
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "closed a container that is not open")]
fn a_close_with_nothing_open_is_a_bug() {
    let mut c = super::cursor::Cur::<true>::new("}");
    let _ = c.key(&mut true);
}

/// A whole line closes every container it opens, its own object included.
#[test]
fn a_whole_line_closes_what_it_opens() {
    let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;
    let mut out = super::blank();
    assert!(super::session_update_line(line, &mut out).is_some());
}
