//! `census`: looping configurations of K seeds on one Omweso side.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mancaladb::Error;
use mancaladb::error::level_set_text;
use mancaladb::omweso::census::{self, Options, Row, atlas, store};
use mancaladb::progress::{Progress, Terminal, WARNING};

use super::args;
use super::output::{diag, human_seconds, out};

/// Estimated time above which a run is refused without `--force`.
const LIMIT_SECS: f64 = 24.0 * 3600.0;

/// Options of `census`.
#[derive(clap::Args)]
pub struct Args {
    /// Seed count K or range K..K2.
    #[arg(long, value_parser = seed_counts, allow_hyphen_values = true)]
    seeds: RangeInclusive<usize>,
    /// Print a JSON list.
    #[arg(long)]
    json: bool,
    /// Also write the JSON list to this file (not one of --db's own).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the cycle atlas to this file (not one of --db's own): every relay
    /// cycle of the rows, up to rotation, one JSON line each.
    #[arg(long)]
    cycles: Option<PathBuf>,
    /// Directory of the resumable results file (omweso-census.jsonl), the
    /// checkpoints of a row in progress and the cycles of finished rows.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Most laps to follow per start before counting it undecided.
    #[arg(long, default_value_t = 1_000_000_000, value_parser = args::lap_budget, allow_negative_numbers = true)]
    max_laps: u64,
    /// Seconds between two checkpoints inside a row (0: after every batch
    /// of 4 M configurations).
    #[arg(long, default_value = "60", value_parser = seconds, allow_negative_numbers = true)]
    checkpoint_secs: Duration,
    /// Run even if the estimate is more than a day.
    #[arg(long)]
    force: bool,
}

/// Checks the lists' paths, then prints what the run will walk and how
/// long it should take, refusing it beyond [`LIMIT_SECS`] without `--force`.
fn check_and_announce(a: &Args) -> Result<(), Error> {
    let lists: Vec<&std::path::Path> = a.out.iter().chain(&a.cycles).map(|p| p.as_path()).collect();
    store::check_list_paths(&lists, &a.db)?;
    let plan = census::plan(&a.db, a.seeds.clone(), a.max_laps, a.cycles.is_some())?;
    if plan.rows.is_empty() {
        return Ok(());
    }
    let text = format!(
        "census: {} start-0 configurations to walk for k = {} (16 times as many pairs), about {} at {:.1} M/s measured here",
        plan.configurations,
        level_set_text(&plan.rows),
        human_seconds(plan.seconds),
        plan.rate / 1e6
    );
    if plan.seconds > LIMIT_SECS && !a.force {
        return Err(Error::Invalid(format!(
            "{text}: more than {}; add --force to run it anyway",
            human_seconds(LIMIT_SECS)
        )));
    }
    diag(format_args!("{text}"));
    Ok(())
}

fn seed_counts(text: &str) -> Result<RangeInclusive<usize>, String> {
    args::range(text, mancaladb::omweso::MAX_SEEDS, "seed counts")
}

fn seconds(text: &str) -> Result<Duration, String> {
    let s: f64 = text
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| *s >= 0.0)
        .ok_or("must be a number of seconds, 0 or more")?;
    Duration::try_from_secs_f64(s)
        .map_err(|_| format!("{} seconds is more than can be waited", text.trim()))
}

/// Counts the rows asked for, resuming from saved rows and checkpoints.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    // Every destination is checked before anything is computed, the census
    // lock taken first (a directory another census holds is refused before
    // its estimate is sampled); a run refused leaves no directory it made.
    // The census lock is held until the atlas, which may compute and
    // write cycles files, is written too.
    let held = census::Census::open(&a.db)?;
    if let Err(e) = check_and_announce(&a) {
        held.abandon();
        return Err(e);
    }
    let opt = Options {
        budget: a.max_laps,
        checkpoint_every: a.checkpoint_secs,
        progress: Progress::to(&Terminal),
    };
    let outcome = held.run(a.seeds.clone(), opt)?;
    let rows = &outcome.rows;
    if a.json {
        out!("{}", store::list(rows));
    } else {
        print(rows);
    }
    // The rows are printed whatever happens to the files below.
    // Saving stops at the first row that fails: the rows before it are
    // saved, and those after it not computed.
    let mut failed = outcome.save_error.map(|e| {
        let lost = rows.last().map_or(0, |r| r.seeds);
        let rest = match lost < *a.seeds.end() {
            true => format!("; k = {}..={} not computed", lost + 1, a.seeds.end()),
            false => String::new(),
        };
        Error::Invalid(format!(
            "{e}: row k = {lost} was computed (printed above) but not saved{rest}"
        ))
    });
    if let Some(path) = &a.out
        && let Err(e) = store::write_list(path, rows)
    {
        failed.get_or_insert(e);
    }
    if failed.is_none()
        && let Some(path) = &a.cycles
    {
        let entries = held.atlas(a.seeds.clone(), opt)?;
        atlas::write(path, &entries)?;
        diag(format_args!(
            "wrote {} cycles to {}",
            entries.len(),
            path.display()
        ));
        // The atlas proves itself whole only for rows with nothing
        // undecided: a cycle among the undecided pairs is not in it.
        for r in rows.iter().filter(|r| r.undecided > 0) {
            diag(format_args!(
                "{WARNING}k = {} left {} pairs undecided within --max-laps {}: \
                 its cycles in {} are those found, perhaps not all",
                r.seeds,
                r.undecided,
                a.max_laps,
                path.display()
            ));
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}

fn print(rows: &[Row]) {
    out!(
        "{:>5} {:>14} {:>14} {:>10} {:>9} {:>7} {:>6} {:>13} {:>8}",
        "seeds",
        "configs",
        "legal_pairs",
        "loop_pairs",
        "cfg_any",
        "cfg_all",
        "cycles",
        "periods",
        "longest"
    );
    for r in rows {
        let periods = r
            .period
            .map_or("-".to_string(), |(a, b)| format!("{a}..{b}"));
        out!(
            "{:>5} {:>14} {:>14} {:>10} {:>9} {:>7} {:>6} {:>13} {:>8}{}",
            r.seeds,
            r.configs,
            r.legal_pairs,
            r.loop_pairs,
            r.cfg_any,
            r.cfg_all,
            r.cycles,
            periods,
            r.longest_finite,
            if r.undecided > 0 {
                format!("  ({} undecided)", r.undecided)
            } else {
                String::new()
            }
        );
    }
}
