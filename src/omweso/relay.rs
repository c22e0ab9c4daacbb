//! Capture-free relay sowing on one side, the facts that make its loops
//! decidable exactly, and the walk that decides them.
//!
//! A *relay state* is a side and the pit about to be lifted (holding 2 or
//! more seeds), sowing counter-clockwise. One lap lifts the pit and sows; if
//! the last seed falls in a pit that was empty the move ends, otherwise that
//! pit is the next state's pit.
//!
//! 1. [`unlap`] inverts a lap: the map from a state to the next is injective.
//! 2. Hence a relay is infinite if and only if its start state comes back:
//!    orbits have no lead-in, and the period is exact ([`run`]).
//! 3. If the pit just behind the start pit is empty, the state has no
//!    predecessor, so it cannot lie on a cycle: the relay ends
//!    ([`certificate`]).
//! 5. Laps commute with rotating the side: if after `n` laps the state is
//!    the start state rotated by `r` pits, the relay is infinite and its
//!    period is `n * 16 / gcd(r, 16)` ([`run`] stops there, up to 16 times
//!    sooner than at the return of the start state itself).
//!
//! Proofs in `docs/omweso-loops.md`.

use super::side::{Dir, PITS, Side};

/// The end of one lap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lap {
    /// The side after the lap.
    pub side: Side,
    /// Where the last seed fell.
    pub last: usize,
    /// Seeds sown.
    pub sown: usize,
}

impl Lap {
    /// Whether the last seed fell in an empty pit (the move ends).
    #[inline]
    pub fn ends(&self) -> bool {
        self.side.get(self.last) == 1
    }
}

/// Lifts pit `pit` of `side` and sows its seeds in direction `dir`.
#[inline]
pub fn lap(mut side: Side, pit: usize, dir: Dir) -> Lap {
    let hand = usize::from(side.get(pit));
    side.set(pit, 0);
    let last = side.sow(pit, hand, dir);
    Lap {
        side,
        last,
        sown: hand,
    }
}

/// Fact 1: the state a counter-clockwise lap came from, given the side it
/// left and the pit of its last seed. With `m` the smallest pit count, the
/// lap started at the first pit `q` at or behind `last` holding `m`, and
/// carried `16m + (last - q) mod 16` seeds. `None` if no lap of at least one
/// seed can have left this side (only when more seeds would be needed than
/// the side holds).
pub fn unlap(after: Side, last: usize) -> Option<(Side, usize)> {
    let pits = after.pits();
    let m = *pits.iter().min().expect("16 pits");
    let q = (0..PITS)
        .map(|back| (last + PITS - back) % PITS)
        .find(|&q| pits[q] == m)?;
    let hand = PITS * usize::from(m) + (last + PITS - q) % PITS;
    if hand == 0 {
        return None;
    }
    let mut before = after;
    // Remove what the lap dropped, then put the hand back in `q`.
    let mut undo = Side::EMPTY;
    undo.sow(q, hand, Dir::Ccw);
    before.0 -= undo.0;
    before.set(q, hand as u8);
    Some((before, q))
}

/// Fact 3: a relay from `pit` (sowing `dir`) whose pit just behind is empty
/// cannot be on a cycle, so a capture-free relay from it ends.
#[inline]
pub fn certificate(side: Side, pit: usize, dir: Dir) -> bool {
    let behind = match dir {
        Dir::Ccw => (pit + PITS - 1) % PITS,
        Dir::Cw => (pit + 1) % PITS,
    };
    side.get(behind) == 0
}

/// Greatest common divisor (`gcd(0, n) = n`).
fn gcd(a: usize, b: usize) -> usize {
    if a == 0 { b } else { gcd(b % a, a) }
}

/// How a capture-free counter-clockwise relay ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relay {
    /// The last seed of lap `laps` fell in an empty pit, leaving `side`.
    Ends {
        /// Laps, counting the last.
        laps: u64,
        /// Seeds sown in all.
        sown: u64,
        /// The side when the move ends.
        side: Side,
    },
    /// The start state comes back after `period` laps: the relay never ends.
    Loops {
        /// Laps in one period.
        period: u64,
        /// Seeds sown in one period.
        sown: u64,
        /// Laps walked to prove it: the first return of the start state up
        /// to rotation (fact 5), a divisor of `period`.
        laps: u64,
    },
    /// Neither within the lap budget.
    Undecided {
        /// Laps walked.
        laps: u64,
        /// Seeds sown in them.
        sown: u64,
    },
}

/// Walks the relay from `(side, pit)` counter-clockwise, without captures,
/// for at most `budget` laps. By facts 1 and 2 the only possible repeat is of
/// the start state; by fact 5 it is enough to compare each state, brought to
/// start 0, with the start state brought to start 0. So the walk keeps the
/// side brought to start 0 throughout ([`Side::lap_from_zero`]: each lap
/// lifts pit 0, sows and rotates the landing pit to pit 0) and compares it
/// with the start as it is, counting the pits it has turned by.
#[inline]
pub fn run(side: Side, pit: usize, budget: u64) -> Relay {
    run_unless(side, pit, budget, || false)
}

/// Laps between two questions of [`run_unless`] (about 10 ms of walking).
pub const ASK_EVERY: u64 = 1 << 22;

/// [`run`], asking `stop` every [`ASK_EVERY`] laps whether to give up: if
/// it says so, the walk ends as [`Relay::Undecided`] with the laps walked.
#[inline]
pub fn run_unless(side: Side, pit: usize, budget: u64, mut stop: impl FnMut() -> bool) -> Relay {
    let start = side.rotated_to(pit);
    let (mut s, mut turned) = (start, 0usize);
    let mut sown = 0u64;
    for laps in 1..=budget {
        if laps % ASK_EVERY == 0 && stop() {
            return Relay::Undecided {
                laps: laps - 1,
                sown,
            };
        }
        sown += u64::from(s.get(0));
        turned = (turned + s.lap_from_zero()) % PITS;
        if s.get(0) == 1 {
            return Relay::Ends {
                laps,
                sown,
                side: s.rotated_from((pit + turned) % PITS),
            };
        }
        if s == start {
            // The start state rotated by `turned`: it recurs once the
            // rotations add up to a multiple of 16.
            let turns = (PITS / gcd(turned, PITS)) as u64;
            return Relay::Loops {
                period: laps * turns,
                sown: sown * turns,
                laps,
            };
        }
    }
    Relay::Undecided { laps: budget, sown }
}
