//! MCP over ACP for agents that only start stdio MCP servers: the I/O
//! around the core's bridge (`Server::set_mcp_relay`,
//! `handle_mcp_open`, `handle_mcp_line`, `handle_mcp_closed`).
//!
//! Each agent gets a Unix socket of its own inside its room
//! (`USER/tmp/mcp-relay.sock` beside its `HOME`; the shared agent's in a
//! private directory under the bridge's temporary directory) and a random
//! token, named at its first start and bound when a client first offers
//! it an `"acp"` server ([`prepare`]). The core hands the agent, in place of each `"acp"`
//! server, this program as a stdio server: `acp-bridge --mcp-relay SOCKET
//! ID`, the token in `ACP_BRIDGE_MCP_TOKEN`. The relay connects, says
//! `{"token": …, "acpId": ID}` on its first line, is answered `{"ok":
//! true}` or `{"error": …}`, and then carries MCP lines both ways between
//! the agent and the socket. A socket takes only its own agent's token,
//! so a process in another user's room that reaches it is refused.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use acp_codec::codec::LineCodec;
use acp_codec::remote::McpRelay;
use acp_codec::Limits;
use futures_util::StreamExt;
use subtle::ConstantTimeEq;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

use super::driver::{user_dirs, Driver, ToRelay};

/// The relay's entry point: `acp-bridge --mcp-relay SOCKET ID`.
pub const RELAY_FLAG: &str = "--mcp-relay";
/// The variable that carries the relay's token.
pub const TOKEN_VAR: &str = "ACP_BRIDGE_MCP_TOKEN";
/// The socket's file name in a room.
const SOCKET_NAME: &str = "mcp-relay.sock";
/// Longest wait for a relay's first line.
const HELLO_WAIT: Duration = Duration::from_secs(10);
/// Longest first line.
const HELLO_MAX: u64 = 4096;

/// Where `user`'s agent's socket lies.
fn socket_path(driver: &Driver, user: Option<&str>) -> PathBuf {
    match user {
        Some(u) => {
            let (home, work) = user_dirs(&driver.processes.state_dir, u);
            crate::room::UserDirs::beside(&home, &work)
                .tmp
                .join(SOCKET_NAME)
        }
        None => std::env::temp_dir()
            .join(format!("acp-bridge-{}-mcp", std::process::id()))
            .join(SOCKET_NAME),
    }
}

/// A socket named, its relay given to the core, not bound yet.
struct Unbound {
    path: PathBuf,
    user: Option<String>,
    token: String,
}

/// Makes sure `user`'s agent has its socket named and the core its relay,
/// before the agent starts. The socket is bound only when a client first
/// offers that agent an `"acp"` server (`Event::McpOffered`, which the
/// driver carries out before the agent gets that request, so the relay
/// the agent starts finds it bound): most sessions offer none, and a
/// socket bound at every start cost the server a file system inode
/// (with a `mkdir`, an `unlink`, a `bind` and a `listen`) at every start.
/// Once named (or bound), the agent's later starts keep it. Failing that,
/// MCP over ACP is not bridged for it (logged).
pub fn prepare(driver: &Arc<Driver>, user: Option<&str>) {
    let key = user.map(ToOwned::to_owned);
    if driver.relays.listens(&key) {
        return;
    }
    match plan(driver, user) {
        Ok((relay, unbound)) => {
            let weak = Arc::downgrade(driver);
            let bind_it = move || {
                if let Some(driver) = weak.upgrade() {
                    bind(&driver, unbound);
                }
            };
            driver.relays.listening(key, Box::new(bind_it));
            driver.with(|s, _| s.set_mcp_relay(user, Some(relay)));
        }
        Err(e) => driver.log_line(&format!("mcp over acp is not bridged: {e}")),
    }
}

/// `bytes` in lowercase hexadecimal, two digits a byte (a relay's token:
/// written at every agent start, so not a `format!` a byte).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len().saturating_mul(2));
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Binds a socket [`prepare`] named (its directory made when missing: the
/// agent's room, when its launcher has not made it yet). Runs under the
/// core's lock (carrying out an event): failing to bind, MCP over ACP is
/// not bridged for that agent (logged), its relay taken back from the
/// core just after, and its next start names a socket again.
fn bind(driver: &Arc<Driver>, unbound: Unbound) {
    let user = unbound.user.clone();
    if let Err(e) = listen(driver, unbound) {
        driver.log_line(&format!("mcp over acp is not bridged: {e}"));
        let driver = driver.clone();
        tokio::spawn(async move {
            driver.with(|s, _| s.set_mcp_relay(user.as_deref(), None));
            driver.relays.forget(&user);
        });
    }
}

/// Names `user`'s agent's socket and its token: the relay the core gives
/// the agent, and what [`listen`] binds.
fn plan(driver: &Arc<Driver>, user: Option<&str>) -> Result<(McpRelay, Unbound), String> {
    let path = socket_path(driver, user);
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
    let token = hex(&bytes);
    let exe =
        crate::supervisor::this_program().map_err(|e| format!("cannot find this program: {e}"))?;
    let relay = McpRelay::new(
        exe.to_string_lossy().into_owned(),
        vec![RELAY_FLAG.to_owned(), path.to_string_lossy().into_owned()],
        vec![(TOKEN_VAR.to_owned(), token.clone())],
    );
    let unbound = Unbound {
        path,
        user: user.map(ToOwned::to_owned),
        token,
    };
    Ok((relay, unbound))
}

/// Binds the socket (its directory made when missing), starts accepting
/// on it.
fn listen(driver: &Arc<Driver>, unbound: Unbound) -> Result<(), String> {
    let Unbound { path, user, token } = unbound;
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let _ = std::fs::remove_file(&path);
    let listener =
        UnixListener::bind(&path).map_err(|e| format!("cannot bind {}: {e}", path.display()))?;
    tokio::spawn(accept(driver.clone(), listener, user, token));
    Ok(())
}

async fn accept(driver: Arc<Driver>, listener: UnixListener, user: Option<String>, token: String) {
    let token = Arc::new(token);
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(serve(driver.clone(), stream, user.clone(), token.clone()));
    }
}

/// The first line of a relay.
#[derive(serde::Deserialize)]
struct Hello {
    token: String,
    #[serde(rename = "acpId")]
    acp_id: String,
}

/// One relay connection: its token and server checked, then its lines.
async fn serve(driver: Arc<Driver>, stream: UnixStream, user: Option<String>, token: Arc<String>) {
    let (read, mut write) = stream.into_split();
    let mut read = tokio::io::BufReader::new(read);
    let mut first = String::new();
    let got = tokio::time::timeout(
        HELLO_WAIT,
        (&mut read).take(HELLO_MAX).read_line(&mut first),
    )
    .await;
    let hello = match got {
        Ok(Ok(_)) => serde_json::from_str::<Hello>(first.trim_end()).ok(),
        _ => None,
    };
    let refuse = |why: String| {
        let who = user.as_deref().unwrap_or("the shared agent");
        driver.log_line(&format!("mcp relay for {who} refused: {why}"));
        serde_json::json!({ "error": why }).to_string() + "\n"
    };
    let Some(hello) = hello else {
        let _ = write
            .write_all(refuse("no greeting with a token and an acpId".into()).as_bytes())
            .await;
        return;
    };
    if !bool::from(hello.token.as_bytes().ct_eq(token.as_bytes())) {
        let _ = write
            .write_all(refuse("wrong token: this socket is another agent's".into()).as_bytes())
            .await;
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let opened = driver.with(|s, now| {
        let link = s.handle_mcp_open(now, user.as_deref(), &hello.acp_id)?;
        let _ = tx.send(ToRelay::Line(b"{\"ok\":true}\n".to_vec()));
        driver.relays.attach(link, tx);
        Ok::<_, acp_codec::remote::McpRefusal>(link)
    });
    let link = match opened {
        Ok(link) => link,
        Err(e) => {
            let _ = write.write_all(refuse(e.to_string()).as_bytes()).await;
            return;
        }
    };
    let writer = tokio::spawn(async move {
        while let Some(out) = rx.recv().await {
            match out {
                ToRelay::Line(line) => {
                    if write.write_all(&line).await.is_err() {
                        break;
                    }
                }
                ToRelay::Close => break,
            }
        }
        let _ = write.shutdown().await;
    });
    let limits = Limits::default().with_max_line_len(driver.processes.max_line);
    let mut lines = FramedRead::new(read, LineCodec::with_limits(&limits));
    while let Some(Ok(item)) = lines.next().await {
        match item {
            Ok(line) => match std::str::from_utf8(&line) {
                Ok(text) => driver.with(|s, now| s.handle_mcp_line(now, link, text)),
                Err(_) => driver.log_line(&format!("{link}: a line that is not utf-8, dropped")),
            },
            Err(e) => driver.log_line(&format!("{link}: {e}, dropped")),
        }
    }
    driver.relays.detach(link);
    driver.with(|s, now| s.handle_mcp_closed(now, link));
    writer.abort();
}

/// The relay process, `acp-bridge --mcp-relay SOCKET ID` (the agent's
/// stdio MCP server): greets the socket with its token, then copies the
/// agent's lines to it and its lines to the agent, until either side
/// ends. Synchronous: two threads, no runtime.
pub fn run_relay(args: &[String]) -> ExitCode {
    let (Some(socket), Some(id)) = (args.first(), args.get(1)) else {
        eprintln!("acp-bridge {RELAY_FLAG}: usage: acp-bridge {RELAY_FLAG} SOCKET ID");
        return ExitCode::from(2);
    };
    let token = std::env::var(TOKEN_VAR).unwrap_or_default();
    match relay(Path::new(socket), id, &token) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-bridge {RELAY_FLAG}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How long the relay waits for its socket to be bound (the bridge binds
/// it before the agent gets the request that names the relay, so this
/// covers a socket being bound again, or a relay run by hand early).
const CONNECT_WAIT: Duration = Duration::from_secs(5);

fn relay(socket: &Path, id: &str, token: &str) -> Result<(), String> {
    let started = std::time::Instant::now();
    let stream = loop {
        match std::os::unix::net::UnixStream::connect(socket) {
            Ok(stream) => break stream,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) && started.elapsed() < CONNECT_WAIT =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("cannot connect to {}: {e}", socket.display())),
        }
    };
    let hello = serde_json::json!({"token": token, "acpId": id}).to_string() + "\n";
    (&stream)
        .write_all(hello.as_bytes())
        .map_err(|e| format!("cannot greet the bridge: {e}"))?;
    let mut from_bridge = BufReader::new(
        stream
            .try_clone()
            .map_err(|e| format!("cannot use the socket: {e}"))?,
    );
    let mut answer = String::new();
    from_bridge
        .read_line(&mut answer)
        .map_err(|e| format!("no answer from the bridge: {e}"))?;
    let answer: serde_json::Value = serde_json::from_str(answer.trim_end())
        .map_err(|_| "the bridge closed the connection without an answer".to_owned())?;
    if let Some(e) = answer.get("error") {
        return Err(format!(
            "refused by the bridge: {}",
            e.as_str().unwrap_or("no reason")
        ));
    }
    let to_bridge = stream
        .try_clone()
        .map_err(|e| format!("cannot use the socket: {e}"))?;
    std::thread::spawn(move || {
        let mut to_bridge = to_bridge;
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_bridge);
        let _ = to_bridge.shutdown(std::net::Shutdown::Write);
    });
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match from_bridge.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {
                if stdout
                    .write_all(&line)
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::hex;

    #[test]
    fn hex_is_two_lowercase_digits_a_byte_as_format_writes_them() {
        let bytes: Vec<u8> = (0..=255).collect();
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex(&bytes), expected);
        assert_eq!(hex(&[]), "");
    }
}
