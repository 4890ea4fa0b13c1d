//! The examples `tap` and `relay` run as their users run them, between a
//! scripted editor (this test, on their stdin and stdout) and a scripted
//! agent (`sh`, which reads what reached it, then prints its lines): the
//! exact bytes both ways (`\r\n`, blank lines, an unterminated last line),
//! bad and oversized lines skipped with the next one delivered, an
//! oversized request answered by its id, and the lines on stderr.
#![cfg(all(feature = "tokio-util", unix))]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use acp_codec::limits::DEFAULT_MAX_LINE_LEN;

/// The example's binary, built here (`cargo build --example`, a no-op
/// when it is up to date: `cargo test --all-targets` compiles the examples
/// as tests, and may leave an older binary under their plain name, which
/// must never be what is tested). Built as the workspace's test build
/// builds (every package's features, the `test` profile), so that only
/// the example itself is compiled after `scripts/test`'s build (built
/// for this package alone, its dependencies' features differ and they
/// were compiled again inside the test). `None` in a cross build run
/// under emulation (`CARGO_BUILD_TARGET` set, as `scripts/arm_test.sh`
/// does, without the examples): the examples are run natively.
fn example(name: &str) -> Option<PathBuf> {
    if std::env::var_os("CARGO_BUILD_TARGET").is_some() {
        eprintln!("{name}: not built for this target; run natively");
        return None;
    }
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args([
            "build",
            "--workspace",
            "--all-features",
            "--profile",
            "test",
        ])
        .args(["--example", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(status.success(), "cannot build the {name} example");
    assert!(
        path.exists(),
        "{name} was built, but not at {}",
        path.display()
    );
    Some(path)
}

struct Run {
    /// What the editor got.
    editor_got: Vec<u8>,
    /// What the agent got.
    agent_got: Vec<u8>,
    stderr: String,
}

/// Runs `name args.. sh -c SCRIPT`: the editor writes `editor` and closes;
/// the agent reads `agent_reads` bytes, then prints `agent`.
fn run(name: &str, args: &[&str], editor: &[u8], agent: &[u8], agent_reads: usize) -> Option<Run> {
    let program = example(name)?;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("example-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, got) = (dir.join("agent-out"), dir.join("agent-got"));
    std::fs::write(&out, agent).unwrap();
    let script = format!(
        "head -c {agent_reads} > '{}'; cat '{}'",
        got.display(),
        out.display()
    );
    let mut child = Command::new(program)
        .args(args)
        .args(["sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = editor.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    // A hung example fails the test instead of holding it.
    let (done, wait) = mpsc::channel::<()>();
    let pid = child.id().to_string();
    let watchdog = std::thread::spawn(move || {
        if wait.recv_timeout(Duration::from_secs(120)).is_err() {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
    });
    let output = child.wait_with_output().unwrap();
    done.send(()).unwrap();
    watchdog.join().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "{name}: {output:?}");
    let run = Run {
        editor_got: output.stdout,
        agent_got: std::fs::read(&got).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    };
    std::fs::remove_dir_all(&dir).unwrap();
    Some(run)
}

/// The editor's lines: which reach the agent.
fn editor_lines(limit: usize) -> Vec<(Vec<u8>, bool)> {
    let long = "a".repeat(limit);
    vec![
        (br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#.iter().chain(b"\r\n").copied().collect(), true),
        (b"\n".to_vec(), true),
        (b"Loaded cached credentials.\n".to_vec(), false),
        (format!(r#"{{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"text","text":"{long}"}}]}}}}"#).into_bytes().into_iter().chain(*b"\n").collect(), false),
        (br#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#.iter().chain(b"\n").copied().collect(), true),
        (b"\xff\xfe\n".to_vec(), false),
        (b" \t\r\n".to_vec(), true),
        (br#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#.to_vec(), true),
    ]
}

/// The agent's lines: which reach the editor.
fn agent_lines() -> Vec<(Vec<u8>, bool)> {
    vec![
        (b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1}}\r\n".to_vec(), true),
        (b"not json\n".to_vec(), false),
        (b"\n".to_vec(), true),
        (br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Run ls","kind":"execute","status":"pending"}}}"#.iter().chain(b"\n").copied().collect(), true),
        (br#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#.to_vec(), true),
    ]
}

fn all(lines: &[(Vec<u8>, bool)]) -> Vec<u8> {
    lines.iter().flat_map(|(l, _)| l.clone()).collect()
}

fn delivered(lines: &[(Vec<u8>, bool)]) -> Vec<u8> {
    lines
        .iter()
        .filter(|(_, d)| *d)
        .flat_map(|(l, _)| l.clone())
        .collect()
}

/// Runs `name` with the editor's and the agent's lines; checks the bytes
/// both ways; returns stderr (`None` when the example is not built for
/// this target).
fn exact_both_ways(name: &str, args: &[&str], limit: usize) -> Option<String> {
    let (editor, agent) = (editor_lines(limit), agent_lines());
    let to_agent = delivered(&editor);
    let run = run(name, args, &all(&editor), &all(&agent), to_agent.len())?;
    assert_eq!(run.agent_got, to_agent, "{name}: what reached the agent");
    // The answer to the oversized request first (the agent prints only
    // once it has read everything), then the agent's lines as printed.
    let reply = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{{\"code\":-32600,\"message\":\"line of more than {limit} bytes (request id 1)\"}}}}\n"
    );
    let mut to_editor = reply.into_bytes();
    to_editor.extend(delivered(&agent));
    assert_eq!(
        String::from_utf8_lossy(&run.editor_got),
        String::from_utf8_lossy(&to_editor),
        "{name}: what reached the editor"
    );
    assert_eq!(run.editor_got, to_editor);
    Some(run.stderr)
}

#[test]
fn tap_is_exact_both_ways_and_logs_tool_calls_and_stop_reasons() {
    let Some(stderr) = exact_both_ways("tap", &[], DEFAULT_MAX_LINE_LEN) else {
        return;
    };
    let lines: Vec<&str> = stderr.lines().collect();
    let expected = [
        "tap: dropped a Client line: ".to_owned(),
        format!("tap: skipped a line from the Client: line of more than {DEFAULT_MAX_LINE_LEN} bytes (request id 1)"),
        "tap: dropped a Client line: ".to_owned(),
        "tap: dropped a Agent line: ".to_owned(),
        "tap: tool call t1: Run ls [execute] pending".to_owned(),
        "tap: prompt 2 stopped: end_turn".to_owned(),
    ];
    assert_eq!(lines.len(), expected.len(), "{stderr}");
    for (line, want) in lines.iter().zip(&expected) {
        assert!(
            line.starts_with(want.as_str()),
            "{line:?} is not {want:?}\n{stderr}"
        );
    }
}

#[test]
fn relay_is_exact_both_ways() {
    let Some(stderr) = exact_both_ways("relay", &["--max-line", "200"], 200) else {
        return;
    };
    let from = |side: &str| {
        stderr
            .matches(&format!("relay: dropped a line from the {side}: "))
            .count()
    };
    assert_eq!((from("client"), from("agent")), (3, 1), "{stderr}");
    assert!(
        stderr.contains("line of more than 200 bytes (request id 1)"),
        "{stderr}"
    );
}
