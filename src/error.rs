//! Errors of the library. Every variant renders as one line that says what
//! went wrong and, where it can, what to do about it.

use std::path::PathBuf;

/// The library's error type.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller asked for something malformed (bad board, bad range, ...).
    #[error("{0}")]
    Usage(String),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A table file exists but cannot be trusted.
    #[error("{}: corrupt table: {why}", path.display())]
    Corrupt { path: PathBuf, why: String },
    /// A level needed for the request has not been built.
    #[error("{what} not found in {}: {hint}", dir.display())]
    Missing {
        what: String,
        dir: PathBuf,
        hint: String,
    },
}

impl Error {
    /// Shorthand for an I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Shorthand for a corrupt-file error on `path`.
    pub fn corrupt(path: impl Into<PathBuf>, why: impl Into<String>) -> Error {
        Error::Corrupt {
            path: path.into(),
            why: why.into(),
        }
    }
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
