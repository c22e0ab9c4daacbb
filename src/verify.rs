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

use std::time::Instant;

use rayon::prelude::*;
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::error::{Error, Result};
use crate::memory::{Pipeline, prefetch};
use crate::oware::forward::{Game, OwareLevel, Targets, solve_level_forward};
use crate::oware::{Board, Encoder, Rules};
use crate::progress::Progress;
use crate::source::{LevelData, Source};

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
/// only. Levels below the first one checked are loaded as needed (and must
/// be sound: an unreadable one is an error, not a failed check).
pub fn verify(
    source: &Source,
    rules: Rules,
    levels: std::ops::RangeInclusive<usize>,
    quick: bool,
    progress: Progress,
    mut on_level: impl FnMut(&LevelCheck),
) -> Result<Vec<LevelCheck>> {
    let mut loaded: Vec<LevelData> = Vec::new();
    let mut out = Vec::new();
    for seeds in 0..=*levels.end() {
        let checked = levels.contains(&seeds);
        if !checked {
            if !quick {
                loaded.push(source.load(seeds)?);
            }
            continue;
        }
        let start = Instant::now();
        let mut check = LevelCheck {
            seeds,
            integrity: Outcome::Pass,
            consistency: Outcome::Skipped,
            rederivation: Outcome::Skipped,
            seconds: 0.0,
        };
        let data = source.integrity(seeds).and_then(|()| {
            if quick {
                Ok(None)
            } else {
                source.load(seeds).map(Some)
            }
        });
        match data {
            // A damaged file fails the check; a missing or unreadable one is
            // not a verdict on the table but an error of the run.
            Err(e @ Error::Corrupt { .. }) => check.integrity = Outcome::Broken(e.to_string()),
            Err(e) => return Err(e),
            Ok(None) => {}
            Ok(Some(values)) => {
                let lower: Vec<&[i8]> = loaded.iter().map(|l| &l[..]).collect();
                let stage =
                    progress.stage(format!("level {seeds}: consistency"), values.len() as u64);
                check.consistency = consistency(rules, seeds, &values, &lower);
                stage.inc(values.len() as u64);
                stage.finish();
                let stage =
                    progress.stage(format!("level {seeds}: re-derivation"), values.len() as u64);
                check.rederivation = rederivation(rules, seeds, &values, &lower);
                stage.inc(values.len() as u64);
                stage.finish();
                loaded.push(values);
            }
        }
        check.seconds = start.elapsed().as_secs_f64();
        on_level(&check);
        let broken = check.integrity.failed();
        out.push(check);
        if broken && seeds < *levels.end() && !quick {
            // Higher levels would be checked against values we cannot read.
            break;
        }
    }
    Ok(out)
}

/// Check 2 on level `seeds` with values `values` and lower levels `lower`.
///
/// Children are read at random places: each position's reads are
/// prefetched and done a few positions later.
pub fn consistency(rules: Rules, seeds: usize, values: &[i8], lower: &[&[i8]]) -> Outcome {
    let level = OwareLevel::new(rules, seeds, lower);
    let value = |captured: u8, index: u64| -> &i8 {
        match captured {
            0 => &values[index as usize],
            c => &lower[seeds - usize::from(c)][index as usize],
        }
    };
    let chunk = 1usize << 15;
    let parts: Vec<(u64, Vec<Mismatch>)> = values
        .par_chunks(chunk)
        .enumerate()
        .map(|(c, vals)| {
            let start = (c * chunk) as u64;
            let (mut count, mut first) = (0u64, Vec::new());
            let mut check = |(i, board, targets): (u64, Board, Targets)| {
                let expected = targets
                    .iter()
                    .map(|(captured, index)| captured as i8 - value(captured, index))
                    .max()
                    .unwrap_or(-(seeds as i8));
                let stored = vals[(i - start) as usize];
                if stored != expected {
                    count += 1;
                    if first.len() < SHOWN {
                        first.push(Mismatch {
                            index: i,
                            board,
                            stored,
                            expected,
                        });
                    }
                }
            };
            let mut pipeline = Pipeline::new((0, Board::EMPTY, Targets::default()));
            level.walk(start, start + vals.len() as u64, |i, board| {
                let targets = level.targets(&board);
                for (captured, index) in targets.iter() {
                    prefetch(value(captured, index));
                }
                pipeline.push((i, board, targets), &mut check);
            });
            pipeline.finish(&mut check);
            (count, first)
        })
        .collect();
    differences(parts)
}

/// Check 3 on level `seeds`: solve it again by forward sweeps, compare.
pub fn rederivation(rules: Rules, seeds: usize, values: &[i8], lower: &[&[i8]]) -> Outcome {
    let again = solve_level_forward(rules, seeds, lower);
    let enc = Encoder::new(seeds);
    let chunk = 1usize << 16;
    let parts: Vec<(u64, Vec<Mismatch>)> = values
        .par_chunks(chunk)
        .zip(again.par_chunks(chunk))
        .enumerate()
        .map(|(c, (stored, expected))| {
            let (mut count, mut first) = (0u64, Vec::new());
            for (k, (&s, &e)) in stored.iter().zip(expected).enumerate() {
                if s != e {
                    count += 1;
                    if first.len() < SHOWN {
                        let index = (c * chunk + k) as u64;
                        first.push(Mismatch {
                            index,
                            board: enc.unrank(seeds, index),
                            stored: s,
                            expected: e,
                        });
                    }
                }
            }
            (count, first)
        })
        .collect();
    differences(parts)
}

fn differences(parts: Vec<(u64, Vec<Mismatch>)>) -> Outcome {
    let count: u64 = parts.iter().map(|p| p.0).sum();
    if count == 0 {
        return Outcome::Pass;
    }
    let first: Vec<Mismatch> = parts.into_iter().flat_map(|p| p.1).take(SHOWN).collect();
    Outcome::Differs(count, first)
}
