//! The anchor of the load bench (`scripts/load_bench.sh`): a plain
//! WebSocket-to-stdio relay on the server's stack (tokio,
//! tokio-tungstenite), and nothing else. Each connection starts its own
//! agent process; each text message goes to the agent's stdin as one line,
//! each line of its stdout goes back as one text message. No token, no
//! routing, no limits beyond the message size, no confinement: what any
//! relay must pay to move ACP between a socket and a process.
//!
//! ```text
//! cargo build --release -p acp-bridge --example plain_relay
//! target/release/examples/plain_relay 127.0.0.1:0 target/release/acp-mock-agent --big-bytes 1000
//! ```
//!
//! It prints `listening on ws://ADDR` on stderr once it listens.
//!
//! With `--stack-defaults` first, its WebSocket buffers are tokio-tungstenite's
//! defaults (reads of 128 KiB) rather than the server's: what someone
//! writing a plain relay gets without tuning it (the load bench's second
//! anchor).

use std::process::Stdio;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// The largest message either way: the server's default (64 MiB).
const MAX_MESSAGE: usize = 64 << 20;
/// The server's WebSocket buffers, so that the stack costs the same on
/// both sides: reads of 8 KiB (tungstenite's default, 128 KiB, zeroes
/// that much for every read: most of such a relay's CPU under load), and
/// 128 KiB of frames buffered before a write.
const READ_CHUNK: usize = 8 * 1024;
const WRITE_BUFFER: usize = 128 * 1024;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let defaults = args.first().map(String::as_str) == Some("--stack-defaults");
    if defaults {
        args.remove(0);
    }
    let [addr, agent @ ..] = args.as_slice() else {
        eprintln!("usage: plain_relay [--stack-defaults] ADDR AGENT [ARGS...]");
        std::process::exit(2);
    };
    if agent.is_empty() {
        eprintln!("usage: plain_relay [--stack-defaults] ADDR AGENT [ARGS...]");
        std::process::exit(2);
    }
    let listener = TcpListener::bind(addr).await?;
    eprintln!("listening on ws://{}", listener.local_addr()?);
    loop {
        let (socket, _) = listener.accept().await?;
        let agent = agent.to_vec();
        tokio::spawn(async move {
            if let Err(e) = relay(socket, &agent, defaults).await {
                eprintln!("plain_relay: {e}");
            }
        });
    }
}

/// One connection: its agent, started now, and the two directions until
/// either side ends; the stack's default buffers with `defaults`.
async fn relay(socket: TcpStream, agent: &[String], defaults: bool) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    let mut config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    if !defaults {
        config = config
            .read_buffer_size(READ_CHUNK)
            .write_buffer_size(WRITE_BUFFER);
    }
    let ws = tokio_tungstenite::accept_async_with_config(socket, Some(config))
        .await
        .map_err(std::io::Error::other)?;
    let (program, args) = agent
        .split_first()
        .ok_or(std::io::ErrorKind::InvalidInput)?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::ErrorKind::BrokenPipe.into());
    };
    let (mut to_client, mut from_client) = ws.split();
    let inbound = async {
        while let Some(message) = from_client.next().await {
            match message.map_err(std::io::Error::other)? {
                Message::Text(text) => {
                    stdin.write_all(text.as_bytes()).await?;
                    stdin.write_all(b"\n").await?;
                }
                Message::Close(_) => break,
                _ => {}
            }
        }
        Ok::<_, std::io::Error>(())
    };
    let outbound = async {
        let mut lines = BufReader::with_capacity(1 << 16, stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            if lines.read_until(b'\n', &mut line).await? == 0 {
                break;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            let text = String::from_utf8(std::mem::take(&mut line))
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            to_client
                .send(Message::text(text))
                .await
                .map_err(std::io::Error::other)?;
        }
        Ok::<_, std::io::Error>(())
    };
    // The first direction to end ends the connection; the agent is killed
    // with it (`kill_on_drop`).
    tokio::select! {
        r = inbound => r?,
        r = outbound => r?,
    }
    let _ = child.kill().await;
    Ok(())
}
