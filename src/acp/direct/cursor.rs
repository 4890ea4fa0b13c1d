//! The direct decoder's cursor: reads the JSON at a position of a line,
//! one value at a time, through the crate's JSON scanner.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::LONG;
use crate::acp::raw::RawJson;
use crate::json::scan::{key_at, skip_value_within, skip_ws, str_end, value_end, MAX_DEPTH};
use crate::json::swar::find_special;
use crate::json::unescape::{escape, unquote};

/// A position in the text. Every value is read once, where it stands:
/// nested objects are decoded in place, never skipped first. `V` is the
/// mode (see the module docs).
pub(super) struct Cur<'a, const V: bool> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    /// Containers open around the position.
    depth: u32,
    /// Of those, the ones the nesting limit does not count: the line's own
    /// object when a whole line is decoded (nesting is counted from the
    /// values of the line's top-level object, as [`Message::decode`]
    /// limits it).
    ///
    /// [`Message::decode`]: super::Message::decode
    uncounted: u32,
}

impl<'a, const V: bool> Cur<'a, V> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 0,
            depth: 0,
            uncounted: 0,
        }
    }

    pub(super) fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    /// Enters the line's own object, which starts here and does not count
    /// towards the nesting limit.
    pub(super) fn open_line(&mut self) -> Option<()> {
        self.open()?;
        self.uncounted = self.depth;
        Some(())
    }

    /// Leaves the innermost container. Closing one that is not open is a
    /// bug of the decoder: debug builds fail at once, release builds give
    /// the line up to the general path rather than go on with a wrong depth.
    fn close(&mut self) -> Option<()> {
        debug_assert!(self.depth > 0, "closed a container that is not open");
        self.depth = self.depth.checked_sub(1)?;
        Some(())
    }

    /// Enters the object that starts here.
    pub(super) fn open(&mut self) -> Option<()> {
        let b = self.bytes();
        let i = skip_ws(b, self.pos);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        self.pos = i.checked_add(1)?;
        self.depth = self.depth.checked_add(1)?;
        Some(())
    }

    /// The next key of the object entered with [`Cur::open`], leaving the
    /// position on its value, which the caller must read or skip.
    /// `Some(None)` after the closing brace; `None` to give up (a key with
    /// escapes, or text that is not JSON).
    pub(super) fn key(&mut self, first: &mut bool) -> Option<Option<&'a [u8]>> {
        let b = self.bytes();
        let mut i = skip_ws(b, self.pos);
        match b.get(i)? {
            b'}' => {
                self.pos = i.checked_add(1)?;
                self.close()?;
                return Some(None);
            }
            b',' if !*first => i = skip_ws(b, i.checked_add(1)?),
            b'"' if *first => {}
            _ => return None,
        }
        *first = false;
        let (token, value) = key_at(b, i).ok()?;
        let key = token.get(1..token.len().checked_sub(1)?)?;
        if key.contains(&b'\\') {
            return None;
        }
        self.pos = value;
        Some(Some(key))
    }

    /// Passes over the value here (validating it in `V` mode) and returns
    /// its text.
    pub(super) fn take(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let b = self.bytes();
        let end = if V {
            let nesting = self.depth.checked_sub(self.uncounted)?;
            skip_value_within(b, start, MAX_DEPTH.checked_sub(nesting)?).ok()?
        } else {
            value_end(b, start)?
        };
        self.pos = end;
        self.text.get(start..end)
    }

    pub(super) fn skip(&mut self) -> Option<()> {
        self.take().map(|_| ())
    }

    /// The string token here (quotes included) and whether it has escapes.
    /// In `V` mode a raw control character gives up; escapes are checked
    /// by whoever unescapes them.
    pub(super) fn string_token(&mut self) -> Option<(&'a str, bool)> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos;
        let (end, escaped) = str_end(self.bytes(), start)?;
        self.pos = end;
        Some((self.text.get(start..end)?, escaped))
    }

    /// A string value, borrowed when it has no escapes, else unescaped
    /// into one allocation.
    pub(super) fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let b = self.bytes();
        let from = self.pos.checked_add(1)?;
        let mut j = from;
        let mut escaped = false;
        loop {
            let n = find_special(b, j)?;
            match b.get(n)? {
                b'"' => {
                    self.pos = n.checked_add(1)?;
                    let token = self.text.get(from.checked_sub(1)?..self.pos)?;
                    return if escaped {
                        unquote::<serde_json::Error>(token).ok()
                    } else {
                        token.get(1..token.len().checked_sub(1)?).map(Cow::Borrowed)
                    };
                }
                b'\\' if n.saturating_sub(from) > LONG => {
                    return self.unescape_long(from).map(Cow::Owned);
                }
                b'\\' => {
                    escaped = true;
                    // Past the escaped byte; a `\u` escape's hex digits
                    // are never special.
                    j = n.checked_add(2)?;
                }
                _ => return None,
            }
        }
    }

    /// Unescapes the long string whose text starts at `from` while finding
    /// its end (one pass instead of two: megabytes of tool output have an
    /// escape every line). Its length is not known yet, but the rest of the
    /// text bounds it: one allocation of that size, trimmed when much of it
    /// went unused. Only strings with an escape past their first
    /// [`LONG`] bytes come here, so there are few per line.
    pub(super) fn unescape_long(&mut self, from: usize) -> Option<String> {
        let b = self.bytes();
        let mut out = String::with_capacity(b.len().checked_sub(from)?);
        let mut j = from;
        loop {
            let n = find_special(b, j)?;
            out.push_str(self.text.get(j..n)?);
            match b.get(n)? {
                b'"' => {
                    self.pos = n.checked_add(1)?;
                    if out.capacity() > out.len().saturating_mul(2).saturating_add(LONG) {
                        out.shrink_to_fit();
                    }
                    return Some(out);
                }
                b'\\' => {
                    let (c, used) = escape(b.get(n..)?).ok()?;
                    out.push(c);
                    j = n.checked_add(used)?;
                }
                _ => return None,
            }
        }
    }

    /// An optional member's string. A `null` is left to the general path,
    /// which keeps it (in the struct's `extra`) to re-encode it.
    pub(super) fn opt_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.string().map(Some)
    }

    /// A value kept raw (`_meta`, `rawInput`, `rawOutput`): `null` is kept.
    pub(super) fn raw_json(&mut self) -> Option<RawJson<'a>> {
        self.take().map(RawJson::from_validated)
    }

    /// Exactly the string `token` (quotes included, no escapes).
    pub(super) fn exact(&mut self, token: &str) -> Option<()> {
        let end = self.pos.checked_add(token.len())?;
        if self.text.get(self.pos..end)? != token {
            return None;
        }
        self.pos = end;
        Some(())
    }

    /// Enters the object here and reads the tag of a tagged union: its
    /// first member must be `name`, a string without escapes.
    pub(super) fn tag(&mut self, name: &[u8], first: &mut bool) -> Option<&'a str> {
        self.open()?;
        if self.key(first)?? != name {
            return None;
        }
        let (token, escaped) = self.string_token()?;
        if escaped {
            return None;
        }
        token.strip_prefix('"')?.strip_suffix('"')
    }

    /// The elements of the array here, each read by `item` (a `null` is
    /// left to the general path, as for [`opt_string`](Self::opt_string)).
    pub(super) fn opt_array<T>(
        &mut self,
        item: fn(&mut Self) -> Option<T>,
    ) -> Option<Option<Vec<T>>> {
        if self.peek()? != b'[' {
            return None;
        }
        self.depth = self.depth.checked_add(1)?;
        let b = self.bytes();
        let mut out = Vec::new();
        self.pos = skip_ws(b, self.pos.checked_add(1)?);
        if self.peek() != Some(b']') {
            loop {
                out.push(item(self)?);
                let i = skip_ws(b, self.pos);
                match b.get(i)? {
                    b',' => self.pos = skip_ws(b, i.checked_add(1)?),
                    b']' => {
                        self.pos = i;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.pos = self.pos.checked_add(1)?;
        self.close()?;
        Some(Some(out))
    }
}

/// Stores a member's value; `None` (give up) on a duplicate, which the
/// general path reports as an error.
pub(super) fn set<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}
