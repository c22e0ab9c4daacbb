//! `query`: a position's value, each move's value, the principal line.

use std::process::ExitCode;

use serde::Serialize;

use mancaladb::Error;
use mancaladb::oware::{Board, Rules};
use mancaladb::query::{
    Analysis, Category, LINE_PLIES, Line, LineEnd, Provenance, ValuedBy, analyze, levels_read,
    principal_line, provenance,
};
use mancaladb::source::Source;

use super::args::{Reading, shell_quote};
use super::output::{self, out};
use mancaladb::error::level_set_text;

/// Options of `query`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    read: Reading,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Add the principal variation.
    #[arg(long)]
    line: bool,
    /// Twelve pit counts, the player to move's pits 0..5 first (or one
    /// string separated by commas or spaces).
    #[arg(required = true, num_args = 1.., allow_negative_numbers = true)]
    pits: Vec<String>,
}

/// The JSON answer: the analysis, the levels it rests on, and the line
/// when asked for.
#[derive(Serialize)]
struct Answer<'a> {
    #[serde(flatten)]
    analysis: &'a Analysis,
    levels: &'a Provenance,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    line: Option<&'a Line>,
}

/// Answers one position.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    let board = Board::parse(&a.pits)?;
    // A position whose player to move has no seeds reads no level: it is
    // answered wherever the directory is, or is not.
    let (rules, source) = a.read.open_anywhere()?;
    if !levels_read(rules, &board).is_empty() {
        source.require_dir()?;
    }
    let analysis = analyze(rules, &source, &board)?;
    let line = match a.line {
        true => Some(principal_line(rules, &source, &board, LINE_PLIES)?),
        false => None,
    };
    // Everything that can fail is read before the first line goes out.
    let levels = provenance(rules, &board, &source)?;
    if a.json {
        output::json(&Answer {
            analysis: &analysis,
            levels: &levels,
            line: line.as_ref(),
        })?;
    } else {
        print(rules, &analysis, line.as_ref());
        out!("{}", provenance_text(&levels, &source));
    }
    Ok(ExitCode::SUCCESS)
}

/// "draw", "win ..." or "loss ..." for the player to move.
pub fn verdict(v: i8) -> &'static str {
    match Category::of(v) {
        Category::Draw => "draw",
        Category::Win => "win for the player to move",
        Category::Loss => "loss for the player to move",
    }
}

fn print(rules: Rules, a: &Analysis, line: Option<&Line>) {
    out!(
        "board:  {} ({rules} rules; pits 0..5 are the player to move's)",
        a.board
    );
    out!("seeds:  {}", a.seeds);
    let how = match a.valued_by {
        ValuedBy::Moves => " (not stored: valued from its moves)",
        ValuedBy::Level | ValuedBy::Rules => "",
    };
    out!("value:  {:+} ({}){how}", a.value, verdict(a.value));
    if a.moves.is_empty() {
        out!("moves:  none: the player to move has no seeds; the opponent takes the rest");
    }
    for m in &a.moves {
        out!(
            "  pit {}: value {:+}, captures {}",
            m.pit,
            m.value,
            m.captures
        );
    }
    let best: Vec<String> = a.best.iter().map(|p| p.to_string()).collect();
    if !best.is_empty() {
        out!("best:   pit {}", best.join(", pit "));
    }
    if let Some(line) = line {
        out!("line (each board seen by the player making the move):");
        for (i, p) in line.plies.iter().enumerate() {
            out!(
                "  {:>3}. {}  pit {} captures {} (value {:+})",
                i + 1,
                p.board,
                p.pit,
                p.captures,
                p.value
            );
        }
        match line.end {
            LineEnd::GameOver => out!("  end: game over"),
            LineEnd::Cycle { ply } => out!(
                "  end: the position before ply {} repeats: endless play",
                ply + 1
            ),
            LineEnd::NoProgress { ply } => out!(
                "  end: the position before ply {} repeats at a value other than 0: \
                 the search for progress gave up at this level, so this line does not \
                 show how the side ahead gets its value",
                ply + 1
            ),
            LineEnd::Limit => out!("  end: cut at {} plies", line.plies.len()),
            LineEnd::Missing { seeds } => out!("  end: level {seeds} is not present"),
        }
    }
}

/// Why levels of `source` do not count as verified, and the command that
/// checks them.
pub fn not_verified(source: &Source) -> String {
    let dir = shell_quote(source.dir());
    match source.db() {
        Some((_, rules)) => {
            format!("not all verified here (run: mancaladb verify --rules {rules} --db {dir})")
        }
        None => format!(
            "not recorded as verified: VU files never are (mancaladb verify --vu {dir} checks them)"
        ),
    }
}

/// The levels the value was read from, the levels it rests on (those and
/// every level below them that they were built from) and whether all of
/// those passed `verify` here.
fn provenance_text(p: &Provenance, source: &Source) -> String {
    if p.read.is_empty() {
        return "levels: none read (no moves: the rules give the value)".to_string();
    }
    let read: Vec<String> = p.read.iter().map(|n| n.to_string()).collect();
    let checked = if !p.missing.is_empty() {
        format!(
            "not all present here (missing: {}), so not verifiable here",
            level_set_text(&p.missing)
        )
    } else if p.verified {
        "all verified here".to_string()
    } else {
        not_verified(source)
    };
    format!(
        "levels: read {}; rests on {}, {checked}",
        read.join(", "),
        level_set_text(&p.rests_on)
    )
}
