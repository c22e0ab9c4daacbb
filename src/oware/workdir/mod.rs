//! The level solver's files: seed lists and checkpoints of one rank's slice.
//!
//! The solver keeps one byte per position in memory (see
//! [`super::solve`]); what does not fit in that byte goes to a work
//! directory, one per rank and level:
//!
//! * [`seeds`]: the seed lists `w.<t>` and `l.<t>`, every position's best
//!   capture sorted by threshold;
//! * [`checkpoint`]: the checkpoints, `state.<t>` between thresholds and
//!   `forward.<walk>.<done>` inside the forward pass.
//!
//! Here: what goes with the whole directory, checkpoints first ([`wipe`]),
//! and what killed writes left.

pub mod checkpoint;
pub mod seeds;

use std::fs::DirEntry;
use std::path::Path;

use crate::error::{Error, Result};

/// Removes the temporary files that checkpoint writes killed part-way
/// left in the work directory `dir` (none is being written when this is
/// called). Each checkpoint has its own name, so they would pile up,
/// gigabytes each at the top levels.
fn remove_unfinished(dir: &Path) -> Result<()> {
    crate::files::remove_leftovers(dir, |name| name.ends_with(".tmp"))
}

/// Removes the work directory `dir` with all it holds (nothing if it is not
/// there), its checkpoints first: a wipe stopped part-way (a kill) leaves
/// seed lists without a checkpoint, which are never read (the level starts
/// afresh), never a checkpoint whose lists are gone.
pub fn wipe(dir: &Path) -> Result<()> {
    for e in entries(dir)? {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("state.") || name.starts_with("forward.") {
            crate::files::remove_if_present(&e.path())?;
        }
    }
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(dir, e)),
        _ => Ok(()),
    }
}

/// Removes every file of `dir` whose name begins with one of `kinds`
/// (`state.`, `forward.`) but `keep`: the checkpoints this slice reads and
/// those it cannot (another slice's, another version's, a header damaged),
/// which would otherwise take their room on disk until the level ends.
/// The work directory is this rank's alone.
fn remove_checkpoints_except(dir: &Path, kinds: &[&str], keep: &Path) -> Result<()> {
    for e in entries(dir)? {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if kinds.iter().any(|k| name.starts_with(k)) && e.path() != keep {
            crate::files::remove_if_present(&e.path())?;
        }
    }
    Ok(())
}

/// Whether `dir` holds checkpoint files (complete ones, of any slice or
/// version): a directory about to be wiped then throws work away.
pub fn holds_checkpoints(dir: &Path) -> Result<bool> {
    Ok(entries(dir)?.iter().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        (name.starts_with("state.") || name.starts_with("forward.")) && !name.ends_with(".tmp")
    }))
}

/// The entries of directory `dir`, none if it does not exist; any other
/// failure to list it is an error.
fn entries(dir: &Path) -> Result<Vec<DirEntry>> {
    match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        listing => listing
            .and_then(|l| l.collect::<std::io::Result<Vec<_>>>())
            .map_err(|e| Error::io(dir, e)),
    }
}

/// A fresh, empty directory for a test of the work directory's files.
#[cfg(test)]
pub(super) fn scratch(name: &str) -> std::path::PathBuf {
    crate::files::scratch_dir("workdir", name)
}
