//! What a hostile user found (issue 15), each case as a test: exit codes
//! that tell the truth when output fails, a directory locked for writers,
//! files that are not tables, values out of range, hints that can be
//! pasted, partial files cleaned up, records never dropped for a bad line.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    assert_committed, assert_success, awari_db, bin, built, refuses, run, scratch,
    stdout_of_success, succeeds,
};
use mancaladb::db::Db;
use mancaladb::oware::{Encoder, Rules, level_size, reads_level};
use mancaladb::table::write_table;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs the binary with standard output on `/dev/full` (every write fails).
fn to_dev_full(args: &[&str]) -> Output {
    bin()
        .args(args)
        .stdout(File::options().write(true).open("/dev/full").unwrap())
        .output()
        .unwrap()
}

#[test]
fn a_closed_pipe_stops_neither_the_build_nor_the_verdict() {
    let dir = scratch("pipe");
    let mut child = bin()
        .args(["build", "--max-seeds", "14", "--db", s(&dir)])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is gone (like `| head -1`): the build goes on to the end.
    assert!(child.wait().unwrap().success());
    assert!(dir.join("awari-14.mdb").exists(), "every level built");

    // A damaged table: verify's verdict (1) survives a closed pipe.
    let path = dir.join("awari-14.mdb");
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let mut child = bin()
        .args(["verify", "--quick", "--db", s(&dir)])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

#[test]
fn failed_writes_exit_2_and_diagnostics_never_panic() {
    let dir = built("full", Rules::Awari, 8);
    for args in [
        vec!["query", "--db", s(&dir), "1 1 1 1 1 0 0 0 0 0 0 0"],
        vec!["build", "--max-seeds", "8", "--db", s(&dir)],
        vec!["stats", "--db", s(&dir)],
        vec!["verify", "--quick", "--db", s(&dir)],
        vec!["known", "--db", s(&dir)],
        vec!["--help"],
        vec!["--version"],
        vec!["query", "--help"],
    ] {
        let out = to_dev_full(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("standard output"), "{args:?}: {err}");
    }
    // Standard error on /dev/full too: the error still exits 2, no panic (101).
    let out = bin()
        .args(["query", "--db", s(&dir), "1 2 3"])
        .stderr(File::options().write(true).open("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn verify_exits_by_its_verdict_when_it_cannot_record_it() {
    let dir = built("unrecordable", Rules::Awari, 6);
    // The record is written through verified.tsv.tmp; a directory there
    // makes every write fail.
    std::fs::create_dir(dir.join("verified.tsv.tmp")).unwrap();
    let out = run(&["verify", "--db", s(&dir), "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("mancaladb: warning: level 6 passed but could not be recorded: "),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("\"passed\":true").count(), 7, "{text}");
}

#[test]
fn a_missing_level_stops_verify_before_any_check() {
    let dir = built("verify-missing", Rules::Awari, 6);
    // Level 7 is asked for but not built: said at once, before hours of
    // checks of levels 5 and 6 could be lost to it.
    let args = ["verify", "--db", s(&dir), "--seeds", "5..7"];
    refuses(&args, "level 7 (awari) not found");
    let out = run(&args);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "no level checked");
    // So is a lower level that a check reads.
    std::fs::remove_file(dir.join("awari-02.mdb")).unwrap();
    refuses(
        &["verify", "--db", s(&dir), "--seeds", "5..6"],
        "level 2 (awari) not found",
    );
    // Check 1 reads no other level.
    let out = run(&[
        "verify",
        "--db",
        s(&dir),
        "--seeds",
        "5..6",
        "--checks",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_directory_in_place_of_a_table_is_an_io_error_saying_so() {
    let dir = built("not-a-file", Rules::Awari, 5);
    let path = dir.join("awari-05.mdb");
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    refuses(
        &["verify", "--quick", "--db", s(&dir)],
        "awari-05.mdb: is a directory; expected a level's file",
    );
    refuses(
        &["query", "--db", s(&dir), "1 1 1 1 1 0 0 0 0 0 0 0"],
        "is a directory",
    );
    // Before any solving: its table could not be written there either.
    let out = run(&["build", "--max-seeds", "5", "--db", s(&dir)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("awari-05.mdb: is a directory"), "{err}");
    assert!(!err.contains("rebuilding"), "{err}");
}

#[test]
fn a_file_given_as_the_directory_is_named_as_such() {
    let dir = scratch("file-as-dir");
    let file = dir.join("afile");
    std::fs::write(&file, "").unwrap();
    let f = s(&file);
    let want = "afile: is a regular file; expected a directory";
    refuses(&["build", "--max-seeds", "2", "--db", f], want);
    // Or a directory below it: the file is what is named ("afile/sub/
    // awari-00.mdb: Not a directory" said neither what nor where).
    let below = file.join("sub");
    let slash = format!("{f}/");
    for args in [
        &["build", "--max-seeds", "2", "--db", s(&below)][..],
        &["stats", "--db", s(&below)],
        &["serve", "--db", s(&below), "--addr", "127.0.0.1:0"],
        &["stats", "--db", &slash],
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("mancaladb: {f}: is a regular file; expected a directory")
        );
    }
    refuses(&["query", "--db", f, "1 0 0 0 0 0 0 0 0 0 0 0"], want);
    refuses(&["query", "--vu", f, "1 0 0 0 0 0 0 0 0 0 0 0"], want);
    refuses(&["stats", "--db", f], want);
    refuses(&["verify", "--db", f], want);
    refuses(&["known", "--db", f], want);
    refuses(&["census", "--seeds", "3", "--db", f], want);
    refuses(&["serve", "--db", f, "--addr", "127.0.0.1:0"], want);
    refuses(&export_into(f), want);
}

/// `export --format vu` of the shared tables into `out`.
fn export_into(out: &str) -> [&str; 7] {
    [
        "export",
        "--format",
        "vu",
        "--db",
        s(awari_db()),
        "--out",
        out,
    ]
}

#[test]
fn a_link_to_nothing_given_as_the_directory_is_named_as_such() {
    // Writers said "File exists" (creating the directory at the link
    // failed) and readers "levels not found: build them", a build that
    // then failed so.
    let dir = scratch("dangling-dir");
    let link = dir.join("gone");
    std::os::unix::fs::symlink("nowhere", &link).unwrap();
    let want = "gone: is a link to nothing";
    // With a trailing slash (as a shell completes it) or as a parent too.
    for l in [
        s(&link).to_string(),
        format!("{}/", s(&link)),
        format!("{}/sub", s(&link)),
    ] {
        refuses(&["build", "--max-seeds", "2", "--db", &l], want);
        refuses(&["stats", "--db", &l], want);
        refuses(&export_into(&l), want);
    }
    let l = s(&link);
    refuses(&["stats", "--vu", l], want);
    refuses(&["known", "--db", l], want);
    refuses(&["query", "--db", l, "1 0 0 0 0 0 0 0 0 0 0 0"], want);
    refuses(&["census", "--seeds", "3", "--db", l], want);
    // Level 0 in the VU layout: one position, value 0.
    let vu = dir.join("vu");
    std::fs::create_dir(&vu).unwrap();
    std::fs::write(vu.join("scores.0"), [0u8]).unwrap();
    refuses(&["import", "--vu", s(&vu), "--db", l], want);
}

#[test]
fn a_damaged_lower_level_stops_a_build_before_anything_is_solved() {
    let dir = built("damaged-lower", Rules::Awari, 6);
    let five = dir.join("awari-05.mdb");
    crate::common::cut_short(&five, 10);
    // Level 7 reads level 5 (a capture of 2); level 5 is not asked for, so
    // it is not rebuilt, and nothing is solved on it.
    refuses(
        &["build", "--levels", "7..8", "--db", s(&dir)],
        "awari-05.mdb: corrupt table",
    );
    assert!(!dir.join("awari-07.mdb").exists());
    // Asked for, it is rebuilt first.
    succeeds(&["build", "--levels", "5,7..8", "--db", s(&dir)]);
    crate::common::assert_committed(&dir, 8);
}

#[test]
fn a_named_pipe_in_place_of_a_table_is_refused_not_waited_on() {
    let dir = built("named-pipe-table", Rules::Awari, 5);
    let path = dir.join("awari-05.mdb");
    std::fs::remove_file(&path).unwrap();
    let made = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(made.success());
    // Opening a pipe waits for a writer: every reader used to hang here.
    let (done, finished) = std::sync::mpsc::channel();
    let db = s(&dir).to_string();
    std::thread::spawn(move || {
        let out = run(&["query", "--db", &db, "1 1 1 1 1 0 0 0 0 0 0 0"]);
        let _ = done.send(out);
    });
    let out = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("query waited on the pipe");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("awari-05.mdb: is a named pipe; expected a level's file"),
        "{err}"
    );
}

#[test]
fn census_lists_replace_only_regular_files_outside_the_census_directory() {
    let dir = scratch("census-out");
    let db = dir.join("census");
    let census = |lists: &[&str]| -> Vec<String> {
        let head = ["census", "--seeds", "3", "--db", s(&db)];
        head.iter().chain(lists).map(|a| a.to_string()).collect()
    };
    let run_census =
        |lists: &[&str]| run(&census(lists).iter().map(String::as_str).collect::<Vec<_>>());
    let refused = |lists: &[&str], want: &str| {
        refuses(
            &census(lists).iter().map(String::as_str).collect::<Vec<_>>(),
            want,
        )
    };
    let list = dir.join("list.json");
    assert_success(&run_census(&["--out", s(&list)]));
    let store = db.join("omweso-census.jsonl");
    let saved = std::fs::read(&store).unwrap();
    // Its own results file, even by another name for the directory (the
    // list would replace every saved row), and the cycles it keeps for a
    // row.
    let other_name = dir.join(".").join("census").join("omweso-census.jsonl");
    let kept = db.join("omweso-cycles.k3.b1000000000.jsonl");
    let inside = "own files";
    refused(&["--out", s(&store)], inside);
    refused(&["--out", s(&other_name)], inside);
    refused(&["--cycles", s(&kept)], inside);
    assert_eq!(std::fs::read(&store).unwrap(), saved);
    // Nor the directory's other files: a table there (the default db/
    // holds them), a file under raw/, a record, a hidden file, or a link
    // from outside to a table there.
    let table = db.join("awari-05.mdb");
    std::fs::write(&table, b"MDB table bytes").unwrap();
    std::fs::create_dir_all(db.join("raw")).unwrap();
    let raw = db.join("raw").join("scores.5");
    std::fs::write(&raw, b"raw bytes").unwrap();
    let into = dir.join("into-db.json");
    std::os::unix::fs::symlink(&table, &into).unwrap();
    let records = db.join("verified.tsv");
    for target in [&table, &raw, &records, &db.join(".lock"), &into] {
        refused(&["--out", s(target)], inside);
        refused(&["--cycles", s(target)], inside);
    }
    assert_eq!(std::fs::read(&table).unwrap(), b"MDB table bytes");
    assert_eq!(std::fs::read(&raw).unwrap(), b"raw bytes");
    assert!(!records.exists());
    // A list of another name at its top is the user's: `--db .
    // --cycles atlas-3.jsonl` (BENCHMARKS) writes there.
    let atlas = db.join("atlas-3.jsonl");
    assert_success(&run_census(&["--cycles", s(&atlas)]));
    assert!(
        atlas.is_file(),
        "no atlas (k = 3 has no cycles: an empty one)"
    );
    // Nor two lists into one file.
    let both = dir.join("both.json");
    refused(
        &["--out", s(&both), "--cycles", s(&both)],
        "two lists asked for in one file",
    );
    // A named pipe or a device is not swapped for a file.
    let pipe = dir.join("pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .unwrap()
            .success()
    );
    refused(&["--out", s(&pipe)], "is a named pipe");
    refused(&["--out", "/dev/null"], "is a device");
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&pipe)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    // Nor the file the command's own output goes to, by a link
    // (`/dev/stdout`) or by name: the rename would drop what is there.
    let log = dir.join("census.log");
    std::fs::write(&log, "earlier lines\n").unwrap();
    for out in ["/dev/stdout", s(&log)] {
        let printed = File::options().append(true).open(&log).unwrap();
        let run = bin()
            .args(census(&["--out", out]))
            .stdout(printed)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{out}: {err}");
        assert!(
            err.contains("is where this command's own output goes"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "earlier lines\n");
    }
    // A link to a file is written through: the link stays a link.
    let target = dir.join("target.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    assert_success(&run_census(&["--out", s(&link)]));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read(&target).unwrap(),
        std::fs::read(dir.join("list.json")).unwrap()
    );
}

#[test]
fn a_second_writer_stops_at_once_or_waits() {
    let dir = scratch("locked");
    awari_db(); // built first (it takes seconds): the exports below read it
    let mut first = bin()
        .args(["build", "--max-seeds", "17", "--db", s(&dir)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the first build holds the lock and is solving.
    let start = Instant::now();
    while !dir.join("awari-05.mdb").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "first build stalled"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = run(&["build", "--max-seeds", "17", "--db", s(&dir)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("locked by another writer: process") && err.contains("--wait"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // Readers never block.
    succeeds(&["query", "--db", s(&dir), "1 0 0 0 0 0 0 0 0 0 0 0"]);
    // Nor does an export write into it meanwhile: it is told to run
    // again, and no `--wait`, which it does not have.
    let out = run(&export_into(s(&dir)));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.trim_end().ends_with("then run this again") && !err.contains("--wait"),
        "{err}"
    );
    // --wait waits for the first, then finds everything built.
    let text = succeeds(&["build", "--max-seeds", "17", "--db", s(&dir), "--wait"]);
    assert!(first.wait().unwrap().success());
    assert_eq!(text.matches("already built").count(), 18, "{text}");
}

#[test]
fn paths_that_are_not_utf8_are_written_and_locked_like_any_other() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    // Every writer takes a lock whose text names the command line.
    let dir = scratch("not-utf8");
    let db = dir.join(OsStr::from_bytes(b"db\xff"));
    let vu = dir.join(OsStr::from_bytes(b"vu\xff"));
    let again = dir.join(OsStr::from_bytes(b"again\xff"));
    let commands: [&[&OsStr]; 4] = [
        &[
            "build".as_ref(),
            "--max-seeds".as_ref(),
            "6".as_ref(),
            "--db".as_ref(),
            db.as_ref(),
        ],
        &[
            "export".as_ref(),
            "--format".as_ref(),
            "vu".as_ref(),
            "--db".as_ref(),
            db.as_ref(),
            "--out".as_ref(),
            vu.as_ref(),
        ],
        &[
            "import".as_ref(),
            "--vu".as_ref(),
            vu.as_ref(),
            "--db".as_ref(),
            again.as_ref(),
        ],
        &[
            "verify".as_ref(),
            "--db".as_ref(),
            again.as_ref(),
            "--seeds".as_ref(),
            "6".as_ref(),
        ],
    ];
    for args in commands {
        let out = bin().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_committed(&db, 6);
    assert_committed(&again, 6);
}

/// Under a raw-cache budget, `import` leaves the raw copies a build of the
/// same levels leaves: those of the largest levels within the budget (of
/// levels 0..=10, the 9 and 10 that fit).
#[test]
fn import_under_a_budget_keeps_the_raw_copies_a_build_keeps() {
    use mancaladb::build::Build;
    use mancaladb::convert::{export_vu, import_vu};
    let dir = scratch("import-budget");
    let vu = dir.join("vu");
    let levels: Vec<usize> = (0..=10).collect();
    export_vu(
        &Db::new(awari_db()),
        Rules::Awari,
        &vu,
        Some(levels.clone()),
    )
    .unwrap();
    let budget = Some(level_size(10) + level_size(9));
    let raw_levels = |db: &Db| -> Vec<usize> {
        (0..=48)
            .filter(|&n| db.raw_path(Rules::Awari, n).exists())
            .collect()
    };
    let built = Db::new(dir.join("built")).with_raw_cache(budget);
    Build::new(&built, Rules::Awari, 0..=10).run().unwrap();
    assert_eq!(raw_levels(&built), [9, 10]);
    let imported = Db::new(dir.join("imported")).with_raw_cache(budget);
    let did = import_vu(&imported, Rules::Awari, &vu, None).unwrap();
    assert_eq!(did.written, levels);
    assert_eq!(raw_levels(&imported), [9, 10]);
    assert_committed(imported.dir(), 10);
}

/// `import` writes like `build`: every place refused before anything is
/// written, what a killed import left removed, raw copies within the
/// budget, and no sound table replaced by other values (a damaged one is
/// repaired, one with the same values kept).
#[test]
fn import_checks_every_place_first_and_replaces_only_damaged_tables() {
    let dir = scratch("import-places");
    let vu = dir.join("vu");
    let mut export = export_into(s(&vu)).to_vec();
    export.extend(["--seeds", "0..10"]);
    succeeds(&export);
    let db = dir.join("db");
    let import = |extra: &[&str]| {
        let mut args = vec!["import", "--vu", s(&vu), "--db", s(&db)];
        args.extend_from_slice(extra);
        run(&args)
    };
    let said = |out: Output| stdout_of_success(out).trim_end().to_string();
    // A directory where level 5's table or its temporary file goes.
    for place in ["awari-05.mdb", "awari-05.mdb.tmp"] {
        std::fs::create_dir_all(db.join(place)).unwrap();
        refuses(
            &["import", "--vu", s(&vu), "--db", s(&db), "--seeds", "0..6"],
            place,
        );
        assert!(!db.join("awari-00.mdb").exists(), "{place}");
        std::fs::remove_dir(db.join(place)).unwrap();
    }
    // A raw directory where no file can be created (a link into /proc,
    // which refuses even root): refused before any table is written (a
    // table was written, then its raw copy refused).
    std::fs::create_dir_all(db.join("raw")).unwrap();
    std::os::unix::fs::symlink("/proc", db.join("raw/awari")).unwrap();
    refuses(
        &["import", "--vu", s(&vu), "--db", s(&db), "--seeds", "0..6"],
        "raw/awari: no file can be written in this directory",
    );
    assert!(!db.join("awari-00.mdb").exists());
    std::fs::remove_file(db.join("raw/awari")).unwrap();
    // Levels 0..6 without raw copies; what a killed import left goes.
    std::fs::write(db.join("awari-03.mdb.tmp"), b"half").unwrap();
    assert_eq!(
        said(import(&["--seeds", "0..6", "--raw-cache", "0"])),
        format!("imported levels 0..6 from {} into {}", s(&vu), s(&db))
    );
    assert!(!db.join("awari-03.mdb.tmp").exists());
    assert_eq!(std::fs::read_dir(db.join("raw/awari")).unwrap().count(), 0);
    // Then all of them: levels 0..6 are kept as they are (no raw copies),
    // the rest written with the raw copies a build keeps (every one,
    // within the default budget).
    let all = Encoder::new(10);
    assert_eq!(
        said(import(&[])),
        format!(
            "imported levels 7..10 from {} into {}; levels 0..6 there already with the same values",
            s(&vu),
            s(&db)
        )
    );
    crate::common::assert_committed(&db, 10);
    let raw = |n: usize| std::fs::read(db.join(format!("raw/awari/scores.{n}")));
    for n in 0..=10 {
        match n {
            0..=6 => assert!(raw(n).is_err(), "level {n}"),
            _ => assert_eq!(raw(n).unwrap().len() as u64, all.level_size(n), "level {n}"),
        }
    }
    // The directory's own raw copies, imported: there already, and kept;
    // a damaged table of a level not imported is no concern of the import.
    crate::common::cut_short(&db.join("awari-09.mdb"), 100);
    let own = db.join("raw/awari");
    assert_eq!(
        said(run(&[
            "import",
            "--vu",
            s(&own),
            "--db",
            s(&db),
            "--seeds",
            "7..8"
        ])),
        format!(
            "imported nothing from {} into {}; levels 7..8 there already with the same values",
            s(&own),
            s(&db)
        )
    );
    assert_eq!(raw(7).unwrap().len() as u64, all.level_size(7));
    assert_eq!(
        said(import(&["--seeds", "9"])),
        format!("imported level 9 from {} into {}", s(&vu), s(&db))
    );
    crate::common::assert_committed(&db, 10);
    // Other values in a sound table: refused, the table left as it was.
    let level_4 = all.level_size(4) as usize;
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("scores.4"), vec![0u8; level_4]).unwrap();
    let table = db.join("awari-04.mdb");
    let before = std::fs::read(&table).unwrap();
    refuses(
        &["import", "--vu", s(&other), "--db", s(&db)],
        &format!(
            "{} holds other values than {} (content sha256 ",
            table.display(),
            other.join("scores.4").display()
        ),
    );
    assert_eq!(std::fs::read(&table).unwrap(), before);
    // A damaged one is replaced.
    let mut damaged = before.clone();
    let mid = damaged.len() / 2;
    damaged[mid] ^= 1;
    std::fs::write(&table, damaged).unwrap();
    assert_eq!(
        said(import(&["--seeds", "4"])),
        format!("imported level 4 from {} into {}", s(&vu), s(&db))
    );
    assert_eq!(std::fs::read(&table).unwrap(), before);
    // No such directory to import from, or no such level in it.
    refuses(
        &["import", "--vu", s(&dir.join("nosuch")), "--db", s(&db)],
        "nosuch: no such directory",
    );
    refuses(
        &["import", "--vu", s(&other), "--db", s(&db), "--seeds", "5"],
        "scores.5 not found in",
    );
}

#[test]
fn values_out_of_range_are_refused_on_import_and_by_check_1() {
    let dir = scratch("range");
    let vu = dir.join("vu");
    std::fs::create_dir_all(&vu).unwrap();
    // Level 3 has 364 positions; 127 is no value of a 3-seed game.
    let mut bytes = vec![0u8; 364];
    bytes[100] = 127;
    std::fs::write(vu.join("scores.3"), &bytes).unwrap();
    // Level 2, all draws, is fine: it is not imported either, since the
    // import checks every file before it writes any.
    let level_2 = Encoder::new(3).level_size(2) as usize;
    std::fs::write(vu.join("scores.2"), vec![0u8; level_2]).unwrap();
    refuses(
        &["import", "--vu", s(&vu), "--db", s(&dir.join("db"))],
        "value 127 at index 100 is outside -3..=3",
    );
    assert!(!dir.join("db").join("awari-02.mdb").exists());
    refuses(
        &[
            "import",
            "--vu",
            s(&vu.join("scores.2")),
            "--db",
            s(&dir.join("db")),
        ],
        "scores.2: is a regular file; expected a directory",
    );
    // Read in place, it is refused too: by a query of that position and by
    // the statistics of its level.
    let board = Encoder::new(3).board_at(3, 100).unwrap();
    let pits: Vec<String> = board.pits().iter().map(u8::to_string).collect();
    refuses(
        &["query", "--vu", s(&vu), &pits.join(" ")],
        "value 127 at index 100 is outside -3..=3",
    );
    refuses(
        &["stats", "--vu", s(&vu)],
        "value 127 at index 100 is outside -3..=3",
    );
    // A table written with it (checksums all valid) fails check 1.
    let db = built("range-db", Rules::Awari, 3);
    let mut values = vec![0i8; 364];
    values[100] = 127;
    write_table(
        &db.join("awari-03.mdb"),
        Db::table_id(Rules::Awari, 3),
        &values,
    )
    .unwrap();
    let out = run(&["verify", "--quick", "--db", s(&db), "--seeds", "3"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("value 127 at index 100 is outside -3..=3"),
        "{text}"
    );
    // Nor is it exported: import would refuse the file.
    let out_dir = dir.join("exported");
    refuses(
        &[
            "export",
            "--format",
            "vu",
            "--db",
            s(&db),
            "--seeds",
            "3",
            "--out",
            s(&out_dir),
        ],
        "value 127 at index 100 is outside -3..=3",
    );
    assert!(!out_dir.join("scores.3").exists());
}

#[test]
fn levels_beyond_the_game_are_refused_and_hints_can_be_pasted() {
    refuses(&["verify", "--seeds", "49"], "Oware levels 0..=48");
    refuses(
        &["verify", "--vu", "/tmp", "--seeds", "45..49"],
        "Oware levels 0..=48",
    );
    refuses(
        &["build", "--max-seeds", "49"],
        "level 49: levels go up to 48",
    );
    // Past u64 too, in the same words (as the server says it).
    refuses(
        &["build", "--max-seeds", "99999999999999999999999"],
        "level 99999999999999999999999: levels go up to 48",
    );
    refuses(&["build", "--max-seeds", ""], "give a level 0..=48");
    // A sign is taken, as by the ranges of levels.
    let signed = scratch("max-seeds-signed");
    succeeds(&["build", "--max-seeds", "+2", "--db", s(&signed)]);
    assert!(signed.join("awari-02.mdb").exists() && !signed.join("awari-03.mdb").exists());
    let dir = scratch("with space é");
    let out = run(&["query", "--db", s(&dir), "4 4 4 4 4 0 0 0 0 0 0 0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let quoted = format!("--db '{}'", dir.display());
    assert!(err.contains(&quoted), "{err}");
}

#[test]
fn an_unwritable_directory_fails_before_solving() {
    let dir = scratch("unwritable");
    let file = dir.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let out = run(&["build", "--max-seeds", "12", "--db", s(&file.join("db"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing was solved");
}

/// Places `obstacle` (a directory holding a file) once level 3's solve has
/// begun, past the build's checks of every place it writes.
struct Obstacle(std::path::PathBuf);

impl mancaladb::progress::Observer for Obstacle {
    fn stage(&self, label: &str, _: u64) -> Option<Box<dyn mancaladb::progress::StageSink + '_>> {
        if label == "level 3: values" {
            std::fs::create_dir_all(self.0.join("in-the-way")).unwrap();
        }
        None
    }

    fn notice(&self, _: &mancaladb::progress::Notice) {}
}

/// A level whose table cannot be written once it is solved (the table's
/// temporary name taken: the raw file through which it is written is left;
/// its final name taken: the table's temporary file is left) is an error,
/// and leaves neither file behind, with a raw copy kept or not.
#[test]
fn a_failed_level_leaves_no_partial_file() {
    use mancaladb::build::Build;
    use mancaladb::progress::Progress;
    let dir = built("partial", Rules::Awari, 2);
    let raw = dir.join("raw/awari");
    for obstacle in ["awari-03.mdb.tmp", "awari-03.mdb"] {
        for raw_cache in [None, Some(0)] {
            let db = Db::new(&dir).with_raw_cache(raw_cache);
            let observer = Obstacle(dir.join(obstacle));
            let built = Build::new(&db, Rules::Awari, 0..=3)
                .progress(Progress::to(&observer))
                .run();
            let e = built.expect_err("level 3 was not written");
            assert!(e.to_string().contains(obstacle), "{e}");
            let left: Vec<_> = std::fs::read_dir(&raw)
                .unwrap()
                .chain(std::fs::read_dir(&dir).unwrap())
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.ends_with(".part") || n.ends_with(".tmp") && n != obstacle)
                .collect();
            assert!(left.is_empty(), "{obstacle}, {raw_cache:?}: {left:?}");
            std::fs::remove_dir_all(dir.join(obstacle)).unwrap();
        }
    }
    // A leftover of a killed build is removed by the next one.
    std::fs::write(raw.join("scores.3.part"), b"partial").unwrap();
    std::fs::write(dir.join("awari-03.mdb.tmp"), b"partial").unwrap();
    succeeds(&["build", "--max-seeds", "3", "--db", s(&dir)]);
    assert!(!raw.join("scores.3.part").exists());
    assert!(!dir.join("awari-03.mdb.tmp").exists());
}

#[test]
fn a_bad_line_in_verified_tsv_drops_no_record() {
    let dir = built("records", Rules::Awari, 5);
    succeeds(&["verify", "--db", s(&dir), "--seeds", "0..4"]);
    let path = dir.join("verified.tsv");
    let mut text = std::fs::read(&path).unwrap();
    text.extend_from_slice(b"awari\t9\t\xff\xfe not a record\n");
    std::fs::write(&path, &text).unwrap();
    succeeds(&["verify", "--db", s(&dir), "--seeds", "5"]);
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(after.lines().count(), 6, "{after}");
    let db = Db::new(&dir);
    assert!((0..=5).all(|n| db.is_verified(Rules::Awari, n).unwrap()));
}

/// The verdicts of many levels at once (the server's `/api/levels` asks
/// for all, each table opened once) are each level's own, as one at a
/// time: a damaged level is its own error, the levels that read it are not
/// verified, and the others still are.
#[test]
fn the_verdicts_of_many_levels_at_once_are_each_levels_own() {
    let dir = built("verified-each", Rules::Awari, 7);
    succeeds(&["verify", "--db", s(&dir), "--seeds", "0..7"]);
    let db = Db::new(&dir);
    let all: Vec<usize> = (0..=7).collect();
    let at_once = || -> Vec<String> {
        let each = db.verified_each(Rules::Awari, &all).unwrap();
        each.iter().map(|v| format!("{v:?}")).collect()
    };
    assert!(at_once().iter().all(|v| v == "Ok(true)"), "{:?}", at_once());
    crate::common::cut_short(&dir.join("awari-03.mdb"), 10);
    let one_by_one: Vec<String> = all
        .iter()
        .map(|&n| format!("{:?}", db.is_verified(Rules::Awari, n)))
        .collect();
    assert_eq!(at_once(), one_by_one);
    for (n, v) in at_once().iter().enumerate() {
        match n {
            3 => assert!(v.starts_with("Err(") && v.contains("awari-03.mdb"), "{v}"),
            _ if reads_level(n, 3) => assert_eq!(v, "Ok(false)", "level {n}"),
            _ => assert_eq!(v, "Ok(true)", "level {n}"),
        }
    }
    assert!((4..=7).any(|n| reads_level(n, 3)) && !reads_level(4, 3));
    // Asked after a level that reads it, level 3 is still its own error.
    let down: Vec<usize> = all.iter().rev().copied().collect();
    let each = db.verified_each(Rules::Awari, &down).unwrap();
    let each: Vec<String> = each.iter().rev().map(|v| format!("{v:?}")).collect();
    assert_eq!(each, one_by_one);
}

/// A level's record names the lower levels it was checked against (a
/// researcher's review): replaced by other values, a level it reads takes
/// the record's force away, also from the queries that rest on it, and
/// put back, gives it back. Records of the three fields written before
/// count for nothing, and a `verify` of another level keeps them (the
/// binaries that wrote them still read them; it used to drop them all),
/// while one of their own level replaces them.
#[test]
fn a_verified_level_is_verified_only_over_the_lower_levels_checked() {
    let dir = built("verified-lower", Rules::Awari, 6);
    succeeds(&["verify", "--db", s(&dir), "--seeds", "0..6"]);
    let db = Db::new(&dir);
    let verified = |n| db.is_verified(Rules::Awari, n).unwrap();
    assert!((0..=6).all(verified));
    let start = [
        "query",
        "--db",
        s(&dir),
        "--json",
        "1 1 1 0 0 1 0 1 1 0 0 0",
    ];
    let rests_on_verified = || {
        let json: serde_json::Value = serde_json::from_slice(&run(&start).stdout).unwrap();
        assert_eq!(
            json["levels"]["rests_on"],
            serde_json::json!([0, 1, 2, 3, 4, 6])
        );
        json["levels"]["verified"].as_bool().unwrap()
    };
    assert!(rests_on_verified());
    // Level 4 with other values (its checksums valid): levels 4 and 6,
    // which reads it, are no longer verified; level 5 does not read it.
    let table = dir.join("awari-04.mdb");
    let kept = std::fs::read(&table).unwrap();
    let values: Vec<i8> = (0..level_size(4)).map(|i| (i % 3) as i8 - 1).collect();
    write_table(&table, Db::table_id(Rules::Awari, 4), &values).unwrap();
    let now: Vec<bool> = (0..=6).map(verified).collect();
    assert_eq!(now, [true, true, true, true, false, true, false]);
    assert!(!rests_on_verified());
    std::fs::write(&table, &kept).unwrap();
    assert!((0..=6).all(verified));
    assert!(rests_on_verified());
    // A record of three fields (level, content) no longer counts.
    let path = dir.join("verified.tsv");
    let old: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once('\t').unwrap().0.to_string() + "\n")
        .collect();
    std::fs::write(&path, &old).unwrap();
    assert!((0..=6).all(|n| !verified(n)));
    succeeds(&["verify", "--db", s(&dir), "--seeds", "5"]);
    let now: Vec<bool> = (0..=6).map(verified).collect();
    assert_eq!(now, [false, false, false, false, false, true, false]);
    let kept: String = old
        .lines()
        .filter(|l| !l.starts_with("awari\t5\t"))
        .map(|l| l.to_string() + "\n")
        .collect();
    let text = std::fs::read_to_string(&path).unwrap();
    let (fives, others): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|l| l.starts_with("awari\t5\t"));
    assert_eq!(fives.len(), 1, "{text}");
    assert_eq!(fives[0].split('\t').count(), 4, "{text}");
    assert_eq!(others.join("\n") + "\n", kept, "{text}");
}

#[test]
fn thread_counts_are_bounded() {
    // Refused before any work: nothing is written.
    let dir = scratch("threads");
    refuses(
        &["build", "--threads", "100000", "--db", s(&dir)],
        "4 per core",
    );
    refuses(&["build", "--threads", "0", "--db", s(&dir)], "at least 1");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // The bound itself, 4 per core, is taken.
    let cores = std::thread::available_parallelism().unwrap().get();
    let most = (4 * cores).to_string();
    succeeds(&[
        "build",
        "--max-seeds",
        "2",
        "--threads",
        &most,
        "--db",
        s(&dir),
    ]);
    assert_committed(&dir, 2);
}

#[test]
fn one_census_at_a_time_writes_the_results_file() {
    let dir = scratch("census-lock");
    let held = File::create(dir.join("omweso-census.lock")).unwrap();
    held.lock().unwrap();
    let out = run(&["census", "--seeds", "6", "--db", s(&dir)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // Its remedy is the census's own: it has no --wait, which a table
    // directory's lock suggests.
    assert!(
        err.contains("omweso-census.lock: locked by another writer")
            && err
                .trim_end()
                .ends_with(": wait for it to finish, then run the census again")
            && !err.contains("--wait"),
        "{err}"
    );
    drop(held);
    succeeds(&["census", "--seeds", "6", "--db", s(&dir)]);
}

/// `build --max-seeds 48` on a machine without the memory for level 48
/// stops at once, naming the level, what it needs and what fits; it does
/// not build levels 0..46 for hours first.
#[test]
fn a_build_beyond_the_machines_memory_stops_before_it_starts() {
    let need = 1.25 * mancaladb::oware::level_size(48) as f64;
    let limit = mancaladb::build::memory_limit().expect("Linux says MemTotal");
    if need <= limit.bytes as f64 {
        // The build would start, for hours; a machine this size is not
        // what this test is about.
        return;
    }
    let dir = scratch("beyond-memory");
    let out = run(&["build", "--max-seeds", "48", "--db", s(&dir)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("level 48 needs about 254.6 GB of working memory") && err.contains("fit here"),
        "{err}"
    );
    // The remedy is the command line's own to say.
    assert!(
        err.trim_end()
            .ends_with(": `mancaladb known` says what each level needs"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.join("awari-00.mdb").exists(), "nothing was built");
}

#[test]
fn a_table_holding_values_out_of_range_is_refused_by_probes_and_loads() {
    use mancaladb::Error;
    use mancaladb::error::Corruption;
    use mancaladb::source::{Source, Values};
    // Level 5 written with -128 everywhere, the table and its raw copy:
    // every checksum holds, and no 5-seed game has that value.
    let db = built("range-probe-db", Rules::Awari, 5);
    let store = Db::new(&db);
    let bad = vec![-128i8; Encoder::new(5).level_size(5) as usize];
    write_table(
        &store.table_path(Rules::Awari, 5),
        Db::table_id(Rules::Awari, 5),
        &bad,
    )
    .unwrap();
    std::fs::write(
        store.raw_path(Rules::Awari, 5),
        mancaladb::table::as_bytes(&bad),
    )
    .unwrap();
    // Named as the file the value was read from: the table, or its raw
    // copy (which, damaged after it was checked, is what to remove).
    let out_of_range = |r: mancaladb::error::Result<i8>, file: &str| match r {
        Err(Error::Corrupt {
            path,
            kind:
                Corruption::ValueRange {
                    index: 7,
                    value: -128,
                    seeds: 5,
                },
        }) => path.ends_with(file),
        _ => false,
    };
    let board = Encoder::new(5).board_at(5, 7).unwrap();
    let source = Source::tables(&db, Rules::Awari);
    let Source::Tables(tables) = &source else {
        unreachable!()
    };
    // From a decompressed block, then from the raw copy (which matches
    // the table's content checksum, so probes read it).
    assert!(tables.level(5).unwrap().raw().is_none());
    assert!(out_of_range(source.value(&board), "awari-05.mdb"));
    assert!(tables.level(5).unwrap().check_raw());
    assert!(out_of_range(source.value(&board), "raw/awari/scores.5"));
    // Many at once, and the whole level (Python's `level()`).
    let mut out = Vec::new();
    let e = tables.values(&[board], &mut out).unwrap_err();
    assert!(out_of_range(Err(e), "raw/awari/scores.5"));
    let e = source.load(5).err().unwrap().to_string();
    assert!(
        e.ends_with("scores.5: corrupt table: value -128 at index 0 is outside -5..=5"),
        "{e}"
    );
    // A stored board of level 5, and a board valued from its moves (the
    // reviewer's: -126 came out, its true value is -3): exit 2, never a
    // value.
    let pits: Vec<String> = board.pits().iter().map(u8::to_string).collect();
    refuses(
        &["query", "--db", s(&db), &pits.join(" ")],
        "value -128 at index 7 is outside -5..=5",
    );
    refuses(
        &["query", "--json", "--db", s(&db), "0 0 0 0 0 1 1 1 1 1 1 1"],
        "is outside -5..=5",
    );
}

#[test]
fn links_in_place_of_temporary_and_lock_files_carry_no_write_elsewhere() {
    use std::os::unix::fs::symlink;
    let dir = scratch("tmp-links");
    let victim = dir.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    // The reviewer's: a link where export writes scores.3 first.
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    symlink("../victim", out.join("scores.3.tmp")).unwrap();
    succeeds(&[
        "export",
        "--format",
        "vu",
        "--db",
        s(awari_db()),
        "--seeds",
        "3",
        "--out",
        s(&out),
    ]);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(std::fs::read(out.join("scores.3")).unwrap().len(), 364);
    assert!(std::fs::symlink_metadata(out.join("scores.3.tmp")).is_err());
    // A link as the directory's lock: refused, before anything is built.
    let db = dir.join("db");
    std::fs::create_dir(&db).unwrap();
    symlink("../victim", db.join(".lock")).unwrap();
    refuses(
        &["build", "--max-seeds", "2", "--db", s(&db)],
        ".lock: is a symbolic link; a lock file must be a regular file (remove it)",
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(!db.join("awari-00.mdb").exists());
}

#[test]
fn a_directory_where_a_table_is_written_first_stops_a_build_before_it_solves() {
    let db = scratch("tmp-dir");
    std::fs::create_dir(db.join("awari-03.mdb.tmp")).unwrap();
    refuses(
        &["build", "--max-seeds", "3", "--db", s(&db)],
        "awari-03.mdb.tmp: is a directory, where a temporary file is to be written; remove it",
    );
    assert!(!db.join("awari-00.mdb").exists());
}

/// Whatever would stop a level after it is solved stops the build before:
/// a directory in a higher level's table place (taken for a built level, it
/// let a build past the memory check and past the levels below it), a file
/// where `raw/` or a level's work directory goes, a directory where a kept
/// raw copy goes. And a level rebuilt over a damaged table whose lower level
/// is gone names that level, as a reader does, not the raw copy's path.
#[test]
fn what_would_stop_a_level_after_solving_stops_the_build_before() {
    let db = built("stop-before", Rules::Awari, 6);
    let table7 = db.join("awari-07.mdb");
    for (place, is_dir, want) in [
        (
            "awari-08.mdb",
            true,
            "awari-08.mdb: is a directory; expected a level's file",
        ),
        (
            "raw/awari/scores.7.work",
            false,
            "scores.7.work: is a regular file; expected a directory",
        ),
        (
            "raw/awari/scores.7",
            true,
            "scores.7: is a directory; only a regular file is written here",
        ),
    ] {
        let path = db.join(place);
        match is_dir {
            true => std::fs::create_dir(&path).unwrap(),
            false => std::fs::write(&path, "").unwrap(),
        }
        refuses(&["build", "--max-seeds", "8", "--db", s(&db)], want);
        assert!(!table7.exists(), "{place}: level 7 was solved");
        match is_dir {
            true => std::fs::remove_dir(&path).unwrap(),
            false => std::fs::remove_file(&path).unwrap(),
        }
    }
    // A directory in the place of a level the build does not build stops
    // nothing (the raw cache asks whether level 11 is there, after 8).
    std::fs::create_dir(db.join("awari-11.mdb")).unwrap();
    succeeds(&["build", "--max-seeds", "8", "--db", s(&db)]);
    let files = scratch("stop-before-raw");
    std::fs::write(files.join("raw"), "").unwrap();
    refuses(
        &["build", "--max-seeds", "2", "--db", s(&files)],
        "raw: is a regular file; expected a directory",
    );

    // Level 6 reads level 4, whose table and raw copy are gone.
    std::fs::remove_file(db.join("awari-04.mdb")).unwrap();
    std::fs::remove_file(db.join("raw/awari/scores.4")).unwrap();
    crate::common::cut_short(&db.join("awari-06.mdb"), 10);
    let out = run(&["build", "--levels", "6", "--db", s(&db)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("level 4 (awari) not found"), "{err}");
}

#[test]
fn a_table_that_cannot_be_looked_at_is_an_error_not_a_level_left_out() {
    // A link to itself in level 3's place: looking at it fails (ELOOP).
    // verify, stats and known skipped the level and exited 0. So they did
    // with a link to nothing (a table linked from elsewhere whose target
    // went), taken as absent.
    let db = built("unstatable-db", Rules::Awari, 4);
    let table = db.join("awari-03.mdb");
    let out = db.join("out");
    for (target, want) in [
        (
            "awari-03.mdb",
            "awari-03.mdb: Too many levels of symbolic links",
        ),
        (
            "elsewhere/awari-03.mdb",
            "awari-03.mdb: is a link to nothing",
        ),
    ] {
        std::fs::remove_file(&table).unwrap();
        std::os::unix::fs::symlink(target, &table).unwrap();
        refuses(&["verify", "--quick", "--db", s(&db)], want);
        // A run that does not read the level does not look at it.
        succeeds(&["verify", "--quick", "--seeds", "0..2", "--db", s(&db)]);
        refuses(&["stats", "--db", s(&db)], want);
        refuses(&["known", "--db", s(&db)], want);
        refuses(
            &["export", "--format", "vu", "--db", s(&db), "--out", s(&out)],
            want,
        );
        refuses(&["build", "--max-seeds", "4", "--db", s(&db)], want);
        let e = Db::new(&db).levels(Rules::Awari).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    // So is one in a VU directory, in place of a scores.N file.
    let vu = db.join("vu");
    std::fs::create_dir(&vu).unwrap();
    std::os::unix::fs::symlink("elsewhere/scores.2", vu.join("scores.2")).unwrap();
    refuses(&["stats", "--vu", s(&vu)], "scores.2: is a link to nothing");
}

#[test]
fn record_files_that_are_not_regular_files_are_refused_not_waited_on() {
    // A named pipe as verified.tsv or build-log.tsv: known, query and
    // build used to wait for a writer for ever.
    let db = built("record-pipes", Rules::Awari, 3);
    let pipe = |name: &str| {
        let path = db.join(name);
        let _ = std::fs::remove_file(&path);
        assert!(
            Command::new("mkfifo")
                .arg(&path)
                .status()
                .unwrap()
                .success()
        );
    };
    pipe("verified.tsv");
    pipe("build-log.tsv");
    let (done, finished) = std::sync::mpsc::channel();
    let dir = s(&db).to_string();
    std::thread::spawn(move || {
        let known = run(&["known", "--db", &dir]);
        let query = run(&["query", "--db", &dir, "1 1 1 0 0 0 0 0 0 0 0 0"]);
        let _ = done.send((known, query));
    });
    let (known, query) = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("a reader waited on the pipe");
    // known reads the log for its time estimates only (which it then
    // leaves out); query needs the records, and says why it cannot read
    // them.
    let err = String::from_utf8_lossy(&known.stderr);
    assert_eq!(known.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&known.stdout).contains("build them"));
    let err = String::from_utf8_lossy(&query.stderr);
    assert_eq!(query.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "mancaladb: {}: is a named pipe; expected a regular file",
            db.join("verified.tsv").display()
        )
    );
    // A build, which appends to the log, says so too, and does not wait.
    std::fs::remove_file(db.join("verified.tsv")).unwrap();
    std::fs::remove_file(db.join("awari-03.mdb")).unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let dir = s(&db).to_string();
    std::thread::spawn(move || {
        let _ = done.send(run(&["build", "--max-seeds", "3", "--db", &dir]));
    });
    let out = finished
        .recv_timeout(Duration::from_secs(60))
        .expect("build waited on the pipe");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("build-log.tsv: is a named pipe; expected a regular file"),
        "{err}"
    );
}

#[test]
fn record_files_are_not_appended_to_through_links() {
    // build-log.tsv as a link: the build's report line went to the link's
    // target. Refused now, the target untouched; read through a link, as
    // verified.tsv is by query, it is only read.
    let dir = scratch("record-links");
    let db = dir.join("db");
    std::fs::create_dir(&db).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink("../victim", db.join("build-log.tsv")).unwrap();
    refuses(
        &["build", "--max-seeds", "2", "--db", s(&db)],
        "build-log.tsv: is a symbolic link; expected a regular file",
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(!db.join("awari-00.mdb").exists(), "refused after solving");
}

#[test]
fn export_from_a_file_given_as_the_directory_names_it_as_such() {
    let dir = scratch("export-file-db");
    let file = dir.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    refuses(
        &[
            "export",
            "--format",
            "vu",
            "--db",
            s(&file),
            "--out",
            s(&dir.join("out")),
        ],
        "not-a-dir: is a regular file; expected a directory",
    );
}

#[test]
fn export_refuses_what_it_can_find_wrong_before_it_writes_any_level() {
    // A directory where a file goes, or a table whose file checksum fails,
    // was found only at its level: the levels before it were written.
    let db = built("export-before", Rules::Awari, 5);
    let out = db.join("vu");
    let export = ["export", "--format", "vu", "--db", s(&db), "--out", s(&out)];
    for (place, want) in [
        (
            "scores.4",
            "scores.4: is a directory; only a regular file is written here",
        ),
        (
            "scores.4.tmp",
            "scores.4.tmp: is a directory, where a temporary file is to be written",
        ),
    ] {
        std::fs::create_dir_all(out.join(place)).unwrap();
        refuses(&export, want);
        std::fs::remove_dir(out.join(place)).unwrap();
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    }
    // The last byte of level 4's trailer: its values still read, but
    // export copies only levels that check whole.
    let table = db.join("awari-04.mdb");
    let mut bytes = std::fs::read(&table).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&table, &bytes).unwrap();
    let want = "awari-04.mdb: corrupt table: file checksum mismatch";
    refuses(&export, want);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    // Nor is an output directory made for a refused export.
    std::fs::remove_dir(&out).unwrap();
    refuses(&export, want);
    assert!(!out.exists());
}

#[test]
fn export_removes_what_a_killed_export_left() {
    // A killed export left `scores.N.tmp`, as large as its level, for as
    // long as no export of level N into the same directory came.
    let db = built("export-leftovers", Rules::Awari, 3);
    let out = db.join("vu");
    std::fs::create_dir_all(&out).unwrap();
    for name in ["scores.16.tmp", "scores.x.tmp", "notes.tmp", "scores.16"] {
        std::fs::write(out.join(name), b"left").unwrap();
    }
    succeeds(&["export", "--format", "vu", "--db", s(&db), "--out", s(&out)]);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let want = [
        ".lock",
        "notes.tmp",
        "scores.0",
        "scores.1",
        "scores.16",
        "scores.2",
        "scores.3",
        "scores.x.tmp",
    ];
    assert_eq!(names, want);
}

#[test]
fn known_opens_every_level_it_counts_as_present() {
    // Level 11 is neither read nor rested on by the 12-seed start, but
    // `known` counts it as present for the 24-seed game's plan: damaged,
    // or a directory in its place, it was counted, exit 0, and the plan
    // printed then failed on it.
    let db = built("known-opens-all", Rules::Awari, 12);
    let table = db.join("awari-11.mdb");
    let bytes = std::fs::read(&table).unwrap();
    crate::common::cut_short(&table, 10);
    refuses(&["known", "--db", s(&db)], "awari-11.mdb: corrupt table");
    std::fs::remove_file(&table).unwrap();
    std::fs::create_dir(&table).unwrap();
    refuses(&["known", "--db", s(&db)], "awari-11.mdb: is a directory");
    std::fs::remove_dir(&table).unwrap();
    std::fs::write(&table, bytes).unwrap();
    succeeds(&["known", "--db", s(&db)]);
}

#[test]
fn a_level_an_answer_rests_on_is_opened_not_taken_for_unverified() {
    // The 12-seed start reads levels 10 and 12 but rests on 0..10 and 12;
    // `known` and `query` say whether all of those are verified, and took a
    // damaged file or a directory at level 5 for "not verified", exit 0.
    let db = built("rests-on-damaged", Rules::Awari, 12);
    let start = "1 1 1 1 1 1 1 1 1 1 1 1";
    let vu = db.join("vu");
    succeeds(&["export", "--format", "vu", "--db", s(&db), "--out", s(&vu)]);
    for (name, want) in [
        ("awari-05.mdb", "awari-05.mdb: corrupt table"),
        ("vu/scores.5", "scores.5"),
    ] {
        let path = db.join(name);
        crate::common::cut_short(&path, 10);
        let source = if name.starts_with("vu") {
            "--vu"
        } else {
            "--db"
        };
        let dir = if name.starts_with("vu") {
            s(&vu)
        } else {
            s(&db)
        };
        refuses(&["known", source, dir], want);
        refuses(&["query", source, dir, start], want);
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        refuses(&["known", source, dir], "is a directory");
        refuses(&["query", source, dir, start], "is a directory");
    }
}

/// The rate `known` quotes is that of the largest level's build line:
/// lines of a time that is not a positive number (infinite, NaN, negative,
/// 0), of a position count that is no level's, of a level past the game
/// or of a resumed level are passed over.
#[test]
fn the_rate_known_quotes_passes_over_lines_that_are_not_builds() {
    // `known` quoted "about inf days at the 0.0 M positions/s" from a line
    // with an infinite time, and absurd rates from position counts that
    // are no level's.
    let dir = scratch("build-log-lines");
    let twelve = mancaladb::oware::level_size(12);
    let thirteen = mancaladb::oware::level_size(13);
    // The build's line first: of the lines of the largest level, the last
    // one taken would give the rate, so each passed over comes after it.
    let lines = [
        format!("awari\t12\t{twelve}\t2"),
        format!("awari\t12\t{twelve}\tinf"),
        format!("awari\t12\t{twelve}\tNaN"),
        format!("awari\t12\t{twelve}\t-1"),
        "awari\t40\t1339702\t1e-300".to_string(),
        "awari\t13\t99999999999999999999\t1".to_string(),
        "awari\t49\t1\t1".to_string(),
        // A level 13 that resumed from a checkpoint: its time is the rest.
        format!("awari\t13\t{thirteen}\t0.5\t2\t1\t0\t0\t0\t0\t1"),
        // A time of 0, not a positive number: a rate of infinity.
        format!("awari\t13\t{thirteen}\t0"),
    ];
    std::fs::write(dir.join("build-log.tsv"), lines.join("\n") + "\n").unwrap();
    assert_eq!(Db::new(&dir).measured_rate(), Some(twelve as f64 / 2.0));
}

/// A process that cannot start threads (here: a stack no machine has, as
/// a limit on its threads would) is told so in one line, exit 2, by every
/// command that works with them; rayon, starting its threads on first use,
/// used to panic. The commands that start none still answer.
#[test]
fn a_process_that_cannot_start_threads_is_told_so() {
    let db = s(awari_db());
    let out_dir = scratch("no-threads");
    let census = out_dir.join("census");
    let vu = out_dir.join("vu");
    let with_no_threads = |args: &[&str]| {
        bin()
            .args(args)
            .env("RUST_MIN_STACK", (1u64 << 60).to_string())
            .output()
            .unwrap()
    };
    let cases: [&[&str]; 6] = [
        &["build", "--max-seeds", "3", "--db", s(&out_dir)],
        &[
            "build",
            "--threads",
            "1",
            "--max-seeds",
            "3",
            "--db",
            s(&out_dir),
        ],
        &["verify", "--seeds", "3", "--db", db],
        &["census", "--seeds", "2..3", "--db", s(&census)],
        &["import", "--vu", s(&vu), "--db", s(&out_dir)],
        // Its log's thread, before it serves.
        &["serve", "--db", db, "--port", "0"],
    ];
    std::fs::create_dir_all(&vu).unwrap();
    for args in cases {
        let out = with_no_threads(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("mancaladb: cannot start "),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!out_dir.join("awari-00.mdb").exists());
    let answers: [&[&str]; 3] = [
        &["query", "--db", db, "1 1 1 1 1 2 4 2 3 0 0 0"],
        &["stats", "--db", db],
        &["loops", "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1"],
    ];
    for args in answers {
        assert_success(&with_no_threads(args));
    }
}

/// A limit on the process's address space (`ulimit -v`, as batch
/// schedulers set it) is a memory limit like the machine's: a level past
/// it is refused before anything is built, not aborted part way through.
#[test]
fn a_process_memory_limit_refuses_a_level_past_it() {
    let dir = scratch("ulimit");
    let exe = bin().get_program().to_owned();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 300000 && exec "$0" "$@""#)
        .arg(exe)
        .args(["build", "--max-seeds", "24", "--db", s(&dir)])
        // Few threads, whatever the machine: 64 threads' stacks and heaps
        // would fill the 300 MB before the check.
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("level 24 needs about 478.3 MB of working memory (1.25 bytes per position) and this process's address-space limit (ulimit -v or -d) is 307.2 MB"),
        "{err}"
    );
    assert!(!dir.join("awari-00.mdb").exists());
}

/// What an engine crate written from the docs alone found (thirty-eighth
/// session): library calls on odd requests answer, none panics. (Those
/// that overflowed only where overflow checks are on, `LevelStats::count`
/// and `Needs::of`, have unit tests, which a debug build runs.)
#[test]
fn library_calls_on_odd_requests_answer_without_panicking() {
    use mancaladb::build::Build;
    use mancaladb::probe::BlockCache;
    // A block shorter than the byte asked for is an error, as it is
    // filled (block 1) and once it is cached (block 0).
    let cache = BlockCache::new(0, 0, 0);
    let four = |v: &mut Vec<u8>| {
        v.extend_from_slice(&[1, 2, 3, 4]);
        Ok(())
    };
    assert_eq!(cache.byte(0, 0, 3, four).unwrap(), 4);
    for block in [1, 0] {
        let e = cache.byte(0, block, 10, four).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("byte 10 of block {block} of level 0: the block is shorter")
        );
    }
    // A build of no level touches nothing.
    let dir = scratch("build-nothing").join("not-yet");
    let db = Db::new(&dir);
    assert!(Build::new(&db, Rules::Awari, []).run().unwrap().is_empty());
    assert!(!dir.exists());
}

/// A level past the game asked of a source is a bad request, not a level
/// that is missing (`lower_levels(49)` said level 13 was not found).
#[test]
fn levels_past_the_game_asked_of_a_source_are_bad_requests() {
    use mancaladb::Error;
    use mancaladb::source::Source;
    let source = Source::tables(awari_db(), Rules::Awari);
    for e in [
        source.require_levels(&[3, 49]).unwrap_err(),
        source.require_levels(&[usize::MAX]).unwrap_err(),
        source.lower_levels(49).err().unwrap(),
        source.has_level(49).unwrap_err(),
    ] {
        assert!(
            matches!(&e, Error::Invalid(m) if m.contains("levels go up to 48")),
            "{e}"
        );
    }
    assert!(source.require_levels(&[3, 12]).is_ok());
    assert!(source.lower_levels(12).is_ok());
    assert!(source.has_level(12).unwrap() && !source.has_level(48).unwrap());
}

/// `cmd` with the limit `resource` set to `soft` (and `hard`) in the
/// child, before it runs.
fn limited(
    mut cmd: std::process::Command,
    resource: libc::__rlimit_resource_t,
    soft: u64,
    hard: u64,
) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit is async-signal-safe and touches only `limit`.
    unsafe {
        cmd.pre_exec(move || match libc::setrlimit(resource, &limit) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
    cmd
}

/// The lines of `stderr` that are not progress (one per finished stage).
fn said(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| !l.contains(" done in ") && !l.starts_with("building "))
        .map(str::to_string)
        .collect()
}

/// Memory that cannot be had (a limit on the address space) is one line
/// and exit 2 wherever the request fails, never Rust's abort (exit 134,
/// "memory allocation of 7976228 bytes failed" and a backtrace, in check
/// 3 of `verify` and in `build`). Limits from 60 to 240 MiB, two threads
/// (each thread's stack takes address space: with one per core, a machine
/// of many cores would fail to start them at every limit): some fail
/// early, some late (the allocator's line among them), some pass.
#[test]
fn memory_that_cannot_be_had_is_one_line_and_exit_2() {
    let src = crate::common::built("memory-limit", Rules::Awari, 14);
    let (mut allocator_said, mut passed) = (false, false);
    for mib in [60, 100, 150, 190, 240] {
        // The tables (not their raw copies): levels 0..14 to check, and
        // to build level 15 from.
        let db = scratch(&format!("memory-limit-{mib}"));
        for e in std::fs::read_dir(&src).unwrap().flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), db.join(e.file_name())).unwrap();
            }
        }
        let mut verify = bin();
        verify
            .args(["verify", "--seeds", "14", "--db", s(&db)])
            .env("RAYON_NUM_THREADS", "2");
        let mut build = bin();
        build.args([
            "build",
            "--max-seeds",
            "15",
            "--threads",
            "2",
            "--db",
            s(&db),
        ]);
        for cmd in [verify, build] {
            let bytes = mib << 20;
            let out = limited(cmd, libc::RLIMIT_AS, bytes, bytes)
                .output()
                .unwrap();
            let lines = said(&out.stderr);
            match out.status.code() {
                Some(0) => assert!(lines.is_empty(), "{mib} MiB: {lines:?}"),
                Some(2) => assert_eq!(lines.len(), 1, "{mib} MiB: {lines:?}"),
                _ => panic!("{mib} MiB: {:?}: {lines:?}", out.status),
            }
            passed |= out.status.success();
            allocator_said |= lines
                .iter()
                .any(|l| l.starts_with("mancaladb: out of memory: "));
        }
    }
    assert!(allocator_said && passed, "{allocator_said} {passed}");
}

/// A soft limit on open files set low by hand is raised to the hard one:
/// a build holds a level's seed lists open (one of 20 stopped at level 8,
/// "Too many open files"). A server refuses a hard limit too low to serve,
/// in one line (below 8 it exited so; at 6 and 7 the runtime panicked).
#[test]
fn a_low_limit_on_open_files_is_raised_or_refused_in_one_line() {
    let db = scratch("open-files");
    let mut cmd = bin();
    cmd.args(["build", "--max-seeds", "12", "--db", s(&db)]);
    // Up to 4,096, or the hard limit this test runs under if lower (only
    // root may raise it).
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, nothing else.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
    let hard = now.rlim_max.min(4096);
    let out = limited(cmd, libc::RLIMIT_NOFILE, 20, hard)
        .output()
        .unwrap();
    crate::common::assert_success(&out);
    crate::common::assert_committed(&db, 12);
    for hard in [6, 7, 20] {
        let mut cmd = bin();
        cmd.args(["serve", "--db", s(&db), "--port", "0"]);
        let out = limited(cmd, libc::RLIMIT_NOFILE, hard, hard)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{hard}: {err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "mancaladb: the limit on open files is {hard}: serve needs at least 64 (ulimit -n)"
            ),
        );
    }
}

/// `RAYON_NUM_THREADS`, which the thread pool reads, is held to the cap of
/// `--threads` (at most 4 per core; 100,000 started as many threads).
#[test]
fn rayon_num_threads_is_held_to_the_cap_of_threads() {
    let db = crate::common::awari_db();
    let cores = std::thread::available_parallelism().unwrap().get();
    let many = (4 * cores + 1).to_string();
    let out = bin()
        .args(["verify", "--checks", "1", "--seeds", "3", "--db", s(db)])
        .env("RAYON_NUM_THREADS", &many)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "mancaladb: RAYON_NUM_THREADS={many}: {many} threads on {cores} cores: at most {} (4 per core)",
            4 * cores
        )
    );
    for fine in ["1", "0"] {
        let out = bin()
            .args(["verify", "--checks", "1", "--seeds", "3", "--db", s(db)])
            .env("RAYON_NUM_THREADS", fine)
            .output()
            .unwrap();
        crate::common::assert_success(&out);
    }
}
