//! `remote::Server`'s per-user connection limit while connections are
//! detached, through the public API: any sequence of one user's opens
//! (fresh, or naming a stream to resume), breaks, clean closes and time
//! keeps the rules a reconnecting user relies on, held against a model
//! that counts the live connections itself:
//!
//! - an open is refused exactly when the user's live connections are at
//!   the limit (never because of their detached ones);
//! - detached connections never outnumber the limit;
//! - a stream that is still kept is taken over by the connection naming
//!   it (it stops being detached).
#![cfg(feature = "alloc")]

use std::collections::BTreeSet;
use std::time::Duration;

use acp_codec::remote::{
    unstamp, Action, AgentRun, ConnectError, ConnectionId, Ending, Permissions, PoolMode,
    Principal, Server, ServerConfig, DEFAULT_RESUME_GRACE,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Open a connection asking for positions; `Some(i)`: naming the
    /// `i`-th stream seen so far (a reconnect).
    Open(Option<usize>),
    /// The `i`-th live connection breaks (it is detached).
    Break(usize),
    /// Time passes.
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::option::of(0usize..8).prop_map(Op::Open),
        3 => (0usize..8).prop_map(Op::Break),
        1 => (0u64..150).prop_map(Op::Wait),
    ]
}

struct Run {
    server: Server,
    now: Duration,
    agent: Option<AgentRun>,
    /// Connections the server closed itself.
    closed: Vec<ConnectionId>,
}

impl Run {
    /// Carries out the actions until none is left: agents started,
    /// `initialize` answered; the streams named in the answers.
    fn settle(&mut self, streams: &mut Vec<String>) {
        loop {
            let mut answers = Vec::new();
            let mut acted = false;
            while let Some(action) = self.server.poll_action() {
                acted = true;
                match action {
                    Action::StartAgent { run, .. } => {
                        self.server.handle_agent_started(self.now, run, 1);
                        self.agent = Some(run);
                    }
                    Action::WriteAgent { line, .. } => {
                        let v: serde_json::Value = serde_json::from_slice(&line.to_vec()).unwrap();
                        if v["method"] == "initialize" {
                            answers.push(format!(
                                r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":1}}}}"#,
                                v["id"]
                            ));
                        }
                    }
                    Action::Send { to, text, .. } => {
                        // Written to the socket at once.
                        self.server.handle_sent(self.now, to, text.len());
                        named_stream(&text, streams);
                    }
                    Action::Close { conn, .. } => self.closed.push(conn),
                    _ => {}
                }
            }
            if let Some(run) = self.agent {
                for answer in answers {
                    self.server.handle_agent_line(self.now, run, &answer);
                }
            }
            if !acted {
                return;
            }
        }
    }
}

/// Records the stream an `initialize` answer names.
fn named_stream(text: &str, streams: &mut Vec<String>) {
    let Some((None, _, message)) = unstamp(text) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&message).unwrap();
    if let Some(id) = v["result"]["_meta"]["acp-codec/resume"]["connection"].as_str() {
        if !streams.iter().any(|s| s == id) {
            streams.push(id.to_owned());
        }
    }
}

fn initialize(named: Option<&str>) -> String {
    let cursor = named.map_or(String::new(), |n| {
        format!(r#","acp-codec/cursor":{{"connection":"{n}","position":1}}"#)
    });
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"_meta":{{"acp-codec/resume":{{}}{cursor}}}}}}}"#
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn a_user_is_refused_only_for_their_live_connections(
        limit in 1usize..4,
        per_user in any::<bool>(),
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let mut config = ServerConfig::new();
        config.max_user_connections = limit;
        config.pool = if per_user { PoolMode::PerUser } else { PoolMode::Shared };
        let mut run = Run { server: Server::new(config, Duration::ZERO), now: Duration::ZERO, agent: None, closed: Vec::new() };
        let ana = Principal::user("ana", Permissions::READ_WRITE);
        let mut streams = Vec::new();
        run.settle(&mut streams);
        // The model: the live connections.
        let mut live: Vec<ConnectionId> = Vec::new();
        let mut ever = BTreeSet::new();
        for op in ops {
            match op {
                Op::Open(named) => {
                    let named = named.and_then(|i| streams.get(i % streams.len().max(1)).cloned());
                    let before = run.server.detached_connections();
                    match run.server.open_websocket(run.now, &ana, Some([1; 16])).map(|(c, _)| c) {
                        Ok(c) => {
                            prop_assert!(live.len() < limit, "opened past the limit");
                            prop_assert!(ever.insert(c));
                            live.push(c);
                            run.server.handle_text(run.now, c, &initialize(named.as_deref()));
                            run.settle(&mut streams);
                            let after = run.server.detached_connections();
                            prop_assert!(after == before || after + 1 == before);
                        }
                        Err(e) => {
                            let expected = ConnectError::TooManyConnections { limit };
                            prop_assert_eq!(
                                (e.status, e.body),
                                (expected.http_status(), expected.to_string())
                            );
                            prop_assert_eq!(live.len(), limit, "refused below the limit");
                        }
                    }
                }
                Op::Break(i) => {
                    if !live.is_empty() {
                        let c = live.remove(i % live.len());
                        run.server.handle_closed(run.now, c, Ending::Broken);
                        run.settle(&mut streams);
                    }
                }
                Op::Wait(secs) => {
                    run.now += Duration::from_secs(secs);
                    run.server.handle_timeout(run.now);
                    run.settle(&mut streams);
                }
            }
            live.retain(|c| !run.closed.contains(c));
            prop_assert!(run.server.detached_connections() <= limit);
            prop_assert_eq!(run.server.connections(), live.len());
        }
        // Everything broken: past every grace, nothing stays detached.
        for c in live {
            run.server.handle_closed(run.now, c, Ending::Broken);
        }
        run.settle(&mut streams);
        run.now += DEFAULT_RESUME_GRACE;
        run.server.handle_timeout(run.now);
        run.settle(&mut streams);
        prop_assert_eq!(run.server.detached_connections(), 0);
    }
}
