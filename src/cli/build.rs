//! `build`: solve levels into a table directory and report each one.

use std::ops::ControlFlow;
use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::build::{Build, LevelReport};
use mancaladb::db::Db;
use mancaladb::progress::{Progress, Terminal};

use super::args::{self, Where};
use super::output::out;

/// Options of `build`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    at: Where,
    /// Build levels 0..=N.
    #[arg(long, default_value_t = 16, value_parser = args::oware_level, allow_negative_numbers = true)]
    max_seeds: usize,
    /// Build these levels instead, e.g. 0..34,36 (the levels the 36-seed
    /// start rests on: level N never reads level N-1). Each level's lower
    /// levels must be among them or built already.
    #[arg(long, value_parser = args::oware_level_set, conflicts_with = "max_seeds", allow_hyphen_values = true)]
    levels: Option<args::LevelSet>,
    /// Worker threads (default: all cores; with --distributed, per rank:
    /// the cores of its machine shared among the ranks there).
    #[arg(long, value_parser = args::threads, allow_negative_numbers = true)]
    threads: Option<usize>,
    /// Build together with the other ranks of an MPI job, each solving a
    /// slice of every level (run under mpirun; needs a build with
    /// `--features mpi`).
    #[arg(long)]
    distributed: bool,
    /// If another process is writing to the directory, wait for it to
    /// finish instead of stopping at once.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    raw: args::RawCache,
}

/// Builds the levels asked for.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    let db = Db::new(&a.at.db).with_raw_cache(a.raw.raw_cache.0);
    let levels = a
        .levels
        .map_or_else(|| (0..=a.max_seeds).collect(), |l| l.0);
    if a.distributed {
        return distributed(&db, a.at.rules, levels, a.threads, a.wait);
    }
    super::start_workers(a.threads)?;
    if let Some((var, ranks)) = launched_as_ranks() {
        // Each would build alone, and all but one would find the
        // directory locked by the first.
        return Err(Error::Invalid(format!(
            "started as one of {ranks} MPI ranks ({var}={ranks}) without --distributed: \
             add --distributed to build together, or run one process"
        )));
    }
    // Run on one of the workers, not beside them: a level makes thousands
    // of parallel calls (each round, seed batch and sweep), and each call
    // from outside the pool puts this thread to sleep and wakes it again,
    // while the workers spin between calls. In the pool, the calling
    // worker takes a share of each call itself: level 20 built 6..10 %
    // faster on one 2-core machine (4..9 % less CPU), about 2 % on
    // another (BENCHMARKS, "Fifty-eighth and fifty-ninth sessions"). A
    // distributed build stays on the main thread, which MPI may require
    // of its calls.
    rayon::scope(|_| {
        Build::new(&db, a.at.rules, levels)
            .progress(Progress::to(&Terminal))
            .wait_for_writer(a.wait)
            .run_with(print_level)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `build --distributed`: this process is one rank of an MPI job. An error
/// or a panic on any rank stops every rank (the levels already written stay
/// valid), as do ranks that disagree on what to build or where
/// ([`Error::Disagree`]); rank 0 alone prints progress, the others their
/// own warnings. Unless told (`threads`, from `--threads`, or
/// `RAYON_NUM_THREADS`), the ranks on
/// one machine share its cores: each takes cores / ranks there (at least
/// one) rather than a thread per core each.
#[cfg(feature = "mpi")]
fn distributed(
    db: &Db,
    rules: mancaladb::oware::Rules,
    levels: Vec<usize>,
    threads: Option<usize>,
    wait: bool,
) -> Result<ExitCode, Error> {
    use mancaladb::exchange::{Exchange, mpi::Mpi, ranks_on_this_machine};
    let mpi = Mpi::init(|rank, ranks| {
        super::output::diag(format_args!(
            "mancaladb: rank {rank} of {ranks} panicked; stopping every rank"
        ))
    })?;
    // A collective: every rank counts, also one given its own --threads.
    let here = ranks_on_this_machine(&mpi);
    let (rank, ranks) = (mpi.rank(), mpi.ranks());
    let warnings = RankWarnings(rank);
    let progress = if rank == 0 {
        Progress::to(&Terminal)
    } else {
        Progress::to(&warnings)
    };
    // From here on every error goes through the match below, which stops
    // every rank: a rank that returned alone would leave the others waiting
    // for it in a collective, and itself in MPI's finalize, for good.
    let built = mpi.stop_on_panic(|| {
        // A share of the cores for each rank on this machine, unless told
        // by `--threads` or `RAYON_NUM_THREADS` (checked as for one
        // process).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = match threads {
            Some(t) => t,
            None => super::threads_from_env()?.unwrap_or((cores / here).max(1)),
        };
        super::start_workers(Some(threads))?;
        Build::new(db, rules, levels)
            .exchange(&mpi)
            .progress(progress)
            .wait_for_writer(wait)
            .run_with(print_level)
    });
    match built {
        Ok(_) => Ok(ExitCode::SUCCESS),
        // Every rank learns of a disagreement at once: the rank at fault
        // alone says what it has and stops the job.
        Err(e @ Error::Disagree { rank: at_fault, .. }) => {
            if at_fault != rank {
                std::thread::sleep(std::time::Duration::from_secs(60));
            }
            super::output::diag(format_args!(
                "mancaladb: {}; stopping every rank",
                super::explain(&e, true)
            ));
            mpi.abort(2)
        }
        Err(e) => {
            // The remedy of a missing level is a build command: one run
            // as this job is, not as one process (which the memory check
            // may refuse where the job fits).
            let as_this_job = match e {
                Error::Missing(_) => {
                    " (run that build as this job runs: under mpirun, with --distributed)"
                }
                _ => "",
            };
            super::output::diag(format_args!(
                "mancaladb: rank {rank} of {ranks}: {}; stopping every rank{as_this_job}",
                super::explain(&e, true)
            ));
            mpi.abort(2)
        }
    }
}

/// What a rank other than 0 tells: its warnings alone (such as a damaged
/// work file of its own), each naming the rank; rank 0 tells the rest.
#[cfg(feature = "mpi")]
struct RankWarnings(usize);

#[cfg(feature = "mpi")]
impl mancaladb::progress::Observer for RankWarnings {
    fn stage(&self, _: &str, _: u64) -> Option<Box<dyn mancaladb::progress::StageSink + '_>> {
        None
    }

    fn notice(&self, notice: &mancaladb::progress::Notice) {
        if notice.is_warning() {
            super::output::diag(format_args!(
                "{}rank {}: {notice}",
                mancaladb::progress::WARNING,
                self.0
            ));
        }
    }
}

/// Without the `mpi` feature there is no distributed build.
#[cfg(not(feature = "mpi"))]
fn distributed(
    _: &Db,
    _: mancaladb::oware::Rules,
    _: Vec<usize>,
    _: Option<usize>,
    _: bool,
) -> Result<ExitCode, Error> {
    Err(Error::Invalid(
        "--distributed needs a build with MPI: cargo build --release --features mpi (see README)"
            .into(),
    ))
}

/// The variable and number of processes when an MPI launcher (Open MPI's
/// `mpirun`, or one that speaks PMI, such as MPICH's) started this one
/// among several.
fn launched_as_ranks() -> Option<(&'static str, u64)> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .into_iter()
        .find_map(|var| {
            let ranks = std::env::var(var).ok()?.trim().parse::<u64>().ok()?;
            (ranks > 1).then_some((var, ranks))
        })
}

/// Prints the line of a level done; it never stops the build.
fn print_level(r: &LevelReport) -> ControlFlow<()> {
    if r.skipped {
        out!(
            "level {:>2}: {:>12} positions, already built ({} bytes)",
            r.seeds,
            r.positions,
            r.file_bytes
        );
        return ControlFlow::Continue(());
    }
    let rate = r.positions as f64 / r.seconds.max(1e-9);
    let mib = |b: Option<u64>| {
        b.map_or("?".to_string(), |b| {
            format!("{:.0} MiB", b as f64 / 1048576.0)
        })
    };
    // The largest rank's RssAnon, per position of its slice (slices are
    // even to a chunk).
    let rss = format!(
        "{} (RssAnon {}, {:.2} bytes/pos{})",
        mib(r.peak_rss),
        mib(r.peak_anon),
        r.peak_anon.unwrap_or(0) as f64 * r.ranks as f64 / r.positions.max(1) as f64,
        if r.ranks > 1 {
            " of a rank's slice"
        } else {
            ""
        }
    );
    let read = r.disk_read.map_or(String::new(), |b| {
        format!(", {:.2} GB read from disk", b as f64 / 1e9)
    });
    let resumed = match (r.resumed_at, r.resumed_forward) {
        (Some(0), _) => ", resumed with every threshold done".to_string(),
        (Some(t), _) => format!(", resumed at threshold {t}"),
        (None, Some(f)) => format!(", resumed after {} part {} of {}", f.walk, f.done, f.parts),
        (None, None) => String::new(),
    };
    let replaced = r.replaced.as_ref().map_or(String::new(), |why| {
        format!(", replaced a damaged table ({why})")
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
        "level {:>2}: {:>12} positions in {:>7.2} s, {:>10.0} pos/s ({:.0}/thread), peak RSS {rss}, {} bytes ({:.3} bits/pos){read}{exchanged}{resumed}{replaced}",
        r.seeds,
        r.positions,
        r.seconds,
        rate,
        rate / r.threads.max(1) as f64,
        r.file_bytes,
        r.file_bytes as f64 * 8.0 / r.positions as f64
    );
    ControlFlow::Continue(())
}
