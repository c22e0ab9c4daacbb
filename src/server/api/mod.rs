//! The JSON routes: each parses its query or body, asks the library, and
//! shapes the answer. Errors are [`ApiError`]: JSON with a status.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State as Shared};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use mancaladb::Error;
use mancaladb::omweso::{Side, moves as omweso};
use mancaladb::oware::{Board, MAX_SEEDS, Rules, beyond_the_game, game_level};
use mancaladb::query::{Analysis, Category, LINE_PLIES, Line, ValuedBy, analyze, principal_line};
use mancaladb::source::{LevelInfo, Source};
use mancaladb::stats::LevelStats;

use super::State;

/// Most boards in one batch request.
pub const MAX_BATCH: usize = 10_000;
/// Most laps an Omweso start is followed (and the default).
pub const MAX_LAPS: u64 = 10_000_000;

/// An error answer: `{"error": "...", "missing_level": N}` with a status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ErrorBody,
}

#[derive(Debug, Serialize)]
struct ErrorBody {
    error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    missing_level: Option<usize>,
}

impl ApiError {
    fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            body: ErrorBody {
                error: message.into(),
                missing_level: None,
            },
        }
    }
}

/// Bad input is 400, a level not present 404, a damaged or unreadable
/// table 500.
impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let (status, missing_level) = match &e {
            Error::Invalid(_) | Error::TooLarge { .. } => (StatusCode::BAD_REQUEST, None),
            Error::Missing(m) => (StatusCode::NOT_FOUND, m.level()),
            Error::Io { .. }
            | Error::Corrupt { .. }
            | Error::Locked { .. }
            | Error::Disagree { .. } => (StatusCode::INTERNAL_SERVER_ERROR, None),
        };
        ApiError {
            status,
            body: ErrorBody {
                error: e.to_string(),
                missing_level,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

type Answer<T> = Result<Json<T>, ApiError>;

/// The query string, or a 400 saying what is wrong with it.
fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t)
        .map_err(|e| ApiError::bad(format!("bad query string: {}", e.body_text())))
}

/// A query parameter's value, trimmed; an empty one is one not given.
fn given(p: &Option<String>) -> Option<&str> {
    p.as_deref().map(str::trim).filter(|p| !p.is_empty())
}

/// Runs `f` on the blocking pool (for work longer than a few probes),
/// telling it when its request is [`Gone`].
async fn blocking<T: Send + 'static>(
    f: impl FnOnce(&Gone) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let gone = Gone::default();
    let _mark = MarkWhenDropped(gone.clone());
    tokio::task::spawn_blocking(move || f(&gone))
        .await
        .map_err(failed)?
}

/// Whether the request that handed work to the blocking pool is gone: cut
/// by the time limit (its 503 sent) or left by its client. The pool cannot
/// stop a thread, so work that can stop midway (a batch between boards,
/// Omweso starts between laps) looks at this, and an answer no one will
/// read does not go on holding a thread and a core.
#[derive(Clone, Default)]
struct Gone(Arc<AtomicBool>);

impl Gone {
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// What work that stopped for its request's sake returns (no one
    /// receives it).
    fn error() -> ApiError {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: ErrorBody {
                error: "the request was gone before its answer".into(),
                missing_level: None,
            },
        }
    }
}

/// Sets its [`Gone`] when dropped, with the future of [`blocking`]: once
/// that is dropped unfinished, its request is gone (once it has finished,
/// no one looks).
struct MarkWhenDropped(Gone);

impl Drop for MarkWhenDropped {
    fn drop(&mut self) {
        self.0.0.store(true, Ordering::Relaxed);
    }
}

/// A task that panicked (or was cancelled): a 500.
fn failed(e: tokio::task::JoinError) -> ApiError {
    ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        body: ErrorBody {
            error: format!("request failed: {e}"),
            missing_level: None,
        },
    }
}

impl State {
    /// The source of `rules` (`awari` when `None`).
    fn source(&self, rules: Option<&str>) -> Result<(Rules, &Source), ApiError> {
        let rules: Rules = rules.unwrap_or("awari").parse()?;
        self.sources
            .iter()
            .find(|(r, _)| *r == rules)
            .map(|(r, s)| (*r, s))
            .ok_or_else(|| ApiError {
                status: StatusCode::NOT_FOUND,
                body: ErrorBody {
                    error: format!("{rules} values are not served here: the VU files hold awari's"),
                    missing_level: None,
                },
            })
    }
}

/// The query of a route that takes none: any parameter is a 400, as on
/// the routes that take some (`?rules=abapa` must not pass unnoticed).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoQuery {}

/// `GET /health`.
pub async fn health(q: Result<Query<NoQuery>, QueryRejection>) -> Answer<serde_json::Value> {
    query(q)?;
    Ok(Json(
        serde_json::json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}),
    ))
}

/// Middleware: every error answer as [`ApiError`] JSON, also those that
/// axum and tower-http make themselves as plain text or with no body (405
/// for a method a path does not take, 400 for a path that is not UTF-8,
/// 503 for a request over the time limit). Other answers pass as they are.
pub async fn json_errors(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let resp = next.run(req).await;
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return resp;
    }
    let text = axum::body::to_bytes(resp.into_body(), 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let error = match (status, text.is_empty()) {
        (_, false) => text,
        (StatusCode::METHOD_NOT_ALLOWED, true) => {
            format!("{method} is not allowed on this path (the Allow header lists what is)")
        }
        (StatusCode::SERVICE_UNAVAILABLE, true) => format!(
            "the request took longer than the server's limit of {} s",
            super::TIMEOUT.as_secs()
        ),
        (_, true) => status.canonical_reason().unwrap_or("error").to_lowercase(),
    };
    ApiError {
        status,
        body: ErrorBody {
            error,
            missing_level: None,
        },
    }
    .into_response()
}

/// Any other path.
pub async fn not_found() -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        body: ErrorBody {
            error: "no such page: see /api/awari, /api/awari/mainline, /api/awari/batch, /api/levels, /api/stats/awari/N, /api/omweso/loops, /health".into(),
            missing_level: None,
        },
    }
}

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
fn captured(text: &str, board: &Board) -> Result<(u8, u8), ApiError> {
    let nums: Vec<u8> = text
        .split(',')
        .map(|w| w.trim().parse::<u8>())
        .collect::<Result<_, _>>()
        .map_err(|_| ApiError::bad("captured: give MOVER,OPPONENT, two seed counts"))?;
    match nums[..] {
        [m, o] if usize::from(m) + usize::from(o) + board.seeds() == MAX_SEEDS => Ok((m, o)),
        [m, o] => Err(ApiError::bad(format!(
            "captured {m},{o} and {} seeds on the board make {}, not the game's {MAX_SEEDS}",
            board.seeds(),
            usize::from(m) + usize::from(o) + board.seeds()
        ))),
        _ => Err(ApiError::bad(
            "captured: give MOVER,OPPONENT, two seed counts",
        )),
    }
}

/// The answer of `GET /api/awari`.
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

/// Seeds each player ends the game with under best play (a half when an
/// odd count is split in endless play).
#[derive(Serialize)]
struct FinalScore {
    mover: f64,
    opponent: f64,
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
    fn of(rules: Rules, kind: &'static str, a: &Analysis, taken: Option<(u8, u8)>) -> Position {
        let mut list: Vec<Move> = a
            .moves
            .iter()
            .map(|m| Move {
                pit: m.pit,
                captures: m.captures,
                value: m.value,
                category: Category::of(m.value),
                board: m.child,
            })
            .collect();
        list.sort_by_key(|m| (-m.value, m.pit));
        let (n, v) = (a.seeds as f64, f64::from(a.value));
        Position {
            board: a.board,
            seeds: a.seeds,
            rules: rules.name(),
            value: a.value,
            category: Category::of(a.value),
            source: match (a.valued_by, kind) {
                (ValuedBy::Rules, _) => "rules",
                (ValuedBy::Moves, _) => "one-ply",
                (ValuedBy::Level, "vu") => "vu",
                (ValuedBy::Level, _) => "table",
            },
            final_score: taken.map(|(m, o)| FinalScore {
                mover: f64::from(m) + (n + v) / 2.0,
                opponent: f64::from(o) + (n - v) / 2.0,
            }),
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
    state: &State,
    rules: Rules,
    source: &Source,
    board: &Board,
    taken: Option<(u8, u8)>,
) -> Result<Position, ApiError> {
    let a = analyze(rules, source, board)?;
    Ok(Position::of(rules, state.kind(), &a, taken))
}

/// `GET /api/awari?board=...[&rules=...][&captured=M,O]`.
pub async fn position(
    Shared(state): Shared<Arc<State>>,
    q: Result<Query<PositionQuery>, QueryRejection>,
) -> Answer<Position> {
    let q = query(q)?;
    let b = board(q.board.as_deref())?;
    let taken = q.captured.as_deref().map(|c| captured(c, &b)).transpose()?;
    // On the async worker: a position is about seven probes, and handing
    // them to the blocking pool cost a third of the throughput with eight
    // clients (BENCHMARKS, "serve under load"). The longer routes (lines,
    // batches, levels, statistics) go to the pool.
    let (rules, source) = state.source(q.rules.as_deref())?;
    Ok(Json(answer(&state, rules, source, &b, taken)?))
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
    let b = board(q.board.as_deref())?;
    // One library call: a line cannot stop midway (at most a few seconds
    // at level 36, BENCHMARKS "Principal lines").
    blocking(move |_| {
        let (rules, source) = state.source(q.rules.as_deref())?;
        let first = answer(&state, rules, source, &b, None)?;
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
) -> Answer<BatchAnswer> {
    query(q)?;
    let Json(batch) = body.map_err(|e| ApiError {
        status: match e.status() {
            StatusCode::PAYLOAD_TOO_LARGE => StatusCode::PAYLOAD_TOO_LARGE,
            _ if left_mid_body(&e) => super::CLIENT_GONE,
            _ => StatusCode::BAD_REQUEST,
        },
        body: ErrorBody {
            error: format!("bad batch: {}", e.body_text()),
            missing_level: None,
        },
    })?;
    if batch.boards.len() > MAX_BATCH {
        return Err(ApiError::bad(format!(
            "{} boards: at most {MAX_BATCH} per batch",
            batch.boards.len()
        )));
    }
    blocking(move |gone| batch_answer(&state, &batch, gone).map(Json)).await
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
                .and_then(|b| answer(state, rules, source, &b, None))
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
                Ok(RulesLevels {
                    rules: r.name(),
                    levels: s
                        .level_files()?
                        .into_iter()
                        .map(
                            |(seeds, there)| match there.and_then(|()| s.level_info(seeds)) {
                                Ok(info) => LevelEntry::Read(info),
                                Err(e) => LevelEntry::Unreadable {
                                    seeds,
                                    error: e.to_string(),
                                },
                            },
                        )
                        .collect(),
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
/// out (the next one finds it), and requests wait for it without holding
/// a thread of the blocking pool: a crowd of them waiting for a level of
/// minutes must not leave the other routes none.
pub async fn stats(
    Shared(state): Shared<Arc<State>>,
    Path((rules, seeds)): Path<(String, String)>,
    q: Result<Query<NoQuery>, QueryRejection>,
) -> Answer<LevelStats> {
    query(q)?;
    let digits = !seeds.is_empty() && seeds.bytes().all(|b| b.is_ascii_digit());
    let seeds = match digits {
        // Digits past u64 are a level past the game all the same.
        true => {
            game_level(seeds.parse().unwrap_or(u64::MAX)).map_err(|_| beyond_the_game(&seeds))?
        }
        false => {
            return Err(ApiError::bad(format!(
                "level {seeds}: give 0..={MAX_SEEDS}"
            )));
        }
    };
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
    let gone = Gone::default();
    let _mark = MarkWhenDropped(gone.clone());
    let count = tokio::spawn(async move {
        let mut counted = slot.lock_owned().await;
        if counted.is_none() {
            // An error leaves the slot empty: the next request tries again,
            // if it is still there (after a count that failed late, those
            // that waited for it and were cut by the time limit do not
            // each count again for no one).
            if gone.is_set() {
                return Err(Gone::error());
            }
            // Not stopped when its request is gone: it is this task's.
            let stats = blocking(move |_| {
                let source = state.source(Some(rules.name()))?.1;
                source.require(seeds)?;
                Ok(LevelStats::of_source(source, seeds)?)
            });
            *counted = Some(stats.await?);
        }
        Ok(Json(counted.clone().expect("counted above")))
    });
    count.await.map_err(failed)?
}

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
    let pit = match given(&q.pit).map(str::parse::<usize>) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(_)) => return Err(ApiError::bad("pit: give 0..=15")),
    };
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
    use std::time::{Duration, Instant};

    use super::*;

    /// The future of [`blocking`] dropped unfinished (as the time limit
    /// drops a request's) tells the work on the pool, which would
    /// otherwise run on for nothing.
    #[tokio::test]
    async fn work_on_the_pool_is_told_when_its_request_is_gone() {
        let (told, heard) = std::sync::mpsc::channel();
        let work = blocking(move |gone| {
            let start = Instant::now();
            while !gone.is_set() && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(1));
            }
            told.send(gone.is_set()).expect("the test waits");
            Ok(())
        });
        let cut = tokio::time::timeout(Duration::from_millis(50), work).await;
        assert!(cut.is_err(), "the work waits to be told");
        let heard =
            tokio::task::spawn_blocking(move || heard.recv_timeout(Duration::from_secs(30)));
        assert_eq!(heard.await.unwrap(), Ok(true));
    }

    /// Work that finishes is not told it is gone while it runs.
    #[tokio::test]
    async fn finished_work_was_never_gone() {
        let was_gone = blocking(|gone| Ok(gone.is_set())).await.unwrap();
        assert!(!was_gone);
    }

    fn gone() -> Gone {
        let gone = Gone::default();
        drop(MarkWhenDropped(gone.clone()));
        gone
    }

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
        let stopped = batch_answer(&state, &batch, &gone()).err().unwrap();
        assert_eq!(stopped.status, StatusCode::SERVICE_UNAVAILABLE);
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
        let stopped = omweso_loops(variant, pos, Some(0), MAX_LAPS, &gone())
            .err()
            .unwrap();
        assert_eq!(stopped.status, StatusCode::SERVICE_UNAVAILABLE);
    }
}
