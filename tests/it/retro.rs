//! Both ways of finding predecessors are exactly the inverse of the quiet
//! moves, on whole levels of both rule sets and around boards of every
//! level up to the whole game: the builder's unmoves (the retrograde solver
//! stands on them) and the forward checker's candidate-and-confirm search
//! (its schedule stands on it).

use std::collections::HashSet;

use crate::common::boards_past_the_whole_levels;
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

/// The given number of lower levels, never read: parents do not depend
/// on them, and levels up to 48 could not be held here.
struct Unread(usize);

impl LowerLevels for Unread {
    type Reader = ();

    fn levels(&self) -> usize {
        self.0
    }

    fn reader(&self) {}

    fn value(&self, _: &mut (), level: usize, index: u64) -> mancaladb::error::Result<i8> {
        panic!("level {level} read at {index}")
    }
}

/// Checks that `predecessors(q, f)` is exactly the inverse of the quiet
/// moves around `boards`: every quiet move of each board has it among its
/// child's predecessors once, and every predecessor of each board is an
/// in-domain board of the same level with one quiet move to it.
fn inverts_quiet_moves_around(
    rules: Rules,
    boards: &[Board],
    predecessors: impl Fn(&Board, &mut dyn FnMut(Board)),
) -> (usize, usize) {
    let (mut edges, mut long) = (0, 0);
    for p in boards {
        for m in moves(rules, p)
            .as_slice()
            .iter()
            .filter(|m| m.captured == 0)
        {
            let mut found = 0;
            predecessors(&m.child, &mut |q| found += usize::from(q == *p));
            assert_eq!(found, 1, "{rules}: {p} -> {}", m.child);
            edges += 1;
            long += usize::from(p.pits()[usize::from(m.pit)] >= PITS as u8);
        }
    }
    for q in boards {
        let mut seen = HashSet::new();
        predecessors(q, &mut |p| {
            assert!(
                p.in_domain() && p.seeds() == q.seeds(),
                "{rules}: {p} -> {q}"
            );
            let to_q = moves(rules, &p)
                .as_slice()
                .iter()
                .filter(|m| m.captured == 0 && m.child == *q)
                .count();
            assert_eq!(to_q, 1, "{rules}: {p} -> {q} is not one quiet move");
            assert!(seen.insert(p), "{rules}: {p} -> {q} twice");
            edges += 1;
        });
    }
    (edges, long)
}

/// Both ways of finding predecessors invert the quiet moves around boards
/// of every level up to the whole game's 48 seeds, laps of 12 seeds and
/// more from one pit included (the builder's unmoves take those back one
/// by one, apart from the shorter laps).
#[test]
fn unmoves_invert_quiet_moves_on_boards_of_every_level() {
    let mut boards = boards_past_the_whole_levels();
    boards.retain(Board::in_domain);
    for rules in Rules::ALL {
        let (edges, long) = inverts_quiet_moves_around(rules, &boards, |q, f| {
            for_each_predecessor(rules, q, |p| f(*p))
        });
        assert!(
            edges > 50_000 && long > 1_000,
            "{rules}: {edges} edges, {long} long laps"
        );
        for n in 11..=MAX_SEEDS {
            let lower = Unread(n);
            let level = OwareLevel::new(rules, n, &lower);
            let at_n: Vec<Board> = boards.iter().filter(|b| b.seeds() == n).copied().collect();
            inverts_quiet_moves_around(rules, &at_n, |q, f| level.parents(q, &mut *f));
        }
    }
}
