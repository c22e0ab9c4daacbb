//! The command line end to end: build, query (text, JSON, line), stats,
//! export, and every bad input giving one line and exit code 2.

use crate::common::{
    assert_committed, assert_success, awari_db, bin, file_sha256, refuses, run, scratch, succeeds,
};

/// `query --json` of `pits`, as text, but for its `levels`, given apart
/// as data with `verified` left out (it depends on the tests run before).
fn query_json(pits: &str) -> (String, serde_json::Value) {
    let db = awari_db().to_str().unwrap();
    let text = succeeds(&["query", "--db", db, "--json", pits]);
    let (analysis, levels) = text.trim().split_once(",\"levels\":").expect("levels last");
    let mut levels: serde_json::Value =
        serde_json::from_str(levels.strip_suffix('}').unwrap()).unwrap();
    levels.as_object_mut().unwrap().remove("verified").unwrap();
    (format!("{analysis}}}"), levels)
}

#[test]
fn known_values() {
    // The published example: a draw; moves from pits 0..5 worth -1 -1 -2 -2 -2 0.
    let (analysis, levels) = query_json("1 1 1 1 1 2 4 2 3 0 0 0");
    assert_eq!(
        analysis,
        "{\"seeds\":16,\"value\":0,\"category\":\"draw\",\"moves\":[\
{\"pit\":0,\"value\":-1,\"captures\":0,\"category\":\"loss\"},\
{\"pit\":1,\"value\":-1,\"captures\":0,\"category\":\"loss\"},\
{\"pit\":2,\"value\":-2,\"captures\":0,\"category\":\"loss\"},\
{\"pit\":3,\"value\":-2,\"captures\":0,\"category\":\"loss\"},\
{\"pit\":4,\"value\":-2,\"captures\":0,\"category\":\"loss\"},\
{\"pit\":5,\"value\":0,\"captures\":3,\"category\":\"draw\"}],\"best\":[5],\"valued_by\":\"level\"}"
    );
    // README: read from levels 13 and 16, resting on 0..14 and 16.
    let rests_on: Vec<usize> = (0..=14).chain([16]).collect();
    assert_eq!(
        levels,
        serde_json::json!({"read": [13, 16], "rests_on": rests_on, "missing": []})
    );
    // Its only move takes everything.
    let (analysis, _) = query_json("0 0 0 0 0 2 1 1 0 0 0 0");
    assert!(analysis.starts_with("{\"seeds\":4,\"value\":4,"));
    // The capture from pit 5 would starve the opponent: pit 0 is forced.
    assert_eq!(
        query_json("1,0,0,0,0,1,1,0,0,0,0,0").0,
        "{\"seeds\":3,\"value\":-3,\"category\":\"loss\",\"moves\":[\
{\"pit\":0,\"value\":-3,\"captures\":0,\"category\":\"loss\"}],\"best\":[0],\"valued_by\":\"level\"}"
    );
    let (analysis, _) = query_json("2 2 2 2 2 2 2 2 2 0 0 0");
    assert!(analysis.starts_with("{\"seeds\":18,\"value\":12,"));
    // Not stored (every opponent pit filled): valued from its moves.
    assert!(
        query_json("1 1 1 1 1 1 1 1 1 1 1 1")
            .0
            .ends_with("\"valued_by\":\"moves\"}")
    );
}

#[test]
fn text_query_and_principal_line() {
    let db = awari_db().to_str().unwrap();
    let out = run(&[
        "query", "--db", db, "--line", "0", "0", "0", "0", "0", "2", "1", "1", "0", "0", "0", "0",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("value:  +4 (win for the player to move)"),
        "{text}"
    );
    assert!(text.contains("pit 5: value +4, captures 4"), "{text}");
    assert!(text.contains("\nbest:   pit 5\n"), "{text}");
    assert!(text.contains("end: game over"), "{text}");
    // No seeds to sow: no moves, and so no best one.
    let text = succeeds(&["query", "--db", db, "0 0 0 0 0 0 1 1 1 1 1 1"]);
    assert!(
        text.contains(
            "\nmoves:  none: the player to move has no seeds; the opponent takes the rest\n"
        ) && !text.contains("best:"),
        "{text}"
    );
    // The 12-seed start (every pit filled) is outside the stored domain and
    // is valued from its children.
    let text = succeeds(&["query", "--db", db, "--line", "1 1 1 1 1 1 1 1 1 1 1 1"]);
    assert!(text.contains("not stored: valued from its moves"), "{text}");
    // A draw (the 12-seed game's value): the best line repeats.
    assert!(
        text.contains("end: the position before ply ") && text.contains(" repeats: endless play"),
        "{text}"
    );
}

#[test]
fn a_board_outside_the_stored_domain_needs_only_its_childrens_levels() {
    // Levels 0..5 only. A 6-seed board with every opponent pit filled is
    // not stored: valued from its moves. With no seeds to sow, the game is
    // over (-6) whether level 6 is there or not.
    let dir = scratch("out-of-domain");
    let d = dir.to_str().unwrap();
    succeeds(&["build", "--levels", "0..5", "--db", d]);
    let text = succeeds(&["query", "--json", "--db", d, "0 0 0 0 0 0 1 1 1 1 1 1"]);
    assert!(text.contains("\"value\":-6"));
    // A 7-seed board whose one move captures 2 (pit 5 into pit 6) reads
    // level 5 only: valued without level 7.
    let out = run(&["query", "--json", "--db", d, "0 0 0 0 0 1 1 1 1 1 1 1"]);
    assert_success(&out);
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&a["seeds"], &a["moves"][0]["captures"]),
        (&7.into(), &2.into()),
        "{a}"
    );
    // A stored 6-seed board names its own level as the one to build.
    let out = run(&["query", "--db", d, "1 1 1 1 1 1 0 0 0 0 0 0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("level 6 (awari) not found"));
    // Commands over a range name every level of it that is missing, and
    // the build that makes them all (levels 0..5 are there).
    let vu = scratch("export-missing");
    let out_dir = vu.to_str().unwrap();
    for args in [
        &["verify", "--db", d, "--seeds", "6..7"][..],
        &[
            "export", "--format", "vu", "--db", d, "--seeds", "4..7", "--out", out_dir,
        ][..],
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("levels 6..7 (awari) not found in")
                && err.contains("build them and the levels they read: mancaladb build --rules awari --levels 0..7 --db"),
            "{args:?}: {err}"
        );
    }
    assert!(!vu.join("scores.4").exists(), "nothing exported");
}

#[test]
fn a_principal_line_that_cycles_says_so() {
    // Two lone seeds chasing each other: endless play.
    let db = awari_db().to_str().unwrap();
    let out = run(&[
        "query",
        "--db",
        db,
        "--json",
        "--line",
        "0 0 0 0 1 0 0 0 0 0 1 0",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("\"value\":0,") && text.contains("\"line_end\":\"cycle\""),
        "{text}"
    );
}

/// Some lines are longer than 200 plies (BENCHMARKS, "Principal lines"):
/// this one is followed whole to its cycle, not cut off as `limit`.
#[test]
fn a_line_of_more_than_200_plies_is_followed_to_its_end() {
    let db = awari_db().to_str().unwrap();
    let args = [
        "query",
        "--db",
        db,
        "--json",
        "--line",
        "0 0 4 1 0 1 0 7 0 0 0 1",
    ];
    let out = run(&args);
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["line"].as_array().unwrap().len(), 208, "{answer}");
    assert_eq!(answer["line_end"], "cycle");
}

/// `export --format vu` of levels `seeds` of `db` into `out`.
fn export_args<'a>(db: &'a str, seeds: &'a str, out: &'a str) -> [&'a str; 9] {
    [
        "export", "--format", "vu", "--db", db, "--seeds", seeds, "--out", out,
    ]
}

#[test]
fn exported_vu_files_match_published_hashes_and_sizes() {
    let out_dir = scratch("vu-export");
    let db = awari_db().to_str().unwrap();
    let said = succeeds(&[
        "export",
        "--format",
        "vu",
        "--db",
        db,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        said.starts_with("wrote scores.N for levels 0..18 to "),
        "{said}"
    );
    for (n, sha) in [
        (
            0,
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        ),
        (
            6,
            "421692ea9842e97c127a7751c0ab9517dfa810db77ef79a41da4e2d6782288e3",
        ),
        (
            12,
            "68afa309a2e62cd2f1998fef7710a5ba3e01ef624ae0a3daa46a5a0d2b52e14c",
        ),
    ] {
        assert_eq!(
            file_sha256(&out_dir.join(format!("scores.{n}"))),
            sha,
            "scores.{n}"
        );
    }
    for n in 0..=18 {
        let len = std::fs::metadata(out_dir.join(format!("scores.{n}")))
            .unwrap()
            .len();
        assert_eq!(len, mancaladb::oware::level_size(n));
    }
    // --seeds: those levels only, the same bytes; a level not built is an
    // error before anything is written.
    let some = scratch("vu-export-some");
    succeeds(&export_args(db, "5..6", some.to_str().unwrap()));
    let mut written: Vec<String> = std::fs::read_dir(&some)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("scores."))
        .collect();
    written.sort();
    assert_eq!(written, ["scores.5", "scores.6"]);
    assert_eq!(
        file_sha256(&some.join("scores.6")),
        file_sha256(&out_dir.join("scores.6"))
    );
    let none = scratch("vu-export-none").join("out");
    crate::common::refuses(
        &export_args(db, "18..19", none.to_str().unwrap()),
        "level 19",
    );
    assert!(!none.join("scores.18").exists());
    // `known` on them: VU files are never recorded as verified, and what
    // is missing is made as tables and exported there.
    let vu = out_dir.to_str().unwrap();
    let text = succeeds(&["known", "--vu", vu]);
    assert!(
        text.contains("1 per pit (12 seeds): value +0, draw; levels read 10, 12; not recorded as verified: VU files never are"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "take the files here as tables (mancaladb import --vu {vu} --db DB), build the rest (mancaladb build --levels 0..22,24 --db DB) and export them here: mancaladb export --format vu --db DB --out {vu}"
        )),
        "{text}"
    );
    // A level missing there: the export of that one level.
    crate::common::refuses(
        &["query", "--vu", vu, "19 0 0 0 0 0 0 0 0 0 0 0"],
        &format!(
            "scores.19 not found in {vu}: download the published file into it, or export a table there: mancaladb export --format vu --db DB --seeds 19 --out {vu}"
        ),
    );
    // Given as a table directory, it is said to be one of VU files.
    crate::common::refuses(
        &["stats", "--db", vu],
        &format!("it holds scores.N files: read them in place with --vu {vu}, or import them"),
    );
}

#[test]
fn built_tables_match_committed_checksums() {
    assert_committed(awari_db(), 18);
}

#[test]
fn rerunning_a_build_skips_finished_levels() {
    let db = awari_db().to_str().unwrap();
    let text = succeeds(&["build", "--max-seeds", "18", "--db", db]);
    assert_eq!(text.matches("already built").count(), 19, "{text}");
}

/// A level's report measures its working memory (issue 11, item 1), and
/// the build log keeps the figure: `RssAnon` at least the level's values
/// (one byte a position, held until the table is written) and within the
/// budget of 1.25 bytes a position beside a fixed 16 MiB (the process's own
/// heap, the threads' stacks), peak RSS no less than it, and the bytes
/// read from disk known.
#[test]
fn a_levels_report_measures_its_working_memory() {
    let dir = crate::common::built("working-memory", mancaladb::oware::Rules::Awari, 15);
    let text = succeeds(&["build", "--max-seeds", "16", "--db", dir.to_str().unwrap()]);
    let log = std::fs::read_to_string(dir.join("build-log.tsv")).unwrap();
    let line = log
        .lines()
        .find(|l| l.starts_with("awari\t16\t"))
        .expect("level 16 logged");
    // rules level positions seconds threads ranks exchanged rounds anon read resumed
    let f: Vec<u64> = line
        .split('\t')
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let (positions, anon) = (f[1], f[7]);
    assert_eq!(positions, mancaladb::oware::level_size(16));
    assert!(
        anon >= positions && anon <= positions * 5 / 4 + (16 << 20),
        "{line}"
    );
    let printed = text.lines().find(|l| l.starts_with("level 16:")).unwrap();
    let mib_after = |key: &str| -> u64 {
        let rest = &printed[printed.find(key).expect(key) + key.len()..];
        rest.split(" MiB").next().unwrap().parse().unwrap()
    };
    let (rss, anon_mib) = (mib_after("peak RSS "), mib_after("(RssAnon "));
    assert_eq!(
        anon_mib,
        (anon as f64 / 1048576.0).round() as u64,
        "{printed}"
    );
    assert!(rss >= anon_mib, "{printed}");
    assert!(printed.contains(" GB read from disk"), "{printed}");
    // Its rate is its positions over its seconds (printed to 1/100 s).
    let number_before = |key: &str| -> f64 {
        let head = &printed[..printed.find(key).expect(key)];
        head.rsplit(' ')
            .find(|w| !w.is_empty())
            .unwrap()
            .parse()
            .unwrap()
    };
    let (seconds, rate) = (number_before(" s,"), number_before(" pos/s"));
    assert!(
        (positions as f64 / rate - seconds).abs() <= 0.006,
        "{printed}"
    );
}

#[test]
fn flag_values_are_judged_by_their_own_bounds() {
    // More digits than an i128 holds, either side of 0.
    let huge = format!("1{}", "0".repeat(40));
    let minus_huge = format!("-{huge}");
    let cases: [(&[&str], &str); 16] = [
        // A range past the last level or seed count names the bound it passes.
        (
            &["verify", "--seeds", "0..99999"],
            "99999 is more than 48: give N or N..M, Oware levels 0..=48",
        ),
        (
            &["census", "--seeds", "3..65"],
            "65 is more than 64: give N or N..M, seed counts 0..=64",
        ),
        // Values that start with '-' reach the flag's check.
        (
            &["verify", "--seeds", "-1..3"],
            "give N or N..M, Oware levels 0..=48",
        ),
        (
            &["census", "--seeds", "-1..3"],
            "give N or N..M, seed counts 0..=64",
        ),
        (&["serve", "--port", "-1"], "give HOST:PORT"),
        // --checks in the library's words, like Python's.
        (
            &["verify", "--checks", "x"],
            "checks is 1 (integrity), 2 (and consistency) or 3 (and re-derivation), got x",
        ),
        (
            &["verify", "--checks", "99999999999999999999"],
            "got 99999999999999999999",
        ),
        // Each flag states its own bound, however many digits.
        (
            &["serve", "--cache-mib", "18446744073709551616"],
            &format!("must be at most {}", usize::MAX >> 20),
        ),
        (&["serve", "--cache-mib", "-1"], "must be at least 0"),
        (
            &["serve", "--cache-mib", &huge],
            &format!("must be at most {}", usize::MAX >> 20),
        ),
        (&["serve", "--cache-mib", &minus_huge], "must be at least 0"),
        (
            &["build", "--threads", "18446744073709551616"],
            "18446744073709551616 threads on",
        ),
        (
            &[
                "loops",
                "--max-laps",
                "-0",
                "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
            ],
            "must be at least 1",
        ),
        (
            &[
                "loops",
                "--max-laps",
                "-1",
                "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
            ],
            "must be at least 1",
        ),
        (
            &[
                "loops",
                "--max-laps",
                "18446744073709551616",
                "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
            ],
            "must be at most 18446744073709551615",
        ),
        // An empty word is a count left out, not nothing.
        (
            &[
                "query", "", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "1",
            ],
            "an Oware board: word 1 of 12 is empty, not a pit count",
        ),
    ];
    for (args, want) in cases {
        refuses(args, want);
    }
    // A flag where a number belongs is a missing number, not the number.
    for args in [
        &["verify", "--checks", "--quick"][..],
        &["loops", "--pit", "--json", "3"],
    ] {
        refuses(args, "a value is required for");
    }
    // Spaces around a number, as every numeric flag takes them.
    let db = awari_db().to_str().unwrap();
    succeeds(&["verify", "--checks", " 1", "--seeds", "3", "--db", db]);
    // The bound is a level: `--seeds 48` is taken, and a directory without
    // it (and the levels it reads) says so, rather than the flag.
    let out = run(&["verify", "--seeds", "48", "--db", db]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("mancaladb: levels 19..46,48 (awari) not found in "),
        "{err}"
    );
}

#[test]
fn bad_input_is_refused_with_one_line_and_exit_2() {
    // A negative number is a bad value of its flag, said as such (clap
    // used to take it for an unknown flag).
    refuses(
        &["build", "--max-seeds", "-1"],
        "invalid value '-1' for '--max-seeds",
    );
    refuses(
        &["verify", "--seeds", "-1"],
        "invalid value '-1' for '--seeds",
    );
    let db = awari_db().to_str().unwrap();
    refuses(&["query", "--db", db, "1 2 3"], "has 12 pits, got 3");
    refuses(
        &["build", "--db", db, "--raw-cache", "8X"],
        "give a size such as 8G, 500M or 0, or 'all'",
    );
    refuses(
        &["query", "--db", db, "1 1 1 1 1 1 1 1 1 1 1 -1"],
        "is negative",
    );
    refuses(
        &["query", "--db", db, "1 1 1 1 1 1 1 1 1 1 1 x"],
        "not a whole number",
    );
    refuses(
        &["query", "--db", db, "9 9 9 9 9 9 0 0 0 0 0 0"],
        "holds 54 seeds; a game holds at most 48",
    );
    refuses(
        &["query", "--db", db, "49 0 0 0 0 0 0 0 0 0 0 0"],
        "exceeds",
    );
    // 20 seeds: level 20 is not built here; say how to build it.
    refuses(
        &["query", "--db", db, "4 4 4 4 4 0 0 0 0 0 0 0"],
        "mancaladb build --rules awari --levels 0..18,20 --db",
    );
    refuses(
        &[
            "query",
            "--db",
            "/nonexistent/db",
            "1 0 0 0 0 0 0 0 0 0 0 0",
        ],
        "/nonexistent/db: no such directory",
    );
    // A position that reads no level (its player to move has no seeds) is
    // answered without the directory.
    let over = run(&[
        "query",
        "--db",
        "/nonexistent/db",
        "0 0 0 0 0 0 1 1 1 1 1 1",
    ]);
    let text = String::from_utf8_lossy(&over.stdout);
    assert!(
        over.status.success() && text.contains("value:  -6"),
        "{over:?}"
    );
    // A directory that is not there is more likely a typo than a wish to
    // build into it: every reader says so, not "build it there".
    for args in [
        &["stats", "--db", "/nonexistent/db"][..],
        &["known", "--db", "/nonexistent/db"],
        &["verify", "--db", "/nonexistent/db"],
        &[
            "export",
            "--format",
            "vu",
            "--db",
            "/nonexistent/db",
            "--out",
            "/nonexistent/vu",
        ],
    ] {
        refuses(args, "/nonexistent/db: no such directory");
    }
    refuses(
        &["query", "--rules", "kalah", "1 0 0 0 0 0 0 0 0 0 0 0"],
        "unknown rule set 'kalah'",
    );
    refuses(
        &["build", "--max-seeds", "49", "--db", db],
        "level 49: levels go up to 48",
    );
    refuses(
        &["build", "--threads", "0", "--db", db],
        "'--threads <THREADS>': must be at least 1",
    );
    refuses(&["query", "--bogus"], "unexpected argument");
    // VU files hold awari values: other rules would value them wrongly.
    for command in ["query", "stats", "verify", "known"] {
        let mut args = vec![command, "--vu", db, "--rules", "abapa"];
        if command == "query" {
            args.push("1 0 0 0 0 0 0 0 0 0 0 0");
        }
        refuses(
            &args,
            "the VU files hold awari values only: no abapa values are read from them or written to them",
        );
    }
    let out = scratch("vu-abapa");
    let out = out.to_str().unwrap();
    refuses(
        &["import", "--vu", db, "--db", out, "--rules", "abapa"],
        "the VU files hold awari values only: no abapa values are read from them or written to them",
    );
    refuses(
        &[
            "export", "--format", "vu", "--db", db, "--out", out, "--rules", "abapa",
        ],
        "the VU files hold awari values only: no abapa values are read from them or written to them",
    );
    refuses(&["serve", "--db", db, "--vu", db], "cannot be used with");
    refuses(
        &["stats", "--db", db, "--vu", db],
        "'--db <DB>' cannot be used with '--vu <VU>'",
    );
    // `serve` serves both rule sets; each request names its own.
    refuses(
        &["serve", "--rules", "abapa"],
        "unexpected argument '--rules'",
    );
    // More seconds than a `Duration` holds.
    refuses(
        &[
            "census",
            "--seeds",
            "2",
            "--checkpoint-secs",
            "1e30",
            "--db",
            db,
        ],
        "1e30 seconds is more than can be waited",
    );
    refuses(
        &[
            "census",
            "--seeds",
            "2",
            "--checkpoint-secs",
            "-1",
            "--db",
            db,
        ],
        "must be a number of seconds, 0 or more",
    );
    #[cfg(not(feature = "mpi"))]
    refuses(
        &["build", "--distributed", "--db", db],
        "--distributed needs a build with MPI: cargo build --release --features mpi",
    );
}

/// A directory of no levels and no `scores.N` files is told to build them,
/// under the rules asked for, not to read it as VU files.
#[test]
fn a_directory_of_no_levels_is_told_to_build_them() {
    let dir = scratch("cli-no-levels");
    let quoted = mancaladb::error::shell_quote(&dir);
    for rules in ["awari", "abapa"] {
        let out = run(&["stats", "--rules", rules, "--db", dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "mancaladb: {rules} levels not found in {}: build them: mancaladb build --rules {rules} --db {quoted}",
                dir.display()
            )
        );
    }
}

/// Started by mpirun among several ranks without `--distributed`, each
/// process would build alone and all but one would find the directory
/// locked: `build` says what is missing and creates nothing. One rank of
/// its own builds as usual.
#[test]
fn a_build_started_as_several_mpi_ranks_asks_for_distributed() {
    let db = scratch("cli-mpi-ranks").join("db");
    for (var, ranks) in [("OMPI_COMM_WORLD_SIZE", "2"), ("PMI_SIZE", "3")] {
        let out = bin()
            .args(["build", "--max-seeds", "4", "--db"])
            .arg(&db)
            .env(var, ranks)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "mancaladb: started as one of {ranks} MPI ranks ({var}={ranks}) without \
                 --distributed: add --distributed to build together, or run one process"
            )
        );
        assert!(!db.exists(), "{var}");
    }
    let out = bin()
        .args(["build", "--max-seeds", "4", "--db"])
        .arg(&db)
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .output()
        .unwrap();
    assert_success(&out);
    assert_committed(&db, 4);
}

/// `--raw-cache` as the command line takes it (none, a size, `all`) keeps
/// the raw copies it says and builds the same tables, and
/// `MANCALADB_CHECKPOINT_SECS` takes a checkpoint after every step at 0
/// and none when `off`.
#[test]
fn raw_cache_sizes_and_checkpoint_settings_from_the_command_line() {
    let base = scratch("cli-raw-cache");
    // What the build leaves: the largest levels level 10 would read (8,
    // 75,504 bytes, and 7, 31,812) within the budget: 110 KiB takes both,
    // but not level 6 (12,375 more).
    for (cache, checkpoints, copies) in [
        ("0", "off", vec![]),
        ("110K", "0", vec![7, 8]),
        ("all", "off", (0..=8).collect::<Vec<usize>>()),
    ] {
        let db = base.join(cache);
        let out = bin()
            .args(["build", "--max-seeds", "8", "--raw-cache", cache, "--db"])
            .arg(&db)
            .env("MANCALADB_CHECKPOINT_SECS", checkpoints)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cache}: {err}");
        assert_committed(&db, 8);
        let mut kept: Vec<usize> = std::fs::read_dir(db.join("raw/awari"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .map(|name| name.strip_prefix("scores.").unwrap().parse().unwrap())
            .collect();
        kept.sort();
        assert_eq!(kept, copies, "--raw-cache {cache}");
        let taken = err
            .matches("level 8: checkpoint after the last threshold")
            .count();
        assert_eq!(
            taken,
            usize::from(checkpoints == "0"),
            "{checkpoints}: {err}"
        );
    }
}

/// `build --help` shows `--raw-cache`'s default as the flag takes it: 8G.
#[test]
fn the_raw_cache_default_is_shown_as_a_size() {
    let help = succeeds(&["build", "--help"]);
    assert!(help.contains("[default: 8G]"), "{help}");
}

/// `--raw-cache` takes sizes in K, M, G and T (powers of 1024, either
/// case) up to 2^60 bytes (1048576T), and refuses a negative size and one
/// past that.
#[test]
fn raw_cache_sizes_are_taken_in_their_units_and_bounded() {
    let base = scratch("cli-raw-cache-units");
    // Each budget holds levels 0..2's copies (a few hundred bytes).
    for cache in ["1M", "1g", "1T", "1048576T"] {
        let db = base.join(cache);
        succeeds(&[
            "build",
            "--max-seeds",
            "2",
            "--raw-cache",
            cache,
            "--db",
            db.to_str().unwrap(),
        ]);
        let mut kept: Vec<String> = std::fs::read_dir(db.join("raw/awari"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        kept.sort();
        assert_eq!(kept, ["scores.0", "scores.1", "scores.2"], "{cache}");
    }
    let db = base.join("refused");
    for cache in ["-1", "-1G", "1048577T"] {
        refuses(
            &["build", "--raw-cache", cache, "--db", db.to_str().unwrap()],
            &format!(
                "invalid value '{cache}' for '--raw-cache <RAW_CACHE>': give a size such as 8G, 500M or 0, or 'all'"
            ),
        );
    }
    assert!(!db.exists());
}

#[test]
fn known_lists_what_is_confirmed_and_what_is_missing() {
    let db = awari_db().to_str().unwrap();
    let text = succeeds(&["known", "--db", db]);
    // The 12-seed game is a draw (Romein & Bal's tables, whose level
    // hashes the suite checks), read from levels 10 and 12.
    assert!(
        text.contains("1 per pit (12 seeds): value +0, draw; levels read 10, 12;"),
        "{text}"
    );
    // 24 seeds needs levels 19..24 but 23: five levels.
    let missing: u64 = [19, 20, 21, 22, 24]
        .iter()
        .map(|&n| mancaladb::oware::level_size(n))
        .sum();
    assert!(
        text.contains(&format!(
            "2 per pit (24 seeds): needs levels 19..22,24 (5 missing): {missing} positions"
        )),
        "{text}"
    );
    // The 48-seed game needs everything but level 47 above 18.
    let missing: u64 = (19..=48)
        .filter(|&n| n != 47)
        .map(mancaladb::oware::level_size)
        .sum();
    assert!(
        text.contains(&format!("({} missing): {missing} positions", 29)),
        "{text}"
    );
    // And says how to build what is missing, level 47 left out, with the
    // memory of its largest level: more than this machine has, so not here
    // (where it has less than 254.6 GB), but over several.
    assert!(
        text.contains(&format!(
            "build them: mancaladb build --rules awari --levels 19..46,48 --db {db}"
        )),
        "{text}"
    );
    let level_48 = 1.25 * mancaladb::oware::level_size(48) as f64;
    assert!(
        text.contains(&format!(
            "level 48 needs {:.1} GB of working memory (1.25 bytes/position)",
            level_48 / 1e9
        )),
        "{text}"
    );
    let limit = mancaladb::build::memory_limit().expect("MemTotal in /proc/meminfo");
    if (limit.bytes as f64) < level_48 {
        assert!(
            text.contains(&format!("{limit} of memory, so not here, but over the ranks of several machines (`build --distributed`, README)")),
            "{text}"
        );
    }
    // One level missing is said as one.
    let ten = crate::common::built("known-one-missing", mancaladb::oware::Rules::Awari, 10);
    let out = run(&["known", "--db", ten.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let twelve = mancaladb::oware::level_size(12);
    assert!(
        text.contains(&format!(
            "1 per pit (12 seeds): needs level 12: {twelve} positions"
        )) && text.contains("build it: mancaladb build --rules awari --levels 12 --db"),
        "{text}"
    );
}

/// Every level this suite builds passes all three checks (abapa's and the
/// smaller ones are verified in tests/it/verify.rs).
#[test]
fn verify_passes_on_the_built_levels() {
    let db = awari_db().to_str().unwrap();
    let out = run(&["verify", "--db", db, "--json"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(text.matches("\"passed\":true,\"integrity\":\"pass\",\"consistency\":\"pass\",\"rederivation\":\"pass\"").count(), 19, "{text}");
}

/// `stats --json`: per level, the histogram adds up to the positions and to
/// wins + draws + losses, gives the mean, agrees with the text table (its
/// draws, mean and value:count list), the content sha256 is
/// `db/CHECKSUMS`'s, and level 0's one position (no seeds) is a draw.
#[test]
fn stats_json_adds_up_and_matches_the_text() {
    let committed = crate::common::committed_checksums();
    let db = awari_db().to_str().unwrap();
    let out = run(&["stats", "--db", db, "--json"]);
    assert_success(&out);
    let levels: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let levels = levels.as_array().unwrap();
    assert_eq!(levels.len(), 19);
    let text = String::from_utf8(run(&["stats", "--db", db]).stdout).unwrap();
    let mut means = Vec::new();
    for (n, l) in levels.iter().enumerate() {
        assert_eq!(l["seeds"], n);
        let positions = l["positions"].as_u64().unwrap();
        assert_eq!(positions, mancaladb::oware::level_size(n));
        let hist: Vec<u64> = l["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        assert_eq!(hist.len(), 2 * n + 1);
        assert_eq!(hist.iter().sum::<u64>(), positions);
        let wdl: u64 = ["wins", "draws", "losses"]
            .iter()
            .map(|k| l[*k].as_u64().unwrap())
            .sum();
        assert_eq!(wdl, positions);
        assert_eq!(l["draws"].as_u64().unwrap(), hist[n]);
        assert_eq!(
            l["wins"].as_u64().unwrap(),
            hist[n + 1..].iter().sum::<u64>()
        );
        // The mean value, from the histogram (the text table prints it to
        // four places).
        let mean = hist
            .iter()
            .enumerate()
            .map(|(i, &c)| (i as f64 - n as f64) * c as f64)
            .sum::<f64>()
            / positions as f64;
        let said = l["mean"].as_f64().unwrap();
        assert!(
            (said - mean).abs() < 1e-9,
            "level {n}: mean {said}, not {mean}"
        );
        means.push(mean);
        let content = committed
            .iter()
            .find(|(rules, level, ..)| rules == "awari" && *level == n)
            .map(|(_, _, content, _)| content.as_str());
        assert_eq!(l["content_sha256"].as_str(), content, "level {n}");
        let row = text.lines().nth(n + 1).unwrap();
        assert!(
            row.split_whitespace().nth(3) == Some(&hist[n].to_string()),
            "{row}"
        );
        assert_eq!(
            row.split_whitespace().nth(2),
            Some(format!("{mean:.4}").as_str()),
            "{row}"
        );
        // Then the histogram: value:count for each value some position
        // has, lowest first.
        let listed: Vec<String> = hist
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(i, c)| format!("{}:{c}", i as i64 - n as i64))
            .collect();
        assert_eq!(
            row.split_whitespace().skip(4).collect::<Vec<_>>(),
            listed,
            "{row}"
        );
    }
    assert_eq!(levels[0]["draws"], 1);
    // Level 0's one position has mean 0; the others are not all 0 (or a
    // mean stuck at 0 would pass).
    assert_eq!(means[0], 0.0);
    assert!(means.iter().any(|&m| m.abs() > 0.01), "{means:?}");
}

#[test]
fn completions_and_man_page_are_generated() {
    let script = succeeds(&["completions", "bash"]);
    assert!(script.contains("_mancaladb()") && script.contains("--max-seeds"));
    // The rule sets are offered by name.
    assert!(script.contains(r#"COMPREPLY=($(compgen -W "awari abapa" -- "${cur}"))"#));
    let page = succeeds(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH mancaladb"),
        "{page}"
    );
    // Every command it lists has a page (`help` has none).
    assert!(page.contains("mancaladb\\-build(1)"), "{page}");
    assert!(!page.contains("mancaladb\\-help"), "{page}");
    // Each command's page, with its flags, under the name the main page
    // gives it.
    let page = succeeds(&["man", "build"]);
    assert!(page.contains(".TH mancaladb-build"), "{page}");
    assert!(page.contains("max\\-seeds"), "{page}");
    // Its title carries the version, its flags no `--version`, which the
    // command does not take.
    assert!(page.contains(env!("CARGO_PKG_VERSION")), "{page}");
    assert!(!page.contains("\\-\\-version"), "{page}");
    refuses(
        &["man", "biuld"],
        "man biuld: no such command; one of build, query",
    );
    refuses(&["completions", "tcsh"], "invalid value 'tcsh'");
}

/// An error that names a path or a word with a line break or a terminal
/// escape in it is still one line: its control characters are escaped
/// (the missing directory `a\nb` printed as two lines).
#[test]
fn errors_stay_one_line_whatever_they_name() {
    let dir = scratch("one-line-errors");
    let odd = dir.join("a\nb\x1b[2J");
    let odd_text = odd.to_str().unwrap();
    // Missing, then there but empty (the remedy quotes it for the shell).
    refuses(
        &["query", "--db", odd_text, "1,1,1,1,1,2,4,2,3,0,0,0"],
        "a\\nb\\u{1b}[2J: no such directory",
    );
    std::fs::create_dir(&odd).unwrap();
    refuses(
        &["stats", "--db", odd_text],
        "a\\nb\\u{1b}[2J: build them: mancaladb build",
    );
    refuses(
        &["query", "1,1,1,1,1,2,4,2,3,0,0,\x1b0"],
        "pit count '\\u{1b}0' is not a whole number",
    );
}

/// A damaged table's error gives the command that rebuilds it (there was
/// none), and that command does.
#[test]
fn a_damaged_table_error_gives_the_build_that_replaces_it() {
    let dir = crate::common::built("damaged-table-remedy", mancaladb::oware::Rules::Awari, 4);
    let db = dir.to_str().unwrap();
    let table = dir.join("awari-04.mdb");
    let bytes = std::fs::read(&table).unwrap();
    std::fs::write(&table, &bytes[..bytes.len() / 2]).unwrap();
    let remedy = format!("rebuild it: mancaladb build --rules awari --levels 4 --db {db}");
    for args in [
        &["query", "--db", db, "0 0 0 0 0 2 1 1 0 0 0 0"][..],
        &["stats", "--db", db],
    ] {
        refuses(args, "awari-04.mdb: corrupt table: ");
        refuses(args, &remedy);
    }
    succeeds(&["build", "--rules", "awari", "--levels", "4", "--db", db]);
    succeeds(&["query", "--db", db, "0 0 0 0 0 2 1 1 0 0 0 0"]);
}

/// A directory that holds levels of the other rule set only says so: the
/// likely fix is `--rules`, not a build (it was told to build awari levels
/// beside its abapa ones).
#[test]
fn a_directory_of_the_other_rules_levels_says_so() {
    let dir = crate::common::built("cli-other-rules", mancaladb::oware::Rules::Abapa, 2);
    let db = dir.to_str().unwrap();
    let quoted = mancaladb::error::shell_quote(&dir);
    for args in [&["stats", "--db", db][..], &["verify", "--db", db]] {
        refuses(
            args,
            &format!(
                "awari levels not found in {db}: it holds abapa levels: read them with --rules abapa, or build awari ones: mancaladb build --rules awari --db {quoted}"
            ),
        );
    }
    succeeds(&["stats", "--rules", "abapa", "--db", db]);
}

/// The notices and warnings of a run that names a path with a line break
/// or a terminal escape in it are one line each, as errors are: a build
/// into such a directory, then again over a damaged table of it (the
/// rebuild's warning).
#[test]
fn notices_and_warnings_stay_one_line_whatever_they_name() {
    let odd = scratch("one-line-notices").join("a\nb\x1b[2J");
    let db = odd.to_str().unwrap();
    let escaped = "a\\nb\\u{1b}[2J";
    let stderr = |out: std::process::Output| {
        assert_success(&out);
        let text = String::from_utf8(out.stderr).unwrap();
        assert!(!text.contains('\x1b'), "{text:?}");
        text
    };
    let first = stderr(run(&["build", "--levels", "0..2", "--db", db]));
    assert!(
        first
            .lines()
            .any(|l| l.starts_with("building awari levels 0..2 in ") && l.contains(escaped)),
        "{first}"
    );
    let table = odd.join("awari-02.mdb");
    let bytes = std::fs::read(&table).unwrap();
    std::fs::write(&table, &bytes[..bytes.len() - 1]).unwrap();
    let again = stderr(run(&["build", "--levels", "0..2", "--db", db]));
    let warnings: Vec<&str> = again
        .lines()
        .filter(|l| l.starts_with("mancaladb: warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "{again}");
    assert!(warnings[0].contains(escaped), "{again}");
}

/// `RAYON_NUM_THREADS`, which the thread pool would read by itself, is
/// checked as `--threads` is and used: 0 is the default (one thread per
/// core), and a bad value stops a command before it writes anything.
#[test]
fn rayon_num_threads_is_checked_and_used() {
    let db = scratch("cli-rayon-threads");
    let d = db.to_str().unwrap();
    let with = |threads: &str, args: &[&str]| {
        bin()
            .env("RAYON_NUM_THREADS", threads)
            .args(args)
            .output()
            .unwrap()
    };
    let out = with("abc", &["build", "--max-seeds", "2", "--db", d]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mancaladb: RAYON_NUM_THREADS=abc: must be a whole number of threads\n"
    );
    assert!(!db.join("awari-00.mdb").exists());

    let out = with("3", &["build", "--max-seeds", "2", "--db", d]);
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(" with 3 threads\n"), "{err}");
    let cores = std::thread::available_parallelism().unwrap().get();
    let out = with("0", &["build", "--levels", "3", "--db", d]);
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let threads = match cores {
        1 => " with 1 thread\n".to_string(),
        n => format!(" with {n} threads\n"),
    };
    assert!(err.contains(&threads), "{err}");

    // The commands whose work the pool does from the start.
    for args in [
        &["verify", "--db", d][..],
        &["census", "--seeds", "1", "--db", d],
    ] {
        let out = with(&format!("{}", 4 * cores + 1), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!("mancaladb: RAYON_NUM_THREADS={}: ", 4 * cores + 1))
                && err.contains("(4 per core)"),
            "{err}"
        );
        assert_success(&with("0", args));
    }
    let _ = std::fs::remove_dir_all(&db);
}
