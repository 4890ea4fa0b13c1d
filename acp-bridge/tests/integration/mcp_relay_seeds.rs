//! Replays the committed seeds of the `mcp_relay` fuzz target
//! (`fuzz/seeds/mcp_relay/`) through the invariant it asserts
//! (`fuzz/checks/mcp_relay.rs`), so `cargo test` runs them: every agent
//! request of MCP over ACP answered once, by its own server or with an
//! error; lines only to live connections, in order.

use std::path::Path;

#[path = "../../../fuzz/checks/mcp_relay.rs"]
mod check;

#[test]
fn mcp_relay_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/mcp_relay");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 8, "too few seeds in {}", dir.display());
    for seed in seeds {
        eprintln!("{}", seed.display());
        check::check(&std::fs::read(&seed).unwrap());
    }
}
