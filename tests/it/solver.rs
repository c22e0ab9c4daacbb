//! The level solver against facts that do not come from it: the published
//! VU hashes, known positions, and an independent forward solver.

use crate::common::solved;
use mancaladb::oware::Rules;
use mancaladb::oware::forward::solve_level_forward;
use sha2::{Digest, Sha256};

fn sha(v: &[i8]) -> String {
    let bytes: Vec<u8> = v.iter().map(|&x| x as u8).collect();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn awari_levels_match_published_hashes() {
    let levels = solved(Rules::Awari);
    assert_eq!(
        sha(&levels[0]),
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    );
    assert_eq!(
        sha(&levels[6]),
        "421692ea9842e97c127a7751c0ab9517dfa810db77ef79a41da4e2d6782288e3"
    );
    assert_eq!(
        sha(&levels[12]),
        "68afa309a2e62cd2f1998fef7710a5ba3e01ef624ae0a3daa46a5a0d2b52e14c"
    );
}

#[test]
fn forward_solver_agrees_on_small_levels() {
    for rules in Rules::ALL {
        let levels = solved(rules);
        for n in 0..=11 {
            let lower: Vec<&[i8]> = levels[..n].iter().map(|v| v.as_slice()).collect();
            let fwd = solve_level_forward(rules, n, &lower).unwrap();
            assert!(fwd[..] == levels[n][..], "{rules} level {n} differs");
        }
    }
}
