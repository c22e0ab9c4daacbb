//! The seed lists of one rank's slice: every position's best capture,
//! sorted by threshold as the forward pass finds it, read once at its
//! threshold.
//!
//! **Seed lists.** The forward pass finds each position's best capture
//! `b`. Threshold `t` needs exactly two sets of them: `b == t` (entering
//! `W_t` by a capture) and `b == -t` (from `t` on, no capture keeps the
//! position out of `L_t`). Both are written once, as the forward pass
//! goes, to the files `w.<t>` and `l.<t>`, and read once, sequentially, at
//! threshold `t`, a batch at a time as the solver has room
//! ([`SeedReader`]). A record is a chunk of the slice and the offsets in it:
//! `chunk: u32 LE, count: u32 LE, bytes: u32 LE, check: [u8; 4]`, then
//! `bytes` bytes of the increasing offsets (chunks hold at most 2^16
//! positions) as differences from the last (the first from 0), each in
//! LEB128: most take one byte. `check` is the start of the SHA-256 of the
//! list's threshold and side (`t: u32 LE`, `win: u8`) and the record's
//! other bytes, so that a damaged record is found, not read as other
//! seeds (a changed delta byte still decodes), and a record is read only
//! from its own list. Records appear in any order; each position is in
//! at most one list. A record check cannot tell a list that ends early
//! (cut between records) from a shorter one: the length of every list is
//! therefore recorded when the forward pass ends (in every `state.<t>`
//! header) and at each forward checkpoint, and a list is read only if it
//! has exactly that length and its records end exactly there
//! ([`check_lists`], [`SeedReader`]). No seed is ever dropped.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::error::{Corruption, Error, Result};
use crate::files::open_work_file;

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

pub(super) fn list_path(dir: &Path, t: usize, win: bool) -> PathBuf {
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
/// What is not a regular file where a seed list goes (a directory, a
/// named pipe, a link) is a damaged work directory too: its length says
/// nothing, and the list could not be read.
fn list_len(path: &Path) -> Result<u64> {
    let not_a_list = |why| Err(Error::corrupt(path, Corruption::Checkpoint(why)));
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => Ok(m.len()),
        Ok(m) if m.is_dir() => not_a_list("a directory where a seed list goes"),
        Ok(m) if m.file_type().is_symlink() => not_a_list("a symbolic link where a seed list goes"),
        Ok(m) if m.file_type().is_fifo() => not_a_list("a named pipe where a seed list goes"),
        Ok(_) => not_a_list("not a regular file where a seed list goes"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::workdir::scratch;

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

    /// Records at the edges of their encoding read back as written:
    /// deltas whose varints hold a byte 0x80 (128, 16,384), deltas of three
    /// bytes (a payload of exactly three bytes per offset), a whole chunk
    /// of 2^16 positions. A record of more offsets than a chunk holds is
    /// damaged, its check whole or not. And a read takes records until it
    /// holds its batch, then stops: not one record more.
    #[test]
    fn seed_list_records_at_the_edges_of_their_encoding_read_back() {
        let dir = scratch("lists-edges");
        let lists = SeedLists::create(&dir, 1).unwrap();
        let records: Vec<(u32, Vec<u16>)> = vec![
            (0, vec![128, 16_512, 16_639, 33_022]),
            (1, vec![20_000]),
            (2, vec![16_384, 32_768, 49_152]),
            (3, (0..=u16::MAX).collect()),
            (4, vec![0, 1, 2]),
            (5, vec![3, 4, 5]),
        ];
        for (chunk, offsets) in &records {
            lists.append(1, true, *chunk, offsets).unwrap();
        }
        lists.append(1, false, 0, &[0; (1 << 16) + 1]).unwrap();
        let lengths = lists.finish().unwrap();
        let (mut back, mut batches, mut rs) = (Vec::new(), Vec::new(), Vec::new());
        let mut reader = SeedReader::open(&dir, 1, true, &lengths, 6 << 16, 1 << 16).unwrap();
        loop {
            reader.read(3, &mut rs).unwrap();
            if rs.is_empty() {
                break;
            }
            batches.push(rs.len());
            back.extend(rs.iter().map(|r| (r.chunk, r.offsets.clone())));
        }
        assert_eq!(back, records);
        assert_eq!(batches, [1, 2, 1, 1, 1]);
        let mut reader = SeedReader::open(&dir, 1, false, &lengths, 6 << 16, 1 << 16).unwrap();
        let err = reader.read(1, &mut rs).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A read interrupted by a signal is retried; any other read error is
    /// returned, not taken for the end of the list.
    #[test]
    fn list_reads_retry_when_interrupted_and_return_other_errors() {
        struct Flaky(u32, std::io::ErrorKind);
        impl Read for Flaky {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0 += 1;
                match self.0 {
                    1 => Err(self.1.into()),
                    2 => {
                        buf[0] = 7;
                        Ok(1)
                    }
                    _ => Ok(0),
                }
            }
        }
        let mut buf = [0u8; 4];
        let got = read_up_to(&mut Flaky(0, std::io::ErrorKind::Interrupted), &mut buf);
        assert_eq!((got.unwrap(), buf[0]), (1, 7));
        let got = read_up_to(&mut Flaky(0, std::io::ErrorKind::Other), &mut buf);
        assert_eq!(got.unwrap_err().kind(), std::io::ErrorKind::Other);
    }

    /// A list that cannot be looked at for another reason than its absence
    /// (here its directory is a file) is an I/O error, kept: not a damaged
    /// work directory, which the solver wipes.
    #[test]
    fn a_list_that_cannot_be_looked_at_is_an_io_error_not_damage() {
        let dir = scratch("lists-not-a-dir");
        let file = dir.join("file");
        std::fs::write(&file, b"").unwrap();
        let r = check_lists(&file, 1, &[0, 0], false);
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
        let r = SeedReader::open(&file, 1, true, &[0, 0], 1, 1).map(|_| ());
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
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
}
