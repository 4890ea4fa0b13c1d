//! The bounds of a [`TurnView`](super::TurnView), with their defaults.

/// Default most tool calls tracked in one turn: 512.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 512;

/// Default budget for the bytes a turn's tool calls and permission requests
/// retain (ids, titles, names, content, locations, raw input and output,
/// permission options): 32 MiB.
pub const DEFAULT_MAX_TOOL_BYTES: usize = 32 * 1024 * 1024;

/// Default most messages and thoughts (distinct `messageId`s, plus one
/// message without id per kind) retained in one turn: 1,024.
pub const DEFAULT_MAX_MESSAGES: usize = 1024;

/// Default budget for the message and thought text (and message ids) one
/// turn retains: 8 MiB. The plan and the mode id are each retained only when
/// they fit in this many bytes too.
pub const DEFAULT_MAX_TEXT_BYTES: usize = 8 * 1024 * 1024;

/// Default most permission requests (pending or resolved) tracked in one
/// turn: 256.
pub const DEFAULT_MAX_PERMISSIONS: usize = 256;

/// The bounds of a [`TurnView`](super::TurnView): what one turn may make it
/// hold.
///
/// Every bound is per turn: [`TurnView::begin_turn`](super::TurnView::begin_turn)
/// frees the turn's messages, tool calls and permissions. What does not fit
/// is not retained, and each time something is dropped the push that caused
/// it reports a [`TurnEvent::Problem`](super::TurnEvent::Problem) carrying
/// [`TurnError::LimitExceeded`](crate::TurnError::LimitExceeded) with the
/// limit and the bytes or items dropped. Text deltas are still emitted in
/// full (they borrow from the notification, not from the view), so a UI that
/// renders events loses nothing; only the retained state is cut.
///
/// `#[non_exhaustive]`: build it from [`TurnLimits::default`] (or
/// [`TurnLimits::new`] in `const` contexts) and the `with_*` setters. Any
/// value is accepted (all arithmetic saturates); `0` turns retention of that
/// item off.
///
/// ```
/// use acp_codec::turn::{TurnLimits, DEFAULT_MAX_PERMISSIONS};
///
/// let limits = TurnLimits::default().with_max_tool_calls(64).with_max_text_bytes(1 << 20);
/// assert_eq!(limits.max_tool_calls, 64);
/// assert_eq!(limits.max_permissions, DEFAULT_MAX_PERMISSIONS);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TurnLimits {
    /// Most tool calls tracked in one turn. A tool call past it is not
    /// tracked (its later updates are reported as unknown). Default
    /// [`DEFAULT_MAX_TOOL_CALLS`].
    pub max_tool_calls: usize,
    /// Bytes retained by the turn's tool calls and permission requests.
    /// A field that does not fit is cleared (the newest value is dropped, the
    /// older one is outdated by it). Default [`DEFAULT_MAX_TOOL_BYTES`].
    pub max_tool_bytes: usize,
    /// Most messages and thoughts retained in one turn. Text for a message
    /// past it is emitted but not retained. Default [`DEFAULT_MAX_MESSAGES`].
    pub max_messages: usize,
    /// Bytes of message and thought text (and message ids) retained in one
    /// turn; a chunk that does not fit is cut at a character boundary.
    /// Default [`DEFAULT_MAX_TEXT_BYTES`].
    pub max_text_bytes: usize,
    /// Most permission requests (pending or resolved) tracked in one turn.
    /// Default [`DEFAULT_MAX_PERMISSIONS`].
    pub max_permissions: usize,
}

impl TurnLimits {
    /// The default limits, usable in `const` contexts.
    pub const fn new() -> Self {
        Self {
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            max_tool_bytes: DEFAULT_MAX_TOOL_BYTES,
            max_messages: DEFAULT_MAX_MESSAGES,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
            max_permissions: DEFAULT_MAX_PERMISSIONS,
        }
    }

    /// Sets [`TurnLimits::max_tool_calls`].
    pub const fn with_max_tool_calls(mut self, n: usize) -> Self {
        self.max_tool_calls = n;
        self
    }

    /// Sets [`TurnLimits::max_tool_bytes`].
    pub const fn with_max_tool_bytes(mut self, n: usize) -> Self {
        self.max_tool_bytes = n;
        self
    }

    /// Sets [`TurnLimits::max_messages`].
    pub const fn with_max_messages(mut self, n: usize) -> Self {
        self.max_messages = n;
        self
    }

    /// Sets [`TurnLimits::max_text_bytes`].
    pub const fn with_max_text_bytes(mut self, n: usize) -> Self {
        self.max_text_bytes = n;
        self
    }

    /// Sets [`TurnLimits::max_permissions`].
    pub const fn with_max_permissions(mut self, n: usize) -> Self {
        self.max_permissions = n;
        self
    }
}

impl Default for TurnLimits {
    fn default() -> Self {
        Self::new()
    }
}
