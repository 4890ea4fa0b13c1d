//! `acp-mock-agent --protocol 2` through the binary: the v2 turn, resume
//! from the start and from the mock's own cursor (in a second process
//! reading the sessions the first saved), `session/list`, `close` and
//! `delete`. Every message the mock sends is checked against the v2 JSON
//! schema (`scripts/check_acp_schema.py --v2`, Python's `jsonschema`;
//! skipped without it unless `ACP_SCHEMA_CHECK=require`).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// A mock agent speaking v2 on pipes; what it sends, kept for the schema
/// check with the definition each message's params or result must fit.
struct Mock {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// (definition, part, message) of every message received.
    seen: Vec<(Option<String>, Option<&'static str>, Value)>,
    /// Our requests' methods by id, to name their results' definitions.
    asked: std::collections::HashMap<u64, &'static str>,
    next_id: u64,
}

impl Mock {
    fn start(state_dir: &Path) -> Self {
        Self::start_with(state_dir, &[])
    }

    fn start_with(state_dir: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_acp-mock-agent"))
            .args(["--protocol", "2", "--state-dir"])
            .arg(state_dir)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            asked: Default::default(),
            next_id: 0,
        }
    }

    fn write(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// Sends a request; its id.
    fn request(&mut self, method: &'static str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.asked.insert(id, method);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message from the mock, noted for the schema check.
    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("the mock said nothing for 10 s");
        let message: Value = serde_json::from_str(&line).unwrap();
        let (def, part) = match (message.get("method"), message.get("id")) {
            (Some(m), _) if m == "session/update" => (Some("UpdateSessionNotification"), "params"),
            (Some(m), _) if m == "session/request_permission" => {
                (Some("RequestPermissionRequest"), "params")
            }
            (Some(m), _) if m == "$/cancel_request" => {
                (Some("CancelRequestNotification"), "params")
            }
            (Some(_), _) => (None, "params"),
            (None, Some(id)) if message.get("result").is_some() => {
                let method = id.as_u64().and_then(|id| self.asked.get(&id)).copied();
                let def = match method {
                    Some("initialize") => Some("InitializeResponse"),
                    Some("session/new") => Some("NewSessionResponse"),
                    Some("session/prompt") => Some("PromptResponse"),
                    Some("session/resume") => Some("ResumeSessionResponse"),
                    Some("session/list") => Some("ListSessionsResponse"),
                    Some("session/close") => Some("CloseSessionResponse"),
                    Some("session/delete") => Some("DeleteSessionResponse"),
                    Some("tool_call/cancel") => Some("CancelToolCallResponse"),
                    _ => None,
                };
                (def, "result")
            }
            _ => (Some("Error"), "error"),
        };
        self.seen
            .push((def.map(str::to_owned), Some(part), message.clone()));
        message
    }

    /// Messages until the answer to request `id`; the answer last.
    fn until_answer(&mut self, id: u64) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let m = self.next();
            let done = m.get("method").is_none() && m["id"] == json!(id);
            out.push(m);
            if done {
                return out;
            }
        }
    }

    /// Messages until the idle `state_update` that ends a turn (answering
    /// permission requests with `option`); that update last.
    fn until_idle(&mut self, option: &str) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let m = self.next();
            if m["method"] == "session/request_permission" {
                let outcome = if option == "cancelled" {
                    json!({"outcome": "cancelled"})
                } else {
                    json!({"outcome": "selected", "optionId": option})
                };
                self.write(
                    &json!({"jsonrpc": "2.0", "id": m["id"], "result": {"outcome": outcome}}),
                );
            }
            let idle = m["params"]["update"]["state"] == "idle"
                && m["params"]["update"].get("stopReason").is_some();
            out.push(m);
            if idle {
                return out;
            }
        }
    }

    fn initialize(&mut self) {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 2, "info": {"name": "test", "version": "1"}, "capabilities": {}}),
        );
        let answer = self.until_answer(id).pop().unwrap();
        assert_eq!(answer["result"]["protocolVersion"], 2, "{answer}");
        assert!(answer["result"]["capabilities"]["session"]["delete"].is_object());
    }

    /// `session/new` in `cwd`; the session id.
    fn new_session(&mut self, cwd: &Path) -> String {
        let id = self.request("session/new", json!({"cwd": cwd}));
        let answer = self.until_answer(id).pop().unwrap();
        answer["result"]["sessionId"].as_str().unwrap().to_owned()
    }

    /// A prompt's answer, then its turn until the idle update.
    fn turn(&mut self, sid: &str, option: &str) -> (Value, Vec<Value>) {
        let id = self.request(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "look around"}]}),
        );
        let answer = self.next();
        assert_eq!(answer["id"], json!(id), "the answer comes first: {answer}");
        (answer, self.until_idle(option))
    }

    /// Validates everything received against the v2 schema.
    fn check_schema(&self) {
        // One file per check: the tests of this binary run at once, and a
        // file named by the process alone was written by two of them.
        static CHECKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let path = dir.join(format!("mock-v2-{}-{n}.ndjson", std::process::id()));
        let mut f = std::fs::File::create(&path).unwrap();
        for (def, part, message) in &self.seen {
            writeln!(
                f,
                "{}",
                json!({"def": def, "part": part, "message": message})
            )
            .unwrap();
        }
        drop(f);
        let require = std::env::var("ACP_SCHEMA_CHECK").is_ok_and(|v| v == "require");
        let has = Command::new("python3")
            .args(["-c", "import jsonschema"])
            .status()
            .is_ok_and(|s| s.success());
        if !has {
            assert!(
                !require,
                "ACP_SCHEMA_CHECK=require but no python3 jsonschema"
            );
            eprintln!("skipped: python3 with jsonschema not found");
            return;
        }
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/check_acp_schema.py"
        );
        let out = Command::new("python3")
            .args([script, "--v2"])
            .arg(&path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "schema check failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{stdout}");
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `sessionUpdate` kinds of `messages`, in order, `request` for our
/// permission requests and `answer` for answers.
fn kinds(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m["params"]["update"]["sessionUpdate"].as_str() {
            Some("state_update") => {
                format!("state:{}", m["params"]["update"]["state"].as_str().unwrap())
            }
            Some(kind) => kind.to_owned(),
            None if m.get("method").is_some() => m["method"].as_str().unwrap().to_owned(),
            None => "answer".to_owned(),
        })
        .collect()
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mock-v2-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_v2_turn_then_resumes_list_close_and_delete() {
    let dir = tempdir("turn");
    let mut mock = Mock::start(&dir);
    // A v1 client is told what the mock speaks.
    let id = mock.request("initialize", json!({"protocolVersion": 1}));
    let refused = mock.until_answer(id).pop().unwrap();
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"requested": 1, "supported": [2]})
    );
    mock.initialize();
    let sid = mock.new_session(&dir);

    let (answer, turn) = mock.turn(&sid, "proceed_once");
    assert_eq!(answer["result"]["messageId"], "user-1");
    assert_eq!(
        kinds(&turn),
        [
            "user_message",
            "state:running",
            "agent_thought_chunk",
            "agent_message_chunk",
            "agent_message_chunk",
            "plan_update",
            "tool_call_update",
            "state:requires_action",
            "session/request_permission",
            "state:running",
            "tool_call_update",
            "tool_call_content_chunk",
            "tool_call_content_chunk",
            "tool_call_update",
            "plan_update",
            "agent_message_chunk",
            "agent_message",
            "plan_update",
            "state:idle",
        ]
    );
    let update = |i: usize| &turn[i]["params"]["update"];
    assert_eq!(update(0)["messageId"], "user-1");
    assert_eq!(update(0)["content"][0]["text"], "look around");
    // The first tool call update creates it; its content streams in chunks.
    assert_eq!(
        (
            update(6)["toolCallId"].as_str(),
            update(6)["status"].as_str()
        ),
        (Some("shell-1"), Some("pending"))
    );
    assert_eq!(
        turn[8]["params"]["subject"]["toolCall"]["toolCallId"],
        "shell-1"
    );
    assert_eq!(update(11)["content"]["content"]["text"], "README.md\n");
    assert_eq!(update(13)["status"], "completed");
    // A message streamed, then replaced whole under the same id.
    assert_eq!(update(15)["messageId"], update(16)["messageId"]);
    assert!(update(16)["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Done: the project"));
    assert_eq!(update(18)["stopReason"], "end_turn");
    // Every history update carries its index: 0 to 13, the state ones none.
    let indexes: Vec<u64> = turn
        .iter()
        .filter_map(|m| m["params"]["_meta"]["acp-mock-agent"]["index"].as_u64())
        .collect();
    assert_eq!(indexes, (0..14).collect::<Vec<_>>());

    // A rejected permission fails the tool call; a cancelled one, the turn.
    let (_, rejected) = mock.turn(&sid, "cancel");
    assert!(rejected
        .iter()
        .any(|m| m["params"]["update"]["status"] == "failed"));
    assert_eq!(
        rejected.last().unwrap()["params"]["update"]["stopReason"],
        "end_turn"
    );
    let (_, cancelled) = mock.turn(&sid, "cancelled");
    assert_eq!(
        cancelled.last().unwrap()["params"]["update"]["stopReason"],
        "cancelled"
    );
    assert!(!kinds(&cancelled).contains(&"tool_call_content_chunk".to_owned()));
    // session/cancel during the permission request ends the turn too:
    // the request withdrawn ($/cancel_request), the client's -32800 taken
    // as its answer, the tool call ended saying so.
    let id = mock.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}),
    );
    assert_eq!(mock.next()["id"], json!(id));
    let asked = loop {
        let m = mock.next();
        if m["method"] == "session/request_permission" {
            mock.write(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}));
            break m["id"].clone();
        }
    };
    let withdrawn = mock.next();
    assert_eq!(withdrawn["method"], "$/cancel_request", "{withdrawn}");
    assert_eq!(withdrawn["params"]["requestId"], asked);
    mock.write(
        &json!({"jsonrpc": "2.0", "id": asked, "error": {"code": -32800, "message": "Cancelled"}}),
    );
    let ended = mock.until_idle("proceed_once");
    assert_eq!(
        kinds(&ended),
        ["tool_call_update", "state:idle"],
        "{ended:?}"
    );
    let update = &ended[0]["params"]["update"];
    assert_eq!(update["status"], "cancelled");
    assert!(
        update["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .ends_with("the client answered with error -32800."),
        "{update}"
    );
    assert_eq!(
        ended.last().unwrap()["params"]["update"]["stopReason"],
        "cancelled"
    );
    mock.check_schema();
    drop(mock);

    // Another process, the same saved sessions: resume from the start.
    let mut mock = Mock::start(&dir);
    mock.initialize();
    let id = mock.request(
        "session/resume",
        json!({"sessionId": sid, "cwd": dir, "replayFrom": {"type": "start"}}),
    );
    let replay = mock.until_answer(id);
    let (answer, replay) = replay.split_last().unwrap();
    assert_eq!(answer["result"], json!({}));
    let (snapshot, history) = replay.split_last().unwrap();
    assert_eq!(
        snapshot["params"]["update"],
        json!({"sessionUpdate": "state_update", "state": "idle"})
    );
    // The first turn's updates come back as they were sent, index and all.
    let live: Vec<&Value> = turn
        .iter()
        .filter(|m| m["params"]["_meta"]["acp-mock-agent"]["index"].is_u64())
        .collect();
    assert_eq!(history[..live.len()].iter().collect::<Vec<_>>(), live);
    // Four turns: 14 updates, 11 (rejected), 6 and 7 (cancelled at the
    // permission request, the last one withdrawn); no state update among
    // them.
    assert_eq!(history.len(), 38);
    assert!(!kinds(history).iter().any(|k| k.starts_with("state:")));
    let n = history.len();
    assert_eq!(
        history[n - 1]["params"]["_meta"]["acp-mock-agent"]["index"],
        json!(n - 1)
    );

    // From the mock's own cursor: the history from that index on.
    let from = n - 2;
    let cursor = json!({"type": "_acp-mock-agent/index", "index": from});
    let id = mock.request(
        "session/resume",
        json!({"sessionId": sid, "cwd": dir, "replayFrom": cursor}),
    );
    let replay = mock.until_answer(id);
    assert_eq!(
        replay.len(),
        4,
        "two updates, the state, the answer: {replay:?}"
    );
    assert_eq!(replay[0], history[from]);
    assert_eq!(replay[1], history[from + 1]);
    assert_eq!(replay[2]["params"]["update"]["state"], "idle");
    // Without replayFrom: the answer only. An unknown cursor: -32602.
    let id = mock.request("session/resume", json!({"sessionId": sid, "cwd": dir}));
    assert_eq!(mock.until_answer(id).len(), 1);
    let id = mock.request(
        "session/resume",
        json!({"sessionId": sid, "cwd": dir, "replayFrom": {"type": "_other"}}),
    );
    assert_eq!(
        mock.until_answer(id).pop().unwrap()["error"]["code"],
        -32602
    );

    // list, close, delete.
    let other = mock.new_session(Path::new("/"));
    let id = mock.request("session/list", json!({}));
    let listed = mock.until_answer(id).pop().unwrap();
    assert_eq!(
        listed["result"]["sessions"],
        json!([
            {"sessionId": sid, "cwd": dir, "title": "look around"},
            {"sessionId": other, "cwd": "/"},
        ])
    );
    let id = mock.request("session/list", json!({"cwd": "/"}));
    assert_eq!(
        mock.until_answer(id).pop().unwrap()["result"]["sessions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let id = mock.request("session/close", json!({"sessionId": sid}));
    assert_eq!(mock.until_answer(id).pop().unwrap()["result"], json!({}));
    let id = mock.request("session/list", json!({}));
    assert_eq!(
        mock.until_answer(id).pop().unwrap()["result"]["sessions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(dir.join(format!("{sid}.jsonl")).exists());
    let id = mock.request("session/delete", json!({"sessionId": sid}));
    assert_eq!(mock.until_answer(id).pop().unwrap()["result"], json!({}));
    assert!(!dir.join(format!("{sid}.jsonl")).exists());
    let id = mock.request("session/list", json!({}));
    let listed = mock.until_answer(id).pop().unwrap();
    assert_eq!(
        listed["result"]["sessions"],
        json!([{"sessionId": other, "cwd": "/"}])
    );
    for method in ["session/resume", "session/close", "session/delete"] {
        let id = mock.request(method, json!({"sessionId": sid, "cwd": dir}));
        let refused = mock.until_answer(id).pop().unwrap();
        assert_eq!(refused["error"]["code"], -32002, "{method}: {refused}");
        assert_eq!(refused["error"]["data"]["sessionId"], json!(sid));
    }
    // A v1 method is not there.
    let id = mock.request(
        "session/load",
        json!({"sessionId": other, "cwd": "/", "mcpServers": []}),
    );
    assert_eq!(
        mock.until_answer(id).pop().unwrap()["error"]["code"],
        -32601
    );
    mock.check_schema();
}

/// `--cancellable-tool`: a tool call advertising `capabilities.cancel`,
/// cancelled with `tool_call/cancel` (`{}`, then the final update clearing
/// the capabilities; the turn goes on), and `-32602` for an unknown or
/// final one. `--permission-timeout-ms`: an unanswered permission request
/// withdrawn, the turn going on without the tool call.
#[test]
fn a_cancellable_tool_call_and_a_withdrawn_permission() {
    let dir = tempdir("cancel");
    let mut mock = Mock::start_with(
        &dir,
        &["--cancellable-tool", "--permission-timeout-ms", "50"],
    );
    mock.initialize();
    let sid = mock.new_session(&dir);
    let id = mock.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
    );
    assert_eq!(mock.next()["id"], json!(id));
    let mut seen = Vec::new();
    // The permission request goes unanswered: withdrawn.
    let asked = loop {
        let m = mock.next();
        seen.push(m.clone());
        if m["method"] == "session/request_permission" {
            break m["id"].clone();
        }
    };
    let withdrawn = mock.next();
    assert_eq!(withdrawn["method"], "$/cancel_request", "{withdrawn}");
    assert_eq!(withdrawn["params"]["requestId"], asked);
    mock.write(
        &json!({"jsonrpc": "2.0", "id": asked, "result": {"outcome": {"outcome": "cancelled"}}}),
    );
    let task = loop {
        let m = mock.next();
        let update = m["params"]["update"].clone();
        seen.push(m);
        if update["capabilities"]["cancel"].is_object() {
            break update;
        }
    };
    assert_eq!(
        (task["toolCallId"].as_str(), task["status"].as_str()),
        (Some("task-1"), Some("in_progress"))
    );
    let cancel = |mock: &mut Mock, tool: &str| {
        let id = mock.request(
            "tool_call/cancel",
            json!({"sessionId": sid, "toolCallId": tool}),
        );
        mock.until_answer(id)
    };
    let unknown = cancel(&mut mock, "shell-1");
    assert_eq!(unknown.last().unwrap()["error"]["code"], -32602);
    let accepted = cancel(&mut mock, "task-1");
    assert_eq!(accepted.last().unwrap()["result"], json!({}));
    let rest = mock.until_idle("proceed_once");
    let done = &rest[0]["params"]["update"];
    assert_eq!(done["toolCallId"], "task-1", "{rest:?}");
    assert_eq!(done["status"], "cancelled");
    assert!(done["capabilities"].is_null() && done.get("capabilities").is_some());
    assert_eq!(
        rest.last().unwrap()["params"]["update"]["stopReason"],
        "end_turn"
    );
    let last = cancel(&mut mock, "task-1");
    assert_eq!(last.last().unwrap()["error"]["code"], -32602);
    // The withdrawal's update says what the client answered; the shell
    // tool call never ran.
    let all: Vec<Value> = seen.into_iter().chain(rest).collect();
    assert!(
        all.iter()
            .any(|m| m["params"]["update"]["content"][0]["content"]["text"]
                .as_str()
                .is_some_and(|t| t.ends_with("answered with the cancelled outcome."))),
        "{all:?}"
    );
    assert!(!kinds(&all).contains(&"tool_call_content_chunk".to_owned()));
    mock.check_schema();
}
