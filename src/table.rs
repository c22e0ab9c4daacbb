//! The stored table format: one file per game, rule set and level, with a
//! versioned header, a block index, zstd blocks and checksums. The byte
//! layout is described once, in `db/README.md`.
//!
//! [`Table::open`] checks the structure and the header checksum (cheap);
//! every block read is checked by zstd's content checksum and its length;
//! [`Table::verify`] checks the whole-file sha256. Anything that does not
//! add up is an [`Error::Corrupt`] naming the file and the [`Corruption`].

use std::cell::RefCell;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use memmap2::{Mmap, UncheckedAdvice};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::error::{Corruption, Error, Result};
use crate::files::write_atomically;

const MAGIC: &[u8; 8] = b"MNCLADB\n";
/// The format version this build writes. Version 2 adds the block tags
/// that bind each block to its place; version 1 (no tags) is still read.
pub const FORMAT_VERSION: u32 = 2;
/// The oldest version this build reads.
const OLDEST_VERSION: u32 = 1;
const HEADER_LEN: usize = 80;
const TRAILER_LEN: usize = 32;
/// Value encoding: one signed byte per position.
const ENCODING_I8: u8 = 1;
/// Positions per compressed block: a query decompresses 64 KiB.
pub const BLOCK_SIZE: u32 = 1 << 16;
/// The most positions a table may claim: more than any level of any game
/// stored here (Oware's largest, 48 seeds, has 203.6 G). A header that
/// claims more is damaged, and is refused before its block index (at most
/// 64 MiB below this bound) is hashed: a forged header over a sparse file
/// would otherwise have every reader hash hundreds of gigabytes of zeros.
pub const MAX_POSITIONS: u64 = 1 << 38;
const ZSTD_LEVEL: i32 = 3;

/// What a table holds: which game, rule set and level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableId {
    /// Game code (1 = Oware).
    pub game: u8,
    /// Rule-set code within the game.
    pub rules: u8,
    /// Seeds on the board.
    pub seeds: u32,
}

/// The fixed-size header of a table file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Game, rule set and level.
    pub id: TableId,
    /// Positions per block.
    pub block_size: u32,
    /// Positions in the level.
    pub positions: u64,
    /// Number of blocks.
    pub blocks: u64,
    /// sha256 of the uncompressed values in index order.
    pub content_sha256: [u8; 32],
}

pub use crate::files::{hex, sha256, sha256_of_reader};

/// The first value of a level of `seeds` seeds outside `-seeds..=seeds`
/// (index `offset + i` for `values[i]`), as the error to report for `path`.
pub fn check_values(path: &Path, seeds: usize, offset: u64, values: &[i8]) -> Result<()> {
    let n = seeds.min(127) as u8;
    // The largest magnitude first, a loop the compiler vectorizes: this
    // runs over every value a raw copy or an export writes.
    let largest = values.iter().map(|v| v.unsigned_abs()).max().unwrap_or(0);
    if largest <= n {
        return Ok(());
    }
    match values.iter().position(|v| v.unsigned_abs() > n) {
        None => Ok(()),
        Some(i) => Err(Error::corrupt(
            path,
            Corruption::ValueRange {
                index: offset + i as u64,
                value: values[i],
                seeds,
            },
        )),
    }
}

/// Views signed values as the bytes stored on disk.
pub fn as_bytes(values: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size, alignment and validity.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), values.len()) }
}

/// Values as bytes to be filled in place.
pub fn as_bytes_mut(values: &mut [i8]) -> &mut [u8] {
    // SAFETY: i8 and u8 have the same size, alignment and validity.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), values.len()) }
}

/// Views stored bytes as signed values.
pub fn as_values(bytes: &[u8]) -> &[i8] {
    // SAFETY: i8 and u8 have the same size, alignment and validity.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
}

/// Blocks the writer compresses at a time (16 MiB of values): its memory,
/// beside the values it is given.
const WRITE_BATCH: usize = 256;

/// Compresses `values` and writes them as a table file at `path`.
/// Returns the sha256 of the whole file.
///
/// The file is written in one pass, a batch of blocks at a time, so the
/// writer holds a few megabytes beside `values`, not the compressed table
/// (7 GB at level 36): the blocks go after room left for the header and
/// the index (whose size the block count fixes), which are written last;
/// then the file is read back once for the trailer's sha256.
pub fn write_table(path: &Path, id: TableId, values: &[i8]) -> Result<[u8; 32]> {
    let bytes = as_bytes(values);
    let blocks = bytes.len().div_ceil(BLOCK_SIZE as usize);
    let data_start = HEADER_LEN + 8 * (2 * blocks + 1);
    let mut file_sha256 = [0u8; 32];
    write_atomically(path, |f| {
        // Hashing is sequential: overlap it with the parallel compression.
        let (content_sha256, index) =
            rayon::join(|| sha256(bytes), || write_blocks(f, data_start, id, bytes));
        let header = Header {
            id,
            block_size: BLOCK_SIZE,
            positions: values.len() as u64,
            blocks: blocks as u64,
            content_sha256,
        };
        let index = index?;
        let mut head = encode_header(&header);
        let check = header_check(&head[..72], &index);
        head[72..80].copy_from_slice(&check);
        f.seek(SeekFrom::Start(0))?;
        f.write_all(&head)?;
        f.write_all(&index)?;
        f.seek(SeekFrom::Start(0))?;
        file_sha256 = sha256_of_reader(f)?;
        f.write_all(&file_sha256)
    })?;
    Ok(file_sha256)
}

/// Writes the compressed blocks of `bytes` into `f` from `data_start` on,
/// [`WRITE_BATCH`] at a time; returns the index: the blocks' offsets, then
/// their tags.
fn write_blocks(
    f: &mut std::fs::File,
    data_start: usize,
    id: TableId,
    bytes: &[u8],
) -> std::io::Result<Vec<u8>> {
    let blocks = bytes.len().div_ceil(BLOCK_SIZE as usize);
    let mut offsets = Vec::with_capacity(8 * (blocks + 1));
    let mut tags = Vec::with_capacity(8 * blocks);
    let mut offset = 0u64;
    offsets.extend_from_slice(&offset.to_le_bytes());
    f.seek(SeekFrom::Start(data_start as u64))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
    let mut block = 0u64;
    for batch in bytes.chunks(WRITE_BATCH * BLOCK_SIZE as usize) {
        let frames = batch
            .par_chunks(BLOCK_SIZE as usize)
            .map(compress_block)
            .collect::<std::io::Result<Vec<_>>>()?;
        for frame in &frames {
            out.write_all(frame)?;
            offset += frame.len() as u64;
            offsets.extend_from_slice(&offset.to_le_bytes());
            tags.extend_from_slice(&block_tag(id, block, frame));
            block += 1;
        }
    }
    out.flush()?;
    offsets.extend_from_slice(&tags);
    Ok(offsets)
}

fn compress_block(block: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
    c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
    c.compress(block)
}

thread_local! {
    /// Each thread's zstd decompression context, made on its first block and
    /// reused for every later one: a new context per block allocated and
    /// cleared its workspace each time (3.5 % of `verify`'s check 2 of level
    /// 36 went to `ZSTD_createDCtx` alone).
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Decompresses the zstd frame `frame` into `out`'s spare capacity with
/// this thread's context; returns the bytes written. A context that failed
/// is dropped, so that a damaged block leaves nothing behind for the next.
fn decompress(frame: &[u8], out: &mut Vec<u8>) -> std::io::Result<usize> {
    DECOMPRESSOR.with_borrow_mut(|slot| {
        let d = match slot {
            Some(d) => d,
            None => slot.insert(zstd::bulk::Decompressor::new()?),
        };
        let got = d.decompress_to_buffer(frame, out);
        if got.is_err() {
            *slot = None;
        }
        got
    })
}

/// How block `block`'s bytes `frame` differ from what the writer makes of
/// `want` values (none when they do not): exactly one zstd frame, no bytes
/// after it, carrying zstd's content checksum and its content size, which
/// is `want`. zstd alone would decode a frame written without the checksum,
/// unchecked, or several frames back to back; the checksum is what stands
/// between a damaged block and a wrong value, so a frame without it is
/// refused before it is decoded.
fn frame_fault(block: u64, frame: &[u8], want: usize) -> Option<Corruption> {
    /// The first 4 bytes of every zstd frame (RFC 8878, 3.1.1).
    const MAGIC: [u8; 4] = 0xFD2F_B528u32.to_le_bytes();
    /// The frame header descriptor's bit for a content checksum.
    const CHECKSUM_FLAG: u8 = 1 << 2;
    let fault = |detail: String| Some(Corruption::Block { block, detail });
    if frame.get(..4) != Some(&MAGIC[..]) {
        return fault("not a zstd frame".into());
    }
    match zstd::zstd_safe::find_frame_compressed_size(frame) {
        Ok(n) if n == frame.len() => {}
        Ok(n) => return fault(format!("{} bytes after its zstd frame", frame.len() - n)),
        Err(code) => return fault(zstd::zstd_safe::get_error_name(code).into()),
    }
    if frame[4] & CHECKSUM_FLAG == 0 {
        return fault("a zstd frame without its content checksum".into());
    }
    match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n == want as u64 => None,
        Ok(Some(n)) => Some(Corruption::BlockLength {
            block,
            got: usize::try_from(n).unwrap_or(usize::MAX),
            want,
        }),
        _ => fault("a zstd frame that does not say its content size".into()),
    }
}

fn encode_header(h: &Header) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    b[0..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    b[12] = h.id.game;
    b[13] = h.id.rules;
    b[14] = ENCODING_I8;
    b[16..20].copy_from_slice(&h.id.seeds.to_le_bytes());
    b[20..24].copy_from_slice(&h.block_size.to_le_bytes());
    b[24..32].copy_from_slice(&h.positions.to_le_bytes());
    b[32..40].copy_from_slice(&h.blocks.to_le_bytes());
    b[40..72].copy_from_slice(&h.content_sha256);
    b
}

/// The tag that binds block `block` of table `id` to its place: the first
/// 8 bytes of sha256 over a label, the table's identity, the block number
/// and the block's zstd content checksum (its frame's last 4 bytes, which
/// zstd checks against the decompressed values). A block moved, swapped or
/// taken from another table fails it on every read.
fn block_tag(id: TableId, block: u64, frame: &[u8]) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(b"mancaladb block");
    h.update([id.game, id.rules]);
    h.update(id.seeds.to_le_bytes());
    h.update(block.to_le_bytes());
    h.update(&frame[frame.len().saturating_sub(4)..]);
    h.finalize()[..8].try_into().expect("8 bytes")
}

fn header_check(head: &[u8], index: &[u8]) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(head);
    h.update(index);
    let d = h.finalize();
    d[..8].try_into().expect("8 bytes")
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// An open, memory-mapped table file.
pub struct Table {
    path: PathBuf,
    map: Mmap,
    header: Header,
    data_start: usize,
    /// Where the block tags start (version 2), or `None` (version 1).
    tags_start: Option<usize>,
    /// The last block decompressed, for runs of nearby reads.
    cache: Mutex<Option<(u64, Vec<u8>)>>,
    /// The file mapped, as device and inode: a damaged block read from it
    /// after another file replaced it at `path` says so.
    file: (u64, u64),
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("path", &self.path)
            .field("header", &self.header)
            .finish()
    }
}

impl Table {
    /// Opens and structurally checks the table at `path`: magic, version,
    /// sizes, header checksum and block index. Cheap; see [`Table::verify`].
    pub fn open(path: &Path) -> Result<Table> {
        let file = crate::files::open_regular(path)?;
        // SAFETY: the map is read-only, of a file this program never writes
        // in place (tables are replaced by rename). Another program that
        // rewrites it in place changes what is read: every read checks what
        // it slices and each block's checksums, so that is damage named as
        // such; one that truncates it makes a read past its end SIGBUS.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        // Looked up by path, as `stale` looks again (a file's device as
        // `fstat` and `stat` see it can differ, on some overlay file
        // systems). A file renamed in meanwhile costs only that note.
        let identity = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        let bad = |kind: Corruption| Error::corrupt(path, kind);
        if map.len() < HEADER_LEN + 8 + TRAILER_LEN {
            return Err(bad(Corruption::Truncated {
                len: map.len() as u64,
            }));
        }
        if &map[0..8] != MAGIC {
            return Err(bad(Corruption::BadMagic));
        }
        let version = u32_at(&map, 8);
        if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(bad(Corruption::Version {
                found: version,
                reads: "1 or 2",
            }));
        }
        if map[14] != ENCODING_I8 {
            return Err(bad(Corruption::Encoding(map[14])));
        }
        let header = Header {
            id: TableId {
                game: map[12],
                rules: map[13],
                seeds: u32_at(&map, 16),
            },
            block_size: u32_at(&map, 20),
            positions: u64_at(&map, 24),
            blocks: u64_at(&map, 32),
            content_sha256: map[40..72].try_into().expect("32 bytes"),
        };
        // The format's block size, and no other: a block read reserves a
        // block's values (up to 4 GiB for a size field of 2^32 - 1), and
        // the readers' cache budgets count blocks of this size.
        if header.block_size != BLOCK_SIZE {
            return Err(bad(Corruption::BlockSize {
                found: header.block_size,
                want: BLOCK_SIZE,
            }));
        }
        if header.positions > MAX_POSITIONS {
            return Err(bad(Corruption::TooManyPositions {
                found: header.positions,
                most: MAX_POSITIONS,
            }));
        }
        let bs = u64::from(header.block_size);
        if header.blocks != header.positions.div_ceil(bs) {
            return Err(bad(Corruption::BlockCount));
        }
        // Offsets of blocks 0..=b, then (version 2) one tag per block.
        let tagged = version >= 2;
        let index_len = header
            .blocks
            .checked_mul(1 + u64::from(tagged))
            .and_then(|b| b.checked_add(1))
            .and_then(|b| b.checked_mul(8))
            .and_then(|b| usize::try_from(b).ok())
            .filter(|&b| HEADER_LEN + b + TRAILER_LEN <= map.len())
            .ok_or_else(|| {
                bad(Corruption::Truncated {
                    len: map.len() as u64,
                })
            })?;
        let data_start = HEADER_LEN + index_len;
        if header_check(&map[..72], &map[HEADER_LEN..data_start]) != map[72..80] {
            return Err(bad(Corruption::HeaderChecksum));
        }
        let offsets_end = HEADER_LEN + 8 * (header.blocks as usize + 1);
        let index = &map[HEADER_LEN..offsets_end];
        let data_len = (map.len() - data_start - TRAILER_LEN) as u64;
        // Offsets in order; the last, the largest, is where the blocks end,
        // which past the data is a file cut short (a size mismatch), not a
        // bad entry.
        let mut prev = 0u64;
        for k in 0..=header.blocks as usize {
            let off = u64_at(index, 8 * k);
            if (k == 0 && off != 0) || off < prev {
                return Err(bad(Corruption::IndexEntry(k as u64)));
            }
            prev = off;
        }
        if prev != data_len {
            return Err(bad(Corruption::Size {
                blocks_end: prev,
                data: data_len,
            }));
        }
        Ok(Table {
            path: path.to_path_buf(),
            map,
            header,
            data_start,
            tags_start: tagged.then_some(offsets_end),
            cache: Mutex::new(None),
            file: (identity.dev(), identity.ino()),
        })
    }

    /// Damage of kind `kind` found in this table (see [`Table::stale`]).
    #[cold]
    fn damaged(&self, kind: Corruption) -> Error {
        self.stale(Error::corrupt(&self.path, kind))
    }

    /// `e`, as [`Corruption::Replaced`] when it is damage found in this
    /// table and another file is at its path now: a long-lived reader (a
    /// server, a Python handle) holds the table it opened, and a rebuild
    /// replaces it under it.
    #[cold]
    pub(crate) fn stale(&self, e: Error) -> Error {
        match e {
            Error::Corrupt { path, kind }
                if path == self.path
                    && !matches!(kind, Corruption::Replaced(_))
                    && std::fs::metadata(&path).is_ok_and(|m| (m.dev(), m.ino()) != self.file) =>
            {
                Error::corrupt(path, Corruption::Replaced(Box::new(kind)))
            }
            e => e,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Checks the whole-file sha256 and returns it. The pages read are
    /// then let go from this process's memory (a later read maps them
    /// again, from the page cache while they are still there): a caller
    /// that checks many tables before it uses them, as `export` does,
    /// would otherwise keep every file resident at once.
    pub fn verify(&self) -> Result<[u8; 32]> {
        let (body, trailer) = self.map.split_at(self.map.len() - TRAILER_LEN);
        let digest = sha256(body);
        let matches = digest[..] == *trailer;
        // Last, so that no read maps a page back in. SAFETY: the map is a
        // shared, read-only map of a file. Unlike a private map, whose
        // pages `MADV_DONTNEED` would turn back into the file's or zeros,
        // a shared one reads the same bytes from the file again at the
        // next access; nothing this process wrote is lost. Refused, it is
        // a hint not taken.
        let _ = unsafe { self.map.unchecked_advise(UncheckedAdvice::DontNeed) };
        if !matches {
            return Err(self.damaged(Corruption::FileChecksum));
        }
        Ok(digest)
    }

    /// Positions in block `block`.
    fn block_len(&self, block: u64) -> usize {
        let bs = u64::from(self.header.block_size);
        (self.header.positions - block * bs).min(bs) as usize
    }

    /// Decompresses block `block` into `out` (resized to fit), checking its
    /// place (version 2), its shape (one zstd frame with its content
    /// checksum and size), that checksum and its length.
    pub fn read_block(&self, block: u64, out: &mut Vec<u8>) -> Result<()> {
        if block >= self.header.blocks {
            return Err(Error::Invalid(format!(
                "block {block} beyond the {} blocks of {}",
                self.header.blocks,
                self.path.display()
            )));
        }
        let index = &self.map[HEADER_LEN..];
        let (a, b) = (
            u64_at(index, 8 * block as usize),
            u64_at(index, 8 * block as usize + 8),
        );
        // Checked when the table was opened; but the map is live, and a
        // file written over in place since (not replaced by a rename, which
        // this map never sees) may hold anything there now.
        let data = &self.map[self.data_start..self.map.len() - TRAILER_LEN];
        let in_data = |off: u64| usize::try_from(off).ok().filter(|&i| i <= data.len());
        let frame = match (in_data(a), in_data(b)) {
            (Some(a), Some(b)) if a <= b => &data[a..b],
            (Some(_), _) => return Err(self.damaged(Corruption::IndexEntry(block + 1))),
            (None, _) => return Err(self.damaged(Corruption::IndexEntry(block))),
        };
        if let Some(tags) = self.tags_start {
            let at = tags + 8 * block as usize;
            if block_tag(self.header.id, block, frame)[..] != self.map[at..at + 8] {
                return Err(self.damaged(Corruption::BlockPlace { block }));
            }
        }
        let want = self.block_len(block);
        if let Some(kind) = frame_fault(block, frame, want) {
            return Err(self.damaged(kind));
        }
        out.clear();
        out.reserve(want);
        let got = decompress(frame, out).map_err(|e| {
            self.damaged(Corruption::Block {
                block,
                detail: e.to_string(),
            })
        })?;
        if got != want {
            return Err(self.damaged(Corruption::BlockLength { block, got, want }));
        }
        Ok(())
    }

    /// The value at position `index`, decompressing only its block.
    pub fn get(&self, index: u64) -> Result<i8> {
        if index >= self.header.positions {
            return Err(Error::Invalid(format!(
                "index {index} beyond the {} positions of the level",
                self.header.positions
            )));
        }
        let bs = u64::from(self.header.block_size);
        let (block, offset) = (index / bs, (index % bs) as usize);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.as_ref().is_none_or(|(b, _)| *b != block) {
            let mut buf = cache.take().map(|(_, v)| v).unwrap_or_default();
            self.read_block(block, &mut buf)?;
            *cache = Some((block, buf));
        }
        let (_, buf) = cache.as_ref().expect("filled above");
        Ok(buf[offset] as i8)
    }

    /// Calls `f` with every block's values in index order, checking each
    /// block and, at the end, the content sha256 from the header.
    pub fn for_each_block(&self, mut f: impl FnMut(&[i8]) -> Result<()>) -> Result<()> {
        let mut buf = Vec::new();
        let mut hash = Sha256::new();
        for b in 0..self.header.blocks {
            self.read_block(b, &mut buf)?;
            hash.update(&buf);
            f(as_values(&buf)).map_err(|e| self.stale(e))?;
        }
        let digest: [u8; 32] = hash.finalize().into();
        if digest != self.header.content_sha256 {
            return Err(self.damaged(Corruption::ContentChecksum));
        }
        Ok(())
    }

    /// Writes the level's values as a raw `scores.N` file (the VU layout)
    /// at `path` (`write_atomically`), block by block: never the whole
    /// level in memory (level 33 is 6.5 GB). The blocks are checked as
    /// they are read, and their values to lie in `-seeds..=seeds` (a table
    /// written with others, its checksums all valid, would give a file
    /// that `import` and readers of VU files refuse); a damaged table is
    /// its error, and leaves no file.
    pub fn write_raw(&self, path: &Path) -> Result<()> {
        // The first failure, of a write or of the table, is the error; the
        // atomic write only hears that there was one, and leaves no file.
        let mut failure = None;
        let seeds = self.header.id.seeds as usize;
        let mut offset = 0;
        let written = write_atomically(path, |f| {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
            let read = self.for_each_block(|v| {
                check_values(&self.path, seeds, offset, v)?;
                offset += v.len() as u64;
                out.write_all(as_bytes(v)).map_err(|e| Error::io(path, e))
            });
            match read.and_then(|()| out.flush().map_err(|e| Error::io(path, e))) {
                Ok(()) => Ok(()),
                Err(e) => {
                    failure = Some(e);
                    Err(std::io::Error::other("not written"))
                }
            }
        });
        failure.map_or(written, Err)
    }

    /// Decompresses the whole level. Memory that cannot be had is an I/O
    /// error of kind `OutOfMemory` (a level of hundreds of GB asked for on
    /// an ordinary machine), not an abort.
    pub fn read_all(&self) -> Result<Vec<i8>> {
        let len = usize::try_from(self.header.positions).unwrap_or(usize::MAX);
        let mut all = crate::memory::reserve(len).map_err(|e| Error::io(&self.path, e))?;
        self.for_each_block(|v| {
            all.extend_from_slice(v);
            Ok(())
        })?;
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kilobytes of `path` resident in this process's maps, from
    /// `/proc/self/smaps` (0 when it is not mapped).
    fn resident_kb(path: &Path) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let name = path.to_str().unwrap();
        let mut lines = smaps.lines();
        let mut kb = 0;
        while let Some(line) = lines.next() {
            if line.ends_with(name) {
                let rss = lines.find(|l| l.starts_with("Rss:")).unwrap();
                kb += rss
                    .split_whitespace()
                    .nth(1)
                    .unwrap()
                    .parse::<u64>()
                    .unwrap();
            }
        }
        kb
    }

    /// A table checked in full keeps none of the pages it read resident
    /// (`export` checks every table before it writes any, and kept every
    /// file resident at once), and reads the same values afterwards.
    #[test]
    fn a_table_checked_in_full_lets_its_pages_go() {
        let dir = crate::files::scratch_dir("table", "pages-let-go");
        let path = dir.join("t.mdb");
        // Values that do not compress much: a file of megabytes.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let values: Vec<i8> = (0..1 << 22)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 61) as i8 - 30
            })
            .collect();
        let id = TableId {
            game: 1,
            rules: 1,
            seeds: 30,
        };
        write_table(&path, id, &values).unwrap();
        let table = Table::open(&path).unwrap();
        let file_kb = table.file_len() / 1024;
        assert!(file_kb > 1024, "{file_kb} KB: too small to tell");
        table.verify().unwrap();
        let kept = resident_kb(&path);
        assert!(kept * 8 < file_kb, "{kept} of {file_kb} KB still resident");
        assert_eq!(table.read_all().unwrap(), values);
        assert!(resident_kb(&path) > file_kb / 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A table file of `positions` values of level `id` whose blocks are
    /// `frames`, each bound to its place and every checksum right: what
    /// [`write_table`] writes when `frames` are [`compress_block`]'s.
    fn table_of_frames(path: &Path, id: TableId, positions: u64, frames: &[Vec<u8>]) {
        let blocks = frames.len() as u64;
        let mut data = Vec::new();
        let mut index = vec![0u8; 8];
        let mut tags = Vec::new();
        for (block, frame) in frames.iter().enumerate() {
            data.extend_from_slice(frame);
            index.extend_from_slice(&(data.len() as u64).to_le_bytes());
            tags.extend_from_slice(&block_tag(id, block as u64, frame));
        }
        index.extend_from_slice(&tags);
        let mut head = encode_header(&Header {
            id,
            block_size: BLOCK_SIZE,
            positions,
            blocks,
            content_sha256: [0; 32],
        });
        let check = header_check(&head[..72], &index);
        head[72..80].copy_from_slice(&check);
        let mut bytes = [&head[..], &index, &data].concat();
        bytes.extend_from_slice(&sha256(&bytes));
        std::fs::write(path, bytes).unwrap();
    }

    /// A block must be the one frame the writer makes: with zstd's content
    /// checksum and size, nothing after it. zstd itself decodes frames
    /// without a checksum (so a damaged value would pass unseen) and frames
    /// back to back; each such block, though bound to its place and under
    /// a right header check, is refused on every read with what is wrong.
    #[test]
    fn only_checksummed_frames_of_the_blocks_length_are_read() {
        let dir = crate::files::scratch_dir("table", "frame-shapes");
        let path = dir.join("t.mdb");
        let id = TableId {
            game: 1,
            rules: 1,
            seeds: 20,
        };
        let values: Vec<u8> = (0..1000u32).map(|i| (i % 41) as u8).collect();
        let compressed = |checksum: bool, size: bool, part: &[u8]| {
            let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL).unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(checksum))
                .unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::ContentSizeFlag(size))
                .unwrap();
            c.compress(part).unwrap()
        };
        let read = |frame: Vec<u8>| {
            table_of_frames(&path, id, values.len() as u64, &[frame]);
            let mut out = Vec::new();
            Table::open(&path)
                .unwrap()
                .read_block(0, &mut out)
                .map(|()| out)
                .map_err(|e| e.to_string())
        };
        assert_eq!(read(compress_block(&values).unwrap()).unwrap(), values);
        assert_eq!(read(compressed(true, true, &values)).unwrap(), values);
        let refused = |frame: Vec<u8>, why: &str| {
            let err = read(frame).unwrap_err();
            assert!(err.contains(&format!("block 0: {why}")), "{err}");
        };
        refused(
            compressed(false, true, &values),
            "a zstd frame without its content checksum",
        );
        refused(
            compressed(true, false, &values),
            "a zstd frame that does not say its content size",
        );
        let (front, back) = values.split_at(600);
        let front = compressed(true, true, front);
        let after = compressed(true, true, back).len();
        refused(
            [front, compressed(true, true, back)].concat(),
            &format!("{after} bytes after its zstd frame"),
        );
        refused(
            compressed(true, true, &values[1..]),
            "999 values, expected 1000",
        );
        // More than the block holds: refused by the size the frame states,
        // before a decompression that would stop at the block's room with
        // another error.
        let longer = [&values[..], &[7]].concat();
        refused(
            compressed(true, true, &longer),
            "1001 values, expected 1000",
        );
        refused(b"not a zstd frame at all".to_vec(), "not a zstd frame");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The thread's reused context decodes frame after frame, and a frame
    /// that fails (garbage, a damaged checksum, too little room) leaves
    /// nothing behind: the next good frame decodes to its own bytes.
    #[test]
    fn one_context_decodes_every_frame_and_recovers_from_bad_ones() {
        let blocks: Vec<Vec<u8>> = (0..3u8)
            .map(|k| {
                (0..5000u32)
                    .map(|i| (i * u32::from(k + 1) % 251) as u8)
                    .collect()
            })
            .collect();
        let frames: Vec<Vec<u8>> = blocks.iter().map(|b| compress_block(b).unwrap()).collect();
        let mut damaged = frames[1].clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1; // the content checksum
        let mut out = Vec::new();
        for bad in [&b"not a zstd frame"[..], &damaged[..]] {
            for (block, frame) in blocks.iter().zip(&frames) {
                out.clear();
                out.reserve(block.len());
                assert_eq!(decompress(frame, &mut out).unwrap(), block.len());
                assert_eq!(&out, block);
                out.clear();
                assert!(decompress(bad, &mut out).is_err());
            }
        }
        // Too little room for the block is an error too, and no more.
        let mut small = Vec::with_capacity(10);
        assert!(decompress(&frames[0], &mut small).is_err());
        out.clear();
        out.reserve(blocks[2].len());
        decompress(&frames[2], &mut out).unwrap();
        assert_eq!(out, blocks[2]);
    }
}
