//! Building a table directory level by level, resuming where a build
//! stopped. The solving itself is [`crate::oware::solve`]; this module
//! decides what stands, writes each level's files (by rename, only once
//! every rank has finished it) and reports.

use std::ops::ControlFlow;
use std::path::Path;
use std::time::Instant;

use memmap2::Mmap;
use serde::Serialize;

use crate::db::{Db, map_raw, write_raw};
use crate::error::{Error, Result};
use crate::exchange::Exchange;
use crate::oware::{MAX_SEEDS, Rules, level_size, solve::solve_part};
use crate::progress::Progress;
use crate::table;

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
    /// Size of the table file.
    pub file_bytes: u64,
    /// Processes that built it (1 unless distributed).
    pub ranks: usize,
    /// Bytes the ranks sent each other while solving it.
    pub exchanged_bytes: u64,
    /// Propagation rounds (each one exchange between the ranks).
    pub rounds: u64,
}

/// Builds levels `0..=max_seeds` of `rules` into `db`, skipping levels whose
/// table is present and passes its checksum, so an interrupted build resumes.
///
/// Every rank of `ex` calls this with the same arguments; each solves its
/// slice of every level, and rank 0 alone decides what stands and writes
/// the tables. A level's files appear (by rename) only once every rank has
/// finished it. `on_level` is called on rank 0 as each level is done, and
/// only rank 0 returns the reports.
pub fn build(
    db: &Db,
    rules: Rules,
    max_seeds: usize,
    ex: &dyn Exchange,
    progress: Progress,
    mut on_level: impl FnMut(&LevelReport),
) -> Result<Vec<LevelReport>> {
    build_until(db, rules, max_seeds, ex, progress, |r| {
        on_level(r);
        ControlFlow::Continue(())
    })
}

/// [`build`], where `on_level` may stop the build after a level by
/// returning [`ControlFlow::Break`] (an interrupt, a caller's error): the
/// levels done stay complete and the reports of those levels are returned.
/// In a distributed build rank 0's word reaches every rank before the
/// next level.
pub fn build_until(
    db: &Db,
    rules: Rules,
    max_seeds: usize,
    ex: &dyn Exchange,
    progress: Progress,
    mut on_level: impl FnMut(&LevelReport) -> ControlFlow<()>,
) -> Result<Vec<LevelReport>> {
    if max_seeds > MAX_SEEDS {
        return Err(Error::Invalid(format!(
            "level {max_seeds}: an Oware game has {MAX_SEEDS} seeds"
        )));
    }
    let ranks = match ex.ranks() {
        1 => String::new(),
        p => format!("{p} ranks x "),
    };
    progress.line(&format!(
        "building {rules} levels 0..={max_seeds} in {} with {ranks}{} threads",
        db.dir().display(),
        rayon::current_num_threads()
    ));
    let raw_dir = db.raw_dir(rules);
    std::fs::create_dir_all(&raw_dir).map_err(|e| Error::io(&raw_dir, e))?;
    let mut lower: Vec<Mmap> = Vec::with_capacity(max_seeds + 1);
    let mut reports = Vec::new();
    let mut stop = false;
    for seeds in 0..=max_seeds {
        if ex.broadcast(stop.into()) == 1 {
            break;
        }
        // Rank 0 checks (and repairs) what stands; the others wait for its
        // word before they map anything.
        let existing = match ex.rank() {
            0 => existing(db, rules, seeds, progress)?,
            _ => None,
        };
        let skip = ex.broadcast(existing.is_some().into()) == 1;
        let report = match existing {
            Some(report) => Some(report),
            None if skip => None,
            None => {
                let slices: Vec<&[i8]> = lower.iter().map(|m| table::as_values(m)).collect();
                build_level(db, rules, seeds, &slices, ex, progress)?
            }
        };
        lower.push(map_raw(&db.raw_path(rules, seeds))?);
        if let Some(report) = report {
            if !report.skipped {
                log_build(db, rules, &report)?;
            }
            stop = on_level(&report).is_break();
            reports.push(report);
        }
    }
    Ok(reports)
}

/// Solves one level on every rank: each writes its slice of the raw file at
/// its offset, then rank 0 writes the table and renames the raw file into
/// place. Returns the report on rank 0.
fn build_level(
    db: &Db,
    rules: Rules,
    seeds: usize,
    lower: &[&[i8]],
    ex: &dyn Exchange,
    progress: Progress,
) -> Result<Option<LevelReport>> {
    reset_peak_rss();
    let start = Instant::now();
    let part = solve_part(rules, seeds, lower, ex, progress);
    let raw = db.raw_path(rules, seeds);
    let partial = raw.with_file_name(format!("scores.{seeds}.part"));
    let positions = level_size(seeds);
    write_slice(&partial, positions, part.range.start, &part.values)?;
    let exchanged_bytes = ex.sum(part.sent_bytes);
    let rounds = part.rounds;
    drop(part);
    ex.barrier(); // every slice is written
    let peak_rss = Some(ex.max(peak_rss().unwrap_or(0))).filter(|&b| b > 0);
    let report = if ex.rank() == 0 {
        let path = db.table_path(rules, seeds);
        table::write_table(
            &path,
            Db::table_id(rules, seeds),
            table::as_values(&map_raw(&partial)?),
        )?;
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
            file_bytes,
            ranks: ex.ranks(),
            exchanged_bytes,
            rounds,
        })
    } else {
        None
    };
    ex.barrier(); // the level's files are in place
    Ok(report)
}

/// If level `seeds` is already built and sound, makes sure its raw copy is
/// too and reports it; `None` if it must be built. A corrupt table is
/// reported and rebuilt.
fn existing(
    db: &Db,
    rules: Rules,
    seeds: usize,
    progress: Progress,
) -> Result<Option<LevelReport>> {
    if !db.table_path(rules, seeds).exists() {
        return Ok(None);
    }
    let table = match db.open(rules, seeds).and_then(|t| t.verify().map(|_| t)) {
        Ok(t) => t,
        Err(e) => {
            progress.line(&format!("{e}; rebuilding level {seeds}"));
            return Ok(None);
        }
    };
    if db.raw_copy(rules, seeds, &table).is_none() {
        write_raw(&db.raw_path(rules, seeds), &table.read_all()?)?;
    }
    Ok(Some(LevelReport {
        seeds,
        positions: table.header().positions,
        skipped: true,
        seconds: 0.0,
        peak_rss: None,
        file_bytes: table.file_len(),
        ranks: 1,
        exchanged_bytes: 0,
        rounds: 0,
    }))
}

/// Appends `rules level positions seconds threads ranks exchanged-bytes
/// rounds` to the build log.
fn log_build(db: &Db, rules: Rules, r: &LevelReport) -> Result<()> {
    use std::io::Write;
    let path = db.log_path();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    writeln!(
        f,
        "{rules}\t{}\t{}\t{:.3}\t{}\t{}\t{}\t{}",
        r.seeds,
        r.positions,
        r.seconds,
        rayon::current_num_threads(),
        r.ranks,
        r.exchanged_bytes,
        r.rounds
    )
    .map_err(|e| Error::io(&path, e))
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

/// Resets the kernel's peak-RSS mark of this process (Linux; else no-op).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process since the last reset, in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
