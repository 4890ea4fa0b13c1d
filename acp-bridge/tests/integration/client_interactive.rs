//! `acp-client` as a person uses it at a terminal: run in a
//! pseudo-terminal with no prompt, it keeps a conversation. Turns, a
//! permission question answered at the keyboard, the client's slash
//! commands, Ctrl-C cancelling a turn, Ctrl-C at an empty prompt and
//! Ctrl-D quitting, and a reconnect to the team server mid-session.

use std::process::Command;

use crate::fault_proxy::{Fault, FaultProxy};
use crate::pty::Pty;
use crate::ws_harness::{scratch_dir, Bridge};

fn client(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-client"));
    cmd.args(args).env_remove("ACP_BRIDGE_TOKEN");
    cmd
}

/// Two turns on the built-in mock, the permission questions answered at
/// the keyboard (allow, then reject: the notes are not written), the
/// modes and options listed and set, sessions listed, a new one, the old
/// one loaded back, the agent's commands in /help, then Ctrl-D.
#[test]
fn a_conversation_with_the_mock_agent() {
    let cwd = scratch_dir("interactive");
    std::fs::write(cwd.join("README.md"), "# A project\n").unwrap();
    let cwd_arg = cwd.display().to_string();
    let mut pty = Pty::spawn(&mut client(&["--permission", "ask", "--cwd", &cwd_arg]));
    pty.expect("session mock-session-1 in", 20);

    pty.line("look around");
    pty.expect("? [execute] ls -la && wc -l *.md", 20);
    pty.expect("3) Reject [reject_once]", 5);
    pty.expect("choose 1-3: ", 5);
    pty.send("2\r");
    pty.expect("→ Allow (proceed_once)", 10);
    pty.expect("✓ [execute] ls -la && wc -l *.md", 10);
    pty.expect("choose 1-3: ", 20);
    pty.send("3\r");
    pty.expect("→ Reject (cancel)", 10);
    pty.expect("not allowed to write NOTES.md.", 10);
    pty.expect("stop reason: end_turn", 10);
    assert!(!cwd.join("NOTES.md").exists());

    pty.line("/mode");
    pty.expect("* default (Default)", 10);
    pty.line("/mode yolo");
    pty.expect("mode: yolo", 10);
    pty.line("/mode");
    pty.expect("* yolo (YOLO)", 10);
    pty.line("/mode nope");
    pty.expect(
        "error: agent answered session/set_mode with error -32602",
        10,
    );

    pty.line("/config");
    pty.expect("effort = fast (Effort; one of: fast, thorough)", 10);
    pty.line("/config effort thorough");
    pty.expect("effort = thorough", 10);

    pty.line("/help");
    pty.expect("/sessions", 10);
    pty.expect("/memory", 10);

    pty.line("/new");
    pty.expect("session mock-session-2 in", 10);
    pty.line("/sessions");
    pty.expect("  mock-session-1", 10);
    pty.expect("* mock-session-2", 10);
    pty.line("/load mock-session-1");
    pty.expect("session mock-session-1 in", 10);

    // The second turn, in the first session again: allowed twice.
    pty.line("and write the notes");
    pty.expect("choose 1-3: ", 20);
    pty.send("1\r");
    pty.expect("choose 1-3: ", 20);
    pty.send("1\r");
    pty.expect("and wrote NOTES.md.", 10);
    pty.expect("stop reason: end_turn", 10);
    assert!(cwd.join("NOTES.md").exists());

    pty.expect("\n> ", 10);
    pty.send("\x04");
    let status = pty.wait(10);
    assert!(status.success(), "{status}\n{}", pty.seen());
    let _ = std::fs::remove_dir_all(&cwd);
}

/// Ctrl-C during a slow turn cancels it (the program goes on: a next
/// turn runs); Ctrl-C at the permission question cancels too; Ctrl-C at
/// an empty prompt quits.
#[test]
fn ctrl_c_cancels_the_turn_not_the_program() {
    let mut pty = Pty::spawn(&mut client(&["--mock-delay-ms", "400"]));
    pty.line("take your time");
    pty.expect("Surveying the project", 20);
    pty.send("\x03");
    pty.expect("^C: cancelling the turn (again to quit)", 10);
    pty.expect("stop reason: cancelled", 10);

    // The next turn runs to its end.
    pty.line("now go on");
    pty.expect("stop reason: end_turn", 30);

    // Ctrl-C with text on the line drops the line, and the program stays.
    pty.expect("\n> ", 10);
    std::thread::sleep(std::time::Duration::from_millis(50));
    pty.send("some text\x03");
    pty.line("/mode");
    pty.expect("* default", 10);

    // At an empty prompt it quits.
    pty.expect("\n> ", 10);
    std::thread::sleep(std::time::Duration::from_millis(50));
    pty.send("\x03");
    let status = pty.wait(10);
    assert!(status.success(), "{status}\n{}", pty.seen());
}

/// Ctrl-C at a permission question cancels the turn.
#[test]
fn ctrl_c_at_a_permission_question_cancels_the_turn() {
    let mut pty = Pty::spawn(&mut client(&["--permission", "ask"]));
    pty.line("ask me");
    pty.expect("choose 1-3: ", 20);
    std::thread::sleep(std::time::Duration::from_millis(50));
    pty.send("\x03");
    pty.expect("→ cancelled", 10);
    pty.expect("stop reason: cancelled", 10);
    pty.line("/quit");
    let status = pty.wait(10);
    assert!(status.success(), "{status}\n{}", pty.seen());
}

/// On the team server, the connection reset mid-session: one line says
/// so, and the conversation goes on (both turns end).
#[test]
fn a_conversation_on_the_team_server_survives_a_broken_connection() {
    let bridge = Bridge::start("interactive-remote", &[]);
    // Past the session's start (about 1,700 bytes): in the first turn.
    let proxy = FaultProxy::start(bridge.addr, vec![(4_000, Fault::Reset)]);
    let cwd = scratch_dir("interactive-remote-cwd");
    let url = format!("ws://{}/acp", proxy.addr);
    let cwd_arg = cwd.display().to_string();
    let mut pty = Pty::spawn(&mut client(&[
        "--connect",
        &url,
        "--permission",
        "allow",
        "--reconnect-secs",
        "20",
        "--cwd",
        &cwd_arg,
    ]));
    pty.line("first");
    pty.expect("stop reason: end_turn", 30);
    pty.line("second");
    pty.expect("stop reason: end_turn", 30);
    let seen = pty.seen();
    let broken = proxy.broken.load(std::sync::atomic::Ordering::Relaxed);
    assert!(broken >= 1, "{seen}");
    // One line a reconnect.
    let lines: Vec<&str> = seen.lines().filter(|l| l.contains("reconnect")).collect();
    assert_eq!(lines.len(), broken, "{seen}");
    assert!(lines[0].contains("reset by peer"), "{seen}");
    assert!(lines[0].ends_with("; reconnected; resuming"), "{seen}");
    pty.expect("\n> ", 10);
    pty.send("\x04");
    let status = pty.wait(10);
    assert!(status.success(), "{status}\n{seen}");
    let _ = std::fs::remove_dir_all(&cwd);
}
