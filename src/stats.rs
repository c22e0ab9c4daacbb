//! Per-level statistics: how a level's values are distributed.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::oware::game_level;
use crate::source::Source;

/// Summary of one level's values.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelStats {
    /// Seeds on the board.
    pub seeds: usize,
    /// Positions in the level.
    pub positions: u64,
    /// `histogram[v + seeds]` positions have value `v`, for `v` in `-seeds..=seeds`.
    pub histogram: Vec<u64>,
    /// sha256 of the values in index order (one signed byte each, the VU
    /// layout): the content sha256 that `db/CHECKSUMS` lists, whatever the
    /// level was read from.
    pub content_sha256: [u8; 32],
}

impl LevelStats {
    /// Counts level `seeds` of `source`: tables block by block (each block
    /// checked), VU files in place.
    pub fn of_source(source: &Source, seeds: usize) -> Result<LevelStats> {
        game_level(seeds as u64)?; // before the histogram is sized by it
        // A table's header holds it, and the walk below checks it against
        // the values; VU files carry none, so they are hashed here.
        let stored = source.content_sha256(seeds)?;
        let mut s = LevelStats {
            seeds,
            positions: 0,
            histogram: vec![0; 2 * seeds + 1],
            content_sha256: [0; 32],
        };
        let mut hash = stored.is_none().then(Sha256::new);
        source.for_each_chunk(seeds, |values| {
            if let Some(h) = &mut hash {
                h.update(crate::table::as_bytes(values));
            }
            s.add(values)
        })?;
        s.content_sha256 = match hash {
            Some(h) => h.finalize().into(),
            None => stored.unwrap_or_default(),
        };
        Ok(s)
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
        i64::try_from(self.seeds)
            .ok()
            .and_then(|seeds| seeds.checked_add(i64::from(v)))
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.histogram.get(i))
            .map_or(0, |&n| n)
    }

    /// Positions won, drawn and lost by the player to move.
    pub fn outcomes(&self) -> (u64, u64, u64) {
        let n = self.seeds as i32;
        let sum = |r: std::ops::RangeInclusive<i32>| r.map(|v| self.count(v)).sum();
        (sum(1..=n), self.count(0), sum(-n..=-1))
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

/// `{seeds, positions, mean, wins, draws, losses, histogram,
/// content_sha256}`, where `histogram[i]` counts the positions of value
/// `i - seeds` and `content_sha256` is hex.
impl Serialize for LevelStats {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let (wins, draws, losses) = self.outcomes();
        let mut st = s.serialize_struct("LevelStats", 8)?;
        st.serialize_field("seeds", &self.seeds)?;
        st.serialize_field("positions", &self.positions)?;
        st.serialize_field("mean", &self.mean())?;
        st.serialize_field("wins", &wins)?;
        st.serialize_field("draws", &draws)?;
        st.serialize_field("losses", &losses)?;
        st.serialize_field("histogram", &self.histogram)?;
        st.serialize_field("content_sha256", &crate::table::hex(&self.content_sha256))?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::LevelStats;

    /// A value far outside the level counts no position (it overflowed,
    /// a panic where overflow checks are on, as in a debug build).
    #[test]
    fn values_far_outside_the_level_count_none() {
        let stats = LevelStats {
            seeds: 1,
            positions: 12,
            histogram: vec![1, 2, 9],
            content_sha256: [0; 32],
        };
        assert_eq!([-1, 0, 1].map(|v| stats.count(v)), [1, 2, 9]);
        assert_eq!([-2, 2, i32::MAX, i32::MIN].map(|v| stats.count(v)), [0; 4]);
        let huge = LevelStats {
            seeds: usize::MAX,
            ..stats
        };
        assert_eq!(huge.count(i32::MAX), 0);
    }
}
