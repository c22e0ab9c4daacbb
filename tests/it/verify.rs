//! `verify`, the VU reading paths, import/export, and why check 3 exists.

use crate::common::{built, export_vu, run};
use mancaladb::db::Db;
use mancaladb::oware::forward::{Graph, NO_EXIT, NO_MOVE, solve_graph};
use mancaladb::oware::{Encoder, Rules};
use mancaladb::progress::Progress;
use mancaladb::source::Source;
use mancaladb::table::{TableId, write_table};
use mancaladb::verify::{Outcome, verify};

#[test]
fn verify_passes_on_built_levels_of_both_rule_sets() {
    for rules in Rules::ALL {
        let dir = built(&format!("verify-{rules}"), rules, 11);
        let checks = verify(
            &Source::tables(&dir, rules),
            rules,
            0..=11,
            false,
            Progress::Quiet,
            |_| {},
        )
        .unwrap();
        assert_eq!(checks.len(), 12);
        for c in &checks {
            assert!(c.passed(), "{rules} level {}: {c:?}", c.seeds);
            assert_eq!(c.rederivation, Outcome::Pass);
        }
    }
}

fn code_and_stdout(args: &[&str]) -> (Option<i32>, String) {
    let out = run(args);
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn a_planted_wrong_value_fails_with_exit_1_naming_the_position() {
    let dir = built("planted", Rules::Awari, 9);
    let db = Db::new(&dir);
    let mut values = db.open(Rules::Awari, 9).unwrap().read_all().unwrap();
    let index = 4321usize;
    let board = Encoder::new(9).unrank(9, index as u64);
    let good = values[index];
    values[index] = if good == 9 { 8 } else { good + 1 };
    // A sound file (checksums and all) holding one wrong value.
    write_table(
        &db.table_path(Rules::Awari, 9),
        TableId {
            game: 1,
            rules: 1,
            seeds: 9,
        },
        &values,
    )
    .unwrap();
    let (code, text) = code_and_stdout(&["verify", "--db", dir.to_str().unwrap(), "--seeds", "9"]);
    assert_eq!(code, Some(1), "{text}");
    let line = format!(
        "index {index} board {board}: stored {}, expected {good}",
        values[index]
    );
    assert!(
        text.contains("check 2 consistency: FAILED") && text.contains(&line),
        "{text}"
    );
    assert!(text.contains("check 3 re-derivation: FAILED"), "{text}");
    // Quick mode only checks integrity, which holds.
    let (code, _) = code_and_stdout(&["verify", "--quick", "--db", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0));
}

#[test]
fn vu_files_are_read_in_place_and_round_trip() {
    let dir = built("vu", Rules::Awari, 10);
    let vu = dir.join("vu");
    export_vu(&dir, &vu);
    let (d, v) = (dir.to_str().unwrap(), vu.to_str().unwrap());
    // Queries and statistics read the same from both.
    for pits in [
        "0 0 0 0 0 2 1 1 0 0 0 0",
        "1 1 1 1 1 1 1 1 1 1 0 0",
        "2 0 3 0 0 1 0 0 0 1 0 2",
    ] {
        assert_eq!(
            code_and_stdout(&["query", "--db", d, "--json", pits]),
            code_and_stdout(&["query", "--vu", v, "--json", pits])
        );
    }
    assert_eq!(
        code_and_stdout(&["stats", "--db", d]),
        code_and_stdout(&["stats", "--vu", v])
    );
    let (code, text) = code_and_stdout(&["verify", "--vu", v]);
    assert_eq!(code, Some(0), "{text}");
    // Import, then export again: byte-identical files, identical tables.
    let db2 = dir.join("db2");
    let o = run(&["import", "--vu", v, "--db", db2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let vu2 = dir.join("vu2");
    export_vu(&db2, &vu2);
    for n in 0..=10 {
        let name = format!("scores.{n}");
        assert_eq!(
            std::fs::read(vu.join(&name)).unwrap(),
            std::fs::read(vu2.join(&name)).unwrap(),
            "{name}"
        );
        let t = format!("awari-{n:02}.mdb");
        assert_eq!(
            std::fs::read(dir.join(&t)).unwrap(),
            std::fs::read(db2.join(&t)).unwrap(),
            "{t}"
        );
    }
}

#[test]
fn damaged_vu_files_fail_verification() {
    let dir = built("vu-damaged", Rules::Awari, 8);
    let vu = dir.join("vu");
    export_vu(&dir, &vu);
    let v = vu.to_str().unwrap();
    // One flipped byte: a wrong value at that index.
    let path = vu.join("scores.8");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[1000] = bytes[1000].wrapping_add(2);
    std::fs::write(&path, &bytes).unwrap();
    let (code, text) = code_and_stdout(&["verify", "--vu", v, "--seeds", "8"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("index 1000 board"), "{text}");
    // A truncated file: integrity (size) fails, exit 1.
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let (code, text) = code_and_stdout(&["verify", "--vu", v, "--seeds", "8"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("check 1 integrity: FAILED")
            && text.contains("75503 bytes; level 8 has 75504 positions"),
        "{text}"
    );
    // Queries on it are refused, exit 2.
    let out = run(&["query", "--vu", v, "1 1 1 1 1 1 1 1 0 0 0 0"]);
    assert_eq!(out.status.code(), Some(2));
    // A missing directory: exit 2 with what to do.
    let out = run(&["verify", "--vu", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("export --format vu"));
}

/// Two positions A and B, each with one quiet move to the other and one
/// move leaving the graph worth -1. The true values are 0 and 0: neither
/// player gains by leaving, and endless play is worth 0. Yet A = +1, B = -1
/// satisfies every local equation: A = max(-1, -B) = 1 and B = max(-1, -A)
/// = -1. Consistency (check 2) accepts it; re-derivation (check 3) does not.
#[test]
fn rederivation_rejects_consistent_values_that_are_wrong_inside_a_cycle() {
    let g = Graph {
        quiet: vec![
            [1, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE],
            [0, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE],
        ],
        exit: vec![-1, -1],
    };
    let wrong = [1i8, -1];
    let consistent = |v: &[i8]| (0..2).all(|i| v[i] == g.exit[i].max(-v[g.quiet[i][0] as usize]));
    assert!(consistent(&wrong));
    let exact = solve_graph(&g, 2).unwrap();
    assert_eq!(exact, [0, 0]);
    assert!(consistent(&exact));
    assert_ne!(exact, wrong);
    // No exit at all: endless play only, worth 0 too.
    let g = Graph {
        quiet: g.quiet.clone(),
        exit: vec![NO_EXIT, NO_EXIT],
    };
    assert_eq!(solve_graph(&g, 2).unwrap(), [0, 0]);
}
