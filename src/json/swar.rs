//! Eight bytes at a time (SWAR): the one scanner for the bytes that end
//! plain JSON string text — `"`, `\\` and control characters.
//!
//! Reading a string token and deciding whether text needs escaping look for
//! the same set of bytes, so both use [`find_special`]. Strings in agent
//! traffic are mostly short, where `memchr`'s set-up would cost more than
//! this scan; where the target has vector registers, sixteen bytes are
//! one vector test (`first16`), and past the first sixty-four bytes, long
//! text is passed a block of sixty-four bytes a test.

/// The offset of the first `"`, `\\` or control character at or after
/// `start`.
///
/// The first [`BLOCK`] bytes are searched sixteen a step ([`first16`]: one
/// vector test, or two eight-byte words): strings in ACP lines are mostly
/// short, where `memchr`'s set-up would cost more than the scan. Past them, on targets
/// with vector registers ([`VECTOR_BLOCKS`]), blocks that hold none of
/// those bytes are passed with one test each ([`block_has_special`]), and
/// the block that holds one is searched sixteen bytes a step.
///
/// The block test only says where to search: every offset returned is
/// found by the word search, so the two cannot disagree on the answer.
#[inline]
pub(crate) fn find_special(b: &[u8], start: usize) -> Option<usize> {
    find_special_on::<VECTOR_BLOCKS>(b, start)
}

/// [`find_special`] with whole blocks passed by one test (`VECTOR`) or
/// not: the target's choice is [`VECTOR_BLOCKS`]; the tests run both.
#[inline(always)]
fn find_special_on<const VECTOR: bool>(b: &[u8], start: usize) -> Option<usize> {
    let mut rest = b.get(start..)?;
    // Sixteen-byte steps before the next block test: a block's worth
    // (most strings end within it, and where a block holds a special
    // byte, it is there).
    let steps = BLOCK / 16;
    loop {
        for _ in 0..steps {
            let Some((pair, tail)) = rest.split_first_chunk::<16>() else {
                return find_special_short(b, rest);
            };
            if let Some(at) = first16::<VECTOR>(pair) {
                return Some(b.len().saturating_sub(rest.len()).saturating_add(at));
            }
            rest = tail;
        }
        while let Some((block, tail)) = rest.split_first_chunk::<BLOCK>() {
            if !VECTOR || block_has_special(block) {
                break;
            }
            rest = tail;
        }
    }
}

/// [`find_special`] over `rest`, the last fewer than sixteen bytes of `b`:
/// one word, then byte by byte.
#[inline]
fn find_special_short(b: &[u8], mut rest: &[u8]) -> Option<usize> {
    if let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let m = special_mask(u64::from_le_bytes(*word));
        if m != 0 {
            let at = (m.trailing_zeros() / 8) as usize;
            return Some(b.len().saturating_sub(rest.len()).saturating_add(at));
        }
        rest = tail;
    }
    let at = rest.iter().position(|&c| is_special(c))?;
    Some(b.len().saturating_sub(rest.len()).saturating_add(at))
}

/// The offset of the first `"`, `\\` or control character of `pair`: one
/// vector test (`VECTOR`, where the crate has the vector classifier), or
/// two words. The tests run both.
#[inline(always)]
fn first16<const VECTOR: bool>(pair: &[u8; 16]) -> Option<usize> {
    #[cfg(all(
        feature = "alloc",
        any(
            target_feature = "sse2",
            all(target_arch = "aarch64", target_feature = "neon")
        )
    ))]
    if VECTOR {
        return super::vector::first_special(pair);
    }
    let (lo, hi) = pair.split_at(8);
    let word = |w: &[u8]| {
        w.try_into()
            .map_or(0, |w| special_mask(u64::from_le_bytes(w)))
    };
    let (lo, hi) = (word(lo), word(hi));
    if lo != 0 {
        Some((lo.trailing_zeros() / 8) as usize)
    } else if hi != 0 {
        Some((8 | (hi.trailing_zeros() / 8)) as usize)
    } else {
        None
    }
}

/// Whether `c` ends plain string text: a `"`, `\\` or control character.
/// The three tests are or-ed without a branch, so that a loop over a block
/// ([`block_has_special`]) compiles to vector compares.
#[inline(always)]
const fn is_special(c: u8) -> bool {
    (c == b'"') | (c == b'\\') | (c < 0x20)
}

/// The bytes [`find_special`] passes with one test: four vector registers
/// of sixteen bytes.
const BLOCK: usize = 64;

/// Whether the target has the vector registers [`block_has_special`] is
/// compiled to (SSE2 on x86, NEON on 64-bit ARM). Elsewhere (32-bit ARM
/// without NEON, a Raspberry Pi's default target among them) the test
/// would be sixty-four byte compares, slower than the words it passes, so
/// [`find_special`] searches word by word all the way.
const VECTOR_BLOCKS: bool = cfg!(any(target_feature = "sse2", target_arch = "aarch64"));

/// Whether `block` holds a `"`, `\\` or control character: [`is_special`]
/// of each byte, or-ed together without a branch, which the compiler turns
/// into vector compares where the target has them.
#[inline]
fn block_has_special(block: &[u8; BLOCK]) -> bool {
    let mut any = false;
    for &c in block {
        any |= is_special(c);
    }
    any
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const QUOTES: u64 = 0x2222_2222_2222_2222;
const BACKSLASHES: u64 = 0x5c5c_5c5c_5c5c_5c5c;
const SPACES: u64 = 0x2020_2020_2020_2020;

/// The high bit (with the other bits of the byte) of each zero byte of
/// `y`; above the lowest zero byte a flag may be false.
#[inline(always)]
fn zero_bytes(y: u64) -> u64 {
    y.wrapping_sub(ONES) & !y
}

/// The high bit of each byte of `x` (little endian) that is a `"`, `\\` or
/// control character. The lowest flagged byte is exact (a false flag can
/// only sit above a true one), which is all the callers use.
#[inline(always)]
pub(crate) fn special_mask(x: u64) -> u64 {
    (zero_bytes(x ^ QUOTES) | zero_bytes(x ^ BACKSLASHES) | (x.wrapping_sub(SPACES) & !x)) & HIGH
}

/// The offset of the first `"` at or after `from`: the next sixteen bytes
/// a word at a time (in text full of `\"` escapes the next quote is near),
/// then `memchr`. The lowest flagged byte of a word is exact, as in
/// [`special_mask`].
#[cfg(feature = "alloc")]
#[inline]
pub(crate) fn find_quote(b: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    for _ in 0..2 {
        let Some(word) = b.get(at..).and_then(|r| r.first_chunk::<8>()) else {
            break;
        };
        let m = zero_bytes(u64::from_le_bytes(*word) ^ QUOTES) & HIGH;
        if m != 0 {
            return at.checked_add((m.trailing_zeros() / 8) as usize);
        }
        at = at.saturating_add(8);
    }
    let found = memchr::memchr(b'"', b.get(at..)?)?;
    at.checked_add(found)
}

/// [`find_special`] for text where the special byte is usually within the
/// next sixteen (a key, a tag): two words, checked inline.
#[inline(always)]
pub(crate) fn short_special(b: &[u8], from: usize) -> Option<usize> {
    match near_special(b, from) {
        Near::At(n) => Some(n),
        Near::Further => find_special(b, from.checked_add(16)?),
        Near::Short => find_special(b, from),
    }
}

/// Where the first special byte of the sixteen at `from` is.
pub(crate) enum Near {
    /// Its offset.
    At(usize),
    /// None of the sixteen is special.
    Further,
    /// Fewer than sixteen bytes are left.
    Short,
}

/// The first special byte of the sixteen at `from` ([`first16`]),
/// checked inline.
#[inline(always)]
pub(crate) fn near_special(b: &[u8], from: usize) -> Near {
    let Some(pair) = b.get(from..).and_then(|r| r.first_chunk::<16>()) else {
        return Near::Short;
    };
    match first16::<VECTOR_BLOCKS>(pair) {
        Some(at) => from.checked_add(at).map_or(Near::Short, Near::At),
        None => Near::Further,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(b: &[u8], start: usize) -> Option<usize> {
        b.iter()
            .skip(start)
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            .map(|p| p + start)
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn find_quote_matches_a_byte_loop() {
        let text = br#"ab\"cd"efghijklmnopqrstuvwxyz0123456789"x"#;
        for from in 0..=text.len() {
            let want = text
                .get(from..)
                .and_then(|r| r.iter().position(|&c| c == b'"'))
                .map(|i| i + from);
            assert_eq!(find_quote(text, from), want, "{from}");
        }
        assert_eq!(find_quote(b"abc", 7), None);
    }

    #[test]
    fn find_special_matches_a_byte_loop() {
        for len in 0..40 {
            for at in 0..=len {
                for special in [b'"', b'\\', 0x00, 0x1f, b' ', 0x7f, 0xc3, b'!', b']'] {
                    let mut b = alloc::vec![b'a'; len];
                    if let Some(c) = b.get_mut(at) {
                        *c = special;
                    }
                    for start in 0..=len {
                        assert_eq!(find_special(&b, start), naive(&b, start), "{b:?} {start}");
                        assert_eq!(short_special(&b, start), naive(&b, start), "{b:?} {start}");
                    }
                }
            }
        }
        assert_eq!(find_special(b"ab", 5), None);
    }

    /// Past the first sixty-four bytes, whole blocks are passed with one
    /// test: a special byte at every place of a few blocks, found from
    /// starts inside and outside them, as a byte loop finds it, and text
    /// with none of them searched to its end.
    #[test]
    fn find_special_past_whole_blocks_matches_a_byte_loop() {
        let lens = [
            63, 64, 65, 79, 80, 81, 127, 128, 129, 143, 144, 145, 200, 257,
        ];
        for len in lens {
            let starts = [0, 1, 7, 8, 15, 16, 17, 31, 63, 64, 65, 100, len];
            for at in (0..len).chain([len]) {
                for special in [b'"', b'\\', 0x00, 0x1f, b' ', 0xc3] {
                    let mut b = alloc::vec![b'a'; len];
                    if let Some(c) = b.get_mut(at) {
                        *c = special;
                    }
                    for start in starts.into_iter().filter(|&s| s <= len) {
                        let want = naive(&b, start);
                        assert_eq!(find_special(&b, start), want, "{len} {at} {start}");
                        // Both paths, whichever this target takes.
                        let portable = find_special_on::<false>(&b, start);
                        assert_eq!(portable, want, "portable {len} {at} {start}");
                        let vector = find_special_on::<true>(&b, start);
                        assert_eq!(vector, want, "vector {len} {at} {start}");
                    }
                }
            }
        }
    }

    /// Sixteen bytes, both ways (the vector test and the two words): every
    /// byte value at every place, before or after another special byte, as
    /// a byte loop finds the first.
    #[test]
    fn sixteen_bytes_both_ways_match_a_byte_loop() {
        for c in 0u8..=255 {
            for at in 0..16 {
                for other in [
                    None,
                    Some((0usize, b'"')),
                    Some((9, 0x1f)),
                    Some((15, b'\\')),
                ] {
                    let mut pair = [b'a'; 16];
                    if let Some((k, o)) = other {
                        pair[k] = o;
                    }
                    pair[at] = c;
                    let want = naive(&pair, 0);
                    assert_eq!(first16::<false>(&pair), want, "words {pair:?}");
                    assert_eq!(first16::<true>(&pair), want, "vector {pair:?}");
                }
            }
        }
    }

    #[test]
    fn mask_flags_exactly_the_special_bytes() {
        for b in 0u8..=255 {
            let w = u64::from_le_bytes([b'a', b'a', b, b'a', b'a', b'a', b'a', b'a']);
            let special = b == b'"' || b == b'\\' || b < 0x20;
            assert_eq!(special_mask(w) != 0, special, "{b}");
        }
    }
}
