//! Omweso (Uganda; 4 rows of 8 pits, relay sowing): the move engine, the
//! exact infinite-loop test, and the exhaustive loop census.
//!
//! Each player owns 16 pits on one closed loop (see [`Side`]). Sowing is in
//! relays: a lap ending in an occupied pit lifts it and goes on, so a move
//! can go on forever. [`relay`] holds the facts that decide that exactly;
//! [`moves`] plays whole moves with captures and reverse captures;
//! [`census`] counts looping configurations by seed count.

pub mod census;
pub mod moves;
pub mod relay;
mod side;

pub use side::{Dir, LEFTMOST, MAX_SEEDS, PITS, Side};
