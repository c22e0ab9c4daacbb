//! Omweso moves on hand-worked boards, facts 1-3 checked exhaustively for
//! small seed counts (and by sampling beyond), and the `loops` command.

use std::collections::HashSet;

use crate::common::{assert_success, refuses, run, succeeds};
use mancaladb::compose::Ranker;
use mancaladb::omweso::moves::{
    Criterion, Position, Variant, Verdict, analyze, analyze_start, analyze_unless, starts,
};
use mancaladb::omweso::relay::{ASK_EVERY, Relay, certificate, lap, run as relay, unlap};
use mancaladb::omweso::{Dir, Side};

fn side(pits: &[(usize, u8)]) -> Side {
    let mut s = Side::EMPTY;
    for &(p, v) in pits {
        s.set(p, v);
    }
    s
}

const PLAY: Variant = Variant { first_turn: false };

#[test]
fn a_long_analysis_asks_whether_to_stop_and_stops_when_told() {
    // Pit 0 of `51 1 0 1 … 1` loops, proven at lap 265,066,163 (a pure
    // relay: the tight walk asks every ASK_EVERY laps).
    let me = Side::parse(&["51 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"], "a side").unwrap();
    let pos = Position {
        me,
        opp: Side::EMPTY,
    };
    let mut asked = 0u64;
    let whole = analyze_unless(PLAY, pos, Some(0), u64::MAX, &mut || {
        asked += 1;
        false
    })
    .unwrap()
    .unwrap();
    assert_eq!(whole, analyze(PLAY, pos, Some(0), u64::MAX).unwrap());
    assert_eq!(whole.starts[0].walked, 265_066_163);
    assert_eq!(asked, 265_066_163 / ASK_EVERY);
    // Told to stop at the third question: no answer.
    let mut asked = 0;
    let stopped = analyze_unless(PLAY, pos, Some(0), u64::MAX, &mut || {
        asked += 1;
        asked == 3
    });
    assert_eq!(stopped.unwrap(), None);
    assert_eq!(asked, 3);
}

#[test]
fn relay_lifts_an_occupied_landing_pit_and_ends_in_an_empty_one() {
    // Pit 0 (2 seeds) sows 1 and 2; pit 2 was occupied, so it is lifted and
    // sows 3 and 4; pit 4 was empty: the move ends after 2 laps, 4 seeds.
    let pos = Position {
        me: side(&[(0, 2), (2, 1)]),
        opp: Side::EMPTY,
    };
    let r = analyze_start(PLAY, pos, 0, Dir::Ccw, 100).unwrap();
    assert_eq!(r.verdict, Verdict::Terminates);
    assert_eq!((r.line.laps, r.line.sown), (2, 4));
    assert_eq!(r.line.end.unwrap().me, side(&[(1, 1), (3, 1), (4, 1)]));
}

#[test]
fn the_emptied_start_pit_is_not_skipped() {
    // 16 seeds from pit 0: one in each of 1..15, the 16th back in pit 0,
    // which was emptied: the lap ends there.
    let l = lap(side(&[(0, 16)]), 0, Dir::Ccw);
    assert_eq!(l.last, 0);
    assert!(l.ends());
    assert_eq!(l.side.pits(), [1; 16]);
}

/// Lap 1: pit 6 (2 seeds) sows 7 and 8; inner pit 8 was occupied and faces
/// the opponent's pits 23 - 8 = 15 and 8 - 8 = 0, both holding seeds: the 3
/// seeds there are captured and sown from the pit after pit 6 (7, 8, 9);
/// pit 9 was empty, so the move ends. Pit 8 keeps its seeds.
fn capture_position() -> Position {
    Position {
        me: side(&[(6, 2), (8, 1)]),
        opp: side(&[(0, 1), (15, 2)]),
    }
}

#[test]
fn capture_resows_from_the_capturing_laps_start() {
    let r = analyze_start(PLAY, capture_position(), 6, Dir::Ccw, 100).unwrap();
    assert_eq!(r.verdict, Verdict::Terminates);
    assert_eq!((r.line.laps, r.line.sown, r.line.captures), (2, 5, 1));
    let end = r.line.end.unwrap();
    assert_eq!(end.me, side(&[(7, 2), (8, 3), (9, 1)]));
    assert_eq!(end.opp, Side::EMPTY);
}

#[test]
fn first_turn_has_no_captures() {
    // The same landing relays instead: pit 8 (2 seeds) sows 9 and 10.
    let r = analyze_start(
        Variant { first_turn: true },
        capture_position(),
        6,
        Dir::Ccw,
        100,
    )
    .unwrap();
    assert_eq!((r.line.laps, r.line.captures), (2, 0));
    assert_eq!(r.line.end.unwrap().me, side(&[(7, 1), (9, 1), (10, 1)]));
}

#[test]
fn reverse_capture_from_a_leftmost_pit() {
    // Pit 0 (3 seeds) clockwise sows 15, 14, 13; inner pit 13 was occupied
    // and faces the opponent's 10 and 5: a capture of 2, re-sown from the
    // pit after pit 0 (counter-clockwise: 1, 2); pit 2 was empty.
    // Counter-clockwise the same pit sows 1, 2, 3 and simply ends.
    let pos = Position {
        me: side(&[(0, 3), (13, 1)]),
        opp: side(&[(5, 1), (10, 1)]),
    };
    assert_eq!(starts(PLAY, pos), [(0, Dir::Ccw), (0, Dir::Cw)]);
    let cw = analyze_start(PLAY, pos, 0, Dir::Cw, 100).unwrap();
    assert_eq!(cw.verdict, Verdict::Terminates);
    assert_eq!(
        (cw.line.laps, cw.line.captures, cw.line.reversed.clone()),
        (2, 1, vec![1])
    );
    assert_eq!(
        cw.line.end.unwrap().me,
        side(&[(1, 1), (2, 1), (13, 2), (14, 1), (15, 1)])
    );
    let ccw = analyze_start(PLAY, pos, 0, Dir::Ccw, 100).unwrap();
    assert_eq!((ccw.line.laps, ccw.line.captures), (1, 0));
    // A pit that is not leftmost never sows clockwise, nor does a first turn.
    let pos2 = Position {
        me: side(&[(2, 3), (15, 1)]),
        opp: side(&[(5, 1), (10, 1)]),
    };
    assert_eq!(starts(PLAY, pos2), [(2, Dir::Ccw)]);
    assert_eq!(starts(Variant { first_turn: true }, pos), [(0, Dir::Ccw)]);
    // A start that is none of these is refused, never analysed.
    let refused = |r: mancaladb::Result<_>, what: &str| match r {
        Err(mancaladb::Error::Invalid(m)) => assert!(m.contains(what), "{m}"),
        Ok(_) => panic!("{what}: analysed"),
        Err(e) => panic!("{e}"),
    };
    refused(
        analyze_start(PLAY, pos2, 2, Dir::Cw, 100),
        "pit 2: no clockwise start there",
    );
    refused(
        analyze_start(PLAY, pos2, 16, Dir::Ccw, 100),
        "pit 16: pits are numbered 0..15",
    );
    refused(
        analyze_start(PLAY, pos2, 15, Dir::Ccw, 100),
        "pit 15 holds 1 seed",
    );
    refused(
        analyze_start(PLAY, pos2, 2, Dir::Ccw, 0),
        "a lap budget must be at least 1",
    );
}

#[test]
fn the_example_loop() {
    // 3 1 0 1 0 1 ... from pit 0: infinite, period 128 laps.
    let me = Side::parse(&["3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"], "side").unwrap();
    let pos = Position {
        me,
        opp: Side::EMPTY,
    };
    let r = analyze_start(PLAY, pos, 0, Dir::Ccw, 1_000_000).unwrap();
    assert_eq!(r.verdict, Verdict::Infinite);
    let c = r.line.cycle.unwrap();
    assert_eq!((c.period, c.pit, c.pos.me), (128, 0, me));
    // After 8 laps the side is the start rotated by an odd number of pits
    // (fact 5): the loop is proven there, its period 16 times that.
    assert_eq!(r.line.laps, 8);
    assert!(matches!(
        relay(me, 0, 1000),
        Relay::Loops {
            period: 128,
            laps: 8,
            ..
        }
    ));
    // Under its budget it is undecided, never finite.
    assert!(matches!(relay(me, 0, 7), Relay::Undecided { .. }));
    let r = analyze_start(PLAY, pos, 0, Dir::Ccw, 7).unwrap();
    assert_eq!(r.verdict, Verdict::Undecided);
}

/// Calls `f` on every side of `k` seeds.
fn every_side(k: usize, mut f: impl FnMut(Side)) {
    let r = Ranker::new(16, k, None);
    let mut x = [0u8; 16];
    r.unrank(k, 0, &mut x);
    loop {
        f(Side::from_pits(x));
        if !r.advance(&mut x) {
            break;
        }
    }
}

/// Brute-force relay: general cycle detection over every state visited.
/// `Ok(laps)` of a relay that ends, `Err(period)` of an endless one.
pub fn brute(side: Side, pit: usize) -> Result<u64, u64> {
    let mut seen = HashSet::new();
    let (mut s, mut p, mut laps) = (side, pit, 0u64);
    loop {
        if !seen.insert((s, p)) {
            return Err(laps); // a repeat of some state: an endless relay
        }
        let l = lap(s, p, Dir::Ccw);
        laps += 1;
        if l.ends() {
            return Ok(laps);
        }
        (s, p) = (l.side, l.last);
    }
}

fn check_facts(s: Side) {
    for p in 0..16 {
        let h = s.get(p);
        if h >= 1 {
            // Fact 1: the lap is inverted exactly.
            let l = lap(s, p, Dir::Ccw);
            assert_eq!(unlap(l.side, l.last), Some((s, p)), "{s} pit {p}");
        }
        if h >= 2 {
            // Fact 2: comparing with the start state alone decides the same
            // as general cycle detection; a loop has no lead-in.
            match (relay(s, p, 100_000), brute(s, p)) {
                (Relay::Ends { laps, .. }, Ok(b)) => assert_eq!(laps, b),
                (Relay::Loops { period, laps, .. }, Err(b)) => {
                    assert_eq!(period, b, "{s} pit {p}: lead-in");
                    // Fact 5: after `laps` laps the state is the start
                    // rotated, and the period is a multiple of `laps`.
                    assert_eq!(period % laps, 0);
                    let (mut t, mut q) = (s, p);
                    for _ in 0..laps {
                        let l = lap(t, q, Dir::Ccw);
                        (t, q) = (l.side, l.last);
                    }
                    let r = (q + 16 - p) % 16;
                    assert_eq!(t, Side(s.0.rotate_left(8 * r as u32)), "{s} pit {p}");
                }
                (a, b) => panic!("{s} pit {p}: {a:?} vs {b:?}"),
            }
            // Fact 3: an empty pit behind the start means the relay ends.
            if certificate(s, p, Dir::Ccw) {
                assert!(
                    matches!(relay(s, p, 100_000), Relay::Ends { .. }),
                    "{s} pit {p}"
                );
            }
        }
    }
}

#[test]
fn facts_1_to_3_exhaustively_for_small_seed_counts() {
    // Every state of every side of up to 8 seeds; of 11 seeds (the first
    // loops), every side that can be sown from pit 0, every start checked.
    for k in 1..=8 {
        every_side(k, check_facts);
    }
    let mut loops = 0;
    every_side(11, |s| {
        if s.get(0) >= 2 {
            check_facts(s);
            loops += usize::from(matches!(relay(s, 0, 1000), Relay::Loops { .. }));
        }
    });
    assert_eq!(loops, 8, "128 looping pairs / 16 starts");
}

#[test]
fn facts_1_to_3_on_sampled_sides_up_to_32_seeds() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for k in [13usize, 16, 20, 24, 28, 32] {
        let r = Ranker::new(16, k, None);
        let n = r.count(k);
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut pits = [0u8; 16];
            r.unrank(k, x % n, &mut pits);
            check_facts(Side::from_pits(pits));
        }
    }
}

#[test]
fn loops_command_reports_the_example() {
    let out = run(&["loops", "--json", "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"]);
    assert_success(&out);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let start = &json["starts"][0];
    assert_eq!(
        (
            &start["pit"],
            &start["direction"],
            &start["verdict"],
            &start["laps"],
            &start["period"]
        ),
        (
            &0.into(),
            &"ccw".into(),
            &"infinite".into(),
            &8.into(),
            &128.into()
        ),
        "{json}"
    );
    assert_eq!(
        (&start["choice_points"], &start["captures"]),
        (&0.into(), &0.into())
    );
    let out = run(&["loops", "--pit", "0", "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("period 128 laps") && text.contains("recurrence"),
        "{text}"
    );
    // The text names the start's direction and writes sides as their 16
    // counts.
    let zeros = "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0";
    assert!(text.starts_with("pit 0 ccw: infinite\n"), "{text}");
    // A line without choices walks no other: nothing said of lines.
    assert!(
        ["choice points", "lines:", "reverse"]
            .iter()
            .all(|w| !text.contains(w)),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "repeating state: lift pit 0 of 3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 | opponent {zeros}\n"
        )),
        "{text}"
    );
    // A start with the pit behind it empty is certified to end.
    let out = run(&["loops", "--pit", "1", "0 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("terminates") && text.contains("certificate"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "ends with: 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 | opponent {zeros}\n"
        )),
        "{text}"
    );
    // The reverse capture of `reverse_capture_from_a_leftmost_pit`, clockwise.
    let out = run(&[
        "loops",
        "--any-seeds",
        "--opponent",
        "0 0 0 0 0 1 0 0 0 0 1 0 0 0 0 0",
        "3 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\npit 0 cw: terminates\n"), "{text}");
    assert!(
        text.contains(&format!(
            "ends with: 0 1 1 0 0 0 0 0 0 0 0 0 0 2 1 1 | opponent {zeros}\n"
        )),
        "{text}"
    );
}

#[test]
fn bad_loops_and_census_input_is_refused() {
    refuses(&["loops", "1 2 3"], "has 16 pits, got 3");
    refuses(
        &["loops", "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 -1"],
        "is negative",
    );
    refuses(
        &["loops", "--pit", "1", "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"],
        "pit 1 holds 1 seed;",
    );
    refuses(
        &[
            "loops",
            "--max-laps",
            "0",
            "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
        ],
        "'--max-laps <MAX_LAPS>': must be at least 1",
    );
    for (laps, want) in [
        ("x", "must be a whole number of laps"),
        (
            "99999999999999999999",
            "must be at most 18446744073709551615",
        ),
    ] {
        refuses(
            &[
                "loops",
                "--max-laps",
                laps,
                "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
            ],
            want,
        );
    }
    refuses(
        &[
            "loops",
            "--opponent",
            "1 2",
            "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
        ],
        "--opponent has 16 pits",
    );
    // Its pits as separate words: the opponent is blamed, with the way out.
    let mut words = vec!["loops", "--opponent"];
    words.extend(["1"; 16]);
    words.push("3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1");
    refuses(&words, "(give all 16 as one argument, in quotes)");
    for pit in ["16", "-1"] {
        refuses(
            &["loops", "--pit", pit, "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"],
            &format!("pit {pit}: pits are numbered 0..15"),
        );
    }
    // "-0" is pit 0, as a count "-0" is 0 (and pit 0 holds 3 seeds).
    succeeds(&["loops", "--pit", "-0", "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"]);
    refuses(
        &["census", "--seeds", "9..x"],
        "give N or N..M, seed counts 0..=64",
    );
    refuses(
        &["census", "--seeds", "5..3"],
        "5..3 runs backwards: give N..M with N <= M",
    );
    // Ranges as the messages write them are taken too.
    let db = crate::common::scratch("census-range-forms");
    for form in ["2..3", "2..=3"] {
        let out = crate::common::run(&["census", "--seeds", form, "--db", db.to_str().unwrap()]);
        assert!(out.status.success(), "{form}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).lines().count(),
            3,
            "{form}"
        );
    }
}

/// Two positions found by a random search over small boards, kept as
/// regression tests of the choice logic: in the first the line declining
/// every reversal loops (after one capture) while some reversal ends the
/// move; in the second the loop needs the clockwise option at lap 4.
#[test]
fn reverse_options_make_moves_that_can_loop() {
    let pos = |me: &str, opp: &str| Position {
        me: Side::parse(&[me], "me").unwrap(),
        opp: Side::parse(&[opp], "opp").unwrap(),
    };
    let cases = [
        (
            "0 1 0 1 0 2 1 0 2 1 2 2 3 1 0 1",
            "0 0 0 0 1 0 0 0 0 0 1 1 0 0 0 0",
            12,
            vec![],
            104,
        ),
        (
            "1 2 1 0 1 0 1 2 0 1 0 2 2 1 1 2",
            "0 0 0 0 1 0 0 0 0 0 0 1 0 0 0 0",
            7,
            vec![4],
            326,
        ),
    ];
    for (me, opp, pit, reversed, period) in cases {
        let r = analyze_start(PLAY, pos(me, opp), pit, Dir::Ccw, 100_000).unwrap();
        assert_eq!(r.verdict, Verdict::CanLoop, "{me}");
        let cycle = r.line.cycle.unwrap();
        assert_eq!(
            (r.line.reversed, r.line.captures, cycle.period),
            (reversed, 1, period),
            "{me}"
        );
    }
    let b = pos(
        "1 2 1 0 1 0 1 2 0 1 0 2 2 1 1 2",
        "0 0 0 0 1 0 0 0 0 0 0 1 0 0 0 0",
    );
    // On a first turn there are no captures, hence no choices: the move is
    // the plain relay from pit 7.
    let r = analyze_start(Variant { first_turn: true }, b, 7, Dir::Ccw, 100_000).unwrap();
    let Relay::Ends { laps, sown, .. } = relay(b.me, 7, 100_000) else {
        panic!("the relay from pit 7 ends");
    };
    assert_eq!(
        (
            r.verdict,
            r.choice_points,
            r.line.laps,
            r.line.sown,
            r.line.captures
        ),
        (Verdict::Terminates, 0, laps, sown, 0)
    );
}

fn position(me: &str, opp: &str) -> Position {
    Position {
        me: Side::parse(&[me], "me").unwrap(),
        opp: Side::parse(&[opp], "opp").unwrap(),
    }
}

/// A `can-loop` says whether the lines that do not loop all end or were
/// left undecided by the budget (an Omweso researcher's review): here the
/// line that declines the reversal at lap 9 ends (after 29 laps), but a
/// budget of 34 laps is used up by the looping line, explored first.
#[test]
fn can_loop_tells_ending_lines_from_undecided_ones() {
    let pos = position(
        "1 0 1 0 1 0 2 1 0 1 2 3 2 0 1 0",
        "0 0 0 0 0 2 0 0 0 0 2 0 0 0 0 0",
    );
    let lines = |budget| {
        let r = analyze_start(PLAY, pos, 12, Dir::Ccw, budget).unwrap();
        assert_eq!((r.verdict, r.choice_points), (Verdict::CanLoop, 1));
        assert_eq!((r.line.reversed.as_slice(), r.line.laps), (&[9][..], 34));
        let n = r.lines;
        (n.ending, n.looping, n.undecided, r.walked)
    };
    assert_eq!(lines(34), (0, 1, 1, 34));
    assert_eq!(lines(1_000), (1, 1, 0, 55));
    let out = run(&[
        "loops",
        "--max-laps",
        "34",
        "--pit",
        "12",
        "--opponent",
        "0 0 0 0 0 2 0 0 0 0 2 0 0 0 0 0",
        "1 0 1 0 1 0 2 1 0 1 2 3 2 0 1 0",
    ]);
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "\n  choice points 1, laps walked over all lines 34\n  lines: 0 ending, 1 looping, 1 undecided\n  reverse (clockwise) laps chosen: 9\n"
        ),
        "{text}"
    );
}

/// A move whose every line loops is `must-loop` (found by a random search
/// of 28-seed sides against 6 opponent seeds: 2 in a million positions).
/// The reversal at lap 4 loops with period 246, the line declining it with
/// period 284; a budget that the first uses up before the second is
/// proven leaves `can-loop` with one line undecided.
#[test]
fn a_move_whose_every_line_loops_must_loop() {
    let pos = position(
        "2 1 2 1 4 3 2 2 3 0 2 0 2 0 1 3",
        "0 0 0 1 1 0 0 0 0 1 0 0 1 1 1 0",
    );
    let r = analyze_start(PLAY, pos, 6, Dir::Ccw, 1_000_000).unwrap();
    assert_eq!((r.verdict, r.choice_points), (Verdict::MustLoop, 1));
    let n = r.lines;
    assert_eq!((n.ending, n.looping, n.undecided, r.walked), (0, 2, 0, 540));
    // Every line loops: the one shown is the one with no reversal.
    let cycle = r.line.cycle.unwrap();
    assert_eq!(
        (r.line.reversed.len(), r.line.laps, cycle.period),
        (0, 292, 284)
    );
    let r = analyze_start(PLAY, pos, 6, Dir::Ccw, 400).unwrap();
    assert_eq!(r.verdict, Verdict::CanLoop);
    let n = r.lines;
    assert_eq!((n.ending, n.looping, n.undecided), (0, 1, 1));
    assert_eq!(
        (r.line.reversed, r.line.cycle.unwrap().period),
        (vec![4], 246)
    );
}

/// Fact 3 decides a move whenever no capture is possible, not only when
/// the opponent's side is empty: a lone seed in the opponent's outer row
/// faces no inner pit that could take it.
#[test]
fn the_certificate_holds_whenever_nothing_can_be_captured() {
    let me = "0 0 3 0 0 0 0 0 0 0 0 0 0 0 0 0";
    for opp in [
        "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
        "1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
    ] {
        let r = analyze_start(PLAY, position(me, opp), 2, Dir::Ccw, 100).unwrap();
        assert_eq!(
            (r.verdict, r.criterion, r.line.laps),
            (Verdict::Terminates, Criterion::Certificate, 1),
            "{opp}"
        );
    }
    // With a capture possible (a column of the opponent full), the same
    // move is played to its end.
    let capturable = position(me, "1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1");
    let r = analyze_start(PLAY, capturable, 2, Dir::Ccw, 100).unwrap();
    assert_eq!(r.criterion, Criterion::Played);
}

/// A clockwise start whose line has no later choice is `infinite`, like a
/// counter-clockwise one, not `must-loop` (issue 16, item 5): the
/// direction of the first lap is the start itself, not a choice.
#[test]
fn clockwise_start_without_later_choices_is_infinite() {
    let pos = position(
        "0 4 1 0 1 0 1 0 1 0 1 3 1 0 2 1",
        "0 0 0 0 1 0 0 0 0 0 0 2 0 0 0 0",
    );
    assert!(starts(PLAY, pos).contains(&(14, Dir::Cw)));
    let r = analyze_start(PLAY, pos, 14, Dir::Cw, 1_000_000).unwrap();
    assert_eq!((r.verdict, r.choice_points), (Verdict::Infinite, 0));
    assert_eq!(r.line.cycle.unwrap().period, 296);
    assert_eq!(r.line.reversed, [1]);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["verdict"], "infinite");
    assert_eq!(json["direction"], "cw");
    assert_eq!(json["choice_points"], 0);
    assert_eq!(json["period"], 296);
}

/// An undecided start reports the line it was following when the budget
/// ran out, with its seeds sown, and never more laps than the budget.
#[test]
fn undecided_reports_the_line_followed() {
    let pos = position(
        "13 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
        "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
    );
    let r = analyze_start(PLAY, pos, 0, Dir::Ccw, 50).unwrap();
    assert_eq!(r.verdict, Verdict::Undecided);
    assert_eq!((r.line.laps, r.walked), (50, 50));
    // The relay's first 50 laps, counted directly.
    let (mut s, mut p, mut sown) = (pos.me, 0, 0u64);
    for _ in 0..50 {
        let l = lap(s, p, Dir::Ccw);
        sown += l.sown as u64;
        (s, p) = (l.side, l.last);
    }
    assert_eq!(r.line.sown, sown);
}

/// Over random two-sided positions with captures and reverse options, and
/// small budgets: no report shows more laps than the budget, walked or on
/// its line, and a verdict other than undecided is the same under a larger
/// budget.
#[test]
fn reports_stay_within_the_budget() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (mut checked, mut undecided, mut choices) = (0, 0, 0);
    for _ in 0..3000 {
        let mut me = [0u8; 16];
        let mut opp = [0u8; 16];
        for _ in 0..24 {
            me[next(16) as usize] += 1;
        }
        for _ in 0..8 {
            opp[next(16) as usize] += 1;
        }
        let pos = Position {
            me: Side::from_pits(me),
            opp: Side::from_pits(opp),
        };
        let budget = 1 + next(40);
        for (pit, dir) in starts(PLAY, pos) {
            let r = analyze_start(PLAY, pos, pit, dir, budget).unwrap();
            assert!(
                r.line.laps <= budget && r.walked <= budget,
                "{pos:?} {pit} {r:?}"
            );
            checked += 1;
            choices += usize::from(r.choice_points > 0);
            // Every choice point adds one line to the move's tree, and
            // the verdict is what its lines came to.
            let n = r.lines;
            assert_eq!(
                n.ending + n.looping + n.undecided,
                u64::from(r.choice_points) + 1,
                "{pos:?} {pit} {r:?}"
            );
            let verdict = match (n.looping > 0, n.ending > 0 || n.undecided > 0) {
                (true, true) => Verdict::CanLoop,
                (true, false) if r.choice_points > 0 => Verdict::MustLoop,
                (true, false) => Verdict::Infinite,
                (false, _) if n.undecided > 0 => Verdict::Undecided,
                (false, _) => Verdict::Terminates,
            };
            assert_eq!(r.verdict, verdict, "{pos:?} {pit} {r:?}");
            if r.verdict == Verdict::Undecided {
                undecided += 1;
                assert!(r.line.laps >= 1 && r.line.sown >= 2, "{r:?}");
            } else {
                let wide = analyze_start(PLAY, pos, pit, dir, 100_000).unwrap();
                assert_eq!(wide.verdict, r.verdict, "{pos:?} {pit} {dir:?}");
            }
        }
    }
    assert!(
        checked > 10_000 && undecided > 100 && choices > 100,
        "{checked} {undecided} {choices}"
    );
}

/// More than the 64 seeds of a game in play is refused unless asked for
/// (issue 15, item 16).
#[test]
fn more_than_64_seeds_needs_any_seeds() {
    let (me, opp) = (
        "64 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
        "32 32 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
    );
    refuses(&["loops", "--opponent", opp, me], "128 seeds in play");
    let out = run(&[
        "loops",
        "--any-seeds",
        "--json",
        "--max-laps",
        "1000",
        "--opponent",
        opp,
        me,
    ]);
    assert_success(&out);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["starts"][0]["pit"], 0);
    let half = "32 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0";
    succeeds(&["loops", "--opponent", half, half]);
}

/// With nothing to capture a move is a pure relay, walked by the tight
/// relay loop: its verdicts, laps and periods agree with general cycle
/// detection on random sides of 16 to 48 seeds, empty opponent and first
/// turn alike.
#[test]
fn pure_relays_agree_with_brute_force() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (mut loops, mut ends) = (0, 0);
    for i in 0..4000 {
        let mut me = [0u8; 16];
        for _ in 0..16 + next(33) {
            me[next(16) as usize] += 1;
        }
        let me = Side::from_pits(me);
        let (rules, opp) = if i % 2 == 0 {
            (PLAY, Side::EMPTY)
        } else {
            (Variant { first_turn: true }, Side::from_pits([3; 16]))
        };
        for (pit, dir) in starts(rules, Position { me, opp }) {
            let r = analyze_start(rules, Position { me, opp }, pit, dir, 10_000_000).unwrap();
            match brute(me, pit) {
                Ok(laps) => {
                    ends += 1;
                    assert_eq!(
                        (r.verdict, r.line.laps),
                        (Verdict::Terminates, laps),
                        "{me} {pit}"
                    );
                    assert_eq!(r.line.end.unwrap().opp, opp);
                }
                Err(period) => {
                    loops += 1;
                    assert_eq!(r.verdict, Verdict::Infinite, "{me} {pit}");
                    assert_eq!(r.line.cycle.unwrap().period, period);
                    assert_eq!(period % r.line.laps, 0, "{me} {pit}");
                }
            }
        }
    }
    assert!(loops > 0 && ends > 10_000, "{loops} {ends}");
}

/// The seeds of the first `laps` laps of the relay from `pit` of `side`,
/// counted lap by lap.
fn relay_sown(side: Side, pit: usize, laps: u64) -> u64 {
    let (mut s, mut p, mut sown) = (side, pit, 0u64);
    for _ in 0..laps {
        let l = lap(s, p, Dir::Ccw);
        sown += l.sown as u64;
        (s, p) = (l.side, l.last);
    }
    sown
}

/// A loop's line counts the seeds of the laps it shows (the 8 laps after
/// which the repeat is proven) and its period the seeds of one period (128
/// laps); the analysis walked those 8 laps, no more.
#[test]
fn a_loop_counts_the_seeds_of_its_laps_and_of_its_period() {
    let me = Side::parse(&["3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"], "side").unwrap();
    let pos = Position {
        me,
        opp: Side::EMPTY,
    };
    let r = analyze_start(PLAY, pos, 0, Dir::Ccw, 1_000_000).unwrap();
    let c = r.line.cycle.unwrap();
    assert_eq!((r.line.laps, r.walked, c.period), (8, 8, 128));
    assert_eq!(r.line.sown, relay_sown(me, 0, 8));
    assert_eq!(c.sown, relay_sown(me, 0, 128));
    assert_eq!(r.criterion, Criterion::Recurrence);
}

/// A capture is possible only where a column of the opponent (inner pit
/// `23 - i` and outer pit `i - 8`) holds seeds in both its pits: seeds in
/// one pit of every column leave the example loop a pure relay, decided by
/// its recurrence as with no opponent at all (a lap-by-lap walk would never
/// see it repeat, and answer undecided).
#[test]
fn an_opponent_without_a_full_column_leaves_a_loop_a_pure_relay() {
    let me = Side::parse(&["3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"], "side").unwrap();
    for opp in [
        // The outer row only, the inner row only, and half of each (inner
        // pits 8..11 face outer pits 7..4).
        "1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0",
        "0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1",
        "2 2 2 2 0 0 0 0 2 2 2 2 0 0 0 0",
    ] {
        let opp = Side::parse(&[opp], "opp").unwrap();
        let pos = Position { me, opp };
        let r = analyze_start(PLAY, pos, 0, Dir::Ccw, 1_000_000).unwrap();
        assert_eq!(
            (r.verdict, r.criterion, r.choice_points, r.line.laps),
            (Verdict::Infinite, Criterion::Recurrence, 0, 8),
            "{opp}"
        );
        assert_eq!(r.line.cycle.unwrap().period, 128, "{opp}");
    }
}

/// What decided a verdict: the certificate only for a counter-clockwise
/// pure relay (no capture possible: an empty opponent or a first turn)
/// whose start has an empty pit behind it; a move played out otherwise;
/// the budget for an undecided one.
#[test]
fn the_criterion_names_what_decided_the_verdict() {
    let criterion = |variant, pos, pit, dir, budget| {
        let r = analyze_start(variant, pos, pit, dir, budget).unwrap();
        (r.verdict, r.criterion)
    };
    // Pit 15, behind pit 0, empty: certified; holding a seed: played.
    let empty_behind = Position {
        me: side(&[(0, 2), (2, 1)]),
        opp: Side::EMPTY,
    };
    let full_behind = Position {
        me: side(&[(0, 2), (2, 1), (15, 1)]),
        opp: Side::EMPTY,
    };
    assert_eq!(
        criterion(PLAY, empty_behind, 0, Dir::Ccw, 100),
        (Verdict::Terminates, Criterion::Certificate)
    );
    assert_eq!(
        criterion(PLAY, full_behind, 0, Dir::Ccw, 100),
        (Verdict::Terminates, Criterion::Played)
    );
    // A first turn is a pure relay against any opponent (pit 5, behind
    // pit 6, is empty); the same start with captures is played.
    let first = Variant { first_turn: true };
    assert_eq!(
        criterion(first, capture_position(), 6, Dir::Ccw, 100),
        (Verdict::Terminates, Criterion::Certificate)
    );
    assert_eq!(
        criterion(PLAY, capture_position(), 6, Dir::Ccw, 100),
        (Verdict::Terminates, Criterion::Played)
    );
    // Pit 15 is empty behind pit 0, but the opponent's 10 and 5 can be
    // captured: both directions are played.
    let pos = Position {
        me: side(&[(0, 3), (13, 1)]),
        opp: side(&[(5, 1), (10, 1)]),
    };
    for dir in [Dir::Ccw, Dir::Cw] {
        assert_eq!(
            criterion(PLAY, pos, 0, dir, 100),
            (Verdict::Terminates, Criterion::Played),
            "{dir:?}"
        );
    }
    // Out of budget: undecided, by the budget.
    let me = Side::parse(&["13 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"], "side").unwrap();
    let pos = Position {
        me,
        opp: Side::EMPTY,
    };
    assert_eq!(
        criterion(PLAY, pos, 0, Dir::Ccw, 50),
        (Verdict::Undecided, Criterion::Budget)
    );
}

/// Among looping lines with equally few reverse laps, the one shown is
/// the first found (found by a random search): here the line declining
/// both options ends, and reversing at lap 5 or at lap 14 loops (period
/// 228 laps either way); the reversal at lap 5 is explored first.
#[test]
fn of_equal_looping_lines_the_first_found_is_shown() {
    let pos = position(
        "1 1 0 4 3 1 3 2 1 0 3 0 2 3 2 2",
        "1 1 1 0 0 0 0 1 1 1 0 0 1 0 0 0",
    );
    let r = analyze_start(PLAY, pos, 4, Dir::Ccw, 1_000_000).unwrap();
    let n = r.lines;
    assert_eq!(
        (r.verdict, r.choice_points, n.ending, n.looping, n.undecided),
        (Verdict::CanLoop, 2, 1, 2, 0)
    );
    let cycle = r.line.cycle.unwrap();
    assert_eq!(
        (r.line.reversed, r.line.laps, cycle.period, r.walked),
        (vec![5], 120, 228, 267)
    );
}
