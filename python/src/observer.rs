//! What the library tells while it builds or verifies, handed to Python:
//! notices to a Python function (the Python layer logs them), stages to
//! the command line's bars or lines, or to Python progress bars (tqdm in a
//! notebook), and each finished level to the caller's function
//! ([`ToPython::tell_level`]). The library
//! tells notices on the thread that called it, which holds no GIL while
//! the library runs: each call takes it again.
//!
//! Ctrl-C must stop the run after the level it is on, also when Python
//! first sees it inside a notice's call (a log handler): an exception that
//! is not an `Exception` (`KeyboardInterrupt`, `SystemExit`, or what a
//! signal handler raises, pending when the notice is told) is kept and
//! ends the run at the next level's end. An ordinary exception from a log
//! handler or a bar is reported as Python reports errors it cannot raise,
//! and the run goes on.
//!
//! A Python bar hears a stage's advance from the library's worker threads,
//! which count it in an atomic and, at most every [`BAR_EVERY`], take the
//! GIL to update the bar (the thread that called the library holds no GIL
//! meanwhile, and waits for the workers only outside Python calls).

use std::ops::ControlFlow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mancaladb::progress::{Notice, Observer, StageSink, Terminal};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

/// How often a Python bar is updated, at most.
const BAR_EVERY: Duration = Duration::from_millis(250);

/// Where a run's stages are shown.
pub enum Stages {
    /// Nowhere.
    Hidden,
    /// As the command line shows them (bars on a terminal, else lines).
    Terminal,
    /// In Python bars: `new_bar(label, total)` returns an object with
    /// `update(n)` and `close()`, as tqdm's bars have.
    Python(Py<PyAny>),
}

impl Stages {
    /// `False` or `None`: hidden; `True`: the command line's; a callable:
    /// Python bars made by it.
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Stages> {
        if obj.is_none() {
            Ok(Stages::Hidden)
        } else if obj.is_callable() {
            Ok(Stages::Python(obj.clone().unbind()))
        } else if obj.extract::<bool>()? {
            Ok(Stages::Terminal)
        } else {
            Ok(Stages::Hidden)
        }
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

    /// Deals with an exception from Python code the library's run called:
    /// an interrupt is kept, anything else reported as unraisable.
    fn raised(&self, py: Python<'_>, e: PyErr) {
        if e.is_instance_of::<PyException>(py) {
            e.write_unraisable(py, None);
        } else {
            self.interrupt
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(e);
        }
    }
}

impl Observer for ToPython {
    fn stage(&self, label: &str, total: u64) -> Option<Box<dyn StageSink + '_>> {
        match &self.stages {
            Stages::Hidden => None,
            Stages::Terminal => Terminal.stage(label, total),
            Stages::Python(new_bar) => {
                Python::attach(|py| match new_bar.call1(py, (label, total)) {
                    Ok(bar) => Some(Box::new(PythonBar {
                        to: self,
                        bar,
                        start: Instant::now(),
                        done: AtomicU64::new(0),
                        shown: AtomicU64::new(0),
                        shown_at: AtomicU64::new(0),
                    }) as Box<dyn StageSink>),
                    Err(e) => {
                        self.raised(py, e);
                        None
                    }
                })
            }
        }
    }

    fn notice(&self, notice: &Notice) {
        // Paths are serialized lossily: every notice serializes.
        let fields = serde_json::to_string(notice).unwrap_or_default();
        Python::attach(|py| {
            if let Err(e) = py.check_signals() {
                self.raised(py, e);
            }
            let told = self
                .on_notice
                .call1(py, (notice.is_warning(), notice.to_string(), fields));
            if let Err(e) = told {
                self.raised(py, e);
            }
        });
    }
}

/// A stage shown in a Python bar.
struct PythonBar<'a> {
    to: &'a ToPython,
    bar: Py<PyAny>,
    start: Instant,
    /// Units done, as the library told them.
    done: AtomicU64,
    /// Units the bar has been told of.
    shown: AtomicU64,
    /// When the bar was last updated, in milliseconds from `start`.
    shown_at: AtomicU64,
}

impl PythonBar<'_> {
    /// Tells the bar what it has not heard yet.
    fn show(&self, py: Python<'_>) {
        let done = self.done.load(Ordering::Relaxed);
        let new = done.saturating_sub(self.shown.fetch_max(done, Ordering::Relaxed));
        if new > 0
            && let Err(e) = self.bar.call_method1(py, "update", (new,))
        {
            self.to.raised(py, e);
        }
    }
}

impl StageSink for PythonBar<'_> {
    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        let now = self.start.elapsed().as_millis() as u64;
        let at = self.shown_at.load(Ordering::Relaxed);
        // One thread wins the update that is due; the others go on.
        if now >= at + BAR_EVERY.as_millis() as u64
            && self
                .shown_at
                .compare_exchange(at, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            Python::attach(|py| self.show(py));
        }
    }

    fn finish(self: Box<Self>, _seconds: f64) {
        Python::attach(|py| {
            self.show(py);
            if let Err(e) = self.bar.call_method0(py, "close") {
                self.to.raised(py, e);
            }
        });
    }
}
