//! Oware (Awari): rules, position numbering and the retrograde solver.

mod board;
mod index;
pub mod retro;
mod rules;
pub mod forward;
pub mod solve;

pub use board::{Board, MAX_SEEDS, PITS};
pub use index::{level_size, Cursor, Encoder};
pub use rules::{capture_run, moves, sow, value_from_children, Move, Moves, Rules};
