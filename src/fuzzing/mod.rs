//! Fuzzing support for bridges built on this crate (feature `arbitrary`).
//!
//! With the feature on, the ACP messages, the stream-json events and the
//! chunked tool-result frames implement [`arbitrary::Arbitrary`], so a
//! cargo-fuzz target can take them as its input:
//!
//! - every generated ACP type (`ContentBlock`, `SessionUpdate`,
//!   `ToolCall`, …) as `T<'static>`, with its unknown variants: an unknown
//!   enum value never spells a known one, an unknown tagged variant is an
//!   object whose tag no known variant uses;
//! - [`RequestParams`](crate::acp::RequestParams),
//!   [`NotificationParams`](crate::acp::NotificationParams) and
//!   [`ResponseResult`](crate::acp::ResponseResult) (`'static`): every
//!   method, plus extension (`_…`) and unknown methods;
//! - [`Message`](crate::acp::Message) (`'static`): requests, notifications,
//!   responses and errors whose params and results are typed values;
//!   [`RequestId`](crate::acp::RequestId), [`RawJson`](crate::acp::RawJson),
//!   [`RpcError`](crate::acp::RpcError);
//! - [`Event`](crate::stream_json::Event) and the frames
//!   [`ToolResultStart`](crate::chunk::ToolResultStart),
//!   [`ToolResultChunk`](crate::chunk::ToolResultChunk),
//!   [`ToolResultEnd`](crate::chunk::ToolResultEnd), borrowing from the
//!   fuzzer's input (their raw parts have no owned form).
//!
//! What they generate is valid traffic: it encodes (with `encode_request`,
//! `encode_notification`, `encode_response`, `Message::encode`,
//! `Event::encode`) to one line that decodes back to an equal value
//! (`Response::typed` given [`ResponseResult::method`]). Strings are any
//! UTF-8, raw JSON is small, compact and valid, floats are finite and exact
//! in decimal, lists hold at most six items.
//!
//! [`HostileStream`] builds on them: a byte stream for a bridge's input that
//! mixes valid messages with what real peers and attackers send, cut into
//! reads where the fuzzer says.
//!
//! [`ResponseResult::method`]: crate::acp::ResponseResult::method

mod acp;
mod hostile;

mod stream_json;

pub use hostile::{HostileConfig, HostileLine, HostileStream, LineKind};

use alloc::string::String;

/// Reads the JSON string token whose content starts at `from` in `text`
/// (just after its opening quote), as the ACP reader reads every string:
/// checked and unescaped in one pass, with the crate's unescaper for this
/// target (a block of sixty-four bytes a step where the target has vector
/// registers, SSE2 or 64-bit ARM's NEON, text dense with escapes built in
/// a buffer on the stack and handed over checked; a word of eight
/// elsewhere).
/// Returns the text and the offset after the closing quote.
///
/// With [`unescape_string_portable`], what a fuzz target holds against an
/// independent JSON reader, on both of the crate's unescapers.
///
/// # Errors
///
/// The offset of the first byte that is not string content: a raw control
/// character, the backslash of an escape that is not valid JSON (a lone
/// surrogate among them), or the end of `text` when the closing quote is
/// missing.
///
/// # Examples
///
/// ```
/// use acp_codec::fuzzing::unescape_string;
///
/// let text = r#"{"text":"a\tb\u00e9\""}"#;
/// assert_eq!(unescape_string(text, 9), Ok(("a\tbé\"".to_string(), 22)));
/// assert_eq!(unescape_string(r#""\x""#, 1), Err(1));
/// ```
pub fn unescape_string(text: &str, from: usize) -> Result<(String, usize), usize> {
    crate::json::unescape::unescape_token(text, from, 0)
}

/// [`unescape_string`] with the crate's portable unescaper (a word of
/// eight bytes a step), the one of targets without vector registers,
/// whatever the target.
///
/// # Errors
///
/// As [`unescape_string`].
///
/// # Examples
///
/// ```
/// use acp_codec::fuzzing::{unescape_string, unescape_string_portable};
///
/// let text = r#""one\ntwo\uD83E\uDD80" "#;
/// assert_eq!(unescape_string_portable(text, 1), unescape_string(text, 1));
/// assert_eq!(unescape_string_portable(text, 1), Ok(("one\ntwo🦀".to_string(), 22)));
/// ```
pub fn unescape_string_portable(text: &str, from: usize) -> Result<(String, usize), usize> {
    crate::json::unescape::unescape_token_words(text, from, 0)
}
