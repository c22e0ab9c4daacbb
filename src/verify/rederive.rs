//! Check 3, re-derivation: the level solved again from the stored lower
//! levels by the forward solver ([`crate::oware::forward`]), which shares
//! no solving code with the builder, and every value compared with the
//! stored one.

use super::saves::{Check3Saves, Keep, work_dir};
use super::{Mismatch, Outcome, SHOWN};
use crate::error::{Error, Result};
use crate::memory::settle;
use crate::oware::forward::{Mark, NoSaves, Saves, solve_level_saving};
use crate::oware::{Encoder, LowerLevels, Rules, level_size};
use crate::progress::{Notice, Progress, Stage};
use crate::source::Source;
use crate::table::as_bytes;

/// Check 3 on level `seeds` of `source`, checkpointed every `every` in a
/// table directory; its work directory (check 2's file included) goes
/// once it is done.
pub(super) fn check3(
    source: &Source,
    rules: Rules,
    seeds: usize,
    lower: &(impl LowerLevels + ?Sized),
    keep: Option<Keep>,
    progress: Progress<'_>,
) -> Result<Outcome> {
    let mut saves: Box<dyn Saves + '_> = match keep {
        Some(keep) => Box::new(Check3Saves::new(keep, seeds, progress)?),
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
    if let Some(keep) = keep {
        let dir = work_dir(keep.db, keep.rules, seeds);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
    }
    Ok(outcome)
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
