//! The rules of Oware: sowing, capturing, starving, and the two rule sets.
//!
//! Every value in the tables follows from [`moves`]: the value of a position
//! is the best `captured - value(child)` over its legal moves, or `-seeds`
//! when the player to move has none ([`value_without_moves`]: the opponent
//! takes the rest).

use std::fmt;
use std::str::FromStr;

use super::board::{Board, MAX_SEEDS, PITS};
use crate::error::Error;

/// A rule set. They differ only in grand-slam captures (both score endless
/// play 0; README, "Rules"). `Rules::default()` is `Awari`, the rules of
/// the published database; parsed from and named by `awari` and `abapa`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Rules {
    /// The rules under which Romein & Bal solved Awari: a move that leaves the
    /// opponent without seeds (a grand slam included) is legal only if every
    /// move does; then the mover takes all seeds on the board.
    #[default]
    Awari,
    /// International (Abapa) Oware's grand-slam rule: as `Awari`, except
    /// that a capture that would take every opponent seed is legal but
    /// captures nothing. (Tournament Abapa's own-side split of a stopped
    /// cycle is not a value of the position alone; endless play is 0 here.)
    Abapa,
}

impl Rules {
    /// All rule sets.
    pub const ALL: [Rules; 2] = [Rules::Awari, Rules::Abapa];

    /// The rule set's name, as used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Rules::Awari => "awari",
            Rules::Abapa => "abapa",
        }
    }

    /// Code stored in table headers.
    pub fn code(self) -> u8 {
        match self {
            Rules::Awari => 1,
            Rules::Abapa => 2,
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rules {
    type Err = Error;
    fn from_str(s: &str) -> Result<Rules, Error> {
        Rules::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| Error::Invalid(format!("unknown rule set '{s}' (use awari or abapa)")))
    }
}

/// A legal move and where it leads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Move {
    /// The pit sown, `0..6`.
    pub pit: u8,
    /// Seeds the mover gains. When every move starves the opponent, each move
    /// ends the game and gains every seed on the board; `child` is then empty.
    pub captured: u8,
    /// The position after the move, seen by the opponent (now to move).
    pub child: Board,
}

/// The legal moves of a position, in pit order, without allocation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Moves {
    list: [Move; 6],
    len: u8,
}

impl Moves {
    /// The legal moves.
    pub fn as_slice(&self) -> &[Move] {
        &self.list[..usize::from(self.len)]
    }

    /// How many there are: none exactly when the player to move has no
    /// seeds ([`value_without_moves`]).
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The move that sows `pit`, if it is legal: how an engine plays a
    /// pit.
    ///
    /// ```
    /// use mancaladb::oware::moves;
    /// use mancaladb::{Board, Rules};
    ///
    /// let b = Board::parse(&["1 1 1 1 1 2 4 2 3 0 0 0"])?;
    /// let legal = moves(Rules::Awari, &b);
    /// assert_eq!(legal.len(), 6);
    /// let m = legal.of_pit(5).unwrap();
    /// assert_eq!((m.captured, m.child.seeds()), (3, 13));
    /// assert!(legal.of_pit(6).is_none()); // the opponent's pit
    /// let b = Board::parse(&["0 1 0 0 0 0 1 0 0 0 0 0"])?;
    /// assert!(moves(Rules::Awari, &b).of_pit(0).is_none()); // an empty pit
    /// # Ok::<(), mancaladb::Error>(())
    /// ```
    pub fn of_pit(&self, pit: u8) -> Option<&Move> {
        self.as_slice().iter().find(|m| m.pit == pit)
    }

    fn push(&mut self, m: Move) {
        self.list[usize::from(self.len)] = m;
        self.len += 1;
    }
}

/// `for m in moves(rules, &board)`: the legal moves, in pit order.
impl IntoIterator for Moves {
    type Item = Move;
    type IntoIter = std::iter::Take<std::array::IntoIter<Move, 6>>;

    fn into_iter(self) -> Self::IntoIter {
        self.list.into_iter().take(usize::from(self.len))
    }
}

impl<'a> IntoIterator for &'a Moves {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

/// Sows pit `pit` of `b` in place (one seed per pit from `pit + 1` on,
/// skipping `pit` itself on every lap) and returns the pit of the last seed.
///
/// `pit` is one of the mover's pits `0..6`; a board holds at most 48 seeds.
#[inline]
pub(crate) fn sow(b: &mut [u8; PITS], pit: usize) -> usize {
    let s = usize::from(b[pit]);
    debug_assert!(s > 0 && pit < 6);
    b[pit] = 0;
    let lap = &SOWING[pit][s];
    for (v, add) in b.iter_mut().zip(&lap.add) {
        *v += add;
    }
    usize::from(lap.last)
}

/// What sowing `s` seeds from a pit adds to each pit, and where it ends.
#[derive(Clone, Copy)]
struct Lap {
    add: [u8; PITS],
    last: u8,
}

/// `SOWING[pit][s]` for the mover's pits and every seed count, computed at
/// compile time by sowing seed by seed: sowing is then one 12-byte add.
static SOWING: [[Lap; MAX_SEEDS + 1]; 6] = {
    let mut table = [[Lap {
        add: [0; PITS],
        last: 0,
    }; MAX_SEEDS + 1]; 6];
    let mut pit = 0;
    while pit < 6 {
        let mut s = 1;
        while s <= MAX_SEEDS {
            let mut lap = Lap {
                add: [0; PITS],
                last: 0,
            };
            let (mut k, mut left) = (pit, s);
            while left > 0 {
                k = (k + 1) % PITS;
                if k != pit {
                    lap.add[k] += 1;
                    left -= 1;
                }
            }
            lap.last = k as u8;
            table[pit][s] = lap;
            s += 1;
        }
        pit += 1;
    }
    table
};

/// Seeds a capture would take after a lap ending in `last` on the packed
/// board `b` (grand slams aside): from `last` backwards while the pit is
/// the opponent's and holds 2 or 3. Returns the seeds and the lowest pit
/// captured.
#[inline]
pub(super) fn capture_run(b: Packed, last: usize) -> (u8, usize) {
    let mut got = 0u8;
    let mut k = last;
    while k >= 6 && matches!(pit_of(b, k), 2 | 3) {
        got += pit_of(b, k);
        k -= 1;
    }
    (got, k + 1)
}

/// The legal moves of `board` under `rules`.
///
/// An empty list means the player to move has no seeds: the game ends and
/// the value is `-seeds`.
///
/// ```
/// use mancaladb::oware::{moves, Board, Rules};
/// // The capture from pit 5 would starve the opponent, so only pit 0 is legal.
/// let b = Board::new([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0])?;
/// let m = moves(Rules::Awari, &b);
/// assert_eq!(m.as_slice().len(), 1);
/// assert_eq!(m.as_slice()[0].pit, 0);
/// for m in moves(Rules::Awari, &b) {
///     assert_eq!((m.pit, m.captured, m.child.seeds()), (0, 0, 3));
/// }
/// # Ok::<(), mancaladb::Error>(())
/// ```
pub fn moves(rules: Rules, board: &Board) -> Moves {
    generate::<true, true>(rules, board).0
}

/// The value of a position of `seeds` seeds whose player to move has no
/// move, which under both rule sets happens exactly when they have no
/// seeds (see [`moves`]): the game ends and the opponent takes the
/// `seeds` left, so the mover ends `seeds` behind. The one value every
/// solver, checker and query gives such a position.
pub fn value_without_moves(seeds: usize) -> i8 {
    debug_assert!(seeds <= MAX_SEEDS);
    -(seeds as i8)
}

/// The capturing moves of `board` (those of [`moves`] with `captured > 0`,
/// in pit order) and the number of its quiet ones (`captured == 0`), without
/// building the quiet moves' children: what the solver's forward pass reads.
/// Both are empty exactly when the player to move has no seeds.
pub fn captures(rules: Rules, board: &Board) -> (Moves, u8) {
    generate::<false, true>(rules, board)
}

/// The number of quiet moves (`captured == 0`) of `board` among its
/// [`moves`], found without building any child.
pub fn quiet_moves(rules: Rules, board: &Board) -> u8 {
    generate::<false, false>(rules, board).1
}

/// The one move generator behind [`moves`], [`captures`] and
/// [`quiet_moves`]: returns the legal moves it is asked to build (quiet
/// ones if `QUIET`, capturing ones if `CAPTURES`) and the number of quiet
/// moves.
///
/// A lap that does not end on an opponent pit left holding 2 or 3 captures
/// nothing; it is then legal unless it leaves the opponent without seeds,
/// which [`SOWN`] tells without sowing (the seeds it adds to that side).
/// Only the other laps are played out.
#[inline(always)]
fn generate<const QUIET: bool, const CAPTURES: bool>(rules: Rules, board: &Board) -> (Moves, u8) {
    let x = pack(board);
    let opponent: u8 = board.0[6..].iter().sum();
    let mut built = Moves::default();
    let (mut quiet, mut captures) = (0u8, 0u8);
    let mut starving = 0u8; // pits whose move starves the opponent
    for (pit, laps) in SOWN.iter().enumerate() {
        let s = board.0[pit];
        // An empty pit's entry adds nothing and ends on pit 0.
        let lap = &laps[usize::from(s)];
        let last = usize::from(lap.last);
        let lands_on_2_or_3 = last >= 6 && matches!(board.0[last] + lap.at_last, 2 | 3);
        if !QUIET && !CAPTURES && rules == Rules::Awari {
            // Counting only, and under Awari every capture is a capture:
            // no branch on the board.
            quiet += u8::from(s > 0)
                & u8::from(!lands_on_2_or_3)
                & u8::from(opponent + lap.to_opponent > 0);
            continue;
        }
        if s == 0 {
            continue;
        }
        if !lands_on_2_or_3 {
            if opponent + lap.to_opponent == 0 {
                starving |= 1 << pit;
            } else {
                quiet += 1;
                if QUIET {
                    built.push(play_packed(rules, x, pit, s).0);
                }
            }
            continue;
        }
        let (m, starves) = play_packed(rules, x, pit, s);
        if starves {
            starving |= 1 << pit;
        } else if m.captured == 0 {
            quiet += 1; // an Abapa grand slam, which captures nothing
            if QUIET {
                built.push(m);
            }
        } else {
            captures += 1;
            if CAPTURES {
                built.push(m);
            }
        }
    }
    if CAPTURES && quiet + captures == 0 && starving != 0 {
        // Every move starves the opponent: each ends the game, the mover
        // taking every seed on the board.
        let all = board.seeds() as u8;
        for pit in (0..6).filter(|&p| starving & (1 << p) != 0) {
            built.push(Move {
                pit,
                captured: all,
                child: Board::EMPTY,
            });
        }
    }
    (built, quiet)
}

/// Sows `pit` (which holds seeds) of `board` and captures: the move, and
/// whether it leaves the opponent without seeds.
///
/// A move that does not starve the opponent is always legal; one that does
/// is legal only if every move does, and is then valued by [`moves`].
///
/// `pit` is one of the mover's pits `0..6`, or this panics.
#[inline]
pub(crate) fn play(rules: Rules, board: &Board, pit: usize) -> (Move, bool) {
    play_packed(rules, pack(board), pit, board.0[pit])
}

/// A board as one integer, byte `k` holding pit `k` (bytes 12..16 zero):
/// sowing is then one addition and turning the board one rotation. No
/// byte carries into the next, since a pit holds at most 48 seeds.
pub(super) type Packed = u128;

pub(super) const BOARD_BITS: Packed = (1 << 96) - 1;

#[inline]
pub(super) fn pack(board: &Board) -> Packed {
    let mut bytes = [0u8; 16];
    bytes[..PITS].copy_from_slice(&board.0);
    Packed::from_le_bytes(bytes)
}

#[inline]
pub(super) fn unpack(x: Packed) -> Board {
    let bytes = x.to_le_bytes();
    let mut b = [0u8; PITS];
    b.copy_from_slice(&bytes[..PITS]);
    Board(b)
}

#[inline]
pub(super) fn pit_of(x: Packed, k: usize) -> u8 {
    (x >> (8 * k)) as u8
}

/// [`play`] on a packed board whose pit `pit` holds `s > 0` seeds.
#[inline]
fn play_packed(rules: Rules, x: Packed, pit: usize, s: u8) -> (Move, bool) {
    let lap = &SOWN[pit][usize::from(s)];
    // The pit sown from is emptied; the lap's seeds land everywhere else.
    let mut b = x - (Packed::from(s) << (8 * pit)) + lap.add;
    let last = usize::from(lap.last);
    // Seeds on the opponent's side (pits 6..12): the multiplication adds
    // the six bytes into the top one, and no sum exceeds 48.
    let side = (b >> 48) as u64 & 0xFFFF_FFFF_FFFF;
    let opponent = (side.wrapping_mul(0x0101_0101_0101) >> 40) as u8;
    let (mut got, first) = capture_run(b, last);
    if got == opponent && got > 0 && rules == Rules::Abapa {
        got = 0; // a grand slam captures nothing under Abapa
    }
    if got > 0 {
        // Empty pits first..=last.
        let width = 8 * (last + 1 - first);
        let mask = ((1u128 << width) - 1) << (8 * first);
        b &= !mask;
    }
    let child = ((b >> 48) | (b << 48)) & BOARD_BITS;
    let m = Move {
        pit: pit as u8,
        captured: got,
        child: unpack(child),
    };
    (m, opponent == got)
}

/// [`SOWING`] as packed additions, with what [`generate`] reads of each lap.
pub(super) static SOWN: [[PackedLap; MAX_SEEDS + 1]; 6] = {
    let mut table = [[PackedLap {
        add: 0,
        last: 0,
        at_last: 0,
        to_opponent: 0,
    }; MAX_SEEDS + 1]; 6];
    let mut pit = 0;
    while pit < 6 {
        let mut s = 1;
        while s <= MAX_SEEDS {
            let lap = &SOWING[pit][s];
            let (mut add, mut to_opponent): (Packed, u8) = (0, 0);
            let mut k = 0;
            while k < PITS {
                add |= (lap.add[k] as Packed) << (8 * k);
                if k >= 6 {
                    to_opponent += lap.add[k];
                }
                k += 1;
            }
            table[pit][s] = PackedLap {
                add,
                last: lap.last,
                at_last: lap.add[lap.last as usize],
                to_opponent,
            };
            s += 1;
        }
        pit += 1;
    }
    table
};

#[derive(Clone, Copy)]
pub(super) struct PackedLap {
    /// What the lap adds to each pit (the pit sown from: nothing).
    pub(super) add: Packed,
    /// The pit of the last seed.
    pub(super) last: u8,
    /// Seeds the lap adds to pit `last`.
    at_last: u8,
    /// Seeds the lap adds to the opponent's pits `6..12`.
    to_opponent: u8,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::Encoder;

    /// [`captures`] and [`quiet_moves`] agree with [`moves`] on every
    /// position of levels 0..=12 (and their boards with every opponent pit
    /// filled, outside the stored domain), under both rule sets.
    #[test]
    fn captures_and_quiet_moves_agree_with_moves() {
        let enc = Encoder::new(12);
        let mut seen = [0u64; 3]; // quiet moves, captures, grand slams
        for rules in Rules::ALL {
            for seeds in 0..=12 {
                let size = enc.level_size(seeds);
                enc.for_range(seeds, 0, size, |_, b| {
                    for board in [
                        *b,
                        Board(std::array::from_fn(|k| b.0[k].max(u8::from(k >= 6)))),
                    ] {
                        let all = moves(rules, &board);
                        let all = all.as_slice();
                        let want_quiet = all.iter().filter(|m| m.captured == 0).count() as u8;
                        let want: Vec<Move> =
                            all.iter().filter(|m| m.captured > 0).copied().collect();
                        let (caps, quiet) = captures(rules, &board);
                        assert_eq!(caps.as_slice(), want, "{rules} {board}");
                        assert_eq!(quiet, want_quiet, "{rules} {board}");
                        assert_eq!(quiet_moves(rules, &board), want_quiet, "{rules} {board}");
                        seen[0] += u64::from(quiet);
                        seen[1] += want.len() as u64;
                        seen[2] += want.iter().filter(|m| m.child == Board::EMPTY).count() as u64;
                    }
                });
            }
        }
        assert!(seen.iter().all(|&n| n > 1000), "{seen:?}");
    }

    /// A [`Moves`] yields its legal moves, in pit order, whether iterated
    /// by value, by reference or as a slice: on a board whose opponent
    /// keeps seeds whatever is sown, each pit holding seeds is a move.
    #[test]
    fn moves_iterate_alike_by_value_and_by_reference() {
        let b = Board([1, 0, 2, 0, 3, 4, 0, 5, 0, 0, 0, 0]);
        for rules in Rules::ALL {
            let m = moves(rules, &b);
            let pits: Vec<u8> = m.as_slice().iter().map(|m| m.pit).collect();
            assert_eq!(pits, [0, 2, 4, 5], "{rules}");
            let by_ref: Vec<Move> = (&m).into_iter().copied().collect();
            let by_value: Vec<Move> = m.into_iter().collect();
            assert_eq!(by_ref, m.as_slice(), "{rules}");
            assert_eq!(by_value, m.as_slice(), "{rules}");
        }
    }
}
