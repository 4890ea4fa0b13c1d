//! The invariant behind the `round_trip` fuzz target (structure-aware, on
//! the crate's `arbitrary` feature), shared with `tests/integration/fuzz_corpus.rs`,
//! which replays the committed seeds, and `tests/integration/arbitrary_round_trip.rs`,
//! which runs
//! it over thousands of pseudo-random inputs.
//!
//! Input: bytes for `arbitrary::Unstructured`; byte 0 picks the family.
//! Asserted, for what the `Arbitrary` impls generate:
//! - a typed request (`RequestParams` with any id), notification
//!   (`NotificationParams`) or result (`ResponseResult`) encodes to one
//!   line that `Message::decode` then `typed` (given `ResponseResult::method`)
//!   decode back to an equal value, with nothing salvaged; for
//!   notifications `acp::decode_line` (the one-pass decoder) gives the same;
//! - a `Message` encodes to one line that decodes to an equal message,
//!   whose typed params decode with nothing salvaged;
//! - a stream-json `Event` (the chunk frames and unknown types included)
//!   encodes to one line that decodes to an equal event and re-encodes to
//!   the same bytes;
//! - a `ToolResult` sent through `ChunkEncoder` at any valid frame length
//!   comes out of a `Reassembler` equal.

use acp_codec::acp::Mode;
use acp_codec::acp::{
    decode_line, encode_notification, encode_request, encode_response, Incoming, Message,
    NotificationParams, RequestId, RequestParams, ResponseResult, Typed,
};
use acp_codec::chunk::{ChunkEncoder, Pushed, Reassembler};
use acp_codec::stream_json::{Event, ToolResult};
use arbitrary::{Arbitrary, Unstructured};

/// The text of an encoded line, checked to be exactly one line.
fn one_line(out: &[u8]) -> &str {
    let text = std::str::from_utf8(out).expect("encoder wrote invalid utf-8");
    assert_eq!(text.matches('\n').count(), 1, "not one line: {text:?}");
    text.strip_suffix('\n').expect("no final newline")
}

fn request(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let id = RequestId::arbitrary(u)?;
    let params = RequestParams::arbitrary(u)?;
    let mut out = Vec::new();
    encode_request(&id, &params, &mut out).expect("a generated request encodes");
    let line = one_line(&out);
    let msg = Message::decode(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let Message::Request(r) = &msg else {
        panic!("not a request: {line}")
    };
    assert_eq!(r.id, id, "{line}");
    let typed = r
        .typed(Mode::Lenient)
        .unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(typed, Typed::clean(params.clone()), "{line}");
    let one_pass = decode_line(line, Mode::Lenient).unwrap_or_else(|e| panic!("{e}: {line}"));
    let want = Incoming::Request {
        request: r.clone(),
        params: Box::new(Typed::clean(params)),
    };
    assert_eq!(one_pass, want, "{line}");
    Ok(())
}

fn notification(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let params = NotificationParams::arbitrary(u)?;
    let mut out = Vec::new();
    encode_notification(&params, &mut out).expect("a generated notification encodes");
    let line = one_line(&out);
    let one_pass = decode_line(line, Mode::Lenient).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(
        one_pass,
        Incoming::Notification(Typed::clean(params.clone())),
        "{line}"
    );
    let Ok(Message::Notification(n)) = Message::decode(line) else {
        panic!("not a notification: {line}")
    };
    assert_eq!(
        n.typed(Mode::Lenient)
            .unwrap_or_else(|e| panic!("{e}: {line}")),
        Typed::clean(params),
        "{line}"
    );
    Ok(())
}

fn result(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let id = RequestId::arbitrary(u)?;
    let result = ResponseResult::arbitrary(u)?;
    let method = result.method().unwrap_or("_ext/unknown");
    let mut out = Vec::new();
    encode_response(&id, &result, &mut out).expect("a generated result encodes");
    let line = one_line(&out);
    let Ok(Message::Response(r)) = Message::decode(line) else {
        panic!("not a response: {line}")
    };
    assert_eq!(r.id, id, "{line}");
    let typed = r
        .typed(method, Mode::Lenient)
        .unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(typed, Typed::clean(result), "{line}");
    Ok(())
}

fn message(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let msg = Message::arbitrary(u)?;
    let mut out = Vec::new();
    msg.encode(&mut out).expect("a generated message encodes");
    let line = one_line(&out);
    let again = Message::decode(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(again, msg, "{line}");
    match &again {
        Message::Request(r) => {
            let t = r
                .typed(Mode::Lenient)
                .unwrap_or_else(|e| panic!("{e}: {line}"));
            assert!(t.is_clean(), "salvaged: {:?}: {line}", t.salvaged);
        }
        Message::Notification(n) => {
            let t = n
                .typed(Mode::Lenient)
                .unwrap_or_else(|e| panic!("{e}: {line}"));
            assert!(t.is_clean(), "salvaged: {:?}: {line}", t.salvaged);
        }
        Message::Response(_) | Message::Error(_) => {}
    }
    Ok(())
}

fn event(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let event = Event::arbitrary(u)?;
    let mut out = Vec::new();
    event.encode(&mut out).expect("a generated event encodes");
    let line = one_line(&out);
    let again = Event::decode(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(again, event, "{line}");
    let mut out2 = Vec::new();
    again.encode(&mut out2).expect("a decoded event encodes");
    assert_eq!(out2, out, "{line}");
    Ok(())
}

fn transfer(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let result = ToolResult::arbitrary(u)?;
    let min = ChunkEncoder::min_frame_len(&result);
    let frame_len = u.int_in_range(min..=min + 512)?;
    let mut encoder = ChunkEncoder::new(&result, frame_len).expect("min_frame_len is enough");
    let mut reassembler = Reassembler::new();
    let mut rebuilt = None;
    let mut line = Vec::new();
    while let Some(n) = encoder.next_frame(&mut line) {
        assert!(n - 1 <= frame_len, "frame of {n} bytes over {frame_len}");
        let text = one_line(&line);
        match reassembler
            .push_line(text)
            .unwrap_or_else(|e| panic!("{e}: {text}"))
        {
            Pushed::Complete(r) => rebuilt = Some(r),
            Pushed::Event(Event::ToolResult(r)) => rebuilt = Some(r.into_owned()),
            Pushed::Consumed => {}
            other => panic!("unexpected {other:?} for {text}"),
        }
        line.clear();
    }
    assert_eq!(rebuilt, Some(result.into_owned()));
    assert_eq!(reassembler.open_transfers(), 0);
    Ok(())
}

pub fn check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let family = match u.choose_index(6) {
        Ok(f) => f,
        Err(_) => return,
    };
    // A generator error (not a mismatch) only ends this input.
    let _ = match family {
        0 => request(&mut u),
        1 => notification(&mut u),
        2 => result(&mut u),
        3 => message(&mut u),
        4 => event(&mut u),
        _ => transfer(&mut u),
    };
}
