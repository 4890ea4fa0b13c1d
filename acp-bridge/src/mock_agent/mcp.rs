//! The mock agent as an MCP client: a prompt holding `mcp TOOL
//! [KEY=VALUE…]` makes it use each MCP server of its session, as a real
//! agent uses the user's tools: it connects (`mcp/connect` over ACP for an
//! `"acp"` server, or the command started here for a stdio one),
//! initializes, lists the tools (said in the turn), calls `TOOL` where a
//! server has it (a tool call whose content is the result, or the error),
//! and disconnects.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::watch;

use super::{say, text_block, Agent, Reply, Stop, Turn};

/// How long a stdio server may take to answer.
const STDIO_WAIT: Duration = Duration::from_secs(20);

/// One connection to a server.
enum Link {
    Acp {
        server: String,
        connection: String,
    },
    /// Boxed: the process and its pipes are large.
    Stdio(Box<StdioLink>),
}

/// A stdio server started by the mock.
struct StdioLink {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

/// Uses each server of `servers` (the session's `mcpServers`) as `ask`
/// says: `TOOL KEY=VALUE…`.
pub(super) async fn use_servers(
    agent: &Agent,
    sid: &str,
    t: &Turn<'_>,
    servers: &[Value],
    ask: &str,
    cancel: &mut watch::Receiver<bool>,
) -> Result<(), Stop> {
    let mut words = ask.split_whitespace();
    let tool = words.next().unwrap_or("").to_owned();
    let arguments: serde_json::Map<String, Value> = words
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_owned(), Value::from(v)))
        .collect();
    if servers.is_empty() {
        agent
            .update(sid, say("I was given no MCP servers."))
            .await?;
        return Ok(());
    }
    for (i, server) in servers.iter().enumerate() {
        let name = server["name"].as_str().unwrap_or("?").to_owned();
        let mut link = match open(agent, sid, t, server, cancel).await? {
            Ok(link) => link,
            Err(e) => {
                let said = format!("MCP server {name}: cannot connect: {e}. ");
                agent.update(sid, say(&said)).await?;
                continue;
            }
        };
        let mut n = 0;
        let outcome = session(
            agent, sid, t, &mut link, &mut n, &name, &tool, &arguments, i, cancel,
        )
        .await?;
        if let Err(e) = outcome {
            agent
                .update(sid, say(&format!("MCP server {name} failed: {e}. ")))
                .await?;
        }
        if let Link::Acp { connection, .. } = &link {
            let params = json!({"connectionId": connection, "sessionId": sid});
            agent.request("mcp/disconnect", params, cancel).await?;
        }
    }
    Ok(())
}

/// Initialize, list, call.
#[allow(clippy::too_many_arguments)]
async fn session(
    agent: &Agent,
    sid: &str,
    t: &Turn<'_>,
    link: &mut Link,
    n: &mut u64,
    name: &str,
    tool: &str,
    arguments: &serde_json::Map<String, Value>,
    index: usize,
    cancel: &mut watch::Receiver<bool>,
) -> Result<Result<(), String>, Stop> {
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "acp-mock-agent", "version": env!("CARGO_PKG_VERSION")}});
    if let Err(e) = call(agent, sid, link, n, "initialize", init, cancel).await? {
        return Ok(Err(e));
    }
    notify(agent, sid, link, "notifications/initialized").await?;
    let tools = match call(agent, sid, link, n, "tools/list", json!({}), cancel).await? {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let said = format!("MCP server {name} offers: {}. ", names.join(", "));
    agent.update(sid, say(&said)).await?;
    if !names.contains(&tool) {
        return Ok(Ok(()));
    }
    let id = t.tool_id("mcp", 10 + index as u32);
    let title = format!("{name}: {tool}");
    agent
        .update(
            sid,
            json!({"sessionUpdate": "tool_call", "toolCallId": id, "status": "in_progress",
                            "title": title, "content": [], "kind": "other"}),
        )
        .await?;
    let params = json!({"name": tool, "arguments": arguments});
    let (status, text) = match call(agent, sid, link, n, "tools/call", params, cancel).await? {
        Ok(r) => {
            let text: Vec<&str> = r["content"]
                .as_array()
                .map(|a| a.iter().filter_map(|c| c["text"].as_str()).collect())
                .unwrap_or_default();
            let failed = r["isError"].as_bool().unwrap_or(false);
            (if failed { "failed" } else { "completed" }, text.join("\n"))
        }
        Err(e) => ("failed", format!("MCP error: {e}")),
    };
    agent
        .update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status,
                            "title": title, "content": text_block(&text), "kind": "other"}),
        )
        .await?;
    Ok(Ok(()))
}

/// Connects to `server` (a `McpServer` as JSON).
async fn open(
    agent: &Agent,
    sid: &str,
    t: &Turn<'_>,
    server: &Value,
    cancel: &mut watch::Receiver<bool>,
) -> Result<Result<Link, String>, Stop> {
    match server["type"].as_str() {
        Some("acp") => {
            let id = server["serverId"].as_str().unwrap_or("").to_owned();
            let params = json!({"acpId": id, "sessionId": sid});
            Ok(match agent.request("mcp/connect", params, cancel).await? {
                Reply::Ok(v) => match v["connectionId"].as_str() {
                    Some(c) => Ok(Link::Acp {
                        server: id,
                        connection: c.to_owned(),
                    }),
                    None => Err(format!("no connectionId in {v}")),
                },
                Reply::Err(e) => Err(e.message.to_string()),
            })
        }
        None => {
            let command = server["command"].as_str().unwrap_or("");
            let args: Vec<&str> = server["args"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(&args)
                .current_dir(t.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true);
            for e in server["env"].as_array().into_iter().flatten() {
                if let (Some(k), Some(v)) = (e["name"].as_str(), e["value"].as_str()) {
                    cmd.env(k, v);
                }
            }
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => return Ok(Err(format!("cannot start {command:?}: {e}"))),
            };
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                return Ok(Err("no stdio".to_owned()));
            };
            Ok(Ok(Link::Stdio(Box::new(StdioLink {
                _child: child,
                stdin,
                lines: tokio::io::BufReader::new(stdout).lines(),
            }))))
        }
        Some(other) => Ok(Err(format!("the mock does not speak {other}"))),
    }
}

/// One MCP request; its result, or the error's message.
async fn call(
    agent: &Agent,
    sid: &str,
    link: &mut Link,
    n: &mut u64,
    method: &str,
    params: Value,
    cancel: &mut watch::Receiver<bool>,
) -> Result<Result<Value, String>, Stop> {
    *n += 1;
    match link {
        Link::Acp { server, connection } => {
            let p = json!({"serverId": server, "requestId": format!("r{n}"), "connectionId": connection,
                           "method": method, "params": params, "sessionId": sid});
            Ok(match agent.request("mcp/message", p, cancel).await? {
                Reply::Ok(v) => match (v.get("error"), v.get("result")) {
                    (Some(e), _) => Err(e["message"].as_str().unwrap_or("error").to_owned()),
                    (None, Some(r)) => Ok(r.clone()),
                    (None, None) => Ok(v),
                },
                Reply::Err(e) => Err(e.message.to_string()),
            })
        }
        Link::Stdio(link) => {
            let StdioLink { stdin, lines, .. } = &mut **link;
            let line = json!({"jsonrpc": "2.0", "id": *n, "method": method, "params": params});
            if stdin
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                return Ok(Err("the server's input is closed".to_owned()));
            }
            let want = *n;
            let wait = async {
                loop {
                    let Ok(Some(line)) = lines.next_line().await else {
                        return Err("the server exited".to_owned());
                    };
                    let Ok(v) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if v["id"] != json!(want) || v.get("method").is_some() {
                        continue;
                    }
                    return match v.get("error") {
                        Some(e) => Err(e["message"].as_str().unwrap_or("error").to_owned()),
                        None => Ok(v["result"].clone()),
                    };
                }
            };
            tokio::select! {
                r = tokio::time::timeout(STDIO_WAIT, wait) => {
                    Ok(r.unwrap_or_else(|_| Err("the server did not answer".to_owned())))
                }
                _ = super::cancelled(cancel) => Err(Stop::Cancelled),
            }
        }
    }
}

/// One MCP notification without params.
async fn notify(agent: &Agent, sid: &str, link: &mut Link, method: &str) -> Result<(), Stop> {
    match link {
        Link::Acp { server, connection } => {
            let p = json!({"serverId": server, "requestId": "", "connectionId": connection,
                           "method": method, "sessionId": sid});
            agent.notify("mcp/message", p).await?;
        }
        Link::Stdio(link) => {
            let line = json!({"jsonrpc": "2.0", "method": method});
            let _ = link.stdin.write_all(format!("{line}\n").as_bytes()).await;
        }
    }
    Ok(())
}
