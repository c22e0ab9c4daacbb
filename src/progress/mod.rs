//! What the library tells its caller while it works: stages of work with
//! their size (for progress bars), and [`Notice`]s, typed facts such as "a
//! checkpoint was saved" or "a damaged table is rebuilt". The computing
//! modules only emit these, through a [`Progress`] handle, and never print;
//! the caller's [`Observer`] decides how they are shown. [`Terminal`] is the
//! command line's (bars on a terminal, plain lines in logs and pipes); the
//! Python package sends notices to Python's `logging`; tests hear nothing
//! ([`Progress::QUIET`]) or record them.
//!
//! Callers report per chunk of work, never per position: a stage's
//! [`Stage::inc`] is a dynamic call.
//!
//! [`Terminal`] lives apart (`progress/terminal.rs`): it is the one place of
//! the library that writes to the terminal (`tests/it/layers.rs`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::error::one_line;

mod terminal;
pub use crate::memory::bytes_text;
pub use terminal::{Terminal, WARNING, to_stderr};

/// Who hears the library's progress. Notices are told on the thread that
/// called the library (the Python package relies on it); a stage's sink is
/// told about every chunk of work, from any of the library's threads, so
/// it must be cheap.
pub trait Observer: Sync {
    /// A stage of `total` units of work named `label` begins; the sink
    /// returned hears how it advances and when it ends (`None`: the
    /// observer does not follow stages). The unit is the stage's own
    /// (positions, tiles of positions, parts of a walk, ...), so what a
    /// stage tells is the fraction done, `advance`s over `total`, not a
    /// count of positions.
    fn stage(&self, label: &str, total: u64) -> Option<Box<dyn StageSink + '_>>;

    /// Something worth telling happened.
    fn notice(&self, notice: &Notice);

    /// Asked now and then while the run waits for another process (which
    /// holds what it needs): `false` gives the wait up, and the run stops
    /// with [`crate::Error::Locked`]. Asked on the thread that called the
    /// library.
    fn keep_waiting(&self) -> bool {
        true
    }
}

/// Hears one stage's advance.
pub trait StageSink: Send + Sync {
    /// `n` more units are done.
    fn advance(&self, n: u64);

    /// `n` units were done before this run (it resumed from a checkpoint):
    /// done, but not by this run, so not part of its rate.
    fn resumed(&self, n: u64) {
        self.advance(n);
    }

    /// The stage is over, after `seconds`.
    fn finish(self: Box<Self>, seconds: f64);
}

/// The handle the computing modules report through: an [`Observer`], or
/// nobody. Copied freely.
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    observer: Option<&'a dyn Observer>,
}

impl fmt::Debug for Progress<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let to = if self.observer.is_some() {
            "an observer"
        } else {
            "nobody"
        };
        write!(f, "Progress(to {to})")
    }
}

impl<'a> Progress<'a> {
    /// Tells nobody.
    pub const QUIET: Progress<'static> = Progress { observer: None };

    /// Tells `observer`.
    pub fn to(observer: &'a dyn Observer) -> Progress<'a> {
        Progress {
            observer: Some(observer),
        }
    }

    /// Starts a stage of `total` units of work under `label`.
    pub fn stage(self, label: String, total: u64) -> Stage<'a> {
        Stage {
            sink: self.observer.and_then(|o| o.stage(&label, total)),
            start: Instant::now(),
        }
    }

    /// Whether a wait for another process should go on (see
    /// [`Observer::keep_waiting`]; always, when nobody is told).
    pub fn keep_waiting(self) -> bool {
        self.observer.is_none_or(|o| o.keep_waiting())
    }

    /// Tells `notice`.
    pub fn notice(self, notice: Notice) {
        if let Some(o) = self.observer {
            o.notice(&notice);
        }
    }
}

/// One stage of work in progress.
pub struct Stage<'a> {
    sink: Option<Box<dyn StageSink + 'a>>,
    start: Instant,
}

impl Stage<'_> {
    /// Records `n` more units done.
    pub fn inc(&self, n: u64) {
        if let Some(sink) = &self.sink {
            sink.advance(n);
        }
    }

    /// Records `n` units done before this run, found in a checkpoint it
    /// resumes from (see [`StageSink::resumed`]).
    pub fn resumed(&self, n: u64) {
        if let Some(sink) = &self.sink
            && n > 0
        {
            sink.resumed(n);
        }
    }

    /// Ends the stage.
    pub fn finish(self) {
        if let Some(sink) = self.sink {
            sink.finish(self.start.elapsed().as_secs_f64());
        }
    }
}

/// A fact the library reports while it works. `Display` gives the line the
/// command line prints; [`Notice::is_warning`] says which ones mean that
/// something was wrong (work or a line thrown away, memory mostly on small
/// pages), as opposed to news.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Notice {
    // Paths are serialized as text, lossily where they are not UTF-8, so
    // that every notice serializes.
    /// A build begins.
    Building {
        /// The rule set's name.
        rules: String,
        /// The levels to build, as `0..5,8`.
        levels: String,
        /// The table directory.
        #[serde(serialize_with = "lossy")]
        dir: PathBuf,
        /// Ranks of a distributed build (1 alone).
        ranks: usize,
        /// Worker threads of all ranks together (each rank has its own
        /// `--threads`).
        threads: usize,
    },
    /// Another process is writing to the table directory; the build waits
    /// for it (`build --wait`).
    WaitingForWriter {
        /// The table directory.
        #[serde(serialize_with = "lossy")]
        dir: PathBuf,
        /// Who holds its lock.
        holder: String,
    },
    /// The levels a build has still to build may take more disk than
    /// their table directory has room for (the build's `DiskRoom`).
    DiskShort {
        /// The levels, as `35..46,48`.
        levels: String,
        /// The table directory.
        #[serde(serialize_with = "lossy")]
        dir: PathBuf,
        /// Bytes they may take at most.
        need: u64,
        /// Bytes free there, and those its raw copies hold already.
        room: u64,
    },
    /// A stored table is damaged and is built again.
    Rebuilding {
        /// The level.
        seeds: usize,
        /// What is wrong with it.
        why: String,
    },
    /// A level's solver resumes from its checkpoint before threshold `threshold`.
    SolveResumed {
        /// The level.
        seeds: usize,
        /// The threshold it resumes at (0: every threshold is done).
        threshold: usize,
    },
    /// A level's solver resumes its forward pass after a part.
    ForwardResumed {
        /// The level.
        seeds: usize,
        /// Which walk of the forward pass.
        walk: &'static str,
        /// Parts of it done.
        done: u32,
        /// Parts in all.
        parts: u32,
    },
    /// A level's solver saved a checkpoint before a threshold.
    SolveCheckpoint {
        /// The level.
        seeds: usize,
        /// The threshold it is taken before (0: after the last one).
        threshold: usize,
        /// Bytes written.
        bytes: u64,
        /// Seconds it took.
        seconds: f64,
    },
    /// A level's solver saved a checkpoint of its forward pass.
    ForwardCheckpoint {
        /// The level.
        seeds: usize,
        /// Which walk of the forward pass.
        walk: &'static str,
        /// Parts of it done.
        done: u32,
        /// Parts in all.
        parts: u32,
        /// Bytes written.
        bytes: u64,
        /// Seconds it took.
        seconds: f64,
    },
    /// A level's checkpoint could not be used: the level is solved afresh.
    SolveAfresh {
        /// The level.
        seeds: usize,
        /// Why the checkpoint is not used.
        why: String,
    },
    /// Check 2 of `verify` was done before on these very contents.
    Check2Known {
        /// The level.
        seeds: usize,
        /// Positions that differed then (0: it passed).
        differing: u64,
    },
    /// Check 2's checkpoint could not be used: it starts afresh.
    Check2Afresh {
        /// The level.
        seeds: usize,
        /// Why the checkpoint is not used.
        why: String,
    },
    /// Check 2 of `verify` resumes from its checkpoint.
    Check2Resumed {
        /// The level.
        seeds: usize,
        /// Tiles done.
        tile: u64,
        /// Tiles in all.
        tiles: u64,
    },
    /// Another process is checking this level; `verify` waits for it.
    WaitingForChecker {
        /// The level.
        seeds: usize,
        /// Who holds the level's check lock.
        holder: String,
    },
    /// Check 3 of `verify` resumes from its checkpoint.
    Check3Resumed {
        /// The level.
        seeds: usize,
        /// Where it resumes.
        at: Check3At,
    },
    /// Check 3's checkpoint could not be used: it starts afresh.
    Check3Afresh {
        /// The level.
        seeds: usize,
        /// Why the checkpoint is not used.
        why: String,
    },
    /// `verify` cannot write in the table directory (read-only, or not
    /// this user's): the level is checked without a lock and without
    /// checkpoints, so a stop loses its progress.
    VerifyWithoutCheckpoints {
        /// The level.
        seeds: usize,
        /// Why.
        why: String,
    },
    /// `verify` waits to write a level's verdict to the table directory's
    /// records of verified levels, which another process is writing.
    WaitingForRecords {
        /// The records (`verified.tsv`).
        #[serde(serialize_with = "lossy")]
        path: PathBuf,
        /// Who holds their lock.
        holder: String,
    },
    /// `verify`'s verdict on a level could not be recorded: a pass of all
    /// three checks not written, or a failure whose earlier record of a
    /// pass could not be removed.
    VerifiedNotRecorded {
        /// The level.
        seeds: usize,
        /// Whether it passed.
        passed: bool,
        /// Why.
        why: String,
    },
    /// A solver's large working memory was found partly on 4 KiB pages,
    /// and its main array was moved onto huge pages where the kernel
    /// could. A warning if less than half of it is on huge pages even so:
    /// random access is then slower until the kernel moves the rest
    /// (README, "Huge pages").
    HugePages {
        /// The level being built or checked.
        seeds: usize,
        /// The process's anonymous memory after the move, in bytes.
        anon: u64,
        /// The share of it on huge pages before the move, in percent.
        before_percent: f64,
        /// And after.
        after_percent: f64,
        /// Seconds the move took.
        seconds: f64,
    },
    /// Check 3 of `verify` saved a checkpoint.
    Check3Checkpoint {
        /// The level.
        seeds: usize,
        /// Where it stands.
        at: Check3At,
        /// Bytes written.
        bytes: u64,
        /// Seconds it took.
        seconds: f64,
    },
    /// A line of the census file failed its checks and is not used.
    CensusLineRejected {
        /// The census file.
        #[serde(serialize_with = "lossy")]
        path: PathBuf,
        /// The line's number (from 1).
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    /// More lines of the census file are not used than were reported one
    /// by one.
    CensusMoreRejected {
        /// The census file.
        #[serde(serialize_with = "lossy")]
        path: PathBuf,
        /// Lines not reported.
        more: usize,
    },
    /// A census row's checkpoint could not be used: the row starts afresh.
    CensusRowAfresh {
        /// The checkpoint file.
        #[serde(serialize_with = "lossy")]
        path: PathBuf,
        /// Why it is not used.
        why: String,
    },
    /// A census row resumes from its checkpoint.
    CensusRowResumed {
        /// The row's seed count.
        seeds: usize,
        /// The checkpoint file.
        #[serde(serialize_with = "lossy")]
        path: PathBuf,
        /// The configuration it resumes at.
        from: u64,
        /// Configurations in all.
        of: u64,
    },
    /// A census checkpoint could not be saved; the run goes on (said once
    /// per row).
    CensusCheckpointNotSaved {
        /// Why.
        why: String,
    },
    /// A census row is saved, but its checkpoint could not be removed (a
    /// checkpoint beside a saved row is left over: every run tries again,
    /// and goes on).
    CensusCheckpointNotRemoved {
        /// The checkpoint.
        #[serde(serialize_with = "lossy")]
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// A path as text, lossily where it is not UTF-8.
fn lossy<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

impl Notice {
    /// [`Notice::HugePages`] of what the move onto huge pages did at level
    /// `seeds`.
    pub(crate) fn huge_pages(seeds: usize, moved: &crate::memory::Settled) -> Notice {
        Notice::HugePages {
            seeds,
            anon: moved.after.anon,
            before_percent: moved.before.huge_percent(),
            after_percent: moved.after.huge_percent(),
            seconds: moved.seconds,
        }
    }

    /// Whether the notice means something was wrong: a file or a line is
    /// damaged, or work is thrown away or could not be saved, or the
    /// working memory is mostly on small pages.
    pub fn is_warning(&self) -> bool {
        if let Notice::HugePages { after_percent, .. } = self {
            return *after_percent < 50.0;
        }
        matches!(
            self,
            Notice::DiskShort { .. }
                | Notice::Rebuilding { .. }
                | Notice::SolveAfresh { .. }
                | Notice::Check2Afresh { .. }
                | Notice::Check3Afresh { .. }
                | Notice::VerifyWithoutCheckpoints { .. }
                | Notice::VerifiedNotRecorded { .. }
                | Notice::CensusLineRejected { .. }
                | Notice::CensusMoreRejected { .. }
                | Notice::CensusRowAfresh { .. }
                | Notice::CensusCheckpointNotSaved { .. }
                | Notice::CensusCheckpointNotRemoved { .. }
        )
    }
}

/// Where check 3 of `verify` stands at a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Check3At {
    /// In the walk that reads the lower levels: `done` of its `parts`
    /// parts done.
    Captures {
        /// Parts done.
        done: u32,
        /// Parts in all.
        parts: u32,
    },
    /// At threshold `threshold`, its scan at position `position`.
    Threshold {
        /// The threshold.
        threshold: i8,
        /// The position of that threshold's scan.
        position: u64,
    },
    /// Threshold `threshold` done, its scan at the level's end: the next
    /// one is under way.
    ThresholdDone {
        /// The threshold.
        threshold: i8,
    },
}

impl fmt::Display for Check3At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Check3At::Captures { done, parts } => {
                write!(f, "after captures part {done} of {parts}")
            }
            Check3At::Threshold {
                threshold,
                position,
            } => write!(f, "at threshold {threshold} (position {position})"),
            Check3At::ThresholdDone { threshold } => write!(f, "after threshold {threshold}"),
        }
    }
}

/// One line: the control characters of the paths and reasons a notice
/// names are escaped ([`one_line`]), so that a log holds a line per notice
/// whatever a directory is called.
impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&one_line(&Unescaped(self).to_string()))
    }
}

/// A notice's text as it is, control characters and all.
struct Unescaped<'a>(&'a Notice);

impl fmt::Display for Unescaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mb = |bytes: &u64| *bytes as f64 / 1e6;
        match self.0 {
            Notice::Building {
                rules,
                levels,
                dir,
                ranks,
                threads,
            } => {
                // `levels` is a set such as `0..34,36`, or one level.
                let plural = if levels.parse::<usize>().is_ok() {
                    ""
                } else {
                    "s"
                };
                write!(
                    f,
                    "building {rules} level{plural} {levels} in {} with ",
                    dir.display()
                )?;
                let threads = match threads {
                    1 => "1 thread".to_string(),
                    n => format!("{n} threads"),
                };
                match *ranks {
                    1 => write!(f, "{threads}"),
                    _ => write!(f, "{ranks} ranks, {threads} in all"),
                }
            }
            Notice::WaitingForWriter { dir, holder } => write!(
                f,
                "{}: waiting for {holder}, which is writing to it",
                dir.display()
            ),
            Notice::DiskShort {
                levels,
                dir,
                need,
                room,
            } => {
                let (levels, them) = match levels.parse::<usize>() {
                    Ok(_) => (format!("level {levels}"), "it"),
                    Err(_) => (format!("levels {levels}"), "them"),
                };
                write!(
                    f,
                    "building {levels} may take up to {} of disk and {} has room for {} \
                     (free, or held by its raw copies): if the disk fills, the build stops, \
                     and run again once there is room it resumes {them} where it stopped",
                    bytes_text(*need),
                    dir.display(),
                    bytes_text(*room)
                )
            }
            Notice::Rebuilding { seeds, why } => write!(f, "{why}; rebuilding level {seeds}"),
            Notice::SolveResumed {
                seeds,
                threshold: 0,
            } => write!(f, "level {seeds}: resuming with every threshold done"),
            Notice::SolveResumed { seeds, threshold } => {
                write!(f, "level {seeds}: resuming at threshold {threshold}")
            }
            Notice::ForwardResumed {
                seeds,
                walk,
                done,
                parts,
            } => write!(
                f,
                "level {seeds}: resuming the forward pass after {walk} part {done} of {parts}"
            ),
            Notice::SolveCheckpoint {
                seeds,
                threshold,
                bytes,
                seconds,
            } => {
                let at = match threshold {
                    0 => "after the last threshold".to_string(),
                    t => format!("before threshold {t}"),
                };
                write!(
                    f,
                    "level {seeds}: checkpoint {at} ({:.1} MB in {seconds:.1} s)",
                    mb(bytes)
                )
            }
            Notice::ForwardCheckpoint {
                seeds,
                walk,
                done,
                parts,
                bytes,
                seconds,
            } => write!(
                f,
                "level {seeds}: checkpoint of the forward pass after {walk} part {done} of \
                 {parts} ({:.1} MB in {seconds:.1} s)",
                mb(bytes)
            ),
            Notice::SolveAfresh { seeds, why } => {
                write!(f, "level {seeds}: {why}: solving the level afresh")
            }
            Notice::Check2Known { seeds, differing } => {
                write!(
                    f,
                    "level {seeds}: check 2 was done on these contents before: "
                )?;
                match differing {
                    0 => write!(f, "pass"),
                    n => write!(f, "{}", positions_differ(*n)),
                }
            }
            Notice::Check2Resumed { seeds, tile, tiles } => {
                write!(
                    f,
                    "level {seeds}: check 2 resuming at tile {tile} of {tiles}"
                )
            }
            Notice::WaitingForChecker { seeds, holder } => {
                write!(
                    f,
                    "level {seeds}: waiting for {holder}, which is checking it"
                )
            }
            Notice::Check3Resumed { seeds, at } => {
                write!(f, "level {seeds}: check 3 resuming {at}")
            }
            Notice::Check2Afresh { seeds, why } => {
                write!(f, "level {seeds}: {why}: check 2 starts afresh")
            }
            Notice::Check3Afresh { seeds, why } => {
                write!(f, "level {seeds}: {why}: check 3 starts afresh")
            }
            Notice::VerifyWithoutCheckpoints { seeds, why } => write!(
                f,
                "level {seeds}: checked without checkpoints (a stop loses the check's progress): {why}"
            ),
            Notice::WaitingForRecords { path, holder } => {
                write!(
                    f,
                    "{}: waiting for {holder}, which is writing it",
                    path.display()
                )
            }
            Notice::VerifiedNotRecorded {
                seeds,
                passed: true,
                why,
            } => write!(f, "level {seeds} passed but could not be recorded: {why}"),
            Notice::VerifiedNotRecorded {
                seeds,
                passed: false,
                why,
            } => write!(
                f,
                "level {seeds} failed, but its earlier record of a pass could not be removed: {why}"
            ),
            Notice::HugePages {
                seeds,
                anon,
                before_percent: before,
                after_percent: after,
                seconds,
            } => {
                let gb = *anon as f64 / 1e9;
                if self.0.is_warning() {
                    write!(
                        f,
                        "level {seeds}: {after:.0} % of {gb:.1} GB of working memory on huge pages \
                         ({before:.0} % before {seconds:.1} s of moving); random access is slower \
                         on the rest until the kernel moves it (README: \"Huge pages\")"
                    )
                } else if after > before {
                    write!(
                        f,
                        "level {seeds}: working memory moved onto huge pages in {seconds:.1} s: \
                         {before:.0} % to {after:.0} % of {gb:.1} GB"
                    )
                } else {
                    write!(
                        f,
                        "level {seeds}: {after:.0} % of {gb:.1} GB of working memory on huge pages; \
                         the kernel moved no more ({seconds:.1} s)"
                    )
                }
            }
            Notice::Check3Checkpoint {
                seeds,
                at,
                bytes,
                seconds,
            } => write!(
                f,
                "level {seeds}: check 3 checkpoint {at}: {:.1} MB in {seconds:.1} s",
                mb(bytes)
            ),
            Notice::CensusLineRejected { path, line, why } => write!(
                f,
                "{} line {line}: {why}; not used (the row is computed again if asked for)",
                path.display()
            ),
            Notice::CensusMoreRejected { path, more } => write!(
                f,
                "{}: {more} more lines not used (moved to {}.rejected when the file is next written)",
                path.display(),
                path.file_name().unwrap_or_default().to_string_lossy()
            ),
            Notice::CensusRowAfresh { path, why } => {
                write!(f, "{}: {why}; starting the row afresh", path.display())
            }
            Notice::CensusRowResumed {
                seeds,
                path,
                from,
                of,
            } => write!(
                f,
                "census k={seeds}: resuming from {} at configuration {from} of {of}",
                path.display()
            ),
            Notice::CensusCheckpointNotSaved { why } => {
                write!(f, "checkpoint not saved (the run goes on): {why}")
            }
            Notice::CensusCheckpointNotRemoved { path, why } => write!(
                f,
                "the row is saved, its checkpoint {} not removed ({why}); the next run tries again",
                path.display()
            ),
        }
    }
}

/// "1 position differs", "2 positions differ": how many positions a
/// check found other than it expects.
pub fn positions_differ(n: u64) -> String {
    match n {
        1 => "1 position differs".to_string(),
        n => format!("{n} positions differ"),
    }
}

#[cfg(test)]
mod tests {
    use super::Notice;

    /// Moving the working memory onto huge pages is news; failing to, so
    /// that less than half is on them, is a warning that says what to do.
    #[test]
    fn huge_pages_warn_only_when_most_memory_stays_on_small_pages() {
        let moved = |before_percent, after_percent| Notice::HugePages {
            seeds: 34,
            anon: 9_000_000_000,
            before_percent,
            after_percent,
            seconds: 31.0,
        };
        assert!(!moved(44.0, 99.6).is_warning());
        assert_eq!(
            moved(44.0, 99.6).to_string(),
            "level 34: working memory moved onto huge pages in 31.0 s: 44 % to 100 % of 9.0 GB"
        );
        assert!(!moved(60.0, 60.0).is_warning());
        assert_eq!(
            moved(60.0, 60.0).to_string(),
            "level 34: 60 % of 9.0 GB of working memory on huge pages; the kernel moved no more (31.0 s)"
        );
        // Half on huge pages is not less than half.
        assert!(!moved(44.0, 50.0).is_warning());
        assert!(moved(44.0, 49.0).is_warning());
        assert!(moved(44.0, 49.0).to_string().starts_with(
            "level 34: 49 % of 9.0 GB of working memory on huge pages (44 % before 31.0 s of moving)"
        ));
        let json = serde_json::to_value(moved(44.0, 99.6)).unwrap();
        assert_eq!(json["kind"], "huge_pages");
    }

    /// How many positions differ, in the singular for one.
    #[test]
    fn check_2_done_before_says_how_many_positions_differ() {
        let known = |differing| {
            Notice::Check2Known {
                seeds: 7,
                differing,
            }
            .to_string()
        };
        let said = "level 7: check 2 was done on these contents before: ";
        assert_eq!(known(0), format!("{said}pass"));
        assert_eq!(known(1), format!("{said}1 position differs"));
        assert_eq!(known(12), format!("{said}12 positions differ"));
    }

    /// A notice is one line whatever the path or the reason it names holds:
    /// a line break or a terminal escape is escaped, as in errors, and the
    /// rest of the line is as it was.
    #[test]
    fn notices_stay_one_line_whatever_they_name() {
        let rejected = Notice::CensusLineRejected {
            path: "runs/k\nrow\u{1b}[2J.txt".into(),
            line: 3,
            why: "bad\rcount".to_string(),
        };
        let line = rejected.to_string();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.contains(r"runs/k\nrow\u{1b}[2J.txt"), "{line}");
        assert!(line.contains(r"bad\rcount"), "{line}");
        let plain = Notice::CensusLineRejected {
            path: "runs/krow.txt".into(),
            line: 3,
            why: "bad count".to_string(),
        };
        assert_eq!(
            line.replace(r"\n", "")
                .replace(r"\u{1b}[2J", "")
                .replace(r"\r", " "),
            plain.to_string()
        );
    }

    /// The lines a build's notices read as: its levels and threads, in the
    /// singular where there is one, and a checkpoint's size in MB.
    #[test]
    fn notices_read_as_the_lines_the_command_line_prints() {
        let building = |levels: &str, ranks, threads| Notice::Building {
            rules: "awari".to_string(),
            levels: levels.to_string(),
            dir: "db".into(),
            ranks,
            threads,
        };
        assert_eq!(
            building("8", 1, 1).to_string(),
            "building awari level 8 in db with 1 thread"
        );
        assert_eq!(
            building("0..5,8", 1, 4).to_string(),
            "building awari levels 0..5,8 in db with 4 threads"
        );
        assert_eq!(
            building("0..5", 2, 14).to_string(),
            "building awari levels 0..5 in db with 2 ranks, 14 threads in all"
        );
        let checkpoint = |threshold| Notice::SolveCheckpoint {
            seeds: 30,
            threshold,
            bytes: 2_837_540_000,
            seconds: 18.24,
        };
        assert_eq!(
            checkpoint(5).to_string(),
            "level 30: checkpoint before threshold 5 (2837.5 MB in 18.2 s)"
        );
        assert_eq!(
            checkpoint(0).to_string(),
            "level 30: checkpoint after the last threshold (2837.5 MB in 18.2 s)"
        );
    }

    /// A build that may fill its disk warns, naming its levels, in the
    /// singular where there is one, with sizes in MB below a gigabyte.
    #[test]
    fn a_build_short_of_disk_warns_with_its_levels_and_sizes() {
        let short = |levels: &str, need, room| Notice::DiskShort {
            levels: levels.to_string(),
            dir: "db".into(),
            need,
            room,
        };
        assert!(short("36", 33_000_000_000, 20_000_000_000).is_warning());
        assert_eq!(
            short("36", 33_012_000_000, 20_049_000_000).to_string(),
            "building level 36 may take up to 33.0 GB of disk and db has room for 20.0 GB \
             (free, or held by its raw copies): if the disk fills, the build stops, and run \
             again once there is room it resumes it where it stopped"
        );
        let several = short("0..18", 166_600_000, 21_040_000).to_string();
        assert!(
            several.starts_with(
                "building levels 0..18 may take up to 166.6 MB of disk and db has room for 21.0 MB"
            ),
            "{several}"
        );
        assert!(
            several.ends_with("it resumes them where it stopped"),
            "{several}"
        );
        let json = serde_json::to_value(short("36", 2, 1)).unwrap();
        assert_eq!(
            (&json["kind"], &json["need"], &json["room"], &json["dir"]),
            (&"disk_short".into(), &2.into(), &1.into(), &"db".into())
        );
    }

    /// A sink that follows only `advance` hears the units a resumed run
    /// found done through it too (`StageSink::resumed`'s default): they are
    /// done. An observer that does not say otherwise keeps waiting.
    #[test]
    fn a_sink_without_resumed_counts_resumed_units_as_done() {
        use super::{Observer, Progress, StageSink};
        use std::sync::atomic::{AtomicU64, Ordering};
        struct Done<'a>(&'a AtomicU64);
        impl StageSink for Done<'_> {
            fn advance(&self, n: u64) {
                self.0.fetch_add(n, Ordering::Relaxed);
            }
            fn finish(self: Box<Self>, _seconds: f64) {}
        }
        struct Counter(AtomicU64);
        impl Observer for Counter {
            fn stage(&self, _label: &str, _total: u64) -> Option<Box<dyn StageSink + '_>> {
                Some(Box::new(Done(&self.0)))
            }
            fn notice(&self, _notice: &Notice) {}
        }
        let counter = Counter(AtomicU64::new(0));
        let stage = Progress::to(&counter).stage("values".to_string(), 10);
        stage.resumed(4);
        stage.inc(3);
        stage.finish();
        assert_eq!(counter.0.load(Ordering::Relaxed), 7);
        assert!(Progress::to(&counter).keep_waiting());
        assert!(Progress::QUIET.keep_waiting());
    }
}
