//! The turn view's problems: reported as events, never as `Err`.

use core::fmt;

use crate::ErrorCode;

/// The limit of a [`TurnView`](crate::turn::TurnView) that was reached
/// (see [`TurnLimits`](crate::turn::TurnLimits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TurnLimit {
    /// [`TurnLimits::max_tool_calls`](crate::turn::TurnLimits::max_tool_calls): items are tool calls.
    ToolCalls,
    /// [`TurnLimits::max_tool_bytes`](crate::turn::TurnLimits::max_tool_bytes): items are bytes.
    ToolBytes,
    /// [`TurnLimits::max_messages`](crate::turn::TurnLimits::max_messages): items are messages.
    Messages,
    /// [`TurnLimits::max_text_bytes`](crate::turn::TurnLimits::max_text_bytes): items are bytes.
    TextBytes,
    /// [`TurnLimits::max_permissions`](crate::turn::TurnLimits::max_permissions): items are
    /// permission requests.
    Permissions,
}

impl TurnLimit {
    /// What the limit counts, for messages: `tool calls`, `bytes`, ….
    pub const fn unit(self) -> &'static str {
        match self {
            Self::ToolCalls => "tool calls",
            Self::ToolBytes | Self::TextBytes => "bytes",
            Self::Messages => "messages",
            Self::Permissions => "permission requests",
        }
    }

    /// The limit's name, as in [`TurnLimits`](crate::turn::TurnLimits).
    pub const fn name(self) -> &'static str {
        match self {
            Self::ToolCalls => "max_tool_calls",
            Self::ToolBytes => "max_tool_bytes",
            Self::Messages => "max_messages",
            Self::TextBytes => "max_text_bytes",
            Self::Permissions => "max_permissions",
        }
    }
}

/// Something a [`TurnView`](crate::turn::TurnView) was fed that does not fit
/// the turn: reported as an [`TurnEvent::Problem`](crate::turn::TurnEvent::Problem),
/// never fatal. The view stays usable; what each variant did with the input
/// is documented on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TurnError {
    /// A `tool_call_update` for a tool call id the turn does not track
    /// (never announced, from an earlier turn, or not tracked for a limit):
    /// the update was ignored.
    UnknownToolCall,
    /// A `tool_call` for an id the turn already tracks: it replaced the
    /// tool call's state whole.
    DuplicateToolCall,
    /// A turn update (message, thought, tool call, plan, permission request)
    /// after the turn's prompt response: it was applied all the same.
    AfterTurnEnd,
    /// A permission outcome for a request id with no pending permission
    /// request in the turn: ignored.
    UnknownPermission,
    /// A permission request whose id is already pending: it replaced the
    /// pending one.
    DuplicatePermission,
    /// A second prompt response for the turn: its stop reason replaced the
    /// first.
    AlreadyFinished,
    /// A limit was reached and something was not retained.
    LimitExceeded {
        /// Which limit.
        limit: TurnLimit,
        /// Its value.
        max: usize,
        /// How much was dropped, in [`TurnLimit::unit`]s.
        dropped: usize,
    },
}

impl TurnError {
    /// The JSON-RPC code for this error (for logs; the view answers nothing).
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::LimitExceeded { .. } => ErrorCode::INTERNAL_ERROR,
            _ => ErrorCode::INVALID_PARAMS,
        }
    }
}

impl fmt::Display for TurnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownToolCall => f.write_str("tool call update for an unknown tool call id"),
            Self::DuplicateToolCall => f.write_str("tool call announced twice"),
            Self::AfterTurnEnd => f.write_str("update after the end of the turn"),
            Self::UnknownPermission => f.write_str("permission outcome for no pending request"),
            Self::DuplicatePermission => f.write_str("permission request id already pending"),
            Self::AlreadyFinished => f.write_str("second prompt response for the turn"),
            Self::LimitExceeded {
                limit,
                max,
                dropped,
            } => write!(
                f,
                "{} of {max} reached: {dropped} {} dropped",
                limit.name(),
                limit.unit()
            ),
        }
    }
}

impl core::error::Error for TurnError {}
