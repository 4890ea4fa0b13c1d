//! Named server profiles for `acp-client --profile NAME`, and the
//! `acp-client profiles list|add|remove` commands that manage them.
//!
//! The file is JSON in the user's configuration directory:
//! `$XDG_CONFIG_HOME/acp-codec/servers.json` (else
//! `~/.config/acp-codec/servers.json`) on Linux and other Unix systems,
//! `~/Library/Application Support/acp-codec/servers.json` on macOS,
//! `%APPDATA%\acp-codec\servers.json` on Windows. `--profiles-file FILE`
//! or `ACP_CLIENT_PROFILES` names another.
//!
//! ```json
//! {"profiles": {"team": {"url": "wss://agents.example.org/acp",
//!                        "tokenEnv": "TEAM_ACP_TOKEN",
//!                        "caCert": "/etc/ssl/team-ca.pem",
//!                        "mcpServers": {"files": {"command": "my-mcp-server"}}}}}
//! ```
//!
//! `mcpServers` (optional) are the user's MCP servers offered to that
//! server's agent, as with `--mcp-config` (which wins when given).
//!
//! A profile's token comes from an environment variable (`tokenEnv`) or a
//! file (`tokenFile`, its first line), never from the command line, and is
//! never printed. On Unix the profiles file and a token file are refused
//! when their group or others have any access (`chmod 600`); `add` creates
//! the file that way (and its directory `700`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The environment variable naming another profiles file.
pub const PROFILES_ENV: &str = "ACP_CLIENT_PROFILES";

/// One server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Profile {
    /// `ws://`, `wss://`, `http://` or `https://`.
    pub url: String,
    /// The environment variable holding the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// The file holding the token (its first line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    /// PEM file of the CA certificates to trust for `wss://` / `https://`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<PathBuf>,
    /// The user's MCP servers for this server's agent, as in an
    /// `--mcp-config` file's `mcpServers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<serde_json::Value>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    profiles: BTreeMap<String, Profile>,
}

/// Where the profiles live: `explicit`, else `$ACP_CLIENT_PROFILES`, else
/// the platform's configuration directory.
pub fn path(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return Ok(p.to_owned());
    }
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(p) = env(PROFILES_ENV) {
        return Ok(PathBuf::from(p));
    }
    let base = if cfg!(windows) {
        env("APPDATA").map(PathBuf::from)
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| Path::new(&h).join("Library/Application Support"))
    } else {
        env("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))
    };
    base.map(|b| b.join("acp-codec").join("servers.json"))
        .ok_or_else(|| {
            format!(
                "no configuration directory (HOME unset): use --profiles-file or {PROFILES_ENV}"
            )
        })
}

/// Refuses a file that its group or others may access: it names where
/// tokens are, or holds one.
fn check_private(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "{} is accessible by group or others (mode {mode:o}): run chmod 600 {}",
                path.display(),
                path.display()
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

fn load(path: &Path) -> Result<File, String> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(File::default()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    check_private(path)?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not a profiles file: {e}", path.display()))
}

/// Writes the file (mode 600, its directory 700), replacing it whole.
fn save(path: &Path, file: &File) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let text = serde_json::to_string_pretty(file).map_err(|e| e.to_string())? + "\n";
    let tmp = path.with_extension("json.tmp");
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let write = |f: &mut fs::File| std::io::Write::write_all(f, text.as_bytes());
    options
        .open(&tmp)
        .and_then(|mut f| write(&mut f))
        .and_then(|()| fs::rename(&tmp, path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// What `--profile NAME` gives: the URL, the token and the CA file.
pub struct Resolved {
    pub url: String,
    pub token: Option<String>,
    pub ca_cert: Option<PathBuf>,
    /// Its `mcpServers` (none when it has none).
    pub mcp_servers: crate::mcp::Servers,
}

/// Reads profile `name` and its token.
pub fn resolve(name: &str, file: Option<&Path>) -> Result<Resolved, String> {
    let path = path(file)?;
    let profiles = load(&path)?;
    let p = profiles.profiles.get(name).ok_or_else(|| {
        format!(
            "no profile {name:?} in {} (acp-client profiles list)",
            path.display()
        )
    })?;
    let token = match (&p.token_env, &p.token_file) {
        (Some(var), _) => Some(
            std::env::var(var)
                .ok()
                .filter(|t| !t.is_empty())
                .ok_or_else(|| format!("profile {name:?}: the token variable {var} is not set"))?,
        ),
        (None, Some(f)) => {
            check_private(f)?;
            let text = fs::read_to_string(f)
                .map_err(|e| format!("profile {name:?}: token file {}: {e}", f.display()))?;
            let token = text.lines().next().unwrap_or("").trim().to_owned();
            if token.is_empty() {
                return Err(format!(
                    "profile {name:?}: token file {} is empty",
                    f.display()
                ));
            }
            Some(token)
        }
        (None, None) => None,
    };
    let mcp_servers = match &p.mcp_servers {
        Some(v) => crate::mcp::servers(v).map_err(|e| format!("profile {name:?}: {e}"))?,
        None => crate::mcp::Servers::new(),
    };
    Ok(Resolved {
        mcp_servers,
        url: p.url.clone(),
        token,
        ca_cert: p.ca_cert.clone(),
    })
}

const USAGE: &str = "usage: acp-client profiles [--profiles-file FILE] list
       acp-client profiles [--profiles-file FILE] add NAME --url URL [--token-env VAR | --token-file FILE] [--ca-cert FILE]
       acp-client profiles [--profiles-file FILE] remove NAME
Tokens come from an environment variable or a file, never the command line; they are never printed.";

/// `acp-client profiles …`: the exit status (0, 1 on an error, 2 for bad
/// arguments); output on stdout, errors on stderr.
pub fn cli(args: &[String]) -> u8 {
    match run(args) {
        Ok(out) => {
            print!("{out}");
            0
        }
        Err((code, e)) => {
            eprintln!("acp-client profiles: {e}");
            if code == 2 {
                eprintln!("{USAGE}");
            }
            code
        }
    }
}

fn run(args: &[String]) -> Result<String, (u8, String)> {
    let usage = |e: &str| (2u8, e.to_owned());
    let mut file = None;
    let mut words = Vec::new();
    let mut opts: BTreeMap<&str, String> = BTreeMap::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            o @ ("--profiles-file" | "--url" | "--token-env" | "--token-file" | "--ca-cert") => {
                let v = it.next().ok_or_else(|| usage(&format!("{o} needs a value")))?;
                if o == "--profiles-file" {
                    file = Some(PathBuf::from(v));
                } else {
                    opts.insert(o, v.clone());
                }
            }
            "--token" => return Err(usage("a profile's token comes from --token-env VAR or --token-file FILE, never the command line")),
            o if o.starts_with("--") => return Err(usage(&format!("unknown option {o:?}"))),
            w => words.push(w),
        }
    }
    let path = path(file.as_deref()).map_err(|e| (1, e))?;
    let mut profiles = load(&path).map_err(|e| (1, e))?;
    match words.as_slice() {
        ["list"] if opts.is_empty() => Ok(list(&profiles)),
        ["add", name] => {
            let url = opts
                .remove("--url")
                .ok_or_else(|| usage("add needs --url URL"))?;
            let scheme = url.split("://").next().unwrap_or("").to_ascii_lowercase();
            if !matches!(scheme.as_str(), "ws" | "wss" | "http" | "https") || !url.contains("://") {
                return Err(usage("--url must be ws://, wss://, http:// or https://"));
            }
            if url.contains("token=") {
                return Err(usage(
                    "--url must not hold a token: use --token-env or --token-file",
                ));
            }
            let token_env = opts.remove("--token-env");
            let token_file = opts.remove("--token-file").map(PathBuf::from);
            if token_env.is_some() && token_file.is_some() {
                return Err(usage("--token-env and --token-file exclude each other"));
            }
            let profile = Profile {
                url,
                token_env,
                token_file,
                ca_cert: opts.remove("--ca-cert").map(PathBuf::from),
                mcp_servers: None,
            };
            let replaced = profiles
                .profiles
                .insert((*name).to_owned(), profile)
                .is_some();
            save(&path, &profiles).map_err(|e| (1, e))?;
            let verb = if replaced { "replaced" } else { "added" };
            Ok(format!("{verb} profile {name} in {}\n", path.display()))
        }
        ["remove", name] if opts.is_empty() => {
            if profiles.profiles.remove(*name).is_none() {
                return Err((1, format!("no profile {name:?} in {}", path.display())));
            }
            save(&path, &profiles).map_err(|e| (1, e))?;
            Ok(format!("removed profile {name}\n"))
        }
        _ => Err(usage("expected list, add NAME --url URL … or remove NAME")),
    }
}

/// One line per profile: name, URL, where its token comes from (never the
/// token), CA.
fn list(file: &File) -> String {
    if file.profiles.is_empty() {
        return "no profiles (acp-client profiles add NAME --url URL --token-env VAR)\n".to_owned();
    }
    let mut out = String::new();
    for (name, p) in &file.profiles {
        let token = match (&p.token_env, &p.token_file) {
            (Some(v), _) => format!("token from ${v}"),
            (None, Some(f)) => format!("token from {}", f.display()),
            (None, None) => "no token".to_owned(),
        };
        let ca = p.ca_cert.as_ref().map_or_else(
            || "public web roots".to_owned(),
            |c| format!("ca {}", c.display()),
        );
        out.push_str(&format!("{name}\t{}\t{token}\t{ca}\n", p.url));
    }
    out
}
