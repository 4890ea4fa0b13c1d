//! A stdio relay with limits in front of an agent: what a client writes to
//! our stdin goes to the agent, what the agent prints goes to our stdout,
//! one whole line at a time, each direction bounded.
//!
//! ```sh
//! cargo run --features tokio-util --example relay -- --max-line 1048576 gemini --acp
//! ```
//!
//! - A line over `--max-line` bytes (default 64 MiB, the codec's `DEFAULT_MAX_LINE_LEN`) is never buffered
//!   whole: the codec reports it once and skips to its end. When it was a
//!   request from the client, the relay answers it with the codec's error
//!   (`-32600`, with the request's id, read from the line's first bytes), so
//!   the client does not wait forever; from the agent, it is logged.
//! - A line that is not UTF-8, or stray text, is dropped with a note on
//!   stderr; the next line goes through.
//! - Lines are forwarded byte for byte (no re-encoding).

use std::process::Stdio;

use acp_codec::acp::{encode_error, RequestId, RpcError};
use acp_codec::codec::LineCodec;
use acp_codec::{FrameError, Limits, PeekedId};
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
        LineCodec::with_limits(&limits),
    );
    let agent_in = FramedWrite::new(child.stdin.take().ok_or("no stdin")?, BytesCodec::new());
    let client_in = FramedRead::new(tokio::io::stdin(), LineCodec::with_limits(&limits));
    let client_out = FramedWrite::new(tokio::io::stdout(), BytesCodec::new());
    // Answers to the client's oversized requests share its stdout with the
    // agent's lines, so both go out from one place.
    let (replies_tx, mut replies_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let upstream = pump("client", client_in, agent_in, replies_tx);
    let downstream = async {
        let mut agent_lines = std::pin::pin!(pump_lines("agent", agent_out));
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
    // The relay ends when the agent's stdout ends, or the client's stdin.
    tokio::select! {
        r = upstream => r?,
        r = downstream => r?,
    }
    Ok(())
}

/// The good lines of `from`, each with its `\n`; bad ones logged and skipped.
fn pump_lines<R>(
    side: &'static str,
    from: FramedRead<R, LineCodec>,
) -> impl Stream<Item = Result<Bytes, Error>>
where
    R: tokio::io::AsyncRead + Unpin,
{
    from.filter_map(move |item| async move {
        match item {
            Err(io) => Some(Err(io.into())),
            Ok(Ok(line)) => Some(Ok(Bytes::from([&line[..], b"\n"].concat()))),
            Ok(Err(e)) => {
                eprintln!("relay: dropped a line from the {side}: {e}");
                None
            }
        }
    })
}

/// Forwards the client's lines; answers an oversized request itself.
async fn pump<R, W>(
    side: &'static str,
    mut from: FramedRead<R, LineCodec>,
    mut to: W,
    replies: tokio::sync::mpsc::UnboundedSender<Bytes>,
) -> Result<(), Error>
where
    R: tokio::io::AsyncRead + Unpin,
    W: Sink<Bytes, Error = std::io::Error> + Unpin,
{
    while let Some(item) = from.next().await {
        match item? {
            Ok(line) => to.send(Bytes::from([&line[..], b"\n"].concat())).await?,
            Err(e) => {
                eprintln!("relay: dropped a line from the {side}: {e}");
                if let Some(reply) = answer(&e) {
                    replies.send(reply)?;
                }
            }
        }
    }
    Ok(())
}

/// The error response to an oversized request, when its id could be read.
fn answer(error: &FrameError) -> Option<Bytes> {
    let FrameError::LineTooLong(e) = error else {
        return None;
    };
    let id = match e.request_id()? {
        PeekedId::Number(n) => RequestId::Number(n),
        other => RequestId::from(other.as_str()?).into_owned(),
    };
    let mut out = Vec::new();
    encode_error(
        &id,
        &RpcError::new(error.code(), error.to_string()),
        &mut out,
    )
    .ok()?;
    Some(Bytes::from(out))
}
