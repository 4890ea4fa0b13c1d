//! A v1 client in front of a v2 agent: the table is in the parent module.

use super::keyed::Keyed;
use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use super::{
    agrees_on, client_request, commands_update, config_options, error_line, line, mstr, new_update,
    offered, params_mut, plan_entries, str_of, tool_status, update_line, Out, To, MAX_PENDING,
    MAX_SESSIONS, MAX_TOOL_CALLS, MAX_TOOL_CONTENT,
};

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
    pending: Keyed<Pending>,
    sessions: Keyed<Session>,
    session_order: VecDeque<String>,
    /// Content per tool call, by [`tool_key`].
    tools: Keyed<Vec<Value>>,
    tool_order: VecDeque<String>,
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
        let session = client_request(&mut msg, &method, To::V2, initialize_params);
        let pending = match method.as_str() {
            "initialize" => Some(Pending::Initialize),
            "session/new" => Some(Pending::NewSession),
            "session/load" => {
                msg.insert("method".into(), "session/resume".into());
                if let Some(p) = params_mut(&mut msg) {
                    p.insert("replayFrom".into(), json!({"type": "start"}));
                }
                session.clone().map(Pending::Load)
            }
            // Answered as `session/load` is (v1's resume replays nothing).
            "session/resume" => session.clone().map(Pending::Load),
            "session/set_config_option" => {
                if let Some(p) = params_mut(&mut msg) {
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
                if let Some(p) = params_mut(&mut msg) {
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
                if let Some(p) = params_mut(&mut msg) {
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
        self.sessions.or_default(id)
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
                if !agrees_on(&msg, 2) {
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
                    config_options(r, To::V1);
                    self.session(&session).mode_option = mode.as_ref().map(|(id, _)| id.clone());
                    if let Some((_, modes)) = mode {
                        r.insert("modes".into(), modes);
                    }
                    if let Some(commands) = r.remove("availableCommands") {
                        let mut update = Map::new();
                        update.insert("sessionUpdate".into(), "available_commands_update".into());
                        update.insert("availableCommands".into(), commands);
                        let update = commands_update(update, To::V1);
                        after.push(Out::Client(new_update(&session, Value::Object(update))));
                    }
                }
            }
            Pending::SetMode => {
                msg.insert("result".into(), json!({}));
            }
            Pending::SetConfigOption => {
                if let Some(Value::Object(r)) = msg.get_mut("result") {
                    config_options(r, To::V1);
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
                    plan_entries(&mut entries, To::V1);
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
                    // v1 has no `error` stop: the prompt's error answer.
                    let end = if reason == "error" {
                        let error = update
                            .remove("error")
                            .filter(|e| e.get("code").is_some_and(Value::is_i64))
                            .unwrap_or_else(|| {
                                json!({"code": -32603, "message": "the agent ended the turn with an error"})
                            });
                        json!({"error": error})
                    } else {
                        json!({"result": {"stopReason": reason}})
                    };
                    return self.end_prompt(&session, end);
                }
                Vec::new()
            }
            "terminal_update" | "terminal_output_chunk" => Vec::new(),
            "available_commands_update" => alloc::vec![commands_update(update, To::V1)],
            "config_option_update" => {
                let mode = mode_state(update.get("configOptions"));
                config_options(&mut update, To::V1);
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
            .map(|u| Out::Client(update_line(envelope, &params, u)))
            .collect()
    }

    /// Answers the oldest held prompt of `session` with `end` (its
    /// `result` or `error` member).
    fn end_prompt(&mut self, session: &str, end: Value) -> Vec<Out> {
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
        self.tool_order.retain(|k| !of_session(k, session));
        self.tools.retain(|k, _| !of_session(k, session));
        let mut answer = json!({"jsonrpc": "2.0", "id": id});
        if let (Value::Object(answer), Value::Object(end)) = (&mut answer, end) {
            answer.extend(end);
        }
        alloc::vec![Out::Client(line(&answer))]
    }

    fn tool_call_update(
        &mut self,
        session: &str,
        mut update: Map<String, Value>,
    ) -> Map<String, Value> {
        let tool = mstr(&update, "toolCallId").unwrap_or_default().to_string();
        let key = tool_key(session, &tool);
        let first = !self.tools.contains_key(&key);
        if let Some(Value::Array(items)) = update.get_mut("content") {
            items.iter_mut().for_each(tool_content);
        }
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
        tool_status(&mut update, To::V1);
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

    fn tool(&mut self, key: String) -> &mut Vec<Value> {
        if !self.tools.contains_key(&key) {
            if self.tools.len() >= MAX_TOOL_CALLS {
                if let Some(old) = self.tool_order.pop_front() {
                    self.tools.remove(&old);
                }
            }
            self.tool_order.push_back(key.clone());
        }
        self.tools.or_default(&key)
    }

    fn tool_call_chunk(
        &mut self,
        session: &str,
        mut update: Map<String, Value>,
    ) -> Vec<Map<String, Value>> {
        let tool = mstr(&update, "toolCallId").unwrap_or_default().to_string();
        let key = tool_key(session, &tool);
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

/// The key of a tool call in [`V1ClientV2Agent`]'s maps: its session's
/// length, then the session and the tool call's id (no two pairs share
/// it, whatever the ids hold).
fn tool_key(session: &str, tool: &str) -> String {
    format!("{}:{session}{tool}", session.len())
}

/// Whether the [`tool_key`] `key` is of a tool call of `session`.
fn of_session(key: &str, session: &str) -> bool {
    key.strip_prefix(&format!("{}:", session.len()))
        .is_some_and(|rest| rest.starts_with(session))
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
    if let Some(Value::Array(items)) = tool.get_mut("content") {
        items.iter_mut().for_each(tool_content);
    }
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

    /// No two (session, tool call) pairs share a key, and a key is of its
    /// own session only, whatever the ids hold.
    #[test]
    fn tool_keys_keep_pairs_apart() {
        let pairs = [
            ("a", "bc"),
            ("ab", "c"),
            ("", "abc"),
            ("abc", ""),
            ("1:a", "b"),
        ];
        for (i, (s, t)) in pairs.iter().enumerate() {
            let key = tool_key(s, t);
            for (j, (s2, t2)) in pairs.iter().enumerate() {
                assert_eq!(key == tool_key(s2, t2), i == j, "{s}/{t} against {s2}/{t2}");
                assert_eq!(of_session(&key, s2), s == s2, "{key} of {s2}");
            }
        }
    }

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

    /// v2's cancellation passes: the agent's `$/cancel_request` and the
    /// client's answer, `tool_call/cancel` and its answer, and the tool
    /// call's `capabilities` (a member v1 lacks, kept on the v1 update).
    #[test]
    fn cancellation_passes_both_ways() {
        let mut t = V1ClientV2Agent::new();
        let only = |outs: Vec<Out>| match outs.as_slice() {
            [Out::Agent(l)] | [Out::Client(l)] => serde_json::from_str::<Value>(l).unwrap(),
            other => panic!("{other:?}"),
        };
        let withdraw = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}"#;
        assert_eq!(
            t.agent_line(withdraw),
            alloc::vec![Out::Client(withdraw.to_string())]
        );
        let answer = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"Cancelled"}}"#;
        assert_eq!(
            t.client_line(answer),
            alloc::vec![Out::Agent(answer.to_string())]
        );
        let cancel = r#"{"jsonrpc":"2.0","id":9,"method":"tool_call/cancel","params":{"sessionId":"s","toolCallId":"t"}}"#;
        assert_eq!(only(t.client_line(cancel))["method"], "tool_call/cancel");
        assert_eq!(
            only(t.agent_line(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#))["result"],
            json!({})
        );
        let update = |caps: Value| {
            json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
                "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "in_progress", "capabilities": caps}}})
            .to_string()
        };
        let first = only(t.agent_line(&update(json!({"cancel": {}}))));
        assert_eq!(first["params"]["update"]["sessionUpdate"], "tool_call");
        assert_eq!(
            first["params"]["update"]["capabilities"],
            json!({"cancel": {}})
        );
        let cleared = only(t.agent_line(&update(Value::Null)));
        let cleared = &cleared["params"]["update"];
        assert!(
            cleared.get("capabilities").is_some_and(Value::is_null),
            "{cleared}"
        );
    }
}
