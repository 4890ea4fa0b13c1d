//! The invariant behind the `translate` fuzz target, shared with
//! `tests/integration/acp_translate.rs`, which replays the committed seeds
//! and generated input.
//!
//! Input: each byte one step of a v1 client and a v2 agent talking through
//! `translate::V1ClientV2Agent` after an `initialize`: prompts,
//! cancels, the agent's acknowledgements, errors, updates of every kind and
//! state updates on one of four sessions, in any order, and lines of
//! arbitrary bytes on either side. At the end the agent acknowledges and
//! ends every prompt. Asserted: nothing panics, every line the translator
//! sends the client is JSON, and every v1 prompt got exactly one answer
//! (its stop reason or an error) with no request left pending (unless an
//! arbitrary line was itself a JSON-RPC message with an id, which may
//! answer or repeat a prompt's id).

use std::collections::{BTreeMap, VecDeque};

use acp_codec::translate::{Out, V1ClientV2Agent};
use serde_json::{json, Value};

fn update(session: &str, update: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "session/update",
           "params": {"sessionId": session, "update": update}})
    .to_string()
}

pub fn check(data: &[u8]) {
    let mut t = V1ClientV2Agent::new();
    let mut out = Vec::new();
    out.extend(t.client_line(
        r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}"#,
    ));
    out.extend(t.agent_line(
        r#"{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{}}}}"#,
    ));
    let mut next_id = 0u64;
    // Prompts sent, by id, and those the agent has still to acknowledge.
    let mut prompts: BTreeMap<u64, &str> = BTreeMap::new();
    let mut unacked: VecDeque<u64> = VecDeque::new();
    let mut ids_in_arbitrary_lines = false;
    // The arbitrary lines fed (and trimmed): what may come out unread.
    let mut fed = std::collections::BTreeSet::new();
    let sessions = ["s0", "s1", "s2", "s3"];
    let mut i = 0;
    while let Some(&b) = data.get(i) {
        i += 1;
        let s = sessions[usize::from(b >> 3) % 4];
        let tool = format!("t{}", b >> 5);
        match b % 8 {
            0 => {
                next_id += 1;
                prompts.insert(next_id, s);
                unacked.push_back(next_id);
                let line = json!({"jsonrpc": "2.0", "id": next_id, "method": "session/prompt",
                    "params": {"sessionId": s, "prompt": [{"type": "text", "text": "hi"}]}});
                out.extend(t.client_line(&line.to_string()));
            }
            1 => {
                let line = json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}});
                out.extend(t.client_line(&line.to_string()));
            }
            2 => {
                if let Some(id) = unacked.pop_front() {
                    let line = json!({"jsonrpc": "2.0", "id": id, "result": {"messageId": "m"}});
                    out.extend(t.agent_line(&line.to_string()));
                }
            }
            3 => {
                let u = match b >> 6 {
                    0 => json!({"sessionUpdate": "agent_message", "messageId": "m",
                        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
                    1 => {
                        json!({"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "cancelled"})
                    }
                    2 => json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool,
                        "content": {"type": "content", "content": {"type": "text", "text": "c"}}}),
                    _ => {
                        json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}})
                    }
                };
                out.extend(t.agent_line(&update(s, u)));
            }
            4 => {
                let reason = ["end_turn", "cancelled"][usize::from(b >> 7)];
                let u =
                    json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason});
                out.extend(t.agent_line(&update(s, u)));
            }
            5 => {
                let state = ["running", "requires_action"][usize::from(b >> 7)];
                let u = json!({"sessionUpdate": "state_update", "state": state});
                out.extend(t.agent_line(&update(s, u)));
            }
            6 => {
                // The agent refuses the oldest prompt it has not accepted.
                if let Some(id) = unacked.pop_front() {
                    let line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "no"}});
                    out.extend(t.agent_line(&line.to_string()));
                }
            }
            _ => {
                let len = usize::from(b >> 3);
                let end = data.len().min(i + len);
                let raw =
                    String::from_utf8_lossy(data.get(i..end).unwrap_or_default()).into_owned();
                i = end;
                if serde_json::from_str::<Value>(&raw).is_ok_and(|v| v.get("id").is_some()) {
                    ids_in_arbitrary_lines = true;
                }
                fed.insert(raw.trim().to_owned());
                fed.insert(raw.clone());
                if b & 0x80 == 0 {
                    out.extend(t.client_line(&raw));
                } else {
                    out.extend(t.agent_line(&raw));
                }
            }
        }
    }
    // The agent accepts and ends everything.
    for id in unacked {
        out.extend(t.agent_line(&json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string()));
    }
    for s in prompts.values() {
        let u = json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"});
        out.extend(t.agent_line(&update(s, u)));
    }
    let mut answers: BTreeMap<u64, usize> = BTreeMap::new();
    for o in &out {
        let Out::Client(line) = o else { continue };
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            // Only an arbitrary line, relayed as it came.
            assert!(
                fed.contains(line.as_str()) || fed.contains(line.trim()),
                "not JSON, and not a line fed: {line}"
            );
            continue;
        };
        if v.get("method").is_none() {
            if let Some(id) = v.get("id").and_then(Value::as_u64) {
                *answers.entry(id).or_default() += 1;
            }
        }
    }
    if ids_in_arbitrary_lines || t.is_passthrough() {
        return;
    }
    for id in prompts.keys() {
        assert_eq!(answers.get(id), Some(&1), "prompt {id}: {out:?}");
    }
    assert_eq!(t.pending(), 0, "{out:?}");
}
