//! The `mancaladb` command line: parses arguments, calls the library, prints.

use std::io::Write;
use std::path::PathBuf;

/// `println!` that stops quietly when standard output is closed (a pipe to
/// `head`, say) instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    };
}
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mancaladb::Error;
use mancaladb::db::{Db, LevelReport};
use mancaladb::exchange::Alone;
use mancaladb::known;
use mancaladb::omweso::{self, Side, census, moves::Position};
use mancaladb::oware::{Board, Rules};
use mancaladb::progress::Progress;
use mancaladb::query::{Analysis, LineEnd, Ply, Tables, Values, analyze, principal_line};
use mancaladb::source::{Source, VuDir};
use mancaladb::stats::LevelStats;
use mancaladb::verify::{self, LevelCheck, Outcome};

#[derive(Parser)]
#[command(
    name = "mancaladb",
    version,
    about = "Endgame databases for mancala games"
)]
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

/// Where values are read from: tables, or published-layout VU files.
#[derive(clap::Args)]
struct Reading {
    #[command(flatten)]
    at: Where,
    /// Read `scores.N` files (the published VU layout) from this directory
    /// instead of tables, in place.
    #[arg(long)]
    vu: Option<PathBuf>,
}

impl Reading {
    fn source(&self) -> Source {
        match &self.vu {
            Some(dir) => Source::Vu(VuDir::new(dir)),
            None => Source::Tables(Db::new(&self.at.db), self.at.rules),
        }
    }
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
        /// Build together with the other ranks of an MPI job, each solving
        /// a slice of every level (run under mpirun; needs a build with
        /// `--features mpi`).
        #[arg(long)]
        distributed: bool,
    },
    /// Value of a position and of each legal move.
    Query {
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
    },
    /// Per-level statistics of the built tables.
    Stats {
        #[command(flatten)]
        read: Reading,
    },
    /// Check stored levels: integrity, consistency, independent re-derivation.
    /// Exit 0 if all pass, 1 on any failure, 2 on usage or I/O errors.
    Verify {
        #[command(flatten)]
        read: Reading,
        /// Level N or range N..M (default: every level present).
        #[arg(long)]
        seeds: Option<String>,
        /// Integrity only (headers, checksums, sizes).
        #[arg(long)]
        quick: bool,
        /// Print a JSON list, one object per level.
        #[arg(long)]
        json: bool,
    },
    /// What this installation confirms about the starting positions (1 to 4
    /// seeds per pit), and what the missing levels would take.
    Known {
        #[command(flatten)]
        read: Reading,
    },
    /// Import published-layout `scores.N` files as tables.
    Import {
        #[command(flatten)]
        at: Where,
        /// Directory of `scores.N` files.
        #[arg(long)]
        vu: PathBuf,
    },
    /// Omweso: does each move of a configuration end, loop, or can it loop?
    Loops(LoopArgs),
    /// Omweso: count looping configurations of K (to K2) seeds on one side.
    Census {
        /// Seed count K or range K..K2.
        #[arg(long)]
        seeds: String,
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

/// Options of `loops`.
#[derive(clap::Args)]
struct LoopArgs {
    /// The opponent's 16 pits, in their own numbering (default: empty).
    #[arg(long)]
    opponent: Option<String>,
    /// Check only this start pit (0..15).
    #[arg(long, allow_negative_numbers = true)]
    pit: Option<i64>,
    /// A match's first turn: no captures.
    #[arg(long)]
    first_turn: bool,
    /// Most laps to follow per start before answering undecided.
    #[arg(long, default_value_t = 1_000_000_000, allow_negative_numbers = true)]
    max_laps: i64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// The player's 16 pits: 0..7 the near row left to right, 8..15 the
    /// inner row right to left.
    #[arg(required = true, num_args = 1.., allow_negative_numbers = true)]
    pits: Vec<String>,
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
        Ok(code) => code,
        Err(e) => {
            eprintln!("mancaladb: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs a command: exit code 0, or 1 when `verify` finds a failure.
fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Build {
            at,
            max_seeds,
            threads,
            distributed,
        } => {
            if let Some(t) = threads {
                if t == 0 {
                    return Err(Error::Usage("--threads must be at least 1".into()));
                }
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build_global()
                    .map_err(|e| Error::Usage(format!("cannot start {t} threads: {e}")))?;
            }
            let db = Db::new(&at.db);
            if distributed {
                return build_distributed(&db, at.rules, max_seeds);
            }
            let cores = rayon::current_num_threads();
            db.build(at.rules, max_seeds, &Alone, Progress::Auto, |r| {
                print_level(r, cores)
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Query {
            read,
            json,
            line,
            pits,
        } => {
            let board = Board::parse(&pits)?;
            let rules = read.at.rules;
            if read.vu.is_none() {
                // The board's own level first: its absence names the build to run.
                Db::new(&read.at.db).open(rules, board.seeds())?;
            }
            let values: Box<dyn Values> = match &read.vu {
                Some(dir) => Box::new(VuDir::new(dir)),
                None => Box::new(Tables::new(Db::new(&read.at.db), rules)),
            };
            let a = analyze(rules, values.as_ref(), &board)?;
            let pv = if line {
                Some(principal_line(rules, values.as_ref(), &board, 200)?)
            } else {
                None
            };
            if json {
                out!("{}", analysis_json(&a, pv.as_ref()));
            } else {
                print_analysis(rules, &a, pv.as_ref());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Stats { read } => {
            let source = read.source();
            let levels = source.present()?;
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
        Command::Verify {
            read,
            seeds,
            quick,
            json,
        } => {
            let source = read.source();
            let present = source.present()?;
            let range = match seeds {
                Some(text) => census::parse_range(&text)?,
                None => 0..=*present.last().expect("levels() is non-empty"),
            };
            let checks =
                verify::verify(&source, read.at.rules, range, quick, Progress::Auto, |c| {
                    if !json {
                        print_check(c, &source);
                    }
                })?;
            if let (Source::Tables(db, rules), false) = (&source, quick) {
                for c in checks.iter().filter(|c| c.passed()) {
                    db.record_verified(*rules, c.seeds)?;
                }
            }
            if json {
                out!(
                    "[{}]",
                    checks
                        .iter()
                        .map(check_json)
                        .collect::<Vec<_>>()
                        .join(",\n")
                );
            }
            Ok(if checks.iter().all(|c| c.passed()) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Known { read } => {
            let source = read.source();
            let present = source.levels();
            // An empty directory shows what building would take; a missing
            // one is more likely a typo.
            let dir = read.vu.clone().unwrap_or_else(|| read.at.db.clone());
            if !dir.is_dir() {
                return Err(Error::Usage(format!(
                    "{}: no such directory",
                    dir.display()
                )));
            }
            let rules = read.at.rules;
            let db = Db::new(&read.at.db);
            let values: Box<dyn Values> = match &read.vu {
                Some(dir) => Box::new(VuDir::new(dir)),
                None => Box::new(Tables::new(db.clone(), rules)),
            };
            let verified = |n: usize| read.vu.is_none() && db.is_verified(rules, n);
            let starts = known::starts(rules, values.as_ref(), &present, verified)?;
            let rate = db.measured_rate();
            out!(
                "Starting positions under {rules} rules, from {}:",
                source
                    .path(0)
                    .parent()
                    .map_or(String::new(), |p| p.display().to_string())
            );
            for s in &starts {
                let name = format!("{} per pit ({} seeds)", s.per_pit, s.seeds);
                match (s.value, s.verdict()) {
                    (Some(v), Some(what)) => {
                        let levels: Vec<String> =
                            s.levels_used.iter().map(|n| n.to_string()).collect();
                        let checked = if s.verified {
                            "levels 0..".to_string() + &s.seeds.to_string() + " verified"
                        } else if read.vu.is_some() {
                            "not verified here (run: mancaladb verify --vu DIR)".to_string()
                        } else {
                            format!(
                                "not all verified (run: mancaladb verify --db {})",
                                read.at.db.display()
                            )
                        };
                        out!(
                            "  {name}: value {v:+}, {what}; levels read {}; {checked}",
                            levels.join(", ")
                        );
                    }
                    _ => {
                        let (a, b) = (s.missing[0], *s.missing.last().expect("non-empty"));
                        let time = match rate {
                            Some(r) => format!(
                                ", about {} at the {:.1} M positions/s measured here for the largest level built (larger levels run slower)",
                                human_seconds(s.missing_positions as f64 / r),
                                r / 1e6
                            ),
                            None => String::new(),
                        };
                        out!(
                            "  {name}: needs levels {a}..{b} ({} missing): {} positions, {} bytes uncompressed{time}",
                            s.missing.len(),
                            s.missing_positions,
                            s.missing_positions
                        );
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Import { at, vu } => {
            let levels = Db::new(&at.db).import_vu(at.rules, &VuDir::new(&vu))?;
            out!(
                "imported levels {levels:?} from {} into {}",
                vu.display(),
                at.db.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Loops(args) => loops(args).map(|()| ExitCode::SUCCESS),
        Command::Census {
            seeds,
            json,
            out,
            db,
            max_laps,
        } => {
            let range = census::parse_range(&seeds)?;
            let rows = census::run_resumable(&db, range, max_laps, Progress::Auto)?;
            let list = format!(
                "[{}]",
                rows.iter()
                    .map(|r| r.to_json())
                    .collect::<Vec<_>>()
                    .join(",\n")
            );
            if let Some(path) = out {
                std::fs::write(&path, format!("{list}\n")).map_err(|e| Error::io(&path, e))?;
            }
            if json {
                out!("{list}");
            } else {
                print_census(&rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Export {
            at,
            format: Format::Vu,
            out,
        } => {
            let levels = Db::new(&at.db).export_vu(at.rules, &out)?;
            out!("wrote scores.N for levels {levels:?} to {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn loops(a: LoopArgs) -> Result<(), Error> {
    let me = Side::parse(&a.pits, "the player's side")?;
    let opp = match &a.opponent {
        Some(o) => Side::parse(&[o], "--opponent")?,
        None => Side::EMPTY,
    };
    if a.max_laps <= 0 {
        return Err(Error::Usage(format!(
            "--max-laps {} must be at least 1",
            a.max_laps
        )));
    }
    let rules = omweso::moves::Rules {
        first_turn: a.first_turn,
    };
    let pos = Position { me, opp };
    let mut starts = omweso::moves::starts(rules, pos);
    if let Some(p) = a.pit {
        if !(0..16).contains(&p) {
            return Err(Error::Usage(format!("--pit {p}: pits are numbered 0..15")));
        }
        let p = p as usize;
        if me.get(p) < 2 {
            return Err(Error::Usage(format!(
                "--pit {p} holds {} seeds; a move starts from 2 or more",
                me.get(p)
            )));
        }
        starts.retain(|s| s.0 == p);
    }
    if starts.is_empty() {
        return Err(Error::Usage(
            "no pit holds 2 or more seeds: the player has no move".into(),
        ));
    }
    let reports: Vec<_> = starts
        .iter()
        .map(|&(pit, dir)| omweso::moves::analyze_start(rules, pos, pit, dir, a.max_laps as u64))
        .collect();
    if a.json {
        let items: Vec<String> = reports
            .iter()
            .map(|r| {
                let period = r
                    .line
                    .cycle
                    .map(|c| format!(",\"period\":{}", c.period))
                    .unwrap_or_default();
                format!(
                    "{{\"pit\":{},\"direction\":\"{}\",\"verdict\":\"{}\",\"laps\":{}{period}}}",
                    r.pit,
                    r.direction.name(),
                    r.verdict.name(),
                    r.line.laps
                )
            })
            .collect();
        out!("{{\"starts\":[{}]}}", items.join(","));
        return Ok(());
    }
    for r in &reports {
        out!("pit {} {}: {}", r.pit, r.direction.name(), r.verdict.name());
        let l = &r.line;
        out!("  decided by: {}", r.criterion.name());
        out!(
            "  laps {}, seeds sown {}, captures {}",
            l.laps,
            l.sown,
            l.captures
        );
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
    Ok(())
}

fn print_census(rows: &[census::Row]) {
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

fn human_seconds(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

fn print_check(c: &LevelCheck, source: &Source) {
    let path = source.path(c.seeds);
    out!(
        "level {:>2} ({}): {} in {:.2} s",
        c.seeds,
        path.display(),
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
            Outcome::Broken(why) => out!("  check {name}: FAILED: {why}"),
            Outcome::Differs(n, first) => {
                out!("  check {name}: FAILED: {n} positions differ; first ones:");
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

fn check_json(c: &LevelCheck) -> String {
    let one = |o: &Outcome| -> String {
        match o {
            Outcome::Pass => "\"pass\"".into(),
            Outcome::Skipped => "null".into(),
            Outcome::Broken(why) => format!("{{\"error\":{}}}", json_string(why)),
            Outcome::Differs(n, first) => {
                let list: Vec<String> = first
                    .iter()
                    .map(|m| {
                        let pits = board_json(&m.board);
                        format!(
                            "{{\"index\":{},\"board\":[{}],\"stored\":{},\"expected\":{}}}",
                            m.index, pits, m.stored, m.expected
                        )
                    })
                    .collect();
                format!("{{\"differ\":{n},\"first\":[{}]}}", list.join(","))
            }
        }
    };
    format!(
        "{{\"seeds\":{},\"passed\":{},\"integrity\":{},\"consistency\":{},\"rederivation\":{},\"seconds\":{:.3}}}",
        c.seeds,
        c.passed(),
        one(&c.integrity),
        one(&c.consistency),
        one(&c.rederivation),
        c.seconds
    )
}

/// A board's pits as the inside of a JSON array: `1,0,2,...`.
fn board_json(board: &Board) -> String {
    board
        .0
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `build --distributed`: this process is one rank of an MPI job. An error
/// on any rank stops every rank (the levels already written stay valid);
/// rank 0 alone prints.
#[cfg(feature = "mpi")]
fn build_distributed(db: &Db, rules: Rules, max_seeds: usize) -> Result<ExitCode, Error> {
    use mancaladb::exchange::{Exchange, mpi::Mpi};
    let Some(mpi) = Mpi::init() else {
        return Err(Error::Usage("MPI could not be initialised".into()));
    };
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let progress = if rank == 0 {
        Progress::Auto
    } else {
        Progress::Quiet
    };
    let cores = rayon::current_num_threads() * ranks;
    match db.build(rules, max_seeds, &mpi, progress, |r| print_level(r, cores)) {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("mancaladb: rank {rank} of {ranks}: {e}; stopping every rank");
            mpi.abort(2)
        }
    }
}

/// Without the `mpi` feature there is no distributed build.
#[cfg(not(feature = "mpi"))]
fn build_distributed(_: &Db, _: Rules, _: usize) -> Result<ExitCode, Error> {
    Err(Error::Usage(
        "--distributed needs a build with MPI: cargo build --release --features mpi (see README)"
            .into(),
    ))
}

fn print_level(r: &LevelReport, cores: usize) {
    if r.skipped {
        out!(
            "level {:>2}: {:>12} positions, already built ({} bytes)",
            r.seeds,
            r.positions,
            r.file_bytes
        );
        return;
    }
    let rate = r.positions as f64 / r.seconds.max(1e-9);
    let rss = r.peak_rss.map_or("?".to_string(), |b| {
        format!("{:.0} MiB", b as f64 / 1048576.0)
    });
    let exchanged = match r.ranks {
        1 => String::new(),
        p => format!(
            ", {p} ranks exchanged {} bytes ({:.2} bytes/pos) in {} rounds",
            r.exchanged_bytes,
            r.exchanged_bytes as f64 / r.positions.max(1) as f64,
            r.rounds
        ),
    };
    out!(
        "level {:>2}: {:>12} positions in {:>7.2} s, {:>10.0} pos/s ({:.0}/core), peak RSS {rss}, {} bytes ({:.3} bits/pos){exchanged}",
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
    out!(
        "board:  {} ({rules} rules; pits 0..5 are the player to move's)",
        a.board
    );
    out!("seeds:  {}", a.seeds);
    let how = if a.stored {
        ""
    } else {
        " (not stored: valued from its moves)"
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
    let best: Vec<String> = a.best().iter().map(|p| p.to_string()).collect();
    if !best.is_empty() {
        out!("best:   pit {}", best.join(", pit "));
    }
    if let Some((line, end)) = pv {
        out!("line (each board seen by the player making the move):");
        for (i, p) in line.iter().enumerate() {
            out!(
                "  {:>3}. {}  pit {} captures {} (value {:+})",
                i + 1,
                p.board,
                p.pit,
                p.captures,
                p.value
            );
        }
        match end {
            LineEnd::GameOver => out!("  end: game over"),
            LineEnd::Cycle { ply } => out!(
                "  end: the position before ply {} repeats: endless play",
                ply + 1
            ),
            LineEnd::Limit => out!("  end: cut at {} plies", line.len()),
        }
    }
}

fn analysis_json(a: &Analysis, pv: Option<&(Vec<Ply>, LineEnd)>) -> String {
    let moves: Vec<String> = a
        .moves
        .iter()
        .map(|m| {
            format!(
                "{{\"pit\":{},\"value\":{},\"captures\":{}}}",
                m.pit, m.value, m.captures
            )
        })
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
                let pits = board_json(&p.board);
                format!(
                    "{{\"board\":[{}],\"pit\":{},\"captures\":{},\"value\":{}}}",
                    pits, p.pit, p.captures, p.value
                )
            })
            .collect();
        let end = match end {
            LineEnd::GameOver => "\"game-over\"".to_string(),
            LineEnd::Cycle { ply } => format!("\"cycle\",\"cycle_ply\":{ply}"),
            LineEnd::Limit => "\"limit\"".to_string(),
        };
        s.push_str(&format!(
            ",\"line\":[{}],\"line_end\":{end}",
            plies.join(",")
        ));
    }
    s.push('}');
    s
}
