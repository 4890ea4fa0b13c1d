//! A scripted ACP agent on stdio, deterministic, no network: the default
//! agent of `acp-client` and the WebSocket bridge, and a peer for other ACP
//! clients' tests.
//!
//! ```sh
//! acp-mock-agent                      # speak ACP on stdin/stdout
//! acp-mock-agent --big-bytes 1000000 --delay-ms 200
//! acp-mock-agent --persist            # sessions kept in $HOME, loadable after a restart
//! acp-mock-agent --protocol 2         # speak ACP v2 (only)
//! acp-mock-agent --own-write          # also write OWN.md in the session's cwd itself
//! acp-mock-agent --protocol 2 --cancellable-tool --permission-timeout-ms 200
//! ```
//!
//! Every prompt gets the same turn (see `acp_bridge::mock_agent`): thoughts, message chunks, a plan, tool calls with
//! Gemini-style titles, permission requests, `fs/read_text_file` and
//! `fs/write_text_file`, and optionally a tool output of `--big-bytes N`
//! bytes; `session/cancel` ends it with `cancelled`. With `--protocol 2`
//! the turn is v2's (see `acp_bridge::mock_agent::v2`), and its sessions
//! saved with `--persist` in a directory of their own
//! (`$HOME/.acp-mock-agent/sessions-v2`).

use std::process::ExitCode;
use std::time::Duration;

use acp_bridge::mock_agent;
use clap::Parser;

/// A scripted ACP agent on stdio (deterministic, no network).
#[derive(Parser, Debug)]
#[command(name = "acp-mock-agent", version)]
struct Args {
    /// Add a tool call with N bytes of output
    #[arg(long, value_name = "N", default_value_t = 0)]
    big_bytes: usize,
    /// Pause between steps (milliseconds)
    #[arg(long, value_name = "MS", default_value_t = 0)]
    delay_ms: u64,
    /// Save sessions in $HOME/.acp-mock-agent/sessions, as real agents
    /// keep theirs, and load them at start (`session/load` after a restart)
    #[arg(long, conflicts_with = "state_dir")]
    persist: bool,
    /// Save sessions in DIR and load them at start
    #[arg(long, value_name = "DIR")]
    state_dir: Option<std::path::PathBuf>,
    /// The ACP version spoken: 1, or 2 (the v2 draft, and only v2)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=2))]
    protocol: u16,
    /// Take MCP servers only as stdio servers (no `mcpCapabilities.acp`),
    /// as the agents of today
    #[arg(long)]
    no_mcp_over_acp: bool,
    /// Also write OWN.md in the session's directory itself (not through
    /// the client's fs/*), reported as a tool call with its path
    #[arg(long)]
    own_write: bool,
    /// (v2) Add a tool call that advertises `capabilities.cancel` and runs
    /// until `tool_call/cancel`, or MS (default 300)
    #[arg(long, value_name = "MS", num_args = 0..=1, default_missing_value = "300")]
    cancellable_tool: Option<u64>,
    /// (v2) Withdraw a permission request unanswered after MS
    /// (`$/cancel_request`, as an agent's own timeout does)
    #[arg(long, value_name = "MS")]
    permission_timeout_ms: Option<u64>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if args.persist && mock_agent::home_state_dir().is_none() {
        eprintln!("acp-mock-agent: --persist needs HOME (or give --state-dir DIR)");
        return ExitCode::FAILURE;
    }
    let options = mock_agent::Options {
        big_bytes: args.big_bytes,
        step_delay: Duration::from_millis(args.delay_ms),
        state_dir: match (args.persist, args.protocol) {
            (true, 2) => mock_agent::home_state_dir().map(|d| d.with_file_name("sessions-v2")),
            (true, _) => mock_agent::home_state_dir(),
            (false, _) => args.state_dir,
        },
        v2: args.protocol == 2,
        no_mcp_over_acp: args.no_mcp_over_acp,
        own_write: args.own_write,
        cancellable_tool: args.cancellable_tool.map(Duration::from_millis),
        permission_timeout: args.permission_timeout_ms.map(Duration::from_millis),
        ..mock_agent::Options::default()
    };
    match mock_agent::serve(tokio::io::stdin(), tokio::io::stdout(), options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-mock-agent: {e}");
            ExitCode::FAILURE
        }
    }
}
