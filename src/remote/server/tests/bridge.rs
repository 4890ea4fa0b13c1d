//! A client of one protocol version bridged to an agent of the other
//! (feature `v2`), in full turns: `initialize` (the refusal taken and
//! asked again), `session/new`, a prompt with updates and a permission
//! request, a cancel, a break mid-turn and the resume from the server's
//! logs (in the client's version), and another user's requests refused.

use serde_json::{json, Value};

use super::*;

/// The users' server with its agent started, and user `ana` connected
/// over WebSocket: the harness, the agent's run, ana and her connection.
fn ana_connected() -> (Harness, AgentRun, Principal, ConnectionId) {
    let mut h = Harness::new(users_config());
    let run = started(&h.settle())[0];
    let ana_p = Principal::user("ana", Permissions::READ_WRITE);
    let ana = h.server.open(h.now, Profile::WebSocket, &ana_p).unwrap();
    (h, run, ana_p, ana)
}

/// The messages sent to `to`, parsed (a stamped one without its stamp).
fn got(acts: &[Action], to: ConnectionId) -> Vec<Value> {
    sent(acts, to)
        .iter()
        .map(|t| {
            let t = crate::remote::unstamp(t).map_or_else(|| t.clone(), |(_, _, m)| m);
            serde_json::from_str(&t).unwrap()
        })
        .collect()
}

/// The lines written to the agent, parsed.
fn wrote(acts: &[Action]) -> Vec<Value> {
    writes(acts)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The last position stamped on `session`'s stream (`None`: the
/// connection's) of what `to` was sent.
fn last_position(acts: &[Action], to: ConnectionId, session: Option<&str>) -> u64 {
    sent(acts, to)
        .iter()
        .filter_map(|t| crate::remote::unstamp(t))
        .filter(|(s, _, _)| s.as_deref() == session)
        .map(|(_, p, _)| p.0)
        .max()
        .unwrap()
}

/// Each message's update kind, or method, or `answer <id>`.
fn kinds(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .map(|m| match m["params"]["update"]["sessionUpdate"].as_str() {
            Some(kind) => kind.to_owned(),
            None => m["method"]
                .as_str()
                .map_or_else(|| format!("answer {}", m["id"]), ToOwned::to_owned),
        })
        .collect()
}

fn line(v: &Value) -> String {
    v.to_string()
}

fn agent_update(session: &str, update: Value) -> String {
    line(&json!({"jsonrpc": "2.0", "method": "session/update",
                 "params": {"sessionId": session, "update": update}}))
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// An `initialize` of `version` asking for positions, resuming connection
/// stream `named` after `position` when given.
fn init_v(id: u64, version: u16, named: Option<(&str, u64)>) -> String {
    let mut meta = json!({"acp-codec/resume": {}});
    if let Some((n, p)) = named {
        meta["acp-codec/cursor"] = json!({"connection": n, "position": p});
    }
    let params = if version == 1 {
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}},
               "clientInfo": {"name": "old", "version": "1"}, "_meta": meta})
    } else {
        json!({"protocolVersion": 2, "capabilities": {}, "info": {"name": "new", "version": "2"},
               "_meta": meta})
    };
    line(&json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}))
}

const V2_ANSWER: &str = r#"{"protocolVersion":2,"info":{"name":"agent2","version":"2"},"capabilities":{"session":{"prompt":{},"mcp":{},"list":{},"resume":{}}}}"#;
const V1_ANSWER: &str = r#"{"protocolVersion":1,"agentInfo":{"name":"agent1","version":"1"},"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{}}}}"#;

fn answer(id: &Value, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// The id of the one request written to the agent, checking its method.
fn asked(acts: &[Action], method: &str) -> Value {
    let w = wrote(acts);
    let req = w
        .iter()
        .rev()
        .find(|m| m["method"] == method)
        .unwrap_or_else(|| panic!("no {method} in {w:?}"));
    req["id"].clone()
}

/// A v1 client and a v2-only agent whose version the server learns from
/// the agent's refusal: the refusal never reaches the client, the
/// `initialize` goes again in v2 and its answer comes back in v1; then a
/// turn in v1's words (chunks, a permission request with its tool call,
/// the answer from the idle state update), a cancel, a break mid-turn
/// whose missed messages the resume replays in v1, and a second user
/// (bridged at once: the agent's version is known) kept off the first
/// user's session.
#[test]
fn a_v1_client_is_bridged_to_a_v2_agent() {
    let (mut h, run, ana_p, ana) = ana_connected();
    let acts = h.text(ana, &init_v(0, 1, None));
    let id = asked(&acts, "initialize");
    assert_eq!(wrote(&acts)[0]["params"]["protocolVersion"], 1);
    let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
        "message": "Unsupported protocol version", "data": {"requested": 1, "supported": [2]}}});
    let acts = h.agent(run, &line(&refusal));
    assert!(
        sent(&acts, ana).is_empty(),
        "the refusal is the server's: {acts:?}"
    );
    let again = &wrote(&acts)[0];
    assert_eq!(again["params"]["protocolVersion"], 2, "{again}");
    assert_eq!(again["params"]["info"]["name"], "old", "{again}");
    assert!(
        again["params"].get("clientCapabilities").is_none(),
        "{again}"
    );
    assert!(
        again["params"]["_meta"].get("acp-codec/resume").is_some(),
        "{again}"
    );
    let acts = h.agent(run, &answer(&again["id"], V2_ANSWER));
    let [answered] = &got(&acts, ana)[..] else {
        panic!("{acts:?}")
    };
    assert_eq!(answered["id"], 0);
    let result = &answered["result"];
    assert_eq!(result["protocolVersion"], 1, "{answered}");
    assert_eq!(result["agentInfo"]["name"], "agent2", "{answered}");
    assert_eq!(
        result["agentCapabilities"]["loadSession"], true,
        "{answered}"
    );
    let stream = result["_meta"]["acp-codec/resume"]["connection"]
        .as_str()
        .unwrap()
        .to_owned();

    // The connection is initialized (the refusal did not reopen it).
    let acts = h.text(ana, &new_session(1));
    let new = wrote(&acts);
    assert_eq!(new[0]["method"], "session/new", "{new:?}");
    let acts = h.agent(run, &answer(&new[0]["id"], r#"{"sessionId":"s1"}"#));
    assert_eq!(
        got(&acts, ana),
        [json!({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}})]
    );
    let connection_at = last_position(&acts, ana, None);

    // A turn.
    let acts = h.text(ana, &prompt(2, "s1"));
    let pid = asked(&acts, "session/prompt");
    let mut seen = got(&h.agent(run, &answer(&pid, r#"{"messageId":"u1"}"#)), ana);
    for u in [
        json!({"sessionUpdate": "state_update", "state": "running"}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("Hel")}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Write", "status": "pending"}),
    ] {
        seen.extend(got(&h.agent(run, &agent_update("s1", u)), ana));
    }
    let permission = json!({"jsonrpc": "2.0", "id": "p-1", "method": "session/request_permission",
        "params": {"sessionId": "s1", "title": "Write b.txt?",
                   "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t1"}},
                   "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}});
    seen.extend(got(&h.agent(run, &line(&permission)), ana));
    assert_eq!(
        kinds(&seen),
        [
            "agent_message_chunk",
            "tool_call",
            "session/request_permission"
        ]
    );
    let request = &seen[2];
    assert_eq!(
        request["params"]["toolCall"]["toolCallId"], "t1",
        "{request}"
    );
    let acts = h.text(
        ana,
        &line(&json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}})),
    );
    let reply = &wrote(&acts)[0];
    assert_eq!(reply["id"], "p-1", "{reply}");
    assert_eq!(reply["result"]["outcome"]["optionId"], "ok", "{reply}");
    let idle = json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"});
    let acts = h.agent(run, &agent_update("s1", idle));
    assert_eq!(
        got(&acts, ana),
        [json!({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})]
    );

    // A cancel.
    let acts = h.text(ana, &prompt(3, "s1"));
    let pid = asked(&acts, "session/prompt");
    h.agent(run, &answer(&pid, r#"{"messageId":"u2"}"#));
    let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#;
    let acts = h.text(ana, cancel);
    assert_eq!(wrote(&acts)[0]["method"], "session/cancel");
    let idle = json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"});
    let acts = h.agent(run, &agent_update("s1", idle));
    assert_eq!(
        got(&acts, ana),
        [json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}})]
    );
    let session_at = last_position(&acts, ana, Some("s1"));

    // A break mid-turn: what the agent sends meanwhile is translated into
    // the logs; the client comes back and resumes both streams.
    let acts = h.text(ana, &prompt(4, "s1"));
    let pid = asked(&acts, "session/prompt");
    h.agent(run, &answer(&pid, r#"{"messageId":"u3"}"#));
    h.server.handle_closed(h.now, ana, Ending::Broken);
    h.settle();
    let away = json!({"sessionUpdate": "agent_message_chunk", "messageId": "a3", "content": text("while away")});
    h.agent(run, &agent_update("s1", away));
    let idle = json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"});
    h.agent(run, &agent_update("s1", idle));
    let back = h.server.open(h.now, Profile::WebSocket, &ana_p).unwrap();
    let acts = h.text(back, &init_v(7, 1, Some((&stream, connection_at))));
    let init = wrote(&acts);
    assert_eq!(init[0]["params"]["protocolVersion"], 2, "{init:?}");
    let acts = h.agent(run, &answer(&init[0]["id"], V2_ANSWER));
    let answered = got(&acts, back);
    assert_eq!(answered[0]["result"]["protocolVersion"], 1, "{answered:?}");
    let load = json!({"jsonrpc": "2.0", "id": 8, "method": "session/load", "params": {
        "sessionId": "s1", "cwd": "/", "mcpServers": [],
        "_meta": {"acp-codec/cursor": {"position": session_at}}}});
    let acts = h.text(back, &line(&load));
    assert!(writes(&acts).is_empty(), "the server answers: {acts:?}");
    let replay = got(&acts, back);
    assert_eq!(
        kinds(&replay),
        ["agent_message_chunk", "answer 4", "answer 8"],
        "{replay:?}"
    );

    // Another user: bridged at once, and kept off ana's session.
    bo_is_kept_off_s1(&mut h, run, back, Dialect::V1, V2_ANSWER);
}

/// User bo, speaking `client` to the agent `run` of the other version
/// (`agent_answer`, its `initialize` answer): bridged at once (the agent
/// asked in its version, bo answered in bo's, the refusal never shown),
/// and kept off ana's session `s1`: `session/list` shows none of it, and a
/// prompt and a reattach on it reach neither the agent nor ana's `back`,
/// bo reading `-32602`.
fn bo_is_kept_off_s1(
    h: &mut Harness,
    run: AgentRun,
    back: ConnectionId,
    client: Dialect,
    agent_answer: &str,
) {
    let (mine, agents) = match client {
        Dialect::V1 => (1, 2),
        _ => (2, 1),
    };
    let bo = h
        .server
        .open(
            h.now,
            Profile::WebSocket,
            &Principal::user("bo", Permissions::READ_WRITE),
        )
        .unwrap();
    let acts = h.text(bo, &init_v(0, mine, None));
    assert!(sent(&acts, bo).is_empty(), "{acts:?}");
    let init = wrote(&acts);
    assert_eq!(init[0]["params"]["protocolVersion"], agents, "{init:?}");
    let acts = h.agent(run, &answer(&init[0]["id"], agent_answer));
    assert_eq!(got(&acts, bo)[0]["result"]["protocolVersion"], mine);
    let acts = h.text(
        bo,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}"#,
    );
    let lid = asked(&acts, "session/list");
    let all = r#"{"sessions":[{"sessionId":"s1","cwd":"/"}]}"#;
    let acts = h.agent(run, &answer(&lid, all));
    assert_eq!(got(&acts, bo)[0]["result"]["sessions"], json!([]));
    for request in [prompt(2, "s1"), reattach(3, "s1", client)] {
        let acts = h.text(bo, &request);
        assert!(writes(&acts).is_empty(), "{request}: {acts:?}");
        assert!(sent(&acts, back).is_empty(), "{acts:?}");
        // The refusal comes last: v1's error answer, or v2's idle update
        // ending the prompt it accepted with the error.
        let refused = got(&acts, bo);
        let last = refused.last().unwrap();
        let error = match client {
            Dialect::V1 => &last["error"],
            _ if request.contains("session/prompt") => {
                let update = &last["params"]["update"];
                assert_eq!(update["state"], "idle", "{refused:?}");
                assert_eq!(update["stopReason"], "error", "{refused:?}");
                &update["error"]
            }
            _ => &last["error"],
        };
        assert_eq!(error["code"], -32602, "{refused:?}");
    }
}

/// A v2 client and a v1 agent, the first client before the agent's
/// version is known: the agent answers the v2 `initialize` with version
/// 1, the server asks again in v1 and the client gets the answer in v2;
/// then a turn in v2's words (the prompt's acceptance, state updates, a
/// permission request with its subject), the agent's `fs/*` request
/// answered `-32601` by the translator, a cancel, a break mid-turn whose
/// missed messages the resume from the server's cursor replays in v2
/// (with the session's state before the answer), and a second user kept
/// off the first user's session.
#[test]
fn a_v2_client_is_bridged_to_a_v1_agent() {
    let (mut h, run, ana_p, ana) = ana_connected();
    let acts = h.text(ana, &init_v(0, 2, None));
    let id = asked(&acts, "initialize");
    let acts = h.agent(run, &answer(&id, V1_ANSWER));
    assert!(sent(&acts, ana).is_empty(), "{acts:?}");
    let again = &wrote(&acts)[0];
    assert_eq!(again["params"]["protocolVersion"], 1, "{again}");
    assert_eq!(again["params"]["clientInfo"]["name"], "new", "{again}");
    assert_eq!(
        again["params"]["clientCapabilities"]["fs"]["readTextFile"],
        false
    );
    let acts = h.agent(run, &answer(&again["id"], V1_ANSWER));
    let [answered] = &got(&acts, ana)[..] else {
        panic!("{acts:?}")
    };
    assert_eq!(answered["result"]["protocolVersion"], 2, "{answered}");
    assert_eq!(answered["result"]["info"]["name"], "agent1", "{answered}");
    let stream = answered["result"]["_meta"]["acp-codec/resume"]["connection"]
        .as_str()
        .unwrap()
        .to_owned();

    let acts = h.text(ana, &new_session(1));
    let new = wrote(&acts);
    assert_eq!(new[0]["method"], "session/new", "{new:?}");
    let acts = h.agent(run, &answer(&new[0]["id"], r#"{"sessionId":"s1"}"#));
    assert_eq!(got(&acts, ana)[0]["result"]["sessionId"], "s1");
    let connection_at = last_position(&acts, ana, None);

    // A turn: accepted at once, in v2's way.
    let acts = h.text(ana, &prompt(2, "s1"));
    let pid = asked(&acts, "session/prompt");
    let accepted = got(&acts, ana);
    assert_eq!(
        kinds(&accepted),
        ["answer 2", "user_message", "state_update"],
        "{accepted:?}"
    );
    assert!(accepted[0]["result"]["messageId"].is_string());
    let chunk = json!({"sessionUpdate": "agent_message_chunk", "content": text("Hel")});
    let seen = got(&h.agent(run, &agent_update("s1", chunk)), ana);
    assert_eq!(kinds(&seen), ["agent_message_chunk"]);
    assert!(seen[0]["params"]["update"]["messageId"].is_string());
    // What a v2 client cannot serve: the translator answers the agent.
    let read = json!({"jsonrpc": "2.0", "id": 40, "method": "fs/read_text_file",
        "params": {"sessionId": "s1", "path": "/etc/hostname"}});
    let acts = h.agent(run, &line(&read));
    assert!(sent(&acts, ana).is_empty(), "{acts:?}");
    let refused = wrote(&acts);
    assert_eq!(refused[0]["id"], 40, "{refused:?}");
    assert_eq!(refused[0]["error"]["code"], -32601, "{refused:?}");
    let permission = json!({"jsonrpc": "2.0", "id": 41, "method": "session/request_permission",
        "params": {"sessionId": "s1", "toolCall": {"toolCallId": "t1", "title": "Write b.txt"},
                   "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}});
    let seen = got(&h.agent(run, &line(&permission)), ana);
    assert_eq!(
        kinds(&seen),
        ["state_update", "session/request_permission"],
        "{seen:?}"
    );
    let request = &seen[1];
    assert_eq!(
        request["params"]["subject"]["type"], "tool_call",
        "{request}"
    );
    let acts = h.text(
        ana,
        &line(&json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}})),
    );
    assert_eq!(wrote(&acts)[0]["id"], 41);
    assert_eq!(
        got(&acts, ana)[0]["params"]["update"]["state"],
        "running",
        "{acts:?}"
    );
    let acts = h.agent(run, &answer(&pid, r#"{"stopReason":"end_turn"}"#));
    let done = got(&acts, ana);
    assert_eq!(done[0]["params"]["update"]["state"], "idle", "{done:?}");
    assert_eq!(done[0]["params"]["update"]["stopReason"], "end_turn");

    // A cancel.
    let acts = h.text(ana, &prompt(3, "s1"));
    let pid = asked(&acts, "session/prompt");
    let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#;
    assert_eq!(wrote(&h.text(ana, cancel))[0]["method"], "session/cancel");
    let acts = h.agent(run, &answer(&pid, r#"{"stopReason":"cancelled"}"#));
    let done = got(&acts, ana);
    assert_eq!(done[0]["params"]["update"]["stopReason"], "cancelled");
    let session_at = last_position(&acts, ana, Some("s1"));

    // A break mid-turn, and the resume from the server's cursor.
    let acts = h.text(ana, &prompt(4, "s1"));
    let pid = asked(&acts, "session/prompt");
    h.server.handle_closed(h.now, ana, Ending::Broken);
    h.settle();
    let away = json!({"sessionUpdate": "agent_message_chunk", "content": text("while away")});
    h.agent(run, &agent_update("s1", away));
    h.agent(run, &answer(&pid, r#"{"stopReason":"end_turn"}"#));
    let back = h.server.open(h.now, Profile::WebSocket, &ana_p).unwrap();
    let acts = h.text(back, &init_v(7, 2, Some((&stream, connection_at))));
    let init = wrote(&acts);
    assert_eq!(init[0]["params"]["protocolVersion"], 1, "{init:?}");
    let acts = h.agent(run, &answer(&init[0]["id"], V1_ANSWER));
    assert_eq!(got(&acts, back)[0]["result"]["protocolVersion"], 2);
    let resume = json!({"jsonrpc": "2.0", "id": 8, "method": "session/resume", "params": {
        "sessionId": "s1", "cwd": "/",
        "replayFrom": {"type": "_acp-codec/cursor", "position": session_at}}});
    let acts = h.text(back, &line(&resume));
    assert!(writes(&acts).is_empty(), "the server answers: {acts:?}");
    let replay = got(&acts, back);
    assert_eq!(
        kinds(&replay),
        [
            "answer 4",
            "user_message",
            "state_update",
            "agent_message_chunk",
            "state_update",
            "state_update",
            "answer 8"
        ],
        "{replay:?}"
    );
    assert_eq!(replay[5]["params"]["update"]["state"], "idle", "{replay:?}");

    // Another user, kept off ana's session: nothing reaches the agent
    // or ana, and bo reads the router's refusal.
    bo_is_kept_off_s1(&mut h, run, back, Dialect::V2, V1_ANSWER);
    // Ana's log of s1 holds nothing of bo's.
    h.server.handle_closed(h.now, back, Ending::Broken);
    h.settle();
    let again = h.server.open(h.now, Profile::WebSocket, &ana_p).unwrap();
    h.text(again, &init_v(9, 2, Some((&stream, connection_at))));
    let resume = json!({"jsonrpc": "2.0", "id": 10, "method": "session/resume", "params": {
        "sessionId": "s1", "cwd": "/",
        "replayFrom": {"type": "_acp-codec/cursor", "position": session_at}}});
    let acts = h.text(again, &line(&resume));
    let text = sent(&acts, again).concat();
    assert!(
        text.contains("while away") && !text.contains("-32602"),
        "{text}"
    );
}

/// An agent that refuses both versions: the second refusal reaches the
/// client, which may ask again on its connection, still bridged (here it
/// does, and the agent, v2 after all, answers; the client reads v1).
#[test]
fn an_agent_that_refuses_both_versions_leaves_the_client_its_refusal() {
    let (mut h, run, _, ana) = ana_connected();
    let acts = h.text(ana, &init_v(0, 1, None));
    let refuse = |id: &Value, supported: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32022,"message":"no","data":{{"supported":[{supported}]}}}}}}"#
        )
    };
    let acts = h.agent(run, &refuse(&asked(&acts, "initialize"), "2"));
    assert!(sent(&acts, ana).is_empty(), "{acts:?}");
    let acts = h.agent(run, &refuse(&asked(&acts, "initialize"), "3"));
    let [refused] = &got(&acts, ana)[..] else {
        panic!("{acts:?}")
    };
    assert_eq!(refused["id"], 0);
    assert_eq!(refused["error"]["code"], -32022);
    assert_eq!(refused["error"]["data"]["supported"], json!([3]));
    // Asked again: through the translator.
    let acts = h.text(ana, &init_v(1, 1, None));
    assert_eq!(wrote(&acts)[0]["params"]["protocolVersion"], 2, "{acts:?}");
    let id = asked(&acts, "initialize");
    let acts = h.agent(run, &answer(&id, V2_ANSWER));
    let answered = got(&acts, ana);
    assert_eq!(answered[0]["id"], 1, "{answered:?}");
    assert_eq!(answered[0]["result"]["protocolVersion"], 1, "{answered:?}");
    assert_eq!(answered[0]["result"]["agentInfo"]["name"], "agent2");
}
