//! Where a JSON string ends, escapes passed over unchecked: the search
//! that sizes an escaped string's allocation before it is unescaped (the
//! ACP reader's, `acp::read`), and that finds the end of a string that did
//! not unescape, to report it whole; and, checked on the way, the end of
//! long text with escapes that `scan::skip_str` passes over
//! (`checked_end_blocks`).

use super::swar::find_quote;

/// The offset after the string whose opening quote is at `i` (the end of
/// the text when it has no end), escapes passed over unchecked: the first
/// quote after an even run of backslashes.
pub(crate) fn str_end(b: &[u8], i: usize) -> usize {
    str_end_within(b, i.saturating_add(1), usize::MAX).unwrap_or(b.len())
}

/// [`str_end`] for a string whose text (with no escape before `from`) is
/// searched from `from`; `None` when the text has no end, or when the
/// search passes `limit` first (text dense with `\"` is not searched far:
/// see `acp::read`). To the first quote by `find_quote` (prose
/// ends there); past an escaped one, sixty-four bytes at a time where the
/// target has vector compares (`str_end_blocks`), the last fewer than
/// that, and every byte elsewhere, quote to quote.
pub(crate) fn str_end_within(b: &[u8], from: usize, limit: usize) -> Option<usize> {
    #[cfg(any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    ))]
    let from = {
        // Prose (no `\"`) ends at its first quote, which `memchr` finds
        // fastest; text with escaped quotes is searched by blocks after it.
        let q = find_quote(b, from)?;
        if b.get(from..q).is_none_or(unescaped_at) {
            return Some(q.saturating_add(1));
        }
        if q >= limit {
            return None;
        }
        match str_end_blocks(b, q.saturating_add(1), limit) {
            Ok(end) => return end,
            Err(rest) => rest,
        }
    };
    quote_to_quote(b, from, limit)
}

/// Whether a quote right after `before` (text that starts unescaped) is
/// unescaped: an even run of backslashes ends `before`.
fn unescaped_at(before: &[u8]) -> bool {
    before.iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0
}

/// [`str_end_within`] a block of sixty-four bytes at a time: the block's
/// quotes less those a backslash escapes (`escaped_bits`), so a block is a
/// few vector compares and no stop at each `\"` (a file's text, code).
/// A backslash that starts an escape in a block's last byte escapes the
/// next block's first, which is passed over: each block starts
/// unescaped, as `escaped_bits` needs.
///
/// # Errors
///
/// The offset (not escaped) from which fewer than sixty-four bytes are
/// left, for [`quote_to_quote`].
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
#[inline]
fn str_end_blocks(b: &[u8], from: usize, limit: usize) -> Result<Option<usize>, usize> {
    use crate::json::unescape::escaped_bits;
    use crate::json::vector::{backslash_and_quote_bits, BLOCK};
    let mut at = from;
    while let Some(block) = b.get(at..).and_then(|r| r.first_chunk::<BLOCK>()) {
        let (backslash, quote) = backslash_and_quote_bits(block);
        let escaped = escaped_bits(backslash);
        let ends = quote & !escaped;
        if ends != 0 {
            let end = at.saturating_add(ends.trailing_zeros() as usize);
            return Ok(Some(end.saturating_add(1)));
        }
        // The block's last byte a backslash that starts an escape: the
        // next byte is the escape's letter.
        let carry = ((backslash & !escaped) >> 63) as usize;
        at = at.saturating_add(BLOCK).saturating_add(carry);
        if at > limit {
            return Ok(None);
        }
    }
    Err(at)
}

/// What [`checked_end_blocks`] found.
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
pub(crate) enum Checked {
    /// The string ends: the offset after its closing quote.
    End(usize),
    /// The offset of the first byte that is not string content: a raw
    /// control character, or the backslash of an escape that is not JSON.
    Bad(usize),
    /// Fewer than sixty-four bytes are left from this offset (not inside
    /// an escape), for the caller's search.
    Rest(usize),
}

/// The end of the string whose text goes on at `from` (not inside an
/// escape), its text checked on the way as `scan::skip_str` checks it, a
/// block of sixty-four bytes at a time: the block's special bytes (`"`,
/// `\`, control characters) less those a backslash escapes
/// (`escaped_bits`); the first left that is not a backslash ends the
/// text, and each backslash before it starts an escape whose letter (and
/// four hex digits after a `u`) are checked where they lie. The next
/// block starts after the block, or after an escape that ends past it.
/// For long text with escapes (a skill's body in `_meta`, a file kept
/// raw): no search from one escape to the next.
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
#[inline(never)]
pub(crate) fn checked_end_blocks(b: &[u8], from: usize) -> Checked {
    use crate::json::unescape::escaped_bits;
    use crate::json::vector::{backslash_and_special_bits, has_special, BLOCK};
    #[cfg(test)]
    tests::CHECKED_BLOCKS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    let mut at = from;
    while let Some(block) = b.get(at..).and_then(|r| r.first_chunk::<BLOCK>()) {
        // Plain text (most of a skill's body): one cheap test a block.
        if !has_special(block) {
            at = at.saturating_add(BLOCK);
            continue;
        }
        let (backslash, special) = backslash_and_special_bits(block);
        let escaped = escaped_bits(backslash);
        let ends = special & !backslash & !escaped;
        let end = ends & ends.wrapping_neg();
        let mut starts = backslash & !escaped & end.wrapping_sub(1);
        let mut next = at.saturating_add(BLOCK);
        while starts != 0 {
            let n = at.saturating_add(starts.trailing_zeros() as usize);
            starts &= starts.wrapping_sub(1);
            let len = match b.get(n.saturating_add(1)) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                Some(b'u')
                    if b.get(n.saturating_add(2)..n.saturating_add(6))
                        .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
                {
                    6
                }
                _ => return Checked::Bad(n),
            };
            // Only the block's last escape can end past it.
            next = next.max(n.saturating_add(len));
        }
        if end != 0 {
            let n = at.saturating_add(end.trailing_zeros() as usize);
            return if b.get(n) == Some(&b'"') {
                Checked::End(n.saturating_add(1))
            } else {
                Checked::Bad(n)
            };
        }
        at = next;
    }
    Checked::Rest(at)
}

/// [`str_end_within`] quote to quote: the first quote after an even run
/// of backslashes, `None` at an escaped quote at or past `limit`.
fn quote_to_quote(b: &[u8], from: usize, limit: usize) -> Option<usize> {
    let mut j = from;
    loop {
        let q = find_quote(b, j)?;
        if b.get(j..q).is_none_or(unescaped_at) {
            return Some(q.saturating_add(1));
        }
        if q >= limit {
            return None;
        }
        j = q.saturating_add(1);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// How many times `scan::skip_str` went on a block at a time: its
    /// tests check that their texts do.
    #[cfg(any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    ))]
    pub(crate) static CHECKED_BLOCKS: core::sync::atomic::AtomicUsize =
        core::sync::atomic::AtomicUsize::new(0);

    #[test]
    fn a_string_end_is_searched_within_its_limit() {
        let text = br#""ab\"cd\\" x"#;
        assert_eq!(str_end(text, 0), 10);
        assert_eq!(str_end_within(text, 1, text.len()), Some(10));
        // The escaped quote at 4 is past a limit of 4: not searched on.
        assert_eq!(str_end_within(text, 1, 4), None);
        assert_eq!(str_end_within(text, 1, 5), Some(10));
        // An end found by the first search is kept, however far.
        assert_eq!(str_end_within(br#""ab\ncd" x"#, 1, 2), Some(8));
        assert_eq!(str_end_within(b"\"abc", 1, 99), None);
    }

    /// The first quote no backslash escapes, a byte at a time: the oracle
    /// of the searches for a string's end.
    pub(crate) fn naive_str_end(b: &[u8], from: usize) -> Option<usize> {
        let mut i = from;
        while let Some(&c) = b.get(i) {
            match c {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Long text dense with escapes (runs of backslashes across the
        /// blocks' edges among them) at every offset: the end a byte walk
        /// finds, or `None` only when that end is past the limit.
        #[test]
        fn string_ends_agree_with_a_byte_walk(
            pad in 0usize..70,
            parts in proptest::collection::vec(crate::json::dense_string_text(), 1..6),
            limit in 0usize..600,
        ) {
            let body = parts.concat();
            let text = alloc::format!("{}\"{body}\" x", " ".repeat(pad));
            let b = text.as_bytes();
            let want = naive_str_end(b, pad + 1);
            proptest::prop_assert_eq!(str_end(b, pad), want.unwrap_or(b.len()), "{:?}", text);
            match str_end_within(b, pad + 1, limit) {
                Some(end) => proptest::prop_assert_eq!(Some(end), want, "{:?}", text),
                None => proptest::prop_assert!(want.is_none_or(|end| end > limit), "{:?}", text),
            }
        }
    }
}
