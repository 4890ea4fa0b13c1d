//! The stream-json layer's error: one line that is not an event.

use core::fmt;

use crate::ErrorCode;

/// An error decoding one stream-json line as an [`Event`](crate::stream_json::Event).
///
/// Nothing is kept from the bad line; the next line decodes normally.
#[derive(Debug)]
#[non_exhaustive]
pub enum EventError {
    /// The line is not a JSON object, or a field of a known event has the
    /// wrong JSON type.
    Json(serde_json::Error),
    /// A known event lacks a required field.
    MissingField {
        /// The event's `type` (`event` when `type` itself is missing).
        event: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field of a known event has a value outside its set (a `status`
    /// other than `success`/`error`, chunk `data` that is not a valid
    /// string).
    InvalidField {
        /// The event's `type`.
        event: &'static str,
        /// The field.
        field: &'static str,
    },
}

impl EventError {
    /// The JSON-RPC code to answer with.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Json(_) => ErrorCode::PARSE_ERROR,
            Self::MissingField { .. } | Self::InvalidField { .. } => ErrorCode::INVALID_PARAMS,
        }
    }
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(e) => write!(f, "not a stream-json event: {e}"),
            Self::MissingField { event, field } => {
                write!(f, "{event} event lacks the required field {field}")
            }
            Self::InvalidField { event, field } => {
                write!(f, "{event} event has an invalid {field}")
            }
        }
    }
}

impl core::error::Error for EventError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Json(e) => Some(e),
            _ => None,
        }
    }
}
