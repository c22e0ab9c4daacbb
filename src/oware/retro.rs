//! Unmoves: the predecessors of a position within its own level.
//!
//! Retrograde analysis walks the move graph backwards. Captures leave the
//! level, so inside a level only non-capturing moves matter; this module
//! enumerates, for a position `q`, every in-domain position `p` of the same
//! level with a legal non-capturing move whose child is `q` — exactly the
//! inverse of the `captured == 0` moves of [`super::rules::moves`].

use super::board::{Board, PITS};
use super::rules::{Rules, capture_run};

/// Calls `f(p)` for each predecessor `p` of `child` (see the module docs).
/// Each (predecessor, move) edge is reported once; distinct moves of one
/// position always lead to distinct children, so each `p` appears once.
#[inline]
pub fn for_each_predecessor(rules: Rules, child: &Board, mut f: impl FnMut(&Board)) {
    // `after` is the board right after the move, seen by the mover.
    let after = child.swapped().0;
    let opponent: u8 = after[6..].iter().sum();
    if opponent == 0 {
        return; // such a move starves the opponent: never a non-capturing edge
    }
    for pit in 0..6 {
        if after[pit] != 0 {
            continue; // the pit sown from is always empty afterwards
        }
        let mut p = after;
        let mut k = pit;
        for s in 1..=usize::from(u8::MAX) {
            k = if k + 1 == PITS { 0 } else { k + 1 };
            if k == pit {
                k = if k + 1 == PITS { 0 } else { k + 1 };
            }
            if p[k] == 0 {
                break; // this seed was never sown: neither are longer moves
            }
            p[k] -= 1;
            p[pit] = s as u8;
            if k >= 6 && !quiet_landing(rules, &after, k, opponent) {
                continue; // that move captures
            }
            let pred = Board(p);
            if pred.in_domain() {
                f(&pred);
            }
        }
    }
}

/// Whether a lap ending in opponent pit `last` of `after` captures nothing.
#[inline]
fn quiet_landing(rules: Rules, after: &[u8; PITS], last: usize, opponent: u8) -> bool {
    let (got, _) = capture_run(after, last);
    got == 0 || (rules == Rules::Abapa && got == opponent)
}
