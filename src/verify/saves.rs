//! Where checks 2 and 3 of a table directory keep their checkpoints, and
//! the lock that keeps them to one `verify` of a level at a time.
//!
//! Checks 2 and 3 of the top levels take hours (level 36: 14 G positions),
//! longer than a `verify` may be left running. Of a table directory they
//! are checkpointed like a build, every
//! [`checkpoint_interval`](crate::settings::checkpoint_interval) (10 minutes
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
//! from them. One it cannot use (damaged, written by another version of
//! the format, or over tables rebuilt since) is named in a notice, with
//! why, and its check starts afresh. A
//! `verify` asked for checks 1 and 2 only
//! ([`Checks::Consistency`](super::Checks::Consistency): where check 3's
//! memory or hours are not to be had) leaves `check2` behind, so a full one
//! later goes straight to check 3. Check 1 runs in full every time: it is
//! what ties the hashes in the headers to the bytes on disk. The directory
//! goes once check 3 is done.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::consistency::Tally;
use crate::checkpoint_file::{
    CheckpointClock, SEAL, read_compressed, read_head, sealed, write_compressed,
};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::lock::DirLock;
use crate::oware::forward::{Mark, Saves};
use crate::oware::{Rules, level_size};
use crate::progress::{Check3At, Notice, Progress};
use crate::table::{as_bytes, as_bytes_mut};

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
/// the module documentation).
pub(super) struct Check2Saves {
    path: PathBuf,
    identity: Vec<u8>,
    seeds: usize,
    clock: CheckpointClock,
}

impl Check2Saves {
    const MAGIC: &[u8; 8] = b"MDBCHK21";

    pub(super) fn new(keep: Keep, seeds: usize) -> Result<Check2Saves> {
        Ok(Check2Saves {
            path: work_dir(keep.db, keep.rules, seeds).join("check2"),
            identity: identity(Self::MAGIC, keep.db, keep.rules, seeds, true)?,
            seeds,
            clock: CheckpointClock::new(keep.every),
        })
    }

    /// The tally saved for these contents, if there is a sound one of a
    /// walk of `tiles` tiles. One that is there but cannot be used (of
    /// another version or other levels, or damaged) is told to `progress`,
    /// and the check starts afresh, which is never wrong. A file the system
    /// cannot read is an error, not a reason to start over.
    pub(super) fn resume(&self, tiles: u64, progress: Progress<'_>) -> Result<Option<Tally>> {
        let afresh = |why: String| {
            progress.notice(Notice::Check2Afresh {
                seeds: self.seeds,
                why,
            });
            Ok(None)
        };
        match read_head(&self.path, self.identity.len())? {
            None if !self.path.exists() => return Ok(None),
            Some(head) if head != self.identity => {
                return afresh(not_this_check(&self.path, &head, &self.identity));
            }
            _ => {}
        }
        let mut bytes = [0u8; Tally::BYTES];
        match read_compressed(&self.path, &self.identity, &mut bytes) {
            Ok(()) => match Tally::from_bytes(&bytes, self.seeds) {
                Some(tally) if tally.tiles() <= tiles => Ok(Some(tally)),
                _ => afresh(format!(
                    "{}: where it stands is damaged",
                    self.path.display()
                )),
            },
            Err(e @ Error::Corrupt { .. }) => afresh(e.to_string()),
            Err(e) => Err(e),
        }
    }

    /// Saves `tally` if a checkpoint is due or the check is `complete`
    /// (unless checkpoints are off).
    pub(super) fn after_part(&mut self, tally: &Tally, complete: bool) -> Result<()> {
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

/// Where checks 2 and 3 of one level keep their checkpoints: a table
/// directory this run holds the level's lock in ([`lock_level`]). A run
/// without one (published files, or a directory it may not write) neither
/// reads, writes nor removes checkpoints.
#[derive(Clone, Copy)]
pub(super) struct Keep<'a> {
    pub db: &'a Db,
    pub rules: Rules,
    /// How often; `None`: never written (those left are still resumed).
    pub every: Option<Duration>,
}

/// Holds level `seeds` of a table directory for this `verify` alone: two
/// at once would write the same checkpoints. A second one waits for the
/// first (saying so, and trying again while `progress` says to keep
/// waiting), then picks up what the first left. `Err(why)` where this
/// run may not write the lock (a read-only file system, no permission),
/// where no checkpoint can be written either; anything else in the way (a
/// link or a named pipe where the lock goes) is an error.
pub(super) fn lock_level(
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

/// Why the checkpoint at `path`, whose header begins `head`, is not one
/// of the check whose header begins `identity` (its magic, then what it
/// reads): written by another version, or over other tables than these.
fn not_this_check(path: &Path, head: &[u8], identity: &[u8]) -> String {
    let (magic, theirs) = (&identity[..8], &head[..8.min(head.len())]);
    let path = path.display();
    if theirs == magic {
        format!(
            "{path}: taken over other tables than these (a level it reads was rebuilt or replaced since)"
        )
    } else if theirs.len() == 8 && theirs[..7] == magic[..7] {
        format!(
            "{path}: written by another version of mancaladb (format {}, this one reads {})",
            String::from_utf8_lossy(theirs),
            String::from_utf8_lossy(magic)
        )
    } else {
        format!("{path}: not a checkpoint of this check")
    }
}

/// Where the checkpoints of `verify` of level `seeds` go.
pub(super) fn work_dir(db: &Db, rules: Rules, seeds: usize) -> PathBuf {
    db.raw_dir(rules).join(format!("verify.{seeds}.work"))
}

/// The checkpoints of check 3 of one level of a table directory (see
/// the module documentation).
pub(super) struct Check3Saves<'a> {
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

    pub(super) fn new(keep: Keep, seeds: usize, progress: Progress<'a>) -> Result<Check3Saves<'a>> {
        Ok(Check3Saves {
            path: work_dir(keep.db, keep.rules, seeds).join("check3"),
            identity: identity(Self::MAGIC, keep.db, keep.rules, seeds, false)?,
            clock: CheckpointClock::new(keep.every),
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
            // A checkpoint is written whole and renamed: a file there that
            // is shorter than its header is damaged, not absent.
            if self.path.exists() {
                self.progress.notice(Notice::Check3Afresh {
                    seeds: self.seeds,
                    why: format!(
                        "{}: shorter than a checkpoint's header",
                        self.path.display()
                    ),
                });
            }
            return Ok(None);
        };
        if !head.starts_with(&self.identity) {
            let why = not_this_check(&self.path, &head, &self.identity);
            self.progress.notice(Notice::Check3Afresh {
                seeds: self.seeds,
                why,
            });
            return Ok(None);
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
