//! `remote::parts::Router` with users, through its public API: sessions belong to
//! users across connections, other users are refused in words that name
//! no one, permissions and per-user limits hold, and a proptest holds the
//! routing against an independent model.
#![cfg(feature = "alloc")]

use acp_codec::remote::parts::{ClientId, Out, Router};
use acp_codec::remote::{ConnectError, Permissions, FORBIDDEN, USER_LIMIT};
use serde_json::{json, Value};
use std::time::Duration;

const T: Duration = Duration::ZERO;

fn up() -> Router {
    let mut r = Router::new();
    r.agent_started(1, 0, &mut Vec::new());
    r
}

/// Agent lines and client messages of `out`, parsed, a reattach that
/// hands a client what its session missed as `{"reattached": session}`;
/// `out` is emptied.
fn split(out: &mut Vec<Out>) -> (Vec<Value>, Vec<(ClientId, Value)>) {
    let (mut agent, mut clients) = (Vec::new(), Vec::new());
    for o in out.drain(..) {
        match o {
            Out::Agent(l) => agent.push(serde_json::from_slice(&l.to_vec()).unwrap()),
            Out::Client { to, text, .. } => {
                clients.push((to, serde_json::from_str(&text).unwrap()))
            }
            Out::Reattached { to, session } => clients.push((to, json!({ "reattached": session }))),
            Out::InitializeRefused { .. } | Out::Missed { .. } | Out::Forget { .. } => {}
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
    // A session the router has never seen: refused the same way (no
    // oracle), a reattach too (the agent is shared: it may be ana's).
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
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-unknown"}}"#,
        T,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
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
    // a2 leaves: the session waits for ana (what it misses handed out),
    // and bo still may not load it.
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
    // ana comes back on a new connection: what it missed first (the
    // reattach said), then the answer.
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
    assert_eq!(back[0].1["reattached"], "s1");
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

/// `c` sends `session/load` of `sid`.
fn load(r: &mut Router, c: ClientId, id: i64, sid: &str) -> (Vec<Value>, Vec<(ClientId, Value)>) {
    request(
        r,
        c,
        id,
        "session/load",
        json!({"sessionId":sid,"cwd":"/","mcpServers":[]}),
    )
}

/// The error message of a refusal, with `sid` written as `{sid}`.
fn refusal(back: &[(ClientId, Value)], sid: &str) -> String {
    assert_eq!(back.len(), 1, "{back:?}");
    assert_eq!(back[0].1["error"]["code"], -32602, "{back:?}");
    back[0].1["error"]["message"]
        .as_str()
        .unwrap()
        .replace(sid, "{sid}")
}

/// The takeover: ana leaves more sessions than the router keeps in full;
/// bo's `session/load` (or `session/resume`) of her oldest is refused in
/// the words of every cross-user refusal and never reaches the agent, and
/// ana's own reattach works.
#[test]
fn an_evicted_session_stays_its_users() {
    let mut r = Router::new().with_user_limits(4, 2);
    r.agent_started(1, 0, &mut Vec::new());
    let bo = r.connect_as("bo", rw()).unwrap();
    let ana = r.connect_as("ana", rw()).unwrap();
    open(&mut r, ana, "held");
    let (agent, back) = load(&mut r, bo, 1, "held");
    assert!(agent.is_empty());
    let words = refusal(&back, "held");
    let mut out = Vec::new();
    r.disconnect(ana, &mut out);
    for n in 0..6 {
        let a = r.connect_as("ana", rw()).unwrap();
        open(&mut r, a, &format!("s{n}"));
        r.disconnect(a, &mut out);
    }
    // Two kept in full, the rest evicted: all still ana's.
    assert_eq!(r.user_sessions("ana"), (0, 2));
    for sid in ["held", "s0", "s1", "s4", "s5"] {
        assert_eq!(r.session_user(sid), Some("ana"), "{sid}");
    }
    for (n, method) in [(2, "session/load"), (3, "session/resume")] {
        let (agent, back) = request(
            &mut r,
            bo,
            n,
            method,
            json!({"sessionId":"s0","cwd":"/","mcpServers":[]}),
        );
        assert!(
            agent.is_empty(),
            "{method} of an evicted session reached the agent"
        );
        assert_eq!(refusal(&back, "s0"), words, "{method}");
    }
    // Nor may bo prompt it, cancel it, or get its updates.
    let (agent, _) = request(
        &mut r,
        bo,
        4,
        "session/prompt",
        json!({"sessionId":"s0","prompt":[]}),
    );
    assert!(agent.is_empty());
    out.clear();
    r.handle_client(
        bo,
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s0"}}"#,
        T,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(update_goes_to(&mut r, "s0"), []);
    // A session the router has never seen: the same words.
    let (agent, back) = load(&mut r, bo, 5, "s-never");
    assert!(agent.is_empty());
    assert_eq!(refusal(&back, "s-never"), words);
    // ana reattaches her oldest: it is hers, held again.
    let a = r.connect_as("ana", rw()).unwrap();
    let (agent, _) = load(&mut r, a, 6, "s0");
    assert_eq!(agent.len(), 1);
    assert_eq!(update_goes_to(&mut r, "s0"), [a]);
    answer(&mut r, &agent[0]["id"], json!({}));
    assert_eq!(r.owner("s0"), Some(a));
    // An agent answering bo's session/new with ana's evicted id does not
    // hand it over.
    let (agent, _) = request(
        &mut r,
        bo,
        7,
        "session/new",
        json!({"cwd":"/","mcpServers":[]}),
    );
    let back = answer(&mut r, &agent[0]["id"], json!({"sessionId":"s1"}));
    assert_eq!(back[0].1["error"]["code"], -32603, "{back:?}");
    assert_eq!(r.session_user("s1"), Some("ana"));
}

/// Ownership survives the agent exiting: after the restart no connection
/// holds a session, and only its user may reattach it.
#[test]
fn ownership_survives_an_agent_restart() {
    let mut r = up();
    let ana = r.connect_as("ana", rw()).unwrap();
    let bo = r.connect_as("bo", rw()).unwrap();
    open(&mut r, ana, "s1");
    let (_, back) = load(&mut r, bo, 1, "s1");
    let words = refusal(&back, "s1");
    let mut out = Vec::new();
    r.agent_exited("signal: 9 (SIGKILL)", Duration::from_millis(10), &mut out);
    r.agent_started(2, 1, &mut out);
    out.clear();
    assert_eq!(r.owner("s1"), None);
    assert_eq!(r.session_user("s1"), Some("ana"));
    let (agent, back) = load(&mut r, bo, 2, "s1");
    assert!(agent.is_empty(), "bo's load reached the agent");
    assert_eq!(refusal(&back, "s1"), words);
    r.handle_client(
        bo,
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#,
        T,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(update_goes_to(&mut r, "s1"), []);
    // ana reattaches it on the restarted agent (her old connection).
    let (agent, _) = load(&mut r, ana, 3, "s1");
    assert_eq!(agent.len(), 1);
    answer(&mut r, &agent[0]["id"], json!({}));
    assert_eq!(r.owner("s1"), Some(ana));
    assert_eq!(update_goes_to(&mut r, "s1"), [ana]);
    // A second restart, then a failed load: still hers.
    r.agent_exited("exit status: 1", Duration::ZERO, &mut out);
    r.agent_started(3, 2, &mut out);
    let (agent, _) = load(&mut r, ana, 4, "s1");
    r.handle_agent(
        &json!({"jsonrpc":"2.0","id":agent[0]["id"],"error":{"code":-32002,"message":"gone"}})
            .to_string(),
        T,
        &mut out,
    );
    assert_eq!(r.session_user("s1"), Some("ana"));
    let (agent, _) = load(&mut r, bo, 5, "s1");
    assert!(agent.is_empty());
}

/// A router whose agent is one user's own: that user may reattach a
/// session the router has never seen (the agent's from before), nobody
/// else may connect, and a shared agent's router refuses it.
#[test]
fn a_users_own_agent_serves_sessions_never_seen() {
    let mut r = Router::new().with_dedicated_user("ana");
    r.agent_started(1, 0, &mut Vec::new());
    assert_eq!(
        r.connect_as("bo", rw()),
        Err(ConnectError::AnotherUsersAgent)
    );
    let ana = r.connect_as("ana", rw()).unwrap();
    // Acting on it before a reattach is refused, as for any session.
    let (agent, _) = request(
        &mut r,
        ana,
        1,
        "session/prompt",
        json!({"sessionId":"old","prompt":[]}),
    );
    assert!(agent.is_empty());
    let (agent, _) = load(&mut r, ana, 2, "old");
    assert_eq!(agent.len(), 1);
    // Bound at once: the history the agent replays reaches ana.
    assert_eq!(update_goes_to(&mut r, "old"), [ana]);
    answer(&mut r, &agent[0]["id"], json!({}));
    assert_eq!(r.session_user("old"), Some("ana"));
    // The agent's list is all ana's.
    let all = json!({"sessions":[{"sessionId":"old","cwd":"/"},{"sessionId":"older","cwd":"/"}]});
    let (agent, _) = request(&mut r, ana, 3, "session/list", json!({}));
    let back = answer(&mut r, &agent[0]["id"], all.clone());
    assert_eq!(back[0].1["result"], all);
    // The anonymous user is not this agent's: no reattach of a session
    // never seen, and only their own sessions listed.
    let anon = r.connect();
    let (agent, back) = load(&mut r, anon, 4, "older");
    assert!(agent.is_empty());
    refusal(&back, "older");
    let (agent, back) = request(
        &mut r,
        anon,
        6,
        "session/prompt",
        json!({"sessionId":"older","prompt":[]}),
    );
    assert!(agent.is_empty());
    refusal(&back, "older");
    let mut out = Vec::new();
    r.handle_client(
        anon,
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"older"}}"#,
        T,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    let (agent, _) = request(&mut r, anon, 5, "session/list", json!({}));
    let back = answer(&mut r, &agent[0]["id"], all);
    assert_eq!(back[0].1["result"]["sessions"], json!([]));

    // A shared agent: a named user may not reattach a session never seen;
    // the single user of connect() may (the agent is theirs).
    let mut r = up();
    let ana = r.connect_as("ana", rw()).unwrap();
    let (agent, back) = load(&mut r, ana, 1, "old");
    assert!(agent.is_empty());
    refusal(&back, "old");
    let anon = r.connect();
    let (agent, _) = load(&mut r, anon, 2, "old");
    assert_eq!(agent.len(), 1);
}

/// An evicted session keeps a compact record: a few dozen bytes, whatever
/// the length of its id.
#[test]
fn an_evicted_session_costs_a_few_bytes() {
    let mut r = Router::new().with_user_limits(4, 1);
    r.agent_started(1, 0, &mut Vec::new());
    let cycle = |r: &mut Router, n: usize| {
        let a = r.connect_as("ana", rw()).unwrap();
        open(r, a, &format!("{n:0>200}"));
        r.disconnect(a, &mut Vec::new());
    };
    for n in 0..8 {
        cycle(&mut r, n);
    }
    const N: usize = 2000;
    let info = allocation_counter::measure(|| {
        for n in 8..8 + N {
            cycle(&mut r, n);
        }
    });
    let per = info.bytes_current / N as i64;
    assert!(per <= 40, "{per} bytes a session kept");
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// The model: session -> (user, holding connection slot).
    type Model = HashMap<String, (usize, Option<usize>)>;

    /// The most sessions a user may hold, and the most left ones kept in
    /// full: small, so sessions are evicted.
    const LIMIT: usize = 1;

    /// Sessions `user` holds, by the model.
    fn held(model: &Model, user: usize) -> usize {
        model
            .values()
            .filter(|&&(u, h)| u == user && h.is_some())
            .count()
    }

    proptest! {
        /// Three users with two connection slots each open, reattach,
        /// prompt, leave and get updates at random, the agent restarts,
        /// and each user may hold one session (older left ones are
        /// evicted): every update reaches exactly the connection the model
        /// says, a foreign user and a session never seen are always
        /// refused, the user's other connection only by reattaching, and a
        /// session stays its first user's whatever happens.
        #[test]
        fn sessions_stay_with_their_user(
            ops in prop::collection::vec((0u8..6, 0usize..6, 0usize..6), 1..80),
        ) {
            let mut r = Router::new().with_user_limits(2, LIMIT);
            r.agent_started(1, 0, &mut Vec::new());
            let users = ["ana", "bo", "cy"];
            let user_of = |slot: usize| slot / 2;
            let mut conns: Vec<ClientId> = (0..6).map(|s| r.connect_as(users[user_of(s)], rw()).unwrap()).collect();
            let mut model: Model = HashMap::new();
            let mut out = Vec::new();
            for (n, &(op, slot, s)) in ops.iter().enumerate() {
                let sid = format!("s{s}");
                let (c, user) = (conns[slot], user_of(slot));
                let known = model.get(&sid).copied();
                match op {
                    0 if known.is_none() => {
                        let (agent, back) = request(&mut r, c, n as i64, "session/new", json!({"cwd":"/","mcpServers":[]}));
                        if held(&model, user) < LIMIT {
                            prop_assert_eq!(agent.len(), 1, "{:?}", back);
                            answer(&mut r, &agent[0]["id"], json!({"sessionId": sid}));
                            model.insert(sid, (user, Some(slot)));
                        } else {
                            prop_assert!(agent.is_empty());
                            prop_assert_eq!(&back[0].1["error"]["code"], &json!(USER_LIMIT.0));
                        }
                    }
                    1 => {
                        r.disconnect(c, &mut out);
                        out.clear();
                        for v in model.values_mut() {
                            if v.1 == Some(slot) { v.1 = None; }
                        }
                        conns[slot] = r.connect_as(users[user], rw()).unwrap();
                    }
                    2 => {
                        let (agent, back) = request(&mut r, c, n as i64, "session/load", json!({"sessionId":sid,"cwd":"/","mcpServers":[]}));
                        match known {
                            // Held by no connection: one more held.
                            Some((u, None)) if u == user && held(&model, user) >= LIMIT => {
                                prop_assert!(agent.is_empty());
                                prop_assert_eq!(&back[0].1["error"]["code"], &json!(USER_LIMIT.0));
                            }
                            Some((u, _)) if u == user => {
                                prop_assert_eq!(agent.len(), 1, "{:?}", back);
                                answer(&mut r, &agent[0]["id"], json!({}));
                                model.insert(sid, (user, Some(slot)));
                            }
                            // Another user's, or never seen: the same words.
                            _ => {
                                prop_assert!(agent.is_empty());
                                prop_assert_eq!(&back[0].1["error"]["code"], &json!(-32602));
                                let text = back[0].1["error"]["message"].as_str().unwrap();
                                prop_assert!(text.contains("not available"), "{}", text);
                            }
                        }
                    }
                    3 => {
                        let (agent, back) = request(&mut r, c, n as i64, "session/prompt", json!({"sessionId":sid,"prompt":[]}));
                        let allowed = known == Some((user, Some(slot)));
                        prop_assert_eq!(agent.len(), usize::from(allowed), "{:?}", back);
                        if let Some(a) = agent.first() {
                            answer(&mut r, &a["id"], json!({"stopReason":"end_turn"}));
                        }
                    }
                    4 => {
                        r.agent_exited("exit status: 1", Duration::ZERO, &mut out);
                        r.agent_started(2, 1, &mut out);
                        out.clear();
                        for v in model.values_mut() {
                            v.1 = None;
                        }
                    }
                    _ => {
                        let got = update_goes_to(&mut r, &sid);
                        let want: Vec<ClientId> = known.and_then(|(_, h)| h).map(|h| conns[h]).into_iter().collect();
                        prop_assert_eq!(got, want);
                    }
                }
                // Ownership never lapses nor moves, evicted or not.
                for (sid, &(u, _)) in &model {
                    prop_assert_eq!(r.session_user(sid), Some(users[u]), "{}", sid);
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
