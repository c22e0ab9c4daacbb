//! `verify`: the three checks, level by level; the exit code is the verdict.

use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::progress::{Progress, Terminal, positions_differ};
use mancaladb::source::Source;
use mancaladb::verify::{Checks, LevelCheck, Outcome, verify};

use super::args::{self, Levels, Reading};
use super::output::{self, out};

/// Options of `verify`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    read: Reading,
    #[command(flatten)]
    levels: Levels,
    /// Integrity only (headers, checksums, sizes): `--checks 1`.
    #[arg(long, conflicts_with = "checks")]
    quick: bool,
    /// Run checks 1..=N only: 1 integrity, 2 consistency, 3 re-derivation
    /// (default). A level is recorded as verified only after all three.
    #[arg(long, value_name = "N", value_parser = args::checks, allow_negative_numbers = true)]
    checks: Option<Checks>,
    /// Print a JSON list, one object per level.
    #[arg(long)]
    json: bool,
}

/// Checks the levels asked for: exit 0 if all pass, 1 on any failure.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    let (rules, source) = a.read.open()?;
    let levels = match a.levels.asked() {
        Some(levels) => levels,
        None => source.present()?,
    };
    let json = a.json;
    let depth = match a.quick {
        true => Checks::Integrity,
        false => a.checks.unwrap_or(Checks::All),
    };
    // The levels checked before an error of the run are reported too, in
    // JSON as in text (and recorded, if they passed).
    let mut done = Vec::new();
    let checked = verify(
        &source,
        rules,
        levels,
        depth,
        Progress::to(&Terminal),
        |c| match json {
            true => done.push(c.clone()),
            false => print(c, &source),
        },
    );
    if json {
        output::json(&done)?;
    }
    let checks = checked?;
    Ok(match checks.iter().all(|c| c.passed()) {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

fn print(c: &LevelCheck, source: &Source) {
    out!(
        "level {:>2} ({}): {} in {:.2} s",
        c.seeds,
        source.path(c.seeds).display(),
        if c.passed() { "ok" } else { "FAILED" },
        c.seconds
    );
    for (name, o) in [
        ("1 integrity", &c.integrity),
        ("2 consistency", &c.consistency),
        ("3 re-derivation", &c.rederivation),
    ] {
        match o {
            Outcome::Pass => out!("  check {name}: pass"),
            Outcome::Skipped => out!("  check {name}: not run"),
            Outcome::Blocked(k) => {
                out!("  check {name}: NOT RUN: it reads level {k}, which failed a check")
            }
            Outcome::Broken(why) => out!("  check {name}: FAILED: {why}"),
            Outcome::Differs(n, first) => {
                out!(
                    "  check {name}: FAILED: {}; first ones:",
                    positions_differ(*n)
                );
                for m in first {
                    out!(
                        "    index {} board {}: stored {}, expected {}",
                        m.index,
                        m.board,
                        m.stored,
                        m.expected
                    );
                }
            }
        }
    }
}
