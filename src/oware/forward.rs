//! A second, independent level solver: forward fixed-point sweeps.
//!
//! It shares no solving code with [`super::solve`] (no predecessors, no
//! counters): for each threshold `t = n..1` it sweeps the level, moving a
//! position into `W_t` when some move is worth `>= t` and into `L_t` when
//! every move is worth `<= -t`, judged from values already known, until a
//! sweep changes nothing. Each sweep only adds positions that belong to the
//! least fixed points, and a sweep that adds nothing means the sets are
//! closed, so the result is exact; it is slower than retrograde propagation
//! (one sweep per step of the longest forced line), which is why the builder
//! does not use it. The verifier and the tests use it to re-derive levels.

use std::sync::atomic::{AtomicBool, AtomicI8, Ordering::Relaxed};

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

/// The exact values of `g` (endless play worth 0), all within
/// `-max..=max`: for each threshold the least fixed points are grown by
/// sweeps until a sweep changes nothing.
pub fn solve_graph(g: &Graph, max: i8) -> Vec<i8> {
    let value: Vec<AtomicI8> = (0..g.exit.len()).map(|_| AtomicI8::new(UNKNOWN)).collect();
    for t in (1..=max).rev() {
        loop {
            let changed = AtomicBool::new(false);
            value.par_iter().enumerate().for_each(|(i, v)| {
                if v.load(Relaxed) != UNKNOWN {
                    return;
                }
                // `NO_EXIT` passes the first test and fails the second.
                let mut all_bad = g.exit[i] <= -t;
                let mut some_good = g.exit[i] >= t;
                for &c in g.quiet[i].iter().filter(|&&c| c != NO_MOVE) {
                    let cv = value[c as usize].load(Relaxed);
                    // Known values all satisfy |v| >= t at this point.
                    some_good |= cv != UNKNOWN && cv < 0;
                    all_bad &= cv != UNKNOWN && cv > 0;
                }
                if some_good {
                    v.store(t, Relaxed);
                    changed.store(true, Relaxed);
                } else if all_bad {
                    v.store(-t, Relaxed);
                    changed.store(true, Relaxed);
                }
            });
            if !changed.load(Relaxed) {
                break;
            }
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
