//! Lines from the agent: responses back to their requester with its own
//! id, requests and notifications to the connection holding their session.

use alloc::borrow::{Cow, ToOwned};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

use super::{
    cancel_target, error_answer, line_to_text, session_of, AgentRequest, Forwarded, MessageKind,
    Out, Router,
};
use crate::acp::{
    encode_error, encode_response, names, ErrorResponse, Message, RawJson, Request, RequestId,
    Response, RpcError, SessionMember,
};
use crate::framing::LineText;
use crate::json::unescape::unquote;
use crate::remote::transport::{
    answer_stream, error_stream, peek_passed, Passed, SessionField, Stream,
};
use crate::{ErrorCode, FrameError, PeekedId};

use super::sessions::Whose;
use super::ClientId;

impl Router {
    /// One line of the agent's stdout, routed to the client it concerns.
    ///
    /// `line` is one line without its `\n`, as a
    /// [`LineSplitter`](crate::LineSplitter) hands them out; anything
    /// holding a newline is dropped, so a client never gets two messages in
    /// one. Responses go back to the requester with its own id; requests
    /// and notifications naming a session to the connection holding it
    /// (only its owner's); notifications naming no session to every
    /// client; an agent request for a session no connection holds, or one
    /// held by a read-only user, is answered at once (`cancelled` for a
    /// permission request, `-32603` for others).
    pub fn handle_agent(&mut self, line: &str, now: Duration, out: &mut Vec<Out>) {
        let _ = self.handle_agent_text(LineText::from(line), now, out);
    }

    /// [`handle_agent`](Self::handle_agent) with the line lent or handed
    /// over: a notification for one session goes to its client as this
    /// very string (a long line handed over is never copied), and a
    /// splitter's line is not searched for a newline again. Then, and only
    /// then, returns the long strings the routing peek passed over in it
    /// (for the caller's own walk of the same text).
    pub(crate) fn handle_agent_text(
        &mut self,
        text: LineText<'_>,
        now: Duration,
        out: &mut Vec<Out>,
    ) -> Option<Passed> {
        if text.holds_newline() {
            self.drop_one();
            return None;
        }
        let text = text.into_cow();
        let line: &str = &text;
        // Read up to the members it is routed on (the peek), long or
        // short: the router only forwards an agent's line, and answers
        // none. A line not in the envelope's own form is decoded in full
        // (one walk: the envelope, and the params' `sessionId` on the way).
        let mut passed = Passed::default();
        let peeked = peek_passed(line, &mut passed).map(|p| (p.message, p.session));
        let Some((msg, member)) = peeked.or_else(|| Message::decode_with_session(line).ok()) else {
            // Stray text on stdout (Gemini has printed some): not a message.
            self.drop_one();
            return None;
        };
        let session = match member {
            SessionMember::Absent | SessionMember::One("null") => SessionField::Absent,
            SessionMember::One(v) => match unquote::<serde_json::Error>(v) {
                Ok(s) => SessionField::Id(s),
                Err(_) => SessionField::Invalid,
            },
            SessionMember::Repeated => SessionField::Invalid,
        };
        let to_session = match (&msg, &session) {
            (Message::Notification(n), SessionField::Id(s))
                if n.method != names::CANCEL_REQUEST =>
            {
                Some(s.to_string())
            }
            _ => None,
        };
        if let Some(s) = to_session {
            return self.route_to_session(s, text, out).then_some(passed);
        }
        match msg {
            Message::Response(_) | Message::Error(_) => self.agent_response(msg, line, now, out),
            Message::Request(ref r) => self.agent_request(r, session, line, out),
            Message::Notification(ref n) => {
                if n.method == names::CANCEL_REQUEST {
                    let target = cancel_target(n.params.as_ref())
                        .and_then(|id| self.agent_requests.get(&id.to_owned_id()));
                    match target {
                        Some(a) => out.push(Out::Client {
                            to: a.client,
                            stream: Stream::Session(a.session.clone()),
                            text: line.to_owned(),
                            kind: MessageKind::Notification,
                        }),
                        None => self.drop_one(),
                    }
                    return None;
                }
                match session {
                    SessionField::Invalid | SessionField::Id(_) => self.drop_one(),
                    SessionField::Absent => {
                        for &c in self.clients.keys() {
                            out.push(Out::Client {
                                to: c,
                                stream: Stream::Connection,
                                text: line.to_owned(),
                                kind: MessageKind::Notification,
                            });
                        }
                    }
                }
            }
        }
        None
    }

    /// A notification for `session`: to the connection holding it (then
    /// `true`: the one output is the line as it came), else handed out as
    /// missed ([`Out::Missed`]) when the session waits for a reattach, else
    /// dropped.
    fn route_to_session(
        &mut self,
        session: String,
        line: Cow<'_, str>,
        out: &mut Vec<Out>,
    ) -> bool {
        if let Some(holder) = self.sessions.holder(&session) {
            out.push(Out::Client {
                to: holder,
                stream: Stream::Session(session),
                text: line.into_owned(),
                kind: MessageKind::Notification,
            });
            return true;
        }
        if self.replaying.iter().any(|d| *d == session) {
            out.push(Out::Missed {
                session,
                text: line.into_owned(),
            });
        } else {
            self.drop_one();
        }
        false
    }

    fn agent_response(&mut self, msg: Message<'_>, line: &str, now: Duration, out: &mut Vec<Out>) {
        let (Message::Response(Response { id, .. }) | Message::Error(ErrorResponse { id, .. })) =
            &msg
        else {
            return;
        };
        let Ok(done) = self.tracker.handle_response(id, now) else {
            self.drop_one();
            return;
        };
        let RequestId::Number(n) = done.id else {
            return;
        };
        let Some(f) = self.forwarded.remove(&n) else {
            return;
        };
        let settled = self.settle(f, &msg, out);
        let Some(f) = settled else {
            // The requester left.
            self.drop_one();
            return;
        };
        if let Message::Response(r) = &msg {
            if f.method == names::INITIALIZE {
                if let Some(refusal) = self.initialized(f.client, &f.id, &r.result) {
                    super::dialect::refuse_initialize(out, f.client, &f.id, refusal);
                    return;
                }
            }
            if let Some(s) = session_of(Some(&r.result)).filter(|s| f.opens && self.reused(&f, s)) {
                let msg = format!("the agent answered {} with session {s}, which is not available to this connection", f.method);
                out.push(Out::Client {
                    to: f.client,
                    stream: error_stream(&f.method, f.session.as_deref()),
                    text: error_answer(&f.id, ErrorCode::INTERNAL_ERROR, msg),
                    kind: MessageKind::answer(&f.id),
                });
                return;
            }
        }
        // A result behind what the agent sent on its session's stream
        // before it (a load's history); an error where the requester
        // reads it.
        let (back, stream) = match msg {
            Message::Response(r) => (
                Message::Response(Response {
                    id: f.id.clone(),
                    result: self.visible(&f, r.result),
                }),
                answer_stream(f.session.as_deref()),
            ),
            Message::Error(e) => (
                Message::Error(ErrorResponse {
                    id: f.id.clone(),
                    error: e.error,
                }),
                error_stream(&f.method, f.session.as_deref()),
            ),
            _ => return,
        };
        // An answer that cannot be written as JSON (a result the peek
        // passed over holding bytes JSON refuses) is answered with an
        // error where the requester reads errors: it is not left waiting.
        let (text, stream, failed) = match answer_text(&back, line.len()) {
            Some(text) => (text, stream, false),
            None => {
                let msg = format!("the agent's answer to {} is not JSON", f.method);
                let text = error_answer(&f.id, ErrorCode::INTERNAL_ERROR, msg);
                (text, error_stream(&f.method, f.session.as_deref()), true)
            }
        };
        // An `initialize` the agent refused (or answered with no JSON)
        // leaves the connection uninitialized: the client may ask again
        // (in another version after `-32022`).
        let reopen = (failed || matches!(back, Message::Error(_))) && f.method == names::INITIALIZE;
        out.push(Out::Client {
            to: f.client,
            stream,
            text,
            kind: MessageKind::answer(&f.id),
        });
        if reopen {
            out.push(Out::InitializeRefused { to: f.client });
        }
    }

    /// What a `session/list` answer shows a user: their own sessions only
    /// (another user's ids and titles are not theirs to see, nor sessions
    /// never seen, which may be another user's). Other answers, and the
    /// answers to the agent's own user (the anonymous user by default,
    /// see [`Router::with_dedicated_user`]), pass unchanged.
    fn visible<'r>(&self, f: &Forwarded, result: RawJson<'r>) -> RawJson<'r> {
        if f.method != names::SESSION_LIST || f.user == self.agent_user {
            return result;
        }
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(result.get()) else {
            return result;
        };
        let Some(list) = v.get_mut("sessions").and_then(|s| s.as_array_mut()) else {
            return result;
        };
        list.retain(|s| {
            s.get("sessionId")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|id| self.session_user(id) == Some(f.user.as_str()))
        });
        RawJson::from_string(v.to_string()).unwrap_or(result)
    }

    /// Bookkeeping when the agent answers a forwarded request: sessions
    /// created or reattached, the user's count of sessions being opened,
    /// the requester's pending count. `None` when the requester left.
    fn settle(&mut self, f: Forwarded, msg: &Message<'_>, out: &mut Vec<Out>) -> Option<Forwarded> {
        if f.opens {
            let u = self.user_mut(&f.user);
            u.opening.release(1);
        }
        let here = self.clients.contains_key(&f.client);
        match msg {
            Message::Response(r) => {
                if f.opens {
                    if let Some(s) = session_of(Some(&r.result)) {
                        self.created(&f, &s, here, out);
                    }
                }
                if let Some((s, _)) = &f.bound {
                    if here && self.sessions.holder(s) == Some(f.client) {
                        self.reattached(f.client, s, out);
                    }
                }
            }
            Message::Error(_) => {
                if let Some((s, before)) = &f.bound {
                    if self.sessions.holder(s) == Some(f.client) {
                        self.unbind(s, before.clone(), out);
                    }
                }
            }
            _ => {}
        }
        self.tidy_user(&f.user);
        let c = self.clients.get_mut(&f.client)?;
        c.pending.release(1);
        Some(f)
    }

    /// The agent created `session` for `f`'s requester. An id the agent
    /// reuses is a new session too, unless another user owns it: that
    /// session stays theirs (the requester's answer becomes an error, see
    /// [`Self::reused`]), so no agent can hand one user's session to
    /// another.
    fn created(&mut self, f: &Forwarded, session: &str, here: bool, out: &mut Vec<Out>) {
        if self.reused(f, session) {
            return;
        }
        self.drop_replay(session, out);
        if here {
            self.sessions.hold(session, &f.user, f.client);
        } else {
            self.sessions.leave(session, &f.user);
            self.trim_left(&f.user, out);
        }
    }

    /// Whether `f` is a `session/new` or `session/fork` whose answer names
    /// a session another user owns, or one nobody may claim.
    fn reused(&self, f: &Forwarded, session: &str) -> bool {
        match self.sessions.whose(session) {
            Whose::Owner(o) => o.user != f.user,
            Whose::Nobody => true,
            Whose::Unseen => false,
        }
    }

    fn agent_request(
        &mut self,
        r: &Request<'_>,
        session: SessionField<'_>,
        line: &str,
        out: &mut Vec<Out>,
    ) {
        let session = session.into_id().map(alloc::borrow::Cow::into_owned);
        let holder = session.as_ref().and_then(|s| self.sessions.holder(s));
        let may_answer = holder
            .and_then(|c| self.clients.get(&c))
            .is_some_and(|c| c.permissions.write());
        let (Some(holder), Some(session), true) = (holder, session, may_answer) else {
            self.answer_agent_for_gone(&r.id, &r.method, out);
            return;
        };
        if self.tracker.handle_peer_request(&r.id, &r.method).is_err() {
            let msg = format!("request id {} is already pending or too many are", r.id);
            let mut line = Vec::new();
            let _ = encode_error(
                &r.id,
                &RpcError::new(ErrorCode::INVALID_REQUEST, msg),
                &mut line,
            );
            out.push(Out::Agent(line.into()));
            return;
        }
        self.agent_requests.insert(
            r.id.to_owned_id(),
            AgentRequest {
                client: holder,
                method: r.method.to_string(),
                session: session.clone(),
            },
        );
        out.push(Out::Client {
            to: holder,
            stream: Stream::Session(session),
            text: line.to_owned(),
            kind: MessageKind::Request(r.id.to_owned_id()),
        });
    }

    /// A `session/load` or `session/resume` of `session` succeeded: the
    /// client gets what the session missed, before the answer.
    fn reattached(&mut self, client: ClientId, session: &str, out: &mut Vec<Out>) {
        if self.stop_replay(session) {
            out.push(Out::Reattached {
                to: client,
                session: session.to_owned(),
            });
        }
    }

    /// Answers an agent request whose client is gone, unknown, or may not
    /// answer it.
    pub(super) fn answer_agent_for_gone(
        &mut self,
        id: &RequestId<'_>,
        method: &str,
        out: &mut Vec<Out>,
    ) {
        let mut line = Vec::new();
        if method == names::SESSION_REQUEST_PERMISSION {
            let result = serde_json::json!({"outcome": {"outcome": "cancelled"}});
            let _ = encode_response(id, &result, &mut line);
        } else {
            let msg = format!("no client that may answer is connected for this {method} request");
            let _ = encode_error(
                id,
                &RpcError::new(ErrorCode::INTERNAL_ERROR, msg),
                &mut line,
            );
        }
        out.push(Out::Agent(line.into()));
    }

    /// An agent line over the size limit: if it answers a client's request,
    /// that client gets an error instead of waiting forever.
    pub fn agent_line_too_long(&mut self, err: &FrameError, now: Duration, out: &mut Vec<Out>) {
        let FrameError::LineTooLong(long) = err else {
            self.drop_one();
            return;
        };
        let (Some(PeekedId::Number(n)), false) = (long.id(), long.is_request()) else {
            self.drop_one();
            return;
        };
        let (seen, limit) = (long.seen(), long.limit());
        if self
            .tracker
            .handle_response(&RequestId::Number(n), now)
            .is_err()
        {
            return;
        }
        let Some(f) = self.forwarded.remove(&n) else {
            return;
        };
        let error = RpcError::new(ErrorCode::INTERNAL_ERROR, "");
        let msg = Message::Error(ErrorResponse {
            id: RequestId::Number(n),
            error,
        });
        let Some(f) = self.settle(f, &msg, out) else {
            return;
        };
        let msg = format!(
            "the agent's response of at least {seen} bytes exceeds the bridge's {limit}-byte limit"
        );
        out.push(Out::Client {
            to: f.client,
            stream: error_stream(&f.method, f.session.as_deref()),
            text: error_answer(&f.id, ErrorCode::INTERNAL_ERROR, msg),
            kind: MessageKind::answer(&f.id),
        });
    }
}

/// An answer going back to its requester (`back`, with the requester's own
/// id) as one line's text, without its `\n`: what [`Message::encode`]
/// writes. A result is spliced in as the agent sent it, once the crate's
/// scanner has checked it is one JSON value (the routing peek passed over
/// its inside unchecked): not parsed into serde's raw value and written
/// out again, nor its text checked as UTF-8 again. A result holding a
/// newline (pretty-printed by a caller) or that the scanner refuses, and
/// an error, go through [`Message::encode`] (compacted, or refused: no
/// answer then). `hint`: the agent's line's length, the text's capacity.
pub(super) fn answer_text(back: &Message<'_>, hint: usize) -> Option<String> {
    if let Message::Response(Response { id, result }) = back {
        let raw = result.get();
        if memchr::memchr(b'\n', raw.as_bytes()).is_none()
            && crate::json::scan::validate(raw).is_ok()
        {
            if let Ok(id) = serde_json::to_string(id) {
                let mut text =
                    String::with_capacity(raw.len().saturating_add(id.len()).saturating_add(32));
                text.push_str(r#"{"jsonrpc":"2.0","id":"#);
                text.push_str(&id);
                text.push_str(r#","result":"#);
                text.push_str(raw);
                text.push('}');
                return Some(text);
            }
        }
    }
    let mut text = Vec::with_capacity(hint.saturating_add(16));
    back.encode(&mut text).ok()?;
    Some(line_to_text(text))
}
