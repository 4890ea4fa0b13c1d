//! `remote::Server`, the team server's core, through the public API:
//! structured random interleavings of several users' connections (both
//! profiles), agent lines, exits, time and writes, checked by the
//! `server_core` fuzz target's invariants (no session's message reaches
//! another user, owners never change, each request answered once, queues
//! within budget).

use proptest::prelude::*;

use crate::checks::server_core;

/// One event as the fuzz target reads it: its byte (event and slot) and
/// its text, from templates a real exchange uses.
fn event() -> impl Strategy<Value = Vec<u8>> {
    let session = prop::sample::select(vec!["s1", "s2", "s3"]);
    let id = 0u8..6;
    let text = (0u8..10, session, id).prop_map(|(kind, s, id)| match kind {
        0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":1}}}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/","mcpServers":[]}}}}"#),
        2 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{s}","prompt":[]}}}}"#),
        3 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/load","params":{{"sessionId":"{s}","cwd":"/","mcpServers":[]}}}}"#),
        4 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"{s}"}}}}"#),
        5 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        6 => format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{s}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"hi"}}}}}}}}"#),
        7 => format!(r#"{{"jsonrpc":"2.0","id":"p{id}","method":"session/request_permission","params":{{"sessionId":"{s}","toolCall":{{"toolCallId":"t"}},"options":[]}}}}"#),
        8 => format!(r#"{{"jsonrpc":"2.0","id":"p{id}","result":{{"outcome":{{"outcome":"cancelled"}}}}}}"#),
        _ => "x".repeat(usize::from(id) * 7),
    });
    (0u8..9, 0u8..4, text).prop_map(|(op, slot, text)| {
        let mut record = vec![op | (slot << 4)];
        record.extend_from_slice(text.as_bytes());
        record
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn interleavings_keep_the_servers_invariants(
        pool in 0u8..2,
        events in prop::collection::vec(event(), 0..60),
    ) {
        let mut data = vec![pool];
        for (i, e) in events.iter().enumerate() {
            if i > 0 {
                data.push(0xFF);
            }
            data.extend_from_slice(e);
        }
        server_core::check(&data);
    }
}
