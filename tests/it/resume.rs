//! The compact builder's two forced paths, through the real binary: tiny
//! frontiers (every round overflows into fresh marks and sweeps) and builds
//! killed with SIGKILL at random moments, resumed from checkpoints taken at
//! every threshold. Both must give exactly the tables of `db/CHECKSUMS`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{assert_committed, bin, scratch};

fn build(db: &Path, max: usize) -> Command {
    let mut c = bin();
    c.args(["build", "--max-seeds", &max.to_string(), "--db"])
        .arg(db)
        .env("MANCALADB_CHECKPOINT_SECS", "0");
    c
}

#[test]
fn tiny_frontiers_build_the_committed_tables() {
    let db = scratch("tiny-frontiers");
    let out = build(&db, 15)
        .env("MANCALADB_FRONTIER_CAP", "3000")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_committed(&db, 15);
}

/// A small generator for kill times (xorshift), seeded from the clock and
/// printed so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Whether a checkpoint of a level being built exists under `db`.
fn has_checkpoint(db: &Path) -> bool {
    let Ok(levels) = std::fs::read_dir(db.join("raw/awari")) else {
        return false;
    };
    levels.flatten().any(|level| {
        std::fs::read_dir(level.path().join("rank-0")).is_ok_and(|files| {
            files
                .flatten()
                .any(|f| f.file_name().to_string_lossy().starts_with("state."))
        })
    })
}

#[test]
fn killed_builds_resume_to_the_committed_tables() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("kill-time seed {seed}");
    let mut rng = Rng(seed);
    let db = scratch("killed-builds");
    let max = 16;
    let mut resumed = 0;
    let mut log = String::new();
    for attempt in 0..12 {
        let mut child = build(&db, max)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Half the kills at a random moment, half at a random moment just
        // after a checkpoint of the level under way appeared.
        let start = Instant::now();
        if attempt % 2 == 1 {
            while !has_checkpoint(&db) && start.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(rng.below(100)));
        } else {
            std::thread::sleep(Duration::from_millis(100 + rng.below(1500)));
        }
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap(); // SIGKILL
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        resumed += err.matches("resuming at threshold").count();
        log.push_str(&err);
        if finished {
            break;
        }
    }
    let out = build(&db, max).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    resumed += err.matches("resuming at threshold").count();
    log.push_str(&err);
    assert!(resumed > 0, "no run resumed from a checkpoint:\n{log}");
    assert_committed(&db, max);
    // Work directories go once their level is in place.
    let left: Vec<_> = std::fs::read_dir(db.join("raw/awari"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".work"))
        .collect();
    assert!(left.is_empty(), "work directories left: {left:?}");
}

#[test]
fn bad_solver_settings_are_usage_errors() {
    let db = scratch("bad-settings");
    for (name, value) in [
        ("MANCALADB_CHECKPOINT_SECS", "soon"),
        ("MANCALADB_CHECKPOINT_SECS", "-1"),
        ("MANCALADB_FRONTIER_CAP", "0"),
    ] {
        let out = build(&db, 2).env(name, value).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}={value}: {err}");
        assert!(err.contains(&format!("{name}={value}: expected")), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
