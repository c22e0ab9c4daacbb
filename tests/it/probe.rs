//! Fast probes (`src/probe.rs`): every value of a level read through the
//! block cache, from several threads and with a cache too small to hold the
//! level (so blocks are evicted and read again), equals the level's
//! published-layout export, one at a time and many at once
//! (`Tables::values`); a raw copy is used only when it matches.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mancaladb::db::Db;
use mancaladb::oware::{Board, Encoder, MAX_SEEDS, Rules, level_size};
use mancaladb::source::{Tables, Values};

use crate::common::{awari_db, export_vu, scratch};

/// Level 14 of the test tables in a directory of its own, with or without
/// a raw copy of the given bytes.
fn level_14_dir(name: &str, raw: Option<&[u8]>) -> PathBuf {
    let dir = scratch(name);
    let db = Db::new(&dir);
    std::fs::copy(
        Db::new(awari_db()).table_path(Rules::Awari, 14),
        db.table_path(Rules::Awari, 14),
    )
    .unwrap();
    if let Some(bytes) = raw {
        std::fs::create_dir_all(db.raw_dir(Rules::Awari)).unwrap();
        std::fs::write(db.raw_path(Rules::Awari, 14), bytes).unwrap();
    }
    dir
}

/// Level 14 as `export --format vu` writes it, exported once per run.
fn exported_14() -> Vec<u8> {
    static VU: OnceLock<Vec<u8>> = OnceLock::new();
    VU.get_or_init(|| {
        let out = scratch("probe-vu");
        export_vu(awari_db(), &out);
        std::fs::read(out.join("scores.14")).unwrap()
    })
    .clone()
}

/// Every `every`-th step of a walk through all positions of level 14,
/// probed by rank from `threads` threads (each a different part of the
/// walk) against `want`. A walk that misses the cache on nearly every hop
/// decompresses a block per probe, so those take a sample.
fn probe_all(dir: &Path, cache_bytes: usize, threads: usize, want: &[u8], every: usize) {
    let tables = Tables::with_cache(Db::new(dir), Rules::Awari, cache_bytes, threads);
    let e = Encoder::new(MAX_SEEDS);
    let n = level_size(14);
    assert_eq!(want.len() as u64, n);
    std::thread::scope(|s| {
        for t in 0..threads as u64 {
            let (tables, e) = (&tables, &e);
            s.spawn(move || {
                // A stride coprime to n visits every index once, hopping
                // between blocks; thread t takes the t-th part of the walk.
                let stride = 104_729;
                assert_eq!(gcd(stride, n), 1);
                let (from, to) = (t * n / threads as u64, (t + 1) * n / threads as u64);
                let mut i = from * stride % n;
                for k in from..to {
                    if (k as usize).is_multiple_of(every) {
                        let b = e.board_at(14, i).unwrap();
                        assert_eq!(
                            tables.value(&b).unwrap() as u8,
                            want[i as usize],
                            "index {i}"
                        );
                    }
                    i = (i + stride) % n;
                }
            });
        }
    });
    // Many at once, from every thread together (each batch holds the
    // blocks it reads, evicted from the cache or not): every 7th position,
    // from position t, across every block.
    std::thread::scope(|s| {
        for t in 0..threads as u64 {
            let (tables, e) = (&tables, &e);
            s.spawn(move || {
                let boards: Vec<_> = (t..n)
                    .step_by(7)
                    .map(|i| e.board_at(14, i).unwrap())
                    .collect();
                let mut out = Vec::new();
                tables.values(&boards, &mut out).unwrap();
                assert_eq!(out.len(), boards.len());
                for (k, v) in out.iter().enumerate() {
                    let i = t as usize + 7 * k;
                    assert_eq!(*v as u8, want[i], "index {i}");
                }
            });
        }
    });
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[test]
fn block_cache_answers_every_position_from_many_threads() {
    let want = exported_14();
    let dir = level_14_dir("probe-compressed", None);
    // 8 blocks of 64 KiB for 67 blocks: nearly every hop misses.
    probe_all(&dir, 8 << 14, 4, &want, 31);
    // Room for the whole level: only the first hop into each block misses.
    probe_all(&dir, 1 << 30, 2, &want, 1);
}

#[test]
fn raw_copy_is_used_only_when_it_matches() {
    let want = exported_14();
    let good = level_14_dir("probe-raw-good", Some(&want));
    let tables = Tables::new(Db::new(&good), Rules::Awari);
    let first = Encoder::new(MAX_SEEDS).board_at(14, 0).unwrap();
    let db = Db::new(&good);
    assert_eq!(tables.origin(&first), db.table_path(Rules::Awari, 14));
    assert!(tables.level(14).unwrap().check_raw());
    // A value damaged from here on is the raw copy's (errors named the
    // table, which was not read).
    assert_eq!(tables.origin(&first), db.raw_path(Rules::Awari, 14));
    probe_all(&good, 1 << 20, 2, &want, 1);

    let mut bad = want.clone();
    let at = 12_348; // a multiple of 7: the first batch in `probe_all` reads it
    bad[at] ^= 1;
    let damaged = level_14_dir("probe-raw-damaged", Some(&bad));
    let tables = Tables::new(Db::new(&damaged), Rules::Awari);
    assert!(!tables.level(14).unwrap().check_raw());
    let db = Db::new(&damaged);
    assert_eq!(tables.origin(&first), db.table_path(Rules::Awari, 14));
    probe_all(&damaged, 1 << 20, 2, &want, 31);
    // The tables whose check refused the copy read the damaged position's
    // true value too.
    let board = Encoder::new(MAX_SEEDS).board_at(14, at as u64).unwrap();
    assert_eq!(tables.value(&board).unwrap() as u8, want[at]);

    let short = level_14_dir("probe-raw-short", Some(&want[..want.len() - 1]));
    let tables = Tables::new(Db::new(&short), Rules::Awari);
    assert!(!tables.level(14).unwrap().check_raw());
}

/// [`level_14_dir`] with a byte of its table's last block flipped: the
/// directory, the table's sound bytes, and the board of the level's last
/// index, which that block holds.
fn damaged_14(name: &str, raw: Option<&[u8]>) -> (PathBuf, Vec<u8>, Board) {
    let dir = level_14_dir(name, raw);
    let path = Db::new(&dir).table_path(Rules::Awari, 14);
    let sound = std::fs::read(&path).unwrap();
    let mut bytes = sound.clone();
    let at = bytes.len() - 100; // in the last block
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    let last = Encoder::new(MAX_SEEDS)
        .board_at(14, level_size(14) - 1)
        .unwrap();
    (dir, sound, last)
}

/// A damaged block is an error of every probe that meets it, however
/// often: failed reads do not bring on the switch to a matching raw copy
/// (sixteen did, and the same board then answered a value, depending on
/// when it was asked).
#[test]
fn a_damaged_block_is_reported_by_every_probe_despite_a_raw_copy() {
    let want = exported_14();
    let (dir, _, last) = damaged_14("probe-damaged-block", Some(&want));
    let tables = Tables::new(Db::new(&dir), Rules::Awari);
    for _ in 0..64 {
        let err = tables.value(&last).unwrap_err();
        assert!(matches!(err, mancaladb::Error::Corrupt { .. }), "{err}");
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(tables.level(14).unwrap().raw().is_none());
    assert!(tables.value(&last).is_err());
    // A whole-level read switches to the raw copy, which answers the
    // table's true values and reads no block.
    assert!(tables.level(14).unwrap().check_raw());
    assert_eq!(tables.value(&last).unwrap() as u8, want[want.len() - 1]);
}

/// A reader holds the table it opened: damage met in it after a rebuild
/// replaced it says so, and a reader opened afresh reads the new table.
#[test]
fn damage_in_a_table_replaced_since_it_was_opened_says_so() {
    use mancaladb::error::Corruption;
    let want = exported_14();
    let (dir, sound, last) = damaged_14("probe-replaced", None);
    let path = Db::new(&dir).table_path(Rules::Awari, 14);
    let tables = Tables::new(Db::new(&dir), Rules::Awari);
    let kind = |e: mancaladb::Error| match e {
        mancaladb::Error::Corrupt { kind, .. } => kind,
        other => panic!("{other}"),
    };
    let before = kind(tables.value(&last).unwrap_err());
    assert!(matches!(before, Corruption::Block { .. }), "{before}");
    // Rebuilt: a new file renamed into its place.
    let new = dir.join("rebuilt.tmp");
    std::fs::write(&new, &sound).unwrap();
    std::fs::rename(&new, &path).unwrap();
    let err = tables.value(&last).unwrap_err();
    assert!(
        err.to_string()
            .contains("another file has replaced it since"),
        "{err}"
    );
    assert_eq!(kind(err), Corruption::Replaced(Box::new(before)));
    let fresh = Tables::new(Db::new(&dir), Rules::Awari);
    assert_eq!(fresh.value(&last).unwrap() as u8, want[want.len() - 1]);
}

/// A table written over in place under a reader (not replaced by a
/// rename, which its map never sees): a block index entry that points
/// past the data is damage named as such, never a panic. Reads sliced the
/// map by the live index, checked only when the table was opened.
#[test]
fn a_block_index_written_over_in_place_under_a_reader_is_damage() {
    use mancaladb::error::Corruption;
    use mancaladb::table::Table;
    use std::io::{Seek, SeekFrom, Write};
    let dir = level_14_dir("probe-index-in-place", None);
    let path = Db::new(&dir).table_path(Rules::Awari, 14);
    let blocks = Table::open(&path).unwrap().header().blocks;
    let e = Encoder::new(MAX_SEEDS);
    let (first, last) = (
        e.board_at(14, 0).unwrap(),
        e.board_at(14, level_size(14) - 1).unwrap(),
    );
    let tables = Tables::new(Db::new(&dir), Rules::Awari);
    let want = exported_14();
    assert_eq!(tables.value(&first).unwrap() as u8, want[0]);
    // The index follows the 80-byte header: one offset per block and where
    // the last one ends. That end moves 2^40 bytes on.
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.seek(SeekFrom::Start(80 + 8 * blocks + 5)).unwrap();
    f.write_all(&[1]).unwrap();
    drop(f);
    for _ in 0..2 {
        match tables.value(&last).unwrap_err() {
            mancaladb::Error::Corrupt { kind, .. } => {
                assert_eq!(kind, Corruption::IndexEntry(blocks))
            }
            other => panic!("{other}"),
        }
    }
}

/// A listing of a level (the server's `/api/levels`) whose file was
/// replaced since by one that does not open gives that file's error: not
/// `verified: None`, which says the records cannot be read.
#[test]
fn a_level_whose_file_now_does_not_open_is_listed_with_its_error() {
    use mancaladb::error::Corruption;
    use mancaladb::source::Source;
    let dir = level_14_dir("probe-listed-replaced", None);
    let path = Db::new(&dir).table_path(Rules::Awari, 14);
    let source = Source::tables(&dir, Rules::Awari);
    assert_eq!(source.level_info(14).unwrap().verified, Some(false));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[50] ^= 1; // in the header's content checksum
    let new = dir.join("replaced.tmp");
    std::fs::write(&new, &bytes).unwrap();
    std::fs::rename(&new, &path).unwrap();
    match source.level_info(14).unwrap_err() {
        mancaladb::Error::Corrupt { path: at, kind } => {
            assert_eq!((at, kind), (path, Corruption::HeaderChecksum))
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_board_that_is_not_stored_is_refused_by_a_probe_not_misread() {
    use mancaladb::source::Source;
    let vu = scratch("probe-not-stored");
    export_vu(awari_db(), &vu);
    let tables = Tables::new(Db::new(awari_db()), Rules::Awari);
    let published = Source::vu(&vu);
    // Every opponent pit filled (a starting position): not in any level.
    let board = Board::new([1; 12]).unwrap();
    for source in [&tables as &dyn Values, &published] {
        let e = source.value(&board).unwrap_err().to_string();
        assert!(e.contains("is not stored"), "{e}");
    }
    let mut out = Vec::new();
    assert!(tables.values(&[board], &mut out).is_err());
    // A board of more seeds than a game cannot be made to be asked.
    let e = Board::new([9, 9, 9, 9, 9, 9, 0, 0, 0, 0, 0, 0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "an Oware board holds 54 seeds; a game holds at most 48"
    );
}

/// `query::values` answers as `query::value` one board at a time: runs of
/// stored boards, starting positions between them (valued from their
/// moves), and, for the first board of a level not built, the error of that
/// board with the values before it.
#[test]
fn many_values_at_once_equal_one_at_a_time() {
    use mancaladb::query;
    use mancaladb::source::Source;
    let source = Source::tables(awari_db(), Rules::Awari);
    let e = Encoder::new(MAX_SEEDS);
    let mut boards: Vec<Board> = Vec::new();
    for (seeds, count) in [(16, 40), (9, 1), (17, 300), (12, 2)] {
        boards.extend((0..count).map(|k| e.board_at(seeds, k * 7919 % level_size(seeds)).unwrap()));
        // A starting position (every pit filled): not stored, valued from
        // its moves.
        boards.push(Board::new([1; 12]).unwrap());
    }
    let mut out = Vec::new();
    query::values(Rules::Awari, &source, &boards, &mut out).unwrap();
    let one_by_one: Vec<i8> = boards
        .iter()
        .map(|b| query::value(Rules::Awari, &source, b).unwrap())
        .collect();
    assert_eq!(out, one_by_one);
    assert!(out.iter().any(|&v| v != 0), "all draws: a weak test");

    // Level 20 is not built: its board fails, the values before it stay.
    let mut with_missing = boards[..50].to_vec();
    with_missing.push(e.board_at(20, 5).unwrap());
    with_missing.extend_from_slice(&boards[50..60]);
    let err = query::values(Rules::Awari, &source, &with_missing, &mut out).unwrap_err();
    assert!(
        matches!(&err, mancaladb::Error::Missing(m) if m.level() == Some(20)),
        "{err}"
    );
    assert_eq!(out, one_by_one[..50]);
}

/// A level past the game's is a bad request to every reader of a
/// directory, not a level to build nor a histogram sized by it; a cache
/// made for absurd numbers of threads and bytes is still made.
#[test]
fn levels_past_the_game_are_invalid_everywhere() {
    use mancaladb::Error;
    use mancaladb::probe::BlockCache;
    use mancaladb::source::Source;
    use mancaladb::stats::LevelStats;
    let dir = awari_db();
    let db = Db::new(dir);
    let source = Source::open(dir, Rules::Awari, None).unwrap();
    for seeds in [MAX_SEEDS + 1, 1 << 40, usize::MAX] {
        let stats = LevelStats::of_source(&source, seeds).map(|_| ());
        let open = db.open(Rules::Awari, seeds).map(|_| ());
        let required = db.require_levels(Rules::Awari, &[3, seeds]);
        for (what, got) in [("stats", stats), ("open", open), ("require", required)] {
            assert!(
                matches!(&got, Err(Error::Invalid(text)) if text.contains("levels go up to 48")),
                "{what} of level {seeds}: {got:?}"
            );
        }
    }
    let cache = BlockCache::new(usize::MAX, 0, usize::MAX);
    assert!(cache.blocks() > 0);
}

/// A level that could not be opened, missing or damaged, is answered with
/// the same error for [`RETRY_OPENING`] without its file being looked at
/// again, and is found once that time has passed: a level built or
/// repaired meanwhile is read, and a search that probes a missing level
/// at every node does not look for its file each time.
#[test]
fn a_level_that_failed_to_open_is_tried_again_after_a_while() {
    use mancaladb::Error;
    use mancaladb::source::RETRY_OPENING;
    use std::time::{Duration, Instant};

    let dir = scratch("probe-retry");
    let path = Db::new(&dir).table_path(Rules::Awari, 14);
    let good = std::fs::read(Db::new(awari_db()).table_path(Rules::Awari, 14)).unwrap();
    let board = Board::new([3, 0, 2, 1, 0, 4, 1, 1, 0, 2, 0, 0]).unwrap();
    let index = Encoder::new(14).index_of(&board).unwrap() as usize;
    let want = exported_14()[index] as i8;
    // A missing level, then a damaged one (a table cut short), each put
    // right at once; each is found only after the wait.
    let damaged = |e: &Error| matches!(e, Error::Corrupt { .. });
    let missing = |e: &Error| matches!(e, Error::Missing(_));
    for (before, is_it) in [
        (None, &missing as &dyn Fn(&Error) -> bool),
        (Some(&good[..good.len() / 2]), &damaged),
    ] {
        // A file another test of this process puts in place meanwhile
        // makes every reader look again at once (as a level built by this
        // process is found at once): a try that sees the failure
        // remembered shows it, and one of five is enough.
        let mut remembered = false;
        for _ in 0..5 {
            let _ = std::fs::remove_file(&path);
            if let Some(bytes) = before {
                std::fs::write(&path, bytes).unwrap();
            }
            let tables = Tables::new(Db::new(&dir), Rules::Awari);
            let first = tables.value(&board).unwrap_err();
            // After the call: the failure is remembered from a moment
            // within it, never later (timed before the call, a call slower
            // than the 50 ms spared below left the wait short).
            let failed_at = Instant::now();
            assert!(is_it(&first), "{first}");
            let tmp = dir.join("level-14.tmp");
            std::fs::write(&tmp, &good).unwrap();
            std::fs::rename(&tmp, &path).unwrap();
            // The level is there now: only the remembered failure refuses it.
            let again = tables.value(&board);
            if let Err(e) = &again {
                assert_eq!(e.to_string(), first.to_string());
            }
            std::thread::sleep(
                (RETRY_OPENING + Duration::from_millis(50)).saturating_sub(failed_at.elapsed()),
            );
            assert_eq!(tables.value(&board).unwrap(), want);
            if again.is_err() {
                remembered = true;
                break;
            }
        }
        assert!(
            remembered,
            "the failure was never remembered, in five tries"
        );
    }
}

/// A level this process builds after a probe found it missing is read at
/// once, without the wait for another process's files: any file the
/// process puts in place ends it (as a Python session that probes, builds
/// and probes again expects).
#[test]
fn a_level_built_in_this_process_is_found_at_once() {
    use mancaladb::build::Build;

    let dir = scratch("probe-built-here");
    let tables = Tables::new(Db::new(&dir), Rules::Awari);
    // The player to move sows pit 5 and takes 2 + 2 (the crate's example).
    let board = Board::parse(&["0 0 0 0 0 2 1 1 0 0 0 0"]).unwrap();
    assert!(matches!(
        tables.value(&board),
        Err(mancaladb::Error::Missing(_))
    ));
    Build::new(&Db::new(&dir), Rules::Awari, 0..=4)
        .run()
        .unwrap();
    assert_eq!(tables.value(&board).unwrap(), 4);
}
