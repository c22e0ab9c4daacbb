//! The library's errors as Python exceptions: a bad request is a
//! `ValueError` with the library's one-line message (the command line's,
//! without its `mancaladb: ` prefix), a missing level `MissingLevelError`
//! (a `KeyError`), a damaged file `CorruptTableError`, a failed read or
//! write an `OSError` with its errno (so `FileNotFoundError` and the like;
//! memory that cannot be had a `MemoryError`),
//! and a directory locked by another writer `MancalaDbError`. The exception
//! classes live in `mancaladb/_errors.py`.

use std::path::Path;

use mancaladb::Error;
use mancaladb::build::levels_to_build;
use mancaladb::error::{Corruption, Missing};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::prelude::*;

/// The errno of an error the library made itself, without one from the
/// system (a directory where a table should be, a file given as a
/// directory), so that Python still picks its subclass.
fn errno_of(kind: std::io::ErrorKind) -> Option<i32> {
    use std::io::ErrorKind::*;
    match kind {
        NotFound => Some(2),       // ENOENT
        NotADirectory => Some(20), // ENOTDIR
        IsADirectory => Some(21),  // EISDIR
        _ => None,
    }
}

/// The Python exception for `e`.
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Invalid(message) | Error::TooLarge { why: message, .. } => {
            PyValueError::new_err(message)
        }
        Error::Io {
            ref path,
            ref source,
        } => match source.raw_os_error().or_else(|| errno_of(source.kind())) {
            None if source.kind() == std::io::ErrorKind::OutOfMemory => {
                PyMemoryError::new_err(e.to_string())
            }
            // OSError(errno, strerror, filename): Python picks the subclass
            // (FileNotFoundError, PermissionError, ...) from the errno.
            Some(errno) => {
                let text = source.to_string();
                let strerror = text.split(" (os error").next().unwrap_or(&text).to_string();
                PyOSError::new_err((errno, strerror, path.display().to_string()))
            }
            None => PyOSError::new_err(e.to_string()),
        },
        Error::Missing(ref m) => {
            // The level missing, or the highest a build must make, which
            // the remedy builds up to.
            let seeds = match m {
                Missing::VuLevel { seeds, .. } => Some(*seeds),
                _ => levels_to_build(m).and_then(|l| l.last().copied()),
            };
            let dir = match m {
                Missing::Level { dir, .. }
                | Missing::SomeLevels { dir, .. }
                | Missing::Below { dir, .. }
                | Missing::Levels { dir, .. }
                | Missing::VuLevel { dir, .. }
                | Missing::VuLevels { dir } => dir,
            };
            raise("MissingLevelError", format!("{e}: {}", remedy(m)), |exc| {
                exc.setattr("seeds", seeds)?;
                exc.setattr("dir", dir)
            })
        }
        Error::Corrupt { ref path, ref kind } => {
            let message = match kind {
                Corruption::Replaced(_) => {
                    format!("{e}: open the Database again to read the new file")
                }
                _ => e.to_string(),
            };
            raise("CorruptTableError", message, |exc| {
                exc.setattr("path", path)
            })
        }
        Error::Locked { .. } => raise(
            "MancalaDbError",
            format!("{e}: wait for it to finish, or build with wait=True, which waits by itself"),
            |_| Ok(()),
        ),
        Error::Disagree { .. } => raise("MancalaDbError", e.to_string(), |_| Ok(())),
    }
}

/// What to do about a missing level, in Python (whose `build` makes
/// levels `0..=max_seeds`, all those it reads).
fn remedy(m: &Missing) -> String {
    let build = |dir: &Path, rules: &str, what: &str| match levels_to_build(m)
        .and_then(|l| l.last().copied())
    {
        Some(top) => format!(
            "build {what}: mancaladb.build({:?}, max_seeds={top}, rules={rules:?})",
            dir.display().to_string()
        ),
        None => format!(
            "build {what}: mancaladb.build({:?}, rules={rules:?})",
            dir.display().to_string()
        ),
    };
    match m {
        Missing::Level { dir, rules, .. } => build(dir, rules, "it"),
        Missing::SomeLevels { dir, rules, .. }
        | Missing::Below { dir, rules, .. }
        | Missing::Levels { dir, rules } => build(dir, rules, "them"),
        Missing::VuLevel { .. } | Missing::VuLevels { .. } => m.vu_remedy().unwrap_or_default(),
    }
}

/// An instance of `mancaladb._errors.<class>` with `message`, its
/// attributes set by `set`.
fn raise(
    class: &str,
    message: String,
    set: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<()>,
) -> PyErr {
    Python::attach(|py| {
        let made = (|| -> PyResult<PyErr> {
            let cls = py.import("mancaladb._errors")?.getattr(class)?;
            let exc = cls.call1((message.clone(),))?;
            set(&exc)?;
            Ok(PyErr::from_value(exc))
        })();
        // Without the package's classes (never, once installed) the message
        // still reaches the caller.
        made.unwrap_or_else(|_| PyValueError::new_err(message))
    })
}

/// `Result` of the library to `PyResult`.
pub trait IntoPy<T> {
    /// The value, or the Python exception of the error.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for mancaladb::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
