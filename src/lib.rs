//! mancaladb: retrograde-analysis solver and endgame-database builder for
//! mancala games.
//!
//! # Probing
//!
//! An engine or a study asks a table set for values with a few items, the
//! first four at the crate root:
//!
//! * [`Source`]: the tables of a directory that `mancaladb build` made
//!   (or the published `scores.N` files), read in place; one `Source` is
//!   shared by any number of threads (it answers a stored board's value
//!   through the [`Values`] trait; [`query::value`] also values the
//!   boards that are not stored);
//! * [`Board`]: a position, from the mover's side, checked when made
//!   ([`Board::new`], [`Board::parse`], [`Board::from_counts`]);
//! * [`Rules`]: awari or abapa, the rule set the tables were built under;
//! * [`Encoder`]: the published numbering of a level's positions
//!   ([`Encoder::index_of`], [`Encoder::board_at`], and
//!   [`Encoder::boards`] to walk a whole level);
//! * [`query::value`], [`query::values`], [`query::analyze`] (every move
//!   valued, the best marked) and [`query::principal_line`];
//! * [`oware::moves`], for a search of its own above the tables: a
//!   board's legal moves, each with the seeds it captures and its child,
//!   seen by the opponent, who moves next; a board's value is the best
//!   `captured - value(child)` over them (a board whose mover has no seeds
//!   is worth minus the seeds left).
//!
//! **Playing a won position out.** The tables hold values, not distances:
//! a best move keeps the value but need not make progress, and a side
//! ahead that always takes, say, the lowest of its best pits can go round
//! for ever, which is worth 0, not its value. To play the value out, take
//! the first ply of [`query::principal_line`] with `max_plies` 1 (its
//! search for progress ranks the best moves by plies to a capture: about
//! 10 µs at the median, up to a tenth of a second, and a few
//! allocations, so at the root of a search, not at its nodes).
//!
//! [`Source::open`] reads tables through a block cache of up to 512 MiB
//! shared by the threads; `Source::Tables(`[`source::Tables::with_cache`]`(..))`
//! sets another size. A level whose raw copy (`raw/`, as `mancaladb build`
//! keeps them) is there moves to it, one load per probe, once its probes
//! have paid for checking it ([`probe`], "When the raw copy is trusted";
//! [`probe::Level::check_raw`] checks it at once).
//!
//! Every fallible call returns [`Error`]: `Invalid` for a bad request
//! (its message says what), `Missing` for a level that is not built,
//! `Corrupt` for a file that fails its checks (a table, a checkpoint, a
//! census file), `Io` for the system's refusal, `TooLarge` for a level
//! that needs more memory than there is, `Locked` for a directory another
//! writer holds, and `Disagree` for the ranks of a distributed build that
//! were not started alike. None of these items panics on what a caller gives it, save
//! where a `# Panics` section says so ([`Encoder::new`] past 48 seeds).
//!
//! ```
//! use mancaladb::build::Build;
//! use mancaladb::db::Db;
//! use mancaladb::query::{analyze, value};
//! use mancaladb::{Board, Rules, Source};
//!
//! # fn main() -> mancaladb::Result<()> {
//! let dir = std::env::temp_dir().join(format!("mancaladb-doc-{}", std::process::id()));
//! // What `mancaladb build --max-seeds 8` does: levels 0..=8 (125,879
//! // positions), one process, no progress shown.
//! let reports = Build::new(&Db::new(&dir), Rules::Awari, 0..=8).run()?;
//! assert_eq!(reports.len(), 9);
//!
//! let tables = Source::open(&dir, Rules::Awari, None)?;
//! // The player to move (pits 0..5) sows pit 5 and takes 2 + 2 seeds.
//! let board = Board::parse(&["0 0 0 0 0 2 1 1 0 0 0 0"])?;
//! assert_eq!(value(Rules::Awari, &tables, &board)?, 4);
//! let analysis = analyze(Rules::Awari, &tables, &board)?;
//! assert_eq!((analysis.best.as_slice(), analysis.moves[0].captures), (&[5u8][..], 4));
//!
//! // One handle for every thread of a search: an `Arc<Source>` (or a
//! // reference, or a `Box`) is a source too.
//! let shared = std::sync::Arc::new(tables);
//! std::thread::scope(|s| {
//!     s.spawn(|| assert_eq!(value(Rules::Awari, &shared, &board).unwrap(), 4));
//! });
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
//!
//! The library answers with data ([`build::LevelReport`],
//! [`query::Analysis`]); printing it is the caller's.
//!
//! # Features
//!
//! The default feature `cli` builds the `mancaladb` command line and its
//! HTTP server; a library user can leave them and their dependencies out
//! (`default-features = false`). The feature `mpi` adds the distributed
//! build.
//!
//! # Modules
//!
//! Lowest layer first (a module uses only those above it;
//! `tests/it/layers.rs` keeps it so):
//!
//! * [`error`]: the typed errors; `settings`: the `MANCALADB_*`
//!   variables, one function each; `files`: atomic writes and file kinds;
//!   `lock`: one writer at a time in a directory; `checkpoint_file`: a
//!   solver's checkpoint files and when they are due; `pits`: reading pit
//!   counts;
//! * [`compose`]: ranking of seed distributions, shared by every game;
//!   `memory`: huge-page working arrays and prefetching;
//! * [`progress`]: what the library tells while it works (stages and typed
//!   notices), to an observer the caller picks;
//! * [`exchange`]: the ranks of a distributed build and what they exchange;
//! * [`oware`]: the rules of Oware/Awari, the published position numbering,
//!   the parallel level solver and the independent forward solver;
//! * [`omweso`]: Omweso moves, the exact loop test and the loop census;
//! * [`table`]: the stored, checksummed, compressed table format;
//! * [`db`]: a directory of tables: paths, opening, records;
//! * [`probe`]: fast random probes: checked raw maps, a sharded block cache;
//! * [`stored`]: the stored lower levels a level's solver reads, block by
//!   block, and the raw-copy cache (`oware::lower` is the trait they are
//!   read through);
//! * [`build`]: building a directory level by level, resuming;
//! * [`source`]: our tables or the published VU files, read in place;
//! * [`convert`]: import and export of the published layout;
//! * [`query`], [`stats`], [`known`]: reading values back;
//! * [`verify`]: integrity, consistency and independent re-derivation.
#![warn(missing_docs)]
// The module docs carry the algorithms and name the private items that keep
// them, as code, not links: a link to a private item is dead in the public
// docs (`.ci/run` builds both, warnings denied).

pub mod build;
pub(crate) mod checkpoint_file;
pub mod compose;
pub mod convert;
pub mod db;
pub mod error;
pub mod exchange;
pub(crate) mod files;
pub mod known;
pub(crate) mod lock;
pub(crate) mod memory;
pub mod omweso;
pub mod oware;
pub(crate) mod pits;
pub mod probe;
pub mod progress;
pub mod query;
pub(crate) mod settings;
pub mod source;
pub mod stats;
pub mod stored;
pub mod table;
pub mod verify;

pub use error::{Error, Result};
pub use memory::{HugeSlice, Plain, reserve, reserving};
pub use oware::{Board, Encoder, Rules};
pub use source::{Source, Values};
