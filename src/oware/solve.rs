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
//! lists of threshold `t` on disk ([`super::workdir`]), and threshold `t`
//! reads them once, a batch whenever the frontier has room (below): the
//! first are claimed for `W_t`; the second are unblocked (and claimed for
//! `L_t` when no quiet move is left). Claiming a seed late changes nothing:
//! a position with best capture `t` is blocked for good, so it can only
//! enter `W_t`, with the value the seed gives it, and unblocking a position
//! whose counter already reached zero decides it then. A position
//! without captures is never blocked; one with best capture `b > -n` starts
//! blocked and is unblocked at `t = -b` (never, for `b >= 0`).
//!
//! **Bounded frontiers.** Propagation runs in rounds over frontiers (lists of
//! boards newly decided, wins and losses). A frontier holds at most `cap`
//! boards ([`Options::frontier_cap`]); a decision that finds it full keeps
//! its fresh bit instead and flags its block of 64 positions in a bitmap
//! (one bit per 64 bytes of state), and sweeps later collect the fresh
//! positions of flagged blocks into the frontier as room frees up, going
//! round the bitmap: a sweep reads only the blocks that hold fresh
//! positions, however few, not the whole level. Seeds go straight
//! into the frontier as they are claimed, read only when it has room, and
//! before any sweep (most decisions at a threshold's start are seeds, and
//! sweeps then find only the overflow of rounds). Working memory is
//! therefore one byte per position, the bitmap, and two frontiers of at
//! most `cap` boards; with several ranks (below), also a round's messages,
//! which are not capped. Those to other ranks are up to the predecessors of
//! a full frontier (several per board, 8 bytes each), held twice while they
//! are gathered for the exchange and dropped once it has sent them; those
//! from other ranks are what up to all of them sent this one, held until
//! they are applied, before the next round begins: a round whose decisions
//! fall mostly in one slice sends that rank up to `ranks - 1` times a
//! rank's share. Measured at level 20 with 2 ranks: 1.4..1.6 bytes per
//! position of a rank's slice in all, which the build's memory check counts
//! for each rank (`build::RANK_BYTES_PER_POSITION`).
//!
//! **Checkpoints.** Between thresholds no position is fresh and the state
//! bytes are the whole solver state. Every [`Options::checkpoint_every`]
//! they are saved, with the threshold reached and the final length of every
//! seed list, to the work directory; a solve given a directory that holds a
//! checkpoint of the same slice continues from it (the seed lists are still
//! there) and produces the same values. The forward pass (an hour of level
//! 36) is checkpointed the same way between the parts it is cut into
//! ([`ForwardPass`]), with the lengths of the seed lists written so far, and
//! is resumed with the parts its checkpoint was cut into. A checkpoint that
//! does not read back whole (its checksum fails) is dropped and the level
//! solved afresh; so is the whole work directory when a seed list is
//! missing, is not the length its checkpoint recorded, or a record of it
//! fails its check. A resumed checkpoint takes with it what killed writes
//! left (`.tmp` files), and a work directory is wiped checkpoints first, so
//! that a wipe stopped part-way never leaves a checkpoint without its
//! lists.
//!
//! The level may be split among several ranks (processes, see
//! [`crate::exchange`]), each holding the working state of its own index
//! range only. A predecessor in another rank's range becomes a message in
//! that rank's batch, and the batches of a round travel in one all-to-all
//! exchange. The single process is the case of one rank, with nothing to
//! send. Ranks checkpoint together (the decision is collective) and resume
//! from the newest checkpoint every rank holds.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicIsize, AtomicU8, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use super::board::Board;
use super::index::{Encoder, Tile};
use super::lower::LowerLevels;
use super::retro::for_each_predecessor;
use super::rules::{Rules, captures, quiet_moves};
use super::workdir::{
    Checkpoint, ForwardMark, Record, SeedLists, SeedReader, Walk, check_lists, holds_checkpoints,
    wipe,
};
use crate::error::{Corruption, Error, Result};
use crate::exchange::{Alone, Exchange, Outbox, Owners, newest_held_by_all};
use crate::files::CheckpointClock;
use crate::memory::{HugeSlice, Pipeline, as_atomic, prefetch, settle};
use crate::progress::{Notice, Progress};

/// Best-capture value of a position without captures.
const NO_CAPTURE: i8 = i8::MIN;
/// Positions per unit of parallel work; offsets within one fit in a `u16`.
const CHUNK: usize = 1 << 15;

/// The state byte of a position.
///
/// * `0..=6`: undecided, that many quiet moves not known to lead into `W`;
///   plus [`BLOCKED`] when its best capture is better than
///   `-t`;
/// * [`decided(v)`](code::decided) `= v + 64` (16..=112): value `v`; plus
///   [`FRESH`] while its predecessors are still to be told and
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
use code::{BLOCKED, DECIDED, FRESH, decided};

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
    /// Most boards in one frontier; `None`: this rank's positions / 160
    /// (0.075 bytes per position of its slice; two frontiers are held, so
    /// 0.15 in all), at least 2^16. A round hands the places left to its
    /// workers in blocks of 1024 ([`Room`]): of a cap below 1024, the
    /// decisions of rounds take none and are all left to sweeps, which
    /// tests force so.
    pub frontier_cap: Option<usize>,
    /// Positions per part of each forward walk (a checkpoint may be taken
    /// after any part): [`FORWARD_PART`] unless tests force small parts.
    pub forward_part: u64,
    /// What the level is solved from ([`Checkpoint::lower`]): a build sets
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
        // A value that is not UTF-8 is not a number either: refused below.
        let var = |name: &str| match std::env::var(name) {
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(v)) => {
                Some((name.to_string(), v.to_string_lossy().into_owned()))
            }
            Ok(v) => Some((name.to_string(), v)),
        };
        let bad = |(name, value): (String, String), want: &str| {
            Error::Invalid(format!("{name}={value}: expected {want}"))
        };
        let checkpoint_every = crate::files::checkpoint_interval()?;
        let frontier_cap = match var("MANCALADB_FRONTIER_CAP") {
            None => None,
            Some(nv) => match nv.1.parse::<usize>() {
                Ok(cap) if cap > 0 => Some(cap),
                _ => return Err(bad(nv, "a number of boards above 0")),
            },
        };
        let forward_part = match var("MANCALADB_FORWARD_PART") {
            None => FORWARD_PART,
            Some(nv) => match nv.1.parse::<u64>() {
                Ok(part) if part > 0 => part,
                _ => return Err(bad(nv, "a number of positions above 0")),
            },
        };
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
/// order. Works in a temporary directory, removed afterwards.
pub fn solve_level(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    progress: Progress<'_>,
) -> HugeSlice<i8> {
    solve_part(rules, seeds, lower, &Alone, progress).values
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
/// Panics if the temporary directory cannot be written.
pub fn solve_part(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    ex: &dyn Exchange,
    progress: Progress<'_>,
) -> Part {
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
    part.unwrap_or_else(|e| panic!("solving in a temporary directory: {e}"))
}

/// Solves this rank's slice of level `seeds` together with the other ranks
/// of `ex` (see [`solve_level`]), in the work directory of `options`. Every
/// rank must call it with the same arguments (each with its own directory);
/// `lower` is read only at the positions this rank's moves reach.
///
/// A seed list found damaged on any rank (its records are checked as they
/// are read) is reported, and every rank solves the level afresh, from an
/// empty work directory; found damaged again, it is an error. Any other
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
            Corruption::Checkpoint("seed lists written afresh were damaged again"),
        )
    })
}

/// The parts the forward pass of a level of `size` positions is cut into,
/// `forward_part` positions each (`MANCALADB_FORWARD_PART`).
fn forward_parts(seeds: usize, size: u64, forward_part: u64) -> Result<u32> {
    u32::try_from(size.div_ceil(forward_part).max(1)).map_err(|_| {
        Error::Invalid(format!(
            "MANCALADB_FORWARD_PART={forward_part}: cuts level {seeds} into more than {} parts",
            u32::MAX
        ))
    })
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
    assert_eq!(lower.levels(), seeds, "every lower level is needed");
    let enc = Encoder::new(seeds);
    let size = enc.level_size(seeds);
    let owners = Owners::new(size, ex.ranks());
    let range = owners.range(ex.rank());
    let n = usize::try_from(range.end - range.start).expect("slice fits in memory");
    let cap = match options.frontier_cap {
        Some(cap) => cap.max(1),
        None => (n / 160).max(1 << 16),
    };
    // Sweeps fill the frontier to a quarter of its cap, so that a round's
    // decisions usually fit in the next.
    let fill = (cap / 4).max(1);
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
    let mut state = HugeSlice::<u8>::zeroed(n).map_err(|e| Error::io("(memory)", e))?;

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
            let mut mark = agreed_mark(&checkpoint, dir, ex)?;
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
            let pass = ForwardPass {
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
/// file this rank cannot read is an error.
fn agreed_mark(
    checkpoint: &Checkpoint,
    dir: &Path,
    ex: &dyn Exchange,
) -> Result<Option<ForwardMark>> {
    let mut marks = checkpoint.forward_saved(dir)?;
    marks.retain(|m| m.parts > 0 && m.done <= m.parts);
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

/// The forward pass of one rank's slice: the state byte (quiet-move
/// counter, blocked bit) of every position, and its seed lists, synced. It
/// runs in two walks, and between them the state bytes hold best captures:
///
/// 1. [`ForwardPass::best_captures`], in mover-major order, finds each
///    position's best capture by reading the lower levels block by block;
/// 2. then, in index order, each position's quiet moves are counted and
///    its best capture sorted into the seed list of its threshold, chunk by
///    chunk, as the lists' records want.
///
/// Each walk is cut into `parts` parts (of tiles, then of chunks; the same
/// number on every rank), and after any part a checkpoint may be taken
/// ([`ForwardMark`]): the state bytes are then best captures where the
/// walk has been and zero elsewhere (walk 1), or counters and blocked bits
/// where walk 2 has been and best captures elsewhere, and the seed lists
/// hold exactly the records of the parts done. A resumed walk redoes only
/// the parts after the mark, each position written by one part.
struct ForwardPass<'a, L: LowerLevels + ?Sized> {
    rules: Rules,
    seeds: usize,
    enc: &'a Encoder,
    lower: &'a L,
    /// The slice's first index.
    start: u64,
    parts: u32,
    dir: &'a Path,
    checkpoint: &'a Checkpoint,
    ex: &'a dyn Exchange,
    progress: Progress<'a>,
}

/// Where part `k` of `parts` nearly equal parts of `0..len` starts (`len`
/// for `k == parts`).
fn part_start(k: u32, parts: u32, len: usize) -> usize {
    (len as u128 * u128::from(k) / u128::from(parts)) as usize
}

/// Part `k` of `parts` nearly equal parts of `0..len`.
fn part(k: u32, parts: u32, len: usize) -> Range<usize> {
    part_start(k, parts, len)..part_start(k + 1, parts, len)
}

impl<L: LowerLevels + ?Sized> ForwardPass<'_, L> {
    /// Runs the pass on `state` (zeroed, or as the forward checkpoint
    /// `from` left it), taking a checkpoint after a part whenever `clock`
    /// says one is due. Returns the final length of every seed list.
    fn run(
        &self,
        state: &mut [u8],
        from: Option<ForwardMark>,
        clock: &mut Clock,
    ) -> Result<Vec<u64>> {
        let seeds = self.seeds;
        let (lists, walk, done) = match from {
            None => (SeedLists::create(self.dir, seeds)?, Walk::Captures, 0),
            Some(m) => (
                SeedLists::reopen(self.dir, seeds, &m.lists)?,
                m.walk,
                m.done,
            ),
        };
        let mut save_if_due = |walk: Walk, done: u32, state: &[u8]| -> Result<()> {
            if !clock.due(self.ex) {
                return Ok(());
            }
            let mark = ForwardMark {
                walk,
                done,
                parts: self.parts,
                lists: lists.sync()?,
            };
            let took = Instant::now();
            let bytes = self.checkpoint.save_forward(self.dir, &mark, state)?;
            self.ex.barrier(); // every rank has this one: older ones may go
            self.checkpoint.remove_forward_except(self.dir, &mark)?;
            self.progress.notice(Notice::ForwardCheckpoint {
                seeds,
                walk: mark.walk.name(),
                done,
                parts: self.parts,
                bytes,
                seconds: took.elapsed().as_secs_f64(),
            });
            clock.reset();
            Ok(())
        };

        // Parts of tiles of about equal numbers of boards (a tile holds
        // from one board to thousands; the boards outside the level's
        // domain count too, so the last part ends with the last tile).
        let tiles = self.enc.mover_tiles(seeds);
        let starts = self.enc.tile_parts(seeds, &tiles, self.parts);
        let tile_start = |k: u32| starts[k as usize];
        let stage = self
            .progress
            .stage(format!("level {seeds}: captures"), tiles.len() as u64);
        let first = if walk == Walk::Captures {
            done
        } else {
            self.parts
        };
        stage.resumed(tile_start(first) as u64);
        for k in first..self.parts {
            let tiles = &tiles[tile_start(k)..tile_start(k + 1)];
            self.best_captures(tiles, as_atomic(state))?;
            stage.inc(tiles.len() as u64);
            save_if_due(Walk::Captures, k + 1, state)?;
        }
        stage.finish();

        let size = self.enc.level_size(seeds);
        let stage = self.progress.stage(format!("level {seeds}: moves"), size);
        let chunks = state.len().div_ceil(CHUNK);
        let first = if walk == Walk::Moves { done } else { 0 };
        let ranks = self.ex.ranks() as u64;
        // Slices are even: this rank's share stands for the whole.
        let done = (part_start(first, self.parts, chunks) * CHUNK).min(state.len());
        stage.resumed(done as u64 * ranks);
        for k in first..self.parts {
            let chunks = part(k, self.parts, chunks);
            let (from, to) = (chunks.start * CHUNK, (chunks.end * CHUNK).min(state.len()));
            self.count_moves(chunks.start, &mut state[from..to], &lists)?;
            stage.inc((to - from) as u64 * ranks);
            save_if_due(Walk::Moves, k + 1, state)?;
        }
        stage.finish();
        lists.finish()
    }

    /// Walk 2 over the chunks from chunk `first` on (`state` holds them):
    /// each position's best capture is sorted into its seed list and its
    /// state byte becomes its quiet-move counter and blocked bit.
    fn count_moves(&self, first: usize, state: &mut [u8], lists: &SeedLists) -> Result<()> {
        let (rules, seeds, enc, start) = (self.rules, self.seeds, self.enc, self.start);
        state.par_chunks_mut(CHUNK).enumerate().try_for_each_init(
            || vec![Vec::new(); 2 * seeds],
            |classes, (c, state)| -> Result<()> {
                let c = first + c;
                let at = start + (c * CHUNK) as u64;
                let n = seeds as i8;
                enc.for_range(seeds, at, at + state.len() as u64, |i, b| {
                    let j = (i - at) as usize;
                    let best = state[j] as i8;
                    let quiet = quiet_moves(rules, b);
                    // Sort the position into the list of its threshold.
                    if best != NO_CAPTURE && best != 0 {
                        let class =
                            2 * (usize::from(best.unsigned_abs()) - 1) + usize::from(best > 0);
                        classes[class].push(j as u16);
                    }
                    let blocked = best != NO_CAPTURE && best > -n;
                    state[j] = quiet | if blocked { BLOCKED } else { 0 };
                });
                for (class, offsets) in classes.iter_mut().enumerate() {
                    if !offsets.is_empty() {
                        lists.append(class / 2 + 1, class % 2 == 1, c as u32, offsets)?;
                        offsets.clear();
                    }
                }
                Ok(())
            },
        )
    }

    /// Walk 1 over `tiles`: writes into `best[j]` the best capture of each
    /// slice position `j` (position `start + j` of the level) in them: the
    /// largest `captured - value(child)` over its capturing moves, `-seeds`
    /// when the player to move has no seeds (the opponent takes the rest),
    /// [`NO_CAPTURE`] when it has no capture.
    ///
    /// Capture values live in the lower levels. The walk is mover-major
    /// ([`Encoder::mover_tiles`]), so a tile's captures land in a few blocks
    /// of each lower level, read together: levels larger than the page cache
    /// are read block by block, not at random. Each lookup is also
    /// prefetched and resolved [`LAG`](crate::memory::LAG) captures later,
    /// so that misses overlap.
    fn best_captures(&self, tiles: &[Tile], best: &[AtomicU8]) -> Result<()> {
        let (rules, seeds, enc, lower, start) =
            (self.rules, self.seeds, self.enc, self.lower, self.start);
        let range = start..start + best.len() as u64;
        // Every rank walks every tile (for its own positions in it), and
        // each position is in one tile, so each byte has one writer.
        let set = |j: usize, v: i8| best[j].store(v as u8, Relaxed);
        let get = |j: usize| best[j].load(Relaxed) as i8;
        tiles.par_chunks(16).try_for_each(|tiles| -> Result<()> {
            // (position, captured, lower level, index there)
            let mut pipeline = Pipeline::new((0usize, 0u8, 0usize, 0u64));
            let mut failed = None;
            let mut reader = lower.reader();
            let mut resolve = |(j, captured, level, index): (usize, u8, usize, u64)| match lower
                .value(&mut reader, level, index)
            {
                Ok(v) => set(j, get(j).max(captured as i8 - v)),
                Err(e) => failed = failed.take().or(Some(e)),
            };
            for tile in tiles {
                enc.walk_tile(seeds, tile, &range, |i, b| {
                    let j = (i - start) as usize;
                    let (ms, quiet) = captures(rules, b);
                    if ms.as_slice().is_empty() && quiet == 0 {
                        set(j, -(seeds as i8));
                        return;
                    }
                    set(j, NO_CAPTURE);
                    for m in ms.as_slice() {
                        let level = seeds - usize::from(m.captured);
                        let index = enc.rank_in(level, &m.child);
                        lower.prefetch(level, index);
                        pipeline.push((j, m.captured, level, index), &mut resolve);
                    }
                });
            }
            pipeline.finish(&mut resolve);
            failed.map_or(Ok(()), Err)
        })
    }
}

/// Positions newly decided whose predecessors are still to be told.
#[derive(Default)]
struct Frontier {
    /// Entered `W_t`.
    wins: Vec<Board>,
    /// Entered `L_t`.
    losses: Vec<Board>,
}

impl Frontier {
    fn len(&self) -> usize {
        self.wins.len() + self.losses.len()
    }
}

/// Boards in a frontier kept as the parts that built it (never copied
/// into one vector, which would hold them twice).
fn total(parts: &[Frontier]) -> usize {
    parts.iter().map(Frontier::len).sum()
}

/// Places left in the frontier being built, handed out to the workers in
/// blocks so that they rarely touch the shared counter.
struct Room(AtomicIsize);

/// One worker's share of a [`Room`].
struct Quota<'a> {
    room: &'a Room,
    have: usize,
    full: bool,
}

impl Room {
    const BLOCK: usize = 1024;

    fn new(places: usize) -> Room {
        Room(AtomicIsize::new(places as isize))
    }

    fn quota(&self) -> Quota<'_> {
        Quota {
            room: self,
            have: 0,
            full: false,
        }
    }
}

impl Quota<'_> {
    /// Takes one place; false once the room is full.
    #[inline]
    fn take(&mut self) -> bool {
        if self.have == 0 {
            let block = Room::BLOCK as isize;
            if self.full || self.room.0.fetch_sub(block, Relaxed) < block {
                self.full = true;
                return false;
            }
            self.have = Room::BLOCK;
        }
        self.have -= 1;
        true
    }
}

/// One batch of messages per rank, as one worker of a round fills them
/// ([`Outbox::gather`] puts the workers' batches together). A message is
/// the index of a predecessor owned by that rank, with [`ENTERED_W`] set if
/// its child entered `W_t` (else `L_t`).
type Batches = Vec<Vec<u64>>;

/// Message flag: the child entered `W_t`. Indices stay far below 2^63.
const ENTERED_W: u64 = 1 << 63;

/// Where sweeps go round [`Pending`]: the next word of its bitmap, and the
/// flagged blocks of the sweep under way (a buffer, kept between sweeps).
#[derive(Default)]
struct Sweep {
    word: usize,
    blocks: Vec<usize>,
}

/// The seed lists of one threshold still to be read, in the order they
/// are read (the last first), and a buffer for their records.
struct Seeds {
    lists: Vec<(bool, SeedReader)>,
    records: Vec<Record>,
}

impl Seeds {
    /// The lists of threshold `t` in `dir`, of a slice of `positions`
    /// positions: best capture `-t`, then `t`; `lengths` are every list's
    /// recorded length.
    fn open(dir: &Path, t: usize, lengths: &[u64], positions: usize) -> Result<Seeds> {
        let mut lists = Vec::with_capacity(2);
        for win in [false, true] {
            let reader = SeedReader::open(dir, t, win, lengths, positions as u64, CHUNK as u64)?;
            lists.push((win, reader));
        }
        Ok(Seeds {
            lists,
            records: Vec::new(),
        })
    }
}

/// Positions of the slice a bit of [`Pending`] stands for: 64 state bytes,
/// one cache line.
const BLOCK: usize = 64;

/// The blocks of [`BLOCK`] positions that hold positions left fresh
/// outside every frontier: one bit each, and how many bits are set.
struct Pending {
    words: Vec<AtomicU64>,
    flagged: AtomicUsize,
}

impl Pending {
    /// No block flagged, for a slice of `n` positions.
    fn new(n: usize) -> Pending {
        Pending {
            words: (0..n.div_ceil(BLOCK * 64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            flagged: AtomicUsize::new(0),
        }
    }

    /// Flags the block of slice position `j`.
    #[inline]
    fn add(&self, j: usize) {
        let b = j / BLOCK;
        let bit = 1u64 << (b % 64);
        if self.words[b / 64].fetch_or(bit, Relaxed) & bit == 0 {
            self.flagged.fetch_add(1, Relaxed);
        }
    }

    /// Unflags the blocks of word `w` and returns them as bits.
    fn take(&self, w: usize) -> u64 {
        let bits = self.words[w].swap(0, Relaxed);
        self.flagged.fetch_sub(bits.count_ones() as usize, Relaxed);
        bits
    }
}

/// Shared state of the backward propagation of one rank's slice of a level
/// at one threshold.
struct Propagation<'a> {
    rules: Rules,
    seeds: usize,
    enc: &'a Encoder,
    owners: &'a Owners,
    /// First index of this rank's slice; state bytes are numbered from it.
    start: u64,
    state: &'a [AtomicU8],
    /// Where positions were left fresh outside every frontier.
    pending: &'a Pending,
}

impl Propagation<'_> {
    /// Replaces the code `c` of slice position `j` by `next(c)` if it is
    /// undecided (one compare-and-swap loop, as other workers may change it
    /// meanwhile): the code it replaced, or `None` if `j` was decided.
    #[inline]
    fn update_undecided(&self, j: usize, next: impl Fn(u8) -> u8) -> Option<u8> {
        self.state[j]
            .fetch_update(Relaxed, Relaxed, |c| (c < DECIDED).then(|| next(c)))
            .ok()
    }

    /// Decides slice position `j` for value `v` (fresh) if still
    /// undecided; true if this call did.
    #[inline]
    fn claim(&self, j: usize, v: i8) -> bool {
        self.update_undecided(j, |_| decided(v) | FRESH).is_some()
    }

    /// Tells slice position `p` that one of its children entered `W_t`
    /// (`win`) or `L_t`. True if this decided `p` (fresh).
    #[inline]
    fn visit(&self, t: i8, win: bool, p: usize) -> bool {
        if win {
            self.after_win(t, p)
        } else {
            self.claim(p, t)
        }
    }

    /// A predecessor `p` of a position just found in `W_t` loses one quiet
    /// move; left with none and not blocked, it enters `L_t`.
    #[inline]
    fn after_win(&self, t: i8, p: usize) -> bool {
        let was = self.update_undecided(p, |c| {
            debug_assert!(c & !BLOCKED > 0, "a quiet move is counted once");
            if c == 1 { decided(-t) | FRESH } else { c - 1 }
        });
        was == Some(1)
    }

    /// Slice position `j` has best capture `-t`: it is blocked no longer,
    /// and enters `L_t` if no quiet move is left. True if this decided it.
    #[inline]
    fn unblock(&self, t: i8, j: usize) -> bool {
        let was = self.update_undecided(j, |c| match c & !BLOCKED {
            0 => decided(-t) | FRESH,
            counter => counter,
        });
        was.is_some_and(|c| c & !BLOCKED == 0)
    }

    /// Puts `j`, just decided for `v`, into `next` if `quota` has room
    /// (clearing its fresh bit); else leaves it fresh for a sweep.
    #[inline]
    fn enlist(&self, j: usize, v: i8, board: Board, quota: &mut Quota, next: &mut Frontier) {
        if quota.take() {
            self.state[j].store(decided(v), Relaxed);
            if v > 0 {
                &mut next.wins
            } else {
                &mut next.losses
            }
            .push(board);
        } else {
            self.pending.add(j);
        }
    }

    /// Adds seeds of `seeds`, then fresh positions (clearing their fresh
    /// bits), to `frontier` until it holds `fill` boards or none is left,
    /// going on round the bitmap where `sweep` stopped.
    fn top_up(
        &self,
        t: i8,
        seeds: &mut Seeds,
        sweep: &mut Sweep,
        frontier: &mut Vec<Frontier>,
        fill: usize,
    ) -> Result<()> {
        let mut held = total(frontier);
        while held < fill {
            let found: Vec<Frontier> = if let Some((win, list)) = seeds.lists.last_mut() {
                let win = *win;
                list.read(fill - held, &mut seeds.records)?;
                if seeds.records.is_empty() {
                    seeds.lists.pop();
                    continue;
                }
                seeds
                    .records
                    .par_iter()
                    .map(|r| self.claim_seeds(t, win, r))
                    .filter(|f| f.len() > 0)
                    .collect()
            } else {
                if self.pending.flagged.load(Relaxed) == 0 {
                    return Ok(());
                }
                self.flagged_blocks(sweep, fill - held);
                sweep
                    .blocks
                    .par_chunks(256)
                    .map(|blocks| self.fresh_in(blocks))
                    .filter(|f| f.len() > 0)
                    .collect()
            };
            held += total(&found);
            frontier.extend(found);
        }
        Ok(())
    }

    /// Claims the seeds of `record` at threshold `t`: best capture `t` if
    /// `win` (they enter `W_t`), else `-t` (unblocked, they enter `L_t` if
    /// no quiet move is left). Returns those this decided.
    fn claim_seeds(&self, t: i8, win: bool, record: &Record) -> Frontier {
        let base = record.chunk as usize * CHUNK;
        let mut found = Frontier::default();
        let mut cursor = self.enc.cursor(self.seeds);
        for &o in &record.offsets {
            let j = base + usize::from(o);
            let (decided_now, v) = if win {
                (self.claim(j, t), t)
            } else {
                (self.unblock(t, j), -t)
            };
            if decided_now {
                self.state[j].store(decided(v), Relaxed); // in the frontier: not fresh
                let board = cursor.seek(self.start + j as u64);
                if win {
                    &mut found.wins
                } else {
                    &mut found.losses
                }
                .push(board);
            }
        }
        found
    }

    /// Takes flagged blocks into `sweep.blocks` going round the bitmap,
    /// whole words at a time, until they hold `want` fresh positions or
    /// none is flagged. Called between rounds, by one thread.
    fn flagged_blocks(&self, sweep: &mut Sweep, want: usize) {
        sweep.blocks.clear();
        let mut found = 0;
        while found < want && self.pending.flagged.load(Relaxed) > 0 {
            let w = sweep.word;
            sweep.word = (w + 1) % self.pending.words.len();
            let mut bits = self.pending.take(w);
            while bits != 0 {
                let b = 64 * w + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                sweep.blocks.push(b);
                let cells = &self.state[b * BLOCK..((b + 1) * BLOCK).min(self.state.len())];
                found += if cells.len() == BLOCK {
                    (0..BLOCK / 8)
                        .map(|k| {
                            // SAFETY: blocks start at multiples of 64 bytes
                            // of a page-aligned array, so the word is
                            // aligned and inside it; no other thread
                            // touches the state while this one sweeps
                            // (between rounds), so the mixed-size access
                            // is not concurrent with any other. The pointer
                            // comes from the whole block, so its provenance
                            // covers the 8 bytes.
                            let word = unsafe {
                                AtomicU64::from_ptr(
                                    cells.as_ptr().add(8 * k).cast::<u64>().cast_mut(),
                                )
                            };
                            (word.load(Relaxed) & 0x8080_8080_8080_8080).count_ones() as usize
                        })
                        .sum::<usize>()
                } else {
                    cells
                        .iter()
                        .filter(|c| c.load(Relaxed) & FRESH != 0)
                        .count()
                };
            }
        }
    }

    /// The fresh positions of `blocks` (increasing, but for one wrap round
    /// the bitmap), no longer fresh.
    fn fresh_in(&self, blocks: &[usize]) -> Frontier {
        let mut found = Frontier::default();
        let mut cursor = self.enc.cursor(self.seeds);
        for &b in blocks {
            let first = b * BLOCK;
            let cells = &self.state[first..(first + BLOCK).min(self.state.len())];
            for (k, cell) in cells.iter().enumerate() {
                let c = cell.load(Relaxed);
                if c & FRESH != 0 {
                    cell.store(c & !FRESH, Relaxed);
                    let board = cursor.seek(self.start + (first + k) as u64);
                    if code::value(c) > 0 {
                        found.wins.push(board);
                    } else {
                        found.losses.push(board);
                    }
                }
            }
        }
        found
    }

    /// Tells the predecessors of a frontier, in parallel: returns the
    /// positions of this slice it decides (as many as `cap` allows, the
    /// rest left fresh) and the messages for other ranks.
    fn round(&self, t: i8, frontier: &[Frontier], cap: usize) -> (Vec<Frontier>, Outbox) {
        const PIECE: usize = 4096;
        let room = Room::new(cap);
        let pieces = frontier.par_iter().flat_map(|f| {
            let wins = f.wins.par_chunks(PIECE).map(|c| (c, true));
            wins.chain(f.losses.par_chunks(PIECE).map(|c| (c, false)))
        });
        let ranks = self.owners.ranks();
        let parts: Vec<(Frontier, Batches)> = pieces
            .map(|(children, win)| {
                let mut next = Frontier::default();
                let mut out = vec![Vec::new(); ranks];
                let mut quota = room.quota();
                self.tell_predecessors(t, children, win, &mut quota, &mut next, &mut out);
                (next, out)
            })
            .collect();
        let (next, out): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
        (
            next.into_iter().filter(|f| f.len() > 0).collect(),
            Outbox::gather(&out, ranks),
        )
    }

    /// Tells every predecessor of `children` (which entered `W_t` if `win`,
    /// else `L_t`): those in this slice now, adding the ones it decides to
    /// `next`; the others by a message in `out`.
    fn tell_predecessors(
        &self,
        t: i8,
        children: &[Board],
        win: bool,
        quota: &mut Quota,
        next: &mut Frontier,
        out: &mut Batches,
    ) {
        let v = if win { -t } else { t };
        let mut visit = |(j, p): (usize, Board)| {
            if self.visit(t, win, j) {
                self.enlist(j, v, p, quota, next);
            }
        };
        let mut pipeline = Pipeline::new((0, Board::EMPTY));
        let end = self.start + self.state.len() as u64;
        for child in children {
            for_each_predecessor(self.rules, child, |p| {
                let i = self.enc.rank_in(self.seeds, p);
                if (self.start..end).contains(&i) {
                    let j = (i - self.start) as usize;
                    prefetch(&self.state[j]);
                    pipeline.push((j, *p), &mut visit);
                } else {
                    let tag = if win { ENTERED_W } else { 0 };
                    out[self.owners.owner(i)].push(i | tag);
                }
            });
        }
        pipeline.finish(&mut visit);
    }

    /// Applies the messages other ranks sent this one, in parallel, adding
    /// the positions they decide to `frontier` while it has room.
    fn receive(&self, t: i8, inbox: &[u64], frontier: &mut Vec<Frontier>, cap: usize) {
        let room = Room::new(cap.saturating_sub(total(frontier)));
        let parts: Vec<Frontier> = inbox
            .par_chunks(4096)
            .map(|messages| {
                let mut next = Frontier::default();
                let mut quota = room.quota();
                let mut visit = |(j, message): (usize, u64)| {
                    let win = message & ENTERED_W != 0;
                    if self.visit(t, win, j) {
                        let p = self.enc.unrank(self.seeds, message & !ENTERED_W);
                        let v = if win { -t } else { t };
                        self.enlist(j, v, p, &mut quota, &mut next);
                    }
                };
                let mut pipeline = Pipeline::new((0, 0u64));
                for &m in messages {
                    let j = ((m & !ENTERED_W) - self.start) as usize;
                    prefetch(&self.state[j]);
                    pipeline.push((j, m), &mut visit);
                }
                pipeline.finish(&mut visit);
                next
            })
            .collect();
        frontier.extend(parts.into_iter().filter(|f| f.len() > 0));
    }
}
