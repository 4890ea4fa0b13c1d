//! The relay and load bench: `acp-bridge` (WebSocket profile, a token
//! file, one agent per user started on demand) against the plain relay
//! of `examples/plain_relay.rs`, the same agent (`acp-mock-agent`), in one
//! run; a Markdown table on stdout. `scripts/load_bench.sh` builds the
//! release binaries and runs it:
//!
//! ```text
//! load_bench --bridge target/release/acp-bridge \
//!     --relay target/release/examples/plain_relay \
//!     --agent target/release/acp-mock-agent
//! ```
//!
//! Each figure is the CPU time of the server process alone (its own
//! threads, not its agents: `clock_getcpuclockid`, nanoseconds), the
//! median of `--relay-reps` (9) or `--load-reps` (7) runs, each on a
//! freshly started server, the servers' runs interleaved (each rep runs
//! every server once, one after the other); a ratio is the median of the
//! ratios within each rep, so that a drift of the host's speed (a shared
//! VM) cancels out:
//!
//! - **relay**: one client, `--relay-turns` turns, each moving one line of
//!   `--line-bytes` (agent to client: the mock agent's tool output;
//!   client to agent: the prompt's text); the server's CPU per MB (10^6
//!   bytes of text frames) moved.
//! - **load**: `--users` clients at once, each its own user of the token
//!   file (its own agent, started by its first message), `initialize`
//!   and `session/new`, then `--turns` turns each (the mock agent's
//!   scripted turn, its two permission requests answered); the server's
//!   CPU per user to start (connect, `initialize`, `session/new`), per
//!   turn, per turn with the start included, and its peak RSS (`VmHWM`).
//!
//! The load runs have a second anchor: the plain relay with the stack's
//! default WebSocket buffers (`plain_relay --stack-defaults`), what a
//! relay written without tuning gets; its rows come last.
//!
//! `--protocol 2`: the clients and the agent speak ACP v2 (a turn ends at
//! the idle `state_update`).
//!
//! The bridge runs three times: as an operator starts it, with
//! `--metrics-addr` scraped once a second by this driver, and with
//! `--log-level off`. Every wait is bounded (a message: 60 s; a phase:
//! 300 s); every process started is in its own process group, killed at
//! the end.
//!
//! `--against OTHER`: build against build. The servers are then the plain
//! relay, the bridge at `--bridge` and the one at `OTHER` (both as an
//! operator starts them), interleaved as above, and the table's last
//! column is the ratio of the first bridge to the other, rep by rep: what
//! a change does, measured beside its base on a host whose speed drifts
//! by more than the change.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T> = std::result::Result<T, Error>;

/// The longest wait for one message or one start.
const STEP: Duration = Duration::from_secs(60);
/// The longest wait for one phase of a load run.
const PHASE: Duration = Duration::from_secs(300);

/// The relay and load bench (see the file's docs).
#[derive(Parser, Debug)]
struct Args {
    /// The `acp-bridge` binary.
    #[arg(long)]
    bridge: PathBuf,
    /// The plain relay (`examples/plain_relay`).
    #[arg(long)]
    relay: PathBuf,
    /// The agent (`acp-mock-agent`).
    #[arg(long)]
    agent: PathBuf,
    /// Clients (users) at once in the load run.
    #[arg(long, default_value_t = 300)]
    users: usize,
    /// Turns each client runs in the load run.
    #[arg(long, default_value_t = 3)]
    turns: usize,
    /// Turns of the relay run.
    #[arg(long, default_value_t = 10)]
    relay_turns: usize,
    /// Bytes of the long line each relay turn moves.
    #[arg(long, default_value_t = 8_000_000)]
    line_bytes: usize,
    /// Runs of each relay figure (the median is printed).
    #[arg(long, default_value_t = 9)]
    relay_reps: usize,
    /// Runs of each load figure (the median is printed; runs of one
    /// server differ by up to a fifth on a shared two-core VM, so seven).
    #[arg(long, default_value_t = 7)]
    load_reps: usize,
    /// Run only the relay figures or only the load figures.
    #[arg(long, value_parser = ["relay", "load"])]
    only: Option<String>,
    /// A command that runs each server (words split on whitespace), for a
    /// profile: `--wrap "valgrind --tool=callgrind"`.
    #[arg(long)]
    wrap: Option<String>,
    /// Another `acp-bridge` build, run beside the first as an operator
    /// starts it: the table compares the two (build against build), in
    /// place of the scraped and quiet runs.
    #[arg(long)]
    against: Option<PathBuf>,
    /// The ACP version the clients and the agent speak: 1, or 2 (the
    /// agent gets `--protocol 2`; a turn ends with the idle
    /// `state_update`, not with the prompt's answer).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=2))]
    protocol: u16,
}

/// What serves the clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    /// The plain relay with the stack's default WebSocket buffers
    /// (`--stack-defaults`): the load runs' second anchor.
    PlainDefaults,
    Bridge,
    BridgeScraped,
    /// The bridge with no log lines on stderr (`--log-level off`): what
    /// its `tracing` costs.
    BridgeQuiet,
    /// The other build (`--against`), as an operator starts it.
    Against,
}

const KINDS: [Kind; 4] = [
    Kind::Plain,
    Kind::Bridge,
    Kind::BridgeScraped,
    Kind::BridgeQuiet,
];

/// The servers of a run, the anchor first: [`KINDS`], or with
/// `--against` the plain relay and the two builds.
fn kinds(args: &Args) -> Vec<Kind> {
    if args.against.is_some() {
        vec![Kind::Plain, Kind::Bridge, Kind::Against]
    } else {
        KINDS.to_vec()
    }
}

/// A server's column heading.
fn label(kind: Kind) -> &'static str {
    match kind {
        Kind::Plain => "plain relay",
        Kind::PlainDefaults => "plain relay, the stack's default buffers",
        Kind::Bridge => "acp-bridge",
        Kind::BridgeScraped => "acp-bridge, /metrics scraped 1/s",
        Kind::BridgeQuiet => "acp-bridge, `--log-level off`",
        Kind::Against => "acp-bridge, `--against` build",
    }
}

/// A server process in its own process group, killed with it on drop.
struct Server {
    child: Child,
    url: String,
    metrics: Option<SocketAddr>,
}

/// The bench's scratch directory and token file.
struct Setup {
    args: Args,
    dir: PathBuf,
    tokens: Vec<String>,
    /// `--unconfined` when this host cannot confine agents.
    unconfined: bool,
}

impl Setup {
    fn new(mut args: Args) -> Result<Self> {
        for path in [&mut args.bridge, &mut args.relay, &mut args.agent]
            .into_iter()
            .chain(args.against.as_mut())
        {
            *path =
                std::fs::canonicalize(&*path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let dir = std::env::temp_dir().join(format!("acp-load-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let tokens: Vec<String> = (0..args.users.max(1))
            .map(|i| format!("load-bench-{i:05}-0123456789abcdef"))
            .collect();
        let file: serde_json::Map<String, serde_json::Value> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let user =
                    json!({"userId": format!("user{i:05}"), "permissions": ["read", "write"]});
                (t.clone(), user)
            })
            .collect();
        std::fs::write(
            dir.join("tokens.json"),
            json!({ "tokens": file }).to_string(),
        )?;
        let check = Command::new(&args.bridge)
            .arg("--check-confinement")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        let unconfined = check.code() == Some(1);
        Ok(Self {
            args,
            dir,
            tokens,
            unconfined,
        })
    }

    /// Starts `kind` with the agent given `agent_args` (and the
    /// protocol version).
    fn start(&self, kind: Kind, agent_args: &[String], run: usize) -> Result<Server> {
        let mut agent_args = agent_args.to_vec();
        agent_args.extend(["--protocol".to_owned(), self.args.protocol.to_string()]);
        let agent_args = &agent_args[..];
        let run_dir = self.dir.join(format!("run{run}"));
        std::fs::create_dir_all(&run_dir)?;
        let log = std::fs::File::create(run_dir.join("stderr"))?;
        let program = match (kind, &self.args.against) {
            (Kind::Plain | Kind::PlainDefaults, _) => &self.args.relay,
            (Kind::Against, Some(other)) => other,
            _ => &self.args.bridge,
        };
        let wrap: Vec<&str> = self
            .args
            .wrap
            .iter()
            .flat_map(|w| w.split_whitespace())
            .collect();
        let mut command = match wrap.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(program);
                c
            }
            None => Command::new(program),
        };
        if kind == Kind::PlainDefaults {
            command.arg("--stack-defaults");
        }
        if matches!(kind, Kind::Plain | Kind::PlainDefaults) {
            command
                .arg("127.0.0.1:0")
                .arg(&self.args.agent)
                .args(agent_args);
        } else {
            let agent = std::iter::once(self.args.agent.display().to_string())
                .chain(agent_args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ");
            let users = self.tokens.len().to_string();
            command
                .args(["--port", "0", "--agent", &agent])
                .arg("--token-file")
                .arg(self.dir.join("tokens.json"))
                .arg("--state-dir")
                .arg(run_dir.join("agents"))
                .arg("--log-dir")
                .arg(&run_dir)
                .args(["--max-agents", &users])
                .args(["--max-unauthenticated-per-address", &users]);
            if let Some(dir) = self.args.agent.parent() {
                command.arg("--agent-ro").arg(dir);
            }
            if self.unconfined {
                command.arg("--unconfined");
            }
            if kind == Kind::BridgeScraped {
                command.args(["--metrics-addr", "127.0.0.1:0"]);
            }
            if kind == Kind::BridgeQuiet {
                command.args(["--log-level", "off"]);
            }
        }
        let child = command
            .env_remove("GEMINI_BRIDGE_TOKEN")
            .env_remove("GEMINI_BRIDGE_TOKEN_FILE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0)
            .spawn()?;
        let mut server = Server {
            child,
            url: String::new(),
            metrics: None,
        };
        let want_metrics = kind == Kind::BridgeScraped;
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(run_dir.join("stderr")).unwrap_or_default();
            let ws = after(&text, "listening on ws://");
            let metrics = after(&text, "metrics on http://");
            if let Some(ws) = ws.filter(|_| !want_metrics || metrics.is_some()) {
                server.url = match kind {
                    Kind::Plain | Kind::PlainDefaults => format!("ws://{ws}/"),
                    _ => format!("ws://{ws}/acp"),
                };
                if let Some(m) = metrics {
                    server.metrics = Some(m.trim_end_matches("/metrics").parse()?);
                }
                return Ok(server);
            }
            if let Some(status) = server.child.try_wait()? {
                return Err(format!("{kind:?} exited ({status}) before listening: {text}").into());
            }
            if started.elapsed() > STEP {
                return Err(format!("{kind:?} not listening after 60 s: {text}").into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The word after `marker` in the complete lines of `text`.
fn after(text: &str, marker: &str) -> Option<String> {
    let lines = &text[..text.rfind('\n')?];
    let rest = &lines[lines.find(marker)? + marker.len()..];
    rest.split_whitespace().next().map(str::to_owned)
}

impl Server {
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    /// `SIGTERM` to the server (a profiler wrapping it writes its output
    /// as it exits), at most 10 s, then `SIGKILL` to its process group.
    fn drop(&mut self) {
        let Ok(pid) = i32::try_from(self.child.id()) else {
            return;
        };
        // SAFETY: kill(2) with a process id and a signal number.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(10) {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: kill(2) with a process group id and a signal number.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// The CPU time of process `pid` so far: every thread's, living or ended.
fn cpu_time(pid: u32) -> Result<Duration> {
    let pid = libc::pid_t::try_from(pid)?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock_getcpuclockid writes one clockid_t through a valid pointer.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return Err(format!("no CPU clock for process {pid}").into());
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(format!("cannot read the CPU clock of process {pid}").into());
    }
    Ok(Duration::new(
        u64::try_from(ts.tv_sec)?,
        u32::try_from(ts.tv_nsec)?,
    ))
}

/// The user and system CPU time of `pid` so far, in clock ticks
/// (`/proc/PID/stat`: coarser than [`cpu_time`], for the split only).
fn user_system_ticks(pid: u32) -> Result<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after_name = &stat[stat.rfind(')').ok_or("no ) in /proc/PID/stat")? + 1..];
    // Fields 14 and 15 of the line; the name was field 2.
    let mut fields = after_name.split_whitespace().skip(11);
    let mut next = || -> Result<u64> { Ok(fields.next().ok_or("short /proc/PID/stat")?.parse()?) };
    Ok((next()?, next()?))
}

/// The peak resident set of `pid`, in bytes (`VmHWM`).
fn peak_rss(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or("no VmHWM in /proc/PID/status")?;
    Ok(kib * 1024)
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One WebSocket client, playing an ACP client with no `fs` and no
/// terminal that allows every permission request.
struct Client {
    ws: Ws,
    next: u64,
    /// Bytes of text frames sent and received.
    moved: u64,
    /// The ACP version spoken.
    protocol: u16,
}

/// The members of an incoming message the client acts on.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

impl Client {
    async fn connect(url: &str, token: &str, protocol: u16) -> Result<Self> {
        let mut request = url.into_client_request()?;
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse()?);
        let config = WebSocketConfig::default()
            .max_message_size(Some(64 << 20))
            .max_frame_size(Some(64 << 20));
        let connect = tokio_tungstenite::connect_async_with_config(request, Some(config), true);
        let (ws, _) = tokio::time::timeout(STEP, connect)
            .await
            .map_err(|_| "no WebSocket upgrade within 60 s")??;
        Ok(Self {
            ws,
            next: 0,
            moved: 0,
            protocol,
        })
    }

    async fn send(&mut self, text: String) -> Result<()> {
        self.moved += text.len() as u64;
        tokio::time::timeout(STEP, self.ws.send(Message::text(text)))
            .await
            .map_err(|_| "a send took over 60 s")??;
        Ok(())
    }

    /// Sends a request and waits for its answer (its `result`), answering
    /// the agent's requests on the way.
    async fn call(&mut self, method: &str, params: &str) -> Result<String> {
        self.next += 1;
        let id = self.next;
        self.send(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))
        .await?;
        let want = id.to_string();
        self.read_until(method, |head| match (&head.id, &head.method) {
            (Some(got), None) if got.get() == want => Some(match head.error {
                Some(error) => Err(format!("{method}: {}", error.get()).into()),
                None => Ok(head.result.map(|r| r.get().to_owned()).unwrap_or_default()),
            }),
            _ => None,
        })
        .await
    }

    /// v2: reads until the idle `state_update` that ends a turn; its
    /// `stopReason`.
    async fn until_idle(&mut self) -> Result<String> {
        #[derive(Deserialize)]
        struct State<'a> {
            #[serde(borrow)]
            update: Update<'a>,
        }
        #[derive(Deserialize)]
        struct Update<'a> {
            #[serde(rename = "sessionUpdate", borrow)]
            kind: Cow<'a, str>,
            #[serde(borrow)]
            state: Option<Cow<'a, str>>,
            #[serde(rename = "stopReason", borrow)]
            stop: Option<Cow<'a, str>>,
        }
        self.read_until("the idle state", |head| {
            let params = head.params.filter(|p| p.get().len() < 1024)?;
            let state: State<'_> = serde_json::from_str(params.get()).ok()?;
            let idle = state.update.kind == "state_update"
                && state.update.state.as_deref() == Some("idle");
            idle.then(|| Ok(state.update.stop.unwrap_or_default().into_owned()))
        })
        .await
    }

    /// Reads messages, answering the agent's requests, until `done` says
    /// one is what `what` waits for.
    async fn read_until<T>(
        &mut self,
        what: &str,
        mut done: impl FnMut(&Head<'_>) -> Option<Result<T>>,
    ) -> Result<T> {
        loop {
            let message = tokio::time::timeout(STEP, self.ws.next())
                .await
                .map_err(|_| format!("no {what} within 60 s"))?
                .ok_or_else(|| format!("connection closed before {what}"))??;
            let Message::Text(text) = message else {
                if let Message::Close(frame) = message {
                    return Err(format!("closed before {what}: {frame:?}").into());
                }
                continue;
            };
            self.moved += text.len() as u64;
            let head: Head<'_> = serde_json::from_str(&text)?;
            if let Some(result) = done(&head) {
                return result;
            }
            if let (Some(asked), Some(what)) = (head.id, head.method) {
                let reply = if what == "session/request_permission" {
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{{"outcome":{{"outcome":"selected","optionId":"proceed_once"}}}}}}"#,
                        asked.get()
                    )
                } else {
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32601,"message":"not offered"}}}}"#,
                        asked.get()
                    )
                };
                self.send(reply).await?;
            }
        }
    }

    /// `initialize` and `session/new`: the session's id.
    async fn open_session(&mut self) -> Result<String> {
        let init = match self.protocol {
            1 => r#"{"protocolVersion":1,"clientCapabilities":{}}"#,
            _ => {
                r#"{"protocolVersion":2,"capabilities":{},"info":{"name":"load_bench","version":"1"}}"#
            }
        };
        self.call("initialize", init).await?;
        let result = self
            .call("session/new", r#"{"cwd":"/tmp","mcpServers":[]}"#)
            .await?;
        #[derive(Deserialize)]
        struct New {
            #[serde(rename = "sessionId")]
            session: String,
        }
        Ok(serde_json::from_str::<New>(&result)?.session)
    }

    /// One turn with a prompt of `text`; checks it ended `end_turn`.
    async fn turn(&mut self, session: &str, text: &str) -> Result<()> {
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        let mut result = self.call("session/prompt", &params.to_string()).await?;
        if self.protocol == 2 {
            result = self.until_idle().await?;
        }
        if !result.contains("end_turn") {
            return Err(format!("a turn ended {result}").into());
        }
        Ok(())
    }

    async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.ws.close(None)).await;
    }
}

/// Scrapes `/metrics` at `addr` once a second until `stop`; how many
/// scrapes answered `200`.
async fn scrape(addr: SocketAddr, mut stop: watch::Receiver<bool>) -> Result<usize> {
    let mut scrapes = 0;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => return Ok(scrapes),
        }
        let get = async {
            let mut s = TcpStream::connect(addr).await?;
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .await?;
            let mut body = Vec::new();
            s.read_to_end(&mut body).await?;
            Ok::<_, std::io::Error>(body)
        };
        let body = tokio::time::timeout(STEP, get)
            .await
            .map_err(|_| "a scrape took over 60 s")??;
        if !body.starts_with(b"HTTP/1.1 200") {
            return Err(format!("/metrics: {}", String::from_utf8_lossy(&body)).into());
        }
        scrapes += 1;
    }
}

/// Runs `work` against `server`, with `/metrics` scraped meanwhile when
/// it is served.
async fn with_scraper<T>(
    server: &Server,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let Some(addr) = server.metrics else {
        return work.await;
    };
    let (stop, stopped) = watch::channel(false);
    let scraper = tokio::spawn(scrape(addr, stopped));
    let out = work.await;
    let _ = stop.send(true);
    let scrapes = scraper.await??;
    eprintln!("  /metrics scraped {scrapes} times");
    out
}

/// Which way the relay run's long lines go.
#[derive(Debug, Clone, Copy)]
enum Way {
    ToClient,
    ToAgent,
}

/// The server's CPU per MB moved for `turns` turns each moving one long
/// line `way`.
async fn relay_run(setup: &Setup, kind: Kind, way: Way, run: usize) -> Result<f64> {
    let a = &setup.args;
    let agent_args = match way {
        Way::ToClient => vec!["--big-bytes".to_owned(), a.line_bytes.to_string()],
        Way::ToAgent => Vec::new(),
    };
    let server = setup.start(kind, &agent_args, run)?;
    let long_text = long_text(a.line_bytes);
    let work = async {
        let mut client = Client::connect(&server.url, &setup.tokens[0], a.protocol).await?;
        let session = client.open_session().await?;
        client.moved = 0;
        let before = cpu_time(server.pid())?;
        for _ in 0..a.relay_turns {
            let text = match way {
                Way::ToClient => "list the files",
                Way::ToAgent => &long_text,
            };
            client.turn(&session, text).await?;
        }
        let cpu = cpu_time(server.pid())? - before;
        let moved = client.moved;
        client.close().await;
        Ok(cpu.as_secs_f64() * 1e3 / (moved as f64 / 1e6))
    };
    with_scraper(&server, work).await
}

/// A prompt's text of `bytes` bytes: lines of 79 letters and a newline.
fn long_text(bytes: usize) -> String {
    let line = format!(
        "{}\n",
        "abcdefghijklmnopqrstuvwxyz0123456789".repeat(3)[..79].to_owned()
    );
    line.repeat(bytes / 80 + 1)[..bytes].to_owned()
}

/// What one load run measured.
#[derive(Debug, Clone, Copy, Default)]
struct Load {
    /// Server CPU per user to connect and start (ms).
    start: f64,
    /// Server CPU per turn, turns only (ms).
    turn: f64,
    /// Server CPU per turn, the starts included (ms).
    turn_with_start: f64,
    /// Peak RSS (MiB).
    rss: f64,
    /// The share of the CPU spent in the kernel (%).
    system: f64,
    /// Wall time of both phases (s).
    wall: f64,
}

async fn load_run(setup: &Setup, kind: Kind, run: usize) -> Result<Load> {
    let a = &setup.args;
    let server = setup.start(kind, &[], run)?;
    let work = async {
        let pid = server.pid();
        let t0 = cpu_time(pid)?;
        let split0 = user_system_ticks(pid)?;
        let w0 = Instant::now();
        let mut starting = JoinSet::new();
        for token in setup.tokens.iter().take(a.users) {
            let (url, token, protocol) = (server.url.clone(), token.clone(), a.protocol);
            starting.spawn(async move {
                let mut client = Client::connect(&url, &token, protocol).await?;
                let session = client.open_session().await?;
                Ok::<_, Error>((client, session))
            });
        }
        let opened = join_all(starting).await?;
        let t1 = cpu_time(pid)?;
        let mut turning = JoinSet::new();
        let turns = a.turns;
        for (mut client, session) in opened {
            turning.spawn(async move {
                for n in 0..turns {
                    client
                        .turn(&session, &format!("turn {n}: list the files"))
                        .await?;
                }
                Ok::<_, Error>(client)
            });
        }
        let clients = join_all(turning).await?;
        let t2 = cpu_time(pid)?;
        let split2 = user_system_ticks(pid)?;
        let wall = w0.elapsed().as_secs_f64();
        let (user, system) = (split2.0 - split0.0, split2.1 - split0.1);
        let rss = peak_rss(pid)? as f64 / (1 << 20) as f64;
        for client in clients {
            client.close().await;
        }
        let users = a.users as f64;
        let all_turns = (a.users * a.turns) as f64;
        Ok(Load {
            start: (t1 - t0).as_secs_f64() * 1e3 / users,
            turn: (t2 - t1).as_secs_f64() * 1e3 / all_turns,
            turn_with_start: (t2 - t0).as_secs_f64() * 1e3 / all_turns,
            rss,
            system: system as f64 * 100.0 / (user + system).max(1) as f64,
            wall,
        })
    };
    with_scraper(&server, work).await
}

/// Every task's value, or the first error; at most [`PHASE`].
async fn join_all<T: 'static>(mut set: JoinSet<Result<T>>) -> Result<Vec<T>> {
    let all = async {
        let mut out = Vec::new();
        while let Some(joined) = set.join_next().await {
            out.push(joined??);
        }
        Ok::<_, Error>(out)
    };
    tokio::time::timeout(PHASE, all)
        .await
        .map_err(|_| "a load phase took over 300 s")?
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median of the ratios of `runs` to `anchors`, run by run: the runs
/// of one rep are next to each other in time, so a change in the host's
/// speed over the bench (a shared VM's neighbours) moves both sides of
/// each ratio alike.
fn median_ratio(runs: &[f64], anchors: &[f64]) -> f64 {
    median(runs.iter().zip(anchors).map(|(r, a)| r / a).collect())
}

/// Raises this process's open-file limit to its hard limit (the servers
/// inherit it: 300 connections and their agents' pipes).
fn raise_nofile() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with a valid pointer to an rlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    raise_nofile();
    match bench(args).await {
        Ok(table) => {
            print!("{table}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("load_bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn bench(args: Args) -> Result<String> {
    let setup = Setup::new(args)?;
    let a = &setup.args;
    let kinds = kinds(a);
    let mut run = 0;
    let mut relay: Vec<[Vec<f64>; 2]> = vec![Default::default(); kinds.len()];
    let relay_reps = if a.only.as_deref() == Some("load") {
        0
    } else {
        a.relay_reps
    };
    let load_reps = if a.only.as_deref() == Some("relay") {
        0
    } else {
        a.load_reps
    };
    for rep in 0..relay_reps {
        for (k, kind) in kinds.iter().enumerate() {
            for (w, way) in [Way::ToClient, Way::ToAgent].into_iter().enumerate() {
                run += 1;
                let per_mb = relay_run(&setup, *kind, way, run).await?;
                eprintln!("relay {rep} {kind:?} {way:?}: {per_mb:.3} ms/MB");
                relay[k][w].push(per_mb);
            }
        }
    }
    // Build against build leaves out the second anchor.
    let with_defaults = a.against.is_none();
    let mut load: Vec<Vec<Load>> = vec![Vec::new(); kinds.len()];
    let mut load_defaults: Vec<Load> = Vec::new();
    for rep in 0..load_reps {
        for (k, kind) in kinds.iter().enumerate() {
            run += 1;
            let l = load_run(&setup, *kind, run).await?;
            eprintln!("load {rep} {kind:?}: {l:?}");
            load[k].push(l);
        }
        if with_defaults {
            run += 1;
            let l = load_run(&setup, Kind::PlainDefaults, run).await?;
            eprintln!("load {rep} PlainDefaults: {l:?}");
            load_defaults.push(l);
        }
    }
    // Each row: the runs of each server (the anchor first), rep by rep.
    let of = |runs: &[Load], f: fn(&Load) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
    if load_reps > 0 {
        let walls: Vec<f64> = load
            .iter()
            .map(|runs| median(of(runs, |l| l.wall)))
            .collect();
        eprintln!("load wall time, median (s): {kinds:?} {walls:?}");
    }
    let relay_way = |w: usize| relay.iter().map(|ways| ways[w].clone()).collect::<Vec<_>>();
    let load_by = |f: fn(&Load) -> f64| load.iter().map(|runs| of(runs, f)).collect::<Vec<_>>();
    let against_defaults = |f: fn(&Load) -> f64| {
        std::iter::once(of(&load_defaults, f))
            .chain(load[1..].iter().map(|runs| of(runs, f)))
            .collect::<Vec<_>>()
    };
    let mb = a.line_bytes as f64 / 1e6;
    // The wall time of each load run (client, server and agents sharing
    // the machine) is on stderr only: the table keeps to the server.
    let mut rows: Vec<(String, Vec<Vec<f64>>)> = vec![
        (
            format!(
                "relay, agent to client: CPU ms per MB ({} turns, {mb} MB lines)",
                a.relay_turns
            ),
            relay_way(0),
        ),
        (
            format!(
                "relay, client to agent: CPU ms per MB ({} turns, {mb} MB lines)",
                a.relay_turns
            ),
            relay_way(1),
        ),
        (
            format!(
                "load: CPU ms per user to connect and start its agent ({} users)",
                a.users
            ),
            load_by(|l| l.start),
        ),
        (
            format!("load: CPU ms per turn ({} turns each)", a.turns),
            load_by(|l| l.turn),
        ),
        (
            "load: CPU ms per turn, agent start included".to_owned(),
            load_by(|l| l.turn_with_start),
        ),
        ("load: peak RSS (MiB)".to_owned(), load_by(|l| l.rss)),
        (
            "load: share of that CPU in the kernel (%)".to_owned(),
            load_by(|l| l.system),
        ),
    ];
    if with_defaults {
        // The same bridge runs against the second anchor: the plain relay
        // with the stack's default buffers.
        rows.extend([
            (
                "load, against the plain relay with the stack's default buffers (128 KiB reads): CPU ms per turn, agent start included".to_owned(),
                against_defaults(|l| l.turn_with_start),
            ),
            (
                "load, against the plain relay with the stack's default buffers (128 KiB reads): peak RSS (MiB)".to_owned(),
                against_defaults(|l| l.rss),
            ),
        ]);
    }
    let mut table = String::from("| figure | plain relay |");
    let mut rule = String::from("|---|---:|");
    for kind in &kinds[1..] {
        table.push_str(&format!(" {} | ratio |", label(*kind)));
        rule.push_str("---:|---:|");
    }
    if with_defaults {
        table.push('\n');
    } else {
        table.push_str(" acp-bridge against the `--against` build |\n");
        rule.push_str("---:|");
    }
    table.push_str(&rule);
    table.push('\n');
    for (name, runs) in rows {
        let Some((anchor, servers)) = runs.split_first() else {
            continue;
        };
        if anchor.is_empty() {
            continue;
        }
        table.push_str(&format!("| {name} | {:.3} |", median(anchor.clone())));
        for runs in servers {
            table.push_str(&format!(
                " {:.3} | {:.2}x |",
                median(runs.clone()),
                median_ratio(runs, anchor)
            ));
        }
        if let (false, [bridge, other]) = (with_defaults, servers) {
            table.push_str(&format!(" {:.2}x |", median_ratio(bridge, other)));
        }
        table.push('\n');
    }
    let confinement = if setup.unconfined {
        "unconfined (`--unconfined`: this host cannot confine them)"
    } else {
        "confined as the server does by default (Landlock, a PID namespace, the process and memory limits)"
    };
    let last = if with_defaults {
        "the last two rows put the same bridge runs against it with tokio-tungstenite's defaults (128 KiB reads), its own load runs beside the others'"
    } else {
        "the last column is the median of the ratios of the two builds' runs of one rep"
    };
    table.push_str(&format!(
        "\nServer CPU is the server process's own (its threads, not its agents'), the median of {relay_reps} relay runs and {load_reps} load runs, each on a fresh server; a ratio is the median of the ratios of the runs of one rep (run one after the other). The bridge's agents: {confinement}; the plain relay's: plain child processes. The plain relay's WebSocket buffers are the server's (8 KiB reads, 128 KiB of frames buffered); {last}. MB: 10^6 bytes of text frames, both ways.\n"
    ));
    Ok(table)
}
