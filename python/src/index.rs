//! The published position numbering: board <-> index, and whole ranges of
//! a level as a `(k, 12)` array, walked with the encoder's O(1) successor.

use std::sync::OnceLock;

use mancaladb::oware::{Encoder, MAX_SEEDS, PITS, game_level};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;

use crate::boards::{Rows, SIGNAL_EVERY, board, in_row, reserve};
use crate::errors::IntoPy;

/// The encoder of every level, made once.
pub fn encoder() -> &'static Encoder {
    static ENCODER: OnceLock<Encoder> = OnceLock::new();
    ENCODER.get_or_init(|| Encoder::new(MAX_SEEDS))
}

/// Refuses a level beyond the game (`ValueError`: "levels go up to 48").
pub fn check_level(seeds: usize) -> PyResult<()> {
    game_level(seeds as u64).map(drop).py()
}

/// Positions in level `seeds`.
#[pyfunction]
pub fn level_size(seeds: usize) -> PyResult<u64> {
    check_level(seeds)?;
    Ok(encoder().level_size(seeds))
}

/// Index of a stored board within its level.
#[pyfunction]
pub fn rank(pits: &Bound<'_, PyAny>) -> PyResult<u64> {
    encoder().index_of(&board(pits)?).py()
}

/// The index of each row of a `(k, 12)` array of stored boards.
#[pyfunction]
pub fn ranks<'py>(
    py: Python<'py>,
    boards: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let pits = Rows::of(boards)?.copied().py()?;
    let e = encoder();
    // Ctrl-C stops it within a run of boards, as in `boards()`.
    let out = py.detach(|| {
        let boards = pits.boards()?;
        let mut out = reserve(boards.len(), "ranks").py()?;
        for these in boards.chunks(SIGNAL_EVERY) {
            for b in these {
                out.push(e.index_of(b).map_err(|err| in_row(out.len(), err)).py()?);
            }
            Python::attach(|py| py.check_signals())?;
        }
        PyResult::Ok(out)
    })?;
    Ok(PyArray1::from_vec(py, out))
}

/// The board at `index` of level `seeds`.
#[pyfunction]
pub fn unrank(seeds: usize, index: u64) -> PyResult<[u8; PITS]> {
    encoder().board_at(seeds, index).map(|b| b.pits()).py()
}

/// The boards at indices `start..stop` of level `seeds`, one row each.
#[pyfunction]
pub fn boards<'py>(
    py: Python<'py>,
    seeds: usize,
    start: u64,
    stop: u64,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let e = encoder();
    let walk = e.boards(seeds, start..stop).py()?;
    // Memory that cannot be had (or is more than is available: Linux would
    // grant it and kill a process as it fills) is a MemoryError, not an
    // abort.
    let too_many = |why: String| {
        pyo3::exceptions::PyMemoryError::new_err(format!("{} boards: {why}", stop - start))
    };
    let cells_len = usize::try_from(stop - start)
        .ok()
        .and_then(|rows| rows.checked_mul(PITS))
        .ok_or_else(|| too_many("more bytes than an address holds".into()))?;
    let rows = cells_len / PITS;
    let mut cells: Vec<u8> = mancaladb::reserve(cells_len).map_err(|e| too_many(e.to_string()))?;
    // Ctrl-C (or another signal's handler raising) stops the walk within
    // a run of boards (tens of milliseconds), with the handler's exception.
    py.detach(|| {
        let (mut walk, mut left) = (walk, rows);
        while left > 0 {
            let run = left.min(SIGNAL_EVERY);
            (walk.by_ref().take(run)).for_each(|(_, b)| cells.extend_from_slice(&b.pits()));
            left -= run;
            Python::attach(|py| py.check_signals())?;
        }
        PyResult::Ok(())
    })?;
    PyArray1::from_vec(py, cells).reshape([rows, PITS])
}
