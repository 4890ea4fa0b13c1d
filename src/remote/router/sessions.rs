//! Who owns each session: a user, and the one connection of that user
//! that holds it now (none after that connection left, until the user
//! reattaches it).
//!
//! Ownership never lapses: a session the table has seen stays its user's
//! for the table's lifetime. Held sessions, and up to a limit of left ones
//! per user, keep a full record; older left sessions, and every session
//! once the agent exits, are evicted to a compact record
//! ([`Evicted`]) that still names the user.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;

use super::evicted::{Evicted, Remembered};
use super::ClientId;
use crate::tally::Tally;

/// One session's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Owner {
    /// The user who created or loaded it.
    pub(super) user: String,
    /// The connection holding it, `None` once that connection left.
    pub(super) client: Option<ClientId>,
}

/// Whose a session is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Whose {
    /// The owner's (held, left or evicted: `client` is `None` unless held).
    Owner(Owner),
    /// Seen, but nobody may claim it (an evicted record two users' sessions
    /// share).
    Nobody,
    /// Never seen.
    Unseen,
}

/// Sessions per user: held by a connection, and left (kept so the user can
/// reattach them, and nobody else can).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) held: Tally,
    pub(super) left: Tally,
}

/// The ownership table, with per-user counts kept in step.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    /// Full records: held sessions, and left ones not evicted yet.
    owners: BTreeMap<String, Owner>,
    /// Left sessions with a full record, oldest first.
    left: VecDeque<String>,
    counts: BTreeMap<String, Counts>,
    /// Held sessions, every user's.
    held: Tally,
    evicted: Evicted,
}

impl Sessions {
    /// Sets the key under which evicted sessions are remembered; whether
    /// it was set (not once a session was evicted).
    pub(super) fn set_key(&mut self, key: [u8; 16]) -> bool {
        self.evicted.set_key(key)
    }

    /// Whose `session` is: a full record first, else the evicted one.
    pub(super) fn whose(&self, session: &str) -> Whose {
        if let Some(o) = self.owners.get(session) {
            return Whose::Owner(o.clone());
        }
        match self.evicted.get(session) {
            Remembered::No => Whose::Unseen,
            Remembered::Nobody => Whose::Nobody,
            Remembered::User(user) => Whose::Owner(Owner {
                user: user.into(),
                client: None,
            }),
        }
    }

    /// The user owning `session`, if one may claim it.
    pub(super) fn user(&self, session: &str) -> Option<&str> {
        if let Some(o) = self.owners.get(session) {
            return Some(&o.user);
        }
        match self.evicted.get(session) {
            Remembered::User(user) => Some(user),
            Remembered::No | Remembered::Nobody => None,
        }
    }

    /// The connection holding `session`.
    pub(super) fn holder(&self, session: &str) -> Option<ClientId> {
        self.owners.get(session).and_then(|o| o.client)
    }

    /// Sessions held by a connection.
    pub(super) fn held(&self) -> usize {
        self.held.get()
    }

    /// Sessions `user` holds and has left (with a full record).
    pub(super) fn counts(&self, user: &str) -> Counts {
        // A user's entry goes when both counts are back to zero.
        self.counts.get(user).copied().unwrap_or_default()
    }

    fn count(&mut self, user: &str, f: impl FnOnce(&mut Counts)) {
        let c = self.counts.entry(user.into()).or_default();
        f(c);
        if *c == Counts::default() {
            self.counts.remove(user);
        }
    }

    /// `client` of `user` holds `session` from now on. The caller has
    /// checked that the session is `user`'s or was never seen.
    pub(super) fn hold(&mut self, session: &str, user: &str, client: ClientId) {
        self.place(session, user, Some(client));
        self.held.add(1);
        self.count(user, |c| c.held.add(1));
    }

    /// `session` stays `user`'s with no connection holding it (a session
    /// created for a requester that left, or one whose holder left).
    pub(super) fn leave(&mut self, session: &str, user: &str) {
        self.place(session, user, None);
        self.left.push_back(session.into());
        self.count(user, |c| c.left.add(1));
    }

    /// `session`, `user`'s, held by `client` or by none, its earlier
    /// record (and counts) gone.
    fn place(&mut self, session: &str, user: &str, client: Option<ClientId>) {
        self.debug_check_owner(session, user);
        self.remove(session);
        self.owners.insert(
            session.into(),
            Owner {
                user: user.into(),
                client,
            },
        );
    }

    /// A session never changes owner: the callers refuse first.
    fn debug_check_owner(&self, session: &str, user: &str) {
        debug_assert!(
            match self.whose(session) {
                Whose::Owner(o) => o.user == user,
                Whose::Nobody => false,
                Whose::Unseen => true,
            },
            "session {session:?} would change owner to {user:?}: {:?}",
            self.whose(session)
        );
    }

    /// Forgets `session`'s full record; its owner, if it had one. An
    /// evicted record stays.
    pub(super) fn remove(&mut self, session: &str) -> Option<Owner> {
        let owner = self.owners.remove(session)?;
        if owner.client.is_some() {
            self.held.release(1);
            self.count(&owner.user, |c| c.held.release(1));
        } else {
            self.left.retain(|s| s != session);
            self.count(&owner.user, |c| c.left.release(1));
        }
        Some(owner)
    }

    /// Moves `session`'s full record to the evicted ones.
    fn evict(&mut self, session: &str) {
        if let Some(owner) = self.remove(session) {
            self.evicted.insert(session, &owner.user);
        }
    }

    /// The sessions `client` holds.
    pub(super) fn held_by(&self, client: ClientId) -> Vec<String> {
        self.owners
            .iter()
            .filter(|(_, o)| o.client == Some(client))
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// Evicts `user`'s oldest left sessions past the newest `keep`
    /// (they stay `user`'s); returns them.
    pub(super) fn trim_left(&mut self, user: &str, keep: usize) -> Vec<String> {
        let mine: Vec<&String> = self
            .left
            .iter()
            .filter(|s| self.owners.get(*s).is_some_and(|o| o.user == user))
            .collect();
        let mut gone: Vec<String> = mine.into_iter().rev().skip(keep).cloned().collect();
        gone.reverse();
        for s in &gone {
            self.evict(s);
        }
        gone
    }

    /// Evicts every session (they stay their users'); returns each full
    /// record as it was.
    pub(super) fn evict_all(&mut self) -> BTreeMap<String, Owner> {
        let all = core::mem::take(&mut self.owners);
        for (s, o) in &all {
            self.evicted.insert(s, &o.user);
        }
        self.left.clear();
        self.counts.clear();
        self.held = Tally::default();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held sessions counted the naive way: records with a connection.
    fn held_naively(s: &Sessions) -> usize {
        s.owners.values().filter(|o| o.client.is_some()).count()
    }

    #[test]
    fn counts_follow_the_table() {
        let mut s = Sessions::default();
        s.hold("a", "ana", ClientId(1));
        s.hold("b", "ana", ClientId(1));
        s.leave("c", "bo");
        assert_eq!(
            s.counts("ana"),
            Counts {
                held: Tally::holding(2),
                left: Tally::holding(0)
            }
        );
        assert_eq!(
            s.counts("bo"),
            Counts {
                held: Tally::holding(0),
                left: Tally::holding(1)
            }
        );
        assert_eq!(s.held(), 2);
        // Held by the same user's other connection now: the counts move.
        s.hold("c", "bo", ClientId(2));
        assert_eq!(s.counts("bo").held.get(), 1);
        assert_eq!(s.counts("bo").left.get(), 0);
        for x in s.held_by(ClientId(1)) {
            s.leave(&x, "ana");
        }
        assert_eq!(
            s.counts("ana"),
            Counts {
                held: Tally::holding(0),
                left: Tally::holding(2)
            }
        );
        assert_eq!(s.trim_left("ana", 1), ["a"]);
        assert_eq!(
            s.counts("ana"),
            Counts {
                held: Tally::holding(0),
                left: Tally::holding(1)
            }
        );
        assert_eq!(s.held(), held_naively(&s));
        assert_eq!(s.evict_all().len(), 2);
        assert_eq!(s.counts("ana"), Counts::default());
        assert_eq!(s.held(), 0);
    }

    /// The held count is kept in step with the table (a tally, so a
    /// release it never counted fails in debug builds): held against a
    /// naive count after every step of a long, mixed sequence.
    #[test]
    fn the_held_count_balances() {
        let mut s = Sessions::default();
        let users = ["ana", "bo", "cy"];
        for n in 0u32..400 {
            let session = alloc::format!("s{}", n % 23);
            let user = users.get((n % 3) as usize).copied().unwrap_or("ana");
            let mine = s.user(&session).is_none_or(|u| u == user);
            match n % 7 {
                0 | 1 | 4 if mine => s.hold(&session, user, ClientId(u64::from(n % 5))),
                2 | 5 if mine => s.leave(&session, user),
                3 => {
                    let _ = s.remove(&session);
                }
                6 => {
                    let _ = s.trim_left(user, 2);
                }
                _ => {
                    for x in s.held_by(ClientId(u64::from(n % 5))) {
                        if let Some(u) = s.user(&x).map(String::from) {
                            s.leave(&x, &u);
                        }
                    }
                }
            }
            assert_eq!(s.held(), held_naively(&s), "step {n}");
        }
    }

    #[test]
    fn evicted_sessions_stay_their_users() {
        let mut s = Sessions::default();
        for n in 0..5 {
            s.leave(&alloc::format!("a{n}"), "ana");
        }
        assert_eq!(s.trim_left("ana", 2), ["a0", "a1", "a2"]);
        assert_eq!(s.counts("ana").left.get(), 2);
        for n in 0..5 {
            let id = alloc::format!("a{n}");
            assert_eq!(s.user(&id), Some("ana"));
            assert_eq!(
                s.whose(&id),
                Whose::Owner(Owner {
                    user: "ana".into(),
                    client: None
                })
            );
        }
        assert_eq!(s.whose("never"), Whose::Unseen);
        // Reattached by its user: a full record again, and evicted again
        // after; the agent exiting evicts everything.
        s.hold("a0", "ana", ClientId(1));
        assert_eq!(s.holder("a0"), Some(ClientId(1)));
        s.hold("b0", "bo", ClientId(2));
        let lost = s.evict_all();
        assert_eq!(lost.len(), 4);
        assert_eq!(s.user("a0"), Some("ana"));
        assert_eq!(s.user("b0"), Some("bo"));
        assert_eq!(s.holder("a0"), None);
    }
}
