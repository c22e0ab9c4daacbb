//! The `mancaladb` command line: parses arguments, calls the library, prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mancaladb::db::{Db, LevelReport};
use mancaladb::oware::{Board, Rules};
use mancaladb::progress::Progress;
use mancaladb::query::{analyze, principal_line, Analysis, LineEnd, Ply, Tables};
use mancaladb::stats::LevelStats;
use mancaladb::Error;

#[derive(Parser)]
#[command(name = "mancaladb", version, about = "Endgame databases for mancala games")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options shared by the commands that read or write a table directory.
#[derive(clap::Args)]
struct Where {
    /// Table directory.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Rule set: awari (Romein & Bal's) or abapa (international).
    #[arg(long, default_value = "awari", value_parser = parse_rules)]
    rules: Rules,
}

#[derive(Subcommand)]
enum Command {
    /// Build Oware tables, level by level from 0 seeds; resumes where it stopped.
    Build {
        #[command(flatten)]
        at: Where,
        /// Build levels 0..=N.
        #[arg(long, default_value_t = 16)]
        max_seeds: usize,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Value of a position and of each legal move.
    Query {
        #[command(flatten)]
        at: Where,
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
    },
    /// Per-level statistics of the built tables.
    Stats {
        #[command(flatten)]
        at: Where,
    },
    /// Write the tables in another layout.
    Export {
        #[command(flatten)]
        at: Where,
        /// Output layout: vu = `scores.N`, one signed byte per position.
        #[arg(long, value_enum)]
        format: Format,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Vu,
}

fn parse_rules(s: &str) -> Result<Rules, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mancaladb: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Build { at, max_seeds, threads } => {
            if let Some(t) = threads {
                if t == 0 {
                    return Err(Error::Usage("--threads must be at least 1".into()));
                }
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build_global()
                    .map_err(|e| Error::Usage(format!("cannot start {t} threads: {e}")))?;
            }
            let cores = rayon::current_num_threads();
            let db = Db::new(&at.db);
            db.build(at.rules, max_seeds, Progress::Auto, |r| print_level(r, cores))?;
            Ok(())
        }
        Command::Query { at, json, line, pits } => {
            let board = Board::parse(&pits)?;
            let tables = Tables::new(Db::new(&at.db), at.rules);
            let a = analyze(at.rules, &tables, &board)?;
            let pv = if line { Some(principal_line(at.rules, &tables, &board, 200)?) } else { None };
            if json {
                println!("{}", analysis_json(&a, pv.as_ref()));
            } else {
                print_analysis(at.rules, &a, pv.as_ref());
            }
            Ok(())
        }
        Command::Stats { at } => {
            let db = Db::new(&at.db);
            let levels = db.levels(at.rules);
            if levels.is_empty() {
                return Err(Error::Missing {
                    what: format!("no {} level", at.rules),
                    dir: at.db.clone(),
                    hint: format!("mancaladb build --rules {} --db {}", at.rules, at.db.display()),
                });
            }
            println!("{:>5} {:>14} {:>9} {:>14}  histogram (value:count)", "seeds", "positions", "mean", "zero");
            for n in levels {
                let s = LevelStats::of_table(n, &db.open(at.rules, n)?)?;
                let hist: Vec<String> = (-(n as i32)..=n as i32)
                    .filter(|&v| s.count(v) > 0)
                    .map(|v| format!("{v}:{}", s.count(v)))
                    .collect();
                println!("{n:>5} {:>14} {:>9.4} {:>14}  {}", s.positions, s.mean(), s.count(0), hist.join(" "));
            }
            Ok(())
        }
        Command::Export { at, format: Format::Vu, out } => {
            let levels = Db::new(&at.db).export_vu(at.rules, &out)?;
            println!("wrote scores.N for levels {levels:?} to {}", out.display());
            Ok(())
        }
    }
}

fn print_level(r: &LevelReport, cores: usize) {
    if r.skipped {
        println!("level {:>2}: {:>12} positions, already built ({} bytes)", r.seeds, r.positions, r.file_bytes);
        return;
    }
    let rate = r.positions as f64 / r.seconds.max(1e-9);
    let rss = r.peak_rss.map_or("?".to_string(), |b| format!("{:.0} MiB", b as f64 / 1048576.0));
    println!(
        "level {:>2}: {:>12} positions in {:>7.2} s, {:>10.0} pos/s ({:.0}/core), peak RSS {rss}, {} bytes ({:.3} bits/pos)",
        r.seeds,
        r.positions,
        r.seconds,
        rate,
        rate / cores as f64,
        r.file_bytes,
        r.file_bytes as f64 * 8.0 / r.positions as f64
    );
}

fn verdict(v: i8) -> &'static str {
    match v {
        0 => "draw",
        v if v > 0 => "win for the player to move",
        _ => "loss for the player to move",
    }
}

fn print_analysis(rules: Rules, a: &Analysis, pv: Option<&(Vec<Ply>, LineEnd)>) {
    println!("board:  {} ({rules} rules; pits 0..5 are the player to move's)", a.board);
    println!("seeds:  {}", a.seeds);
    let how = if a.stored { "" } else { " (not stored: valued from its moves)" };
    println!("value:  {:+} ({}){how}", a.value, verdict(a.value));
    if a.moves.is_empty() {
        println!("moves:  none: the player to move has no seeds; the opponent takes the rest");
    }
    for m in &a.moves {
        println!("  pit {}: value {:+}, captures {}", m.pit, m.value, m.captures);
    }
    let best: Vec<String> = a.best().iter().map(|p| p.to_string()).collect();
    if !best.is_empty() {
        println!("best:   pit {}", best.join(", pit "));
    }
    if let Some((line, end)) = pv {
        println!("line (each board seen by the player making the move):");
        for (i, p) in line.iter().enumerate() {
            println!("  {:>3}. {}  pit {} captures {} (value {:+})", i + 1, p.board, p.pit, p.captures, p.value);
        }
        match end {
            LineEnd::GameOver => println!("  end: game over"),
            LineEnd::Cycle { ply } => println!("  end: the position before ply {} repeats: endless play", ply + 1),
            LineEnd::Limit => println!("  end: cut at {} plies", line.len()),
        }
    }
}

fn analysis_json(a: &Analysis, pv: Option<&(Vec<Ply>, LineEnd)>) -> String {
    let moves: Vec<String> = a
        .moves
        .iter()
        .map(|m| format!("{{\"pit\":{},\"value\":{},\"captures\":{}}}", m.pit, m.value, m.captures))
        .collect();
    let best: Vec<String> = a.best().iter().map(|p| p.to_string()).collect();
    let mut s = format!(
        "{{\"seeds\":{},\"value\":{},\"moves\":[{}],\"best\":[{}]",
        a.seeds,
        a.value,
        moves.join(","),
        best.join(",")
    );
    if let Some((line, end)) = pv {
        let plies: Vec<String> = line
            .iter()
            .map(|p| {
                let pits: Vec<String> = p.board.0.iter().map(|v| v.to_string()).collect();
                format!(
                    "{{\"board\":[{}],\"pit\":{},\"captures\":{},\"value\":{}}}",
                    pits.join(","),
                    p.pit,
                    p.captures,
                    p.value
                )
            })
            .collect();
        let end = match end {
            LineEnd::GameOver => "\"game-over\"".to_string(),
            LineEnd::Cycle { ply } => format!("\"cycle\",\"cycle_ply\":{ply}"),
            LineEnd::Limit => "\"limit\"".to_string(),
        };
        s.push_str(&format!(",\"line\":[{}],\"line_end\":{end}", plies.join(",")));
    }
    s.push('}');
    s
}
