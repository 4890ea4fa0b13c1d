//! Requests paired with their responses for a program that sits between
//! the two sides of a connection (a tap, a proxy, a relay) and sees both
//! directions, answering nothing itself.

use alloc::borrow::Cow;

use super::id::RequestId;
use super::line::{Decoding, Incoming};
use super::message::Message;
use super::pending::RequestTable;
use super::tracker::DEFAULT_MAX_PEER_PENDING;
use super::wire::Mode;
use super::TrackerError;

/// The side of a connection that sent a line, for an [`Observer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The client (the editor).
    Client,
    /// The agent.
    Agent,
}

impl Side {
    /// The other side: the one a line from this side goes to.
    pub const fn other(self) -> Self {
        match self {
            Self::Client => Self::Agent,
            Self::Agent => Self::Client,
        }
    }
}

/// A response paired with the request it answers, by an [`Observer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paired {
    /// The id both carry.
    pub id: RequestId<'static>,
    /// The request's method.
    pub method: Cow<'static, str>,
}

/// Pairs requests with their responses in both directions of one ACP
/// connection, for a program that watches or relays it (a tap, a proxy)
/// rather than being one of its ends. Sans-IO: it sees the lines its
/// caller decodes.
///
/// Each side numbers its own requests, so the client's request 3 and the
/// agent's request 3 are different requests: the observer keeps a table
/// per side, and a response from one side is paired with a request from
/// the other. It is the same table a [`Tracker`](super::Tracker) keeps of
/// its peer's requests, and the same one-pass decoding: pass
/// [`decoding`](Self::decoding) to [`decode_line`](super::decode_line),
/// and a response to a recorded request comes back with its result typed
/// by that request's method ([`Incoming::Response`]); then
/// [`handle`](Self::handle) records the request, or pairs and removes it.
///
/// ```
/// use acp_codec::acp::{decode_line, Incoming, Mode, Observer, ResponseResult, Side, StopReason};
///
/// let mut observer = Observer::new();
/// // The editor asks; the agent answers.
/// let prompt = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#;
/// let msg = decode_line(prompt, observer.decoding(Side::Client, Mode::Lenient))?;
/// assert_eq!(observer.handle(Side::Client, &msg)?, None);
///
/// let answer = r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#;
/// let msg = decode_line(answer, observer.decoding(Side::Agent, Mode::Lenient))?;
/// let Incoming::Response { result, .. } = &msg else { unreachable!() };
/// let ResponseResult::Prompt(done) = &result.value else { unreachable!() };
/// assert_eq!(done.stop_reason, StopReason::EndTurn);
/// let paired = observer.handle(Side::Agent, &msg)?.unwrap();
/// assert_eq!((paired.id.to_string(), &*paired.method), ("3".to_owned(), "session/prompt"));
/// assert_eq!(observer.pending_len(Side::Client), 0);
/// # Ok::<(), acp_codec::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Observer {
    /// The client's requests, waiting for the agent's answer.
    client: RequestTable,
    /// The agent's requests, waiting for the client's answer.
    agent: RequestTable,
}

impl Default for Observer {
    fn default() -> Self {
        Self::new()
    }
}

impl Observer {
    /// An observer holding at most
    /// [`DEFAULT_MAX_PEER_PENDING`](super::DEFAULT_MAX_PEER_PENDING)
    /// (1,024) requests waiting per side.
    pub const fn new() -> Self {
        Self {
            client: RequestTable::new(DEFAULT_MAX_PEER_PENDING),
            agent: RequestTable::new(DEFAULT_MAX_PEER_PENDING),
        }
    }

    /// Sets the most requests waiting per side; past it a request is
    /// refused ([`TrackerError::TooManyPending`]) and its response will
    /// not be paired.
    #[must_use]
    pub const fn with_max_pending(mut self, limit: usize) -> Self {
        self.client.set_max(limit);
        self.agent.set_max(limit);
        self
    }

    /// How [`decode_line`](super::decode_line) reads a line sent by
    /// `from`: in `mode`, a response typed by the method of the request it
    /// answers, when this observer has it waiting.
    pub const fn decoding(&self, from: Side, mode: Mode) -> Decoding<'_> {
        Decoding::new(mode).with_table(self.table(from.other()))
    }

    /// Feeds a line sent by `from`, as [`decode_line`](super::decode_line)
    /// gave it: a request is recorded, a response or error response is
    /// paired with the other side's request (`Some`) and that request
    /// removed; a notification changes nothing.
    ///
    /// # Errors
    ///
    /// [`TrackerError::DuplicateRequest`] for a request whose id its side
    /// has waiting, [`TrackerError::TooManyPending`] past the limit,
    /// [`TrackerError::UnknownResponse`] for a response to no waiting
    /// request. The tables are unchanged by an error: the line itself is
    /// for the caller to pass on or not.
    pub fn handle(
        &mut self,
        from: Side,
        incoming: &Incoming<'_>,
    ) -> Result<Option<Paired>, TrackerError> {
        match incoming {
            Incoming::Notification(_) => Ok(None),
            Incoming::Request { request, .. } => self
                .table_mut(from)
                .insert(&request.id, &request.method)
                .map(|()| None),
            Incoming::Response { response, .. } => self.pair(from, &response.id).map(Some),
            Incoming::Message(msg) => self.handle_message(from, msg),
        }
    }

    /// [`handle`](Self::handle) for a message decoded with
    /// [`Message::decode`].
    ///
    /// # Errors
    ///
    /// As [`handle`](Self::handle).
    pub fn handle_message(
        &mut self,
        from: Side,
        msg: &Message<'_>,
    ) -> Result<Option<Paired>, TrackerError> {
        match msg {
            Message::Request(r) => self.table_mut(from).insert(&r.id, &r.method).map(|()| None),
            Message::Response(r) => self.pair(from, &r.id).map(Some),
            Message::Error(e) => self.pair(from, &e.id).map(Some),
            Message::Notification(_) => Ok(None),
        }
    }

    /// The method of the request a response from `from` with this id
    /// answers, when it is waiting.
    pub fn method_of(&self, from: Side, id: &RequestId<'_>) -> Option<&str> {
        self.table(from.other()).method_of(id)
    }

    /// How many requests sent by `side` wait for an answer.
    pub fn pending_len(&self, side: Side) -> usize {
        self.table(side).len()
    }

    /// The response from `from` pairs with the other side's request.
    fn pair(&mut self, from: Side, id: &RequestId<'_>) -> Result<Paired, TrackerError> {
        match self.table_mut(from.other()).remove(id) {
            Some(method) => Ok(Paired {
                id: id.to_owned_id(),
                method,
            }),
            None => Err(TrackerError::UnknownResponse {
                id: id.to_owned_id(),
            }),
        }
    }

    /// The requests `side` sent.
    pub(crate) const fn table(&self, side: Side) -> &RequestTable {
        match side {
            Side::Client => &self.client,
            Side::Agent => &self.agent,
        }
    }

    fn table_mut(&mut self, side: Side) -> &mut RequestTable {
        match side {
            Side::Client => &mut self.client,
            Side::Agent => &mut self.agent,
        }
    }
}
