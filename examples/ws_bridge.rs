//! A WebSocket bridge to an ACP agent: the Rust successor of seed 001's
//! `gemini-bridge.cjs` and the remote-server shape of seed 002.
//!
//! ```text
//! cargo run --example ws_bridge                          # mock agent, ws://127.0.0.1:4444
//! GEMINI_MODEL=gemini-2.5-flash cargo run --example ws_bridge -- --gemini
//! cargo run --example ws_bridge -- --agent "python3 my_agent.py" --port 0
//! curl http://127.0.0.1:4444/health                      # ok
//! ws_bridge --host 0.0.0.0 --port 8443 --tls-cert fullchain.pem --tls-key key.pem  # wss://, token from GEMINI_BRIDGE_TOKEN
//! ```
//!
//! # Wire
//!
//! One WebSocket text message is exactly one JSON-RPC message. Each message
//! from a client is decoded by the codec ([`Message::decode`]) and
//! re-encoded as one line before it reaches the agent's stdin. A message
//! holding a raw newline (pretty-printed JSON, or two messages joined by
//! `\n`) is refused with a JSON-RPC error `-32600`, never forwarded; text
//! that is not a JSON-RPC message gets the codec's error (`-32700` /
//! `-32600`); binary messages get `-32700`. Every line of the agent's stdout
//! goes out as one text message, however large (up to the size limit);
//! stdout text that is not JSON-RPC is dropped and logged.
//!
//! # Sharing one agent
//!
//! All clients share one agent process, multiplexed, not broadcast:
//!
//! - a client's request gets a bridge-unique id toward the agent; the
//!   response goes back to that client only, with the client's own id;
//! - a session belongs to the client whose `session/new` created it (or
//!   whose `session/load` / `session/resume` asked for it); the agent's
//!   `session/update` notifications and its requests
//!   (`session/request_permission`, `fs/*`, `terminal/*`) go to the owner of
//!   their `sessionId` only; a request naming another client's session is
//!   refused (`-32602`); agent notifications without a `sessionId` go to
//!   every client, those whose `sessionId` is not a string to none;
//! - a client that disconnects has its sessions cancelled (`session/cancel`),
//!   the agent's pending permission requests to it answered `cancelled` and
//!   its other requests answered with an error, so the agent never waits on
//!   it; the other clients are not affected. A client too slow to take a
//!   message for `--slow-client-ms` (default 30 s) is disconnected (close
//!   1008), so it cannot stall the agent for everyone.
//!
//! Clients share what ACP makes agent-wide: the last `initialize` sets the
//! client capabilities the agent sees, and `authenticate` is global.
//!
//! # Agent lifecycle
//!
//! The agent runs as a child process. When it exits, every request still
//! waiting on it is answered with `-32603`, and each client gets the
//! notification `_bridge/agent_exited` (`status`, `restartInMs`,
//! `lostSessions`); the bridge restarts it after a backoff (100 ms doubling
//! to 10 s, reset after 30 s of uptime) and sends `_bridge/agent_started`
//! (`pid`, `restarts`). Sessions do not survive a restart: clients
//! `initialize` and open a session again. The agent's stderr and the
//! bridge's events go to `gemini-acp.log` in `--log-dir` (default `.`),
//! rotated to `gemini-acp.log.old` once past 2 MiB, at startup and while
//! running.
//!
//! # Safety
//!
//! - Binds `127.0.0.1` by default. Binding elsewhere (`--host 0.0.0.0`)
//!   requires a token: the bridge refuses to start without one.
//! - TLS (`--tls-cert FILE --tls-key FILE`, PEM: the certificate chain,
//!   leaf first, and its private key): the bridge serves `wss://` and
//!   `https://…/health` directly, with rustls (no OpenSSL). TLS also
//!   requires a token. A TLS handshake must finish within 10 s. Behind a
//!   reverse proxy that terminates TLS (see `deploy/nginx/` in the
//!   repository), run the bridge on loopback without TLS, but still with a
//!   token: the proxy makes it public.
//! - Token (`--token` or `GEMINI_BRIDGE_TOKEN`): required on every
//!   connection when set, as `Authorization: Bearer TOKEN` or `?token=TOKEN`
//!   (for browsers, which cannot set headers on a WebSocket); wrong or
//!   missing gives HTTP 401. Use a URL-safe token.
//! - Origin allow-list (`--allow-origin URL`, repeatable, or
//!   `GEMINI_BRIDGE_ORIGINS` comma-separated): a request carrying an
//!   `Origin` header (every browser page does) is refused with 403 unless
//!   that exact origin is listed. The default list is empty: no web page can
//!   drive the agent unless you allow its origin. Clients that send no
//!   `Origin` (CLIs, SDKs) are not affected.
//! - Message size limit (`--max-message-bytes`, default 16 MiB): a larger
//!   client message closes the connection with code 1009; a longer agent
//!   line is skipped (its requester gets `-32603`).
//! - `GET /health` answers `200 ok`; other plain HTTP requests get 404.
//!
//! # Configuration
//!
//! | option | environment | default |
//! |---|---|---|
//! | `--port N` (0 = any free port) | `GEMINI_PORT` | 4444 |
//! | `--host ADDR` | `GEMINI_BRIDGE_HOST` | 127.0.0.1 |
//! | `--token T` | `GEMINI_BRIDGE_TOKEN` | none |
//! | `--tls-cert FILE` | `GEMINI_BRIDGE_TLS_CERT` | none (plain `ws://`) |
//! | `--tls-key FILE` | `GEMINI_BRIDGE_TLS_KEY` | none |
//! | `--allow-origin URL` | `GEMINI_BRIDGE_ORIGINS` | none |
//! | `--max-message-bytes N` | `GEMINI_BRIDGE_MAX_MESSAGE_BYTES` | 16777216 |
//! | `--agent CMD` (split on whitespace) | `GEMINI_BRIDGE_AGENT` | the built-in mock agent |
//! | `--gemini`: agent `gemini --acp` | | |
//! | | `GEMINI_MODEL` (`-m`, with `--gemini`) | Gemini's own |
//! | | `GEMINI_APPROVAL_MODE` (`--approval-mode`, with `--gemini`) | Gemini's own |
//! | `--log-dir DIR` | `GEMINI_BRIDGE_LOG_DIR` | . |
//! | `--slow-client-ms N` | | 30000 |
//! | `--mock-args "ARGS"` (for the built-in mock, e.g. `--big-bytes N`) | | none |
//!
//! The built-in mock agent is this same program re-executed with the hidden
//! flag `--mock-agent`, so it is a real child process (it can crash and be
//! restarted) with no separate build step. The bridge prints
//! `ws_bridge: listening on ws://ADDR` (`wss://ADDR` with TLS) on stderr
//! once it accepts connections.
//!
//! [`Message::decode`]: acp_codec::acp::Message::decode

#[path = "support/bridge.rs"]
mod bridge;
#[path = "support/bridge_http.rs"]
#[allow(dead_code)]
mod bridge_http;
#[path = "support/mock_agent.rs"]
mod mock_agent;
#[path = "support/tls.rs"]
mod tls;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bridge::Config;
use bridge_http::Access;

const USAGE: &str = "usage: ws_bridge [--port N] [--host ADDR] [--token T] [--tls-cert FILE --tls-key FILE] \
[--allow-origin URL]... [--max-message-bytes N] [--agent CMD | --gemini] [--mock-args ARGS] [--log-dir DIR] [--slow-client-ms N]";

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn parse_args(args: Vec<String>) -> Result<Config, String> {
    let mut port: u16 = match env("GEMINI_PORT") {
        Some(p) => p.parse().map_err(|e| format!("GEMINI_PORT {p}: {e}"))?,
        None => 4444,
    };
    let mut host: IpAddr = match env("GEMINI_BRIDGE_HOST") {
        Some(h) => h
            .parse()
            .map_err(|e| format!("GEMINI_BRIDGE_HOST {h}: {e}"))?,
        None => IpAddr::V4(Ipv4Addr::LOCALHOST),
    };
    let mut token = env("GEMINI_BRIDGE_TOKEN");
    let mut tls_cert = env("GEMINI_BRIDGE_TLS_CERT").map(PathBuf::from);
    let mut tls_key = env("GEMINI_BRIDGE_TLS_KEY").map(PathBuf::from);
    let mut origins: Vec<String> = env("GEMINI_BRIDGE_ORIGINS")
        .map(|o| {
            o.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut max_message: usize = match env("GEMINI_BRIDGE_MAX_MESSAGE_BYTES") {
        Some(n) => n
            .parse()
            .map_err(|e| format!("GEMINI_BRIDGE_MAX_MESSAGE_BYTES {n}: {e}"))?,
        None => acp_codec::limits::DEFAULT_MAX_LINE_LEN,
    };
    let mut agent: Option<Vec<String>> = env("GEMINI_BRIDGE_AGENT").map(|a| split_command(&a));
    let mut gemini = false;
    let mut mock_args: Vec<String> = Vec::new();
    let mut log_dir = PathBuf::from(env("GEMINI_BRIDGE_LOG_DIR").unwrap_or_else(|| ".".to_owned()));
    let mut slow_client = Duration::from_secs(30);
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value\n{USAGE}"));
        match a.as_str() {
            "--port" => {
                let v = value("--port")?;
                port = v.parse().map_err(|e| format!("--port {v}: {e}"))?;
            }
            "--host" => {
                let v = value("--host")?;
                host = v.parse().map_err(|e| format!("--host {v}: {e}"))?;
            }
            "--token" => token = Some(value("--token")?),
            "--tls-cert" => tls_cert = Some(PathBuf::from(value("--tls-cert")?)),
            "--tls-key" => tls_key = Some(PathBuf::from(value("--tls-key")?)),
            "--allow-origin" => origins.push(value("--allow-origin")?),
            "--max-message-bytes" => {
                let v = value("--max-message-bytes")?;
                max_message = v
                    .parse()
                    .map_err(|e| format!("--max-message-bytes {v}: {e}"))?;
            }
            "--agent" => agent = Some(split_command(&value("--agent")?)),
            "--gemini" => gemini = true,
            "--mock-args" => mock_args = split_command(&value("--mock-args")?),
            "--log-dir" => log_dir = PathBuf::from(value("--log-dir")?),
            "--slow-client-ms" => {
                let v = value("--slow-client-ms")?;
                slow_client = Duration::from_millis(
                    v.parse()
                        .map_err(|e| format!("--slow-client-ms {v}: {e}"))?,
                );
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let agent = if gemini {
        let mut cmd = vec!["gemini".to_owned(), "--acp".to_owned()];
        if let Some(m) = env("GEMINI_MODEL") {
            cmd.extend(["-m".to_owned(), m]);
        }
        if let Some(m) = env("GEMINI_APPROVAL_MODE") {
            cmd.extend(["--approval-mode".to_owned(), m]);
        }
        cmd
    } else if let Some(a) = agent.filter(|a| !a.is_empty()) {
        a
    } else {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find this program for the mock agent: {e}"))?;
        let mut cmd = vec![
            exe.to_string_lossy().into_owned(),
            "--mock-agent".to_owned(),
        ];
        cmd.extend(mock_args);
        cmd
    };
    if token.as_deref().is_some_and(str::is_empty) {
        token = None;
    }
    if !host.is_loopback() && token.is_none() {
        return Err(format!(
            "binding {host} (not loopback) needs a token: --token T or GEMINI_BRIDGE_TOKEN"
        ));
    }
    let tls = match (tls_cert, tls_key) {
        (None, None) => None,
        (Some(cert), Some(key)) => {
            if token.is_none() {
                return Err(
                    "serving TLS needs a token: --token T or GEMINI_BRIDGE_TOKEN".to_owned(),
                );
            }
            Some(tls::server_config(&cert, &key).map_err(|e| format!("tls: {e}"))?)
        }
        (Some(_), None) => return Err("--tls-cert needs --tls-key".to_owned()),
        (None, Some(_)) => return Err("--tls-key needs --tls-cert".to_owned()),
    };
    if max_message == 0 {
        return Err("--max-message-bytes must be at least 1".to_owned());
    }
    Ok(Config {
        bind: SocketAddr::new(host, port),
        access: Access {
            token,
            allowed_origins: origins,
        },
        max_message,
        tls,
        agent,
        log_dir,
        log_limit: bridge::LOG_LIMIT,
        backoff_min: Duration::from_millis(100),
        backoff_max: Duration::from_secs(10),
        slow_client,
    })
}

/// Splits a command line on whitespace (no quoting: use a wrapper script
/// for arguments with spaces).
fn split_command(cmd: &str) -> Vec<String> {
    cmd.split_whitespace().map(str::to_owned).collect()
}

/// The hidden `--mock-agent [--big-bytes N] [--delay-ms MS]` mode: the
/// built-in agent on stdio.
async fn run_mock_agent(args: Vec<String>) -> ExitCode {
    let mut options = mock_agent::Options::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let n = it.next().and_then(|v| v.parse::<u64>().ok());
        match (a.as_str(), n) {
            ("--big-bytes", Some(n)) => {
                options.big_bytes = usize::try_from(n).unwrap_or(usize::MAX)
            }
            ("--delay-ms", Some(n)) => options.step_delay = Duration::from_millis(n),
            _ => {
                eprintln!("mock agent: usage: --mock-agent [--big-bytes N] [--delay-ms MS]");
                return ExitCode::from(2);
            }
        }
    }
    match mock_agent::serve(tokio::io::stdin(), tokio::io::stdout(), options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mock agent: {e}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--mock-agent") {
        args.remove(0);
        return run_mock_agent(args).await;
    }
    let config = match parse_args(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ws_bridge: {e}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(config.bind).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("ws_bridge: cannot listen on {}: {e}", config.bind);
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = bridge::serve(listener, config).await {
        eprintln!("ws_bridge: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
