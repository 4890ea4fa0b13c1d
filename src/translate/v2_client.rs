//! A v2 client in front of a v1 agent: the table is in the parent module.

use super::keyed::Keyed;
use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use super::{
    agrees_on, client_request, commands_update, config_options, error_line, line, mstr, new_update,
    params_mut, plan_entries, rename, str_of, tool_status, update_line, Out, To, MAX_PENDING,
    MAX_SESSIONS,
};

/// The `configId` of the config option that stands for a v1 agent's modes.
const MODE_OPTION: &str = "mode";
/// The `planId` of a v1 agent's one plan a session.
const PLAN_ID: &str = "plan";

/// What a request of the client forwarded to the agent was.
#[derive(Debug)]
enum Pending {
    Initialize,
    NewSession,
    /// `session/load` (a resume from the start) or `session/resume`.
    Resume(String),
    Prompt(String),
    SetMode {
        session: String,
        mode: Value,
    },
    SetConfigOption(String),
}

/// What the v1 agent offered in its `initialize` answer, for routing.
#[derive(Debug, Default)]
struct Offers {
    load: bool,
    resume: bool,
    list: bool,
    close: bool,
    delete: bool,
}

#[derive(Debug, Default)]
struct Session {
    /// Prompts forwarded and not yet answered by the agent.
    running: usize,
    /// Permission requests of the agent awaiting the client.
    asking: usize,
    /// The agent's v1 `modes` (`currentModeId`, `availableModes`), shown to
    /// the client as the `mode` config option.
    modes: Option<Map<String, Value>>,
    /// The agent's own config options, in v2's shape.
    options: Vec<Value>,
    /// The message being streamed without a `messageId`: its kind and the
    /// id given to it.
    message: Option<(String, String)>,
}

/// A v2 client in front of a v1 agent: one per connection (see the module
/// docs for the mapping).
#[derive(Debug, Default)]
pub struct V2ClientV1Agent {
    passthrough: bool,
    offers: Offers,
    pending: Keyed<Pending>,
    /// Permission requests of the agent awaiting the client: their session.
    asks: Keyed<String>,
    sessions: Keyed<Session>,
    session_order: VecDeque<String>,
    /// The number in the next synthesized message id.
    next_message: u64,
}

impl V2ClientV1Agent {
    /// A translator for a new connection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the agent answered `initialize` with a version other than 1,
    /// and the translator relays both ways unchanged.
    pub fn is_passthrough(&self) -> bool {
        self.passthrough
    }

    /// Requests of the client awaiting the agent (prompts until the agent
    /// answers them), and permission requests of the agent awaiting the
    /// client.
    pub fn pending(&self) -> usize {
        self.pending.len().saturating_add(self.asks.len())
    }

    /// Translates one line from the v2 client.
    pub fn client_line(&mut self, text: &str) -> Vec<Out> {
        let pass = || alloc::vec![Out::Agent(text.to_string())];
        if self.passthrough {
            return pass();
        }
        let Ok(Value::Object(mut msg)) = serde_json::from_str::<Value>(text) else {
            return pass();
        };
        let Some(method) = msg.get("method").and_then(Value::as_str).map(String::from) else {
            return self.client_response(&msg, text);
        };
        let Some(id) = msg.get("id").cloned() else {
            return self.client_notification(&method, &msg).unwrap_or_else(pass);
        };
        let session = client_request(&mut msg, &method, To::V1, initialize_params);
        let refuse = |code: i64, why: String| alloc::vec![Out::Client(error_line(&id, code, &why))];
        let pending = match method.as_str() {
            "initialize" => Some(Pending::Initialize),
            "session/new" => Some(Pending::NewSession),
            "session/resume" => {
                let Some(p) = params_mut(&mut msg) else {
                    return pass();
                };
                let replay = p.remove("replayFrom").filter(|r| !r.is_null());
                match replay.as_ref().map(|r| str_of(r, "type")) {
                    None if !self.offers.resume => {
                        return refuse(-32601, "session/resume without replay: the v1 agent does not offer session/resume".into());
                    }
                    None => {}
                    Some(Some("start")) if !self.offers.load => {
                        return refuse(-32601, "session/resume from the start: the v1 agent does not offer session/load".into());
                    }
                    Some(Some("start")) => {
                        msg.insert("method".into(), "session/load".into());
                    }
                    Some(other) => {
                        let why = format!(
                            "session/resume: replayFrom of type {}: a v1 agent replays only from the start",
                            other.unwrap_or("(none)")
                        );
                        return refuse(-32602, why);
                    }
                }
                session.clone().map(Pending::Resume)
            }
            "session/prompt" => session.clone().map(Pending::Prompt),
            "session/set_config_option" => {
                let s = session.clone().unwrap_or_default();
                let Some(p) = params_mut(&mut msg) else {
                    return pass();
                };
                let has_modes = self.sessions.get(&s).is_some_and(|s| s.modes.is_some());
                if has_modes && mstr(p, "configId") == Some(MODE_OPTION) {
                    let mode = p.remove("value").unwrap_or(Value::Null);
                    p.remove("configId");
                    p.remove("type");
                    p.insert("modeId".into(), mode.clone());
                    msg.insert("method".into(), "session/set_mode".into());
                    Some(Pending::SetMode { session: s, mode })
                } else {
                    // v1's value id is untagged.
                    if p.get("type").is_some_and(|t| t == "id") {
                        p.remove("type");
                    }
                    Some(Pending::SetConfigOption(s))
                }
            }
            "session/list" | "session/close" | "session/delete" => {
                let offered = match method.as_str() {
                    "session/list" => self.offers.list,
                    "session/close" => self.offers.close,
                    _ => self.offers.delete,
                };
                if !offered {
                    let why = format!("{method}: the v1 agent does not offer it");
                    return refuse(-32601, why);
                }
                None
            }
            _ => None,
        };
        let mut out = Vec::new();
        if let Some(pending) = pending {
            let key = id.to_string();
            if self.pending.contains_key(&key) {
                return refuse(
                    -32600,
                    format!("request id {key} is already awaiting the agent"),
                );
            }
            if self.pending.len() >= MAX_PENDING {
                return refuse(
                    -32603,
                    format!("too many requests awaiting the agent: {MAX_PENDING}"),
                );
            }
            if let Pending::Prompt(session) = &pending {
                out = self.accept_prompt(&id, session, &msg);
            }
            self.pending.insert(key, pending);
        }
        out.insert(0, Out::Agent(line(&Value::Object(msg))));
        out
    }

    /// The client's answer to a prompt it sent (the v1 agent accepts at
    /// once): `{messageId}`, the user message, `running`.
    fn accept_prompt(&mut self, id: &Value, session: &str, msg: &Map<String, Value>) -> Vec<Out> {
        let message = self.message_id("user");
        let s = self.session(session);
        s.running = s.running.saturating_add(1);
        s.message = None;
        let content = msg
            .get("params")
            .and_then(|p| p.get("prompt"))
            .cloned()
            .unwrap_or_else(|| json!([]));
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"messageId": message}});
        alloc::vec![
            Out::Client(line(&answer)),
            Out::Client(new_update(
                session,
                json!({"sessionUpdate": "user_message", "messageId": message, "content": content}),
            )),
            Out::Client(state_update(session, "running")),
        ]
    }

    /// A notification of the client; `None` to pass it unchanged.
    fn client_notification(&mut self, method: &str, msg: &Map<String, Value>) -> Option<Vec<Out>> {
        if method != "$/cancel_request" {
            return None;
        }
        // A v1 agent stops a prompt with `session/cancel`.
        let request = msg.get("params").and_then(|p| p.get("requestId"))?;
        let Some(Pending::Prompt(session)) = self.pending.get(&request.to_string()) else {
            return None;
        };
        let cancel = json!({"jsonrpc": "2.0", "method": "session/cancel",
            "params": {"sessionId": session}});
        Some(alloc::vec![Out::Agent(line(&cancel))])
    }

    /// The client's answer to a request of the agent: the shapes agree.
    fn client_response(&mut self, msg: &Map<String, Value>, text: &str) -> Vec<Out> {
        let mut out = alloc::vec![Out::Agent(text.to_string())];
        let id = msg.get("id").map(Value::to_string).unwrap_or_default();
        if let Some(session) = self.asks.remove(&id) {
            if let Some(s) = self.sessions.get_mut(&session) {
                s.asking = s.asking.saturating_sub(1);
                if s.asking == 0 && s.running > 0 {
                    out.push(Out::Client(state_update(&session, "running")));
                }
            }
        }
        out
    }

    /// Translates one line from the v1 agent.
    pub fn agent_line(&mut self, text: &str) -> Vec<Out> {
        let pass = || alloc::vec![Out::Client(text.to_string())];
        if self.passthrough {
            return pass();
        }
        let Ok(Value::Object(mut msg)) = serde_json::from_str::<Value>(text) else {
            return pass();
        };
        let method = msg.get("method").and_then(Value::as_str).map(String::from);
        match method.as_deref() {
            None => self.agent_response(msg, text),
            Some("session/update") => {
                let Some(Value::Object(params)) = msg.remove("params") else {
                    return pass();
                };
                self.update(&msg, params).unwrap_or_else(pass)
            }
            Some("session/request_permission") => self.permission(msg),
            Some(m) if m.starts_with("fs/") || m.starts_with("terminal/") => {
                // A v2 client has neither; the agent learns it at once.
                let Some(id) = msg.get("id") else {
                    return Vec::new();
                };
                let why =
                    format!("{m}: the client speaks acp v2, which has no fs or terminal methods");
                alloc::vec![Out::Agent(error_line(id, -32601, &why))]
            }
            Some(_) => pass(),
        }
    }

    fn session(&mut self, id: &str) -> &mut Session {
        if !self.sessions.contains_key(id) {
            if self.sessions.len() >= MAX_SESSIONS {
                if let Some(old) = self.session_order.pop_front() {
                    self.sessions.remove(&old);
                }
            }
            self.session_order.push_back(id.to_string());
        }
        self.sessions.or_default(id)
    }

    /// A new message id: `prefix-n`, unique on the connection.
    fn message_id(&mut self, prefix: &str) -> String {
        self.next_message = self.next_message.wrapping_add(1);
        format!("{prefix}-{}", self.next_message)
    }

    fn agent_response(&mut self, mut msg: Map<String, Value>, text: &str) -> Vec<Out> {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let Some(pending) = self.pending.remove(&id.to_string()) else {
            return alloc::vec![Out::Client(text.to_string())];
        };
        let error = msg.get("error").cloned();
        match pending {
            Pending::Prompt(session) => {
                // The client had its answer; the end is the idle update.
                if let Some(s) = self.sessions.get_mut(&session) {
                    s.running = s.running.saturating_sub(1);
                }
                let update = match error {
                    Some(error) => json!({"sessionUpdate": "state_update", "state": "idle",
                        "stopReason": "error", "error": error}),
                    None => {
                        let reason = msg
                            .get("result")
                            .and_then(|r| r.get("stopReason"))
                            .filter(|r| r.is_string())
                            .cloned()
                            .unwrap_or_else(|| "end_turn".into());
                        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason})
                    }
                };
                return alloc::vec![Out::Client(new_update(&session, update))];
            }
            _ if error.is_some() => {}
            Pending::Initialize => {
                if !agrees_on(&msg, 1) {
                    self.passthrough = true;
                    return alloc::vec![Out::Client(text.to_string())];
                }
                if let Some(Value::Object(r)) = msg.get_mut("result") {
                    self.offers = initialize_result(r);
                }
            }
            Pending::NewSession => {
                let session = msg
                    .get("result")
                    .and_then(|r| str_of(r, "sessionId"))
                    .map(String::from);
                if let (Some(session), Some(Value::Object(r))) = (session, msg.get_mut("result")) {
                    self.session_result(&session, r);
                }
            }
            Pending::Resume(session) => {
                if let Some(Value::Object(r)) = msg.get_mut("result") {
                    self.session_result(&session, r);
                }
                // v2 wants the current state before the answer.
                let running = self.sessions.get(&session).is_some_and(|s| s.running > 0);
                let state = if running { "running" } else { "idle" };
                return alloc::vec![
                    Out::Client(state_update(&session, state)),
                    Out::Client(line(&Value::Object(msg))),
                ];
            }
            Pending::SetMode { session, mode } => {
                let s = self.session(&session);
                if let Some(modes) = &mut s.modes {
                    modes.insert("currentModeId".into(), mode);
                }
                let options = s.config_options();
                let result = match msg.remove("result") {
                    Some(Value::Object(mut r)) => {
                        r.insert("configOptions".into(), options);
                        r
                    }
                    _ => json!({"configOptions": options})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                };
                msg.insert("result".into(), Value::Object(result));
            }
            Pending::SetConfigOption(session) => {
                if let Some(Value::Object(r)) = msg.get_mut("result") {
                    config_options(r, To::V2);
                    let s = self.session(&session);
                    if let Some(Value::Array(options)) = r.get("configOptions") {
                        s.options.clone_from(options);
                    }
                    r.insert("configOptions".into(), s.config_options());
                }
            }
        }
        alloc::vec![Out::Client(line(&Value::Object(msg)))]
    }

    /// A v1 `session/new`, `session/load` or `session/resume` answer to
    /// v2, in place: `modes` become the `mode` option.
    fn session_result(&mut self, session: &str, r: &mut Map<String, Value>) {
        config_options(r, To::V2);
        let options = match r.remove("configOptions") {
            Some(Value::Array(options)) => options,
            _ => Vec::new(),
        };
        let has_mode_option = options.iter().any(|o| {
            str_of(o, "category") == Some("mode") || str_of(o, "configId") == Some(MODE_OPTION)
        });
        let modes = match r.remove("modes") {
            Some(Value::Object(modes)) if !has_mode_option => Some(modes),
            _ => None,
        };
        let s = self.session(session);
        s.options = options;
        s.modes = modes;
        let all = s.config_options();
        if all.as_array().is_some_and(|a| !a.is_empty()) {
            r.insert("configOptions".into(), all);
        }
    }

    /// The v2 lines for one v1 `session/update` (`envelope` without its
    /// params); `None` to pass it unchanged.
    fn update(
        &mut self,
        envelope: &Map<String, Value>,
        mut params: Map<String, Value>,
    ) -> Option<Vec<Out>> {
        let session = mstr(&params, "sessionId")?.to_string();
        let Some(Value::Object(mut update)) = params.remove("update") else {
            return None;
        };
        let kind = mstr(&update, "sessionUpdate")
            .unwrap_or_default()
            .to_string();
        let chunk = matches!(
            kind.as_str(),
            "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk"
        );
        if chunk && update.get("messageId").is_none_or(Value::is_null) {
            let run = self.session(&session).message.clone();
            let id = match run {
                Some((run_kind, id)) if run_kind == kind => id,
                _ => {
                    let prefix = kind.trim_end_matches("_chunk").replace('_', "-");
                    let id = self.message_id(&prefix);
                    self.session(&session).message = Some((kind.clone(), id.clone()));
                    id
                }
            };
            update.insert("messageId".into(), id.into());
        } else if !chunk {
            if let Some(s) = self.sessions.get_mut(&session) {
                s.message = None;
            }
        }
        let update = match kind.as_str() {
            "tool_call" | "tool_call_update" => {
                update.insert("sessionUpdate".into(), "tool_call_update".into());
                tool_call(&mut update);
                update
            }
            "plan" => {
                let mut plan = Map::new();
                plan.insert("type".into(), "items".into());
                plan.insert("planId".into(), PLAN_ID.into());
                let mut entries = update.remove("entries").unwrap_or_else(|| json!([]));
                plan_entries(&mut entries, To::V2);
                plan.insert("entries".into(), entries);
                update.insert("sessionUpdate".into(), "plan_update".into());
                update.insert("plan".into(), Value::Object(plan));
                update
            }
            "available_commands_update" => commands_update(update, To::V2),
            "current_mode_update" => {
                let s = self.session(&session);
                let Some(modes) = &mut s.modes else {
                    return None;
                };
                let current = update.remove("currentModeId").unwrap_or(Value::Null);
                modes.insert("currentModeId".into(), current);
                update.insert("sessionUpdate".into(), "config_option_update".into());
                update.insert("configOptions".into(), s.config_options());
                update
            }
            "config_option_update" => {
                config_options(&mut update, To::V2);
                let s = self.session(&session);
                if let Some(Value::Array(options)) = update.get("configOptions") {
                    s.options.clone_from(options);
                }
                update.insert("configOptions".into(), s.config_options());
                update
            }
            _ => update,
        };
        Some(alloc::vec![Out::Client(update_line(
            envelope, &params, update
        ))])
    }

    /// A v1 permission request to v2: `requires_action` first while a
    /// prompt runs.
    fn permission(&mut self, mut msg: Map<String, Value>) -> Vec<Out> {
        let mut out = Vec::new();
        let id = msg.get("id").map(Value::to_string);
        let session = msg
            .get("params")
            .and_then(|p| str_of(p, "sessionId"))
            .map(String::from);
        if let (Some(id), Some(session)) = (id, session) {
            if self.asks.len() < MAX_PENDING && !self.asks.contains_key(&id) {
                let s = self.session(&session);
                s.asking = s.asking.saturating_add(1);
                if s.asking == 1 && s.running > 0 {
                    out.push(Out::Client(state_update(&session, "requires_action")));
                }
                self.asks.insert(id, session);
            }
        }
        if let Some(p) = params_mut(&mut msg) {
            permission_params(p);
        }
        out.push(Out::Client(line(&Value::Object(msg))));
        out
    }
}

impl Session {
    /// The session's v2 `configOptions`: the agent's, and its modes as the
    /// `mode` option.
    fn config_options(&self) -> Value {
        let mut options = self.options.clone();
        if let Some(modes) = &self.modes {
            options.push(mode_option(modes));
        }
        Value::Array(options)
    }
}

/// The `state_update` line of `session` in `state` (not idle).
fn state_update(session: &str, state: &str) -> String {
    new_update(
        session,
        json!({"sessionUpdate": "state_update", "state": state}),
    )
}

/// v1 `modes` as a v2 `mode` select config option.
fn mode_option(modes: &Map<String, Value>) -> Value {
    let options: Vec<Value> = modes
        .get("availableModes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|mode| {
            let mut option = Map::new();
            if let Some(id) = mode.get("id") {
                option.insert("value".into(), id.clone());
            }
            for key in ["name", "description", "_meta"] {
                if let Some(v) = mode.get(key).filter(|v| !v.is_null()) {
                    option.insert(key.into(), v.clone());
                }
            }
            Value::Object(option)
        })
        .collect();
    json!({"configId": MODE_OPTION, "name": "Mode", "category": "mode", "type": "select",
        "currentValue": modes.get("currentModeId").cloned().unwrap_or(Value::Null),
        "options": options})
}

/// v2 `initialize` params to v1, in place.
fn initialize_params(p: &mut Map<String, Value>) {
    p.insert("protocolVersion".into(), 1.into());
    let mut caps = match p.remove("capabilities") {
        Some(Value::Object(caps)) => caps,
        _ => Map::new(),
    };
    // A v2 client has no file system or terminal methods.
    caps.insert(
        "fs".into(),
        json!({"readTextFile": false, "writeTextFile": false}),
    );
    caps.insert("terminal".into(), false.into());
    p.insert("clientCapabilities".into(), Value::Object(caps));
    rename(p, "info", "clientInfo");
}

/// v1 `initialize` result to v2, in place; what the agent offers.
fn initialize_result(r: &mut Map<String, Value>) -> Offers {
    r.insert("protocolVersion".into(), 2.into());
    let mut caps = match r.remove("agentCapabilities") {
        Some(Value::Object(caps)) => caps,
        _ => Map::new(),
    };
    let mut sessions = match caps.remove("sessionCapabilities") {
        Some(Value::Object(s)) => s,
        _ => Map::new(),
    };
    let marker = |m: &Map<String, Value>, key: &str| m.get(key).is_some_and(|v| !v.is_null());
    let offers = Offers {
        load: caps.remove("loadSession").is_some_and(|l| l == true),
        resume: marker(&sessions, "resume"),
        list: marker(&sessions, "list"),
        close: marker(&sessions, "close"),
        delete: marker(&sessions, "delete"),
    };
    // The baseline of v2 sessions has no markers.
    for key in ["resume", "list", "close"] {
        sessions.remove(key);
    }
    sessions.insert(
        "prompt".into(),
        support_markers(caps.remove("promptCapabilities")),
    );
    let mut mcp = support_markers(caps.remove("mcpCapabilities"));
    if let Value::Object(mcp) = &mut mcp {
        mcp.remove("sse");
        mcp.insert("stdio".into(), json!({}));
    }
    sessions.insert("mcp".into(), mcp);
    caps.insert("session".into(), Value::Object(sessions));
    if let Some(Value::Object(auth)) = caps.get_mut("auth") {
        auth.remove("logout");
    }
    r.insert("capabilities".into(), Value::Object(caps));
    rename(r, "agentInfo", "info");
    if !r.get("info").is_some_and(Value::is_object) {
        r.insert(
            "info".into(),
            json!({"name": "v1-agent", "version": "unknown"}),
        );
    }
    if let Some(Value::Array(methods)) = r.get_mut("authMethods") {
        for method in methods {
            if let Value::Object(m) = method {
                rename(m, "id", "methodId");
                m.entry("type").or_insert_with(|| "agent".into());
            }
        }
    }
    offers
}

/// v1 boolean support flags to v2 markers: `true` → `{}`, `false` dropped;
/// other members kept.
fn support_markers(flags: Option<Value>) -> Value {
    let Some(Value::Object(flags)) = flags else {
        return json!({});
    };
    let markers: Map<String, Value> = flags
        .into_iter()
        .filter_map(|(key, v)| match v {
            Value::Bool(true) => Some((key, json!({}))),
            Value::Bool(false) | Value::Null => None,
            other => Some((key, other)),
        })
        .collect();
    Value::Object(markers)
}

/// A v1 `tool_call` or `tool_call_update` to v2's `tool_call_update`, in
/// place: its diffs in v2's shape.
fn tool_call(update: &mut Map<String, Value>) {
    tool_status(update, To::V2);
    if let Some(Value::Array(items)) = update.get_mut("content") {
        for item in items {
            diff_to_v2(item);
        }
    }
}

/// v1 `session/request_permission` params to v2, in place: the `toolCall`
/// becomes the `tool_call` subject, the prompt's `title` its title.
fn permission_params(p: &mut Map<String, Value>) {
    let mut tool = match p.remove("toolCall") {
        Some(Value::Object(tool)) => tool,
        _ => Map::new(),
    };
    tool_call(&mut tool);
    let title = match (mstr(&tool, "title"), mstr(&tool, "toolCallId")) {
        (Some(title), _) => title.to_string(),
        (None, Some(id)) => format!("permission for tool call {id}"),
        (None, None) => "permission requested".to_string(),
    };
    p.entry("title").or_insert_with(|| title.into());
    p.insert(
        "subject".into(),
        json!({"type": "tool_call", "toolCall": tool}),
    );
}

/// A v1 `diff` content item (`path`, `oldText`, `newText`) to v2's
/// (`changes`, `patch`), in place: one `add` (no old text) or `modify`
/// change, and a whole-file git patch.
fn diff_to_v2(item: &mut Value) {
    let Value::Object(diff) = item else {
        return;
    };
    if mstr(diff, "type") != Some("diff") {
        return;
    }
    let (Some(path), Some(new)) = (mstr(diff, "path"), mstr(diff, "newText")) else {
        return;
    };
    let old = mstr(diff, "oldText");
    let operation = if old.is_some() { "modify" } else { "add" };
    let patch = whole_file_patch(path, old, new);
    let mut v2 = Map::new();
    v2.insert("type".into(), "diff".into());
    v2.insert(
        "changes".into(),
        json!([{"operation": operation, "path": path}]),
    );
    v2.insert(
        "patch".into(),
        json!({"format": "git_patch", "text": patch}),
    );
    if let Some(meta) = diff.remove("_meta") {
        v2.insert("_meta".into(), meta);
    }
    *diff = v2;
}

/// A git patch replacing the file at `path` (absolute) holding `old` (none:
/// a new file) by `new`: one hunk, every old line removed, every new line
/// added.
fn whole_file_patch(path: &str, old: Option<&str>, new: &str) -> String {
    let mut patch = format!("diff --git {path} {path}\n");
    if old.is_none() {
        patch.push_str("new file mode 100644\n");
    }
    let from = if old.is_some() { path } else { "/dev/null" };
    patch.push_str(&format!("--- {from}\n+++ {path}\n"));
    let old = old.unwrap_or_default();
    let range = |text: &str| {
        let n = text.split_inclusive('\n').count();
        if n == 0 {
            "0,0".to_string()
        } else {
            format!("1,{n}")
        }
    };
    patch.push_str(&format!("@@ -{} +{} @@\n", range(old), range(new)));
    for (sign, text) in [('-', old), ('+', new)] {
        for l in text.split_inclusive('\n') {
            patch.push(sign);
            patch.push_str(l);
        }
        if !text.is_empty() && !text.ends_with('\n') {
            patch.push_str("\n\\ No newline at end of file\n");
        }
    }
    patch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_file_patch_has_one_hunk_and_marks_a_missing_newline() {
        assert_eq!(
            whole_file_patch("/w/a", Some("x\ny\n"), "x\nz"),
            "diff --git /w/a /w/a\n--- /w/a\n+++ /w/a\n@@ -1,2 +1,2 @@\n-x\n-y\n+x\n+z\n\\ No newline at end of file\n"
        );
        assert_eq!(
            whole_file_patch("/w/b", None, "new\n"),
            "diff --git /w/b /w/b\nnew file mode 100644\n--- /dev/null\n+++ /w/b\n@@ -0,0 +1,1 @@\n+new\n"
        );
    }

    #[test]
    fn boolean_flags_become_markers() {
        assert_eq!(
            support_markers(Some(
                json!({"image": true, "audio": false, "_meta": {"k": 1}})
            )),
            json!({"image": {}, "_meta": {"k": 1}})
        );
    }
}
