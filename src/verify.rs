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
//! (`tests/verify.rs` shows such a graph). Re-derivation computes least fixed
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
//! Check 3 of the top levels takes hours (level 36: 14 G positions). Of a
//! table directory it is checkpointed like a build: every
//! [`checkpoint_interval`] (10 minutes unless `MANCALADB_CHECKPOINT_SECS`
//! says otherwise) the forward solver's bytes, taken between two of its
//! batches ([`Saves`]), go to `raw/<rules>/verify.<N>.work/check3`,
//! compressed, behind a header naming the rule set, the level, the content
//! hashes of the lower levels it reads and where the solve stands. A later
//! `verify` of that level whose lower levels have the same hashes resumes
//! from it (checks 1 and 2 run again: they take a fifth of the time or
//! less); a damaged one is ignored. The directory goes once check 3 is done.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::db::Db;
use crate::error::{Error, Result};
use crate::files::{checkpoint_interval, read_compressed, read_head, write_compressed};
use crate::memory::Pipeline;
use crate::oware::forward::{Mark, NoSaves, OwareLevel, Saves, Targets, solve_level_saving};
use crate::oware::{Board, Encoder, LowerLevels, Rules, level_size, reads_level};
use crate::progress::Progress;
use crate::source::Source;

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
    /// Not run (`--quick`, or an earlier check failed).
    Skipped,
}

impl Outcome {
    /// Whether the check failed.
    pub fn failed(&self) -> bool {
        matches!(self, Outcome::Broken(_) | Outcome::Differs(..))
    }
}

/// `"pass"`, `null` (not run), `{"error": why}` or `{"differ": n, "first":
/// [mismatch, ...]}`.
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
    /// Whether every check that ran passed.
    pub fn passed(&self) -> bool {
        !(self.integrity.failed() || self.consistency.failed() || self.rederivation.failed())
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

/// Checks levels `levels` of `source` under `rules`; `quick` runs check 1
/// only. Levels below each one checked are read as needed (and must be
/// sound: an unreadable one is an error, not a failed check).
pub fn verify(
    source: &Source,
    rules: Rules,
    levels: impl IntoIterator<Item = usize>,
    quick: bool,
    progress: Progress,
    mut on_level: impl FnMut(&LevelCheck),
) -> Result<Vec<LevelCheck>> {
    let levels: Vec<usize> = levels.into_iter().collect();
    let every = checkpoint_interval()?;
    let mut out = Vec::new();
    for &seeds in &levels {
        let start = Instant::now();
        let mut check = LevelCheck {
            seeds,
            integrity: Outcome::Pass,
            consistency: Outcome::Skipped,
            rederivation: Outcome::Skipped,
            seconds: 0.0,
        };
        match source.integrity(seeds) {
            // A damaged file fails the check; a missing or unreadable one is
            // not a verdict on the table but an error of the run.
            Err(e @ Error::Corrupt { .. }) => check.integrity = Outcome::Broken(e.to_string()),
            Err(e) => return Err(e),
            Ok(()) if quick => {}
            Ok(()) => {
                let lower = source.lower_levels(seeds)?;
                let size = level_size(seeds);
                let stage = progress.stage(format!("level {seeds}: consistency"), size);
                // Level `seeds`'s own values are held for check 2 only.
                let values = source.load(seeds)?;
                check.consistency = consistency(rules, seeds, &values, &lower)?;
                drop(values);
                stage.inc(size);
                stage.finish();
                let mut saves: Box<dyn Saves> = match source.db() {
                    Some((db, rules)) => {
                        Box::new(Check3Saves::new(db, rules, seeds, every, progress)?)
                    }
                    None => Box::new(NoSaves),
                };
                let stage = progress.stage(format!("level {seeds}: re-derivation"), size);
                check.rederivation = rederivation(rules, seeds, &lower, &mut *saves, |f| {
                    source.for_each_chunk(seeds, f)
                })?;
                stage.inc(size);
                stage.finish();
                if let Some((db, rules)) = source.db() {
                    let dir = Check3Saves::dir(db, rules, seeds);
                    if dir.exists() {
                        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
                    }
                }
            }
        }
        check.seconds = start.elapsed().as_secs_f64();
        on_level(&check);
        let broken = check.integrity.failed();
        out.push(check);
        if broken && levels.last() != Some(&seeds) && !quick {
            // Higher levels would be checked against values we cannot read.
            break;
        }
    }
    Ok(out)
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
    let range = 0..size;
    let parts = tiles
        .par_chunks(16)
        .map(|tiles| -> Result<(u64, Vec<Mismatch>)> {
            let (mut count, mut first) = (0u64, Vec::new());
            let mut failed = None;
            let mut check = |(i, board, targets): (u64, Board, Targets)| {
                let mut expected = None;
                for (captured, index) in targets.iter() {
                    let child = match captured {
                        0 => Ok(values[index as usize]),
                        c => lower.value(seeds - usize::from(c), index),
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
            for tile in tiles {
                enc.walk_tile(seeds, tile, &range, |i, board| {
                    let targets = level.targets(board);
                    for (captured, index) in targets.iter() {
                        match captured {
                            0 => crate::memory::prefetch(&values[index as usize]),
                            c => lower.prefetch(seeds - usize::from(c), index),
                        }
                    }
                    pipeline.push((i, *board, targets), &mut check);
                });
            }
            pipeline.finish(&mut check);
            failed.map_or(Ok((count, first)), Err)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(differences(parts))
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

/// The checkpoints of check 3 of one level of a table directory (see
/// "Checkpoints" in the module documentation).
struct Check3Saves {
    path: PathBuf,
    /// What the header starts with: magic, rule set, level, and the content
    /// hashes of the levels it reads.
    identity: Vec<u8>,
    every: Option<Duration>,
    last: Instant,
    seeds: usize,
    progress: Progress,
}

impl Check3Saves {
    const MAGIC: &[u8; 8] = b"MDBCHK31";

    /// Where the checkpoints of check 3 of level `seeds` go.
    fn dir(db: &Db, rules: Rules, seeds: usize) -> PathBuf {
        db.raw_dir(rules).join(format!("verify.{seeds}.work"))
    }

    fn new(
        db: &Db,
        rules: Rules,
        seeds: usize,
        every: Option<Duration>,
        progress: Progress,
    ) -> Result<Check3Saves> {
        let mut identity = Self::MAGIC.to_vec();
        identity.push(rules.code());
        identity.extend_from_slice(&(seeds as u32).to_le_bytes());
        for k in (0..seeds).filter(|&k| reads_level(seeds, k)) {
            identity.extend_from_slice(&db.open(rules, k)?.header().content_sha256);
        }
        Ok(Check3Saves {
            path: Self::dir(db, rules, seeds).join("check3"),
            identity,
            every,
            last: Instant::now(),
            seeds,
            progress,
        })
    }

    fn header(&self, mark: Mark) -> Vec<u8> {
        let mut h = self.identity.clone();
        h.push(mark.t as u8);
        h.extend_from_slice(&mark.next.to_le_bytes());
        h
    }
}

/// The solver's bytes as plain bytes.
fn as_bytes(bytes: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size, alignment and validity.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u8>(), bytes.len()) }
}

impl Saves for Check3Saves {
    fn resume(&mut self, bytes: &mut [i8]) -> Result<Option<Mark>> {
        let Some(head) = read_head(&self.path, self.identity.len() + 9) else {
            return Ok(None);
        };
        let (id, at) = head.split_at(self.identity.len());
        if id != self.identity {
            return Ok(None); // another level's, or lower levels since rebuilt
        }
        let mark = Mark {
            t: at[0] as i8,
            next: u64::from_le_bytes(at[1..9].try_into().expect("8 bytes")),
        };
        // SAFETY: as in `as_bytes`.
        let out = unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), bytes.len()) };
        let seeds = self.seeds;
        match read_compressed(&self.path, &head, out) {
            Ok(()) => {
                self.progress.line(&format!(
                    "level {seeds}: check 3 resuming at threshold {} (position {})",
                    mark.t, mark.next
                ));
                Ok(Some(mark))
            }
            // Solving again from the start overwrites every byte.
            Err(e @ Error::Corrupt { .. }) => {
                self.progress
                    .line(&format!("level {seeds}: {e}: check 3 starts afresh"));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn after_batch(&mut self, mark: Mark, bytes: &[i8]) -> Result<()> {
        match self.every {
            Some(every) if self.last.elapsed() >= every => {}
            _ => return Ok(()),
        }
        let took = Instant::now();
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let written = write_compressed(dir, &self.path, &self.header(mark), as_bytes(bytes))?;
        self.progress.line(&format!(
            "level {}: check 3 checkpoint at threshold {} ({:.1} MB in {:.1} s)",
            self.seeds,
            mark.t,
            written as f64 / 1e6,
            took.elapsed().as_secs_f64()
        ));
        self.last = Instant::now();
        Ok(())
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
    Ok(differences(vec![(count, first)]))
}

fn differences(parts: Vec<(u64, Vec<Mismatch>)>) -> Outcome {
    let count: u64 = parts.iter().map(|p| p.0).sum();
    if count == 0 {
        return Outcome::Pass;
    }
    let mut first: Vec<Mismatch> = parts.into_iter().flat_map(|p| p.1).collect();
    first.sort_unstable_by_key(|m| m.index);
    first.truncate(SHOWN);
    Outcome::Differs(count, first)
}
