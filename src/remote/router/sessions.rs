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
        // Every left session is in `owners` too, without a client.
        self.owners.len().saturating_sub(self.left.len())
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

    /// Forgets `user`'s oldest left sessions past `keep`; returns them.
    pub(super) fn trim_left(&mut self, user: &str, keep: usize) -> Vec<String> {
        // The user's left sessions past `keep`, oldest first (none within).
        let over = self.counts(user).left.get().saturating_sub(keep);
        let gone: Vec<String> = self
            .left
            .iter()
            .filter(|s| self.owners.get(*s).is_some_and(|o| o.user == user))
            .take(over)
            .cloned()
            .collect();
        for s in &gone {
            self.remove(s);
        }
        gone
    }

    /// Forgets every session; returns each with its owner.
    pub(super) fn clear(&mut self) -> BTreeMap<String, Owner> {
        self.left.clear();
        self.counts.clear();
        core::mem::take(&mut self.owners)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
