//! The line a client's message becomes on the agent's stdin
//! (`Action::WriteAgent`), against an oracle that shares nothing with the
//! server's writer: both decoded with plain `serde_json::Value`, the
//! client's with its id replaced by the one the agent's line carries.
//! Members in any order, whitespace, escapes, newlines in strings, and
//! params long enough that the line lends them from the client's text
//! instead of copying them.

use std::time::Duration;

use acp_codec::framing::{LineText, RawItem, RawLineSplitter};
use acp_codec::remote::{
    Action, AgentLine, AgentRun, ClientText, ConnectionId, Principal, Server, ServerConfig,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A server with one agent, one WebSocket connection past `initialize`,
/// holding session `s1`.
fn server() -> (Server, AgentRun, ConnectionId) {
    let t = Duration::ZERO;
    let mut server = Server::new(ServerConfig::new(), t);
    let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
        panic!("no agent started")
    };
    server.handle_agent_started(t, run, 1);
    let (conn, _) = server
        .open_websocket(t, &Principal::anonymous(), Some([1; 16]))
        .unwrap();
    let opening = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
        ),
    ];
    for (ask, answer) in opening {
        server.handle_text(t, conn, ask);
        while server.poll_action().is_some() {}
        server.handle_agent_line(t, run, answer);
        while server.poll_action().is_some() {}
    }
    (server, run, conn)
}

/// The one line written to the agent after a message, and whatever else
/// came out.
fn agent_line(server: &mut Server) -> (Option<AgentLine>, Vec<Action>) {
    let (mut line, mut rest) = (None, Vec::new());
    while let Some(action) = server.poll_action() {
        match action {
            Action::WriteAgent { line: l, .. } if line.is_none() => line = Some(l),
            other => rest.push(other),
        }
    }
    (line, rest)
}

/// A JSON string member value: escapes, a newline (escaped on the wire),
/// non-ASCII, and sometimes long.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{0,12}",
        Just("\n".to_owned()),
        Just("\"quoted\\\" \\\\ {brace} [bracket] ,".to_owned()),
        Just("é ☃ 𝄞 \u{1}\t".to_owned()),
        Just(r#""sessionId":"s2""#.to_owned()),
    ];
    let long = prop_oneof![
        4 => Just(0usize),
        1 => 60_000usize..140_000,
    ];
    (prop::collection::vec(piece, 0..8), long).prop_map(|(pieces, long)| {
        let mut s = pieces.concat();
        // Lines of 79 letters and a newline, as a long prompt is.
        let line = format!("{}\n", "abcdefghij".repeat(8).get(..79).unwrap_or(""));
        s.push_str(&line.repeat(long / 80));
        s
    })
}

/// A request id: a number or a string with escapes.
fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(|n| json!(n)),
        (0u64..(1 << 53)).prop_map(|n| json!(n)),
        "[a-z0-9\"\\\\\u{e9}]{0,10}".prop_map(|s| json!(s)),
    ]
}

/// The request's text: its members in an order of `order`'s choosing,
/// with or without spaces around them.
fn request(id: &Value, method: &str, params: &Value, order: u8, spaced: bool) -> String {
    let sep = if spaced { " " } else { "" };
    let members = [
        format!(r#""jsonrpc"{sep}:{sep}"2.0""#),
        format!(r#""id"{sep}:{sep}{id}"#),
        format!(r#""method"{sep}:{sep}{}"#, json!(method)),
        format!(r#""params"{sep}:{sep}{params}"#),
    ];
    let mut order_of: Vec<usize> = (0..4).collect();
    order_of.rotate_left(usize::from(order % 4));
    if order & 4 != 0 {
        order_of.swap(0, 3);
    }
    let inner: Vec<&str> = order_of.iter().map(|&i| members[i].as_str()).collect();
    format!("{{{sep}{}{sep}}}", inner.join(&format!(",{sep}")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Every request reaches the agent as the client wrote it but for its
    /// id (a number of the server's, new each time), as exactly one line;
    /// params of 64 KiB and more are lent from the client's text, and the
    /// answer comes back with the client's id.
    #[test]
    fn a_request_reaches_the_agent_as_the_client_wrote_it(
        requests in prop::collection::vec(
            (id(), 0usize..3, text(), text(), 0u8..8, any::<bool>(), any::<bool>()),
            1..4,
        ),
    ) {
        let t = Duration::ZERO;
        let (mut server, run, conn) = server();
        let mut seen_ids = Vec::new();
        for (id, method, prompt, other, order, spaced, handed) in requests {
            let method = ["session/prompt", "_x/ext", "session/set_mode"][method];
            let params = json!({
                "sessionId": "s1",
                "prompt": [{"type": "text", "text": prompt}],
                "other": {"nested": [other, null, 1.5e3, true]},
            });
            let text = request(&id, method, &params, order, spaced);
            let params_len = params.to_string().len();
            if handed {
                server.handle_text(t, conn, ClientText::new(text.clone()));
            } else {
                server.handle_text(t, conn, text.as_str());
            }
            let (line, rest) = agent_line(&mut server);
            let line = line.expect("the request reaches the agent");
            prop_assert!(rest.is_empty(), "{:?}", rest);
            let bytes = line.to_vec();
            prop_assert_eq!(bytes.len(), line.len());
            prop_assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1);
            prop_assert_eq!(bytes.last(), Some(&b'\n'));
            let written: Value = serde_json::from_slice(&bytes).unwrap();
            let new_id = written["id"].as_u64().expect("the server's id is a number");
            prop_assert!(!seen_ids.contains(&new_id));
            seen_ids.push(new_id);
            let mut expected: Value = serde_json::from_str(&text).unwrap();
            expected["id"] = json!(new_id);
            prop_assert_eq!(&written, &expected);
            // Lent from the handed-over text, or from the server's copy of a lent one.
            prop_assert_eq!(line.lends(), params_len >= 64 * 1024);
            // The agent's answer goes back with the client's id.
            server.handle_agent_line(t, run, format!(r#"{{"jsonrpc":"2.0","id":{new_id},"result":{{}}}}"#));
            let mut answered = false;
            while let Some(action) = server.poll_action() {
                if let Action::Send { to, text, .. } = action {
                    prop_assert_eq!(to, conn);
                    let v: Value = serde_json::from_str(&text).unwrap();
                    prop_assert_eq!(&v["id"], &id);
                    server.handle_sent(t, conn, text.len());
                    answered = true;
                }
            }
            prop_assert!(answered);
        }
    }
}

/// A client's notification or answer long enough to lend is written
/// from the client's text as it came (the agent's request id kept).
#[test]
fn a_long_notification_is_lent_whole() {
    let t = Duration::ZERO;
    let (mut server, _run, conn) = server();
    let pad = "y\\n".repeat(40_000);
    let text = format!(
        r#"{{"jsonrpc":"2.0","method":"_x/note","params":{{"sessionId":"s1","pad":"{pad}"}}}}"#
    );
    let held = ClientText::new(text.clone());
    server.handle_text(t, conn, held.clone());
    let (line, rest) = agent_line(&mut server);
    let line = line.expect("the notification reaches the agent");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(line.lends());
    let [head, lent, tail] = line.parts();
    assert_eq!((head, tail), (&b""[..], &b"\n"[..]));
    assert_eq!(lent.as_ptr(), held.as_str().as_ptr());
    assert_eq!(line.to_vec(), format!("{text}\n").into_bytes());
}

/// A long prompt in the envelope's own form is read by the routing peek:
/// its session and `_meta` come from that one walk, and its turn's event
/// says what its params say (`_meta` after the long text, so a walk that
/// stopped early would miss it).
#[test]
fn a_long_prompts_turn_reads_its_session_and_trace_context() {
    use acp_codec::remote::Event;

    let t = Duration::ZERO;
    let (mut server, _run, conn) = server();
    while server.poll_event().is_some() {}
    let text = "z\\n".repeat(40_000);
    let prompt = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{{"sessionId":"s1","prompt":[{{"type":"text","text":"{text}"}}],"_meta":{{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}}}}"#
    );
    server.handle_text(t, conn, ClientText::new(prompt.clone()));
    let (line, _) = agent_line(&mut server);
    let line = line.expect("the prompt reaches the agent");
    assert!(line.lends());
    let mut events = Vec::new();
    while let Some(e) = server.poll_event() {
        events.push(e);
    }
    assert_eq!(
        events,
        [Event::Turn {
            conn,
            session: "s1".into(),
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            tracestate: None,
        }]
    );
}

/// An agent line holding a raw newline (here as whitespace in its params,
/// which JSON allows) never reaches a client as one message: a string of
/// the caller's own, lent or handed over, is searched and the line
/// dropped. The same bytes cut by a splitter are two lines, each routed
/// as it came (a splitter's line is not searched again).
#[test]
fn an_agent_line_holding_a_newline_never_reaches_a_client_as_one() {
    let t = Duration::ZERO;
    let (mut server, run, conn) = server();
    let sends = |server: &mut Server| {
        let mut texts = Vec::new();
        while let Some(action) = server.poll_action() {
            if let Action::Send { to, text, .. } = action {
                assert_eq!(to, conn);
                texts.push(text);
            }
        }
        texts
    };
    let head = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1""#;
    let tail = r#","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}}}"#;
    let one = format!("{head}{tail}");
    server.handle_agent_line(t, run, one.as_str());
    assert_eq!(sends(&mut server), std::slice::from_ref(&one));
    let spaced = format!("{head}\n{tail}");
    server.handle_agent_line(t, run, spaced.as_str());
    assert!(sends(&mut server).is_empty());
    server.handle_agent_line(t, run, spaced.clone());
    assert!(sends(&mut server).is_empty());
    server.handle_agent_line(t, run, LineText::from(spaced.as_str()));
    assert!(sends(&mut server).is_empty());

    let wire = format!("{one}\n{one}\r\n");
    let mut splitter = RawLineSplitter::new();
    let mut rest = wire.as_bytes();
    while let Some(item) = splitter.decode(rest) {
        rest = &rest[item.len()..];
        let RawItem::Line(line) = item else {
            panic!("a line within the limit")
        };
        server.handle_agent_line(t, run, line.text().unwrap());
    }
    assert_eq!(sends(&mut server), [one.clone(), one]);
}
