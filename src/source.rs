//! Where a level's values come from: our compressed tables, or a directory
//! of published-layout `scores.N` files (the VU Awari database), read in
//! place through memory maps with no import step.

use std::collections::HashMap;
use std::fs::File;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::oware::{Board, Encoder, MAX_SEEDS, Rules, level_size};
use crate::query::Values;
use crate::table::as_values;

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

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of level `seeds`.
    pub fn path(&self, seeds: usize) -> PathBuf {
        self.dir.join(format!("scores.{seeds}"))
    }

    /// Levels present.
    pub fn levels(&self) -> Vec<usize> {
        (0..=MAX_SEEDS).filter(|&n| self.path(n).exists()).collect()
    }

    /// The error for a directory without any `scores.N`.
    pub fn nothing_found(&self) -> Error {
        Error::Missing {
            what: "scores.N files".into(),
            dir: self.dir.clone(),
            hint: "download them, or export them: mancaladb export --format vu".into(),
        }
    }

    /// Maps level `seeds`, checking its size: `C(N+11,11) - C(N+5,11)` bytes.
    pub fn open(&self, seeds: usize) -> Result<Arc<Mmap>> {
        let mut maps = self.maps.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = maps.get(&seeds) {
            return Ok(m.clone());
        }
        let path = self.path(seeds);
        if !path.exists() {
            return Err(Error::Missing {
                what: format!("scores.{seeds}"),
                dir: self.dir.clone(),
                hint: "download it, or export it: mancaladb export --format vu".into(),
            });
        }
        let f = File::open(&path).map_err(|e| Error::io(&path, e))?;
        let want = level_size(seeds);
        let len = f.metadata().map_err(|e| Error::io(&path, e))?.len();
        if len != want {
            return Err(Error::corrupt(
                &path,
                format!("{len} bytes; level {seeds} has {want} positions"),
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

    fn origin(&self, board: &Board) -> String {
        self.path(board.seeds()).display().to_string()
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
pub enum Source {
    /// Tables in a directory.
    Tables(Db, Rules),
    /// Published-layout files.
    Vu(VuDir),
}

impl Source {
    /// Levels present.
    pub fn levels(&self) -> Vec<usize> {
        match self {
            Source::Tables(db, rules) => db.levels(*rules),
            Source::Vu(vu) => vu.levels(),
        }
    }

    /// Levels present, or the error saying how to get some.
    pub fn present(&self) -> Result<Vec<usize>> {
        let levels = self.levels();
        if levels.is_empty() {
            return Err(match self {
                Source::Tables(db, rules) => db.nothing_built(*rules),
                Source::Vu(vu) => vu.nothing_found(),
            });
        }
        Ok(levels)
    }

    /// The file holding level `seeds`.
    pub fn path(&self, seeds: usize) -> PathBuf {
        match self {
            Source::Tables(db, rules) => db.table_path(*rules, seeds),
            Source::Vu(vu) => vu.path(seeds),
        }
    }

    /// Check 1: the file of level `seeds` is sound. Tables: header, block
    /// index, whole-file checksum (and, when loaded, every block and the
    /// content checksum); VU files: their size.
    pub fn integrity(&self, seeds: usize) -> Result<()> {
        match self {
            Source::Tables(db, rules) => db.open(*rules, seeds)?.verify().map(|_| ()),
            Source::Vu(vu) => vu.open(seeds).map(|_| ()),
        }
    }

    /// All values of level `seeds`.
    pub fn load(&self, seeds: usize) -> Result<LevelData> {
        match self {
            Source::Tables(db, rules) => {
                // The raw copy, when it matches, is mapped rather than the
                // table decompressed: large levels then cost page cache only.
                let table = db.open(*rules, seeds)?;
                match db.raw_copy(*rules, seeds, &table) {
                    Some(map) => Ok(LevelData::Mapped(Arc::new(map))),
                    None => Ok(LevelData::Owned(table.read_all()?)),
                }
            }
            Source::Vu(vu) => Ok(LevelData::Mapped(vu.open(seeds)?)),
        }
    }
}
