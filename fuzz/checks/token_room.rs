//! The invariant behind the `token_room` fuzz target (`acp_bridge::users`,
//! the token file, and `acp_bridge::room`, what each user's agent gets),
//! shared with acp-bridge's `tests/integration/token_room_seeds.rs`, which
//! replays the committed seeds.
//!
//! Input: a token file's text (any bytes: JSON or not, huge, duplicate
//! keys, odd types, paths with `..`, NUL, relative paths, escapes), then,
//! after the first `0xFF` byte (never part of UTF-8 text), the bridge's
//! own environment, one variable a line: `NAME=VALUE` (any bytes), or
//! `+NAME` for an `--agent-env NAME`. The bridge's environment also holds
//! every token of the file under `GEMINI_BRIDGE_TOKEN`, as a bridge run
//! with `--token` from its environment would.
//!
//! The oracle is written apart from the code under test: the file is read
//! into a plain tree of JSON values that keeps every key (duplicates and
//! order included), and the token file's rules are applied to that tree
//! one by one, as the format documents them. Asserted:
//! - reading never panics;
//! - the file is accepted exactly when the oracle accepts it;
//! - each token names its user, and each user's room (`env`, `agentRo`,
//!   `agentRw` of all their tokens) is the oracle's; a user not in the file
//!   gets nothing;
//! - each user's agent environment holds only: the allow-listed (and
//!   `--agent-env`) variables of the bridge, the user's own `env`, and
//!   `HOME` and `TMPDIR` set to the user's room; so no token (unless the
//!   operator put it in an allowed variable or in that user's own `env`),
//!   no other user's variable and no other variable of the bridge's;
//! - each user's Landlock rules (what the launcher is given) are the
//!   operator's paths, the user's own `agentRo`/`agentRw` verbatim, and
//!   their three room directories; of these, every path the bridge adds
//!   lies apart from another user's room, the state directory itself, the
//!   token file and the logs.
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use acp_bridge::room::{agent_env, Rooms, UserDirs, ENV_ALLOW};
use acp_bridge::supervisor::Launch;
use acp_bridge::users::{TokenFile, UserRoom};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// The variables of the bridge's environment every agent gets: the
/// documented allow-list, kept here apart from the code's.
const ALLOWED: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_COLLATE",
    "LC_NUMERIC",
    "LC_TIME",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "USER",
    "LOGNAME",
    "SHELL",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// Where the bridge keeps its own files in this scenario.
const STATE: &str = "/srv/acp/state";
const LOGS: &str = "/srv/acp/logs";
const TOKEN_FILE: &str = "/srv/acp/tokens.json";
/// The operator's `--agent-ro` and `--agent-rw`.
const OPERATOR_RO: &str = "/opt/tools";
const OPERATOR_RW: &str = "/srv/shared";
/// An agent program that does not exist: it adds no install directory.
const AGENT: &str = "/nonexistent/acp-agent";

/// One JSON value, every object's keys kept in order with duplicates.
#[derive(Debug, Clone)]
enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    String(String),
    /// A number, `true`, `false` or `null`.
    Other,
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Json, E> {
        Ok(Json::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Json, E> {
        Ok(Json::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Json, E> {
        Ok(Json::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Json, E> {
        Ok(Json::Other)
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Other)
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut pairs = Vec::new();
        while let Some(pair) = map.next_entry::<String, Json>()? {
            pairs.push(pair);
        }
        Ok(Json::Object(pairs))
    }
}

/// One token's entry as the oracle reads it.
#[derive(Debug, Clone)]
struct OracleEntry {
    user: String,
    permissions: Vec<String>,
    env: BTreeMap<String, String>,
    read_only: Vec<String>,
    read_write: Vec<String>,
}

fn string(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn strings(v: &Json) -> Option<Vec<String>> {
    match v {
        Json::Array(items) => items.iter().map(string).collect(),
        _ => None,
    }
}

/// A string-to-string object; a repeated key: the last one counts (every
/// value must still be a string).
fn string_map(v: &Json) -> Option<BTreeMap<String, String>> {
    let Json::Object(pairs) = v else {
        return None;
    };
    let mut out = BTreeMap::new();
    for (k, v) in pairs {
        out.insert(k.clone(), string(v)?);
    }
    Some(out)
}

/// A record with these fields (`required` first, then optional ones) as
/// an object (each field at most once, no other key) or as an array (the
/// fields in order, the optional ones may be left off the end).
fn record<'a>(v: &'a Json, required: &[&str], optional: &[&str]) -> Option<Vec<Option<&'a Json>>> {
    let names: Vec<&str> = required.iter().chain(optional).copied().collect();
    let mut fields: Vec<Option<&Json>> = vec![None; names.len()];
    match v {
        Json::Object(pairs) => {
            for (k, v) in pairs {
                let at = names.iter().position(|n| n == k)?;
                if fields[at].replace(v).is_some() {
                    return None;
                }
            }
        }
        Json::Array(items) => {
            if items.len() < required.len() || items.len() > names.len() {
                return None;
            }
            for (slot, item) in fields.iter_mut().zip(items) {
                *slot = Some(item);
            }
        }
        _ => return None,
    }
    if fields.iter().take(required.len()).any(Option::is_none) {
        return None;
    }
    Some(fields)
}

fn entry(v: &Json) -> Option<OracleEntry> {
    let f = record(
        v,
        &["userId", "permissions"],
        &["env", "agentRo", "agentRw"],
    )?;
    Some(OracleEntry {
        user: string(f[0]?)?,
        permissions: strings(f[1]?)?,
        env: f[2].map_or(Some(BTreeMap::new()), string_map)?,
        read_only: f[3].map_or(Some(Vec::new()), strings)?,
        read_write: f[4].map_or(Some(Vec::new()), strings)?,
    })
}

/// The token file's entries by token, or `None` when it is not one.
fn oracle(text: &[u8]) -> Option<BTreeMap<String, OracleEntry>> {
    let text = std::str::from_utf8(text).ok()?;
    let root: Json = serde_json::from_str(text).ok()?;
    let top = record(&root, &["tokens"], &[])?;
    let Some(Json::Object(pairs)) = top[0] else {
        return None;
    };
    let mut tokens = BTreeMap::new();
    for (token, v) in pairs {
        // Every entry must be one, even one a later duplicate replaces.
        tokens.insert(token.clone(), entry(v)?);
    }
    if tokens.is_empty() {
        return None;
    }
    for (token, e) in &tokens {
        let token_ok = token.len() >= 16 && token.bytes().all(|b| (0x21..=0x7e).contains(&b));
        let user_ok =
            !e.user.is_empty() && e.user.len() <= 128 && !e.user.chars().any(char::is_control);
        let permissions_ok = e.permissions.iter().all(|p| p == "read" || p == "write");
        let env_ok = e.env.iter().all(|(k, v)| {
            !k.is_empty()
                && !k.contains('=')
                && !k.contains(['\0', ' ', '\t', '\n', '\r', '\x0c'])
                && !v.contains('\0')
                && k != "HOME"
                && k != "TMPDIR"
        });
        let paths_ok = e
            .read_only
            .iter()
            .chain(&e.read_write)
            .all(|p| p.starts_with('/'));
        if !(token_ok && user_ok && permissions_ok && env_ok && paths_ok) {
            return None;
        }
    }
    // Two tokens of one user never set one variable to two values.
    for a in tokens.values() {
        for b in tokens.values().filter(|b| b.user == a.user) {
            if a.env
                .iter()
                .any(|(k, v)| b.env.get(k).is_some_and(|w| w != v))
            {
                return None;
            }
        }
    }
    Some(tokens)
}

/// The bridge's environment and `--agent-env` names from the input's tail.
fn server_env(tail: &[u8]) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut env = Vec::new();
    let mut extra = Vec::new();
    for line in tail.split(|b| *b == b'\n') {
        if let Some(name) = line.strip_prefix(b"+") {
            extra.push(String::from_utf8_lossy(name).into_owned());
            continue;
        }
        let at = line.iter().position(|b| *b == b'=').unwrap_or(line.len());
        let (name, value) = line.split_at(at);
        let value = value.get(1..).unwrap_or_default();
        env.push((
            OsString::from_vec(name.to_vec()),
            OsString::from_vec(value.to_vec()),
        ));
    }
    (env, extra)
}

/// A user's room directories: one directory of the state directory per
/// user, named by the user id's bytes in hex (distinct for distinct users).
fn dirs_of(user: &str) -> (PathBuf, UserDirs) {
    let name: String = user.bytes().map(|b| format!("{b:02x}")).collect();
    let base = Path::new(STATE).join(format!("u{name}"));
    let dirs = UserDirs::beside(&base.join("home"), &base.join("work"));
    (base, dirs)
}

/// `path` with `.` and `..` resolved by its text alone.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Whether no part of `path` that exists on this machine is a symbolic
/// link: then where it is, as far as it exists, is what its text says
/// (each prefix taken as written, `..` included; past the first one that
/// does not exist, nothing does).
fn no_link_on_the_way(path: &Path) -> bool {
    let mut at = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(_) | Component::ParentDir => at.push(c),
            _ => continue,
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return false,
            Ok(_) => {}
            Err(_) => return true,
        }
    }
    true
}

/// Whether a rule on `granted` reaches anything of `secret`: one lies
/// beneath (or is) the other.
fn overlaps(granted: &Path, secret: &Path) -> bool {
    let (g, s) = (lexical(granted), lexical(secret));
    s.starts_with(&g) || g.starts_with(&s)
}

/// Every string of a JSON tree: its keys and its string values.
fn all_strings<'a>(v: &'a Json, out: &mut Vec<&'a str>) {
    match v {
        Json::Object(pairs) => {
            for (k, v) in pairs {
                out.push(k);
                all_strings(v, out);
            }
        }
        Json::Array(items) => items.iter().for_each(|v| all_strings(v, out)),
        Json::String(s) => out.push(s),
        Json::Other => {}
    }
}

/// A refusal's message never quotes a token: a string of the file that
/// could be one (a key of `tokens`) appears in it only when the message
/// has it from elsewhere (a user id, a name or path, the file's path).
fn assert_names_no_token(error: &str, text: &[u8], path: &Path) {
    assert!(
        error.starts_with("token file ") || error.starts_with("cannot read token file "),
        "{error}"
    );
    let Some(root) = std::str::from_utf8(text)
        .ok()
        .and_then(|t| serde_json::from_str::<Json>(t).ok())
    else {
        return;
    };
    let Json::Object(top) = &root else {
        return;
    };
    let mut others: Vec<String> = vec![path.display().to_string(), "expected {\"tokens\": {TOKEN: {\"userId\": NAME, \"permissions\": [\"read\", \"write\"]}}}".to_owned()];
    let mut keys = Vec::new();
    for (k, v) in top {
        others.push(k.clone());
        match (k.as_str(), v) {
            ("tokens", Json::Object(tokens)) => {
                for (token, entry) in tokens {
                    keys.push(token.as_str());
                    let mut strings = Vec::new();
                    all_strings(entry, &mut strings);
                    others.extend(strings.iter().map(|s| (*s).to_owned()));
                }
            }
            _ => {
                let mut strings = Vec::new();
                all_strings(v, &mut strings);
                others.extend(strings.iter().map(|s| (*s).to_owned()));
            }
        }
    }
    let quoted: Vec<String> = others.iter().map(|s| format!("{s:?}")).collect();
    for token in keys.into_iter().filter(|t| t.len() >= 16) {
        let elsewhere = others.iter().chain(&quoted).any(|s| s.contains(token));
        assert!(
            elsewhere || !error.contains(token),
            "a refusal quotes a token: {error}"
        );
    }
}

/// The landlock rules a user's agent is launched with.
fn launched_policy(rooms: &Rooms, dirs: &UserDirs, room: &UserRoom) -> acp_bridge::sandbox::Policy {
    let cmd = rooms
        .command(&[AGENT.to_owned()], Some((dirs, room)))
        .expect("launcher command");
    let args: Vec<_> = cmd.as_std().get_args().collect();
    assert_eq!(args.len(), 2, "launcher arguments: {args:?}");
    let launch: Launch =
        serde_json::from_str(&args[1].to_string_lossy()).expect("launch spec is JSON");
    assert!(launch.strict, "a user's agent is confined strictly");
    assert_eq!(launch.command, vec![AGENT.to_owned()]);
    launch.sandbox.expect("a user's agent is confined")
}

/// Where [`check`] writes each token file (the directory is made once, not
/// for every input). Remove it when done.
pub fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("acp-token-room-{}", std::process::id()))
}

pub fn check(data: &[u8]) {
    assert_eq!(
        ENV_ALLOW, ALLOWED,
        "the allow-list changed: review what agents now get, then update this copy"
    );
    let (text, tail) = match data.iter().position(|b| *b == 0xFF) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let dir = scratch_dir();
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("tokens.json");
    // A new file each time: rewriting one in place (truncating it) makes
    // ext4 flush it to disk on close, twenty times slower.
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, text).expect("token file written");
    let loaded = TokenFile::load(&path);
    let expected = oracle(text);
    let (file, entries) = match (loaded, expected) {
        (Ok(file), Some(entries)) => (file, entries),
        (Err(e), None) => {
            assert_names_no_token(&e, text, &path);
            return;
        }
        (Ok(_), None) => panic!("accepted a file the oracle refuses"),
        (Err(e), Some(_)) => panic!("refused a file the oracle accepts: {e}"),
    };
    let (mut server, mut extra) = server_env(tail);
    for token in entries.keys() {
        server.push(("GEMINI_BRIDGE_TOKEN".into(), token.into()));
        server.push(("GEMINI_BRIDGE_TOKEN_FILE".into(), TOKEN_FILE.into()));
    }
    extra.retain(|n| n != "GEMINI_BRIDGE_TOKEN");
    let allowed = |name: &OsString| {
        ALLOWED.iter().any(|a| name == a) || extra.iter().any(|a| name == a.as_str())
    };

    let mut users: BTreeMap<&str, Vec<(&String, &OracleEntry)>> = BTreeMap::new();
    for (token, e) in &entries {
        users.entry(e.user.as_str()).or_default().push((token, e));
        let identity = file.lookup(token).expect("every token names its user");
        assert_eq!(identity.user, e.user);
        let write = e.permissions.iter().any(|p| p == "write");
        let read = write || e.permissions.iter().any(|p| p == "read");
        assert_eq!(identity.permissions.write(), write);
        assert_eq!(identity.permissions.read(), read);
    }
    let mut nobody = String::from("nobody");
    while users.contains_key(nobody.as_str()) {
        nobody.push('!');
    }
    assert_eq!(file.room(&nobody), UserRoom::default());

    let protected = [
        ("state directory", STATE),
        ("logs", LOGS),
        ("token file", TOKEN_FILE),
    ];
    let rooms = Rooms {
        read_only: vec![OPERATOR_RO.into()],
        read_write: vec![OPERATOR_RW.into()],
        env_allow: extra.clone(),
        protected: protected
            .iter()
            .map(|(what, p)| ((*what).to_owned(), PathBuf::from(p)))
            .collect(),
        ..Rooms::default()
    };
    for (user, tokens) in &users {
        // The oracle's room: all of the user's tokens, in token order.
        let mut own_env: BTreeMap<String, String> = BTreeMap::new();
        let mut own_ro = Vec::new();
        let mut own_rw = Vec::new();
        for (_, e) in tokens {
            own_env.extend(e.env.clone());
            own_ro.extend(e.read_only.iter().map(PathBuf::from));
            own_rw.extend(e.read_write.iter().map(PathBuf::from));
        }
        let room = file.room(user);
        assert_eq!(room.env, own_env, "user {user:?}: env");
        assert_eq!(room.read_only, own_ro, "user {user:?}: agentRo");
        assert_eq!(room.read_write, own_rw, "user {user:?}: agentRw");

        let (base, dirs) = dirs_of(user);
        let env = agent_env(server.clone(), &extra, Some((&dirs, &room)));
        let home: OsString = dirs.home.clone().into();
        let tmp: OsString = dirs.tmp.clone().into();
        // Every variable has a source it may come from.
        for (k, v) in &env {
            let room_own = (k == "HOME" && *v == home) || (k == "TMPDIR" && *v == tmp);
            let users_own = k
                .to_str()
                .and_then(|k| own_env.get(k))
                .is_some_and(|w| v == w.as_str());
            let bridges = k != "HOME"
                && k != "TMPDIR"
                && allowed(k)
                && !k.to_str().is_some_and(|k| own_env.contains_key(k))
                && server.iter().any(|(sk, sv)| sk == k && sv == v);
            assert!(
                room_own || users_own || bridges,
                "user {user:?}: {k:?} reached the agent from nowhere it may"
            );
            assert!(
                k != "GEMINI_BRIDGE_TOKEN" || users_own,
                "user {user:?}: the bridge's token reached the agent"
            );
        }
        // And it is all of them, each once (the bridge's own as often as
        // the bridge has them).
        let mut want: Vec<(OsString, OsString)> = server
            .iter()
            .filter(|(k, _)| {
                allowed(k)
                    && k != "HOME"
                    && k != "TMPDIR"
                    && !k.to_str().is_some_and(|k| own_env.contains_key(k))
            })
            .cloned()
            .collect();
        want.extend(own_env.iter().map(|(k, v)| (k.into(), v.into())));
        want.push(("HOME".into(), home.clone()));
        want.push(("TMPDIR".into(), tmp.clone()));
        let mut got = env.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want, "user {user:?}: the agent's environment");
        // No other user's variable, unless the bridge or this user gives
        // the same one.
        for (other, others) in users.iter().filter(|(o, _)| *o != user) {
            for (_, e) in others {
                for (k, v) in &e.env {
                    let also_here = own_env.get(k) == Some(v)
                        || (allowed(&k.into())
                            && server
                                .iter()
                                .any(|(sk, sv)| sk == k.as_str() && sv == v.as_str()));
                    if !also_here {
                        assert!(
                            !env.iter()
                                .any(|(ek, ev)| ek == k.as_str() && ev == v.as_str()),
                            "user {user:?} got {k} of user {other:?}"
                        );
                    }
                }
            }
        }

        // A path of the user's own that reaches the bridge's files (the
        // state directory with every room, the logs, the token file) is
        // refused when their agent starts; known here by the paths' text,
        // when no existing part of them is a symbolic link (this machine's
        // links are not the oracle's business).
        let own = || own_ro.iter().chain(&own_rw);
        let reaches = own().any(|p| protected.iter().any(|(_, s)| overlaps(p, Path::new(s))));
        let launched = rooms.command(&[AGENT.to_owned()], Some((&dirs, &room)));
        if own().all(|p| no_link_on_the_way(p)) {
            assert_eq!(
                launched.is_err(),
                reaches,
                "user {user:?}: paths {:?}: {:?}",
                own().collect::<Vec<_>>(),
                launched.as_ref().err()
            );
        }
        if let Err(e) = launched {
            assert!(
                e.to_string().contains("refused"),
                "user {user:?}: launch refused for another reason: {e}"
            );
            continue;
        }
        // The Landlock rules the launcher gets.
        let policy = launched_policy(&rooms, &dirs, &room);
        let mut want_ro = vec![PathBuf::from(OPERATOR_RO)];
        want_ro.extend(own_ro.iter().cloned());
        let mut want_rw = vec![PathBuf::from(OPERATOR_RW)];
        want_rw.extend(own_rw.iter().cloned());
        want_rw.extend([dirs.home.clone(), dirs.work.clone(), dirs.tmp.clone()]);
        assert_eq!(policy.read_only, want_ro, "user {user:?}: read-only rules");
        assert_eq!(
            policy.read_write, want_rw,
            "user {user:?}: read-write rules"
        );
        assert_eq!(policy.tcp_connect, None);
        let from_file: BTreeSet<&PathBuf> = own().collect();
        let mut secrets = vec![PathBuf::from(LOGS), PathBuf::from(TOKEN_FILE)];
        secrets.extend(users.keys().filter(|o| *o != user).map(|o| dirs_of(o).0));
        for granted in policy.read_only.iter().chain(&policy.read_write) {
            // The user's own paths (the launch was not refused): outside
            // every file of the bridge's and every other room.
            if from_file.contains(granted) {
                for secret in protected
                    .iter()
                    .map(|(_, s)| PathBuf::from(s))
                    .chain(secrets.clone())
                {
                    assert!(
                        !overlaps(granted, &secret) || !no_link_on_the_way(granted),
                        "user {user:?}: their path {} reaches {}",
                        granted.display(),
                        secret.display()
                    );
                }
                continue;
            }
            assert!(
                !lexical(Path::new(STATE)).starts_with(lexical(granted)),
                "user {user:?}: the rule on {} reaches the whole state directory",
                granted.display()
            );
            for secret in &secrets {
                assert!(
                    !overlaps(granted, secret),
                    "user {user:?}: the rule on {} reaches {}",
                    granted.display(),
                    secret.display()
                );
            }
            if !granted.starts_with(OPERATOR_RO) && !granted.starts_with(OPERATOR_RW) {
                assert!(
                    lexical(granted).starts_with(&base),
                    "user {user:?}: {} is not in their room",
                    granted.display()
                );
            }
        }
    }
}
