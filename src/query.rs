//! Answering questions about positions from stored tables: a position's
//! value, the value of each move, and the principal variation.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::oware::{Board, Encoder, MAX_SEEDS, Rules, moves};
use crate::table::Table;

/// A source of stored values: anything that can tell the value of a
/// position of the stored domain.
pub trait Values {
    /// The stored value of `board` (which must be in the domain).
    fn value(&self, board: &Board) -> Result<i8>;
    /// Where the value of `board` comes from, for error messages.
    fn origin(&self, board: &Board) -> String;
}

/// The tables of one rule set in a directory, opened level by level as
/// queries need them.
pub struct Tables {
    db: Db,
    rules: Rules,
    encoder: Encoder,
    open: Mutex<HashMap<usize, std::sync::Arc<Table>>>,
}

impl Tables {
    /// Reads `rules` tables from `db`.
    pub fn new(db: Db, rules: Rules) -> Tables {
        Tables {
            db,
            rules,
            encoder: Encoder::new(MAX_SEEDS),
            open: Mutex::new(HashMap::new()),
        }
    }

    fn table(&self, seeds: usize) -> Result<std::sync::Arc<Table>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = open.get(&seeds) {
            return Ok(t.clone());
        }
        let t = std::sync::Arc::new(self.db.open(self.rules, seeds)?);
        open.insert(seeds, t.clone());
        Ok(t)
    }
}

impl Values for Tables {
    fn value(&self, board: &Board) -> Result<i8> {
        let seeds = board.seeds();
        self.table(seeds)?.get(self.encoder.rank(board))
    }

    fn origin(&self, board: &Board) -> String {
        self.db
            .table_path(self.rules, board.seeds())
            .display()
            .to_string()
    }
}

/// One legal move and what it is worth to the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The pit sown, `0..6`.
    pub pit: u8,
    /// `captures - value(child)`.
    pub value: i8,
    /// Seeds the move takes.
    pub captures: u8,
}

/// A position's value and the value of each legal move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The position.
    pub board: Board,
    /// Seeds on the board.
    pub seeds: usize,
    /// Best stone difference the player to move can still get.
    pub value: i8,
    /// Legal moves in pit order (none when the mover has no seeds).
    pub moves: Vec<MoveValue>,
    /// Whether the position is in the stored domain (else it was valued
    /// from its children, one ply).
    pub stored: bool,
}

impl Analysis {
    /// Pits of the moves that achieve the value.
    pub fn best(&self) -> Vec<u8> {
        self.moves
            .iter()
            .filter(|m| m.value == self.value)
            .map(|m| m.pit)
            .collect()
    }
}

/// Values `board` and each of its moves under `rules` from `values`.
///
/// For a stored position, the stored value must equal the best move's value;
/// if it does not, the tables are inconsistent and this is an error rather
/// than an answer.
pub fn analyze(rules: Rules, values: &dyn Values, board: &Board) -> Result<Analysis> {
    let seeds = board.seeds();
    let mut list = Vec::new();
    for m in moves(rules, board).as_slice() {
        let child = values.value(&m.child)?;
        list.push(MoveValue {
            pit: m.pit,
            value: m.captured as i8 - child,
            captures: m.captured,
        });
    }
    let value = list.iter().map(|m| m.value).max().unwrap_or(-(seeds as i8));
    let stored = board.in_domain();
    if stored {
        let v = values.value(board)?;
        if v != value {
            return Err(Error::corrupt(
                values.origin(board),
                format!("stored value {v} of {board} disagrees with its moves' best value {value}"),
            ));
        }
    }
    Ok(Analysis {
        board: *board,
        seeds,
        value,
        moves: list,
        stored,
    })
}

/// One ply of a principal variation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// The position after the last ply repeats the one before ply `ply`:
    /// from here play goes round forever.
    Cycle {
        /// Index of the first repeated ply.
        ply: usize,
    },
    /// The line was cut at the requested length.
    Limit,
}

/// Follows best moves (the lowest pit among equals) from `board` until the
/// game ends, a position repeats, or `max_plies` plies.
pub fn principal_line(
    rules: Rules,
    values: &dyn Values,
    board: &Board,
    max_plies: usize,
) -> Result<(Vec<Ply>, LineEnd)> {
    let mut line = Vec::new();
    let mut seen: HashMap<Board, usize> = HashMap::new();
    let mut pos = *board;
    loop {
        if let Some(&ply) = seen.get(&pos) {
            return Ok((line, LineEnd::Cycle { ply }));
        }
        if line.len() == max_plies {
            return Ok((line, LineEnd::Limit));
        }
        seen.insert(pos, line.len());
        let a = analyze(rules, values, &pos)?;
        let Some(best) = a.moves.iter().find(|m| m.value == a.value) else {
            return Ok((line, LineEnd::GameOver));
        };
        line.push(Ply {
            board: pos,
            pit: best.pit,
            captures: best.captures,
            value: a.value,
        });
        let next = moves(rules, &pos)
            .as_slice()
            .iter()
            .find(|m| m.pit == best.pit)
            .expect("best move is legal")
            .child;
        if next.seeds() == 0 {
            return Ok((line, LineEnd::GameOver));
        }
        pos = next;
    }
}
