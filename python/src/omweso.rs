//! Omweso: does each move of a configuration end, loop, or can it loop?
//! The same report as `mancaladb loops --json`, as a dict. The choice of
//! starts and its two refusals follow `src/cli/loops.rs` until the library
//! offers them.

use mancaladb::omweso::moves::{Position, Rules, analyze_start, starts};
use mancaladb::omweso::{PITS, Side};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::errors::IntoPy;

/// A side from a string of 16 counts or a sequence of them, read as the
/// command line reads words (so its checks and messages).
fn side(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Side> {
    let words: Vec<String> = match obj.cast::<PyString>() {
        Ok(s) => vec![s.to_string()],
        Err(_) => obj
            .try_iter()?
            .map(|item| Ok(item?.str()?.to_string()))
            .collect::<PyResult<_>>()?,
    };
    Side::parse(&words, what).py()
}

/// Decides every start of `me` (or only `pit`'s), the opponent's side given
/// or empty.
#[pyfunction]
#[pyo3(signature = (me, opponent, pit, first_turn, max_laps))]
pub fn loops<'py>(
    py: Python<'py>,
    me: &Bound<'py, PyAny>,
    opponent: Option<&Bound<'py, PyAny>>,
    pit: Option<usize>,
    first_turn: bool,
    max_laps: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let me = side(me, "the player's side")?;
    let opp = match opponent {
        Some(o) => side(o, "opponent")?,
        None => Side::EMPTY,
    };
    if max_laps == 0 {
        return Err(PyValueError::new_err("max_laps must be at least 1"));
    }
    let rules = Rules { first_turn };
    let pos = Position { me, opp };
    let mut starts = starts(rules, pos);
    if let Some(p) = pit {
        if p >= PITS {
            return Err(PyValueError::new_err(format!(
                "pits are numbered 0..{}",
                PITS - 1
            )));
        }
        if me.get(p) < 2 {
            return Err(PyValueError::new_err(format!(
                "pit {p} holds {} seeds; a move starts from 2 or more",
                me.get(p)
            )));
        }
        starts.retain(|s| s.0 == p);
    }
    if starts.is_empty() {
        return Err(PyValueError::new_err(
            "no pit holds 2 or more seeds: the player has no move",
        ));
    }
    let reports: Vec<_> = py.detach(|| {
        starts
            .iter()
            .map(|&(pit, dir)| analyze_start(rules, pos, pit, dir, max_laps))
            .collect()
    });
    let list = PyList::empty(py);
    for r in &reports {
        let start = PyDict::new(py);
        start.set_item("pit", r.pit)?;
        start.set_item("direction", r.direction.name())?;
        start.set_item("verdict", r.verdict.name())?;
        start.set_item("laps", r.line.laps)?;
        if let Some(c) = r.line.cycle {
            start.set_item("period", c.period)?;
        }
        list.append(start)?;
    }
    let out = PyDict::new(py);
    out.set_item("starts", list)?;
    Ok(out)
}
