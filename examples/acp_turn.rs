//! One ACP prompt turn against any agent on stdio: `initialize`, `session/new`,
//! `session/prompt`, the agent's streamed text on stdout, everything else it
//! sends summarised on stderr. Lines are read with `FramedRead` and the crate's
//! `LineCodec` (bounded; a bad line is an item, not the end), decoded with
//! `acp::decode_line_bytes` (notifications and the agent's requests typed), and
//! requests are written as JSON values with the same codec. Permission requests
//! are refused (the example asks no one); no `fs/*` or `terminal/*` is offered.
//!
//! ```sh
//! cargo run --features tokio-util --example acp_turn -- --agent "gemini --acp" "Explain this repo"
//! ```

use std::process::Stdio;

use acp_codec::acp::{
    decode_line_bytes, ContentBlock, Incoming, Message, Mode, NotificationParams,
    PermissionOptionKind, RequestId, RequestParams, SessionUpdate,
};
use acp_codec::codec::LineCodec;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::process::Command;
use tokio_util::codec::{FramedRead, FramedWrite};

type Error = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let (mut agent, mut prompt) = (None, String::from("Say hello."));
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--agent" => agent = args.next(),
            "-h" | "--help" => return Err("usage: acp_turn --agent CMD [PROMPT]".into()),
            _ => prompt = arg,
        }
    }
    let agent = agent.ok_or("usage: acp_turn --agent CMD [PROMPT]")?;
    let mut words = agent.split_whitespace();
    let program = words.next().ok_or("--agent is empty")?;
    let mut child = Command::new(program)
        .args(words)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let mut from_agent = FramedRead::new(stdout, LineCodec::new());
    let mut to_agent = FramedWrite::new(stdin, LineCodec::new());

    let cwd = std::env::current_dir()?;
    let requests = [
        json!({"protocolVersion": 1, "clientCapabilities": {},
               "clientInfo": {"name": "acp_turn", "version": "0.1.0"}}),
        json!({"cwd": cwd, "mcpServers": []}),
    ];
    let mut session = Value::Null;
    for (id, (method, params)) in (0..).zip(["initialize", "session/new"].iter().zip(requests)) {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        to_agent.send(&request).await?;
        let result = answer(&mut from_agent, &mut to_agent, id).await?;
        if *method == "session/new" {
            session = result["sessionId"].clone();
        }
    }
    let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]});
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": params});
    to_agent.send(&request).await?;
    let result = answer(&mut from_agent, &mut to_agent, 2).await?;
    println!("\n[stop reason: {}]", result["stopReason"]);
    Ok(())
}

/// Reads lines until the response to request `id`, handling what comes
/// before it: updates are printed, requests refused, bad lines skipped.
async fn answer(
    from_agent: &mut FramedRead<impl tokio::io::AsyncRead + Unpin, LineCodec>,
    to_agent: &mut FramedWrite<impl tokio::io::AsyncWrite + Unpin, LineCodec>,
    id: i64,
) -> Result<Value, Error> {
    while let Some(line) = from_agent.next().await {
        let Ok(line) = line?.inspect_err(|e| eprintln!("skipped a line: {e}")) else {
            continue;
        };
        match decode_line_bytes(&line, Mode::Lenient) {
            Ok(Incoming::Notification(typed)) => {
                for salvage in &typed.salvaged {
                    eprintln!("salvaged: {salvage}");
                }
                if let NotificationParams::SessionUpdate(n) = &typed.value {
                    show(&n.update);
                }
            }
            Ok(Incoming::Message(Message::Response(r))) if r.id == RequestId::Number(id) => {
                return Ok(serde_json::from_str(r.result.get())?);
            }
            Ok(Incoming::Message(Message::Error(e))) => {
                return Err(format!("the agent answered an error: {}", e.error.message).into());
            }
            Ok(Incoming::Request { request, params }) => {
                // Permission requests are refused (a reject option when the
                // agent offers one); nothing else was offered.
                let reply = match &params.value {
                    RequestParams::RequestPermission(p) => {
                        let reject = p
                            .options
                            .iter()
                            .find(|o| o.kind == PermissionOptionKind::RejectOnce);
                        let outcome = match reject {
                            Some(o) => json!({"outcome": "selected", "optionId": o.option_id}),
                            None => json!({"outcome": "cancelled"}),
                        };
                        json!({"jsonrpc": "2.0", "id": request.id, "result": {"outcome": outcome}})
                    }
                    _ => {
                        let error = json!({"code": -32601, "message": "method not found"});
                        json!({"jsonrpc": "2.0", "id": request.id, "error": error})
                    }
                };
                eprintln!("[{} refused]", request.method);
                to_agent.send(&reply).await?;
            }
            Ok(Incoming::Message(Message::Request(r))) => {
                // Params that do not fit the method: -32602, with the reason.
                let why = r.typed(Mode::Lenient).err().map(|e| e.to_string());
                let error = json!({"code": -32602, "message": why.unwrap_or_default()});
                to_agent
                    .send(&json!({"jsonrpc": "2.0", "id": r.id, "error": error}))
                    .await?;
            }
            Ok(other) => eprintln!("[{:?}]", other.into_owned()),
            Err(e) => eprintln!("not an ACP message ({e})"),
        }
    }
    Err("the agent closed its stdout".into())
}

/// Prints one `session/update`: message text as it streams, the rest as a tag.
fn show(update: &SessionUpdate<'_>) {
    match update {
        SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
            ContentBlock::Text(t) => print!("{}", t.text),
            _ => eprint!("[content]"),
        },
        SessionUpdate::ToolCall(call) => eprintln!("\n[tool call: {}]", call.title),
        _ => eprint!("."),
    }
}
