//! The thresholds of the level solver: backward propagation from the seeds
//! of each threshold, in rounds over bounded frontiers.
//!
//! **Seeds.** Threshold `t` reads its seed lists (written by the first pass,
//! [`super::first_pass`]) once, a batch whenever the frontier has room
//! (below): the positions with best capture `t` are claimed for `W_t`; those
//! with best capture `-t` are unblocked (and claimed for `L_t` when no quiet
//! move is left). Claiming a seed late changes nothing: a position with best
//! capture `t` is blocked for good, so it can only enter `W_t`, with the
//! value the seed gives it, and unblocking a position whose counter already
//! reached zero decides it then.
//!
//! **Bounded frontiers.** Propagation runs in rounds over frontiers (lists
//! of boards newly decided, wins and losses). A round's decisions fill a
//! frontier to at most `cap` boards
//! ([`Options::frontier_cap`](super::Options::frontier_cap)); topping it up
//! with seeds and swept positions stops once it holds `cap / 4`, passing
//! that by at most one seed record (a chunk's 32,768 positions) or one
//! bitmap word (4,096 positions), so under the default cap, 2^16 boards at
//! least, no frontier passes its cap (a smaller cap, as tests force, can be
//! passed by that much). A decision that finds it full keeps its fresh bit instead and flags its
//! block of 64 positions in a bitmap (one bit per 64 bytes of state), and
//! sweeps later collect the fresh positions of flagged blocks into the
//! frontier as room frees up, going round the bitmap: a sweep reads only the
//! blocks that hold fresh positions, however few, not the whole level. Seeds
//! go straight into the frontier as they are claimed, read only when it has
//! room, and before any sweep (most decisions at a threshold's start are
//! seeds, and sweeps then find only the overflow of rounds). Working memory
//! is therefore one byte per position, the bitmap, and two frontiers of at
//! most `cap` boards; with several ranks ([`super`]), also a round's
//! messages, which are not capped. Those to other ranks are up to the
//! predecessors of a full frontier (several per board, 8 bytes each), held
//! twice while they are gathered for the exchange and dropped once it has
//! sent them; those from other ranks are what up to all of them sent this
//! one, held until they are applied, before the next round begins: a round
//! whose decisions fall mostly in one slice sends that rank up to
//! `ranks - 1` times a rank's share. Measured at level 20 with 2 ranks:
//! 1.4..1.6 bytes per position of a rank's slice in all, which the build's
//! memory check counts for each rank (`build::RANK_BYTES_PER_POSITION`).

use std::path::Path;
use std::sync::atomic::{AtomicIsize, AtomicU8, AtomicU64, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use super::CHUNK;
use super::code::{self, BLOCKED, DECIDED, FRESH, decided};
use crate::error::Result;
use crate::exchange::{Outbox, Owners};
use crate::memory::{Pipeline, prefetch};
use crate::oware::board::Board;
use crate::oware::index::Encoder;
use crate::oware::retro::for_each_predecessor;
use crate::oware::rules::Rules;
use crate::oware::workdir::seeds::{Record, SeedReader};

/// Positions newly decided whose predecessors are still to be told.
#[derive(Default)]
pub(super) struct Frontier {
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
pub(super) fn total(parts: &[Frontier]) -> usize {
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
pub(super) struct Sweep {
    word: usize,
    blocks: Vec<usize>,
}

/// The seed lists of one threshold still to be read, in the order they
/// are read (the last first), and a buffer for their records.
pub(super) struct Seeds {
    lists: Vec<(bool, SeedReader)>,
    records: Vec<Record>,
}

impl Seeds {
    /// The lists of threshold `t` in `dir`, of a slice of `positions`
    /// positions: best capture `-t`, then `t`; `lengths` are every list's
    /// recorded length.
    pub(super) fn open(dir: &Path, t: usize, lengths: &[u64], positions: usize) -> Result<Seeds> {
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
pub(super) struct Pending {
    words: Vec<AtomicU64>,
    flagged: AtomicUsize,
}

impl Pending {
    /// No block flagged, for a slice of `n` positions.
    pub(super) fn new(n: usize) -> Pending {
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
pub(super) struct Propagation<'a> {
    pub(super) rules: Rules,
    pub(super) seeds: usize,
    pub(super) enc: &'a Encoder,
    pub(super) owners: &'a Owners,
    /// First index of this rank's slice; state bytes are numbered from it.
    pub(super) start: u64,
    pub(super) state: &'a [AtomicU8],
    /// Where positions were left fresh outside every frontier.
    pub(super) pending: &'a Pending,
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
    pub(super) fn top_up(
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
    pub(super) fn round(
        &self,
        t: i8,
        frontier: &[Frontier],
        cap: usize,
    ) -> (Vec<Frontier>, Outbox) {
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
    pub(super) fn receive(&self, t: i8, inbox: &[u64], frontier: &mut Vec<Frontier>, cap: usize) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{HugeSlice, as_atomic};

    /// A room hands out its places in whole blocks and never more than it
    /// has, however many workers take from it: a room of fewer places than
    /// a block hands out none (a round's decisions are then all left to
    /// sweeps), and a frontier never outgrows its cap.
    #[test]
    fn a_room_hands_out_whole_blocks_up_to_its_places() {
        let taken = |places: usize, workers: usize| {
            let room = Room::new(places);
            let mut quotas: Vec<Quota> = (0..workers).map(|_| room.quota()).collect();
            let mut n = 0;
            // Bounded, so that a room that never fills fails, not hangs.
            for _ in 0..places + 4 * Room::BLOCK {
                let took: usize = quotas.iter_mut().map(|q| usize::from(q.take())).sum();
                if took == 0 {
                    break;
                }
                n += took;
            }
            n
        };
        assert_eq!(taken(0, 1), 0);
        assert_eq!(taken(Room::BLOCK - 1, 1), 0);
        assert_eq!(taken(Room::BLOCK, 1), Room::BLOCK);
        assert_eq!(taken(3 * Room::BLOCK - 1, 2), 2 * Room::BLOCK);
        assert_eq!(taken(4 * Room::BLOCK, 3), 4 * Room::BLOCK);
    }

    /// Sweeps bound the frontier: a sweep takes flagged blocks in bitmap
    /// order, whole words of the bitmap at a time, only until they hold the
    /// fresh positions it wants (counted in whole and partial blocks
    /// alike), and goes on round the bitmap from there next time; the
    /// fresh positions of the blocks taken come out as the boards of their
    /// indices, wins and losses apart, no longer fresh, and every other
    /// state byte is left as it was.
    #[test]
    fn sweeps_take_flagged_blocks_in_order_until_they_hold_what_they_want() {
        let seeds = 8;
        let enc = Encoder::new(seeds);
        let n = enc.level_size(seeds) as usize;
        let last = n / BLOCK; // a partial block: the level is no multiple of 64
        assert!(!n.is_multiple_of(BLOCK) && last >= 128);
        let owners = Owners::new(n as u64, 1);
        let pending = Pending::new(n);
        // Page-aligned, as the solver's state: sweeps read whole blocks as
        // words.
        let mut bytes = HugeSlice::<u8>::zeroed(n).unwrap();
        // Block 3 (bitmap word 0): five fresh wins, one told win and one
        // undecided position; blocks 70 and 71 (word 1): two fresh losses
        // and one fresh win; block 130 (word 2): one fresh win; the last,
        // partial block (a later word): one fresh loss, at its last
        // position.
        let fresh_win = code::decided(5) | FRESH;
        let fresh_loss = code::decided(-5) | FRESH;
        let fresh = [
            (3 * BLOCK, fresh_win),
            (3 * BLOCK + 1, fresh_win),
            (3 * BLOCK + 17, fresh_win),
            (3 * BLOCK + 40, fresh_win),
            (3 * BLOCK + 63, fresh_win),
            (70 * BLOCK + 8, fresh_loss),
            (70 * BLOCK + 9, fresh_loss),
            (71 * BLOCK, fresh_win),
            (130 * BLOCK + 5, fresh_win),
            (n - 1, fresh_loss),
        ];
        for &(j, c) in &fresh {
            bytes[j] = c;
        }
        bytes[3 * BLOCK + 2] = code::decided(5);
        bytes[3 * BLOCK + 3] = 4 | BLOCKED;
        // A position of block 4 (word 0) is left fresh after the first
        // sweep has taken word 0.
        let late = 4 * BLOCK + 9;
        let mut before: Vec<u8> = bytes.iter().map(|c| c & !FRESH).collect();
        before[late] = code::decided(5);
        // As the solver flags them, once per position left fresh: a block
        // flagged again counts once.
        for &(j, _) in &fresh {
            pending.add(j);
        }
        assert_eq!(pending.flagged.load(Relaxed), 5);
        let solver = Propagation {
            rules: Rules::Awari,
            seeds,
            enc: &enc,
            owners: &owners,
            start: 0,
            state: as_atomic(&mut bytes),
            pending: &pending,
        };
        let mut sweep = Sweep::default();
        let mut swept = Vec::new();
        let mut take = |want: usize, blocks: &[usize], flagged: usize| {
            solver.flagged_blocks(&mut sweep, want);
            assert_eq!(sweep.blocks, blocks, "wanting {want}");
            assert_eq!(pending.flagged.load(Relaxed), flagged, "wanting {want}");
            swept.push(solver.fresh_in(&sweep.blocks));
        };
        // Five wanted: block 3 holds them, so the sweep stops after word 0.
        take(5, &[3], 4);
        solver.state[late].store(fresh_win, Relaxed);
        pending.add(late);
        // Four: the sweep goes on from word 1, whose blocks hold three, so
        // word 2 comes too. Two: the partial block holds one, so the sweep
        // goes round the bitmap to block 4. Then none is flagged.
        take(4, &[70, 71, 130], 2);
        take(2, &[last, 4], 0);
        take(1, &[], 0);
        let boards = |indices: &[usize]| -> Vec<Board> {
            indices
                .iter()
                .map(|&j| enc.unrank(seeds, j as u64))
                .collect()
        };
        let wins: Vec<Vec<Board>> = swept.iter().map(|f| f.wins.clone()).collect();
        let losses: Vec<Vec<Board>> = swept.iter().map(|f| f.losses.clone()).collect();
        let b = 3 * BLOCK;
        assert_eq!(
            wins,
            [
                boards(&[b, b + 1, b + 17, b + 40, b + 63]),
                boards(&[71 * BLOCK, 130 * BLOCK + 5]),
                boards(&[late]),
                vec![],
            ]
        );
        assert_eq!(
            losses,
            [
                vec![],
                boards(&[70 * BLOCK + 8, 70 * BLOCK + 9]),
                boards(&[n - 1]),
                vec![],
            ]
        );
        let after: Vec<u8> = solver.state.iter().map(|c| c.load(Relaxed)).collect();
        assert!(after == before, "fresh bits cleared, nothing else changed");
    }
}
