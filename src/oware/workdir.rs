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
//!   threshold `t`, a batch at a time as the solver has room
//!   ([`SeedReader`]). A record is a chunk of the slice and the offsets in it:
//!   `chunk: u32 LE, count: u32 LE, bytes: u32 LE, check: [u8; 4]`, then
//!   `bytes` bytes of the increasing offsets (chunks hold at most 2^16
//!   positions) as differences from the last (the first from 0), each in
//!   LEB128: most take one byte. `check` is the start of the SHA-256 of the
//!   list's threshold and side (`t: u32 LE`, `win: u8`) and the record's
//!   other bytes, so that a damaged record is found, not read as other
//!   seeds (a changed delta byte still decodes), and a record is read only
//!   from its own list. Records appear in any order; each position is in
//!   at most one list. A record check cannot tell a list that ends early
//!   (cut between records) from a shorter one: the length of every list is
//!   therefore recorded when the forward pass ends (in every `state.<t>`
//!   header) and at each forward checkpoint, and a list is read only if it
//!   has exactly that length and its records end exactly there
//!   ([`check_lists`], [`SeedReader`]). No seed is ever dropped.
//! * **Checkpoints.** `state.<t>` holds the state byte of every position of
//!   the slice after every threshold above `t` is done, behind a header that
//!   names the level, the rule set, the rank's slice, the lower levels it is
//!   solved from (a hash of their content hashes), `t` and the length of
//!   every seed list, and ends with the first 8 bytes of its own SHA-256
//!   ([`Checkpoint`]), zstd-compressed with its content checksum (a state
//!   is mostly runs of a few values: a quarter of the bytes or less). It is
//!   written to a temporary name, synced and renamed,
//!   so a file under its final name is always complete (the older one and
//!   the lists of the thresholds done go once it is); the seed lists are
//!   synced before the first checkpoint is written.
//! * **Forward checkpoints.** `forward.<walk>.<done>` (`<walk>` is the
//!   walk's number: 1 for captures, 2 for moves) holds the state
//!   bytes part-way through the forward pass ([`ForwardMark`]: which of its
//!   two walks, how many of its parts are done, and the length of every
//!   seed list then), in the same format behind its own header (which
//!   ends with its own checksum: the lists are cut back to it). The lists
//!   are synced before it is written and cut back to those lengths when it
//!   is resumed, so records appended after it count once (lists only grow,
//!   so an older mark's lengths are there too). The older one goes once
//!   every rank has written the newer, as with thresholds: ranks stopped
//!   in between resume together from the older. Any `state.<t>` supersedes
//!   them, and they go with the older checkpoints.

use std::fs::{DirEntry, File};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::error::{Corruption, Error, Result};
use crate::files::{SEAL, open_work_file, read_compressed, read_head, sealed, write_compressed};

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

    /// Reopens the lists of thresholds `1..=seeds` in `dir` to append to
    /// them, each cut back to its length in `lengths` (as [`SeedLists::sync`]
    /// returned them); a list shorter than that is a damaged work directory.
    pub fn reopen(dir: &Path, seeds: usize, lengths: &[u64]) -> Result<SeedLists> {
        assert_eq!(lengths.len(), 2 * seeds, "one length per list");
        let mut files = Vec::with_capacity(2 * seeds);
        check_lists(dir, seeds, lengths, true)?;
        for (k, &len) in lengths.iter().enumerate() {
            let path = list_path(dir, k / 2 + 1, k % 2 == 1);
            let io = |e| Error::io(&path, e);
            let mut f = open_work_file(File::options().write(true), &path)?;
            f.set_len(len).map_err(io)?;
            f.seek(SeekFrom::End(0)).map_err(io)?;
            files.push(Mutex::new(BufWriter::with_capacity(1 << 16, f)));
        }
        Ok(SeedLists {
            dir: dir.to_path_buf(),
            files,
        })
    }

    /// Flushes and syncs every list; returns their lengths in bytes, in the
    /// order [`SeedLists::reopen`] takes them.
    pub fn sync(&self) -> Result<Vec<u64>> {
        let mut lengths = Vec::with_capacity(self.files.len());
        for (k, f) in self.files.iter().enumerate() {
            let path = list_path(&self.dir, k / 2 + 1, k % 2 == 1);
            let mut f = f.lock().expect("a seed list writer panicked");
            let len = f
                .flush()
                .and_then(|()| f.get_ref().sync_data())
                .and_then(|()| f.get_ref().metadata())
                .map_err(|e| Error::io(&path, e))?
                .len();
            lengths.push(len);
        }
        Ok(lengths)
    }

    /// Appends a record to the list of threshold `t`: `win` for best capture
    /// `t`, else `-t`. `offsets` are increasing.
    pub fn append(&self, t: usize, win: bool, chunk: u32, offsets: &[u16]) -> Result<()> {
        let mut bytes = Vec::with_capacity(HEAD + offsets.len() + 8);
        bytes.extend_from_slice(&chunk.to_le_bytes());
        bytes.extend_from_slice(&(offsets.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&[0; 8]); // the payload's length and check, below
        let mut last = 0;
        for &o in offsets {
            debug_assert!(o >= last, "offsets increase");
            let mut delta = o - last;
            last = o;
            while delta >= 0x80 {
                bytes.push(delta as u8 | 0x80);
                delta >>= 7;
            }
            bytes.push(delta as u8);
        }
        let len = (bytes.len() - HEAD) as u32;
        bytes[8..12].copy_from_slice(&len.to_le_bytes());
        let check = record_check(t, win, &bytes[..12], &bytes[HEAD..]);
        bytes[12..HEAD].copy_from_slice(&check);
        let mut f = self.files[2 * (t - 1) + usize::from(win)]
            .lock()
            .expect("a seed list writer panicked");
        f.write_all(&bytes)
            .map_err(|e| Error::io(list_path(&self.dir, t, win), e))
    }

    /// Flushes and syncs every list; returns their final lengths in bytes,
    /// in the order [`SeedLists::reopen`] takes them (what [`check_lists`]
    /// and [`SeedReader::open`] hold the lists to).
    pub fn finish(self) -> Result<Vec<u64>> {
        self.sync() // and the files close as `self` goes
    }
}

/// The length of the seed list at `path`; a list that is not there is a
/// damaged work directory (a wipe or a removal stopped part-way), not an
/// error that would stop every rerun.
fn list_len(path: &Path) -> Result<u64> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(missing(path)),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// A seed list that should be there and is not (a damaged work directory).
fn missing(path: &Path) -> Error {
    Error::corrupt(
        path,
        Corruption::Checkpoint("a seed list its checkpoint needs is missing"),
    )
}

/// Checks that the seed lists of thresholds `1..=thresholds` in `dir` are
/// there with the lengths `lengths` gives them (as [`SeedLists::finish`]
/// or [`SeedLists::sync`] returned them): exactly, or with `at_least` at
/// least (a forward checkpoint's lists, cut back to it when reopened). A
/// list missing or of another length is a damaged work directory.
pub fn check_lists(dir: &Path, thresholds: usize, lengths: &[u64], at_least: bool) -> Result<()> {
    for (k, &len) in lengths.iter().enumerate().take(2 * thresholds) {
        let path = list_path(dir, k / 2 + 1, k % 2 == 1);
        let found = list_len(&path)?;
        if found < len {
            return Err(Error::corrupt(
                &path,
                Corruption::Checkpoint("a seed list is shorter than its checkpoint says"),
            ));
        }
        if found > len && !at_least {
            return Err(Error::corrupt(
                &path,
                Corruption::Checkpoint("a seed list is longer than its checkpoint says"),
            ));
        }
    }
    Ok(())
}

/// A seed list being read, record by record, as the solver has room for
/// its positions.
pub struct SeedReader {
    path: PathBuf,
    t: usize,
    win: bool,
    /// The list's length, as recorded, and the bytes read so far.
    len: u64,
    read: u64,
    file: BufReader<File>,
    payload: Vec<u8>,
    /// Positions in the slice, and in each of its chunks.
    positions: u64,
    chunk_len: u64,
}

impl SeedReader {
    /// Opens the list of threshold `t` (`win`: best capture `t`, else `-t`)
    /// of a slice of `positions` positions cut into chunks of `chunk_len`
    /// (at most 2^16). `lengths` are every list's recorded length
    /// ([`SeedLists::finish`]): a list missing or of another length is a
    /// damaged work directory.
    pub fn open(
        dir: &Path,
        t: usize,
        win: bool,
        lengths: &[u64],
        positions: u64,
        chunk_len: u64,
    ) -> Result<SeedReader> {
        debug_assert!(chunk_len <= 1 << 16, "offsets are u16");
        let len = lengths[2 * (t - 1) + usize::from(win)];
        let path = list_path(dir, t, win);
        let file = match open_work_file(File::options().read(true), &path) {
            Ok(f) => f,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(missing(&path));
            }
            Err(e) => return Err(e),
        };
        if file.metadata().map_err(|e| Error::io(&path, e))?.len() != len {
            return Err(Error::corrupt(
                &path,
                Corruption::Checkpoint("a seed list's length is not the one recorded for it"),
            ));
        }
        Ok(SeedReader {
            path,
            t,
            win,
            len,
            read: 0,
            file: BufReader::with_capacity(1 << 16, file),
            payload: Vec::new(),
            positions,
            chunk_len,
        })
    }

    /// Replaces `records` with the next records of the list, as many as
    /// hold `batch` offsets or more (at least one record); empty at the end.
    /// A record cut short, changed (its check fails), from another list,
    /// or naming a position outside the slice, is a damaged work directory,
    /// and so is a list whose records do not end exactly at its recorded
    /// length: no seed is ever dropped or made up.
    pub fn read(&mut self, batch: usize, records: &mut Vec<Record>) -> Result<()> {
        records.clear();
        let mut held = 0;
        let mut head = [0u8; HEAD];
        while held < batch.max(1) {
            match read_up_to(&mut self.file, &mut head).map_err(|e| Error::io(&self.path, e))? {
                0 if self.read == self.len => break, // the end of the list
                HEAD => {}
                _ => return Err(damaged(&self.path)),
            }
            let word =
                |k: usize| u32::from_le_bytes(head[4 * k..4 * k + 4].try_into().expect("4 bytes"));
            let (chunk, count, len) = (word(0), word(1) as usize, word(2) as usize);
            if count > 1 << 16 || len > 3 * count {
                return Err(damaged(&self.path));
            }
            self.payload.resize(len, 0);
            if read_up_to(&mut self.file, &mut self.payload)
                .map_err(|e| Error::io(&self.path, e))?
                < len
            {
                return Err(damaged(&self.path));
            }
            if record_check(self.t, self.win, &head[..12], &self.payload) != head[12..] {
                return Err(damaged(&self.path));
            }
            self.read += (HEAD + len) as u64;
            let offsets =
                decode_offsets(&self.payload, count).ok_or_else(|| damaged(&self.path))?;
            if let Some(&last) = offsets.last() {
                let last = u64::from(last);
                if last >= self.chunk_len
                    || u64::from(chunk) * self.chunk_len + last >= self.positions
                {
                    return Err(damaged(&self.path));
                }
            }
            records.push(Record { chunk, offsets });
            held += count;
        }
        Ok(())
    }
}

/// Reads into `buf` until it is full or the file ends; returns the bytes
/// read.
fn read_up_to(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Bytes of a seed list record's head.
const HEAD: usize = 16;

/// The check of a record of the seed list of threshold `t` (`win`: best
/// capture `t`, else `-t`): the first four bytes of the SHA-256 of `t`
/// (u32 LE), `win` (one byte), its head's other twelve bytes and its
/// payload.
fn record_check(t: usize, win: bool, head: &[u8], payload: &[u8]) -> [u8; 4] {
    let sum = Sha256::new()
        .chain_update((t as u32).to_le_bytes())
        .chain_update([u8::from(win)])
        .chain_update(head)
        .chain_update(payload)
        .finalize();
    sum[..4].try_into().expect("4 bytes")
}

/// A seed list that does not decode (a damaged work directory).
fn damaged(path: &Path) -> Error {
    Error::corrupt(
        path,
        Corruption::Checkpoint("a seed list record does not decode"),
    )
}

/// The `count` offsets of a record's payload (increasing; varint deltas),
/// or `None` if it does not hold exactly that.
fn decode_offsets(payload: &[u8], count: usize) -> Option<Vec<u16>> {
    let mut offsets = Vec::with_capacity(count);
    let (mut last, mut at) = (0u32, 0);
    for _ in 0..count {
        let (mut delta, mut shift) = (0u32, 0);
        loop {
            let b = *payload.get(at)?;
            at += 1;
            delta |= u32::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
            if shift > 14 {
                return None;
            }
        }
        last += delta;
        offsets.push(u16::try_from(last).ok()?);
    }
    (at == payload.len()).then_some(offsets)
}

/// Removes the temporary files that checkpoint writes killed part-way
/// left in the work directory `dir` (none is being written when this is
/// called). Each checkpoint has its own name, so they would pile up,
/// gigabytes each at the top levels.
fn remove_unfinished(dir: &Path) -> Result<()> {
    crate::files::remove_leftovers(dir, |name| name.ends_with(".tmp"))
}

/// Removes the work directory `dir` with all it holds (nothing if it is not
/// there), its checkpoints first: a wipe stopped part-way (a kill) leaves
/// seed lists without a checkpoint, which are never read (the level starts
/// afresh), never a checkpoint whose lists are gone.
pub fn wipe(dir: &Path) -> Result<()> {
    for e in entries(dir)? {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("state.") || name.starts_with("forward.") {
            crate::files::remove_if_present(&e.path())?;
        }
    }
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(dir, e)),
        _ => Ok(()),
    }
}

/// Removes every file of `dir` whose name begins with one of `kinds`
/// (`state.`, `forward.`) but `keep`: the checkpoints this slice reads and
/// those it cannot (another slice's, another version's, a header damaged),
/// which would otherwise take their room on disk until the level ends.
/// The work directory is this rank's alone.
fn remove_checkpoints_except(dir: &Path, kinds: &[&str], keep: &Path) -> Result<()> {
    for e in entries(dir)? {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if kinds.iter().any(|k| name.starts_with(k)) && e.path() != keep {
            crate::files::remove_if_present(&e.path())?;
        }
    }
    Ok(())
}

/// Whether `dir` holds checkpoint files (complete ones, of any slice or
/// version): a directory about to be wiped then throws work away.
pub fn holds_checkpoints(dir: &Path) -> Result<bool> {
    Ok(entries(dir)?.iter().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        (name.starts_with("state.") || name.starts_with("forward.")) && !name.ends_with(".tmp")
    }))
}

/// The entries of directory `dir`, none if it does not exist; any other
/// failure to list it is an error.
fn entries(dir: &Path) -> Result<Vec<DirEntry>> {
    match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        listing => listing
            .and_then(|l| l.collect::<std::io::Result<Vec<_>>>())
            .map_err(|e| Error::io(dir, e)),
    }
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
    /// What the level is solved from: for a build, the SHA-256 of the
    /// content hashes of the lower levels it reads (`Db::lower_content`),
    /// so that a checkpoint is never
    /// resumed over other lower levels (one rebuilt or replaced meanwhile).
    pub lower: [u8; 32],
}

/// Version 5: compressed states, varint seed lists whose record checks
/// cover their list, the length of every list in the header, which ends
/// with the first 8 bytes of its own SHA-256; since version 5 the header
/// names the lower levels ([`Checkpoint::lower`]). A work directory of
/// another version holds no checkpoint of this one, so it is started
/// afresh.
const MAGIC: &[u8; 8] = b"MDBSOLV5";
/// The forward checkpoint's own header (same body format).
/// Version 5: the header ends with the first 8 bytes of its own SHA-256,
/// since the seed lists are cut back to the lengths it holds, and names
/// the lower levels; the lists' records are those of version 5 of
/// [`MAGIC`].
const FORWARD_MAGIC: &[u8; 8] = b"MDBFWD05";

fn state_path(dir: &Path, t: usize) -> PathBuf {
    dir.join(format!("state.{t}"))
}

/// The forward checkpoint taken at `mark`: `forward.<walk>.<parts done>`,
/// the walk by its number ([`Walk`]).
fn forward_path(dir: &Path, mark: &ForwardMark) -> PathBuf {
    dir.join(format!("forward.{}.{}", mark.walk as u8, mark.done))
}

/// The two walks of the forward pass, in the order they run; their numbers
/// name the forward checkpoints' files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Best captures into the state bytes, in mover-major order.
    Captures = 1,
    /// Quiet moves counted and seeds listed, in index order.
    Moves = 2,
}

impl Walk {
    /// The walk's name in the build's progress lines.
    pub fn name(self) -> &'static str {
        match self {
            Walk::Captures => "captures",
            Walk::Moves => "moves",
        }
    }
}

/// Where the forward pass stood when its checkpoint was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardMark {
    /// The walk under way.
    pub walk: Walk,
    /// How many of its parts were done.
    pub done: u32,
    /// Into how many parts each walk is cut.
    pub parts: u32,
    /// The length of every seed list then ([`SeedLists::sync`]).
    pub lists: Vec<u64>,
}

impl ForwardMark {
    /// How far the pass had come: larger is further.
    pub fn progress(&self) -> u64 {
        (self.walk as u64) << 32 | u64::from(self.done)
    }
}

impl Checkpoint {
    /// What every checkpoint file of this slice starts with.
    fn identity(&self, magic: &[u8; 8]) -> Vec<u8> {
        let mut h = magic.to_vec();
        h.push(self.rules);
        for x in [self.seeds, self.ranks, self.rank] {
            h.extend_from_slice(&x.to_le_bytes());
        }
        for x in [self.start, self.end] {
            h.extend_from_slice(&x.to_le_bytes());
        }
        h.extend_from_slice(&self.lower);
        h
    }

    /// The header of `state.<t>`, with the seed lists' lengths `lists`.
    fn header(&self, t: usize, lists: &[u64]) -> Vec<u8> {
        let mut h = self.identity(MAGIC);
        h.extend_from_slice(&(t as u32).to_le_bytes());
        for len in lists {
            h.extend_from_slice(&len.to_le_bytes());
        }
        sealed(h)
    }

    /// The seed lists' lengths in the header of `state.<t>` at `path`, if
    /// it is a checkpoint of this slice with its header whole.
    fn state_lists(&self, path: &Path, t: usize) -> Result<Option<Vec<u64>>> {
        let at = self.identity(MAGIC).len() + 4;
        let Some(head) = read_head(path, at + 16 * self.seeds as usize + SEAL)? else {
            return Ok(None);
        };
        let lists: Vec<u64> = head[at..head.len() - SEAL]
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        Ok((head == self.header(t, &lists)).then_some(lists))
    }

    fn forward_header(&self, mark: &ForwardMark) -> Vec<u8> {
        let mut h = self.identity(FORWARD_MAGIC);
        h.push(mark.walk as u8);
        h.extend_from_slice(&mark.done.to_le_bytes());
        h.extend_from_slice(&mark.parts.to_le_bytes());
        for len in &mark.lists {
            h.extend_from_slice(&len.to_le_bytes());
        }
        sealed(h)
    }

    /// Writes `state`, the slice after every threshold above `t`, as
    /// `state.<t>` in `dir` (atomically), with `lists`, the final lengths
    /// of the seed lists ([`SeedLists::finish`]); returns the file's bytes.
    pub fn save(&self, dir: &Path, t: usize, lists: &[u64], state: &[u8]) -> Result<u64> {
        assert_eq!(lists.len(), 2 * self.seeds as usize, "one length per list");
        write_compressed(&state_path(dir, t), &self.header(t, lists), state)
    }

    /// Writes `state`, the slice part-way through the forward pass as
    /// `mark` says, as `forward.<walk>.<done>` in `dir` (atomically; the
    /// seed lists must be synced at the lengths of `mark` already); returns
    /// the file's bytes. The others stay until
    /// [`Checkpoint::remove_forward_except`] keeps only `mark`'s.
    pub fn save_forward(&self, dir: &Path, mark: &ForwardMark, state: &[u8]) -> Result<u64> {
        write_compressed(&forward_path(dir, mark), &self.forward_header(mark), state)
    }

    /// The thresholds `t` of the complete checkpoints in `dir` that belong
    /// to this slice, in decreasing order (least advanced first).
    /// A file that cannot be read is an error, not a checkpoint absent.
    pub fn saved(&self, dir: &Path) -> Result<Vec<usize>> {
        let mut found = Vec::new();
        for e in entries(dir)? {
            let name = e.file_name();
            let Some(t) = name
                .to_str()
                .and_then(|n| n.strip_prefix("state.")?.parse().ok())
            else {
                continue;
            };
            if self.state_lists(&e.path(), t)?.is_some() {
                found.push(t);
            }
        }
        found.sort_unstable_by(|a, b| b.cmp(a));
        Ok(found)
    }

    /// The marks of this slice's complete forward checkpoints in `dir`,
    /// least advanced first.
    /// A file that cannot be read is an error, not a checkpoint absent.
    pub fn forward_saved(&self, dir: &Path) -> Result<Vec<ForwardMark>> {
        let mut found = Vec::new();
        for e in entries(dir)? {
            if !e.file_name().to_string_lossy().starts_with("forward.") {
                continue;
            }
            if let Some(mark) = self.forward_mark(&e.path())?
                && e.path() == forward_path(dir, &mark)
            {
                found.push(mark);
            }
        }
        found.sort_unstable_by_key(ForwardMark::progress);
        Ok(found)
    }

    /// The mark in the header of `path`, if it is a forward checkpoint of
    /// this slice with its header whole (its checksum matches).
    fn forward_mark(&self, path: &Path) -> Result<Option<ForwardMark>> {
        let identity = self.identity(FORWARD_MAGIC);
        let lists = 2 * self.seeds as usize;
        let Some(head) = read_head(path, identity.len() + 9 + 8 * lists + SEAL)? else {
            return Ok(None);
        };
        let rest = &head[identity.len()..head.len() - SEAL];
        let word = |at: usize| u32::from_le_bytes(rest[at..at + 4].try_into().expect("4 bytes"));
        let walk = match rest[0] {
            1 => Walk::Captures,
            2 => Walk::Moves,
            _ => return Ok(None),
        };
        let mark = ForwardMark {
            walk,
            done: word(1),
            parts: word(5),
            lists: rest[9..]
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect(),
        };
        Ok((head == self.forward_header(&mark)).then_some(mark))
    }

    /// Reads checkpoint `state.<t>` of `dir` into `state`; returns the seed
    /// lists' lengths it recorded.
    pub fn load(&self, dir: &Path, t: usize, state: &mut [u8]) -> Result<Vec<u64>> {
        let path = state_path(dir, t);
        let lists = self.state_lists(&path, t)?.ok_or_else(|| {
            Error::corrupt(
                &path,
                Corruption::Checkpoint("not a checkpoint of this level"),
            )
        })?;
        read_compressed(&path, &self.header(t, &lists), state)?;
        Ok(lists)
    }

    /// Reads the forward checkpoint of `dir` taken at `mark` into `state`.
    pub fn load_forward(&self, dir: &Path, mark: &ForwardMark, state: &mut [u8]) -> Result<()> {
        read_compressed(&forward_path(dir, mark), &self.forward_header(mark), state)
    }

    /// Removes the forward checkpoints of `dir` other than `mark`'s, and
    /// what killed writes left unfinished. Called once every rank has
    /// written its own at `mark` (a rank stopped before that resumes from
    /// the older one, with every other rank), and when the ranks resume
    /// from `mark`: a newer one that only some ranks wrote no longer
    /// matches the seed lists, which are cut back to `mark`.
    pub fn remove_forward_except(&self, dir: &Path, mark: &ForwardMark) -> Result<()> {
        remove_checkpoints_except(dir, &["forward."], &forward_path(dir, mark))?;
        remove_unfinished(dir)
    }

    /// Removes the checkpoints of `dir` other than `state.<keep>` (the
    /// forward ones too), what killed writes left unfinished, and the seed
    /// lists of the thresholds above `keep`: a solve resumed from
    /// `state.<keep>` starts at threshold `keep` and never reads them.
    pub fn remove_others(&self, dir: &Path, keep: usize) -> Result<()> {
        remove_checkpoints_except(dir, &["state.", "forward."], &state_path(dir, keep))?;
        remove_unfinished(dir)?;
        for t in keep + 1..=self.seeds as usize {
            for win in [false, true] {
                crate::files::remove_if_present(&list_path(dir, t, win))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mancaladb-workdir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn seed_lists_round_trip_and_refuse_damage() {
        let dir = scratch("lists");
        let lists = SeedLists::create(&dir, 2).unwrap();
        let records: Vec<(u32, Vec<u16>)> = vec![
            (7, vec![0, 1, 2, 127, 128, 300, 16_383, 16_384, 65_535]),
            (0, vec![]),
            (3, (0..5000).map(|k| k * 13).collect()),
        ];
        for (chunk, offsets) in &records {
            lists.append(2, true, *chunk, offsets).unwrap();
        }
        let lengths = lists.finish().unwrap();
        let path = list_path(&dir, 2, true);
        assert_eq!(lengths[3], std::fs::metadata(&path).unwrap().len());
        assert_eq!(lengths.iter().filter(|&&l| l > 0).count(), 1);
        // Read in batches of at least 5 offsets: records 1 and 2 together.
        let (mut back, mut batches, mut rs) = (Vec::new(), 0, Vec::new());
        let mut reader = SeedReader::open(&dir, 2, true, &lengths, 1 << 20, 1 << 16).unwrap();
        loop {
            reader.read(5, &mut rs).unwrap();
            if rs.is_empty() {
                break;
            }
            batches += 1;
            back.extend(rs.iter().map(|r| (r.chunk, r.offsets.clone())));
        }
        assert_eq!(back, records);
        assert_eq!(batches, 2);
        // Mostly one byte per offset (the u16 layout took two).
        let len = lengths[3];
        assert!(len < 16 * 3 + 9 * 3 + 5000 * 2 - 2000, "{len} bytes");
        // A bit changed anywhere in a record, even one that leaves a delta
        // that decodes (a last byte below 0x80), is found by its check.
        let whole = std::fs::read(&path).unwrap();
        for (at, bit) in [
            (0, 1),
            (5, 2),
            (8, 1),
            (13, 4),
            (HEAD, 1),
            (HEAD + 1, 1),
            (HEAD + 8, 0x80),
        ] {
            let mut bytes = whole.clone();
            bytes[at] ^= bit;
            std::fs::write(&path, &bytes).unwrap();
            let mut reader = SeedReader::open(&dir, 2, true, &lengths, 1 << 20, 1 << 16).unwrap();
            let err = reader.read(1, &mut rs).unwrap_err();
            assert!(
                matches!(err, Error::Corrupt { .. }),
                "bit {bit} of byte {at}: {err}"
            );
        }
        // The list of another threshold or side, whole and of the length
        // recorded for it, is not read as this one: the check covers both.
        std::fs::write(&path, &whole).unwrap();
        for (t, win) in [(1, true), (2, false)] {
            std::fs::copy(&path, list_path(&dir, t, win)).unwrap();
            let mut moved = lengths.clone();
            moved[2 * (t - 1) + usize::from(win)] = len;
            let mut reader = SeedReader::open(&dir, t, win, &moved, 1 << 20, 1 << 16).unwrap();
            let err = reader.read(1, &mut rs).unwrap_err();
            assert!(
                matches!(err, Error::Corrupt { .. }),
                "list {t} {win}: {err}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn seed_lists_cut_short_or_outside_the_slice_are_damaged() {
        let dir = scratch("lists-cut");
        let lists = SeedLists::create(&dir, 1).unwrap();
        lists.append(1, true, 2, &[5, 9]).unwrap();
        lists.append(1, true, 3, &[1]).unwrap();
        let lengths = lists.finish().unwrap();
        let path = list_path(&dir, 1, true);
        let whole = std::fs::read(&path).unwrap();
        let read_as = |lengths: &[u64], positions: u64| -> Result<usize> {
            let mut reader = SeedReader::open(&dir, 1, true, lengths, positions, 16)?;
            let (mut seeds, mut rs) = (0, Vec::new());
            loop {
                reader.read(1, &mut rs)?;
                if rs.is_empty() {
                    return Ok(seeds);
                }
                seeds += rs.iter().map(|r| r.offsets.len()).sum::<usize>();
            }
        };
        let read_all = |positions: u64| read_as(&lengths, positions);
        assert_eq!(read_all(64).unwrap(), 3);
        // Chunk 3 of 16 positions ends at 63: a slice of 49 holds 3 * 16 + 1.
        assert!(matches!(read_all(49), Err(Error::Corrupt { .. })));
        // Cut anywhere, inside the second record or between records (where
        // every record left is whole), the list is damaged: it is not the
        // length recorded for it.
        let first = HEAD + 2; // head, then deltas 5 and 4
        for len in 0..whole.len() {
            std::fs::write(&path, &whole[..len]).unwrap();
            let err = read_all(64).unwrap_err();
            assert!(matches!(err, Error::Corrupt { .. }), "cut at {len}: {err}");
            // Its whole records are all read, and only then is it found
            // short: by the recorded length, not by the records.
            if len == first {
                let mut short = lengths.clone();
                short[1] = len as u64;
                assert_eq!(read_as(&short, 64).unwrap(), 2);
            }
        }
        // Missing, it is damaged too (not an I/O error that would stop
        // every rerun), and so is one longer than recorded.
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(read_all(64), Err(Error::Corrupt { .. })));
        assert!(matches!(
            check_lists(&dir, 1, &lengths, true),
            Err(Error::Corrupt { .. })
        ));
        let mut longer = whole.clone();
        longer.extend_from_slice(&whole[..first]);
        std::fs::write(&path, &longer).unwrap();
        assert!(matches!(read_all(64), Err(Error::Corrupt { .. })));
        assert!(matches!(
            check_lists(&dir, 1, &lengths, false),
            Err(Error::Corrupt { .. })
        ));
        assert!(check_lists(&dir, 1, &lengths, true).is_ok());
        std::fs::write(&path, &whole).unwrap();
        assert!(check_lists(&dir, 1, &lengths, false).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn checkpoints_round_trip_compressed_and_refuse_damage() {
        let dir = scratch("checkpoints");
        let cp = Checkpoint {
            rules: 1,
            seeds: 20,
            ranks: 1,
            rank: 0,
            start: 0,
            end: 100_000,
            lower: [7; 32],
        };
        let state: Vec<u8> = (0..100_000u32).map(|k| (k / 1000 % 7) as u8).collect();
        let lists: Vec<u64> = (0..40).map(|k| k * 1000 + 7).collect();
        cp.save(&dir, 5, &lists, &state).unwrap();
        assert_eq!(cp.saved(&dir).unwrap(), vec![5]);
        let len = std::fs::metadata(dir.join("state.5")).unwrap().len();
        assert!(len < 10_000, "{len} bytes for 100,000 states");
        let mut back = vec![0u8; state.len()];
        assert_eq!(cp.load(&dir, 5, &mut back).unwrap(), lists);
        assert_eq!(back, state);
        // A header damaged where it holds a list's length is refused.
        let path = dir.join("state.5");
        let whole = std::fs::read(&path).unwrap();
        let mut bytes = whole.clone();
        bytes[cp.identity(MAGIC).len() + 4 + 8 * 3] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(cp.saved(&dir).unwrap().is_empty());
        let err = cp.load(&dir, 5, &mut back).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        std::fs::write(&path, &whole).unwrap();
        // Another slice's checkpoint is not this one's.
        let other = Checkpoint { end: 99_999, ..cp };
        assert!(other.saved(&dir).unwrap().is_empty());
        // Nor one of the same slice over other lower levels.
        let over_others = Checkpoint {
            lower: [8; 32],
            ..cp
        };
        assert!(over_others.saved(&dir).unwrap().is_empty());
        // One that is there but cannot be read is an error, not absent (a
        // directory in its place stands for a read error here: root reads
        // files whatever their permissions).
        for name in ["state.4", "forward.1.3"] {
            std::fs::create_dir(dir.join(name)).unwrap();
            let err = match name {
                "state.4" => cp.saved(&dir).unwrap_err(),
                _ => cp.forward_saved(&dir).unwrap_err(),
            };
            assert!(matches!(err, Error::Io { .. }), "{err}");
            std::fs::remove_dir(dir.join(name)).unwrap();
        }
        // Damage past the header is found by zstd's checksum or framing.
        let path = dir.join("state.5");
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - 6;
        bytes[at] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let err = cp.load(&dir, 5, &mut back).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn seed_lists_reopen_cut_back_to_their_synced_lengths() {
        let dir = scratch("reopen");
        let lists = SeedLists::create(&dir, 1).unwrap();
        lists.append(1, true, 0, &[1, 2, 3]).unwrap();
        let lengths = lists.sync().unwrap();
        assert_eq!(lengths[0], 0);
        assert_eq!(lengths[1], (HEAD + 3) as u64);
        // Appended after the sync: gone once reopened at `lengths`.
        lists.append(1, true, 1, &[4]).unwrap();
        lists.append(1, false, 1, &[5]).unwrap();
        lists.finish().unwrap();
        let lists = SeedLists::reopen(&dir, 1, &lengths).unwrap();
        lists.append(1, true, 2, &[6, 7]).unwrap();
        let finished = lists.finish().unwrap();
        let read_all = |win| {
            let (mut reader, mut rs) = (
                SeedReader::open(&dir, 1, win, &finished, 1 << 20, 1 << 16).unwrap(),
                Vec::new(),
            );
            reader.read(usize::MAX, &mut rs).unwrap();
            rs.into_iter()
                .map(|r| (r.chunk, r.offsets))
                .collect::<Vec<_>>()
        };
        assert_eq!(read_all(true), vec![(0, vec![1, 2, 3]), (2, vec![6, 7])]);
        assert!(read_all(false).is_empty());
        // A list shorter than its checkpoint says is a damaged directory.
        let longer = [lengths[0], lengths[1] + 1000];
        let err = SeedLists::reopen(&dir, 1, &longer).err().unwrap();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_forward_checkpoint_round_trips_and_goes_with_older_checkpoints() {
        let dir = scratch("forward");
        let cp = Checkpoint {
            rules: 0,
            seeds: 3,
            ranks: 2,
            rank: 1,
            start: 500,
            end: 1000,
            lower: [0; 32],
        };
        let mark = ForwardMark {
            walk: Walk::Moves,
            done: 7,
            parts: 9,
            lists: vec![0, 12, 40, 0, 1 << 40, 3],
        };
        let state: Vec<u8> = (0..500u32).map(|k| (k % 11) as u8).collect();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![]);
        cp.save_forward(&dir, &mark, &state).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![mark.clone()]);
        assert!(
            cp.saved(&dir).unwrap().is_empty(),
            "not a threshold's checkpoint"
        );
        let mut back = vec![0u8; state.len()];
        cp.load_forward(&dir, &mark, &mut back).unwrap();
        assert_eq!(back, state);
        // Another rank's, or another mark's, is not this one.
        assert_eq!(
            Checkpoint { rank: 0, ..cp }.forward_saved(&dir).unwrap(),
            vec![]
        );
        let other_lists = ForwardMark {
            lists: vec![0, 12, 40, 0, 1 << 40, 4],
            ..mark.clone()
        };
        let err = cp.load_forward(&dir, &other_lists, &mut back).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        // A header damaged where it holds a list's length is refused: the
        // lists would be cut back to it.
        let path = forward_path(&dir, &mark);
        let whole = std::fs::read(&path).unwrap();
        let mut bytes = whole.clone();
        let at = cp.identity(FORWARD_MAGIC).len() + 9 + 8 * 2;
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![]);
        std::fs::write(&path, &whole).unwrap();
        // A file renamed to another mark's name is not that mark's.
        let other = ForwardMark {
            done: 6,
            ..mark.clone()
        };
        std::fs::copy(forward_path(&dir, &mark), forward_path(&dir, &other)).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![mark.clone()]);
        std::fs::remove_file(forward_path(&dir, &other)).unwrap();
        assert!(mark.progress() > other.progress());
        assert!(
            ForwardMark {
                walk: Walk::Captures,
                done: 9,
                ..mark.clone()
            }
            .progress()
                < ForwardMark {
                    walk: Walk::Moves,
                    done: 0,
                    ..mark.clone()
                }
                .progress()
        );
        // A newer one is saved beside it; the older goes when asked, with
        // what a process killed while writing one left behind.
        let newer = ForwardMark {
            done: 8,
            ..mark.clone()
        };
        cp.save_forward(&dir, &newer, &state).unwrap();
        assert_eq!(
            cp.forward_saved(&dir).unwrap(),
            vec![mark.clone(), newer.clone()]
        );
        std::fs::write(dir.join("forward.2.9.tmp"), b"cut short").unwrap();
        // One whose header is damaged is no checkpoint of this slice, but
        // goes too: it would hold its room on disk until the level ends.
        let damaged = dir.join("forward.2.7");
        std::fs::write(&damaged, &bytes).unwrap();
        cp.remove_forward_except(&dir, &newer).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![newer.clone()]);
        assert!(!dir.join("forward.2.9.tmp").exists() && !damaged.exists());
        // Resumed from an older one, the newer ones go too.
        cp.save_forward(&dir, &mark, &state).unwrap();
        cp.remove_forward_except(&dir, &mark).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![mark.clone()]);
        cp.save_forward(&dir, &newer, &state).unwrap();
        // A threshold's checkpoint supersedes them, and takes with it what
        // a process killed while writing one left behind.
        std::fs::write(dir.join("state.7.tmp"), b"cut short").unwrap();
        std::fs::write(dir.join("state.9"), b"not a checkpoint of this slice").unwrap();
        std::fs::write(&damaged, &bytes).unwrap();
        cp.save(&dir, 3, &mark.lists, &state).unwrap();
        cp.remove_others(&dir, 3).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![]);
        assert!(!dir.join("state.7.tmp").exists() && !dir.join("state.9").exists());
        assert!(!damaged.exists());
        assert!(dir.join("state.3").exists());
        assert_eq!(cp.saved(&dir).unwrap(), vec![3]);
        // A wipe takes the checkpoints first, then everything.
        assert!(holds_checkpoints(&dir).unwrap());
        wipe(&dir).unwrap();
        assert!(!dir.exists());
        assert!(!holds_checkpoints(&dir).unwrap());
        wipe(&dir).unwrap();
    }
}
