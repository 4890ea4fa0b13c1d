//! The routing peek: a line the server only forwards is read up to the
//! members it routes on, never decoded past them.
//!
//! A message in the envelope's own form (`{"jsonrpc":"2.0","id":…,
//! "method":"…","params":…}`, a notification without its `id`, a response
//! with `result` in place of `method` and `params`; no whitespace between
//! the envelope's members, a plain method and id, the members in this
//! order) is read member by member; the params' (result's) members are
//! walked for `sessionId` with values passed over by their structure
//! alone: a string ends at its first quote not escaped (the JSON
//! scanner's search: a word at a time, then `memchr`), brackets must nest
//! and match, and escapes and scalars inside are not checked. Anything
//! else (another order, escapes in a key or the method, an id the peek
//! does not read plainly, deep nesting) is `None`:
//! the caller decodes the line in full ([`Message::decode`]), which is the
//! reference the peek is held against (the tests here, and the router's
//! fuzz target): on every line the full decode takes, the peek's message
//! and session member are the same.
//!
//! What the peek does not check is the inside of values it passes over:
//! a line whose tail holds an invalid escape or a stray control character
//! is forwarded as it came, and the peer's parser refuses it. The server
//! peeks at every line of an agent (it forwards them and answers none),
//! and at a client's messages of at least [`PEEK_FROM`] bytes: a shorter
//! one costs little to decode in full, and a malformed one gets its
//! `-32700`.

use alloc::borrow::Cow;

use crate::acp::{Message, Notification, RawJson, Request, RequestId, Response, SessionMember};
use crate::json::string_end::str_end_within;
use crate::json::swar::{near_special, short_special, Near};

/// A client's messages shorter than this (64 KiB) are decoded in full;
/// longer ones the server only forwards are peeked at (an agent's lines
/// always are).
pub(crate) const PEEK_FROM: usize = 64 * 1024;

/// The deepest nesting the peek passes over (well within the full
/// decode's 128 levels: deeper lines are decoded in full, and refused
/// there when too deep).
const MAX_DEPTH: u32 = 100;

/// What the peek read of a line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Peeked<'a> {
    /// The message, as [`Message::decode`] gives it.
    pub(crate) message: Message<'a>,
    /// `params.sessionId` (`result.sessionId` for a response), as
    /// [`Message::decode_with_session`] gives it.
    pub(crate) session: SessionMember<'a>,
    /// `params._meta` (`result._meta`), read by the same walk.
    pub(crate) meta: SessionMember<'a>,
}

/// The message of `line` and its session member, read up to the members
/// the router routes on; `None` when the line is not in the envelope's
/// own form (decode it in full then).
pub(crate) fn peek(line: &str) -> Option<Peeked<'_>> {
    peek_passed(line, &mut Passed::default())
}

/// [`peek`], noting in `passed` the long strings it passed over (for a
/// second walk over the same line: [`pass_over`]).
pub(crate) fn peek_passed<'a>(line: &'a str, passed: &mut Passed) -> Option<Peeked<'a>> {
    let b = line.as_bytes();
    let mut at = expect(b, 0, br#"{"jsonrpc":"2.0","#)?;
    let id = if b.get(at..)?.starts_with(br#""id":"#) {
        let start = at.checked_add(5)?;
        let (id, end) = plain_id(line, start)?;
        at = expect(b, end, b",")?;
        Some(id)
    } else {
        None
    };
    if b.get(at..)?.starts_with(br#""method":"#) {
        let start = at.checked_add(9)?;
        let end = plain_string_end(b, start)?;
        let method = line.get(start.checked_add(1)?..end.checked_sub(1)?)?;
        at = expect(b, end, br#","params":"#)?;
        let (params, [session, meta], end) = value_with_session(line, at, passed)?;
        expect_end(b, end)?;
        let method = Cow::Borrowed(method);
        let params = Some(params);
        let message = match id {
            Some(id) => Message::Request(Request { id, method, params }),
            None => Message::Notification(Notification { method, params }),
        };
        return Some(Peeked {
            message,
            session,
            meta,
        });
    }
    let id = id?;
    at = expect(b, at, br#""result":"#)?;
    let (result, [session, meta], end) = value_with_session(line, at, passed)?;
    expect_end(b, end)?;
    Some(Peeked {
        message: Message::Response(Response { id, result }),
        session,
        meta,
    })
}

/// `params.sessionId`-style lookup in one raw JSON value: its `sessionId`
/// member when it is an object, read with the peek's walk; `None` when
/// the walk cannot tell (an escaped key, broken structure): the caller's
/// full scan decides then.
pub(crate) fn session_member(raw: &str) -> Option<SessionMember<'_>> {
    let (_, [session, _], end) = value_with_session(raw, 0, &mut Passed::default())?;
    (end == raw.len()).then_some(session)
}

/// The raw values of the members `names` of the object `raw`, read with
/// the peek's walk (values passed over by their structure); `None` when
/// the walk cannot tell (not an object, an escaped key, broken
/// structure) or a named member comes twice: the caller decodes in full
/// then.
pub(crate) fn members<'a, const N: usize>(
    raw: &'a str,
    names: [&str; N],
) -> Option<[Option<&'a str>; N]> {
    let b = raw.as_bytes();
    let mut found = [None; N];
    let passed = &mut Passed::default();
    let mut i = expect(b, 0, b"{")?;
    if b.get(i) == Some(&b'}') {
        return (i.checked_add(1)? == b.len()).then_some(found);
    }
    loop {
        let key_end = plain_string_end(b, i)?;
        let key = raw.get(i.checked_add(1)?..key_end.checked_sub(1)?)?;
        i = expect(b, key_end, b":")?;
        let end = skip(b, i, passed)?;
        if let Some(n) = names.iter().position(|name| *name == key) {
            let slot = found.get_mut(n)?;
            if slot.is_some() {
                return None;
            }
            *slot = Some(raw.get(i..end)?);
        }
        i = end;
        match b.get(i)? {
            b',' => i = i.checked_add(1)?,
            b'}' => return (i.checked_add(1)? == b.len()).then_some(found),
            _ => return None,
        }
    }
}

/// The offset after `token` at `at`.
fn expect(b: &[u8], at: usize, token: &[u8]) -> Option<usize> {
    b.get(at..)?
        .starts_with(token)
        .then(|| at.checked_add(token.len()))
        .flatten()
}

/// The line ends with the envelope's `}` at `at`.
fn expect_end(b: &[u8], at: usize) -> Option<()> {
    (b.get(at..)? == b"}").then_some(())
}

/// An id written plainly at `at`: an integer without sign tricks, or a
/// string without escapes or control characters; and where it ends.
fn plain_id(line: &str, at: usize) -> Option<(RequestId<'_>, usize)> {
    let b = line.as_bytes();
    if b.get(at) == Some(&b'"') {
        let end = plain_string_end(b, at)?;
        let text = line.get(at.checked_add(1)?..end.checked_sub(1)?)?;
        return Some((RequestId::Str(Cow::Borrowed(text)), end));
    }
    let digits_from = if b.get(at) == Some(&b'-') {
        at.checked_add(1)?
    } else {
        at
    };
    let rest = b.get(digits_from..)?;
    let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let end = digits_from.checked_add(n)?;
    // No leading zero (`01` is not JSON), no `-0` (a float to the full
    // decode); the number fits an `i64` (else it is a float there too).
    let first = rest.first()?;
    if n == 0 || (*first == b'0' && (n > 1 || digits_from != at)) {
        return None;
    }
    let value: i64 = line.get(at..end)?.parse().ok()?;
    Some((RequestId::Number(value), end))
}

/// The end (after its closing quote) of the string at `at`, when it holds
/// no escape and no control character: its first such byte (the JSON
/// scanner's word-at-a-time search, [`short_special`]) is its closing
/// quote.
#[inline]
fn plain_string_end(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let end = short_special(b, at.checked_add(1)?)?;
    (b.get(end) == Some(&b'"')).then(|| end.checked_add(1))?
}

/// The value at `at` (params or result) as raw JSON, its `sessionId`
/// and `_meta` members when it is an object, and where it ends.
fn value_with_session<'a>(
    text: &'a str,
    at: usize,
    passed: &mut Passed,
) -> Option<(RawJson<'a>, [SessionMember<'a>; 2], usize)> {
    let b = text.as_bytes();
    let (members, end) = match b.get(at)? {
        b'{' => object_session(text, at, passed)?,
        _ => (
            [SessionMember::Absent, SessionMember::Absent],
            skip(b, at, passed)?,
        ),
    };
    let raw = RawJson::from_validated(text.get(at..end)?);
    Some((raw, members, end))
}

/// The members of the object at `at`: its `sessionId` and its `_meta`,
/// and where it ends.
fn object_session<'a>(
    text: &'a str,
    at: usize,
    passed: &mut Passed,
) -> Option<([SessionMember<'a>; 2], usize)> {
    const NAMES: [&[u8]; 2] = [br#""sessionId""#, br#""_meta""#];
    let b = text.as_bytes();
    let mut found = [SessionMember::Absent, SessionMember::Absent];
    let mut i = at.checked_add(1)?;
    if b.get(i) == Some(&b'}') {
        return Some((found, i.checked_add(1)?));
    }
    loop {
        let key_end = plain_string_end(b, i)?;
        let key = b.get(i..key_end)?;
        let slot = NAMES.iter().position(|name| *name == key);
        i = expect(b, key_end, b":")?;
        let end = skip(b, i, passed)?;
        if let Some(slot) = slot.and_then(|n| found.get_mut(n)) {
            *slot = match slot {
                SessionMember::Absent => SessionMember::One(text.get(i..end)?),
                _ => SessionMember::Repeated,
            };
        }
        i = end;
        match b.get(i)? {
            b',' => i = i.checked_add(1)?,
            b'}' => return Some((found, i.checked_add(1)?)),
            _ => return None,
        }
    }
}

/// Where the JSON value at `at` of `b` ends, read by its structure alone
/// (see the module docs); `None` when the structure is broken or nests
/// too deep. For text known to be JSON (a line already routed).
pub(crate) fn pass_over(b: &[u8], at: usize, passed: &mut Passed) -> Option<usize> {
    skip(b, at, passed)
}

/// Where the value at `at` ends, by its structure: a string at its first
/// quote not escaped, a container where its brackets close (matching
/// kinds, at most [`MAX_DEPTH`] deep), a scalar by the full scanner.
fn skip(b: &[u8], at: usize, passed: &mut Passed) -> Option<usize> {
    match b.get(at)? {
        b'"' => string_end(b, at, passed),
        b'{' | b'[' => container_end(b, at, passed),
        _ => crate::json::scan::skip_value(b, at).ok(),
    }
}

/// The end of the string at `at`: after its first quote that an even
/// number of backslashes precede ([`str_end_within`]: a short string's
/// quote found a word at a time, prose's by `memchr`, text dense with
/// `\"` a block at a time).
#[inline(always)]
fn string_end(b: &[u8], at: usize, passed: &mut Passed) -> Option<usize> {
    let from = at.checked_add(1)?;
    // Most strings of a line (keys, tags, ids, an update's kind, a short
    // chunk of text) end within [`NEAR_TEXT`] bytes with no escape: their
    // closing quote is the first special byte there, found inline sixteen
    // bytes a step (a call to the search and its set-up cost more).
    let mut next = from;
    while next.wrapping_sub(from) < NEAR_TEXT {
        match near_special(b, next) {
            Near::At(end) if b.get(end) == Some(&b'"') => return end.checked_add(1),
            Near::Further => next = next.checked_add(16)?,
            Near::At(_) | Near::Short => break,
        }
    }
    if let Some(end) = passed.end_of(b, at) {
        return Some(end);
    }
    let end = str_end_within(b, from, usize::MAX)?;
    passed.note(at, end);
    Some(end)
}

/// The text of a string [`string_end`] searches inline, sixteen bytes a
/// step, before it calls the full search.
const NEAR_TEXT: usize = 64;

/// The long strings (at least [`LONG`] bytes) a walk passed over in one
/// line: where each opens and ends, at most [`PASSED`] of them. A second
/// walk over the same text (the room's paths, after the routing peek)
/// jumps over them instead of searching them again: a tool's output of
/// megabytes no longer fits the cache, and each pass over it reads it
/// from memory.
///
/// Only for the text it was filled on: [`Passed::end_of`] also checks
/// that a noted end is a quote of `b`, so a note can never send a walk
/// past the text's end, but a walk over other text would be misled.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Passed {
    spans: [(usize, usize); PASSED],
    len: usize,
}

/// Most long strings [`Passed`] notes (a line holds one or two: a tool's
/// output, its diff's two texts).
const PASSED: usize = 4;

/// The shortest string [`Passed`] notes: shorter ones cost little to
/// search again, and are likely still in the cache.
const LONG: usize = 64 * 1024;

impl Passed {
    /// Where the string opening at `at` of `b` ends, when noted.
    #[inline]
    fn end_of(&self, b: &[u8], at: usize) -> Option<usize> {
        let spans = self.spans.get(..self.len)?;
        let &(_, end) = spans.iter().find(|&&(open, _)| open == at)?;
        (b.get(end.checked_sub(1)?) == Some(&b'"')).then_some(end)
    }

    /// Notes the string from `at` to `end` when it is long and there is
    /// room.
    #[inline]
    fn note(&mut self, at: usize, end: usize) {
        if end.saturating_sub(at) < LONG {
            return;
        }
        if let Some(slot) = self.spans.get_mut(self.len) {
            *slot = (at, end);
            self.len = self.len.saturating_add(1);
        }
    }
}

/// The end of the object or array at `at`: its brackets counted outside
/// strings, each closing the kind it opened. Where the target has vector
/// compares, sixty-four bytes a step (the block walk below); the tests
/// hold that against this byte walk.
#[cfg(any(
    not(any(
        target_feature = "sse2",
        all(target_arch = "aarch64", target_feature = "neon")
    )),
    test
))]
fn container_end_bytes(b: &[u8], at: usize, passed: &mut Passed) -> Option<usize> {
    // One bit a level: 1 for an object.
    let mut open: u128 = 0;
    let mut depth: u32 = 0;
    let mut i = at;
    loop {
        let c = *b.get(i)?;
        match c {
            b'"' => {
                i = string_end(b, i, passed)?;
                continue;
            }
            b'{' | b'[' => {
                depth = depth.checked_add(1)?;
                if depth > MAX_DEPTH {
                    return None;
                }
                open = (open << 1) | u128::from(c == b'{');
            }
            b'}' | b']' => {
                if depth == 0 || (open & 1 == 1) != (c == b'}') {
                    return None;
                }
                open >>= 1;
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return i.checked_add(1);
                }
            }
            _ => {}
        }
        i = i.checked_add(1)?;
    }
}

/// The end of the object or array at `at`, as [`container_end_bytes`]
/// finds it (the same brackets, the same depth limit), where the target
/// has vector compares.
#[cfg(not(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
)))]
#[inline]
fn container_end(b: &[u8], at: usize, passed: &mut Passed) -> Option<usize> {
    container_end_bytes(b, at, passed)
}

/// [`container_end`] sixty-four bytes a step (a container of an agent's
/// line holds a few dozen strings: one step each, in place of one search
/// each). Each block's quotes, backslashes and brackets are found by
/// vector compares; the escaped quotes are taken out (a backslash escapes
/// the byte after it, runs carried across blocks, as the block search of
/// a string's end does), the bytes inside strings are those after an odd
/// number of the remaining quotes (a prefix xor), and only the brackets
/// outside them are visited, in order, each checked against the kind it
/// closes. A string still open at a block's end is passed by the string
/// search ([`string_end`]) from its opening quote, so a long string costs
/// what it costs outside a container. The last, shorter block is read
/// padded with spaces.
///
/// A backslash outside a string (not JSON) would escape the byte after it
/// here and not in the byte walk; on JSON the two agree (the tests hold
/// them to that).
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
fn container_end(b: &[u8], at: usize, passed: &mut Passed) -> Option<usize> {
    use crate::json::unescape::escaped_bits;
    use crate::json::vector::{structural_bits, BLOCK};
    // One bit a level: 1 for an object.
    let mut open: u128 = 0;
    let mut depth: u32 = 0;
    // All ones when a block starts inside a string; 1 when its first
    // byte is escaped.
    let mut inside: u64 = 0;
    let mut escaped_first: u64 = 0;
    let mut from = at;
    let mut padded = [b' '; BLOCK];
    loop {
        let rest = b.get(from..).filter(|r| !r.is_empty())?;
        let block = match rest.first_chunk::<BLOCK>() {
            Some(block) => block,
            None => {
                padded.get_mut(..rest.len())?.copy_from_slice(rest);
                &padded
            }
        };
        let [backslash, quote, opens, closes] = structural_bits(block);
        let backslash = backslash & !escaped_first;
        let escaped = escaped_bits(backslash) | escaped_first;
        let in_string = prefix_xor(quote & !escaped) ^ inside;
        let mut brackets = (opens | closes) & !in_string;
        while brackets != 0 {
            let k = usize::try_from(brackets.trailing_zeros()).ok()?;
            brackets &= brackets.wrapping_sub(1);
            let c = *block.get(k)?;
            if c == b'{' || c == b'[' {
                depth = depth.checked_add(1)?;
                if depth > MAX_DEPTH {
                    return None;
                }
                open = (open << 1) | u128::from(c == b'{');
            } else {
                if depth == 0 || (open & 1 == 1) != (c == b'}') {
                    return None;
                }
                open >>= 1;
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return from.checked_add(k)?.checked_add(1);
                }
            }
        }
        // A string that runs past the block (a tool's output, a file) is
        // passed by the string search from its opening quote, the last
        // quote of the block, in place of a block step per 64 bytes.
        let quotes = quote & !escaped;
        if in_string >> 63 == 1 && quotes != 0 {
            let last = usize::try_from(quotes.checked_ilog2()?).ok()?;
            from = string_end(b, from.checked_add(last)?, passed)?;
            inside = 0;
            escaped_first = 0;
            continue;
        }
        inside = 0u64.wrapping_sub(in_string >> 63);
        escaped_first = (backslash & !escaped) >> 63;
        from = from.checked_add(BLOCK)?;
    }
}

/// Bit `k` set when an odd number of the bits of `x` at or below `k`
/// are.
#[cfg(any(
    target_feature = "sse2",
    all(target_arch = "aarch64", target_feature = "neon")
))]
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests;
