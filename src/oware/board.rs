//! An Oware board seen from the player to move.

use std::fmt;

use crate::error::Result;

/// Pits on an Oware board.
pub const PITS: usize = 12;
/// Seeds in a full game (4 per pit): the largest level.
pub const MAX_SEEDS: usize = 48;

/// Twelve pits; `0..6` belong to the player to move, from that player's left,
/// counter-clockwise, and `6..12` to the opponent. Captured seeds have left the
/// board, so the board alone is the position.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, serde::Serialize)]
pub struct Board(pub [u8; PITS]);

impl Board {
    /// The board with no seeds (level 0).
    pub const EMPTY: Board = Board([0; PITS]);

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
    pub fn in_domain(&self) -> bool {
        // Without a branch per pit (probes test every board, and where the
        // first empty pit lies is random): pits 6..11 as the low bytes of
        // a word whose two top bytes are not zero, and the exact test for
        // a zero byte.
        let p = &self.0;
        let x = u64::from_le_bytes([p[6], p[7], p[8], p[9], p[10], p[11], 0xFF, 0xFF]);
        x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080 != 0
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
        crate::pits::parse(words, "an Oware board", MAX_SEEDS).map(Board)
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
        crate::pits::from_counts(counts, "an Oware board", MAX_SEEDS).map(Board)
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
    use super::Board;

    #[test]
    fn in_domain_is_an_empty_pit_among_6_to_11() {
        // Every opponent side of counts 0..=3 and 47..=48 in each pit.
        let counts = [0u8, 1, 2, 3, 47, 48];
        for code in 0..counts.len().pow(6) {
            let mut b = Board([5; 12]);
            let mut c = code;
            for p in 6..12 {
                b.0[p] = counts[c % counts.len()];
                c /= counts.len();
            }
            assert_eq!(b.in_domain(), b.0[6..].contains(&0), "{b}");
        }
    }
}
