//! The mock agent speaking ACP v2 (`acp-mock-agent --protocol 2`), and v2
//! only: an `initialize` asking for version 1 gets `-32022`.
//!
//! The turn, for any prompt: the answer to `session/prompt` when it is
//! accepted (its `messageId`, the user message's), the `user_message`,
//! `state_update` `running`, a thought chunk, message chunks, a plan
//! (`plan_update`, replaced whole as it moves on), a shell tool call made
//! by its first `tool_call_update`, a permission request for it (with
//! `requires_action` while it waits), its output in
//! `tool_call_content_chunk`s, an `agent_message` that replaces a message
//! streamed before under the same id, an optional large output
//! (`big_bytes`), and `state_update` `idle` with the `stopReason`
//! (`end_turn`, or `cancelled` after `session/cancel`, a cancelled
//! permission, or a newer prompt on the session).
//!
//! Cancellation: `session/cancel` while the permission request waits
//! withdraws it (`$/cancel_request`); the mock then waits for the client's
//! answer (the `cancelled` outcome or error `-32800`, up to 500 ms), tells
//! in a final `tool_call_update` (status `cancelled`) what the client
//! answered, and ends the turn `cancelled`.
//! [`Options::permission_timeout`](super::Options::permission_timeout)
//! withdraws it the same way when unanswered for that long, and the turn
//! goes on without running the tool call.
//! [`Options::cancellable_tool`](super::Options::cancellable_tool) adds a
//! tool call (`task-N`) that advertises `capabilities.cancel` and runs
//! until `tool_call/cancel` (answered `{}`, then a `tool_call_update` to
//! `cancelled` that clears the capabilities) or for the time it is given
//! (`completed`);
//! `tool_call/cancel` of a tool call that is unknown, final or not
//! cancellable gets `-32602`. The turn goes on either way.
//!
//! `session/resume` takes a session up again; with `replayFrom`
//! `{"type":"start"}` it first replays the session's history (every update
//! but the state ones), with the mock's own cursor
//! `{"type":"_acp-mock-agent/index","index":N}` the history from update N
//! on (each `session/update` of the history carries its index in the
//! params' `_meta`, `{"acp-mock-agent":{"index":N}}`); after a replay,
//! the state as it is now (`state_update`), then the answer.
//! `session/list`, `session/close` (ends the running turn) and
//! `session/delete` (forgets the session, and its file) do what v2 says;
//! an unknown session gets `-32002` with its id. Sessions are saved as v1's
//! are ([`Options::state_dir`](super::Options::state_dir)).
//!
//! Messages are built as JSON here (the crate's typed v2 layer is not
//! used); the tests validate each one against the v2 schema.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use acp_codec::acp::{Message, RequestId};
use acp_codec::version::{Dialect, Negotiator, Step};
use acp_codec::ErrorCode;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{oneshot, watch};

use super::sessions::{serve_lines, LineAgent, Sessions, Started};
use super::{cancelled, permission_options, seq_output, text, where_it_runs, Options, Store};
use crate::lines::LineSender;

/// The mock's own replay cursor type.
const CURSOR: &str = "_acp-mock-agent/index";

/// How long a withdrawn permission request's answer is waited for.
const WITHDRAW_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// What came of a permission request.
enum Asked {
    Allowed,
    Rejected,
    /// Withdrawn by the mock itself (its timeout): the tool call is not run.
    Withdrawn,
}

/// Serves one ACP v2 connection until `reader` ends, as
/// [`serve`](super::serve) serves v1.
pub(super) async fn serve<R, W>(reader: R, writer: W, options: Options) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let store = options.state_dir.clone().map(|dir| Store { dir });
    let state = State {
        negotiator: Negotiator::new(&[Dialect::V2]),
        sessions: Sessions::open(store.as_ref())?,
        next_id: 0,
        waiters: HashMap::new(),
        tools: HashMap::new(),
    };
    let agent = Arc::new(Agent {
        out: LineSender::spawn(writer),
        options,
        state: Mutex::new(state),
        store,
    });
    serve_lines(agent, reader).await
}

struct State {
    negotiator: Negotiator,
    sessions: Sessions,
    /// Our requests' ids, and who waits for each answer.
    next_id: i64,
    waiters: HashMap<i64, oneshot::Sender<Result<Value, Value>>>,
    /// The running tool calls that advertise `capabilities.cancel`, by
    /// session and tool call id: what stops each.
    tools: HashMap<(String, String), oneshot::Sender<()>>,
}

struct Agent {
    out: LineSender,
    options: Options,
    state: Mutex<State>,
    store: Option<Store>,
}

/// An answer.
fn result(id: &RequestId<'_>, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error answer.
fn error(id: &RequestId<'_>, code: ErrorCode, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
}

/// The `-32002` answer for an unknown session.
fn no_session(id: &RequestId<'_>, sid: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": ErrorCode::RESOURCE_NOT_FOUND.0,
        "message": format!("session not found: {sid}"), "data": {"sessionId": sid}}})
}

/// The text of a param, `""` when absent.
fn param<'a>(params: &'a Value, name: &str) -> &'a str {
    params.get(name).and_then(Value::as_str).unwrap_or_default()
}

fn state_update(state: &str, stop_reason: Option<&str>) -> Value {
    let mut update = json!({"sessionUpdate": "state_update", "state": state});
    if let Some(reason) = stop_reason {
        update["stopReason"] = json!(reason);
    }
    update
}

/// The plan `plan-N`, its first `done` entries completed, the next in
/// progress.
fn plan(n: u64, done: usize) -> Value {
    let entries = super::plan_entries(
        &["List the project files", "Summarize what is there"],
        done,
        |_| "medium",
    );
    json!({"sessionUpdate": "plan_update",
           "plan": {"type": "items", "planId": format!("plan-{n}"), "entries": entries}})
}

/// A tool call's content item of text `t`.
fn tool_text(t: &str) -> Value {
    json!({"type": "content", "content": text(t)})
}

impl LineAgent for Agent {
    async fn take_line(self: &Arc<Self>, line: &str) -> io::Result<()> {
        self.handle_line(line).await
    }

    async fn refuse(&self, id: &RequestId<'_>, code: ErrorCode, message: &str) -> io::Result<()> {
        self.send(error(id, code, message)).await
    }

    fn stop_turns(&self) {
        self.state().sessions.cancel_all();
    }
}

impl Agent {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn send(&self, message: Value) -> io::Result<()> {
        let mut line = message.to_string();
        line.push('\n');
        self.out.send(line.into_bytes()).await
    }

    async fn handle_line(self: &Arc<Self>, line: &str) -> io::Result<()> {
        let step = self.state().negotiator.handle_line(line);
        match step {
            Step::Initialize(init) => {
                let answer = json!({
                    "protocolVersion": init.dialect.version(),
                    "info": {"name": "acp-codec-mock-agent", "title": "acp-codec mock agent", "version": env!("CARGO_PKG_VERSION")},
                    "capabilities": {"session": {"prompt": {"embeddedContext": {}}, "delete": {}}},
                    "authMethods": [],
                    "_meta": {"acp-mock-agent": where_it_runs()}
                });
                self.send(result(&init.id, answer)).await
            }
            Step::Refuse { id, error } => {
                let error = serde_json::to_value(&error).map_err(io::Error::other)?;
                self.send(json!({"jsonrpc": "2.0", "id": id, "error": error}))
                    .await
            }
            Step::Pass { message, .. } => self.handle_message(message).await,
            _ => Ok(()),
        }
    }

    async fn handle_message(self: &Arc<Self>, message: Message<'_>) -> io::Result<()> {
        let params = |raw: Option<&acp_codec::acp::RawJson<'_>>| {
            raw.and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                .unwrap_or(Value::Null)
        };
        match message {
            Message::Request(r) => {
                let p = params(r.params.as_ref());
                let id = r.id.into_owned();
                match &*r.method {
                    "session/new" => self.new_session(&id, param(&p, "cwd")).await,
                    "session/prompt" => self.prompt(id, &p).await,
                    "session/resume" => self.resume(&id, &p).await,
                    "session/list" => self.list(&id, p.get("cwd").and_then(Value::as_str)).await,
                    "tool_call/cancel" => self.cancel_tool(&id, &p).await,
                    "session/close" | "session/delete" => {
                        let delete = r.method == "session/delete";
                        self.close(&id, param(&p, "sessionId"), delete).await
                    }
                    method => {
                        let msg = format!("method not found: {method}");
                        self.send(error(&id, ErrorCode::METHOD_NOT_FOUND, &msg))
                            .await
                    }
                }
            }
            Message::Notification(n) => {
                if n.method == "session/cancel" {
                    let sid = param(&params(n.params.as_ref()), "sessionId").to_owned();
                    self.cancel(&sid);
                }
                Ok(())
            }
            Message::Response(r) => {
                self.answered(&r.id, Ok(params(Some(&r.result))));
                Ok(())
            }
            Message::Error(e) => {
                let error = serde_json::to_value(&e.error).unwrap_or(Value::Null);
                self.answered(&e.id, Err(error));
                Ok(())
            }
        }
    }

    /// Hands the client's answer to whoever waits for it.
    fn answered(&self, id: &RequestId<'_>, reply: Result<Value, Value>) {
        let waiter = match id {
            RequestId::Number(n) => self.state().waiters.remove(n),
            _ => None,
        };
        match waiter {
            Some(w) => {
                let _ = w.send(reply);
            }
            None => eprintln!("acp-mock-agent: an answer to no pending request of ours (id {id})"),
        }
    }

    /// `tool_call/cancel`: `{}` and the tool call stops (its task sends the
    /// final update), or `-32602` when it is not a running cancellable one.
    async fn cancel_tool(&self, id: &RequestId<'static>, p: &Value) -> io::Result<()> {
        let key = (
            param(p, "sessionId").to_owned(),
            param(p, "toolCallId").to_owned(),
        );
        let stop = self.state().tools.remove(&key);
        let Some(stop) = stop else {
            let msg = format!(
                "tool call {:?} of session {:?} is unknown, final or not cancellable",
                key.1, key.0
            );
            return self.send(error(id, ErrorCode::INVALID_PARAMS, &msg)).await;
        };
        self.send(result(id, json!({}))).await?;
        let _ = stop.send(());
        Ok(())
    }

    /// Ends the session's running turn, if any.
    fn cancel(&self, sid: &str) {
        if let Some(t) = self
            .state()
            .sessions
            .get_mut(sid)
            .and_then(|s| s.turn.take())
        {
            let _ = t.send(true);
        }
    }

    fn save(&self, sid: &str, record: Value) {
        if let Some(store) = &self.store {
            store.append(sid, &record);
        }
    }

    /// `session/new` in `cwd` (absolute).
    async fn new_session(&self, id: &RequestId<'static>, cwd: &str) -> io::Result<()> {
        if !Path::new(cwd).is_absolute() {
            let msg = format!("cwd must be an absolute path, got {cwd:?}");
            return self.send(error(id, ErrorCode::INVALID_PARAMS, &msg)).await;
        }
        // The v2 mock is no MCP client (the v1 mock is).
        let sid = self
            .state()
            .sessions
            .create(self.store.as_ref(), PathBuf::from(cwd), Vec::new());
        self.save(&sid, json!({ "cwd": cwd }));
        let commands = [("memory", "Manage memory."), ("about", "Show version info.")]
            .map(|(name, description)| json!({"type": "command", "name": name, "description": description}));
        self.send(result(
            id,
            json!({"sessionId": sid, "availableCommands": commands}),
        ))
        .await
    }

    /// `session/resume`: the session works in `cwd` from now on; with
    /// `replayFrom`, its history from there, then its state.
    async fn resume(&self, id: &RequestId<'static>, p: &Value) -> io::Result<()> {
        let (sid, cwd) = (param(p, "sessionId"), param(p, "cwd"));
        let from = match p.get("replayFrom").filter(|r| !r.is_null()) {
            None => None,
            Some(r) => match (r.get("type").and_then(Value::as_str), r.get("index")) {
                (Some("start"), _) => Some(0),
                (Some(CURSOR), Some(n)) if n.as_u64().is_some() => n.as_u64(),
                _ => {
                    let msg = format!("unknown replayFrom: {r}");
                    return self.send(error(id, ErrorCode::INVALID_PARAMS, &msg)).await;
                }
            },
        };
        let taken = {
            let mut st = self.state();
            if !st.sessions.contains_key(sid) {
                if let Some(saved) = self.store.as_ref().and_then(|s| s.load_one(sid)) {
                    st.sessions.insert(sid.to_owned(), saved);
                }
            }
            st.sessions.get_mut(sid).map(|s| {
                s.cwd = PathBuf::from(cwd);
                (s.history.clone(), s.turn.is_some())
            })
        };
        let Some((history, running)) = taken else {
            return self.send(no_session(id, sid)).await;
        };
        self.save(sid, json!({ "cwd": cwd }));
        if let Some(from) = from {
            let from = usize::try_from(from).unwrap_or(usize::MAX);
            for (index, update) in history.into_iter().enumerate().skip(from) {
                self.send_update(sid, update, Some(index)).await?;
            }
            let now = if running { "running" } else { "idle" };
            self.send_update(sid, state_update(now, None), None).await?;
        }
        self.send(result(id, json!({}))).await
    }

    /// `session/list`: every session (in `cwd`, when given), oldest first.
    async fn list(&self, id: &RequestId<'static>, cwd: Option<&str>) -> io::Result<()> {
        let sessions = self.state().sessions.list(cwd);
        self.send(result(id, json!({ "sessions": sessions }))).await
    }

    /// `session/close` (the turn ends, the session stays) or
    /// `session/delete` (the session and its file are gone).
    async fn close(&self, id: &RequestId<'static>, sid: &str, delete: bool) -> io::Result<()> {
        let known = {
            let mut st = self.state();
            if !st.sessions.contains_key(sid) {
                if let Some(saved) = self.store.as_ref().and_then(|s| s.load_one(sid)) {
                    st.sessions.insert(sid.to_owned(), saved);
                }
            }
            let turn = if delete {
                st.sessions.remove(sid).map(|s| s.turn)
            } else {
                st.sessions.get_mut(sid).map(|s| s.turn.take())
            };
            if let Some(Some(t)) = &turn {
                let _ = t.send(true);
            }
            turn.is_some()
        };
        if !known {
            return self.send(no_session(id, sid)).await;
        }
        if let (true, Some(store)) = (delete, &self.store) {
            if let Err(e) = std::fs::remove_file(store.dir.join(format!("{sid}.jsonl"))) {
                eprintln!("acp-mock-agent: cannot delete session {sid}: {e}");
            }
        }
        self.send(result(id, json!({}))).await
    }

    /// `session/prompt`: accepted at once (answered with the user
    /// message's id), then the turn runs.
    async fn prompt(self: &Arc<Self>, id: RequestId<'static>, p: &Value) -> io::Result<()> {
        let sid = param(p, "sessionId").to_owned();
        let blocks = p.get("prompt").cloned().unwrap_or(json!([]));
        let said: String = blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        let started = self.state().sessions.start_turn(&sid, &said);
        let Some(Started {
            n, cancel, title, ..
        }) = started
        else {
            return self.send(no_session(&id, &sid)).await;
        };
        if let Some(title) = title {
            self.save(&sid, json!({ "title": title }));
        }
        let user = format!("user-{n}");
        self.send(result(&id, json!({"messageId": user}))).await?;
        let message =
            json!({"sessionUpdate": "user_message", "messageId": user, "content": blocks});
        self.update(&sid, message).await?;
        let agent = Arc::clone(self);
        tokio::spawn(async move { agent.turn(sid, n, said, cancel).await });
        Ok(())
    }

    /// Runs the turn and reports how it ended.
    async fn turn(
        self: Arc<Self>,
        sid: String,
        n: u64,
        said: String,
        mut cancel: watch::Receiver<bool>,
    ) {
        let reason = match self.script(&sid, n, &said, &mut cancel).await {
            Ok(true) => "end_turn",
            Ok(false) => "cancelled",
            Err(_) => return,
        };
        self.state().sessions.end_turn(&sid, &cancel);
        let _ = self
            .send_update(&sid, state_update("idle", Some(reason)), None)
            .await;
    }

    /// The scripted turn: `Ok(true)` when it ran to its end, `Ok(false)`
    /// when cancelled.
    async fn script(
        &self,
        sid: &str,
        n: u64,
        said: &str,
        cancel: &mut watch::Receiver<bool>,
    ) -> io::Result<bool> {
        macro_rules! step {
            () => {
                if !self.step(cancel).await {
                    return Ok(false);
                }
            };
        }
        let first: String = said.chars().take(80).collect();
        let (thought, msg, done) = (
            format!("thought-{n}"),
            format!("msg-{n}"),
            format!("done-{n}"),
        );
        self.send_update(sid, state_update("running", None), None)
            .await?;
        step!();
        self.update(
            sid,
            json!({"sessionUpdate": "agent_thought_chunk", "messageId": thought,
            "content": text(&format!("**Surveying the project**\nThe request is \"{first}\"."))}),
        )
        .await?;
        for chunk in ["I'll start by looking around", " the project."] {
            self.update(sid, json!({"sessionUpdate": "agent_message_chunk", "messageId": msg, "content": text(chunk)})).await?;
        }
        self.update(sid, plan(n, 0)).await?;
        step!();
        // A tool call, made by its first update, behind a permission.
        let call = format!("shell-{n}");
        let pending = json!({"toolCallId": call, "title": "ls -la", "kind": "execute", "status": "pending",
            "rawInput": {"command": "ls -la"}});
        let mut created = pending.clone();
        created["sessionUpdate"] = json!("tool_call_update");
        self.update(sid, created).await?;
        let Some(asked) = self.permission(sid, pending, cancel).await? else {
            return Ok(false);
        };
        let allowed = matches!(asked, Asked::Allowed);
        if allowed {
            self.update(sid, json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "in_progress"})).await?;
            for line in ["README.md\n", "src/\n"] {
                self.update(sid, json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": call, "content": tool_text(line)})).await?;
            }
            self.update(sid, json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"})).await?;
        } else if matches!(asked, Asked::Rejected) {
            self.update(
                sid,
                json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "failed",
                "content": [tool_text("Tool call rejected by the user.")]}),
            )
            .await?;
        }
        self.update(sid, plan(n, 1)).await?;
        step!();
        if let Some(runs) = self.options.cancellable_tool {
            if !self.cancellable_task(sid, n, runs, cancel).await? {
                return Ok(false);
            }
            step!();
        }
        if self.options.big_bytes > 0 {
            let big = format!("seq-{n}");
            self.update(sid, json!({"sessionUpdate": "tool_call_update", "toolCallId": big, "title": "seq 1 1000000",
                "kind": "execute", "status": "in_progress"})).await?;
            let output = seq_output(self.options.big_bytes);
            self.update(sid, json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": big, "content": tool_text(&output)})).await?;
            self.update(sid, json!({"sessionUpdate": "tool_call_update", "toolCallId": big, "status": "completed"})).await?;
            step!();
        }
        // A message streamed, then replaced whole under its id.
        self.update(sid, json!({"sessionUpdate": "agent_message_chunk", "messageId": done, "content": text("Summing up…")})).await?;
        let summary = if allowed {
            "Done: the project has a README and a src directory."
        } else {
            "Done, without listing the project: not allowed."
        };
        self.update(sid, json!({"sessionUpdate": "agent_message", "messageId": done, "content": [text(summary)]})).await?;
        self.update(sid, plan(n, 2)).await?;
        Ok(true)
    }

    /// Asks permission for `call`; `None` when the turn was cancelled (or
    /// the outcome was). Withdrawn (`$/cancel_request`) on `session/cancel`
    /// and at the mock's permission timeout.
    async fn permission(
        &self,
        sid: &str,
        call: Value,
        cancel: &mut watch::Receiver<bool>,
    ) -> io::Result<Option<Asked>> {
        enum Woke {
            Cancelled,
            Reply(Result<Result<Value, Value>, oneshot::error::RecvError>),
            Timeout,
        }
        self.send_update(sid, state_update("requires_action", None), None)
            .await?;
        let (tx, mut rx) = oneshot::channel();
        let id = {
            let mut st = self.state();
            st.next_id += 1;
            let id = st.next_id;
            st.waiters.insert(id, tx);
            id
        };
        let call_id = call["toolCallId"].as_str().unwrap_or_default().to_owned();
        let title = format!("Run {}?", call["title"].as_str().unwrap_or_default());
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission",
            "params": {"sessionId": sid, "title": title, "subject": {"type": "tool_call", "toolCall": call},
                       "options": permission_options()}})).await?;
        let timeout = self.options.permission_timeout;
        let woke = tokio::select! {
            biased;
            _ = cancelled(cancel) => Woke::Cancelled,
            reply = &mut rx => Woke::Reply(reply),
            () = async {
                match timeout {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            } => Woke::Timeout,
        };
        let reply = match woke {
            Woke::Cancelled => {
                self.withdraw(sid, &call_id, id, rx).await?;
                return Ok(None);
            }
            Woke::Timeout => {
                self.withdraw(sid, &call_id, id, rx).await?;
                self.send_update(sid, state_update("running", None), None)
                    .await?;
                return Ok(Some(Asked::Withdrawn));
            }
            Woke::Reply(reply) => reply.map_err(|_| io::Error::other("the client is gone"))?,
        };
        let allowed = match reply {
            Ok(v) => match v.pointer("/outcome/outcome").and_then(Value::as_str) {
                Some("selected") => {
                    let option = v.pointer("/outcome/optionId").and_then(Value::as_str);
                    matches!(option, Some("proceed_once" | "proceed_always"))
                }
                _ => return Ok(None),
            },
            Err(e) => {
                eprintln!("acp-mock-agent: permission request failed: {e}");
                false
            }
        };
        self.send_update(sid, state_update("running", None), None)
            .await?;
        Ok(Some(if allowed {
            Asked::Allowed
        } else {
            Asked::Rejected
        }))
    }

    /// Withdraws our permission request `id` for tool call `call`
    /// (`$/cancel_request`), waits for the client's answer (`answer`, at
    /// most [`WITHDRAW_WAIT`]), and ends the tool call `cancelled` saying
    /// what the client answered.
    async fn withdraw(
        &self,
        sid: &str,
        call: &str,
        id: i64,
        answer: oneshot::Receiver<Result<Value, Value>>,
    ) -> io::Result<()> {
        self.send(
            json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": id}}),
        )
        .await?;
        let said = match tokio::time::timeout(WITHDRAW_WAIT, answer).await {
            Ok(Ok(Ok(v))) => match v.pointer("/outcome/outcome").and_then(Value::as_str) {
                Some(outcome) => format!("the {outcome} outcome"),
                None => "a result without an outcome".to_owned(),
            },
            Ok(Ok(Err(e))) => format!("error {}", e["code"]),
            _ => {
                self.state().waiters.remove(&id);
                "nothing".to_owned()
            }
        };
        let text = format!(
            "Permission request withdrawn ($/cancel_request); the client answered with {said}."
        );
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "cancelled",
                   "content": [tool_text(&text)]}),
        )
        .await
    }

    /// The tool call `task-N`, cancellable while it runs (`runs` at
    /// most): `false` when the turn was cancelled meanwhile.
    async fn cancellable_task(
        &self,
        sid: &str,
        n: u64,
        runs: std::time::Duration,
        cancel: &mut watch::Receiver<bool>,
    ) -> io::Result<bool> {
        let call = format!("task-{n}");
        let key = (sid.to_owned(), call.clone());
        let (tx, stop) = oneshot::channel();
        self.state().tools.insert(key.clone(), tx);
        let title = format!("sleep {:.1}", runs.as_secs_f64());
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "title": title,
            "kind": "execute", "status": "in_progress", "capabilities": {"cancel": {}}}),
        )
        .await?;
        let woke = tokio::select! {
            biased;
            _ = cancelled(cancel) => None,
            stopped = stop => Some(stopped.is_ok()),
            () = tokio::time::sleep(runs) => Some(false),
        };
        self.state().tools.remove(&key);
        let (status, said) = match woke {
            None => ("cancelled", "Stopped: the turn was cancelled."),
            Some(true) => ("cancelled", "Cancelled by the client (tool_call/cancel)."),
            Some(false) => ("completed", "Finished."),
        };
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": status,
            "capabilities": null, "content": [tool_text(said)]}),
        )
        .await?;
        Ok(woke.is_some())
    }

    /// Pauses between steps; `false` when the turn is cancelled.
    async fn step(&self, cancel: &mut watch::Receiver<bool>) -> bool {
        if *cancel.borrow() {
            return false;
        }
        if self.options.step_delay.is_zero() {
            tokio::task::yield_now().await;
            return !*cancel.borrow();
        }
        tokio::select! {
            () = tokio::time::sleep(self.options.step_delay) => true,
            _ = cancelled(cancel) => false,
        }
    }

    /// Sends one `session/update` and keeps it in the session's history
    /// (and its file).
    async fn update(&self, sid: &str, update: Value) -> io::Result<()> {
        let index = self.state().sessions.get_mut(sid).map(|s| {
            s.history.push(update.clone());
            s.history.len() - 1
        });
        if index.is_some() {
            self.save(sid, json!({ "update": update }));
        }
        self.send_update(sid, update, index).await
    }

    /// Sends one `session/update`, with its index in the history when it
    /// has one.
    async fn send_update(&self, sid: &str, update: Value, index: Option<usize>) -> io::Result<()> {
        let mut params = json!({"sessionId": sid, "update": update});
        if let Some(index) = index {
            params["_meta"] = json!({"acp-mock-agent": {"index": index}});
        }
        self.send(json!({"jsonrpc": "2.0", "method": "session/update", "params": params}))
            .await
    }
}
