//! The per-position costs of the level solver's inner loops, on one
//! thread: walking a level in index order, generating moves (the forward
//! pass), generating unmoves (propagation) and ranking what they reach.
//! It ranks with the checked `Encoder::index_of` (what probes call); the
//! solver's own ranking skips the domain test, and costs a little less.
//! Speed work on the builder starts here (BENCHMARKS.md, issue 11).
//!
//! `cargo run --release --example movegen -- 17`
//!
//! Each loop prints its wall time and its time on the CPU per position;
//! on a shared machine only the second is worth comparing.

#[path = "shared/thread_cpu.rs"]
mod thread_cpu;

use std::time::Instant;

use mancaladb::oware::retro::for_each_predecessor;
use mancaladb::oware::{Board, Encoder, Rules, moves};

fn main() {
    let Some(seeds) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<usize>().ok())
    else {
        eprintln!("usage: movegen LEVEL (0..=48)");
        std::process::exit(2);
    };
    if seeds > 48 {
        eprintln!("movegen: level {seeds}: an Oware game has 48 seeds");
        std::process::exit(2);
    }
    let enc = Encoder::new(seeds);
    let size = enc.level_size(seeds);
    let level = || enc.boards(seeds, 0..size).expect("the level's own indices");
    let index = |b: &Board| {
        enc.index_of(b)
            .expect("a move's child or a predecessor is stored")
    };
    // Every loop folds what it computes into `acc`, printed at the end, so
    // that nothing is optimised away (and runs can be compared).
    let mut acc = 0u64;
    let mut time = |what: &str, f: &mut dyn FnMut(&mut u64)| {
        let (t, cpu) = (Instant::now(), thread_cpu::seconds());
        f(&mut acc);
        let ns = t.elapsed().as_secs_f64() * 1e9 / size as f64;
        let cpu = (thread_cpu::seconds() - cpu) * 1e9 / size as f64;
        println!("{what:<34} {ns:>7.1} ns/position ({cpu:>5.1} ns on the CPU)");
    };
    println!("level {seeds}: {size} positions, one thread");
    time("walk in index order", &mut |acc| {
        level().for_each(|(_, b)| *acc += u64::from(b.pits()[3]));
    });
    time("moves", &mut |acc| {
        level().for_each(|(_, b)| *acc += moves(Rules::Awari, &b).as_slice().len() as u64);
    });
    time("moves, ranking the captures", &mut |acc| {
        for (_, b) in level() {
            for m in moves(Rules::Awari, &b)
                .as_slice()
                .iter()
                .filter(|m| m.captured > 0)
            {
                *acc += index(&m.child);
            }
        }
    });
    time("unmoves", &mut |acc| {
        for (_, b) in level() {
            for_each_predecessor(Rules::Awari, &b, |p| *acc += u64::from(p.pits()[2]));
        }
    });
    time("unmoves, ranking them", &mut |acc| {
        for (_, b) in level() {
            for_each_predecessor(Rules::Awari, &b, |p| *acc += index(p));
        }
    });
    println!("(checksum {acc})");
}
