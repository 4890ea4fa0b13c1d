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
