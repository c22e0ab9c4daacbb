//! Unmoves: the predecessors of a position within its own level.
//!
//! Retrograde analysis walks the move graph backwards. Captures leave the
//! level, so inside a level only non-capturing moves matter; this module
//! enumerates, for a position `q`, every in-domain position `p` of the same
//! level with a legal non-capturing move whose child is `q` — exactly the
//! inverse of the `captured == 0` moves of [`super::rules::moves`].
//!
//! Unmoves work on the packed board of the `rules` module (one byte per pit
//! in a `u128`), and the laps that go round the board less than once
//! (nearly all) are chosen without a branch per lap: three bitmasks of the
//! board (empty pits, opponent pits holding one seed, opponent pits holding
//! two or three) tell, for each pit sown from, which lap lengths give a
//! predecessor, and only those are visited.

use super::board::{Board, PITS};
use super::rules::{BOARD_BITS, Packed, Rules, SOWN, capture_run, pack, unpack};

/// Bit 7 of each pit's byte. Pits hold at most 48 seeds, so a byte with
/// this bit set stays at or above 128 - 48 after a lap is taken back from
/// it, and never borrows from the next byte.
const HIGH_BITS: Packed = 0x8080_8080_8080_8080_8080_8080;
/// The opponent's pits `6..12` as bits of a pit mask.
const OPPONENT_PITS: u32 = 0xFC0;
/// Laps of `1..PITS` seeds, bit `s - 1` standing for `s`.
const SHORT_LAPS: u32 = (1 << (PITS - 1)) - 1;

/// Calls `f(p)` for each predecessor `p` of `child` (see the module docs).
/// Each (predecessor, move) edge is reported once; distinct moves of one
/// position always lead to distinct children, so each `p` appears once.
#[inline]
pub fn for_each_predecessor(rules: Rules, child: &Board, mut f: impl FnMut(&Board)) {
    let x = pack(child);
    // `after` is the board right after the move, seen by the mover: the
    // child turned round.
    let after = ((x >> 48) | (x << 48)) & BOARD_BITS;
    let opponent: u8 = child.0[..6].iter().sum();
    if opponent == 0 {
        return; // such a move starves the opponent: never a non-capturing edge
    }
    // Pit masks of `after`: empty pits, and opponent pits holding one seed
    // or two or three (a lap ending there captures).
    let (mut empty, mut one, mut two_three) = (0u32, 0u32, 0u32);
    for (k, &v) in child.0.iter().enumerate() {
        let k = (k + 6) % PITS;
        empty |= u32::from(v == 0) << k;
        one |= u32::from(v == 1) << k;
        two_three |= u32::from(v == 2 || v == 3) << k;
    }
    one &= OPPONENT_PITS;
    two_three &= OPPONENT_PITS;
    let mut sown_from = empty & 0x3F; // the pit sown from is empty afterwards
    while sown_from != 0 {
        let pit = sown_from.trailing_zeros() as usize;
        sown_from &= sown_from - 1;
        // Pit masks turned so that bit `s - 1` is the pit where a lap of
        // `s < PITS` seeds from `pit` ends.
        let ahead = |mask: u32| ((mask >> (pit + 1)) | (mask << (PITS - 1 - pit))) & SHORT_LAPS;
        // A lap takes one seed back from every pit it passed: it cannot go
        // past an empty pit.
        let reach = (ahead(empty) | (1 << (PITS - 1))).trailing_zeros();
        let mut laps = (1 << reach) - 1;
        // Laps ending on an opponent pit of 2 or 3 seeds captured (but an
        // Abapa grand slam, which captures nothing).
        let captured = laps & ahead(two_three);
        laps &= !captured;
        if rules == Rules::Abapa {
            laps |= grand_slams(after, pit, captured, opponent);
        }
        // The predecessor needs an empty opponent pit: one of `after`'s that
        // the lap did not pass (it passes none), or one whose only seed it
        // took back (then every longer lap takes it too).
        if empty & OPPONENT_PITS == 0 {
            let first = (ahead(one) | (1 << (PITS - 1))).trailing_zeros();
            laps &= !((1 << first) - 1);
        }
        while laps != 0 {
            let s = laps.trailing_zeros() as usize + 1;
            laps &= laps - 1;
            f(&unpack(taken_back(after, pit, s)));
        }
        if reach == PITS as u32 - 1 {
            // Every other pit holds a seed: laps round the whole board.
            long_laps(rules, after, pit, opponent, &mut f);
        }
    }
}

/// The board before `s` seeds were sown from `pit` to give `after` (every
/// pit the lap passed holds a seed to give back).
#[inline]
fn taken_back(after: Packed, pit: usize, s: usize) -> Packed {
    after - SOWN[pit][s].add + ((s as Packed) << (8 * pit))
}

/// Of the laps `captured` (bit `s - 1` for `s` seeds from `pit`), which
/// end in an Abapa grand slam: a capture of every opponent seed, which
/// captures nothing.
fn grand_slams(after: Packed, pit: usize, mut captured: u32, opponent: u8) -> u32 {
    let mut quiet = 0;
    while captured != 0 {
        let s = captured.trailing_zeros() as usize + 1;
        captured &= captured - 1;
        if !captures(
            Rules::Abapa,
            after,
            usize::from(SOWN[pit][s].last),
            opponent,
        ) {
            quiet |= 1 << (s - 1);
        }
    }
    quiet
}

/// The unmoves of laps of `PITS` seeds and more from `pit` (which go round
/// the whole board), one by one: rare, since every other pit holds a seed.
#[cold]
fn long_laps(rules: Rules, after: Packed, pit: usize, opponent: u8, f: &mut impl FnMut(&Board)) {
    let marked = after | HIGH_BITS;
    for (s, lap) in SOWN[pit].iter().enumerate().skip(PITS) {
        if (marked - lap.add) & HIGH_BITS != HIGH_BITS {
            return; // a pit had no seed to give back: nor for longer laps
        }
        let last = usize::from(lap.last);
        let p = taken_back(after, pit, s);
        if !captures(rules, after, last, opponent) && in_domain(p) {
            f(&unpack(p));
        }
    }
}

/// Whether a lap ending in pit `last` of `after` (packed) captured.
#[inline]
fn captures(rules: Rules, after: Packed, last: usize, opponent: u8) -> bool {
    let (got, _) = capture_run(after, last);
    got != 0 && !(rules == Rules::Abapa && got == opponent)
}

/// [`Board::in_domain`] of a packed board: an empty pit among `6..12`.
/// Adding 127 to a byte sets its bit 7 unless the byte is 0 (and carries
/// nowhere, since no pit holds more than 48 seeds).
#[inline]
fn in_domain(p: Packed) -> bool {
    let side = (p >> 48) as u64;
    (side + 0x7F7F_7F7F_7F7F) & 0x8080_8080_8080 != 0x8080_8080_8080
}
