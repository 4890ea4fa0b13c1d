//! The agent processes: one shared, or one per user (started on the
//! user's first message, stopped once idle, at most `max_agents`, the one
//! without a connection the longest evicted to make room), each restarted
//! with backoff when it exits, each with its own router.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use super::{
    Action, AgentRun, ConnectionId, PoolMode, Principal, Server, ServerConfig, StartReason,
    StopReason,
};
use super::{Census, Refusal, Stats};
use crate::acp::{encode_error, Message, MessageError, RequestId, RpcError};
use crate::framing::LineText;
use crate::remote::router::{
    ClientId, ConnectError, Inbound, MessageKind, Out, Permissions, Router,
};
use crate::remote::transport::Passed;
use crate::remote::Stream;
use crate::{ErrorCode, FrameError, PeekedId};

/// A run that lasted this long resets the restart backoff.
const STEADY_RUN: Duration = Duration::from_secs(30);

/// A client message waiting for its agent to start.
#[derive(Debug)]
pub(super) struct Waiting {
    pub(super) conn: ConnectionId,
    /// The bytes that came in, forwarded as they are where the router
    /// does not rewrite them.
    text: String,
    /// The message as the core decoded it on arrival (its params copied,
    /// never decoded again).
    message: Message<'static>,
    /// Past this it goes on (and is refused: the agent is not running).
    until: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Stopped,
    Starting(AgentRun),
    Up(AgentRun),
    Stopping(AgentRun, StopReason),
    Restarting { at: Duration },
}

impl Agent {
    /// Counts this agent by its state, and the lines its router dropped,
    /// in `census`.
    pub(super) fn count(&self, census: &mut Census) {
        let slot = match self.state {
            State::Starting(_) => Some(&mut census.agents_starting),
            State::Up(_) => Some(&mut census.agents_running),
            State::Restarting { .. } => Some(&mut census.agents_restarting),
            State::Stopping(..) => Some(&mut census.agents_stopping),
            State::Stopped => None,
        };
        if let Some(n) = slot {
            *n = n.saturating_add(1);
        }
        census.dropped = census.dropped.saturating_add(self.router.dropped());
    }
}

/// One agent (its runs over time) and its router.
#[derive(Debug)]
pub(super) struct Agent {
    /// The user it serves alone, in a per-user pool.
    user: Option<String>,
    /// One of a per-user pool (idle-stopped, counted against the cap).
    dedicated: bool,
    pub(super) router: Router,
    /// Its connections, by their id in its router.
    pub(super) clients: BTreeMap<ClientId, ConnectionId>,
    /// The last connection, client message or agent line.
    pub(super) last_active: Duration,
    pub(super) waiting: VecDeque<Waiting>,
    pub(super) state: State,
    restarts: u64,
    backoff: Duration,
    started_at: Duration,
    /// Sessions prompted and not yet answered by any message: when.
    pub(super) prompted: BTreeMap<String, Duration>,
    /// Its room's session directory and each session's client directory,
    /// once the caller named the room ([`Server::set_session_dir`]).
    pub(super) paths: Option<super::paths::Paths>,
}

impl Agent {
    /// [`Out::Client`]'s first half, what the agent itself holds: the
    /// message's paths moved to the client's directory, the first update
    /// of a prompted session (an event to note), and the connection of
    /// its client `to` (none once it is gone).
    pub(super) fn toward_client(
        &mut self,
        to: ClientId,
        stream: &Stream,
        text: String,
        now: Duration,
        passed: &mut Passed,
    ) -> (String, Option<super::stats::Event>, Option<ConnectionId>) {
        let text = match self.paths.as_mut() {
            Some(paths) => paths.toward_client(to, &text, passed).unwrap_or(text),
            None => text,
        };
        let first = match stream {
            Stream::Session(session) => {
                super::stats::first_update(&mut self.prompted, session, now)
            }
            Stream::Connection => None,
        };
        (text, first, self.clients.get(&to).copied())
    }

    /// The run to write to, while one is up.
    pub(super) fn live_run(&self) -> Option<AgentRun> {
        match self.state {
            State::Up(run) => Some(run),
            _ => None,
        }
    }

    /// How log lines name it: `agent`, or `agent of ana`.
    fn name(&self) -> String {
        match (&self.user, self.dedicated) {
            (Some(u), true) => format!("agent of {u}"),
            _ => "agent".to_owned(),
        }
    }

    /// Whether it holds one of the pool's places.
    fn counted(&self) -> bool {
        self.dedicated
            && matches!(
                self.state,
                State::Starting(_) | State::Up(_) | State::Restarting { .. }
            )
    }

    fn idle_at(&self, config: &ServerConfig) -> Option<Duration> {
        (self.dedicated && self.clients.is_empty())
            .then(|| self.last_active.saturating_add(config.agent_idle))
    }

    pub(super) fn deadline(&self, config: &ServerConfig) -> Option<Duration> {
        let state = match self.state {
            State::Restarting { at } => Some(at),
            State::Up(_) => self.idle_at(config),
            _ => None,
        };
        let waiting = self.waiting.front().map(|w| w.until);
        [state, waiting].into_iter().flatten().min()
    }
}

impl Server {
    /// The agent `key`, made on first use.
    pub(super) fn agent_entry(&mut self, key: Option<String>, now: Duration) -> &mut Agent {
        let config = &self.config;
        let dedicated = config.pool == PoolMode::PerUser;
        self.agents.get_or_insert_with(key, |key| {
            // The router checks a user's connection limit (`open` tells it
            // how many of them are detached, which do not count).
            let mut router = Router::new()
                .with_user_limits(config.max_user_connections, config.max_user_sessions)
                .with_hash_key(config.hash_key);
            if let (Some(user), true) = (key, dedicated) {
                router = router.with_dedicated_user(user);
            }
            Agent {
                user: key.clone(),
                dedicated,
                router,
                clients: BTreeMap::new(),
                last_active: now,
                waiting: VecDeque::new(),
                state: State::Stopped,
                restarts: 0,
                backoff: config.backoff_min,
                started_at: now,
                prompted: BTreeMap::new(),
                paths: None,
            }
        })
    }

    /// A client of `principal` for the agent `key` (made on first use),
    /// as connection `conn`: its router's, the one check of the user's
    /// connection limit (`detached` of their connections not counted).
    pub(super) fn attach(
        &mut self,
        key: &Option<String>,
        principal: &Principal,
        detached: usize,
        conn: ConnectionId,
        now: Duration,
    ) -> Result<ClientId, ConnectError> {
        let agent = self.agent_entry(key.clone(), now);
        let client = match &principal.user {
            None => agent.router.connect(),
            Some(user) => agent
                .router
                .connect_excusing(user, principal.permissions, detached)?,
        };
        agent.last_active = now;
        agent.clients.insert(client, conn);
        Ok(client)
    }

    /// `client` of the agent `key` leaves its router as any client that
    /// leaves (its sessions are left, what waits on it answered), and
    /// what the router says is dispatched.
    pub(super) fn disconnect(&mut self, key: &Option<String>, client: ClientId, now: Duration) {
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        agent.clients.remove(&client);
        let mut outs = Vec::new();
        agent.router.disconnect(client, &mut outs);
        self.dispatch(key, outs, now);
    }

    /// Connection `conn` goes on as `to`, the router's client it took
    /// over, and `from`, the client it had, leaves the router; `false`
    /// when the agent `key` is unknown.
    pub(super) fn rebind(
        &mut self,
        key: &Option<String>,
        from: ClientId,
        to: ClientId,
        conn: ConnectionId,
        now: Duration,
    ) -> bool {
        let Some(a) = self.agents.get_mut(key) else {
            return false;
        };
        a.clients.remove(&from);
        a.clients.insert(to, conn);
        let mut outs = Vec::new();
        a.router.disconnect(from, &mut outs);
        self.dispatch(key, outs, now);
        true
    }

    /// Something happened on the agent `key`'s side at `now` (a connection
    /// left): its idle clock starts again.
    pub(super) fn agent_active(&mut self, key: &Option<String>, now: Duration) {
        if let Some(agent) = self.agents.get_mut(key) {
            agent.last_active = now;
        }
    }

    /// `conn` left: its messages waiting for the agent `key` to start go,
    /// and the agent's idle clock starts again.
    pub(super) fn forget_waiting(
        &mut self,
        key: &Option<String>,
        conn: ConnectionId,
        now: Duration,
    ) {
        if let Some(agent) = self.agents.get_mut(key) {
            agent.last_active = now;
            agent.waiting.retain(|w| w.conn != conn);
        }
    }

    /// The sessions of the agent `key` prompted and not yet answered.
    pub(super) fn prompted_mut(
        &mut self,
        key: &Option<String>,
    ) -> Option<&mut BTreeMap<String, Duration>> {
        self.agents.get_mut(key).map(|a| &mut a.prompted)
    }

    /// The paths of the agent `key`'s room, when they move.
    pub(super) fn paths_mut(
        &mut self,
        key: &Option<String>,
    ) -> Option<&mut Option<super::paths::Paths>> {
        self.agents.get_mut(key).map(|a| &mut a.paths)
    }

    /// Sets `user`'s permissions on their connections, from their next
    /// message (a re-read token file).
    pub fn set_permissions(&mut self, user: &str, permissions: Permissions) {
        for agent in self.agents.values_mut() {
            agent.router.set_permissions(user, permissions);
        }
    }

    /// Starts a run of the agent `key`.
    pub(super) fn start(&mut self, key: &Option<String>, why: StartReason, now: Duration) {
        let run = AgentRun(self.next_run);
        self.next_run = self.next_run.wrapping_add(1);
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        if why != StartReason::Restart {
            agent.restarts = 0;
            agent.backoff = self.config.backoff_min;
        }
        agent.state = State::Starting(run);
        agent.started_at = now;
        super::stats::bump(&mut self.stats.agent_starts, Stats::start_index(why));
        let user = if agent.dedicated {
            agent.user.clone()
        } else {
            None
        };
        if let Some(slot) = self.agents.slot(key) {
            self.runs.insert(run, slot);
        }
        self.actions
            .push_back(Action::StartAgent { run, user, why });
    }

    /// A message from `conn` for the agent `key`: to its router, or, while
    /// the agent starts, into its queue (a user's agent that is not
    /// running is started first, when the pool has room).
    pub(super) fn client_message(
        &mut self,
        key: &Option<String>,
        conn: ConnectionId,
        text: &str,
        inbound: Inbound<'_>,
        message: Message<'_>,
        now: Duration,
    ) {
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        agent.last_active = now;
        if agent.dedicated && agent.state == State::Stopped && !self.make_room(key, now) {
            self.refuse_full(now, conn, &message);
            return;
        }
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        if agent.state == State::Stopped {
            self.start(key, StartReason::FirstMessage, now);
        }
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        if matches!(agent.state, State::Starting(_)) || !agent.waiting.is_empty() {
            agent.waiting.push_back(Waiting {
                conn,
                text: text.to_owned(),
                message: message.into_owned(),
                until: now.saturating_add(self.config.start_wait),
            });
            return;
        }
        self.deliver(key, conn, text, inbound, Ok(message), now);
    }

    fn deliver(
        &mut self,
        key: &Option<String>,
        conn: ConnectionId,
        text: &str,
        inbound: Inbound<'_>,
        message: Result<Message<'_>, MessageError>,
        now: Duration,
    ) {
        let Some(client) = self.conns.get(&conn).map(|c| c.client) else {
            return;
        };
        // Paths into the room: the moved text, decoded again (a rare
        // message: the few methods that carry paths).
        let moved = match &message {
            Ok(m) => self.paths_to_agent(key, client, text, m),
            Err(_) => None,
        };
        let (text, inbound, message) = match &moved {
            Some(moved) => match Message::decode(moved) {
                Ok(m) => (moved.as_str(), Inbound::default(), Ok(m)),
                Err(_) => (text, inbound, message),
            },
            None => (text, inbound, message),
        };
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        agent.last_active = now;
        let mut outs = Vec::new();
        let refused = agent.router.session_refusals();
        agent
            .router
            .handle_client_decoded(client, text, inbound, message, now, &mut outs);
        if agent.router.session_refusals() != refused {
            self.refused(Refusal::UserSessions, Some(conn));
        }
        self.dispatch(key, outs, now);
    }

    /// Lets the waiting messages of `key` go on: all of them (`all`), or
    /// those that waited past their time.
    fn flush(&mut self, key: &Option<String>, now: Duration, all: bool) {
        loop {
            let Some(agent) = self.agents.get_mut(key) else {
                return;
            };
            let due = agent.waiting.front().is_some_and(|w| all || w.until <= now);
            if !due {
                return;
            }
            let Some(w) = agent.waiting.pop_front() else {
                return;
            };
            // The form decoded on arrival: not decoded again.
            self.deliver(key, w.conn, &w.text, Inbound::default(), Ok(w.message), now);
        }
    }

    /// Whether a user's agent may start: below the cap, or after evicting
    /// the agent without a connection the longest.
    fn make_room(&mut self, key: &Option<String>, now: Duration) -> bool {
        // Every place held is another agent's: this one's is stopped (its
        // one caller starts a stopped agent). No key is compared per agent:
        // this runs at each start.
        debug_assert!(!self.agents.get(key).is_some_and(Agent::counted));
        let running = self.agents.iter().filter(|(_, a)| a.counted()).count();
        if running < self.config.max_agents {
            return true;
        }
        let victim = self
            .agents
            .iter()
            .filter(|(k, a)| *k != key && a.counted() && a.clients.is_empty())
            // The earliest active; among equals the first by name (the
            // table keeps its agents in the order they came).
            .min_by(|(ka, a), (kb, b)| a.last_active.cmp(&b.last_active).then_with(|| ka.cmp(kb)))
            .map(|(k, _)| k.clone());
        let Some(victim) = victim else {
            return false;
        };
        let name = self
            .agents
            .get(&victim)
            .map(Agent::name)
            .unwrap_or_default();
        let user = key.clone().unwrap_or_default();
        let max = self.config.max_agents;
        self.log(format!(
            "{name} evicted: {max} agents run (--max-agents), {user}'s starts"
        ));
        self.retire(&victim, StopReason::Evicted, now);
        true
    }

    /// Stops `user`'s own agent, if one runs: its user was removed.
    pub(super) fn retire_user(&mut self, user: &str, now: Duration) {
        let key = Some(user.to_owned());
        if self.agents.contains_key(&key) {
            self.log(format!("user {user} removed: their agent stops"));
            self.retire(&key, StopReason::UserRemoved, now);
        }
    }

    /// Stops the agent `key` (idle, evicted, its user removed); its router
    /// keeps who owns which session.
    fn retire(&mut self, key: &Option<String>, why: StopReason, now: Duration) {
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        if !matches!(agent.state, State::Stopped | State::Stopping(..)) {
            agent.prompted.clear();
            super::stats::bump(&mut self.stats.agent_stops, Stats::stop_index(why));
        }
        match agent.state {
            State::Up(run) | State::Starting(run) => {
                agent.state = State::Stopping(run, why);
                self.actions.push_back(Action::StopAgent { run, why });
            }
            State::Restarting { .. } => {
                agent.state = State::Stopped;
                let name = agent.name();
                self.log(format!("{name} not restarted: {}", why.as_str()));
            }
            State::Stopped | State::Stopping(..) => return,
        }
        let Some(agent) = self.agents.get_mut(key) else {
            return;
        };
        let mut outs = Vec::new();
        let status = format!("stopped: {}", why.as_str());
        agent
            .router
            .agent_exited(&status, Duration::ZERO, &mut outs);
        self.dispatch(key, outs, now);
        self.flush(key, now, true);
    }

    /// Whether no agent process is starting (each came up, or failed to).
    pub fn agents_settled(&self) -> bool {
        !self
            .agents
            .values()
            .any(|a| matches!(a.state, State::Starting(_)))
    }

    /// The agent of `run` (its key).
    fn run_key(&self, run: AgentRun) -> Option<Option<String>> {
        let slot = *self.runs.get(&run)?;
        self.agents.at(slot).map(|(key, _)| key.clone())
    }

    /// The process of `run` is up (`pid`, for the clients' notification).
    pub fn handle_agent_started(&mut self, now: Duration, run: AgentRun, pid: u32) {
        let Some(key) = self.run_key(run) else {
            return;
        };
        let Some(agent) = self.agents.get_mut(&key) else {
            return;
        };
        if agent.state != State::Starting(run) {
            return;
        }
        agent.state = State::Up(run);
        agent.last_active = now;
        let mut outs = Vec::new();
        agent.router.agent_started(pid, agent.restarts, &mut outs);
        self.dispatch(&key, outs, now);
        self.flush(&key, now, true);
    }

    /// The process of `run` exited (or could not start): `status` says
    /// how. Unless the server stopped it, it is restarted after a backoff.
    pub fn handle_agent_exited(&mut self, now: Duration, run: AgentRun, status: &str) {
        let Some(key) = self.run_key(run) else {
            return;
        };
        self.runs.remove(&run);
        let (min, max) = (self.config.backoff_min, self.config.backoff_max);
        let Some(agent) = self.agents.get_mut(&key) else {
            return;
        };
        match agent.state {
            State::Stopping(r, why) if r == run => {
                agent.state = State::Stopped;
                let name = agent.name();
                self.log(format!("{name} stopped: {}", why.as_str()));
            }
            State::Up(r) | State::Starting(r) if r == run => {
                if now.saturating_sub(agent.started_at) > STEADY_RUN {
                    agent.backoff = min;
                }
                let backoff = agent.backoff;
                agent.state = State::Restarting {
                    at: now.saturating_add(backoff),
                };
                agent.backoff = backoff.saturating_mul(2).min(max);
                agent.restarts = agent.restarts.saturating_add(1);
                agent.prompted.clear();
                self.stats.agent_exits = self.stats.agent_exits.saturating_add(1);
                let mut outs = Vec::new();
                agent.router.agent_exited(status, backoff, &mut outs);
                let name = agent.name();
                self.log(format!(
                    "{name} exited ({status}); restarting in {} ms",
                    backoff.as_millis()
                ));
                self.dispatch(&key, outs, now);
                self.flush(&key, now, true);
            }
            _ => {}
        }
    }

    /// The agent whose current run is `run` (and its key), marked active
    /// at `now`: `None` for a run that is not the agent's running one (a
    /// line from a run being stopped, or already replaced, is ignored).
    fn agent_heard(
        &mut self,
        run: AgentRun,
        now: Duration,
    ) -> Option<(Option<String>, &mut Agent)> {
        let key = self.run_key(run)?;
        let agent = self.agents.get_mut(&key)?;
        if agent.state != State::Up(run) {
            return None;
        }
        agent.last_active = now;
        Some((key, agent))
    }

    /// One line of `run`'s stdout (without its `\n`): routed by the
    /// agent's router.
    ///
    /// A line holding a `\n` is dropped (a client never gets two messages
    /// in one); a splitter's line ([`LineText`](crate::framing::LineText)
    /// from [`RawLine::text`](crate::framing::RawLine::text) or a
    /// [`Line`](crate::Line)) is known to hold none and is not searched
    /// again.
    ///
    /// The line is lent (`&str`) or handed over (`String`): a notification
    /// for one session (a tool's long output) handed over is queued as
    /// this very string, never copied; any other line is freed once
    /// routed, before what the router makes of it is stamped for
    /// resumable delivery and queued. So a long line handed over is held
    /// at most twice at any time (lent, the caller's line and the
    /// router's copy of it).
    ///
    /// ```
    /// use std::time::Duration;
    /// use acp_codec::remote::{Action, Principal, Server, ServerConfig};
    ///
    /// let t = Duration::ZERO;
    /// let mut server = Server::new(ServerConfig::new(), t);
    /// let Some(Action::StartAgent { run, .. }) = server.poll_action() else { panic!() };
    /// server.handle_agent_started(t, run, 4242);
    /// let (conn, _) = server.open_websocket(t, &Principal::anonymous(), Some([1; 16])).unwrap();
    /// server.handle_text(t, conn, r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}"#);
    /// let Some(Action::WriteAgent { .. }) = server.poll_action() else { panic!() };
    /// // The agent's line, read into a string of the caller's: handed over.
    /// let line = String::from(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#);
    /// server.handle_agent_line(t, run, line);
    /// let Some(Action::Send { to, text, .. }) = server.poll_action() else { panic!() };
    /// assert_eq!(to, conn);
    /// assert_eq!(text, r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1}}"#);
    /// ```
    pub fn handle_agent_line<'l>(
        &mut self,
        now: Duration,
        run: AgentRun,
        line: impl Into<LineText<'l>>,
    ) {
        // The agent looked up once for the line, by reference: most lines
        // become one message for one client, sent with no second look-up
        // (and no copy of the agent's key); any other output goes by
        // `dispatch`, as every output of the other events does.
        let Some(&slot) = self.runs.get(&run) else {
            return;
        };
        let Some((key, agent)) = self.agents.at_mut(slot) else {
            return;
        };
        if agent.state != State::Up(run) {
            return;
        }
        agent.last_active = now;
        // The router's output goes to a list kept for the next line (one
        // allocation for the server's life, not one a line).
        let outs = &mut self.outs;
        // The long strings the router's peek passed over, when its one
        // output is the line as it came: the room's walk jumps over them.
        let passed = agent.router.handle_agent_text(line.into(), now, outs);
        if outs.is_empty() {
            return;
        }
        if let [Out::Client { .. }] = outs.as_slice() {
            if let Some(Out::Client {
                to,
                stream,
                text,
                kind,
            }) = outs.pop()
            {
                let mut passed = passed.unwrap_or_default();
                let (text, first, conn) = agent.toward_client(to, &stream, text, now, &mut passed);
                self.send_to_client(now, conn, stream, text, kind, first);
            }
            return;
        }
        let key = key.clone();
        let outs = core::mem::take(&mut self.outs);
        self.dispatch(&key, outs, now);
    }

    /// A line of `run`'s stdout over the limit, skipped (`err`, the
    /// splitter's error). An answer to a client's request becomes that
    /// request's error; a request of the agent is answered with an error;
    /// anything else is reported with [`LINE_DROPPED`](super::LINE_DROPPED) (its size, the
    /// limit, and its `sessionId`) to the connections of the user whose
    /// session the line named in its first bytes (`params.sessionId`, as
    /// [`LineTooLong::session_id`](crate::framing::LineTooLong::session_id)
    /// reads it), on that session's stream. A line naming no known
    /// session is reported to the agent's connections when they are all
    /// one user's, and to nobody otherwise, so no user learns of
    /// another's.
    pub fn handle_agent_line_too_long(&mut self, now: Duration, run: AgentRun, err: &FrameError) {
        let Some((key, agent)) = self.agent_heard(run, now) else {
            return;
        };
        let FrameError::LineTooLong(long) = err else {
            return;
        };
        let name = agent.name();
        self.stats.agent_lines_too_long = self.stats.agent_lines_too_long.saturating_add(1);
        self.log(format!("{name} line skipped: {err}"));
        let Some(agent) = self.agents.get_mut(&key) else {
            return;
        };
        let (size, limit) = (long.seen(), long.limit());
        let id = long.id();
        if !long.is_request() && matches!(id, Some(PeekedId::Number(_))) {
            let mut outs = Vec::new();
            agent.router.agent_line_too_long(err, now, &mut outs);
            self.dispatch(&key, outs, now);
            return;
        }
        let request_id = match (&id, long.is_request()) {
            (Some(PeekedId::Number(n)), true) => Some(RequestId::Number(*n)),
            (Some(PeekedId::Str(s)), true) => Some(RequestId::Str(s.as_str().to_owned().into())),
            _ => None,
        };
        if let Some(rid) = &request_id {
            let msg = format!("the agent's request of at least {size} bytes exceeds the bridge's {limit}-byte limit");
            let mut line = Vec::new();
            if encode_error(
                rid,
                &RpcError::new(ErrorCode::INVALID_REQUEST, msg),
                &mut line,
            )
            .is_ok()
            {
                if let Some(run) = agent.live_run() {
                    self.actions.push_back(Action::WriteAgent {
                        run,
                        line: line.into(),
                    });
                }
            }
        }
        let session = long.session_id();
        // Whose session the line was for: its user's connections are told
        // (on the session's stream). A line naming no session the router
        // knows is told only where no other user could learn of it: to an
        // agent's connections when they are all one user's.
        let owner = session.and_then(|s| agent.router.session_user(s));
        let recipients: Vec<(ConnectionId, Stream)> = match (session, owner) {
            (Some(session), Some(owner)) => agent
                .clients
                .iter()
                .filter(|(client, _)| agent.router.user_of(**client) == Some(owner))
                .map(|(_, conn)| (*conn, Stream::Session(session.to_owned())))
                .collect(),
            _ => {
                let users: Vec<Option<&str>> = agent
                    .clients
                    .values()
                    .filter_map(|c| self.conns.get(c).map(|c| c.user.as_deref()))
                    .collect();
                let single_user =
                    agent.dedicated || users.windows(2).all(|w| w.first() == w.get(1));
                if single_user {
                    agent
                        .clients
                        .values()
                        .map(|conn| (*conn, Stream::Connection))
                        .collect()
                } else {
                    Vec::new()
                }
            }
        };
        if recipients.is_empty() {
            return;
        }
        let text = super::line_dropped(size, limit, request_id.as_ref(), session);
        for (conn, stream) in recipients {
            self.send(now, conn, stream, text.clone(), MessageKind::Notification);
        }
    }

    /// Deadlines of the agent `key`: restarts, idle stops, messages that
    /// waited too long for a start.
    pub(super) fn agent_timeout(&mut self, key: &Option<String>, now: Duration) {
        let Some(agent) = self.agents.get(key) else {
            return;
        };
        let idle = agent.idle_at(&self.config).is_some_and(|at| now >= at);
        match agent.state {
            State::Restarting { at } if now >= at => {
                if idle {
                    let name = agent.name();
                    if let Some(agent) = self.agents.get_mut(key) {
                        agent.state = State::Stopped;
                    }
                    self.log(format!("{name} not restarted: idle"));
                } else {
                    self.start(key, StartReason::Restart, now);
                }
            }
            State::Up(_) if idle => self.retire(key, StopReason::Idle, now),
            _ => {}
        }
        self.flush(key, now, false);
    }
}
