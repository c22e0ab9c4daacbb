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
//!
//! A cycles file is used only if it can be all the cycles of its row
//! ([`entries`]): every line a cycle, walked again (period, seeds sown,
//! canonical state), no cycle twice, and as many cycles, periods and pairs
//! as the row says. Anything else is damage: an error, never an atlas.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::{Found, Row};
use crate::error::{Corruption, Error, Result};
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
    let Some(bytes) = crate::files::read_record_file(path, super::store::FILE_CAP)? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::corrupt(path, Corruption::CensusCycles("not UTF-8".into())))?;
    // Blank lines are skipped, as in the results file.
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                let why = format!("line {}: not a cycle ({e})", i + 1);
                Error::corrupt(path, Corruption::CensusCycles(why))
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
    /// Distinct states brought to start 0: the period divided by the passes
    /// through them that bring the side back unrotated (one pass turns it
    /// by some `r` pits, so `16 / gcd(r, 16)` passes).
    pub states: u64,
    /// (configuration, start) pairs on the cycle: `16 * states`.
    pub pairs: u64,
    /// Configurations with at least one start on the cycle.
    pub configurations: u64,
}

/// Walks the cycle of `f` once and counts what lies on it; why not if `f`
/// is not a cycle as the census keeps it: its side, lifting pit 0, loops
/// with period `f.period` laps sowing `f.sown` seeds, and the side is the
/// cycle's canonical state (the least of its states brought to start 0).
pub fn entry(f: &Found) -> std::result::Result<Entry, String> {
    let start = f.start()?;
    let no_loop = || format!("{start} from pit 0 does not loop with period {}", f.period);
    let mut states = HashSet::with_capacity(f.period.min(1 << 24) as usize);
    let (mut s, mut p, mut sown) = (start, 0usize, 0u64);
    for lap_no in 0..f.period {
        if lap_no > 0 && p == 0 && s == start {
            return Err(no_loop());
        }
        states.insert(s.rotated_to(p).0);
        let l = lap(s, p, Dir::Ccw);
        if l.ends() {
            return Err(no_loop());
        }
        (s, p, sown) = (l.side, l.last, sown + l.sown as u64);
    }
    if (s, p) != (start, 0) {
        return Err(no_loop());
    }
    if sown != f.sown {
        return Err(format!(
            "{start} sows {sown} seeds in a period, not {}",
            f.sown
        ));
    }
    let least = states
        .iter()
        .copied()
        .min_by_key(|s| s.swap_bytes())
        .expect("a period is at least one lap");
    if least != start.0 {
        return Err(format!(
            "{start} is not its cycle's canonical state ({} is)",
            Side(least)
        ));
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
    Ok(Entry {
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

/// The entries of the cycles `found` kept for `row`, sorted by period and
/// side; why not if they cannot be all of its cycles. Each must be a cycle
/// ([`entry`]) of `row.seeds` seeds, no two the same, as many as
/// `row.cycles`, with its shortest and longest periods, and their pairs
/// must add up to its `loop_pairs`. Cycles are disjoint, so distinct
/// cycles holding as many pairs as the row's loops are all of them (for a
/// row with nothing undecided).
pub fn entries(row: &Row, found: &[Found]) -> std::result::Result<Vec<Entry>, String> {
    let k = row.seeds;
    if found.len() as u64 != row.cycles {
        return Err(format!(
            "{} cycles, not the row's {}",
            found.len(),
            row.cycles
        ));
    }
    if let Some(f) = found
        .iter()
        .find(|f| f.side.iter().map(|&s| usize::from(s)).sum::<usize>() != k)
    {
        return Err(format!(
            "{} is not a side of {k} seeds",
            Side::from_pits(f.side)
        ));
    }
    let mut here = found
        .par_iter()
        .map(entry)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    here.sort_by_key(|e| (e.period, e.side));
    let mut sides: Vec<_> = here.iter().map(|e| e.side).collect();
    sides.sort_unstable();
    if let Some(w) = sides.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "the cycle of {} is listed twice",
            Side::from_pits(w[0])
        ));
    }
    let periods = || here.iter().map(|e| e.period);
    let period = periods().min().zip(periods().max());
    if period != row.period {
        return Err(format!(
            "periods {period:?}, not the row's {:?}",
            row.period
        ));
    }
    let pairs: u64 = here.iter().map(|e| e.pairs).sum();
    if pairs != row.loop_pairs {
        return Err(format!(
            "their pairs add up to {pairs}, not the row's loop_pairs {}",
            row.loop_pairs
        ));
    }
    Ok(here)
}
