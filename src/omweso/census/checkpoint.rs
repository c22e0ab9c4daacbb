//! Progress inside one census row, saved so that a killed run resumes
//! where it stopped instead of at the start of the row.
//!
//! The census walks its start-0 configurations in rank order, in chunks,
//! a batch of chunks at a time. Between batches every chunk below
//! `chunks_done` is finished and nothing else has started, so the state is
//! exactly: the partial sums (`longest_finite`, `undecided`) and the cycles
//! found so far. A cycle is saved as one state of it (its canonical
//! representative, see [`super::Found`]) and its period; on resume each is
//! followed from that state until it returns to it (rotated), which checks
//! the saved period and seeds sown, and then walked once more to remember
//! its states (a cycle costs a few times its period in laps, in all a
//! few times `loop_pairs / 16`: seconds even at k = 32). The resumed row
//! is therefore identical to an uninterrupted one.
//!
//! The file is `omweso-census.kK.bB.checkpoint` beside the results file,
//! written to a temporary name and renamed, with a checksum; it is removed
//! once the row is saved. A checkpoint that does not match its row (seeds,
//! budget, chunk size, checksum), or claims more than a walk of the row
//! can have reached (more chunks than the row has, more configurations
//! undecided than walked, a finite move longer than the budget), is
//! reported and ignored. The checksum finds damage, not edits: a checkpoint
//! edited by hand with its checksum made to match can still claim chunks
//! it never walked.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Found;
use crate::error::Result;

/// Saved progress of one row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Seeds on the side.
    pub seeds: usize,
    /// The lap budget.
    pub budget: u64,
    /// Start-0 configurations per chunk.
    pub chunk: u64,
    /// Chunks finished: every configuration of rank below
    /// `chunks_done * chunk`.
    pub chunks_done: u64,
    /// The longest finite move so far.
    pub longest_finite: u64,
    /// Start-0 configurations undecided so far.
    pub undecided: u64,
    /// Cycles found so far.
    pub cycles: Vec<Found>,
}

impl Checkpoint {
    /// Start-0 configurations walked: those of the chunks done.
    pub fn walked(&self) -> u64 {
        (self.chunks_done * self.chunk).min(super::walked(self.seeds))
    }
}

#[derive(Serialize, Deserialize)]
struct Saved {
    #[serde(flatten)]
    checkpoint: Checkpoint,
    checksum: String,
}

/// Where the checkpoint of row (`seeds`, `budget`) lives in `dir`.
pub fn path(dir: &Path, seeds: usize, budget: u64) -> PathBuf {
    dir.join(format!("omweso-census.k{seeds}.b{budget}.checkpoint"))
}

fn checksum(c: &Checkpoint) -> String {
    super::store::digest(&serde_json::to_vec(c).expect("checkpoints serialize"))
}

/// Writes `c` to `path` atomically.
pub fn save(path: &Path, c: &Checkpoint) -> Result<()> {
    let saved = Saved {
        checkpoint: c.clone(),
        checksum: checksum(c),
    };
    let text = serde_json::to_vec(&saved).expect("checkpoints serialize");
    crate::files::write_atomically(path, |f| std::io::Write::write_all(f, &text))
}

/// The checkpoint at `path` as read: `Ok(None)` if there is none,
/// `Err(why)` if there is one that cannot be used (damaged, or of another
/// row).
pub type Loaded = std::result::Result<Option<Checkpoint>, String>;

/// Reads the checkpoint at `path` for row (`seeds`, `budget`) walked in
/// chunks of `chunk`. A file that is there but cannot be read is an
/// error, not a checkpoint to start afresh from: it may be sound.
pub fn load(path: &Path, seeds: usize, budget: u64, chunk: u64) -> Result<Loaded> {
    Ok(
        match crate::files::read_record_file(path, super::store::FILE_CAP)? {
            Some(bytes) => parse(&bytes, seeds, budget, chunk),
            None => Ok(None),
        },
    )
}

fn parse(bytes: &[u8], seeds: usize, budget: u64, chunk: u64) -> Loaded {
    let saved: Saved =
        serde_json::from_slice(bytes).map_err(|e| format!("not a checkpoint ({e})"))?;
    let c = saved.checkpoint;
    if saved.checksum != checksum(&c) {
        return Err("checksum does not match: edited or damaged".into());
    }
    if (c.seeds, c.budget, c.chunk) != (seeds, budget, chunk) {
        return Err(format!(
            "made for seeds {}, budget {}, chunk {} (this run: {seeds}, {budget}, {chunk})",
            c.seeds, c.budget, c.chunk
        ));
    }
    // What a walk of the row can have reached: a checkpoint claiming more
    // (its checksum made to match) would give a wrong row.
    let chunks = super::walked(seeds).div_ceil(chunk);
    if c.chunks_done > chunks {
        return Err(format!(
            "{} chunks done, of the row's {chunks}",
            c.chunks_done
        ));
    }
    if c.undecided > c.walked() {
        return Err(format!(
            "{} configurations undecided, of the {} walked",
            c.undecided,
            c.walked()
        ));
    }
    if c.longest_finite > budget {
        return Err(format!(
            "longest finite move {} laps, beyond the budget {budget}",
            c.longest_finite
        ));
    }
    Ok(Some(c))
}

/// Removes the checkpoint at `path`, if any.
pub fn remove(path: &Path) -> Result<()> {
    crate::files::remove_if_present(path)
}
