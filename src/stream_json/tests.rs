use super::*;
use alloc::string::{String, ToString};

const TS: &str = "2025-10-01T12:00:00.000Z";

fn round_trip(line: &str) -> Event<'_> {
    let event = Event::decode(line).unwrap();
    let mut out = Vec::new();
    let n = event.encode(&mut out).unwrap();
    assert_eq!(n, out.len());
    assert_eq!(
        String::from_utf8(out).unwrap(),
        alloc::format!("{line}\n"),
        "{line}"
    );
    event
}

#[test]
fn every_known_type_round_trips() {
    let lines = [
        r#"{"type":"init","timestamp":"T","session_id":"s-1","model":"gemini-2.5-pro"}"#,
        r#"{"type":"message","timestamp":"T","role":"assistant","content":"hi \"you\"","delta":true}"#,
        r#"{"type":"tool_use","timestamp":"T","tool_name":"run_shell_command","tool_id":"run_shell_command-1-0","parameters":{"command":"ls -R /"}}"#,
        r#"{"type":"tool_result","timestamp":"T","tool_id":"x","status":"error","output":"","error":{"type":"E","message":"boom"}}"#,
        r#"{"type":"error","timestamp":"T","severity":"warning","message":"loop detected"}"#,
        r#"{"type":"result","timestamp":"T","status":"success","stats":{"total_tokens":3,"models":{}}}"#,
        r#"{"type":"tool_result_start","timestamp":"T","tool_id":"x","status":"success","total_bytes":12}"#,
        r#"{"type":"tool_result_chunk","tool_id":"x","seq":0,"data":"a\u0001\n"}"#,
        r#"{"type":"tool_result_end","tool_id":"x","chunks":1,"total_bytes":3}"#,
        r#"{"type":"thought","subject":"s","n":[1, 2]}"#,
    ];
    // Every known kind in order, then one this version does not know.
    let kinds = KNOWN.iter().copied().chain(["thought"]);
    for (line, kind) in lines.iter().zip(kinds) {
        let line = line
            .replace('T', TS)
            .replace(&alloc::format!("\"{TS}ool"), "\"Tool");
        // 'T' inside tool names etc. is not used above, only timestamps.
        let e = round_trip(&line);
        assert_eq!(e.kind(), kind);
    }
}

#[test]
fn text_borrows_even_inside_option() {
    let line = alloc::format!(
        r#"{{"type":"tool_result","timestamp":"{TS}","tool_id":"id","status":"success","output":"plain text"}}"#
    );
    let Event::ToolResult(r) = Event::decode(&line).unwrap() else {
        panic!()
    };
    assert!(r.timestamp.unwrap().is_borrowed());
    assert!(r.tool_id.is_borrowed());
    assert!(r.output.unwrap().is_borrowed());
    let line = r#"{"type":"tool_result","tool_id":"id","status":"success","output":"a\tb"}"#;
    let Event::ToolResult(r) = Event::decode(line).unwrap() else {
        panic!()
    };
    assert_eq!(r.output.as_deref(), Some("a\tb"));
    assert!(!r.output.unwrap().is_borrowed());
}

#[test]
fn unknown_fields_ignored_unknown_types_kept() {
    let line = r#"{"type":"tool_result","tool_id":"id","status":"success","output":"o","media":[{"mime_type":"image/png"}],"extra":1}"#;
    let Event::ToolResult(r) = Event::decode(line).unwrap() else {
        panic!()
    };
    assert_eq!(r.output.as_deref(), Some("o"));
    // An unknown type whose fields clash with known ones is still kept.
    let line = r#"{"type":"future","seq":"not a number","status":7}"#;
    let e = round_trip(line);
    assert!(matches!(e, Event::Unknown(Unknown { ref kind, .. }) if kind == "future"));
}

#[test]
fn bad_lines_are_typed_errors() {
    let cases: [(&str, &str); 7] = [
        ("not json", "not a stream-json event"),
        ("[1,2]", "not a stream-json event"),
        (
            r#"{"timestamp":"x"}"#,
            "event event lacks the required field type",
        ),
        (
            r#"{"type":"init","session_id":"s"}"#,
            "init event lacks the required field model",
        ),
        (
            r#"{"type":"tool_result","tool_id":"x","status":"maybe"}"#,
            "tool_result event has an invalid status",
        ),
        (
            r#"{"type":"tool_result_chunk","tool_id":"x","seq":0,"data":5}"#,
            "tool_result_chunk event has an invalid data",
        ),
        (
            r#"{"type":"tool_result_chunk","tool_id":"x","seq":-1,"data":"a"}"#,
            "not a stream-json event",
        ),
    ];
    for (line, msg) in cases {
        let e = Event::decode(line).unwrap_err();
        assert!(e.to_string().starts_with(msg), "{line}: {e}");
    }
}

#[test]
fn chunk_data_stays_escaped() {
    let line = r#"{"type":"tool_result_chunk","tool_id":"x","seq":3,"data":"\ud83d\ude00\""}"#;
    let Event::ToolResultChunk(c) = Event::decode(line).unwrap() else {
        panic!()
    };
    assert_eq!(c.seq, 3);
    assert_eq!(c.data.as_literal(), r#""\ud83d\ude00\"""#);
    assert_eq!(c.data.as_plain(), None);
    assert_eq!(&*c.data.to_text().unwrap(), "😀\"");
    let line = r#"{"type":"tool_result_chunk","tool_id":"x","seq":3,"data":"abc"}"#;
    let Event::ToolResultChunk(c) = Event::decode(line).unwrap() else {
        panic!()
    };
    assert_eq!(c.data.as_plain(), Some("abc"));
    assert!(c.data.to_text().unwrap().is_borrowed());
}

#[test]
fn pretty_unknown_is_compacted() {
    let text = "{\"type\": \"x\",\n \"a\": 1}";
    let e = Event::decode(text).unwrap();
    let mut out = Vec::new();
    e.encode(&mut out).unwrap();
    assert_eq!(out, b"{\"type\":\"x\",\"a\":1}\n");
}
