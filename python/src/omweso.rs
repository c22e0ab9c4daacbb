//! Omweso: does each move of a configuration end, loop, or can it loop?
//! The library's analysis, serialized as `mancaladb loops --json` prints
//! it (the Python layer turns the JSON into a dict).

use mancaladb::Error;
use mancaladb::omweso::moves::{Position, Variant, analyze_unless};
use mancaladb::omweso::{PITS, Side};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::boards::count_words;
use crate::errors::IntoPy;

/// A side from a string of 16 counts or a sequence of integers, read as
/// the command line reads words (so its checks and messages); counts that
/// are not integers are a `TypeError`, as for a board.
fn side(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Side> {
    let words: Vec<String> = match obj.cast::<PyString>() {
        Ok(s) => vec![s.to_string()],
        Err(_) => count_words(
            obj,
            (PITS, what),
            "a side is a string or sixteen counts",
            "a side is sixteen counts, got a sequence of sequences",
        )?,
    };
    Side::parse(&words, what).py()
}

/// Decides every start of `me` (or only `pit`'s), the opponent's side given
/// or empty; the report as JSON text.
#[pyfunction]
#[pyo3(signature = (me, opponent, pit, first_turn, max_laps, any_seeds))]
pub fn loops(
    py: Python<'_>,
    me: &Bound<'_, PyAny>,
    opponent: Option<&Bound<'_, PyAny>>,
    pit: Option<usize>,
    first_turn: bool,
    max_laps: u64,
    any_seeds: bool,
) -> PyResult<String> {
    let me = side(me, "the player's side")?;
    let opp = match opponent {
        Some(o) => side(o, "opponent")?,
        None => Side::EMPTY,
    };
    let pos = Position { me, opp };
    // As `loops` refuses without --any-seeds.
    if !any_seeds {
        pos.check_in_game()
            .map_err(|e| Error::Invalid(format!("{e}; pass any_seeds=True to study it anyway")))
            .py()?;
    }
    let variant = Variant { first_turn };
    // Ctrl-C (or another signal's handler raising) stops the analysis
    // within one question's laps, with the handler's exception.
    let mut raised = None;
    let mut stop = || {
        Python::attach(|py| py.check_signals())
            .map_err(|e| raised = Some(e))
            .is_err()
    };
    let analysis = py
        .detach(|| analyze_unless(variant, pos, pit, max_laps, &mut stop))
        .py()?;
    match analysis {
        Some(a) => Ok(serde_json::to_string(&a).expect("an analysis serializes")),
        None => Err(raised.expect("stopped only by a signal's exception")),
    }
}
