//! Stored tables: round trips, and corrupt, truncated or mismatched files
//! turned into errors that name the file (never a panic, never a value);
//! builds that resume after an interruption or damage.

use std::ops::ControlFlow;
use std::path::Path;

use crate::common::{self, Recorder, file_sha256, run, scratch, stdout_of_success, succeeds};
use mancaladb::Error;
use mancaladb::build::Build;
use mancaladb::db::Db;
use mancaladb::error::{Corruption, Missing};
use mancaladb::oware::{Board, Encoder, Rules};
use mancaladb::progress::{Notice, Progress};
use mancaladb::query::analyze;
use mancaladb::source::Tables;
use mancaladb::table::{BLOCK_SIZE, Table, TableId, write_table};

/// Pseudo-random values in -14..=14 (xorshift), so blocks do not compress away.
fn values(n: usize) -> Vec<i8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 29) as i8 - 14
        })
        .collect()
}

const ID: TableId = TableId {
    game: 1,
    rules: 1,
    seeds: 14,
};

#[test]
fn tables_round_trip_across_blocks() {
    let dir = scratch("roundtrip");
    let path = dir.join("t.mdb");
    let v = values(3 * BLOCK_SIZE as usize + 123);
    let file_sha = write_table(&path, ID, &v).unwrap();
    let t = Table::open(&path).unwrap();
    assert_eq!(t.verify().unwrap(), file_sha);
    assert_eq!(t.header().positions, v.len() as u64);
    assert_eq!(t.read_all().unwrap(), v);
    for i in [
        0,
        1,
        BLOCK_SIZE as usize - 1,
        BLOCK_SIZE as usize,
        v.len() - 1,
    ] {
        assert_eq!(t.get(i as u64).unwrap(), v[i]);
    }
    assert!(matches!(t.get(v.len() as u64), Err(Error::Invalid(_))));
    assert!(!dir.join("t.mdb.tmp").exists());
    // The raw copy, written block by block, holds the same bytes.
    let raw = dir.join("scores.t");
    t.write_raw(&raw).unwrap();
    assert_eq!(std::fs::read(&raw).unwrap(), mancaladb::table::as_bytes(&v));
}

#[test]
fn a_raw_copy_of_a_damaged_table_is_its_error_and_no_file() {
    let dir = scratch("raw-of-damaged");
    let path = dir.join("t.mdb");
    write_table(&path, ID, &values(3 * BLOCK_SIZE as usize)).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // A byte in the last block: the first blocks are written before the
    // damage is met.
    let at = bytes.len() - 100;
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    let raw = dir.join("scores.t");
    let e = Table::open(&path).unwrap().write_raw(&raw).unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert!(!raw.exists() && !dir.join("scores.t.tmp").exists());
}

/// Which read of a damaged table caught the damage first.
#[derive(Debug, PartialEq)]
enum Caught {
    /// `Table::open`: every command that reads the table stops there.
    Open,
    /// Reading values: the block read that meets it fails.
    Values,
    /// Only the whole-file checksum (`verify` check 1, `build`, `export`).
    FileChecksum,
}

/// Writes a table, damages it with `damage`, and returns which read caught
/// it, the kind of damage and the message (which must name the file).
fn damaged(name: &str, damage: impl FnOnce(&mut Vec<u8>)) -> (Caught, Corruption, String) {
    let dir = scratch(name);
    let path = dir.join("t.mdb");
    write_table(&path, ID, &values(2 * BLOCK_SIZE as usize)).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    damage(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();
    let (caught, err) = match Table::open(&path) {
        Err(e) => (Caught::Open, e),
        Ok(t) => match t.read_all() {
            Err(e) => (Caught::Values, e),
            Ok(_) => (
                Caught::FileChecksum,
                t.verify().expect_err("damage went unnoticed"),
            ),
        },
    };
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    match err {
        Error::Corrupt { kind, .. } => (caught, kind, msg),
        other => panic!("not a corrupt-table error: {other}"),
    }
}

#[test]
fn damage_is_an_error_naming_the_file() {
    use Corruption as C;
    let caught = |name: &str, damage: fn(&mut Vec<u8>)| {
        let (caught, kind, _) = damaged(name, damage);
        (caught, kind)
    };
    assert_eq!(caught("magic", |b| b[0] ^= 1), (Caught::Open, C::BadMagic));
    assert!(matches!(
        caught("version", |b| b[8] = 9),
        (Caught::Open, C::Version { found: 9, .. })
    ));
    // Block size 65536 becomes 0.
    assert_eq!(
        caught("block-size", |b| b[22] ^= 1),
        (
            Caught::Open,
            C::BlockSize {
                found: 0,
                want: BLOCK_SIZE
            }
        )
    );
    // Fields the header checksum covers: refused as the table opens.
    assert_eq!(
        caught("positions", |b| b[24] ^= 4).0,
        Caught::Open,
        "a changed position count is refused on opening"
    );
    assert_eq!(
        caught("content-sha", |b| b[50] ^= 1),
        (Caught::Open, C::HeaderChecksum)
    );
    // A file shorter or longer than its index says: refused on opening,
    // before any value is read from it.
    // Cut short, the blocks end 100 bytes past the data: a size mismatch
    // (it was reported as a bad index entry).
    assert!(matches!(
        caught("truncated", |b| b.truncate(b.len() - 100)),
        (Caught::Open, C::Size { blocks_end, data }) if blocks_end == data + 100
    ));
    assert!(matches!(
        caught("tiny", |b| b.truncate(40)),
        (Caught::Open, C::Truncated { len: 40 })
    ));
    // Long enough for a header, an entry and a trailer (120 bytes), too
    // short for this table's index and tags (80 + 40) and its trailer.
    assert!(matches!(
        caught("cut-in-index", |b| b.truncate(130)),
        (Caught::Open, C::Truncated { len: 130 })
    ));
    assert!(matches!(
        caught("padded", |b| b.extend_from_slice(&[0; 7])),
        (Caught::Open, C::Size { .. })
    ));
    // The trailer holds only the whole-file checksum: values still read
    // correctly, check 1 fails.
    assert_eq!(
        caught("trailer", |b| {
            let n = b.len();
            b[n - 1] ^= 1
        }),
        (Caught::FileChecksum, C::FileChecksum)
    );
    // A flipped byte inside every compressed block: each read of that block
    // fails (zstd's content checksum or frame checks), so no wrong value.
    for part in [3usize, 2] {
        let (caught, kind, msg) = damaged(&format!("data-{part}"), |b| {
            let at = b.len() / part;
            b[at] ^= 0x10
        });
        assert_eq!(caught, Caught::Values, "{msg}");
        assert!(
            matches!(
                kind,
                C::Block { .. } | C::BlockLength { .. } | C::BlockPlace { .. }
            ),
            "{msg}"
        );
    }
}

/// A forged header that claims a level far past any game's, over a sparse
/// file long enough for its block index (512 GB): refused as the table
/// opens, before that index is hashed (every reader hung there).
#[test]
fn a_header_claiming_too_many_positions_is_refused_before_any_hashing() {
    let dir = scratch("huge-header");
    let path = dir.join("t.mdb");
    write_table(&path, ID, &values(BLOCK_SIZE as usize)).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[24..32].copy_from_slice(&(1u64 << 51).to_le_bytes());
    bytes[32..40].copy_from_slice(&(1u64 << 35).to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(1 << 40).unwrap();
    let err = Table::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Corrupt {
                kind: Corruption::TooManyPositions { found, .. },
                ..
            } if found == 1 << 51
        ),
        "{err}"
    );
    // The largest level of the game fits under the bound.
    assert!(mancaladb::oware::level_size(48) <= mancaladb::table::MAX_POSITIONS);
}

#[test]
fn a_table_of_the_wrong_level_is_refused() {
    let dir = scratch("wrong-level");
    let db = Db::new(&dir);
    Build::new(&db, Rules::Awari, 0..=3).run().unwrap();
    std::fs::copy(
        db.table_path(Rules::Awari, 2),
        db.table_path(Rules::Awari, 3),
    )
    .unwrap();
    let err = db.open(Rules::Awari, 3).unwrap_err().to_string();
    assert!(
        err.ends_with("awari-03.mdb: corrupt table: holds awari level 2, not awari level 3"),
        "{err}"
    );
    // A table of the other rule set is named by its own rules.
    Build::new(&db, Rules::Abapa, 0..=2).run().unwrap();
    std::fs::copy(
        db.table_path(Rules::Abapa, 2),
        db.table_path(Rules::Awari, 3),
    )
    .unwrap();
    let err = db.open(Rules::Awari, 3).unwrap_err().to_string();
    assert!(
        err.ends_with("awari-03.mdb: corrupt table: holds abapa level 2, not awari level 3"),
        "{err}"
    );
    std::fs::remove_file(db.table_path(Rules::Abapa, 2)).unwrap();
    let err = db.open(Rules::Abapa, 2).unwrap_err();
    assert!(matches!(err, Error::Missing { .. }));
}

fn file_bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn builds_resume_and_repair() {
    let dir = scratch("resume");
    let db = Db::new(&dir);
    let heard = Recorder::default();
    let build_all = || {
        Build::new(&db, Rules::Abapa, 0..=9)
            .progress(Progress::to(&heard))
            .run()
    };
    let first = build_all().unwrap();
    assert!(first.iter().all(|r| !r.skipped));
    // The canonical files, as committed in db/CHECKSUMS.
    let committed = crate::common::committed_checksums();
    for n in 0..=9 {
        let (_, _, content, file) = committed
            .iter()
            .find(|(r, l, _, _)| r == "abapa" && *l == n)
            .expect("abapa levels 0..=9 are listed in db/CHECKSUMS");
        let path = db.table_path(Rules::Abapa, n);
        assert_eq!(
            &mancaladb::table::hex(&Table::open(&path).unwrap().header().content_sha256),
            content
        );
        assert_eq!(&crate::common::file_sha256(&path), file, "abapa level {n}");
    }
    let level7 = file_bytes(&db.table_path(Rules::Abapa, 7));

    // An interrupted run leaves a temporary file and no level 9; damage
    // level 7 and lose the raw copy of level 4.
    std::fs::remove_file(db.table_path(Rules::Abapa, 9)).unwrap();
    std::fs::write(dir.join("abapa-09.mdb.tmp"), b"half a table").unwrap();
    // Another writer's temporary (a census saving its rows) is not the
    // build's to remove.
    std::fs::write(dir.join("omweso-census.jsonl.tmp"), b"rows").unwrap();
    let mut bytes = level7.clone();
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    std::fs::write(db.table_path(Rules::Abapa, 7), &bytes).unwrap();
    std::fs::remove_file(db.raw_path(Rules::Abapa, 4)).unwrap();
    // And stretch the raw copy of level 5 to a sparse terabyte: a copy of
    // another length is rewritten at once, never hashed (it was, for good).
    std::fs::OpenOptions::new()
        .write(true)
        .open(db.raw_path(Rules::Abapa, 5))
        .unwrap()
        .set_len(1 << 40)
        .unwrap();

    heard.clear();
    let second = build_all().unwrap();
    let rebuilt: Vec<usize> = second
        .iter()
        .filter(|r| !r.skipped)
        .map(|r| r.seeds)
        .collect();
    assert_eq!(rebuilt, [7, 9]);
    // The report says what was replaced, also when nothing is printed.
    let replaced: Vec<Option<&str>> = second.iter().map(|r| r.replaced.as_deref()).collect();
    assert!(
        replaced[7].is_some_and(|why| why.contains("abapa-07.mdb: corrupt table")),
        "{replaced:?}"
    );
    assert!(
        replaced
            .iter()
            .enumerate()
            .all(|(n, r)| n == 7 || r.is_none())
    );
    // The observer heard the same, as data: the build, the damaged level,
    // and the stages of the two levels solved, each with its size.
    let notices = heard.notices();
    assert!(
        matches!(&notices[..], [
            Notice::Building { rules, levels, ranks: 1, .. },
            Notice::Rebuilding { seeds: 7, why },
        ] if rules == "abapa" && levels == "0..9" && Some(why.as_str()) == replaced[7]),
        "{notices:?}"
    );
    let size = |n| mancaladb::oware::level_size(n);
    let stages = heard.stages();
    for n in [7, 9] {
        for stage in ["captures", "moves", "values"] {
            let label = format!("level {n}: {stage}");
            let (_, total, done) = stages
                .iter()
                .find(|(l, _, _)| *l == label)
                .unwrap_or_else(|| panic!("no stage {label} in {stages:?}"));
            assert_eq!(done, total, "{label} ends complete");
            if stage != "captures" {
                assert_eq!(*total, size(n), "{label} counts positions");
            }
        }
    }
    assert!(
        stages
            .iter()
            .all(|(l, _, _)| l.starts_with("level 7") || l.starts_with("level 9"))
    );
    assert!(!dir.join("abapa-09.mdb.tmp").exists());
    assert!(dir.join("omweso-census.jsonl.tmp").exists());
    assert_eq!(
        file_bytes(&db.table_path(Rules::Abapa, 7)),
        level7,
        "rebuilt identically"
    );
    assert!(db.raw_path(Rules::Abapa, 4).exists());
    let raw5 = std::fs::metadata(db.raw_path(Rules::Abapa, 5)).unwrap();
    assert_eq!(raw5.len(), mancaladb::oware::level_size(5));

    // Queries read through the repaired tables: the one move is a grand
    // slam, which captures nothing under abapa, and loses the 4 seeds; the
    // value is the one solved in memory.
    let tables = Tables::new(db.clone(), Rules::Abapa);
    let board = Board::parse(&["0 0 0 0 0 2 1 1 0 0 0 0"]).unwrap();
    let a = analyze(Rules::Abapa, &tables, &board).unwrap();
    let in_memory =
        common::solved(Rules::Abapa)[4][Encoder::new(4).index_of(&board).unwrap() as usize];
    assert_eq!((a.value, in_memory), (-4, -4));
    assert_eq!(a.moves.len(), 1);
    assert_eq!((a.moves[0].pit, a.moves[0].captures), (5, 0));
}

#[test]
fn a_query_on_a_damaged_table_fails_with_exit_2() {
    let dir = scratch("damaged-query");
    let db = Db::new(&dir);
    Build::new(&db, Rules::Awari, 0..=5).run().unwrap();
    let path = db.table_path(Rules::Awari, 5);
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 40] ^= 0x55; // inside the only block
    std::fs::write(&path, &bytes).unwrap();
    let out = run(&[
        "query",
        "--db",
        dir.to_str().unwrap(),
        "1 1 1 1 1 0 0 0 0 0 0 0",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("awari-05.mdb: corrupt table"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn a_build_stopped_after_a_level_keeps_it_and_resumes() {
    let dir = scratch("stopped-build");
    let db = Db::new(&dir);
    let reports = Build::new(&db, Rules::Awari, 0..=9)
        .run_with(|r| match r.seeds {
            3 => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        })
        .unwrap();
    let done: Vec<usize> = reports.iter().map(|r| r.seeds).collect();
    assert_eq!(done, [0, 1, 2, 3]);
    assert_eq!(db.levels(Rules::Awari).unwrap(), [0, 1, 2, 3]);
    let rest = Build::new(&db, Rules::Awari, 0..=9).run().unwrap();
    let skipped: Vec<bool> = rest.iter().map(|r| r.skipped).collect();
    assert_eq!(
        skipped,
        [
            true, true, true, true, false, false, false, false, false, false
        ]
    );
    // The resumed build's level 9 is the committed one.
    let want = common::committed_checksums()
        .into_iter()
        .find(|c| c.0 == "awari" && c.1 == 9)
        .unwrap();
    assert_eq!(file_sha256(&db.table_path(Rules::Awari, 9)), want.3);
}

/// Two intact blocks of equal length swapped keep the header, the index and
/// every zstd checksum valid; the block tags of format 2 catch it on every
/// read instead of answering another block's values.
#[test]
fn swapped_blocks_are_refused_on_every_read() {
    let dir = scratch("swapped");
    let path = dir.join("t.mdb");
    let bs = BLOCK_SIZE as usize;
    let mut v = vec![1i8; bs];
    v.extend(vec![2i8; bs]);
    v.extend(values(bs));
    write_table(&path, ID, &v).unwrap();
    let t = Table::open(&path).unwrap();
    assert_eq!((t.get(0).unwrap(), t.get(bs as u64).unwrap()), (1, 2));
    // Both runs compress alike: their frames can trade places.
    let mut bytes = std::fs::read(&path).unwrap();
    common::swap_first_frames(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();
    let t = Table::open(&path).unwrap();
    for i in [0, bs as u64 - 1, bs as u64] {
        let err = t.get(i).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Corrupt {
                    kind: mancaladb::error::Corruption::BlockPlace { .. },
                    ..
                }
            ),
            "{err}"
        );
    }
    assert_eq!(
        t.get(2 * bs as u64).unwrap(),
        v[2 * bs],
        "the third block is intact"
    );
}

/// Raw copies present in `db` for `rules`, by level.
fn raw_levels(db: &Db, rules: Rules) -> Vec<usize> {
    (0..=48)
        .filter(|&n| db.raw_path(rules, n).exists())
        .collect()
}

/// A raw-cache budget keeps the copies of the largest levels the next one
/// reads (plus the level just built), reads the others from their tables,
/// and builds the very same tables.
#[test]
fn a_raw_cache_budget_keeps_the_top_levels_and_builds_the_same_tables() {
    use mancaladb::oware::level_size;
    let dir = scratch("raw-budget");
    // Levels 10 and 11 (351,351 + 701,064 positions) fit, with level 9 they
    // do not, and level 12 alone (1,339,702) does not either.
    let budget = level_size(11) + level_size(10) + 1;
    let db = Db::new(&dir).with_raw_cache(Some(budget));
    // The copies after level n: every one up to n = 11 (all that levels up
    // to 13 read fit); after 12, levels 0..=11 (level 12 read 0..=10, and
    // 11 waits for level 13; 12 keeps none, as level 14 reads it and it is
    // over the budget alone); after 13, the 10 and 11 it read; after 14,
    // none (level 14 would read 12 alone).
    let want = |n: usize| -> Vec<usize> {
        match n {
            0..=11 => (0..=n).collect(),
            12 => (0..=11).collect(),
            13 => vec![10, 11],
            _ => vec![],
        }
    };
    Build::new(&db, Rules::Awari, 0..=14)
        .run_with(|r| {
            let n = r.seeds;
            assert_eq!(raw_levels(&db, Rules::Awari), want(n), "after level {n}");
            ControlFlow::Continue(())
        })
        .unwrap();
    // After the build: the largest levels within the budget (level 14
    // alone is over it, so none).
    assert_eq!(raw_levels(&db, Rules::Awari), Vec::<usize>::new());
    common::assert_committed(&dir, 14);
    // No budget: every copy comes back, written from the tables.
    let all = Db::new(&dir);
    Build::new(&all, Rules::Awari, 0..=15).run().unwrap();
    assert_eq!(raw_levels(&all, Rules::Awari), (0..=15).collect::<Vec<_>>());
    common::assert_committed(&dir, 15);
    // A build that finds every level there leaves the copies as they are,
    // even under a budget they exceed: a run restarted step by step would
    // otherwise write and remove them at each step.
    Build::new(&db, Rules::Awari, 0..=15)
        .run_with(|r| {
            assert!(r.skipped);
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(raw_levels(&db, Rules::Awari), (0..=15).collect::<Vec<_>>());
}

/// With a budget, a level built after the one above it (level 11 after
/// `0..10,12`, as 35 after `0..34,36`) does not keep the copy of the level
/// below it: the level that copy was kept for is built already.
#[test]
fn a_level_built_after_the_one_above_it_drops_the_copy_kept_for_that_one() {
    use mancaladb::stored::keeps_raw;
    let dir = scratch("raw-budget-late-level");
    let budget = Some(1 << 30);
    let db = Db::new(&dir).with_raw_cache(budget);
    let built = |levels: Vec<usize>, check: &mut dyn FnMut(usize)| {
        Build::new(&db, Rules::Awari, levels)
            .run_with(|r| {
                check(r.seeds);
                ControlFlow::Continue(())
            })
            .unwrap();
    };
    let mut copies_at_10 = Vec::new();
    built((0..=10).chain([12]).collect(), &mut |n| {
        if n == 10 {
            copies_at_10 = raw_levels(&db, Rules::Awari);
        }
    });
    assert!(
        keeps_raw(10, budget) && copies_at_10.contains(&10),
        "{copies_at_10:?}"
    );
    // Building 11 now: 12 is built, so 10's copy goes before 11 is solved.
    let mut copies_at_11 = Vec::new();
    built(vec![11], &mut |_| {
        copies_at_11 = raw_levels(&db, Rules::Awari)
    });
    assert!(!copies_at_11.contains(&10), "{copies_at_11:?}");
    assert!(copies_at_11.contains(&9), "{copies_at_11:?}");
    common::assert_committed(&dir, 12);
}

/// A build may leave out the level just below its top one, which the top
/// never reads: `--levels 0..10,12` builds level 12 with the committed
/// bytes and no level 11, `verify` checks level 12 without it, and a later
/// `--max-seeds 12` fills level 11 in. A level whose lower levels are
/// neither built nor asked for is refused before anything is solved.
#[test]
fn a_build_may_leave_the_level_below_the_top_for_later() {
    let dir = scratch("leave-level-11");
    let at = dir.to_str().unwrap();
    succeeds(&["build", "--levels", "0..10,12", "--db", at]);
    let db = Db::new(&dir);
    let built: Vec<usize> = (0..=10).chain([12]).collect();
    assert_eq!(db.levels(Rules::Awari).unwrap(), built);
    for (rules, n, _, file) in common::committed_checksums() {
        if rules == "awari" && built.contains(&n) {
            assert_eq!(
                file_sha256(&db.table_path(Rules::Awari, n)),
                file,
                "level {n}"
            );
        }
    }
    succeeds(&["verify", "--seeds", "12", "--db", at]);
    succeeds(&["build", "--max-seeds", "12", "--db", at]);
    common::assert_committed(&dir, 12);

    let empty = scratch("leave-nothing-built");
    let empty = empty.to_str().unwrap();
    common::refuses(
        &["build", "--levels", "0..8,11", "--db", empty],
        &format!(
            "level 11 reads level 9, which is neither built in {empty} nor among the levels \
             asked for (missing: 9): build them with the levels asked for (and your other \
             flags): \
             mancaladb build --rules awari --levels 0..9,11 --db {empty}"
        ),
    );
    // Typed, for the library's callers.
    let asked = Build::new(&Db::new(empty), Rules::Awari, [0, 1, 11]).run();
    assert!(
        matches!(
            &asked,
            Err(Error::Missing(Missing::Below { reader: 11, absent, .. }))
                if absent == &(2..=9).collect::<Vec<usize>>()
        ),
        "{:?}",
        asked.map(|r| r.len())
    );
    assert!(
        !Path::new(empty).join("awari-00.mdb").exists(),
        "nothing solved"
    );
    // Into a directory not there yet: refused before it is made.
    let new = Path::new(empty).join("new");
    common::refuses(
        &["build", "--levels", "11", "--db", new.to_str().unwrap()],
        "level 11 reads level 0, which is neither built",
    );
    assert!(!new.exists(), "the directory was made");
    common::refuses(
        &["build", "--levels", "3..x", "--db", empty],
        "e.g. 0..34,36",
    );
    common::refuses(
        &["build", "--levels", "0..49", "--db", empty],
        "Oware levels 0..=48",
    );
    common::refuses(
        &[
            "build",
            "--levels",
            "0..3",
            "--max-seeds",
            "3",
            "--db",
            empty,
        ],
        "cannot be used with",
    );
}

/// `Db::require_levels` names what is missing as it is: one level as
/// `Missing::Level` (which says its level), more as `Missing::SomeLevels`,
/// each once and ascending; nothing missing is no error, and a level past
/// the game is no level to build.
#[test]
fn required_levels_missing_are_named_one_or_all() {
    let dir = scratch("require-levels");
    let db = Db::new(&dir);
    Build::new(&db, Rules::Awari, 0..=2).run().unwrap();
    assert!(db.require_levels(Rules::Awari, &[0, 2, 1]).is_ok());
    assert!(db.require_levels(Rules::Awari, &[]).is_ok());
    let one = db.require_levels(Rules::Awari, &[2, 3, 0]).unwrap_err();
    assert!(
        matches!(&one, Error::Missing(m @ Missing::Level { rules: "awari", seeds: 3, .. })
            if m.level() == Some(3)),
        "{one:?}"
    );
    assert!(
        one.to_string().starts_with("level 3 (awari) not found in"),
        "{one}"
    );
    let some = db.require_levels(Rules::Awari, &[5, 1, 3, 5]).unwrap_err();
    assert!(
        matches!(&some, Error::Missing(Missing::SomeLevels { seeds, .. }) if seeds == &[3, 5]),
        "{some:?}"
    );
    assert!(matches!(
        db.require_levels(Rules::Awari, &[49]),
        Err(Error::Invalid(_))
    ));
}

/// A raw copy damaged in place (its length right, its values not) is
/// rewritten from its table before a build maps it, which the build does
/// unchecked: the level built is the committed one, and the copy is its
/// table's values again. The sound copies beside it are kept as they are,
/// the same files, not written again at every level.
#[test]
fn a_raw_copy_damaged_in_place_is_rewritten_before_a_build_reads_it() {
    use std::os::unix::fs::MetadataExt;
    let dir = scratch("raw-damaged-in-place");
    let db = Db::new(&dir);
    Build::new(&db, Rules::Awari, 0..=6).run().unwrap();
    let raw = db.raw_path(Rules::Awari, 3);
    let kept = std::fs::read(&raw).unwrap();
    assert_eq!(kept.len() as u64, mancaladb::oware::level_size(3));
    let inode = |n: usize| {
        std::fs::metadata(db.raw_path(Rules::Awari, n))
            .unwrap()
            .ino()
    };
    let sound: Vec<u64> = (0..=5).map(inode).collect();
    // Every value 0: in range, so only the content checksum tells.
    std::fs::write(&raw, vec![0u8; kept.len()]).unwrap();
    Build::new(&db, Rules::Awari, 0..=7).run().unwrap();
    common::assert_committed(&dir, 7);
    assert_eq!(std::fs::read(&raw).unwrap(), kept);
    for n in [0, 1, 2, 4, 5] {
        assert_eq!(inode(n), sound[n], "level {n}'s copy was written again");
    }
    assert_ne!(inode(3), sound[3], "the damaged copy was not replaced");
}

#[test]
fn a_table_of_another_block_size_is_refused_as_it_opens() {
    // A foreign table, its checksums made to hold, with blocks of 2^20
    // positions (the field goes to 2^32 - 1: a block read would reserve
    // that much); the block count fits its positions.
    let dir = scratch("foreign-block-size");
    let path = dir.join("t.mdb");
    let v = values(3 * BLOCK_SIZE as usize);
    write_table(&path, ID, &v).unwrap();
    let mut b = std::fs::read(&path).unwrap();
    let blocks = 3usize;
    let data_start = 80 + 8 * (2 * blocks + 1);
    b[20..24].copy_from_slice(&(1u32 << 20).to_le_bytes());
    b[32..40].copy_from_slice(&1u64.to_le_bytes());
    let check = mancaladb::table::sha256(&[&b[..72], &b[80..data_start]].concat());
    b[72..80].copy_from_slice(&check[..8]);
    std::fs::write(&path, &b).unwrap();
    let e = Table::open(&path).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Corrupt {
                kind: Corruption::BlockSize {
                    found: 0x10_0000,
                    want: BLOCK_SIZE
                },
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().ends_with(
            "t.mdb: corrupt table: block size 1048576; tables have blocks of 65536 positions"
        ),
        "{e}"
    );
}

#[test]
fn the_checksums_script_gives_the_committed_lines_for_both_rule_sets() {
    // `scripts/checksums.sh` hashed VU exports, which abapa tables cannot
    // make: on a directory holding them it printed nothing and failed.
    let dir = common::built("checksums-script", Rules::Abapa, 9);
    for n in 0..=18 {
        let name = format!("awari-{n:02}.mdb");
        std::fs::copy(common::awari_db().join(&name), dir.join(&name)).unwrap();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // No committed file to keep lines from: only the directory's lines.
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/checksums.sh"))
        .arg(&dir)
        .env("BIN", env!("CARGO_BIN_EXE_mancaladb"))
        .env("CHECKSUMS", dir.join("none"))
        .output()
        .unwrap();
    let printed: Vec<String> = stdout_of_success(out)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    let committed = std::fs::read_to_string(root.join("db/CHECKSUMS")).unwrap();
    let want: Vec<String> = committed
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match (f.first(), f.get(1).and_then(|n| n.parse::<usize>().ok())) {
                (Some(&"awari"), Some(n)) => n <= 18,
                (Some(&"abapa"), Some(n)) => n <= 9,
                _ => false,
            }
        })
        .map(str::to_string)
        .collect();
    assert_eq!(want.len(), 19 + 10);
    assert_eq!(printed, want);
    // A directory without tables is an error, never a file of comments
    // only (which `> CHECKSUMS.new && mv` would make db/CHECKSUMS).
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/checksums.sh"))
        .arg(&empty)
        .env("BIN", env!("CARGO_BIN_EXE_mancaladb"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    // A table with other values than the committed lines is hashed, with a
    // warning; one damaged where `stats` does not read (its last byte, of
    // the whole-file sha256) is refused, not hashed into the lines (a
    // researcher's review).
    let checksums = || {
        std::process::Command::new("bash")
            .arg(root.join("scripts/checksums.sh"))
            .arg(&dir)
            .env("BIN", env!("CARGO_BIN_EXE_mancaladb"))
            .output()
            .unwrap()
    };
    let three = dir.join("awari-03.mdb");
    let zeros = vec![0i8; mancaladb::oware::level_size(3) as usize];
    write_table(&three, Db::table_id(Rules::Awari, 3), &zeros).unwrap();
    let out = checksums();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(
        err.starts_with("checksums.sh: warning: awari level 3 holds other values than "),
        "{err}"
    );
    let mut bytes = std::fs::read(&three).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&three, &bytes).unwrap();
    let out = checksums();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "{err}");
    assert!(err.contains(": a table of awari fails check 1 ("), "{err}");
}

/// `bytes` (a table file) with its header check and its trailer's
/// whole-file sha256 made to hold again, as `db/README.md` defines them:
/// a forged table that only the checks of the layout itself can refuse.
fn rechecked(mut bytes: Vec<u8>, data_start: usize) -> Vec<u8> {
    let check = mancaladb::table::sha256(&[&bytes[..72], &bytes[80..data_start]].concat());
    bytes[72..80].copy_from_slice(&check[..8]);
    let body = bytes.len() - 32;
    let file = mancaladb::table::sha256(&bytes[..body]);
    bytes[body..].copy_from_slice(&file);
    bytes
}

/// A table of format version 1 (the layout without block tags), which this
/// build still reads: the same values, checks and checksums as the version
/// 2 table it is cut from.
#[test]
fn a_version_1_table_is_still_read() {
    let dir = scratch("version-1");
    let path = dir.join("t.mdb");
    let v = values(2 * BLOCK_SIZE as usize + 77);
    write_table(&path, ID, &v).unwrap();
    let v2 = std::fs::read(&path).unwrap();
    let blocks = 3usize;
    let (offsets_end, tags_end) = (80 + 8 * (blocks + 1), 80 + 8 * (2 * blocks + 1));
    let mut v1 = [&v2[..offsets_end], &v2[tags_end..]].concat();
    v1[8..12].copy_from_slice(&1u32.to_le_bytes());
    let v1 = rechecked(v1, offsets_end);
    assert_eq!(v1.len(), v2.len() - 8 * blocks);
    std::fs::write(&path, &v1).unwrap();
    let t = Table::open(&path).unwrap();
    assert_eq!(t.header().positions, v.len() as u64);
    assert_eq!(t.verify().unwrap()[..], v1[v1.len() - 32..]);
    assert_eq!(t.read_all().unwrap(), v);
    for i in [0, BLOCK_SIZE as usize, v.len() - 1] {
        assert_eq!(t.get(i as u64).unwrap(), v[i]);
    }
}

/// A block index that does not start at 0 or goes backwards, under a
/// header check made to hold: refused as the table opens, naming the entry.
#[test]
fn a_block_index_out_of_order_is_refused_as_it_opens() {
    let dir = scratch("index-order");
    let path = dir.join("t.mdb");
    write_table(&path, ID, &values(3 * BLOCK_SIZE as usize)).unwrap();
    let good = std::fs::read(&path).unwrap();
    let blocks = 3usize;
    let data_start = 80 + 8 * (2 * blocks + 1);
    let entry =
        |b: &[u8], k: usize| u64::from_le_bytes(b[80 + 8 * k..88 + 8 * k].try_into().unwrap());
    let set = |b: &mut Vec<u8>, k: usize, v: u64| {
        b[80 + 8 * k..88 + 8 * k].copy_from_slice(&v.to_le_bytes())
    };
    assert_eq!(entry(&good, 0), 0);
    assert!(entry(&good, 1) < entry(&good, 2));
    let opened = |bytes: Vec<u8>| {
        std::fs::write(&path, rechecked(bytes, data_start)).unwrap();
        Table::open(&path)
    };
    // The forging itself keeps a sound table sound.
    assert!(opened(good.clone()).is_ok());
    // Entry 0 past the start of the data.
    let mut b = good.clone();
    set(&mut b, 0, 1);
    assert!(matches!(
        opened(b),
        Err(Error::Corrupt {
            kind: Corruption::IndexEntry(0),
            ..
        })
    ));
    // Block 1 ends before block 0 does.
    let mut b = good.clone();
    set(&mut b, 2, entry(&good, 1) - 1);
    assert!(matches!(
        opened(b),
        Err(Error::Corrupt {
            kind: Corruption::IndexEntry(2),
            ..
        })
    ));
}
