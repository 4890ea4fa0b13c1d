//! The bridge's I/O: the agent process (spawned, read, restarted with
//! backoff, its stderr logged with rotation) and the WebSocket connections
//! (any `AsyncRead + AsyncWrite` stream), joined by the sans-IO
//! [`Router`](acp_codec::remote::Router).

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_codec::{Limits, LineSplitter};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::process::Command;
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use crate::bridge_http::{self, Access, Replay, Route};
use acp_codec::remote::{ClientId, Out, Router};

/// Name of the agent's log file.
pub const LOG_NAME: &str = "gemini-acp.log";
/// The log is rotated to `.old` past this size: 2 MiB.
pub const LOG_LIMIT: u64 = 2 * 1024 * 1024;
/// Longest TLS handshake.
const TLS_HANDSHAKE: Duration = Duration::from_secs(10);

/// Everything the bridge runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub bind: SocketAddr,
    /// Token and Origin checks.
    pub access: Access,
    /// Largest WebSocket message from a client, and largest agent line
    /// relayed (bytes).
    pub max_message: usize,
    /// TLS (`wss://`, `https://…/health`), when set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The agent command: program and arguments.
    pub agent: Vec<String>,
    /// Directory of `gemini-acp.log`.
    pub log_dir: PathBuf,
    /// Log rotation size.
    pub log_limit: u64,
    /// First restart delay; doubles up to `backoff_max`.
    pub backoff_min: Duration,
    /// Longest restart delay.
    pub backoff_max: Duration,
    /// A client that takes longer than this to accept one message is
    /// disconnected (so it cannot stall the others).
    pub slow_client: Duration,
}

enum ToClient {
    Text(String),
    Close(CloseCode, String),
}

struct ClientTx {
    tx: mpsc::Sender<ToClient>,
    kick: Arc<Notify>,
}

struct State {
    router: Router,
    agent_tx: Option<mpsc::Sender<Vec<u8>>>,
    clients: HashMap<ClientId, ClientTx>,
}

/// State shared by the agent supervisor and the connections.
pub struct Shared {
    state: Mutex<State>,
    config: Config,
    epoch: Instant,
    log: Mutex<Log>,
}

enum Send {
    Agent(mpsc::Sender<Vec<u8>>, Vec<u8>),
    Client(mpsc::Sender<ToClient>, Arc<Notify>, String),
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// Runs `f` on the router under the lock, resolving its output to
    /// channels while the lock still holds (so a line meant for one agent
    /// process never reaches the next).
    fn with_router(&self, f: impl FnOnce(&mut Router, &mut Vec<Out>)) -> Vec<Send> {
        let mut st = self.lock();
        let mut outs = Vec::new();
        f(&mut st.router, &mut outs);
        resolve(&st, outs)
    }

    async fn deliver(&self, sends: Vec<Send>) {
        for s in sends {
            match s {
                Send::Agent(tx, line) => {
                    // A closed channel means the agent died: the router has
                    // answered the request already.
                    let _ = tx.send(line).await;
                }
                Send::Client(tx, kick, text) => {
                    match tokio::time::timeout(
                        self.config.slow_client,
                        tx.send(ToClient::Text(text)),
                    )
                    .await
                    {
                        Ok(_) => {}
                        Err(_) => kick.notify_one(),
                    }
                }
            }
        }
    }

    fn log_line(&self, text: &str) {
        let mut log = self
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.write(format!("[bridge] {text}\n").as_bytes());
        eprintln!("ws_bridge: {text}");
    }
}

fn resolve(st: &State, outs: Vec<Out>) -> Vec<Send> {
    let mut sends = Vec::with_capacity(outs.len());
    for o in outs {
        match o {
            Out::Agent(line) => {
                if let Some(tx) = &st.agent_tx {
                    sends.push(Send::Agent(tx.clone(), line));
                }
            }
            Out::Client { to, text, .. } => {
                if let Some(ct) = st.clients.get(&to) {
                    sends.push(Send::Client(ct.tx.clone(), ct.kick.clone(), text));
                }
            }
        }
    }
    sends
}

/// `gemini-acp.log`, rotated to `gemini-acp.log.old` past the limit, at
/// startup and while running.
pub struct Log {
    path: PathBuf,
    limit: u64,
    file: Option<File>,
    size: u64,
}

impl Log {
    /// Opens (rotating first if the file is already past the limit).
    pub fn open(dir: &std::path::Path, limit: u64) -> Self {
        let mut log = Self {
            path: dir.join(LOG_NAME),
            limit,
            file: None,
            size: 0,
        };
        let size = fs::metadata(&log.path).map(|m| m.len()).unwrap_or(0);
        if size > limit {
            log.rotate();
        } else {
            log.reopen();
        }
        log
    }

    fn reopen(&mut self) {
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .ok();
        self.size = fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
    }

    fn rotate(&mut self) {
        self.file = None;
        let mut old = self.path.clone().into_os_string();
        old.push(".old");
        let _ = fs::rename(&self.path, old);
        self.reopen();
    }

    /// Appends bytes, rotating once the file is past the limit.
    pub fn write(&mut self, bytes: &[u8]) {
        if let Some(f) = &mut self.file {
            if f.write_all(bytes).is_ok() {
                self.size = self.size.saturating_add(bytes.len() as u64);
            }
        }
        if self.size > self.limit {
            self.rotate();
        }
    }
}

/// Runs the bridge on `listener` until the process ends.
pub async fn serve(listener: TcpListener, config: Config) -> io::Result<()> {
    let log = Log::open(&config.log_dir, config.log_limit);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            router: Router::new(),
            agent_tx: None,
            clients: HashMap::new(),
        }),
        config,
        epoch: Instant::now(),
        log: Mutex::new(log),
    });
    let (up_tx, up_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(supervise(shared.clone(), up_tx));
    // Accept once the first agent is up (or failed to start), so the first
    // client is not told the agent is restarting.
    let _ = tokio::time::timeout(Duration::from_secs(10), up_rx).await;
    let (ws, http) = if shared.config.tls.is_some() {
        ("wss", "https")
    } else {
        ("ws", "http")
    };
    match listener.local_addr() {
        Ok(addr) => {
            eprintln!("ws_bridge: listening on {ws}://{addr} (health: {http}://{addr}/health)")
        }
        Err(e) => eprintln!("ws_bridge: listening ({e})"),
    }
    let acceptor = shared
        .config
        .tls
        .clone()
        .map(tokio_rustls::TlsAcceptor::from);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // Out of file descriptors and the like: wait, go on.
                eprintln!("ws_bridge: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let result = match acceptor {
                None => connection(stream, peer, shared).await,
                Some(acceptor) => {
                    match tokio::time::timeout(TLS_HANDSHAKE, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => connection(tls, peer, shared).await,
                        Ok(Err(e)) => Err(io::Error::new(e.kind(), format!("tls handshake: {e}"))),
                        Err(_) => Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "no tls handshake within 10 s",
                        )),
                    }
                }
            };
            if let Err(e) = result {
                eprintln!("ws_bridge: {peer}: {e}");
            }
        });
    }
}

/// Serves one connection: `/health`, refusals, or a WebSocket client.
pub async fn connection<S>(mut stream: S, peer: SocketAddr, shared: Arc<Shared>) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + std::marker::Send + 'static,
{
    let (head, bytes) =
        match tokio::time::timeout(Duration::from_secs(10), bridge_http::read_head(&mut stream))
            .await
        {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => {
                let _ = bridge_http::respond(&mut stream, 400, &e.to_string(), false).await;
                return Err(e);
            }
            Err(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no request head within 10 s",
                ))
            }
        };
    match bridge_http::route(&head, &shared.config.access) {
        Route::Health => {
            return bridge_http::respond(&mut stream, 200, "ok", head.method == "HEAD").await
        }
        Route::Refuse(r) => {
            shared.log_line(&format!(
                "{peer}: refused {} {}: {}",
                r.status, head.path, r.reason
            ));
            return bridge_http::respond(&mut stream, r.status, &r.reason, false).await;
        }
        Route::Upgrade => {}
    }
    let max = shared.config.max_message;
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max));
    let ws =
        tokio_tungstenite::accept_async_with_config(Replay::new(bytes, stream), Some(ws_config))
            .await
            .map_err(|e| io::Error::other(format!("websocket handshake: {e}")))?;
    let (mut sink, mut source) = ws.split();

    let (tx, mut rx) = mpsc::channel::<ToClient>(8);
    let kick = Arc::new(Notify::new());
    let client = {
        let mut st = shared.lock();
        let id = st.router.connect();
        st.clients.insert(
            id,
            ClientTx {
                tx: tx.clone(),
                kick: kick.clone(),
            },
        );
        id
    };
    let writer = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            match m {
                ToClient::Text(t) => {
                    if sink.send(WsMessage::Text(t.into())).await.is_err() {
                        break;
                    }
                }
                ToClient::Close(code, reason) => {
                    let _ = sink
                        .send(WsMessage::Close(Some(CloseFrame {
                            code,
                            reason: reason.into(),
                        })))
                        .await;
                    break;
                }
            }
        }
        let _ = sink.close().await;
    });

    let mut close = None;
    loop {
        let next = tokio::select! {
            m = source.next() => m,
            () = kick.notified() => {
                close = Some((CloseCode::Policy, "client too slow to receive".to_owned()));
                break;
            }
        };
        match next {
            Some(Ok(WsMessage::Text(text))) => {
                let now = shared.now();
                let sends =
                    shared.with_router(|r, out| r.handle_client(client, text.as_str(), now, out));
                shared.deliver(sends).await;
            }
            Some(Ok(WsMessage::Binary(_))) => {
                let text = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"binary websocket messages are refused: send each json-rpc message as one text message"}}"#;
                let _ = tx.send(ToClient::Text(text.to_owned())).await;
            }
            Some(Ok(WsMessage::Close(_))) | None => break,
            Some(Ok(_)) => {}
            Some(Err(WsError::Capacity(e))) => {
                let reason = match e {
                    CapacityError::MessageTooLong { size, max_size } => {
                        format!("message of {size} bytes exceeds the {max_size}-byte limit")
                    }
                    other => other.to_string(),
                };
                close = Some((CloseCode::Size, reason));
                break;
            }
            Some(Err(_)) => break,
        }
    }
    if let Some((code, reason)) = close {
        shared.log_line(&format!(
            "{peer}: closing with {}: {reason}",
            u16::from(code)
        ));
        let _ = tx.send(ToClient::Close(code, reason)).await;
    }
    let sends = shared.with_router(|r, out| r.disconnect(client, out));
    shared.lock().clients.remove(&client);
    drop(tx);
    shared.deliver(sends).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), writer).await;
    Ok(())
}

/// Keeps one agent process running: spawn, relay, restart with backoff.
async fn supervise(shared: Arc<Shared>, up: tokio::sync::oneshot::Sender<()>) {
    let cfg = shared.config.clone();
    let mut backoff = cfg.backoff_min;
    let mut restarts: u64 = 0;
    let mut up = Some(up);
    loop {
        let started = Instant::now();
        let status = run_agent(&shared, restarts, &mut up).await;
        if let Some(up) = up.take() {
            let _ = up.send(());
        }
        // A run that lasted a while resets the backoff.
        if started.elapsed() > Duration::from_secs(30) {
            backoff = cfg.backoff_min;
        }
        shared.log_line(&format!(
            "agent exited ({status}); restarting in {} ms",
            backoff.as_millis()
        ));
        let sends = {
            let mut st = shared.lock();
            st.agent_tx = None;
            let mut outs = Vec::new();
            st.router.agent_exited(&status, backoff, &mut outs);
            resolve(&st, outs)
        };
        shared.deliver(sends).await;
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(cfg.backoff_max);
        restarts += 1;
    }
}

/// Runs the agent once; returns how it ended.
async fn run_agent(
    shared: &Arc<Shared>,
    restarts: u64,
    up: &mut Option<tokio::sync::oneshot::Sender<()>>,
) -> String {
    let cfg = &shared.config;
    let Some((program, args)) = cfg.agent.split_first() else {
        return "no agent command".to_owned();
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return format!("spawn of {program} failed: {e}"),
    };
    let pid = child.id().unwrap_or(0);
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return "agent pipes missing".to_owned();
    };
    shared.log_line(&format!(
        "agent started: pid {pid}, {}",
        cfg.agent.join(" ")
    ));

    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            if stdin.write_all(&line).await.is_err() {
                break;
            }
        }
    });
    let log_shared = shared.clone();
    let stderr_task = tokio::spawn(async move {
        let mut chunk = vec![0u8; 16 * 1024];
        while let Ok(n) = stderr.read(&mut chunk).await {
            if n == 0 {
                break;
            }
            let mut log = log_shared
                .log
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            log.write(chunk.get(..n).unwrap_or_default());
        }
    });
    let sends = {
        let mut st = shared.lock();
        st.agent_tx = Some(tx);
        let mut outs = Vec::new();
        st.router.agent_started(pid, restarts, &mut outs);
        resolve(&st, outs)
    };
    shared.deliver(sends).await;
    if let Some(up) = up.take() {
        let _ = up.send(());
    }

    let limits = Limits::default().with_max_line_len(cfg.max_message);
    let mut splitter = LineSplitter::with_limits(&limits);
    let mut buf: Vec<u8> = Vec::with_capacity(256 * 1024);
    loop {
        buf.reserve(256 * 1024);
        match stdout.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let mut lines = splitter.lines(&buf);
        for item in lines.by_ref() {
            let now = shared.now();
            let sends = match item {
                Ok(line) => shared.with_router(|r, out| r.handle_agent(line.as_str(), now, out)),
                Err(e) => {
                    shared.log_line(&format!("agent line skipped: {e}"));
                    shared.with_router(|r, out| r.agent_line_too_long(&e, now, out))
                }
            };
            shared.deliver(sends).await;
        }
        let consumed = lines.consumed();
        buf.drain(..consumed);
    }
    // Stdout closed: make sure the process is gone, then report its status.
    let status = match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(s)) => s.to_string(),
        Ok(Err(e)) => format!("wait failed: {e}"),
        Err(_) => {
            let _ = child.kill().await;
            "closed its stdout; killed".to_owned()
        }
    };
    writer.abort();
    let _ = tokio::time::timeout(Duration::from_secs(1), stderr_task).await;
    status
}
