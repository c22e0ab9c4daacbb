//! The position numbering: published test vectors, level sizes, and exact
//! rank/unrank/advance agreement over whole levels.

use mancaladb::oware::{Board, Encoder, level_size};

fn board(s: &str) -> Board {
    Board::parse(&[s]).unwrap()
}

/// C(n, k) in 128 bits.
fn choose(n: u64, k: u64) -> u128 {
    (0..k).fold(1u128, |c, i| c * u128::from(n - i) / u128::from(i + 1))
}

/// The index of `b` counted from the numbering's definition (db/README,
/// which writes this count out as the formula `index(x)`):
/// how many boards of its level in the stored domain (an empty pit among
/// 6..12) come before it in the order of `(x11, ..., x0)`. Pit by pit from
/// 11 down, each smaller count there adds the ways to fill the pits below
/// with the seeds left: all of them, less those that leave every opponent
/// pit filled when none above is empty. No table of the encoder is used.
fn counted_rank(b: &Board) -> u64 {
    let mut left = b.seeds() as u64;
    let mut empty_above = false; // an empty opponent pit among those fixed
    let mut before: u128 = 0;
    for k in (0..12).rev() {
        let x = u64::from(b.pits()[k]);
        let below = k as u64; // pits k-1..0
        let opponent_below = below.saturating_sub(6); // pits k-1..6
        for v in 0..x {
            let rest = left - v;
            let empty = empty_above || (k >= 6 && v == 0);
            let all = match below {
                0 => u128::from(rest == 0),
                m => choose(rest + m - 1, m - 1),
            };
            let filled = match (empty, below) {
                (true, _) => 0,
                (false, 0) => all,
                (false, m) if rest >= opponent_below => {
                    choose(rest - opponent_below + m - 1, m - 1)
                }
                (false, _) => 0,
            };
            before += all - filled;
        }
        left -= x;
        empty_above |= k >= 6 && x == 0;
    }
    before as u64
}

#[test]
fn index_vectors_agree_with_counting() {
    let e = Encoder::new(48);
    // The specification's test vectors (issue 2; the first is the
    // published database's example, db/README), and the last board of
    // level 48; each counted too.
    for (b, index) in [
        ("1 1 1 1 1 2 4 2 3 0 0 0", 588_953u64),
        ("5 0 0 0 0 0 0 0 0 0 0 0", 0),
        ("0 0 0 0 0 0 0 0 0 0 0 5", 4367),
        ("2 2 2 2 2 2 2 2 2 0 0 0", 979_664),
        ("3 0 1 2 0 4 0 6 0 1 2 1", 42_131_429),
        ("4 4 4 4 4 4 4 4 4 4 4 0", 14_936_534_957),
        ("0 0 0 0 0 0 0 0 0 0 0 48", level_size(48) - 1),
    ] {
        let b = board(b);
        let counted = counted_rank(&b);
        assert_eq!(counted, index, "{b}: the count itself");
        assert_eq!(e.index_of(&b).unwrap(), counted, "{b}");
        assert_eq!(e.board_at(b.seeds(), counted).unwrap(), b);
        // A ranker sized for exactly the level agrees with the full one.
        assert_eq!(Encoder::new(b.seeds()).index_of(&b).unwrap(), counted);
    }
    // And boards of every level, drawn by a fixed generator.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for n in 1..=48 {
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let index = x % level_size(n);
            let b = e.board_at(n, index).unwrap();
            assert_eq!(counted_rank(&b), index, "{b}");
            assert_eq!(e.index_of(&b).unwrap(), index, "{b}");
        }
    }
}

#[test]
fn level_sizes() {
    let e = Encoder::new(48);
    assert_eq!(level_size(16), 12_685_179);
    assert_eq!(level_size(20), 80_214_915);
    assert_eq!(level_size(48), 203_648_015_935);
    let all: u64 = (0..=48).filter(|&n| n != 47).map(level_size).sum();
    assert_eq!(all, 889_063_398_405);
    for n in 0..=48 {
        assert_eq!(e.level_size(n), level_size(n), "level {n}");
    }
    // Past an encoder's own levels it counts as the free function does.
    let small = Encoder::new(5);
    for n in [5, 6, 48, 1_000, usize::MAX] {
        assert_eq!(small.level_size(n), level_size(n), "level {n}");
    }
}

/// `boards` walks whole levels in index order: each board is the one at
/// its index, and the walk holds the level's every board once.
#[test]
fn boards_walk_whole_levels() {
    for n in 0..=9 {
        let e = Encoder::new(n);
        let mut count = 0u64;
        for (i, b) in e.boards(n, 0..level_size(n)).unwrap() {
            assert_eq!((i, e.index_of(&b).unwrap()), (count, i), "{b}");
            assert_eq!(b.seeds(), n);
            count += 1;
        }
        assert_eq!(count, level_size(n), "level {n}");
        // Its one-loop walk (`fold`, under `for_each`) is the same walk,
        // from any start.
        for start in [0, level_size(n) / 3, level_size(n).saturating_sub(1)] {
            let (mut by_next, mut by_fold) = (Vec::new(), Vec::new());
            let walk = || e.boards(n, start..level_size(n)).unwrap();
            for x in walk() {
                by_next.push(x); // a `for` loop steps with `next`
            }
            walk().for_each(|x| by_fold.push(x));
            assert_eq!(by_next, by_fold, "level {n} from {start}");
        }
    }
    let e = Encoder::new(12);
    let size = level_size(12);
    let tail: Vec<_> = e.boards(12, size - 3..size).unwrap().collect();
    let want: Vec<_> = (size - 3..size)
        .map(|i| (i, e.board_at(12, i).unwrap()))
        .collect();
    assert_eq!(tail, want);
    assert_eq!(e.boards(12, 5..5).unwrap().count(), 0);
    assert_eq!(
        e.boards(12, 0..size + 1).unwrap_err().to_string(),
        format!(
            "indices 0..{} outside level 12, which has {size} positions (0..{size})",
            size + 1
        )
    );
    // A start beyond the level is named as such, not as a start past an
    // end (Python's `boards(12, start)` gives the level's size as the end).
    assert_eq!(
        e.boards(12, size + 1..size).unwrap_err().to_string(),
        format!(
            "start {} outside level 12, which has {size} positions (0..{size})",
            size + 1
        )
    );
    let start = 7;
    assert_eq!(
        e.boards(12, start..start - 1).unwrap_err().to_string(),
        "indices 7..6: the start is past the end"
    );
    assert!(e.boards(13, 0..1).is_err());
}

#[test]
fn checked_rank_and_unrank_refuse_what_is_not_stored() {
    let e = Encoder::new(48);
    let b = board("1 1 1 1 1 2 4 2 3 0 0 0");
    assert_eq!(e.index_of(&b).unwrap(), 588_953);
    assert_eq!(e.board_at(16, 588_953).unwrap(), b);
    // Every opponent pit filled: outside the numbering.
    let full = board("1 1 1 1 1 1 1 1 1 1 1 1");
    assert!(
        e.index_of(&full)
            .unwrap_err()
            .to_string()
            .contains("not stored")
    );
    // The last index of a level is there, the next is not.
    let last = level_size(5) - 1;
    assert_eq!(
        e.board_at(5, last).unwrap(),
        board("0 0 0 0 0 0 0 0 0 0 0 5")
    );
    assert_eq!(
        e.board_at(5, last + 1).unwrap_err().to_string(),
        "index 4368 outside level 5, which has 4368 positions (0..4368)"
    );
    assert!(e.board_at(49, 0).is_err());
    assert_eq!(
        Encoder::new(10)
            .index_of(&board("11 0 0 0 0 0 0 0 0 0 0 0"))
            .unwrap_err()
            .to_string(),
        "11 0 0 0 0 0 0 0 0 0 0 0 holds 11 seeds; levels go up to 10"
    );
    assert!(e.check_indices(5, 0, 4368).is_ok());
    assert!(e.check_indices(5, 3, 2).is_err());
    assert!(e.check_indices(5, 0, 4369).is_err());
}

#[test]
fn stored_index_is_the_rank_of_a_stored_board_and_refuses_the_others() {
    let e = Encoder::new(48);
    // Opponent sides of counts 0..=3 and 40 in each pit, beside a mover
    // side of one seed in pit 0: in the domain exactly when a pit among
    // 6..11 is empty.
    let counts = [0u8, 1, 2, 3, 40];
    for code in 0..counts.len().pow(6) {
        let mut pits = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut c = code;
        for pit in &mut pits[6..] {
            *pit = counts[c % counts.len()];
            c /= counts.len();
        }
        let seeds: usize = pits.iter().map(|&v| usize::from(v)).sum();
        if seeds > 48 {
            let err = Board::new(pits).unwrap_err().to_string();
            assert_eq!(
                err,
                format!("an Oware board holds {seeds} seeds; a game holds at most 48")
            );
            continue;
        }
        let b = Board::new(pits).unwrap();
        match e.stored_index(&b) {
            Ok((n, index)) => {
                assert!(pits[6..].contains(&0), "{b}");
                assert_eq!(n, seeds, "{b}");
                assert_eq!(e.board_at(n, index).unwrap(), b);
            }
            Err(err) => {
                assert!(!pits[6..].contains(&0), "{b}: {err}");
                let err = err.to_string();
                assert!(err.contains("is not stored"), "{err}");
            }
        }
    }
}

/// A walk of `boards` knows how many boards it has left: its size hint is
/// exactly that count at every step, so `collect` reserves once and
/// `ExactSizeIterator`-style users can trust it.
#[test]
fn boards_hint_the_exact_number_left() {
    let e = Encoder::new(7);
    let size = level_size(7);
    for range in [0..size, size / 2..size / 2 + 3, 9..9, size - 2..size] {
        let mut walk = e.boards(7, range.clone()).unwrap();
        let mut left = (range.end - range.start) as usize;
        loop {
            assert_eq!(walk.size_hint(), (left, Some(left)), "{range:?}");
            if walk.next().is_none() {
                break;
            }
            left -= 1;
        }
        assert_eq!(left, 0, "{range:?}");
    }
}
