//! A stdio relay with limits in front of an agent: what a client writes to
//! our stdin goes to the agent, what the agent prints goes to our stdout,
//! one whole line at a time, each direction bounded.
//!
//! ```sh
//! cargo run --features tokio-util --example relay -- --max-line 1048576 gemini --acp
//! ```
//!
//! - Lines are forwarded byte for byte, as read: `\r\n` stays `\r\n`,
//!   blank lines stay, and an unterminated last line goes out unterminated
//!   (pass-through splitting, `codec::RawLineCodec`).
//! - A line over `--max-line` bytes (default: the codec's line limit) is
//!   never buffered whole: the codec hands it out in pieces, the first with
//!   the error, and the relay drops them. When it was a request from the
//!   client, the relay answers it (`-32600`, with the request's id, read
//!   from the line's first bytes), so the client does not wait forever;
//!   from the agent, it is logged.
//! - A line that is not a JSON-RPC message (not UTF-8, stray text) is
//!   dropped with a note on stderr; the next line goes through.
//!
//! Its dependencies beyond tokio and tokio-util: `futures-util` (the
//! `Stream` and `Sink` adapters) and `bytes` (the `Bytes` lines), both
//! dev-dependencies of this crate.

use std::process::Stdio;

use acp_codec::acp::Message;
use acp_codec::codec::RawLineCodec;
use acp_codec::framing::{RawItem, RawLine};
use acp_codec::Limits;
use bytes::Bytes;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tokio::process::Command;
use tokio_util::codec::{BytesCodec, FramedRead, FramedWrite};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let usage = "usage: relay [--max-line BYTES] AGENT [ARGS...]";
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut limits = Limits::default();
    if args.first().map(String::as_str) == Some("--max-line") {
        let n = args.get(1).ok_or(usage)?.parse()?;
        limits = limits.with_max_line_len(n);
        args.drain(..2);
    }
    let (program, rest) = args.split_first().ok_or(usage)?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let agent_out = FramedRead::new(
        child.stdout.take().ok_or("no stdout")?,
        RawLineCodec::with_limits(&limits),
    );
    let agent_in = FramedWrite::new(child.stdin.take().ok_or("no stdin")?, BytesCodec::new());
    let client_in = FramedRead::new(tokio::io::stdin(), RawLineCodec::with_limits(&limits));
    let client_out = FramedWrite::new(tokio::io::stdout(), BytesCodec::new());
    // Answers to the client's oversized requests share its stdout with the
    // agent's lines, so both go out from one place.
    let (replies_tx, mut replies_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let upstream = async {
        pump(client_in, agent_in, replies_tx).await?;
        // The client is done: the agent's input ends (the sink was
        // dropped), and its output still goes through until it ends.
        std::future::pending::<Result<(), Error>>().await
    };
    let downstream = async {
        let mut agent_lines = std::pin::pin!(lines("agent", agent_out));
        let mut client_out = client_out;
        loop {
            tokio::select! {
                line = agent_lines.next() => match line {
                    Some(line) => client_out.send(line?).await?,
                    None => return Ok::<_, Error>(()),
                },
                Some(reply) = replies_rx.recv() => client_out.send(reply).await?,
            }
        }
    };
    // The relay ends when the agent's stdout ends.
    tokio::select! {
        r = upstream => r,
        r = downstream => r,
    }
}

/// The lines of `from` to forward, exactly as read; bad and oversized ones
/// logged and dropped.
fn lines<R>(
    side: &'static str,
    from: FramedRead<R, RawLineCodec>,
) -> impl Stream<Item = Result<Bytes, Error>>
where
    R: tokio::io::AsyncRead + Unpin,
{
    from.filter_map(move |item| async move {
        match item {
            Err(io) => Some(Err(io.into())),
            Ok(RawItem::Line(line)) => passes(side, &line).then(|| Ok(line.into_bytes())),
            Ok(RawItem::TooLong { error, .. }) => {
                eprintln!("relay: dropped a line from the {side}: {error}");
                None
            }
            Ok(_) => None,
        }
    })
}

/// Forwards the client's lines; answers an oversized request itself.
async fn pump<R, W>(
    mut from: FramedRead<R, RawLineCodec>,
    mut to: W,
    replies: tokio::sync::mpsc::UnboundedSender<Bytes>,
) -> Result<(), Error>
where
    R: tokio::io::AsyncRead + Unpin,
    W: Sink<Bytes, Error = std::io::Error> + Unpin,
{
    while let Some(item) = from.next().await {
        match item? {
            RawItem::TooLong { error, .. } => {
                eprintln!("relay: dropped a line from the client: {error}");
                let mut reply = Vec::new();
                if error.encode_reply(&mut reply)?.is_some() {
                    replies.send(Bytes::from(reply))?;
                }
            }
            RawItem::Line(line) if passes("client", &line) => to.send(line.into_bytes()).await?,
            RawItem::Line(_) | RawItem::Rest { .. } => {}
        }
    }
    Ok(())
}

/// Whether a line goes through: blank, or a JSON-RPC message (else logged).
fn passes(side: &str, line: &RawLine<Bytes>) -> bool {
    if line.is_blank() {
        return true;
    }
    let decoded = Message::decode_bytes(line.content());
    if let Err(e) = &decoded {
        eprintln!("relay: dropped a line from the {side}: {e}");
    }
    decoded.is_ok()
}
