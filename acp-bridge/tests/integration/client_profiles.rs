//! `acp-client profiles list|add|remove` and `acp-client --profile NAME`:
//! the profiles file in a scratch place (`ACP_CLIENT_PROFILES`), created
//! private, refused when others can read it; tokens from a variable or a
//! file, never printed; a full turn through `acp-bridge` by profile.
#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::ws_harness;
use ws_harness::*;

const TOKEN: &str = "profile-test-0123456789-secret";

struct Env {
    dir: PathBuf,
    file: PathBuf,
}

impl Env {
    fn new(name: &str) -> Self {
        let dir = scratch_dir(name);
        let file = dir.join("conf").join("servers.json");
        Self { dir, file }
    }

    fn run(&self, args: &[&str], envs: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-client"));
        cmd.args(args)
            .env("ACP_CLIENT_PROFILES", &self.file)
            .env_remove("ACP_BRIDGE_TOKEN")
            .envs(envs.iter().copied())
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        let out = cmd.output().unwrap();
        for stream in [&out.stdout, &out.stderr] {
            assert!(
                !String::from_utf8_lossy(stream).contains(TOKEN),
                "token printed: {out:?}"
            );
        }
        out
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn chmod(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

#[test]
fn profiles_managed_private_and_used_for_a_turn() {
    let env = Env::new("profiles");
    let out = env.run(&["profiles", "list"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("no profiles"));

    let bridge = Bridge::start("profiles-bridge", &["--token", TOKEN]);
    let url = format!("ws://{}/acp", bridge.addr);
    let out = env.run(
        &[
            "profiles",
            "add",
            "team",
            "--url",
            &url,
            "--token-env",
            "TEAM_TOKEN",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(mode(&env.file), 0o600);
    assert_eq!(mode(env.file.parent().unwrap()), 0o700);
    let listed = text(&env.run(&["profiles", "list"], &[]));
    assert!(
        listed.contains("team") && listed.contains("token from $TEAM_TOKEN"),
        "{listed}"
    );
    // Never a token on the command line, nor in the URL.
    let out = env.run(
        &["profiles", "add", "x", "--url", &url, "--token", TOKEN],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = env.run(
        &["profiles", "add", "x", "--url", &format!("{url}?token=abc")],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));

    // A full turn by profile, the token from the variable.
    let cwd = env.dir.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    let turn = [
        "--profile",
        "team",
        "--cwd",
        cwd.to_str().unwrap(),
        "--summary-json",
        "hello",
    ];
    let out = env.run(&turn, &[("TEAM_TOKEN", TOKEN)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("\"stopReason\":\"end_turn\""),
        "{}",
        text(&out)
    );
    // Without the variable: a clear error, no connection.
    let out = env.run(&turn, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("TEAM_TOKEN is not set"),
        "{}",
        text(&out)
    );
    // --profile gives the URL: --connect with it is refused.
    let out = env.run(
        &["--profile", "team", "--connect", &url],
        &[("TEAM_TOKEN", TOKEN)],
    );
    assert_eq!(out.status.code(), Some(2));

    // The token from a private file; refused once others may read it.
    let token_file = env.dir.join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    chmod(&token_file, 0o600);
    let out = env.run(
        &[
            "profiles",
            "add",
            "filed",
            "--url",
            &url,
            "--token-file",
            token_file.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let filed = [
        "--profile",
        "filed",
        "--cwd",
        cwd.to_str().unwrap(),
        "--summary-json",
        "hi",
    ];
    let out = env.run(&filed, &[]);
    assert!(out.status.success(), "{}", text(&out));
    chmod(&token_file, 0o644);
    let out = env.run(&filed, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("chmod 600"), "{}", text(&out));

    // The profiles file itself, readable by others: refused everywhere.
    chmod(&env.file, 0o644);
    let out = env.run(&["profiles", "list"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("accessible by group or others"),
        "{}",
        text(&out)
    );
    let out = env.run(&turn, &[("TEAM_TOKEN", TOKEN)]);
    assert_eq!(out.status.code(), Some(2));
    chmod(&env.file, 0o600);

    let out = env.run(&["profiles", "remove", "team"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let listed = text(&env.run(&["profiles", "list"], &[]));
    assert!(
        !listed.contains("team") && listed.contains("filed"),
        "{listed}"
    );
    let out = env.run(&["profiles", "remove", "team"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&env.dir);
}
