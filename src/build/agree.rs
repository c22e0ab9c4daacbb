//! The ranks of a distributed build agree, before anything is solved, on
//! what they build and where ([`agree`]): the same program, arguments and
//! settings, and the same table directory seen by every rank.

use std::path::Path;

use crate::db::Db;
use crate::error::{Error, Result, level_set_text};
use crate::exchange::Exchange;
use crate::files::{self, RemoveOnDrop};
use crate::oware::Rules;
use crate::oware::solve::Options;
use crate::table;

/// The token file by which the ranks of a distributed build prove that they
/// see the same table directory and raw copies' directory ([`agree`]).
pub(super) const RANKS_TOKEN: &str = ".ranks-token";

/// Makes sure, before anything is solved, that every rank of `ex` builds
/// the same thing in the same place; else every rank fails with
/// [`Error::Disagree`], naming the first rank that differs from rank 0 and
/// the first thing it differs in (see [`agreed_fields`]). The
/// directories: rank 0 writes a random token into [`RANKS_TOKEN`] in its
/// `db` (which it holds the lock of) and in its raw copies' directory,
/// every rank reads both back through its own `db`, and rank 0 removes
/// them once all have. Ranks that disagreed
/// would otherwise fall out of step in their collective calls (a hang, or
/// reductions of different things), or write their slices where rank 0
/// never reads them (a table with draws in their place). One process alone
/// has nothing to agree with.
pub(super) fn agree(db: &Db, rules: Rules, levels: &[usize], ex: &dyn Exchange) -> Result<()> {
    if ex.ranks() == 1 {
        return Ok(());
    }
    let (rank, ranks) = (ex.rank(), ex.ranks());
    let mut fields = agreed_fields(db, rules, levels)?;
    // The slices of a level meet in its raw file, so the raw copies'
    // directory must be shared as well (not a disk of each node's own).
    let places = [
        ("table directory (--db)", db.dir().join(RANKS_TOKEN)),
        (
            "raw copies' directory (raw/ of --db)",
            db.raw_dir(rules).join(RANKS_TOKEN),
        ),
    ];
    let mut written = Vec::new();
    let mine = match rank {
        0 => {
            use std::hash::BuildHasher;
            let token = std::hash::RandomState::new()
                .hash_one((std::process::id(), std::time::SystemTime::now()))
                .max(1);
            for (_, path) in &places {
                files::write_atomically(path, |f| {
                    use std::io::Write;
                    writeln!(f, "{token:016x}")
                })?;
                written.push(RemoveOnDrop::new(path.clone()));
            }
            token
        }
        _ => 0,
    };
    // Rank 0 sends it only once it is in both directories.
    let token = ex.broadcast(mine);
    for (what, path) in &places {
        fields.push((*what, read_token(path, token)));
    }
    // Every field is broadcast on every rank, whatever differs.
    let differs: Vec<bool> = fields
        .iter()
        .map(|(_, value)| {
            let d = digest(value);
            ex.broadcast(d) != d
        })
        .collect();
    // The first rank that differs, and the first field it differs in.
    let verdict = ex.max(
        differs
            .iter()
            .position(|&d| d)
            .map_or(0, |i| ((ranks - rank) as u64) << 8 | (i as u64 + 1)),
    );
    // Every rank has read it; none goes on (a rank at fault would stop the
    // job) before it is gone.
    drop(written);
    ex.barrier();
    if verdict == 0 {
        return Ok(());
    }
    let at_fault = ranks - (verdict >> 8) as usize;
    let (what, here) = fields.swap_remove((verdict & 0xff) as usize - 1);
    Err(Error::Disagree {
        rank: at_fault,
        ranks,
        what,
        here: (at_fault == rank).then_some(here),
    })
}

/// What every rank of a distributed build must agree on, as it is on this
/// rank: the program (its version and a hash of its executable), the
/// rules, the levels to build, the raw cache's budget, and what the
/// environment sets for the solver but its frontier cap (each rank's own
/// business): the checkpoint interval (the ranks decide together when one
/// is due) and the forward parts (every rank walks as many). Threads and
/// `--wait` are each rank's own.
fn agreed_fields(db: &Db, rules: Rules, levels: &[usize]) -> Result<Vec<(&'static str, String)>> {
    let options = Options::from_env(db.dir())?;
    Ok(vec![
        ("program", program_identity()),
        ("rules (--rules)", rules.name().to_string()),
        (
            "levels to build (--max-seeds, --levels)",
            level_set_text(levels),
        ),
        (
            "raw cache (--raw-cache)",
            db.raw_cache()
                .map_or("all".into(), |b| format!("{b} bytes")),
        ),
        (
            "checkpoint interval (MANCALADB_CHECKPOINT_SECS)",
            options
                .checkpoint_every
                .map_or("off".into(), |d| format!("{} s", d.as_secs_f64())),
        ),
        (
            "forward part (MANCALADB_FORWARD_PART)",
            format!("{} positions", options.forward_part),
        ),
    ])
}

/// `mancaladb <version>, <first 16 hex digits of the SHA-256 of this
/// process's executable>` (or why it could not be read), computed once.
fn program_identity() -> String {
    static IDENTITY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    IDENTITY
        .get_or_init(|| {
            let hashed = std::env::current_exe()
                .and_then(std::fs::File::open)
                .and_then(|mut f| table::sha256_of_reader(&mut f))
                .map(|sum| table::hex(&sum[..8]));
            let version = env!("CARGO_PKG_VERSION");
            match hashed {
                Ok(h) => format!("mancaladb {version}, executable {h}"),
                Err(e) => format!("mancaladb {version}, executable unreadable: {e}"),
            }
        })
        .clone()
}

/// What this rank finds at `path`, rank 0's token file: the token as rank 0
/// wrote it if it is `token`, else what is there instead. A shared file
/// system may show a new file late: a while is given for it.
fn read_token(path: &Path, token: u64) -> String {
    let want = format!("{token:016x}");
    let mut tries = 0;
    loop {
        let found = match std::fs::read_to_string(path) {
            Ok(text) if text.trim() == want => return want,
            Ok(_) => format!("{} holds another build's token", path.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                format!(
                    "{} holds no token from rank 0",
                    files::parent_dir(path).display()
                )
            }
            Err(e) => format!("{}: {e}", path.display()),
        };
        tries += 1;
        if tries == 20 {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// 64 bits of the SHA-256 of `text`.
fn digest(text: &str) -> u64 {
    let sum = table::sha256(text.as_bytes());
    u64::from_le_bytes(sum[..8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        crate::files::scratch_dir("agree", name)
    }

    /// The program the ranks compare is this crate's version and the first
    /// 16 hex digits of its executable's SHA-256 (the same version built
    /// otherwise is another program).
    #[test]
    fn the_program_is_its_version_and_its_executables_hash() {
        let id = program_identity();
        let prefix = format!("mancaladb {}, executable ", env!("CARGO_PKG_VERSION"));
        let hash = id.strip_prefix(&prefix).unwrap_or_else(|| panic!("{id}"));
        assert!(
            hash.len() == 16 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "{id}"
        );
    }

    /// Rank 0's token is read back as written; another build's token, no
    /// token, or a directory in its place is said as such (after the while
    /// given to a shared file system), so that the rank that sees it differs.
    #[test]
    fn a_token_is_read_back_and_anything_else_is_said() {
        let dir = scratch("read");
        let path = dir.join(RANKS_TOKEN);
        std::fs::write(&path, "00000000000000ab\n").unwrap();
        assert_eq!(read_token(&path, 0xab), "00000000000000ab");
        assert_eq!(
            read_token(&path, 0xcd),
            format!("{} holds another build's token", path.display())
        );
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            read_token(&path, 0xab),
            format!("{} holds no token from rank 0", dir.display())
        );
        std::fs::create_dir(&path).unwrap();
        let found = read_token(&path, 0xab);
        assert!(
            found.starts_with(&format!("{}: ", path.display())) && found.contains("directory"),
            "{found}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A shared file system may show rank 0's token late: it is waited for.
    #[test]
    fn a_token_that_appears_late_is_waited_for() {
        let dir = scratch("late");
        let path = dir.join(RANKS_TOKEN);
        let writer = std::thread::spawn({
            let path = path.clone();
            move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                std::fs::write(&path, "00000000000000ab\n").unwrap();
            }
        });
        assert_eq!(read_token(&path, 0xab), "00000000000000ab");
        writer.join().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
