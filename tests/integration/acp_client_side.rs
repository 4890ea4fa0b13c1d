//! What the crate gives ACP clients beside the messages: the agent quirks
//! table (held against recorded sessions of the agents it names) and the
//! bounded terminal output (held against a naive reference).
#![cfg(feature = "std")]

use acp_codec::acp::Mode;
use std::fs;
use std::path::Path;

use acp_codec::acp::{Message, ResponseResult, Typed};
use acp_codec::client::quirks::{MissingFile, Quirks, KNOWN};
use acp_codec::client::terminal::TerminalOutput;
use proptest::prelude::*;
use serde_json::Value;

fn transcript(session: &str) -> Vec<Value> {
    let path = Path::new("tests/fixtures/sessions")
        .join(session)
        .join("transcript.ndjson");
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The quirks for the agent of a recorded session, from its `initialize`
/// result decoded by the crate.
fn quirks_of(session: &str) -> Quirks {
    let init = transcript(session)
        .into_iter()
        .find(|e| e["from"] == "agent" && e["msg"]["result"]["protocolVersion"].is_number())
        .unwrap();
    let line = init["msg"].to_string();
    let Message::Response(resp) = Message::decode(&line).unwrap() else {
        panic!("not a response");
    };
    let Ok(ResponseResult::Initialize(r)) = resp
        .typed("initialize", Mode::Lenient)
        .map(Typed::into_value)
    else {
        panic!("not an initialize result");
    };
    Quirks::of(r.agent_info.as_ref())
}

#[test]
fn each_recorded_agent_gets_its_quirks() {
    for session in [
        "gemini-cli-0.61.0-acp-turn",
        "ts-sdk-2.4.0-client-gemini-cli-0.61.0-acp-turn",
    ] {
        assert_eq!(quirks_of(session).missing_file, MissingFile::EmptyContent);
    }
    for session in [
        "py-sdk-0.12.1-scripted-agent",
        "spec-examples",
        "claude-agent-acp-0.101.0-acp-turn",
        "qwen-code-0.24.4-acp-turn",
    ] {
        assert_eq!(quirks_of(session), Quirks::default(), "{session}");
    }
    assert_eq!(Quirks::of(None), Quirks::default());
}

/// The evidence for the Gemini row: in the recorded turn the client
/// answered the read of the new file NOTES.md with the standard `-32002`,
/// and Gemini CLI failed the write with it.
#[test]
fn gemini_fails_a_new_file_write_on_the_standard_answer() {
    let t = transcript("gemini-cli-0.61.0-acp-turn");
    let refused = t
        .iter()
        .position(|e| e["from"] == "client" && e["msg"]["error"]["code"] == -32002)
        .expect("a -32002 answer");
    let failed = t.iter().skip(refused).any(|e| {
        let u = &e["msg"]["params"]["update"];
        u["status"] == "failed" && u.to_string().contains("Error checking existing file")
    });
    assert!(failed, "the write after the -32002 answer did not fail");
    let row = KNOWN.iter().find(|q| q.agent == "gemini-cli").unwrap();
    assert!(row.upstream.contains("gemini-cli#9280"));
}

/// Why Qwen Code (a Gemini CLI fork) has no row: in its recorded turn the
/// new file NOTES.md is written without the client ever being asked to read
/// it (Qwen checks for the file itself), and the write goes through.
#[test]
fn qwen_writes_a_new_file_without_reading_it_first() {
    let t = transcript("qwen-code-0.24.4-acp-turn");
    let path = |e: &Value| e["msg"]["params"]["path"].as_str().unwrap_or("").to_owned();
    let method = |e: &Value| e["msg"]["method"].as_str().unwrap_or("").to_owned();
    let writes: Vec<String> = t
        .iter()
        .filter(|e| e["from"] == "agent" && method(e) == "fs/write_text_file")
        .map(path)
        .collect();
    assert!(
        writes.iter().any(|p| p.ends_with("/NOTES.md")),
        "{writes:?}"
    );
    assert!(!t
        .iter()
        .any(|e| method(e) == "fs/read_text_file" && path(e).ends_with("/NOTES.md")));
    assert!(!t
        .iter()
        .any(|e| e["from"] == "client" && e["msg"]["error"]["code"] == -32002));
    assert_eq!(
        Quirks::for_agent("qwen-code", "0.24.4"),
        Quirks::default(),
        "no row for Qwen Code"
    );
}

#[test]
fn the_answers_encode_as_acp_says() {
    let ok = MissingFile::EmptyContent.answer("/p/x").unwrap();
    assert_eq!(
        serde_json::to_value(&ok).unwrap(),
        serde_json::json!({"content": ""})
    );
    let err = MissingFile::ResourceNotFound.answer("/p/x").unwrap_err();
    assert_eq!(
        serde_json::to_value(&err).unwrap(),
        serde_json::json!({"code": -32002, "message": "Resource not found: /p/x", "data": {"uri": "/p/x"}})
    );
}

/// The naive reference: everything pushed, the last `limit` bytes, minus
/// the rest of a character the cut split.
fn naive(pushed: &[u8], limit: usize) -> (Vec<u8>, bool) {
    if pushed.len() <= limit {
        return (pushed.to_vec(), false);
    }
    let mut kept = &pushed[pushed.len() - limit..];
    while let [b, rest @ ..] = kept {
        if b & 0xC0 != 0x80 {
            break;
        }
        kept = rest;
    }
    (kept.to_vec(), true)
}

proptest! {
    /// Valid UTF-8 output in any split: the same text as the reference, and
    /// never more than the limit held.
    #[test]
    fn bounded_output_matches_the_reference(
        text in "(\\PC|\n){0,200}",
        cuts in prop::collection::vec(0usize..400, 0..8),
        limit in 0usize..120,
    ) {
        let bytes = text.as_bytes();
        let mut out = TerminalOutput::new(Some(limit));
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= bytes.len()).collect();
        cuts.sort_unstable();
        let mut at = 0;
        for c in cuts.into_iter().chain([bytes.len()]) {
            out.push(&bytes[at..c]);
            at = c;
            prop_assert!(out.len() <= limit);
        }
        let (want, truncated) = naive(bytes, limit);
        let got = out.text();
        prop_assert_eq!(got.as_bytes(), &want[..]);
        prop_assert_eq!(out.truncated(), truncated);
        prop_assert!(std::str::from_utf8(&want).is_ok());
    }

    /// Any bytes, any split: nothing over the limit, text always valid, and
    /// once exited every kept byte is shown (bad ones as U+FFFD).
    #[test]
    fn any_bytes_stay_bounded(
        reads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..10),
        limit in 0usize..100,
    ) {
        let mut out = TerminalOutput::new(Some(limit));
        let mut total = 0;
        for r in &reads {
            out.push(r);
            total += r.len();
            prop_assert!(out.len() <= limit);
        }
        prop_assert_eq!(out.truncated(), total > limit);
        out.exited(Some(1), None);
        let shown = out.text();
        prop_assert!(shown.len() <= out.len() * 3);
    }
}

#[test]
fn one_huge_read_keeps_only_its_tail() {
    let mut out = TerminalOutput::new(Some(4));
    out.push(&vec![b'x'; 1 << 20]);
    out.push(b"yz");
    assert_eq!(out.text(), "xxyz");
    assert!(out.truncated());
}
