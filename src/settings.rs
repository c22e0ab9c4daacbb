//! What the environment sets for the library: every `MANCALADB_*` variable
//! is read here, by one function each, when the work that uses it starts.
//! They are the same for every front end (the command line, the Python
//! package, each rank of a distributed build, to which `mpirun -x NAME`
//! passes one). Spaces around a value are dropped, as the command line's
//! flags and `RAYON_NUM_THREADS` drop them. A value that does not parse is
//! a usage error naming the variable and what it expects; a value that is
//! not UTF-8 does not parse.

use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Result};

/// The variable `name`, `None` when it is not set. A value that is not
/// UTF-8 comes lossily, so that it fails to parse and its error shows it.
fn var(name: &str) -> Option<String> {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => Some(v.to_string_lossy().into_owned()),
        Ok(v) => Some(v),
    }
}

/// The usage error of `name=value`, which expects `want`.
fn bad(name: &str, value: &str, want: &str) -> Error {
    Error::Invalid(format!("{name}={value}: expected {want}"))
}

/// A whole number above 0 of `what` from `name`, `None` when it is not set.
fn count<T: FromStr + PartialOrd + From<u8>>(name: &str, what: &str) -> Result<Option<T>> {
    let Some(value) = var(name) else {
        return Ok(None);
    };
    match value.trim().parse::<T>() {
        Ok(n) if n > T::from(0) => Ok(Some(n)),
        _ => Err(bad(name, &value, &format!("a number of {what} above 0"))),
    }
}

/// `MANCALADB_CHECKPOINT_SECS`: the least time between checkpoints of a
/// solver (the builder's and the checker's), 10 minutes when not set;
/// `off` for none, `0` after every step that can take one. Negative,
/// infinite or more seconds than a `Duration` holds are refused like words.
pub fn checkpoint_interval() -> Result<Option<Duration>> {
    const NAME: &str = "MANCALADB_CHECKPOINT_SECS";
    match var(NAME) {
        None => Ok(Some(Duration::from_secs(600))),
        Some(v) if v.trim() == "off" => Ok(None),
        Some(v) => match v
            .trim()
            .parse::<f64>()
            .ok()
            .map(Duration::try_from_secs_f64)
        {
            Some(Ok(every)) => Ok(Some(every)),
            _ => Err(bad(NAME, &v, "seconds between checkpoints, or 'off'")),
        },
    }
}

/// `MANCALADB_FRONTIER_CAP`: the most boards in one of the level solver's
/// frontiers (tests force tiny frontiers with it).
pub fn frontier_cap() -> Result<Option<usize>> {
    count("MANCALADB_FRONTIER_CAP", "boards")
}

/// `MANCALADB_FORWARD_PART`: positions per part of the level solver's
/// forward walks (tests force checkpoints inside the forward pass of small
/// levels with it).
pub fn forward_part() -> Result<Option<u64>> {
    count("MANCALADB_FORWARD_PART", "positions")
}

/// `MANCALADB_MPI_PASS`: the most messages one pass of a distributed
/// build's exchange carries from a rank to each other rank (tests force
/// many passes with it).
#[cfg(feature = "mpi")]
pub fn mpi_pass() -> Result<Option<usize>> {
    count("MANCALADB_MPI_PASS", "messages")
}
