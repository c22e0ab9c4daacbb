//! The values of the levels below the one being solved, as the solvers
//! read them.
//!
//! A level's captures lead into lower levels, read once per capture. Small
//! builds and tests hold those levels as byte slices. The largest builds
//! cannot: levels 0..34 are 33 GB as one byte per position, so the builder
//! reads some of them from their compressed tables through a block cache
//! (the `lower` module's `Lower`). Both answer through [`LowerLevels`]; the
//! forward pass reads them in mover-major order
//! ([`crate::oware::Encoder::mover_tiles`]) so that either kind of store
//! sees its blocks one after another.

use crate::error::Result;

/// Levels `0..levels()` of one rule set, by index.
pub trait LowerLevels: Sync {
    /// How many levels there are (`0..levels()`).
    fn levels(&self) -> usize;

    /// The value of position `index` of level `level`. An error is a store
    /// that failed (a damaged block, a read error), never a wrong value.
    fn value(&self, level: usize, index: u64) -> Result<i8>;

    /// Asks for the value ahead of a [`LowerLevels::value`] call, so that
    /// memory misses overlap; a hint only.
    #[inline]
    fn prefetch(&self, _level: usize, _index: u64) {}
}

/// Levels held in memory (or mapped), one value per byte.
impl<S: AsRef<[i8]> + Sync> LowerLevels for [S] {
    fn levels(&self) -> usize {
        self.len()
    }

    #[inline]
    fn value(&self, level: usize, index: u64) -> Result<i8> {
        Ok(self[level].as_ref()[index as usize])
    }

    #[inline]
    fn prefetch(&self, level: usize, index: u64) {
        crate::memory::prefetch(&self[level].as_ref()[index as usize]);
    }
}

/// As for a slice of levels.
impl<S: AsRef<[i8]> + Sync> LowerLevels for Vec<S> {
    fn levels(&self) -> usize {
        self.len()
    }

    #[inline]
    fn value(&self, level: usize, index: u64) -> Result<i8> {
        self.as_slice().value(level, index)
    }

    #[inline]
    fn prefetch(&self, level: usize, index: u64) {
        self.as_slice().prefetch(level, index)
    }
}
