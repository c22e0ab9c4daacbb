//! Where a level's values come from: our compressed tables, or a directory
//! of published-layout `scores.N` files (the VU Awari database), read in
//! place through memory maps with no import step. [`Source`] is the one
//! place that chooses between them; everything that reads values (queries,
//! statistics, verification, the starting positions) reads a `Source`.
//!
//! A solver that reads a source's levels as lower levels (the checker's
//! re-derivation) gets them from [`Source::lower_levels`] as
//! [`LowerLevels`](crate::oware::LowerLevels): VU files and raw copies that match their table mapped,
//! the other tables read block by block through the source's
//! [`BlockCache`], so that no level has to be decompressed whole.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use memmap2::Mmap;

use crate::db::Db;
use crate::error::{Corruption, Error, Missing, Result};
use crate::files::files_put_in_place;
use crate::oware::{
    Board, Encoder, MAX_SEEDS, Rules, game_level, game_levels, level_size, reads_level,
};
use crate::probe::{BlockCache, DEFAULT_CACHE_BYTES, Held, Level};
use crate::stored::{Stored, StoredLevels};
use crate::table::{BLOCK_SIZE, Table, as_values, check_values};

/// A source of stored values: anything that can tell the value of a
/// position of the stored domain.
pub trait Values {
    /// The stored value of `board`; [`Error::Invalid`] for a board that
    /// is not stored (every opponent pit filled, or more seeds than a
    /// game; `query::value`, a layer above, values those from their
    /// moves).
    fn value(&self, board: &Board) -> Result<i8>;
    /// The file the value of `board` comes from, for error messages.
    fn origin(&self, board: &Board) -> PathBuf;
    /// The rule set whose values these are, when the source knows it: the
    /// queries, a layer above, refuse to value positions under other rules
    /// with them (a stored value would then disagree with its moves,
    /// which reads as a damaged table).
    fn rules(&self) -> Option<Rules> {
        None
    }
    /// Whether this source refuses, as corrupt, every value outside its
    /// board's range `-seeds..=seeds` itself, as this crate's sources do
    /// (default: no). The queries, a layer above, check the values of a
    /// source that does not.
    fn checks_ranges(&self) -> bool {
        false
    }
    /// The stored values of `boards` appended to `out`, in order, as
    /// [`Values::value`] gives them one by one; on an error, `out` has
    /// gained the values of the boards before the one that failed. A
    /// source may probe many at once faster ([`Tables`] does).
    fn values(&self, boards: &[Board], out: &mut Vec<i8>) -> Result<()> {
        for b in boards {
            out.push(self.value(b)?);
        }
        Ok(())
    }
}

/// A source behind a reference or a pointer is that source: a
/// [`Source`] shared as `Arc<Source>` by an engine's threads is given to
/// the queries as it is.
macro_rules! values_through {
    ($($pointer:ty),*) => {$(
        impl<T: Values + ?Sized> Values for $pointer {
            fn value(&self, board: &Board) -> Result<i8> {
                (**self).value(board)
            }
            fn origin(&self, board: &Board) -> PathBuf {
                (**self).origin(board)
            }
            fn rules(&self) -> Option<Rules> {
                (**self).rules()
            }
            fn checks_ranges(&self) -> bool {
                (**self).checks_ranges()
            }
            fn values(&self, boards: &[Board], out: &mut Vec<i8>) -> Result<()> {
                (**self).values(boards, out)
            }
        }
    )*};
}
values_through!(&T, Box<T>, Arc<T>);

/// Blocks a batch of probes ([`Values::values`] of [`Tables`]) holds at
/// most: 64 MiB of blocks, every block of level 19 (796), a third of level
/// 22's.
const HELD_BLOCKS: usize = 1024;

/// A directory of `scores.N` files: one signed byte per position, index
/// order, no header.
#[derive(Debug)]
pub struct VuDir {
    dir: PathBuf,
    encoder: Encoder,
    /// Level `n` at `maps[n]`, set once mapped: no lock on the probe path.
    maps: Box<[OnceLock<Arc<Mmap>>]>,
    /// Held while a level is mapped; the levels that failed lately.
    opening: Opening,
}

impl VuDir {
    /// The VU files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> VuDir {
        VuDir {
            dir: dir.into(),
            encoder: Encoder::new(MAX_SEEDS),
            maps: (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect(),
            opening: Opening::new(),
        }
    }

    /// Path of level `seeds`.
    pub fn path(&self, seeds: usize) -> PathBuf {
        self.dir.join(format!("scores.{seeds}"))
    }

    /// Levels present; a file that cannot be looked at is an error.
    pub fn levels(&self) -> Result<Vec<usize>> {
        crate::db::present_files((0..=MAX_SEEDS).map(|n| (n, self.path(n))))
    }

    /// Level `seeds` mapped (once, then shared), its size checked:
    /// `C(N+11,11) - C(N+5,11)` bytes.
    pub fn map_level(&self, seeds: usize) -> Result<Arc<Mmap>> {
        self.map(seeds).cloned()
    }

    /// Level `seeds`, mapped once.
    fn map(&self, seeds: usize) -> Result<&Arc<Mmap>> {
        once_per_level(&self.maps, &self.opening, seeds, || self.map_now(seeds))
    }

    fn map_now(&self, seeds: usize) -> Result<Arc<Mmap>> {
        let path = self.path(seeds);
        if !crate::files::exists(&path)? {
            return Err(Error::Missing(Missing::VuLevel {
                dir: self.dir.clone(),
                seeds,
            }));
        }
        let f = crate::files::open_regular(&path)?;
        let want = level_size(seeds);
        let len = f.metadata().map_err(|e| Error::io(&path, e))?.len();
        if len != want {
            return Err(Error::corrupt(
                &path,
                Corruption::FileLength {
                    bytes: len,
                    seeds,
                    want,
                },
            ));
        }
        // SAFETY: read-only map of a file this program never writes in
        // place (`export` and the raw copies write a new file under a
        // temporary name and rename it over). Another
        // program that rewrites it in place can make it read wrong values
        // (a value out of range is still refused), and one that truncates it
        // kills the process with SIGBUS, as with any mapped file: replace the
        // files by rename (README, `--vu`).
        Ok(Arc::new(
            unsafe { Mmap::map(&f) }.map_err(|e| Error::io(&path, e))?,
        ))
    }
}

/// VU files (the published layout) hold awari values and say nothing of
/// their rules: reading, importing or exporting them under other rules is
/// refused, since it would value one game's positions by the other's.
pub fn vu_rules(rules: Rules) -> Result<()> {
    match rules {
        Rules::Awari => Ok(()),
        _ => Err(Error::Invalid(format!(
            "the VU files hold awari values only: no {rules} values are read from them or written to them"
        ))),
    }
}

/// How long a level that could not be opened (missing, damaged,
/// unreadable) is answered with the same error before it is looked at
/// again: a level built or repaired meanwhile by another process is found
/// within this time (by this process, at once: any file it puts in place
/// ends the wait), and a search that probes a missing level at every node
/// does not look for its file each time (2.0 us a probe, and 35 us for a
/// truncated table, against 0.2 us for a level open).
pub const RETRY_OPENING: std::time::Duration = std::time::Duration::from_secs(1);

/// Levels being opened: held while one is, so that each is opened once;
/// it holds the last failure of each level, when it came, and how many
/// files the process had put in place then.
#[derive(Debug)]
struct Opening(Mutex<Vec<Option<(Instant, u64, Error)>>>);

impl Opening {
    fn new() -> Opening {
        Opening(Mutex::new((0..=MAX_SEEDS).map(|_| None).collect()))
    }
}

/// The item of level `seeds` in `cells`, made by `open` the first time it
/// is asked for (one opening at a time, under `opening`); an error is
/// kept for [`RETRY_OPENING`], or until the process puts a file in place,
/// and told again meanwhile; then a call tries again.
fn once_per_level<'a, T>(
    cells: &'a [OnceLock<T>],
    opening: &Opening,
    seeds: usize,
    open: impl FnOnce() -> Result<T>,
) -> Result<&'a T> {
    let level = game_level(seeds as u64)?;
    let cell = &cells[level];
    if let Some(item) = cell.get() {
        return Ok(item);
    }
    let mut failed = opening.0.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(item) = cell.get() {
        return Ok(item);
    }
    let written = files_put_in_place();
    if let Some((when, then_written, e)) = &failed[level]
        && when.elapsed() < RETRY_OPENING
        && *then_written == written
    {
        return Err(e.again());
    }
    match open() {
        Ok(item) => {
            failed[level] = None;
            Ok(cell.get_or_init(|| item))
        }
        Err(e) => {
            failed[level] = Some((Instant::now(), written, e.again()));
            Err(e)
        }
    }
}

impl Values for VuDir {
    /// A value outside `-seeds..=seeds` is a corrupt file: the published
    /// files carry no checksum, so this is the one check a probe can make.
    fn value(&self, board: &Board) -> Result<i8> {
        let (seeds, index) = self.encoder.stored_index(board)?;
        let value = self.map(seeds)?[index as usize] as i8;
        check_values(&self.path(seeds), seeds, index, &[value])?;
        Ok(value)
    }

    fn checks_ranges(&self) -> bool {
        true
    }

    /// The published files hold awari values.
    fn rules(&self) -> Option<Rules> {
        Some(Rules::Awari)
    }

    fn origin(&self, board: &Board) -> PathBuf {
        self.path(board.seeds())
    }
}

/// The tables of one rule set in a directory, opened level by level as
/// queries need them and probed through [`crate::probe`]: raw copies once
/// checked, else a block cache shared by every thread.
#[derive(Debug)]
pub struct Tables {
    db: Db,
    rules: Rules,
    encoder: Encoder,
    cache: BlockCache,
    /// Level `n` at `levels[n]`, set once opened: no lock on the probe path.
    levels: Box<[OnceLock<Arc<Level>>]>,
    /// Held while a level is opened, so that each is opened once; the
    /// levels that failed lately.
    opening: Opening,
}

impl Tables {
    /// Reads `rules` tables from `db`, with a block cache of
    /// [`DEFAULT_CACHE_BYTES`] for as many threads as there are cores.
    pub fn new(db: Db, rules: Rules) -> Tables {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Tables::with_cache(db, rules, DEFAULT_CACHE_BYTES, threads)
    }

    /// Reads `rules` tables from `db`, caching up to `cache_bytes` of
    /// decompressed blocks for `threads` probing threads.
    pub fn with_cache(db: Db, rules: Rules, cache_bytes: usize, threads: usize) -> Tables {
        Tables {
            db,
            rules,
            encoder: Encoder::new(MAX_SEEDS),
            cache: BlockCache::new(cache_bytes, BLOCK_SIZE as usize, threads),
            levels: (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect(),
            opening: Opening::new(),
        }
    }

    /// The level `seeds`, opened once.
    pub fn level(&self, seeds: usize) -> Result<&Arc<Level>> {
        once_per_level(&self.levels, &self.opening, seeds, || {
            let table = self.db.open(self.rules, seeds)?;
            Ok(Level::new(
                seeds,
                table,
                self.db.raw_path(self.rules, seeds),
            ))
        })
    }

    /// [`Values::values`] by groups: each group of boards is ranked and its
    /// raw bytes prefetched before any is read, so that the memory loads of
    /// random probes overlap (see [`crate::probe`]); blocks read from tables
    /// are held for the batch's later probes ([`HELD_BLOCKS`]); appended to `out`. On
    /// an error, `out` has gained the values of the groups before the one
    /// that failed.
    fn values_grouped(&self, boards: &[Board], out: &mut Vec<i8>) -> Result<()> {
        const GROUP: usize = 16;
        let mut at: [(usize, u64); GROUP] = [(0, 0); GROUP];
        let mut held = Held::new(HELD_BLOCKS.min(boards.len()));
        for group in boards.chunks(GROUP) {
            for (b, slot) in group.iter().zip(at.iter_mut()) {
                let (seeds, index) = self.encoder.stored_index(b)?;
                self.level(seeds)?.prefetch(index);
                *slot = (seeds, index);
            }
            for &(seeds, index) in &at[..group.len()] {
                out.push(
                    self.level(seeds)?
                        .value(&self.cache, Some(&mut held), index)?,
                );
            }
        }
        Ok(())
    }

    fn table(&self, seeds: usize) -> Result<&Table> {
        Ok(self.level(seeds)?.table())
    }
}

impl Values for Tables {
    #[inline]
    fn value(&self, board: &Board) -> Result<i8> {
        let (seeds, index) = self.encoder.stored_index(board)?;
        self.level(seeds)?.value(&self.cache, None, index)
    }

    fn rules(&self) -> Option<Rules> {
        Some(self.rules)
    }

    /// Every block read is checked (its values too) before it answers.
    fn checks_ranges(&self) -> bool {
        true
    }

    /// The file the level's values are read from: its raw copy once in
    /// use (a value damaged there since its check is that file's), else
    /// its table.
    fn origin(&self, board: &Board) -> PathBuf {
        let seeds = board.seeds();
        match self.levels.get(seeds).and_then(OnceLock::get) {
            Some(level) => level.read_from().to_path_buf(),
            None => self.db.table_path(self.rules, seeds),
        }
    }

    fn values(&self, boards: &[Board], out: &mut Vec<i8>) -> Result<()> {
        let before = out.len();
        if self.values_grouped(boards, out).is_err() {
            // One by one from the first value not given, to stop exactly at
            // the board that fails.
            for b in &boards[out.len() - before..] {
                out.push(self.value(b)?);
            }
        }
        Ok(())
    }
}

/// The values of a whole level, owned or mapped.
pub enum LevelData {
    /// Decompressed from a table.
    Owned(Vec<i8>),
    /// A mapped `scores.N` (published, or a table's raw working copy).
    Mapped(Arc<Mmap>),
}

impl Deref for LevelData {
    type Target = [i8];
    fn deref(&self) -> &[i8] {
        match self {
            LevelData::Owned(v) => v,
            LevelData::Mapped(m) => as_values(m),
        }
    }
}

/// What is known about one level present, for listings.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LevelInfo {
    /// Seeds on the board.
    pub seeds: usize,
    /// Positions in the level.
    pub positions: u64,
    /// Size of its file in bytes.
    pub bytes: u64,
    /// Whether its values passed every check of `verify` (by the content
    /// checksum of its header: [`crate::db::Db::is_verified`]); `None` when
    /// the records of that (`verified.tsv`) cannot be read, which says
    /// nothing of the level itself.
    pub verified: Option<bool>,
    /// Whether probes read it uncompressed (a checked raw copy, or a VU
    /// file) rather than through the block cache.
    pub uncompressed: bool,
}

/// Our tables of one rule set, or a VU directory.
#[derive(Debug)]
pub enum Source {
    /// Tables in a directory.
    Tables(Tables),
    /// Published-layout files.
    Vu(VuDir),
}

impl Source {
    /// The tables of `rules` in `dir`.
    pub fn tables(dir: impl Into<PathBuf>, rules: Rules) -> Source {
        Source::Tables(Tables::new(Db::new(dir), rules))
    }

    /// The `scores.N` files in `dir`.
    pub fn vu(dir: impl Into<PathBuf>) -> Source {
        Source::Vu(VuDir::new(dir))
    }

    /// The values of `rules`: the tables in `db`, or with `vu` the
    /// `scores.N` files there (and `db` is not looked at). These hold
    /// awari values, so other rules with `vu` are refused rather than
    /// valued by the wrong game. A path that is there but is not a
    /// directory is an error saying what it is; one that is not there is
    /// not (a position whose player to move has no seeds reads no level):
    /// its probes are [`Error::Missing`], and [`Source::require_dir`]
    /// refuses it at once, as every command that reads levels does.
    pub fn open(db: impl Into<PathBuf>, rules: Rules, vu: Option<PathBuf>) -> Result<Source> {
        match vu {
            Some(dir) => {
                vu_rules(rules)?;
                crate::files::check_dir(&dir)?;
                Ok(Source::vu(dir))
            }
            None => {
                let db = db.into();
                crate::files::check_dir(&db)?;
                Ok(Source::tables(db, rules))
            }
        }
    }

    /// The directory read.
    pub fn dir(&self) -> &Path {
        match self {
            Source::Tables(t) => t.db.dir(),
            Source::Vu(vu) => &vu.dir,
        }
    }

    /// What a server answers from: the tables of every rule set in `db`
    /// (each with a block cache of `cache_bytes` for `threads` threads), or
    /// the awari values of the `scores.N` files in `vu`. The directory must
    /// be there ([`Source::require_dir`]).
    pub fn served(
        db: &Path,
        vu: Option<&Path>,
        cache_bytes: usize,
        threads: usize,
    ) -> Result<Vec<(Rules, Source)>> {
        let sources = match vu {
            Some(dir) => vec![(
                Rules::Awari,
                Source::open(db, Rules::Awari, Some(dir.into()))?,
            )],
            None => Rules::ALL
                .into_iter()
                .map(|r| {
                    let t = Tables::with_cache(Db::new(db), r, cache_bytes, threads);
                    (r, Source::Tables(t))
                })
                .collect(),
        };
        sources[0].1.require_dir()?;
        Ok(sources)
    }

    /// Fails with "no such directory" if the directory read is not there
    /// (more likely a typo than a wish for empty answers), or with what it
    /// is if it is not a directory.
    pub fn require_dir(&self) -> Result<()> {
        crate::files::existing_dir(self.dir())
    }

    /// Levels present; a file that cannot be looked at is an error
    /// naming it, never a level left out.
    pub fn levels(&self) -> Result<Vec<usize>> {
        match self {
            Source::Tables(t) => t.db.levels(t.rules),
            Source::Vu(vu) => vu.levels(),
        }
    }

    /// Each level whose file is there or cannot be looked at, with the
    /// error of the latter: for a listing that names a level it cannot read
    /// (a link to nothing) beside the others, where [`Source::levels`]
    /// stops at it. A directory that is not one (a file in its place) is
    /// one error, not one per level.
    pub fn level_files(&self) -> Result<Vec<(usize, Result<()>)>> {
        crate::files::check_dir(self.dir())?;
        Ok(crate::db::files_looked_at(
            (0..=MAX_SEEDS).map(|n| (n, self.path(n))),
        ))
    }

    /// Levels present, or [`Error::Missing`] when there are none.
    pub fn present(&self) -> Result<Vec<usize>> {
        match self {
            Source::Tables(t) => t.db.present(t.rules),
            Source::Vu(vu) => match vu.levels()? {
                l if l.is_empty() => Err(Error::Missing(Missing::VuLevels {
                    dir: vu.dir.clone(),
                })),
                l => Ok(l),
            },
        }
    }

    /// The file holding level `seeds`.
    pub fn path(&self, seeds: usize) -> PathBuf {
        match self {
            Source::Tables(t) => t.db.table_path(t.rules, seeds),
            Source::Vu(vu) => vu.path(seeds),
        }
    }

    /// Whether the file of level `seeds` is there; one that cannot be
    /// looked at (a link to nothing) is an error naming it, and a level past
    /// the game [`Error::Invalid`], as for [`Source::require_levels`]. Looks
    /// at that file only, unlike [`Source::levels`].
    pub fn has_level(&self, seeds: usize) -> Result<bool> {
        game_level(seeds as u64)?;
        crate::files::exists(&self.path(seeds))
    }

    /// Fails unless the file of each of `levels` is there: for tables, all
    /// the missing ones ([`Db::require_levels`]); for VU files, the
    /// highest (whose remedy is the same for all). A level past the game
    /// is [`Error::Invalid`].
    pub fn require_levels(&self, levels: &[usize]) -> Result<()> {
        game_levels(levels.iter().copied())?; // a level past the game is no request
        match self {
            Source::Tables(t) => t.db.require_levels(t.rules, levels),
            Source::Vu(_) => {
                let mut highest = None;
                for &k in levels {
                    if !self.has_level(k)? {
                        highest = highest.max(Some(k));
                    }
                }
                highest.map_or(Ok(()), |k| self.require(k))
            }
        }
    }

    /// Opens level `seeds` (structure only), or says why it cannot be read.
    pub fn require(&self, seeds: usize) -> Result<()> {
        match self {
            Source::Tables(t) => t.table(seeds).map(|_| ()),
            Source::Vu(vu) => vu.map_level(seeds).map(|_| ()),
        }
    }

    /// Check 1: the file of level `seeds` is sound and every value lies in
    /// `-seeds..=seeds`. Tables: header, block index, whole-file checksum,
    /// every block (its place, its zstd checksum, its length) and the content
    /// checksum; VU files: their size.
    pub fn integrity(&self, seeds: usize) -> Result<()> {
        if let Source::Tables(t) = self {
            t.table(seeds)?.verify()?;
        }
        self.for_each_chunk(seeds, |_| ())
    }

    /// All values of level `seeds`, each checked to lie in
    /// `-seeds..=seeds` ([`Corruption::ValueRange`] otherwise: a table's
    /// checksums hold whatever values it was written with).
    pub fn load(&self, seeds: usize) -> Result<LevelData> {
        match self {
            Source::Tables(t) => {
                // The raw copy, when it matches, is mapped rather than the
                // table decompressed: large levels then cost page cache only.
                let level = t.level(seeds)?;
                let (data, read_from) = match level.check_raw() {
                    true => (
                        LevelData::Mapped(Arc::clone(level.raw().expect("checked"))),
                        level.raw_path(),
                    ),
                    false => (
                        LevelData::Owned(level.table().read_all()?),
                        level.table().path(),
                    ),
                };
                // Named as the file read (a raw copy damaged since it was
                // checked is what to remove).
                check_values(read_from, seeds, 0, &data).map_err(|e| level.table().stale(e))?;
                Ok(data)
            }
            Source::Vu(vu) => {
                let map = vu.map_level(seeds)?;
                check_values(&vu.path(seeds), seeds, 0, as_values(&map))?;
                Ok(LevelData::Mapped(map))
            }
        }
    }

    /// Levels `0..n` as a solver reads lower levels: each VU file mapped;
    /// each table's raw copy mapped when it matches the table's content
    /// checksum ([`Level::check_raw`], which hashes it once), else the
    /// table read block by block through this source's block cache; level
    /// `n - 1`, never read ([`reads_level`]), not at all. A level read
    /// that is missing or cannot be opened is an error here; a block that
    /// cannot be read is an error of the read that needs it. A level `n`
    /// past the game is [`Error::Invalid`].
    pub fn lower_levels(&self, n: usize) -> Result<StoredLevels<&BlockCache>> {
        game_level(n as u64)?;
        let levels = (0..n)
            .map(|k| match self {
                _ if !reads_level(n, k) => Ok(Stored::Unread),
                Source::Tables(t) => {
                    let level = t.level(k)?;
                    let raw = if level.check_raw() { level.raw() } else { None };
                    Ok(match raw {
                        Some(raw) => Stored::Mapped {
                            map: Arc::clone(raw),
                            path: level.raw_path().to_path_buf(),
                        },
                        None => Stored::Table(Arc::clone(level)),
                    })
                }
                Source::Vu(vu) => vu.map_level(k).map(|map| Stored::Mapped {
                    map,
                    path: vu.path(k),
                }),
            })
            .collect::<Result<_>>()?;
        let cache = match self {
            Source::Tables(t) => &t.cache,
            Source::Vu(_) => {
                // VU files are all mapped: a cache that is never filled.
                static NONE: OnceLock<BlockCache> = OnceLock::new();
                NONE.get_or_init(|| BlockCache::new(0, BLOCK_SIZE as usize, 1))
            }
        };
        Ok(StoredLevels::new(levels, cache))
    }

    /// Calls `f` with the values of level `seeds` in index order, in
    /// chunks: tables block by block (each checked), VU files in place.
    /// Each chunk is first checked to lie in `-seeds..=seeds` (the one
    /// check a VU file can have); a value outside ends the walk with
    /// [`Corruption::ValueRange`].
    pub fn for_each_chunk(&self, seeds: usize, mut f: impl FnMut(&[i8])) -> Result<()> {
        let path = self.path(seeds);
        let mut offset = 0;
        let mut checked = |values: &[i8]| {
            check_values(&path, seeds, offset, values)?;
            offset += values.len() as u64;
            f(values);
            Ok(())
        };
        match self {
            Source::Tables(t) => t.table(seeds)?.for_each_block(checked),
            Source::Vu(vu) => checked(as_values(&vu.map_level(seeds)?)),
        }
    }

    /// Whether the values of level `seeds` passed every check of `verify`
    /// ([`crate::db::Db::is_verified`]; never, for VU files: nothing is
    /// recorded about them). An error when the records cannot be read, or
    /// when the level's file is there but cannot be opened as that level
    /// (damaged, the wrong size, not a file).
    pub fn is_verified(&self, seeds: usize) -> Result<bool> {
        self.verified_each(&[seeds])?
            .pop()
            .expect("one answer a level")
    }

    /// [`Source::is_verified`] of each of `levels`, each level's file
    /// opened once for them all: the records that cannot be read are the
    /// error of all, a level's own file that is there but does not open
    /// is that level's error.
    fn verified_each(&self, levels: &[usize]) -> Result<Vec<Result<bool>>> {
        match self {
            Source::Tables(t) => t.db.verified_each(t.rules, levels),
            Source::Vu(vu) => Ok(levels
                .iter()
                .map(|&seeds| match vu.map_level(seeds) {
                    Ok(_) | Err(Error::Missing(_)) => Ok(false),
                    Err(e) => Err(e),
                })
                .collect()),
        }
    }

    /// Whether every one of `levels` passed every check of `verify` as it
    /// is now ([`Source::is_verified`]). Every level is looked at, also
    /// after one that was not verified, so that a level an answer rests on
    /// but cannot be opened is an error rather than "not all verified".
    pub fn all_verified(&self, levels: &[usize]) -> Result<bool> {
        match self {
            Source::Tables(t) => Ok(t.db.are_verified(t.rules, levels)?.iter().all(|&v| v)),
            Source::Vu(_) => levels
                .iter()
                .try_fold(true, |all, &n| Ok(self.is_verified(n)? && all)),
        }
    }

    /// What is known about level `seeds` (which must be present); an error
    /// when it cannot be read, or, in a table directory, when the file at
    /// its path now does not open (this source may hold one that another
    /// has replaced since, and still reads it).
    pub fn level_info(&self, seeds: usize) -> Result<LevelInfo> {
        self.level_infos(&[seeds])
            .pop()
            .expect("one answer a level")
    }

    /// [`Source::level_info`] of each of `levels`, with the records read
    /// once and each level's file opened once for the verdicts, however
    /// many levels read it.
    pub fn level_infos(&self, levels: &[usize]) -> Vec<Result<LevelInfo>> {
        // Records that cannot be read leave every level's `verified` unknown.
        let verified: Vec<Option<Result<bool>>> = match self.verified_each(levels) {
            Ok(each) => each.into_iter().map(Some).collect(),
            Err(_) => levels.iter().map(|_| None).collect(),
        };
        levels
            .iter()
            .zip(verified)
            .map(|(&seeds, verified)| {
                let (bytes, uncompressed, own) = match self {
                    Source::Tables(t) => {
                        let level = t.level(seeds)?;
                        let own = t.db.table_path(t.rules, seeds);
                        (level.table().file_len(), level.raw().is_some(), Some(own))
                    }
                    Source::Vu(vu) => (vu.map_level(seeds)?.len() as u64, true, None),
                };
                let verified = match verified {
                    Some(Ok(verified)) => Some(verified),
                    Some(Err(e)) => match &e {
                        // The file at the level's path now (not the one
                        // opened here, which a long-lived reader may hold)
                        // does not open: the level's own error, not the
                        // records'.
                        Error::Corrupt { path, .. } | Error::Io { path, .. }
                            if own.as_ref() == Some(path) =>
                        {
                            return Err(e);
                        }
                        _ => None,
                    },
                    None => None,
                };
                Ok(LevelInfo {
                    seeds,
                    positions: level_size(seeds),
                    bytes,
                    verified,
                    uncompressed,
                })
            })
            .collect()
    }

    /// The content sha256 of level `seeds` as this source reads it (the
    /// table it opened, whatever is under its name by now); `None` for VU
    /// files, which carry none.
    pub fn content_sha256(&self, seeds: usize) -> Result<Option<[u8; 32]>> {
        match self {
            Source::Tables(t) => Ok(Some(t.table(seeds)?.header().content_sha256)),
            Source::Vu(_) => Ok(None),
        }
    }

    /// The table directory, when reading tables.
    pub fn db(&self) -> Option<(&Db, Rules)> {
        match self {
            Source::Tables(t) => Some((&t.db, t.rules)),
            Source::Vu(_) => None,
        }
    }

    /// The error a probe of level `seeds` gives where its file is not
    /// here, for a caller that learns of the missing level otherwise: a
    /// principal line that stops at it (`query::LineEnd::Missing`, a layer
    /// above this one).
    pub fn missing(&self, seeds: usize) -> Error {
        let dir = self.dir().to_path_buf();
        Error::Missing(match self.db() {
            Some((_, rules)) => Missing::Level {
                dir,
                rules: rules.name(),
                seeds,
            },
            None => Missing::VuLevel { dir, seeds },
        })
    }
}

impl Values for Source {
    fn value(&self, board: &Board) -> Result<i8> {
        match self {
            Source::Tables(t) => t.value(board),
            Source::Vu(vu) => vu.value(board),
        }
    }

    fn origin(&self, board: &Board) -> PathBuf {
        match self {
            Source::Tables(t) => t.origin(board),
            Source::Vu(vu) => vu.origin(board),
        }
    }

    fn rules(&self) -> Option<Rules> {
        match self {
            Source::Tables(t) => t.rules(),
            Source::Vu(vu) => vu.rules(),
        }
    }

    fn checks_ranges(&self) -> bool {
        true
    }

    fn values(&self, boards: &[Board], out: &mut Vec<i8>) -> Result<()> {
        match self {
            Source::Tables(t) => t.values(boards, out),
            Source::Vu(vu) => vu.values(boards, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::write_raw;
    use crate::oware::LowerLevels;
    use crate::table::{as_bytes, sha256, write_table};

    /// Values for level `n` (not the game's: the sources read whatever a
    /// file holds in range): every value of `-n..=n` in turn.
    fn made_up(n: usize) -> Vec<i8> {
        let span = 2 * n as u64 + 1;
        (0..level_size(n))
            .map(|i| ((i * 7 + 3) % span) as i8 - n as i8)
            .collect()
    }

    /// Every stored board of level `n`, in index order.
    fn boards(n: usize) -> Vec<Board> {
        let enc = Encoder::new(n);
        enc.boards(n, 0..enc.level_size(n))
            .unwrap()
            .map(|(_, b)| b)
            .collect()
    }

    /// A directory of tables of `rules`, level `n` holding `values(n)`, for
    /// each of `levels`.
    fn write_tables(db: &Db, rules: Rules, levels: &[usize], values: impl Fn(usize) -> Vec<i8>) {
        for &n in levels {
            write_table(&db.table_path(rules, n), Db::table_id(rules, n), &values(n)).unwrap();
        }
    }

    /// A source that knows only its values: two, for every board.
    struct Twos;

    impl Values for Twos {
        fn value(&self, _: &Board) -> Result<i8> {
            Ok(2)
        }
        fn origin(&self, _: &Board) -> PathBuf {
            PathBuf::from("twos")
        }
    }

    /// A source says nothing of its rules and checks no range unless it
    /// says so, and values a batch one board at a time, appended to what
    /// the caller holds, stopping at the first board that fails.
    #[test]
    fn a_source_knows_only_its_values_unless_it_says_more() {
        assert_eq!(Twos.rules(), None);
        assert!(!Twos.checks_ranges());
        let mut out = vec![7];
        Twos.values(&[Board::EMPTY; 3], &mut out).unwrap();
        assert_eq!(out, [7, 2, 2, 2]);
        // Through a pointer, the same.
        assert_eq!(Arc::new(Twos).rules(), None);
        assert!(!Box::new(Twos).checks_ranges());

        struct FailsOnSecond(std::cell::Cell<usize>);
        impl Values for FailsOnSecond {
            fn value(&self, _: &Board) -> Result<i8> {
                self.0.set(self.0.get() + 1);
                match self.0.get() {
                    2 => Err(Error::Invalid("second".into())),
                    n => Ok(n as i8),
                }
            }
            fn origin(&self, _: &Board) -> PathBuf {
                PathBuf::from("fails")
            }
        }
        let mut out = vec![7];
        let e = FailsOnSecond(0.into())
            .values(&[Board::EMPTY; 3], &mut out)
            .unwrap_err();
        assert_eq!(e.to_string(), "second");
        assert_eq!(out, [7, 1]);
    }

    /// A level that failed to open is told with the same error, without a
    /// new attempt, while the failure is younger than [`RETRY_OPENING`] and
    /// the process has put no file in place since; otherwise it is tried
    /// again, and once open it stays open. A level past the game is refused
    /// before any attempt.
    #[test]
    fn a_failed_opening_is_told_again_until_its_time_or_a_new_file() {
        use std::time::Duration;
        // Whether a level that failed `age` ago (with the count of files put
        // in place then, or another count with `moved`) was tried again, and
        // what the call gave. A trial counts where no file was put in place
        // meanwhile (by another test) and the failure did not come of age
        // during the call (a stalled machine): either rightly ends the wait.
        let after_failing = |age: Duration, moved: bool| loop {
            let cells: Vec<OnceLock<u8>> = (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect();
            let opening = Opening::new();
            let written = files_put_in_place();
            let then = if moved {
                written.wrapping_sub(1)
            } else {
                written
            };
            let when = Instant::now().checked_sub(age).unwrap();
            opening.0.lock().unwrap()[3] = Some((when, then, Error::Invalid("failed".into())));
            let mut tried = false;
            let got = once_per_level(&cells, &opening, 3, || {
                tried = true;
                Ok(5)
            });
            let got = got.map_or_else(|e| e.to_string(), |v| v.to_string());
            let aged = age < RETRY_OPENING && when.elapsed() >= RETRY_OPENING;
            if moved || (files_put_in_place() == written && !aged) {
                break (tried, got);
            }
        };
        let told_again = (false, "failed".to_string());
        let tried_again = (true, "5".to_string());
        assert_eq!(after_failing(Duration::ZERO, false), told_again);
        assert_eq!(after_failing(RETRY_OPENING * 2, false), tried_again);
        assert_eq!(after_failing(Duration::ZERO, true), tried_again);

        let cells: Vec<OnceLock<u8>> = (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect();
        let opening = Opening::new();
        let failed = once_per_level(&cells, &opening, 3, || Err(Error::Invalid("no".into())));
        assert_eq!(failed.unwrap_err().to_string(), "no");
        assert!(matches!(
            opening.0.lock().unwrap()[3],
            Some((_, _, Error::Invalid(_)))
        ));
        opening.0.lock().unwrap()[3] = None;
        assert_eq!(once_per_level(&cells, &opening, 3, || Ok(7)).unwrap(), &7);
        assert_eq!(once_per_level(&cells, &opening, 3, || Ok(8)).unwrap(), &7);
        let past = once_per_level(&cells, &opening, 49, || -> Result<u8> { panic!("opened") });
        assert_eq!(
            past.unwrap_err().to_string(),
            "level 49: levels go up to 48"
        );
    }

    /// A directory of VU files answers the values they hold, one by one
    /// and in batches, whole and in chunks, as awari values checked for
    /// range, and names its files; it records nothing of verification.
    #[test]
    fn vu_files_answer_their_values_and_say_what_they_are() {
        let dir = crate::files::scratch_dir("source", "vu");
        for n in 0..=3 {
            write_raw(&dir.join(format!("scores.{n}")), &made_up(n)).unwrap();
        }
        let source = Source::open("not-read", Rules::Awari, Some(dir.clone())).unwrap();
        source.require_dir().unwrap();
        assert_eq!(source.dir(), dir);
        assert_eq!(source.path(2), dir.join("scores.2"));
        assert_eq!(source.levels().unwrap(), [0, 1, 2, 3]);
        assert_eq!(source.present().unwrap(), [0, 1, 2, 3]);
        let files: Vec<usize> = source
            .level_files()
            .unwrap()
            .into_iter()
            .map(|(n, there)| there.map(|()| n).unwrap())
            .collect();
        assert_eq!(files, [0, 1, 2, 3]);
        assert!(source.has_level(3).unwrap() && !source.has_level(4).unwrap());
        assert_eq!(source.rules(), Some(Rules::Awari));
        assert!(source.checks_ranges());
        let Source::Vu(vu) = &source else {
            panic!("not VU files")
        };
        assert!(vu.checks_ranges());
        assert_eq!(vu.rules(), Some(Rules::Awari));
        assert!(source.db().is_none());
        assert_eq!(source.content_sha256(2).unwrap(), None);
        for n in 0..=3 {
            let (want, boards) = (made_up(n), boards(n));
            let path = dir.join(format!("scores.{n}"));
            let one_by_one: Vec<i8> = boards.iter().map(|b| source.value(b).unwrap()).collect();
            assert_eq!(one_by_one, want, "level {n}");
            let direct: Vec<i8> = boards.iter().map(|b| vu.value(b).unwrap()).collect();
            assert_eq!(direct, want, "level {n}");
            let mut out = vec![9];
            source.values(&boards, &mut out).unwrap();
            assert_eq!(out, [&[9][..], &want].concat(), "level {n}");
            assert_eq!(source.origin(&boards[0]), path);
            assert_eq!(vu.origin(&boards[0]), path);
            let loaded = source.load(n).unwrap();
            assert!(matches!(loaded, LevelData::Mapped(_)));
            assert_eq!(&*loaded, &want[..], "level {n}");
            let mut read = Vec::new();
            source
                .for_each_chunk(n, |c| read.extend_from_slice(c))
                .unwrap();
            assert_eq!(read, want, "level {n}");
            source.integrity(n).unwrap();
            source.require(n).unwrap();
            assert!(!source.is_verified(n).unwrap());
            let size = want.len() as u64;
            assert_eq!(
                source.level_info(n).unwrap(),
                LevelInfo {
                    seeds: n,
                    positions: size,
                    bytes: size,
                    verified: Some(false),
                    uncompressed: true,
                }
            );
        }
        assert!(!source.all_verified(&[0, 1]).unwrap());
        source.require_levels(&[0, 1, 2, 3]).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// VU files that are missing, of the wrong length or hold a value out
    /// of range are errors naming the file (for missing levels, the
    /// highest); the level a solver never reads is not opened.
    #[test]
    fn vu_files_missing_short_or_out_of_range_are_named() {
        let dir = crate::files::scratch_dir("source", "vu-wrong");
        let mut one = made_up(1);
        one[4] = 5;
        write_raw(&dir.join("scores.0"), &made_up(0)).unwrap();
        write_raw(&dir.join("scores.1"), &one).unwrap();
        write_raw(&dir.join("scores.2"), &[0; 10]).unwrap();
        let source = Source::vu(&dir);
        let shown = |e: Error| e.to_string();
        let d = dir.display();

        let out_of_range =
            format!("{d}/scores.1: corrupt table: value 5 at index 4 is outside -1..=1");
        let at_4 = boards(1)[4];
        assert_eq!(shown(source.value(&at_4).unwrap_err()), out_of_range);
        assert_eq!(source.value(&boards(1)[3]).unwrap(), one[3]);
        assert_eq!(shown(source.load(1).err().unwrap()), out_of_range);
        assert_eq!(
            shown(source.for_each_chunk(1, |_| ()).unwrap_err()),
            out_of_range
        );
        assert_eq!(shown(source.integrity(1).unwrap_err()), out_of_range);

        let short = format!("{d}/scores.2: corrupt table: 10 bytes; level 2 has 78 positions");
        assert_eq!(shown(source.require(2).unwrap_err()), short);
        assert_eq!(shown(source.is_verified(2).unwrap_err()), short);
        assert_eq!(shown(source.level_info(2).unwrap_err()), short);
        assert!(source.has_level(2).unwrap());

        let missing = |n| format!("scores.{n} not found in {d}");
        assert_eq!(shown(source.require(3).unwrap_err()), missing(3));
        assert_eq!(shown(source.missing(3)), missing(3));
        assert!(!source.is_verified(3).unwrap());
        assert_eq!(
            shown(source.require_levels(&[0, 5, 3]).unwrap_err()),
            missing(5)
        );
        source.require_levels(&[0, 1]).unwrap();
        assert_eq!(
            shown(source.require_levels(&[0, 49]).unwrap_err()),
            "level 49: levels go up to 48"
        );

        // Level 3 reads levels 0 and 1, not 2 (which is too short).
        let lower = source.lower_levels(3).unwrap();
        assert_eq!(lower.levels(), 3);
        let mut reader = lower.reader();
        assert_eq!(lower.value(&mut reader, 0, 0).unwrap(), 0);
        for i in [0, 3, 11] {
            assert_eq!(lower.value(&mut reader, 1, i).unwrap(), one[i as usize]);
        }
        assert_eq!(
            shown(lower.value(&mut reader, 1, 4).unwrap_err()),
            out_of_range
        );
        assert_eq!(
            shown(lower.value(&mut reader, 2, 0).unwrap_err()),
            "level 2 was read, but the level above it never reads it"
        );
        assert_eq!(shown(source.lower_levels(4).err().unwrap()), short);
        assert_eq!(
            shown(source.lower_levels(49).err().unwrap()),
            "level 49: levels go up to 48"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// VU files hold awari values: other rules are refused; an empty
    /// directory has no levels, and one that is not there is refused by
    /// the readers that require it.
    #[test]
    fn vu_files_are_awari_and_their_directory_must_hold_some() {
        vu_rules(Rules::Awari).unwrap();
        let refusal = "the VU files hold awari values only: no abapa values are read from them or written to them";
        assert_eq!(vu_rules(Rules::Abapa).unwrap_err().to_string(), refusal);
        let dir = crate::files::scratch_dir("source", "vu-empty");
        let opened = Source::open("not-read", Rules::Abapa, Some(dir.clone()));
        assert_eq!(opened.unwrap_err().to_string(), refusal);
        let source = Source::open("not-read", Rules::Awari, Some(dir.clone())).unwrap();
        assert_eq!(source.levels().unwrap(), Vec::<usize>::new());
        assert!(source.level_files().unwrap().is_empty());
        assert_eq!(
            source.present().unwrap_err().to_string(),
            format!("scores.N files not found in {}", dir.display())
        );
        let served = Source::served(Path::new("not-read"), Some(&dir), 1 << 20, 1).unwrap();
        assert!(matches!(&served[..], [(Rules::Awari, Source::Vu(vu))] if vu.dir == dir));

        let gone = dir.join("gone");
        let source = Source::open("not-read", Rules::Awari, Some(gone.clone())).unwrap();
        let no_dir = format!("{}: no such directory", gone.display());
        assert_eq!(source.require_dir().unwrap_err().to_string(), no_dir);
        let served = Source::served(Path::new("not-read"), Some(&gone), 1 << 20, 1);
        assert_eq!(served.err().unwrap().to_string(), no_dir);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Tables answer the values they hold, one by one and in batches (of
    /// several groups, over two blocks of level 8), whole and block by
    /// block, under their own rules, and say what they are.
    #[test]
    fn tables_answer_their_values_and_say_what_they_are() {
        let dir = crate::files::scratch_dir("source", "tables");
        let db = Db::new(&dir);
        let levels = [0, 1, 2, 3, 8];
        write_tables(&db, Rules::Awari, &levels, made_up);
        let negated = |n| made_up(n).iter().map(|v| -v).collect();
        write_tables(&db, Rules::Abapa, &[0, 1, 2], negated);
        let source = Source::open(&dir, Rules::Awari, None).unwrap();
        source.require_dir().unwrap();
        assert_eq!(source.dir(), dir);
        assert_eq!(source.path(2), dir.join("awari-02.mdb"));
        assert_eq!(source.levels().unwrap(), levels);
        assert_eq!(source.present().unwrap(), levels);
        let files: Vec<usize> = source
            .level_files()
            .unwrap()
            .into_iter()
            .map(|(n, there)| there.map(|()| n).unwrap())
            .collect();
        assert_eq!(files, levels);
        assert!(source.has_level(8).unwrap() && !source.has_level(4).unwrap());
        assert_eq!(source.rules(), Some(Rules::Awari));
        assert!(source.checks_ranges());
        let Source::Tables(tables) = &source else {
            panic!("not tables")
        };
        assert!(tables.checks_ranges());
        let (read, rules) = source.db().unwrap();
        assert_eq!((read.dir(), rules), (dir.as_path(), Rules::Awari));
        for n in levels {
            let (want, boards) = (made_up(n), boards(n));
            let path = dir.join(format!("awari-{n:02}.mdb"));
            assert_eq!(source.origin(&boards[0]), path);
            let one_by_one: Vec<i8> = boards.iter().map(|b| source.value(b).unwrap()).collect();
            assert_eq!(one_by_one, want, "level {n}");
            let mut out = vec![9];
            source.values(&boards, &mut out).unwrap();
            assert_eq!(out, [&[9][..], &want].concat(), "level {n}");
            let loaded = source.load(n).unwrap();
            assert!(matches!(loaded, LevelData::Owned(_)));
            assert_eq!(&*loaded, &want[..], "level {n}");
            let mut chunks = Vec::new();
            source
                .for_each_chunk(n, |c| chunks.push(c.to_vec()))
                .unwrap();
            assert_eq!(chunks.concat(), want, "level {n}");
            assert_eq!(chunks.len(), want.len().div_ceil(BLOCK_SIZE as usize));
            source.integrity(n).unwrap();
            source.require(n).unwrap();
            assert_eq!(
                source.content_sha256(n).unwrap(),
                Some(sha256(as_bytes(&want)))
            );
            assert_eq!(source.origin(&boards[0]), path);
            assert_eq!(
                source.level_info(n).unwrap(),
                LevelInfo {
                    seeds: n,
                    positions: want.len() as u64,
                    bytes: std::fs::metadata(&path).unwrap().len(),
                    verified: Some(false),
                    uncompressed: false,
                }
            );
        }
        // A batch over several levels, in groups of 16.
        let mixed: Vec<Board> = [3, 8, 2, 1, 0]
            .iter()
            .flat_map(|&n| boards(n).into_iter().step_by(17).take(9))
            .collect();
        let mut out = Vec::new();
        source.values(&mixed, &mut out).unwrap();
        let want: Vec<i8> = mixed.iter().map(|b| source.value(b).unwrap()).collect();
        assert_eq!(out, want);
        assert!(out.iter().any(|&v| v > 1) && out.iter().any(|&v| v < -1));

        let abapa = Source::open(&dir, Rules::Abapa, None).unwrap();
        assert_eq!(abapa.rules(), Some(Rules::Abapa));
        assert_eq!(abapa.db().unwrap().1, Rules::Abapa);
        assert_eq!(abapa.levels().unwrap(), [0, 1, 2]);
        assert_eq!(abapa.path(2), dir.join("abapa-02.mdb"));
        for b in boards(2) {
            assert_eq!(abapa.value(&b).unwrap(), -source.value(&b).unwrap());
        }

        // Every rule set's tables, served.
        let served = Source::served(&dir, None, 1 << 20, 1).unwrap();
        let rules: Vec<Rules> = served.iter().map(|(r, _)| *r).collect();
        assert_eq!(rules, Rules::ALL);
        for (r, s) in &served {
            assert_eq!(s.rules(), Some(*r));
            assert_eq!(s.dir(), dir);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Missing tables are named as the level of those rules in that
    /// directory; a batch that meets one gives the values before it, after
    /// those the caller held, and stops there.
    #[test]
    fn missing_tables_are_named_and_stop_a_batch_at_their_board() {
        let dir = crate::files::scratch_dir("source", "tables-missing");
        let db = Db::new(&dir);
        write_tables(&db, Rules::Awari, &[0, 1, 2, 3], made_up);
        let source = Source::tables(&dir, Rules::Awari);
        let d = dir.display();
        let missing = |n| format!("level {n} (awari) not found in {d}");
        assert_eq!(source.missing(5).to_string(), missing(5));
        assert_eq!(source.require(5).unwrap_err().to_string(), missing(5));
        assert_eq!(
            source.require_levels(&[0, 5]).unwrap_err().to_string(),
            missing(5)
        );
        source.require_levels(&[0, 1, 2, 3]).unwrap();
        let at_5 = boards(5)[100];
        assert_eq!(source.value(&at_5).unwrap_err().to_string(), missing(5));
        assert_eq!(source.origin(&at_5), dir.join("awari-05.mdb"));

        // Two values held; the first group of 16 answers, the second
        // meets level 5 at its fifth board.
        let mut batch: Vec<Board> = boards(3).into_iter().take(20).collect();
        batch.push(at_5);
        batch.extend(boards(2).into_iter().take(3));
        let mut out = vec![7, 7];
        let e = source.values(&batch, &mut out).unwrap_err();
        assert_eq!(e.to_string(), missing(5));
        assert_eq!(out, [&[7, 7][..], &made_up(3)[..20]].concat());

        let lower = source.lower_levels(6);
        assert_eq!(lower.err().unwrap().to_string(), missing(4));
        let none = dir.join("none");
        let empty = Source::tables(&none, Rules::Abapa);
        assert!(empty.levels().unwrap().is_empty());
        assert_eq!(
            empty.present().unwrap_err().to_string(),
            format!("abapa levels not found in {}", none.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A table holding a value out of its level's range (its checksums
    /// hold whatever it was written with) is refused at that value's index,
    /// past the first block, by every reader.
    #[test]
    fn a_table_value_out_of_range_is_named_at_its_index() {
        let dir = crate::files::scratch_dir("source", "tables-range");
        let db = Db::new(&dir);
        let at = 70_000;
        write_tables(&db, Rules::Awari, &[8], |n| {
            let mut v = made_up(n);
            v[at] = 9;
            v
        });
        let source = Source::tables(&dir, Rules::Awari);
        let wrong = format!(
            "{}/awari-08.mdb: corrupt table: value 9 at index {at} is outside -8..=8",
            dir.display()
        );
        let shown = |r: Result<()>| r.unwrap_err().to_string();
        assert_eq!(shown(source.for_each_chunk(8, |_| ())), wrong);
        assert_eq!(shown(source.integrity(8)), wrong);
        assert_eq!(source.load(8).err().unwrap().to_string(), wrong);
        let b = boards(8)[at];
        assert_eq!(source.value(&b).unwrap_err().to_string(), wrong);
        assert_eq!(
            source.value(&boards(8)[at - 1]).unwrap(),
            made_up(8)[at - 1]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A level's raw copy that matches its table is mapped and read in its
    /// place (and named as what values are read from); one that does not
    /// is left, and the table read through the block cache. The level a
    /// solver never reads is not opened.
    #[test]
    fn a_matching_raw_copy_is_read_in_place_of_its_table() {
        let dir = crate::files::scratch_dir("source", "tables-raw");
        let db = Db::new(&dir);
        write_tables(&db, Rules::Awari, &[0, 1, 2], made_up);
        std::fs::create_dir_all(db.raw_dir(Rules::Awari)).unwrap();
        write_raw(&db.raw_path(Rules::Awari, 1), &made_up(1)).unwrap();
        let mut other = made_up(2);
        other.swap(0, 1);
        write_raw(&db.raw_path(Rules::Awari, 2), &other).unwrap();
        let source = Source::tables(&dir, Rules::Awari);

        let lower = source.lower_levels(4).unwrap();
        assert_eq!(lower.levels(), 4);
        assert_eq!(lower.compressed_levels(), [0, 2]);
        let mut reader = lower.reader();
        for n in 0..=2 {
            let read: Vec<i8> = (0..level_size(n))
                .map(|i| lower.value(&mut reader, n, i).unwrap())
                .collect();
            assert_eq!(read, made_up(n), "level {n}");
        }
        assert!(lower.value(&mut reader, 3, 0).is_err());

        let raw = source.load(1).unwrap();
        assert!(matches!(raw, LevelData::Mapped(_)));
        assert_eq!(&*raw, &made_up(1)[..]);
        assert_eq!(source.origin(&boards(1)[0]), db.raw_path(Rules::Awari, 1));
        assert!(source.level_info(1).unwrap().uncompressed);
        let table = source.load(2).unwrap();
        assert!(matches!(table, LevelData::Owned(_)));
        assert_eq!(&*table, &made_up(2)[..]);
        assert_eq!(source.origin(&boards(2)[0]), db.table_path(Rules::Awari, 2));
        assert!(!source.level_info(2).unwrap().uncompressed);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A level recorded as verified against the lower levels there is
    /// verified; the others are not, nor a set that holds one of them.
    #[test]
    fn verified_levels_are_those_recorded() {
        let dir = crate::files::scratch_dir("source", "tables-verified");
        let db = Db::new(&dir);
        write_tables(&db, Rules::Awari, &[0, 1, 2], made_up);
        let content = sha256(as_bytes(&made_up(2)));
        let lower = db.lower_content(Rules::Awari, 2).unwrap();
        db.set_verified(
            Rules::Awari,
            2,
            crate::db::Verdict::Passed {
                content,
                lower: &lower,
            },
            crate::progress::Progress::QUIET,
        )
        .unwrap();
        let source = Source::tables(&dir, Rules::Awari);
        assert!(source.is_verified(2).unwrap());
        assert!(!source.is_verified(1).unwrap());
        assert!(source.all_verified(&[2]).unwrap());
        assert!(!source.all_verified(&[1, 2]).unwrap());
        assert_eq!(source.level_info(2).unwrap().verified, Some(true));
        assert_eq!(source.level_info(1).unwrap().verified, Some(false));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
