//! A line's text on its way to a reader that must get one message a line.

use alloc::borrow::Cow;
use alloc::string::String;
use core::str::Utf8Error;

use super::splitter::{Line, RawLine};

/// The text of one line, without its terminator, for a consumer that must
/// never pass on two lines as one (a relay writing one message a frame,
/// an SSE event, a line of stdio): the team server's core takes an
/// agent's line as one
/// ([`Server::handle_agent_line`](crate::remote::Server::handle_agent_line)).
///
/// A splitter's line ([`Line`], [`RawLine::text`], `RawLine::into_text`)
/// is known to hold no `\n` (the splitter cut it there), so
/// [`holds_newline`](Self::holds_newline) costs nothing; any other string
/// (`From<&str>`, `From<String>`) is searched once when asked. So a relay
/// that splits its input passes each long line one time fewer, and a
/// caller with a string of its own keeps the check.
///
/// ```
/// use acp_codec::framing::{LineText, RawItem, RawLineSplitter};
///
/// let mut splitter = RawLineSplitter::new();
/// let Some(RawItem::Line(line)) = splitter.decode(b"{\"a\":1}\r\n") else { panic!() };
/// let text = line.text()?;
/// assert_eq!(text.as_str(), r#"{"a":1}"#);
/// assert!(!text.holds_newline());
/// // A string of the caller's own is searched.
/// assert!(LineText::from("{}\n{}").holds_newline());
/// # Ok::<(), core::str::Utf8Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineText<'a> {
    text: Cow<'a, str>,
    /// Cut by a splitter at its newline: holds none.
    split: bool,
}

impl<'a> LineText<'a> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the text holds a `\n`: `false` at no cost for a splitter's
    /// line, one search (`memchr`) for any other.
    pub fn holds_newline(&self) -> bool {
        !self.split && memchr::memchr(b'\n', self.text.as_bytes()).is_some()
    }

    /// The text, lent or owned as it came.
    pub fn into_cow(self) -> Cow<'a, str> {
        self.text
    }

    /// A splitter's text (holds no `\n`).
    fn split(text: Cow<'a, str>) -> Self {
        Self { text, split: true }
    }
}

impl<'a> From<&'a str> for LineText<'a> {
    fn from(text: &'a str) -> Self {
        Self {
            text: Cow::Borrowed(text),
            split: false,
        }
    }
}

impl<'a> From<&'a String> for LineText<'a> {
    fn from(text: &'a String) -> Self {
        Self::from(text.as_str())
    }
}

impl From<String> for LineText<'static> {
    fn from(text: String) -> Self {
        Self {
            text: Cow::Owned(text),
            split: false,
        }
    }
}

impl<'a> From<Cow<'a, str>> for LineText<'a> {
    fn from(text: Cow<'a, str>) -> Self {
        Self { text, split: false }
    }
}

impl<'a> From<Line<'a>> for LineText<'a> {
    fn from(line: Line<'a>) -> Self {
        Self::split(Cow::Borrowed(line.as_str()))
    }
}

impl<B: AsRef<[u8]>> RawLine<B> {
    /// The line's content (without its terminator) as text, lent: its
    /// bytes checked as UTF-8 once (vector code where the target has it).
    ///
    /// # Errors
    ///
    /// The content is not UTF-8 (the error says where).
    pub fn text(&self) -> Result<LineText<'_>, Utf8Error> {
        let content = self.content();
        match simdutf8::basic::from_utf8(content) {
            Ok(text) => Ok(LineText::split(Cow::Borrowed(text))),
            // Only a failure pays for the standard check, which says where.
            Err(_) => core::str::from_utf8(content).map(|t| LineText::split(Cow::Borrowed(t))),
        }
    }
}

#[cfg(feature = "bytes")]
impl RawLine<bytes::Bytes> {
    /// The line's content as owned text: its bytes become the string
    /// without a copy when they hold their allocation alone (a long line
    /// split off the front of a `BytesMut` whose rest has moved on), and
    /// are copied otherwise; checked as UTF-8 once.
    ///
    /// # Errors
    ///
    /// The content is not UTF-8; the error gives its bytes back.
    pub fn into_text(self) -> Result<LineText<'static>, alloc::string::FromUtf8Error> {
        let len = self.content().len();
        let mut bytes = alloc::vec::Vec::from(self.into_bytes());
        bytes.truncate(len);
        String::from_utf8(bytes).map(|t| LineText::split(Cow::Owned(t)))
    }

    /// [`into_text`](Self::into_text) for a reader that checked the line's
    /// first `checked` bytes as UTF-8 already, read by read while they were
    /// in the cache: only the rest is checked here (`simdutf8`), and the
    /// bytes become the string with no check of the whole. A line of
    /// megabytes is then not read from memory again for the check, and,
    /// as any splitter's line, not searched for a newline either.
    ///
    /// `checked` may pass the content's end (a check that took the
    /// terminator's `\r` too): the content's own prefix is used.
    ///
    /// # Safety
    ///
    /// The line's first `checked.min(content().len())` bytes are UTF-8
    /// ending at a character's end (`str::from_utf8` takes them): the rest
    /// is checked here, and the two together make the string unchecked.
    ///
    /// # Errors
    ///
    /// The content is not UTF-8; the error gives its bytes back.
    ///
    /// ```
    /// use acp_codec::framing::{RawItem, RawLineSplitter};
    /// use bytes::BytesMut;
    ///
    /// let mut splitter = RawLineSplitter::new();
    /// let mut buf = BytesMut::from("{\"text\":\"caf\u{e9}\"}\n");
    /// let Some(RawItem::Line(line)) = splitter.decode_bytes(&mut buf) else { panic!() };
    /// // The reader checked the first 10 bytes, `{"text":"c`, as they came.
    /// assert!(std::str::from_utf8(&line.content()[..10]).is_ok());
    /// // SAFETY: those 10 bytes are UTF-8 ending at a character's end.
    /// let text = unsafe { line.into_text_checked_from(10) }?;
    /// assert_eq!(text.as_str(), "{\"text\":\"caf\u{e9}\"}");
    /// assert!(!text.holds_newline());
    /// # Ok::<(), std::string::FromUtf8Error>(())
    /// ```
    #[allow(unsafe_code)]
    pub unsafe fn into_text_checked_from(
        self,
        checked: usize,
    ) -> Result<LineText<'static>, alloc::string::FromUtf8Error> {
        let len = self.content().len();
        let mut bytes = alloc::vec::Vec::from(self.into_bytes());
        bytes.truncate(len);
        let rest = bytes.get(checked.min(len)..).unwrap_or_default();
        if simdutf8::basic::from_utf8(rest).is_err() {
            // Only a failure pays for the standard check, which says where.
            return String::from_utf8(bytes).map(|t| LineText::split(Cow::Owned(t)));
        }
        // SAFETY: `bytes[checked..]` (with `checked` at most `len`) was
        // just checked as UTF-8, and `bytes[..checked]` is UTF-8 ending at
        // a character's end (the caller's promise); the two together are
        // UTF-8, and `truncate` kept both as they were.
        let text = unsafe { String::from_utf8_unchecked(bytes) };
        Ok(LineText::split(Cow::Owned(text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::{LineSplitter, RawItem, RawLineSplitter};
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// Each raw line of any input: its text is the content's, checked as
    /// the standard library checks it, and holds no newline; a string of
    /// the caller's own holds one exactly when it has a `\n`.
    fn raw_lines(input: &[u8]) -> Vec<RawLine<&[u8]>> {
        let mut splitter = RawLineSplitter::new();
        let mut rest = input;
        let mut lines = Vec::new();
        while let Some(item) = splitter.decode_eof(rest) {
            rest = rest.get(item.len()..).unwrap_or_default();
            if let RawItem::Line(line) = item {
                lines.push(line);
            }
        }
        lines
    }

    /// A raw line's bytes, and a prefix a reader checked as it came (any
    /// prefix the standard check takes ending at a character's end, at
    /// times past the content's end): the text made from them is the
    /// content as `String::from_utf8` (the oracle) reads it, bad bytes
    /// refused wherever they lie, and holds no newline.
    #[cfg(feature = "bytes")]
    #[test]
    #[allow(unsafe_code)]
    fn a_text_checked_in_part_is_what_the_standard_check_reads() {
        let bytes = proptest::collection::vec(
            prop_oneof![
                4 => Just(b'a'),
                1 => any::<u8>(),
                1 => proptest::sample::select(alloc::vec![0xc0u8, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xa0, 0xf0, 0x9f, 0x98, 0x80, 0xf4, 0x90, b'\n', b'\r']),
            ],
            0..300,
        );
        proptest!(|(input in bytes, cut in any::<proptest::sample::Index>(), past in any::<bool>())| {
            let mut buf = bytes::BytesMut::from(&input[..]);
            let mut splitter = RawLineSplitter::new();
            while let Some(item) = splitter.decode_bytes_eof(&mut buf) {
                let RawItem::Line(line) = item else { continue };
                let content = line.content().to_vec();
                let oracle = String::from_utf8(content.clone()).ok();
                // The longest prefix the standard check takes, cut back to
                // a character's end somewhere.
                let good = match core::str::from_utf8(&content) {
                    Ok(_) => content.len(),
                    Err(e) => e.valid_up_to(),
                };
                let mut checked = cut.index(good.saturating_add(1));
                while core::str::from_utf8(&content[..checked]).is_err() {
                    checked -= 1;
                }
                if past && checked == content.len() {
                    checked = line.as_bytes().len();
                }
                // SAFETY: the content's first `checked` bytes (at most
                // its length) are UTF-8 ending at a character's end, by
                // the standard check just above.
                let text = unsafe { line.into_text_checked_from(checked) };
                let text = text.ok();
                prop_assert_eq!(text.as_ref().map(LineText::as_str), oracle.as_deref());
                if let Some(text) = text {
                    prop_assert!(!text.holds_newline());
                    prop_assert!(!text.as_str().contains('\n'));
                }
            }
        });
    }

    proptest! {
        #[test]
        fn a_raw_lines_text_is_its_content_checked_and_holds_no_newline(
            input in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(0xe2u8), Just(0x82), Just(0xac), any::<u8>(), Just(b'a')],
                0..200,
            )
        ) {
            for line in raw_lines(&input) {
                let oracle = core::str::from_utf8(line.content());
                match line.text() {
                    Ok(text) => {
                        prop_assert_eq!(Ok(text.as_str()), oracle);
                        prop_assert!(!text.holds_newline());
                        prop_assert!(!text.as_str().contains('\n'));
                    }
                    Err(e) => prop_assert_eq!(Err(e), oracle),
                }
            }
        }

        #[test]
        fn a_strings_newline_is_found(text in "[a\n\r{}]{0,40}") {
            prop_assert_eq!(LineText::from(text.as_str()).holds_newline(), text.contains('\n'));
            prop_assert_eq!(LineText::from(text.clone()).holds_newline(), text.contains('\n'));
        }
    }

    #[test]
    fn a_checked_lines_text_holds_no_newline() {
        let mut splitter = LineSplitter::new();
        let texts: Vec<LineText<'_>> = splitter
            .lines(b"{\"a\":1}\r\n{\"b\":\"x\\ny\"}\n")
            .map(|l| LineText::from(l.unwrap()))
            .collect();
        assert_eq!(texts.len(), 2);
        assert!(texts.iter().all(|t| !t.holds_newline()));
        assert_eq!(texts[1].as_str(), r#"{"b":"x\ny"}"#);
    }

    #[cfg(feature = "bytes")]
    #[test]
    fn an_owned_raw_line_becomes_its_content() {
        let mut splitter = RawLineSplitter::new();
        let mut buf = bytes::BytesMut::from(&b"caf\xc3\xa9\r\nbad \xff\n"[..]);
        let mut texts = Vec::new();
        while let Some(item) = splitter.decode_bytes(&mut buf) {
            if let RawItem::Line(line) = item {
                texts.push(line.into_text().map(LineText::into_cow));
            }
        }
        assert_eq!(texts.len(), 2);
        assert_eq!(texts[0].as_ref().unwrap(), "café");
        assert_eq!(texts[1].as_ref().unwrap_err().as_bytes(), b"bad \xff");
    }
}
