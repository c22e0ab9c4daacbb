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

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::path::PathBuf;

    use super::*;
    use crate::oware::moves;

    /// Values every stored board 0: each start is then worth the most
    /// seeds one of its moves takes.
    struct Even;

    impl Values for Even {
        fn value(&self, _: &Board) -> Result<i8> {
            Ok(0)
        }
        fn origin(&self, _: &Board) -> PathBuf {
            PathBuf::from("even")
        }
    }

    #[test]
    fn a_start_is_valued_and_vouched_for_only_with_every_level_it_needs() {
        let every: Vec<usize> = (0..=48).collect();
        for verified in [false, true] {
            let asked = RefCell::new(Vec::new());
            let found = starts(Rules::Awari, &Even, &every, |levels| {
                asked.borrow_mut().push(levels.to_vec());
                Ok(verified)
            })
            .unwrap();
            assert_eq!(found.len(), 4);
            for (s, per_pit) in found.iter().zip(1..=4u8) {
                let board = Board([per_pit; 12]);
                let most = moves(Rules::Awari, &board)
                    .as_slice()
                    .iter()
                    .map(|m| m.captured as i8)
                    .max();
                assert_eq!(
                    (s.per_pit, s.seeds, s.value, s.verified),
                    (per_pit, 12 * per_pit as usize, most, verified)
                );
                assert_eq!(s.levels_used, levels_read(Rules::Awari, &board));
                assert!(s.missing.is_empty() && s.missing_positions == 0);
                assert_eq!(s.needs, None);
            }
            // Each start's levels were asked about: all it needs.
            let needed: Vec<Vec<usize>> = [12, 24, 36, 48].map(levels_needed).into();
            assert_eq!(asked.into_inner(), needed);
        }
        // Without level 12, the 12-seed start is not valued (nor vouched
        // for), and each other start only if it does not need level 12.
        let without_12: Vec<usize> = (0..=48).filter(|&n| n != 12).collect();
        let found = starts(Rules::Awari, &Even, &without_12, |_| Ok(true)).unwrap();
        let s = &found[0];
        assert_eq!(
            (s.value, s.verified, s.missing.clone(), s.missing_positions),
            (None, false, vec![12], level_size(12))
        );
        assert_eq!(s.needs, Some(Needs::of(&[12])));
        for s in &found[1..] {
            let needs_12 = levels_needed(s.seeds).contains(&12);
            assert_eq!(
                (s.value.is_some(), s.verified, s.missing.len()),
                (!needs_12, !needs_12, usize::from(needs_12)),
                "{} seeds",
                s.seeds
            );
        }
    }
}
