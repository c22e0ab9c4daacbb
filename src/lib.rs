//! mancaladb: retrograde-analysis solver and endgame-database builder for
//! mancala games.
//!
//! * [`oware`]: the rules of Oware/Awari, the published position numbering,
//!   and the parallel level solver;
//! * [`compose`]: ranking of seed distributions, shared by every game.

pub mod compose;
pub mod error;
pub mod oware;
pub mod progress;

pub use error::{Error, Result};
