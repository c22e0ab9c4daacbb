//! Whole Omweso moves: relays, captures with re-sowing, reverse captures,
//! and the exact decision of whether a move ends, loops, or can be made to
//! loop by the player's choices.
//!
//! A move is a sequence of laps. Between captures the laps form a
//! deterministic counter-clockwise relay; the player's only choices are
//! reverse captures (a lap from one of the four leftmost pits sown clockwise
//! because that lap ends in a capture). Every capture empties one of the
//! opponent's 8 columns for good (seeds never enter the opponent's pits), so
//! a move makes at most 8 captures: every path is a finite chain of
//! capture-free segments, the last of which ends or cycles. Only a segment
//! in which no capture is possible can cycle (`Explorer::segment`); it is
//! a pure relay, whose cycle is proven exactly by the return of its first
//! relay state (fact 2 of [`super::relay`]).

use serde::Serialize;

use super::relay::{ASK_EVERY, Relay, certificate};
use super::side::{Dir, LEFTMOST, PITS, Side};
use crate::error::{Error, Result};

/// Which moves the rules allow (Oware's rule sets are `oware::Rules`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    /// A match's first turn: no captures (a capturing landing relays).
    pub first_turn: bool,
}

/// Both sides, seen by the player to move. The opponent's pits are in the
/// opponent's own numbering: inner pit `i` (8..16) of the mover faces the
/// opponent's pits `23 - i` (inner row) and `i - 8` (outer row).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Position {
    /// The player to move.
    pub me: Side,
    /// The opponent.
    pub opp: Side,
}

impl Position {
    /// Seeds in play, both sides.
    pub fn seeds(self) -> usize {
        self.me.seeds() + self.opp.seeds()
    }

    /// Whether the position can arise in a game: at most its
    /// [`MAX_SEEDS`](super::MAX_SEEDS) seeds in play. (Positions with more
    /// are studies; [`analyze`] takes them too.)
    pub fn check_in_game(self) -> Result<()> {
        match self.seeds() {
            n if n > super::MAX_SEEDS => Err(Error::Invalid(format!(
                "{n} seeds in play, more than the {} of an Omweso game",
                super::MAX_SEEDS
            ))),
            _ => Ok(()),
        }
    }
}

/// Where a lap starts and what it sows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hand {
    /// Lift every seed of the start pit (a move's first lap, or a relay).
    Lift,
    /// Sow seeds just captured, from the pit after the start pit.
    Captured(u8),
}

#[derive(Clone, Copy, Debug)]
struct LapStart {
    pos: Position,
    pit: usize,
    hand: Hand,
}

/// What one lap leads to.
enum Next {
    /// The last seed fell in an empty pit.
    Ends(Position),
    /// A capture; the captured seeds are the next lap.
    Capture(LapStart),
    /// A relay from the landing pit.
    Relay(LapStart),
}

/// Plays one lap: returns what follows and the seeds sown.
fn play(variant: Variant, st: &LapStart, dir: Dir) -> (Next, u64) {
    let mut me = st.pos.me;
    let mut opp = st.pos.opp;
    let hand = match st.hand {
        Hand::Lift => {
            let h = usize::from(me.get(st.pit));
            me.set(st.pit, 0);
            h
        }
        Hand::Captured(h) => usize::from(h),
    };
    let last = me.sow(st.pit, hand, dir);
    let sown = hand as u64;
    if me.get(last) == 1 {
        return (Next::Ends(Position { me, opp }), sown);
    }
    if !variant.first_turn && last >= 8 {
        let (a, b) = (23 - last, last - 8);
        let (sa, sb) = (opp.get(a), opp.get(b));
        if sa > 0 && sb > 0 {
            opp.set(a, 0);
            opp.set(b, 0);
            let next = LapStart {
                pos: Position { me, opp },
                pit: st.pit,
                hand: Hand::Captured(sa + sb),
            };
            return (Next::Capture(next), sown);
        }
    }
    (
        Next::Relay(LapStart {
            pos: Position { me, opp },
            pit: last,
            hand: Hand::Lift,
        }),
        sown,
    )
}

/// Whether a lap can capture against `opp`: some column of the opponent has
/// seeds in both its pits (captures only empty columns, so this stays false
/// for the rest of the move once it is).
fn can_capture(variant: Variant, opp: Side) -> bool {
    !variant.first_turn && (8..PITS).any(|i| opp.get(23 - i) > 0 && opp.get(i - 8) > 0)
}

/// Whether the lap from `st` may be sown clockwise: it starts in one of the
/// four leftmost pits and, sown clockwise, ends in a capture.
fn reversible(variant: Variant, st: &LapStart) -> bool {
    !variant.first_turn
        && LEFTMOST.contains(&st.pit)
        && matches!(play(variant, st, Dir::Cw).0, Next::Capture(_))
}

/// The verdict on one start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every way of playing the move ends.
    Terminates,
    /// No choice remains after the start, and the move never ends.
    Infinite,
    /// Some choice of reverse captures makes the move endless (the others
    /// end, or were not decided within the budget).
    CanLoop,
    /// Choices remain after the start, and every way of taking them is
    /// endless.
    MustLoop,
    /// The lap budget ran out before a decision.
    Undecided,
}

impl Verdict {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Terminates => "terminates",
            Verdict::Infinite => "infinite",
            Verdict::CanLoop => "can-loop",
            Verdict::MustLoop => "must-loop",
            Verdict::Undecided => "undecided",
        }
    }
}

/// What decided a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// Fact 3: the pit behind the start pit is empty and no capture is
    /// possible, so the relay must end (the laps were then counted).
    Certificate,
    /// Facts 2 and 5: once no capture was possible, the relay's first
    /// state came back (brought to start 0: possibly rotated).
    Recurrence,
    /// The move was played to its end.
    Played,
    /// The budget ran out.
    Budget,
}

/// One way of playing a move, as far as it was followed.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize)]
pub struct Line {
    /// Laps played; for a loop, the lap at which the repeat was proven;
    /// for an undecided line, the laps followed when the budget ran out.
    pub laps: u64,
    /// Seeds sown.
    pub sown: u64,
    /// Captures made.
    pub captures: u32,
    /// Laps (1-based) sown clockwise by choice.
    pub reversed: Vec<u64>,
    /// The position when the move ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<Position>,
    /// For a loop: laps and seeds in one period, and the repeating state
    /// (position and pit about to be lifted). In JSON its fields are the
    /// line's own: `period`, `period_sown`, `repeat`, `repeat_pit`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cycle: Option<Cycle>,
}

/// A proven loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cycle {
    /// Laps in one period.
    pub period: u64,
    /// Seeds sown in one period.
    #[serde(rename = "period_sown")]
    pub sown: u64,
    /// The position at the repeating state.
    #[serde(rename = "repeat")]
    pub pos: Position,
    /// The pit lifted at the repeating state.
    #[serde(rename = "repeat_pit")]
    pub pit: usize,
}

/// The analysis of one start. In JSON the line's fields are the report's
/// own (`laps`, `sown`, `captures`, `reversed`, `end`, `period`, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The start pit.
    pub pit: usize,
    /// Direction of the first lap.
    pub direction: Dir,
    /// The verdict.
    pub verdict: Verdict,
    /// What decided it.
    pub criterion: Criterion,
    /// Reverse options met after the start (each a branch followed both
    /// ways); 0 means the move is one line.
    pub choice_points: u32,
    /// Laps walked over all lines followed (at most the budget).
    pub walked: u64,
    /// How the lines of the move's choice tree came out (one line unless
    /// it has choice points): with `can-loop`, whether the lines that do
    /// not loop all end or some were left undecided by the budget (and so
    /// might loop too, which would make the move `must-loop`).
    pub lines: Lines,
    /// The line shown: for a loop, a looping line with the fewest reverse
    /// laps (the first found among equals; at each option the reversal is
    /// explored before the lap that declines it); for
    /// `terminates`, an ending line with the fewest (the line declining
    /// every reversal); for `undecided`, the line being followed when the
    /// budget ran out.
    #[serde(flatten)]
    pub line: Line,
}

/// The lines of a move's choice tree by outcome: each way of taking or
/// declining its reverse options is one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Lines {
    /// Lines that end.
    pub ending: u64,
    /// Lines proven endless.
    pub looping: u64,
    /// Lines not followed to a verdict: the budget ran out on them or
    /// before them.
    pub undecided: u64,
}

/// Follows every way of playing a move, within a lap budget.
struct Explorer<'a> {
    variant: Variant,
    budget: u64,
    used: u64,
    /// Asked every [`ASK_EVERY`] laps whether to give up.
    stop: &'a mut dyn FnMut() -> bool,
    /// `stop` said so: every line ends as if the budget had run out.
    stopped: bool,
    /// Laps used at which `stop` is asked next.
    next_ask: u64,
    /// Best witnesses found so far.
    ends: Option<Line>,
    loops: Option<Line>,
    undecided: Option<Line>,
    choice_points: u32,
    lines: Lines,
}

impl Explorer<'_> {
    /// Whether the budget is spent or the caller asked to stop.
    fn spent(&mut self) -> bool {
        if self.used >= self.next_ask {
            self.next_ask = self.used + ASK_EVERY;
            self.stopped = self.stopped || (self.stop)();
        }
        self.stopped || self.used >= self.budget
    }

    /// Keeps `line` in `slot` if it has fewer reverse laps than the line
    /// there (the first found among equals).
    fn keep(slot: &mut Option<Line>, line: Line) {
        if slot
            .as_ref()
            .is_none_or(|l| line.reversed.len() < l.reversed.len())
        {
            *slot = Some(line);
        }
    }

    /// A line that ends.
    fn ended(&mut self, line: Line) {
        self.lines.ending += 1;
        Self::keep(&mut self.ends, line);
    }

    /// A line proven endless.
    fn looped(&mut self, line: Line) {
        self.lines.looping += 1;
        Self::keep(&mut self.loops, line);
    }

    /// A line left when the budget ran out (the first such is shown).
    fn undecided(&mut self, line: Line) {
        self.lines.undecided += 1;
        self.undecided.get_or_insert(line);
    }

    /// Follows the segment starting at `st`, having played `line` so far.
    /// The reverse option is offered at every lap but, if `first_fixed`, the
    /// first (a move's first lap: its clockwise version is a start of its
    /// own).
    ///
    /// Only a segment in which no capture is possible can loop, and it is a
    /// pure relay, decided by [`Explorer::relay`]. While a capture is
    /// possible the relay never comes back to a state: a cycle lands on
    /// every pit, so also on an inner pit facing two full pits, where it
    /// would capture (docs/omweso-loops.md, "Moves with captures"). Such a
    /// segment ends or captures within its finitely many states.
    fn segment(&mut self, mut st: LapStart, mut line: Line, first_fixed: bool) {
        // The opponent's side is the same all along the segment.
        let pure = !can_capture(self.variant, st.pos.opp);
        let mut offer = !first_fixed;
        loop {
            if self.spent() {
                self.undecided(line);
                return;
            }
            if pure && st.hand == Hand::Lift {
                // No capture and so no choice is left.
                self.relay(st, line);
                return;
            }
            if offer && reversible(self.variant, &st) {
                // The player may sow this lap clockwise instead, capturing.
                self.choice_points += 1;
                let mut alt = line.clone();
                alt.reversed.push(alt.laps + 1);
                self.step(st, Dir::Cw, alt);
                if self.spent() {
                    // The branch used up the budget before this lap.
                    self.undecided(line);
                    return;
                }
            }
            offer = true;
            self.used += 1;
            let (next, sown) = play(self.variant, &st, Dir::Ccw);
            line.laps += 1;
            line.sown += sown;
            match next {
                Next::Ends(pos) => {
                    line.end = Some(pos);
                    self.ended(line);
                    return;
                }
                Next::Capture(next) => {
                    line.captures += 1;
                    self.segment(next, line, false);
                    return;
                }
                Next::Relay(next) => st = next,
            }
        }
    }

    /// Follows the capture-free relay from the relay state `st` with the
    /// tight walk of [`super::relay::run`], which decides it by the return
    /// of its first state (fact 2), within the budget left.
    fn relay(&mut self, st: LapStart, mut line: Line) {
        let opp = st.pos.opp;
        let left = self.budget - self.used;
        let walk = super::relay::run_unless(st.pos.me, st.pit, left, || {
            self.stopped = (self.stop)();
            self.stopped
        });
        match walk {
            Relay::Ends { laps, sown, side } => {
                (self.used, line.laps, line.sown) =
                    (self.used + laps, line.laps + laps, line.sown + sown);
                line.end = Some(Position { me: side, opp });
                self.ended(line);
            }
            Relay::Loops { period, sown, laps } => {
                // The repeat is proven after `laps` laps (fact 5); the seeds
                // shown are those sown in them.
                let walked = sown / (period / laps);
                (self.used, line.laps, line.sown) =
                    (self.used + laps, line.laps + laps, line.sown + walked);
                line.cycle = Some(Cycle {
                    period,
                    sown,
                    pos: st.pos,
                    pit: st.pit,
                });
                self.looped(line);
            }
            Relay::Undecided { laps, sown } => {
                (self.used, line.laps, line.sown) =
                    (self.used + laps, line.laps + laps, line.sown + sown);
                self.undecided(line);
            }
        }
    }

    /// Plays one lap of `st` in `dir` (a capture, for clockwise laps) and
    /// follows what comes after.
    fn step(&mut self, st: LapStart, dir: Dir, mut line: Line) {
        if self.spent() {
            self.undecided(line);
            return;
        }
        self.used += 1;
        let (next, sown) = play(self.variant, &st, dir);
        line.laps += 1;
        line.sown += sown;
        match next {
            Next::Capture(next) => {
                line.captures += 1;
                self.segment(next, line, false);
            }
            Next::Ends(pos) => {
                line.end = Some(pos);
                self.ended(line);
            }
            Next::Relay(next) => self.segment(next, line, false),
        }
    }
}

/// Decides the move from `pit` of `pos`, first lap sown `direction`
/// (clockwise only where that lap captures), within `budget` laps in all:
/// the budget is shared by every line of the move's choice tree (a line
/// after a reverse option is explored with what the lines before it left).
/// A start that is not one of the position's moves ([`starts`]) or a
/// budget of 0 is [`Error::Invalid`].
pub fn analyze_start(
    variant: Variant,
    pos: Position,
    pit: usize,
    direction: Dir,
    budget: u64,
) -> Result<Report> {
    if !checked_starts(variant, pos, Some(pit), budget)?.contains(&(pit, direction)) {
        return Err(Error::Invalid(format!(
            "pit {pit}: no clockwise start there in this position (see its starts)"
        )));
    }
    Ok(
        analyze_start_unless(variant, pos, pit, direction, budget, &mut || false)
            .expect("never asked to stop"),
    )
}

/// [`analyze_start`], asking `stop` every [`ASK_EVERY`] laps whether to
/// give up (`None` if it said so).
fn analyze_start_unless(
    variant: Variant,
    pos: Position,
    pit: usize,
    direction: Dir,
    budget: u64,
    stop: &mut dyn FnMut() -> bool,
) -> Option<Report> {
    let start = LapStart {
        pos,
        pit,
        hand: Hand::Lift,
    };
    let mut ex = Explorer {
        variant,
        budget,
        used: 0,
        stop,
        stopped: false,
        next_ask: ASK_EVERY,
        ends: None,
        loops: None,
        undecided: None,
        choice_points: 0,
        lines: Lines::default(),
    };
    // The first lap opens the first segment, which offers it no reverse
    // option; sown clockwise, it is the reverse lap the start itself chose.
    if direction == Dir::Ccw {
        ex.segment(start, Line::default(), true);
    } else {
        ex.step(
            start,
            Dir::Cw,
            Line {
                reversed: vec![1],
                ..Line::default()
            },
        );
    }
    if ex.stopped {
        return None;
    }
    // The choice of the first lap's direction is the start itself: only
    // the choices that remain after it make a loop `must-loop`.
    let verdict = match (
        ex.loops.is_some(),
        ex.ends.is_some(),
        ex.undecided.is_some(),
        ex.choice_points > 0,
    ) {
        (true, true, _, _) => Verdict::CanLoop,
        (true, false, true, _) => Verdict::CanLoop,
        (true, false, false, false) => Verdict::Infinite,
        (true, false, false, true) => Verdict::MustLoop,
        (false, _, true, _) => Verdict::Undecided,
        (false, true, false, _) => Verdict::Terminates,
        (false, false, false, _) => unreachable!("every path ends, loops or runs out of budget"),
    };
    let pure_relay = !can_capture(variant, pos.opp);
    let criterion = match verdict {
        Verdict::Undecided => Criterion::Budget,
        Verdict::Terminates
            if pure_relay && direction == Dir::Ccw && certificate(pos.me, pit, Dir::Ccw) =>
        {
            Criterion::Certificate
        }
        Verdict::Terminates => Criterion::Played,
        _ => Criterion::Recurrence,
    };
    let line = match verdict {
        Verdict::Infinite | Verdict::CanLoop | Verdict::MustLoop => ex.loops,
        Verdict::Terminates => ex.ends,
        Verdict::Undecided => ex.undecided,
    }
    .expect("the verdict was drawn from this line");
    Some(Report {
        pit,
        direction,
        verdict,
        criterion,
        choice_points: ex.choice_points,
        walked: ex.used,
        lines: ex.lines,
        line,
    })
}

/// Every start of the player to move: each pit holding 2 or more seeds
/// counter-clockwise, and clockwise too where that first lap captures.
pub fn starts(variant: Variant, pos: Position) -> Vec<(usize, Dir)> {
    let mut out = Vec::new();
    for pit in 0..PITS {
        if pos.me.get(pit) < 2 {
            continue;
        }
        out.push((pit, Dir::Ccw));
        if reversible(
            variant,
            &LapStart {
                pos,
                pit,
                hand: Hand::Lift,
            },
        ) {
            out.push((pit, Dir::Cw));
        }
    }
    out
}

/// Every start of a position analysed: the answer of `mancaladb loops`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// One report per start, in pit order, counter-clockwise first.
    pub starts: Vec<Report>,
}

/// Analyses every start of `pos` (or only those from `pit`) within
/// `budget` laps each. Refuses a pit that does not exist or holds fewer than
/// 2 seeds, and a position with no move.
pub fn analyze(
    variant: Variant,
    pos: Position,
    pit: Option<usize>,
    budget: u64,
) -> Result<Analysis> {
    analyze_unless(variant, pos, pit, budget, &mut || false)
        .map(|a| a.expect("never asked to stop"))
}

/// [`analyze`], asking `stop` every [`ASK_EVERY`] laps (about 10 to 40 ms)
/// whether to give up: `Ok(None)` if it said so. `stop` is called on the
/// calling thread (a Python caller checks its signals there).
pub fn analyze_unless(
    variant: Variant,
    pos: Position,
    pit: Option<usize>,
    budget: u64,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Option<Analysis>> {
    Ok(checked_starts(variant, pos, pit, budget)?
        .iter()
        .map(|&(pit, dir)| analyze_start_unless(variant, pos, pit, dir, budget, stop))
        .collect::<Option<_>>()
        .map(|starts| Analysis { starts }))
}

/// A start pit given as text (`loops --pit`, the server's `pit=`):
/// `0..=15`, with spaces around it and a sign allowed as for a count; any
/// other text in the words of [`analyze`]'s check of a pit number.
pub fn parse_pit(text: &str) -> Result<usize> {
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(p) if (0..PITS as i64).contains(&p) => Ok(p as usize),
        _ => Err(no_such_pit(text)),
    }
}

/// The error for a pit that is not one of `0..PITS`.
fn no_such_pit(p: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("pit {p}: pits are numbered 0..{}", PITS - 1))
}

/// The starts of `pos` ([`starts`]), of `pit` only if given: an error if
/// there are none, if `pit` is no pit or holds fewer than 2 seeds, or if
/// `budget` is 0.
fn checked_starts(
    variant: Variant,
    pos: Position,
    pit: Option<usize>,
    budget: u64,
) -> Result<Vec<(usize, Dir)>> {
    if budget == 0 {
        return Err(Error::Invalid("a lap budget must be at least 1".into()));
    }
    let mut starts = starts(variant, pos);
    if let Some(p) = pit {
        if p >= PITS {
            return Err(no_such_pit(p));
        }
        if pos.me.get(p) < 2 {
            let seeds = match pos.me.get(p) {
                1 => "1 seed".to_string(),
                n => format!("{n} seeds"),
            };
            return Err(Error::Invalid(format!(
                "pit {p} holds {seeds}; a move starts from 2 or more"
            )));
        }
        starts.retain(|s| s.0 == p);
    }
    if starts.is_empty() {
        return Err(Error::Invalid(
            "no pit holds 2 or more seeds: the player has no move".into(),
        ));
    }
    Ok(starts)
}
