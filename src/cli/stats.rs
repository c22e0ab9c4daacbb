//! `stats`: the distribution of values, level by level.

use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::stats::LevelStats;

use super::args::Reading;
use super::output::{self, out};

/// Options of `stats`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    read: Reading,
    /// Print a JSON list, one object per level: seeds, positions, mean,
    /// wins, draws, losses, the histogram (`histogram[i]` counts value
    /// `i - seeds`) and content_sha256 (of the values in the VU layout, as
    /// db/CHECKSUMS lists it).
    #[arg(long)]
    json: bool,
}

/// Counts every level present.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    let (_, source) = a.read.open()?;
    let levels = source.present()?;
    if a.json {
        let all = levels
            .iter()
            .map(|&n| LevelStats::of_source(&source, n))
            .collect::<Result<Vec<_>, _>>()?;
        output::json(&all)?;
        return Ok(ExitCode::SUCCESS);
    }
    out!(
        "{:>5} {:>14} {:>9} {:>14}  histogram (value:count)",
        "seeds",
        "positions",
        "mean",
        "zero"
    );
    for n in levels {
        let s = LevelStats::of_source(&source, n)?;
        let hist: Vec<String> = (-(n as i32)..=n as i32)
            .filter(|&v| s.count(v) > 0)
            .map(|v| format!("{v}:{}", s.count(v)))
            .collect();
        out!(
            "{n:>5} {:>14} {:>9.4} {:>14}  {}",
            s.positions,
            s.mean(),
            s.count(0),
            hist.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
