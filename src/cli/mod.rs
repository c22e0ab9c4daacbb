//! The command line: one module per command (two for the pairs `import`
//! and `export`, `completions` and `man`), each with its flags, a function
//! `args -> Result<ExitCode>` per command (`run` where the module has one
//! command) and its printer. The library answers
//! with data; the modules here only present it. What to do about an error
//! (the command to run) is said here, where the commands are known (but
//! for the export of `scores.N` files, which the Python package suggests
//! too: `Missing::vu_remedy`).

pub(crate) mod output;

mod args;
mod build;
mod census;
mod convert;
mod known;
mod loops;
mod query;
mod serve;
mod shell;
mod stats;
mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mancaladb::Error;
use mancaladb::build::levels_to_build;
use mancaladb::error::level_set_text;
use mancaladb::error::{Corruption, Missing};
use mancaladb::oware::{MAX_SEEDS, Rules};

use args::shell_quote;

/// The version `--version` gives, and whether this build can run
/// `build --distributed`.
#[cfg(feature = "mpi")]
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (with MPI: build --distributed)"
);
#[cfg(not(feature = "mpi"))]
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Endgame databases for mancala games.
#[derive(Parser)]
#[command(
    name = "mancaladb",
    version = VERSION,
    about = "Endgame databases for mancala games"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build Oware tables, level by level from 0 seeds; resumes where it stopped.
    Build(build::Args),
    /// Value of a position and of each legal move.
    Query(query::Args),
    /// Per-level statistics of the built tables.
    Stats(stats::Args),
    /// Check stored levels: integrity, consistency, independent re-derivation.
    /// Exit 0 if all pass, 1 on any failure, 2 on usage or I/O errors.
    Verify(verify::Args),
    /// What this installation confirms about the starting positions (1 to 4
    /// seeds per pit), and what the missing levels would take.
    Known(known::Args),
    /// Import published-layout `scores.N` files as tables.
    Import(convert::ImportArgs),
    /// Write the tables in another layout.
    Export(convert::ExportArgs),
    /// Serve the JSON API and the web board over HTTP.
    Serve(serve::Args),
    /// Omweso: does each move of a configuration end, loop, or can it loop?
    Loops(loops::Args),
    /// Omweso: count looping configurations of K (to K2) seeds on one side.
    Census(census::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionArgs),
    /// Print the manual page (roff), e.g. `mancaladb man > mancaladb.1`,
    /// or a command's, with its flags: `mancaladb man build > mancaladb-build.1`.
    Man(shell::ManArgs),
}

/// Runs a command and returns the exit code: 0, 1 when `verify` finds a
/// failure, 2 on bad input and I/O errors the command meets (one line on
/// standard error; the flags clap refused before this, also exit 2, take
/// three lines: the error, the usage and where to find help).
pub fn run(cli: Cli) -> ExitCode {
    // A level's seed lists are open together while it is built; a soft
    // limit set low by hand (20) stopped a build at level 8.
    crate::process::raise_open_files();
    let workers = match cli.command {
        // The commands that work in parallel (`build` starts its own:
        // `--threads`, or a share of the cores on each rank of a
        // distributed build); the others start no thread, and still answer
        // where none can be started.
        Command::Verify(_) | Command::Census(_) | Command::Import(_) => start_workers(None),
        _ => Ok(()),
    };
    let waits = matches!(cli.command, Command::Build(_));
    let result = workers.and_then(|()| match cli.command {
        Command::Build(a) => build::run(a),
        Command::Query(a) => query::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Known(a) => known::run(a),
        Command::Import(a) => convert::import(a),
        Command::Export(a) => convert::export(a),
        Command::Serve(a) => serve::run(a),
        Command::Loops(a) => loops::run(a),
        Command::Census(a) => census::run(a),
        Command::Completions(a) => shell::completions(a),
        Command::Man(a) => shell::man(a),
    });
    let code = result.unwrap_or_else(|e| {
        output::diag(format_args!("mancaladb: {}", explain(&e, waits)));
        ExitCode::from(2)
    });
    output::finish(code)
}

/// Starts the library's worker threads, `threads` of them (else rayon's
/// default: one per core, or `RAYON_NUM_THREADS`), before any work: a
/// process that cannot start them (a limit on its threads) is told so,
/// where rayon, starting them on first use, would panic.
fn start_workers(threads: Option<usize>) -> Result<(), Error> {
    let threads = match threads {
        Some(t) => Some(t),
        None => threads_from_env()?,
    };
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        pool = pool.num_threads(t);
    }
    pool.build_global().map_err(|e| {
        let n = match threads {
            None => "the worker threads".to_string(),
            Some(1) => "1 thread".to_string(),
            Some(t) => format!("{t} threads"),
        };
        Error::Invalid(format!("cannot start {n}: {e}"))
    })
}

/// `RAYON_NUM_THREADS`, which rayon would read, checked as `--threads` is
/// (at most 4 per core: 100,000 started as many threads); unset, or 0
/// (rayon's "the default"), is `None`: one per core.
fn threads_from_env() -> Result<Option<usize>, Error> {
    let Some(text) = std::env::var_os("RAYON_NUM_THREADS") else {
        return Ok(None);
    };
    let text = text.to_string_lossy();
    if text.trim() == "0" {
        return Ok(None);
    }
    args::threads(&text)
        .map(Some)
        .map_err(|e| Error::Invalid(format!("RAYON_NUM_THREADS={text}: {e}")))
}

/// What a command line that runs no command prints, and its exit code:
/// `--help` and `--version` on standard output (a failed write is exit 2,
/// as for any output), a usage error on standard error with exit 2.
pub fn not_run(e: clap::Error) -> ExitCode {
    if e.use_stderr() {
        e.exit()
    }
    let text = e.render();
    match std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        true => output::write(text.ansi().to_string().as_bytes()),
        false => output::write(text.to_string().as_bytes()),
    }
    output::finish(ExitCode::SUCCESS)
}

/// The rule set and level whose table `path` is (`DIR/awari-14.mdb`), if
/// it is one's.
fn table_level(path: &std::path::Path) -> Option<(Rules, usize)> {
    let dir = mancaladb::db::Db::new(path.parent()?);
    Rules::ALL.into_iter().find_map(|rules| {
        (0..=MAX_SEEDS)
            .find(|&n| dir.table_path(rules, n) == path)
            .map(|n| (rules, n))
    })
}

/// The name of another rule set than `rules` with levels in `dir`, if one
/// has any.
fn other_rules_present(dir: &std::path::Path, rules: &str) -> Option<&'static str> {
    let db = mancaladb::db::Db::new(dir);
    Rules::ALL
        .into_iter()
        .filter(|r| r.name() != rules)
        .find(|&r| db.levels(r).is_ok_and(|l| !l.is_empty()))
        .map(Rules::name)
}

/// The error's line, with the command that remedies it where there is one;
/// `waits`: the command has `--wait` (`build`), which a held lock's remedy
/// names.
fn explain(e: &Error, waits: bool) -> String {
    let hint = match e {
        Error::Missing(m @ Missing::Level { dir, rules, .. }) => format!(
            "build it and the levels it reads: mancaladb build --rules {rules} --levels {} --db {}",
            level_set_text(&levels_to_build(m).unwrap_or_default()),
            shell_quote(dir)
        ),
        Error::Missing(m @ Missing::SomeLevels { dir, rules, .. }) => format!(
            "build them and the levels they read: mancaladb build --rules {rules} --levels {} --db {}",
            level_set_text(&levels_to_build(m).unwrap_or_default()),
            shell_quote(dir)
        ),
        Error::Missing(m @ Missing::Below { dir, rules, .. }) => format!(
            "build them with the levels asked for (and your other flags): mancaladb build --rules {rules} --levels {} --db {}",
            level_set_text(&levels_to_build(m).unwrap_or_default()),
            shell_quote(dir)
        ),
        // A directory of published-layout files given as tables.
        Error::Missing(Missing::Levels { dir, rules })
            if *rules == "awari"
                && mancaladb::source::VuDir::new(dir)
                    .levels()
                    .is_ok_and(|l| !l.is_empty()) =>
        {
            format!(
                "it holds scores.N files: read them in place with --vu {dir}, or import them: mancaladb import --vu {dir} --db DB",
                dir = shell_quote(dir)
            )
        }
        // Levels of the other rule set: `--rules` was left out, or wrong.
        Error::Missing(Missing::Levels { dir, rules })
            if let Some(other) = other_rules_present(dir, rules) =>
        {
            format!(
                "it holds {other} levels: read them with --rules {other}, or build {rules} ones: mancaladb build --rules {rules} --db {}",
                shell_quote(dir)
            )
        }
        Error::Missing(Missing::Levels { dir, rules }) => format!(
            "build them: mancaladb build --rules {rules} --db {}",
            shell_quote(dir)
        ),
        Error::Missing(m @ (Missing::VuLevel { .. } | Missing::VuLevels { .. })) => {
            m.vu_remedy().unwrap_or_default()
        }
        Error::Corrupt {
            path,
            kind: Corruption::Checkpoint(_),
        } => format!(
            "removing {} starts the level, or the check, afresh",
            shell_quote(path.parent().unwrap_or(path))
        ),
        Error::Corrupt {
            kind: Corruption::Replaced(_),
            ..
        } => "run this again: it reads the new file".to_string(),
        // A level's table in a table directory (not a raw copy, a
        // `scores.N` file or a work file) whose damage `build` of that
        // level finds: it replaces a table that does not open or fails its
        // whole-file checksum (which any damaged byte fails), not one
        // whose wrong values were written with valid checksums.
        Error::Corrupt { path, kind }
            if !matches!(
                kind,
                Corruption::ValueRange { .. }
                    | Corruption::BoardValueRange { .. }
                    | Corruption::Inconsistent { .. }
            ) && let Some((rules, seeds)) = table_level(path) =>
        {
            format!(
                "rebuild it: mancaladb build --rules {} --levels {seeds} --db {}",
                rules.name(),
                shell_quote(path.parent().unwrap_or(path))
            )
        }
        Error::Corrupt {
            kind: Corruption::NotCensusResults { .. },
            ..
        } => "move it away: the census neither uses nor replaces it".to_string(),
        Error::Corrupt {
            kind: Corruption::CensusRow { .. },
            ..
        } => "remove that row to compute it again".to_string(),
        Error::Corrupt {
            kind: Corruption::CensusCycles(_),
            ..
        } => "remove the file to compute it again".to_string(),
        // `build --wait` waits for a table directory's writer; the census
        // has no such flag, nor has `import`.
        Error::Locked { path, .. } if path.ends_with("omweso-census.lock") => {
            "wait for it to finish, then run the census again".to_string()
        }
        Error::Locked { .. } if waits => {
            "wait for it to finish, then run this again (`--wait` waits by itself)".to_string()
        }
        Error::Locked { .. } => "wait for it to finish, then run this again".to_string(),
        Error::TooLarge { .. } => "`mancaladb known` says what each level needs".to_string(),
        _ => return e.to_string(),
    };
    format!("{e}: {hint}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// A fresh directory of this test process.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mancaladb-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The error's own line, then the remedy.
    fn hint(e: Error) -> String {
        hint_in(e, false)
    }

    /// [`hint`] in a command that has `--wait` (`waits`) or not.
    fn hint_in(e: Error, waits: bool) -> String {
        let text = explain(&e, waits);
        let own = e.to_string();
        assert!(text.starts_with(&own), "{text}");
        text[own.len()..].to_string()
    }

    fn corrupt(path: &Path, kind: Corruption) -> Error {
        Error::Corrupt {
            path: path.to_path_buf(),
            kind,
        }
    }

    /// A missing level, or several, or lower levels, are remedied by the
    /// build of exactly what they read, written as `--levels` takes it.
    #[test]
    fn missing_levels_name_the_build_that_makes_them() {
        let dir = PathBuf::from("/t/my db");
        let level = Missing::Level {
            dir: dir.clone(),
            rules: "awari",
            seeds: 36,
        };
        assert_eq!(
            hint(Error::Missing(level)),
            ": build it and the levels it reads: mancaladb build --rules awari --levels 0..34,36 --db '/t/my db'"
        );
        let some = Missing::SomeLevels {
            dir: dir.clone(),
            rules: "abapa",
            seeds: vec![36, 3],
        };
        assert_eq!(
            hint(Error::Missing(some)),
            ": build them and the levels they read: mancaladb build --rules abapa --levels 0..34,36 --db '/t/my db'"
        );
        let below = Missing::Below {
            dir,
            rules: "awari",
            reader: 20,
            absent: vec![18, 3],
            asked: vec![20],
        };
        assert_eq!(
            hint(Error::Missing(below)),
            ": build them with the levels asked for (and your other flags): mancaladb build --rules awari --levels 3,18,20 --db '/t/my db'"
        );
    }

    /// A directory with no levels of the rules asked for: it may hold
    /// published files (awari only) or the other rule set's tables, and
    /// the remedy says which; else it is to be built.
    #[test]
    fn a_directory_without_levels_is_told_what_it_holds() {
        let dir = scratch("no-levels");
        let none = |rules| {
            hint(Error::Missing(Missing::Levels {
                dir: dir.clone(),
                rules,
            }))
        };
        let q = shell_quote(&dir);
        assert_eq!(
            none("awari"),
            format!(": build them: mancaladb build --rules awari --db {q}")
        );

        std::fs::write(dir.join("scores.3"), b"").unwrap();
        assert_eq!(
            none("awari"),
            format!(
                ": it holds scores.N files: read them in place with --vu {q}, or import them: mancaladb import --vu {q} --db DB"
            )
        );
        assert_eq!(
            none("abapa"),
            format!(": build them: mancaladb build --rules abapa --db {q}")
        );

        std::fs::write(dir.join("abapa-04.mdb"), b"").unwrap();
        assert_eq!(other_rules_present(&dir, "awari"), Some("abapa"));
        assert_eq!(other_rules_present(&dir, "abapa"), None);
        std::fs::remove_file(dir.join("scores.3")).unwrap();
        assert_eq!(
            none("awari"),
            format!(
                ": it holds abapa levels: read them with --rules abapa, or build awari ones: mancaladb build --rules awari --db {q}"
            )
        );
        assert_eq!(
            none("abapa"),
            format!(": build them: mancaladb build --rules abapa --db {q}")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A damaged table is rebuilt by `build` of its level, unless its
    /// values are wrong under valid checksums (which `build` would not
    /// replace); a damaged file that is no table gets no such remedy.
    #[test]
    fn damaged_tables_are_rebuilt_by_level() {
        let db = mancaladb::db::Db::new("/t/db");
        assert_eq!(
            table_level(&db.table_path(Rules::Abapa, 17)),
            Some((Rules::Abapa, 17))
        );
        assert_eq!(
            table_level(&db.table_path(Rules::Awari, 0)),
            Some((Rules::Awari, 0))
        );
        assert_eq!(
            table_level(&db.table_path(Rules::Awari, MAX_SEEDS)),
            Some((Rules::Awari, MAX_SEEDS))
        );
        assert_eq!(table_level(Path::new("/t/db/awari-14.tmp")), None);
        assert_eq!(table_level(Path::new("/t/db/raw/awari/scores.14")), None);

        let table = db.table_path(Rules::Abapa, 17);
        assert_eq!(
            hint(corrupt(&table, Corruption::FileChecksum)),
            ": rebuild it: mancaladb build --rules abapa --levels 17 --db /t/db"
        );
        let range = Corruption::ValueRange {
            index: 5,
            value: 40,
            seeds: 17,
        };
        assert_eq!(hint(corrupt(&table, range)), "");
        let scores = Path::new("/t/vu/scores.17");
        assert_eq!(hint(corrupt(scores, Corruption::FileChecksum)), "");
    }

    /// The other damaged files: work files go with their directory;
    /// census files are moved away or a row recomputed; a replaced file is
    /// read again.
    #[test]
    fn damaged_work_and_census_files() {
        let checkpoint = Path::new("/t/db/raw/awari/work.30/state.5");
        assert_eq!(
            hint(corrupt(checkpoint, Corruption::Checkpoint("state"))),
            ": removing /t/db/raw/awari/work.30 starts the level, or the check, afresh"
        );
        let table = Path::new("/t/db/awari-03.mdb");
        let replaced = Corruption::Replaced(Box::new(Corruption::FileChecksum));
        assert_eq!(
            hint(corrupt(table, replaced)),
            ": run this again: it reads the new file"
        );
        let census = Path::new("/t/c/omweso-census.jsonl");
        let not_results = Corruption::NotCensusResults {
            row_start: "{\"k\":",
        };
        assert_eq!(
            hint(corrupt(census, not_results)),
            ": move it away: the census neither uses nor replaces it"
        );
        let row = Corruption::CensusRow {
            seeds: 9,
            again: "{}".into(),
        };
        assert_eq!(
            hint(corrupt(census, row)),
            ": remove that row to compute it again"
        );
        let cycles = Corruption::CensusCycles("short".into());
        assert_eq!(
            hint(corrupt(census, cycles)),
            ": remove the file to compute it again"
        );
    }

    /// A lock names what to do about its holder; the census has no
    /// `--wait`. A level too large points to `known`; a VU directory's
    /// missing files get the library's remedy.
    #[test]
    fn locks_sizes_and_published_files() {
        let locked = |path: &str| Error::Locked {
            path: PathBuf::from(path),
            holder: "pid 7".into(),
        };
        assert_eq!(
            hint(locked("/t/c/omweso-census.lock")),
            ": wait for it to finish, then run the census again"
        );
        assert_eq!(
            hint_in(locked("/t/db/mancaladb.lock"), true),
            ": wait for it to finish, then run this again (`--wait` waits by itself)"
        );
        assert_eq!(
            hint(locked("/t/db/mancaladb.lock")),
            ": wait for it to finish, then run this again"
        );
        let large = Error::TooLarge {
            level: 40,
            why: "needs 80 GB".into(),
        };
        assert_eq!(
            hint(large),
            ": `mancaladb known` says what each level needs"
        );
        let vu = Missing::VuLevel {
            dir: PathBuf::from("/t/vu"),
            seeds: 5,
        };
        let remedy = vu.vu_remedy().unwrap();
        assert_eq!(hint(Error::Missing(vu)), format!(": {remedy}"));
        assert_eq!(hint(Error::Invalid("bad".into())), "");
    }

    /// Durations in the unit that reads best, switching at 2 minutes, 2
    /// hours and 2 days.
    #[test]
    fn durations_in_words() {
        use output::human_seconds;
        assert_eq!(human_seconds(0.4), "0 s");
        assert_eq!(human_seconds(119.4), "119 s");
        assert_eq!(human_seconds(120.0), "2 min");
        assert_eq!(human_seconds(7199.0), "120 min");
        assert_eq!(human_seconds(7200.0), "2.0 h");
        assert_eq!(human_seconds(172_799.0), "48.0 h");
        assert_eq!(human_seconds(172_800.0), "2.0 days");
    }
}
