//! An ACP client: runs one prompt turn against an agent and prints it as
//! it streams; or, with no prompt at a terminal (or `-i`), a conversation.
//!
//! ```sh
//! acp-client                                  # the built-in mock agent, no network
//! acp-client "Summarize this project"      # a prompt of your own
//! acp-client --agent "gemini --acp" --cwd . "Explain src/lib.rs"
//! acp-client --permission ask --summary-json
//! ACP_BRIDGE_TOKEN=… acp-client --connect wss://agents.example.org/ --cwd .
//! ```
//!
//! # Where the agent runs: three modes, mutually exclusive
//!
//! - embedded (the default): the built-in mock agent, in-process, over a
//!   loopback pipe;
//! - local process (`--agent CMD`): the agent is spawned here and spoken to
//!   on its stdin / stdout; its stderr goes to ours;
//! - remote (`--connect ws://HOST:PORT/` or `wss://…`): the agent runs
//!   behind `acp-bridge` (directly, or behind a TLS-terminating proxy such as
//!   nginx); one WebSocket text message is one JSON-RPC message. The token
//!   comes from `--token` or `ACP_BRIDGE_TOKEN` and is sent as
//!   `Authorization: Bearer` (a `?token=` in the URL is moved there too);
//!   it is never printed (URLs are shown with the token as `***`).
//!   `wss://` trusts the public web roots, or only the CA certificates of
//!   `--ca-cert FILE` (PEM). Refused connections, a wrong token (HTTP 401),
//!   TLS failures (unknown CA, wrong name) and a connection lost mid-turn
//!   are each one line on stderr and exit status 1, within `--timeout`.
//!
//! In every mode the client is the same: it runs `initialize`,
//! `session/new` and `session/prompt`, prints message text as it arrives,
//! thoughts dimmed, tool calls with their parsed command, description and
//! directory, and permission prompts; answers permission requests by
//! `--permission allow|reject|ask`; serves `fs/*` here, confined to the
//! session directory (`--cwd`; symlinks resolved, anything outside
//! refused), also when the agent is remote; turns Ctrl-C into
//! `session/cancel` (twice to quit); ends with the stop reason. A dead
//! agent or connection, or one silent for `--timeout` seconds, ends the run
//! with an error and a non-zero exit.
//!
//! `--mcp-config FILE` (or a profile's `mcpServers`) offers the user's MCP
//! servers: to a local agent as stdio (HTTP) servers it starts; to a
//! remote one over ACP (`"type": "acp"`), started here and relayed over
//! `mcp/*` (`acp_bridge::mcp`). Without it nothing is offered.
//!
//! Interactive (`-i`, or no prompt with stdin and stdout a terminal): a
//! prompt line with history and editing; each line is a turn of the
//! session, or a slash command (the client's: `/sessions`, `/load ID`,
//! `/resume ID`, `/new`, `/mode [ID]`, `/config [ID VALUE]`, `/help`,
//! `/quit`; any other goes to the agent as a prompt, as ACP sends the
//! agent's own commands). Permission questions are answered at the
//! prompt; Ctrl-C in a turn cancels it (a second one quits), Ctrl-C at an
//! empty prompt or Ctrl-D quits.
//!
//! A v2 agent is spoken to through acp-codec's v1↔v2 translator, found
//! by `--protocol auto` (the default: v1 first, v2 when the agent refuses
//! v1 with `-32022`), `1` or `2` ([`acp_bridge::dialect`]); in every mode.
//! `--stdio`'s editor speaks the version its `initialize` asks for: a v1
//! editor reaches a v2 agent, and a v2 editor a v1 agent, through the
//! translator of that direction.
//!
//! Exit status: 0 after a stop reason, 130 after Ctrl-C, 1 on any error
//! (the agent's error message is printed), 2 for bad arguments.

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use acp_bridge::dialect::{self, Negotiation, Protocol};
use acp_bridge::{client, lines, mock_agent, profiles, reconnect, remote, tls};
use acp_codec::codec::LineCodec;
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgGroup, CommandFactory, FromArgMatches, Parser};
use client::{Client, Config, Failure, Permission};
use lines::{LineReader, LineSender};
use tokio::sync::{mpsc, watch};
use tokio_util::codec::FramedRead;

/// Environment variable holding the bridge token for `--connect`.
const TOKEN_ENV: &str = "ACP_BRIDGE_TOKEN";

const DEFAULT_PROMPT: &str = "Look around this project and write some notes.";

const MODE: &str = "Where the agent runs (default: the built-in mock agent, in-process)";
const MOCK: &str = "Built-in mock agent only";

const AFTER_HELP: &str = "Server profiles for --profile:
  acp-client profiles [--profiles-file FILE] list
  acp-client profiles [--profiles-file FILE] add NAME --url URL [--token-env VAR | --token-file FILE] [--ca-cert FILE]
  acp-client profiles [--profiles-file FILE] remove NAME

Exit status: 0 after a stop reason, 130 after Ctrl-C, 1 on any error, 2 for bad arguments.";

/// Runs one ACP prompt turn against an agent and prints it as it streams;
/// with no PROMPT at a terminal (or -i), a conversation.
#[derive(Parser, Debug)]
#[command(
    name = "acp-client",
    version,
    after_help = AFTER_HELP,
    group = ArgGroup::new("remote").args(["connect", "profile"]),
)]
struct Cli {
    /// Local process: the agent's command line, e.g. "gemini --acp"
    /// ('…' and "…" quote words)
    #[arg(long, value_name = "CMD", value_parser = split_command,
          conflicts_with = "remote", help_heading = MODE)]
    agent: Option<AgentCommand>,
    /// Remote (ACP's remote transport): ws://, wss:// (WebSocket) or
    /// http://, https:// (Streamable HTTP), e.g. ws://HOST:PORT/acp
    #[arg(long, value_name = "URL", help_heading = MODE)]
    connect: Option<String>,
    /// With --connect: the bridge's bearer token; never printed
    #[arg(long, value_name = "T", env = TOKEN_ENV, hide_env_values = true, help_heading = MODE)]
    token: Option<String>,
    /// wss/https: trust only the CA certificate(s) in this PEM file
    /// (default: the public web roots)
    #[arg(long, value_name = "FILE", requires = "remote", help_heading = MODE)]
    ca_cert: Option<PathBuf>,
    /// Remote, from a saved server profile (URL, token source, CA)
    #[arg(long, value_name = "NAME", help_heading = MODE)]
    profile: Option<String>,
    /// Be an agent on stdin/stdout for an editor: its ACP messages go to
    /// the server (or the --agent) and back unchanged, the agent's fs/*
    /// and terminal/* requests included; reconnects stay invisible to it
    #[arg(long, conflicts_with_all = ["prompt", "summary_json", "permission", "session"], help_heading = MODE)]
    stdio: bool,
    /// A conversation: a prompt line, each line a turn or a /command
    /// (/help lists them); the default with no PROMPT when stdin and
    /// stdout are a terminal
    #[arg(short, long, conflicts_with_all = ["stdio", "summary_json"])]
    interactive: bool,
    /// The ACP version the agent speaks: auto (the client's, else the
    /// other through the translator when the agent answers in it or
    /// refuses the client's), 1, or 2
    #[arg(long, value_enum, value_name = "V", default_value_t = Protocol::default())]
    protocol: Protocol,
    /// Continue this session (session/resume, else session/load) instead
    /// of creating one
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    // (`help`, not a doc comment: clippy's doc_markdown wants the
    // variable's name in backticks, which the help would show.)
    #[arg(long, value_name = "FILE", help_heading = MODE,
          help = "The profiles file for --profile (default: $ACP_CLIENT_PROFILES, else servers.json in the configuration directory)")]
    profiles_file: Option<PathBuf>,

    /// The user's MCP servers to offer the agent ({"mcpServers": {NAME:
    /// {"command", "args", "env"} or {"url"}}}): a local agent starts
    /// them; a remote one reaches the command servers over ACP, started
    /// here. Nothing is offered without it (or a profile's mcpServers)
    #[arg(long, value_name = "FILE", conflicts_with = "stdio")]
    mcp_config: Option<PathBuf>,

    /// Session directory (fs/* is served here, confined to it); default:
    /// the current directory, or a fresh scratch directory for the
    /// built-in mock
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Answer permission requests so. Default: ask when stdin is a
    /// terminal, else reject; allow for the built-in mock in its own
    /// scratch directory
    #[arg(long, value_enum, value_name = "P")]
    permission: Option<Permission>,
    /// Longest wait for connecting, initialize and session/new, and
    /// longest agent silence during the turn (seconds)
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds,
          allow_negative_numbers = true)]
    timeout: Duration,
    /// Print one JSON summary object as the last stdout line
    #[arg(long)]
    summary_json: bool,
    // (`help`, not a doc comment: clippy's doc_markdown wants the
    // method's name in backticks, which the help would show.)
    #[arg(long, value_name = "SECS", value_parser = seconds, conflicts_with = "stdio",
          help = "Cancel a tool call still running after this long, when the agent offers to (ACP v2 tool_call/cancel; seconds). In a conversation, Ctrl-\\ during a turn cancels its latest such tool call")]
    tool_timeout: Option<Duration>,
    /// Remote: when the connection breaks, reconnect (backoff with
    /// jitter) and resume the session for up to this long; 0 turns
    /// reconnecting off (seconds)
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = seconds,
          allow_negative_numbers = true)]
    reconnect_secs: Duration,
    /// Remote: the longest message read from the server (bytes); the
    /// server is told, and acp-bridge sends nothing longer (it says what
    /// it dropped instead)
    #[arg(long, value_name = "BYTES", requires = "remote",
          default_value_t = acp_codec::limits::DEFAULT_MAX_LINE_LEN)]
    max_message_bytes: usize,

    /// Add a tool call with N bytes of output
    #[arg(long, value_name = "N", help_heading = MOCK)]
    big_bytes: Option<usize>,
    /// Run shell commands through our terminal/*
    #[arg(long, help_heading = MOCK)]
    mock_terminal: bool,
    /// Pause between steps (milliseconds)
    #[arg(long, value_name = "MS", value_parser = millis, allow_negative_numbers = true,
          help_heading = MOCK)]
    mock_delay_ms: Option<Duration>,

    /// The prompt, its words joined by spaces (put them after -- when one
    /// starts with -); default: "Look around this project and write some
    /// notes."
    #[arg(value_name = "PROMPT")]
    prompt: Vec<String>,
}

/// `--agent CMD` split into words.
#[derive(Debug, Clone)]
struct AgentCommand(Vec<String>);

/// A finite, non-negative number.
fn non_negative(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| "needs a non-negative number".to_owned())
}

/// `--timeout`: seconds, fractions allowed.
fn seconds(v: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(non_negative(v)?).map_err(|e| e.to_string())
}

/// `--mock-delay-ms`: milliseconds (a fraction is dropped).
fn millis(v: &str) -> Result<Duration, String> {
    Ok(Duration::from_millis(non_negative(v)? as u64))
}

/// What the run uses, once the arguments are checked and a profile resolved.
struct Args {
    agent: Option<Vec<String>>,
    /// `--connect URL`.
    connect: Option<String>,
    token: Option<String>,
    ca_cert: Option<PathBuf>,
    cwd: Option<PathBuf>,
    /// `--permission`; `None`: see [`Args::permission`].
    permission: Option<Permission>,
    timeout: Duration,
    summary_json: bool,
    /// `--tool-timeout`.
    tool_timeout: Option<Duration>,
    /// `--reconnect-secs`.
    reconnect: Duration,
    /// `--max-message-bytes`.
    max_message: usize,
    /// `--stdio`.
    stdio: bool,
    /// `--session ID`.
    session: Option<String>,
    /// `--protocol`.
    protocol: Protocol,
    mock: mock_agent::Options,
    prompt: String,
    /// A conversation (`-i`, or no prompt at a terminal).
    interactive: bool,
    /// The prompt was given (in a conversation: its first turn).
    prompt_given: bool,
    /// The user's MCP servers (`--mcp-config`, else the profile's).
    mcp_servers: acp_bridge::mcp::Servers,
}

/// Parses the command line; a usage error is a clap error (exit status 2).
fn parse_args() -> Result<Args, clap::Error> {
    let matches = Cli::command().try_get_matches()?;
    // ACP_BRIDGE_TOKEN only counts with --connect or --profile; a token on
    // the command line is checked against them.
    let token_on_command_line = matches.value_source("token") == Some(ValueSource::CommandLine);
    Cli::from_arg_matches(&matches)?
        .check(token_on_command_line)
        .map_err(|(kind, message)| Cli::command().error(kind, message))
}

impl Cli {
    /// The checks clap does not express, and `--profile` resolved.
    fn check(self, token_on_command_line: bool) -> Result<Args, (ErrorKind, String)> {
        use ErrorKind::{ArgumentConflict, MissingRequiredArgument, ValueValidation};
        let remote = self.connect.is_some() || self.profile.is_some();
        let mock_options = [
            (self.big_bytes.is_some(), "--big-bytes"),
            (self.mock_terminal, "--mock-terminal"),
            (self.mock_delay_ms.is_some(), "--mock-delay-ms"),
        ];
        if let (Some((_, opt)), true) = (
            mock_options.iter().find(|(given, _)| *given),
            self.agent.is_some() || remote,
        ) {
            return Err((ArgumentConflict, format!(
                "{opt} is for the built-in mock agent only (a bridge's mock takes acp-bridge --mock-args)"
            )));
        }
        let mut token = self.token;
        if token_on_command_line && self.profile.is_some() {
            let e = "--profile gives the token: drop --token";
            return Err((ArgumentConflict, e.to_owned()));
        } else if token_on_command_line && !remote {
            return Err((
                MissingRequiredArgument,
                "--token needs --connect".to_owned(),
            ));
        } else if !token_on_command_line {
            token = token.filter(|t| remote && !t.is_empty());
        }
        let (mut connect, mut ca_cert) = (self.connect, self.ca_cert);
        let mut mcp_servers = match &self.mcp_config {
            Some(path) => acp_bridge::mcp::read_config(path).map_err(|e| (ValueValidation, e))?,
            None => acp_bridge::mcp::Servers::new(),
        };
        if let Some(name) = &self.profile {
            let p = profiles::resolve(name, self.profiles_file.as_deref())
                .map_err(|e| (ValueValidation, e))?;
            if self.mcp_config.is_none() {
                mcp_servers = p.mcp_servers;
            }
            connect = Some(p.url);
            // The profile's token source, else ACP_BRIDGE_TOKEN.
            token = p.token.or(token);
            ca_cert = ca_cert.or(p.ca_cert);
        }
        let secure = connect.as_deref().is_some_and(|u| {
            let u = u.to_ascii_lowercase();
            u.starts_with("wss://") || u.starts_with("https://")
        });
        if ca_cert.is_some() && !secure {
            let e = "--ca-cert needs a wss:// or https:// URL";
            return Err((ValueValidation, e.to_owned()));
        }
        Ok(Args {
            agent: self.agent.map(|a| a.0),
            connect,
            token,
            ca_cert,
            cwd: self.cwd,
            permission: self.permission,
            timeout: self.timeout,
            summary_json: self.summary_json,
            tool_timeout: self.tool_timeout,
            reconnect: self.reconnect_secs,
            max_message: self.max_message_bytes,
            stdio: self.stdio,
            session: self.session,
            protocol: self.protocol,
            mock: mock_agent::Options {
                big_bytes: self.big_bytes.unwrap_or(0),
                step_delay: self.mock_delay_ms.unwrap_or_default(),
                terminal: self.mock_terminal,
                ..mock_agent::Options::default()
            },
            interactive: self.interactive
                || (self.prompt.is_empty() && !self.stdio && !self.summary_json && {
                    use std::io::IsTerminal;
                    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
                }),
            prompt_given: !self.prompt.is_empty(),
            mcp_servers,
            prompt: if self.prompt.is_empty() {
                DEFAULT_PROMPT.to_owned()
            } else {
                self.prompt.join(" ")
            },
        })
    }
}

impl Args {
    /// How permission requests are answered: `--permission`, else `ask` when
    /// someone can answer (stdin is a terminal), else `reject`. Only the
    /// built-in mock working in its own scratch directory is allowed by
    /// default: a real agent never gets shell commands or file writes
    /// approved without being asked.
    fn permission(&self, scratch: bool) -> Permission {
        use std::io::IsTerminal;
        match self.permission {
            Some(p) => p,
            None if scratch => Permission::Allow,
            None if std::io::stdin().is_terminal() => Permission::Ask,
            None => Permission::Reject,
        }
    }

    /// The built-in mock agent, in-process.
    fn embedded(&self) -> bool {
        self.agent.is_none() && self.connect.is_none()
    }
}

/// `--agent`'s words ([`acp_bridge::supervisor::split_command`]).
fn split_command(cmd: &str) -> Result<AgentCommand, String> {
    acp_bridge::supervisor::split_command(cmd).map(AgentCommand)
}

fn main() -> ExitCode {
    // Before any thread starts: the agent's launcher (this program
    // re-executed) enters new namespaces, which a multi-threaded process
    // cannot.
    if let Some(code) = acp_bridge::supervisor::run_if_launcher() {
        return code;
    }
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("acp-client: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("profiles") {
        return ExitCode::from(profiles::cli(argv.get(1..).unwrap_or_default()));
    }
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            // Help on stdout (status 0), usage errors on stderr (status 2).
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let started = Instant::now();

    // The session directory: --cwd, else a scratch directory for the
    // built-in mock, else the current directory.
    let scratch = args.cwd.is_none() && args.embedded();
    let cwd = match session_dir(&args, scratch) {
        Ok(d) => d,
        Err(e) => return fail(&args, &e),
    };

    // The transport: lines from the agent, lines to it, a future that
    // resolves when it is gone, and how to stop it.
    let transport = match (&args.agent, &args.connect) {
        (_, Some(url)) => connect(url, &args).await,
        (Some(cmd), None) => spawn_agent(cmd, &cwd).await,
        (None, None) => Ok(embedded_mock(args.mock.clone())),
    };
    let Transport {
        source,
        sink,
        closed,
        agent,
        reconnects,
    } = match transport {
        Ok(t) => t,
        Err(e) => return fail(&args, &e),
    };

    // The agent's version settled, and the translator put between when
    // the client's is not the agent's. The client's own turn logic speaks
    // v1; an editor on --stdio speaks what its initialize asks for.
    let (source, sink) = match args.protocol {
        Protocol::V1 if !args.stdio => (source, sink),
        protocol => {
            let from_agent = Box::pin(lines::stream(source));
            let (source, sink) = dialect::spawn(Negotiation::new(protocol), from_agent, sink);
            (Source::Negotiated(source), sink)
        }
    };

    if args.stdio {
        let code = relay_stdio(source, sink, closed).await;
        agent.stop().await;
        if scratch {
            let _ = std::fs::remove_dir_all(&cwd);
        }
        return code;
    }

    // The turn.
    let cfg = Config {
        cwd: cwd.clone(),
        prompt: args.prompt.clone(),
        permission: args.permission(scratch),
        timeout: args.timeout,
        session: args.session.clone(),
        mcp_servers: args.mcp_servers.clone(),
        mcp_over_acp: args.connect.is_some(),
        tool_timeout: args.tool_timeout,
    };
    let mut client = match Client::new(source, sink, cfg, closed, ctrl_c_presses()) {
        Ok(c) => c,
        Err(e) => return fail(&args, &format!("session directory {}: {e}", cwd.display())),
    };
    if args.interactive {
        let code = converse(client, &args).await;
        agent.stop().await;
        if scratch {
            let _ = std::fs::remove_dir_all(&cwd);
        }
        return code;
    }
    let result = client.run().await;
    client.render.break_line();
    let interrupted = client.stats.cancelled_by_user;
    let reconnects = reconnects.map_or(0, |n| n.load(std::sync::atomic::Ordering::Relaxed));
    let summary = summary(&client, &result, started, reconnects);
    drop(client); // closes the agent's stdin (or the WebSocket)

    // The end: the agent stopped, the scratch directory removed, the exit
    // status and the summary.
    agent.stop().await;
    if scratch {
        let _ = std::fs::remove_dir_all(&cwd);
    }
    let code = exit_code(&result, interrupted);
    if args.summary_json {
        println!("{summary}");
    }
    code
}

/// The conversation (`-i`): the prompt line on its own thread, the turns
/// printed with tool calls updated in place on a terminal; 0 after
/// `/quit` or Ctrl-D, 130 after a second Ctrl-C in a turn, 1 on errors.
async fn converse<S: lines::LineSource>(client: Client<S>, args: &Args) -> ExitCode {
    use std::io::IsTerminal;
    let editor = match acp_bridge::editor::LineEditor::spawn() {
        Ok(e) => e,
        Err(e) => return fail(args, &e),
    };
    let tty = std::io::stdout().is_terminal();
    let render = acp_bridge::render::Render::to(Box::new(std::io::stdout()), tty, tty);
    let mut client = client
        .with_editor(editor.clone())
        .with_render(render)
        .with_tool_cancel_keys(quit_presses());
    let first = args.prompt_given.then(|| args.prompt.clone());
    let result = match client.start().await {
        Ok(()) => acp_bridge::interactive::converse(&mut client, &editor, first).await,
        Err(e) => Err(e),
    };
    client.render.break_line();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => exit_code(&Err(e), false),
    }
}

/// `--cwd`, else a fresh scratch directory (`scratch`), else the current
/// directory.
fn session_dir(args: &Args, scratch: bool) -> Result<PathBuf, String> {
    match (&args.cwd, scratch) {
        (Some(dir), _) => Ok(dir.clone()),
        (None, true) => scratch_dir().map_err(|e| format!("cannot make a scratch directory: {e}")),
        (None, false) => Ok(std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))),
    }
}

/// 0 after a stop reason, 130 after Ctrl-C, 1 on any error (printed).
fn exit_code(result: &Result<String, Failure>, interrupted: bool) -> ExitCode {
    match result {
        Ok(_) if interrupted => ExitCode::from(130),
        Ok(_) => ExitCode::SUCCESS,
        Err(Failure::Interrupted) => ExitCode::from(130),
        Err(e) => {
            eprintln!("acp-client: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--stdio`: the editor's lines (stdin) to the agent and the agent's to
/// the editor (stdout), unchanged, until the editor closes stdin (status
/// 0) or the agent's end is gone for good (status 1, the reason on
/// stderr). A line over the limit, or not UTF-8, is skipped with a word on
/// stderr.
async fn relay_stdio(mut source: Source, sink: LineSender, closed: Closed) -> ExitCode {
    use lines::LineSource as _;
    let mut editor = FramedRead::new(tokio::io::stdin(), LineCodec::new());
    let to_editor = LineSender::spawn(tokio::io::stdout());
    loop {
        tokio::select! {
            line = editor.next_line() => match line {
                Ok(Some(Ok(line))) => {
                    let mut bytes = line.into_bytes();
                    bytes.push(b'\n');
                    if sink.send(bytes).await.is_err() {
                        break;
                    }
                }
                Ok(Some(Err(e))) => eprintln!("acp-client: skipped a line from the editor: {e}"),
                Ok(None) | Err(_) => return ExitCode::SUCCESS,
            },
            message = source.next_line() => match message {
                Ok(Some(Ok(line))) => {
                    let mut bytes = line.into_bytes();
                    bytes.push(b'\n');
                    if to_editor.send(bytes).await.is_err() {
                        return ExitCode::SUCCESS;
                    }
                }
                Ok(Some(Err(e))) => eprintln!("acp-client: skipped a line from the agent: {e}"),
                Ok(None) | Err(_) => break,
            },
        }
    }
    drop(to_editor);
    eprintln!("acp-client: error: {}", closed.await);
    ExitCode::FAILURE
}

/// The connection to the agent, whatever the mode.
struct Transport {
    source: Source,
    sink: LineSender,
    closed: Closed,
    agent: Agent,
    /// How many times a broken connection to a server was replaced.
    reconnects: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

impl Transport {
    /// A server reached through the reconnecting relay (either profile).
    fn rejoined(conn: reconnect::Reconnecting) -> Self {
        Self {
            source: Source::Rejoined(conn.source),
            sink: conn.sink,
            closed: conn.closed,
            agent: Agent::Relay { relay: conn.relay },
            reconnects: Some(conn.reconnects),
        }
    }
}

/// The agent end of the connection.
enum Agent {
    /// A child process; `exit` reports its status once it has exited.
    Process {
        pid: Option<u32>,
        exit: watch::Receiver<Option<String>>,
    },
    /// The built-in mock on a loopback pipe.
    Mock,
    /// A bridge over WebSocket; `writer` ends once the close frame is sent.
    Remote { writer: tokio::task::JoinHandle<()> },
    /// A bridge behind the reconnecting relay; `relay` ends once the
    /// connection said goodbye.
    Relay { relay: tokio::task::JoinHandle<()> },
}

impl Agent {
    /// Ends the agent once the client is done (its input is closed).
    async fn stop(self) {
        match self {
            Self::Process { pid, exit } => stop_agent(pid, exit).await,
            Self::Remote { writer } | Self::Relay { relay: writer } => {
                // The close handshake, briefly: the bridge may be gone.
                let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
            }
            Self::Mock => {}
        }
    }
}

/// Remote: `--connect URL` (or a profile's), over WebSocket or Streamable
/// HTTP, with TLS for `wss://` and `https://`.
async fn connect(url: &str, args: &Args) -> Result<Transport, String> {
    let target = remote::target(url, args.token.as_deref())?;
    if !target.tls && target.has_token() && !target.is_loopback() {
        eprintln!(
            "acp-client: warning: the token goes unencrypted over ws:// to {}; use wss://",
            target.host
        );
    }
    let tls = if target.tls {
        let config = tls::client_config(args.ca_cert.as_deref());
        Some(config.map_err(|e| format!("--ca-cert {e}"))?)
    } else {
        None
    };
    let shown = target.shown.clone();
    let max = args.max_message;
    if target.http && !args.reconnect.is_zero() {
        // Streamable HTTP resumes within the connection (Last-Event-ID);
        // the relay loads the sessions on a new one when the server
        // cannot resume (it died, or a gap).
        let policy = reconnect::Policy::new(args.reconnect);
        let reconnects = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = std::sync::Arc::clone(&reconnects);
        let (url, token, timeout) = (url.to_owned(), args.token.clone(), args.timeout);
        let dial: reconnect::Dial = std::sync::Arc::new(move || {
            let target = remote::target(&url, token.as_deref());
            let (tls, counted) = (tls.clone(), std::sync::Arc::clone(&counted));
            Box::pin(async move {
                remote::connect_resuming(target?, tls, timeout, max, policy, counted).await
            })
        });
        let conn = reconnect::connect_counting(dial, policy, reconnects).await?;
        eprintln!("acp-client: connected to {shown}");
        return Ok(Transport::rejoined(conn));
    }
    if !args.reconnect.is_zero() {
        // Each redial parses the URL again (the target is consumed).
        let (url, token, timeout) = (url.to_owned(), args.token.clone(), args.timeout);
        let dial: reconnect::Dial = std::sync::Arc::new(move || {
            let target = remote::target(&url, token.as_deref());
            let tls = tls.clone();
            Box::pin(async move { remote::connect(target?, tls, timeout, max).await })
        });
        let conn = reconnect::connect(dial, reconnect::Policy::new(args.reconnect)).await?;
        eprintln!("acp-client: connected to {shown}");
        return Ok(Transport::rejoined(conn));
    }
    let conn = remote::connect(target, tls, args.timeout, max).await?;
    eprintln!("acp-client: connected to {shown}");
    Ok(Transport {
        source: Source::Remote(conn.source),
        sink: conn.sink,
        closed: conn.closed,
        agent: Agent::Remote {
            writer: conn.writer,
        },
        reconnects: None,
    })
}

/// Local process: `--agent CMD`, in the session directory and its own
/// process group, spoken to on its stdin / stdout; its stderr is ours.
/// Started through the launcher (`acp_bridge::supervisor`): when it ends,
/// or this program does, every process it started ends too.
async fn spawn_agent(cmd: &[String], cwd: &Path) -> Result<Transport, String> {
    let launch = acp_bridge::supervisor::Launch::new(cmd.to_vec());
    let mut command = acp_bridge::supervisor::command(launch)
        .map_err(|e| format!("cannot start agent {:?}: {e}", cmd.join(" ")))?;
    command
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = acp_bridge::supervisor::spawn(command)
        .await
        .map_err(|e| format!("cannot start agent {:?}: {e}", cmd.join(" ")))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("agent stdio not captured".to_owned());
    };
    let pid = child.id();
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        let status = match child.wait().await {
            Ok(s) => format!("agent exited ({s})"),
            Err(e) => format!("agent lost: {e}"),
        };
        let _ = tx.send(Some(status));
    });
    let mut exit = rx.clone();
    let closed = Box::pin(async move {
        match exit.wait_for(Option::is_some).await {
            Ok(s) => s.clone().unwrap_or_default(),
            Err(_) => "agent lost".to_owned(),
        }
    });
    Ok(Transport {
        source: Source::Bytes(FramedRead::new(Box::new(stdout), LineCodec::new())),
        sink: LineSender::spawn(stdin),
        closed,
        agent: Agent::Process { pid, exit: rx },
        reconnects: None,
    })
}

/// Embedded: the built-in mock agent, in-process, on a loopback pipe.
fn embedded_mock(options: mock_agent::Options) -> Transport {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (their_read, their_write) = tokio::io::split(theirs);
    let (tx, rx) = tokio::sync::oneshot::channel::<String>();
    tokio::spawn(async move {
        let r = mock_agent::serve(their_read, their_write, options).await;
        let _ = tx.send(match r {
            Ok(()) => "mock agent stopped".to_owned(),
            Err(e) => format!("mock agent failed: {e}"),
        });
    });
    let (our_read, our_write) = tokio::io::split(ours);
    Transport {
        source: Source::Bytes(FramedRead::new(Box::new(our_read), LineCodec::new())),
        sink: LineSender::spawn(our_write),
        closed: Box::pin(async move { rx.await.unwrap_or_else(|_| "mock agent lost".to_owned()) }),
        agent: Agent::Mock,
        reconnects: None,
    }
}

/// Ctrl-C presses, never missed between selects.
fn ctrl_c_presses() -> mpsc::Receiver<()> {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).await.is_err() {
                break;
            }
        }
    });
    rx
}

/// Ctrl-\\ presses (SIGQUIT) in a conversation: each cancels the turn's
/// latest cancellable tool call. (The agent runs in its own process
/// group: the terminal's SIGQUIT does not reach it.)
fn quit_presses() -> mpsc::Receiver<()> {
    let (tx, rx) = mpsc::channel(4);
    #[cfg(not(unix))]
    drop(tx);
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut quits) = signal(SignalKind::quit()) else {
            return;
        };
        while quits.recv().await.is_some() {
            if tx.send(()).await.is_err() {
                break;
            }
        }
    });
    rx
}

/// Resolves with a description once the agent is gone.
type Closed = std::pin::Pin<Box<dyn std::future::Future<Output = String> + Send>>;

/// Any async byte source the line reader can own.
trait ReadHalf: tokio::io::AsyncRead + Unpin + Send {}
impl<T: tokio::io::AsyncRead + Unpin + Send> ReadHalf for T {}

/// The incoming half of the transport: a byte stream split into lines, or
/// WebSocket messages (one line each).
enum Source {
    Bytes(LineReader<Box<dyn ReadHalf>>),
    Remote(remote::RemoteSource),
    Rejoined(reconnect::RejoinedSource),
    /// Through the version negotiation (and a translator).
    Negotiated(dialect::Negotiated),
}

impl lines::LineSource for Source {
    async fn next_line(
        &mut self,
    ) -> std::io::Result<Option<Result<String, acp_codec::FrameError>>> {
        match self {
            Self::Bytes(r) => r.next_line().await,
            Self::Remote(r) => r.next_line().await,
            Self::Rejoined(r) => r.next_line().await,
            Self::Negotiated(r) => r.next_line().await,
        }
    }

    fn translated_version(&self) -> Option<u16> {
        match self {
            Self::Negotiated(r) => r.translated_version(),
            _ => None,
        }
    }
}

/// Ends the agent: its stdin is closed already; give it 2 s to exit, then
/// SIGTERM its process group, then SIGKILL. Done when the whole group is
/// gone, not only the process we started: an agent's launcher may exit
/// before the processes it started (Qwen Code's does).
async fn stop_agent(pid: Option<u32>, mut exit: watch::Receiver<Option<String>>) {
    let exited = tokio::time::timeout(Duration::from_secs(2), exit.wait_for(Option::is_some))
        .await
        .is_ok();
    let Some(pid) = pid else { return };
    if exited && group_empties(pid, Duration::from_secs(2)).await {
        return;
    }
    for signal in ["-TERM", "-KILL"] {
        // The agent runs in its own process group (`process_group(0)`), so
        // this reaches the tools it started too.
        let _ = std::process::Command::new("kill")
            .args([signal, "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
        let _ = tokio::time::timeout(Duration::from_secs(1), exit.wait_for(Option::is_some)).await;
        if group_empties(pid, Duration::from_secs(1)).await {
            return;
        }
    }
}

/// Whether the process group `pgid` is empty within `limit` (polled).
async fn group_empties(pgid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        let alive = std::process::Command::new("kill")
            .args(["-0", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !alive {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A fresh directory with a README for the mock agent to read.
fn scratch_dir() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("acp-client-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("README.md"),
        "# Scratch project\n\nMade by acp-client for the mock agent.\n",
    )?;
    Ok(dir)
}

fn summary<S>(
    client: &Client<S>,
    result: &Result<String, Failure>,
    started: Instant,
    reconnects: u64,
) -> String {
    let s = &client.stats;
    let c = client.render.counts();
    serde_json::json!({
        "stopReason": s.stop_reason,
        "error": result.as_ref().err().map(ToString::to_string),
        "agent": s.agent,
        "sessionId": s.session_id,
        "messageChunks": c.message_chunks,
        "thoughtChunks": c.thought_chunks,
        "toolCalls": client.render.tool_calls(),
        "toolCallUpdates": c.tool_call_updates,
        "plans": c.plans,
        "updates": c.updates,
        "turnProblems": c.problems,
        "permissionRequests": s.permission_requests,
        "permissionsAllowed": s.permissions_allowed,
        "fsReads": s.fs_reads,
        "fsWrites": s.fs_writes,
        "terminals": s.terminals,
        "fsRefused": s.fs_refused,
        "lines": s.lines,
        "badLines": s.bad_lines,
        "largestLineBytes": s.largest_line_bytes,
        "cancelledByUser": s.cancelled_by_user,
        "reconnects": reconnects,
        "elapsedMs": started.elapsed().as_millis() as u64,
    })
    .to_string()
}

fn fail(args: &Args, message: &str) -> ExitCode {
    eprintln!("acp-client: error: {message}");
    if args.summary_json {
        println!(
            "{}",
            serde_json::json!({"stopReason": null, "error": message})
        );
    }
    ExitCode::FAILURE
}
