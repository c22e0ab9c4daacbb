//! Communication between the processes (ranks) that build one level together.
//!
//! A level's index range is split into one contiguous slice per rank
//! ([`split`]). The solver needs only a handful of collective operations,
//! always called by every rank in the same order, and always carrying whole
//! rounds of work at once (never one message per position):
//!
//! * [`Exchange::all_to_all`]: each rank hands over one batch of predecessor
//!   updates per other rank, all in one [`Outbox`], and receives everything
//!   addressed to it (message combining, as Romein & Bal did);
//! * [`Exchange::sum`], [`Exchange::max`], [`Exchange::broadcast`]: the small
//!   agreements ("anything left this round?", "is this level built?").
//!
//! [`Alone`] is the single process. With the `mpi` feature, `mpi::Mpi`
//! runs the same solver across the ranks of an MPI job.

#[cfg(feature = "mpi")]
pub mod mpi;

use std::ops::Range;

/// The collective operations of a group of ranks. Every rank calls every
/// operation, in the same order.
pub trait Exchange {
    /// This process's rank, `0..ranks()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn ranks(&self) -> usize;
    /// Sends [`outbox.to(r)`](Outbox::to) to rank `r` (nothing to this
    /// rank itself) and returns everything the other ranks sent to this one.
    fn all_to_all(&self, outbox: &Outbox) -> Vec<u64>;
    /// The sum of `x` over all ranks.
    fn sum(&self, x: u64) -> u64;
    /// The maximum of `x` over all ranks.
    fn max(&self, x: u64) -> u64;
    /// Rank 0's `x`, on every rank.
    fn broadcast(&self, x: u64) -> u64;
    /// Returns once every rank has called it.
    fn barrier(&self);
}

/// One process holding the whole level: every operation is trivial.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alone;

impl Exchange for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn all_to_all(&self, outbox: &Outbox) -> Vec<u64> {
        debug_assert!(outbox.is_empty());
        Vec::new()
    }
    fn sum(&self, x: u64) -> u64 {
        x
    }
    fn max(&self, x: u64) -> u64 {
        x
    }
    fn broadcast(&self, x: u64) -> u64 {
        x
    }
    fn barrier(&self) {}
}

/// One round's messages for every rank, in one buffer, rank by rank: what
/// an MPI all-to-all sends as it is, without gathering them again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbox {
    messages: Vec<u64>,
    /// Where the messages of each rank end in `messages`.
    ends: Vec<usize>,
}

impl Outbox {
    /// No messages, for `ranks` ranks.
    pub fn empty(ranks: usize) -> Outbox {
        Outbox {
            messages: Vec::new(),
            ends: vec![0; ranks],
        }
    }

    /// The batches of `parts` (one batch per rank each, `ranks` of them;
    /// the workers of a round fill one part each), rank by rank, each
    /// message copied once.
    ///
    /// ```
    /// use mancaladb::exchange::Outbox;
    /// let o = Outbox::gather(&[vec![vec![], vec![7], vec![1, 2]], vec![vec![], vec![8], vec![]]], 3);
    /// assert_eq!((o.to(0), o.to(1), o.to(2)), (&[][..], &[7, 8][..], &[1, 2][..]));
    /// assert_eq!(o.messages(), &[7, 8, 1, 2]);
    /// ```
    pub fn gather(parts: &[Vec<Vec<u64>>], ranks: usize) -> Outbox {
        let total = parts.iter().flatten().map(Vec::len).sum();
        let mut messages = Vec::with_capacity(total);
        let mut ends = Vec::with_capacity(ranks);
        for r in 0..ranks {
            for part in parts {
                messages.extend_from_slice(&part[r]);
            }
            ends.push(messages.len());
        }
        Outbox { messages, ends }
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.ends.len()
    }

    /// The messages for rank `r` (`r < ranks()`).
    pub fn to(&self, r: usize) -> &[u64] {
        let start = if r == 0 { 0 } else { self.ends[r - 1] };
        &self.messages[start..self.ends[r]]
    }

    /// Every message, rank by rank.
    pub fn messages(&self) -> &[u64] {
        &self.messages
    }

    /// Whether there is no message at all.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

/// The newest checkpoint every rank holds, the same answer on every rank:
/// `held` numbers this rank's checkpoints by progress (larger is further,
/// every number above 0). Ranks write one checkpoint each and remove their
/// older ones only after a barrier that follows every rank's writing, so
/// whenever they stop, each holds the newest one that all of them wrote:
/// the least of the ranks' newest. `None` if a rank lacks it (or holds
/// none).
pub fn newest_held_by_all(held: &[u64], ex: &dyn Exchange) -> Option<u64> {
    let newest = held.iter().copied().max().unwrap_or(0);
    let least = u64::MAX - ex.max(u64::MAX - newest);
    let holds = least > 0 && held.contains(&least);
    (ex.sum(u64::from(!holds)) == 0).then_some(least)
}

/// How many of the ranks of `ex` run on this machine, this one included:
/// those with this machine's `machine_id`.
/// Every rank calls it (one all-to-all of a number from each rank to each
/// other). 1 where the machine cannot be told.
pub fn ranks_on_this_machine(ex: &dyn Exchange) -> usize {
    let ranks = ex.ranks();
    if ranks == 1 {
        return 1;
    }
    // 0 for a machine not told; a known one has its lowest bit set.
    let id = crate::memory::machine_id().map_or(0, |id| id | 1);
    let to_each: Vec<Vec<u64>> = (0..ranks)
        .map(|r| if r == ex.rank() { vec![] } else { vec![id] })
        .collect();
    let ids = ex.all_to_all(&Outbox::gather(&[to_each], ranks));
    match id {
        0 => 1,
        id => 1 + ids.iter().filter(|&&other| other == id).count(),
    }
}

/// Slice boundaries of `size` indices split as evenly as possible among
/// `ranks`: rank `r` owns `bounds[r]..bounds[r + 1]`.
///
/// ```
/// use mancaladb::exchange::split;
/// assert_eq!(split(10, 3), vec![0, 3, 6, 10]);
/// assert_eq!(split(2, 4), vec![0, 0, 1, 1, 2]);
/// ```
pub fn split(size: u64, ranks: usize) -> Vec<u64> {
    (0..=ranks as u128)
        .map(|r| (size as u128 * r / ranks as u128) as u64)
        .collect()
}

/// The most messages a rank sends to one other rank in one pass of an MPI
/// all-to-all: `pass` (`MANCALADB_MPI_PASS`) when it is set, and never so
/// many that MPI's `int` counts and displacements overflow, as a rank
/// receives up to `ranks` times this in one pass, into one buffer.
pub fn pass_cap(pass: Option<usize>, ranks: usize) -> usize {
    pass.unwrap_or(usize::MAX).min(i32::MAX as usize / ranks)
}

/// The owners of the indices of one level.
#[derive(Clone, Debug)]
pub struct Owners {
    bounds: Vec<u64>,
}

impl Owners {
    /// A level of `size` positions split among `ranks`.
    pub fn new(size: u64, ranks: usize) -> Owners {
        Owners {
            bounds: split(size, ranks),
        }
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The slice of rank `r`.
    pub fn range(&self, r: usize) -> Range<u64> {
        self.bounds[r]..self.bounds[r + 1]
    }

    /// The rank owning `index`.
    #[inline]
    pub fn owner(&self, index: u64) -> usize {
        self.bounds.partition_point(|&b| b <= index) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_level_and_owners_match() {
        for size in [0u64, 1, 5, 97, 1000] {
            for ranks in 1..=5 {
                let o = Owners::new(size, ranks);
                assert_eq!(o.ranks(), ranks);
                let mut next = 0;
                for r in 0..ranks {
                    let range = o.range(r);
                    assert_eq!(range.start, next);
                    next = range.end;
                    for i in range {
                        assert_eq!(o.owner(i), r, "size {size} ranks {ranks} index {i}");
                    }
                }
                assert_eq!(next, size);
            }
        }
    }

    /// A pass holds what was asked for, up to the most that `ranks` times
    /// it fits MPI's `int` (the most, when nothing was asked for).
    #[test]
    fn a_pass_fits_mpis_counts_from_every_rank() {
        let most = i32::MAX as usize;
        for ranks in [1, 2, 3, 4, 7, 64, 1000] {
            let cap = pass_cap(None, ranks);
            assert!(
                cap * ranks <= most && (cap + 1) * ranks > most,
                "{ranks}: {cap}"
            );
            assert_eq!(pass_cap(Some(5000), ranks), 5000);
            assert_eq!(pass_cap(Some(usize::MAX), ranks), cap);
            assert_eq!(pass_cap(Some(cap + 1), ranks), cap);
        }
    }

    /// An outbox holds one batch a rank, rank by rank and within a rank in
    /// the order of the workers' parts: what `Mpi::all_to_all` sends as it
    /// is (one count a rank, then every message).
    #[test]
    fn an_outbox_holds_each_ranks_batch_in_turn() {
        let empty = Outbox::empty(4);
        assert_eq!(empty.ranks(), 4);
        assert!(empty.is_empty());
        assert!((0..4).all(|r| empty.to(r).is_empty()));
        let parts = [
            vec![vec![5], vec![], vec![1, 2]],
            vec![vec![6], vec![], vec![3]],
        ];
        let o = Outbox::gather(&parts, 3);
        assert_eq!(o.ranks(), 3);
        assert!(!o.is_empty());
        assert_eq!(o.messages(), [5, 6, 1, 2, 3]);
        assert_eq!(
            (o.to(0), o.to(1), o.to(2)),
            (&[5, 6][..], &[][..], &[1, 2, 3][..])
        );
    }
}
