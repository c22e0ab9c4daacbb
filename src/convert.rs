//! Moving levels between our tables and the published VU layout
//! (`scores.N`: one signed byte per position, index order, no header).

use std::path::{Path, PathBuf};

use crate::db::{Db, write_raw};
use crate::error::{Error, Missing, Result};
use crate::files::{DirLock, check_replaceable};
use crate::oware::Rules;
use crate::source::{VuDir, vu_rules};
use crate::table::{self, check_values};

/// Imports every `scores.N` of the directory `vu` (awari values:
/// [`vu_rules`]) as a table of `rules` in
/// `db` (and its raw working copy), holding the directory's writer lock.
/// A file of the wrong size or with a value outside `-N..=N` refuses the
/// import, before any level is written. Returns the levels imported.
pub fn import_vu(db: &Db, rules: Rules, vu: &Path) -> Result<Vec<usize>> {
    vu_rules(rules)?;
    crate::files::check_dir(vu)?;
    let files = VuDir::new(vu);
    let levels = files.levels()?;
    if levels.is_empty() {
        return Err(Error::Missing(Missing::VuLevels {
            dir: vu.to_path_buf(),
        }));
    }
    for &seeds in &levels {
        let map = files.open(seeds)?;
        check_values(&files.path(seeds), seeds, 0, table::as_values(&map))?;
    }
    let _lock = DirLock::acquire(db.dir())?;
    let raw_dir = db.raw_dir(rules);
    crate::files::create_dirs(&raw_dir)?;
    for &seeds in &levels {
        let map = files.open(seeds)?; // mapped once: the bytes checked above
        let values = table::as_values(&map);
        table::write_table(
            &db.table_path(rules, seeds),
            Db::table_id(rules, seeds),
            values,
        )?;
        write_raw(&db.raw_path(rules, seeds), values)?;
    }
    Ok(levels)
}

/// Writes `scores.N` into `out` for `levels` of `rules` (awari:
/// [`vu_rules`]), or every level present in `db` if `None`, holding `out`'s
/// writer lock (two exports into one directory would share each file's
/// temporary name). What can be found wrong without writing is an error
/// before anything is written: a level not built, a table whose file
/// checksum fails, an output place that is not a regular file
/// ([`check_replaceable`]). A value out of range in a table whose
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
    for (t, file) in tables.iter().zip(&files) {
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
