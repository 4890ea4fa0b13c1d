//! The server's rules, without sockets or processes: each test plays the
//! binary (opens connections, sends messages, plays the agent's lines)
//! and checks the actions.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

use super::*;
use crate::framing::{FrameError, LineTooLong};
use crate::remote::{ConnectError, DEFAULT_RESUME_GRACE};
use crate::version::Dialect;
use crate::PeekedId;

const T0: Duration = Duration::ZERO;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn init(id: u64) -> String {
    init_as(id, Dialect::V1)
}

/// An `initialize` asking for `dialect`'s version.
fn init_as(id: u64, dialect: Dialect) -> String {
    let v = dialect.version();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":{v}}}}}"#
    )
}

/// A request that reattaches `session` in `dialect`: v1's `session/load`,
/// v2's `session/resume` (with the agent's replay).
fn reattach(id: u64, session: &str, dialect: Dialect) -> String {
    let (method, extra) = match dialect {
        Dialect::V1 => ("session/load", r#""mcpServers":[]"#),
        _ => ("session/resume", r#""replayFrom":{"type":"start"}"#),
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"sessionId":"{session}","cwd":"/",{extra}}}}}"#
    )
}

fn new_session(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/","mcpServers":[]}}}}"#
    )
}

fn prompt(id: u64, session: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[]}}}}"#
    )
}

fn update(session: &str, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{session}","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
    )
}

/// The server, and the agent runs started so far.
struct Harness {
    server: Server,
    now: Duration,
    /// What its clients' `initialize` asks for.
    dialect: Dialect,
}

impl Harness {
    fn new(config: ServerConfig) -> Self {
        Self {
            server: Server::new(config, T0),
            now: T0,
            dialect: Dialect::V1,
        }
    }

    fn actions(&mut self) -> Vec<Action> {
        self.server.take_actions()
    }

    /// Starts every run asked for (pid = run number), and returns the
    /// other actions.
    fn settle(&mut self) -> Vec<Action> {
        let mut rest = Vec::new();
        loop {
            let acts = self.actions();
            if acts.is_empty() {
                return rest;
            }
            for a in acts {
                match a {
                    Action::StartAgent { run, .. } => {
                        let pid = u32::try_from(run.0).unwrap();
                        self.server.handle_agent_started(self.now, run, pid);
                        rest.push(a);
                    }
                    other => rest.push(other),
                }
            }
        }
    }

    fn ws(&mut self, p: &Principal) -> ConnectionId {
        let c = self.server.open(self.now, Profile::WebSocket, p).unwrap();
        self.server
            .handle_text(self.now, c, &init_as(0, self.dialect));
        c
    }

    fn text(&mut self, c: ConnectionId, t: &str) -> Vec<Action> {
        self.server.handle_text(self.now, c, t);
        self.settle()
    }

    fn agent(&mut self, run: AgentRun, line: &str) -> Vec<Action> {
        self.server.handle_agent_line(self.now, run, line);
        self.settle()
    }
}

/// The lines written to the agent.
fn writes(acts: &[Action]) -> Vec<String> {
    acts.iter()
        .filter_map(|a| match a {
            Action::WriteAgent { line, .. } => Some(String::from_utf8(line.to_vec()).unwrap()),
            _ => None,
        })
        .collect()
}

/// The messages sent to `to`.
fn sent(acts: &[Action], to: ConnectionId) -> Vec<String> {
    acts.iter()
        .filter_map(|a| match a {
            Action::Send { to: t, text, .. } if *t == to => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn started(acts: &[Action]) -> Vec<AgentRun> {
    acts.iter()
        .filter_map(|a| match a {
            Action::StartAgent { run, .. } => Some(*run),
            _ => None,
        })
        .collect()
}

/// The id the agent saw on the last request written.
fn agent_id(acts: &[Action]) -> u64 {
    let line = writes(acts).pop().unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    v["id"].as_u64().unwrap()
}

fn users_config() -> ServerConfig {
    ServerConfig {
        pool: PoolMode::Shared,
        ..ServerConfig::new()
    }
}

/// A shared agent with `s1` created by `ana`'s connection; returns the
/// harness, the run and ana's connection.
fn with_session(config: ServerConfig) -> (Harness, AgentRun, ConnectionId) {
    with_session_in(config, Dialect::V1)
}

/// [`with_session`], the clients speaking `dialect`.
fn with_session_in(config: ServerConfig, dialect: Dialect) -> (Harness, AgentRun, ConnectionId) {
    let mut h = Harness::new(config);
    h.dialect = dialect;
    let mut runs = started(&h.settle());
    let ana = h.ws(&Principal::user("ana", Permissions::READ_WRITE));
    runs.extend(started(&h.settle()));
    let run = runs[0];
    let acts = h.text(ana, &new_session(1));
    let id = agent_id(&acts);
    let acts = h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"s1"}}}}"#),
    );
    assert_eq!(
        sent(&acts, ana),
        [r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#]
    );
    (h, run, ana)
}

/// Over v1 and over v2 alike.
#[test]
fn a_session_is_its_creators_and_never_reaches_another_user() {
    for dialect in Dialect::ALL {
        isolated(dialect);
    }
}

fn isolated(dialect: Dialect) {
    let (mut h, run, ana) = with_session_in(users_config(), dialect);
    let bo = h.ws(&Principal::user("bo", Permissions::READ_WRITE));
    h.settle();
    // Bo naming ana's session is refused in words that name no user, the
    // same words whatever he asks.
    let close = r#"{"jsonrpc":"2.0","id":6,"method":"session/close","params":{"sessionId":"s1"}}"#;
    let delete =
        r#"{"jsonrpc":"2.0","id":7,"method":"session/delete","params":{"sessionId":"s1"}}"#;
    let mut refusals = Vec::new();
    for request in [prompt(5, "s1"), close.into(), delete.into()] {
        let acts = h.text(bo, &request);
        assert!(writes(&acts).is_empty(), "{dialect}: {request}");
        let [refusal] = &sent(&acts, bo)[..] else {
            panic!("{acts:?}")
        };
        assert!(
            refusal.contains("-32602") && !refusal.contains("ana"),
            "{refusal}"
        );
        refusals.push(refusal.split(r#""error""#).nth(1).unwrap().to_owned());
    }
    refusals.dedup();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    // Bo's session/list shows his sessions only.
    let acts = h.text(
        bo,
        r#"{"jsonrpc":"2.0","id":8,"method":"session/list","params":{}}"#,
    );
    let id = agent_id(&acts);
    let all = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessions":[{{"sessionId":"s1","cwd":"/"}}]}}}}"#
    );
    let acts = h.agent(run, &all);
    assert_eq!(
        sent(&acts, bo),
        [r#"{"jsonrpc":"2.0","id":8,"result":{"sessions":[]}}"#]
    );
    // The agent's updates for s1 go to ana alone, as the bytes it wrote.
    let line = update("s1", "hi");
    let acts = h.agent(run, &line);
    assert_eq!(sent(&acts, ana), [line]);
    assert!(sent(&acts, bo).is_empty());
    // Ownership never lapses: ana leaves, bo still may not reattach.
    h.server.handle_closed(h.now, ana, Ending::Clean);
    h.settle();
    let acts = h.text(bo, &reattach(6, "s1", dialect));
    assert!(writes(&acts).is_empty(), "{acts:?}");
    assert!(sent(&acts, bo)[0].contains(&refusals[0]), "{acts:?}");
    assert_eq!(
        h.server.router_of(None).unwrap().session_user("s1"),
        Some("ana")
    );
    // Ana reattaches it, over her version's method.
    let again = h.ws(&Principal::user("ana", Permissions::READ_WRITE));
    let acts = h.text(again, &reattach(2, "s1", dialect));
    let method = if dialect == Dialect::V1 {
        "session/load"
    } else {
        "session/resume"
    };
    let wrote = writes(&acts);
    assert!(
        wrote.last().is_some_and(|l| l.contains(method)),
        "{wrote:?}"
    );
}

/// Over v1 and over v2 alike.
#[test]
fn read_only_users_watch_but_may_not_prompt() {
    for dialect in Dialect::ALL {
        let mut h = Harness::new(users_config());
        h.dialect = dialect;
        h.settle();
        let ro = h.ws(&Principal::user("cy", Permissions::READ_ONLY));
        h.settle();
        let acts = h.text(ro, &new_session(1));
        assert!(writes(&acts).is_empty());
        assert!(sent(&acts, ro)[0].contains("-32010"), "{acts:?}");
        // Watching is reattaching, by the version's own method.
        let acts = h.text(ro, &reattach(2, "s9", dialect));
        assert!(
            !sent(&acts, ro).iter().any(|t| t.contains("-32010")),
            "{dialect}: {acts:?}"
        );
    }
    // A user with no permission may not connect.
    let mut h = Harness::new(users_config());
    let none = Principal::user("dee", Permissions::NONE);
    assert_eq!(
        h.server.open(h.now, Profile::WebSocket, &none),
        Err(ConnectError::NotPermitted)
    );
}

#[test]
fn limits_connections_sessions_and_queued_bytes() {
    let config = ServerConfig {
        max_user_connections: 1,
        max_user_buffered_bytes: 300,
        ..users_config()
    };
    let (mut h, run, ana) = with_session(config);
    let p = Principal::user("ana", Permissions::READ_WRITE);
    let err = h.server.open(h.now, Profile::WebSocket, &p).unwrap_err();
    assert_eq!(err.http_status(), 429);
    // Nothing was written to ana's socket yet: the queue fills, then the
    // connection that a message is for closes (1008), the others never
    // notice.
    h.server.handle_sent(h.now, ana, 1000);
    let line = update("s1", &"x".repeat(200));
    let acts = h.agent(run, &line);
    assert_eq!(sent(&acts, ana).len(), 1);
    let acts = h.agent(run, &line);
    let closed = acts.iter().any(|a| {
        matches!(a, Action::Close { conn, code, reason, .. }
        if *conn == ana && *code == CloseCode::POLICY_VIOLATION && reason.contains("300 bytes"))
    });
    assert!(closed, "{acts:?}");
    assert_eq!(h.server.connections(), 0);
    assert_eq!(h.server.user_queued(Some("ana")), 0);
}

#[test]
fn sent_bytes_free_the_queue_and_a_stalled_socket_closes() {
    let config = ServerConfig {
        slow_client: secs(5),
        ..users_config()
    };
    let (mut h, run, ana) = with_session(config);
    h.server.handle_sent(h.now, ana, 1000);
    assert_eq!(h.server.queued_for(ana), 0);
    let acts = h.agent(run, &update("s1", "a"));
    let len = sent(&acts, ana)[0].len();
    assert_eq!(h.server.queued_for(ana), len);
    assert_eq!(h.server.poll_timeout(), Some(h.now + secs(5)));
    h.now += secs(5);
    h.server.handle_timeout(h.now);
    let acts = h.actions();
    assert!(acts
        .iter()
        .any(|a| matches!(a, Action::Close { reason, .. } if reason.contains("too slow"))));
}

#[test]
fn replay_goes_to_the_client_that_reattaches() {
    let (mut h, run, ana) = with_session(users_config());
    h.server.handle_closed(h.now, ana, Ending::Broken);
    let acts = h.settle();
    assert!(writes(&acts)[0].contains("session/cancel"));
    let missed = update("s1", "while away");
    h.agent(run, &missed);
    let again = h.ws(&Principal::user("ana", Permissions::READ_WRITE));
    h.settle();
    let load = r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}"#;
    let acts = h.text(again, load);
    let id = agent_id(&acts);
    let acts = h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
    );
    assert_eq!(
        sent(&acts, again),
        [
            missed,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#.to_string()
        ]
    );
}

#[test]
fn an_agent_exit_answers_pending_requests_and_restarts_with_backoff() {
    let (mut h, run, ana) = with_session(users_config());
    h.text(ana, &prompt(3, "s1"));
    h.server.handle_agent_exited(h.now, run, "exit status: 1");
    let acts = h.actions();
    let to_ana = sent(&acts, ana);
    // Its initialize (never answered here) and its prompt get errors.
    assert_eq!(to_ana.len(), 3, "{acts:?}");
    assert!(to_ana[1].contains(r#""id":3"#) && to_ana[1].contains("-32603"));
    assert!(to_ana[2].contains("_bridge/agent_exited") && to_ana[2].contains("100"));
    // Lines of the old run are ignored.
    assert!(h.agent(run, &update("s1", "late")).is_empty());
    assert_eq!(h.server.poll_timeout(), Some(Duration::from_millis(100)));
    h.now = Duration::from_millis(100);
    h.server.handle_timeout(h.now);
    let acts = h.settle();
    let again = started(&acts)[0];
    assert_ne!(again, run);
    assert!(sent(&acts, ana)[0].contains("_bridge/agent_started"));
    // A second crash waits twice as long.
    h.server.handle_agent_exited(h.now, again, "killed");
    h.actions();
    assert_eq!(
        h.server.poll_timeout(),
        Some(h.now + Duration::from_millis(200))
    );
}

/// Every error a client gets in the agent's place is one message of one
/// form, whichever part of the server writes it: the router (a request
/// pending when the agent exits) and the core (no agent can start for the
/// user) alike, nothing after the closing brace.
#[test]
fn the_routers_and_the_cores_error_answers_have_one_form() {
    fn one_form(text: &str) {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let want = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":{},"message":{}}}}}"#,
            v["id"], v["error"]["code"], v["error"]["message"]
        );
        assert_eq!(text, want);
    }
    let (mut h, run, ana) = with_session(users_config());
    h.text(ana, &prompt(3, "s1"));
    h.server.handle_agent_exited(h.now, run, "exit status: 1");
    let to_ana = sent(&h.actions(), ana);
    let routers = to_ana.iter().find(|t| t.contains(r#""id":3"#)).unwrap();
    assert!(routers.contains("-32603"), "{routers}");
    one_form(routers);

    let mut h = Harness::new(per_user(1));
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let a = h.server.open(h.now, Profile::WebSocket, &ana).unwrap();
    h.server.handle_text(h.now, a, &init(0));
    let run = started(&h.actions())[0];
    h.server.handle_agent_started(h.now, run, 7);
    h.actions();
    let bo = Principal::user("bo", Permissions::READ_WRITE);
    let b = h.server.open(h.now, Profile::WebSocket, &bo).unwrap();
    h.server.handle_text(h.now, b, &init(0));
    let to_bo = sent(&h.actions(), b);
    assert!(to_bo[0].contains("-32012"), "{to_bo:?}");
    one_form(&to_bo[0]);
}

fn per_user(max_agents: usize) -> ServerConfig {
    ServerConfig {
        pool: PoolMode::PerUser,
        max_agents,
        agent_idle: secs(60),
        ..ServerConfig::new()
    }
}

#[test]
fn per_user_agents_start_on_first_message_stop_idle_and_are_capped() {
    let mut h = Harness::new(per_user(1));
    assert!(h.actions().is_empty(), "no shared agent");
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let a = h.server.open(h.now, Profile::WebSocket, &ana).unwrap();
    h.server.handle_text(h.now, a, &init(0));
    let acts = h.actions();
    let [Action::StartAgent { run, user, why }] = &acts[..] else {
        panic!("{acts:?}")
    };
    assert_eq!(
        (user.as_deref(), *why),
        (Some("ana"), StartReason::FirstMessage)
    );
    // The initialize waited for the start.
    h.server.handle_agent_started(h.now, *run, 7);
    assert!(writes(&h.actions())[0].contains("initialize"));
    // Bo, at the cap while ana holds a connection: refused clearly.
    let bo = Principal::user("bo", Permissions::READ_WRITE);
    let b = h.server.open(h.now, Profile::WebSocket, &bo).unwrap();
    h.server.handle_text(h.now, b, &init(0));
    let acts = h.actions();
    assert!(sent(&acts, b)[0].contains("-32012"), "{acts:?}");
    // Ana leaves: her agent stops once idle.
    h.server.handle_sent(h.now, b, 1000);
    h.server.handle_closed(h.now, a, Ending::Clean);
    h.actions();
    assert_eq!(h.server.poll_timeout(), Some(secs(60)));
    h.now = secs(60);
    h.server.handle_timeout(h.now);
    let acts = h.actions();
    assert!(acts.contains(&Action::StopAgent {
        run: *run,
        why: StopReason::Idle
    }));
    h.server.handle_agent_exited(h.now, *run, "killed");
    assert_eq!(
        h.actions(),
        [Action::Log("agent of ana stopped: idle".into())]
    );
    // Now bo's agent may start.
    h.server.handle_text(h.now, b, &new_session(1));
    assert_eq!(started(&h.actions()).len(), 1);
}

/// `name`'s agent started (its run) and left without a connection.
fn started_and_left(h: &mut Harness, name: &str) -> AgentRun {
    let who = Principal::user(name, Permissions::READ_WRITE);
    let c = h.server.open(h.now, Profile::WebSocket, &who).unwrap();
    h.server.handle_text(h.now, c, &init(0));
    let run = started(&h.settle())[0];
    h.server.handle_closed(h.now, c, Ending::Broken);
    h.settle();
    run
}

/// Bo's first message at the cap: `run`, `name`'s agent, is evicted (and
/// logged so), no other; what it caused.
fn bo_evicts(h: &mut Harness, run: AgentRun, name: &str) -> Vec<Action> {
    let bo = Principal::user("bo", Permissions::READ_WRITE);
    let b = h.server.open(h.now, Profile::WebSocket, &bo).unwrap();
    h.server.handle_text(h.now, b, &init(0));
    let acts = h.actions();
    let evicted: Vec<AgentRun> = acts
        .iter()
        .filter_map(|a| match a {
            Action::StopAgent {
                run,
                why: StopReason::Evicted,
            } => Some(*run),
            _ => None,
        })
        .collect();
    assert_eq!(evicted, [run], "{acts:?}");
    let log = alloc::format!("agent of {name} evicted");
    assert!(acts
        .iter()
        .any(|a| matches!(a, Action::Log(l) if l.starts_with(&log))));
    acts
}

#[test]
fn at_the_cap_the_agent_without_a_connection_longest_is_evicted() {
    let mut h = Harness::new(per_user(1));
    let run = started_and_left(&mut h, "ana");
    let acts = bo_evicts(&mut h, run, "ana");
    assert_eq!(started(&acts).len(), 1);
}

#[test]
fn among_agents_idle_as_long_the_first_by_name_is_evicted_whatever_their_order() {
    // Zed's agent starts before ana's, both at the same time: the one
    // evicted for bo is ana's, as the first by name (the agents' table
    // keeps them in the order they came).
    let mut h = Harness::new(per_user(2));
    let _zed = started_and_left(&mut h, "zed");
    let ana = started_and_left(&mut h, "ana");
    bo_evicts(&mut h, ana, "ana");
}

#[test]
fn websocket_gate_and_size_limit() {
    let config = ServerConfig {
        max_message: 100,
        ..users_config()
    };
    let mut h = Harness::new(config);
    h.settle();
    let p = Principal::anonymous();
    // Not initialize first: closed with 1002.
    let c = h.server.open(h.now, Profile::WebSocket, &p).unwrap();
    let acts = h.text(c, &new_session(1));
    assert!(acts
        .iter()
        .any(|a| matches!(a, Action::Close { code, .. } if *code == CloseCode::PROTOCOL_ERROR)));
    // A batch is answered, the socket stays.
    let c = h.server.open(h.now, Profile::WebSocket, &p).unwrap();
    let acts = h.text(c, "[]");
    assert_eq!(sent(&acts, c), [crate::remote::BATCH_ERROR]);
    // Over the limit: answered with its id, closed with 1009.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"initialize","params":{{"x":"{}"}}}}"#,
        "y".repeat(200)
    );
    let acts = h.text(c, &big);
    let Some(Action::Close { code, last, .. }) = acts.first() else {
        panic!("{acts:?}")
    };
    assert_eq!(*code, CloseCode::MESSAGE_TOO_BIG);
    assert!(last.as_deref().unwrap().contains(r#""id":9"#));
    // No first message in time: closed.
    let c = h.server.open(h.now, Profile::WebSocket, &p).unwrap();
    h.now += secs(10);
    h.server.handle_timeout(h.now);
    let acts = h.actions();
    assert!(acts.iter().any(|a| matches!(a, Action::Close { conn, reason, .. } if *conn == c && reason.contains("no message"))));
}

#[test]
fn streamable_http_opens_answers_and_streams() {
    let mut h = Harness::new(users_config());
    let run = started(&h.settle())[0];
    let p = Principal::user("ana", Permissions::READ_WRITE);
    // The headers: JSON in, an event stream out.
    assert!(Server::check_post_headers(Some("application/json; charset=utf-8")).is_ok());
    assert_eq!(
        Server::check_post_headers(Some("text/plain"))
            .unwrap_err()
            .status,
        415
    );
    assert_eq!(Server::check_get_headers(None).unwrap_err().status, 406);
    // Not initialize, no connection: 400 with its JSON-RPC reply.
    let err = h
        .server
        .handle_post(h.now, &p, None, None, &new_session(1), Some([1; 16]))
        .unwrap_err();
    assert_eq!(err.status, 400);
    let PostOutcome::Opened(c) = h
        .server
        .handle_post(h.now, &p, None, None, &init(4), Some([2; 16]))
        .unwrap()
    else {
        panic!()
    };
    assert!(h.server.pending_initialize(c));
    let acts = h.settle();
    let id = agent_id(&acts);
    let acts = h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
    );
    assert_eq!(
        acts,
        [Action::Answer {
            to: c,
            text: r#"{"jsonrpc":"2.0","id":4,"result":{}}"#.into()
        }]
    );
    // Another user's token does not reach the connection.
    let bo = Principal::user("bo", Permissions::READ_WRITE);
    let err = h
        .server
        .handle_post(h.now, &bo, Some(c), None, &new_session(1), None)
        .unwrap_err();
    assert_eq!(err.status, 404);
    // A session-scoped method needs Acp-Session-Id.
    let err = h
        .server
        .handle_post(h.now, &p, Some(c), None, &prompt(2, "s1"), None)
        .unwrap_err();
    assert_eq!(err.status, 400);
    // Streams: the connection's, one reader at a time; an unknown session
    // has none. The stream's queue goes to its reader, as it is.
    assert_eq!(
        h.server
            .handle_stream_opened(h.now, &p, c, None, None)
            .map(|o| (o.stream, o.reader)),
        Ok((Stream::Connection, 1))
    );
    assert_eq!(
        h.actions(),
        [Action::Read {
            to: c,
            stream: Stream::Connection,
            reader: 1,
            replace: None
        }]
    );
    // A second reader is refused, also after a reader that is not the
    // stream's gave it back.
    for stale in [None, Some(2)] {
        if let Some(reader) = stale {
            h.server
                .handle_stream_closed(h.now, c, &Stream::Connection, reader);
        }
        assert_eq!(
            h.server
                .handle_stream_opened(h.now, &p, c, None, None)
                .unwrap_err()
                .status,
            409
        );
    }
    assert_eq!(
        h.server
            .handle_stream_opened(h.now, &p, c, Some("s9"), None)
            .unwrap_err()
            .status,
        404
    );
    // Idle: no reader and no request for the resume grace (two minutes)
    // closes it; a minute does not.
    h.server
        .handle_stream_closed(h.now, c, &Stream::Connection, 1);
    h.now += secs(61);
    h.server.handle_timeout(h.now);
    assert!(!h
        .actions()
        .iter()
        .any(|a| matches!(a, Action::Close { .. })));
    h.now += secs(60);
    h.server.handle_timeout(h.now);
    assert!(h.actions().iter().any(
        |a| matches!(a, Action::Close { conn, reason, .. } if *conn == c && reason == "idle")
    ));
}

#[test]
fn an_oversized_agent_line_is_reported_not_dropped_silently() {
    let (mut h, run, ana) = with_session(ServerConfig {
        pool: PoolMode::PerUser,
        ..ServerConfig::new()
    });
    // A notification: its user's clients are told what was dropped.
    let long = FrameError::LineTooLong(LineTooLong::new(64, 100, None, false));
    h.server.handle_agent_line_too_long(h.now, run, &long);
    let acts = h.actions();
    let to_ana = sent(&acts, ana);
    assert_eq!(
        to_ana,
        [r#"{"jsonrpc":"2.0","method":"_bridge/line_dropped","params":{"limit":64,"size":100}}"#]
    );
    // A request of the agent: answered, so it does not wait.
    let id = PeekedId::from_str_id("r1");
    let long = FrameError::LineTooLong(LineTooLong::new(64, 100, id, true));
    h.server.handle_agent_line_too_long(h.now, run, &long);
    let acts = h.actions();
    assert!(writes(&acts)[0].contains(r#""id":"r1""#));
    assert!(sent(&acts, ana)[0].contains(r#""id":"r1""#));
    // An answer to ana's prompt: her request gets the error.
    let acts = h.text(ana, &prompt(8, "s1"));
    let n = i64::try_from(agent_id(&acts)).unwrap();
    let long = FrameError::LineTooLong(LineTooLong::new(64, 100, Some(PeekedId::Number(n)), false));
    h.server.handle_agent_line_too_long(h.now, run, &long);
    let acts = h.actions();
    assert!(sent(&acts, ana)[0].contains(r#""id":8"#), "{acts:?}");
}

#[test]
fn a_removed_user_becomes_read_only_and_their_agent_stops() {
    let mut h = Harness::new(per_user(4));
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let bo = Principal::user("bo", Permissions::READ_WRITE);
    let a = h.server.open(h.now, Profile::WebSocket, &ana).unwrap();
    h.server.handle_text(h.now, a, &init(0));
    let ana_run = started(&h.settle())[0];
    let b = h.server.open(h.now, Profile::WebSocket, &bo).unwrap();
    h.server.handle_text(h.now, b, &init(0));
    let bo_run = started(&h.settle())[0];
    h.server.handle_user_removed(h.now, "ana");
    let acts = h.actions();
    assert!(
        acts.contains(&Action::StopAgent {
            run: ana_run,
            why: StopReason::UserRemoved
        }),
        "{acts:?}"
    );
    assert!(
        !acts
            .iter()
            .any(|a| matches!(a, Action::StopAgent { run, .. } if *run == bo_run)),
        "only the removed user's agent stops: {acts:?}"
    );
    h.server.handle_agent_exited(h.now, ana_run, "killed");
    h.settle();
    // Her open connection is read-only now: a prompt is refused.
    let acts = h.text(a, &new_session(1));
    let answer = sent(&acts, a);
    assert!(
        answer.iter().any(|m| m.contains("\"error\"")),
        "a removed user may not write: {acts:?}"
    );
    // Removing a user who has no agent stops nothing.
    h.server.handle_user_removed(h.now, "cy");
    assert!(!h
        .actions()
        .iter()
        .any(|a| matches!(a, Action::StopAgent { .. })));
}

fn head<'a>(method: &'a str, name: Option<&'a str>) -> HttpHead<'a> {
    HttpHead {
        method,
        content_type: Some("application/json"),
        accept: Some("text/event-stream"),
        connection_id: name,
    }
}

#[test]
fn every_http_answer_is_the_cores() {
    let mut h = Harness::new(users_config());
    h.settle();
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let bo = Principal::user("bo", Permissions::READ_WRITE);
    let now = h.now;
    let status = |r: Result<HttpRoute, HttpRefusal>| r.unwrap_err().status;
    // The method, then each method's headers.
    assert_eq!(
        status(h.server.handle_http_head(now, &ana, &head("PUT", None))),
        405
    );
    let plain = HttpHead {
        content_type: Some("text/plain"),
        ..head("POST", None)
    };
    assert_eq!(status(h.server.handle_http_head(now, &ana, &plain)), 415);
    let no_accept = HttpHead {
        accept: None,
        ..head("GET", Some("x"))
    };
    assert_eq!(
        status(h.server.handle_http_head(now, &ana, &no_accept)),
        406
    );
    // A missing connection id: a POST may open one, a GET or DELETE not.
    let max_body = h.server.config().max_message;
    assert_eq!(
        h.server.handle_http_head(now, &ana, &head("POST", None)),
        Ok(HttpRoute::Post {
            conn: None,
            max_body: max_body * 2
        })
    );
    assert_eq!(
        status(h.server.handle_http_head(now, &ana, &head("GET", None))),
        400
    );
    assert_eq!(
        status(h.server.handle_http_head(now, &ana, &head("DELETE", None))),
        400
    );
    // An unknown one is 404 for every method.
    for m in ["POST", "GET", "DELETE"] {
        let r = h.server.handle_http_head(now, &ana, &head(m, Some("nope")));
        assert_eq!(status(r), 404, "{m}");
    }
    // Without a random source no connection opens: 503, nothing opened.
    let r = h.server.handle_post(now, &ana, None, None, &init(0), None);
    assert_eq!(r.unwrap_err().status, 503);
    assert_eq!(h.server.connections(), 0);
    assert_eq!(
        h.server.open_websocket(now, &ana, None).unwrap_err().status,
        503
    );
    // Not an initialize and no connection: 400, whatever the random source.
    let r = h
        .server
        .handle_post(now, &ana, None, None, &new_session(1), None);
    assert_eq!(r.unwrap_err().status, 400);
    // A body over the limit: 413.
    let big = "x".repeat(max_body + 1);
    let r = h
        .server
        .handle_post(now, &ana, None, None, &big, Some([1; 16]));
    assert_eq!(r.unwrap_err().status, 413);
    assert_eq!(h.server.body_too_large().status, 413);
    // Opened with a name: 32 hex digits, found by its user only.
    let opened = h
        .server
        .handle_post(now, &ana, None, None, &init(0), Some([0xab; 16]));
    let Ok(PostOutcome::Opened(c)) = opened else {
        panic!("{opened:?}")
    };
    let name = "ab".repeat(16);
    assert_eq!(h.server.connection_name(c), Some(name.as_str()));
    assert_eq!(
        h.server
            .handle_http_head(now, &ana, &head("GET", Some(&name))),
        Ok(HttpRoute::Get { conn: c })
    );
    assert_eq!(
        status(
            h.server
                .handle_http_head(now, &bo, &head("GET", Some(&name)))
        ),
        404
    );
    // DELETE closes it; its name is gone.
    assert_eq!(
        h.server
            .handle_http_head(now, &ana, &head("DELETE", Some(&name))),
        Ok(HttpRoute::Deleted { conn: c })
    );
    assert_eq!(h.server.connections(), 0);
    assert_eq!(
        status(
            h.server
                .handle_http_head(now, &ana, &head("DELETE", Some(&name)))
        ),
        404
    );
    // A WebSocket is named the same way; the user's limits still refuse.
    let (w, wname) = h.server.open_websocket(now, &ana, Some([7; 16])).unwrap();
    assert_eq!(wname, "07".repeat(16));
    assert_eq!(h.server.connection_name(w), Some(wname.as_str()));
    assert_eq!(h.server.websocket_read_limit(), max_body * 2);
    let reader = Principal::user("ro", Permissions::NONE);
    assert_eq!(
        h.server
            .open_websocket(now, &reader, Some([8; 16]))
            .unwrap_err()
            .status,
        403
    );
    // Access, /health, unknown paths.
    let r = h.server.refuse_access(AccessRefusal::NoToken);
    assert_eq!((r.status, r.challenges()), (401, true));
    let r = h.server.refuse_access(AccessRefusal::WrongToken);
    assert_eq!((r.status, r.challenges()), (401, true));
    let r = h.server.refuse_access(AccessRefusal::Origin("http://evil"));
    assert_eq!((r.status, r.challenges()), (403, false));
    assert_eq!(r.body, "origin http://evil is not allowed");
    assert_eq!(h.server.health(), HttpRefusal::text(200, "ok"));
    assert_eq!(h.server.not_found().status, 404);
}

#[test]
fn an_oversized_line_reaches_its_sessions_owner_with_a_shared_agent() {
    // One shared agent, two users, each with a session.
    let (mut h, run, ana) = with_session(users_config());
    let bo_p = Principal::user("bo", Permissions::READ_WRITE);
    let bo = h.ws(&bo_p);
    h.settle();
    let acts = h.text(bo, &new_session(3));
    let id = agent_id(&acts);
    h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"s2"}}}}"#),
    );
    // A line for ana's session: only ana is told, with the session.
    let long = LineTooLong::new(64, 100, None, false).with_session("s1");
    h.server
        .handle_agent_line_too_long(h.now, run, &FrameError::LineTooLong(long));
    let acts = h.actions();
    assert_eq!(
        sent(&acts, ana),
        [
            r#"{"jsonrpc":"2.0","method":"_bridge/line_dropped","params":{"limit":64,"sessionId":"s1","size":100}}"#
        ]
    );
    assert!(sent(&acts, bo).is_empty(), "{acts:?}");
    assert!(acts.iter().any(|a| matches!(
        a,
        Action::Send { to, stream: Stream::Session(s), .. } if *to == ana && s == "s1"
    )));
    // For bo's: only bo.
    let long = LineTooLong::new(64, 100, None, false).with_session("s2");
    h.server
        .handle_agent_line_too_long(h.now, run, &FrameError::LineTooLong(long));
    let acts = h.actions();
    assert!(sent(&acts, ana).is_empty(), "{acts:?}");
    assert_eq!(sent(&acts, bo).len(), 1);
    // No session, or one nobody holds: with two users on the agent,
    // nobody is told.
    for long in [
        LineTooLong::new(64, 100, None, false),
        LineTooLong::new(64, 100, None, false).with_session("s9"),
    ] {
        h.server
            .handle_agent_line_too_long(h.now, run, &FrameError::LineTooLong(long));
        let acts = h.actions();
        assert!(
            sent(&acts, ana).is_empty() && sent(&acts, bo).is_empty(),
            "{acts:?}"
        );
    }
}

/// An `initialize` asking for positions, with a cursor naming connection
/// `named` when given.
fn init_resumable(id: u64, named: Option<&str>) -> String {
    let cursor = named.map_or(String::new(), |n| {
        format!(r#","acp-codec/cursor":{{"connection":"{n}","position":1}}"#)
    });
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":1,"_meta":{{"acp-codec/resume":{{}}{cursor}}}}}}}"#
    )
}

/// Opens a connection of `p` that asks for positions (naming `named`);
/// the id the server gives its stream when the agent's answer comes.
fn open_resumable(
    h: &mut Harness,
    runs: &mut Vec<AgentRun>,
    p: &Principal,
    named: Option<&str>,
) -> (ConnectionId, Option<String>) {
    let c = h.server.open(h.now, Profile::WebSocket, p).unwrap();
    let acts = h.text(c, &init_resumable(9, named));
    runs.extend(started(&acts));
    let run = runs[0];
    let id = agent_id(&acts);
    let acts = h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":1}}}}"#),
    );
    let stream = sent(&acts, c).iter().find_map(|text| {
        let (_, _, answer) = crate::remote::unstamp(text)?;
        let v: serde_json::Value = serde_json::from_str(&answer).ok()?;
        v["result"]["_meta"]["acp-codec/resume"]["connection"]
            .as_str()
            .map(ToString::to_string)
    });
    (c, stream)
}

/// A user at the connection limit whose connection broke is not refused
/// when the client comes back (the detached connection does not count),
/// and takes it over; a user's detached connections are bounded by the
/// same limit, the oldest leaving first.
#[test]
fn a_detached_connection_never_keeps_its_user_from_coming_back() {
    let config = ServerConfig {
        max_user_connections: 1,
        ..ServerConfig::new()
    };
    let mut h = Harness::new(config);
    let mut runs = started(&h.settle());
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let (first, stream) = open_resumable(&mut h, &mut runs, &ana, None);
    let stream = stream.expect("the capability names the connection's stream");
    let err = h.server.open(h.now, Profile::WebSocket, &ana).unwrap_err();
    assert_eq!(err, ConnectError::TooManyConnections { limit: 1 });

    // The connection breaks: detached, and the user may connect again.
    h.server.handle_closed(h.now, first, Ending::Broken);
    assert!(writes(&h.settle()).is_empty(), "nothing is cancelled");
    assert_eq!(h.server.detached_connections(), 1);
    let (back, _) = open_resumable(&mut h, &mut runs, &ana, Some(&stream));
    assert_eq!(h.server.detached_connections(), 0, "taken over");
    // One live connection again: the limit holds.
    let err = h.server.open(h.now, Profile::WebSocket, &ana).unwrap_err();
    assert_eq!(err.http_status(), 429);

    // Two break in turn (the second a fresh connection, not a resume):
    // one detached connection is kept, the older leaves as at the end of
    // its grace.
    h.server.handle_closed(h.now, back, Ending::Broken);
    let _ = h.settle();
    h.now += secs(1);
    let (fresh, fresh_stream) = open_resumable(&mut h, &mut runs, &ana, None);
    h.server.handle_closed(h.now, fresh, Ending::Broken);
    let _ = h.settle();
    assert_eq!(h.server.detached_connections(), 1);
    // `back`'s stream is gone (no positions), `fresh`'s is kept.
    let (gone, none) = open_resumable(&mut h, &mut runs, &ana, Some(&stream));
    assert_eq!(none, None);
    h.server.handle_closed(h.now, gone, Ending::Broken);
    let _ = h.settle();
    let (_, kept) = open_resumable(&mut h, &mut runs, &ana, fresh_stream.as_deref());
    assert!(kept.is_some() && kept == fresh_stream, "{kept:?}");
    assert_eq!(h.server.detached_connections(), 0);
}

/// A user's agent's idle clock starts when her last connection closes
/// cleanly; when it breaks (a client that resumes), only once the
/// resume grace is over.
#[test]
fn the_idle_clock_starts_at_a_clean_close_and_after_the_grace_of_a_break() {
    let idle = secs(60);
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    for (ending, stops_at) in [
        (Ending::Clean, secs(5) + idle),
        (Ending::Broken, secs(5) + DEFAULT_RESUME_GRACE + idle),
    ] {
        let mut h = Harness::new(per_user(1));
        let mut runs = Vec::new();
        let (c, stream) = open_resumable(&mut h, &mut runs, &ana, None);
        assert!(stream.is_some(), "the client resumes");
        let run = runs[0];
        h.now = secs(5);
        h.server.handle_closed(h.now, c, ending);
        let _ = h.settle();
        if ending == Ending::Broken {
            // Held: the grace ends first, then the idle time runs.
            assert_eq!(h.server.poll_timeout(), Some(h.now + DEFAULT_RESUME_GRACE));
            h.now += DEFAULT_RESUME_GRACE;
            h.server.handle_timeout(h.now);
            let acts = h.settle();
            assert!(!acts.iter().any(|a| matches!(a, Action::StopAgent { .. })));
        }
        assert_eq!(h.server.poll_timeout(), Some(stops_at), "{ending:?}");
        h.now = stops_at;
        h.server.handle_timeout(h.now);
        let acts = h.actions();
        assert!(
            acts.contains(&Action::StopAgent {
                run,
                why: StopReason::Idle
            }),
            "{ending:?}: {acts:?}"
        );
    }
}

#[test]
fn a_message_over_the_clients_own_limit_is_replaced_by_what_tells_it() {
    let (mut h, run, ana) = with_session(ServerConfig::new());
    h.server.set_client_limit(ana, 300);
    // Within the limit: sent as it came.
    let short = update("s1", "hi");
    assert_eq!(
        sent(&h.agent(run, &short), ana),
        core::slice::from_ref(&short)
    );
    // A notification over it: the notice, on the session's stream.
    let long = update("s1", &"x".repeat(400));
    let acts = h.agent(run, &long);
    let to_ana = sent(&acts, ana);
    assert_eq!(to_ana.len(), 1, "{acts:?}");
    let v: serde_json::Value = serde_json::from_str(&to_ana[0]).unwrap();
    assert_eq!(v["method"], LINE_DROPPED);
    assert_eq!(v["params"]["size"], long.len());
    assert_eq!(v["params"]["limit"], 300);
    assert_eq!(v["params"]["sessionId"], "s1");
    assert!(matches!(
        acts.iter().find(|a| matches!(a, Action::Send { .. })),
        Some(Action::Send { stream: Stream::Session(s), .. }) if s == "s1"
    ));
    // A request of the agent over it: the agent gets the client's error
    // for it, the client the notice with its id.
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":"w1","method":"fs/write_text_file","params":{{"sessionId":"s1","path":"/x","content":"{}"}}}}"#,
        "y".repeat(400)
    );
    let acts = h.agent(run, &request);
    let to_agent = writes(&acts);
    assert_eq!(to_agent.len(), 1, "{acts:?}");
    let e: serde_json::Value = serde_json::from_str(&to_agent[0]).unwrap();
    assert_eq!(
        (&e["id"], &e["error"]["code"]),
        (&"w1".into(), &(-32600).into()),
        "{e}"
    );
    let v: serde_json::Value = serde_json::from_str(&sent(&acts, ana)[0]).unwrap();
    assert_eq!(
        (&v["method"], &v["params"]["id"]),
        (&LINE_DROPPED.into(), &"w1".into())
    );
    // An answer to the client's request over it: that request's error.
    let acts = h.text(ana, &prompt(8, "s1"));
    let id = agent_id(&acts);
    // (Its id after a result longer than any peek: read all the same.)
    let answer = format!(
        r#"{{"jsonrpc":"2.0","result":{{"stopReason":"end_turn","_meta":{{"pad":"{}"}}}},"id":{id}}}"#,
        "z".repeat(5000)
    );
    let to_ana = sent(&h.agent(run, &answer), ana);
    let v: serde_json::Value = serde_json::from_str(&to_ana[0]).unwrap();
    assert_eq!(
        (&v["id"], &v["error"]["code"]),
        (&8.into(), &(-32603).into()),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("300-byte limit"),
        "{v}"
    );
    // The connection goes on, and another client has no such limit.
    assert_eq!(
        sent(&h.agent(run, &short), ana),
        core::slice::from_ref(&short)
    );
    let mut h2 = with_session(ServerConfig::new());
    assert_eq!(sent(&h2.0.agent(h2.1, &long), h2.2), [long]);
}

#[test]
fn an_agent_line_handed_over_is_routed_as_one_lent() {
    let lines = [
        update("s1", "hi"),
        r#"{"jsonrpc":"2.0","method":"_x/note","params":{}}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":"r","method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}"#.to_string(),
        "not json".to_string(),
    ];
    let (mut lent, run, ana) = with_session(ServerConfig::new());
    let (mut owned, run2, _) = with_session(ServerConfig::new());
    for (i, line) in lines.into_iter().enumerate() {
        let a = lent.agent(run, &line);
        if i < 3 {
            assert_eq!(sent(&a, ana).len(), 1, "{line}");
        }
        owned.server.handle_agent_line(owned.now, run2, line);
        let b = owned.settle();
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}

/// A Streamable HTTP connection of `p`, its `initialize` answered by the
/// agent `run`.
fn http_connection(h: &mut Harness, run: AgentRun, p: &Principal) -> ConnectionId {
    // A name of its own: one byte more than the connections open.
    let random = [u8::try_from(h.server.connections() + 1).unwrap_or(0); 16];
    let PostOutcome::Opened(c) = h
        .server
        .handle_post(h.now, p, None, None, &init(0), Some(random))
        .unwrap()
    else {
        panic!("no connection")
    };
    let id = agent_id(&h.settle());
    let acts = h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
    );
    assert!(
        matches!(&acts[..], [Action::Answer { to, .. }] if *to == c),
        "{acts:?}"
    );
    c
}

/// What was sent to `to`: each message's stream, position and text.
fn sent_on(acts: &[Action], to: ConnectionId) -> Vec<(Stream, Option<Position>, String)> {
    acts.iter()
        .filter_map(|a| match a {
            Action::Send {
                to: t,
                stream,
                text,
                position,
            } if *t == to => Some((stream.clone(), *position, text.clone())),
            _ => None,
        })
        .collect()
}

/// A `session/load` over Streamable HTTP: the history the agent replays
/// before its answer goes on the session's stream, and so does the
/// answer, behind it (one stream is read in order: the client has the
/// whole history when the answer comes, whatever the timing of its
/// streams). Its error goes on the connection's stream (the load
/// attached nothing).
#[test]
fn a_loads_answer_comes_after_its_history_on_the_sessions_stream() {
    let mut h = Harness::new(ServerConfig::new());
    let run = started(&h.settle())[0];
    let p = Principal::anonymous();
    let first = http_connection(&mut h, run, &p);
    h.server
        .handle_post(h.now, &p, Some(first), None, &new_session(1), None)
        .unwrap();
    let id = agent_id(&h.settle());
    h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"s1"}}}}"#),
    );
    h.server.handle_closed(h.now, first, Ending::Broken);
    h.settle();

    // Another connection loads s1 (a client after a failover).
    let c = http_connection(&mut h, run, &p);
    let load = r#"{"jsonrpc":"2.0","id":7,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}"#;
    assert_eq!(
        h.server
            .handle_post(h.now, &p, Some(c), Some("s1"), load, None),
        Ok(PostOutcome::Accepted)
    );
    let id = agent_id(&h.settle());
    let mut acts = h.agent(run, &update("s1", "one"));
    acts.extend(h.agent(run, &update("s1", "two")));
    acts.extend(h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"modes":null}}}}"#),
    ));
    let got = sent_on(&acts, c);
    let s1 = Stream::Session("s1".into());
    assert_eq!(
        got.iter()
            .map(|(s, _, t)| (s, t.as_str()))
            .collect::<Vec<_>>(),
        [
            (&s1, update("s1", "one").as_str()),
            (&s1, update("s1", "two").as_str()),
            (&s1, r#"{"jsonrpc":"2.0","id":7,"result":{"modes":null}}"#),
        ],
        "{acts:?}"
    );
    let positions: Vec<Position> = got.iter().map(|(_, p, _)| p.unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    // The client opens the session's stream after its `POST`: it is the
    // connection's now.
    assert!(h
        .server
        .handle_stream_opened(h.now, &p, c, Some("s1"), None)
        .is_ok());

    // A load the agent refuses: its error on the connection's stream.
    // The session's stream opens before the load (as the official
    // TypeScript SDK's client opens it): a session never seen, which the
    // agent's own user may reattach.
    assert!(h
        .server
        .handle_stream_opened(h.now, &p, c, Some("s2"), None)
        .is_ok());
    let load = r#"{"jsonrpc":"2.0","id":8,"method":"session/load","params":{"sessionId":"s2","cwd":"/","mcpServers":[]}}"#;
    h.server
        .handle_post(h.now, &p, Some(c), Some("s2"), load, None)
        .unwrap();
    let id = agent_id(&h.settle());
    let acts = h.agent(
        run,
        &format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32002,"message":"no such session"}}}}"#
        ),
    );
    let got = sent_on(&acts, c);
    assert_eq!(got.len(), 1, "{acts:?}");
    assert_eq!(got[0].0, Stream::Connection);
    assert!(got[0].2.contains("no such session"), "{got:?}");
}

/// An `initialize` the agent refuses (`-32022`: it speaks v2 only) leaves
/// the connection uninitialized: the client asks again in v2, with the
/// same id, and that one reaches the agent and its answer the client.
/// (With feature `v2` the server asks again itself, through a translator:
/// `tests/bridge.rs`.)
#[cfg(not(feature = "v2"))]
#[test]
fn an_initialize_refused_for_its_version_may_be_asked_again() {
    let mut h = Harness::new(users_config());
    let run = started(&h.settle())[0];
    let ana = h
        .server
        .open(
            h.now,
            Profile::WebSocket,
            &Principal::user("ana", Permissions::READ_WRITE),
        )
        .unwrap();
    let acts = h.text(ana, &init_as(0, Dialect::V1));
    let id = agent_id(&acts);
    let refusal = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"requested":1,"supported":[2]}}}}}}"#
    );
    let acts = h.agent(run, &refusal);
    let answer = sent(&acts, ana);
    assert_eq!(answer.len(), 1, "{acts:?}");
    assert!(answer[0].contains("-32022"), "{answer:?}");
    // Again, in v2: forwarded, not refused as a second `initialize`.
    let acts = h.text(ana, &init_as(0, Dialect::V2));
    assert!(sent(&acts, ana).is_empty(), "{acts:?}");
    let id = agent_id(&acts);
    let acts = h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":2}}}}"#),
    );
    assert_eq!(
        sent(&acts, ana),
        [r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}"#]
    );
    // Initialized now: a third is refused.
    let acts = h.text(ana, &init_as(1, Dialect::V2));
    assert!(sent(&acts, ana)[0].contains("-32600"), "{acts:?}");
}

/// Long lines take the routing peek: routed as short ones are, forwarded
/// as the bytes that came (a request with the router's id), and refused
/// as short ones are (another user's session, a session named twice past
/// the long value, an id too long).
#[test]
fn long_lines_are_routed_by_their_head_and_refused_as_short_ones() {
    let (mut h, run, ana) = with_session(users_config());
    let bo = h.ws(&Principal::user("bo", Permissions::READ_WRITE));
    h.settle();
    let long = "line of tool output\\n".repeat(crate::remote::transport::PEEK_FROM / 20);
    // The agent's long update reaches ana alone, byte for byte.
    let line = update("s1", &long);
    assert!(line.len() > crate::remote::transport::PEEK_FROM);
    let acts = h.agent(run, &line);
    assert_eq!(sent(&acts, ana), [line]);
    assert!(sent(&acts, bo).is_empty());
    // Ana's long prompt goes on with the router's id, the rest as it came.
    let params = format!(r#"{{"sessionId":"s1","prompt":[{{"type":"text","text":"{long}"}}]}}"#);
    let text = format!(r#"{{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{params}}}"#);
    let acts = h.text(ana, &text);
    let id = agent_id(&acts);
    assert_eq!(
        writes(&acts),
        [format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"session/prompt\",\"params\":{params}}}\n"
        )]
    );
    // Bo's long prompt naming ana's session is refused, and so is one that
    // names his own way in first and ana's after the long value.
    let twice = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"b","prompt":[{{"type":"text","text":"{long}"}}],"sessionId":"s1"}}}}"#
    );
    for request in [text.replace(r#""id":9"#, r#""id":3"#), twice] {
        let acts = h.text(bo, &request);
        assert!(writes(&acts).is_empty(), "{acts:?}");
        let [refusal] = &sent(&acts, bo)[..] else {
            panic!("{acts:?}")
        };
        assert!(refusal.contains("-32602"), "{refusal}");
    }
    // An id past the transport's limit closes the connection, as it does
    // on a short message.
    let id = "i".repeat(crate::remote::DEFAULT_MAX_ID_LENGTH + 1);
    let acts = h.text(bo, &text.replace(r#""id":9"#, &format!(r#""id":"{id}""#)));
    assert!(writes(&acts).is_empty(), "{acts:?}");
    assert!(
        acts.iter().any(|a| matches!(a, Action::Close { conn, .. } | Action::Send { to: conn, .. } if *conn == bo)),
        "{acts:?}"
    );
}

/// A long update for a client that asked for positions reaches it,
/// stamped, its text as the agent wrote it.
#[test]
fn a_long_update_reaches_a_resumable_client_stamped() {
    let mut h = Harness::new(users_config());
    let mut runs = started(&h.settle());
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let (c, _) = open_resumable(&mut h, &mut runs, &ana, None);
    let run = runs[0];
    let acts = h.text(c, &new_session(1));
    let id = agent_id(&acts);
    h.agent(
        run,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"s1"}}}}"#),
    );
    let long = "1\\n".repeat(crate::remote::transport::PEEK_FROM);
    let line = update("s1", &long);
    let acts = h.agent(run, &line);
    let [text] = &sent(&acts, c)[..] else {
        panic!("{acts:?}")
    };
    let (_, _, unstamped) = crate::remote::unstamp(text).expect("stamped");
    assert_eq!(unstamped, line);
}

#[cfg(feature = "v2")]
mod bridge;
