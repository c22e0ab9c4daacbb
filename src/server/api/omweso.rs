//! The Omweso route: whether each move of a configuration can loop
//! (`/api/omweso/loops`), the report of `mancaladb loops --json`.

use axum::Json;
use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use serde::{Deserialize, Serialize};

use mancaladb::omweso::{Side, moves as omweso};

use super::{Answer, ApiError, Gone, blocking, given, query};

/// Most laps an Omweso start is followed (and the default).
pub const MAX_LAPS: u64 = 10_000_000;

/// Query of `GET /api/omweso/loops`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopsQuery {
    side: Option<String>,
    opponent: Option<String>,
    pit: Option<String>,
    first_turn: Option<String>,
    max_laps: Option<String>,
}

/// The answer of `GET /api/omweso/loops`: the report of `loops --json`,
/// with the lap budget used.
#[derive(Serialize)]
pub struct Loops {
    #[serde(flatten)]
    analysis: omweso::Analysis,
    max_laps: u64,
}

/// `GET /api/omweso/loops?side=...[&opponent=...][&pit=S][&first_turn=true][&max_laps=B]`.
pub async fn loops(q: Result<Query<LoopsQuery>, QueryRejection>) -> Answer<Loops> {
    let q = query(q)?;
    let side = given(&q.side)
        .ok_or_else(|| ApiError::bad("give side=c0,...,c15: the player's 16 pits"))?;
    let me = Side::parse(&[side], "side")?;
    let opp = match given(&q.opponent) {
        Some(o) => Side::parse(&[o], "opponent")?,
        None => Side::EMPTY,
    };
    let first_turn = match given(&q.first_turn) {
        None | Some("false" | "0") => false,
        Some("true" | "1") => true,
        Some(t) => {
            return Err(ApiError::bad(format!(
                "first_turn={t}: give true or false (or 1 or 0)"
            )));
        }
    };
    let max_laps = match given(&q.max_laps).map(str::parse::<u64>) {
        None => MAX_LAPS,
        Some(Ok(n)) if (1..=MAX_LAPS).contains(&n) => n,
        Some(_) => return Err(ApiError::bad(format!("max_laps: give 1..={MAX_LAPS}"))),
    };
    let pit = given(&q.pit).map(omweso::parse_pit).transpose()?;
    let pos = omweso::Position { me, opp };
    pos.check_in_game()?;
    let variant = omweso::Variant { first_turn };
    blocking(move |gone| omweso_loops(variant, pos, pit, max_laps, gone).map(Json)).await
}

/// The analysis of the loops route, which stops within a few hundredths
/// of a second once its request is gone.
fn omweso_loops(
    variant: omweso::Variant,
    pos: omweso::Position,
    pit: Option<usize>,
    max_laps: u64,
    gone: &Gone,
) -> Result<Loops, ApiError> {
    match omweso::analyze_unless(variant, pos, pit, max_laps, &mut || gone.is_set())? {
        Some(analysis) => Ok(Loops { analysis, max_laps }),
        None => Err(Gone::error()),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::super::gone_already;
    use super::*;

    /// An Omweso analysis whose request is gone stops, and says so. Pit 0
    /// of this side is undecided after 10^8 laps (BENCHMARKS), so its
    /// analysis asks whether to stop at least twice within the route's
    /// budget.
    #[test]
    fn loops_stop_when_their_request_is_gone() {
        let side = Side::parse(&["2 6 5 2 3 4 3 4 8 2 6 3 2 5 6 3"], "side").unwrap();
        let pos = omweso::Position {
            me: side,
            opp: Side::EMPTY,
        };
        let variant = omweso::Variant { first_turn: false };
        let loops = omweso_loops(variant, pos, Some(0), MAX_LAPS, &Gone::default()).unwrap();
        assert!(!loops.analysis.starts.is_empty());
        let stopped = omweso_loops(variant, pos, Some(0), MAX_LAPS, &gone_already())
            .err()
            .unwrap();
        assert_eq!(stopped.status, StatusCode::SERVICE_UNAVAILABLE);
    }
}
