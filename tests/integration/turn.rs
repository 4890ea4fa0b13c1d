//! The turn view through its public API: recorded sessions replayed into
//! their expected event sequences (`tests/turn_golden/<session>.txt`), and
//! table tests for the rules.
//!
//! `UPDATE_TURN_GOLDEN=1 cargo test --test integration turn::` rewrites the golden files;
//! review the diff before committing it.
#![cfg(feature = "std")]

use crate::turn_support;

use std::path::PathBuf;

use acp_codec::acp::{
    PromptResponse, RequestId, RequestPermissionRequest, RequestPermissionResponse,
    SessionNotification,
};
use acp_codec::title::WorkingDir;
use acp_codec::turn::{TurnLimits, TurnView};
use turn_support::{render, transcript, Driver};

fn sessions_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions")
}

fn replay(name: &str) -> Driver {
    let text =
        std::fs::read_to_string(sessions_dir().join(name).join("transcript.ndjson")).unwrap();
    let mut d = Driver::new(TurnLimits::default());
    for (from, line) in transcript(&text) {
        d.feed(&from, &line);
    }
    d
}

fn golden(name: &str, d: &Driver) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/turn_golden")
        .join(format!("{name}.txt"));
    let got = d.log.join("\n") + "\n";
    if std::env::var_os("UPDATE_TURN_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_TURN_GOLDEN=1 writes it)", path.display()));
    assert_eq!(got, want, "{name}: events differ from {}", path.display());
}

#[test]
fn gemini_turn() {
    let name = "gemini-cli-0.61.0-acp-turn";
    let d = replay(name);
    golden(name, &d);
}

#[test]
fn ts_sdk_example_agent() {
    let name = "ts-sdk-1.9.0-example-agent";
    let d = replay(name);
    golden(name, &d);
}

#[test]
fn python_sdk_agent() {
    let name = "py-sdk-0.12.1-scripted-agent";
    let d = replay(name);
    golden(name, &d);
}

#[test]
fn ts_sdk_client_against_gemini() {
    let name = "ts-sdk-2.4.0-client-gemini-cli-0.61.0-acp-turn";
    let d = replay(name);
    golden(name, &d);
}

#[test]
fn qwen_code_turn() {
    let name = "qwen-code-0.24.4-acp-turn";
    let d = replay(name);
    golden(name, &d);
}

/// Every recorded session: deltas equal the recorded text, nothing is
/// reported as a problem, every permission request is resolved, every tool
/// call ends finished, and the turn has a stop reason.
#[test]
fn every_session_replays_cleanly() {
    for entry in std::fs::read_dir(sessions_dir()).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let text = std::fs::read_to_string(dir.join("transcript.ndjson")).unwrap();
        let mut d = Driver::new(TurnLimits::default());
        let mut want: [String; 3] = Default::default();
        for (from, line) in transcript(&text) {
            if from == "agent" {
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                let u = &v["params"]["update"];
                if v["method"] == "session/update" && u["content"]["type"] == "text" {
                    let i = match u["sessionUpdate"].as_str().unwrap() {
                        "user_message_chunk" => 0,
                        "agent_message_chunk" => 1,
                        _ => 2,
                    };
                    want[i].push_str(u["content"]["text"].as_str().unwrap());
                }
            }
            d.feed(&from, &line);
        }
        assert_eq!(d.texts, want, "{name}");
        let problems: Vec<_> = d.log.iter().filter(|l| l.starts_with("problem")).collect();
        assert!(problems.is_empty(), "{name}: {problems:?}");
        assert!(d.view.pending_permissions().next().is_none(), "{name}");
        assert!(
            d.view.tool_calls().iter().all(|t| t.is_finished()),
            "{name}"
        );
        // A turn started by a prompt ends with its response; a load replay
        // has none.
        let last_begin = d.log.iter().rev().find(|l| l.starts_with("-- begin"));
        if last_begin.is_some_and(|l| l.contains("session/prompt")) {
            assert!(d.view.stop_reason().is_some(), "{name}");
        }
    }
}

/// The state a UI redraws from, after the Gemini turn (not its replay).
#[test]
fn gemini_turn_state() {
    let text = std::fs::read_to_string(
        sessions_dir().join("gemini-cli-0.61.0-acp-turn/transcript.ndjson"),
    )
    .unwrap();
    let mut d = Driver::new(TurnLimits::default());
    for (from, line) in transcript(&text) {
        if line.contains("\"session/load\"") {
            break;
        }
        d.feed(&from, &line);
    }
    let v = &d.view;
    assert_eq!(v.stop_reason().map(|r| r.as_str()), Some("end_turn"));
    assert_eq!(v.tool_calls().len(), 13);
    assert_eq!(v.permissions().len(), 7);
    assert!(v
        .permissions()
        .iter()
        .all(|p| p.selected().map(|o| &*o.option_id) == Some("proceed_once")));
    assert_eq!(
        v.messages().len(),
        1,
        "one agent message without messageId per turn"
    );
    assert_eq!(v.thoughts().len(), 1);
    assert!(v.messages()[0].text().starts_with(
        "I'll start by looking around the project to see what is there.Now I'll update"
    ));
    // Shell tools: the title is the command, the explanation block gave the
    // rest, and it survived the completing update that emptied the content.
    let shell: Vec<_> = v
        .tool_calls()
        .iter()
        .filter(|t| t.kind().map(|k| k.as_str()) == Some("execute"))
        .collect();
    assert_eq!(shell.len(), 5);
    let first = shell[0].title();
    assert_eq!(first.command(), "ls -la && wc -l *.py");
    assert_eq!(first.working_dir(), Some(WorkingDir::In("src")));
    assert_eq!(
        first.description(),
        "List the source files (with sizes) and count lines"
    );
    assert!(shell[0].content().is_empty());
    let background = shell
        .iter()
        .find(|t| t.raw_title() == "sleep 0.2")
        .unwrap()
        .title();
    assert!(background.is_background());
    // A failed update carries no title: the title stays.
    let failed = v
        .tool_calls()
        .iter()
        .find(|t| t.status().as_str() == "failed")
        .unwrap();
    assert_eq!(failed.raw_title(), "Writing to NOTES.md");
    assert_eq!(failed.content().len(), 1);
}

// ---- table tests ----------------------------------------------------------

fn note(update: &str) -> String {
    format!(r#"{{"sessionId":"s","update":{update}}}"#)
}

/// Pushes updates (JSON of the `update` member) and renders all events.
fn run(view: &mut TurnView, updates: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for u in updates {
        let text = note(u);
        let n: SessionNotification<'_> = serde_json::from_str(&text).unwrap();
        out.extend(view.push_update(&n).map(|e| render(&e)));
    }
    out
}

fn permission(view: &mut TurnView, id: i64, tool_call: &str) -> Vec<String> {
    let text = format!(
        r#"{{"sessionId":"s","toolCall":{tool_call},"options":[{{"optionId":"yes","name":"Allow","kind":"allow_once"}},{{"optionId":"no","name":"Reject","kind":"reject_once"}}]}}"#
    );
    let p: RequestPermissionRequest<'_> = serde_json::from_str(&text).unwrap();
    view.push_permission_request(&RequestId::Number(id), &p)
        .map(|e| render(&e))
        .collect()
}

fn outcome(view: &mut TurnView, id: i64, outcome: &str) -> Vec<String> {
    let text = format!(r#"{{"outcome":{outcome}}}"#);
    let r: RequestPermissionResponse<'_> = serde_json::from_str(&text).unwrap();
    view.push_permission_outcome(&RequestId::Number(id), &r)
        .map(|e| render(&e))
        .collect()
}

fn finish(view: &mut TurnView, reason: &str) -> Vec<String> {
    let text = format!(r#"{{"stopReason":"{reason}"}}"#);
    let r: PromptResponse<'_> = serde_json::from_str(&text).unwrap();
    view.push_prompt_response(&r).map(|e| render(&e)).collect()
}

const AGENT_A: &str = r#"{"sessionUpdate":"agent_message_chunk","messageId":"a","content":{"type":"text","text":"Hel"}}"#;
const AGENT_A2: &str = r#"{"sessionUpdate":"agent_message_chunk","messageId":"a","content":{"type":"text","text":"lo"}}"#;
const AGENT_B: &str = r#"{"sessionUpdate":"agent_message_chunk","messageId":"b","content":{"type":"text","text":"Bye"}}"#;
const AGENT: &str =
    r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}"#;
const THOUGHT_A: &str = r#"{"sessionUpdate":"agent_thought_chunk","messageId":"a","content":{"type":"text","text":"hm"}}"#;

#[test]
fn text_accumulates_per_message_id_and_kind() {
    let mut v = TurnView::default();
    let events = run(
        &mut v,
        &[AGENT_A, THOUGHT_A, AGENT_B, AGENT_A2, AGENT, AGENT],
    );
    assert_eq!(
        events,
        [
            "text Agent [a] \"Hel\" (message 3 bytes)",
            "thought [a] \"hm\" (thought 2 bytes)",
            "text Agent [b] \"Bye\" (message 3 bytes)",
            "text Agent [a] \"lo\" (message 5 bytes)",
            "text Agent \"x\" (message 1 bytes)",
            "text Agent \"x\" (message 2 bytes)",
        ]
    );
    let texts: Vec<_> = v.messages().iter().map(|m| (m.id(), m.text())).collect();
    assert_eq!(
        texts,
        [(Some("a"), "Hello"), (Some("b"), "Bye"), (None, "xx")]
    );
    assert_eq!(v.thoughts()[0].text(), "hm");
    // Non-text content is passed through, not retained.
    let events = run(
        &mut v,
        &[
            r#"{"sessionUpdate":"user_message_chunk","content":{"type":"resource_link","name":"r","uri":"file:///r"}}"#,
        ],
    );
    assert_eq!(events, ["content User resource_link"]);
    assert_eq!(v.messages().len(), 3);
}

const CALL: &str = r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"grep -n x [in src] (Find x)","kind":"execute","status":"pending","locations":[{"path":"/a"}],"rawInput":{"q":1}}"#;

#[test]
fn tool_call_update_changes_only_given_fields_and_replaces_lists() {
    let mut v = TurnView::default();
    let e = run(&mut v, &[CALL]);
    assert_eq!(e, ["tool started t pending execute cmd=\"grep -n x\" dir=[in src] desc=\"Find x\" content=0 locations=1"]);
    let e = run(
        &mut v,
        &[
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"a"}},{"type":"content","content":{"type":"text","text":"b"}}]}"#,
        ],
    );
    assert_eq!(e, ["tool updated t in_progress execute cmd=\"grep -n x\" dir=[in src] desc=\"Find x\" content=2 locations=1"]);
    let e = run(
        &mut v,
        &[
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","locations":[],"content":[{"type":"diff","path":"/a","newText":"n"}]}"#,
        ],
    );
    assert_eq!(e, ["tool finished t completed execute cmd=\"grep -n x\" dir=[in src] desc=\"Find x\" content=1 locations=0"]);
    let t = v.tool_call("t").unwrap();
    assert_eq!(t.raw_input().unwrap().get(), r#"{"q":1}"#);
    assert!(t.is_finished());
    // An update after it finished is an update, not a second finish.
    let e = run(
        &mut v,
        &[r#"{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"failed"}"#],
    );
    assert!(e[0].starts_with("tool updated t failed"), "{e:?}");
}

#[test]
fn unknown_ids_and_late_updates_are_reported_and_not_fatal() {
    let mut v = TurnView::default();
    let e = run(
        &mut v,
        &[r#"{"sessionUpdate":"tool_call_update","toolCallId":"nope","status":"completed"}"#],
    );
    assert_eq!(
        e,
        ["problem: tool call update for an unknown tool call id (tool call \"nope\")"]
    );
    assert!(v.tool_calls().is_empty());
    let e = run(&mut v, &[CALL, CALL]);
    assert_eq!(e.len(), 3);
    assert_eq!(e[1], "problem: tool call announced twice (tool call \"t\")");
    assert_eq!(v.tool_calls().len(), 1);
    assert_eq!(finish(&mut v, "end_turn"), ["turn finished end_turn"]);
    let e = run(&mut v, &[AGENT]);
    assert_eq!(
        e,
        [
            "problem: update after the end of the turn",
            "text Agent \"x\" (message 1 bytes)"
        ]
    );
    assert_eq!(v.messages()[0].text(), "x");
    // Session-level updates are never late.
    let e = run(
        &mut v,
        &[r#"{"sessionUpdate":"current_mode_update","currentModeId":"yolo"}"#],
    );
    assert_eq!(e, ["mode yolo"]);
    assert_eq!(v.mode(), Some("yolo"));
    assert_eq!(
        finish(&mut v, "cancelled"),
        [
            "problem: second prompt response for the turn",
            "turn finished cancelled"
        ]
    );
    assert_eq!(v.stop_reason().unwrap().as_str(), "cancelled");
    assert_eq!(
        outcome(&mut v, 9, r#"{"outcome":"cancelled"}"#),
        ["problem: permission outcome for no pending request (request 9)"]
    );
    // A new turn forgets the old one's tool calls, keeps the mode.
    v.begin_turn();
    assert!(v.tool_calls().is_empty() && v.messages().is_empty() && v.stop_reason().is_none());
    assert_eq!(v.mode(), Some("yolo"));
    let e = run(
        &mut v,
        &[r#"{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"failed"}"#],
    );
    assert!(
        e[0].starts_with("problem: tool call update for an unknown"),
        "{e:?}"
    );
}

#[test]
fn permission_first_creates_the_tool_call() {
    // Gemini CLI 0.61: no tool_call for tools that need permission.
    let mut v = TurnView::default();
    let e = permission(
        &mut v,
        0,
        r#"{"toolCallId":"sh","title":"make","kind":"execute","status":"pending","content":[{"type":"content","content":{"type":"text","text":"[current working directory /w] (Build it)"}}]}"#,
    );
    assert_eq!(
        e,
        [
            "tool started sh pending execute cmd=\"make\" dir=[current working directory /w] desc=\"Build it\" content=1 locations=0",
            "permission requested 0 for sh (2 options)",
        ]
    );
    assert_eq!(v.pending_permissions().count(), 1);
    // The client's own request 0 may be pending too: only this outcome
    // (fed by the caller for the agent's request 0) resolves it.
    let e = outcome(&mut v, 0, r#"{"outcome":"selected","optionId":"no"}"#);
    assert_eq!(e, ["permission resolved 0 -> selected no"]);
    assert_eq!(v.permissions()[0].selected().unwrap().name, "Reject");
    assert_eq!(v.pending_permissions().count(), 0);
    assert_eq!(
        outcome(&mut v, 0, r#"{"outcome":"cancelled"}"#),
        ["problem: permission outcome for no pending request (request 0)"]
    );
    let e = run(
        &mut v,
        &[
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"sh","status":"failed","content":[{"type":"content","content":{"type":"text","text":"rejected"}}]}"#,
        ],
    );
    assert_eq!(e, ["tool finished sh failed execute cmd=\"make\" dir=[current working directory /w] desc=\"Build it\" content=1 locations=0"]);
    // A permission request for a known tool call updates it.
    let mut v = TurnView::default();
    run(&mut v, &[CALL]);
    let e = permission(&mut v, 3, r#"{"toolCallId":"t","title":"grep -n y"}"#);
    assert_eq!(
        e[0],
        "tool updated t pending execute cmd=\"grep -n y\" content=0 locations=1"
    );
    let e = permission(&mut v, 3, r#"{"toolCallId":"t"}"#);
    assert_eq!(
        e,
        [
            "problem: permission request id already pending (tool call \"t\") (request 3)",
            "permission requested 3 for t (2 options)"
        ]
    );
    assert_eq!(v.permissions().len(), 1);
}

/// Claude's ACP adapter asked permission (its SDK's `canUseTool`) before
/// the `tool_call` of the same id had streamed, until
/// agentclientprotocol/claude-agent-acp#820 (the recorded 0.101.0 announces
/// first). The recorded Claude session, with each permission request moved
/// before the `tool_call` of its id: the permission creates the tool call,
/// the `tool_call` completes it, and nothing is a problem.
#[test]
fn permission_before_its_tool_call_is_not_a_problem() {
    let name = "claude-agent-acp-0.101.0-acp-turn";
    let text =
        std::fs::read_to_string(sessions_dir().join(name).join("transcript.ndjson")).unwrap();
    let mut lines = transcript(&text);
    let json = |line: &str| serde_json::from_str::<serde_json::Value>(line).unwrap();
    let mut moved = Vec::new();
    for i in 0..lines.len() {
        let v = json(&lines[i].1);
        if v["method"] != "session/request_permission" {
            continue;
        }
        let id = v["params"]["toolCall"]["toolCallId"].clone();
        let announced = lines[..i].iter().position(|(from, l)| {
            let u = &json(l)["params"]["update"];
            from == "agent" && u["sessionUpdate"] == "tool_call" && u["toolCallId"] == id
        });
        let at = announced.unwrap();
        let line = lines.remove(i);
        lines.insert(at, line);
        moved.push(id.as_str().unwrap().to_owned());
    }
    assert_eq!(
        moved,
        ["toolu_fake0009", "toolu_fake0010", "toolu_fake0013"]
    );
    let mut d = Driver::new(TurnLimits::default());
    for (from, line) in &lines {
        d.feed(from, line);
    }
    let problems: Vec<_> = d.log.iter().filter(|l| l.starts_with("problem")).collect();
    assert!(problems.is_empty(), "{problems:?}");
    for id in &moved {
        let started = d
            .log
            .iter()
            .position(|l| l.starts_with(&format!("tool started {id} ")));
        let asked = d
            .log
            .iter()
            .position(|l| l.starts_with("permission requested") && l.contains(id.as_str()));
        assert!(started.unwrap() < asked.unwrap(), "{id}");
    }
    assert!(d.view.pending_permissions().next().is_none());
    assert!(d.view.tool_calls().iter().all(|t| t.is_finished()));
}

#[test]
fn tool_call_after_its_permission_completes_it() {
    let mut v = TurnView::default();
    let e = permission(
        &mut v,
        0,
        r#"{"toolCallId":"t","title":"Edit","kind":"edit"}"#,
    );
    assert_eq!(
        e[0],
        "tool started t pending edit cmd=\"Edit\" content=0 locations=0"
    );
    let e = run(&mut v, &[CALL]);
    assert_eq!(
        e,
        ["tool updated t pending execute cmd=\"grep -n x\" dir=[in src] desc=\"Find x\" content=0 locations=1"]
    );
    assert_eq!(v.tool_calls().len(), 1);
    assert_eq!(v.permissions()[0].tool_call_id(), "t");
    // Announced once: a second `tool_call` is still a problem.
    let e = run(&mut v, &[CALL]);
    assert_eq!(e[0], "problem: tool call announced twice (tool call \"t\")");
}

#[test]
fn plan_usage_and_other_updates() {
    let mut v = TurnView::default();
    let e = run(
        &mut v,
        &[
            r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"low","status":"completed"}]}"#,
            r#"{"sessionUpdate":"usage_update","used":10,"size":100}"#,
            r#"{"sessionUpdate":"available_commands_update","availableCommands":[]}"#,
            r#"{"sessionUpdate":"teleport","where":"mars"}"#,
        ],
    );
    assert_eq!(
        e,
        [
            "plan [pending] a; [completed] b",
            "usage 10/100",
            "other available_commands_update",
            "other unknown"
        ]
    );
    assert_eq!(v.plan().unwrap().len(), 2);
    assert_eq!(v.usage().unwrap().used, 10);
    v.begin_turn();
    assert_eq!(v.plan().unwrap().len(), 2, "the plan is the session's");
}

#[test]
fn limits_are_reported_and_respected() {
    let limits = TurnLimits::default()
        .with_max_messages(1)
        .with_max_text_bytes(4)
        .with_max_tool_calls(1)
        .with_max_permissions(1)
        .with_max_tool_bytes(48);
    let mut v = TurnView::new(limits);
    let e = run(&mut v, &[AGENT_A, AGENT_A2, AGENT_B]);
    assert_eq!(
        e,
        [
            "text Agent [a] \"Hel\" (message 3 bytes)",
            "problem: max_text_bytes of 4 reached: 2 bytes dropped",
            "text Agent [a] \"lo\" (message 3 bytes)",
            "problem: max_messages of 1 reached: 1 messages dropped",
            "text Agent [b] \"Bye\" (message not retained)",
        ]
    );
    // "a" (1) + "Hel" (3) = 4 bytes; "lo" dropped.
    assert_eq!(v.messages()[0].text(), "Hel");
    assert_eq!(v.messages()[0].dropped_bytes(), 2);
    assert_eq!(v.text_bytes(), 4);
    let e = run(&mut v, &[CALL]);
    // id 1 + title 27 + location 2+16 = 46 bytes fit (known statuses and
    // kinds hold no text); the raw input (7 bytes) does not.
    assert_eq!(
        e,
        [
            "tool started t pending execute cmd=\"grep -n x\" dir=[in src] desc=\"Find x\" content=0 locations=1",
            "problem: max_tool_bytes of 48 reached: 7 bytes dropped (tool call \"t\")",
        ]
    );
    assert_eq!(v.tool_call("t").unwrap().raw_input(), None);
    assert_eq!(v.tool_bytes(), 46);
    let e = run(
        &mut v,
        &[r#"{"sessionUpdate":"tool_call","toolCallId":"u","title":"x"}"#],
    );
    assert_eq!(
        e,
        ["problem: max_tool_calls of 1 reached: 1 tool calls dropped (tool call \"u\")"]
    );
    let e = run(
        &mut v,
        &[r#"{"sessionUpdate":"tool_call_update","toolCallId":"u","status":"completed"}"#],
    );
    assert!(e[0].contains("unknown tool call id"));
    let e = permission(&mut v, 0, r#"{"toolCallId":"t"}"#);
    assert_eq!(
        e,
        ["problem: max_tool_bytes of 48 reached: 86 bytes dropped (tool call \"t\") (request 0)"]
    );
    assert!(v.permissions().is_empty());
    let mut v = TurnView::new(limits.with_max_tool_bytes(1000));
    run(&mut v, &[CALL]);
    assert_eq!(
        permission(&mut v, 0, r#"{"toolCallId":"t"}"#),
        ["permission requested 0 for t (2 options)"]
    );
    let e = permission(&mut v, 1, r#"{"toolCallId":"t"}"#);
    assert_eq!(e, ["problem: max_permissions of 1 reached: 1 permission requests dropped (tool call \"t\") (request 1)"]);
    // A new turn frees everything.
    v.begin_turn();
    assert_eq!((v.text_bytes(), v.tool_bytes()), (0, 0));
    assert_eq!(
        run(&mut v, &[AGENT_B]),
        ["text Agent [b] \"Bye\" (message 3 bytes)"]
    );
}

#[test]
fn explanation_comes_only_from_unfinished_content() {
    let mut v = TurnView::default();
    // A completed tool whose output looks like MCP arguments keeps its title.
    run(
        &mut v,
        &[
            r#"{"sessionUpdate":"tool_call","toolCallId":"q","title":"query","kind":"other","status":"in_progress"}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"q","status":"completed","content":[{"type":"content","content":{"type":"text","text":"{\"rows\":1}"}}]}"#,
        ],
    );
    assert_eq!(v.tool_call("q").unwrap().title().inputs(), None);
    // The explanation of an MCP call in progress gives its inputs.
    run(
        &mut v,
        &[
            r#"{"sessionUpdate":"tool_call","toolCallId":"m","title":"query","kind":"other","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"{\"sql\":\"select 1\"}"}}]}"#,
        ],
    );
    assert_eq!(
        v.tool_call("m").unwrap().title().inputs(),
        Some("{\"sql\":\"select 1\"}")
    );
    assert_eq!(v.tool_call("m").unwrap().tool_name(), None);
    run(
        &mut v,
        &[
            r#"{"sessionUpdate":"tool_call","toolCallId":"read_file-1761234567890-3","title":"a.rs"}"#,
        ],
    );
    assert_eq!(
        v.tool_call("read_file-1761234567890-3")
            .unwrap()
            .tool_name(),
        Some("read_file")
    );
}

/// A turn cancelled mid-way: updates the agent sends after answering the
/// prompt with `cancelled` are reported as late, kept with the cancelled
/// turn, and never show in the next one.
#[test]
fn late_updates_after_a_cancel_stay_out_of_the_next_turn() {
    let mut v = TurnView::default();
    run(&mut v, &[AGENT_A, CALL]);
    assert_eq!(finish(&mut v, "cancelled"), ["turn finished cancelled"]);
    // The agent's tool was still running: its last output and a chunk
    // arrive after the cancel was answered.
    let late = run(
        &mut v,
        &[
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}"#,
            AGENT_A2,
        ],
    );
    assert_eq!(late.len(), 4, "{late:?}");
    assert_eq!(
        late[0],
        "problem: update after the end of the turn (tool call \"t\")"
    );
    assert_eq!(late[2], "problem: update after the end of the turn");
    assert_eq!(v.stop_reason().unwrap().as_str(), "cancelled");
    // The next prompt: nothing of the cancelled turn is in it.
    v.begin_turn();
    let next = run(&mut v, &[AGENT_B]);
    assert_eq!(next, ["text Agent [b] \"Bye\" (message 3 bytes)"]);
    assert_eq!(v.messages().len(), 1);
    assert_eq!(v.messages()[0].text(), "Bye");
    assert!(v.tool_calls().is_empty());
}
