//! The library's worker threads, for the calls that use them (`build`,
//! `verify`).
//!
//! In the process that first makes such a call they are rayon's global
//! pool, started then, so that a process that cannot start threads gets an
//! `OSError` rather than rayon's panic on first use. A child made by `fork`
//! (`multiprocessing`'s default start method on Linux, PyTorch's
//! `DataLoader` workers) inherits that pool but none of its threads: its
//! first parallel call would wait for them for ever. There the work runs in
//! a pool of the child's own, made on its first call. The process that
//! started the global pool runs the work on the calling thread, so that
//! Ctrl-C is seen there (Python runs signal handlers on the main thread
//! only); in a child, the work runs on the child's pool.

use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyOSError;
use pyo3::marker::Ungil;
use pyo3::prelude::*;

/// The process that started the global pool, and whether it could.
static GLOBAL: OnceLock<(u32, Result<(), String>)> = OnceLock::new();

/// The pool of a child made by `fork`, and that child's process id.
static CHILDS: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

fn cannot_start(e: impl std::fmt::Display) -> PyErr {
    PyOSError::new_err(format!("cannot start the worker threads: {e}"))
}

/// Runs `work` without the GIL, on this process's workers.
pub fn detach<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    F: Ungil + FnOnce() -> T + Send,
    T: Ungil + Send,
{
    let pid = std::process::id();
    let (owner, started) = GLOBAL.get_or_init(|| {
        let started = rayon::ThreadPoolBuilder::new().build_global();
        (pid, started.map_err(|e| e.to_string()))
    });
    if *owner == pid {
        started.clone().map_err(cannot_start)?;
        return Ok(py.detach(work));
    }
    let pool = {
        let mut held = CHILDS.lock().unwrap_or_else(|p| p.into_inner());
        match &*held {
            Some((child, pool)) if *child == pid => Arc::clone(pool),
            _ => {
                // A grandchild finds its parent's pool, whose threads it
                // has not either: left alone, never dropped (dropping
                // would wait for them).
                if let Some(stale) = held.take() {
                    std::mem::forget(stale);
                }
                let pool = rayon::ThreadPoolBuilder::new()
                    .build()
                    .map_err(cannot_start)?;
                let pool = Arc::new(pool);
                *held = Some((pid, Arc::clone(&pool)));
                pool
            }
        }
    };
    Ok(py.detach(|| pool.install(work)))
}
