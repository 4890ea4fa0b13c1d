//! A scripted ACP agent on stdio, deterministic, no network: the default
//! agent of `acp_client` and the WebSocket bridge, and a peer for other ACP
//! clients' tests.
//!
//! ```sh
//! cargo run --example mock_agent                      # speak ACP on stdin/stdout
//! cargo run --example mock_agent -- --big-bytes 1000000 --delay-ms 200
//! ```
//!
//! Every prompt gets the same turn (see `support/mock_agent.rs`): thoughts,
//! message chunks, a plan, tool calls with Gemini-style titles, permission
//! requests, `fs/read_text_file` and `fs/write_text_file`, and optionally a
//! tool output of `--big-bytes N` bytes; `session/cancel` ends it with
//! `cancelled`.

#[path = "support/mock_agent.rs"]
mod mock_agent;

use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: mock_agent [--big-bytes N] [--delay-ms MS]";

fn parse_args() -> Result<mock_agent::Options, String> {
    let mut options = mock_agent::Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| format!("{name} needs a number\n{USAGE}"))
        };
        match arg.as_str() {
            "--big-bytes" => {
                options.big_bytes =
                    usize::try_from(value("--big-bytes")?).map_err(|e| e.to_string())?;
            }
            "--delay-ms" => options.step_delay = Duration::from_millis(value("--delay-ms")?),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match mock_agent::serve(tokio::io::stdin(), tokio::io::stdout(), options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mock_agent: {e}");
            ExitCode::FAILURE
        }
    }
}
