//! Sans-IO codec for coding agents that speak newline-delimited JSON on
//! stdio: the Agent Client Protocol (ACP, JSON-RPC 2.0, `gemini --acp`) and
//! Gemini CLI's headless stream-json events (`gemini -o stream-json`).
//!
//! # The sans-IO contract
//!
//! The crate never reads, writes, spawns, sleeps or looks at a clock. The
//! caller owns pipes, sockets, threads, time and buffers; the crate turns
//! bytes into typed items and items into bytes, keeping only small, bounded
//! state. The same code runs under tokio, in a blocking loop, on a
//! Raspberry Pi, or in a fuzzer.
//!
//! # Quick start
//!
//! Split a stream into lines, whatever the read sizes, surviving bad lines:
//!
//! ```
//! use acp_codec::{FrameError, LineSplitter, Limits};
//!
//! let mut splitter = LineSplitter::with_limits(&Limits::default().with_max_line_len(64));
//! let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\"}\n\
//!               {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"params\":\"far too long for the limit\"}\n\
//!               \xff\n\
//!               {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":null}\n";
//! let mut rest = &input[..];
//! let mut seen = Vec::new();
//! loop {
//!     let decoded = splitter.decode(rest);
//!     rest = &rest[decoded.consumed..];
//!     match decoded.item {
//!         Some(Ok(line)) => seen.push(Ok(line.as_str())),
//!         Some(Err(e)) => seen.push(Err(e)),
//!         None => break,
//!     }
//! }
//! assert_eq!(seen.len(), 4);
//! // The oversized request is reported with its id, so it can be answered.
//! assert!(matches!(seen[1], Err(FrameError::LineTooLong { is_request: true, .. })));
//! assert!(matches!(seen[2], Err(FrameError::InvalidUtf8 { .. })));
//! assert_eq!(seen[3], Ok("{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":null}"));
//! ```
//!
//! # Untrusted input and limits
//!
//! Every limit has a documented default in [`limits`] and is set through
//! [`Limits`]. No input, however hostile, makes the crate panic, allocate
//! beyond its limits, or take more than linear time; a bad line is a typed
//! error and the next good line still decodes. Errors are one small enum per
//! layer ([`FrameError`], …) wrapped by [`Error`], each mapped to the
//! JSON-RPC code to reply with ([`Error::code`]).
//!
//! # Features
//!
//! - `std` (default): implies `alloc`; `std` support in dependencies.
//! - `alloc`: JSON encoding ([`encode_line`]) and everything that owns a
//!   buffer. Without it the crate is `no_std` and allocation-free: line
//!   splitting and [`title`] parsing work as is.
//! - `bytes`: [`LineSplitter::decode_bytes`], lines as `bytes::Bytes`
//!   without copying.
//! - `tokio-util`: `Decoder`/`Encoder` implementations in [`codec`]
//!   (implies `std` and `bytes`).
//!
//! # MSRV
//!
//! Rust 1.85, checked by clippy's `incompatible_msrv` lint.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::arithmetic_side_effects,
        clippy::todo,
        clippy::unimplemented
    )
)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(all(test, not(feature = "alloc")))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "alloc")]
pub mod acp;
#[cfg(feature = "alloc")]
pub mod chunk;
#[cfg(feature = "tokio-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio-util")))]
pub mod codec;
pub mod error;
pub mod framing;
pub mod limits;
#[cfg(feature = "alloc")]
pub mod stream_json;
pub mod title;
#[cfg(feature = "alloc")]
pub mod turn;

#[cfg(feature = "alloc")]
pub use chunk::{ChunkEncoder, Reassembler};
#[cfg(feature = "alloc")]
pub use error::{
    ChunkError, EncodeError, EventError, MessageError, TrackerError, TurnError, TurnLimit,
};
pub use error::{Error, ErrorCode, FrameError};
#[cfg(feature = "alloc")]
pub use framing::{encode_line, encode_raw_line};
pub use framing::{Decoded, Line, LineSplitter, Lines, PeekedId};
pub use limits::Limits;
#[cfg(feature = "alloc")]
pub use stream_json::Event;
pub use title::{tool_name_from_id, Explanation, Title, WorkingDir};
#[cfg(feature = "alloc")]
pub use turn::{TurnLimits, TurnView};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
