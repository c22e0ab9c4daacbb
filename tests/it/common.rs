//! Shared test fixtures: levels solved and table directories built once
//! per run of the test binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use mancaladb::oware::solve::solve_level;
use mancaladb::oware::{Board, Encoder, MAX_SEEDS, PITS, Rules, level_size};
use mancaladb::progress::{Notice, Observer, Progress, StageSink};

/// The command-line binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mancaladb"))
}

/// Runs the binary with `args`.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mancaladb")
}

/// Asserts that the finished run `out` exited 0. A failure shows its exit
/// status (or the signal that ended it), its whole stderr and its stdout,
/// which a bare `assert!(out.status.success())` hides.
#[track_caller]
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}\n--- stderr:\n{}\n--- stdout:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The stdout of the finished run `out`, as text, after
/// [`assert_success`].
#[track_caller]
pub fn stdout_of_success(out: Output) -> String {
    assert_success(&out);
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs the binary with `args`, which must exit 0 ([`assert_success`]),
/// and returns its stdout as text.
#[track_caller]
pub fn succeeds(args: &[&str]) -> String {
    stdout_of_success(run(args))
}

/// `mancaladb export --format vu --db <db> --out <out>`, which must succeed.
pub fn export_vu(db: &Path, out: &Path) {
    succeeds(&[
        "export",
        "--format",
        "vu",
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// A fresh directory under the cargo target dir, `NAME-PID`. The
/// directories of the same name left by earlier runs whose process is gone
/// are removed (a run's levels take gigabytes; kept, they pile up). A name
/// belongs to the first test (thread) that asks for it: two tests sharing
/// one would run in one directory at the same time. (One test may ask
/// again, as property tests do for each case.)
pub fn scratch(name: &str) -> PathBuf {
    type Given = Vec<(String, std::thread::ThreadId)>;
    static GIVEN: std::sync::Mutex<Given> = std::sync::Mutex::new(Vec::new());
    let me = std::thread::current().id();
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    match given.iter().find(|(g, _)| g == name) {
        Some((_, owner)) => assert_eq!(
            *owner, me,
            "scratch directory {name:?} asked for by two tests: they would share it"
        ),
        None => given.push((name.to_string(), me)),
    }
    drop(given);
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(name)?.strip_prefix('-')?.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = tmp.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Awari levels 0..=18 built by the command line, as the README does.
pub fn awari_db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("awari-db");
        succeeds(&["build", "--max-seeds", "18", "--db", dir.to_str().unwrap()]);
        dir
    })
}

/// sha256 of a file, hex.
pub fn file_sha256(path: &Path) -> String {
    mancaladb::table::hex(&mancaladb::table::sha256(&std::fs::read(path).unwrap()))
}

/// The committed checksums: (rules, level) -> (content sha256, file sha256).
pub fn committed_checksums() -> Vec<(String, usize, String, String)> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("db/CHECKSUMS"))
        .unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[3].to_string(),
                f[4].to_string(),
            )
        })
        .collect()
}

/// Runs a bad command: exit code 2, `want` on stderr, no panic, and one line
/// (clap's own usage errors, which start with `error:`, add a usage hint).
pub fn refuses(args: &[&str], want: &str) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    if !err.starts_with("error:") {
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

/// A fresh directory with levels `0..=max` of `rules` built by the library.
pub fn built(name: &str, rules: Rules, max: usize) -> PathBuf {
    let dir = scratch(name);
    let db = mancaladb::db::Db::new(&dir);
    mancaladb::build::Build::new(&db, rules, 0..=max)
        .run()
        .unwrap();
    dir
}

/// Levels 0..=13 of `rules`, solved in memory by the builder's solver once
/// per run: the one level loop the tests share.
pub fn solved(rules: Rules) -> &'static [Vec<i8>] {
    static AWARI: OnceLock<Vec<Vec<i8>>> = OnceLock::new();
    static ABAPA: OnceLock<Vec<Vec<i8>>> = OnceLock::new();
    let cell = match rules {
        Rules::Awari => &AWARI,
        Rules::Abapa => &ABAPA,
    };
    cell.get_or_init(|| {
        let mut levels: Vec<Vec<i8>> = Vec::new();
        for n in 0..=13 {
            let lower: Vec<&[i8]> = levels.iter().map(|v| v.as_slice()).collect();
            levels.push(
                solve_level(rules, n, &lower, Progress::QUIET)
                    .unwrap()
                    .to_vec(),
            );
        }
        levels
    })
}

/// Asserts that `db` holds awari levels `0..=max` with the content and file
/// checksums of `db/CHECKSUMS`.
pub fn assert_committed(db: &Path, max: usize) {
    let mut checked = 0;
    for (rules, n, content, file) in committed_checksums() {
        if rules != "awari" || n > max {
            continue;
        }
        let path = db.join(format!("awari-{n:02}.mdb"));
        let t = mancaladb::table::Table::open(&path).unwrap();
        assert_eq!(
            mancaladb::table::hex(&t.header().content_sha256),
            content,
            "level {n} content"
        );
        assert_eq!(file_sha256(&path), file, "level {n} file");
        checked += 1;
    }
    assert_eq!(checked, max + 1);
}

/// Cuts the last `bytes` bytes off the file at `path` (a truncated table).
pub fn cut_short(path: &Path, bytes: u64) {
    let len = std::fs::metadata(path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len - bytes)
        .unwrap();
}

/// An observer that keeps what the library tells: its notices, and each
/// stage as (label, total, units done) when it finishes, with the units of
/// those found done at a resume.
#[derive(Default)]
pub struct Recorder {
    notices: Mutex<Vec<Notice>>,
    stages: Mutex<Vec<(String, u64, u64)>>,
    resumed: Mutex<Vec<(String, u64)>>,
}

impl Recorder {
    pub fn notices(&self) -> Vec<Notice> {
        self.notices.lock().unwrap().clone()
    }

    pub fn stages(&self) -> Vec<(String, u64, u64)> {
        self.stages.lock().unwrap().clone()
    }

    /// (label, units done before the run) of each finished stage that
    /// resumed.
    pub fn resumed(&self) -> Vec<(String, u64)> {
        self.resumed.lock().unwrap().clone()
    }

    pub fn clear(&self) {
        self.notices.lock().unwrap().clear();
        self.stages.lock().unwrap().clear();
    }
}

impl Observer for Recorder {
    fn stage(&self, label: &str, total: u64) -> Option<Box<dyn StageSink + '_>> {
        Some(Box::new(RecordedStage {
            to: self,
            label: label.to_string(),
            total,
            done: AtomicU64::new(0),
            resumed: AtomicU64::new(0),
        }))
    }

    fn notice(&self, notice: &Notice) {
        self.notices.lock().unwrap().push(notice.clone());
    }
}

struct RecordedStage<'a> {
    to: &'a Recorder,
    label: String,
    total: u64,
    done: AtomicU64,
    resumed: AtomicU64,
}

impl StageSink for RecordedStage<'_> {
    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    fn resumed(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        self.resumed.fetch_add(n, Ordering::Relaxed);
    }

    fn finish(self: Box<Self>, _seconds: f64) {
        let resumed = self.resumed.into_inner();
        if resumed > 0 {
            self.to
                .resumed
                .lock()
                .unwrap()
                .push((self.label.clone(), resumed));
        }
        let done = self.done.into_inner();
        self.to
            .stages
            .lock()
            .unwrap()
            .push((self.label, self.total, done));
    }
}

/// An observer that, as the checkpoint before threshold `threshold` is
/// saved in the work directory `dir`, copies that directory to `to`: that
/// checkpoint and the seed lists it reads (no other checkpoint). A finished
/// solve leaves only its checkpoint after the last threshold, the lists
/// gone; tests that damage a checkpoint between thresholds or its lists
/// resume from such a copy.
pub struct Snapshot {
    pub dir: PathBuf,
    pub to: PathBuf,
    pub threshold: usize,
}

impl Observer for Snapshot {
    fn stage(&self, _: &str, _: u64) -> Option<Box<dyn StageSink + '_>> {
        None
    }

    fn notice(&self, notice: &Notice) {
        let Notice::SolveCheckpoint { threshold, .. } = notice else {
            return;
        };
        if *threshold != self.threshold {
            return;
        }
        let keep = format!("state.{threshold}");
        let _ = std::fs::remove_dir_all(&self.to);
        std::fs::create_dir_all(&self.to).unwrap();
        for e in std::fs::read_dir(&self.dir).unwrap().flatten() {
            let name = e.file_name().into_string().unwrap();
            let checkpoint = name.starts_with("state.") || name.starts_with("forward.");
            if name == keep || !(checkpoint || name.ends_with(".tmp")) {
                std::fs::copy(e.path(), self.to.join(&name)).unwrap();
            }
        }
    }
}

/// Makes `to` a copy of the flat directory `from` (whatever `to` held
/// goes).
pub fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Where the compressed frame of block `k` lies in the bytes of a table
/// file, by db/README's layout: an 80-byte header (the block count `B` at
/// byte 32), `B + 1` offsets of the frames from the start of the data,
/// `B` block tags, then the frames.
pub fn frame(bytes: &[u8], k: usize) -> std::ops::Range<usize> {
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let data = 80 + 8 * (2 * word(32) + 1);
    data + word(80 + 8 * k)..data + word(80 + 8 * (k + 1))
}

/// Swaps the frames of blocks 0 and 1 of a table file's bytes, which must
/// be of equal length: every offset and zstd checksum stays valid, only
/// the blocks' tags tell.
pub fn swap_first_frames(bytes: &mut [u8]) {
    let (a, b) = (frame(bytes, 0), frame(bytes, 1));
    assert_eq!(a.len(), b.len(), "the first two frames have equal length");
    let first = bytes[a.clone()].to_vec();
    bytes.copy_within(b.clone(), a.start);
    bytes[b].copy_from_slice(&first);
}

/// Boards of level 11 to 48, which tests of whole levels never reach:
/// 200 of each level at indices spread by a fixed generator, and boards
/// with one heavy pit of the mover, whose moves go round the board once
/// or more (the long laps): 12 to 38 seeds beside a seed in every other
/// pit but one of the opponent's, and the most a pit can hold, 47 or 48,
/// with the rest of the game's 48 in one pit. Some of those are outside
/// the stored domain ([`Board::in_domain`]).
pub fn boards_past_the_whole_levels() -> Vec<Board> {
    let mut boards = Vec::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for n in 11..=MAX_SEEDS {
        let e = Encoder::new(n);
        for _ in 0..200 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            boards.push(e.board_at(n, (x >> 11) % level_size(n)).unwrap());
        }
    }
    for pit in 0..6 {
        for empty in 6..PITS {
            for heavy in 12..=38 {
                let mut pits = [1u8; PITS];
                pits[pit] = heavy;
                pits[empty] = 0;
                boards.push(Board::new(pits).unwrap());
            }
        }
        for rest in 0..PITS {
            for heavy in [47, 48] {
                let mut pits = [0u8; PITS];
                pits[pit] = heavy;
                pits[rest] += 48 - heavy;
                boards.push(Board::new(pits).unwrap());
            }
        }
    }
    boards
}
