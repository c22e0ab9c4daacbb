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
//! is left after `t = 1` has value 0. This is exact, cycles included.
//!
//! Work is split by index ranges (forward pass, threshold seeding) and
//! propagation runs in rounds over frontiers, so that a distributed version
//! can exchange each round's cross-range updates in one batch.

use std::sync::atomic::{AtomicI8, AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use super::board::Board;
use super::index::Encoder;
use super::retro::for_each_predecessor;
use super::rules::{moves, Rules};
use crate::progress::Progress;

/// Marks a value not yet determined.
const UNKNOWN: i8 = i8::MIN;
/// Best-capture value of a position without captures.
const NO_CAPTURE: i8 = i8::MIN;
/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 15;

/// Solves level `seeds` under `rules`, given `lower[k]`, the values of every
/// level `k < seeds` in index order. Returns the level's values in index order.
pub fn solve_level(rules: Rules, seeds: usize, lower: &[&[i8]], progress: Progress) -> Vec<i8> {
    assert_eq!(lower.len(), seeds, "every lower level is needed");
    let enc = Encoder::new(seeds);
    let size = enc.level_size(seeds);
    let n = usize::try_from(size).expect("level fits in memory");

    // Forward pass: best capture and number of quiet moves of every position.
    let mut best_capture = vec![0i8; n];
    let mut quiet = vec![0u8; n];
    let stage = progress.stage(format!("level {seeds}: moves"), size);
    best_capture
        .par_chunks_mut(CHUNK as usize)
        .zip(quiet.par_chunks_mut(CHUNK as usize))
        .enumerate()
        .for_each(|(c, (best, count))| {
            let start = c as u64 * CHUNK;
            enc.for_range(seeds, start, start + best.len() as u64, |i, b| {
                let j = (i - start) as usize;
                let (e, q) = exits(rules, &enc, lower, b);
                best[j] = e;
                count[j] = q;
            });
            stage.inc(best.len() as u64);
        });
    stage.finish();

    let value: Vec<AtomicI8> = (0..n).into_par_iter().map(|_| AtomicI8::new(UNKNOWN)).collect();
    let quiet = into_atomic(quiet);
    let solver = Propagation { rules, seeds, enc: &enc, best_capture: &best_capture, quiet: &quiet, value: &value };

    let stage = progress.stage(format!("level {seeds}: values"), size);
    for t in (1..=seeds as i8).rev() {
        let (mut wins, mut losses) = solver.seed(t);
        while !wins.is_empty() || !losses.is_empty() {
            stage.inc((wins.len() + losses.len()) as u64);
            let next_losses = solver.after_wins(t, &wins);
            let next_wins = solver.after_losses(t, &losses);
            wins = next_wins;
            losses = next_losses;
        }
    }
    stage.finish();

    value
        .into_par_iter()
        .map(|v| match v.into_inner() {
            UNKNOWN => 0,
            v => v,
        })
        .collect()
}

/// The best capture (`NO_CAPTURE` if none; `-seeds` if there is no move at
/// all) and the number of quiet moves of `b`.
#[inline]
fn exits(rules: Rules, enc: &Encoder, lower: &[&[i8]], b: &Board) -> (i8, u8) {
    let ms = moves(rules, b);
    if ms.as_slice().is_empty() {
        return (-(b.seeds() as i8), 0);
    }
    let mut best = NO_CAPTURE;
    let mut quiet = 0u8;
    for m in ms.as_slice() {
        if m.captured == 0 {
            quiet += 1;
        } else {
            let level = b.seeds() - usize::from(m.captured);
            let child = lower[level][enc.rank(&m.child) as usize];
            best = best.max(m.captured as i8 - child);
        }
    }
    (best, quiet)
}

/// Shared state of the backward propagation of one level.
struct Propagation<'a> {
    rules: Rules,
    seeds: usize,
    enc: &'a Encoder,
    best_capture: &'a [i8],
    quiet: &'a [AtomicU8],
    value: &'a [AtomicI8],
}

impl Propagation<'_> {
    /// Claims `index` for value `v` if still unknown; true if this call did.
    #[inline]
    fn claim(&self, index: usize, v: i8) -> bool {
        self.value[index].compare_exchange(UNKNOWN, v, Relaxed, Relaxed).is_ok()
    }

    /// The positions entering `W_t` and `L_t` without help from this
    /// threshold's propagation: a capture worth exactly `t`, or no quiet move
    /// left and a best capture of exactly `-t`.
    fn seed(&self, t: i8) -> (Vec<Board>, Vec<Board>) {
        let parts: Vec<(Vec<Board>, Vec<Board>)> = (0..self.value.len())
            .into_par_iter()
            .step_by(CHUNK as usize)
            .map(|start| {
                let end = (start + CHUNK as usize).min(self.value.len());
                let (mut w, mut l) = (Vec::new(), Vec::new());
                for i in start..end {
                    let e = self.best_capture[i];
                    if e == t && self.claim(i, t) {
                        w.push(self.enc.unrank(self.seeds, i as u64));
                    } else if e == -t && self.quiet[i].load(Relaxed) == 0 && self.claim(i, -t) {
                        l.push(self.enc.unrank(self.seeds, i as u64));
                    }
                }
                (w, l)
            })
            .collect();
        let (w, l): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
        (w.concat(), l.concat())
    }

    /// Positions just found in `W_t`: each predecessor loses one quiet move;
    /// those left with none (and no capture better than `-t`) enter `L_t`.
    fn after_wins(&self, t: i8, wins: &[Board]) -> Vec<Board> {
        self.round(wins, |p| {
            if self.value[p].load(Relaxed) != UNKNOWN {
                return false;
            }
            let before = self.quiet[p].fetch_sub(1, Relaxed);
            debug_assert!(before > 0);
            before == 1 && self.best_capture[p] <= -t && self.claim(p, -t)
        })
    }

    /// Positions just found in `L_t`: every undecided predecessor enters `W_t`.
    fn after_losses(&self, t: i8, losses: &[Board]) -> Vec<Board> {
        self.round(losses, |p| self.claim(p, t))
    }

    /// Applies `visit` to every predecessor of every position of `frontier`,
    /// in parallel, collecting the positions it decides.
    fn round(&self, frontier: &[Board], visit: impl Fn(usize) -> bool + Sync) -> Vec<Board> {
        let parts: Vec<Vec<Board>> = frontier
            .par_chunks(4096)
            .map(|chunk| {
                let mut out = Vec::new();
                for child in chunk {
                    for_each_predecessor(self.rules, child, |p| {
                        if visit(self.enc.rank(p) as usize) {
                            out.push(*p);
                        }
                    });
                }
                out
            })
            .collect();
        parts.concat()
    }

}

/// Reinterprets counters as atomics without copying.
fn into_atomic(v: Vec<u8>) -> Vec<AtomicU8> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8,
    // and the vector's allocation is handed over whole.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<AtomicU8>(), v.len(), v.capacity()) }
}
