//! A second, independent level solver: forward evaluation to a fixed point.
//!
//! It shares no solving code with [`super::solve`] (no unmove generation, no
//! move counters). For each threshold `t = n..1` it evaluates positions
//! forwards, from their moves: a position enters `W_t` when some move is
//! worth `>= t` and `L_t` when every move is worth `<= -t`, judged from the
//! values already known. After a first pass over every undecided position,
//! only the parents of positions just decided are evaluated again (parents
//! are found by inverting the forward move lists, not by unmoving), until
//! nothing changes. Each evaluation only adds positions that belong to the
//! least fixed points, and when nothing is left to evaluate the sets are
//! closed, so the result is exact. The verifier and the tests use it to
//! re-derive levels; the builder does not.

use std::sync::atomic::{AtomicBool, AtomicI8, AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use super::index::Encoder;
use super::rules::{Rules, moves};

const UNKNOWN: i8 = i8::MIN;
/// Marks an unused move slot in [`Graph::quiet`].
pub const NO_MOVE: u32 = u32::MAX;
/// Marks a position without moves leaving the level in [`Graph::exit`].
pub const NO_EXIT: i8 = i8::MIN;

/// A game graph: positions, each with up to six quiet moves to positions of
/// the graph and a best value among its other moves (which leave the graph
/// with known values). A level of Oware is one; so is any small hand-made
/// graph used to test the solver.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Children by quiet moves (`NO_MOVE` where unused).
    pub quiet: Vec<[u32; 6]>,
    /// Best value of the moves that leave the graph (`NO_EXIT` if none).
    pub exit: Vec<i8>,
}

/// Solves level `seeds` from the values of the lower levels, by sweeps.
/// Levels beyond `u32::MAX` positions are out of its reach (it is a checker).
pub fn solve_level_forward(rules: Rules, seeds: usize, lower: &[&[i8]]) -> Vec<i8> {
    solve_graph(&Graph::oware_level(rules, seeds, lower), seeds as i8)
}

/// The exact values of `g` (endless play worth 0), all within `-max..=max`.
pub fn solve_graph(g: &Graph, max: i8) -> Vec<i8> {
    let n = g.exit.len();
    let parents = Parents::build(g);
    let value: Vec<AtomicI8> = (0..n).map(|_| AtomicI8::new(UNKNOWN)).collect();
    let queued: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    // Decides position `i` for threshold `t` if its moves allow it.
    let decide = |i: usize, t: i8| -> bool {
        // `NO_EXIT` passes the first test and fails the second.
        let mut all_bad = g.exit[i] <= -t;
        let mut some_good = g.exit[i] >= t;
        for &c in g.quiet[i].iter().filter(|&&c| c != NO_MOVE) {
            let cv = value[c as usize].load(Relaxed);
            // Known values all satisfy |v| >= t at this point.
            some_good |= cv != UNKNOWN && cv < 0;
            all_bad &= cv != UNKNOWN && cv > 0;
        }
        let v = if some_good {
            t
        } else if all_bad {
            -t
        } else {
            return false;
        };
        value[i]
            .compare_exchange(UNKNOWN, v, Relaxed, Relaxed)
            .is_ok()
    };
    for t in (1..=max).rev() {
        let mut work: Vec<u32> = (0..n as u32)
            .into_par_iter()
            .filter(|&i| value[i as usize].load(Relaxed) == UNKNOWN)
            .collect();
        while !work.is_empty() {
            let parts: Vec<Vec<u32>> = work
                .par_chunks(4096)
                .map(|chunk| {
                    let mut next = Vec::new();
                    for &i in chunk {
                        let i = i as usize;
                        queued[i].store(false, Relaxed);
                        if value[i].load(Relaxed) != UNKNOWN || !decide(i, t) {
                            continue;
                        }
                        for &p in parents.list(i) {
                            let p = p as usize;
                            if value[p].load(Relaxed) == UNKNOWN && !queued[p].swap(true, Relaxed) {
                                next.push(p as u32);
                            }
                        }
                    }
                    next
                })
                .collect();
            work = parts.concat();
        }
    }
    value
        .into_iter()
        .map(|v| match v.into_inner() {
            UNKNOWN => 0,
            v => v,
        })
        .collect()
}

/// Quiet-move parents of every position, by inverting the forward lists
/// (compressed rows: the parents of `i` are `edges[start[i]..start[i+1]]`).
struct Parents {
    start: Vec<u32>,
    edges: Vec<u32>,
}

impl Parents {
    fn build(g: &Graph) -> Parents {
        let n = g.quiet.len();
        let count: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        g.quiet.par_iter().for_each(|children| {
            for &c in children.iter().filter(|&&c| c != NO_MOVE) {
                count[c as usize].fetch_add(1, Relaxed);
            }
        });
        let mut start = Vec::with_capacity(n + 1);
        let mut total = 0u32;
        start.push(0);
        for c in &count {
            total += c.load(Relaxed);
            start.push(total);
        }
        // Fill each row from its end, counting down.
        let edges: Vec<AtomicU32> = (0..total).map(|_| AtomicU32::new(0)).collect();
        g.quiet.par_iter().enumerate().for_each(|(p, children)| {
            for &c in children.iter().filter(|&&c| c != NO_MOVE) {
                let slot = start[c as usize] + count[c as usize].fetch_sub(1, Relaxed) - 1;
                edges[slot as usize].store(p as u32, Relaxed);
            }
        });
        Parents {
            start,
            edges: edges.into_iter().map(AtomicU32::into_inner).collect(),
        }
    }

    fn list(&self, i: usize) -> &[u32] {
        &self.edges[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

impl Graph {
    /// The graph of Oware level `seeds`: quiet moves stay in it, captures
    /// (and the end of the game) leave it with values from `lower`.
    pub fn oware_level(rules: Rules, seeds: usize, lower: &[&[i8]]) -> Graph {
        assert_eq!(lower.len(), seeds);
        let enc = Encoder::new(seeds);
        let size = enc.level_size(seeds);
        assert!(
            size < u64::from(NO_MOVE),
            "level too large for the forward solver"
        );
        graph(rules, seeds, &enc, lower, size as usize)
    }
}

fn graph(rules: Rules, seeds: usize, enc: &Encoder, lower: &[&[i8]], size: usize) -> Graph {
    let mut g = Graph {
        quiet: vec![[NO_MOVE; 6]; size],
        exit: vec![NO_EXIT; size],
    };
    let chunk = 1 << 14;
    g.quiet
        .par_chunks_mut(chunk)
        .zip(g.exit.par_chunks_mut(chunk))
        .enumerate()
        .for_each(|(c, (targets, best))| {
            let start = (c * chunk) as u64;
            enc.for_range(seeds, start, start + targets.len() as u64, |i, b| {
                let j = (i - start) as usize;
                let ms = moves(rules, b);
                if ms.as_slice().is_empty() {
                    // No seeds to move: the opponent takes the rest.
                    best[j] = -(seeds as i8);
                }
                let mut slot = 0;
                for m in ms.as_slice() {
                    if m.captured == 0 {
                        targets[j][slot] = enc.rank(&m.child) as u32;
                        slot += 1;
                    } else {
                        let rest = seeds - usize::from(m.captured);
                        let v = m.captured as i8 - lower[rest][enc.rank(&m.child) as usize];
                        best[j] = best[j].max(v);
                    }
                }
            });
        });
    g
}
