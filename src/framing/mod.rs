//! Framing: newline-delimited lines in, one-line JSON out.
//!
//! [`LineSplitter`] finds lines in a caller-owned buffer fed in pieces of any
//! size, without allocating; [`encode_line`] writes one value as one line.
//!
//! The wire rules (ACP v1 transport, and what real peers do): UTF-8, one
//! message a line, delimited by `\n`. A trailing `\r` is stripped; blank and
//! whitespace-only lines are skipped; a line over
//! [`Limits::max_line_len`](crate::Limits::max_line_len) is reported once and
//! skipped; invalid UTF-8 is an error for that line only.

mod peek;
mod splitter;

#[cfg(feature = "alloc")]
mod encode;

pub use peek::PeekedId;
pub use splitter::{Decoded, Line, LineSplitter, Lines};

#[cfg(feature = "tokio-util")]
pub(crate) use encode::compact;
#[cfg(feature = "alloc")]
pub use encode::{encode_line, encode_raw_line};
