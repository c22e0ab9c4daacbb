//! Answering questions about positions from stored tables: a position's
//! value, the value of each move, and the principal variation.
//!
//! # Errors
//!
//! Every query here fails the same ways:
//!
//! * [`Error::Invalid`] when `rules` is not the rule set of the source
//!   ([`Values::rules`]): awari tables do not value abapa positions;
//! * [`Error::Missing`] ([`Missing::Level`](crate::error::Missing::Level),
//!   or [`Missing::VuLevel`](crate::error::Missing::VuLevel) from
//!   `scores.N` files) when a level it reads is not present: its own
//!   level, or a lower level that a move's capture reaches;
//! * [`Error::Corrupt`] when a table it reads fails its checks, or gives a
//!   board a value outside `-seeds..=seeds`
//!   ([`Corruption::BoardValueRange`]); and where a board's moves are
//!   valued too ([`analyze`], [`move_values`], [`principal_line`]), when
//!   a stored value disagrees with its best move's
//!   ([`Corruption::Inconsistent`]);
//! * [`Error::Io`] when the system refuses a read.

use crate::error::{Corruption, Error, Result};
use crate::oware::{Board, MAX_SEEDS, Rules, levels_needed, moves, value_without_moves};
use crate::source::{Source, Values};

mod line;
pub use line::{LINE_PLIES, Line, LineEnd, Ply, principal_line};

/// What a value means for the player to move. Serialized by its
/// [`name`](Category::name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// More seeds than the opponent from here on.
    Win,
    /// As many.
    Draw,
    /// Fewer.
    Loss,
}

impl Category {
    /// The category of value `v`.
    pub fn of(v: i8) -> Category {
        match v {
            0 => Category::Draw,
            v if v > 0 => Category::Win,
            _ => Category::Loss,
        }
    }

    /// `win`, `draw` or `loss`.
    pub fn name(self) -> &'static str {
        match self {
            Category::Win => "win",
            Category::Draw => "draw",
            Category::Loss => "loss",
        }
    }
}

/// Its [`name`](Category::name): `win`, `draw` or `loss`.
impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Category {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One legal move and what it is worth to the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MoveValue {
    /// The pit sown, `0..6`.
    pub pit: u8,
    /// `captures - value(child)`.
    pub value: i8,
    /// Seeds the move takes.
    pub captures: u8,
    /// What `value` means for the mover.
    pub category: Category,
    /// The position after the move, seen by the opponent (now to move).
    #[serde(skip)]
    pub child: Board,
}

/// A position's value and the value of each legal move: what every front
/// end answers for a position (the command line's `query --json`, the
/// server's `/api/awari`, Python's `Database.analyze`). Serialized as
/// `{seeds, value, category, moves: [{pit, value, captures, category}],
/// best, valued_by}`, as `query --json` prints it; the server lays its
/// answer out for the web board (moves best first, each with its child
/// board, and `source` in place of `valued_by`: docs/serve.md).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Analysis {
    /// The position.
    #[serde(skip)]
    pub board: Board,
    /// Seeds on the board.
    pub seeds: usize,
    /// Best stone difference the player to move can still get.
    pub value: i8,
    /// What `value` means for the player to move.
    pub category: Category,
    /// Legal moves in pit order (none when the mover has no seeds).
    pub moves: Vec<MoveValue>,
    /// Pits of the moves that achieve the value.
    pub best: Vec<u8>,
    /// Where the position's own value came from.
    pub valued_by: ValuedBy,
}

/// Where a position's value came from. Serialized by its
/// [`name`](ValuedBy::name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValuedBy {
    /// Its level, where it is stored ([`reads_own_level`]).
    Level,
    /// Its moves, one ply: it is not stored (every opponent pit is filled).
    Moves,
    /// The rules: the player to move has no seeds, so no move (`-seeds`).
    Rules,
}

impl ValuedBy {
    /// `level`, `moves` or `rules`.
    pub fn name(self) -> &'static str {
        match self {
            ValuedBy::Level => "level",
            ValuedBy::Moves => "moves",
            ValuedBy::Rules => "rules",
        }
    }
}

/// Its [`name`](ValuedBy::name): `level`, `moves` or `rules`.
impl std::fmt::Display for ValuedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for ValuedBy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The seeds each player took before a position, which with the board's
/// make the game's 48: what a position's [`FinalScore`] starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// By the player to move.
    pub mover: u8,
    /// By the opponent.
    pub opponent: u8,
}

impl Taken {
    /// The seeds taken by the player to move and by the opponent before
    /// `board`; [`Error::Invalid`] unless they and the board's make 48.
    pub fn new(board: &Board, mover: u64, opponent: u64) -> Result<Taken> {
        let seeds = board.seeds() as u64;
        // Not saturated: the message shows the true sum of any two counts.
        let total = u128::from(mover) + u128::from(opponent) + u128::from(seeds);
        if total != MAX_SEEDS as u128 {
            return Err(Error::Invalid(format!(
                "captured {mover},{opponent} and {seeds} seeds on the board make {total}, not the game's {MAX_SEEDS}"
            )));
        }
        // Each is at most 48 now.
        Ok(Taken {
            mover: mover as u8,
            opponent: opponent as u8,
        })
    }

    /// [`Taken::new`] of `MOVER,OPPONENT` given as text (a query string's
    /// `captured=16,16`). A count past any integer type is too many, and
    /// one below zero negative, each said so, as a board's counts are.
    pub fn parse(board: &Board, text: &str) -> Result<Taken> {
        let give = || Error::Invalid("captured: give MOVER,OPPONENT, two seed counts".into());
        let words: Vec<&str> = text.split(',').map(str::trim).collect();
        let [m, o] = words[..] else {
            return Err(give());
        };
        let mut counts = [0u64; 2];
        for (slot, word) in counts.iter_mut().zip([m, o]) {
            *slot = match word.parse::<i64>() {
                Ok(v) if v < 0 => None,
                Ok(v) => Some(v as u64),
                Err(e) if *e.kind() == std::num::IntErrorKind::NegOverflow => None,
                Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                    return Err(Error::Invalid(format!(
                        "captured {m},{o}: a side takes at most the game's {MAX_SEEDS} seeds"
                    )));
                }
                Err(_) => return Err(give()),
            }
            .ok_or_else(|| {
                Error::Invalid(format!("captured {m},{o}: a seed count cannot be negative"))
            })?;
        }
        Taken::new(board, counts[0], counts[1])
    }
}

/// The seeds each player ends the game with under best play: what they
/// took before ([`Taken`]) and their share of the board's, `(seeds ±
/// value) / 2` (a half when endless play splits an odd count).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct FinalScore {
    /// The player to move's.
    pub mover: f64,
    /// The opponent's.
    pub opponent: f64,
}

impl FinalScore {
    /// The end of the game from the position of `a`, after `taken`.
    ///
    /// ```
    /// use mancaladb::oware::Board;
    /// use mancaladb::query::{FinalScore, Taken};
    /// # use mancaladb::query::{Analysis, Category, ValuedBy};
    /// let board = Board::new([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])?;
    /// # let a = Analysis { board, seeds: 16, value: 0, category: Category::Draw, moves: vec![], best: vec![5], valued_by: ValuedBy::Level };
    /// // With `a` the analysis of the board (value 0, a draw):
    /// let end = FinalScore::of(&a, Taken::new(&board, 16, 16)?);
    /// assert_eq!((end.mover, end.opponent), (24.0, 24.0));
    /// assert!(Taken::new(&board, 16, 17).is_err());
    /// # Ok::<(), mancaladb::Error>(())
    /// ```
    pub fn of(a: &Analysis, taken: Taken) -> FinalScore {
        let (n, v) = (a.seeds as f64, f64::from(a.value));
        FinalScore {
            mover: f64::from(taken.mover) + (n + v) / 2.0,
            opponent: f64::from(taken.opponent) + (n - v) / 2.0,
        }
    }
}

/// Whether a value of `board` reads its own level: it is in the stored
/// domain and the player to move has seeds. A player without seeds has no
/// move, and the rules give the value: `-seeds`, the opponent takes the
/// rest. No table is needed for it, stored or not.
pub fn reads_own_level(board: &Board) -> bool {
    board.in_domain() && board.own_seeds() > 0
}

/// Refuses to value positions under `rules` from `values` of other rules
/// (a library caller's mix; every front end opens the tables of the rules
/// it asks for): each stored value would disagree with its moves, which
/// reads as a damaged table.
fn same_rules(rules: Rules, values: &dyn Values) -> Result<()> {
    match values.rules() {
        Some(held) if held != rules => Err(Error::Invalid(format!(
            "{rules} positions cannot be valued from {held} values: open the {rules} tables"
        ))),
        _ => Ok(()),
    }
}

/// The levels [`analyze`] reads for `board` under `rules`, increasing: its
/// own and its moves' children's, each where [`reads_own_level`] (a child
/// whose player to move has no seeds is valued by the rules, unread).
pub fn levels_read(rules: Rules, board: &Board) -> Vec<usize> {
    let moves = moves(rules, board);
    let children = moves.as_slice().iter().map(|m| &m.child);
    ascending(
        std::iter::once(board)
            .chain(children)
            .filter(|b| reads_own_level(b))
            .map(Board::seeds),
    )
}

/// `levels` in increasing order, each once.
fn ascending(levels: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let mut levels: Vec<usize> = levels.into_iter().collect();
    levels.sort_unstable();
    levels.dedup();
    levels
}

/// The levels a value of `board` under `rules` rests on, increasing: those
/// [`levels_read`] for it and every level they were built from
/// ([`levels_needed`]). None for a position without moves: the rules alone
/// give its value.
///
/// ```
/// use mancaladb::oware::{Board, Rules};
/// use mancaladb::query::levels_rested_on;
/// let start = Board::new([3; 12])?;
/// assert_eq!(levels_rested_on(Rules::Awari, &start), [(0..=34).collect::<Vec<_>>(), vec![36]].concat());
/// let over = Board::new([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1])?;
/// assert!(levels_rested_on(Rules::Awari, &over).is_empty());
/// let stored_over = Board::new([0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0])?;
/// assert!(levels_rested_on(Rules::Awari, &stored_over).is_empty());
/// # Ok::<(), mancaladb::Error>(())
/// ```
pub fn levels_rested_on(rules: Rules, board: &Board) -> Vec<usize> {
    ascending(
        levels_read(rules, board)
            .into_iter()
            .flat_map(levels_needed),
    )
}

/// What a value of a position rests on, and how far that is checked here.
/// Serialized as `{read, rests_on, missing, verified}`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Provenance {
    /// The levels the value is read from ([`levels_read`]); none where
    /// the rules give it.
    pub read: Vec<usize>,
    /// Those and every level they were built from ([`levels_rested_on`]).
    pub rests_on: Vec<usize>,
    /// The levels of `rests_on` whose files are not here (gone since the
    /// levels above them were built: the value stands as stored, but
    /// `verify` cannot vouch for it here).
    pub missing: Vec<usize>,
    /// Whether every level of `rests_on` is here and passed every check of
    /// `verify` as it is now ([`Source::all_verified`]); `true` when it
    /// rests on none (the rules give the value, with nothing to check).
    pub verified: bool,
}

/// The [`Provenance`] of a value of `board` under `rules` read from
/// `source`.
pub fn provenance(rules: Rules, board: &Board, source: &Source) -> Result<Provenance> {
    let read = levels_read(rules, board);
    let rests_on = levels_rested_on(rules, board);
    let mut missing = Vec::new();
    for &n in &rests_on {
        if !source.has_level(n)? {
            missing.push(n);
        }
    }
    let verified = missing.is_empty() && source.all_verified(&rests_on)?;
    Ok(Provenance {
        read,
        rests_on,
        missing,
        verified,
    })
}

/// Values `board` and each of its moves under `rules` from `values`: the
/// row [`move_values`] gives the board, with the moves' children, the best
/// value and where it comes from. Each child is valued as [`value`] values
/// it: one whose player to move has no seeds by the rules, reading no level.
///
/// For a stored position, the stored value must equal the best move's value;
/// if it does not, the tables are inconsistent and this is an error rather
/// than an answer.
///
/// # Errors
///
/// As every query ([module docs](self#errors)).
pub fn analyze(rules: Rules, values: &dyn Values, board: &Board) -> Result<Analysis> {
    let mut rows = Vec::with_capacity(1);
    move_values(rules, values, std::slice::from_ref(board), &mut rows)?;
    let row = rows[0];
    let list: Vec<MoveValue> = moves(rules, board)
        .as_slice()
        .iter()
        .map(|m| {
            let value = row[usize::from(m.pit)];
            MoveValue {
                pit: m.pit,
                value,
                captures: m.captured,
                category: Category::of(value),
                child: m.child,
            }
        })
        .collect();
    let seeds = board.seeds();
    let value = list
        .iter()
        .map(|m| m.value)
        .max()
        .unwrap_or(value_without_moves(seeds));
    let best = list
        .iter()
        .filter(|m| m.value == value)
        .map(|m| m.pit)
        .collect();
    let valued_by = match (reads_own_level(board), list.is_empty()) {
        (true, _) => ValuedBy::Level,
        (false, false) => ValuedBy::Moves,
        (false, true) => ValuedBy::Rules,
    };
    Ok(Analysis {
        board: *board,
        seeds,
        value,
        category: Category::of(value),
        moves: list,
        best,
        valued_by,
    })
}

/// Checks that the stored value `stored` of `board` is `best`, the value
/// of its best move, whose children `children` lists: else the tables are
/// inconsistent, an error naming the file `stored` came from and the
/// levels the moves' values came from.
fn check_consistent<I: IntoIterator<Item = Board>>(
    values: &dyn Values,
    board: &Board,
    stored: i8,
    best: i8,
    children: impl FnOnce() -> I,
) -> Result<()> {
    if stored == best {
        return Ok(());
    }
    Err(Error::corrupt(
        values.origin(board),
        Corruption::Inconsistent {
            board: board.to_string(),
            stored,
            best,
            moves_from: ascending(children().into_iter().map(|c| c.seeds())),
        },
    ))
}

/// What a row of [`move_values`] holds for a pit with no legal move: below
/// every value (`-48..=48`), so a row's maximum is the best move's value.
pub const NO_MOVE: i8 = i8::MIN;

/// Boards whose moves [`move_values`] values together: their children
/// (up to six each) and their values are held at once.
const MOVE_BATCH: usize = 1 << 16;

/// The value of every move of each of `boards` into `out` (cleared
/// first): row `k`, at index `p`, is what sowing pit `p` of `boards[k]` is
/// worth to the mover, as [`analyze`] gives it (`captures - value(child)`),
/// or [`NO_MOVE`] where pit `p` has no legal move. A stored board's best
/// move must be worth its stored value, else the tables are inconsistent
/// (an error). The boards' own values and their children's are read in
/// batches through [`values`], with its grouped probes: the labels of a
/// policy for a whole data set, one call ([`analyze`] is this for one
/// board). Of a batch, the own levels are read before any child's, so that
/// a missing own level is the one an error names.
///
/// # Errors
///
/// As every query ([module docs](self#errors)).
pub fn move_values(
    rules: Rules,
    source: &dyn Values,
    boards: &[Board],
    out: &mut Vec<[i8; 6]>,
) -> Result<()> {
    out.clear();
    same_rules(rules, source)?;
    let (mut stored, mut own) = (Vec::new(), Vec::new());
    let (mut children, mut played, mut child_values) = (Vec::new(), Vec::new(), Vec::new());
    for batch in boards.chunks(MOVE_BATCH) {
        // The boards' own levels first: a missing one is the level to name.
        stored.clear();
        stored.extend(batch.iter().filter(|b| reads_own_level(b)).copied());
        values(rules, source, &stored, &mut own)?;
        children.clear();
        played.clear();
        for (k, board) in batch.iter().enumerate() {
            for m in moves(rules, board).as_slice() {
                children.push(m.child);
                played.push((k, usize::from(m.pit), m.captured));
            }
        }
        values(rules, source, &children, &mut child_values)?;
        let first = out.len();
        out.resize(first + batch.len(), [NO_MOVE; 6]);
        let rows = &mut out[first..];
        for ((&(k, pit, captured), child), &v) in played.iter().zip(&children).zip(&child_values) {
            rows[k][pit] = move_value(source, captured, child, v)?;
        }
        let mut own = own.iter();
        for (board, row) in batch.iter().zip(rows.iter()) {
            if reads_own_level(board) {
                let stored = *own.next().expect("one value per stored board");
                let best = row.iter().copied().max().filter(|&v| v != NO_MOVE);
                let best = best.unwrap_or(value_without_moves(board.seeds()));
                check_consistent(source, board, stored, best, || {
                    moves(rules, board)
                        .as_slice()
                        .iter()
                        .map(|m| m.child)
                        .collect::<Vec<_>>()
                })?;
            }
        }
    }
    Ok(())
}

/// `captured - child`, the value of a move that takes `captured` seeds and
/// leaves `board` worth `child` to the opponent ([`in_range`] first: never
/// a difference that wraps).
fn move_value(values: &dyn Values, captured: u8, board: &Board, child: i8) -> Result<i8> {
    // A move captures at most the 48 seeds of a game.
    Ok(captured as i8 - in_range(values, board, child)?)
}

/// `v`, a value of `board` that `values` gave: one outside `-seeds..=seeds`
/// of the board is a corrupt source. This crate's sources refuse such
/// values themselves ([`Values::checks_ranges`]); this guards any other.
fn in_range(values: &dyn Values, board: &Board, v: i8) -> Result<i8> {
    let seeds = board.seeds();
    match usize::from(v.unsigned_abs()) <= seeds {
        true => Ok(v),
        false => Err(Error::corrupt(
            values.origin(board),
            Corruption::BoardValueRange {
                board: board.to_string(),
                value: v,
                seeds,
            },
        )),
    }
}

/// The value of `board` for the player to move: `-seeds` when they have
/// no seeds (the rules' value, no probe); else the stored value when the
/// board is in the stored domain (one probe), else (every opponent pit
/// filled, like the starting positions) the best of its moves, one ply,
/// as [`analyze`] values it.
///
/// # Errors
///
/// As every query ([module docs](self#errors)).
pub fn value(rules: Rules, values: &dyn Values, board: &Board) -> Result<i8> {
    same_rules(rules, values)?;
    match (board.own_seeds(), board.in_domain()) {
        (0, _) => Ok(value_without_moves(board.seeds())),
        (_, true) => values.value(board).and_then(|v| in_range(values, board, v)),
        (_, false) => analyze(rules, values, board).map(|a| a.value),
    }
}

/// The values of `boards` into `out` (cleared first), each as [`value`]
/// gives it: runs of stored boards through [`Values::values`], which
/// tables answer with grouped, prefetched probes, several times faster on
/// levels larger than the caches (BENCHMARKS, "Random probes"). On an
/// error, `out` holds the values of the boards before the one that failed.
///
/// # Errors
///
/// As every query ([module docs](self#errors)).
pub fn values(
    rules: Rules,
    values: &dyn Values,
    boards: &[Board],
    out: &mut Vec<i8>,
) -> Result<()> {
    out.clear();
    same_rules(rules, values)?;
    let mut rest = boards;
    while let Some(first) = rest.first() {
        let stored = rest.iter().take_while(|b| reads_own_level(b)).count();
        if stored == 0 {
            out.push(value(rules, values, first)?);
            rest = &rest[1..];
            continue;
        }
        let (these, after) = rest.split_at(stored);
        let at = out.len();
        let given = values.values(these, out);
        if !values.checks_ranges() {
            // The values given stand up to the first out of its range. (A
            // source that took values out of `out`, which the trait does
            // not allow, leaves fewer to check, not a panic.)
            let appended = out.get(at..).unwrap_or_default();
            if let Some((k, e)) = these
                .iter()
                .zip(appended)
                .enumerate()
                .find_map(|(k, (b, &v))| in_range(values, b, v).err().map(|e| (k, e)))
            {
                out.truncate(at + k);
                return Err(e);
            }
        }
        given?;
        rest = after;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::compose::Ranker;
    use crate::oware::Encoder;
    use crate::oware::solve::solve_level;
    use crate::progress::Progress;

    /// Levels solved in memory (the tests of [`super::line`] use them too).
    pub(super) struct Solved(Vec<Vec<i8>>, Encoder);

    /// Levels 0..=top of awari, solved in memory.
    pub(super) fn solved_to(top: usize) -> Solved {
        let mut levels: Vec<Vec<i8>> = Vec::new();
        for n in 0..=top {
            let lower: Vec<&[i8]> = levels.iter().map(|v| v.as_slice()).collect();
            levels.push(
                solve_level(Rules::Awari, n, &lower, Progress::QUIET)
                    .unwrap()
                    .to_vec(),
            );
        }
        Solved(levels, Encoder::new(top))
    }

    impl Values for Solved {
        fn value(&self, board: &Board) -> Result<i8> {
            Ok(self.0[board.seeds()][self.1.index_of(board)? as usize])
        }
        fn origin(&self, _: &Board) -> PathBuf {
            PathBuf::from("memory")
        }
    }

    /// One level of a solved set: every other level is missing.
    struct OnlyLevel<'a>(&'a Solved, usize);

    impl Values for OnlyLevel<'_> {
        fn value(&self, board: &Board) -> Result<i8> {
            match board.seeds() == self.1 {
                true => self.0.value(board),
                false => NoLevels.value(board),
            }
        }
        fn origin(&self, _: &Board) -> PathBuf {
            PathBuf::from("memory")
        }
    }

    /// A source that gives one value for every board.
    struct Constant(i8);

    impl Values for Constant {
        fn value(&self, _: &Board) -> Result<i8> {
            Ok(self.0)
        }
        fn origin(&self, _: &Board) -> PathBuf {
            PathBuf::from("constant")
        }
    }

    /// A source without any level: every probe is a missing level.
    struct NoLevels;

    impl Values for NoLevels {
        fn value(&self, board: &Board) -> Result<i8> {
            Err(Error::Missing(crate::error::Missing::Level {
                dir: PathBuf::from("nowhere"),
                rules: "awari",
                seeds: board.seeds(),
            }))
        }
        fn origin(&self, _: &Board) -> PathBuf {
            PathBuf::from("nowhere")
        }
    }

    #[test]
    fn positions_are_not_valued_from_the_values_of_other_rules() {
        struct Held(Rules);
        impl Values for Held {
            fn value(&self, _: &Board) -> Result<i8> {
                Ok(0)
            }
            fn origin(&self, _: &Board) -> PathBuf {
                PathBuf::from("memory")
            }
            fn rules(&self) -> Option<Rules> {
                Some(self.0)
            }
        }
        let b = Board([0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
        let want = "abapa positions cannot be valued from awari values: open the abapa tables";
        let awari = Held(Rules::Awari);
        assert_eq!(
            value(Rules::Abapa, &awari, &b).unwrap_err().to_string(),
            want
        );
        assert_eq!(
            analyze(Rules::Abapa, &awari, &b).unwrap_err().to_string(),
            want
        );
        let err = values(Rules::Abapa, &awari, &[b], &mut Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), want);
        let err = move_values(Rules::Abapa, &awari, &[b], &mut Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), want);
        let err = principal_line(Rules::Abapa, &awari, &b, 10).unwrap_err();
        assert_eq!(err.to_string(), want);
        assert_eq!(value(Rules::Awari, &awari, &b).unwrap(), 0);
    }

    #[test]
    fn a_player_without_seeds_has_lost_the_rest_without_a_table() {
        // Stored (an empty opponent pit) and not; the empty board.
        for pits in [
            [0, 0, 0, 0, 0, 0, 48, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 2],
            [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
            [0; 12],
        ] {
            let b = Board(pits);
            let lost = -(b.seeds() as i8);
            assert_eq!(value(Rules::Awari, &NoLevels, &b).unwrap(), lost, "{b}");
            let a = analyze(Rules::Awari, &NoLevels, &b).unwrap();
            assert_eq!(
                (a.value, a.moves.len(), a.valued_by),
                (lost, 0, ValuedBy::Rules),
                "{b}"
            );
            assert!(levels_read(Rules::Awari, &b).is_empty(), "{b}");
            let mut out = Vec::new();
            values(Rules::Awari, &NoLevels, &[b, b], &mut out).unwrap();
            assert_eq!(out, [lost, lost], "{b}");
            let mut rows = Vec::new();
            move_values(Rules::Awari, &NoLevels, &[b], &mut rows).unwrap();
            assert_eq!(rows, [[NO_MOVE; 6]], "{b}");
        }
        // A player with seeds reads the level, stored or not.
        let b = Board([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(value(Rules::Awari, &NoLevels, &b).is_err());
    }

    /// A source of another crate that gives values outside a board's range
    /// is corrupt to `value` and `values` too, as to `analyze`: the values
    /// before the first such one stand.
    #[test]
    fn a_stored_value_out_of_range_is_corruption_to_every_query() {
        let three = Board([1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]);
        let one = Board([0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        assert!(!Constant(2).checks_ranges());
        assert_eq!(value(Rules::Awari, &Constant(2), &three).unwrap(), 2);
        let range_error = |e: Error| match e {
            Error::Corrupt {
                kind: Corruption::BoardValueRange { value, seeds, .. },
                ..
            } => (value, seeds),
            e => panic!("{e}"),
        };
        let e = value(Rules::Awari, &Constant(2), &one).unwrap_err();
        assert_eq!(range_error(e), (2, 1));
        let mut out = vec![9];
        let e = values(
            Rules::Awari,
            &Constant(2),
            &[three, three, one, three],
            &mut out,
        );
        assert_eq!((range_error(e.unwrap_err()), out), ((2, 1), vec![2, 2]));
    }

    #[test]
    fn a_child_value_out_of_range_is_corruption_not_a_wrapped_difference() {
        // Pit 5 sows its seed into pit 6, capturing nothing: the child has
        // one seed, so only -1..=1 are values of it.
        let b = Board([0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        for v in [-128, -2, 2, 127] {
            let e = analyze(Rules::Awari, &Constant(v), &b).unwrap_err();
            assert!(
                matches!(&e, Error::Corrupt {
                    kind: Corruption::BoardValueRange { value, seeds: 1, .. },
                    ..
                } if *value == v),
                "{e}"
            );
        }
        // -1 is one: the move is worth 1, which the stored -1 contradicts
        // (to `move_values` too, which gives the same error).
        let e = analyze(Rules::Awari, &Constant(-1), &b).unwrap_err();
        let batch = move_values(Rules::Awari, &Constant(-1), &[b], &mut Vec::new());
        assert_eq!(batch.unwrap_err().to_string(), e.to_string());
        // The move's value came from level 1, which the error names.
        assert!(
            matches!(
                &e,
                Error::Corrupt {
                    kind: Corruption::Inconsistent {
                        stored: -1,
                        best: 1,
                        moves_from,
                        ..
                    },
                    ..
                } if moves_from == &[1]
            ),
            "{e}"
        );
    }

    #[test]
    fn value_is_the_stored_one_in_the_domain_and_one_ply_outside() {
        let top = 8;
        let solved = solved_to(top);
        // Every board of up to `top` seeds, stored or not.
        let all = Ranker::new(12, top, None);
        let mut outside = 0;
        let (mut every, mut rows) = (Vec::new(), Vec::new());
        for n in 0..=top {
            let mut b = Board::EMPTY;
            all.unrank(n, 0, &mut b.0);
            loop {
                let v = value(Rules::Awari, &solved, &b).unwrap();
                let a = analyze(Rules::Awari, &solved, &b).unwrap();
                assert_eq!(v, a.value, "{b}");
                // Each move by hand from the solved levels (every child is
                // stored): its captures minus the child's value; the best
                // of them is the board's, and with no move the opponent
                // takes every seed.
                let mut row = [NO_MOVE; 6];
                for m in moves(Rules::Awari, &b) {
                    let child =
                        solved.0[m.child.seeds()][solved.1.index_of(&m.child).unwrap() as usize];
                    row[usize::from(m.pit)] = m.captured as i8 - child;
                }
                let analyzed: Vec<(u8, i8)> = a.moves.iter().map(|m| (m.pit, m.value)).collect();
                let by_hand: Vec<(u8, i8)> = (0..6)
                    .filter(|&p| row[usize::from(p)] != NO_MOVE)
                    .map(|p| (p, row[usize::from(p)]))
                    .collect();
                assert_eq!(analyzed, by_hand, "{b}");
                every.push(b);
                rows.push(row);
                let one_ply = row.into_iter().filter(|&v| v != NO_MOVE).max();
                assert_eq!(v, one_ply.unwrap_or(-(n as i8)), "{b}");
                if b.in_domain() {
                    assert_eq!(v, solved.value(&b).unwrap(), "{b}");
                } else {
                    outside += 1;
                    // Every opponent pit filled: the mover has a move
                    // unless their own side is empty.
                    assert_eq!(a.moves.is_empty(), b.own_seeds() == 0, "{b}");
                }
                if !all.advance(&mut b.0) {
                    break;
                }
            }
        }
        // C(n+5, 11) boards of n seeds fill all six opponent pits.
        let want: u128 = (6..=top as u64)
            .map(|n| crate::compose::binomial(n + 5, 11))
            .sum();
        assert_eq!(outside as u128, want);
        // The moves' values of every board in one call (batches of boards
        // included: more boards than one holds), as `analyze` gives them.
        assert!(every.len() > MOVE_BATCH);
        let mut out = vec![[0; 6]];
        move_values(Rules::Awari, &solved, &every, &mut out).unwrap();
        assert!(out == rows);
        // README: 0 0 0 0 0 2 1 1 0 0 0 0 is worth +4 (pit 5 takes all).
        let b = Board::parse(&["0 0 0 0 0 2 1 1 0 0 0 0"]).unwrap();
        assert_eq!(value(Rules::Awari, &solved, &b).unwrap(), 4);
    }

    /// The final score gives each player what they took and their share of
    /// the board by the value, `(seeds ± value) / 2`: README's won
    /// position `0 0 0 0 0 2 1 1 0 0 0 0` (+4, pit 5 takes all four) after
    /// 22 seeds each ends 26 to 22; a mover without seeds (-2 by the rules,
    /// the opponent takes the rest) after 23 each ends 23 to 25.
    #[test]
    fn a_final_score_shares_the_board_by_the_value() {
        let solved = solved_to(4);
        for (pits, taken, value, end) in [
            ("0 0 0 0 0 2 1 1 0 0 0 0", 22, 4, (26.0, 22.0)),
            ("0 0 0 0 0 0 1 1 0 0 0 0", 23, -2, (23.0, 25.0)),
        ] {
            let b = Board::parse(&[pits]).unwrap();
            let a = analyze(Rules::Awari, &solved, &b).unwrap();
            assert_eq!(a.value, value, "{b}");
            let score = FinalScore::of(&a, Taken::new(&b, taken, taken).unwrap());
            assert_eq!((score.mover, score.opponent), end, "{b}");
        }
    }

    /// README's won position `0 0 0 0 0 2 1 1 0 0 0 0`: its value is read
    /// from its own level (4) alone, since its one move takes all four and
    /// leaves a board without seeds, which the rules value (level 0 is not
    /// read: a source of level 4 alone answers); the analysis names that
    /// move best and says so in the JSON every front end gives. A starting
    /// position, not stored, is valued by its moves, from the levels they
    /// reach (10: pit 5 takes two; 12).
    #[test]
    fn an_analysis_names_its_levels_best_moves_and_categories() {
        let solved = solved_to(4);
        let b = Board::parse(&["0 0 0 0 0 2 1 1 0 0 0 0"]).unwrap();
        assert_eq!(levels_read(Rules::Awari, &b), [4]);
        let only_4 = OnlyLevel(&solved, 4);
        assert_eq!(analyze(Rules::Awari, &only_4, &b).unwrap().value, 4);
        assert_eq!(value(Rules::Awari, &only_4, &b).unwrap(), 4);
        let line = principal_line(Rules::Awari, &only_4, &b, LINE_PLIES).unwrap();
        assert_eq!((line.plies.len(), line.end), (1, LineEnd::GameOver));
        let a = analyze(Rules::Awari, &solved, &b).unwrap();
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::json!({
                "seeds": 4, "value": 4, "category": "win",
                "moves": [{"pit": 5, "value": 4, "captures": 4, "category": "win"}],
                "best": [5], "valued_by": "level",
            })
        );
        assert_eq!(levels_read(Rules::Awari, &Board([1; 12])), [10, 12]);
        let names = |v: i8| Category::of(v).name();
        assert_eq!(
            (names(-48), names(-1), names(0), names(1), names(48)),
            ("loss", "loss", "draw", "win", "win")
        );
        assert_eq!(
            [ValuedBy::Level, ValuedBy::Moves, ValuedBy::Rules]
                .map(|v| serde_json::to_value(v).unwrap()),
            ["level", "moves", "rules"].map(serde_json::Value::from)
        );
    }

    /// `captured` as text: counts past 64 bits are too many, below zero
    /// negative, and the sum in the message is the true one.
    #[test]
    fn taken_parse_names_what_is_wrong() {
        let b = Board::new([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
        let err = |text: &str| Taken::parse(&b, text).unwrap_err().to_string();
        assert_eq!(
            Taken::parse(&b, "16, 16").unwrap(),
            Taken {
                mover: 16,
                opponent: 16
            }
        );
        assert_eq!(
            err("18446744073709551616,0"),
            "captured 18446744073709551616,0: a side takes at most the game's 48 seeds"
        );
        assert_eq!(
            err("0,-99999999999999999999"),
            "captured 0,-99999999999999999999: a seed count cannot be negative"
        );
        assert_eq!(
            err("-1,33"),
            "captured -1,33: a seed count cannot be negative"
        );
        assert_eq!(
            err(&format!("{},{}", i64::MAX, i64::MAX)),
            format!(
                "captured {m},{m} and 16 seeds on the board make 18446744073709551630, not the game's 48",
                m = i64::MAX
            )
        );
        for bad in ["", "1", "1,2,3", "a,1", "1.5,2"] {
            assert_eq!(
                err(bad),
                "captured: give MOVER,OPPONENT, two seed counts",
                "{bad}"
            );
        }
    }
}
