//! `mancaladb._native`: the Python extension module under the `mancaladb`
//! package. It converts between Python objects and the library's types and
//! calls the library with the GIL released; every answer, value and check
//! comes from the library (`mancaladb` crate). The Python package
//! (`mancaladb/`) names the results and documents the API.

mod boards;
mod building;
mod database;
mod errors;
mod index;
mod observer;
mod omweso;
mod workers;

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // NumPy's C API is loaded now, on import (which imports numpy anyway),
    // not on the first array a call hands out: loading it runs Python code,
    // where a Ctrl-C pending from a long call made without the GIL would
    // surface as a panic of the numpy crate, not as a KeyboardInterrupt.
    numpy::PyArray1::<u8>::zeros(m.py(), [0], false);
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("LINE_PLIES", mancaladb::query::LINE_PLIES)?;
    m.add("NO_MOVE", mancaladb::query::NO_MOVE)?;
    m.add_class::<database::Database>()?;
    m.add_class::<database::LevelValues>()?;
    m.add_function(wrap_pyfunction!(index::level_size, m)?)?;
    m.add_function(wrap_pyfunction!(index::rank, m)?)?;
    m.add_function(wrap_pyfunction!(index::ranks, m)?)?;
    m.add_function(wrap_pyfunction!(index::unrank, m)?)?;
    m.add_function(wrap_pyfunction!(index::boards, m)?)?;
    m.add_function(wrap_pyfunction!(building::build, m)?)?;
    m.add_function(wrap_pyfunction!(omweso::loops, m)?)?;
    Ok(())
}
