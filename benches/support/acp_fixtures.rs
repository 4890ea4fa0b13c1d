// Shared by benches/acp.rs and benches/official: the lines benchmarked.
#![allow(dead_code)] // each bench package uses part of it

use acp_codec::acp::Mode;

/// A typical `agent_message_chunk` notification: realistic ids, 200
/// characters of text without escapes.
pub fn chunk_line() -> String {
    let text: String = "The function `process_data` iterates over the list and prints each item; \
                consider adding type hints, handling the empty case explicitly, and returning \
                a summary instead of printing so that callers can test it. "
        .chars()
        .cycle()
        .take(200)
        .collect();
    chunk_line_of(&format!("\"{text}\""))
}

/// An `agent_message_chunk` notification whose text is the JSON string
/// `token` (quotes included, escaped as the caller wrote it).
pub fn chunk_line_of(token: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c","update":{{"sessionUpdate":"agent_message_chunk","messageId":"msg_01HZX3K9Q2W8E7R6T5Y4U3I2O1","content":{{"type":"text","text":{token}}}}}}}}}"#
    )
}

/// A `tool_call_update` carrying about 5 MiB of tool output (lines of text,
/// so the JSON string has escapes).
pub fn big_tool_call_update_line() -> String {
    let mut output = String::new();
    let mut i = 0u64;
    while output.len() < 5 * 1024 * 1024 {
        output.push_str(&format!(
            "drwxr-xr-x  2 user user  4096 Nov 21 23:{:02} src/module_{i}/file \"{i}\".rs\n",
            i % 60
        ));
        i += 1;
    }
    let text = serde_json::to_string(&output).unwrap();
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c","update":{{"sessionUpdate":"tool_call_update","toolCallId":"run_shell_command-1732230000000-0","status":"completed","content":[{{"type":"content","content":{{"type":"text","text":{text}}}}}]}}}}}}"#
    )
}

/// A `tool_call` as Gemini CLI sends one (a read with its location and raw
/// input), with `more` (members, each after a comma) added at the end of
/// the update.
pub fn tool_call_line(more: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"9f2c1a7e-3b4d-4e8f-a1c2-5d6e7f8a9b0c","update":{{"sessionUpdate":"tool_call","toolCallId":"read_file-1732230000000-0","status":"in_progress","title":"src/main.rs","content":[],"locations":[{{"path":"/home/user/project/src/main.rs"}}],"kind":"read","rawInput":{{"absolute_path":"/home/user/project/src/main.rs"}}{more}}}}}}}"#
    )
}

/// Decodes an `agent_message_chunk` line fully typed in two steps
/// (`Message::decode`, then `Notification::typed`); returns its text length.
pub fn decode_chunk_text(line: &str) -> usize {
    use acp_codec::acp::{Message, NotificationParams};
    let msg = Message::decode(line).unwrap();
    let Message::Notification(n) = &msg else {
        unreachable!()
    };
    let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else {
        unreachable!()
    };
    chunk_text_len(&u)
}

/// Decodes an `agent_message_chunk` line fully typed in one call
/// (`acp::decode_line`, one pass); returns its text length.
/// The measured function of the ACP goals in both bench packages.
pub fn decode_line_chunk_text(line: &str) -> usize {
    use acp_codec::acp::{decode_line, Incoming, NotificationParams, Typed};
    let Incoming::Notification(Typed {
        value: NotificationParams::SessionUpdate(u),
        ..
    }) = decode_line(line, Mode::Lenient).unwrap()
    else {
        unreachable!()
    };
    chunk_text_len(&u)
}

fn chunk_text_len(u: &acp_codec::acp::SessionNotification<'_>) -> usize {
    use acp_codec::acp::{ContentBlock, SessionUpdate};
    let SessionUpdate::AgentMessageChunk(c) = &u.update else {
        unreachable!()
    };
    let ContentBlock::Text(t) = &c.content else {
        unreachable!()
    };
    t.text.len()
}
