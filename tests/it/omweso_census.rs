//! The Omweso loop census against the known rows.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mancaladb::omweso::census::store::{self, Store};
use mancaladb::omweso::census::{
    CHUNK, Census, Found, Options, Row, atlas, census, checkpoint, plan, run_saved, walked,
};
use mancaladb::omweso::relay::lap;
use mancaladb::omweso::{Dir, Side};
use mancaladb::progress::Progress;

use crate::common::{assert_success, refuses};

#[test]
fn known_rows() {
    for k in 2..=13 {
        let r = census(k, 1_000_000_000, Progress::QUIET).unwrap();
        assert_eq!(
            r.configs,
            mancaladb::compose::binomial(k as u64 + 15, 15) as u64
        );
        assert_eq!(r.undecided, 0);
        match k {
            11 => {
                assert_eq!(
                    (r.loop_pairs, r.cfg_any, r.cfg_all, r.cycles),
                    (128, 128, 16, 1)
                );
                assert_eq!(r.period, Some((128, 128)));
            }
            13 => {
                assert_eq!(
                    (r.loop_pairs, r.cfg_any, r.cfg_all, r.cycles),
                    (1808, 1808, 16, 7)
                );
                assert_eq!(r.period, Some((120, 368)));
            }
            _ => {
                assert_eq!(
                    (r.loop_pairs, r.cfg_any, r.cfg_all, r.cycles),
                    (0, 0, 0, 0),
                    "k={k}"
                );
                assert_eq!(r.period, None);
            }
        }
        match k {
            2..=9 => assert_eq!(r.longest_finite, k as u64 - 1, "k={k}"),
            10 => assert_eq!(r.longest_finite, 16),
            _ => {}
        }
    }
}

/// Legal pairs counted directly: each start holding 2+ seeds, over every
/// configuration (small k, brute force).
#[test]
fn legal_pairs_by_brute_force() {
    let k = 6;
    let r = census(k, 1000, Progress::QUIET).unwrap();
    let ranker = mancaladb::compose::Ranker::new(16, k, None);
    let mut x = [0u8; 16];
    ranker.unrank(k, 0, &mut x);
    let mut pairs = 0u64;
    loop {
        pairs += x.iter().filter(|&&v| v >= 2).count() as u64;
        if !ranker.advance(&mut x) {
            break;
        }
    }
    assert_eq!(r.legal_pairs, pairs);
}

/// Rows 11..15 recounted by brute force, independently of the census's
/// walker and its facts: every configuration with two or more seeds in pit
/// 0, its relay followed with general cycle detection (`brute`). With the
/// opponent empty nothing is captured, so a start is a pure relay; turning
/// the board maps the starts of pit 0 one to one onto those of any pit, so
/// the looping pairs are 16 times those of pit 0, with the same periods and
/// longest finite relay.
#[test]
fn rows_11_to_15_by_brute_force() {
    for k in 11..=15usize {
        let row = census(k, 1_000_000_000, Progress::QUIET).unwrap();
        // Pit 0 holds s >= 2 seeds; the other 15 pits the rest.
        let (mut loops, mut periods, mut longest) = (0u64, None::<(u64, u64)>, 0u64);
        for s in 2..=k {
            let rest = k - s;
            let ranker = mancaladb::compose::Ranker::new(15, rest, None);
            let mut others = [0u8; 15];
            ranker.unrank(rest, 0, &mut others);
            loop {
                let mut pits = [0u8; 16];
                pits[0] = s as u8;
                pits[1..].copy_from_slice(&others);
                match crate::omweso::brute(mancaladb::omweso::Side::from_pits(pits), 0) {
                    Ok(laps) => longest = longest.max(laps),
                    Err(p) => {
                        loops += 1;
                        periods = Some(periods.map_or((p, p), |(a, b)| (a.min(p), b.max(p))));
                    }
                }
                if !ranker.advance(&mut others) {
                    break;
                }
            }
        }
        assert_eq!(
            (row.loop_pairs, row.period, row.longest_finite),
            (16 * loops, periods, longest),
            "k={k}"
        );
    }
}

/// Rows 14..16 as this program recorded them (BENCHMARKS.md) before
/// `cfg_any` and `cfg_all` were counted from the remembered states alone: a
/// check against regressions, not an independent count, including k = 15
/// where `cfg_any < loop_pairs`. (The looping pairs, periods and longest
/// relays of 14 and 15 are recounted by brute force above.)
#[test]
fn rows_14_to_16_as_recorded() {
    let rows: Vec<_> = (14..=16)
        .map(|k| census(k, 1_000_000_000, Progress::QUIET).unwrap())
        .collect();
    let got: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r.loop_pairs,
                r.cfg_any,
                r.cfg_all,
                r.cycles,
                r.period,
                r.longest_finite,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (800, 800, 0, 6, Some((112, 120)), 44),
            (13904, 13888, 16, 44, Some((112, 1056)), 43),
            (9136, 9136, 0, 33, Some((104, 320)), 57),
        ]
    );
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("census-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn quiet(budget: u64) -> Options<'static> {
    Options {
        budget,
        checkpoint_every: Duration::from_secs(60),
        progress: Progress::QUIET,
    }
}

/// A library caller's impossible census is an error, never a panic: more
/// seeds than a side holds, or a lap budget of 0.
#[test]
fn impossible_rows_are_refused() {
    let refused = |r: mancaladb::Result<Row>, what: &str| match r {
        Err(mancaladb::Error::Invalid(m)) => assert!(m.contains(what), "{m}"),
        other => panic!("{other:?}"),
    };
    refused(
        census(65, 1000, Progress::QUIET),
        "k = 65: a side holds at most 64 seeds",
    );
    refused(
        census(5, 0, Progress::QUIET),
        "a lap budget must be at least 1",
    );
    let dir = fresh_dir("impossible");
    let outcome = run_saved(&dir, 64..=65, quiet(1000));
    assert!(
        matches!(&outcome, Err(mancaladb::Error::Invalid(m)) if m.contains("k = 65")),
        "{:?}",
        outcome.map(|o| o.rows)
    );
    // Refused before anything was made.
    assert!(!dir.exists());
}

/// The JSON of a row keeps the field names of the file format.
#[test]
fn row_json_fields() {
    let r = census(11, 1000, Progress::QUIET).unwrap();
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        "{\"seeds\":11,\"configs\":7726160,\"legal_pairs\":20920064,\"loop_pairs\":128,\"cfg_any\":128,\
\"cfg_all\":16,\"cycles\":1,\"period_min\":128,\"period_max\":128,\"longest_finite\":23,\"undecided\":0,\"budget\":1000}"
    );
    let back: Row = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(back, r);
    let none = census(5, 1000, Progress::QUIET).unwrap().to_json();
    assert!(
        none.contains("\"period_min\":null,\"period_max\":null"),
        "{none}"
    );
}

/// `census`'s text table gives the rows `--json` gives, column by column
/// under its header: a row without loops (k = 10, periods `-`) and one
/// with (k = 11, its one cycle of period 128).
#[test]
fn the_text_table_gives_the_json_rows() {
    let dir = fresh_dir("text-table");
    let db = dir.to_str().unwrap();
    let text = crate::common::run(&["census", "--seeds", "10..11", "--db", db]);
    assert_success(&text);
    let json = crate::common::run(&["census", "--seeds", "10..11", "--json", "--db", db]);
    assert_success(&json);
    let rows: Vec<Row> = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows.iter().map(|r| r.seeds).collect::<Vec<_>>(), [10, 11]);
    assert_eq!(rows[1].period, Some((128, 128)));
    let text = String::from_utf8(text.stdout).unwrap();
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        [
            "seeds",
            "configs",
            "legal_pairs",
            "loop_pairs",
            "cfg_any",
            "cfg_all",
            "cycles",
            "periods",
            "longest"
        ]
    );
    assert_eq!(lines.len(), 1 + rows.len(), "{text}");
    for (r, line) in rows.iter().zip(&lines[1..]) {
        let periods = r
            .period
            .map_or("-".to_string(), |(a, b)| format!("{a}..{b}"));
        let want = [
            r.seeds.to_string(),
            r.configs.to_string(),
            r.legal_pairs.to_string(),
            r.loop_pairs.to_string(),
            r.cfg_any.to_string(),
            r.cfg_all.to_string(),
            r.cycles.to_string(),
            periods,
            r.longest_finite.to_string(),
        ];
        assert_eq!(line[..], want[..], "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finished rows are kept and not computed again; rows of other budgets
/// are kept beside them, never in their place (issue 15, item 10).
#[test]
fn rows_are_kept_per_budget() {
    let dir = fresh_dir("budget");
    let first = run_saved(&dir, 5..=6, quiet(1000)).unwrap();
    assert_eq!(first.computed, [5, 6]);
    let again = run_saved(&dir, 5..=6, quiet(1000)).unwrap();
    assert_eq!((again.rows, again.computed), (first.rows.clone(), vec![]));
    // A quick run with a budget too small to decide k = 11 ...
    let quick = run_saved(&dir, 11..=11, quiet(5)).unwrap();
    assert!(quick.rows[0].undecided > 0);
    let full = run_saved(&dir, 11..=11, quiet(1000)).unwrap();
    assert_eq!(full.rows[0].undecided, 0);
    // ... does not replace the full row, nor the full row it.
    let store = Store::open(&dir).unwrap();
    assert_eq!(store.row(11, 5), Some(&quick.rows[0]));
    assert_eq!(store.row(11, 1000), Some(&full.rows[0]));
    let again = run_saved(&dir, 11..=11, quiet(1000)).unwrap();
    assert_eq!(again.computed, Vec::<usize>::new());
    assert_eq!(
        std::fs::read_to_string(store.path())
            .unwrap()
            .lines()
            .count(),
        4
    );
}

/// An edited or damaged row is not trusted: it is reported and computed
/// again (issue 15, item 11).
#[test]
fn edited_rows_are_recomputed() {
    let dir = fresh_dir("edited");
    let truth = run_saved(&dir, 11..=11, quiet(1000)).unwrap().rows;
    let file = dir.join(store::FILE);
    let clean = std::fs::read_to_string(&file).unwrap();
    let sum = clean.find(",\"checksum\"").unwrap();
    let unsummed = format!("{}}}", &clean[..sum]);
    assert_eq!(unsummed, serde_json::to_string(&truth[0]).unwrap());
    let mut edits: Vec<String> = vec![
        clean.replace("\"configs\":7726160", "\"configs\":7726161"),
        clean.replace("\"loop_pairs\":128", "\"loop_pairs\":144"),
        clean.replace("\"budget\":1000", "\"budget\":1000,\"checksum\":\"0\""),
        // No checksum (as the first day's census wrote), with and without
        // an edit: never used, whatever the other checks say.
        unsummed.clone() + "\n",
        unsummed.replace("\"longest_finite\":23", "\"longest_finite\":24") + "\n",
        // The checksum's key damaged, a value edited: the row is not an
        // older file's.
        clean
            .replace("\"checksum\"", "\"checksul\"")
            .replace("\"longest_finite\":23", "\"longest_finite\":24"),
        // A field it does not know, a field twice, a field missing.
        clean.replace("\"budget\"", "\"note\":\"x\",\"budget\""),
        clean.replace("\"budget\"", "\"cycles\":1,\"budget\""),
        clean.replace("\"undecided\":0,", ""),
    ];
    // Every field is covered by the checksum: each one changed, the
    // checksum kept, is refused.
    let fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&unsummed).unwrap();
    for (name, value) in &fields {
        let other = match value {
            serde_json::Value::Number(n) => format!("{}", n.as_u64().unwrap() + 16),
            _ => "7".into(),
        };
        let (from, to) = (format!("\"{name}\":{value}"), format!("\"{name}\":{other}"));
        assert!(clean.contains(&from), "{from}");
        edits.push(clean.replacen(&from, &to, 1));
    }
    assert_eq!(edits.len(), 9 + 12);
    for (i, edited) in edits.iter().enumerate() {
        assert_ne!(*edited, clean, "edit {i}");
        std::fs::write(&file, edited).unwrap();
        let out = run_saved(&dir, 11..=11, quiet(1000)).unwrap();
        assert_eq!(out.rejected.len(), 1, "edit {i}: {edited}");
        assert_eq!(
            (out.rows.clone(), out.computed),
            (truth.clone(), vec![11]),
            "edit {i}"
        );
        // The row saved again is the true one, with its checksum.
        assert_eq!(std::fs::read_to_string(&file).unwrap(), clean, "edit {i}");
    }
    // The checks that need no checksum.
    let row = &truth[0];
    assert_eq!(store::check(row), Ok(()));
    let bad = |f: fn(&mut Row)| {
        let mut r = row.clone();
        f(&mut r);
        store::check(&r).unwrap_err()
    };
    assert!(bad(|r| r.configs += 1).contains("configs"));
    assert!(bad(|r| r.legal_pairs -= 16).contains("legal_pairs"));
    assert!(bad(|r| r.cfg_any = r.loop_pairs + 16).contains("cfg_any"));
    let more_than_configs = |r: &mut Row| {
        (r.undecided, r.loop_pairs, r.cfg_any) = (0, r.legal_pairs, r.configs + 1);
        r.longest_finite = 0;
    };
    assert!(bad(more_than_configs).contains("more than the"));
    assert!(bad(|r| r.cfg_all = r.cfg_any + 1).contains("cfg_all"));
    assert!(bad(|r| r.loop_pairs += 1).contains("multiples of 16"));
    assert!(bad(|r| r.undecided = r.legal_pairs).contains("within legal_pairs"));
    // A sum past 2^64 that would wrap to within legal_pairs.
    assert!(bad(|r| r.undecided = 0u64.wrapping_sub(16)).contains("within legal_pairs"));
    assert!(bad(|r| r.period = None).contains("period"));
    assert!(bad(|r| r.longest_finite = 0).contains("longest_finite"));
    assert!(bad(|r| r.longest_finite = 1001).contains("longest_finite"));
    // Rows up to a side's 64 seeds, and none beyond, whatever their counts.
    let of = |seeds: usize| {
        let k = seeds as u64;
        let binomial = mancaladb::compose::binomial;
        Row {
            seeds,
            configs: binomial(k + 15, 15) as u64,
            legal_pairs: 16 * binomial(k + 13, 15) as u64,
            loop_pairs: 0,
            cfg_any: 0,
            cfg_all: 0,
            cycles: 0,
            period: None,
            longest_finite: 1,
            undecided: 0,
            budget: 1000,
        }
    };
    assert_eq!(store::check(&of(64)), Ok(()));
    assert!(
        store::check(&of(65))
            .unwrap_err()
            .contains("seeds 65 is more than 64")
    );
}

/// A row given twice alike is used once; a row given by two sound lines
/// that disagree (an edit with its checksum made to match) cannot be told:
/// no line of it is used, each is set aside, and the row is computed again.
#[test]
fn a_row_given_twice_with_other_counts_is_computed_again() {
    let dir = fresh_dir("disputed");
    let truth = run_saved(&dir, 11..=11, quiet(1000)).unwrap().rows;
    let file = dir.join(store::FILE);
    let clean = std::fs::read_to_string(&file).unwrap();
    let mut other = truth[0].clone();
    other.longest_finite += 1;
    let other_line = clean
        .replace("\"longest_finite\":23", "\"longest_finite\":24")
        .replace(&store::checksum(&truth[0]), &store::checksum(&other));
    assert_ne!(other_line, clean);
    std::fs::write(&file, clean.repeat(2)).unwrap();
    let out = run_saved(&dir, 11..=11, quiet(1000)).unwrap();
    assert_eq!(
        (out.rows, out.computed, out.rejected.len()),
        (truth.clone(), vec![], 0)
    );
    for (i, text) in [
        clean.clone() + &other_line,
        other_line.clone() + &clean,
        clean.clone() + &other_line + &clean,
        clean.repeat(2) + &other_line,
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(&file, text).unwrap();
        let out = run_saved(&dir, 11..=11, quiet(1000)).unwrap();
        assert_eq!(out.rejected.len(), text.lines().count(), "case {i}");
        // The first line and the first that disagrees with it.
        let want = format!(
            "on lines 1 and {} with other counts",
            if i == 3 { 3 } else { 2 }
        );
        assert!(
            out.rejected.iter().all(|r| r.why.contains(&want)),
            "case {i}: {:?}",
            out.rejected
        );
        assert_eq!(
            (out.rows, out.computed),
            (truth.clone(), vec![11]),
            "case {i}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), clean, "case {i}");
    }
    let aside = std::fs::read_to_string(dir.join(format!("{}.rejected", store::FILE))).unwrap();
    assert_eq!(aside.matches(other_line.trim_end()).count(), 4);
}

/// A row as the census has written it since rows have checksums (the
/// line of `db/README.md`, the format of the production census
/// directories) is still read as it is, not computed again.
#[test]
fn rows_written_before_are_read() {
    let dir = fresh_dir("before");
    std::fs::create_dir_all(&dir).unwrap();
    let readme = include_str!("../../db/README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("{\"seeds\":11,") && l.contains("\"checksum\""))
        .unwrap();
    std::fs::write(dir.join(store::FILE), format!("{line}\n")).unwrap();
    let out = run_saved(&dir, 11..=11, quiet(1_000_000_000)).unwrap();
    assert_eq!(out.computed, Vec::<usize>::new());
    assert!(out.rejected.is_empty());
    assert_eq!(
        out.rows[0],
        census(11, 1_000_000_000, Progress::QUIET).unwrap()
    );
}

/// Bad lines (one not UTF-8, one not JSON) are skipped and reported, the
/// good rows around them used, and the bad lines kept aside verbatim
/// (issue 15, item 12).
#[test]
fn bad_lines_are_skipped_and_kept_aside() {
    let dir = fresh_dir("lines");
    run_saved(&dir, 5..=6, quiet(1000)).unwrap();
    let file = dir.join(store::FILE);
    let good = std::fs::read(&file).unwrap();
    let mut text = b"\xff\xfe not text\n".to_vec();
    text.extend_from_slice(&good[..good.len() / 2 + 10]);
    text.extend_from_slice(b"\n{\"seeds\":7}\n");
    text.extend_from_slice(&good);
    std::fs::write(&file, &text).unwrap();
    let out = run_saved(&dir, 5..=7, quiet(1000)).unwrap();
    let lines: Vec<usize> = out.rejected.iter().map(|r| r.line).collect();
    assert_eq!(lines, [1, 3, 4]); // line 2 is the first good row, whole
    assert!(
        out.rejected[0].why.contains("UTF-8"),
        "{:?}",
        out.rejected[0]
    );
    assert_eq!(out.computed, [7]);
    let aside = std::fs::read(dir.join(format!("{}.rejected", store::FILE))).unwrap();
    assert!(aside.starts_with(b"\xff\xfe not text\n"));
    assert_eq!(aside.split(|&b| b == b'\n').count(), 4);
    let store = Store::open(&dir).unwrap();
    assert!(store.rejected.is_empty());
    assert!((5..=7).all(|k| store.row(k, 1000).is_some()));
}

/// The file bad lines are set aside in is written in place: as a link
/// (its target would get them), it is refused before any row is computed,
/// and the link's target is left alone.
#[test]
fn bad_lines_are_not_set_aside_through_a_link() {
    let dir = fresh_dir("aside-link");
    run_saved(&dir, 5..=5, quiet(1000)).unwrap();
    let file = dir.join(store::FILE);
    let mut text = std::fs::read(&file).unwrap();
    text.extend_from_slice(b"not a row\n");
    std::fs::write(&file, &text).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink("victim", dir.join(format!("{}.rejected", store::FILE))).unwrap();
    let err = run_saved(&dir, 5..=6, quiet(1000)).unwrap_err().to_string();
    assert!(
        err.contains("is a symbolic link; expected a regular file"),
        "{err}"
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // Row 6's cycles file is written as soon as the row is counted.
    assert!(!atlas::path(&dir, 6, 1000).exists(), "counted first");
    assert!(atlas::path(&dir, 5, 1000).exists());
}

/// A directory that cannot be written is refused before anything is
/// computed (issue 15, item 13): k = 40 would take days.
#[test]
fn unwritable_directory_is_refused_first() {
    let dir = fresh_dir("unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let err = run_saved(&file.join("db"), 40..=40, quiet(1000))
        .unwrap_err()
        .to_string();
    assert!(err.contains("a-file"), "{err}");
    // The command checks --db and --out before its estimate and before
    // computing, even with --force.
    let db = file.join("db");
    let db = db.to_str().unwrap();
    refuses(
        &["census", "--seeds", "40", "--force", "--db", db],
        "a-file",
    );
    let good = dir.join("db");
    let good = good.to_str().unwrap();
    // A name ending in / is a directory's, never a file's: refused before
    // the row is computed.
    let slash = format!("{}/", dir.join("nofile").display());
    for out in ["/nonexistent/x.json", dir.to_str().unwrap(), &slash] {
        refuses(
            &[
                "census", "--seeds", "40", "--force", "--db", good, "--out", out,
            ],
            out,
        );
        refuses(
            &[
                "census", "--seeds", "40", "--force", "--db", good, "--cycles", out,
            ],
            out,
        );
    }
}

/// A census beyond a day is refused with its size and estimate, unless
/// forced (issue 15, item 14). Row 64 is beyond a day on any machine (it
/// would need 4 x 10^10 configurations a second; 2 cores walk about 10^8
/// at small k); row 40's size checks the count.
#[test]
fn huge_census_is_refused_with_an_estimate() {
    let dir = fresh_dir("huge");
    let e = plan(&dir, 40..=40, 1000, false).unwrap();
    assert_eq!(e.configurations, 6_250_347_750_920); // C(53, 15)
    let e = plan(&dir, 64..=64, 1_000_000_000, false).unwrap();
    assert_eq!(e.configurations, 3_527_930_788_646_880); // C(77, 15)
    assert!(e.seconds > 24.0 * 3600.0, "{e:?}");
    assert_eq!(plan(&dir, 39..=40, 1000, false).unwrap().rows, [39, 40]);
    refuses(
        &["census", "--seeds", "64", "--db", dir.to_str().unwrap()],
        "3527930788646880 start-0 configurations to walk for k = 64",
    );
    // Refused for being more than a day.
    refuses(
        &["census", "--seeds", "64", "--db", dir.to_str().unwrap()],
        ": more than 24.0 h; add --force to run it anyway",
    );
    // A refused run leaves no directory it made to check it, parents
    // included.
    assert!(!dir.exists());
    let nested = dir.join("a/b");
    let nested = nested.to_str().unwrap();
    refuses(&["census", "--seeds", "64", "--db", nested], "--force");
    assert!(!dir.exists());
    refuses(
        &[
            "census",
            "--seeds",
            "3",
            "--db",
            dir.to_str().unwrap(),
            "--out",
            "/nonexistent/x.json",
        ],
        "/nonexistent/x.json",
    );
    assert!(!dir.exists());
}

/// A checkpoint that does not belong to its row is ignored.
#[test]
fn damaged_checkpoints_are_ignored() {
    let dir = fresh_dir("badcp");
    std::fs::create_dir_all(&dir).unwrap();
    let cp = checkpoint::path(&dir, 11, 1000);
    std::fs::write(&cp, b"{\"seeds\":11}").unwrap();
    let out = run_saved(&dir, 11..=11, quiet(1000)).unwrap();
    assert!(out.resumed.is_empty());
    assert_eq!(out.rows[0].loop_pairs, 128);
    assert!(!cp.exists());
    // One left by a run killed between saving the row and removing it
    // goes at the next run, which uses the saved row.
    std::fs::write(&cp, b"{\"seeds\":11}").unwrap();
    let out = run_saved(&dir, 11..=11, quiet(1000)).unwrap();
    assert_eq!(out.computed, Vec::<usize>::new());
    assert!(!cp.exists());
}

/// A checkpoint whose checksum matches but which claims more than a walk
/// of its row can reach (a checksum made to match) is ignored: it gave a
/// row of all zeros, exit 0.
#[test]
fn checkpoints_beyond_their_row_are_ignored() {
    let dir = fresh_dir("cp-beyond");
    std::fs::create_dir_all(&dir).unwrap();
    let (k, budget) = (11, 1000);
    let cp = checkpoint::path(&dir, k, budget);
    let chunks = walked(k).div_ceil(CHUNK);
    let sound = checkpoint::Checkpoint {
        seeds: k,
        budget,
        chunk: CHUNK,
        chunks_done: 0,
        longest_finite: 0,
        undecided: 0,
        cycles: Vec::new(),
    };
    for (bad, why) in [
        (
            checkpoint::Checkpoint {
                chunks_done: chunks + 1,
                ..sound.clone()
            },
            "chunks done",
        ),
        (
            checkpoint::Checkpoint {
                longest_finite: budget + 1,
                ..sound.clone()
            },
            "beyond the budget",
        ),
        (
            checkpoint::Checkpoint {
                undecided: 1,
                ..sound.clone()
            },
            "undecided",
        ),
    ] {
        checkpoint::save(&cp, &bad).unwrap();
        let loaded = checkpoint::load(&cp, k, budget, CHUNK).unwrap();
        assert!(loaded.as_ref().is_err_and(|e| e.contains(why)), "{why}");
        let out = run_saved(&dir, k..=k, quiet(budget)).unwrap();
        assert!(out.resumed.is_empty());
        assert_eq!(out.rows[0].loop_pairs, 128);
        std::fs::remove_file(dir.join(store::FILE)).unwrap();
    }
    // One whose checksum no longer matches (a count edited in the file,
    // what it claims still within its row) is damaged: ignored.
    let claims = checkpoint::Checkpoint {
        chunks_done: 1,
        ..sound.clone()
    };
    checkpoint::save(&cp, &claims).unwrap();
    let text = std::fs::read_to_string(&cp).unwrap();
    let edited = text.replace("\"chunks_done\":1,", "\"chunks_done\":2,");
    assert_ne!(edited, text);
    std::fs::write(&cp, edited).unwrap();
    let loaded = checkpoint::load(&cp, k, budget, CHUNK).unwrap();
    assert!(
        loaded
            .as_ref()
            .is_err_and(|e| e.contains("checksum does not match")),
        "{loaded:?}"
    );
    let out = run_saved(&dir, k..=k, quiet(budget)).unwrap();
    assert!(out.resumed.is_empty());
    assert_eq!(out.rows[0].loop_pairs, 128);
    std::fs::remove_file(dir.join(store::FILE)).unwrap();
    // The sound one resumes (from its start).
    checkpoint::save(&cp, &sound).unwrap();
    assert_eq!(
        run_saved(&dir, k..=k, quiet(budget)).unwrap().resumed.len(),
        1
    );
}

/// What a walk of its row can reach is a sound checkpoint, up to the
/// limits: every chunk done, and a finite move of the whole lap budget (k
/// = 11's longest move ends on lap 23; its one cycle is found within 23
/// laps). Such a checkpoint resumes to the row itself, walking nothing:
/// the cycles it keeps give the looping counts.
#[test]
fn a_checkpoint_of_the_whole_walk_resumes_to_its_row() {
    let dir = fresh_dir("cp-whole");
    let (k, budget) = (11, 23);
    let truth = run_saved(&dir, k..=k, quiet(budget)).unwrap().rows;
    assert_eq!(
        (truth[0].longest_finite, truth[0].undecided, truth[0].cycles),
        (budget, 0, 1)
    );
    let cycles = atlas::load(&atlas::path(&dir, k, budget)).unwrap().unwrap();
    std::fs::remove_file(dir.join(store::FILE)).unwrap();
    let cp = checkpoint::path(&dir, k, budget);
    let whole = checkpoint::Checkpoint {
        seeds: k,
        budget,
        chunk: CHUNK,
        chunks_done: walked(k).div_ceil(CHUNK),
        longest_finite: budget,
        undecided: 0,
        cycles,
    };
    checkpoint::save(&cp, &whole).unwrap();
    assert_eq!(
        checkpoint::load(&cp, k, budget, CHUNK).unwrap(),
        Ok(Some(whole))
    );
    let out = run_saved(&dir, k..=k, quiet(budget)).unwrap();
    assert_eq!(
        out.resumed,
        [mancaladb::omweso::census::Resumed {
            seeds: k,
            from: walked(k)
        }]
    );
    assert_eq!((out.rows, out.computed), (truth, vec![k]));
    assert!(!cp.exists());
}

/// Anything but a regular file where the census reads its files (a named
/// pipe, which a read would wait on for ever) is an error naming it.
#[test]
fn census_files_that_are_not_regular_files_are_refused_not_waited_on() {
    let dir = fresh_dir("pipes");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = |path: &Path| {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    };
    // `census --seeds K --db DIR EXTRA...`, given a minute at most.
    let d = dir.to_str().unwrap().to_string();
    let census = |seeds: &str, extra: &[&str]| {
        let mut args = vec![
            "census".to_string(),
            "--seeds".into(),
            seeds.into(),
            "--db".into(),
            d.clone(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let _ = done.send(crate::common::run(&args));
        });
        finished
            .recv_timeout(Duration::from_secs(60))
            .expect("the census waited on a named pipe")
    };
    let refused = |seeds: &str, extra: &[&str], want: &str| {
        let out = census(seeds, extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    };
    let results = dir.join(store::FILE);
    fifo(&results);
    refused("2", &[], "omweso-census.jsonl: is a named pipe");
    std::fs::remove_file(&results).unwrap();
    // A link to nothing there was taken for no file, and replaced.
    std::os::unix::fs::symlink("nowhere", &results).unwrap();
    refused("2", &[], "omweso-census.jsonl: is a link to nothing");
    assert!(results.is_symlink());
    std::fs::remove_file(&results).unwrap();
    // A row's checkpoint (k = 11 runs in one batch, but is looked for).
    let cp = checkpoint::path(&dir, 11, 1_000_000_000);
    fifo(&cp);
    refused("11", &[], ".checkpoint: is a named pipe");
    std::fs::remove_file(&cp).unwrap();
    // A finished row's cycles file, read for the atlas.
    assert_success(&census("4", &[]));
    let cycles = atlas::path(&dir, 4, 1_000_000_000);
    let _ = std::fs::remove_file(&cycles);
    fifo(&cycles);
    let atlas_out = fresh_dir("pipes-list");
    std::fs::create_dir_all(&atlas_out).unwrap();
    let list = atlas_out.join("atlas.jsonl");
    refused(
        "4",
        &["--cycles", list.to_str().unwrap()],
        "k4.b1000000000.jsonl: is a named pipe",
    );
}

/// Anything but a regular file where a row of the range keeps its
/// checkpoint or its cycles is refused before any row is computed, and left
/// alone: also for a saved row, whose spent checkpoint a run removes (a
/// named pipe there was removed, a directory failed the run after the rows
/// before it were computed, and none was printed).
#[test]
fn places_of_the_whole_range_are_checked_before_any_row() {
    let dir = fresh_dir("places");
    run_saved(&dir, 3..=3, quiet(1000)).unwrap();
    let saved = |k| Store::open(&dir).unwrap().row(k, 1000).is_some();
    let cp = checkpoint::path(&dir, 3, 1000);
    std::fs::create_dir(&cp).unwrap();
    let err = run_saved(&dir, 2..=3, quiet(1000)).unwrap_err().to_string();
    assert!(err.contains(".checkpoint: is a directory"), "{err}");
    assert!(!saved(2) && cp.is_dir());
    std::fs::remove_dir(&cp).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&cp)
        .status()
        .unwrap();
    assert!(made.success());
    let d = dir.to_str().unwrap();
    refuses(
        &["census", "--seeds", "2..3", "--max-laps", "1000", "--db", d],
        ".checkpoint: is a named pipe",
    );
    assert!(!saved(2) && std::fs::symlink_metadata(&cp).is_ok());
    std::fs::remove_file(&cp).unwrap();
    // A directory where a later row's cycles go.
    std::fs::create_dir(atlas::path(&dir, 4, 1000)).unwrap();
    let err = run_saved(&dir, 2..=4, quiet(1000)).unwrap_err().to_string();
    assert!(err.contains("k4.b1000.jsonl: is a directory"), "{err}");
    assert!(!saved(2));
    std::fs::remove_dir(atlas::path(&dir, 4, 1000)).unwrap();
    assert_eq!(
        run_saved(&dir, 2..=4, quiet(1000)).unwrap().computed,
        [2, 4]
    );
}

/// A census on a directory another census holds is refused at once, before
/// it times a sample for its estimate.
#[test]
fn a_held_directory_is_refused_before_the_estimate() {
    let dir = fresh_dir("held");
    let held = Census::open(&dir).unwrap();
    let out = crate::common::run(&["census", "--seeds", "20", "--db", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("omweso-census.lock: locked by another writer"),
        "{err}"
    );
    assert!(!err.contains("configurations to walk"), "{err}");
    drop(held);
}

/// The census lock covers the atlas, which may compute and write cycles
/// files: while another census holds the directory,
/// `atlas_of` stops at once and writes nothing.
#[test]
fn the_atlas_takes_the_census_lock() {
    use mancaladb::omweso::census::atlas_of;
    let dir = fresh_dir("atlas-lock");
    run_saved(&dir, 11..=11, quiet(1000)).unwrap();
    let kept = atlas::path(&dir, 11, 1000);
    std::fs::remove_file(&kept).unwrap();
    let held = Census::open(&dir).unwrap();
    let err = atlas_of(&dir, 11..=11, quiet(1000)).unwrap_err();
    assert!(matches!(err, mancaladb::Error::Locked { .. }), "{err}");
    assert!(!kept.exists());
    // Through the census that holds it, the atlas is made.
    assert_eq!(held.atlas(11..=11, quiet(1000)).unwrap().len(), 1);
    assert!(kept.exists());
    drop(held);
    assert_eq!(atlas_of(&dir, 11..=11, quiet(1000)).unwrap().len(), 1);
}

/// Another file in the results file's place (no line of it a row) is
/// refused in one line and left alone; a results file with many bad lines
/// is reported in a bounded number of lines.
#[test]
fn foreign_results_files_are_refused_and_bad_lines_counted() {
    let dir = fresh_dir("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(store::FILE);
    let mut seed = 7u64;
    let junk: Vec<u8> = (0..1 << 20)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        })
        .collect();
    assert!(junk.iter().filter(|&&b| b == b'\n').count() > 1000);
    std::fs::write(&file, &junk).unwrap();
    let db = dir.to_str().unwrap();
    refuses(
        &["census", "--seeds", "5", "--db", db],
        "omweso-census.jsonl: not a census results file: no line begins '{\"seeds\":': \
         move it away: the census neither uses nor replaces it",
    );
    assert_eq!(std::fs::read(&file).unwrap(), junk);
    assert!(!dir.join(format!("{}.rejected", store::FILE)).exists());
    // A damaged file, typed as such for the library's callers.
    assert!(matches!(
        Store::open(&dir),
        Err(mancaladb::Error::Corrupt {
            kind: mancaladb::error::Corruption::NotCensusResults { .. },
            ..
        })
    ));

    // Thirty bad lines among rows: ten reported, the rest counted.
    std::fs::remove_file(&file).unwrap();
    run_saved(&dir, 5..=6, quiet(1000)).unwrap();
    let mut text = std::fs::read_to_string(&file).unwrap();
    for k in 0..30 {
        text += &format!("{{\"seeds\":{k}}}\n");
    }
    std::fs::write(&file, &text).unwrap();
    let out = crate::common::run(&["census", "--seeds", "5..7", "--db", db]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let each = err.matches("omweso-census.jsonl line ").count();
    assert_eq!(each, 10, "{err}");
    assert!(err.contains("20 more lines not used"), "{err}");
    assert_eq!(err.matches("warning:").count(), 11, "{err}");
    let aside = std::fs::read_to_string(dir.join(format!("{}.rejected", store::FILE)));
    assert_eq!(aside.unwrap().lines().count(), 30);

    // Exactly ten: each reported, and no line of more.
    let mut text = std::fs::read_to_string(&file).unwrap();
    for k in 0..10 {
        text += &format!("{{\"seeds\":{k}}}\n");
    }
    std::fs::write(&file, &text).unwrap();
    let out = crate::common::run(&["census", "--seeds", "5..7", "--db", db]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("omweso-census.jsonl line ").count(),
        10,
        "{err}"
    );
    assert!(!err.contains("more lines not used"), "{err}");
}

/// A row killed mid-way (SIGKILL of a real process) resumes from its
/// checkpoint and comes out identical to the published row (issue 16,
/// item 2).
#[test]
fn row_resumes_after_sigkill() {
    let dir = fresh_dir("kill");
    let k = 18;
    let cp = checkpoint::path(&dir, k, 1_000_000_000);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mancaladb"))
        .args(["census", "--seeds", "18", "--checkpoint-secs", "0", "--db"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let chunks = walked(k).div_ceil(CHUNK);
    let done = loop {
        std::thread::sleep(Duration::from_millis(20));
        if let Ok(Ok(Some(c))) = checkpoint::load(&cp, k, 1_000_000_000, CHUNK)
            && c.chunks_done >= chunks / 3
            && !c.cycles.is_empty()
        {
            break c.chunks_done;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the census finished before it was killed"
        );
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(Store::open(&dir).unwrap().row(k, 1_000_000_000).is_none());
    // The estimate counts only what the checkpoint has not walked.
    let Ok(Ok(Some(last))) = checkpoint::load(&cp, k, 1_000_000_000, CHUNK) else {
        panic!("no checkpoint after the kill");
    };
    assert_eq!(
        plan(&dir, k..=k, 1_000_000_000, false)
            .unwrap()
            .configurations,
        walked(k) - last.walked()
    );
    let heard = crate::common::Recorder::default();
    let options = Options {
        progress: Progress::to(&heard),
        ..quiet(1_000_000_000)
    };
    let out = run_saved(&dir, k..=k, options).unwrap();
    assert_eq!(out.resumed.len(), 1);
    assert!(out.resumed[0].from >= done * CHUNK, "{:?}", out.resumed);
    // The stage counts the walk whole, the part found done apart (not
    // this run's, nor in its rate).
    assert_eq!(heard.resumed(), [(format!("census k={k}"), last.walked())]);
    assert_eq!(
        heard.stages(),
        [(format!("census k={k}"), walked(k), walked(k))]
    );
    let r = &out.rows[0];
    assert_eq!(
        (
            r.configs,
            r.legal_pairs,
            r.loop_pairs,
            r.cfg_any,
            r.cfg_all,
            r.cycles
        ),
        (1_037_158_320, 4_808_643_120, 63_584, 63_456, 0, 159)
    );
    assert_eq!(
        (r.period, r.longest_finite, r.undecided),
        (Some((16, 912)), 81, 0)
    );
    assert!(!cp.exists());
}

/// Each finished row leaves its cycles beside it; walked again, their
/// start pairs add up to the row's loop pairs (cycles are disjoint).
#[test]
fn atlas_of_rows_11_to_15() {
    let dir = fresh_dir("atlas");
    let rows = run_saved(&dir, 11..=15, quiet(1000)).unwrap().rows;
    for r in rows {
        let found = atlas::load(&atlas::path(&dir, r.seeds, 1000))
            .unwrap()
            .unwrap();
        assert_eq!(found.len() as u64, r.cycles);
        let entries: Vec<_> = found.iter().map(|f| atlas::entry(f).unwrap()).collect();
        assert!(
            entries
                .iter()
                .all(|e| e.seeds == r.seeds && e.pairs == 16 * e.states)
        );
        assert_eq!(entries.iter().map(|e| e.pairs).sum::<u64>(), r.loop_pairs);
        // Each cycle's configurations and states counted directly: the
        // pairs (side, pit) its period walks through, every rotation of
        // those sides a configuration with a start on it; together the
        // configurations of a row's cycles are its cfg_any.
        let mut any = HashSet::new();
        for e in &entries {
            let (mut s, mut p) = (Side::from_pits(e.side), 0);
            let (mut configs, mut states) = (HashSet::new(), HashSet::new());
            for _ in 0..e.period {
                states.insert(s.rotated_to(p));
                configs.extend((0..16).map(|r| s.rotated_to(r)));
                let l = lap(s, p, Dir::Ccw);
                (s, p) = (l.side, l.last);
            }
            assert_eq!((s, p), (Side::from_pits(e.side), 0));
            assert_eq!(
                (e.states, e.configurations),
                (states.len() as u64, configs.len() as u64),
                "k={} {e:?}",
                r.seeds
            );
            any.extend(configs);
        }
        assert_eq!(any.len() as u64, r.cfg_any, "k={}", r.seeds);
        assert_eq!(
            entries
                .iter()
                .map(|e| e.period)
                .min()
                .zip(entries.iter().map(|e| e.period).max()),
            r.period
        );
        if r.seeds == 11 {
            let e = &entries[0];
            assert_eq!((e.period, e.states, e.configurations), (128, 8, 128));
        }
    }
    // A side that does not loop with its period is no cycle; nor one that
    // sows other seeds in it, nor one that is not its cycle's least state.
    let kept = atlas::load(&atlas::path(&dir, 11, 1000)).unwrap().unwrap()[0];
    let mut f = kept;
    f.period -= 1;
    assert!(atlas::entry(&f).unwrap_err().contains("does not loop"));
    let mut f = kept;
    f.sown += 1000;
    assert!(atlas::entry(&f).unwrap_err().contains("sows 272 seeds"));
    // Nor one walked for two of its periods (back at its state half-way),
    // its seeds sown doubled to match.
    let mut f = kept;
    (f.period, f.sown) = (2 * kept.period, 2 * kept.sown);
    assert!(atlas::entry(&f).unwrap_err().contains("does not loop"));
    // Nor a period of no lap (which panicked), nor a side whose pit 0 no
    // move lifts: its "laps" of no seeds leave it as it is, a false loop.
    let mut f = kept;
    f.period = 0;
    assert!(atlas::entry(&f).unwrap_err().contains("a period of 0 laps"));
    let mut side = [0; 16];
    side[1] = 11;
    let f = Found {
        side,
        period: 1,
        sown: 0,
    };
    assert!(
        atlas::entry(&f)
            .unwrap_err()
            .contains("fewer than a move lifts")
    );
    let mut other = Side::from_pits(kept.side);
    other.lap_from_zero();
    let f = Found {
        side: other.pits(),
        ..kept
    };
    assert!(
        atlas::entry(&f)
            .unwrap_err()
            .contains("not its cycle's canonical state")
    );
    // Against the row: each of the checks of `entries`.
    let row_13 = Store::open(&dir).unwrap().row(13, 1000).unwrap().clone();
    let found_13 = atlas::load(&atlas::path(&dir, 13, 1000)).unwrap().unwrap();
    assert_eq!(atlas::entries(&row_13, &found_13).unwrap().len(), 7);
    let mut twice = found_13.clone();
    twice[1] = twice[0];
    assert!(
        atlas::entries(&row_13, &twice)
            .unwrap_err()
            .contains("listed twice")
    );
    let mut more = row_13.clone();
    more.loop_pairs += 16;
    assert!(
        atlas::entries(&more, &found_13)
            .unwrap_err()
            .contains("pairs add up to 1808, not the row's loop_pairs 1824")
    );
    assert!(
        atlas::entries(&row_13, &found_13[1..])
            .unwrap_err()
            .contains("6 cycles, not the row's 7")
    );
    let of_11 = Store::open(&dir).unwrap().row(11, 1000).unwrap().clone();
    let of_13_as_11 = Row {
        cycles: 7,
        period: row_13.period,
        ..of_11
    };
    assert!(
        atlas::entries(&of_13_as_11, &found_13)
            .unwrap_err()
            .contains("is not a side of 11 seeds")
    );
}

/// What a killed write left goes at the next run: a row's checkpoint is
/// never written again once the row is done, so its temporary would stay.
#[test]
fn leftovers_of_killed_writes_are_removed() {
    let dir = fresh_dir("leftovers");
    std::fs::create_dir_all(&dir).unwrap();
    let left = dir.join("omweso-census.k9.b1000000000.checkpoint.tmp");
    std::fs::write(&left, b"cut short").unwrap();
    let other = dir.join("notes.tmp");
    std::fs::write(&other, b"not the census's").unwrap();
    let out = crate::common::run(&["census", "--seeds", "9", "--db", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!left.exists());
    assert!(other.exists());
}

/// When a computed row cannot be saved, it is still printed, and the
/// command fails with exit 2 saying so (issue 15, item 13).
#[test]
fn rows_are_printed_when_saving_fails() {
    let dir = fresh_dir("savefail");
    // The results file's temporary name taken by a directory: the
    // directory is writable, but the rewrite of the file fails.
    std::fs::create_dir_all(dir.join(format!("{}.tmp", store::FILE))).unwrap();
    let out = crate::common::run(&[
        "census",
        "--seeds",
        "11..12",
        "--json",
        "--db",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let rows: Vec<Row> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].seeds, rows[0].loop_pairs), (11, 128));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "row k = 11 was computed (printed above) but not saved; k = 12..=12 not computed"
        ),
        "{err}"
    );
    // When the row that fails is the last one asked for, none is left
    // uncomputed.
    let out = crate::common::run(&["census", "--seeds", "11", "--db", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.trim_end()
            .ends_with("row k = 11 was computed (printed above) but not saved"),
        "{err}"
    );
}

/// Random damage to the results file (bit flips, deleted and inserted
/// bytes, swapped lines) never makes a run return a wrong row: each row is
/// either the saved one, intact, or computed again.
#[test]
fn damaged_results_files_never_give_wrong_rows() {
    let dir = fresh_dir("fuzz");
    let truth = run_saved(&dir, 4..=10, quiet(1000)).unwrap().rows;
    let file = dir.join(store::FILE);
    let clean = std::fs::read(&file).unwrap();
    let mut seed = 0x0123_4567_89ab_cdefu64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let (mut recomputed, mut rejected) = (0, 0);
    // One lock for all rounds: taken and dropped 300 times, it was once
    // still held by a child that another test had just forked (it holds
    // the lock's file until it execs), and the round failed as Locked.
    let census = Census::open(&dir).unwrap();
    for round in 0..300 {
        let mut bytes = clean.clone();
        for _ in 0..1 + next(3) {
            let at = next(bytes.len());
            match next(4) {
                0 => bytes[at] ^= 1 << next(8),
                1 => {
                    let end = (at + 1 + next(20)).min(bytes.len());
                    bytes.drain(at..end);
                }
                2 => {
                    let junk: Vec<u8> = (0..1 + next(8)).map(|_| next(256) as u8).collect();
                    bytes.splice(at..at, junk);
                }
                _ => {
                    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
                    let (i, j) = (next(lines.len()), next(lines.len()));
                    lines.swap(i, j);
                    bytes = lines.join(&b'\n');
                }
            }
            if bytes.is_empty() {
                break;
            }
        }
        std::fs::write(&file, &bytes).unwrap();
        let out = census.run(4..=10, quiet(1000)).unwrap();
        assert_eq!(out.rows, truth, "round {round}");
        recomputed += out.computed.len();
        rejected += out.rejected.len();
        // The next round starts from the clean file again.
        let _ = std::fs::remove_file(dir.join(format!("{}.rejected", store::FILE)));
    }
    assert!(
        recomputed > 200 && rejected > 200,
        "{recomputed} {rejected}"
    );
}

/// `census --cycles FILE` writes one line per cycle of the rows asked for,
/// including rows saved before (their cycles are kept beside them).
#[test]
fn cycles_command_writes_the_atlas() {
    let dir = fresh_dir("atlas-cli");
    let db = dir.to_str().unwrap();
    let lists = fresh_dir("atlas-cli-lists");
    std::fs::create_dir_all(&lists).unwrap();
    let file = lists.join("atlas.jsonl");
    crate::common::succeeds(&["census", "--seeds", "11", "--db", db]);
    let out = crate::common::run(&[
        "census",
        "--seeds",
        "10..13",
        "--db",
        db,
        "--cycles",
        file.to_str().unwrap(),
    ]);
    assert_success(&out);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1 + 7);
    let first = &lines[0];
    assert_eq!(
        (
            &first["seeds"],
            &first["period"],
            &first["pairs"],
            &first["pit"]
        ),
        (&11.into(), &128.into(), &128.into(), &0.into())
    );
    let pairs_13: u64 = lines[1..]
        .iter()
        .map(|l| l["pairs"].as_u64().unwrap())
        .sum();
    assert_eq!(pairs_13, 1808);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
    // A budget that leaves pairs undecided: the atlas is said to be only
    // what was found (k = 11's one cycle, of period 128, is not).
    let short = lists.join("short.jsonl");
    let out = crate::common::run(&[
        "census",
        "--seeds",
        "11",
        "--max-laps",
        "7",
        "--db",
        db,
        "--cycles",
        short.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_success(&out);
    assert!(
        err.contains("warning: k = 11 left 3072 pairs undecided within --max-laps 7"),
        "{err}"
    );

    // A row saved without its cycles is planned again for --cycles, so the
    // estimate and the one-day refusal cover it.
    let kept = dir.join("omweso-cycles.k11.b1000000000.jsonl");
    let cycles_11 = std::fs::read_to_string(&kept).unwrap();
    std::fs::remove_file(&kept).unwrap();
    assert_eq!(
        plan(&dir, 10..=13, 1_000_000_000, false).unwrap().rows,
        Vec::<usize>::new()
    );
    assert_eq!(plan(&dir, 10..=13, 1_000_000_000, true).unwrap().rows, [11]);
    // A cycles file that is not its row's (another period, or emptied) is
    // refused, not written out.
    let wrong_period = cycles_11.replace("\"period\":128", "\"period\":64");
    let cycles = file.to_str().unwrap();
    for damaged in [wrong_period.as_str(), ""] {
        std::fs::write(&kept, damaged).unwrap();
        crate::common::refuses(
            &["census", "--seeds", "11", "--db", db, "--cycles", cycles],
            "damaged census file: its cycles are not those of row k = 11 (cycles: 1, each of 11 seeds)",
        );
    }
    // Blank lines are skipped, as in the results file.
    std::fs::write(&kept, format!("\n{cycles_11}\n  \n")).unwrap();
    let out = crate::common::run(&["census", "--seeds", "11", "--db", db, "--cycles", cycles]);
    assert_success(&out);
    std::fs::write(&kept, &cycles_11).unwrap();
    // Edits that keep the count and the periods: the
    // seeds sown of a cycle, a cycle listed twice, a field not a cycle's.
    let kept_13 = dir.join("omweso-cycles.k13.b1000000000.jsonl");
    let cycles_13 = std::fs::read_to_string(&kept_13).unwrap();
    let lines: Vec<&str> = cycles_13.lines().collect();
    let sown: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    let sown = sown["sown"].as_u64().unwrap();
    let twice = [lines[0], lines[0]]
        .into_iter()
        .chain(lines[2..].iter().copied())
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    let cases = [
        (
            cycles_13.replacen(
                &format!("\"sown\":{sown}}}"),
                &format!("\"sown\":{}}}", sown + 1000),
                1,
            ),
            format!("sows {sown} seeds in a period, not {}", sown + 1000),
        ),
        (twice, "is listed twice".to_string()),
        (
            cycles_13.replacen("\"sown\"", "\"note\":1,\"sown\"", 1),
            "unknown field `note`".to_string(),
        ),
    ];
    for (damaged, why) in cases {
        assert_ne!(damaged, cycles_13);
        std::fs::write(&kept_13, &damaged).unwrap();
        crate::common::refuses(
            &["census", "--seeds", "13", "--db", db, "--cycles", cycles],
            &why,
        );
    }
}

/// `scripts/census-run.sh`, the driver of the long census runs, and
/// `scripts/census-data.py collect`, which turns its directory into the
/// committed data file: the rows collected are the census's own, each with
/// its cost, a rerun skips the rows done (their cost kept) and computes a
/// damaged one again, and what cannot run is refused.
#[test]
fn the_census_run_script_gives_the_census_rows_with_their_cost() {
    use std::process::Command;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = env!("CARGO_BIN_EXE_mancaladb");
    let dir = crate::common::scratch("census-run-script");
    let d = dir.to_str().unwrap();
    let run = |args: &[&str]| {
        Command::new("sh")
            .arg(root.join("scripts/census-run.sh"))
            .args(args)
            .env("NICE", "0")
            .output()
            .unwrap()
    };
    let collect = || {
        let out = Command::new("python3")
            .arg(root.join("scripts/census-data.py"))
            .args(["collect", d])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    assert_eq!(
        collect().0,
        Some(2),
        "no results yet: an error, no empty file"
    );

    let out = run(&[d, bin, "2", "6", "--cycles"]);
    assert_success(&out);
    let (code, rows) = collect();
    assert_eq!(code, Some(0));
    let rows: Vec<serde_json::Value> = rows
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 5);
    for (k, row) in (2..=6).zip(&rows) {
        let want = census(k, 1_000_000_000, Progress::QUIET).unwrap();
        assert_eq!(row["seeds"], k, "{row}");
        assert_eq!(row["configs"], want.configs, "{row}");
        assert_eq!(row["loop_pairs"], want.loop_pairs, "{row}");
        assert!(row["max_rss_kb"].as_u64().unwrap() > 0, "{row}");
        assert!(row["started"].is_string(), "{row}");
        assert!(dir.join(format!("atlas-{k}.jsonl")).exists());
    }
    let log = || std::fs::read_to_string(dir.join("log")).unwrap();
    assert_eq!(log().matches("=== k=").count(), 5);
    let cost = std::fs::read_to_string(dir.join("time-4.txt")).unwrap();
    let out = run(&[d, bin, "2", "7"]);
    assert_success(&out);
    assert_eq!(log().matches("=== k=").count(), 6, "only row 7 ran");
    assert_eq!(
        std::fs::read_to_string(dir.join("time-4.txt")).unwrap(),
        cost
    );

    // A row edited in the results file is not collected, and the script
    // has the census compute it again (not skip it): its cost is then that
    // run's alone.
    let results = dir.join("omweso-census.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let edited = text.replace("{\"seeds\":5,\"configs\":", "{\"seeds\":5,\"configs\":1");
    assert_ne!(edited, text);
    std::fs::write(&results, edited).unwrap();
    let (code, _) = collect();
    assert_eq!(code, Some(2), "an edited row collected");
    let out = run(&[d, bin, "2", "7"]);
    assert_success(&out);
    assert_eq!(log().matches("=== k=").count(), 7, "only row 5 ran again");
    let cost = std::fs::read_to_string(dir.join("time-5.txt")).unwrap();
    assert_eq!(cost.matches("Elapsed (wall clock)").count(), 1, "{cost}");
    let (code, rows) = collect();
    assert_eq!(code, Some(0));
    let row5: serde_json::Value = serde_json::from_str(rows.lines().nth(3).unwrap()).unwrap();
    assert_eq!(row5["seeds"], 5);
    assert_eq!(
        row5["configs"],
        census(5, 1_000_000_000, Progress::QUIET).unwrap().configs
    );

    for (args, says) in [
        (vec![d, d, "2"], "is not an executable file"),
        (vec![d, bin, "9", "8"], "FROM (9) is above TO (8)"),
        (vec![d, bin], "usage: census-run.sh"),
        // Past the shell's integers: said in one line (the comparison
        // failed with the shell's own error).
        (
            vec![d, bin, "99999999999999999999"],
            "FROM must be a seed count 0..64",
        ),
        (
            vec![d, bin, "2", "99999999999999999999"],
            "TO must be a seed count 0..64",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// A checkpoint that cannot be saved (its temporary name taken by a
/// directory) is warned of once, however many are due, and the row is
/// still counted and saved, the same as a run that saved them all.
#[test]
fn a_checkpoint_that_cannot_be_saved_is_warned_of_once() {
    use mancaladb::progress::Notice;
    let (k, budget) = (14, 1_000_000_000);
    let every_batch = |progress| Options {
        checkpoint_every: Duration::ZERO,
        progress,
        ..quiet(budget)
    };
    let dir = fresh_dir("checkpoint-not-saved");
    let cp = checkpoint::path(&dir, k, budget);
    std::fs::create_dir_all(cp.with_extension("checkpoint.tmp")).unwrap();
    let heard = crate::common::Recorder::default();
    let out = run_saved(&dir, k..=k, every_batch(Progress::to(&heard))).unwrap();
    let warned: Vec<Notice> = heard
        .notices()
        .into_iter()
        .filter(|n| matches!(n, Notice::CensusCheckpointNotSaved { .. }))
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(!cp.exists());
    let clean = fresh_dir("checkpoint-saved");
    let saved = run_saved(&clean, k..=k, every_batch(Progress::QUIET)).unwrap();
    assert_eq!(out.rows, saved.rows);
    assert_eq!(
        Store::open(&dir).unwrap().row(k, budget),
        Some(&out.rows[0])
    );
}
