//! Writing files so that readers never see a partial one, and one writer
//! at a time in a directory.

use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Corruption, Error, Result};

/// Writes `bytes` to `path` through a temporary file renamed when complete,
/// the file and then its directory synced: once this returns, the file is
/// on disk under its name, so what it replaces (a level's work directory,
/// an older checkpoint) may go.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = tmp_path(path);
    let result = (|| {
        // Readable too, for writers that hash what they wrote.
        let mut f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        write(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Removes the files of `dir` whose names `left` picks: what writers
/// killed mid-file left (never read, since files appear by rename). The
/// caller holds the lock of whatever writes them.
pub fn remove_leftovers(dir: &Path, left: impl Fn(&str) -> bool) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let path = e.path();
        if e.file_name().to_str().is_some_and(&left) && path.is_file() {
            remove_if_present(&path)?;
        }
    }
    Ok(())
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// An exclusive lock on a directory for one writer at a time, held until
/// dropped. It is an OS lock on `DIR/.lock` (released by the kernel when the
/// process ends, however it ends), so a stale lock file never blocks
/// anyone; the file's text only says who holds it now. Readers never take
/// it: they never see a partial file, since files appear by rename.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Locks `dir` (created if missing), waiting for the holder to finish
    /// if `wait`, else failing at once with [`Error::Locked`].
    pub fn acquire(dir: &Path, wait: bool) -> Result<DirLock> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        DirLock::acquire_file(&dir.join(".lock"), wait)
    }

    /// Locks with the lock file `path` (in an existing directory), for a
    /// writer of one kind of file that need not exclude the others.
    pub fn acquire_file(path: &Path, wait: bool) -> Result<DirLock> {
        use std::io::{Read, Seek, Write};
        let path = path.to_path_buf();
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) if wait => {
                file.lock().map_err(|e| Error::io(&path, e))?
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = match holder.trim() {
                    "" => "a process that did not say which".to_string(),
                    h => h.to_string(),
                };
                return Err(Error::Locked { path, holder });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        let me: Vec<String> = std::env::args().collect();
        let said = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "process {} ({})", std::process::id(), me.join(" ")));
        said.map_err(|e| Error::io(&path, e))?;
        Ok(DirLock { _file: file })
    }
}

/// Removes a file when dropped, unless [`RemoveOnDrop::keep`] was called:
/// a partial file never outlives the error that left it partial.
pub struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    /// Guards `path`.
    pub fn new(path: PathBuf) -> RemoveOnDrop {
        RemoveOnDrop(Some(path))
    }

    /// The file is complete: keep it.
    pub fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Removes the file at `path` if there is one; only a failure other than
/// its absence is an error.
pub fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

/// Opens `path` for reading, refusing anything but a regular file (a
/// directory or a device in a table's place) with an error that says what
/// the path is.
pub fn open_regular(path: &Path) -> Result<File> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let kind = file.metadata().map_err(|e| Error::io(path, e))?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    Err(Error::io(
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("is {what}; expected a level's file"),
        ),
    ))
}

/// The first `len` bytes of the file at `path`; `None` if there is no
/// such file or it is shorter. Any other failure to read it (a read
/// error, no permission) is an error: a checkpoint that cannot be read is
/// not one that is absent, and must not be dropped as if it were.
pub fn read_head(path: &Path, len: usize) -> Result<Option<Vec<u8>>> {
    let mut head = vec![0u8; len];
    let read = File::open(path).and_then(|mut f| f.read_exact(&mut head));
    match read {
        Ok(()) => Ok(Some(head)),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::UnexpectedEof) => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Writes `header` and then `state` zstd-compressed (with its content
/// checksum) to `path` with [`write_atomically`] (so the rename survives a
/// crash); returns the file's bytes. This is how solvers checkpoint their
/// state.
pub fn write_compressed(path: &Path, header: &[u8], state: &[u8]) -> Result<u64> {
    write_atomically(path, |f| {
        let mut out = BufWriter::with_capacity(1 << 20, f);
        out.write_all(header)?;
        let mut z = zstd::stream::Encoder::new(out, 1)?;
        z.include_checksum(true)?;
        z.write_all(state)?;
        z.finish()?.flush()
    })?;
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| Error::io(path, e))
}

/// Reads into `state` what [`write_compressed`] wrote to `path` behind
/// `header`: [`Corruption::Checkpoint`] if the header differs or the
/// content is damaged, shorter or longer than `state`.
pub fn read_compressed(path: &Path, header: &[u8], state: &mut [u8]) -> Result<()> {
    let io = |e| Error::io(path, e);
    let mut f = BufReader::with_capacity(1 << 20, File::open(path).map_err(io)?);
    let mut head = vec![0u8; header.len()];
    f.read_exact(&mut head).map_err(io)?;
    if head != header {
        return Err(Error::corrupt(
            path,
            Corruption::Checkpoint("not a checkpoint of this level"),
        ));
    }
    let damaged = |why| Error::corrupt(path, Corruption::Checkpoint(why));
    let mut z = zstd::stream::Decoder::with_buffer(f).map_err(io)?;
    z.read_exact(state)
        .map_err(|_| damaged("shorter than its slice, or damaged"))?;
    let mut rest = [0u8; 1];
    match z.read(&mut rest) {
        Ok(0) => Ok(()),
        Ok(_) => Err(damaged("longer than its slice")),
        Err(_) => Err(damaged("damaged (its checksum does not match)")),
    }
}

/// The least time between checkpoints of a solver (the builder's and the
/// checker's): 10 minutes, or `MANCALADB_CHECKPOINT_SECS` (seconds; `off`
/// for none; `0` after every step that can take one). A value that is not
/// a number of seconds a `Duration` holds is a usage error.
pub fn checkpoint_interval() -> Result<Option<Duration>> {
    const NAME: &str = "MANCALADB_CHECKPOINT_SECS";
    match std::env::var(NAME) {
        Err(_) => Ok(Some(Duration::from_secs(600))),
        Ok(v) if v == "off" => Ok(None),
        // Negative, infinite or too many seconds for a `Duration` are
        // refused like words.
        Ok(v) => match v.parse::<f64>().ok().map(Duration::try_from_secs_f64) {
            Some(Ok(every)) => Ok(Some(every)),
            _ => Err(Error::Invalid(format!(
                "{NAME}={v}: expected seconds between checkpoints, or 'off'"
            ))),
        },
    }
}
