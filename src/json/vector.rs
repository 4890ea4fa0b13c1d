//! Sixty-four bytes classified at once with vector compares: the bits of
//! the bytes that end plain JSON string text (`"`, `\`, control
//! characters), for the unescaper's block loop; and the bits of quotes and
//! backslashes, for the reader's search for a string's end (`acp::read`).
//!
//! Compiled where the target has vector registers that make this a handful
//! of instructions (SSE2 on x86, NEON on 64-bit ARM; `wide` wraps them in
//! a safe API); elsewhere the unescaper searches a word at a time
//! ([`super::swar`]).

use wide::u8x16;

/// The bytes [`special_bits`] classifies at once: four vector registers.
pub(crate) const BLOCK: usize = 64;

/// Bit `k` of the result is set when byte `k` of `block` is a `"`, a `\`
/// or a control character (below `0x20`): exact for every byte, unlike
/// the word mask of [`super::swar::special_mask`], so the bits can be taken
/// one after another.
#[inline(always)]
pub(crate) fn special_bits(block: &[u8; BLOCK]) -> u64 {
    backslash_and_special_bits(block).1
}

/// Whether `block` holds a special byte (`"`, `\`, a control
/// character): [`special_bits`] not zero, with the four lanes' tests
/// and-ed into one and a single mask taken, for a search that passes
/// over blocks of plain text.
#[inline(always)]
pub(crate) fn has_special(block: &[u8; BLOCK]) -> bool {
    // The top bit of each byte set when the byte is plain (the test of
    // [`backslash_and_special_bits`]).
    let plain = |at: usize| {
        let v = lane(block, at);
        let backslash = v.cmp_eq(u8x16::splat(b'\\'));
        (v ^ u8x16::splat(0x02)).saturating_add(u8x16::splat(0x5F)) & !backslash
    };
    let all = plain(0) & plain(16) & plain(32) & plain(48);
    all.move_mask().unsigned_abs() != 0xFFFF
}

/// The offset of the first special byte (`"`, `\`, a control character)
/// of `lane`, by [`has_special`]'s test on one register: what the string
/// and key scans of [`super::swar`] take sixteen bytes a step.
#[inline(always)]
pub(crate) fn first_special(lane: &[u8; 16]) -> Option<usize> {
    let v = u8x16::new(*lane);
    let backslash = v.cmp_eq(u8x16::splat(b'\\'));
    let plain = (v ^ u8x16::splat(0x02)).saturating_add(u8x16::splat(0x5F)) & !backslash;
    let special = !plain.move_mask().unsigned_abs() & 0xFFFF;
    (special != 0).then(|| special.trailing_zeros() as usize)
}

/// The sixteen bytes of `block` at `at` (a constant: the look-up cannot
/// miss) in a vector register.
#[inline(always)]
fn lane(block: &[u8; BLOCK], at: usize) -> u8x16 {
    u8x16::new(
        block
            .get(at..)
            .and_then(|r| r.first_chunk::<16>())
            .copied()
            .unwrap_or_default(),
    )
}

/// Bit `k` of the result is set when byte `k` of `block` is a backslash.
#[inline(always)]
pub(crate) fn backslash_bits(block: &[u8; BLOCK]) -> u64 {
    let bits = |at: usize| {
        let backslash = lane(block, at).cmp_eq(u8x16::splat(b'\\'));
        u64::from(backslash.move_mask().unsigned_abs())
    };
    bits(0) | (bits(16) << 16) | (bits(32) << 32) | (bits(48) << 48)
}

/// Bit `k` of the first word is set when byte `k` of `block` is a
/// backslash, of the second when it is a quote: what a search for a
/// string's end needs (`acp::read`'s), whatever the bytes between.
#[inline(always)]
pub(crate) fn backslash_and_quote_bits(block: &[u8; BLOCK]) -> (u64, u64) {
    let bits = |at: usize, byte: u8| {
        let v = lane(block, at).cmp_eq(u8x16::splat(byte));
        u64::from(v.move_mask().unsigned_abs())
    };
    let word = |byte: u8| {
        bits(0, byte) | (bits(16, byte) << 16) | (bits(32, byte) << 32) | (bits(48, byte) << 48)
    };
    (word(b'\\'), word(b'"'))
}

/// [`backslash_bits`] and [`special_bits`] of `block` in one pass. With
/// bit 1 flipped, a quote (0x22) becomes 0x20 and the control characters
/// stay below it: those bytes are the ones at most 0x20, the ones that
/// stay below 0x80 when 0x5F is added with saturation (the sum's top bit
/// clear).
#[inline(always)]
pub(crate) fn backslash_and_special_bits(block: &[u8; BLOCK]) -> (u64, u64) {
    let bits = |at: usize| {
        let v = lane(block, at);
        let backslash = v.cmp_eq(u8x16::splat(b'\\')).move_mask().unsigned_abs();
        let above = (v ^ u8x16::splat(0x02))
            .saturating_add(u8x16::splat(0x5F))
            .move_mask()
            .unsigned_abs();
        (u64::from(backslash), u64::from(!above & 0xFFFF))
    };
    let (b0, q0) = bits(0);
    let (b1, q1) = bits(16);
    let (b2, q2) = bits(32);
    let (b3, q3) = bits(48);
    let backslash = b0 | (b1 << 16) | (b2 << 32) | (b3 << 48);
    let quote_or_control = q0 | (q1 << 16) | (q2 << 32) | (q3 << 48);
    (backslash, backslash | quote_or_control)
}

/// Bits of `block`, bit `k` for byte `k`: its backslashes, its quotes,
/// its opening brackets (`{` and `[`: the two bytes that are `{` with bit
/// 5 set) and its closing ones (`}` and `]`, likewise): what a walk that
/// passes a container by its brackets needs (the routing peek's).
#[cfg(feature = "remote")]
#[inline(always)]
pub(crate) fn structural_bits(block: &[u8; BLOCK]) -> [u64; 4] {
    let bits = |at: usize| {
        let v = lane(block, at);
        let folded = v | u8x16::splat(0x20);
        let mask = |m: u8x16| u64::from(m.move_mask().unsigned_abs());
        [
            mask(v.cmp_eq(u8x16::splat(b'\\'))),
            mask(v.cmp_eq(u8x16::splat(b'"'))),
            mask(folded.cmp_eq(u8x16::splat(b'{'))),
            mask(folded.cmp_eq(u8x16::splat(b'}'))),
        ]
    };
    let [l0, l1, l2, l3] = [bits(0), bits(16), bits(32), bits(48)];
    let word = |n: usize| {
        let at = |l: [u64; 4]| l.get(n).copied().unwrap_or(0);
        at(l0) | (at(l1) << 16) | (at(l2) << 32) | (at(l3) << 48)
    };
    [word(0), word(1), word(2), word(3)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value at every place of a block: its bit set exactly
    /// when a byte test says it is special, the other bits clear.
    #[test]
    fn bits_flag_exactly_the_special_bytes() {
        for c in 0u8..=255 {
            let special = c == b'"' || c == b'\\' || c < 0x20;
            for at in 0..BLOCK {
                let mut block = [b'a'; BLOCK];
                block[at] = c;
                let want_special = if special { 1u64 << at } else { 0 };
                assert_eq!(special_bits(&block), want_special, "{c} at {at}");
                assert_eq!(has_special(&block), special, "{c} at {at}");
                let want_backslash = if c == b'\\' { 1u64 << at } else { 0 };
                assert_eq!(backslash_bits(&block), want_backslash, "{c} at {at}");
                assert_eq!(
                    backslash_and_special_bits(&block),
                    (want_backslash, want_special),
                    "{c} at {at}"
                );
                let want_quote = if c == b'"' { 1u64 << at } else { 0 };
                assert_eq!(
                    backslash_and_quote_bits(&block),
                    (want_backslash, want_quote),
                    "{c} at {at}"
                );
                #[cfg(feature = "remote")]
                let bit = |yes: bool| if yes { 1u64 << at } else { 0 };
                #[cfg(feature = "remote")]
                assert_eq!(
                    structural_bits(&block),
                    [
                        want_backslash,
                        want_quote,
                        bit(c == b'{' || c == b'['),
                        bit(c == b'}' || c == b']'),
                    ],
                    "{c} at {at}"
                );
            }
        }
        let mut block = [0u8; BLOCK];
        assert_eq!(special_bits(&block), u64::MAX);
        assert!(has_special(&block));
        assert_eq!(backslash_bits(&block), 0);
        assert_eq!(backslash_and_special_bits(&block), (0, u64::MAX));
        block.fill(0xFF);
        assert_eq!(special_bits(&block), 0);
        assert!(!has_special(&block));
        assert_eq!(backslash_and_special_bits(&block), (0, 0));
        block.fill(b'\\');
        assert_eq!(backslash_bits(&block), u64::MAX);
        assert_eq!(backslash_and_special_bits(&block), (u64::MAX, u64::MAX));
    }
}
