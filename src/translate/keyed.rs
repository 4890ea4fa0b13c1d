//! The translators' maps from text keys to their state: one
//! `BTreeMap<String, usize>` of places into a `Vec` of entries, whatever
//! the value's type. A `BTreeMap` per value type (pending requests,
//! sessions, tool calls, ...) is compiled once per type, and its tree code
//! is large: six of them were a quarter of the code feature `v2` adds to
//! a dependent's build. Here the tree is compiled once, and each value
//! type adds only a `Vec`'s code.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// A map from `String` keys to `V` (see the module docs): lookups by the
/// tree, entries in a `Vec`, a removal moving the last entry into the
/// place it frees.
#[derive(Debug)]
pub(super) struct Keyed<V> {
    places: BTreeMap<String, usize>,
    entries: Vec<(String, V)>,
    /// What `or_default` hands out if a place were not an entry's: never
    /// (boxed: the translators' size does not carry a value of each type).
    spare: Option<Box<V>>,
}

impl<V> Default for Keyed<V> {
    fn default() -> Self {
        Self {
            places: BTreeMap::new(),
            entries: Vec::new(),
            spare: None,
        }
    }
}

impl<V> Keyed<V> {
    /// The number of entries.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether `key` has an entry.
    pub(super) fn contains_key(&self, key: &str) -> bool {
        self.places.contains_key(key)
    }

    /// The value of `key`.
    pub(super) fn get(&self, key: &str) -> Option<&V> {
        let at = *self.places.get(key)?;
        self.entries.get(at).map(|(_, v)| v)
    }

    /// The value of `key`, to change.
    pub(super) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let at = *self.places.get(key)?;
        self.entries.get_mut(at).map(|(_, v)| v)
    }

    /// Sets the value of `key`.
    pub(super) fn insert(&mut self, key: String, value: V) {
        if let Some(old) = self.get_mut(&key) {
            *old = value;
            return;
        }
        self.places.insert(key.clone(), self.entries.len());
        self.entries.push((key, value));
    }

    /// Takes the value of `key` out.
    pub(super) fn remove(&mut self, key: &str) -> Option<V> {
        let at = self.places.remove(key)?;
        if at >= self.entries.len() {
            return None;
        }
        let (_, value) = self.entries.swap_remove(at);
        // The entry moved into the freed place (none when it was last).
        if let Some((moved, _)) = self.entries.get(at) {
            if let Some(place) = self.places.get_mut(moved.as_str()) {
                *place = at;
            }
        }
        Some(value)
    }

    /// The value of `key`, made with `Default` when it has none.
    pub(super) fn or_default(&mut self, key: &str) -> &mut V
    where
        V: Default,
    {
        if !self.places.contains_key(key) {
            self.places.insert(key.to_string(), self.entries.len());
            self.entries.push((key.to_string(), V::default()));
        }
        let at = self.places.get(key).copied().unwrap_or(usize::MAX);
        match self.entries.get_mut(at) {
            Some((_, v)) => v,
            // Never: the tree and the `Vec` change together.
            None => self.spare.get_or_insert_with(Box::default),
        }
    }

    /// Keeps the entries for which `keep` is true.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&str, &V) -> bool) {
        let gone: Vec<String> = self
            .entries
            .iter()
            .filter(|(k, v)| !keep(k, v))
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            self.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One change to a map, keys from a small set so that they repeat.
    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        Bump(u8),
        RetainOdd,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..12, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0u8..12).prop_map(Op::Remove),
            (0u8..12).prop_map(Op::Bump),
            Just(Op::RetainOdd),
        ]
    }

    proptest! {
        /// Every change and lookup as a `BTreeMap` gives it.
        #[test]
        fn acts_as_a_btree_map(ops in proptest::collection::vec(op(), 0..200)) {
            let mut keyed = Keyed::<u32>::default();
            let mut oracle = BTreeMap::<String, u32>::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        keyed.insert(k.to_string(), v);
                        oracle.insert(k.to_string(), v);
                    }
                    Op::Remove(k) => {
                        prop_assert_eq!(keyed.remove(&k.to_string()), oracle.remove(&k.to_string()));
                    }
                    Op::Bump(k) => {
                        let v = keyed.or_default(&k.to_string());
                        *v = v.wrapping_add(1);
                        let w = oracle.entry(k.to_string()).or_default();
                        *w = w.wrapping_add(1);
                    }
                    Op::RetainOdd => {
                        keyed.retain(|_, v| v % 2 == 1);
                        oracle.retain(|_, v| *v % 2 == 1);
                    }
                }
                prop_assert_eq!(keyed.len(), oracle.len());
                for k in 0u8..12 {
                    let k = k.to_string();
                    prop_assert_eq!(keyed.get(&k), oracle.get(&k));
                    prop_assert_eq!(keyed.contains_key(&k), oracle.contains_key(&k));
                }
            }
            prop_assert!(keyed.spare.is_none());
        }
    }
}
