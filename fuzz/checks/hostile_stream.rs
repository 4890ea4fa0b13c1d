//! The invariant behind the `hostile_stream` fuzz target (structure-aware,
//! on `acp_codec::fuzzing::HostileStream`), shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds, and
//! `tests/integration/arbitrary_round_trip.rs`.
//!
//! Input: bytes for `arbitrary::Unstructured`, turned into a hostile stream
//! (1 KiB line limit). The stream goes through a bridge's input path: a
//! `LineSplitter` with the same limit, reads as the stream cuts them, then
//! each line to `acp::decode_line`, a peer-side `acp::Tracker`, and (for
//! stream-json lines) a `Reassembler` with small limits. Asserted:
//! - the reads are non-empty and concatenate to the stream;
//! - the splitter gives one item per non-blank line, in order: an
//!   oversized line is one `LineTooLong`, a line with invalid UTF-8 one
//!   `InvalidUtf8`, any other line its text without `\n` or `\r`
//!   (unterminated only for the truncated last line);
//! - every valid ACP line (`Message`, `Crlf`, `DuplicateId`, `UnknownId`,
//!   `UnknownVariant`) decodes, re-encodes to exactly its bytes, and its
//!   typed params decode; an `UnknownVariant` decodes to an `Unknown`
//!   variant;
//! - the tracker refuses every `DuplicateId` request and every response
//!   (nothing was sent); its pending table never outgrows the requests;
//! - stray text and truncated lines never decode, as ACP or stream-json;
//!   stream-json lines decode as events, and those of known types never
//!   as ACP;
//! - the reassembler, fed every stream-json line, passes every event that
//!   is no chunk frame, returns an item or a `-32602` error for a frame,
//!   never buffers more than its budget, and after `finish` holds nothing;
//! - a deeply nested line decodes as its `_deep` notification, or fails as
//!   `NotJson` (`-32700`) past the decoder's depth limit.

use acp_codec::acp::Mode;
use std::time::Duration;

use acp_codec::acp::{
    decode_line, ContentBlock, Incoming, Message, NotificationParams, RequestParams, SessionUpdate,
    ToolKind, Tracker, Typed,
};
use acp_codec::chunk::Reassembler;
use acp_codec::fuzzing::{HostileConfig, HostileStream, LineKind};
use acp_codec::stream_json::Event;
use acp_codec::{ErrorCode, FrameError, Limits, LineSplitter, MessageError};
use arbitrary::Unstructured;

const MAX_LINE: usize = 1024;
const BUDGET: usize = 2048;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Line(Vec<u8>, bool),
    TooLong,
    BadUtf8,
}

fn item(r: Result<acp_codec::Line<'_>, FrameError>) -> Item {
    match r {
        Ok(l) => Item::Line(l.as_bytes().to_vec(), l.is_terminated()),
        Err(FrameError::LineTooLong(_)) => Item::TooLong,
        Err(FrameError::InvalidUtf8 { .. }) => Item::BadUtf8,
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// What the splitter must give for a line of `kind` written as `bytes`.
fn expected(kind: LineKind, bytes: &[u8]) -> Option<Item> {
    let terminated = bytes.ends_with(b"\n");
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    Some(match kind {
        LineKind::Blank => return None,
        LineKind::Oversized => Item::TooLong,
        LineKind::InvalidUtf8 => Item::BadUtf8,
        _ => Item::Line(body.to_vec(), terminated),
    })
}

fn is_valid_acp(kind: LineKind) -> bool {
    matches!(
        kind,
        LineKind::Message
            | LineKind::Crlf
            | LineKind::DuplicateId
            | LineKind::UnknownId
            | LineKind::UnknownVariant
    )
}

fn has_unknown(incoming: &Incoming<'_>) -> bool {
    match incoming {
        Incoming::Notification(Typed {
            value: NotificationParams::SessionUpdate(n),
            ..
        }) => match &n.update {
            SessionUpdate::Unknown(_) => true,
            SessionUpdate::AgentMessageChunk(c) => matches!(c.content, ContentBlock::Unknown(_)),
            SessionUpdate::ToolCall(t) => matches!(t.kind, Some(ToolKind::Unknown(_))),
            _ => false,
        },
        Incoming::Request { params, .. } => {
            matches!(params.value, RequestParams::Unknown { .. })
        }
        _ => false,
    }
}

pub fn check(data: &[u8]) {
    let config = HostileConfig::default()
        .with_max_line_len(MAX_LINE)
        .with_max_lines(48);
    let Ok(stream) = HostileStream::generate(&mut Unstructured::new(data), &config) else {
        return;
    };
    let reads: Vec<&[u8]> = stream.reads().collect();
    assert!(reads.iter().all(|r| !r.is_empty()), "an empty read");
    assert_eq!(
        reads.concat(),
        stream.bytes(),
        "reads do not make the stream"
    );

    // The splitter, read by read.
    let mut splitter = LineSplitter::with_max_line_len(MAX_LINE);
    let mut items = Vec::new();
    let mut buf = Vec::new();
    for read in &reads {
        buf.extend_from_slice(read);
        let mut lines = splitter.lines(&buf);
        items.extend(lines.by_ref().map(item));
        let consumed = lines.consumed();
        buf.drain(..consumed);
    }
    loop {
        let decoded = splitter.decode_eof(&buf);
        let consumed = decoded.consumed;
        let Some(it) = decoded.item else { break };
        items.push(item(it));
        buf.drain(..consumed);
    }
    let lines: Vec<_> = stream.lines().collect();
    let want: Vec<(LineKind, Item)> = lines
        .iter()
        .filter_map(|l| Some((l.kind, expected(l.kind, l.bytes)?)))
        .collect();
    let want_items: Vec<Item> = want.iter().map(|(_, i)| i.clone()).collect();
    assert_eq!(
        items, want_items,
        "splitter items differ from the stream's lines"
    );

    // Each line through the handlers.
    let mut tracker = Tracker::default();
    let mut requests = 0usize;
    let limits = Limits::default()
        .with_max_result_bytes(BUDGET)
        .with_max_buffered_bytes(BUDGET)
        .with_max_chunks_per_transfer(8)
        .with_max_open_transfers(2);
    let mut reassembler = Reassembler::with_limits(&limits);
    for (kind, it) in &want {
        let Item::Line(bytes, _) = it else { continue };
        let line = std::str::from_utf8(bytes).expect("the splitter checked utf-8");
        let acp = decode_line(line, Mode::Lenient);
        if is_valid_acp(*kind) {
            let incoming =
                acp.unwrap_or_else(|e| panic!("{kind:?} line does not decode: {e}: {line}"));
            // Valid: typed with nothing salvaged.
            if let Incoming::Notification(t) = &incoming {
                assert!(
                    t.is_clean(),
                    "{kind:?} line salvaged: {:?}: {line}",
                    t.salvaged
                );
            }
            let msg = Message::decode(line).expect("decode_line accepted it");
            let mut out = Vec::new();
            msg.encode(&mut out).expect("a decoded message encodes");
            assert_eq!(
                &out[..out.len() - 1],
                line.as_bytes(),
                "{kind:?} line not re-encoded as sent"
            );
            match &msg {
                Message::Request(r) => {
                    let t = r
                        .typed(Mode::Lenient)
                        .unwrap_or_else(|e| panic!("{e}: {line}"));
                    assert!(t.is_clean(), "salvaged: {:?}: {line}", t.salvaged);
                    requests += 1;
                }
                Message::Notification(n) => {
                    let t = n
                        .typed(Mode::Lenient)
                        .unwrap_or_else(|e| panic!("{e}: {line}"));
                    assert!(t.is_clean(), "salvaged: {:?}: {line}", t.salvaged);
                }
                _ => {}
            }
            let handled = tracker.handle(&msg, Duration::ZERO);
            match kind {
                LineKind::DuplicateId => assert!(handled.is_err(), "duplicate id accepted: {line}"),
                LineKind::UnknownId => assert!(handled.is_err(), "unknown id accepted: {line}"),
                LineKind::UnknownVariant => {
                    assert!(has_unknown(&incoming), "no unknown variant in {line}")
                }
                _ => {}
            }
            assert!(tracker.peer_pending_len() <= requests);
            assert_eq!(tracker.pending_len(), 0);
            continue;
        }
        match kind {
            LineKind::Stray | LineKind::Truncated => {
                assert!(acp.is_err(), "{kind:?} decoded as ACP: {line}");
                assert!(
                    Event::decode(line).is_err(),
                    "{kind:?} decoded as an event: {line}"
                );
            }
            LineKind::Event | LineKind::ChunkFrame | LineKind::BrokenFrame => {
                let event = Event::decode(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                // An event of an unknown type is any object with a `type`,
                // which may also be a JSON-RPC message.
                if !matches!(event, Event::Unknown(_)) {
                    assert!(acp.is_err(), "{kind:?} decoded as ACP: {line}");
                }
                let frame = matches!(
                    event,
                    Event::ToolResultStart(_) | Event::ToolResultChunk(_) | Event::ToolResultEnd(_)
                );
                match reassembler.push(event) {
                    Ok(_) => {}
                    // A frame: a fault of its transfer, or a limit: -32602.
                    Err(e) if frame => {
                        assert_eq!(e.code(), ErrorCode::INVALID_PARAMS, "{e}: {line}")
                    }
                    // Any other event passes through.
                    Err(e) => panic!("{kind:?} event refused: {e}: {line}"),
                }
                assert!(reassembler.buffered_bytes() <= BUDGET);
            }
            LineKind::DeepNesting => {
                // Valid JSON past serde_json's depth limit: a message or a
                // typed error, never a crash.
                match &acp {
                    Ok(Incoming::Notification(p)) => assert_eq!(p.value.method(), "_deep"),
                    Ok(other) => panic!("deep nesting decoded as {other:?}"),
                    // Deeper than the decoder's 128 levels: not JSON it
                    // takes, -32700, never a message cut short.
                    Err(e) => assert!(
                        matches!(e, MessageError::NotJson { .. })
                            && e.code() == ErrorCode::PARSE_ERROR,
                        "{e}: {line}"
                    ),
                }
            }
            other => panic!("unexpected kind {other:?}"),
        }
    }
    for e in reassembler.finish() {
        let _ = e.to_string();
    }
    assert_eq!(reassembler.open_transfers(), 0);
    assert_eq!(reassembler.buffered_bytes(), 0);
}
