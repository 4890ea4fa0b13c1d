//! Text dense with escapes, for the unescaper's block loop: the unescaped
//! text is built in a buffer on the stack (the stage) and handed to the
//! sink a stretch at a time, not put into the string piece by piece.
//!
//! Putting each run of plain text and each escape into a `String` costs a
//! capacity check, character-boundary checks and a length kept in memory:
//! a few nanoseconds an escape, most of the work in text with an escape
//! every few bytes (source code, logs, diffs, text escaped to ASCII). Here
//! such a stretch is written into the stage, an array indexed by a
//! register:
//!
//! - each run of plain text (up to sixty-four bytes) copied as a block of
//!   fixed size and cut back (the next write starts where the run ends);
//! - each one-letter escape one byte, from a table;
//! - each `\u` escape its UTF-8 bytes computed as one word and written
//!   whole: a table by the code point's high bits for the basic plane
//!   ([`bmp_word`]), arithmetic for a surrogate pair ([`astral_word`]), no
//!   branch on the character's width.
//!
//! The stage is handed over when it fills and when the stretch ends,
//! checked as UTF-8 at once (`simdutf8`, vector code; the check is what
//! safe code pays to append bytes to a `String`, and one check of two
//! kilobytes costs less than the checks of every piece).
//!
//! Which bytes start escapes is read a block of sixty-four at a time: the
//! special bytes (`"`, `\`, control characters) less those a backslash
//! escapes ([`escaped_bits`]), so that each escape is the next bit and
//! taking it is `x & (x - 1)`.
//!
//! The block loop comes here only where the text is dense ([`starts_dense`]:
//! four backslashes or more in a block and in the next)
//! and takes back a run of plain text longer than sixty-four bytes: there
//! a stage costs more than it saves (the check of each byte, and a call to
//! hand it over), and the block loop puts such runs straight from the
//! text.

use super::{code_point, hex4, TextSink, SHORT_ESCAPE};
use crate::json::vector::{backslash_and_special_bits, backslash_bits, BLOCK};

/// Whether the block loop uses the stage on this build: where `simdutf8`
/// checks UTF-8 with vector code (with `std` it picks AVX2 or SSE4.2 at
/// run time; without it, on x86 only when the build enables them; NEON on
/// 64-bit ARM always). Elsewhere its check is the standard library's,
/// several times slower, and the stage would cost more than it saves.
pub(super) const STAGED: bool = cfg!(any(
    feature = "std",
    target_arch = "aarch64",
    target_feature = "avx2",
    target_feature = "sse4.2"
));

/// The stage's size in bytes: `FILL`, and the `REACH` bytes a write that
/// starts below it may reach past it.
pub(super) const STAGE: usize = FILL + REACH;

/// The bytes the loop may write from a position: a copy of up to 64, or an
/// escape's four after a run of up to 64.
const REACH: usize = 68;

/// The part of the stage that holds text: small enough to stay in the
/// first-level cache and to be zeroed cheaply once per string, large enough
/// that handing it over is rare. Every position written is below it, and
/// it is a power of two: a position masked by `FILL - 1` is itself, and
/// the compiler sees each write within the stage with no check an escape.
const FILL: usize = 2048;

/// The room the stage must have at the start of a block: the text a block
/// consumes (its 64 bytes, a run of up to 64 begun before it, an escape of
/// up to 12 ending past it) unescapes to no more bytes, and a copy writes
/// up to `REACH` bytes past where it starts.
const ROOM: usize = 256;

/// The bytes of text read around a block: `AHEAD` before it (where a run
/// of up to 32 bytes that ends in it may start) and 64 after it (the
/// twelve bytes of an escape that starts in it; the copies' thirty-two).
const WINDOW: usize = AHEAD + BLOCK + 64;

/// Where the block starts in the window. The loop counts places from the
/// window's start, with the block at this constant: the places are small
/// numbers, so the look-ups in the window need no check, and the text's
/// offsets are needed only when the loop stops. A stretch starts no
/// nearer the text's start ([`starts_dense`]).
const AHEAD: usize = 32;

/// What the dense loop leaves to the block loop.
pub(super) enum Dense {
    /// Go on from the block at `at`, with the plain text from `run` not put
    /// yet (`at` is never inside an escape).
    Resume { run: usize, at: usize },
    /// The string's closing quote is at this offset.
    End(usize),
}

/// Where the loop over one block's escapes stops.
enum Stop {
    /// No escape left in the block.
    Block,
    /// Plain text longer than the stage takes in one copy, or the stage
    /// full, before the special byte at this offset: the block loop's.
    Leave(usize),
    /// A quote or a control character at this offset.
    End(usize),
    /// An escape that is not JSON at this offset.
    Bad(usize),
}

/// Whether text from the block at `at` (`block`, whose special bits are
/// `bits`) is dense enough for the stage: four backslashes or more in it
/// and in the next one, with the window's `AHEAD` bytes before it.
/// Backslashes, not special bytes: after a short string the rest of a JSON
/// line is dense with quotes, and a string that ends there is not worth a
/// stage.
#[inline(always)]
pub(super) fn starts_dense(b: &[u8], at: usize, block: &[u8; BLOCK], bits: u64) -> bool {
    at >= AHEAD
        && at_least_four(bits)
        && at_least_four(backslash_bits(block))
        && b.get(at.wrapping_add(BLOCK)..)
            .and_then(|r| r.first_chunk::<BLOCK>())
            .is_some_and(|next| at_least_four(backslash_bits(next)))
}

/// Whether four bits or more are set (three cleared, some left).
#[inline(always)]
fn at_least_four(bits: u64) -> bool {
    let x = bits & bits.wrapping_sub(1);
    let x = x & x.wrapping_sub(1);
    x & x.wrapping_sub(1) != 0
}

/// Bit `k` is set when byte `k` of a block is escaped: it follows a
/// backslash that starts an escape (bit `k - 1` of `backslash`, the
/// block's backslashes, at an odd place in its run of backslashes). The
/// block's first byte must not be escaped: the loops start a block after a
/// whole escape or in plain text.
///
/// In a run of backslashes the first starts an escape and the second is
/// escaped, and so on. Subtracting the runs from the word of odd bits (with
/// each run's first backslash moved up by one) carries through each run
/// and sets, at its end, a bit that says whether the run started at an odd
/// or an even place, so whether the byte after it is escaped (the carry
/// trick of simdjson's string scanner).
#[inline(always)]
pub(crate) fn escaped_bits(backslash: u64) -> u64 {
    const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    let codes = ((backslash << 1) | ODD).wrapping_sub(backslash) ^ ODD;
    codes ^ backslash
}

/// For a code point `c` of the basic plane, by `c >> 6`: its UTF-8 bytes
/// but the last, in the low bytes; the byte to xor with `0x80 | (c & 0x3F)`
/// (the last byte's continuation form) to make it the last byte, at its
/// place; and the length, in the top byte.
// Built at compile time, where an index out of bounds is a build error,
// not a panic.
#[allow(clippy::indexing_slicing)]
static BMP_HEAD: [u32; 1024] = {
    let mut table = [0u32; 1024];
    let mut high = 0u32;
    while high < 1024 {
        let c = high << 6;
        table[high as usize] = if c < 0x80 {
            // One byte, c itself: (0x80 | low) ^ (0x80 | (c & 0x40)).
            (0x80 ^ (c & 0xC0)) | (1 << 24)
        } else if c < 0x800 {
            (0xC0 | (c >> 6)) | (2 << 24)
        } else {
            (0xE0 | (c >> 12)) | ((0x80 | ((c >> 6) & 0x3F)) << 8) | (3 << 24)
        };
        high += 1;
    }
    table
};

/// The UTF-8 bytes of `c` (a code point below `0x10000`, not a surrogate),
/// little-endian in a word, and their number.
#[inline(always)]
pub(super) fn bmp_word(c: u32) -> ([u8; 4], usize) {
    let head = BMP_HEAD
        .get(((c >> 6) & 0x3FF) as usize)
        .copied()
        .unwrap_or_default();
    let len = (head >> 24) as usize;
    let last = (0x80 | (c & 0x3F)) << ((len.wrapping_sub(1) & 3) << 3);
    (((head & 0x00FF_FFFF) ^ last).to_le_bytes(), len)
}

/// The four UTF-8 bytes of `c`, a code point from `0x10000` to
/// `0x10FFFF`.
#[inline(always)]
pub(super) fn astral_word(c: u32) -> [u8; 4] {
    [
        0xF0 | (c >> 18) as u8,
        0x80 | ((c >> 12) & 0x3F) as u8,
        0x80 | ((c >> 6) & 0x3F) as u8,
        0x80 | (c & 0x3F) as u8,
    ]
}

/// Hands the stage's first `len` bytes to `out`.
///
/// # Errors
///
/// `at` if they are not UTF-8, which the loop never builds (runs of the
/// text cut before an ASCII byte, and whole characters).
#[inline(never)]
fn hand_over<S: TextSink>(
    stage: &[u8; STAGE],
    len: usize,
    out: &mut S,
    at: usize,
) -> Result<(), usize> {
    if out.put_built(stage.get(..len).unwrap_or_default()) {
        Ok(())
    } else {
        Err(at)
    }
}

/// Copies the `len` bytes of plain text at `from` in `window` (the
/// text's bytes from `start`) into `dst` as a block of fixed size, whose
/// bytes past `len` the next write covers: thirty-two from the window
/// (a run of up to 32 starts within it), sixty-four from the text for a
/// longer run. False, and nothing copied, for a run longer than 64 (or
/// without 64 bytes of text from its start).
#[inline(always)]
fn put_run(
    b: &[u8],
    start: usize,
    window: &[u8; WINDOW],
    from: usize,
    len: usize,
    dst: &mut [u8; REACH],
) -> bool {
    // Thirty-two bytes from the window whatever the run's length: for a
    // run of up to 32, `from` is below 96 (at most 32 bytes before a
    // special byte of the block) and the mask changes nothing; a longer
    // run is copied over them below. One straight path for the common
    // case, the branch after it.
    if let (Some(d), Some(s)) = (
        dst.first_chunk_mut::<32>(),
        window.get(from & 127..).and_then(|r| r.first_chunk::<32>()),
    ) {
        *d = *s;
    }
    if len <= 32 {
        return true;
    }
    match b
        .get(start.wrapping_add(from)..)
        .and_then(|r| r.first_chunk::<64>())
        .filter(|_| len <= 64)
    {
        Some(s) => {
            if let Some(d) = dst.first_chunk_mut::<64>() {
                *d = *s;
            }
            true
        }
        None => false,
    }
}

/// Unescapes dense text into `out` through `stage`, from the block at `at`
/// with plain text from `run` not put yet, block by block while the text
/// allows: until a run of plain text longer than sixty-four bytes, the
/// closing quote, an error, or the last `WINDOW` bytes of the text.
///
/// # Errors
///
/// As the block loop: the offset of the first byte that is not string
/// content; `out` then holds a prefix of the content.
#[inline(never)]
pub(super) fn dense_blocks<S: TextSink>(
    text: &str,
    mut run: usize,
    mut at: usize,
    out: &mut S,
    stage: &mut [u8; STAGE],
) -> Result<Dense, usize> {
    #[cfg(test)]
    tests::STINTS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    let b = text.as_bytes();
    let mut pos = 0usize;
    loop {
        if pos > FILL - ROOM {
            hand_over(stage, pos, out, run)?;
            pos = 0;
        }
        // The window holds the block at `AHEAD` (`at` is at least that:
        // [`starts_dense`] says so, and it only grows).
        let start = at.wrapping_sub(AHEAD);
        let Some(window) = b.get(start..).and_then(|r| r.first_chunk::<WINDOW>()) else {
            break;
        };
        let Some(block) = window.get(AHEAD..).and_then(|r| r.first_chunk::<BLOCK>()) else {
            break;
        };
        let (backslash, special) = backslash_and_special_bits(block);
        let escaped = escaped_bits(backslash);
        // The first end (a quote or a control character no backslash
        // escapes), and the escapes' backslashes before it: each escape is
        // the next bit, and the loop over them tests no end.
        let ends = special & !backslash & !escaped;
        let end = ends & ends.wrapping_neg();
        let mut bits = backslash & !escaped & end.wrapping_sub(1);
        // Where the plain text not put yet starts, in the window (below
        // its start, wrapped, when the run began before it).
        let mut from = run.wrapping_sub(start);
        let stop = 'block: {
            while bits != 0 {
                let bit = (bits.trailing_zeros() & 63) as usize;
                // The backslash's place in the window.
                let here = bit.wrapping_add(AHEAD);
                // Plain text from `from` to `here`.
                let len = here.wrapping_sub(from);
                // `pos` is below `FILL` (the room checked at each block),
                // so the mask changes nothing and bounds the look-up.
                debug_assert!(pos < FILL);
                let Some(dst) = stage
                    .get_mut(pos & (FILL - 1)..)
                    .and_then(|r| r.first_chunk_mut::<REACH>())
                else {
                    break 'block Stop::Leave(here);
                };
                if !put_run(b, start, window, from, len, dst) {
                    break 'block Stop::Leave(here);
                }
                bits &= bits.wrapping_sub(1);
                // The escape's bytes, and where its text goes (`len` <= 64).
                let (Some(esc), Some(put)) = (
                    window.get(here..).and_then(|r| r.first_chunk::<12>()),
                    dst.get_mut(len & 127..)
                        .and_then(|r| r.first_chunk_mut::<4>()),
                ) else {
                    break 'block Stop::Leave(here);
                };
                let [_, letter, h0, h1, h2, h3, b6, u7, l0, l1, l2, l3] = *esc;
                let c = SHORT_ESCAPE.get(usize::from(letter)).copied().unwrap_or(0);
                if c != 0 {
                    put[0] = c;
                    pos = pos.wrapping_add(len).wrapping_add(1);
                    from = here.wrapping_add(2);
                    continue;
                }
                let Some(high) = hex4([h0, h1, h2, h3]).filter(|_| letter == b'u') else {
                    pos = pos.wrapping_add(len);
                    break 'block Stop::Bad(here);
                };
                let Ok((c, escape)) = code_point(high, &[b6, u7, l0, l1, l2, l3]) else {
                    pos = pos.wrapping_add(len);
                    break 'block Stop::Bad(here);
                };
                let (bytes, used) = if escape == 6 {
                    from = here.wrapping_add(6);
                    bmp_word(c)
                } else {
                    // A surrogate pair: the trailing half's backslash is
                    // the next bit when it is in this block.
                    bits &= bits.wrapping_sub(1);
                    from = here.wrapping_add(12);
                    (astral_word(c), 4)
                };
                *put = bytes;
                pos = pos.wrapping_add(len).wrapping_add(used);
            }
            if end == 0 {
                break 'block Stop::Block;
            }
            // The end, after the escapes: the plain text up to it.
            let here = ((end.trailing_zeros() & 63) as usize).wrapping_add(AHEAD);
            let len = here.wrapping_sub(from);
            let Some(dst) = stage
                .get_mut(pos & (FILL - 1)..)
                .and_then(|r| r.first_chunk_mut::<REACH>())
            else {
                break 'block Stop::Leave(here);
            };
            if !put_run(b, start, window, from, len, dst) {
                break 'block Stop::Leave(here);
            }
            pos = pos.wrapping_add(len);
            Stop::End(here)
        };
        run = start.wrapping_add(from);
        match stop {
            Stop::Block => at = run.max(at.wrapping_add(BLOCK)),
            Stop::Leave(n) => {
                hand_over(stage, pos, out, run)?;
                return Ok(Dense::Resume {
                    run,
                    at: start.wrapping_add(n),
                });
            }
            Stop::End(n) => {
                let n = start.wrapping_add(n);
                hand_over(stage, pos, out, run)?;
                return if b.get(n) == Some(&b'"') {
                    Ok(Dense::End(n))
                } else {
                    Err(n)
                };
            }
            Stop::Bad(n) => {
                hand_over(stage, pos, out, run)?;
                return Err(start.wrapping_add(n));
            }
        }
    }
    hand_over(stage, pos, out, run)?;
    Ok(Dense::Resume { run, at })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::unescape::{
        unescape_token, unescape_token_staged, unescape_token_words, unescaped_len,
        unescaped_len_staged, unquote,
    };
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// How many times the block loop came here: the tests below check
    /// that their texts do.
    pub(super) static STINTS: AtomicUsize = AtomicUsize::new(0);

    /// The escaped bytes of a block whose first byte is not escaped, byte
    /// by byte: a backslash that is not escaped escapes the next.
    fn escaped_naive(block: &[u8; BLOCK]) -> u64 {
        let mut bits = 0u64;
        let mut i = 0;
        while i < BLOCK {
            if block[i] == b'\\' {
                if i + 1 < BLOCK {
                    bits |= 1 << (i + 1);
                }
                i += 2;
            } else {
                i += 1;
            }
        }
        bits
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Runs of backslashes of every length at every place.
        #[test]
        fn escaped_bits_match_a_walk_over_the_bytes(
            pattern in proptest::num::u64::ANY,
            dense in proptest::num::u64::ANY,
        ) {
            // Mostly backslashes where `dense` says so, so that long runs
            // occur.
            let mut block = [b'a'; BLOCK];
            for (i, byte) in block.iter_mut().enumerate() {
                if (pattern | dense) >> i & 1 == 1 {
                    *byte = b'\\';
                }
            }
            let got = escaped_bits(backslash_bits(&block));
            proptest::prop_assert_eq!(got, escaped_naive(&block), "{:?}", core::str::from_utf8(&block));
        }
    }

    #[test]
    fn escaped_bits_of_runs_at_every_place() {
        for start in 0..BLOCK {
            for len in 1..=BLOCK - start {
                let mut block = [b'x'; BLOCK];
                block[start..start + len].fill(b'\\');
                assert_eq!(
                    escaped_bits(backslash_bits(&block)),
                    escaped_naive(&block),
                    "{start} {len}"
                );
            }
        }
    }

    /// Every code point's word against `char::encode_utf8`.
    #[test]
    fn every_code_point_is_written_as_encode_utf8() {
        for c in (0..0xD800).chain(0xE000..=0x10_FFFF) {
            let ch = char::from_u32(c).unwrap();
            let mut want = [0u8; 4];
            let want = ch.encode_utf8(&mut want).as_bytes();
            if c < 0x1_0000 {
                let (bytes, len) = bmp_word(c);
                assert_eq!(&bytes[..len], want, "{c:#x}");
            } else {
                assert_eq!(&astral_word(c)[..], want, "{c:#x}");
            }
        }
    }

    /// Escapes, good and bad.
    const GOOD: [&str; 19] = [
        r#"\""#,
        r"\\",
        r"\/",
        r"\b",
        r"\f",
        r"\n",
        r"\r",
        r"\t",
        r"\u0041",
        r"\u00e9",
        r"\u07FF",
        r"\u0800",
        r"\u20ac",
        r"\uffff",
        r"\u0000",
        r"\u001f",
        r"\uD83E\uDD80",
        r"\udbff\udfff",
        r"\uD800\uDC00",
    ];
    const BAD: [&str; 10] = [
        r"\x",
        r"\ud800",
        r"\udc00",
        r"\uD83D\u0041",
        r"\uD83Dx",
        r"\u12",
        "\u{1}",
        "\"",
        r"\",
        r"\u00G0",
    ];

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Text dense with escapes: runs of plain text (ASCII or wide
    /// characters) of 0 to 7 bytes mostly, sometimes up to 40 or 80 (past
    /// the copies of 32 and 64 bytes), each followed by an escape; with
    /// `bad`, one bad escape or stray quote somewhere.
    fn dense_text(rng: &mut Rng, bytes: usize, bad: bool) -> String {
        let mut text = String::new();
        let wrong = if bad { rng.below(bytes) } else { usize::MAX };
        let mut put_wrong = false;
        while text.len() < bytes {
            let run = match rng.below(20) {
                0 => 33 + rng.below(48),
                1 | 2 => 8 + rng.below(30),
                _ => rng.below(8),
            };
            let fill = ['a', 'é', '中', '🦀'][rng.below(4)];
            let mut plain = String::new();
            while plain.len() + fill.len_utf8() <= run {
                plain.push(fill);
            }
            while plain.len() < run {
                plain.push('z');
            }
            text.push_str(&plain);
            if !put_wrong && text.len() >= wrong {
                text.push_str(BAD[rng.below(BAD.len())]);
                put_wrong = true;
            } else {
                text.push_str(GOOD[rng.below(GOOD.len())]);
            }
        }
        text
    }

    /// The string token at the start of `text` read by the block loop
    /// taking dense text through the stage, by the build's own loop (the
    /// same, where the build uses the stage) and by the word loop, against
    /// `serde_json`: the same text and end, or all refused at the same
    /// offset; and the length counted (the counter sink, through the stage
    /// and not) and `unquote` agree.
    fn check(token_and_more: &str, token: &str) {
        let mut first = serde_json::Deserializer::from_str(token_and_more).into_iter::<String>();
        let theirs = first
            .next()
            .and_then(Result::ok)
            .map(|s| (s, first.byte_offset()));
        let staged = unescape_token_staged(token_and_more, 1, 0);
        let read = unescape_token(token_and_more, 1, 0);
        let words = unescape_token_words(token_and_more, 1, 0);
        assert_eq!(staged, words, "{token_and_more}");
        assert_eq!(read, words, "{token_and_more}");
        assert_eq!(staged.ok(), theirs, "{token_and_more}");
        let whole = serde_json::from_str::<String>(token).ok();
        let len = whole.as_ref().map(String::len);
        assert_eq!(unescaped_len(token).ok(), len, "{token}");
        assert_eq!(unescaped_len_staged(token), len, "{token}");
        let quoted = unquote::<serde_json::Error>(token).ok();
        assert_eq!(quoted.as_deref(), whole.as_deref(), "{token}");
    }

    /// Dense texts of many lengths after pads of every length (the blocks
    /// at every alignment), good and with one error, alone and followed by
    /// more of a line.
    #[test]
    fn dense_text_unescapes_as_serde_json() {
        let before = STINTS.load(Ordering::Relaxed);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for case in 0..3000 {
            let pad = "p".repeat(case % 70);
            let bytes = [200, 400, 1000, 3000, 9000][case % 5];
            let body = dense_text(&mut rng, bytes, case % 3 == 0);
            let token = format!("\"{pad}{body}\"");
            check(&token, &token);
            check(&format!("{token}}}}}, \"more\": [1, 2, \"\\n\"]}}"), &token);
        }
        assert!(
            STINTS.load(Ordering::Relaxed) > before,
            "the stage was never used"
        );
    }

    /// Every `\u` escape (each value of four digits, and a leading
    /// surrogate before each kind of second half) amid dense text: the
    /// stage and the word loop read it alike, and as `serde_json` does
    /// (the one reading of `\u`, `code_point`, serves both).
    #[test]
    fn every_unicode_escape_reads_alike_through_the_stage_and_the_word_loop() {
        let before = STINTS.load(Ordering::Relaxed);
        let dense = r"\n\t".repeat(12);
        let mut escapes: Vec<String> = (0..=0xFFFF_u32).map(|c| format!(r"\u{c:04x}")).collect();
        for second in [
            r"\udc00", r"\uDFFF", r"\ue000", r"\ud800", r"\u0041", r"\n", "x", r"\u12",
        ] {
            escapes.push(format!(r"\ud83e{second}"));
            escapes.push(format!(r"\uDBFF{second}"));
        }
        for escape in &escapes {
            let token = format!("\"{dense}{escape}{dense}\"");
            check(&token, &token);
        }
        assert!(
            STINTS.load(Ordering::Relaxed) > before,
            "the stage was never used"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn dense_text_from_any_seed_unescapes_as_serde_json(
            seed in 1u64..,
            pad in 0usize..70,
            bytes in 100usize..5000,
            bad in proptest::bool::ANY,
        ) {
            let body = dense_text(&mut Rng(seed), bytes, bad);
            let token = format!("\"{}{body}\"", "p".repeat(pad));
            check(&token, &token);
        }
    }
}
