//! The principal variation: best moves from a position until the game
//! ends, and a line that shows how the value is obtained.
//!
//! The tables hold values, not distances, so taking "a best move" at each
//! ply need not show how a value is won: among its moves worth the value,
//! the side ahead may shuffle forever between positions of the same value.
//! (Taking the lowest pit among the best moves did: from
//! `0 2 0 0 1 0 0 3 0 1 1 0`, worth -2, a position repeated after 8 plies.)
//!
//! **Progress.** Seeds leave the board only by captures, and a capture
//! leads to a lower level, so a line can repeat only through quiet moves
//! within one level. At a position of value `v != 0`, take the graph G of
//! the positions its level reaches from it by best moves of both sides
//! that capture nothing; a best move that captures, and a position without
//! moves, is an *exit*. The side ahead (the mover where the value is
//! positive) can force an exit. If it could not, the other side could keep
//! play in G forever by best moves, and answer any worse move of the side
//! ahead (which leaves G) by best moves from there: it would get 0 (endless
//! play is worth 0) or more than `-|v|`, not `-|v|`. So the attractor of
//! the exits for the side ahead, computed backward over G, holds the
//! position. Its rank (plies to an exit) is 0 where the side ahead has a
//! best move that captures, where every best move of the other side
//! captures, or where there is no move; otherwise, for the side ahead, one
//! more than its least best quiet move's, and for the other side, one more
//! than its greatest. The side ahead takes a best move of least rank
//! (an exit first), the other side the lowest pit among its best moves;
//! the rank falls with each ply, and the line reaches an exit.
//!
//! At value 0 both sides take the lowest pit among their best moves, and a
//! repeat is endless play, worth 0 as the rules say. G is searched up to
//! [`SEARCH_LIMIT`] positions per level; past that the line takes the
//! lowest pits there too, and a repeat at a value other than 0 ends it as
//! [`LineEnd::NoProgress`], never as endless play. A position of G whose
//! moves reach a level that is not present is searched no further and
//! never ranked (as one not yet expanded), which keeps the ranks sound;
//! where no way to progress avoids such positions, the start is not
//! ranked, and a repeat at a value other than 0 ends the line as
//! no-progress too.

use std::collections::{HashMap, VecDeque};

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{Analysis, MoveValue, analyze};
use crate::error::{Error, Result};
use crate::oware::{Board, Rules, moves};
use crate::source::Values;

/// Most positions the search for progress explores at one level.
pub const SEARCH_LIMIT: usize = 1 << 15;

/// One ply of a principal variation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Ply {
    /// The position before the move, seen by the player making it.
    pub board: Board,
    /// The pit played.
    pub pit: u8,
    /// Seeds taken.
    pub captures: u8,
    /// The position's value for the player making the move.
    pub value: i8,
}

/// How a principal variation ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnd {
    /// The player to move in `board` has no seeds, or the last move took
    /// every seed left.
    GameOver,
    /// The position after the last ply repeats the one before ply `ply`,
    /// whose value is 0: from here play goes round forever.
    Cycle {
        /// Index of the first repeated ply.
        ply: usize,
    },
    /// The position after the last ply repeats the one before ply `ply`,
    /// whose value is not 0: the search for progress gave up at this level
    /// (see the module docs), and this line does not show how the side
    /// ahead gets its value.
    NoProgress {
        /// Index of the first repeated ply.
        ply: usize,
    },
    /// The line was cut at the requested length.
    Limit,
    /// The next position needs level `seeds`, which is not present.
    Missing {
        /// The level missing.
        seeds: usize,
    },
}

impl LineEnd {
    /// Its name in every front end's answers (the JSON's `line_end`):
    /// `game-over`, `cycle`, `no-progress`, `limit` or `level-missing`.
    pub fn name(&self) -> &'static str {
        match self {
            LineEnd::GameOver => "game-over",
            LineEnd::Cycle { .. } => "cycle",
            LineEnd::NoProgress { .. } => "no-progress",
            LineEnd::Limit => "limit",
            LineEnd::Missing { .. } => "level-missing",
        }
    }
}

/// A principal variation and how it ends: its [`plies`](Line::plies) and
/// its [`end`](Line::end). Serialized as `{line: [{board, pit, captures,
/// value}], line_end: "game-over" | "cycle" | "no-progress" | "limit" |
/// "level-missing"}`, with `cycle_ply` for a repeat and `missing_level`
/// for a missing level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The plies, best move first.
    pub plies: Vec<Ply>,
    /// How it ends.
    pub end: LineEnd,
}

impl Serialize for Line {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let (extra, n) = match self.end {
            LineEnd::Cycle { ply } | LineEnd::NoProgress { ply } => (Some(("cycle_ply", ply)), 3),
            LineEnd::Missing { seeds } => (Some(("missing_level", seeds)), 3),
            _ => (None, 2),
        };
        let mut st = s.serialize_struct("Line", n)?;
        st.serialize_field("line", &self.plies)?;
        st.serialize_field("line_end", self.end.name())?;
        if let Some((name, n)) = extra {
            st.serialize_field(name, &n)?;
        }
        st.end()
    }
}

/// The longest line the command line, the server and the Python package
/// follow unless told otherwise. Of the lines of 1,500 random positions
/// of each level 12, 14, .., 22, the longest had 163..222 plies and 0..4
/// per level more than 200 (BENCHMARKS, "Principal lines"); they grow
/// slowly with the level.
pub const LINE_PLIES: usize = 400;

/// Follows best moves from `board` until the game ends, a position
/// repeats, `max_plies` plies, or a position after the first needs a level
/// that is not present (the first position's missing levels are an error,
/// as for [`analyze`]). Where the value is not 0 the side ahead makes
/// progress (module docs); elsewhere each side takes the lowest pit among
/// its best moves.
///
/// To play a position out, take the first ply of a line of `max_plies` 1:
/// the search for progress at the first position is all it costs
/// (BENCHMARKS, "Principal lines": about 10 µs at the median at levels 14
/// to 20, 0.1 ms at the 90th percentile, up to a tenth of a second where
/// the level's best quiet moves are many); a whole line takes about 0.5 ms
/// at the median there.
///
/// # Errors
///
/// As every query ([module docs](super#errors)), for the first position;
/// a later position's missing level ends the line instead
/// ([`LineEnd::Missing`]).
pub fn principal_line(
    rules: Rules,
    values: &dyn Values,
    board: &Board,
    max_plies: usize,
) -> Result<Line> {
    super::same_rules(rules, values)?;
    follow(rules, values, board, max_plies, SEARCH_LIMIT)
}

/// [`principal_line`], searching at most `limit` positions per level.
fn follow(
    rules: Rules,
    values: &dyn Values,
    board: &Board,
    max_plies: usize,
    limit: usize,
) -> Result<Line> {
    let mut line: Vec<Ply> = Vec::new();
    let mut seen: HashMap<Board, usize> = HashMap::new();
    // The level searched for progress last, and its ranks (`None`: the
    // search gave up there).
    let mut searched: Option<(usize, Option<Ranks>)> = None;
    let mut pos = *board;
    let end = loop {
        if let Some(&ply) = seen.get(&pos) {
            break match line[ply].value {
                0 => LineEnd::Cycle { ply },
                _ => LineEnd::NoProgress { ply },
            };
        }
        if line.len() == max_plies {
            // A line cut where the game ends anyway ends with the game.
            break match moves(rules, &pos).is_empty() {
                true => LineEnd::GameOver,
                false => LineEnd::Limit,
            };
        }
        seen.insert(pos, line.len());
        let a = match analyze(rules, values, &pos) {
            Ok(a) => a,
            Err(Error::Missing(m)) if !line.is_empty() => match m.level() {
                Some(seeds) => break LineEnd::Missing { seeds },
                None => return Err(Error::Missing(m)),
            },
            Err(e) => return Err(e),
        };
        if a.value != 0 && searched.as_ref().is_none_or(|(level, _)| *level != a.seeds) {
            searched = Some((a.seeds, Ranks::search(rules, values, &a, limit)?));
        }
        let ranks = searched.as_ref().and_then(|(_, ranks)| ranks.as_ref());
        let Some(best) = choose(&a, ranks) else {
            break LineEnd::GameOver;
        };
        line.push(Ply {
            board: pos,
            pit: best.pit,
            captures: best.captures,
            value: a.value,
        });
        let next = best.child;
        if next.seeds() == 0 {
            break LineEnd::GameOver;
        }
        pos = next;
    };
    Ok(Line { plies: line, end })
}

/// The move the line takes in `a`: the side ahead (a positive value), a
/// best move of least rank in `ranks` (an exit has rank 0; ties and
/// positions without ranks, the lowest pit); otherwise the lowest pit
/// among the best moves. `None` when there is no move.
fn choose<'a>(a: &'a Analysis, ranks: Option<&Ranks>) -> Option<&'a MoveValue> {
    let mut best = a.moves.iter().filter(|m| m.value == a.value);
    match ranks {
        Some(ranks) if a.value > 0 => best.min_by_key(|m| match m.child.seeds() == a.seeds {
            true => ranks.of(&m.child).map_or(u32::MAX, |r| r + 1),
            false => 0,
        }),
        _ => best.next(),
    }
}

/// The ranks of the positions of G (module docs) in the attractor of its
/// exits for the side ahead: plies to an exit.
struct Ranks(HashMap<Board, u32>);

/// A position of G while it is searched.
struct Node {
    board: Board,
    /// The side ahead is to move here.
    ahead: bool,
    /// Its best moves that capture nothing (to positions of G).
    quiet: u32,
    /// Rank 0: no moves, a best move of the side ahead that captures, or
    /// only such best moves for the other side.
    exit: bool,
}

impl Ranks {
    /// Searches G from `start` (value not 0) and ranks it; `None` when G
    /// has more than `limit` positions, or (tables that disagree with each
    /// other in a way [`analyze`] cannot see) does not rank `start`. A
    /// position whose moves reach a level that is not present is left
    /// unexpanded: never ranked, as below, so a ranked line never passes
    /// it.
    ///
    /// G is expanded forward, a layer of plies at a time, and ranked after
    /// each layer; the search stops once `start` is ranked, which often
    /// comes long before G is whole. Ranks over part of G are sound: a
    /// position not yet expanded has no known move, so it is never ranked,
    /// and a position of the side behind is ranked only when every best
    /// move it has is.
    fn search(
        rules: Rules,
        values: &dyn Values,
        start: &Analysis,
        limit: usize,
    ) -> Result<Option<Ranks>> {
        let seeds = start.seeds;
        let mut index: HashMap<Board, u32> = HashMap::from([(start.board, 0)]);
        let mut boards = vec![start.board];
        let mut nodes: Vec<Node> = Vec::new();
        // Per position, the positions with a best quiet move to it, once
        // per move.
        let mut parents: Vec<Vec<u32>> = vec![Vec::new()];
        loop {
            let layer_end = boards.len();
            while nodes.len() < layer_end {
                let i = nodes.len() as u32;
                let a = match nodes.is_empty() {
                    true => start.clone(),
                    false => match analyze(rules, values, &boards[i as usize]) {
                        Ok(a) => a,
                        Err(Error::Missing(_)) => {
                            // No known move, no rank.
                            nodes.push(Node {
                                board: boards[i as usize],
                                ahead: false,
                                quiet: 0,
                                exit: false,
                            });
                            continue;
                        }
                        Err(e) => return Err(e),
                    },
                };
                let (mut quiet, mut captures) = (0, false);
                for m in a.moves.iter().filter(|m| m.value == a.value) {
                    if m.child.seeds() != seeds {
                        captures = true;
                        continue;
                    }
                    quiet += 1;
                    let next = index.len() as u32;
                    let j = *index.entry(m.child).or_insert(next);
                    if j == next {
                        if boards.len() == limit {
                            return Ok(None);
                        }
                        boards.push(m.child);
                        parents.push(Vec::new());
                    }
                    parents[j as usize].push(i);
                }
                let ahead = a.value > 0;
                nodes.push(Node {
                    board: a.board,
                    ahead,
                    quiet,
                    exit: a.moves.is_empty() || (ahead && captures) || (!ahead && quiet == 0),
                });
            }
            if let Some(ranks) = Ranks::of_expanded(&nodes, &parents) {
                return Ok(Some(ranks));
            }
            if boards.len() == layer_end {
                // G is whole, and `start` is not ranked.
                return Ok(None);
            }
        }
    }

    /// The ranks of the expanded positions `nodes`, backward in order of
    /// rank from the exits: a position of the side ahead takes its first
    /// ranked child's rank + 1 (the least), one of the side behind its last
    /// one's (the greatest). `None` unless the first position is ranked.
    fn of_expanded(nodes: &[Node], parents: &[Vec<u32>]) -> Option<Ranks> {
        let mut rank: Vec<Option<u32>> = nodes.iter().map(|n| n.exit.then_some(0)).collect();
        let mut left: Vec<u32> = nodes.iter().map(|n| n.quiet).collect();
        let mut queue: VecDeque<u32> = (0..nodes.len() as u32)
            .filter(|&i| rank[i as usize].is_some())
            .collect();
        while let Some(j) = queue.pop_front() {
            let next = rank[j as usize].map(|r| r + 1);
            for &p in &parents[j as usize] {
                let p = p as usize;
                if rank[p].is_some() {
                    continue;
                }
                left[p] -= 1;
                if nodes[p].ahead || left[p] == 0 {
                    rank[p] = next;
                    queue.push_back(p as u32);
                }
            }
        }
        rank[0]?;
        let ranks = nodes
            .iter()
            .zip(rank)
            .filter_map(|(n, r)| Some((n.board, r?)))
            .collect();
        Some(Ranks(ranks))
    }

    /// The rank of `board`, if G holds it and it is ranked.
    fn of(&self, board: &Board) -> Option<u32> {
        self.0.get(board).copied()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::compose::Ranker;
    use crate::query::tests::{Solved, solved_to};

    /// Levels 0..=10 of awari, solved in memory.
    fn solved() -> Solved {
        solved_to(10)
    }

    /// A position worth -2 whose best moves let the side ahead shuffle: by
    /// the lowest pits, a position repeats at value -2 after 8 plies.
    const SHUFFLE: &str = "0 2 0 0 1 0 0 3 0 1 1 0";

    /// Each ply takes a best move (its value is its captures minus the
    /// next ply's value), and a repeat is at value 0.
    fn assert_sound(line: &Line, board: &Board) {
        for (p, next) in line.plies.iter().zip(line.plies.iter().skip(1)) {
            assert_eq!(p.value, p.captures as i8 - next.value, "{board}: {line:?}");
        }
        if let LineEnd::Cycle { ply } = line.end {
            assert_eq!(line.plies[ply].value, 0, "{board}");
        }
    }

    #[test]
    fn lines_of_positions_not_worth_0_make_progress() {
        let solved = solved();
        let all = Ranker::new(12, 10, None);
        let (mut lines, mut won) = (0, 0);
        // The shuffling position, and every 307th board of 1..=10 seeds.
        let mut boards = vec![Board::parse(&[SHUFFLE]).unwrap()];
        for n in 1..=10 {
            for i in (0..all.count(n)).step_by(307) {
                let mut b = Board::EMPTY;
                all.unrank(n, i, &mut b.0);
                boards.push(b);
            }
        }
        for b in boards {
            let line = principal_line(Rules::Awari, &solved, &b, 400).unwrap();
            assert_sound(&line, &b);
            assert!(
                !matches!(line.end, LineEnd::NoProgress { .. } | LineEnd::Limit),
                "{b}: {:?}",
                line.end
            );
            lines += 1;
            won += usize::from(line.plies.first().is_some_and(|p| p.value != 0));
        }
        assert!(
            lines > 1000 && won > lines / 2,
            "{lines} lines, {won} not worth 0"
        );
    }

    /// Tables with some levels missing.
    struct Gaps<'a>(&'a Solved, &'a [usize]);

    impl Values for Gaps<'_> {
        fn value(&self, board: &Board) -> Result<i8> {
            match self.1.contains(&board.seeds()) {
                true => Err(Error::Missing(crate::error::Missing::Level {
                    dir: PathBuf::from("memory"),
                    rules: "awari",
                    seeds: board.seeds(),
                })),
                false => self.0.value(board),
            }
        }
        fn origin(&self, b: &Board) -> PathBuf {
            self.0.origin(b)
        }
    }

    /// A line cut where the game ends says the game is over (it said
    /// "limit"); one cut before says it was cut.
    #[test]
    fn a_line_cut_at_the_end_of_the_game_ends_with_the_game() {
        let solved = solved_to(12);
        for pits in [[0; 12], [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0]] {
            let over = Board::new(pits).unwrap();
            let cut = principal_line(Rules::Awari, &solved, &over, 0).unwrap();
            assert_eq!((cut.plies.len(), cut.end), (0, LineEnd::GameOver));
        }
        let b = Board::parse(&["1 0 0 1 4 1 2 0 3 0 0 0"]).unwrap();
        let full = principal_line(Rules::Awari, &solved, &b, 400).unwrap();
        assert_eq!(full.end, LineEnd::GameOver, "{full:?}");
        let n = full.plies.len();
        let short = principal_line(Rules::Awari, &solved, &b, n - 1).unwrap();
        assert_eq!((short.plies.len(), short.end), (n - 1, LineEnd::Limit));
        // Cut at its full length, the line is the same (its last move
        // takes the last seeds, which ended it before the cut too).
        let at_end = principal_line(Rules::Awari, &solved, &b, n).unwrap();
        assert_eq!((at_end.plies, at_end.end), (full.plies, LineEnd::GameOver));
    }

    #[test]
    fn positions_that_reach_a_missing_level_do_not_stop_the_search() {
        let solved = solved_to(12);
        let gaps = Gaps(&solved, &[5, 8]);
        // Its line passes levels 12, 9 and 7 alone; positions of G at
        // those levels have captures into 8 and 5. The search used to give
        // up at the first such position, and the line ended as no-progress
        // (at level 9). At level 7 the start is still not ranked (its way
        // to progress needs level 5), but the lowest pits end the game.
        let b = Board::parse(&["1 0 0 1 4 1 2 0 3 0 0 0"]).unwrap();
        let full = principal_line(Rules::Awari, &solved, &b, 400).unwrap();
        let gapped = principal_line(Rules::Awari, &gaps, &b, 400).unwrap();
        assert_eq!(full.end, LineEnd::GameOver, "{full:?}");
        assert_sound(&gapped, &b);
        assert_eq!(gapped.end, LineEnd::GameOver, "{gapped:?}");
        assert!(
            gapped
                .plies
                .iter()
                .all(|p| ![5, 8].contains(&p.board.seeds())),
            "{gapped:?}"
        );
    }

    #[test]
    fn a_search_that_gives_up_ends_a_repeat_as_no_progress_not_endless_play() {
        let solved = solved();
        let b = Board::parse(&[SHUFFLE]).unwrap();
        let line = follow(Rules::Awari, &solved, &b, 400, 1).unwrap();
        assert_sound(&line, &b);
        assert_eq!(line.end, LineEnd::NoProgress { ply: 8 });
        assert_eq!(line.plies[8].value, -2);
        let json = serde_json::to_value(&line).unwrap();
        assert_eq!(
            (json["line_end"].as_str(), json["cycle_ply"].as_u64()),
            (Some("no-progress"), Some(8))
        );
        let full = principal_line(Rules::Awari, &solved, &b, 400).unwrap();
        assert_sound(&full, &b);
        assert!(full.plies.iter().any(|p| p.captures > 0), "{full:?}");
    }

    /// The moves a line takes: at a value of 0 or below, the lowest pit
    /// among the best moves; for the side ahead, a best move that
    /// captures when there is one (an exit first: rank 0).
    #[test]
    fn each_side_takes_the_move_the_module_docs_say() {
        let solved = solved();
        let all = Ranker::new(12, 10, None);
        let (mut behind, mut exits) = (0, 0);
        let mut boards = vec![Board::parse(&[SHUFFLE]).unwrap()];
        for n in 1..=10 {
            for i in (0..all.count(n)).step_by(613) {
                let mut b = Board::EMPTY;
                all.unrank(n, i, &mut b.0);
                boards.push(b);
            }
        }
        for b in boards {
            let line = principal_line(Rules::Awari, &solved, &b, 400).unwrap();
            for p in &line.plies {
                let a = analyze(Rules::Awari, &solved, &p.board).unwrap();
                let best: Vec<&MoveValue> = a.moves.iter().filter(|m| m.value == a.value).collect();
                assert!(best.iter().any(|m| m.pit == p.pit), "{b}: {p:?}");
                if p.value <= 0 {
                    behind += 1;
                    assert_eq!(p.pit, best[0].pit, "{b}: {p:?}");
                } else if best.iter().any(|m| m.captures > 0) {
                    exits += 1;
                    assert!(p.captures > 0, "{b}: {p:?}");
                }
            }
        }
        assert!(behind > 1000 && exits > 100, "{behind} {exits}");
    }

    /// A line stops where a position after the first needs a level that
    /// is not present, naming it (in JSON too); the first position's own
    /// missing level is an error, as for `analyze`. Without level 7 the
    /// line of `1 0 0 1 4 1 2 0 3 0 0 0` plays its 24 plies at levels 12
    /// and 9; without level 9, its first position cannot be valued.
    #[test]
    fn a_line_stops_at_a_missing_level_after_its_first_position() {
        let solved = solved_to(12);
        let b = Board::parse(&["1 0 0 1 4 1 2 0 3 0 0 0"]).unwrap();
        let line = principal_line(Rules::Awari, &Gaps(&solved, &[7]), &b, 400).unwrap();
        assert_sound(&line, &b);
        assert_eq!(
            (line.plies.len(), line.end),
            (24, LineEnd::Missing { seeds: 7 })
        );
        let json = serde_json::to_value(&line).unwrap();
        assert_eq!(
            (json["line_end"].as_str(), json["missing_level"].as_u64()),
            (Some("level-missing"), Some(7))
        );
        let e = principal_line(Rules::Awari, &Gaps(&solved, &[9]), &b, 400).unwrap_err();
        assert!(
            matches!(e, Error::Missing(ref m) if m.level() == Some(9)),
            "{e}"
        );
    }

    /// The side ahead takes a best move that captures (an exit: rank 0)
    /// before a lower quiet best move to a position whose every best answer
    /// captures (rank 1). At ply 13 of the line of `2 2 0 0 0 0 3 1 0 0 1 0`
    /// (level 9, worth 2 to the mover) the best moves are pit 2, quiet, and
    /// pit 4, taking 2; after pit 2 the only best answer, pit 5, takes 2.
    /// Ranking pit 2 as its answer's rank, not one more, tied it with the
    /// capture and the line took the lower pit.
    #[test]
    fn the_side_ahead_takes_an_exit_before_a_quiet_move_next_to_one() {
        let solved = solved();
        let b = Board::parse(&["2 2 0 0 0 0 3 1 0 0 1 0"]).unwrap();
        let line = principal_line(Rules::Awari, &solved, &b, 400).unwrap();
        assert_sound(&line, &b);
        let p = line.plies[13];
        assert_eq!(p.board, Board::parse(&["0 1 1 0 3 1 0 1 0 0 0 2"]).unwrap());
        let a = analyze(Rules::Awari, &solved, &p.board).unwrap();
        let best: Vec<(u8, u8)> = a
            .moves
            .iter()
            .filter(|m| m.value == a.value)
            .map(|m| (m.pit, m.captures))
            .collect();
        assert_eq!((a.value, best), (2, vec![(2, 0), (4, 2)]));
        let quiet = a.moves.iter().find(|m| m.pit == 2).unwrap();
        let answer = analyze(Rules::Awari, &solved, &quiet.child).unwrap();
        let answers: Vec<(u8, u8)> = answer
            .moves
            .iter()
            .filter(|m| m.value == answer.value)
            .map(|m| (m.pit, m.captures))
            .collect();
        assert_eq!(answers, [(5, 2)]);
        assert_eq!((p.pit, p.captures, p.value), (4, 2, 2), "{line:?}");
    }
}
