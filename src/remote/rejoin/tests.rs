use alloc::string::ToString;
use alloc::vec::Vec;

use serde_json::{json, Value};

use super::*;
use crate::remote::{stamp, Position, META_CURSOR, REPLAY_CURSOR};

/// A connection initialized in `version`, holding session `s1` with
/// its stream at position 3, broken: what the reconnect sends once its
/// `initialize` is answered (`resumes`: the server took the
/// connection over).
fn after_reconnect(version: u64, resumes: bool) -> Vec<Value> {
    let mut r = Rejoin::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": version}});
    let _ = r.outgoing(&init.to_string());
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version,
        "_meta": {META_RESUME: {"connection": "c1"}}}});
    let answer = stamp(&answer.to_string(), None, Position(1));
    assert!(r.incoming(&answer).unwrap().is_some());
    let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}"#;
    let _ = r.outgoing(new);
    let made = stamp(
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
        None,
        Position(2),
    );
    assert!(r.incoming(&made).unwrap().is_some());
    for at in 1..=3 {
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
        let _ = r.incoming(&stamp(update, Some("s1"), Position(at)));
    }
    let again = r.reconnected(Some("c2".into()));
    let first: Value = serde_json::from_str(&again[0]).unwrap();
    assert_eq!(first["method"], "initialize");
    let id = first["id"].clone();
    let mut meta = json!({});
    if resumes {
        meta = json!({META_RESUME: {"connection": "c2"}});
    }
    let answer =
        json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version, "_meta": meta}});
    assert_eq!(r.incoming(&answer.to_string()).unwrap(), None);
    let mut sent: Vec<Value> = r
        .poll_to_server()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    if !resumes && r.take_restart() {
        let _ = r.reconnected(None);
        let id = json!(format!("{OWN_ID}{}", r.next_own));
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version}});
        assert_eq!(r.incoming(&answer.to_string()).unwrap(), None);
        sent = r
            .poll_to_server()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    }
    sent
}

#[test]
fn a_v1_session_resumes_with_its_cursor_in_meta_and_loads_with_session_load() {
    let sent = after_reconnect(1, true);
    assert_eq!(sent[0]["method"], "session/resume", "{sent:?}");
    assert_eq!(sent[0]["params"]["_meta"][META_CURSOR]["position"], 3);
    assert!(sent[0]["params"].get("replayFrom").is_none());
    let sent = after_reconnect(1, false);
    assert_eq!(sent[0]["method"], "session/load", "{sent:?}");
}

#[test]
fn a_v2_session_resumes_with_the_servers_cursor_in_replay_from() {
    let sent = after_reconnect(2, true);
    assert_eq!(sent[0]["method"], "session/resume", "{sent:?}");
    let from = &sent[0]["params"]["replayFrom"];
    assert_eq!(from["type"], REPLAY_CURSOR, "{sent:?}");
    assert_eq!(from["position"], 3, "{sent:?}");
    assert!(sent[0]["params"].get("_meta").is_none(), "{sent:?}");
    // Nothing to resume from: loaded from the start, v2's way.
    let sent = after_reconnect(2, false);
    assert_eq!(sent[0]["method"], "session/resume", "{sent:?}");
    assert_eq!(sent[0]["params"]["replayFrom"], json!({"type": "start"}));
}
