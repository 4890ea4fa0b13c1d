//! The `Arbitrary` impls (feature `arbitrary`) generate valid traffic:
//! every family round-trips through encode and decode to an equal value,
//! over thousands of pseudo-random inputs (the same check as the
//! `round_trip` fuzz target), and hostile streams hold what their line
//! kinds promise (the `hostile_stream` check).
#![cfg(feature = "arbitrary")]

use crate::checks::round_trip;

use crate::checks::hostile_stream;

/// A seeded generator (SplitMix64): the same inputs on every run.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A buffer of 1 to 4 KiB.
    fn buffer(&mut self) -> Vec<u8> {
        let len = 1 + (self.next() % 4096) as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn every_family_round_trips() {
    let mut rng = SplitMix(0x5EED_0001);
    for family in 0u8..6 {
        for _ in 0..1500 {
            let mut data = rng.buffer();
            data[0] = family;
            round_trip::check(&data);
        }
    }
}

#[test]
fn hostile_streams_hold_their_kinds() {
    let mut rng = SplitMix(0x5EED_0002);
    for _ in 0..400 {
        hostile_stream::check(&rng.buffer());
    }
}
