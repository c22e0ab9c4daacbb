//! Writing files so that readers never see a partial one, and opening
//! files only as the kind of file expected (a regular file, not a link, a
//! directory or a named pipe); the SHA-256 helpers.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Files this process has put in place with [`write_atomically`]: a
/// reader that remembers a file as missing or damaged looks again as
/// soon as this changes (a level built by the same process is found at
/// once).
static PUT_IN_PLACE: AtomicU64 = AtomicU64::new(0);

/// How many files this process has put in place so far ([`PUT_IN_PLACE`]).
pub fn files_put_in_place() -> u64 {
    PUT_IN_PLACE.load(Ordering::Acquire)
}

/// Writes `bytes` to `path` through a temporary file renamed when complete,
/// the file and then its directory synced: once this returns, the file is
/// on disk under its name, so what it replaces (a level's work directory,
/// an older checkpoint) may go. What the rename may replace is a regular
/// file or a symbolic link (the link itself, as for any file the crate
/// keeps); a device, a named pipe or a directory there is an error, never
/// swapped for a file. A file the user names is written with
/// [`write_output`].
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    replaceable(path)?;
    let tmp = tmp_path(path);
    let mut f = create_tmp(&tmp)?;
    let written = (|| {
        write(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    PUT_IN_PLACE.fetch_add(1, Ordering::Release);
    // The file is in place; what fails now is its directory's sync, and
    // the error names the directory.
    sync_dir(parent_dir(path))
}

/// Syncs directory `dir`: what was renamed or created in it stays there
/// after a power loss.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Creates `dir` and its missing parents ([`missing_dirs`]), each synced
/// into its parent, so that the files later written into it durably
/// ([`write_atomically`]) stay reachable after a power loss.
pub fn create_dirs(dir: &Path) -> Result<()> {
    let made = missing_dirs(dir)?;
    if made.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    // Deepest first: each made directory's entry, in its parent.
    made.iter().try_for_each(|d| sync_dir(parent_dir(d)))
}

/// Refuses what [`write_atomically`] would refuse at `path`, at its own
/// name or its temporary one, before anything is written: for a writer of
/// many files, so that it stops before the first rather than after some.
pub fn check_replaceable(path: &Path) -> Result<()> {
    replaceable(path)?;
    let tmp = tmp_path(path);
    match std::fs::symlink_metadata(&tmp) {
        Ok(m) if !m.is_file() && !m.is_symlink() => Err(in_tmp_place(&tmp, m.file_type())),
        Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io(&tmp, e)),
        _ => Ok(()),
    }
}

/// Refuses anything at `path` but a regular file or a symbolic link,
/// which a rename may replace.
fn replaceable(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.is_file() && !m.is_symlink() => Err(not_replaced(path, m.file_type())),
        Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

/// Creates the temporary file `tmp` afresh, readable too (for writers that
/// hash what they wrote). What a killed writer left under its name goes
/// first: a file, or a symbolic link (the link itself: a link there must
/// not carry the write to the file it leads to); then the file is created
/// exclusively (`O_EXCL`, which follows no link), so that nothing made
/// there meanwhile is written through either. Anything else under the
/// name (a directory) is an error naming it, before anything is written.
fn create_tmp(tmp: &Path) -> Result<File> {
    match std::fs::symlink_metadata(tmp) {
        Ok(m) if m.is_file() || m.is_symlink() => remove_if_present(tmp)?,
        Ok(m) => {
            return Err(in_tmp_place(tmp, m.file_type()));
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(tmp, e)),
    }
    File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| Error::io(tmp, e))
}

/// The error for a `kind` of file (a directory) where a writer is to
/// create its temporary file.
fn in_tmp_place(path: &Path, kind: std::fs::FileType) -> Error {
    Error::io(
        path,
        std::io::Error::new(
            ErrorKind::AlreadyExists,
            format!(
                "is {}, where a temporary file is to be written; remove it",
                describe(kind)
            ),
        ),
    )
}

/// The directory `path` is in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// [`write_atomically`] for a file the user names (`census --out`): a
/// symbolic link there is written through, so that it stays a link
/// ([`output_file`]).
pub fn write_output(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    write_atomically(&output_file(path)?, write)
}

/// The file that [`write_output`] replaces at `path`: `path` itself when
/// nothing is there or a regular file is, the file a symbolic link there
/// leads to. Anything else there, or a link that leads to anything else
/// or nowhere, is an error: renaming a file over `/dev/stdout` or a named
/// pipe would silently swap a device for a file. So is the file this
/// process's standard output or error goes to (`/dev/stdout` when the
/// output is sent to a file): the rename would drop what the shell wrote
/// there before and what this command prints.
pub fn output_file(path: &Path) -> Result<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if path.as_os_str().as_bytes().ends_with(b"/") {
        return Err(refused(path, "a directory's name (it ends with /)"));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let kind = meta.file_type();
    if kind.is_file() {
        return not_standard_output(path, &meta).map(|()| path.to_path_buf());
    }
    if !kind.is_symlink() {
        return Err(not_replaced(path, kind));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            not_standard_output(path, &m)?;
            std::fs::canonicalize(path).map_err(|e| Error::io(path, e))
        }
        Ok(m) => Err(refused(
            path,
            &format!("a link to {}", describe(m.file_type())),
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            Err(refused(path, "a link that leads nowhere"))
        }
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Refuses the regular file `path` (`meta`: its metadata) if this
/// process's standard output or error goes to it.
fn not_standard_output(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    // The files the streams go to, by the links the system keeps for them.
    let is_it = |stream: &str| {
        std::fs::metadata(stream).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
    };
    if is_it("/dev/stdout") || is_it("/dev/stderr") {
        return Err(Error::io(
            path,
            std::io::Error::new(
                ErrorKind::InvalidInput,
                "is where this command's own output goes; name another file",
            ),
        ));
    }
    Ok(())
}

/// The error for a `kind` of file at `path` that a write will not replace.
fn not_replaced(path: &Path, kind: std::fs::FileType) -> Error {
    refused(path, describe(kind))
}

fn refused(path: &Path, what: &str) -> Error {
    Error::io(
        path,
        std::io::Error::new(
            ErrorKind::InvalidInput,
            format!("is {what}; only a regular file is written here"),
        ),
    )
}

/// Checks that files can be created in the directory `dir`, by creating
/// one and removing it: a writer looks before it computes or writes
/// anything, so that no result is lost and no write is left half done on
/// a directory it cannot write (read-only, or another user's).
pub fn check_files_can_be_created(dir: &Path) -> Result<()> {
    // A new file (never through a link planted at its name); one that a
    // killed run left is removed first. It ends in `.tmp`, as leftovers
    // that writers remove do.
    let probe = dir.join(format!(".write-test-{}.tmp", std::process::id()));
    remove_if_present(&probe)?;
    let mut create = std::fs::OpenOptions::new();
    create.write(true).create_new(true);
    create.open(&probe).map_err(|e| {
        // "/proc: No such file or directory" would deny that it is there.
        let why = format!("no file can be written in this directory: {e}");
        Error::io(dir, std::io::Error::new(e.kind(), why))
    })?;
    std::fs::remove_file(&probe).map_err(|e| Error::io(&probe, e))
}

/// Whether something is at `path`, links followed. A link to nothing (a
/// table linked from elsewhere whose target has gone) is an error naming
/// it, never a file taken as absent: readers would leave its level out.
pub fn exists(path: &Path) -> Result<bool> {
    if path.try_exists().map_err(|e| Error::io(path, e))? {
        return Ok(true);
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::io(
            path,
            std::io::Error::new(
                ErrorKind::NotFound,
                "is a link to nothing (remove it, or restore what it points to)",
            ),
        )),
        _ => Ok(false),
    }
}

/// Refuses a `dir` that is not there ("no such directory": more likely a
/// typo than a wish for an empty answer) or is not a directory
/// ([`check_dir`]): for readers that would otherwise answer nothing.
pub fn existing_dir(dir: &Path) -> Result<()> {
    check_dir(dir)?;
    match exists(dir)? {
        true => Ok(()),
        false => Err(Error::Invalid(format!(
            "{}: no such directory",
            dir.display()
        ))),
    }
}

/// Refuses a `dir` that is there but is not a directory (a file given as
/// `--db`), lies below one that is not (`FILE/sub`) or is a link to
/// nothing, saying what that is; one that is not there is the caller's
/// matter (a reader reports the levels missing, a writer creates it).
pub fn check_dir(dir: &Path) -> Result<()> {
    let not_a_dir = |path: &Path, m: std::fs::Metadata| {
        Err(Error::io(
            path,
            std::io::Error::new(
                ErrorKind::NotADirectory,
                format!("is {}; expected a directory", describe_file(m.file_type())),
            ),
        ))
    };
    if dir.as_os_str().is_empty() {
        return Err(Error::Invalid(
            "an empty path names no directory ('.' names this one)".into(),
        ));
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) => not_a_dir(dir, m),
        // Not there: fine, but for a link to nothing on the way (`gone`,
        // `gone/`, `gone/sub`), where a writer could not create it, and for
        // `..` out of a directory that is not there.
        Err(e) if e.kind() == ErrorKind::NotFound => {
            no_way_back(dir)?;
            missing_dirs(dir).map(drop)
        }
        Err(e) if e.kind() == ErrorKind::NotADirectory => {
            // `afile/sub`, or `afile/` (a trailing slash asks for a
            // directory): the components drop the slash.
            let dir: PathBuf = dir.components().collect();
            let on_the_way = dir.ancestors().find_map(|a| match std::fs::metadata(a) {
                Ok(m) if !m.is_dir() => Some((a, m)),
                _ => None,
            });
            match on_the_way {
                Some((a, m)) => not_a_dir(a, m),
                None => Err(Error::io(&dir, e)),
            }
        }
        Err(e) => Err(Error::io(dir, e)),
    }
}

/// Refuses `gone/../x`: a path that leaves by `..` a directory that is not
/// there. A writer would create `gone` only to step out of it again, and
/// then find at `x` what the path did not say (a file, say): the
/// directory it means is the path without the detour.
fn no_way_back(dir: &Path) -> Result<()> {
    let mut prefix = PathBuf::new();
    let mut components = dir.components();
    while let Some(c) = components.next() {
        prefix.push(c);
        if !exists(&prefix)? {
            if components.any(|c| c == std::path::Component::ParentDir) {
                return Err(Error::Invalid(format!(
                    "{}: '..' after {}, which is not there; give the path without it",
                    dir.display(),
                    prefix.display()
                )));
            }
            break;
        }
    }
    Ok(())
}

/// The directories of `dir` and its parents that are not there, `dir`
/// first, up to the first that is: what `create_dir_all(dir)` would make.
/// A link to nothing on the way is an error naming it.
pub fn missing_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let dir: PathBuf = dir.components().collect();
    let mut missing = Vec::new();
    for a in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        if exists(a)? {
            break;
        }
        missing.push(a.to_path_buf());
    }
    Ok(missing)
}

/// [`describe`], with "a regular file" for one.
fn describe_file(kind: std::fs::FileType) -> &'static str {
    match kind.is_file() {
        true => "a regular file",
        false => describe(kind),
    }
}

/// "a directory", "a named pipe", ...: what a file that is not a regular
/// one is, for messages.
fn describe(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Removes the files of `dir` whose names `left` picks: what writers
/// killed mid-file left (never read, since files appear by rename), and
/// links (the links themselves). The caller holds the lock of whatever
/// writes them. Anything else under such a name (a directory) is left, for
/// the write that needs the name to report ([`write_atomically`] names
/// it).
pub fn remove_leftovers(dir: &Path, left: impl Fn(&str) -> bool) -> Result<()> {
    leftovers(dir, left, false)
}

/// [`remove_leftovers`], where anything else under such a name is an error
/// naming it now: for a writer that would otherwise find it only after its
/// work (a build, before it solves a level it could not write).
pub fn remove_leftovers_strictly(dir: &Path, left: impl Fn(&str) -> bool) -> Result<()> {
    leftovers(dir, left, true)
}

fn leftovers(dir: &Path, left: impl Fn(&str) -> bool, strictly: bool) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let path = e.path();
        if !e.file_name().to_str().is_some_and(&left) {
            continue;
        }
        let kind = e.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_file() || kind.is_symlink() {
            remove_if_present(&path)?;
        } else if strictly {
            return Err(in_tmp_place(&path, kind));
        }
    }
    Ok(())
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
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

/// Refuses anything at `path` but a regular file (links followed): a
/// directory, a device or a named pipe in a file's place is an error
/// saying what it is, then `want` (as [`open_regular`] gives it for a
/// table, with [`LEVEL_FILE`]). Nothing there is the caller's matter.
pub fn check_regular(path: &Path, want: &str) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(not_regular(path, m.file_type(), want)),
        Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

/// What [`open_regular`] expects, and [`check_regular`] in a table's place.
pub const LEVEL_FILE: &str = "expected a level's file";

/// The error for `path`, of type `kind` where a regular file goes: what it
/// is, then `want`.
fn not_regular(path: &Path, kind: std::fs::FileType, want: &str) -> Error {
    let error_kind = match kind.is_dir() {
        true => ErrorKind::IsADirectory,
        false => ErrorKind::InvalidInput,
    };
    Error::io(
        path,
        std::io::Error::new(error_kind, format!("is {}; {want}", describe(kind))),
    )
}

/// Opens `path` for reading, refusing anything but a regular file (a
/// directory, a device or a named pipe in a table's place) with an error
/// that says what the path is. The type is looked at before the file is
/// opened, since opening a named pipe waits for a writer, and again after.
pub fn open_regular(path: &Path) -> Result<File> {
    open_checked(
        File::options().read(true),
        path,
        Links::Followed,
        LEVEL_FILE,
    )
}

/// What goes where a solver's or checker's work file is expected.
const WORK_FILE: &str = "expected a work file (a checkpoint or a seed list) of this program";

/// Opens the work file at `path` (a checkpoint, a seed list) with
/// `options`, refusing anything but a regular file, a symbolic link
/// included, as [`open_regular`] does: a named pipe put there would
/// otherwise hold the run, and its directory lock, for ever.
pub fn open_work_file(options: &mut std::fs::OpenOptions, path: &Path) -> Result<File> {
    open_checked(options, path, Links::Refused, WORK_FILE)
}

/// Whether [`open_checked`] follows a symbolic link at the path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Opens what the link points to (a table linked from elsewhere).
    Followed,
    /// Refuses it: a file this program writes in place (a lock, a record
    /// file) must not carry its bytes to another file through a link.
    Refused,
}

/// Opens `path` with `options`, refusing anything but a regular file (a
/// directory, a device, a named pipe, and a symbolic link unless `links`
/// follows them) with an error that says what the path is, then `want`.
/// The type is looked at before the file is opened (opening a named pipe
/// would wait for a writer, or fail for writing without a reader), and
/// again once it is open, without waiting (`O_NONBLOCK`).
pub fn open_checked(
    options: &mut std::fs::OpenOptions,
    path: &Path,
    links: Links,
    want: &str,
) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |kind: std::fs::FileType| Err(not_regular(path, kind, want));
    let before = match links {
        Links::Followed => std::fs::metadata(path),
        Links::Refused => std::fs::symlink_metadata(path),
    };
    match before {
        Ok(m) if !m.is_file() => return refuse(m.file_type()),
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(Error::io(path, e)),
        _ => {}
    }
    let flags = match links {
        Links::Followed => libc::O_NONBLOCK,
        Links::Refused => libc::O_NONBLOCK | libc::O_NOFOLLOW,
    };
    let file = options.custom_flags(flags).open(path).map_err(|e| {
        // A link put there since it was looked at.
        let e = match (links, e.raw_os_error()) {
            (Links::Refused, Some(libc::ELOOP)) => std::io::Error::new(
                ErrorKind::InvalidInput,
                format!("is a symbolic link; {want}"),
            ),
            _ => e,
        };
        Error::io(path, e)
    })?;
    let kind = file.metadata().map_err(|e| Error::io(path, e))?.file_type();
    match kind.is_file() {
        true => Ok(file),
        false => refuse(kind),
    }
}

/// The bytes of the small record file at `path` (`verified.tsv`,
/// `build-log.tsv`, the census's files); `None` if there is none. Anything
/// but a regular file there (a named pipe, whose reading would wait for a
/// writer; a device; a link to nothing) is an error saying what it is, and
/// so is a file of more than `cap`
/// bytes (not one this program wrote), rather than a read without end.
pub fn read_record_file(path: &Path, cap: u64) -> Result<Option<Vec<u8>>> {
    let mut read = File::options();
    let f = match open_checked(
        read.read(true),
        path,
        Links::Followed,
        "expected a regular file",
    ) {
        // None there; but a link to nothing is an error, not a file absent.
        Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => {
            return exists(path).map(|_| None);
        }
        f => f?,
    };
    let too_long = || {
        Error::io(
            path,
            std::io::Error::new(
                ErrorKind::InvalidData,
                format!("more than {cap} bytes; not a record file this program wrote"),
            ),
        )
    };
    // Its length first, so that a file far too long is not read at all;
    // then at most one byte past the cap, in case it grows meanwhile.
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len > cap {
        return Err(too_long());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_long());
    }
    Ok(Some(bytes))
}

/// Opens the record file `path` with `options` to write it in place (to
/// append), without waiting (a named pipe there opens at once) and refusing
/// anything but a regular file, a symbolic link included (what is written
/// would go to its target).
pub fn open_record_file(options: &mut std::fs::OpenOptions, path: &Path) -> Result<File> {
    open_checked(options, path, Links::Refused, "expected a regular file")
}

/// Appends `lines` (each ending in a newline) to the record file `path`
/// (created if missing; [`open_record_file`]) in one write, synced. A
/// partial last line, what an append cut short (by a full disk) leaves, is
/// cut off first: read as a record, it could pass for one with wrong
/// figures (a time cut to its first digits). The caller holds the lock of
/// the directory, so no other process is appending meanwhile.
pub fn append_lines(path: &Path, lines: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    /// Longer than any record: a last line without its newline that is
    /// longer is no record cut short, and is ended instead.
    const RECORD: u64 = 4096;
    let mut options = std::fs::OpenOptions::new();
    let f = open_record_file(options.create(true).read(true).append(true), path)?;
    let io = |e| Error::io(path, e);
    let len = f.metadata().map_err(io)?.len();
    let from = len.saturating_sub(RECORD);
    let mut tail = vec![0; (len - from) as usize];
    f.read_exact_at(&mut tail, from).map_err(io)?;
    let mut text = Vec::with_capacity(lines.len() + 1);
    if tail.last().is_some_and(|&b| b != b'\n') {
        match tail.iter().rposition(|&b| b == b'\n') {
            Some(end) => f.set_len(from + end as u64 + 1).map_err(io)?,
            None if from == 0 => f.set_len(0).map_err(io)?,
            None => text.push(b'\n'),
        }
    }
    text.extend_from_slice(lines);
    (&f).write_all(&text).map_err(io)?;
    f.sync_all().map_err(io)
}

/// Fails now, before the work whose record is appended later, if the
/// record file `path` is there but cannot take it ([`open_record_file`]: a
/// symbolic link, a named pipe); one not there yet is fine.
pub fn check_appendable(path: &Path) -> Result<()> {
    let mut append = std::fs::OpenOptions::new();
    // Read too, as [`append_lines`] opens it.
    match open_record_file(append.read(true).append(true), path) {
        Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => Ok(()),
        opened => opened.map(drop),
    }
}

/// Bytes free for this process on the file system that holds `dir`
/// (`statvfs`'s blocks available to unprivileged users); `None` when it
/// cannot be asked (no such directory, a name with a NUL byte).
pub fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut fs = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `name` is a NUL-terminated path and `fs` is written by the
    // call before it is read, which happens only when it succeeds.
    let asked = unsafe { libc::statvfs(name.as_ptr(), fs.as_mut_ptr()) } == 0;
    asked.then(|| {
        // SAFETY: filled by the successful call.
        let fs = unsafe { fs.assume_init() };
        fs.f_bavail.saturating_mul(fs.f_frsize)
    })
}

/// Bytes held by the regular files under `dir`, its subdirectories' too
/// (links are not followed); what cannot be read counts as nothing, as a
/// missing `dir` does.
pub fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(m) if m.is_dir() => bytes_under(&entry.path()),
            Ok(m) if m.is_file() => m.len(),
            _ => 0,
        })
        .sum()
}

/// sha256 as lowercase hex.
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// sha256 of a byte slice.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// sha256 of what `r` reads, to its end, a MiB at a time.
pub fn sha256_of_reader(r: &mut impl Read) -> std::io::Result<[u8; 32]> {
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match r.read(&mut buf)? {
            0 => return Ok(hash.finalize().into()),
            n => hash.update(&buf[..n]),
        }
    }
}

/// A fresh, empty directory `mancaladb-<module>-<pid>-<name>` in the
/// temporary directory, for a unit test of `module`.
#[cfg(test)]
pub(crate) fn scratch_dir(module: &str, name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mancaladb-{module}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        scratch_dir("files", name)
    }

    #[test]
    fn an_append_cuts_off_a_partial_last_line_first() {
        let dir = scratch("append");
        let log = dir.join("log.tsv");
        append_lines(&log, b"awari\t12\n").unwrap();
        // What a write cut short by a full disk leaves.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .unwrap()
            .write_all(b"awari\t13\t24")
            .unwrap();
        append_lines(&log, b"awari\t14\n").unwrap();
        append_lines(&log, b"awari\t15\n").unwrap();
        assert_eq!(
            std::fs::read(&log).unwrap(),
            b"awari\t12\nawari\t14\nawari\t15\n"
        );
        // A file of one partial line goes whole; a last line longer than
        // any record is ended, not cut.
        std::fs::write(&log, b"awari\t13").unwrap();
        append_lines(&log, b"awari\t16\n").unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"awari\t16\n");
        let long = vec![b'x'; 5000];
        std::fs::write(&log, &long).unwrap();
        append_lines(&log, b"awari\t17\n").unwrap();
        assert_eq!(
            std::fs::read(&log).unwrap(),
            [&long[..], b"\nawari\t17\n"].concat()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_empty_path_and_a_way_back_out_of_nothing_are_refused() {
        let err = check_dir(Path::new("")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "an empty path names no directory ('.' names this one)"
        );
        let dir = scratch("way-back");
        std::fs::write(dir.join("afile"), b"").unwrap();
        let detour = dir.join("gone/../afile");
        let err = check_dir(&detour).unwrap_err().to_string();
        let gone = dir.join("gone");
        assert_eq!(
            err,
            format!(
                "{}: '..' after {}, which is not there; give the path without it",
                detour.display(),
                gone.display()
            )
        );
        // Out of a directory that is there, `..` is a path like any other.
        std::fs::create_dir(&gone).unwrap();
        check_dir(&dir.join("gone/../new")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn links_in_the_temporary_files_place_are_not_written_through() {
        use std::os::unix::fs::symlink;
        let dir = scratch("links");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let out = dir.join("out");
        std::fs::create_dir(&out).unwrap();
        // A link where the temporary file goes: the link goes, not the
        // file it leads to; a dangling one too.
        symlink("../victim", out.join("a.tmp")).unwrap();
        symlink("../nowhere", out.join("b.tmp")).unwrap();
        for name in ["a", "b"] {
            write_atomically(&out.join(name), |f| f.write_all(b"new")).unwrap();
            assert_eq!(std::fs::read(out.join(name)).unwrap(), b"new");
            assert!(!out.join(format!("{name}.tmp")).exists());
            assert!(std::fs::symlink_metadata(out.join(name)).unwrap().is_file());
        }
        assert!(!dir.join("nowhere").exists());
        // A directory there: an error naming it, nothing written.
        std::fs::create_dir(out.join("c.tmp")).unwrap();
        let e = write_atomically(&out.join("c"), |f| f.write_all(b"new")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is a directory, where a temporary file is to be written; remove it",
                out.join("c.tmp").display()
            )
        );
        assert!(!out.join("c").exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A record file is read whole up to its cap, and one longer than the
    /// cap is refused by its length (a sparse file of a terabyte here,
    /// whose reading to the cap would take the cap in memory first).
    #[test]
    fn record_files_longer_than_their_cap_are_refused_unread() {
        let dir = scratch("record-cap");
        let path = dir.join("record");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_record_file(&path, 10).unwrap().unwrap(), b"0123456789");
        let r = read_record_file(&path, 9);
        assert!(
            matches!(&r, Err(e) if e.to_string().contains("more than 9 bytes")),
            "{r:?}"
        );
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(1 << 40)
            .unwrap();
        let r = read_record_file(&path, 1 << 39);
        assert!(
            matches!(&r, Err(e) if e.to_string().contains("not a record file")),
            "{r:?}"
        );
        assert_eq!(read_record_file(&dir.join("none"), 10).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A record file that holds more than its length said when it was
    /// looked at (one grown since; here a /proc file, a regular file whose
    /// length is 0 and whose reading gives its text) is refused once the
    /// read passes the cap, never returned cut to the cap's first bytes.
    #[test]
    fn a_record_file_longer_than_it_said_is_refused_not_cut_short() {
        let path = Path::new("/proc/self/status");
        let meta = std::fs::metadata(path).unwrap();
        assert!(meta.is_file() && meta.len() == 0, "{meta:?}");
        let whole = read_record_file(path, 1 << 20).unwrap().unwrap();
        assert!(whole.starts_with(b"Name:") && whole.len() > 10, "{whole:?}");
        let r = read_record_file(path, 10);
        assert!(
            matches!(&r, Err(e) if e.to_string().contains("more than 10 bytes")),
            "{r:?}"
        );
    }

    /// Makes a named pipe at `path`.
    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    /// `e`'s message, which names `path` first.
    fn says(e: Error, path: &Path) -> String {
        let text = e.to_string();
        let prefix = format!("{}: ", path.display());
        assert!(text.starts_with(&prefix), "{text} (expected {prefix})");
        text[prefix.len()..].to_string()
    }

    /// A write puts the file in place (and counts it) over a regular file
    /// or a link (the link itself, not what it leads to), never over a
    /// directory; a temporary file left is replaced, a directory in its
    /// place or a name too long for it refused before anything is written.
    #[test]
    fn a_write_replaces_a_file_or_a_link_never_a_directory() {
        use std::os::unix::fs::symlink;
        let dir = scratch("replace");
        let before = files_put_in_place();
        let file = dir.join("file");
        write_atomically(&file, |f| f.write_all(b"one")).unwrap();
        std::fs::write(dir.join("file.tmp"), b"left").unwrap();
        check_replaceable(&file).unwrap();
        write_atomically(&file, |f| f.write_all(b"two")).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert!(!dir.join("file.tmp").exists());
        assert!(files_put_in_place() >= before + 2);
        let link = dir.join("link");
        symlink("file", &link).unwrap();
        symlink("file", dir.join("link.tmp")).unwrap();
        check_replaceable(&link).unwrap();
        write_atomically(&link, |f| f.write_all(b"three")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        for e in [
            check_replaceable(&sub).unwrap_err(),
            write_atomically(&sub, |f| f.write_all(b"x")).unwrap_err(),
        ] {
            assert_eq!(
                says(e, &sub),
                "is a directory; only a regular file is written here"
            );
        }
        let new = dir.join("new");
        std::fs::create_dir(dir.join("new.tmp")).unwrap();
        assert_eq!(
            says(check_replaceable(&new).unwrap_err(), &dir.join("new.tmp")),
            "is a directory, where a temporary file is to be written; remove it"
        );
        check_replaceable(&dir.join("absent")).unwrap();
        // A name whose temporary one is too long: refused by that name.
        let long = dir.join("x".repeat(255));
        let e = check_replaceable(&long).unwrap_err();
        assert!(
            matches!(&e, Error::Io { path, source } if *path == tmp_path(&long)
                && source.kind() == ErrorKind::InvalidFilename),
            "{e:?}"
        );
        // Below a file: refused by its own name.
        let below = file.join("x");
        let e = check_replaceable(&below).unwrap_err();
        assert!(
            matches!(&e, Error::Io { path, source } if *path == below
                && source.kind() == ErrorKind::NotADirectory),
            "{e:?}"
        );
        // A write that fails leaves neither the file nor a temporary one.
        let failed = dir.join("failed");
        let e = write_atomically(&failed, |_| Err(std::io::Error::other("disk full"))).unwrap_err();
        assert_eq!(says(e, &failed), "disk full");
        assert!(!failed.exists() && !tmp_path(&failed).exists());
        assert_eq!(parent_dir(Path::new("name")), Path::new("."));
        assert_eq!(parent_dir(Path::new("/name")), Path::new("/"));
        assert_eq!(parent_dir(&file), dir);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What is at a path, for readers and writers of directories: a link
    /// to nothing is an error naming it, never a file absent; a file is not
    /// a directory, nor is anything below it; the directories missing are
    /// made, deepest named first.
    #[test]
    fn directories_are_told_from_files_links_to_nothing_and_absence() {
        use std::os::unix::fs::symlink;
        let dir = scratch("dirs");
        let file = dir.join("file");
        std::fs::write(&file, b"").unwrap();
        let gone = dir.join("gone");
        symlink("nowhere", &gone).unwrap();
        assert!(exists(&file).unwrap() && exists(&dir).unwrap());
        assert!(!exists(&dir.join("absent")).unwrap());
        assert_eq!(
            says(exists(&gone).unwrap_err(), &gone),
            "is a link to nothing (remove it, or restore what it points to)"
        );
        existing_dir(&dir).unwrap();
        let absent = dir.join("a/b");
        assert_eq!(
            existing_dir(&absent).unwrap_err().to_string(),
            format!("{}: no such directory", absent.display())
        );
        check_dir(&absent).unwrap();
        for path in [file.clone(), file.join("sub"), dir.join("file/")] {
            for e in [
                check_dir(&path).unwrap_err(),
                existing_dir(&path).unwrap_err(),
            ] {
                assert_eq!(
                    says(e, &file),
                    "is a regular file; expected a directory",
                    "{path:?}"
                );
            }
        }
        // A link in a loop: the error names the path as given (a `Path`
        // compares equal without the `.`; its bytes do not).
        let looped = dir.join("loop");
        symlink("loop", &looped).unwrap();
        let e = check_dir(&looped.join(".")).unwrap_err();
        assert!(
            matches!(&e, Error::Io { path, source }
                if path.as_os_str() == looped.join(".").as_os_str()
                && source.raw_os_error() == Some(libc::ELOOP)),
            "{e:?}"
        );
        let e = check_dir(&gone.join("sub")).unwrap_err();
        assert!(e.to_string().contains("is a link to nothing"), "{e}");
        assert_eq!(missing_dirs(&dir).unwrap(), Vec::<PathBuf>::new());
        assert_eq!(
            missing_dirs(&absent).unwrap(),
            [absent.clone(), dir.join("a")]
        );
        create_dirs(&absent).unwrap();
        assert!(absent.is_dir());
        create_dirs(&absent).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Leftovers that a name picks go, files and links (not what they lead
    /// to); a directory under such a name stays, or is an error when asked
    /// strictly; what the name does not pick stays.
    #[test]
    fn leftovers_are_the_files_and_links_the_name_picks() {
        use std::os::unix::fs::symlink;
        let dir = scratch("leftovers");
        let keep = dir.join("keep");
        std::fs::write(&keep, b"kept").unwrap();
        std::fs::write(dir.join("a.tmp"), b"").unwrap();
        symlink("keep", dir.join("b.tmp")).unwrap();
        std::fs::create_dir(dir.join("c.tmp")).unwrap();
        let tmp = |name: &str| name.ends_with(".tmp");
        remove_leftovers(&dir, tmp).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["c.tmp", "keep"]);
        assert_eq!(std::fs::read(&keep).unwrap(), b"kept");
        std::fs::write(dir.join("d.tmp"), b"").unwrap();
        assert_eq!(
            says(
                remove_leftovers_strictly(&dir, tmp).unwrap_err(),
                &dir.join("c.tmp")
            ),
            "is a directory, where a temporary file is to be written; remove it"
        );
        std::fs::remove_dir(dir.join("c.tmp")).unwrap();
        remove_leftovers_strictly(&dir, tmp).unwrap();
        assert!(!dir.join("d.tmp").exists() && keep.exists());
        // A guard removes its file when dropped, unless told to keep it.
        let guarded = dir.join("guarded");
        std::fs::write(&guarded, b"").unwrap();
        RemoveOnDrop::new(guarded.clone()).keep();
        assert!(guarded.exists());
        drop(RemoveOnDrop::new(guarded.clone()));
        assert!(!guarded.exists());
        remove_if_present(&guarded).unwrap();
        let e = remove_if_present(&dir).unwrap_err();
        assert!(
            matches!(&e, Error::Io { path, .. } if *path == dir),
            "{e:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Where a regular file is expected, a directory, a named pipe (never
    /// waited on) and, for a work or record file, a link are errors saying
    /// what is there; a file absent is the caller's matter.
    #[test]
    fn only_regular_files_are_opened() {
        use std::os::unix::fs::symlink;
        let dir = scratch("regular");
        let file = dir.join("file");
        std::fs::write(&file, b"bytes").unwrap();
        let link = dir.join("link");
        symlink("file", &link).unwrap();
        let pipe = dir.join("pipe");
        fifo(&pipe);
        let absent = dir.join("absent");
        check_regular(&file, LEVEL_FILE).unwrap();
        check_regular(&link, LEVEL_FILE).unwrap();
        check_regular(&absent, LEVEL_FILE).unwrap();
        let mut read = String::new();
        open_regular(&link)
            .unwrap()
            .read_to_string(&mut read)
            .unwrap();
        assert_eq!(read, "bytes");
        for e in [
            check_regular(&dir, LEVEL_FILE).unwrap_err(),
            open_regular(&dir).unwrap_err(),
        ] {
            assert!(
                matches!(&e, Error::Io { source, .. } if source.kind() == ErrorKind::IsADirectory),
                "{e:?}"
            );
            assert_eq!(says(e, &dir), "is a directory; expected a level's file");
        }
        for e in [
            check_regular(&pipe, LEVEL_FILE).unwrap_err(),
            open_regular(&pipe).unwrap_err(),
        ] {
            assert_eq!(says(e, &pipe), "is a named pipe; expected a level's file");
        }
        let e = check_regular(&file.join("x"), LEVEL_FILE).unwrap_err();
        assert!(
            matches!(&e, Error::Io { source, .. } if source.kind() == ErrorKind::NotADirectory)
        );
        assert!(
            matches!(open_regular(&absent), Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound)
        );
        let mut options = File::options();
        options.read(true);
        open_work_file(&mut options, &file).unwrap();
        assert_eq!(
            says(open_work_file(&mut options, &link).unwrap_err(), &link),
            format!("is a symbolic link; {WORK_FILE}")
        );
        // Refused before it is opened: opening a directory to write fails
        // otherwise with an error that does not say what is expected.
        assert_eq!(
            says(
                open_work_file(File::options().write(true), &dir).unwrap_err(),
                &dir
            ),
            format!("is a directory; {WORK_FILE}")
        );
        // Record files: read, appended to, refused.
        assert_eq!(read_record_file(&link, 10).unwrap().unwrap(), b"bytes");
        assert_eq!(
            says(read_record_file(&pipe, 10).unwrap_err(), &pipe),
            "is a named pipe; expected a regular file"
        );
        let gone = dir.join("gone");
        symlink("nowhere", &gone).unwrap();
        assert!(
            read_record_file(&gone, 10)
                .unwrap_err()
                .to_string()
                .contains("link to nothing")
        );
        check_appendable(&file).unwrap();
        check_appendable(&absent).unwrap();
        assert!(!absent.exists());
        for path in [&link, &pipe] {
            let e = check_appendable(path).unwrap_err();
            assert!(
                matches!(&e, Error::Io { path: p, .. } if p == path),
                "{e:?}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What a command's `--out` names: the file itself, or the one a link
    /// there leads to (written through, so the link stays); a directory,
    /// a device, a named pipe, a link to one or to nothing, and a name
    /// ending in `/` are refused.
    #[test]
    fn an_output_file_is_a_regular_file_or_a_link_to_one() {
        use std::os::unix::fs::symlink;
        let dir = scratch("output");
        let file = dir.join("file");
        std::fs::write(&file, b"old").unwrap();
        let link = dir.join("link");
        symlink("file", &link).unwrap();
        assert_eq!(output_file(&file).unwrap(), file);
        let absent = dir.join("absent");
        assert_eq!(output_file(&absent).unwrap(), absent);
        assert_eq!(
            output_file(&link).unwrap(),
            std::fs::canonicalize(&file).unwrap()
        );
        write_output(&link, |f| f.write_all(b"new")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        let pipe = dir.join("pipe");
        fifo(&pipe);
        let (to_dir, to_pipe, gone) = (dir.join("to-dir"), dir.join("to-pipe"), dir.join("gone"));
        symlink(".", &to_dir).unwrap();
        symlink("pipe", &to_pipe).unwrap();
        symlink("nowhere", &gone).unwrap();
        let slash = PathBuf::from(format!("{}/", file.display()));
        for (path, what) in [
            (&dir, "a directory"),
            (&pipe, "a named pipe"),
            (&PathBuf::from("/dev/null"), "a device"),
            (&to_dir, "a link to a directory"),
            (&to_pipe, "a link to a named pipe"),
            (&gone, "a link that leads nowhere"),
            (&slash, "a directory's name (it ends with /)"),
        ] {
            let e = output_file(path).unwrap_err();
            assert_eq!(
                says(e, path),
                format!("is {what}; only a regular file is written here")
            );
        }
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        // What cannot be looked at is an error of its own, not a refusal.
        let below = file.join("x");
        let e = output_file(&below).unwrap_err();
        assert!(
            matches!(&e, Error::Io { path, source } if *path == below
                && source.kind() == ErrorKind::NotADirectory),
            "{e:?}"
        );
        let looped = dir.join("loop");
        symlink("loop", &looped).unwrap();
        let e = output_file(&looped).unwrap_err();
        assert!(
            matches!(&e, Error::Io { path, source } if *path == looped
                && source.raw_os_error() == Some(libc::ELOOP)),
            "{e:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The hashes are SHA-256 (the known answers of FIPS 180-2), of a slice
    /// and of a reader alike (the reader's over more than one read), in
    /// lowercase hex.
    #[test]
    fn sha256_of_known_answers() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(hex(&sha256(b"abc")), abc);
        assert_eq!(hex(&sha256_of_reader(&mut &b"abc"[..]).unwrap()), abc);
        let million = vec![b'a'; 1_000_000];
        let want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
        assert_eq!(hex(&sha256(&million)), want);
        // In pieces shorter than the reader's buffer.
        let mut pieces = std::io::Read::chain(&million[..300_000], &million[300_000..]);
        assert_eq!(hex(&sha256_of_reader(&mut pieces).unwrap()), want);
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }

    /// A directory where files can be made passes, leaving nothing; one
    /// where none can (`/proc`) is an error naming it.
    #[test]
    fn a_directory_is_checked_for_writing_by_a_file_made_and_removed() {
        let dir = scratch("writable");
        check_files_can_be_created(&dir).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let proc = Path::new("/proc");
        let e = check_files_can_be_created(proc).unwrap_err();
        assert!(says(e, proc).starts_with("no file can be written in this directory: "));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The file this process's standard output goes to is refused as an
    /// output file (the rename would drop what is there); another is not.
    #[test]
    fn the_file_standard_output_goes_to_is_refused() {
        let dir = scratch("stdout");
        let file = dir.join("file");
        std::fs::write(&file, b"").unwrap();
        not_standard_output(&file, &std::fs::metadata(&file).unwrap()).unwrap();
        let out = std::fs::metadata("/dev/stdout").unwrap();
        let e = not_standard_output(&file, &out).unwrap_err();
        assert_eq!(
            says(e, &file),
            "is where this command's own output goes; name another file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The bytes under a directory are its regular files' lengths, its
    /// subdirectories' included and a link's target not; a missing
    /// directory holds none.
    #[test]
    fn the_bytes_under_a_directory_count_its_files_not_links() {
        let dir = scratch("bytes-under");
        std::fs::write(dir.join("a"), vec![0u8; 1000]).unwrap();
        std::fs::create_dir_all(dir.join("work/rank-0")).unwrap();
        std::fs::write(dir.join("work/rank-0/state.0"), vec![0u8; 234]).unwrap();
        let outside = scratch("bytes-outside");
        std::fs::write(outside.join("big"), vec![0u8; 50_000]).unwrap();
        std::os::unix::fs::symlink(outside.join("big"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("dir-link")).unwrap();
        assert_eq!(bytes_under(&dir), 1234);
        assert_eq!(bytes_under(&dir.join("work")), 234);
        assert_eq!(bytes_under(&dir.join("missing")), 0);
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    /// The free disk is what `df` reports as available, in bytes (within
    /// what other processes write meanwhile); a missing directory has
    /// none to report.
    #[test]
    fn the_free_disk_is_what_df_reports_available() {
        let dir = scratch("free-disk");
        let ours = free_disk(&dir).expect("statvfs of a directory");
        let df = std::process::Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&dir)
            .output()
            .expect("df runs");
        let text = String::from_utf8(df.stdout).unwrap();
        let theirs: u64 = text.lines().nth(1).unwrap().trim().parse().unwrap();
        assert!(
            ours.abs_diff(theirs) < 256 << 20,
            "{ours} against df's {theirs}"
        );
        assert_eq!(free_disk(&dir.join("missing")), None);
        assert_eq!(free_disk(Path::new("a\0b")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
