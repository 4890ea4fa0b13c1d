//! The invariant behind the `unescape` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: byte 0 is a count of ASCII bytes (0 to 63) put before the text,
//! which moves it across word and block edges; the rest is the content of
//! a JSON string token, as written between its quotes (invalid UTF-8
//! replaced). The token is the text of an `agent_message_chunk` line.
//! Asserted, with `serde_json` (which shares no code with the crate) as
//! the oracle:
//! - the line's decoding, in strict mode, is `serde_json`'s typed
//!   decoding of it (the oracle in `tests/oracle/`, generated from the
//!   schema as plain serde derives, sharing no code with the crate): the
//!   crate decodes the line exactly when the oracle does, to the text the
//!   oracle reads, byte for byte. Where the text closed early (a quote in
//!   the input), the rest of the line is other members, which both type
//!   as the schema does (`"annotations":"x"` is refused by both);
//! - in lenient mode, a line the oracle reads decodes, clean, to the same
//!   text; one it refuses is refused, or decoded with what was salvaged
//!   reported (a text it decodes is then still the text `serde_json`
//!   reads at the text's place);
//! - the oracle cannot judge a line that names a member twice (a
//!   `serde_json::Value` keeps the last one) or that holds JSON a
//!   `serde_json::Value` cannot (a lone surrogate, a number past `f64`) in
//!   a member the crate keeps as it came: for such a line the text alone
//!   is judged, by types that name the members on the text's path and
//!   skip the others without decoding them (refusing a member named
//!   twice, as the crate does): when they read it, a decoding gives that
//!   text, and a refusal is allowed only there; when they refuse it, so
//!   does strict mode. A line with an `id` is a request, not the chunk:
//!   only the unescapers judge it;
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

#[path = "../../tests/oracle/mod.rs"]
#[allow(dead_code)]
mod oracle;

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
    // The text alone, as `serde_json` reads it into types that name the
    // members on its path and skip the others undecoded.
    let text_only = typed_text(&line);
    let value = serde_json::from_str::<serde_json::Value>(&line);
    if value.as_ref().is_ok_and(|v| v.get("id").is_some()) {
        // A request named `session/update`: not the chunk.
        return;
    }
    // The oracle's verdict on the whole line, where it can judge it.
    let judged = value.is_ok() && !oracle::names_a_member_twice(&line);
    let theirs = judged.then(|| schema_text(&line));
    for mode in [Mode::Lenient, Mode::Strict] {
        let ours = decode_line(&line, mode);
        match (&theirs, &text_only, ours) {
            // Judged: strict decoding is the oracle's.
            (Some(Ok(want)), _, Ok(got)) => {
                assert_eq!(chunk_text(&got), Some(want.as_str()), "{mode:?}: {line}");
                if let Incoming::Notification(t) = &got {
                    assert!(
                        t.is_clean(),
                        "{mode:?}: salvaged, the oracle reads it: {line}"
                    );
                }
            }
            (Some(Ok(want)), _, Err(e)) => {
                panic!("{mode:?}: {line}: refused ({e}), the oracle reads {want:?}")
            }
            (Some(Err(_)), _, Err(_)) => {}
            (Some(Err(e)), _, Ok(got)) => {
                assert!(
                    mode == Mode::Lenient
                        && matches!(&got, Incoming::Notification(t) if !t.is_clean()),
                    "{mode:?}: {line}: decoded clean, the oracle refuses it ({e})"
                );
                if let (Some(text), Some(want)) = (chunk_text(&got), &text_only) {
                    assert_eq!(text, want.as_str(), "{line}");
                }
            }
            // Not judged: the text alone.
            (None, Some(want), Ok(got)) => {
                if let Some(text) = chunk_text(&got) {
                    assert_eq!(text, want.as_str(), "{mode:?}: {line}");
                } else {
                    assert!(
                        matches!(&got, Incoming::Notification(t) if !t.is_clean()),
                        "{mode:?}: {line}: decoded clean without the text {want:?}"
                    );
                }
            }
            (None, Some(_), Err(_)) => {}
            (None, None, Ok(Incoming::Notification(t))) if mode == Mode::Lenient => {
                assert!(
                    !t.is_clean(),
                    "{line}: decoded clean, serde_json refuses it"
                );
            }
            (None, None, Ok(_)) => panic!("{mode:?}: {line}: decoded, serde_json refuses it"),
            (None, None, Err(_)) => {}
        }
    }
}

/// The chunk's text as the oracle (`tests/oracle/`: the schema's types as
/// plain serde derives) reads the line: a notification whose params are
/// a `session/update`'s; an error when it refuses the line or it is not
/// an agent's text chunk.
fn schema_text(line: &str) -> Result<String, String> {
    #[derive(serde::Deserialize)]
    struct Line {
        jsonrpc: String,
        method: String,
        params: oracle::SessionNotification,
    }
    let l: Line = serde_json::from_str(line).map_err(|e| e.to_string())?;
    if l.jsonrpc != "2.0" || l.method != "session/update" {
        return Err(format!("not a session/update: {} {}", l.jsonrpc, l.method));
    }
    match l.params.update {
        oracle::SessionUpdate::AgentMessageChunk(oracle::ContentChunk {
            content: oracle::ContentBlock::Text(t),
            ..
        }) => Ok(t.text),
        other => Err(format!("not a text chunk: {other:?}")),
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
