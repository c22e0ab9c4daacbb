//! The Awari routes: a position (`/api/awari`), its principal line
//! (`/api/awari/mainline`), batches of positions (`/api/awari/batch`),
//! the levels served (`/api/levels`) and a level's statistics
//! (`/api/stats/{rules}/{seeds}`).

use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State as Shared};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::OwnedSemaphorePermit;

use mancaladb::Error;
use mancaladb::oware::{Board, Rules, parse_level};
use mancaladb::query::{
    Analysis, Category, FinalScore, LINE_PLIES, Line, Taken, ValuedBy, analyze, principal_line,
};
use mancaladb::source::{LevelInfo, Source};
use mancaladb::stats::LevelStats;

use super::{Answer, ApiError, ErrorBody, Gone, NoQuery, State, blocking, failed, given, query};

/// Most boards in one batch request.
pub const MAX_BATCH: usize = 10_000;

/// Query of `GET /api/awari`. A parameter of no route is refused, not
/// ignored: `rule=abapa` answered with awari values would be wrong
/// silently.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionQuery {
    board: Option<String>,
    rules: Option<String>,
    captured: Option<String>,
}

/// Query of `GET /api/awari/mainline` (no `captured`: a line does not
/// use it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MainlineQuery {
    board: Option<String>,
    rules: Option<String>,
}

fn board(text: Option<&str>) -> Result<Board, ApiError> {
    let text = text.ok_or_else(|| {
        ApiError::bad("give board=P0,...,P11: twelve pit counts, the player to move's first")
    })?;
    Ok(Board::parse(&[text])?)
}

/// Seeds each side has taken, as `captured=MOVER,OPPONENT`.
fn captured(text: &str, board: &Board) -> Result<Taken, ApiError> {
    Ok(Taken::parse(board, text)?)
}

/// The answer of `GET /api/awari`, as `openapi.json` states it. Kept apart
/// from [`Analysis`] on purpose: the library's names may change without
/// changing the HTTP contract, and a new field of `Analysis` reaches
/// clients only when it is added here and to `openapi.json` (the server
/// tests check every answer against that document: `tests/it/openapi.rs`).
#[derive(Serialize)]
pub struct Position {
    board: Board,
    seeds: usize,
    rules: &'static str,
    value: i8,
    category: Category,
    /// `table`, `vu` (stored values), `one-ply` (valued from its moves) or
    /// `rules` (no moves: the player to move has no seeds).
    source: &'static str,
    #[serde(rename = "final", skip_serializing_if = "Option::is_none")]
    final_score: Option<FinalScore>,
    /// Best first.
    moves: Vec<Move>,
    best: Vec<u8>,
}

#[derive(Serialize)]
struct Move {
    pit: u8,
    captures: u8,
    value: i8,
    category: Category,
    /// The position after the move, seen by the player to move next.
    board: Board,
}

impl Position {
    fn of(rules: Rules, source: &Source, a: &Analysis, taken: Option<Taken>) -> Position {
        let mut list: Vec<Move> = a
            .moves
            .iter()
            .map(|m| Move {
                pit: m.pit,
                captures: m.captures,
                value: m.value,
                category: m.category,
                board: m.child,
            })
            .collect();
        list.sort_by_key(|m| (-m.value, m.pit));
        Position {
            board: a.board,
            seeds: a.seeds,
            rules: rules.name(),
            value: a.value,
            category: a.category,
            source: match (a.valued_by, source) {
                (ValuedBy::Rules, _) => "rules",
                (ValuedBy::Moves, _) => "one-ply",
                (ValuedBy::Level, Source::Vu(_)) => "vu",
                (ValuedBy::Level, Source::Tables(_)) => "table",
            },
            final_score: taken.map(|t| FinalScore::of(a, t)),
            moves: list,
            best: a.best.clone(),
        }
    }
}

/// A position answered from `source`: its own level must be present
/// (404 naming it otherwise), then its moves' levels. A position whose
/// player to move has no seeds, the empty board among them, reads no
/// level: the game is over (value `-seeds`, no moves), as for `query`.
fn answer(
    rules: Rules,
    source: &Source,
    board: &Board,
    taken: Option<Taken>,
) -> Result<Position, ApiError> {
    let a = analyze(rules, source, board)?;
    Ok(Position::of(rules, source, &a, taken))
}

/// `GET /api/awari?board=...[&rules=...][&captured=M,O]`.
pub async fn position(
    Shared(state): Shared<Arc<State>>,
    q: Result<Query<PositionQuery>, QueryRejection>,
) -> Answer<Position> {
    let q = query(q)?;
    let b = board(given(&q.board))?;
    let taken = given(&q.captured).map(|c| captured(c, &b)).transpose()?;
    // On the async worker: a position is about seven probes, and handing
    // them to the blocking pool cost a third of the throughput with eight
    // clients (BENCHMARKS, "serve under load"). The longer routes (lines,
    // batches, levels, statistics) go to the pool.
    let (rules, source) = state.source(given(&q.rules))?;
    Ok(Json(answer(rules, source, &b, taken)?))
}

/// The answer of `GET /api/awari/mainline`.
#[derive(Serialize)]
pub struct Mainline {
    board: Board,
    seeds: usize,
    rules: &'static str,
    value: i8,
    category: Category,
    #[serde(flatten)]
    line: Line,
}

/// `GET /api/awari/mainline?board=...[&rules=...]`: best moves until the
/// game ends, a position repeats (endless play at value 0; otherwise no
/// progress found, past the search's limit or for want of a missing
/// level), a level is missing, or 400 plies.
pub async fn mainline(
    Shared(state): Shared<Arc<State>>,
    q: Result<Query<MainlineQuery>, QueryRejection>,
) -> Answer<Mainline> {
    let q = query(q)?;
    let b = board(given(&q.board))?;
    // One library call: a line cannot stop midway (at most a few seconds
    // at level 36, BENCHMARKS "Principal lines").
    blocking(move |_| {
        let (rules, source) = state.source(given(&q.rules))?;
        let first = answer(rules, source, &b, None)?;
        Ok(Json(Mainline {
            board: b,
            seeds: first.seeds,
            rules: first.rules,
            value: first.value,
            category: first.category,
            line: principal_line(rules, source, &b, LINE_PLIES)?,
        }))
    })
    .await
}

/// Body of `POST /api/awari/batch`: an object (serde's derived structs
/// also take a list of the fields' values, `["awari", [...]]`; the body
/// is documented as an object, and only that is taken). Each board is
/// kept as its JSON text and read on its own ([`batch_board`]), so that a
/// bad one fails only its item.
pub struct Batch {
    rules: Option<String>,
    boards: Vec<Box<RawValue>>,
}

/// The fields of a [`Batch`], read from its object.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchFields {
    rules: Option<String>,
    boards: Vec<Box<RawValue>>,
}

impl<'de> Deserialize<'de> for Batch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Batch, D::Error> {
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Batch;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object {\"rules\": ..., \"boards\": [...]}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Batch, A::Error> {
                let f =
                    BatchFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Batch {
                    rules: f.rules,
                    boards: f.boards,
                })
            }
        }
        d.deserialize_map(Object)
    }
}

/// A board of a batch: a string (`"1,1,..."`) or a list of twelve counts,
/// each count read from its JSON text, so that every count gets the
/// message of a board given as text (read as JSON numbers, `1e400` failed
/// the whole batch, and `-0` and a number past `u64` were read as floats).
fn batch_board(item: &RawValue) -> Result<Board, Error> {
    let not_a_board =
        || Error::Invalid("give a board as \"P0,...,P11\" or a list of twelve pit counts".into());
    if let Ok(text) = serde_json::from_str::<String>(item.get()) {
        return Board::parse(&[text]);
    }
    let pits: Vec<&RawValue> = serde_json::from_str(item.get()).map_err(|_| not_a_board())?;
    let words = pits
        .iter()
        .map(|p| match p.get() {
            number if number.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => Ok(number),
            _ => Err(not_a_board()),
        })
        .collect::<Result<Vec<&str>, Error>>()?;
    Board::parse(&words)
}

/// One answer of a batch: the position, or its error and status.
#[derive(Serialize)]
#[serde(untagged)]
enum BatchItem {
    Ok(Position),
    Err {
        status: u16,
        #[serde(flatten)]
        body: ErrorBody,
    },
}

/// The answer of `POST /api/awari/batch`: one item per board, in order.
#[derive(Serialize)]
pub struct BatchAnswer {
    results: Vec<BatchItem>,
}

/// `POST /api/awari/batch` with `{"rules": "awari", "boards": [...]}`: at
/// most [`MAX_BATCH`] boards; a bad board fails only its own item.
pub async fn batch(
    Shared(state): Shared<Arc<State>>,
    q: Result<Query<NoQuery>, QueryRejection>,
    body: Result<Json<Batch>, JsonRejection>,
) -> Result<Response, ApiError> {
    query(q)?;
    let Json(batch) = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::with(StatusCode::PAYLOAD_TOO_LARGE, super::too_large())
        }
        _ => ApiError {
            status: match left_mid_body(&e) {
                true => super::super::CLIENT_GONE,
                false => StatusCode::BAD_REQUEST,
            },
            body: ErrorBody {
                error: format!("bad batch: {}", e.body_text()),
                missing_level: None,
            },
        },
    })?;
    if batch.boards.len() > MAX_BATCH {
        return Err(ApiError::bad(format!(
            "{} boards: at most {MAX_BATCH} per batch",
            batch.boards.len()
        )));
    }
    // A costly request's turn (see `router`), taken only now that its body
    // is read. Its place among the batches is held from here until its
    // answer is sent (or dropped), so that few bodies wait and few answers
    // (megabytes each) are held for clients slow to take them; with no
    // place left, it is refused.
    let Ok(place) = state.batches.clone().try_acquire_owned() else {
        return Err(ApiError::with(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many batches at once: try again in a few seconds",
        ));
    };
    let _turn = state.turn().await;
    let answering = state.clone();
    // Written as JSON under the turn, off the server's async workers.
    let json = blocking(move |gone| {
        let answer = batch_answer(&answering, &batch, gone)?;
        serde_json::to_vec(&answer)
            .map_err(|e| ApiError::failed(format!("answer not written: {e}")))
    })
    .await?;
    Ok((
        [(CONTENT_TYPE, "application/json")],
        Body::new(Sending {
            rest: Bytes::from(json),
            _place: place,
        }),
    )
        .into_response())
}

/// Bytes of one frame of a [`Sending`] body.
const FRAME: usize = 64 << 10;

/// An answer handed on in frames of [`FRAME`] bytes, holding a permit
/// until the last is taken (or the answer dropped). The server takes a
/// frame only when it has room to write it, so the permit is held until
/// little of the answer is left to send; one frame of the whole answer
/// would be taken at once, and the permit let go with megabytes unsent.
struct Sending {
    rest: Bytes,
    _place: OwnedSemaphorePermit,
}

impl HttpBody for Sending {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        let n = self.rest.len().min(FRAME);
        std::task::Poll::Ready((n > 0).then(|| Ok(hyper::body::Frame::data(self.rest.split_to(n)))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.rest.len() as u64)
    }
}

/// Whether reading the body failed because the client closed the
/// connection before it was all sent (hyper's body error holds an
/// end-of-file or a reset): no answer reaches it, and the log says 499,
/// not 400.
fn left_mid_body(e: &JsonRejection) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, UnexpectedEof};
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        let gone = c.downcast_ref::<std::io::Error>().is_some_and(|io| {
            matches!(
                io.kind(),
                UnexpectedEof | ConnectionReset | ConnectionAborted
            )
        });
        if gone
            || c.downcast_ref::<hyper::Error>()
                .is_some_and(|h| h.is_incomplete_message())
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The answers of a batch, one board after the other; its request gone,
/// it stops (boards read cold from the top levels take up to a few
/// milliseconds each, so a batch can outlast the time limit).
fn batch_answer(state: &State, batch: &Batch, gone: &Gone) -> Result<BatchAnswer, ApiError> {
    let (rules, source) = state.source(batch.rules.as_deref())?;
    let mut results = Vec::with_capacity(batch.boards.len());
    for item in &batch.boards {
        if gone.is_set() {
            return Err(Gone::error());
        }
        results.push(
            match batch_board(item)
                .map_err(ApiError::from)
                .and_then(|b| answer(rules, source, &b, None))
            {
                Ok(p) => BatchItem::Ok(p),
                Err(e) => BatchItem::Err {
                    status: e.status.as_u16(),
                    body: e.body,
                },
            },
        );
    }
    Ok(BatchAnswer { results })
}

/// The answer of `GET /api/levels`.
#[derive(Serialize)]
pub struct Levels {
    /// `tables` or `vu`.
    kind: &'static str,
    rules: Vec<RulesLevels>,
}

#[derive(Serialize)]
struct RulesLevels {
    rules: &'static str,
    levels: Vec<LevelEntry>,
}

/// A level present: what is known of it, or why it cannot be read (one
/// damaged level does not hide the others).
#[derive(Serialize)]
#[serde(untagged)]
enum LevelEntry {
    Read(LevelInfo),
    Unreadable { seeds: usize, error: String },
}

/// `GET /api/levels`: the levels present, their sizes, whether verified.
pub async fn levels(
    Shared(state): Shared<Arc<State>>,
    q: Result<Query<NoQuery>, QueryRejection>,
) -> Answer<Levels> {
    query(q)?;
    blocking(move |_| {
        let rules = state
            .sources
            .iter()
            .map(|(r, s)| {
                let files = s.level_files()?;
                let there: Vec<usize> = files
                    .iter()
                    .filter_map(|(seeds, there)| there.is_ok().then_some(*seeds))
                    .collect();
                // One call for all: each level's file is opened once for
                // the verdicts, not again for each level that reads it.
                let mut infos = s.level_infos(&there).into_iter();
                let levels = files
                    .into_iter()
                    .map(|(seeds, there)| {
                        match there.and_then(|()| infos.next().expect("one a level there")) {
                            Ok(info) => LevelEntry::Read(info),
                            Err(e) => LevelEntry::Unreadable {
                                seeds,
                                error: e.to_string(),
                            },
                        }
                    })
                    .collect();
                Ok(RulesLevels {
                    rules: r.name(),
                    levels,
                })
            })
            .collect::<Result<_, Error>>()?;
        Ok(Json(Levels {
            kind: state.kind(),
            rules,
        }))
    })
    .await
}

/// `GET /api/stats/{rules}/{seeds}`: the level's value histogram and
/// outcomes, counted once per server: requests that come while a level is
/// being counted wait for that count rather than start their own. The
/// count runs in a task of its own, which outlives a request that times
/// out (the next one finds it); requests wait for it in their own future,
/// without holding a thread of the blocking pool (a crowd of them waiting
/// for a level of minutes must not leave the other routes none) or a task
/// (one cut by the time limit stops waiting, rather than wait on as long
/// as the count). Levels are counted one at a time, so that counts hold
/// one turn of the costly requests at the most.
pub async fn stats(
    Shared(state): Shared<Arc<State>>,
    Path((rules, seeds)): Path<(String, String)>,
    q: Result<Query<NoQuery>, QueryRejection>,
) -> Answer<LevelStats> {
    query(q)?;
    let seeds = parse_level(&seeds)?;
    let rules = state.source(Some(&rules))?.0;
    // The map lock is held only to find the level's slot; the slot's lock
    // is held while its level is counted.
    let slot = Arc::clone(
        state
            .stats
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((rules, seeds))
            .or_default(),
    );
    let mut counted = slot.lock_owned().await;
    if let Some(stats) = &*counted {
        return Ok(Json(stats.clone()));
    }
    // An error leaves the slot empty: the next request tries again (those
    // cut by the time limit while they waited are no longer there to).
    let count = tokio::spawn(async move {
        // Not stopped when its request is gone: it is this task's. One
        // count at once, then a costly request's turn (see `router`),
        // taken for the count only: the requests that wait for it, and the
        // counts that wait for the one under way, hold none.
        let _one = state.counting.lock().await;
        let _turn = state.turn().await;
        let counting = state.clone();
        let stats = blocking(move |_| {
            let source = counting.source(Some(rules.name()))?.1;
            source.require(seeds)?;
            Ok(LevelStats::of_source(source, seeds)?)
        })
        .await?;
        *counted = Some(stats.clone());
        Ok(Json(stats))
    });
    count.await.map_err(failed)?
}

#[cfg(test)]
mod tests {
    use super::super::gone_already;
    use super::*;

    /// A batch whose request is gone stops before its next board.
    #[test]
    fn a_batch_stops_when_its_request_is_gone() {
        let dir = std::env::temp_dir().join(format!("mancaladb-gone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let state = State::new(Source::served(&dir, None, 1 << 20, 1).unwrap());
        let batch: Batch =
            serde_json::from_str(r#"{"boards": ["0,0,0,0,0,0,0,0,0,0,0,0"]}"#).unwrap();
        // Answered while the request is there: the empty board needs no
        // table (the rules give its value), and the directory holds none.
        let answer = batch_answer(&state, &batch, &Gone::default()).unwrap();
        assert!(
            matches!(&answer.results[..], [BatchItem::Ok(p)] if p.value == 0 && p.source == "rules"),
            "{}",
            serde_json::to_string(&answer).unwrap()
        );
        let stopped = batch_answer(&state, &batch, &gone_already()).err().unwrap();
        assert_eq!(stopped.status, StatusCode::SERVICE_UNAVAILABLE);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Requests for a level's statistics that wait for its count and are
    /// cut by the time limit stop waiting: none leaves a task behind that
    /// waits on for the count (a crowd of them, during a count of many
    /// minutes, piled up tasks for as long).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn statistics_requests_cut_while_waiting_leave_no_task() {
        let dir = std::env::temp_dir().join(format!("mancaladb-waiting-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let state = Arc::new(State::new(Source::served(&dir, None, 1 << 20, 1).unwrap()));
        // A count under way: its slot's lock is held.
        let slot = Arc::clone(
            state
                .stats
                .lock()
                .unwrap()
                .entry((Rules::Awari, 12))
                .or_default(),
        );
        let counting = slot.lock().await;
        let metrics = tokio::runtime::Handle::current().metrics();
        let before = metrics.num_alive_tasks();
        for _ in 0..100 {
            let request = stats(
                Shared(state.clone()),
                Path(("awari".to_string(), "12".to_string())),
                Ok(Query(NoQuery {})),
            );
            let cut = tokio::time::timeout(std::time::Duration::from_millis(1), request).await;
            assert!(cut.is_err(), "the request waits for the count");
        }
        assert_eq!(metrics.num_alive_tasks(), before, "tasks left waiting");
        drop(counting);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A level's count waits for the count under way, holding no turn of
    /// the costly requests meanwhile (counts cannot be cut by the time
    /// limit: four of them at once held every turn for minutes).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn levels_are_counted_one_at_a_time() {
        let dir = std::env::temp_dir().join(format!("mancaladb-one-count-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let state = Arc::new(State::new(Source::served(&dir, None, 1 << 20, 1).unwrap()));
        let request = |seeds: &str| {
            stats(
                Shared(state.clone()),
                Path(("awari".to_string(), seeds.to_string())),
                Ok(Query(NoQuery {})),
            )
        };
        let counting = state.counting.lock().await;
        // Level 12 is not there: its count would answer 404 at once.
        let waiting = tokio::spawn(request("12"));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!waiting.is_finished(), "a second count waits for the first");
        assert_eq!(
            state.turns.available_permits(),
            crate::server::costly_at_once()
        );
        drop(counting);
        let answer = waiting.await.unwrap().expect_err("level 12 is not there");
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
