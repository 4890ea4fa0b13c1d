//! The invariant behind the `acp_codec` fuzz target, shared with
//! `tests/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: byte 0 picks the line limit (16..=520 bytes) and the read size
//! (1, 8, 15 or 22 bytes); the rest is the stream. Asserted:
//! - `AcpCodec` gives the same items whether the input comes at once or in
//!   small reads, and never fails with an I/O error;
//! - its items match `LineCodec` lines decoded with `Message::decode`
//!   (one item per line, errors as errors);
//! - every message it yields encodes (through its `Encoder`) to exactly
//!   one line, and that line decodes and re-encodes to the same bytes.

use acp_codec::acp::Message;
use acp_codec::codec::{AcpCodec, LineCodec};
use acp_codec::Limits;
use bytes::BytesMut;
use tokio_util::codec::{Decoder, Encoder};

/// Every item of `codec` over `input` fed in reads of `read` bytes.
fn items<D: Decoder>(mut codec: D, input: &[u8], read: usize) -> Vec<D::Item>
where
    D::Error: core::fmt::Debug,
{
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in input.chunks(read.max(1)) {
        buf.extend_from_slice(piece);
        while let Some(item) = codec.decode(&mut buf).expect("no i/o error") {
            out.push(item);
        }
    }
    while let Some(item) = codec.decode_eof(&mut buf).expect("no i/o error") {
        out.push(item);
    }
    out
}

/// An item reduced to what must agree: the message's encoding or the
/// error's code.
fn key(item: &Result<Message<'_>, acp_codec::Error>) -> Result<Vec<u8>, i32> {
    match item {
        Ok(m) => {
            let mut out = Vec::new();
            m.encode(&mut out).expect("a decoded message encodes");
            Ok(out)
        }
        Err(e) => Err(e.code().0),
    }
}

pub fn check(data: &[u8]) {
    let Some((&head, input)) = data.split_first() else {
        return;
    };
    let limits = Limits::default().with_max_line_len(16 + usize::from(head & 0x3f) * 8);
    let read = 1 + usize::from(head >> 6) * 7;

    let whole = items(AcpCodec::with_limits(&limits), input, input.len());
    let split = items(AcpCodec::with_limits(&limits), input, read);
    let whole_keys: Vec<_> = whole.iter().map(key).collect();
    let split_keys: Vec<_> = split.iter().map(key).collect();
    assert_eq!(whole_keys, split_keys, "split invariance");

    let oracle: Vec<_> = items(LineCodec::with_limits(&limits), input, input.len())
        .into_iter()
        .map(|line| match line {
            Ok(bytes) => key(&Message::decode_bytes(&bytes).map_err(acp_codec::Error::from)),
            Err(e) => Err(e.code().0),
        })
        .collect();
    assert_eq!(whole_keys, oracle, "line codec + Message::decode");

    for item in whole.iter().flatten() {
        let mut out = BytesMut::new();
        AcpCodec::new().encode(item, &mut out).expect("encodes");
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(out.last(), Some(&b'\n'));
        let line = std::str::from_utf8(&out[..out.len() - 1]).expect("utf-8");
        let again = Message::decode(line).expect("re-decodes");
        let mut twice = Vec::new();
        again.encode(&mut twice).expect("re-encodes");
        assert_eq!(&twice[..], &out[..], "encoding is stable");
    }
}
