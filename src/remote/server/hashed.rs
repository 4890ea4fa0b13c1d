//! A table found by a hash of its keys: the server's tables keyed by
//! names (an agent by its user's name) are looked up at every message,
//! and an ordered map of names compares whole names at each of its levels
//! (a few hundred users: eight or nine string compares a look-up). Here a
//! look-up is one hash of the name (a word at a time, multiply and
//! rotate, from a state seeded by the server's secret
//! [`ServerConfig::hash_key`](super::ServerConfig::hash_key)), a probe or
//! two of an index at most half full, and one compare of the name.
//!
//! Keys that share a hash are told apart by their compare, so a key never
//! stands for another. The hash is fast, not strong: the keys it is for
//! are the operator's (users' names from the token file), never a peer's
//! choice, whose keys stay in ordered maps. Entries are never removed
//! (the server keeps an agent's entry for its sessions' sake); they are
//! kept, and iterated, in the order they were added.

use alloc::vec::Vec;
use core::hash::{Hash, Hasher};

/// Where an entry of a [`Hashed`] is: as entries are never removed, a
/// place handed out once stays that entry's for the table's life, and
/// reaches it with no hash and no compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Slot(usize);

/// Entries by a hash of their key; see the [module docs](self).
#[derive(Debug, Clone)]
pub(super) struct Hashed<K, V> {
    seed: u64,
    /// Each entry's key's hash, its key and its value, in the order added.
    entries: Vec<(u64, K, V)>,
    /// Open addressing, probed linearly: `0` an empty place, `n` the
    /// entry `n - 1`. A power of two long, at most half full.
    index: Vec<usize>,
}

impl<K: Hash + Eq, V> Hashed<K, V> {
    /// An empty table whose hash is seeded by `key` (16 bytes).
    pub(super) fn new(key: [u8; 16]) -> Self {
        let k = u128::from_le_bytes(key);
        Self {
            seed: (k as u64) ^ ((k >> 64) as u64).rotate_left(32),
            entries: Vec::new(),
            index: Vec::new(),
        }
    }

    fn hash(&self, key: &K) -> u64 {
        let mut h = WordHasher(self.seed);
        key.hash(&mut h);
        h.finish()
    }

    /// Where the probe of hash `h` starts in an index of `mask + 1`
    /// places: at the hash's high bits, which the finish mixes best.
    fn start(h: u64, mask: usize) -> usize {
        ((h >> 32) as usize) & mask
    }

    /// The entry of `key` (hash `h`).
    fn find(&self, h: u64, key: &K) -> Option<usize> {
        let mask = self.index.len().checked_sub(1)?;
        let mut at = Self::start(h, mask);
        loop {
            // `0`: an empty place, the end of the probe.
            let e = self.index.get(at)?.checked_sub(1)?;
            if let Some((eh, k, _)) = self.entries.get(e) {
                if *eh == h && k == key {
                    return Some(e);
                }
            }
            at = at.wrapping_add(1) & mask;
        }
    }

    /// The value of `key`.
    pub(super) fn get(&self, key: &K) -> Option<&V> {
        let e = self.find(self.hash(key), key)?;
        self.entries.get(e).map(|(_, _, v)| v)
    }

    /// The value of `key`, to change.
    pub(super) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let e = self.find(self.hash(key), key)?;
        self.entries.get_mut(e).map(|(_, _, v)| v)
    }

    /// Whether `key` has a value.
    pub(super) fn contains_key(&self, key: &K) -> bool {
        self.get(key).is_some()
    }

    /// The value of `key`, made by `make` when it has none.
    // The entry was just found or added: it is there.
    #[allow(clippy::indexing_slicing)]
    pub(super) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce(&K) -> V) -> &mut V {
        let Slot(e) = self.slot_or_insert_with(key, make);
        &mut self.entries[e].2
    }

    /// The place of `key`'s entry, made (its value by `make`) when it has
    /// none.
    pub(super) fn slot_or_insert_with(&mut self, key: K, make: impl FnOnce(&K) -> V) -> Slot {
        let h = self.hash(&key);
        if let Some(e) = self.find(h, &key) {
            return Slot(e);
        }
        let value = make(&key);
        let e = self.entries.len();
        self.entries.push((h, key, value));
        self.index_new(e);
        Slot(e)
    }

    /// The place of `key`'s entry.
    pub(super) fn slot(&self, key: &K) -> Option<Slot> {
        self.find(self.hash(key), key).map(Slot)
    }

    /// The key and value at `slot` (a place this table handed out).
    pub(super) fn at(&self, slot: Slot) -> Option<(&K, &V)> {
        self.entries.get(slot.0).map(|(_, k, v)| (k, v))
    }

    /// The key and value at `slot`, the value to change.
    pub(super) fn at_mut(&mut self, slot: Slot) -> Option<(&K, &mut V)> {
        self.entries.get_mut(slot.0).map(|(_, k, v)| (&*k, v))
    }

    /// Indexes entry `e`, just added: the index doubled first (every entry
    /// placed again) when it would be more than half full.
    fn index_new(&mut self, e: usize) {
        let n = self.entries.len();
        if n.saturating_mul(2) > self.index.len() {
            let len = n.saturating_mul(2).next_power_of_two().max(8);
            self.index = alloc::vec![0; len];
            for e in 0..n {
                self.put(e);
            }
        } else {
            self.put(e);
        }
    }

    /// Writes entry `e` into the first empty place of its probe (there is
    /// one: the index is at most half full).
    fn put(&mut self, e: usize) {
        let (Some(mask), Some(&(h, _, _))) = (self.index.len().checked_sub(1), self.entries.get(e))
        else {
            return;
        };
        let mut at = Self::start(h, mask);
        while let Some(place) = self.index.get_mut(at) {
            if *place == 0 {
                *place = e.saturating_add(1);
                return;
            }
            at = at.wrapping_add(1) & mask;
        }
    }

    /// Every entry, in the order added.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(_, k, v)| (k, v))
    }

    /// Every key, in the order added.
    pub(super) fn keys(&self) -> impl Iterator<Item = &K> {
        self.entries.iter().map(|(_, k, _)| k)
    }

    /// Every value, in the order added.
    pub(super) fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, _, v)| v)
    }

    /// Every value, to change, in the order added.
    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, _, v)| v)
    }
}

/// The hash of [`Hashed`]: each word (eight bytes, a shorter tail padded
/// with its length) xored into a state that is rotated and multiplied by
/// an odd constant, the state finally mixed so that its high bits, which
/// the tree compares first, depend on every bit.
struct WordHasher(u64);

impl WordHasher {
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(26) ^ w).wrapping_mul(Self::K);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.word(u64::from_le_bytes(w));
        }
        let tail = chunks.remainder();
        let mut w = [0u8; 8];
        for (d, s) in w.iter_mut().zip(tail) {
            *d = *s;
        }
        // The tail's length in its last byte (a tail is at most seven
        // bytes): "a" and "a\0" differ.
        if let Some(last) = w.last_mut() {
            *last = tail.len() as u8;
        }
        self.word(u64::from_le_bytes(w));
    }

    fn write_u8(&mut self, n: u8) {
        self.word(u64::from(n) | 0x100);
    }

    fn write_u64(&mut self, n: u64) {
        self.word(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.word(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.word(n as u64);
    }

    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^ (h >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use alloc::string::String;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        GetOrInsert(Option<u16>, u32),
        Bump(Option<u16>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = proptest::option::of(0u16..400);
        prop_oneof![
            (key.clone(), any::<u32>()).prop_map(|(k, v)| Op::GetOrInsert(k, v)),
            key.prop_map(Op::Bump),
        ]
    }

    fn name(k: Option<u16>) -> Option<String> {
        k.map(|n| alloc::format!("user-{n}"))
    }

    /// Runs `ops` on a table of keys `key` makes and on the ordered map
    /// it stands in for: after every step both hold the same entries
    /// (the table's in the order added), look-ups agree, and so does the
    /// count.
    fn check<K: Hash + Eq + Clone + core::fmt::Debug>(
        ops: &[Op],
        seed: [u8; 16],
        key: impl Fn(Option<u16>) -> K,
    ) {
        let mut table: Hashed<K, u32> = Hashed::new(seed);
        let mut oracle: BTreeMap<Option<String>, u32> = BTreeMap::new();
        let mut order: Vec<Option<u16>> = Vec::new();
        for op in ops {
            match *op {
                Op::GetOrInsert(k, v) => {
                    let got = *table.get_or_insert_with(key(k), |_| v);
                    if !oracle.contains_key(&name(k)) {
                        order.push(k);
                    }
                    assert_eq!(got, *oracle.entry(name(k)).or_insert(v));
                }
                Op::Bump(k) => {
                    if let Some(v) = table.get_mut(&key(k)) {
                        *v = v.wrapping_add(1);
                    }
                    if let Some(v) = oracle.get_mut(&name(k)) {
                        *v = v.wrapping_add(1);
                    }
                }
            }
            let entries: Vec<(K, u32)> = table.iter().map(|(k, v)| (k.clone(), *v)).collect();
            let expected: Vec<(K, u32)> =
                order.iter().map(|&k| (key(k), oracle[&name(k)])).collect();
            assert_eq!(entries, expected);
            assert_eq!(table.entries.len(), oracle.len());
            assert!(table.index.is_empty() || table.entries.len() * 2 <= table.index.len());
        }
        for n in (0..400).map(Some).chain([None]) {
            assert_eq!(table.get(&key(n)), oracle.get(&name(n)));
            assert_eq!(table.contains_key(&key(n)), oracle.contains_key(&name(n)));
        }
    }

    /// A key whose hash keeps one bit: every key in one of two probes.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Crowded(Option<String>);

    impl Hash for Crowded {
        fn hash<H: Hasher>(&self, state: &mut H) {
            state.write_u8(self.0.as_ref().map_or(0, |s| (s.len() % 2) as u8));
        }
    }

    proptest! {
        #[test]
        fn the_table_holds_what_an_ordered_map_holds(
            ops in proptest::collection::vec(op(), 0..600),
            seed in any::<[u8; 16]>(),
        ) {
            check(&ops, seed, name);
        }

        #[test]
        fn keys_that_share_a_hash_stay_apart(
            ops in proptest::collection::vec(op(), 0..200),
        ) {
            check(&ops, [7; 16], |k| Crowded(name(k)));
        }
    }

    #[test]
    fn a_slot_reaches_its_entry_for_the_tables_life() {
        let mut table: Hashed<Option<String>, u32> = Hashed::new([3; 16]);
        let first = table.slot_or_insert_with(Some("ada".into()), |_| 1);
        let shared = table.slot_or_insert_with(None, |_| 2);
        // Enough entries to rebuild the index a few times.
        for n in 0..100u32 {
            table.get_or_insert_with(Some(alloc::format!("user-{n}")), |_| n);
        }
        assert_eq!(table.slot_or_insert_with(Some("ada".into()), |_| 9), first);
        assert_eq!(table.slot(&Some("ada".into())), Some(first));
        assert_eq!(table.slot(&None), Some(shared));
        assert_eq!(table.slot(&Some("bob".into())), None);
        assert_eq!(table.at(first), Some((&Some("ada".into()), &1)));
        if let Some((_, v)) = table.at_mut(shared) {
            *v = 5;
        }
        assert_eq!(table.get(&None), Some(&5));
    }

    #[test]
    fn a_tail_is_told_from_its_padding() {
        let hash = |s: &str| {
            let mut h = WordHasher(0);
            h.write(s.as_bytes());
            h.finish()
        };
        assert_ne!(hash("a"), hash("a\0"));
        assert_ne!(hash("abcdefgh"), hash("abcdefgh\0"));
        assert_ne!(hash(""), hash("\0"));
    }
}
