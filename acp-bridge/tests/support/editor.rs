//! A scripted editor on `acp-client --stdio`'s stdin and stdout, as Zed
//! or any ACP client that starts agents on stdio would be: it sends
//! `initialize` (with the `fs` capabilities), `session/new` and prompts,
//! serves the agent's `fs/read_text_file` and `fs/write_text_file` from
//! memory, allows every permission request, and records everything it
//! was sent. The process is killed on drop.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Longest wait for one message from the relay.
pub const WAIT: Duration = Duration::from_secs(30);

/// The editor and the `acp-client --stdio` it runs.
pub struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::Receiver<Value>,
    /// `acp-client`'s stderr so far.
    pub stderr: Arc<Mutex<String>>,
    next_id: u64,
    /// Every message the editor was sent, in order.
    pub seen: Vec<Value>,
    /// The files the agent read or wrote through the editor.
    pub files: BTreeMap<String, String>,
    /// How many `fs/*` requests the editor served.
    pub fs_requests: usize,
    /// How many permission requests it allowed.
    pub permissions: usize,
    /// While set, permission requests are kept unanswered in `held` (a
    /// person away from the keyboard).
    pub hold_permissions: bool,
    /// The permission requests left unanswered.
    pub held: Vec<Value>,
}

impl Editor {
    /// Starts `acp-client --stdio` with `args` (the server's address and
    /// the like) and `envs`.
    pub fn start(args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_acp-client"))
            .arg("--stdio")
            .args(args)
            .env_remove("ACP_BRIDGE_TOKEN")
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn acp-client --stdio");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON from the relay ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { return };
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            rx,
            stderr,
            next_id: 1,
            seen: Vec::new(),
            files: BTreeMap::new(),
            fs_requests: 0,
            permissions: 0,
            hold_permissions: false,
            held: Vec::new(),
        }
    }

    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message, with the agent's requests served on the way;
    /// `None` after `within` without one.
    pub fn next(&mut self, within: Duration) -> Option<Value> {
        let message = self.rx.recv_timeout(within).ok()?;
        assert!(
            message.get("_meta").is_none(),
            "no position stamp reaches the editor: {message}"
        );
        self.seen.push(message.clone());
        if let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) {
            if self.hold_permissions && method == "session/request_permission" {
                self.held.push(message.clone());
                return Some(message);
            }
            let result = self.serve(method, &message["params"]);
            let id = id.clone();
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
        }
        Some(message)
    }

    /// What the editor answers a request of the agent.
    fn serve(&mut self, method: &str, params: &Value) -> Value {
        let path = params["path"].as_str().unwrap_or_default().to_owned();
        match method {
            "session/request_permission" => {
                self.permissions += 1;
                let option = params["options"]
                    .as_array()
                    .and_then(|o| o.iter().find(|o| o["kind"] == "allow_once"))
                    .map_or(json!("allow"), |o| o["optionId"].clone());
                json!({"outcome": {"outcome": "selected", "optionId": option}})
            }
            "fs/read_text_file" => {
                self.fs_requests += 1;
                let text = self
                    .files
                    .get(&path)
                    .cloned()
                    .unwrap_or_else(|| "# Demo\n\nA tiny project.\n".to_owned());
                json!({ "content": text })
            }
            "fs/write_text_file" => {
                self.fs_requests += 1;
                let text = params["content"].as_str().unwrap_or_default().to_owned();
                self.files.insert(path, text);
                json!(null)
            }
            other => panic!("the editor does not serve {other}"),
        }
    }

    /// Waits for the answer to request `id` (serving the agent's requests
    /// meanwhile); the answer, or a panic naming `what` after [`WAIT`]
    /// without a message.
    pub fn answer(&mut self, id: u64, what: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let Some(message) = self.next(WAIT) else {
                panic!(
                    "no answer to {what} (id {id}) within {WAIT:?}; acp-client said:\n{}",
                    self.stderr.lock().unwrap()
                );
            };
            if message.get("method").is_none() && message["id"] == json!(id) {
                return message;
            }
            assert!(Instant::now() < deadline, "{what} never answered");
        }
    }

    /// `initialize` with the `fs` capabilities; its answer.
    pub fn initialize(&mut self) -> Value {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}),
        );
        self.answer(id, "initialize")
    }

    /// `session/new` in `cwd`; the session's id.
    pub fn new_session(&mut self, cwd: &str) -> String {
        let id = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        let answer = self.answer(id, "session/new");
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_owned()
    }

    /// Sends a prompt; its request id.
    pub fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// The `session/update`s of `session` seen from message `from` on.
    pub fn updates(&self, session: &str, from: usize) -> Vec<Value> {
        self.seen[from..]
            .iter()
            .filter(|m| m["method"] == "session/update" && m["params"]["sessionId"] == session)
            .map(|m| m["params"]["update"].clone())
            .collect()
    }

    /// Closes stdin (the editor is done) and waits for the relay to end;
    /// whether it ended with status 0.
    pub fn finish(mut self) -> bool {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
