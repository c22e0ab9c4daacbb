//! The level solver's files: seed lists and checkpoints of one rank's slice.
//!
//! The solver keeps one byte per position in memory (see
//! [`super::solve`]); what does not fit in that byte goes to a work
//! directory, one per rank and level:
//!
//! * **Seed lists.** The forward pass finds each position's best capture
//!   `b`. Threshold `t` needs exactly two sets of them: `b == t` (entering
//!   `W_t` by a capture) and `b == -t` (from `t` on, no capture keeps the
//!   position out of `L_t`). Both are written once, as the forward pass
//!   goes, to the files `w.<t>` and `l.<t>`, and read once, sequentially, at
//!   threshold `t`. A record is a chunk of the slice and the offsets in it:
//!   `chunk: u32 LE, count: u32 LE, count x offset: u16 LE` (chunks hold at
//!   most 2^16 positions). Records appear in any order; each position is in
//!   at most one list.
//! * **Checkpoints.** `state.<t>` holds the state byte of every position of
//!   the slice after every threshold above `t` is done, behind a header that
//!   names the level, the rule set, the rank's slice and `t`
//!   ([`Checkpoint`]). It is written to a temporary name, synced and renamed,
//!   so a file under its final name is always complete; the seed lists are
//!   synced before the first checkpoint is written.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Corruption, Error, Result};

/// The seed lists of a slice, being written by the forward pass.
pub struct SeedLists {
    dir: PathBuf,
    /// `files[2 * (t - 1) + win]`.
    files: Vec<Mutex<BufWriter<File>>>,
}

/// One record of a seed list: offsets within chunk `chunk` of the slice.
pub struct Record {
    pub chunk: u32,
    pub offsets: Vec<u16>,
}

fn list_path(dir: &Path, t: usize, win: bool) -> PathBuf {
    dir.join(format!("{}.{t}", if win { "w" } else { "l" }))
}

impl SeedLists {
    /// Creates (empties) the lists of thresholds `1..=seeds` in `dir`.
    pub fn create(dir: &Path, seeds: usize) -> Result<SeedLists> {
        let mut files = Vec::with_capacity(2 * seeds);
        for t in 1..=seeds {
            for win in [false, true] {
                let path = list_path(dir, t, win);
                let f = File::create(&path).map_err(|e| Error::io(&path, e))?;
                files.push(Mutex::new(BufWriter::with_capacity(1 << 16, f)));
            }
        }
        Ok(SeedLists {
            dir: dir.to_path_buf(),
            files,
        })
    }

    /// Appends a record to the list of threshold `t`: `win` for best capture
    /// `t`, else `-t`.
    pub fn append(&self, t: usize, win: bool, chunk: u32, offsets: &[u16]) -> Result<()> {
        let mut bytes = Vec::with_capacity(8 + 2 * offsets.len());
        bytes.extend_from_slice(&chunk.to_le_bytes());
        bytes.extend_from_slice(&(offsets.len() as u32).to_le_bytes());
        for o in offsets {
            bytes.extend_from_slice(&o.to_le_bytes());
        }
        let mut f = self.files[2 * (t - 1) + usize::from(win)]
            .lock()
            .expect("a seed list writer panicked");
        f.write_all(&bytes)
            .map_err(|e| Error::io(list_path(&self.dir, t, win), e))
    }

    /// Flushes and syncs every list.
    pub fn finish(self) -> Result<()> {
        for (k, f) in self.files.into_iter().enumerate() {
            let path = list_path(&self.dir, k / 2 + 1, k % 2 == 1);
            let f = f.into_inner().expect("a seed list writer panicked");
            f.into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(&path, e))?;
        }
        Ok(())
    }
}

/// Reads the list of threshold `t` (`win`: best capture `t`, else `-t`) in
/// batches of about `batch` offsets, calling `f` on each batch.
pub fn read_list(
    dir: &Path,
    t: usize,
    win: bool,
    batch: usize,
    mut f: impl FnMut(&[Record]),
) -> Result<()> {
    let path = list_path(dir, t, win);
    let io = |e| Error::io(&path, e);
    let mut r = BufReader::with_capacity(1 << 16, File::open(&path).map_err(io)?);
    let mut records = Vec::new();
    let mut held = 0;
    let mut head = [0u8; 8];
    loop {
        match r.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(io(e)),
        }
        let chunk = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let count = u32::from_le_bytes(head[4..].try_into().expect("4 bytes")) as usize;
        let mut raw = vec![0u8; 2 * count];
        r.read_exact(&mut raw).map_err(io)?;
        let offsets = raw
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        records.push(Record { chunk, offsets });
        held += count;
        if held >= batch {
            f(&records);
            records.clear();
            held = 0;
        }
    }
    if !records.is_empty() {
        f(&records);
    }
    Ok(())
}

/// What a checkpoint belongs to; a checkpoint is used only if all of it
/// matches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Checkpoint {
    pub rules: u8,
    pub seeds: u32,
    pub ranks: u32,
    pub rank: u32,
    pub start: u64,
    pub end: u64,
}

const MAGIC: &[u8; 8] = b"MDBSOLV1";
const HEADER: usize = 8 + 1 + 4 * 3 + 8 * 2 + 4;

fn state_path(dir: &Path, t: usize) -> PathBuf {
    dir.join(format!("state.{t}"))
}

impl Checkpoint {
    fn header(&self, t: usize) -> [u8; HEADER] {
        let mut h = [0u8; HEADER];
        let mut w = &mut h[..];
        w.write_all(MAGIC).expect("fits");
        w.write_all(&[self.rules]).expect("fits");
        for x in [self.seeds, self.ranks, self.rank] {
            w.write_all(&x.to_le_bytes()).expect("fits");
        }
        for x in [self.start, self.end] {
            w.write_all(&x.to_le_bytes()).expect("fits");
        }
        w.write_all(&(t as u32).to_le_bytes()).expect("fits");
        h
    }

    /// Writes `state`, the slice after every threshold above `t`, as
    /// `state.<t>` in `dir` (atomically).
    pub fn save(&self, dir: &Path, t: usize, state: &[u8]) -> Result<()> {
        crate::files::write_atomically(&state_path(dir, t), |f| {
            let mut out = BufWriter::with_capacity(1 << 20, f);
            out.write_all(&self.header(t))?;
            out.write_all(state)?;
            out.flush()
        })?;
        // The rename itself must survive a crash.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))
    }

    /// The thresholds `t` of the complete checkpoints in `dir` that belong
    /// to this slice, in decreasing order (least advanced first).
    pub fn saved(&self, dir: &Path) -> Vec<usize> {
        let mut found: Vec<usize> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let t: usize = name.strip_prefix("state.")?.parse().ok()?;
                let mut head = [0u8; HEADER];
                File::open(e.path()).ok()?.read_exact(&mut head).ok()?;
                (head == self.header(t)).then_some(t)
            })
            .collect();
        found.sort_unstable_by(|a, b| b.cmp(a));
        found
    }

    /// Reads checkpoint `state.<t>` of `dir` into `state`.
    pub fn load(&self, dir: &Path, t: usize, state: &mut [u8]) -> Result<()> {
        let path = state_path(dir, t);
        let io = |e| Error::io(&path, e);
        let mut f = BufReader::with_capacity(1 << 20, File::open(&path).map_err(io)?);
        let mut head = [0u8; HEADER];
        f.read_exact(&mut head).map_err(io)?;
        if head != self.header(t) {
            return Err(Error::corrupt(
                &path,
                Corruption::Checkpoint("not a checkpoint of this level"),
            ));
        }
        f.read_exact(state).map_err(io)?;
        let mut rest = [0u8; 1];
        if f.read(&mut rest).map_err(io)? != 0 {
            return Err(Error::corrupt(
                &path,
                Corruption::Checkpoint("longer than its slice"),
            ));
        }
        Ok(())
    }

    /// Removes the checkpoints of `dir` other than `state.<keep>`.
    pub fn remove_others(&self, dir: &Path, keep: usize) -> Result<()> {
        for t in self.saved(dir) {
            if t != keep {
                let path = state_path(dir, t);
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            }
        }
        Ok(())
    }
}
