//! What this installation can confirm about the starting positions: every
//! pit holding 1, 2, 3 or 4 seeds (the 12-, 24-, 36- and 48-seed games).
//! Romein & Bal's result is that the 48-seed game, Awari itself, is a draw.

use crate::build::Needs;
use crate::error::Result;
use crate::oware::{Board, Rules, level_size, levels_needed};
use crate::query::{analyze, levels_read};
use crate::source::Values;

/// One starting position.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Start {
    /// Seeds in every pit.
    pub per_pit: u8,
    /// Seeds on the board.
    pub seeds: usize,
    /// Its value, if the levels it needs are present.
    pub value: Option<i8>,
    /// Levels read to value it ([`levels_read`]: its children's).
    pub levels_used: Vec<usize>,
    /// Whether every level it needs was verified here.
    pub verified: bool,
    /// Levels it needs that are not present.
    pub missing: Vec<usize>,
    /// Positions in the missing levels.
    pub missing_positions: u64,
    /// What building the missing levels takes (`None` when none is).
    pub needs: Option<Needs>,
}

/// The four starting positions under `rules`, valued from `values` where
/// `present` holds every level they need; `verified(levels)` tells whether
/// all those levels passed `verify`.
pub fn starts(
    rules: Rules,
    values: &dyn Values,
    present: &[usize],
    verified: impl Fn(&[usize]) -> Result<bool>,
) -> Result<Vec<Start>> {
    let mut out = Vec::new();
    for per_pit in 1..=4u8 {
        let board = Board([per_pit; 12]);
        let seeds = board.seeds();
        // Level seeds - 1 is never reached (the published database has no
        // scores.47).
        let needed = levels_needed(seeds);
        let missing: Vec<usize> = needed
            .iter()
            .copied()
            .filter(|n| !present.contains(n))
            .collect();
        let missing_positions = missing.iter().map(|&n| level_size(n)).sum();
        let levels_used = levels_read(rules, &board);
        let value = if missing.is_empty() {
            Some(analyze(rules, values, &board)?.value)
        } else {
            None
        };
        let needs = (!missing.is_empty()).then(|| Needs::of(&missing));
        let verified = value.is_some() && verified(&needed)?;
        out.push(Start {
            per_pit,
            seeds,
            value,
            levels_used,
            verified,
            missing,
            needs,
            missing_positions,
        });
    }
    Ok(out)
}
