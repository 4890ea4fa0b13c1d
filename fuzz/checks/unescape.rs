//! The invariant behind the `unescape` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: byte 0 is a count of ASCII bytes (0 to 63) put before the text,
//! which moves it across word and block edges; the rest is the content of
//! a JSON string token, as written between its quotes (invalid UTF-8
//! replaced). The token is the text of an `agent_message_chunk` line.
//! Asserted, with `serde_json` (which shares no code with the crate) as
//! the oracle:
//! - when `serde_json` reads the line and finds a string at the chunk's
//!   text, `acp::decode_line` decodes the line, in both modes, to that
//!   text, byte for byte; where the text closed early (a quote in the
//!   input), the rest of the line is other members, which the crate types
//!   as the schema does and may refuse (a string where an object is
//!   due) or, in lenient mode, salvage with the problem reported and the
//!   content no longer text; a text it decodes is held to that text;
//! - the oracle is `serde_json`'s typed decoding: types that name the
//!   members on the text's path, skip the others without decoding them
//!   (a lone surrogate there is not refused; the crate keeps such members
//!   as they came) and refuse a member named twice (as the crate does);
//!   not `serde_json::Value`, which decodes every string and keeps the
//!   last of a repeated member;
//! - when `serde_json` refuses the line (a bad escape, a lone surrogate, a
//!   raw control character, a stray quote), `acp::decode_line` refuses it
//!   in strict mode; in lenient mode it refuses it, or decodes it with
//!   what it salvaged reported (a lone surrogate is JSON that a Rust
//!   string cannot hold: a mismatch, which lenient decoding salvages);
//! - each of the crate's two unescapers (`fuzzing::unescape_string`, the
//!   target's: a block of sixty-four bytes a step where the target has
//!   vector registers; `fuzzing::unescape_string_portable`, a word of
//!   eight, the one of the other targets) reads the string, in the line
//!   and alone with nothing after its closing quote, as `serde_json` reads
//!   the first string there: the same text ending at the same offset, or
//!   refused where it refuses, at the same offset for both, a byte that
//!   cannot be string content (a backslash, a control character) or the
//!   end of the text.

use acp_codec::acp::{
    decode_line, ContentBlock, Incoming, Mode, NotificationParams, SessionUpdate, Typed,
};
use acp_codec::fuzzing::{unescape_string, unescape_string_portable};

/// The line's text before the chunk's text.
const HEAD: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#;

pub fn check(data: &[u8]) {
    let Some((&pad, body)) = data.split_first() else {
        return;
    };
    let body = String::from_utf8_lossy(body);
    let pad = "p".repeat(usize::from(pad % 64));
    let line = format!(r#"{HEAD}{pad}{body}"}}}}}}}}"#);
    both_unescapers(&line, HEAD.len());
    both_unescapers(&format!(r#""{pad}{body}""#), 1);
    // The text token as `serde_json` reads it: when it is a string that
    // ends before the line's own closing quote, the text closed early and
    // the rest of the line is other members, which the crate types as the
    // schema does and the types below do not (`"annotations":"x"` is
    // refused: not an object). Such a line the crate may refuse where the
    // types below read it; what it decodes is still held to them.
    let quote = HEAD.len() - 1;
    let mut first = serde_json::Deserializer::from_str(&line[quote..]).into_iter::<String>();
    let closed_early =
        first.next().is_some_and(|s| s.is_ok()) && quote + first.byte_offset() != line.len() - 4;
    // What `serde_json`'s typed decoding reads (not `Value`'s: it decodes
    // every string and keeps the last of a repeated member, where typed
    // decoding skips a member it does not name without decoding it, so a
    // lone surrogate there is not refused, and refuses a member it names
    // twice; the crate does both alike).
    let theirs = typed_text(&line);
    for mode in [Mode::Lenient, Mode::Strict] {
        let ours = decode_line(&line, mode);
        match (&theirs, ours) {
            // The other members salvaged in lenient mode, reported: the
            // content may then not be text.
            (Some(want), Ok(got))
                if closed_early
                    && mode == Mode::Lenient
                    && matches!(&got, Incoming::Notification(t) if !t.is_clean()) =>
            {
                if let Some(text) = chunk_text(&got) {
                    assert_eq!(text, want.as_str(), "{line}");
                }
            }
            (Some(want), Ok(got)) => assert_eq!(chunk_text(&got), Some(want.as_str()), "{line}"),
            (Some(_), Err(_)) if closed_early => {}
            (Some(want), Err(e)) => panic!("{line}: refused ({e}), serde_json reads {want:?}"),
            (None, Ok(Incoming::Notification(t))) if mode == Mode::Lenient => {
                assert!(
                    !t.is_clean(),
                    "{line}: decoded clean, serde_json refuses it"
                );
            }
            (None, Ok(_)) => panic!("{line}: decoded, serde_json refuses it"),
            (None, Err(_)) => {}
        }
    }
}

/// The string whose content starts at `from` in `text`, read by each of
/// the crate's unescapers and by `serde_json` (the first string at the
/// opening quote).
fn both_unescapers(text: &str, from: usize) {
    let quote = from - 1;
    let mut first = serde_json::Deserializer::from_str(&text[quote..]).into_iter::<String>();
    let theirs = first
        .next()
        .and_then(Result::ok)
        .map(|s| (s, quote + first.byte_offset()));
    let target = unescape_string(text, from);
    let portable = unescape_string_portable(text, from);
    for (name, ours) in [("target's", &target), ("portable", &portable)] {
        match (ours, &theirs) {
            (Ok(ours), Some(theirs)) => assert_eq!(ours, theirs, "{name}: {text}"),
            (Err(at), None) => assert!(
                matches!(text.as_bytes().get(*at), None | Some(b'\\' | 0..=0x1f)),
                "{name}: refused at {at}, not a backslash, a control character or the end: {text}"
            ),
            (Ok(ours), None) => panic!("{name}: read {ours:?}, serde_json refuses: {text}"),
            (Err(at), Some(theirs)) => {
                panic!("{name}: refused at {at}, serde_json reads {theirs:?}: {text}")
            }
        }
    }
    assert_eq!(target, portable, "{text}");
}

/// The text of an `agent_message_chunk`.
fn chunk_text<'a>(incoming: &'a Incoming<'_>) -> Option<&'a str> {
    let Incoming::Notification(Typed {
        value: NotificationParams::SessionUpdate(u),
        ..
    }) = incoming
    else {
        return None;
    };
    let SessionUpdate::AgentMessageChunk(c) = &u.update else {
        return None;
    };
    let ContentBlock::Text(t) = &c.content else {
        return None;
    };
    Some(&t.text)
}

/// The chunk's text as `serde_json` reads it into types that name the
/// members on its path, as the crate's types do (the others skipped, not
/// decoded; one named twice refused).
fn typed_text(line: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(rename = "jsonrpc")]
        _jsonrpc: serde::de::IgnoredAny,
        #[serde(rename = "method")]
        _method: serde::de::IgnoredAny,
        params: Params,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "sessionId")]
        _session_id: serde::de::IgnoredAny,
        update: Update,
    }
    #[derive(serde::Deserialize)]
    struct Update {
        #[serde(rename = "sessionUpdate")]
        _session_update: serde::de::IgnoredAny,
        content: Content,
    }
    #[derive(serde::Deserialize)]
    struct Content {
        #[serde(rename = "type")]
        _type: serde::de::IgnoredAny,
        text: String,
    }
    serde_json::from_str::<Line>(line)
        .ok()
        .map(|l| l.params.update.content.text)
}
