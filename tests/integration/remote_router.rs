//! `remote::parts::Router`, the multiplexer that lets many clients share one
//! agent, through its public API: ids rewritten per connection, sessions
//! owned, agent requests routed to the owner, cancel on leave, the agent
//! restarting, the Streamable HTTP stream of each message, what a left
//! session misses handed out and its reattach said.
#![cfg(feature = "alloc")]

use crate::checks::bridge_router::kind_in;
use acp_codec::remote::parts::{ClientId, Out, Router};
use acp_codec::remote::Stream;
use serde_json::{json, Value};
use std::time::Duration;

const T: Duration = Duration::ZERO;

fn agent_lines(out: &mut Vec<Out>) -> Vec<Value> {
    let mut v = Vec::new();
    out.retain(|o| match o {
        Out::Agent(l) => {
            let l = l.to_vec();
            assert_eq!(l.iter().filter(|&&b| b == b'\n').count(), 1);
            v.push(serde_json::from_slice(&l).unwrap());
            false
        }
        _ => true,
    });
    v
}

/// The messages for clients in `out` (what a left session missed, or
/// forgets, aside), parsed; `out` is emptied.
fn client_msgs(out: &mut Vec<Out>) -> Vec<(ClientId, Value)> {
    out.drain(..)
        .filter(|o| !matches!(o, Out::Missed { .. } | Out::Forget { .. }))
        .map(|o| match o {
            Out::Client { to, text, .. } => (to, serde_json::from_str(&text).unwrap()),
            Out::Agent(_) => panic!("agent line left"),
            other => panic!("not a message for a client: {other:?}"),
        })
        .collect()
}

fn up() -> Router {
    let mut r = Router::new();
    r.agent_started(1, 0, &mut Vec::new());
    r
}

/// Client `c` opens a session `sid`; returns nothing left in `out`.
fn open(r: &mut Router, c: ClientId, id: i64, sid: &str) {
    let mut out = Vec::new();
    r.handle_client(c, &json!({"jsonrpc":"2.0","id":id,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}).to_string(), T, &mut out);
    let sent = agent_lines(&mut out);
    let ours = sent[0]["id"].clone();
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":ours,"result":{"sessionId":sid}}).to_string(),
        T,
        &mut out,
    );
    let back = client_msgs(&mut out);
    assert_eq!(
        back,
        vec![(
            c,
            json!({"jsonrpc":"2.0","id":id,"result":{"sessionId":sid}})
        )]
    );
}

#[test]
fn ids_rewritten_and_routed_back() {
    let mut r = up();
    let (a, b) = (r.connect(), r.connect());
    let mut out = Vec::new();
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        T,
        &mut out,
    );
    r.handle_client(
        b,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        T,
        &mut out,
    );
    let sent = agent_lines(&mut out);
    assert_ne!(
        sent[0]["id"], sent[1]["id"],
        "same client id must not collide at the agent"
    );
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":sent[1]["id"],"result":{"protocolVersion":1}}).to_string(),
        T,
        &mut out,
    );
    assert_eq!(
        client_msgs(&mut out),
        vec![(
            b,
            json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}})
        )]
    );
    // A duplicate or unknown response goes nowhere.
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":sent[1]["id"],"result":{}}).to_string(),
        T,
        &mut out,
    );
    r.handle_agent(r#"{"jsonrpc":"2.0","id":"zz","result":{}}"#, T, &mut out);
    assert!(out.is_empty());
}

#[test]
fn sessions_updates_and_agent_requests_go_to_their_owner() {
    let mut r = up();
    let (a, b) = (r.connect(), r.connect());
    open(&mut r, a, 1, "sa");
    open(&mut r, b, 1, "sb");
    let mut out = Vec::new();
    let upd = |s: &str| {
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":s,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}).to_string()
    };
    r.handle_agent(&upd("sb"), T, &mut out);
    r.handle_agent(&upd("nobody"), T, &mut out);
    assert_eq!(
        client_msgs(&mut out)
            .iter()
            .map(|m| m.0)
            .collect::<Vec<_>>(),
        vec![b]
    );
    // Agent request to a's session; b may not answer it, a may.
    let perm = r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"sa","options":[],"toolCall":{"toolCallId":"t"}}}"#;
    r.handle_agent(perm, T, &mut out);
    assert_eq!(client_msgs(&mut out)[0].0, a);
    let answer =
        r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"x"}}}"#;
    r.handle_client(b, answer, T, &mut out);
    assert!(
        out.is_empty(),
        "a reply from the wrong client is not forwarded"
    );
    r.handle_client(a, answer, T, &mut out);
    assert_eq!(
        agent_lines(&mut out)[0]["result"]["outcome"]["optionId"],
        "x"
    );
    // b cannot prompt a's session.
    r.handle_client(b, r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"sa","prompt":[]}}"#, T, &mut out);
    let refused = client_msgs(&mut out);
    assert_eq!(
        (refused[0].0, refused[0].1["error"]["code"].clone()),
        (b, json!(-32602))
    );
    // Notifications without a session go to everyone.
    r.handle_agent(
        r#"{"jsonrpc":"2.0","method":"_x/hello","params":{}}"#,
        T,
        &mut out,
    );
    assert_eq!(client_msgs(&mut out).len(), 2);
}

#[test]
fn leaving_client_cancels_and_answers_for_itself() {
    let mut r = up();
    let (a, b) = (r.connect(), r.connect());
    open(&mut r, a, 1, "sa");
    open(&mut r, b, 1, "sb");
    let mut out = Vec::new();
    r.handle_client(a, r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"sa","prompt":[]}}"#, T, &mut out);
    let prompt_id = agent_lines(&mut out)[0]["id"].clone();
    r.handle_agent(r#"{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"sa","options":[],"toolCall":{"toolCallId":"t"}}}"#, T, &mut out);
    r.handle_agent(r#"{"jsonrpc":"2.0","id":"r1","method":"fs/read_text_file","params":{"sessionId":"sa","path":"/x"}}"#, T, &mut out);
    out.clear();
    r.disconnect(a, &mut out);
    let lines = agent_lines(&mut out);
    assert!(out.is_empty(), "b hears nothing of it");
    assert!(lines
        .contains(&json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sa"}})));
    assert!(lines.contains(
        &json!({"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"cancelled"}}})
    ));
    assert!(lines
        .iter()
        .any(|l| l["id"] == "r1" && l["error"]["code"] == -32603));
    // The late prompt response and later updates of its session are dropped.
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":prompt_id,"result":{"stopReason":"cancelled"}}).to_string(),
        T,
        &mut out,
    );
    assert!(out.is_empty());
    assert_eq!(r.sessions(), 1);
    assert_eq!(r.pending(), (0, 0));
}

#[test]
fn agent_exit_fails_pending_and_tells_everyone() {
    let mut r = up();
    let (a, b) = (r.connect(), r.connect());
    open(&mut r, a, 1, "sa");
    let mut out = Vec::new();
    r.handle_client(a, r#"{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"sa","prompt":[]}}"#, T, &mut out);
    out.clear();
    r.agent_exited("signal: 9 (SIGKILL)", Duration::from_millis(100), &mut out);
    let msgs = client_msgs(&mut out);
    assert_eq!(msgs[0].0, a);
    assert_eq!(
        (msgs[0].1["id"].clone(), msgs[0].1["error"]["code"].clone()),
        (json!("p"), json!(-32603))
    );
    assert_eq!(msgs[1].1["params"]["lostSessions"], json!(["sa"]));
    assert_eq!(
        (msgs[2].0, msgs[2].1["params"]["lostSessions"].clone()),
        (b, json!([]))
    );
    // While down, requests are refused rather than lost.
    r.handle_client(
        b,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        T,
        &mut out,
    );
    assert_eq!(client_msgs(&mut out)[0].1["error"]["code"], -32603);
    r.agent_started(2, 1, &mut out);
    assert_eq!(client_msgs(&mut out).len(), 2);
    assert_eq!(r.sessions(), 0);
}

#[test]
fn client_cancel_request_id_rewritten() {
    let mut r = up();
    let a = r.connect();
    let mut out = Vec::new();
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","id":"mine","method":"session/list","params":{}}"#,
        T,
        &mut out,
    );
    let ours = agent_lines(&mut out)[0]["id"].clone();
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"mine"}}"#,
        T,
        &mut out,
    );
    assert_eq!(agent_lines(&mut out)[0]["params"]["requestId"], ours);
}

// ---------------------------------------------------------------- streams

/// Every message for a client, with its stream (what a left session
/// missed, or forgets, aside).
fn client_outs(out: &mut Vec<Out>) -> Vec<(ClientId, Stream, Value)> {
    out.drain(..)
        .filter(|o| !matches!(o, Out::Missed { .. } | Out::Forget { .. }))
        .map(|o| match o {
            Out::Client {
                to,
                stream,
                text,
                kind,
            } => {
                assert!(!text.contains('\n'));
                let value: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(kind_in(&value), kind, "{text}");
                (to, stream, value)
            }
            Out::Agent(_) => panic!("agent line left"),
            other => panic!("not a message for a client: {other:?}"),
        })
        .collect()
}

fn session(s: &str) -> Stream {
    Stream::Session(s.to_owned())
}

/// Sends a client request and answers it with `result`; returns what the
/// client got.
fn round_trip(
    r: &mut Router,
    c: ClientId,
    request: Value,
    result: Value,
) -> Vec<(ClientId, Stream, Value)> {
    let mut out = Vec::new();
    r.handle_client(c, &request.to_string(), T, &mut out);
    let sent = agent_lines(&mut out);
    assert_eq!(sent.len(), 1, "{out:?}");
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":sent[0]["id"],"result":result}).to_string(),
        T,
        &mut out,
    );
    client_outs(&mut out)
}

#[test]
fn each_message_names_its_streamable_http_stream() {
    let mut r = up();
    let (a, b) = (r.connect(), r.connect());
    // session/new has no session yet: answered on the connection stream.
    let got = round_trip(
        &mut r,
        a,
        json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}),
        json!({"sessionId":"sa"}),
    );
    assert_eq!(got[0].1, Stream::Connection);
    // A session's request is answered on its stream.
    let got = round_trip(
        &mut r,
        a,
        json!({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sa","prompt":[]}}),
        json!({"stopReason":"end_turn"}),
    );
    assert_eq!(
        got,
        vec![(
            a,
            session("sa"),
            json!({"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}})
        )]
    );
    // session/load and session/resume are answered on the session's
    // stream (a load's answer behind the history the agent replays there).
    let got = round_trip(
        &mut r,
        b,
        json!({"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"sl","cwd":"/","mcpServers":[]}}),
        json!({}),
    );
    assert_eq!((got[0].0, &got[0].1), (b, &session("sl")));
    let got = round_trip(
        &mut r,
        b,
        json!({"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"sr","cwd":"/"}}),
        json!({}),
    );
    assert_eq!((got[0].0, &got[0].1), (b, &session("sr")));
    // Agent requests and updates go on the session's stream, notifications
    // without a session on every connection stream.
    let mut out = Vec::new();
    r.handle_agent(r#"{"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":{"sessionId":"sa","options":[],"toolCall":{"toolCallId":"t"}}}"#, T, &mut out);
    r.handle_agent(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sl","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}"#, T, &mut out);
    r.handle_agent(
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p"}}"#,
        T,
        &mut out,
    );
    r.handle_agent(r#"{"jsonrpc":"2.0","method":"_x/tick"}"#, T, &mut out);
    let got: Vec<(ClientId, Stream)> = client_outs(&mut out)
        .into_iter()
        .map(|(c, s, _)| (c, s))
        .collect();
    assert_eq!(
        got,
        vec![
            (a, session("sa")),
            (b, session("sl")),
            (a, session("sa")),
            (a, Stream::Connection),
            (b, Stream::Connection),
        ]
    );
    // A refusal goes on the connection stream.
    r.handle_client(b, r#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"sa","prompt":[]}}"#, T, &mut out);
    let got = client_outs(&mut out);
    assert_eq!(
        (got[0].0, &got[0].1, &got[0].2["error"]["code"]),
        (b, &Stream::Connection, &json!(-32602))
    );
}

#[test]
fn pending_limit_and_drop_count() {
    let mut r = Router::new().with_max_pending(1);
    r.agent_started(1, 0, &mut Vec::new());
    let a = r.connect();
    let mut out = Vec::new();
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}"#,
        T,
        &mut out,
    );
    assert_eq!(agent_lines(&mut out).len(), 1);
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}"#,
        T,
        &mut out,
    );
    let refused = client_outs(&mut out);
    assert_eq!(
        (
            refused[0].2["id"].clone(),
            refused[0].2["error"]["code"].clone()
        ),
        (json!(2), json!(-32603))
    );
    assert_eq!(r.dropped(), 0);
    r.handle_agent("Loaded cached credentials.", T, &mut out);
    r.handle_agent(r#"{"jsonrpc":"2.0","id":77,"result":{}}"#, T, &mut out);
    assert!(out.is_empty());
    assert_eq!(r.dropped(), 2);
    // A client message with a raw newline never reaches the agent.
    r.handle_client(
        a,
        "{\"jsonrpc\":\"2.0\",\n\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}",
        T,
        &mut out,
    );
    let refused = client_outs(&mut out);
    assert_eq!(refused[0].2["error"]["code"], -32600);
}

// ---------------------------------------------------------------- replay

fn update(s: &str, text: &str) -> String {
    json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":s,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":text}}}}).to_string()
}

/// While nobody holds a session, the agent's lines for it are handed out
/// as missed, each the agent's very line; a reattach says so just before
/// its answer, once; the agent reusing the id, or exiting, forgets it.
#[test]
fn a_left_sessions_lines_are_handed_out_and_its_reattach_said() {
    let mut r = up();
    let a = r.connect();
    open(&mut r, a, 1, "sa");
    let mut out = Vec::new();
    r.handle_client(a, r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sa","prompt":[]}}"#, T, &mut out);
    let prompt_id = agent_lines(&mut out)[0]["id"].clone();
    r.disconnect(a, &mut out);
    assert_eq!(agent_lines(&mut out)[0]["method"], "session/cancel");
    let lines = [update("sa", "one"), update("sa", "two")];
    for line in &lines {
        r.handle_agent(line, T, &mut out);
    }
    // The answer to the prompt of the client that left goes nowhere.
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":prompt_id,"result":{"stopReason":"cancelled"}}).to_string(),
        T,
        &mut out,
    );
    let missed = |text: &String| Out::Missed {
        session: "sa".into(),
        text: text.clone(),
    };
    assert_eq!(out, lines.iter().map(missed).collect::<Vec<_>>());
    out.clear();
    // A new connection resumes it: said first, then the answer.
    let b = r.connect();
    r.handle_client(b, r#"{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"sa","cwd":"/"}}"#, T, &mut out);
    let ours = agent_lines(&mut out)[0]["id"].clone();
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":ours,"result":{}}).to_string(),
        T,
        &mut out,
    );
    let said = Out::Reattached {
        to: b,
        session: "sa".into(),
    };
    assert_eq!(out.first(), Some(&said));
    out.remove(0);
    let got = client_outs(&mut out);
    assert_eq!(
        got,
        [(
            b,
            session("sa"),
            json!({"jsonrpc":"2.0","id":1,"result":{}})
        )]
    );
    assert_eq!(r.owner("sa"), Some(b));
    // Said once: the next update is live, nothing handed out.
    r.handle_agent(&update("sa", "three"), T, &mut out);
    assert_eq!(client_outs(&mut out).len(), 1);
    // Left again: the agent's new session of the same id is not it.
    r.disconnect(b, &mut out);
    out.clear();
    r.handle_agent(&update("sa", "four"), T, &mut out);
    assert_eq!(out, [missed(&update("sa", "four"))]);
    out.clear();
    let c = r.connect();
    r.handle_client(c, &json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}).to_string(), T, &mut out);
    let ours = agent_lines(&mut out)[0]["id"].clone();
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":ours,"result":{"sessionId":"sa"}}).to_string(),
        T,
        &mut out,
    );
    let forget = Out::Forget {
        session: "sa".into(),
    };
    assert_eq!(out.first(), Some(&forget));
    out.clear();
    // Left again, then the agent exits: forgotten, and the restarted
    // agent's lines for it go nowhere.
    r.disconnect(c, &mut out);
    out.clear();
    r.agent_exited("exit status: 1", Duration::from_millis(10), &mut out);
    assert!(out.contains(&forget), "{out:?}");
    r.agent_started(2, 1, &mut out);
    out.clear();
    r.handle_agent(&update("sa", "five"), T, &mut out);
    assert!(out.is_empty(), "{out:?}");
}

// ---------------------------------------------------------------- properties

/// Requests of several clients with colliding ids, answered by the agent in
/// any order: each client gets exactly the answers to its own requests, with
/// its own ids (the oracle: the list of what each client sent).
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn answers_reach_their_requester_with_its_id(
            sends in prop::collection::vec((0usize..3, 0i64..4), 1..40),
            keys in prop::collection::vec(any::<u32>(), 40),
        ) {
            let mut r = up();
            let clients: Vec<ClientId> = (0..3).map(|_| r.connect()).collect();
            let mut out = Vec::new();
            let mut agent_ids = Vec::new();
            for (tag, &(c, id)) in sends.iter().enumerate() {
                let req = json!({"jsonrpc":"2.0","id":id,"method":"session/list","params":{"tag":tag}});
                r.handle_client(clients[c], &req.to_string(), T, &mut out);
                let sent = agent_lines(&mut out);
                prop_assert_eq!(sent.len(), 1);
                prop_assert_eq!(&sent[0]["params"]["tag"], &json!(tag));
                agent_ids.push((sent[0]["id"].clone(), tag));
            }
            // Every agent-side id is distinct.
            let mut ids: Vec<String> = agent_ids.iter().map(|(i, _)| i.to_string()).collect();
            ids.sort();
            ids.dedup();
            prop_assert_eq!(ids.len(), sends.len());
            // Any answer order: sorted by random keys.
            agent_ids.sort_by_key(|(_, tag)| keys[*tag]);
            let mut got = Vec::new();
            for (id, tag) in &agent_ids {
                r.handle_agent(&json!({"jsonrpc":"2.0","id":id,"result":{"tag":tag}}).to_string(), T, &mut out);
                for (to, _, msg) in client_outs(&mut out) {
                    got.push((to, msg["id"].as_i64().unwrap(), msg["result"]["tag"].as_u64().unwrap() as usize));
                }
            }
            let mut want: Vec<(ClientId, i64, usize)> =
                sends.iter().enumerate().map(|(tag, &(c, id))| (clients[c], id, tag)).collect();
            want.sort();
            got.sort();
            prop_assert_eq!(got, want);
            prop_assert_eq!(r.pending(), (0, 0));
        }

        /// Sessions opened, left and updated at random: every update goes
        /// to exactly the owner an independent map says, or nowhere.
        #[test]
        fn updates_reach_exactly_the_owner(
            ops in prop::collection::vec((0u8..3, 0usize..3, 0usize..4), 1..60),
        ) {
            let mut r = up();
            let mut clients: Vec<ClientId> = (0..3).map(|_| r.connect()).collect();
            let mut owners: std::collections::HashMap<String, ClientId> = Default::default();
            let mut out = Vec::new();
            for (n, &(op, c, s)) in ops.iter().enumerate() {
                let sid = format!("s{s}");
                match op {
                    0 if !owners.contains_key(&sid) => {
                        open(&mut r, clients[c], n as i64, &sid);
                        owners.insert(sid, clients[c]);
                    }
                    1 => {
                        r.disconnect(clients[c], &mut out);
                        out.clear();
                        let gone = clients[c];
                        owners.retain(|_, o| *o != gone);
                        clients[c] = r.connect();
                    }
                    _ => {
                        r.handle_agent(&update(&sid, "u"), T, &mut out);
                        let got: Vec<ClientId> = client_outs(&mut out).into_iter().map(|m| m.0).collect();
                        let want: Vec<ClientId> = owners.get(&sid).copied().into_iter().collect();
                        prop_assert_eq!(got, want);
                    }
                }
            }
            prop_assert_eq!(r.sessions(), owners.len());
        }
    }
}

#[test]
fn request_session_names_where_an_agent_request_went() {
    use acp_codec::acp::RequestId;
    use acp_codec::remote::{check_response_session, RemoteError};
    let mut r = up();
    let (a, b) = (r.connect(), r.connect());
    open(&mut r, a, 1, "sa");
    let mut out = Vec::new();
    r.handle_agent(r#"{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":{"sessionId":"sa","path":"/x"}}"#, T, &mut out);
    let id = RequestId::Number(4);
    assert_eq!(r.request_session(a, &id), Some("sa"));
    assert_eq!(r.request_session(b, &id), None);
    assert_eq!(
        check_response_session(r.request_session(a, &id), Some("sb")),
        Err(RemoteError::MismatchedSessionId)
    );
    r.handle_client(
        a,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":""}}"#,
        T,
        &mut out,
    );
    assert_eq!(r.request_session(a, &id), None);
}
