//! The invariant behind the `line_splitter` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: byte 0 picks the line limit (1..=64, or the default when 0), byte 1
//! seeds the piece sizes; the rest is the stream. Asserted:
//! - any split of the input gives the same items as one-shot decoding,
//!   through `decode` and through the batch iterator `lines`;
//! - both agree with a naive oracle built on `split(b'\n')`;
//! - the caller's buffer never holds more than the limit plus one read;
//! - the `Bytes` variant gives the same lines (with feature `bytes`).

use acp_codec::{FrameError, LineSplitter};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
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

/// Feeds `input` in reads of 1..=`max_step` bytes (sizes from `seed`); after
/// each read `take` collects what the buffer holds and returns the bytes
/// consumed. Checks the buffer bound, then finishes with `decode_eof`.
fn feed(
    limit: usize,
    input: &[u8],
    mut seed: u32,
    max_step: usize,
    mut take: impl FnMut(&mut LineSplitter, &[u8], &mut Vec<Item>) -> usize,
) -> Vec<Item> {
    let mut s = LineSplitter::with_max_line_len(limit);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut pos = 0;
    while pos < input.len() {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let step = 1 + (seed >> 16) as usize % max_step;
        let end = (pos + step).min(input.len());
        buf.extend_from_slice(&input[pos..end]);
        pos = end;
        let consumed = take(&mut s, &buf, &mut out);
        assert!(consumed <= buf.len());
        buf.drain(..consumed);
        assert!(
            buf.len() <= limit + step,
            "buffer {} > {limit} + {step}",
            buf.len()
        );
    }
    eof(&mut s, &mut buf, &mut out);
    out
}

/// Decodes `input` fed in pieces whose sizes come from `seed`, one `decode`
/// call per line.
pub fn pieces(limit: usize, input: &[u8], seed: u32) -> Vec<Item> {
    feed(limit, input, seed, 9, |s, buf, out| {
        let mut start = 0;
        loop {
            let d = s.decode(&buf[start..]);
            assert!(d.consumed <= buf.len() - start);
            start += d.consumed;
            match d.item {
                Some(r) => out.push(item(r)),
                None => return start,
            }
        }
    })
}

/// Like `pieces`, through the batch iterator `LineSplitter::lines`.
pub fn batches(limit: usize, input: &[u8], seed: u32) -> Vec<Item> {
    feed(limit, input, seed, 23, |s, buf, out| {
        let mut lines = s.lines(buf);
        out.extend(lines.by_ref().map(item));
        lines.consumed()
    })
}

/// Decodes `input` handed over whole.
pub fn one_shot(limit: usize, input: &[u8]) -> Vec<Item> {
    let mut s = LineSplitter::with_max_line_len(limit);
    let mut buf = input.to_vec();
    let mut out = Vec::new();
    eof(&mut s, &mut buf, &mut out);
    out
}

fn eof(s: &mut LineSplitter, buf: &mut Vec<u8>, out: &mut Vec<Item>) {
    loop {
        let d = s.decode_eof(buf);
        let consumed = d.consumed;
        let it = d.item.map(item);
        buf.drain(..consumed);
        match it {
            Some(i) => out.push(i),
            None => break,
        }
    }
    assert!(buf.is_empty());
}

/// What the splitter must produce, from `split(b'\n')`.
pub fn oracle(limit: usize, input: &[u8]) -> Vec<Item> {
    let mut out = Vec::new();
    let parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let last = parts.len() - 1;
    for (i, part) in parts.into_iter().enumerate() {
        let terminated = i != last;
        if part.len() > limit {
            out.push(Item::TooLong);
            continue;
        }
        let text = part.strip_suffix(b"\r").unwrap_or(part);
        if text.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue;
        }
        out.push(match std::str::from_utf8(text) {
            Ok(_) => Item::Line(text.to_vec(), terminated),
            Err(_) => Item::BadUtf8,
        });
    }
    out
}

#[cfg(feature = "bytes")]
fn bytes_variant(limit: usize, input: &[u8], seed: u32) -> Vec<Item> {
    let mut s = LineSplitter::with_max_line_len(limit);
    let mut buf = bytes::BytesMut::new();
    let mut out = Vec::new();
    for piece in input.chunks(1 + seed as usize % 13) {
        buf.extend_from_slice(piece);
        while let Some(r) = s.decode_bytes(&mut buf) {
            out.push(bytes_item(r, true));
        }
        assert!(
            buf.len() <= limit + piece.len(),
            "buffer {} > {limit} + {}",
            buf.len(),
            piece.len()
        );
    }
    while let Some(r) = s.decode_bytes_eof(&mut buf) {
        out.push(bytes_item(r, false));
    }
    out
}

/// `lines_bytes` over the same pieces; every third batch is dropped after
/// a few lines (the rest must come back in the buffer, not be lost).
#[cfg(feature = "bytes")]
fn bytes_lines_variant(limit: usize, input: &[u8], seed: u32) -> Vec<Item> {
    let mut s = LineSplitter::with_max_line_len(limit);
    let mut buf = bytes::BytesMut::new();
    let mut out = Vec::new();
    for (n, piece) in input.chunks(1 + seed as usize % 11).enumerate() {
        buf.extend_from_slice(piece);
        let take = if n % 3 == 2 {
            seed as usize % 3
        } else {
            usize::MAX
        };
        for r in s.lines_bytes(&mut buf).take(take) {
            out.push(bytes_item(r, true));
        }
        if take == usize::MAX {
            // An unfinished line over the limit is dropped as it comes.
            assert!(
                buf.len() <= limit + piece.len(),
                "buffer {} > {limit} + {}",
                buf.len(),
                piece.len()
            );
        }
    }
    loop {
        let before = out.len();
        for r in s.lines_bytes(&mut buf) {
            out.push(bytes_item(r, true));
        }
        if out.len() == before {
            break;
        }
    }
    while let Some(r) = s.decode_bytes_eof(&mut buf) {
        out.push(bytes_item(r, false));
    }
    out
}

#[cfg(feature = "bytes")]
fn bytes_item(r: Result<bytes::Bytes, FrameError>, terminated: bool) -> Item {
    match r {
        Ok(b) => Item::Line(b.to_vec(), terminated),
        Err(FrameError::LineTooLong(_)) => Item::TooLong,
        Err(_) => Item::BadUtf8,
    }
}

pub fn check(data: &[u8]) {
    let (limit, seed, input) = match data {
        [l, s, rest @ ..] => {
            let limit = if *l == 0 {
                acp_codec::limits::DEFAULT_MAX_LINE_LEN
            } else {
                usize::from(*l % 64) + 1
            };
            (limit, u32::from(*s), rest)
        }
        _ => return,
    };
    let expected = oracle(limit, input);
    assert_eq!(
        one_shot(limit, input),
        expected,
        "one-shot differs from the oracle"
    );
    let split = pieces(limit, input, seed);
    assert_eq!(split, expected, "pieces differ from the oracle");
    let batched = batches(limit, input, seed);
    assert_eq!(batched, expected, "lines() differs from the oracle");
    #[cfg(feature = "bytes")]
    bytes_agree(limit, input, seed, expected);
}

/// `decode_bytes` gives the same lines (terminated flags aside).
#[cfg(feature = "bytes")]
pub fn bytes_agree(limit: usize, input: &[u8], seed: u32, expected: Vec<Item>) {
    let via_bytes = bytes_variant(limit, input, seed);
    let via_lines_bytes = bytes_lines_variant(limit, input, seed);
    let strip = |v: Vec<Item>| -> Vec<Item> {
        v.into_iter()
            .map(|i| match i {
                Item::Line(b, _) => Item::Line(b, true),
                other => other,
            })
            .collect()
    };
    assert_eq!(strip(via_lines_bytes), strip(expected.clone()));
    assert_eq!(strip(via_bytes), strip(expected));
}
