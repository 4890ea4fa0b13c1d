//! A tap between an editor and an agent: bytes pass unchanged both ways, and stderr gets a line
//! per tool call and per prompt's stop reason. A line that is not JSON-RPC is dropped; one over
//! the limit is skipped, and the editor's request among them answered `-32600` by its id.
//! Run it as the agent: `cargo run --features tokio-util --example tap -- gemini --acp`

use acp_codec::acp::{decode_line_bytes, Incoming, Mode, NotificationParams, Observer};
use acp_codec::acp::{ResponseResult, SessionUpdate, Side, Typed};
use acp_codec::{framing::RawItem, MessageError, RawLineSplitter};
use std::{cell::RefCell, process::Stdio};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (program, rest) = args.split_first().ok_or("usage: tap AGENT [ARGS...]")?;
    let mut agent = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (agent_in, agent_out) = (agent.stdin.take(), agent.stdout.take());
    let editor_out = Mutex::new(tokio::io::stdout());
    let (editor, observer) = (tokio::io::stdin(), RefCell::new(Observer::new()));
    let upstream = async {
        let agent_in = Mutex::new(agent_in.ok_or("no stdin")?);
        pump(Side::Client, editor, &agent_in, &editor_out, &observer).await?;
        drop(agent_in); // the editor is done: the agent's input ends, its output goes on
        std::future::pending().await
    };
    let no_answer = Mutex::new(tokio::io::sink()); // the agent's oversized requests: logged
    tokio::select! {
        r = upstream => r,
        r = pump(Side::Agent, agent_out.ok_or("no stdout")?, &editor_out, &no_answer, &observer) => r,
    }
}

/// Relays what `from` writes on `input` to `to`, item by item; the last may lack its `\n`.
async fn pump(
    from: Side,
    mut input: impl AsyncRead + Unpin,
    to: &Mutex<impl AsyncWrite + Unpin>,
    back: &Mutex<impl AsyncWrite + Unpin>,
    observer: &RefCell<Observer>,
) -> Result<(), Box<dyn std::error::Error>> {
    let (mut splitter, mut buf, mut eof) = (RawLineSplitter::new(), Vec::new(), false);
    loop {
        let found = splitter.decode(&buf);
        let Some(item) = found.or_else(|| eof.then(|| splitter.decode_eof(&buf))?) else {
            if eof {
                return Ok(to.lock().await.flush().await?);
            }
            eof = input.read_buf(&mut buf).await? == 0;
            continue;
        };
        match &item {
            RawItem::Line(l) if l.is_blank() || seen(from, l.content(), observer).is_ok() => {
                to.lock().await.write_all(item.as_bytes()).await?;
            }
            RawItem::TooLong { error, .. } => {
                eprintln!("tap: skipped a line from the {from:?}: {error}");
                let mut reply = Vec::new(); // stays empty unless it was a request
                error.encode_reply(&mut reply)?;
                back.lock().await.write_all(&reply).await?;
            }
            _ => {} // a line dropped, or the rest of one skipped
        }
        buf.drain(..item.len());
    }
}

/// Decodes, pairs (a refused pairing changes nothing) and logs a line; `Err` if not JSON-RPC.
fn seen(from: Side, line: &[u8], observer: &RefCell<Observer>) -> Result<(), MessageError> {
    use {NotificationParams::SessionUpdate as Update, SessionUpdate::ToolCall};
    let mut observer = observer.borrow_mut();
    let msg = decode_line_bytes(line, observer.decoding(from, Mode::Lenient))
        .inspect_err(|e| eprintln!("tap: dropped a {from:?} line: {e}"))?;
    observer.handle(from, &msg).ok();
    match &msg {
        Incoming::Notification(Typed {
            value: Update(u), ..
        }) => {
            if let ToolCall(t) = &u.update {
                let kind = t.kind.as_ref().map_or("-", |k| k.as_str());
                let status = t.status.as_ref().map_or("-", |s| s.as_str());
                let (id, title) = (&t.tool_call_id, &t.title);
                eprintln!("tap: tool call {id}: {title} [{kind}] {status}");
            }
        }
        Incoming::Response { response, result } => {
            if let ResponseResult::Prompt(p) = &result.value {
                eprintln!("tap: prompt {} stopped: {}", response.id, p.stop_reason);
            }
        }
        _ => {}
    }
    Ok(())
}
