//! `remote::Server`'s counters, census and events through the public
//! API: each moves by what happened, no more (a refusal by its reason, a
//! turn once, the first update's latency once per prompt), and the event
//! queue stays bounded when nobody drains it.

use std::time::Duration;

use acp_codec::remote::{
    Action, Event, Permissions, PoolMode, Principal, Refusal, Server, ServerConfig, MAX_EVENTS,
};

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;

fn drain(server: &mut Server) -> Vec<Action> {
    std::iter::from_fn(|| server.poll_action()).collect()
}

fn events(server: &mut Server) -> Vec<Event> {
    std::iter::from_fn(|| server.poll_event()).collect()
}

/// A shared agent, up, with one initialized WebSocket connection.
fn shared() -> (
    Server,
    acp_codec::remote::AgentRun,
    acp_codec::remote::ConnectionId,
) {
    let t = Duration::ZERO;
    let mut server = Server::new(ServerConfig::new(), t);
    let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
        panic!("no start")
    };
    server.handle_agent_started(t, run, 1);
    let conn = server
        .open_websocket(t, &Principal::anonymous(), Some([1; 16]))
        .map(|(c, _)| c)
        .unwrap();
    server.handle_text(t, conn, INIT);
    drain(&mut server);
    server.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    );
    drain(&mut server);
    (server, run, conn)
}

#[test]
fn a_turn_counts_once_and_its_first_update_measures_the_wait() {
    let (mut server, _, conn) = shared();
    let before = server.stats().turns;
    let prompt = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[],"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=b"}}}"#;
    let t1 = Duration::from_secs(1);
    server.handle_text(t1, conn, prompt);
    // The prompt goes to the agent as it came, `_meta` and all.
    let wrote = drain(&mut server);
    let line = wrote
        .iter()
        .find_map(|a| match a {
            Action::WriteAgent { line, .. } => {
                Some(String::from_utf8_lossy(&line.to_vec()).into_owned())
            }
            _ => None,
        })
        .expect("the prompt goes to the agent");
    assert!(
        line.contains(r#""_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=b"}"#),
        "{line}"
    );
    assert_eq!(server.stats().turns, before + 1);
    let got = events(&mut server);
    assert_eq!(
        got,
        vec![Event::Turn {
            conn,
            session: "s1".into(),
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            tracestate: Some("a=b".into()),
        }]
    );
}

#[test]
fn the_first_update_of_an_owned_session_is_measured_once() {
    let (mut server, run, conn) = shared();
    server.handle_text(
        Duration::ZERO,
        conn,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
    );
    let id = drain(&mut server)
        .iter()
        .find_map(|a| match a {
            Action::WriteAgent { line, .. } => {
                let v: serde_json::Value = serde_json::from_slice(&line.to_vec()).unwrap();
                v["id"].as_i64()
            }
            _ => None,
        })
        .unwrap();
    server.handle_agent_line(
        Duration::ZERO,
        run,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"s1"}}}}"#),
    );
    drain(&mut server);
    events(&mut server);
    server.handle_text(
        Duration::from_secs(1),
        conn,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#,
    );
    drain(&mut server);
    assert!(matches!(
        events(&mut server).as_slice(),
        [Event::Turn {
            traceparent: None,
            tracestate: None,
            ..
        }]
    ));
    let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;
    server.handle_agent_line(Duration::from_millis(1250), run, update);
    server.handle_agent_line(Duration::from_millis(1300), run, update);
    drain(&mut server);
    assert_eq!(
        events(&mut server),
        vec![Event::FirstUpdate {
            session: "s1".into(),
            latency: Duration::from_millis(250),
        }]
    );
}

#[test]
fn each_refusal_counts_by_its_reason() {
    let t = Duration::ZERO;
    let mut config = ServerConfig::new();
    config.pool = PoolMode::PerUser;
    config.max_agents = 1;
    config.max_user_connections = 1;
    config.max_message = 1000;
    let mut server = Server::new(config, t);
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let bo = Principal::user("bo", Permissions::READ_WRITE);
    let a = server
        .open_websocket(t, &ana, Some([1; 16]))
        .map(|(c, _)| c)
        .unwrap();
    // A second connection of ana's: her limit.
    assert!(server
        .open_websocket(t, &ana, Some([1; 16]))
        .map(|(c, _)| c)
        .is_err());
    server.handle_text(t, a, INIT);
    drain(&mut server);
    // bo's agent may not start: ana's runs, with a connection.
    let b = server
        .open_websocket(t, &bo, Some([1; 16]))
        .map(|(c, _)| c)
        .unwrap();
    server.handle_text(t, b, INIT);
    drain(&mut server);
    // A message over the size limit closes its connection.
    server.handle_text(t, b, &"x".repeat(1001));
    drain(&mut server);
    let stats = server.stats();
    let count = |r: Refusal| stats.refusals[r.index()];
    assert_eq!(count(Refusal::UserConnections), 1);
    assert_eq!(count(Refusal::AgentsFull), 1);
    assert_eq!(count(Refusal::Oversize), 1);
    assert_eq!(count(Refusal::WrongToken), 0);
    assert_eq!(stats.refusals.iter().sum::<u64>(), 3);
    assert_eq!(stats.connections, [2, 0]);
    assert_eq!(stats.agent_starts, [0, 1, 0]);
    assert_eq!(
        events(&mut server),
        vec![
            Event::Refused {
                reason: Refusal::UserConnections,
                conn: None
            },
            Event::Refused {
                reason: Refusal::AgentsFull,
                conn: Some(b)
            },
            Event::Refused {
                reason: Refusal::Oversize,
                conn: Some(b)
            },
        ]
    );
    let census = server.census();
    assert_eq!((census.websocket, census.streamable_http), (1, 0));
    assert_eq!(census.users, 1);
    assert_eq!(census.agents_starting, 1);
}

#[test]
fn events_nobody_drains_stay_bounded_and_are_still_counted() {
    let t = Duration::ZERO;
    let mut config = ServerConfig::new();
    config.max_user_connections = 0;
    let mut server = Server::new(config, t);
    let who = Principal::user("ana", Permissions::READ_WRITE);
    let n = MAX_EVENTS + 44;
    for _ in 0..n {
        assert!(server
            .open_websocket(t, &who, Some([1; 16]))
            .map(|(c, _)| c)
            .is_err());
    }
    assert_eq!(
        server.stats().refusals[Refusal::UserConnections.index()],
        n as u64
    );
    assert_eq!(events(&mut server).len(), MAX_EVENTS);
    assert_eq!(server.stats().events_dropped, 44);
}

#[test]
fn a_session_past_the_users_limit_is_a_counted_refusal() {
    let t = Duration::ZERO;
    let mut config = ServerConfig::new();
    config.max_user_sessions = 1;
    let mut server = Server::new(config, t);
    let Some(Action::StartAgent { run, .. }) = server.poll_action() else {
        panic!("no start")
    };
    server.handle_agent_started(t, run, 1);
    let conn = server
        .open_websocket(t, &Principal::anonymous(), Some([1; 16]))
        .map(|(c, _)| c)
        .unwrap();
    server.handle_text(t, conn, INIT);
    drain(&mut server);
    let new = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/","mcpServers":[]}}}}"#
        )
    };
    // The first session opens (its answer pending counts against the
    // limit), the second is refused by the router with -32011.
    server.handle_text(t, conn, &new(2));
    let first = drain(&mut server);
    assert!(first.iter().any(|a| matches!(a, Action::WriteAgent { .. })));
    events(&mut server);
    server.handle_text(t, conn, &new(3));
    let second = drain(&mut server);
    let refusal = second
        .iter()
        .find_map(|a| match a {
            Action::Send { to, text, .. } if *to == conn => Some(text.clone()),
            _ => None,
        })
        .expect("the second session/new is answered by the server");
    let v: serde_json::Value = serde_json::from_str(&refusal).unwrap();
    assert_eq!(
        (v["id"].as_i64(), v["error"]["code"].as_i64()),
        (Some(3), Some(-32011)),
        "{refusal}"
    );
    assert!(!second
        .iter()
        .any(|a| matches!(a, Action::WriteAgent { .. })));
    let stats = server.stats();
    assert_eq!(stats.refusals[Refusal::UserSessions.index()], 1);
    assert_eq!(stats.refusals.iter().sum::<u64>(), 1);
    assert_eq!(
        events(&mut server),
        vec![Event::Refused {
            reason: Refusal::UserSessions,
            conn: Some(conn)
        }]
    );
    // A request within the limit is no refusal.
    server.handle_text(
        t,
        conn,
        r#"{"jsonrpc":"2.0","id":4,"method":"session/list","params":{}}"#,
    );
    drain(&mut server);
    assert_eq!(server.stats().refusals.iter().sum::<u64>(), 1);
    assert_eq!(Refusal::UserSessions.as_str(), "user_sessions");
}
