//! The invariant behind the `mcp_relay` fuzz target (`acp_bridge::mcp::
//! relay::Relay`, the MCP-over-ACP relay of `acp-client`), shared with
//! acp-bridge's `tests/integration/mcp_relay_seeds.rs`, which replays the
//! committed seeds.
//!
//! Input: three bytes an event, in any order: the agent's `mcp/connect`
//! (to a declared server or not), `mcp/message` request or notification
//! (on a connection by number, or naming only a server), `mcp/disconnect`;
//! a server's exit, its answer to any line it was sent (or to an id never
//! sent), its own request to the agent and the agent's answer to it; time
//! passing; the session's end. Each agent request carries its number in
//! its MCP method (`m7`), and a server answers with the method of the line
//! it answers, so an answer can be traced to its request. Asserted, from
//! the relay's actions alone:
//! - every agent request is answered exactly once: at once when refused,
//!   else once its server answers, exits or is disconnected, or its
//!   deadline passes (everything is answered after the session's end and
//!   a long wait);
//! - a successful answer to request `m7` carries the result of the line of
//!   `m7`, never another request's;
//! - lines go only to a connection that was started and not yet stopped,
//!   and a connection's requests reach it in the order the agent sent
//!   them;
//! - a server's request reaches the agent naming the connection it came
//!   on, and the agent's answer goes back to that connection under the
//!   server's own id.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use acp_bridge::mcp::relay::{Action, Relay, ToAgent};
use acp_codec::acp::RequestId;

/// What the check saw of one connection.
#[derive(Default)]
struct Conn {
    started: bool,
    stopped: bool,
    /// Lines sent to its server, not answered: MCP id to the request's
    /// number.
    lines: BTreeMap<String, u64>,
    /// The last request number that reached it.
    last: Option<u64>,
}

struct World {
    relay: Relay,
    now: Duration,
    /// Agent requests: number to answered?
    asked: BTreeMap<u64, bool>,
    next: u64,
    conns: BTreeMap<String, Conn>,
    /// Connection ids the relay gave out, in order.
    known: Vec<String>,
    /// The relay's requests to the agent: our id to (connection, server id).
    to_agent: BTreeMap<i64, (String, String)>,
    next_ours: i64,
}

impl World {
    fn drain(&mut self) {
        while let Some(a) = self.relay.poll_action() {
            match a {
                Action::Start { connection, .. } => {
                    let c = self.conns.entry(connection.clone()).or_default();
                    assert!(!c.started, "{connection} started twice");
                    c.started = true;
                    if !self.known.contains(&connection) {
                        self.known.push(connection);
                    }
                }
                Action::Stop { connection } => {
                    let c = self.conns.entry(connection.clone()).or_default();
                    assert!(
                        c.started && !c.stopped,
                        "{connection} stopped twice or never started"
                    );
                    c.stopped = true;
                }
                Action::ToServer { connection, line } => {
                    let c = self
                        .conns
                        .get_mut(&connection)
                        .unwrap_or_else(|| panic!("line to unknown {connection}"));
                    assert!(
                        c.started && !c.stopped,
                        "line to a stopped {connection}: {line}"
                    );
                    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                    if let (Some(id), Some(m)) = (v.get("id"), v["method"].as_str()) {
                        if let Some(n) = m.strip_prefix('m').and_then(|n| n.parse::<u64>().ok()) {
                            assert!(c.last < Some(n), "{connection}: m{n} after m{:?}", c.last);
                            c.last = Some(n);
                            c.lines.insert(id.to_string(), n);
                        }
                    }
                }
                Action::Agent(ToAgent::Answer { id, outcome }) => {
                    let RequestId::Number(n) = id else {
                        panic!("answer to {id:?}")
                    };
                    let n = n as u64;
                    let done = self
                        .asked
                        .get_mut(&n)
                        .unwrap_or_else(|| panic!("answer to m{n}, never asked"));
                    assert!(!*done, "m{n} answered twice");
                    *done = true;
                    if let Ok(text) = outcome {
                        if let Some(carried) = text.strip_prefix(r#"{"result":{"m":"m"#) {
                            assert_eq!(carried, format!("{n}\"}}}}"), "m{n} got {text}");
                        }
                    }
                }
                Action::Agent(ToAgent::Request {
                    connection,
                    server_request,
                    params,
                }) => {
                    let v: serde_json::Value = serde_json::from_str(&params).unwrap();
                    assert_eq!(v["connectionId"], connection.as_str());
                    let ours = self.next_ours;
                    self.next_ours += 1;
                    self.relay.handle_request_sent(
                        RequestId::Number(ours),
                        &connection,
                        &server_request,
                        self.now,
                    );
                    self.to_agent.insert(ours, (connection, server_request));
                }
                Action::Agent(ToAgent::Notify { params }) => {
                    let v: serde_json::Value = serde_json::from_str(&params).unwrap();
                    assert!(self.conns.contains_key(v["connectionId"].as_str().unwrap()));
                }
                Action::Agent(ToAgent::Problem(_)) => {}
            }
        }
    }

    /// A server's answer line from `connection` to the line with MCP id
    /// `id` (or a bogus one).
    fn answer_from_server(&mut self, connection: &str, pick: u8) {
        let Some(c) = self.conns.get_mut(connection) else {
            return;
        };
        let id = match c.lines.keys().nth(usize::from(pick) % (c.lines.len() + 1)) {
            Some(id) => id.clone(),
            None => r#""bogus""#.to_owned(),
        };
        let n = c.lines.remove(&id);
        let line = match n {
            Some(n) if pick & 0x80 == 0 => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"m":"m{n}"}}}}"#)
            }
            Some(_) => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":1,"message":"no"}}}}"#)
            }
            None => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"m":"bogus"}}}}"#),
        };
        self.relay.handle_server_line(connection, &line);
    }
}

/// Runs the events of `data` and checks the invariants.
pub fn check(data: &[u8]) {
    let mut w = World {
        relay: Relay::new(Duration::from_secs(5)),
        now: Duration::ZERO,
        asked: BTreeMap::new(),
        next: 0,
        conns: BTreeMap::new(),
        known: Vec::new(),
        to_agent: BTreeMap::new(),
        next_ours: 0,
    };
    w.relay.declare("s0", "zero");
    w.relay.declare("s1", "one");
    w.relay.set_session("sess");
    let server = |b: u8| ["s0", "s1", "nope"][usize::from(b % 3)];
    for ev in data.chunks(3) {
        let [op, a, b] = [ev[0], *ev.get(1).unwrap_or(&0), *ev.get(2).unwrap_or(&0)];
        // A connection by number (one past those known: unknown), or none.
        let conn = |w: &World| -> Option<String> {
            if a & 0x80 != 0 {
                return None;
            }
            let i = usize::from(a) % (w.known.len() + 1);
            Some(
                w.known
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| "mcp-none".to_owned()),
            )
        };
        match op % 10 {
            0 => {
                let n = w.next;
                w.next += 1;
                w.asked.insert(n, false);
                w.relay
                    .handle_connect(RequestId::Number(n as i64), server(b));
            }
            1 => {
                let n = w.next;
                w.next += 1;
                w.asked.insert(n, false);
                let c = conn(&w);
                w.relay.handle_message(
                    RequestId::Number(n as i64),
                    c.as_deref(),
                    server(b),
                    &format!("m{n}"),
                    Some(r#"{"x":[1,"\u00e9"]}"#),
                    w.now,
                );
            }
            2 => {
                let c = conn(&w);
                w.relay
                    .handle_notification(c.as_deref(), server(b), "notifications/x", None);
            }
            3 => {
                let n = w.next;
                w.next += 1;
                w.asked.insert(n, false);
                let c = conn(&w).unwrap_or_else(|| "s0".to_owned());
                w.relay.handle_disconnect(RequestId::Number(n as i64), &c);
            }
            4 => {
                if let Some(c) = conn(&w) {
                    w.relay.handle_server_exit(&c, "killed");
                }
            }
            5 => {
                if let Some(c) = conn(&w) {
                    w.answer_from_server(&c, b);
                }
            }
            6 => {
                if let Some(c) = conn(&w) {
                    let line = format!(r#"{{"jsonrpc":"2.0","id":"q{b}","method":"roots/list"}}"#);
                    w.relay.handle_server_line(&c, &line);
                }
            }
            7 => {
                let pick = w
                    .to_agent
                    .keys()
                    .nth(usize::from(b) % (w.to_agent.len() + 1))
                    .copied();
                if let Some(ours) = pick {
                    let (connection, server_request) = w.to_agent.remove(&ours).unwrap_or_default();
                    w.relay.handle_agent_answer(
                        &RequestId::Number(ours),
                        Ok(r#"{"result":{"roots":[]}}"#),
                    );
                    // Its answer, if sent, goes to that connection under
                    // the server's id.
                    while let Some(a) = w.relay.poll_action() {
                        if let Action::ToServer {
                            connection: to,
                            line,
                        } = &a
                        {
                            assert_eq!(to, &connection);
                            assert!(
                                line.contains(&format!(r#""id":{server_request}"#)),
                                "{line}"
                            );
                            let c = &w.conns[to];
                            assert!(c.started && !c.stopped);
                        } else {
                            panic!("unexpected {a:?}");
                        }
                    }
                }
            }
            8 => {
                w.now += Duration::from_millis(u64::from(b) * 40);
                w.relay.handle_timeout(w.now);
            }
            _ => w.relay.handle_session_end(),
        }
        w.drain();
        // Every connection started is one the relay named.
        for (k, c) in &w.conns {
            assert!(c.started, "{k}");
        }
    }
    w.relay.handle_session_end();
    w.drain();
    w.now += Duration::from_secs(3600);
    w.relay.handle_timeout(w.now);
    w.drain();
    let unanswered: BTreeSet<u64> = w
        .asked
        .iter()
        .filter(|(_, d)| !**d)
        .map(|(n, _)| *n)
        .collect();
    assert!(unanswered.is_empty(), "never answered: {unanswered:?}");
    assert_eq!(w.relay.open_connections(), 0);
    assert!(!w.relay.busy());
}
