//! The router's agent side: lines from the agent routed to the client
//! they concern, answers settling session ownership, replay on reattach.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

use super::{
    bridge_notification, cancel_target, error_text, line_to_text, session_of, AgentRequest,
    ClientId, Forwarded, Out, Router, REPLAY_DROPPED,
};
use crate::acp::{
    encode_error, encode_response, names, ErrorResponse, Message, Request, RequestId, Response,
    RpcError,
};
use crate::remote::transport::{answer_stream, session_field, SessionField, Stream, SESSION_FORK};
use crate::{ErrorCode, FrameError, PeekedId};

impl Router {
    /// One line of the agent's stdout, routed to the client it concerns.
    ///
    /// `line` is one line without its `\n`, as a
    /// [`LineSplitter`](crate::LineSplitter) hands them out; anything
    /// holding a newline is dropped, so a client never gets two messages in
    /// one. Responses go back to the requester with its own id; requests
    /// and notifications naming a session to its owner; notifications
    /// naming no session to every client; an agent request for a session
    /// nobody owns is answered at once (`cancelled` for a permission
    /// request, `-32603` for others).
    pub fn handle_agent(&mut self, line: &str, now: Duration, out: &mut Vec<Out>) {
        if memchr::memchr(b'\n', line.as_bytes()).is_some() {
            self.drop_one();
            return;
        }
        let Ok(msg) = Message::decode(line) else {
            // Stray text on stdout (Gemini has printed some): not a message.
            self.drop_one();
            return;
        };
        match msg {
            Message::Response(_) | Message::Error(_) => self.agent_response(msg, line, now, out),
            Message::Request(ref r) => self.agent_request(r, line, out),
            Message::Notification(ref n) => {
                if n.method == names::CANCEL_REQUEST {
                    let target = cancel_target(n.params.as_ref())
                        .and_then(|id| self.agent_requests.get(&id.to_owned_id()));
                    match target {
                        Some(a) => out.push(Out::Client {
                            to: a.client,
                            stream: Stream::Session(a.session.clone()),
                            text: line.to_owned(),
                        }),
                        None => self.drop_one(),
                    }
                    return;
                }
                match session_field(n.params.as_ref()) {
                    SessionField::Id(s) => self.route_to_session(&s, line, out),
                    SessionField::Invalid => self.drop_one(),
                    SessionField::Absent => {
                        for &c in self.clients.keys() {
                            out.push(Out::Client {
                                to: c,
                                stream: Stream::Connection,
                                text: line.to_owned(),
                            });
                        }
                    }
                }
            }
        }
    }

    /// A notification for `session`: to its owner, else into the replay
    /// buffer when the session waits for a reattach, else dropped.
    fn route_to_session(&mut self, session: &str, line: &str, out: &mut Vec<Out>) {
        if let Some(&owner) = self.sessions.get(session) {
            out.push(Out::Client {
                to: owner,
                stream: Stream::Session(session.to_owned()),
                text: line.to_owned(),
            });
            return;
        }
        match &mut self.replay {
            Some(replay) if self.detached.iter().any(|d| d == session) => {
                // What does not fit is counted by the buffer and reported
                // to the client that reattaches.
                let _ = replay.push(session, line);
            }
            _ => self.drop_one(),
        }
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
        self.settle(&f, &msg, out);
        if let Some(c) = self.clients.get_mut(&f.client) {
            c.pending = c.pending.saturating_sub(1);
        } else {
            // The requester left.
            self.drop_one();
            return;
        }
        let back = match msg {
            Message::Response(r) => Message::Response(Response {
                id: f.id.clone(),
                result: r.result,
            }),
            Message::Error(e) => Message::Error(ErrorResponse {
                id: f.id.clone(),
                error: e.error,
            }),
            _ => return,
        };
        let mut text = Vec::with_capacity(line.len().saturating_add(16));
        if back.encode(&mut text).is_ok() {
            out.push(Out::Client {
                to: f.client,
                stream: answer_stream(&f.method, f.session.as_deref()),
                text: line_to_text(text),
            });
        }
    }

    fn agent_request(&mut self, r: &Request<'_>, line: &str, out: &mut Vec<Out>) {
        let session = session_of(r.params.as_ref());
        let owner = session.as_ref().and_then(|s| self.sessions.get(s).copied());
        let (Some(owner), Some(session)) = (owner, session) else {
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
            out.push(Out::Agent(line));
            return;
        }
        self.agent_requests.insert(
            r.id.to_owned_id(),
            AgentRequest {
                client: owner,
                method: r.method.to_string(),
                session: session.clone(),
            },
        );
        out.push(Out::Client {
            to: owner,
            stream: Stream::Session(session),
            text: line.to_owned(),
        });
    }

    /// Session bookkeeping when the agent answers a forwarded request.
    fn settle(&mut self, f: &Forwarded, msg: &Message<'_>, out: &mut Vec<Out>) {
        match msg {
            Message::Response(r) => {
                if matches!(f.method.as_str(), names::SESSION_NEW | SESSION_FORK) {
                    if let Some(s) = session_of(Some(&r.result)) {
                        if self.clients.contains_key(&f.client) {
                            self.forget_detached(&s);
                            self.sessions.insert(s, f.client);
                        }
                    }
                }
                if let Some(s) = &f.bound {
                    self.reattached(f.client, s, out);
                }
            }
            Message::Error(_) => {
                if let Some(s) = &f.bound {
                    if self.sessions.get(s) == Some(&f.client) {
                        self.sessions.remove(s);
                    }
                }
            }
            _ => {}
        }
    }

    /// Keeps `session` for a reattach, forgetting the oldest kept session
    /// (and what it missed) past the replay buffer's session limit.
    pub(super) fn detach(&mut self, session: String) {
        let Some(replay) = &mut self.replay else {
            return;
        };
        if self.detached.iter().any(|d| *d == session) {
            return;
        }
        while self.detached.len() >= replay.max_sessions() {
            let Some(old) = self.detached.pop_front() else {
                return;
            };
            replay.discard(&old);
        }
        self.detached.push_back(session);
    }

    /// Stops keeping `session`; whether it was kept.
    fn forget_detached(&mut self, session: &str) -> bool {
        let before = self.detached.len();
        self.detached.retain(|d| d != session);
        self.detached.len() != before
    }

    /// A `session/load` or `session/resume` of `session` succeeded: the
    /// client gets what the session missed, before the answer.
    fn reattached(&mut self, client: ClientId, session: &str, out: &mut Vec<Out>) {
        if !self.forget_detached(session) || !self.clients.contains_key(&client) {
            return;
        }
        let Some(replay) = &mut self.replay else {
            return;
        };
        let missed = replay.take(session);
        if missed.dropped.messages > 0 {
            let params = serde_json::json!({
                "sessionId": session,
                "droppedMessages": missed.dropped.messages,
                "droppedBytes": missed.dropped.bytes,
            });
            out.push(Out::Client {
                to: client,
                stream: Stream::Session(session.to_owned()),
                text: bridge_notification(REPLAY_DROPPED, params),
            });
        }
        for text in missed.messages {
            out.push(Out::Client {
                to: client,
                stream: Stream::Session(session.to_owned()),
                text,
            });
        }
    }

    /// Answers an agent request whose client is gone or unknown.
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
            let msg = format!("no client is connected for this {method} request");
            let _ = encode_error(
                id,
                &RpcError::new(ErrorCode::INTERNAL_ERROR, msg),
                &mut line,
            );
        }
        out.push(Out::Agent(line));
    }

    /// An agent line over the size limit: if it answers a client's request,
    /// that client gets an error instead of waiting forever.
    pub fn agent_line_too_long(&mut self, err: &FrameError, now: Duration, out: &mut Vec<Out>) {
        let FrameError::LineTooLong {
            id: Some(PeekedId::Number(n)),
            is_request: false,
            limit,
            seen,
        } = *err
        else {
            self.drop_one();
            return;
        };
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
        if let Some(c) = self.clients.get_mut(&f.client) {
            c.pending = c.pending.saturating_sub(1);
            let msg = format!("the agent's response of at least {seen} bytes exceeds the bridge's {limit}-byte limit");
            out.push(Out::Client {
                to: f.client,
                stream: answer_stream(&f.method, f.session.as_deref()),
                text: error_text(&f.id, ErrorCode::INTERNAL_ERROR, msg),
            });
        }
    }
}
