//! v1↔v2 translation, sans-IO: a v1 client in front of a v2 agent
//! ([`V1ClientV2Agent`]), one state machine per connection. Feed it every
//! line from either side; it returns what to send where ([`Out`]).
//!
//! The translator works on each line's JSON members (unknown members and
//! `_meta` are carried over wherever both versions have the object), keeps
//! the request ids of the client (it issues no request of its own), and
//! passes extension methods (`_…`), errors and lines it cannot read through
//! unchanged. When the agent answers `initialize` with a version other than
//! 2, it stops translating and relays both ways unchanged. A line it
//! translates is re-encoded from a `serde_json::Value`: members come out in
//! sorted order, a member named twice keeps its last value, and a number
//! past 64-bit integers is re-encoded as an `f64`. Cost: about 5 µs a
//! message (parse and re-encode) where relaying is a copy.
//!
//! | v1 (client side) | v2 (agent side) | how |
//! |---|---|---|
//! | `initialize` `clientCapabilities`, `clientInfo` | `capabilities`, `info` | one to one; `fs` and `terminal` dropped (v2 has no client methods); `info` synthesized (`{"name":"v1-client","version":"unknown"}`) when absent |
//! | `agentCapabilities` `promptCapabilities`, `mcpCapabilities`, `sessionCapabilities`, `loadSession` | `capabilities.session.prompt`, `.mcp`, `.delete`, … | support objects become `true`; `loadSession`, `list`, `resume`, `close` set when `session` is offered; `mcp.stdio` dropped (baseline in v1), `sse` `false` |
//! | `agentInfo`, `authMethods[].id`, `auth.logout` | `info`, `authMethods[].methodId` | one to one; `auth.logout` set when there are auth methods (v2 requires `auth/logout` then) |
//! | `authenticate`, `logout` | `auth/login`, `auth/logout` | one to one |
//! | `mcpServers` | `mcpServers` | stdio servers get `type: "stdio"`; `sse` servers dropped (**loss**: gone in v2) |
//! | `session/new` answer (`modes`) | `session/new` answer (`configOptions`, `availableCommands`) | `modes` synthesized from the `mode` select config option; `availableCommands` sent as a v1 `available_commands_update` after the answer |
//! | `session/load` | `session/resume` with `replayFrom: {"type":"start"}` | the replay arrives as updates; the v1 answer at the resume answer (`modes` as for `session/new`) |
//! | `session/resume` (no replay) | `session/resume` | its answer as `session/load`'s |
//! | `session/prompt` answer `{stopReason}` | answer `{}` (held, dropped) + idle `state_update` | the idle update's `stopReason` (`end_turn` when it has none) answers the oldest held prompt of the session |
//! | `session/cancel` | `session/cancel` | unchanged; the idle `cancelled` update ends the prompt |
//! | `session/set_config_option` | the same | a value without `type` gets `type: "id"` |
//! | `configOptions[].id`, `group` | `configId`, `groupId` | one to one, in every answer and update |
//! | `session/set_mode` | `session/set_config_option` (`type: "id"`) | when the session has a `mode` config option, else error `-32601` to the client; the answer `{}` (the new options are lost) |
//! | `user_message_chunk`, `agent_message_chunk`, `agent_thought_chunk` | the same | one to one |
//! | chunks, one per block | `user_message`, `agent_message`, `agent_thought` | **loss**: v2 replaces the message's content, v1 chunks append; `null`/`[]` (clear) sends nothing |
//! | `tool_call`, then `tool_call_update` | `tool_call_update` | the first for an id is a `tool_call` (title: the id when none); status `cancelled` → `failed`, `paused` → `in_progress` (**loss**) |
//! | `tool_call_update` with the whole `content` | `tool_call_content_chunk` | the content accumulated per tool call |
//! | `tool_call_update` `content` `diff` (`path`, `oldText`, `newText`) | `diff` (`changes`, `patch`) | **loss**: text content carrying the patch (or a line per change); v2 diffs have no mechanical v1 form |
//! | `plan` | `plan_update` (`type: "items"`) | `planId` lost; entry status `cancelled` → `completed`; other plan types dropped |
//! | — | `state_update` `running`/`requires_action` | dropped (v1 has no state) |
//! | — | `terminal_update`, `terminal_output_chunk` | dropped (v1 has no agent-owned display terminal) |
//! | `available_commands_update` | the same | the command's `type: "command"` and the input's `type` dropped; an input of another type than `text` dropped |
//! | `current_mode_update` | `config_option_update` of the `mode` option | added beside the update, which passes unchanged |
//! | `config_option_update`, `session_info_update`, `usage_update`, unknown kinds | the same | unchanged |
//! | `session/request_permission` `toolCall` | `title`, `subject` | a `tool_call` subject's `toolCall` (its title from `title` when it has none); a `command` subject or none: a synthetic `toolCall` (`permission-<request id>`); `title`, `description` kept as members |
//! | `fs/*`, `terminal/*` | — | never asked (a v2 agent has no such requests) |
//!
//! State is bounded: at most [`MAX_PENDING`] requests of the client
//! awaiting the agent (past it the client gets error `-32603` at once), at
//! most [`MAX_SESSIONS`] sessions tracked (past it the oldest session's
//! state is forgotten: its held prompts get no answer from the translator),
//! one request awaiting the agent per id (a second gets `-32600`),
//! at most [`MAX_TOOL_CALLS`] tool calls per connection (past it the oldest
//! is forgotten; a later update for it becomes a new v1 `tool_call`), and
//! at most [`MAX_TOOL_CONTENT`] content items accumulated per tool call
//! (past it the chunks are dropped).

use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

/// Requests of the client awaiting the agent's answer, at most.
pub const MAX_PENDING: usize = 4096;
/// Sessions whose state (held prompts, mode option) is kept, at most.
pub const MAX_SESSIONS: usize = 1024;
/// Tool calls whose state (seen, content) is kept per connection, at most.
pub const MAX_TOOL_CALLS: usize = 4096;
/// Content items accumulated per tool call, at most.
pub const MAX_TOOL_CONTENT: usize = 1024;

/// One line to send, and to whom (without its newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// A line for the agent.
    Agent(String),
    /// A line for the client.
    Client(String),
}

/// What a request of the client forwarded to the agent was.
#[derive(Debug)]
enum Pending {
    Initialize,
    NewSession,
    Load(String),
    /// A prompt: `acked` once the agent accepted it, `answered` once its
    /// end was answered to the client; gone when both.
    Prompt {
        session: String,
        acked: bool,
        answered: bool,
    },
    SetMode,
    SetConfigOption,
}

#[derive(Debug, Default)]
struct Session {
    /// Ids (JSON text) of the prompts awaiting their end, oldest first.
    held: VecDeque<Value>,
    /// The `configId` of the session's `mode` select option.
    mode_option: Option<String>,
}

/// A v1 client in front of a v2 agent: one per connection (see the module
/// docs for the mapping).
#[derive(Debug, Default)]
pub struct V1ClientV2Agent {
    passthrough: bool,
    pending: BTreeMap<String, Pending>,
    sessions: BTreeMap<String, Session>,
    session_order: VecDeque<String>,
    tools: BTreeMap<(String, String), Vec<Value>>,
    tool_order: VecDeque<(String, String)>,
}

fn line(value: &Value) -> String {
    value.to_string()
}

fn error_line(id: &Value, code: i64, message: &str) -> String {
    line(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn mstr<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str)
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Present and not `null`: a v2 support marker.
fn offered(obj: Option<&Value>, key: &str) -> bool {
    obj.and_then(|o| o.get(key)).is_some_and(|v| !v.is_null())
}

impl V1ClientV2Agent {
    /// A translator for a new connection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the agent answered `initialize` with a version other than 2,
    /// and the translator relays both ways unchanged.
    pub fn is_passthrough(&self) -> bool {
        self.passthrough
    }

    /// Requests of the client awaiting the agent, and prompts awaiting
    /// their end.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Translates one line from the v1 client.
    pub fn client_line(&mut self, text: &str) -> Vec<Out> {
        if self.passthrough {
            return alloc::vec![Out::Agent(text.to_string())];
        }
        let Ok(Value::Object(mut msg)) = serde_json::from_str::<Value>(text) else {
            return alloc::vec![Out::Agent(text.to_string())];
        };
        let Some(method) = msg.get("method").and_then(Value::as_str).map(String::from) else {
            // A response to the agent's request: the shapes agree.
            return alloc::vec![Out::Agent(text.to_string())];
        };
        let id = msg.get("id").cloned();
        let Some(id) = id else {
            return alloc::vec![Out::Agent(text.to_string())];
        };
        let key = id.to_string();
        let session = msg
            .get("params")
            .and_then(|p| str_of(p, "sessionId"))
            .map(String::from);
        let pending = match method.as_str() {
            "initialize" => {
                if let Some(Value::Object(p)) = msg.get_mut("params") {
                    initialize_params(p);
                }
                Some(Pending::Initialize)
            }
            "authenticate" => {
                msg.insert("method".into(), "auth/login".into());
                None
            }
            "logout" => {
                msg.insert("method".into(), "auth/logout".into());
                None
            }
            "session/new" => {
                if let Some(Value::Object(p)) = msg.get_mut("params") {
                    mcp_servers(p);
                }
                Some(Pending::NewSession)
            }
            "session/load" => {
                msg.insert("method".into(), "session/resume".into());
                if let Some(Value::Object(p)) = msg.get_mut("params") {
                    mcp_servers(p);
                    p.insert("replayFrom".into(), json!({"type": "start"}));
                }
                session.clone().map(Pending::Load)
            }
            "session/resume" => {
                if let Some(Value::Object(p)) = msg.get_mut("params") {
                    mcp_servers(p);
                }
                // Answered as `session/load` is (v1's resume replays nothing).
                session.clone().map(Pending::Load)
            }
            "session/set_config_option" => {
                if let Some(Value::Object(p)) = msg.get_mut("params") {
                    if !p.contains_key("type") {
                        p.insert("type".into(), "id".into());
                    }
                }
                Some(Pending::SetConfigOption)
            }
            "session/prompt" => session.clone().map(|session| Pending::Prompt {
                session,
                acked: false,
                answered: false,
            }),
            "session/set_mode" => {
                let option = session
                    .as_ref()
                    .and_then(|s| self.sessions.get(s))
                    .and_then(|s| s.mode_option.clone());
                let Some(option) = option else {
                    let why = format!(
                        "session/set_mode: the v2 agent offers no mode config option for session {}",
                        session.as_deref().unwrap_or("(none)")
                    );
                    return alloc::vec![Out::Client(error_line(&id, -32601, &why))];
                };
                msg.insert("method".into(), "session/set_config_option".into());
                if let Some(Value::Object(p)) = msg.get_mut("params") {
                    let mode = p.remove("modeId").unwrap_or(Value::Null);
                    p.insert("configId".into(), option.into());
                    p.insert("type".into(), "id".into());
                    p.insert("value".into(), mode);
                }
                Some(Pending::SetMode)
            }
            _ => None,
        };
        if let Some(pending) = pending {
            if self.pending.contains_key(&key) {
                let why = format!("request id {key} is already awaiting the agent");
                return alloc::vec![Out::Client(error_line(&id, -32600, &why))];
            }
            if self.pending.len() >= MAX_PENDING {
                let why = format!("too many requests awaiting the agent: {MAX_PENDING}");
                return alloc::vec![Out::Client(error_line(&id, -32603, &why))];
            }
            if let Pending::Prompt { session, .. } = &pending {
                self.session(session).held.push_back(id.clone());
            }
            self.pending.insert(key, pending);
        }
        alloc::vec![Out::Agent(line(&Value::Object(msg)))]
    }

    /// Translates one line from the v2 agent.
    pub fn agent_line(&mut self, text: &str) -> Vec<Out> {
        if self.passthrough {
            return alloc::vec![Out::Client(text.to_string())];
        }
        let Ok(Value::Object(mut msg)) = serde_json::from_str::<Value>(text) else {
            return alloc::vec![Out::Client(text.to_string())];
        };
        let method = msg.get("method").and_then(Value::as_str).map(String::from);
        match method.as_deref() {
            None => self.agent_response(msg, text),
            Some("session/update") => {
                let Some(Value::Object(params)) = msg.remove("params") else {
                    return alloc::vec![Out::Client(text.to_string())];
                };
                self.update(&msg, params)
            }
            Some("session/request_permission") => {
                let id = msg.get("id").cloned().unwrap_or(Value::Null);
                if let Some(Value::Object(p)) = msg.get_mut("params") {
                    permission_params(p, &id);
                }
                alloc::vec![Out::Client(line(&Value::Object(msg)))]
            }
            Some(_) => alloc::vec![Out::Client(text.to_string())],
        }
    }

    fn session(&mut self, id: &str) -> &mut Session {
        if !self.sessions.contains_key(id) {
            if self.sessions.len() >= MAX_SESSIONS {
                // The oldest session's held prompts are forgotten with it.
                let old = self.session_order.pop_front();
                if let Some(old) = old.and_then(|old| self.sessions.remove(&old)) {
                    for held in old.held {
                        self.pending.remove(&held.to_string());
                    }
                }
            }
            self.session_order.push_back(id.to_string());
        }
        self.sessions.entry(id.to_string()).or_default()
    }

    fn agent_response(&mut self, mut msg: Map<String, Value>, text: &str) -> Vec<Out> {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let Some(pending) = self.pending.remove(&id.to_string()) else {
            return alloc::vec![Out::Client(text.to_string())];
        };
        let is_error = msg.contains_key("error");
        let mut after = Vec::new();
        match pending {
            Pending::Prompt {
                session, answered, ..
            } => {
                if answered {
                    return Vec::new();
                }
                if !is_error {
                    let acked = Pending::Prompt {
                        session,
                        acked: true,
                        answered,
                    };
                    self.pending.insert(id.to_string(), acked);
                    return Vec::new();
                }
                if let Some(s) = self.sessions.get_mut(&session) {
                    s.held.retain(|held| *held != id);
                }
            }
            _ if is_error => {}
            Pending::Initialize => {
                let version = msg
                    .get("result")
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_u64);
                if version != Some(2) {
                    self.passthrough = true;
                    return alloc::vec![Out::Client(text.to_string())];
                }
                if let Some(Value::Object(r)) = msg.get_mut("result") {
                    initialize_result(r);
                }
            }
            Pending::NewSession | Pending::Load(_) => {
                let session = match &pending {
                    Pending::Load(s) => Some(s.clone()),
                    _ => msg
                        .get("result")
                        .and_then(|r| str_of(r, "sessionId"))
                        .map(String::from),
                };
                if let (Some(session), Some(Value::Object(r))) = (session, msg.get_mut("result")) {
                    let mode = mode_state(r.get("configOptions"));
                    config_options(r);
                    self.session(&session).mode_option = mode.as_ref().map(|(id, _)| id.clone());
                    if let Some((_, modes)) = mode {
                        r.insert("modes".into(), modes);
                    }
                    if let Some(commands) = r.remove("availableCommands") {
                        let mut update = Map::new();
                        update.insert("sessionUpdate".into(), "available_commands_update".into());
                        update.insert("availableCommands".into(), commands);
                        let update = commands_update(update);
                        after.push(Out::Client(line(&json!({
                            "jsonrpc": "2.0", "method": "session/update",
                            "params": {"sessionId": session, "update": update},
                        }))));
                    }
                }
            }
            Pending::SetMode => {
                msg.insert("result".into(), json!({}));
            }
            Pending::SetConfigOption => {
                if let Some(Value::Object(r)) = msg.get_mut("result") {
                    config_options(r);
                }
            }
        }
        let mut out = alloc::vec![Out::Client(line(&Value::Object(msg)))];
        out.append(&mut after);
        out
    }

    /// The v1 lines for one v2 `session/update` (`envelope` without its
    /// params).
    fn update(
        &mut self,
        envelope: &Map<String, Value>,
        mut params: Map<String, Value>,
    ) -> Vec<Out> {
        let session = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let Some(Value::Object(mut update)) = params.remove("update") else {
            let mut m = envelope.clone();
            m.insert("params".into(), Value::Object(params));
            return alloc::vec![Out::Client(line(&Value::Object(m)))];
        };
        let kind = update
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let updates: Vec<Map<String, Value>> = match kind.as_str() {
            "user_message" | "agent_message" | "agent_thought" => {
                let chunk_kind = format!("{kind}_chunk");
                let blocks = match update.remove("content") {
                    Some(Value::Array(blocks)) => blocks,
                    _ => Vec::new(),
                };
                blocks
                    .into_iter()
                    .map(|block| {
                        let mut chunk = update.clone();
                        chunk.insert("sessionUpdate".into(), chunk_kind.clone().into());
                        chunk.insert("content".into(), block);
                        chunk
                    })
                    .collect()
            }
            "tool_call_update" => alloc::vec![self.tool_call_update(&session, update)],
            "tool_call_content_chunk" => self.tool_call_chunk(&session, update),
            "plan_update" => match update.remove("plan") {
                Some(Value::Object(mut plan)) if mstr(&plan, "type") == Some("items") => {
                    let mut v1 = Map::new();
                    v1.insert("sessionUpdate".into(), "plan".into());
                    let mut entries = plan.remove("entries").unwrap_or_else(|| json!([]));
                    for entry in entries.as_array_mut().into_iter().flatten() {
                        if let Some(status) = entry.get_mut("status") {
                            if status == "cancelled" {
                                *status = "completed".into();
                            }
                        }
                    }
                    v1.insert("entries".into(), entries);
                    if let Some(meta) = update.remove("_meta") {
                        v1.insert("_meta".into(), meta);
                    }
                    alloc::vec![v1]
                }
                _ => Vec::new(),
            },
            "state_update" => {
                let idle = mstr(&update, "state") == Some("idle");
                if idle {
                    let reason = update
                        .get("stopReason")
                        .filter(|r| !r.is_null())
                        .cloned()
                        .unwrap_or_else(|| "end_turn".into());
                    return self.end_prompt(&session, reason);
                }
                Vec::new()
            }
            "terminal_update" | "terminal_output_chunk" => Vec::new(),
            "available_commands_update" => alloc::vec![commands_update(update)],
            "config_option_update" => {
                let mode = mode_state(update.get("configOptions"));
                config_options(&mut update);
                let mut out = alloc::vec![update];
                if let Some((option, modes)) = mode {
                    self.session(&session).mode_option = Some(option);
                    if let Some(current) = modes.get("currentModeId") {
                        let mut v1 = Map::new();
                        v1.insert("sessionUpdate".into(), "current_mode_update".into());
                        v1.insert("currentModeId".into(), current.clone());
                        out.push(v1);
                    }
                }
                out
            }
            _ => alloc::vec![update],
        };
        updates
            .into_iter()
            .map(|u| {
                let mut p = params.clone();
                p.insert("update".into(), Value::Object(u));
                let mut m = envelope.clone();
                m.insert("params".into(), Value::Object(p));
                Out::Client(line(&Value::Object(m)))
            })
            .collect()
    }

    /// Answers the oldest held prompt of `session`.
    fn end_prompt(&mut self, session: &str, reason: Value) -> Vec<Out> {
        let Some(id) = self
            .sessions
            .get_mut(session)
            .and_then(|s| s.held.pop_front())
        else {
            return Vec::new();
        };
        // The agent's acknowledgement, if still to come, is dropped.
        let key = id.to_string();
        match self.pending.get_mut(&key) {
            Some(Pending::Prompt { acked: true, .. }) => {
                self.pending.remove(&key);
            }
            Some(Pending::Prompt { answered, .. }) => *answered = true,
            _ => {}
        }
        // Tool calls of the session end with its turn.
        self.tool_order.retain(|(s, _)| s != session);
        self.tools.retain(|(s, _), _| s != session);
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": reason}});
        alloc::vec![Out::Client(line(&answer))]
    }

    fn tool_call_update(
        &mut self,
        session: &str,
        mut update: Map<String, Value>,
    ) -> Map<String, Value> {
        let tool = mstr(&update, "toolCallId").unwrap_or_default().to_string();
        let key = (session.to_string(), tool.clone());
        let first = !self.tools.contains_key(&key);
        let content = match update.get("content") {
            Some(Value::Array(items)) => {
                Some(items.iter().take(MAX_TOOL_CONTENT).cloned().collect())
            }
            Some(Value::Null) => Some(Vec::new()),
            _ => None,
        };
        let acc = self.tool(key);
        if let Some(content) = content {
            *acc = content;
        }
        if let Some(status) = update.get_mut("status") {
            match status.as_str() {
                Some("cancelled") => *status = "failed".into(),
                Some("paused") => *status = "in_progress".into(),
                _ => {}
            }
        }
        if first {
            update.insert("sessionUpdate".into(), "tool_call".into());
            for member in [
                "kind",
                "status",
                "content",
                "locations",
                "rawInput",
                "rawOutput",
                "title",
            ] {
                if update.get(member).is_some_and(Value::is_null) {
                    update.remove(member);
                }
            }
            if !update.contains_key("title") {
                update.insert("title".into(), tool.into());
            }
        }
        update
    }

    fn tool(&mut self, key: (String, String)) -> &mut Vec<Value> {
        if !self.tools.contains_key(&key) {
            if self.tools.len() >= MAX_TOOL_CALLS {
                if let Some(old) = self.tool_order.pop_front() {
                    self.tools.remove(&old);
                }
            }
            self.tool_order.push_back(key.clone());
        }
        self.tools.entry(key).or_default()
    }

    fn tool_call_chunk(
        &mut self,
        session: &str,
        mut update: Map<String, Value>,
    ) -> Vec<Map<String, Value>> {
        let tool = mstr(&update, "toolCallId").unwrap_or_default().to_string();
        let key = (session.to_string(), tool.clone());
        let first = !self.tools.contains_key(&key);
        let mut item = update.remove("content").unwrap_or(Value::Null);
        tool_content(&mut item);
        let acc = self.tool(key);
        if acc.len() >= MAX_TOOL_CONTENT {
            return Vec::new();
        }
        acc.push(item);
        let content = Value::Array(acc.clone());
        update.insert("content".into(), content);
        if first {
            update.insert("sessionUpdate".into(), "tool_call".into());
            update.insert("title".into(), tool.into());
        } else {
            update.insert("sessionUpdate".into(), "tool_call_update".into());
        }
        alloc::vec![update]
    }
}

/// v1 `initialize` params to v2, in place.
fn initialize_params(p: &mut Map<String, Value>) {
    p.insert("protocolVersion".into(), 2.into());
    let mut caps = match p.remove("clientCapabilities") {
        Some(Value::Object(caps)) => caps,
        _ => Map::new(),
    };
    // v2 has no client file system or terminal methods.
    caps.remove("fs");
    caps.remove("terminal");
    p.insert("capabilities".into(), Value::Object(caps));
    let info = match p.remove("clientInfo") {
        Some(info @ Value::Object(_)) => info,
        _ => json!({"name": "v1-client", "version": "unknown"}),
    };
    p.insert("info".into(), info);
}

/// v2 `initialize` result to v1, in place.
fn initialize_result(r: &mut Map<String, Value>) {
    r.insert("protocolVersion".into(), 1.into());
    let mut caps = match r.remove("capabilities") {
        Some(Value::Object(caps)) => caps,
        _ => Map::new(),
    };
    let mut v1 = Map::new();
    if let Some(Value::Object(mut session)) = caps.remove("session") {
        v1.insert("loadSession".into(), true.into());
        let prompt = session.remove("prompt");
        let mut prompt_caps = Map::new();
        for key in ["image", "audio", "embeddedContext"] {
            prompt_caps.insert(key.into(), offered(prompt.as_ref(), key).into());
        }
        if let Some(meta) = prompt.as_ref().and_then(|p| p.get("_meta")) {
            prompt_caps.insert("_meta".into(), meta.clone());
        }
        v1.insert("promptCapabilities".into(), Value::Object(prompt_caps));
        let mcp = session.remove("mcp");
        let mut mcp_caps = Map::new();
        mcp_caps.insert("http".into(), offered(mcp.as_ref(), "http").into());
        mcp_caps.insert("sse".into(), false.into());
        v1.insert("mcpCapabilities".into(), Value::Object(mcp_caps));
        for key in ["list", "resume", "close"] {
            session.insert(key.into(), json!({}));
        }
        v1.insert("sessionCapabilities".into(), Value::Object(session));
    }
    // `auth`, `_meta` and unknown members as they are; v2 agents with auth
    // methods must offer `auth/logout`.
    let auth = r
        .get("authMethods")
        .and_then(Value::as_array)
        .is_some_and(|m| !m.is_empty());
    if auth {
        if let Value::Object(a) = caps.entry("auth").or_insert_with(|| json!({})) {
            a.insert("logout".into(), json!({}));
        }
    }
    v1.append(&mut caps);
    r.insert("agentCapabilities".into(), Value::Object(v1));
    if let Some(info) = r.remove("info") {
        r.insert("agentInfo".into(), info);
    }
    if let Some(Value::Array(methods)) = r.get_mut("authMethods") {
        for method in methods {
            if let Value::Object(m) = method {
                if let Some(id) = m.remove("methodId") {
                    m.insert("id".into(), id);
                }
            }
        }
    }
}

/// v2 `session/request_permission` params to v1, in place: the subject
/// becomes the v1 `toolCall`.
fn permission_params(p: &mut Map<String, Value>, id: &Value) {
    let title = p.get("title").cloned();
    let synthetic = match id {
        Value::String(s) => format!("permission-{s}"),
        other => format!("permission-{other}"),
    };
    let mut tool = match p.remove("subject") {
        Some(Value::Object(mut subject)) => match mstr(&subject, "type") {
            Some("tool_call") => match subject.remove("toolCall") {
                Some(Value::Object(tool)) => tool,
                _ => Map::new(),
            },
            Some("command") => {
                let mut tool = Map::new();
                if let Some(Value::String(call)) = subject.remove("toolCallId") {
                    tool.insert("toolCallId".into(), call.into());
                }
                tool.insert("kind".into(), "execute".into());
                subject.remove("type");
                tool.insert("rawInput".into(), Value::Object(subject));
                tool
            }
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    if !tool.contains_key("toolCallId") {
        tool.insert("toolCallId".into(), synthetic.into());
    }
    if !tool.get("title").is_some_and(Value::is_string) {
        if let Some(title) = title {
            tool.insert("title".into(), title);
        }
    }
    p.insert("toolCall".into(), Value::Object(tool));
}

/// The `configId` of the `mode` select option among `options`, and the v1
/// `modes` it stands for.
fn mode_state(options: Option<&Value>) -> Option<(String, Value)> {
    let option = options?
        .as_array()?
        .iter()
        .find(|o| str_of(o, "category") == Some("mode") && str_of(o, "type") == Some("select"))?;
    let id = str_of(option, "configId")?.to_string();
    let current = option.get("currentValue")?.clone();
    let mut modes = Vec::new();
    for entry in option.get("options")?.as_array()? {
        // Grouped options: the group's own options.
        let items = match entry.get("options").and_then(Value::as_array) {
            Some(items) => items.iter().collect(),
            None => alloc::vec![entry],
        };
        for item in items {
            let (Some(value), Some(name)) = (item.get("value"), item.get("name")) else {
                continue;
            };
            let mut mode = Map::new();
            mode.insert("id".into(), value.clone());
            mode.insert("name".into(), name.clone());
            if let Some(d) = item.get("description").filter(|d| d.is_string()) {
                mode.insert("description".into(), d.clone());
            }
            modes.push(Value::Object(mode));
        }
    }
    Some((
        id,
        json!({"currentModeId": current, "availableModes": modes}),
    ))
}

/// A v2 `available_commands_update` to v1: inputs without their `type`,
/// inputs of a type v1 lacks dropped.
fn commands_update(mut update: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::Array(commands)) = update.get_mut("availableCommands") {
        for command in commands {
            let Value::Object(command) = command else {
                continue;
            };
            if command.get("type").is_some_and(|t| t == "command") {
                command.remove("type");
            }
            let keep = match command.get_mut("input") {
                Some(Value::Object(input)) => input.remove("type").is_none_or(|t| t == "text"),
                _ => true,
            };
            if !keep {
                command.remove("input");
            }
        }
    }
    update
}

/// v1 MCP server configurations to v2, in place: stdio ones get their
/// `type`; `sse` ones (gone in v2) are dropped.
fn mcp_servers(p: &mut Map<String, Value>) {
    if let Some(Value::Array(servers)) = p.get_mut("mcpServers") {
        servers.retain(|s| s.get("type").is_none_or(|t| t != "sse"));
        for server in servers {
            if let Value::Object(server) = server {
                if !server.contains_key("type") {
                    server.insert("type".into(), "stdio".into());
                }
            }
        }
    }
}

/// v2 `configOptions` in `obj` to v1, in place: `configId` → `id`,
/// `groupId` → `group`.
fn config_options(obj: &mut Map<String, Value>) {
    let Some(Value::Array(options)) = obj.get_mut("configOptions") else {
        return;
    };
    for option in options {
        let Value::Object(option) = option else {
            continue;
        };
        if let Some(id) = option.remove("configId") {
            option.insert("id".into(), id);
        }
        if let Some(Value::Array(groups)) = option.get_mut("options") {
            for group in groups {
                if let Value::Object(group) = group {
                    if let Some(id) = group.remove("groupId") {
                        group.insert("group".into(), id);
                    }
                }
            }
        }
    }
}

/// A v2 tool-call content item to v1, in place: a v2 `diff` (structured
/// changes and a patch, with no mechanical mapping to v1's
/// `path`/`oldText`/`newText`) becomes text content: the patch, or one line
/// per change.
fn tool_content(item: &mut Value) {
    if item.get("type").is_none_or(|t| t != "diff") {
        return;
    }
    let text = match item
        .get("patch")
        .and_then(|p| p.get("text"))
        .and_then(Value::as_str)
    {
        Some(patch) => patch.to_string(),
        None => item
            .get("changes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{} {}\n",
                    str_of(c, "operation").unwrap_or("change"),
                    str_of(c, "path").unwrap_or_default()
                )
            })
            .collect(),
    };
    *item = json!({"type": "content", "content": {"type": "text", "text": text}});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_option_gives_v1_modes_from_grouped_options_too() {
        let options = json!([{"configId": "m", "name": "Mode", "category": "mode", "type": "select",
            "currentValue": "a", "options": [{"groupId": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}]}]);
        let (id, modes) = mode_state(Some(&options)).unwrap();
        assert_eq!(id, "m");
        assert_eq!(
            modes,
            json!({"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}]})
        );
        assert!(mode_state(Some(&json!([{"configId": "x", "type": "select"}]))).is_none());
    }

    #[test]
    fn a_diff_without_a_patch_lists_its_changes() {
        let mut item = json!({"type": "diff", "changes": [{"operation": "add", "path": "/a"}, {"operation": "delete", "path": "/b"}]});
        tool_content(&mut item);
        assert_eq!(
            item,
            json!({"type": "content", "content": {"type": "text", "text": "add /a\ndelete /b\n"}})
        );
    }

    #[test]
    fn a_duplicate_prompt_id_is_refused_and_eviction_frees_its_prompts() {
        let mut t = V1ClientV2Agent::new();
        let prompt = |id: usize, s: &str| {
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {"sessionId": s, "prompt": []}})
                .to_string()
        };
        assert!(matches!(
            t.client_line(&prompt(1, "s")).as_slice(),
            [Out::Agent(_)]
        ));
        let again = t.client_line(&prompt(1, "s"));
        assert!(matches!(again.as_slice(), [Out::Client(l)] if l.contains("-32600")));
        for i in 0..MAX_SESSIONS {
            t.client_line(&prompt(i + 2, &format!("other{i}")));
        }
        // Session `s` was the oldest: its prompt is no longer held.
        assert_eq!(t.pending(), MAX_SESSIONS);
    }
}
