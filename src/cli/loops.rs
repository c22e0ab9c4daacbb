//! `loops`: does each move of an Omweso configuration end, loop, or can it
//! be made to loop?

use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::omweso::Side;
use mancaladb::omweso::moves::{Criterion, Position, Variant, analyze, parse_pit};

use super::args;
use super::output::{json, out};

/// Options of `loops`.
#[derive(clap::Args)]
pub struct Args {
    /// The opponent's 16 pits, in their own numbering (default: empty).
    #[arg(long, allow_hyphen_values = true)]
    opponent: Option<String>,
    /// Check only this start pit (0..15).
    #[arg(long, allow_negative_numbers = true, value_parser = pit)]
    pit: Option<usize>,
    /// A match's first turn: no captures.
    #[arg(long)]
    first_turn: bool,
    /// Most laps to follow per start before answering undecided, shared by
    /// every line of the start's choice tree.
    #[arg(long, default_value_t = 1_000_000_000, allow_negative_numbers = true, value_parser = args::lap_budget)]
    max_laps: u64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Allow more than the 64 seeds of a game in play, both sides together
    /// (a study); each side still holds at most 64.
    #[arg(long)]
    any_seeds: bool,
    /// The player's 16 pits: 0..7 the near row left to right, 8..15 the
    /// inner row right to left.
    #[arg(required = true, num_args = 1.., allow_negative_numbers = true)]
    pits: Vec<String>,
}

fn pit(text: &str) -> Result<usize, String> {
    parse_pit(text).map_err(|e| e.to_string())
}

/// Decides every start asked for.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    // The opponent first: `--opponent 1 1 ...` takes the first word alone,
    // and the player's side would be blamed for the rest.
    let opp = match &a.opponent {
        Some(o) => {
            Side::parse(&[o], "--opponent").map_err(|e| match o.trim().contains([' ', ',']) {
                true => e,
                false => Error::Invalid(format!("{e} (give all 16 as one argument, in quotes)")),
            })?
        }
        None => Side::EMPTY,
    };
    let me = Side::parse(&a.pits, "the player's side")?;
    let pos = Position { me, opp };
    if !a.any_seeds {
        pos.check_in_game()
            .map_err(|e| Error::Invalid(format!("{e}; add --any-seeds to study it anyway")))?;
    }
    let variant = Variant {
        first_turn: a.first_turn,
    };
    let analysis = analyze(variant, pos, a.pit, a.max_laps)?;
    if a.json {
        json(&analysis)?;
        return Ok(ExitCode::SUCCESS);
    }
    let reports = &analysis.starts;
    for r in reports {
        out!("pit {} {}: {}", r.pit, r.direction.name(), r.verdict.name());
        let l = &r.line;
        out!("  decided by: {}", decided_by(r.criterion));
        out!(
            "  laps {}, seeds sown {}, captures {}",
            l.laps,
            l.sown,
            l.captures
        );
        if r.choice_points > 0 || r.walked != l.laps {
            out!(
                "  choice points {}, laps walked over all lines {}",
                r.choice_points,
                r.walked
            );
        }
        if r.choice_points > 0 {
            let n = r.lines;
            out!(
                "  lines: {} ending, {} looping, {} undecided",
                n.ending,
                n.looping,
                n.undecided
            );
        }
        if !l.reversed.is_empty() {
            let laps: Vec<String> = l.reversed.iter().map(|v| v.to_string()).collect();
            out!("  reverse (clockwise) laps chosen: {}", laps.join(", "));
        }
        if let Some(end) = l.end {
            out!(
                "  ends with: {end_me} | opponent {end_opp}",
                end_me = end.me,
                end_opp = end.opp
            );
        }
        if let Some(c) = l.cycle {
            out!(
                "  repeat proven at lap {}; period {} laps, {} seeds; repeating state: lift pit {} of {} | opponent {}",
                l.laps,
                c.period,
                c.sown,
                c.pit,
                c.pos.me,
                c.pos.opp
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What decided a verdict, for a reader.
fn decided_by(c: Criterion) -> &'static str {
    match c {
        Criterion::Certificate => "certificate (fact 3: the pit behind the start is empty)",
        Criterion::Recurrence => {
            "recurrence (facts 2 and 5: a relay state came back, or came back rotated)"
        }
        Criterion::Played => "played to the end",
        Criterion::Budget => "lap budget exhausted",
    }
}
