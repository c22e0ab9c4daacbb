//! A table directory: where each level's files are, opening a level as the
//! level it claims to be, and the small records kept beside the tables
//! (build times, verifications). Building is the `build` module; the file
//! layout is described in `db/README.md`.
//!
//! Layout under the directory (default `db/`):
//!
//! * `<rules>-<NN>.mdb`: the stored table of level `NN` (see [`crate::table`]);
//! * `raw/<rules>/scores.<N>`: the same values uncompressed, one signed byte
//!   per position (the VU layout), memory-mapped by the builder and the
//!   probes. A cache within a budget (see the `stored` module): rebuilt from the
//!   tables whenever wanted and missing or not matching their content
//!   checksum;
//! * `build-log.tsv` and `verified.tsv`: what was built how fast, and which
//!   table contents passed every check of `verify`.

use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::error::{Corruption, Error, Missing, Result};
use crate::files;
use crate::lock::DirLock;
use crate::oware::{MAX_SEEDS, Rules, game_level, level_size, reads_level};
use crate::progress::{Notice, Progress};
use crate::table::{self, Table, TableId};

/// Most bytes of `verified.tsv` read (a record is about 80 bytes).
const VERIFIED_CAP: u64 = 16 << 20;
/// Most bytes of `build-log.tsv` read (a line is about 60 bytes a level).
const LOG_CAP: u64 = 64 << 20;

/// Game code of Oware tables.
pub const GAME_OWARE: u8 = 1;

/// What `verify` found of a level, for [`Db::set_verified`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// Every check passed.
    Passed {
        /// The content sha256 of the table checked.
        content: [u8; 32],
        /// Those of the lower levels it was checked against (the levels it
        /// reads, in level order).
        lower: &'a [[u8; 32]],
    },
    /// A check found it wrong.
    Failed {
        /// The content sha256 of the table checked; `None` when it did not
        /// open.
        content: Option<[u8; 32]>,
    },
}

/// A directory of Oware tables.
#[derive(Clone, Debug)]
pub struct Db {
    dir: PathBuf,
    /// Most bytes of raw copies a build keeps (`None`: every one); see
    /// the `stored` module.
    raw_cache: Option<u64>,
}

impl Db {
    /// The table directory `dir` (not created until a build writes to it).
    /// Builds keep every raw copy.
    pub fn new(dir: impl Into<PathBuf>) -> Db {
        Db {
            dir: dir.into(),
            raw_cache: None,
        }
    }

    /// The same directory, where builds keep at most `bytes` of raw copies
    /// (`None`: every one).
    pub fn with_raw_cache(self, bytes: Option<u64>) -> Db {
        Db {
            raw_cache: bytes,
            ..self
        }
    }

    /// Most bytes of raw copies a build keeps (`None`: every one).
    pub fn raw_cache(&self) -> Option<u64> {
        self.raw_cache
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of the table of `rules`, level `seeds`.
    pub fn table_path(&self, rules: Rules, seeds: usize) -> PathBuf {
        self.dir.join(format!("{}-{seeds:02}.mdb", rules.name()))
    }

    /// Path of the uncompressed working copy of a level.
    pub fn raw_path(&self, rules: Rules, seeds: usize) -> PathBuf {
        self.raw_dir(rules).join(format!("scores.{seeds}"))
    }

    /// The solver's work directory for one rank of a level being built:
    /// seed lists and checkpoints, removed once the level is in place.
    pub fn work_path(&self, rules: Rules, seeds: usize, rank: usize) -> PathBuf {
        self.raw_path(rules, seeds)
            .with_file_name(format!("scores.{seeds}.work"))
            .join(format!("rank-{rank}"))
    }

    /// Directory of the uncompressed working copies of `rules`.
    pub fn raw_dir(&self, rules: Rules) -> PathBuf {
        self.dir.join("raw").join(rules.name())
    }

    /// The identity a table of `rules`, level `seeds`, carries.
    pub fn table_id(rules: Rules, seeds: usize) -> TableId {
        TableId {
            game: GAME_OWARE,
            rules: rules.code(),
            seeds: seeds as u32,
        }
    }

    /// Fails unless the table of each of `levels` is there: one missing
    /// is [`Missing::Level`], more are [`Missing::SomeLevels`] (all of
    /// them, so that the remedy builds them all); a file that cannot be
    /// looked at is an I/O error; a level past the game's 48 is
    /// [`Error::Invalid`].
    pub fn require_levels(&self, rules: Rules, levels: &[usize]) -> Result<()> {
        let mut missing = Vec::new();
        for &seeds in levels {
            game_level(seeds as u64)?; // a level past the game is not one to build
            if !files::exists(&self.table_path(rules, seeds))? {
                missing.push(seeds);
            }
        }
        missing.sort_unstable();
        missing.dedup();
        let (dir, rules) = (self.dir.clone(), rules.name());
        Err(Error::Missing(match missing[..] {
            [] => return Ok(()),
            [seeds] => Missing::Level { dir, rules, seeds },
            _ => Missing::SomeLevels {
                dir,
                rules,
                seeds: missing,
            },
        }))
    }

    /// Opens the table of a level and checks that it is the one asked for.
    /// A missing file is [`Error::Missing`]; one that cannot be looked at
    /// (no permission) is an I/O error, not a level to build; a level past
    /// the game's 48 is [`Error::Invalid`].
    pub fn open(&self, rules: Rules, seeds: usize) -> Result<Table> {
        game_level(seeds as u64)?;
        let path = self.table_path(rules, seeds);
        if !files::exists(&path)? {
            return Err(Error::Missing(Missing::Level {
                dir: self.dir.clone(),
                rules: rules.name(),
                seeds,
            }));
        }
        let t = Table::open(&path)?;
        let h = t.header();
        if h.id != Db::table_id(rules, seeds) {
            return Err(Error::corrupt(
                &path,
                Corruption::WrongLevel {
                    holds: (h.id.game, h.id.rules, h.id.seeds),
                    holds_rules: Rules::ALL
                        .into_iter()
                        .find(|r| h.id.game == GAME_OWARE && r.code() == h.id.rules)
                        .map(Rules::name),
                    rules: rules.name(),
                    seeds,
                },
            ));
        }
        if h.positions != level_size(seeds) {
            return Err(Error::corrupt(
                &path,
                Corruption::Positions {
                    found: h.positions,
                    seeds,
                    want: level_size(seeds),
                },
            ));
        }
        Ok(t)
    }

    /// The raw working copy of a level, mapped, if it holds exactly the
    /// content of `table` (its length is the table's positions and its
    /// sha256 the table's content checksum; the length first, so that a
    /// copy of another length, however long, is never hashed).
    pub fn raw_copy(&self, rules: Rules, seeds: usize, table: &Table) -> Option<Mmap> {
        map_raw(&self.raw_path(rules, seeds)).ok().filter(|m| {
            m.len() as u64 == table.header().positions
                && table::sha256(m) == table.header().content_sha256
        })
    }

    /// The content sha256 of each level of `rules` that a solver of level
    /// `seeds` reads ([`reads_level`]), in level order: what its work
    /// files are tied to, so that they are never resumed over other lower
    /// levels. A table missing or damaged is an error.
    pub fn lower_content(&self, rules: Rules, seeds: usize) -> Result<Vec<[u8; 32]>> {
        (0..seeds)
            .filter(|&k| reads_level(seeds, k))
            .map(|k| Ok(self.open(rules, k)?.header().content_sha256))
            .collect()
    }

    /// Whether the table of `rules`, level `seeds`, is there; one that
    /// cannot be looked at is an error naming it. (Whatever is there: a
    /// build refuses anything but a file in the place of a level it builds
    /// before it solves anything, and a reader when it opens it.)
    pub fn has_table(&self, rules: Rules, seeds: usize) -> Result<bool> {
        let path = self.table_path(rules, seeds);
        files::exists(&path)
    }

    /// Levels of `rules` present in the directory, in order. A table that
    /// cannot be looked at (a loop of links, a directory that cannot be
    /// searched) is an error naming it, never a level left out.
    pub fn levels(&self, rules: Rules) -> Result<Vec<usize>> {
        present_files((0..=MAX_SEEDS).map(|n| (n, self.table_path(rules, n))))
    }

    /// Levels of `rules` present, or [`Missing::Levels`] when there are none.
    pub fn present(&self, rules: Rules) -> Result<Vec<usize>> {
        let levels = self.levels(rules)?;
        if levels.is_empty() {
            return Err(Error::Missing(Missing::Levels {
                dir: self.dir.clone(),
                rules: rules.name(),
            }));
        }
        Ok(levels)
    }
}

/// Build times and verifications are kept in small text files beside the
/// tables, so that `known` can say what is verified and estimate the rest.
impl Db {
    pub(crate) fn log_path(&self) -> PathBuf {
        self.dir.join("build-log.tsv")
    }

    fn verified_path(&self) -> PathBuf {
        self.dir.join("verified.tsv")
    }

    /// Positions per second of the largest level built here (any rule
    /// set), from the build log; `None` before any build. A line that is
    /// not a build's (a level outside the game, a position count other
    /// than its level's, a time that is not a positive number) is passed
    /// over: it would give a rate of nothing or of infinity. So is the line
    /// of a level that resumed from a checkpoint (its eleventh field 1):
    /// its time is only the part after the resume.
    pub fn measured_rate(&self) -> Option<f64> {
        let bytes = files::read_record_file(&self.log_path(), LOG_CAP)
            .ok()
            .flatten()?;
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let seeds: usize = f.get(1)?.parse().ok().filter(|&n| n <= MAX_SEEDS)?;
                let positions: u64 = f.get(2)?.parse().ok()?;
                let seconds: f64 = f.get(3)?.parse().ok()?;
                let resumed = f.get(10).is_some_and(|&r| r != "0");
                (positions == level_size(seeds) && seconds.is_finite() && seconds > 0.0 && !resumed)
                    .then(|| (positions, positions as f64 / seconds))
            })
            .max_by_key(|&(positions, _)| positions)
            .map(|(_, rate)| rate)
    }

    /// The well-formed records of `verified.tsv` (`rules level content
    /// lower`, [`verified_record`]): a damaged line (bad bytes, wrong
    /// fields) is skipped, never the rest. With `older`, also the records
    /// of three fields written before the lower levels were recorded: they
    /// count for nothing here, and are kept when the file is rewritten, so
    /// that the binaries that wrote them still find them. No file is no
    /// records; a file that cannot be read is an error (it would otherwise
    /// be rewritten without them).
    fn verified_records(&self, older: bool) -> Result<Vec<String>> {
        let bytes =
            files::read_record_file(&self.verified_path(), VERIFIED_CAP)?.unwrap_or_default();
        let sha = |f: &str| f.len() == 64 && f.bytes().all(|b| b.is_ascii_hexdigit());
        Ok(bytes
            .split(|&b| b == b'\n')
            .filter_map(|line| std::str::from_utf8(line).ok())
            .filter(|line| {
                let f: Vec<&str> = line.split('\t').collect();
                (f.len() == 4 || (older && f.len() == 3))
                    && f[0].parse::<Rules>().is_ok()
                    && f[1].parse::<usize>().is_ok()
                    && f[2..].iter().all(|f| sha(f))
            })
            .map(String::from)
            .collect())
    }

    /// Holds the lock of `verified.tsv` until dropped: one process at a
    /// time rewrites it (two `verify` runs finishing together would each
    /// drop the other's record).
    fn lock_verified(&self, progress: Progress<'_>) -> Result<DirLock> {
        let waiting = |holder: &str| {
            progress.notice(Notice::WaitingForRecords {
                path: self.verified_path(),
                holder: holder.to_string(),
            })
        };
        DirLock::acquire_file_waiting(&self.dir.join(".verified.lock"), waiting, || {
            progress.keep_waiting()
        })
    }

    /// Records `verify`'s verdict on level `seeds` of `rules`: a pass
    /// replaces any record of the level with one naming the contents
    /// checked; a failure removes it (an older one of three fields too).
    /// Every other well-formed record is kept, older ones included. Not
    /// recorded (`false`) when the table at the level's path now has
    /// other contents than the one checked: another has replaced it since
    /// (a rebuild during the checks, or a long-lived reader's handle on an
    /// older file), and the verdict says nothing of it. Another process
    /// writing the records is waited for, as `progress` is told.
    pub fn set_verified(
        &self,
        rules: Rules,
        seeds: usize,
        verdict: Verdict<'_>,
        progress: Progress<'_>,
    ) -> Result<bool> {
        let _lock = self.lock_verified(progress)?;
        let checked = match verdict {
            Verdict::Passed { content, .. } => Some(content),
            Verdict::Failed { content } => content,
        };
        if let (Some(checked), Ok(now)) = (checked, self.open(rules, seeds))
            && now.header().content_sha256 != checked
        {
            return Ok(false);
        }
        let path = self.verified_path();
        let mut lines: Vec<String> = self
            .verified_records(true)?
            .into_iter()
            .filter(|l| !l.starts_with(&format!("{rules}\t{seeds}\t")))
            .collect();
        if let Verdict::Passed { content, lower } = verdict {
            lines.push(verified_record(rules, seeds, &content, lower));
        }
        lines.sort();
        files::write_atomically(&path, |f| {
            use std::io::Write;
            f.write_all((lines.join("\n") + "\n").as_bytes())
        })?;
        Ok(true)
    }

    /// Whether the values level `seeds` of `rules` holds passed `verify`
    /// against the lower levels there now: the record names the content
    /// checksums of the level and of the levels it reads, compared with
    /// their tables' headers, so that a lower level replaced since (by
    /// other values) takes the record's force away. A table damaged since
    /// still says so until a read meets the damage (every block is checked
    /// as it is read, so no damaged value is served) or a `verify` finds it
    /// and drops the record. Never, when its table or one it reads is
    /// missing or cannot be opened. An error when its own table is there
    /// but cannot be opened (damaged, not a file: saying "not verified"
    /// would hide that) or the records cannot be read, and
    /// [`Error::Invalid`] for a level past the game's 48.
    pub fn is_verified(&self, rules: Rules, seeds: usize) -> Result<bool> {
        Ok(self.are_verified(rules, &[seeds])?[0])
    }

    /// [`Db::is_verified`] of each of `levels`, each table opened once;
    /// the first error of any level is the error.
    pub fn are_verified(&self, rules: Rules, levels: &[usize]) -> Result<Vec<bool>> {
        self.verified_each(rules, levels)?.into_iter().collect()
    }

    /// [`Db::is_verified`] of each of `levels`, with the records read once
    /// and each table opened once (a listing of every level would
    /// otherwise open each lower level again for each level above it):
    /// the records that cannot be read are the error of all, a level's own
    /// table that is there but does not open (or a level past the game) is
    /// that level's error.
    pub fn verified_each(&self, rules: Rules, levels: &[usize]) -> Result<Vec<Result<bool>>> {
        /// What opening a level's table found.
        #[derive(Clone, Copy)]
        enum Seen {
            NotYet,
            Missing,
            Unreadable,
            Content([u8; 32]),
        }
        let records = self.verified_records(false)?;
        let mut seen = [Seen::NotYet; MAX_SEEDS + 1];
        // A level found unreadable before is opened again as a level of its
        // own, for its error.
        let content = |seen: &mut [Seen], k: usize| -> Result<Option<[u8; 32]>> {
            let k = game_level(k as u64)?;
            match seen[k] {
                Seen::Missing => return Ok(None),
                Seen::Content(c) => return Ok(Some(c)),
                Seen::NotYet | Seen::Unreadable => {}
            }
            let found = match self.open(rules, k) {
                Ok(t) => t.header().content_sha256,
                Err(Error::Missing(_)) => {
                    seen[k] = Seen::Missing;
                    return Ok(None);
                }
                Err(e) => {
                    seen[k] = Seen::Unreadable;
                    return Err(e);
                }
            };
            seen[k] = Seen::Content(found);
            Ok(Some(found))
        };
        Ok(levels
            .iter()
            .map(|&seeds| {
                let Some(own) = content(&mut seen, seeds)? else {
                    return Ok(false);
                };
                // The lower levels are opened only for a level recorded.
                let recorded = format!("{rules}\t{seeds}\t{}\t", table::hex(&own));
                if !records.iter().any(|r| r.starts_with(&recorded)) {
                    return Ok(false);
                }
                // A lower level missing or unreadable (its own error is
                // its own listing's) leaves nothing verified above it.
                let mut lower = Vec::new();
                for k in (0..seeds).filter(|&k| reads_level(seeds, k)) {
                    if matches!(seen[k], Seen::Unreadable) {
                        return Ok(false);
                    }
                    match content(&mut seen, k) {
                        Ok(Some(c)) => lower.push(c),
                        Ok(None) | Err(_) => return Ok(false),
                    }
                }
                Ok(records.contains(&verified_record(rules, seeds, &own, &lower)))
            })
            .collect())
    }
}

/// A line of `verified.tsv`: `rules`, the level, its content sha256 and
/// the sha256 of the content sha256s of the levels it reads (`lower`, in
/// level order), each in hex on a line of its own (so that a shell can
/// compute it: `od` and `sha256sum`, as `scripts/awari-run.sh` does);
/// tab-separated.
fn verified_record(rules: Rules, seeds: usize, content: &[u8; 32], lower: &[[u8; 32]]) -> String {
    let lines: String = lower.iter().map(|c| table::hex(c) + "\n").collect();
    format!(
        "{rules}\t{seeds}\t{}\t{}",
        table::hex(content),
        table::hex(&table::sha256(lines.as_bytes()))
    )
}

/// The levels of `files` (level, path) whose path is there: a path that
/// cannot be looked at is an error naming it.
pub(crate) fn present_files(
    files: impl IntoIterator<Item = (usize, PathBuf)>,
) -> Result<Vec<usize>> {
    files_looked_at(files)
        .into_iter()
        .map(|(n, there)| there.map(|()| n))
        .collect()
}

/// The levels of `files` (level, path) whose path is there or cannot be
/// looked at, each with the error of the latter: for a listing that names
/// the levels it cannot read beside those it can.
pub(crate) fn files_looked_at(
    files: impl IntoIterator<Item = (usize, PathBuf)>,
) -> Vec<(usize, Result<()>)> {
    files
        .into_iter()
        .filter_map(|(n, path)| match files::exists(&path) {
            Ok(true) => Some((n, Ok(()))),
            Ok(false) => None,
            Err(e) => Some((n, Err(e))),
        })
        .collect()
}

/// Writes a level's values as a raw `scores.N` file (the VU layout).
pub(crate) fn write_raw(path: &Path, values: &[i8]) -> Result<()> {
    use std::io::Write;
    files::write_atomically(path, |f| f.write_all(table::as_bytes(values)))
}

/// Maps a raw `scores.N` file read-only.
pub(crate) fn map_raw(path: &Path) -> Result<Mmap> {
    let f = files::open_regular(path)?;
    // SAFETY: read-only map of a file this program writes only under a
    // temporary name and then replaces by rename, never in place, so the
    // mapped bytes do not change under the map; the one exception, a
    // level's `.part` file, is mapped only after every rank has written
    // and synced its slice (`build_level`'s barrier), under the directory
    // lock. (Callers check the contents against the table checksum where
    // they rely on them.)
    unsafe { Mmap::map(&f) }.map_err(|e| Error::io(path, e))
}

/// Marks a mapped raw copy as read at random (lookups of positions, not a
/// scan): a page fault then reads its own page, not the device's readahead
/// window around it. When the page cache cannot hold the lower levels
/// beside a top level's state, read-around reads each evicted page's whole
/// window again: building level 26 in a 1.4 GB memory cgroup read 22..29 GB
/// from disk with it and 1.8..2.3 GB without (8 MiB readahead; BENCHMARKS,
/// "The raw copies read at random"). A hint: a refusal changes nothing.
pub(crate) fn read_at_random(map: &Mmap) {
    let _ = map.advise(memmap2::Advice::Random);
}
