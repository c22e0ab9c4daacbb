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
pub use index::{Cursor, Encoder, TILE_WIDTH, Tile, level_size};
pub use lower::{LowerLevels, levels_needed, reads_level};
pub use rules::{Move, Moves, Rules, captures, moves, play, quiet_moves, sow};
