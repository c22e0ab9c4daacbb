//! mancaladb: retrograde-analysis solver and endgame-database builder for
//! mancala games.
//!
//! The modules, lowest layer first (a module uses only those above it;
//! `tests/it/layers.rs` keeps it so):
//!
//! * [`error`]: the typed errors; `files`: atomic writes and file kinds;
//!   `lock`: one writer at a time in a directory; `checkpoint_file`: a
//!   solver's checkpoint files and when they are due; `pits`: reading pit
//!   counts; `settings`: the `MANCALADB_*` variables, one function each;
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
//!
//! The default feature `cli` builds the `mancaladb` command line and its
//! HTTP server; a library user can leave them and their dependencies out
//! (`default-features = false`). The feature `mpi` adds the distributed
//! build.
//!
//! # Building a table set and asking it
//!
//! What `mancaladb build --max-seeds 8` and `mancaladb query` do, from
//! Rust: the library answers with data ([`build::LevelReport`],
//! [`query::Analysis`]); printing it is the caller's.
//!
//! ```
//! use mancaladb::build::build;
//! use mancaladb::db::Db;
//! use mancaladb::exchange::Alone;
//! use mancaladb::oware::{Board, Rules};
//! use mancaladb::progress::Progress;
//! use mancaladb::query::{analyze, value};
//! use mancaladb::source::Source;
//!
//! # fn main() -> mancaladb::Result<()> {
//! let dir = std::env::temp_dir().join(format!("mancaladb-doc-{}", std::process::id()));
//! // Levels 0..=8 (a few thousand positions), one process, no progress.
//! let reports = build(&Db::new(&dir), Rules::Awari, 0..=8, &Alone, Progress::QUIET, false, |_| {})?;
//! assert_eq!(reports.len(), 9);
//!
//! let tables = Source::open(&dir, Rules::Awari, None)?;
//! // The player to move (pits 0..5) sows pit 5 and takes 2 + 2 seeds.
//! let board = Board::parse(&["0 0 0 0 0 2 1 1 0 0 0 0"])?;
//! assert_eq!(value(Rules::Awari, &tables, &board)?, 4);
//! let analysis = analyze(Rules::Awari, &tables, &board)?;
//! assert_eq!((analysis.best.as_slice(), analysis.moves[0].captures), (&[5u8][..], 4));
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
// The module docs carry the algorithms, and name the private items that
// keep them: `cargo doc --document-private-items` links them.
#![allow(rustdoc::private_intra_doc_links)]

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
pub use memory::reserve;
