//! The user's own MCP servers for any agent (`acp-client --mcp-config
//! FILE`, or a profile's `mcpServers`).
//!
//! The file has the shape Claude Desktop, Gemini CLI, Zed and Qwen Code
//! read: a map of servers by name, each a command (`command`, `args`,
//! `env`) or an HTTP server (`url`, `headers`; `"type": "sse"` for SSE).
//! Other members (`type`, `disabled`, `timeout`, …) are ignored.
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
//!   "search": {"url": "http://127.0.0.1:8931/mcp", "headers": {"Authorization": "Bearer …"}}
//! }}
//! ```
//!
//! A local agent (`--agent`) gets them in `session/new` (and
//! `session/load`, `session/resume`) as stdio and HTTP servers, which it
//! starts itself. A remote agent (`--connect`) gets the command servers as
//! MCP-over-ACP servers (`"type": "acp"`): [`relay`] holds the rules by
//! which `acp-client` starts one when the agent connects and passes its
//! MCP messages both ways over `mcp/*`; [`host`] is the I/O around it.

pub mod host;
pub mod relay;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// Started as a command, spoken to on its stdin and stdout.
    Command {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
    },
    /// Reached over HTTP (`sse`: the older SSE transport).
    Http {
        /// Its URL.
        url: String,
        /// Headers sent with each request.
        headers: BTreeMap<String, String>,
        /// `"type": "sse"`.
        sse: bool,
    },
}

impl Server {
    /// How the server is reached, in a few words for the user.
    pub fn describe(&self) -> String {
        match self {
            Self::Command { command, args, .. } => {
                let mut words = vec![command.clone()];
                words.extend(args.iter().cloned());
                format!("command: {}", words.join(" "))
            }
            Self::Http { url, sse, .. } => {
                format!("{}: {url}", if *sse { "sse" } else { "http" })
            }
        }
    }
}

/// The servers of a configuration, by name.
pub type Servers = BTreeMap<String, Server>;

/// One entry as written.
#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, alias = "httpUrl")]
    http_url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

/// The `mcpServers` map of a configuration (or a profile), read.
///
/// # Errors
///
/// A message naming the entry that has neither `command` nor `url`, or
/// both.
pub fn servers(value: &serde_json::Value) -> Result<Servers, String> {
    let map: BTreeMap<String, Entry> = serde_json::from_value(value.clone())
        .map_err(|e| format!("mcpServers is not a map of servers: {e}"))?;
    let mut out = Servers::new();
    for (name, e) in map {
        let url = e.url.or(e.http_url);
        let server = match (e.command, url) {
            (Some(command), None) => Server::Command {
                command,
                args: e.args,
                env: e.env,
            },
            (None, Some(url)) => Server::Http {
                url,
                headers: e.headers,
                sse: e.kind.as_deref() == Some("sse"),
            },
            (Some(_), Some(_)) => {
                return Err(format!("mcp server {name:?} has both a command and a url"))
            }
            (None, None) => return Err(format!("mcp server {name:?} has no command and no url")),
        };
        out.insert(name, server);
    }
    Ok(out)
}

/// Reads an `--mcp-config` file: `{"mcpServers": {NAME: …}}`.
///
/// # Errors
///
/// The file cannot be read, is not JSON, has no `mcpServers` map, or an
/// entry is neither a command nor a URL.
pub fn read_config(path: &Path) -> Result<Servers, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let Some(map) = value.get("mcpServers") else {
        return Err(format!("{}: no \"mcpServers\" map", path.display()));
    };
    servers(map).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_shape_is_read() {
        let v = serde_json::json!({
            "files": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "disabled": false},
            "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}},
            "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        });
        let s = servers(&v).unwrap();
        assert_eq!(s["files"].describe(), "command: npx -y x");
        assert!(
            matches!(&s["web"], Server::Http { sse: false, headers, .. } if headers["X"] == "y")
        );
        assert!(matches!(&s["old"], Server::Http { sse: true, .. }));
        let bad = serde_json::json!({"x": {"args": []}});
        assert!(servers(&bad).unwrap_err().contains("\"x\" has no command"));
    }
}
