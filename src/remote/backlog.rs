//! The output one connection holds for a client that has not read it yet.

use core::fmt;
use core::time::Duration;

use super::transport::{DEFAULT_MAX_BACKLOG_BYTES, DEFAULT_MAX_OUTPUT_STALL};

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
/// So are the byte counts: the bytes taken must have been queued, and a
/// count that does not balance is the caller's bookkeeping bug, refused
/// with a [`BacklogError`] that leaves the backlog as it was (never
/// clamped to zero, which would hide it).
///
/// ```
/// use std::time::Duration;
/// use acp_codec::remote::Backlog;
///
/// let mut backlog = Backlog::new(100, Duration::from_secs(60));
/// let t0 = Duration::ZERO;
/// backlog.queued(60, t0)?;
/// assert!(!backlog.is_full());
/// backlog.queued(60, t0)?;
/// assert!(backlog.is_full());
/// assert!(!backlog.is_stalled(Duration::from_secs(59)));
/// assert!(backlog.is_stalled(Duration::from_secs(60)));
/// // The client reads one message: room again, and the stall clock restarts.
/// backlog.taken(60, Duration::from_secs(61))?;
/// assert!(!backlog.is_full());
/// assert_eq!(backlog.bytes(), 60);
/// // More than is queued: a bookkeeping bug, refused.
/// let err = backlog.taken(61, Duration::from_secs(62)).unwrap_err();
/// assert_eq!(err.to_string(), "61 bytes taken from a backlog of 60 bytes");
/// assert_eq!(backlog.bytes(), 60);
/// # Ok::<(), acp_codec::remote::BacklogError>(())
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
        Self::new(DEFAULT_MAX_BACKLOG_BYTES, DEFAULT_MAX_OUTPUT_STALL)
    }
}

impl Backlog {
    /// An empty backlog with the two limits (the SDK's defaults are
    /// [`DEFAULT_MAX_BACKLOG_BYTES`] and [`DEFAULT_MAX_OUTPUT_STALL`], as
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
    ///
    /// # Errors
    ///
    /// [`BacklogError::Overflow`] when the count would pass `usize::MAX`
    /// (bytes that cannot all be held); the backlog is left as it was.
    pub fn queued(&mut self, len: usize, now: Duration) -> Result<(), BacklogError> {
        let was_full = self.is_full();
        self.bytes = self.bytes.checked_add(len).ok_or(BacklogError::Overflow {
            queued: self.bytes,
            len,
        })?;
        if !was_full && self.is_full() {
            self.progress_at = now;
        }
        Ok(())
    }

    /// The client took `len` bytes at `now` (a message written to its
    /// stream or socket): progress, whatever the amount.
    ///
    /// # Errors
    ///
    /// [`BacklogError::TakenMoreThanQueued`] when `len` is more than is
    /// queued; the backlog is left as it was.
    pub fn taken(&mut self, len: usize, now: Duration) -> Result<(), BacklogError> {
        self.bytes = self
            .bytes
            .checked_sub(len)
            .ok_or(BacklogError::TakenMoreThanQueued {
                taken: len,
                queued: self.bytes,
            })?;
        self.progress_at = now;
        Ok(())
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

/// A byte count reported to a [`Backlog`] that does not balance: the
/// caller's bookkeeping is wrong. The backlog is left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BacklogError {
    /// More bytes taken than are queued.
    TakenMoreThanQueued {
        /// Bytes reported taken.
        taken: usize,
        /// Bytes queued.
        queued: usize,
    },
    /// More bytes queued than a `usize` counts.
    Overflow {
        /// Bytes queued before.
        queued: usize,
        /// Bytes reported queued.
        len: usize,
    },
}

impl fmt::Display for BacklogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TakenMoreThanQueued { taken, queued } => {
                write!(f, "{taken} bytes taken from a backlog of {queued} bytes")
            }
            Self::Overflow { queued, len } => write!(
                f,
                "{len} bytes queued on a backlog of {queued} bytes overflow its count"
            ),
        }
    }
}

impl core::error::Error for BacklogError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_clock_runs_only_while_full() {
        let s = Duration::from_secs;
        let mut b = Backlog::new(10, s(5));
        assert_eq!(b.stall_deadline(), None);
        b.queued(4, s(1)).unwrap();
        b.queued(6, s(3)).unwrap();
        // Full since 3 s: stalled 5 s later.
        assert_eq!(b.stall_deadline(), Some(s(8)));
        assert!(!b.is_stalled(s(7)) && b.is_stalled(s(8)));
        // A take while still full restarts the clock.
        b.queued(5, s(4)).unwrap();
        b.taken(1, s(7)).unwrap();
        assert_eq!(b.stall_deadline(), Some(s(12)));
        b.taken(5, s(9)).unwrap();
        assert!(!b.is_full() && !b.is_stalled(s(100)));
        assert_eq!(Backlog::default().max_bytes, DEFAULT_MAX_BACKLOG_BYTES);
    }

    /// Counts that do not balance are refused, not clamped: the backlog
    /// keeps its bytes and its stall clock.
    #[test]
    fn unbalanced_counts_are_errors() {
        let s = Duration::from_secs;
        let mut b = Backlog::new(10, s(5));
        b.queued(12, s(1)).unwrap();
        assert_eq!(
            b.taken(13, s(2)),
            Err(BacklogError::TakenMoreThanQueued {
                taken: 13,
                queued: 12
            })
        );
        assert_eq!((b.bytes(), b.stall_deadline()), (12, Some(s(6))));
        assert_eq!(
            b.queued(usize::MAX, s(3)),
            Err(BacklogError::Overflow {
                queued: 12,
                len: usize::MAX
            })
        );
        assert_eq!((b.bytes(), b.stall_deadline()), (12, Some(s(6))));
        b.taken(12, s(4)).unwrap();
        assert_eq!(b.bytes(), 0);
    }
}
