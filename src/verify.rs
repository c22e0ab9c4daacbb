//! Checking stored levels, three ways:
//!
//! 1. **integrity**: the file is what it claims (header, checksums, size);
//! 2. **consistency**: every stored value is the best `captured - child
//!    value` over its legal moves (or `-seeds` without a move), read from
//!    the stored values themselves;
//! 3. **re-derivation**: the level is solved again from the stored lower
//!    levels by the forward solver ([`crate::oware::forward`]), which shares
//!    no solving code with the builder, and every value is compared.
//!
//! Consistency alone cannot catch wrong values inside cycles: values that
//! claim a win along an endless line can satisfy every local equation
//! (`tests/it/verify.rs` shows such a graph). Re-derivation computes least fixed
//! points, which those values are not.
//!
//! ## Memory, and the order of reads
//!
//! The levels below the one checked are never loaded whole (levels 0..34
//! are 33 GB as one byte per position): they are read through
//! [`LowerLevels`] ([`Source::lower_levels`]: mapped VU files and raw
//! copies, else compressed tables block by block), and both checks that
//! read them walk the level in mover-major order
//! ([`Encoder::mover_tiles`]), in which the captures of a tile land in a
//! few blocks of each lower level. So the memory of checking level `N` is
//!
//! * check 2: level `N`'s own values (1 byte per position, mapped when its
//!   raw copy matches), which quiet moves read at random, then dropped;
//! * check 3: the forward solver's 1.125 bytes per position. The stored
//!   values are not held beside them: the table is streamed block by block
//!   and compared with the re-derived values ([`compare`]).
//!
//! plus the block cache and the work lists of a round.
//!
//! A lower level that cannot be read is an error of the run, never a
//! verdict: the checks report what the stored level holds, given lower
//! levels that are sound (they have their own checks).
//!
//! ## Checkpoints
//!
//! Checks 2 and 3 of the top levels take hours (level 36: 14 G positions),
//! longer than a `verify` may be left running. Of a table directory they
//! are checkpointed like a build, every [`checkpoint_interval`] (10 minutes
//! unless `MANCALADB_CHECKPOINT_SECS` says otherwise), to
//! `raw/<rules>/verify.<N>.work/`, each file behind a header naming the
//! check, the rule set, the level and the content hashes of the levels the
//! check reads:
//!
//! * `check2`: how many tiles of the walk are done, how many positions
//!   differed in them and the first of those; written after
//!   the last tile too, so that a `verify` stopped in check 3 does not run
//!   check 2 again;
//! * `check3`: the forward solver's bytes, taken between two parts of its
//!   walk of the lower levels or two of its batches ([`Saves`]); the header
//!   ends with where it stands: a threshold byte and its next batch's
//!   position, or a zero byte and the parts of that walk done and in all
//!   (two 32-bit numbers), then a seal ([`sealed`]: the content checksum
//!   does not cover the header, and a mark damaged into another plausible
//!   one would resume a solve that then fails a good level).
//!
//! A later `verify` of that level whose levels have the same hashes resumes
//! from them; a damaged one is ignored, and the check starts afresh. A
//! `verify` asked for checks 1 and 2 only ([`Checks::Consistency`]: where
//! check 3's memory or hours are not to be had) leaves `check2` behind, so
//! a full one later goes straight to check 3. Check
//! 1 runs in full every time: it is what ties the hashes in the headers to
//! the bytes on disk. The directory goes once check 3 is done.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::db::Db;
use crate::error::{Error, Result};
use crate::files::{
    CheckpointClock, DirLock, SEAL, checkpoint_interval, read_compressed, read_head, sealed,
    write_compressed,
};
use crate::memory::{Pipeline, settle};
use crate::oware::forward::{Mark, NoSaves, OwareLevel, Saves, Targets, solve_level_saving};
use crate::oware::{
    Board, Encoder, LowerLevels, Rules, Tile, game_levels, level_size, levels_needed,
};
use crate::progress::{Check3At, Notice, Progress, Stage};
use crate::source::Source;
use crate::table::{as_bytes, as_bytes_mut};

/// How many differing positions a report lists per check.
pub const SHOWN: usize = 10;

/// A position whose stored value is not the one the check expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// Index in the level.
    pub index: u64,
    /// The position.
    pub board: Board,
    /// The stored value.
    pub stored: i8,
    /// The value the check computed.
    pub expected: i8,
}

/// The outcome of one check on one level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Passed.
    Pass,
    /// The file is unsound: why.
    Broken(String),
    /// Values differ: how many, and the first ones.
    Differs(u64, Vec<Mismatch>),
    /// Not run (not asked for, or an earlier check failed).
    Skipped,
    /// Not run: the level reads this lower level, which failed a check in
    /// the same run (its values would be judged by wrong ones). The level
    /// is not vouched for, so this counts as a failure.
    Blocked(usize),
}

impl Outcome {
    /// Whether the check failed, or could not be run on sound inputs.
    pub fn failed(&self) -> bool {
        matches!(
            self,
            Outcome::Broken(_) | Outcome::Differs(..) | Outcome::Blocked(_)
        )
    }
}

/// `"pass"`, `null` (not run), `{"error": why}`, `{"differ": n, "first":
/// [mismatch, ...]}` or `{"blocked_by": level}`.
impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Outcome::Pass => s.serialize_str("pass"),
            Outcome::Skipped => s.serialize_none(),
            Outcome::Broken(why) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("error", why)?;
                m.end()
            }
            Outcome::Differs(n, first) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("differ", n)?;
                m.serialize_entry("first", first)?;
                m.end()
            }
            Outcome::Blocked(level) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("blocked_by", level)?;
                m.end()
            }
        }
    }
}

/// The checks of one level.
#[derive(Clone, Debug)]
pub struct LevelCheck {
    /// The level.
    pub seeds: usize,
    /// Check 1.
    pub integrity: Outcome,
    /// Check 2.
    pub consistency: Outcome,
    /// Check 3.
    pub rederivation: Outcome,
    /// Wall time of all checks.
    pub seconds: f64,
}

impl LevelCheck {
    /// Whether every check that ran passed and none was blocked (a level
    /// that could not be checked against sound lower levels has not
    /// passed).
    pub fn passed(&self) -> bool {
        !(self.integrity.failed() || self.consistency.failed() || self.rederivation.failed())
    }

    /// Whether a check found the level itself wrong: its file unsound or
    /// its values not the right ones (a blocked check says nothing of it).
    pub fn found_wrong(&self) -> bool {
        [&self.integrity, &self.consistency, &self.rederivation]
            .iter()
            .any(|o| matches!(o, Outcome::Broken(_) | Outcome::Differs(..)))
    }
}

/// `{seeds, passed, integrity, consistency, rederivation, seconds}`.
impl Serialize for LevelCheck {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("LevelCheck", 6)?;
        st.serialize_field("seeds", &self.seeds)?;
        st.serialize_field("passed", &self.passed())?;
        st.serialize_field("integrity", &self.integrity)?;
        st.serialize_field("consistency", &self.consistency)?;
        st.serialize_field("rederivation", &self.rederivation)?;
        // Milliseconds are all a report needs.
        st.serialize_field("seconds", &((self.seconds * 1e3).round() / 1e3))?;
        st.end()
    }
}

/// How far [`verify`] goes: the checks up to and including this one.
///
/// Check 2 of level `N` holds one byte per position and check 3 a little
/// more, for hours at the top levels; a machine that can afford check 2
/// only still gets a verdict on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Checks {
    /// Check 1 only.
    Integrity,
    /// Checks 1 and 2.
    Consistency,
    /// All three checks.
    All,
}

impl TryFrom<u8> for Checks {
    type Error = Error;

    /// Checks `1..=n`: `n` is 1, 2 or 3.
    fn try_from(n: u8) -> Result<Checks> {
        match n {
            1 => Ok(Checks::Integrity),
            2 => Ok(Checks::Consistency),
            3 => Ok(Checks::All),
            n => Err(Error::Invalid(format!(
                "checks is 1 (integrity), 2 (and consistency) or 3 (and re-derivation), got {n}"
            ))),
        }
    }
}

/// Checks levels `levels` of `source` under `rules` (in ascending order,
/// each once), as far as `checks` says. Levels below each one checked are
/// read as needed (and must be sound: an unreadable one is an error, not a
/// failed check). A level that
/// fails a check is one that higher levels cannot be checked against: their
/// checks 2 and 3 are [`Outcome::Blocked`] by it, while the levels that do
/// not read it are checked as usual. Every level the run reads must be
/// present before the first is checked, so that a missing one is
/// [`Error::Missing`] at once rather than after hours of checks.
/// `on_level` hears each level's result as soon as it is known. Then a
/// level of a table directory that passed all three checks is recorded in
/// its `verified.tsv` under the content checksum of the table checked, and
/// one that a check found wrong loses any record of an earlier pass (see
/// [`Db::set_verified`]); a record that cannot be written (a read-only
/// directory) is a warning, [`Notice::VerifiedNotRecorded`], not a change
/// of the verdict.
pub fn verify(
    source: &Source,
    rules: Rules,
    levels: impl IntoIterator<Item = usize>,
    checks: Checks,
    progress: Progress<'_>,
    mut on_level: impl FnMut(&LevelCheck),
) -> Result<Vec<LevelCheck>> {
    verify_until(source, rules, levels, checks, progress, |c| {
        on_level(c);
        ControlFlow::Continue(())
    })
}

/// [`verify`], where `on_level` may stop the run after a level by returning
/// [`ControlFlow::Break`] (an interrupt, a caller's error): the results of
/// the levels checked are returned, and recorded as `verify` records them.
pub fn verify_until(
    source: &Source,
    rules: Rules,
    levels: impl IntoIterator<Item = usize>,
    checks: Checks,
    progress: Progress<'_>,
    mut on_level: impl FnMut(&LevelCheck) -> ControlFlow<()>,
) -> Result<Vec<LevelCheck>> {
    // In order, once each: a level's check reads the levels below it, and
    // `Outcome::Blocked` needs them checked first.
    let mut levels = game_levels(levels)?;
    levels.sort_unstable();
    levels.dedup();
    // Only the levels the run reads are looked at: a level it does not
    // read (damaged, a link to nothing) is not its matter.
    let reads: std::collections::BTreeSet<usize> = levels
        .iter()
        .flat_map(|&seeds| match checks {
            Checks::Integrity => vec![seeds],
            _ => levels_needed(seeds),
        })
        .collect();
    // The error that says what is missing and how to build it: every such
    // level, whose remedy builds them with the levels they read.
    source.require_levels(&reads.into_iter().collect::<Vec<_>>())?;
    let every = checkpoint_interval()?;
    let mut out = Vec::new();
    let mut broken = Vec::new();
    for &seeds in &levels {
        let start = Instant::now();
        let mut check = LevelCheck {
            seeds,
            integrity: Outcome::Pass,
            consistency: Outcome::Skipped,
            rederivation: Outcome::Skipped,
            seconds: 0.0,
        };
        let blocked_by = levels_needed(seeds)
            .into_iter()
            .find(|k| *k != seeds && broken.contains(k));
        match source.integrity(seeds) {
            // A damaged file fails the check; a missing or unreadable one is
            // not a verdict on the table but an error of the run.
            Err(e @ Error::Corrupt { .. }) => check.integrity = Outcome::Broken(e.to_string()),
            Err(e) => return Err(e),
            Ok(()) if checks == Checks::Integrity => {}
            Ok(()) if let Some(k) = blocked_by => {
                check.consistency = Outcome::Blocked(k);
                if checks == Checks::All {
                    check.rederivation = Outcome::Blocked(k);
                }
            }
            Ok(()) => {
                // A directory this run cannot write to takes no lock and
                // no checkpoint either.
                let (_one_at_a_time, every) = match source.db() {
                    Some((db, rules)) => match lock_level(db, rules, seeds, progress)? {
                        Ok(lock) => (Some(lock), every),
                        Err(why) => {
                            progress.notice(Notice::VerifyWithoutCheckpoints { seeds, why });
                            (None, None)
                        }
                    },
                    None => (None, every),
                };
                let lower = source.lower_levels(seeds)?;
                check.consistency = check2(source, rules, seeds, &lower, every, progress)?;
                if checks == Checks::All {
                    check.rederivation = check3(source, rules, seeds, &lower, every, progress)?;
                }
            }
        }
        check.seconds = start.elapsed().as_secs_f64();
        if check.found_wrong() {
            broken.push(seeds);
        }
        let go_on = on_level(&check);
        // Recorded at once, so that an error at a later level keeps it: a
        // pass of all three checks names the content checked; a level
        // found wrong loses any record of an earlier pass.
        if let Some((db, rules)) = source.db() {
            let passed = check.passed();
            let recorded = if checks == Checks::All && passed {
                source
                    .content_sha256(seeds)
                    .and_then(|content| db.set_verified(rules, seeds, content))
            } else if check.found_wrong() {
                db.set_verified(rules, seeds, None)
            } else {
                Ok(())
            };
            if let Err(e) = recorded {
                progress.notice(Notice::VerifiedNotRecorded {
                    seeds,
                    passed,
                    why: e.to_string(),
                });
            }
        }
        out.push(check);
        if go_on.is_break() {
            break;
        }
    }
    Ok(out)
}

/// Check 3 on level `seeds` of `source`, checkpointed every `every` in a
/// table directory; its work directory (check 2's file included) goes
/// once it is done.
fn check3(
    source: &Source,
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    every: Option<Duration>,
    progress: Progress<'_>,
) -> Result<Outcome> {
    let mut saves: Box<dyn Saves + '_> = match source.db() {
        Some((db, rules)) => Box::new(Check3Saves::new(db, rules, seeds, every, progress)?),
        None => Box::new(NoSaves),
    };
    let size = level_size(seeds);
    // The forward solver scans the level once per threshold, batch by
    // batch: its progress is counted in positions scanned, every threshold.
    let stage = progress.stage(
        format!("level {seeds}: re-derivation (thresholds x positions)"),
        size * seeds as u64,
    );
    let mut saves_counted = ProgressSaves {
        inner: &mut *saves,
        stage: &stage,
        progress,
        seeds,
        size,
        done: 0,
        settled: false,
    };
    let outcome = rederivation(rules, seeds, lower, &mut saves_counted, |f| {
        source.for_each_chunk(seeds, f)
    })?;
    stage.finish();
    if let Some((db, rules)) = source.db() {
        let dir = work_dir(db, rules, seeds);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
    }
    Ok(outcome)
}

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
struct Tally {
    tiles: u64,
    positions: u64,
    count: u64,
    first: Vec<Mismatch>,
}

impl Tally {
    /// Bytes of [`Tally::to_bytes`]: tiles, positions, count, how many
    /// listed, and [`SHOWN`] slots of (index, stored, expected).
    const BYTES: usize = 8 + 8 + 8 + 1 + SHOWN * 10;

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

    fn to_bytes(&self) -> [u8; Tally::BYTES] {
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

    /// The tally of `b` (level `seeds`), if it is one.
    fn from_bytes(b: &[u8; Tally::BYTES], seeds: usize) -> Option<Tally> {
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
        let expected = expected.unwrap_or(-(seeds as i8));
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
/// checkpointed (see "Checkpoints" in the module documentation).
fn check2(
    source: &Source,
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    every: Option<Duration>,
    progress: Progress<'_>,
) -> Result<Outcome> {
    let mut saves = match source.db() {
        Some((db, rules)) => Some(Check2Saves::new(db, rules, seeds, every)?),
        None => None,
    };
    let tiles = Encoder::new(seeds).mover_tiles(seeds).len() as u64;
    let saved = match &saves {
        Some(saves) => saves.resume()?,
        None => None,
    };
    let start = saved.filter(|t| t.tiles <= tiles).unwrap_or_default();
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

/// The content hashes of the levels a check of level `seeds` reads, after
/// `magic`, the rule set and the level: what a checkpoint's header starts
/// with. `own`: level `seeds` itself is read too.
fn identity(magic: &[u8; 8], db: &Db, rules: Rules, seeds: usize, own: bool) -> Result<Vec<u8>> {
    let mut identity = magic.to_vec();
    identity.push(rules.code());
    identity.extend_from_slice(&(seeds as u32).to_le_bytes());
    for hash in db.lower_content(rules, seeds)? {
        identity.extend_from_slice(&hash);
    }
    if own {
        identity.extend_from_slice(&db.open(rules, seeds)?.header().content_sha256);
    }
    Ok(identity)
}

/// Where check 2 of one level of a table directory stands (see
/// "Checkpoints" in the module documentation).
struct Check2Saves {
    path: PathBuf,
    identity: Vec<u8>,
    seeds: usize,
    clock: CheckpointClock,
}

impl Check2Saves {
    const MAGIC: &[u8; 8] = b"MDBCHK21";

    fn new(db: &Db, rules: Rules, seeds: usize, every: Option<Duration>) -> Result<Check2Saves> {
        Ok(Check2Saves {
            path: work_dir(db, rules, seeds).join("check2"),
            identity: identity(Self::MAGIC, db, rules, seeds, true)?,
            seeds,
            clock: CheckpointClock::new(every),
        })
    }

    /// The tally saved for these contents, if there is a sound one. A
    /// file the system cannot read is an error, not a reason to start
    /// over.
    fn resume(&self) -> Result<Option<Tally>> {
        let mut bytes = [0u8; Tally::BYTES];
        // None there, another level's or damaged: the check starts afresh,
        // which is never wrong.
        match read_compressed(&self.path, &self.identity, &mut bytes) {
            Ok(()) => Ok(Tally::from_bytes(&bytes, self.seeds)),
            Err(Error::Corrupt { .. }) => Ok(None),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Saves `tally` if a checkpoint is due or the check is `complete`
    /// (unless checkpoints are off).
    fn after_part(&mut self, tally: &Tally, complete: bool) -> Result<()> {
        if !(self.clock.on() && (complete || self.clock.due())) {
            return Ok(());
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        crate::files::create_dirs(dir)?;
        write_compressed(&self.path, &self.identity, &tally.to_bytes())?;
        self.clock.reset();
        Ok(())
    }
}

/// Holds level `seeds` of a table directory for this `verify` alone: two
/// at once would write the same checkpoints. A second one waits for the
/// first (saying so, and trying again while `progress` says to keep
/// waiting), then picks up what the first left. `Err(why)` where this
/// run may not write the lock (a read-only file system, no permission),
/// where no checkpoint can be written either; anything else in the way (a
/// link or a named pipe where the lock goes) is an error.
fn lock_level(
    db: &Db,
    rules: Rules,
    seeds: usize,
    progress: Progress<'_>,
) -> Result<std::result::Result<DirLock, String>> {
    let dir = db.raw_dir(rules);
    let path = dir.join(format!("verify.{seeds}.lock"));
    let not_writable = |e: &std::io::Error| {
        matches!(
            e.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        )
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return match not_writable(&e) {
            true => Ok(Err(format!("{}: {e}", dir.display()))),
            false => Err(Error::io(&dir, e)),
        };
    }
    let waiting = |holder: &str| {
        progress.notice(Notice::WaitingForChecker {
            seeds,
            holder: holder.to_string(),
        })
    };
    match DirLock::acquire_file_waiting(&path, waiting, || progress.keep_waiting()) {
        Ok(lock) => Ok(Ok(lock)),
        Err(Error::Io { source, .. }) if not_writable(&source) => {
            Ok(Err(format!("{}: {source}", path.display())))
        }
        Err(e) => Err(e),
    }
}

/// Where the checkpoints of `verify` of level `seeds` go.
fn work_dir(db: &Db, rules: Rules, seeds: usize) -> PathBuf {
    db.raw_dir(rules).join(format!("verify.{seeds}.work"))
}

/// Check 3 on level `seeds`: solve it again by forward sweeps from the
/// lower levels `lower` (levels `0..seeds`), then [`compare`] with the
/// stored values, which `stored` hands to its argument in index order,
/// chunk by chunk (as [`Source::for_each_chunk`] does). An error is a lower
/// level (or the stored level) that could not be read.
pub fn rederivation(
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    saves: &mut dyn Saves,
    stored: impl FnOnce(&mut dyn FnMut(&[i8])) -> Result<()>,
) -> Result<Outcome> {
    if lower.levels() != seeds {
        return Err(Error::Invalid(format!(
            "level {seeds} rests on {seeds} lower levels, not {}",
            lower.levels()
        )));
    }
    let again = solve_level_saving(rules, seeds, lower, saves)?;
    compare(seeds, &again, stored)
}

/// Check 3's progress: the batches done, told to its stage as they end,
/// around the checkpoints `inner` takes (a [`Saves`] that also counts);
/// and, after the first batch, the solver's bytes moved onto huge pages
/// where they are not ([`settle`]), before the random accesses of the
/// thresholds.
struct ProgressSaves<'a> {
    inner: &'a mut dyn Saves,
    stage: &'a Stage<'a>,
    progress: Progress<'a>,
    seeds: usize,
    size: u64,
    /// Positions scanned so far, over every threshold.
    done: u64,
    /// Whether [`settle`] was called.
    settled: bool,
}

impl ProgressSaves<'_> {
    /// Moves the count to `mark`: thresholds `seeds..t` scanned whole,
    /// threshold `t` up to its next batch (nothing while the lower levels
    /// are read); the units newly reached.
    fn reach(&mut self, mark: Mark) -> u64 {
        let Mark::Batch { t, next } = mark else {
            return 0;
        };
        let thresholds_done = (self.seeds as u64).saturating_sub(t as u64);
        let now = thresholds_done * self.size + next.min(self.size);
        let new = now.saturating_sub(self.done);
        self.done = self.done.max(now);
        new
    }
}

impl Saves for ProgressSaves<'_> {
    fn resume(&mut self, bytes: &mut [i8]) -> Result<Option<Mark>> {
        let mark = self.inner.resume(bytes)?;
        if let Some(mark) = mark {
            let before = self.reach(mark);
            self.stage.resumed(before);
        }
        Ok(mark)
    }

    fn after_batch(&mut self, mark: Mark, bytes: &[i8]) -> Result<()> {
        let new = self.reach(mark);
        self.stage.inc(new);
        if matches!(mark, Mark::Batch { .. })
            && !std::mem::replace(&mut self.settled, true)
            && let Some(moved) = settle(as_bytes(bytes))
        {
            self.progress.notice(Notice::huge_pages(self.seeds, &moved));
        }
        self.inner.after_batch(mark, bytes)
    }
}

/// The checkpoints of check 3 of one level of a table directory (see
/// "Checkpoints" in the module documentation).
struct Check3Saves<'a> {
    path: PathBuf,
    /// What the header starts with: magic, rule set, level, and the content
    /// hashes of the levels it reads.
    identity: Vec<u8>,
    clock: CheckpointClock,
    seeds: usize,
    progress: Progress<'a>,
}

impl<'a> Check3Saves<'a> {
    /// Version 3: the walk of the lower levels is checkpointed too (since
    /// version 2), and the header is sealed.
    const MAGIC: &'static [u8; 8] = b"MDBCHK33";
    /// Bytes of a mark in the header.
    const MARK: usize = 9;

    fn new(
        db: &Db,
        rules: Rules,
        seeds: usize,
        every: Option<Duration>,
        progress: Progress<'a>,
    ) -> Result<Check3Saves<'a>> {
        Ok(Check3Saves {
            path: work_dir(db, rules, seeds).join("check3"),
            identity: identity(Self::MAGIC, db, rules, seeds, false)?,
            clock: CheckpointClock::new(every),
            seeds,
            progress,
        })
    }

    /// The identity, then `mark`: a threshold (`1..=seeds`) and the next
    /// batch's position, or 0 and the parts of the exits done and in all;
    /// [`sealed`].
    fn header(&self, mark: Mark) -> Vec<u8> {
        let mut h = self.identity.clone();
        match mark {
            Mark::Batch { t, next } => {
                h.push(t as u8);
                h.extend_from_slice(&next.to_le_bytes());
            }
            Mark::Exits { done, parts } => {
                h.push(0);
                h.extend_from_slice(&done.to_le_bytes());
                h.extend_from_slice(&parts.to_le_bytes());
            }
        }
        sealed(h)
    }

    /// The mark that `head`, a header read back, holds, if the header is
    /// whole: its seal matches what [`Check3Saves::header`] makes of it.
    fn mark(&self, head: &[u8]) -> Option<Mark> {
        let at = &head[self.identity.len()..];
        let u32_at = |i: usize| u32::from_le_bytes(at[i..i + 4].try_into().expect("4 bytes"));
        let mark = match at[0] {
            0 => Mark::Exits {
                done: u32_at(1),
                parts: u32_at(5),
            },
            t if usize::from(t) <= self.seeds => Mark::Batch {
                t: t as i8,
                next: u64::from_le_bytes(at[1..9].try_into().expect("8 bytes")),
            },
            _ => return None,
        };
        (self.header(mark) == head).then_some(mark)
    }
}

impl Saves for Check3Saves<'_> {
    fn resume(&mut self, bytes: &mut [i8]) -> Result<Option<Mark>> {
        let Some(head) = read_head(&self.path, self.identity.len() + Self::MARK + SEAL)? else {
            return Ok(None);
        };
        if !head.starts_with(&self.identity) {
            return Ok(None); // another level's, or lower levels since rebuilt
        }
        let Some(mark) = self.mark(&head) else {
            self.progress.notice(Notice::Check3Afresh {
                seeds: self.seeds,
                why: format!("{}: where it stands is damaged", self.path.display()),
            });
            return Ok(None);
        };
        let out = as_bytes_mut(bytes);
        let seeds = self.seeds;
        match read_compressed(&self.path, &head, out) {
            Ok(()) => {
                self.progress.notice(Notice::Check3Resumed {
                    seeds,
                    at: check3_at(mark, seeds),
                });
                Ok(Some(mark))
            }
            // Solving again from the start overwrites every byte.
            Err(e @ Error::Corrupt { .. }) => {
                self.progress.notice(Notice::Check3Afresh {
                    seeds,
                    why: e.to_string(),
                });
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn after_batch(&mut self, mark: Mark, bytes: &[i8]) -> Result<()> {
        if !self.clock.due() {
            return Ok(());
        }
        let took = Instant::now();
        let dir = self.path.parent().unwrap_or(Path::new("."));
        crate::files::create_dirs(dir)?;
        let written = write_compressed(&self.path, &self.header(mark), as_bytes(bytes))?;
        self.progress.notice(Notice::Check3Checkpoint {
            seeds: self.seeds,
            at: check3_at(mark, self.seeds),
            bytes: written,
            seconds: took.elapsed().as_secs_f64(),
        });
        self.clock.reset();
        Ok(())
    }
}

/// How a notice tells where check 3 stands at `mark`.
fn check3_at(mark: Mark, seeds: usize) -> Check3At {
    match mark {
        Mark::Exits { done, parts } => Check3At::Captures { done, parts },
        // At (or, from a checkpoint of an earlier binary, past) the end.
        Mark::Batch { t, next } if next >= level_size(seeds) => {
            Check3At::ThresholdDone { threshold: t }
        }
        Mark::Batch { t, next } => Check3At::Threshold {
            threshold: t,
            position: next,
        },
    }
}

/// Compares the values `expected` of level `seeds` with the stored ones,
/// which `stored` hands to its argument in index order, chunk by chunk
/// (chunks of any length): the stored level is streamed, never held
/// whole. A stored level of another length is [`Outcome::Broken`].
pub fn compare(
    seeds: usize,
    expected: &[i8],
    stored: impl FnOnce(&mut dyn FnMut(&[i8])) -> Result<()>,
) -> Result<Outcome> {
    let enc = Encoder::new(seeds);
    let (mut at, mut count, mut first) = (0usize, 0u64, Vec::new());
    stored(&mut |chunk: &[i8]| {
        let end = at + chunk.len();
        if let Some(want) = expected.get(at..end)
            && want != chunk
        {
            for (k, (&s, &e)) in chunk.iter().zip(want).enumerate() {
                if s != e {
                    count += 1;
                    if first.len() < SHOWN {
                        let index = (at + k) as u64;
                        first.push(Mismatch {
                            index,
                            board: enc.unrank(seeds, index),
                            stored: s,
                            expected: e,
                        });
                    }
                }
            }
        }
        at = end;
    })?;
    if at != expected.len() {
        return Ok(Outcome::Broken(format!(
            "level {seeds}: {at} stored values for {} positions",
            expected.len()
        )));
    }
    // Found in index order, the first `SHOWN` kept.
    Ok(match count {
        0 => Outcome::Pass,
        _ => Outcome::Differs(count, first),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::forward::solve_level_forward;

    /// A check-3 mark at (or, from an earlier binary, past) the level's end
    /// is its threshold done, not a position past the level.
    #[test]
    fn a_check_3_mark_at_the_levels_end_is_its_threshold_done() {
        let size = level_size(10);
        let at = |next| check3_at(Mark::Batch { t: 3, next }, 10).to_string();
        assert_eq!(
            at(size - 1),
            format!("at threshold 3 (position {})", size - 1)
        );
        assert_eq!(at(size), "after threshold 3");
        assert_eq!(at(1 << 24), "after threshold 3");
    }

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
}
