//! [`Exchange`] over MPI (the `mpi` feature): one rank per process, started
//! by `mpirun`. Only the main thread of each rank exchanges; the solver's
//! worker threads never do. A panic stops the whole job with `MPI_Abort`
//! ([`Mpi::init`]): from the thread that panicked where MPI allows calls
//! from any thread (`MPI_THREAD_MULTIPLE`, which it is asked for), else
//! from the main thread, which rayon hands every worker's panic to
//! ([`Mpi::stop_on_panic`]).

use std::sync::atomic::{AtomicBool, Ordering};

use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::{Exchange, Outbox};

/// How far MPI lets threads call it ([`Mpi::init_asking`]).
pub use mpi::Threading;

/// The ranks of the MPI job this process belongs to.
pub struct Mpi {
    world: SimpleCommunicator,
    say: fn(usize, usize),
    /// The most messages one pass of [`Exchange::all_to_all`] carries from
    /// this rank to each other rank ([`super::pass_cap`]).
    pass_cap: usize,
    // Finalizes MPI when dropped, so it must outlive `world`'s use.
    _universe: Universe,
}

impl Mpi {
    /// Initializes MPI. An error if it was already initialized in this
    /// process, or if MPI lets a rank have only one thread
    /// (`MPI_THREAD_SINGLE`): the solver's workers never call MPI, but they
    /// are threads, which takes at least `MPI_THREAD_FUNNELED`. Also an
    /// error, before MPI starts, if `MANCALADB_MPI_PASS` is set and not a
    /// number above 0 ([`crate::settings::mpi_pass`]).
    ///
    /// From then on a panic stops every rank of the job, once its message
    /// is printed as usual and `say(rank, ranks)` has said which rank it
    /// was: unwinding would drop the [`Universe`], whose `MPI_Finalize`
    /// waits for ranks that are themselves waiting in a collective call for
    /// this one. A panic of the main thread stops it at once
    /// ([`abort_on_panic`]), and so does a worker's where MPI provides
    /// `MPI_THREAD_MULTIPLE`; elsewhere a worker's panic stops it when it
    /// reaches the main thread, in [`Mpi::stop_on_panic`].
    pub fn init(say: fn(usize, usize)) -> crate::Result<Mpi> {
        Mpi::init_asking(Threading::Multiple, say)
    }

    /// [`Mpi::init`] asking MPI for `threading` instead of
    /// `MPI_THREAD_MULTIPLE` (at least `Funneled`): tests ask for less, to
    /// stop a job from the main thread alone.
    pub fn init_asking(threading: Threading, say: fn(usize, usize)) -> crate::Result<Mpi> {
        // Read before MPI starts, so that a rank with a bad setting stops
        // the job through `mpirun` once it has said why, with no rank
        // waiting for it in a collective call.
        let pass = crate::settings::mpi_pass()?;
        let Some((universe, threading)) = mpi::initialize_with_threading(threading) else {
            return Err(crate::Error::Invalid(
                "MPI was already initialised in this process".into(),
            ));
        };
        let world = universe.world();
        // MPI may provide ranks different levels: every rank learns whether
        // any got too little, and all stop alike.
        let mut any_single = 0u8;
        world.all_reduce_into(
            &u8::from(threading == Threading::Single),
            &mut any_single,
            SystemOperation::max(),
        );
        if any_single == 1 {
            return Err(crate::Error::Invalid(
                "this MPI provides only MPI_THREAD_SINGLE; mancaladb's worker threads need \
                 MPI_THREAD_FUNNELED or more"
                    .into(),
            ));
        }
        let (rank, ranks) = (world.rank() as usize, world.size() as usize);
        abort_on_panic(rank, ranks, say, threading == Threading::Multiple);
        Ok(Mpi {
            world,
            say,
            pass_cap: super::pass_cap(pass, ranks),
            _universe: universe,
        })
    }

    /// Runs `f` on this (the main) thread; a panic that reaches it from
    /// `f`, a rayon worker's included, stops every rank of the job as a
    /// panic of the main thread does ([`Mpi::init`]).
    pub fn stop_on_panic<T>(&self, f: impl FnOnce() -> T) -> T {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(value) => value,
            Err(_) => {
                (self.say)(self.rank(), self.ranks());
                self.abort(101)
            }
        }
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

    /// One `MPI_Allreduce` of the number of passes the longest batch needs
    /// (`pass_cap` messages to a rank per pass; none when no rank sends
    /// anything), with several passes one `MPI_Alltoall` of the batches'
    /// lengths (the buffer received into is made once, at its full size),
    /// then per pass one `MPI_Alltoall` of the counts and one
    /// `MPI_Alltoallv` of the data: sent from the outbox as it is when one
    /// pass holds it, else each pass gathers its share of the batches (a
    /// batch outgrew `pass_cap`). The messages arrive grouped by
    /// pass, then by sender; their order does not matter to the solver.
    /// Ranks may even differ in their cap: each sends its share of every
    /// pass, and the counts say how much that is.
    fn all_to_all(&self, outbox: &Outbox) -> Vec<u64> {
        let ranks = self.ranks();
        debug_assert_eq!(outbox.ranks(), ranks);
        let cap = self.pass_cap;
        let longest = (0..ranks).map(|r| outbox.to(r).len()).max().unwrap_or(0);
        let passes = self.max(longest.div_ceil(cap) as u64) as usize;
        let mut received = Vec::new();
        if passes > 1 {
            // What will arrive in all, so that the buffer is made once: grown
            // pass by pass it could be copied, twice the size, each time.
            let lengths: Vec<u64> = (0..ranks).map(|r| outbox.to(r).len() as u64).collect();
            let mut arriving = vec![0u64; ranks];
            self.world.all_to_all_into(&lengths[..], &mut arriving[..]);
            received.reserve_exact(arriving.iter().sum::<u64>() as usize);
        }
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

    /// Waits without spinning ([`wait_idly`]): the ranks wait in it while
    /// rank 0 alone looks at the tables already built.
    fn broadcast(&self, x: u64) -> u64 {
        let mut x = x;
        mpi::request::scope(|scope| {
            wait_idly(
                self.world
                    .process_at_rank(0)
                    .immediate_broadcast_into(scope, &mut x),
            )
        });
        x
    }

    /// Waits without spinning ([`wait_idly`]): the ranks wait in it while
    /// rank 0 alone waits for the directory's lock, writes the raw copies
    /// a level reads or writes its table.
    fn barrier(&self) {
        wait_idly(self.world.immediate_barrier());
    }
}

/// Waits for `request` to complete, testing it at growing intervals (50 µs
/// to 10 ms) and sleeping between: a blocking collective call of Open MPI
/// polls, so on one machine the ranks waiting for rank 0 would take cores
/// from it (and from whatever holds the lock it waits for) for as long as
/// it works alone. The few calls per level that wait so cost at most a
/// pause each.
fn wait_idly<'a, D: ?Sized, S: mpi::request::Scope<'a>>(
    mut request: mpi::request::Request<'a, D, S>,
) {
    let mut pause = std::time::Duration::from_micros(50);
    loop {
        match request.test() {
            Ok(_) => return,
            Err(pending) => request = pending,
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(10));
    }
}

/// Whether MPI is initialised and not yet being finalised.
static LIVE: AtomicBool = AtomicBool::new(false);

impl Drop for Mpi {
    /// Before the `Universe` finalises MPI: a panic from then on no longer
    /// aborts.
    fn drop(&mut self) {
        LIVE.store(false, Ordering::SeqCst);
    }
}

/// Makes a panic stop the whole job: the usual panic message, then
/// `say(rank, ranks)`, then `MPI_Abort` with exit code 101 (a panic's), from
/// the thread that panicked if it is the main thread (the one calling this)
/// or `any_thread` (MPI provides `MPI_THREAD_MULTIPLE`). A worker's panic
/// otherwise unwinds as usual, to the main thread ([`Mpi::stop_on_panic`]).
fn abort_on_panic(rank: usize, ranks: usize, say: fn(usize, usize), any_thread: bool) {
    LIVE.store(true, Ordering::SeqCst);
    let main = std::thread::current().id();
    let usual = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        usual(info);
        if !LIVE.load(Ordering::SeqCst) {
            return; // MPI is finalised: the job has ended
        }
        if !any_thread && std::thread::current().id() != main {
            return; // MPI may be called from the main thread only
        }
        say(rank, ranks);
        // SAFETY: MPI is initialised (this hook is set after it) and not
        // finalised (the `Universe` that finalises it is only dropped after
        // the build returns), and this thread may call it; `MPI_Abort` does
        // not return.
        unsafe {
            mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 101);
        }
    }));
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
