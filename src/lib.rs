//! mancaladb: retrograde-analysis solver and endgame-database builder for
//! mancala games.
//!
//! * [`oware`]: the rules of Oware/Awari, the published position numbering,
//!   and the parallel level solver;
//! * [`compose`]: ranking of seed distributions, shared by every game;
//! * [`table`]: the stored, checksummed, compressed table format;
//! * [`db`]: a directory of tables, built and resumed level by level;
//! * [`exchange`]: the ranks of a distributed build and what they exchange;
//! * [`query`] and [`stats`]: reading values back;
//! * [`source`]: our tables or the published VU files, read in place;
//! * [`verify`]: integrity, consistency and independent re-derivation;
//! * [`omweso`]: Omweso moves, the exact loop test and the loop census.

pub mod compose;
pub mod db;
pub mod error;
pub mod exchange;
pub mod known;
pub mod memory;
pub mod oware;
pub mod pits;
pub mod progress;
pub mod query;
pub mod source;
pub mod stats;
pub mod table;
pub mod verify;

pub use error::{Error, Result};
pub mod omweso;
