//! The values of the levels below the one being solved, as the solvers
//! read them.
//!
//! A level's captures lead into lower levels, read once per capture. Small
//! builds and tests hold those levels as byte slices. The largest builds
//! cannot: levels 0..34 are 33 GB as one byte per position, so the builder
//! reads some of them from their compressed tables through a block cache
//! (the `stored` module's `Lower`). Both answer through [`LowerLevels`]; the
//! forward pass reads them in mover-major order
//! (`Encoder::mover_tiles`) so that either kind of store
//! sees its blocks one after another.

use crate::error::{Error, Result};
use crate::oware::game_level;

/// Whether level `n` reads level `k` (`k < n`): every level but `n - 1`
/// (when `n > 1`). A capture takes at least two seeds, a move that ends
/// the game (every move starves the opponent) takes every seed and leads
/// to level 0, and a player without seeds loses the rest with no lookup,
/// so level `n - 1` is never reached from level `n`. (The published
/// database has no `scores.47` for that reason.) A build may leave it for
/// later, and stores of lower levels need not open it: they answer
/// [`unread`] if asked.
///
/// ```
/// use mancaladb::oware::reads_level;
/// assert!(reads_level(36, 34) && !reads_level(36, 35) && !reads_level(36, 36));
/// assert!(reads_level(36, 0) && reads_level(1, 0) && !reads_level(2, 1));
/// ```
pub fn reads_level(n: usize, k: usize) -> bool {
    k < n && (k == 0 || k + 1 < n)
}

/// Level `n` and every level it reads ([`reads_level`]), increasing: the
/// levels a value of level `n` rests on.
///
/// ```
/// use mancaladb::oware::levels_needed;
/// assert_eq!(levels_needed(36), [(0..=34).collect::<Vec<_>>(), vec![36]].concat());
/// assert_eq!(levels_needed(2), [0, 2]);
/// assert_eq!(levels_needed(1), [0, 1]);
/// ```
pub fn levels_needed(n: usize) -> Vec<usize> {
    (0..=n).filter(|&k| k == n || reads_level(n, k)).collect()
}

/// The error of a read of level `level`, which the level being solved
/// never reads ([`reads_level`]): a defect of the caller, reported rather
/// than answered.
pub fn unread(level: usize) -> Error {
    Error::Invalid(format!(
        "level {level} was read, but the level above it never reads it"
    ))
}

/// Levels `0..levels()` of one rule set, by index.
pub trait LowerLevels: Sync {
    /// What one worker keeps from its reads for its next ones: the blocks
    /// of tables a store of tables holds (`probe::Held`), so that a run of
    /// reads in a few blocks takes no lock; nothing (`()`) for levels in
    /// memory.
    type Reader;

    /// How many levels there are (`0..levels()`).
    fn levels(&self) -> usize;

    /// A reader for one worker's run of reads (a chunk of tiles, or one
    /// tile), to be used with this store only.
    fn reader(&self) -> Self::Reader;

    /// The value of position `index` of level `level`, read by `reader`.
    /// An error is a store that failed (a damaged block, a read error),
    /// never a wrong value.
    fn value(&self, reader: &mut Self::Reader, level: usize, index: u64) -> Result<i8>;

    /// Asks for the value ahead of a [`LowerLevels::value`] call, so that
    /// memory misses overlap; a hint only.
    #[inline]
    fn prefetch(&self, _level: usize, _index: u64) {}
}

/// Fails unless `seeds` is a level of the game and `lower` holds levels
/// `0..seeds`, the levels a solver of level `seeds` is given.
pub fn check_lower(seeds: usize, lower: &(impl LowerLevels + ?Sized)) -> Result<()> {
    game_level(seeds as u64)?;
    match lower.levels() {
        n if n == seeds => Ok(()),
        n => Err(Error::Invalid(format!(
            "level {seeds} is solved from levels 0..{seeds}, but {n} levels were given"
        ))),
    }
}

/// Levels held in memory (or mapped), one value per byte. A level too
/// short for a position asked, or a value outside `-level..=level`, is
/// [`Error::Invalid`]: levels made by the caller, not read from a file.
impl<S: AsRef<[i8]> + Sync> LowerLevels for [S] {
    type Reader = ();

    fn levels(&self) -> usize {
        self.len()
    }

    fn reader(&self) {}

    #[inline]
    fn value(&self, _: &mut (), level: usize, index: u64) -> Result<i8> {
        let value = self
            .get(level)
            .and_then(|values| values.as_ref().get(index as usize));
        match value {
            Some(&v) if usize::from(v.unsigned_abs()) <= level => Ok(v),
            Some(&v) => Err(Error::Invalid(format!(
                "level {level} holds value {v} at index {index}, outside -{level}..={level}"
            ))),
            None => Err(Error::Invalid(format!(
                "level {level} was given too few values: index {index} is not among them"
            ))),
        }
    }

    #[inline]
    fn prefetch(&self, level: usize, index: u64) {
        if let Some(v) = self
            .get(level)
            .and_then(|values| values.as_ref().get(index as usize))
        {
            crate::memory::prefetch(v);
        }
    }
}

/// As for a slice of levels.
impl<S: AsRef<[i8]> + Sync> LowerLevels for Vec<S> {
    type Reader = ();

    fn levels(&self) -> usize {
        self.len()
    }

    fn reader(&self) {}

    #[inline]
    fn value(&self, reader: &mut (), level: usize, index: u64) -> Result<i8> {
        self.as_slice().value(reader, level, index)
    }

    #[inline]
    fn prefetch(&self, level: usize, index: u64) {
        self.as_slice().prefetch(level, index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::{Encoder, Rules, levels_needed, moves};

    /// The levels a level reads, found by playing every move of every
    /// stored board of levels 0..=10 under both rule sets: the levels that
    /// its captures and its game-ending moves lead to are exactly those
    /// [`reads_level`] names, and [`levels_needed`] adds the level itself.
    #[test]
    fn the_levels_read_are_those_some_capture_reaches() {
        let enc = Encoder::new(10);
        for n in 0..=10 {
            let mut reached = vec![false; n + 1];
            for rules in [Rules::Awari, Rules::Abapa] {
                for (_, board) in enc.boards(n, 0..enc.level_size(n)).unwrap() {
                    for m in moves(rules, &board) {
                        if m.captured > 0 {
                            reached[m.child.seeds()] = true;
                        }
                    }
                }
            }
            let read: Vec<usize> = (0..=n).filter(|&k| reached[k]).collect();
            let named: Vec<usize> = (0..=n + 1).filter(|&k| reads_level(n, k)).collect();
            assert_eq!(read, named, "level {n}");
            let needed: Vec<usize> = read.iter().copied().chain([n]).collect();
            assert_eq!(levels_needed(n), needed, "level {n}");
        }
    }

    /// A solver of level `n` is given exactly levels `0..n`, of the game.
    #[test]
    fn a_solver_is_given_the_levels_below_it() {
        let levels: Vec<Vec<i8>> = vec![vec![0], vec![1; 12], vec![0; 78]];
        check_lower(3, &levels).unwrap();
        let message = |seeds, given: &[Vec<i8>]| check_lower(seeds, given).unwrap_err().to_string();
        assert_eq!(
            message(2, &levels),
            "level 2 is solved from levels 0..2, but 3 levels were given"
        );
        assert_eq!(
            message(4, &levels),
            "level 4 is solved from levels 0..4, but 3 levels were given"
        );
        assert_eq!(message(49, &levels), "level 49: levels go up to 48");
    }

    /// Levels in memory answer their values, and refuse a value outside
    /// the level's range or an index past their end, naming it.
    #[test]
    fn levels_in_memory_answer_their_values_and_refuse_the_impossible() {
        let levels: Vec<Vec<i8>> = vec![vec![0], vec![1, -1, 0, 2]];
        let read = |level, index| levels.value(&mut (), level, index);
        assert_eq!(read(0, 0).unwrap(), 0);
        assert_eq!(read(1, 0).unwrap(), 1);
        assert_eq!(read(1, 1).unwrap(), -1);
        assert_eq!(
            read(1, 3).unwrap_err().to_string(),
            "level 1 holds value 2 at index 3, outside -1..=1"
        );
        assert_eq!(
            read(1, 4).unwrap_err().to_string(),
            "level 1 was given too few values: index 4 is not among them"
        );
        assert!(read(2, 0).is_err());
    }
}
