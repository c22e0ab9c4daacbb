//! One player's 16 pits on their closed loop, packed one byte per pit into
//! a `u128`, so that a whole lap of sowing is a handful of word operations.

use std::fmt;

use crate::error::Result;
use crate::pits::Most;

/// Pits on one side.
pub const PITS: usize = 16;
/// Seeds in an Omweso game (32 a side): no side or pit can hold more.
pub const MAX_SEEDS: usize = 64;
/// What a side holds at most, for the messages of [`Side::parse`].
const A_SIDE: Most = Most {
    seeds: MAX_SEEDS,
    holder: "a side",
};
/// The four leftmost pits, from which a lap may be sown clockwise.
pub const LEFTMOST: [usize; 4] = [0, 1, 14, 15];

/// One byte in every lane.
const ONES: u128 = u128::from_le_bytes([1; 16]);

/// Sowing direction along the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Counter-clockwise: index + 1 (the normal direction).
    Ccw,
    /// Clockwise: index - 1 (reverse captures only).
    Cw,
}

impl Dir {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Ccw => "ccw",
            Dir::Cw => "cw",
        }
    }

    /// The pit `steps` pits from `pit` in this direction.
    #[inline]
    pub fn step(self, pit: usize, steps: usize) -> usize {
        match self {
            Dir::Ccw => (pit + steps) % PITS,
            Dir::Cw => (pit + PITS - steps % PITS) % PITS,
        }
    }
}

/// `RUN[d][p][r]`: one seed in each of the `r` pits after `p` in direction `d`.
static RUN: [[[u128; PITS]; PITS]; 2] = {
    let mut t = [[[0u128; PITS]; PITS]; 2];
    let mut d = 0;
    while d < 2 {
        let mut p = 0;
        while p < PITS {
            let mut r = 1;
            while r < PITS {
                let k = if d == 0 {
                    (p + r) % PITS
                } else {
                    (p + PITS - r) % PITS
                };
                t[d][p][r] = t[d][p][r - 1] | (1u128 << (8 * k));
                r += 1;
            }
            p += 1;
        }
        d += 1;
    }
    t
};

/// `FROM_ZERO[h]`: what a counter-clockwise lap of the `h` seeds of pit 0
/// adds to the side, lifting them included (`h / 16` seeds in every pit, one
/// more in pits `1..=h % 16`, minus the `h` lifted from pit 0), rotated like
/// the side after the lap (pit `h % 16`, the landing pit, to pit 0); modulo
/// `2^128`. Every byte value has an entry, so a lookup by the byte of pit 0
/// is always in range.
static FROM_ZERO: [u128; 256] = {
    let mut t = [0u128; 256];
    let mut h = 0;
    while h < 256 {
        let sown = ((h / PITS) as u128 * ONES).wrapping_add(RUN[0][0][h % PITS]);
        let turn = 8 * (h % PITS) as u32;
        t[h] = sown
            .rotate_right(turn)
            .wrapping_sub((h as u128).rotate_right(turn));
        h += 1;
    }
    t
};

/// A side: `x[0..8]` the outer row from the player's left to right, `x[8..16]`
/// the inner row from right to left, so that index + 1 is counter-clockwise.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Side(pub u128);

impl Side {
    /// The empty side.
    pub const EMPTY: Side = Side(0);

    /// A side from pit counts.
    pub fn from_pits(pits: [u8; PITS]) -> Side {
        Side(u128::from_le_bytes(pits))
    }

    /// Pit counts.
    pub fn pits(self) -> [u8; PITS] {
        self.0.to_le_bytes()
    }

    /// Seeds in pit `pit`.
    #[inline]
    pub fn get(self, pit: usize) -> u8 {
        (self.0 >> (8 * pit)) as u8
    }

    /// Sets pit `pit` to `v`.
    #[inline]
    pub fn set(&mut self, pit: usize, v: u8) {
        self.0 = (self.0 & !(0xffu128 << (8 * pit))) | (u128::from(v) << (8 * pit));
    }

    /// Seeds on the side.
    pub fn seeds(self) -> usize {
        self.pits().iter().map(|&v| usize::from(v)).sum()
    }

    /// Sows `hand` seeds one per pit from the pit after `from` in direction
    /// `dir` (`from` itself gets seeds on every full lap of 16) and returns
    /// the pit of the last seed. `from` must already be emptied if the seeds
    /// were lifted from it.
    #[inline]
    pub fn sow(&mut self, from: usize, hand: usize, dir: Dir) -> usize {
        let laps = (hand / PITS) as u128;
        let rest = hand % PITS;
        self.0 += laps * ONES + RUN[dir as usize][from][rest];
        dir.step(from, hand)
    }

    /// Lifts pit 0 and sows its seeds counter-clockwise (a lap from pit 0),
    /// then rotates the side so that the pit of the last seed becomes pit 0;
    /// returns that pit, as numbered before the rotation: the lap of a side
    /// kept brought to start 0. The side is rotated first and
    /// `FROM_ZERO` added after, rotated alike: the same, because no pit's
    /// count carries into the next (a side holds at most 128 seeds: its own
    /// [`MAX_SEEDS`] and, after captures in a study, the opponent's), and
    /// the rotation and the table lookup both wait only for the hand.
    #[inline]
    pub fn lap_from_zero(&mut self) -> usize {
        let hand = self.0 as u8;
        let last = usize::from(hand) % PITS;
        self.0 = self
            .0
            .rotate_right(8 * last as u32)
            .wrapping_add(FROM_ZERO[usize::from(hand)]);
        last
    }

    /// The side rotated so that pit `pit` becomes pit 0.
    #[inline]
    pub fn rotated_to(self, pit: usize) -> Side {
        Side(self.0.rotate_right(8 * pit as u32))
    }

    /// The side rotated so that pit 0 becomes pit `pit` (undoes
    /// [`Side::rotated_to`]).
    #[inline]
    pub fn rotated_from(self, pit: usize) -> Side {
        Side(self.0.rotate_left(8 * pit as u32))
    }

    /// Parses 16 pit counts, as words or one string separated by commas or
    /// spaces, `what` naming the side in errors.
    pub fn parse<S: AsRef<str>>(words: &[S], what: &str) -> Result<Side> {
        crate::pits::parse(words, what, A_SIDE).map(Side::from_pits)
    }
}

/// A side in JSON: its 16 pit counts.
impl serde::Serialize for Side {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.pits().serialize(s)
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self.pits().iter().map(|v| v.to_string()).collect();
        f.write_str(&words.join(" "))
    }
}

impl fmt::Debug for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Side({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side whose pits hold different counts (77 seeds).
    const SOME: [u8; PITS] = [0, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9];

    /// `hand` seeds sown one at a time from the pit after `from` in
    /// direction `dir`: the pits after, and the pit of the last seed.
    fn one_by_one(mut pits: [u8; PITS], from: usize, hand: usize, dir: Dir) -> ([u8; PITS], usize) {
        let mut p = from;
        for _ in 0..hand {
            p = match dir {
                Dir::Ccw => (p + 1) % PITS,
                Dir::Cw => (p + PITS - 1) % PITS,
            };
            pits[p] += 1;
        }
        (pits, p)
    }

    /// Sowing by whole words agrees with sowing a seed at a time, from
    /// every pit, both ways, for hands of 0 to 64 seeds (up to four laps,
    /// the emptied pit `from` getting a seed on each).
    #[test]
    fn sowing_agrees_with_sowing_a_seed_at_a_time() {
        for dir in [Dir::Ccw, Dir::Cw] {
            for from in 0..PITS {
                let mut start = SOME;
                start[from] = 0;
                for hand in 0..=MAX_SEEDS {
                    let mut s = Side::from_pits(start);
                    let last = s.sow(from, hand, dir);
                    let (pits, p) = one_by_one(start, from, hand, dir);
                    assert_eq!((s.pits(), last), (pits, p), "{dir:?} {hand} from {from}");
                    assert_eq!(dir.step(from, hand), p, "{dir:?} {hand} from {from}");
                }
            }
        }
    }

    /// A lap from pit 0 of a side brought to start 0, for every count pit
    /// 0 can hold: the lap lifted and sown a seed at a time, then the side
    /// turned so that the landing pit (returned, `h % 16`) is pit 0.
    #[test]
    fn a_lap_from_zero_is_a_lap_then_a_turn_to_the_landing_pit() {
        for h in 0..=255u8 {
            let mut start = SOME;
            start[0] = 0;
            let (pits, last) = one_by_one(start, 0, usize::from(h), Dir::Ccw);
            start[0] = h;
            let mut s = Side::from_pits(start);
            assert_eq!(s.lap_from_zero(), usize::from(h) % PITS, "{h}");
            assert_eq!(last, usize::from(h) % PITS);
            assert_eq!(s, Side::from_pits(pits).rotated_to(last), "{h}");
            assert_eq!(s.get(0), pits[last], "{h}");
            assert_eq!(s.rotated_from(last), Side::from_pits(pits), "{h}");
        }
    }

    /// A side is written as its 16 counts, as `parse` reads them, in JSON
    /// as their array; directions by their names.
    #[test]
    fn a_side_is_written_as_its_16_counts() {
        let s = Side::from_pits(SOME);
        let text = "0 3 1 4 1 5 9 2 6 5 3 5 8 9 7 9";
        assert_eq!(s.to_string(), text);
        assert_eq!(format!("{s:?}"), format!("Side({text})"));
        // `parse` reads it back, but for its 77 seeds: a side holds 64.
        let e = Side::parse(&[text], "a side").unwrap_err().to_string();
        assert!(e.contains("77") && e.contains("64"), "{e}");
        let fewer = "0 3 1 4 1 5 9 2 6 5 3 5 8 9 0 0";
        let mut s64 = SOME;
        (s64[14], s64[15]) = (0, 0);
        assert_eq!(
            Side::parse(&[fewer], "a side").unwrap(),
            Side::from_pits(s64)
        );
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            "[0,3,1,4,1,5,9,2,6,5,3,5,8,9,7,9]"
        );
        assert_eq!(s.seeds(), 77);
        assert_eq!((Dir::Ccw.name(), Dir::Cw.name()), ("ccw", "cw"));
    }
}
