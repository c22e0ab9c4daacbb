//! A second, independent level solver: forward evaluation to a fixed point.
//!
//! It shares no solving code with [`super::solve`] (no unmove generator, no
//! move counters, no stored move graph); both rest on the rules' one move
//! generator (the `rules` module, which check 2 holds every stored value to)
//! and read the lower levels the same way. Its best captures come from the
//! full move list ([`super::rules::moves`]), the builder's from the
//! capture-only variant, in a loop of the same shape ([`OwareLevel`]'s
//! `exits`, kept apart from the builder's so that neither can change the
//! other). For each threshold `t = n..1` a
//! position is *evaluated* from its moves: it enters `W_t` when some move is
//! worth `>= t` (a capture, or a quiet move to a position in `L_t`) and
//! `L_t` when every move is worth `<= -t`, judged from the values decided so
//! far. One move is enough to win, so wins need no evaluation: at each
//! threshold a position with a capture worth `t` enters `W_t`, and so, round
//! after round, does every parent of a position just put in `L_t`.
//! Evaluated (for `L_t`) are the positions whose best capture is `-t`, then
//! the parents of positions just put in `W_t` whose best capture is not
//! above `-t` (any other cannot lose at `t`), until nothing is left.
//! Whatever is undecided after `t = 1` is worth 0.
//!
//! Why it is exact, and why a checker can trust it: every decision follows
//! from values already decided, so the sets only ever hold positions of the
//! true least fixed points (a value is never claimed without being forced).
//! Parents are found by trying every (pit, seed count) that could have sown
//! into the position and confirming each candidate with the forward rules.
//! Were a parent missed, some position would be decided later than it
//! should — left undecided (0), or won or lost only at a lower threshold
//! through a capture seed — so that a value could come out smaller in size
//! than the true one, never larger and never of the other sign: values
//! that fail the consistency check (2). A stored level that passes check 2
//! *and* equals this solver's values is therefore exactly right, whatever
//! the order of evaluation.
//!
//! The level is scanned for the positions of a threshold's capture value
//! `t` or `-t` in batches of `BATCH` positions (their bytes are read, and
//! only the positions found are turned into boards), and each batch's work is
//! carried to its end (every position won or queued in turn, `STEP`
//! items at a time, the newest first) before the next batch is scanned.
//! That order is as good as any (a position is evaluated again after each
//! of its children is won, so its last evaluation sees all of them), and it
//! keeps the work lists about as long as a batch rather than a level.
//!
//! Memory: one byte and one bit per position, and the work lists (13 bytes
//! a board, so a few hundred MB at most whatever the level). The byte holds the position's best capture while it is undecided
//! and its value once decided (the capture is never read again then; see
//! `Slot`); the bit marks it queued. So it checks any level the builder
//! can build on the same machine, in less memory than the builder.
//!
//! The lower levels are read through [`LowerLevels`], once per capture,
//! before the first threshold ([`Game::exits`]): in mover-major order
//! (`Encoder::mover_tiles`), so that a tile's captures land in a few
//! blocks of each lower level and levels read from compressed tables, or
//! larger than the page cache, are read block by block rather than at
//! random. That walk is cut into parts of about `EXIT_PART` positions
//! (level 36: 107 parts, about an hour on two cores with every lower level
//! read from its compressed table), and the solver may be checkpointed
//! between two parts as between two batches. A lower level that cannot be read (a
//! damaged block, a read error) ends the solve with its error: no value is
//! ever made up for it.

use std::sync::atomic::{AtomicI8, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use super::board::{Board, MAX_SEEDS, PITS};
use super::index::Encoder;
use super::lower::{LowerLevels, check_lower};
use super::rules::{Rules, moves, play, sow, value_without_moves};
use crate::error::{Error, Result};
use crate::memory::{HugeSlice, Pipeline, prefetch};

/// Marks an unused move slot in [`Graph::quiet`].
pub const NO_MOVE: u32 = u32::MAX;
/// Best value of the moves leaving the graph, for a position without any.
pub const NO_EXIT: i8 = i8::MIN;
/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 14;
/// Positions scanned for the work of a threshold at a time (a multiple of
/// [`CHUNK`]): see "Memory" in the module docs.
const BATCH: usize = 1 << 24;
/// Work items handled at a time, the last ones queued first.
const STEP: usize = 1 << 20;
/// Positions per part of the walk that reads the lower levels
/// ([`Game::exits`]) in an Oware level: about half a minute of it at
/// level 36 on two cores (107 parts, about an hour in all).
const EXIT_PART: u64 = 1 << 27;

/// A game graph as the forward solver sees it: positions `0..size()`, each
/// with moves that stay in the graph and moves that leave it with known
/// values. Every position has at least one move.
pub trait Game: Sync {
    /// A position as the solver hands it around (a board, or an index).
    type Node: Copy + Send + Sync;
    /// Number of positions.
    fn size(&self) -> u64;
    /// Calls `f(index, node)` for each of `indices` (increasing, and
    /// usually close together), in order.
    fn nodes(&self, indices: &[u64], f: impl FnMut(u64, Self::Node));
    /// The index of `node`.
    fn index(&self, node: &Self::Node) -> u64;
    /// How many parts [`Game::exits`] is best cut into (at least 1).
    fn exit_parts(&self) -> u32;
    /// Stores into `out[i]` (`out` has [`Game::size`] cells) the best
    /// value among the moves leaving the graph (`NO_EXIT` if none) of every
    /// position `i` of part `part` of `parts` (every position lies in one
    /// part, whatever `parts`), in whatever order and from whatever threads
    /// suit the game. An error is a store of those values that failed.
    fn exits(&self, out: &[AtomicI8], part: u32, parts: u32) -> Result<()>;
    /// Calls `f(child)` for the index of each move staying in the graph
    /// (at most six).
    fn children(&self, node: &Self::Node, f: impl FnMut(u64));
    /// Calls `f(parent)` for each position with a move to `node` that stays
    /// in the graph.
    fn parents(&self, node: &Self::Node, f: impl FnMut(Self::Node));
}

/// What one position's byte holds while the solver runs: its best capture
/// (in `-48..=48`, or [`NO_EXIT`]) while undecided, its value once decided,
/// written as `v + 64` (`65..=112`) or `v - 64` (`-112..=-65`) so the two
/// never meet. A decided value never changes and an undecided byte only
/// ever changes to a decided one, so one compare-and-swap from the byte
/// last read decides a position exactly once.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Slot(i8);

impl Slot {
    const OFFSET: i8 = 64;

    fn decided(v: i8) -> Slot {
        Slot(if v > 0 {
            v + Slot::OFFSET
        } else {
            v - Slot::OFFSET
        })
    }

    /// The value, once decided.
    fn value(self) -> Option<i8> {
        match self.0 {
            b if b > Slot::OFFSET => Some(b - Slot::OFFSET),
            b if b < -Slot::OFFSET && b != NO_EXIT => Some(b + Slot::OFFSET),
            _ => None,
        }
    }

    /// The best capture, while undecided.
    fn exit(self) -> Option<i8> {
        self.value().is_none().then_some(self.0)
    }
}

/// Solves level `seeds` from the values of the lower levels `lower`
/// (levels `0..seeds`); an error is a level past the game's, `lower` not
/// holding levels `0..seeds` ([`check_lower`]), a lower level that could
/// not be read, or memory that could not be had.
pub fn solve_level_forward(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
) -> Result<HugeSlice<i8>> {
    check_lower(seeds, lower)?;
    solve(&OwareLevel::new(rules, seeds, lower), seeds as i8)
}

/// The exact values of `game` (endless play worth 0), all within
/// `-max..=max`; `max` is at most 63 (a level has at most 48 seeds). An
/// error is one of [`Game::exits`], or memory that could not be had.
pub fn solve<G: Game>(game: &G, max: i8) -> Result<HugeSlice<i8>> {
    solve_in_batches(game, max, BATCH, STEP, &mut NoSaves)
}

/// Where a solve stands between two parts of [`Game::exits`] or two
/// batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The best exits of parts `0..done` of `parts` are stored; no
    /// threshold begun.
    Exits {
        /// Parts done.
        done: u32,
        /// Parts the walk is cut into (a resumed walk keeps them).
        parts: u32,
    },
    /// Every exit stored, every threshold above `t` done, and the batches
    /// of threshold `t` that start before position `next`.
    Batch {
        /// The threshold under way.
        t: i8,
        /// Where its next batch starts.
        next: u64,
    },
}

impl Mark {
    /// Whether the batch of threshold `t` starting at `start` is done.
    fn covers(&self, t: i8, start: u64) -> bool {
        match *self {
            Mark::Exits { .. } => false,
            Mark::Batch { t: at, next } => t > at || (t == at && start < next),
        }
    }
}

/// Checkpoints of a solve. Between two parts of the exits and between two
/// batches no position is queued, so the solver's whole state is one byte
/// per position, handed over as is: a solve that loads those bytes and goes
/// on from their [`Mark`] gives the same values.
pub trait Saves {
    /// Loads the bytes of a checkpoint into `bytes`, returning where it
    /// stands, or `None` (bytes untouched) to start afresh.
    fn resume(&mut self, bytes: &mut [i8]) -> Result<Option<Mark>>;
    /// Called after every part of the exits and every batch with the bytes
    /// as they stand at `mark`; may save them.
    fn after_batch(&mut self, mark: Mark, bytes: &[i8]) -> Result<()>;
}

/// No checkpoints.
pub struct NoSaves;

impl Saves for NoSaves {
    fn resume(&mut self, _: &mut [i8]) -> Result<Option<Mark>> {
        Ok(None)
    }

    fn after_batch(&mut self, _: Mark, _: &[i8]) -> Result<()> {
        Ok(())
    }
}

/// [`solve_level_forward`], resuming from and handing checkpoints to
/// `saves`; an error may also be one of `saves`, or one of
/// [`check_lower`].
pub fn solve_level_saving(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    saves: &mut dyn Saves,
) -> Result<HugeSlice<i8>> {
    check_lower(seeds, lower)?;
    let game = OwareLevel::new(rules, seeds, lower);
    solve_in_batches(&game, seeds as i8, BATCH, STEP, saves)
}

/// [`solve`], scanning `batch` positions at a time (a multiple of
/// [`CHUNK`]), handling `step` work items at a time, and checkpointing
/// through `saves`.
fn solve_in_batches<G: Game>(
    game: &G,
    max: i8,
    batch: usize,
    step: usize,
    saves: &mut dyn Saves,
) -> Result<HugeSlice<i8>> {
    assert!(max < Slot::OFFSET, "values up to {max} do not fit a slot");
    assert!(batch > 0 && batch.is_multiple_of(CHUNK as usize) && step > 0);
    let n = usize::try_from(game.size()).expect("graph fits in memory");
    let memory = |e| Error::io("(memory for the forward solver)", e);
    let mut bytes = HugeSlice::<i8>::zeroed(n).map_err(memory)?;
    let resumed = saves.resume(&mut bytes)?;
    // SAFETY: AtomicI8 has the size, alignment and bit validity of i8, and
    // the slice is borrowed from `bytes` exclusively until the end of the
    // solve, after which the bytes are read again as plain values.
    let cells: &[AtomicI8] =
        unsafe { std::slice::from_raw_parts(bytes.as_mut_ptr().cast::<AtomicI8>(), n) };
    // SAFETY: as for `cells`; read between two parts or batches only, when
    // no thread writes them.
    let now = || unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<i8>(), n) };
    // The parts of the exits left to walk: every one afresh, those after
    // the mark, or none once a threshold has begun.
    let (done, parts) = match resumed {
        None => (0, game.exit_parts()),
        Some(Mark::Exits { done, parts }) => (done, parts),
        Some(Mark::Batch { .. }) => (0, 0),
    };
    for part in done..parts {
        game.exits(cells, part, parts)?;
        saves.after_batch(
            Mark::Exits {
                done: part + 1,
                parts,
            },
            now(),
        )?;
    }
    let queued = Bits::new(n).map_err(memory)?;
    let cell = |i: usize| Slot(cells[i].load(Relaxed));
    // Decides undecided position `i` (last read as `was`) at `v`; false if
    // another thread decided it first.
    let settle = |i: usize, was: Slot, v: i8| {
        cells[i]
            .compare_exchange(was.0, Slot::decided(v).0, Relaxed, Relaxed)
            .is_ok()
    };

    // Decides position `i` for threshold `t` if its moves allow it, given
    // the indices of its quiet children; returns the value it took.
    let decide = |i: usize, children: &[u64], t: i8| -> Option<i8> {
        let was = cell(i);
        let exit = was.exit()?;
        // `NO_EXIT` passes the first test and fails the second.
        let mut all_bad = exit <= -t;
        let mut some_good = exit >= t;
        for &c in children {
            // Decided values all satisfy |v| >= t at this point.
            let cv = cell(c as usize).value();
            some_good |= cv.is_some_and(|v| v < 0);
            all_bad &= cv.is_some_and(|v| v > 0);
        }
        let v = match (some_good, all_bad) {
            (true, _) => t,
            (false, true) => -t,
            (false, false) => return None,
        };
        settle(i, was, v).then_some(v)
    };
    // Work items: a position to evaluate (`false`), or one just won
    // (`true`) whose parents are to be evaluated. A position with a capture
    // worth `t`, or a quiet move to one just lost, is won without
    // evaluating the rest of its moves.
    let won = |i: usize, t: i8| {
        let was = cell(i);
        was.exit().is_some() && settle(i, was, t)
    };

    let batches = (1..=max)
        .rev()
        .flat_map(|t| (0..n).step_by(batch).map(move |b| (t, b)))
        .filter(|&(t, b)| !resumed.is_some_and(|m| m.covers(t, b as u64)));
    for (t, start) in batches {
        let mut work: Vec<(G::Node, bool)> = cells[start..(start + batch).min(n)]
            .par_chunks(CHUNK as usize)
            .enumerate()
            .flat_map_iter(|(c, chunk)| {
                // The positions with a capture worth `t` or `-t`, from their
                // bytes; only those are turned into nodes.
                let first = (start + c * CHUNK as usize) as u64;
                let mut at_t = Vec::new();
                holding(chunk, t, first, &mut at_t);
                let mut found = Vec::new();
                game.nodes(&at_t, |i, node| {
                    let i = i as usize;
                    match cell(i).exit() {
                        Some(e) if e == t && won(i, t) => found.push((node, true)),
                        Some(e) if e == -t => found.push((node, false)),
                        _ => {}
                    }
                });
                found
            })
            .collect();
        while !work.is_empty() {
            // The last `STEP` items, depth first.
            let items = work.split_off(work.len().saturating_sub(step));
            let next: Vec<(G::Node, bool)> = items
                .par_chunks(4096)
                .flat_map_iter(|chunk| {
                    let mut next = Vec::new();
                    // Two stages, each prefetching what the next one reads.
                    // Second: a parent of a position just lost is won; one
                    // of a position just won is queued for evaluation
                    // unless decided or queued already, or it has a capture
                    // better than `-t`. (Evaluation only ever decides
                    // losses: every win is found by the rule above, or by
                    // a capture worth `t` before the round starts.)
                    let mut enqueue = |(p, j, lost): (G::Node, usize, bool)| {
                        if lost {
                            if won(j, t) {
                                next.push((p, true));
                            }
                        } else if cell(j).exit().is_some_and(|e| e <= -t) && !queued.set(j) {
                            next.push((p, false));
                        }
                    };
                    let mut to_enqueue = Pipeline::new((chunk[0].0, 0, false));
                    // First: a position is evaluated from its children.
                    let mut evaluate = |(node, i, children, n, decided): Evaluation<G::Node>| {
                        let lost = if decided {
                            false
                        } else {
                            queued.clear(i);
                            match decide(i, &children[..n], t) {
                                Some(v) => v < 0,
                                None => return,
                            }
                        };
                        game.parents(&node, |p| {
                            let j = game.index(&p) as usize;
                            prefetch(&cells[j]);
                            queued.prefetch(j);
                            to_enqueue.push((p, j, lost), &mut enqueue);
                        });
                    };
                    let mut to_evaluate = Pipeline::new((chunk[0].0, 0, [0; 6], 0, false));
                    for &(node, decided) in chunk {
                        let (mut i, mut children, mut n) = (0, [0u64; 6], 0);
                        if !decided {
                            i = game.index(&node) as usize;
                            prefetch(&cells[i]);
                            // Its queued bit is cleared first thing: a
                            // locked update that would wait for the line.
                            queued.prefetch(i);
                            game.children(&node, |c| {
                                prefetch(&cells[c as usize]);
                                children[n] = c;
                                n += 1;
                            });
                        }
                        to_evaluate.push((node, i, children, n, decided), &mut evaluate);
                    }
                    to_evaluate.finish(&mut evaluate);
                    to_enqueue.finish(&mut enqueue);
                    next
                })
                .collect();
            work.extend(next);
        }
        // The last batch ends at the level's end, not past it.
        let next = (start + batch).min(n) as u64;
        saves.after_batch(Mark::Batch { t, next }, now())?;
    }

    drop(queued);
    // Whatever is still undecided is worth 0.
    bytes
        .par_iter_mut()
        .for_each(|b| *b = Slot(*b).value().unwrap_or(0));
    Ok(bytes)
}

/// Appends to `out` the indices (`first` being the index of `chunk[0]`) of
/// the cells of `chunk` that hold `t` or `-t`: undecided positions whose
/// best capture is `t` or `-t` (`1 <= t < 64`, so neither byte is a
/// decided one, see [`Slot`]). Eight cells are read as one word, and a
/// word holding neither byte, nearly every one, is passed over whole.
///
/// No other thread may touch `chunk` meanwhile (the solver scans each
/// chunk in the one thread that then decides its cells).
fn holding(chunk: &[AtomicI8], t: i8, first: u64, out: &mut Vec<u64>) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Whether some byte of `w` is `b` (the test may also flag a byte above
    // a matching one, never a word without one).
    let has = |w: u64, b: i8| {
        let x = w ^ (ONES * u64::from(b as u8));
        x.wrapping_sub(ONES) & !x & HIGHS != 0
    };
    let at = |k: usize, out: &mut Vec<u64>| {
        let v = chunk[k].load(Relaxed);
        if v == t || v == -t {
            out.push(first + k as u64);
        }
    };
    // SAFETY: AtomicU64 may be read from any eight initialised, aligned
    // bytes (`align_to` gives only aligned ones), and nothing writes them
    // while this reads (above), so the atomics of two sizes never race.
    let (head, words, _) = unsafe { chunk.align_to::<AtomicU64>() };
    let tail = head.len() + 8 * words.len();
    for k in 0..head.len() {
        at(k, out);
    }
    for (w, word) in words.iter().enumerate() {
        let x = word.load(Relaxed);
        if has(x, t) || has(x, -t) {
            let k = head.len() + 8 * w;
            for k in k..k + 8 {
                at(k, out);
            }
        }
    }
    for k in tail..chunk.len() {
        at(k, out);
    }
}

/// One atomic bit per position.
struct Bits(HugeSlice<AtomicU64>);

impl Bits {
    fn new(n: usize) -> std::io::Result<Bits> {
        HugeSlice::zeroed(n.div_ceil(64)).map(Bits)
    }

    /// Sets bit `i`; true if it was set already.
    #[inline]
    fn set(&self, i: usize) -> bool {
        let bit = 1 << (i % 64);
        self.0[i / 64].fetch_or(bit, Relaxed) & bit != 0
    }

    #[inline]
    fn clear(&self, i: usize) {
        self.0[i / 64].fetch_and(!(1 << (i % 64)), Relaxed);
    }

    #[inline]
    fn prefetch(&self, i: usize) {
        prefetch(&self.0[i / 64]);
    }
}

/// Where the legal moves of a position lead: for each, the seeds it
/// captures and the child's index in level `seeds - captured`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Targets {
    len: u8,
    captured: [u8; 6],
    index: [u64; 6],
}

impl Targets {
    /// `(captured, index)` of each legal move; none when the player to move
    /// has no seeds.
    pub fn iter(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        let n = usize::from(self.len);
        self.captured[..n]
            .iter()
            .copied()
            .zip(self.index[..n].iter().copied())
    }
}

/// One level of Oware as a [`Game`]: quiet moves stay in it; captures (and
/// the end of the game) leave it, valued from the lower levels. Moves are
/// generated when needed, never stored.
pub struct OwareLevel<'a, L: LowerLevels + ?Sized> {
    rules: Rules,
    seeds: usize,
    enc: Encoder,
    lower: &'a L,
    /// `spread[pit][s]`: what sowing `s` seeds from `pit` adds to each pit,
    /// found by sowing on an otherwise empty board.
    spread: [[[u8; PITS]; MAX_SEEDS + 1]; 6],
    /// Positions per part of [`Game::exits`] ([`EXIT_PART`]; tests cut
    /// small levels finer).
    exit_part: u64,
}

impl<'a, L: LowerLevels + ?Sized> OwareLevel<'a, L> {
    /// Where the legal moves of `board` (in this level) lead.
    pub fn targets(&self, board: &Board) -> Targets {
        let mut t = Targets::default();
        for m in moves(self.rules, board).as_slice() {
            let k = usize::from(t.len);
            let level = self.seeds - usize::from(m.captured);
            t.captured[k] = m.captured;
            t.index[k] = self.enc.rank_in(level, &m.child);
            t.len += 1;
        }
        t
    }

    /// Level `seeds` of `rules`, given the values of every lower level
    /// (`lower` holds levels `0..seeds`).
    ///
    /// # Panics
    ///
    /// If `lower` does not hold levels `0..seeds` or `seeds` is past 48
    /// ([`check_lower`] says so as an error).
    pub fn new(rules: Rules, seeds: usize, lower: &'a L) -> OwareLevel<'a, L> {
        assert_eq!(lower.levels(), seeds, "every lower level is needed");
        let mut spread = [[[0; PITS]; MAX_SEEDS + 1]; 6];
        for (pit, by_count) in spread.iter_mut().enumerate() {
            for (s, add) in by_count.iter_mut().enumerate().skip(1) {
                add[pit] = s as u8;
                sow(add, pit);
            }
        }
        OwareLevel {
            rules,
            seeds,
            enc: Encoder::new(seeds),
            lower,
            spread,
            exit_part: EXIT_PART,
        }
    }
}

impl<L: LowerLevels + ?Sized> Game for OwareLevel<'_, L> {
    type Node = Board;

    fn size(&self) -> u64 {
        self.enc.level_size(self.seeds)
    }

    fn nodes(&self, indices: &[u64], mut f: impl FnMut(u64, Board)) {
        let mut cursor = self.enc.cursor(self.seeds);
        for &i in indices {
            f(i, cursor.seek(i));
        }
    }

    fn index(&self, node: &Board) -> u64 {
        self.enc.rank_in(self.seeds, node)
    }

    fn exit_parts(&self) -> u32 {
        u32::try_from(self.size().div_ceil(self.exit_part).max(1)).unwrap_or(u32::MAX)
    }

    /// Capture values are read from the lower levels in mover-major order
    /// (`Encoder::walk_tile`): the captures of a tile land in a few
    /// blocks of each lower level, which are read together. Each read is
    /// also prefetched and done `LAG` captures later,
    /// so that memory misses overlap. Each position lies in one tile, so
    /// each cell has one writer; a part is a run of tiles
    /// (`Encoder::tile_parts`).
    fn exits(&self, out: &[AtomicI8], part: u32, parts: u32) -> Result<()> {
        let range = 0..self.size();
        let tiles = self.enc.mover_tiles(self.seeds);
        let at = self.enc.tile_parts(self.seeds, &tiles, parts);
        let tiles = &tiles[at[part as usize]..at[part as usize + 1]];
        let set = |j: usize, v: i8| out[j].store(v, Relaxed);
        let get = |j: usize| out[j].load(Relaxed);
        self.enc
            .tile_groups(self.seeds, tiles)
            .par_iter()
            .try_for_each(|tiles| -> Result<()> {
                let mut failed = None;
                let mut reader = self.lower.reader();
                // (position, captured, lower level, index there)
                let mut resolve = |(j, captured, level, index): (usize, u8, usize, u64)| match self
                    .lower
                    .value(&mut reader, level, index)
                {
                    Ok(v) => set(j, get(j).max(captured as i8 - v)),
                    Err(e) => failed = failed.take().or(Some(e)),
                };
                let mut pipeline = Pipeline::new((0usize, 0u8, 0usize, 0u64));
                for tile in *tiles {
                    self.enc.walk_tile(self.seeds, tile, &range, |i, board| {
                        let j = i as usize;
                        let ms = moves(self.rules, board);
                        // No seeds: the opponent takes the rest.
                        if ms.is_empty() {
                            set(j, value_without_moves(self.seeds));
                            return;
                        }
                        set(j, NO_EXIT);
                        for m in ms.as_slice().iter().filter(|m| m.captured > 0) {
                            let level = self.seeds - usize::from(m.captured);
                            let index = self.enc.rank_in(level, &m.child);
                            self.lower.prefetch(level, index);
                            pipeline.push((j, m.captured, level, index), &mut resolve);
                        }
                    });
                }
                pipeline.finish(&mut resolve);
                failed.map_or(Ok(()), Err)
            })
    }

    fn children(&self, node: &Board, mut f: impl FnMut(u64)) {
        for m in moves(self.rules, node).as_slice() {
            if m.captured == 0 {
                f(self.enc.rank_in(self.seeds, &m.child));
            }
        }
    }

    /// Tries every pit the mover could have sown from (empty right after
    /// sowing) with every seed count, takes the sown seeds back, and keeps
    /// the candidates whose move from that pit really leads here without a
    /// capture. Such a move is legal when it leaves the player now to move
    /// some seeds (`play`); without any, no quiet move leads here.
    fn parents(&self, node: &Board, mut f: impl FnMut(Board)) {
        if node.0[..6].iter().all(|&v| v == 0) {
            return;
        }
        let after = node.swapped().0; // right after the move, mover's view
        for pit in (0..6).filter(|&p| after[p] == 0) {
            for s in 1..=self.seeds {
                let add = &self.spread[pit][s];
                // More seeds only add more: once one pit goes negative,
                // every larger count does too.
                if after.iter().zip(add).any(|(a, d)| a < d) {
                    break;
                }
                let mut before = [0u8; PITS];
                for k in 0..PITS {
                    before[k] = after[k] - add[k];
                }
                before[pit] = s as u8;
                let parent = Board(before);
                if !parent.in_domain() {
                    continue;
                }
                let (m, starves) = play(self.rules, &parent, pit);
                if !starves && m.captured == 0 && m.child == *node {
                    f(parent);
                }
            }
        }
    }
}

/// A position in the first stage of a round: the node, its index, its
/// quiet children (how many), and whether it is already decided.
type Evaluation<N> = (N, usize, [u64; 6], usize, bool);

/// A small explicit game graph: positions with up to six quiet moves to
/// positions of the graph and a best value among their other moves (which
/// leave the graph with known values). Tests build them by hand.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Children by quiet moves (`NO_MOVE` where unused).
    pub quiet: Vec<[u32; 6]>,
    /// Best value of the moves that leave the graph (`NO_EXIT` if none).
    pub exit: Vec<i8>,
}

impl Graph {
    /// The graph of Oware level `seeds` (as [`OwareLevel`], stored); an
    /// error is one of [`check_lower`] or a lower level that could not be
    /// read.
    pub fn oware_level(
        rules: Rules,
        seeds: usize,
        lower: &(impl LowerLevels + ?Sized),
    ) -> Result<Graph> {
        check_lower(seeds, lower)?;
        let level = OwareLevel::new(rules, seeds, lower);
        let n = level.size() as usize;
        assert!(
            n < NO_MOVE as usize,
            "level too large for an explicit graph"
        );
        let exit: Vec<AtomicI8> = (0..n).map(|_| AtomicI8::new(NO_EXIT)).collect();
        let parts = level.exit_parts();
        for part in 0..parts {
            level.exits(&exit, part, parts)?;
        }
        let mut g = Graph {
            quiet: vec![[NO_MOVE; 6]; n],
            exit: exit.into_iter().map(AtomicI8::into_inner).collect(),
        };
        level.enc.for_range(level.seeds, 0, n as u64, |i, b| {
            let i = i as usize;
            let mut slot = 0;
            level.children(b, |c| {
                g.quiet[i][slot] = c as u32;
                slot += 1;
            });
        });
        Ok(g)
    }
}

/// The exact values of `g` (endless play worth 0), all within `-max..=max`;
/// an error is memory that could not be had.
pub fn solve_graph(g: &Graph, max: i8) -> Result<Vec<i8>> {
    Ok(solve(&Explicit::new(g), max)?.to_vec())
}

/// A [`Graph`] with its parent lists (compressed rows: the parents of `i`
/// are `edges[start[i]..start[i + 1]]`).
struct Explicit<'a> {
    g: &'a Graph,
    start: Vec<u32>,
    edges: Vec<u32>,
}

impl<'a> Explicit<'a> {
    fn new(g: &'a Graph) -> Explicit<'a> {
        let children = |p: usize| g.quiet[p].iter().copied().filter(|&c| c != NO_MOVE);
        let mut start = vec![0u32; g.quiet.len() + 1];
        for p in 0..g.quiet.len() {
            for c in children(p) {
                start[c as usize + 1] += 1;
            }
        }
        for i in 0..g.quiet.len() {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut edges = vec![0u32; start[g.quiet.len()] as usize];
        for p in 0..g.quiet.len() {
            for c in children(p) {
                edges[fill[c as usize] as usize] = p as u32;
                fill[c as usize] += 1;
            }
        }
        Explicit { g, start, edges }
    }
}

impl Game for Explicit<'_> {
    type Node = u32;

    fn size(&self) -> u64 {
        self.g.exit.len() as u64
    }

    fn nodes(&self, indices: &[u64], mut f: impl FnMut(u64, u32)) {
        indices.iter().for_each(|&i| f(i, i as u32));
    }

    fn index(&self, node: &u32) -> u64 {
        u64::from(*node)
    }

    fn exit_parts(&self) -> u32 {
        1
    }

    fn exits(&self, out: &[AtomicI8], _: u32, _: u32) -> Result<()> {
        for (cell, &e) in out.iter().zip(&self.g.exit) {
            cell.store(e, Relaxed);
        }
        Ok(())
    }

    fn children(&self, node: &u32, mut f: impl FnMut(u64)) {
        for &c in self.g.quiet[*node as usize]
            .iter()
            .filter(|&&c| c != NO_MOVE)
        {
            f(u64::from(c));
        }
    }

    fn parents(&self, node: &u32, mut f: impl FnMut(u32)) {
        let i = *node as usize;
        for &p in &self.edges[self.start[i] as usize..self.start[i + 1] as usize] {
            f(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time scan finds exactly the cells holding `t` or
    /// `-t`, among bytes of every kind (best captures, decided values,
    /// `NO_EXIT`), in chunks of any length starting anywhere in a word.
    #[test]
    fn the_scan_finds_exactly_the_cells_of_a_threshold() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let bytes: Vec<AtomicI8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly far from the thresholds tried, as in a level.
                let b = match x % 16 {
                    0 => 3,
                    1 => -3,
                    2 => 48,
                    3 => -48,
                    4 => NO_EXIT,
                    5 => Slot::decided(3).0,
                    6 => Slot::decided(-3).0,
                    _ => (x >> 8) as i8,
                };
                AtomicI8::new(b)
            })
            .collect();
        for t in [1, 3, 48] {
            for (from, to) in [(0, 4096), (1, 4096), (3, 11), (5, 6), (8, 4093), (7, 7)] {
                let chunk = &bytes[from..to];
                let want: Vec<u64> = (from..to)
                    .filter(|&i| {
                        let e = Slot(bytes[i].load(Relaxed)).exit();
                        e == Some(t) || e == Some(-t)
                    })
                    .map(|i| 1000 + i as u64)
                    .collect();
                let mut got = Vec::new();
                holding(chunk, t, 1000 + from as u64, &mut got);
                assert_eq!(got, want, "t {t}, cells {from}..{to}");
            }
        }
    }

    /// Small batches and steps (many batches per threshold, the work
    /// handled depth first) give the values of one batch per level.
    #[test]
    fn the_order_of_evaluation_does_not_change_the_values() {
        for rules in [Rules::Awari, Rules::Abapa] {
            let mut levels: Vec<Vec<i8>> = Vec::new();
            for n in 0..=10 {
                let level = OwareLevel::new(rules, n, &levels);
                let whole = solve(&level, n as i8).unwrap().to_vec();
                let small =
                    solve_in_batches(&level, n as i8, CHUNK as usize, 50, &mut NoSaves).unwrap();
                assert!(whole[..] == small[..], "{rules} level {n}");
                levels.push(whole);
            }
        }
    }

    /// Keeps the bytes of every batch boundary.
    struct Keep(Vec<(Mark, Vec<i8>)>);

    impl Saves for Keep {
        fn resume(&mut self, _: &mut [i8]) -> Result<Option<Mark>> {
            Ok(None)
        }

        fn after_batch(&mut self, mark: Mark, bytes: &[i8]) -> Result<()> {
            self.0.push((mark, bytes.to_vec()));
            Ok(())
        }
    }

    /// Starts from given bytes.
    struct Resume(Mark, Vec<i8>);

    impl Saves for Resume {
        fn resume(&mut self, bytes: &mut [i8]) -> Result<Option<Mark>> {
            bytes.copy_from_slice(&self.1);
            Ok(Some(self.0))
        }

        fn after_batch(&mut self, _: Mark, _: &[i8]) -> Result<()> {
            Ok(())
        }
    }

    /// A solve resumed from the bytes of a part or batch boundary gives the
    /// values of a solve straight through, wherever the boundary falls
    /// (inside or after the walk of the exits; first, inside or last batch
    /// of a threshold).
    #[test]
    fn a_solve_resumed_from_any_boundary_gives_the_same_values() {
        let mut levels: Vec<Vec<i8>> = Vec::new();
        for n in 0..=10 {
            let mut level = OwareLevel::new(Rules::Awari, n, &levels);
            let whole = solve(&level, n as i8).unwrap().to_vec();
            level.exit_part = 3000;
            let parts = level.exit_parts();
            assert_eq!(u64::from(parts), level.size().div_ceil(3000).max(1));
            let mut keep = Keep(Vec::new());
            let kept = solve_in_batches(&level, n as i8, CHUNK as usize, 50, &mut keep).unwrap();
            assert!(kept[..] == whole[..], "level {n}");
            let batches = level.size().div_ceil(CHUNK) as usize;
            let marks: Vec<Mark> = keep.0.iter().map(|k| k.0).collect();
            assert_eq!(marks.len(), parts as usize + n * batches, "level {n}");
            assert!(
                (marks[..parts as usize].iter().enumerate()).all(|(k, m)| *m
                    == Mark::Exits {
                        done: k as u32 + 1,
                        parts
                    }),
                "a mark after every part of the exits, then after every batch"
            );
            let exits_and_some_batches = (keep.0.iter().enumerate())
                .filter(|(k, _)| *k < parts as usize || k % 5 == 0)
                .map(|(_, kept)| kept);
            for (mark, bytes) in exits_and_some_batches.cloned() {
                let mut from = Resume(mark, bytes);
                let again = solve_in_batches(&level, n as i8, CHUNK as usize, 50, &mut from);
                assert!(again.unwrap()[..] == whole[..], "level {n} from {mark:?}");
            }
            levels.push(whole);
        }
    }

    /// Starts from given bytes and keeps the marks handed over after.
    struct Replay(Mark, Vec<i8>, Vec<Mark>);

    impl Saves for Replay {
        fn resume(&mut self, bytes: &mut [i8]) -> Result<Option<Mark>> {
            bytes.copy_from_slice(&self.1);
            Ok(Some(self.0))
        }

        fn after_batch(&mut self, mark: Mark, _: &[i8]) -> Result<()> {
            self.2.push(mark);
            Ok(())
        }
    }

    /// A solve resumed from a boundary goes on from there: it hands over
    /// exactly the marks a solve straight through hands over after that
    /// one (no batch of a threshold done, nor of a higher one, is done
    /// again), and its values are those of the solve straight through. A
    /// batch done again changes no value, only the time a resumed check 3
    /// takes, so only the marks tell.
    #[test]
    fn a_resumed_solve_does_no_batch_it_has_done() {
        let mut levels: Vec<Vec<i8>> = Vec::new();
        for n in 0..9 {
            levels.push(
                solve(&OwareLevel::new(Rules::Awari, n, &levels), n as i8)
                    .unwrap()
                    .to_vec(),
            );
        }
        let mut level = OwareLevel::new(Rules::Awari, 9, &levels);
        level.exit_part = 40_000;
        let mut keep = Keep(Vec::new());
        let whole = solve_in_batches(&level, 9, CHUNK as usize, 50, &mut keep).unwrap();
        let parts = level.exit_parts() as usize;
        let batches = level.size().div_ceil(CHUNK) as usize;
        assert!(parts > 2 && batches > 2, "{parts} parts, {batches} batches");
        assert_eq!(keep.0.len(), parts + 9 * batches);
        // Inside the exits, after them, inside and at the end of a threshold
        // (the first, one further down, and the last).
        let at = [
            0,
            parts - 1,
            parts,
            parts + batches - 1,
            parts + 4 * batches + 2,
            parts + 8 * batches + 1,
            parts + 9 * batches - 2,
        ];
        for k in at {
            let (mark, bytes) = keep.0[k].clone();
            let mut replay = Replay(mark, bytes, Vec::new());
            let again = solve_in_batches(&level, 9, CHUNK as usize, 50, &mut replay).unwrap();
            let after: Vec<Mark> = keep.0[k + 1..].iter().map(|k| k.0).collect();
            assert_eq!(replay.2, after, "from {mark:?}");
            assert!(again[..] == whole[..], "from {mark:?}");
        }
    }
}
