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
//!   `chunk: u32 LE, count: u32 LE, bytes: u32 LE`, then `bytes` bytes of
//!   the increasing offsets (chunks hold at most 2^16 positions) as
//!   differences from the last (the first from 0), each in LEB128: most take
//!   one byte. Records appear in any order; each position is in at most one
//!   list.
//! * **Checkpoints.** `state.<t>` holds the state byte of every position of
//!   the slice after every threshold above `t` is done, behind a header that
//!   names the level, the rule set, the rank's slice and `t`
//!   ([`Checkpoint`]), zstd-compressed with its content checksum (a state
//!   is mostly runs of a few values: a quarter of the bytes or less). It is
//!   written to a temporary name, synced and renamed,
//!   so a file under its final name is always complete (the older one and
//!   the lists of the thresholds done go once it is); the seed lists are
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
    /// `t`, else `-t`. `offsets` are increasing.
    pub fn append(&self, t: usize, win: bool, chunk: u32, offsets: &[u16]) -> Result<()> {
        let mut bytes = Vec::with_capacity(12 + offsets.len() + 8);
        bytes.extend_from_slice(&chunk.to_le_bytes());
        bytes.extend_from_slice(&(offsets.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&[0; 4]); // the payload's length, below
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
        let len = (bytes.len() - 12) as u32;
        bytes[8..12].copy_from_slice(&len.to_le_bytes());
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

/// A seed list being read, record by record, as the solver has room for
/// its positions.
pub struct SeedReader {
    path: PathBuf,
    file: BufReader<File>,
    payload: Vec<u8>,
}

impl SeedReader {
    /// Opens the list of threshold `t` (`win`: best capture `t`, else `-t`).
    pub fn open(dir: &Path, t: usize, win: bool) -> Result<SeedReader> {
        let path = list_path(dir, t, win);
        let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
        Ok(SeedReader {
            path,
            file: BufReader::with_capacity(1 << 16, file),
            payload: Vec::new(),
        })
    }

    /// Replaces `records` with the next records of the list, as many as
    /// hold `batch` offsets or more (at least one record); empty at the end.
    pub fn read(&mut self, batch: usize, records: &mut Vec<Record>) -> Result<()> {
        records.clear();
        let mut held = 0;
        let mut head = [0u8; 12];
        while held < batch.max(1) {
            match self.file.read_exact(&mut head) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(Error::io(&self.path, e)),
            }
            let word =
                |k: usize| u32::from_le_bytes(head[4 * k..4 * k + 4].try_into().expect("4 bytes"));
            let (chunk, count, len) = (word(0), word(1) as usize, word(2) as usize);
            if count > 1 << 16 || len > 3 * count {
                return Err(damaged(&self.path));
            }
            self.payload.resize(len, 0);
            self.file
                .read_exact(&mut self.payload)
                .map_err(|e| Error::io(&self.path, e))?;
            let offsets =
                decode_offsets(&self.payload, count).ok_or_else(|| damaged(&self.path))?;
            records.push(Record { chunk, offsets });
            held += count;
        }
        Ok(())
    }
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

/// Version 2: compressed states, varint seed lists. A work directory of
/// another version holds no checkpoint of this one, so it is started afresh.
const MAGIC: &[u8; 8] = b"MDBSOLV2";
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
            let mut z = zstd::stream::Encoder::new(out, 1)?;
            z.include_checksum(true)?;
            z.write_all(state)?;
            z.finish()?.flush()
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
        let damaged = |why| Error::corrupt(&path, Corruption::Checkpoint(why));
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

    /// Removes the checkpoints of `dir` other than `state.<keep>`, and the
    /// seed lists of the thresholds above `keep`: a solve resumed from
    /// `state.<keep>` starts at threshold `keep` and never reads them.
    pub fn remove_others(&self, dir: &Path, keep: usize) -> Result<()> {
        for t in self.saved(dir) {
            if t != keep {
                let path = state_path(dir, t);
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            }
        }
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
        lists.finish().unwrap();
        // Read in batches of at least 5 offsets: records 1 and 2 together.
        let (mut back, mut batches, mut rs) = (Vec::new(), 0, Vec::new());
        let mut reader = SeedReader::open(&dir, 2, true).unwrap();
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
        let len = std::fs::metadata(list_path(&dir, 2, true)).unwrap().len();
        assert!(len < 12 * 3 + 9 * 3 + 5000 * 2 - 2000, "{len} bytes");
        // A byte changed inside a payload: the record no longer decodes.
        let path = list_path(&dir, 2, true);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[12 + 2] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let mut reader = SeedReader::open(&dir, 2, true).unwrap();
        let err = reader.read(1, &mut rs).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
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
        };
        let state: Vec<u8> = (0..100_000u32).map(|k| (k / 1000 % 7) as u8).collect();
        cp.save(&dir, 5, &state).unwrap();
        assert_eq!(cp.saved(&dir), vec![5]);
        let len = std::fs::metadata(dir.join("state.5")).unwrap().len();
        assert!(len < 10_000, "{len} bytes for 100,000 states");
        let mut back = vec![0u8; state.len()];
        cp.load(&dir, 5, &mut back).unwrap();
        assert_eq!(back, state);
        // Another slice's checkpoint is not this one's.
        let other = Checkpoint { end: 99_999, ..cp };
        assert!(other.saved(&dir).is_empty());
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
}
