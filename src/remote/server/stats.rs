//! What an operator watches, counted where the rules decide it: the
//! server's [`Stats`] (plain counters, read on demand), its [`Census`]
//! (what exists now, computed when asked) and the [`Event`]s a caller
//! logs (refusals, turns and their first update), drained with
//! [`Server::poll_event`]. None of it touches the wire or allocates per
//! message; the caller turns it into metrics and log lines.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use core::time::Duration;

use super::{ConnectionId, Profile, Server, StartReason, StopReason};

/// Most events kept undrained: past it the newest are not kept (the
/// counters still count them), so a caller that never drains holds a
/// bounded queue.
pub const MAX_EVENTS: usize = 256;

/// Why a connection or a request was refused: every limit and check of
/// the server, and those its caller applies before a connection reaches
/// it (the front door, the token, the `Origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Refusal {
    /// The caller's: more connections not yet authenticated than it
    /// allows in all.
    Unauthenticated,
    /// The caller's: more connections not yet authenticated from one
    /// address than it allows.
    PerAddress,
    /// The caller's: not authenticated in time (TLS handshake, request
    /// head, token).
    Handshake,
    /// The caller's: no token presented.
    NoToken,
    /// The caller's: a token presented that is not known.
    WrongToken,
    /// The caller's: an `Origin` not on the allow-list.
    Origin,
    /// The user has as many connections as allowed (`429`).
    UserConnections,
    /// The user may not connect (`403`).
    Permission,
    /// As many Streamable HTTP connections as allowed (`503`).
    HttpConnections,
    /// The user's agent may not start: the pool is full (`-32012`).
    AgentsFull,
    /// A request that would open one more session than the user may hold
    /// (`-32011`, [`USER_LIMIT`](crate::remote::USER_LIMIT)).
    UserSessions,
    /// A user's connections hold more queued bytes than allowed.
    UserBuffered,
    /// A Streamable HTTP connection opened more session streams than
    /// allowed.
    SessionStreams,
    /// A client too slow to take what is queued for it.
    SlowClient,
    /// A WebSocket client that sent no first message in time.
    FirstMessage,
    /// A message (or body) over the size limit.
    Oversize,
    /// A WebSocket message that breaks the transport's rules and closes
    /// its connection (a first message other than `initialize`, ...).
    Protocol,
}

impl Refusal {
    /// How many there are: the length of [`Refusal::ALL`].
    pub const COUNT: usize = 17;

    /// Every reason, in the order of [`index`](Self::index).
    pub const ALL: [Self; Self::COUNT] = [
        Self::Unauthenticated,
        Self::PerAddress,
        Self::Handshake,
        Self::NoToken,
        Self::WrongToken,
        Self::Origin,
        Self::UserConnections,
        Self::Permission,
        Self::HttpConnections,
        Self::AgentsFull,
        Self::UserSessions,
        Self::UserBuffered,
        Self::SessionStreams,
        Self::SlowClient,
        Self::FirstMessage,
        Self::Oversize,
        Self::Protocol,
    ];

    /// Its place in [`Refusal::ALL`] (and in [`Stats::refusals`]).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Its name for metrics' labels and logs: `per_address`,
    /// `wrong_token`, `agents_full`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Unauthenticated => "unauthenticated",
            Self::PerAddress => "per_address",
            Self::Handshake => "handshake_timeout",
            Self::NoToken => "no_token",
            Self::WrongToken => "wrong_token",
            Self::Origin => "origin",
            Self::UserConnections => "user_connections",
            Self::Permission => "permission",
            Self::HttpConnections => "http_connections",
            Self::AgentsFull => "agents_full",
            Self::UserSessions => "user_sessions",
            Self::UserBuffered => "user_buffered_bytes",
            Self::SessionStreams => "session_streams",
            Self::SlowClient => "slow_client",
            Self::FirstMessage => "first_message_timeout",
            Self::Oversize => "oversize",
            Self::Protocol => "protocol",
        }
    }
}

/// The server's counters since it started: each only grows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Connections opened, by profile: WebSocket, Streamable HTTP.
    pub connections: [u64; 2],
    /// Prompts (`session/prompt`) taken for an agent: turns. A prompt
    /// sent again that resumable delivery runs once counts once.
    pub turns: u64,
    /// Connections and sessions resumed from a position.
    pub resumes: u64,
    /// Resumes that found a gap: what the client missed is no longer
    /// kept.
    pub gaps: u64,
    /// Agent lines over the size limit, skipped.
    pub agent_lines_too_long: u64,
    /// Refusals by reason, at [`Refusal::index`] (the server's own; the
    /// caller counts those it decides itself).
    pub refusals: [u64; Refusal::COUNT],
    /// Agent processes started, by reason: shared, a user's first
    /// message, a restart after an exit.
    pub agent_starts: [u64; 3],
    /// Agent processes the server stopped, by reason: idle, evicted, user
    /// removed.
    pub agent_stops: [u64; 3],
    /// Agent processes that exited on their own (or could not start).
    pub agent_exits: u64,
    /// Events not kept: the queue held [`MAX_EVENTS`].
    pub events_dropped: u64,
}

impl Stats {
    /// The index of `profile` in [`connections`](Self::connections).
    pub const fn profile_index(profile: Profile) -> usize {
        match profile {
            Profile::WebSocket => 0,
            Profile::StreamableHttp => 1,
        }
    }

    /// The index of `why` in [`agent_starts`](Self::agent_starts).
    pub const fn start_index(why: StartReason) -> usize {
        match why {
            StartReason::Shared => 0,
            StartReason::FirstMessage => 1,
            StartReason::Restart => 2,
        }
    }

    /// The index of `why` in [`agent_stops`](Self::agent_stops).
    pub const fn stop_index(why: StopReason) -> usize {
        match why {
            StopReason::Idle => 0,
            StopReason::Evicted => 1,
            StopReason::UserRemoved => 2,
        }
    }
}

/// What exists now, counted when asked ([`Server::census`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Census {
    /// Open WebSocket connections.
    pub websocket: usize,
    /// Open Streamable HTTP connections.
    pub streamable_http: usize,
    /// Connections detached, waiting for their client to resume them.
    pub detached: usize,
    /// Users with at least one open connection (the anonymous user
    /// counts as one).
    pub users: usize,
    /// Agent processes starting.
    pub agents_starting: usize,
    /// Agent processes up.
    pub agents_running: usize,
    /// Agents waiting out their backoff before a restart.
    pub agents_restarting: usize,
    /// Agent processes being stopped.
    pub agents_stopping: usize,
    /// Messages the agents' routers dropped: agent stdout that is not
    /// JSON-RPC, and messages routed nowhere.
    pub dropped: u64,
    /// Bytes queued, unsent, for every connection.
    pub queued_bytes: usize,
}

/// Something the caller logs (and counts), drained with
/// [`Server::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A connection or a request refused.
    Refused {
        /// Why.
        reason: Refusal,
        /// The connection, when it had been opened.
        conn: Option<ConnectionId>,
    },
    /// A prompt taken for an agent: a turn starts.
    Turn {
        /// The connection that sent it.
        conn: ConnectionId,
        /// Its session.
        session: String,
        /// The W3C trace context in its `_meta` (`traceparent`), as it
        /// came; the message itself goes on unchanged.
        traceparent: Option<String>,
        /// `tracestate`, as it came.
        tracestate: Option<String>,
    },
    /// The first message of the agent for a prompted session, after the
    /// prompt.
    FirstUpdate {
        /// The session.
        session: String,
        /// How long after the prompt.
        latency: Duration,
    },
    /// A client's session request offered `"acp"` MCP servers that an
    /// agent is given its relay for in their place
    /// ([`Server::set_mcp_relay`]): that agent will start the relay. A
    /// caller that makes the relay's endpoint only when it is first
    /// needed makes it on this event (polled before the request is
    /// written to the agent).
    McpOffered {
        /// The agent, as `set_mcp_relay` names it (`None`: the
        /// anonymous user's, or the shared agent).
        agent: Option<String>,
    },
}

impl Server {
    /// The counters since the server started.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// What exists now: connections, users, agents by state. Walks every
    /// connection and agent: for a scrape, not for every message.
    pub fn census(&self) -> Census {
        let mut census = Census {
            detached: self.detached_connections(),
            ..Census::default()
        };
        let mut users: alloc::collections::BTreeSet<Option<&str>> = Default::default();
        for c in self.conns.values() {
            match c.profile {
                Profile::WebSocket => inc(&mut census.websocket),
                Profile::StreamableHttp => inc(&mut census.streamable_http),
            }
            users.insert(c.user.as_deref());
            census.queued_bytes = census.queued_bytes.saturating_add(c.backlog.bytes());
        }
        census.users = users.len();
        for a in self.agents.values() {
            a.count(&mut census);
        }
        census
    }

    /// The next event to log, until `None`. At most [`MAX_EVENTS`] wait;
    /// a caller that never drains them loses only the newest.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    pub(super) fn event(&mut self, event: Event) {
        if self.events.len() < MAX_EVENTS {
            self.events.push_back(event);
        } else {
            self.stats.events_dropped = self.stats.events_dropped.saturating_add(1);
        }
    }

    /// Counts and reports a refusal.
    pub(super) fn refused(&mut self, reason: Refusal, conn: Option<ConnectionId>) {
        bump(&mut self.stats.refusals, reason.index());
        self.event(Event::Refused { reason, conn });
    }
}

/// One more (saturating).
fn inc(n: &mut usize) {
    *n = n.saturating_add(1);
}

/// One more in `counters` at `i` (saturating; nothing for an `i` out of
/// range).
pub(super) fn bump(counters: &mut [u64], i: usize) {
    if let Some(n) = counters.get_mut(i) {
        *n = n.saturating_add(1);
    }
}

/// The queue of events, bounded by [`MAX_EVENTS`].
pub(super) type Events = VecDeque<Event>;

/// What a prompt's params say that a turn's event carries: its session
/// and the W3C trace context in its `_meta` (the rest is passed over).
#[derive(serde::Deserialize)]
struct PromptHead<'a> {
    #[serde(rename = "sessionId", borrow)]
    session: Option<alloc::borrow::Cow<'a, str>>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<TraceContext<'a>>,
}

impl<'a> PromptHead<'a> {
    /// The head from the raw values of its two members, as its derive
    /// reads them.
    fn of(session: Option<&'a str>, meta: Option<&'a str>) -> Option<Self> {
        let session = match session {
            Some(s) => serde_json::from_str(s).ok()?,
            None => None,
        };
        let meta = match meta {
            Some(m) => serde_json::from_str(m).ok()?,
            None => None,
        };
        Some(Self { session, meta })
    }
}

#[derive(serde::Deserialize)]
struct TraceContext<'a> {
    #[serde(borrow)]
    traceparent: Option<alloc::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    tracestate: Option<alloc::borrow::Cow<'a, str>>,
}

impl Server {
    /// A prompt of `conn` goes to the agent `key`: a turn, whose first
    /// update's latency is measured from `now`. `read`: the raw values of
    /// its params' `sessionId` and `_meta`, when read already.
    pub(super) fn turn(
        &mut self,
        key: &Option<String>,
        conn: ConnectionId,
        req: &crate::acp::Request<'_>,
        read: Option<[Option<&str>; 2]>,
        now: Duration,
    ) {
        self.stats.turns = self.stats.turns.saturating_add(1);
        let params = req.params.as_ref().map_or("{}", |p| p.get());
        // Two members read (`read`: by the decode's walk already), the
        // prompt passed over by its structure (a long prompt is not
        // decoded); a form the walk cannot tell is decoded in full.
        let head =
            read.or_else(|| crate::remote::transport::members(params, ["sessionId", "_meta"]));
        let head = match head {
            Some([session, meta]) => PromptHead::of(session, meta),
            None => serde_json::from_str::<PromptHead<'_>>(params).ok(),
        };
        let Some(head) = head else {
            return;
        };
        let Some(session) = head.session else {
            return;
        };
        if let Some(prompted) = self.prompted_mut(key) {
            prompted.insert(String::from(&*session), now);
        }
        let (traceparent, tracestate) = match head.meta {
            Some(m) => (
                m.traceparent.map(|t| String::from(&*t)),
                m.tracestate.map(|t| String::from(&*t)),
            ),
            None => (None, None),
        };
        self.event(Event::Turn {
            conn,
            session: String::from(&*session),
            traceparent,
            tracestate,
        });
    }
}

/// A message of an agent for `session` (`prompted`, that agent's
/// sessions prompted and not yet answered): the first since its prompt
/// ends the wait measured, and is the event returned. One emptiness check
/// per message while no prompt waits.
pub(super) fn first_update(
    prompted: &mut BTreeMap<String, Duration>,
    session: &str,
    now: Duration,
) -> Option<Event> {
    if prompted.is_empty() {
        return None;
    }
    let at = prompted.remove(session)?;
    Some(Event::FirstUpdate {
        session: String::from(session),
        latency: now.saturating_sub(at),
    })
}

#[cfg(test)]
mod tests {
    use super::Refusal;

    #[test]
    fn every_refusal_has_its_place_and_a_distinct_name() {
        for (i, r) in Refusal::ALL.iter().enumerate() {
            assert_eq!(r.index(), i, "{r:?}");
        }
        let mut names: alloc::vec::Vec<&str> = Refusal::ALL.iter().map(|r| r.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Refusal::COUNT);
    }
}
