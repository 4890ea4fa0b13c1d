//! A line for an agent's stdin as the router writes it, and a client's
//! message handed over whole so that the line can lend from it: what the
//! router forwards unchanged (a prompt's params, a large answer) is
//! written from the client's own bytes, never copied.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::ops::Range;

/// A client's message handed to the server whole
/// ([`Server::handle_text`](crate::remote::Server::handle_text)): the
/// [`AgentLine`] it becomes lends its unchanged part from these bytes
/// instead of copying them. Cloning shares them.
///
/// `new` takes whatever holds the text (a `String`, a WebSocket
/// library's frame payload) without copying it; `From<&str>` (and
/// `From<&String>`) copies.
/// The holder must give the same text on every `as_ref` (every type of
/// the standard library and of the usual WebSocket crates does).
///
/// ```
/// use acp_codec::remote::ClientText;
///
/// let text = ClientText::new(String::from(r#"{"jsonrpc":"2.0","method":"m"}"#));
/// assert_eq!(text.as_str(), r#"{"jsonrpc":"2.0","method":"m"}"#);
/// ```
#[derive(Clone)]
pub struct ClientText(Arc<dyn AsRef<str> + Send + Sync>);

impl ClientText {
    /// The text `holder` holds, kept (not copied) for as long as a line
    /// lends from it.
    pub fn new(holder: impl AsRef<str> + Send + Sync + 'static) -> Self {
        Self(Arc::new(holder))
    }

    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        (*self.0).as_ref()
    }
}

impl From<&str> for ClientText {
    fn from(text: &str) -> Self {
        Self::new(String::from(text))
    }
}

impl From<&String> for ClientText {
    fn from(text: &String) -> Self {
        Self::new(text.clone())
    }
}

impl fmt::Debug for ClientText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ClientText").field(&self.as_str()).finish()
    }
}

/// The least a line lends from its client's message: a shorter part is
/// copied into the line (one buffer, one write), a longer one is written
/// from the client's bytes.
pub(crate) const LEND_MIN: usize = 64 * 1024;

/// One line for an agent's stdin, with its `\n`: bytes the router wrote
/// ([`head`](Self::parts)), then, for a line that forwards a large part
/// of a client's message unchanged, that part lent from the message's
/// [`ClientText`], then the line's end. Write the three
/// [`parts`](Self::parts) in order (a vectored write does it in one call).
///
/// Equal lines are lines of equal bytes, however they are split.
///
/// ```
/// use acp_codec::remote::AgentLine;
///
/// let line = AgentLine::from(b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n".to_vec());
/// assert_eq!(line.len(), 31);
/// assert_eq!(line.to_vec(), b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n");
/// ```
#[derive(Clone)]
pub struct AgentLine {
    head: Vec<u8>,
    lent: Option<(ClientText, Range<usize>)>,
    tail: &'static [u8],
}

impl AgentLine {
    /// `head`, then `text`'s bytes in `range`, then `tail`; when the
    /// range is shorter than [`LEND_MIN`] (or not within the text), its
    /// bytes are copied into the head.
    pub(crate) fn lending(
        mut head: Vec<u8>,
        text: &ClientText,
        range: Range<usize>,
        tail: &'static [u8],
    ) -> Self {
        let lent = text.as_str().as_bytes().get(range.clone());
        match lent {
            Some(part) if part.len() >= LEND_MIN => Self {
                head,
                lent: Some((text.clone(), range)),
                tail,
            },
            part => {
                let part = part.unwrap_or_default();
                head.reserve(part.len().saturating_add(tail.len()));
                head.extend_from_slice(part);
                head.extend_from_slice(tail);
                head.into()
            }
        }
    }

    /// Its bytes in three parts, to be written in order: what the router
    /// wrote, the part lent from a client's message (empty when none),
    /// and the line's end (empty when the first part ends the line).
    #[must_use]
    pub fn parts(&self) -> [&[u8]; 3] {
        // A holder that changed its text gives an empty part, never a
        // panic: it broke `ClientText`'s one rule.
        let lent = self.lent.as_ref().map_or(&[][..], |(text, range)| {
            text.as_str()
                .as_bytes()
                .get(range.clone())
                .unwrap_or_default()
        });
        [&self.head, lent, self.tail]
    }

    /// Its length in bytes, `\n` included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.parts().iter().map(|p| p.len()).sum()
    }

    /// Whether it has no bytes (never, for a line the router wrote).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its bytes in one buffer (copied from the client's message when
    /// the line lends from it).
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        self.clone().into_vec()
    }

    /// Its bytes in one buffer: the head itself when the line lends
    /// nothing, without a copy.
    #[must_use]
    pub fn into_vec(self) -> Vec<u8> {
        if self.lent.is_none() && self.tail.is_empty() {
            return self.head;
        }
        let mut all = Vec::with_capacity(self.len());
        for part in self.parts() {
            all.extend_from_slice(part);
        }
        all
    }

    /// Whether part of it is lent from a client's message.
    #[must_use]
    pub fn lends(&self) -> bool {
        self.lent.is_some()
    }
}

impl From<Vec<u8>> for AgentLine {
    /// A line of these bytes (its `\n` included), lending nothing.
    fn from(head: Vec<u8>) -> Self {
        Self {
            head,
            lent: None,
            tail: b"",
        }
    }
}

impl PartialEq for AgentLine {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.to_vec() == other.to_vec()
    }
}

impl Eq for AgentLine {}

impl fmt::Debug for AgentLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [head, lent, tail] = self.parts();
        let mut d = f.debug_struct("AgentLine");
        d.field("head", &String::from_utf8_lossy(head));
        if self.lends() {
            d.field("lent", &lent.len());
        }
        d.field("tail", &String::from_utf8_lossy(tail)).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn a_short_part_is_copied_and_a_long_one_lent() {
        let body = "x".repeat(LEND_MIN);
        let text = ClientText::new(format!("[{body}]"));
        let short = AgentLine::lending(b"<".to_vec(), &text, 1..3, b">\n");
        assert!(!short.lends());
        assert_eq!(short.parts(), [&b"<xx>\n"[..], b"", b""]);
        let long = AgentLine::lending(b"<".to_vec(), &text, 1..LEND_MIN + 1, b">\n");
        assert!(long.lends());
        let [head, lent, tail] = long.parts();
        assert_eq!((head, tail), (&b"<"[..], &b">\n"[..]));
        // The client's own bytes, not a copy.
        assert_eq!(lent.as_ptr(), text.as_str()[1..].as_ptr());
        assert_eq!(long.len(), LEND_MIN + 3);
        assert_eq!(long, AgentLine::from(format!("<{body}>\n").into_bytes()));
        assert_ne!(long, short);
        // A range past the text lends nothing.
        let past = AgentLine::lending(b"<".to_vec(), &text, 1..LEND_MIN + 9, b">\n");
        assert_eq!(past.to_vec(), b"<>\n");
    }
}
