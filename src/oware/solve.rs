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
use super::rules::{Rules, moves};
use crate::memory::{HugeSlice, Zeroable};
use crate::progress::Progress;

/// Marks a value not yet determined.
const UNKNOWN: i8 = i8::MIN;
/// Best-capture value of a position without captures.
const NO_CAPTURE: i8 = i8::MIN;
/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 15;

/// Solves level `seeds` under `rules`, given `lower[k]`, the values of every
/// level `k < seeds` in index order. Returns the level's values in index order.
pub fn solve_level(
    rules: Rules,
    seeds: usize,
    lower: &[&[i8]],
    progress: Progress,
) -> HugeSlice<i8> {
    assert_eq!(lower.len(), seeds, "every lower level is needed");
    let enc = Encoder::new(seeds);
    let size = enc.level_size(seeds);
    let n = usize::try_from(size).expect("level fits in memory");

    // Forward pass: best capture and number of quiet moves of every position.
    let memory = "memory for the level's working state";
    let mut cells = HugeSlice::<Cell>::zeroed(n).expect(memory);
    let mut best = HugeSlice::<i8>::zeroed(n).expect(memory);
    let stage = progress.stage(format!("level {seeds}: moves"), size);
    let chunk = CHUNK as usize;
    cells
        .par_chunks_mut(chunk)
        .zip(best.par_chunks_mut(chunk))
        .enumerate()
        .for_each(|(c, (cells, best))| {
            let start = c as u64 * CHUNK;
            forward_chunk(rules, seeds, &enc, lower, start, cells, best);
            stage.inc(cells.len() as u64);
        });
    stage.finish();

    let solver = Propagation {
        rules,
        seeds,
        enc: &enc,
        cells: &cells,
        best: &best,
    };

    let stage = progress.stage(format!("level {seeds}: values"), size);
    for t in (1..=seeds as i8).rev() {
        let (seeded, mut wins, mut losses) = solver.seed(t);
        stage.inc(seeded);
        while !wins.is_empty() || !losses.is_empty() {
            stage.inc((wins.len() + losses.len()) as u64);
            let next_losses = solver.round(&wins, |p| solver.after_win(t, p));
            let next_wins = solver.round(&losses, |p| solver.after_loss(t, p));
            wins = next_wins;
            losses = next_losses;
        }
    }
    stage.finish();

    // The best captures are no longer needed: their array takes the values.
    best.par_iter_mut()
        .zip(cells.par_iter())
        .for_each(|(v, c)| {
            *v = match c.value.load(Relaxed) {
                UNKNOWN => 0,
                v => v,
            }
        });
    best
}

/// Fills the cells and best captures of positions `start..start + cells.len()`.
///
/// Capture values live in lower levels, at random places: each lookup is
/// prefetched and resolved `LAG` captures later so that misses overlap.
fn forward_chunk(
    rules: Rules,
    seeds: usize,
    enc: &Encoder,
    lower: &[&[i8]],
    start: u64,
    cells: &mut [Cell],
    best: &mut [i8],
) {
    const LAG: usize = 16;
    // (position, captured, lower level, index there)
    let mut ring = [(0usize, 0u8, 0usize, 0usize); LAG];
    let mut n = 0usize;
    best.fill(NO_CAPTURE);
    let resolve = |best: &mut [i8], (j, captured, level, index): (usize, u8, usize, usize)| {
        let v = captured as i8 - lower[level][index];
        best[j] = best[j].max(v);
    };
    enc.for_range(seeds, start, start + cells.len() as u64, |i, b| {
        let j = (i - start) as usize;
        let ms = moves(rules, b);
        cells[j] = Cell {
            value: AtomicI8::new(UNKNOWN),
            quiet: AtomicU8::new(0),
        };
        if ms.as_slice().is_empty() {
            best[j] = -(seeds as i8); // no seeds: the opponent takes the rest
            return;
        }
        let mut quiet = 0u8;
        for m in ms.as_slice() {
            if m.captured == 0 {
                quiet += 1;
                continue;
            }
            let level = seeds - usize::from(m.captured);
            let index = enc.rank_in(level, &m.child) as usize;
            prefetch(&lower[level][index]);
            let slot = &mut ring[n % LAG];
            if n >= LAG {
                resolve(best, *slot);
            }
            *slot = (j, m.captured, level, index);
            n += 1;
        }
        *cells[j].quiet.get_mut() = quiet;
    });
    for k in n.saturating_sub(LAG)..n {
        resolve(best, ring[k % LAG]);
    }
}

/// The changing state of one position, kept together so that a visit from a
/// predecessor walk touches one cache line.
struct Cell {
    /// The value once known, else `UNKNOWN`.
    value: AtomicI8,
    /// Quiet moves not yet known to lead into `W` of the current threshold.
    quiet: AtomicU8,
}

// SAFETY: atomic bytes are valid all-zero and have no drop glue.
unsafe impl Zeroable for Cell {}

/// Shared state of the backward propagation of one level.
struct Propagation<'a> {
    rules: Rules,
    seeds: usize,
    enc: &'a Encoder,
    cells: &'a [Cell],
    /// Best capture value of each position, `NO_CAPTURE` if none; apart from
    /// the cells so that seeding scans it at memory speed.
    best: &'a [i8],
}

impl Propagation<'_> {
    /// Claims `index` for value `v` if still unknown; true if this call did.
    #[inline]
    fn claim(&self, index: usize, v: i8) -> bool {
        self.cells[index]
            .value
            .compare_exchange(UNKNOWN, v, Relaxed, Relaxed)
            .is_ok()
    }

    /// Finds the positions entering `W_t` and `L_t` without help from this
    /// threshold's propagation (a capture worth exactly `t`; or no quiet move
    /// left and a best capture of exactly `-t`) and runs the first round of
    /// propagation from them chunk by chunk, so that they never have to be
    /// held all at once. Returns how many were found, and the positions
    /// decided by that round: (seeded, wins, losses).
    fn seed(&self, t: i8) -> (u64, Vec<Board>, Vec<Board>) {
        const BLOCK: usize = 64;
        let parts: Vec<(u64, Vec<Board>, Vec<Board>)> = self
            .best
            .par_chunks(CHUNK as usize)
            .enumerate()
            .map(|(c, best)| {
                let start = c * CHUNK as usize;
                let (mut w, mut l) = (Vec::new(), Vec::new());
                let mut cursor = self.enc.cursor(self.seeds);
                for (b, block) in best.chunks(BLOCK).enumerate() {
                    // Branch-free test of a whole block first: most hold no
                    // candidate, and this loop vectorises.
                    if !block
                        .iter()
                        .fold(false, |any, &e| any | (e == t) | (e == -t))
                    {
                        continue;
                    }
                    for (k, &e) in block.iter().enumerate() {
                        let i = start + b * BLOCK + k;
                        if e == t && self.claim(i, t) {
                            w.push(cursor.seek(i as u64));
                        } else if e == -t
                            && self.cells[i].quiet.load(Relaxed) == 0
                            && self.claim(i, -t)
                        {
                            l.push(cursor.seek(i as u64));
                        }
                    }
                }
                let (mut next_w, mut next_l) = (Vec::new(), Vec::new());
                self.visit_predecessors(&w, |p| self.after_win(t, p), &mut next_l);
                self.visit_predecessors(&l, |p| self.after_loss(t, p), &mut next_w);
                ((w.len() + l.len()) as u64, next_w, next_l)
            })
            .collect();
        let seeded = parts.iter().map(|p| p.0).sum();
        let (w, l): (Vec<_>, Vec<_>) = parts.into_iter().map(|(_, w, l)| (w, l)).unzip();
        (seeded, w.concat(), l.concat())
    }

    /// A predecessor `p` of a position just found in `W_t` loses one quiet
    /// move; left with none (and no capture better than `-t`), it enters
    /// `L_t`. True if this call decided `p`.
    #[inline]
    fn after_win(&self, t: i8, p: usize) -> bool {
        let cell = &self.cells[p];
        if cell.value.load(Relaxed) != UNKNOWN {
            return false;
        }
        let before = cell.quiet.fetch_sub(1, Relaxed);
        debug_assert!(before > 0);
        before == 1 && self.best[p] <= -t && self.claim(p, -t)
    }

    /// A predecessor `p` of a position just found in `L_t` enters `W_t` if
    /// still undecided. True if this call decided `p`.
    #[inline]
    fn after_loss(&self, t: i8, p: usize) -> bool {
        // A plain load first: most predecessors met late are decided already,
        // and a failed compare-exchange still costs a locked instruction.
        self.cells[p].value.load(Relaxed) == UNKNOWN && self.claim(p, t)
    }

    /// Applies `visit` to every predecessor of every position of `frontier`,
    /// in parallel, collecting the positions it decides.
    fn round(&self, frontier: &[Board], visit: impl Fn(usize) -> bool + Sync) -> Vec<Board> {
        let parts: Vec<Vec<Board>> = frontier
            .par_chunks(4096)
            .map(|chunk| {
                let mut out = Vec::new();
                self.visit_predecessors(chunk, &visit, &mut out);
                out
            })
            .collect();
        parts.concat()
    }

    /// Applies `visit` to the index of every predecessor of `children`,
    /// pushing onto `out` those for which it returns true.
    ///
    /// A software pipeline: each predecessor's cell is prefetched and
    /// visited `LAG` predecessors later, so that cache misses overlap
    /// instead of stalling one by one.
    fn visit_predecessors(
        &self,
        children: &[Board],
        visit: impl Fn(usize) -> bool,
        out: &mut Vec<Board>,
    ) {
        const LAG: usize = 16;
        let mut ring = [(0usize, Board::EMPTY); LAG];
        let mut n = 0usize;
        for child in children {
            for_each_predecessor(self.rules, child, |p| {
                let i = self.enc.rank_in(self.seeds, p) as usize;
                prefetch(&self.cells[i]);
                prefetch(&self.best[i]);
                let slot = &mut ring[n % LAG];
                if n >= LAG && visit(slot.0) {
                    out.push(slot.1);
                }
                *slot = (i, *p);
                n += 1;
            });
        }
        for k in n.saturating_sub(LAG)..n {
            let (i, p) = ring[k % LAG];
            if visit(i) {
                out.push(p);
            }
        }
    }
}

/// Hints the processor to load `item` into cache; no effect on other targets.
#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even on bad addresses,
    // and this one is a valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}
