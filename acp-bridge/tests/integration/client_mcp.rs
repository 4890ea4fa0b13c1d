//! `acp-client --mcp-config`: the user's MCP servers for a local agent
//! (stdio servers in `session/new`, started by the agent) and for a remote
//! one behind `acp-bridge` (MCP over ACP, started by the client and
//! relayed over `mcp/*`). The agent is the mock, which acts as an MCP
//! client when its prompt says `mcp TOOL KEY=VALUE`; the server is
//! `tests/fixtures/mcp_files.py` (stdio JSON-RPC, no dependencies):
//! `read_file`, `crash` (exits), `hang` (never answers).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

const TOKEN: &str = "t0k3n-for-mcp-tests";
const SECRET: &str = "a line that exists only on the user's side";

/// A scratch directory: the user's project (with the secret file) and the
/// MCP configuration naming the test server.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("acp_mcp_test_{}_{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("project")).unwrap();
        std::fs::write(dir.join("project/secret.txt"), SECRET).unwrap();
        std::fs::write(dir.join("project/README.md"), "# Demo\n").unwrap();
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_files.py");
        let config = serde_json::json!({"mcpServers": {"files": {
            "command": "python3", "args": [server], "env": {"PYTHONUNBUFFERED": "1"}}}});
        std::fs::write(dir.join("mcp.json"), config.to_string()).unwrap();
        Self(dir)
    }

    fn project(&self) -> PathBuf {
        self.0.join("project")
    }

    fn config(&self) -> PathBuf {
        self.0.join("mcp.json")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// One `acp-client` turn; its output and the `--summary-json` object.
fn client(args: &[&str], envs: &[(&str, &str)]) -> (Output, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
        .args(["--summary-json", "--permission", "allow"])
        .args(args)
        .env_remove("ACP_BRIDGE_TOKEN")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    (out, summary, all)
}

/// An `acp-bridge` with its mock agent on 127.0.0.1, killed on drop.
struct Bridge {
    child: Child,
    url: String,
    _logs: Scratch,
}

impl Bridge {
    fn start() -> Self {
        Self::start_with(&["--token", TOKEN])
    }

    fn start_with(args: &[&str]) -> Self {
        let logs = Scratch::new("bridge_logs");
        let mut child = Command::new(env!("CARGO_BIN_EXE_acp-bridge"))
            .args(["--port", "0"])
            .args(args)
            .arg("--log-dir")
            .arg(logs.0.join("log"))
            .env_remove("GEMINI_BRIDGE_AGENT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on ").nth(1) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("acp-bridge did not listen");
        Self {
            child,
            url: format!("{url}/acp"),
            _logs: logs,
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mock_agent() -> String {
    env!("CARGO_BIN_EXE_acp-mock-agent").to_owned()
}

#[test]
fn a_local_agent_gets_the_servers_in_session_new_and_starts_them() {
    let s = Scratch::new("local");
    let (project, config) = (s.project(), s.config());
    let (out, summary, all) = client(
        &[
            "--agent",
            &mock_agent(),
            "--cwd",
            project.to_str().unwrap(),
            "--mcp-config",
            config.to_str().unwrap(),
            "--timeout",
            "20",
            "mcp read_file path=secret.txt",
        ],
        &[],
    );
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    // One line per server, then the agent's own use of it.
    assert!(
        all.contains("mcp: offering files (command: python3 "),
        "{all}"
    );
    assert!(!all.contains("over ACP"), "{all}");
    assert!(
        all.contains("MCP server files offers: read_file, crash, hang."),
        "{all}"
    );
    assert!(all.contains(SECRET), "{all}");
}

#[test]
fn nothing_is_offered_unless_asked() {
    let s = Scratch::new("none");
    let project = s.project();
    let (out, summary, all) = client(
        &[
            "--agent",
            &mock_agent(),
            "--cwd",
            project.to_str().unwrap(),
            "mcp read_file path=secret.txt",
        ],
        &[],
    );
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    assert!(!all.contains("mcp: "), "{all}");
    assert!(all.contains("I was given no MCP servers."), "{all}");
    assert!(!all.contains(SECRET), "{all}");
}

#[test]
fn a_remote_agent_reaches_the_users_server_over_acp() {
    let bridge = Bridge::start();
    let s = Scratch::new("remote");
    let (project, config) = (s.project(), s.config());
    let run = |prompt: &str, timeout: &str| {
        client(
            &[
                "--connect",
                &bridge.url,
                "--cwd",
                project.to_str().unwrap(),
                "--mcp-config",
                config.to_str().unwrap(),
                "--timeout",
                timeout,
                prompt,
            ],
            &[("ACP_BRIDGE_TOKEN", TOKEN)],
        )
    };

    // The file is read by the server started here, relayed over mcp/*.
    let (out, summary, all) = run("mcp read_file path=secret.txt", "20");
    read_the_secret_over_acp(&out, &summary, &all);

    // A server that dies mid-call: the call fails with why, the turn ends.
    let t0 = Instant::now();
    let (out, summary, all) = run("mcp crash", "20");
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    assert!(
        all.contains("MCP server files exited: exit status: 3 (crashing as asked)"),
        "{all}"
    );
    assert!(t0.elapsed() < Duration::from_secs(15), "{all}");

    // A server that never answers: an error after --timeout, not a hang.
    let t0 = Instant::now();
    let (out, summary, all) = run("mcp hang", "3");
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    assert!(
        all.contains("MCP server files did not answer within 3.0 s"),
        "{all}"
    );
    assert!(t0.elapsed() < Duration::from_secs(15), "{all}");
}

#[test]
fn a_bad_config_is_a_usage_error() {
    let s = Scratch::new("bad");
    std::fs::write(s.config(), r#"{"mcpServers": {"x": {"args": []}}}"#).unwrap();
    let (out, _, all) = client(&["--mcp-config", s.config().to_str().unwrap(), "hi"], &[]);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("mcp server \"x\" has no command and no url"),
        "{all}"
    );
}

/// A profile's `mcpServers` are offered as `--mcp-config`'s are.
#[test]
fn a_profile_carries_its_servers() {
    let bridge = Bridge::start();
    let s = Scratch::new("profile");
    let config: Value = serde_json::from_slice(&std::fs::read(s.config()).unwrap()).unwrap();
    let profiles = serde_json::json!({"profiles": {"team": {
        "url": bridge.url, "tokenEnv": "MCP_TEST_TOKEN", "mcpServers": config["mcpServers"]}}});
    let file = s.0.join("servers.json");
    std::fs::write(&file, profiles.to_string()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let project = s.project();
    let (out, summary, all) = client(
        &[
            "--profile",
            "team",
            "--profiles-file",
            file.to_str().unwrap(),
            "--cwd",
            project.to_str().unwrap(),
            "--timeout",
            "20",
            "mcp read_file path=secret.txt",
        ],
        &[("MCP_TEST_TOKEN", TOKEN)],
    );
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    assert!(all.contains("mcp: offering files over ACP"), "{all}");
    assert!(all.contains(SECRET), "{all}");
}

/// In a conversation the offer is shown when each session starts.
#[cfg(target_os = "linux")]
#[test]
fn the_offer_shows_in_a_conversation() {
    let s = Scratch::new("interactive");
    let (project, config) = (s.project(), s.config());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-client"));
    cmd.args(["--permission", "allow", "--cwd"])
        .arg(&project)
        .arg("--mcp-config")
        .arg(&config)
        .env_remove("ACP_BRIDGE_TOKEN");
    let mut pty = crate::pty::Pty::spawn(&mut cmd);
    pty.expect("mcp: offering files (command: python3", 20);
    pty.expect("session mock-session-1 in", 10);
    pty.line("mcp read_file path=secret.txt");
    pty.expect(SECRET, 20);
    pty.expect("stop reason: end_turn", 20);
    pty.line("/new");
    pty.expect("session mock-session-2 in", 10);
    assert_eq!(
        pty.seen().matches("mcp: offering files").count(),
        2,
        "{}",
        pty.seen()
    );
    pty.expect("\n> ", 10);
    pty.send("\x04");
    let status = pty.wait(10);
    assert!(status.success(), "{status}\n{}", pty.seen());
}

/// A team server in front of an agent that takes MCP servers only as
/// stdio servers (the mock with `--no-mcp-over-acp`, as every agent of
/// today), one confined agent per user: the server says
/// `mcpCapabilities.acp` to the client, gives the agent in place of the
/// `"acp"` server a relay that it starts in the user's room, and carries
/// the relay's MCP over `mcp/*` to the client that offered the server,
/// which runs it on the user's side. A server that dies mid-call fails
/// the call, not the turn. The user's socket refuses what is not their
/// agent's.
#[test]
fn a_team_server_bridges_mcp_for_an_agent_that_lacks_it() {
    const ANA: &str = "ana-token-for-bridged-mcp";
    const BO: &str = "bo-token-for-bridged-mcp";
    let s = Scratch::new("bridged");
    let (state, tokens) = (s.0.join("state"), s.0.join("tokens.json"));
    let file = serde_json::json!({"tokens": {
        ANA: {"userId": "ana", "permissions": ["read", "write"]},
        BO: {"userId": "bo", "permissions": ["read", "write"]},
    }});
    std::fs::write(&tokens, file.to_string()).unwrap();
    let mut args = vec![
        "--token-file",
        tokens.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
        "--mock-args",
        "--no-mcp-over-acp",
    ];
    if std::env::var_os("GEMINI_BRIDGE_UNCONFINED").is_some() {
        args.push("--unconfined");
    }
    let bridge = Bridge::start_with(&args);
    let (project, config) = (s.project(), s.config());
    let http = bridge.url.replacen("ws://", "http://", 1);
    let run_at = |url: &str, prompt: &str| {
        client(
            &[
                "--connect",
                url,
                "--cwd",
                project.to_str().unwrap(),
                "--mcp-config",
                config.to_str().unwrap(),
                "--timeout",
                "20",
                prompt,
            ],
            &[("ACP_BRIDGE_TOKEN", ANA)],
        )
    };
    let run = |prompt: &str| run_at(&bridge.url, prompt);

    // A session that offers no `"acp"` server: ana's agent runs, with no
    // socket. Hers is bound when a client first offers one (next), to the
    // agent running now, before it reads that `session/new`.
    let socket = state.join("ana/tmp/mcp-relay.sock");
    let (out, summary, all) = client(
        &[
            "--connect",
            &bridge.url,
            "--cwd",
            project.to_str().unwrap(),
            "--timeout",
            "20",
            "hello",
        ],
        &[("ACP_BRIDGE_TOKEN", ANA)],
    );
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    assert!(state.join("ana/work").is_dir());
    assert!(!socket.exists(), "bound before any offer");

    let (out, summary, all) = run("mcp read_file path=secret.txt");
    read_the_secret_over_acp(&out, &summary, &all);
    // The same over Streamable HTTP.
    let (out, _, all) = run_at(&http, "mcp read_file path=secret.txt");
    assert!(out.status.success(), "{all}");
    assert!(all.contains(SECRET), "{all}");

    // The user's server dies mid-call: an MCP error in the turn, at once.
    let t0 = Instant::now();
    let (out, summary, all) = run("mcp crash");
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    assert!(
        all.contains("MCP server files exited: exit status: 3 (crashing as asked)"),
        "{all}"
    );
    assert!(t0.elapsed() < Duration::from_secs(15), "{all}");

    // Ana's socket, in her room, takes her agent's token only: a process
    // elsewhere (bo's room, or here) that reaches it is refused.
    assert!(socket.exists(), "{}", socket.display());
    let refused = Command::new(env!("CARGO_BIN_EXE_acp-bridge"))
        .arg("--mcp-relay")
        .arg(&socket)
        .arg("any-server")
        .env("ACP_BRIDGE_MCP_TOKEN", BO)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("refused by the bridge: wrong token: this socket is another agent's"),
        "{err}"
    );
    assert!(refused.stdout.is_empty());
}

/// A turn that read the secret through a server offered over ACP: it
/// ended, the offer and the tools were shown, the file's text came back.
fn read_the_secret_over_acp(out: &std::process::Output, summary: &serde_json::Value, all: &str) {
    assert!(out.status.success(), "{all}");
    assert_eq!(summary["stopReason"], "end_turn", "{all}");
    assert!(
        all.contains("mcp: offering files over ACP, started here when the agent connects"),
        "{all}"
    );
    assert!(
        all.contains("MCP server files offers: read_file, crash, hang."),
        "{all}"
    );
    assert!(all.contains(SECRET), "{all}");
}
