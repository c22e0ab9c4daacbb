//! An Oware board seen from the player to move.

use std::fmt;

use crate::error::{Error, Result};
use crate::pits::Most;

/// Pits on an Oware board.
pub const PITS: usize = 12;
/// Seeds in a full game (4 per pit): the largest level.
pub const MAX_SEEDS: usize = 48;
/// What a game holds at most, for the messages of [`Board::parse`].
const GAME: Most = Most {
    seeds: MAX_SEEDS,
    holder: "a game",
};

/// `n` as a level of the game: `beyond_the_game` above [`MAX_SEEDS`].
/// `build --max-seeds` and the server's statistics route (through
/// [`parse_level`]), the sources and Python's `level_size` check a level
/// with it (ranges of levels are checked where they are parsed).
pub fn game_level(n: u64) -> Result<usize> {
    match usize::try_from(n) {
        Ok(n) if n <= MAX_SEEDS => Ok(n),
        _ => Err(beyond_the_game(n)),
    }
}

/// The error of a level above [`MAX_SEEDS`] (`level 49: levels go up to
/// 48`), for a number of any size (digits past u64 too).
fn beyond_the_game(n: impl fmt::Display) -> Error {
    Error::Invalid(format!("level {n}: levels go up to {MAX_SEEDS}"))
}

/// A level given as text, as a pit count is: decimal digits, with spaces
/// around them and a `+` before them allowed (`+2`, as the ranges of
/// levels and the counts of a board take one); then [`game_level`],
/// however many digits.
pub fn parse_level(text: &str) -> Result<usize> {
    let text = text.trim();
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty() {
        return Err(Error::Invalid(format!("give a level 0..={MAX_SEEDS}")));
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::Invalid(format!(
            "level {text}: give 0..={MAX_SEEDS}"
        )));
    }
    // Digits past u64 are a level past the game all the same.
    digits
        .parse()
        .map_or_else(|_| Err(beyond_the_game(digits)), game_level)
}

/// `levels` collected, each checked to be a level of the game
/// ([`game_level`]) as it comes, so that a huge range stops at its first
/// level too many.
pub fn game_levels(levels: impl IntoIterator<Item = usize>) -> Result<Vec<usize>> {
    levels.into_iter().map(|n| game_level(n as u64)).collect()
}

/// Twelve pits; `0..6` belong to the player to move, from that player's left,
/// counter-clockwise, and `6..12` to the opponent. Captured seeds have left the
/// board, so the board alone is the position.
///
/// A board holds at most [`MAX_SEEDS`] seeds: it is made by one of the
/// checked constructors ([`Board::new`], [`Board::parse`],
/// [`Board::from_counts`]), or by the library (a move's child, a level's
/// board at an index), so that every function taking one can rely on it.
/// `Board::default()` is [`Board::EMPTY`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, serde::Serialize)]
pub struct Board(pub(crate) [u8; PITS]);

impl Board {
    /// The board with no seeds (level 0).
    pub const EMPTY: Board = Board([0; PITS]);

    /// The board with these pit counts, or [`Error::Invalid`] when they
    /// add up to more than [`MAX_SEEDS`], with [`Board::parse`]'s message.
    ///
    /// ```
    /// use mancaladb::oware::Board;
    /// let b = Board::new([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
    /// assert_eq!((b.seeds(), b.pits()[6]), (16, 4));
    /// assert!(Board::new([5; 12]).is_err());
    /// ```
    pub fn new(pits: [u8; PITS]) -> Result<Board> {
        Board::from_counts(&pits.map(i64::from))
    }

    /// The pit counts, pit 0 first.
    #[inline]
    pub fn pits(&self) -> [u8; PITS] {
        self.0
    }

    /// Seeds on the board: the level this position belongs to.
    pub fn seeds(&self) -> usize {
        self.0.iter().map(|&v| usize::from(v)).sum()
    }

    /// Seeds of the player to move.
    pub fn own_seeds(&self) -> usize {
        self.0[..6].iter().map(|&v| usize::from(v)).sum()
    }

    /// The same board seen by the other player (their pits first).
    #[inline]
    pub fn swapped(&self) -> Board {
        Board(std::array::from_fn(|k| self.0[(k + 6) % PITS]))
    }

    /// Whether the board lies in the stored domain: at least one empty pit on
    /// the opponent's side. Every child of a move does (the pit just sown from).
    #[inline]
    #[allow(clippy::manual_contains)]
    pub fn in_domain(&self) -> bool {
        // `iter().any` rather than `contains`, which calls memchr for bytes.
        self.0[6..].iter().any(|&v| v == 0)
    }

    /// Parses twelve pit counts, given as separate words or as one string
    /// separated by commas or spaces.
    ///
    /// ```
    /// use mancaladb::oware::Board;
    /// let b = Board::parse(&["1,1,1,1,1,2,4,2,3,0,0,0"]).unwrap();
    /// assert_eq!(b.seeds(), 16);
    /// assert!(Board::parse(&["1", "2"]).is_err());
    /// ```
    pub fn parse<S: AsRef<str>>(words: &[S]) -> Result<Board> {
        crate::pits::parse(words, "an Oware board", GAME).map(Board)
    }

    /// Twelve pit counts given as numbers, with the checks and messages of
    /// [`Board::parse`].
    ///
    /// ```
    /// use mancaladb::oware::Board;
    /// let b = Board::from_counts(&[1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
    /// assert_eq!(b.seeds(), 16);
    /// let e = Board::from_counts(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1]).unwrap_err();
    /// assert_eq!(e.to_string(), "an Oware board: pit count -1 is negative");
    /// ```
    pub fn from_counts(counts: &[i64]) -> Result<Board> {
        crate::pits::from_counts(counts, "an Oware board", GAME).map(Board)
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels run from 0 to 48, and one past them is named with its
    /// number, however large.
    #[test]
    fn levels_run_from_0_to_48() {
        assert_eq!(game_level(0).unwrap(), 0);
        assert_eq!(game_level(48).unwrap(), 48);
        for (n, text) in [(49, "49"), (u64::MAX, "18446744073709551615")] {
            assert_eq!(
                game_level(n).unwrap_err().to_string(),
                format!("level {text}: levels go up to 48")
            );
        }
        assert_eq!(game_levels([0, 12, 48]).unwrap(), [0, 12, 48]);
        let past = game_levels([47, 48, 49, 50]).unwrap_err();
        assert_eq!(past.to_string(), "level 49: levels go up to 48");
    }

    /// A level as text: digits, with spaces and a `+` allowed; anything
    /// else is refused with what to give.
    #[test]
    fn a_level_as_text_is_digits() {
        assert_eq!(parse_level(" +36 ").unwrap(), 36);
        assert_eq!(parse_level("048").unwrap(), 48);
        let refused = |text: &str| parse_level(text).unwrap_err().to_string();
        assert_eq!(refused("49"), "level 49: levels go up to 48");
        assert_eq!(
            refused("99999999999999999999999"),
            "level 99999999999999999999999: levels go up to 48"
        );
        assert_eq!(refused(" "), "give a level 0..=48");
        assert_eq!(refused("+"), "give a level 0..=48");
        assert_eq!(refused("3a"), "level 3a: give 0..=48");
        assert_eq!(refused("-1"), "level -1: give 0..=48");
    }

    /// A board's pits, its seeds and the mover's, the board turned round,
    /// the stored domain and the board as text.
    #[test]
    fn a_board_tells_its_pits_and_seeds() {
        let b = Board::new([1, 0, 2, 0, 0, 3, 4, 0, 5, 6, 7, 1]).unwrap();
        assert_eq!(b.pits(), [1, 0, 2, 0, 0, 3, 4, 0, 5, 6, 7, 1]);
        assert_eq!(Board::parse(&["1,0,2,0,0,3", "4 0 5 6 7 1"]).unwrap(), b);
        assert_eq!((b.seeds(), b.own_seeds()), (29, 6));
        let turned = b.swapped();
        assert_eq!(turned.pits(), [4, 0, 5, 6, 7, 1, 1, 0, 2, 0, 0, 3]);
        assert_eq!((turned.seeds(), turned.own_seeds()), (29, 23));
        assert_eq!(turned.swapped(), b);
        assert!(b.in_domain());
        assert!(
            !Board::new([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
                .unwrap()
                .in_domain()
        );
        assert_eq!(b.to_string(), "1 0 2 0 0 3 4 0 5 6 7 1");
        assert_eq!(Board::EMPTY.to_string(), "0 0 0 0 0 0 0 0 0 0 0 0");
    }
}
