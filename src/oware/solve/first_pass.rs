//! The first pass of the level solver: from the lower levels, the state
//! byte ([`code`](super::code)) of every position of a rank's slice and the
//! seed lists of every threshold. Notices, checkpoints and their files call
//! it the forward pass (`forward`); it is not [`crate::oware::forward`], the
//! verifier's independent forward solver.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::time::Instant;

use rayon::prelude::*;

use super::code::BLOCKED;
use super::{CHUNK, Clock};
use crate::error::Result;
use crate::exchange::Exchange;
use crate::memory::{Pipeline, as_atomic};
use crate::oware::index::{Encoder, Tile};
use crate::oware::lower::LowerLevels;
use crate::oware::rules::{Rules, captures, quiet_moves, value_without_moves};
use crate::oware::workdir::checkpoint::{Checkpoint, ForwardMark, Walk};
use crate::oware::workdir::seeds::SeedLists;
use crate::progress::{Notice, Progress};

/// Best-capture value of a position without captures.
const NO_CAPTURE: i8 = i8::MIN;

/// The first pass of one rank's slice: the state byte (quiet-move
/// counter, blocked bit) of every position, and its seed lists, synced. It
/// runs in two walks, and between them the state bytes hold best captures:
///
/// 1. [`FirstPass::best_captures`], in mover-major order, finds each
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
pub(super) struct FirstPass<'a, L: LowerLevels + ?Sized> {
    pub(super) rules: Rules,
    pub(super) seeds: usize,
    pub(super) enc: &'a Encoder,
    pub(super) lower: &'a L,
    /// The slice's first index.
    pub(super) start: u64,
    pub(super) parts: u32,
    pub(super) dir: &'a Path,
    pub(super) checkpoint: &'a Checkpoint,
    pub(super) ex: &'a dyn Exchange,
    pub(super) progress: Progress<'a>,
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

impl<L: LowerLevels + ?Sized> FirstPass<'_, L> {
    /// Runs the pass on `state` (zeroed, or as the forward checkpoint
    /// `from` left it), taking a checkpoint after a part whenever `clock`
    /// says one is due. Returns the final length of every seed list.
    pub(super) fn run(
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
        enc.tile_groups(seeds, tiles)
            .par_iter()
            .try_for_each(|tiles| -> Result<()> {
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
                for tile in *tiles {
                    enc.walk_tile(seeds, tile, &range, |i, b| {
                        let j = (i - start) as usize;
                        let (ms, quiet) = captures(rules, b);
                        if ms.is_empty() && quiet == 0 {
                            set(j, value_without_moves(seeds));
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
