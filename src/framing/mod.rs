//! Framing: newline-delimited lines in, one-line JSON out.
//!
//! [`LineSplitter`] finds lines in a caller-owned buffer fed in pieces of any
//! size, without allocating, and hands them out as checked text;
//! [`encode_line`] writes one value as one line. For relays,
//! [`RawLineSplitter`] splits without changing anything: every byte comes
//! back in [`RawItem`]s, lines with their terminators, so writing the items
//! out gives back the input. The two share one scan: the same limit, the
//! same recovery after an oversized line.
//!
//! The wire rules (ACP v1 transport, and what real peers do): UTF-8, one
//! message a line, delimited by `\n`. A trailing `\r` is stripped; blank and
//! whitespace-only lines are skipped; a line over
//! [`Limits::max_line_len`](crate::Limits::max_line_len) is reported once and
//! skipped; invalid UTF-8 is an error for that line only.
//!
//! The [crate docs](crate#the-driving-loop) show the full read loop. A round
//! trip: whatever the value holds, it goes out as one line and comes back
//! as one line.
//!
//! ```
//! use acp_codec::{encode_line, LineSplitter};
//!
//! let mut wire = Vec::new();
//! encode_line(&serde_json::json!({"text": "two\nlines", "n": 1}), &mut wire)?;
//! encode_line(&serde_json::json!({"n": 2}), &mut wire)?;
//! let mut splitter = LineSplitter::new();
//! let lines: Vec<_> = splitter.lines(&wire).map(|l| l.unwrap().as_str()).collect();
//! assert_eq!(lines, [r#"{"n":1,"text":"two\nlines"}"#, r#"{"n":2}"#]);
//! # Ok::<(), acp_codec::EncodeError>(())
//! ```

mod error;
pub(crate) mod peek;
mod splitter;

#[cfg(feature = "alloc")]
mod encode;
#[cfg(feature = "alloc")]
mod text;

#[cfg(feature = "alloc")]
pub use error::EncodeError;
pub use error::{FrameError, LineTooLong};
pub use peek::PeekedId;
#[cfg(feature = "bytes")]
#[cfg_attr(docsrs, doc(cfg(feature = "bytes")))]
pub use splitter::BytesLines;
pub use splitter::{Decoded, Ending, Line, LineSplitter, Lines, RawItem, RawLine, RawLineSplitter};
#[cfg(feature = "alloc")]
pub use text::LineText;

#[cfg(feature = "tokio-util")]
pub(crate) use encode::finish;
#[cfg(feature = "alloc")]
pub use encode::{encode_line, encode_raw_line};
