//! [`Extra`]: the members of an object that its typed struct does not
//! hold, kept so the object re-encodes as it came.

use alloc::borrow::Cow;
use alloc::boxed::Box;
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
/// Empty, it costs nothing: no allocation, and one pointer's room in its
/// struct (values are moved whole while they are decoded). One or two
/// members take one allocation; more, a second one for their list.
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
#[derive(Clone, Default)]
pub struct Extra<'a>(Option<Box<Members<'a>>>);

/// One member: its name and its raw value.
type Member<'a> = (Cow<'a, str>, RawJson<'a>);

/// The members kept, in the order they came: up to two in the box itself
/// (one allocation for the member or two a newer peer usually adds, or a
/// `null`), more in a list of their own.
#[derive(Clone)]
enum Members<'a> {
    /// The first `len` (1 or 2) of `pair`; an unused place holds
    /// [`vacant`], which owns nothing. The second member is written in
    /// place, the first never moved.
    Pair {
        len: u8,
        pair: [Member<'a>; 2],
    },
    Many(Vec<Member<'a>>),
}

/// What fills the unused place of a [`Members::Pair`]: no text, nothing
/// allocated.
fn vacant<'a>() -> Member<'a> {
    (Cow::Borrowed(""), RawJson::from_validated("null"))
}

impl<'a> Members<'a> {
    fn one(m: Member<'a>) -> Self {
        Self::Pair {
            len: 1,
            pair: [m, vacant()],
        }
    }

    fn as_slice(&self) -> &[Member<'a>] {
        match self {
            Self::Pair { len, pair } => pair.get(..usize::from(*len)).unwrap_or(pair),
            Self::Many(v) => v,
        }
    }

    /// Appends `m`, moving to a list when the pair is full.
    fn push(&mut self, m: Member<'a>) {
        match self {
            Self::Pair {
                len: len @ 1,
                pair: [_, second],
            } => {
                *second = m;
                *len = 2;
            }
            Self::Pair { pair, .. } => {
                let [a, b] = core::mem::replace(pair, [vacant(), vacant()]);
                let mut v = Vec::with_capacity(4);
                v.extend([a, b, m]);
                *self = Self::Many(v);
            }
            Self::Many(v) => v.push(m),
        }
    }

    /// Keeps the members `keep` says to keep, in order.
    fn retain(&mut self, keep: impl FnMut(&mut Member<'a>) -> bool) {
        let mut v = match core::mem::replace(self, Self::Many(Vec::new())) {
            Self::Pair { len, pair } => pair.into_iter().take(usize::from(len)).collect(),
            Self::Many(v) => v,
        };
        v.retain_mut(keep);
        *self = Self::Many(v);
    }

    fn into_owned(self) -> Members<'static> {
        let own = |(k, v): Member<'a>| (IntoOwned::into_owned(k), v.into_owned());
        match self {
            // The unused place stays vacant: nothing copied.
            Self::Pair { len, pair: [a, b] } => Members::Pair {
                len,
                pair: [own(a), if len == 2 { own(b) } else { vacant() }],
            },
            Self::Many(v) => Members::Many(v.into_iter().map(own).collect()),
        }
    }
}

impl<'a> Extra<'a> {
    /// No members.
    pub const fn new() -> Self {
        Self(None)
    }

    /// The members, in the order they came.
    fn list(&self) -> &[Member<'a>] {
        self.0.as_deref().map_or(&[], Members::as_slice)
    }

    /// Whether nothing was ever added (nothing to drop).
    pub(crate) const fn unused(&self) -> bool {
        self.0.is_none()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list().is_empty()
    }

    /// How many members there are.
    pub fn len(&self) -> usize {
        self.list().len()
    }

    /// The members, in the order they came.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RawJson<'a>)> {
        self.list().iter().map(|(k, v)| (&**k, v))
    }

    /// The value of member `name` (the last one, as JSON parsers take it,
    /// when a peer sent it twice).
    pub fn get(&self, name: &str) -> Option<&RawJson<'a>> {
        self.list()
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// Adds a member at the end (a member of the same name is replaced).
    pub fn insert(&mut self, name: impl Into<Cow<'a, str>>, value: RawJson<'a>) {
        let name = name.into();
        if let Some(members) = self.0.as_deref_mut() {
            members.retain(|(k, _)| *k != name);
        }
        self.push(name, value);
    }

    /// Removes every member called `name`, giving the last one's value.
    pub fn remove(&mut self, name: &str) -> Option<RawJson<'a>> {
        let mut last = None;
        self.0.as_deref_mut()?.retain(|(k, v)| {
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
        match &mut self.0 {
            Some(members) => members.push((name, value)),
            None => self.0 = Some(Box::new(Members::one((name, value)))),
        }
    }

    /// The members with their text copied (`'static`).
    pub fn into_owned(self) -> Extra<'static> {
        Extra(self.0.map(|members| Box::new(members.into_owned())))
    }
}

/// Equal when they hold the same members in the same order (however they
/// came to be empty).
impl PartialEq for Extra<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.list() == other.list()
    }
}

impl Eq for Extra<'_> {}

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

    /// Borrowed text may be held for a shorter lifetime (covariance), as
    /// with a `Vec`: decoded messages can be passed where a shorter borrow
    /// is wanted.
    #[test]
    fn is_covariant() {
        fn shorten<'b>(e: Extra<'static>) -> Extra<'b> {
            e
        }
        assert!(shorten(Extra::new()).is_empty());
    }

    /// A value borrowing a string may still be alive (in a match's
    /// scrutinee) when the string is moved, as with a `Vec`:
    /// `match request.typed(mode) { Err(_) => keep(request), .. }` must
    /// compile. A container whose `Drop` may read what it holds refuses
    /// this at compile time.
    #[test]
    fn a_dead_borrow_does_not_outlive_its_text() {
        fn keep(s: alloc::string::String) -> usize {
            s.len()
        }
        let text = "k".to_owned();
        let kept = match Some(Extra::from_iter([(
            text.as_str(),
            RawJson::from_validated("1"),
        )]))
        .filter(|_| false)
        {
            Some(e) => e.len(),
            None => keep(text),
        };
        assert_eq!(kept, 1);
    }

    /// Every sequence of up to five pushes, inserts and removes over three
    /// names, against a plain list: the members kept in each of the
    /// forms (one, two, many) and the moves between them.
    #[test]
    fn every_form_keeps_what_a_list_keeps() {
        type Model = Vec<(&'static str, alloc::string::String)>;
        fn apply(e: &mut Extra<'static>, model: &mut Model, op: usize, step: usize) {
            let name = ["a", "b", "c"][op % 3];
            let value = format!("{step}");
            match op / 3 {
                0 => {
                    e.push(name.into(), RawJson::from_string(value.clone()).unwrap());
                    model.push((name, value));
                }
                1 => {
                    e.insert(name, RawJson::from_string(value.clone()).unwrap());
                    model.retain(|(k, _)| *k != name);
                    model.push((name, value));
                }
                _ => {
                    let want = model
                        .iter()
                        .rev()
                        .find(|(k, _)| *k == name)
                        .map(|(_, v)| v.clone());
                    model.retain(|(k, _)| *k != name);
                    assert_eq!(e.remove(name).map(|v| v.get().to_owned()), want);
                }
            }
        }
        for len in 0..=5u32 {
            for mut code in 0..9usize.pow(len) {
                let (mut e, mut model) = (Extra::new(), Model::new());
                for step in 0..len as usize {
                    apply(&mut e, &mut model, code % 9, step);
                    code /= 9;
                    let got: Vec<_> = e
                        .iter()
                        .map(|(k, v)| (k.to_owned(), v.get().to_owned()))
                        .collect();
                    let want: Vec<_> = model
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), v.clone()))
                        .collect();
                    assert_eq!(got, want);
                    assert_eq!(e.len(), model.len());
                    assert_eq!(e.clone().into_owned(), e);
                    // Built afresh (another form for the same members).
                    let mut rebuilt = Extra::new();
                    for (k, v) in &model {
                        rebuilt.push((*k).into(), RawJson::from_validated(v));
                    }
                    assert_eq!(rebuilt, e);
                }
            }
        }
    }

    #[test]
    fn emptied_equals_never_filled() {
        let mut e = Extra::new();
        assert_eq!(e.remove("a"), None);
        e.insert("a", RawJson::from_validated("1"));
        assert_ne!(e, Extra::new());
        assert!(e.remove("a").is_some());
        assert!(e.is_empty());
        assert_eq!(e, Extra::new());
        assert_eq!(e.into_owned(), Extra::new());
    }
}
