//! An opened table directory (or VU directory): probes, moves, principal
//! lines and whole levels. Thread-safe: the source is shared, every library
//! call runs with the GIL released, and closing only drops this handle's
//! reference (arrays already handed out keep their data alive).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use mancaladb::Error;
use mancaladb::oware::{Board, PITS, Rules};
use mancaladb::progress::Progress;
use mancaladb::query::{self, LineEnd};
use mancaladb::source::{LevelData, Source, Values};
use mancaladb::verify::{Checks, verify_until};
use numpy::ndarray::{Array2, ArrayView1};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::boards::{Rows, SIGNAL_EVERY, board, in_row, reserve};
use crate::errors::IntoPy;
use crate::observer::{Stages, ToPython};

/// A move: pit, captures, value for the mover, child board.
type MoveTuple = (u8, u8, i8, [u8; PITS]);
/// A ply of a line: board, pit, captures, value.
type PlyTuple = ([u8; PITS], u8, u8, i8);
/// A position's analysis: seeds, value, category, valued by, moves, best
/// pits, and the final score when the seeds taken were given.
type AnalysisTuple = (
    usize,
    i8,
    &'static str,
    &'static str,
    Vec<MoveTuple>,
    Vec<usize>,
    Option<(f64, f64)>,
);

/// A move as Python's `Move` takes it.
fn move_tuple(m: &query::MoveValue) -> MoveTuple {
    (m.pit, m.captures, m.value, m.child.pits())
}

/// The native handle behind `mancaladb.Database`.
#[pyclass(frozen, module = "mancaladb._native")]
pub struct Database {
    source: Mutex<Option<Arc<Source>>>,
    rules: Rules,
    /// Levels handed out as arrays, shared while any array is alive: a
    /// slot per level, locked while its level is loaded, so that threads
    /// asking for it together wait for one load rather than make a copy
    /// each.
    levels: Mutex<HashMap<usize, Arc<Mutex<Weak<LevelData>>>>>,
}

/// The values of a level behind a NumPy array: the array's base object.
#[pyclass(frozen, module = "mancaladb._native")]
pub struct LevelValues {
    data: Arc<LevelData>,
}

impl Database {
    fn source(&self) -> PyResult<Arc<Source>> {
        let source = self.source.lock().unwrap_or_else(|p| p.into_inner());
        source
            .clone()
            .ok_or_else(|| PyValueError::new_err("the database is closed"))
    }

    /// What `answer` gives for the boards of a `(k, 12)` array, one item
    /// per board (`what` names them in a memory error): the array copied
    /// with the GIL held, its rows checked and answered without it, in runs
    /// of [`SIGNAL_EVERY`] boards between two looks at pending signals, so
    /// that Ctrl-C stops a whole level's work within a run. `answer` is
    /// given a run, the index of its first board, and an empty list to
    /// fill.
    fn per_board<T: Send + Copy>(
        &self,
        py: Python<'_>,
        boards: &Bound<'_, PyAny>,
        what: &str,
        answer: impl Fn(Rules, &dyn Values, &[Board], usize, &mut Vec<T>) -> mancaladb::Result<()>
        + Send
        + Sync,
    ) -> PyResult<Vec<T>> {
        let pits = Rows::of(boards)?.copied().py()?;
        let source = self.source()?;
        let rules = self.rules;
        py.detach(|| {
            let boards = pits.boards()?;
            let mut out = reserve(boards.len(), what).py()?;
            let mut run = Vec::new();
            for (k, these) in boards.chunks(SIGNAL_EVERY).enumerate() {
                answer(rules, &*source, these, k * SIGNAL_EVERY, &mut run).py()?;
                out.extend_from_slice(&run);
                Python::attach(|py| py.check_signals())?;
            }
            Ok(out)
        })
    }

    /// The value of `b`, without the GIL.
    fn value_of(&self, py: Python<'_>, b: Board) -> PyResult<i8> {
        let source = self.source()?;
        let rules = self.rules;
        py.detach(|| query::value(rules, &*source, &b)).py()
    }
}

#[pymethods]
impl Database {
    /// Tables of `rules` in `db`, or the `scores.N` files in `vu`.
    #[new]
    #[pyo3(signature = (db, rules, vu))]
    fn new(db: PathBuf, rules: &str, vu: Option<PathBuf>) -> PyResult<Database> {
        let rules: Rules = rules.parse().py()?;
        let source = Source::open(db, rules, vu).py()?;
        // Listing it says what is wrong the way the system does: no such
        // directory (FileNotFoundError), a file (NotADirectoryError), ...
        let dir = source.dir();
        std::fs::read_dir(dir).map_err(|e| Error::io(dir, e)).py()?;
        Ok(Database {
            source: Mutex::new(Some(Arc::new(source))),
            rules,
            levels: Mutex::new(HashMap::new()),
        })
    }

    /// Drops this handle's maps and open tables.
    fn close(&self) {
        *self.source.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.levels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    #[getter]
    fn closed(&self) -> bool {
        self.source
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    #[getter]
    fn rules(&self) -> &'static str {
        self.rules.name()
    }

    /// The directory read, and whether it holds VU files.
    #[getter]
    fn location(&self) -> PyResult<(PathBuf, bool)> {
        let s = self.source()?;
        Ok((s.dir().to_path_buf(), matches!(*s, Source::Vu(_))))
    }

    fn value(&self, py: Python<'_>, pits: &Bound<'_, PyAny>) -> PyResult<i8> {
        self.value_of(py, board(pits)?)
    }

    /// The values of a `(k, 12)` array of boards.
    fn values<'py>(
        &self,
        py: Python<'py>,
        boards: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        let out = self.per_board(py, boards, "values", |rules, source, boards, first, out| {
            query::values(rules, source, boards, out).map_err(|e| in_row(first + out.len(), e))
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// The value of each move of a `(k, 12)` array of boards: a `(k, 6)`
    /// array, `NO_MOVE` where a pit has no legal move.
    fn move_values<'py>(
        &self,
        py: Python<'py>,
        boards: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<i8>>> {
        let out = self.per_board(
            py,
            boards,
            "rows of move values",
            |rules, source, boards, _, out| query::move_values(rules, source, boards, out),
        )?;
        let rows =
            Array2::from_shape_vec((out.len(), 6), out.into_flattened()).expect("six values a row");
        Ok(rows.into_pyarray(py))
    }

    /// The legal moves of a board: pit, captures, value, child.
    fn moves(&self, py: Python<'_>, pits: &Bound<'_, PyAny>) -> PyResult<Vec<MoveTuple>> {
        let b = board(pits)?;
        let source = self.source()?;
        let rules = self.rules;
        let analysis = py.detach(|| query::analyze(rules, &*source, &b)).py()?;
        Ok(analysis.moves.iter().map(move_tuple).collect())
    }

    /// A position's value and each move's, where the value came from, and
    /// with `captured` (the seeds each side took before) the final score.
    fn analyze(
        &self,
        py: Python<'_>,
        pits: &Bound<'_, PyAny>,
        captured: Option<(u64, u64)>,
    ) -> PyResult<AnalysisTuple> {
        let b = board(pits)?;
        let taken = captured
            .map(|(m, o)| query::Taken::new(&b, m, o))
            .transpose()
            .py()?;
        let source = self.source()?;
        let rules = self.rules;
        let a = py.detach(|| query::analyze(rules, &*source, &b)).py()?;
        Ok((
            a.seeds,
            a.value,
            a.category.name(),
            a.valued_by.name(),
            a.moves.iter().map(move_tuple).collect(),
            a.best.iter().map(|&p| usize::from(p)).collect(),
            taken.map(|t| {
                let end = query::FinalScore::of(&a, t);
                (end.mover, end.opponent)
            }),
        ))
    }

    /// The principal line: plies, how it ends, and the repeated ply for a
    /// cycle.
    fn line(
        &self,
        py: Python<'_>,
        pits: &Bound<'_, PyAny>,
        max_plies: usize,
    ) -> PyResult<(Vec<PlyTuple>, &'static str, Option<usize>)> {
        let b = board(pits)?;
        let source = self.source()?;
        let rules = self.rules;
        let line = py
            .detach(|| query::principal_line(rules, &*source, &b, max_plies))
            .py()?;
        let plies = line
            .plies
            .iter()
            .map(|p| (p.board.pits(), p.pit, p.captures, p.value))
            .collect();
        match line.end {
            LineEnd::Cycle { ply } | LineEnd::NoProgress { ply } => {
                Ok((plies, line.end.name(), Some(ply)))
            }
            LineEnd::GameOver | LineEnd::Limit => Ok((plies, line.end.name(), None)),
            // A line that reaches a level not present is the missing level's
            // error, as any other probe of it.
            LineEnd::Missing { seeds } => Err(source.missing(seeds)).py(),
        }
    }

    fn levels(&self) -> PyResult<Vec<usize>> {
        self.source()?.levels().py()
    }

    fn verified(&self, py: Python<'_>, seeds: usize) -> PyResult<bool> {
        crate::index::check_level(seeds)?;
        let source = self.source()?;
        py.detach(|| source.is_verified(seeds)).py()
    }

    /// Checks `levels` (every level present when `None`) with checks 1 to
    /// `checks`, as `mancaladb verify` does (recording the levels that pass
    /// all three); the results as JSON text. The levels' results go to
    /// `on_level` as they are known and the notices to `on_notice` (see
    /// [`ToPython`]); Ctrl-C, or an exception in `on_level`, stops the run
    /// after the level it is on, with the results so far as JSON text in
    /// the exception's `_mancaladb_results`.
    #[pyo3(signature = (levels, checks, stages, on_level, on_notice))]
    fn verify(
        &self,
        py: Python<'_>,
        levels: Option<Vec<usize>>,
        checks: u8,
        stages: &Bound<'_, PyAny>,
        on_level: Py<PyAny>,
        on_notice: Py<PyAny>,
    ) -> PyResult<String> {
        let checks = Checks::try_from(checks).py()?;
        let source = self.source()?;
        let levels = match levels {
            Some(levels) => levels,
            None => py.detach(|| source.present()).py()?,
        };
        let observer = ToPython::new(Stages::of(stages)?, on_notice);
        let mut stopped = None;
        let rules = self.rules;
        let results = crate::workers::detach(py, || {
            verify_until(
                &source,
                rules,
                levels,
                checks,
                Progress::to(&observer),
                |c| observer.tell_level(&on_level, c, &mut stopped),
            )
        })?;
        observer.finish(py, results, stopped)
    }

    /// Level `seeds` as a read-only `int8` array in index order: the raw map
    /// when it is there (zero-copy), else the table decompressed once; an
    /// array still alive is shared by later calls.
    fn level<'py>(&self, py: Python<'py>, seeds: usize) -> PyResult<Bound<'py, PyArray1<i8>>> {
        crate::index::check_level(seeds)?;
        let source = self.source()?;
        let slot = Arc::clone(
            self.levels
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(seeds)
                .or_default(),
        );
        // Waiting for another thread's load, and loading, without the GIL.
        let data = py
            .detach(|| {
                let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(data) = held.upgrade() {
                    return Ok(data);
                }
                let data = Arc::new(source.load(seeds)?);
                *held = Arc::downgrade(&data);
                Ok::<_, Error>(data)
            })
            .py()?;
        let owner = Bound::new(py, LevelValues { data })?;
        let view = ArrayView1::from(&owner.get().data[..]);
        // SAFETY: the values live as long as `owner`, the array's base
        // object, and are never moved or resized.
        let array = unsafe { PyArray1::borrow_from_array(&view, owner.clone().into_any()) };
        // Mapped files are read-only: so is every array of a level.
        array.getattr("flags")?.setattr("writeable", false)?;
        Ok(array)
    }
}
