//! `census`: looping configurations of K seeds on one Omweso side.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::omweso::census::{Row, run_resumable};
use mancaladb::progress::Progress;

use super::args;
use super::output::out;

/// Options of `census`.
#[derive(clap::Args)]
pub struct Args {
    /// Seed count K or range K..K2.
    #[arg(long, value_parser = seed_counts)]
    seeds: RangeInclusive<usize>,
    /// Print a JSON list.
    #[arg(long)]
    json: bool,
    /// Also write the JSON list to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Directory of the resumable results file (omweso-census.jsonl).
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Most laps to follow per cycle before counting a start undecided.
    #[arg(long, default_value_t = 1_000_000_000)]
    max_laps: u64,
}

fn seed_counts(text: &str) -> Result<RangeInclusive<usize>, String> {
    args::range(text, mancaladb::omweso::MAX_SEEDS, "seed counts")
}

/// Counts the rows asked for, resuming from saved rows.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    let rows = run_resumable(&a.db, a.seeds, a.max_laps, Progress::Auto)?;
    let list = format!(
        "[{}]",
        rows.iter()
            .map(|r| r.to_json())
            .collect::<Vec<_>>()
            .join(",\n")
    );
    if let Some(path) = &a.out {
        std::fs::write(path, format!("{list}\n")).map_err(|e| Error::io(path, e))?;
    }
    if a.json {
        out!("{list}");
    } else {
        print(&rows);
    }
    Ok(ExitCode::SUCCESS)
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
