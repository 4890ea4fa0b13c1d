//! Messages from clients: checked against the sender's user, permissions
//! and sessions, re-encoded with router ids, forwarded or refused.

use alloc::borrow::{Cow, ToOwned};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::ops::Range;
use core::time::Duration;

use super::sessions::{Owner, Whose};
use super::{
    cancel_target, error_answer, Forwarded, Out, Router, ANONYMOUS, FORBIDDEN, USER_LIMIT,
};
use crate::acp::{names, ErrorResponse, Message, RawJson, Request, RequestId, Response};
use crate::remote::transport::{session_field, SessionField, Stream};
use crate::ErrorCode;

use super::{AgentLine, ClientId, ClientText};

/// `text` as one line for the agent's stdin: its bytes and a `\n`, lent
/// from the client's message when `held` holds it.
fn as_line(text: &str, held: Option<&ClientText>) -> AgentLine {
    lend(Vec::new(), text, held, b"\n")
}

/// `head`, then `part`, then `tail` as one line: `part` lent from the
/// client's message when `held` holds it (and it is long enough to be
/// worth lending), else copied.
fn lend(
    mut head: Vec<u8>,
    part: &str,
    held: Option<&ClientText>,
    tail: &'static [u8],
) -> AgentLine {
    if let Some((held, range)) = held.and_then(|h| Some((h, range_within(part, h.as_str())?))) {
        return AgentLine::lending(head, held, range, tail);
    }
    head.reserve(part.len().saturating_add(tail.len()));
    head.extend_from_slice(part.as_bytes());
    head.extend_from_slice(tail);
    head.into()
}

/// What the server learned of a client's message before the router: what
/// holds its text, when the caller handed it over (what goes to the agent
/// unchanged is lent from it), and its `params.sessionId`, when read
/// already (the router does not walk the params again).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Inbound<'t> {
    /// Holds the message's text (checked: a part is lent only when it
    /// lies in it).
    pub(crate) held: Option<&'t ClientText>,
    /// The message's [`session_field`], when read already: of this very
    /// message (a rewritten one leaves it `None`).
    pub(crate) session: Option<&'t SessionField<'t>>,
    /// The raw values of its params' `sessionId` and `_meta`, when read
    /// already (a prompt's turn event reads them).
    pub(crate) head: Option<[Option<&'t str>; 2]>,
}

/// A refusal: the code and the message to answer with.
type Refusal = (ErrorCode, String);

/// The refusal of a session that is not the sender's: the same words
/// whether another user owns it, nobody may claim it or the router has
/// never seen it, naming no user.
fn not_available(session: &str) -> Refusal {
    let msg = format!("session {session} is not available to this connection (session/load or session/resume one of yours first)");
    (ErrorCode::INVALID_PARAMS, msg)
}

/// What a request did to the session it names.
struct Claim {
    /// The session a reattach bound, and its owner before.
    bound: Option<(String, Option<Owner>)>,
    /// It opens a new session (`session/new`, `session/fork`).
    opens: bool,
}

/// The sender of a message: its id, user and whether it may write.
struct Sender<'a> {
    id: ClientId,
    user: &'a str,
    write: bool,
}

impl Router {
    fn refuse(
        &self,
        client: ClientId,
        id: &RequestId<'_>,
        code: ErrorCode,
        msg: String,
        out: &mut Vec<Out>,
    ) {
        out.push(Out::Client {
            to: client,
            stream: Stream::Connection,
            text: error_answer(id, code, msg),
            kind: super::MessageKind::answer(id),
        });
    }

    /// One message from `client` (a WebSocket text frame, a `POST` body):
    /// checked, re-encoded and forwarded, or refused with a JSON-RPC
    /// error.
    ///
    /// Requests get router-unique ids toward the agent. A message holding a
    /// raw newline is refused, so one client message is never two agent
    /// lines. Naming a session another user owns, or one another
    /// connection holds, is refused (`-32602`, naming no user), and so is
    /// a named user naming a session the router has never seen (a
    /// `session/load` or `session/resume` of one goes through when the
    /// agent is the user's own, see
    /// [`with_dedicated_user`](Self::with_dedicated_user)); a request
    /// the user's permissions do not allow gets [`FORBIDDEN`]; a reply to
    /// an agent request is forwarded only from the client it was sent to.
    /// Unknown clients are ignored.
    pub fn handle_client(
        &mut self,
        client: ClientId,
        text: &str,
        now: Duration,
        out: &mut Vec<Out>,
    ) {
        let inbound = Inbound::default();
        self.handle_client_decoded(client, text, inbound, Message::decode(text), now, out);
    }

    /// [`handle_client`](Self::handle_client) for a message its caller
    /// decoded already (a transport's rules need it first): `decoded` is
    /// `Message::decode(text)`, so the message is decoded once on its way.
    /// `inbound` is what the caller learned of it already.
    pub(crate) fn handle_client_decoded(
        &mut self,
        client: ClientId,
        text: &str,
        inbound: Inbound<'_>,
        decoded: Result<Message<'_>, crate::acp::MessageError>,
        now: Duration,
        out: &mut Vec<Out>,
    ) {
        let Some(c) = self.clients.get(&client) else {
            return;
        };
        let (user, write) = (c.user.clone(), c.permissions.write());
        let from = Sender {
            id: client,
            user: &user,
            write,
        };
        if let Some(at) = memchr::memchr(b'\n', text.as_bytes()) {
            let id = decoded
                .as_ref()
                .ok()
                .and_then(Message::id)
                .cloned()
                .unwrap_or(RequestId::Null);
            let msg = format!(
                "message holds a raw newline at byte {at}: one message must be exactly one json-rpc message"
            );
            self.refuse(client, &id, ErrorCode::INVALID_REQUEST, msg, out);
            return;
        }
        let msg = match decoded {
            Ok(m) => m,
            Err(e) => {
                self.refuse(client, &RequestId::Null, e.code(), e.to_string(), out);
                return;
            }
        };
        match msg {
            Message::Request(r) => self.client_request(&from, r, text, inbound, now, out),
            Message::Notification(n) => {
                if n.method == names::CANCEL_REQUEST {
                    self.client_cancel_request(client, n.params.as_ref(), out);
                    return;
                }
                let field = inbound
                    .session
                    .cloned()
                    .unwrap_or_else(|| session_field(n.params.as_ref()));
                let foreign = match field {
                    // Only for a session this connection holds, as for
                    // requests (or one never seen, for the single user).
                    SessionField::Id(s) => match self.sessions.whose(&s) {
                        Whose::Owner(o) => o.client != Some(client),
                        Whose::Nobody => true,
                        Whose::Unseen => !self.single_user(&user),
                    },
                    // Not one string: no ownership check could see which
                    // session the agent would take it for.
                    SessionField::Invalid => true,
                    SessionField::Absent => false,
                };
                if foreign || !write {
                    self.drop_one();
                    return;
                }
                // Forwarded as it came: valid, and without a raw newline.
                out.push(Out::Agent(as_line(text, inbound.held)));
            }
            Message::Response(Response { ref id, .. })
            | Message::Error(ErrorResponse { ref id, .. }) => {
                let key = id.to_owned_id();
                match self.agent_requests.get(&key) {
                    Some(a) if a.client == client => {
                        let a = self.agent_requests.remove(&key);
                        let _ = self.tracker.finish_peer_request(&key);
                        if write {
                            // The agent's own id, unchanged: forwarded as it came.
                            out.push(Out::Agent(as_line(text, inbound.held)));
                        } else if let Some(a) = a {
                            // Permissions taken away since it was asked.
                            self.answer_agent_for_gone(&key, &a.method, out);
                        }
                    }
                    // Not a request of the agent to this client: never forwarded.
                    _ => self.drop_one(),
                }
            }
        }
    }

    /// `$/cancel_request` from a client: its id rewritten to ours.
    fn client_cancel_request(
        &mut self,
        client: ClientId,
        params: Option<&RawJson<'_>>,
        out: &mut Vec<Out>,
    ) {
        let Some(target) = cancel_target(params) else {
            self.drop_one();
            return;
        };
        let ours = self
            .forwarded
            .iter()
            .find_map(|(n, f)| (f.client == client && f.id == target).then_some(*n));
        let mut line = Vec::new();
        match ours {
            Some(ours)
                if self
                    .tracker
                    .cancel(&RequestId::Number(ours), &mut line)
                    .is_ok() =>
            {
                out.push(Out::Agent(line.into()));
            }
            _ => self.drop_one(),
        }
    }

    /// Whether `user` is the anonymous user of [`Router::connect`] on a
    /// router whose agent is theirs (the single-user bridge): they may name
    /// any session the router has not seen without reattaching it first.
    fn single_user(&self, user: &str) -> bool {
        user == ANONYMOUS && self.agent_user == ANONYMOUS
    }

    /// Whether `from` may send `r` at all: the agent is up, the client's
    /// pending requests and the user's permissions allow it.
    fn admit(&self, from: &Sender<'_>, r: &Request<'_>) -> Result<(), Refusal> {
        if !self.agent_up {
            let msg = "the agent is not running (restarting); retry after _bridge/agent_started";
            return Err((ErrorCode::INTERNAL_ERROR, msg.into()));
        }
        let pending = self.clients.get(&from.id).map_or(0, |c| c.pending.get());
        if pending >= self.max_pending {
            let msg = format!(
                "{pending} requests already pending, limit {}",
                self.max_pending
            );
            return Err((ErrorCode::INTERNAL_ERROR, msg));
        }
        if !from.write && !self.table_of(from.id).read_only_allows(&r.method) {
            let msg = format!(
                "{} needs the write permission; this user may only read",
                r.method
            );
            return Err((FORBIDDEN, msg));
        }
        Ok(())
    }

    /// Refuses a request opening one more session past the user's limit.
    fn check_session_limit(&mut self, user: &str) -> Result<(), Refusal> {
        let mut owned = self.sessions.counts(user).held;
        owned.add(self.users.get(user).map_or(0, |u| u.opening.get()));
        if owned.get() >= self.max_user_sessions {
            let msg = format!(
                "this user holds {} sessions, the limit: close one or leave it (disconnect) first",
                self.max_user_sessions
            );
            self.session_refusals = self.session_refusals.wrapping_add(1);
            return Err((USER_LIMIT, msg));
        }
        Ok(())
    }

    /// Whether `from` may name `session` in a `method` request; a reattach
    /// (`session/load`, `session/resume`) of a session the user owns (or,
    /// by the user whose own agent this is, one the router has never seen)
    /// binds it to `from` now, so what the agent replays before its answer
    /// reaches it.
    fn claim(
        &mut self,
        from: &Sender<'_>,
        method: &str,
        session: Option<&str>,
    ) -> Result<Claim, Refusal> {
        let table = self.table_of(from.id);
        let (opens, reattach) = (table.opens_session(method), table.is_reattach(method));
        let Some(s) = session else {
            if opens {
                self.check_session_limit(from.user)?;
            }
            return Ok(Claim { bound: None, opens });
        };
        let owner = match self.sessions.whose(s) {
            Whose::Owner(o) if o.user == from.user => Some(o),
            Whose::Owner(_) | Whose::Nobody => return Err(not_available(s)),
            Whose::Unseen => None,
        };
        match &owner {
            Some(o) if o.client == Some(from.id) => {
                if opens {
                    self.check_session_limit(from.user)?;
                }
                return Ok(Claim { bound: None, opens });
            }
            Some(o) if !reattach => {
                let msg = match o.client {
                    Some(_) => format!("session {s} is held by another connection of this user: session/load or session/resume it here first"),
                    None => format!("session {s} is held by no connection: session/load or session/resume it first"),
                };
                return Err((ErrorCode::INVALID_PARAMS, msg));
            }
            // A named user acts only on sessions they hold.
            None if !reattach && !self.single_user(from.user) => return Err(not_available(s)),
            None if !reattach => {
                if opens {
                    self.check_session_limit(from.user)?;
                }
                return Ok(Claim { bound: None, opens });
            }
            // A session the router has never seen (the agent's from before
            // the router, say) may be another user's when the agent is
            // shared: only the agent's own user may reattach it, and it is
            // theirs from now on.
            None if from.user != self.agent_user => return Err(not_available(s)),
            _ => {}
        }
        // A reattach: one more session held, unless another connection of
        // the user gives it up.
        if owner.as_ref().is_none_or(|o| o.client.is_none()) {
            self.check_session_limit(from.user)?;
        }
        self.sessions.hold(s, from.user, from.id);
        Ok(Claim {
            bound: Some((s.into(), owner)),
            opens: false,
        })
    }

    /// Undoes a reattach's binding: the session goes back to its owner
    /// before (it stays theirs), or is forgotten if the router had never
    /// seen it.
    pub(super) fn unbind(&mut self, session: &str, before: Option<Owner>, out: &mut Vec<Out>) {
        match before {
            Some(Owner {
                user,
                client: Some(c),
            }) if self.clients.contains_key(&c) => self.sessions.hold(session, &user, c),
            Some(Owner { user, .. }) => {
                self.sessions.leave(session, &user);
                self.trim_left(&user, out);
            }
            None => {
                self.sessions.remove(session);
            }
        }
    }

    fn client_request(
        &mut self,
        from: &Sender<'_>,
        r: Request<'_>,
        text: &str,
        inbound: Inbound<'_>,
        now: Duration,
        out: &mut Vec<Out>,
    ) {
        if r.method == names::INITIALIZE {
            if let Err(refusal) = self.negotiate(from.id, &r.id, text) {
                super::dialect::refuse_initialize(out, from.id, &r.id, refusal);
                return;
            }
        }
        // A `sessionId` that is not one string (repeated, or of another
        // type) is refused: the agent's parser could read a session out of
        // it (the last of two, say) that no ownership check saw.
        let field = inbound
            .session
            .cloned()
            .unwrap_or_else(|| session_field(r.params.as_ref()));
        let session = match field {
            SessionField::Invalid => {
                let msg = "params.sessionId must be one string (given twice, or not a string)";
                self.refuse(
                    from.id,
                    &r.id,
                    ErrorCode::INVALID_PARAMS,
                    msg.to_owned(),
                    out,
                );
                return;
            }
            field => field.into_id().map(Cow::into_owned),
        };
        let claim = self
            .admit(from, &r)
            .and_then(|()| self.claim(from, &r.method, session.as_deref()));
        let claim = match claim {
            Ok(c) => c,
            Err((code, msg)) => {
                self.refuse(from.id, &r.id, code, msg, out);
                return;
            }
        };
        let ours = self.tracker.start(&r.method, now);
        // Params lent by `text` hold no newline: checked above.
        let lent = r
            .params
            .as_ref()
            .is_some_and(|p| range_within(p.get(), text).is_some());
        let encoded = encode_request(&ours, &r.method, r.params.as_ref(), lent, inbound.held);
        let (line, n) = match (encoded, &ours) {
            (Ok(line), RequestId::Number(n)) => (line, n),
            (encoded, _) => {
                // The tracker numbers its requests: only encoding can fail.
                let _ = self.tracker.handle_response(&ours, now);
                if let Some((s, before)) = claim.bound {
                    self.unbind(&s, before, out);
                }
                match encoded {
                    Err(e) => self.refuse(from.id, &r.id, e.code(), e.to_string(), out),
                    Ok(_) => self.drop_one(),
                }
                return;
            }
        };
        if claim.opens {
            let u = self.user_mut(from.user);
            u.opening.add(1);
        }
        self.forwarded.insert(
            *n,
            Forwarded {
                client: from.id,
                user: from.user.into(),
                id: r.id.to_owned_id(),
                method: r.method.into_owned(),
                session,
                opens: claim.opens,
                bound: claim.bound,
            },
        );
        if let Some(c) = self.clients.get_mut(&from.id) {
            c.pending.add(1);
        }
        out.push(Out::Agent(line));
    }
}

/// Where `part` lies in `whole`, when it is a slice of it (the same
/// memory).
fn range_within(part: &str, whole: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some(start..end)
}

/// The request `id`, `method`, `params` as one line, byte for byte what
/// [`Message::encode`] writes: the params as they came, not checked
/// again (they are raw JSON already), lent from the client's message
/// when `held` holds them, else copied. Params holding a newline go
/// through [`Message::encode`] (compacted, or refused); `no_newline` says
/// they are known to hold none.
fn encode_request(
    id: &RequestId<'_>,
    method: &str,
    params: Option<&RawJson<'_>>,
    no_newline: bool,
    held: Option<&ClientText>,
) -> Result<AgentLine, crate::EncodeError> {
    let raw = params.map(RawJson::get);
    let encoded = (
        serde_json::to_string(id),
        serde_json::to_string(method),
        raw.filter(|p| !no_newline && memchr::memchr(b'\n', p.as_bytes()).is_some()),
    );
    let (Ok(id_text), Ok(method_text), None) = encoded else {
        let request = Message::Request(Request {
            id: id.clone(),
            method: Cow::Borrowed(method),
            params: params.cloned(),
        });
        let mut line = Vec::new();
        request.encode(&mut line)?;
        return Ok(line.into());
    };
    let mut head = Vec::with_capacity(
        40usize
            .saturating_add(id_text.len())
            .saturating_add(method_text.len()),
    );
    head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    head.extend_from_slice(id_text.as_bytes());
    head.extend_from_slice(br#","method":"#);
    head.extend_from_slice(method_text.as_bytes());
    let Some(p) = raw else {
        head.extend_from_slice(b"}\n");
        return Ok(head.into());
    };
    head.extend_from_slice(br#","params":"#);
    Ok(lend(head, p, held, b"}\n"))
}
