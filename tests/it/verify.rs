//! `verify`, the VU reading paths, import/export, and why check 3 exists.

use crate::common::{Recorder, assert_success, built, export_vu, run, succeeds};
use mancaladb::db::{Db, Verdict};
use mancaladb::oware::forward::{Graph, NO_EXIT, NO_MOVE, solve_graph};
use mancaladb::oware::{Encoder, Rules};
use mancaladb::progress::{Notice, Progress};
use mancaladb::source::Source;
use mancaladb::table::{TableId, write_table};
use mancaladb::verify::{Checks, Outcome, verify};

#[test]
fn verify_passes_on_built_levels_of_both_rule_sets() {
    for rules in Rules::ALL {
        let dir = built(&format!("verify-{rules}"), rules, 11);
        let db = Db::new(&dir);
        assert!(!db.is_verified(rules, 11).unwrap());
        let heard = Recorder::default();
        let checks = verify(
            &Source::tables(&dir, rules),
            rules,
            0..=11,
            Checks::All,
            Progress::to(&heard),
            |_| {},
        )
        .unwrap();
        assert_eq!(checks.len(), 12);
        for c in &checks {
            assert!(c.passed(), "{rules} level {}: {c:?}", c.seeds);
            assert_eq!(c.rederivation, Outcome::Pass);
        }
        // The library records what passed, with no word about it.
        assert!((0..=11).all(|n| db.is_verified(rules, n).unwrap()));
        assert_eq!(heard.notices(), []);
        // Checks 2 and 3 of every level are stages that end complete.
        let stages = heard.stages();
        assert_eq!(stages.len(), 24, "{stages:?}");
        for (label, total, done) in &stages {
            assert_eq!(done, total, "{rules} {label}");
        }
        assert_eq!(
            stages[23].0,
            "level 11: re-derivation (thresholds x positions)"
        );
        assert_eq!(stages[23].1, 11 * mancaladb::oware::level_size(11));
    }
}

#[test]
fn only_all_three_checks_are_recorded_and_a_record_not_written_is_a_warning() {
    let rules = Rules::Awari;
    let dir = built("verify-records", rules, 7);
    let db = Db::new(&dir);
    let run = |checks, heard: &Recorder| {
        verify(
            &Source::tables(&dir, rules),
            rules,
            5..=7,
            checks,
            Progress::to(heard),
            |_| {},
        )
        .unwrap()
    };
    let heard = Recorder::default();
    let checks = run(Checks::Consistency, &heard);
    assert!(checks.iter().all(|c| c.passed()));
    assert!((0..=7).all(|n| !db.is_verified(rules, n).unwrap()));
    // The record is written through verified.tsv.tmp; a directory there
    // makes every write fail.
    std::fs::create_dir(dir.join("verified.tsv.tmp")).unwrap();
    let checks = run(Checks::All, &heard);
    assert!(checks.iter().all(|c| c.passed()));
    let seeds: Vec<usize> = heard
        .notices()
        .iter()
        .filter_map(|n| match n {
            Notice::VerifiedNotRecorded {
                seeds,
                passed: true,
                why,
            } if why.contains("verified.tsv") => {
                assert!(n.is_warning());
                Some(*seeds)
            }
            _ => None,
        })
        .collect();
    assert_eq!(seeds, [5, 6, 7], "{:?}", heard.notices());
    std::fs::remove_dir(dir.join("verified.tsv.tmp")).unwrap();
    run(Checks::All, &Recorder::default());
    assert_eq!(
        (0..=7)
            .map(|n| db.is_verified(rules, n).unwrap())
            .collect::<Vec<_>>(),
        [false, false, false, false, false, true, true, true]
    );
}

fn code_and_stdout(args: &[&str]) -> (Option<i32>, String) {
    let out = run(args);
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn a_planted_wrong_value_fails_with_exit_1_naming_the_position() {
    let dir = built("planted", Rules::Awari, 11);
    let db = Db::new(&dir);
    let (code, _) = code_and_stdout(&["verify", "--db", dir.to_str().unwrap(), "--seeds", "9"]);
    assert_eq!(code, Some(0));
    assert!(db.is_verified(Rules::Awari, 9).unwrap());
    let mut values = db.open(Rules::Awari, 9).unwrap().read_all().unwrap();
    let index = 4321usize;
    let board = Encoder::new(9).board_at(9, index as u64).unwrap();
    let good = values[index];
    values[index] = if good == 9 { 8 } else { good + 1 };
    // A sound file (checksums and all) holding one wrong value.
    write_table(
        &db.table_path(Rules::Awari, 9),
        TableId {
            game: 1,
            rules: 1,
            seeds: 9,
        },
        &values,
    )
    .unwrap();
    let (code, text) =
        code_and_stdout(&["verify", "--db", dir.to_str().unwrap(), "--seeds", "9..11"]);
    assert_eq!(code, Some(1), "{text}");
    // Found wrong: its record of the earlier pass goes. Level 11 reads it,
    // so it is not judged by its values; level 10 does not.
    assert!(!db.is_verified(Rules::Awari, 9).unwrap());
    assert!(
        text.contains("check 2 consistency: NOT RUN: it reads level 9, which failed a check"),
        "{text}"
    );
    assert!(db.is_verified(Rules::Awari, 10).unwrap());
    assert!(!db.is_verified(Rules::Awari, 11).unwrap());
    let line = format!(
        "index {index} board {board}: stored {}, expected {good}",
        values[index]
    );
    assert!(
        text.contains("check 2 consistency: FAILED") && text.contains(&line),
        "{text}"
    );
    assert!(text.contains("check 3 re-derivation: FAILED"), "{text}");
    // `query` on that board refuses the value it cannot justify.
    let out = run(&["query", "--db", dir.to_str().unwrap(), &board.to_string()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "awari-09.mdb: corrupt table: stored value {} of {board} disagrees with its moves' best value {good}",
            values[index]
        )),
        "{err}"
    );
    // Quick mode only checks integrity, which holds.
    let (code, _) = code_and_stdout(&["verify", "--quick", "--db", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0));
}

/// `verify --checks 2` runs checks 1 and 2, says check 3 did not run, and
/// records nothing: a level is verified only after all three. A full
/// `verify` afterwards takes check 2's verdict from its file and records
/// the level.
#[test]
fn verify_checks_2_stops_before_rederivation_and_records_nothing() {
    let dir = built("verify-checks-2", Rules::Awari, 10);
    let d = dir.to_str().unwrap();
    let (code, text) = code_and_stdout(&["verify", "--checks", "2", "--seeds", "10", "--db", d]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("check 2 consistency: pass")
            && text.contains("check 3 re-derivation: not run"),
        "{text}"
    );
    assert!(!dir.join("verified.tsv").exists());
    assert!(dir.join("raw/awari/verify.10.work/check2").exists());
    let out = run(&["verify", "--seeds", "10", "--db", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_success(&out);
    assert!(
        err.contains("check 2 was done on these contents before: pass"),
        "{err}"
    );
    assert!(
        std::fs::read_to_string(dir.join("verified.tsv"))
            .unwrap()
            .contains("awari\t10\t")
    );
    // Out of range, or beside --quick: a usage error.
    for bad in [&["--checks", "4"][..], &["--checks", "2", "--quick"]] {
        let out = run(&[&["verify", "--db", d][..], bad].concat());
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

/// Check 2's verdict kept in its checkpoint is taken again only for the
/// contents it was reached on: once the level is replaced by a sound table
/// holding a wrong value, or a level it reads by one holding other values,
/// `verify --checks 2` checks again and fails (exit 1) rather than repeat
/// the earlier pass. The same contents again take it from the file.
#[test]
fn check_2s_kept_verdict_is_not_taken_for_other_contents() {
    let rules = Rules::Awari;
    let dir = built("verify-stale-check-2", rules, 10);
    let d = dir.to_str().unwrap();
    let db = Db::new(&dir);
    let plant = |seeds: usize, values: &[i8]| {
        let id = TableId {
            game: 1,
            rules: 1,
            seeds: seeds as u32,
        };
        write_table(&db.table_path(rules, seeds), id, values).unwrap();
    };
    let check_2 = || {
        let out = run(&["verify", "--checks", "2", "--seeds", "10", "--db", d]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        (out.status.code(), text, err)
    };
    let kept = "level 10: check 2 was done on these contents before: pass";
    let (code, text, _) = check_2();
    assert_eq!(code, Some(0), "{text}");
    assert!(dir.join("raw/awari/verify.10.work/check2").exists());
    let (code, text, err) = check_2();
    assert_eq!(code, Some(0), "{text}");
    assert!(err.contains(kept), "{err}");
    // A wrong value in level 10 itself.
    let good = db.open(rules, 10).unwrap().read_all().unwrap();
    let mut values = good.clone();
    let index = 12_345;
    values[index] = if good[index] == 10 {
        9
    } else {
        good[index] + 1
    };
    plant(10, &values);
    let (code, text, err) = check_2();
    assert_eq!(code, Some(1), "{text}{err}");
    assert!(
        text.contains("check 2 consistency: FAILED") && !err.contains("done on these contents"),
        "{text}{err}"
    );
    // The good table again: its pass is checked again, then kept.
    plant(10, &good);
    let (code, text, err) = check_2();
    assert_eq!(code, Some(0), "{text}");
    assert!(!err.contains("done on these contents"), "{err}");
    let (code, _, err) = check_2();
    assert_eq!(code, Some(0));
    assert!(err.contains(kept), "{err}");
    // Level 8, which level 10's 2-seed captures read, negated: level 10's
    // values no longer follow from it.
    let eight: Vec<i8> = db
        .open(rules, 8)
        .unwrap()
        .read_all()
        .unwrap()
        .iter()
        .map(|v| -v)
        .collect();
    plant(8, &eight);
    let (code, text, err) = check_2();
    assert_eq!(code, Some(1), "{text}{err}");
    assert!(
        text.contains("check 2 consistency: FAILED") && !err.contains("done on these contents"),
        "{text}{err}"
    );
}

/// The seconds `verify --json` reports for each level are that level's
/// checks' wall time, to the millisecond: together no more than the whole
/// run took, and more than nothing for a level of 10 seeds.
#[test]
fn verify_reports_each_levels_seconds_to_the_millisecond() {
    let dir = built("verify-seconds", Rules::Awari, 10);
    let start = std::time::Instant::now();
    let out = run(&["verify", "--json", "--db", dir.to_str().unwrap()]);
    let wall = start.elapsed().as_secs_f64();
    assert_eq!(out.status.code(), Some(0));
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seconds: Vec<f64> = checks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["seconds"].as_f64().unwrap())
        .collect();
    assert_eq!(seconds.len(), 11);
    for s in &seconds {
        assert!(
            *s >= 0.0 && (s * 1e3 - (s * 1e3).round()).abs() < 1e-6,
            "{s}"
        );
    }
    assert!(
        seconds.iter().sum::<f64>() <= wall,
        "{seconds:?} in {wall} s"
    );
    assert!(seconds[10] > 0.0, "{seconds:?}");
}

/// With checkpoints off (`MANCALADB_CHECKPOINT_SECS=off`), `verify`
/// writes none, not even check 2's verdict when it is complete: `verify
/// --checks 2` leaves no work directory, and a later run checks again.
#[test]
fn verify_with_checkpoints_off_leaves_no_checkpoint() {
    let dir = built("verify-checkpoints-off", Rules::Awari, 10);
    let verify = || {
        crate::common::bin()
            .args(["verify", "--checks", "2", "--seeds", "10", "--db"])
            .arg(&dir)
            .env("MANCALADB_CHECKPOINT_SECS", "off")
            .output()
            .unwrap()
    };
    for _ in 0..2 {
        let out = verify();
        assert_success(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("done on these contents"), "{err}");
        assert!(!dir.join("raw/awari/verify.10.work").exists());
    }
}

/// Runs `verify --seeds 14` of `dir` with a checkpoint after every step
/// that can take one, and SIGKILLs it `times` times, each soon after
/// `file` appears; returns their standard errors.
fn verify_killed(dir: &std::path::Path, file: &std::path::Path, times: usize) -> String {
    use std::time::{Duration, Instant};
    let mut log = String::new();
    for _ in 0..times {
        let mut child = verify_14(dir).spawn().unwrap();
        let start = Instant::now();
        while !file.exists() && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(30));
        child.kill().unwrap(); // SIGKILL
        let out = child.wait_with_output().unwrap();
        log.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    assert!(file.exists(), "no checkpoint left to resume from:\n{log}");
    log
}

fn verify_14(dir: &std::path::Path) -> std::process::Command {
    let mut c = crate::common::bin();
    c.args(["verify", "--seeds", "14", "--db"])
        .arg(dir)
        .env("MANCALADB_CHECKPOINT_SECS", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

/// `verify` killed during check 2 (a checkpoint after every part of its
/// walk) resumes check 2 where its checkpoint stands, and passes.
#[test]
fn a_killed_verify_resumes_check_2_from_its_checkpoint() {
    let dir = built("verify-killed-2", Rules::Awari, 14);
    let check2 = dir.join("raw/awari/verify.14.work/check2");
    let log = verify_killed(&dir, &check2, 1);
    let out = verify_14(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}{err}");
    assert!(
        err.contains("level 14: check 2 resuming at tile"),
        "{log}{err}"
    );
    assert!(!check2.parent().unwrap().exists(), "checkpoints left");
}

/// `verify` killed during check 3 (a checkpoint after every batch)
/// resumes check 3 from its checkpoint, does not run check 2 again (done
/// on the same contents), passes, and removes the checkpoints' directory.
#[test]
fn a_killed_verify_resumes_check_3_from_its_checkpoint() {
    let dir = built("verify-killed", Rules::Awari, 14);
    let check3 = dir.join("raw/awari/verify.14.work/check3");
    let log = verify_killed(&dir, &check3, 3);
    let out = verify_14(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}{err}");
    assert!(
        err.contains("level 14: check 2 was done on these contents before: pass"),
        "{log}{err}"
    );
    assert!(!err.contains("consistency"), "check 2 ran again:\n{err}");
    assert!(err.contains("check 3 resuming "), "{log}{err}");
    assert!(!check3.parent().unwrap().exists(), "checkpoints left");
}

/// A check-3 checkpoint whose mark (where it stands, in the header, which
/// the content checksum does not cover) is damaged is reported, and check 3
/// starts afresh and passes: a mark that is no mark at all, and one damaged
/// into another plausible mark (the threshold one lower, or the batch one
/// position further), which only the header's seal tells from a whole one.
#[test]
fn a_check_3_checkpoint_with_a_damaged_mark_starts_afresh() {
    // Magic, rule set, level, the content hashes of the 13 levels level 14
    // reads (0..=12: never 13), then the mark: a threshold byte or 0, and
    // eight bytes.
    let mark = 8 + 1 + 4 + 13 * 32;
    // Which byte, and the bits flipped: the first leaves neither 0 nor a
    // threshold of level 14.
    let damages = [
        ("verify-bad-mark", mark, 0xFF),
        ("verify-bad-mark-t", mark, 1),
        ("verify-bad-mark-n", mark + 1, 1),
    ];
    for (name, at, flip) in damages {
        let dir = built(name, Rules::Awari, 14);
        let check3 = dir.join("raw/awari/verify.14.work/check3");
        let log = verify_killed(&dir, &check3, 1);
        let mut bytes = std::fs::read(&check3).unwrap();
        bytes[at] ^= flip;
        std::fs::write(&check3, &bytes).unwrap();
        let out = verify_14(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {log}{err}");
        assert!(
            err.contains("where it stands is damaged: check 3 starts afresh"),
            "{name}: {log}{err}"
        );
        assert!(!err.contains("check 3 resuming"), "{name}: {err}");
    }
}

/// A check-3 checkpoint cut shorter than its header (by hand, or by a
/// disk that lost its end: `verify` writes it whole and renames it) is
/// reported as damaged, and check 3 starts afresh and passes; it used to
/// be taken for no checkpoint at all, without a word.
#[test]
fn a_check_3_checkpoint_cut_short_is_reported() {
    for (name, len) in [("verify-cut-0", 0), ("verify-cut-8", 8)] {
        let dir = built(name, Rules::Awari, 14);
        let check3 = dir.join("raw/awari/verify.14.work/check3");
        let log = verify_killed(&dir, &check3, 1);
        std::fs::File::options()
            .write(true)
            .open(&check3)
            .unwrap()
            .set_len(len)
            .unwrap();
        let out = verify_14(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {log}{err}");
        assert!(
            err.contains("check3: shorter than a checkpoint's header: check 3 starts afresh"),
            "{name}: {log}{err}"
        );
    }
}

/// A checkpoint of check 2 or 3 that cannot be resumed is named, with why,
/// and its check starts afresh and passes: one written by another version
/// (a binary upgraded while a `verify` of hours was stopped), one taken
/// over other tables (a level it reads rebuilt since), and a damaged one.
/// Each used to be dropped without a word, so an upgrade lost hours of a
/// check unannounced.
#[test]
fn a_checkpoint_that_cannot_be_resumed_is_named_and_its_check_starts_afresh() {
    // Byte 7 is the format's version; 20 lies in the first hash the header
    // names; the last byte lies in the compressed content.
    let cases = [
        (
            "check2",
            7,
            "written by another version of mancaladb (format MDBCHK2",
        ),
        ("check2", 20, "taken over other tables than these"),
        ("check2", usize::MAX, "damaged"),
        (
            "check3",
            7,
            "written by another version of mancaladb (format MDBCHK3",
        ),
        ("check3", 20, "taken over other tables than these"),
    ];
    for (file, at, why) in cases {
        let name = format!("verify-afresh-{file}-{}", at % 1000);
        let dir = built(&name, Rules::Awari, 14);
        let path = dir.join("raw/awari/verify.14.work").join(file);
        let log = verify_killed(&dir, &path, 1);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = at.min(bytes.len() - 1);
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let out = verify_14(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {log}{err}");
        let check = &file[5..];
        let line = err
            .lines()
            .find(|l| l.ends_with(&format!("check {check} starts afresh")))
            .unwrap_or_else(|| panic!("{name}: no line says check {check} starts afresh:\n{err}"));
        assert!(line.contains(why), "{name}: {line}");
        assert!(
            line.contains(&format!("verify.14.work/{file}")),
            "{name}: {line}"
        );
        assert!(
            !err.contains(&format!("check {check} resuming")),
            "{name}: {err}"
        );
    }
}

/// A `verify` that may not write where it keeps its lock and checkpoints
/// says it checks without checkpoints, and does: it neither reads what a
/// run before it left there (here a directory where check 2's checkpoint
/// goes, which reading would fail on) nor removes it, and passes. It used
/// to warn so and then stop with exit 2 on that checkpoint.
///
/// The binary runs as a user who may not write the directory: nobody
/// (65534, by `setpriv`) where the tests run as root, who may write
/// anything; its copy and the tables' lie under the system's temporary
/// directory, where that user can reach them.
#[test]
fn a_verify_that_may_not_write_its_checkpoints_reads_none_either() {
    use std::os::unix::fs::PermissionsExt;
    let built = built("verify-read-only", Rules::Awari, 12);
    let dir = std::env::temp_dir().join(format!("mancaladb-verify-ro-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let raw = dir.join("db/raw/awari");
    std::fs::create_dir_all(&raw).unwrap();
    for n in 0..=12 {
        let name = format!("awari-{n:02}.mdb");
        std::fs::copy(built.join(&name), dir.join("db").join(&name)).unwrap();
    }
    let left = raw.join("verify.12.work/check2");
    std::fs::create_dir_all(&left).unwrap();
    let exe = dir.join("mancaladb");
    std::fs::copy(env!("CARGO_BIN_EXE_mancaladb"), &exe).unwrap();
    let set = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    set(&dir, 0o755);
    set(&raw, 0o555);
    let root = unsafe { libc::geteuid() } == 0;
    let mut verify = match root {
        true => {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&exe);
            c
        }
        false => std::process::Command::new(&exe),
    };
    let db = dir.join("db");
    let out = verify
        .args(["verify", "--seeds", "12", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    set(&raw, 0o755);
    let kept = left.is_dir();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("level 12: checked without checkpoints"),
        "{err}"
    );
    assert!(kept, "what the run before it left was removed");
}

/// A `verify` of a level another process is checking waits for it (they
/// would write the same checkpoints), says so, and passes once it may go
/// on. The test holds the level's lock itself, as a first run would.
#[test]
fn a_second_verify_of_a_level_waits_for_the_first() {
    use std::io::BufRead;
    let dir = built("verify-twice", Rules::Awari, 14);
    let first = std::fs::File::create(dir.join("raw/awari/verify.14.lock")).unwrap();
    first.lock().unwrap();
    let mut second = verify_14(&dir).spawn().unwrap();
    let mut said = String::new();
    let mut lines = std::io::BufReader::new(second.stderr.take().unwrap()).lines();
    while !said.contains("waiting for") {
        let line = lines.next().expect("verify ended without waiting").unwrap();
        said.push_str(&line);
        said.push('\n');
    }
    assert!(
        !Db::new(&dir).is_verified(Rules::Awari, 14).unwrap(),
        "it went on"
    );
    drop(first); // the first run ends
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = second.wait().unwrap();
    assert!(status.success(), "{said}{}", rest.join("\n"));
    assert!(Db::new(&dir).is_verified(Rules::Awari, 14).unwrap());
}

/// What stands where `verify` keeps its lock or a checkpoint and is not a
/// file it wrote (a symbolic link, a named pipe) stops it with exit 2 and
/// one line naming it: the link used to let two runs check one level at
/// once, unlocked, and the pipe held the run for ever.
#[test]
fn a_link_or_a_pipe_in_verifys_place_is_an_error_not_a_bypass_or_a_hang() {
    let dir = built("verify-in-the-way", Rules::Awari, 12);
    let raw = dir.join("raw/awari");
    let lock = raw.join("verify.12.lock");
    let verify = |what: &str| {
        let mut child = crate::common::bin()
            .args(["verify", "--seeds", "12", "--db"])
            .arg(&dir)
            .env("MANCALADB_CHECKPOINT_SECS", "0")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed().as_secs() > 120 {
                child.kill().unwrap();
                panic!("{what}: verify hung");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(what), "{err}");
        assert!(
            !Db::new(&dir).is_verified(Rules::Awari, 12).unwrap(),
            "{what}"
        );
        err
    };
    std::fs::create_dir_all(&raw).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere"), &lock).unwrap();
    verify("symbolic link");
    std::fs::remove_file(&lock).unwrap();
    let work = raw.join("verify.12.work");
    std::fs::create_dir_all(&work).unwrap();
    for file in ["check2", "check3"] {
        let path = work.join(file);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let err = verify("named pipe");
        assert!(err.contains(file), "{err}");
        std::fs::remove_file(&path).unwrap();
    }
}

/// An observer that gives up waiting for another process when asked the
/// third time (Python does on Ctrl-C), and keeps the notices.
#[derive(Default)]
struct GiveUp {
    asked: std::sync::Mutex<usize>,
    notices: std::sync::Mutex<Vec<Notice>>,
}

impl mancaladb::progress::Observer for GiveUp {
    fn stage(&self, _: &str, _: u64) -> Option<Box<dyn mancaladb::progress::StageSink + '_>> {
        None
    }
    fn notice(&self, notice: &Notice) {
        self.notices.lock().unwrap().push(notice.clone());
    }
    fn keep_waiting(&self) -> bool {
        let mut asked = self.asked.lock().unwrap();
        *asked += 1;
        *asked < 3
    }
}

/// The library's caller may give up waiting for another `verify` of the
/// level (Python does on Ctrl-C): the run stops with `Error::Locked`.
#[test]
fn a_caller_may_give_up_waiting_for_another_verify() {
    let dir = built("verify-give-up", Rules::Awari, 9);
    let first = std::fs::File::create(dir.join("raw/awari/verify.9.lock")).unwrap();
    first.lock().unwrap();
    let observer = GiveUp::default();
    let err = verify(
        &Source::tables(&dir, Rules::Awari),
        Rules::Awari,
        9..=9,
        Checks::All,
        Progress::to(&observer),
        |_| {},
    )
    .unwrap_err();
    assert!(
        matches!(&err, mancaladb::Error::Locked { path, .. } if path.ends_with("verify.9.lock")),
        "{err}"
    );
    assert_eq!(*observer.asked.lock().unwrap(), 3);
    let notices = observer.notices.lock().unwrap();
    assert!(
        matches!(&notices[..], [Notice::WaitingForChecker { seeds: 9, .. }]),
        "{notices:?}"
    );
}

/// Another process writing the records of verified levels is waited
/// for, and said so (it was waited for without a word, for as long as it
/// held them); a caller that gives up has that level's verdict not
/// recorded and the run stopped there, as `on_level` stops it (Python's
/// Ctrl-C once went on to check the next level whole).
#[test]
fn a_verify_says_it_waits_for_another_process_writing_the_records() {
    let dir = built("verify-records-held", Rules::Awari, 9);
    let held = std::fs::File::create(dir.join(".verified.lock")).unwrap();
    held.lock().unwrap();
    let observer = GiveUp::default();
    let checks = verify(
        &Source::tables(&dir, Rules::Awari),
        Rules::Awari,
        8..=9,
        Checks::All,
        Progress::to(&observer),
        |_| {},
    )
    .unwrap();
    assert_eq!(checks.len(), 1);
    assert!(checks[0].passed() && checks[0].seeds == 8);
    assert_eq!(*observer.asked.lock().unwrap(), 3);
    let notices = observer.notices.lock().unwrap();
    assert!(
        matches!(&notices[..], [
            Notice::WaitingForRecords { path, .. },
            Notice::VerifiedNotRecorded { seeds: 8, passed: true, .. },
        ] if *path == dir.join("verified.tsv")),
        "{notices:?}"
    );
    assert!(!Db::new(&dir).is_verified(Rules::Awari, 8).unwrap());
    drop(held);
}

/// A verdict on a table that another has replaced since (a long-lived
/// reader's handle on an older file) says nothing of the one there now:
/// it is not recorded, and the record the new table earned stays. A
/// handle on a table of one wrong value (sound checksums), found wrong,
/// once removed the record of the sound table renamed into its place.
#[test]
fn a_verdict_on_a_table_replaced_since_leaves_the_records_alone() {
    let dir = built("verify-held-replaced", Rules::Awari, 9);
    let db = Db::new(&dir);
    let path = db.table_path(Rules::Awari, 9);
    let sound = std::fs::read(&path).unwrap();
    let mut values = db.open(Rules::Awari, 9).unwrap().read_all().unwrap();
    values[4321] = if values[4321] == 9 {
        8
    } else {
        values[4321] + 1
    };
    let id = TableId {
        game: 1,
        rules: 1,
        seeds: 9,
    };
    write_table(&path, id, &values).unwrap();
    let held = Source::tables(&dir, Rules::Awari);
    held.require(9).unwrap();
    let tmp = dir.join("sound.tmp");
    std::fs::write(&tmp, &sound).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let run = |source: &Source, heard: &Recorder| {
        verify(
            source,
            Rules::Awari,
            9..=9,
            Checks::All,
            Progress::to(heard),
            |_| {},
        )
        .unwrap()
    };
    let heard = Recorder::default();
    assert!(run(&Source::tables(&dir, Rules::Awari), &heard)[0].passed());
    assert!(db.is_verified(Rules::Awari, 9).unwrap());
    let checks = run(&held, &heard);
    assert!(checks[0].found_wrong(), "{checks:?}");
    assert!(db.is_verified(Rules::Awari, 9).unwrap());
    let replaced = format!(
        "{}: another table has replaced the one checked",
        path.display()
    );
    assert!(
        matches!(&heard.notices()[..], [Notice::VerifiedNotRecorded { seeds: 9, passed: false, why }] if *why == replaced),
        "{:?}",
        heard.notices()
    );
}

/// `query` says which levels a value was read from, which it rests on, and
/// whether those passed `verify` here: not before `verify`, and after it.
#[test]
fn query_says_what_a_value_rests_on_and_whether_it_is_verified() {
    let dir = built("query-provenance", Rules::Awari, 9);
    let d = dir.to_str().unwrap();
    // Stored (an empty opponent pit): its own level and its children's.
    let pits = "1 1 1 1 1 2 2 0 0 0 0 0";
    let (code, text) = code_and_stdout(&["query", "--db", d, pits]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("levels: read 9; rests on 0..7,9, not all verified here"),
        "{text}"
    );
    // The same, as data.
    let levels = |pits: &str| -> serde_json::Value {
        let (code, text) = code_and_stdout(&["query", "--json", "--db", d, pits]);
        assert_eq!(code, Some(0), "{text}");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["levels"].clone()
    };
    let rests_on = serde_json::json!([0, 1, 2, 3, 4, 5, 6, 7, 9]);
    let want = |missing: serde_json::Value, verified: bool| serde_json::json!({"read": [9], "rests_on": rests_on, "missing": missing, "verified": verified});
    assert_eq!(levels(pits), want(serde_json::json!([]), false));
    let (code, _) = code_and_stdout(&["verify", "--db", d, "--seeds", "0..9"]);
    assert_eq!(code, Some(0));
    let (_, text) = code_and_stdout(&["query", "--db", d, pits]);
    assert!(
        text.contains("levels: read 9; rests on 0..7,9, all verified here"),
        "{text}"
    );
    assert_eq!(levels(pits), want(serde_json::json!([]), true));
    // A level it rests on gone since: named, and no verify suggested (it
    // would stop at the missing level).
    let gone = dir.join("gone");
    std::fs::rename(dir.join("awari-05.mdb"), &gone).unwrap();
    let (code, text) = code_and_stdout(&["query", "--db", d, pits]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains(
            "levels: read 9; rests on 0..7,9, not all present here (missing: 5), so not verifiable here"
        ),
        "{text}"
    );
    assert_eq!(levels(pits), want(serde_json::json!([5]), false));
    std::fs::rename(&gone, dir.join("awari-05.mdb")).unwrap();
    // A level it does not rest on is not looked at: a link to nothing in
    // level 40's place leaves this answer as it was.
    std::os::unix::fs::symlink("nowhere", dir.join("awari-40.mdb")).unwrap();
    let (code, text) = code_and_stdout(&["query", "--db", d, pits]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("levels: read 9; rests on 0..7,9, all verified here"),
        "{text}"
    );
    std::fs::remove_file(dir.join("awari-40.mdb")).unwrap();
    // The mover has no seeds: no level is read, and the value rests on none.
    let (code, text) = code_and_stdout(&["query", "--db", d, "0 0 0 0 0 0 1 1 1 1 1 1"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("value:  -6"), "{text}");
    assert!(
        text.contains("levels: none read (no moves: the rules give the value)"),
        "{text}"
    );
}

#[test]
fn vu_files_are_read_in_place_and_round_trip() {
    let dir = built("vu", Rules::Awari, 10);
    let vu = dir.join("vu");
    export_vu(&dir, &vu);
    let (d, v) = (dir.to_str().unwrap(), vu.to_str().unwrap());
    // Queries and statistics read the same from both.
    for pits in [
        "0 0 0 0 0 2 1 1 0 0 0 0",
        "1 1 1 1 1 1 1 1 1 1 0 0",
        "2 0 3 0 0 1 0 0 0 1 0 2",
    ] {
        assert_eq!(
            code_and_stdout(&["query", "--db", d, "--json", pits]),
            code_and_stdout(&["query", "--vu", v, "--json", pits])
        );
    }
    assert_eq!(
        code_and_stdout(&["stats", "--db", d]),
        code_and_stdout(&["stats", "--vu", v])
    );
    // The JSON too, content sha256 included (hashed from the VU bytes).
    assert_eq!(
        code_and_stdout(&["stats", "--json", "--db", d]),
        code_and_stdout(&["stats", "--json", "--vu", v])
    );
    let (code, text) = code_and_stdout(&["verify", "--vu", v]);
    assert_eq!(code, Some(0), "{text}");
    // Import, then export again: byte-identical files, identical tables.
    let db2 = dir.join("db2");
    succeeds(&["import", "--vu", v, "--db", db2.to_str().unwrap()]);
    let vu2 = dir.join("vu2");
    export_vu(&db2, &vu2);
    for n in 0..=10 {
        let name = format!("scores.{n}");
        assert_eq!(
            std::fs::read(vu.join(&name)).unwrap(),
            std::fs::read(vu2.join(&name)).unwrap(),
            "{name}"
        );
        let t = format!("awari-{n:02}.mdb");
        assert_eq!(
            std::fs::read(dir.join(&t)).unwrap(),
            std::fs::read(db2.join(&t)).unwrap(),
            "{t}"
        );
    }
}

/// A lower level holding values no game of its level can have is an error
/// of the run (exit 2, naming it), not a FAILED verdict on the level that
/// reads it, whose values may well be right.
#[test]
fn out_of_range_lower_values_are_an_error_not_a_verdict() {
    let dir = built("vu-range-lower", Rules::Awari, 10);
    let vu = dir.join("vu");
    export_vu(&dir, &vu);
    let path = vu.join("scores.8");
    let mut bytes = std::fs::read(&path).unwrap();
    for b in bytes.iter_mut().step_by(97) {
        *b = 100;
    }
    std::fs::write(&path, &bytes).unwrap();
    let out = run(&["verify", "--vu", vu.to_str().unwrap(), "--seeds", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("scores.8: corrupt table: value 100 at index"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("FAILED"));
}

#[test]
fn damaged_vu_files_fail_verification() {
    let dir = built("vu-damaged", Rules::Awari, 8);
    let vu = dir.join("vu");
    export_vu(&dir, &vu);
    let v = vu.to_str().unwrap();
    // One flipped byte: a wrong value at that index.
    let path = vu.join("scores.8");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[1000] = bytes[1000].wrapping_add(2);
    std::fs::write(&path, &bytes).unwrap();
    let (code, text) = code_and_stdout(&["verify", "--vu", v, "--seeds", "8"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("index 1000 board"), "{text}");
    // A truncated file: integrity (size) fails, exit 1.
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let (code, text) = code_and_stdout(&["verify", "--vu", v, "--seeds", "8"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("check 1 integrity: FAILED")
            && text.contains("75503 bytes; level 8 has 75504 positions"),
        "{text}"
    );
    // Queries on it are refused, exit 2.
    let out = run(&["query", "--vu", v, "1 1 1 1 1 1 1 1 0 0 0 0"]);
    assert_eq!(out.status.code(), Some(2));
    // A missing directory: exit 2, named as such.
    let out = run(&["verify", "--vu", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent: no such directory"));
    // An empty one: exit 2 with what to do.
    let empty = dir.join("empty-vu");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(&["verify", "--vu", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("export --format vu"));
}

#[test]
fn a_level_failing_check_1_blocks_only_the_levels_that_read_it() {
    let dir = built("verify-blocked", Rules::Awari, 8);
    let d = dir.to_str().unwrap();
    // Level 6 truncated: check 1 fails. Level 7 reads levels 0..5 only (a
    // capture takes 2 or 3 seeds), so it is checked; level 8 reads 6.
    let six = dir.join("awari-06.mdb");
    crate::common::cut_short(&six, 1);
    let out = run(&["verify", "--db", d, "--seeds", "5..8", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = checks.as_array().unwrap();
    assert_eq!(checks.len(), 4, "every level is reported: {checks:?}");
    let passed: Vec<bool> = checks
        .iter()
        .map(|c| c["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passed, [true, false, true, false]);
    assert!(checks[1]["integrity"]["error"].is_string());
    assert_eq!(checks[2]["rederivation"], "pass");
    assert_eq!(checks[3]["integrity"], "pass");
    assert_eq!(checks[3]["consistency"]["blocked_by"], 6);
    assert_eq!(checks[3]["rederivation"]["blocked_by"], 6);
    // Levels 5 and 7 are recorded as verified; 8 is not; 6, which cannot
    // even be opened, is an error, not one more level without a record.
    let db = Db::new(&dir);
    let verified: Vec<bool> = [5, 7, 8]
        .map(|n| db.is_verified(Rules::Awari, n).unwrap())
        .into();
    assert_eq!(verified, [true, true, false]);
    assert!(matches!(
        db.is_verified(Rules::Awari, 6),
        Err(mancaladb::Error::Corrupt { .. })
    ));
    let (code, text) = code_and_stdout(&["verify", "--db", d, "--seeds", "8", "--checks", "1"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("check 1 integrity: pass"), "{text}");
    let (_, text) = code_and_stdout(&["verify", "--db", d, "--seeds", "6..8", "--checks", "2"]);
    assert!(
        text.contains("check 2 consistency: NOT RUN: it reads level 6, which failed a check"),
        "{text}"
    );
}

/// Two positions A and B, each with one quiet move to the other and one
/// move leaving the graph worth -1. The true values are 0 and 0: neither
/// player gains by leaving, and endless play is worth 0. Yet A = +1, B = -1
/// satisfies every local equation: A = max(-1, -B) = 1 and B = max(-1, -A)
/// = -1. Consistency (check 2's equation) accepts it; the forward solver
/// that check 3 runs on every level (here on the explicit graph,
/// `solve_graph`) finds 0 and 0. `tests/it/fixed_points.rs` runs check 3
/// itself on such values in real levels.
#[test]
fn check_3s_solver_rejects_consistent_values_that_are_wrong_inside_a_cycle() {
    let g = Graph {
        quiet: vec![
            [1, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE],
            [0, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE, NO_MOVE],
        ],
        exit: vec![-1, -1],
    };
    let wrong = [1i8, -1];
    let consistent = |v: &[i8]| (0..2).all(|i| v[i] == g.exit[i].max(-v[g.quiet[i][0] as usize]));
    assert!(consistent(&wrong));
    let exact = solve_graph(&g, 2).unwrap();
    assert_eq!(exact, [0, 0]);
    assert!(consistent(&exact));
    assert_ne!(exact, wrong);
    // No exit at all: endless play only, worth 0 too.
    let g = Graph {
        quiet: g.quiet.clone(),
        exit: vec![NO_EXIT, NO_EXIT],
    };
    assert_eq!(solve_graph(&g, 2).unwrap(), [0, 0]);
}

/// Levels `0..=max` of awari built with no raw copies: every level is read
/// from its compressed table.
fn built_without_raw_copies(name: &str, max: usize) -> std::path::PathBuf {
    let dir = crate::common::scratch(name);
    let db = Db::new(&dir).with_raw_cache(Some(0));
    mancaladb::build::Build::new(&db, Rules::Awari, 0..=max)
        .run()
        .unwrap();
    let raw = db.raw_dir(Rules::Awari);
    let left: Vec<_> = std::fs::read_dir(&raw)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "raw copies left: {left:?}");
    dir
}

#[test]
fn verify_reads_lower_levels_from_tables_alone() {
    let dir = built_without_raw_copies("verify-tables", 11);
    let source = Source::tables(&dir, Rules::Awari);
    // Every lower level comes from its table, block by block, but level
    // 10, which level 11 never reads and which is not opened.
    let lower = source.lower_levels(11).unwrap();
    assert_eq!(lower.compressed_levels(), (0..10).collect::<Vec<_>>());
    let checks = verify(
        &source,
        Rules::Awari,
        9..=11,
        Checks::All,
        Progress::QUIET,
        |_| {},
    )
    .unwrap();
    assert_eq!(checks.len(), 3);
    for c in &checks {
        assert!(c.passed(), "level {}: {c:?}", c.seeds);
        assert_eq!(c.consistency, Outcome::Pass);
        assert_eq!(c.rederivation, Outcome::Pass);
    }
    // One wrong value in a sound table: both checks name it, check 3
    // through the table streamed block by block.
    let db = Db::new(&dir);
    let mut values = db.open(Rules::Awari, 11).unwrap().read_all().unwrap();
    let index = 654_321usize;
    let good = values[index];
    values[index] = if good == 11 { 10 } else { good + 1 };
    let id = TableId {
        game: 1,
        rules: 1,
        seeds: 11,
    };
    write_table(&db.table_path(Rules::Awari, 11), id, &values).unwrap();
    let source = Source::tables(&dir, Rules::Awari);
    let checks = verify(
        &source,
        Rules::Awari,
        11..=11,
        Checks::All,
        Progress::QUIET,
        |_| {},
    )
    .unwrap();
    let c = &checks[0];
    assert_eq!(c.integrity, Outcome::Pass);
    for outcome in [&c.consistency, &c.rederivation] {
        match outcome {
            Outcome::Differs(_, first) => {
                let m = first.iter().find(|m| m.index == index as u64);
                assert!(m.is_some_and(|m| (m.stored, m.expected) == (values[index], good)));
            }
            o => panic!("{o:?}"),
        }
    }
    match &c.rederivation {
        Outcome::Differs(n, _) => assert_eq!(*n, 1),
        o => panic!("{o:?}"),
    }
}

/// Flips a byte in the middle of block `block`'s compressed frame of the
/// (version 2) table at `path`.
fn damage_block(path: &std::path::Path, block: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let frame = crate::common::frame(&bytes, block);
    bytes[(frame.start + frame.end) / 2] ^= 0x40;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_lower_block_is_an_error_of_the_run_not_a_verdict() {
    let dir = built_without_raw_copies("verify-damaged-lower", 11);
    // Level 9 is read by the 2-seed captures of level 11, all over it.
    let table = Db::new(&dir).table_path(Rules::Awari, 9);
    damage_block(&table, 1);
    let source = Source::tables(&dir, Rules::Awari);
    let mut seen = Vec::new();
    let got = verify(
        &source,
        Rules::Awari,
        11..=11,
        Checks::All,
        Progress::QUIET,
        |c| seen.push(c.clone()),
    );
    match got {
        Err(e @ mancaladb::Error::Corrupt { .. }) => {
            assert!(e.to_string().contains("awari-09.mdb"), "{e}")
        }
        other => panic!("not an error of the run: {other:?}"),
    }
    assert!(seen.is_empty(), "a verdict was given: {seen:?}");
    // The command line: exit 2 naming the file, no verdict, nothing recorded.
    let out = run(&["verify", "--db", dir.to_str().unwrap(), "--seeds", "11"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("awari-09.mdb") && !err.contains("panicked"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("FAILED"));
    assert!(!dir.join("verified.tsv").exists());
    // Level 9 itself fails its check 1.
    let checks = verify(
        &source,
        Rules::Awari,
        9..=9,
        Checks::Integrity,
        Progress::QUIET,
        |_| {},
    )
    .unwrap();
    assert!(matches!(checks[0].integrity, Outcome::Broken(_)));
    // In JSON too, the levels checked before the error are reported (level
    // 10 never reads 9; 11 does).
    let out = run(&[
        "verify",
        "--db",
        dir.to_str().unwrap(),
        "--seeds",
        "10..11",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let done: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let done = done.as_array().unwrap();
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(
        (&done[0]["seeds"], &done[0]["passed"]),
        (&10.into(), &true.into())
    );
}

/// Check 3 streams the stored level: the comparison finds every planted
/// difference, wherever the chunks of the stream begin and end.
#[test]
fn the_streamed_comparison_finds_planted_differences() {
    use mancaladb::verify::{SHOWN, compare};
    let dir = built_without_raw_copies("verify-stream", 10);
    let source = Source::tables(&dir, Rules::Awari);
    let good = Db::new(&dir)
        .open(Rules::Awari, 10)
        .unwrap()
        .read_all()
        .unwrap();
    let n = good.len();
    assert!(n > 5 * 65536, "{n} positions: more than a few blocks");
    let planted = [0, 65535, 65536, 200_001, n - 1];
    let mut expected = good.clone();
    for &i in &planted {
        expected[i] = if expected[i] == 10 {
            9
        } else {
            expected[i] + 1
        };
    }
    let enc = Encoder::new(10);
    let check = |o: Outcome| match o {
        Outcome::Differs(count, first) => {
            assert_eq!(count, planted.len() as u64);
            let at: Vec<u64> = first.iter().map(|m| m.index).collect();
            assert_eq!(at, planted.map(|i| i as u64));
            for m in &first {
                let i = m.index as usize;
                assert_eq!((m.stored, m.expected), (good[i], expected[i]));
                assert_eq!(m.board, enc.board_at(10, m.index).unwrap());
            }
        }
        o => panic!("{o:?}"),
    };
    // The table block by block, as verify streams it.
    check(compare(10, &expected, |f| source.for_each_chunk(10, f)).unwrap());
    // Chunks of other sizes, straddling the blocks.
    for size in [1, 999, 65537, n] {
        let stream = |f: &mut dyn FnMut(&[i8])| {
            good.chunks(size).for_each(f);
            Ok(())
        };
        check(compare(10, &expected, stream).unwrap());
    }
    // Equal values pass; a short stream is broken; more than SHOWN
    // differences list the first SHOWN.
    let whole = |f: &mut dyn FnMut(&[i8])| {
        f(&good);
        Ok(())
    };
    assert_eq!(compare(10, &good, whole).unwrap(), Outcome::Pass);
    let short = |f: &mut dyn FnMut(&[i8])| {
        f(&good[..n - 1]);
        Ok(())
    };
    assert!(matches!(
        compare(10, &good, short).unwrap(),
        Outcome::Broken(_)
    ));
    let shifted: Vec<i8> = good
        .iter()
        .map(|&v| if v == 10 { 9 } else { v + 1 })
        .collect();
    match compare(10, &shifted, whole).unwrap() {
        Outcome::Differs(count, first) => {
            assert_eq!(count, n as u64);
            assert_eq!(first.len(), SHOWN);
            assert!(first.iter().enumerate().all(|(k, m)| m.index == k as u64));
        }
        o => panic!("{o:?}"),
    }
    // A read error of the stream is an error of the run.
    let failing = |_: &mut dyn FnMut(&[i8])| Err(mancaladb::Error::Invalid("unreadable".into()));
    assert!(compare(10, &good, failing).is_err());
}

/// Records level `seeds` of `db` (awari) as `verify` does after a pass:
/// under its content sha256 and those of the levels it reads.
fn set_verified(db: &Db, seeds: usize) -> mancaladb::Result<()> {
    let content = db.open(Rules::Awari, seeds)?.header().content_sha256;
    let lower = db.lower_content(Rules::Awari, seeds)?;
    let verdict = Verdict::Passed {
        content,
        lower: &lower,
    };
    assert!(db.set_verified(Rules::Awari, seeds, verdict, Progress::QUIET)?);
    Ok(())
}

#[test]
fn records_of_verify_runs_finishing_together_are_all_kept() {
    let dir = built("verified-together", Rules::Awari, 9);
    let db = Db::new(&dir);
    for round in 0..10 {
        let _ = std::fs::remove_file(dir.join("verified.tsv"));
        std::thread::scope(|s| {
            for k in 0..=9 {
                let db = &db;
                s.spawn(move || set_verified(db, k).unwrap());
            }
        });
        for k in 0..=9 {
            assert!(
                db.is_verified(Rules::Awari, k).unwrap(),
                "round {round}: level {k}'s record lost"
            );
        }
    }
}

/// A record is four fields, its two checksums 64 hex digits each: a
/// line whose checksums are not (hex but short, or 64 characters that
/// are not hex) is no record, and a rewrite of the file drops it while it
/// keeps every record.
#[test]
fn a_rewrite_of_the_records_drops_lines_whose_checksums_are_malformed() {
    let dir = crate::common::scratch("verified-malformed");
    let db = Db::new(&dir);
    let (hex, other) = ("ab".repeat(32), "cd".repeat(32));
    let kept = format!("awari\t2\t{hex}\t{other}");
    let short = format!("awari\t3\tabc\t{other}");
    let not_hex = format!("awari\t4\t{hex}\t{}", "g".repeat(64));
    let path = dir.join("verified.tsv");
    std::fs::write(&path, format!("{kept}\n{short}\n{not_hex}\n")).unwrap();
    db.set_verified(
        Rules::Awari,
        5,
        Verdict::Passed {
            content: [7; 32],
            lower: &[[8; 32]],
        },
        Progress::QUIET,
    )
    .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], kept);
    assert!(lines[1].starts_with(&format!("awari\t5\t{}\t", "07".repeat(32))));
}

#[test]
fn records_that_cannot_be_read_are_not_rewritten_without_them() {
    let dir = built("verified-unreadable", Rules::Awari, 4);
    let db = Db::new(&dir);
    set_verified(&db, 3).unwrap();
    assert!(db.is_verified(Rules::Awari, 3).unwrap());
    // A file that exists but cannot be read (a link to itself: ELOOP; on a
    // real disk, EIO) holds records nobody can see: recording another level
    // must not replace it with that one record, and nothing may be
    // answered as unverified from it.
    let records = dir.join("verified.tsv");
    std::fs::remove_file(&records).unwrap();
    std::os::unix::fs::symlink("verified.tsv", &records).unwrap();
    let err = set_verified(&db, 4).unwrap_err().to_string();
    assert!(err.contains("verified.tsv"), "{err}");
    assert!(db.is_verified(Rules::Awari, 3).is_err());
    assert!(records.symlink_metadata().unwrap().file_type().is_symlink());
    let out = run(&[
        "query",
        "--db",
        dir.to_str().unwrap(),
        "0 0 0 0 0 1 0 0 0 0 1 1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "nothing half said"
    );
}
