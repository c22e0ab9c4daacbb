//! Errors of the library, as data: what went wrong, on which file, of which
//! kind. Every variant renders as one line. What to do about an error (the
//! command to run) is the caller's to say, with one exception: a missing
//! published `scores.N` file, which only the command line can write from
//! tables, so that every front end suggests its command
//! ([`Missing::vu_remedy`]).

use std::fmt;
use std::path::{Path, PathBuf};

/// The library's error type.
///
/// It is not `#[non_exhaustive]`, on purpose: the server and the Python
/// package match every variant (to an HTTP status, to an exception), and
/// Python every variant of [`Missing`] too, so that a new one does not
/// build until each has said what it means there ([`Corruption`]'s
/// variants they match with a wildcard: a corrupt file is one answer).
/// A release of the crate for other users would revisit this.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller asked for something malformed (a bad board, a seed count
    /// out of range, ...). The message says what.
    #[error("{0}")]
    Invalid(String),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A file exists but cannot be trusted.
    #[error("{}: {}: {kind}", path.display(), kind.noun())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        kind: Corruption,
    },
    /// Something a request needs is not there.
    #[error("{0}")]
    Missing(Missing),
    /// A level needs more working memory than there is: on this machine,
    /// or in this rank's share of a distributed build. The message says how
    /// much against what there is, and which levels fit.
    #[error("{why}")]
    TooLarge {
        /// The level.
        level: usize,
        /// What it needs, what there is, what fits.
        why: String,
    },
    /// Another process is writing to the directory.
    #[error("{}: locked by another writer: {holder}", path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, as it says of itself.
        holder: String,
    },
    /// The ranks of a distributed build do not agree on what to build:
    /// rank `rank` (the first that differs) runs another program, with other
    /// arguments or settings, or sees another table directory than rank 0.
    /// Every rank gets this error; `here` (what rank `rank` has) only that
    /// rank.
    #[error(
        "rank {rank} of {ranks}: its {what} differs from rank 0's{}; every rank must run the same \
         program with the same arguments and MANCALADB_* variables (mpirun -x NAME passes one) \
         and see the same --db directory",
        here.as_ref().map_or(String::new(), |h| format!(" ({h} here)"))
    )]
    Disagree {
        /// The first rank that differs.
        rank: usize,
        /// Ranks in the job.
        ranks: usize,
        /// What it differs in.
        what: &'static str,
        /// Its value, on that rank.
        here: Option<String>,
    },
}

/// What is wrong with a corrupt file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Corruption {
    /// Shorter than its structure needs.
    Truncated {
        /// Its length in bytes.
        len: u64,
    },
    /// Not a table at all.
    BadMagic,
    /// A format version this build does not read.
    Version {
        /// The version found.
        found: u32,
        /// The versions this build reads.
        reads: &'static str,
    },
    /// A value encoding this build does not know.
    Encoding(u8),
    /// A block size other than the format's.
    BlockSize {
        /// The block size found.
        found: u32,
        /// The format's.
        want: u32,
    },
    /// The header claims more positions than any table holds (the
    /// table format's `MAX_POSITIONS`, 2^38).
    TooManyPositions {
        /// Positions claimed.
        found: u64,
        /// The most any table holds.
        most: u64,
    },
    /// The block count does not follow from positions and block size.
    BlockCount,
    /// A block index entry is out of order or out of bounds.
    IndexEntry(u64),
    /// The header checksum does not match.
    HeaderChecksum,
    /// The blocks do not end where the data does.
    Size {
        /// Where the index says the blocks end.
        blocks_end: u64,
        /// The data bytes the file holds.
        data: u64,
    },
    /// The whole-file checksum does not match.
    FileChecksum,
    /// The checksum of the uncompressed values does not match.
    ContentChecksum,
    /// A compressed block cannot be read (the codec's own message).
    Block {
        /// The block number.
        block: u64,
        /// What is wrong: the frame's shape (one zstd frame with its
        /// checksum and content size, nothing after it) or what the
        /// decompressor said.
        detail: String,
    },
    /// A block holds the wrong number of values: its frame says so, or it
    /// decompressed to them.
    BlockLength {
        /// The block number.
        block: u64,
        /// Values found, or stated by the frame.
        got: usize,
        /// Values expected.
        want: usize,
    },
    /// A block is intact but does not belong at its place (moved or
    /// swapped with another block, or taken from another table).
    BlockPlace {
        /// The block number.
        block: u64,
    },
    /// Damage met in a table that a new file has replaced at its path
    /// since this reader opened it (a rebuilt level): the reader still
    /// holds the old file, and a reader opened afresh reads the new one.
    Replaced(Box<Corruption>),
    /// A `scores.N` file of the wrong length.
    FileLength {
        /// Its length in bytes.
        bytes: u64,
        /// The level.
        seeds: usize,
        /// Positions the level has.
        want: u64,
    },
    /// A solver's work file (a checkpoint, a seed list) that does not fit
    /// the level it is for, or is damaged. Checkpoints that fail so are
    /// dropped where a solver can start afresh.
    Checkpoint(&'static str),
    /// A census results file (`omweso-census.jsonl`) none of whose lines
    /// begins as a row does: another file in its place, which the census
    /// neither uses nor replaces.
    NotCensusResults {
        /// How every row begins.
        row_start: &'static str,
    },
    /// A saved census row that the census, run again, does not give.
    CensusRow {
        /// Its seed count.
        seeds: usize,
        /// The row the census gives, as JSON.
        again: String,
    },
    /// A census cycles file that cannot be read, or whose cycles are not
    /// those of its row.
    CensusCycles(String),
    /// A value outside `-seeds..=seeds`.
    ValueRange {
        /// Index of the position.
        index: u64,
        /// The value found.
        value: i8,
        /// Seeds of the level.
        seeds: usize,
    },
    /// A position's value outside `-seeds..=seeds`, as a source gave it.
    BoardValueRange {
        /// The position, as the board's pit counts.
        board: String,
        /// The value given.
        value: i8,
        /// Seeds on the board.
        seeds: usize,
    },
    /// The table is sound but holds another level than the one asked for.
    WrongLevel {
        /// What it holds: game, rule set and level codes.
        holds: (u8, u8, u32),
        /// The name of the rule set it holds, when it is one this build
        /// knows.
        holds_rules: Option<&'static str>,
        /// The rule set asked for.
        rules: &'static str,
        /// The level asked for.
        seeds: usize,
    },
    /// The level has another number of positions.
    Positions {
        /// Positions (or bytes) found.
        found: u64,
        /// The level.
        seeds: usize,
        /// Positions the level has.
        want: u64,
    },
    /// A stored value disagrees with the best value of its moves.
    Inconsistent {
        /// The position, as the board's pit counts.
        board: String,
        /// The stored value.
        stored: i8,
        /// The best value of its moves.
        best: i8,
        /// The levels its moves' values were read from, increasing: the
        /// damage is in this table or one of them.
        moves_from: Vec<usize>,
    },
}

impl Corruption {
    /// What kind of file it makes the damaged one: a table (a level's
    /// values, ours or a published `scores.N`) or a solver's work file.
    pub fn noun(&self) -> &'static str {
        match self {
            Corruption::Checkpoint(_) => "damaged solver work file",
            Corruption::NotCensusResults { .. } => "not a census results file",
            Corruption::CensusRow { .. } | Corruption::CensusCycles(_) => "damaged census file",
            _ => "corrupt table",
        }
    }
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Corruption::*;
        match self {
            Truncated { len } => write!(f, "truncated: {len} bytes"),
            BadMagic => write!(f, "not a mancaladb table (bad magic)"),
            Version { found, reads } => {
                write!(
                    f,
                    "format version {found}; this build reads version {reads}"
                )
            }
            Encoding(e) => write!(f, "unknown value encoding {e}"),
            BlockSize { found, want } => {
                write!(
                    f,
                    "block size {found}; tables have blocks of {want} positions"
                )
            }
            TooManyPositions { found, most } => write!(
                f,
                "claims {found} positions; no table holds more than {most}"
            ),
            BlockCount => write!(f, "block count does not match positions and block size"),
            IndexEntry(k) => write!(f, "block index entry {k} out of order or out of bounds"),
            HeaderChecksum => write!(f, "header checksum mismatch"),
            Size { blocks_end, data } => write!(
                f,
                "size mismatch: blocks end at {blocks_end} but the file holds {data} data bytes (truncated or padded)"
            ),
            FileChecksum => write!(f, "file checksum mismatch"),
            ContentChecksum => write!(f, "content checksum mismatch"),
            Block { block, detail } => write!(f, "block {block}: {detail}"),
            BlockLength { block, got, want } => {
                write!(f, "block {block}: {got} values, expected {want}")
            }
            Checkpoint(why) => write!(f, "{why}"),
            NotCensusResults { row_start } => write!(f, "no line begins '{row_start}'"),
            CensusRow { seeds, again } => write!(
                f,
                "row k = {seeds} is not what the census gives again ({again})"
            ),
            CensusCycles(why) => write!(f, "{why}"),
            BlockPlace { block } => write!(
                f,
                "block {block} does not belong at its place (moved, swapped or from another table)"
            ),
            Replaced(damage) => write!(
                f,
                "{damage}, in the file as this reader opened it; another file has replaced it since"
            ),
            FileLength { bytes, seeds, want } => {
                write!(f, "{bytes} bytes; level {seeds} has {want} positions")
            }
            ValueRange {
                index,
                value,
                seeds,
            } => write!(
                f,
                "value {value} at index {index} is outside -{seeds}..={seeds}"
            ),
            BoardValueRange {
                board,
                value,
                seeds,
            } => write!(f, "value {value} of {board} is outside -{seeds}..={seeds}"),
            WrongLevel {
                holds: (game, rules_code, level),
                holds_rules,
                rules,
                seeds,
            } => match holds_rules {
                Some(r) => write!(f, "holds {r} level {level}, not {rules} level {seeds}"),
                None => write!(
                    f,
                    "holds game {game} rule set {rules_code} (not an Oware rule set this build knows) level {level}, not {rules} level {seeds}"
                ),
            },
            Positions { found, seeds, want } => {
                write!(f, "{found} positions, level {seeds} has {want}")
            }
            Inconsistent {
                board,
                stored,
                best,
                moves_from,
            } => {
                let levels: Vec<String> = moves_from.iter().map(|n| n.to_string()).collect();
                write!(
                    f,
                    "stored value {stored} of {board} disagrees with its moves' best value \
                     {best}, read from level(s) {}: this table or one of those is wrong",
                    levels.join(", ")
                )
            }
        }
    }
}

/// What a request needed and did not find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// A level's table.
    Level {
        /// The table directory.
        dir: PathBuf,
        /// The rule set's name.
        rules: &'static str,
        /// The level.
        seeds: usize,
    },
    /// Several levels' tables: all those a command over a range of
    /// levels needs and does not find, ascending.
    SomeLevels {
        /// The table directory.
        dir: PathBuf,
        /// The rule set's name.
        rules: &'static str,
        /// The levels.
        seeds: Vec<usize>,
    },
    /// Lower levels that levels asked for read, neither built nor asked
    /// for (a build of a set of levels, `build --levels`).
    Below {
        /// The table directory.
        dir: PathBuf,
        /// The rule set's name.
        rules: &'static str,
        /// The first level asked for that reads one of them.
        reader: usize,
        /// The levels missing, ascending.
        absent: Vec<usize>,
        /// The levels asked for, ascending.
        asked: Vec<usize>,
    },
    /// Any table of a rule set.
    Levels {
        /// The table directory.
        dir: PathBuf,
        /// The rule set's name.
        rules: &'static str,
    },
    /// A published-layout `scores.N` file.
    VuLevel {
        /// The directory.
        dir: PathBuf,
        /// The level.
        seeds: usize,
    },
    /// Any `scores.N` file.
    VuLevels {
        /// The directory.
        dir: PathBuf,
    },
}

impl Missing {
    /// For a missing `scores.N` file, or all of them: the command-line
    /// command that writes it, to paste into a shell, which every front end
    /// suggests (only the command line exports tables to that layout).
    /// `None` for a missing table.
    pub fn vu_remedy(&self) -> Option<String> {
        let export = "mancaladb export --format vu --db DB";
        match self {
            Missing::VuLevel { dir, seeds } => Some(format!(
                "download the published file into it, or export a table there: {export} --seeds {seeds} --out {}",
                shell_quote(dir)
            )),
            Missing::VuLevels { dir } => Some(format!(
                "download the published files into it, or export tables there: {export} --out {}",
                shell_quote(dir)
            )),
            _ => None,
        }
    }

    /// The level missing, when one level is.
    pub fn level(&self) -> Option<usize> {
        match self {
            Missing::Level { seeds, .. } | Missing::VuLevel { seeds, .. } => Some(*seeds),
            Missing::SomeLevels { .. }
            | Missing::Below { .. }
            | Missing::Levels { .. }
            | Missing::VuLevels { .. } => None,
        }
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::Level { dir, rules, seeds } => {
                write!(f, "level {seeds} ({rules}) not found in {}", dir.display())
            }
            Missing::SomeLevels { dir, rules, seeds } => write!(
                f,
                "levels {} ({rules}) not found in {}",
                level_set_text(seeds),
                dir.display()
            ),
            Missing::Below {
                dir,
                reader,
                absent,
                ..
            } => match absent.first() {
                Some(k) => write!(
                    f,
                    "level {reader} reads level {k}, which is neither built in {} nor among \
                     the levels asked for (missing: {})",
                    dir.display(),
                    level_set_text(absent)
                ),
                None => write!(
                    f,
                    "level {reader} reads levels neither built in {} nor asked for",
                    dir.display()
                ),
            },
            Missing::Levels { dir, rules } => {
                write!(f, "{rules} levels not found in {}", dir.display())
            }
            Missing::VuLevel { dir, seeds } => {
                write!(f, "scores.{seeds} not found in {}", dir.display())
            }
            Missing::VuLevels { dir } => write!(f, "scores.N files not found in {}", dir.display()),
        }
    }
}

impl Error {
    /// The same error again, for a failure that is remembered and told to
    /// each caller (the variant, its fields and its message are the same;
    /// an I/O error keeps its kind and its text, not its OS code).
    pub(crate) fn again(&self) -> Error {
        match self {
            Error::Invalid(m) => Error::Invalid(m.clone()),
            Error::Io { path, source } => Error::Io {
                path: path.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::Corrupt { path, kind } => Error::Corrupt {
                path: path.clone(),
                kind: kind.clone(),
            },
            Error::Missing(m) => Error::Missing(m.clone()),
            Error::TooLarge { level, why } => Error::TooLarge {
                level: *level,
                why: why.clone(),
            },
            Error::Locked { path, holder } => Error::Locked {
                path: path.clone(),
                holder: holder.clone(),
            },
            Error::Disagree {
                rank,
                ranks,
                what,
                here,
            } => Error::Disagree {
                rank: *rank,
                ranks: *ranks,
                what,
                here: here.clone(),
            },
        }
    }

    /// Shorthand for an I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Shorthand for a corrupt-file error on `path`.
    pub fn corrupt(path: impl Into<PathBuf>, kind: Corruption) -> Error {
        Error::Corrupt {
            path: path.into(),
            kind,
        }
    }

    /// [`Corruption::ValueRange`] of the file at `path` (a table or VU
    /// file): `value` at `index` of level `seeds` is outside its range.
    #[cold]
    #[inline(never)]
    pub(crate) fn value_range(path: &Path, seeds: usize, index: u64, value: i8) -> Error {
        Error::corrupt(
            path,
            Corruption::ValueRange {
                index,
                value,
                seeds,
            },
        )
    }
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`): a message
/// is one line, also when it names a path or a word given with a line
/// break or a terminal escape in it. The command line's errors and the
/// library's notices (`progress::Notice`) pass through it.
///
/// ```
/// use mancaladb::error::one_line;
/// assert_eq!(one_line("db/awari-05.mdb: truncated"), "db/awari-05.mdb: truncated");
/// assert_eq!(one_line("a\nb\u{1b}[2J"), r"a\nb\u{1b}[2J");
/// ```
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_control() {
            true => c.escape_debug().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// A path as a shell word that can be pasted into a command a message
/// suggests: as it is when it holds only letters, digits and
/// `_ - . / + , :`; else in single quotes; and where it holds control
/// characters (a newline would break the message's one line) or bytes
/// that are no UTF-8, in `$'...'` with those as `\xHH`. A relative path
/// that begins with `-` (which would read as a flag) begins with `./`.
///
/// ```
/// use mancaladb::error::shell_quote;
/// use std::path::Path;
/// assert_eq!(shell_quote(Path::new("db")), "db");
/// assert_eq!(shell_quote(Path::new("-db")), "./-db");
/// assert_eq!(shell_quote(Path::new("my db")), "'my db'");
/// assert_eq!(shell_quote(Path::new("it's")), r"'it'\''s'");
/// assert_eq!(shell_quote(Path::new("a\nb")), r"$'a\x0ab'");
/// use std::os::unix::ffi::OsStrExt;
/// let not_utf8 = Path::new(std::ffi::OsStr::from_bytes(b"d\xffb"));
/// assert_eq!(shell_quote(not_utf8), r"$'d\xffb'");
/// ```
pub fn shell_quote(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let dash = if bytes.first() == Some(&b'-') {
        "./"
    } else {
        ""
    };
    match std::str::from_utf8(bytes) {
        Ok(s)
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-./+,:".contains(c)) =>
        {
            format!("{dash}{s}")
        }
        Ok(s) if !s.chars().any(char::is_control) => {
            format!("'{dash}{}'", s.replace('\'', r"'\''"))
        }
        _ => {
            let mut word = format!("$'{dash}");
            for &b in bytes {
                match b {
                    b'\'' | b'\\' => {
                        word.push('\\');
                        word.push(char::from(b));
                    }
                    0x20..=0x7e => word.push(char::from(b)),
                    _ => word.push_str(&format!("\\x{b:02x}")),
                }
            }
            word.push('\'');
            word
        }
    }
}

/// Sorted levels as `build --levels` takes them, runs of consecutive
/// levels joined: `0..34,36`. Messages name level sets so.
///
/// ```
/// use mancaladb::error::level_set_text;
/// assert_eq!(level_set_text(&[0, 1, 2, 4]), "0..2,4");
/// ```
pub fn level_set_text(levels: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &n in levels {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => runs.push((n, n)),
        }
    }
    let runs: Vec<String> = runs
        .into_iter()
        .map(|(start, end)| match start == end {
            true => start.to_string(),
            false => format!("{start}..{end}"),
        })
        .collect();
    runs.join(",")
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
