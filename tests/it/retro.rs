//! Both ways of finding predecessors are exactly the inverse of the quiet
//! moves, on whole levels of both rule sets: the builder's unmoves (the
//! retrograde solver stands on them) and the forward checker's
//! candidate-and-confirm search (its schedule stands on it).

use std::collections::HashSet;

use mancaladb::oware::forward::{Game, OwareLevel};
use mancaladb::oware::retro::for_each_predecessor;
use mancaladb::oware::{Board, Encoder, Rules, level_size, moves};

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
