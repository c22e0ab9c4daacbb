//! mancaladb: retrograde-analysis solver and endgame-database builder for
//! mancala games.
//!
//! * [`oware`]: the rules of Oware/Awari, the published position numbering,
//!   and the parallel level solver;
//! * [`compose`]: ranking of seed distributions, shared by every game;
//! * [`table`]: the stored, checksummed, compressed table format;
//! * [`db`]: a directory of tables, built and resumed level by level;
//! * [`query`] and [`stats`]: reading values back.

pub mod compose;
pub mod db;
pub mod error;
pub mod memory;
pub mod oware;
pub mod pits;
pub mod progress;
pub mod query;
pub mod stats;
pub mod table;

pub use error::{Error, Result};
pub mod omweso;
