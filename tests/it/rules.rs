//! The rules, bullet by bullet, on hand-worked boards (both rule sets); the
//! move generator against the rules played seed by seed, on boards of every
//! level; and the values they imply on forced lines, derived here by
//! simulation rather than by the solver.

use std::collections::HashMap;

use crate::common::{boards_past_the_whole_levels, solved};
use mancaladb::oware::{Board, Encoder, Move, Rules, captures, moves, quiet_moves};

fn board(s: &str) -> Board {
    Board::parse(&[s]).unwrap()
}

fn legal(rules: Rules, s: &str) -> Vec<Move> {
    moves(rules, &board(s)).as_slice().to_vec()
}

/// The board after a move, seen again by the player who made it.
fn after(m: &Move) -> String {
    m.child.swapped().to_string()
}

#[test]
fn sowing_skips_the_emptied_pit_on_every_lap() {
    for rules in Rules::ALL {
        // 12 seeds from pit 0: one in each of pits 1..11, the 12th skips pit 0.
        let m = legal(rules, "12 0 0 0 0 0 0 0 0 0 0 1");
        assert_eq!(after(&m[0]), "0 2 1 1 1 1 1 1 1 1 1 2");
        assert_eq!(m[0].captured, 0);
        // 23 seeds from pit 3: two laps of 11, the last seed in pit 4.
        let m = legal(rules, "0 0 0 23 0 0 0 0 0 0 0 0");
        assert_eq!(after(&m[0]), "2 2 2 0 3 2 2 2 2 2 2 2");
    }
}

#[test]
fn captures_run_backwards_over_twos_and_threes() {
    for rules in Rules::ALL {
        // Pit 5 sows into 6, 7, 8 making 2, 2, 2: all three are taken.
        let m = legal(rules, "0 0 0 0 0 3 1 1 1 0 4 0");
        assert_eq!((m[0].pit, m[0].captured), (5, 6));
        assert_eq!(after(&m[0]), "0 0 0 0 0 0 0 0 0 0 4 0");
        // Pit 7 ends at 5 seeds: the run stops there, only pit 8 is taken.
        let m = legal(rules, "0 0 0 0 0 3 1 4 1 0 4 0");
        assert_eq!(m[0].captured, 2);
        assert_eq!(after(&m[0]), "0 0 0 0 0 0 2 5 0 0 4 0");
        // A 2 made on the mover's own side is never captured.
        let m = legal(rules, "0 0 0 1 1 0 1 0 0 0 0 0");
        assert_eq!(m.iter().map(|m| m.captured).sum::<u8>(), 0);
        // The run stops at the mover's side, even at a pit holding 2.
        let m = legal(rules, "0 0 0 0 2 1 1 0 0 0 0 5");
        assert_eq!((m[0].pit, m[0].captured), (4, 2));
        assert_eq!(after(&m[0]), "0 0 0 0 0 2 0 0 0 0 0 5");
    }
}

#[test]
fn a_move_that_starves_the_opponent_is_illegal_when_another_feeds() {
    for rules in Rules::ALL {
        // The opponent has nothing: pit 4 would leave them empty, pit 5 feeds.
        let m = legal(rules, "0 0 0 0 1 3 0 0 0 0 0 0");
        assert_eq!(m.iter().map(|m| m.pit).collect::<Vec<_>>(), [5]);
    }
    // The capture from pit 5 would take the opponent's last seeds (Awari):
    // only pit 0 is legal.
    let m = legal(Rules::Awari, "1 0 0 0 0 1 1 0 0 0 0 0");
    assert_eq!(
        m.iter().map(|m| (m.pit, m.captured)).collect::<Vec<_>>(),
        [(0, 0)]
    );
}

#[test]
fn when_every_move_starves_the_mover_takes_every_seed() {
    for rules in Rules::ALL {
        // No move can reach the opponent: each ends the game, taking both.
        let m = legal(rules, "1 0 0 1 0 0 0 0 0 0 0 0");
        assert_eq!(m.len(), 2);
        assert!(m.iter().all(|m| m.captured == 2 && m.child == Board::EMPTY));
    }
    // Awari: the only move is a grand slam, so it ends the game with all 4.
    let m = legal(Rules::Awari, "0 0 0 0 0 2 1 1 0 0 0 0");
    assert_eq!(
        m.iter().map(|m| (m.pit, m.captured)).collect::<Vec<_>>(),
        [(5, 4)]
    );
}

#[test]
fn abapa_grand_slam_is_legal_and_captures_nothing() {
    let m = legal(Rules::Abapa, "0 0 0 0 0 2 1 1 0 0 0 0");
    assert_eq!(
        m.iter().map(|m| (m.pit, m.captured)).collect::<Vec<_>>(),
        [(5, 0)]
    );
    assert_eq!(after(&m[0]), "0 0 0 0 0 0 2 2 0 0 0 0");
    // Next to a move that feeds, the grand slam stays legal under Abapa and
    // is illegal under Awari.
    let s = "0 0 0 1 0 2 1 1 0 0 0 0";
    assert_eq!(
        legal(Rules::Abapa, s)
            .iter()
            .map(|m| m.pit)
            .collect::<Vec<_>>(),
        [3, 5]
    );
    assert_eq!(
        legal(Rules::Awari, s)
            .iter()
            .map(|m| m.pit)
            .collect::<Vec<_>>(),
        [3]
    );
}

#[test]
fn no_seeds_means_no_move() {
    for rules in Rules::ALL {
        assert!(legal(rules, "0 0 0 0 0 0 1 2 0 0 0 0").is_empty());
    }
}

/// The legal moves of `board` as the README's rules state them, played out
/// seed by seed on a plain array: an independent statement of the rules
/// that [`moves`] (sowing by table, captures on a packed board) must match.
fn moves_by_the_book(rules: Rules, board: &Board) -> Vec<Move> {
    let pits = board.pits();
    let (mut legal, mut starving) = (Vec::new(), Vec::new());
    for pit in (0..6).filter(|&pit| pits[pit] > 0) {
        // Sow one seed per pit from the next on, skipping the emptied pit.
        let mut sown = pits;
        let (mut left, mut last) = (sown[pit], pit);
        sown[pit] = 0;
        while left > 0 {
            last = (last + 1) % 12;
            if last != pit {
                sown[last] += 1;
                left -= 1;
            }
        }
        // Capture backwards from the last pit over opponent pits of 2 or 3.
        let mut after = sown;
        let mut captured = 0;
        let mut k = last;
        while k >= 6 && matches!(after[k], 2 | 3) {
            captured += after[k];
            after[k] = 0;
            k -= 1;
        }
        if captured > 0 && after[6..].iter().all(|&v| v == 0) && rules == Rules::Abapa {
            // Abapa's grand slam: legal, captures nothing.
            (after, captured) = (sown, 0);
        }
        if after[6..].iter().all(|&v| v == 0) {
            starving.push(pit);
            continue;
        }
        let child: [u8; 12] = std::array::from_fn(|k| after[(k + 6) % 12]);
        legal.push(Move {
            pit: pit as u8,
            captured,
            child: Board::new(child).unwrap(),
        });
    }
    if !legal.is_empty() {
        return legal;
    }
    // Every move starves the opponent: each is legal and takes every seed.
    let all = board.seeds() as u8;
    starving
        .into_iter()
        .map(|pit| Move {
            pit: pit as u8,
            captured: all,
            child: Board::EMPTY,
        })
        .collect()
}

/// [`moves`] gives the moves the rules state on every board of levels
/// 0..=10, on sampled boards of every level up to the whole game's 48
/// seeds with laps round the board of up to 48 seeds, and on each of
/// those boards turned round (the opponent to move), under both rule sets;
/// so do [`captures`] and [`quiet_moves`], which the solver's forward pass
/// reads instead.
#[test]
fn moves_are_the_rules_played_seed_by_seed_on_boards_of_every_level() {
    let mut boards: Vec<Board> = (0..=10)
        .flat_map(|n| {
            let e = Encoder::new(n);
            let all: Vec<Board> = e
                .boards(n, 0..e.level_size(n))
                .unwrap()
                .map(|(_, b)| b)
                .collect();
            all
        })
        .chain(boards_past_the_whole_levels())
        .collect();
    boards.extend(boards.clone().iter().map(Board::swapped));
    for rules in Rules::ALL {
        let mut seen = [0usize; 4]; // quiet, captures, every move starving, long laps
        for b in &boards {
            let want = moves_by_the_book(rules, b);
            assert_eq!(moves(rules, b).as_slice(), want, "{rules} {b}");
            // The forward pass's two shortcuts: the captures alone, and
            // the number of quiet moves.
            let (caps, quiet) = captures(rules, b);
            let want_caps: Vec<Move> = want.iter().filter(|m| m.captured > 0).copied().collect();
            let want_quiet = want.len() - want_caps.len();
            assert_eq!(caps.as_slice(), want_caps, "{rules} {b}");
            assert_eq!(usize::from(quiet), want_quiet, "{rules} {b}");
            assert_eq!(
                usize::from(quiet_moves(rules, b)),
                want_quiet,
                "{rules} {b}"
            );
            for m in &want {
                let starving = m.child == Board::EMPTY && m.captured as usize == b.seeds();
                seen[usize::from(m.captured > 0) + usize::from(starving)] += 1;
                seen[3] += usize::from(b.pits()[usize::from(m.pit)] >= 12);
            }
        }
        assert!(seen.iter().all(|&n| n > 1000), "{rules}: {seen:?}");
    }
}

/// The value of `start` by playing out its line, when every position on it
/// has a single legal move: the alternating sum of captures, plus `-n` if a
/// player is left without seeds, or nothing more once a position repeats
/// (endless play splits the rest evenly). `None` if the line has a choice;
/// the flag tells whether the line ended in a cycle.
fn forced_value(rules: Rules, start: &Board) -> Option<(i32, bool)> {
    let mut seen = HashMap::new();
    let (mut pos, mut sign, mut total) = (*start, 1i32, 0i32);
    loop {
        if seen.insert(pos, ()).is_some() {
            return Some((total, true)); // endless play from here on: worth 0
        }
        let ms = moves(rules, &pos);
        match ms.as_slice() {
            [] => return Some((total - sign * pos.seeds() as i32, false)),
            [m] => {
                total += sign * i32::from(m.captured);
                if m.child.seeds() == 0 {
                    return Some((total, false));
                }
                pos = m.child;
                sign = -sign;
            }
            _ => return None,
        }
    }
}

#[test]
fn forced_lines_cycles_included_have_the_values_the_rules_give() {
    for rules in Rules::ALL {
        let levels = solved(rules);
        let (mut forced, mut cycles) = (0, 0);
        for (n, values) in levels.iter().enumerate().skip(1) {
            let e = Encoder::new(n);
            for (i, ref b) in e.boards(n, 0..e.level_size(n)).unwrap() {
                if let Some((v, cycle)) = forced_value(rules, b) {
                    forced += 1;
                    cycles += usize::from(cycle);
                    assert_eq!(i32::from(values[i as usize]), v, "{rules} {b}");
                }
            }
        }
        assert!(forced > 1000, "{rules}: only {forced} forced positions");
        assert!(cycles >= 20, "{rules}: only {cycles} forced cycles");
        // For instance two lone seeds chasing each other round the board.
        assert_eq!(
            forced_value(rules, &board("0 0 0 0 1 0 0 0 0 0 1 0")),
            Some((0, true))
        );
    }
}
