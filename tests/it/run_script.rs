//! `scripts/awari-run.sh`, the long run's driver: it decides what is built
//! and verified again after a stop, and its exit status is the run's
//! verdict, so its logic is tested here: with the real binary where the
//! levels are small (`verify`, `check`), with a stand-in binary for the
//! order of the whole run (`all`, whose levels go up to 36).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{awari_db, scratch};

/// Runs `sh scripts/awari-run.sh ARGS` with `env` added, and without the
/// variables that the script or the stand-in read from the caller's
/// environment.
fn run_script(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new("sh");
    command
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/awari-run.sh"))
        .args(args);
    for (name, _) in std::env::vars() {
        if ["BUILD_FLAGS", "AUTOGROUP_NICE", "SLEEP_BUILD"].contains(&name.as_str())
            || name.starts_with("FAIL_")
            || name.starts_with("UNRECORDED_")
        {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied()).output().expect("run sh")
}

/// A directory holding copies of awari levels `0..=max` built by the
/// command line.
fn levels(name: &str, max: usize) -> PathBuf {
    let dir = scratch(name);
    for n in 0..=max {
        let file = format!("awari-{n:02}.mdb");
        fs::copy(awari_db().join(&file), dir.join(&file)).unwrap();
    }
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

#[test]
fn verify_records_levels_and_skips_only_the_bytes_it_verified() {
    let dir = levels("run-script-verify", 6);
    let d = dir.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_mancaladb");
    let o = run_script(&["verify", d, bin, "0", "6"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let records = fs::read_to_string(dir.join("verified.tsv")).unwrap();
    assert_eq!(records.lines().count(), 7, "{records}");

    // A rerun verifies nothing again: it only reads each table's bytes
    // again (check 1).
    let log = len(&dir.join("verify.log"));
    assert!(log > 0, "the first run logged its verifies");
    let o = run_script(&["verify", d, bin, "0", "6"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(len(&dir.join("verify.log")), log);
    let quick = fs::read_to_string(dir.join("verify-quick.log")).unwrap();
    assert_eq!(quick.matches("ok").count(), 7, "{quick}");

    // A record naming other bytes does not count: level 3 is verified
    // again, and only level 3.
    let other = records
        .lines()
        .map(|l| match l.strip_prefix("awari\t3\t") {
            Some(_) => format!("awari\t3\t{}", "0".repeat(64)),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(dir.join("verified.tsv"), other + "\n").unwrap();
    let o = run_script(&["status", d], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let status = text(&o.stdout);
    assert!(status.contains("tables:        0..6\n"), "{status}");
    assert!(status.contains("verified here: 0..2,4..6\n"), "{status}");
    let times: Vec<u64> = (0..=6)
        .map(|n| len(&dir.join(format!("verify-{n}.time"))))
        .collect();
    let o = run_script(&["verify", d, bin, "0", "6"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for (n, was) in times.iter().enumerate() {
        let now = len(&dir.join(format!("verify-{n}.time")));
        assert_eq!(
            now > *was,
            n == 3,
            "level {n}: {was} -> {now} bytes of time -v"
        );
    }
    assert_eq!(
        fs::read_to_string(dir.join("verified.tsv")).unwrap(),
        records
    );

    // A table damaged since its record (its header, and so its content
    // checksum, intact) fails: exit 1, and its record goes (a
    // researcher's review: it was skipped).
    let five = dir.join("awari-05.mdb");
    let mut bytes = fs::read(&five).unwrap();
    let at = bytes.len() - 40;
    bytes[at] ^= 0x55;
    fs::write(&five, &bytes).unwrap();
    let o = run_script(&["verify", d, bin, "0", "6"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let status = text(&run_script(&["status", d], &[]).stdout);
    // Level 6 does not read level 5.
    assert!(status.contains("verified here: 0..4,6\n"), "{status}");
    fs::write(&five, {
        bytes[at] ^= 0x55;
        &bytes
    })
    .unwrap();

    // A level without a table is an error, not a skip.
    let o = run_script(&["verify", d, bin, "0", "7"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("level 7: no table"),
        "{}",
        text(&o.stderr)
    );
    for (from, to) in [("5", "3"), ("a", "b")] {
        let o = run_script(&["verify", d, bin, from, to], &[]);
        assert_eq!(o.status.code(), Some(2), "{from}..{to}");
    }
    let o = run_script(&["verify", d, bin, "0", "6", "1"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("CHECKS must be 2 or 3"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn check_tells_other_values_from_other_file_bytes() {
    let dir = levels("run-script-check", 4);
    let d = dir.to_str().unwrap();
    let o = run_script(&["check", d], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).matches(": as db/CHECKSUMS").count(), 5);

    // The last byte is the file's own sha256: the values are untouched.
    let path = dir.join("awari-04.mdb");
    let mut bytes = fs::read(&path).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    fs::write(&path, &bytes).unwrap();
    let o = run_script(&["check", d], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains(
            "level 4: other file bytes; its header names db/CHECKSUMS's values \
             (check them: mancaladb verify --seeds 4)"
        ),
        "{}",
        text(&o.stdout)
    );
    // Bytes 40..72 of the header are the content sha256.
    bytes[40] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let o = run_script(&["check", d], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains("level 4: DIFFERS"),
        "{}",
        text(&o.stdout)
    );

    // A level db/CHECKSUMS does not list is no pass either.
    fs::copy(dir.join("awari-03.mdb"), dir.join("awari-47.mdb")).unwrap();
    fs::remove_file(&path).unwrap();
    let o = run_script(&["check", d], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains("level 47: not in db/CHECKSUMS"),
        "{}",
        text(&o.stdout)
    );

    let empty = scratch("run-script-check-empty");
    let o = run_script(&["check", empty.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no tables"), "{}", text(&o.stderr));
}

/// `check` reads db/CHECKSUMS as db/README lays it out: a level's line
/// given twice is one line (it said DIFFERS, both lines matching), and a
/// file sha256 of `-` means the content sha256 stands (it said "not in
/// db/CHECKSUMS"). The script is run from a copy of the checkout's
/// layout, beside a CHECKSUMS made so.
#[test]
fn check_reads_a_repeated_line_once_and_a_dash_as_the_content_sha256() {
    let dir = levels("run-script-check-layout", 3);
    let tree = scratch("run-script-check-tree");
    fs::create_dir_all(tree.join("scripts")).unwrap();
    fs::create_dir_all(tree.join("db")).unwrap();
    let script = tree.join("scripts/awari-run.sh");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/awari-run.sh"),
        &script,
    )
    .unwrap();
    let sums =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("db/CHECKSUMS")).unwrap();
    let line = |n: usize| {
        let start = format!("awari {n} ");
        sums.lines()
            .find(|l| l.starts_with(&start))
            .unwrap()
            .to_string()
    };
    // rules level positions content-sha256 file-sha256, the file sha256
    // made `-`, and for level 3 the content sha256 made another's too: a
    // '-' passes only the values it names.
    let dashed = |n: usize, content: Option<&str>| {
        let l = line(n);
        let f: Vec<&str> = l.split(' ').collect();
        format!("{} {} {} {} -", f[0], f[1], f[2], content.unwrap_or(f[3]))
    };
    let other = "1".repeat(64);
    let made = [
        line(0),
        line(1),
        line(1),
        dashed(2, None),
        dashed(3, Some(&other)),
    ];
    fs::write(tree.join("db/CHECKSUMS"), made.join("\n") + "\n").unwrap();
    let o = Command::new("sh")
        .arg(&script)
        .args(["check", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    assert!(out.contains("level 0: as db/CHECKSUMS\n"), "{out}");
    assert!(out.contains("level 1: as db/CHECKSUMS\n"), "{out}");
    assert!(
        out.contains("level 2: as db/CHECKSUMS (its content sha256: no file sha256 recorded)"),
        "{out}"
    );
    assert!(out.contains("level 3: DIFFERS"), "{out}");
}

/// A stand-in for the binary: logs its arguments to `calls`; `build`
/// writes 100 zero bytes as the table of each level asked, or fails with
/// `$FAIL_BUILD` and an error line when that is set; `verify --seeds N`
/// exits with `$FAIL_N` (default 0), saying so on standard error, and
/// records a pass the way the real one does (the table's content sha256
/// from its header, and the sha256 of those of the levels it reads),
/// unless `$UNRECORDED_N` is set (as when verified.tsv cannot be written).
const STAND_IN: &str = r#"#!/bin/sh
echo "$*" >> calls
case $1 in
build)
  [ -z "${SLEEP_BUILD:-}" ] || sleep "$SLEEP_BUILD"
  if [ -n "${FAIL_BUILD:-}" ]; then
    echo "mancaladb: stand-in build failure" >&2
    exit "$FAIL_BUILD"
  fi
  set=$(echo "$*" | sed -n 's/.*--levels \([^ ]*\).*/\1/p')
  for part in $(echo "${set:-0..36}" | tr , ' '); do
    for n in $(seq "${part%..*}" "${part#*..}"); do
      f=awari-$(printf %02d "$n").mdb
      [ -e "$f" ] || head -c 100 /dev/zero > "$f"
    done
  done ;;
verify)
  n=$(echo "$*" | sed -n 's/.*--seeds \([0-9]*\).*/\1/p')
  status=$(eval echo "\${FAIL_$n:-0}")
  [ "$status" = 0 ] || echo "mancaladb: level $n: stand-in failure $status" >&2
  sha() { od -An -tx1 -j40 -N32 "awari-$(printf %02d "$1").mdb" | tr -d ' \n'; }
  if [ "$status" = 0 ] && [ -z "$(eval echo "\${UNRECORDED_$n:-}")" ]; then
    lower=$(for k in $(seq 0 $((n - 1))); do
      if [ "$k" = 0 ] || [ $((k + 1)) -lt "$n" ]; then sha "$k"; echo; fi
    done | sha256sum | cut -c1-64)
    printf 'awari\t%s\t%s\t%s\n' "$n" "$(sha "$n")" "$lower" >> verified.tsv
  fi
  exit "$status" ;;
esac
"#;

/// The stand-in, written into `dir` as an executable; its path.
fn stand_in(dir: &Path) -> String {
    let path = dir.join("stand-in");
    fs::write(&path, STAND_IN).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn all_verifies_the_levels_never_checked_first_and_exits_with_the_worst_status() {
    let dir = scratch("run-script-all");
    let d = dir.to_str().unwrap();
    let bin = stand_in(&dir);
    let bin = bin.as_str();

    // A check that fails is 1; a binary that dies (137: killed) is 2, and
    // named with the last line it wrote.
    let o = run_script(&["all", d, bin], &[("FAIL_31", "1"), ("FAIL_5", "137")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        format!(
            "awari-run.sh: verify --seeds 5 failed (exit 137); it last said: \
             mancaladb: level 5: stand-in failure 137; see {d}/verify-5.time\n"
        )
    );
    // run.pid names the process group (the script here is not its leader).
    let stat = fs::read_to_string("/proc/self/stat").unwrap();
    let group = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap();
    assert_eq!(
        fs::read_to_string(dir.join("run.pid")).unwrap().trim(),
        group
    );
    let calls = fs::read_to_string(dir.join("calls")).unwrap();
    let steps: Vec<&str> = calls
        .lines()
        .filter(|l| {
            l.starts_with("build")
                || ["31", "32", "33", "34", "35", "36"]
                    .iter()
                    .any(|n| l.contains(&format!("--seeds {n} ")))
        })
        .collect();
    // Levels 36 and 35, never checked before, each right after its build;
    // then the levels below, verified on earlier machines.
    let want = [
        "build --wait --levels 0..34,36 --db .",
        "verify --seeds 36 --db .",
        "build --wait --levels 35 --db .",
        "verify --seeds 35 --db .",
        "verify --seeds 31 --db .",
        "verify --seeds 32 --db .",
        "verify --seeds 33 --db .",
        "verify --seeds 34 --db .",
    ];
    assert_eq!(steps, want, "{calls}");
    assert_eq!(
        calls.lines().filter(|l| l.starts_with("verify")).count(),
        37
    );

    // A failed check alone is status 1, and a rerun checks again only what
    // did not pass; what did has its bytes read again (check 1).
    fs::remove_file(dir.join("calls")).unwrap();
    let o = run_script(&["all", d, bin], &[("FAIL_31", "1")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let calls = fs::read_to_string(dir.join("calls")).unwrap();
    let (quick, verified): (Vec<&str>, Vec<&str>) = calls
        .lines()
        .filter(|l| l.starts_with("verify"))
        .partition(|l| l.starts_with("verify --quick"));
    assert_eq!(
        verified,
        ["verify --seeds 5 --db .", "verify --seeds 31 --db ."]
    );
    assert_eq!(quick.len(), 35, "{calls}");
    let o = run_script(&["all", d, bin], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let status = text(&run_script(&["status", d], &[]).stdout);
    assert!(status.contains("tables:        0..36\n"), "{status}");
    assert!(status.contains("verified here: 0..36\n"), "{status}");
    assert!(status.contains("running:       no run holds"), "{status}");

    // One run per directory; `status` names the one that holds it.
    let lock = fs::File::create(dir.join("run.lock")).unwrap();
    lock.lock().unwrap();
    let o = run_script(&["all", d, bin], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("another awari-run.sh"),
        "{}",
        text(&o.stderr)
    );
    // Work files left by a stopped verify (its log ending in `time -v`'s
    // lines and the shell's word for the signal) and build.
    let work = dir.join("raw/awari/scores.37.work/rank-0");
    fs::create_dir_all(&work).unwrap();
    fs::write(work.join("state.5"), b"").unwrap();
    fs::create_dir_all(dir.join("raw/awari/verify.33.work")).unwrap();
    fs::write(
        dir.join("verify-33.time"),
        "level 33: check 2 was done on these contents before: pass\n\
         level 33: check 3 checkpoint at threshold 5 (2837.5 MB in 18.2 s)\n\
         Command terminated by signal 15\n\
         \tCommand being timed: \"mancaladb verify --seeds 33 --db .\"\n\
         \tExit status: 0\n\
         Terminated\n",
    )
    .unwrap();
    // A run holding the directory is not enough for a level to be under
    // way: its own process holds its lock (a build the directory's
    // `.lock`, a verify `raw/awari/verify.N.lock`).
    let status = text(&run_script(&["status", d], &[]).stdout);
    assert!(status.contains("running:       process group"), "{status}");
    assert!(
        !status.contains("building") && !status.contains("verifying"),
        "{status}"
    );
    let build_lock = fs::File::create(dir.join(".lock")).unwrap();
    build_lock.lock().unwrap();
    let verify_lock = fs::File::create(dir.join("raw/awari/verify.33.lock")).unwrap();
    verify_lock.lock().unwrap();
    let status = text(&run_script(&["status", d], &[]).stdout);
    assert!(
        status.contains("building level 37: newest work file rank-0/state.5 ("),
        "{status}"
    );
    assert!(
        status.contains(
            "verifying level 33: newest work file none\n  last said:   level 33: check 3 checkpoint at threshold 5 (2837.5 MB in 18.2 s)\n"
        ),
        "{status}"
    );
    // With no process, the same work files are what a stopped build or
    // verify (or checks 1 and 2 alone) left: not "under way".
    drop((lock, build_lock, verify_lock));
    let status = text(&run_script(&["status", d], &[]).stdout);
    assert!(status.contains("running:       no run holds"), "{status}");
    assert!(
        status.contains(
            "level 37: build stopped or unfinished; it resumes from its newest work file rank-0/state.5 ("
        ),
        "{status}"
    );
    assert!(
        status.contains("level 33: verify stopped or unfinished; it resumes from its newest work file none\n  last said:   level 33: check 3"),
        "{status}"
    );
    assert!(
        !status.contains("building") && !status.contains("verifying"),
        "{status}"
    );
}

/// A verify that passes but whose pass cannot be recorded (verified.tsv
/// not writable) is not done: the script says so and exits 2, rather than
/// 0 with nothing recorded.
#[test]
fn a_pass_not_recorded_is_an_error() {
    let dir = scratch("run-script-unrecorded");
    let d = dir.to_str().unwrap();
    let bin = stand_in(&dir);
    let bin = bin.as_str();
    fs::write(dir.join("awari-05.mdb"), [0u8; 100]).unwrap();
    let o = run_script(&["verify", d, bin, "5", "5"], &[("UNRECORDED_5", "1")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("level 5 passed but is not recorded in verified.tsv"),
        "{}",
        text(&o.stderr)
    );
    let o = run_script(&["verify", d, bin, "5", "5"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// What cannot run is refused before the run takes the directory, and a
/// build that fails is named on standard error with the last line the
/// binary wrote, not only in its log.
#[test]
fn a_step_that_cannot_run_is_named_on_standard_error() {
    let dir = scratch("run-script-errors");
    let d = dir.to_str().unwrap();
    let bin = stand_in(&dir);
    let bin = bin.as_str();
    let not_executable = dir.join("not-executable");
    fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    for (args, says) in [
        (
            vec!["all", d, not_executable.to_str().unwrap()],
            "is not an executable file",
        ),
        (vec!["all", d, d], "is not an executable file"),
        (vec!["all", d], "usage: awari-run.sh"),
        (vec!["verify", d, bin, "5", "3"], "FROM (5) is above TO (3)"),
        // Past the run's levels, and past the shell's integers (whose
        // comparison failed with the shell's own error and a false "FROM
        // is above TO").
        (
            vec!["verify", d, bin, "0", "37"],
            "FROM and TO must be levels 0..36, not '0' and '37'",
        ),
        (
            vec!["verify", d, bin, "1", "99999999999999999999"],
            "FROM and TO must be levels 0..36",
        ),
        (
            vec!["verify", d, bin, "5", "6", "4"],
            "CHECKS must be 2 or 3",
        ),
    ] {
        let o = run_script(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(!dir.join("run.lock").exists(), "{args:?}");
    }

    // A run stopped by a signal says so: the script waits for the step
    // under way, then exits 2 naming the signal (it used to say nothing).
    let run = Command::new("sh")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/awari-run.sh"))
        .args(["build", d, bin])
        .env("SLEEP_BUILD", "1")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let calls = dir.join("calls");
    while !fs::read_to_string(&calls).is_ok_and(|c| c.contains("build")) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-TERM", &run.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = run.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr), "awari-run.sh: stopped by SIGTERM\n");
    fs::remove_file(&calls).unwrap();

    let o = run_script(&["all", d, bin], &[("FAIL_BUILD", "2")]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "awari-run.sh: build --levels 0..34,36 failed (exit 2); it last said: \
             mancaladb: stand-in build failure; see {d}/stderr.log\n"
        )
    );
}
