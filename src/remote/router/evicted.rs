//! Sessions evicted from the ownership table for memory, remembered in a
//! compact form so that their ownership never lapses.
//!
//! An evicted session keeps a 64-bit SipHash-2-4 of its id, keyed by the
//! router's hash key, mapped to its user (a number into a table of user
//! names): about 30 bytes a session, whatever the id's length, for the
//! router's lifetime.
//!
//! Two ids may share a hash. When two sessions of **different** users do,
//! the record becomes [`Slot::Contested`] and neither may be reattached by
//! anyone: a collision refuses, it never hands a session to another user.
//! An id the router has never seen shares a record with a seen one with a
//! chance of 2^-64 a pair; with a secret key nobody can search for one.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::hash::Hasher;

/// What an evicted session's record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The user's number in [`Evicted::names`].
    User(u32),
    /// Sessions of two users share the hash: nobody may claim either.
    Contested,
}

/// Who owns an evicted session, by the hash of its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Remembered<'a> {
    /// Never evicted (or its hash was never recorded).
    No,
    /// The user's.
    User(&'a str),
    /// Evicted, but nobody's to claim (see [`Slot::Contested`]).
    Nobody,
}

/// The compact records; see the [module docs](self).
#[derive(Debug, Default)]
pub(super) struct Evicted {
    key: (u64, u64),
    slots: BTreeMap<u64, Slot>,
    /// User names by number, and numbers by name.
    names: Vec<String>,
    numbers: BTreeMap<String, u32>,
}

impl Evicted {
    /// Sets the hash key, unless a session was already remembered under
    /// the old one (their records would no longer be found); whether it
    /// was set.
    pub(super) fn set_key(&mut self, key: [u8; 16]) -> bool {
        if !self.slots.is_empty() {
            return false;
        }
        // k0 and k1 of the SipHash paper: the key's two halves, little-endian.
        let [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p] = key;
        self.key = (
            u64::from_le_bytes([a, b, c, d, e, f, g, h]),
            u64::from_le_bytes([i, j, k, l, m, n, o, p]),
        );
        true
    }

    /// SipHash-2-4 of `session` under the key.
    fn hash(&self, session: &str) -> u64 {
        let mut h = siphasher::sip::SipHasher24::new_with_keys(self.key.0, self.key.1);
        h.write(session.as_bytes());
        h.finish()
    }

    /// Remembers `session` as `user`'s: a hash it shares with another
    /// user's session makes the record nobody's.
    pub(super) fn insert(&mut self, session: &str, user: &str) {
        let hash = self.hash(session);
        let slot = match self.number(user) {
            Some(n) => Slot::User(n),
            // More users than numbers: refuse rather than mix them up.
            None => Slot::Contested,
        };
        self.slots
            .entry(hash)
            .and_modify(|s| {
                if *s != slot {
                    *s = Slot::Contested;
                }
            })
            .or_insert(slot);
    }

    /// Who owns `session`, if it was evicted.
    pub(super) fn get(&self, session: &str) -> Remembered<'_> {
        match self.slots.get(&self.hash(session)) {
            None => Remembered::No,
            Some(Slot::Contested) => Remembered::Nobody,
            Some(Slot::User(n)) => {
                let name = usize::try_from(*n).ok().and_then(|n| self.names.get(n));
                match name {
                    Some(name) => Remembered::User(name),
                    // Numbers are only handed out with their name.
                    None => Remembered::Nobody,
                }
            }
        }
    }

    /// `user`'s number, given on first use; `None` past `u32::MAX` users.
    fn number(&mut self, user: &str) -> Option<u32> {
        if let Some(&n) = self.numbers.get(user) {
            return Some(n);
        }
        let n = u32::try_from(self.names.len()).ok()?;
        self.names.push(user.into());
        self.numbers.insert(user.into(), n);
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference vectors of the `SipHash` paper (by Aumasson and
    /// Bernstein, appendix A): key `00 01 .. 0f`, messages `00 01 .. (n-1)`.
    #[test]
    fn the_hash_is_siphash_2_4_under_the_key() {
        let mut e = Evicted::default();
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        assert!(e.set_key(key));
        assert_eq!(e.hash(""), 0x726f_db47_dd0e_0e31);
        let msg: String = (0u8..15).map(char::from).collect();
        assert_eq!(e.hash(&msg), 0xa129_ca61_49be_45e5);
        // Once a session is remembered, the key stays.
        e.insert("s", "ana");
        assert!(!e.set_key([0; 16]));
        assert_eq!(e.get("s"), Remembered::User("ana"));
    }

    #[test]
    fn a_shared_hash_of_two_users_is_nobodys() {
        let mut e = Evicted::default();
        e.insert("a", "ana");
        e.insert("a", "ana");
        assert_eq!(e.get("a"), Remembered::User("ana"));
        assert_eq!(e.get("b"), Remembered::No);
        // The same id stands for any two ids of one hash.
        e.insert("a", "bo");
        assert_eq!(e.get("a"), Remembered::Nobody);
        e.insert("a", "ana");
        assert_eq!(e.get("a"), Remembered::Nobody);
        assert_eq!(e.names, ["ana", "bo"]);
    }
}
