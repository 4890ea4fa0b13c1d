//! The one JSON reader every typed ACP value is decoded through: a position
//! in a line's text, read one value at a time, where it stands, checking
//! the grammar of everything it passes.
//!
//! Generated decoders ([`Decode`](super::wire::Decode)) ask it for what
//! their schema expects (an object's next key, a string, a number, an
//! array's next item) and it answers with the value or a [`Fail`]: text
//! that is not JSON ([`Fail::Syntax`], never salvaged), or JSON of the
//! wrong shape ([`Fail::Mismatch`], which lenient decoding can salvage by
//! going back to a [`Mark`] and [`skip`](Reader::skip)ping the value).
//!
//! Strings come back borrowed when they hold no escapes. With escapes they
//! are checked and unescaped in one pass into one allocation, never grown:
//! of their escaped size when their end is already known or found by a
//! short search (no escaped quote 4 KiB or more in), else of the rest of
//! the text (which the string cannot outgrow), trimmed after.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::{String, ToString};
use core::str::FromStr;

use crate::json::scan::skip_str;
use crate::json::scan::{
    key_at, plain_key, plain_u64, skip_value_within, skip_ws, tight_string_member, MAX_DEPTH,
};
use crate::json::string_end::{str_end, str_end_within};
use crate::json::swar::{find_special, near_special, Near};
use crate::json::unescape::{unescape_token, unquote, EscapeError};

/// An unescaped string keeps up to this many unused bytes of capacity
/// beyond twice its length before it is trimmed.
pub(crate) const LONG: usize = 4096;

/// Why a value could not be read or typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fail {
    /// The text is not JSON at this byte offset: the whole value fails,
    /// leniently too.
    Syntax(usize),
    /// A required member is absent: never salvaged below the nearest
    /// optional member or list item.
    Missing(&'static str),
    /// The value does not fit (a wrong type, a duplicate member, an
    /// integer out of range): salvaged by lenient decoding.
    Mismatch(String),
}

impl Fail {
    /// The lowercase reason, in `serde`'s words where it has them.
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::Syntax(at) => format!("invalid json at byte {at}"),
            Self::Missing(name) => format!("missing field `{name}`"),
            Self::Mismatch(text) => text.clone(),
        }
    }

    /// Whether the text is not JSON (which nothing salvages).
    pub(crate) fn is_syntax(&self) -> bool {
        matches!(self, Self::Syntax(_))
    }
}

/// A position to come back to.
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    pos: usize,
    depth: u32,
}

/// A position in the text and the containers open around it.
pub(crate) struct Reader<'de> {
    text: &'de str,
    pos: usize,
    /// Containers open around the position that count towards the nesting
    /// limit ([`MAX_DEPTH`], as `serde_json`'s recursion limit).
    depth: u32,
    /// The last long string whose end was searched for: its opening quote
    /// and the offset after its closing quote. A union whose tag comes
    /// after a long text passes over it to find the tag, then reads it;
    /// a union inside it, tag last too, passes over it once more: its end
    /// is searched for once.
    long_string: Option<(usize, usize)>,
}

impl<'de> Reader<'de> {
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'de str) -> Self {
        Self {
            text,
            pos: 0,
            depth: 0,
            long_string: None,
        }
    }

    fn bytes(&self) -> &'de [u8] {
        self.text.as_bytes()
    }

    /// Where the reader is.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            depth: self.depth,
        }
    }

    /// Goes back to `mark`.
    pub(crate) fn reset(&mut self, mark: Mark) {
        self.pos = mark.pos;
        self.depth = mark.depth;
    }

    /// Moves on to `pos`, past text read without the reader (the lead of
    /// a line, [`decode_line`](super::decode_line)'s): no container opens
    /// or closes in it.
    pub(crate) fn advance_to(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// The byte offset of the position.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The first byte of the next value (whitespace skipped), 0 at the end.
    pub(crate) fn peek(&mut self) -> u8 {
        self.pos = skip_ws(self.bytes(), self.pos);
        self.bytes().get(self.pos).copied().unwrap_or(0)
    }

    /// Whether only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.peek();
        self.pos >= self.text.len()
    }

    fn syntax<T>(&self) -> Result<T, Fail> {
        Err(Fail::Syntax(self.pos))
    }

    /// Passes over the value here, checking its grammar, and returns its
    /// text.
    pub(crate) fn skip(&mut self) -> Result<&'de str, Fail> {
        self.peek();
        let start = self.pos;
        let room = MAX_DEPTH.saturating_sub(self.depth);
        let end =
            skip_value_within(self.bytes(), start, room).map_err(|e| Fail::Syntax(e.offset))?;
        self.pos = end;
        self.text.get(start..end).ok_or(Fail::Syntax(start))
    }

    /// Passes over the value here without checking it: the look ahead of
    /// a union for its tag, whose decoding pass then checks every byte.
    /// On text that is not JSON it stops somewhere (never past the end,
    /// never panicking), and that pass reports the error.
    pub(crate) fn pass(&mut self) {
        let b = self.bytes();
        let mut i = skip_ws(b, self.pos);
        let mut depth = 0usize;
        loop {
            match b.get(i) {
                None => break,
                Some(b'"') => i = self.pass_string(i),
                Some(b'{' | b'[') => {
                    depth = depth.saturating_add(1);
                    i = i.saturating_add(1);
                    continue;
                }
                Some(b'}' | b']') if depth > 0 => {
                    depth = depth.saturating_sub(1);
                    i = i.saturating_add(1);
                }
                Some(b',' | b':' | b' ' | b'\t' | b'\n' | b'\r') if depth > 0 => {
                    i = i.saturating_add(1);
                    continue;
                }
                Some(_) => {
                    // A scalar: up to the next delimiter.
                    let rest = b.get(i..).unwrap_or_default();
                    let len = rest
                        .iter()
                        .position(|&c| {
                            matches!(
                                c,
                                b',' | b'}' | b']' | b':' | b'"' | b' ' | b'\t' | b'\n' | b'\r'
                            )
                        })
                        .unwrap_or(rest.len());
                    i = i.saturating_add(len.max(1));
                }
            }
            if depth == 0 {
                break;
            }
        }
        self.pos = i.min(b.len());
    }

    /// The offset after the string whose opening quote is at `quote`,
    /// passed over unchecked: at once when the first special byte of the
    /// sixteen after the quote is its closing quote (a key, an id, a tag),
    /// else searched by [`string_end`](Self::string_end).
    fn pass_string(&mut self, quote: usize) -> usize {
        let from = quote.saturating_add(1);
        match near_special(self.bytes(), from) {
            Near::At(n) if self.bytes().get(n) == Some(&b'"') => n.saturating_add(1),
            Near::At(n) => self.string_end(quote, n),
            Near::Further | Near::Short => self.string_end(quote, from),
        }
    }

    /// The offset after the string whose opening quote is at `quote`, its
    /// text searched from `from` (no escape before it), unchecked as
    /// [`str_end`]; a long one's is remembered (see `long_string`).
    fn string_end(&mut self, quote: usize, from: usize) -> usize {
        if let Some((at, end)) = self.long_string {
            if at == quote {
                return end;
            }
        }
        let end = str_end(self.bytes(), from.saturating_sub(1));
        if end.saturating_sub(quote) > LONG {
            self.long_string = Some((quote, end));
        }
        end
    }

    /// A mismatch: the value here is not `expected`. The value is described
    /// as `serde_json` describes it; the position does not move.
    #[cold]
    pub(crate) fn mismatch<T>(&mut self, expected: &str) -> Result<T, Fail> {
        let what = self.describe()?;
        Err(Fail::Mismatch(format!(
            "invalid type: {what}, expected {expected}"
        )))
    }

    /// The value here in `serde`'s words: a string, an integer, a map, …
    fn describe(&mut self) -> Result<String, Fail> {
        let mark = self.mark();
        let text = self.skip()?;
        self.reset(mark);
        Ok(match text.as_bytes().first() {
            Some(b'"') => match unquote::<serde_json::Error>(text) {
                Ok(s) => format!("string {s:?}"),
                Err(_) => "string".to_string(),
            },
            Some(b'{') => "map".to_string(),
            Some(b'[') => "sequence".to_string(),
            Some(b'n') => "null".to_string(),
            Some(b't' | b'f') => format!("boolean `{text}`"),
            _ if text == "-0" || text.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) => {
                format!("floating point `{text}`")
            }
            _ => format!("integer `{text}`"),
        })
    }

    /// Enters the object here; a mismatch (`expected`) when the value is
    /// not an object.
    pub(crate) fn open_object(&mut self, expected: &str) -> Result<(), Fail> {
        if self.peek() != b'{' {
            return self.mismatch(expected);
        }
        self.enter()
    }

    /// Enters the array here; a mismatch when the value is not an array.
    pub(crate) fn open_array(&mut self) -> Result<(), Fail> {
        if self.peek() != b'[' {
            return self.mismatch("a sequence");
        }
        self.enter()
    }

    fn enter(&mut self) -> Result<(), Fail> {
        if self.depth >= MAX_DEPTH {
            return self.syntax();
        }
        self.depth = self.depth.saturating_add(1);
        self.pos = self.pos.saturating_add(1);
        Ok(())
    }

    /// Enters the line's own object, which does not count towards the
    /// nesting limit (nesting counts from the values of its members, as
    /// the envelope's walk counts it).
    pub(crate) fn open_line(&mut self) -> Result<(), Fail> {
        if self.peek() != b'{' {
            return self.syntax();
        }
        self.pos = self.pos.saturating_add(1);
        Ok(())
    }

    /// The object here, entered, when it opens with `head` (`{"tag":"`, a
    /// tag first, written tight) and a plain string: that string. Else `None`.
    #[inline(always)]
    pub(crate) fn tight_tag(&mut self, head: &str) -> Option<&'de str> {
        let (from, end) = tight_string_member(self.bytes(), self.pos, head.as_bytes())
            .filter(|_| self.depth < MAX_DEPTH)?;
        let text = self.text.get(from..end)?;
        self.depth = self.depth.saturating_add(1);
        self.pos = end.saturating_add(1);
        Some(text)
    }

    /// The next key of the object entered, leaving the position on its
    /// value (which the caller must read or [`skip`](Self::skip)); `None`
    /// after the closing brace. `first` is true before the first member.
    // Inlined into each struct's member loop: the position stays in a
    // register from key to key (a tenth of the instructions of a typical
    // update line; about 3% more code).
    #[inline(always)]
    pub(crate) fn key(
        &mut self,
        first: &mut bool,
        counted: bool,
    ) -> Result<Option<Cow<'de, str>>, Fail> {
        let b = self.bytes();
        let mut i = skip_ws(b, self.pos);
        match b.get(i) {
            Some(b'}') => {
                self.pos = i.saturating_add(1);
                if counted {
                    self.depth = self.depth.saturating_sub(1);
                }
                return Ok(None);
            }
            Some(b',') if !*first => i = skip_ws(b, i.saturating_add(1)),
            Some(b'"') if *first => {}
            _ => return Err(Fail::Syntax(i)),
        }
        *first = false;
        if b.get(i) != Some(&b'"') {
            return Err(Fail::Syntax(i));
        }
        // A plain key (no escape, no control character) is read in one
        // scan.
        match plain_key(b, i) {
            Some(Ok((end, value))) => {
                self.pos = value;
                self.text
                    .get(i.saturating_add(1)..end)
                    .map(|k| Some(Cow::Borrowed(k)))
                    .ok_or(Fail::Syntax(i))
            }
            Some(Err(e)) => Err(Fail::Syntax(e.offset)),
            None => self.escaped_key(i),
        }
    }

    /// [`key`](Self::key) when the key at `i` has an escape (or is not
    /// JSON).
    #[cold]
    fn escaped_key(&mut self, i: usize) -> Result<Option<Cow<'de, str>>, Fail> {
        let b = self.bytes();
        let (token, value) = key_at(b, i).map_err(|e| Fail::Syntax(e.offset))?;
        self.pos = value;
        let token = self
            .text
            .get(i..i.saturating_add(token.len()))
            .ok_or(Fail::Syntax(i))?;
        unquote::<serde_json::Error>(token)
            .map(Some)
            .map_err(|_| bad_escape(token, i))
    }

    /// Whether the array entered has another item, leaving the position on
    /// it. `first` is true before the first item.
    pub(crate) fn item(&mut self, first: &mut bool) -> Result<bool, Fail> {
        let b = self.bytes();
        let i = skip_ws(b, self.pos);
        match b.get(i) {
            Some(b']') => {
                self.pos = i.saturating_add(1);
                self.depth = self.depth.saturating_sub(1);
                Ok(false)
            }
            Some(b',') if !*first => {
                self.pos = i.saturating_add(1);
                Ok(true)
            }
            Some(_) if *first => {
                *first = false;
                self.pos = i;
                Ok(true)
            }
            _ => Err(Fail::Syntax(i)),
        }
    }

    /// Whether the value here is `null` (passed over if so).
    pub(crate) fn null(&mut self) -> Result<bool, Fail> {
        if self.peek() != b'n' {
            return Ok(false);
        }
        if self.bytes().get(self.pos..self.pos.saturating_add(4)) != Some(b"null".as_slice()) {
            return self.syntax();
        }
        self.pos = self.pos.saturating_add(4);
        Ok(true)
    }

    /// A string, borrowed when it has no escapes.
    pub(crate) fn string(&mut self) -> Result<Cow<'de, str>, Fail> {
        if self.peek() != b'"' {
            return self.mismatch("a string");
        }
        let b = self.bytes();
        let from = self.pos.saturating_add(1);
        let Some(n) = find_special(b, from) else {
            return Err(Fail::Syntax(b.len()));
        };
        match b.get(n) {
            Some(b'"') => {
                let text = self.text.get(from..n).ok_or(Fail::Syntax(n))?;
                self.pos = n.saturating_add(1);
                Ok(Cow::Borrowed(text))
            }
            Some(b'\\') => self.unescape(from, n).map(Cow::Owned),
            // A raw control character.
            _ => Err(Fail::Syntax(n)),
        }
    }

    /// The string whose text starts at `from` and whose first escape is at
    /// `first`, checked and unescaped in one pass into one allocation (an
    /// unescaped string is never longer than its escaped text). It is of
    /// the escaped size when the end is known (a long string passed over
    /// before, see `long_string`) or found by a short search (no escaped
    /// quote [`LONG`] bytes or more in). Other text, with `\"` past that,
    /// is not searched to its end first (in code, full of quotes, that
    /// search costs a third of the unescaping): its allocation is of the
    /// rest of the text, which it cannot outgrow, so it is never grown
    /// and copied as it is read (a string grown from 8 KiB by doubling
    /// spent a tenth of a file's decoding in those copies). Then it
    /// is trimmed, in place, when much of it went unused (the string ends
    /// well before the line, or megabytes of `\u` escapes shrank to a
    /// third); an allocator maps pages as they are written, so the part
    /// never written costs no memory meanwhile.
    #[inline(never)]
    fn unescape(&mut self, from: usize, first: usize) -> Result<String, Fail> {
        let quote = from.saturating_sub(1);
        let sized_to = match self.long_string {
            Some((at, end)) if at == quote => end,
            _ => str_end_within(self.bytes(), first, from.saturating_add(LONG))
                .unwrap_or(self.text.len()),
        };
        match unescape_token(self.text, from, sized_to.saturating_sub(from)) {
            Ok((mut out, end)) => {
                let spare = out.capacity().saturating_sub(out.len());
                if spare > (out.len() / 4).saturating_add(LONG) {
                    out.shrink_to_fit();
                }
                self.pos = end;
                Ok(out)
            }
            // The token up to its end: text that is JSON but that a Rust
            // string cannot hold (a lone surrogate) is a mismatch, as it
            // is to `serde_json`.
            Err(at) => {
                let end = self.string_end(quote, first);
                Err(self
                    .text
                    .get(quote..end)
                    .map_or(Fail::Syntax(at), |token| bad_escape(token, at)))
            }
        }
    }

    /// `true` or `false`.
    pub(crate) fn boolean(&mut self) -> Result<bool, Fail> {
        match self.peek() {
            b't' if self.bytes().get(self.pos..self.pos.saturating_add(4))
                == Some(b"true".as_slice()) =>
            {
                self.pos = self.pos.saturating_add(4);
                Ok(true)
            }
            b'f' if self.bytes().get(self.pos..self.pos.saturating_add(5))
                == Some(b"false".as_slice()) =>
            {
                self.pos = self.pos.saturating_add(5);
                Ok(false)
            }
            _ => self.mismatch("a boolean"),
        }
    }

    /// The token of the number here (checked), without moving; a mismatch
    /// (`expected`) when the value is not a number.
    fn number_token(&mut self, expected: &str) -> Result<&'de str, Fail> {
        if !matches!(self.peek(), b'-' | b'0'..=b'9') {
            return self.mismatch(expected);
        }
        let mark = self.mark();
        let token = self.skip()?;
        self.reset(mark);
        Ok(token)
    }

    /// An integer of type `T` (`name` is its Rust name, for the error).
    pub(crate) fn integer<T: FromStr + TryFrom<u64>>(&mut self, name: &str) -> Result<T, Fail> {
        // Most are plain and fit: read at once.
        if let Some((v, end)) = plain_u64(self.bytes(), self.pos) {
            if let Ok(v) = T::try_from(v) {
                self.pos = end;
                return Ok(v);
            }
        }
        let token = self.number_token(name)?;
        // `-0` is a float to `serde_json`, as every number with a
        // fraction or an exponent.
        if token == "-0" || token.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) {
            return self.mismatch(name);
        }
        match token.parse::<T>() {
            Ok(v) => {
                self.pos = self.pos.saturating_add(token.len());
                Ok(v)
            }
            Err(_) => Err(Fail::Mismatch(format!(
                "invalid value: integer `{token}`, expected {name}"
            ))),
        }
    }

    /// Any JSON number, as written.
    pub(crate) fn number(&mut self) -> Result<serde_json::Number, Fail> {
        let token = self.number_token("a number")?;
        let n = token
            .parse::<serde_json::Number>()
            .map_err(|e| Fail::Mismatch(e.to_string()))?;
        self.pos = self.pos.saturating_add(token.len());
        Ok(n)
    }
}

/// Why the string token at `at` did not unescape: text that is not JSON,
/// or valid JSON a Rust string cannot hold (a lone surrogate), which is a
/// mismatch as it is to `serde_json`'s typed decoding.
fn bad_escape(token: &str, at: usize) -> Fail {
    match skip_str(token.as_bytes(), 0) {
        Ok(end) if end == token.len() => {
            Fail::Mismatch(EscapeError::LoneSurrogate.message().to_string())
        }
        _ => Fail::Syntax(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_is_asked_for() {
        let mut r = Reader::new(r#" {"a" : "x\ny", "b": [1, -2], "c": null, "d": true} "#);
        r.open_object("a map").unwrap();
        let mut first = true;
        assert_eq!(r.key(&mut first, true).unwrap().as_deref(), Some("a"));
        assert_eq!(r.string().unwrap(), "x\ny");
        assert_eq!(r.key(&mut first, true).unwrap().as_deref(), Some("b"));
        r.open_array().unwrap();
        let mut item = true;
        assert!(r.item(&mut item).unwrap());
        assert_eq!(r.integer::<u32>("u32").unwrap(), 1);
        assert!(r.item(&mut item).unwrap());
        assert_eq!(
            r.integer::<u32>("u32").unwrap_err().reason(),
            "invalid value: integer `-2`, expected u32"
        );
        assert_eq!(r.integer::<i64>("i64").unwrap(), -2);
        assert!(!r.item(&mut item).unwrap());
        assert_eq!(r.key(&mut first, true).unwrap().as_deref(), Some("c"));
        assert!(r.null().unwrap());
        assert_eq!(r.key(&mut first, true).unwrap().as_deref(), Some("d"));
        assert_eq!(
            r.string().unwrap_err().reason(),
            "invalid type: boolean `true`, expected a string"
        );
        assert!(r.boolean().unwrap());
        assert_eq!(r.key(&mut first, true).unwrap(), None);
        assert!(r.at_end());
    }

    #[test]
    fn a_key_starts_with_a_quote() {
        let mut r = Reader::new(r#"{"a":1,b":2}"#);
        r.open_object("a map").unwrap();
        let mut first = true;
        assert_eq!(r.key(&mut first, true).unwrap().as_deref(), Some("a"));
        r.skip().unwrap();
        assert!(r.key(&mut first, true).unwrap_err().is_syntax());
    }

    #[test]
    fn syntax_errors_are_not_mismatches() {
        for text in [
            r#""a"#,
            "\"a\u{1}\"",
            r#""\q""#,
            "[1,]",
            "{\"a\" 1}",
            "tru",
            "01",
        ] {
            let mut r = Reader::new(text);
            assert!(r.skip().is_err() || !r.at_end(), "{text}");
        }
        let mut r = Reader::new("\"a\u{1}b\"");
        assert!(r.string().unwrap_err().is_syntax());
        let mut r = Reader::new(r#""\q""#);
        assert!(r.string().unwrap_err().is_syntax());
    }

    #[test]
    fn a_lone_surrogate_is_a_mismatch_in_json_and_syntax_outside() {
        let mut r = Reader::new(r#""a\nb\ud800c" "#);
        let why = r.string().unwrap_err();
        assert!(!why.is_syntax());
        assert_eq!(why.reason(), "lone leading surrogate in json string");
        for text in [r#""a\nb\ud800c"#, "\"a\\nb\\ud800\u{1}\""] {
            let mut r = Reader::new(text);
            assert!(r.string().unwrap_err().is_syntax(), "{text}");
        }
    }

    #[test]
    fn long_strings_unescape_while_scanned() {
        let body = "x".repeat(LONG + 10) + "\\n" + &"y".repeat(10);
        let text = format!("\"{body}\" ");
        let mut r = Reader::new(&text);
        let s = r.string().unwrap();
        assert_eq!(s.len(), LONG + 10 + 1 + 10);
        assert!(s.ends_with("\nyyyyyyyyyy"));
        assert!(r.at_end());
    }

    #[test]
    fn strings_read_as_serde_json_reads_them() {
        // Every escape, runs of each length around a word, and texts short
        // (sized exactly), long (grown) and long but passed over first
        // (sized from the end remembered); the oracle is serde_json.
        let pieces = [
            r#"\""#,
            r"\\",
            r"\/",
            r"\n",
            r"\t",
            r"\b",
            r"\f",
            r"\r",
            r"\u00e9",
            r"\u2713",
            r"\ud83e\udd80",
            "caf\u{e9} ",
            "a",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "0123456789abcdef",
            "\u{1F980}",
        ];
        for len in [40, LONG - 30, 3 * LONG + 7] {
            let mut body = String::new();
            let mut k = 0usize;
            while body.len() < len {
                body.push_str(pieces[k % pieces.len()]);
                body.push_str(pieces[(k * 7 + 3) % pieces.len()]);
                k += 1;
            }
            let token = format!("\"{body}\"");
            let want: String = serde_json::from_str(&token).unwrap();
            let text = format!("{token},[{token}]");
            let mut r = Reader::new(&text);
            let got = r.string().unwrap();
            assert!(got == want, "{len}: read differs");
            if let Cow::Owned(s) = &got {
                assert!(s.capacity() - s.len() <= s.len() / 4 + LONG, "{len}");
            }
            assert_eq!(r.bytes().get(r.pos), Some(&b','));
            r.pos += 2;
            let mark = r.mark();
            r.pass();
            r.reset(mark);
            assert!(r.string().unwrap() == want, "{len}: passed over, then read");
        }
    }

    #[test]
    fn long_strings_passed_over_then_read_are_read_whole() {
        // Long strings with an escaped quote inside: as sent, and as read.
        let sent = |c: &str| format!("{}\\\"{}", c.repeat(LONG), c.repeat(LONG));
        let read = |c: &str| format!("{}\"{}", c.repeat(LONG), c.repeat(LONG));
        let text = format!(
            r#"{{"x":"{}","y":["{}","{}"]}}"#,
            sent("a"),
            sent("b"),
            sent("a")
        );
        // Passed over (a union's look ahead), then read from the start by
        // the same reader: the end remembered is only used at its quote.
        let mut r = Reader::new(&text);
        r.pass();
        assert!(r.at_end());
        r.reset(Mark { pos: 0, depth: 0 });
        r.open_object("a map").unwrap();
        let mut first = true;
        let mut strings = alloc::vec::Vec::new();
        assert_eq!(r.key(&mut first, true).unwrap().as_deref(), Some("x"));
        strings.push(r.string().unwrap());
        assert_eq!(r.key(&mut first, true).unwrap().as_deref(), Some("y"));
        r.open_array().unwrap();
        let mut item = true;
        while r.item(&mut item).unwrap() {
            strings.push(r.string().unwrap());
        }
        assert_eq!(r.key(&mut first, true).unwrap(), None);
        assert!(r.at_end());
        let want = [read("a"), read("b"), read("a")];
        assert!(strings == want, "strings read differ from those sent");
    }

    #[test]
    fn passing_over_finds_where_valid_values_end() {
        for (text, end) in [
            (r#"{"a":[1,{"b":"x\"}"}],"c":null} ,"#, 31),
            (r#""a\\" 1"#, 5),
            ("-1.5e3,", 6),
            ("[] ", 2),
            ("true}", 4),
        ] {
            let mut r = Reader::new(text);
            r.pass();
            assert_eq!(r.pos(), end, "{text}");
            let mut r = Reader::new(text);
            r.skip().unwrap();
            assert_eq!(r.pos(), end, "{text}");
        }
        // Text that is not JSON: it stops within the text.
        for text in ["{\"a", "[[[", "\"", "}", "{\"a\":\"\\"] {
            let mut r = Reader::new(text);
            r.pass();
            assert!(r.pos() <= text.len());
        }
    }

    #[test]
    fn passing_over_a_string_ends_where_a_byte_loop_does() {
        // The end a byte loop finds: escapes passed over two bytes at once.
        let naive = |b: &[u8]| {
            let mut i = 1;
            while let Some(&c) = b.get(i) {
                match c {
                    b'\\' => i += 2,
                    b'"' => return i + 1,
                    _ => i += 1,
                }
            }
            b.len()
        };
        for len in 0..40 {
            for at in 0..=len {
                for escape in [r#"\""#, r"\\", r"\n", r"\u0041", "\u{1}", "é"] {
                    let mut text = String::from("\"");
                    text.push_str(&"a".repeat(at));
                    text.push_str(escape);
                    text.push_str(&"b".repeat(len - at));
                    text.push_str("\",1");
                    let mut r = Reader::new(&text);
                    r.pass();
                    assert_eq!(r.pos(), naive(text.as_bytes()), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn nesting_is_limited() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(Reader::new(&deep).skip().unwrap_err().is_syntax());
    }
}
