//! What the library tells while it builds or verifies, handed to Python:
//! notices to a Python function (the Python layer logs them), stages to
//! the command line's bars or lines when asked for, and each finished
//! level to the caller's function ([`ToPython::tell_level`]). The library
//! tells notices on the thread that called it, which holds no GIL while
//! the library runs: each call takes it again.
//!
//! Ctrl-C must stop the run after the level it is on, also when Python
//! first sees it inside a notice's call (a log handler): an exception that
//! is not an `Exception` (`KeyboardInterrupt`, `SystemExit`, or what a
//! signal handler raises, pending when the notice is told) is kept and
//! ends the run at the next level's end. An ordinary exception from a log
//! handler is reported as Python reports errors it cannot raise, and the
//! run goes on.

use std::ops::ControlFlow;
use std::sync::Mutex;

use mancaladb::progress::{Notice, Observer, StageSink, Terminal};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

/// The observer of a build or a verify run from Python.
pub struct ToPython {
    /// Show stages as the command line does.
    bars: bool,
    /// `on_notice(is_warning, text, fields as JSON)`.
    on_notice: Py<PyAny>,
    /// What stops the run at the next level's end (see the module docs).
    interrupt: Mutex<Option<PyErr>>,
}

impl ToPython {
    /// Notices to `on_notice`, stages to the command line's bars if `bars`.
    pub fn new(bars: bool, on_notice: Py<PyAny>) -> ToPython {
        ToPython {
            bars,
            on_notice,
            interrupt: Mutex::new(None),
        }
    }

    /// Hands a finished level's report, as JSON text, to `on_level`, after
    /// running pending signal handlers. An exception from either, or an
    /// interrupt kept from a notice, is put in `stopped` and stops the run
    /// after this level.
    pub fn tell_level(
        &self,
        on_level: &Py<PyAny>,
        report: &impl serde::Serialize,
        stopped: &mut Option<PyErr>,
    ) -> ControlFlow<()> {
        if let Some(e) = self.take_interrupt() {
            *stopped = Some(e);
            return ControlFlow::Break(());
        }
        let report = serde_json::to_string(report).expect("a report serializes");
        let told = Python::attach(|py| {
            py.check_signals()?;
            on_level.call1(py, (report,)).map(drop)
        });
        match told {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                *stopped = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    /// An interrupt kept from a notice told after the last level's end.
    pub fn take_interrupt(&self) -> Option<PyErr> {
        self.interrupt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn keep(&self, e: PyErr) {
        self.interrupt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    }
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
        // Paths are serialized lossily: every notice serializes.
        let fields = serde_json::to_string(notice).unwrap_or_default();
        Python::attach(|py| {
            if let Err(e) = py.check_signals() {
                self.keep(e);
            }
            let told = self
                .on_notice
                .call1(py, (notice.is_warning(), notice.to_string(), fields));
            match told {
                Ok(_) => {}
                Err(e) if e.is_instance_of::<PyException>(py) => e.write_unraisable(py, None),
                Err(e) => self.keep(e),
            }
        });
    }
}
