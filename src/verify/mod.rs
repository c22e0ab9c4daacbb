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
//! [`LowerLevels`](crate::oware::LowerLevels)
//! ([`Source::lower_levels`]: mapped VU files and raw copies, else
//! compressed tables block by block), and both checks that read them walk
//! the level in mover-major order
//! (`Encoder::mover_tiles`), in
//! which the captures of a tile land in a few blocks of each lower level.
//! So the memory of checking level `N` is
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
//! ## The parts
//!
//! * this module: the run ([`verify`]) and what it finds ([`LevelCheck`],
//!   [`Outcome`]); check 1 is the source's own ([`Source::integrity`]);
//! * `consistency`: check 2;
//! * `rederive`: check 3, and the comparison of the values it derives
//!   with the stored ones;
//! * `saves`: the checkpoints of checks 2 and 3 in a table directory
//!   (when they are taken, what they hold, when they are resumed), and the
//!   lock that keeps them to one `verify` per level.

mod consistency;
mod rederive;
mod saves;

use std::fmt;
use std::ops::ControlFlow;
use std::time::Instant;

use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use self::consistency::check2;
pub use self::consistency::consistency;
use self::rederive::check3;
pub use self::rederive::{compare, rederivation};
use self::saves::{Keep, lock_level};
use crate::db::Verdict;
use crate::error::{Corruption, Error, Result};
use crate::oware::{Board, Rules, game_levels, levels_needed, reads_level};
use crate::progress::{Notice, Progress};
use crate::settings::checkpoint_interval;
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

impl Checks {
    /// The error for a number of checks that is not 1, 2 or 3.
    fn refused(got: impl fmt::Display) -> Error {
        Error::Invalid(format!(
            "checks is 1 (integrity), 2 (and consistency) or 3 (and re-derivation), got {got}"
        ))
    }
}

impl TryFrom<u8> for Checks {
    type Error = Error;

    /// Checks `1..=n`: `n` is 1, 2 or 3.
    fn try_from(n: u8) -> Result<Checks> {
        match n {
            1 => Ok(Checks::Integrity),
            2 => Ok(Checks::Consistency),
            3 => Ok(Checks::All),
            n => Err(Checks::refused(n)),
        }
    }
}

impl std::str::FromStr for Checks {
    type Err = Error;

    /// `n` as text (`verify --checks`), spaces around it allowed.
    fn from_str(text: &str) -> Result<Checks> {
        let text = text.trim();
        match text.parse::<u8>() {
            Ok(n @ 1..=3) => Checks::try_from(n),
            _ => Err(Checks::refused(text)),
        }
    }
}

/// The content sha256s of the levels that level `seeds` reads, as
/// `source` read them: the lower levels a pass is recorded against (none
/// for VU files, of which nothing is recorded).
fn lower_contents(source: &Source, seeds: usize) -> Result<Vec<[u8; 32]>> {
    let mut lower = Vec::new();
    for k in (0..seeds).filter(|&k| reads_level(seeds, k)) {
        lower.extend(source.content_sha256(k)?);
    }
    Ok(lower)
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
/// its `verified.tsv` under the content checksums of the table checked and
/// of the lower levels it was checked against, and
/// one that a check found wrong loses any record of an earlier pass (see
/// [`Db::set_verified`](crate::db::Db::set_verified)); a record that
/// cannot be written (a read-only directory) is a warning, [`Notice::VerifiedNotRecorded`], not a change
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
            // not a verdict on the table but an error of the run, nor is
            // damage in a file that another has replaced since this source
            // opened it (a long-lived reader's): the level there now is not
            // the one checked, and its record stays.
            Err(
                e @ Error::Corrupt {
                    kind: Corruption::Replaced(_),
                    ..
                },
            ) => return Err(e),
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
                let (_one_at_a_time, keep) = match source.db() {
                    Some((db, rules)) => match lock_level(db, rules, seeds, progress)? {
                        Ok(lock) => (Some(lock), Some(Keep { db, rules, every })),
                        Err(why) => {
                            progress.notice(Notice::VerifyWithoutCheckpoints { seeds, why });
                            (None, None)
                        }
                    },
                    None => (None, None),
                };
                let lower = source.lower_levels(seeds)?;
                check.consistency = check2(source, rules, seeds, &lower, keep, progress)?;
                if checks == Checks::All {
                    check.rederivation = check3(source, rules, seeds, &lower, keep, progress)?;
                }
            }
        }
        check.seconds = start.elapsed().as_secs_f64();
        if check.found_wrong() {
            broken.push(seeds);
        }
        let go_on = on_level(&check);
        // Recorded at once, so that an error at a later level keeps it: a
        // pass of all three checks names the contents checked; a level
        // found wrong loses any record of an earlier pass. A caller that
        // gives up waiting for the records (Python on Ctrl-C) stops the
        // run here, as `on_level` would.
        let mut gave_up = false;
        if let Some((db, rules)) = source.db() {
            let passed = check.passed();
            let content = source.content_sha256(seeds);
            let recorded = if checks == Checks::All && passed {
                content.and_then(|content| {
                    // A table directory's tables all have one.
                    let Some(content) = content else {
                        return Ok(true);
                    };
                    let lower = lower_contents(source, seeds)?;
                    db.set_verified(
                        rules,
                        seeds,
                        Verdict::Passed {
                            content,
                            lower: &lower,
                        },
                        progress,
                    )
                })
            } else if check.found_wrong() {
                let content = content.ok().flatten();
                db.set_verified(rules, seeds, Verdict::Failed { content }, progress)
            } else {
                Ok(true)
            };
            let why = match recorded {
                Ok(true) => None,
                Ok(false) => Some(format!(
                    "{}: another table has replaced the one checked",
                    db.table_path(rules, seeds).display()
                )),
                Err(e) => {
                    gave_up = matches!(e, Error::Locked { .. });
                    Some(e.to_string())
                }
            };
            if let Some(why) = why {
                progress.notice(Notice::VerifiedNotRecorded { seeds, passed, why });
            }
        }
        out.push(check);
        if go_on.is_break() || gave_up {
            break;
        }
    }
    Ok(out)
}
