//! The exhaustive loop census: for every configuration of `k` seeds on one
//! side (opponent empty, so pure counter-clockwise relay), which starts loop.
//!
//! Rotating a side rotates its relays, so the pair (configuration `c`, start
//! `s`) behaves exactly like (`c` rotated to bring `s` to pit 0, start 0). The
//! census therefore walks every configuration from pit 0 only, 1/16 of the
//! pairs, and multiplies. Loops are rare: a cycle found is walked once more
//! to remember its states (brought to start 0), so that the other starts on
//! it are recognised by a lookup instead of a walk of the whole budget.
//!
//! `cfg_any` and `cfg_all` come from the remembered states alone, without a
//! table of configurations. For a remembered state `s` let `M(s)` be the
//! rotations `d` with `s` rotated by `d` also remembered (the looping starts
//! of `s`, relative to pit 0) and `L(s)` the pits holding 2 or more (its
//! legal starts). The configuration `c` with `c` rotated to `r` equal to `s`
//! has looping starts `r + M(s)`; counting `c` only at its smallest looping
//! start `r` counts every looping configuration once, and that start is the
//! smallest exactly when `r + d < 16` for every `d` in `M(s)`, that is for
//! `16 - max M(s)` values of `r`. So `cfg_any` is the sum of `16 - max M(s)`
//! over remembered states, and `cfg_all` the same sum over those with
//! `M(s) = L(s)`: at most fifteen lookups per state, no memory beyond the
//! set.
//!
//! Rows are computed a batch of chunks at a time and can be saved between
//! batches ([`checkpoint`]); finished rows go to a results file ([`store`]).

pub mod atlas;
pub mod checkpoint;
pub mod store;

use std::collections::HashSet;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::relay::{Relay, run};
use super::side::{PITS, Side};
use crate::checkpoint_file::CheckpointClock;
use crate::compose::{Ranker, binomial};
use crate::error::{Corruption, Error, Result};
use crate::progress::{Notice, Progress};
use checkpoint::Checkpoint;
use store::{Rejected, Store};

/// One row of the census.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// Seeds on the side.
    pub seeds: usize,
    /// Configurations, rotations counted as different: `C(k+15, 15)`.
    pub configs: u64,
    /// (configuration, start) pairs whose start holds 2 or more seeds.
    pub legal_pairs: u64,
    /// Pairs whose move never ends.
    pub loop_pairs: u64,
    /// Configurations with at least one looping start.
    pub cfg_any: u64,
    /// Configurations with a legal start, all of whose legal starts loop.
    pub cfg_all: u64,
    /// Distinct relay cycles, counted up to rotation.
    pub cycles: u64,
    /// Shortest and longest cycle period, in laps (`period_min`,
    /// `period_max` in JSON, both null without cycles).
    #[serde(flatten, with = "period_fields")]
    pub period: Option<(u64, u64)>,
    /// The most laps of a move that ends, counting its last lap.
    pub longest_finite: u64,
    /// Pairs still undecided after the lap budget (0 for a complete row).
    pub undecided: u64,
    /// The lap budget used.
    pub budget: u64,
}

impl Row {
    /// The row as one JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("rows serialize")
    }
}

/// `period` as the two JSON fields `period_min` and `period_max`.
pub(super) mod period_fields {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Fields {
        period_min: Option<u64>,
        period_max: Option<u64>,
    }

    pub fn serialize<S: Serializer>(p: &Option<(u64, u64)>, s: S) -> Result<S::Ok, S::Error> {
        Fields {
            period_min: p.map(|p| p.0),
            period_max: p.map(|p| p.1),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<(u64, u64)>, D::Error> {
        let f = Fields::deserialize(d)?;
        period(f.period_min, f.period_max).map_err(D::Error::custom)
    }

    /// The period of the two fields: both given, or both null.
    pub fn period(min: Option<u64>, max: Option<u64>) -> Result<Option<(u64, u64)>, &'static str> {
        match (min, max) {
            (Some(a), Some(b)) => Ok(Some((a, b))),
            (None, None) => Ok(None),
            _ => Err("period_min and period_max must both be given or both null"),
        }
    }
}

/// One relay cycle, up to rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Found {
    /// Its canonical state: of its states brought to start 0 (the pit
    /// lifted moved to pit 0), the least in pit order (pit 0 compared
    /// first). The move from pit 0 of this side loops.
    pub side: [u8; PITS],
    /// Laps in one period.
    pub period: u64,
    /// Seeds sown in one period.
    pub sown: u64,
}

impl Found {
    /// Its side, if it can start a relay cycle: at least one lap in a
    /// period, and at least 2 seeds in pit 0, the fewest a move lifts (a
    /// "lap" of fewer would leave the side as it is, a false loop of
    /// period 1). Why not otherwise: for files a user may edit.
    pub fn start(&self) -> std::result::Result<Side, String> {
        let side = Side::from_pits(self.side);
        if self.period == 0 {
            return Err(format!("{side}: a period of 0 laps"));
        }
        if self.side[0] < 2 {
            return Err(format!(
                "{side}: pit 0 holds {} seeds, fewer than a move lifts",
                self.side[0]
            ));
        }
        Ok(side)
    }
}

/// Cycles found so far: their states brought to start 0, and one entry per
/// class (up to rotation).
#[derive(Default)]
struct Cycles {
    states: HashSet<u128>,
    found: Vec<Found>,
}

impl Cycles {
    /// Remembers the cycle through `side` (start 0, known to loop with
    /// `period` laps sowing `sown` seeds, and to come back to itself up to
    /// rotation after `laps`): its states brought to start 0 are those of
    /// the first `laps` laps (fact 5 of [`super::relay`]).
    fn add(&mut self, side: Side, laps: u64, period: u64, sown: u64) {
        let mut states = Vec::with_capacity(laps as usize);
        let mut s = side;
        for _ in 0..laps {
            states.push(s.0);
            s.lap_from_zero();
        }
        let least = states
            .iter()
            .copied()
            .min_by_key(|s| s.swap_bytes())
            .expect("a period is at least one lap");
        self.found.push(Found {
            side: Side(least).pits(),
            period,
            sown,
        });
        self.states.extend(states);
    }

    /// The cycles of a checkpoint, each walked again and checked.
    fn rebuild(found: &[Found], seeds: usize) -> std::result::Result<Cycles, String> {
        let mut c = Cycles::default();
        for f in found {
            let side = f.start()?;
            if side.seeds() != seeds || c.states.contains(&side.0) {
                return Err(format!("cycle {side} is not a new cycle of {seeds} seeds"));
            }
            match run(side, 0, f.period) {
                Relay::Loops { period, sown, laps } if (period, sown) == (f.period, f.sown) => {
                    c.add(side, laps, period, sown)
                }
                _ => {
                    return Err(format!(
                        "{side} from pit 0 does not loop with period {}",
                        f.period
                    ));
                }
            }
        }
        Ok(c)
    }
}

/// Laps walked before asking whether a start lies on a known cycle: most
/// moves end well before this.
const QUICK: u64 = 64;

/// Start-0 configurations per chunk (one task, one progress step).
pub const CHUNK: u64 = 1 << 16;

/// Chunks per batch: a checkpoint can be written between batches.
const BATCH: u64 = 64;

/// Rejected lines of the results file reported one by one; the others are
/// counted in one notice.
const REJECTED_SHOWN: usize = 10;

/// Start-0 configurations the census of `seeds` seeds walks: those with 2 or
/// more seeds in pit 0, `C(seeds + 13, 15)`.
pub fn walked(seeds: usize) -> u64 {
    if seeds < 2 {
        0
    } else {
        binomial(seeds as u64 + 13, 15) as u64
    }
}

/// Counts the configurations of `seeds` seeds, walking at most `budget` laps
/// per start (`check_rows` first).
pub fn census(seeds: usize, budget: u64, progress: Progress<'_>) -> Result<Row> {
    check_rows(seeds, budget)?;
    Ok(count(seeds, budget, progress, None, None).0)
}

/// Refuses rows that cannot be counted: above `MAX_SEEDS` seeds on the
/// side (`highest`, the largest asked for), or a lap budget of 0.
fn check_rows(highest: usize, budget: u64) -> Result<()> {
    if budget == 0 {
        return Err(Error::Invalid("a lap budget must be at least 1".into()));
    }
    match highest > super::side::MAX_SEEDS {
        true => Err(Error::Invalid(format!(
            "k = {highest}: a side holds at most {} seeds",
            super::side::MAX_SEEDS
        ))),
        false => Ok(()),
    }
}

/// Where and how often [`count`] hands over its progress.
type Checkpoints<'a> = (Duration, &'a mut dyn FnMut(&Checkpoint));

/// The census of `seeds` seeds from the checkpoint `resume` (or from the
/// start), handing its progress to the checkpoint writer between batches,
/// at most once per its interval; the row and the cycles found.
fn count(
    seeds: usize,
    budget: u64,
    progress: Progress<'_>,
    resume: Option<(Checkpoint, Cycles)>,
    mut checkpoints: Option<Checkpoints>,
) -> (Row, Vec<Found>) {
    assert!(seeds <= super::side::MAX_SEEDS && budget > 0);
    let starts = walked(seeds);
    let rest = seeds.saturating_sub(2);
    let ranker = Ranker::new(PITS, rest, None);
    let chunks = starts.div_ceil(CHUNK);
    let (mut done, mut longest, mut undecided, cycles) = match resume {
        Some((c, cycles)) => (c.chunks_done, c.longest_finite, c.undecided, cycles),
        None => (0, 0, 0, Cycles::default()),
    };
    let cycles = Mutex::new(cycles);
    let stage = progress.stage(format!("census k={seeds}"), starts);
    let mut clock = CheckpointClock::new(checkpoints.as_ref().map(|(every, _)| *every));
    stage.resumed((done * CHUNK).min(starts));
    while done < chunks {
        let batch = done..(done + BATCH).min(chunks);
        let (l, u) = batch
            .clone()
            .into_par_iter()
            .map(|c| {
                let ranks = c * CHUNK..((c + 1) * CHUNK).min(starts);
                let n = ranks.end - ranks.start;
                let walked = walk_ranks(&ranker, rest, ranks, budget, &cycles);
                stage.inc(n);
                walked
            })
            .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1 + b.1));
        (done, longest, undecided) = (batch.end, longest.max(l), undecided + u);
        if let Some((_, save)) = checkpoints.as_mut()
            && done < chunks
            && clock.due()
        {
            let found = cycles.lock().expect("no panics while held").found.clone();
            save(&Checkpoint {
                seeds,
                budget,
                chunk: CHUNK,
                chunks_done: done,
                longest_finite: longest,
                undecided,
                cycles: found,
            });
            clock.reset();
        }
    }
    stage.finish();
    let cycles = cycles.into_inner().expect("no panics while held");
    let (cfg_any, cfg_all) = configurations_looping(&cycles.states);
    let periods = cycles.found.iter().map(|f| f.period);
    let row = Row {
        seeds,
        configs: binomial(seeds as u64 + 15, 15) as u64,
        legal_pairs: PITS as u64 * starts,
        loop_pairs: PITS as u64 * cycles.states.len() as u64,
        cfg_any,
        cfg_all,
        cycles: cycles.found.len() as u64,
        period: periods.clone().min().zip(periods.max()),
        longest_finite: longest,
        undecided: PITS as u64 * undecided,
        budget,
    };
    (row, cycles.found)
}

/// The start-0 configuration after `side` in rank order: [`Ranker::advance`]
/// done on the packed side. With `x` the side less the 2 seeds every start-0
/// configuration has in pit 0 (the `rest` seeds the ranker orders), the
/// successor takes the lowest non-empty pit `k` of `x`, holding `t`, moves
/// one of its seeds to pit `k + 1` and the other `t - 1` to pit 0. Mostly
/// `k = 0`: then one seed moves from pit 0 to pit 1, adding `255`.
/// Otherwise pit 0 is empty in `x`, pit `k` is emptied, pit `k + 1` gains
/// one and pit 0 gets `t - 1`, done on the two 64-bit halves (pits 0..7 and
/// 8..15). `side` must not be the last configuration (all of `x` in pit 15).
#[inline]
fn next_start(side: Side) -> Side {
    if side.get(0) > 2 {
        return Side(side.0 + 255);
    }
    let (mut low, mut high) = (side.0 as u64 - 2, (side.0 >> 64) as u64);
    if low != 0 {
        // 1 <= k <= 7.
        let at = low.trailing_zeros() & !7;
        let t = (low >> at) & 0xff;
        low = low - (t << at) + (t - 1);
        if at < 56 {
            low += 1 << (at + 8);
        } else {
            high += 1;
        }
    } else {
        // 8 <= k <= 14.
        let at = high.trailing_zeros() & !7;
        let t = (high >> at) & 0xff;
        high = high - (t << at) + (1 << (at + 8));
        low = t - 1;
    }
    Side(((high as u128) << 64) | u128::from(low + 2))
}

/// Walks the start-0 configurations of `ranks` (pit 0 holding 2 seeds more
/// than the ranker's board of `rest` seeds of that rank): the most laps of a
/// move that ends among them, and how many stayed undecided.
fn walk_ranks(
    ranker: &Ranker,
    rest: usize,
    ranks: Range<u64>,
    budget: u64,
    cycles: &Mutex<Cycles>,
) -> (u64, u64) {
    let mut x = [0u8; PITS];
    ranker.unrank(rest, ranks.start, &mut x);
    let mut side = Side::from_pits(x);
    side.set(0, x[0] + 2);
    let (mut longest, mut undecided) = (0u64, 0u64);
    for i in ranks.clone() {
        if i > ranks.start {
            side = next_start(side);
        }
        match walk(side, budget, cycles) {
            Walk::Ends(laps) => longest = longest.max(laps),
            Walk::Cycle => {}
            Walk::Undecided => undecided += 1,
        }
    }
    (longest, undecided)
}

enum Walk {
    Ends(u64),
    Cycle,
    Undecided,
}

/// Decides the move from pit 0 of `side`, recording a newly found cycle.
/// A short walk first decides most moves; a move it leaves undecided is
/// looked up among the cycles found before it is walked with the whole
/// budget.
fn walk(side: Side, budget: u64, cycles: &Mutex<Cycles>) -> Walk {
    let known = || {
        cycles
            .lock()
            .expect("no panics while held")
            .states
            .contains(&side.0)
    };
    let decided = match run(side, 0, QUICK.min(budget)) {
        Relay::Undecided { .. } if budget <= QUICK => return Walk::Undecided,
        Relay::Undecided { .. } if known() => return Walk::Cycle,
        Relay::Undecided { .. } => run(side, 0, budget),
        quick => quick,
    };
    match decided {
        Relay::Ends { laps, .. } => Walk::Ends(laps),
        Relay::Undecided { .. } => Walk::Undecided,
        Relay::Loops { period, sown, laps } => {
            let mut c = cycles.lock().expect("no panics while held");
            // Found before (by this walk's short start, or by another
            // thread meanwhile).
            if !c.states.contains(&side.0) {
                c.add(side, laps, period, sown);
            }
            Walk::Cycle
        }
    }
}

/// From the looping states brought to start 0, the configurations with a
/// looping start and those whose every legal start loops (the method is in
/// the module documentation).
fn configurations_looping(states: &HashSet<u128>) -> (u64, u64) {
    states
        .par_iter()
        .map(|&s| {
            let side = Side(s);
            let (mut max_d, mut all) = (0u64, true);
            for d in 1..PITS {
                let legal = side.get(d) >= 2;
                // Fact 3: a looping start has a non-empty pit behind it.
                let loops = legal && side.get(d - 1) > 0 && states.contains(&side.rotated_to(d).0);
                if loops {
                    max_d = d as u64;
                }
                all &= loops == legal;
            }
            let n = PITS as u64 - max_d;
            (n, if all { n } else { 0 })
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// How a census run goes.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// Most laps to follow per start before counting a start undecided.
    pub budget: u64,
    /// Least time between two checkpoints of a row (zero: after every batch).
    pub checkpoint_every: Duration,
    /// Where progress and notes go.
    pub progress: Progress<'a>,
}

/// What a census run would cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Rows to compute (not already saved).
    pub rows: Vec<usize>,
    /// Start-0 configurations they walk, less those their checkpoints
    /// have walked.
    pub configurations: u64,
    /// Configurations walked per second in a timed sample here.
    pub rate: f64,
    /// `configurations / rate`.
    pub seconds: f64,
}

/// Laps followed per start in an estimate's sample, so that a sample at a
/// large seed count cannot spend minutes on one long cycle.
const SAMPLE_BUDGET: u64 = 1_000_000;

/// An estimate's sample is timed over at least this long, unless it has
/// done [`SAMPLE_ROUNDS`] rounds by then.
const SAMPLE_TIME: Duration = Duration::from_millis(200);

/// Most rounds of 16 runs in an estimate's sample.
const SAMPLE_ROUNDS: u64 = 64;

/// What computing the rows of `range` not yet saved in `dir` would cost;
/// with `cycles`, also the rows whose cycles are not kept there, which
/// [`atlas_of`] computes again.
pub fn plan(
    dir: &Path,
    range: RangeInclusive<usize>,
    budget: u64,
    cycles: bool,
) -> Result<Estimate> {
    let store = Store::open(dir)?;
    check_places(dir, range.clone(), budget)?;
    let mut todo = Vec::new();
    let mut configurations = 0;
    for k in range {
        let saved = store.row(k, budget).is_some();
        let cycles_kept = !cycles || atlas::path(dir, k, budget).exists();
        if saved && cycles_kept {
            continue;
        }
        todo.push(k);
        // A row not saved resumes from its checkpoint, if it has one.
        let done = match saved {
            true => 0,
            false => match checkpoint::load(&checkpoint::path(dir, k, budget), k, budget, CHUNK)? {
                Ok(Some(c)) => c.walked(),
                _ => 0,
            },
        };
        configurations += walked(k) - done;
    }
    Ok(estimate(&todo, configurations, budget))
}

/// Times a sample of the largest of `rows` (rounds of 16 runs of 4096
/// configurations spread over its configurations, for at least
/// [`SAMPLE_TIME`] or [`SAMPLE_ROUNDS`] rounds) and extrapolates to the
/// `configurations` left to walk in them.
fn estimate(rows: &[usize], configurations: u64, budget: u64) -> Estimate {
    let Some(&k) = rows.iter().max().filter(|&&k| k >= 2) else {
        return Estimate {
            rows: rows.to_vec(),
            configurations,
            rate: 0.0,
            seconds: 0.0,
        };
    };
    let (starts, rest) = (walked(k), k - 2);
    let ranker = Ranker::new(PITS, rest, None);
    let cycles = Mutex::new(Cycles::default());
    let sample = CHUNK / 16;
    // The pool's threads start before the clock does, and the sample goes
    // on, a round of 16 runs further along each time, until it has taken
    // long enough to be timed: one round of a small row is a millisecond
    // or two, less than a time slice on a busy machine.
    rayon::broadcast(|_| ());
    let t = Instant::now();
    let mut walked_here = 0u64;
    for round in 0..SAMPLE_ROUNDS {
        walked_here += (0..16u64)
            .into_par_iter()
            .map(|i| {
                let from = (starts / 16 * i + round * sample) % starts;
                let n = sample.min(starts - from);
                let budget = budget.min(SAMPLE_BUDGET);
                walk_ranks(&ranker, rest, from..from + n, budget, &cycles);
                n
            })
            .sum::<u64>();
        if t.elapsed() >= SAMPLE_TIME {
            break;
        }
    }
    let rate = walked_here as f64 / t.elapsed().as_secs_f64().max(1e-9);
    Estimate {
        rows: rows.to_vec(),
        configurations,
        rate,
        seconds: configurations as f64 / rate,
    }
}

/// A row resumed from a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Resumed {
    /// Seeds of the row.
    pub seeds: usize,
    /// Start-0 configurations already walked when it was resumed.
    pub from: u64,
}

/// The result of [`run_saved`].
#[derive(Debug)]
pub struct Outcome {
    /// The rows asked for, in order, as far as they were computed.
    pub rows: Vec<Row>,
    /// Lines of the results file that were not used.
    pub rejected: Vec<Rejected>,
    /// Rows resumed from a checkpoint.
    pub resumed: Vec<Resumed>,
    /// Seed counts of the rows computed by this run (the others were saved).
    pub computed: Vec<usize>,
    /// Saving a row failed: the rows computed are in `rows`, the rest of
    /// the range was not computed.
    pub save_error: Option<Error>,
}

/// A census directory held by this process: the census lock
/// (`omweso-census.lock`) is taken when it is opened and released when it
/// is dropped, so that everything done through it, the rows
/// ([`Census::run`]) and the atlas with the cycles files it writes
/// ([`Census::atlas`]), is done by one census at a time. (A build in the
/// same directory takes another lock and may go on.)
#[derive(Debug)]
pub struct Census {
    dir: PathBuf,
    /// The directories [`Census::open`] made, innermost first.
    made: Vec<PathBuf>,
    lock: crate::lock::DirLock,
}

/// The census lock's file in `dir`.
fn lock_path(dir: &Path) -> PathBuf {
    dir.join("omweso-census.lock")
}

impl Census {
    /// Takes the census lock of `dir` (failing at once with
    /// [`Error::Locked`] if another census holds it) after checking that
    /// `dir` can be written, and removes what killed writes left there.
    /// The directories it had to make go again if it fails (each only while
    /// empty; see [`Census::abandon`]).
    pub fn open(dir: &Path) -> Result<Census> {
        let made = store::check_writable(dir)?;
        let lock = match crate::lock::DirLock::acquire_file(&lock_path(dir)) {
            Ok(lock) => lock,
            // Never the lock's file here: another census may hold it.
            Err(e) => {
                remove_made(&made);
                return Err(e);
            }
        };
        // Each row's checkpoint has its own temporary name, which a row
        // finished later never writes again: what a killed write left goes
        // now (every census writer holds this lock).
        let census = Census {
            dir: dir.to_path_buf(),
            made,
            lock,
        };
        match crate::files::remove_leftovers(dir, |name| {
            name.starts_with("omweso-") && name.ends_with(".tmp")
        }) {
            Ok(()) => Ok(census),
            Err(e) => {
                census.abandon();
                Err(e)
            }
        }
    }

    /// Gives the census up before it has written anything (a run refused
    /// after the lock was taken): when [`Census::open`] made the directory,
    /// the lock's file and the directories it made (each only while empty)
    /// go while the lock is still held, so that no other census finds them
    /// half gone; then the lock.
    pub fn abandon(self) {
        if !self.made.is_empty() {
            let _ = std::fs::remove_file(lock_path(&self.dir));
            remove_made(&self.made);
        }
        drop(self.lock);
    }

    /// [`run_saved`] in this directory.
    pub fn run(&self, range: RangeInclusive<usize>, opt: Options<'_>) -> Result<Outcome> {
        run_locked(&self.dir, range, opt)
    }

    /// [`atlas_of`] in this directory.
    pub fn atlas(
        &self,
        range: RangeInclusive<usize>,
        opt: Options<'_>,
    ) -> Result<Vec<atlas::Entry>> {
        atlas_locked(&self.dir, range, opt)
    }
}

/// Runs the census for every seed count of `range`, keeping finished rows
/// in `dir/omweso-census.jsonl` ([`store`]), their cycles beside it
/// ([`atlas`]) and progress inside a row in a
/// checkpoint ([`checkpoint`]), so that a long run resumes where it stopped.
/// Fails before computing if `dir` is not writable or another census holds
/// it ([`Census`]).
pub fn run_saved(dir: &Path, range: RangeInclusive<usize>, opt: Options<'_>) -> Result<Outcome> {
    // Rows that cannot be counted are refused before the directory is made.
    check_rows(*range.end(), opt.budget)?;
    Census::open(dir)?.run(range, opt)
}

/// Refuses anything but a regular file (a directory, a named pipe) where a
/// row of `range` keeps its checkpoint or its cycles, before any row is
/// computed: such a place would fail the run after rows were computed, or
/// be removed as a spent checkpoint.
fn check_places(dir: &Path, range: RangeInclusive<usize>, budget: u64) -> Result<()> {
    for k in range {
        for path in [
            checkpoint::path(dir, k, budget),
            atlas::path(dir, k, budget),
        ] {
            crate::files::check_regular(&path, "expected a regular file")?;
        }
    }
    Ok(())
}

/// [`run_saved`], the caller holding the census lock.
fn run_locked(dir: &Path, range: RangeInclusive<usize>, opt: Options<'_>) -> Result<Outcome> {
    let budget = opt.budget;
    check_rows(*range.end(), budget)?;
    let mut store = Store::open(dir)?;
    store.check_aside()?;
    check_places(dir, range.clone(), budget)?;
    for r in store.rejected.iter().take(REJECTED_SHOWN) {
        opt.progress.notice(Notice::CensusLineRejected {
            path: store.path().to_path_buf(),
            line: r.line,
            why: r.why.clone(),
        });
    }
    if store.rejected.len() > REJECTED_SHOWN {
        opt.progress.notice(Notice::CensusMoreRejected {
            path: store.path().to_path_buf(),
            more: store.rejected.len() - REJECTED_SHOWN,
        });
    }
    let mut out = Outcome {
        rows: Vec::new(),
        rejected: store.rejected.clone(),
        resumed: Vec::new(),
        computed: Vec::new(),
        save_error: None,
    };
    let remove_checkpoint = |cp: PathBuf| {
        if let Err(e) = checkpoint::remove(&cp) {
            opt.progress.notice(Notice::CensusCheckpointNotRemoved {
                path: cp,
                why: e.to_string(),
            });
        }
    };
    for k in range {
        let cp = checkpoint::path(dir, k, budget);
        if let Some(r) = store.row(k, budget) {
            // A run killed after saving the row but before removing its
            // checkpoint left it.
            remove_checkpoint(cp);
            out.rows.push(r.clone());
            continue;
        }
        let resume = match checkpoint::load(&cp, k, budget, CHUNK)?.and_then(|c| {
            c.map(|c| Cycles::rebuild(&c.cycles, k).map(|cy| (c, cy)))
                .transpose()
        }) {
            Ok(r) => r,
            Err(why) => {
                opt.progress.notice(Notice::CensusRowAfresh {
                    path: cp.clone(),
                    why: why.to_string(),
                });
                None
            }
        };
        if let Some((c, _)) = &resume {
            let from = c.walked();
            opt.progress.notice(Notice::CensusRowResumed {
                seeds: k,
                path: cp.clone(),
                from,
                of: walked(k),
            });
            out.resumed.push(Resumed { seeds: k, from });
        }
        let mut warned = false;
        let mut save = |c: &Checkpoint| {
            if let Err(e) = checkpoint::save(&cp, c)
                && !warned
            {
                opt.progress
                    .notice(Notice::CensusCheckpointNotSaved { why: e.to_string() });
                warned = true;
            }
        };
        let (row, found) = count(
            k,
            budget,
            opt.progress,
            resume,
            Some((opt.checkpoint_every, &mut save)),
        );
        out.rows.push(row.clone());
        out.computed.push(k);
        let saved =
            atlas::save(&atlas::path(dir, k, budget), &found).and_then(|()| store.save(row));
        if let Err(e) = saved {
            out.save_error = Some(e);
            break;
        }
        remove_checkpoint(cp);
    }
    Ok(out)
}

/// The atlas of the cycles of every row of `range` (sorted by seeds, period
/// and state): from the cycles files the rows left, or, for rows saved
/// without one, by computing the row again (without replacing it; see
/// [`plan`] for its cost). Every row must be saved. A cycles file that
/// cannot be all of its row's cycles ([`atlas::entries`]) is damaged: an
/// error, never an atlas. Takes the census lock for the cycles files it
/// writes ([`Census`]).
pub fn atlas_of(
    dir: &Path,
    range: RangeInclusive<usize>,
    opt: Options<'_>,
) -> Result<Vec<atlas::Entry>> {
    Census::open(dir)?.atlas(range, opt)
}

/// Removes the directories `made`, innermost first, each only while empty.
fn remove_made(made: &[PathBuf]) {
    for dir in made {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// [`atlas_of`], the caller holding the census lock.
fn atlas_locked(
    dir: &Path,
    range: RangeInclusive<usize>,
    opt: Options<'_>,
) -> Result<Vec<atlas::Entry>> {
    let store = Store::open(dir)?;
    let mut entries = Vec::new();
    for k in range {
        let Some(row) = store.row(k, opt.budget) else {
            return Err(Error::Invalid(format!(
                "{}: no row k = {k} of budget {}: the census of the row comes first",
                store.path().display(),
                opt.budget
            )));
        };
        let path = atlas::path(dir, k, opt.budget);
        let found = match atlas::load(&path)? {
            Some(found) => found,
            None => {
                let (again, found) = count(k, opt.budget, opt.progress, None, None);
                if again != *row {
                    return Err(Error::corrupt(
                        store.path(),
                        Corruption::CensusRow {
                            seeds: k,
                            again: again.to_json(),
                        },
                    ));
                }
                atlas::save(&path, &found)?;
                found
            }
        };
        let here = atlas::entries(row, &found).map_err(|why| {
            let why = format!(
                "its cycles are not those of row k = {k} (cycles: {}, each of {k} seeds): {why}",
                row.cycles
            );
            Error::corrupt(&path, Corruption::CensusCycles(why))
        })?;
        entries.extend(here);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed successor walks the start-0 configurations in the
    /// ranker's order, every one of them, for every `rest` up to 9.
    #[test]
    fn next_start_follows_the_rank_order() {
        for rest in 0..=9 {
            let ranker = Ranker::new(PITS, rest, None);
            let mut x = [0u8; PITS];
            ranker.unrank(rest, 0, &mut x);
            let mut side = Side::from_pits(x);
            side.set(0, x[0] + 2);
            for i in 1..ranker.count(rest) {
                assert!(ranker.advance(&mut x));
                side = next_start(side);
                let mut want = Side::from_pits(x);
                want.set(0, x[0] + 2);
                assert_eq!(side, want, "rest {rest}, rank {i}");
            }
            assert!(!ranker.advance(&mut x));
        }
    }

    /// Rows up to a side's capacity, `MAX_SEEDS` seeds, can be asked for
    /// (the real game's 32 among them); one more seed, or a lap budget of
    /// 0, is refused before any walk starts.
    #[test]
    fn rows_are_refused_above_a_sides_capacity_or_with_no_laps() {
        use super::super::side::MAX_SEEDS;
        assert!(check_rows(MAX_SEEDS, 1).is_ok());
        let e = check_rows(MAX_SEEDS + 1, 1).unwrap_err().to_string();
        assert!(
            e.contains(&format!("a side holds at most {MAX_SEEDS} seeds")),
            "{e}"
        );
        let e = check_rows(1, 0).unwrap_err().to_string();
        assert!(e.contains("a lap budget must be at least 1"), "{e}");
    }

    /// A row resumed from each of its checkpoints (written to its file, read
    /// back and its cycles walked again, as a run resumes) comes out as the
    /// row walked at once, with the same cycles. Checkpoints come between
    /// batches only, never after the last one, and only when due.
    #[test]
    fn a_row_resumed_from_each_checkpoint_is_the_row() {
        let (k, budget) = (14, 1_000_000_000);
        let chunks = walked(k).div_ceil(CHUNK);
        let mut saved = Vec::new();
        let mut keep = |c: &Checkpoint| saved.push(c.clone());
        let every = Some((Duration::ZERO, &mut keep as &mut dyn FnMut(&Checkpoint)));
        let (row, mut found) = count(k, budget, Progress::QUIET, None, every);
        found.sort_by_key(|f| (f.period, f.side));
        let done: Vec<u64> = saved.iter().map(|c| c.chunks_done).collect();
        assert_eq!(done, [BATCH, 2 * BATCH, 3 * BATCH, 4 * BATCH]);
        assert!(4 * BATCH < chunks && chunks <= 5 * BATCH);
        // The first two before any cycle is found, the last two after all
        // of them (k = 14 has 6).
        let kept: Vec<usize> = saved.iter().map(|c| c.cycles.len()).collect();
        assert_eq!((kept, found.len()), (vec![0, 0, 6, 6], 6));
        let path = crate::files::scratch_dir("census", "each-checkpoint").join("k14");
        for c in saved {
            checkpoint::save(&path, &c).unwrap();
            let c = checkpoint::load(&path, k, budget, CHUNK)
                .unwrap()
                .unwrap()
                .unwrap();
            let cycles = Cycles::rebuild(&c.cycles, k).unwrap();
            let (again, mut found_again) =
                count(k, budget, Progress::QUIET, Some((c, cycles)), None);
            found_again.sort_by_key(|f| (f.period, f.side));
            assert_eq!((again, found_again), (row.clone(), found.clone()));
        }
        let mut none = 0;
        let mut count_them = |_: &Checkpoint| none += 1;
        let hourly = Some((
            Duration::from_secs(3600),
            &mut count_them as &mut dyn FnMut(&Checkpoint),
        ));
        assert_eq!(count(k, budget, Progress::QUIET, None, hourly).0, row);
        assert_eq!(none, 0);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// A checkpoint's cycles are walked again, each as it is kept: a cycle
    /// listed twice, or of other seeds, or kept with other seeds sown or
    /// another period than its walk gives, is refused (the row would count
    /// a cycle twice, or loops of another row).
    #[test]
    fn a_checkpoint_cycle_kept_otherwise_than_walked_is_refused() {
        let found = count(11, 1000, Progress::QUIET, None, None).1;
        let [f] = found[..] else { panic!("{found:?}") };
        assert_eq!(Cycles::rebuild(&[f], 11).unwrap().found, [f]);
        let not_new = |found: &[Found], seeds| {
            let e = Cycles::rebuild(found, seeds).err().unwrap();
            assert!(
                e.contains(&format!("is not a new cycle of {seeds} seeds")),
                "{e}"
            );
        };
        not_new(&[f, f], 11);
        not_new(&[f], 12);
        for other in [
            Found {
                sown: f.sown + 1,
                ..f
            },
            Found {
                period: 2 * f.period,
                sown: 2 * f.sown,
                ..f
            },
        ] {
            let e = Cycles::rebuild(&[other], 11).err().unwrap();
            assert!(e.contains("does not loop with period"), "{e}");
        }
    }

    /// A checkpoint's cycles are walked again: a side whose pit 0 no move
    /// lifts "loops" with period 1 (its laps sow nothing), and was taken
    /// for a cycle of a false row; a period of no lap is none either.
    #[test]
    fn a_checkpoint_cycle_no_move_starts_is_refused() {
        let mut side = [0u8; PITS];
        side[1] = 12;
        let forged = Found {
            side,
            period: 1,
            sown: 0,
        };
        let e = Cycles::rebuild(&[forged], 12).err().unwrap();
        assert!(e.contains("fewer than a move lifts"), "{e}");
        side[0] = 2;
        side[1] = 10;
        let none = Found {
            side,
            period: 0,
            sown: 0,
        };
        let e = Cycles::rebuild(&[none], 12).err().unwrap();
        assert!(e.contains("a period of 0 laps"), "{e}");
    }

    /// `walked(k)` is the number of configurations of `k` seeds with 2 or
    /// more in pit 0, counted one by one (none below 2 seeds, one of 2).
    #[test]
    fn walked_counts_the_configurations_with_a_move_from_pit_0() {
        for k in 0..=7 {
            let ranker = Ranker::new(PITS, k, None);
            let mut x = [0u8; PITS];
            ranker.unrank(k, 0, &mut x);
            let mut n = 0;
            loop {
                n += u64::from(x[0] >= 2);
                if !ranker.advance(&mut x) {
                    break;
                }
            }
            assert_eq!(walked(k), n, "k = {k}");
        }
    }

    /// One counter-clockwise lap sown by hand, a seed at a time: lifts
    /// `pit`, which becomes the pit of the last seed.
    fn lap_by_hand(pits: &mut [u8; PITS], pit: &mut usize) {
        let hand = std::mem::take(&mut pits[*pit]);
        for _ in 0..hand {
            *pit = (*pit + 1) % PITS;
            pits[*pit] += 1;
        }
    }

    /// `pits` rotated so that `pit` becomes pit 0.
    fn brought_to(pits: [u8; PITS], pit: usize) -> [u8; PITS] {
        std::array::from_fn(|i| pits[(pit + i) % PITS])
    }

    /// How the move from pit 0 of `start` goes within `budget` laps, sown
    /// by hand.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum ByHand {
        /// Its last seed fell in an empty pit at this lap.
        Ends(u64),
        /// After this many laps its state is the start state rotated: it
        /// loops (fact 5 of [`super::super::relay`]).
        Returns(u64),
        /// Neither within the budget.
        Undecided,
    }

    /// [`ByHand`] of the move from pit 0 of `start`, with the states it
    /// went through brought to start 0, the start first.
    fn by_hand(start: [u8; PITS], budget: u64) -> (ByHand, Vec<[u8; PITS]>) {
        let (mut pits, mut pit) = (start, 0);
        let mut states = vec![start];
        for laps in 1..=budget {
            lap_by_hand(&mut pits, &mut pit);
            if pits[pit] == 1 {
                return (ByHand::Ends(laps), states);
            }
            if brought_to(pits, pit) == start {
                return (ByHand::Returns(laps), states);
            }
            states.push(brought_to(pits, pit));
        }
        (ByHand::Undecided, states)
    }

    /// `walk_ranks` walks exactly the configurations of its ranks (the
    /// ranker's board of each rank with 2 more seeds in pit 0), whatever
    /// rank a range starts at: over any range its longest ending move and
    /// its count of undecided moves are those of the moves sown by hand one
    /// by one. No configuration of 8 seeds loops; a budget of 4 laps leaves
    /// some of them undecided.
    #[test]
    fn walk_ranks_walks_exactly_the_configurations_of_its_ranks() {
        let (k, budget) = (8, 4);
        let rest = k - 2;
        let ranker = Ranker::new(PITS, rest, None);
        let n = walked(k);
        let each: Vec<ByHand> = (0..n)
            .map(|i| {
                let mut x = [0u8; PITS];
                ranker.unrank(rest, i, &mut x);
                x[0] += 2;
                by_hand(x, budget).0
            })
            .collect();
        let summary = |ranks: Range<u64>| {
            each[ranks.start as usize..ranks.end as usize].iter().fold(
                (0, 0),
                |(longest, undecided), w| match *w {
                    ByHand::Ends(laps) => (longest.max(laps), undecided),
                    ByHand::Undecided => (longest, undecided + 1),
                    ByHand::Returns(_) => panic!("8 seeds do not loop"),
                },
            )
        };
        let cycles = Mutex::new(Cycles::default());
        // Every rank alone, then ranges of 1, 2, 3, ... ranks in turn, then
        // all of them at once.
        for i in 0..n {
            let walked = walk_ranks(&ranker, rest, i..i + 1, budget, &cycles);
            assert_eq!(walked, summary(i..i + 1), "rank {i}");
        }
        let (mut from, mut len) = (0, 1);
        while from < n {
            let to = (from + len).min(n);
            assert_eq!(
                walk_ranks(&ranker, rest, from..to, budget, &cycles),
                summary(from..to),
                "ranks {from}..{to}"
            );
            (from, len) = (to, len % 500 + 1);
        }
        let all = summary(0..n);
        assert_eq!(walk_ranks(&ranker, rest, 0..n, budget, &cycles), all);
        assert!(all.0 == budget && all.1 > 0, "{all:?}");
        assert!(cycles.lock().unwrap().found.is_empty());
    }

    /// `walk` decides a move whose loop takes more than the short walk's
    /// `QUICK` laps to prove: the cycle through pit 0 of `7 1 0 1 0 1 ...`,
    /// found in the census of 15 seeds. With fewer laps than it takes to
    /// come back rotated it is undecided; with as many it is a cycle,
    /// recorded once with the states it goes through and its exact period
    /// (the start state's own return, by hand); then every start on it is
    /// known by lookup, even within a budget that could not prove it.
    #[test]
    fn walk_decides_and_records_a_cycle_longer_than_the_short_walk() {
        let start = [7, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1];
        let side = Side::from_pits(start);
        let (ByHand::Returns(n), states) = by_hand(start, 1000) else {
            panic!("it loops")
        };
        assert!(n > QUICK, "{n}");
        let (mut pits, mut pit, mut period) = (start, 0, 0);
        while period == 0 || (pit, pits) != (0, start) {
            lap_by_hand(&mut pits, &mut pit);
            period += 1;
        }
        let cycles = Mutex::new(Cycles::default());
        for budget in [1, QUICK, n - 1] {
            assert!(matches!(walk(side, budget, &cycles), Walk::Undecided));
        }
        assert!(cycles.lock().unwrap().states.is_empty());
        for _ in 0..2 {
            assert!(matches!(walk(side, n, &cycles), Walk::Cycle));
            let c = cycles.lock().unwrap();
            let want: HashSet<u128> = states.iter().map(|&s| Side::from_pits(s).0).collect();
            assert_eq!((&c.states, c.found.len()), (&want, 1));
            assert_eq!(c.found[0].period, period);
        }
        for s in &states {
            let s = Side::from_pits(*s);
            assert!(matches!(walk(s, n - 1, &cycles), Walk::Cycle), "{s}");
        }
    }

    /// `cfg_any` and `cfg_all` of `states` counted on the configurations
    /// themselves: every rotation of a looping state is a configuration
    /// with a looping start, counted once however many it has, and counted
    /// in `cfg_all` when each of its legal starts is a looping state.
    fn by_configurations(states: &HashSet<u128>) -> (u64, u64) {
        let looping =
            |c: [u8; PITS], p: usize| states.contains(&Side::from_pits(brought_to(c, p)).0);
        let mut any = HashSet::new();
        for &s in states {
            let s = Side(s).pits();
            for r in 0..PITS {
                any.insert(brought_to(s, PITS - r));
            }
        }
        let all = any
            .iter()
            .filter(|&&c| (0..PITS).filter(|&p| c[p] >= 2).all(|p| looping(c, p)))
            .count();
        (any.len() as u64, all as u64)
    }

    /// `cfg_any` and `cfg_all` from the remembered states alone (the count
    /// of the module documentation) are those counted on the configurations
    /// themselves, for the states of the cycles of 11 seeds, of 13, and of
    /// those through two configurations of 15 seeds (one of the census's
    /// with two looping starts, one whose only legal start loops), and for
    /// every union of them (the sums are made in parallel, each time
    /// split otherwise).
    #[test]
    fn configurations_looping_agrees_with_the_configurations_themselves() {
        let mut groups = Vec::new();
        for k in [11, 13] {
            let found = count(k, 1000, Progress::QUIET, None, None).1;
            groups.push(Cycles::rebuild(&found, k).unwrap().states);
        }
        let mut cycles = Cycles::default();
        for c in [
            [2, 3, 2, 0, 2, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1],
            [7, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1],
        ] {
            for p in (0..PITS).filter(|&p| c[p] >= 2) {
                let s = Side::from_pits(brought_to(c, p));
                if let Relay::Loops { period, sown, laps } = run(s, 0, 1000)
                    && !cycles.states.contains(&s.0)
                {
                    cycles.add(s, laps, period, sown);
                }
            }
        }
        groups.push(cycles.states);
        for pick in 1..1 << groups.len() {
            let mut states = HashSet::new();
            for (g, group) in groups.iter().enumerate() {
                if pick >> g & 1 == 1 {
                    states.extend(group);
                }
            }
            let (any, all) = by_configurations(&states);
            assert_eq!(
                configurations_looping(&states),
                (any, all),
                "groups {pick:b}"
            );
            if pick == 7 {
                // Some configuration loops from two starts, some from all of
                // its legal starts, some not.
                assert!(any < (PITS * states.len()) as u64);
                assert!(0 < all && all < any, "{all} of {any}");
            }
        }
    }
}
