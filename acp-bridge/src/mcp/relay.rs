//! The MCP-over-ACP relay's rules, without I/O: which connections are
//! open and to which declared server, the agent's requests waiting for a
//! server's answer (by the id the relay gave them on the MCP side), the
//! server's requests waiting for the agent's, and the deadline of each.
//!
//! The caller feeds what happens (`handle_*`, with `now`) and carries out
//! the [`Action`]s it takes with [`Relay::poll_action`]: start or stop a
//! server, write a line to one, answer or ask the agent. Every agent
//! request gets exactly one answer: the server's (as the schema's
//! `{"result": …}` or `{"error": …}`), or an ACP error when its connection
//! is unknown or closed, its server exited or was disconnected, or it did
//! not answer by the deadline. The MCP payload (`method`, `params`,
//! results and errors) is passed on as its text.
//!
//! A connection is opened by `mcp/connect` (the RFD's lifecycle), or, for
//! an `mcp/message` naming only a `serverId` (as the v1 unstable schema
//! has it, without connections), on first use: one connection per server,
//! whose id is the server's.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use acp_codec::acp::{RequestId, RpcError};
use acp_codec::ErrorCode;
use serde::Deserialize;
use serde_json::value::RawValue;

/// What the caller must do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start the declared server `server` for the new connection.
    Start {
        /// The connection (its `connectionId`).
        connection: String,
        /// The declared server's id (`serverId`).
        server: String,
    },
    /// Write one JSON-RPC line (no newline) to the connection's server.
    ToServer {
        /// The connection.
        connection: String,
        /// The MCP message.
        line: String,
    },
    /// Stop the connection's server.
    Stop {
        /// The connection.
        connection: String,
    },
    /// Something for the agent or the user.
    Agent(ToAgent),
}

/// What the caller sends the agent (or shows the user), encoded with its
/// own tracker.
#[derive(Debug, Clone, PartialEq)]
pub enum ToAgent {
    /// Answer the agent's request `id`: a result's JSON text, or an error.
    Answer {
        /// The agent's request.
        id: RequestId<'static>,
        /// The result (JSON text) or the error.
        outcome: Result<String, RpcError<'static>>,
    },
    /// Send the agent an `mcp/message` request with these params (JSON
    /// text); then report its id with [`Relay::handle_request_sent`].
    Request {
        /// The connection the server's request came on.
        connection: String,
        /// The server's own id of its request (JSON text).
        server_request: String,
        /// The `mcp/message` params.
        params: String,
    },
    /// Send the agent an `mcp/message` notification with these params.
    Notify {
        /// The `mcp/message` params.
        params: String,
    },
    /// Something the user should know (a server's bad line, its exit).
    Problem(String),
}

/// Why a connection no longer takes messages.
#[derive(Debug, Clone)]
enum Closed {
    Exited(String),
    Disconnected,
}

/// One connection to a declared server.
#[derive(Debug)]
struct Conn {
    server: String,
    closed: Option<Closed>,
    /// The next id of a request to the server.
    next_id: u64,
    /// The agent's requests the server has not answered, by the id they
    /// carry to the server.
    waiting: BTreeMap<u64, Waiting>,
}

#[derive(Debug)]
struct Waiting {
    id: RequestId<'static>,
    deadline: Duration,
}

/// A server's request sent on to the agent.
#[derive(Debug)]
struct Asked {
    connection: String,
    server_request: String,
    deadline: Duration,
}

/// The relay of one ACP connection. See the module docs.
#[derive(Debug)]
pub struct Relay {
    /// Declared servers: `serverId` to name.
    servers: BTreeMap<String, String>,
    conns: BTreeMap<String, Conn>,
    next_conn: u64,
    /// The server requests sent to the agent, by the id of our request.
    asked: HashMap<RequestId<'static>, Asked>,
    /// Every deadline: (when, connection, MCP id) of an agent's request.
    deadlines: BTreeSet<(Duration, String, u64)>,
    actions: VecDeque<Action>,
    timeout: Duration,
    /// The session the servers belong to, added to `mcp/message`s for the
    /// agent (`sessionId`: lets a server route them).
    session: Option<String>,
}

/// An MCP message from a server, its parts as text.
#[derive(Deserialize)]
struct FromServer<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// Where the RFD's errors of the relay itself fall: the JSON-RPC
/// internal error, with the reason in the message.
const RELAY_ERROR: ErrorCode = ErrorCode::INTERNAL_ERROR;

impl Relay {
    /// A relay whose waits end after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            servers: BTreeMap::new(),
            conns: BTreeMap::new(),
            next_conn: 0,
            asked: HashMap::new(),
            deadlines: BTreeSet::new(),
            actions: VecDeque::new(),
            timeout,
            session: None,
        }
    }

    /// Declares a server the agent may connect to: its `serverId` and
    /// name.
    pub fn declare(&mut self, server: &str, name: &str) {
        self.servers.insert(server.to_owned(), name.to_owned());
    }

    /// The session whose `mcp/message`s the relay sends (its id goes in
    /// their params as `sessionId`).
    pub fn set_session(&mut self, session: &str) {
        self.session = Some(session.to_owned());
    }

    /// The next action to carry out.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The earliest deadline of a wait, if any.
    pub fn next_deadline(&self) -> Option<Duration> {
        let agent = self.deadlines.first().map(|d| d.0);
        let ours = self.asked.values().map(|a| a.deadline).min();
        match (agent, ours) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether an agent's request waits for a server.
    pub fn busy(&self) -> bool {
        !self.deadlines.is_empty()
    }

    /// How many connections are open (not closed by exit or disconnect).
    pub fn open_connections(&self) -> usize {
        self.conns.values().filter(|c| c.closed.is_none()).count()
    }

    fn name(&self, server: &str) -> String {
        self.servers
            .get(server)
            .cloned()
            .unwrap_or_else(|| server.to_owned())
    }

    fn answer(&mut self, id: RequestId<'static>, outcome: Result<String, RpcError<'static>>) {
        self.actions
            .push_back(Action::Agent(ToAgent::Answer { id, outcome }));
    }

    fn refuse(&mut self, id: RequestId<'static>, message: String) {
        self.answer(id, Err(RpcError::new(RELAY_ERROR, message)));
    }

    fn open(&mut self, connection: String, server: &str) {
        self.conns.insert(
            connection.clone(),
            Conn {
                server: server.to_owned(),
                closed: None,
                next_id: 0,
                waiting: BTreeMap::new(),
            },
        );
        self.actions.push_back(Action::Start {
            connection,
            server: server.to_owned(),
        });
    }

    /// The agent's `mcp/connect` (`id`) to the server declared as
    /// `server`: a new connection, its server started, the answer its
    /// `connectionId`; an unknown server is refused.
    pub fn handle_connect(&mut self, id: RequestId<'static>, server: &str) {
        if !self.servers.contains_key(server) {
            return self.refuse(id, format!("no MCP server {server:?} was offered"));
        }
        self.next_conn = self.next_conn.saturating_add(1);
        let connection = format!("mcp-{}", self.next_conn);
        self.open(connection.clone(), server);
        let result = serde_json::json!({ "connectionId": connection }).to_string();
        self.answer(id, Ok(result));
    }

    /// The connection an `mcp/message` names: its `connectionId`, else
    /// the implicit connection of its declared `serverId` (opened now if
    /// need be). `Err` is why there is none.
    fn connection_of(&mut self, connection: Option<&str>, server: &str) -> Result<String, String> {
        let key = match connection {
            Some(c) => c.to_owned(),
            None if self.servers.contains_key(server) => {
                if !self.conns.contains_key(server) {
                    self.open(server.to_owned(), server);
                }
                server.to_owned()
            }
            None => return Err(format!("no MCP server {server:?} was offered")),
        };
        let Some(conn) = self.conns.get(&key) else {
            return Err(format!("no MCP connection {key:?}"));
        };
        match &conn.closed {
            None => Ok(key),
            Some(Closed::Disconnected) => Err(format!("MCP connection {key:?} is disconnected")),
            Some(Closed::Exited(why)) => Err(format!(
                "MCP server {} of connection {key:?} exited: {why}",
                self.name(&conn.server)
            )),
        }
    }

    /// The agent's `mcp/message` request `id` (`connection` or `server`
    /// naming where it goes; `method` and `params` as text): sent to the
    /// server under an id of the relay's, or refused.
    pub fn handle_message(
        &mut self,
        id: RequestId<'static>,
        connection: Option<&str>,
        server: &str,
        method: &str,
        params: Option<&str>,
        now: Duration,
    ) {
        let key = match self.connection_of(connection, server) {
            Ok(k) => k,
            Err(why) => return self.refuse(id, why),
        };
        let deadline = now.saturating_add(self.timeout);
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        let n = conn.next_id;
        conn.next_id = n.saturating_add(1);
        conn.waiting.insert(n, Waiting { id, deadline });
        self.deadlines.insert((deadline, key.clone(), n));
        let line = mcp_line(Some(&n.to_string()), method, params);
        self.actions.push_back(Action::ToServer {
            connection: key,
            line,
        });
    }

    /// The agent's `mcp/message` notification: to its server, or a
    /// problem reported when it has none.
    pub fn handle_notification(
        &mut self,
        connection: Option<&str>,
        server: &str,
        method: &str,
        params: Option<&str>,
    ) {
        match self.connection_of(connection, server) {
            Ok(key) => {
                let line = mcp_line(None, method, params);
                self.actions.push_back(Action::ToServer {
                    connection: key,
                    line,
                });
            }
            Err(why) => self
                .actions
                .push_back(Action::Agent(ToAgent::Problem(format!(
                    "mcp: dropped {method}: {why}"
                )))),
        }
    }

    /// The agent's `mcp/disconnect` (`id`): the server stopped, what
    /// waited on it answered with an error, the answer `{}`.
    pub fn handle_disconnect(&mut self, id: RequestId<'static>, connection: &str) {
        match self.conns.get(connection) {
            Some(c) if c.closed.is_none() => {
                self.close(connection, Closed::Disconnected);
                self.answer(id, Ok("{}".to_owned()));
            }
            // Already gone: closing it again is done.
            Some(_) => self.answer(id, Ok("{}".to_owned())),
            None => self.refuse(id, format!("no MCP connection {connection:?}")),
        }
    }

    /// Closes `connection`: its server stopped, the agent's requests on
    /// it answered with why.
    fn close(&mut self, connection: &str, why: Closed) {
        let Some(conn) = self.conns.get_mut(connection) else {
            return;
        };
        if conn.closed.is_some() {
            return;
        }
        let waiting = std::mem::take(&mut conn.waiting);
        let server = conn.server.clone();
        conn.closed = Some(why.clone());
        let name = self.name(&server);
        let message = match &why {
            Closed::Exited(e) => format!("MCP server {name} exited: {e}"),
            Closed::Disconnected => format!("MCP connection {connection:?} was disconnected"),
        };
        for (n, w) in waiting {
            self.deadlines
                .remove(&(w.deadline, connection.to_owned(), n));
            self.refuse(w.id, message.clone());
        }
        let asked: Vec<RequestId<'static>> = self
            .asked
            .iter()
            .filter(|(_, a)| a.connection == connection)
            .map(|(id, _)| id.clone())
            .collect();
        for id in asked {
            self.asked.remove(&id);
        }
        if let Closed::Exited(e) = &why {
            self.actions
                .push_back(Action::Agent(ToAgent::Problem(format!(
                    "mcp: server {name} exited: {e}"
                ))));
        }
        self.actions.push_back(Action::Stop {
            connection: connection.to_owned(),
        });
    }

    /// The server of `connection` exited (or could not start, or its
    /// input or output broke): `why`.
    pub fn handle_server_exit(&mut self, connection: &str, why: &str) {
        self.close(connection, Closed::Exited(why.to_owned()));
    }

    /// The session ended: every connection closed.
    pub fn handle_session_end(&mut self) {
        let open: Vec<String> = self
            .conns
            .iter()
            .filter(|(_, c)| c.closed.is_none())
            .map(|(k, _)| k.clone())
            .collect();
        for k in open {
            self.close(&k, Closed::Disconnected);
        }
    }

    /// One line from the server of `connection`: an answer to an agent's
    /// request, or the server's own request or notification for the
    /// agent; anything else is a problem reported.
    pub fn handle_server_line(&mut self, connection: &str, line: &str) {
        let Some(conn) = self.conns.get_mut(connection) else {
            return;
        };
        if conn.closed.is_some() {
            return;
        }
        let server = conn.server.clone();
        let Ok(msg) = serde_json::from_str::<FromServer<'_>>(line) else {
            let shown: String = line.chars().take(80).collect();
            let name = self.name(&server);
            return self
                .actions
                .push_back(Action::Agent(ToAgent::Problem(format!(
                    "mcp: {name} wrote a bad line: {shown}"
                ))));
        };
        match (msg.id, msg.method) {
            (Some(id), None) => {
                let n = id.get().parse::<u64>().ok();
                let waiting = n.and_then(|n| conn.waiting.remove(&n).map(|w| (n, w)));
                let Some((n, w)) = waiting else {
                    // Late (answered already as timed out) or never asked.
                    return;
                };
                self.deadlines
                    .remove(&(w.deadline, connection.to_owned(), n));
                let outcome = match (msg.result, msg.error) {
                    (_, Some(e)) => format!(r#"{{"error":{}}}"#, e.get()),
                    (Some(r), None) => format!(r#"{{"result":{}}}"#, r.get()),
                    (None, None) => r#"{"result":null}"#.to_owned(),
                };
                self.answer(w.id, Ok(outcome));
            }
            (id, Some(method)) => {
                let params = self.agent_params(
                    connection,
                    &server,
                    id.map(RawValue::get),
                    &method,
                    msg.params.map(RawValue::get),
                );
                match id {
                    // Its wait starts when the caller reports the id
                    // (`handle_request_sent`).
                    Some(id) => self.actions.push_back(Action::Agent(ToAgent::Request {
                        connection: connection.to_owned(),
                        server_request: id.get().to_owned(),
                        params,
                    })),
                    None => self
                        .actions
                        .push_back(Action::Agent(ToAgent::Notify { params })),
                }
            }
            (None, None) => {
                let name = self.name(&server);
                self.actions
                    .push_back(Action::Agent(ToAgent::Problem(format!(
                        "mcp: {name} wrote a message with neither id nor method"
                    ))));
            }
        }
    }

    /// The params of an `mcp/message` for the agent.
    fn agent_params(
        &self,
        connection: &str,
        server: &str,
        id: Option<&str>,
        method: &str,
        params: Option<&str>,
    ) -> String {
        let request_id = id.map_or(String::new(), |i| {
            serde_json::from_str::<String>(i).unwrap_or_else(|_| i.to_owned())
        });
        let mut text = serde_json::json!({
            "serverId": server,
            "requestId": request_id,
            "connectionId": connection,
            "method": method,
        })
        .to_string();
        text.pop(); // the closing brace
        if let Some(p) = params {
            text.push_str(r#","params":"#);
            text.push_str(p);
        }
        if let Some(s) = &self.session {
            text.push_str(r#","sessionId":"#);
            text.push_str(&serde_json::Value::from(s.as_str()).to_string());
        }
        text.push('}');
        text
    }

    /// The caller sent the agent the request of an [`ToAgent::Request`]
    /// with id `id`: its answer goes back to the server.
    pub fn handle_request_sent(
        &mut self,
        id: RequestId<'static>,
        connection: &str,
        server_request: &str,
        now: Duration,
    ) {
        let open = self
            .conns
            .get(connection)
            .is_some_and(|c| c.closed.is_none());
        if open {
            self.asked.insert(
                id,
                Asked {
                    connection: connection.to_owned(),
                    server_request: server_request.to_owned(),
                    deadline: now.saturating_add(self.timeout),
                },
            );
        }
    }

    /// Whether `id` is one of the relay's requests to the agent.
    pub fn asked(&self, id: &RequestId<'_>) -> bool {
        self.asked.contains_key(&id.to_owned_id())
    }

    /// The agent answered the relay's request `id`: a result's text (the
    /// schema's `{"result": …}` or `{"error": …}`, or the bare result as
    /// the RFD has it) or an error; the server gets it under its own id.
    pub fn handle_agent_answer(
        &mut self,
        id: &RequestId<'_>,
        outcome: Result<&str, &RpcError<'_>>,
    ) {
        let Some(asked) = self.asked.remove(&id.to_owned_id()) else {
            return;
        };
        let member = match outcome {
            Ok(text) => unwrap_outcome(text),
            Err(e) => {
                let error = serde_json::json!({"code": e.code.0, "message": &*e.message});
                format!(r#""error":{error}"#)
            }
        };
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{},{member}}}"#,
            asked.server_request
        );
        self.actions.push_back(Action::ToServer {
            connection: asked.connection,
            line,
        });
    }

    /// Time passed: every wait over its deadline ends; an agent's request
    /// is answered with an error, a server's gets an MCP error.
    pub fn handle_timeout(&mut self, now: Duration) {
        while let Some(first) = self.deadlines.first().cloned() {
            if first.0 > now {
                break;
            }
            self.deadlines.remove(&first);
            let (_, key, n) = first;
            let Some(conn) = self.conns.get_mut(&key) else {
                continue;
            };
            let Some(w) = conn.waiting.remove(&n) else {
                continue;
            };
            let server = conn.server.clone();
            let name = self.name(&server);
            let secs = self.timeout.as_secs_f64();
            self.refuse(
                w.id,
                format!("MCP server {name} did not answer within {secs:.1} s"),
            );
        }
        let expired: Vec<RequestId<'static>> = self
            .asked
            .iter()
            .filter(|(_, a)| a.deadline <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            let error = RpcError::new(RELAY_ERROR, "the agent did not answer in time");
            self.handle_agent_answer(&id, Err(&error));
        }
    }
}

/// An MCP JSON-RPC line: `id` (JSON text) for a request, none for a
/// notification; `params` as text.
fn mcp_line(id: Option<&str>, method: &str, params: Option<&str>) -> String {
    let mut line = String::from(r#"{"jsonrpc":"2.0""#);
    if let Some(id) = id {
        line.push_str(r#","id":"#);
        line.push_str(id);
    }
    line.push_str(r#","method":"#);
    line.push_str(&serde_json::Value::from(method).to_string());
    if let Some(p) = params.filter(|p| p.trim() != "null") {
        line.push_str(r#","params":"#);
        line.push_str(p);
    }
    line.push('}');
    line
}

/// The `"result": …` or `"error": …` member for the server, from the
/// agent's answer: the schema's carrier object unwrapped, else the whole
/// answer as the result.
fn unwrap_outcome(text: &str) -> String {
    #[derive(Deserialize)]
    struct Carrier<'a> {
        #[serde(borrow, default)]
        result: Option<&'a RawValue>,
        #[serde(borrow, default)]
        error: Option<&'a RawValue>,
    }
    match serde_json::from_str::<Carrier<'_>>(text) {
        Ok(Carrier { error: Some(e), .. }) => format!(r#""error":{}"#, e.get()),
        Ok(Carrier {
            result: Some(r), ..
        }) => format!(r#""result":{}"#, r.get()),
        _ => format!(r#""result":{text}"#),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(r: &mut Relay) -> Vec<Action> {
        std::iter::from_fn(|| r.poll_action()).collect()
    }

    const T: Duration = Duration::ZERO;

    #[test]
    fn connect_message_answer_disconnect() {
        let mut r = Relay::new(Duration::from_secs(5));
        r.declare("s1", "files");
        r.handle_connect(RequestId::Number(1), "s1");
        let a = drain(&mut r);
        assert_eq!(
            a,
            [
                Action::Start {
                    connection: "mcp-1".into(),
                    server: "s1".into()
                },
                Action::Agent(ToAgent::Answer {
                    id: RequestId::Number(1),
                    outcome: Ok(r#"{"connectionId":"mcp-1"}"#.into())
                })
            ]
        );
        r.handle_message(
            RequestId::Number(2),
            Some("mcp-1"),
            "s1",
            "tools/list",
            Some(r#"{"a":1.50e3}"#),
            T,
        );
        assert_eq!(
            drain(&mut r),
            [Action::ToServer {
                connection: "mcp-1".into(),
                line: r#"{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{"a":1.50e3}}"#
                    .into()
            }]
        );
        assert!(r.busy());
        r.handle_server_line("mcp-1", r#"{"jsonrpc":"2.0","id":0,"result":{"tools":[]}}"#);
        assert_eq!(
            drain(&mut r),
            [Action::Agent(ToAgent::Answer {
                id: RequestId::Number(2),
                outcome: Ok(r#"{"result":{"tools":[]}}"#.into())
            })]
        );
        assert!(!r.busy());
        r.handle_disconnect(RequestId::Number(3), "mcp-1");
        let a = drain(&mut r);
        assert!(a.contains(&Action::Stop {
            connection: "mcp-1".into()
        }));
        r.handle_message(RequestId::Number(4), Some("mcp-1"), "s1", "x", None, T);
        let Some(Action::Agent(ToAgent::Answer {
            outcome: Err(e), ..
        })) = r.poll_action()
        else {
            panic!()
        };
        assert!(e.message.contains("disconnected"), "{}", e.message);
    }

    #[test]
    fn death_and_timeouts_are_answered() {
        let mut r = Relay::new(Duration::from_secs(5));
        r.declare("s1", "files");
        r.handle_message(RequestId::Number(1), None, "s1", "a", None, T);
        r.handle_message(RequestId::Number(2), None, "s1", "b", None, T);
        drain(&mut r);
        r.handle_timeout(Duration::from_secs(4));
        assert_eq!(r.poll_action(), None);
        r.handle_timeout(Duration::from_secs(5));
        let a = drain(&mut r);
        assert_eq!(a.len(), 2, "{a:?}");
        assert!(
            matches!(&a[0], Action::Agent(ToAgent::Answer { id: RequestId::Number(1), outcome: Err(e) }) if e.message.contains("within 5.0 s"))
        );
        r.handle_message(RequestId::Number(3), None, "s1", "c", None, T);
        drain(&mut r);
        r.handle_server_exit("s1", "exit status 3");
        let a = drain(&mut r);
        assert!(
            matches!(&a[0], Action::Agent(ToAgent::Answer { id: RequestId::Number(3), outcome: Err(e) }) if e.message.contains("files exited: exit status 3")),
            "{a:?}"
        );
        // A late answer after the exit is nobody's.
        r.handle_server_line("s1", r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
        assert_eq!(r.poll_action(), None);
    }

    #[test]
    fn server_requests_go_to_the_agent_and_back() {
        let mut r = Relay::new(Duration::from_secs(5));
        r.declare("s1", "files");
        r.set_session("sess");
        r.handle_connect(RequestId::Number(1), "s1");
        drain(&mut r);
        r.handle_server_line(
            "mcp-1",
            r#"{"jsonrpc":"2.0","id":"q","method":"roots/list"}"#,
        );
        let Some(Action::Agent(ToAgent::Request {
            connection,
            server_request,
            params,
        })) = r.poll_action()
        else {
            panic!()
        };
        assert_eq!(server_request, r#""q""#);
        let p: serde_json::Value = serde_json::from_str(&params).unwrap();
        assert_eq!(p["requestId"], "q");
        assert_eq!(p["sessionId"], "sess");
        r.handle_request_sent(RequestId::Number(0), &connection, &server_request, T);
        r.handle_agent_answer(&RequestId::Number(0), Ok(r#"{"result":{"roots":[]}}"#));
        assert_eq!(
            r.poll_action(),
            Some(Action::ToServer {
                connection: "mcp-1".into(),
                line: r#"{"jsonrpc":"2.0","id":"q","result":{"roots":[]}}"#.into()
            })
        );
    }
}
