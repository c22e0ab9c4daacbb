//! Standard output and standard error for every command.
//!
//! A closed pipe on standard output (`mancaladb build | head -2`) drops the
//! rest of the output but never stops the work or changes the exit code:
//! progress lines are not worth a build. Any other failed write (a full
//! disk, `>/dev/full`) is remembered and turns the exit code into 2 with a
//! one-line error at the end. Writes to standard error never fail the
//! program: a diagnostic that cannot be written is dropped, never a panic.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Mutex;

use serde::Serialize;

use mancaladb::Error;
use mancaladb::error::one_line;
use mancaladb::progress::to_stderr;

/// What became of standard output.
enum State {
    Open,
    /// The reader went away (EPIPE): drop the rest quietly.
    Closed,
    /// Another write error: the run fails with it at the end.
    Failed(io::Error),
}

static STDOUT: Mutex<State> = Mutex::new(State::Open);

/// Writes `bytes` to standard output (see the module docs for failures).
pub fn write(bytes: &[u8]) {
    let mut state = STDOUT.lock().unwrap_or_else(|p| p.into_inner());
    if !matches!(*state, State::Open) {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        *state = match e.kind() {
            io::ErrorKind::BrokenPipe => State::Closed,
            _ => State::Failed(e),
        };
    }
}

/// Writes one formatted line to standard output.
pub fn line(args: fmt::Arguments) {
    write(format!("{args}\n").as_bytes());
}

/// Writes `value` as one line of JSON.
pub fn json(value: &impl Serialize) -> Result<(), Error> {
    let text = serde_json::to_string(value)
        .map_err(|e| Error::Invalid(format!("cannot write the report as JSON: {e}")))?;
    line(format_args!("{text}"));
    Ok(())
}

/// Writes one line to standard error, dropping it if that fails: one line
/// also when it names a path with a line break or a terminal escape in it
/// (control characters escaped, [`one_line`]), and in one write, so that
/// no other output comes inside it ([`to_stderr`]).
pub fn diag(args: fmt::Arguments) {
    to_stderr(format_args!("{}", one_line(&args.to_string())));
}

/// The exit code once the command is done: `code`, unless standard output
/// failed for another reason than a closed pipe.
pub fn finish(code: ExitCode) -> ExitCode {
    let state = STDOUT.lock().unwrap_or_else(|p| p.into_inner());
    match &*state {
        State::Failed(e) => {
            diag(format_args!("mancaladb: standard output: {e}"));
            ExitCode::from(2)
        }
        _ => code,
    }
}

/// A duration in words: seconds, minutes, hours or days.
pub fn human_seconds(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

/// `println!` through [`line`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::line(format_args!($($arg)*))
    };
}
pub(crate) use out;
