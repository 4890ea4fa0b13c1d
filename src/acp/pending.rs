//! The table of requests waiting for an answer, by id: what a
//! [`Tracker`](super::Tracker) keeps of its peer's requests and an
//! [`Observer`](super::Observer) keeps of each side's, and what
//! [`Decoding`](super::Decoding) reads to type a response's result by the
//! method of the request it answers.

use alloc::borrow::{Cow, ToOwned};
use alloc::collections::BTreeMap;

use super::id::RequestId;
use super::TrackerError;

/// Requests waiting for an answer: id to method, bounded.
#[derive(Debug, Clone)]
pub(crate) struct RequestTable {
    requests: BTreeMap<RequestId<'static>, Cow<'static, str>>,
    max: usize,
}

impl RequestTable {
    /// An empty table that holds at most `max` requests.
    pub(crate) const fn new(max: usize) -> Self {
        Self {
            requests: BTreeMap::new(),
            max,
        }
    }

    /// Sets the most requests held.
    pub(crate) const fn set_max(&mut self, max: usize) {
        self.max = max;
    }

    /// Records a request.
    ///
    /// # Errors
    ///
    /// [`TrackerError::DuplicateRequest`] if a request with this id is
    /// waiting; [`TrackerError::TooManyPending`] when the table is full.
    /// Either leaves the table as it was.
    pub(crate) fn insert(&mut self, id: &RequestId<'_>, method: &str) -> Result<(), TrackerError> {
        let id = id.to_owned_id();
        if self.requests.contains_key(&id) {
            return Err(TrackerError::DuplicateRequest { id });
        }
        if self.requests.len() >= self.max {
            return Err(TrackerError::TooManyPending { limit: self.max });
        }
        self.requests.insert(id, Cow::Owned(method.to_owned()));
        Ok(())
    }

    /// Removes the request `id`; its method.
    pub(crate) fn remove(&mut self, id: &RequestId<'_>) -> Option<Cow<'static, str>> {
        self.requests.remove(&id.to_owned_id())
    }

    /// Whether the request `id` is waiting.
    pub(crate) fn contains(&self, id: &RequestId<'_>) -> bool {
        self.requests.contains_key(&id.to_owned_id())
    }

    /// The method of the request `id`, when it is waiting.
    pub(crate) fn method_of(&self, id: &RequestId<'_>) -> Option<&str> {
        self.requests.get(&id.to_owned_id()).map(|m| &**m)
    }

    /// How many requests are waiting.
    pub(crate) fn len(&self) -> usize {
        self.requests.len()
    }
}
