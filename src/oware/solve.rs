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
//! The level may be split among several ranks (processes, see
//! [`crate::exchange`]), each holding the working state of its own index
//! range only. Propagation runs in rounds over frontiers: a predecessor in
//! another rank's range becomes a message in that rank's batch, and the
//! batches of a round travel in one all-to-all exchange. The single process
//! is the case of one rank, with nothing to send.

use std::ops::Range;
use std::sync::atomic::{AtomicI8, AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use super::board::Board;
use super::index::Encoder;
use super::retro::for_each_predecessor;
use super::rules::{Rules, moves};
use crate::exchange::{Alone, Exchange, Owners};
use crate::memory::{HugeSlice, Pipeline, Zeroable, prefetch};
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
}

/// Solves this rank's slice of level `seeds` together with the other ranks
/// of `ex` (see [`solve_level`]). Every rank must call it with the same
/// arguments; `lower` is read only at the positions this rank's moves reach.
pub fn solve_part(
    rules: Rules,
    seeds: usize,
    lower: &[&[i8]],
    ex: &dyn Exchange,
    progress: Progress,
) -> Part {
    assert_eq!(lower.len(), seeds, "every lower level is needed");
    let enc = Encoder::new(seeds);
    let size = enc.level_size(seeds);
    let owners = Owners::new(size, ex.ranks());
    let range = owners.range(ex.rank());
    let n = usize::try_from(range.end - range.start).expect("slice fits in memory");

    // Forward pass: best capture and number of quiet moves of every position.
    let memory = "memory for the level's working state";
    let mut cells = HugeSlice::<Cell>::zeroed(n).expect(memory);
    let mut best = HugeSlice::<i8>::zeroed(n).expect(memory);
    let stage = progress.stage(format!("level {seeds}: moves"), size);
    let chunk = CHUNK as usize;
    let ranks = ex.ranks() as u64;
    cells
        .par_chunks_mut(chunk)
        .zip(best.par_chunks_mut(chunk))
        .enumerate()
        .for_each(|(c, (cells, best))| {
            let start = range.start + c as u64 * CHUNK;
            forward_chunk(rules, seeds, &enc, lower, start, cells, best);
            // Slices are even: this rank's share stands for the whole.
            stage.inc(cells.len() as u64 * ranks);
        });
    stage.finish();

    let solver = Propagation {
        rules,
        seeds,
        enc: &enc,
        owners: &owners,
        start: range.start,
        cells: &cells,
        best: &best,
    };

    // Each loop turn delivers the last round's messages, then runs a round
    // on what is newly decided; a threshold ends when no rank decided anything.
    let stage = progress.stage(format!("level {seeds}: values"), size);
    let (mut sent_bytes, mut rounds) = (0, 0);
    for t in (1..=seeds as i8).rev() {
        let (seeded, mut frontier, mut outboxes) = solver.seed(t);
        stage.inc(ex.sum(seeded));
        loop {
            sent_bytes += outboxes.iter().map(|o| o.len() as u64 * 8).sum::<u64>();
            let inbox = ex.all_to_all(&outboxes);
            rounds += 1;
            solver.receive(t, &inbox, &mut frontier);
            let decided = ex.sum(frontier.len() as u64);
            if decided == 0 {
                break;
            }
            stage.inc(decided);
            (frontier, outboxes) = solver.round(t, &frontier);
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
    Part {
        range,
        values: best,
        sent_bytes,
        rounds,
    }
}

/// Fills the cells and best captures of positions `start..start + cells.len()`.
///
/// Capture values live in lower levels, at random places: each lookup is
/// prefetched and resolved [`LAG`](crate::memory::LAG) captures later so
/// that misses overlap.
fn forward_chunk(
    rules: Rules,
    seeds: usize,
    enc: &Encoder,
    lower: &[&[i8]],
    start: u64,
    cells: &mut [Cell],
    best: &mut [i8],
) {
    // (position, captured, lower level, index there)
    let mut pipeline = Pipeline::new((0usize, 0u8, 0usize, 0usize));
    best.fill(NO_CAPTURE);
    // Shared by the walk and the pipeline's resolver.
    let best = std::cell::Cell::from_mut(best).as_slice_of_cells();
    let mut resolve = |(j, captured, level, index): (usize, u8, usize, usize)| {
        let v = captured as i8 - lower[level][index];
        best[j].set(best[j].get().max(v));
    };
    enc.for_range(seeds, start, start + cells.len() as u64, |i, b| {
        let j = (i - start) as usize;
        let ms = moves(rules, b);
        cells[j] = Cell {
            value: AtomicI8::new(UNKNOWN),
            quiet: AtomicU8::new(0),
        };
        if ms.as_slice().is_empty() {
            best[j].set(-(seeds as i8)); // no seeds: the opponent takes the rest
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
            pipeline.push((j, m.captured, level, index), &mut resolve);
        }
        *cells[j].quiet.get_mut() = quiet;
    });
    pipeline.finish(&mut resolve);
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

    fn concat(parts: impl IntoIterator<Item = Frontier>) -> Frontier {
        let (wins, losses): (Vec<_>, Vec<_>) =
            parts.into_iter().map(|f| (f.wins, f.losses)).unzip();
        Frontier {
            wins: wins.concat(),
            losses: losses.concat(),
        }
    }
}

/// One batch of messages per rank. A message is the index of a predecessor
/// owned by that rank, with [`ENTERED_W`] set if its child entered `W_t`
/// (else `L_t`).
type Outboxes = Vec<Vec<u64>>;

/// Message flag: the child entered `W_t`. Indices stay far below 2^63.
const ENTERED_W: u64 = 1 << 63;

fn concat_outboxes(parts: Vec<Outboxes>, ranks: usize) -> Outboxes {
    (0..ranks)
        .map(|r| parts.iter().flat_map(|p| &p[r]).copied().collect())
        .collect()
}

/// Shared state of the backward propagation of one rank's slice of a level.
struct Propagation<'a> {
    rules: Rules,
    seeds: usize,
    enc: &'a Encoder,
    owners: &'a Owners,
    /// First index of this rank's slice; cells are numbered from it.
    start: u64,
    cells: &'a [Cell],
    /// Best capture value of each position, `NO_CAPTURE` if none; apart from
    /// the cells so that seeding scans it at memory speed.
    best: &'a [i8],
}

impl Propagation<'_> {
    /// Claims slice position `j` for value `v` if still unknown; true if
    /// this call did.
    #[inline]
    fn claim(&self, j: usize, v: i8) -> bool {
        self.cells[j]
            .value
            .compare_exchange(UNKNOWN, v, Relaxed, Relaxed)
            .is_ok()
    }

    /// Brings what a visit to slice position `j` touches into cache.
    #[inline]
    fn prefetch(&self, j: usize) {
        prefetch(&self.cells[j]);
        prefetch(&self.best[j]);
    }

    /// Tells slice position `p` that one of its children entered `W_t`
    /// (`win`) or `L_t`. True if this decided `p`.
    #[inline]
    fn visit(&self, t: i8, win: bool, p: usize) -> bool {
        if win {
            self.after_win(t, p)
        } else {
            self.after_loss(t, p)
        }
    }

    /// A predecessor `p` of a position just found in `W_t` loses one quiet
    /// move; left with none (and no capture better than `-t`), it enters
    /// `L_t`.
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
    /// still undecided.
    #[inline]
    fn after_loss(&self, t: i8, p: usize) -> bool {
        // A plain load first: most predecessors met late are decided already,
        // and a failed compare-exchange still costs a locked instruction.
        self.cells[p].value.load(Relaxed) == UNKNOWN && self.claim(p, t)
    }

    fn outboxes(&self) -> Outboxes {
        vec![Vec::new(); self.owners.ranks()]
    }

    /// Finds the positions entering `W_t` and `L_t` without help from this
    /// threshold's propagation (a capture worth exactly `t`; or no quiet move
    /// left and a best capture of exactly `-t`) and runs the first round of
    /// propagation from them chunk by chunk, so that they never have to be
    /// held all at once. Returns how many were found, and what that round
    /// decided and has to send.
    fn seed(&self, t: i8) -> (u64, Frontier, Outboxes) {
        const BLOCK: usize = 64;
        let parts: Vec<(u64, Frontier, Outboxes)> = self
            .best
            .par_chunks(CHUNK as usize)
            .enumerate()
            .map(|(c, best)| {
                let first = c * CHUNK as usize;
                let mut found = Frontier::default();
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
                        let j = first + b * BLOCK + k;
                        let mut board = || cursor.seek(self.start + j as u64);
                        if e == t && self.claim(j, t) {
                            found.wins.push(board());
                        } else if e == -t
                            && self.cells[j].quiet.load(Relaxed) == 0
                            && self.claim(j, -t)
                        {
                            found.losses.push(board());
                        }
                    }
                }
                let mut next = Frontier::default();
                let mut out = self.outboxes();
                self.tell_predecessors(t, &found.wins, true, &mut next, &mut out);
                self.tell_predecessors(t, &found.losses, false, &mut next, &mut out);
                (found.len() as u64, next, out)
            })
            .collect();
        let seeded = parts.iter().map(|p| p.0).sum();
        let (next, out): (Vec<_>, Vec<_>) = parts.into_iter().map(|(_, f, o)| (f, o)).unzip();
        (
            seeded,
            Frontier::concat(next),
            concat_outboxes(out, self.owners.ranks()),
        )
    }

    /// Tells the predecessors of a frontier, in parallel: returns the
    /// positions of this slice it decides and the messages for other ranks.
    fn round(&self, t: i8, frontier: &Frontier) -> (Frontier, Outboxes) {
        const PIECE: usize = 4096;
        let pieces = frontier.wins.par_chunks(PIECE).map(|c| (c, true));
        let pieces = pieces.chain(frontier.losses.par_chunks(PIECE).map(|c| (c, false)));
        let parts: Vec<(Frontier, Outboxes)> = pieces
            .map(|(children, win)| {
                let mut next = Frontier::default();
                let mut out = self.outboxes();
                self.tell_predecessors(t, children, win, &mut next, &mut out);
                (next, out)
            })
            .collect();
        let (next, out): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
        (
            Frontier::concat(next),
            concat_outboxes(out, self.owners.ranks()),
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
        next: &mut Frontier,
        out: &mut Outboxes,
    ) {
        let decided = if win {
            &mut next.losses
        } else {
            &mut next.wins
        };
        let mut visit = |(j, p): (usize, Board)| {
            if self.visit(t, win, j) {
                decided.push(p);
            }
        };
        let mut pipeline = Pipeline::new((0, Board::EMPTY));
        let end = self.start + self.cells.len() as u64;
        for child in children {
            for_each_predecessor(self.rules, child, |p| {
                let i = self.enc.rank_in(self.seeds, p);
                if (self.start..end).contains(&i) {
                    let j = (i - self.start) as usize;
                    self.prefetch(j);
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
    /// the positions they decide to `frontier`.
    fn receive(&self, t: i8, inbox: &[u64], frontier: &mut Frontier) {
        let parts: Vec<Frontier> = inbox
            .par_chunks(4096)
            .map(|messages| {
                let mut next = Frontier::default();
                let mut visit = |(j, message): (usize, u64)| {
                    let win = message & ENTERED_W != 0;
                    if self.visit(t, win, j) {
                        let p = self.enc.unrank(self.seeds, message & !ENTERED_W);
                        if win {
                            &mut next.losses
                        } else {
                            &mut next.wins
                        }
                        .push(p);
                    }
                };
                let mut pipeline = Pipeline::new((0, 0u64));
                for &m in messages {
                    let j = ((m & !ENTERED_W) - self.start) as usize;
                    self.prefetch(j);
                    pipeline.push((j, m), &mut visit);
                }
                pipeline.finish(&mut visit);
                next
            })
            .collect();
        let received = Frontier::concat(parts);
        frontier.wins.extend(received.wins);
        frontier.losses.extend(received.losses);
    }
}
