//! The checkpoints of one rank's slice, between thresholds and inside the
//! forward pass.
//!
//! **Checkpoints.** `state.<t>` holds the state byte of every position of
//! the slice after every threshold above `t` is done, behind a header that
//! names the level, the rule set, the rank's slice, the lower levels it is
//! solved from (a hash of their content hashes), `t` and the length of
//! every seed list, and ends with the first 8 bytes of its own SHA-256
//! ([`Checkpoint`]), zstd-compressed with its content checksum (a state
//! is mostly runs of a few values: a quarter of the bytes or less). It is
//! written to a temporary name, synced and renamed,
//! so a file under its final name is always complete (the older one and
//! the lists of the thresholds done go once it is); the seed lists are
//! synced before the first checkpoint is written.
//!
//! **Forward checkpoints.** `forward.<walk>.<done>` (`<walk>` is the
//! walk's number: 1 for captures, 2 for moves) holds the state
//! bytes part-way through the forward pass ([`ForwardMark`]: which of its
//! two walks, how many of its parts are done, and the length of every
//! seed list then), in the same format behind its own header (which
//! ends with its own checksum: the lists are cut back to it). The lists
//! are synced before it is written and cut back to those lengths when it
//! is resumed, so records appended after it count once (lists only grow,
//! so an older mark's lengths are there too). The older one goes once
//! every rank has written the newer, as with thresholds: ranks stopped
//! in between resume together from the older. Any `state.<t>` supersedes
//! them, and they go with the older checkpoints.

use std::path::{Path, PathBuf};

use super::seeds::list_path;
use super::{entries, remove_checkpoints_except, remove_unfinished};
use crate::checkpoint_file::{SEAL, read_compressed, read_head, sealed, write_compressed};
use crate::error::{Corruption, Error, Result};

/// What a checkpoint belongs to; a checkpoint is used only if all of it
/// matches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Checkpoint {
    pub rules: u8,
    pub seeds: u32,
    pub ranks: u32,
    pub rank: u32,
    pub start: u64,
    pub end: u64,
    /// What the level is solved from: for a build, the SHA-256 of the
    /// content hashes of the lower levels it reads (`Db::lower_content`),
    /// so that a checkpoint is never
    /// resumed over other lower levels (one rebuilt or replaced meanwhile).
    pub lower: [u8; 32],
}

/// Version 5: compressed states, varint seed lists whose record checks
/// cover their list, the length of every list in the header, which ends
/// with the first 8 bytes of its own SHA-256; since version 5 the header
/// names the lower levels ([`Checkpoint::lower`]). A work directory of
/// another version holds no checkpoint of this one, so it is started
/// afresh.
const MAGIC: &[u8; 8] = b"MDBSOLV5";
/// The forward checkpoint's own header (same body format).
/// Version 5: the header ends with the first 8 bytes of its own SHA-256,
/// since the seed lists are cut back to the lengths it holds, and names
/// the lower levels; the lists' records are those of version 5 of
/// [`MAGIC`].
const FORWARD_MAGIC: &[u8; 8] = b"MDBFWD05";

fn state_path(dir: &Path, t: usize) -> PathBuf {
    dir.join(format!("state.{t}"))
}

/// The forward checkpoint taken at `mark`: `forward.<walk>.<parts done>`,
/// the walk by its number ([`Walk`]).
fn forward_path(dir: &Path, mark: &ForwardMark) -> PathBuf {
    dir.join(format!("forward.{}.{}", mark.walk as u8, mark.done))
}

/// The two walks of the forward pass, in the order they run; their numbers
/// name the forward checkpoints' files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Best captures into the state bytes, in mover-major order.
    Captures = 1,
    /// Quiet moves counted and seeds listed, in index order.
    Moves = 2,
}

impl Walk {
    /// The walk's name in the build's progress lines.
    pub fn name(self) -> &'static str {
        match self {
            Walk::Captures => "captures",
            Walk::Moves => "moves",
        }
    }
}

/// Where the forward pass stood when its checkpoint was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardMark {
    /// The walk under way.
    pub walk: Walk,
    /// How many of its parts were done.
    pub done: u32,
    /// Into how many parts each walk is cut.
    pub parts: u32,
    /// The length of every seed list then ([`SeedLists::sync`](super::seeds::SeedLists::sync)).
    pub lists: Vec<u64>,
}

impl ForwardMark {
    /// How far the pass had come: larger is further.
    pub fn progress(&self) -> u64 {
        (self.walk as u64) << 32 | u64::from(self.done)
    }
}

impl Checkpoint {
    /// What every checkpoint file of this slice starts with.
    fn identity(&self, magic: &[u8; 8]) -> Vec<u8> {
        let mut h = magic.to_vec();
        h.push(self.rules);
        for x in [self.seeds, self.ranks, self.rank] {
            h.extend_from_slice(&x.to_le_bytes());
        }
        for x in [self.start, self.end] {
            h.extend_from_slice(&x.to_le_bytes());
        }
        h.extend_from_slice(&self.lower);
        h
    }

    /// The header of `state.<t>`, with the seed lists' lengths `lists`.
    fn header(&self, t: usize, lists: &[u64]) -> Vec<u8> {
        let mut h = self.identity(MAGIC);
        h.extend_from_slice(&(t as u32).to_le_bytes());
        for len in lists {
            h.extend_from_slice(&len.to_le_bytes());
        }
        sealed(h)
    }

    /// The seed lists' lengths in the header of `state.<t>` at `path`, if
    /// it is a checkpoint of this slice with its header whole.
    fn state_lists(&self, path: &Path, t: usize) -> Result<Option<Vec<u64>>> {
        let at = self.identity(MAGIC).len() + 4;
        let Some(head) = read_head(path, at + 16 * self.seeds as usize + SEAL)? else {
            return Ok(None);
        };
        let lists: Vec<u64> = head[at..head.len() - SEAL]
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        Ok((head == self.header(t, &lists)).then_some(lists))
    }

    fn forward_header(&self, mark: &ForwardMark) -> Vec<u8> {
        let mut h = self.identity(FORWARD_MAGIC);
        h.push(mark.walk as u8);
        h.extend_from_slice(&mark.done.to_le_bytes());
        h.extend_from_slice(&mark.parts.to_le_bytes());
        for len in &mark.lists {
            h.extend_from_slice(&len.to_le_bytes());
        }
        sealed(h)
    }

    /// Writes `state`, the slice after every threshold above `t`, as
    /// `state.<t>` in `dir` (atomically), with `lists`, the final lengths
    /// of the seed lists ([`SeedLists::finish`](super::seeds::SeedLists::finish)); returns the file's bytes.
    pub fn save(&self, dir: &Path, t: usize, lists: &[u64], state: &[u8]) -> Result<u64> {
        assert_eq!(lists.len(), 2 * self.seeds as usize, "one length per list");
        write_compressed(&state_path(dir, t), &self.header(t, lists), state)
    }

    /// Writes `state`, the slice part-way through the forward pass as
    /// `mark` says, as `forward.<walk>.<done>` in `dir` (atomically; the
    /// seed lists must be synced at the lengths of `mark` already); returns
    /// the file's bytes. The others stay until
    /// [`Checkpoint::remove_forward_except`] keeps only `mark`'s.
    pub fn save_forward(&self, dir: &Path, mark: &ForwardMark, state: &[u8]) -> Result<u64> {
        write_compressed(&forward_path(dir, mark), &self.forward_header(mark), state)
    }

    /// The thresholds `t` of the complete checkpoints in `dir` that belong
    /// to this slice, in decreasing order (least advanced first).
    /// A file that cannot be read is an error, not a checkpoint absent.
    pub fn saved(&self, dir: &Path) -> Result<Vec<usize>> {
        let mut found = Vec::new();
        for e in entries(dir)? {
            let name = e.file_name();
            let Some(t) = name
                .to_str()
                .and_then(|n| n.strip_prefix("state.")?.parse().ok())
            else {
                continue;
            };
            // Only the name `load` reads (not `state.05` or `state.+5`).
            if e.path() == state_path(dir, t) && self.state_lists(&e.path(), t)?.is_some() {
                found.push(t);
            }
        }
        found.sort_unstable_by(|a, b| b.cmp(a));
        Ok(found)
    }

    /// The marks of this slice's complete forward checkpoints in `dir`,
    /// least advanced first.
    /// A file that cannot be read is an error, not a checkpoint absent.
    pub fn forward_saved(&self, dir: &Path) -> Result<Vec<ForwardMark>> {
        let mut found = Vec::new();
        for e in entries(dir)? {
            if !e.file_name().to_string_lossy().starts_with("forward.") {
                continue;
            }
            if let Some(mark) = self.forward_mark(&e.path())?
                && e.path() == forward_path(dir, &mark)
            {
                found.push(mark);
            }
        }
        found.sort_unstable_by_key(ForwardMark::progress);
        Ok(found)
    }

    /// The mark in the header of `path`, if it is a forward checkpoint of
    /// this slice with its header whole (its checksum matches).
    fn forward_mark(&self, path: &Path) -> Result<Option<ForwardMark>> {
        let identity = self.identity(FORWARD_MAGIC);
        let lists = 2 * self.seeds as usize;
        let Some(head) = read_head(path, identity.len() + 9 + 8 * lists + SEAL)? else {
            return Ok(None);
        };
        let rest = &head[identity.len()..head.len() - SEAL];
        let word = |at: usize| u32::from_le_bytes(rest[at..at + 4].try_into().expect("4 bytes"));
        let walk = match rest[0] {
            1 => Walk::Captures,
            2 => Walk::Moves,
            _ => return Ok(None),
        };
        let mark = ForwardMark {
            walk,
            done: word(1),
            parts: word(5),
            lists: rest[9..]
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect(),
        };
        Ok((head == self.forward_header(&mark)).then_some(mark))
    }

    /// Reads checkpoint `state.<t>` of `dir` into `state`; returns the seed
    /// lists' lengths it recorded.
    pub fn load(&self, dir: &Path, t: usize, state: &mut [u8]) -> Result<Vec<u64>> {
        let path = state_path(dir, t);
        let lists = self.state_lists(&path, t)?.ok_or_else(|| {
            Error::corrupt(
                &path,
                Corruption::Checkpoint("not a checkpoint of this level"),
            )
        })?;
        read_compressed(&path, &self.header(t, &lists), state)?;
        Ok(lists)
    }

    /// Reads the forward checkpoint of `dir` taken at `mark` into `state`.
    pub fn load_forward(&self, dir: &Path, mark: &ForwardMark, state: &mut [u8]) -> Result<()> {
        read_compressed(&forward_path(dir, mark), &self.forward_header(mark), state)
    }

    /// Removes the forward checkpoints of `dir` other than `mark`'s, and
    /// what killed writes left unfinished. Called once every rank has
    /// written its own at `mark` (a rank stopped before that resumes from
    /// the older one, with every other rank), and when the ranks resume
    /// from `mark`: a newer one that only some ranks wrote no longer
    /// matches the seed lists, which are cut back to `mark`.
    pub fn remove_forward_except(&self, dir: &Path, mark: &ForwardMark) -> Result<()> {
        remove_checkpoints_except(dir, &["forward."], &forward_path(dir, mark))?;
        remove_unfinished(dir)
    }

    /// Removes the checkpoints of `dir` other than `state.<keep>` (the
    /// forward ones too), what killed writes left unfinished, and the seed
    /// lists of the thresholds above `keep`: a solve resumed from
    /// `state.<keep>` starts at threshold `keep` and never reads them.
    pub fn remove_others(&self, dir: &Path, keep: usize) -> Result<()> {
        remove_checkpoints_except(dir, &["state.", "forward."], &state_path(dir, keep))?;
        remove_unfinished(dir)?;
        for t in keep + 1..=self.seeds as usize {
            for win in [false, true] {
                crate::files::remove_if_present(&list_path(dir, t, win))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oware::workdir::{holds_checkpoints, scratch, wipe};

    #[test]
    fn checkpoints_round_trip_compressed_and_refuse_damage() {
        let dir = scratch("checkpoints");
        let cp = Checkpoint {
            rules: 1,
            seeds: 20,
            ranks: 1,
            rank: 0,
            start: 0,
            end: 100_000,
            lower: [7; 32],
        };
        let state: Vec<u8> = (0..100_000u32).map(|k| (k / 1000 % 7) as u8).collect();
        let lists: Vec<u64> = (0..40).map(|k| k * 1000 + 7).collect();
        cp.save(&dir, 5, &lists, &state).unwrap();
        assert_eq!(cp.saved(&dir).unwrap(), vec![5]);
        let len = std::fs::metadata(dir.join("state.5")).unwrap().len();
        assert!(len < 10_000, "{len} bytes for 100,000 states");
        let mut back = vec![0u8; state.len()];
        assert_eq!(cp.load(&dir, 5, &mut back).unwrap(), lists);
        assert_eq!(back, state);
        // A header damaged where it holds a list's length is refused.
        let path = dir.join("state.5");
        let whole = std::fs::read(&path).unwrap();
        let mut bytes = whole.clone();
        bytes[cp.identity(MAGIC).len() + 4 + 8 * 3] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(cp.saved(&dir).unwrap().is_empty());
        let err = cp.load(&dir, 5, &mut back).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        std::fs::write(&path, &whole).unwrap();
        // Under another name for the same threshold, it is not found:
        // `load` would read `state.5`.
        for name in ["state.05", "state.+5"] {
            std::fs::rename(&path, dir.join(name)).unwrap();
            assert!(cp.saved(&dir).unwrap().is_empty(), "{name}");
            std::fs::rename(dir.join(name), &path).unwrap();
        }
        // Another slice's checkpoint is not this one's.
        let other = Checkpoint { end: 99_999, ..cp };
        assert!(other.saved(&dir).unwrap().is_empty());
        // Nor one of the same slice over other lower levels.
        let over_others = Checkpoint {
            lower: [8; 32],
            ..cp
        };
        assert!(over_others.saved(&dir).unwrap().is_empty());
        // One that is there but cannot be read is an error, not absent (a
        // directory in its place stands for a read error here: root reads
        // files whatever their permissions).
        for name in ["state.4", "forward.1.3"] {
            std::fs::create_dir(dir.join(name)).unwrap();
            let err = match name {
                "state.4" => cp.saved(&dir).unwrap_err(),
                _ => cp.forward_saved(&dir).unwrap_err(),
            };
            assert!(matches!(err, Error::Io { .. }), "{err}");
            std::fs::remove_dir(dir.join(name)).unwrap();
        }
        // Damage past the header is found by zstd's checksum or framing.
        let path = dir.join("state.5");
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - 6;
        bytes[at] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let err = cp.load(&dir, 5, &mut back).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A checkpoint cut short inside its header (a threshold's or the
    /// forward pass's), or not there, is no checkpoint of this slice:
    /// passed over, or refused as damaged if asked for, never an error
    /// that would stop every rerun.
    #[test]
    fn checkpoints_cut_short_in_their_header_are_passed_over() {
        let dir = scratch("cut-headers");
        let cp = Checkpoint {
            rules: 0,
            seeds: 4,
            ranks: 1,
            rank: 0,
            start: 0,
            end: 50,
            lower: [5; 32],
        };
        let mark = ForwardMark {
            walk: Walk::Moves,
            done: 1,
            parts: 2,
            lists: vec![0; 8],
        };
        cp.save(&dir, 2, &[0; 8], &[1; 50]).unwrap();
        cp.save_forward(&dir, &mark, &[1; 50]).unwrap();
        assert_eq!(cp.saved(&dir).unwrap(), [2]);
        assert_eq!(cp.forward_saved(&dir).unwrap(), std::slice::from_ref(&mark));
        for path in [state_path(&dir, 2), forward_path(&dir, &mark)] {
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&path, &bytes[..20]).unwrap();
        }
        assert_eq!(cp.saved(&dir).unwrap(), Vec::<usize>::new());
        assert_eq!(cp.forward_saved(&dir).unwrap(), []);
        for t in [2, 3] {
            let err = cp.load(&dir, t, &mut [0; 50]).unwrap_err();
            assert!(matches!(err, Error::Corrupt { .. }), "{t}: {err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A forward checkpoint taken in the captures walk (walk 1) is found
    /// and read back as one taken in the moves walk is.
    #[test]
    fn a_forward_checkpoint_of_the_captures_walk_round_trips() {
        let dir = scratch("forward-captures");
        let cp = Checkpoint {
            rules: 1,
            seeds: 2,
            ranks: 1,
            rank: 0,
            start: 0,
            end: 10,
            lower: [3; 32],
        };
        let mark = ForwardMark {
            walk: Walk::Captures,
            done: 2,
            parts: 5,
            lists: vec![0, 19, 0, 0],
        };
        cp.save_forward(&dir, &mark, &[9; 10]).unwrap();
        assert!(dir.join("forward.1.2").exists());
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![mark.clone()]);
        let mut back = [0u8; 10];
        cp.load_forward(&dir, &mark, &mut back).unwrap();
        assert_eq!(back, [9; 10]);
        // The walks' names, which notices and build reports give.
        assert_eq!(
            (Walk::Captures.name(), Walk::Moves.name()),
            ("captures", "moves")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_forward_checkpoint_round_trips_and_goes_with_older_checkpoints() {
        let dir = scratch("forward");
        let cp = Checkpoint {
            rules: 0,
            seeds: 3,
            ranks: 2,
            rank: 1,
            start: 500,
            end: 1000,
            lower: [0; 32],
        };
        let mark = ForwardMark {
            walk: Walk::Moves,
            done: 7,
            parts: 9,
            lists: vec![0, 12, 40, 0, 1 << 40, 3],
        };
        let state: Vec<u8> = (0..500u32).map(|k| (k % 11) as u8).collect();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![]);
        cp.save_forward(&dir, &mark, &state).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![mark.clone()]);
        assert!(
            cp.saved(&dir).unwrap().is_empty(),
            "not a threshold's checkpoint"
        );
        let mut back = vec![0u8; state.len()];
        cp.load_forward(&dir, &mark, &mut back).unwrap();
        assert_eq!(back, state);
        // Another rank's, or another mark's, is not this one.
        assert_eq!(
            Checkpoint { rank: 0, ..cp }.forward_saved(&dir).unwrap(),
            vec![]
        );
        let other_lists = ForwardMark {
            lists: vec![0, 12, 40, 0, 1 << 40, 4],
            ..mark.clone()
        };
        let err = cp.load_forward(&dir, &other_lists, &mut back).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        // A header damaged where it holds a list's length is refused: the
        // lists would be cut back to it.
        let path = forward_path(&dir, &mark);
        let whole = std::fs::read(&path).unwrap();
        let mut bytes = whole.clone();
        let at = cp.identity(FORWARD_MAGIC).len() + 9 + 8 * 2;
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![]);
        std::fs::write(&path, &whole).unwrap();
        // A file renamed to another mark's name is not that mark's.
        let other = ForwardMark {
            done: 6,
            ..mark.clone()
        };
        std::fs::copy(forward_path(&dir, &mark), forward_path(&dir, &other)).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![mark.clone()]);
        std::fs::remove_file(forward_path(&dir, &other)).unwrap();
        assert!(mark.progress() > other.progress());
        assert!(
            ForwardMark {
                walk: Walk::Captures,
                done: 9,
                ..mark.clone()
            }
            .progress()
                < ForwardMark {
                    walk: Walk::Moves,
                    done: 0,
                    ..mark.clone()
                }
                .progress()
        );
        // A newer one is saved beside it; the older goes when asked, with
        // what a process killed while writing one left behind.
        let newer = ForwardMark {
            done: 8,
            ..mark.clone()
        };
        cp.save_forward(&dir, &newer, &state).unwrap();
        assert_eq!(
            cp.forward_saved(&dir).unwrap(),
            vec![mark.clone(), newer.clone()]
        );
        std::fs::write(dir.join("forward.2.9.tmp"), b"cut short").unwrap();
        // One whose header is damaged is no checkpoint of this slice, but
        // goes too: it would hold its room on disk until the level ends.
        let damaged = dir.join("forward.2.7");
        std::fs::write(&damaged, &bytes).unwrap();
        cp.remove_forward_except(&dir, &newer).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![newer.clone()]);
        assert!(!dir.join("forward.2.9.tmp").exists() && !damaged.exists());
        // Resumed from an older one, the newer ones go too.
        cp.save_forward(&dir, &mark, &state).unwrap();
        cp.remove_forward_except(&dir, &mark).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![mark.clone()]);
        cp.save_forward(&dir, &newer, &state).unwrap();
        // A threshold's checkpoint supersedes them, and takes with it what
        // a process killed while writing one left behind.
        std::fs::write(dir.join("state.7.tmp"), b"cut short").unwrap();
        std::fs::write(dir.join("state.9"), b"not a checkpoint of this slice").unwrap();
        std::fs::write(&damaged, &bytes).unwrap();
        cp.save(&dir, 3, &mark.lists, &state).unwrap();
        cp.remove_others(&dir, 3).unwrap();
        assert_eq!(cp.forward_saved(&dir).unwrap(), vec![]);
        assert!(!dir.join("state.7.tmp").exists() && !dir.join("state.9").exists());
        assert!(!damaged.exists());
        assert!(dir.join("state.3").exists());
        assert_eq!(cp.saved(&dir).unwrap(), vec![3]);
        // A wipe takes the checkpoints first, then everything.
        assert!(holds_checkpoints(&dir).unwrap());
        wipe(&dir).unwrap();
        assert!(!dir.exists());
        assert!(!holds_checkpoints(&dir).unwrap());
        wipe(&dir).unwrap();
    }
}
