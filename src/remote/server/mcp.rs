//! MCP over ACP, bridged for agents that only start MCP servers
//! themselves (stdio): every agent of today.
//!
//! The server tells its clients it takes MCP servers over ACP
//! (`mcpCapabilities.acp` in the `initialize` answer) once its caller has
//! set a relay for their agent ([`Server::set_mcp_relay`]). A client's
//! `session/new`, `session/load` or `session/resume` that offers `"type":
//! "acp"` servers to an agent that does not take them itself reaches the
//! agent with a stdio server in place of each: the relay command, with
//! the server's id (`serverId`; `id` in the RFD) as its last argument. The agent starts it in its
//! room; it reaches back to the caller, which checks its token and hands
//! it over ([`Server::handle_mcp_open`], under the user the token is
//! theirs). From there the relay's MCP lines become `mcp/connect`,
//! `mcp/message` and `mcp/disconnect` on the connection of the client
//! that offered the server, and the client's answers and its own
//! `mcp/message`s go back to the relay ([`Action::WriteMcp`]).
//!
//! Through a user's room ([`Server::set_session_dir`]) the agent names
//! the room's paths, the user's server the user's: every string of the
//! agent's MCP requests' `params` and answers' `result` that is, whole, an
//! absolute path or a `file://` URI under the room (the roots it answers
//! `roots/list` with, a tool's path argument) moves to the directory of the
//! session that offered the server, on whole components; what the server
//! sends comes back as it is.
//!
//! These messages go to the client through the same queue and resume
//! rules as the agent's own requests (on the connection's stream), so a
//! call in flight survives a client's reconnect. A request the client
//! does not answer within the relay's `timeout` (by default
//! [`DEFAULT_MCP_TIMEOUT`]), or whose client left, is answered to the
//! agent with an MCP error, never left hanging.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use serde_json::{json, Map, Value};

use super::paths::{move_mcp_paths, Root};
use super::{Action, ConnectionId, Event, Server};
use crate::acp::{names, Message, RequestId};
use crate::remote::router::{ClientId, MessageKind, Out};
use crate::remote::transport::Stream;

/// How long the server waits for a client's answer to an `mcp/*` request
/// before it answers the agent's MCP request with an error: 300 seconds,
/// longer than a client's resume grace, so a tool call survives a
/// reconnect.
pub const DEFAULT_MCP_TIMEOUT: Duration = Duration::from_secs(300);

/// Most `"acp"` servers the server remembers for each agent (the oldest
/// is forgotten past it, and a relay for it refused).
pub const MAX_MCP_DECLARED: usize = 1024;

/// Most lines a relay may send before its client answers `mcp/connect`
/// (a request past it is answered with an error at once).
const MAX_EARLY: usize = 64;

/// The prefix of the ids of the server's own requests to a client.
const ID_PREFIX: &str = "acp-bridge/mcp/";

/// The MCP error of a request that got no answer from the client's side.
const RELAY_ERROR: i64 = -32603;

const MCP_CONNECT: &str = "mcp/connect";
const MCP_MESSAGE: &str = "mcp/message";
const MCP_DISCONNECT: &str = "mcp/disconnect";

/// The stdio server an agent is given in place of an `"acp"` one: the
/// relay command, which reaches back to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpRelay {
    /// The program.
    pub command: String,
    /// Its arguments (the server's `id` is added after them).
    pub args: Vec<String>,
    /// Its environment (names and values), the relay's token among them.
    pub env: Vec<(String, String)>,
    /// Longest wait for a client's answer ([`DEFAULT_MCP_TIMEOUT`]).
    pub timeout: Duration,
}

impl McpRelay {
    /// A relay run as `command` with `args` and `env`, waiting
    /// [`DEFAULT_MCP_TIMEOUT`].
    pub fn new(command: String, args: Vec<String>, env: Vec<(String, String)>) -> Self {
        Self {
            command,
            args,
            env,
            timeout: DEFAULT_MCP_TIMEOUT,
        }
    }

    /// The same, waiting `timeout` for a client's answers.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// One relay the agent started, numbered by the server from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct McpLink(pub u64);

impl fmt::Display for McpLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mcp relay {}", self.0)
    }
}

/// Why a relay was refused ([`Server::handle_mcp_open`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpRefusal {
    /// No client of this user offered a server with this id (or it was
    /// another user's).
    UnknownServer(String),
}

impl fmt::Display for McpRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownServer(id) => {
                write!(f, "no client of this user offered the mcp server {id:?}")
            }
        }
    }
}

impl core::error::Error for McpRefusal {}

/// Who offered an `"acp"` server.
#[derive(Debug)]
struct Declared {
    client: ClientId,
    user: Option<String>,
    /// The client's directory: the `cwd` of the session that offered it.
    cwd: Option<Root>,
}

/// One relay and its MCP connection to a client.
#[derive(Debug)]
struct Link {
    key: Option<String>,
    /// The `"acp"` server's id.
    server: String,
    client: ClientId,
    /// The client's `connectionId`, once `mcp/connect` is answered.
    connection: Option<String>,
    /// The directory of the session that offered the server, on the
    /// client's side: where the room's paths move.
    client_dir: Option<Root>,
    /// The relay's lines that came before it.
    early: Vec<String>,
    /// The client's requests sent on to the relay, by the id they carry
    /// there.
    from_client: BTreeMap<u64, RequestId<'static>>,
    next: u64,
}

/// What a request of the server to a client was.
#[derive(Debug)]
enum Asked {
    Connect,
    /// An MCP request of the agent: its id on the relay's side (JSON).
    Message(Value),
    Disconnect,
}

#[derive(Debug)]
struct Pending {
    link: McpLink,
    asked: Asked,
    deadline: Duration,
}

/// The bridge's state: relays by agent, the servers offered, the links
/// and the server's requests waiting for their client.
#[derive(Debug, Default)]
pub(super) struct Bridges {
    relays: BTreeMap<Option<String>, McpRelay>,
    /// Whether each agent takes `"acp"` servers itself.
    native: BTreeMap<Option<String>, bool>,
    /// The `initialize` each connection waits for the answer of.
    initializing: BTreeMap<ConnectionId, RequestId<'static>>,
    declared: BTreeMap<(Option<String>, String), Declared>,
    /// Each agent's declarations in order, for forgetting the oldest (one
    /// user's many never push out another's).
    order: BTreeMap<Option<String>, VecDeque<String>>,
    links: BTreeMap<McpLink, Link>,
    next_link: u64,
    next_id: u64,
    pending: BTreeMap<String, Pending>,
}

impl Bridges {
    pub(super) fn deadline(&self) -> Option<Duration> {
        self.pending.values().map(|p| p.deadline).min()
    }
}

/// What the bridge made of a client's message.
pub(super) enum Inbound {
    /// Not the bridge's: on to the agent as it came.
    Pass,
    /// Taken by the bridge.
    Taken,
    /// On to the agent as this text instead (its `"acp"` servers
    /// replaced).
    Rewritten(String),
}

fn id_value(id: &RequestId<'_>) -> Value {
    serde_json::to_value(id).unwrap_or(Value::Null)
}

fn line(value: &Value) -> Vec<u8> {
    let mut out = value.to_string().into_bytes();
    out.push(b'\n');
    out
}

impl Server {
    /// Sets the relay that `user`'s agent is given in place of each
    /// `"acp"` MCP server (`None`: MCP over ACP is not bridged for it;
    /// `user` as in a [`Principal`](super::Principal): `None` is the anonymous user, or
    /// every user of a shared agent). From then on the `initialize`
    /// answers its clients get say `mcpCapabilities.acp`.
    pub fn set_mcp_relay(&mut self, user: Option<&str>, relay: Option<McpRelay>) {
        let key = self.agent_key(user);
        match relay {
            Some(r) => self.mcp.relays.insert(key, r),
            None => self.mcp.relays.remove(&key),
        };
    }

    /// A relay started by `user`'s agent (whose token the caller checked)
    /// for the `"acp"` server `server` (its `id`): the server asks the
    /// client that offered it to connect (`mcp/connect`), and takes the
    /// relay's lines ([`Server::handle_mcp_line`]) from now on.
    ///
    /// # Errors
    ///
    /// [`McpRefusal::UnknownServer`] when no client of this user's agent
    /// offered `server`, or another user did: close the relay.
    pub fn handle_mcp_open(
        &mut self,
        now: Duration,
        user: Option<&str>,
        server: &str,
    ) -> Result<McpLink, McpRefusal> {
        let key = self.agent_key(user);
        let refused = || McpRefusal::UnknownServer(server.to_owned());
        let d = self
            .mcp
            .declared
            .get(&(key.clone(), server.to_owned()))
            .ok_or_else(refused)?;
        if d.user.as_deref() != user {
            return Err(refused());
        }
        let (client, client_dir) = (d.client, d.cwd.clone());
        self.mcp.next_link = self.mcp.next_link.wrapping_add(1);
        let link = McpLink(self.mcp.next_link);
        self.mcp.links.insert(
            link,
            Link {
                key,
                server: server.to_owned(),
                client,
                connection: None,
                client_dir,
                early: Vec::new(),
                from_client: BTreeMap::new(),
                next: 0,
            },
        );
        let params = json!({ "acpId": server });
        self.mcp_ask(now, link, MCP_CONNECT, params, Asked::Connect);
        Ok(link)
    }

    /// One line (MCP JSON-RPC, without its `\n`) from `link`'s relay: the
    /// agent's MCP request or notification, to the client as
    /// `mcp/message`; or its answer to one the client sent.
    pub fn handle_mcp_line(&mut self, now: Duration, link: McpLink, text: &str) {
        let dirs = self.mcp_dirs(link);
        let Some(l) = self.mcp.links.get_mut(&link) else {
            return;
        };
        let Some(connection) = l.connection.clone() else {
            if l.early.len() < MAX_EARLY {
                l.early.push(text.to_owned());
                return;
            }
            let id = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|mut v| v.get_mut("id").map(Value::take));
            if let Some(id) = id {
                let why = format!("more than {MAX_EARLY} mcp messages before the client connected");
                let error = json!({"jsonrpc": "2.0", "id": id,
                                   "error": {"code": RELAY_ERROR, "message": why}});
                self.actions.push_back(Action::WriteMcp {
                    link,
                    line: line(&error),
                });
            }
            return;
        };
        let server = l.server.clone();
        let Ok(Value::Object(mut msg)) = serde_json::from_str::<Value>(text) else {
            self.log(format!(
                "{link}: a line that is not a json-rpc object, dropped"
            ));
            return;
        };
        let method = msg.remove("method");
        let id = msg.remove("id");
        match (method, id) {
            (Some(Value::String(method)), id) => {
                // The schema's members (`serverId`, `requestId`) and the
                // RFD's (`connectionId`).
                let request = match &id {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                let mut params = Map::new();
                params.insert("serverId".into(), Value::String(server));
                params.insert("requestId".into(), Value::String(request));
                params.insert("connectionId".into(), Value::String(connection));
                params.insert("method".into(), Value::String(method));
                if let Some(mut p) = msg.remove("params") {
                    if let Some((room, client)) = &dirs {
                        move_mcp_paths(&mut p, room, client);
                    }
                    params.insert("params".into(), p);
                }
                let params = Value::Object(params);
                match id {
                    Some(id) => {
                        let asked = Asked::Message(id);
                        self.mcp_ask(now, link, MCP_MESSAGE, params, asked);
                    }
                    None => {
                        let text =
                            json!({"jsonrpc": "2.0", "method": MCP_MESSAGE, "params": params});
                        self.mcp_to_client(now, link, text.to_string(), MessageKind::Notification);
                    }
                }
            }
            (None, Some(Value::Number(n))) => {
                let Some(asker) = n.as_u64().and_then(|n| l.from_client.remove(&n)) else {
                    return;
                };
                let mut answer = Map::new();
                answer.insert("jsonrpc".into(), "2.0".into());
                answer.insert("id".into(), id_value(&asker));
                // One inner outcome in the result, as the schema has it.
                let outcome = match (msg.remove("result"), msg.remove("error")) {
                    (_, Some(e)) => json!({ "error": e }),
                    (r, None) => {
                        let mut r = r.unwrap_or(Value::Null);
                        if let Some((room, client)) = &dirs {
                            move_mcp_paths(&mut r, room, client);
                        }
                        json!({ "result": r })
                    }
                };
                answer.insert("result".into(), outcome);
                let kind = MessageKind::answer(&asker);
                self.mcp_to_client(now, link, Value::Object(answer).to_string(), kind);
            }
            _ => self.log(format!("{link}: a line that is no mcp message, dropped")),
        }
    }

    /// `link`'s relay is gone (the agent stopped it, or it died): the
    /// client is told (`mcp/disconnect`), and what it asked the relay is
    /// answered with an error.
    pub fn handle_mcp_closed(&mut self, now: Duration, link: McpLink) {
        let Some(l) = self.mcp.links.get(&link) else {
            return;
        };
        let asked: Vec<RequestId<'static>> = l.from_client.values().cloned().collect();
        let connection = l.connection.clone();
        for id in asked {
            let msg = "the agent closed this mcp connection";
            let text = super::error_answer(&id, crate::ErrorCode::INTERNAL_ERROR, msg.to_owned());
            self.mcp_to_client(now, link, text, MessageKind::answer(&id));
        }
        if let Some(connection) = connection {
            let params = json!({ "connectionId": connection });
            self.mcp_ask(now, link, MCP_DISCONNECT, params, Asked::Disconnect);
        }
        self.mcp.pending.retain(|_, p| p.link != link);
        self.mcp.links.remove(&link);
    }

    /// Where `link`'s paths move: from its agent's room to the directory
    /// of the client's session that offered the server; `None` when
    /// either is unknown (no room: paths pass as they are).
    fn mcp_dirs(&self, link: McpLink) -> Option<(Root, Root)> {
        let l = self.mcp.links.get(&link)?;
        let room = self.room_of(&l.key)?;
        Some((room.clone(), l.client_dir.clone()?))
    }

    /// Sends a request of the server's own to `link`'s client.
    fn mcp_ask(&mut self, now: Duration, link: McpLink, method: &str, params: Value, asked: Asked) {
        let Some(l) = self.mcp.links.get(&link) else {
            return;
        };
        let timeout = self
            .mcp
            .relays
            .get(&l.key)
            .map_or(DEFAULT_MCP_TIMEOUT, |r| r.timeout);
        self.mcp.next_id = self.mcp.next_id.wrapping_add(1);
        let id = format!("{ID_PREFIX}{}", self.mcp.next_id);
        let text = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let deadline = now.saturating_add(timeout);
        self.mcp.pending.insert(
            id.clone(),
            Pending {
                link,
                asked,
                deadline,
            },
        );
        let kind = MessageKind::Request(RequestId::Str(id.clone().into()));
        if !self.mcp_to_client(now, link, text.to_string(), kind) {
            // The client left: no answer will come.
            self.mcp_unanswered(&id, "the client that offered this mcp server is gone");
        }
    }

    /// Queues `text` for `link`'s client, as the agent's messages go;
    /// `false` when it has no connection any more.
    fn mcp_to_client(
        &mut self,
        now: Duration,
        link: McpLink,
        text: String,
        kind: MessageKind,
    ) -> bool {
        let Some(l) = self.mcp.links.get(&link) else {
            return false;
        };
        let (key, to) = (l.key.clone(), l.client);
        let here = self
            .agents
            .get(&key)
            .is_some_and(|a| a.clients.contains_key(&to));
        if here {
            let out = Out::Client {
                to,
                stream: Stream::Connection,
                text,
                kind,
            };
            self.dispatch(&key, alloc::vec![out], now);
        }
        here
    }

    /// The server's request `id` will get no answer: the agent's MCP
    /// request it carried is answered with an error saying `why`.
    fn mcp_unanswered(&mut self, id: &str, why: &str) {
        if let Some(p) = self.mcp.pending.remove(id) {
            self.mcp_fail(p, why);
        }
    }

    /// The agent's MCP request `p` carried (or, for `mcp/connect`, every
    /// request of its relay) answered with an error saying `why`.
    fn mcp_fail(&mut self, p: Pending, why: &str) {
        match p.asked {
            Asked::Message(mcp_id) => {
                let error = json!({"jsonrpc": "2.0", "id": mcp_id,
                                   "error": {"code": RELAY_ERROR, "message": why}});
                self.actions.push_back(Action::WriteMcp {
                    link: p.link,
                    line: line(&error),
                });
            }
            Asked::Connect => {
                let early = self
                    .mcp
                    .links
                    .get_mut(&p.link)
                    .map(|l| core::mem::take(&mut l.early))
                    .unwrap_or_default();
                for text in early {
                    let id = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|mut v| v.get_mut("id").map(Value::take));
                    if let Some(id) = id {
                        let error = json!({"jsonrpc": "2.0", "id": id,
                                           "error": {"code": RELAY_ERROR, "message": why}});
                        self.actions.push_back(Action::WriteMcp {
                            link: p.link,
                            line: line(&error),
                        });
                    }
                }
                self.mcp.links.remove(&p.link);
                self.mcp.pending.retain(|_, q| q.link != p.link);
                self.actions.push_back(Action::CloseMcp {
                    link: p.link,
                    reason: why.to_owned(),
                });
            }
            Asked::Disconnect => {}
        }
    }

    /// The server's requests whose time is up.
    pub(super) fn mcp_timeout(&mut self, now: Duration) {
        let due: Vec<(String, Duration)> = self
            .mcp
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(id, p)| (id.clone(), p.deadline))
            .collect();
        for (id, _) in due {
            let secs = self
                .mcp
                .pending
                .get(&id)
                .and_then(|p| self.mcp.links.get(&p.link))
                .and_then(|l| self.mcp.relays.get(&l.key))
                .map_or(DEFAULT_MCP_TIMEOUT, |r| r.timeout)
                .as_secs();
            let why = format!("the client did not answer this mcp request within {secs} s");
            self.mcp_unanswered(&id, &why);
        }
    }

    /// A client's message before its agent gets it: its `initialize`
    /// noted (its answer gets the capability), its `"acp"` servers
    /// replaced for an agent that does not take them, its answers to the
    /// server's `mcp/*` requests and its `mcp/message`s to a relay taken.
    pub(super) fn mcp_inbound(
        &mut self,
        now: Duration,
        conn: ConnectionId,
        message: &Message<'_>,
    ) -> Inbound {
        let Some(c) = self.conns.get(&conn) else {
            return Inbound::Pass;
        };
        let (key, client, user) = (c.agent.clone(), c.client, c.user.clone());
        match message {
            Message::Request(r) if r.method == names::INITIALIZE => {
                // Whether the agent has a relay is known by its answer (a
                // user's agent starts on this request).
                self.mcp.initializing.insert(conn, r.id.to_owned_id());
                Inbound::Pass
            }
            Message::Request(r)
                if r.method == names::SESSION_NEW
                    || r.method == names::SESSION_LOAD
                    || r.method == names::SESSION_RESUME =>
            {
                let params = r.params.as_ref().map(|p| p.get());
                match self.mcp_replace(&key, client, user, params) {
                    Some(params) => {
                        let text = json!({"jsonrpc": "2.0", "id": id_value(&r.id),
                                          "method": r.method, "params": params});
                        Inbound::Rewritten(text.to_string())
                    }
                    None => Inbound::Pass,
                }
            }
            Message::Request(r) if r.method == MCP_MESSAGE => {
                let params = r.params.as_ref().map(|p| p.get());
                match self.mcp_link_of(&key, client, params) {
                    Some((link, params)) => {
                        self.mcp_to_relay(link, Some(r.id.to_owned_id()), params);
                        Inbound::Taken
                    }
                    None => Inbound::Pass,
                }
            }
            Message::Notification(n) if n.method == MCP_MESSAGE => {
                let params = n.params.as_ref().map(|p| p.get());
                match self.mcp_link_of(&key, client, params) {
                    Some((link, params)) => {
                        self.mcp_to_relay(link, None, params);
                        Inbound::Taken
                    }
                    None => Inbound::Pass,
                }
            }
            Message::Response(r) => self.mcp_answered(now, client, &r.id, Ok(r.result.get())),
            Message::Error(e) => {
                let error = serde_json::to_value(&e.error).unwrap_or(Value::Null);
                self.mcp_answered(now, client, &e.id, Err(error))
            }
            _ => Inbound::Pass,
        }
    }

    /// A client's answer to one of the server's `mcp/*` requests.
    fn mcp_answered(
        &mut self,
        now: Duration,
        client: ClientId,
        id: &RequestId<'_>,
        outcome: Result<&str, Value>,
    ) -> Inbound {
        let RequestId::Str(id) = id else {
            return Inbound::Pass;
        };
        let Some(p) = self.mcp.pending.get(id.as_ref()) else {
            return Inbound::Pass;
        };
        let link = p.link;
        if self.mcp.links.get(&link).map(|l| l.client) != Some(client) {
            return Inbound::Pass;
        }
        let Some(p) = self.mcp.pending.remove(id.as_ref()) else {
            return Inbound::Taken;
        };
        match (p.asked, outcome) {
            (Asked::Connect, Ok(result)) => {
                let connection = serde_json::from_str::<Value>(result)
                    .ok()
                    .and_then(|v| v.get("connectionId")?.as_str().map(ToOwned::to_owned));
                let Some(connection) = connection else {
                    let why = "the client's mcp/connect answer has no connectionId";
                    self.mcp_fail(
                        Pending {
                            asked: Asked::Connect,
                            ..p
                        },
                        why,
                    );
                    return Inbound::Taken;
                };
                let early = match self.mcp.links.get_mut(&link) {
                    Some(l) => {
                        l.connection = Some(connection);
                        core::mem::take(&mut l.early)
                    }
                    None => Vec::new(),
                };
                for text in early {
                    self.handle_mcp_line(now, link, &text);
                }
            }
            (Asked::Connect, Err(e)) => {
                let why = format!(
                    "the client refused to connect this mcp server: {}",
                    e.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason")
                );
                self.mcp_fail(
                    Pending {
                        asked: Asked::Connect,
                        ..p
                    },
                    &why,
                );
            }
            (Asked::Message(mcp_id), outcome) => {
                let mut answer = Map::new();
                answer.insert("jsonrpc".into(), "2.0".into());
                answer.insert("id".into(), mcp_id);
                match outcome {
                    Ok(result) => {
                        let result = serde_json::from_str(result).unwrap_or(Value::Null);
                        let (member, inner) = inner_outcome(result);
                        answer.insert(member.into(), inner);
                    }
                    Err(error) => {
                        answer.insert("error".into(), error);
                    }
                }
                self.actions.push_back(Action::WriteMcp {
                    link,
                    line: line(&Value::Object(answer)),
                });
            }
            (Asked::Disconnect, _) => {}
        }
        Inbound::Taken
    }

    /// The link of `client` an `mcp/message`'s `connectionId` names, and
    /// the params.
    fn mcp_link_of(
        &self,
        key: &Option<String>,
        client: ClientId,
        params: Option<&str>,
    ) -> Option<(McpLink, Map<String, Value>)> {
        let Ok(Value::Object(params)) = serde_json::from_str::<Value>(params?) else {
            return None;
        };
        let connection = params.get("connectionId")?.as_str()?;
        let link = self.mcp.links.iter().find_map(|(id, l)| {
            (l.key == *key && l.client == client && l.connection.as_deref() == Some(connection))
                .then_some(*id)
        })?;
        Some((link, params))
    }

    /// A client's `mcp/message` to a relay, as the MCP message it wraps.
    fn mcp_to_relay(
        &mut self,
        link: McpLink,
        id: Option<RequestId<'static>>,
        mut params: Map<String, Value>,
    ) {
        let Some(l) = self.mcp.links.get_mut(&link) else {
            return;
        };
        let mut msg = Map::new();
        msg.insert("jsonrpc".into(), "2.0".into());
        if let Some(id) = id {
            l.next = l.next.wrapping_add(1);
            l.from_client.insert(l.next, id);
            msg.insert("id".into(), l.next.into());
        }
        msg.insert(
            "method".into(),
            params.remove("method").unwrap_or(Value::Null),
        );
        if let Some(p) = params.remove("params").filter(|p| !p.is_null()) {
            msg.insert("params".into(), p);
        }
        self.actions.push_back(Action::WriteMcp {
            link,
            line: line(&Value::Object(msg)),
        });
    }

    /// A session request's params with each `"acp"` server replaced by
    /// the relay, when its agent does not take them; `None` to leave it.
    fn mcp_replace(
        &mut self,
        key: &Option<String>,
        client: ClientId,
        user: Option<String>,
        params: Option<&str>,
    ) -> Option<Value> {
        let relay = self.mcp.relays.get(key)?;
        if self.mcp.native.get(key) == Some(&true) {
            return None;
        }
        let params = params?;
        // Most sessions offer no `"acp"` server: not read further.
        if !params.contains("\"acp\"") {
            return None;
        }
        let mut params: Value = serde_json::from_str(params).ok()?;
        // Before the session's paths move into the room: the client's.
        let cwd = params
            .get("cwd")
            .and_then(Value::as_str)
            .and_then(Root::new);
        let servers = params.get_mut("mcpServers")?.as_array_mut()?;
        if !servers
            .iter()
            .any(|s| s.get("type").and_then(Value::as_str) == Some("acp"))
        {
            return None;
        }
        let env: Vec<Value> = relay
            .env
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        let mut declared = Vec::new();
        for s in servers.iter_mut() {
            if s.get("type").and_then(Value::as_str) != Some("acp") {
                continue;
            }
            let (Some(name), Some(id)) = (
                s.get("name").and_then(Value::as_str),
                // `serverId` in the schema, `id` in the RFD.
                s.get("serverId")
                    .or_else(|| s.get("id"))
                    .and_then(Value::as_str),
            ) else {
                continue;
            };
            let mut args = relay.args.clone();
            args.push(id.to_owned());
            declared.push(id.to_owned());
            *s = json!({"name": name, "command": relay.command, "args": args, "env": env});
        }
        if !declared.is_empty() {
            self.event(Event::McpOffered { agent: key.clone() });
        }
        for id in declared {
            let entry = (key.clone(), id);
            match self.mcp.declared.get(&entry) {
                // Another user's: theirs stays theirs, and this relay
                // will be refused.
                Some(d) if d.user != user => continue,
                Some(_) => {}
                None => self
                    .mcp
                    .order
                    .entry(key.clone())
                    .or_default()
                    .push_back(entry.1.clone()),
            }
            self.mcp.declared.insert(
                entry,
                Declared {
                    client,
                    user: user.clone(),
                    cwd: cwd.clone(),
                },
            );
        }
        if let Some(order) = self.mcp.order.get_mut(key) {
            while order.len() > MAX_MCP_DECLARED {
                if let Some(old) = order.pop_front() {
                    self.mcp.declared.remove(&(key.clone(), old));
                }
            }
        }
        Some(params)
    }

    /// A message for `conn` before it is queued: the answer to its
    /// `initialize` says `mcpCapabilities.acp` (and tells the server
    /// whether the agent takes `"acp"` servers itself).
    pub(super) fn mcp_outbound(
        &mut self,
        conn: ConnectionId,
        text: String,
        kind: &MessageKind,
    ) -> String {
        let Some(id) = self.mcp.initializing.get(&conn) else {
            return text;
        };
        if !kind.answers(id) {
            return text;
        }
        self.mcp.initializing.remove(&conn);
        let Some(key) = self.conns.get(&conn).map(|c| c.agent.clone()) else {
            return text;
        };
        // An agent that says `mcpCapabilities.acp` itself (or a server
        // with no relay to bridge) needs no rewrite: read as that shape,
        // without building the answer's tree.
        if let Some(native) = native_acp(&text) {
            if native || !self.mcp.relays.contains_key(&key) {
                self.mcp.native.insert(key, native);
                return text;
            }
        }
        let Ok(mut answer) = serde_json::from_str::<Value>(&text) else {
            return text;
        };
        // v1's capabilities only: another version's answer goes as it came.
        let version = answer
            .get("result")
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_u64);
        if version != Some(1) {
            return text;
        }
        let Some(caps) = answer
            .get_mut("result")
            .and_then(Value::as_object_mut)
            .map(|r| {
                r.entry("agentCapabilities")
                    .or_insert_with(|| Value::Object(Map::new()))
            })
            .and_then(Value::as_object_mut)
        else {
            return text;
        };
        let mcp = caps
            .entry("mcpCapabilities")
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(mcp) = mcp.as_object_mut() else {
            return text;
        };
        let native = mcp.get("acp").and_then(Value::as_bool) == Some(true);
        let bridged = self.mcp.relays.contains_key(&key);
        self.mcp.native.insert(key, native);
        if native || !bridged {
            return text;
        }
        mcp.insert("acp".into(), Value::Bool(true));
        answer.to_string()
    }

    /// `conn` is gone: its pending `initialize` is forgotten.
    pub(super) fn mcp_forget(&mut self, conn: ConnectionId) {
        self.mcp.initializing.remove(&conn);
    }
}

/// What an `initialize` answer in v1 says of `mcpCapabilities.acp`
/// (`false` when it is `null` or absent), read as a typed shape: its other
/// members are passed over (checked as JSON all the same), nothing is
/// built. `None` for every answer of another shape (another version, a
/// member of another type or written twice, no `agentCapabilities` or
/// `mcpCapabilities` object, text that is not JSON): the caller reads
/// those into a [`Value`], as it reads the answers it rewrites. Where
/// both read an answer they agree (the tests hold this against the
/// [`Value`] reading); the members passed over are checked by the
/// grammar alone, so an answer the tree would refuse for one of them
/// (a number past `f64`, nesting past 128 levels, a lone surrogate)
/// is read here all the same: it goes to the client as it came either
/// way.
fn native_acp(text: &str) -> Option<bool> {
    #[derive(serde::Deserialize)]
    struct Answer {
        result: Object<Initialized>,
    }
    #[derive(serde::Deserialize)]
    struct Initialized {
        #[serde(rename = "protocolVersion")]
        version: serde_json::Number,
        #[serde(rename = "agentCapabilities")]
        capabilities: Object<Capabilities>,
    }
    #[derive(serde::Deserialize)]
    struct Capabilities {
        #[serde(rename = "mcpCapabilities")]
        mcp: Object<Mcp>,
    }
    #[derive(serde::Deserialize)]
    struct Mcp {
        #[serde(default)]
        acp: Option<bool>,
    }
    let Object(answer) = serde_json::from_str::<Object<Answer>>(text).ok()?;
    let Object(result) = answer.result;
    if result.version.as_u64() != Some(1) {
        return None;
    }
    let Object(capabilities) = result.capabilities;
    let Object(mcp) = capabilities.mcp;
    Some(mcp.acp == Some(true))
}

/// A derived struct read from an object only (a derived struct also takes
/// an array of its members in order, which a [`Value`] reading does not).
struct Object<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<T>(core::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Members<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Object<T>, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Object)
            }
        }
        d.deserialize_map(Members(core::marker::PhantomData))
    }
}

/// The MCP outcome an `mcp/message` result carries: the schema's
/// `{"result": …}` or `{"error": …}`, or (the RFD's) the result itself.
fn inner_outcome(result: Value) -> (&'static str, Value) {
    match result {
        Value::Object(mut o) if o.len() == 1 || o.len() == 2 && o.contains_key("_meta") => {
            if let Some(e) = o.remove("error") {
                ("error", e)
            } else if let Some(r) = o.remove("result") {
                ("result", r)
            } else {
                ("result", Value::Object(o))
            }
        }
        other => ("result", other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::{Principal, Profile, ServerConfig};
    use alloc::string::ToString;

    const T: Duration = Duration::ZERO;

    fn relay() -> McpRelay {
        McpRelay::new(
            "/bin/relay".into(),
            alloc::vec!["--mcp-relay".into(), "/room/mcp.sock".into()],
            alloc::vec![("ACP_BRIDGE_MCP_TOKEN".into(), "tok".into())],
        )
        .with_timeout(Duration::from_secs(5))
    }

    /// A shared agent up, one client initialized; the agent's run, the
    /// client's connection, and the actions of the initialize answer.
    fn setup(agent_caps: &str) -> (Server, super::super::AgentRun, ConnectionId, Vec<Action>) {
        let mut s = Server::new(ServerConfig::new(), T);
        let Some(Action::StartAgent { run, .. }) = s.poll_action() else {
            panic!()
        };
        s.handle_agent_started(T, run, 1);
        s.set_mcp_relay(None, Some(relay()));
        let conn = s
            .open(T, Profile::WebSocket, &Principal::anonymous())
            .unwrap();
        s.handle_text(
            T,
            conn,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        );
        let _ = s.take_actions();
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":1,"agentCapabilities":{agent_caps}}}}}"#
        );
        s.handle_agent_line(T, run, &answer);
        let acts = s.take_actions();
        (s, run, conn, acts)
    }

    fn sent(acts: &[Action]) -> Vec<Value> {
        acts.iter()
            .filter_map(|a| match a {
                Action::Send { text, .. } => serde_json::from_str(text).ok(),
                _ => None,
            })
            .collect()
    }

    fn written(acts: &[Action]) -> Vec<Value> {
        acts.iter()
            .filter_map(|a| match a {
                Action::WriteAgent { line, .. } => serde_json::from_slice(&line.to_vec()).ok(),
                _ => None,
            })
            .collect()
    }

    fn to_relay(acts: &[Action]) -> Vec<Value> {
        acts.iter()
            .filter_map(|a| match a {
                Action::WriteMcp { line, .. } => serde_json::from_slice(line).ok(),
                _ => None,
            })
            .collect()
    }

    const NEW: &str = r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"files","serverId":"srv-1"},{"name":"local","command":"x","args":[],"env":[]}]}}"#;

    /// The events polled now.
    fn events(s: &mut Server) -> Vec<Event> {
        core::iter::from_fn(|| s.poll_event()).collect()
    }

    #[test]
    fn an_offered_acp_server_is_an_event_before_its_request_reaches_the_agent() {
        let (mut s, _run, conn, _) = setup("{}");
        let _ = events(&mut s);
        // No `"acp"` server: no event.
        s.handle_text(
            T,
            conn,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#,
        );
        assert!(events(&mut s).is_empty());
        let _ = s.take_actions();
        // One: the agent's relay is named, in the same input as the
        // rewritten request.
        s.handle_text(T, conn, NEW);
        assert_eq!(events(&mut s), [Event::McpOffered { agent: None }]);
        assert_eq!(written(&s.take_actions()).len(), 1);
        // An agent that takes them itself is given them as they are: none.
        let (mut s, _run, conn, _) = setup(r#"{"mcpCapabilities":{"acp":true}}"#);
        let _ = events(&mut s);
        s.handle_text(T, conn, NEW);
        assert!(events(&mut s).is_empty());
    }

    #[test]
    fn an_agent_without_acp_gets_the_relay_and_the_calls_reach_the_client() {
        let (mut s, _run, conn, acts) = setup(r#"{"loadSession":true}"#);
        let init = sent(&acts);
        assert_eq!(
            init[0]["result"]["agentCapabilities"]["mcpCapabilities"]["acp"],
            true
        );
        assert_eq!(init[0]["result"]["agentCapabilities"]["loadSession"], true);

        s.handle_text(T, conn, NEW);
        let w = written(&s.take_actions());
        let servers = &w[0]["params"]["mcpServers"];
        assert_eq!(
            servers[0],
            serde_json::json!({"name": "files", "command": "/bin/relay",
                "args": ["--mcp-relay", "/room/mcp.sock", "srv-1"],
                "env": [{"name": "ACP_BRIDGE_MCP_TOKEN", "value": "tok"}]})
        );
        assert_eq!(servers[1]["command"], "x", "other servers stay");

        // Another user's server, or an unknown one: refused.
        assert!(s.handle_mcp_open(T, Some("bo"), "srv-1").is_err());
        assert!(s.handle_mcp_open(T, None, "srv-2").is_err());

        let link = s.handle_mcp_open(T, None, "srv-1").unwrap();
        // The agent speaks before the client answers: kept until then.
        s.handle_mcp_line(
            T,
            link,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
        );
        let out = sent(&s.take_actions());
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["method"], "mcp/connect");
        assert_eq!(out[0]["params"]["acpId"], "srv-1");
        let connect_id = out[0]["id"].as_str().unwrap().to_string();
        s.handle_text(
            T,
            conn,
            &format!(r#"{{"jsonrpc":"2.0","id":"{connect_id}","result":{{"connectionId":"c1"}}}}"#),
        );
        let acts = s.take_actions();
        assert!(written(&acts).is_empty(), "the answer is not the agent's");
        let out = sent(&acts);
        assert_eq!(out[0]["method"], "mcp/message");
        assert_eq!(out[0]["params"]["connectionId"], "c1");
        assert_eq!(out[0]["params"]["method"], "initialize");
        assert_eq!(out[0]["params"]["serverId"], "srv-1");
        assert_eq!(out[0]["params"]["requestId"], "0");
        let msg_id = out[0]["id"].as_str().unwrap().to_string();
        s.handle_text(
            T,
            conn,
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{msg_id}","result":{{"result":{{"serverInfo":{{}}}}}}}}"#
            ),
        );
        let back = to_relay(&s.take_actions());
        assert_eq!(
            back,
            [serde_json::json!({"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {}}})]
        );

        // The client's own MCP request to the agent, and its answer.
        s.handle_text(
            T,
            conn,
            r#"{"jsonrpc":"2.0","id":9,"method":"mcp/message","params":{"connectionId":"c1","method":"ping"}}"#,
        );
        let back = to_relay(&s.take_actions());
        assert_eq!(back[0]["method"], "ping");
        let relay_id = back[0]["id"].clone();
        s.handle_mcp_line(
            T,
            link,
            &format!(r#"{{"jsonrpc":"2.0","id":{relay_id},"result":{{}}}}"#),
        );
        let out = sent(&s.take_actions());
        assert_eq!(out[0]["id"], 9);
        assert_eq!(out[0]["result"], serde_json::json!({"result": {}}));

        // A call the client never answers: an MCP error after the timeout.
        s.handle_mcp_line(
            T,
            link,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file"}}"#,
        );
        let _ = s.take_actions();
        let deadline = s.poll_timeout().unwrap();
        assert!(deadline <= Duration::from_secs(5));
        s.handle_timeout(Duration::from_secs(5));
        let back = to_relay(&s.take_actions());
        assert_eq!(back[0]["id"], 5);
        assert_eq!(
            back[0]["error"]["message"],
            "the client did not answer this mcp request within 5 s"
        );

        // The relay ends: the client is told.
        s.handle_mcp_closed(T, link);
        let out = sent(&s.take_actions());
        assert_eq!(out[0]["method"], "mcp/disconnect");
        assert_eq!(out[0]["params"]["connectionId"], "c1");
    }

    /// A call in flight when the client's connection breaks: the client
    /// that resumes gets the `mcp/message` again, and its answer reaches
    /// the agent.
    #[test]
    fn a_call_in_flight_survives_a_reconnect() {
        use crate::remote::resume::unstamp;
        let mut s = Server::new(ServerConfig::new(), T);
        let Some(Action::StartAgent { run, .. }) = s.poll_action() else {
            panic!()
        };
        s.handle_agent_started(T, run, 1);
        s.set_mcp_relay(None, Some(relay()));
        let c = s
            .open(T, Profile::WebSocket, &Principal::anonymous())
            .unwrap();
        s.handle_text(
            T,
            c,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"acp-codec/resume":{}}}}"#,
        );
        let _ = s.take_actions();
        s.handle_agent_line(
            T,
            run,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        );
        let _ = s.take_actions();
        s.handle_text(T, c, NEW);
        let _ = s.take_actions();
        let link = s.handle_mcp_open(T, None, "srv-1").unwrap();
        let acts = s.take_actions();
        let (connect, at) = match &acts[..] {
            [Action::Send { text, .. }] => {
                let (_, at, text) = unstamp(text).unwrap();
                (serde_json::from_str::<Value>(&text).unwrap(), at)
            }
            other => panic!("{other:?}"),
        };
        s.handle_text(
            T,
            c,
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{}","result":{{"connectionId":"c1"}}}}"#,
                connect["id"].as_str().unwrap()
            ),
        );
        s.handle_mcp_line(
            T,
            link,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file"}}"#,
        );
        let _ = s.take_actions();
        s.handle_closed(T, c, super::super::Ending::Broken);
        let _ = s.take_actions();

        let d = s
            .open(T, Profile::WebSocket, &Principal::anonymous())
            .unwrap();
        s.handle_text(
            T,
            d,
            &format!(
                r#"{{"jsonrpc":"2.0","id":"r1","method":"initialize","params":{{"_meta":{{"acp-codec/resume":{{}},"acp-codec/cursor":{{"connection":"{}","position":{}}}}}}}}}"#,
                c.0, at
            ),
        );
        let again: Vec<Value> = s
            .take_actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, text, .. } if *to == d => {
                    unstamp(text).and_then(|(_, _, t)| serde_json::from_str(&t).ok())
                }
                _ => None,
            })
            .filter(|v: &Value| v["method"] == "mcp/message")
            .collect();
        assert_eq!(again.len(), 1, "the call is sent again");
        assert_eq!(again[0]["params"]["method"], "tools/call");
        s.handle_text(
            T,
            d,
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{}","result":{{"result":{{"content":[]}}}}}}"#,
                again[0]["id"].as_str().unwrap()
            ),
        );
        let back = to_relay(&s.take_actions());
        assert_eq!(
            back,
            [serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}})]
        );
    }

    /// A user's agent with a room, initialized, its relay set: the
    /// client's connection and the agent's run.
    fn user_with_room(s: &mut Server, name: &str, pid: u32) -> ConnectionId {
        use crate::remote::router::Permissions;
        let who = Principal::user(name, Permissions::READ_WRITE);
        let conn = s.open(T, Profile::WebSocket, &who).unwrap();
        s.handle_text(
            T,
            conn,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        );
        let run = s
            .take_actions()
            .into_iter()
            .find_map(|a| match a {
                Action::StartAgent { run, .. } => Some(run),
                _ => None,
            })
            .unwrap();
        s.set_session_dir(name, &format!("/srv/acp/{name}/work"));
        s.set_mcp_relay(Some(name), Some(relay()));
        s.handle_agent_started(T, run, pid);
        let _ = s.take_actions();
        s.handle_agent_line(
            T,
            run,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        );
        let _ = s.take_actions();
        conn
    }

    /// `name`'s client offers its server from `cwd`; the relay connects.
    fn offer_and_connect(s: &mut Server, conn: ConnectionId, name: &str, cwd: &str) -> McpLink {
        s.handle_text(
            T,
            conn,
            &format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{cwd}","mcpServers":[{{"type":"acp","name":"files","serverId":"{name}-files"}}]}}}}"#
            ),
        );
        let _ = s.take_actions();
        let link = s
            .handle_mcp_open(T, Some(name), &format!("{name}-files"))
            .unwrap();
        let connect = sent(&s.take_actions());
        s.handle_text(
            T,
            conn,
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{}","result":{{"connectionId":"c-{name}"}}}}"#,
                connect[0]["id"].as_str().unwrap()
            ),
        );
        let _ = s.take_actions();
        link
    }

    /// Through a room, the agent's MCP paths reach the user's server as
    /// the user's: `roots/list`'s roots and a tool's path arguments under
    /// the room move to the session's directory (whole components, whole
    /// strings); another user's room, a sibling directory and text that
    /// only mentions a path stay; the server's results come back as they
    /// are. Each user's paths move to their own directory only.
    #[test]
    fn through_a_room_the_agents_mcp_paths_reach_the_user_as_theirs() {
        let config = ServerConfig {
            pool: super::super::PoolMode::PerUser,
            ..ServerConfig::new()
        };
        let mut s = Server::new(config, T);
        let ana = user_with_room(&mut s, "ana", 11);
        let bo = user_with_room(&mut s, "bo", 12);
        let ana_link = offer_and_connect(&mut s, ana, "ana", "/home/ana/proj");
        let bo_link = offer_and_connect(&mut s, bo, "bo", "/home/bo/code");

        // The user's server asks its client (the agent) for its roots.
        s.handle_text(
            T,
            ana,
            r#"{"jsonrpc":"2.0","id":"r1","method":"mcp/message","params":{"connectionId":"c-ana","method":"roots/list"}}"#,
        );
        let asked = to_relay(&s.take_actions());
        assert_eq!(asked[0]["method"], "roots/list");
        s.handle_mcp_line(
            T,
            ana_link,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"roots":[{{"uri":"file:///srv/acp/ana/work","name":"work"}},{{"uri":"file:///srv/acp/ana/work/sub%20dir"}},{{"uri":"file:///srv/acp/bo/work"}},{{"uri":"file:///srv/acp/ana/work2"}}]}}}}"#,
                asked[0]["id"]
            ),
        );
        let out = sent(&s.take_actions());
        assert_eq!(out[0]["id"], "r1");
        assert_eq!(
            out[0]["result"]["result"]["roots"],
            json!([
                {"uri": "file:///home/ana/proj", "name": "work"},
                {"uri": "file:///home/ana/proj/sub%20dir"},
                {"uri": "file:///srv/acp/bo/work"},
                {"uri": "file:///srv/acp/ana/work2"}
            ])
        );

        // The agent's tool call: its path arguments move, nothing else.
        s.handle_mcp_line(
            T,
            ana_link,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/srv/acp/ana/work/secret.txt","paths":["/srv/acp/ana/work/a","/srv/acp/bo/work/b"],"note":"see /srv/acp/ana/work/x","rel":"secret.txt"}}}"#,
        );
        let out = sent(&s.take_actions());
        assert_eq!(out[0]["method"], "mcp/message");
        assert_eq!(
            out[0]["params"]["params"],
            json!({"name": "read_text_file", "arguments": {
                "path": "/home/ana/proj/secret.txt",
                "paths": ["/home/ana/proj/a", "/srv/acp/bo/work/b"],
                "note": "see /srv/acp/ana/work/x", "rel": "secret.txt"}})
        );
        // The result names the user's path: back to the agent as it is.
        s.handle_text(
            T,
            ana,
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{}","result":{{"result":{{"content":[{{"type":"text","text":"/home/ana/proj/secret.txt"}}]}}}}}}"#,
                out[0]["id"].as_str().unwrap()
            ),
        );
        let back = to_relay(&s.take_actions());
        assert_eq!(
            back[0]["result"]["content"][0]["text"],
            "/home/ana/proj/secret.txt"
        );

        // bo's agent naming ana's room: untouched; its own room: bo's.
        s.handle_mcp_line(
            T,
            bo_link,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/srv/acp/ana/work/secret.txt","mine":"/srv/acp/bo/work/x"}}}"#,
        );
        let out = sent(&s.take_actions());
        assert_eq!(
            out[0]["params"]["params"]["arguments"],
            json!({"path": "/srv/acp/ana/work/secret.txt", "mine": "/home/bo/code/x"})
        );
    }

    #[test]
    fn an_agent_with_acp_gets_the_servers_as_they_came() {
        let (mut s, _run, conn, acts) = setup(r#"{"mcpCapabilities":{"acp":true}}"#);
        assert_eq!(
            sent(&acts)[0]["result"]["agentCapabilities"]["mcpCapabilities"]["acp"],
            true
        );
        s.handle_text(T, conn, NEW);
        let w = written(&s.take_actions());
        assert_eq!(w[0]["params"]["mcpServers"][0]["type"], "acp");
        assert!(s.handle_mcp_open(T, None, "srv-1").is_err());
    }

    /// What the rewrite reads of an `initialize` answer, from its
    /// [`Value`] tree as `mcp_outbound` reads it: `Some(acp)` where it
    /// records the agent's own support without a rewrite or with one.
    fn native_by_value(text: &str) -> Option<bool> {
        let mut answer = serde_json::from_str::<Value>(text).ok()?;
        let version = answer
            .get("result")
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_u64);
        if version != Some(1) {
            return None;
        }
        let caps = answer
            .get_mut("result")?
            .as_object_mut()?
            .entry("agentCapabilities")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()?;
        let mcp = caps
            .entry("mcpCapabilities")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()?;
        Some(mcp.get("acp").and_then(Value::as_bool) == Some(true))
    }

    /// An `initialize` answer of many shapes: versions, capabilities
    /// absent, `null`, of other types or written twice, other members.
    fn initialize_answer() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::sample::select;
        use proptest::strategy::Strategy;
        let version = select(alloc::vec!["1", "2", "\"1\"", "1.0", "null", "10"]);
        let acp = select(alloc::vec![
            "",
            r#""acp":true"#,
            r#""acp":false"#,
            r#""acp":null"#,
            r#""acp":"yes""#,
            r#""acp":true,"acp":false"#,
            r#""http":true,"acp":true,"sse":false"#,
        ]);
        let mcp = select(alloc::vec![
            "{ACP}",
            "null",
            "[]",
            "[true]",
            "absent",
            "{ACP} ,\"x\":1"
        ]);
        let caps = select(alloc::vec![
            r#"{"loadSession":true,"mcpCapabilities":MCP}"#,
            r#"{"mcpCapabilities":MCP,"promptCapabilities":{"image":false,"audio":[1,{"a":"\"}"}]}}"#,
            "{}",
            "null",
            "absent",
            r#"{"mcpCapabilities":MCP,"mcpCapabilities":{}}"#,
            r#"[{"mcpCapabilities":MCP}]"#,
            r#"[MCP]"#,
        ]);
        let extra = select(alloc::vec![
            "",
            r#""_meta":{"k":[true,null,-1.5e3]},"#,
            r#""authMethods":[],"#,
            r#""protocolVersion":1,"#,
        ]);
        (version, acp, mcp, caps, extra).prop_map(|(version, acp, mcp, caps, extra)| {
            let mcp = mcp.replace("ACP", acp);
            let caps = if mcp == "absent" {
                caps.replace(r#""mcpCapabilities":MCP"#, r#""other":0"#)
            } else {
                caps.replace("MCP", &mcp)
            };
            let caps = if caps == "absent" {
                String::new()
            } else {
                format!(r#","agentCapabilities":{caps}"#)
            };
            format!(r#"{{"jsonrpc":"2.0","id":0,"result":{{{extra}"protocolVersion":{version}{caps}}}}}"#)
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn the_typed_read_of_initialize_agrees_with_the_tree(text in initialize_answer()) {
            if let Some(native) = native_acp(&text) {
                proptest::prop_assert_eq!(Some(native), native_by_value(&text), "{}", text);
            }
        }
    }

    #[test]
    fn the_typed_read_takes_the_answers_agents_write() {
        // The mock agent's answer, and one that says nothing of `acp`.
        let mock = r#"{"jsonrpc":"2.0","id":0,"result":{"_meta":{"acp-mock-agent":{"cwd":"/r","pid":7}},"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"acp":true},"promptCapabilities":{"audio":false,"embeddedContext":true,"image":false},"sessionCapabilities":{"list":{},"resume":{}}},"agentInfo":{"name":"m","title":"m \"q\"","version":"0.1.0"},"authMethods":[],"protocolVersion":1}}"#;
        assert_eq!(native_acp(mock), Some(true));
        assert_eq!(native_by_value(mock), Some(true));
        let plain = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"http":true}}}}"#;
        assert_eq!(native_acp(plain), Some(false));
        assert_eq!(native_by_value(plain), Some(false));
        // Shapes left to the tree: another version, no capabilities.
        for other in [
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"agentCapabilities":{"mcpCapabilities":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":null}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":[true]}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":[1,{"mcpCapabilities":{"acp":true}}]}"#,
        ] {
            assert_eq!(native_acp(other), None, "{other}");
        }
    }

    #[test]
    fn a_connect_to_a_client_that_left_fails_the_agents_requests() {
        let (mut s, _run, conn, _) = setup("{}");
        s.handle_text(T, conn, NEW);
        let _ = s.take_actions();
        s.handle_closed(T, conn, super::super::Ending::Clean);
        let _ = s.take_actions();
        let link = s.handle_mcp_open(T, None, "srv-1").unwrap();
        let acts = s.take_actions();
        assert!(
            acts.iter()
                .any(|a| matches!(a, Action::CloseMcp { link: l, reason } if *l == link && reason.contains("is gone"))),
            "{acts:?}"
        );
    }
}
