//! The census results file, `omweso-census.jsonl`: one [`Row`] per line,
//! kept per (seed count, lap budget), each checked before it is trusted.
//!
//! A row is reused only if it passes every check that does not need the
//! census itself:
//! * it has exactly the fields of a row, each once, and a `checksum` (the
//!   first 16 hex digits of the sha256 of the row's JSON without it, so of
//!   every field) that matches, so an edited or damaged row is noticed;
//! * `configs = C(k+15, 15)` and `legal_pairs = 16 C(k+13, 15)`, recomputed;
//! * `cfg_all <= cfg_any <= loop_pairs <= legal_pairs`, `loop_pairs` and
//!   `undecided` are multiples of 16 (every count is over the 16
//!   rotations) and `loop_pairs + undecided <= legal_pairs`, `cycles` is 0
//!   exactly when there is no period, `period_min <= period_max`, and
//!   `longest_finite` is in `1..=budget` exactly when some pair neither
//!   loops nor is undecided (0 otherwise).
//!
//! Rows of different budgets live side by side, so a quick run with a small
//! `--max-laps` never replaces a finished row. Lines that fail (not UTF-8,
//! not JSON, a failed check) are reported with their line number and
//! recomputed when asked for; when the file is next rewritten they are moved
//! verbatim to `omweso-census.jsonl.rejected`, never dropped. A row given
//! twice alike is kept once; a row given by two sound lines that disagree
//! (hand-edited, the checksum made to match) is a row whose value cannot
//! be told: every line of it is rejected, and it is computed again. A line
//! without a checksum is rejected too: only the first day's census (before
//! 2026-11-30) wrote such rows, and a checksum given to an unchecked row
//! would make whatever it says permanent. A file none of whose lines
//! begins as a row does (`{"seeds":`) is not a results file at all
//! (another file in its place): an error, and it is left as it is.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Row;
use crate::compose::binomial;
use crate::error::{Corruption, Error, Result};

/// The results file's name, inside the census directory.
pub const FILE: &str = "omweso-census.jsonl";

/// The most bytes a census file (results, checkpoint, cycles) is read
/// to: far beyond any this program writes (the cycles of k = 32 are
/// about 15 MB), short of a read without end.
pub(crate) const FILE_CAP: u64 = 1 << 30;

/// How every row of the file begins.
const ROW_START_TEXT: &str = "{\"seeds\":";
/// The same, as bytes.
const ROW_START: &[u8] = ROW_START_TEXT.as_bytes();

/// A line of the file that was not used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rejected {
    /// Line number, from 1.
    pub line: usize,
    /// Why it was not used.
    pub why: String,
    /// The line as read (invalid UTF-8 replaced).
    #[serde(skip)]
    pub text: Vec<u8>,
}

/// A row as stored: every field of [`Row`], each named (no `flatten`, so
/// that serde refuses a field it does not know, and a field given twice),
/// then its checksum, which every line must carry.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    seeds: usize,
    configs: u64,
    legal_pairs: u64,
    loop_pairs: u64,
    cfg_any: u64,
    cfg_all: u64,
    cycles: u64,
    period_min: Option<u64>,
    period_max: Option<u64>,
    longest_finite: u64,
    undecided: u64,
    budget: u64,
    checksum: String,
}

impl Saved {
    fn of(r: &Row) -> Saved {
        Saved {
            seeds: r.seeds,
            configs: r.configs,
            legal_pairs: r.legal_pairs,
            loop_pairs: r.loop_pairs,
            cfg_any: r.cfg_any,
            cfg_all: r.cfg_all,
            cycles: r.cycles,
            period_min: r.period.map(|p| p.0),
            period_max: r.period.map(|p| p.1),
            longest_finite: r.longest_finite,
            undecided: r.undecided,
            budget: r.budget,
            checksum: checksum(r),
        }
    }

    fn row(&self) -> std::result::Result<Row, String> {
        let period = super::period_fields::period(self.period_min, self.period_max)?;
        Ok(Row {
            seeds: self.seeds,
            configs: self.configs,
            legal_pairs: self.legal_pairs,
            loop_pairs: self.loop_pairs,
            cfg_any: self.cfg_any,
            cfg_all: self.cfg_all,
            cycles: self.cycles,
            period,
            longest_finite: self.longest_finite,
            undecided: self.undecided,
            budget: self.budget,
        })
    }
}

/// The rows of one census directory.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    rows: Vec<Row>,
    /// Lines not used, in file order.
    pub rejected: Vec<Rejected>,
}

impl Store {
    /// Reads `dir/omweso-census.jsonl` (none yet: an empty store).
    pub fn open(dir: &Path) -> Result<Store> {
        let path = dir.join(FILE);
        let bytes = crate::files::read_record_file(&path, FILE_CAP)?.unwrap_or_default();
        // Every row ever written begins so (serde writes the fields in
        // order): a file none of whose lines does is something else in the
        // results file's place, neither used nor moved aside line by line.
        let mut lines = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .peekable();
        if lines.peek().is_some() && !lines.any(|l| l.starts_with(ROW_START)) {
            return Err(Error::corrupt(
                &path,
                Corruption::NotCensusResults {
                    row_start: ROW_START_TEXT,
                },
            ));
        }
        let mut store = Store {
            path,
            rows: Vec::new(),
            rejected: Vec::new(),
        };
        // The lines each row was read from (more than one when given alike
        // again), by the row's place in `rows`.
        let mut row_lines: Vec<Vec<(usize, &[u8])>> = Vec::new();
        // Rows whose lines disagree, with the first two lines found.
        let mut disputed: Vec<((usize, u64), usize, usize)> = Vec::new();
        for (i, text) in bytes.split(|&b| b == b'\n').enumerate() {
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = i + 1;
            let row = match parse(text) {
                Ok(row) => row,
                Err(why) => {
                    store.rejected.push(Rejected {
                        line,
                        why,
                        text: text.to_vec(),
                    });
                    continue;
                }
            };
            let key = (row.seeds, row.budget);
            if let Some(&(_, first, second)) = disputed.iter().find(|d| d.0 == key) {
                store.rejected.push(Rejected {
                    line,
                    why: disagree(key, first, second),
                    text: text.to_vec(),
                });
                continue;
            }
            match store.rows.iter().position(|r| (r.seeds, r.budget) == key) {
                None => {
                    store.rows.push(row);
                    row_lines.push(vec![(line, text)]);
                }
                // The same row again: one is kept (the file is rewritten
                // whole, each row once).
                Some(at) if store.rows[at] == row => row_lines[at].push((line, text)),
                // Two sound lines of one row that disagree: which is right
                // cannot be told, so no line of it is used; all are set
                // aside and the row is computed again.
                Some(at) => {
                    store.rows.remove(at);
                    let mut lines = row_lines.remove(at);
                    let first = lines[0].0;
                    disputed.push((key, first, line));
                    let why = disagree(key, first, line);
                    lines.push((line, text));
                    for (at, text) in lines {
                        store.rejected.push(Rejected {
                            line: at,
                            why: why.clone(),
                            text: text.to_vec(),
                        });
                    }
                }
            }
        }
        store.rejected.sort_by_key(|r| r.line);
        Ok(store)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The saved row of `seeds` seeds computed with lap budget `budget`.
    pub fn row(&self, seeds: usize, budget: u64) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.seeds == seeds && r.budget == budget)
    }

    /// Where the rejected lines are set aside: `omweso-census.jsonl.rejected`.
    fn aside_path(&self) -> PathBuf {
        self.path.with_extension("jsonl.rejected")
    }

    /// Fails now, before any row is computed, if there are rejected lines
    /// and the file they go to ([`Store::save`]) is there but cannot take
    /// them (a symbolic link, whose target would get them; a named pipe).
    pub fn check_aside(&self) -> Result<()> {
        if self.rejected.is_empty() {
            return Ok(());
        }
        crate::files::check_appendable(&self.aside_path())
    }

    /// Adds `row` (replacing the row of the same seeds and budget) and
    /// rewrites the file atomically, every row with its checksum. Rejected
    /// lines are first appended to `omweso-census.jsonl.rejected` (so that
    /// they are never lost: a run killed between the two appends them there
    /// again next time).
    pub fn save(&mut self, row: Row) -> Result<()> {
        self.rows
            .retain(|r| (r.seeds, r.budget) != (row.seeds, row.budget));
        self.rows.push(row);
        self.rows.sort_by_key(|r| (r.seeds, r.budget));
        if !self.rejected.is_empty() {
            let mut lines = Vec::new();
            for r in &self.rejected {
                lines.extend_from_slice(&r.text);
                lines.push(b'\n');
            }
            crate::files::append_lines(&self.aside_path(), &lines)?;
            self.rejected.clear();
        }
        let mut text = String::new();
        for r in &self.rows {
            text += &serde_json::to_string(&Saved::of(r)).expect("rows serialize");
            text.push('\n');
        }
        crate::files::write_atomically(&self.path, |f| f.write_all(text.as_bytes()))
    }
}

/// Why the lines of row `key` (seeds, budget) are not used: lines `first`
/// and `second` give it with other counts.
fn disagree(key: (usize, u64), first: usize, second: usize) -> String {
    format!(
        "row k = {}, budget {} is on lines {first} and {second} with other counts: no line of it is used",
        key.0, key.1
    )
}

/// The rows as one JSON list, a row a line.
pub fn list(rows: &[Row]) -> String {
    let items: Vec<String> = rows.iter().map(Row::to_json).collect();
    format!("[{}]", items.join(",\n"))
}

/// Writes [`list`] of `rows` to `path` atomically.
pub fn write_list(path: &Path, rows: &[Row]) -> Result<()> {
    let text = list(rows) + "\n";
    crate::files::write_output(path, |f| f.write_all(text.as_bytes()))
}

/// Checks, before anything is computed, that the lists asked for (the rows,
/// [`write_list`]; the cycle atlas, [`super::atlas::write`]) can be
/// written to `paths` beside the census in `dir`: each one's directory
/// exists and takes new files, nothing but a regular file (or a link to
/// one) is there, the file (a link followed) is not one of `dir`'s own
/// (`owned_by_the_directory`), and no two lists go to one file. `dir`
/// holds the census's own files and, as the default `db/`, the tables,
/// their raw copies and `verified.tsv`: a list is never written over any
/// of them. A list of another name at its top (`--db . --cycles
/// atlas-24.jsonl`) is allowed.
pub fn check_list_paths(paths: &[&Path], dir: &Path) -> Result<()> {
    let db = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
    let mut targets: Vec<PathBuf> = Vec::new();
    for &path in paths {
        let target = crate::files::output_file(path)?;
        let parent = crate::files::parent_dir(&target);
        if !parent.is_dir() {
            return Err(Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "its directory does not exist"),
            ));
        }
        check_writable(parent)?;
        // Compared where it will be.
        let at = std::fs::canonicalize(parent)
            .map_err(|e| Error::io(parent, e))?
            .join(target.file_name().unwrap_or_default());
        if owned_by_the_directory(&at, &db) {
            return Err(Error::Invalid(format!(
                "{}: is one of the census directory {}'s own files (its results, tables, raw \
                 copies and records live there); write the list elsewhere",
                path.display(),
                dir.display()
            )));
        }
        if targets.contains(&at) {
            return Err(Error::Invalid(format!(
                "{}: two lists asked for in one file",
                path.display()
            )));
        }
        targets.push(at);
    }
    Ok(())
}

/// Whether `at` (a canonical path) is, or may become, a file of the table
/// and census directory `db` (canonical): anything in a directory under it
/// (`raw/`), and at its top tables (`*.mdb`), records (`*.tsv`), the
/// census's files (`omweso-*`), temporary (`*.tmp`) and hidden files (the
/// locks).
fn owned_by_the_directory(at: &Path, db: &Path) -> bool {
    let Ok(rel) = at.strip_prefix(db) else {
        return false;
    };
    let name = rel.to_string_lossy();
    rel.components().count() != 1
        || name.starts_with('.')
        || name.starts_with("omweso-")
        || [".mdb", ".tsv", ".tmp"].iter().any(|x| name.ends_with(x))
}

/// Checks that `dir` exists or can be created and that files can be
/// created in it, so that a result is not computed only to be lost.
/// Returns the directories it made (`dir` and the parents that were not
/// there, deepest first), for a caller that refuses the run afterwards to
/// remove them again.
pub fn check_writable(dir: &Path) -> Result<Vec<PathBuf>> {
    crate::files::check_dir(dir)?;
    let made = crate::files::missing_dirs(dir)?;
    crate::files::create_dirs(dir)?;
    crate::files::check_files_can_be_created(dir)?;
    Ok(made)
}

/// The checksum stored with a row: the first 16 hex digits of the sha256 of
/// its JSON.
pub fn checksum(row: &Row) -> String {
    digest(&serde_json::to_vec(row).expect("rows serialize"))
}

/// The first 16 hex digits of the sha256 of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    crate::files::hex(&crate::files::sha256(bytes)[..8])
}

/// The row of one line, else why it cannot be used.
fn parse(text: &[u8]) -> std::result::Result<Row, String> {
    let text = std::str::from_utf8(text).map_err(|e| format!("not UTF-8 ({e})"))?;
    let saved: Saved = serde_json::from_str(text).map_err(|e| format!("not a census row ({e})"))?;
    let row = saved.row()?;
    let want = checksum(&row);
    if saved.checksum != want {
        return Err(format!(
            "checksum {} does not match the row (its checksum is {want}): edited or damaged",
            saved.checksum
        ));
    }
    check(&row)?;
    Ok(row)
}

/// The checks a row must pass without recomputing the census (see the
/// module documentation).
pub fn check(r: &Row) -> std::result::Result<(), String> {
    let k = r.seeds as u64;
    if r.seeds > crate::omweso::MAX_SEEDS {
        return Err(format!(
            "seeds {k} is more than {}",
            crate::omweso::MAX_SEEDS
        ));
    }
    if r.budget == 0 {
        return Err("budget 0".into());
    }
    let configs = binomial(k + 15, 15) as u64;
    if r.configs != configs {
        return Err(format!(
            "configs {} is not C({k}+15, 15) = {configs}",
            r.configs
        ));
    }
    let legal = if k < 2 {
        0
    } else {
        16 * binomial(k + 13, 15) as u64
    };
    if r.legal_pairs != legal {
        return Err(format!(
            "legal_pairs {} is not 16 C({k}+13, 15) = {legal}",
            r.legal_pairs
        ));
    }
    if !(r.cfg_all <= r.cfg_any && r.cfg_any <= r.loop_pairs && r.loop_pairs <= r.legal_pairs) {
        return Err(format!(
            "not cfg_all {} <= cfg_any {} <= loop_pairs {} <= legal_pairs {}",
            r.cfg_all, r.cfg_any, r.loop_pairs, r.legal_pairs
        ));
    }
    if r.cfg_any > r.configs {
        return Err(format!(
            "cfg_any {} is more than the {} configurations",
            r.cfg_any, r.configs
        ));
    }
    // Added without wrapping: a sum past 2^64 is not within legal_pairs.
    let not_ending = r.loop_pairs.checked_add(r.undecided);
    if !r.loop_pairs.is_multiple_of(16)
        || !r.undecided.is_multiple_of(16)
        || not_ending.is_none_or(|n| n > r.legal_pairs)
    {
        return Err(
            "loop_pairs and undecided must be multiples of 16, together within legal_pairs".into(),
        );
    }
    // A move that ends takes at least one lap and at most the budget; if
    // every legal pair loops or is undecided, none ends.
    let ends = not_ending.is_some_and(|n| n < r.legal_pairs);
    if r.longest_finite > r.budget || ends != (r.longest_finite > 0) {
        return Err(format!(
            "longest_finite {} is not within 1..={} laps exactly when some pair ends",
            r.longest_finite, r.budget
        ));
    }
    match r.period {
        None if r.cycles == 0 => {}
        Some((a, b)) if r.cycles > 0 && 1 <= a && a <= b && r.cycles <= r.loop_pairs / 16 => {}
        _ => return Err("cycles and period_min..period_max disagree".into()),
    }
    Ok(())
}
