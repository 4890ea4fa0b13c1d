//! The one position rule of the client: per stream, what was handed over
//! last, whether a message at a position is new, seen, or past a hole,
//! and where a reopened stream resumes from.

use alloc::borrow::ToOwned;
use alloc::collections::BTreeMap;
use alloc::string::String;

use crate::remote::Position;

/// What a message at a position on a stream is to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// New: hand it over (the stream's last position is now its own).
    New,
    /// At or before the stream's last position: handed over already
    /// (a replay overlapping what arrived, or a resend); drop it.
    Seen,
    /// More than one past the stream's last position on a stream that
    /// has no holes: messages between were lost (never a silent loss).
    /// The stream's position is left as it was.
    Gap {
        /// The stream's last position.
        last: Position,
    },
}

/// The last position handed over on each stream of a connection: a
/// session's (`Some(id)`) or the connection's own (`None`).
///
/// The positions come from the server's stamps on WebSocket
/// ([`unstamp`](crate::remote::unstamp)) and from each SSE event's `id:`
/// on Streamable HTTP; the rule is the same ([`push`](Self::push)). A
/// stream reopened after a break asks for what follows
/// [`resume_from`](Self::resume_from) (SSE's `Last-Event-ID`).
///
/// ```
/// use acp_codec::remote::{Delivery, Position, StreamPositions};
///
/// let mut streams = StreamPositions::default();
/// // The first message of a stream may come at any position.
/// assert_eq!(streams.push(Some("s1"), Position(4), true), Delivery::New);
/// assert_eq!(streams.push(Some("s1"), Position(4), true), Delivery::Seen);
/// assert_eq!(streams.push(Some("s1"), Position(5), true), Delivery::New);
/// assert_eq!(
///     streams.push(Some("s1"), Position(7), true),
///     Delivery::Gap { last: Position(5) }
/// );
/// // Reopening the stream: `Last-Event-ID: 5`; another stream from the start.
/// assert_eq!(streams.resume_from(Some("s1")), Position(5));
/// assert_eq!(streams.resume_from(None), Position::START);
/// ```
#[derive(Debug, Clone, Default)]
pub struct StreamPositions {
    last: BTreeMap<Option<String>, Position>,
}

impl StreamPositions {
    /// A message at `position` on `stream` arrived. `contiguous`: the
    /// stream has no holes, so a jump is a [`Delivery::Gap`] (a session's
    /// stream on WebSocket); otherwise a jump is taken as it is (an SSE
    /// stream, whose server refuses a reopened stream it cannot continue).
    pub fn push(&mut self, stream: Option<&str>, position: Position, contiguous: bool) -> Delivery {
        let key = stream.map(ToOwned::to_owned);
        match self.last.get_mut(&key) {
            Some(last) if position <= *last => Delivery::Seen,
            Some(last) if contiguous && position.0 > last.0.saturating_add(1) => {
                Delivery::Gap { last: *last }
            }
            Some(last) => {
                *last = position;
                Delivery::New
            }
            None => {
                self.last.insert(key, position);
                Delivery::New
            }
        }
    }

    /// The last position handed over on `stream`, if any.
    pub fn last(&self, stream: Option<&str>) -> Option<Position> {
        self.last.get(&stream.map(ToOwned::to_owned)).copied()
    }

    /// Where `stream` resumes: its last position, [`Position::START`]
    /// before its first message (what a reopened SSE stream sends as
    /// `Last-Event-ID`, and a cursor names).
    pub fn resume_from(&self, stream: Option<&str>) -> Position {
        self.last(stream).unwrap_or(Position::START)
    }

    /// Whether no stream has a position yet.
    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }

    /// Forgets every position (a new connection whose positions start
    /// again).
    pub fn clear(&mut self) {
        self.last.clear();
    }
}
