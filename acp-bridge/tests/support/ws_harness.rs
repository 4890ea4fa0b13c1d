//! The harness of the tests that drive the `acp-bridge` example: the
//! binary on a free loopback port, and WebSocket clients that run turns.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message as WsMessage};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Longest wait for any one message.
pub const STEP: Duration = Duration::from_secs(30);

pub fn bridge_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        // A prebuilt binary (say, a release build for measurements).
        match std::env::var_os("WS_BRIDGE_EXE") {
            Some(exe) => PathBuf::from(exe),
            None => std::path::PathBuf::from(env!("CARGO_BIN_EXE_acp-bridge")),
        }
    })
}

pub fn scratch_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "acp-bridge_test_{}_{}_{}",
        std::process::id(),
        name,
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub struct Bridge {
    pub child: Child,
    pub addr: SocketAddr,
    pub dir: PathBuf,
    pub stderr: Arc<Mutex<String>>,
}

impl Bridge {
    pub fn start(name: &str, args: &[&str]) -> Self {
        Self::start_in(scratch_dir(name), args, &[])
    }

    pub fn start_in(dir: PathBuf, args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(bridge_exe())
            .envs(envs.iter().copied())
            .args(["--port", "0", "--log-dir"])
            .arg(&dir)
            .args(args)
            .env_remove("GEMINI_PORT")
            .env_remove("GEMINI_BRIDGE_TOKEN")
            .env_remove("GEMINI_BRIDGE_TOKEN_FILE")
            .env_remove("GEMINI_BRIDGE_REPLAY_BYTES")
            .env_remove("GEMINI_BRIDGE_AGENT")
            .env_remove("GEMINI_BRIDGE_ORIGINS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn acp-bridge");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        while !first.contains("listening on ws://") {
            first.clear();
            if err.read_line(&mut first).unwrap() == 0 {
                panic!("acp-bridge exited before listening");
            }
        }
        let addr = first
            .split("ws://")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or_else(|| panic!("no listening line: {first:?}"))
            .parse()
            .unwrap();
        let stderr = Arc::new(Mutex::new(first));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while err.read_line(&mut line).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Self {
            child,
            addr,
            dir,
            stderr,
        }
    }

    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The agent process: the bridge's child.
    pub fn agent_pid(&self) -> Option<u32> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.pid())).ok()?;
        for t in tasks.flatten() {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            if let Some(pid) = children.split_whitespace().next() {
                return pid.parse().ok();
            }
        }
        None
    }

    pub fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("bridge stderr:\n{}", self.stderr.lock().unwrap());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

pub type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

pub struct Client {
    pub ws: Ws,
    pub next_id: i64,
    /// Notifications and agent requests seen.
    pub seen: Vec<Value>,
    /// Bytes of text received.
    pub received: usize,
    pub largest: usize,
    /// Answer permission requests (otherwise the turn waits).
    pub answer: bool,
    /// The ACP version it speaks: 1, or 2 (a v2 turn ends with an idle
    /// `state_update`, not with the prompt's answer).
    pub protocol: u16,
}

#[derive(Debug, Default)]
pub struct Turn {
    pub stop_reason: String,
    pub message_chunks: usize,
    pub permission_requests: usize,
    pub largest: usize,
}

pub async fn connect_with(
    url: &str,
    bearer: Option<&str>,
    origin: Option<&str>,
) -> Result<Client, WsError> {
    let mut req = url.into_client_request()?;
    if let Some(t) = bearer {
        req.headers_mut()
            .insert("authorization", format!("Bearer {t}").parse().unwrap());
    }
    if let Some(o) = origin {
        req.headers_mut().insert("origin", o.parse().unwrap());
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(64 << 20))
        .max_frame_size(Some(64 << 20));
    let (ws, _) = tokio::time::timeout(
        STEP,
        tokio_tungstenite::connect_async_with_config(req, Some(config), true),
    )
    .await
    .expect("connect timed out")?;
    Ok(Client {
        ws,
        next_id: 1,
        seen: Vec::new(),
        received: 0,
        largest: 0,
        answer: true,
        protocol: 1,
    })
}

pub async fn connect(bridge: &Bridge) -> Client {
    connect_with(&bridge.url(), None, None)
        .await
        .expect("connect")
}

impl Client {
    pub async fn send_text(&mut self, text: String) {
        self.ws
            .send(WsMessage::Text(text.into()))
            .await
            .expect("send");
    }

    pub async fn send(&mut self, v: &Value) {
        self.send_text(v.to_string()).await;
    }

    /// The next text message, parsed; `None` on close.
    pub async fn recv(&mut self) -> Option<Value> {
        loop {
            let m = tokio::time::timeout(STEP, self.ws.next())
                .await
                .expect("no message within the step timeout");
            match m {
                Some(Ok(WsMessage::Text(t))) => {
                    self.received += t.len();
                    self.largest = self.largest.max(t.len());
                    return Some(
                        serde_json::from_str(t.as_str()).expect("bridge sent invalid json"),
                    );
                }
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => {}
            }
        }
    }

    /// Answers an agent request the way a simple client would.
    pub async fn answer_agent(&mut self, m: &Value) {
        let id = m["id"].clone();
        let reply = match m["method"].as_str().unwrap_or("") {
            "session/request_permission" => {
                json!({"jsonrpc":"2.0","id":id,"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}})
            }
            "fs/read_text_file" => {
                json!({"jsonrpc":"2.0","id":id,"result":{"content":"# test project\n"}})
            }
            "fs/write_text_file" => json!({"jsonrpc":"2.0","id":id,"result":{}}),
            _ => {
                json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"method not found"}})
            }
        };
        self.send(&reply).await;
    }

    /// Sends a request and waits for its response, answering the agent's
    /// requests meanwhile.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .await;
        self.response_to(id).await
    }

    pub async fn response_to(&mut self, id: i64) -> Value {
        loop {
            let m = self
                .recv()
                .await
                .unwrap_or_else(|| panic!("closed while waiting for response {id}"));
            if m.get("method").is_some() {
                if m.get("id").is_some() && self.answer {
                    self.answer_agent(&m).await;
                }
                self.seen.push(m);
                continue;
            }
            if m["id"] == json!(id) {
                return m;
            }
            panic!("unexpected response {m}");
        }
    }

    /// The connection's first message: `initialize` (the bridge closes a
    /// connection that starts with anything else).
    pub async fn init(&mut self) {
        let params = match self.protocol {
            1 => {
                json!({"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}}})
            }
            v => {
                json!({"protocolVersion":v,"capabilities":{},"info":{"name":"ws_harness","version":"1"}})
            }
        };
        let init = self.request("initialize", params).await;
        assert!(init.get("result").is_some(), "initialize failed: {init}");
    }

    pub async fn open_session(&mut self, cwd: &Path) -> String {
        if self.next_id == 1 {
            self.init().await;
        }
        let new = self
            .request(
                "session/new",
                json!({"cwd": cwd.to_str().unwrap(), "mcpServers": []}),
            )
            .await;
        new["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new failed: {new}"))
            .to_owned()
    }

    pub async fn turn(&mut self, session: &str, text: &str) -> Turn {
        let seen_before = self.seen.len();
        self.largest = 0;
        let r = self
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type":"text","text": text}]}),
            )
            .await;
        let stop_reason = match self.protocol {
            1 => r["result"]["stopReason"].as_str().map(str::to_owned),
            // v2: the answer says the prompt is in; the idle state ends the turn.
            _ if r["result"]["messageId"].is_string() => Some(self.until_idle(session).await),
            _ => None,
        };
        let mut t = Turn {
            stop_reason: stop_reason.unwrap_or_else(|| panic!("prompt failed: {r}")),
            largest: self.largest,
            ..Turn::default()
        };
        for m in &self.seen[seen_before..] {
            assert_eq!(
                m["params"]["sessionId"],
                json!(session),
                "message of another session: {m}"
            );
            match m["method"].as_str() {
                Some("session/update")
                    if m["params"]["update"]["sessionUpdate"] == "agent_message_chunk" =>
                {
                    t.message_chunks += 1
                }
                Some("session/request_permission") => t.permission_requests += 1,
                _ => {}
            }
        }
        t
    }
}

impl Client {
    /// v2: the messages of a turn until `session`'s idle `state_update`
    /// (agent requests answered when [`Client::answer`]); its `stopReason`.
    pub async fn until_idle(&mut self, session: &str) -> String {
        loop {
            let m = self.recv().await.expect("closed during a v2 turn");
            assert!(m.get("method").is_some(), "unexpected response {m}");
            if m.get("id").is_some() && self.answer {
                self.answer_agent(&m).await;
            }
            let update = &m["params"]["update"];
            let idle = m["params"]["sessionId"] == session
                && update["sessionUpdate"] == "state_update"
                && update["state"] == "idle";
            let reason = update["stopReason"].as_str().map(str::to_owned);
            self.seen.push(m);
            if idle {
                return reason.unwrap_or_default();
            }
        }
    }
}

pub fn http_get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(STEP)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// Reads until the close frame: its code (panics on anything but a text
/// message before it).
pub async fn close_code(c: &mut Client) -> u16 {
    loop {
        match tokio::time::timeout(STEP, c.ws.next())
            .await
            .expect("close timed out")
        {
            Some(Ok(WsMessage::Close(frame))) => {
                return u16::from(frame.expect("close frame with a code").code)
            }
            Some(Ok(WsMessage::Text(_))) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

pub fn refused_status(e: WsError) -> u16 {
    match e {
        WsError::Http(resp) => resp.status().as_u16(),
        other => panic!("expected an http refusal, got {other}"),
    }
}
