//! Building tables from Python: the library's builder with the GIL
//! released. After each level the caller's function gets the level's
//! report (as JSON text, which the Python layer turns into a dict), and
//! pending signals are checked: Ctrl-C, or an exception in that function,
//! stops the build after the level it was on (finished levels stay). The
//! library's notices go to another function (the Python layer logs them),
//! its stages to the command line's bars or lines if asked for.
//!
//! Waiting for another writer is done here, not in the library's blocking
//! lock: a signal would end that wait with `InterruptedError`, or, retried
//! there, never let Ctrl-C through. Here the lock is tried every
//! [`LOCK_POLL`], and signal handlers run in between (PEP 475): one that
//! returns lets the wait go on, one that raises ends it with its exception.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Duration;

use mancaladb::Error;
use mancaladb::build::build_until;
use mancaladb::db::Db;
use mancaladb::exchange::Alone;
use mancaladb::oware::Rules;
use mancaladb::progress::{Notice, Observer, Progress, StageSink, Terminal};
use pyo3::prelude::*;

use crate::errors::IntoPy;

/// How often a build that waits for another writer tries the lock again.
const LOCK_POLL: Duration = Duration::from_millis(100);

/// The build's observer: each notice goes to `on_notice(is_warning, text,
/// fields as JSON)`; stages to [`Terminal`] when `bars`.
struct ToPython {
    bars: bool,
    on_notice: Py<PyAny>,
}

impl Observer for ToPython {
    fn stage(&self, label: &str, total: u64) -> Option<Box<dyn StageSink + '_>> {
        if self.bars {
            Terminal.stage(label, total)
        } else {
            None
        }
    }

    fn notice(&self, notice: &Notice) {
        let fields = serde_json::to_string(notice).expect("a notice serializes");
        Python::attach(|py| {
            let told = self
                .on_notice
                .call1(py, (notice.is_warning(), notice.to_string(), fields));
            // A failing log handler is reported as Python reports errors
            // it cannot raise; the build goes on.
            if let Err(e) = told {
                e.write_unraisable(py, None);
            }
        });
    }
}

/// Builds levels `0..=max_seeds` of `rules` into `db`; returns the reports
/// as JSON text. `bars`: the command line's progress bars on standard
/// error (lines off a terminal), else none. `wait`: wait for another
/// writer of `db` to finish rather than fail.
#[pyfunction]
#[pyo3(signature = (db, max_seeds, rules, bars, wait, on_level, on_notice))]
#[allow(clippy::too_many_arguments)] // one per keyword of `mancaladb.build`
pub fn build(
    py: Python<'_>,
    db: PathBuf,
    max_seeds: usize,
    rules: &str,
    bars: bool,
    wait: bool,
    on_level: Py<PyAny>,
    on_notice: Py<PyAny>,
) -> PyResult<String> {
    let rules: Rules = rules.parse().py()?;
    let observer = ToPython { bars, on_notice };
    let progress = Progress::to(&observer);
    let db = Db::new(db);
    let mut stopped: Option<PyErr> = None;
    let reports = loop {
        let tried = py.detach(|| {
            build_until(&db, rules, 0..=max_seeds, &Alone, progress, false, |r| {
                let report = serde_json::to_string(r).expect("a report serializes");
                let called = Python::attach(|py| {
                    py.check_signals()?;
                    on_level.call1(py, (report,)).map(drop)
                });
                match called {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        stopped = Some(e);
                        ControlFlow::Break(())
                    }
                }
            })
        });
        match tried {
            Err(Error::Locked { .. }) if wait => {
                py.detach(|| std::thread::sleep(LOCK_POLL));
                py.check_signals()?;
            }
            done => break done.py()?,
        }
    };
    if let Some(e) = stopped {
        return Err(e);
    }
    Ok(serde_json::to_string(&reports).expect("reports serialize"))
}
