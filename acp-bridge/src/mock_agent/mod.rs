//! A scripted, deterministic ACP agent that behaves like Gemini CLI 0.61 in
//! `--acp` mode, over any `AsyncRead`/`AsyncWrite` pair.
//!
//! One turn, for any prompt: a thought, message chunks, a plan, a shell tool
//! call that asks permission first (title = the command, the context in a
//! text block `[in DIR] (DESC)`, the permission request carrying the pending
//! tool call, then a `tool_call_update`), a read tool backed by
//! `fs/read_text_file`, a search, an edit that asks permission with a diff
//! and writes through `fs/write_text_file`, an optional large tool output
//! (`big_bytes`), and the stop reason. Several sessions and overlapping
//! prompts run at once; `session/cancel` (or a new prompt on the same
//! session, as Gemini does) ends a turn with `cancelled`; unknown methods get
//! `-32601`.
//!
//! Sessions stay for the life of the process, as real agents keep theirs
//! (and beyond it with [`Options::state_dir`]: one JSON Lines file a
//! session, read again by the next process, so `session/load` works after
//! a restart or on another server sharing the directory):
//! `session/list` lists them (by `cwd` when asked), `session/load` replays
//! a session's history (the user's prompts and everything the agent sent
//! for it) as `session/update`s before its answer, `session/resume` takes
//! one up again without the replay; the capabilities say so
//! (`loadSession`, `sessionCapabilities.list` and `.resume`).
//! Every session offers two modes (`default`, `yolo`; `session/set_mode`
//! refuses others) and one configuration option, `effort` (`fast` or
//! `thorough`, set with `session/set_config_option`), and announces two
//! slash commands (`available_commands_update`).
//! `initialize`'s answer tells where the process runs in its `_meta`
//! (`acp-mock-agent`: `pid`, `home`, `cwd`), which shows a client (and a
//! test) which process serves it. Every message it writes is first decoded back through the
//! crate's typed ACP structs, so it only ever sends schema-valid messages.
//!
//! With [`Options::v2`] it speaks ACP v2 instead, a turn of its own
//! ([`v2`]).
//!
//! Call [`serve`] with the two halves of a byte stream.

use acp_codec::acp::{Mode, Notification, Request};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_codec::acp::{
    encode_error, encode_notification, ContentBlock, InitializeRequest, Message,
    NotificationParams, PromptRequest, RawJson, RequestId, RequestParams, RpcError, Tracker, Typed,
};
use acp_codec::ErrorCode;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{oneshot, watch};

use crate::lines::LineSender;
use sessions::{serve_lines, LineAgent, Sessions, Started};

mod mcp;
mod sessions;
pub mod v2;

/// What the scripted turn does beyond the fixed steps.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Bytes of output for an extra shell tool call (`seq`-like lines);
    /// 0 leaves the step out.
    pub big_bytes: usize,
    /// Pause between steps (0 for tests; a few hundred ms shows streaming
    /// and gives Ctrl-C something to cancel).
    pub step_delay: Duration,
    /// Run shell commands through the client's `terminal/*` (when it
    /// offers them): one behind a permission prompt whose output passes
    /// its `outputByteLimit`, one killed while it runs.
    pub terminal: bool,
    /// Where sessions are saved, one `<sessionId>.jsonl` file each (the
    /// working directory, the title, every update), and read back when the
    /// agent starts: what a real agent keeps in its `HOME`. `None` keeps
    /// them in memory only.
    pub state_dir: Option<PathBuf>,
    /// Speak ACP v2, and only v2 (`--protocol 2`): see [`v2`]'s turn.
    /// `terminal` does not apply (v2 has no client terminals).
    pub v2: bool,
    /// Take MCP servers only as stdio (and HTTP) servers, as every agent
    /// of today: no `mcpCapabilities.acp` in the `initialize` answer.
    pub no_mcp_over_acp: bool,
    /// Also write `OWN.md` in the session's `cwd` itself, as an agent's
    /// own write tool or shell does (not through the client's `fs/*`),
    /// reported as a tool call with the file's path in its `locations`.
    pub own_write: bool,
    /// v2 only: add a tool call that advertises `capabilities.cancel` and
    /// runs until the client's `tool_call/cancel`, or this long.
    pub cancellable_tool: Option<Duration>,
    /// v2 only: withdraw a permission request still unanswered after this
    /// long (`$/cancel_request`, as an agent's own timeout does); the tool
    /// call is then not run.
    pub permission_timeout: Option<Duration>,
}

/// The state directory under `$HOME` (`$HOME/.acp-mock-agent/sessions`),
/// as a real agent keeps its sessions; `None` without `HOME`.
pub fn home_state_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(Path::new(&home).join(".acp-mock-agent").join("sessions"))
}

/// Serves one ACP connection until `reader` ends; returns then, cancelling
/// the turns still running.
///
/// # Errors
///
/// I/O errors of `reader`. A closed `writer` ends the turns quietly.
pub async fn serve<R, W>(reader: R, writer: W, options: Options) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    if options.v2 {
        return v2::serve(reader, writer, options).await;
    }
    let store = options.state_dir.clone().map(|dir| Store { dir });
    let state = State {
        sessions: Sessions::open(store.as_ref())?,
        ..State::default()
    };
    let agent = Arc::new(Agent {
        out: LineSender::spawn(writer),
        options,
        epoch: Instant::now(),
        state: Mutex::new(state),
        store,
    });
    serve_lines(agent, reader).await
}

/// Why a turn stopped early.
enum Stop {
    /// `session/cancel`, or a newer prompt on the same session.
    Cancelled,
    /// The client is gone (our output failed, or it will not answer).
    Closed,
}

impl From<io::Error> for Stop {
    fn from(_: io::Error) -> Self {
        Self::Closed
    }
}

/// The client's answer to one of our requests.
enum Reply {
    Ok(Value),
    Err(RpcError<'static>),
}

#[derive(Default)]
struct State {
    tracker: Tracker,
    waiters: HashMap<RequestId<'static>, oneshot::Sender<Reply>>,
    sessions: Sessions,
    fs_read: bool,
    fs_write: bool,
    terminal: bool,
}

struct Session {
    cwd: PathBuf,
    /// The running turn's cancel switch.
    turn: Option<watch::Sender<bool>>,
    /// The first prompt's first 80 characters.
    title: Option<String>,
    /// Every update of the session, the user's prompts included, for
    /// `session/load`.
    history: Vec<Value>,
    /// The MCP servers the client gave it (`mcpServers`, as sent).
    mcp: Vec<Value>,
}

struct Agent {
    out: LineSender,
    options: Options,
    epoch: Instant,
    state: Mutex<State>,
    store: Option<Store>,
}

/// Sessions on disk: `<dir>/<sessionId>.jsonl`, one record a line, each
/// appended as it happens: `{"cwd": …}` (at creation, and whenever a load
/// or resume moves the session), `{"title": …}`, `{"update": …}`.
struct Store {
    dir: PathBuf,
}

impl Store {
    /// Appends one record to the session's file; a failure is reported on
    /// stderr and the session goes on in memory.
    fn append(&self, session_id: &str, record: &Value) {
        use std::io::Write as _;
        let path = self.dir.join(format!("{session_id}.jsonl"));
        let mut line = record.to_string();
        line.push('\n');
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("acp-mock-agent: cannot save to {}: {e}", path.display());
        }
    }

    /// Every saved session. A line that does not read (the last one, cut
    /// short by a crash) is skipped.
    fn load(&self) -> io::Result<Vec<(String, Session)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            let Some(sid) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
            else {
                continue;
            };
            out.push((sid.to_owned(), Self::read(&path)?));
        }
        Ok(out)
    }

    /// The session `session_id` as saved (by this process or another one
    /// sharing the directory since this one started), if it is.
    fn load_one(&self, session_id: &str) -> Option<Session> {
        let path = self.dir.join(format!("{session_id}.jsonl"));
        let plain = !session_id.is_empty()
            && !session_id.contains(['/', '\\'])
            && !session_id.starts_with('.');
        plain.then(|| Self::read(&path).ok()).flatten()
    }

    fn read(path: &Path) -> io::Result<Session> {
        let mut session = Session {
            cwd: PathBuf::from("/"),
            turn: None,
            title: None,
            history: Vec::new(),
            mcp: Vec::new(),
        };
        for line in std::fs::read_to_string(path)?.lines() {
            let Ok(mut record) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if let Some(cwd) = record.get("cwd").and_then(Value::as_str) {
                session.cwd = PathBuf::from(cwd);
            } else if let Some(title) = record.get("title").and_then(Value::as_str) {
                session.title = Some(title.to_owned());
            } else if let Some(update) = record.get_mut("update") {
                session.history.push(update.take());
            }
        }
        Ok(session)
    }

    /// Claims the id `session_id` for a new session: its file made, or
    /// `false` when another process made it first.
    fn claim(&self, session_id: &str) -> bool {
        let path = self.dir.join(format!("{session_id}.jsonl"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
            // Saving fails later, loudly; the session goes on in memory.
            Err(_) => true,
        }
    }
}

/// The session modes every session offers, `default` current.
fn modes() -> Value {
    json!({
        "availableModes": [
            {"id": "default", "name": "Default", "description": "Prompts for approval"},
            {"id": "yolo", "name": "YOLO", "description": "Auto-approves all tools"}
        ],
        "currentModeId": "default"
    })
}

/// The one configuration option every session offers, `effort`, at
/// `value` (`fast` or `thorough`).
fn config_options(value: &str) -> Value {
    json!([{
        "type": "select", "id": "effort", "name": "Effort", "currentValue": value,
        "options": [
            {"value": "fast", "name": "Fast"},
            {"value": "thorough", "name": "Thorough"}
        ]
    }])
}

/// This process's pid as the machine's `/proc` names it: an agent started
/// by `acp-bridge` runs in a PID namespace of its own (where it is a small
/// number), while `/proc` stays the one it was started with.
fn host_pid() -> u32 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(std::process::id)
}

/// The process's id, `HOME` and working directory.
fn where_it_runs() -> Value {
    let cwd = std::env::current_dir().map_or(String::new(), |d| d.display().to_string());
    let home = std::env::var("HOME").unwrap_or_default();
    json!({"pid": host_pid(), "home": home, "cwd": cwd})
}

/// The number of a `mock-session-N` id, for listing in creation order.
fn session_number(sid: &str) -> u64 {
    sid.rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Gemini CLI's three permission options.
fn permission_options() -> Value {
    json!([
        {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
        {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
        {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}
    ])
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn text_block(t: &str) -> Value {
    json!([{"type": "content", "content": text(t)}])
}

fn thought(t: &str) -> Value {
    json!({"sessionUpdate": "agent_thought_chunk", "content": text(t)})
}

fn say(t: &str) -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "content": text(t)})
}

/// The plan, its first `done` entries completed, the next in progress.
fn plan(done: usize) -> Value {
    let entries = plan_entries(
        &["List the project files", "Read README.md", "Write NOTES.md"],
        done,
        |i| if i == 0 { "high" } else { "medium" },
    );
    json!({"sessionUpdate": "plan", "entries": entries})
}

/// A plan's entries of `contents`, the first `done` completed, the next
/// in progress, the rest pending; entry `i` of priority `priority(i)`.
/// Both protocols' plans are made of them.
fn plan_entries(contents: &[&str], done: usize, priority: fn(usize) -> &'static str) -> Vec<Value> {
    contents
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let status = match i.cmp(&done) {
                std::cmp::Ordering::Less => "completed",
                std::cmp::Ordering::Equal => "in_progress",
                std::cmp::Ordering::Greater => "pending",
            };
            json!({"content": c, "priority": priority(i), "status": status})
        })
        .collect()
}

/// The `terminalId` of a `terminal/create` result.
fn terminal_id(result: &Value) -> String {
    result
        .get("terminalId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// What the steps of one scripted turn need.
struct Turn<'a> {
    sid: &'a str,
    cwd: &'a Path,
    /// `cwd` as text.
    dir: String,
    /// The prompt's first 80 characters.
    first: String,
    /// The turn's number (in tool call ids).
    n: u64,
    /// What the client offers.
    fs_read: bool,
    fs_write: bool,
}

impl Turn<'_> {
    /// A Gemini-style tool call id: `NAME__NAME_TURN_N`.
    fn tool_id(&self, name: &str, n: u32) -> String {
        format!("{name}__{name}_{}_{n}", self.n)
    }
}

impl LineAgent for Agent {
    async fn take_line(self: &Arc<Self>, line: &str) -> io::Result<()> {
        self.handle_line(line).await
    }

    async fn refuse(&self, id: &RequestId<'_>, code: ErrorCode, message: &str) -> io::Result<()> {
        self.send_error(id, code, message).await
    }

    fn stop_turns(&self) {
        self.state().sessions.cancel_all();
    }
}

impl Agent {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    async fn handle_line(self: &Arc<Self>, line: &str) -> io::Result<()> {
        let msg = match Message::decode(line) {
            Ok(m) => m,
            Err(e) => {
                return self
                    .send_error(&RequestId::Null, e.code(), &e.to_string())
                    .await;
            }
        };
        match msg {
            Message::Request(req) => {
                let registered = self
                    .state()
                    .tracker
                    .handle_peer_request(&req.id, &req.method);
                if let Err(e) = registered {
                    return self.send_error(&req.id, e.code(), &e.to_string()).await;
                }
                let typed = req
                    .typed(Mode::Lenient)
                    .map(|t| warn_salvaged(&req.method, t));
                self.handle_request(req.id.to_owned_id(), typed).await
            }
            Message::Notification(n) => {
                let typed = n.typed(Mode::Lenient).map(|t| warn_salvaged(&n.method, t));
                if let Ok(NotificationParams::Cancel(c)) = typed {
                    let mut st = self.state();
                    if let Some(t) = st
                        .sessions
                        .get_mut(&c.session_id)
                        .and_then(|s| s.turn.take())
                    {
                        let _ = t.send(true);
                    }
                }
                Ok(())
            }
            Message::Response(_) | Message::Error(_) => {
                let mut st = self.state();
                match st.tracker.handle(&msg, self.now()) {
                    Ok(Some(done)) => {
                        let reply = match msg {
                            Message::Response(r) => Reply::Ok(
                                serde_json::from_str(r.result.get()).unwrap_or(Value::Null),
                            ),
                            Message::Error(e) => Reply::Err(e.error.into_owned()),
                            _ => return Ok(()),
                        };
                        if let Some(w) = st.waiters.remove(&done.id) {
                            let _ = w.send(reply);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => eprintln!("acp-mock-agent: {e}"),
                }
                Ok(())
            }
        }
    }

    async fn handle_request(
        self: &Arc<Self>,
        id: RequestId<'static>,
        typed: Result<RequestParams<'_>, acp_codec::MessageError>,
    ) -> io::Result<()> {
        let params = match typed {
            Ok(p) => p,
            Err(e) => return self.send_error(&id, e.code(), &e.to_string()).await,
        };
        match params {
            RequestParams::Initialize(p) => self.initialize(&id, &p).await,
            RequestParams::Authenticate(_) => self.send_result(&id, &json!({})).await,
            RequestParams::NewSession(p) => {
                let mcp = p
                    .mcp_servers
                    .iter()
                    .filter_map(|m| serde_json::to_value(m).ok())
                    .collect();
                self.new_session(&id, &p.cwd, mcp).await
            }
            RequestParams::SetSessionMode(p) => {
                if !modes()["availableModes"]
                    .as_array()
                    .is_some_and(|m| m.iter().any(|m| m["id"] == *p.mode_id))
                {
                    let msg = format!("no such mode: {}", p.mode_id);
                    return self.send_error(&id, ErrorCode::INVALID_PARAMS, &msg).await;
                }
                self.for_session(&id, &p.session_id, &json!({})).await
            }
            RequestParams::SetSessionConfigOption(p) => {
                let value = match &p.value {
                    acp_codec::acp::ConfigValue::Id(v) if v == "fast" || v == "thorough" => v,
                    _ => {
                        let msg = format!("no such value for {}", p.config_id);
                        return self.send_error(&id, ErrorCode::INVALID_PARAMS, &msg).await;
                    }
                };
                if p.config_id != "effort" {
                    let msg = format!("no such option: {}", p.config_id);
                    return self.send_error(&id, ErrorCode::INVALID_PARAMS, &msg).await;
                }
                let result = json!({ "configOptions": config_options(value) });
                self.for_session(&id, &p.session_id, &result).await
            }
            RequestParams::SetSessionModel(p) => {
                self.for_session(&id, &p.session_id, &json!({})).await
            }
            RequestParams::Prompt(p) => self.prompt(id, p).await,
            RequestParams::LoadSession(p) => self.load_session(&id, &p.session_id, &p.cwd).await,
            RequestParams::ResumeSession(p) => {
                self.resume_session(&id, &p.session_id, &p.cwd).await
            }
            RequestParams::ListSessions(p) => self.list_sessions(&id, p.cwd.as_deref()).await,
            other => {
                let msg = format!("method not found: {}", other.method());
                self.send_error(&id, ErrorCode::METHOD_NOT_FOUND, &msg)
                    .await
            }
        }
    }

    /// `initialize`: notes what the client offers (fs, terminals).
    async fn initialize(
        &self,
        id: &RequestId<'static>,
        p: &InitializeRequest<'_>,
    ) -> io::Result<()> {
        let fs = p.client_capabilities.as_ref().and_then(|c| c.fs.as_ref());
        {
            let mut st = self.state();
            st.fs_read = fs.and_then(|f| f.read_text_file).unwrap_or(false);
            st.fs_write = fs.and_then(|f| f.write_text_file).unwrap_or(false);
            st.terminal = p
                .client_capabilities
                .as_ref()
                .and_then(|c| c.terminal)
                .unwrap_or(false);
        }
        let result = json!({
            "protocolVersion": 1,
            "authMethods": [],
            "agentInfo": {"name": "acp-codec-mock-agent", "title": "acp-codec mock agent", "version": env!("CARGO_PKG_VERSION")},
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
                "sessionCapabilities": {"list": {}, "resume": {}},
                "mcpCapabilities": {"acp": !self.options.no_mcp_over_acp}
            },
            "_meta": {"acp-mock-agent": where_it_runs()}
        });
        self.send_result(id, &result).await
    }

    /// `session/new` in `cwd` (absolute), then its commands.
    async fn new_session(
        &self,
        id: &RequestId<'static>,
        cwd: &str,
        mcp: Vec<Value>,
    ) -> io::Result<()> {
        let cwd_path = PathBuf::from(cwd);
        if !cwd_path.is_absolute() {
            let msg = format!("cwd must be an absolute path, got {cwd:?}");
            return self.send_error(id, ErrorCode::INVALID_PARAMS, &msg).await;
        }
        let session_id = self
            .state()
            .sessions
            .create(self.store.as_ref(), cwd_path, mcp);
        self.save(&session_id, json!({ "cwd": cwd }));
        let result = json!({"sessionId": session_id, "modes": modes(), "configOptions": config_options("fast")});
        self.send_result(id, &result).await?;
        let commands = json!({
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "memory", "description": "Manage memory."},
                {"name": "about", "description": "Show version info."}
            ]
        });
        self.update(&session_id, commands).await
    }

    /// `session/load`: the session's history as `session/update`s, then the
    /// answer; the session works in `cwd` from now on.
    async fn load_session(
        &self,
        id: &RequestId<'static>,
        session_id: &str,
        cwd: &str,
    ) -> io::Result<()> {
        let Some(history) = self.take_up(session_id, cwd) else {
            return self.session_not_found(id, session_id).await;
        };
        for update in history {
            self.send_update(session_id, update).await?;
        }
        self.send_result(id, &json!({"modes": modes()})).await
    }

    /// `session/resume`: the session works in `cwd` from now on; nothing is
    /// replayed.
    async fn resume_session(
        &self,
        id: &RequestId<'static>,
        session_id: &str,
        cwd: &str,
    ) -> io::Result<()> {
        if self.take_up(session_id, cwd).is_none() {
            return self.session_not_found(id, session_id).await;
        }
        self.send_result(id, &json!({"modes": modes()})).await
    }

    /// The history of `session_id`, now working in `cwd`; `None` when there
    /// is no such session.
    fn take_up(&self, session_id: &str, cwd: &str) -> Option<Vec<Value>> {
        let mut st = self.state();
        if !st.sessions.contains_key(session_id) {
            // Saved since this process started, by another one sharing
            // the directory.
            let saved = self.store.as_ref()?.load_one(session_id)?;
            st.sessions.insert(session_id.to_owned(), saved);
        }
        let session = st.sessions.get_mut(session_id)?;
        session.cwd = PathBuf::from(cwd);
        let history = session.history.clone();
        drop(st);
        self.save(session_id, json!({ "cwd": cwd }));
        Some(history)
    }

    async fn session_not_found(&self, id: &RequestId<'static>, session_id: &str) -> io::Result<()> {
        let msg = format!("session not found: {session_id}");
        self.send_error(id, ErrorCode::INVALID_PARAMS, &msg).await
    }

    /// `session/list`: every session (in `cwd`, when given), oldest first.
    async fn list_sessions(&self, id: &RequestId<'static>, cwd: Option<&str>) -> io::Result<()> {
        let sessions = self.state().sessions.list(cwd);
        self.send_result(id, &json!({ "sessions": sessions })).await
    }

    /// `session/prompt`: starts the scripted turn (cancelling the one
    /// running on the session, as Gemini does), answered when it ends.
    async fn prompt(
        self: &Arc<Self>,
        id: RequestId<'static>,
        p: PromptRequest<'_>,
    ) -> io::Result<()> {
        let prompt: String = p
            .prompt
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(&*t.text),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" ");
        let session_id = p.session_id.into_owned();
        let said = json!({"sessionUpdate": "user_message_chunk", "content": text(&prompt)});
        let started = {
            let mut st = self.state();
            let started = st.sessions.start_turn(&session_id, &prompt);
            if let (Some(_), Some(s)) = (&started, st.sessions.get_mut(&session_id)) {
                s.history.push(said.clone());
            }
            started
        };
        let Some(Started {
            n: turn,
            cwd,
            cancel,
            title,
        }) = started
        else {
            let msg = format!("session not found: {session_id}");
            return self.send_error(&id, ErrorCode::INVALID_PARAMS, &msg).await;
        };
        if let Some(title) = title {
            self.save(&session_id, json!({ "title": title }));
        }
        self.save(&session_id, json!({ "update": said }));
        let agent = Arc::clone(self);
        tokio::spawn(async move {
            agent.turn(id, session_id, cwd, prompt, cancel, turn).await;
        });
        Ok(())
    }

    async fn for_session(
        &self,
        id: &RequestId<'static>,
        session_id: &str,
        result: &Value,
    ) -> io::Result<()> {
        if self.state().sessions.contains_key(session_id) {
            self.send_result(id, result).await
        } else {
            let msg = format!("session not found: {session_id}");
            self.send_error(id, ErrorCode::INVALID_PARAMS, &msg).await
        }
    }

    async fn send_result(&self, id: &RequestId<'_>, result: &Value) -> io::Result<()> {
        let mut out = Vec::new();
        self.state()
            .tracker
            .encode_response(id, result, &mut out)
            .map_err(io::Error::other)?;
        self.out.send(out).await
    }

    async fn send_error(&self, id: &RequestId<'_>, code: ErrorCode, msg: &str) -> io::Result<()> {
        let mut out = Vec::new();
        let error = RpcError::new(code, msg);
        // Answer through the tracker when the request was registered.
        let tracked = self.state().tracker.encode_error(id, &error, &mut out);
        if tracked.is_err() {
            out.clear();
            encode_error(id, &error, &mut out).map_err(io::Error::other)?;
        }
        self.out.send(out).await
    }

    /// Sends one `session/update` and keeps it in the session's history
    /// (and its file).
    async fn update(&self, session_id: &str, update: Value) -> io::Result<()> {
        let known = match self.state().sessions.get_mut(session_id) {
            Some(s) => {
                s.history.push(update.clone());
                true
            }
            None => false,
        };
        if known {
            self.save(session_id, json!({ "update": update }));
        }
        self.send_update(session_id, update).await
    }

    /// Appends a record to the session's file, when sessions are saved.
    fn save(&self, session_id: &str, record: Value) {
        if let Some(store) = &self.store {
            store.append(session_id, &record);
        }
    }

    /// Sends one `session/update`, checked against the typed schema first.
    async fn send_update(&self, session_id: &str, update: Value) -> io::Result<()> {
        let params = json!({"sessionId": session_id, "update": update});
        let raw = RawJson::from_string(params.to_string()).map_err(io::Error::other)?;
        let update = Notification {
            method: "session/update".into(),
            params: Some(raw),
        };
        let typed = update
            .typed(Mode::Strict)
            .map(|t| t.value)
            .map_err(|e| io::Error::other(format!("mock sent a bad update: {e}")))?;
        let mut out = Vec::new();
        encode_notification(&typed, &mut out).map_err(io::Error::other)?;
        self.out.send(out).await
    }

    /// Sends a request to the client (checked against the typed schema) and
    /// waits for its answer or the turn's cancellation.
    async fn request(
        &self,
        method: &str,
        params: Value,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<Reply, Stop> {
        let raw = RawJson::from_string(params.to_string()).map_err(io::Error::other)?;
        let request = Request {
            id: RequestId::Null,
            method: method.into(),
            params: Some(raw),
        };
        let typed = request
            .typed(Mode::Strict)
            .map(|t| t.value)
            .map_err(|e| io::Error::other(format!("mock sent a bad request: {e}")))?;
        let mut out = Vec::new();
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.state();
            let now = self.now();
            let id = st
                .tracker
                .encode_request_with_timeout(&typed, now, Duration::from_secs(24 * 3600), &mut out)
                .map_err(io::Error::other)?;
            st.waiters.insert(id, tx);
        }
        self.out.send(out).await?;
        tokio::select! {
            reply = rx => reply.map_err(|_| Stop::Closed),
            _ = cancelled(cancel) => Err(Stop::Cancelled),
        }
    }

    /// Sends the client a notification, checked against the typed schema.
    async fn notify(&self, method: &str, params: Value) -> io::Result<()> {
        let raw = RawJson::from_string(params.to_string()).map_err(io::Error::other)?;
        let n = Notification {
            method: method.into(),
            params: Some(raw),
        };
        let typed = n
            .typed(Mode::Strict)
            .map(|t| t.value)
            .map_err(|e| io::Error::other(format!("mock sent a bad notification: {e}")))?;
        let mut out = Vec::new();
        encode_notification(&typed, &mut out).map_err(io::Error::other)?;
        self.out.send(out).await
    }

    /// Pauses between steps; stops when the turn is cancelled.
    async fn step(&self, cancel: &mut watch::Receiver<bool>) -> Result<(), Stop> {
        if *cancel.borrow() {
            return Err(Stop::Cancelled);
        }
        if self.options.step_delay.is_zero() {
            tokio::task::yield_now().await;
            return Ok(());
        }
        tokio::select! {
            () = tokio::time::sleep(self.options.step_delay) => Ok(()),
            _ = cancelled(cancel) => Err(Stop::Cancelled),
        }
    }

    async fn turn(
        self: Arc<Self>,
        id: RequestId<'static>,
        session_id: String,
        cwd: PathBuf,
        prompt: String,
        mut cancel: watch::Receiver<bool>,
        turn: u64,
    ) {
        let outcome = self
            .script(&session_id, &cwd, &prompt, &mut cancel, turn)
            .await;
        let reason = match outcome {
            Ok(()) => "end_turn",
            Err(Stop::Cancelled) => "cancelled",
            Err(Stop::Closed) => return,
        };
        self.state().sessions.end_turn(&session_id, &cancel);
        let _ = self.send_result(&id, &json!({"stopReason": reason})).await;
    }

    /// The scripted turn.
    async fn script(
        &self,
        sid: &str,
        cwd: &Path,
        prompt: &str,
        cancel: &mut watch::Receiver<bool>,
        turn: u64,
    ) -> Result<(), Stop> {
        let (fs_read, fs_write) = {
            let st = self.state();
            (st.fs_read, st.fs_write)
        };
        let t = Turn {
            sid,
            cwd,
            dir: cwd.display().to_string(),
            first: prompt.chars().take(80).collect(),
            n: turn,
            fs_read,
            fs_write,
        };
        self.step(cancel).await?;
        // `mcp TOOL [KEY=VALUE…]`: the session's MCP servers used first.
        if let Some(ask) = prompt.split_once("mcp ").map(|(_, ask)| ask) {
            let servers = self
                .state()
                .sessions
                .get(sid)
                .map(|s| s.mcp.clone())
                .unwrap_or_default();
            mcp::use_servers(self, sid, &t, &servers, ask, cancel).await?;
        }
        self.survey(&t, cancel).await?;
        self.shell_step(&t, cancel).await?;
        self.read_step(&t, cancel).await?;
        self.search_step(&t, cancel).await?;
        let wrote = self.write_step(&t, cancel).await?;
        if self.options.own_write {
            self.own_write_step(&t, cancel).await?;
        }

        // 5a. Optionally, commands through the client's terminal.
        let terminal = self.options.terminal && self.state().terminal;
        if terminal {
            let call = t.tool_id("run_shell_command", 5);
            self.terminal_step(sid, &t.dir, call, cancel).await?;
        }

        // 5. Optionally, a tool with a large output.
        if self.options.big_bytes > 0 {
            self.big_output_step(&t, cancel).await?;
        }

        self.update(sid, say("Done. I listed the project, read the README"))
            .await?;
        let end = if wrote {
            " and wrote NOTES.md."
        } else {
            " but was not allowed to write NOTES.md."
        };
        self.update(sid, say(end)).await?;
        Ok(())
    }

    /// A thought, two message chunks, the plan.
    async fn survey(&self, t: &Turn<'_>, cancel: &mut watch::Receiver<bool>) -> Result<(), Stop> {
        let sid = t.sid;
        let first = &t.first;
        self.update(sid, thought(&format!("**Surveying the project**\nThe request is \"{first}\"; I should list the files and read the README before changing anything."))).await?;
        self.step(cancel).await?;
        self.update(sid, say("I'll start by looking around"))
            .await?;
        self.update(sid, say(" the project to see what is there."))
            .await?;
        self.update(sid, plan(0)).await?;
        self.step(cancel).await
    }

    /// 1. A shell command: permission first, then the result.
    async fn shell_step(
        &self,
        t: &Turn<'_>,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<(), Stop> {
        let sid = t.sid;
        let shell = t.tool_id("run_shell_command", 0);
        let call = json!({
            "toolCallId": shell, "status": "pending", "title": "ls -la && wc -l *.md",
            "content": text_block("[in .] (List the project files with sizes and count lines)"),
            "locations": [], "kind": "execute"
        });
        let allowed = self.permission(sid, call, cancel).await?;
        let update = if allowed {
            json!({"sessionUpdate": "tool_call_update", "toolCallId": shell, "status": "completed",
                   "title": "ls -la && wc -l *.md", "content": text_block("README.md\nsrc/\n  12 README.md"),
                   "locations": [], "kind": "execute"})
        } else {
            json!({"sessionUpdate": "tool_call_update", "toolCallId": shell, "status": "failed",
                   "content": text_block("Tool call rejected by the user."), "kind": "execute"})
        };
        self.update(sid, update).await?;
        self.update(sid, plan(1)).await?;
        self.step(cancel).await
    }

    /// 2. Read a file through the client.
    async fn read_step(
        &self,
        t: &Turn<'_>,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<(), Stop> {
        let sid = t.sid;
        let read = t.tool_id("read_file", 1);
        let readme = t.cwd.join("README.md").display().to_string();
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call", "toolCallId": read, "status": "in_progress",
            "title": "README.md", "content": [], "locations": [{"path": readme}], "kind": "read"}),
        )
        .await?;
        let (status, content) = if t.fs_read {
            match self.read_file(sid, &readme, cancel).await? {
                Ok(body) => ("completed", format!("Read {} bytes.", body.len())),
                Err(e) => ("failed", format!("Error reading file: {}", e.message)),
            }
        } else {
            ("completed", "The client offers no fs; skipped.".to_owned())
        };
        self.update(sid, json!({"sessionUpdate": "tool_call_update", "toolCallId": read, "status": status,
            "title": "README.md", "content": text_block(&content), "locations": [{"path": readme}], "kind": "read"})).await?;
        self.step(cancel).await
    }

    /// 3. A search, no permission needed; then the plan moves on.
    async fn search_step(
        &self,
        t: &Turn<'_>,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<(), Stop> {
        let sid = t.sid;
        let glob = t.tool_id("glob", 2);
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call", "toolCallId": glob, "status": "in_progress",
            "title": "'**/*.md'", "content": [], "locations": [], "kind": "search"}),
        )
        .await?;
        self.update(sid, json!({"sessionUpdate": "tool_call_update", "toolCallId": glob, "status": "completed",
            "title": "'**/*.md'", "content": text_block("Found 1 matching file(s)"), "locations": [], "kind": "search"})).await?;
        self.update(sid, plan(2)).await?;
        self.update(
            sid,
            thought("**Writing notes**\nI will record what I found in NOTES.md."),
        )
        .await?;
        self.update(sid, say("Now I'll write some notes.")).await?;
        self.step(cancel).await
    }

    /// Step 4, a file written: read the old text, ask with a diff, write.
    /// `Ok(true)` when the write was allowed.
    async fn write_step(
        &self,
        t: &Turn<'_>,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<bool, Stop> {
        let sid = t.sid;
        let write = t.tool_id("write_file", 3);
        let notes = t.cwd.join("NOTES.md").display().to_string();
        let old = if t.fs_read {
            self.read_file(sid, &notes, cancel).await?.ok()
        } else {
            None
        };
        let new_text = format!("# Notes\n\nLooked at {} for: {}\n", t.dir, t.first);
        let call = json!({
            "toolCallId": write, "status": "pending", "title": "Writing to NOTES.md",
            "content": [{"type": "diff", "path": notes, "oldText": old, "newText": new_text}],
            "locations": [{"path": notes}], "kind": "edit"
        });
        let allowed = self.permission(sid, call, cancel).await?;
        let (status, content) = if !allowed {
            ("failed", "Tool call rejected by the user.".to_owned())
        } else if t.fs_write {
            let params = json!({"sessionId": sid, "path": notes, "content": new_text});
            match self.request("fs/write_text_file", params, cancel).await? {
                Reply::Ok(_) => ("completed", "Wrote NOTES.md.".to_owned()),
                Reply::Err(e) => ("failed", format!("Error writing file: {}", e.message)),
            }
        } else {
            ("completed", "The client offers no fs; skipped.".to_owned())
        };
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": write, "status": status,
            "content": text_block(&content), "locations": [{"path": notes}], "kind": "edit"}),
        )
        .await?;
        self.update(sid, plan(3)).await?;
        self.step(cancel).await?;
        Ok(allowed)
    }

    /// 4a. A file written by the agent itself in its `cwd` (no `fs/*`).
    async fn own_write_step(
        &self,
        t: &Turn<'_>,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<(), Stop> {
        let sid = t.sid;
        let own = t.tool_id("write_file", 6);
        let path = t.cwd.join("OWN.md");
        let shown = path.display().to_string();
        let (status, content) = match std::fs::write(&path, format!("# Own\n\n{}\n", t.first)) {
            Ok(()) => ("completed", "Wrote OWN.md myself.".to_owned()),
            Err(e) => ("failed", format!("Error writing file: {e}")),
        };
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call", "toolCallId": own, "status": status,
            "title": "Writing to OWN.md", "content": text_block(&content),
            "locations": [{"path": shown}], "kind": "edit"}),
        )
        .await?;
        self.step(cancel).await
    }

    /// 5. A tool call with `big_bytes` of output.
    async fn big_output_step(
        &self,
        t: &Turn<'_>,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<(), Stop> {
        let (sid, dir) = (t.sid, &t.dir);
        let big = t.tool_id("run_shell_command", 4);
        let title = "seq 1 1000000";
        self.update(sid, json!({"sessionUpdate": "tool_call", "toolCallId": big, "status": "in_progress",
            "title": title, "content": text_block(&format!("[current working directory {dir}] (Print a long sequence (large output))")),
            "locations": [], "kind": "execute"})).await?;
        let output = seq_output(self.options.big_bytes);
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": big, "status": "completed",
            "title": title, "content": text_block(&output), "locations": [], "kind": "execute"}),
        )
        .await?;
        self.step(cancel).await
    }

    /// Asks permission for `call`; `Ok(true)` when an allow option was
    /// picked. A `cancelled` outcome stops the turn.
    async fn permission(
        &self,
        sid: &str,
        call: Value,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<bool, Stop> {
        let params = json!({"sessionId": sid, "options": permission_options(), "toolCall": call});
        match self
            .request("session/request_permission", params, cancel)
            .await?
        {
            Reply::Ok(v) => match v.pointer("/outcome/outcome").and_then(Value::as_str) {
                Some("selected") => {
                    let option = v.pointer("/outcome/optionId").and_then(Value::as_str);
                    Ok(matches!(option, Some("proceed_once" | "proceed_always")))
                }
                _ => Err(Stop::Cancelled),
            },
            Reply::Err(e) => {
                eprintln!("acp-mock-agent: permission request failed: {}", e.message);
                Ok(false)
            }
        }
    }

    /// Runs `seq 1 3000; exit 3` (16 KB of output, 1000 kept) behind a
    /// permission prompt, then `sleep 30` killed at once; reports both in
    /// the tool call and in a message the tests read.
    async fn terminal_step(
        &self,
        sid: &str,
        dir: &str,
        call: String,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<(), Stop> {
        let title = "seq 1 3000; exit 3";
        let pending =
            json!({"toolCallId": call, "title": title, "kind": "execute", "status": "pending"});
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call", "toolCallId": call, "status": "pending",
            "title": title, "content": [], "locations": [], "kind": "execute"}),
        )
        .await?;
        if !self.permission(sid, pending, cancel).await? {
            self.update(
                sid,
                json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "failed",
                "content": text_block("Not allowed to run it.")}),
            )
            .await?;
            return Ok(());
        }
        let report = self.run_in_terminal(sid, dir, title, &call, cancel).await?;
        let killed = self.kill_in_terminal(sid, dir, cancel).await?;
        let status = if report.starts_with("terminal: exit 3") {
            "completed"
        } else {
            "failed"
        };
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": status,
            "content": text_block(&format!("{report}; {killed}"))}),
        )
        .await?;
        let said = text(&format!("{report}; {killed}. "));
        self.update(
            sid,
            json!({"sessionUpdate": "agent_message_chunk", "content": said}),
        )
        .await?;
        self.step(cancel).await
    }

    /// `command` through `terminal/create` (output limit 1000 bytes), shown
    /// in tool call `call`; waits for its exit, reads its output, releases
    /// it. The report says how it went.
    async fn run_in_terminal(
        &self,
        sid: &str,
        dir: &str,
        command: &str,
        call: &str,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<String, Stop> {
        let created = json!({"sessionId": sid, "command": "sh", "args": ["-c", command],
            "cwd": dir, "outputByteLimit": 1000});
        let tid = match self.request("terminal/create", created, cancel).await? {
            Reply::Ok(v) => terminal_id(&v),
            Reply::Err(e) => return Ok(format!("terminal failed: {}", e.message)),
        };
        self.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": tid}]}),
        )
        .await?;
        let t = json!({"sessionId": sid, "terminalId": tid});
        let exit = self
            .request("terminal/wait_for_exit", t.clone(), cancel)
            .await?;
        let out = self.request("terminal/output", t.clone(), cancel).await?;
        self.request("terminal/release", t, cancel).await?;
        Ok(match (exit, out) {
            (Reply::Ok(e), Reply::Ok(o)) => {
                let text = o.get("output").and_then(Value::as_str).unwrap_or_default();
                format!(
                    "terminal: exit {}, truncated {}, kept {} bytes ending {:?}",
                    e.get("exitCode").unwrap_or(&Value::Null),
                    o.get("truncated").unwrap_or(&Value::Null),
                    text.len(),
                    text.lines().last().unwrap_or_default()
                )
            }
            (Reply::Err(e), _) | (_, Reply::Err(e)) => {
                format!("terminal failed: {}", e.message)
            }
        })
    }

    /// A command killed while it runs: the whole group goes. The report
    /// names the signal.
    async fn kill_in_terminal(
        &self,
        sid: &str,
        dir: &str,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<String, Stop> {
        let sleeper = json!({"sessionId": sid, "command": "sh", "args": ["-c", "sleep 30 & sleep 30"], "cwd": dir});
        let tid = match self.request("terminal/create", sleeper, cancel).await? {
            Reply::Ok(v) => terminal_id(&v),
            Reply::Err(e) => return Ok(format!("kill failed: {}", e.message)),
        };
        let t = json!({"sessionId": sid, "terminalId": tid});
        self.request("terminal/kill", t.clone(), cancel).await?;
        let exit = self
            .request("terminal/wait_for_exit", t.clone(), cancel)
            .await?;
        self.request("terminal/release", t, cancel).await?;
        Ok(match exit {
            Reply::Ok(e) => {
                format!("killed: signal {}", e.get("signal").unwrap_or(&Value::Null))
            }
            Reply::Err(e) => format!("kill failed: {}", e.message),
        })
    }

    async fn read_file(
        &self,
        sid: &str,
        path: &str,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<Result<String, RpcError<'static>>, Stop> {
        let params = json!({"sessionId": sid, "path": path});
        Ok(
            match self.request("fs/read_text_file", params, cancel).await? {
                Reply::Ok(v) => Ok(v
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()),
                Reply::Err(e) => Err(e),
            },
        )
    }
}

/// Resolves when the turn's switch is set (or its sender is gone).
async fn cancelled(cancel: &mut watch::Receiver<bool>) {
    let _ = cancel.wait_for(|c| *c).await;
}

/// Reports on stderr, as a warning, every part of a client message
/// (`method`) that lenient decoding salvaged instead of failing; its value.
fn warn_salvaged<T>(method: &str, typed: Typed<'_, T>) -> T {
    for s in &typed.salvaged {
        eprintln!("acp-mock-agent: warning: {method} did not fit the schema: {s}");
    }
    typed.value
}

fn peeked_id(id: &acp_codec::PeekedId) -> RequestId<'static> {
    match id {
        acp_codec::PeekedId::Number(n) => RequestId::Number(*n),
        other => other
            .as_str()
            .map_or(RequestId::Null, |s| RequestId::Str(s.to_owned().into())),
    }
}

/// `seq 1 N` output of about `bytes` bytes.
fn seq_output(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 16);
    let mut n = 1u64;
    while out.len() < bytes {
        out.push_str(&n.to_string());
        out.push('\n');
        n += 1;
    }
    out.truncate(bytes);
    out
}
