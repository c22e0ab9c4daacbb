//! The lower levels a solver reads, and which of them keep a raw copy.
//!
//! Level `n`'s captures read levels `0..=n-2` (never `n - 1`:
//! [`reads_level`], so a build may leave that one for later). Each is
//! read from a mapped copy (`raw/<rules>/scores.N`, one byte per position)
//! when it has one, else from its compressed table through a
//! [`BlockCache`]: [`StoredLevels`], which a build opens as [`Lower`] and
//! `verify` through `Source::lower_levels` (which also maps VU files). Raw copies
//! cost disk (levels 0..34 are 33 GB of them; their tables are about half
//! that) and make a lookup one load; a block read costs a hash lookup and,
//! on a miss, one 64 KiB decompression. The forward pass reads the lower
//! levels in mover-major order (`Encoder::mover_tiles`), a
//! few blocks at a time, so misses are rare either way.
//!
//! **The raw cache.** Raw copies are kept within a budget of bytes
//! ([`raw_window`]): while level `n` is built, the copies of the largest
//! levels it reads, `n-2` downward, as many as fit. Those levels take most
//! lookups (most captures take two or three seeds). A copy outside the
//! window is removed at the next level; one inside it that is missing is
//! written from the table. So the copies take at most the budget plus the
//! level just built, and after a build, the largest levels within the
//! budget keep theirs (for the probes of `query` and `serve`). Without a
//! budget every copy is kept.

use std::borrow::Borrow;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use memmap2::Mmap;

use crate::db::{Db, map_raw, read_at_random};
use crate::error::{Error, Result};
use crate::files::remove_if_present;
use crate::memory::prefetch;
use crate::oware::lower::unread;
use crate::oware::{LowerLevels, Rules, level_size, reads_level};
use crate::probe::{BlockCache, Held, Level};
use crate::table;

/// Most blocks of tables one worker holds while it reads lower levels
/// ([`LowerLevels::reader`]): 64 MiB. A chunk of tiles of level 18 reads
/// about 100 blocks of its lower levels, one of level 34 about 1,600.
const HELD_BLOCKS: usize = 1024;

/// The raw-copy budget of `build` and `import` unless told otherwise:
/// 8 GiB, which keeps every raw copy of a build up to level 29 (levels
/// 0..29 are 7,064,203,120 bytes) and the largest levels' above.
pub const DEFAULT_RAW_CACHE: u64 = 8 << 30;

/// The levels whose raw copies pay while level `n` is built: `lo..n-1`,
/// the largest levels it reads (`n-2` downward) while their sizes add up
/// to at most `budget` bytes (all of `0..n-1` without a budget).
///
/// ```
/// use mancaladb::stored::raw_window;
/// assert_eq!(raw_window(20, None), 0..19);
/// // Level 18 is 33,245,212 bytes, level 17 20,768,748.
/// assert_eq!(raw_window(20, Some(40_000_000)), 18..19);
/// assert_eq!(raw_window(20, Some(60_000_000)), 17..19);
/// assert_eq!(raw_window(20, Some(0)), 19..19);
/// ```
pub fn raw_window(n: usize, budget: Option<u64>) -> Range<usize> {
    let end = n.saturating_sub(1);
    let Some(budget) = budget else {
        return 0..end;
    };
    let (mut lo, mut used) = (end, 0u64);
    while lo > 0 {
        match used.checked_add(level_size(lo - 1)) {
            Some(more) if more <= budget => (lo, used) = (lo - 1, more),
            _ => break,
        }
    }
    lo..end
}

/// Whether level `n`, just built, keeps its raw copy: when it is in the
/// window of level `n + 2`, the first to read it (none past `usize`).
pub fn keeps_raw(n: usize, budget: Option<u64>) -> bool {
    n.checked_add(2)
        .is_some_and(|reader| raw_window(reader, budget).contains(&n))
}

/// Makes the raw cache right for building level `n` of `rules` in `db`:
/// removes the copies of levels below `n - 1` outside [`raw_window`] and
/// writes the missing or stale ones inside it from their tables. (Level
/// `n - 1`, not read by `n`, is left for `n + 1`, unless a budget is set
/// and level `n + 1` is built already, as when `--levels 0..34,36` is
/// followed by level 35: then nothing waits for it.) After the last level
/// of a build, `n = max + 2` leaves the copies of the largest levels within
/// the budget. Run by the one process that writes the directory.
pub fn prepare_raw_cache(db: &Db, rules: Rules, n: usize, budget: Option<u64>) -> Result<()> {
    if budget.is_some() && n >= 1 && db.has_table(rules, n + 1)? {
        remove_if_present(&db.raw_path(rules, n - 1))?;
    }
    let window = raw_window(n, budget);
    for k in 0..n.saturating_sub(1) {
        let path = db.raw_path(rules, k);
        if !window.contains(&k) {
            remove_if_present(&path)?;
            continue;
        }
        if !db.has_table(rules, k)? {
            continue; // a level left for later: nothing to copy
        }
        let table = db.open(rules, k)?;
        if db.raw_copy(rules, k, &table).is_none() {
            table.write_raw(&path)?;
        }
    }
    Ok(())
}

/// One lower level as a solver reads it.
pub enum Stored {
    /// One byte per position, mapped: a raw copy known to match its table,
    /// or a published VU file. A damaged value is reported in the file it
    /// was read from, `path`: the raw copy (damaged since it was checked
    /// against its table) or the VU file.
    Mapped {
        /// The values.
        map: Arc<Mmap>,
        /// The raw copy or VU file mapped.
        path: PathBuf,
    },
    /// A table, read block by block through the block cache.
    Table(Arc<Level>),
    /// The level just below the one solved, never read ([`reads_level`]):
    /// not opened.
    Unread,
}

/// Levels `0..n` of one rule set as a solver reads them ([`LowerLevels`]):
/// mapped, or tables through a block cache `C` (owned by a build's
/// [`Lower`], borrowed from a reader by `verify`).
pub struct StoredLevels<C> {
    levels: Vec<Stored>,
    cache: C,
}

/// The lower levels of a build, with their own block cache.
pub type Lower = StoredLevels<BlockCache>;

impl<C: Borrow<BlockCache>> StoredLevels<C> {
    /// Levels `0..levels.len()`, tables read through `cache`.
    pub fn new(levels: Vec<Stored>, cache: C) -> StoredLevels<C> {
        StoredLevels { levels, cache }
    }

    /// The levels read from tables through the block cache (the others are
    /// mapped or not read).
    pub fn compressed_levels(&self) -> Vec<usize> {
        (0..self.levels.len())
            .filter(|&k| matches!(self.levels[k], Stored::Table(..)))
            .collect()
    }
}

impl Lower {
    /// The levels below `n` for building it: raw copies for those in
    /// [`raw_window`]`(n, budget)` (which [`prepare_raw_cache`] has made
    /// right), tables for the others but `n - 1`, which level `n` never
    /// reads and need not exist, with a block cache of `cache_bytes`.
    pub fn open(
        db: &Db,
        rules: Rules,
        n: usize,
        budget: Option<u64>,
        cache_bytes: usize,
    ) -> Result<Lower> {
        let window = raw_window(n, budget);
        let levels = (0..n)
            .map(|k| match (reads_level(n, k), window.contains(&k)) {
                (false, _) => Ok(Stored::Unread),
                // A copy stands for its table, which must still be there: a
                // missing one is an error as a reader gives it.
                (true, true) => db.open(rules, k).and_then(|_| {
                    let path = db.raw_path(rules, k);
                    let m = map_raw(&path)?;
                    read_at_random(&m);
                    Ok(Stored::Mapped {
                        map: Arc::new(m),
                        path,
                    })
                }),
                (true, false) => db
                    .open(rules, k)
                    .map(|t| Stored::Table(Level::new(k, t, db.raw_path(rules, k)))),
            })
            .collect::<Result<_>>()?;
        let threads = rayon::current_num_threads();
        let cache = BlockCache::new(cache_bytes, table::BLOCK_SIZE as usize, threads);
        Ok(StoredLevels::new(levels, cache))
    }
}

impl<C: Borrow<BlockCache> + Sync> LowerLevels for StoredLevels<C> {
    type Reader = Held;

    fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Room for a share of the cache's blocks: the workers' readers hold
    /// half the cache at most between them, so that blocks evicted while
    /// held take at most half its budget again; `HELD_BLOCKS` at most, 16
    /// at least. A chunk of tiles reads a few blocks of each lower level
    /// (the walk is mover-major). A reader is for this store only.
    fn reader(&self) -> Held {
        let share = self.cache.borrow().blocks() / (2 * rayon::current_num_threads());
        Held::new(share.clamp(16, HELD_BLOCKS))
    }

    /// A value outside `-level..=level` (a damaged raw copy or VU file, or
    /// a table written with one, its checksums all valid) is an error, not
    /// a value: what is built or checked from it would be wrong. It is
    /// [`Corruption::ValueRange`](crate::error::Corruption::ValueRange) of
    /// the file read, as [`Level::value`] reports it.
    #[inline]
    fn value(&self, held: &mut Held, level: usize, index: u64) -> Result<i8> {
        match &self.levels[level] {
            Stored::Mapped { map, path } => {
                let Some(&b) = map.get(index as usize) else {
                    return Err(Error::Invalid(format!(
                        "index {index} beyond the {} positions of level {level}",
                        map.len()
                    )));
                };
                let value = b as i8;
                if usize::from(value.unsigned_abs()) > level {
                    return Err(Error::value_range(path, level, index, value));
                }
                Ok(value)
            }
            Stored::Table(l) => l.value(self.cache.borrow(), Some(held), index),
            Stored::Unread => Err(unread(level)),
        }
    }

    #[inline]
    fn prefetch(&self, level: usize, index: u64) {
        if let Stored::Mapped { map, .. } = &self.levels[level]
            && let Some(b) = map.get(index as usize)
        {
            prefetch(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{keeps_raw, raw_window};

    /// The default budget keeps every raw copy of a build up to level 29
    /// (levels 0..=29 are 7,064,203,120 bytes) and not all of level 30's
    /// lower levels; a budget that holds every level gives the whole
    /// window `0..n-1`, down to level 0 and no further (an empty one for
    /// levels 0 and 1, which read nothing).
    #[test]
    fn the_default_budget_and_one_that_holds_every_level() {
        use super::DEFAULT_RAW_CACHE;
        use crate::oware::level_size;
        let upto_29: u64 = (0..=29).map(level_size).sum();
        assert_eq!(upto_29, 7_064_203_120);
        assert_eq!(raw_window(31, Some(DEFAULT_RAW_CACHE)), 0..30);
        assert!((0..=29).all(|n| keeps_raw(n, Some(DEFAULT_RAW_CACHE))));
        assert_ne!(raw_window(32, Some(DEFAULT_RAW_CACHE)), 0..31);
        for n in [0usize, 1, 2, 20, 48] {
            let all = 0..n.saturating_sub(1);
            assert_eq!(raw_window(n, Some(u64::MAX)), all, "level {n}");
            assert_eq!(raw_window(n, None), all, "level {n}");
        }
    }

    /// Counts of levels far past the game get answers, as `level_size`
    /// saturates, not an overflow (a panic where overflow checks are on,
    /// as in a debug build).
    #[test]
    fn windows_of_levels_past_the_game() {
        let top = usize::MAX;
        assert_eq!(raw_window(top, Some(u64::MAX)), top - 2..top - 1);
        assert_eq!(raw_window(top, Some(0)), top - 1..top - 1);
        assert_eq!(raw_window(top, None), 0..top - 1);
        assert!(!keeps_raw(top, Some(u64::MAX)) && !keeps_raw(top - 1, None));
        assert!(keeps_raw(top - 2, Some(u64::MAX)));
    }
}
