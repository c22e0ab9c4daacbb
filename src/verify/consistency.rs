//! Check 2, consistency: every stored value is the best `captured - child
//! value` over its legal moves (or `-seeds` without a move), read from the
//! stored values themselves, in a walk that can stop after any part and
//! resume from its [`Tally`].

use rayon::prelude::*;

use super::saves::{Check2Saves, Keep};
use super::{Mismatch, Outcome, SHOWN};
use crate::error::{Error, Result};
use crate::memory::Pipeline;
use crate::oware::forward::{OwareLevel, Targets};
use crate::oware::{Board, Encoder, LowerLevels, Rules, Tile, level_size, value_without_moves};
use crate::progress::{Notice, Progress};
use crate::source::Source;

/// Check 2 on level `seeds` with values `values` and lower levels `lower`
/// (levels `0..seeds`); an error is a lower level that could not be read.
///
/// The walk is mover-major, so that captures read the lower levels a few
/// blocks at a time; each position's reads (its quiet children in
/// `values`, its captures in `lower`) are prefetched and done a few
/// positions later. The positions listed are the first in index order.
pub fn consistency(
    rules: Rules,
    seeds: usize,
    values: &[i8],
    lower: &(impl LowerLevels + ?Sized),
) -> Result<Outcome> {
    consistency_from(rules, seeds, values, lower, Tally::default(), &mut |_| {
        Ok(())
    })
}

/// Where check 2 stands: the first `tiles` tiles of its walk
/// ([`Encoder::mover_tiles`]) are done, which hold `positions` positions;
/// `count` of them differ, and `first` are the first of those in index
/// order (at most [`SHOWN`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    tiles: u64,
    positions: u64,
    count: u64,
    first: Vec<Mismatch>,
}

impl Tally {
    /// Bytes of [`Tally::to_bytes`]: tiles, positions, count, how many
    /// listed, and [`SHOWN`] slots of (index, stored, expected).
    pub(super) const BYTES: usize = 8 + 8 + 8 + 1 + SHOWN * 10;

    /// Adds the next `tiles` tiles, of which [`consistency_of_tile`] gave
    /// `parts`.
    fn add(&mut self, tiles: u64, parts: Vec<TileCheck>) {
        self.tiles += tiles;
        for (positions, count, first) in parts {
            self.positions += positions;
            self.count += count;
            self.first.extend(first);
        }
        self.first.sort_unstable_by_key(|m| m.index);
        self.first.truncate(SHOWN);
    }

    fn outcome(&self) -> Outcome {
        match self.count {
            0 => Outcome::Pass,
            n => Outcome::Differs(n, self.first.clone()),
        }
    }

    pub(super) fn to_bytes(&self) -> [u8; Tally::BYTES] {
        let mut b = [0u8; Tally::BYTES];
        b[0..8].copy_from_slice(&self.tiles.to_le_bytes());
        b[8..16].copy_from_slice(&self.positions.to_le_bytes());
        b[16..24].copy_from_slice(&self.count.to_le_bytes());
        b[24] = self.first.len() as u8;
        for (m, slot) in self.first.iter().zip(b[25..].chunks_exact_mut(10)) {
            slot[0..8].copy_from_slice(&m.index.to_le_bytes());
            slot[8] = m.stored as u8;
            slot[9] = m.expected as u8;
        }
        b
    }

    /// Tiles of the walk done.
    pub(super) fn tiles(&self) -> u64 {
        self.tiles
    }

    /// The tally of `b` (level `seeds`), if it is one.
    pub(super) fn from_bytes(b: &[u8; Tally::BYTES], seeds: usize) -> Option<Tally> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let listed = usize::from(b[24]);
        if listed > SHOWN {
            return None;
        }
        let enc = Encoder::new(seeds);
        let first = (b[25..].chunks_exact(10).take(listed))
            .map(|slot| {
                let index = u64::from_le_bytes(slot[0..8].try_into().expect("8 bytes"));
                (index < level_size(seeds)).then(|| Mismatch {
                    index,
                    board: enc.unrank(seeds, index),
                    stored: slot[8] as i8,
                    expected: slot[9] as i8,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Tally {
            tiles: u64_at(0),
            positions: u64_at(8),
            count: u64_at(16),
            first,
        })
    }
}

/// [`consistency`] from the tally `start` on: the walk goes on after its
/// first `start.tiles` tiles, in parts of about 1/128 of the level, and
/// hands the tally to `after_part` after each part (with the last tile's
/// too); an error of `after_part` ends the check with it.
fn consistency_from(
    rules: Rules,
    seeds: usize,
    values: &[i8],
    lower: &(impl LowerLevels + ?Sized),
    start: Tally,
    after_part: &mut dyn FnMut(&Tally) -> Result<()>,
) -> Result<Outcome> {
    let size = level_size(seeds);
    if values.len() as u64 != size || lower.levels() != seeds {
        return Err(Error::Invalid(format!(
            "level {seeds} has {size} positions and {seeds} lower levels, not {} and {}",
            values.len(),
            lower.levels()
        )));
    }
    let level = OwareLevel::new(rules, seeds, lower);
    let enc = Encoder::new(seeds);
    let tiles = enc.mover_tiles(seeds);
    let part_size = size.div_ceil(128);
    let mut tally = start;
    while (tally.tiles as usize) < tiles.len() {
        let from = tally.tiles as usize;
        let (mut to, mut positions) = (from, 0);
        while to < tiles.len() && positions < part_size {
            positions += enc.tile_size(seeds, &tiles[to]);
            to += 1;
        }
        let parts = tiles[from..to]
            .par_iter()
            .map(|tile| consistency_of_tile(seeds, values, lower, &level, &enc, tile))
            .collect::<Result<Vec<_>>>()?;
        tally.add((to - from) as u64, parts);
        after_part(&tally)?;
    }
    Ok(tally.outcome())
}

/// Check 2 of one tile: how many positions it holds, how many of them
/// differ, and the first of those (a few more than [`SHOWN`] at most, in
/// no order).
type TileCheck = (u64, u64, Vec<Mismatch>);

/// Check 2 on the positions of `tile`.
fn consistency_of_tile<L: LowerLevels + ?Sized>(
    seeds: usize,
    values: &[i8],
    lower: &L,
    level: &OwareLevel<'_, L>,
    enc: &Encoder,
    tile: &Tile,
) -> Result<TileCheck> {
    let (mut positions, mut count, mut first) = (0u64, 0u64, Vec::new());
    let mut failed = None;
    let mut reader = lower.reader();
    let mut check = |(i, board, targets): (u64, Board, Targets)| {
        let mut expected = None;
        for (captured, index) in targets.iter() {
            let child = match captured {
                0 => Ok(values[index as usize]),
                c => lower.value(&mut reader, seeds - usize::from(c), index),
            };
            match child {
                Ok(v) => expected = expected.max(Some(captured as i8 - v)),
                Err(e) => {
                    failed = failed.take().or(Some(e));
                    return;
                }
            }
        }
        // No move: the opponent takes the rest.
        let expected = expected.unwrap_or(value_without_moves(seeds));
        let stored = values[i as usize];
        if stored != expected {
            count += 1;
            keep_first(
                &mut first,
                Mismatch {
                    index: i,
                    board,
                    stored,
                    expected,
                },
            );
        }
    };
    let mut pipeline = Pipeline::new((0, Board::EMPTY, Targets::default()));
    enc.walk_tile(seeds, tile, &(0..level_size(seeds)), |i, board| {
        positions += 1;
        let targets = level.targets(board);
        for (captured, index) in targets.iter() {
            match captured {
                0 => crate::memory::prefetch(&values[index as usize]),
                c => lower.prefetch(seeds - usize::from(c), index),
            }
        }
        pipeline.push((i, *board, targets), &mut check);
    });
    pipeline.finish(&mut check);
    failed.map_or(Ok((positions, count, first)), Err)
}

/// Adds `m` to `first`, the differing positions of lowest index seen so
/// far, keeping at most a few more than [`SHOWN`] (in no order).
fn keep_first(first: &mut Vec<Mismatch>, m: Mismatch) {
    first.push(m);
    if first.len() >= 4 * SHOWN {
        first.sort_unstable_by_key(|m| m.index);
        first.truncate(SHOWN);
    }
}

/// Check 2 of level `seeds` of `source`, with its lower levels `lower`:
/// of a table directory resumed from its checkpoint, or taken whole from
/// it when an earlier `verify` finished it on the same contents, and
/// checkpointed (see [`super::saves`]).
pub(super) fn check2(
    source: &Source,
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    keep: Option<Keep>,
    progress: Progress<'_>,
) -> Result<Outcome> {
    let mut saves = match keep {
        Some(keep) => Some(Check2Saves::new(keep, seeds)?),
        None => None,
    };
    let tiles = Encoder::new(seeds).mover_tiles(seeds).len() as u64;
    let start = match &saves {
        Some(saves) => saves.resume(tiles, progress)?.unwrap_or_default(),
        None => Tally::default(),
    };
    if start.tiles == tiles {
        progress.notice(Notice::Check2Known {
            seeds,
            differing: start.count,
        });
        return Ok(start.outcome());
    }
    let stage = progress.stage(format!("level {seeds}: consistency"), level_size(seeds));
    if start.tiles > 0 {
        progress.notice(Notice::Check2Resumed {
            seeds,
            tile: start.tiles,
            tiles,
        });
        stage.resumed(start.positions);
    }
    // Level `seeds`'s own values are held for check 2 only.
    let values = source.load(seeds)?;
    let mut reached = start.positions;
    let outcome = consistency_from(rules, seeds, &values, lower, start, &mut |tally| {
        stage.inc(tally.positions - reached);
        reached = tally.positions;
        match &mut saves {
            Some(saves) => saves.after_part(tally, tally.tiles == tiles),
            None => Ok(()),
        }
    })?;
    stage.finish();
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::forward::solve_level_forward;

    /// Check 2 stopped after any part and resumed from its tally's bytes
    /// (a checkpoint written and read back) finds what it finds straight
    /// through: as many differing positions, and the same first ones.
    #[test]
    fn check_2_resumed_after_any_part_finds_the_same_differences() {
        let rules = Rules::Awari;
        let mut levels: Vec<Vec<i8>> = Vec::new();
        for n in 0..=12 {
            let values = solve_level_forward(rules, n, &levels).unwrap().to_vec();
            levels.push(values);
        }
        let mut level = levels.pop().expect("level 12");
        let lower = &levels;
        assert_eq!(
            consistency(rules, 12, &level, lower).unwrap(),
            Outcome::Pass
        );
        // Wrong values spread over the level: more than are listed.
        let planted: Vec<usize> = (0..2 * SHOWN).map(|k| 97 + k * level.len() / 23).collect();
        for &i in &planted {
            level[i] = if level[i] == 12 { 11 } else { 12 };
        }
        let straight = consistency(rules, 12, &level, lower).unwrap();
        let Outcome::Differs(count, first) = &straight else {
            panic!("planted values not found: {straight:?}");
        };
        assert!(*count >= planted.len() as u64, "{count}");
        assert_eq!(first.len(), SHOWN);
        // (Their parents read them, so some of those differ too.)
        assert!(first.windows(2).all(|w| w[0].index < w[1].index));
        // Every part's tally, as a checkpoint would hold it.
        let mut tallies = Vec::new();
        consistency_from(rules, 12, &level, lower, Tally::default(), &mut |t| {
            tallies.push(t.to_bytes());
            Ok(())
        })
        .unwrap();
        assert!(tallies.len() > 8, "{} parts", tallies.len());
        let last = Tally::from_bytes(tallies.last().unwrap(), 12).unwrap();
        assert_eq!(last.positions, level_size(12));
        assert_eq!(last.outcome(), straight);
        for bytes in &tallies {
            let start = Tally::from_bytes(bytes, 12).unwrap();
            let resumed =
                consistency_from(rules, 12, &level, lower, start, &mut |_| Ok(())).unwrap();
            assert_eq!(resumed, straight);
        }
    }

    /// The bytes of a tally that lists a position past the level's end, or
    /// more positions than are listed, are no tally (a checkpoint damaged
    /// within its checksum, or of another binary): never a panic, nor a
    /// listed board that is not one of the level.
    #[test]
    fn a_tally_listing_what_no_tally_lists_is_none() {
        let size = level_size(6);
        let bytes = |index: u64, listed: u8| {
            let start = Tally {
                tiles: 3,
                positions: 4,
                count: 5,
                first: Vec::new(),
            };
            let mut b = start.to_bytes();
            b[24] = listed;
            b[25..33].copy_from_slice(&index.to_le_bytes());
            b
        };
        let last = Tally::from_bytes(&bytes(size - 1, 1), 6).unwrap();
        assert_eq!((last.tiles, last.positions, last.count), (3, 4, 5));
        assert_eq!(last.first.len(), 1);
        assert_eq!(last.first[0].index, size - 1);
        assert_eq!(
            last.first[0].board,
            Encoder::new(6).board_at(6, size - 1).unwrap()
        );
        assert_eq!(Tally::from_bytes(&bytes(size, 1), 6), None);
        assert_eq!(Tally::from_bytes(&bytes(u64::MAX, 1), 6), None);
        let full = Tally::from_bytes(&bytes(0, SHOWN as u8), 6).unwrap();
        assert_eq!(full.first.len(), SHOWN);
        assert_eq!(Tally::from_bytes(&bytes(0, SHOWN as u8 + 1), 6), None);
    }
}
