//! `remote::Router` with users, through its public API: sessions belong to
//! users across connections, other users are refused in words that name
//! no one, permissions and per-user limits hold, and a proptest holds the
//! routing against an independent model.
#![cfg(feature = "alloc")]

use acp_codec::remote::{
    ClientId, ConnectError, Out, Permissions, ReplayBuffer, Router, FORBIDDEN, USER_LIMIT,
};
use serde_json::{json, Value};
use std::time::Duration;

const T: Duration = Duration::ZERO;

fn up() -> Router {
    let mut r = Router::new().with_replay(ReplayBuffer::new(1 << 16));
    r.agent_started(1, 0, &mut Vec::new());
    r
}

/// Agent lines and client messages of `out`, parsed; `out` is emptied.
fn split(out: &mut Vec<Out>) -> (Vec<Value>, Vec<(ClientId, Value)>) {
    let (mut agent, mut clients) = (Vec::new(), Vec::new());
    for o in out.drain(..) {
        match o {
            Out::Agent(l) => agent.push(serde_json::from_slice(&l).unwrap()),
            Out::Client { to, text, .. } => {
                clients.push((to, serde_json::from_str(&text).unwrap()))
            }
        }
    }
    (agent, clients)
}

/// `c` sends a request; returns what it caused.
fn request(
    r: &mut Router,
    c: ClientId,
    id: i64,
    method: &str,
    params: Value,
) -> (Vec<Value>, Vec<(ClientId, Value)>) {
    let mut out = Vec::new();
    let msg = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
    r.handle_client(c, &msg.to_string(), T, &mut out);
    split(&mut out)
}

/// The agent answers its request `agent_id` with `result`.
fn answer(r: &mut Router, agent_id: &Value, result: Value) -> Vec<(ClientId, Value)> {
    let mut out = Vec::new();
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":agent_id,"result":result}).to_string(),
        T,
        &mut out,
    );
    split(&mut out).1
}

/// `c` opens session `sid`.
fn open(r: &mut Router, c: ClientId, sid: &str) {
    let (agent, refused) = request(r, c, 1, "session/new", json!({"cwd":"/","mcpServers":[]}));
    assert!(refused.is_empty(), "{refused:?}");
    let back = answer(r, &agent[0]["id"], json!({"sessionId": sid}));
    assert_eq!(back[0].0, c);
}

/// Where an update for `sid` goes.
fn update_goes_to(r: &mut Router, sid: &str) -> Vec<ClientId> {
    let mut out = Vec::new();
    let u = json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":sid,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}});
    r.handle_agent(&u.to_string(), T, &mut out);
    split(&mut out).1.into_iter().map(|(c, _)| c).collect()
}

fn rw() -> Permissions {
    Permissions::READ_WRITE
}

#[test]
fn another_user_may_not_touch_a_session_and_is_not_told_whose_it_is() {
    let mut r = up();
    let ana = r.connect_as("ana", rw()).unwrap();
    let bo = r.connect_as("bo", rw()).unwrap();
    open(&mut r, ana, "s1");
    for (method, params) in [
        ("session/prompt", json!({"sessionId":"s1","prompt":[]})),
        (
            "session/load",
            json!({"sessionId":"s1","cwd":"/","mcpServers":[]}),
        ),
        ("session/resume", json!({"sessionId":"s1","cwd":"/"})),
        (
            "session/set_mode",
            json!({"sessionId":"s1","modeId":"yolo"}),
        ),
        ("session/set_model", json!({"sessionId":"s1","modelId":"m"})),
        (
            "session/set_config_option",
            json!({"sessionId":"s1","configId":"c","value":"v"}),
        ),
        ("session/fork", json!({"sessionId":"s1","cwd":"/"})),
    ] {
        let (agent, back) = request(&mut r, bo, 9, method, params);
        assert!(agent.is_empty(), "{method} reached the agent");
        assert_eq!(back.len(), 1);
        let (to, err) = &back[0];
        assert_eq!(
            (*to, err["id"].clone(), err["error"]["code"].clone()),
            (bo, json!(9), json!(-32602)),
            "{method}: {err}"
        );
        let text = err["error"]["message"].as_str().unwrap();
        assert!(!text.contains("ana"), "{text}");
        assert!(text.contains("not available"), "{text}");
    }
    // A session the router does not know: refused the same way (no
    // oracle), until a reattach makes it the user's.
    let (agent, back) = request(
        &mut r,
        bo,
        10,
        "session/prompt",
        json!({"sessionId":"s-unknown","prompt":[]}),
    );
    assert!(agent.is_empty());
    assert_eq!(back[0].1["error"]["code"], -32602);
    // session/cancel, a notification: dropped, never forwarded.
    let mut out = Vec::new();
    r.handle_client(
        bo,
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#,
        T,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    // Updates and agent requests reach ana's connection only.
    assert_eq!(update_goes_to(&mut r, "s1"), [ana]);
    r.handle_agent(r#"{"jsonrpc":"2.0","id":70,"method":"session/request_permission","params":{"sessionId":"s1","options":[],"toolCall":{"toolCallId":"t"}}}"#, T, &mut out);
    let (agent, to) = split(&mut out);
    assert!(agent.is_empty());
    assert_eq!(to.iter().map(|m| m.0).collect::<Vec<_>>(), [ana]);
    // bo's answer to it is not forwarded.
    r.handle_client(
        bo,
        r#"{"jsonrpc":"2.0","id":70,"result":{"outcome":{"outcome":"cancelled"}}}"#,
        T,
        &mut out,
    );
    assert!(out.is_empty());
}

#[test]
fn a_session_follows_its_user_across_connections_and_reconnects() {
    let mut r = up();
    let a1 = r.connect_as("ana", rw()).unwrap();
    let a2 = r.connect_as("ana", rw()).unwrap();
    let bo = r.connect_as("bo", rw()).unwrap();
    open(&mut r, a1, "s1");
    // ana's other connection must reattach before prompting.
    let (agent, back) = request(
        &mut r,
        a2,
        2,
        "session/prompt",
        json!({"sessionId":"s1","prompt":[]}),
    );
    assert!(agent.is_empty());
    assert!(
        back[0].1["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another connection of this user"),
        "{back:?}"
    );
    let (agent, _) = request(
        &mut r,
        a2,
        3,
        "session/load",
        json!({"sessionId":"s1","cwd":"/","mcpServers":[]}),
    );
    assert_eq!(agent[0]["method"], "session/load");
    // Bound at once: what the agent replays during the load reaches a2.
    assert_eq!(update_goes_to(&mut r, "s1"), [a2]);
    answer(&mut r, &agent[0]["id"], json!({}));
    assert_eq!(r.owner("s1"), Some(a2));
    // a2 leaves: the session waits for ana, keeps what it misses, and bo
    // still may not load it.
    let mut out = Vec::new();
    r.disconnect(a2, &mut out);
    assert_eq!(split(&mut out).0[0]["method"], "session/cancel");
    assert_eq!(update_goes_to(&mut r, "s1"), []);
    assert_eq!(r.user_sessions("ana"), (0, 1));
    let (agent, back) = request(
        &mut r,
        bo,
        4,
        "session/load",
        json!({"sessionId":"s1","cwd":"/","mcpServers":[]}),
    );
    assert!(agent.is_empty());
    assert_eq!(back[0].1["error"]["code"], -32602);
    // ana comes back on a new connection: the update it missed first,
    // then the answer.
    let a3 = r.connect_as("ana", rw()).unwrap();
    let (agent, _) = request(
        &mut r,
        a3,
        5,
        "session/load",
        json!({"sessionId":"s1","cwd":"/","mcpServers":[]}),
    );
    let back = answer(&mut r, &agent[0]["id"], json!({}));
    assert_eq!(back.len(), 2, "{back:?}");
    assert_eq!(back[0].1["method"], "session/update");
    assert_eq!(back[1].1["id"], 5);
    assert!(back.iter().all(|(c, _)| *c == a3));
    // A failed load of ana's left session gives it back to ana.
    let mut out = Vec::new();
    r.disconnect(a3, &mut out);
    let a4 = r.connect_as("ana", rw()).unwrap();
    let (agent, _) = request(
        &mut r,
        a4,
        6,
        "session/load",
        json!({"sessionId":"s1","cwd":"/","mcpServers":[]}),
    );
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":agent[0]["id"],"error":{"code":-32002,"message":"gone"}})
            .to_string(),
        T,
        &mut out,
    );
    assert_eq!(r.owner("s1"), None);
    let (agent, back) = request(
        &mut r,
        bo,
        7,
        "session/load",
        json!({"sessionId":"s1","cwd":"/","mcpServers":[]}),
    );
    assert!(agent.is_empty(), "{back:?}");
    // A session created for a requester that left is still its user's.
    let (agent, _) = request(
        &mut r,
        a4,
        8,
        "session/new",
        json!({"cwd":"/","mcpServers":[]}),
    );
    r.disconnect(a4, &mut out);
    answer(&mut r, &agent[0]["id"], json!({"sessionId":"s2"}));
    assert_eq!(r.user_sessions("ana"), (0, 2));
    let (agent, _) = request(
        &mut r,
        bo,
        9,
        "session/load",
        json!({"sessionId":"s2","cwd":"/","mcpServers":[]}),
    );
    assert!(agent.is_empty());
}

#[test]
fn an_agent_reusing_a_session_id_cannot_hand_it_to_another_user() {
    let mut r = up();
    let ana = r.connect_as("ana", rw()).unwrap();
    let bo = r.connect_as("bo", rw()).unwrap();
    open(&mut r, ana, "s1");
    let (agent, _) = request(
        &mut r,
        bo,
        2,
        "session/new",
        json!({"cwd":"/","mcpServers":[]}),
    );
    let back = answer(&mut r, &agent[0]["id"], json!({"sessionId":"s1"}));
    assert_eq!(back[0].0, bo);
    assert_eq!(back[0].1["error"]["code"], -32603, "{back:?}");
    assert!(!back[0].1.to_string().contains("ana"));
    assert_eq!(r.session_user("s1"), Some("ana"));
    assert_eq!(update_goes_to(&mut r, "s1"), [ana]);
    // The same user's new session of that id is theirs, on the new connection.
    let a2 = r.connect_as("ana", rw()).unwrap();
    let (agent, _) = request(
        &mut r,
        a2,
        3,
        "session/new",
        json!({"cwd":"/","mcpServers":[]}),
    );
    let back = answer(&mut r, &agent[0]["id"], json!({"sessionId":"s1"}));
    assert_eq!(back[0].1["result"]["sessionId"], "s1");
    assert_eq!(r.owner("s1"), Some(a2));
}

#[test]
fn session_list_shows_a_user_their_own_sessions_only() {
    let mut r = up();
    let ana = r.connect_as("ana", rw()).unwrap();
    let bo = r.connect_as("bo", rw()).unwrap();
    let anon = r.connect();
    open(&mut r, ana, "s-ana");
    open(&mut r, bo, "s-bo");
    let all = json!({"sessions":[
        {"sessionId":"s-ana","cwd":"/a","title":"ana's secret"},
        {"sessionId":"s-bo","cwd":"/b"},
        {"sessionId":"s-old","cwd":"/c"}
    ]});
    let (agent, _) = request(&mut r, bo, 3, "session/list", json!({}));
    let back = answer(&mut r, &agent[0]["id"], all.clone());
    assert_eq!(
        back[0].1["result"]["sessions"],
        json!([{"sessionId":"s-bo","cwd":"/b"}])
    );
    assert!(!back[0].1.to_string().contains("secret"));
    // The single-user case sees what the agent lists.
    let (agent, _) = request(&mut r, anon, 4, "session/list", json!({}));
    let back = answer(&mut r, &agent[0]["id"], all.clone());
    assert_eq!(back[0].1["result"], all);
}

#[test]
fn read_only_users_watch_and_nothing_more() {
    let mut r = up();
    assert_eq!(
        r.connect_as("nobody", Permissions::NONE),
        Err(ConnectError::NotPermitted)
    );
    let cy = r.connect_as("cy", rw()).unwrap();
    open(&mut r, cy, "s1");
    r.set_permissions("cy", Permissions::READ_ONLY);
    for (method, params) in [
        ("session/prompt", json!({"sessionId":"s1","prompt":[]})),
        ("session/new", json!({"cwd":"/","mcpServers":[]})),
        (
            "session/set_mode",
            json!({"sessionId":"s1","modeId":"yolo"}),
        ),
        ("authenticate", json!({"methodId":"x"})),
        ("_ext/anything", json!({})),
    ] {
        let (agent, back) = request(&mut r, cy, 3, method, params);
        assert!(agent.is_empty(), "{method}");
        assert_eq!(back[0].1["error"]["code"], FORBIDDEN.0, "{method}");
        assert!(back[0].1["error"]["message"]
            .as_str()
            .unwrap()
            .contains("write permission"));
    }
    for method in ["initialize", "session/list"] {
        let (agent, _) = request(&mut r, cy, 4, method, json!({}));
        assert_eq!(agent.len(), 1, "{method}");
        answer(&mut r, &agent[0]["id"], json!({}));
    }
    // Watching: updates still come.
    assert_eq!(update_goes_to(&mut r, "s1"), [cy]);
    // The agent's requests are answered for it, never shown to it.
    let mut out = Vec::new();
    r.handle_agent(r#"{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{"sessionId":"s1","options":[],"toolCall":{"toolCallId":"t"}}}"#, T, &mut out);
    let (agent, to_clients) = split(&mut out);
    assert!(to_clients.is_empty());
    assert_eq!(agent[0]["result"]["outcome"]["outcome"], "cancelled");
    // session/cancel (a write) is dropped.
    r.handle_client(
        cy,
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#,
        T,
        &mut out,
    );
    assert!(out.is_empty());
    // Write given back: prompting works again.
    r.set_permissions("cy", rw());
    let (agent, _) = request(
        &mut r,
        cy,
        6,
        "session/prompt",
        json!({"sessionId":"s1","prompt":[]}),
    );
    assert_eq!(agent.len(), 1);
}

#[test]
fn per_user_limits_leave_other_users_alone() {
    let mut r = Router::new().with_user_limits(2, 1);
    r.agent_started(1, 0, &mut Vec::new());
    let a1 = r.connect_as("ana", rw()).unwrap();
    let a2 = r.connect_as("ana", rw()).unwrap();
    let err = r.connect_as("ana", rw()).unwrap_err();
    assert_eq!(err, ConnectError::TooManyConnections { limit: 2 });
    let bo = r.connect_as("bo", rw()).unwrap();
    assert_eq!(r.user_connections("ana"), 2);
    // One session open for ana: a second (even in flight) is refused.
    let (agent, _) = request(
        &mut r,
        a1,
        1,
        "session/new",
        json!({"cwd":"/","mcpServers":[]}),
    );
    let (none, back) = request(
        &mut r,
        a2,
        1,
        "session/new",
        json!({"cwd":"/","mcpServers":[]}),
    );
    assert!(none.is_empty());
    assert_eq!(back[0].1["error"]["code"], USER_LIMIT.0, "{back:?}");
    answer(&mut r, &agent[0]["id"], json!({"sessionId":"sa"}));
    let (_, back) = request(
        &mut r,
        a2,
        2,
        "session/new",
        json!({"cwd":"/","mcpServers":[]}),
    );
    assert_eq!(back[0].1["error"]["code"], USER_LIMIT.0);
    // bo is not affected.
    open(&mut r, bo, "sb");
    // A connection that leaves frees its slot; its session stays ana's.
    let mut out = Vec::new();
    r.disconnect(a1, &mut out);
    assert!(r.connect_as("ana", rw()).is_ok());
    assert_eq!(r.user_sessions("ana"), (0, 1));
    // A new session now fits; past the limit, the oldest left one goes.
    open(&mut r, a2, "sa2");
    r.disconnect(a2, &mut out);
    assert_eq!(r.user_sessions("ana"), (0, 1));
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// The model: session -> (user, holding connection slot).
    type Model = HashMap<String, (usize, Option<usize>)>;

    proptest! {
        /// Three users with two connection slots each open, reattach,
        /// prompt, leave and get updates at random: every update reaches
        /// exactly the connection the model says, a foreign user is always
        /// refused, and the user's other connection only by reattaching.
        #[test]
        fn sessions_stay_with_their_user(
            ops in prop::collection::vec((0u8..5, 0usize..6, 0usize..4), 1..80),
        ) {
            let mut r = up();
            let users = ["ana", "bo", "cy"];
            let user_of = |slot: usize| slot / 2;
            let mut conns: Vec<ClientId> = (0..6).map(|s| r.connect_as(users[user_of(s)], rw()).unwrap()).collect();
            let mut model: Model = HashMap::new();
            let mut out = Vec::new();
            for (n, &(op, slot, s)) in ops.iter().enumerate() {
                let sid = format!("s{s}");
                let c = conns[slot];
                let mine = model.get(&sid).map(|&(u, h)| (u == user_of(slot), h));
                match op {
                    0 if mine.is_none() => {
                        open(&mut r, c, &sid);
                        model.insert(sid, (user_of(slot), Some(slot)));
                    }
                    1 => {
                        r.disconnect(c, &mut out);
                        out.clear();
                        for v in model.values_mut() {
                            if v.1 == Some(slot) { v.1 = None; }
                        }
                        conns[slot] = r.connect_as(users[user_of(slot)], rw()).unwrap();
                    }
                    2 => {
                        let (agent, back) = request(&mut r, c, n as i64, "session/load", json!({"sessionId":sid,"cwd":"/","mcpServers":[]}));
                        match mine {
                            Some((false, _)) => {
                                prop_assert!(agent.is_empty());
                                prop_assert_eq!(&back[0].1["error"]["code"], &json!(-32602));
                            }
                            _ => {
                                prop_assert_eq!(agent.len(), 1);
                                answer(&mut r, &agent[0]["id"], json!({}));
                                model.insert(sid, (user_of(slot), Some(slot)));
                            }
                        }
                    }
                    3 => {
                        let (agent, back) = request(&mut r, c, n as i64, "session/prompt", json!({"sessionId":sid,"prompt":[]}));
                        let allowed = matches!(mine, Some((true, h)) if h == Some(slot));
                        prop_assert_eq!(agent.len(), usize::from(allowed), "{:?}", back);
                        if let Some(a) = agent.first() {
                            answer(&mut r, &a["id"], json!({"stopReason":"end_turn"}));
                        }
                    }
                    _ => {
                        let got = update_goes_to(&mut r, &sid);
                        let want: Vec<ClientId> = model.get(&sid).and_then(|&(_, h)| h).map(|h| conns[h]).into_iter().collect();
                        prop_assert_eq!(got, want);
                    }
                }
            }
            prop_assert_eq!(r.pending(), (0, 0));
        }
    }
}

/// A `sessionId` given twice names no session the router can check, while
/// the agent's parser would take one of them (JSON.parse keeps the last):
/// another user's session must not be reachable that way. Found by the
/// `bridge_router` campaign (seed `repeated_session_id`).
#[test]
fn a_repeated_session_id_reaches_no_session() {
    let mut r = up();
    let ana = r.connect_as("ana", rw()).unwrap();
    let bo = r.connect_as("bo", rw()).unwrap();
    open(&mut r, ana, "s1");
    for text in [
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","sessionId":"s1","prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"mine","sessionId":"s1","prompt":[]}}"#,
    ] {
        let mut out = Vec::new();
        r.handle_client(bo, text, T, &mut out);
        let (agent, answers) = split(&mut out);
        assert!(agent.is_empty(), "reached the agent: {text}");
        assert_eq!(answers[0].0, bo);
        assert_eq!(answers[0].1["error"]["code"], -32602, "{:?}", answers[0].1);
    }
    // Notifications are dropped, not forwarded.
    let mut out = Vec::new();
    r.handle_client(
        bo,
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x","sessionId":"s1"}}"#,
        T,
        &mut out,
    );
    assert!(split(&mut out).0.is_empty());
    // The owner is refused too: the message names no one session.
    let mut out = Vec::new();
    r.handle_client(
        ana,
        r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","sessionId":"s1","prompt":[]}}"#,
        T,
        &mut out,
    );
    let (agent, answers) = split(&mut out);
    assert!(agent.is_empty());
    assert_eq!(answers[0].1["error"]["code"], -32602);
}
