//! The JSON routes: each parses its query or body, asks the library, and
//! shapes the answer. Errors are [`ApiError`]: JSON with a status. Here
//! are what every route shares (errors, the blocking pool and the request
//! that may be gone, `/health`, the 404 and the JSON error layer); the
//! Awari routes are in `oware`, the Omweso one in `omweso`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use mancaladb::Error;
use mancaladb::error::Corruption;
use mancaladb::oware::Rules;
use mancaladb::source::Source;

use super::State;

pub mod omweso;
pub mod oware;

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
    /// An error answer of `status` saying `message`.
    fn with(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: ErrorBody {
                error: message.into(),
                missing_level: None,
            },
        }
    }

    /// A 500: the server failed at something of its own.
    fn failed(message: impl Into<String>) -> ApiError {
        ApiError::with(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    fn bad(message: impl Into<String>) -> ApiError {
        ApiError::with(StatusCode::BAD_REQUEST, message)
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
        let error = match &e {
            Error::Corrupt {
                kind: Corruption::Replaced(_),
                ..
            } => format!("{e}: restart the server to read the new file"),
            _ => e.to_string(),
        };
        ApiError {
            status,
            body: ErrorBody {
                error,
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
        ApiError::with(
            StatusCode::SERVICE_UNAVAILABLE,
            "the request was gone before its answer",
        )
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
    ApiError::failed(format!("request failed: {e}"))
}

impl State {
    /// The source of `rules` (`awari` when `None`).
    fn source(&self, rules: Option<&str>) -> Result<(Rules, &Source), ApiError> {
        let rules: Rules = rules.unwrap_or("awari").parse()?;
        self.sources
            .iter()
            .find(|(r, _)| *r == rules)
            .map(|(r, s)| (*r, s))
            .ok_or_else(|| {
                ApiError::with(
                    StatusCode::NOT_FOUND,
                    format!("{rules} values are not served here: the VU files hold awari's"),
                )
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

/// `GET /api/openapi.json`: the API described in OpenAPI 3.1
/// (`openapi.json` beside this module), for clients and their code
/// generators. The server's tests check every answer they get against it.
pub async fn openapi(q: Result<Query<NoQuery>, QueryRejection>) -> Result<Response, ApiError> {
    query(q)?;
    Ok((
        [(CONTENT_TYPE, "application/json")],
        include_str!("openapi.json"),
    )
        .into_response())
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
        // The body limit's own text ("length limit exceeded") names no limit.
        (StatusCode::PAYLOAD_TOO_LARGE, _) => too_large(),
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
    ApiError::with(status, error).into_response()
}

/// The error of a body over the limit (413), which says what the limit is.
pub fn too_large() -> String {
    format!(
        "the request body is over the limit of {} MiB",
        super::MAX_BODY >> 20
    )
}

/// Any other path.
pub async fn not_found() -> ApiError {
    ApiError::with(
        StatusCode::NOT_FOUND,
        "no such page: see /api/awari, /api/awari/mainline, /api/awari/batch, /api/levels, /api/stats/awari/N, /api/omweso/loops, /api/openapi.json, /health",
    )
}

/// A request already gone, as the time limit leaves one (tests).
#[cfg(test)]
fn gone_already() -> Gone {
    let gone = Gone::default();
    drop(MarkWhenDropped(gone.clone()));
    gone
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
}
