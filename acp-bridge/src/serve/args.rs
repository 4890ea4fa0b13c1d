//! `acp-bridge`'s arguments (clap), their defaults read from
//! [`ServerConfig::default`], and what they become: the listener's, the
//! core's and the agent processes' settings ([`Config`]), checked.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use acp_codec::remote::{PoolMode, ServerConfig};
use clap::Parser;

use super::access::{Access, Auth, Listen};
use super::door::DoorLimits;
use super::driver::{Processes, LOG_LIMIT};
use super::log;
use crate::{tls, users};

/// The bridge's arguments (each also read from its environment variable).
#[derive(Parser, Debug)]
#[command(
    name = "acp-bridge",
    version,
    about = "ACP's remote transport for an agent on stdio",
    long_about = "ACP's Streamable HTTP & WebSocket transport on /acp for agents on stdio: \
                  many clients sharing one agent process or, with a token file, one \
                  confined agent process per user. Binds 127.0.0.1 unless given a token. \
                  What the server does, rule by rule: acp-bridge/README.md.",
    after_help = "Examples:\n  \
                  acp-bridge                                # the built-in mock agent, ws://127.0.0.1:4444/acp\n  \
                  GEMINI_MODEL=gemini-2.5-flash acp-bridge --gemini\n  \
                  acp-bridge --agent \"python3 my_agent.py\" --port 0\n  \
                  acp-bridge --token-file tokens.json       # a team: one agent per user\n  \
                  acp-bridge --host 0.0.0.0 --port 8443 --tls-cert fullchain.pem --tls-key key.pem  # token from GEMINI_BRIDGE_TOKEN\n  \
                  curl http://127.0.0.1:4444/health         # ok"
)]
pub struct Args {
    /// Port to listen on (0: any free port).
    #[arg(long, env = "GEMINI_PORT", default_value_t = 4444)]
    pub port: u16,
    /// Address to listen on; other than loopback needs a token.
    #[arg(long, env = "GEMINI_BRIDGE_HOST", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Bearer token every client must present (one user).
    #[arg(long, env = "GEMINI_BRIDGE_TOKEN", conflicts_with = "token_file")]
    pub token: Option<String>,
    /// A JSON file of tokens and their users (many users; re-read on SIGHUP).
    #[arg(long, env = "GEMINI_BRIDGE_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// Most connections of one user of the token file.
    #[arg(long, default_value_t = core_default().max_user_connections)]
    pub max_user_connections: usize,
    /// Most sessions one user holds open at once.
    #[arg(long, default_value_t = core_default().max_user_sessions)]
    pub max_user_sessions: usize,
    /// Most bytes queued, unsent, for all of one user's connections.
    #[arg(long, default_value_t = core_default().max_user_buffered_bytes, value_parser = at_least_one)]
    pub max_user_buffered_bytes: usize,
    /// TLS certificate chain (PEM, leaf first).
    #[arg(long, env = "GEMINI_BRIDGE_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, env = "GEMINI_BRIDGE_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// An Origin browsers may connect from (repeatable).
    #[arg(
        long = "allow-origin",
        env = "GEMINI_BRIDGE_ORIGINS",
        value_delimiter = ','
    )]
    pub origins: Vec<String>,
    /// Largest message either way (bytes).
    #[arg(long, env = "GEMINI_BRIDGE_MAX_MESSAGE_BYTES", default_value_t = core_default().max_message,
          value_parser = at_least_one)]
    pub max_message_bytes: usize,
    /// The agent command: words split on whitespace, '…' and "…" quoting.
    #[arg(long, env = "GEMINI_BRIDGE_AGENT", conflicts_with = "gemini")]
    pub agent: Option<String>,
    /// Run `gemini --acp` (with `GEMINI_MODEL`, `GEMINI_APPROVAL_MODE`).
    #[arg(long)]
    pub gemini: bool,
    /// Arguments for the built-in mock agent (e.g. `--big-bytes N`).
    #[arg(long, allow_hyphen_values = true)]
    pub mock_args: Option<String>,
    /// Directory of gemini-acp.log (and, with a token file, of each user
    /// agent's gemini-acp.USER.log).
    #[arg(long, env = "GEMINI_BRIDGE_LOG_DIR", default_value = ".")]
    pub log_dir: PathBuf,
    /// The lines on stderr: `human` (one line a message) or `json` (one
    /// JSON object a line).
    #[arg(long, value_enum, default_value = "human")]
    pub log_format: log::Format,
    /// The least severe lines written to stderr: `off`, `error`, `warn`
    /// (refusals), `info` (connections, turns, agents) or `debug`.
    #[arg(long, value_enum, default_value = "info")]
    pub log_level: log::Level,
    /// Also serve `/metrics` (Prometheus text) with no token on this
    /// address, which must be loopback (`127.0.0.1:9464`); `/metrics` on
    /// the main listener needs the same token as `/acp`.
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<SocketAddr>,
    /// With a token file: where each user's agent gets its own HOME
    /// (USER/home) and working directory (USER/work).
    #[arg(long, env = "GEMINI_BRIDGE_STATE_DIR", default_value = "agents")]
    pub state_dir: PathBuf,
    /// With a token file: stop a user's agent after this many seconds with
    /// no connection and no message.
    #[arg(long, default_value_t = core_default().agent_idle.as_secs(), value_parser = at_least_one_u64)]
    pub agent_idle_secs: u64,
    /// With a token file: most user agent processes at once (past it, the
    /// one without a connection the longest is stopped to make room).
    #[arg(long, default_value_t = core_default().max_agents, value_parser = at_least_one)]
    pub max_agents: usize,
    /// A client that takes longer to accept one message is dropped (ms).
    #[arg(long, default_value_t = millis(core_default().slow_client))]
    pub slow_client_ms: u64,
    /// Most Streamable HTTP connections at once.
    #[arg(long, default_value_t = core_default().max_http_connections)]
    pub max_http_connections: usize,
    /// Most bytes queued for one Streamable HTTP connection's streams.
    #[arg(long, default_value_t = core_default().max_buffered_bytes)]
    pub max_buffered_bytes: usize,
    /// A connection not authenticated (TLS handshake, request head, token)
    /// within this many seconds is closed.
    #[arg(long, default_value_t = 10, value_parser = at_least_one_u64)]
    pub handshake_secs: u64,
    /// A WebSocket client that sends no message for this many seconds
    /// after the upgrade is closed (1008).
    #[arg(long, default_value_t = core_default().first_message.as_secs(), value_parser = at_least_one_u64)]
    pub first_message_secs: u64,
    /// Most connections not yet authenticated, in all; more are closed at
    /// once.
    #[arg(long, default_value_t = 1024, value_parser = at_least_one)]
    pub max_unauthenticated: usize,
    /// Most connections not yet authenticated from one address.
    #[arg(long, default_value_t = 64, value_parser = at_least_one)]
    pub max_unauthenticated_per_address: usize,
    /// One agent process for everyone (`shared`) or one per user
    /// (`per-user`); the default is `per-user` with a token file, else
    /// `shared`.
    #[arg(long, value_parser = ["shared", "per-user"])]
    pub agent_pool: Option<String>,
    /// Bytes kept per session whose client left, for the client that
    /// reattaches it with session/load or session/resume (0: none); also
    /// the budget of each stream's log for resuming (an SSE stream
    /// reopened with Last-Event-ID, a WebSocket client that asked).
    #[arg(long, env = "GEMINI_BRIDGE_REPLAY_BYTES", default_value_t = core_default().replay_bytes)]
    pub replay_bytes: usize,
    /// A path every confined agent may read and execute (repeatable).
    #[arg(long = "agent-ro", value_name = "PATH")]
    pub agent_ro: Vec<PathBuf>,
    /// A path every confined agent may read and write (repeatable).
    #[arg(long = "agent-rw", value_name = "PATH")]
    pub agent_rw: Vec<PathBuf>,
    /// A variable of the bridge's environment agents get, beyond PATH,
    /// LANG and the like (repeatable).
    #[arg(long = "agent-env", value_name = "NAME")]
    pub agent_env: Vec<String>,
    /// Confined agents may open TCP connections to these ports only
    /// (comma-separated; Landlock ABI 4, Linux 6.7).
    #[arg(long = "agent-net", value_name = "PORTS", value_delimiter = ',')]
    pub agent_net: Option<Vec<u16>>,
    /// Confine the shared agent too (without a token file); refused when
    /// its working directory, HOME or TMPDIR holds the bridge's log or
    /// token file (pass --log-dir outside them).
    #[arg(long, conflicts_with = "unconfined")]
    pub confine: bool,
    /// Turn Landlock confinement off for every agent, everywhere, even
    /// where the kernel could confine them (logged loudly); process trees
    /// and limits still hold.
    #[arg(long, env = "GEMINI_BRIDGE_UNCONFINED")]
    pub unconfined: bool,
    /// Most processes and threads of one agent's whole tree (a user's
    /// maxProcesses in the token file wins).
    #[arg(long, value_name = "N", default_value_t = crate::limits::DEFAULT_MAX_PROCESSES,
          value_parser = at_least_one_u64)]
    pub agent_max_processes: u64,
    /// Most memory of one agent's whole tree, in bytes with an optional
    /// K, M or G suffix (a user's maxMemory in the token file wins).
    #[arg(long, value_name = "BYTES", default_value = "4G",
          value_parser = crate::limits::parse_bytes)]
    pub agent_max_memory: u64,
    /// Print what this host enforces, right by right (Landlock rights,
    /// PID namespaces, limits) and exit 0 when agents are fully confined,
    /// 3 when partly, 1 when not at all.
    #[arg(long)]
    pub check_confinement: bool,
}

/// The core's defaults, which the flags' defaults are (one place for
/// each number: [`ServerConfig::default`]).
fn core_default() -> ServerConfig {
    ServerConfig::default()
}

/// `d` in whole milliseconds, for a flag in ms.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn at_least_one(v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn at_least_one_u64(v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Everything the bridge runs with: the listener's, the core's and the
/// processes' settings.
pub struct Config {
    /// The address `/acp` listens on.
    pub bind: SocketAddr,
    /// The address of the token-less `/metrics` listener, if any.
    pub metrics: Option<SocketAddr>,
    /// What the listener runs with.
    pub listen: Listen,
    /// The core's configuration.
    pub core: ServerConfig,
    /// Where and how agent processes run.
    pub processes: Processes,
}

impl Args {
    /// The configuration, and a warning to log loudly at start.
    ///
    /// # Errors
    ///
    /// What is wrong with the arguments, as the line `acp-bridge:` prints
    /// before it exits 2: a non-loopback address without a token, TLS
    /// without a token or half configured, an unreadable token file or
    /// certificate, a directory that cannot be created, an agent command
    /// that does not split, confinement refused.
    pub fn into_config(self) -> Result<(Config, Option<String>), String> {
        if let Some(addr) = self.metrics_addr {
            if !addr.ip().is_loopback() {
                return Err(format!(
                    "--metrics-addr {addr} is not loopback: that listener has no token; scrape /metrics on the main listener with a token instead"
                ));
            }
        }
        std::fs::create_dir_all(&self.log_dir).map_err(|e| {
            format!(
                "cannot create the log directory {}: {e}",
                self.log_dir.display()
            )
        })?;
        let token = self.token.filter(|t| !t.is_empty());
        let auth = match (&self.token_file, token) {
            (Some(path), _) => Auth::Users(users::TokenFile::load(path)?),
            (None, Some(token)) => Auth::Token(token),
            (None, None) => Auth::Open,
        };
        let guarded = !matches!(auth, Auth::Open);
        if !self.host.is_loopback() && !guarded {
            return Err(format!(
                "binding {} (not loopback) needs a token: --token T, GEMINI_BRIDGE_TOKEN or --token-file FILE",
                self.host
            ));
        }
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) if guarded => {
                Some(tls::server_config(cert, key).map_err(|e| format!("tls: {e}"))?)
            }
            (Some(_), Some(_)) => return Err(
                "serving TLS needs a token: --token T, GEMINI_BRIDGE_TOKEN or --token-file FILE"
                    .to_owned(),
            ),
            (Some(_), None) => return Err("--tls-cert needs --tls-key".to_owned()),
            (None, Some(_)) => return Err("--tls-key needs --tls-cert".to_owned()),
            (None, None) => None,
        };
        let pool = match (self.agent_pool.as_deref(), &auth) {
            (Some("per-user"), _) | (None, Auth::Users(_)) => PoolMode::PerUser,
            _ => PoolMode::Shared,
        };
        let mut hash_key = [0u8; 16];
        getrandom::fill(&mut hash_key).map_err(|e| format!("no random source: {e}"))?;
        let door = DoorLimits {
            handshake: Duration::from_secs(self.handshake_secs),
            first_message: Duration::from_secs(self.first_message_secs),
            max_unauthenticated: self.max_unauthenticated,
            max_per_address: self.max_unauthenticated_per_address,
        };
        let mut core = ServerConfig::new();
        core.pool = pool;
        core.max_agents = self.max_agents;
        core.agent_idle = Duration::from_secs(self.agent_idle_secs);
        core.max_message = self.max_message_bytes;
        core.max_user_connections = self.max_user_connections;
        core.max_user_sessions = self.max_user_sessions;
        core.max_user_buffered_bytes = self.max_user_buffered_bytes;
        core.max_buffered_bytes = self.max_buffered_bytes;
        core.slow_client = Duration::from_millis(self.slow_client_ms);
        core.replay_bytes = self.replay_bytes;
        core.max_http_connections = self.max_http_connections;
        core.first_message = door.first_message;
        core.hash_key = hash_key;
        let agent = agent_command(self.gemini, self.agent, self.mock_args)?;
        let mut protected = vec![("log directory".to_owned(), self.log_dir.clone())];
        if pool == PoolMode::PerUser {
            protected.push(("state directory".to_owned(), self.state_dir.clone()));
        }
        if let Some(file) = &self.token_file {
            protected.push(("token file".to_owned(), file.clone()));
        }
        let rooms = crate::room::Rooms {
            read_only: self.agent_ro,
            read_write: self.agent_rw,
            env_allow: self.agent_env,
            tcp_connect: self.agent_net,
            confine_shared: self.confine,
            unconfined: self.unconfined,
            limits: crate::limits::Limits {
                max_processes: self.agent_max_processes,
                max_memory: self.agent_max_memory,
            },
            protected,
        };
        let per_user = pool == PoolMode::PerUser;
        // The limits' mechanism first: with a delegated cgroup v2 the
        // bridge moves into its leaf now, so the check below (a child)
        // finds the controllers given to the agents' cgroups.
        let _ = crate::limits::probe();
        let warning = rooms.check(&agent, per_user)?;
        let users = match &auth {
            Auth::Users(users) => Some(users.clone()),
            _ => None,
        };
        let config = Config {
            bind: SocketAddr::new(self.host, self.port),
            metrics: self.metrics_addr,
            listen: Listen {
                access: Access {
                    auth,
                    allowed_origins: self
                        .origins
                        .into_iter()
                        .map(|o| o.trim().to_owned())
                        .filter(|o| !o.is_empty())
                        .collect(),
                },
                door,
                tls,
                max_message: self.max_message_bytes,
            },
            core,
            processes: Processes {
                command: agent,
                rooms,
                users,
                log_dir: self.log_dir,
                state_dir: self.state_dir,
                log_limit: LOG_LIMIT,
                max_line: self.max_message_bytes,
            },
        };
        Ok((config, warning))
    }
}

/// `gemini --acp`, the given command, or this program as the mock agent.
fn agent_command(
    gemini: bool,
    agent: Option<String>,
    mock_args: Option<String>,
) -> Result<Vec<String>, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if gemini {
        let mut cmd = vec!["gemini".to_owned(), "--acp".to_owned()];
        if let Some(m) = env("GEMINI_MODEL") {
            cmd.extend(["-m".to_owned(), m]);
        }
        if let Some(m) = env("GEMINI_APPROVAL_MODE") {
            cmd.extend(["--approval-mode".to_owned(), m]);
        }
        return Ok(cmd);
    }
    let words = |flag: &str, line: Option<String>| match line {
        Some(line) if !line.trim().is_empty() => {
            crate::supervisor::split_command(&line).map_err(|e| format!("{flag} {line:?}: {e}"))
        }
        _ => Ok(Vec::new()),
    };
    let agent = words("--agent", agent)?;
    if !agent.is_empty() {
        return Ok(agent);
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find this program for the mock agent: {e}"))?;
    let mut cmd = vec![
        exe.to_string_lossy().into_owned(),
        "--mock-agent".to_owned(),
    ];
    cmd.extend(words("--mock-args", mock_args)?);
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without flags the core runs with its own defaults: each flag's
    /// default reaches the field it names.
    #[test]
    fn the_flags_defaults_are_the_cores() {
        let args = Args::try_parse_from(["acp-bridge"]).unwrap();
        let (config, _) = args.into_config().unwrap();
        let mut expected = ServerConfig::default();
        expected.hash_key = config.core.hash_key;
        assert_eq!(config.core, expected);
    }
}
