//! Where a level's values come from: our compressed tables, or a directory
//! of published-layout `scores.N` files (the VU Awari database), read in
//! place through memory maps with no import step. [`Source`] is the one
//! place that chooses between them; everything that reads values (queries,
//! statistics, verification, the starting positions) reads a `Source`.

use std::collections::HashMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

use crate::db::Db;
use crate::error::{Corruption, Error, Missing, Result};
use crate::oware::{Board, Encoder, MAX_SEEDS, Rules, level_size};
use crate::table::{Table, as_values};

/// A source of stored values: anything that can tell the value of a
/// position of the stored domain.
pub trait Values {
    /// The stored value of `board` (which must be in the domain).
    fn value(&self, board: &Board) -> Result<i8>;
    /// The file the value of `board` comes from, for error messages.
    fn origin(&self, board: &Board) -> PathBuf;
}

/// A directory of `scores.N` files: one signed byte per position, index
/// order, no header.
#[derive(Debug)]
pub struct VuDir {
    dir: PathBuf,
    encoder: Encoder,
    maps: Mutex<HashMap<usize, Arc<Mmap>>>,
}

impl VuDir {
    /// The VU files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> VuDir {
        VuDir {
            dir: dir.into(),
            encoder: Encoder::new(MAX_SEEDS),
            maps: Mutex::new(HashMap::new()),
        }
    }

    /// Path of level `seeds`.
    pub fn path(&self, seeds: usize) -> PathBuf {
        self.dir.join(format!("scores.{seeds}"))
    }

    /// Levels present.
    pub fn levels(&self) -> Vec<usize> {
        (0..=MAX_SEEDS).filter(|&n| self.path(n).exists()).collect()
    }

    /// Maps level `seeds`, checking its size: `C(N+11,11) - C(N+5,11)` bytes.
    pub fn open(&self, seeds: usize) -> Result<Arc<Mmap>> {
        let mut maps = self.maps.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = maps.get(&seeds) {
            return Ok(m.clone());
        }
        let path = self.path(seeds);
        if !path.exists() {
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
        // SAFETY: read-only map; the published files are not modified while
        // in use (a changed file can give wrong values, never memory errors).
        let map = Arc::new(unsafe { Mmap::map(&f) }.map_err(|e| Error::io(&path, e))?);
        maps.insert(seeds, map.clone());
        Ok(map)
    }
}

impl Values for VuDir {
    fn value(&self, board: &Board) -> Result<i8> {
        let map = self.open(board.seeds())?;
        Ok(map[self.encoder.rank(board) as usize] as i8)
    }

    fn origin(&self, board: &Board) -> PathBuf {
        self.path(board.seeds())
    }
}

/// The tables of one rule set in a directory, opened level by level as
/// queries need them.
#[derive(Debug)]
pub struct Tables {
    db: Db,
    rules: Rules,
    encoder: Encoder,
    open: Mutex<HashMap<usize, Arc<Table>>>,
}

impl Tables {
    /// Reads `rules` tables from `db`.
    pub fn new(db: Db, rules: Rules) -> Tables {
        Tables {
            db,
            rules,
            encoder: Encoder::new(MAX_SEEDS),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The level `seeds`, opened once.
    fn table(&self, seeds: usize) -> Result<Arc<Table>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = open.get(&seeds) {
            return Ok(t.clone());
        }
        let t = Arc::new(self.db.open(self.rules, seeds)?);
        open.insert(seeds, t.clone());
        Ok(t)
    }
}

impl Values for Tables {
    fn value(&self, board: &Board) -> Result<i8> {
        self.table(board.seeds())?.get(self.encoder.rank(board))
    }

    fn origin(&self, board: &Board) -> PathBuf {
        self.db.table_path(self.rules, board.seeds())
    }
}

/// The first value of a level of `seeds` seeds outside `-seeds..=seeds`
/// (index `offset + i` for `values[i]`), as the error to report for `path`.
pub fn check_range(path: &Path, seeds: usize, offset: u64, values: &[i8]) -> Result<()> {
    let n = seeds.min(127) as i8;
    match values.iter().position(|v| !(-n..=n).contains(v)) {
        None => Ok(()),
        Some(i) => Err(Error::corrupt(
            path,
            Corruption::ValueRange {
                index: offset + i as u64,
                value: values[i],
                seeds,
            },
        )),
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

    /// The directory read.
    pub fn dir(&self) -> &Path {
        match self {
            Source::Tables(t) => t.db.dir(),
            Source::Vu(vu) => &vu.dir,
        }
    }

    /// Levels present.
    pub fn levels(&self) -> Vec<usize> {
        match self {
            Source::Tables(t) => t.db.levels(t.rules),
            Source::Vu(vu) => vu.levels(),
        }
    }

    /// Levels present, or [`Error::Missing`] when there are none.
    pub fn present(&self) -> Result<Vec<usize>> {
        match self {
            Source::Tables(t) => t.db.present(t.rules),
            Source::Vu(vu) => match vu.levels() {
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

    /// Opens level `seeds` (structure only), or says why it cannot be read.
    pub fn require(&self, seeds: usize) -> Result<()> {
        match self {
            Source::Tables(t) => t.table(seeds).map(|_| ()),
            Source::Vu(vu) => vu.open(seeds).map(|_| ()),
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
        let path = self.path(seeds);
        let mut offset = 0;
        let mut range = Ok(());
        self.for_each_chunk(seeds, |values| {
            if range.is_ok() {
                range = check_range(&path, seeds, offset, values);
            }
            offset += values.len() as u64;
        })?;
        range
    }

    /// All values of level `seeds`.
    pub fn load(&self, seeds: usize) -> Result<LevelData> {
        match self {
            Source::Tables(t) => {
                // The raw copy, when it matches, is mapped rather than the
                // table decompressed: large levels then cost page cache only.
                let table = t.table(seeds)?;
                match t.db.raw_copy(t.rules, seeds, &table) {
                    Some(map) => Ok(LevelData::Mapped(Arc::new(map))),
                    None => Ok(LevelData::Owned(table.read_all()?)),
                }
            }
            Source::Vu(vu) => Ok(LevelData::Mapped(vu.open(seeds)?)),
        }
    }

    /// Calls `f` with the values of level `seeds` in index order, in
    /// chunks: tables block by block (each checked), VU files in place.
    pub fn for_each_chunk(&self, seeds: usize, mut f: impl FnMut(&[i8])) -> Result<()> {
        match self {
            Source::Tables(t) => t.table(seeds)?.for_each_block(|v| {
                f(v);
                Ok(())
            }),
            Source::Vu(vu) => {
                f(as_values(&vu.open(seeds)?));
                Ok(())
            }
        }
    }

    /// Whether level `seeds` passed every check of `verify` as it is now
    /// (never, for VU files: nothing is recorded about them).
    pub fn is_verified(&self, seeds: usize) -> bool {
        match self {
            Source::Tables(t) => t.db.is_verified(t.rules, seeds),
            Source::Vu(_) => false,
        }
    }

    /// The table directory, when reading tables.
    pub fn db(&self) -> Option<(&Db, Rules)> {
        match self {
            Source::Tables(t) => Some((&t.db, t.rules)),
            Source::Vu(_) => None,
        }
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
}
