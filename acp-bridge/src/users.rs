//! Who may connect to `acp-bridge`: the users of a token file, or the one
//! `--token`.
//!
//! The token file maps tokens to users:
//!
//! ```json
//! {"tokens": {"a-long-random-token": {"userId": "ana", "permissions": ["read", "write"]},
//!             "another-token":       {"userId": "bo",  "permissions": ["read"]}}}
//! ```
//!
//! Each connection presents one token; it is compared with every token of
//! the file in constant time (`subtle`), so the time taken does not tell
//! how much of a token matched. `permissions`: `read` lets the user watch
//! their own sessions (reattach them and receive their updates); `write`
//! (implies `read`) also lets them create sessions, prompt, cancel, change
//! a session's mode, model or options, and answer the agent's permission
//! and file requests. A user with neither is refused. Several tokens may
//! name the same user.
//!
//! An entry may also give the user's own agent what it alone gets (see
//! [`TokenFile::room`]): environment variables (`env`, for example the
//! user's own API key, so usage is billed and limited per user) and paths
//! beyond its room (`agentRo` read-only, `agentRw` read-write):
//!
//! ```json
//! {"tokens": {"a-long-random-token": {"userId": "ana", "permissions": ["read", "write"],
//!                                     "env": {"GEMINI_API_KEY": "ana's key"},
//!                                     "agentRo": ["/srv/datasets"], "agentRw": ["/srv/projects/ana"]}}}
//! ```
//!
//! An entry may also set the user's own limits, beyond `--agent-max-processes`
//! and `--agent-max-memory` (see `acp_bridge::limits`): `maxProcesses` (a
//! number) and `maxMemory` (bytes, a number or a string with a `K`, `M` or
//! `G` suffix). With several tokens of one user, the smallest wins:
//!
//! ```json
//! {"tokens": {"a-long-random-token": {"userId": "ana", "permissions": ["read", "write"],
//!                                     "maxProcesses": 256, "maxMemory": "2G"}}}
//! ```
//!
//! `SIGHUP` re-reads the file. Open connections stay: a user's new
//! permissions apply to their next message; a user no longer in the file
//! keeps their open connections, read-only, and may not open new ones. A
//! file that does not parse is refused (at startup the bridge exits; on
//! `SIGHUP` it keeps the previous users and logs why).

use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use acp_codec::remote::Permissions;
use serde::Deserialize;
use subtle::ConstantTimeEq;

/// A connection's user and what they may do. The single-user bridge (no
/// token, or `--token`) has one anonymous user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The user's name; empty for the anonymous user.
    pub user: String,
    pub permissions: Permissions,
}

impl Identity {
    /// The one user of a single-user bridge.
    pub fn anonymous() -> Self {
        Self {
            user: String::new(),
            permissions: Permissions::READ_WRITE,
        }
    }

    /// How log lines name the user: `user ana`, or `-` when anonymous.
    pub fn tag(&self) -> String {
        if self.user.is_empty() {
            "-".to_owned()
        } else {
            format!("user {}", self.user)
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    tokens: std::collections::BTreeMap<String, EntryShape>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryShape {
    #[serde(rename = "userId")]
    user_id: String,
    permissions: Vec<String>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    #[serde(default, rename = "agentRo")]
    agent_ro: Vec<PathBuf>,
    #[serde(default, rename = "agentRw")]
    agent_rw: Vec<PathBuf>,
    #[serde(default, rename = "maxProcesses")]
    max_processes: Option<u64>,
    #[serde(default, rename = "maxMemory")]
    max_memory: Option<Bytes>,
}

/// A byte count in the token file: a number, or a string with a suffix.
#[derive(Deserialize)]
#[serde(untagged)]
enum Bytes {
    Number(u64),
    Text(String),
}

/// What a user's own agent gets beyond the room every agent gets: from the
/// token file's `env`, `agentRo` and `agentRw`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct UserRoom {
    /// Environment variables for the user's agent only.
    pub env: std::collections::BTreeMap<String, String>,
    /// More paths the agent may read (and execute).
    pub read_only: Vec<PathBuf>,
    /// More paths the agent may read and write.
    pub read_write: Vec<PathBuf>,
    /// `maxProcesses`: this user's `--agent-max-processes`.
    pub max_processes: Option<u64>,
    /// `maxMemory`: this user's `--agent-max-memory`, in bytes.
    pub max_memory: Option<u64>,
}

impl std::fmt::Debug for UserRoom {
    // Never prints a value of `env`: they are secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserRoom")
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("read_only", &self.read_only)
            .field("read_write", &self.read_write)
            .field("max_processes", &self.max_processes)
            .field("max_memory", &self.max_memory)
            .finish()
    }
}

/// Variables a token file may not set: the room's own.
const ROOM_VARIABLES: [&str; 2] = ["HOME", "TMPDIR"];

/// Why `env` cannot be an agent's environment (naming no value).
fn check_env(user: &str, env: &std::collections::BTreeMap<String, String>) -> Result<(), String> {
    for (name, value) in env {
        let bad_name = name.is_empty()
            || name.contains('=')
            || name.bytes().any(|b| b == 0 || b.is_ascii_whitespace());
        if bad_name || value.contains('\0') {
            return Err(format!(
                "user {user:?}: env {name:?} is not a variable name and value"
            ));
        }
        if ROOM_VARIABLES.contains(&name.as_str()) {
            return Err(format!(
                "user {user:?}: env may not set {name} (the bridge sets it to the user's room)"
            ));
        }
    }
    Ok(())
}

struct Entry {
    token: Vec<u8>,
    identity: Identity,
    room: UserRoom,
}

/// The users of a token file, re-read on demand.
pub struct TokenFile {
    path: PathBuf,
    /// This process's random key for [`Index`]: an index's order says
    /// nothing of the tokens to anyone who does not know it.
    keys: RandomState,
    entries: RwLock<Index>,
}

/// A file's entries and, sorted, each token's keyed hash with the
/// entry's place: a lookup hashes the token it is given once, finds the
/// entries of that hash (none, one, or on a collision a few) by binary
/// search, and compares only those in constant time. So a lookup costs
/// the same with 10 tokens as with 10,000, where comparing every token
/// made each connection's cost grow with the file (and a team's start
/// quadratic in its users). What its timing tells is whether the given
/// token's keyed hash is one of the file's: without the key, nothing.
///
/// The entries' places sorted by user (a user's in the file's order) find
/// a user's tokens the same way for their room, read at every start of
/// their agent.
struct Index {
    entries: Vec<Entry>,
    by_hash: Vec<(u64, usize)>,
    by_user: Vec<usize>,
}

impl Index {
    fn new(entries: Vec<Entry>, keys: &RandomState) -> Self {
        let mut by_hash: Vec<(u64, usize)> = entries
            .iter()
            .enumerate()
            .map(|(n, e)| (keys.hash_one(e.token.as_slice()), n))
            .collect();
        by_hash.sort_unstable();
        let mut by_user: Vec<usize> = (0..entries.len()).collect();
        // Stable: a user's entries stay in the file's order.
        by_user.sort_by(|&a, &b| entries[a].identity.user.cmp(&entries[b].identity.user));
        Self {
            entries,
            by_hash,
            by_user,
        }
    }

    /// `user`'s entries, in the file's order.
    fn of_user<'a>(&'a self, user: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        let from = self
            .by_user
            .partition_point(|&n| self.entries[n].identity.user.as_str() < user);
        self.by_user[from..]
            .iter()
            .map(|&n| &self.entries[n])
            .take_while(move |e| e.identity.user == user)
    }
}

impl std::fmt::Debug for TokenFile {
    // Never prints a token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Parses the file's text: the entries, or why not (naming no token).
fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let shape: FileShape = serde_json::from_str(text).map_err(|e| {
        // serde's message may quote a value: give the position only.
        format!("not a token file (line {}, column {}): expected {{\"tokens\": {{TOKEN: {{\"userId\": NAME, \"permissions\": [\"read\", \"write\"]}}}}}}", e.line(), e.column())
    })?;
    if shape.tokens.is_empty() {
        return Err("no tokens".to_owned());
    }
    let mut entries = Vec::with_capacity(shape.tokens.len());
    for (n, (token, e)) in shape.tokens.into_iter().enumerate() {
        if token.len() < 16 || token.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(format!(
                "token {} (of user {:?}) must be at least 16 printable ascii characters",
                n + 1,
                e.user_id
            ));
        }
        if e.user_id.is_empty() || e.user_id.len() > 128 || e.user_id.chars().any(char::is_control)
        {
            return Err(format!(
                "token {}: userId must be 1 to 128 characters without control characters",
                n + 1
            ));
        }
        let permissions = Permissions::from_names(e.permissions.iter().map(String::as_str))
            .map_err(|bad| format!("user {:?}: {bad}", e.user_id))?;
        check_env(&e.user_id, &e.env)?;
        if let Some(p) = e
            .agent_ro
            .iter()
            .chain(&e.agent_rw)
            .find(|p| !p.is_absolute())
        {
            return Err(format!(
                "user {:?}: agent path {} is not absolute",
                e.user_id,
                p.display()
            ));
        }
        let max_memory = match e.max_memory {
            None => None,
            Some(Bytes::Number(0)) => {
                return Err(format!(
                    "user {:?}: maxMemory must be at least 1",
                    e.user_id
                ))
            }
            Some(Bytes::Number(n)) => Some(n),
            Some(Bytes::Text(t)) => Some(
                crate::limits::parse_bytes(&t)
                    .map_err(|why| format!("user {:?}: maxMemory: {why}", e.user_id))?,
            ),
        };
        if e.max_processes == Some(0) {
            return Err(format!(
                "user {:?}: maxProcesses must be at least 1",
                e.user_id
            ));
        }
        entries.push(Entry {
            token: token.into_bytes(),
            identity: Identity {
                user: e.user_id,
                permissions,
            },
            room: UserRoom {
                env: e.env,
                read_only: e.agent_ro,
                read_write: e.agent_rw,
                max_processes: e.max_processes,
                max_memory,
            },
        });
    }
    for (n, a) in entries.iter().enumerate() {
        for b in entries.iter().skip(n + 1) {
            if a.identity.user != b.identity.user {
                continue;
            }
            if let Some(name) = a
                .room
                .env
                .iter()
                .find_map(|(k, v)| b.room.env.get(k).filter(|w| *w != v).map(|_| k))
            {
                return Err(format!(
                    "user {:?}: two tokens set env {name} to different values",
                    a.identity.user
                ));
            }
        }
    }
    Ok(entries)
}

fn read(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read token file {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("token file {}: {e}", path.display()))
}

impl TokenFile {
    /// Reads `path`.
    pub fn load(path: &Path) -> Result<Arc<Self>, String> {
        let keys = RandomState::new();
        Ok(Arc::new(Self {
            entries: RwLock::new(Index::new(read(path)?, &keys)),
            keys,
            path: path.to_owned(),
        }))
    }

    /// Re-reads the file; on error the previous users stay. Returns the
    /// users now, each with their permissions, and those no longer there.
    pub fn reload(&self) -> Result<(Vec<Identity>, Vec<String>), String> {
        let fresh = read(&self.path)?;
        let mut entries = self
            .entries
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now: Vec<Identity> = fresh.iter().map(|e| e.identity.clone()).collect();
        let fresh = Index::new(fresh, &self.keys);
        // Each user once, in order; those the new file has no token of.
        let mut gone: Vec<String> = Vec::new();
        for e in entries.by_user.iter().map(|&n| &entries.entries[n]) {
            let user = &e.identity.user;
            if gone.last() != Some(user) && fresh.of_user(user).next().is_none() {
                gone.push(user.clone());
            }
        }
        *entries = fresh;
        Ok((now, gone))
    }

    /// What `user`'s agent gets beyond its room: the `env`, `agentRo` and
    /// `agentRw` of all of that user's tokens together (empty for a user
    /// not in the file; two tokens of one user never set one variable to
    /// two values: such a file is refused).
    pub fn room(&self, user: &str) -> UserRoom {
        let entries = self
            .entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut room = UserRoom::default();
        for e in entries.of_user(user) {
            room.env
                .extend(e.room.env.iter().map(|(k, v)| (k.clone(), v.clone())));
            room.read_only.extend(e.room.read_only.iter().cloned());
            room.read_write.extend(e.room.read_write.iter().cloned());
            let least = |a: Option<u64>, b: Option<u64>| match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            room.max_processes = least(room.max_processes, e.room.max_processes);
            room.max_memory = least(room.max_memory, e.room.max_memory);
        }
        room
    }

    /// The user `given` is the token of: the file's tokens of the same
    /// keyed hash (one, or on a collision a few, found by binary search)
    /// compared in constant time, all of them, whether or not one matched
    /// earlier. Its cost does not grow with the number of tokens.
    pub fn lookup(&self, given: &str) -> Option<Identity> {
        let index = self
            .entries
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let hash = self.keys.hash_one(given.as_bytes());
        let first = index.by_hash.partition_point(|&(h, _)| h < hash);
        let mut found = None;
        for &(_, n) in index.by_hash[first..]
            .iter()
            .take_while(|&&(h, _)| h == hash)
        {
            let e = &index.entries[n];
            if bool::from(given.as_bytes().ct_eq(&e.token)) {
                found = Some(e.identity.clone());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANA: &str = "ana-0123456789abcdef-token";
    const ANA2: &str = "ana-2123456789abcdef-token";
    const BO: &str = "bo-0123456789abcdef-token";

    fn file(extra_ana: &str, extra_ana2: &str) -> String {
        format!(
            r#"{{"tokens": {{"{ANA}": {{"userId": "ana", "permissions": ["write"]{extra_ana}}},
                           "{ANA2}": {{"userId": "ana", "permissions": ["read"]{extra_ana2}}},
                           "{BO}": {{"userId": "bo", "permissions": ["read"], "env": {{"BO_KEY": "b"}}}}}}}}"#
        )
    }

    /// A directory of this test's own under the system's temporary one,
    /// removed by the caller.
    fn scratch(name: &str) -> std::path::PathBuf {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("acp-users-{name}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn load(text: &str) -> Result<Arc<TokenFile>, String> {
        let dir = scratch("test");
        let path = dir.join("tokens.json");
        std::fs::write(&path, text).unwrap();
        let loaded = TokenFile::load(&path);
        let _ = std::fs::remove_dir_all(&dir);
        loaded
    }

    /// A token file of `members` (each `"TOKEN": {...}`).
    fn tokens_json(members: impl Iterator<Item = String>) -> String {
        format!(
            r#"{{"tokens": {{{}}}}}"#,
            members.collect::<Vec<_>>().join(",")
        )
    }

    /// `text` written as a token file in a scratch directory (removed by
    /// the caller), and loaded.
    fn written(name: &str, text: &str) -> (std::path::PathBuf, std::path::PathBuf, Arc<TokenFile>) {
        let dir = scratch(name);
        let path = dir.join("tokens.json");
        std::fs::write(&path, text).unwrap();
        let file = TokenFile::load(&path).unwrap();
        (dir, path, file)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The indexed lookup against the plainest oracle: the file's
        /// tokens in a map, asked by equality. Every token of the file
        /// finds its user, before and after a reload that changes the
        /// tokens; a token one byte off, or one the file does not have,
        /// finds no one.
        #[test]
        fn lookup_finds_exactly_the_files_tokens(
            first in proptest::collection::btree_map("[a-z0-9]{16,24}", 0usize..8, 1..300),
            second in proptest::collection::btree_map("[a-z0-9]{16,24}", 0usize..8, 1..300),
            strangers in proptest::collection::vec("[a-z0-9]{16,25}", 0..50),
        ) {
            let text = |tokens: &std::collections::BTreeMap<String, usize>| {
                tokens_json(tokens.iter().map(|(t, u)| {
                    format!(r#""{t}": {{"userId": "u{u}", "permissions": ["read"]}}"#)
                }))
            };
            let (dir, path, file) = written("prop", &text(&first));
            for tokens in [&first, &second] {
                if !std::ptr::eq(tokens, &first) {
                    std::fs::write(&path, text(&second)).unwrap();
                    file.reload().unwrap();
                }
                for (t, u) in tokens {
                    let user = file.lookup(t).map(|i| i.user);
                    proptest::prop_assert_eq!(user, Some(format!("u{u}")));
                    let mut off = t.clone().into_bytes();
                    off[0] = if off[0] == b'_' { b'-' } else { b'_' };
                    let off = String::from_utf8(off).unwrap();
                    proptest::prop_assert!(file.lookup(&off).is_none());
                }
                for s in &strangers {
                    let oracle = tokens.get(s).map(|u| format!("u{u}"));
                    proptest::prop_assert_eq!(file.lookup(s).map(|i| i.user), oracle);
                }
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// A user's room (found through the index by user) against a scan
        /// of every token: the paths (in the file's order) and the smallest
        /// limit of exactly that user's tokens; after a reload, the users
        /// gone are those the new file has no token of.
        #[test]
        fn a_room_and_the_users_gone_are_those_of_a_scan(
            first in proptest::collection::vec((0usize..12, 1u64..1000), 1..120),
            second in proptest::collection::vec((0usize..12, 1u64..1000), 1..120),
        ) {
            let text = |tokens: &[(usize, u64)]| {
                tokens_json(tokens.iter().enumerate().map(|(n, (u, max))| format!(
                    r#""token-{n:04}-0123456789abcdef": {{"userId": "u{u}", "permissions": ["read"], "agentRo": ["/srv/{n}"], "maxProcesses": {max}}}"#
                )))
            };
            let (dir, path, file) = written("rooms", &text(&first));
            for user in 0..13 {
                let room = file.room(&format!("u{user}"));
                // In the file's order (the tokens' names sort as they were
                // written).
                let oracle: Vec<PathBuf> = first
                    .iter()
                    .enumerate()
                    .filter(|(_, (u, _))| *u == user)
                    .map(|(n, _)| PathBuf::from(format!("/srv/{n}")))
                    .collect();
                proptest::prop_assert_eq!(&room.read_only, &oracle);
                let least = first.iter().filter(|(u, _)| *u == user).map(|(_, m)| *m).min();
                proptest::prop_assert_eq!(room.max_processes, least);
            }
            std::fs::write(&path, text(&second)).unwrap();
            let (_, gone) = file.reload().unwrap();
            let mut oracle: Vec<String> = first
                .iter()
                .filter(|(u, _)| !second.iter().any(|(v, _)| v == u))
                .map(|(u, _)| format!("u{u}"))
                .collect();
            oracle.sort();
            oracle.dedup();
            proptest::prop_assert_eq!(gone, oracle);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn a_users_room_merges_their_tokens_and_no_one_elses() {
        let users = load(&file(
            r#", "env": {"ANA_KEY": "a"}, "agentRo": ["/srv/data"]"#,
            r#", "env": {"ANA_KEY": "a", "MORE": "m"}, "agentRw": ["/srv/ana"]"#,
        ))
        .unwrap();
        let room = users.room("ana");
        assert_eq!(room.env.get("ANA_KEY").map(String::as_str), Some("a"));
        assert_eq!(room.env.get("MORE").map(String::as_str), Some("m"));
        assert!(!room.env.contains_key("BO_KEY"));
        assert_eq!(room.read_only, vec![PathBuf::from("/srv/data")]);
        assert_eq!(room.read_write, vec![PathBuf::from("/srv/ana")]);
        assert_eq!(users.room("cy"), UserRoom::default());
        assert_eq!((room.max_processes, room.max_memory), (None, None));
        // Limits: a number or a suffixed string; the smallest of a user's
        // tokens wins.
        let users = load(&file(
            r#", "maxProcesses": 300, "maxMemory": "2G""#,
            r#", "maxProcesses": 200, "maxMemory": 3221225472"#,
        ))
        .unwrap();
        let limited = users.room("ana");
        assert_eq!(limited.max_processes, Some(200));
        assert_eq!(limited.max_memory, Some(2 << 30));
        // Debug never shows a value.
        let shown = format!("{room:?}");
        assert!(
            shown.contains("ANA_KEY") && !shown.contains("\"a\""),
            "{shown}"
        );
    }

    #[test]
    fn bad_rooms_are_refused_naming_no_value() {
        for (ana, ana2, why) in [
            (r#", "env": {"HOME": "/x"}"#, "", "may not set HOME"),
            (r#", "env": {"TMPDIR": "/x"}"#, "", "may not set TMPDIR"),
            (r#", "env": {"A=B": "x"}"#, "", "not a variable name"),
            (
                r#", "env": {"K": "secret-1"}"#,
                r#", "env": {"K": "secret-2"}"#,
                "different values",
            ),
            (r#", "agentRo": ["relative/path"]"#, "", "not absolute"),
            (r#", "maxMemory": "12 apples""#, "", "maxMemory"),
            (r#", "maxMemory": 0"#, "", "maxMemory must be at least 1"),
            (
                r#", "maxProcesses": 0"#,
                "",
                "maxProcesses must be at least 1",
            ),
        ] {
            let e = load(&file(ana, ana2)).unwrap_err();
            assert!(e.contains(why), "{e}");
            assert!(!e.contains("secret"), "{e}");
        }
    }
}
