//! Whole-level invariants that follow from the rules alone, over every
//! position of levels 0..=12 of both rule sets.

use crate::common::solved;
use mancaladb::oware::{Encoder, Rules, moves};

#[test]
fn invariants_hold_on_whole_levels() {
    for rules in Rules::ALL {
        let levels = solved(rules);
        for (n, values) in levels.iter().enumerate().take(13) {
            let e = Encoder::new(n);
            let nn = n as i8;
            for (i, ref b) in e.boards(n, 0..e.level_size(n)).unwrap() {
                let v = values[i as usize];
                // The stone difference of n seeds lies in -n..=n.
                assert!((-nn..=nn).contains(&v), "{rules} {b}: {v}");
                let ms = moves(rules, b);
                if b.own_seeds() == 0 {
                    // No seeds to move: the opponent takes all n.
                    assert_eq!(v, -nn, "{rules} {b}");
                } else if ms.as_slice().iter().all(|m| m.child.seeds() == 0) {
                    // Every move starves the opponent: the mover takes all n.
                    assert_eq!(v, nn, "{rules} {b}");
                } else {
                    // The value is the best move's: the most any single
                    // move guarantees, captured - value(child).
                    let best = ms.as_slice().iter().map(|m| {
                        let rest = n - usize::from(m.captured);
                        let child = &levels[rest];
                        m.captured as i8 - child[e.index_of(&m.child).unwrap() as usize]
                    });
                    assert_eq!(Some(v), best.max(), "{rules} {b}");
                }
            }
        }
    }
}
