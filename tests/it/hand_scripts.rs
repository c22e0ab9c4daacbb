//! The scripts run by hand when a figure goes into BENCHMARKS.md (CI runs
//! none of them, so they can rot unseen): how they take their settings,
//! refuse bad ones and report. Each runs here with stand-ins for cargo
//! (which would build), the binaries and mpirun, so nothing is built or
//! measured and each test takes well under a second.
//!
//! What they once got wrong:
//! * `bench-serve.sh` changes to the repository's root first, so a relative
//!   DB or BIN named a file there, not the caller's; and it answered a
//!   count that was not a number with a panic (exit 101) after building.
//! * `bench-probe.sh` likewise took a relative DIR from the root, and
//!   answered a bad count, a level not there or a missing raw copy with a
//!   panic, after building.
//! * `api-fuzz.sh` took a relative DB from the root and a relative VENV
//!   from there too: it made the venv in the repository, then ran
//!   Schemathesis from its own scratch directory, where that path named
//!   nothing (exit 127).
//! * `bench-mpi.sh` built in the repository's target/mpi whatever
//!   CARGO_TARGET_DIR said, and took any MAX (a word failed under mpirun).
//! * `lower-reads.sh` ended with `cp`'s exit status 1 and its message for
//!   a table it could not link, and took any LEVEL.
//! * `line-lengths.py` answered a missing or bad argument with a
//!   traceback (exit 1).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::scratch;

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

/// Writes an executable shell script `body` at `path`.
fn stub(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// `bash SCRIPT` run from `cwd` with `env`, with `work/bin` (the stand-ins
/// for cargo and mpirun) first in PATH, `work/target` as cargo's target
/// dir, and every stand-in's log in `work/log`.
fn run(script_name: &str, args: &[&str], work: &Path, cwd: &Path, env: &[(&str, &str)]) -> Output {
    // cargo: says it ran (and with which target dir), builds nothing.
    stub(
        &work.join("bin/cargo"),
        "echo \"cargo $* in $CARGO_TARGET_DIR\" >> \"$STUB_LOG\"",
    );
    let path = format!(
        "{}:{}",
        work.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("bash");
    command
        .arg(script(script_name))
        .args(args)
        .current_dir(cwd)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", work.join("target"))
        .env("STUB_LOG", work.join("log"));
    for name in [
        "DB", "BIN", "DIR", "VENV", "LEVELS", "REQUESTS", "CLIENTS", "PROBES", "WORK",
    ] {
        command.env_remove(name);
    }
    command
        .envs(env.iter().copied())
        .output()
        .expect("run bash")
}

fn log(work: &Path) -> String {
    fs::read_to_string(work.join("log")).unwrap_or_default()
}

/// Asserts that `o` was refused with exit status 2 and the one line
/// `wanted` (in part) on standard error, before cargo built anything.
#[track_caller]
fn refused(o: &Output, work: &Path, wanted: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(wanted), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!log(work).contains("cargo"), "{}", log(work));
}

/// A server stand-in: logs its arguments, announces an address as `serve`
/// does and waits to be stopped.
const SERVER: &str = "echo \"server $*\" >> \"$STUB_LOG\"\n\
                      echo 'listening on http://127.0.0.1:9/'\n\
                      exec sleep 30";

/// A directory `dir` holding (empty) awari tables of `levels`.
fn tables(dir: &Path, levels: impl IntoIterator<Item = usize>) {
    fs::create_dir_all(dir).unwrap();
    for n in levels {
        fs::write(dir.join(format!("awari-{n:02}.mdb")), "").unwrap();
    }
}

#[test]
fn bench_serve_takes_db_and_bin_from_the_callers_directory() {
    let work = scratch("hand-bench-serve");
    let caller = work.join("caller");
    tables(&caller.join("db"), 12..=16);
    stub(&caller.join("old-bin"), SERVER);
    stub(
        &work.join("target/release/examples/load_test"),
        "echo \"load_test $*\" >> \"$STUB_LOG\"\nprintf 'requests\\tclients\\n%s\\t%s\\n' \"$2\" \"$3\"",
    );
    let o = run(
        "bench-serve.sh",
        &[],
        &work,
        &caller,
        &[
            ("DB", "db"),
            ("BIN", "./old-bin"),
            ("REQUESTS", "10"),
            ("CLIENTS", "1 2"),
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (db, bin) = (caller.join("db"), caller.join("old-bin"));
    let log = log(&work);
    assert!(
        log.contains(&format!(
            "server serve --db {} --addr 127.0.0.1:0",
            db.display()
        )),
        "{log}"
    );
    assert!(
        log.contains("load_test 127.0.0.1:9 10 2 12,13,14,15,16"),
        "{log}"
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0].split(';').next().unwrap(),
        format!("# {} serve --db {}", bin.display(), db.display()),
        "{out}"
    );
    assert_eq!(lines[1..], ["requests\tclients", "10\t1", "10\t2"], "{out}");
}

#[test]
fn bench_serve_refuses_bad_settings_before_building() {
    let work = scratch("hand-bench-serve-refuses");
    tables(&work.join("db"), 12..=16);
    let db = work.join("db");
    let db = db.to_str().unwrap();
    for (env, wanted) in [
        (
            "REQUESTS",
            "REQUESTS must be a number of requests, not 'many'",
        ),
        ("LEVELS", "LEVELS must be levels such as 12,16, not 'many'"),
        (
            "CLIENTS",
            "CLIENTS must be client counts such as \"1 8\", not 'many'",
        ),
    ] {
        let o = run(
            "bench-serve.sh",
            &[],
            &work,
            &work,
            &[("DB", db), (env, "many")],
        );
        refused(&o, &work, wanted);
    }
    // A level not there, named with the directory as the caller meant it.
    tables(&work.join("small"), 0..=12);
    let o = run("bench-serve.sh", &[], &work, &work, &[("DB", "small")]);
    refused(
        &o,
        &work,
        &format!("no level 13 in {}", work.join("small").display()),
    );
}

#[test]
fn bench_probe_takes_dir_from_the_callers_directory() {
    let work = scratch("hand-bench-probe");
    let dir = work.join("tables");
    tables(&dir, 0..=12);
    fs::create_dir_all(dir.join("raw/awari")).unwrap();
    fs::write(dir.join("raw/awari/scores.12"), "").unwrap();
    stub(
        &work.join("target/release/examples/probe_bench"),
        "echo \"probe_bench $*\" >> \"$STUB_LOG\"\nprintf 'level\\tmode\\n12\\t%s\\n' \"$2\"",
    );
    let env = [("DIR", "tables"), ("LEVELS", "12"), ("PROBES", "1000")];
    let o = run("bench-probe.sh", &[], &work, &work, &env);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let log = log(&work);
    let runs: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("probe_bench"))
        .collect();
    assert_eq!(runs.len(), 3, "{log}");
    assert_eq!(
        runs[0],
        format!("probe_bench {} mutex 12 1000", dir.display())
    );
    assert!(runs[1].ends_with(" compressed 12 1000"), "{log}");
    assert_eq!(
        runs[2],
        format!("probe_bench {} raw 12 1000", dir.display())
    );
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        ["level\tmode", "12\tmutex", "12\tcompressed", "12\traw"]
    );

    // Settings that the benchmark would answer with a panic, after a build.
    fs::remove_file(work.join("log")).unwrap();
    let dir = dir.to_str().unwrap();
    let wanted = "PROBES must be a number of probes, not '2e6'";
    let o = run(
        "bench-probe.sh",
        &[],
        &work,
        &work,
        &[("DIR", dir), ("PROBES", "2e6")],
    );
    refused(&o, &work, wanted);
    let o = run(
        "bench-probe.sh",
        &[],
        &work,
        &work,
        &[("DIR", dir), ("LEVELS", "11")],
    );
    refused(&o, &work, &format!("no raw copy of level 11 in {dir}"));
    let o = run(
        "bench-probe.sh",
        &[],
        &work,
        &work,
        &[("DIR", dir), ("LEVELS", "12,13")],
    );
    refused(&o, &work, &format!("no level 13 in {dir}"));
}

#[test]
fn api_fuzz_takes_db_and_venv_from_the_callers_directory() {
    let work = scratch("hand-api-fuzz");
    tables(&work.join("db"), [16]);
    stub(&work.join("target/release/mancaladb"), SERVER);
    // Schemathesis: says where it ran and on what; no venv is made.
    stub(
        &work.join("venv/bin/schemathesis"),
        "echo \"schemathesis $* in $(pwd)\" >> \"$STUB_LOG\"",
    );
    let o = run(
        "api-fuzz.sh",
        &[],
        &work,
        &work,
        &[("DB", "db"), ("VENV", "venv"), ("EXAMPLES", "3")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let log = log(&work);
    assert!(
        log.contains(&format!("server serve --db {} ", work.join("db").display())),
        "{log}"
    );
    assert!(
        log.contains(
            "schemathesis --config-file schemathesis.toml run http://127.0.0.1:9/api/openapi.json"
        ),
        "{log}"
    );
    assert!(log.contains("--max-examples 3 --seed 1"), "{log}");
}

#[test]
fn bench_mpi_builds_under_cargo_target_dir_and_refuses_a_bad_max() {
    let work = scratch("hand-bench-mpi");
    let scratch_dir = work.join("w");
    let w = scratch_dir.to_str().unwrap();
    for args in [&["x"][..], &["12", "13"], &["49"]] {
        let o = run("bench-mpi.sh", args, &work, &work, &[("WORK", w)]);
        refused(&o, &work, "usage: scripts/bench-mpi.sh [MAX]");
    }
    // mpirun: says what it was given, then fails as a job that cannot start.
    stub(
        &work.join("bin/mpirun"),
        "echo \"mpirun $*\" >> \"$STUB_LOG\"\necho 'no slots' >&2\nexit 1",
    );
    let o = run("bench-mpi.sh", &["4"], &work, &work, &[("WORK", w)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err, "bench-mpi.sh: the P=1 build failed:\nno slots\n");
    let mpi = work.join("target/mpi");
    let log = log(&work);
    assert!(
        log.contains(&format!(
            "cargo build --release --quiet --features mpi in {}",
            mpi.display()
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "{} build --distributed",
            mpi.join("release/mancaladb").display()
        )),
        "{log}"
    );
    // Its scratch directory is gone.
    assert_eq!(fs::read_dir(&scratch_dir).unwrap().count(), 0);
}

#[test]
fn lower_reads_refuses_bad_arguments_with_one_line() {
    let work = scratch("hand-lower-reads");
    let run = |args: &[&str]| {
        Command::new("sh")
            .arg(script("lower-reads.sh"))
            .args(args)
            .env("WORK", work.join("w"))
            .output()
            .expect("run sh")
    };
    let tables = work.to_str().unwrap();
    for (args, wanted) in [
        (
            &[tables, "x", "100", "bin"][..],
            "LEVEL must be a seed count, not x",
        ),
        (
            &[tables, "8", "lots", "bin"],
            "LIMIT_MB must be a number of MB, not lots",
        ),
        (
            &["/no/such/dir", "8", "100", "bin"],
            "no directory /no/such/dir",
        ),
        (&[tables, "8", "100", "bin"], "cannot link"),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(wanted), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn line_lengths_refuses_bad_arguments_with_one_line() {
    for args in [
        &[][..],
        &["db", "12,x", "5"],
        &["db", "12", "0"],
        &["db", "12"],
    ] {
        let o = Command::new("python3")
            .arg(script("line-lengths.py"))
            .args(args)
            .output()
            .expect("run python3");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("line-lengths.py: "), "{args:?}: {err}");
        assert!(
            err.contains("usage: line-lengths.py DB LEVELS COUNT"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}
