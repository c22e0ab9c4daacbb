//! What building levels takes: working memory and disk per position (as
//! measured, BENCHMARKS.md), the needs of a set of levels ([`Needs`], what
//! `known` reports), and the check that refuses a level this machine cannot
//! hold before anything is built.

use crate::db::Db;
use crate::error::{Error, Result};
use crate::files::{bytes_under, free_disk};
use crate::memory::{MemoryLimit, SetBy, bytes_text};
use crate::oware::{Rules, level_size};
use crate::stored::{DEFAULT_RAW_CACHE, keeps_raw, raw_window};

/// The builder's working memory per position of the level being solved, at
/// most: one state byte, the capped frontier and batches (RssAnon measured
/// 1.09..1.13 bytes per position at levels 20..24, BENCHMARKS.md "Compact,
/// resumable builder"). The pages of the lower levels it reads come on
/// top, as page cache; its seed lists and checkpoints go to disk.
pub const WORKING_BYTES_PER_POSITION: f64 = 1.25;

/// [`WORKING_BYTES_PER_POSITION`] of a rank of a distributed build, per
/// position of its slice: a round's messages to and from the other ranks
/// come on top (RssAnon measured 1.4..1.6 bytes per position of rank 0's
/// slice of level 20 with 2 ranks, BENCHMARKS.md "Projections").
pub const RANK_BYTES_PER_POSITION: f64 = 1.6;

/// Disk per position of a built level's table, as measured here: 4.1 bits
/// (at most 4.114, level 35; BENCHMARKS.md).
pub const TABLE_BYTES_PER_POSITION: f64 = 4.1 / 8.0;

/// Disk per position of the level being built, beside the tables: its
/// solver work directory at its fullest (seed lists and two compressed
/// checkpoints while one replaces the other; 1.19 bytes per position at
/// level 20 with a checkpoint after every threshold, BENCHMARKS.md). One
/// process writes the table straight from memory, with no raw file.
pub const WORK_BYTES_PER_POSITION: f64 = 1.2;

/// What building some levels takes.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Needs {
    /// The largest of them.
    pub largest_level: usize,
    /// Working memory of the largest, in bytes.
    pub memory: u64,
    /// Disk at the fullest moment of building them in increasing order, in
    /// bytes, by one process: while a level's table is written, the tables
    /// already written, the work directory of the level being solved (it
    /// goes once the table is in place), the raw copies it reads within the
    /// default budget ([`crate::stored::DEFAULT_RAW_CACHE`]), the copy of
    /// the level just below it, kept for the next, the level's own
    /// `scores.N.part` (one byte per position) when its raw copy is kept,
    /// and its new table; or all the tables and the copies kept at the end.
    pub disk: u64,
}

impl Needs {
    /// What building `levels` (sorted, non-empty), from nothing, takes;
    /// levels past the game's count as [`level_size`] does (saturating).
    pub fn of(levels: &[usize]) -> Needs {
        let largest_level = levels.iter().copied().max().unwrap_or(0);
        let size = |n: usize| level_size(n) as f64;
        // The copies level `n` reads, and the one of level `n - 1` when it
        // is kept for `n + 1` (built just before `n`).
        let raw = |n: usize| {
            let budget = Some(DEFAULT_RAW_CACHE);
            let kept = n >= 1 && levels.contains(&(n - 1)) && keeps_raw(n - 1, budget);
            raw_window(n, budget).map(size).sum::<f64>() + if kept { size(n - 1) } else { 0.0 }
        };
        // The raw file the level's values meet in, when its copy is kept.
        let part = |n: usize| match keeps_raw(n, Some(DEFAULT_RAW_CACHE)) {
            true => size(n),
            false => 0.0,
        };
        let (mut tables, mut disk) = (0.0, 0.0f64);
        for &n in levels {
            let table = TABLE_BYTES_PER_POSITION * size(n);
            let writing = WORK_BYTES_PER_POSITION * size(n) + raw(n) + part(n) + table;
            disk = disk.max(tables + writing);
            tables += table;
        }
        Needs {
            largest_level,
            memory: (WORKING_BYTES_PER_POSITION * size(largest_level)) as u64,
            disk: disk.max(tables + raw(largest_level.saturating_add(2))) as u64,
        }
    }
}

/// The disk a build may still take, against the room there is for it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct DiskRoom {
    /// [`Needs::disk`] of the levels still to build.
    pub need: u64,
    /// Bytes free on the table directory's file system, and those its raw
    /// copies and work directories hold already: [`Needs::disk`] counts
    /// the copies a level reads and its work directory as written, and a
    /// build keeps, reuses or removes what is there.
    pub room: u64,
}

impl DiskRoom {
    /// The room for building `missing` (sorted; the levels of `rules`
    /// with no table in `db` yet) in `db`; `None` when nothing is missing
    /// or the file system cannot be asked (`statvfs`).
    pub fn of(db: &Db, rules: Rules, missing: &[usize]) -> Option<DiskRoom> {
        if missing.is_empty() {
            return None;
        }
        let free = free_disk(db.dir())?;
        Some(DiskRoom {
            need: Needs::of(missing).disk,
            room: free.saturating_add(bytes_under(&db.raw_dir(rules))),
        })
    }

    /// Whether the build may fill the disk before it ends.
    pub fn is_short(&self) -> bool {
        self.need > self.room
    }
}

/// Whether working memory fits: under both limits, or the first it passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Under both.
    Fits,
    /// More than this machine's processes may fill at all (its memory, or
    /// its control group's limit where lower).
    OverMemory(MemoryLimit),
    /// More than this process's own address-space limit, in bytes, which
    /// the mapped lower levels and the threads' stacks share too.
    OverAddressSpace(u64),
}

impl Fit {
    /// Whether `machine` bytes (what this machine's processes hold in all)
    /// and `process` bytes (this process's share) fit under `limit` (the
    /// machine's, [`crate::memory::memory_limit`]) and `own` (this
    /// process's address-space limit, [`crate::memory::address_space_limit`]).
    pub fn of(machine: f64, process: f64, limit: Option<MemoryLimit>, own: Option<u64>) -> Fit {
        match (limit, own) {
            (Some(limit), _) if machine > limit.bytes as f64 => Fit::OverMemory(limit),
            (_, Some(own)) if process > own as f64 => Fit::OverAddressSpace(own),
            _ => Fit::Fits,
        }
    }
}

/// Refuses, before anything is solved, to build level `top` (the highest
/// level to build; none, nothing to check) when the working memory this
/// machine would hold for it ([`WORKING_BYTES_PER_POSITION`]; with several
/// ranks, each holds [`RANK_BYTES_PER_POSITION`] of its share, `here` of
/// them on this machine, [`crate::exchange::ranks_on_this_machine`]) is more than
/// this machine's processes may fill at all (`limit`: the machine's memory,
/// or its control group's limit where lower, [`crate::memory::memory_limit`]),
/// or when this process's share alone is more than its own address-space
/// limit (`own`, [`crate::memory::address_space_limit`]): it could only fail
/// hours later, after the levels below it. The address-space limit bounds
/// the mapped lower levels and the threads' stacks too, so a level under it
/// is not promised to fit, and no smaller level is named as one that does.
pub(super) fn check_memory(
    top: Option<usize>,
    ranks: usize,
    here: usize,
    limit: Option<MemoryLimit>,
    own: Option<u64>,
) -> Result<()> {
    let Some(top) = top else {
        return Ok(());
    };
    let per_position = match ranks {
        1 => WORKING_BYTES_PER_POSITION,
        _ => RANK_BYTES_PER_POSITION,
    };
    let need = |n: usize| per_position * level_size(n) as f64;
    let share = |n: usize| need(n) * here as f64 / ranks as f64;
    let mine = need(top) / ranks as f64;
    let why = match Fit::of(share(top), mine, limit, own) {
        Fit::Fits => return Ok(()),
        Fit::OverMemory(limit) => {
            let held = match ranks {
                1 => String::new(),
                _ => format!(
                    ", {} of it on this machine ({here} of {ranks} ranks),",
                    bytes_text(share(top) as u64)
                ),
            };
            let fit = match (0..top).rev().find(|&n| share(n) <= limit.bytes as f64) {
                Some(n) => format!("levels up to {n} fit here; build level {top}"),
                None => format!("build level {top}"),
            };
            let larger = match limit.set_by {
                SetBy::Machine => "on a larger machine",
                SetBy::ControlGroup => "under a higher memory limit",
            };
            format!(
                "level {top} needs about {} of working memory \
                 ({per_position} bytes per position){held} and {limit}: \
                 {fit} {larger} or over ranks on more machines",
                bytes_text(need(top) as u64),
            )
        }
        Fit::OverAddressSpace(own) => {
            let each = match ranks {
                1 => String::new(),
                _ => format!(
                    ", {} of it in each rank's process,",
                    bytes_text(mine as u64)
                ),
            };
            format!(
                "level {top} needs about {} of working memory \
                 ({per_position} bytes per position){each} and {}",
                bytes_text(need(top) as u64),
                over_address_space(own),
            )
        }
    };
    Err(Error::TooLarge { level: top, why })
}

/// What a need over this process's address-space limit `own` is told:
/// the limit, and what to do.
pub fn over_address_space(own: u64) -> String {
    format!(
        "this process's address-space limit (ulimit -v or -d) is {}, which the mapped \
         lower levels and the threads' stacks share too: lift the limit, or raise it \
         well above that",
        bytes_text(own)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels far past the game need what `level_size` counts for them,
    /// saturating (they overflowed: a panic where overflow checks are on,
    /// as in a debug build).
    #[test]
    fn levels_past_the_game_need_saturated_counts() {
        assert!(Needs::of(&[49]).memory > Needs::of(&[48]).memory);
        for n in [1_000, usize::MAX - 1, usize::MAX] {
            let needs = Needs::of(&[n]);
            assert_eq!(
                (needs.memory, needs.disk),
                (u64::MAX, u64::MAX),
                "level {n}"
            );
        }
    }

    /// While level `n`'s table is written, the disk holds the tables
    /// below it, its work directory, the raw copies it reads, its own
    /// `.part` when its copy is kept, and the new table: the need counts
    /// them all.
    #[test]
    fn the_disk_need_counts_the_new_table_and_the_part_file() {
        let budget = Some(DEFAULT_RAW_CACHE);
        let mut kept = 0;
        for n in [10, 20, 24, 30] {
            let levels: Vec<usize> = (0..=n).collect();
            let size = |k: usize| level_size(k) as f64;
            let below: f64 = (0..n).map(|k| TABLE_BYTES_PER_POSITION * size(k)).sum();
            let kept_below = if keeps_raw(n - 1, budget) {
                size(n - 1)
            } else {
                0.0
            };
            let reads: f64 = raw_window(n, budget).map(size).sum::<f64>() + kept_below;
            let part = if keeps_raw(n, budget) { size(n) } else { 0.0 };
            kept += usize::from(part > 0.0);
            let at_least = below
                + (WORK_BYTES_PER_POSITION + TABLE_BYTES_PER_POSITION) * size(n)
                + reads
                + part;
            let disk = Needs::of(&levels).disk as f64;
            assert!(disk >= at_least.floor(), "level {n}: {disk} < {at_least}");
        }
        assert!(kept > 0, "no level here keeps its raw copy");
    }

    /// The room for a build is the free disk and what its raw copies and
    /// work directories hold already; the need is that of the levels
    /// missing, and it is short only where it is more than the room.
    #[test]
    fn the_room_for_a_build_counts_the_raw_copies_held() {
        let dir = crate::files::scratch_dir("needs", "room");
        let db = Db::new(&dir);
        assert_eq!(DiskRoom::of(&db, Rules::Awari, &[]), None);
        let raw = db.raw_dir(Rules::Awari);
        std::fs::create_dir_all(raw.join("scores.12.work/rank-0")).unwrap();
        std::fs::write(raw.join("scores.11"), vec![0u8; 701_064]).unwrap();
        std::fs::write(raw.join("scores.12.work/rank-0/state.0"), vec![0u8; 5_000]).unwrap();
        let room = DiskRoom::of(&db, Rules::Awari, &[12, 13]).unwrap();
        assert_eq!(room.need, Needs::of(&[12, 13]).disk);
        let free = crate::files::free_disk(&dir).unwrap();
        let held = room.room - 706_064;
        assert!(held.abs_diff(free) < 256 << 20, "{held} against {free}");
        let short = |need, room| DiskRoom { need, room }.is_short();
        assert!(short(101, 100));
        assert!(!short(100, 100));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Levels 0..=5 (every board stored: 1, 12, 78, 364, 1,365 and 4,368
    /// positions, each copy kept) need most disk while level 5's table is
    /// written: the tables of levels 0..=4 (0.5125 x 1,820 bytes), its work
    /// directory (1.2 x 4,368), the copies of levels 0..=4 (1,820: 0..=3
    /// that it reads, 4 kept for level 6), its `scores.5.part` (4,368) and
    /// its table (0.5125 x 4,368): 14,600.95 bytes. Its working memory is
    /// 1.25 x 4,368.
    #[test]
    fn levels_0_to_5_need_their_counted_bytes() {
        assert_eq!(
            Needs::of(&[0, 1, 2, 3, 4, 5]),
            Needs {
                largest_level: 5,
                memory: 5_460,
                disk: 14_600,
            }
        );
    }

    /// Level 5 alone reads the copies of levels 0..=3 (455 bytes) and keeps
    /// none of level 4, which it does not build: 1.2 x 4,368 + 455 + 4,368
    /// + 0.5125 x 4,368 = 12,303.2 bytes.
    #[test]
    fn a_level_alone_keeps_no_copy_of_the_level_below_it() {
        assert_eq!(
            Needs::of(&[5]),
            Needs {
                largest_level: 5,
                memory: 5_460,
                disk: 12_303,
            }
        );
    }

    /// At the raw cache's edge, level `k` is the largest whose copy is
    /// kept (for level `k + 2`) and `k + 1` the smallest whose copy is not:
    /// building `k` before `k + 1` adds, while `k + 1`'s table is written,
    /// `k`'s table and its kept copy, and no `scores.N.part` of `k + 1`.
    #[test]
    fn the_copy_kept_for_two_levels_up_counts_at_the_raw_caches_edge() {
        let budget = Some(DEFAULT_RAW_CACHE);
        let k = (0..).find(|&k| !keeps_raw(k + 1, budget)).unwrap();
        assert!(keeps_raw(k, budget) && k > 30, "level {k}");
        let size = |n: usize| level_size(n) as f64;
        let both = Needs::of(&[k, k + 1]).disk as f64;
        let alone = Needs::of(&[k + 1]).disk as f64;
        let added = (1.0 + TABLE_BYTES_PER_POSITION) * size(k);
        assert!(
            (both - alone - added).abs() < 2.0,
            "{both} - {alone} != {added}"
        );
    }

    /// A level whose working memory is exactly what the machine, or the
    /// process's address space, holds fits; a byte less does not. Level 3
    /// (364 positions) needs 1.25 x 364 = 455 bytes.
    #[test]
    fn a_level_that_needs_exactly_the_limit_fits() {
        let limit = |bytes: u64| {
            Some(MemoryLimit {
                bytes,
                set_by: SetBy::Machine,
            })
        };
        assert!(check_memory(Some(3), 1, 1, limit(455), None).is_ok());
        assert!(check_memory(Some(3), 1, 1, limit(454), None).is_err());
        assert!(check_memory(Some(3), 1, 1, None, Some(455)).is_ok());
        assert!(check_memory(Some(3), 1, 1, None, Some(454)).is_err());
    }
}
