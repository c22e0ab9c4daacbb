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

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::compose::Ranker;

    /// Every side of `k` seeds.
    fn every_side(k: usize, mut f: impl FnMut(Side)) {
        let ranker = Ranker::new(PITS, k, None);
        let mut x = [0u8; PITS];
        ranker.unrank(k, 0, &mut x);
        loop {
            f(Side::from_pits(x));
            if !ranker.advance(&mut x) {
                break;
            }
        }
    }

    /// Sides of 16 to 63 seeds, each seed in a pseudo-random pit.
    fn sampled_sides(n: usize) -> Vec<Side> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let mut pits = [0u8; PITS];
                for _ in 0..16 + next() % 48 {
                    pits[(next() % PITS as u64) as usize] += 1;
                }
                Side::from_pits(pits)
            })
            .collect()
    }

    /// Lifts `pit` and sows counter-clockwise a seed at a time: the seeds
    /// sown; `pit` becomes the pit of the last seed.
    fn lap_by_hand(pits: &mut [u8; PITS], pit: &mut usize) -> u64 {
        let hand = std::mem::take(&mut pits[*pit]);
        for _ in 0..hand {
            *pit = (*pit + 1) % PITS;
            pits[*pit] += 1;
        }
        u64::from(hand)
    }

    /// `pits` rotated so that `pit` becomes pit 0.
    fn brought_to(pits: [u8; PITS], pit: usize) -> [u8; PITS] {
        std::array::from_fn(|i| pits[(pit + i) % PITS])
    }

    /// The relay from `pit` of `side` sown by hand, with general cycle
    /// detection (every state visited remembered, a loop's period the
    /// first repeat of any state), and the first lap at which the state is
    /// the start state rotated. Panics on a loop with a lead-in (fact 2).
    fn by_hand(side: Side, pit: usize, budget: u64) -> Relay {
        let start = (side.pits(), pit);
        let (mut pits, mut p) = start;
        let (mut sown, mut rotated) = (0, None);
        let mut seen = HashMap::new();
        for laps in 1..=budget {
            seen.insert((pits, p), laps - 1);
            sown += lap_by_hand(&mut pits, &mut p);
            if pits[p] == 1 {
                let side = Side::from_pits(pits);
                return Relay::Ends { laps, sown, side };
            }
            if brought_to(pits, p) == brought_to(start.0, start.1) {
                rotated.get_or_insert(laps);
            }
            if let Some(&at) = seen.get(&(pits, p)) {
                assert_eq!(at, 0, "{side} pit {pit}: a lead-in");
                return Relay::Loops {
                    period: laps - at,
                    sown,
                    laps: rotated.expect("the start came back"),
                };
            }
        }
        Relay::Undecided { laps: budget, sown }
    }

    /// A lap is sowing a seed at a time; it ends when its last seed falls
    /// in an empty pit; and `unlap` gives back the state it came from,
    /// from every pit holding seeds of every side of up to 5 seeds, and of
    /// sampled sides of 16 to 63 seeds (laps of one or more whole rounds).
    /// No lap can leave the empty side.
    #[test]
    fn a_lap_is_sowing_by_hand_and_unlap_undoes_it() {
        let mut sides = sampled_sides(2000);
        for k in 1..=5 {
            every_side(k, |s| sides.push(s));
        }
        for s in sides {
            for pit in (0..PITS).filter(|&p| s.get(p) > 0) {
                let l = lap(s, pit, Dir::Ccw);
                let (mut pits, mut last) = (s.pits(), pit);
                let sown = lap_by_hand(&mut pits, &mut last);
                assert_eq!(
                    l,
                    Lap {
                        side: Side::from_pits(pits),
                        last,
                        sown: sown as usize,
                    }
                );
                assert_eq!(l.ends(), pits[last] == 1, "{s} pit {pit}");
                assert_eq!(unlap(l.side, l.last), Some((s, pit)), "{s} pit {pit}");
            }
        }
        for last in 0..PITS {
            assert_eq!(unlap(Side::EMPTY, last), None);
        }
    }

    /// `certificate` is fact 3's condition, the pit behind the start
    /// empty: behind counter-clockwise is one pit back, clockwise one pit
    /// on (the side read the other way round); and a certified relay ends.
    #[test]
    fn the_certificate_is_an_empty_pit_behind_and_certified_relays_end() {
        let mut certified = 0;
        for k in 2..=6 {
            every_side(k, |s| {
                let pits = s.pits();
                let mirror = Side::from_pits(std::array::from_fn(|i| pits[PITS - 1 - i]));
                for pit in (0..PITS).filter(|&p| s.get(p) >= 2) {
                    let empty_behind = pits[(pit + PITS - 1) % PITS] == 0;
                    assert_eq!(certificate(s, pit, Dir::Ccw), empty_behind, "{s} {pit}");
                    assert_eq!(
                        certificate(mirror, PITS - 1 - pit, Dir::Cw),
                        empty_behind,
                        "{s} {pit}"
                    );
                    if empty_behind {
                        certified += 1;
                        assert!(matches!(by_hand(s, pit, 1000), Relay::Ends { .. }));
                    }
                }
            });
        }
        assert!(certified > 0);
    }

    /// Cycles of the census (of 11, 13 and 15 seeds) with 16, 8 and 4 laps
    /// of proof to a period (turning by an odd pit count, by 2 or 6, or by
    /// 4 or 12 per proof).
    const LOOPING: [[u8; PITS]; 6] = [
        [2, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 1],
        [2, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 3],
        [2, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 1, 0, 3],
        [7, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1],
        [2, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 4, 1],
        [2, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2, 1, 0, 1, 2, 3],
    ];

    /// `run` decides as the relay sown by hand with general cycle
    /// detection: a move that ends with its laps, seeds sown and final
    /// side; a loop with its exact period, the seeds sown in it, and the
    /// lap at which the start state first came back rotated, from every
    /// legal pit of every side of up to 6 seeds and of the census's cycles
    /// (those pits that do not loop included).
    #[test]
    fn run_decides_as_the_relay_sown_by_hand() {
        let mut sides: Vec<Side> = LOOPING.iter().map(|&p| Side::from_pits(p)).collect();
        for k in 2..=6 {
            every_side(k, |s| sides.push(s));
        }
        let (mut ends, mut loops) = (0, HashSet::new());
        for s in sides {
            for pit in (0..PITS).filter(|&p| s.get(p) >= 2) {
                let want = by_hand(s, pit, 10_000);
                assert_eq!(run(s, pit, 10_000), want, "{s} pit {pit}");
                match want {
                    Relay::Ends { .. } => ends += 1,
                    Relay::Loops { period, laps, .. } => _ = loops.insert(period / laps),
                    Relay::Undecided { .. } => panic!("{s} pit {pit}: undecided"),
                }
            }
        }
        assert!(ends > 0);
        assert_eq!(loops, HashSet::from([4, 8, 16]));
    }

    /// A side of 64 seeds whose relay from pit 0 comes back rotated only
    /// after 255,688,869 laps (`docs/omweso-loops.md`).
    const LONG: [u8; PITS] = [2, 6, 5, 2, 3, 4, 3, 4, 8, 2, 6, 3, 2, 5, 6, 3];

    /// `run_unless` asks whether to give up once every `ASK_EVERY` laps and
    /// no more; giving up at the first question is the walk of the laps
    /// before it, as `run` would end it with that budget; never giving up
    /// is `run`.
    #[test]
    fn run_unless_asks_every_ask_every_laps_and_gives_up_when_told() {
        let side = Side::from_pits(LONG);
        let mut asked = 0;
        let budget = 2 * ASK_EVERY + 5;
        let walked = run_unless(side, 0, budget, || {
            asked += 1;
            false
        });
        assert_eq!((walked, asked), (run(side, 0, budget), 2));
        assert!(matches!(walked, Relay::Undecided { laps, .. } if laps == budget));
        let mut asked = 0;
        let stopped = run_unless(side, 0, budget, || {
            asked += 1;
            true
        });
        assert_eq!((stopped, asked), (run(side, 0, ASK_EVERY - 1), 1));
        // Decided before the first question: never asked.
        let side = Side::from_pits(LOOPING[3]);
        let mut asked = 0;
        let decided = run_unless(side, 0, budget, || {
            asked += 1;
            true
        });
        assert_eq!((decided, asked), (by_hand(side, 0, 10_000), 0));
    }
}
