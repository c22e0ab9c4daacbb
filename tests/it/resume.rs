//! The compact builder's two forced paths, through the real binary: tiny
//! frontiers (every round overflows into fresh marks and sweeps) and builds
//! killed with SIGKILL at random moments, resumed from checkpoints taken at
//! every threshold and after every part of the forward pass (parts of
//! 1,000,000 positions, so level 16 has 13 in each walk). Both must give
//! exactly the tables of `db/CHECKSUMS`. And checkpoints of today's format
//! versions, kept in `tests/fixtures/checkpoints/`, resumed by today's
//! binary.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicI64, Ordering::Relaxed};

use crate::common::{
    Recorder, Snapshot, assert_committed, assert_success, awari_db, bin, copy_dir, scratch, solved,
};
use mancaladb::error::{Error, Result};
use mancaladb::exchange::Alone;
use mancaladb::oware::solve::{Options, Part, solve_part_in};
use mancaladb::oware::{LowerLevels, Rules};
use mancaladb::progress::{Notice, Progress};

fn build(db: &Path, max: usize) -> Command {
    let mut c = bin();
    c.args(["build", "--max-seeds", &max.to_string(), "--db"])
        .arg(db)
        .env("MANCALADB_CHECKPOINT_SECS", "0")
        .env("MANCALADB_FORWARD_PART", "1000000");
    c
}

#[test]
fn tiny_frontiers_build_the_committed_tables() {
    let db = scratch("tiny-frontiers");
    let out = build(&db, 15)
        .env("MANCALADB_FRONTIER_CAP", "3000")
        .output()
        .unwrap();
    assert_success(&out);
    assert_committed(&db, 15);
}

/// A small generator for kill times (xorshift), seeded from the clock and
/// printed; `KILL_SEED=<seed>` replays a failed run's choices (the moments
/// still depend on the machine's speed).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The finished checkpoints of the levels of `min_seeds` or more being built
/// under `db`: a threshold's (`state.<t>`) or the forward pass's
/// (`forward.<walk>.<done>`), as `prefix` says. Not the `.tmp` files of
/// checkpoints still being written: a kill as soon as the first forward
/// one of a level appeared, before its rename, left nothing to resume,
/// which failed a CI run on a fast machine.
fn checkpoints(db: &Path, prefix: &str, min_seeds: usize) -> HashSet<PathBuf> {
    let Ok(levels) = std::fs::read_dir(db.join("raw/awari")) else {
        return HashSet::new();
    };
    let seeds = |name: &str| -> Option<usize> {
        name.strip_prefix("scores.")?
            .strip_suffix(".work")?
            .parse()
            .ok()
    };
    levels
        .flatten()
        .filter(|level| seeds(&level.file_name().to_string_lossy()).is_some_and(|n| n >= min_seeds))
        .filter_map(|level| std::fs::read_dir(level.path().join("rank-0")).ok())
        .flat_map(|files| files.flatten())
        .map(|f| f.path())
        .filter(|p| is_finished_checkpoint(p, prefix))
        .collect()
}

/// Whether `path` names a checkpoint whose name starts with `prefix` and
/// whose writing is over (not its `.tmp`).
fn is_finished_checkpoint(path: &Path, prefix: &str) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name.starts_with(prefix) && !name.ends_with(".tmp")
}

/// The forward checkpoints (`forward.<walk>.<done>`) in a work directory.
fn forward_checkpoints(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_finished_checkpoint(p, "forward."))
        .collect();
    found.sort();
    found
}

#[test]
fn killed_builds_resume_to_the_committed_tables() {
    let seed = match std::env::var("KILL_SEED") {
        Ok(s) => s.parse::<u64>().expect("KILL_SEED: a number") | 1,
        Err(_) => {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        }
    };
    eprintln!("kill-time seed {seed} (KILL_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let db = scratch("killed-builds");
    let max = 16;
    let mut log = String::new();
    for attempt in 0..12 {
        // The checkpoints that killed runs left: only one this run writes
        // says that it is under way (a level whose forward pass was done
        // keeps its own, and a kill as soon as the run started, on seeing
        // them, missed the forward pass every time on a loaded machine).
        let left = [
            checkpoints(&db, "state.", 0),
            checkpoints(&db, "forward", 13),
        ];
        let mut child = build(&db, max)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A third of the kills at a random moment, a third at a random
        // moment just after a threshold's checkpoint of the level under way
        // appeared, a third just after a forward checkpoint appeared, of a
        // level of 13 seeds or more: those have several parts per walk
        // (smaller ones pass theirs in a few milliseconds, which a loaded
        // machine's kill can miss every time).
        let start = Instant::now();
        let wait_for = |prefix, min_seeds, left: &HashSet<PathBuf>| {
            while checkpoints(&db, prefix, min_seeds).is_subset(left)
                && start.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(2));
            }
        };
        match attempt % 3 {
            0 => std::thread::sleep(Duration::from_millis(100 + rng.below(1500))),
            1 => {
                wait_for("state.", 0, &left[0]);
                std::thread::sleep(Duration::from_millis(rng.below(100)));
            }
            _ => {
                // Within a few milliseconds: a level's forward pass may be
                // over in 20 (one run missed it on all three tries).
                wait_for("forward", 13, &left[1]);
                std::thread::sleep(Duration::from_millis(rng.below(4)));
            }
        }
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap(); // SIGKILL
        let out = child.wait_with_output().unwrap();
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        if finished {
            break;
        }
    }
    let out = build(&db, max).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_success(&out);
    log.push_str(&err);
    for resumed in ["resuming at threshold", "resuming the forward pass"] {
        assert!(log.contains(resumed), "no run said {resumed:?}:\n{log}");
    }
    assert_committed(&db, max);
    // Work directories go once their level is in place.
    let left: Vec<_> = std::fs::read_dir(db.join("raw/awari"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".work"))
        .collect();
    assert!(left.is_empty(), "work directories left: {left:?}");
}

/// The checkpoints of level 10 in `tests/fixtures/checkpoints/` (a build's
/// before a threshold and in its forward pass, a `verify`'s in check 3),
/// made by an earlier binary of today's format versions, resume to the
/// committed table and a passing check. Were the meaning of their bytes
/// changed without a new version, they would resume into other values;
/// with a new version, they would not resume at all (the fixtures' README
/// says how to make them again).
#[test]
fn checkpoints_of_these_versions_resume_to_the_committed_tables() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checkpoints");
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).unwrap();
        for f in std::fs::read_dir(from).unwrap().flatten() {
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    };
    let with_levels = |name: &str, top: usize| {
        let db = scratch(name);
        for n in 0..=top {
            let table = format!("awari-{n:02}.mdb");
            std::fs::copy(awari_db().join(&table), db.join(&table)).unwrap();
        }
        db
    };
    for (fixture, said, reported) in [
        (
            "build-threshold",
            "level 10: resuming at threshold 6",
            "resumed at threshold 6",
        ),
        (
            "build-forward",
            "level 10: resuming the forward pass after moves part 2 of 4",
            "resumed after moves part 2 of 4",
        ),
    ] {
        let db = with_levels(&format!("fixture-{fixture}"), 9);
        copy(
            &fixtures.join(fixture),
            &db.join("raw/awari/scores.10.work/rank-0"),
        );
        let out = bin()
            .args(["build", "--max-seeds", "10", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{fixture}: {err}");
        assert!(err.contains(said), "{fixture}: no {said:?} in\n{err}");
        // Seed lists are read after that notice: one that does not decode
        // has the level solved afresh, to the same table.
        assert!(!err.contains("afresh"), "{fixture}: {err}");
        assert_committed(&db, 10);
        // The level's report says it resumed, and so does its build-log
        // line (its time is only this run's part: `known` passes it over).
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().find(|l| l.starts_with("level 10:")).unwrap();
        assert!(line.contains(reported), "{fixture}: {line}");
        let log = std::fs::read_to_string(db.join("build-log.tsv")).unwrap();
        let logged = log.lines().find(|l| l.starts_with("awari\t10\t")).unwrap();
        assert!(logged.ends_with("\t1"), "{fixture}: {logged}");
        assert_eq!(mancaladb::db::Db::new(&db).measured_rate(), None, "{log}");
    }
    let db = with_levels("fixture-verify", 10);
    copy(
        &fixtures.join("verify"),
        &db.join("raw/awari/verify.10.work"),
    );
    let out = bin()
        .args(["verify", "--seeds", "10", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    // The fixture's mark is threshold 3's last batch, its position past
    // the level's end (an earlier binary's): threshold 3 is done.
    let said = "level 10: check 3 resuming after threshold 3";
    assert!(err.contains(said), "no {said:?} in\n{err}");
    assert!(!err.contains("afresh"), "{err}");
    assert!(text.contains("check 3 re-derivation: pass"), "{text}");
}

#[test]
fn bad_solver_settings_are_usage_errors() {
    // Checked before anything else: also when every level stands (they
    // went unread, exit 0), and before the "building" line.
    let db = scratch("bad-settings");
    assert_success(&build(&db, 2).output().unwrap());
    for (name, value) in [
        ("MANCALADB_CHECKPOINT_SECS", "soon"),
        ("MANCALADB_CHECKPOINT_SECS", "-1"),
        ("MANCALADB_CHECKPOINT_SECS", "1e20"),
        ("MANCALADB_CHECKPOINT_SECS", "inf"),
        ("MANCALADB_FRONTIER_CAP", "0"),
        ("MANCALADB_FORWARD_PART", "0"),
        ("MANCALADB_FORWARD_PART", "many"),
    ] {
        let out = build(&db, 2).env(name, value).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}={value}: {err}");
        assert!(err.contains(&format!("{name}={value}: expected")), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    // Spaces around a value are dropped, as flags and RAYON_NUM_THREADS
    // drop them (these were refused).
    for (name, value) in [
        ("MANCALADB_CHECKPOINT_SECS", " off "),
        ("MANCALADB_CHECKPOINT_SECS", "30 "),
        ("MANCALADB_FRONTIER_CAP", " 3000"),
        ("MANCALADB_FORWARD_PART", "\t500\n"),
    ] {
        let out = build(&db, 2).env(name, value).output().unwrap();
        assert_success(&out);
    }
    // A value that is not UTF-8 used to be taken as no value at all.
    use std::os::unix::ffi::OsStrExt;
    let not_utf8 = std::ffi::OsStr::from_bytes(b"6\xff");
    for name in [
        "MANCALADB_CHECKPOINT_SECS",
        "MANCALADB_FRONTIER_CAP",
        "MANCALADB_FORWARD_PART",
    ] {
        let out = build(&db, 2).env(name, not_utf8).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}=6\u{fffd}: expected")),
            "{err}"
        );
    }
}

/// Lower levels whose reads fail once `left` of them are spent: a store
/// that breaks part-way through a forward pass.
struct Failing<'a> {
    levels: &'a [Vec<i8>],
    left: AtomicI64,
}

impl LowerLevels for Failing<'_> {
    type Reader = ();

    fn levels(&self) -> usize {
        self.levels.len()
    }

    fn reader(&self) {}

    fn value(&self, reader: &mut (), level: usize, index: u64) -> Result<i8> {
        if self.left.fetch_sub(1, Relaxed) <= 0 {
            return Err(Error::Invalid("a read failed on purpose".into()));
        }
        self.levels.value(reader, level, index)
    }
}

/// Checkpoints after every step that can take one; forward parts of 50,000
/// positions.
fn checkpoint_always(dir: std::path::PathBuf) -> Options {
    Options {
        dir,
        checkpoint_every: Some(Duration::ZERO),
        frontier_cap: None,
        forward_part: 50_000,
        lower: [0; 32],
    }
}

/// Solves level `seeds` of `rules` with `reads` reads of the lower levels
/// allowed: the reads made, and the result.
fn solve_failing(rules: Rules, seeds: usize, options: &Options, reads: i64) -> (i64, Result<Part>) {
    let lower = Failing {
        levels: &solved(rules)[..seeds],
        left: AtomicI64::new(reads),
    };
    let part = solve_part_in(rules, seeds, &lower, &Alone, options, Progress::QUIET);
    (reads - lower.left.load(Relaxed).max(0), part)
}

/// A forward pass stopped by a failing read resumes from its last
/// checkpoint (a part of its captures walk): the level comes out the same,
/// and the resumed pass reads only what the parts after the checkpoint
/// read.
#[test]
fn a_forward_pass_stopped_part_way_resumes_to_the_same_values() {
    let dir = scratch("forward-resume");
    let seeds = 12;
    for rules in Rules::ALL {
        let levels = solved(rules);
        let options = checkpoint_always(dir.join(rules.to_string()));
        let solve = |reads: i64| solve_failing(rules, seeds, &options, reads);
        // A finished solve leaves the checkpoint after its last threshold:
        // each solve below but the resumed ones starts in an empty directory.
        let afresh = || {
            let _ = std::fs::remove_dir_all(&options.dir);
        };
        afresh();
        let (all, fresh) = solve(i64::MAX);
        assert!(fresh.unwrap().values[..] == levels[seeds][..]);
        for allowed in [all / 3, all * 4 / 5] {
            afresh();
            let (_, stopped) = solve(allowed);
            let err = stopped.err().expect("the reads ran out");
            assert!(err.to_string().contains("on purpose"), "{err}");
            assert_eq!(
                forward_checkpoints(&options.dir).len(),
                1,
                "{rules}: one forward checkpoint, the older ones removed"
            );
            let (reads, resumed) = solve(i64::MAX);
            assert!(
                resumed.unwrap().values[..] == levels[seeds][..],
                "{rules} level {seeds} resumed after {allowed} of {all} reads differs"
            );
            assert!(
                reads <= all - allowed + all / 10,
                "{rules}: the resumed pass read {reads} of {all} after {allowed}"
            );
        }
    }
}

/// An observer that copies the work directory `dir` to `to` as the
/// forward checkpoint after part `at(parts)` of the walk `walk` is taken:
/// the work directory of a solve stopped there.
struct ForwardSnapshot {
    dir: PathBuf,
    to: PathBuf,
    walk: &'static str,
    at: fn(u32) -> u32,
}

impl mancaladb::progress::Observer for ForwardSnapshot {
    fn stage(&self, _: &str, _: u64) -> Option<Box<dyn mancaladb::progress::StageSink + '_>> {
        None
    }

    fn notice(&self, notice: &mancaladb::progress::Notice) {
        if let mancaladb::progress::Notice::ForwardCheckpoint {
            walk, done, parts, ..
        } = *notice
            && walk == self.walk
            && done == (self.at)(parts)
        {
            copy_dir(&self.dir, &self.to);
        }
    }
}

/// The work directory of a solve of awari level `seeds` in `dir`, as it
/// was when the forward checkpoint after part `at(parts)` of `walk` was
/// taken (every part a checkpoint).
fn stopped_at(dir: &Path, seeds: usize, walk: &'static str, at: fn(u32) -> u32) -> PathBuf {
    let levels = solved(Rules::Awari);
    let options = checkpoint_always(dir.join("work"));
    let snapshot = ForwardSnapshot {
        dir: options.dir.clone(),
        to: dir.join(format!("{walk}-stopped")),
        walk,
        at,
    };
    let _ = std::fs::remove_dir_all(&snapshot.to);
    let part = solve_part_in(
        Rules::Awari,
        seeds,
        &levels[..seeds],
        &Alone,
        &options,
        Progress::to(&snapshot),
    );
    assert!(part.unwrap().values[..] == levels[seeds][..]);
    assert!(snapshot.to.exists(), "no checkpoint after {walk} part");
    snapshot.to
}

/// A forward pass stopped once its captures walk (walk 1) is done resumes
/// at the moves walk: it reads no lower level again.
#[test]
fn a_forward_pass_stopped_after_its_captures_walk_reads_no_lower_level_again() {
    let dir = scratch("captures-done");
    let (rules, seeds) = (Rules::Awari, 12);
    let stopped = stopped_at(&dir, seeds, "captures", |parts| parts);
    let (reads, part) = solve_failing(rules, seeds, &checkpoint_always(stopped), i64::MAX);
    let part = part.unwrap();
    assert!(part.values[..] == solved(rules)[seeds][..]);
    let at = part.resumed_forward.expect("resumed in the forward pass");
    assert_eq!((at.walk, at.done), ("captures", at.parts), "{at:?}");
    assert_eq!(reads, 0, "the captures walk was done before");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A forward pass stopped half-way through its moves walk (walk 2, where
/// the seed lists are written) resumes there: the level comes out the
/// same, and its progress counts the parts done before as done, not as
/// this run's: the captures walk whole, the moves walk up to the
/// checkpoint's part, each stage ending at its total.
#[test]
fn a_forward_pass_stopped_in_its_moves_walk_resumes_there() {
    let dir = scratch("moves-resume");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let resumed = checkpoint_always(stopped_at(&dir, seeds, "moves", |parts| parts / 2));
    let heard = Recorder::default();
    let part = solve_part_in(
        rules,
        seeds,
        &levels[..seeds],
        &Alone,
        &resumed,
        Progress::to(&heard),
    )
    .unwrap();
    assert!(part.values[..] == levels[seeds][..]);
    let at = part.resumed_forward.expect("resumed in the forward pass");
    assert_eq!((at.walk, at.done), ("moves", at.parts / 2), "{at:?}");
    assert!(at.parts >= 4, "{at:?}");
    // The moves walk is cut into parts of whole chunks of 2^15 positions.
    let size = mancaladb::oware::level_size(seeds);
    let chunks = size.div_ceil(1 << 15);
    let done = ((chunks * u64::from(at.done) / u64::from(at.parts)) << 15).min(size);
    let stages = heard.stages();
    let captures = format!("level {seeds}: captures");
    let tiles = stages.iter().find(|s| s.0 == captures).unwrap().1;
    let moves = format!("level {seeds}: moves");
    assert_eq!(
        heard.resumed(),
        [(captures.clone(), tiles), (moves.clone(), done)]
    );
    for stage in [captures, moves] {
        let (_, total, done) = stages.iter().find(|s| s.0 == stage).unwrap();
        assert_eq!(done, total, "{stage}: {stages:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checkpoints are tied to the lower levels they were solved from
/// (`Options::lower`, which a build sets to its lower levels' content
/// hashes): solved again over other lower levels, a level starts afresh,
/// from a threshold's checkpoint or the forward pass's alike.
#[test]
fn checkpoints_over_other_lower_levels_are_not_resumed() {
    let dir = scratch("other-lower-levels");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let first = checkpoint_always(dir.clone());
    let other = Options {
        lower: [1; 32],
        ..checkpoint_always(dir.clone())
    };
    let (all, fresh) = solve_failing(rules, seeds, &first, i64::MAX);
    assert!(fresh.unwrap().values[..] == levels[seeds][..]);
    // The same lower levels resume after the last threshold (a kill while
    // the table was written), reading none of them.
    let (reads, resumed) = solve_failing(rules, seeds, &first, i64::MAX);
    let resumed = resumed.unwrap();
    assert_eq!((reads, resumed.resumed_at), (0, Some(0)));
    assert!(resumed.values[..] == levels[seeds][..]);
    let (reads, afresh) = solve_failing(rules, seeds, &other, i64::MAX);
    let afresh = afresh.unwrap();
    assert_eq!((reads, afresh.resumed_at), (all, None));
    assert!(afresh.values[..] == levels[seeds][..]);
    // A forward pass stopped part-way, then solved over other lower levels.
    let _ = std::fs::remove_dir_all(&dir);
    assert!(solve_failing(rules, seeds, &first, all / 2).1.is_err());
    assert_eq!(forward_checkpoints(&dir).len(), 1, "no forward checkpoint");
    let (reads, afresh) = solve_failing(rules, seeds, &other, i64::MAX);
    assert_eq!(reads, all, "the forward pass was not done afresh");
    assert!(afresh.unwrap().values[..] == levels[seeds][..]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A solve resumed from a checkpoint tells its values stage that the
/// positions the checkpoint had decided were done before it: done, not
/// part of its rate. Resumed after the last threshold (the checkpoint a
/// finished solve leaves), those are all positions not worth 0, and the
/// values are the level's.
#[test]
fn a_solve_resumed_from_a_checkpoint_reports_what_was_decided_before() {
    let dir = scratch("resumed-values");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let options = checkpoint_always(dir.clone());
    let solve =
        |progress| solve_part_in(rules, seeds, &levels[..seeds], &Alone, &options, progress);
    assert_eq!(solve(Progress::QUIET).unwrap().resumed_at, None);
    let heard = Recorder::default();
    let resumed = solve(Progress::to(&heard)).unwrap();
    assert_eq!(resumed.resumed_at, Some(0));
    assert!(resumed.values[..] == levels[seeds][..]);
    let before = levels[seeds].iter().filter(|&&v| v != 0).count() as u64;
    assert!(before > 0 && before < levels[seeds].len() as u64);
    let label = format!("level {seeds}: values");
    assert_eq!(heard.resumed(), [(label.clone(), before)]);
    let size = levels[seeds].len() as u64;
    assert!(
        heard.stages().contains(&(label, size, size)),
        "{:?}",
        heard.stages()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Levels 0..13 built through the binary in a fresh directory `name`.
fn built_to_13(name: &str) -> std::path::PathBuf {
    let db = scratch(name);
    let out = build(&db, 13).output().unwrap();
    assert_success(&out);
    db
}

/// The finished files (no `.tmp`) of level 14's work directory under `db`
/// whose names start with `prefix`, sorted.
fn level_14_files(db: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let work = db.join("raw/awari/scores.14.work/rank-0");
    let mut found: Vec<_> = std::fs::read_dir(work)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_finished_checkpoint(p, prefix))
        .collect();
    found.sort();
    found
}

/// Builds level 14 in `db` with one thread and kills it (SIGKILL) as soon
/// as a work file named `after...` is there: the level must not have
/// finished first.
fn kill_level_14_after(db: &Path, after: &str) {
    let _ = std::fs::remove_file(db.join("awari-14.mdb"));
    let mut child = build(db, 14)
        .args(["--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while level_14_files(db, after).is_empty() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        !level_14_files(db, after).is_empty(),
        "no {after} checkpoint"
    );
    assert!(!db.join("awari-14.mdb").exists(), "finished first");
}

/// A build of level 14 killed after a threshold's checkpoint, then rerun
/// after level 12 (which 14 reads) was replaced by a sound table of other
/// values, solves level 14 afresh: the build ties its checkpoints to the
/// lower levels' content hashes (`Db::lower_content`).
#[test]
fn a_build_over_a_replaced_lower_level_solves_the_level_afresh() {
    let db = built_to_13("replaced-lower-level");
    kill_level_14_after(&db, "state.");
    let mut values = solved(Rules::Awari)[12].clone();
    let k = values.iter().position(|&v| v != 0).unwrap();
    values[k] = -values[k];
    let id = mancaladb::db::Db::table_id(Rules::Awari, 12);
    mancaladb::table::write_table(&db.join("awari-12.mdb"), id, &values).unwrap();
    let out = build(&db, 14).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_success(&out);
    assert!(
        err.contains("no checkpoint in")
            && err.contains("can be resumed: each is of another solve")
            && err.contains("solving the level afresh"),
        "{err}"
    );
}

/// A checkpoint damaged on disk (a threshold's, or the forward pass's) is
/// dropped and the level solved afresh, to the same values: a rerun never
/// stops for good on the same bad file.
#[test]
fn a_damaged_checkpoint_is_dropped_and_the_level_solved_afresh() {
    let dir = scratch("damaged-checkpoint");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let options = checkpoint_always(dir.clone());
    let solve = |reads: i64| solve_failing(rules, seeds, &options, reads).1;
    // Flips a byte near the end of a file: inside zstd's frame, past the
    // header, so only the frame's checksum or structure can tell.
    let damage = |path: &std::path::Path| {
        let mut bytes = std::fs::read(path).unwrap();
        let k = bytes.len() - 6;
        bytes[k] ^= 0x5a;
        std::fs::write(path, bytes).unwrap();
    };
    // The work directory as it was before threshold 1.
    copy_dir(&before_threshold_1(rules, seeds, &options), &dir);
    let state = dir.join("state.1");
    damage(&state);
    let part = solve(i64::MAX).expect("a damaged threshold checkpoint is dropped");
    assert_eq!(part.resumed_at, None);
    assert!(part.values[..] == levels[seeds][..]);
    // A forward pass stopped part-way, its checkpoint then damaged.
    let _ = std::fs::remove_dir_all(&dir);
    assert!(solve(2_000).is_err());
    let forward = forward_checkpoints(&dir);
    assert_eq!(forward.len(), 1, "no forward checkpoint");
    damage(&forward[0]);
    let part = solve(i64::MAX).expect("a damaged forward checkpoint is dropped");
    assert!(part.values[..] == levels[seeds][..]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Solves level `seeds` of `rules` in `options.dir` (which must take a
/// checkpoint before every threshold) and returns a copy of that work
/// directory as it was when the checkpoint before threshold 1 was saved:
/// that checkpoint and the seed lists of threshold 1, which the finished
/// solve no longer holds.
fn before_threshold_1(rules: Rules, seeds: usize, options: &Options) -> std::path::PathBuf {
    let levels = solved(rules);
    let to = options.dir.with_extension("before-1");
    let snapshot = Snapshot {
        dir: options.dir.clone(),
        to: to.clone(),
        threshold: 1,
    };
    let _ = std::fs::remove_dir_all(&options.dir);
    let progress = Progress::to(&snapshot);
    let part = solve_part_in(rules, seeds, &levels[..seeds], &Alone, options, progress);
    assert!(part.unwrap().values[..] == levels[seeds][..]);
    assert!(
        to.join("state.1").exists(),
        "no checkpoint before threshold 1"
    );
    to
}

/// The first seed list of threshold 1 in `dir` that holds records, and
/// where its first record ends (a record boundary: its head says its
/// payload's length).
fn a_list_with_records(dir: &Path) -> (std::path::PathBuf, u64) {
    for name in ["w.1", "l.1"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        if bytes.len() >= 16 {
            let payload = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
            return (dir.join(name), 16 + u64::from(payload));
        }
    }
    panic!("no seed list of threshold 1 holds a record");
}

/// A seed list cut between two records reads as a list of fewer seeds,
/// every record whole: only its recorded length tells. Cut so, or missing,
/// it is a damaged work directory, dropped, and the level solved afresh to
/// the same values; never resumed with seeds missing. A checkpoint
/// resumed takes with it the `.tmp` a killed checkpoint write left.
#[test]
fn a_seed_list_cut_between_records_or_missing_is_dropped_not_resumed() {
    let dir = scratch("cut-seed-list");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let options = checkpoint_always(dir.clone());
    let solve = || solve_failing(rules, seeds, &options, i64::MAX).1.unwrap();
    // The work directory as it was before threshold 1: its checkpoint and
    // the lists of threshold 1.
    let before = before_threshold_1(rules, seeds, &options);
    copy_dir(&before, &dir);
    // Resumed as it is, with what a killed checkpoint write left: the
    // leftover goes at once.
    let leftover = dir.join("state.0.tmp");
    std::fs::write(&leftover, vec![7u8; 100_000]).unwrap();
    let part = solve();
    assert_eq!(part.resumed_at, Some(1));
    assert!(part.values[..] == levels[seeds][..]);
    assert!(
        !leftover.exists(),
        "the leftover of a killed write is still there"
    );
    for cut in ["first record", "empty", "missing"] {
        copy_dir(&before, &dir);
        let (path, first) = a_list_with_records(&dir);
        match cut {
            "first record" => {
                crate::common::cut_short(&path, std::fs::metadata(&path).unwrap().len() - first)
            }
            "empty" => std::fs::write(&path, b"").unwrap(),
            _ => std::fs::remove_file(&path).unwrap(),
        }
        let part = solve();
        assert_eq!(part.resumed_at, None, "{cut}: resumed with a damaged list");
        assert!(part.values[..] == levels[seeds][..], "{cut}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Builds of level 14 killed just after a checkpoint of some kind appeared
/// in its work directory, then their work files damaged (or the forward
/// parts changed) before the rerun: every rerun builds the committed
/// table, saying when it solves afresh.
#[test]
fn killed_builds_with_damaged_work_files_rebuild_the_committed_table() {
    let db = built_to_13("damaged-work-files");
    let lists = || [level_14_files(&db, "w."), level_14_files(&db, "l.")].concat();
    // (checkpoint to kill after, damage, what the rerun must say)
    type Damage = fn(&[std::path::PathBuf]);
    let cases: [(&str, Damage, &str); 6] = [
        // Cut between records (to none): the reviewer's wrong table.
        (
            "state.",
            |lists| {
                let w3 = lists.iter().find(|p| p.ends_with("w.3")).unwrap();
                std::fs::write(w3, b"").unwrap();
            },
            "solving the level afresh",
        ),
        // Shorter than the forward checkpoint says: once a permanent error.
        (
            "forward.2.",
            |lists| {
                for l in lists {
                    std::fs::write(l, b"").unwrap();
                }
            },
            "solving the level afresh",
        ),
        // Gone, as a wipe killed part-way leaves it: once a permanent error.
        (
            "forward.2.",
            |lists| {
                std::fs::remove_file(&lists[0]).unwrap();
            },
            "solving the level afresh",
        ),
        // Not a file: its length passed the forward checkpoint's "at
        // least", then every rerun stopped at the open, with exit 2.
        (
            "forward.2.",
            |lists| {
                std::fs::remove_file(&lists[0]).unwrap();
                std::fs::create_dir(&lists[0]).unwrap();
            },
            "a directory where a seed list goes: solving the level afresh",
        ),
        (
            "forward.2.",
            |lists| {
                std::fs::remove_file(&lists[0]).unwrap();
                let path = std::ffi::CString::new(lists[0].as_os_str().as_encoded_bytes()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
            },
            "a named pipe where a seed list goes: solving the level afresh",
        ),
        // No damage; the rerun asks for other forward parts.
        (
            "forward.2.",
            |_| {},
            "resuming the forward pass after moves part",
        ),
    ];
    for (k, (after, damage, said)) in cases.into_iter().enumerate() {
        eprintln!("case {k}: killed after {after}");
        kill_level_14_after(&db, after);
        damage(&lists());
        let out = build(&db, 14)
            .env("MANCALADB_FORWARD_PART", "300000")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "case {k}: {err}");
        assert!(err.contains(said), "case {k}: no {said:?} in\n{err}");
        assert_committed(&db, 14);
    }
}

/// The thresholds of the checkpoints a solve said it saved, in order.
fn saved_thresholds(heard: &Recorder) -> Vec<usize> {
    heard
        .notices()
        .iter()
        .filter_map(|n| match n {
            Notice::SolveCheckpoint { threshold, .. } => Some(*threshold),
            _ => None,
        })
        .collect()
}

/// With a checkpoint due at every step (`Some(0)`), a solve saves one
/// after its forward pass (before threshold `seeds`) and one after every
/// threshold, the last included: `seeds` down to 0, each once, in that
/// order. Resumed from the one before threshold 1, it saves only the one
/// after that threshold. Either way its values stage ends with every
/// position done once, those decided before the checkpoint counted as
/// done before.
#[test]
fn a_solve_checkpoints_after_its_forward_pass_and_after_every_threshold() {
    let dir = scratch("every-threshold");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let options = checkpoint_always(dir.clone());
    let before = before_threshold_1(rules, seeds, &options);
    let size = levels[seeds].len() as u64;
    let label = format!("level {seeds}: values");
    let solve = |heard: &Recorder| {
        let progress = Progress::to(heard);
        let part = solve_part_in(rules, seeds, &levels[..seeds], &Alone, &options, progress);
        let part = part.unwrap();
        assert!(part.values[..] == levels[seeds][..]);
        assert!(
            heard.stages().contains(&(label.clone(), size, size)),
            "{:?}",
            heard.stages()
        );
        part.resumed_at
    };
    let _ = std::fs::remove_dir_all(&dir);
    let heard = Recorder::default();
    assert_eq!(solve(&heard), None);
    assert_eq!(
        saved_thresholds(&heard),
        (0..=seeds).rev().collect::<Vec<_>>()
    );
    copy_dir(&before, &dir);
    let heard = Recorder::default();
    assert_eq!(solve(&heard), Some(1));
    assert_eq!(saved_thresholds(&heard), [0]);
    // Decided before threshold 1: every position whose value is not
    // within -1..=1.
    let decided = levels[seeds].iter().filter(|v| v.abs() > 1).count() as u64;
    assert_eq!(heard.resumed(), [(label, decided)]);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&before);
}

/// Checkpoints off (`None`, as `solve_part` asks) are never saved, in the
/// forward pass (whatever its parts) or between thresholds, and none is
/// left in the work directory.
#[test]
fn a_solve_with_checkpoints_off_saves_none() {
    let dir = scratch("checkpoints-off");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let options = Options {
        checkpoint_every: None,
        ..checkpoint_always(dir.clone())
    };
    let heard = Recorder::default();
    let progress = Progress::to(&heard);
    let part = solve_part_in(rules, seeds, &levels[..seeds], &Alone, &options, progress);
    assert!(part.unwrap().values[..] == levels[seeds][..]);
    let saved: Vec<Notice> = (heard.notices().into_iter())
        .filter(|n| {
            matches!(
                n,
                Notice::SolveCheckpoint { .. } | Notice::ForwardCheckpoint { .. }
            )
        })
        .collect();
    assert!(saved.is_empty(), "{saved:?}");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("state.") || name.starts_with("forward."))
        .collect();
    assert!(files.is_empty(), "{files:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A solve that finds checkpoints it cannot resume says why once: over
/// other lower levels, that none can be resumed; with the checkpoint
/// before threshold 1 damaged, which file is damaged, and not also that
/// none can be resumed.
#[test]
fn a_solve_that_cannot_resume_says_why_once() {
    let dir = scratch("afresh-once");
    let (rules, seeds) = (Rules::Awari, 12);
    let levels = solved(rules);
    let options = checkpoint_always(dir.clone());
    let before = before_threshold_1(rules, seeds, &options);
    let afresh = |options: &Options| {
        let heard = Recorder::default();
        let progress = Progress::to(&heard);
        let part = solve_part_in(rules, seeds, &levels[..seeds], &Alone, options, progress);
        let part = part.unwrap();
        assert!(part.values[..] == levels[seeds][..]);
        assert_eq!(part.resumed_at, None);
        let why: Vec<String> = (heard.notices().into_iter())
            .filter_map(|n| match n {
                Notice::SolveAfresh { why, .. } => Some(why),
                _ => None,
            })
            .collect();
        assert_eq!(why.len(), 1, "{why:?}");
        why[0].clone()
    };
    copy_dir(&before, &dir);
    let other = Options {
        lower: [1; 32],
        ..checkpoint_always(dir.clone())
    };
    let why = afresh(&other);
    assert!(why.starts_with("no checkpoint in"), "{why}");
    copy_dir(&before, &dir);
    let state = dir.join("state.1");
    let mut bytes = std::fs::read(&state).unwrap();
    let k = bytes.len() - 6;
    bytes[k] ^= 0x5a;
    std::fs::write(&state, bytes).unwrap();
    let why = afresh(&options);
    assert!(why.starts_with(&state.display().to_string()), "{why}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&before);
}
