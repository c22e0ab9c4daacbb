//! A table directory: naming, building level by level, resuming, and
//! opening levels for queries.
//!
//! Layout under the directory (default `db/`):
//!
//! * `<rules>-<NN>.mdb`: the stored table of level `NN` (see [`crate::table`]);
//! * `raw/<rules>/scores.<N>`: the same values uncompressed, one signed byte
//!   per position (the VU layout), memory-mapped by the builder because
//!   capture moves probe lower levels at random. A cache: rebuilt from the
//!   tables whenever missing or not matching their content checksum.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::exchange::Exchange;
use crate::memory::AnonPeak;
use crate::oware::solve::{Options, solve_part_in};
use crate::oware::{MAX_SEEDS, Rules, level_size};
use crate::progress::Progress;
use crate::table::{self, Table, TableId};

/// Game code of Oware tables.
pub const GAME_OWARE: u8 = 1;

/// A directory of Oware tables.
#[derive(Clone, Debug)]
pub struct Db {
    dir: PathBuf,
}

/// What happened to one level during a build.
#[derive(Clone, Debug)]
pub struct LevelReport {
    /// The level.
    pub seeds: usize,
    /// Positions in the level.
    pub positions: u64,
    /// Whether a valid table was already there.
    pub skipped: bool,
    /// Wall time of solving and writing (0 when skipped).
    pub seconds: f64,
    /// Peak resident memory while building the level, if known.
    pub peak_rss: Option<u64>,
    /// Peak anonymous resident memory (`RssAnon`: the working state, not
    /// the page cache of mapped levels) while building it, if known; the
    /// largest rank's when distributed.
    pub peak_anon: Option<u64>,
    /// The solver threshold a checkpoint let this build resume at, if any.
    pub resumed_at: Option<usize>,
    /// Size of the table file.
    pub file_bytes: u64,
    /// Processes that built it (1 unless distributed).
    pub ranks: usize,
    /// Bytes the ranks sent each other while solving it.
    pub exchanged_bytes: u64,
    /// Propagation rounds (each one exchange between the ranks).
    pub rounds: u64,
}

impl Db {
    /// The table directory `dir` (not created until a build writes to it).
    pub fn new(dir: impl Into<PathBuf>) -> Db {
        Db { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of the table of `rules`, level `seeds`.
    pub fn table_path(&self, rules: Rules, seeds: usize) -> PathBuf {
        self.dir.join(format!("{}-{seeds:02}.mdb", rules.name()))
    }

    /// The solver's work directory for one rank of a level being built:
    /// seed lists and checkpoints, removed once the level is in place.
    pub fn work_path(&self, rules: Rules, seeds: usize, rank: usize) -> PathBuf {
        self.raw_path(rules, seeds)
            .with_file_name(format!("scores.{seeds}.work"))
            .join(format!("rank-{rank}"))
    }

    /// Path of the uncompressed working copy of a level.
    pub fn raw_path(&self, rules: Rules, seeds: usize) -> PathBuf {
        self.dir
            .join("raw")
            .join(rules.name())
            .join(format!("scores.{seeds}"))
    }

    /// Opens the table of a level and checks that it is the one asked for.
    /// A missing file is [`Error::Missing`] with the command that builds it.
    pub fn open(&self, rules: Rules, seeds: usize) -> Result<Table> {
        let path = self.table_path(rules, seeds);
        if !path.exists() {
            return Err(Error::Missing {
                what: format!("level {seeds} ({rules})"),
                dir: self.dir.clone(),
                hint: format!(
                    "build it: mancaladb build --rules {rules} --max-seeds {seeds} --db {}",
                    self.dir.display()
                ),
            });
        }
        let t = Table::open(&path)?;
        let want = TableId {
            game: GAME_OWARE,
            rules: rules.code(),
            seeds: seeds as u32,
        };
        let h = t.header();
        if h.id != want {
            return Err(Error::corrupt(
                &path,
                format!(
                    "holds game {} rules {} level {}, not {rules} level {seeds}",
                    h.id.game, h.id.rules, h.id.seeds
                ),
            ));
        }
        if h.positions != level_size(seeds) {
            return Err(Error::corrupt(
                &path,
                format!(
                    "{} positions, level {seeds} has {}",
                    h.positions,
                    level_size(seeds)
                ),
            ));
        }
        Ok(t)
    }

    /// The raw working copy of a level, mapped, if it holds exactly the
    /// content of `table` (its sha256 is the table's content checksum).
    pub fn raw_copy(&self, rules: Rules, seeds: usize, table: &Table) -> Option<Mmap> {
        map_raw(&self.raw_path(rules, seeds))
            .ok()
            .filter(|m| table::sha256(m) == table.header().content_sha256)
    }

    /// The error for a directory without any level of `rules`.
    pub fn nothing_built(&self, rules: Rules) -> Error {
        Error::Missing {
            what: format!("{rules} levels"),
            dir: self.dir.clone(),
            hint: format!(
                "build them: mancaladb build --rules {rules} --db {}",
                self.dir.display()
            ),
        }
    }

    /// Levels of `rules` present in the directory, in order.
    pub fn levels(&self, rules: Rules) -> Vec<usize> {
        (0..=MAX_SEEDS)
            .filter(|&n| self.table_path(rules, n).exists())
            .collect()
    }

    /// Builds levels `0..=max_seeds` of `rules`, skipping levels whose table
    /// is present and passes its checksum, so an interrupted build resumes.
    ///
    /// Every rank of `ex` calls this with the same arguments; each solves
    /// its slice of every level, and rank 0 alone decides what stands and
    /// writes the tables. A level's files appear (by rename) only once every
    /// rank has finished it. `on_level` is called on rank 0 as each level is
    /// done, and only rank 0 returns the reports.
    pub fn build(
        &self,
        rules: Rules,
        max_seeds: usize,
        ex: &dyn Exchange,
        progress: Progress,
        mut on_level: impl FnMut(&LevelReport),
    ) -> Result<Vec<LevelReport>> {
        if max_seeds > MAX_SEEDS {
            return Err(Error::Usage(format!(
                "--max-seeds {max_seeds}: an Oware game has {MAX_SEEDS} seeds"
            )));
        }
        let ranks = match ex.ranks() {
            1 => String::new(),
            p => format!("{p} ranks x "),
        };
        progress.line(&format!(
            "building {rules} levels 0..={max_seeds} in {} with {ranks}{} threads",
            self.dir.display(),
            rayon::current_num_threads()
        ));
        let raw_dir = self
            .raw_path(rules, 0)
            .parent()
            .expect("raw dir")
            .to_path_buf();
        std::fs::create_dir_all(&raw_dir).map_err(|e| Error::io(&raw_dir, e))?;
        let mut lower: Vec<Mmap> = Vec::with_capacity(max_seeds + 1);
        let mut reports = Vec::new();
        for seeds in 0..=max_seeds {
            // Rank 0 checks (and repairs) what stands; the others wait for
            // its word before they map anything.
            let existing = match ex.rank() {
                0 => self.existing(rules, seeds, progress)?,
                _ => None,
            };
            let skip = ex.broadcast(existing.is_some().into()) == 1;
            if skip {
                // Left behind by a run killed after the level was in place.
                let work = self.work_path(rules, seeds, ex.rank());
                let _ = std::fs::remove_dir_all(work.parent().expect("work dir"));
            }
            let report = match existing {
                Some(report) => Some(report),
                None if skip => None,
                None => {
                    let slices: Vec<&[i8]> = lower.iter().map(|m| table::as_values(m)).collect();
                    self.build_level(rules, seeds, &slices, ex, progress)?
                }
            };
            lower.push(map_raw(&self.raw_path(rules, seeds))?);
            if let Some(report) = report {
                if !report.skipped {
                    self.log_build(rules, &report)?;
                }
                on_level(&report);
                reports.push(report);
            }
        }
        Ok(reports)
    }

    /// Solves one level on every rank: each writes its slice of the raw
    /// file at its offset, then rank 0 writes the table and renames the raw
    /// file into place. Returns the report on rank 0.
    fn build_level(
        &self,
        rules: Rules,
        seeds: usize,
        lower: &[&[i8]],
        ex: &dyn Exchange,
        progress: Progress,
    ) -> Result<Option<LevelReport>> {
        reset_peak_rss();
        let anon = AnonPeak::start(std::time::Duration::from_millis(20));
        let start = Instant::now();
        let work = self.work_path(rules, seeds, ex.rank());
        let part = solve_part_in(
            rules,
            seeds,
            lower,
            ex,
            &Options::from_env(&work)?,
            progress,
        )?;
        let raw = self.raw_path(rules, seeds);
        let partial = raw.with_file_name(format!("scores.{seeds}.part"));
        let positions = level_size(seeds);
        write_slice(&partial, positions, part.range.start, &part.values)?;
        let exchanged_bytes = ex.sum(part.sent_bytes);
        let rounds = part.rounds;
        let resumed_at = part.resumed_at;
        drop(part);
        ex.barrier(); // every slice is written
        let peak_rss = Some(ex.max(peak_rss().unwrap_or(0))).filter(|&b| b > 0);
        let peak_anon = Some(ex.max(anon.finish().unwrap_or(0))).filter(|&b| b > 0);
        let report = if ex.rank() == 0 {
            let id = TableId {
                game: GAME_OWARE,
                rules: rules.code(),
                seeds: seeds as u32,
            };
            let path = self.table_path(rules, seeds);
            table::write_table(&path, id, table::as_values(&map_raw(&partial)?))?;
            std::fs::rename(&partial, &raw).map_err(|e| Error::io(&raw, e))?;
            let file_bytes = std::fs::metadata(&path)
                .map_err(|e| Error::io(&path, e))?
                .len();
            Some(LevelReport {
                seeds,
                positions,
                skipped: false,
                seconds: start.elapsed().as_secs_f64(),
                peak_rss,
                peak_anon,
                resumed_at,
                file_bytes,
                ranks: ex.ranks(),
                exchanged_bytes,
                rounds,
            })
        } else {
            None
        };
        ex.barrier(); // the level's files are in place
        let _ = std::fs::remove_dir_all(work.parent().expect("work dir"));
        Ok(report)
    }

    /// If level `seeds` is already built and sound, makes sure its raw copy
    /// is too and reports it; `None` if it must be built. A corrupt table is
    /// reported and rebuilt.
    fn existing(
        &self,
        rules: Rules,
        seeds: usize,
        progress: Progress,
    ) -> Result<Option<LevelReport>> {
        let path = self.table_path(rules, seeds);
        if !path.exists() {
            return Ok(None);
        }
        let table = match self.open(rules, seeds).and_then(|t| t.verify().map(|_| t)) {
            Ok(t) => t,
            Err(e) => {
                progress.line(&format!("{e}; rebuilding level {seeds}"));
                return Ok(None);
            }
        };
        if self.raw_copy(rules, seeds, &table).is_none() {
            write_raw(&self.raw_path(rules, seeds), &table.read_all()?)?;
        }
        Ok(Some(LevelReport {
            seeds,
            positions: table.header().positions,
            skipped: true,
            seconds: 0.0,
            peak_rss: None,
            peak_anon: None,
            resumed_at: None,
            file_bytes: table.file_len(),
            ranks: 1,
            exchanged_bytes: 0,
            rounds: 0,
        }))
    }
}

impl Db {
    /// Imports every `scores.N` of `vu` as a table of `rules` (and its raw
    /// working copy). Returns the levels imported.
    pub fn import_vu(&self, rules: Rules, vu: &crate::source::VuDir) -> Result<Vec<usize>> {
        let levels = vu.levels();
        if levels.is_empty() {
            return Err(vu.nothing_found());
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        for &seeds in &levels {
            let map = vu.open(seeds)?;
            let values = table::as_values(&map);
            let id = TableId {
                game: GAME_OWARE,
                rules: rules.code(),
                seeds: seeds as u32,
            };
            table::write_table(&self.table_path(rules, seeds), id, values)?;
            let raw = self.raw_path(rules, seeds);
            std::fs::create_dir_all(raw.parent().expect("raw dir"))
                .map_err(|e| Error::io(&raw, e))?;
            write_raw(&raw, values)?;
        }
        Ok(levels)
    }

    /// Writes `scores.N` (one signed byte per position, index order, no
    /// header: the published VU layout) into `out` for every level of
    /// `rules` present. Returns the levels written.
    pub fn export_vu(&self, rules: Rules, out: &Path) -> Result<Vec<usize>> {
        let levels = self.levels(rules);
        if levels.is_empty() {
            return Err(self.nothing_built(rules));
        }
        std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
        for &seeds in &levels {
            let t = self.open(rules, seeds)?;
            t.verify()?;
            write_raw(&out.join(format!("scores.{seeds}")), &t.read_all()?)?;
        }
        Ok(levels)
    }
}

/// Build times and verifications are kept in small text files beside the
/// tables, so that `known` can say what is verified and estimate the rest.
impl Db {
    fn log_path(&self) -> PathBuf {
        self.dir.join("build-log.tsv")
    }

    fn verified_path(&self) -> PathBuf {
        self.dir.join("verified.tsv")
    }

    /// Appends `rules level positions seconds threads ranks exchanged-bytes
    /// rounds peak-anon-bytes` to the build log.
    fn log_build(&self, rules: Rules, r: &LevelReport) -> Result<()> {
        use std::io::Write;
        let path = self.log_path();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        writeln!(
            f,
            "{rules}\t{}\t{}\t{:.3}\t{}\t{}\t{}\t{}\t{}",
            r.seeds,
            r.positions,
            r.seconds,
            rayon::current_num_threads(),
            r.ranks,
            r.exchanged_bytes,
            r.rounds,
            r.peak_anon.unwrap_or(0)
        )
        .map_err(|e| Error::io(&path, e))
    }

    /// Positions per second of the largest level built here (any rule
    /// set), from the build log; `None` before any build.
    pub fn measured_rate(&self) -> Option<f64> {
        let text = std::fs::read_to_string(self.log_path()).ok()?;
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let positions: f64 = f.get(2)?.parse().ok()?;
                let seconds: f64 = f.get(3)?.parse().ok()?;
                (seconds > 0.0).then_some((positions, positions / seconds))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, rate)| rate)
    }

    /// Records that level `seeds` of `rules` passed every check of `verify`.
    pub fn record_verified(&self, rules: Rules, seeds: usize) -> Result<()> {
        let sha = table::hex(&self.open(rules, seeds)?.header().content_sha256);
        let path = self.verified_path();
        let mut lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with(&format!("{rules}\t{seeds}\t")))
            .map(String::from)
            .collect();
        lines.push(format!("{rules}\t{seeds}\t{sha}"));
        lines.sort();
        table::write_atomically(&path, |f| {
            use std::io::Write;
            f.write_all((lines.join("\n") + "\n").as_bytes())
        })
    }

    /// Whether level `seeds` of `rules` passed `verify` as it is now (the
    /// record names the table's content checksum).
    pub fn is_verified(&self, rules: Rules, seeds: usize) -> bool {
        let Ok(t) = self.open(rules, seeds) else {
            return false;
        };
        let want = format!(
            "{rules}\t{seeds}\t{}",
            table::hex(&t.header().content_sha256)
        );
        std::fs::read_to_string(self.verified_path())
            .is_ok_and(|text| text.lines().any(|l| l == want))
    }
}

fn write_raw(path: &Path, values: &[i8]) -> Result<()> {
    use std::io::Write;
    table::write_atomically(path, |f| f.write_all(table::as_bytes(values)))
}

/// Writes `values`, the slice of a level starting at index `start`, into
/// the raw file `path` of `positions` bytes, beside the other ranks' slices.
fn write_slice(path: &Path, positions: u64, start: u64, values: &[i8]) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let result = (|| {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // Every rank sets the same length, so none cuts another's slice.
        f.set_len(positions)?;
        f.write_all_at(table::as_bytes(values), start)?;
        f.sync_all()
    })();
    result.map_err(|e| Error::io(path, e))
}

fn map_raw(path: &Path) -> Result<Mmap> {
    let f = File::open(path).map_err(|e| Error::io(path, e))?;
    // SAFETY: read-only map of a file this process wrote and only replaces by
    // rename; its contents were checked against the table checksum.
    unsafe { Mmap::map(&f) }.map_err(|e| Error::io(path, e))
}

/// Resets the kernel's peak-RSS mark of this process (Linux; else no-op).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process since the last reset, in bytes.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
