//! A count of what a state holds (bytes buffered, sessions open, requests in
//! flight), kept in step with what is added and given back.
//!
//! Such a count is raised when something is taken and lowered when the same
//! thing is released, so it can neither overflow (it counts what exists in
//! memory or in a bounded table) nor drop below zero, unless the bookkeeping
//! is wrong. [`Tally`] makes that visible instead of papering over it: in
//! debug builds (every test, proptest and fuzz-corpus replay) releasing more
//! than is held, or overflowing, fails at once with the count's value; in
//! release builds the count stays at its bound, so the limit checks that read
//! it still hold and nothing panics on wire data.

/// A count of held units; see the [module docs](self).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally(usize);

impl Tally {
    /// A count of `n` units already taken.
    pub(crate) const fn holding(n: usize) -> Self {
        Self(n)
    }

    /// The count.
    pub(crate) const fn get(self) -> usize {
        self.0
    }

    /// Counts `n` more units taken.
    pub(crate) fn add(&mut self, n: usize) {
        debug_assert!(
            self.0.checked_add(n).is_some(),
            "tally overflow: {} + {n}",
            self.0
        );
        self.0 = self.0.saturating_add(n);
    }

    /// Counts `n` units given back, which must have been counted.
    pub(crate) fn release(&mut self, n: usize) {
        debug_assert!(n <= self.0, "tally released {n} of {} held", self.0);
        self.0 = self.0.saturating_sub(n);
    }

    /// Room left under `limit`: zero once the count reaches it.
    pub(crate) const fn room(self, limit: usize) -> usize {
        limit.saturating_sub(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Tally;

    #[test]
    fn counts_and_room() {
        let mut t = Tally::default();
        t.add(5);
        t.release(2);
        assert_eq!(t.get(), 3);
        assert_eq!(t.room(10), 7);
        assert_eq!(t.room(2), 0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "tally released 4 of 3 held")]
    fn a_release_of_more_than_held_is_a_bug() {
        let mut t = Tally::default();
        t.add(3);
        t.release(4);
    }
}
