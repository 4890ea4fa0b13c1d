//! `remote::Rejoin` and `remote::StreamPositions`, the client's side of
//! resumable delivery, through the public API: on WebSocket (positions in
//! the server's stamps) whatever interleaving of duplicates and replays
//! the server sends, the client gets each position once and in order, or
//! a gap; on Streamable HTTP (positions from SSE `id:`s) the same per
//! stream, and a reopened stream's `Last-Event-ID`. The oracles are plain
//! lists of what was sent.
#![cfg(feature = "remote")]

use acp_codec::remote::{
    stamp, Delivery, Position, Rejoin, RejoinError, StreamPositions, TURN_LOST,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// What the server does next on a session's stream.
#[derive(Debug, Clone)]
enum Send {
    /// The next position.
    Next,
    /// The last position sent, again.
    Again,
    /// The last `n` positions sent, again (a replay overlapping what the
    /// client has).
    Replay(u64),
    /// A message on the connection's own stream (its own positions), at
    /// most once each.
    Connection,
    /// A position `n` past the next (messages lost on the way).
    Skip(u64),
}

fn send() -> impl Strategy<Value = Send> {
    prop_oneof![
        4 => Just(Send::Next),
        1 => Just(Send::Again),
        1 => (1u64..6).prop_map(Send::Replay),
        1 => Just(Send::Connection),
        1 => (1u64..4).prop_map(Send::Skip),
    ]
}

fn update(n: u64) -> String {
    json!({"jsonrpc": "2.0", "method": "session/update",
        "params": {"sessionId": "s1", "update": {"n": n}}})
    .to_string()
}

/// The positions the server sends on the session's stream, in order, by
/// `sends` (the connection's stream interleaved, as `None`).
fn positions(sends: &[Send]) -> Vec<Option<u64>> {
    let mut out = Vec::new();
    let mut top = 0u64;
    for send in sends {
        match send {
            Send::Next => {
                top += 1;
                out.push(Some(top));
            }
            Send::Again if top > 0 => out.push(Some(top)),
            Send::Again => {}
            Send::Replay(n) => {
                for p in top.saturating_sub(*n) + 1..=top {
                    out.push(Some(p));
                }
            }
            Send::Connection => out.push(None),
            Send::Skip(n) => {
                top += n + 1;
                out.push(Some(top));
            }
        }
    }
    out
}

proptest! {
    /// Whatever interleaving of duplicates and replays, the client gets
    /// each position exactly once and in order; a position past a hole is
    /// a gap, reported when it arrives, exactly where a plain list of
    /// what was handed over says so.
    #[test]
    fn each_position_once_and_in_order_or_a_gap(sends in prop::collection::vec(send(), 0..60)) {
        let mut rejoin = Rejoin::new();
        let mut handed: Vec<u64> = Vec::new();
        let mut connection = 0u64;
        let mut connection_handed = 0u64;
        for position in positions(&sends) {
            let Some(position) = position else {
                connection += 1;
                let note = json!({"jsonrpc": "2.0", "method": "x/note", "params": {"n": connection}}).to_string();
                let got = rejoin.incoming(&stamp(&note, None, Position(connection))).unwrap();
                prop_assert_eq!(got.as_deref(), Some(note.as_str()));
                connection_handed += 1;
                continue;
            };
            let line = update(position);
            let got = rejoin.incoming(&stamp(&line, Some("s1"), Position(position)));
            // The oracle: the highest position handed over so far.
            let highest = handed.iter().copied().max();
            match highest {
                Some(h) if position <= h => prop_assert_eq!(got, Ok(None)),
                Some(h) if position > h + 1 => {
                    let is_gap = matches!(&got, Err(RejoinError::Gap { session, .. }) if session == "s1");
                    prop_assert!(is_gap, "{:?} after {}: {:?}", position, h, got);
                }
                _ => {
                    prop_assert_eq!(got, Ok(Some(line)));
                    handed.push(position);
                }
            }
        }
        // Once and in order: the handed positions climb by one.
        for pair in handed.windows(2) {
            prop_assert_eq!(pair[1], pair[0] + 1);
        }
        prop_assert_eq!(connection_handed, connection);
        let sent = positions(&sends).iter().flatten().count() as u64;
        prop_assert!(rejoin.dropped_twice() <= sent);
    }

    /// Without holes (a server that resumes exactly), every position is
    /// handed over once, and the duplicates are counted.
    #[test]
    fn without_holes_nothing_is_lost(sends in prop::collection::vec(send(), 0..60)) {
        let sends: Vec<Send> = sends.into_iter().filter(|s| !matches!(s, Send::Skip(_))).collect();
        let sent = positions(&sends);
        let top = sent.iter().flatten().copied().max().unwrap_or(0);
        let mut rejoin = Rejoin::new();
        let mut handed = Vec::new();
        let mut connection = 0u64;
        for position in &sent {
            let text = match position {
                Some(p) => stamp(&update(*p), Some("s1"), Position(*p)),
                None => {
                    connection += 1;
                    stamp(r#"{"jsonrpc":"2.0","method":"x/note"}"#, None, Position(connection))
                }
            };
            if let Some(line) = rejoin.incoming(&text).unwrap() {
                let v: Value = serde_json::from_str(&line).unwrap();
                if let Some(n) = v["params"]["update"]["n"].as_u64() {
                    handed.push(n);
                }
            }
        }
        prop_assert_eq!(handed, (1..=top).collect::<Vec<_>>());
        let twice = sent.iter().flatten().count() as u64 - top;
        prop_assert_eq!(rejoin.dropped_twice(), twice);
    }

    /// Streamable HTTP's rule, per SSE stream: an event at or before the
    /// stream's last `id:` is dropped, any later one handed over (holes
    /// are the server's to refuse, with `409`, when the stream is
    /// reopened); a reopened stream asks for what follows the highest
    /// `id:` read, `0` before the first; streams do not mix.
    #[test]
    fn sse_streams_drop_what_they_read_and_reopen_after_it(
        events in prop::collection::vec((0usize..3, 1u64..30), 0..80)
    ) {
        let names = [None, Some("s1"), Some("s2")];
        let mut streams = StreamPositions::default();
        let mut read: [Vec<u64>; 3] = Default::default();
        for (stream, id) in events {
            let got = streams.push(names[stream], Position(id), false);
            let highest = read[stream].iter().copied().max();
            if highest.is_some_and(|h| id <= h) {
                prop_assert_eq!(got, Delivery::Seen);
            } else {
                prop_assert_eq!(got, Delivery::New);
                read[stream].push(id);
            }
        }
        for (stream, name) in names.iter().enumerate() {
            let highest = read[stream].iter().copied().max().unwrap_or(0);
            prop_assert_eq!(streams.resume_from(*name), Position(highest));
        }
    }
}

/// On Streamable HTTP nothing is stamped: the lines go to the client as
/// they came, answers settle their requests, and when the server will not
/// take the connection up (`404`, or `409` for a stream) the next
/// connection loads the session, fails the running prompt with
/// [`TURN_LOST`] once the load is answered, and sends the rest again.
#[test]
fn an_http_connection_the_server_forgot_loads_its_sessions() {
    let mut rejoin = Rejoin::new();
    let init = rejoin.outgoing(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    let init: Value = serde_json::from_str(&init).unwrap();
    assert_eq!(init["params"]["_meta"]["acp-codec/resume"], json!({}));
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#;
    assert_eq!(rejoin.incoming(answer).unwrap().as_deref(), Some(answer));
    let _ = rejoin.outgoing(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
    );
    let made = r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#;
    assert_eq!(rejoin.incoming(made).unwrap().as_deref(), Some(made));
    let prompt = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;
    assert_eq!(rejoin.outgoing(prompt), prompt);
    let mode = r#"{"jsonrpc":"2.0","id":"m","method":"session/set_mode","params":{"sessionId":"s1","modeId":"ask"}}"#;
    let _ = rejoin.outgoing(mode);
    let update =
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
    assert_eq!(rejoin.incoming(update).unwrap().as_deref(), Some(update));
    // Unstamped: nothing to resume from, by itself.
    assert!(!rejoin.is_resumable());
    assert_eq!(rejoin.pending(), 2);

    rejoin.start_over();
    let first = rejoin.reconnected(None);
    let init: Value = serde_json::from_str(&first[0]).unwrap();
    assert_eq!(init["method"], "initialize");
    assert!(init["params"]["_meta"].get("acp-codec/cursor").is_none());
    let answer = json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}});
    assert_eq!(rejoin.incoming(&answer.to_string()).unwrap(), None);
    let sent: Vec<Value> = rejoin
        .poll_to_server()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0]["method"], "session/load");
    assert_eq!(sent[0]["params"]["cwd"], "/p");
    assert_eq!(sent[1], serde_json::from_str::<Value>(mode).unwrap());
    // The history the load replays is not the client's; the lost turn is,
    // once the load is answered.
    assert_eq!(rejoin.incoming(update).unwrap(), None);
    assert!(rejoin.poll_to_client().is_empty());
    let loaded = json!({"jsonrpc": "2.0", "id": sent[0]["id"], "result": {}});
    assert_eq!(rejoin.incoming(&loaded.to_string()).unwrap(), None);
    let lost: Vec<Value> = rejoin
        .poll_to_client()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0]["id"], 3);
    assert_eq!(lost[0]["error"]["message"], TURN_LOST);
    assert_eq!(rejoin.replayed(), 1);
    let answered = r#"{"jsonrpc":"2.0","id":"m","result":{}}"#;
    assert_eq!(
        rejoin.incoming(answered).unwrap().as_deref(),
        Some(answered)
    );
    assert_eq!(rejoin.pending(), 0);
}

/// Hostile or broken lines from the server are handed over as they are,
/// and leave the state usable.
#[test]
fn lines_that_are_not_messages_pass_and_leave_the_state_usable() {
    let mut rejoin = Rejoin::new();
    for text in [
        "",
        "not json",
        "[1,2]",
        r#"{"_meta":{"acp-codec/cursor":{"position":"x"}}}"#,
        r#"{"_meta":{"acp-codec/cursor":{"session":"s1","position":1}},"id":}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#,
    ] {
        let _ = rejoin.incoming(text);
    }
    assert_eq!(rejoin.outgoing("not json"), "not json");
    // The stamp of the broken line above counted: position 1 is seen.
    let line = stamp(&update(1), Some("s1"), Position(1));
    assert_eq!(rejoin.incoming(&line).unwrap(), None);
    let line = stamp(&update(2), Some("s1"), Position(2));
    assert_eq!(rejoin.incoming(&line).unwrap(), Some(update(2)));
    let line = stamp(&update(4), Some("s1"), Position(4));
    assert!(matches!(
        rejoin.incoming(&line),
        Err(RejoinError::Gap { .. })
    ));
    let line = stamp(&update(3), Some("s1"), Position(3));
    assert_eq!(rejoin.incoming(&line).unwrap(), Some(update(3)));
}
