//! `acp-bridge --mock-agent [OPTIONS]`: the built-in mock agent on stdio,
//! the agent `acp-bridge` runs when given none; and, for the tests of
//! `--agent-max-processes` and `--agent-max-memory`, its greedy mode.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::mock_agent;

/// The hidden mode's arguments: `acp-bridge --mock-agent [OPTIONS]`.
#[derive(Parser, Debug)]
#[command(
    name = "acp-bridge --mock-agent",
    about = "The built-in mock agent on stdio"
)]
struct MockAgentArgs {
    /// Add a tool call with N bytes of output
    #[arg(long, value_name = "N", default_value_t = 0)]
    big_bytes: u64,
    /// Pause between steps (milliseconds)
    #[arg(long, value_name = "MS", default_value_t = 0)]
    delay_ms: u64,
    /// Take MCP servers only as stdio servers (no `mcpCapabilities.acp`)
    #[arg(long)]
    no_mcp_over_acp: bool,
    /// The ACP version spoken: 1, or 2 (the v2 draft, and only v2)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=2))]
    protocol: u16,
}

/// The hidden `--mock-agent [--big-bytes N] [--delay-ms MS] [--protocol N]` mode: the
/// built-in agent on stdio. `args` follow `--mock-agent`.
pub async fn run_mock_agent(args: Vec<String>) -> ExitCode {
    if let Some(bytes) = std::env::var(GREEDY).ok().and_then(|b| b.parse().ok()) {
        return greedy::run(bytes).await;
    }
    let name = "acp-bridge --mock-agent".to_owned();
    let args = MockAgentArgs::parse_from(std::iter::once(name).chain(args));
    let options = mock_agent::Options {
        big_bytes: usize::try_from(args.big_bytes).unwrap_or(usize::MAX),
        step_delay: Duration::from_millis(args.delay_ms),
        no_mcp_over_acp: args.no_mcp_over_acp,
        v2: args.protocol == 2,
        ..mock_agent::Options::default()
    };
    match mock_agent::serve(tokio::io::stdin(), tokio::io::stdout(), options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mock agent: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Set in the mock agent's environment (a test's token file gives it to
/// one user), the mock agent is the greedy one of `greedy`, taking this
/// many bytes: for tests of `--agent-max-processes` and
/// `--agent-max-memory` only.
const GREEDY: &str = "ACP_MOCK_GREEDY_BYTES";

/// The greedy agent: answers `initialize` and `session/new`, and on a
/// prompt starts processes (a bounded loop: at most 2000, for at most 10
/// seconds, each a `sleep 20`) until one is refused, then takes memory
/// (16 MiB at a time, touched) up to its budget. Where the limits hold, a
/// process is refused and the memory is refused or the kernel kills the
/// agent; where they do not, it takes its budget and ends the turn.
mod greedy {
    use std::io::Write;
    use std::process::{ExitCode, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::{json, Value};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// Serves stdio until it closes, taking `budget` bytes on a prompt.
    pub async fn run(budget: usize) -> ExitCode {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut out = tokio::io::stdout();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let Some(id) = msg.get("id").cloned() else {
                continue;
            };
            let answer = match msg.get("method").and_then(Value::as_str) {
                Some("initialize") => {
                    json!({"result": {"protocolVersion": 1, "agentCapabilities": {}}})
                }
                Some("session/new") => json!({"result": {"sessionId": "greedy"}}),
                Some("session/prompt") => match hog(budget) {
                    Ok(()) => json!({"result": {"stopReason": "end_turn"}}),
                    Err(why) => json!({"error": {"code": -32603, "message": why}}),
                },
                _ => json!({"error": {"code": -32601, "message": "method not found"}}),
            };
            let mut reply = json!({"jsonrpc": "2.0", "id": id});
            if let (Some(r), Some(a)) = (reply.as_object_mut(), answer.as_object()) {
                r.extend(a.clone());
            }
            let text = format!("{reply}\n");
            if out.write_all(text.as_bytes()).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
        ExitCode::SUCCESS
    }

    /// Starts processes, then takes memory; `Err` names what was refused.
    fn hog(budget: usize) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut children = Vec::new();
        let mut refused = None;
        while children.len() < 2000 && Instant::now() < deadline {
            let started = std::process::Command::new("sleep")
                .arg("20")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            match started {
                Ok(c) => children.push(c),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        let forks = match &refused {
            Some(e) => format!("process {} refused: {e}", children.len() + 1),
            None => format!("{} processes started, none refused", children.len()),
        };
        // Said before the memory step, which the kernel may end.
        let mut err = std::io::stderr();
        let _ = writeln!(err, "greedy agent: {forks}");
        let _ = err.flush();
        const CHUNK: usize = 16 << 20;
        let mut held: Vec<Vec<u8>> = Vec::new();
        let mut memory = None;
        while held.len().saturating_mul(CHUNK) < budget {
            let mut chunk = Vec::new();
            if chunk.try_reserve_exact(CHUNK).is_err() {
                memory = Some(format!(
                    "memory refused after {} MiB",
                    held.len() * (CHUNK >> 20)
                ));
                break;
            }
            chunk.resize(CHUNK, 1);
            held.push(chunk);
        }
        drop(held);
        for mut c in children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = writeln!(
            err,
            "greedy agent: {}",
            memory.as_deref().unwrap_or("all memory taken")
        );
        match (refused, memory) {
            (None, None) => Ok(()),
            (_, memory) => Err(format!(
                "greedy agent: {forks}; {}",
                memory.as_deref().unwrap_or("all memory taken")
            )),
        }
    }
}
