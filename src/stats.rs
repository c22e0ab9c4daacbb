//! Per-level statistics of a table: how values are distributed.

use crate::error::Result;
use crate::table::Table;

/// Summary of one level's values.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelStats {
    /// Seeds on the board.
    pub seeds: usize,
    /// Positions in the level.
    pub positions: u64,
    /// `histogram[v + seeds]` positions have value `v`, for `v` in `-seeds..=seeds`.
    pub histogram: Vec<u64>,
}

impl LevelStats {
    /// Counts the values of `table`, a level of `seeds` seeds, block by block.
    pub fn of_table(seeds: usize, table: &Table) -> Result<LevelStats> {
        let mut s = LevelStats {
            seeds,
            positions: 0,
            histogram: vec![0; 2 * seeds + 1],
        };
        table.for_each_block(|vals| {
            s.add(vals);
            Ok(())
        })?;
        Ok(s)
    }

    /// Counts level `seeds` of `source`: tables block by block, VU files in place.
    pub fn of_source(source: &crate::source::Source, seeds: usize) -> Result<LevelStats> {
        match source {
            crate::source::Source::Tables(db, rules) => {
                LevelStats::of_table(seeds, &db.open(*rules, seeds)?)
            }
            crate::source::Source::Vu(vu) => Ok(LevelStats::of_values(
                seeds,
                crate::table::as_values(&vu.open(seeds)?),
            )),
        }
    }

    /// Counts `values` (as stored, index order) of a level of `seeds` seeds.
    pub fn of_values(seeds: usize, values: &[i8]) -> LevelStats {
        let mut s = LevelStats {
            seeds,
            positions: 0,
            histogram: vec![0; 2 * seeds + 1],
        };
        s.add(values);
        s
    }

    fn add(&mut self, values: &[i8]) {
        let mut h = [0u64; 256];
        for &v in values {
            h[v as u8 as usize] += 1;
        }
        for v in -(self.seeds as i32)..=self.seeds as i32 {
            self.histogram[(v + self.seeds as i32) as usize] += h[v as i8 as u8 as usize];
        }
        self.positions += values.len() as u64;
    }

    /// Positions with value `v`.
    pub fn count(&self, v: i32) -> u64 {
        let i = v + self.seeds as i32;
        if i < 0 || i as usize >= self.histogram.len() {
            0
        } else {
            self.histogram[i as usize]
        }
    }

    /// Mean value.
    pub fn mean(&self) -> f64 {
        let sum: i64 = self
            .histogram
            .iter()
            .enumerate()
            .map(|(i, &c)| (i as i64 - self.seeds as i64) * c as i64)
            .sum();
        if self.positions == 0 {
            0.0
        } else {
            sum as f64 / self.positions as f64
        }
    }
}
