//! Building a table directory level by level, resuming where a build
//! stopped. The solving itself is [`crate::oware::solve`]; this module
//! decides what stands, writes each level's files (by rename, only once
//! every rank has finished it) and reports. Before anything is solved,
//! the ranks of a distributed build agree on what they build (`agree`) and
//! the levels asked for are weighed against the machine (`needs`).

use std::ops::ControlFlow;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::db::{Db, map_raw};
use crate::error::level_set_text;
use crate::error::{Error, Missing, Result};
use crate::exchange::{Alone, Exchange, ranks_on_this_machine};
use crate::files::{self, RemoveOnDrop, remove_leftovers_strictly};
use crate::lock::DirLock;
use crate::memory::{AnonPeak, disk_read_bytes, peak_rss, reset_peak_rss};
// The memory this process may fill, to weigh `Needs` against.
pub use crate::memory::{MemoryLimit, SetBy, address_space_limit, memory_limit};
use crate::oware::solve::{ForwardResume, Options, solve_part_in};
use crate::oware::{Rules, game_levels, level_size, levels_needed, reads_level};
use crate::progress::{Notice, Progress};
use crate::stored::{Lower, keeps_raw, prepare_raw_cache};
use crate::table;

mod agree;
mod needs;

use agree::{RANKS_TOKEN, agree};
use needs::check_memory;
pub use needs::{
    DiskRoom, Fit, Needs, RANK_BYTES_PER_POSITION, TABLE_BYTES_PER_POSITION,
    WORK_BYTES_PER_POSITION, WORKING_BYTES_PER_POSITION, over_address_space,
};

/// What happened to one level during a build.
#[derive(Clone, Debug, Serialize)]
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
    /// Bytes read from disk while building it (page-cache misses: the
    /// lower levels when they no longer fit in memory, seed lists,
    /// checkpoints), if known; the sum over ranks when distributed.
    pub disk_read: Option<u64>,
    /// The solver threshold a checkpoint let this build resume at, if any.
    pub resumed_at: Option<usize>,
    /// The point in the forward pass a checkpoint let this build resume
    /// at, if any. Either way `seconds` counts this run alone.
    pub resumed_forward: Option<ForwardResume>,
    /// What was wrong with the damaged table this build replaced, if it
    /// replaced one.
    pub replaced: Option<String>,
    /// Size of the table file.
    pub file_bytes: u64,
    /// Processes that built it (1 unless distributed).
    pub ranks: usize,
    /// Worker threads of all those processes together (each rank has its
    /// own `--threads`); 0 for a level already built.
    pub threads: usize,
    /// Bytes the ranks sent each other while solving it.
    pub exchanged_bytes: u64,
    /// Propagation rounds (each one exchange between the ranks).
    pub rounds: u64,
}

/// A build of levels of one rule set into a table directory:
/// [`Build::new`], then the settings that differ from the defaults, then
/// [`Build::run`].
///
/// ```
/// use mancaladb::build::Build;
/// use mancaladb::db::Db;
/// use mancaladb::Rules;
///
/// # fn main() -> mancaladb::Result<()> {
/// let db = Db::new(std::env::temp_dir().join(format!("mancaladb-build-{}", std::process::id())));
/// let reports = Build::new(&db, Rules::Abapa, 0..=5).run()?;
/// // Below 6 seeds every board is stored: C(11 + n, 11) of n seeds, 6,188 in all.
/// assert_eq!(reports.iter().map(|r| r.positions).sum::<u64>(), 6_188);
/// // Built already: run again, it checks the tables and skips them.
/// assert!(Build::new(&db, Rules::Abapa, 0..=5).run()?.iter().all(|r| r.skipped));
/// # std::fs::remove_dir_all(db.dir()).ok();
/// # Ok(())
/// # }
/// ```
///
/// [`Build::run`] builds the levels in increasing order (usually `0..=n`),
/// skipping levels whose table is present and passes its checksum, so an
/// interrupted build resumes. A level's lower levels must be among the
/// levels or built already, but for the one just below it, which it never
/// reads ([`reads_level`]): `0..=34` and `36` give the 36-seed game's start
/// its value and leave level 35 for later.
///
/// Rank 0 first locks the directory (one writer at a time: see
/// [`Build::wait_for_writer`]), which also proves it writable before any
/// solving, and removes what a killed writer left: `*.mdb.tmp` files in the
/// directory, `*.part` and `*.tmp` files in `raw/<rules>/`. An error while
/// writing a level removes that level's partial files.
///
/// In a distributed build ([`Build::exchange`]) every rank runs the same
/// build; each solves its slice of every level, and rank 0 alone decides
/// what stands and writes the tables. A level's files appear (by rename)
/// only once every rank has finished it. Only rank 0 returns the reports.
/// An error returns on the rank that met it, while the others may wait for
/// it in their next collective call: with several ranks the caller stops
/// them all (the command line calls `MPI_Abort`), as it does for a panic.
#[derive(Clone, Copy)]
#[must_use = "a Build does nothing until it is run"]
pub struct Build<'a, L> {
    db: &'a Db,
    rules: Rules,
    levels: L,
    ex: &'a dyn Exchange,
    progress: Progress<'a>,
    wait: bool,
}

impl<'a, L: IntoIterator<Item = usize>> Build<'a, L> {
    /// The build of `levels` of `rules` into `db`: one process, nothing
    /// told on the way, failing at once when another writer holds the
    /// directory.
    pub fn new(db: &'a Db, rules: Rules, levels: L) -> Build<'a, L> {
        Build {
            db,
            rules,
            levels,
            ex: &Alone,
            progress: Progress::QUIET,
            wait: false,
        }
    }

    /// Built by the ranks of `ex` together (see [`crate::exchange`]).
    pub fn exchange(self, ex: &'a dyn Exchange) -> Self {
        Build { ex, ..self }
    }

    /// Telling `progress` what it does.
    pub fn progress(self, progress: Progress<'a>) -> Self {
        Build { progress, ..self }
    }

    /// With `true`, waiting for another writer of the directory to finish
    /// (saying so, for as long as the progress observer keeps waiting)
    /// instead of failing at once with [`Error::Locked`].
    pub fn wait_for_writer(self, wait: bool) -> Self {
        Build { wait, ..self }
    }

    /// Builds the levels: the report of each level, in increasing order
    /// (none on ranks other than 0).
    pub fn run(self) -> Result<Vec<LevelReport>> {
        self.run_with(|_| ControlFlow::Continue(()))
    }

    /// [`Build::run`], calling `on_level` on rank 0 as each level is done;
    /// it may stop the build after that level by returning
    /// [`ControlFlow::Break`] (an interrupt, a caller's error): the levels
    /// done stay complete and their reports are returned. In a
    /// distributed build rank 0's word reaches every rank before the next
    /// level.
    pub fn run_with(
        self,
        mut on_level: impl FnMut(&LevelReport) -> ControlFlow<()>,
    ) -> Result<Vec<LevelReport>> {
        let Build {
            db,
            rules,
            levels,
            ex,
            progress,
            wait,
        } = self;
        let mut levels = game_levels(levels)?;
        levels.sort_unstable();
        levels.dedup();
        // The solver's settings from the environment and the directory's
        // place, checked before anything else: a bad value is a usage error
        // even when every level stands, and a file where the directory or one
        // of its parents goes is named as such.
        Options::from_env(db.dir())?;
        files::check_dir(db.dir())?;
        if levels.is_empty() {
            return Ok(Vec::new()); // nothing to build: no lock, no directory
        }
        // A directory not there yet holds no level: what cannot be built in it
        // is refused before it is made (with its lock and `raw/`). Otherwise
        // the checks wait for the lock, under which the levels there stand.
        // (Ranks learn how many of them share a machine only once they agree,
        // below, where they weigh their memory.)
        if ex.rank() == 0 && !db.dir().exists() {
            if ex.ranks() == 1 {
                check_memory(
                    highest_to_build(db, rules, &levels)?,
                    1,
                    1,
                    memory_limit(),
                    address_space_limit(),
                )?;
            }
            check_lower_levels(db, rules, &levels)?;
        }
        let _lock = match ex.rank() {
            0 => {
                let lock = if wait {
                    let waiting = |holder: &str| {
                        progress.notice(Notice::WaitingForWriter {
                            dir: db.dir().to_path_buf(),
                            holder: holder.to_string(),
                        })
                    };
                    DirLock::acquire_waiting(db.dir(), waiting, || progress.keep_waiting())?
                } else {
                    DirLock::acquire(db.dir())?
                };
                let raw_dir = db.raw_dir(rules);
                files::check_dir(&raw_dir)?; // a file at `raw` or `raw/awari`, named as such
                crate::files::create_dirs(&raw_dir)?;
                // Only the tables' temporaries and a distributed build's token
                // ([`agree`]): a census or a verify may be writing its own files
                // in the directory meanwhile. A directory under such a name is
                // an error now, not after the level is solved.
                remove_leftovers_strictly(db.dir(), |name| {
                    name.ends_with(".mdb.tmp") || name.starts_with(RANKS_TOKEN)
                })?;
                remove_leftovers_strictly(&raw_dir, |name| {
                    name.ends_with(".part")
                        || name.ends_with(".tmp")
                        || name.starts_with(RANKS_TOKEN)
                })?;
                // Each level's report is appended to the build log: a log that
                // cannot take it (a link, a named pipe) is an error now too.
                files::check_appendable(&db.log_path())?;
                Some(lock)
            }
            _ => None,
        };
        ex.barrier(); // the directory is ready
        agree(db, rules, &levels, ex)?;
        let threads = ex.sum(rayon::current_num_threads() as u64) as usize;
        // Rank 0 finds what is to be built; every rank weighs its machine's
        // share of it against that machine.
        let top = match ex.rank() {
            0 => highest_to_build(db, rules, &levels)?.map_or(0, |n| n as u64 + 1),
            _ => 0,
        };
        let top = ex.broadcast(top).checked_sub(1).map(|n| n as usize);
        check_memory(
            top,
            ex.ranks(),
            ranks_on_this_machine(ex),
            memory_limit(),
            address_space_limit(),
        )?;
        if ex.rank() == 0 {
            check_lower_levels(db, rules, &levels)?;
            check_places(db, rules, &levels)?;
        }
        progress.notice(Notice::Building {
            rules: rules.name().to_string(),
            levels: level_set_text(&levels),
            dir: db.dir().to_path_buf(),
            ranks: ex.ranks(),
            threads,
        });
        if ex.rank() == 0 {
            warn_if_disk_short(db, rules, &levels, progress)?;
        }
        let budget = db.raw_cache();
        let mut reports = Vec::new();
        let mut stop = false;
        for &seeds in &levels {
            if ex.broadcast(stop.into()) == 1 {
                break;
            }
            // Rank 0 checks (and repairs) what stands; the others wait for its
            // word before they map anything.
            let standing = match ex.rank() {
                0 => existing(db, rules, seeds, progress)?,
                _ => Standing::Absent,
            };
            let skip = ex.broadcast(matches!(standing, Standing::Sound(_)).into()) == 1;
            if skip {
                // Left behind by a run killed after the level was in place.
                let work = db.work_path(rules, seeds, ex.rank());
                let _ = std::fs::remove_dir_all(work.parent().expect("work dir"));
            }
            let report = match standing {
                Standing::Sound(report) => Some(report),
                _ if skip => None,
                standing => {
                    if ex.rank() == 0 {
                        prepare_raw_cache(db, rules, seeds, budget)?;
                    }
                    ex.barrier(); // the raw copies this level reads are in place
                    let cache = (level_size(seeds) / 32).max(64 << 20) as usize;
                    let lower = Lower::open(db, rules, seeds, budget, cache)?;
                    let replaced = match standing {
                        Standing::Damaged(why) => Some(why),
                        _ => None,
                    };
                    build_level(db, rules, seeds, &lower, ex, threads, progress)?
                        .map(|r| LevelReport { replaced, ..r })
                }
            };
            if let Some(report) = report {
                stop = on_level(&report).is_break();
                reports.push(report);
            }
        }
        // Readied for the level after the last one built. A call that built
        // nothing (every level there) leaves the copies as they are: a run that
        // goes on level by level would otherwise write and remove gigabytes of
        // copies at each restart.
        let built = reports.iter().any(|r| !r.skipped);
        if let Some(last) = reports.last().filter(|_| ex.rank() == 0 && built) {
            prepare_raw_cache(db, rules, last.seeds + 2, budget)?;
        }
        // The other ranks wait for it here, idly (MPI's finalize, where they
        // would wait otherwise, polls: a tenth of a core each).
        ex.barrier();
        Ok(reports)
    }
}

/// The levels a build must make for what `missing` says is not there,
/// ascending: a missing level or levels with the levels they read, or
/// (lower levels missing below levels asked for) the levels asked for with
/// the missing ones. `None` for a whole rule set (a plain build makes it)
/// and for published `scores.N` files, which no build makes. Every front
/// end words its remedy from it (`build --levels`, Python's `max_seeds`).
pub fn levels_to_build(missing: &Missing) -> Option<Vec<usize>> {
    let mut levels: Vec<usize> = match missing {
        Missing::Level { seeds, .. } => levels_needed(*seeds),
        Missing::SomeLevels { seeds, .. } => seeds.iter().flat_map(|&s| levels_needed(s)).collect(),
        Missing::Below { absent, asked, .. } => asked.iter().chain(absent).copied().collect(),
        Missing::Levels { .. } | Missing::VuLevel { .. } | Missing::VuLevels { .. } => {
            return None;
        }
    };
    levels.sort_unstable();
    levels.dedup();
    Some(levels)
}

/// The highest of `levels` (increasing) without a table in `db` yet
/// (levels there count as built: a damaged one is rebuilt, and checked
/// then).
fn highest_to_build(db: &Db, rules: Rules, levels: &[usize]) -> Result<Option<usize>> {
    for &n in levels.iter().rev() {
        if !built(db, rules, n)? {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// Says so ([`Notice::DiskShort`]) when the levels of `levels` not built
/// yet may take more disk than `db` has room for ([`DiskRoom`]): the build
/// goes on, as the need is a bound and room may be made meanwhile, and a
/// build stopped by a full disk resumes.
fn warn_if_disk_short(
    db: &Db,
    rules: Rules,
    levels: &[usize],
    progress: Progress<'_>,
) -> Result<()> {
    let mut missing = Vec::new();
    for &n in levels {
        if !built(db, rules, n)? {
            missing.push(n);
        }
    }
    if let Some(room) = DiskRoom::of(db, rules, &missing)
        && room.is_short()
    {
        progress.notice(Notice::DiskShort {
            levels: level_set_text(&missing),
            dir: db.dir().to_path_buf(),
            need: room.need,
            room: room.room,
        });
    }
    Ok(())
}

/// Fails, before anything is solved, unless every level that one of
/// `levels` without a table yet reads is among them or has a sound table
/// in `db` (a level whose table is there but damaged is found so, and
/// rebuilt, only when the build reaches it): the absent ones are named
/// together with the `--levels` that adds them, and each table read is
/// opened (its header, size and block index checked, which catches a
/// truncated or foreign file; the blocks are checked as they are read).
fn check_lower_levels(db: &Db, rules: Rules, levels: &[usize]) -> Result<()> {
    let mut absent: Vec<usize> = Vec::new();
    let mut first_reader: Option<usize> = None;
    let mut opened: Vec<usize> = Vec::new();
    for &n in levels {
        if built(db, rules, n)? {
            continue;
        }
        for k in (0..n).filter(|&k| reads_level(n, k) && !levels.contains(&k)) {
            if !db.has_table(rules, k)? {
                first_reader.get_or_insert(n);
                absent.push(k);
            } else if !opened.contains(&k) {
                db.open(rules, k)?;
                opened.push(k);
            }
        }
    }
    absent.sort_unstable();
    absent.dedup();
    let Some(reader) = first_reader else {
        return Ok(());
    };
    Err(Error::Missing(Missing::Below {
        dir: db.dir().to_path_buf(),
        rules: rules.name(),
        reader,
        absent,
        asked: levels.to_vec(),
    }))
}

/// Whether level `n` of a build has a table already ([`Db::has_table`]);
/// anything but a file in its place is an error naming it (not a level
/// taken as built: the memory check and the levels below would be passed
/// over, and the build would fail only when it reached it).
fn built(db: &Db, rules: Rules, n: usize) -> Result<bool> {
    if !db.has_table(rules, n)? {
        return Ok(false);
    }
    files::check_regular(&db.table_path(rules, n), files::LEVEL_FILE)?;
    Ok(true)
}

/// Fails, before anything is solved, where a level of `levels` without a
/// table yet could not keep what it solves: a file where its work directory
/// goes, a directory where its raw copy goes when the raw cache keeps it.
/// (Its table's place: [`Db::has_table`].)
fn check_places(db: &Db, rules: Rules, levels: &[usize]) -> Result<()> {
    for &n in levels {
        if built(db, rules, n)? {
            continue;
        }
        files::check_dir(files::parent_dir(&db.work_path(rules, n, 0)))?;
        if keeps_raw(n, db.raw_cache()) {
            files::check_replaceable(&db.raw_path(rules, n))?;
        }
    }
    Ok(())
}

/// Solves one level on every rank. Several ranks, or a level whose raw copy
/// is kept, meet in the raw file (each writes its slice at its offset),
/// from which rank 0 writes the table and, if kept, renames the raw file
/// into place; one process alone otherwise writes the table straight from
/// its values in memory. Returns the report on rank 0.
fn build_level(
    db: &Db,
    rules: Rules,
    seeds: usize,
    lower: &Lower,
    ex: &dyn Exchange,
    threads: usize,
    progress: Progress<'_>,
) -> Result<Option<LevelReport>> {
    reset_peak_rss();
    let anon = AnonPeak::start(std::time::Duration::from_millis(20));
    let read_before = disk_read_bytes();
    let start = Instant::now();
    let work = db.work_path(rules, seeds, ex.rank());
    let raw = db.raw_path(rules, seeds);
    let keep_raw = keeps_raw(seeds, db.raw_cache());
    let options = Options {
        lower: table::sha256(&db.lower_content(rules, seeds)?.concat()),
        ..Options::from_env(&work)?
    };
    let part = solve_part_in(rules, seeds, lower, ex, &options, progress)?;
    let partial = raw.with_file_name(format!("scores.{seeds}.part"));
    let positions = level_size(seeds);
    // The ranks meet in the raw file; one process alone writes the table
    // straight from memory, and the raw copy only if it is kept.
    let via_raw = keep_raw || ex.ranks() > 1;
    let guard = (ex.rank() == 0 && via_raw).then(|| RemoveOnDrop::new(partial.clone()));
    if via_raw {
        write_slice(&partial, positions, part.range.start, &part.values)?;
    }
    let exchanged_bytes = ex.sum(part.sent_bytes);
    let rounds = part.rounds;
    let (resumed_at, resumed_forward) = (part.resumed_at, part.resumed_forward);
    let solo_values = (!via_raw).then_some(part.values);
    ex.barrier(); // every slice is written: the `.part` file may be mapped
    let peak_rss = Some(ex.max(peak_rss().unwrap_or(0))).filter(|&b| b > 0);
    let peak_anon = Some(ex.max(anon.finish().unwrap_or(0))).filter(|&b| b > 0);
    let read = read_before.zip(disk_read_bytes()).map(|(a, b)| b - a);
    let read_by_all = ex.sum(read.unwrap_or(0));
    let disk_read = read.map(|_| read_by_all);
    let report = if ex.rank() == 0 {
        let path = db.table_path(rules, seeds);
        let id = Db::table_id(rules, seeds);
        match &solo_values {
            Some(values) => table::write_table(&path, id, values)?,
            None => table::write_table(&path, id, table::as_values(&map_raw(&partial)?))?,
        };
        let file_bytes = std::fs::metadata(&path)
            .map_err(|e| Error::io(&path, e))?
            .len();
        let report = LevelReport {
            seeds,
            positions,
            skipped: false,
            seconds: start.elapsed().as_secs_f64(),
            peak_rss,
            peak_anon,
            disk_read,
            resumed_at,
            resumed_forward,
            replaced: None,
            file_bytes,
            ranks: ex.ranks(),
            threads,
            exchanged_bytes,
            rounds,
        };
        // Logged as soon as the table is in place: a run stopped after it
        // skips the level, and could not log it any more.
        log_build(db, rules, &report)?;
        // Without keep_raw, dropping the guard removes the raw file.
        if let Some(g) = guard
            && keep_raw
        {
            std::fs::rename(&partial, &raw).map_err(|e| Error::io(&raw, e))?;
            g.keep();
        }
        Some(report)
    } else {
        None
    };
    ex.barrier(); // the level's files are in place
    let _ = std::fs::remove_dir_all(work.parent().expect("work dir"));
    Ok(report)
}

/// What stands of a level before it is built.
enum Standing {
    /// A sound table: the level is skipped, with this report.
    Sound(LevelReport),
    /// No table.
    Absent,
    /// A corrupt table, to be rebuilt: what is wrong with it.
    Damaged(String),
}

/// Whether level `seeds` is already built and sound. A corrupt table is
/// said at once (the level is rebuilt, and its report says what it
/// replaced); one that cannot be read (a directory in its place, no
/// permission) is an error before any solving, since its table could not
/// be written either. (Its raw copy is the raw cache's business:
/// [`prepare_raw_cache`].)
fn existing(db: &Db, rules: Rules, seeds: usize, progress: Progress<'_>) -> Result<Standing> {
    if !db.has_table(rules, seeds)? {
        return Ok(Standing::Absent);
    }
    let table = match db.open(rules, seeds).and_then(|t| t.verify().map(|_| t)) {
        Ok(t) => t,
        Err(e @ Error::Corrupt { .. }) => {
            progress.notice(Notice::Rebuilding {
                seeds,
                why: e.to_string(),
            });
            return Ok(Standing::Damaged(e.to_string()));
        }
        Err(e) => return Err(e),
    };
    Ok(Standing::Sound(LevelReport {
        seeds,
        positions: table.header().positions,
        skipped: true,
        seconds: 0.0,
        peak_rss: None,
        peak_anon: None,
        disk_read: None,
        resumed_at: None,
        resumed_forward: None,
        replaced: None,
        file_bytes: table.file_len(),
        ranks: 1,
        threads: 0,
        exchanged_bytes: 0,
        rounds: 0,
    }))
}

/// Appends `rules level positions seconds threads ranks exchanged-bytes
/// rounds peak-anon-bytes disk-read-bytes resumed` to the build log (0
/// where not known; `threads` of all ranks together; `resumed` 1 when the
/// level continued from a checkpoint, so that `seconds` is this run's part
/// only: [`Db::measured_rate`] passes over such lines).
fn log_build(db: &Db, rules: Rules, r: &LevelReport) -> Result<()> {
    let line = format!(
        "{rules}\t{}\t{}\t{:.3}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
        r.seeds,
        r.positions,
        r.seconds,
        r.threads,
        r.ranks,
        r.exchanged_bytes,
        r.rounds,
        r.peak_anon.unwrap_or(0),
        r.disk_read.unwrap_or(0),
        u8::from(r.resumed_at.is_some() || r.resumed_forward.is_some())
    );
    crate::files::append_lines(&db.log_path(), line.as_bytes())
}

/// Writes `values`, the slice of a level starting at index `start`, into
/// the raw file `path` of `positions` bytes, beside the other ranks' slices.
fn write_slice(path: &Path, positions: u64, start: u64, values: &[i8]) -> Result<()> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let result = (|| {
        // Not through a link: it would carry the level to another file.
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        // Every rank sets the same length, so none cuts another's slice.
        f.set_len(positions)?;
        f.write_all_at(table::as_bytes(values), start)?;
        f.sync_all()
    })();
    result.map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a build must make: a level with those it reads, several with
    /// all they read, or the levels asked for with the lower ones missing;
    /// nothing a build makes for a rule set or published files.
    #[test]
    fn levels_to_build_are_those_the_missing_ones_need() {
        let dir = std::path::PathBuf::from("db");
        let rules = "awari";
        let level = |seeds| Missing::Level {
            dir: dir.clone(),
            rules,
            seeds,
        };
        assert_eq!(levels_to_build(&level(12)), Some(levels_needed(12)));
        let some = Missing::SomeLevels {
            dir: dir.clone(),
            rules,
            seeds: vec![9, 5],
        };
        let mut both = [levels_needed(5), levels_needed(9)].concat();
        both.sort_unstable();
        both.dedup();
        assert_eq!(levels_to_build(&some), Some(both));
        let below = Missing::Below {
            dir: dir.clone(),
            rules,
            reader: 20,
            absent: vec![3, 4],
            asked: vec![20, 21],
        };
        assert_eq!(levels_to_build(&below), Some(vec![3, 4, 20, 21]));
        assert_eq!(levels_to_build(&Missing::Levels { dir, rules }), None);
    }

    #[test]
    fn a_level_larger_than_the_machine_is_refused_before_anything_is_built() {
        let dir = std::env::temp_dir().join(format!("mancaladb-memory-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = Db::new(&dir);
        let levels: Vec<usize> = (0..=36).collect();
        let gb = |g: u64| {
            Some(MemoryLimit {
                bytes: g * 1_000_000_000,
                set_by: SetBy::Machine,
            })
        };
        let top = highest_to_build(&db, Rules::Awari, &levels).unwrap();
        assert_eq!(top, Some(36));
        // Level 36 takes 1.25 x 14.26 G bytes = 17.8 GB; level 33 (8.08 GB)
        // is the largest under 10 GB.
        let err = check_memory(top, 1, 1, gb(10), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("level 36 needs about 17.8 GB of working memory (1.25 bytes per position) and this machine has 10.0 GB: levels up to 33 fit here; build level 36 on a larger machine"),
            "{err}"
        );
        // Two ranks on two machines hold half each there, with their
        // messages (1.6 x 14.26 G / 2 = 11.4 GB); a machine that says
        // nothing is trusted.
        assert!(check_memory(top, 2, 1, gb(12), None).is_ok());
        assert!(check_memory(top, 2, 1, gb(11), None).is_err());
        assert!(check_memory(top, 1, 1, gb(18), None).is_ok());
        assert!(check_memory(top, 1, 1, None, None).is_ok());
        // Ranks on one machine hold their shares together: 3 of 4 hold
        // 17.1 GB, too much for 15 GB, where 2 of 4 (11.4 GB) fit.
        let err = check_memory(top, 4, 3, gb(15), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("level 36 needs about 22.8 GB of working memory (1.6 bytes per position), 17.1 GB of it on this machine (3 of 4 ranks), and this machine has 15.0 GB: levels up to 35 fit here;"),
            "{err}"
        );
        assert!(check_memory(top, 4, 2, gb(15), None).is_ok());
        // A level already there is not built again: the next one down counts.
        std::fs::write(db.table_path(Rules::Awari, 36), b"").unwrap();
        let top = highest_to_build(&db, Rules::Awari, &levels).unwrap();
        assert_eq!(top, Some(35));
        let err = check_memory(top, 1, 1, gb(10), None)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("level 35 needs about 13.8 GB"), "{err}");
        assert_eq!(check_memory(None, 1, 1, gb(1), None).ok(), Some(()));
        // A control group's limit below the machine's memory says so.
        let cgroup = MemoryLimit {
            bytes: 4_000_000_000,
            set_by: SetBy::ControlGroup,
        };
        let err = check_memory(top, 1, 1, Some(cgroup), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("(1.25 bytes per position) and this process's control group allows 4.0 GB: levels up to 30 fit here; build level 35 under a higher memory limit or"),
            "{err}"
        );
        // The process's own address-space limit holds its own share (half
        // of 1.6 x 11.04 G bytes = 17.7 GB with two ranks, both on this
        // machine), and names no level that would fit under it: the mapped
        // levels count there too.
        let gb4 = Some(4_000_000_000);
        let err = check_memory(top, 1, 1, gb(64), gb4)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "level 35 needs about 13.8 GB of working memory (1.25 bytes per position) and this process's address-space limit (ulimit -v or -d) is 4.0 GB, which the mapped lower levels and the threads' stacks share too: lift the limit, or raise it well above that"
        );
        assert!(check_memory(top, 2, 2, gb(64), Some(9_000_000_000)).is_ok());
        let err = check_memory(top, 2, 2, gb(64), Some(8_000_000_000))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("(1.6 bytes per position), 8.8 GB of it in each rank's process, and this process's address-space limit (ulimit -v or -d) is 8.0 GB"),
            "{err}"
        );
        // Small levels and limits in MB, not "0.0 GB".
        let err = check_memory(Some(18), 1, 1, gb(64), Some(41_000_000))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("level 18 needs about 41.6 MB of working memory (1.25 bytes per position) and this process's address-space limit (ulimit -v or -d) is 41.0 MB,"),
            "{err}"
        );
        let small = MemoryLimit {
            bytes: 30_000_000,
            set_by: SetBy::ControlGroup,
        };
        let err = check_memory(Some(18), 1, 1, Some(small), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "and this process's control group allows 30.0 MB: levels up to 17 fit here"
            ),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A build warns before it solves when the levels it has still to
    /// build may take more disk than there is room for, naming them and
    /// the directory; levels that fit, or that are built already, pass in
    /// silence.
    #[test]
    fn a_build_short_of_disk_says_so_and_one_with_room_does_not() {
        use std::sync::Mutex;
        struct Told(Mutex<Vec<Notice>>);
        impl crate::progress::Observer for Told {
            fn stage(
                &self,
                _label: &str,
                _total: u64,
            ) -> Option<Box<dyn crate::progress::StageSink + '_>> {
                None
            }
            fn notice(&self, notice: &Notice) {
                self.0.lock().unwrap().push(notice.clone());
            }
        }
        let dir = files::scratch_dir("build", "disk-short");
        let db = Db::new(&dir);
        let told = Told(Mutex::new(Vec::new()));
        let warn = |levels: &[usize]| {
            warn_if_disk_short(&db, Rules::Awari, levels, Progress::to(&told)).unwrap();
            std::mem::take(&mut *told.0.lock().unwrap())
        };
        // Levels 0..=10 take a few MB; a level past the game, all there is.
        assert_eq!(warn(&[0, 1, 2, 10]), []);
        let notices = warn(&[0, 1, 1_000]);
        let [
            Notice::DiskShort {
                levels,
                dir: named,
                need,
                room,
            },
        ] = &notices[..]
        else {
            panic!("{notices:?}");
        };
        assert_eq!((levels.as_str(), named), ("0..1,1000", &dir));
        assert_eq!(*need, u64::MAX);
        assert!(*room < u64::MAX, "{room}");
        // Built levels count for nothing.
        std::fs::write(db.table_path(Rules::Awari, 0), b"").unwrap();
        let built = warn(&[0, 1_000]);
        assert!(
            matches!(&built[..], [Notice::DiskShort { levels, .. }] if levels == "1000"),
            "{built:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An observer that keeps the notices it hears and gives up any wait
    /// for another writer at once.
    #[derive(Default)]
    struct Heard(std::sync::Mutex<Vec<Notice>>);

    impl crate::progress::Observer for Heard {
        fn stage(&self, _: &str, _: u64) -> Option<Box<dyn crate::progress::StageSink + '_>> {
            None
        }
        fn notice(&self, notice: &Notice) {
            self.0.lock().unwrap().push(notice.clone());
        }
        fn keep_waiting(&self) -> bool {
            false
        }
    }

    impl Heard {
        fn take(&self) -> Vec<Notice> {
            std::mem::take(&mut *self.0.lock().unwrap())
        }
    }

    /// Each level solved gets its report and one build-log line with the
    /// report's figures (one process, no exchange, not resumed); a level
    /// already built is reported as skipped and logs nothing.
    #[test]
    fn each_level_solved_is_reported_and_logged_once() {
        let dir = files::scratch_dir("build", "logged");
        let db = Db::new(&dir);
        let reports = Build::new(&db, Rules::Awari, 0..=4).run().unwrap();
        let seeds: Vec<usize> = reports.iter().map(|r| r.seeds).collect();
        assert_eq!(seeds, [0, 1, 2, 3, 4]);
        for r in &reports {
            let table = db.table_path(Rules::Awari, r.seeds);
            assert!(!r.skipped, "level {}", r.seeds);
            assert_eq!(r.positions, level_size(r.seeds));
            assert_eq!(r.file_bytes, std::fs::metadata(&table).unwrap().len());
            assert_eq!((r.ranks, r.threads), (1, rayon::current_num_threads()));
            assert_eq!((r.exchanged_bytes, r.replaced.as_deref()), (0, None));
            // Linux tells both peaks, and a process never holds 0 bytes.
            assert!(r.peak_rss.is_some_and(|b| b > 0), "{r:?}");
            assert!(r.peak_anon.is_some_and(|b| b > 0), "{r:?}");
        }
        let log = std::fs::read_to_string(db.log_path()).unwrap();
        let lines: Vec<Vec<&str>> = log.lines().map(|l| l.split('\t').collect()).collect();
        assert_eq!(lines.len(), 5, "{log}");
        for (line, r) in lines.iter().zip(&reports) {
            let (seeds, positions, threads) = (
                r.seeds.to_string(),
                r.positions.to_string(),
                r.threads.to_string(),
            );
            let rounds = r.rounds.to_string();
            assert_eq!(
                [
                    line[0], line[1], line[2], line[4], line[5], line[6], line[7], line[10]
                ],
                [
                    "awari", &seeds, &positions, &threads, "1", "0", &rounds, "0"
                ],
                "{log}"
            );
            assert_eq!(line[8], r.peak_anon.unwrap().to_string(), "{log}");
        }
        // Built already: reported as such, and the log is as it was.
        let again = Build::new(&db, Rules::Awari, 0..=4).run().unwrap();
        let skipped: Vec<(usize, bool, u64)> = again
            .iter()
            .map(|r| (r.seeds, r.skipped, r.file_bytes))
            .collect();
        let first: Vec<(usize, bool, u64)> = reports
            .iter()
            .map(|r| (r.seeds, true, r.file_bytes))
            .collect();
        assert_eq!(skipped, first);
        assert_eq!(std::fs::read_to_string(db.log_path()).unwrap(), log);
        // A damaged table is rebuilt, and its report says what it replaced.
        let three = db.table_path(Rules::Awari, 3);
        let mut bytes = std::fs::read(&three).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&three, &bytes).unwrap();
        let repaired = Build::new(&db, Rules::Awari, 0..=4).run().unwrap();
        let replaced: Vec<(usize, bool, bool)> = repaired
            .iter()
            .map(|r| {
                let why = r.replaced.as_deref().unwrap_or("");
                (
                    r.seeds,
                    r.skipped,
                    why.contains("awari-03.mdb: corrupt table"),
                )
            })
            .collect();
        assert_eq!(
            replaced,
            [
                (0, true, false),
                (1, true, false),
                (2, true, false),
                (3, false, true),
                (4, true, false)
            ],
            "{repaired:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A build removes what a killed build left (tables' temporaries and a
    /// distributed build's token in the directory; partial raw files,
    /// temporaries and the token in `raw/<rules>/`), and only that.
    #[test]
    fn a_build_removes_a_killed_builds_leftovers_and_nothing_else() {
        let dir = files::scratch_dir("build", "leftovers");
        let db = Db::new(&dir);
        let raw = db.raw_dir(Rules::Awari);
        std::fs::create_dir_all(&raw).unwrap();
        let gone = [
            dir.join("awari-01.mdb.tmp"),
            dir.join(RANKS_TOKEN),
            raw.join("scores.1.part"),
            raw.join("scores.1.tmp"),
            raw.join(format!("{RANKS_TOKEN}.1")),
        ];
        let kept = [dir.join("census.jsonl.tmp"), raw.join("notes.txt")];
        for path in gone.iter().chain(&kept) {
            std::fs::write(path, b"left").unwrap();
        }
        Build::new(&db, Rules::Awari, 0..=1).run().unwrap();
        for path in &gone {
            assert!(!path.exists(), "{} was left", path.display());
        }
        for path in &kept {
            assert!(path.exists(), "{} was removed", path.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// With `wait_for_writer(true)` a build whose directory another writer
    /// holds says so (naming the holder) before it gives up as its observer
    /// says; without it, it fails at once and says nothing.
    #[test]
    fn a_build_told_to_wait_for_the_writer_says_whom_it_waits_for() {
        let dir = files::scratch_dir("build", "wait");
        let db = Db::new(&dir);
        let _held = DirLock::acquire(&dir).unwrap();
        let heard = Heard::default();
        let run = |wait| {
            Build::new(&db, Rules::Awari, 0..=1)
                .progress(Progress::to(&heard))
                .wait_for_writer(wait)
                .run()
        };
        assert!(matches!(run(false), Err(Error::Locked { .. })));
        assert!(heard.take().is_empty());
        assert!(matches!(run(true), Err(Error::Locked { .. })));
        let notices = heard.take();
        let me = format!("process {} (", std::process::id());
        assert!(
            matches!(&notices[..], [Notice::WaitingForWriter { dir: named, holder }]
                if named == &dir && holder.starts_with(&me)),
            "{notices:?}"
        );
        assert!(!db.table_path(Rules::Awari, 0).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A lower level the build reads is opened before anything is solved
    /// (a table cut short is refused before the build says it starts), and
    /// so is a level's work directory checked: a file in its place fails
    /// the build before the levels below it are solved.
    #[test]
    fn what_a_build_reads_and_writes_is_checked_before_it_starts() {
        let first = files::scratch_dir("build", "checked-first");
        let db = Db::new(&first);
        Build::new(&db, Rules::Awari, 0..=2).run().unwrap();
        // Level 4 reads levels 0..=2 (not 3).
        let two = db.table_path(Rules::Awari, 2);
        std::fs::write(&two, &std::fs::read(&two).unwrap()[..20]).unwrap();
        let heard = Heard::default();
        let err = Build::new(&db, Rules::Awari, [4])
            .progress(Progress::to(&heard))
            .run()
            .unwrap_err();
        assert!(err.to_string().contains("awari-02.mdb"), "{err}");
        assert_eq!(heard.take().len(), 0, "the build started");
        assert!(!db.table_path(Rules::Awari, 4).exists());

        let dir = files::scratch_dir("build", "work-place");
        let db = Db::new(&dir);
        let raw = db.raw_dir(Rules::Awari);
        std::fs::create_dir_all(&raw).unwrap();
        let work = files::parent_dir(&db.work_path(Rules::Awari, 2, 0)).to_path_buf();
        std::fs::write(&work, b"in the way").unwrap();
        let err = Build::new(&db, Rules::Awari, 0..=2).run().unwrap_err();
        assert!(err.to_string().contains("scores.2.work"), "{err}");
        assert!(
            !db.table_path(Rules::Awari, 0).exists(),
            "level 0 was built"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&first).unwrap();
    }

    /// A level larger than the machine is refused before anything is made:
    /// a directory not there yet is not created (its memory is weighed
    /// before the lock), and in one that is there the level named is the
    /// highest one asked for.
    #[test]
    fn a_level_beyond_the_machine_is_refused_by_name_and_makes_nothing() {
        let need = WORKING_BYTES_PER_POSITION * level_size(48) as f64;
        if memory_limit().is_none_or(|limit| need <= limit.bytes as f64) {
            return; // A machine this size would pass on to the levels below.
        }
        let there = files::scratch_dir("build", "beyond-memory");
        let fresh = there.join("fresh");
        for dir in [&fresh, &there] {
            let err = Build::new(&Db::new(dir), Rules::Awari, [0, 48])
                .run()
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("level 48 needs about"), "{err}");
            assert!(!Db::new(dir).table_path(Rules::Awari, 0).exists());
        }
        assert!(!fresh.exists(), "the directory was made");
        std::fs::remove_dir_all(&there).unwrap();
    }
}
