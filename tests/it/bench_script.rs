//! `scripts/bench.sh --compare`: its verdict on a speed target is the one
//! place where a target lives (not in timed unit tests), so it is tested
//! here on build logs whose rates are known, without building anything.
//! Its verdict once compared every ratio with the word "target" (a
//! variable named for two things), and so said FAIL whatever the ratio.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::scratch;

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

/// Writes `WORK/WHICH-1/build-log.tsv` and `WORK/WHICH-1.cpu` for one run
/// of levels 20..24 whose level `l` took `seconds(l)` on 2 threads and
/// 1.5 times as many CPU seconds, plus half a second of system time, as
/// `bench.sh --compare` lays them out.
fn run_logs(work: &Path, which: &str, seconds: impl Fn(u32) -> f64) {
    let dir = work.join(format!("{which}-1"));
    fs::create_dir_all(&dir).unwrap();
    let (mut log, mut cpu) = (String::new(), String::new());
    for l in 20..=24 {
        let s = seconds(l);
        // rules level positions seconds threads ranks exchanged rounds anon
        log += &format!("awari\t{l}\t80000000\t{s}\t2\t1\t0\t500\t88000000\n");
        cpu += &format!("{l} {} 0.5\n", 1.5 * s);
    }
    fs::write(dir.join("build-log.tsv"), log).unwrap();
    fs::write(work.join(format!("{which}-1.cpu")), cpu).unwrap();
}

/// The verdict on `work`'s logs at `target`.
fn verdict(work: &Path, target: &str) -> Output {
    let mut files = Vec::new();
    for pattern in [
        "old-1/build-log.tsv",
        "new-1/build-log.tsv",
        "old-1.cpu",
        "new-1.cpu",
    ] {
        files.push(work.join(pattern));
    }
    Command::new("awk")
        .args(["-v", "from=20", "-v", "max=24", "-v"])
        .arg(format!("target={target}"))
        .arg("-f")
        .arg(script("compare.awk"))
        .args(&files)
        .output()
        .expect("run awk")
}

#[test]
fn the_verdict_passes_a_ratio_at_its_target_and_fails_one_below() {
    let work = scratch("bench-compare-verdict");
    // New: 2.5x as fast at level 20, exactly 2x at level 24.
    run_logs(&work, "old", |_| 10.0);
    run_logs(&work, "new", |l| if l == 24 { 5.0 } else { 4.0 });
    let o = verdict(&work, "2.0");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("PASS level 20: 2.50x (target 2.0x)"), "{out}");
    assert!(out.contains("PASS level 24: 2.00x (target 2.0x)"), "{out}");
    assert_eq!(o.status.code(), Some(0), "{out}");
    // Per core: 80 M positions in 10 s on 2 threads; RssAnon 1.1 bytes;
    // per CPU second: 80 M in 15.5 s against 6.5 s.
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == [
                "20", "80000000", "4.00", "M", "10.00", "M", "2.50x", "1.100", "5.16", "M",
                "12.31", "M", "2.38x"
            ]),
        "{out}"
    );

    let o = verdict(&work, "2.1");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("PASS level 20: 2.50x (target 2.1x)"), "{out}");
    assert!(out.contains("FAIL level 24: 2.00x (target 2.1x)"), "{out}");
    assert_eq!(o.status.code(), Some(1), "{out}");
}

#[test]
fn a_target_that_is_not_a_ratio_is_refused_before_anything_is_built() {
    let o = Command::new("bash")
        .arg(script("bench.sh"))
        .args(["--compare", "HEAD"])
        .env("TARGET", "twice")
        .env("WORK", scratch("bench-compare-target"))
        .output()
        .expect("run bash");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("TARGET must be a ratio such as 2.0, not 'twice'"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
