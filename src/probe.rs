//! Fast random probes of stored levels: one position's value, from many
//! threads at once, without decompressing a block per probe.
//!
//! A probe of level `N` is answered, in order of preference, from
//!
//! 1. the level's raw copy `DIR/raw/<rules>/scores.N` (one signed byte per
//!    position, mapped), once it is known to hold exactly the table's
//!    content: one load from the page cache;
//! 2. a [`BlockCache`] of decompressed blocks shared by every level and
//!    thread of a reader: a hit costs one uncontended lock of one shard and
//!    one hash lookup; a miss decompresses the block with
//!    [`Table::read_block`] (which checks it) outside any lock. A batch of
//!    probes, or a worker of a build or check reading lower levels, holds
//!    the blocks it has read ([`Held`]), so that its next probes of them
//!    take no lock at all: a lock taken by every probe, even
//!    one without contention, is a cache line the threads pass back and
//!    forth (batches of level 12 on two threads ran at 16 M probes/s in
//!    all, against 25 M on one; BENCHMARKS, "Random probes").
//!
//! A random probe of a large level waits on memory (a cache and TLB miss,
//! about 200 ns here), not on arithmetic. Many probes at once
//! (`source::Tables::values`) rank a group of boards first and
//! prefetch their raw bytes, so that the misses overlap.
//!
//! ## The block cache
//!
//! The cache is split into shards (a power of two, at least 16 per thread
//! and 64 in all), each a small hash map under its own mutex with CLOCK
//! eviction ("second chance": a slot used since the hand last passed is
//! spared once). A block's shard is chosen by a multiplicative hash of
//! `(level, block)`, so threads probing different blocks almost never meet
//! on one lock, and there is no global lock on the probe path: the levels
//! are found through `OnceLock`s (lock-free once opened). The memory
//! budget is fixed when the reader is made ([`BlockCache::new`]), plus the
//! blocks batches under way hold after their eviction; buffers of evicted
//! blocks no batch holds are reused, so a warm cache allocates nothing.
//! A cache entry is a whole checked block, so a value read from it is the
//! stored value; two threads missing the same block both decompress it and
//! one copy is kept.
//!
//! ## When the raw copy is trusted
//!
//! A raw copy is a cache written by the builder and may be stale or damaged
//! (another build, a disk error, a hand edit). It is used only after its
//! length is the level's size and its sha256 equals the table header's
//! content checksum (what the builder wrote and `verify` checks). Hashing
//! costs a full read of the level (about 1 s per 400 MB here), which a
//! one-shot `query` (a dozen probes) should not pay and a server or engine
//! (millions of probes) gains from at once. So the check is lazy and in the
//! background: a level starts out answering from compressed blocks; once it
//! has decompressed `max(16, blocks / 16)` blocks (so decompression has cost
//! about a sixteenth of a hash, in bytes), a thread hashes the raw copy and,
//! if it matches, switches the level to it (an `OnceLock`: probes see the
//! switch without locking). Whatever the hash says, the values are the
//! same; only their speed changes. The check runs at most once per level
//! per reader; [`Level::check_raw`] runs it at once, for callers that want
//! the raw map now (whole-level reads, benchmarks).
//!
//! A damaged table is the one case where the switch shows: a block that
//! fails its check is an error of every probe that needs it until the
//! level is switched, and is then no longer read. Only blocks read whole
//! count towards the switch, so damage never brings it on; what does (the
//! decompressions above, or a whole-level read from the same reader)
//! leaves the damage to `build`, `verify` and the level's statistics,
//! which read the table itself.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use memmap2::Mmap;

use crate::db::{map_raw, read_at_random};
use crate::error::{Error, Result};
use crate::memory::prefetch;
use crate::table::{Table, sha256};

/// Default memory budget of a reader's block cache: 512 MiB of
/// decompressed blocks (every block of level 24 fits).
pub const DEFAULT_CACHE_BYTES: usize = 512 << 20;

/// Decompressed blocks of several levels, shared by threads (see the
/// module docs).
#[derive(Debug)]
pub struct BlockCache {
    shards: Box<[Mutex<Shard>]>,
    /// Blocks each shard keeps.
    per_shard: usize,
}

/// `(level << 48) | block`.
type Key = u64;

#[derive(Debug, Default)]
struct Shard {
    slots: Vec<Slot>,
    map: HashMap<Key, usize>,
    /// The CLOCK hand: the next slot considered for eviction.
    hand: usize,
    /// A buffer of an evicted block, for the next miss.
    spare: Option<Vec<u8>>,
}

#[derive(Debug)]
struct Slot {
    key: Key,
    used: bool,
    data: Block,
}

/// A decompressed block, shared by the cache and the batches of probes
/// that hold it ([`Held`]).
type Block = Arc<Vec<u8>>;

impl BlockCache {
    /// A cache of at most `bytes` of blocks of `block_bytes` each, for
    /// `threads` probing threads (16 shards of locks per thread, for at
    /// most 4,096 threads: more are as many).
    pub fn new(bytes: usize, block_bytes: usize, threads: usize) -> BlockCache {
        let shards = (16 * threads.clamp(1, 4096)).next_power_of_two().max(64);
        let blocks = (bytes / block_bytes.max(1)).max(shards);
        BlockCache {
            shards: (0..shards).map(|_| Mutex::default()).collect(),
            per_shard: blocks / shards,
        }
    }

    fn shard(&self, key: Key) -> MutexGuard<'_, Shard> {
        self.shards[spread(key, self.shards.len())]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// How many blocks it keeps.
    pub fn blocks(&self) -> usize {
        self.per_shard * self.shards.len()
    }

    /// Byte `offset` of block `block` of level `level`, calling `fill` to
    /// decompress the block into a buffer when it is not cached;
    /// [`Error::Invalid`] when the block is not that long.
    pub fn byte(
        &self,
        level: usize,
        block: u64,
        offset: usize,
        fill: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<u8> {
        let key = key(level, block);
        let byte = match self.hit(key, |data| data.get(offset).copied()) {
            Some(b) => b,
            None => self.fill_in(key, fill)?.get(offset).copied(),
        };
        byte.ok_or_else(|| beyond_the_block(level, block, offset))
    }

    /// Block `block` of level `level`, as [`BlockCache::byte`] finds it, for
    /// a batch to hold ([`Held`]).
    fn block(
        &self,
        level: usize,
        block: u64,
        fill: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<Block> {
        let key = key(level, block);
        match self.hit(key, Arc::clone) {
            Some(data) => Ok(data),
            None => self.fill_in(key, fill),
        }
    }

    /// `read` of the cached block `key`, if it is cached.
    fn hit<R>(&self, key: Key, read: impl FnOnce(&Block) -> R) -> Option<R> {
        let mut s = self.shard(key);
        let &i = s.map.get(&key)?;
        let slot = &mut s.slots[i];
        // Written only when it changes: a slot's cache line that every hit
        // wrote would go back and forth between the cores probing.
        if !slot.used {
            slot.used = true;
        }
        Some(read(&slot.data))
    }

    /// Block `key` decompressed by `fill` (outside any lock) and cached.
    fn fill_in(&self, key: Key, fill: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Result<Block> {
        let mut buf = self.shard(key).spare.take().unwrap_or_default();
        fill(&mut buf)?;
        Ok(self.shard(key).insert(key, buf, self.per_shard))
    }
}

/// The error of a byte asked for past the end of its block (a caller's
/// `fill` that gave fewer bytes than it asked for).
#[cold]
fn beyond_the_block(level: usize, block: u64, offset: usize) -> Error {
    Error::Invalid(format!(
        "byte {offset} of block {block} of level {level}: the block is shorter"
    ))
}

/// The cache key of block `block` of level `level`.
fn key(level: usize, block: u64) -> Key {
    ((level as u64) << 48) | block
}

/// Key `key`'s place among `places`, by a multiplicative hash whose high
/// bits are taken (every bit of the key moves them: block `b` of every
/// level no longer fell in one place).
fn spread(key: Key, places: usize) -> usize {
    let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((u128::from(h) * places as u128) >> 64) as usize
}

/// The blocks a batch of probes, or a worker reading lower levels, holds
/// on to (direct-mapped by level and block; `Tables::values` holds up to
/// 1,024, 64 MiB; a reader of lower levels its share of half the cache):
/// its probes of a block it holds take no lock and write nothing shared,
/// so that threads probing at once do not take turns at the shards' locks.
/// The blocks held stay in memory while it runs, evicted from the cache
/// or not. One `Held` serves one cache: keys do not name it.
#[derive(Debug)]
pub struct Held {
    slots: Vec<Option<(Key, Block)>>,
}

impl Held {
    /// Room for `blocks` blocks (at least one, at most [`Held::MOST`]).
    pub fn new(blocks: usize) -> Held {
        Held {
            slots: vec![None; blocks.clamp(1, Held::MOST)],
        }
    }

    /// The most blocks a `Held` has room for: 4 GiB of blocks of
    /// [`BLOCK_SIZE`](crate::table::BLOCK_SIZE) bytes (its slots alone
    /// are 1 MiB).
    pub const MOST: usize = 1 << 16;

    /// Byte `offset` of block `block` of level `level`: from the block held,
    /// else from `cache`, then held in its place.
    fn byte(
        &mut self,
        cache: &BlockCache,
        level: usize,
        block: u64,
        offset: usize,
        fill: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<u8> {
        let key = key(level, block);
        let at = spread(key, self.slots.len());
        if let Some((k, data)) = &self.slots[at]
            && *k == key
        {
            return data
                .get(offset)
                .copied()
                .ok_or_else(|| beyond_the_block(level, block, offset));
        }
        let data = cache.block(level, block, fill)?;
        let b = data.get(offset).copied();
        self.slots[at] = Some((key, data));
        b.ok_or_else(|| beyond_the_block(level, block, offset))
    }
}

impl Shard {
    /// Caches block `key`, decompressed into `data`, and returns it as
    /// cached: the copy another thread cached meanwhile, if it did (`data`
    /// is then kept as the spare buffer).
    fn insert(&mut self, key: Key, data: Vec<u8>, capacity: usize) -> Block {
        if let Some(&i) = self.map.get(&key) {
            self.spare = Some(data);
            return Arc::clone(&self.slots[i].data);
        }
        let data = Arc::new(data);
        if self.slots.len() < capacity {
            self.map.insert(key, self.slots.len());
            self.slots.push(Slot {
                key,
                used: false,
                data: Arc::clone(&data),
            });
            return data;
        }
        loop {
            let i = self.hand;
            self.hand = (i + 1) % self.slots.len();
            let slot = &mut self.slots[i];
            if slot.used {
                slot.used = false;
                continue;
            }
            self.map.remove(&slot.key);
            slot.key = key;
            let evicted = std::mem::replace(&mut slot.data, Arc::clone(&data));
            // Its buffer is reused unless a batch still holds it.
            if let Some(buf) = Arc::into_inner(evicted) {
                self.spare = Some(buf);
            }
            self.map.insert(key, i);
            return data;
        }
    }
}

/// One stored level, open for probes: its table, and its raw copy once
/// checked (see the module docs).
#[derive(Debug)]
pub struct Level {
    seeds: usize,
    table: Table,
    raw_path: PathBuf,
    raw: OnceLock<Arc<Mmap>>,
    /// Whether the raw copy has been checked.
    raw_checked: AtomicBool,
    /// Whether a background check has been started.
    raw_check_started: AtomicBool,
    /// Serializes raw checks, so that a level is hashed once.
    checking: Mutex<()>,
    /// Blocks decompressed for probes.
    misses: AtomicU64,
}

impl Level {
    /// Level `seeds` stored in `table`, with its raw copy (if any) at
    /// `raw_path`.
    pub fn new(seeds: usize, table: Table, raw_path: PathBuf) -> Arc<Level> {
        Arc::new(Level {
            seeds,
            table,
            raw_path,
            raw: OnceLock::new(),
            raw_checked: AtomicBool::new(false),
            raw_check_started: AtomicBool::new(false),
            checking: Mutex::new(()),
            misses: AtomicU64::new(0),
        })
    }

    /// The table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The raw copy, if it has been checked and matches.
    pub fn raw(&self) -> Option<&Arc<Mmap>> {
        self.raw.get()
    }

    /// The value at `index` of the level. A value outside `-seeds..=seeds`
    /// is [`Corruption::ValueRange`](crate::error::Corruption::ValueRange) of the file it was read from: the
    /// table (its checksums hold whatever it was written with), or the raw
    /// copy, damaged since it was checked. This is the one check a probe
    /// makes of the value itself (one compare; BENCHMARKS, "Random probes").
    /// A probe of a batch passes the blocks the batch holds (`held`).
    #[inline]
    pub fn value(
        self: &Arc<Self>,
        cache: &BlockCache,
        held: Option<&mut Held>,
        index: u64,
    ) -> Result<i8> {
        let h = self.table.header();
        if index >= h.positions {
            return Err(Error::Invalid(format!(
                "index {index} beyond the {} positions of level {}",
                h.positions, self.seeds
            )));
        }
        let v = match self.raw.get() {
            Some(raw) => raw[index as usize] as i8,
            None => {
                let bs = u64::from(h.block_size);
                let (block, offset) = (index / bs, (index % bs) as usize);
                // Only a block read whole counts towards the raw check: a
                // damaged one is reported by every probe that meets it, and
                // is no reason to switch to the raw copy sooner.
                let fill = |buf: &mut Vec<u8>| {
                    let read = self.table.read_block(block, buf);
                    if read.is_ok() {
                        self.missed();
                    }
                    read
                };
                let b = match held {
                    Some(held) => held.byte(cache, self.seeds, block, offset, fill)?,
                    None => cache.byte(self.seeds, block, offset, fill)?,
                };
                b as i8
            }
        };
        if usize::from(v.unsigned_abs()) > self.seeds {
            let damaged = Error::value_range(self.read_from(), self.seeds, index, v);
            return Err(match self.raw.get() {
                Some(_) => damaged,
                None => self.table.stale(damaged),
            });
        }
        Ok(v)
    }

    /// Where the level's raw copy is (or would be).
    pub fn raw_path(&self) -> &Path {
        &self.raw_path
    }

    /// The file probes read the level's values from now: the raw copy once
    /// it is in use, else the table.
    pub fn read_from(&self) -> &Path {
        match self.raw.get() {
            Some(_) => &self.raw_path,
            None => self.table.path(),
        }
    }

    /// Asks the memory system for the raw byte of `index` ahead of a
    /// [`Level::value`] (nothing for blocks: their lookup is a hash map).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        if let Some(raw) = self.raw.get()
            && let Some(b) = raw.get(index as usize)
        {
            prefetch(b);
        }
    }

    /// Counts a decompression and starts the raw check in the background
    /// once decompression has cost about a sixteenth of it.
    fn missed(self: &Arc<Self>) {
        let misses = self.misses.fetch_add(1, Ordering::Relaxed) + 1;
        let due = (self.table.header().blocks / 16).max(16);
        if misses >= due && !self.raw_check_started.swap(true, Ordering::Relaxed) {
            let level = Arc::clone(self);
            let started = std::thread::Builder::new()
                .name("raw-check".into())
                .spawn(move || level.check_raw());
            if started.is_err() {
                // A process limit: a later miss tries again.
                self.raw_check_started.store(false, Ordering::Relaxed);
            }
        }
    }

    /// Checks the raw copy now, unless done before: it is used from then on
    /// if its length and sha256 match the table's content. Returns whether
    /// it is in use.
    pub fn check_raw(&self) -> bool {
        let _one = self.checking.lock().unwrap_or_else(|p| p.into_inner());
        if !self.raw_checked.swap(true, Ordering::Relaxed) {
            let h = self.table.header();
            let matching = map_raw(&self.raw_path)
                .ok()
                .filter(|m| m.len() as u64 == h.positions && sha256(m) == h.content_sha256);
            if let Some(m) = matching {
                // Hashed in one scan; from now on, probes at random.
                read_at_random(&m);
                let _ = self.raw.set(Arc::new(m));
            }
        }
        self.raw.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::BLOCK_SIZE;

    /// A caller's count of blocks to hold is bounded: `usize::MAX` asked
    /// for room it could never fill and panicked ("capacity overflow").
    #[test]
    fn room_to_hold_blocks_is_bounded() {
        assert_eq!(Held::new(usize::MAX).slots.len(), Held::MOST);
        assert_eq!(Held::new(0).slots.len(), 1);
        assert_eq!(Held::new(100).slots.len(), 100);
        assert_eq!(
            std::mem::size_of::<Option<(Key, Block)>>() * Held::MOST,
            1 << 20
        );
    }

    /// Block `b` of the 49 levels spreads over the places as blocks of one
    /// level do (the hash's low bits, which the level does not reach, put
    /// them all in one place), and every place is in range.
    #[test]
    fn the_level_takes_part_in_a_blocks_place() {
        for places in [64, 256, 1000, 1024] {
            for b in [0, 1, 7, 200] {
                let at: std::collections::HashSet<usize> = (0..=48)
                    .map(|level| spread(key(level, b), places))
                    .collect();
                assert!(at.len() > 30, "{places} places, block {b}: {at:?}");
                assert!(at.iter().all(|&p| p < places));
            }
        }
    }

    /// A cache keeps the blocks its budget holds, one a shard at least, and
    /// the default budget holds every block of level 24.
    #[test]
    fn a_cache_keeps_the_blocks_its_budget_holds() {
        let block = BLOCK_SIZE as usize;
        // 64 shards (the least) of 16 blocks.
        assert_eq!(BlockCache::new(64 << 20, block, 1).blocks(), 1024);
        // 16 shards a thread: 128 of 128 blocks.
        assert_eq!(BlockCache::new(1 << 30, block, 8).blocks(), 16384);
        // A budget under a block a shard: one a shard.
        assert_eq!(BlockCache::new(0, block, 1).blocks(), 64);
        let level_24 = crate::oware::level_size(24).div_ceil(u64::from(BLOCK_SIZE));
        assert!(BlockCache::new(DEFAULT_CACHE_BYTES, block, 1).blocks() as u64 >= level_24);
    }

    /// A hit decompresses nothing; a full shard's CLOCK hand evicts the
    /// first block not used since the hand last passed it, in turn, and
    /// spares a used one once.
    #[test]
    fn a_full_shard_evicts_in_turn_sparing_a_block_used_since() {
        // Three blocks (of one byte) in each of 64 shards.
        let cache = BlockCache::new(3 * 64, 1, 1);
        assert_eq!(cache.per_shard, 3);
        let shard = |b: u64| spread(key(5, b), 64);
        let [a, b, c, d]: [u64; 4] = (0..)
            .filter(|&k| shard(k) == shard(0))
            .take(4)
            .collect::<Vec<_>>()
            .try_into()
            .unwrap();
        let fills = std::cell::Cell::new(0);
        // Whether reading block `k` decompressed it.
        let filled = |k: u64| {
            let before = fills.get();
            let byte = cache.byte(5, k, 0, |buf| {
                fills.set(fills.get() + 1);
                buf.clear();
                buf.push(k as u8 ^ 0x5a);
                Ok(())
            });
            assert_eq!(byte.unwrap(), k as u8 ^ 0x5a);
            fills.get() > before
        };
        assert!(filled(a) && filled(b) && filled(c));
        assert!(!filled(a), "a hit");
        // The hand passes a (used), then evicts b.
        assert!(filled(d));
        assert!(!filled(a) && !filled(c) && !filled(d));
        assert!(filled(b), "evicted");
    }

    /// The raw copy is checked (in the background) once probes have
    /// decompressed `max(16, blocks / 16)` blocks of the level, not before
    /// (hits do not count), and then answers the probes.
    #[test]
    fn the_raw_copy_is_checked_once_a_sixteenth_of_the_blocks_is_read() {
        use crate::table::{as_bytes, write_table};
        let dir = crate::files::scratch_dir("probe", "raw-check");
        let bs = BLOCK_SIZE as usize;
        let blocks = 320; // due after 20 blocks, not the 16 of small levels
        let values: Vec<i8> = (0..blocks * bs).map(|i| (i / bs % 41) as i8 - 20).collect();
        let (path, raw) = (dir.join("level.mdb"), dir.join("scores.20"));
        let id = crate::db::Db::table_id(crate::oware::Rules::Awari, 20);
        write_table(&path, id, &values).unwrap();
        std::fs::write(&raw, as_bytes(&values)).unwrap();
        let level = Level::new(20, Table::open(&path).unwrap(), raw.clone());
        let cache = BlockCache::new(1 << 30, bs, 1);
        let probe = |b: usize| {
            let at = b * bs + b % 7;
            assert_eq!(level.value(&cache, None, at as u64).unwrap(), values[at]);
        };
        let started = || level.raw_check_started.load(Ordering::Relaxed);
        for b in 0..19 {
            probe(b);
            probe(b);
        }
        assert!(!started() && level.raw().is_none());
        probe(19);
        assert!(started());
        let waited = std::time::Instant::now();
        while level.raw().is_none() {
            assert!(waited.elapsed().as_secs() < 60, "no switch to the raw copy");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(level.read_from(), raw);
        probe(blocks - 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A batch's probe reads the block it holds when the level and block
    /// are the ones asked for, never another block held in the same place
    /// (one place here: every block is held there in turn), and a byte past
    /// the block's end is an error, held or not.
    #[test]
    fn a_batch_reads_the_block_it_holds_not_another_in_its_place() {
        let cache = BlockCache::new(1 << 20, 4, 1);
        let mut held = Held::new(1);
        let fills = std::cell::Cell::new(0);
        // Block `b` of level `level`: four bytes that name both.
        let byte_of =
            |level: usize, b: u64, i: usize| (level as u8) << 6 | (b as u8) << 2 | i as u8;
        let mut read = |level: usize, b: u64, offset: usize| {
            held.byte(&cache, level, b, offset, |buf| {
                fills.set(fills.get() + 1);
                buf.clear();
                buf.extend((0..4).map(|i| byte_of(level, b, i)));
                Ok(())
            })
        };
        assert_eq!(read(3, 7, 2).unwrap(), byte_of(3, 7, 2));
        assert_eq!(read(3, 7, 3).unwrap(), byte_of(3, 7, 3));
        assert_eq!(fills.get(), 1, "the block held is read again");
        assert_eq!(read(3, 8, 1).unwrap(), byte_of(3, 8, 1));
        assert_eq!(read(2, 8, 1).unwrap(), byte_of(2, 8, 1));
        assert_eq!(fills.get(), 3);
        // Block 7 of level 3 again: from the cache, not decompressed.
        assert_eq!(read(3, 7, 0).unwrap(), byte_of(3, 7, 0));
        assert_eq!(fills.get(), 3);
        for fresh in [false, true] {
            let b = if fresh { 9 } else { 7 };
            let err = read(3, b, 4).unwrap_err().to_string();
            assert_eq!(
                err,
                format!("byte 4 of block {b} of level 3: the block is shorter"),
                "{}",
                if fresh {
                    "a block just read"
                } else {
                    "a block held"
                }
            );
        }
    }

    /// A raw copy is used only when both its length and its sha256 are the
    /// table's: one of the right length with a byte changed, or of the
    /// right bytes and one more, is not, and probes read the table; the
    /// right bytes are used.
    #[test]
    fn a_raw_copy_is_used_only_when_its_length_and_hash_match() {
        use crate::table::{as_bytes, write_table};
        let dir = crate::files::scratch_dir("probe", "raw-mismatch");
        let bs = BLOCK_SIZE as usize;
        let values: Vec<i8> = (0..3 * bs + 5).map(|i| (i % 9) as i8 - 4).collect();
        let path = dir.join("level.mdb");
        let id = crate::db::Db::table_id(crate::oware::Rules::Awari, 4);
        write_table(&path, id, &values).unwrap();
        let at = 2 * bs + 5;
        let mut damaged = as_bytes(&values).to_vec();
        damaged[at] ^= 1;
        let longer = [as_bytes(&values), &[0]].concat();
        let cache = BlockCache::new(1 << 20, bs, 1);
        for (name, bytes, used) in [
            ("damaged", damaged, false),
            ("longer", longer, false),
            ("right", as_bytes(&values).to_vec(), true),
        ] {
            let raw = dir.join(name);
            std::fs::write(&raw, &bytes).unwrap();
            let level = Level::new(4, Table::open(&path).unwrap(), raw.clone());
            assert_eq!(level.raw_path(), raw);
            assert_eq!(level.check_raw(), used, "{name}");
            assert_eq!(level.raw().is_some(), used, "{name}");
            assert_eq!(level.read_from(), if used { &raw } else { &path });
            assert_eq!(level.value(&cache, None, at as u64).unwrap(), values[at]);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
