//! The exhaustive loop census: for every configuration of `k` seeds on one
//! side (opponent empty, so pure counter-clockwise relay), which starts loop.
//!
//! Rotating a side rotates its relays, so the pair (configuration `c`, start
//! `s`) behaves exactly like (`c` rotated to bring `s` to pit 0, start 0). The
//! census therefore walks every configuration from pit 0 only, 1/16 of the
//! pairs, and multiplies. Loops are rare: each cycle, once found, is walked a
//! single time and its states (brought to start 0) are remembered, so the
//! other starts on it are recognised without walking it again.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use rayon::prelude::*;

use super::relay::{Relay, run};
use super::side::{PITS, Side};
use crate::compose::{Ranker, binomial};
use crate::progress::Progress;

/// One row of the census.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Seeds on the side.
    pub seeds: usize,
    /// Configurations, rotations counted as different: `C(k+15, 15)`.
    pub configs: u64,
    /// (configuration, start) pairs whose start holds 2 or more seeds.
    pub legal_pairs: u64,
    /// Pairs whose move never ends.
    pub loop_pairs: u64,
    /// Configurations with at least one looping start.
    pub cfg_any: u64,
    /// Configurations with a legal start, all of whose legal starts loop.
    pub cfg_all: u64,
    /// Distinct relay cycles, counted up to rotation.
    pub cycles: u64,
    /// Shortest and longest cycle period, in laps.
    pub period: Option<(u64, u64)>,
    /// The most laps of a move that ends, counting its last lap.
    pub longest_finite: u64,
    /// Pairs still undecided after the lap budget (0 for a complete row).
    pub undecided: u64,
    /// The lap budget used.
    pub budget: u64,
}

impl Row {
    /// The row as one JSON object.
    pub fn to_json(&self) -> String {
        let (pmin, pmax) = match self.period {
            Some((a, b)) => (a.to_string(), b.to_string()),
            None => ("null".into(), "null".into()),
        };
        format!(
            "{{\"seeds\":{},\"configs\":{},\"legal_pairs\":{},\"loop_pairs\":{},\"cfg_any\":{},\"cfg_all\":{},\
\"cycles\":{},\"period_min\":{pmin},\"period_max\":{pmax},\"longest_finite\":{},\"undecided\":{},\"budget\":{}}}",
            self.seeds,
            self.configs,
            self.legal_pairs,
            self.loop_pairs,
            self.cfg_any,
            self.cfg_all,
            self.cycles,
            self.longest_finite,
            self.undecided,
            self.budget
        )
    }

    /// Reads a row written by [`Row::to_json`]; `None` if it is not one.
    pub fn from_json(line: &str) -> Option<Row> {
        let body = line.trim().strip_prefix('{')?.strip_suffix('}')?;
        let mut f: HashMap<&str, Option<u64>> = HashMap::new();
        for part in body.split(',') {
            let (k, v) = part.split_once(':')?;
            let v = if v == "null" {
                None
            } else {
                Some(v.parse().ok()?)
            };
            f.insert(k.trim_matches('"'), v);
        }
        let get = |k: &str| f.get(k).copied().flatten();
        let period = match (get("period_min"), get("period_max")) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        };
        Some(Row {
            seeds: get("seeds")? as usize,
            configs: get("configs")?,
            legal_pairs: get("legal_pairs")?,
            loop_pairs: get("loop_pairs")?,
            cfg_any: get("cfg_any")?,
            cfg_all: get("cfg_all")?,
            cycles: get("cycles")?,
            period,
            longest_finite: get("longest_finite")?,
            undecided: get("undecided")?,
            budget: get("budget")?,
        })
    }
}

/// Cycles found so far: their states brought to start 0, and one entry per
/// class (up to rotation) with its period.
#[derive(Default)]
struct Cycles {
    states: HashSet<u128>,
    periods: Vec<u64>,
}

/// Laps walked before asking whether a start lies on a known cycle: most
/// moves end well before this.
const QUICK: u64 = 64;

/// Counts the configurations of `seeds` seeds, walking at most `budget` laps
/// per cycle.
pub fn census(seeds: usize, budget: u64, progress: Progress) -> Row {
    assert!(seeds <= super::side::MAX_SEEDS && budget > 0);
    let configs = binomial(seeds as u64 + 15, 15) as u64;
    if seeds < 2 {
        let row = Row {
            seeds,
            configs,
            legal_pairs: 0,
            loop_pairs: 0,
            cfg_any: 0,
            cfg_all: 0,
            cycles: 0,
            period: None,
            longest_finite: 0,
            undecided: 0,
            budget,
        };
        return row;
    }
    // Configurations with 2+ seeds in pit 0 are those of seeds - 2, plus 2 there.
    let rest = seeds - 2;
    let ranker = Ranker::new(PITS, rest, None);
    let starts = ranker.count(rest);
    let cycles = Mutex::new(Cycles::default());
    let chunk = 1u64 << 16;
    let stage = progress.stage(format!("census k={seeds}"), starts);
    let (longest, undecided) = (0..starts.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let (from, to) = (c * chunk, ((c + 1) * chunk).min(starts));
            let mut x = [0u8; PITS];
            ranker.unrank(rest, from, &mut x);
            let (mut longest, mut undecided) = (0u64, 0u64);
            for i in from..to {
                if i > from {
                    ranker.advance(&mut x);
                }
                let mut side = Side::from_pits(x);
                side.set(0, x[0] + 2);
                match walk(side, budget, &cycles) {
                    Walk::Ends(laps) => longest = longest.max(laps),
                    Walk::Cycle => {}
                    Walk::Undecided => undecided += 1,
                }
            }
            stage.inc(to - from);
            (longest, undecided)
        })
        .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1 + b.1));
    stage.finish();
    let cycles = cycles.into_inner().expect("no panics while held");
    let (cfg_any, cfg_all) = configurations_looping(&cycles.states);
    Row {
        seeds,
        configs,
        legal_pairs: PITS as u64 * starts,
        loop_pairs: PITS as u64 * cycles.states.len() as u64,
        cfg_any,
        cfg_all,
        cycles: cycles.periods.len() as u64,
        period: cycles
            .periods
            .iter()
            .min()
            .map(|&a| (a, *cycles.periods.iter().max().expect("non-empty"))),
        longest_finite: longest,
        undecided: PITS as u64 * undecided,
        budget,
    }
}

enum Walk {
    Ends(u64),
    Cycle,
    Undecided,
}

/// Decides the move from pit 0 of `side`, recording a newly found cycle.
fn walk(side: Side, budget: u64, cycles: &Mutex<Cycles>) -> Walk {
    match run(side, 0, QUICK.min(budget)) {
        Relay::Ends { laps, .. } => return Walk::Ends(laps),
        Relay::Loops { .. } => {}
        Relay::Undecided { .. } if budget <= QUICK => return Walk::Undecided,
        Relay::Undecided { .. } => {}
    }
    if cycles
        .lock()
        .expect("no panics while held")
        .states
        .contains(&side.0)
    {
        return Walk::Cycle;
    }
    match run(side, 0, budget) {
        Relay::Ends { laps, .. } => Walk::Ends(laps),
        Relay::Undecided { .. } => Walk::Undecided,
        Relay::Loops { period, .. } => {
            // A new cycle: walk it once, bringing each state to start 0.
            let mut states = Vec::with_capacity(period as usize);
            let (mut s, mut p) = (side, 0usize);
            for _ in 0..period {
                states.push(s.rotated_to(p).0);
                let l = super::relay::lap(s, p, super::side::Dir::Ccw);
                (s, p) = (l.side, l.last);
            }
            let mut c = cycles.lock().expect("no panics while held");
            if !c.states.contains(&side.0) {
                c.periods.push(period);
                c.states.extend(states);
            }
            Walk::Cycle
        }
    }
}

/// From the looping states brought to start 0, the configurations with a
/// looping start and those whose every legal start loops.
fn configurations_looping(states: &HashSet<u128>) -> (u64, u64) {
    let mut looping: HashMap<u128, u16> = HashMap::new();
    for &c in states {
        // (c, start 0) is (c rotated back by r, start r) for every r.
        for r in 0..PITS {
            *looping.entry(c.rotate_left(8 * r as u32)).or_default() |= 1 << r;
        }
    }
    let all = looping
        .iter()
        .filter(|&(&c, &mask)| {
            let legal = (0..PITS)
                .filter(|&p| Side(c).get(p) >= 2)
                .fold(0u16, |m, p| m | 1 << p);
            mask == legal
        })
        .count();
    (looping.len() as u64, all as u64)
}

/// Runs the census for every seed count of `range`, keeping finished rows in
/// `dir/omweso-census.jsonl` so that a long run resumes where it stopped.
pub fn run_resumable(
    dir: &std::path::Path,
    range: std::ops::RangeInclusive<usize>,
    budget: u64,
    progress: Progress,
) -> crate::Result<Vec<Row>> {
    if budget == 0 {
        return Err(crate::Error::Invalid(
            "a lap budget must be at least 1".into(),
        ));
    }
    let path = dir.join("omweso-census.jsonl");
    let mut saved: HashMap<usize, Row> = match std::fs::read_to_string(&path) {
        Ok(text) => text
            .lines()
            .filter_map(Row::from_json)
            .map(|r| (r.seeds, r))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
        Err(e) => return Err(crate::Error::io(&path, e)),
    };
    let mut rows = Vec::new();
    for k in range {
        let row = match saved.get(&k) {
            Some(r) if r.budget == budget => r.clone(),
            _ => {
                let r = census(k, budget, progress);
                saved.insert(k, r.clone());
                let mut all: Vec<&Row> = saved.values().collect();
                all.sort_by_key(|r| r.seeds);
                let text: String = all.iter().map(|r| r.to_json() + "\n").collect();
                std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
                crate::files::write_atomically(&path, |f| {
                    std::io::Write::write_all(f, text.as_bytes())
                })?;
                r
            }
        };
        rows.push(row);
    }
    Ok(rows)
}
