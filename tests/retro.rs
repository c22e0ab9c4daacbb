//! Unmove generation is exactly the inverse of the quiet moves, on whole
//! levels of both rule sets: the retrograde solver stands on this.

use std::collections::HashSet;

use mancaladb::oware::retro::for_each_predecessor;
use mancaladb::oware::{Board, Encoder, Rules, moves};

#[test]
fn predecessors_invert_quiet_moves_on_whole_levels() {
    for rules in Rules::ALL {
        for n in 0..=10 {
            let e = Encoder::new(n);
            let size = e.level_size(n);
            // Every quiet edge, found forwards.
            let mut forward: HashSet<(Board, Board)> = HashSet::new();
            e.for_range(n, 0, size, |_, p| {
                for m in moves(rules, p)
                    .as_slice()
                    .iter()
                    .filter(|m| m.captured == 0)
                {
                    assert!(m.child.in_domain() && m.child.seeds() == n);
                    forward.insert((*p, m.child));
                }
            });
            // The same edges, found backwards, each once.
            let mut backward = 0usize;
            e.for_range(n, 0, size, |_, q| {
                for_each_predecessor(rules, q, |p| {
                    assert!(
                        forward.contains(&(*p, *q)),
                        "{rules}: {p} -> {q} is not a quiet move"
                    );
                    backward += 1;
                });
            });
            assert_eq!(backward, forward.len(), "{rules} level {n}: edges missed");
        }
    }
}
