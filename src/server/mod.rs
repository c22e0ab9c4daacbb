//! `mancaladb serve`: a JSON API over the tables and the web board that
//! uses it, on axum and tokio. A presentation layer like the command line:
//! the values, lines, statistics and Omweso verdicts come from the library;
//! here they are only given routes, JSON shapes and HTTP statuses.
//!
//! * The table directory (or VU directory) is fixed at start; requests
//!   name boards, rule sets and levels, never paths.
//! * Bad input (a query parameter the route does not take included) is a
//!   400 with `{"error": ...}`, a level not present a 404 that says which
//!   (`missing_level`); only a damaged or unreadable table is a 500.
//! * Limits: request bodies of 1 MiB (a body that declares more is a 413
//!   at once, before any of it is read; one that sends more is cut off at
//!   the limit; the refusal is JSON like every other error), batches of
//!   [`api::oware::MAX_BATCH`] boards,
//!   Omweso lap budgets of [`api::omweso::MAX_LAPS`], 30 s per request (503 after),
//!   10 s to send a request's head or to take any of an answer (the
//!   connection is closed after), two costly requests per core at once
//!   (the others wait their turn), as many connections as the process
//!   may open files beside its tables (the others wait to be accepted).
//! * Ctrl-C or SIGTERM stops listening and lets the requests under way
//!   finish (30 s at most, or until a second signal).
//! * Cross-origin reads are allowed (the data is public and read-only);
//!   responses are gzip-compressed when the client accepts it.
//! * One log line per request on standard error: the time (UTC), the
//!   client's address, method, path (escaped, cut), status, milliseconds taken (the log is
//!   outside the time limit, so a request cut by it is logged too), written
//!   by a thread of its own.

mod api;
mod assets;
mod stall;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use tower_http::add_extension::AddExtension;
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;

use mancaladb::Error;
use mancaladb::oware::Rules;
use mancaladb::source::Source;
use mancaladb::stats::LevelStats;

/// Largest request body.
const MAX_BODY: usize = 1 << 20;
/// Longest time a request may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Longest time a client may take to send a request's head (the request
/// line and headers), after which its connection is closed.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Files the server keeps for itself beside its connections: the tables
/// and raw copies of every level of both rule sets (196), the blocking
/// pool's, the standard streams.
const OWN_FILES: u64 = 256;

/// A level's statistics once counted; its lock is held while they are
/// counted, so that requests arriving meanwhile wait for that count (an
/// asynchronous lock: they wait without holding a thread).
type StatsSlot = Arc<tokio::sync::Mutex<Option<LevelStats>>>;

/// What every request reads: the sources, fixed at start, and the level
/// statistics computed so far.
pub struct State {
    /// `(rules, source)`, as [`Source::served`] opens them: both rule sets
    /// for tables, awari for VU files.
    sources: Vec<(Rules, Source)>,
    stats: Mutex<HashMap<(Rules, usize), StatsSlot>>,
    /// Turns of the costly requests: [`costly_at_once`] run at once.
    turns: tokio::sync::Semaphore,
    /// Held by the level count under way: one at once. A count cannot be
    /// cut by the time limit and takes minutes at the top levels, so
    /// without it a few statistics requests for other levels would hold
    /// every turn, and every other costly request would wait and fail.
    counting: tokio::sync::Mutex<()>,
    /// Places of the batches from their body read to their answer sent:
    /// [`BATCHES_PER_TURN`] per turn, so that the bodies read and the
    /// answers not yet taken stay few.
    batches: Arc<tokio::sync::Semaphore>,
}

/// Batches that may hold their read body or their answer not yet sent, per
/// turn; one more is refused at once (503).
const BATCHES_PER_TURN: usize = 8;

impl State {
    /// Serves `sources` ([`Source::served`]); at least one.
    pub fn new(sources: Vec<(Rules, Source)>) -> State {
        assert!(!sources.is_empty(), "a server serves some source");
        State {
            sources,
            stats: Mutex::new(HashMap::new()),
            turns: tokio::sync::Semaphore::new(costly_at_once()),
            counting: tokio::sync::Mutex::new(()),
            batches: Arc::new(tokio::sync::Semaphore::new(
                BATCHES_PER_TURN * costly_at_once(),
            )),
        }
    }

    /// Waits for a turn to run a costly request, which it holds until it
    /// has its answer (within the time limit, like the wait).
    async fn turn(&self) -> tokio::sync::SemaphorePermit<'_> {
        self.turns
            .acquire()
            .await
            .expect("the semaphore is never closed")
    }

    /// What the values are read from: `"tables"` or `"vu"` (published
    /// `scores.N` files).
    fn kind(&self) -> &'static str {
        match self.sources[0].1 {
            Source::Tables(_) => "tables",
            Source::Vu(_) => "vu",
        }
    }

    /// The directory served.
    pub fn dir(&self) -> &Path {
        self.sources[0].1.dir()
    }

    /// Whether no level of any rule set is there; an error when a level's
    /// file cannot be looked at.
    pub fn is_empty(&self) -> Result<bool, Error> {
        for (_, s) in &self.sources {
            if !s.levels()?.is_empty() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// All routes, with their limits, CORS, compression and the log line.
fn router(state: Arc<State>) -> Router {
    // The routes whose one request may take many milliseconds of a core
    // and megabytes: at most [`costly_at_once`] run at once, the others
    // wait their turn (within the time limit). These two take their turn
    // here; a batch once its body is read, so that clients sending theirs
    // slowly hold none, and a level's count for the count alone, so that
    // the requests waiting for it hold none (`api::oware`).
    let turn_state = state.clone();
    let costly = Router::new()
        .route("/api/awari/mainline", get(api::oware::mainline))
        .route("/api/omweso/loops", get(api::omweso::loops))
        .route_layer(middleware::from_fn(move |req: Request, next: Next| {
            let state = turn_state.clone();
            async move {
                let _turn = state.turn().await;
                next.run(req).await
            }
        }));
    Router::new()
        .route("/", get(assets::index))
        .route("/app.js", get(assets::script))
        .route("/style.css", get(assets::style))
        .route("/health", get(api::health))
        .route("/api/openapi.json", get(api::openapi))
        .route("/api/awari", get(api::oware::position))
        .route("/api/levels", get(api::oware::levels))
        .route("/api/awari/batch", post(api::oware::batch))
        .route("/api/stats/{rules}/{seeds}", get(api::oware::stats))
        .merge(costly)
        .fallback(api::not_found)
        // Inside the JSON errors, so that its 413 gets a JSON body. It
        // reads the declared length first: a client that declares more
        // than the limit is refused at once, not waited on for 30 s.
        .layer(RequestBodyLimitLayer::new(MAX_BODY))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            TIMEOUT,
        ))
        .layer(middleware::from_fn(api::json_errors))
        // The one limit is the layer above (axum's own would be a second).
        .layer(DefaultBodyLimit::disable())
        .layer(CompressionLayer::new())
        // It answers every OPTIONS request itself, as a preflight.
        .layer(CorsLayer::permissive())
        // Every answer is read as the type it says (JSON is never taken
        // for a script or a page): outside CORS, so that a preflight says
        // it too.
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        // Outermost, so that every request the routes see is logged: also
        // one cut by the time limit and a preflight answered by CORS.
        .layer(middleware::from_fn(log))
        .with_state(state)
}

/// Costly requests served at once: two per core.
fn costly_at_once() -> usize {
    2 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Log lines waiting for standard error, at most.
const LOG_QUEUE: usize = 4096;

/// The queue of log lines, and the lines queued and not yet written.
struct Log {
    lines: std::sync::mpsc::SyncSender<String>,
    pending: std::sync::atomic::AtomicUsize,
}

/// The log: lines a thread of its own writes to standard error (a
/// standard error that does not drain, a paused terminal or a logger that
/// pushes back, then holds up no request); none until [`start_log`].
static LOG: std::sync::OnceLock<Log> = std::sync::OnceLock::new();

/// Starts the log's thread, once per process: a server that cannot (a
/// limit on the process's threads) does not start.
fn start_log() -> std::io::Result<()> {
    if LOG.get().is_some() {
        return Ok(());
    }
    let (lines, queued) = std::sync::mpsc::sync_channel::<String>(LOG_QUEUE);
    std::thread::Builder::new()
        .name("log".into())
        .spawn(move || {
            for line in queued {
                mancaladb::progress::to_stderr(format_args!("{line}"));
                if let Some(log) = LOG.get() {
                    log.pending
                        .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        })?;
    // Another server of this process may have started one meanwhile: then
    // this thread ends with its queue, which no one has.
    let _ = LOG.set(Log {
        lines,
        pending: std::sync::atomic::AtomicUsize::new(0),
    });
    Ok(())
}

/// One line on standard error, after the time it is logged at. A line that
/// cannot be written, or that finds [`LOG_QUEUE`] lines still waiting, is
/// dropped: the server goes on.
fn log_line(args: std::fmt::Arguments) {
    let Some(log) = LOG.get() else {
        return;
    };
    log.pending
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let line = format!("{} {args}", utc_time(SystemTime::now()));
    if log.lines.try_send(line).is_err() {
        log.pending
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Waits, up to a second, for the log lines queued to be written.
fn flush_log() {
    let start = Instant::now();
    while LOG
        .get()
        .is_some_and(|log| log.pending.load(std::sync::atomic::Ordering::Relaxed) > 0)
        && start.elapsed() < Duration::from_secs(1)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A time as RFC 3339 in UTC, to the millisecond:
/// `2026-12-04T19:20:01.123Z`.
fn utc_time(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    // The civil date of a day count (Howard Hinnant's `civil_from_days`):
    // years of 400 (146,097 days) from 0000-03-01, March first in a year
    // so that February's leap day ends it.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since.subsec_millis()
    )
}

/// One line per request on standard error: the client's address (`-` when
/// the connection did not say it), method, path and query.
async fn log(req: Request, next: Next) -> Response {
    let client = match req.extensions().get::<ConnectInfo<SocketAddr>>() {
        Some(ConnectInfo(addr)) => addr.to_string(),
        None => "-".to_string(),
    };
    let mut entry = LogEntry {
        line: format!(
            "{client} {} {}",
            req.method(),
            loggable(&req.uri().to_string())
        ),
        start: Instant::now(),
        status: None,
    };
    let resp = next.run(req).await;
    entry.status = Some(resp.status().as_u16());
    resp
}

/// Longest request target a log line holds (a target may be up to about
/// 64 KiB, and the log queue holds [`LOG_QUEUE`] lines).
const LOGGED_TARGET: usize = 1024;

/// `target` as a log line shows it: every character but printable ASCII,
/// and the backslash (so that no target can pass for an escaped one),
/// escaped as `\u{..}` (a request's raw bytes reach it unencoded, and
/// control, line-breaking and text-reordering characters could paint or
/// disguise the log on a terminal), and cut after [`LOGGED_TARGET`] bytes
/// with the length it had (`...[5008B]`: one word, as the target is).
fn loggable(target: &str) -> String {
    let mut shown = String::new();
    for (at, c) in target.char_indices() {
        if at >= LOGGED_TARGET {
            shown.push_str(&format!("...[{}B]", target.len()));
            break;
        }
        if c.is_ascii_graphic() && c != '\\' {
            shown.push(c);
        } else {
            shown.push_str(&c.escape_unicode().to_string());
        }
    }
    shown
}

/// Status 499 in the log: the client went before its answer (as nginx
/// logs it); no answer is sent.
const CLIENT_GONE: StatusCode = match StatusCode::from_u16(499) {
    Ok(status) => status,
    Err(_) => panic!("499 is a status code"),
};

/// Status 444 in the log: the server stopped before the answer (a second
/// signal, or the 30 s it waits for requests under way), as nginx logs a
/// connection it closed without an answer.
const SERVER_STOPPED: u16 = 444;

/// Whether the server stopped waiting for the requests under way: those
/// dropped after are logged [`SERVER_STOPPED`], not [`CLIENT_GONE`].
static STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A request's log line, written when it is dropped: with its answer's
/// status, or [`CLIENT_GONE`] when the client closed the connection first
/// (the server then drops the request's future before it answers), or
/// [`SERVER_STOPPED`] when the server did.
struct LogEntry {
    line: String,
    start: Instant,
    status: Option<u16>,
}

impl Drop for LogEntry {
    fn drop(&mut self) {
        log_line(format_args!(
            "{} {} {:.1} ms",
            self.line,
            self.status
                .unwrap_or(if STOPPED.load(std::sync::atomic::Ordering::Relaxed) {
                    SERVER_STOPPED
                } else {
                    CLIENT_GONE.as_u16()
                }),
            self.start.elapsed().as_secs_f64() * 1e3
        ));
    }
}

/// Listens on `addr`, calls `bound` with the address bound (the port
/// chosen when `addr` asks for port 0), and serves until Ctrl-C.
pub fn serve(state: State, addr: SocketAddr, bound: impl FnOnce(SocketAddr)) -> Result<(), Error> {
    let failed = |what: &str, e: std::io::Error| Error::Invalid(format!("{what} {addr}: {e}"));
    start_log().map_err(|e| failed("cannot start the log of the server for", e))?;
    let cap = connection_cap()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| failed("cannot start the server for", e))?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| failed("cannot listen on", e))?;
        let stops =
            StopSignals::catch().map_err(|e| failed("cannot catch Ctrl-C and SIGTERM for", e))?;
        bound(
            listener
                .local_addr()
                .map_err(|e| failed("cannot listen on", e))?,
        );
        accept(listener, router(Arc::new(state)), cap, stops).await;
        Ok(())
    })?;
    // Work still under way (a level's count on the blocking pool, which a
    // second signal does not wait for) is left behind, and the requests
    // dropped with the runtime log their lines before the flush.
    rt.shutdown_timeout(Duration::from_secs(1));
    flush_log();
    Ok(())
}

/// Ctrl-C (SIGINT) and SIGTERM (what service managers send), caught from
/// before the server says its address until it ends. So a signal sent as
/// soon as the address is known stops it gracefully (caught only once
/// the server waited for them, one could kill it), and a second signal
/// that comes while the first is acted on stops the wait for the
/// requests under way (listeners made anew for that wait missed it, and
/// the server waited its 30 s).
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn catch() -> std::io::Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(StopSignals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// The next signal of either kind (one not yet taken, if any).
    async fn next(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

/// The fewest open files the server starts with: its runtime, signals,
/// listener, log and a level's files, with room to spare (below this, the
/// runtime's signal handling panicked).
const LEAST_FILES: u64 = 64;

/// How many connections may be open at once beside [`OWN_FILES`], with
/// the limit on open files raised ([`crate::process::raise_open_files`]:
/// a soft limit of 1,024 is common, and a server wants more): at least 16,
/// at most 65,536. A limit below [`LEAST_FILES`] is an error.
fn connection_cap() -> Result<usize, Error> {
    let soft = crate::process::raise_open_files();
    if soft < LEAST_FILES {
        return Err(Error::Invalid(format!(
            "the limit on open files is {soft}: serve needs at least {LEAST_FILES} (ulimit -n)"
        )));
    }
    Ok(soft.saturating_sub(OWN_FILES).clamp(16, 65_536) as usize)
}

/// Serves each connection `listener` accepts with `app` until Ctrl-C or
/// SIGTERM, then stops listening and lets the requests under way finish,
/// for [`TIMEOUT`] at most, or until a second signal. (As `axum::serve`,
/// plus what that has not: a limit on the time a client may take to send
/// a request's head, or leave an answer untaken ([`stall`]), so that a
/// client cannot hold connections and their answers for good; and at most
/// `cap` connections at once, the next ones left in the listening queue,
/// so that the files the tables need are always there to open.)
async fn accept(
    listener: tokio::net::TcpListener,
    app: Router,
    cap: usize,
    mut stops: StopSignals,
) {
    use hyper::server::conn::http1;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;

    STOPPED.store(false, std::sync::atomic::Ordering::Relaxed);
    let connections = GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(cap));
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            _ = stops.next() => break,
        };
        let (stream, client) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before
                    // it was taken: wait a little rather than spin.
                    log_line(format_args!("mancaladb serve: accepting a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stops.next() => break,
        };
        stall::limit_send_buffer(&stream);
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_TIMEOUT)
            .serve_connection(
                TokioIo::new(stall::WriteStall::new(stream)),
                TowerToHyperService::new(AddExtension::new(app.clone(), ConnectInfo(client))),
            );
        let connection = connections.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(slot);
        });
    }
    drop(listener);
    let under_way = connections.count();
    if under_way > 0 {
        log_line(format_args!(
            "mancaladb serve: stopping: {under_way} connection{} to finish, {} s at most (again to stop now)",
            if under_way == 1 { "" } else { "s" },
            TIMEOUT.as_secs()
        ));
    }
    tokio::select! {
        _ = connections.shutdown() => return,
        _ = tokio::time::sleep(TIMEOUT) => {}
        _ = stops.next() => {}
    }
    // The requests still under way are dropped with the runtime.
    STOPPED.store(true, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known instants, leap days and the end of a century that is not a
    /// leap year among them (the expected texts are Python's
    /// `datetime.fromtimestamp(s, timezone.utc).isoformat()`).
    #[test]
    fn times_are_utc_dates_to_the_millisecond() {
        let at = |millis: u64| utc_time(SystemTime::UNIX_EPOCH + Duration::from_millis(millis));
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(at(1_796_412_001_123), "2026-12-04T19:20:01.123Z");
        assert_eq!(at(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
        assert_eq!(at(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
    }
}
