//! `known`: the starting positions' values from the levels present, and
//! what the missing levels would take.

use std::path::Path;
use std::process::ExitCode;

use mancaladb::Error;
use mancaladb::build::{
    DiskRoom, Fit, MemoryLimit, Needs, WORKING_BYTES_PER_POSITION, address_space_limit,
    memory_limit, over_address_space,
};
use mancaladb::error::level_set_text;
use mancaladb::known::starts;
use mancaladb::oware::levels_needed;
use mancaladb::progress::bytes_text;
use mancaladb::stored::DEFAULT_RAW_CACHE;

use super::args::{Reading, shell_quote};
use super::output::{human_seconds, out};
use super::query::{not_verified, verdict};

/// Options of `known`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    read: Reading,
}

/// Values the four starting positions where the levels allow.
pub fn run(a: Args) -> Result<ExitCode, Error> {
    // An empty directory shows what building would take (a missing one is
    // refused by `open`).
    let (rules, source) = a.read.open()?;
    let dir = source.dir();
    let present = source.levels()?;
    // A level counts as present only if it opens: a damaged one (or a
    // directory in its place) would fail the build this prints, so it is
    // named now, as `stats` and `query` name it.
    for &n in &present {
        source.require(n)?;
    }
    let found = starts(rules, &source, &present, |levels| {
        source.all_verified(levels)
    })?;
    let rate = source.db().and_then(|(db, _)| db.measured_rate());
    out!(
        "Starting positions under {rules} rules, from {}:",
        dir.display()
    );
    for s in &found {
        let name = format!("{} per pit ({} seeds)", s.per_pit, s.seeds);
        match s.value {
            Some(v) => {
                let levels: Vec<String> = s.levels_used.iter().map(|n| n.to_string()).collect();
                let checked = match s.verified {
                    true => format!(
                        "levels {} verified",
                        level_set_text(&levels_needed(s.seeds))
                    ),
                    false => not_verified(&source),
                };
                out!(
                    "  {name}: value {v:+}, {}; levels read {}; {checked}",
                    verdict(v),
                    levels.join(", ")
                );
            }
            None => {
                let levels = level_set_text(&s.missing);
                let (needs, them) = match s.missing.len() {
                    1 => (format!("level {levels}"), "it"),
                    n => (format!("levels {levels} ({n} missing)"), "them"),
                };
                let remedy = match source.db() {
                    Some((_, rules)) => format!(
                        "build {them}: mancaladb build --rules {rules} --levels {levels} --db {}",
                        shell_quote(dir)
                    ),
                    // Only the levels it needs: level seeds - 1 is never read.
                    None => format!(
                        "take the files here as tables (mancaladb import --vu {dir} --db DB), build the rest (mancaladb build --levels {needed} --db DB) and export them here: mancaladb export --format vu --db DB --out {dir}",
                        dir = shell_quote(dir),
                        needed = level_set_text(&levels_needed(s.seeds)),
                    ),
                };
                out!(
                    "  {name}: needs {needs}: {} positions, {} bytes uncompressed{}; {remedy}",
                    s.missing_positions,
                    s.missing_positions,
                    s.needs.map_or(String::new(), |n| {
                        let room = source
                            .db()
                            .and_then(|(db, rules)| DiskRoom::of(db, rules, &s.missing));
                        let room = room.map(|room| (room, dir));
                        let limits = (memory_limit(), address_space_limit());
                        cost(n, s.missing.len(), s.missing_positions, rate, room, limits)
                    }),
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What building the missing levels takes, and whether this machine has it
/// (`limits`: its memory limit and this process's address-space limit): a
/// time from the measured rate only where the memory is there; the room on
/// the disk of the table directory `room.1`, where it is short.
fn cost(
    n: Needs,
    levels: usize,
    positions: u64,
    rate: Option<f64>,
    room: Option<(DiskRoom, &Path)>,
    limits: (Option<MemoryLimit>, Option<u64>),
) -> String {
    let building = match levels {
        1 => "building it",
        _ => "building them in this order",
    };
    let mut text = format!(
        "; level {} needs {} of working memory ({WORKING_BYTES_PER_POSITION} bytes/position), {building} takes {} of disk at most (the tables, the work files, raw file and new table of the level being solved, raw copies up to {} GiB)",
        n.largest_level,
        bytes_text(n.memory),
        bytes_text(n.disk),
        DEFAULT_RAW_CACHE >> 30
    );
    let (limit, own) = limits;
    match Fit::of(n.memory as f64, n.memory as f64, limit, own) {
        Fit::OverMemory(limit) => text.push_str(&format!(
            ": {limit} of memory, so not here, but over the ranks of several machines (`build --distributed`, README)"
        )),
        Fit::OverAddressSpace(own) => {
            text.push_str(&format!(": {}", over_address_space(own)));
        }
        Fit::Fits => {
            if let Some((room, dir)) = room.filter(|(room, _)| room.is_short()) {
                text.push_str(&format!(
                    ": {} has room for {} (free, or held by its raw copies), so make room first, or build in a larger file system",
                    dir.display(),
                    bytes_text(room.room)
                ));
            }
            if let Some(r) = rate {
                text.push_str(&format!(
                    "; about {} at the {:.1} M positions/s measured here for the largest level built (larger levels run slower)",
                    human_seconds(positions as f64 / r),
                    r / 1e6
                ));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use mancaladb::build::SetBy;

    /// A machine with memory to spare and no address-space limit.
    const ROOMY: (Option<MemoryLimit>, Option<u64>) = (
        Some(MemoryLimit {
            bytes: 1 << 40,
            set_by: SetBy::Machine,
        }),
        None,
    );

    /// Where the table directory's disk is short, `known` says so and how
    /// much room there is, and still gives the time; where it is not, it
    /// says nothing of it.
    #[test]
    fn a_short_disk_is_named_with_its_room() {
        let needs = Needs::of(&[20]);
        let dir = Path::new("/data/db");
        let short = DiskRoom {
            need: needs.disk,
            room: 21_000_000,
        };
        let text = cost(needs, 1, 80_000_000, Some(4e6), Some((short, dir)), ROOMY);
        assert!(
            text.contains(": /data/db has room for 21.0 MB (free, or held by its raw copies), so make room first, or build in a larger file system; about 20 s at the 4.0 M positions/s"),
            "{text}"
        );
        let roomy = DiskRoom {
            need: needs.disk,
            room: needs.disk,
        };
        let text = cost(needs, 1, 80_000_000, Some(4e6), Some((roomy, dir)), ROOMY);
        assert!(!text.contains("has room"), "{text}");
        assert!(
            text.contains("; about 20 s at the 4.0 M positions/s"),
            "{text}"
        );
    }

    /// A small level's needs read in megabytes, not as "0.0 GB" and "0 GB"
    /// (what `known` said of the 12-seed game before), and a large one's in
    /// gigabytes.
    #[test]
    fn small_needs_read_in_megabytes() {
        let small = cost(Needs::of(&[12]), 1, 1_000_000, None, None, ROOMY);
        assert!(
            !small.contains(" 0 GB") && !small.contains("0.0 GB"),
            "{small}"
        );
        assert!(
            small.contains(" MB of working memory") && small.contains(" MB of disk at most"),
            "{small}"
        );
        let large = cost(Needs::of(&[36]), 1, 1_000_000, None, None, ROOMY);
        assert!(
            large.contains(" GB of working memory") && large.contains(" GB of disk at most"),
            "{large}"
        );
    }

    /// The need of one level or of several, in order; the time from the
    /// measured rate, and none without one.
    #[test]
    fn needs_and_time_of_the_levels_missing() {
        let one = cost(Needs::of(&[20]), 1, 80_000_000, Some(4e6), None, ROOMY);
        let needs = Needs::of(&[20]);
        assert!(
            one.starts_with(&format!(
                "; level 20 needs {} of working memory ({WORKING_BYTES_PER_POSITION} bytes/position), building it takes {} of disk at most",
                bytes_text(needs.memory),
                bytes_text(needs.disk)
            )),
            "{one}"
        );
        assert!(one.ends_with("; about 20 s at the 4.0 M positions/s measured here for the largest level built (larger levels run slower)"), "{one}");
        let two = cost(Needs::of(&[18, 20]), 2, 9_000_000_000, None, None, ROOMY);
        assert!(two.starts_with("; level 20 needs "), "{two}");
        assert!(
            two.contains(", building them in this order takes "),
            "{two}"
        );
        assert!(!two.contains("about"), "{two}");
        let long = cost(Needs::of(&[20]), 1, 9_000_000_000, Some(1e6), None, ROOMY);
        assert!(
            long.contains("; about 2.5 h at the 1.0 M positions/s"),
            "{long}"
        );
    }

    /// A level whose working memory is more than the memory there is, or
    /// more than this process may map, gets no time: what stops it, and
    /// what to do. A level that just fits gets its time.
    #[test]
    fn levels_past_the_memory_get_no_time() {
        let needs = Needs::of(&[36]);
        let machine = MemoryLimit {
            bytes: needs.memory - 1,
            set_by: SetBy::Machine,
        };
        let text = cost(needs, 1, 1, Some(4e6), None, (Some(machine), None));
        assert!(
            text.ends_with(&format!(
                ": {machine} of memory, so not here, but over the ranks of several machines (`build --distributed`, README)"
            )),
            "{text}"
        );
        let group = MemoryLimit {
            bytes: needs.memory / 2,
            set_by: SetBy::ControlGroup,
        };
        let text = cost(needs, 1, 1, Some(4e6), None, (Some(group), None));
        assert!(
            text.contains(": this process's control group allows "),
            "{text}"
        );
        assert!(!text.contains("about"), "{text}");

        let fits = MemoryLimit {
            bytes: needs.memory,
            set_by: SetBy::Machine,
        };
        let own = needs.memory - 1;
        let text = cost(needs, 1, 1, Some(4e6), None, (Some(fits), Some(own)));
        assert!(
            text.ends_with(&format!(
                ": this process's address-space limit (ulimit -v or -d) is {:.1} GB, which the mapped lower levels and the threads' stacks share too: lift the limit, or raise it well above that",
                own as f64 / 1e9
            )),
            "{text}"
        );
        let text = cost(
            needs,
            1,
            4_000_000,
            Some(4e6),
            None,
            (Some(fits), Some(needs.memory)),
        );
        assert!(text.ends_with("; about 1 s at the 4.0 M positions/s measured here for the largest level built (larger levels run slower)"), "{text}");
    }
}
