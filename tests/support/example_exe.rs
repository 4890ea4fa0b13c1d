//! Shared by the tests that drive example binaries (`tests/remote.rs`,
//! `tests/ws_bridge.rs`): builds an example the way `cargo test` did.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// An example binary, built with this test's profile and features (a no-op
/// after `cargo test`, which builds the examples).
pub fn example_exe(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let deps = std::env::current_exe().unwrap();
    let profile_dir = deps.parent().unwrap().parent().unwrap().to_path_buf();
    let exe = profile_dir.join("examples").join(name);
    let built = BUILT.get_or_init(|| Mutex::new(Vec::new()));
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if built.iter().any(|b| b == name) {
        return exe;
    }
    let features: Vec<&str> = [
        ("default", cfg!(feature = "default")),
        ("std", cfg!(feature = "std")),
        ("alloc", cfg!(feature = "alloc")),
        ("bytes", cfg!(feature = "bytes")),
        ("tokio-util", cfg!(feature = "tokio-util")),
        ("arbitrary", cfg!(feature = "arbitrary")),
    ]
    .iter()
    .filter_map(|&(name, on)| on.then_some(name))
    .collect();
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_owned(),
        Some(p) => p.to_owned(),
    };
    let mut build = Command::new(env!("CARGO"));
    // Cargo sets CARGO_PKG_* and CARGO_MANIFEST_* for tests; ring's build
    // script watches them, so a build inside the test would redo ring and
    // everything above it instead of finding `cargo test`'s build fresh.
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("CARGO_PKG_") || k.starts_with("CARGO_MANIFEST_") {
            build.env_remove(&key);
        }
    }
    let status = build
        .args(["build", "--quiet", "--profile", &profile, "--example", name])
        .args(["--no-default-features", "--features", &features.join(",")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo build --example");
    assert!(status.success(), "cargo build --example {name} failed");
    assert!(exe.exists(), "{} missing", exe.display());
    built.push(name.to_owned());
    exe
}
