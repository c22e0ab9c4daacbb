//! The level solver: retrograde analysis with a move counter per position.
//!
//! Values of level `n` depend on lower levels (through captures, already
//! solved) and on each other (through quiet moves, which may cycle). Infinite
//! play is worth 0. For each threshold `t = n, n-1, ..., 1` the solver finds
//! the positions whose value is exactly `t` or `-t`:
//!
//! * `W_t` (value `>= t`): a capture worth `>= t`, or a quiet move to a
//!   position in `L_t`;
//! * `L_t` (value `<= -t`): every capture worth `<= -t` and every quiet move
//!   to a position in `W_t`.
//!
//! Both are least fixed points (the mover must *force* the outcome in finite
//! time), computed by backward propagation: each position counts its quiet
//! moves not yet known to lead into `W`; when a position enters `W`, the
//! counters of its predecessors drop, and a counter reaching zero puts its
//! position into `L` (once its best capture is bad enough). Sets only grow as
//! `t` falls, so counters carry over from one threshold to the next. Whatever
//! is left after `t = 1` has value 0. This is exact, cycles included, and
//! the sets do not depend on the order in which decisions are propagated —
//! which is what lets the frontier below be cut off and resumed anywhere.
//!
//! **One byte per position.** The state of a position is one byte
//! ([`code`]): undecided, its quiet-move counter (0..=6) and a *blocked* bit
//! (its best capture is better than `-t`, so it cannot enter `L_t` yet); or
//! decided, its value, and a *fresh* bit (decided, predecessors not told, in
//! no frontier list). The best capture itself is not kept: the forward pass
//! writes each position with best capture `b = t` or `b = -t` to the seed
//! lists of threshold `t` on disk (the `workdir` module), and threshold `t`
//! reads them once. A position without captures is never blocked; one with
//! best capture `b > -n` starts blocked and is unblocked at `t = -b` (never,
//! for `b >= 0`).
//!
//! The solver's parts:
//!
//! * `first_pass`: the forward pass, from the lower levels to every
//!   position's state byte and the seed lists (type `FirstPass`, not to be
//!   confused with [`super::forward`], the verifier's forward solver);
//! * `propagation`: each threshold, from its seeds, in rounds over bounded
//!   frontiers (why claiming a seed late changes nothing; working memory);
//! * this module: the driver ([`solve_part_in`]), which runs them,
//!   checkpoints between them and keeps the ranks in step.
//!
//! **Checkpoints.** Between thresholds no position is fresh and the state
//! bytes are the whole solver state. Every [`Options::checkpoint_every`]
//! they are saved, with the threshold reached and the final length of every
//! seed list, to the work directory; a solve given a directory that holds a
//! checkpoint of the same slice continues from it (the seed lists are still
//! there) and produces the same values. The forward pass (an hour of level
//! 36) is checkpointed the same way between the parts it is cut into
//! (`FirstPass`), with the lengths of the seed lists written so far, and
//! is resumed with the parts its checkpoint was cut into. A checkpoint that
//! does not read back whole (its checksum fails) is dropped and the level
//! solved afresh; so is the whole work directory when a seed list is
//! missing, is not the length its checkpoint recorded, or a record of it
//! fails its check. A resumed checkpoint takes with it what killed writes
//! left (`.tmp` files), and a work directory is wiped checkpoints first, so
//! that a wipe stopped part-way never leaves a checkpoint without its
//! lists. A checkpoint that reads back whole but holds state bytes no
//! solve writes (damaged before it was sealed) is caught when the solve
//! ends ([`code::finished`], one pass over the state) and the level is
//! solved afresh: no impossible value reaches a table.
//!
//! The level may be split among several ranks (processes, see
//! [`crate::exchange`]), each holding the working state of its own index
//! range only. A predecessor in another rank's range becomes a message in
//! that rank's batch, and the batches of a round travel in one all-to-all
//! exchange. The single process is the case of one rank, with nothing to
//! send. Ranks checkpoint together (the decision is collective) and resume
//! from the newest checkpoint every rank holds.

mod first_pass;
mod propagation;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use self::first_pass::FirstPass;
use self::propagation::{Pending, Propagation, Seeds, Sweep, total};
use super::index::Encoder;
use super::lower::{LowerLevels, check_lower};
use super::rules::Rules;
use super::workdir::checkpoint::{Checkpoint, ForwardMark};
use super::workdir::seeds::check_lists;
use super::workdir::{holds_checkpoints, wipe};
use crate::checkpoint_file::CheckpointClock;
use crate::error::{Corruption, Error, Result};
use crate::exchange::{Alone, Exchange, Outbox, Owners, newest_held_by_all};
use crate::memory::{HugeSlice, as_atomic, settle};
use crate::progress::{Notice, Progress};

/// Positions per unit of parallel work; offsets within one fit in a `u16`.
const CHUNK: usize = 1 << 15;

/// The state byte of a position.
///
/// * `0..=6`: undecided, that many quiet moves not known to lead into `W`;
///   plus [`BLOCKED`](code::BLOCKED) when its best capture is better than
///   `-t`;
/// * [`decided(v)`](code::decided) `= v + 64` (16..=112): value `v`; plus
///   [`FRESH`](code::FRESH) while its predecessors are still to be told and
///   it is in no frontier.
pub mod code {
    /// Undecided and kept out of `L_t` by a capture better than `-t`.
    pub const BLOCKED: u8 = 8;
    /// Codes from here on (fresh or not) are decided.
    pub const DECIDED: u8 = 16;
    /// Decided, predecessors not told, in no frontier.
    pub const FRESH: u8 = 0x80;

    /// The code of value `v` (`-48..=48`).
    #[inline]
    pub const fn decided(v: i8) -> u8 {
        (v as i16 + 64) as u8
    }

    /// Whether `c` is a byte that a finished solve of a level of `seeds`
    /// seeds holds: undecided (a counter of at most 6 quiet moves,
    /// blocked or not), or decided and told, with a value in
    /// `-seeds..=seeds`. Any other byte came from damaged work files.
    #[inline]
    pub const fn finished(c: u8, seeds: u8) -> bool {
        match c {
            0..=6 | 8..=14 => true,
            DECIDED..FRESH => value(c).unsigned_abs() <= seeds,
            _ => false,
        }
    }

    /// The value of a code: 0 if undecided.
    #[inline]
    pub const fn value(c: u8) -> i8 {
        let c = c & !FRESH;
        if c < DECIDED {
            0
        } else {
            (c as i16 - 64) as i8
        }
    }
}
use code::DECIDED;

/// Where and how a slice is solved.
#[derive(Clone, Debug)]
pub struct Options {
    /// The work directory of this rank's slice: seed lists and checkpoints.
    /// A checkpoint of the same slice found there is resumed.
    pub dir: PathBuf,
    /// Least time between checkpoints (taken only between the parts of the
    /// forward pass and between thresholds); `None`: never. `Some(0)`: after
    /// every part of the forward pass, after the pass, and after every
    /// threshold, the last included.
    pub checkpoint_every: Option<Duration>,
    /// Most boards a round puts in one frontier (topping it up may pass a
    /// cap below 2^16; see `propagation`); `None`: this rank's positions / 160
    /// (0.075 bytes per position of its slice; two frontiers are held, so
    /// 0.15 in all), at least 2^16. A round hands the places left to its
    /// workers in blocks of 1024 (a `Room`, in `propagation`): of a cap
    /// below 1024, the decisions of rounds take none and are all left to
    /// sweeps, which tests force so.
    pub frontier_cap: Option<usize>,
    /// Positions per part of each forward walk (a checkpoint may be taken
    /// after any part): [`FORWARD_PART`] unless tests force small parts.
    pub forward_part: u64,
    /// What the level is solved from (`Checkpoint::lower`): a build sets
    /// the hash of its lower levels' content hashes; zeros where the lower
    /// levels live and die with the process.
    pub lower: [u8; 32],
}

/// Positions per part of a forward walk, by default: about 10 s of a walk
/// on 2 cores, so a checkpoint falls due soon after its time.
pub const FORWARD_PART: u64 = 1 << 27;

impl Options {
    /// Checkpoints every 10 minutes, the default frontier cap and forward
    /// parts, unless the environment says otherwise:
    /// `MANCALADB_CHECKPOINT_SECS` (seconds between checkpoints; `off` for
    /// none), `MANCALADB_FRONTIER_CAP` (boards; tests force tiny frontiers
    /// with it) and `MANCALADB_FORWARD_PART` (positions; tests force
    /// checkpoints inside the forward pass of small levels with it). A value
    /// that is not a number is a usage error.
    pub fn from_env(dir: impl Into<PathBuf>) -> Result<Options> {
        let checkpoint_every = crate::settings::checkpoint_interval()?;
        let frontier_cap = crate::settings::frontier_cap()?;
        let forward_part = crate::settings::forward_part()?.unwrap_or(FORWARD_PART);
        Ok(Options {
            dir: dir.into(),
            checkpoint_every,
            frontier_cap,
            forward_part,
            lower: [0; 32],
        })
    }
}

/// Solves level `seeds` under `rules`, given the values of every level
/// `k < seeds` (`lower`). Returns the level's values in index
/// order. Works in a temporary directory, removed afterwards; fails as
/// [`solve_part`] does.
pub fn solve_level(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    progress: Progress<'_>,
) -> Result<HugeSlice<i8>> {
    solve_part(rules, seeds, lower, &Alone, progress).map(|part| part.values)
}

/// One rank's share of a solved level.
pub struct Part {
    /// The indices of the level this rank owns.
    pub range: Range<u64>,
    /// Their values, in index order.
    pub values: HugeSlice<i8>,
    /// Bytes this rank sent to the others.
    pub sent_bytes: u64,
    /// Propagation rounds, each ending in one exchange between the ranks.
    pub rounds: u64,
    /// The threshold of the checkpoint this solve continued from, if any.
    pub resumed_at: Option<usize>,
    /// The forward checkpoint this solve continued from, if any.
    pub resumed_forward: Option<ForwardResume>,
}

/// Where a solve continued its forward pass from a checkpoint: after part
/// `done` of `parts` of the walk `walk` (`captures` or `moves`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ForwardResume {
    /// The walk: `captures` or `moves`.
    pub walk: &'static str,
    /// Parts of it done before.
    pub done: u32,
    /// Parts in all.
    pub parts: u32,
}

/// [`solve_part_in`] in a fresh temporary work directory, removed
/// afterwards, with the frontier cap of the environment and no checkpoints.
/// Fails if the temporary directory cannot be written, if
/// `MANCALADB_FRONTIER_CAP` (or another variable [`Options::from_env`]
/// reads) is not a number, or as [`solve_part_in`] does.
pub fn solve_part(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    ex: &dyn Exchange,
    progress: Progress<'_>,
) -> Result<Part> {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mancaladb-solve-{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Relaxed)
    ));
    let part = Options::from_env(&dir).and_then(|options| {
        let options = Options {
            checkpoint_every: None,
            ..options
        };
        solve_part_in(rules, seeds, lower, ex, &options, progress)
    });
    let _ = std::fs::remove_dir_all(&dir);
    part
}

/// Solves this rank's slice of level `seeds` together with the other ranks
/// of `ex` (see [`solve_level`]), in the work directory of `options`. Every
/// rank must call it with the same arguments (each with its own directory);
/// `lower` is read only at the positions this rank's moves reach.
///
/// A level past the game's, or `lower` not holding levels `0..seeds`, is
/// [`Error::Invalid`] ([`check_lower`]).
/// A seed list found damaged on any rank (its records are checked as they
/// are read), or a resumed solve that ends with a state byte no solve
/// writes ([`code::finished`]: its checkpoint was damaged before it was
/// sealed, or forged), is reported, and every rank solves the level
/// afresh, from an empty work directory; found damaged again, it is an
/// error. Any other
/// error returns on this rank alone: the caller stops the other ranks (the
/// command line's distributed build calls `MPI_Abort`).
pub fn solve_part_in(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    ex: &dyn Exchange,
    options: &Options,
    progress: Progress<'_>,
) -> Result<Part> {
    if let Some(part) = solve_once(rules, seeds, lower, ex, options, progress)? {
        return Ok(part);
    }
    let dir = &options.dir;
    wipe(dir)?;
    solve_once(rules, seeds, lower, ex, options, progress)?.ok_or_else(|| {
        Error::corrupt(
            dir,
            Corruption::Checkpoint("work files written afresh were damaged again"),
        )
    })
}

/// The most parts a forward walk is cut into: a resumed walk holds the
/// start of each (8 MiB), and 2^20 parts are 200,000 positions each at
/// level 48, whose default parts ([`FORWARD_PART`]) are about 1,500.
const MAX_FORWARD_PARTS: u32 = 1 << 20;

/// The parts the forward pass of a level of `size` positions is cut into,
/// `forward_part` positions each (`MANCALADB_FORWARD_PART`), at most
/// [`MAX_FORWARD_PARTS`].
fn forward_parts(seeds: usize, size: u64, forward_part: u64) -> Result<u32> {
    match u32::try_from(size.div_ceil(forward_part).max(1)) {
        Ok(parts) if parts <= MAX_FORWARD_PARTS => Ok(parts),
        _ => Err(Error::Invalid(format!(
            "MANCALADB_FORWARD_PART={forward_part}: cuts level {seeds} into more than \
             {MAX_FORWARD_PARTS} parts"
        ))),
    }
}

/// Whether a forward checkpoint's mark is one that a solve of a level of
/// `size` positions writes: its walk cut into at least one part, into no
/// more than [`forward_parts`] cuts it ([`MAX_FORWARD_PARTS`], and one
/// position a part), and no more parts done than it has.
fn sound_mark(mark: &ForwardMark, size: u64) -> bool {
    let most = size.clamp(1, u64::from(MAX_FORWARD_PARTS));
    (1..=most).contains(&u64::from(mark.parts)) && mark.done <= mark.parts
}

/// The most boards in one frontier of a rank that holds `n` positions
/// ([`Options::frontier_cap`], `cap` when given), and how far sweeps fill
/// it: a quarter of the cap, so that a round's decisions usually fit in the
/// next.
fn frontier_bounds(cap: Option<usize>, n: usize) -> (usize, usize) {
    let cap = match cap {
        Some(cap) => cap.max(1),
        None => (n / 160).max(1 << 16),
    };
    (cap, (cap / 4).max(1))
}

/// [`solve_part_in`] without the second try: `None` when a seed list was
/// damaged on some rank.
fn solve_once(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    ex: &dyn Exchange,
    options: &Options,
    progress: Progress<'_>,
) -> Result<Option<Part>> {
    check_lower(seeds, lower)?;
    let enc = Encoder::new(seeds);
    let size = enc.level_size(seeds);
    let owners = Owners::new(size, ex.ranks());
    let range = owners.range(ex.rank());
    let n = usize::try_from(range.end - range.start).expect("slice fits in memory");
    let (cap, fill) = frontier_bounds(options.frontier_cap, n);
    let dir = &options.dir;
    let checkpoint = Checkpoint {
        rules: rules.code(),
        seeds: seeds as u32,
        ranks: ex.ranks() as u32,
        rank: ex.rank() as u32,
        start: range.start,
        end: range.end,
        lower: options.lower,
    };
    let mut state = HugeSlice::<u8>::zeroed(n)
        .map_err(|e| Error::io(format!("level {seeds}: {n} bytes of working memory"), e))?;

    // Resume from the newest checkpoint that every rank holds, if any: of
    // a threshold, else of the forward pass.
    // Threshold `t` numbered by progress: `seeds + 1 - t` (1 for the
    // checkpoint right after the forward pass, `seeds + 1` for the one
    // after the last threshold, `t = 0`: nothing left but writing values).
    let held: Vec<u64> = checkpoint
        .saved(dir)?
        .into_iter()
        .filter(|t| (0..=seeds).contains(t))
        .map(|t| (seeds + 1 - t) as u64)
        .collect();
    let mut resumed_at = newest_held_by_all(&held, ex).map(|p| seeds + 1 - p as usize);
    // The final length of every seed list: from the checkpoint resumed, or
    // the forward pass.
    let mut lists = Vec::new();
    // Whether a notice said why the work directory's checkpoints are not
    // used (else one is given before they are thrown away).
    let mut told_afresh = false;
    if let Some(t) = resumed_at {
        // The lists of thresholds `1..=t` are read from here on: each must
        // be there with the length the checkpoint recorded.
        let read = checkpoint.load(dir, t, &mut state).and_then(|lists| {
            check_lists(dir, t, &lists, false)?;
            Ok(lists)
        });
        match read_by_every_rank(read, ex, seeds, progress)? {
            Some(read) => {
                lists = read;
                // What a killed checkpoint write left (a `.tmp` the size of
                // a checkpoint), older checkpoints and the lists of the
                // thresholds done go now, not only after the next
                // checkpoint: a nearly full disk would fail there again.
                checkpoint.remove_others(dir, t)?;
                progress.notice(Notice::SolveResumed {
                    seeds,
                    threshold: t,
                });
            }
            None => {
                state.fill(0);
                resumed_at = None;
                told_afresh = true;
            }
        }
    }
    let mut clock = Clock::new(options.checkpoint_every);
    let mut resumed_forward = None;
    let next_t = match resumed_at {
        Some(t) => t,
        None => {
            let mut mark = agreed_mark(&checkpoint, dir, size, ex)?;
            if let Some(m) = &mark {
                // The lists must hold at least what the mark says (they are
                // cut back to it).
                let read = checkpoint
                    .load_forward(dir, m, &mut state)
                    .and_then(|()| check_lists(dir, seeds, &m.lists, true));
                if read_by_every_rank(read, ex, seeds, progress)?.is_none() {
                    state.fill(0);
                    mark = None;
                    told_afresh = true;
                }
            }
            // A forward checkpoint is resumed with the parts it was cut
            // into (they fix where each part starts), whatever the parts
            // asked for now.
            let parts = match &mark {
                Some(m) => m.parts,
                None => forward_parts(seeds, size, options.forward_part)?,
            };
            match &mark {
                Some(mark) => {
                    checkpoint.remove_forward_except(dir, mark)?;
                    let at = ForwardResume {
                        walk: mark.walk.name(),
                        done: mark.done,
                        parts: mark.parts,
                    };
                    resumed_forward = Some(at);
                    progress.notice(Notice::ForwardResumed {
                        seeds,
                        walk: at.walk,
                        done: at.done,
                        parts: at.parts,
                    });
                    // Every byte was written by the load: onto huge pages
                    // for the rest of the pass.
                    settle_state(&state, seeds, progress);
                }
                None => {
                    if !told_afresh && holds_checkpoints(dir)? {
                        let why = format!(
                            "no checkpoint in {} can be resumed: each is of another solve \
                                 (another slice, lower levels or file version), damaged in its \
                                 header, or not held by every rank",
                            dir.display()
                        );
                        progress.notice(Notice::SolveAfresh { seeds, why });
                    }
                    wipe(dir)?;
                    crate::files::create_dirs(dir)?;
                }
            }
            let pass = FirstPass {
                rules,
                seeds,
                enc: &enc,
                lower,
                start: range.start,
                parts,
                dir,
                checkpoint: &checkpoint,
                ex,
                progress,
            };
            lists = pass.run(&mut state, mark, &mut clock)?;
            seeds
        }
    };
    // Every state byte is written now: onto huge pages with them, before
    // the random accesses of the thresholds.
    settle_state(&state, seeds, progress);
    let mut save_if_due = |t: usize, state: &[u8]| -> Result<()> {
        if !clock.due(ex) {
            return Ok(());
        }
        let took = Instant::now();
        let bytes = checkpoint.save(dir, t, &lists, state)?;
        progress.notice(Notice::SolveCheckpoint {
            seeds,
            threshold: t,
            bytes,
            seconds: took.elapsed().as_secs_f64(),
        });
        ex.barrier(); // every rank has state.<t>: older ones may go
        checkpoint.remove_others(dir, t)?;
        clock.reset();
        Ok(())
    };
    if resumed_at.is_none() {
        save_if_due(seeds, &state)?;
    }

    // Each loop turn delivers the last round's messages, tops the frontier
    // up with seeds and fresh positions, then runs a round on it; a
    // threshold ends when no rank has anything left to tell.
    let stage = progress.stage(format!("level {seeds}: values"), size);
    // A checkpoint resumed between thresholds holds the positions decided
    // before it: done, though not by this run.
    let mut told = 0;
    if resumed_at.is_some() {
        told = ex.sum(state.par_iter().filter(|&&c| c >= DECIDED).count() as u64);
        stage.resumed(told);
    }
    let (mut sent_bytes, mut rounds) = (0, 0);
    let pending = Pending::new(n);
    let mut sweep = Sweep::default();
    for t in (1..=next_t).rev() {
        let solver = Propagation {
            rules,
            seeds,
            enc: &enc,
            owners: &owners,
            start: range.start,
            state: as_atomic(&mut state),
            pending: &pending,
        };
        // A list missing or of another length than recorded: the level is
        // solved afresh, on every rank.
        let opened = Seeds::open(dir, t, &lists, n);
        let Some(mut to_read) = read_by_every_rank(opened, ex, seeds, progress)? else {
            return Ok(None);
        };
        let mut frontier = Vec::new();
        let mut outbox = Outbox::empty(ex.ranks());
        loop {
            sent_bytes += outbox.messages().len() as u64 * 8;
            let inbox = ex.all_to_all(&outbox);
            rounds += 1;
            // Sent: not held through the next round, nor `inbox` once applied.
            outbox = Outbox::empty(ex.ranks());
            solver.receive(t as i8, &inbox, &mut frontier, cap);
            drop(inbox);
            let topped = solver.top_up(t as i8, &mut to_read, &mut sweep, &mut frontier, fill);
            if read_by_every_rank(topped, ex, seeds, progress)?.is_none() {
                return Ok(None);
            }
            let decided = ex.sum(total(&frontier) as u64);
            if decided == 0 {
                break;
            }
            stage.inc(decided);
            told += decided;
            (frontier, outbox) = solver.round(t as i8, &frontier, cap);
        }
        // After the last threshold too: writing the table takes minutes at
        // the top levels, and a kill or a full disk there would otherwise
        // lose the thresholds since the last checkpoint.
        save_if_due(t - 1, &state)?;
    }
    // The positions no threshold decided are done too: they are worth 0.
    stage.inc(size.saturating_sub(told));
    stage.finish();
    // Every byte is a finished one unless the work files resumed were
    // damaged before they were sealed (or forged): their checks passed,
    // but the values would be impossible. The level is then solved afresh.
    let resumed = resumed_at.is_some() || resumed_forward.is_some();
    let finished = if !resumed || state.par_iter().all(|&c| code::finished(c, seeds as u8)) {
        Ok(())
    } else {
        Err(Error::corrupt(
            dir,
            Corruption::Checkpoint("the solve resumed from here ends with impossible state bytes"),
        ))
    };
    if read_by_every_rank(finished, ex, seeds, progress)?.is_none() {
        return Ok(None);
    }

    // The state bytes become the values, in place.
    state
        .par_iter_mut()
        .for_each(|c| *c = code::value(*c) as u8);
    Ok(Some(Part {
        range,
        values: state.cast(),
        sent_bytes,
        rounds,
        resumed_at,
        resumed_forward,
    }))
}

/// Moves the state bytes of level `seeds`, written whole, onto huge pages
/// where they are not ([`settle`]), and says what came of it.
fn settle_state(state: &[u8], seeds: usize, progress: Progress<'_>) {
    if let Some(moved) = settle(state) {
        progress.notice(Notice::huge_pages(seeds, &moved));
    }
}

/// What this rank read (`read`) if every rank read the work files they
/// needed: the checkpoint they agreed to resume from (with its seed lists
/// there at the lengths it recorded), or a seed list (there, at its
/// recorded length, its records whole). A damaged or missing one, on any
/// rank, is reported and dropped by them all (`None`): the level is then
/// solved afresh (its work directory emptied), rather than stopping every
/// rerun on the same file. A rank with such a file names it; the others
/// name the first such rank. Any other error stops the solve.
fn read_by_every_rank<T>(
    read: Result<T>,
    ex: &dyn Exchange,
    seeds: usize,
    progress: Progress<'_>,
) -> Result<Option<T>> {
    let (read, damaged) = match read {
        Ok(read) => (Some(read), None),
        Err(e @ Error::Corrupt { .. }) => (None, Some(e)),
        Err(e) => return Err(e),
    };
    let ranks = ex.ranks();
    let first = ex.max(damaged.as_ref().map_or(0, |_| (ranks - ex.rank()) as u64));
    if first == 0 {
        return Ok(read);
    }
    let why = damaged.map_or_else(
        || {
            let rank = ranks - first as usize;
            format!("a work file of rank {rank} is damaged (rank {rank} names it)")
        },
        |e| e.to_string(),
    );
    progress.notice(Notice::SolveAfresh { seeds, why });
    Ok(None)
}

/// The newest forward checkpoint every rank holds, if any (the same
/// answer on every rank), cut into the same parts on every rank; a work
/// file this rank cannot read is an error. Marks no solve of a level of
/// `size` positions writes ([`sound_mark`]) are passed over.
fn agreed_mark(
    checkpoint: &Checkpoint,
    dir: &Path,
    size: u64,
    ex: &dyn Exchange,
) -> Result<Option<ForwardMark>> {
    let mut marks = checkpoint.forward_saved(dir)?;
    marks.retain(|m| sound_mark(m, size));
    let held: Vec<u64> = marks.iter().map(ForwardMark::progress).collect();
    let mark = newest_held_by_all(&held, ex)
        .and_then(|agreed| marks.into_iter().find(|m| m.progress() == agreed));
    // Ranks write their marks together, with the same parts; marks that
    // differ in them (never, but for files copied in) are not resumed.
    let parts = mark.as_ref().map_or(0, |m| u64::from(m.parts));
    let same = ex.sum(u64::from(parts != ex.max(parts))) == 0;
    Ok(mark.filter(|_| same))
}

/// The checkpoint clock of one rank: when a checkpoint is due, decided by
/// every rank together.
struct Clock(CheckpointClock);

impl Clock {
    fn new(every: Option<Duration>) -> Clock {
        Clock(CheckpointClock::new(every))
    }

    /// Whether some rank's checkpoint is due (the same answer on every
    /// rank). Every rank joins the reduction, with checkpoints or without,
    /// so the ranks' collective calls stay in step whatever each was told.
    fn due(&self, ex: &dyn Exchange) -> bool {
        ex.max(u64::from(self.0.due())) != 0
    }

    fn reset(&mut self) {
        self.0.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::workdir::checkpoint::Walk;
    use crate::oware::workdir::scratch;

    /// The frontiers are what the solver holds beyond its state bytes, so
    /// their default cap is what keeps a level within its working memory:
    /// a 160th of the slice's positions (two frontiers of 12-byte boards,
    /// 0.15 bytes per position), at least 2^16 boards for small slices,
    /// and sweeps fill a quarter of it. A cap given is taken as it is
    /// (tests force tiny ones), but never 0.
    #[test]
    fn frontiers_hold_a_160th_of_the_slice_and_sweeps_fill_a_quarter() {
        assert_eq!(frontier_bounds(None, 160 << 20), (1 << 20, 1 << 18));
        assert_eq!(frontier_bounds(None, 160 << 20 | 159), (1 << 20, 1 << 18));
        assert_eq!(frontier_bounds(None, 1000), (1 << 16, 1 << 14));
        assert_eq!(frontier_bounds(Some(4096), 10), (4096, 1024));
        assert_eq!(frontier_bounds(Some(7), 1 << 30), (7, 1));
        assert_eq!(frontier_bounds(Some(0), 1 << 30), (1, 1));
    }

    /// Every state byte reads as the module documents it: `decided(v)` is
    /// `v + 64` and reads back as `v`, fresh or not, for every value a
    /// level can have (-48 and 48 included); a counter, blocked or not, is
    /// worth 0; and a finished level of `seeds` seeds holds exactly the
    /// counters 0..=6, blocked or not, and the values told within
    /// `-seeds..=seeds`, for every byte and every level.
    #[test]
    fn every_state_byte_reads_as_the_module_documents() {
        for v in -48..=48i8 {
            let c = code::decided(v);
            assert_eq!(i16::from(c), i16::from(v) + 64, "decided({v})");
            assert_eq!(code::value(c), v, "value of decided({v})");
            assert_eq!(code::value(c | code::FRESH), v, "value of fresh {v}");
        }
        for counter in 0..=6u8 {
            assert_eq!(code::value(counter), 0);
            assert_eq!(code::value(counter | code::BLOCKED), 0);
        }
        for seeds in 0..=48u8 {
            for c in 0..=u8::MAX {
                let counter = (c & !code::BLOCKED) <= 6;
                let told = (16..=112).contains(&c) && (i16::from(c) - 64).abs() <= i16::from(seeds);
                assert_eq!(
                    code::finished(c, seeds),
                    counter || told,
                    "byte {c} of a level of {seeds} seeds"
                );
            }
        }
    }

    /// The checkpoint clock is never due with checkpoints off; with an
    /// interval, it falls due once the interval has passed since it
    /// started, and is not due again right after a checkpoint resets it.
    #[test]
    fn a_checkpoint_falls_due_an_interval_after_the_last() {
        assert!(!Clock::new(None).due(&Alone));
        let every = Duration::from_secs(2);
        let mut clock = Clock::new(Some(every));
        assert!(!clock.due(&Alone));
        std::thread::sleep(every + Duration::from_millis(100));
        assert!(clock.due(&Alone));
        clock.reset();
        assert!(!clock.due(&Alone));
    }

    /// A threshold's checkpoint whose checks pass but whose state bytes no
    /// solve writes (damaged before it was sealed, or forged) never reaches
    /// a table: the resumed solve notices when it ends and solves the level
    /// afresh, to the same values. (A build resumed from it wrote a table
    /// of value 63 at level 10, which every reader then refused and every
    /// later build kept as sound.)
    #[test]
    fn a_sealed_checkpoint_of_impossible_state_bytes_is_solved_afresh() {
        let (rules, seeds) = (Rules::Awari, 10);
        let mut levels: Vec<Vec<i8>> = Vec::new();
        for n in 0..=seeds {
            let values = solve_level(rules, n, &levels, Progress::QUIET).unwrap();
            levels.push(values.to_vec());
        }
        let dir = scratch("impossible-state");
        let options = Options {
            dir: dir.clone(),
            checkpoint_every: Some(Duration::ZERO),
            frontier_cap: None,
            forward_part: FORWARD_PART,
            lower: [0; 32],
        };
        let solve = || {
            solve_part_in(
                rules,
                seeds,
                &levels[..seeds],
                &Alone,
                &options,
                Progress::QUIET,
            )
        };
        // A finished solve leaves its checkpoint after the last threshold.
        assert!(solve().unwrap().values[..] == levels[seeds][..]);
        let size = crate::oware::level_size(seeds);
        let checkpoint = Checkpoint {
            rules: rules.code(),
            seeds: seeds as u32,
            ranks: 1,
            rank: 0,
            start: 0,
            end: size,
            lower: [0; 32],
        };
        assert_eq!(checkpoint.saved(&dir).unwrap(), [0]);
        let mut state = vec![0u8; size as usize];
        let lists = checkpoint.load(&dir, 0, &mut state).unwrap();
        for (k, bad) in [
            0xffu8,
            7,
            code::decided(seeds as i8 + 1),
            code::FRESH | code::decided(1),
        ]
        .into_iter()
        .enumerate()
        {
            state[k * 1000] = bad;
            assert!(!code::finished(bad, seeds as u8), "{bad}");
        }
        checkpoint.save(&dir, 0, &lists, &state).unwrap();
        let part = solve().expect("the level is solved afresh");
        assert_eq!(part.resumed_at, None);
        assert!(part.values[..] == levels[seeds][..]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Levels `0..=seeds` of awari, solved.
    fn awari_levels(seeds: usize) -> Vec<Vec<i8>> {
        let mut levels: Vec<Vec<i8>> = Vec::new();
        for n in 0..=seeds {
            let values = solve_level(Rules::Awari, n, &levels, Progress::QUIET).unwrap();
            levels.push(values.to_vec());
        }
        levels
    }

    /// Makes `to` a copy of the flat directory `from`.
    fn copy_dir(from: &Path, to: &Path) {
        let _ = std::fs::remove_dir_all(to);
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }

    /// Copies the work directory `dir` to `to` as the forward checkpoint
    /// after half the parts of the moves walk is taken: the work directory
    /// of a solve stopped there.
    struct HalfwayThroughMoves {
        dir: PathBuf,
        to: PathBuf,
    }

    impl crate::progress::Observer for HalfwayThroughMoves {
        fn stage(&self, _: &str, _: u64) -> Option<Box<dyn crate::progress::StageSink + '_>> {
            None
        }

        fn notice(&self, notice: &Notice) {
            if let Notice::ForwardCheckpoint {
                walk, done, parts, ..
            } = *notice
                && walk == "moves"
                && done == parts / 2
            {
                copy_dir(&self.dir, &self.to);
            }
        }
    }

    /// Checkpoints after every step that can take one, forward parts of
    /// 50,000 positions, in `dir`.
    fn checkpoint_always(dir: &Path) -> Options {
        Options {
            dir: dir.to_path_buf(),
            checkpoint_every: Some(Duration::ZERO),
            frontier_cap: None,
            forward_part: 50_000,
            lower: [0; 32],
        }
    }

    /// The checkpoint files' identity of awari level `seeds` solved by one
    /// process.
    fn whole_level(seeds: usize) -> Checkpoint {
        Checkpoint {
            rules: Rules::Awari.code(),
            seeds: seeds as u32,
            ranks: 1,
            rank: 0,
            start: 0,
            end: crate::oware::level_size(seeds),
            lower: [0; 32],
        }
    }

    /// Solves awari level `seeds` (its lower levels `levels`) in `dir` and
    /// returns `dir/stopped`, a copy of the work directory as it was
    /// half-way through the moves walk of the forward pass, with the mark
    /// of its one forward checkpoint and the state bytes it holds.
    fn stopped_in_moves(
        levels: &[Vec<i8>],
        seeds: usize,
        dir: &Path,
    ) -> (PathBuf, ForwardMark, Vec<u8>) {
        let snapshot = HalfwayThroughMoves {
            dir: dir.join("work"),
            to: dir.join("stopped"),
        };
        let options = checkpoint_always(&snapshot.dir);
        let progress = Progress::to(&snapshot);
        let part = solve_part_in(
            Rules::Awari,
            seeds,
            &levels[..seeds],
            &Alone,
            &options,
            progress,
        );
        assert!(part.unwrap().values[..] == levels[seeds][..]);
        let marks = whole_level(seeds).forward_saved(&snapshot.to).unwrap();
        assert_eq!(marks.len(), 1, "{marks:?}");
        let mark = marks[0].clone();
        assert_eq!(mark.walk.name(), "moves");
        assert!(mark.done >= 1 && mark.done < mark.parts, "{mark:?}");
        let mut state = vec![0u8; levels[seeds].len()];
        whole_level(seeds)
            .load_forward(&snapshot.to, &mark, &mut state)
            .unwrap();
        (snapshot.to, mark, state)
    }

    /// A forward checkpoint whose checks pass but whose state bytes no
    /// solve writes (values out of the level's range where the moves walk
    /// has been: damaged before it was sealed, or forged) never reaches a
    /// table either: the solve resumed from it notices when it ends and
    /// solves the level afresh, to the same values.
    #[test]
    fn a_sealed_forward_checkpoint_of_impossible_state_bytes_is_solved_afresh() {
        let seeds = 10;
        let levels = awari_levels(seeds);
        let dir = scratch("impossible-forward");
        let (stopped, mark, mut state) = stopped_in_moves(&levels, seeds, &dir);
        let checkpoint = whole_level(seeds);
        // Positions 0 and 1 lie in the first chunk, which the moves walk
        // has been through: no threshold ever changes a decided byte.
        for (k, v) in [seeds as i8 + 1, -(seeds as i8) - 1]
            .into_iter()
            .enumerate()
        {
            state[k] = code::decided(v);
            assert!(!code::finished(state[k], seeds as u8));
        }
        checkpoint.save_forward(&stopped, &mark, &state).unwrap();
        let part = solve_part_in(
            Rules::Awari,
            seeds,
            &levels[..seeds],
            &Alone,
            &checkpoint_always(&stopped),
            Progress::QUIET,
        )
        .expect("the level is solved afresh");
        assert_eq!(part.resumed_forward, None);
        assert!(part.values[..] == levels[seeds][..]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The marks a solve writes, and no others, are resumed: at most one
    /// part a position and [`MAX_FORWARD_PARTS`] (a resumed walk holds a
    /// start for each part: `u32::MAX` of them are 32 GB), at least one,
    /// no more done than there are.
    #[test]
    fn only_marks_a_solve_writes_are_sound() {
        let mark = |done: u32, parts: u32| ForwardMark {
            walk: Walk::Moves,
            done,
            parts,
            lists: Vec::new(),
        };
        let level_36 = crate::oware::level_size(36);
        for (seeds, size) in [(10, crate::oware::level_size(10)), (36, level_36)] {
            for forward_part in [1, 1000, FORWARD_PART, size, size + 1] {
                let Ok(parts) = forward_parts(seeds, size, forward_part) else {
                    assert!(size.div_ceil(forward_part) > u64::from(MAX_FORWARD_PARTS));
                    continue;
                };
                assert!(sound_mark(&mark(0, parts), size), "{seeds}: {parts}");
                assert!(sound_mark(&mark(parts, parts), size));
                assert!(!sound_mark(&mark(parts + 1, parts), size));
            }
            assert!(!sound_mark(&mark(0, 0), size));
            assert!(!sound_mark(&mark(0, u32::MAX), size));
            assert!(!sound_mark(&mark(1, MAX_FORWARD_PARTS + 1), size));
        }
        let small = crate::oware::level_size(10);
        assert!(small < u64::from(MAX_FORWARD_PARTS));
        assert!(sound_mark(&mark(1, small as u32), small));
        assert!(!sound_mark(&mark(1, small as u32 + 1), small));
        assert!(sound_mark(&mark(1, MAX_FORWARD_PARTS), level_36));
        assert!(sound_mark(&mark(0, 1), 0));
        let e = forward_parts(36, level_36, 1000).unwrap_err().to_string();
        assert_eq!(
            e,
            "MANCALADB_FORWARD_PART=1000: cuts level 36 into more than 1048576 parts"
        );
    }

    /// Forward checkpoints sealed with marks no solve writes (more parts
    /// done than the walk has; a walk cut into no parts, or into more parts
    /// than the level has positions) are not resumed:
    /// beside a sound one, the solve resumes from the sound one; alone, the
    /// level is solved afresh. Either way to the same values.
    #[test]
    fn forward_checkpoints_of_impossible_parts_are_not_resumed() {
        let seeds = 10;
        let levels = awari_levels(seeds);
        let dir = scratch("impossible-parts");
        let (stopped, mark, state) = stopped_in_moves(&levels, seeds, &dir);
        let checkpoint = whole_level(seeds);
        let solve = |work: &Path| {
            solve_part_in(
                Rules::Awari,
                seeds,
                &levels[..seeds],
                &Alone,
                &checkpoint_always(work),
                Progress::QUIET,
            )
            .unwrap()
        };
        let work = dir.join("forged");
        // Past the end of the walk, newer than the sound mark.
        copy_dir(&stopped, &work);
        let past = ForwardMark {
            done: mark.parts + 1,
            ..mark.clone()
        };
        checkpoint.save_forward(&work, &past, &state).unwrap();
        let part = solve(&work);
        let sound = ForwardResume {
            walk: "moves",
            done: mark.done,
            parts: mark.parts,
        };
        assert_eq!(part.resumed_forward, Some(sound));
        assert!(part.values[..] == levels[seeds][..]);
        // Cut into more parts than positions, as many as a mark can say.
        copy_dir(&stopped, &work);
        let absurd = ForwardMark {
            done: mark.done + 1,
            parts: u32::MAX,
            ..mark.clone()
        };
        checkpoint.save_forward(&work, &absurd, &state).unwrap();
        assert!(crate::oware::level_size(seeds) < u64::from(u32::MAX));
        let part = solve(&work);
        assert_eq!(part.resumed_forward, Some(sound));
        assert!(part.values[..] == levels[seeds][..]);
        // Cut into no parts, alone.
        copy_dir(&stopped, &work);
        std::fs::remove_file(work.join(format!("forward.2.{}", mark.done))).unwrap();
        let none = ForwardMark {
            done: 0,
            parts: 0,
            ..mark.clone()
        };
        checkpoint.save_forward(&work, &none, &state).unwrap();
        assert_eq!(checkpoint.forward_saved(&work).unwrap(), [none]);
        let part = solve(&work);
        assert_eq!(part.resumed_forward, None);
        assert!(part.values[..] == levels[seeds][..]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
