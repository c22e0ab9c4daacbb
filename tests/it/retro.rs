//! Both ways of finding predecessors are exactly the inverse of the quiet
//! moves, on whole levels of both rule sets: the builder's unmoves (the
//! retrograde solver stands on them) and the forward checker's
//! candidate-and-confirm search (its schedule stands on it).

use std::collections::HashSet;

use mancaladb::oware::forward::{Game, OwareLevel};
use mancaladb::oware::retro::for_each_predecessor;
use mancaladb::oware::{Board, Encoder, LowerLevels, MAX_SEEDS, PITS, Rules, level_size, moves};

/// Checks that `predecessors(q, f)` calls `f` once for each quiet edge into
/// `q`, on every position `q` of level `n`.
fn inverts_quiet_moves(
    rules: Rules,
    n: usize,
    predecessors: impl Fn(&Board, &mut dyn FnMut(Board)),
) {
    let e = Encoder::new(n);
    let size = e.level_size(n);
    // Every quiet edge, found forwards.
    let mut forward: HashSet<(Board, Board)> = HashSet::new();
    for (_, ref p) in e.boards(n, 0..size).unwrap() {
        for m in moves(rules, p)
            .as_slice()
            .iter()
            .filter(|m| m.captured == 0)
        {
            assert!(m.child.in_domain() && m.child.seeds() == n);
            forward.insert((*p, m.child));
        }
    }
    // The same edges, found backwards, each once.
    let mut backward: HashSet<(Board, Board)> = HashSet::new();
    for (_, ref q) in e.boards(n, 0..size).unwrap() {
        predecessors(q, &mut |p| {
            assert!(
                forward.contains(&(p, *q)),
                "{rules}: {p} -> {q} is not a quiet move"
            );
            assert!(backward.insert((p, *q)), "{rules}: {p} -> {q} twice");
        });
    }
    assert_eq!(
        backward.len(),
        forward.len(),
        "{rules} level {n}: edges missed"
    );
}

#[test]
fn unmoves_invert_quiet_moves_on_whole_levels() {
    for rules in Rules::ALL {
        for n in 0..=10 {
            inverts_quiet_moves(rules, n, |q, f| for_each_predecessor(rules, q, |p| f(*p)));
        }
    }
}

#[test]
fn the_checkers_parents_invert_quiet_moves_on_whole_levels() {
    for rules in Rules::ALL {
        for n in 0..=10 {
            // Lower-level values only matter for captures, not for parents.
            let zeros: Vec<Vec<i8>> = (0..n).map(|k| vec![0; level_size(k) as usize]).collect();
            let lower: Vec<&[i8]> = zeros.iter().map(|v| v.as_slice()).collect();
            let level = OwareLevel::new(rules, n, &lower);
            inverts_quiet_moves(rules, n, |q, f| level.parents(q, &mut *f));
        }
    }
}

/// Lower levels that are never read: parents do not depend on them, and
/// levels up to 48 could not be held here.
struct Unread;

impl LowerLevels for Unread {
    type Reader = ();

    fn levels(&self) -> usize {
        MAX_SEEDS
    }

    fn reader(&self) {}

    fn value(&self, _: &mut (), level: usize, index: u64) -> mancaladb::error::Result<i8> {
        panic!("level {level} read at {index}")
    }
}

/// The checker's parents include those that sowed the most seeds a pit
/// can hold, 47 and 48, in level 48 (the whole game), which the whole
/// levels above never reach: every quiet move of a board with 47 or 48
/// seeds in one pit leads to a position with that board among its
/// parents, once.
#[test]
fn the_checkers_parents_include_the_largest_sowings() {
    for rules in Rules::ALL {
        let level = OwareLevel::new(rules, MAX_SEEDS, &Unread);
        let mut edges = 0;
        for (pit, rest, sown) in (0..6)
            .flat_map(|pit| (0..PITS).map(move |rest| (pit, rest)))
            .flat_map(|(pit, rest)| [47, 48].map(|sown| (pit, rest, sown)))
        {
            let mut pits = [0u8; PITS];
            pits[pit] = sown;
            pits[rest] += 48 - sown;
            let p = Board::new(pits).unwrap();
            if !p.in_domain() {
                continue;
            }
            for m in (moves(rules, &p).as_slice().iter()).filter(|m| m.captured == 0) {
                let mut found = 0;
                level.parents(&m.child, |q| found += usize::from(q == p));
                assert_eq!(found, 1, "{rules}: {p} -> {}", m.child);
                edges += 1;
            }
        }
        assert!(edges > 0, "{rules}: no quiet move sows 47 or 48 seeds");
    }
}
