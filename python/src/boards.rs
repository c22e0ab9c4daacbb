//! Boards from Python objects. One board: a string of twelve counts
//! (`"1 1 1 1 1 2 4 2 3 0 0 0"`, as on the command line) or a sequence of
//! twelve integers (list, tuple, NumPy row). Many boards: a `(k, 12)`
//! integer array. Every check of the counts and its message is the
//! library's (`Board::parse`, `Board::from_counts`). Counts that are not
//! integers at all (1.5, "3", None) are a `TypeError`, for one board as for
//! many, as Python does for a value of the wrong type.

use mancaladb::oware::{Board, PITS};
use numpy::ndarray::ArrayView2;
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyString};

use crate::errors::IntoPy;

/// One board from a string or a sequence of integers.
pub fn board(obj: &Bound<'_, PyAny>) -> PyResult<Board> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Board::parse(&[s.to_cow()?]).py();
    }
    // A sequence no longer than a board at once; a longer one (even
    // `range(2**63)`, which has no `len()`) and integers past i64 (2**64)
    // as their text, read as the command line reads words, so that the
    // message is the command line's and no more than a count too many is
    // read.
    if matches!(obj.len(), Ok(n) if n <= PITS)
        && !is_bytes(obj)
        && let Ok(counts) = obj.extract::<Vec<i64>>()
        && !holds_bool(obj)?
    {
        return Board::from_counts(&counts).py();
    }
    let nested =
        "a board is twelve counts, got a sequence of sequences (values() takes many boards)";
    Board::parse(&count_words(
        obj,
        (PITS, "an Oware board"),
        "a board is a string or twelve counts",
        nested,
    )?)
    .py()
}

/// The counts of a sequence of integers (NumPy's and those past i64
/// included) as the command line's words, so that every check of them and
/// its message is the library's. Bytes are no such sequence (`b"1 1 ..."`
/// would be its character codes): a `TypeError` saying `what` a value is;
/// so is an item that is not an integer; a sequence of sequences is a
/// `ValueError` saying `nested`. Of an iterable without end (or merely
/// long: `range(2**61)` would ask for more memory than there is), no more
/// than one count past `pits.0` is read: a `ValueError` says that `pits.1`
/// (the library's noun) has no more, with the sequence's length when it
/// has one.
pub fn count_words(
    obj: &Bound<'_, PyAny>,
    pits: (usize, &str),
    what: &str,
    nested: &str,
) -> PyResult<Vec<String>> {
    if is_bytes(obj) {
        return Err(PyTypeError::new_err(format!(
            "{what}, got {}",
            obj.get_type().name()?
        )));
    }
    // A plain loop: an iterator adapter would ask the object for its length
    // hint, which `range(2**64)` cannot give (PyO3 reports that failure as
    // an unraisable exception).
    let mut words = Vec::with_capacity(pits.0 + 1);
    // An object that is not iterable at all is no board; whatever else
    // its iteration raises (KeyboardInterrupt too) goes on up.
    let items = match obj.try_iter() {
        Ok(items) => items,
        Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => {
            return Err(PyTypeError::new_err(format!(
                "{what}, got {}",
                obj.get_type().name()?
            )));
        }
        Err(e) => return Err(e),
    };
    for item in items {
        let item = item?;
        // NumPy rows have `__index__` too: they are looked at first.
        let text = item.is_instance_of::<PyString>() || is_bytes(&item);
        if !text && item.try_iter().is_ok() {
            return Err(PyValueError::new_err(nested.to_string()));
        }
        // `True` is an int to Python, but no seed count (as for `level()`).
        if !item.hasattr("__index__")? || is_bool(&item)? {
            return Err(PyTypeError::new_err(format!(
                "pit counts must be integers, got {} {}",
                item.get_type().name()?,
                item.repr()?
            )));
        }
        // As the integer it stands for.
        words.push(item.call_method0("__index__")?.str()?.to_string());
        if words.len() > pits.0 {
            break;
        }
    }
    if words.len() <= pits.0 {
        return Ok(words);
    }
    let got = match obj.len() {
        Ok(n) => n.to_string(),
        Err(_) => format!("more than {}", pits.0),
    };
    Err(PyValueError::new_err(format!(
        "{} has {} pits, got {got} numbers",
        pits.1, pits.0
    )))
}

/// Whether the sequence `obj` (of at most a board's counts) holds a `bool`.
fn holds_bool(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    for item in obj.try_iter()? {
        if is_bool(&item?)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `item` is a `bool`: Python's, or NumPy's (`numpy.bool`, or
/// `numpy.bool_` before NumPy 2, which still has `__index__` there).
fn is_bool(item: &Bound<'_, PyAny>) -> PyResult<bool> {
    if item.is_instance_of::<PyBool>() {
        return Ok(true);
    }
    let name = item.get_type().name()?;
    Ok(name == "bool" || name == "bool_")
}

fn is_bytes(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>()
}

/// A `(k, 12)` array of boards of a native integer type (the Python
/// layer copies any other to its width in native order), read in place.
pub enum Rows<'py> {
    /// `uint8`, as `boards()` gives them.
    U8(PyReadonlyArray2<'py, u8>),
    /// `int8`.
    I8(PyReadonlyArray2<'py, i8>),
    /// `int16`.
    I16(PyReadonlyArray2<'py, i16>),
    /// `uint16`.
    U16(PyReadonlyArray2<'py, u16>),
    /// `int32`.
    I32(PyReadonlyArray2<'py, i32>),
    /// `uint32`.
    U32(PyReadonlyArray2<'py, u32>),
    /// `int64`.
    I64(PyReadonlyArray2<'py, i64>),
    /// `uint64`.
    U64(PyReadonlyArray2<'py, u64>),
}

impl<'py> Rows<'py> {
    /// The array `obj`, which must have 12 columns.
    pub fn of(obj: &Bound<'py, PyAny>) -> PyResult<Rows<'py>> {
        let rows = if let Ok(a) = obj.extract() {
            Rows::U8(a)
        } else if let Ok(a) = obj.extract() {
            Rows::I8(a)
        } else if let Ok(a) = obj.extract() {
            Rows::I16(a)
        } else if let Ok(a) = obj.extract() {
            Rows::U16(a)
        } else if let Ok(a) = obj.extract() {
            Rows::I32(a)
        } else if let Ok(a) = obj.extract() {
            Rows::U32(a)
        } else if let Ok(a) = obj.extract() {
            Rows::U64(a)
        } else {
            Rows::I64(obj.extract()?)
        };
        let shape = match &rows {
            Rows::U8(a) => a.shape(),
            Rows::I8(a) => a.shape(),
            Rows::I16(a) => a.shape(),
            Rows::U16(a) => a.shape(),
            Rows::I32(a) => a.shape(),
            Rows::U32(a) => a.shape(),
            Rows::I64(a) => a.shape(),
            Rows::U64(a) => a.shape(),
        };
        if shape[1] != PITS {
            return Err(PyValueError::new_err(format!(
                "boards must be a (k, 12) array, got shape ({}, {})",
                shape[0], shape[1]
            )));
        }
        Ok(rows)
    }

    /// The rows as pit bytes, copied while the GIL is held (another
    /// Python thread may write the array once it is released), to be
    /// checked without it by [`Pits::boards`]. A count that does not fit
    /// a byte is refused here, in the library's words for its row. No
    /// signal is looked at meanwhile: its handler is Python code, which may
    /// write or resize the array while it is borrowed (the copy runs at
    /// memory speed; the steps after it look).
    pub fn copied(&self) -> mancaladb::Result<Pits> {
        match self {
            // Pit bytes in one block of memory, row after row (what
            // `boards()` gives): one copy, as fast as memory moves (the GIL
            // is held meanwhile). Not a column-major block (a `uint8` pandas
            // frame's `to_numpy()`), which `as_slice` also gives, columns
            // first.
            Rows::U8(a) if a.is_c_contiguous() => {
                let bytes = a.as_slice().expect("C-contiguous");
                let mut rows = reserve(bytes.len() / PITS, "boards")?;
                rows.extend_from_slice(bytes.as_chunks::<PITS>().0);
                Ok(Pits { rows, wide: None })
            }
            Rows::U8(a) => copy_rows(a.as_array()),
            Rows::I8(a) => copy_rows(a.as_array()),
            Rows::I16(a) => copy_rows(a.as_array()),
            Rows::U16(a) => copy_rows(a.as_array()),
            Rows::I32(a) => copy_rows(a.as_array()),
            Rows::U32(a) => copy_rows(a.as_array()),
            Rows::I64(a) => copy_rows(a.as_array()),
            Rows::U64(a) => copy_rows(a.as_array()),
        }
    }
}

/// Boards a call over many (`boards()`, `values()`, `ranks()`,
/// `move_values()`) handles between two looks at pending signals: a run
/// takes tens of milliseconds.
pub const SIGNAL_EVERY: usize = 1 << 20;

/// Rows of twelve pit counts, not yet checked as boards: those before
/// the first row with a count outside a byte, and that row's error.
pub struct Pits {
    rows: Vec<[u8; PITS]>,
    wide: Option<mancaladb::Error>,
}

impl Pits {
    /// The boards, checked (the first bad row is an error naming it): the
    /// part of reading an array that needs no GIL, to be called without
    /// it. Pending signals are looked at every [`SIGNAL_EVERY`] rows. The
    /// boards take the rows' memory (one chain of iterators, collected in
    /// place: a second block as large cost a tenth more time in page
    /// faults).
    pub fn boards(self) -> PyResult<Vec<Board>> {
        let boards = (self.rows.into_iter().enumerate())
            .map(|(i, pits)| {
                if i % SIGNAL_EVERY == SIGNAL_EVERY - 1 {
                    Python::attach(|py| py.check_signals())?;
                }
                Board::from_counts(&pits.map(i64::from))
                    .map_err(|e| in_row(i, e))
                    .py()
            })
            .collect::<PyResult<Vec<Board>>>()?;
        match self.wide {
            Some(e) => Err(e).py(),
            None => Ok(boards),
        }
    }
}

/// The rows of `rows` as bytes, up to the first with a count outside a
/// byte, whose error (the library's, naming it) comes with them: rows
/// before it may be no boards either, and the first bad row is the one to
/// name.
fn copy_rows<T: Copy + TryInto<u8> + Into<i128>>(
    rows: ArrayView2<'_, T>,
) -> mancaladb::Result<Pits> {
    let mut copied = reserve(rows.nrows(), "boards")?;
    for (i, row) in rows.rows().into_iter().enumerate() {
        let mut pits = [0u8; PITS];
        for (p, &v) in pits.iter_mut().zip(row) {
            match v.try_into() {
                Ok(b) => *p = b,
                // Negative, or past any game's 48 seeds: the library says
                // which (a count past i64 as the largest i64, past 48 all
                // the same).
                Err(_) => {
                    let counts: Vec<i64> = row
                        .iter()
                        .map(|&c| i64::try_from(c.into()).unwrap_or(i64::MAX))
                        .collect();
                    let wide = Board::from_counts(&counts)
                        .err()
                        .map(|e| in_row(i, e))
                        .expect("a count outside a byte is no board");
                    return Ok(Pits {
                        rows: copied,
                        wide: Some(wide),
                    });
                }
            }
        }
        copied.push(pits);
    }
    Ok(Pits {
        rows: copied,
        wide: None,
    })
}

/// Room for `len` items (`what` the values of that many boards), or, when
/// it cannot be had or is more than is available (Linux would grant it and
/// kill the process as it fills), an error of kind `OutOfMemory`: a
/// `MemoryError`, not an abort.
pub fn reserve<T>(len: usize, what: &str) -> mancaladb::Result<Vec<T>> {
    mancaladb::reserve(len).map_err(|e| mancaladb::Error::io(format!("{len} {what}"), e))
}

/// A usage error about row `i`, saying so.
pub fn in_row(i: usize, e: mancaladb::Error) -> mancaladb::Error {
    match e {
        mancaladb::Error::Invalid(m) => mancaladb::Error::Invalid(format!("row {i}: {m}")),
        e => e,
    }
}
