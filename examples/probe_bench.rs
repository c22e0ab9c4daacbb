//! Random probes per second through `Source` (rank + value), for
//! `scripts/bench-probe.sh`: one thread and all threads, one line per
//! level and mode, tab-separated.
//!
//! `per_cpu_s` divides by the CPU time the probing threads got (the
//! thread's CPU clock), so it holds on a busy machine too.
//!
//! `probe_bench DIR MODE LEVEL[,LEVEL...] [PROBES_PER_THREAD]` where MODE is
//! `raw` (the raw copies, checked first), `compressed` (DIR must hold no
//! raw copies: every probe goes through the block cache; the first pass
//! over the boards is reported apart, as `cold`) or `mutex` (the old
//! `Table::get`: one block behind one mutex).

#[path = "shared/thread_cpu.rs"]
mod thread_cpu;

use std::time::Instant;

use mancaladb::db::Db;
use mancaladb::oware::{Board, Encoder, MAX_SEEDS, Rules, level_size};
use mancaladb::source::{Tables, Values};
use mancaladb::table::Table;

/// Distinct random boards per level.
const BOARDS: usize = 1 << 20;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Probes `boards` round-robin `count` times on each of `threads` threads;
/// returns probes per second of wall time in all, and per CPU-second a
/// probing thread ran.
fn run(
    threads: usize,
    count: usize,
    boards: &[Board],
    probe: &(dyn Fn(&Board) -> i8 + Sync),
) -> (f64, f64) {
    let start = Instant::now();
    let cpu: f64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let cpu = thread_cpu::seconds();
                    let mut sum = 0i64;
                    let mut i = t * boards.len() / threads;
                    for _ in 0..count {
                        sum += i64::from(probe(&boards[i]));
                        i += 1;
                        if i == boards.len() {
                            i = 0;
                        }
                    }
                    std::hint::black_box(sum);
                    thread_cpu::seconds() - cpu
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let wall = start.elapsed().as_secs_f64();
    (
        (threads * count) as f64 / wall,
        (threads * count) as f64 / cpu,
    )
}

/// Boards per call of [`Tables::values`] in [`run_batched`].
const BATCH: usize = 1024;

/// As [`run`], with [`Tables::values`] on groups of [`BATCH`] boards:
/// `count` probes per thread rounded up to whole groups (the number
/// [`batched_count`] gives).
fn run_batched(threads: usize, count: usize, boards: &[Board], tables: &Tables) -> (f64, f64) {
    let start = Instant::now();
    let cpu: f64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let cpu = thread_cpu::seconds();
                    let mut out = Vec::with_capacity(BATCH);
                    let mut sum = 0i64;
                    let mut i = (t * boards.len() / threads) / BATCH * BATCH;
                    for _ in 0..batched_count(count) / BATCH {
                        out.clear(); // values() appends
                        tables.values(&boards[i..i + BATCH], &mut out).unwrap();
                        sum += out.iter().map(|&v| i64::from(v)).sum::<i64>();
                        i = (i + BATCH) % boards.len();
                    }
                    std::hint::black_box(sum);
                    thread_cpu::seconds() - cpu
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let n = (threads * batched_count(count)) as f64;
    (n / start.elapsed().as_secs_f64(), n / cpu)
}

/// The probes per thread [`run_batched`] makes of `count`: whole groups,
/// at least one (a count below a group once made none, and rates of 0).
fn batched_count(count: usize) -> usize {
    count.div_ceil(BATCH).max(1) * BATCH
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!(
            "usage: probe_bench DIR raw|compressed|mutex LEVEL[,LEVEL...] [PROBES_PER_THREAD]"
        );
        std::process::exit(2);
    }
    let db = Db::new(&args[1]);
    let mode = args[2].as_str();
    let levels: Vec<usize> = args[3].split(',').map(|l| l.parse().unwrap()).collect();
    let count: usize = args.get(4).map_or(4_000_000, |c| c.parse().unwrap());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let encoder = Encoder::new(MAX_SEEDS);
    println!("level\tmode\tthreads\tprobes\tprobes_per_s\tper_thread_per_s\tper_cpu_s");
    for &n in &levels {
        let mut state = n as u64;
        let boards: Vec<Board> = (0..BOARDS)
            .map(|_| {
                encoder
                    .board_at(n, splitmix(&mut state) % level_size(n))
                    .unwrap()
            })
            .collect();
        let report = |label: &str, threads: usize, probes: usize, (rate, per_cpu): (f64, f64)| {
            println!(
                "{n}\t{label}\t{threads}\t{}\t{rate:.0}\t{:.0}\t{per_cpu:.0}",
                probes * threads,
                rate / threads as f64
            );
        };
        match mode {
            "mutex" => {
                let table = Table::open(&db.table_path(Rules::Awari, n)).unwrap();
                let get = |b: &Board| table.get(encoder.index_of(b).unwrap()).unwrap();
                let few = count.min(20_000);
                for threads in [1, cores] {
                    let rate = run(threads, few, &boards, &get);
                    report("mutex", threads, few, rate);
                }
            }
            "raw" | "compressed" => {
                let tables = Tables::with_cache(db.clone(), Rules::Awari, 1 << 30, cores);
                let level = tables.level(n).unwrap();
                assert_eq!(
                    level.check_raw(),
                    mode == "raw",
                    "raw copy of level {n} in {}: mode {mode}",
                    args[1]
                );
                let value = |b: &Board| tables.value(b).unwrap();
                if mode == "compressed" {
                    let rate = run(1, BOARDS, &boards, &value);
                    report("compressed-cold", 1, BOARDS, rate);
                }
                for threads in [1, cores] {
                    let rate = run(threads, count, &boards, &value);
                    report(mode, threads, count, rate);
                }
                // Many probes per call: ranks first, raw bytes prefetched.
                for threads in [1, cores] {
                    let rate = run_batched(threads, count, &boards, &tables);
                    report(
                        &format!("{mode}-batch"),
                        threads,
                        batched_count(count),
                        rate,
                    );
                }
                // The background raw check never switched a compressed run.
                assert_eq!(level.raw().is_some(), mode == "raw");
            }
            _ => panic!("mode: raw, compressed or mutex"),
        }
    }
}
