//! `remote::Server`, the team server's core, through the public API:
//! structured random interleavings of several users' connections (both
//! profiles), agent lines (lent and handed over), exits, time, writes and
//! clients stating their limit, checked by the `server_core` fuzz
//! target's invariants (no session's message reaches another user, owners
//! never change, each request answered once, queues within budget,
//! nothing over a client's stated limit reaches it).

use proptest::prelude::*;

use crate::checks::server_core;

/// One event as the fuzz target reads it: its byte (event and slot) and
/// its text, from templates a real exchange uses.
fn event() -> impl Strategy<Value = Vec<u8>> {
    let session = prop::sample::select(vec!["s1", "s2", "s3"]);
    let id = 0u8..6;
    let text = (0u8..11, session, id).prop_map(|(kind, s, id)| match kind {
        0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":1}}}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/","mcpServers":[]}}}}"#),
        2 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{s}","prompt":[]}}}}"#),
        3 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"session/load","params":{{"sessionId":"{s}","cwd":"/","mcpServers":[]}}}}"#),
        4 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"{s}"}}}}"#),
        5 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        6 => format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{s}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"hi"}}}}}}}}"#),
        7 => format!(r#"{{"jsonrpc":"2.0","id":"p{id}","method":"session/request_permission","params":{{"sessionId":"{s}","toolCall":{{"toolCallId":"t"}},"options":[]}}}}"#),
        8 => format!(r#"{{"jsonrpc":"2.0","id":"p{id}","result":{{"outcome":{{"outcome":"cancelled"}}}}}}"#),
        // Over a limit a client states (200 bytes and 4 a byte of its
        // text); naming no session, it goes to every client.
        9 => format!(r#"{{"jsonrpc":"2.0","method":"_x/note","params":{{"pad":"{}"}}}}"#, "x".repeat(usize::from(id) * 300)),
        _ => "x".repeat(usize::from(id) * 7),
    });
    (0u8..11, 0u8..4, text).prop_map(|(op, slot, text)| {
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// A client that stated its limit gets every message that fits under
    /// it with the stamp's room (128 bytes, the connection's stream),
    /// unchanged and in order, and for every other one a
    /// `_bridge/line_dropped` with its size; the connection stays open.
    #[test]
    fn a_clients_stated_limit_holds_for_any_sizes(
        limit in 200usize..4000,
        pads in prop::collection::vec(0usize..5000, 1..20),
    ) {
        use std::time::Duration;
        use acp_codec::remote::{Action, Principal, Server, ServerConfig, LINE_DROPPED};

        let t = Duration::ZERO;
        let mut server = Server::new(ServerConfig::new(), t);
        let Some(Action::StartAgent { run, .. }) = server.poll_action() else { panic!() };
        server.handle_agent_started(t, run, 1);
        let conn = server.open_websocket(t, &Principal::anonymous(), Some([1; 16])).map(|(c, _)| c).unwrap();
        server.handle_text(t, conn, r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#);
        while server.poll_action().is_some() {}
        server.handle_agent_line(t, run, r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#);
        while server.poll_action().is_some() {}
        server.set_client_limit(conn, limit);
        for pad in pads {
            let line = format!(r#"{{"jsonrpc":"2.0","method":"_x/note","params":{{"pad":"{}"}}}}"#, "x".repeat(pad));
            server.handle_agent_line(t, run, line.clone());
            let mut sent = Vec::new();
            while let Some(action) = server.poll_action() {
                match action {
                    Action::Send { to, text, .. } => {
                        prop_assert_eq!(to, conn);
                        server.handle_sent(t, conn, text.len());
                        sent.push(text);
                    }
                    Action::Close { .. } => prop_assert!(false, "the connection closed"),
                    _ => {}
                }
            }
            prop_assert_eq!(sent.len(), 1);
            if line.len() + 128 <= limit {
                prop_assert_eq!(&sent[0], &line);
            } else {
                let v: serde_json::Value = serde_json::from_str(&sent[0]).unwrap();
                prop_assert_eq!(&v["method"], LINE_DROPPED);
                prop_assert_eq!(v["params"]["size"].as_u64(), Some(line.len() as u64));
                prop_assert_eq!(v["params"]["limit"].as_u64(), Some(limit as u64));
            }
        }
    }
}
