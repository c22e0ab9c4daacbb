//! A solver's checkpoint file: a header (sealed where it says where the
//! solver stands) and its state, zstd-compressed; and when checkpoints are
//! due ([`CheckpointClock`], after [`crate::settings::checkpoint_interval`]). The builder's level
//! solver and the checker's checks keep their checkpoints in it.

use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::{Corruption, Error, Result};
use crate::files::{open_work_file, write_atomically};

/// The first `len` bytes of the file at `path`; `None` if there is no
/// such file or it is shorter. Any other failure to read it (a read
/// error, no permission) is an error: a checkpoint that cannot be read is
/// not one that is absent, and must not be dropped as if it were.
pub fn read_head(path: &Path, len: usize) -> Result<Option<Vec<u8>>> {
    let mut head = vec![0u8; len];
    let mut file = match open_work_file(File::options().read(true), path) {
        Ok(file) => file,
        Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match file.read_exact(&mut head) {
        Ok(()) => Ok(Some(head)),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Bytes of the hash [`sealed`] puts at a header's end.
pub const SEAL: usize = 8;

/// `header` with the first [`SEAL`] bytes of its sha256 at its end. The
/// content checksum of [`write_compressed`] does not cover the header, so
/// a header that says where a solver stands is sealed: a reader that
/// rebuilds the header from what it parsed and finds other bytes knows it
/// is damaged.
pub fn sealed(mut header: Vec<u8>) -> Vec<u8> {
    let sum = Sha256::digest(&header);
    header.extend_from_slice(&sum[..SEAL]);
    header
}

/// Writes `header` and then `state` zstd-compressed (with its content
/// checksum) to `path` with [`write_atomically`] (so the rename survives a
/// crash); returns the file's bytes. This is how solvers checkpoint their
/// state.
///
/// The solvers checkpoint between two stages, when their own threads are
/// idle, so zstd compresses on as many worker threads as rayon has (one
/// level-36 checkpoint is up to 14 GB of state: BENCHMARKS, "Checkpoints
/// written on every core"). The frame is the same format whatever the
/// number of workers, and [`read_compressed`] reads it as it reads any.
pub fn write_compressed(path: &Path, header: &[u8], state: &[u8]) -> Result<u64> {
    let workers = u32::try_from(rayon::current_num_threads()).unwrap_or(u32::MAX);
    write_atomically(path, |f| {
        let mut out = BufWriter::with_capacity(1 << 20, f);
        out.write_all(header)?;
        let mut z = zstd::stream::Encoder::new(out, 1)?;
        z.include_checksum(true)?;
        if workers > 1 {
            z.multithread(workers)?;
        }
        z.write_all(state)?;
        z.finish()?.flush()
    })?;
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| Error::io(path, e))
}

/// Reads into `state` what [`write_compressed`] wrote to `path` behind
/// `header`: [`Corruption::Checkpoint`] if the header differs or the
/// content is damaged, shorter or longer than `state`. A failure of the
/// operating system to read it (an I/O error, no permission) is an
/// [`Error::Io`], not damage: a caller that drops damaged work files must
/// not drop hours of work over a read that may succeed next time.
pub fn read_compressed(path: &Path, header: &[u8], state: &mut [u8]) -> Result<()> {
    // zstd reports its own decoding failures as errors without an OS code,
    // and passes those of the file through.
    let failed = |e: std::io::Error, why| match e.raw_os_error() {
        Some(_) => Error::io(path, e),
        None => Error::corrupt(path, Corruption::Checkpoint(why)),
    };
    let short = "shorter than its slice, or damaged";
    let mut f =
        BufReader::with_capacity(1 << 20, open_work_file(File::options().read(true), path)?);
    let mut head = vec![0u8; header.len()];
    f.read_exact(&mut head).map_err(|e| failed(e, short))?;
    if head != header {
        return Err(Error::corrupt(
            path,
            Corruption::Checkpoint("not a checkpoint of this level"),
        ));
    }
    let mut z = zstd::stream::Decoder::with_buffer(f).map_err(|e| failed(e, short))?;
    z.read_exact(state).map_err(|e| failed(e, short))?;
    let mut rest = [0u8; 1];
    match z.read(&mut rest) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::corrupt(
            path,
            Corruption::Checkpoint("longer than its slice"),
        )),
        Err(e) => Err(failed(e, "damaged (its checksum does not match)")),
    }
}

/// When a solver's next checkpoint is due: [`checkpoint_interval`](crate::settings::checkpoint_interval) after
/// the last one (or the start); never without an interval.
pub struct CheckpointClock {
    every: Option<Duration>,
    last: std::time::Instant,
}

impl CheckpointClock {
    /// A clock started now; `None`: checkpoints are off.
    pub fn new(every: Option<Duration>) -> CheckpointClock {
        CheckpointClock {
            every,
            last: std::time::Instant::now(),
        }
    }

    /// Whether checkpoints are taken at all.
    pub fn on(&self) -> bool {
        self.every.is_some()
    }

    /// Whether the interval has passed since the last checkpoint.
    pub fn due(&self) -> bool {
        self.every.is_some_and(|every| self.last.elapsed() >= every)
    }

    /// A checkpoint was just taken: the next is due an interval from now.
    pub fn reset(&mut self) {
        self.last = std::time::Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        crate::files::scratch_dir("checkpoint-file", name)
    }

    fn is_damaged(r: Result<()>) -> bool {
        matches!(
            r,
            Err(Error::Corrupt {
                kind: Corruption::Checkpoint(_),
                ..
            })
        )
    }

    #[test]
    fn compressed_state_reads_back_and_damage_is_told_from_io_errors() {
        let dir = scratch("compressed");
        let path = dir.join("state");
        let state: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        // What it returns is the file's size (the checkpoint notices'
        // bytes).
        let bytes = write_compressed(&path, b"head", &state).unwrap();
        assert_eq!(bytes, std::fs::metadata(&path).unwrap().len());
        assert!(bytes > 4 && bytes < 100_000, "{bytes}");
        let mut back = vec![0u8; state.len()];
        read_compressed(&path, b"head", &mut back).unwrap();
        assert_eq!(back, state);

        // Another header, a shorter or longer slice, a flipped byte, a cut
        // file: damage, which solvers drop.
        assert!(is_damaged(read_compressed(&path, b"HEAD", &mut back)));
        assert!(is_damaged(read_compressed(
            &path,
            b"head",
            &mut vec![0; state.len() + 1]
        )));
        assert!(is_damaged(read_compressed(
            &path,
            b"head",
            &mut vec![0; state.len() - 1]
        )));
        let bytes = std::fs::read(&path).unwrap();
        let mut flipped = bytes.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x40;
        std::fs::write(&path, &flipped).unwrap();
        assert!(is_damaged(read_compressed(&path, b"head", &mut back)));
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(is_damaged(read_compressed(&path, b"head", &mut back)));
        std::fs::write(&path, &bytes[..2]).unwrap();
        assert!(is_damaged(read_compressed(&path, b"head", &mut back)));

        // The system failing to read it is an I/O error, kept: here a
        // directory, which opens but cannot be read (EISDIR).
        let not_a_file = dir.join("dir");
        std::fs::create_dir(&not_a_file).unwrap();
        let r = read_compressed(&not_a_file, b"head", &mut back);
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The head of a file is `None` if the file is absent or shorter (a
    /// checkpoint cut short inside its header is no checkpoint, and no
    /// error that would stop every rerun); any other failure to read it is
    /// an error (here `/proc/self/mem`, a regular file whose first bytes
    /// cannot be read: EIO).
    #[test]
    fn a_head_absent_or_short_is_none_and_a_failed_read_an_error() {
        let dir = scratch("head");
        let path = dir.join("file");
        assert_eq!(read_head(&path, 4).unwrap(), None);
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(read_head(&path, 4).unwrap(), None);
        assert_eq!(read_head(&path, 3).unwrap(), Some(b"abc".to_vec()));
        let r = read_head(Path::new("/proc/self/mem"), 8);
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Off, a clock is never due; with an interval, it is due once the
    /// interval has passed since it started or was last reset, not before.
    #[test]
    fn the_checkpoint_clock_is_due_an_interval_after_its_last_reset() {
        let off = CheckpointClock::new(None);
        assert!(!off.on() && !off.due());
        let always = CheckpointClock::new(Some(Duration::ZERO));
        assert!(always.on() && always.due());
        let hourly = CheckpointClock::new(Some(Duration::from_secs(3600)));
        assert!(hourly.on() && !hourly.due());
        let every = Duration::from_millis(500);
        let mut clock = CheckpointClock::new(Some(every));
        std::thread::sleep(every);
        assert!(clock.due());
        clock.reset();
        assert!(!clock.due(), "due again right after a reset");
        std::thread::sleep(every);
        assert!(clock.due());
    }
}
