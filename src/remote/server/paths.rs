//! Where a remote session lives: a user's own agent works in its room's
//! session directory (which the caller names,
//! [`Server::set_session_dir`]), the client in its own directory (the
//! `cwd` of its `session/new`); the paths each side names are moved from
//! one directory to the other on the way between them.
//!
//! - Client to agent: `cwd` and `additionalDirectories` of `session/new`,
//!   `session/load`, `session/resume` and `session/fork`, and the
//!   `file://` URIs of a prompt's resource links and embedded resources.
//! - Agent to client: `path` of `fs/read_text_file` and
//!   `fs/write_text_file`, `cwd` of `terminal/create`, and in tool calls
//!   (`session/update`'s `tool_call` and `tool_call_update`, the tool call
//!   of `session/request_permission`) `locations[].path` and the `path` of
//!   each content item (a diff's).
//! - The agent's MCP messages to a user's MCP server bridged over ACP
//!   (`mcp/message`, see the `mcp` module): every string of a request's
//!   `params` or an answer's `result` that is, whole, an absolute path or
//!   a `file://` URI under the room (the `uri` of each of `roots/list`'s
//!   roots, a tool's path argument), moved to the directory of the
//!   session that offered the server. The server's own messages (tool
//!   results) come back as they are: they name the user's paths, which an
//!   agent may name in turn (they are not under the room, so they pass).
//!
//! A path moves only when it lies under the directory it moves from, on
//! whole components (`/home/ana/proj2` is not under `/home/ana/proj`);
//! every other path, and every other member, passes as it came, byte for
//! byte. The client's directory is per session: its `session/new` (the
//! agent's answer names the session) or its `session/load` says it.
//!
//! The cost stays off lines that carry no path: an agent line (shorter
//! than 64 KiB) that holds neither the room's directory nor an escape
//! that could write one passes after one search; any other is read by its
//! method, update kind and session first (only as far as those members:
//! agents write them first), and only a line that may carry a path, of a
//! session whose client directory is known, is walked to its paths, once;
//! a client message is looked at only for the methods above (a prompt
//! only when it holds `file:`).

use alloc::borrow::{Cow, ToOwned};
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;

use super::{PoolMode, Server};
use crate::acp::{names, Message, RequestId};
use crate::json::scan;
use crate::json::unescape::unquote;
use crate::remote::router::ClientId;
use crate::remote::transport::{pass_over, Passed};

/// Most sessions whose client directory an agent's map keeps; past it the
/// oldest is forgotten (its paths then pass unchanged).
const MAX_SESSIONS: usize = 1024;

/// Agent lines shorter than this (64 KiB) are searched for the room's
/// directory before they are read by their members
/// ([`Paths::may_name_room`]); longer ones are read by their members
/// alone.
const SEARCH_BELOW: usize = 64 * 1024;

/// Most `session/new`s (and forks) waiting for their answer per agent;
/// past it the oldest is forgotten.
const MAX_PENDING: usize = 64;

/// An absolute directory, matched on whole path components: kept without
/// its trailing `/`. The file system's root is never one (`/` and `/x/`
/// would both be under it, as itself and with a trailing `/`, so a path
/// could not come back as it went).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Root(String);

impl Root {
    /// `dir` as a root: `None` unless it is absolute and not `/`.
    pub(super) fn new(dir: &str) -> Option<Self> {
        if !dir.starts_with('/') {
            return None;
        }
        let trimmed = dir.trim_end_matches('/');
        (!trimmed.is_empty()).then(|| Self(trimmed.to_owned()))
    }

    /// The directory, as text.
    pub(super) fn as_str(&self) -> &str {
        &self.0
    }

    /// What follows the root in `path` when `path` is under it: empty (the
    /// root itself), or from a `/` on.
    fn rest<'p>(&self, path: &'p str) -> Option<&'p str> {
        let rest = path.strip_prefix(self.0.as_str())?;
        (rest.is_empty() || rest.starts_with('/')).then_some(rest)
    }
}

/// `path` moved from under `from` to the same place under `to`; `None`
/// when `path` is not under `from`.
pub(super) fn rebase(path: &str, from: &Root, to: &Root) -> Option<String> {
    let rest = from.rest(path)?;
    let mut moved = String::with_capacity(to.0.len().saturating_add(rest.len()));
    moved.push_str(&to.0);
    moved.push_str(rest);
    Some(moved)
}

/// A `file://` URI (empty host or `localhost`) moved as [`rebase`] moves
/// its path: the path is percent-decoded to be matched, and the moved one
/// written with the bytes a path may not hold percent-encoded; a query or
/// fragment is kept. `None` for any other URI.
pub(super) fn rebase_file_uri(uri: &str, from: &Root, to: &Root) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let (path, tail) = rest.split_at(rest.find(['?', '#']).unwrap_or(rest.len()));
    let moved = rebase(&percent_decode(path)?, from, to)?;
    let mut out = String::with_capacity(moved.len().saturating_add(tail.len()).saturating_add(7));
    out.push_str("file://");
    for b in moved.bytes() {
        let plain = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b);
        if plain {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(hex_digit(b >> 4));
            out.push(hex_digit(b & 0xf));
        }
    }
    out.push_str(tail);
    Some(out)
}

fn hex_digit(n: u8) -> char {
    char::from_digit(u32::from(n), 16).map_or('0', |c| c.to_ascii_uppercase())
}

/// `%XX` escapes decoded; `None` for a bad escape or text that is not
/// UTF-8 once decoded.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let (hex, after) = tail.split_at_checked(2)?;
            let hex = core::str::from_utf8(hex).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = after;
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// Every string of `value` (at any depth) that is, whole, an absolute
/// path or a `file://` URI under `from`, moved as [`rebase`] and
/// [`rebase_file_uri`] move it to `to`; object keys and every other
/// string stay. For the MCP messages an agent sends a user's server.
pub(super) fn move_mcp_paths(value: &mut serde_json::Value, from: &Root, to: &Root) {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            let moved = if text.starts_with("file:") {
                rebase_file_uri(text, from, to)
            } else {
                rebase(text, from, to)
            };
            if let Some(moved) = moved {
                *text = moved;
            }
        }
        Value::Array(items) => {
            for item in items {
                move_mcp_paths(item, from, to);
            }
        }
        Value::Object(members) => {
            for (_, member) in members.iter_mut() {
                move_mcp_paths(member, from, to);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// One step on the way from a JSON value to a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The member of an object with this key (its token, quotes included).
    Key(&'static [u8]),
    /// Each item of an array.
    Each,
}

const PARAMS: Step = Step::Key(br#""params""#);
const SESSION_ID: Step = Step::Key(br#""sessionId""#);
const PATH: Step = Step::Key(br#""path""#);
const CWD: Step = Step::Key(br#""cwd""#);
const ADDITIONAL: Step = Step::Key(br#""additionalDirectories""#);
const UPDATE: Step = Step::Key(br#""update""#);
const TOOL_CALL: Step = Step::Key(br#""toolCall""#);
const LOCATIONS: Step = Step::Key(br#""locations""#);
const CONTENT: Step = Step::Key(br#""content""#);
const PROMPT: Step = Step::Key(br#""prompt""#);
const URI: Step = Step::Key(br#""uri""#);
const RESOURCE: Step = Step::Key(br#""resource""#);

/// The string values a walk found: which way (the index of its route) and
/// where (the token's span, quotes included).
type Found = Vec<(usize, usize, usize)>;

/// Walks the JSON value at `i` of `b` along `routes` at once (those of
/// `active`, a mask, that matched the first `depth` steps), collecting the
/// strings at their ends. Each byte is scanned once: a value no route
/// enters is passed over whole by its structure (the routing peek's walk:
/// a long tool output costs a `memchr`; the line was routed, so it is
/// JSON). Returns where the value ends; `None` for text that is not JSON
/// (nothing is rewritten then).
fn walk(
    b: &[u8],
    i: usize,
    routes: &[&[Step]],
    depth: usize,
    active: u32,
    found: &mut Found,
    passed: &mut Passed,
) -> Option<usize> {
    // The routes of `active` whose next step passes `want`.
    let next = |want: &dyn Fn(Step) -> bool| {
        routes.iter().enumerate().fold(0u32, |mask, (n, route)| {
            let on = active & (1 << n) != 0 && route.get(depth).is_some_and(|s| want(*s));
            if on {
                mask | (1 << n)
            } else {
                mask
            }
        })
    };
    let close = match b.get(i) {
        Some(b'"') => {
            let end = scan::skip_str(b, i).ok()?;
            for (n, route) in routes.iter().enumerate() {
                if active & (1 << n) != 0 && route.len() == depth {
                    found.push((n, i, end));
                }
            }
            return Some(end);
        }
        Some(b'{') if next(&|s| matches!(s, Step::Key(_))) != 0 => b'}',
        Some(b'[') if next(&|s| s == Step::Each) != 0 => b']',
        _ => return pass_over(b, i, passed),
    };
    let each = next(&|s| s == Step::Each);
    let mut j = scan::skip_ws(b, i.saturating_add(1));
    if b.get(j) == Some(&close) {
        return Some(j.saturating_add(1));
    }
    loop {
        let item_end = if close == b'}' {
            let (key, v) = scan::key_at(b, j).ok()?;
            let mask = next(&|s| matches!(s, Step::Key(k) if k == key));
            if mask == 0 {
                pass_over(b, v, passed)?
            } else {
                walk(b, v, routes, depth.saturating_add(1), mask, found, passed)?
            }
        } else {
            walk(b, j, routes, depth.saturating_add(1), each, found, passed)?
        };
        j = scan::skip_ws(b, item_end);
        match b.get(j) {
            Some(b',') => j = scan::skip_ws(b, j.saturating_add(1)),
            Some(c) if *c == close => return Some(j.saturating_add(1)),
            _ => return None,
        }
    }
}

/// Where the value of member `key` (its token, quotes included) of the
/// object at `i` of `b` starts, read without walking past it: only the
/// members before it are passed over, by their structure (agents write
/// `method` before `params`, and most `sessionUpdate` first in an update;
/// one written after a long content costs a `memchr`), never the value
/// itself.
fn member(b: &[u8], i: usize, key: &[u8], passed: &mut Passed) -> Option<usize> {
    let mut j = scan::skip_ws(b, i);
    if b.get(j) != Some(&b'{') {
        return None;
    }
    j = scan::skip_ws(b, j.saturating_add(1));
    loop {
        let (k, v) = scan::key_at(b, j).ok()?;
        if k == key {
            return Some(v);
        }
        j = scan::skip_ws(b, pass_over(b, v, passed)?);
        match b.get(j) {
            Some(b',') => j = scan::skip_ws(b, j.saturating_add(1)),
            _ => return None,
        }
    }
}

/// The string value of the member of `text` at the end of `keys` (each a
/// key token, quotes included), read as [`member`] reads; borrowed from
/// `text` unless it holds an escape.
fn member_string<'t>(text: &'t str, keys: &[&[u8]], passed: &mut Passed) -> Option<Cow<'t, str>> {
    let b = text.as_bytes();
    let mut at = 0;
    for key in keys {
        at = member(b, at, key, passed)?;
    }
    value(text, at, scan::skip_str(b, at).ok()?)
}

/// The strings of `text` at the ends of `routes` (at most 32), in the
/// order of the text.
fn find(text: &str, routes: &[&[Step]], passed: &mut Passed) -> Option<Found> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let all = u32::MAX.checked_shr(32u32.saturating_sub(routes.len().try_into().ok()?))?;
    walk(b, scan::skip_ws(b, 0), routes, 0, all, &mut found, passed)?;
    Some(found)
}

/// The value of a string token: borrowed from `text` unless it holds an
/// escape.
fn value(text: &str, start: usize, end: usize) -> Option<Cow<'_, str>> {
    let token = text.get(start..end)?;
    unquote::<serde_json::Error>(token).ok()
}

/// `text` with the strings `found` of the routes in `which` replaced by
/// `map` of their value; `None` when `map` changes none.
fn splice(
    text: &str,
    found: &Found,
    which: impl Fn(usize) -> bool,
    map: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    let mut out: Vec<u8> = Vec::new();
    let mut from = 0;
    for &(_, start, end) in found.iter().filter(|(route, _, _)| which(*route)) {
        let Some(moved) = value(text, start, end).and_then(|v| map(&v)) else {
            continue;
        };
        if out.is_empty() {
            out.reserve(text.len().saturating_add(moved.len()));
        }
        out.extend_from_slice(text.as_bytes().get(from..start)?);
        crate::json::push_string(&mut out, &moved);
        from = end;
    }
    if from == 0 {
        return None;
    }
    out.extend_from_slice(text.as_bytes().get(from..)?);
    String::from_utf8(out).ok()
}

/// One agent's map of paths: its room's session directory and each
/// session's client directory.
#[derive(Debug)]
pub(super) struct Paths {
    /// The room's session directory: the `cwd` the agent is told.
    room: Root,
    /// The room's text holds no `"`, `\` or control character: its
    /// JSON token holds it as it is ([`Paths::may_name_room`]).
    plain_room: bool,
    /// The search for the room's text, built once.
    room_finder: memchr::memmem::Finder<'static>,
    /// Each session's client directory.
    sessions: BTreeMap<String, Root>,
    /// The sessions in the order they were learnt (the oldest forgotten
    /// first).
    order: VecDeque<String>,
    /// `session/new`s and `session/fork`s waiting for the session their
    /// answer names: who asked, with which id, from which directory.
    pending: VecDeque<(ClientId, RequestId<'static>, Root)>,
}

impl Paths {
    fn new(room: Root) -> Self {
        let plain_room = !room.0.bytes().any(|c| c == b'"' || c == b'\\' || c < 0x20);
        let room_finder = memchr::memmem::Finder::new(room.0.as_bytes()).into_owned();
        Self {
            room,
            plain_room,
            room_finder,
            sessions: BTreeMap::new(),
            order: VecDeque::new(),
            pending: VecDeque::new(),
        }
    }

    /// The client directory of `session`.
    fn learn(&mut self, session: String, client: Root) {
        if self.sessions.insert(session.clone(), client).is_none() {
            self.order.push_back(session);
            if self.order.len() > MAX_SESSIONS {
                if let Some(old) = self.order.pop_front() {
                    self.sessions.remove(&old);
                }
            }
        }
    }

    fn forget(&mut self, session: &str) {
        if self.sessions.remove(session).is_some() {
            self.order.retain(|s| s != session);
        }
    }

    /// A client's message `text` (decoded as `message`) for the agent,
    /// with its paths moved into the room; `None` when nothing moves.
    pub(super) fn toward_agent(
        &mut self,
        client: ClientId,
        text: &str,
        message: &Message<'_>,
    ) -> Option<String> {
        let Message::Request(req) = message else {
            return None;
        };
        let method = req.method.as_ref();
        let opens = method == names::SESSION_NEW || method == "session/fork";
        let takes_up = method == names::SESSION_LOAD || method == names::SESSION_RESUME;
        if opens || takes_up {
            let routes: [&[Step]; 3] = [
                &[PARAMS, CWD],
                &[PARAMS, ADDITIONAL, Step::Each],
                &[PARAMS, SESSION_ID],
            ];
            let found = find(text, &routes, &mut Passed::default())?;
            let string_of = |route: usize| {
                found
                    .iter()
                    .find(|(r, _, _)| *r == route)
                    .and_then(|&(_, s, e)| value(text, s, e))
            };
            let cwd = Root::new(&string_of(0)?)?;
            match string_of(2) {
                Some(session) if takes_up => self.learn(session.into_owned(), cwd.clone()),
                _ if opens => {
                    self.pending
                        .push_back((client, req.id.to_owned_id(), cwd.clone()));
                    if self.pending.len() > MAX_PENDING {
                        self.pending.pop_front();
                    }
                }
                _ => {}
            }
            let room = &self.room;
            return splice(text, &found, |r| r < 2, |p| rebase(p, &cwd, room));
        }
        if method == names::SESSION_CLOSE {
            let found = find(text, &[&[PARAMS, SESSION_ID]], &mut Passed::default())?;
            let session = found.first().and_then(|&(_, s, e)| value(text, s, e))?;
            self.forget(&session);
            return None;
        }
        // One walk to the prompt's links (its long text passed over by
        // the peek's walk, cheaper than a search for `file:` through it).
        if method == names::SESSION_PROMPT {
            let routes: [&[Step]; 3] = [
                &[PARAMS, SESSION_ID],
                &[PARAMS, PROMPT, Step::Each, URI],
                &[PARAMS, PROMPT, Step::Each, RESOURCE, URI],
            ];
            let found = find(text, &routes, &mut Passed::default())?;
            let session = found
                .iter()
                .find(|(r, _, _)| *r == 0)
                .and_then(|&(_, s, e)| value(text, s, e))?;
            let client_dir = self.sessions.get(&*session)?;
            let room = &self.room;
            return splice(
                text,
                &found,
                |r| r > 0,
                |uri| rebase_file_uri(uri, client_dir, room),
            );
        }
        None
    }

    /// The agent's message `text` for `client`, with the paths under the
    /// room moved to the session's client directory; `None` when nothing
    /// moves.
    ///
    /// `passed` holds the long strings a walk over this very text passed
    /// over (the routing peek's), so the walk here jumps over them.
    pub(super) fn toward_client(
        &mut self,
        client: ClientId,
        text: &str,
        passed: &mut Passed,
    ) -> Option<String> {
        if self.pending.iter().any(|(c, _, _)| *c == client) {
            self.answered(client, text);
        }
        // Most lines name no path under the room: passed with one search.
        // A long line (a tool's output) is read by its members instead:
        // its walk passes the long value once, where the search would pass
        // it a second time, and stop at every escape in it.
        if text.len() < SEARCH_BELOW && !self.may_name_room(text) {
            return None;
        }
        // By method, update kind and session, reading no further than
        // those members; only then one walk to the paths.
        let method = member_string(text, &[br#""method""#], passed)?;
        let routes: &[&[Step]] = match method.as_ref() {
            names::FS_READ_TEXT_FILE | names::FS_WRITE_TEXT_FILE => &[&[PARAMS, PATH]],
            names::TERMINAL_CREATE => &[&[PARAMS, CWD]],
            names::SESSION_REQUEST_PERMISSION => &[
                &[PARAMS, TOOL_CALL, LOCATIONS, Step::Each, PATH],
                &[PARAMS, TOOL_CALL, CONTENT, Step::Each, PATH],
            ],
            names::SESSION_UPDATE => {
                let kind = member_string(
                    text,
                    &[br#""params""#, br#""update""#, br#""sessionUpdate""#],
                    passed,
                )?;
                if kind != "tool_call" && kind != "tool_call_update" {
                    return None;
                }
                &[
                    &[PARAMS, UPDATE, LOCATIONS, Step::Each, PATH],
                    &[PARAMS, UPDATE, CONTENT, Step::Each, PATH],
                ]
            }
            _ => return None,
        };
        let session = member_string(text, &[br#""params""#, br#""sessionId""#], passed)?;
        let client_dir = self.sessions.get(&*session)?;
        let found = find(text, routes, passed)?;
        let room = &self.room;
        splice(text, &found, |_| true, |p| rebase(p, room, client_dir))
    }

    /// Whether a string of the JSON text `text` may have a value under
    /// the room (the room itself, or a path in it); `false` only when none
    /// can.
    ///
    /// Such a string's value starts with the room's text. Where its token
    /// writes that part with no escape, `text` holds the room's bytes as
    /// they are; an escape there decodes to a character of the room's,
    /// and the only escapes that decode to characters a room without `"`,
    /// `\` or control characters holds are `\/` and `\u`. So a line
    /// that holds neither the room's bytes nor a backslash followed by `/`
    /// or `u` holds no such string (each backslash is looked at, escaped
    /// or not: an escaped one only makes the answer `true` more often).
    /// For a room with one of those characters, every line may.
    fn may_name_room(&self, text: &str) -> bool {
        let b = text.as_bytes();
        !self.plain_room
            || self.room_finder.find(b).is_some()
            || memchr::memchr_iter(b'\\', b)
                .any(|at| matches!(b.get(at.saturating_add(1)), Some(b'/' | b'u')))
    }

    /// Whether `text` answers one of `client`'s waiting `session/new`s:
    /// then the session it names is learnt with that request's directory.
    fn answered(&mut self, client: ClientId, text: &str) {
        let Ok(message) = Message::decode(text) else {
            return;
        };
        let (id, result) = match &message {
            Message::Response(r) => (&r.id, Some(r.result.get())),
            Message::Error(e) => (&e.id, None),
            _ => return,
        };
        let Some(at) = self
            .pending
            .iter()
            .position(|(c, i, _)| *c == client && i == id)
        else {
            return;
        };
        let Some((_, _, cwd)) = self.pending.remove(at) else {
            return;
        };
        let session = result
            .and_then(|r| find(r, &[&[SESSION_ID]], &mut Passed::default()).map(|found| (r, found)))
            .and_then(|(r, found)| found.first().and_then(|&(_, s, e)| value(r, s, e)));
        if let Some(session) = session {
            self.learn(session.into_owned(), cwd);
        }
    }
}

impl Server {
    /// Where `user`'s sessions live: `dir`, a directory of their own
    /// agent's room (absolute, not `/`). From now on their agent is told
    /// it as the `cwd` of each session their clients open or load, and the
    /// paths between the agent and each client are moved between `dir` and
    /// that session's client directory (the client's `cwd`): see the rules
    /// of [`Server`]. Set it when the user's agent starts
    /// ([`Action::StartAgent`](super::Action::StartAgent), before
    /// [`handle_agent_started`](Self::handle_agent_started)); a later call
    /// replaces the directory and keeps the sessions' client directories.
    ///
    /// Only a per-user pool's named users have rooms: with
    /// [`PoolMode::Shared`], for a user with no agent yet, or for a `dir`
    /// that is relative or `/`, nothing changes, and paths pass as they
    /// are (an agent that shares the client's machine works in the
    /// client's directory).
    pub fn set_session_dir(&mut self, user: &str, dir: &str) {
        if self.config.pool != PoolMode::PerUser {
            return;
        }
        let Some(root) = Root::new(dir) else {
            return;
        };
        let Some(room) = self.paths_mut(&Some(user.to_owned())) else {
            return;
        };
        match room {
            Some(paths) if paths.room == root => {}
            Some(paths) => {
                let sessions = core::mem::take(&mut paths.sessions);
                let order = core::mem::take(&mut paths.order);
                *paths = Paths::new(root);
                paths.sessions = sessions;
                paths.order = order;
            }
            None => *room = Some(Paths::new(root)),
        }
    }

    /// The session directory of `user`'s room, when one is set
    /// ([`set_session_dir`](Self::set_session_dir)).
    pub fn session_dir(&self, user: &str) -> Option<&str> {
        let agent = self.agents.get(&Some(user.to_owned()))?;
        agent.paths.as_ref().map(|p| p.room.as_str())
    }

    /// The room of the agent `key`, when its paths move.
    pub(super) fn room_of(&self, key: &Option<String>) -> Option<&Root> {
        self.agents.get(key)?.paths.as_ref().map(|p| &p.room)
    }

    /// A client message for the agent `key`, its paths moved into the
    /// room: the new text, or `None` when nothing moves.
    pub(super) fn paths_to_agent(
        &mut self,
        key: &Option<String>,
        client: ClientId,
        text: &str,
        message: &Message<'_>,
    ) -> Option<String> {
        let paths = self.paths_mut(key)?.as_mut()?;
        paths.toward_agent(client, text, message)
    }
}

#[cfg(test)]
mod tests;
