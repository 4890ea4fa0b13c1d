//! The examples' shared code, tested in-process: the mock agent under many
//! concurrent sessions and overlapping prompts (as the WebSocket bridge
//! drives it), cancellation, unknown methods; the `fs/*` confinement.

use acp_codec::acp::Mode;
use std::collections::HashMap;
use std::time::Duration;

use acp_bridge::lines::{LineReader, LineSender, LineSource};
use acp_bridge::{confined, mock_agent};
use acp_codec::acp::{Message, RequestParams};
use acp_codec::codec::LineCodec;
use serde_json::{json, Value};
use tokio_util::codec::FramedRead;

/// A test client on one end of an in-process pipe to the mock agent.
struct Peer {
    reader: LineReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    out: LineSender,
    next_id: i64,
}

impl Peer {
    fn start(options: mock_agent::Options) -> Self {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (r, w) = tokio::io::split(theirs);
        tokio::spawn(async move { mock_agent::serve(r, w, options).await.unwrap() });
        let (r, w) = tokio::io::split(ours);
        Self {
            reader: FramedRead::new(r, LineCodec::new()),
            out: LineSender::spawn(w),
            next_id: 100,
        }
    }

    async fn send(&self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.out.send(line).await.unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.reader.next_line())
            .await
            .expect("agent answers within 10 s")
            .unwrap()
            .expect("agent still connected")
            .expect("a good line");
        // Every line the agent sends is a valid ACP message, typed by method.
        let msg = Message::decode(&line).unwrap();
        if let Message::Request(r) = &msg {
            let typed = r.typed(Mode::Lenient).unwrap();
            assert!(typed.is_clean(), "{line}: {:?}", typed.salvaged);
            assert!(!matches!(
                typed.value,
                RequestParams::Unknown { .. } | RequestParams::Ext { .. }
            ));
        }
        serde_json::from_str(&line).unwrap()
    }

    /// Reads until the response to `id`, answering the agent's requests
    /// (allow every permission, serve fs from a map) along the way.
    async fn until_response(&mut self, id: i64, files: &mut HashMap<String, String>) -> Value {
        loop {
            let m = self.recv().await;
            if m.get("method").is_some() && m.get("id").is_some() {
                self.answer(&m, files, "proceed_once").await;
            } else if m.get("id") == Some(&json!(id)) {
                return m;
            }
        }
    }

    async fn answer(&self, m: &Value, files: &mut HashMap<String, String>, option: &str) {
        let id = m["id"].clone();
        let p = &m["params"];
        let reply = match m["method"].as_str().unwrap() {
            "session/request_permission" => {
                json!({"result": {"outcome": {"outcome": "selected", "optionId": option}}})
            }
            "fs/read_text_file" => match files.get(p["path"].as_str().unwrap()) {
                Some(text) => json!({"result": {"content": text}}),
                None => json!({"error": {"code": -32002, "message": "Resource not found"}}),
            },
            "fs/write_text_file" => {
                files.insert(
                    p["path"].as_str().unwrap().to_owned(),
                    p["content"].as_str().unwrap().to_owned(),
                );
                json!({"result": {}})
            }
            other => panic!("unexpected request {other}"),
        };
        let mut v = json!({"jsonrpc": "2.0", "id": id});
        v.as_object_mut()
            .unwrap()
            .extend(reply.as_object().unwrap().clone());
        self.send(v).await;
    }

    async fn initialize(&mut self) {
        let id = self
            .request(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}),
            )
            .await;
        let r = self.until_response(id, &mut HashMap::new()).await;
        assert_eq!(r["result"]["protocolVersion"], 1);
    }

    async fn new_session(&mut self, cwd: &str) -> String {
        let id = self
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        let r = self.until_response(id, &mut HashMap::new()).await;
        r["result"]["sessionId"].as_str().unwrap().to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sessions_with_overlapping_prompts() {
    let mut peer = Peer::start(mock_agent::Options::default());
    peer.initialize().await;
    let mut sessions = Vec::new();
    for i in 0..50 {
        sessions.push(peer.new_session(&format!("/p/{i}")).await);
    }
    let mut prompts = HashMap::new();
    for s in &sessions {
        let id = peer
            .request(
                "session/prompt",
                json!({"sessionId": s, "prompt": [{"type": "text", "text": "go"}]}),
            )
            .await;
        prompts.insert(id, s.clone());
    }
    // All 50 turns interleave; answer everything until every prompt is done.
    let mut files = HashMap::new();
    let mut stops = HashMap::new();
    let mut updates: HashMap<String, usize> = HashMap::new();
    while stops.len() < prompts.len() {
        let m = peer.recv().await;
        if m.get("method").is_some() && m.get("id").is_some() {
            peer.answer(&m, &mut files, "proceed_once").await;
        } else if m["method"] == "session/update"
            && m["params"]["update"]["sessionUpdate"] != "available_commands_update"
        {
            *updates
                .entry(m["params"]["sessionId"].as_str().unwrap().to_owned())
                .or_default() += 1;
        } else if let Some(id) = m["id"].as_i64() {
            stops.insert(id, m["result"]["stopReason"].as_str().unwrap().to_owned());
        }
    }
    assert!(stops.values().all(|r| r == "end_turn"), "{stops:?}");
    // Each session wrote its own notes, in its own directory.
    assert_eq!(files.len(), 50);
    assert!(files
        .keys()
        .all(|k| k.starts_with("/p/") && k.ends_with("/NOTES.md")));
    let counts: Vec<usize> = sessions.iter().map(|s| updates[s]).collect();
    assert!(
        counts.iter().all(|&n| n == counts[0] && n > 10),
        "{counts:?}"
    );
}

#[tokio::test]
async fn cancel_and_a_newer_prompt_end_turns_cancelled() {
    let mut peer = Peer::start(mock_agent::Options {
        big_bytes: 0,
        step_delay: Duration::from_millis(50),
        ..mock_agent::Options::default()
    });
    peer.initialize().await;
    let s = peer.new_session("/p").await;
    let prompt = |text: &str| json!({"sessionId": s, "prompt": [{"type": "text", "text": text}]});
    let first = peer.request("session/prompt", prompt("one")).await;
    // A second prompt on the same session cancels the first (as Gemini does).
    let second = peer.request("session/prompt", prompt("two")).await;
    let mut files = HashMap::new();
    let r = peer.until_response(first, &mut files).await;
    assert_eq!(r["result"]["stopReason"], "cancelled");
    // session/cancel ends the second one.
    peer.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}}))
        .await;
    let r = peer.until_response(second, &mut files).await;
    assert_eq!(r["result"]["stopReason"], "cancelled");
    // The session still works.
    let third = peer.request("session/prompt", prompt("three")).await;
    let r = peer.until_response(third, &mut files).await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
}

#[tokio::test]
async fn unknown_methods_bad_params_and_bad_lines() {
    let mut peer = Peer::start(mock_agent::Options::default());
    let id = peer.request("session/fly", json!({})).await;
    let r = peer.recv().await;
    assert_eq!(
        (r["id"].as_i64(), r["error"]["code"].as_i64()),
        (Some(id), Some(-32601))
    );
    let id = peer.request("session/new", json!({"cwd": 5})).await;
    let r = peer.recv().await;
    assert_eq!(
        (r["id"].as_i64(), r["error"]["code"].as_i64()),
        (Some(id), Some(-32602))
    );
    let id = peer
        .request("session/new", json!({"cwd": "relative", "mcpServers": []}))
        .await;
    let r = peer.recv().await;
    assert_eq!(
        (r["id"].as_i64(), r["error"]["code"].as_i64()),
        (Some(id), Some(-32602))
    );
    let id = peer
        .request("session/prompt", json!({"sessionId": "nope", "prompt": []}))
        .await;
    let r = peer.recv().await;
    assert_eq!(
        (r["id"].as_i64(), r["error"]["code"].as_i64()),
        (Some(id), Some(-32602))
    );
    peer.out
        .send(b"Loaded cached credentials.\n".to_vec())
        .await
        .unwrap();
    let r = peer.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].as_i64()),
        (Value::Null, Some(-32700))
    );
    // A notification for an unknown method is ignored; the agent goes on.
    peer.send(json!({"jsonrpc": "2.0", "method": "_x/ping"}))
        .await;
    peer.initialize().await;
}

#[tokio::test]
async fn sessions_listed_loaded_with_their_history_and_resumed() {
    let mut peer = Peer::start(mock_agent::Options::default());
    let id = peer
        .request("initialize", json!({"protocolVersion": 1}))
        .await;
    let r = peer.until_response(id, &mut HashMap::new()).await;
    let caps = &r["result"]["agentCapabilities"];
    assert_eq!(caps["loadSession"], true, "{r}");
    assert_eq!(
        caps["sessionCapabilities"],
        json!({"list": {}, "resume": {}})
    );
    let here = &r["result"]["_meta"]["acp-mock-agent"];
    assert_eq!(here["pid"], std::process::id());
    assert_eq!(here["home"], std::env::var("HOME").unwrap_or_default());
    let a = peer.new_session("/work/a").await;
    let b = peer.new_session("/work/b").await;
    // One turn in a: its updates are a's history.
    let mut files = HashMap::new();
    let id = peer
        .request(
            "session/prompt",
            json!({"sessionId": a, "prompt": [{"type": "text", "text": "first words"}]}),
        )
        .await;
    let mut live = Vec::new();
    loop {
        let m = peer.recv().await;
        if m.get("method").is_some() && m.get("id").is_some() {
            peer.answer(&m, &mut files, "proceed_once").await;
        } else if m["method"] == "session/update" && m["params"]["sessionId"] == json!(a) {
            live.push(m["params"]["update"].clone());
        } else if m["id"] == json!(id) {
            break;
        }
    }
    let id = peer.request("session/list", json!({})).await;
    let r = peer.recv().await;
    assert_eq!(r["id"], json!(id));
    let listed: Vec<&Value> = r["result"]["sessions"].as_array().unwrap().iter().collect();
    assert_eq!(listed.len(), 2, "{r}");
    assert_eq!(
        (
            listed[0]["sessionId"].as_str(),
            listed[0]["cwd"].as_str(),
            listed[0]["title"].as_str()
        ),
        (Some(a.as_str()), Some("/work/a"), Some("first words"))
    );
    assert_eq!(listed[1]["sessionId"], json!(b));
    let id = peer
        .request("session/list", json!({"cwd": "/work/b"}))
        .await;
    let r = peer.recv().await;
    assert_eq!(
        r["result"]["sessions"].as_array().map(Vec::len),
        Some(1),
        "{id} {r}"
    );
    // session/load: the history (the commands sent after session/new, the
    // prompt, then what the turn sent live), then the answer.
    let id = peer
        .request(
            "session/load",
            json!({"sessionId": a, "cwd": "/work/a2", "mcpServers": []}),
        )
        .await;
    let mut replayed = Vec::new();
    let answer = loop {
        let m = peer.recv().await;
        if m["id"] == json!(id) {
            break m;
        }
        assert_eq!(m["method"], "session/update", "{m}");
        assert_eq!(m["params"]["sessionId"], json!(a));
        replayed.push(m["params"]["update"].clone());
    };
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(replayed[0]["sessionUpdate"], "available_commands_update");
    assert_eq!(
        replayed[1],
        json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "first words"}})
    );
    assert!(live.len() > 5);
    assert_eq!(replayed[2..], live[..]);
    // session/resume: the answer, nothing replayed; the next message is
    // the answer to the next request.
    let id = peer
        .request("session/resume", json!({"sessionId": b, "cwd": "/work/b"}))
        .await;
    let r = peer.recv().await;
    assert_eq!(r["id"], json!(id), "{r}");
    assert!(r.get("result").is_some(), "{r}");
    // The cwd of a's load applies from now on.
    let id = peer
        .request("session/list", json!({"cwd": "/work/a2"}))
        .await;
    let r = peer.recv().await;
    assert_eq!(
        r["result"]["sessions"][0]["sessionId"],
        json!(a),
        "{id} {r}"
    );
    // Unknown sessions: -32602.
    for method in ["session/load", "session/resume"] {
        let id = peer
            .request(
                method,
                json!({"sessionId": "nope", "cwd": "/", "mcpServers": []}),
            )
            .await;
        let r = peer.recv().await;
        assert_eq!(
            (r["id"].as_i64(), r["error"]["code"].as_i64()),
            (Some(id), Some(-32602)),
            "{method}: {r}"
        );
    }
}

#[tokio::test]
async fn rejected_permissions_and_a_big_output() {
    let mut peer = Peer::start(mock_agent::Options {
        big_bytes: 300_000,
        step_delay: Duration::ZERO,
        ..mock_agent::Options::default()
    });
    peer.initialize().await;
    let s = peer.new_session("/p").await;
    let id = peer
        .request(
            "session/prompt",
            json!({"sessionId": s, "prompt": [{"type": "text", "text": "x"}]}),
        )
        .await;
    let mut files = HashMap::from([("/p/README.md".to_owned(), "# p\n".to_owned())]);
    let mut failed = 0;
    let mut largest = 0;
    loop {
        let m = peer.recv().await;
        largest = largest.max(m.to_string().len());
        if m["method"] == "session/request_permission" {
            peer.answer(&m, &mut files, "cancel").await; // Gemini's reject option
        } else if m.get("method").is_some() && m.get("id").is_some() {
            peer.answer(&m, &mut files, "").await;
        } else if m["params"]["update"]["status"] == "failed" {
            failed += 1;
        } else if m["id"] == json!(id) {
            assert_eq!(m["result"]["stopReason"], "end_turn");
            break;
        }
    }
    assert_eq!(failed, 2, "both gated tools fail when rejected");
    assert_eq!(files.len(), 1, "nothing written");
    assert!(largest > 300_000);
}

#[cfg(unix)]
#[test]
fn confinement_follows_symlinks() {
    let base = std::env::temp_dir().join(format!("acp-codec-confined-{}", std::process::id()));
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), root.join("link")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("dirlink")).unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join("srclink")).unwrap();
    let c = confined::Confined::new(&root).unwrap();
    let real = c.root().to_path_buf();
    let p = |rel: &str| format!("{}/{rel}", root.display());

    assert_eq!(c.resolve(&p("src")).unwrap(), real.join("src"));
    assert_eq!(
        c.resolve(&p("new/dir/file.txt")).unwrap(),
        real.join("new/dir/file.txt")
    );
    assert_eq!(
        c.resolve(&p("srclink/a.rs")).unwrap(),
        real.join("src/a.rs")
    );
    assert_eq!(
        c.resolve(&p("src/../src/a.rs")).unwrap(),
        real.join("src/a.rs")
    );
    for bad in [
        p("link"),
        p("dirlink/secret"),
        p("dirlink/new.txt"),
        p("../outside/secret"),
        p("missing/../../outside/secret"),
        "relative/path".to_owned(),
        "/".to_owned(),
    ] {
        let e = c.resolve(&bad).unwrap_err();
        assert_eq!(e.code.0, -32602, "{bad}: {}", e.message);
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        c.write(&p("new/notes.md"), "a\nb\nc\n").await.unwrap();
        assert_eq!(
            c.read(&p("new/notes.md"), Some(2), Some(1)).await.unwrap(),
            "b\n"
        );
        assert_eq!(
            c.read(&p("new/notes.md"), None, None).await.unwrap(),
            "a\nb\nc\n"
        );
        assert_eq!(
            c.read(&p("nope.md"), None, None).await.unwrap_err().code.0,
            -32002
        );
        assert_eq!(c.write(&p("link"), "x").await.unwrap_err().code.0, -32602);
    });
    assert_eq!(
        std::fs::read_to_string(outside.join("secret")).unwrap(),
        "s"
    );
    std::fs::remove_dir_all(&base).unwrap();
}

/// `acp-bridge`'s token file: a good file loads (two users, their
/// permissions, each token found in full only); a bad one is refused, and
/// the error never quotes a token.
#[test]
fn token_file_parse_and_refuse() {
    use acp_bridge::users::TokenFile;
    use acp_codec::remote::Permissions;

    let dir = std::env::temp_dir().join(format!("acp-codec-users-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens.json");
    let load = |text: &str| {
        std::fs::write(&file, text).unwrap();
        TokenFile::load(&file)
    };

    let ok = r#"{"tokens":{"0123456789abcdef-ana":{"userId":"ana","permissions":["read","write"]},"0123456789abcdef-bo":{"userId":"bo","permissions":["read"]}}}"#;
    let users = load(ok).unwrap();
    let ana = users.lookup("0123456789abcdef-ana").unwrap();
    assert_eq!(
        (ana.user.as_str(), ana.permissions),
        ("ana", Permissions::READ_WRITE)
    );
    let bo = users.lookup("0123456789abcdef-bo").unwrap();
    assert_eq!(
        (bo.user.as_str(), bo.permissions),
        ("bo", Permissions::READ_ONLY)
    );
    assert!(users.lookup("0123456789abcdef").is_none());
    assert!(users.lookup("").is_none());

    for bad in [
        r#"{"tokens":{}}"#,
        r#"{"tokens":{"short":{"userId":"a","permissions":["read"]}}}"#,
        r#"{"tokens":{"0123456789abcdef-x":{"userId":"","permissions":["read"]}}}"#,
        r#"{"tokens":{"0123456789abcdef-x":{"userId":"a","permissions":["root"]}}}"#,
        r#"{"tokens":{"0123456789abcdef-x":{"userId":"a"}}}"#,
        "[]",
    ] {
        let err = load(bad).err().unwrap();
        assert!(!err.contains("0123456789abcdef"), "{err}");
        assert!(!err.contains("short"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With a state directory the mock keeps its sessions as a real agent
/// does: a new process (another server sharing the directory) lists them
/// and `session/load` replays exactly what the first one sent, and new
/// sessions get new ids.
#[tokio::test]
async fn sessions_saved_in_the_state_dir_load_in_a_new_process() {
    let dir = std::env::temp_dir().join(format!("acp-mock-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = || mock_agent::Options {
        state_dir: Some(dir.clone()),
        ..mock_agent::Options::default()
    };
    let updates_of = |m: &Value, s: &str| {
        (m["method"] == "session/update" && m["params"]["sessionId"] == s)
            .then(|| m["params"]["update"].clone())
    };
    let mut first = Peer::start(options());
    first.initialize().await;
    let s = first.new_session("/work/a").await;
    let mut sent = Vec::new();
    let id = first
        .request(
            "session/prompt",
            json!({"sessionId": s, "prompt": [{"type": "text", "text": "persist me"}]}),
        )
        .await;
    let mut files = HashMap::new();
    loop {
        let m = first.recv().await;
        if m.get("method").is_some() && m.get("id").is_some() {
            first.answer(&m, &mut files, "proceed_once").await;
        } else if let Some(u) = updates_of(&m, &s) {
            sent.push(u);
        } else if m.get("id") == Some(&json!(id)) {
            assert_eq!(m["result"]["stopReason"], "end_turn");
            break;
        }
    }
    drop(first);

    let mut second = Peer::start(options());
    second.initialize().await;
    let id = second.request("session/list", json!({})).await;
    let listed = second.until_response(id, &mut HashMap::new()).await;
    assert_eq!(listed["result"]["sessions"][0]["sessionId"], s.as_str());
    assert_eq!(listed["result"]["sessions"][0]["cwd"], "/work/a");
    assert_eq!(listed["result"]["sessions"][0]["title"], "persist me");
    let id = second
        .request(
            "session/load",
            json!({"sessionId": s, "cwd": "/work/b", "mcpServers": []}),
        )
        .await;
    let mut replayed = Vec::new();
    loop {
        let m = second.recv().await;
        if let Some(u) = updates_of(&m, &s) {
            replayed.push(u);
        } else if m.get("id") == Some(&json!(id)) {
            assert!(m.get("result").is_some(), "{m}");
            break;
        }
    }
    // The load replays what the first process sent (the commands update
    // of session/new, read here after its answer), with the user's prompt
    // in its place.
    assert_eq!(sent[0]["sessionUpdate"], "available_commands_update");
    assert_eq!(replayed[0], sent[0]);
    assert_eq!(replayed[1]["sessionUpdate"], "user_message_chunk");
    assert_eq!(replayed[1]["content"]["text"], "persist me");
    assert_eq!(replayed[2..], sent[1..]);
    let other = second.new_session("/work/c").await;
    assert_ne!(other, s);
    drop(second);
    // The load moved the session to /work/b, on disk too.
    let mut third = Peer::start(options());
    third.initialize().await;
    let id = third
        .request("session/list", json!({"cwd": "/work/b"}))
        .await;
    let listed = third.until_response(id, &mut HashMap::new()).await;
    assert_eq!(listed["result"]["sessions"].as_array().unwrap().len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two processes on one state directory at once (two servers' agents of
/// one user, while clients move from one server to the other): a session
/// one makes after the other started is loaded by the other from disk,
/// and neither hands out an id the other took.
#[tokio::test]
async fn two_live_processes_sharing_the_state_dir_never_clash() {
    let dir = std::env::temp_dir().join(format!("acp-mock-shared-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = || mock_agent::Options {
        state_dir: Some(dir.clone()),
        ..mock_agent::Options::default()
    };
    let mut a = Peer::start(options());
    a.initialize().await;
    let mut b = Peer::start(options());
    b.initialize().await;
    let made_by_a = a.new_session("/work/a").await;
    let made_by_b = b.new_session("/work/b").await;
    assert_ne!(made_by_a, made_by_b);
    let id = b
        .request(
            "session/load",
            json!({"sessionId": made_by_a, "cwd": "/work/a", "mcpServers": []}),
        )
        .await;
    let loaded = b.until_response(id, &mut HashMap::new()).await;
    assert!(loaded.get("result").is_some(), "{loaded}");
    let id = b
        .request(
            "session/load",
            json!({"sessionId": "../escape", "cwd": "/work/a", "mcpServers": []}),
        )
        .await;
    let refused = b.until_response(id, &mut HashMap::new()).await;
    assert!(refused.get("error").is_some(), "{refused}");
    drop((a, b));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `acp-client --session ID` continues a session a previous run created,
/// in a new agent process (the mock keeps its sessions in a state
/// directory, as real agents keep theirs).
#[test]
fn a_second_run_continues_the_session_of_the_first() {
    use std::process::{Command, Stdio};
    let base = std::env::temp_dir().join(format!("acp-continue-{}", std::process::id()));
    let (state, work) = (base.join("state"), base.join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let agent = format!(
        "{} --state-dir {}",
        env!("CARGO_BIN_EXE_acp-mock-agent"),
        state.display()
    );
    let run = |extra: &[&str]| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_acp-client"))
            .args([
                "--summary-json",
                "--permission",
                "allow",
                "--agent",
                &agent,
                "--cwd",
            ])
            .arg(&work)
            .args(extra)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
    };
    let first = run(&["first"]);
    assert_eq!(first["stopReason"], "end_turn", "{first}");
    let id = first["sessionId"].as_str().unwrap().to_owned();
    let second = run(&["--session", &id, "second"]);
    assert_eq!(second["stopReason"], "end_turn", "{second}");
    assert_eq!(second["sessionId"], id.as_str());
    // An unknown session is the agent's error, not a new session.
    let unknown = run(&["--session", "mock-session-999", "third"]);
    assert_eq!(unknown["stopReason"], Value::Null, "{unknown}");
    assert!(
        unknown["error"]
            .as_str()
            .unwrap()
            .contains("session not found"),
        "{unknown}"
    );
    let _ = std::fs::remove_dir_all(&base);
}
