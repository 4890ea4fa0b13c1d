//! A sans-IO request tracker: ids for outgoing requests, the pending table,
//! deadlines from a caller-supplied `now`, responses matched per direction.

use alloc::borrow::{Cow, ToOwned};
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::vec::Vec;
use core::time::Duration;

use serde::Serialize;

use super::encode::{encode_error, encode_notification, encode_request, encode_response};
use super::id::RequestId;
use super::message::{Message, RpcError};
use super::methods::{NotificationParams, RequestParams};
use super::pending::RequestTable;
use super::session::{CancelNotification, CancelRequestNotification};
use super::TrackerError;
use crate::framing::EncodeError;

/// Default time a request may stay unanswered: 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Default most requests the peer may have waiting for our answer: 1,024.
pub const DEFAULT_MAX_PEER_PENDING: usize = 1024;

/// How many expired ids are remembered, to tell a late response from an
/// unknown one.
const REMEMBERED_EXPIRED: usize = 256;

/// A response matched to one of our requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completed {
    /// The request's id.
    pub id: RequestId<'static>,
    /// The request's method: decode the result with
    /// [`Response::typed`](super::Response::typed).
    pub method: Cow<'static, str>,
    /// Time from sending to the response, by the caller's clock.
    pub elapsed: Duration,
    /// Whether we had sent `$/cancel_request` for it.
    pub cancelled: bool,
}

/// One of our requests that reached its deadline unanswered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    /// The request's id.
    pub id: RequestId<'static>,
    /// The request's method.
    pub method: Cow<'static, str>,
    /// Its deadline.
    pub deadline: Duration,
}

#[derive(Debug, Clone)]
struct Pending {
    method: Cow<'static, str>,
    sent_at: Duration,
    deadline: Duration,
    cancelled: bool,
}

/// Tracks requests in both directions of one ACP connection, without I/O
/// and without a clock.
///
/// Time is a [`Duration`] since any epoch the caller picks (for example
/// `Instant::now() - start`), passed to every call that needs it. Our
/// requests get integer ids counting from 0; the peer numbers its own, so
/// its request 2 and our request 2 are different requests: responses match
/// only our table, requests only the peer's.
///
/// ```
/// use std::time::Duration;
/// use acp_codec::acp::{Message, RequestParams, SessionIdRequest, Tracker};
///
/// let mut tracker = Tracker::new();
/// let mut out = Vec::new();
/// let t0 = Duration::ZERO;
/// let params = RequestParams::CloseSession(SessionIdRequest::new("s1"));
/// let id = tracker.encode_request(&params, t0, &mut out).unwrap();
/// assert_eq!(id.to_string(), "0");
///
/// // The agent's own request 0 does not answer ours.
/// let theirs = Message::decode(r#"{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}"#).unwrap();
/// assert_eq!(tracker.handle(&theirs, t0).unwrap(), None);
/// assert_eq!(tracker.pending_len(), 1);
///
/// let reply = Message::decode(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#).unwrap();
/// let done = tracker.handle(&reply, Duration::from_millis(5)).unwrap().unwrap();
/// assert_eq!(done.method, "session/close");
/// assert!(tracker.handle(&reply, Duration::from_millis(6)).is_err()); // duplicate
///
/// // Nothing answered in time expires.
/// let id = tracker.start("session/prompt", t0);
/// assert_eq!(tracker.next_deadline(), Some(Duration::from_secs(30)));
/// assert!(tracker.poll_expired(Duration::from_secs(29)).is_none());
/// assert_eq!(tracker.poll_expired(Duration::from_secs(30)).unwrap().id, id);
/// ```
#[derive(Debug, Clone)]
pub struct Tracker {
    next_id: i64,
    default_timeout: Duration,
    ours: BTreeMap<i64, Pending>,
    deadlines: BTreeSet<(Duration, i64)>,
    expired: VecDeque<i64>,
    /// The peer's requests waiting for our answer (its limit is the
    /// table's).
    theirs: RequestTable,
}

impl Default for Tracker {
    fn default() -> Self {
        Self::new()
    }
}

impl Tracker {
    /// A tracker with the default timeout ([`DEFAULT_TIMEOUT`]) and peer
    /// limit ([`DEFAULT_MAX_PEER_PENDING`]).
    pub const fn new() -> Self {
        Self {
            next_id: 0,
            default_timeout: DEFAULT_TIMEOUT,
            ours: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            expired: VecDeque::new(),
            theirs: RequestTable::new(DEFAULT_MAX_PEER_PENDING),
        }
    }

    /// Sets the timeout of requests started without one.
    #[must_use]
    pub const fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets how many requests the peer may have waiting for our answer.
    #[must_use]
    pub const fn with_max_peer_pending(mut self, limit: usize) -> Self {
        self.theirs.set_max(limit);
        self
    }

    /// Registers a request we are about to send, with the default timeout;
    /// returns its id.
    pub fn start(&mut self, method: &str, now: Duration) -> RequestId<'static> {
        self.start_with_timeout(method, now, self.default_timeout)
    }

    /// Registers a request we are about to send, expiring `timeout` after
    /// `now`; returns its id.
    pub fn start_with_timeout(
        &mut self,
        method: &str,
        now: Duration,
        timeout: Duration,
    ) -> RequestId<'static> {
        let id = self.next_id;
        self.next_id = self.next_id.checked_add(1).unwrap_or(0);
        let deadline = now.saturating_add(timeout);
        self.ours.insert(
            id,
            Pending {
                method: Cow::Owned(method.to_owned()),
                sent_at: now,
                deadline,
                cancelled: false,
            },
        );
        self.deadlines.insert((deadline, id));
        RequestId::Number(id)
    }

    /// Encodes `params` as our next request and registers it with the
    /// default timeout; returns its id.
    ///
    /// # Errors
    ///
    /// [`TrackerError::Encode`] if encoding fails; then nothing is
    /// registered and `out` is unchanged.
    pub fn encode_request(
        &mut self,
        params: &RequestParams<'_>,
        now: Duration,
        out: &mut Vec<u8>,
    ) -> Result<RequestId<'static>, TrackerError> {
        self.encode_request_with_timeout(params, now, self.default_timeout, out)
    }

    /// [`Tracker::encode_request`] with a timeout for this request.
    ///
    /// # Errors
    ///
    /// As [`Tracker::encode_request`].
    pub fn encode_request_with_timeout(
        &mut self,
        params: &RequestParams<'_>,
        now: Duration,
        timeout: Duration,
        out: &mut Vec<u8>,
    ) -> Result<RequestId<'static>, TrackerError> {
        let id = RequestId::Number(self.next_id);
        encode_request(&id, params, out)?;
        Ok(self.start_with_timeout(params.method(), now, timeout))
    }

    /// Feeds a decoded message: a response or error is matched against our
    /// requests (`Some` when it completes one), a request is recorded as
    /// waiting for our answer, a notification changes nothing.
    ///
    /// # Errors
    ///
    /// [`TrackerError::UnknownResponse`], [`TrackerError::DuplicateResponse`]
    /// and [`TrackerError::LateResponse`] for responses that match nothing
    /// pending; [`TrackerError::DuplicateRequest`] and
    /// [`TrackerError::TooManyPending`] for peer requests. The table is
    /// unchanged by an error.
    pub fn handle(
        &mut self,
        msg: &Message<'_>,
        now: Duration,
    ) -> Result<Option<Completed>, TrackerError> {
        match msg {
            Message::Response(r) => self.handle_response(&r.id, now).map(Some),
            Message::Error(e) => self.handle_response(&e.id, now).map(Some),
            Message::Request(r) => self.handle_peer_request(&r.id, &r.method).map(|()| None),
            Message::Notification(_) => Ok(None),
        }
    }

    /// Matches a response (or error response) id against our requests.
    ///
    /// # Errors
    ///
    /// As [`Tracker::handle`] for responses.
    pub fn handle_response(
        &mut self,
        id: &RequestId<'_>,
        now: Duration,
    ) -> Result<Completed, TrackerError> {
        let n = match id {
            RequestId::Number(n) => *n,
            other => {
                return Err(TrackerError::UnknownResponse {
                    id: other.to_owned_id(),
                })
            }
        };
        if let Some(p) = self.ours.remove(&n) {
            self.deadlines.remove(&(p.deadline, n));
            return Ok(Completed {
                id: RequestId::Number(n),
                method: p.method,
                elapsed: now.saturating_sub(p.sent_at),
                cancelled: p.cancelled,
            });
        }
        let id = RequestId::Number(n);
        if let Some(pos) = self.expired.iter().position(|&e| e == n) {
            self.expired.remove(pos);
            return Err(TrackerError::LateResponse { id });
        }
        if (0..self.next_id).contains(&n) {
            Err(TrackerError::DuplicateResponse { id })
        } else {
            Err(TrackerError::UnknownResponse { id })
        }
    }

    /// Records a request from the peer, waiting for our answer.
    ///
    /// # Errors
    ///
    /// [`TrackerError::DuplicateRequest`] if the peer already has a request
    /// with this id pending; [`TrackerError::TooManyPending`] past the limit.
    ///
    /// ```
    /// use acp_codec::acp::{Message, ReadTextFileResponse, Tracker};
    ///
    /// let mut tracker = Tracker::new().with_max_peer_pending(1);
    /// let line = r#"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#;
    /// let Message::Request(req) = Message::decode(line)? else { unreachable!() };
    /// tracker.handle_peer_request(&req.id, &req.method)?;
    /// // The same id again while pending, or one request too many: refused.
    /// assert!(tracker.handle_peer_request(&req.id, &req.method).is_err());
    /// assert_eq!(tracker.peer_pending_len(), 1);
    ///
    /// // Answering it clears it; a second answer is refused.
    /// let mut out = Vec::new();
    /// let result = ReadTextFileResponse::new("hello");
    /// tracker.encode_response(&req.id, &result, &mut out)?;
    /// assert_eq!(tracker.peer_pending_len(), 0);
    /// assert!(tracker.encode_response(&req.id, &result, &mut out).is_err());
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    pub fn handle_peer_request(
        &mut self,
        id: &RequestId<'_>,
        method: &str,
    ) -> Result<(), TrackerError> {
        self.theirs.insert(id, method)
    }

    /// Marks the peer's request `id` answered; returns its method.
    ///
    /// # Errors
    ///
    /// [`TrackerError::NotPending`] if no peer request has this id.
    pub fn finish_peer_request(
        &mut self,
        id: &RequestId<'_>,
    ) -> Result<Cow<'static, str>, TrackerError> {
        self.theirs
            .remove(id)
            .ok_or_else(|| TrackerError::NotPending {
                id: id.to_owned_id(),
            })
    }

    /// Encodes our answer to the peer's request `id` and marks it answered.
    ///
    /// # Errors
    ///
    /// [`TrackerError::NotPending`] if no peer request has this id (nothing
    /// is written); [`TrackerError::Encode`] if encoding fails (the request
    /// stays pending).
    pub fn encode_response<R: Serialize + ?Sized>(
        &mut self,
        id: &RequestId<'_>,
        result: &R,
        out: &mut Vec<u8>,
    ) -> Result<usize, TrackerError> {
        if !self.theirs.contains(id) {
            return Err(TrackerError::NotPending {
                id: id.to_owned_id(),
            });
        }
        let n = encode_response(id, result, out)?;
        self.theirs.remove(id);
        Ok(n)
    }

    /// Encodes an error answer to the peer's request `id` and marks it
    /// answered.
    ///
    /// # Errors
    ///
    /// As [`Tracker::encode_response`].
    pub fn encode_error(
        &mut self,
        id: &RequestId<'_>,
        error: &RpcError<'_>,
        out: &mut Vec<u8>,
    ) -> Result<usize, TrackerError> {
        if !self.theirs.contains(id) {
            return Err(TrackerError::NotPending {
                id: id.to_owned_id(),
            });
        }
        let n = encode_error(id, error, out)?;
        self.theirs.remove(id);
        Ok(n)
    }

    /// The earliest deadline of our pending requests: when to call
    /// [`Tracker::poll_expired`] next.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.deadlines.first().map(|&(d, _)| d)
    }

    /// Removes and returns one of our requests whose deadline is at or
    /// before `now`, earliest first; call until `None`. A response that
    /// arrives for it later is reported as
    /// [`TrackerError::LateResponse`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use acp_codec::acp::{Message, Tracker};
    /// use acp_codec::TrackerError;
    ///
    /// let secs = Duration::from_secs;
    /// let mut tracker = Tracker::new().with_default_timeout(secs(10));
    /// let slow = tracker.start("session/new", secs(0));
    /// let quick = tracker.start_with_timeout("session/set_mode", secs(0), secs(2));
    /// // Sleep until the next deadline (the caller's timer), then poll.
    /// assert_eq!(tracker.next_deadline(), Some(secs(2)));
    /// assert_eq!(tracker.poll_expired(secs(5)).unwrap().id, quick);
    /// assert!(tracker.poll_expired(secs(5)).is_none());
    /// assert_eq!(tracker.next_deadline(), Some(secs(10)));
    ///
    /// // The answer that comes after all is reported as late.
    /// let late = Message::decode(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)?;
    /// assert!(matches!(tracker.handle(&late, secs(6)), Err(TrackerError::LateResponse { .. })));
    /// assert_eq!(tracker.poll_expired(secs(10)).unwrap().id, slow);
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    pub fn poll_expired(&mut self, now: Duration) -> Option<Expired> {
        let &(deadline, n) = self.deadlines.first()?;
        if deadline > now {
            return None;
        }
        self.deadlines.remove(&(deadline, n));
        let p = self.ours.remove(&n)?;
        if self.expired.len() >= REMEMBERED_EXPIRED {
            self.expired.pop_front();
        }
        self.expired.push_back(n);
        Some(Expired {
            id: RequestId::Number(n),
            method: p.method,
            deadline,
        })
    }

    /// Encodes `$/cancel_request` for our pending request `id` and marks it
    /// cancelled. It stays pending: the peer still answers it (with a result
    /// or error `-32800`).
    ///
    /// # Errors
    ///
    /// [`TrackerError::NotPending`] if `id` is not one of our pending
    /// requests; [`TrackerError::Encode`] if encoding fails.
    ///
    /// ```
    /// use std::time::Duration;
    /// use acp_codec::acp::{Message, Tracker};
    ///
    /// let mut tracker = Tracker::new();
    /// let id = tracker.start("terminal/wait_for_exit", Duration::ZERO);
    /// let mut out = Vec::new();
    /// tracker.cancel(&id, &mut out)?;
    /// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":0}}\n");
    ///
    /// // The peer still answers, typically with -32800; the match says it was cancelled.
    /// let reply = Message::decode(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32800,"message":"cancelled"}}"#)?;
    /// assert!(tracker.handle(&reply, Duration::from_secs(1))?.unwrap().cancelled);
    /// # Ok::<(), acp_codec::Error>(())
    /// ```
    pub fn cancel(&mut self, id: &RequestId<'_>, out: &mut Vec<u8>) -> Result<usize, TrackerError> {
        let pending = match id {
            RequestId::Number(n) => self.ours.get_mut(n),
            _ => None,
        };
        let Some(pending) = pending else {
            return Err(TrackerError::NotPending {
                id: id.to_owned_id(),
            });
        };
        let params = NotificationParams::CancelRequest(CancelRequestNotification {
            request_id: id.clone(),
            meta: None,
            extra: crate::acp::Extra::new(),
        });
        let n = encode_notification(&params, out)?;
        pending.cancelled = true;
        Ok(n)
    }

    /// Encodes `session/cancel` for a session (the prompt turn then ends
    /// with stop reason `cancelled`; its request stays pending until then).
    ///
    /// # Errors
    ///
    /// [`EncodeError`] if encoding fails.
    pub fn cancel_session(
        &self,
        session_id: &str,
        out: &mut Vec<u8>,
    ) -> Result<usize, EncodeError> {
        let params = NotificationParams::Cancel(CancelNotification::new(session_id));
        encode_notification(&params, out)
    }

    /// The method of our pending request `id`.
    pub fn method_of(&self, id: &RequestId<'_>) -> Option<&str> {
        match id {
            RequestId::Number(n) => self.ours.get(n).map(|p| &*p.method),
            _ => None,
        }
    }

    /// How many of our requests wait for a response.
    pub fn pending_len(&self) -> usize {
        self.ours.len()
    }

    /// How many peer requests wait for our answer.
    pub fn peer_pending_len(&self) -> usize {
        self.theirs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_from_zero_and_match_once() {
        let mut t = Tracker::new();
        let a = t.start("x", Duration::ZERO);
        let b = t.start("y", Duration::ZERO);
        assert_eq!(
            (a.clone(), b.clone()),
            (RequestId::Number(0), RequestId::Number(1))
        );
        assert_eq!(
            t.handle_response(&b, Duration::from_secs(1))
                .unwrap()
                .method,
            "y"
        );
        assert!(matches!(
            t.handle_response(&b, Duration::ZERO),
            Err(TrackerError::DuplicateResponse { .. })
        ));
        assert!(matches!(
            t.handle_response(&RequestId::Number(9), Duration::ZERO),
            Err(TrackerError::UnknownResponse { .. })
        ));
        assert!(matches!(
            t.handle_response(&RequestId::from("0"), Duration::ZERO),
            Err(TrackerError::UnknownResponse { .. })
        ));
        assert_eq!(t.pending_len(), 1);
    }
}
