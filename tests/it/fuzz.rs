//! Property tests with a bounded number of random cases: damaged tables
//! (bit flips, swapped blocks, truncations, insertions) are refused with an
//! error naming the file, and never answer a value that differs from the
//! clean table; random command lines exit 0 or 2, never with a panic.

use proptest::prelude::*;

use crate::common::{awari_db, bin, scratch};
use mancaladb::Error;
use mancaladb::table::{BLOCK_SIZE, Table, TableId, write_table};

const ID: TableId = TableId {
    game: 1,
    rules: 1,
    seeds: 20,
};

/// Three blocks: two runs that compress to frames of equal length (so
/// they can be swapped with every offset still valid), then varied values.
fn clean_values() -> Vec<i8> {
    let bs = BLOCK_SIZE as usize;
    let mut v = vec![3i8; bs];
    v.extend(vec![-3i8; bs]);
    v.extend((0..bs + 777).map(|i| ((i * 7919) % 41) as i8 - 20));
    v
}

/// One way of damaging a file.
#[derive(Clone, Debug)]
enum Damage {
    Flip { at: usize, bit: u8 },
    Truncate { keep: usize },
    Insert { at: usize, bytes: Vec<u8> },
    SwapFirstBlocks,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Damage::Flip { at, bit }),
        1 => any::<usize>().prop_map(|keep| Damage::Truncate { keep }),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Damage::Insert { at, bytes }),
        1 => Just(Damage::SwapFirstBlocks),
    ]
}

fn apply(d: &Damage, bytes: &mut Vec<u8>) {
    let n = bytes.len();
    match d {
        Damage::Flip { at, bit } => bytes[at % n] ^= 1 << bit,
        Damage::Truncate { keep } => bytes.truncate(keep % n),
        Damage::Insert { at, bytes: b } => {
            let at = at % n;
            bytes.splice(at..at, b.iter().copied());
        }
        Damage::SwapFirstBlocks => crate::common::swap_first_frames(bytes),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn damaged_tables_never_answer_a_wrong_value(d in damage(), probes in prop::collection::vec(any::<u64>(), 8)) {
        let clean = clean_values();
        let dir = scratch("fuzz-table");
        let path = dir.join("t.mdb");
        write_table(&path, ID, &clean).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        apply(&d, &mut bytes);
        std::fs::write(&path, &bytes).unwrap();
        let named = |e: &Error| {
            let msg = e.to_string();
            prop_assert!(msg.contains(&path.display().to_string()), "{msg}");
            prop_assert!(matches!(e, Error::Corrupt { .. }), "{msg}");
            Ok(())
        };
        match Table::open(&path) {
            Err(e) => named(&e)?,
            Ok(t) => {
                prop_assert_eq!(t.header().positions, clean.len() as u64);
                for p in probes {
                    let i = p % clean.len() as u64;
                    match t.get(i) {
                        Ok(v) => prop_assert_eq!(v, clean[i as usize], "index {}", i),
                        Err(e) => named(&e)?,
                    }
                }
                match t.read_all() {
                    Ok(all) => prop_assert!(all == clean, "read_all differs without an error"),
                    Err(e) => named(&e)?,
                }
                // The whole-file checksum catches every change.
                prop_assert!(t.verify().is_err());
            }
        }
    }
}

/// A word for a command line: numbers, ranges, flags, junk.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        (-5i64..70).prop_map(|n| n.to_string()),
        (0u8..60, 0u8..60).prop_map(|(a, b)| format!("{a}..{b}")),
        prop::sample::select(vec![
            "--json",
            "--line",
            "--seeds",
            "--max-seeds",
            "--pit",
            "--rules",
            "--vu",
            "--db",
            "--threads",
            "--quick",
            "awari",
            "abapa",
            "kalah",
            "",
            "-",
            "1,2",
            "x",
            "é",
        ])
        .prop_map(String::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn random_command_lines_exit_0_or_2(
        cmd in prop::sample::select(vec!["query", "stats", "verify", "known", "loops"]),
        words in prop::collection::vec(word(), 0..14),
    ) {
        let db = awari_db().to_str().unwrap();
        let mut c = bin();
        c.arg(cmd);
        // Keep every run on the small fixture and cheap (a `--vu` word,
        // which `--db` conflicts with, reads wherever it points).
        if cmd != "loops" && !words.iter().any(|w| w == "--vu" || w == "--db") {
            c.args(["--db", db]);
        }
        if cmd == "verify" {
            c.arg("--quick");
        }
        if cmd == "loops" {
            c.args(["--max-laps", "100000"]);
        }
        let out = c.args(&words).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        prop_assert!(matches!(out.status.code(), Some(0 | 2)), "{cmd} {words:?}: {err}");
        prop_assert!(!err.contains("panicked"), "{cmd} {words:?}: {err}");
    }
}
