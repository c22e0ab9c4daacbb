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

/// The index of `b` counted from the numbering's definition (db/README):
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
        let x = u64::from(b.0[k]);
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
        assert_eq!(e.rank(&b), counted, "{b}");
        assert_eq!(e.unrank(b.seeds(), counted), b);
        // A ranker sized for exactly the level agrees with the full one.
        assert_eq!(Encoder::new(b.seeds()).rank(&b), counted);
    }
    // And boards of every level, drawn by a fixed generator.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for n in 1..=48 {
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let index = x % level_size(n);
            let b = e.unrank(n, index);
            assert_eq!(counted_rank(&b), index, "{b}");
            assert_eq!(e.rank(&b), index, "{b}");
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
}

/// Walking a level with `advance` visits every domain board once, in rank
/// order, and `unrank` inverts `rank` at every index.
#[test]
fn whole_levels_round_trip() {
    for n in 0..=11 {
        let e = Encoder::new(n);
        let mut b = e.unrank(n, 0);
        let mut count = 0u64;
        loop {
            assert!(b.in_domain() && b.seeds() == n);
            assert_eq!(e.rank(&b), count);
            assert_eq!(e.unrank(n, count), b);
            count += 1;
            if !e.advance(&mut b) {
                break;
            }
        }
        assert_eq!(count, level_size(n), "level {n}");
    }
}

/// On a large level, sampled indices round-trip and `advance` steps to the
/// next index.
#[test]
fn sampled_large_level_round_trip() {
    let n = 30;
    let e = Encoder::new(n);
    let size = e.level_size(n);
    let mut i = 0u64;
    while i < size {
        let mut b = e.unrank(n, i);
        assert_eq!(e.rank(&b), i);
        if e.advance(&mut b) {
            assert_eq!(e.rank(&b), i + 1);
        }
        i += 9_999_991;
    }
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
    assert!(
        Encoder::new(10)
            .index_of(&board("11 0 0 0 0 0 0 0 0 0 0 0"))
            .is_err()
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
        let mut b = Board([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let mut c = code;
        for p in 6..12 {
            b.0[p] = counts[c % counts.len()];
            c /= counts.len();
        }
        let seeds = b.seeds();
        match e.stored_index(&b) {
            Ok((n, index)) => {
                assert!(b.0[6..].contains(&0) && seeds <= 48, "{b}");
                assert_eq!((n, index), (seeds, e.rank_in(seeds, &b)), "{b}");
            }
            Err(err) => {
                assert!(!b.0[6..].contains(&0) || seeds > 48, "{b}: {err}");
                let err = err.to_string();
                assert!(
                    err.contains("is not stored") || err.contains("levels go up to 48"),
                    "{err}"
                );
            }
        }
    }
}
