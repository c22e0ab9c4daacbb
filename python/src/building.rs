//! Building tables from Python: the library's builder with the GIL
//! released. After each level the caller's function gets the level's
//! report (as JSON text, which the Python layer turns into a dict), and
//! pending signals are checked: Ctrl-C, or an exception in that function,
//! stops the build after the level it was on (finished levels stay, their
//! reports in the exception's `_mancaladb_results`). The
//! library's notices and stages go to a [`ToPython`] observer.
//!
//! Waiting for another writer (`wait`) is the library's: it tries the lock
//! every 100 ms and asks the observer whether to go on, which runs signal
//! handlers in between (PEP 475): one that returns lets the wait go on, one
//! that raises ends it with its exception.

use std::path::PathBuf;

use mancaladb::build::Build;
use mancaladb::db::Db;
use mancaladb::oware::Rules;
use mancaladb::progress::Progress;
use pyo3::prelude::*;

use crate::errors::IntoPy;
use crate::observer::{Stages, ToPython};

/// Builds levels `0..=max_seeds` of `rules` into `db`; returns the reports
/// as JSON text. `stages`: where stages are shown (see [`Stages::of`]).
/// `wait`: wait for another writer of `db` to finish rather than fail.
#[pyfunction]
#[pyo3(signature = (db, max_seeds, rules, stages, wait, on_level, on_notice))]
#[allow(clippy::too_many_arguments)] // one per keyword of `mancaladb.build`
pub fn build(
    py: Python<'_>,
    db: PathBuf,
    max_seeds: usize,
    rules: &str,
    stages: &Bound<'_, PyAny>,
    wait: bool,
    on_level: Py<PyAny>,
    on_notice: Py<PyAny>,
) -> PyResult<String> {
    let rules: Rules = rules.parse().py()?;
    let observer = ToPython::new(Stages::of(stages)?, on_notice);
    let progress = Progress::to(&observer);
    let db = Db::new(db);
    let mut stopped: Option<PyErr> = None;
    let reports = crate::workers::detach(py, || {
        Build::new(&db, rules, 0..=max_seeds)
            .progress(progress)
            .wait_for_writer(wait)
            .run_with(|r| observer.tell_level(&on_level, r, &mut stopped))
    })?;
    observer.finish(py, reports, stopped)
}
