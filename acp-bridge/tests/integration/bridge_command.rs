//! `acp-bridge --agent` reads its command line as `acp-client --agent`
//! does: quotes keep a word whole, so `sh -c '…'` runs the shell with the
//! quoted script (split on whitespace it would be `'…` and `…'`).
#![cfg(target_os = "linux")]

use crate::ws_harness::{connect, Bridge};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quoted_agent_command_runs_as_written() {
    let mock = env!("CARGO_BIN_EXE_acp-mock-agent");
    let agent = format!("sh -c 'test \"a b\" = \"a b\" && exec {mock}'");
    let bridge = Bridge::start("command", &["--agent", &agent]);
    let mut c = connect(&bridge).await;
    let s = c.open_session(&bridge.dir).await;
    assert_eq!(c.turn(&s, "hello").await.stop_reason, "end_turn");
}
