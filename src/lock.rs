//! One writer at a time: an OS lock on a directory, or on a lock file of
//! its own for one kind of file.

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};
use crate::files::{Links, check_dir, create_dirs, open_checked};

/// An exclusive lock on a directory for one writer at a time, held until
/// dropped. It is an OS lock on `DIR/.lock` (released by the kernel when the
/// process ends, however it ends), so a stale lock file never blocks
/// anyone; the file's text only says who holds it now. Readers never take
/// it: they never see a partial file, since files appear by rename.
#[derive(Debug)]
pub struct DirLock {
    file: File,
}

/// How often a writer that waits for another one tries its lock again.
pub const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(100);

impl DirLock {
    /// Locks `dir` (created if missing), failing at once with
    /// [`Error::Locked`] if another process holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        check_dir(dir)?;
        create_dirs(dir)?;
        DirLock::acquire_file(&dir.join(".lock"))
    }

    /// [`DirLock::acquire`], but while another process holds `dir`, tells
    /// `waiting(holder)` once and tries again every [`LOCK_POLL`] for as
    /// long as `keep_waiting()` says (then [`Error::Locked`]).
    pub fn acquire_waiting(
        dir: &Path,
        waiting: impl FnMut(&str),
        keep_waiting: impl FnMut() -> bool,
    ) -> Result<DirLock> {
        check_dir(dir)?;
        create_dirs(dir)?;
        DirLock::acquire_file_waiting(&dir.join(".lock"), waiting, keep_waiting)
    }

    /// [`DirLock::acquire_file`], trying again while another process holds
    /// it, as [`DirLock::acquire_waiting`] does.
    pub fn acquire_file_waiting(
        path: &Path,
        mut waiting: impl FnMut(&str),
        mut keep_waiting: impl FnMut() -> bool,
    ) -> Result<DirLock> {
        let mut told = false;
        loop {
            match DirLock::acquire_file(path) {
                Err(Error::Locked { holder, path }) => {
                    if !told {
                        waiting(&holder);
                        told = true;
                    }
                    if !keep_waiting() {
                        return Err(Error::Locked { holder, path });
                    }
                    std::thread::sleep(LOCK_POLL);
                }
                done => return done,
            }
        }
    }

    /// Locks with the lock file `path` (in an existing directory), for a
    /// writer of one kind of file that need not exclude the others; at
    /// once, or [`Error::Locked`] naming the process that holds it.
    pub fn acquire_file(path: &Path) -> Result<DirLock> {
        use std::io::{Read, Seek, Write};
        let path = path.to_path_buf();
        // A symbolic link in the lock's place is not followed (the text
        // written below would replace its target's), nor is anything but
        // a regular file locked.
        let mut file = open_checked(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
            &path,
            Links::Refused,
            "a lock file must be a regular file (remove it)",
        )?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                // The holder writes its line just after it takes the lock:
                // one that has only just taken it is given a moment.
                let mut holder = String::new();
                for _ in 0..10 {
                    holder.clear();
                    let _ = file
                        .rewind()
                        .and_then(|()| file.read_to_string(&mut holder));
                    if !holder.trim().is_empty() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                let holder = match holder.trim() {
                    "" => "a process that did not say which".to_string(),
                    h => h.to_string(),
                };
                return Err(Error::Locked { path, holder });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        // `args_os`: an argument that is not UTF-8 (a path, say) is still
        // an argument, and `args` would panic on it.
        let me: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let said = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "process {} ({})", std::process::id(), me.join(" ")));
        said.map_err(|e| Error::io(&path, e))?;
        Ok(DirLock { file })
    }
}

impl Drop for DirLock {
    /// Unlocks before the file is closed: the lock belongs to the open
    /// file, which a child process being started by another thread holds
    /// too until it runs its program (the descriptor is closed only
    /// then), so closing alone could leave the directory locked for a
    /// moment after this lock was dropped, and a writer of this process
    /// that came next was refused (a test's second build was).
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        crate::files::scratch_dir("lock", name)
    }
    use std::io::Write;
    use std::time::Duration;

    #[test]
    fn links_or_pipes_in_the_lock_files_place_are_refused() {
        use std::os::unix::fs::symlink;
        let dir = scratch("links");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let out = dir.join("out");
        std::fs::create_dir(&out).unwrap();
        // A link, or a named pipe, as the lock file: refused, not followed.
        symlink("../victim", out.join(".lock")).unwrap();
        let e = DirLock::acquire(&out).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is a symbolic link; a lock file must be a regular file (remove it)",
                out.join(".lock").display()
            )
        );
        let fifo = out.join("fifo.lock");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = DirLock::acquire_file(&fifo).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("is a named pipe; a lock file must be a regular file (remove it)"),
            "{e}"
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_dropped_is_free_also_while_a_copy_of_its_file_is_open() {
        let dir = scratch("dropped");
        let lock = DirLock::acquire(&dir).unwrap();
        // What a child process being started holds until it execs.
        let copy = lock.file.try_clone().unwrap();
        drop(lock);
        DirLock::acquire(&dir).expect("the lock dropped is free");
        drop(copy);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_writer_stopped_by_a_lock_names_a_holder_that_has_just_taken_it() {
        let dir = scratch("holder");
        let path = dir.join(".lock");
        // The holder's lock is taken, its line not yet written.
        let held = File::create(&path).unwrap();
        held.try_lock().unwrap();
        let late = std::thread::spawn({
            let mut held = held.try_clone().unwrap();
            move || {
                std::thread::sleep(Duration::from_millis(40));
                writeln!(held, "process 1 (mancaladb build)").unwrap();
            }
        });
        let e = DirLock::acquire(&dir).unwrap_err();
        late.join().unwrap();
        assert!(
            matches!(&e, Error::Locked { holder, .. } if holder == "process 1 (mancaladb build)"),
            "{e}"
        );
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A lock file held by "process 1": its `File` keeps the lock until
    /// dropped.
    fn held_by_process_1(path: &Path) -> File {
        let mut held = File::create(path).unwrap();
        held.try_lock().unwrap();
        writeln!(held, "process 1 (mancaladb build)").unwrap();
        held
    }

    /// A writer that waits is told the holder once, asks whether to keep
    /// waiting after each try, and stops with [`Error::Locked`] when told
    /// to.
    #[test]
    fn a_waiting_writer_is_told_once_and_stops_when_told_to() {
        let dir = scratch("waiting");
        let path = dir.join(".lock");
        let held = held_by_process_1(&path);
        let (mut told, mut asked) = (Vec::new(), 0);
        let e = DirLock::acquire_file_waiting(
            &path,
            |holder| told.push(holder.to_string()),
            || {
                asked += 1;
                asked < 3
            },
        )
        .unwrap_err();
        assert!(
            matches!(&e, Error::Locked { holder, .. } if holder == "process 1 (mancaladb build)"),
            "{e}"
        );
        assert_eq!(told, ["process 1 (mancaladb build)"]);
        assert_eq!(asked, 3);
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A writer that waits takes the lock once its holder lets it go.
    #[test]
    fn a_waiting_writer_takes_the_lock_once_it_is_free() {
        let dir = scratch("freed");
        let path = dir.join(".lock");
        let held = held_by_process_1(&path);
        let start = std::time::Instant::now();
        let freed = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let lock = DirLock::acquire_file_waiting(&path, |_| {}, || true);
        freed.join().unwrap();
        assert!(lock.is_ok(), "{lock:?}");
        assert!(start.elapsed() >= Duration::from_millis(300));
        // Its own line replaces the holder's.
        let said = std::fs::read_to_string(&path).unwrap();
        assert!(
            said.starts_with(&format!("process {} (", std::process::id())),
            "{said}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
