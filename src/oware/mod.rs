//! Oware (Awari): rules, position numbering and the retrograde solver.

mod board;
pub mod forward;
mod index;
pub mod lower;
pub mod retro;
mod rules;
pub mod solve;
mod workdir;

pub use board::{Board, MAX_SEEDS, PITS, game_level, game_levels, parse_level};
pub(crate) use index::Tile;
pub use index::{Boards, Encoder, level_size};
pub use lower::{LowerLevels, levels_needed, reads_level};
pub use rules::{Move, Moves, Rules, captures, moves, quiet_moves, value_without_moves};
