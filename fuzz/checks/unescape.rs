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
//!   text, byte for byte;
//! - when `serde_json` refuses the line (a bad escape, a lone surrogate, a
//!   raw control character, a stray quote), `acp::decode_line` refuses it
//!   in strict mode; in lenient mode it refuses it, or decodes it with
//!   what it salvaged reported (a lone surrogate is JSON that a Rust
//!   string cannot hold: a mismatch, which lenient decoding salvages).

use acp_codec::acp::{
    decode_line, ContentBlock, Incoming, Mode, NotificationParams, SessionUpdate, Typed,
};

pub fn check(data: &[u8]) {
    let Some((&pad, body)) = data.split_first() else {
        return;
    };
    let body = String::from_utf8_lossy(body);
    let pad = "p".repeat(usize::from(pad % 64));
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{pad}{body}"}}}}}}}}"#
    );
    let theirs = match serde_json::from_str::<serde_json::Value>(&line) {
        Ok(value) => match value.pointer("/params/update/content/text") {
            Some(serde_json::Value::String(text)) => Some(text.clone()),
            // The text closed early and the line means something else.
            _ => return,
        },
        Err(_) => None,
    };
    for mode in [Mode::Lenient, Mode::Strict] {
        let ours = decode_line(&line, mode);
        match (&theirs, ours) {
            (Some(want), Ok(got)) => assert_eq!(chunk_text(&got), Some(want.as_str()), "{line}"),
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
