//! The output one connection holds for a client that has not read it yet.

use core::time::Duration;

use super::transport::{DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_OUTPUT_STALL};

/// Counts the bytes of output queued for one client connection (its event
/// streams, or its socket's unsent bytes), and when the client last took
/// some, to apply the transport's two output limits the way the SDK does:
///
/// - while [`is_full`](Self::is_full) (at least `max_bytes` queued), stop
///   reading the agent's output for this connection, and hold back the
///   client's own requests, so a client that does not read cannot make the
///   agent produce more;
/// - once [`is_stalled`](Self::is_stalled) (full, and nothing taken for
///   `max_stall`), close the connection (`1008` on a WebSocket): the client
///   is not coming back for it.
///
/// Time is the caller's (`now`, any epoch), as everywhere in the crate.
///
/// ```
/// use std::time::Duration;
/// use acp_codec::remote::Backlog;
///
/// let mut backlog = Backlog::new(100, Duration::from_secs(60));
/// let t0 = Duration::ZERO;
/// backlog.queued(60, t0);
/// assert!(!backlog.is_full());
/// backlog.queued(60, t0);
/// assert!(backlog.is_full());
/// assert!(!backlog.is_stalled(Duration::from_secs(59)));
/// assert!(backlog.is_stalled(Duration::from_secs(60)));
/// // The client reads one message: room again, and the stall clock restarts.
/// backlog.taken(60, Duration::from_secs(61));
/// assert!(!backlog.is_full());
/// assert_eq!(backlog.bytes(), 60);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backlog {
    max_bytes: usize,
    max_stall: Duration,
    bytes: usize,
    progress_at: Duration,
}

impl Default for Backlog {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_OUTPUT_STALL)
    }
}

impl Backlog {
    /// An empty backlog with the two limits (the SDK's defaults are
    /// [`DEFAULT_MAX_BUFFERED_BYTES`] and [`DEFAULT_MAX_OUTPUT_STALL`], as
    /// in [`Backlog::default`]).
    pub const fn new(max_bytes: usize, max_stall: Duration) -> Self {
        Self {
            max_bytes,
            max_stall,
            bytes: 0,
            progress_at: Duration::ZERO,
        }
    }

    /// `len` bytes were queued for the client at `now`. Becoming full
    /// starts the stall clock.
    pub fn queued(&mut self, len: usize, now: Duration) {
        let was_full = self.is_full();
        self.bytes = self.bytes.saturating_add(len);
        if !was_full && self.is_full() {
            self.progress_at = now;
        }
    }

    /// The client took `len` bytes at `now` (a message written to its
    /// stream or socket): progress, whatever the amount.
    pub fn taken(&mut self, len: usize, now: Duration) {
        self.bytes = self.bytes.saturating_sub(len);
        self.progress_at = now;
    }

    /// Bytes queued now.
    pub const fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether at least `max_bytes` are queued: take no more output for
    /// this client until it reads.
    pub const fn is_full(&self) -> bool {
        self.bytes >= self.max_bytes
    }

    /// Whether the backlog is full and the client took nothing for
    /// `max_stall` up to `now` (since it became full, or since its last
    /// take): close the connection.
    pub fn is_stalled(&self, now: Duration) -> bool {
        self.is_full() && now.saturating_sub(self.progress_at) >= self.max_stall
    }

    /// When [`is_stalled`](Self::is_stalled) becomes true if nothing is
    /// taken before (a timer to set), or `None` while not full.
    pub fn stall_deadline(&self) -> Option<Duration> {
        self.is_full()
            .then(|| self.progress_at.saturating_add(self.max_stall))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_clock_runs_only_while_full() {
        let s = Duration::from_secs;
        let mut b = Backlog::new(10, s(5));
        assert_eq!(b.stall_deadline(), None);
        b.queued(4, s(1));
        b.queued(6, s(3));
        // Full since 3 s: stalled 5 s later.
        assert_eq!(b.stall_deadline(), Some(s(8)));
        assert!(!b.is_stalled(s(7)) && b.is_stalled(s(8)));
        // A take while still full restarts the clock.
        b.queued(5, s(4));
        b.taken(1, s(7));
        assert_eq!(b.stall_deadline(), Some(s(12)));
        b.taken(5, s(9));
        assert!(!b.is_full() && !b.is_stalled(s(100)));
        // Taking more than was queued cannot underflow.
        b.taken(100, s(10));
        assert_eq!(b.bytes(), 0);
        assert_eq!(Backlog::default().max_bytes, DEFAULT_MAX_BUFFERED_BYTES);
    }
}
