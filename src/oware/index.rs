//! Position indexing: the published Romein & Bal / VU numbering.
//!
//! A level holds the positions with `n` seeds that have at least one empty
//! opponent pit, `C(n+11, 11) - C(n+5, 11)` of them, ranked
//! lexicographically by `(x11, x10, ..., x0)`, smallest first. The published
//! `scores.n` files store one byte per position in this order.

use std::ops::Range;

use super::board::{Board, MAX_SEEDS, PITS};
use crate::compose::Ranker;
use crate::error::{Error, Result};

/// Ranks and unranks Oware positions of up to `max_seeds` seeds.
///
/// ```
/// use mancaladb::oware::{Board, Encoder};
/// let e = Encoder::new(16);
/// let b = Board::new([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])?;
/// assert_eq!(e.index_of(&b)?, 588_953);
/// assert_eq!(e.board_at(16, 588_953)?, b);
/// assert_eq!(e.level_size(16), 12_685_179);
/// # Ok::<(), mancaladb::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Encoder {
    ranker: Ranker,
    /// One side's six pits, unconstrained: ranks the mover's half of a
    /// board within its block (see [`Encoder::mover_tiles`]).
    half: Ranker,
}

impl Encoder {
    /// An encoder for levels `0..=max_seeds` (at most 48). Its tables grow as
    /// `max_seeds²`, so solvers make one sized for the level at hand.
    ///
    /// # Panics
    ///
    /// If `max_seeds` is more than 48.
    pub fn new(max_seeds: usize) -> Encoder {
        assert!(max_seeds <= MAX_SEEDS);
        Encoder {
            ranker: Ranker::new(PITS, max_seeds, Some(6)),
            half: Ranker::new(6, max_seeds, None),
        }
    }

    /// Positions in level `seeds`, as the free function [`level_size`]
    /// counts them (from this encoder's tables up to its `max_seeds`).
    pub fn level_size(&self, seeds: usize) -> u64 {
        match seeds <= self.ranker.max_seeds() {
            true => self.ranker.count(seeds),
            false => level_size(seeds),
        }
    }

    /// Index of `board`, which holds `seeds` seeds, within its level,
    /// unchecked, for the solver's loops: the board must be in the domain
    /// (not every opponent pit filled, at most `max_seeds` seeds), or the
    /// index is another board's or this panics. [`Encoder::index_of`]
    /// checks a board from outside.
    #[inline]
    pub(crate) fn rank_in(&self, seeds: usize, board: &Board) -> u64 {
        self.ranker.rank_with_sum(&board.0, seeds)
    }

    /// The level and index of `board`, or [`Error::Invalid`] when it is not
    /// stored (see [`Encoder::index_of`]); what probes call for every
    /// board. Whether it lies in the domain comes out of the ranking itself:
    /// a test of the pits before it cost random probes of a raw level half
    /// their speed (BENCHMARKS, "Fourteenth session").
    #[inline]
    pub fn stored_index(&self, board: &Board) -> Result<(usize, u64)> {
        let seeds = board.seeds();
        if seeds > self.ranker.max_seeds() {
            return Err(self.not_stored(board));
        }
        match self.ranker.rank_if_in_domain(&board.0, seeds) {
            Some(index) => Ok((seeds, index)),
            None => Err(self.not_stored(board)),
        }
    }

    /// The board at `index` of level `seeds`, unchecked, for the solver's
    /// loops: `seeds` at most the encoder's `max_seeds`, `index` below
    /// [`Encoder::level_size`], or this panics. [`Encoder::board_at`]
    /// checks an index from outside.
    pub(crate) fn unrank(&self, seeds: usize, index: u64) -> Board {
        let mut b = Board::EMPTY;
        self.ranker.unrank(seeds, index, &mut b.0);
        b
    }

    /// The index of `board` within its level: [`Error::Invalid`] when it
    /// is not in the stored domain (no empty opponent pit) or holds more
    /// seeds than this encoder's levels.
    ///
    /// ```
    /// use mancaladb::oware::{Board, Encoder};
    /// let e = Encoder::new(48);
    /// assert_eq!(e.index_of(&Board::new([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])?)?, 588_953);
    /// assert!(e.index_of(&Board::new([1; 12])?).is_err());
    /// # Ok::<(), mancaladb::Error>(())
    /// ```
    pub fn index_of(&self, board: &Board) -> Result<u64> {
        self.stored_index(board).map(|(_, index)| index)
    }

    /// Why `board` has no index (more seeds than the levels, or not in the
    /// stored domain), out of line: it is never on a probe's path.
    #[cold]
    #[inline(never)]
    fn not_stored(&self, board: &Board) -> Error {
        let seeds = board.seeds();
        match seeds > self.ranker.max_seeds() {
            true => Error::Invalid(format!(
                "{board} holds {seeds} seeds; levels go up to {}",
                self.ranker.max_seeds()
            )),
            false => Error::Invalid(format!(
                "{board} is not stored: a level holds the positions with an empty pit among 6..11"
            )),
        }
    }

    /// The board at `index` of level `seeds`: [`Error::Invalid`] when the
    /// level is beyond this encoder or `index` beyond the level.
    ///
    /// ```
    /// use mancaladb::oware::{Board, Encoder};
    /// let e = Encoder::new(48);
    /// assert_eq!(e.board_at(2, 0)?, Board::new([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])?);
    /// assert!(e.board_at(2, 78).is_err());
    /// # Ok::<(), mancaladb::Error>(())
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
    pub fn check_indices(&self, seeds: usize, start: u64, end: u64) -> Result<()> {
        let size = self.checked_size(seeds)?;
        // A start beyond the level first: with the end left to its default
        // (the level's size), "the start is past the end" would blame an
        // end not given.
        if start > size {
            return Err(Error::Invalid(format!(
                "start {start} outside level {seeds}, which has {size} positions (0..{size})"
            )));
        }
        if start > end {
            return Err(Error::Invalid(format!(
                "indices {start}..{end}: the start is past the end"
            )));
        }
        if end > size {
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
    pub(crate) fn advance(&self, board: &mut Board) -> bool {
        self.ranker.advance(&mut board.0)
    }

    /// A cursor over level `seeds`, for visiting nearby indices.
    pub(crate) fn cursor(&self, seeds: usize) -> Cursor<'_> {
        Cursor {
            enc: self,
            trail: self.ranker.trail(seeds),
            board: Board::EMPTY,
        }
    }

    /// The positions `indices` of level `seeds` as `(index, board)`, in
    /// index order: [`Error::Invalid`] unless they are indices of the level
    /// ([`Encoder::check_indices`]). Only the first is unranked; each next
    /// board is a step from the last.
    ///
    /// ```
    /// use mancaladb::oware::{Encoder, level_size};
    /// let e = Encoder::new(5);
    /// let last = level_size(5) - 1;
    /// let boards: Vec<_> = e.boards(5, last - 1..last + 1)?.collect();
    /// assert_eq!(boards[1], (last, e.board_at(5, last)?));
    /// assert!(e.boards(5, 0..last + 2).is_err());
    /// # Ok::<(), mancaladb::Error>(())
    /// ```
    pub fn boards(&self, seeds: usize, indices: Range<u64>) -> Result<Boards<'_>> {
        self.check_indices(seeds, indices.start, indices.end)?;
        Ok(self.walk(seeds, indices))
    }

    /// [`Encoder::boards`] of a range known to be the level's, for the
    /// solver's loops.
    fn walk(&self, seeds: usize, indices: Range<u64>) -> Boards<'_> {
        let next = match indices.is_empty() {
            true => Board::EMPTY,
            false => self.unrank(seeds, indices.start),
        };
        Boards {
            enc: self,
            next,
            indices,
        }
    }

    /// Calls `f(index, board)` for the positions `start..end` of level
    /// `seeds` ([`Encoder::boards`], unchecked).
    #[inline]
    pub(crate) fn for_range(
        &self,
        seeds: usize,
        start: u64,
        end: u64,
        mut f: impl FnMut(u64, &Board),
    ) {
        self.walk(seeds, start..end).for_each(|(i, b)| f(i, &b));
    }
}

/// The boards of a range of a level's indices, in index order:
/// [`Encoder::boards`].
#[derive(Clone, Debug)]
#[must_use = "an iterator walks nothing until it is used"]
pub struct Boards<'a> {
    enc: &'a Encoder,
    /// The board at `indices.start`, when the range is not empty.
    next: Board,
    indices: Range<u64>,
}

impl Iterator for Boards<'_> {
    type Item = (u64, Board);

    #[inline]
    fn next(&mut self) -> Option<(u64, Board)> {
        let i = self.indices.next()?;
        let board = self.next;
        // The level's last board ends the walk (only an unchecked range
        // of the solver's could go past it).
        if !self.indices.is_empty() && !self.enc.advance(&mut self.next) {
            self.indices.start = self.indices.end;
        }
        Some((i, board))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }

    /// The walk as one loop (`for_each`, `sum`, ... go through it): the
    /// solver's walks take a third less time per board than through
    /// `next`, which must keep the walk's place between calls (BENCHMARKS,
    /// "Thirty-eighth session").
    #[inline]
    fn fold<B, F: FnMut(B, (u64, Board)) -> B>(self, init: B, mut f: F) -> B {
        let Boards {
            enc,
            mut next,
            indices,
        } = self;
        let mut acc = init;
        let mut i = indices.start;
        while i < indices.end {
            acc = f(acc, (i, next));
            i += 1;
            if i < indices.end && !enc.advance(&mut next) {
                break;
            }
        }
        acc
    }
}

impl std::iter::FusedIterator for Boards<'_> {}

/// Positions of a [`Tile`] that share one opponent half: at most this many.
pub(crate) const TILE_WIDTH: usize = 64;

/// Most boards in one of [`Encoder::tile_groups`]' groups of more than one
/// tile: a few milliseconds of a walk, so that a level has hundreds of
/// units per thread from level 18 on.
pub(crate) const TILE_GROUP: u64 = 1 << 16;

/// The positions of a level whose mover's half (pits `0..6`) holds `mover`
/// seeds and ranks `first..first + width` among the six-pit boards of that
/// many seeds, under every opponent half: see [`Encoder::mover_tiles`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tile {
    /// Seeds on the mover's side.
    pub mover: u8,
    /// Rank of the first mover half among those of `mover` seeds.
    pub first: u64,
    /// Mover halves in the tile (`1..=TILE_WIDTH`).
    pub width: u8,
}

impl Encoder {
    /// The level cut into [`Tile`]s, for walks in *mover-major* order.
    ///
    /// A board's rank is that of its opponent half (pits `11..6`, the most
    /// significant) plus that of its mover half among the six-pit boards of
    /// the same seed count: the positions sharing an opponent half form one
    /// block of consecutive indices, ordered by mover half. Every child of
    /// a capture sown from pit `p` has, as its own most significant half,
    /// the mover's half after sowing, which depends on the parent's mover
    /// half and `p` alone; so the children of the parents that share a
    /// mover half lie in at most six blocks of each lower level (one per
    /// pit; which level depends on the opponent half, through the seeds
    /// captured). A walk that holds the mover half still and lets the opponent
    /// half run ([`Encoder::walk_tile`]) reads the lower levels block by
    /// block, where index order reads them everywhere at once. A tile holds
    /// up to [`TILE_WIDTH`] consecutive mover halves, so that its positions
    /// in one block are consecutive bytes of a level's state.
    pub(crate) fn mover_tiles(&self, seeds: usize) -> Vec<Tile> {
        let mut tiles = Vec::new();
        for mover in 0..=seeds {
            let halves = self.half.count(mover);
            for first in (0..halves).step_by(TILE_WIDTH) {
                tiles.push(Tile {
                    mover: mover as u8,
                    first,
                    width: (halves - first).min(TILE_WIDTH as u64) as u8,
                });
            }
        }
        tiles
    }

    /// `tiles` (level `seeds`'s [`Encoder::mover_tiles`]) cut into `parts`
    /// runs of about equal numbers of boards ([`Encoder::tile_size`]; the
    /// boards outside the level's domain count too): the first tile of each
    /// run, then `tiles.len()`, so `parts + 1` tile indices. Walks cut into
    /// parts (to be checkpointed between them) walk run `k` as
    /// `tiles[at[k]..at[k + 1]]`. A checkpoint says only how many parts
    /// were done, so the runs must be the same for every reader of it: a
    /// change to the tiles or to this cut is a new version of the builder's
    /// forward checkpoints and of check 3's.
    pub(crate) fn tile_parts(&self, seeds: usize, tiles: &[Tile], parts: u32) -> Vec<usize> {
        let mut ends = Vec::with_capacity(tiles.len());
        let mut boards = 0u64;
        for tile in tiles {
            boards += self.tile_size(seeds, tile);
            ends.push(boards);
        }
        (0..=parts)
            .map(|k| {
                let at = (u128::from(boards) * u128::from(k) / u128::from(parts.max(1))) as u64;
                ends.partition_point(|&end| end <= at)
            })
            .collect()
    }

    /// `tiles` (a run of level `seeds`'s [`Encoder::mover_tiles`]) cut into
    /// consecutive groups of at most [`TILE_GROUP`] boards each, or of one
    /// tile larger than that: the units of work that parallel walks hand
    /// to their threads. A fixed number of tiles per unit would not do:
    /// tiles span from one board to millions (the few mover halves of
    /// small seed counts lie under every opponent half), so that the last
    /// units of a level 20 walk held a fifth of its boards, walked by one
    /// thread while the other waited (BENCHMARKS, "Fifty-eighth and
    /// fifty-ninth sessions").
    pub(crate) fn tile_groups<'t>(&self, seeds: usize, tiles: &'t [Tile]) -> Vec<&'t [Tile]> {
        let mut groups = Vec::new();
        let (mut first, mut boards) = (0, 0);
        for (k, tile) in tiles.iter().enumerate() {
            let size = self.tile_size(seeds, tile);
            if k > first && boards + size > TILE_GROUP {
                groups.push(&tiles[first..k]);
                (first, boards) = (k, 0);
            }
            boards += size;
        }
        if first < tiles.len() {
            groups.push(&tiles[first..]);
        }
        groups
    }

    /// How many boards `tile` (of level `seeds`) spans: its positions, and
    /// the boards outside the level's domain that [`Encoder::walk_tile`]
    /// skips.
    pub(crate) fn tile_size(&self, seeds: usize, tile: &Tile) -> u64 {
        u64::from(tile.width) * self.half.count(seeds - usize::from(tile.mover))
    }

    /// Calls `f(index, board)` for the positions of `tile` (of level
    /// `seeds`) whose index lies in `range`: opponent halves in index
    /// order, and for each the tile's mover halves, at consecutive indices.
    pub(crate) fn walk_tile(
        &self,
        seeds: usize,
        tile: &Tile,
        range: &Range<u64>,
        mut f: impl FnMut(u64, &Board),
    ) {
        let m = usize::from(tile.mover);
        let width = u64::from(tile.width);
        let mut movers = [[0u8; 6]; TILE_WIDTH];
        self.half.unrank(m, tile.first, &mut movers[0]);
        for k in 1..usize::from(tile.width) {
            movers[k] = movers[k - 1];
            let more = self.half.advance(&mut movers[k]);
            debug_assert!(more, "a tile lies within its mover halves");
        }
        // The first board of each block: every mover seed in pit 0 (mover
        // rank 0), so its rank is the block's first index.
        let mut head = Board::EMPTY;
        head.0[0] = m as u8;
        let mut opponent = [0u8; 6];
        opponent[0] = (seeds - m) as u8;
        loop {
            head.0[6..].copy_from_slice(&opponent);
            if head.in_domain() {
                let first = self.rank_in(seeds, &head) + tile.first;
                if first < range.end && first + width > range.start {
                    let mut board = head;
                    for (k, mover) in movers[..usize::from(tile.width)].iter().enumerate() {
                        let i = first + k as u64;
                        if range.contains(&i) {
                            board.0[..6].copy_from_slice(mover);
                            f(i, &board);
                        }
                    }
                }
            }
            if !self.half.advance(&mut opponent) {
                return;
            }
        }
    }
}

/// Positions in level `seeds`: `C(n+11,11) - C(n+5,11)`; `u64::MAX` for a
/// count of seeds far past the game's whose count does not fit (it used
/// to wrap to a smaller number).
pub fn level_size(seeds: usize) -> u64 {
    let n = seeds as u64;
    let all = crate::compose::binomial(n.saturating_add(11), 11);
    if all == u128::MAX {
        return u64::MAX;
    }
    u64::try_from(all - crate::compose::binomial(n + 5, 11)).unwrap_or(u64::MAX)
}

/// Unranks positions of one level one after another, redoing for each only
/// the pits in which it differs from the last (see
/// [`Ranker::unrank_near`](crate::compose::Ranker::unrank_near)): cheap
/// when they are close.
pub(crate) struct Cursor<'a> {
    enc: &'a Encoder,
    trail: crate::compose::Trail,
    board: Board,
}

impl Cursor<'_> {
    /// The board at `index`, which must be below the level's size
    /// (unchecked, as [`Encoder::unrank`]).
    #[inline]
    pub(crate) fn seek(&mut self, index: u64) -> Board {
        self.enc
            .ranker
            .unrank_near(index, &mut self.board.0, &mut self.trail);
        self.board
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::{Rules, moves};
    use std::collections::HashMap;

    /// The published sizes at the game's levels; the largest count far past
    /// them, not a wrapped smaller one.
    #[test]
    fn level_sizes_and_counts_past_the_game() {
        assert_eq!(level_size(16), 12_685_179);
        assert_eq!(level_size(48), 203_648_015_935);
        for seeds in [1_000, 1_000_000, usize::MAX] {
            assert_eq!(level_size(seeds), u64::MAX, "{seeds}");
        }
    }

    /// Walking a level with `advance` visits every domain board once, in
    /// rank order, and `unrank` inverts `rank_in` at every index; a cursor
    /// seeking any index, near the last or not, finds its board.
    #[test]
    fn whole_levels_round_trip() {
        for n in 0..=11 {
            let e = Encoder::new(n);
            let mut b = e.unrank(n, 0);
            let mut cursor = e.cursor(n);
            let mut count = 0u64;
            loop {
                assert!(b.in_domain() && b.seeds() == n);
                assert_eq!(e.rank_in(n, &b), count);
                assert_eq!(e.unrank(n, count), b);
                assert_eq!(cursor.seek(count), b);
                count += 1;
                if !e.advance(&mut b) {
                    break;
                }
            }
            assert_eq!(count, level_size(n), "level {n}");
            for i in (0..count).rev().step_by(97) {
                assert_eq!(cursor.seek(i), e.unrank(n, i));
            }
        }
    }

    /// An unchecked walk past the level's end stops at its last board,
    /// through `fold` and through `next` alike, as the solver's loop did.
    #[test]
    fn an_unchecked_walk_ends_with_the_level() {
        let e = Encoder::new(6);
        let size = e.level_size(6);
        let mut seen = Vec::new();
        e.for_range(6, size - 2, size + 5, |i, _| seen.push(i));
        assert_eq!(seen, [size - 2, size - 1]);
        let stepped: Vec<u64> = e.walk(6, size - 2..size + 5).map(|(i, _)| i).collect();
        assert_eq!(stepped, seen);
    }

    /// An empty range at the very end of a level is a range of its
    /// indices, with nothing to walk; one that starts past the end is not,
    /// and is refused for its start.
    #[test]
    fn an_empty_range_at_the_end_of_a_level_is_its_own() {
        let e = Encoder::new(5);
        let size = e.level_size(5);
        assert_eq!(size, 4368);
        assert!(e.check_indices(5, size, size).is_ok());
        assert_eq!(e.boards(5, size..size).unwrap().count(), 0);
        assert_eq!(
            e.check_indices(5, size + 1, size + 1)
                .unwrap_err()
                .to_string(),
            "start 4369 outside level 5, which has 4368 positions (0..4368)"
        );
    }

    /// On a large level, sampled indices round-trip and `advance` steps to
    /// the next index.
    #[test]
    fn sampled_large_level_round_trip() {
        let n = 30;
        let e = Encoder::new(n);
        let size = e.level_size(n);
        let mut i = 0u64;
        while i < size {
            let mut b = e.unrank(n, i);
            assert_eq!(e.rank_in(n, &b), i);
            if e.advance(&mut b) {
                assert_eq!(e.rank_in(n, &b), i + 1);
            }
            i += 9_999_991;
        }
    }

    /// Mover-major walks visit every position of a range exactly once, with
    /// its own board.
    #[test]
    fn tiles_cover_each_level_once() {
        let enc = Encoder::new(14);
        for seeds in [0, 1, 2, 7, 14] {
            let size = enc.level_size(seeds);
            for range in [0..size, size / 3..size / 2 + 1, 0..0] {
                let mut seen = vec![0u8; size as usize];
                for tile in enc.mover_tiles(seeds) {
                    enc.walk_tile(seeds, &tile, &range, |i, b| {
                        assert_eq!(enc.rank_in(seeds, b), i, "{b}");
                        seen[i as usize] += 1;
                    });
                }
                for (i, &n) in seen.iter().enumerate() {
                    let want = u8::from(range.contains(&(i as u64)));
                    assert_eq!(n, want, "level {seeds} index {i}");
                }
            }
        }
    }

    /// Parts of tiles run from the first tile to the last in order, each
    /// holding its share of the boards give or take one tile.
    #[test]
    fn tile_parts_cut_the_tiles_into_even_runs() {
        let enc = Encoder::new(14);
        for seeds in [0, 3, 14] {
            let tiles = enc.mover_tiles(seeds);
            let sizes: Vec<u64> = tiles.iter().map(|t| enc.tile_size(seeds, t)).collect();
            let (boards, largest) = (sizes.iter().sum::<u64>(), *sizes.iter().max().unwrap());
            for parts in [1, 2, 7, 1000] {
                let at = enc.tile_parts(seeds, &tiles, parts);
                assert_eq!(at.len(), parts as usize + 1);
                assert_eq!((at[0], at[parts as usize]), (0, tiles.len()));
                for run in at.windows(2) {
                    assert!(run[0] <= run[1], "level {seeds}, {parts} parts: {at:?}");
                    let held: u64 = sizes[run[0]..run[1]].iter().sum();
                    assert!(held <= boards / u64::from(parts) + largest, "level {seeds}");
                }
            }
        }
    }

    /// Groups of tiles hold every tile once, in order, each group at most
    /// `TILE_GROUP` boards unless it is one tile; and no two neighbours
    /// would fit in one group (the cut is greedy).
    #[test]
    fn tile_groups_cut_the_tiles_into_bounded_runs() {
        let enc = Encoder::new(22);
        for seeds in [0, 5, 16, 22] {
            let tiles = enc.mover_tiles(seeds);
            let boards = |g: &[Tile]| g.iter().map(|t| enc.tile_size(seeds, t)).sum::<u64>();
            for from in [0, tiles.len() / 3] {
                let run = &tiles[from..];
                let groups = enc.tile_groups(seeds, run);
                assert_eq!(groups.concat(), run, "level {seeds}");
                for g in &groups {
                    assert!(g.len() == 1 || boards(g) <= TILE_GROUP, "level {seeds}");
                }
                for pair in groups.windows(2) {
                    let next = enc.tile_size(seeds, &pair[1][0]);
                    assert!(boards(pair[0]) + next > TILE_GROUP, "level {seeds}");
                }
            }
            // Large levels make many groups, and some hold more than one tile.
            if seeds == 22 {
                let groups = enc.tile_groups(seeds, &tiles);
                assert!(groups.len() > 1000, "{} groups", groups.len());
                assert!(groups.iter().any(|g| g.len() > 16), "level 22");
            }
        }
    }

    /// A tile spans its mover halves under every opponent half: its size is
    /// the positions it walks plus the boards it skips, those with every
    /// opponent pit filled (`C(k - 1, 5)` halves of `k` seeds); over a
    /// level, the sizes add up to every board of that many seeds, stored or
    /// not, `C(n + 11, 11)`.
    #[test]
    fn tile_sizes_count_the_boards_the_tiles_span() {
        use crate::compose::binomial;
        let enc = Encoder::new(14);
        for seeds in [0, 1, 6, 7, 14] {
            let mut all = 0u64;
            for tile in enc.mover_tiles(seeds) {
                let mut walked = 0u64;
                enc.walk_tile(seeds, &tile, &(0..u64::MAX), |_, _| walked += 1);
                let k = (seeds - usize::from(tile.mover)) as u64;
                let full = match k {
                    0..6 => 0,
                    _ => binomial(k - 1, 5) as u64,
                };
                let size = enc.tile_size(seeds, &tile);
                assert_eq!(size, walked + u64::from(tile.width) * full, "{tile:?}");
                all += size;
            }
            assert_eq!(u128::from(all), binomial(seeds as u64 + 11, 11), "{seeds}");
        }
    }

    /// The locality the walk is for: the children of the captures sown
    /// from one pit by the parents that share a mover half all share their
    /// own most significant half, so they lie in one block.
    #[test]
    fn captures_of_one_mover_half_and_pit_land_in_one_block() {
        let (enc, seeds) = (Encoder::new(12), 12);
        let mut tops: HashMap<([u8; 6], u8), [u8; 6]> = HashMap::new();
        let mut captures = 0;
        for tile in enc.mover_tiles(seeds) {
            enc.walk_tile(seeds, &tile, &(0..u64::MAX), |_, b| {
                for m in moves(Rules::Awari, b).as_slice() {
                    if m.captured > 0 && m.child != Board::EMPTY {
                        captures += 1;
                        let mover: [u8; 6] = b.0[..6].try_into().unwrap();
                        let top: [u8; 6] = m.child.0[6..].try_into().unwrap();
                        assert_eq!(*tops.entry((mover, m.pit)).or_insert(top), top, "{b}");
                    }
                }
            });
        }
        assert!(captures > 100_000, "{captures} captures");
    }
}
