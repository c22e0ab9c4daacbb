//! What the library tells while it builds or verifies, handed to Python:
//! notices to a Python function (the Python layer logs them), stages to
//! the command line's bars or lines, or to Python progress bars (tqdm in a
//! notebook), and each finished level to the caller's function
//! ([`ToPython::tell_level`]). The library runs with the GIL released;
//! every call into Python takes it again. (Build and verify tell stages
//! and notices from the thread that called them; a stage sink would be as
//! safe on a worker thread, since no lock of the library is held around
//! it and nothing holds the GIL while waiting for the workers.)
//!
//! Ctrl-C must stop the run after the level it is on, also when Python
//! first sees it inside a notice's call (a log handler) or a bar's: a
//! pending signal's exception (`KeyboardInterrupt`, or whatever a handler
//! raises), and anything raised there that is not an `Exception`, is kept
//! and ends the run at the next level's end, after the caller has heard
//! that level. An ordinary exception from a log handler or a bar is
//! reported as Python reports errors it cannot raise, and the run goes on
//! (a bar that failed is not used again).

use std::ops::ControlFlow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mancaladb::progress::{Notice, Observer, StageSink, Terminal};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use crate::errors::IntoPy;

/// Where a run's stages are shown.
pub enum Stages {
    /// Nowhere.
    Hidden,
    /// As the command line shows them (bars on a terminal, else lines).
    Terminal,
    /// In Python bars: `new_bar(label, total)` returns an object with
    /// `update(n)` and `close()`, as tqdm's bars have; updated at most once
    /// per `every`.
    Python {
        /// Makes a stage's bar.
        new_bar: Py<PyAny>,
        /// Least time between two updates of a bar.
        every: Duration,
    },
}

impl Stages {
    /// `False` or `None`: hidden; `True`: the command line's;
    /// `(new_bar, seconds)`: Python bars made by `new_bar`, updated at most
    /// every `seconds`.
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Stages> {
        if obj.is_none() {
            return Ok(Stages::Hidden);
        }
        if let Ok((new_bar, seconds)) = obj.extract::<(Py<PyAny>, f64)>() {
            return Ok(Stages::Python {
                new_bar,
                every: Duration::try_from_secs_f64(seconds)
                    .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?,
            });
        }
        Ok(if obj.extract::<bool>()? {
            Stages::Terminal
        } else {
            Stages::Hidden
        })
    }
}

/// The observer of a build or a verify run from Python.
pub struct ToPython {
    stages: Stages,
    /// `on_notice(is_warning, text, fields as JSON)`.
    on_notice: Py<PyAny>,
    /// What stops the run at the next level's end (see the module docs).
    interrupt: Mutex<Option<PyErr>>,
}

impl ToPython {
    /// Notices to `on_notice`, stages to `stages`.
    pub fn new(stages: Stages, on_notice: Py<PyAny>) -> ToPython {
        ToPython {
            stages,
            on_notice,
            interrupt: Mutex::new(None),
        }
    }

    /// Hands a finished level's report, as JSON text, to `on_level`, then
    /// runs pending signal handlers. An exception from either, or an
    /// interrupt kept from a notice or a bar, is put in `stopped` and stops
    /// the run after this level. (A signal that arrives just before is
    /// raised inside `on_level`: Python runs handlers in the first Python
    /// code it runs.)
    pub fn tell_level(
        &self,
        on_level: &Py<PyAny>,
        report: &impl serde::Serialize,
        stopped: &mut Option<PyErr>,
    ) -> ControlFlow<()> {
        let report = serde_json::to_string(report).expect("a report serializes");
        let told = Python::attach(|py| {
            on_level.call1(py, (report,))?;
            py.check_signals()
        });
        match told.err().or_else(|| self.take_interrupt()) {
            None => ControlFlow::Continue(()),
            Some(e) => {
                *stopped = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    /// How a run that returned `done` (the reports of the levels done)
    /// ends for Python: the reports as JSON text, or the exception that
    /// stopped it after a level (`stopped`, from [`ToPython::tell_level`]),
    /// or an interrupt kept from a notice, a bar or a wait, carrying the
    /// reports as `_mancaladb_results`, the last level's included (an
    /// interrupt may come before `on_level` was told of it; a check 3 can
    /// take hours). An interrupt wins over the library's error (the error
    /// is what the interrupt caused, such as a wait given up).
    pub fn finish<T: serde::Serialize>(
        &self,
        py: Python<'_>,
        done: mancaladb::Result<T>,
        stopped: Option<PyErr>,
    ) -> PyResult<String> {
        let reports = done.py().map_err(|e| self.take_interrupt().unwrap_or(e))?;
        let reports = serde_json::to_string(&reports).expect("reports serialize");
        if let Some(e) = stopped.or_else(|| self.take_interrupt()) {
            e.value(py).setattr("_mancaladb_results", reports)?;
            return Err(e);
        }
        Ok(reports)
    }

    /// An interrupt kept from a notice or a bar after the last level's end.
    fn take_interrupt(&self) -> Option<PyErr> {
        self.interrupt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Keeps `e` to stop the run (the first one kept wins).
    fn keep(&self, e: PyErr) {
        self.interrupt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    }

    /// Deals with an exception from a log handler or a bar: an interrupt
    /// is kept, anything else reported as unraisable.
    fn raised(&self, py: Python<'_>, e: PyErr) {
        if e.is_instance_of::<PyException>(py) {
            e.write_unraisable(py, None);
        } else {
            self.keep(e);
        }
    }

    /// Runs pending signal handlers; what they raise is kept.
    fn signals(&self, py: Python<'_>) {
        if let Err(e) = py.check_signals() {
            self.keep(e);
        }
    }
}

impl Observer for ToPython {
    fn stage(&self, label: &str, total: u64) -> Option<Box<dyn StageSink + '_>> {
        match &self.stages {
            Stages::Hidden => None,
            Stages::Terminal => Terminal.stage(label, total),
            Stages::Python { new_bar, every } => Python::attach(|py| {
                self.signals(py);
                match new_bar.call1(py, (label, total)) {
                    Ok(bar) => Some(Box::new(PythonBar {
                        to: self,
                        bar,
                        every: every.as_millis() as u64,
                        start: Instant::now(),
                        done: AtomicU64::new(0),
                        shown: AtomicU64::new(0),
                        shown_at: AtomicU64::new(0),
                        failed: AtomicBool::new(false),
                    }) as Box<dyn StageSink>),
                    Err(e) => {
                        self.raised(py, e);
                        None
                    }
                }
            }),
        }
    }

    /// A wait for another process goes on until a signal's handler
    /// raises (Ctrl-C): that is kept, and the run stops.
    fn keep_waiting(&self) -> bool {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => true,
            Err(e) => {
                self.keep(e);
                false
            }
        })
    }

    fn notice(&self, notice: &Notice) {
        // Paths are serialized lossily: every notice serializes.
        let fields = serde_json::to_string(notice).unwrap_or_default();
        Python::attach(|py| {
            self.signals(py);
            let told = self
                .on_notice
                .call1(py, (notice.is_warning(), notice.to_string(), fields));
            if let Err(e) = told {
                self.raised(py, e);
            }
        });
    }
}

/// A stage shown in a Python bar, closed when the stage ends or is dropped
/// (a run that fails mid-stage).
struct PythonBar<'a> {
    to: &'a ToPython,
    bar: Py<PyAny>,
    /// Least milliseconds between two updates.
    every: u64,
    start: Instant,
    /// Units done, as the library told them.
    done: AtomicU64,
    /// Units the bar has been told of.
    shown: AtomicU64,
    /// When the bar was last updated, in milliseconds from `start`.
    shown_at: AtomicU64,
    /// The bar raised: it is not called again.
    failed: AtomicBool,
}

impl PythonBar<'_> {
    /// Calls `f` on the bar, unless it failed before.
    fn call(&self, py: Python<'_>, f: impl FnOnce(&Py<PyAny>) -> PyResult<Py<PyAny>>) {
        if self.failed.load(Ordering::Relaxed) {
            return;
        }
        if let Err(e) = f(&self.bar) {
            self.failed.store(true, Ordering::Relaxed);
            self.to.raised(py, e);
        }
    }

    /// Tells the bar what it has not heard yet.
    fn show(&self, py: Python<'_>) {
        let done = self.done.load(Ordering::Relaxed);
        let new = done.saturating_sub(self.shown.fetch_max(done, Ordering::Relaxed));
        if new > 0 {
            self.call(py, |bar| bar.call_method1(py, "update", (new,)));
        }
    }
}

impl StageSink for PythonBar<'_> {
    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        let now = self.start.elapsed().as_millis() as u64;
        let at = self.shown_at.load(Ordering::Relaxed);
        // One thread wins the update that is due; any others go on.
        if now >= at + self.every
            && self
                .shown_at
                .compare_exchange(at, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            Python::attach(|py| {
                self.to.signals(py);
                self.show(py);
            });
        }
    }

    fn finish(self: Box<Self>, _seconds: f64) {
        Python::attach(|py| self.show(py));
        // Dropped here: closed.
    }
}

impl Drop for PythonBar<'_> {
    fn drop(&mut self) {
        Python::attach(|py| self.call(py, |bar| bar.call_method0(py, "close")));
    }
}
