//! Decoding JSON string escapes: the crate's one unescaper.
//!
//! Every caller that turns a JSON string token into text comes here, and
//! every one of them goes through the same loop, `unescape_from`: the
//! ACP reader's strings, read and checked up to their closing quote in one
//! pass ([`unescape_token`]), text already checked ([`unquote`]), and the
//! stream-json events and chunk frames ([`unescape_into`],
//! [`validate_unescape_into`], [`unescaped_len`]).
//!
//! Which loop that is depends on the target, fixed at build time:
//!
//! - where the target has fast vector compares (SSE2 on x86 and x86-64,
//!   NEON on 64-bit ARM), the block loop (`unescape_blocks`): sixty-four
//!   bytes classified at once into a word of bits, one a special byte
//!   (`super::vector`, safe code over the `wide` crate), each escape
//!   taken as the next bit, so that finding the next escape does not
//!   wait on reading the last one; where the text is dense with escapes
//!   (four backslashes or more in a block and in the next), it hands the text to
//!   `dense`, which builds it in a buffer on the stack and hands
//!   it over checked, a stretch at a time, until a long run of plain text;
//!   the last fewer than sixty-four bytes of the text go to the word loop;
//! - elsewhere (32-bit ARM without NEON, among others), the word loop
//!   (`unescape_words`): a short plain run put as a whole word and cut
//!   back, a long one found sixteen bytes a step and copied whole, one
//!   escape at a time between them.
//!
//! Both put a short plain run as a block of fixed size cut back, read a
//! one-letter escape by a table look-up and each `\u` escape by one
//! function ([`unicode`]) (the dense loop: by its own code, into the
//! stage), and give the same text and the same error offsets; the tests
//! and the `unescape` fuzz target hold each of them against `serde_json`
//! (the word loop through `fuzzing::unescape_string_portable` on every
//! target; the dense loop, in the tests, also where the build does not
//! use it).

use alloc::borrow::Cow;
use alloc::string::String;

use serde::de;

use super::swar::{find_special, short_special, special_mask};

// The block loop's way through text dense with escapes (where the block
// loop is).
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
mod dense;
// Which bytes of a block backslashes escape: also what a search for a
// string's end reads (`acp::read`).
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
pub(crate) use dense::escaped_bits;

/// What is wrong with an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EscapeError {
    /// Not one of JSON's escapes, or a `\u` without four hex digits.
    Invalid,
    /// A high surrogate not followed by a low one, or a lone low surrogate.
    LoneSurrogate,
}

impl EscapeError {
    /// The lowercase message used in decode errors.
    pub(crate) const fn message(self) -> &'static str {
        match self {
            Self::Invalid => "invalid escape in json string",
            Self::LoneSurrogate => "lone leading surrogate in json string",
        }
    }
}

/// The character of the escape at the start of `bytes` (which begins with
/// `\\`) and the number of bytes it takes: what a failed unescape reports.
///
/// # Errors
///
/// [`EscapeError`] when the escape is not valid JSON.
fn escape(bytes: &[u8]) -> Result<(char, usize), EscapeError> {
    match bytes.get(1).copied() {
        Some(b'u') => unicode(bytes, 0),
        Some(letter) => match SHORT_ESCAPE.get(usize::from(letter)).copied() {
            Some(0) | None => Err(EscapeError::Invalid),
            Some(c) => Ok((char::from(c), 2)),
        },
        None => Err(EscapeError::Invalid),
    }
}

/// The character of the `\u` escape at `n` in `b` (one, or a surrogate
/// pair) and the number of bytes it takes.
///
/// # Errors
///
/// [`EscapeError`]: a bad digit, or a surrogate without its other half.
#[inline(always)]
fn unicode(b: &[u8], n: usize) -> Result<(char, usize), EscapeError> {
    let high = hex4_at(b, n.wrapping_add(2)).ok_or(EscapeError::Invalid)?;
    let rest = b.get(n.wrapping_add(6)..).unwrap_or_default();
    let (code, len) = code_point(high, rest)?;
    char::from_u32(code)
        .map(|c| (c, len))
        .ok_or(EscapeError::Invalid)
}

/// The code point of a `\u` escape whose four digits read `high`, given
/// the bytes after them (`rest`: where a leading surrogate's trailing half
/// must stand as `\uXXXX`), and the escape's length: 6 bytes, or 12 for a
/// surrogate pair. The one reading of `\u`, for the word loop
/// ([`unicode`]) and the dense stage alike.
///
/// # Errors
///
/// [`EscapeError::Invalid`] for a trailing surrogate alone or a bad digit
/// in the second half; [`EscapeError::LoneSurrogate`] for a leading
/// surrogate not followed by a trailing one.
#[inline(always)]
fn code_point(high: u32, rest: &[u8]) -> Result<(u32, usize), EscapeError> {
    if high & 0xF800 != 0xD800 {
        return Ok((high, 6));
    }
    if high >= 0xDC00 {
        // A lone trailing surrogate: not a character.
        return Err(EscapeError::Invalid);
    }
    let low = match rest.first_chunk::<2>() {
        Some(br"\u") => hex4_at(rest, 2).ok_or(EscapeError::Invalid)?,
        _ => return Err(EscapeError::LoneSurrogate),
    };
    if !(0xDC00..0xE000).contains(&low) {
        return Err(EscapeError::LoneSurrogate);
    }
    // Both halves were range-checked: ten bits each, at most 0x10FFFF.
    let code = 0x1_0000_u32.wrapping_add(((high & 0x3FF) << 10) | (low & 0x3FF));
    Ok((code, 12))
}

/// Four hex digits as a number (at most `0xFFFF`): a table look-up a
/// digit and one test for all four (a bad digit is `-1`, which keeps the
/// sign bit through the shifts and the or).
#[inline]
fn hex4([a, b, c, d]: [u8; 4]) -> Option<u32> {
    // A `u8` always indexes the 256 entries: the look-up cannot miss.
    let v = |x: u8| i32::from(HEX.get(usize::from(x)).copied().unwrap_or(-1));
    let n = (v(a) << 12) | (v(b) << 8) | (v(c) << 4) | v(d);
    u32::try_from(n).ok()
}

/// The four hex digits at `at` in `bytes` as a number.
#[inline]
fn hex4_at(bytes: &[u8], at: usize) -> Option<u32> {
    hex4(*bytes.get(at..)?.first_chunk()?)
}

/// The value of each byte as a hex digit, `-1` when it is not one.
// Built at compile time, where an index out of bounds is a build error,
// not a panic.
#[allow(clippy::indexing_slicing)]
const HEX: [i8; 256] = {
    let mut t = [-1i8; 256];
    let mut i = 0u8;
    while i < 10 {
        t[(b'0' + i) as usize] = i as i8;
        i += 1;
    }
    let mut i = 0u8;
    while i < 6 {
        t[(b'a' + i) as usize] = (10 + i) as i8;
        t[(b'A' + i) as usize] = (10 + i) as i8;
        i += 1;
    }
    t
};

/// A bad JSON string literal: bad escape, lone surrogate, raw control
/// character, missing quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadString;

impl From<EscapeError> for BadString {
    fn from(_: EscapeError) -> Self {
        BadString
    }
}

/// Where unescaped text goes: a string, or a counter of its length.
trait TextSink {
    /// Puts `text[from..to]`, plain text.
    fn put(&mut self, text: &str, from: usize, to: usize);
    /// Puts the `keep` bytes of plain text at `at`, whose next byte is
    /// special (a quote, a backslash, a control character), with eight
    /// bytes of `text` from `at`: a string with room takes the whole word
    /// of eight, a copy of fixed size, and cuts it back.
    fn put_word(&mut self, text: &str, at: usize, keep: usize);
    fn put_char(&mut self, c: char);
    /// Appends `bytes`, text the dense loop built (`dense`): false,
    /// and nothing appended, when they are not UTF-8 (never so: the loop
    /// builds whole characters). Built on every target; only those with
    /// the block loop call it.
    #[cfg_attr(
        not(any(
            target_feature = "sse2",
            all(target_arch = "aarch64", target_feature = "neon")
        )),
        allow(dead_code)
    )]
    fn put_built(&mut self, bytes: &[u8]) -> bool;
}

struct Counter(usize);

impl TextSink for Counter {
    fn put(&mut self, _: &str, from: usize, to: usize) {
        self.0 = self.0.saturating_add(to.saturating_sub(from));
    }
    fn put_word(&mut self, _: &str, _: usize, keep: usize) {
        self.0 = self.0.saturating_add(keep);
    }
    fn put_char(&mut self, c: char) {
        self.0 = self.0.saturating_add(c.len_utf8());
    }
    fn put_built(&mut self, bytes: &[u8]) -> bool {
        self.0 = self.0.saturating_add(bytes.len());
        true
    }
}

impl TextSink for String {
    /// A run of sixteen bytes or fewer is put as a block of sixteen, one
    /// of seventeen to thirty-two as a block of thirty-two, and cut back
    /// (see `put_word`), not copied by a call.
    #[inline(always)]
    fn put(&mut self, text: &str, from: usize, to: usize) {
        let len = to.wrapping_sub(from);
        let done = if len <= 16 {
            put_block::<16>(self, text, from, len)
        } else if len <= SLACK {
            put_block::<SLACK>(self, text, from, len)
        } else {
            false
        };
        if !done {
            self.push_str(text.get(from..to).unwrap_or_default());
        }
    }
    /// Never grows the string where putting the exact bytes would not:
    /// with less than a word of room left (a buffer reserved to the exact
    /// size, its last bytes) the bytes kept are put alone, as they are
    /// when the word ends inside a character.
    #[inline(always)]
    fn put_word(&mut self, text: &str, at: usize, keep: usize) {
        if !put_block::<8>(self, text, at, keep) {
            self.push_str(text.get(at..at.wrapping_add(keep)).unwrap_or_default());
        }
    }
    #[inline(always)]
    fn put_char(&mut self, c: char) {
        self.push(c);
    }
    /// One check of the whole stretch, with vector code (`simdutf8`).
    fn put_built(&mut self, bytes: &[u8]) -> bool {
        match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => {
                self.push_str(text);
                true
            }
            Err(_) => false,
        }
    }
}

/// The most bytes a string sink writes past its end before cutting back:
/// what the callers reserve beyond the text's length.
const SLACK: usize = 32;

/// Puts the `len` bytes of `text` at `from` (at most `N`) into `out` as a
/// block of `N`, a copy of fixed size, cut back: whether it could (room
/// for the block, and the block within `text` and ending on a character
/// boundary).
#[inline(always)]
fn put_block<const N: usize>(out: &mut String, text: &str, from: usize, len: usize) -> bool {
    if out.capacity().wrapping_sub(out.len()) < N {
        return false;
    }
    let Some(block) = text.get(from..from.wrapping_add(N)) else {
        return false;
    };
    let keep = out.len().wrapping_add(len);
    out.push_str(block);
    out.truncate(keep);
    true
}

/// The character each one-letter escape stands for (`n` for a newline),
/// `0` for the other bytes (`u` among them).
// Built at compile time, where an index out of bounds is a build error,
// not a panic.
#[allow(clippy::indexing_slicing)]
const SHORT_ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The word loop, the unescaper of targets without fast vector compares
/// (and of the block loop's last bytes): checks the string content of
/// `text` from `from` and appends it unescaped to `out`, in one pass, up to the first `"` that no backslash
/// escapes or to the end of `text`: the offset of that quote, or
/// `text.len()`.
///
/// A run of plain text that ends within the next eight bytes (text dense
/// with escapes: source code, a file's lines) is put as the whole word of
/// eight, a copy of fixed size, and cut back to the bytes before the
/// special one ([`special_mask`]); that byte, and the escape's letter
/// after it, are read from the word already loaded, not from the text
/// again. A longer run, or one within eight bytes of the end, is
/// searched ([`find_special`]) and put at once. A one-letter escape is a
/// table look-up, a `\u` escape is read by [`unicode`].
///
/// # Errors
///
/// The offset of the first byte that is not string content: a raw control
/// character or an escape that is not valid JSON (a lone surrogate among
/// them); `out` then holds a prefix of the content.
#[inline]
fn unescape_words<S: TextSink>(text: &str, from: usize, out: &mut S) -> Result<usize, usize> {
    let b = text.as_bytes();
    let mut i = from;
    loop {
        let word = b.get(i..).and_then(|r| r.first_chunk::<8>());
        let x = word.map_or(0, |w| u64::from_le_bytes(*w));
        let mask = word.map_or(0, |_| special_mask(x));
        if mask == 0 {
            // Searched past the word that holds none.
            let past = if word.is_some() { i.wrapping_add(8) } else { i };
            let n = find_special(b, past).unwrap_or(b.len());
            out.put(text, i, n);
            match b.get(n) {
                Some(b'\\') => {
                    let letter = b.get(n.wrapping_add(1)).copied().unwrap_or(0);
                    i = put_escape(b, n, letter, out)?;
                    continue;
                }
                None | Some(b'"') => return Ok(n),
                Some(_) => return Err(n),
            }
        }
        // The special byte's first bit: `keep` < 8 bytes before it, and
        // `i + 8` is within the text, so no sum below wraps.
        let bit = mask.trailing_zeros() & 0x38;
        let keep = (bit / 8) as usize;
        out.put_word(text, i, keep);
        let n = i.wrapping_add(keep);
        // The special byte, and the escape's letter after it, read from
        // the word (unless the backslash ends it).
        let from_special = x >> bit;
        let special = from_special as u8;
        if special != b'\\' {
            return if special == b'"' { Ok(n) } else { Err(n) };
        }
        let letter = if keep < 7 {
            (from_special >> 8) as u8
        } else {
            b.get(n.wrapping_add(1)).copied().unwrap_or(0)
        };
        i = put_escape(b, n, letter, out)?;
    }
}

/// The crate's unescaper on this target: [`unescape_blocks`] where the
/// target has fast vector compares, [`unescape_words`] elsewhere. Both
/// give the same text and the same error offsets.
///
/// # Errors
///
/// As [`unescape_words`].
#[inline(always)]
fn unescape_from<S: TextSink>(text: &str, from: usize, out: &mut S) -> Result<usize, usize> {
    #[cfg(any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    ))]
    return unescape_blocks::<S, { dense::STAGED }>(text, from, out);
    #[cfg(not(any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    )))]
    return unescape_words(text, from, out);
}

/// [`unescape_words`] a block of sixty-four bytes at a time: each block's
/// special bytes (`"`, `\`, control characters) are the bits of one word
/// ([`special_bits`], vector compares), and each escape is the next bit,
/// so where an escape lies does not wait on the one before it (no load
/// and mask after each escape, as in the word loop). The bits below the
/// end of an escape are cleared (the second backslash of `\\`, the
/// `\` of a surrogate pair's second half); an escape that ends past the
/// block starts the next one. Plain text between escapes is put when the
/// next special byte is found, across blocks when it is long. The last
/// fewer than sixty-four bytes of `text` go to [`unescape_words`].
///
/// With `STAGED` (what `dense::STAGED` says of the build; the tests
/// set it either way), a block with four backslashes or more, followed
/// by another, starts a stretch of dense text that `dense` reads
/// into its stage (zeroed once a string, when first needed) and hands
/// back at a run of plain text longer than sixty-four bytes; the block it
/// hands back at is read here.
///
/// # Errors
///
/// As [`unescape_words`].
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
#[inline]
fn unescape_blocks<S: TextSink, const STAGED: bool>(
    text: &str,
    from: usize,
    out: &mut S,
) -> Result<usize, usize> {
    use super::vector::{special_bits, BLOCK};
    use dense::{dense_blocks, starts_dense, Dense, STAGE};
    let b = text.as_bytes();
    // Plain text from `run` on is not put yet; the block at `at` is next.
    let mut run = from;
    let mut at = from;
    // The dense loop's stage, zeroed when first needed; the block the
    // dense loop last handed back, which this loop reads itself.
    let mut stage: Option<[u8; STAGE]> = None;
    let mut handed_back = usize::MAX;
    while let Some(block) = b.get(at..).and_then(|r| r.first_chunk::<BLOCK>()) {
        let mut bits = special_bits(block);
        // Two special bytes or more (cheap to rule out), then the rest.
        if STAGED
            && bits & bits.wrapping_sub(1) != 0
            && at != handed_back
            && starts_dense(b, at, block, bits)
        {
            let stage = stage.get_or_insert([0; STAGE]);
            match dense_blocks(text, run, at, out, stage)? {
                Dense::End(n) => return Ok(n),
                Dense::Resume { run: r, at: a } => {
                    run = r;
                    at = a;
                    handed_back = a;
                    continue;
                }
            }
        }
        while bits != 0 {
            let bit = bits.trailing_zeros();
            let n = at.wrapping_add(bit as usize);
            out.put(text, run, n);
            // The special byte and the byte after it, one look-up.
            let letter = match b.get(n..n.wrapping_add(2)) {
                Some(&[b'\\', letter]) => letter,
                Some(&[b'"', _]) => return Ok(n),
                Some(_) => return Err(n),
                None => {
                    return if b.get(n) == Some(&b'"') {
                        Ok(n)
                    } else {
                        Err(n)
                    }
                }
            };
            match SHORT_ESCAPE.get(usize::from(letter)).copied().unwrap_or(0) {
                0 => {
                    if letter != b'u' {
                        return Err(n);
                    }
                    // One `\u` escape (a `\u` right after it is the next bit).
                    let (c, used) = unicode(b, n).map_err(|_| n)?;
                    out.put_char(c);
                    run = n.wrapping_add(used);
                    // The bits from the end of the escape on (none when
                    // it ends past the block).
                    let past = u32::try_from(run.wrapping_sub(at)).unwrap_or(u32::MAX);
                    bits &= u64::MAX.checked_shl(past).unwrap_or(0);
                }
                c => {
                    out.put_char(char::from(c));
                    run = n.wrapping_add(2);
                    // The backslash's bit and the letter's (set for `\\`
                    // and `\"`): a short chain from one escape to the
                    // next, not through `run`.
                    bits &= !(3 << bit);
                }
            }
        }
        at = run.max(at.wrapping_add(BLOCK));
    }
    unescape_words(text, run, out)
}

/// Puts the escape at `n`, whose letter (the byte after the backslash) is
/// `letter`: the offset after it.
///
/// # Errors
///
/// `n` when the escape is not valid JSON.
#[inline(always)]
fn put_escape<S: TextSink>(b: &[u8], n: usize, letter: u8, out: &mut S) -> Result<usize, usize> {
    match SHORT_ESCAPE.get(usize::from(letter)).copied().unwrap_or(0) {
        0 if letter == b'u' => {
            // A run of `\u` escapes (text escaped to ASCII: every character
            // of a language not written in Latin letters) is read here,
            // without going back through the word loop for each.
            let mut n = n;
            loop {
                let (c, used) = unicode(b, n).map_err(|_| n)?;
                out.put_char(c);
                n = n.wrapping_add(used);
                if b.get(n..n.wrapping_add(2)) != Some(br"\u") {
                    return Ok(n);
                }
            }
        }
        0 => Err(n),
        c => {
            out.put_char(char::from(c));
            Ok(n.wrapping_add(2))
        }
    }
}

/// [`unescape_from`] over the whole of `body`, the content of a literal
/// between its quotes: a quote inside it is an error.
fn unescape_body<S: TextSink>(body: &str, out: &mut S) -> Result<(), BadString> {
    body_with(body, out, unescape_from)
}

/// [`unescape_body`] with the loop `unescape`.
#[inline(always)]
fn body_with<S: TextSink>(
    body: &str,
    out: &mut S,
    unescape: impl FnOnce(&str, usize, &mut S) -> Result<usize, usize>,
) -> Result<(), BadString> {
    match unescape(body, 0, out) {
        Ok(end) if end == body.len() => Ok(()),
        _ => Err(BadString),
    }
}

/// Reads the string token whose content starts at `from` in `text` (just
/// after its opening quote): checks it and unescapes it in one pass, into
/// a string of `capacity` bytes that grows if the text is longer; returns
/// the text and the offset after its closing quote.
///
/// # Errors
///
/// The offset of the first byte that is not string content (the end of
/// `text` when the closing quote is missing).
pub(crate) fn unescape_token(
    text: &str,
    from: usize,
    capacity: usize,
) -> Result<(String, usize), usize> {
    token_with(text, from, capacity, unescape_from)
}

/// [`unescape_token`] with the word loop, the one of targets without fast
/// vector compares, whatever the target: for the tests and the fuzz
/// target, which hold both loops against `serde_json`.
#[cfg(any(test, feature = "arbitrary"))]
pub(crate) fn unescape_token_words(
    text: &str,
    from: usize,
    capacity: usize,
) -> Result<(String, usize), usize> {
    token_with(text, from, capacity, unescape_words)
}

/// [`unescape_token`] with the block loop taking dense text through the
/// stage (`dense`) whether or not this build does: for the tests.
#[cfg(all(
    test,
    any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    )
))]
pub(crate) fn unescape_token_staged(
    text: &str,
    from: usize,
    capacity: usize,
) -> Result<(String, usize), usize> {
    token_with(text, from, capacity, unescape_blocks::<String, true>)
}

/// The unescaped length of the JSON string literal `raw` counted by the
/// block loop taking dense text through the stage, whether or not this
/// build does: for the tests.
#[cfg(all(
    test,
    any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    )
))]
pub(crate) fn unescaped_len_staged(raw: &str) -> Option<usize> {
    let mut counter = Counter(0);
    body_with(
        literal_body(raw).ok()?,
        &mut counter,
        unescape_blocks::<Counter, true>,
    )
    .ok()?;
    Some(counter.0)
}

/// [`unescape_token`] with the loop `unescape`.
#[inline(always)]
fn token_with(
    text: &str,
    from: usize,
    capacity: usize,
    unescape: impl FnOnce(&str, usize, &mut String) -> Result<usize, usize>,
) -> Result<(String, usize), usize> {
    // A block is put whole before it is cut back.
    let mut out = String::with_capacity(capacity.saturating_add(SLACK));
    let end = unescape(text, from, &mut out)?;
    if end < text.len() {
        Ok((out, end.saturating_add(1)))
    } else {
        Err(end)
    }
}

/// The content of a JSON string literal `raw` (with its quotes), still
/// escaped.
pub(crate) fn literal_body(raw: &str) -> Result<&str, BadString> {
    raw.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or(BadString)
}

/// Length of the unescaped content of the string literal `raw`.
///
/// # Errors
///
/// [`BadString`] if `raw` is not a valid JSON string literal.
pub(crate) fn unescaped_len(raw: &str) -> Result<usize, BadString> {
    let body = literal_body(raw)?;
    let mut counter = Counter(0);
    unescape_body(body, &mut counter)?;
    Ok(counter.0)
}

/// Appends the unescaped content of the string literal `raw`, already
/// validated as JSON, to `out`.
///
/// # Errors
///
/// [`BadString`] if an escape is invalid; `out` then holds a prefix of the
/// content (the caller truncates).
pub(crate) fn unescape_into(raw: &str, out: &mut String) -> Result<(), BadString> {
    let body = literal_body(raw)?;
    unescape_body(body, out)
}

/// Validates the content of a JSON string literal (between its quotes) and
/// appends it unescaped to `out`, in one pass.
///
/// # Errors
///
/// [`BadString`] if it is not valid JSON string content; `out` then holds a
/// prefix of the content (the caller truncates).
pub(crate) fn validate_unescape_into(body: &str, out: &mut String) -> Result<(), BadString> {
    unescape_body(body, out)
}

/// The text of a JSON string token (quotes included) that is already known
/// to be valid JSON, unescaped: borrowed when it has no escapes, else one
/// allocation that is never grown (unescaping only shrinks text).
///
/// # Errors
///
/// A serde error when the token is not a string or an escape is invalid.
pub(crate) fn unquote<E: de::Error>(token: &str) -> Result<Cow<'_, str>, E> {
    let inner = literal_body(token).map_err(|_| {
        let got = match token.as_bytes().first() {
            Some(b'n') => "null",
            Some(b't' | b'f') => "a boolean",
            Some(b'[') => "an array",
            Some(b'{') => "an object",
            _ => "a number",
        };
        E::invalid_type(de::Unexpected::Other(got), &"a string")
    })?;
    // Checked text holds no quote nor control character unescaped: the
    // first special byte, if any, is a backslash.
    if short_special(inner.as_bytes(), 0).is_none() {
        return Ok(Cow::Borrowed(inner));
    }
    // A block is put whole before it is cut back.
    let mut out = String::with_capacity(inner.len().saturating_add(SLACK));
    match unescape_from(inner, 0, &mut out) {
        Ok(end) if end == inner.len() => {}
        Ok(_) => return Err(E::custom(EscapeError::Invalid.message())),
        Err(at) => {
            let why = inner
                .as_bytes()
                .get(at..)
                .and_then(|esc| escape(esc).err())
                .unwrap_or(EscapeError::Invalid);
            return Err(E::custom(why.message()));
        }
    }
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquote_matches_serde_json() {
        for s in [
            r#""plain""#,
            r#""a\nb\"c\\d\/e\b\f\r\t""#,
            r#""\u00e9\u20ac\ud83e\udd80x""#,
            r#""""#,
        ] {
            let ours = unquote::<serde_json::Error>(s).unwrap();
            let theirs: String = serde_json::from_str(s).unwrap();
            assert_eq!(ours, theirs);
        }
        assert!(matches!(
            unquote::<serde_json::Error>(r#""x""#).unwrap(),
            Cow::Borrowed("x")
        ));
        for bad in [
            r#""\ud800""#,
            r#""\ud800\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            "5",
            r#""\""#,
        ] {
            assert!(unquote::<serde_json::Error>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unescape_round_trips() {
        for s in ["", "abc", "a\"\\/\u{8}\u{c}\n\r\t\u{1}😀\u{2028}"] {
            let lit = serde_json::to_string(s).unwrap();
            let mut out = String::new();
            unescape_into(&lit, &mut out).unwrap();
            assert_eq!(out, s);
            assert_eq!(unescaped_len(&lit).unwrap(), s.len());
            assert_eq!(unquote::<serde_json::Error>(&lit).unwrap(), s);
        }
        let mut out = String::new();
        unescape_into("\"\\ud83d\\ude00\\u00e9\\/\"", &mut out).unwrap();
        assert_eq!(out, "😀é/");
        for bad in [
            "x",
            "\"a",
            "\"\\x\"",
            "\"\\ud83d\"",
            "\"\\u12\"",
            "\"\\udc00\"",
            "\"\u{1}\"",
            "\"\\",
        ] {
            assert_eq!(unescaped_len(bad), Err(BadString), "{bad}");
        }
    }

    /// Every `\u` escape, each character of the first plane and a surrogate
    /// pair with every high and every low half, in upper and lower case
    /// and at every place in a word: read as `serde_json` reads it (which
    /// shares no code with ours), or refused where it refuses.
    #[test]
    fn every_unicode_escape_unescapes_as_serde_json() {
        let pairs = (0xD800..0xDC00)
            .flat_map(|hi| [(hi, 0xDC00), (hi, 0xDFFF)])
            .chain((0xDC00..0xE000).flat_map(|lo| [(0xD800, lo), (0xDBFF, lo)]));
        let escapes = (0..=0xFFFF_u32)
            .map(|c| alloc::format!("\\u{c:04x}"))
            .chain(pairs.map(|(hi, lo)| alloc::format!("\\u{hi:04X}\\u{lo:04x}")));
        for (k, escape) in escapes.enumerate() {
            let token = alloc::format!("\"{}{escape}\\n\"", "x".repeat(k % 8));
            let theirs = serde_json::from_str::<String>(&token).ok();
            let ours = unquote::<serde_json::Error>(&token).ok();
            assert_eq!(ours.as_deref(), theirs.as_deref(), "{token}");
            let read = unescape_token(&token, 1, 0).ok().map(|(s, _)| s);
            assert_eq!(read, theirs, "{token}");
        }
    }

    /// `\u` escapes in a row (read in a loop of their own), good and bad,
    /// between other escapes and plain text, at every place in a word: read
    /// as `serde_json` reads them, or refused where it refuses.
    #[test]
    fn unicode_escapes_in_a_row_unescape_as_serde_json() {
        let parts = [
            r"\u4ee3",
            r"\u00e9",
            r"\u0041",
            r"\uD83D\uDE00",
            r"\uDC00",
            r"\uD83D",
            r"\u12",
            r"\u00G0",
            r"\u0022",
            r"\u005C",
            r"\u0000",
            r"\n",
            r"\\",
            "x",
            "é",
        ];
        for a in parts {
            for b in parts {
                for c in parts {
                    for pad in 0..8 {
                        let token = alloc::format!("\"{}{a}{b}{c}\"", "x".repeat(pad));
                        let theirs = serde_json::from_str::<String>(&token).ok();
                        let ours = unquote::<serde_json::Error>(&token).ok();
                        assert_eq!(ours.as_deref(), theirs.as_deref(), "{token}");
                        let read = unescape_token(&token, 1, 0).ok().map(|(s, _)| s);
                        assert_eq!(read, theirs, "{token}");
                        let len = unescaped_len(&token).ok();
                        assert_eq!(len, theirs.as_ref().map(String::len), "{token}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Text dense with escapes and characters of every width, in every
        /// alignment: each way in unescapes as `serde_json` reads the
        /// token, or fails where it fails.
        #[test]
        fn unescapes_as_serde_json(
            pad in 0usize..72,
            body in crate::json::dense_string_text(),
        ) {
            let token = alloc::format!("\"{body}\"");
            // The reader stops at the first quote no backslash escapes (a
            // lone backslash in the parts can leave one inside).
            let mut first = serde_json::Deserializer::from_str(&token).into_iter::<String>();
            let theirs_first = first.next().and_then(Result::ok).map(|s| (s, first.byte_offset()));
            let text = alloc::format!("{}{token} ", " ".repeat(pad));
            let read = unescape_token(&text, pad + 1, 0);
            // The portable loop, whatever the target: the same text, or
            // the same error offset.
            let words = unescape_token_words(&text, pad + 1, 0);
            proptest::prop_assert_eq!(&read, &words, "{:?}", token);
            proptest::prop_assert_eq!(
                read.ok().map(|(s, end)| (s, end - pad)),
                theirs_first.clone(),
                "{:?}",
                token
            );
            proptest::prop_assert_eq!(
                words.ok().map(|(s, end)| (s, end - pad)),
                theirs_first,
                "{:?}",
                token
            );
            let theirs = serde_json::from_str::<String>(&token).ok();
            let quoted = unquote::<serde_json::Error>(&token).ok();
            proptest::prop_assert_eq!(quoted.as_deref(), theirs.as_deref());
            proptest::prop_assert_eq!(unescaped_len(&token).ok(), theirs.as_ref().map(String::len));
            // Into a buffer reserved to the exact size: never grown.
            let mut into = String::with_capacity(1 + theirs.as_ref().map_or(0, String::len));
            into.push('x');
            let room = into.capacity();
            let ok = unescape_into(&token, &mut into).is_ok();
            if ok {
                proptest::prop_assert_eq!(into.capacity(), room);
            }
            proptest::prop_assert_eq!(ok.then_some(into), theirs.map(|t| alloc::format!("x{t}")));
        }
    }

    /// Every escape kind (and a raw control character, a bad escape, a
    /// lone surrogate) at every byte offset from 0 to 140 (the edges of
    /// the words, of the first two blocks of sixty-four bytes, and up to
    /// 48 bytes on either side of them), after plain text that is ASCII or
    /// made of wide characters (two, three and four bytes, padded with
    /// ASCII to the offset), with plain text after it short and long (past
    /// the next block edge), the string alone or followed by more of a
    /// line: the end of the text within and past a word and a block. Each
    /// way in, with both loops (the target's and the portable one), reads
    /// it as `serde_json` does, or fails where it fails, both at the same
    /// offset.
    #[test]
    fn every_escape_at_every_offset_unescapes_as_serde_json() {
        let escapes = [
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
            r"\u20ac",
            r"\uD83E\uDD80",
            r"\ud800",
            r"\x",
            "\u{1}",
        ];
        let long_after = alloc::format!("é中🦀{}", "z".repeat(80));
        let afters = [
            "",
            "z",
            "中",
            "zzzzzzz",
            "é中🦀zzzzzzzzzzzzzzzzzzzz",
            &long_after,
        ];
        for fill in ['a', 'é', '中', '🦀'] {
            for offset in 0..=140 {
                let mut head = String::new();
                while head.len() + fill.len_utf8() <= offset {
                    head.push(fill);
                }
                while head.len() < offset {
                    head.push('a');
                }
                for escape in escapes {
                    for after in afters {
                        let token = alloc::format!("\"{head}{escape}{after}\"");
                        let theirs = serde_json::from_str::<String>(&token).ok();
                        let ours = unquote::<serde_json::Error>(&token).ok();
                        assert_eq!(ours.as_deref(), theirs.as_deref(), "{token}");
                        let len = unescaped_len(&token).ok();
                        assert_eq!(len, theirs.as_ref().map(String::len), "{token}");
                        let in_line = alloc::format!("{token}}}}}}}, \"more\": [1, 2, 3]}}");
                        for text in [token.as_str(), in_line.as_str()] {
                            let read = unescape_token(text, 1, 0);
                            let words = unescape_token_words(text, 1, 0);
                            assert_eq!(read, words, "{text}");
                            let want = theirs.clone().map(|t| (t, token.len()));
                            assert_eq!(read.ok(), want, "{text}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn escape_errors_say_what() {
        assert_eq!(escape(br"\ud800x"), Err(EscapeError::LoneSurrogate));
        assert_eq!(escape(br"\udc00"), Err(EscapeError::Invalid));
        assert_eq!(escape(br"\q"), Err(EscapeError::Invalid));
        assert_eq!(escape(br"\u00e"), Err(EscapeError::Invalid));
        assert_eq!(escape(br"\u00e9"), Ok(('é', 6)));
    }
}
