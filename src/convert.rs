//! Moving levels between our tables and the published VU layout
//! (`scores.N`: one signed byte per position, index order, no header).

use std::path::Path;

use crate::db::{Db, write_raw};
use crate::error::{Error, Missing, Result};
use crate::files::DirLock;
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
    std::fs::create_dir_all(&raw_dir).map_err(|e| Error::io(&raw_dir, e))?;
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
/// [`vu_rules`]), or every level present in `db` if `None`, each checked
/// first (a level not built is an error before anything is written),
/// holding `out`'s writer lock (two exports into one directory would share
/// each file's temporary name). Returns the levels written.
pub fn export_vu(
    db: &Db,
    rules: Rules,
    out: &Path,
    levels: Option<Vec<usize>>,
) -> Result<Vec<usize>> {
    vu_rules(rules)?;
    crate::files::check_dir(db.dir())?;
    let levels = match levels {
        Some(levels) => levels,
        None => db.present(rules)?,
    };
    for &seeds in &levels {
        db.open(rules, seeds)?;
    }
    let _lock = DirLock::acquire(out)?;
    for &seeds in &levels {
        let t = db.open(rules, seeds)?;
        t.verify()?;
        t.write_raw(&out.join(format!("scores.{seeds}")))?;
    }
    Ok(levels)
}
