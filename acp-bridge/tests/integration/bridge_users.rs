//! The `acp-bridge` example with a token file: users told apart by their
//! tokens, sessions isolated per user over real sockets, the file re-read
//! on SIGHUP, and per-user limits hit by one user while the others finish
//! full turns (three users, 50 connections).
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use crate::bridge::{http_request, next_event, open_sse_as};
use crate::ws_harness;
use ws_harness::*;

const ANA: &str = "ana-0123456789abcdef-token";
const BO: &str = "bo-0123456789abcdef-token";
const CY: &str = "cy-0123456789abcdef-token";
const HOG: &str = "hog-0123456789abcdef-token";

fn token_file(dir: &Path, users: &[(&str, &str, &[&str])]) -> String {
    let mut tokens = serde_json::Map::new();
    for (token, user, perms) in users {
        tokens.insert(
            (*token).to_owned(),
            json!({"userId": user, "permissions": perms}),
        );
    }
    let path = dir.join("tokens.json");
    std::fs::write(&path, json!({ "tokens": tokens }).to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

async fn user(bridge: &Bridge, token: &str) -> Client {
    connect_with(&bridge.url(), Some(token), None)
        .await
        .expect("connect")
}

fn log(bridge: &Bridge) -> String {
    bridge.stderr.lock().unwrap().clone()
}

/// Waits until the bridge's stderr holds `text`.
fn wait_log(bridge: &Bridge, text: &str) {
    let deadline = Instant::now() + STEP;
    while !log(bridge).contains(text) {
        assert!(
            Instant::now() < deadline,
            "no {text:?} in:\n{}",
            log(bridge)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One HTTP/1.1 request to `/acp` with `token`: the status and the head
/// (lowercase).
fn http(
    addr: std::net::SocketAddr,
    method: &str,
    token: &str,
    connection: Option<&str>,
    body: &str,
) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(STEP)).unwrap();
    let conn = connection.map_or(String::new(), |c| format!("Acp-Connection-Id: {c}\r\n"));
    write!(
        s,
        "{method} /acp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n{conn}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let head = out
        .split("\r\n\r\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head)
}

/// The `Acp-Connection-Id` of a response head (lowercase).
fn connection_id(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("acp-connection-id: "))
        .unwrap_or_else(|| panic!("no acp-connection-id in {head}"))
        .trim()
        .to_owned()
}

/// A bridge with a token file of ana and bo (who may write) and cy (who
/// may only read), and `extra` arguments.
fn team(name: &str, extra: &[&str]) -> Bridge {
    let dir = scratch_dir(name);
    let file = token_file(
        &dir,
        &[
            (ANA, "ana", &["read", "write"]),
            (BO, "bo", &["read", "write"]),
            (CY, "cy", &["read"]),
        ],
    );
    let mut args = vec!["--token-file", file.as_str()];
    args.extend(extra);
    Bridge::start_in(dir, &args, &[])
}

fn error_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

/// A client of `user` speaking ACP version `protocol`.
async fn user_speaking(bridge: &Bridge, token: &str, protocol: u16) -> Client {
    let mut c = user(bridge, token).await;
    c.protocol = protocol;
    c
}

/// Ana's session, over ACP version `protocol`: bo naming it is refused
/// whatever he asks, in words that name no user, his `session/list` shows
/// none of hers, his cancel never reaches the agent (her turn ends
/// whole); cy, who may only read, may not open a session. Bo and cy,
/// initialized.
async fn isolated(bridge: &Bridge, protocol: u16) -> (Client, Client) {
    let mut ana = user_speaking(bridge, ANA, protocol).await;
    let session = ana.open_session(&bridge.dir).await;
    let mut bo = user_speaking(bridge, BO, protocol).await;
    bo.init().await;
    let named = json!({"sessionId": session, "cwd": "/", "mcpServers": []});
    let mut asks = vec![
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": []}),
        ),
        ("session/close", json!({"sessionId": session})),
        ("session/delete", json!({"sessionId": session})),
    ];
    asks.extend(match protocol {
        1 => [
            ("session/load", named),
            (
                "session/set_mode",
                json!({"sessionId": session, "modeId": "yolo"}),
            ),
        ],
        _ => [
            (
                "session/resume",
                json!({"sessionId": session, "cwd": "/", "replayFrom": {"type": "start"}}),
            ),
            (
                "session/set_config_option",
                json!({"sessionId": session, "configId": "mode", "type": "id", "value": "yolo"}),
            ),
        ],
    });
    for (method, params) in asks {
        let r = bo.request(method, params).await;
        // A reattach of a session bo's router never saw goes to bo's own
        // agent, which has no such session: v1's mock says -32602, v2's
        // -32002 (not found).
        let code = if method == "session/resume" {
            -32002
        } else {
            -32602
        };
        assert_eq!(error_code(&r), code, "{method}: {r}");
        assert!(!r.to_string().contains("ana"), "{r}");
    }
    let list = bo.request("session/list", json!({})).await;
    assert!(!list.to_string().contains(&session), "{list}");
    // bo's cancel of ana's session never reaches the agent: ana's turn ends
    // normally.
    bo.send(&json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId": session}}))
        .await;
    let t = ana.turn(&session, "list the files").await;
    assert_eq!(t.stop_reason, "end_turn");
    assert!(t.permission_requests >= 1);
    assert!(bo.seen.is_empty(), "bo saw ana's messages: {:?}", bo.seen);
    // cy may only read.
    let mut cy = user_speaking(bridge, CY, protocol).await;
    cy.init().await;
    let r = cy
        .request("session/new", json!({"cwd": "/", "mcpServers": []}))
        .await;
    assert_eq!(error_code(&r), -32010, "{r}");
    (bo, cy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_isolated_tagged_and_reloaded_on_sighup() {
    let bridge = team("users", &[]);
    let dir = bridge.dir.clone();
    let url = bridge.url();
    assert_eq!(
        refused_status(
            connect_with(&url, Some("nope-0123456789abcdef"), None)
                .await
                .err()
                .unwrap()
        ),
        401
    );
    assert_eq!(
        refused_status(connect_with(&url, None, None).await.err().unwrap()),
        401
    );

    let (mut bo, mut cy) = isolated(&bridge, 1).await;
    // A Streamable HTTP connection answers only its own user's token.
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let (status, head) = http(bridge.addr, "POST", ANA, None, init);
    assert_eq!(status, 200, "{head}");
    let id = connection_id(&head);
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}"#;
    assert_eq!(http(bridge.addr, "POST", CY, Some(&id), list).0, 404);
    assert_eq!(http(bridge.addr, "DELETE", CY, Some(&id), "").0, 404);
    assert_eq!(http(bridge.addr, "POST", ANA, Some(&id), list).0, 202);
    // Log lines name the user, on both profiles.
    wait_log(&bridge, "user ana: websocket connected");
    wait_log(&bridge, "user bo: websocket connected");
    wait_log(&bridge, &format!("http connection {id} (user ana) opened"));
    assert_eq!(http(bridge.addr, "DELETE", ANA, Some(&id), "").0, 202);
    wait_log(
        &bridge,
        &format!("http connection {id} (user ana) closed: deleted"),
    );

    // SIGHUP: cy may write now, bo is gone (his open connection stays, read-only).
    token_file(
        &dir,
        &[
            (ANA, "ana", &["read", "write"]),
            (CY, "cy", &["read", "write"]),
        ],
    );
    let hup = Command::new("sh")
        .args(["-c", &format!("kill -HUP {}", bridge.pid())])
        .status()
        .unwrap();
    assert!(hup.success());
    wait_log(
        &bridge,
        "token file re-read: 2 tokens; users removed (read-only until they leave): bo",
    );
    let r = cy
        .request(
            "session/new",
            json!({"cwd": bridge.dir.to_str().unwrap(), "mcpServers": []}),
        )
        .await;
    let cy_session = r["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned();
    assert_eq!(cy.turn(&cy_session, "hello").await.stop_reason, "end_turn");
    let r = bo
        .request("session/new", json!({"cwd": "/", "mcpServers": []}))
        .await;
    assert_eq!(error_code(&r), -32010, "{r}");
    assert_eq!(
        refused_status(connect_with(&url, Some(BO), None).await.err().unwrap()),
        401
    );
    // A file that does not parse keeps the users.
    std::fs::write(dir.join("tokens.json"), "{").unwrap();
    Command::new("sh")
        .args(["-c", &format!("kill -HUP {}", bridge.pid())])
        .status()
        .unwrap();
    wait_log(&bridge, "keeping the previous users");
    let mut again = user(&bridge, CY).await;
    again.init().await;
    // No token ever reaches the log.
    let all = log(&bridge);
    for t in [ANA, BO, CY] {
        assert!(!all.contains(t), "token in the log");
    }
}

/// The position a stamped message carries (`_meta["acp-codec/cursor"]`):
/// its stream's session (`None`: the connection's) and position.
fn stamp(m: &Value) -> (Option<String>, u64) {
    let cursor = &m["_meta"]["acp-codec/cursor"];
    let position = cursor["position"]
        .as_u64()
        .unwrap_or_else(|| panic!("not stamped: {m}"));
    (cursor["session"].as_str().map(str::to_owned), position)
}

/// ACP v2 through the server, a v2 client and the v2 mock agent: the
/// users' isolation as over v1 (a WebSocket turn among it), a v1 client
/// bridged at `initialize` by the server's translator, a turn
/// over Streamable HTTP, and a WebSocket client whose connection drops
/// mid-turn resuming its session from the server's own cursor
/// (`replayFrom`): the server replays what it kept, the agent replays
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_users_isolated_turns_on_both_profiles_and_a_resume_from_the_servers_cursor() {
    let bridge = team("users-v2", &["--mock-args", "--protocol 2"]);
    let _ = isolated(&bridge, 2).await;

    // A v1 client of the same agent: bridged by the server's translator,
    // answered in v1.
    let mut old = user(&bridge, ANA).await;
    let r = old
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(r["result"]["protocolVersion"], 1, "{r}");
    assert!(r["result"].get("agentCapabilities").is_some(), "{r}");

    // A turn over Streamable HTTP.
    let (addr, auth) = (bridge.addr, format!("Bearer {ANA}"));
    let (json_type, bearer) = (
        ("Content-Type", "application/json"),
        ("Authorization", auth.as_str()),
    );
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"capabilities":{},"info":{"name":"t","version":"1"}}}"#;
    let (status, head, body) = http_request(addr, "POST", &[json_type, bearer], init);
    assert_eq!(status, 200, "{head}{body}");
    assert!(body.contains(r#""protocolVersion":2"#), "{body}");
    let id = connection_id(&head);
    let conn = ("Acp-Connection-Id", id.as_str());
    let (status, mut events) = open_sse_as(addr, Some(ANA), &id, None);
    assert_eq!(status, 200);
    let new = json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd": bridge.dir, "mcpServers": []}});
    assert_eq!(
        http_request(addr, "POST", &[json_type, bearer, conn], &new.to_string()).0,
        202
    );
    let session = next_event(&mut events)["result"]["sessionId"]
        .as_str()
        .expect("session/new answered")
        .to_owned();
    let (status, mut turn) = open_sse_as(addr, Some(ANA), &id, Some(&session));
    assert_eq!(status, 200);
    let in_session = ("Acp-Session-Id", session.as_str());
    let prompt = json!({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}});
    assert_eq!(
        http_request(
            addr,
            "POST",
            &[json_type, bearer, conn, in_session],
            &prompt.to_string()
        )
        .0,
        202
    );
    let (mut accepted, mut asked) = (false, 0);
    let stop = loop {
        let m = next_event(&mut turn);
        let update = &m["params"]["update"];
        if m["method"] == "session/request_permission" {
            asked += 1;
            let reply = json!({"jsonrpc":"2.0","id": m["id"],"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}});
            assert_eq!(
                http_request(
                    addr,
                    "POST",
                    &[json_type, bearer, conn, in_session],
                    &reply.to_string()
                )
                .0,
                202
            );
        } else if m["id"] == 2 {
            accepted = m["result"]["messageId"].is_string();
        } else if update["sessionUpdate"] == "state_update" && update["state"] == "idle" {
            break update["stopReason"].clone();
        }
    };
    assert_eq!((accepted, asked, stop), (true, 1, json!("end_turn")));

    // WebSocket, positions asked for: the connection drops while the
    // agent waits on the permission request.
    let asking =
        json!({"protocolVersion": 2, "capabilities": {}, "_meta": {"acp-codec/resume": {}}});
    let mut c = user_speaking(&bridge, ANA, 2).await;
    c.answer = false;
    let init = c.request("initialize", asking.clone()).await;
    let held = init["result"]["_meta"]["acp-codec/resume"]["connection"].clone();
    assert!(held.is_string(), "{init}");
    let new = c
        .request("session/new", json!({"cwd": bridge.dir, "mcpServers": []}))
        .await;
    let session = new["result"]["sessionId"].as_str().unwrap().to_owned();
    let on_connection = stamp(&new).1;
    c.send(&json!({"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId": session, "prompt": [{"type":"text","text":"again"}]}}))
        .await;
    let mut had = 0;
    loop {
        let m = c.recv().await.expect("the turn");
        if m["method"] == "session/request_permission" {
            break;
        }
        assert_eq!(stamp(&m).0.as_deref(), Some(session.as_str()), "{m}");
        had = stamp(&m).1;
    }
    let left = log(&bridge).matches("websocket left").count();
    drop(c);
    let deadline = Instant::now() + STEP;
    while log(&bridge).matches("websocket left").count() == left {
        assert!(Instant::now() < deadline, "{}", log(&bridge));
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut back = user_speaking(&bridge, ANA, 2).await;
    let mut resuming = asking;
    resuming["_meta"]["acp-codec/cursor"] = json!({"connection": held, "position": on_connection});
    let init = back.request("initialize", resuming).await;
    assert!(init.get("result").is_some(), "{init}");
    let r = back
        .request(
            "session/resume",
            json!({"sessionId": session, "cwd": bridge.dir, "replayFrom": {"type": "_acp-codec/cursor", "position": had}}),
        )
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    // What the server kept after `had`, in order: the permission request
    // (answered now), then the session's state; nothing the agent replays
    // (its history would start again with the user's message).
    let replayed: Vec<u64> = back.seen.iter().map(|m| stamp(m).1).collect();
    assert_eq!(
        replayed,
        (had + 1..=had + 2).collect::<Vec<_>>(),
        "{:?}",
        back.seen
    );
    assert_eq!(back.seen[0]["method"], "session/request_permission");
    assert_eq!(
        back.seen[1]["params"]["update"]["state"], "requires_action",
        "{:?}",
        back.seen
    );
    assert_eq!(back.until_idle(&session).await, "end_turn");
    assert!(!back
        .seen
        .iter()
        .any(|m| m["params"]["update"]["sessionUpdate"] == "user_message"));
    assert!(
        log(&bridge).contains("resumes connection"),
        "{}",
        log(&bridge)
    );
}

// The flood reads nothing, so the bridge's writer for it is stuck on a
// full socket while the core, past the budget, closes the connection: the
// close (and its log line) must not wait behind the thousands of answers
// queued before it. It did, one run in ten, until the writer learned to
// drop what is queued behind a write the core gave up on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_users_fifty_connections_one_hits_every_limit() {
    let dir = scratch_dir("limits");
    let file = token_file(
        &dir,
        &[
            (ANA, "ana", &["read", "write"]),
            (BO, "bo", &["read", "write"]),
            (HOG, "hog", &["read", "write"]),
        ],
    );
    let bridge = Arc::new(Bridge::start_in(
        dir.clone(),
        &[
            "--token-file",
            &file,
            "--max-user-connections",
            "20",
            "--max-user-sessions",
            "16",
            "--max-user-buffered-bytes",
            "1000000",
        ],
        &[],
    ));
    // hog: 20 connections, the limit; the 21st is refused with 429.
    let mut hogs = Vec::new();
    for _ in 0..20 {
        hogs.push(user(&bridge, HOG).await);
    }
    let err = connect_with(&bridge.url(), Some(HOG), None)
        .await
        .err()
        .unwrap();
    assert_eq!(refused_status(err), 429);
    // ana and bo: 15 connections each, every one a full turn, meanwhile.
    let mut turns = Vec::new();
    for i in 0..30 {
        let bridge = bridge.clone();
        turns.push(tokio::spawn(async move {
            let token = if i % 2 == 0 { ANA } else { BO };
            let mut c = user(&bridge, token).await;
            let cwd = bridge.dir.join(format!("c{i}"));
            std::fs::create_dir_all(&cwd).unwrap();
            let session = c.open_session(&cwd).await;
            let t = c.turn(&session, &format!("client {i}")).await;
            // Each user's agent numbers its own sessions.
            ((token, session), t)
        }));
    }
    // hog: 16 sessions, the limit; the 17th is refused.
    let h = &mut hogs[0];
    h.init().await;
    for _ in 0..16 {
        let r = h
            .request(
                "session/new",
                json!({"cwd": bridge.dir.to_str().unwrap(), "mcpServers": []}),
            )
            .await;
        assert!(r["result"]["sessionId"].is_string(), "{r}");
    }
    let r = h
        .request("session/new", json!({"cwd": "/", "mcpServers": []}))
        .await;
    assert_eq!(error_code(&r), -32011, "{r}");
    // hog floods requests with 1000-byte ids and reads nothing: its unread
    // answers pass its 1 MB budget, and the bridge closes that connection.
    let flood = &mut hogs[1];
    flood.init().await;
    let pad = "x".repeat(1000);
    for n in 0..20_000 {
        let msg =
            json!({"jsonrpc":"2.0","id": format!("{pad}{n}"),"method":"_flood/x"}).to_string();
        if flood.ws.send(WsMessage::Text(msg.into())).await.is_err() {
            break;
        }
        // Only the budget's close ends the flood early: hog's idle
        // connections are closed with 1008 too once they have said nothing
        // for 10 s, which a slow flood outlasts.
        if n % 500 == 0 && log(&bridge).contains("user hog: closing with 1008 policy violation: this user's connections hold more than") {
            break;
        }
    }
    wait_log(&bridge, "user hog: closing with 1008 policy violation: this user's connections hold more than 1000000 bytes unread");
    // Nothing lost for the others: every turn finishes whole, each in its
    // own session.
    let mut sessions = std::collections::HashSet::new();
    for t in turns {
        let (session, turn) = tokio::time::timeout(Duration::from_secs(120), t)
            .await
            .expect("turn timed out")
            .unwrap();
        assert_eq!(turn.stop_reason, "end_turn", "{turn:?}");
        assert!(
            turn.permission_requests >= 1 && turn.message_chunks >= 2,
            "{turn:?}"
        );
        assert!(sessions.insert(session));
    }
    assert_eq!(sessions.len(), 30);
    // Once the bridge has dropped that connection (and what it held), hog's
    // other connections work again: the limit is on what a user leaves
    // unread, not on the user.
    let port = flood.ws.get_ref();
    let flood_port = match port {
        tokio_tungstenite::MaybeTlsStream::Plain(s) => s.local_addr().unwrap().port(),
        _ => unreachable!(),
    };
    wait_log(
        &bridge,
        &format!("127.0.0.1:{flood_port} user hog: websocket left"),
    );
    // (A new connection: hog's idle ones are closed 10 s after they
    // opened, which this test may outlast.)
    let mut h = user(&bridge, HOG).await;
    h.init().await;
    let r = h.request("session/list", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}
