//! The protocol side of `acp-client`: one ACP connection driven through
//! initialize, session/new and one session/prompt, over any line transport
//! ([`LineSource`] in, [`LineSender`] out); or, for a conversation
//! (`crate::interactive`), through any number of turns and the session
//! requests between them (list, new, load or resume, set a mode or an
//! option).
//!
//! Requests go out through the crate's [`Tracker`] (ids, deadlines); every
//! incoming line is decoded once with [`decode_line`] and the tracker
//! ([`Decoding::with_tracker`]): notifications and the agent's requests
//! typed by method, responses to our requests typed by theirs.
//! While a request of ours is pending, everything else the agent sends is
//! handled: `session/update` is printed, `session/request_permission` is
//! answered by policy, `fs/*` is served inside the session directory, other
//! requests get `-32601`.
//!
//! Cancellation either way: Ctrl-C sends `session/cancel`. The agent's
//! `$/cancel_request` for one of its requests still unanswered withdraws
//! it: a permission question being asked is dismissed and answered with
//! the `cancelled` outcome (what ACP v2 asks of a client for a request
//! the agent cancels), an answer given later not sent; a deferred answer
//! (`terminal/wait_for_exit`, the MCP relay's) is answered `-32800`. A
//! tool call that advertises `capabilities.cancel` (v2) can be cancelled
//! with `tool_call/cancel` ([`Client::cancel_tool`], `--tool-timeout`).

use acp_codec::acp::{Decoding, Mode};
use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use acp_codec::acp::{
    decode_line, encode_notification, ClientCapabilities, ContentBlock, CreateTerminalRequest,
    CreateTerminalResponse, FileSystemCapabilities, Implementation, Incoming, InitializeRequest,
    Message, MetaOnly, NewSessionRequest, NotificationParams, PermissionOption,
    PermissionOptionKind, PromptRequest, RawJson, ReadTextFileRequest, ReadTextFileResponse,
    Request, RequestId, RequestParams, RequestPermissionOutcome, RequestPermissionResponse,
    ResponseResult, RpcError, Salvage, SelectedPermissionOutcome, SessionIdRequest,
    TerminalExitStatus, TerminalOutputResponse, TextContent, Tracker, Typed,
};
use acp_codec::client::quirks::Quirks;
use acp_codec::remote::LINE_DROPPED;
use acp_codec::{ErrorCode, FrameError};
use tokio::sync::mpsc;

use crate::confined::{Confined, FsError};
use crate::editor::{Input, LineEditor};
use crate::lines::{LineSender, LineSource};
use crate::render::Render;
use crate::terminals::Terminals;
use crate::tool_cancel::{Cancellable, Seen, ToolCancels};

/// An item of the agent's lines: a line, a line refused, the end.
type Item = std::io::Result<Option<Result<String, FrameError>>>;

/// Lines of the agent kept while a permission question is asked, at most;
/// past it the agent is not read until the question is answered.
const MAX_BACKLOG: usize = 256;

/// A response's result typed by its request's method, or why it does not
/// fit.
type TypedResult = Result<Typed<'static, ResponseResult<'static>>, acp_codec::MessageError>;

/// How to answer `session/request_permission` (`--permission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Permission {
    /// The first `allow_once` option (else `allow_always`).
    Allow,
    /// The first `reject_once` option (else `reject_always`, else cancelled).
    Reject,
    /// Ask on the terminal.
    Ask,
}

/// What to run.
pub struct Config {
    /// The session directory (`cwd` of `session/new`, root of `fs/*`).
    pub cwd: PathBuf,
    pub prompt: String,
    pub permission: Permission,
    /// Longest wait for an answer to initialize / session/new, and longest
    /// silence of the agent during a turn.
    pub timeout: Duration,
    /// A session to continue (`session/resume`, else `session/load`)
    /// instead of creating one.
    pub session: Option<String>,
    /// The user's MCP servers to offer (`--mcp-config`); none when empty.
    pub mcp_servers: crate::mcp::Servers,
    /// Offer them over ACP through the relay (a remote agent) rather than
    /// as servers the agent starts itself (a local one).
    pub mcp_over_acp: bool,
    /// `--tool-timeout`: cancel (`tool_call/cancel`) a tool call that
    /// offers it once it has run this long.
    pub tool_timeout: Option<Duration>,
}

/// Everything counted for `--summary-json`.
#[derive(Debug, Default)]
pub struct Stats {
    pub agent: Option<String>,
    pub session_id: Option<String>,
    pub stop_reason: Option<String>,
    pub permission_requests: u64,
    pub permissions_allowed: u64,
    pub fs_reads: u64,
    pub fs_writes: u64,
    pub fs_refused: u64,
    /// Commands run for the agent (`terminal/create`).
    pub terminals: u64,
    pub lines: u64,
    pub bad_lines: u64,
    pub largest_line_bytes: usize,
    pub cancelled_by_user: bool,
}

/// What the agent said of the current session: its modes and its
/// configuration options (from the answer that opened it, kept current by
/// its updates).
#[derive(Debug, Default)]
pub struct SessionState {
    /// The modes offered and the current one (`None`: the agent has none).
    pub modes: Option<acp_codec::acp::SessionModeState<'static>>,
    /// The configuration options with their current values.
    pub config: Vec<acp_codec::acp::SessionConfigOption<'static>>,
}

/// Why the run ended without a stop reason.
#[derive(Debug)]
pub enum Failure {
    /// The agent answered one of our requests with an error.
    Agent {
        method: String,
        error: RpcError<'static>,
    },
    /// No answer (or, during a turn, no message) within the timeout.
    Timeout { method: String, secs: f64 },
    /// The agent's output ended or it exited.
    Closed { method: String, detail: String },
    /// A second Ctrl-C, or one before the turn started.
    Interrupted,
    /// Our own I/O or encoding failed.
    Local(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Agent { method, error } => {
                write!(
                    f,
                    "agent answered {method} with error {}: {}",
                    error.code.0, error.message
                )?;
                if let Some(data) = &error.data {
                    write!(f, " ({})", data.get())?;
                }
                Ok(())
            }
            Self::Timeout { method, secs } => {
                write!(
                    f,
                    "timed out after {secs:.1} s waiting for the agent ({method})"
                )
            }
            Self::Closed { method, detail } => {
                write!(f, "agent stopped while we waited for {method}: {detail}")
            }
            Self::Interrupted => write!(f, "interrupted"),
            Self::Local(e) => write!(f, "{e}"),
        }
    }
}

/// One client connection.
pub struct Client<S> {
    source: S,
    out: LineSender,
    cfg: Config,
    fs: Confined,
    tracker: Tracker,
    epoch: Instant,
    pub render: Render,
    pub stats: Stats,
    /// The current session's modes and configuration options.
    pub session: SessionState,
    /// The interactive prompt line, which also answers permission
    /// requests (`--permission ask`) when there is one.
    editor: Option<LineEditor>,
    /// Ctrl-C presses.
    interrupts: mpsc::Receiver<()>,
    /// Resolves with a description when the transport's far end is gone
    /// (the agent process exited).
    closed: Pin<Box<dyn Future<Output = String> + Send>>,
    closed_detail: Option<String>,
    /// Lines typed on our stdin, for `--permission ask`.
    /// Each with when it was read.
    answers: Option<mpsc::Receiver<(Instant, Option<String>)>>,
    /// When the agent last withdrew a question being asked on stdin: a
    /// line read from then until the next question is asked was typed
    /// for the withdrawn one, and is not taken as an answer.
    withdrawn_at: Option<Instant>,
    /// The prompt line's read of a question the agent withdrew: awaited
    /// (its line dropped) once the agent has its answer, before anything
    /// more is printed.
    stale_read: Option<Pin<Box<dyn Future<Output = Input> + Send>>>,
    in_turn: bool,
    cancel_sent: bool,
    /// What this agent needs answered differently (from its `agentInfo`).
    quirks: Quirks,
    /// Commands run for the agent (`terminal/*`).
    terminals: Terminals,
    /// Answers to `terminal/wait_for_exit`, sent when the command exits.
    exits: mpsc::Receiver<(RequestId<'static>, TerminalExitStatus<'static>)>,
    exits_tx: mpsc::Sender<(RequestId<'static>, TerminalExitStatus<'static>)>,
    /// The relay of the user's MCP servers over ACP (a remote agent).
    mcp: Option<crate::mcp::host::Host>,
    /// What their processes do.
    mcp_events: mpsc::Receiver<crate::mcp::host::Event>,
    /// The agent's `mcpCapabilities`: `http`, `sse`, `acp`.
    agent_mcp: (bool, bool, bool),
    /// The agent's lines read while a permission question was asked,
    /// handled next.
    backlog: VecDeque<Item>,
    /// The tool calls that offer `tool_call/cancel`.
    tools: ToolCancels,
    /// Our `tool_call/cancel` requests awaiting the agent: the tool call
    /// of each.
    cancels_sent: Vec<(RequestId<'static>, String)>,
    /// Presses of the key that cancels the latest cancellable tool call
    /// (Ctrl-\ in a conversation).
    tool_keys: Option<mpsc::Receiver<()>>,
}

/// How a permission question ended.
enum Asked<'o, 'a> {
    /// An option picked, or none (cancelled).
    Chosen(Option<&'o PermissionOption<'a>>),
    /// The agent withdrew the request (`$/cancel_request`), or is gone.
    Withdrawn,
}

/// Lines of stdin, each with when it was read, from a thread of their
/// own (so a question can stop waiting without losing what is typed; a
/// plain thread, which a read blocked on a silent stdin does not keep
/// from exiting as the runtime's blocking pool would); the end once
/// (`None`).
fn stdin_lines() -> mpsc::Receiver<(Instant, Option<String>)> {
    let (tx, rx) = mpsc::channel(16);
    let read = move || {
        let mut lines = std::io::BufRead::lines(std::io::stdin().lock());
        loop {
            let line = lines.next().and_then(Result::ok);
            let end = line.is_none();
            if tx.blocking_send((Instant::now(), line)).is_err() || end {
                break;
            }
        }
    };
    if let Err(e) = std::thread::Builder::new().name("stdin".into()).spawn(read) {
        eprintln!("acp-client: cannot read stdin: {e}");
    }
    rx
}

/// Whether a line read `at` was typed for a question the agent withdrew
/// (at `withdrawn`) before the question now asked (at `asked`).
fn is_late(withdrawn: Option<Instant>, at: Instant, asked: Instant) -> bool {
    withdrawn.is_some_and(|w| at >= w && at < asked)
}

/// The next press of `keys`; never without them.
async fn next_key(keys: &mut Option<mpsc::Receiver<()>>) -> Option<()> {
    match keys {
        Some(keys) => keys.recv().await,
        None => std::future::pending().await,
    }
}

/// The request `$/cancel_request` names, when `line` is one.
fn cancel_target(line: &str) -> Option<RequestId<'static>> {
    let Message::Notification(n) = Message::decode(line).ok()? else {
        return None;
    };
    match n.typed(Mode::Lenient).ok()?.value {
        NotificationParams::CancelRequest(c) => Some(c.request_id.into_owned()),
        _ => None,
    }
}

/// A turn lasts at most this long by the tracker's clock; the idle timeout
/// is what bounds a silent agent.
const TURN_LIMIT: Duration = Duration::from_secs(7 * 24 * 3600);

impl<S: LineSource> Client<S> {
    /// A client over `source`/`out`; `closed` resolves when the agent is
    /// gone; `interrupts` yields one item per Ctrl-C.
    ///
    /// # Errors
    ///
    /// When the session directory cannot be resolved.
    pub fn new(
        source: S,
        out: LineSender,
        cfg: Config,
        closed: Pin<Box<dyn Future<Output = String> + Send>>,
        interrupts: mpsc::Receiver<()>,
    ) -> std::io::Result<Self> {
        let fs = Confined::new(&cfg.cwd)?;
        let (exits_tx, exits) = mpsc::channel(16);
        let (mcp_tx, mcp_events) = mpsc::channel(64);
        let mcp = (cfg.mcp_over_acp && !cfg.mcp_servers.is_empty()).then(|| {
            let prefix = format!("acp-client-{}-", std::process::id());
            crate::mcp::host::Host::new(
                &cfg.mcp_servers,
                &prefix,
                fs.root().to_path_buf(),
                cfg.timeout,
                mcp_tx,
            )
        });
        Ok(Self {
            source,
            out,
            fs,
            tracker: Tracker::new().with_default_timeout(cfg.timeout),
            cfg,
            epoch: Instant::now(),
            render: Render::new(),
            stats: Stats::default(),
            session: SessionState::default(),
            editor: None,
            interrupts,
            closed,
            closed_detail: None,
            answers: None,
            withdrawn_at: None,
            stale_read: None,
            in_turn: false,
            cancel_sent: false,
            quirks: Quirks::default(),
            terminals: Terminals::default(),
            exits,
            exits_tx,
            mcp,
            mcp_events,
            agent_mcp: (false, false, false),
            backlog: VecDeque::new(),
            tools: ToolCancels::default(),
            cancels_sent: Vec::new(),
            tool_keys: None,
        })
    }

    /// Cancels the latest cancellable tool call on each item of `keys`
    /// during a turn ([`Client::cancel_tool`]).
    #[must_use]
    pub fn with_tool_cancel_keys(mut self, keys: mpsc::Receiver<()>) -> Self {
        self.tool_keys = Some(keys);
        self
    }

    /// Asks permission questions on `editor`'s prompt line instead of
    /// reading stdin.
    #[must_use]
    pub fn with_editor(mut self, editor: LineEditor) -> Self {
        self.editor = Some(editor);
        self
    }

    /// Replaces the printer (an interactive terminal updates tool calls in
    /// place).
    #[must_use]
    pub fn with_render(mut self, render: Render) -> Self {
        self.render = render;
        self
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// initialize, session/new, session/prompt; returns the stop reason.
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs, dies, hangs, or we are interrupted.
    pub async fn run(&mut self) -> Result<String, Failure> {
        self.start().await?;
        let prompt = self.cfg.prompt.clone();
        self.turn(&prompt).await
    }

    /// `initialize`, then `session/new` (or the session of
    /// [`Config::session`] continued).
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs, dies, hangs, or we are interrupted.
    pub async fn start(&mut self) -> Result<(), Failure> {
        self.initialize().await?;
        match self.cfg.session.clone() {
            Some(id) => self.continue_session(&id).await?,
            None => self.new_session().await?,
        };
        Ok(())
    }

    /// One prompt turn in the current session; its stop reason. In a
    /// conversation, a Ctrl-C pressed before it started does not count.
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs, dies, hangs, or we are
    /// interrupted twice.
    pub async fn turn(&mut self, text: &str) -> Result<String, Failure> {
        let session_id = self.current_session()?;
        if self.editor.is_some() {
            while self.interrupts.try_recv().is_ok() {}
        }
        self.cancel_sent = false;
        self.stats.stop_reason = None;
        let result = self.prompt(&session_id, text).await;
        self.in_turn = false;
        result
    }

    /// The current session's id.
    fn current_session(&self) -> Result<String, Failure> {
        self.stats
            .session_id
            .clone()
            .ok_or_else(|| Failure::Local("no session".to_owned()))
    }

    /// `session/list`: the agent's sessions.
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs (`-32601`: it keeps no list), dies
    /// or hangs.
    pub async fn list_sessions(
        &mut self,
    ) -> Result<Vec<acp_codec::acp::SessionInfo<'static>>, Failure> {
        let list = RequestParams::ListSessions(acp_codec::acp::ListSessionsRequest::new());
        match self
            .call(&list, self.cfg.timeout)
            .await?
            .map(|t| checked("session/list result", t))
        {
            Ok(ResponseResult::ListSessions(r)) => Ok(r.sessions),
            other => Err(Failure::Local(format!(
                "bad session/list result: {other:?}"
            ))),
        }
    }

    /// `session/set_mode` in the current session; remembered as current
    /// once the agent agrees.
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs, dies or hangs.
    pub async fn set_mode(&mut self, mode: &str) -> Result<(), Failure> {
        let sid = self.current_session()?;
        let set =
            RequestParams::SetSessionMode(acp_codec::acp::SetSessionModeRequest::new(sid, mode));
        let _answer = self.call(&set, self.cfg.timeout).await?;
        if let Some(modes) = &mut self.session.modes {
            modes.current_mode_id = mode.to_owned().into();
        }
        Ok(())
    }

    /// `session/set_config_option` in the current session: `value` is
    /// `true`/`false` for a boolean option, else a select option's value;
    /// the options become what the agent answers.
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs, dies or hangs.
    pub async fn set_config(&mut self, id: &str, value: &str) -> Result<(), Failure> {
        use acp_codec::acp::{ConfigValue, SessionConfigOption};
        let boolean = self
            .session
            .config
            .iter()
            .any(|o| matches!(o, SessionConfigOption::Boolean(b) if b.id == id));
        let value = match (boolean, value) {
            (true, "true" | "on") => ConfigValue::Bool(true),
            (true, "false" | "off") => ConfigValue::Bool(false),
            _ => ConfigValue::Id(value.to_owned().into()),
        };
        let sid = self.current_session()?;
        let set = RequestParams::SetSessionConfigOption(
            acp_codec::acp::SetSessionConfigOptionRequest::new(sid, id, value),
        );
        let answer = self
            .call(&set, self.cfg.timeout)
            .await?
            .map(|t| checked("session/set_config_option result", t));
        if let Ok(ResponseResult::SetSessionConfigOption(r)) = answer {
            self.session.config = r.config_options;
        }
        Ok(())
    }

    /// `initialize`: our capabilities (fs, terminals); the agent's name,
    /// and its quirks.
    async fn initialize(&mut self) -> Result<(), Failure> {
        let init = RequestParams::Initialize(
            InitializeRequest::new(1)
                .with_client_capabilities(
                    ClientCapabilities::new()
                        .with_fs(
                            FileSystemCapabilities::new()
                                .with_read_text_file(true)
                                .with_write_text_file(true),
                        )
                        .with_terminal(true),
                )
                .with_client_info(
                    Implementation::new("acp-codec-acp-client", env!("CARGO_PKG_VERSION"))
                        .with_title("acp-codec example client"),
                ),
        );
        let result = self
            .call(&init, self.cfg.timeout)
            .await?
            .map(|t| checked("initialize result", t));
        if let Ok(ResponseResult::Initialize(r)) = result {
            let name = r
                .agent_info
                .as_ref()
                .map_or("unnamed agent".to_owned(), |i| {
                    format!("{} {}", i.name, i.version)
                });
            let protocol = match self.source.translated_version() {
                Some(v) => format!("v{v}, translated"),
                None => format!("v{}", r.protocol_version),
            };
            self.render
                .note(&format!("agent: {name}, protocol {protocol}"));
            self.stats.agent = Some(name);
            self.quirks = Quirks::of(r.agent_info.as_ref());
            if let Some(m) = r
                .agent_capabilities
                .as_ref()
                .and_then(|c| c.mcp_capabilities.as_ref())
            {
                let yes = |b: Option<bool>| b.unwrap_or(false);
                self.agent_mcp = (yes(m.http), yes(m.sse), yes(m.acp));
            }
        }
        Ok(())
    }

    /// `session/new` in the session directory; its id. It becomes the
    /// current session.
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs, dies or hangs.
    pub async fn new_session(&mut self) -> Result<String, Failure> {
        let cwd = self.fs.root().display().to_string();
        let servers = self.mcp_offer();
        let new = RequestParams::NewSession(NewSessionRequest::new(cwd.as_str(), servers));
        let result = self
            .call(&new, self.cfg.timeout)
            .await?
            .map(|t| checked("session/new result", t));
        let session_id = match result {
            Ok(ResponseResult::NewSession(r)) => {
                self.session = SessionState {
                    modes: r.modes,
                    config: r.config_options.unwrap_or_default(),
                };
                r.session_id.into_owned()
            }
            other => return Err(Failure::Local(format!("bad session/new result: {other:?}"))),
        };
        self.render.note(&format!("session {session_id} in {cwd}"));
        self.stats.session_id = Some(session_id.clone());
        if let Some(host) = &mut self.mcp {
            host.relay.set_session(&session_id);
        }
        Ok(session_id)
    }

    /// `session/resume` of `session_id` in the session directory (nothing
    /// replayed), or `session/load` (its history shown as the agent
    /// replays it) when the agent does not know `session/resume`. It
    /// becomes the current session.
    ///
    /// # Errors
    ///
    /// A [`Failure`] when the agent errs (no such session), dies or hangs.
    pub async fn continue_session(&mut self, session_id: &str) -> Result<String, Failure> {
        let cwd = self.fs.root().display().to_string();
        let servers = self.mcp_offer();
        let resume = RequestParams::ResumeSession(
            acp_codec::acp::ResumeSessionRequest::new(session_id, cwd.as_str())
                .with_mcp_servers(servers.clone()),
        );
        let answer = match self.call(&resume, self.cfg.timeout).await {
            Ok(answer) => answer,
            Err(Failure::Agent { error, .. }) if error.code == ErrorCode::METHOD_NOT_FOUND => {
                let load = RequestParams::LoadSession(acp_codec::acp::LoadSessionRequest::new(
                    servers,
                    cwd.as_str(),
                    session_id,
                ));
                self.call(&load, self.cfg.timeout).await?
            }
            Err(e) => return Err(e),
        };
        let (modes, config) = match answer.map(|t| checked("session result", t)) {
            Ok(ResponseResult::ResumeSession(r)) => (r.modes, r.config_options),
            Ok(ResponseResult::LoadSession(r)) => (r.modes, r.config_options),
            _ => (None, None),
        };
        self.session = SessionState {
            modes,
            config: config.unwrap_or_default(),
        };
        self.render.note(&format!("session {session_id} in {cwd}"));
        self.stats.session_id = Some(session_id.to_owned());
        if let Some(host) = &mut self.mcp {
            host.relay.set_session(session_id);
        }
        Ok(session_id.to_owned())
    }

    /// One `session/prompt`; its stop reason.
    async fn prompt(&mut self, session_id: &str, text: &str) -> Result<String, Failure> {
        let prompt = RequestParams::Prompt(PromptRequest::new(
            session_id,
            vec![ContentBlock::Text(TextContent::new(text.to_owned()))],
        ));
        if self.editor.is_none() {
            self.render.note(&format!("> {text}"));
        }
        self.render.begin_turn();
        self.in_turn = true;
        let typed = self.call(&prompt, TURN_LIMIT).await?;
        self.in_turn = false;
        let result = typed.map(|t| checked("session/prompt result", t));
        let reason = match result {
            Ok(ResponseResult::Prompt(r)) => {
                self.render.prompt_response(&r);
                r.stop_reason.as_str().to_owned()
            }
            other => {
                return Err(Failure::Local(format!(
                    "bad session/prompt result: {other:?}"
                )))
            }
        };
        self.stats.stop_reason = Some(reason.clone());
        Ok(reason)
    }

    async fn send(&self, line: Vec<u8>) -> Result<(), Failure> {
        self.out.send(line).await.map_err(|e| Failure::Closed {
            method: "writing".to_owned(),
            detail: e.to_string(),
        })
    }

    /// Sends a request and serves the agent until its answer arrives: its
    /// result typed by the request's method, or why it does not fit.
    async fn call(
        &mut self,
        params: &RequestParams<'_>,
        timeout: Duration,
    ) -> Result<TypedResult, Failure> {
        let method = params.method().to_owned();
        let mut line = Vec::new();
        let id = self
            .tracker
            .encode_request_with_timeout(params, self.now(), timeout, &mut line)
            .map_err(|e| Failure::Local(e.to_string()))?;
        self.send(line).await?;
        let mut last_heard = Instant::now();
        loop {
            // What was read while a question was asked comes first.
            if let Some(item) = self.backlog.pop_front() {
                if let Some(answer) = self.on_item(item, &id, &method).await? {
                    return Ok(answer);
                }
                last_heard = Instant::now();
                continue;
            }
            // The earliest of: the tracker's deadline, the idle limit
            // during a turn, a short grace after the agent exited.
            let mut wake = self
                .tracker
                .next_deadline()
                .map(|d| self.epoch + d)
                .unwrap_or_else(|| Instant::now() + TURN_LIMIT);
            // While the agent waits for one of the user's MCP servers, its
            // silence is ours: the relay bounds that wait.
            let mcp_busy = self.mcp.as_ref().is_some_and(|h| h.relay.busy());
            if self.in_turn && !mcp_busy {
                wake = wake.min(last_heard + self.cfg.timeout);
            }
            if let Some(d) = self.mcp.as_ref().and_then(|h| h.relay.next_deadline()) {
                wake = wake.min(self.epoch + d);
            }
            if let Some(d) = self.cfg.tool_timeout.and_then(|t| self.tools.next_due(t)) {
                wake = wake.min(self.epoch + d);
            }
            tokio::select! {
                item = self.source.next_line() => {
                    if let Some(answer) = self.on_item(item, &id, &method).await? {
                        return Ok(answer);
                    }
                    // Heard from the agent (time spent asking the user
                    // does not count as its silence).
                    last_heard = Instant::now();
                }
                detail = &mut self.closed, if self.closed_detail.is_none() => {
                    // Drain what the agent wrote before exiting, briefly.
                    self.closed_detail = Some(detail);
                }
                () = tokio::time::sleep_until(wake.into()) => {
                    let now = self.now();
                    if let Some(host) = &mut self.mcp {
                        if host.relay.busy() {
                            // The agent gets its answer (an error) now:
                            // its silence counts from here.
                            last_heard = Instant::now();
                        }
                        host.relay.handle_timeout(now);
                    }
                    self.mcp_flush().await?;
                    self.tool_timeouts().await?;
                    let idle = self.in_turn
                        && !self.mcp.as_ref().is_some_and(|h| h.relay.busy())
                        && Instant::now() >= last_heard + self.cfg.timeout;
                    if self.tracker.poll_expired(self.now()).is_some() || idle {
                        return Err(Failure::Timeout { method, secs: self.cfg.timeout.as_secs_f64() });
                    }
                }
                Some(event) = self.mcp_events.recv() => {
                    if let Some(host) = &mut self.mcp {
                        host.handle_event(event);
                    }
                    self.mcp_flush().await?;
                    last_heard = Instant::now();
                }
                Some(()) = self.interrupts.recv() => {
                    self.interrupt().await?;
                    last_heard = Instant::now();
                }
                Some(()) = next_key(&mut self.tool_keys) => {
                    if self.in_turn {
                        self.cancel_tool(None).await?;
                    }
                }
                Some((id, status)) = self.exits.recv() => {
                    let mut out = Vec::new();
                    // Not pending: the agent withdrew the wait, answered
                    // -32800 then.
                    if self.tracker.encode_response(&id, &status, &mut out).is_ok() {
                        self.send(out).await?;
                    }
                }
            }
            if self.closed_detail.is_some() {
                if let Some(answer) = self.last_words(&id, &method).await? {
                    return Ok(answer);
                }
            }
        }
    }

    /// One item of the agent's lines while we wait for `waiting`: `Some`
    /// when it answers it.
    async fn on_item(
        &mut self,
        item: Item,
        waiting: &RequestId<'static>,
        method: &str,
    ) -> Result<Option<TypedResult>, Failure> {
        match item {
            Ok(Some(Ok(line))) => match self.handle_line(&line, waiting).await? {
                Some(answer) => answer.map(Some).map_err(|error| Failure::Agent {
                    method: method.to_owned(),
                    error,
                }),
                None => Ok(None),
            },
            Ok(Some(Err(e))) => self.bad_line(e).await.map(|()| None),
            Ok(None) => Err(self.gone(method).await),
            Err(e) => Err(Failure::Closed {
                method: method.to_owned(),
                detail: e.to_string(),
            }),
        }
    }

    /// `tool_call/cancel` for the tool call of id `id` in the current
    /// session, else for its latest one that offers it and was not asked
    /// yet. Sends nothing, and says why, when there is none: a tool call
    /// is cancelled only while it advertises `capabilities.cancel`. The
    /// agent's answer is shown when it comes (the tool call's own update
    /// says when it stopped).
    ///
    /// # Errors
    ///
    /// When the request cannot be encoded or sent.
    pub async fn cancel_tool(&mut self, id: Option<&str>) -> Result<(), Failure> {
        let Some(session) = self.stats.session_id.clone() else {
            return Ok(());
        };
        match self.tools.pick(&session, id) {
            Ok(call) => {
                self.render.note(&format!(
                    "cancelling tool call {} ({})",
                    call.title, call.id
                ));
                self.send_tool_cancel(&call).await
            }
            Err(why) => {
                self.render.note(&format!("not cancelled: {why}"));
                Ok(())
            }
        }
    }

    /// `--tool-timeout`: cancels the tool calls that ran out of it.
    async fn tool_timeouts(&mut self) -> Result<(), Failure> {
        let Some(limit) = self.cfg.tool_timeout else {
            return Ok(());
        };
        for call in self.tools.due(limit, self.now()) {
            self.render.note(&format!(
                "tool call {} ({}) still running after {:.1} s: cancelling it",
                call.title,
                call.id,
                limit.as_secs_f64()
            ));
            self.send_tool_cancel(&call).await?;
        }
        Ok(())
    }

    /// Sends `tool_call/cancel` for `call` (a v2 method: sent as v1 sends
    /// any method it does not type).
    async fn send_tool_cancel(&mut self, call: &Cancellable) -> Result<(), Failure> {
        let local = |e: &dyn std::fmt::Display| Failure::Local(e.to_string());
        let params = serde_json::json!({"sessionId": call.session, "toolCallId": call.id});
        let params = RawJson::from_string(params.to_string()).map_err(|e| local(&e))?;
        let request = RequestParams::Unknown {
            method: "tool_call/cancel".into(),
            params: Some(params),
        };
        let mut line = Vec::new();
        // The turn's own limit: an agent that never answers it is no
        // reason to give the turn up.
        let id = self
            .tracker
            .encode_request_with_timeout(&request, self.now(), TURN_LIMIT, &mut line)
            .map_err(|e| local(&e))?;
        self.cancels_sent.push((id, call.id.clone()));
        self.send(line).await
    }

    /// The agent's `$/cancel_request` for its request `id`: answered
    /// `-32800` when its answer is still to come (deferred: a terminal
    /// wait, the MCP relay's); nothing when it was answered already.
    async fn withdrawn(&mut self, id: &RequestId<'_>) -> Result<(), Failure> {
        let cancelled = RpcError::new(ErrorCode::REQUEST_CANCELLED, "Cancelled");
        let mut out = Vec::new();
        if self.tracker.encode_error(id, &cancelled, &mut out).is_ok() {
            self.render.note(&format!(
                "the agent withdrew its request {id}: answered -32800"
            ));
            self.send(out).await?;
        }
        Ok(())
    }

    /// The agent exited: give its last lines 500 ms to arrive. `Some` when
    /// one answers `waiting`; the failure once they stop.
    async fn last_words(
        &mut self,
        waiting: &RequestId<'static>,
        method: &str,
    ) -> Result<Option<TypedResult>, Failure> {
        let next = tokio::time::timeout(Duration::from_millis(500), self.source.next_line());
        match next.await {
            Ok(Ok(Some(Ok(line)))) => match self.handle_line(&line, waiting).await? {
                Some(answer) => answer.map(Some).map_err(|error| Failure::Agent {
                    method: method.to_owned(),
                    error,
                }),
                None => Ok(None),
            },
            Ok(Ok(Some(Err(e)))) => self.bad_line(e).await.map(|()| None),
            _ => Err(self.gone(method).await),
        }
    }

    /// The failure for an agent whose output ended.
    async fn gone(&mut self, method: &str) -> Failure {
        let detail = match self.closed_detail.take() {
            Some(d) => d,
            None => tokio::time::timeout(Duration::from_secs(2), &mut self.closed)
                .await
                .unwrap_or_else(|_| "its output ended, process still running".to_owned()),
        };
        Failure::Closed {
            method: method.to_owned(),
            detail,
        }
    }

    /// Ctrl-C: the first during a turn sends `session/cancel`; otherwise
    /// we stop.
    async fn interrupt(&mut self) -> Result<(), Failure> {
        let Some(session_id) = self.stats.session_id.clone().filter(|_| self.in_turn) else {
            return Err(Failure::Interrupted);
        };
        if self.cancel_sent {
            return Err(Failure::Interrupted);
        }
        self.cancel_sent = true;
        self.stats.cancelled_by_user = true;
        self.terminals.kill_all();
        self.render.note("^C: cancelling the turn (again to quit)");
        let mut line = Vec::new();
        let cancel = NotificationParams::Cancel(SessionIdRequest::new(session_id.as_str()));
        encode_notification(&cancel, &mut line).map_err(|e| Failure::Local(e.to_string()))?;
        self.send(line).await
    }

    async fn bad_line(&mut self, e: FrameError) -> Result<(), Failure> {
        self.stats.bad_lines += 1;
        match &e {
            // A message dropped for its size is a problem of the turn:
            // what it carried (a tool's output, a file) is missing.
            FrameError::LineTooLong(_) => self
                .render
                .problem(&format!("skipped a message from the agent: {e}")),
            _ => eprintln!("acp-client: skipped a bad line from the agent: {e}"),
        }
        // A request we could not read still gets an answer.
        if let Some(id) = match &e {
            FrameError::LineTooLong(long) => long.request_id(),
            _ => None,
        } {
            let id = match id {
                acp_codec::PeekedId::Number(n) => RequestId::Number(n),
                other => other
                    .as_str()
                    .map_or(RequestId::Null, |s| RequestId::Str(s.to_owned().into())),
            };
            let mut line = Vec::new();
            acp_codec::acp::encode_error(&id, &RpcError::new(e.code(), e.to_string()), &mut line)
                .map_err(|e| Failure::Local(e.to_string()))?;
            self.send(line).await?;
        }
        Ok(())
    }

    /// The bridge dropped a message for this client (an agent's line over
    /// the bridge's limit, or a message over the client's own): a problem
    /// of the turn, with what the bridge said of it.
    fn line_dropped(&mut self, params: Option<&RawJson<'_>>) {
        let p: serde_json::Value = params.and_then(|p| p.parse().ok()).unwrap_or_default();
        let mut what = format!(
            "the bridge dropped a message from the agent of {} bytes (over the {}-byte limit)",
            p["size"], p["limit"]
        );
        if let Some(session) = p["sessionId"].as_str() {
            what.push_str(&format!(" in session {session}"));
        }
        if !p["id"].is_null() {
            what.push_str(&format!(
                ", a request (id {}) answered with an error",
                p["id"]
            ));
        }
        self.stats.bad_lines += 1;
        self.render.problem(&what);
    }

    /// Handles one line; `Some` when it answers `waiting`.
    async fn handle_line(
        &mut self,
        line: &str,
        waiting: &RequestId<'static>,
    ) -> Result<Option<Result<TypedResult, RpcError<'static>>>, Failure> {
        self.stats.lines += 1;
        self.stats.largest_line_bytes = self.stats.largest_line_bytes.max(line.len());
        // One call per line: notifications (nearly everything an agent
        // sends during a turn), the agent's requests and the responses to
        // ours come back typed, decoded in one pass.
        let mut typed_result = None;
        let how = Decoding::new(Mode::Lenient).with_tracker(&self.tracker);
        let msg = match decode_line(line, how) {
            Ok(Incoming::Response { response, result }) => {
                typed_result = Some(result.into_owned());
                Message::Response(response)
            }
            Ok(Incoming::Request { request, params }) => {
                let typed = Ok(checked(format_args!("{} request", request.method), *params));
                self.peer_request(&request, typed).await?;
                return Ok(None);
            }
            // A request whose params do not fit: answered -32602.
            Ok(Incoming::Message(Message::Request(r))) => {
                self.peer_request(&r, r.typed(Mode::Lenient).map(Typed::into_value))
                    .await?;
                return Ok(None);
            }
            Ok(Incoming::Message(Message::Notification(n))) => {
                if let Err(e) = n.typed(Mode::Lenient) {
                    eprintln!("acp-client: bad notification: {e}");
                }
                return Ok(None);
            }
            Ok(Incoming::Message(m)) => m,
            Ok(Incoming::Notification(typed)) => {
                let method = typed.value.method();
                warn_salvaged(format_args!("{method} notification"), &typed.salvaged);
                match &typed.value {
                    NotificationParams::SessionUpdate(u) => {
                        self.track(&u.session_id, &u.update);
                        self.render.update(u);
                    }
                    NotificationParams::CancelRequest(c) => {
                        self.withdrawn(&c.request_id).await?;
                    }
                    NotificationParams::Ext { method, params } if method == LINE_DROPPED => {
                        self.line_dropped(params.as_ref());
                    }
                    NotificationParams::McpMessage(m) => {
                        if let Some(host) = &mut self.mcp {
                            host.relay.handle_notification(
                                m.connection_id.as_deref(),
                                &m.server_id,
                                &m.method,
                                m.params.as_ref().map(RawJson::get),
                            );
                        }
                        self.mcp_flush().await?;
                    }
                    _ => {}
                }
                return Ok(None);
            }
            Ok(_) => return Ok(None),
            Err(e) => {
                // Stray output (a log line on stdout): report, go on.
                self.stats.bad_lines += 1;
                let shown: String = line.chars().take(120).collect();
                eprintln!("acp-client: not an ACP message ({e}): {shown}");
                return Ok(None);
            }
        };
        match self.tracker.handle(&msg, self.now()) {
            Ok(Some(done)) if &done.id == waiting => Ok(Some(match (msg, typed_result) {
                (Message::Response(_), Some(typed)) => Ok(Ok(typed)),
                // A result that does not fit its method (or of a method
                // not typed): why, from its text.
                (Message::Response(r), None) => {
                    Ok(r.typed(&done.method, Mode::Lenient).map(Typed::into_owned))
                }
                (Message::Error(e), _) => Err(e.error.into_owned()),
                _ => return Ok(None),
            })),
            Ok(Some(done)) if self.mcp.as_ref().is_some_and(|h| h.relay.asked(&done.id)) => {
                if let Some(host) = &mut self.mcp {
                    match &msg {
                        Message::Response(r) => {
                            host.relay.handle_agent_answer(&done.id, Ok(r.result.get()));
                        }
                        Message::Error(e) => {
                            host.relay.handle_agent_answer(&done.id, Err(&e.error))
                        }
                        _ => {}
                    }
                }
                self.mcp_flush().await?;
                Ok(None)
            }
            Ok(Some(done)) if done.method == "tool_call/cancel" => {
                let at = self.cancels_sent.iter().position(|(i, _)| *i == done.id);
                let tool = at.map(|at| self.cancels_sent.swap_remove(at).1);
                let tool = tool.unwrap_or_default();
                let said = match &msg {
                    Message::Error(e) => format!(
                        "tool call {tool}: the agent did not cancel it: {} ({})",
                        e.error.message, e.error.code.0
                    ),
                    _ => format!("tool call {tool}: the agent accepted to cancel it"),
                };
                self.render.note(&said);
                Ok(None)
            }
            Ok(Some(done)) => {
                eprintln!(
                    "acp-client: late answer to {} (id {})",
                    done.method, done.id
                );
                Ok(None)
            }
            Ok(None) => Ok(None),
            Err(e) => {
                eprintln!("acp-client: {e}");
                Ok(None)
            }
        }
    }

    /// Keeps the session's mode and options current, and which tool calls
    /// may be cancelled.
    fn track(&mut self, session: &str, update: &acp_codec::acp::SessionUpdate<'_>) {
        use acp_codec::acp::SessionUpdate;
        let now = self.now();
        match update {
            SessionUpdate::ToolCall(t) => self.tools.observe(
                Seen {
                    session,
                    id: &t.tool_call_id,
                    title: Some(&t.title),
                    status: t.status.as_ref().map(|s| s.as_str()),
                    capabilities: t.extra.get("capabilities").map(RawJson::get),
                    creates: true,
                },
                now,
            ),
            SessionUpdate::ToolCallUpdate(t) => self.tools.observe(
                Seen {
                    session,
                    id: &t.tool_call_id,
                    title: t.title.as_deref(),
                    status: t.status.as_ref().map(|s| s.as_str()),
                    capabilities: t.extra.get("capabilities").map(RawJson::get),
                    creates: false,
                },
                now,
            ),
            SessionUpdate::CurrentModeUpdate(m) => {
                if let Some(modes) = &mut self.session.modes {
                    modes.current_mode_id = m.current_mode_id.to_string().into();
                }
            }
            SessionUpdate::ConfigOptionUpdate(c) => {
                self.session.config = c
                    .config_options
                    .clone()
                    .into_iter()
                    .map(|o| o.into_owned())
                    .collect();
            }
            _ => {}
        }
    }

    /// Records an agent request with the tracker and answers it: an
    /// `-32600` error when the tracker refuses it (an id already pending,
    /// too many pending), else what serving its params gives.
    async fn peer_request(
        &mut self,
        r: &Request<'_>,
        typed: Result<RequestParams<'_>, acp_codec::MessageError>,
    ) -> Result<(), Failure> {
        if let Err(e) = self.tracker.handle_peer_request(&r.id, &r.method) {
            eprintln!("acp-client: {e}");
            let mut out = Vec::new();
            let err = RpcError::new(ErrorCode::INVALID_REQUEST, e.to_string());
            acp_codec::acp::encode_error(&r.id, &err, &mut out)
                .map_err(|e| Failure::Local(e.to_string()))?;
            return self.send(out).await;
        }
        let answer = self.serve(&r.id, typed).await;
        let mut out = Vec::new();
        let encoded = match answer {
            Ok(Answer::Permission(p)) => self.tracker.encode_response(&r.id, &p, &mut out),
            Ok(Answer::Read(p)) => self.tracker.encode_response(&r.id, &p, &mut out),
            Ok(Answer::Terminal(p)) => self.tracker.encode_response(&r.id, &p, &mut out),
            Ok(Answer::Output(p)) => self.tracker.encode_response(&r.id, &p, &mut out),
            Ok(Answer::Later) => return Ok(()),
            Ok(Answer::Empty) => self
                .tracker
                .encode_response(&r.id, &MetaOnly::new(), &mut out),
            Err(e) => self.tracker.encode_error(&r.id, &e, &mut out),
        };
        encoded.map_err(|e| Failure::Local(e.to_string()))?;
        self.send(out).await?;
        if let Some(stale) = self.stale_read.take() {
            let _ = stale.await;
        }
        Ok(())
    }

    /// Answers one agent request.
    async fn serve(
        &mut self,
        id: &RequestId<'_>,
        typed: Result<RequestParams<'_>, acp_codec::MessageError>,
    ) -> Result<Answer, RpcError<'static>> {
        let params = typed.map_err(|e| RpcError::new(e.code(), e.to_string()))?;
        match params {
            RequestParams::RequestPermission(p) => {
                self.stats.permission_requests += 1;
                let what = self.render.permission_request(id, &p);
                let (outcome, allowed) = self.decide(id, &what, &p.options).await;
                self.stats.permissions_allowed += u64::from(allowed);
                let response = RequestPermissionResponse::new(outcome);
                self.render.permission_outcome(id, &response);
                Ok(Answer::Permission(response))
            }
            RequestParams::ReadTextFile(p) => self.read_text_file(&p).await.map(Answer::Read),
            RequestParams::WriteTextFile(p) => {
                self.write_text_file(&p.path, &p.content).await?;
                Ok(Answer::Empty)
            }
            RequestParams::CreateTerminal(p) => self.create_terminal(&p).map(Answer::Terminal),
            RequestParams::TerminalOutput(p) => {
                Ok(Answer::Output(self.terminals.output(&p.terminal_id)?))
            }
            RequestParams::WaitForTerminalExit(p) => {
                // Answered when the command exits; the client goes on
                // serving the agent meanwhile.
                let exit = self.terminals.wait(&p.terminal_id)?;
                let tx = self.exits_tx.clone();
                let id = id.clone().into_owned();
                tokio::spawn(async move {
                    let _ = tx.send((id, exit.await)).await;
                });
                Ok(Answer::Later)
            }
            RequestParams::KillTerminal(p) => {
                self.terminals.kill(&p.terminal_id)?;
                Ok(Answer::Empty)
            }
            RequestParams::ReleaseTerminal(p) => {
                self.terminals.release(&p.terminal_id)?;
                Ok(Answer::Empty)
            }
            RequestParams::McpConnect(_)
            | RequestParams::McpMessage(_)
            | RequestParams::McpDisconnect(_)
                if self.mcp.is_some() =>
            {
                self.mcp_request(id, params).await?;
                Ok(Answer::Later)
            }
            other => Err(RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", other.method()),
            )),
        }
    }

    /// The `mcpServers` of a new (or continued) session, each shown on
    /// one line: none unless the user configured some; to a local agent
    /// its stdio servers (and HTTP ones when it takes them), to a remote
    /// one the command servers over ACP when it speaks MCP over ACP.
    fn mcp_offer(&mut self) -> Vec<acp_codec::acp::McpServer<'static>> {
        use crate::mcp::Server;
        use acp_codec::acp::{
            EnvVariable, HttpHeader, McpServer, McpServerAcp, McpServerHttp, McpServerSse,
            McpServerStdio,
        };
        let mut offered = Vec::new();
        let (http, sse, acp) = self.agent_mcp;
        let mut notes = Vec::new();
        if let Some(host) = &self.mcp {
            for (id, name) in host.offered() {
                if acp {
                    let what = self
                        .cfg
                        .mcp_servers
                        .get(name)
                        .map(Server::describe)
                        .unwrap_or_default();
                    notes.push(format!("mcp: offering {name} over ACP, started here when the agent connects ({what})"));
                    offered.push(McpServer::Acp(McpServerAcp::new(
                        name.to_owned(),
                        id.to_owned(),
                    )));
                } else {
                    notes.push(format!("mcp: not offering {name}: the agent does not take MCP servers over ACP (mcpCapabilities.acp)"));
                }
            }
        }
        for (name, server) in &self.cfg.mcp_servers {
            let what = server.describe();
            match server {
                Server::Command { command, args, env } if !self.cfg.mcp_over_acp => {
                    let env = env
                        .iter()
                        .map(|(k, v)| EnvVariable::new(k.clone(), v.clone()))
                        .collect();
                    offered.push(McpServer::Stdio(McpServerStdio::new(
                        name.clone(),
                        command.clone(),
                        args.iter().map(|a| a.clone().into()).collect(),
                        env,
                    )));
                    notes.push(format!("mcp: offering {name} ({what})"));
                }
                Server::Http { url, headers, sse: is_sse } if !self.cfg.mcp_over_acp => {
                    let headers: Vec<_> = headers
                        .iter()
                        .map(|(k, v)| HttpHeader::new(k.clone(), v.clone()))
                        .collect();
                    if *is_sse && sse {
                        offered.push(McpServer::Sse(McpServerSse::new(name.clone(), url.clone(), headers)));
                        notes.push(format!("mcp: offering {name} ({what})"));
                    } else if !*is_sse && http {
                        offered.push(McpServer::Http(McpServerHttp::new(name.clone(), url.clone(), headers)));
                        notes.push(format!("mcp: offering {name} ({what})"));
                    } else {
                        notes.push(format!("mcp: not offering {name}: the agent does not take {} servers (mcpCapabilities)", if *is_sse { "sse" } else { "http" }));
                    }
                }
                Server::Http { .. } => notes.push(format!(
                    "mcp: not offering {name} ({what}) to a remote agent: only command servers are relayed"
                )),
                Server::Command { .. } => {}
            }
        }
        for n in notes {
            self.render.note(&n);
        }
        offered
    }

    /// The agent's `mcp/*` request `id`, to the relay.
    async fn mcp_request(
        &mut self,
        id: &RequestId<'_>,
        params: RequestParams<'_>,
    ) -> Result<(), RpcError<'static>> {
        let now = self.now();
        let id = id.clone().into_owned();
        let Some(host) = &mut self.mcp else {
            return Ok(());
        };
        match params {
            RequestParams::McpConnect(p) => host.relay.handle_connect(id, &p.acp_id),
            RequestParams::McpMessage(m) => host.relay.handle_message(
                id,
                m.connection_id.as_deref(),
                &m.server_id,
                &m.method,
                m.params.as_ref().map(RawJson::get),
                now,
            ),
            RequestParams::McpDisconnect(p) => host.relay.handle_disconnect(id, &p.connection_id),
            _ => {}
        }
        self.mcp_flush()
            .await
            .map_err(|e| RpcError::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
    }

    /// Carries out what the relay decided, and sends the agent what it
    /// is owed.
    async fn mcp_flush(&mut self) -> Result<(), Failure> {
        use crate::mcp::host::ToAgent;
        let Some(host) = &mut self.mcp else {
            return Ok(());
        };
        let owed = host.drain().await;
        for item in owed {
            let mut out = Vec::new();
            let local = |e: &dyn std::fmt::Display| Failure::Local(e.to_string());
            match item {
                ToAgent::Answer { id, outcome } => {
                    let encoded = match outcome {
                        Ok(text) => {
                            let raw = RawJson::from_string(text).map_err(|e| local(&e))?;
                            self.tracker.encode_response(&id, &raw, &mut out)
                        }
                        Err(e) => {
                            self.render.note(&format!("mcp: {}", e.message));
                            self.tracker.encode_error(&id, &e, &mut out)
                        }
                    };
                    if let Err(e) = encoded {
                        eprintln!("acp-client: mcp: {e}");
                        continue;
                    }
                }
                ToAgent::Request {
                    connection,
                    server_request,
                    params,
                } => {
                    let request = Request {
                        id: RequestId::Null,
                        method: "mcp/message".into(),
                        params: Some(RawJson::from_string(params).map_err(|e| local(&e))?),
                    };
                    let typed = request.typed(Mode::Lenient).map_err(|e| local(&e))?.value;
                    let now = self.now();
                    let id = self
                        .tracker
                        .encode_request_with_timeout(&typed, now, TURN_LIMIT, &mut out)
                        .map_err(|e| local(&e))?;
                    if let Some(host) = &mut self.mcp {
                        host.request_sent(id, &connection, &server_request, now);
                    }
                }
                ToAgent::Notify { params } => {
                    let n = acp_codec::acp::Notification {
                        method: "mcp/message".into(),
                        params: Some(RawJson::from_string(params).map_err(|e| local(&e))?),
                    };
                    let typed = n.typed(Mode::Lenient).map_err(|e| local(&e))?.value;
                    encode_notification(&typed, &mut out).map_err(|e| local(&e))?;
                }
                ToAgent::Problem(p) => {
                    self.render.problem(&p);
                    continue;
                }
            }
            self.send(out).await?;
        }
        Ok(())
    }

    /// `fs/read_text_file`, inside the session directory; a missing file
    /// is answered as this agent needs it (its quirks).
    async fn read_text_file(
        &mut self,
        p: &ReadTextFileRequest<'_>,
    ) -> Result<ReadTextFileResponse<'static>, RpcError<'static>> {
        match self.fs.read(&p.path, p.line, p.limit).await {
            Ok(content) => {
                self.stats.fs_reads += 1;
                self.render
                    .note(&format!("fs: read {} ({} bytes)", p.path, content.len()));
                Ok(ReadTextFileResponse::new(content))
            }
            Err(e) if e.code == ErrorCode::RESOURCE_NOT_FOUND => {
                let answer = self.quirks.missing_file.answer(&p.path);
                let how = if answer.is_ok() {
                    "answered empty text (this agent's quirk: its new-file writes fail on -32002)"
                } else {
                    "answered -32002"
                };
                self.render
                    .note(&format!("fs: read {}: no such file; {how}", p.path));
                answer
            }
            Err(e) => {
                self.fs_refused(&e, "read", &p.path);
                Err(fs_err(e))
            }
        }
    }

    /// `fs/write_text_file`, inside the session directory.
    async fn write_text_file(
        &mut self,
        path: &str,
        content: &str,
    ) -> Result<(), RpcError<'static>> {
        match self.fs.write(path, content).await {
            Ok(()) => {
                self.stats.fs_writes += 1;
                self.render
                    .note(&format!("fs: wrote {path} ({} bytes)", content.len()));
                Ok(())
            }
            Err(e) => {
                self.fs_refused(&e, "write", path);
                Err(fs_err(e))
            }
        }
    }

    /// `terminal/create`: the command runs in its directory (the session
    /// directory, or one inside it).
    fn create_terminal(
        &mut self,
        p: &CreateTerminalRequest<'_>,
    ) -> Result<CreateTerminalResponse<'static>, RpcError<'static>> {
        let cwd = match p.cwd.as_deref() {
            Some(dir) => self.fs.resolve(dir).map_err(fs_err)?,
            None => self.fs.root().to_path_buf(),
        };
        let id = self.terminals.create(p, cwd)?;
        self.stats.terminals += 1;
        let args = p.args.iter().flatten().map(|a| format!(" {a}"));
        self.render.note(&format!(
            "$ {}{} ({id})",
            p.command,
            args.collect::<String>()
        ));
        Ok(CreateTerminalResponse::new(id))
    }

    fn fs_refused(&mut self, e: &FsError, op: &str, path: &str) {
        if e.code == ErrorCode::INVALID_PARAMS {
            self.stats.fs_refused += 1;
            self.render
                .note(&format!("fs: refused {op} {path}: {}", e.message));
        } else {
            self.render.note(&format!("fs: {op} {path}: {}", e.message));
        }
    }

    /// Picks a permission outcome by policy (`id`: the request).
    async fn decide(
        &mut self,
        id: &RequestId<'_>,
        what: &str,
        options: &[PermissionOption<'_>],
    ) -> (RequestPermissionOutcome<'static>, bool) {
        let pick = |kinds: &[PermissionOptionKind<'_>]| {
            kinds
                .iter()
                .find_map(|k| options.iter().find(|o| &o.kind == k))
        };
        let chosen = if self.cancel_sent {
            None
        } else {
            match self.cfg.permission {
                Permission::Allow => pick(&[
                    PermissionOptionKind::AllowOnce,
                    PermissionOptionKind::AllowAlways,
                ]),
                Permission::Reject => pick(&[
                    PermissionOptionKind::RejectOnce,
                    PermissionOptionKind::RejectAlways,
                ]),
                Permission::Ask => match self.ask(id, what, options).await {
                    Asked::Chosen(chosen) => chosen,
                    Asked::Withdrawn => {
                        self.render.note(&format!(
                            "? permission: {what} → withdrawn by the agent (answered cancelled)"
                        ));
                        return (RequestPermissionOutcome::Cancelled(MetaOnly::new()), false);
                    }
                },
            }
        };
        let label = chosen.map_or("cancelled".to_owned(), |o| {
            format!("{} ({})", o.name, o.option_id)
        });
        self.render.note(&format!("? permission: {what} → {label}"));
        let allowed = chosen.is_some_and(|o| {
            matches!(
                o.kind,
                PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
            )
        });
        let outcome = match chosen {
            Some(o) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                o.option_id.to_string(),
            )),
            None => RequestPermissionOutcome::Cancelled(MetaOnly::new()),
        };
        (outcome, allowed)
    }

    /// Whether the agent withdrew its request `id` among the lines kept
    /// (the `$/cancel_request` is then taken out).
    fn withdrawn_in_backlog(&mut self, id: &RequestId<'_>) -> bool {
        let at = self.backlog.iter().position(|item| {
            matches!(item, Ok(Some(Ok(line))) if cancel_target(line).as_ref() == Some(&id.clone().into_owned()))
        });
        at.and_then(|at| self.backlog.remove(at)).is_some()
    }

    /// One item of the agent read while its request `id` is asked: kept
    /// for later, unless it withdraws the request (`true`; also when the
    /// agent is gone: no one to answer).
    fn read_while_asking(&mut self, item: Item, id: &RequestId<'_>) -> bool {
        let gone = !matches!(item, Ok(Some(_)));
        if let Ok(Some(Ok(line))) = &item {
            if cancel_target(line).as_ref() == Some(&id.clone().into_owned()) {
                return true;
            }
        }
        self.backlog.push_back(item);
        gone
    }

    /// Whether to read the agent while asking: room kept for its lines,
    /// and its end not read yet.
    fn may_read_while_asking(&self) -> bool {
        self.backlog.len() < MAX_BACKLOG && !matches!(self.backlog.back(), Some(Ok(None) | Err(_)))
    }

    /// Asks on the terminal (the agent's request `id`); a reject option
    /// when stdin is closed, none (cancelled) on Ctrl-C, withdrawn when
    /// the agent withdraws the request meanwhile.
    async fn ask<'o, 'a>(
        &mut self,
        id: &RequestId<'_>,
        what: &str,
        options: &'o [PermissionOption<'a>],
    ) -> Asked<'o, 'a> {
        if self.withdrawn_in_backlog(id) {
            return Asked::Withdrawn;
        }
        let mut question = format!("? {what}\n");
        for (i, o) in options.iter().enumerate() {
            question.push_str(&format!("  {}) {} [{}]\n", i + 1, o.name, o.kind.as_str()));
        }
        self.render.raw(&question);
        if let Some(editor) = self.editor.clone() {
            return self.ask_editor(id, &editor, options).await;
        }
        let asked_at = Instant::now();
        let mut answers = self.answers.take().unwrap_or_else(stdin_lines);
        let chosen = loop {
            print!("choose 1-{}: ", options.len());
            let _ = std::io::Write::flush(&mut std::io::stdout());
            tokio::select! {
                said = answers.recv() => {
                    let Some((at, Some(line))) = said else {
                        // No one to ask (stdin closed): reject.
                        println!("(stdin closed: rejecting)");
                        break options.iter().find(|o| {
                            matches!(o.kind, PermissionOptionKind::RejectOnce | PermissionOptionKind::RejectAlways)
                        });
                    };
                    if is_late(self.withdrawn_at, at, asked_at) {
                        println!("(ignored: typed for the question the agent withdrew)");
                        continue;
                    }
                    let n = line.trim().parse::<usize>().ok();
                    if let Some(o) = n.and_then(|n| options.get(n.wrapping_sub(1))) {
                        break Some(o);
                    }
                }
                Some(()) = self.interrupts.recv() => {
                    // Ctrl-C while asking: cancel the turn, answer cancelled.
                    let _ = self.interrupt().await;
                    break None;
                }
                item = self.source.next_line(), if self.may_read_while_asking() => {
                    if self.read_while_asking(item, id) {
                        println!();
                        self.withdrawn_at = Some(Instant::now());
                        self.answers = Some(answers);
                        return Asked::Withdrawn;
                    }
                }
            }
        };
        self.answers = Some(answers);
        Asked::Chosen(chosen)
    }

    /// Asks on the prompt line: a number picks an option; Ctrl-C cancels
    /// the turn (answered cancelled); the end of input rejects. When the
    /// agent withdraws the request meanwhile, the prompt line says so and,
    /// once the agent has its answer, waits for Enter (a line editor cannot
    /// be stopped from outside); what is typed there is not sent.
    async fn ask_editor<'o, 'a>(
        &mut self,
        id: &RequestId<'_>,
        editor: &LineEditor,
        options: &'o [PermissionOption<'a>],
    ) -> Asked<'o, 'a> {
        loop {
            let prompt = format!("choose 1-{}: ", options.len());
            let owned = editor.clone();
            let mut read: Pin<Box<dyn Future<Output = Input> + Send>> =
                Box::pin(async move { owned.read(&prompt, false).await });
            let input = loop {
                tokio::select! {
                    input = &mut read => break input,
                    item = self.source.next_line(), if self.may_read_while_asking() => {
                        if self.read_while_asking(item, id) {
                            editor.print("(the agent withdrew this question: press Enter to go on)\n");
                            self.stale_read = Some(read);
                            return Asked::Withdrawn;
                        }
                    }
                }
            };
            match input {
                Input::Line(line) => {
                    let n = line.trim().parse::<usize>().ok();
                    if let Some(o) = n.and_then(|n| options.get(n.wrapping_sub(1))) {
                        return Asked::Chosen(Some(o));
                    }
                }
                Input::Interrupted => {
                    let _ = self.interrupt().await;
                    return Asked::Chosen(None);
                }
                Input::Eof => {
                    return Asked::Chosen(options.iter().find(|o| {
                        matches!(
                            o.kind,
                            PermissionOptionKind::RejectOnce | PermissionOptionKind::RejectAlways
                        )
                    }))
                }
            }
        }
    }
}

/// Reports on stderr, as a warning, every part of `what` (a message of the
/// agent) that lenient decoding salvaged instead of failing (never
/// silently: the agent sent something the schema does not allow).
fn warn_salvaged(what: impl std::fmt::Display, salvaged: &[Salvage<'_>]) {
    for s in salvaged {
        eprintln!("acp-client: warning: {what} did not fit the schema: {s}");
    }
}

/// The value of a lenient decoding, after [`warn_salvaged`].
fn checked<T>(what: impl std::fmt::Display, typed: Typed<'_, T>) -> T {
    warn_salvaged(what, &typed.salvaged);
    typed.value
}

/// An `fs/*` failure as the JSON-RPC error the agent gets.
fn fs_err(e: FsError) -> RpcError<'static> {
    RpcError::new(e.code, e.message)
}

/// An answer to an agent request.
enum Answer {
    Permission(RequestPermissionResponse<'static>),
    Read(ReadTextFileResponse<'static>),
    Terminal(CreateTerminalResponse<'static>),
    Output(TerminalOutputResponse<'static>),
    /// Sent later (`terminal/wait_for_exit`).
    Later,
    Empty,
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_codec::codec::LineCodec;
    use tokio_util::codec::FramedRead;

    type Reader = FramedRead<tokio::io::Empty, LineCodec>;

    fn client(permission: Permission) -> (Client<Reader>, mpsc::Receiver<Vec<u8>>) {
        let (out, sent) = LineSender::channel();
        let (_presses, interrupts) = mpsc::channel(1);
        let cfg = Config {
            cwd: std::env::temp_dir(),
            prompt: String::new(),
            permission,
            timeout: Duration::from_secs(5),
            session: None,
            mcp_servers: crate::mcp::Servers::new(),
            mcp_over_acp: false,
            tool_timeout: None,
        };
        let source = FramedRead::new(tokio::io::empty(), LineCodec::new());
        let closed = Box::pin(std::future::pending());
        let client = Client::new(source, out, cfg, closed, interrupts).unwrap();
        (client, sent)
    }

    const ASK: &str = r#"{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t","title":"ls"},"options":[{"optionId":"ok","name":"Allow","kind":"allow_once"}]}}"#;
    const WITHDRAW: &str =
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#;

    fn line(item: Item) -> String {
        match item {
            Ok(Some(Ok(line))) => line,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_withdrawal_of_the_asked_request_is_told_apart() {
        assert_eq!(cancel_target(WITHDRAW), Some(RequestId::Number(7)));
        let by_name = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"a"}}"#;
        assert_eq!(cancel_target(by_name), Some(RequestId::from("a")));
        assert_eq!(cancel_target(ASK), None);
        assert_eq!(cancel_target("not json"), None);

        let (mut c, _sent) = client(Permission::Ask);
        let seven = RequestId::Number(7);
        // Other lines, and another request's withdrawal, are kept in order.
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#;
        assert!(!c.read_while_asking(Ok(Some(Ok(update.to_owned()))), &seven));
        assert!(!c.read_while_asking(Ok(Some(Ok(by_name.to_owned()))), &seven));
        assert!(c.read_while_asking(Ok(Some(Ok(WITHDRAW.to_owned()))), &seven));
        assert_eq!(c.backlog.len(), 2, "the withdrawal itself is not kept");
        assert!(!c.withdrawn_in_backlog(&seven));
        assert!(c.withdrawn_in_backlog(&RequestId::from("a")));
        assert_eq!(line(c.backlog.pop_front().unwrap()), update);
        // The agent gone: no one to answer; nothing read after it.
        assert!(c.may_read_while_asking());
        assert!(c.read_while_asking(Ok(None), &seven));
        assert!(!c.may_read_while_asking());
    }

    #[tokio::test]
    async fn a_withdrawn_question_is_answered_cancelled_once_and_never_again() {
        let (mut c, mut sent) = client(Permission::Ask);
        // Withdrawn before its question is put: never asked.
        c.backlog.push_back(Ok(Some(Ok(WITHDRAW.to_owned()))));
        let waiting = RequestId::Number(99);
        assert!(c.handle_line(ASK, &waiting).await.unwrap().is_none());
        let answer: serde_json::Value = serde_json::from_slice(&sent.try_recv().unwrap()).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(
            answer["result"]["outcome"],
            serde_json::json!({"outcome": "cancelled"})
        );
        assert!(c.backlog.is_empty());
        // The agent's withdrawal read again: nothing more is sent.
        assert!(c.handle_line(WITHDRAW, &waiting).await.unwrap().is_none());
        assert!(sent.try_recv().is_err(), "answered once");
        // A user's answer coming late finds the request answered.
        let late = RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new("ok"),
        ));
        let mut out = Vec::new();
        assert!(c
            .tracker
            .encode_response(&RequestId::Number(7), &late, &mut out)
            .is_err());
        assert!(out.is_empty());
        assert_eq!(c.stats.permissions_allowed, 0);
    }

    #[test]
    fn only_a_line_read_between_a_withdrawal_and_the_next_question_is_late() {
        let t0 = Instant::now();
        let (withdrawn, asked) = (t0 + Duration::from_secs(1), t0 + Duration::from_secs(2));
        assert!(!is_late(None, withdrawn, asked));
        assert!(!is_late(Some(withdrawn), t0, asked), "typed before");
        assert!(is_late(Some(withdrawn), withdrawn, asked));
        assert!(
            !is_late(Some(withdrawn), asked, asked),
            "typed for this one"
        );
    }
}
