//! [`Exchange`] over MPI (the `mpi` feature): one rank per process, started
//! by `mpirun`. Only the main thread of each rank calls MPI; the solver's
//! worker threads never do.

use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::{Exchange, Outbox};

/// The ranks of the MPI job this process belongs to.
pub struct Mpi {
    world: SimpleCommunicator,
    // Finalizes MPI when dropped, so it must outlive `world`'s use.
    _universe: Universe,
}

impl Mpi {
    /// Initializes MPI; `None` if it was already initialized in this process.
    pub fn init() -> Option<Mpi> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
        Some(Mpi {
            world: universe.world(),
            _universe: universe,
        })
    }

    /// Stops every rank of the job with exit code `code`.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    fn reduce(&self, x: u64, op: SystemOperation) -> u64 {
        let mut out = 0u64;
        self.world.all_reduce_into(&x, &mut out, op);
        out
    }
}

impl Exchange for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    /// One `MPI_Alltoall` of the counts and one `MPI_Alltoallv` of the data,
    /// sent from the outbox as it is; more passes, each gathering its share
    /// of the batches, only if a batch outgrows MPI's `int` counts.
    fn all_to_all(&self, outbox: &Outbox) -> Vec<u64> {
        let ranks = self.ranks();
        debug_assert_eq!(outbox.ranks(), ranks);
        // Per destination and pass, so that the received total (at most
        // `ranks * cap`) still fits the `int` displacements.
        let cap = i32::MAX as usize / ranks;
        let longest = (0..ranks).map(|r| outbox.to(r).len()).max().unwrap_or(0);
        let passes = self.max(longest.div_ceil(cap) as u64) as usize;
        let mut received = Vec::new();
        for pass in 0..passes {
            let pieces: Vec<&[u64]> = (0..ranks)
                .map(|r| {
                    let o = outbox.to(r);
                    let start = (pass * cap).min(o.len());
                    &o[start..(start + cap).min(o.len())]
                })
                .collect();
            let send_counts: Vec<Count> = pieces.iter().map(|p| p.len() as Count).collect();
            let mut recv_counts: Vec<Count> = vec![0; ranks];
            self.world
                .all_to_all_into(&send_counts[..], &mut recv_counts[..]);
            let gathered;
            let send: &[u64] = if passes == 1 {
                outbox.messages()
            } else {
                gathered = pieces.concat();
                &gathered
            };
            let send_displs = displacements(&send_counts);
            let recv_displs = displacements(&recv_counts);
            let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
            let old = received.len();
            received.resize(old + total, 0u64);
            let send = Partition::new(send, &send_counts[..], &send_displs[..]);
            let mut recv =
                PartitionMut::new(&mut received[old..], &recv_counts[..], &recv_displs[..]);
            self.world.all_to_all_varcount_into(&send, &mut recv);
        }
        received
    }

    fn sum(&self, x: u64) -> u64 {
        self.reduce(x, SystemOperation::sum())
    }

    fn max(&self, x: u64) -> u64 {
        self.reduce(x, SystemOperation::max())
    }

    fn broadcast(&self, x: u64) -> u64 {
        let mut x = x;
        self.world.process_at_rank(0).broadcast_into(&mut x);
        x
    }

    fn barrier(&self) {
        self.world.barrier();
    }
}

/// Offsets of consecutive blocks of `counts` elements.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}
