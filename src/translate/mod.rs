//! v1↔v2 translation, sans-IO, both directions: a v1 client in front of a
//! v2 agent ([`V1ClientV2Agent`]) and a v2 client in front of a v1 agent
//! ([`V2ClientV1Agent`]), one state machine per connection; [`Translator`]
//! holds either. Feed it every line from either side; it returns what to
//! send where ([`Out`]).
//!
//! A translator works on each line's JSON members (unknown members and
//! `_meta` are carried over wherever both versions have the object), keeps
//! the request ids of the client (it issues no request of its own), and
//! passes extension methods (`_…`), errors and lines it cannot read through
//! unchanged. When the agent answers `initialize` with a version other than
//! the one the translator speaks to it, it stops translating and relays
//! both ways unchanged. A line it translates is re-encoded from a
//! `serde_json::Value`: members come out in sorted order, a member named
//! twice keeps its last value, and a number past 64-bit integers is
//! re-encoded as an `f64`. Cost (`benches/translate.rs`, a 12-line agent
//! turn): about 5 µs a message for [`V2ClientV1Agent`] and 3.5 µs for
//! [`V1ClientV2Agent`] (parse and re-encode) where relaying is a copy of
//! about 30 ns.
//!
//! # A v1 client, a v2 agent: [`V1ClientV2Agent`]
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
//! | `session/prompt` answer `{stopReason}` | answer `{}` (held, dropped) + idle `state_update` | the idle update's `stopReason` (`end_turn` when it has none) answers the oldest held prompt of the session; an idle `error` stop answers it with the update's `error` (`-32603` when it has none) |
//! | `session/cancel` | `session/cancel` | unchanged; the idle `cancelled` update ends the prompt |
//! | `session/set_config_option` | the same | a value without `type` gets `type: "id"` |
//! | `configOptions[].id`, `group` | `configId`, `groupId` | one to one, in every answer and update |
//! | `session/set_mode` | `session/set_config_option` (`type: "id"`) | when the session has a `mode` config option, else error `-32601` to the client; the answer `{}` (the new options are lost) |
//! | `user_message_chunk`, `agent_message_chunk`, `agent_thought_chunk` | the same | one to one |
//! | chunks, one per block | `user_message`, `agent_message`, `agent_thought` | **loss**: v2 replaces the message's content, v1 chunks append; `null`/`[]` (clear) sends nothing |
//! | `tool_call`, then `tool_call_update` | `tool_call_update` | the first for an id is a `tool_call` (title: the id when none); status `cancelled` → `failed`, `paused` → `in_progress` (**loss**) |
//! | `tool_call_update` with the whole `content` | `tool_call_content_chunk` | the content accumulated per tool call |
//! | `capabilities` of a tool call (a member v1 lacks) | `capabilities` of `tool_call_update` | carried over as it is: `cancel` tells a client that knows v2 it may send `tool_call/cancel` |
//! | — | `tool_call/cancel` | no v1 counterpart (a v1 client cannot ask it); sent anyway (`acp-client` does), it and its answer pass unchanged |
//! | `$/cancel_request` (agent to client) | the same | unchanged (v1 has it too): the client answers the withdrawn request, `cancelled` outcome or `-32800`, unchanged to the agent |
//! | `content` `diff` (`path`, `oldText`, `newText`) | `diff` (`changes`, `patch`) | **loss**: text content carrying the patch (or a line per change), in tool-call updates and permission requests alike; v2 diffs have no mechanical v1 form |
//! | `plan` | `plan_update` (`type: "items"`) | `planId` lost; entry status `cancelled` → `completed`; other plan types dropped |
//! | — | `state_update` `running`/`requires_action` | dropped (v1 has no state) |
//! | — | `terminal_update`, `terminal_output_chunk` | dropped (v1 has no agent-owned display terminal) |
//! | `available_commands_update` | the same | the command's `type: "command"` and the input's `type` dropped; an input of another type than `text` dropped |
//! | `current_mode_update` | `config_option_update` of the `mode` option | added beside the update, which passes unchanged |
//! | `config_option_update`, `session_info_update`, `usage_update`, unknown kinds | the same | unchanged |
//! | `session/request_permission` `toolCall` | `title`, `subject` | a `tool_call` subject's `toolCall` (its title from `title` when it has none); a `command` subject or none: a synthetic `toolCall` (`permission-<request id>`); `title`, `description` kept as members |
//! | `fs/*`, `terminal/*` | — | never asked (a v2 agent has no such requests) |
//!
//! # A v2 client, a v1 agent: [`V2ClientV1Agent`]
//!
//! | v2 (client side) | v1 (agent side) | how |
//! |---|---|---|
//! | `initialize` `capabilities`, `info` | `clientCapabilities`, `clientInfo` | one to one; `fs` and `terminal` sent as `false` (a v2 client has neither) |
//! | `capabilities.session.prompt`, `.mcp`, `.delete`, `.additionalDirectories` | `agentCapabilities` `promptCapabilities`, `mcpCapabilities`, `sessionCapabilities` | `true` becomes a `{}` marker; `mcp.stdio` offered (baseline in v1), `sse` dropped; `loadSession` and the `list`, `resume`, `close` markers dropped (**loss**: v2 makes those methods baseline; the translator answers them `-32601` when the agent lacks them); `auth.logout` dropped |
//! | `info`, `authMethods[].methodId` | `agentInfo`, `authMethods[].id` | one to one; `info` synthesized (`{"name":"v1-agent","version":"unknown"}`) when absent; a method without `type` gets `type: "agent"` |
//! | `auth/login`, `auth/logout` | `authenticate`, `logout` | one to one |
//! | `mcpServers` | `mcpServers` | `type: "stdio"` dropped; `args`, `env` (stdio) and `headers` (http) `[]` when absent; `mcpServers: []` when absent |
//! | `session/new` answer (`configOptions`) | `session/new` answer (`modes`, `configOptions`) | `configOptions` `id`, `group` → `configId`, `groupId`; `modes` become a `mode` select option (`configId: "mode"`) unless the agent has an option of category `mode` |
//! | `session/resume` with `replayFrom: {"type":"start"}` | `session/load` | when the agent offers `loadSession`, else `-32601`; the replay translated as live updates, then an idle `state_update` (the current-state snapshot v2 requires; `running` while a prompt runs), then the answer |
//! | `session/resume` without `replayFrom` | `session/resume` | when the agent offers `sessionCapabilities.resume`, else `-32601`; the state snapshot before the answer |
//! | `session/resume` with another cursor | — | `-32602` to the client: a v1 agent replays only from the start |
//! | `session/prompt` answer `{messageId}` + `state_update`s | `session/prompt` answer `{stopReason}` | the client's answer is sent when the prompt is forwarded (a v1 agent has no separate acceptance): `{messageId}` (synthesized), then a `user_message` with the prompt's content under that id, then `running`; the agent's answer becomes the idle `state_update` with its `stopReason` and is not relayed; an error answer becomes an idle update with `stopReason: "error"` and the error |
//! | `session/cancel` | `session/cancel` | unchanged; the agent's `cancelled` answer gives the idle update |
//! | `$/cancel_request` of a prompt | `session/cancel` | of the prompt's session; of another request: unchanged |
//! | `session/set_config_option` on the `mode` option | `session/set_mode` | the answer `{}` becomes the session's `configOptions` with the new value |
//! | `session/set_config_option` | the same | `type: "id"` dropped (v1's value is untagged); the answer's options renamed, the `mode` option added |
//! | `session/list`, `session/close`, `session/delete` | the same | when the agent offers them (`sessionCapabilities`), else `-32601` |
//! | `user_message_chunk`, `agent_message_chunk`, `agent_thought_chunk` | the same | one to one; `messageId` synthesized when absent: one per run of chunks of one kind |
//! | `tool_call_update` | `tool_call`, `tool_call_update` | one to one (a v1 update replaces `content` as a v2 one does, so no `tool_call_content_chunk` is needed) |
//! | `diff` (`changes`, `patch`) | `diff` (`path`, `oldText`, `newText`) | one `add` or `modify` change with a whole-file `git_patch` (every old line removed, every new line added) |
//! | `plan_update` (`type: "items"`, `planId: "plan"`) | `plan` | one to one: v1 has one plan a session, replaced whole as a v2 plan is per `planId` |
//! | `available_commands_update` | the same | a command gets `type: "command"`, an input `type: "text"` |
//! | `config_option_update` of the `mode` option | `current_mode_update` | when the session's modes stand as the `mode` option; else unchanged |
//! | `config_option_update`, `session_info_update`, `usage_update`, unknown kinds | the same | options renamed (and the `mode` option added); the rest unchanged |
//! | `session/request_permission` `title`, `subject` | `toolCall` | `subject: {"type":"tool_call"}` with the tool call; `title`: the tool call's, else `permission for tool call <id>`; `state_update` `requires_action` before it and `running` after the client's answer, while a prompt runs; the answer unchanged |
//! | — | `fs/*`, `terminal/*` requests | never forwarded: the agent gets `-32601` (a v2 client has no client methods; the client offered neither capability) |
//!
//! Concurrent prompts on one session each end with their own idle update.
//!
//! # Bounds
//!
//! State is bounded, in both directions: at most [`MAX_PENDING`] requests
//! of the client awaiting the agent (past it the client gets error `-32603`
//! at once), at most [`MAX_SESSIONS`] sessions tracked (past it the oldest
//! session's state is forgotten: in [`V1ClientV2Agent`] its held prompts get
//! no answer from the translator), one request awaiting the agent per id (a
//! second gets `-32600`). [`V1ClientV2Agent`] keeps at most
//! [`MAX_TOOL_CALLS`] tool calls per connection (past it the oldest is
//! forgotten; a later update for it becomes a new v1 `tool_call`) and at most
//! [`MAX_TOOL_CONTENT`] content items accumulated per tool call (past it the
//! chunks are dropped). [`V2ClientV1Agent`] tracks at most [`MAX_PENDING`]
//! permission requests awaiting the client (past it a request passes
//! without its `state_update`s).

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use crate::version::Dialect;

mod keyed;
mod v1_client;
mod v2_client;

pub use v1_client::V1ClientV2Agent;
pub use v2_client::V2ClientV1Agent;

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

/// Either direction's translator, for a caller that picks one per
/// connection from the two sides' versions.
#[derive(Debug)]
pub enum Translator {
    /// A v1 client in front of a v2 agent.
    V1ClientV2Agent(V1ClientV2Agent),
    /// A v2 client in front of a v1 agent.
    V2ClientV1Agent(V2ClientV1Agent),
}

impl Translator {
    /// The translator between a `client` and an `agent` speaking these
    /// versions; `None` when they speak the same one (relay unchanged).
    pub fn between(client: Dialect, agent: Dialect) -> Option<Self> {
        match (client, agent) {
            (Dialect::V1, Dialect::V2) => Some(Self::V1ClientV2Agent(V1ClientV2Agent::new())),
            (Dialect::V2, Dialect::V1) => Some(Self::V2ClientV1Agent(V2ClientV1Agent::new())),
            _ => None,
        }
    }

    /// Translates one line from the client.
    pub fn client_line(&mut self, text: &str) -> Vec<Out> {
        match self {
            Self::V1ClientV2Agent(t) => t.client_line(text),
            Self::V2ClientV1Agent(t) => t.client_line(text),
        }
    }

    /// Translates one line from the agent.
    pub fn agent_line(&mut self, text: &str) -> Vec<Out> {
        match self {
            Self::V1ClientV2Agent(t) => t.agent_line(text),
            Self::V2ClientV1Agent(t) => t.agent_line(text),
        }
    }

    /// Whether the agent answered `initialize` with another version than
    /// expected, and the translator relays both ways unchanged.
    pub fn is_passthrough(&self) -> bool {
        match self {
            Self::V1ClientV2Agent(t) => t.is_passthrough(),
            Self::V2ClientV1Agent(t) => t.is_passthrough(),
        }
    }

    /// Requests awaiting an answer that the translator keeps state for.
    pub fn pending(&self) -> usize {
        match self {
            Self::V1ClientV2Agent(t) => t.pending(),
            Self::V2ClientV1Agent(t) => t.pending(),
        }
    }
}

/// Which version a shared mapping writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    V1,
    V2,
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

/// The methods only renamed between the versions: (v1, v2).
const RENAMED: [(&str, &str); 2] = [("authenticate", "auth/login"), ("logout", "auth/logout")];

/// `method`'s name in the other version, when it is only renamed.
fn renamed(method: &str, to: To) -> Option<&'static str> {
    RENAMED.iter().find_map(|&(v1, v2)| match to {
        To::V2 if method == v1 => Some(v2),
        To::V1 if method == v2 => Some(v1),
        _ => None,
    })
}

/// What every request of the client needs in both directions, in place:
/// its method's name when only renamed, `initialize`'s params (by
/// `initialize`, the direction's own), the MCP servers of `session/new`,
/// `session/load` and `session/resume`. Returns its `sessionId`.
fn client_request(
    msg: &mut Map<String, Value>,
    method: &str,
    to: To,
    initialize: fn(&mut Map<String, Value>),
) -> Option<String> {
    if let Some(name) = renamed(method, to) {
        msg.insert("method".into(), name.into());
    }
    let p = params_mut(msg)?;
    match method {
        "initialize" => initialize(p),
        "session/new" | "session/load" | "session/resume" => mcp_servers(p, to),
        _ => {}
    }
    mstr(p, "sessionId").map(String::from)
}

/// Whether the agent's `initialize` answer `msg` agrees on `version`.
fn agrees_on(msg: &Map<String, Value>, version: u64) -> bool {
    let answer = msg.get("result").and_then(|r| r.get("protocolVersion"));
    answer.and_then(Value::as_u64) == Some(version)
}

/// Moves member `from` to `to`, when present.
fn rename(m: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = m.remove(from) {
        m.insert(to.into(), v);
    }
}

/// The `params` of `msg` when they are an object.
fn params_mut(msg: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    match msg.get_mut("params") {
        Some(Value::Object(p)) => Some(p),
        _ => None,
    }
}

/// A `session/update` line: `envelope` (the notification without its
/// params, or a fresh one) with `params` and `update` in them.
fn update_line(
    envelope: &Map<String, Value>,
    params: &Map<String, Value>,
    update: Map<String, Value>,
) -> String {
    let mut p = params.clone();
    p.insert("update".into(), Value::Object(update));
    let mut m = envelope.clone();
    m.insert("params".into(), Value::Object(p));
    line(&Value::Object(m))
}

/// A fresh `session/update` line for `session`.
fn new_update(session: &str, update: Value) -> String {
    line(&json!({"jsonrpc": "2.0", "method": "session/update",
        "params": {"sessionId": session, "update": update}}))
}

/// `configOptions` in `obj` to the other version, in place: v1's `id` and
/// `group` are v2's `configId` and `groupId`.
fn config_options(obj: &mut Map<String, Value>, to: To) {
    let Some(Value::Array(options)) = obj.get_mut("configOptions") else {
        return;
    };
    let ((id_from, id_to), (group_from, group_to)) = match to {
        To::V1 => (("configId", "id"), ("groupId", "group")),
        To::V2 => (("id", "configId"), ("group", "groupId")),
    };
    for option in options {
        let Value::Object(option) = option else {
            continue;
        };
        rename(option, id_from, id_to);
        if let Some(Value::Array(groups)) = option.get_mut("options") {
            for group in groups {
                if let Value::Object(group) = group {
                    rename(group, group_from, group_to);
                }
            }
        }
    }
}

/// MCP server configurations in `p` to the other version, in place. To
/// v2: stdio servers get their `type`, `sse` ones (gone in v2) are dropped.
/// To v1: stdio servers lose their `type`, and the arrays v1 requires
/// (`mcpServers` itself, `args`, `env`, `headers`) are added empty.
fn mcp_servers(p: &mut Map<String, Value>, to: To) {
    if to == To::V1 && !p.contains_key("mcpServers") {
        p.insert("mcpServers".into(), json!([]));
    }
    let Some(Value::Array(servers)) = p.get_mut("mcpServers") else {
        return;
    };
    if to == To::V2 {
        servers.retain(|s| s.get("type").is_none_or(|t| t != "sse"));
    }
    for server in servers {
        let Value::Object(server) = server else {
            continue;
        };
        let required: &[&str] = match (to, mstr(server, "type")) {
            (To::V2, None) => {
                server.insert("type".into(), "stdio".into());
                &[]
            }
            (To::V1, Some("stdio")) => {
                server.remove("type");
                &["args", "env"]
            }
            (To::V1, Some("http")) => &["headers"],
            _ => &[],
        };
        for key in required {
            server.entry(*key).or_insert_with(|| json!([]));
        }
    }
}

/// An `available_commands_update` to the other version. To v1: the
/// command's `type: "command"` and the input's `type` dropped, an input of
/// another type than `text` dropped. To v2: a command gets
/// `type: "command"`, an input `type: "text"`.
fn commands_update(mut update: Map<String, Value>, to: To) -> Map<String, Value> {
    let Some(Value::Array(commands)) = update.get_mut("availableCommands") else {
        return update;
    };
    for command in commands {
        let Value::Object(command) = command else {
            continue;
        };
        match to {
            To::V1 if command.get("type").is_some_and(|t| t == "command") => {
                command.remove("type");
            }
            To::V2 => {
                command.entry("type").or_insert_with(|| "command".into());
            }
            To::V1 => {}
        }
        let keep = match (command.get_mut("input"), to) {
            (Some(Value::Object(input)), To::V1) => {
                input.remove("type").is_none_or(|t| t == "text")
            }
            (Some(Value::Object(input)), To::V2) => {
                input.entry("type").or_insert_with(|| "text".into());
                true
            }
            _ => true,
        };
        if !keep {
            command.remove("input");
        }
    }
    update
}

/// A tool call's `status` to the other version, in place: v1 lacks v2's
/// `cancelled` (→ `failed`) and `paused` (→ `in_progress`); v1's are all
/// v2's.
fn tool_status(update: &mut Map<String, Value>, to: To) {
    let Some(status) = update.get_mut("status") else {
        return;
    };
    if to == To::V1 {
        match status.as_str() {
            Some("cancelled") => *status = "failed".into(),
            Some("paused") => *status = "in_progress".into(),
            _ => {}
        }
    }
}

/// Plan entries to the other version, in place: v1 lacks v2's `cancelled`
/// entry status (→ `completed`); v1's are all v2's.
fn plan_entries(entries: &mut Value, to: To) {
    if to == To::V2 {
        return;
    }
    for entry in entries.as_array_mut().into_iter().flatten() {
        if let Some(status) = entry.get_mut("status") {
            if status == "cancelled" {
                *status = "completed".into();
            }
        }
    }
}
