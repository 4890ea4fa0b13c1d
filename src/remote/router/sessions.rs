//! Who owns each session: a user, and the one connection of that user
//! that holds it now (none after that connection left, until the user
//! reattaches it).

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;

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
    owners: BTreeMap<String, Owner>,
    /// Sessions whose connection left, oldest first.
    left: VecDeque<String>,
    counts: BTreeMap<String, Counts>,
    /// Held sessions, every user's.
    held: Tally,
}

impl Sessions {
    pub(super) fn get(&self, session: &str) -> Option<&Owner> {
        self.owners.get(session)
    }

    /// The connection holding `session`.
    pub(super) fn holder(&self, session: &str) -> Option<ClientId> {
        self.owners.get(session).and_then(|o| o.client)
    }

    /// Sessions held by a connection.
    pub(super) fn held(&self) -> usize {
        self.held.get()
    }

    /// Sessions `user` holds and has left.
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

    /// `client` of `user` holds `session` from now on (whoever owned it).
    pub(super) fn hold(&mut self, session: &str, user: &str, client: ClientId) {
        self.remove(session);
        self.owners.insert(
            session.into(),
            Owner {
                user: user.into(),
                client: Some(client),
            },
        );
        self.held.add(1);
        self.count(user, |c| c.held.add(1));
    }

    /// `session` stays `user`'s with no connection holding it (a session
    /// created for a requester that left, or one whose holder left).
    pub(super) fn leave(&mut self, session: &str, user: &str) {
        self.remove(session);
        self.owners.insert(
            session.into(),
            Owner {
                user: user.into(),
                client: None,
            },
        );
        self.left.push_back(session.into());
        self.count(user, |c| c.left.add(1));
    }

    /// Forgets `session`; its owner, if it had one.
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

    /// The sessions `client` holds.
    pub(super) fn held_by(&self, client: ClientId) -> Vec<String> {
        self.owners
            .iter()
            .filter(|(_, o)| o.client == Some(client))
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// Forgets `user`'s oldest left sessions past the newest `keep`;
    /// returns them.
    pub(super) fn trim_left(&mut self, user: &str, keep: usize) -> Vec<String> {
        let mine: Vec<&String> = self
            .left
            .iter()
            .filter(|s| self.owners.get(*s).is_some_and(|o| o.user == user))
            .collect();
        let mut gone: Vec<String> = mine.into_iter().rev().skip(keep).cloned().collect();
        gone.reverse();
        for s in &gone {
            self.remove(s);
        }
        gone
    }

    /// Forgets every session; returns each with its owner.
    pub(super) fn clear(&mut self) -> BTreeMap<String, Owner> {
        self.left.clear();
        self.counts.clear();
        self.held = Tally::default();
        core::mem::take(&mut self.owners)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held sessions counted the naive way: records with a connection.
    fn held_naively(s: &Sessions) -> usize {
        s.owners.values().filter(|o| o.client.is_some()).count()
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
            match n % 7 {
                0 | 1 | 4 => s.hold(&session, user, ClientId(u64::from(n % 5))),
                2 | 5 => s.leave(&session, user),
                3 => {
                    let _ = s.remove(&session);
                }
                6 => {
                    let _ = s.trim_left(user, 2);
                }
                _ => {}
            }
            if n % 11 == 0 {
                for x in s.held_by(ClientId(u64::from(n % 5))) {
                    if let Some(u) = s.get(&x).map(|o| o.user.clone()) {
                        s.leave(&x, &u);
                    }
                }
            }
            assert_eq!(s.held(), held_naively(&s), "step {n}");
        }
        let _ = s.clear();
        assert_eq!(s.held(), 0);
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
        // Held by someone else now: the counts move.
        s.hold("c", "ana", ClientId(2));
        assert_eq!(s.counts("bo"), Counts::default());
        assert_eq!(s.counts("ana").held.get(), 3);
        for x in s.held_by(ClientId(1)) {
            s.leave(&x, "ana");
        }
        assert_eq!(
            s.counts("ana"),
            Counts {
                held: Tally::holding(1),
                left: Tally::holding(2)
            }
        );
        assert_eq!(s.trim_left("ana", 1), ["a"]);
        assert_eq!(
            s.counts("ana"),
            Counts {
                held: Tally::holding(1),
                left: Tally::holding(1)
            }
        );
        assert_eq!(s.clear().len(), 2);
        assert_eq!(s.counts("ana"), Counts::default());
    }
}
