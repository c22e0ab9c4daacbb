//! Position indexing: the published Romein & Bal / VU numbering.
//!
//! A level holds the positions with `n` seeds that have at least one empty
//! opponent pit, `C(n+11, 11) - C(n+5, 11)` of them, ranked
//! lexicographically by `(x11, x10, ..., x0)`, smallest first. The published
//! `scores.n` files store one byte per position in this order.

use super::board::{Board, MAX_SEEDS, PITS};
use crate::compose::Ranker;
use crate::error::{Error, Result};

/// Ranks and unranks Oware positions of up to `max_seeds` seeds.
///
/// ```
/// use mancaladb::oware::{Board, Encoder};
/// let e = Encoder::new(16);
/// let b = Board([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]);
/// assert_eq!(e.rank(&b), 588_953);
/// assert_eq!(e.unrank(16, 588_953), b);
/// assert_eq!(e.level_size(16), 12_685_179);
/// ```
#[derive(Clone, Debug)]
pub struct Encoder {
    ranker: Ranker,
}

impl Encoder {
    /// An encoder for levels `0..=max_seeds` (at most 48). Its tables grow as
    /// `max_seeds²`, so solvers make one sized for the level at hand.
    pub fn new(max_seeds: usize) -> Encoder {
        assert!(max_seeds <= MAX_SEEDS);
        Encoder {
            ranker: Ranker::new(PITS, max_seeds, Some(6)),
        }
    }

    /// Positions in level `seeds`.
    pub fn level_size(&self, seeds: usize) -> u64 {
        self.ranker.count(seeds)
    }

    /// Index of `board` within its level. The board must be in the domain.
    #[inline]
    pub fn rank(&self, board: &Board) -> u64 {
        self.ranker.rank(&board.0)
    }

    /// [`Encoder::rank`] of a board known to hold `seeds` seeds.
    #[inline]
    pub fn rank_in(&self, seeds: usize, board: &Board) -> u64 {
        self.ranker.rank_with_sum(&board.0, seeds)
    }

    /// The board at `index` of level `seeds`.
    pub fn unrank(&self, seeds: usize, index: u64) -> Board {
        let mut b = Board::EMPTY;
        self.ranker.unrank(seeds, index, &mut b.0);
        b
    }

    /// [`Encoder::rank`] of a board from outside: [`Error::Invalid`] when
    /// it is not in the stored domain (no empty opponent pit) or holds more
    /// seeds than this encoder's levels.
    ///
    /// ```
    /// use mancaladb::oware::{Board, Encoder};
    /// let e = Encoder::new(48);
    /// assert_eq!(e.index_of(&Board([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])).unwrap(), 588_953);
    /// assert!(e.index_of(&Board([1; 12])).is_err());
    /// ```
    pub fn index_of(&self, board: &Board) -> Result<u64> {
        let seeds = board.seeds();
        if seeds > self.ranker.max_seeds() {
            return Err(Error::Invalid(format!(
                "{board} holds {seeds} seeds; levels go up to {}",
                self.ranker.max_seeds()
            )));
        }
        if !board.in_domain() {
            return Err(Error::Invalid(format!(
                "{board} is not stored: a level holds the positions with an empty pit among 6..11"
            )));
        }
        Ok(self.rank_in(seeds, board))
    }

    /// [`Encoder::unrank`] of a request from outside: [`Error::Invalid`]
    /// when the level is beyond this encoder or `index` beyond the level.
    ///
    /// ```
    /// use mancaladb::oware::{Board, Encoder};
    /// let e = Encoder::new(48);
    /// assert_eq!(e.board_at(2, 0).unwrap(), Board([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
    /// assert!(e.board_at(2, 78).is_err());
    /// ```
    pub fn board_at(&self, seeds: usize, index: u64) -> Result<Board> {
        let size = self.checked_size(seeds)?;
        if index >= size {
            return Err(Error::Invalid(format!(
                "index {index} outside level {seeds}, which has {size} positions (0..{size})"
            )));
        }
        Ok(self.unrank(seeds, index))
    }

    /// [`Error::Invalid`] unless `start..end` is a range of indices of
    /// level `seeds` (`start <= end <= level size`) and the level is within
    /// this encoder's.
    pub fn check_range(&self, seeds: usize, start: u64, end: u64) -> Result<()> {
        let size = self.checked_size(seeds)?;
        if start > end || end > size {
            return Err(Error::Invalid(format!(
                "indices {start}..{end} outside level {seeds}, which has {size} positions (0..{size})"
            )));
        }
        Ok(())
    }

    /// The size of level `seeds`, or [`Error::Invalid`] beyond this encoder.
    fn checked_size(&self, seeds: usize) -> Result<u64> {
        match seeds <= self.ranker.max_seeds() {
            true => Ok(self.level_size(seeds)),
            false => Err(Error::Invalid(format!(
                "level {seeds}: levels go up to {}",
                self.ranker.max_seeds()
            ))),
        }
    }

    /// Steps `board` to the next position of its level in index order;
    /// `false` after the last.
    #[inline]
    pub fn advance(&self, board: &mut Board) -> bool {
        self.ranker.advance(&mut board.0)
    }

    /// A cursor over level `seeds`, for visiting nearby indices.
    pub fn cursor(&self, seeds: usize) -> Cursor<'_> {
        Cursor {
            enc: self,
            trail: self.ranker.trail(seeds),
            board: Board::EMPTY,
        }
    }

    /// Calls `f(index, board)` for the positions `start..end` of level
    /// `seeds`, in order, unranking only the first.
    #[inline]
    pub fn for_range(&self, seeds: usize, start: u64, end: u64, mut f: impl FnMut(u64, &Board)) {
        if start >= end {
            return;
        }
        let mut b = self.unrank(seeds, start);
        let mut i = start;
        loop {
            f(i, &b);
            i += 1;
            if i == end || !self.advance(&mut b) {
                break;
            }
        }
    }
}

/// Positions in level `seeds`: `C(n+11,11) - C(n+5,11)`.
pub fn level_size(seeds: usize) -> u64 {
    let n = seeds as u64;
    (crate::compose::binomial(n + 11, 11) - crate::compose::binomial(n + 5, 11)) as u64
}

/// Unranks positions of one level one after another, redoing for each only
/// the pits in which it differs from the last (see
/// [`Ranker::unrank_near`](crate::compose::Ranker::unrank_near)): cheap
/// when they are close.
pub struct Cursor<'a> {
    enc: &'a Encoder,
    trail: crate::compose::Trail,
    board: Board,
}

impl Cursor<'_> {
    /// The board at `index`.
    #[inline]
    pub fn seek(&mut self, index: u64) -> Board {
        self.enc
            .ranker
            .unrank_near(index, &mut self.board.0, &mut self.trail);
        self.board
    }
}
