//! The split solver without MPI: ranks simulated by threads of this process,
//! exchanging through shared mailboxes, must give the single-process values
//! for every split. The same solver runs under `mpirun` in `tests/mpi.rs`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::common::{Recorder, Snapshot, awari_db, copy_dir, file_sha256, scratch, solved};
use mancaladb::exchange::{Exchange, Outbox, newest_held_by_all, ranks_on_this_machine, split};
use mancaladb::oware::Rules;
use mancaladb::oware::solve::{Options, solve_part, solve_part_in};
use mancaladb::progress::{Notice, Progress};

/// What the simulated ranks share.
struct Hub {
    ranks: usize,
    meeting: Mutex<Meeting>,
    /// Wakes the ranks waiting in `meeting`.
    met: Condvar,
    /// `mail[to][from]`: the batch in transit.
    mail: Mutex<Vec<Vec<Vec<u64>>>>,
    /// One number per rank, for the reductions.
    numbers: Mutex<Vec<u64>>,
}

/// Where the ranks meet: a barrier that also checks that every rank came
/// for the same operation, and fails instead of waiting for a rank that
/// has returned. Under MPI a `sum` on one rank met by an `all_to_all` on
/// another exchanges garbage or hangs, and so does a rank that returns on
/// an error while the others call on; here both end the test.
struct Meeting {
    /// The operation each rank is at (`""`: none yet).
    at: Vec<&'static str>,
    arrived: usize,
    /// Meetings completed.
    generation: u64,
    /// The first rank whose function returned.
    left: Option<usize>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A rank that panicked in a meeting poisons it; the others must still
    // see why they stop.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One simulated rank.
struct Member {
    rank: usize,
    ranks: usize,
    hub: Arc<Hub>,
    /// Bytes of the messages it posted to the others.
    sent: AtomicU64,
    /// Its calls of `all_to_all`.
    exchanges: AtomicU64,
}

impl Member {
    /// Returns once every rank has arrived at `op`, having checked that all
    /// of them did. Each collective call meets twice, once when it has
    /// posted its input and once when it has read the others', so that
    /// nobody posts again before everyone has read.
    fn meet(&self, op: &'static str) {
        let mut m = lock(&self.hub.meeting);
        if let Some(r) = m.left {
            panic!("rank {} calls {op} after rank {r} returned", self.rank);
        }
        m.at[self.rank] = op;
        m.arrived += 1;
        if m.arrived == self.hub.ranks {
            let at = std::mem::replace(&mut m.at, vec![""; self.hub.ranks]);
            assert!(
                at.iter().all(|&o| o == op),
                "the ranks called different operations at once: {at:?}"
            );
            m.arrived = 0;
            m.generation += 1;
            self.hub.met.notify_all();
            return;
        }
        let generation = m.generation;
        while m.generation == generation {
            if let Some(r) = m.left {
                panic!(
                    "rank {} waits in {op} for rank {r}, which returned",
                    self.rank
                );
            }
            m = self.hub.met.wait(m).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Every rank posts `x`; all read the posted numbers once all posted.
    fn gather(&self, op: &'static str, x: u64) -> Vec<u64> {
        lock(&self.hub.numbers)[self.rank] = x;
        self.meet(op);
        let all = lock(&self.hub.numbers).clone();
        self.meet(op);
        all
    }
}

/// A rank's function has returned (or panicked): whoever still waits for
/// it in a meeting fails.
impl Drop for Member {
    fn drop(&mut self) {
        lock(&self.hub.meeting).left.get_or_insert(self.rank);
        self.hub.met.notify_all();
    }
}

impl Exchange for Member {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn all_to_all(&self, outbox: &Outbox) -> Vec<u64> {
        // As `Mpi::all_to_all` expects (its buffers' counts are one a rank).
        assert_eq!(
            outbox.ranks(),
            self.ranks,
            "an outbox holds one batch a rank"
        );
        assert!(
            outbox.to(self.rank).is_empty(),
            "a rank never sends to itself"
        );
        {
            let mut mail = lock(&self.hub.mail);
            for (to, batches) in mail.iter_mut().enumerate() {
                batches[self.rank] = outbox.to(to).to_vec();
                let bytes = std::mem::size_of_val(outbox.to(to)) as u64;
                self.sent.fetch_add(bytes, Relaxed);
            }
        }
        self.exchanges.fetch_add(1, Relaxed);
        self.meet("all_to_all");
        let received = std::mem::take(&mut lock(&self.hub.mail)[self.rank]).concat();
        lock(&self.hub.mail)[self.rank] = vec![Vec::new(); self.ranks];
        self.meet("all_to_all");
        received
    }
    fn sum(&self, x: u64) -> u64 {
        self.gather("sum", x).iter().sum()
    }
    fn max(&self, x: u64) -> u64 {
        self.gather("max", x).into_iter().max().unwrap()
    }
    fn broadcast(&self, x: u64) -> u64 {
        self.gather("broadcast", x)[0]
    }
    fn barrier(&self) {
        self.meet("barrier");
    }
}

/// Runs `f` on `ranks` simulated ranks at once; their results in rank order.
fn on_ranks<T: Send>(ranks: usize, f: impl Fn(&Member) -> T + Sync) -> Vec<T> {
    let hub = Arc::new(Hub {
        ranks,
        meeting: Mutex::new(Meeting {
            at: vec![""; ranks],
            arrived: 0,
            generation: 0,
            left: None,
        }),
        met: Condvar::new(),
        mail: Mutex::new(vec![vec![Vec::new(); ranks]; ranks]),
        numbers: Mutex::new(vec![0; ranks]),
    });
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..ranks)
            .map(|rank| {
                let member = Member {
                    rank,
                    ranks,
                    hub: hub.clone(),
                    sent: AtomicU64::new(0),
                    exchanges: AtomicU64::new(0),
                };
                let f = &f;
                s.spawn(move || f(&member))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Every split of every level gives the single process's values; each
/// rank's `sent_bytes` and `rounds` are the bytes it posted to the others
/// and its exchanges, as the simulated ranks count them.
#[test]
fn every_split_gives_the_single_process_values() {
    for rules in Rules::ALL {
        let levels = solved(rules);
        for (seeds, whole) in levels.iter().enumerate() {
            let lower: Vec<&[i8]> = levels[..seeds].iter().map(|v| v.as_slice()).collect();
            for ranks in 1..=4 {
                let parts = on_ranks(ranks, |ex| {
                    let part = solve_part(rules, seeds, &lower, ex, Progress::QUIET).unwrap();
                    // What the rank says it sent and how many rounds it
                    // ran: what it posted, in as many exchanges.
                    let posted = (ex.sent.load(Relaxed), ex.exchanges.load(Relaxed));
                    assert_eq!((part.sent_bytes, part.rounds), posted, "rank {}", ex.rank);
                    (part.range, part.values.to_vec(), part.sent_bytes)
                });
                let bounds = split(whole.len() as u64, ranks);
                let mut joined = Vec::new();
                for (r, (range, values, sent)) in parts.iter().enumerate() {
                    assert_eq!(*range, bounds[r]..bounds[r + 1]);
                    assert_eq!(values.len() as u64, range.end - range.start);
                    // One rank has no one to send to; split, every slice
                    // has predecessors in the others once a level is big.
                    if ranks == 1 {
                        assert_eq!(*sent, 0);
                    } else if seeds >= 4 {
                        assert!(
                            *sent > 0,
                            "{rules} level {seeds}, rank {r} of {ranks} sent nothing"
                        );
                    }
                    joined.extend_from_slice(values);
                }
                assert!(
                    &joined == whole,
                    "{rules} level {seeds} split {ranks} ways differs"
                );
            }
        }
    }
}

/// Frontiers of a few boards force every decision through fresh marks and
/// sweeps, on every rank; checkpoints after every threshold and every part
/// of the forward pass (parts of 5,000 positions) are written on the way.
/// The values must not change.
#[test]
fn tiny_frontiers_on_every_split_give_the_same_values() {
    let base = std::env::temp_dir().join(format!("mancaladb-tiny-{}", std::process::id()));
    for rules in Rules::ALL {
        let levels = solved(rules);
        for (seeds, whole) in levels.iter().enumerate().take(11) {
            let lower: Vec<&[i8]> = levels[..seeds].iter().map(|v| v.as_slice()).collect();
            let mut rounds = Vec::new();
            for (ranks, cap) in [(1, None), (1, Some(1)), (2, Some(3)), (3, Some(50))] {
                let parts = on_ranks(ranks, |ex| {
                    let options = Options {
                        dir: base.join(format!("{rules}-{seeds}-{ranks}-{cap:?}-{}", ex.rank)),
                        checkpoint_every: Some(std::time::Duration::ZERO),
                        frontier_cap: cap,
                        forward_part: 5_000,
                        lower: [0; 32],
                    };
                    let part = solve_part_in(rules, seeds, &lower, ex, &options, Progress::QUIET);
                    let part = part.unwrap();
                    (part.values.to_vec(), part.rounds)
                });
                let values: Vec<i8> = parts.iter().flat_map(|p| p.0.clone()).collect();
                assert!(
                    &values == whole,
                    "{rules} level {seeds}, {ranks} ranks, frontiers of {cap:?}"
                );
                rounds.push(parts[0].1);
            }
            // A frontier of one board holds one decision a round: the
            // overflow went through fresh marks and sweeps.
            if seeds >= 6 {
                assert!(
                    rounds[1] > rounds[0],
                    "{rules} level {seeds}: rounds {rounds:?}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&base).unwrap();
}

/// Ranks stopped while some had written a checkpoint and others not yet
/// resume together from the newest one they all hold, whatever else each
/// holds; with none in common, from nothing.
#[test]
fn ranks_agree_on_the_newest_checkpoint_they_all_hold() {
    let cases: [(&[&[u64]], Option<u64>); 6] = [
        (&[&[3], &[3], &[3]], Some(3)),
        (&[&[2, 3], &[2], &[2, 3]], Some(2)),
        (&[&[3], &[2, 3], &[3]], Some(3)),
        (&[&[1], &[2]], None),
        (&[&[], &[1]], None),
        (&[&[], &[]], None),
    ];
    for (held, want) in cases {
        let got = on_ranks(held.len(), |ex| newest_held_by_all(held[ex.rank], ex));
        assert!(
            got.iter().all(|&g| g == want),
            "{held:?}: {got:?}, want {want:?}"
        );
    }
}

/// The simulated ranks, threads of one process, all find themselves on
/// this machine (whose memory the build weighs their shares against
/// together).
#[test]
fn ranks_count_the_ranks_on_their_machine() {
    assert!(
        Path::new("/proc/sys/kernel/random/boot_id").exists(),
        "no boot id here"
    );
    for ranks in 1..=4 {
        let here = on_ranks(ranks, |ex| ranks_on_this_machine(ex));
        assert_eq!(here, vec![ranks; ranks]);
    }
}

/// A seed list damaged on disk (one changed bit of one rank's list, which
/// would still decode) is found as it is read, and every rank drops its
/// work and solves the level afresh, to the same values: the rank that read
/// it names the file, the others that rank.
#[test]
fn a_damaged_seed_list_on_one_rank_is_solved_afresh_by_all() {
    let base = std::env::temp_dir().join(format!("mancaladb-seeds-{}", std::process::id()));
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let lower: Vec<&[i8]> = levels[..seeds].iter().map(|v| v.as_slice()).collect();
    // With 3 ranks, rank 1's list: the others name the damaged rank,
    // neither their own number nor the last; with 2 ranks, the last
    // rank's list.
    for ranks in [1, 2, 3] {
        let dir = |rank: usize| base.join(format!("{ranks}-{rank}"));
        // Each rank's work directory as it was before threshold 1.
        let before = |rank: usize| base.join(format!("{ranks}-{rank}-before-1"));
        // With `snap`, copies the work directories before threshold 1;
        // without, hears what each rank tells.
        let solve = |snap: bool| {
            on_ranks(ranks, |ex| {
                let options = Options {
                    dir: dir(ex.rank),
                    checkpoint_every: Some(std::time::Duration::ZERO),
                    frontier_cap: None,
                    forward_part: 1 << 20,
                    lower: [0; 32],
                };
                let snapshot = Snapshot {
                    dir: dir(ex.rank),
                    to: before(ex.rank),
                    threshold: 1,
                };
                let heard = Recorder::default();
                let progress = match snap {
                    true => Progress::to(&snapshot),
                    false => Progress::to(&heard),
                };
                let part = solve_part_in(rules, seeds, &lower, ex, &options, progress);
                let part = part.expect("a damaged seed list is dropped");
                (part.resumed_at, part.values.to_vec(), heard.notices())
            })
        };
        let whole = |parts: &[(Option<usize>, Vec<i8>, Vec<Notice>)]| {
            parts
                .iter()
                .flat_map(|(_, v, _)| v.clone())
                .collect::<Vec<i8>>()
        };
        assert!(whole(&solve(true)) == levels[seeds]);
        // Every rank's work directory back as it was before threshold 1,
        // with that threshold's lists: damage the longer list of one
        // rank.
        for rank in 0..ranks {
            copy_dir(&before(rank), &dir(rank));
        }
        let damaged = ranks / 2;
        let rank_dir = dir(damaged);
        assert!(
            rank_dir.join("state.1").exists(),
            "no checkpoint before threshold 1"
        );
        let list = ["w.1", "l.1"]
            .map(|name| rank_dir.join(name))
            .into_iter()
            .max_by_key(|path| std::fs::metadata(path).unwrap().len())
            .unwrap();
        let mut bytes = std::fs::read(&list).unwrap();
        assert!(
            bytes.len() > 20,
            "{}: {} bytes",
            list.display(),
            bytes.len()
        );
        bytes[17] ^= 1; // in the first record's offsets, past its head
        std::fs::write(&list, bytes).unwrap();
        let again = solve(false);
        assert!(whole(&again) == levels[seeds], "{ranks} ranks");
        for (rank, (resumed, _, heard)) in again.iter().enumerate() {
            assert!(
                resumed.is_none(),
                "{ranks} ranks: rank {rank} solved afresh"
            );
            let why: Vec<&str> = heard
                .iter()
                .filter_map(|n| match n {
                    Notice::SolveAfresh { why, .. } => Some(why.as_str()),
                    _ => None,
                })
                .collect();
            let want = match rank == damaged {
                true => format!("{}: damaged solver work file", list.display()),
                false => {
                    format!("a work file of rank {damaged} is damaged (rank {damaged} names it)")
                }
            };
            assert!(
                why.len() == 1 && why[0].starts_with(&want),
                "{ranks} ranks, rank {rank}: {why:?}"
            );
        }
    }
    std::fs::remove_dir_all(&base).unwrap();
}

/// The ranks of a build agree, before anything is solved, on what they
/// build and where: ranks that differ in their levels, rules, raw cache,
/// table directory (one that does not see rank 0's token, or holds another
/// build's) or raw copies'
/// directory (one of their own under a shared table directory, where their
/// slices would never reach rank 0's table) all get the same
/// error, naming the first rank that differs and what in; that rank alone
/// also hears what it has. Nothing is built and no token is left. Ranks
/// that agree build the single process's tables, also when they name the
/// shared directory differently.
#[test]
fn ranks_that_disagree_on_what_or_where_to_build_stop_before_solving() {
    use mancaladb::Error;
    use mancaladb::build::Build;
    use mancaladb::db::Db;
    let base = scratch("distributed-disagree");
    let shared = base.join("shared");
    let elsewhere = base.join("elsewhere");
    let token = |dir: &Path| {
        dir.join(".ranks-token").exists() || dir.join("raw/awari/.ranks-token").exists()
    };

    let built = on_ranks(2, |ex| {
        Build::new(&Db::new(&shared), Rules::Awari, 0..=8)
            .exchange(ex)
            .run()
            .map(|reports| reports.len())
            .map_err(|e| e.to_string())
    });
    assert_eq!(built, [Ok(9), Ok(0)], "rank 0 alone reports");
    let single = awari_db();
    for n in 0..=8 {
        let name = format!("awari-{n:02}.mdb");
        assert_eq!(
            file_sha256(&shared.join(&name)),
            file_sha256(&single.join(&name))
        );
    }
    assert!(!token(&shared));

    // What the rank at fault is given instead of levels 0..=10 of awari
    // in `shared`, keeping every raw copy (`Db::new`'s default).
    type Differ = fn(&Path, &Path) -> (Db, Rules, usize);
    let cases: [(usize, usize, Differ, &str, &str); 7] = [
        (
            2,
            1,
            |d, _| (Db::new(d), Rules::Awari, 9),
            "levels to build",
            "0..9",
        ),
        (
            2,
            1,
            |d, _| (Db::new(d), Rules::Abapa, 10),
            "rules",
            "abapa",
        ),
        (
            2,
            1,
            |d, _| (Db::new(d).with_raw_cache(Some(0)), Rules::Awari, 10),
            "raw cache",
            "0 bytes",
        ),
        (
            2,
            1,
            |_, e| (Db::new(e), Rules::Awari, 10),
            "table directory",
            "holds no token from rank 0",
        ),
        // Rank 1 agrees; rank 2, the first to differ, is named.
        (
            3,
            2,
            |_, e| (Db::new(e), Rules::Awari, 10),
            "table directory",
            "holds no token from rank 0",
        ),
        // The table directory seen through a link to rank 0's token, as if
        // shared, but raw copies of its own.
        (
            2,
            1,
            |d, e| {
                let linked = e.with_file_name("linked");
                std::fs::create_dir_all(&linked).unwrap();
                let token = linked.join(".ranks-token");
                if !token.is_symlink() {
                    std::os::unix::fs::symlink(d.join(".ranks-token"), token).unwrap();
                }
                (Db::new(linked), Rules::Awari, 10)
            },
            "raw copies' directory",
            "linked/raw/awari holds no token from rank 0",
        ),
        // A directory of its own holding another build's token (as a
        // copy of the shared one would).
        (
            2,
            1,
            |_, e| {
                let stale = e.with_file_name("stale");
                std::fs::create_dir_all(&stale).unwrap();
                std::fs::write(stale.join(".ranks-token"), "0000000000000001\n").unwrap();
                (Db::new(stale), Rules::Awari, 10)
            },
            "table directory",
            "stale/.ranks-token holds another build's token",
        ),
    ];
    for (ranks, at_fault, differ, what, here) in cases {
        let results = on_ranks(ranks, |ex| {
            let (db, rules, max) = match ex.rank == at_fault {
                true => differ(&shared, &elsewhere),
                false => (Db::new(&shared), Rules::Awari, 10),
            };
            Build::new(&db, rules, 0..=max).exchange(ex).run()
        });
        for (rank, result) in results.into_iter().enumerate() {
            match result {
                Err(Error::Disagree {
                    rank: named,
                    ranks: of,
                    what: said,
                    here: heard,
                }) => {
                    assert_eq!((named, of), (at_fault, ranks), "{what}");
                    assert!(said.starts_with(what), "{said} for {what}");
                    match rank == at_fault {
                        true => assert!(
                            heard.as_ref().is_some_and(|h| h.contains(here)),
                            "{what}: {heard:?}"
                        ),
                        false => assert_eq!(heard, None, "{what}: rank {rank}"),
                    }
                }
                other => panic!(
                    "{what}: rank {rank} of {ranks}: {:?}",
                    other.map(|r| r.len())
                ),
            }
        }
        // Nothing solved, nothing left behind, nothing made elsewhere.
        assert!(!shared.join("awari-09.mdb").exists(), "{what}");
        assert!(!token(&shared), "{what}");
        assert!(!elsewhere.exists(), "{what}");
    }

    // Ranks that name the shared directory differently (here rank 1
    // through a link to it) agree: rank 0's token, not the name, shows
    // that they see the same place.
    let link = base.join("link");
    std::os::unix::fs::symlink(&shared, &link).unwrap();
    let built = on_ranks(2, |ex| {
        let db = Db::new(if ex.rank == 1 { &link } else { &shared });
        Build::new(&db, Rules::Awari, 0..=9)
            .exchange(ex)
            .run()
            .map(|reports| reports.iter().filter(|r| !r.skipped).count())
            .map_err(|e| e.to_string())
    });
    assert_eq!(built, [Ok(1), Ok(0)], "rank 0 alone reports level 9");
    assert_eq!(
        file_sha256(&shared.join("awari-09.mdb")),
        file_sha256(&single.join("awari-09.mdb"))
    );
    assert!(!token(&shared));
}

#[test]
fn the_simulated_ranks_catch_mismatched_calls_and_a_rank_that_left() {
    // Under MPI these would exchange garbage or hang.
    let mismatched = std::panic::catch_unwind(|| {
        on_ranks(2, |ex| if ex.rank() == 0 { ex.sum(1) } else { ex.max(1) })
    });
    let left = std::panic::catch_unwind(|| {
        on_ranks(3, |ex| {
            if ex.rank() != 2 {
                ex.barrier()
            }
        })
    });
    assert!(mismatched.is_err(), "a sum met a max: {mismatched:?}");
    assert!(
        left.is_err(),
        "two ranks met at a barrier without the third"
    );
    // Ranks that call alike still meet.
    assert_eq!(
        on_ranks(3, |ex| (ex.sum(1), ex.max(ex.rank() as u64))),
        vec![(3, 2); 3]
    );
}
