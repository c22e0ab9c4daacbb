//! Moving levels between our tables and the published VU layout
//! (`scores.N`: one signed byte per position, index order, no header).

use std::path::{Path, PathBuf};

use crate::db::{Db, write_raw};
use crate::error::{Error, Missing, Result};
use crate::files::{check_replaceable, remove_if_present};
use crate::lock::DirLock;
use crate::oware::Rules;
use crate::source::{VuDir, vu_rules};
use crate::stored::raw_window;
use crate::table::{self, check_values};

/// Imports `levels` (every `scores.N` there if `None`) of the directory
/// `vu` (awari values: [`vu_rules`]) as tables of `rules` in `db`, holding
/// the directory's writer lock from the first look at its tables. What can
/// be found wrong without writing is an error before anything is written:
/// a level not in `vu`, a file of the wrong size or with a value outside
/// `-N..=N`, a sound table of a level there already that holds other
/// values (a damaged one is replaced, one with the same values kept), an
/// output place that is not a regular file. A failed write stops the
/// import at that level and leaves the complete tables of the levels
/// before it. Each level written gets the raw copy a build would keep
/// ([`raw_window`] of the highest level there, within `db`'s budget), or
/// loses a copy it had; the copies of other levels are left as they are.
/// Returns what it did.
pub fn import_vu(db: &Db, rules: Rules, vu: &Path, levels: Option<Vec<usize>>) -> Result<Imported> {
    vu_rules(rules)?;
    crate::files::existing_dir(vu)?;
    let files = VuDir::new(vu);
    let levels = match levels {
        Some(levels) => levels,
        None => files.levels()?,
    };
    if levels.is_empty() {
        return Err(Error::Missing(Missing::VuLevels {
            dir: vu.to_path_buf(),
        }));
    }
    for &seeds in &levels {
        let map = files.map_level(seeds)?;
        check_values(&files.path(seeds), seeds, 0, table::as_values(&map))?;
    }
    let raw_dir = db.raw_dir(rules);
    crate::files::check_dir(&raw_dir)?; // a file at `raw` or `raw/awari`, named as such
    // Under the lock: no other writer changes a table between the look
    // below and the write.
    let _lock = DirLock::acquire(db.dir())?;
    let mut imported = Imported::default();
    for &seeds in &levels {
        let map = files.map_level(seeds)?; // mapped once: the bytes checked above
        match holds_already(db, rules, seeds, &files.path(seeds), table::as_values(&map))? {
            true => imported.kept.push(seeds),
            false => imported.written.push(seeds),
        }
    }
    let top = db
        .levels(rules)?
        .into_iter()
        .chain(levels.iter().copied())
        .max();
    let window = raw_window(top.map_or(0, |n| n + 2), db.raw_cache());
    for &seeds in &imported.written {
        check_replaceable(&db.table_path(rules, seeds))?;
        check_replaceable(&db.raw_path(rules, seeds))?;
    }
    crate::files::create_dirs(&raw_dir)?;
    // A table written and then its raw copy refused would break the
    // promise above: the directories written are tried first.
    if !imported.written.is_empty() {
        crate::files::check_files_can_be_created(db.dir())?;
    }
    if imported.written.iter().any(|n| window.contains(n)) {
        crate::files::check_files_can_be_created(&raw_dir)?;
    }
    // What a killed import or build left under a temporary name.
    crate::files::remove_leftovers(db.dir(), |name| name.ends_with(".mdb.tmp"))?;
    crate::files::remove_leftovers(&raw_dir, |name| name.ends_with(".tmp"))?;
    for &seeds in &imported.written {
        let map = files.map_level(seeds)?;
        let values = table::as_values(&map);
        table::write_table(
            &db.table_path(rules, seeds),
            Db::table_id(rules, seeds),
            values,
        )?;
        let raw = db.raw_path(rules, seeds);
        match window.contains(&seeds) {
            true => write_raw(&raw, values)?,
            false => remove_if_present(&raw)?, // another level's values, maybe
        }
    }
    Ok(imported)
}

/// What [`import_vu`] did: the levels it wrote, and those it found in the
/// table directory already with the same values.
#[derive(Debug, Default)]
pub struct Imported {
    /// Levels written.
    pub written: Vec<usize>,
    /// Levels whose sound table held the same values already.
    pub kept: Vec<usize>,
}

/// Whether the table of level `seeds` holds `values` (read from `from`)
/// already: false when there is none or it is damaged (to be replaced), an
/// error naming both when it is sound and holds other values.
fn holds_already(db: &Db, rules: Rules, seeds: usize, from: &Path, values: &[i8]) -> Result<bool> {
    if !db.has_table(rules, seeds)? {
        return Ok(false);
    }
    let table = match db.open(rules, seeds).and_then(|t| t.verify().map(|_| t)) {
        Ok(table) => table,
        Err(Error::Corrupt { .. }) => return Ok(false),
        Err(e) => return Err(e),
    };
    let stored = table.header().content_sha256;
    let importing = table::sha256(table::as_bytes(values));
    if stored == importing {
        return Ok(true);
    }
    Err(Error::Invalid(format!(
        "{} holds other values than {} (content sha256 {} against {}): remove it first to replace it",
        db.table_path(rules, seeds).display(),
        from.display(),
        &table::hex(&stored)[..16],
        &table::hex(&importing)[..16],
    )))
}

/// Writes `scores.N` into `out` for `levels` of `rules` (awari:
/// [`vu_rules`]), or every level present in `db` if `None`, holding `out`'s
/// writer lock (two exports into one directory would share each file's
/// temporary name). What can be found wrong without writing is an error
/// before anything is written: a level not built, a table whose file
/// checksum fails, an output place that is not a regular file
/// (`check_replaceable`). A value out of range in a table whose
/// checksums hold, or a failed write, stops the export at that level and
/// leaves the complete files of the levels before it. A link at
/// `scores.N` is replaced by the file, as every file the crate writes is.
/// Returns the levels written.
pub fn export_vu(
    db: &Db,
    rules: Rules,
    out: &Path,
    levels: Option<Vec<usize>>,
) -> Result<Vec<usize>> {
    vu_rules(rules)?;
    crate::files::existing_dir(db.dir())?;
    let levels = match levels {
        Some(levels) => levels,
        None => db.present(rules)?,
    };
    db.require_levels(rules, &levels)?;
    let tables = levels
        .iter()
        .map(|&seeds| db.open(rules, seeds))
        .collect::<Result<Vec<_>>>()?;
    let files: Vec<PathBuf> = levels
        .iter()
        .map(|seeds| out.join(format!("scores.{seeds}")))
        .collect();
    // Before the lock, which makes `out`: a refused export leaves nothing.
    crate::files::check_dir(out)?;
    for (t, file) in tables.iter().zip(&files) {
        check_replaceable(file)?;
        t.verify()?;
    }
    let _lock = DirLock::acquire(out)?;
    // What a killed export left: a `scores.N.tmp` as large as its level,
    // which no other export of another level would replace.
    crate::files::remove_leftovers(out, is_vu_tmp)?;
    // Each table let go once written, so that the files' pages are not
    // all resident at the end.
    for (t, file) in tables.into_iter().zip(&files) {
        t.write_raw(file)?;
    }
    Ok(levels)
}

/// Whether `name` is the temporary name of a VU file being written,
/// `scores.N.tmp`.
fn is_vu_tmp(name: &str) -> bool {
    name.strip_prefix("scores.")
        .and_then(|rest| rest.strip_suffix(".tmp"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
