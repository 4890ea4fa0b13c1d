//! The invariant behind the `line_splitter` fuzz target, shared with
//! `tests/integration/fuzz_corpus.rs`, which replays the committed seeds.
//!
//! Input: byte 0 picks the line limit (1..=64, or the default when 0), byte 1
//! seeds the piece sizes; the rest is the stream. Asserted:
//! - any split of the input gives the same items as one-shot decoding,
//!   through `decode` and through the batch iterator `lines`;
//! - both agree with a naive oracle built on `split(b'\n')`;
//! - the caller's buffer never holds more than the limit plus one read;
//! - the `Bytes` variant gives the same lines (with feature `bytes`);
//! - pass-through splitting (`RawLineSplitter::decode`, and its
//!   `decode_bytes` with feature `bytes`) hands back every byte: the items
//!   put end to end are the input, for any split; each line within the
//!   limit is one item with its terminator, each line over it the pieces of
//!   one `TooLong` item, as an oracle built on `split_inclusive(b'\n')`
//!   says; the buffer never holds more than the limit plus one read; fed a
//!   byte at a time it agrees too; each line's text (`RawLine::text`, with
//!   feature `alloc`) is its content as `str::from_utf8` reads it, and
//!   holds no newline; so is each `Bytes` line's owned text made from a
//!   prefix checked beforehand (`RawLine::into_text_checked_from`, with
//!   feature `bytes`).

use acp_codec::framing::{Ending, RawItem, RawLineSplitter};
use acp_codec::{FrameError, Limits, LineSplitter};

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
    passthrough_agrees(limit, input, seed);
}

/// A pass-through item, with the pieces of an oversized line joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    Line(Vec<u8>, Ending),
    TooLong(Vec<u8>),
}

/// What pass-through splitting must give, from `split_inclusive(b'\n')`.
pub fn raw_oracle(limit: usize, input: &[u8]) -> Vec<Raw> {
    input
        .split_inclusive(|&b| b == b'\n')
        .map(|part| {
            let content = part.strip_suffix(b"\n").unwrap_or(part);
            if content.len() > limit {
                return Raw::TooLong(part.to_vec());
            }
            let ending = if part.ends_with(b"\r\n") {
                Ending::CrLf
            } else if part.ends_with(b"\n") {
                Ending::Lf
            } else {
                Ending::Unterminated
            };
            Raw::Line(part.to_vec(), ending)
        })
        .collect()
}

/// Collects pass-through items, joining an oversized line's pieces; checks
/// what each item says of itself.
struct RawCollector {
    out: Vec<Raw>,
    /// Inside an oversized line whose last piece has not come.
    open: bool,
}

impl RawCollector {
    fn push<B: AsRef<[u8]>>(&mut self, item: RawItem<B>, limit: usize) {
        let bytes = item.as_bytes().to_vec();
        assert!(!bytes.is_empty(), "an empty item");
        match item {
            RawItem::Line(line) => {
                assert!(!self.open, "a line inside an oversized one");
                assert_eq!(line.content().len() + line.ending().len(), bytes.len());
                #[cfg(feature = "alloc")]
                {
                    // Its text: the content as the standard check reads
                    // it, known (and found) to hold no newline.
                    let text = line.text();
                    assert_eq!(
                        text.as_ref().map(|t| t.as_str()).map_err(|e| *e),
                        core::str::from_utf8(line.content()),
                        "RawLine::text differs from str::from_utf8"
                    );
                    if let Ok(text) = &text {
                        assert!(!text.holds_newline() && !text.as_str().contains('\n'));
                    }
                }
                self.out.push(Raw::Line(bytes, line.ending()));
            }
            RawItem::TooLong { error, done, .. } => {
                assert!(!self.open, "an oversized line inside another");
                assert_eq!(error.limit(), limit);
                assert!(error.seen() > limit);
                self.out.push(Raw::TooLong(bytes));
                self.open = !done;
            }
            RawItem::Rest { done, .. } => {
                assert!(self.open, "a piece of no oversized line");
                match self.out.last_mut() {
                    Some(Raw::TooLong(all)) => all.extend_from_slice(&bytes),
                    _ => panic!("a piece after a line"),
                }
                self.open = !done;
            }
        }
    }
}

/// Pass-through over reads whose sizes come from `seed` (1 to 7 bytes;
/// `seed` 0 is a byte a read), borrowed.
pub fn passthrough(limit: usize, input: &[u8], seed: u32) -> Vec<Raw> {
    let mut s = RawLineSplitter::with_limits(&Limits::new().with_max_line_len(limit));
    let mut c = RawCollector {
        out: Vec::new(),
        open: false,
    };
    let mut buf = Vec::new();
    for piece in input.chunks(1 + seed as usize % 7) {
        buf.extend_from_slice(piece);
        while let Some(item) = s.decode(&buf) {
            let n = item.len();
            c.push(item, limit);
            buf.drain(..n);
        }
        assert!(
            buf.len() <= limit + piece.len(),
            "buffer {} > {limit} + {}",
            buf.len(),
            piece.len()
        );
    }
    while let Some(item) = s.decode_eof(&buf) {
        let n = item.len();
        c.push(item, limit);
        buf.drain(..n);
    }
    assert!(buf.is_empty());
    c.out
}

/// Pass-through over `BytesMut`, other read sizes.
#[cfg(feature = "bytes")]
pub fn passthrough_bytes(limit: usize, input: &[u8], seed: u32) -> Vec<Raw> {
    let mut s = RawLineSplitter::with_limits(&Limits::new().with_max_line_len(limit));
    let mut c = RawCollector {
        out: Vec::new(),
        open: false,
    };
    let mut buf = bytes::BytesMut::new();
    let mut n = seed;
    for piece in input.chunks(1 + seed as usize % 13) {
        buf.extend_from_slice(piece);
        while let Some(item) = s.decode_bytes(&mut buf) {
            if let RawItem::Line(line) = &item {
                n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                text_checked_in_part(line.clone(), n >> 8);
            }
            c.push(item, limit);
        }
        assert!(buf.len() <= limit + piece.len());
    }
    while let Some(item) = s.decode_bytes_eof(&mut buf) {
        if let RawItem::Line(line) = &item {
            text_checked_in_part(line.clone(), n >> 8);
        }
        c.push(item, limit);
    }
    assert!(buf.is_empty());
    c.out
}

/// A line's owned text from a prefix a reader checked as it came (one the
/// standard check takes, ending at a character's end, its length picked
/// by `pick`): the content as `String::from_utf8` reads it, bad bytes
/// refused wherever they lie, and no newline in it.
#[cfg(feature = "bytes")]
#[allow(unsafe_code)]
fn text_checked_in_part(line: acp_codec::framing::RawLine<bytes::Bytes>, pick: u32) {
    let content = line.content().to_vec();
    let oracle = String::from_utf8(content.clone()).ok();
    let good = match core::str::from_utf8(&content) {
        Ok(_) => content.len(),
        Err(e) => e.valid_up_to(),
    };
    let mut checked = pick as usize % (good + 1);
    while core::str::from_utf8(&content[..checked]).is_err() {
        checked -= 1;
    }
    // SAFETY: the content's first `checked` bytes are UTF-8 ending at a
    // character's end: the standard check just took them.
    let text = unsafe { line.into_text_checked_from(checked) }.ok();
    assert_eq!(
        text.as_ref().map(|t| t.as_str()),
        oracle.as_deref(),
        "RawLine::into_text_checked_from differs from String::from_utf8"
    );
    if let Some(t) = &text {
        assert!(!t.holds_newline() && !t.as_str().contains('\n'));
    }
}

/// Pass-through is exact and agrees with its oracle, however split.
pub fn passthrough_agrees(limit: usize, input: &[u8], seed: u32) {
    let expected = raw_oracle(limit, input);
    let got = passthrough(limit, input, seed);
    let joined: Vec<u8> = got
        .iter()
        .flat_map(|r| match r {
            Raw::Line(b, _) | Raw::TooLong(b) => b.iter().copied(),
        })
        .collect();
    assert_eq!(joined, input, "pass-through lost or changed bytes");
    assert_eq!(got, expected, "pass-through differs from its oracle");
    assert_eq!(
        passthrough(limit, input, 0),
        expected,
        "pass-through a byte at a time differs"
    );
    #[cfg(feature = "bytes")]
    assert_eq!(
        passthrough_bytes(limit, input, seed),
        expected,
        "RawLineSplitter::decode_bytes differs"
    );
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
