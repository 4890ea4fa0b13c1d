//! Sans-IO codec for coding agents that speak newline-delimited JSON on
//! stdio: the Agent Client Protocol (ACP, JSON-RPC 2.0, `gemini --acp`) and
//! Gemini CLI's headless stream-json events (`gemini -o stream-json`).
//!
//! Bytes go in and typed items come out, and the other way round. The crate
//! has limits, typed errors and recovery, and it never touches a pipe or a
//! clock.
//!
//! Decoding ACP is one call per job, each taking the [`acp::Mode`]
//! (lenient by default, strict on request):
//!
//! - a line: [`acp::decode_line`] (a notification's or a request's params
//!   typed in the same pass; a response's result too, given an
//!   [`acp::Tracker`] that has its request pending, through
//!   [`acp::Decoding`]) or, to route without typing,
//!   [`acp::Message::decode`];
//! - params or a result, by method: [`acp::Request::typed`],
//!   [`acp::Notification::typed`], [`acp::Response::typed`];
//! - a byte stream: `codec::AcpCodec` (feature `tokio-util`) gives each
//!   line's message, owned.
//!
//! | layer | module | in | out |
//! |---|---|---|---|
//! | framing | [`framing`] | bytes, in reads of any size | [`Line`]s (`&str`), or a [`FrameError`] for one bad line |
//! | ACP messages | [`acp`] | one line | a [`Message`](acp::Message) borrowed from it; typed params and results on demand |
//! | request tracking | [`acp::Tracker`] | decoded messages, `now` | matched responses, expired requests, cancel messages |
//! | turn view | [`turn`] | decoded `session/update`s, permissions, prompt responses | UI [`TurnEvent`](turn::TurnEvent)s and turn state |
//! | stream-json | [`stream_json`] | one line | an [`Event`] |
//! | chunked tool results | [`chunk`] | a big `tool_result` / frames | frames of at most 32 KiB / the rebuilt result |
//! | tool-call titles | [`title`] | a title string | command, directory, description as slices of it |
//! | encoding | [`encode_line`], [`acp::encode_request`], … | a value | exactly one line plus `\n` |
//! | remote transport | [`remote`] | client messages, agent lines, connects and leaves | lines for the agent, messages for clients with their stream, what to answer a refused message |
//! | tokio-util | `codec` (feature `tokio-util`) | `BytesMut` | `Decoder`/`Encoder` items |
//!
//! # The sans-IO contract
//!
//! The crate never reads, writes, spawns, sleeps or looks at a clock. The
//! caller owns pipes, sockets, threads, time and buffers. The crate keeps
//! only small, bounded state: a scan offset, reassembly buffers, a table
//! of pending requests. The same code runs under tokio, in a blocking
//! loop, on a Raspberry Pi, or in a fuzzer.
//!
//! What each call takes and returns:
//!
//! | call | takes | returns | the caller then |
//! |---|---|---|---|
//! | [`LineSplitter::decode`] | the unconsumed bytes, `&[u8]` | [`Decoded`]: `consumed`, and the next line or error (borrowed from the buffer), or none | drops `consumed` bytes, whether or not an item came back; calls again until no item, then reads more |
//! | [`LineSplitter::lines`] | the unconsumed bytes | [`Lines`], an iterator of every complete line | iterates, then drops [`Lines::consumed`] bytes |
//! | [`LineSplitter::decode_eof`] | the bytes left at end of input | the last line even without `\n` ([`Line::is_terminated`] false) | calls until no item |
//! | `LineSplitter::decode_bytes` (feature `bytes`) | `&mut BytesMut` | a line as `Bytes`, split off the buffer | nothing: the buffer was advanced |
//! | `LineSplitter::lines_bytes` (feature `bytes`) | `&mut BytesMut` | every complete line as `Bytes` (one split; each line a slice of it) | nothing: the unfinished line stays in the buffer; lines not taken go back |
//! | [`Message::decode`](acp::Message::decode), [`Event::decode`] | one line, `&str` | a value borrowing from the line | keeps the line alive while using it, or calls `into_owned()` |
//! | [`encode_line`], [`Message::encode`](acp::Message::encode), [`acp::encode_request`], … | a value, `&mut Vec<u8>` | bytes appended: one line plus `\n` | writes them out; on error the buffer is unchanged |
//! | [`Reassembler::push`] | a decoded [`Event`] | [`Pushed`](chunk::Pushed): hand the event on, wait, or a completed result | calls [`Reassembler::finish`] at end of input |
//! | [`ChunkEncoder::next_frame`] | `&mut Vec<u8>` | the next line's length, or none when done | writes the line, clears the buffer |
//! | [`acp::Tracker`] methods | messages, and `now` as a [`Duration`](core::time::Duration) | [`Completed`](acp::Completed), [`Expired`](acp::Expired), errors | calls [`poll_expired`](acp::Tracker::poll_expired) at [`next_deadline`](acp::Tracker::next_deadline) |
//! | [`TurnView`] `push_*` | decoded messages | [`Events`](turn::Events) borrowed until the next push | renders them |
//!
//! Values borrow from the caller's buffer whenever they can. The splitter
//! remembers how far it scanned, so a line that arrives one byte per read
//! still costs linear time. Time is a parameter (`now`), never read.
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
//! assert!(matches!(&seen[1], Err(FrameError::LineTooLong(e)) if e.is_request()));
//! assert!(matches!(seen[2], Err(FrameError::InvalidUtf8 { .. })));
//! assert_eq!(seen[3], Ok("{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":null}"));
//! ```
//!
//! # The driving loop
//!
//! Read → split ([`LineSplitter::lines`] or [`LineSplitter::decode`]) →
//! decode and handle each line → drop the consumed bytes → read again. At
//! end of input, [`LineSplitter::decode_eof`] until it returns nothing. An
//! error costs one line: answer it if it was a request, log it, go on.
//!
//! ```
//! use std::io::Read;
//! use acp_codec::acp::Message;
//! use acp_codec::{FrameError, Limits, Line, LineSplitter};
//!
//! /// Decodes one line; returns the method, writes the answer to a bad request.
//! fn handle(item: Result<Line<'_>, FrameError>, replies: &mut Vec<u8>) -> Option<String> {
//!     let error = match item {
//!         Ok(line) => match Message::decode(&line) {
//!             Ok(msg) => return Some(msg.method().unwrap_or("(response)").to_owned()),
//!             // Not JSON-RPC (stray text, a batch): nothing to answer.
//!             Err(e) => return Some(format!("skipped, {}", e.code())),
//!         },
//!         Err(e) => e,
//!     };
//!     // An oversized request keeps its id: answer it so the peer does not hang.
//!     if let FrameError::LineTooLong(e) = &error {
//!         e.encode_reply(replies).ok()?;
//!     }
//!     Some(format!("skipped, {}", error.code()))
//! }
//!
//! // Any `Read` will do; a byte slice stands in for the agent's stdout.
//! let mut agent_stdout: &[u8] = b"\
//!     {\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}\n\
//!     Loaded cached credentials.\n\
//!     {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"fs/write_text_file\",\"params\":{\"content\":\"... far too long ...\"}}\n\
//!     {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}";
//! let mut splitter = LineSplitter::with_limits(&Limits::default().with_max_line_len(80));
//! let mut buf = Vec::new();
//! let mut read = [0u8; 16]; // tiny reads: the items do not depend on read sizes
//! let mut replies = Vec::new();
//! let mut seen = Vec::new();
//! loop {
//!     let n = agent_stdout.read(&mut read)?;
//!     if n == 0 {
//!         break;
//!     }
//!     buf.extend_from_slice(&read[..n]);
//!     let mut lines = splitter.lines(&buf);
//!     seen.extend(lines.by_ref().filter_map(|item| handle(item, &mut replies)));
//!     let consumed = lines.consumed();
//!     buf.drain(..consumed);
//! }
//! // End of input: the last line has no `\n` but is still handed out.
//! loop {
//!     let decoded = splitter.decode_eof(&buf);
//!     let consumed = decoded.consumed;
//!     let Some(item) = decoded.item else { break };
//!     seen.extend(handle(item, &mut replies));
//!     buf.drain(..consumed);
//! }
//! assert_eq!(seen, [
//!     "session/update",
//!     "skipped, -32700 parse error",
//!     "skipped, -32600 invalid request",
//!     "(response)",
//! ]);
//! assert!(String::from_utf8(replies)?.starts_with(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Under tokio, the same loop is `read_buf` into a `Vec` (the `tap`
//! example, on pass-through splitting), or `FramedRead` with
//! `codec::LineCodec`, `codec::RawLineCodec` or `codec::AcpCodec` (feature
//! `tokio-util`; the `acp_turn` and `relay` examples). The examples live in
//! the repository's `examples/` directory.
//!
//! # Which API for which job
//!
//! | job | call |
//! |---|---|
//! | split a stream into lines (text, `\r` stripped, blank lines skipped) | [`LineSplitter::lines`] or [`LineSplitter::decode`]; `decode_bytes`, `lines_bytes` over a `BytesMut` (feature `bytes`); `codec::LineCodec` (feature `tokio-util`) |
//! | pass lines through byte for byte (a relay, a tap, a proxy) | [`RawLineSplitter::decode`] / [`decode_eof`](RawLineSplitter::decode_eof): [`RawItem`](framing::RawItem)s with their terminators; `RawLineSplitter::decode_bytes`, `codec::RawLineCodec` |
//! | decode a line, params and result typed in one pass | [`acp::decode_line`] for a [`Line`]'s text (checked UTF-8), [`acp::decode_line_bytes`] for bytes not yet checked; [`acp::Message::decode`] to route without typing |
//! | pair a response with its request, as an endpoint | [`acp::Tracker`], and [`acp::Decoding::with_tracker`] to type the result in the same pass |
//! | pair requests and responses in both directions, between the sides | [`acp::Observer`] and [`acp::Observer::decoding`] |
//! | encode | [`acp::encode_request`], [`acp::Tracker::encode_request`], [`acp::encode_response`], [`acp::encode_error`], [`acp::encode_notification`], [`encode_line`] |
//! | answer an oversized request | [`LineTooLong::encode_reply`](framing::LineTooLong::encode_reply): the `-32600` error to the id read from the line's first bytes |
//! | print a wire enum (`ToolKind`, `StopReason`, …) | `Display`, or `as_str`: the wire name |
//!
//! # Limits
//!
//! Input from a peer is untrusted. Every limit has a documented default and
//! is enforced with overflow-safe arithmetic. No input makes the crate
//! panic, allocate beyond these limits, or take more than linear time. The
//! framing and chunk limits are set through [`Limits`] (defaults in
//! [`limits`]); the turn view, the request tracker and the remote transport
//! keep theirs beside them, listed below.
//!
//! | [`Limits`] field | default | why | when exceeded |
//! |---|---|---|---|
//! | [`max_line_len`](Limits::max_line_len) | 64 MiB ([`DEFAULT_MAX_LINE_LEN`](limits::DEFAULT_MAX_LINE_LEN)) | what Codex, Qwen Code and the protocol's conformance kit accept (the official TypeScript SDK takes 32 MiB), far above asyncio's 64 KiB; a reader never holds more than this plus one read | [`FrameError::LineTooLong`] once per line, as soon as more than the limit is seen, with the limit, the bytes seen and the request id when readable; the rest of the line is skipped up to its `\n` |
//! | [`id_peek_window`](Limits::id_peek_window) | 4 KiB ([`DEFAULT_ID_PEEK_WINDOW`](limits::DEFAULT_ID_PEEK_WINDOW)) | how far into an oversized line `"id"` and `"method"` are looked for, so a server can answer the request | the error carries no id (`id: None`) |
//! | [`frame_len`](Limits::frame_len) | 32 KiB ([`DEFAULT_FRAME_LEN`](limits::DEFAULT_FRAME_LEN)) | the longest line of the chunked tool-result protocol, well under the 64 KiB line limit of asyncio readers | never: pass it to [`ChunkEncoder::new`], which never writes a longer line, whatever the escaping costs ([`ChunkErrorKind::FrameTooSmall`] if no frame can fit) |
//! | [`max_result_bytes`](Limits::max_result_bytes) | 50 MiB ([`DEFAULT_MAX_RESULT_BYTES`](limits::DEFAULT_MAX_RESULT_BYTES)) | one rebuilt tool result fits in a small board's memory | [`ChunkErrorKind::ResultTooLarge`]; the transfer is aborted and its remaining frames dropped |
//! | [`max_buffered_bytes`](Limits::max_buffered_bytes) | 50 MiB, shared ([`DEFAULT_MAX_BUFFERED_BYTES`](limits::DEFAULT_MAX_BUFFERED_BYTES)) | all open transfers together; a declared `total_bytes` is a hint, never a reason to allocate | [`ChunkErrorKind::BudgetExceeded`] for the transfer that needed the room |
//! | [`max_chunks_per_transfer`](Limits::max_chunks_per_transfer) | 65,536 ([`DEFAULT_MAX_CHUNKS_PER_TRANSFER`](limits::DEFAULT_MAX_CHUNKS_PER_TRANSFER)) | caps the number of fragments, not only the bytes | [`ChunkErrorKind::TooManyChunks`]; the transfer is aborted |
//! | [`max_open_transfers`](Limits::max_open_transfers) | 32 ([`DEFAULT_MAX_OPEN_TRANSFERS`](limits::DEFAULT_MAX_OPEN_TRANSFERS)) | bounds the per-transfer state | [`ChunkErrorKind::TooManyTransfers`]; the new transfer is refused |
//!
//! The other components have their own bounds:
//! - [`TurnLimits`] bound what a [`TurnView`] retains per turn: 512 tool
//!   calls, 32 MiB of tool-call data, 1,024 messages, 8 MiB of text, 256
//!   permission requests. What does not fit is reported as an
//!   [`TurnEvent::Problem`](turn::TurnEvent::Problem) and not retained.
//! - [`acp::Tracker`] expires requests after
//!   [`DEFAULT_TIMEOUT`](acp::DEFAULT_TIMEOUT) (30 s, per request
//!   configurable) and accepts at most
//!   [`DEFAULT_MAX_PEER_PENDING`](acp::DEFAULT_MAX_PEER_PENDING) (1,024)
//!   peer requests pending ([`TrackerError::TooManyPending`] past it).
//! - [`remote`] bounds message and body sizes, ids, the output held for a
//!   connection ([`DEFAULT_MAX_BACKLOG_BYTES`](remote::DEFAULT_MAX_BACKLOG_BYTES),
//!   64 MiB), streams, pending requests, users' connections and sessions,
//!   and the replay budget; the [module docs](remote#limits) list them.
//! - Decoding an ACP line allocates only for what it returns: a string with
//!   escapes once, at its escaped size, when its end is found by a short
//!   search (one that meets no escaped quote 4 KiB or more in). Text dense
//!   with `\"` past that is unescaped as it is read into a string
//!   that doubles as it fills (from 8 KiB, so a few allocations, and never
//!   more than twice the text), trimmed when it ends to at most a quarter
//!   of its text plus 4 KiB unused.
//!
//! # Recovery
//!
//! Every error concerns one line, one transfer or one request, and leaves
//! the state that reported it usable: the next good input decodes.
//!
//! | error | reported by | after it |
//! |---|---|---|
//! | [`FrameError`] | [`LineSplitter`], `codec::LineCodec`, `codec::AcpCodec` | the bad line is consumed (an oversized one up to its `\n`, which may arrive later); the next line decodes |
//! | [`MessageError`] | [`Message::decode`](acp::Message::decode), `typed()` | nothing to reset: decoding keeps no state |
//! | [`EventError`] | [`Event::decode`] | nothing to reset |
//! | [`ChunkError`] | [`Reassembler`] | the faulty transfer is gone; its remaining frames come back as [`Pushed::Dropped`](chunk::Pushed::Dropped); other transfers go on; the next transfer with the same id starts clean |
//! | [`TrackerError`] | [`acp::Tracker`] | the pending tables are unchanged |
//! | [`EncodeError`] | every `encode*` | the output buffer is left as it was |
//! | [`TurnError`] | [`TurnView`], inside [`TurnEvent::Problem`](turn::TurnEvent::Problem) | never an `Err`: the view applied or ignored the input as documented and goes on |
//! | [`RemoteError`](remote::RemoteError) | [`remote::Server`] and the rest of [`remote`] | the state that reported it is unchanged and takes the next message; its [`reply`](remote::RemoteError::reply), HTTP status and close code say how to answer |
//! | [`RejoinError`](remote::RejoinError) | [`remote::Rejoin`], the client's side of resume | the state takes the next message; after a `Gap`, [`start_over`](remote::Rejoin::start_over) and a clean connection load the sessions |
//!
//! The tokio-util codecs return a bad line as an *item*, `Ok(Some(Err(…)))`.
//! A `Decoder` error would end a `FramedRead` stream, and one bad line must
//! not cost the connection.
//!
//! # Errors and JSON-RPC codes
//!
//! One `#[non_exhaustive]` enum per layer, wrapped by [`Error`] (with
//! `From` impls, so `?` works across layers). Display text is lowercase
//! and carries the numbers. Every error maps to the JSON-RPC code to answer
//! with ([`Error::code`], and `code()` on each layer's enum):
//!
//! | code | errors |
//! |---|---|
//! | `-32700` [parse error](ErrorCode::PARSE_ERROR) | [`FrameError::InvalidUtf8`], [`MessageError::NotJson`], [`EventError::Json`], [`RemoteError::NotJson`](remote::RemoteError::NotJson) |
//! | `-32600` [invalid request](ErrorCode::INVALID_REQUEST) | [`FrameError::LineTooLong`], [`MessageError::Batch`], [`MessageError::InvalidEnvelope`], [`EncodeError::RawNewline`], [`EncodeError::InvalidJson`], [`TrackerError`] for responses and requests that match nothing, every [`RemoteError`](remote::RemoteError) but `NotJson` (`-32700`) and `IdTooLong` (`-32602`) |
//! | `-32602` [invalid params](ErrorCode::INVALID_PARAMS) | [`MessageError::InvalidParams`], [`EventError::MissingField`], [`EventError::InvalidField`], [`ChunkError`] faults of a transfer, [`TurnError`] but `LimitExceeded`, [`RemoteError::IdTooLong`](remote::RemoteError::IdTooLong) |
//! | `-32603` [internal error](ErrorCode::INTERNAL_ERROR) | [`MessageError::InvalidResult`], [`EncodeError::Json`], [`TrackerError::TooManyPending`], [`ChunkErrorKind::FrameTooSmall`], [`TurnError::LimitExceeded`] |
//!
//! [`ErrorCode`] also names ACP's own codes (`-32800` request cancelled,
//! `-32000` authentication required, `-32002` resource not found) for
//! building replies with [`acp::RpcError`].
//!
//! # Features
//!
//! | feature | default | adds |
//! |---|---|---|
//! | `std` | yes | implies `alloc`; `std` support in the dependencies (runtime SIMD detection in memchr and simdutf8) |
//! | `alloc` | via `std` | [`acp`], [`stream_json`], [`chunk`], [`turn`], [`encode_line`] / [`encode_raw_line`], the alloc-carrying errors; pulls in `serde` and `serde_json` |
//! | `remote` | no | `remote`: a team server's core (`remote::Server`, sans-IO: connections, users, sessions, resume, limits), the client's side of resume (`remote::Rejoin`) and the rules of ACP's remote transport (WebSocket, Streamable HTTP); a codec-only dependent does not build it; implies `alloc` |
//! | `bytes` | no | `LineSplitter::decode_bytes` / `decode_bytes_eof` / `lines_bytes`: lines as `bytes::Bytes`, split off a `BytesMut` without copying |
//! | `tokio-util` | no | `codec::LineCodec` and `codec::AcpCodec`, tokio-util `Decoder`/`Encoder`s; implies `std` and `bytes` |
//! | `arbitrary` | no | `fuzzing`: `arbitrary::Arbitrary` for the ACP messages, stream-json events and chunk frames (what they generate encodes to lines that decode back equal), and `fuzzing::HostileStream`, hostile line streams for a bridge's fuzz targets; implies `std` |
//! | `unstable` | no | the additions of the unstable ACP v1 schema (`agent-client-protocol-schema` 1.20.0 with its `unstable` feature, not `proxy/*`): the methods `session/fork`, `session/archive`, `session/unarchive`, `session/status`, `session/options`, `session/set_title`, `providers/list`/`set`/`disable`, `auth/status`, `auth/status_update`, `mcp/message`, and `mcp/connect`, `mcp/disconnect` (of the MCP-over-ACP RFD, not in that schema); the `sessionUpdate`s `cursor_update` and `prompt_suggestions_update`; `PromptResponse.usage` and a subagent's usage, the initial `configOptions` of a session, the `speed` config category, `archived`, the new capabilities and the `acp` MCP server. Without it these stay unknown methods/variants/values and `extra` members (lossless). Follows the unstable schema, outside semver; implies `alloc` |
//! | `v2` | no | [`acp::v2`](crate::acp): ACP v2 typed (the v2 schema of the TypeScript SDK 2.4.0; with `unstable`, its unstable additions): every v2 method's params and result, `typed_v2` on requests, notifications and responses, `v2::encode_request` / `encode_notification`. v2 is a draft: outside semver until it is final; implies `alloc` |
//!
//! ## `no_std`
//!
//! The crate is always `#![no_std]`. With `default-features = false`, it
//! needs neither `std` nor an allocator, and depends only on memchr and
//! simdutf8. What remains is [`LineSplitter`] (with [`Limits`],
//! [`FrameError`], [`PeekedId`]), the [`title`] parser and [`Error`]. All of
//! it runs over borrowed slices and allocates nothing:
//!
//! ```
//! // Compiles with `acp-codec = { version = "0.1", default-features = false }`.
//! use acp_codec::{LineSplitter, Title};
//!
//! /// Counts the shell tool titles that carry a description, in a buffer
//! /// of complete lines, on a target with no heap.
//! fn described(buf: &[u8]) -> usize {
//!     let mut splitter = LineSplitter::new();
//!     let mut n = 0;
//!     for line in splitter.lines(buf).flatten() {
//!         if !Title::parse(line.as_str()).description().is_empty() {
//!             n += 1;
//!         }
//!     }
//!     n
//! }
//! assert_eq!(described(b"ls -la (List files)\nmake\n"), 1);
//! ```
//!
//! # Unsafe code
//!
//! The crate denies `unsafe` code but in one function, a measured
//! exception: [`RawLine::into_text_checked_from`](framing::RawLine) (with
//! `bytes`), an `unsafe fn` for a reader that checked a long line's UTF-8
//! read by read while its bytes were in the cache: the line's bytes
//! become its `String` with only the unchecked rest checked, not read
//! from memory again for a check of the whole (about a pass per long
//! line of a tool's output, in the team server). Its caller vouches for
//! the checked prefix; the `line_splitter` fuzz target and a proptest hold
//! the result against `String::from_utf8`.
//!
//! # MSRV
//!
//! Rust 1.85 (`rust-version` in `Cargo.toml`), kept honest by clippy's
//! `incompatible_msrv` lint, which CI denies.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]
// Without `alloc` a `FrameError` holds the longest id the peek reads inline
// (152 bytes; see `LineTooLong`), over clippy's bound for an `Err`: the price
// of answering an oversized request without an allocator.
#![cfg_attr(not(feature = "alloc"), allow(clippy::result_large_err))]
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
#[cfg(feature = "alloc")]
pub mod client;
#[cfg(feature = "tokio-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio-util")))]
pub mod codec;
pub mod error;
mod error_code;
pub mod framing;
#[cfg(feature = "arbitrary")]
#[cfg_attr(docsrs, doc(cfg(feature = "arbitrary")))]
pub mod fuzzing;
mod json;
pub mod limits;
#[cfg(feature = "remote")]
#[cfg_attr(docsrs, doc(cfg(feature = "remote")))]
pub mod remote;
#[cfg(feature = "alloc")]
pub mod stream_json;
#[cfg(feature = "alloc")]
mod tally;
pub mod title;
#[cfg(feature = "v2")]
#[cfg_attr(docsrs, doc(cfg(feature = "v2")))]
pub mod translate;
#[cfg(feature = "alloc")]
pub mod turn;
#[cfg(feature = "alloc")]
pub mod version;

#[cfg(feature = "alloc")]
pub use chunk::{ChunkEncoder, Reassembler};
#[cfg(feature = "alloc")]
pub use error::{
    ChunkError, ChunkErrorKind, EncodeError, EventError, MessageError, TrackerError, TurnError,
    TurnLimit,
};
pub use error::{Error, ErrorCode, FrameError};
#[cfg(feature = "alloc")]
pub use framing::{encode_line, encode_raw_line};
pub use framing::{Decoded, Line, LineSplitter, Lines, PeekedId, RawLineSplitter};
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
