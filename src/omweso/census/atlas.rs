//! The cycle atlas: every relay cycle the census found, up to rotation.
//!
//! Each finished row leaves the cycles it found in
//! `omweso-cycles.kK.bB.jsonl` beside the results file, one [`Found`] a
//! line (canonical state, period in laps and in seeds), sorted by period
//! and state. An [`Entry`] adds what lies on the cycle, by walking it once:
//! its start pairs (16 per state brought to start 0, one per rotation of
//! the side) and its configurations (sides with at least one start on it,
//! each counted once by the smallest-start rule of the module documentation
//! of [`super`], applied to the cycle's own states).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Found;
use crate::error::{Error, Result};
use crate::omweso::relay::lap;
use crate::omweso::side::{Dir, PITS, Side};

/// Where the cycles of row (`seeds`, `budget`) are kept in `dir`.
pub fn path(dir: &Path, seeds: usize, budget: u64) -> PathBuf {
    dir.join(format!("omweso-cycles.k{seeds}.b{budget}.jsonl"))
}

/// Writes `found`, sorted, to `path` atomically.
pub fn save(path: &Path, found: &[Found]) -> Result<()> {
    let mut found = found.to_vec();
    found.sort_by_key(|f| (f.period, f.side));
    let mut text = String::new();
    for f in &found {
        text += &serde_json::to_string(f).expect("cycles serialize");
        text.push('\n');
    }
    crate::files::write_atomically(path, |f| std::io::Write::write_all(f, text.as_bytes()))
}

/// Writes the atlas `entries` to `path` atomically, one JSON line each.
pub fn write(path: &Path, entries: &[Entry]) -> Result<()> {
    let mut text = String::new();
    for e in entries {
        text += &serde_json::to_string(e).expect("atlas entries serialize");
        text.push('\n');
    }
    crate::files::write_output(path, |f| std::io::Write::write_all(f, text.as_bytes()))
}

/// Reads the cycles at `path`: `Ok(None)` if there is no such file.
pub fn load(path: &Path) -> Result<Option<Vec<Found>>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                Error::Invalid(format!(
                    "{}: line {}: not a cycle ({e}): damaged (remove the file to compute it again)",
                    path.display(),
                    i + 1
                ))
            })
        })
        .collect::<Result<Vec<Found>>>()
        .map(Some)
}

/// One cycle of the atlas.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Seeds on the side.
    pub seeds: usize,
    /// The canonical state: this side, lifting pit `pit`, is on the cycle.
    pub side: [u8; PITS],
    /// Always 0 (the canonical state is brought to start 0).
    pub pit: usize,
    /// Laps in one period.
    pub period: u64,
    /// Seeds sown in one period.
    pub sown: u64,
    /// Distinct states brought to start 0 (the period divided by the
    /// cycle's rotational symmetry).
    pub states: u64,
    /// (configuration, start) pairs on the cycle: `16 * states`.
    pub pairs: u64,
    /// Configurations with at least one start on the cycle.
    pub configurations: u64,
}

/// Walks the cycle of `f` once and counts what lies on it. `None` if `f`
/// does not loop from pit 0 with its period.
pub fn entry(f: &Found) -> Option<Entry> {
    let start = Side::from_pits(f.side);
    let mut states = HashSet::with_capacity(f.period as usize);
    let (mut s, mut p) = (start, 0usize);
    for lap_no in 0..f.period {
        if lap_no > 0 && p == 0 && s == start {
            return None;
        }
        states.insert(s.rotated_to(p).0);
        let l = lap(s, p, Dir::Ccw);
        if l.ends() {
            return None;
        }
        (s, p) = (l.side, l.last);
    }
    if (s, p) != (start, 0) {
        return None;
    }
    let configurations = states
        .iter()
        .map(|&x| {
            let side = Side(x);
            let max_d = (1..PITS)
                .filter(|&d| states.contains(&side.rotated_to(d).0))
                .max()
                .unwrap_or(0);
            (PITS - max_d) as u64
        })
        .sum();
    Some(Entry {
        seeds: start.seeds(),
        side: f.side,
        pit: 0,
        period: f.period,
        sown: f.sown,
        states: states.len() as u64,
        pairs: PITS as u64 * states.len() as u64,
        configurations,
    })
}
