//! [`Extra`]: the members of an object that its typed struct does not
//! hold, kept so the object re-encodes as it came.

use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::fmt;

use super::raw::{IntoOwned, RawJson};

/// The members of a JSON object that its typed struct does not hold, in the
/// order they came, each value kept raw.
///
/// Every generated ACP struct has one (its `extra` field). Decoding puts
/// here:
/// - every member this version of the crate does not know (a newer peer's
///   additions, at any depth);
/// - `null` sent for an optional member (the typed field is `None`, and the
///   `null` is written back);
/// - in lenient decoding, an optional member whose value did not fit (the
///   typed field is `None`; the value is reported as a
///   [`Salvage`](super::Salvage) and written back as sent).
///
/// Encoding writes the typed fields, then these members, skipping any whose
/// name is a typed field that is set (the typed value wins when a caller
/// sets a field the peer had sent as `null` or as a value that did not fit).
/// So a decoded value re-encodes to JSON equal, as a value, to what came in.
/// Empty, it costs nothing: no allocation.
///
/// ```
/// use acp_codec::acp::{Diff, RawJson};
///
/// let diff: Diff = serde_json::from_str(r#"{"path":"/a","oldText":null,"newText":"x","hunks":3}"#).unwrap();
/// assert_eq!(diff.old_text, None);
/// assert_eq!(diff.extra.get("oldText").map(RawJson::get), Some("null"));
/// assert_eq!(diff.extra.get("hunks").map(RawJson::get), Some("3"));
/// assert_eq!(
///     serde_json::to_string(&diff).unwrap(),
///     r#"{"path":"/a","newText":"x","oldText":null,"hunks":3}"#
/// );
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Extra<'a>(Vec<(Cow<'a, str>, RawJson<'a>)>);

impl<'a> Extra<'a> {
    /// No members.
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many members there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The members, in the order they came.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RawJson<'a>)> {
        self.0.iter().map(|(k, v)| (&**k, v))
    }

    /// The value of member `name` (the last one, as JSON parsers take it,
    /// when a peer sent it twice).
    pub fn get(&self, name: &str) -> Option<&RawJson<'a>> {
        self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Adds a member at the end (a member of the same name is replaced).
    pub fn insert(&mut self, name: impl Into<Cow<'a, str>>, value: RawJson<'a>) {
        let name = name.into();
        self.0.retain(|(k, _)| *k != name);
        self.0.push((name, value));
    }

    /// Removes every member called `name`, giving the last one's value.
    pub fn remove(&mut self, name: &str) -> Option<RawJson<'a>> {
        let mut last = None;
        self.0.retain_mut(|(k, v)| {
            if k != name {
                return true;
            }
            last = Some(core::mem::replace(v, RawJson::from_validated("null")));
            false
        });
        last
    }

    /// Appends as decoded, duplicates and all.
    pub(crate) fn push(&mut self, name: Cow<'a, str>, value: RawJson<'a>) {
        self.0.push((name, value));
    }

    /// The members with their text copied (`'static`).
    pub fn into_owned(self) -> Extra<'static> {
        Extra(
            self.0
                .into_iter()
                .map(|(k, v)| (IntoOwned::into_owned(k), v.into_owned()))
                .collect(),
        )
    }
}

impl IntoOwned for Extra<'_> {
    type Owned = Extra<'static>;
    fn into_owned(self) -> Self::Owned {
        Extra::into_owned(self)
    }
}

/// As a JSON object: `{"name": value, …}`.
impl fmt::Debug for Extra<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a, K: Into<Cow<'a, str>>> FromIterator<(K, RawJson<'a>)> for Extra<'a> {
    fn from_iter<I: IntoIterator<Item = (K, RawJson<'a>)>>(iter: I) -> Self {
        let mut out = Self::new();
        for (k, v) in iter {
            out.insert(k, v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::borrow::ToOwned;
    use alloc::format;

    #[test]
    fn get_takes_the_last_and_remove_takes_all() {
        let mut e = Extra::new();
        e.push("a".into(), RawJson::from_validated("1"));
        e.push("b".into(), RawJson::from_validated("2"));
        e.push("a".into(), RawJson::from_validated("3"));
        assert_eq!(e.get("a").map(RawJson::get), Some("3"));
        assert_eq!(
            e.remove("a").map(|v| v.get().to_owned()).as_deref(),
            Some("3")
        );
        assert_eq!(e.len(), 1);
        e.insert("b", RawJson::from_validated("4"));
        assert_eq!(e.iter().collect::<Vec<_>>().len(), 1);
        assert_eq!(format!("{e:?}"), "{\"b\": 4}");
    }
}
