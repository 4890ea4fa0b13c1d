//! The team server: ACP's Streamable HTTP & WebSocket transport on `/acp`
//! in front of agents on stdio, the I/O around `acp_codec::remote::Server`.
//! What it does for operators is in acp-bridge/README.md ("Remote
//! endpoint"); each option is in `acp-bridge --help`.
//!
//! This binary owns the sockets and the tasks: the listeners, the routes
//! (`server`), the WebSocket and Streamable HTTP readers and writers
//! (`ws`, `http`), and the start: the hidden entry points, `SIGHUP`, the
//! driver, the listener. The rest (the arguments, the access check, the
//! driver around the core, the agent processes, the MCP relay, the logs,
//! `/metrics`) is `acp_bridge::serve`.

mod http;
mod respond;
mod server;
mod ws;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use acp_bridge::serve::access::Auth;
use acp_bridge::serve::args::{Args, Config};
use acp_bridge::serve::driver::{self, Driver};
use acp_bridge::serve::{agent, log, mcp, metrics, mock};
use acp_bridge::users;
use clap::Parser;

use acp_codec::remote::PoolMode;
use server::App;

/// Re-reads the token file on each `SIGHUP`: connections stay, their users'
/// new permissions apply from their next message, a user no longer in the
/// file keeps their connections read-only.
async fn reload_on_sighup(driver: Arc<Driver>, users: Arc<users::TokenFile>) {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut hup) = signal(SignalKind::hangup()) else {
        driver.log_line("cannot watch SIGHUP: the token file will not be re-read");
        return;
    };
    while hup.recv().await.is_some() {
        match users.reload() {
            Ok((now, gone)) => {
                driver.with(|s, now_t| {
                    for who in &now {
                        s.set_permissions(&who.user, who.permissions);
                    }
                    for user in &gone {
                        s.handle_user_removed(now_t, user);
                    }
                });
                driver.log_line(&format!(
                    "token file re-read: {} tokens; users removed (read-only until they leave): {}",
                    now.len(),
                    if gone.is_empty() {
                        "none".to_owned()
                    } else {
                        gone.join(", ")
                    }
                ));
            }
            Err(e) => driver.log_line(&format!("{e}; keeping the previous users")),
        }
    }
}

fn main() -> ExitCode {
    // Both before any thread starts: the launcher and the check enter new
    // namespaces, which a multi-threaded process cannot.
    if let Some(code) = acp_bridge::supervisor::run_if_launcher() {
        return code;
    }
    if std::env::args().nth(1).as_deref() == Some("--check-confinement") {
        return acp_bridge::supervisor::check_confinement();
    }
    if std::env::args().nth(1).as_deref() == Some(mcp::RELAY_FLAG) {
        let args: Vec<String> = std::env::args().skip(2).collect();
        return mcp::run_relay(&args);
    }
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("acp-bridge: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--mock-agent") {
        args.remove(0);
        return mock::run_mock_agent(args).await;
    }
    let args = Args::parse();
    log::init(args.log_format, args.log_level);
    let (config, warning) = match args.into_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("acp-bridge: {e}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(config.bind).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("acp-bridge: cannot listen on {}: {e}", config.bind);
            return ExitCode::FAILURE;
        }
    };
    let metrics_listener = match config.metrics {
        Some(addr) => match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => {
                if let Ok(at) = l.local_addr() {
                    eprintln!("acp-bridge: metrics on http://{at}/metrics");
                }
                Some(l)
            }
            Err(e) => {
                eprintln!("acp-bridge: cannot listen on {addr} (--metrics-addr): {e}");
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    let Config {
        listen,
        core,
        processes,
        ..
    } = config;
    let shared_pool = core.pool == PoolMode::Shared;
    let driver = Driver::start(core, processes, agent::start);
    if let Some(warning) = warning {
        // On stderr and in the bridge's log.
        driver.log_line(&warning);
    }
    if let Auth::Users(users) = &listen.access.auth {
        tokio::spawn(reload_on_sighup(driver.clone(), users.clone()));
    }
    if shared_pool {
        // Accept once the shared agent is up (or failed to start), so the
        // first client is not told the agent is restarting.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !driver.with(|s, _| s.agents_settled()) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let http = Arc::new(http::Connections::default());
    let listen = Arc::new(listen);
    let metrics = Arc::new(metrics::registry(&driver, driver.first_update.clone()));
    if let Some(l) = metrics_listener {
        tokio::spawn(server::serve_metrics(l, metrics.clone()));
    }
    server::serve(
        listener,
        App {
            driver,
            http,
            listen,
            metrics,
        },
    )
    .await;
    ExitCode::SUCCESS
}
