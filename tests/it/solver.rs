//! The level solver against facts that do not come from it: the published
//! VU hashes, known positions, and an independent forward solver.

use crate::common::solved;
use mancaladb::oware::Rules;
use mancaladb::oware::forward::solve_level_forward;
use sha2::{Digest, Sha256};

fn sha(v: &[i8]) -> String {
    let bytes: Vec<u8> = v.iter().map(|&x| x as u8).collect();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every line of `tests/known-answers.txt` (values that do not come from the
/// builder; each is explained there) against the tables.
#[test]
fn known_answer_file() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/known-answers.txt"
    ))
    .unwrap();
    let tables = mancaladb::source::Tables::new(
        mancaladb::db::Db::new(crate::common::awari_db()),
        mancaladb::oware::Rules::Awari,
    );
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (board, rest) = line.split_once('=').unwrap();
        let (value, move_values) = rest.split_once(':').unwrap_or((rest, ""));
        let board = mancaladb::oware::Board::parse(&[board]).unwrap();
        let a = mancaladb::query::analyze(mancaladb::oware::Rules::Awari, &tables, &board).unwrap();
        assert_eq!(a.value, value.trim().parse::<i8>().unwrap(), "{line}");
        if !move_values.trim().is_empty() {
            let want: Vec<i8> = move_values
                .split_whitespace()
                .map(|v| v.parse().unwrap())
                .collect();
            assert_eq!(
                a.moves.iter().map(|m| m.value).collect::<Vec<_>>(),
                want,
                "{line}"
            );
        }
        checked += 1;
    }
    // The file's ten answers at least: a parse that skipped lines fails.
    assert!(checked >= 10, "{checked} answers checked");
}

#[test]
fn awari_levels_match_published_hashes() {
    let levels = solved(Rules::Awari);
    assert_eq!(
        sha(&levels[0]),
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    );
    assert_eq!(
        sha(&levels[6]),
        "421692ea9842e97c127a7751c0ab9517dfa810db77ef79a41da4e2d6782288e3"
    );
    assert_eq!(
        sha(&levels[12]),
        "68afa309a2e62cd2f1998fef7710a5ba3e01ef624ae0a3daa46a5a0d2b52e14c"
    );
}

#[test]
fn forward_solver_agrees_on_small_levels() {
    for rules in Rules::ALL {
        let levels = solved(rules);
        for n in 0..=11 {
            let lower: Vec<&[i8]> = levels[..n].iter().map(|v| v.as_slice()).collect();
            let fwd = solve_level_forward(rules, n, &lower).unwrap();
            assert!(fwd[..] == levels[n][..], "{rules} level {n} differs");
        }
    }
}

/// The solvers answer lower levels that are not levels `0..seeds` of the
/// game (too few, too short, a value out of range, a level past 48) with
/// `Error::Invalid`, not a panic.
#[test]
fn solvers_refuse_lower_levels_that_do_not_fit() {
    use mancaladb::Error;
    use mancaladb::oware::solve::solve_level;
    use mancaladb::progress::Progress;
    let levels = solved(Rules::Awari);
    let invalid = |lower: &Vec<Vec<i8>>, seeds: usize| {
        let by_builder = solve_level(Rules::Awari, seeds, lower, Progress::QUIET);
        let by_checker = solve_level_forward(Rules::Awari, seeds, lower);
        for (who, got) in [("builder", by_builder.err()), ("checker", by_checker.err())] {
            match got {
                Some(Error::Invalid(text)) => {
                    assert!(text.contains("level"), "{who}: {text}")
                }
                other => panic!("{who}, level {seeds}: {other:?}"),
            }
        }
    };
    let first = |n: usize| levels[..n].to_vec();
    invalid(&Vec::new(), 5); // no lower level at all
    invalid(&first(4), 5); // one too few
    let mut short = first(8);
    short[6].truncate(1); // level 6, which level 8 reads, cut short
    invalid(&short, 8);
    let mut wild = first(8);
    wild[6].iter_mut().for_each(|v| *v = 100);
    invalid(&wild, 8);
    invalid(&first(12), 49); // past the game
    // And the same levels whole are solved as the builder solves them.
    let eight = solve_level(Rules::Awari, 8, &first(8), Progress::QUIET).unwrap();
    assert!(eight[..] == levels[8][..]);
}
