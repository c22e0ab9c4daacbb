//! The Omweso loop census against the known rows.

use mancaladb::omweso::census::census;
use mancaladb::progress::Progress;

#[test]
fn known_rows() {
    for k in 2..=13 {
        let r = census(k, 1_000_000_000, Progress::Quiet);
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
    let r = census(k, 1000, Progress::Quiet);
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

/// Finished rows are kept and not computed again; a row computed with
/// another lap budget is.
#[test]
fn census_resumes_from_saved_rows() {
    use mancaladb::omweso::census::run_resumable;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("census-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = run_resumable(&dir, 5..=6, 1000, Progress::Quiet).unwrap();
    let file = dir.join("omweso-census.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 2);
    // Plant a marker in the saved row for k = 6: a resumed run returns it.
    std::fs::write(
        &file,
        text.replace("\"longest_finite\":5,", "\"longest_finite\":999,"),
    )
    .unwrap();
    let again = run_resumable(&dir, 5..=6, 1000, Progress::Quiet).unwrap();
    assert_eq!(again[0], first[0]);
    assert_eq!(again[1].longest_finite, 999);
    // Another budget: recomputed.
    let other = run_resumable(&dir, 6..=6, 2000, Progress::Quiet).unwrap();
    assert_eq!(other[0].longest_finite, 5);
}
