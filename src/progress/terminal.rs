//! The command line's observer (the Python package uses it on a terminal
//! too): bars on a terminal, plain lines in logs and pipes, one line per
//! notice. The only module of the library that writes to the terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{Notice, Observer, StageSink};

/// What begins a warning's line on standard error, the command line's
/// own warnings' too.
pub const WARNING: &str = "mancaladb: warning: ";

/// The command line's observer, on standard error: a bar per stage if it is
/// a terminal, else one line per finished stage with its rate (CI logs,
/// pipes); a line per notice either way, warnings marked as such.
#[derive(Clone, Copy, Debug, Default)]
pub struct Terminal;

impl Observer for Terminal {
    fn stage(&self, label: &str, total: u64) -> Option<Box<dyn StageSink + '_>> {
        if !std::io::stderr().is_terminal() {
            return Some(Box::new(LogLine {
                label: label.to_string(),
                total,
                resumed: AtomicU64::new(0),
            }));
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>24} [{bar:30}] {human_pos}/{human_len} {per_sec:0} eta {eta}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        bar.set_prefix(label.to_string());
        Some(Box::new(Bar(bar)))
    }

    fn notice(&self, notice: &Notice) {
        let warning = if notice.is_warning() { WARNING } else { "" };
        to_stderr(format_args!("{warning}{notice}"));
    }
}

/// A stage drawn as a bar.
struct Bar(ProgressBar);

impl StageSink for Bar {
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }

    fn resumed(&self, n: u64) {
        self.0.inc(n);
        // The rate and the time left from here on, not from the units found
        // done at the start: the estimate takes them in (a tick), then
        // starts again from them.
        self.0.tick();
        self.0.reset_eta();
    }

    fn finish(self: Box<Self>, _seconds: f64) {
        self.0.finish_and_clear();
    }
}

/// A stage logged as one line when it ends.
struct LogLine {
    label: String,
    total: u64,
    /// Units done before a resume: not this run's, nor in its rate.
    resumed: AtomicU64,
}

impl StageSink for LogLine {
    fn advance(&self, _n: u64) {}

    fn resumed(&self, n: u64) {
        self.resumed.fetch_add(n, Ordering::Relaxed);
    }

    fn finish(self: Box<Self>, seconds: f64) {
        let resumed = self.resumed.load(Ordering::Relaxed).min(self.total);
        let here = self.total - resumed;
        let rate = if seconds > 0.0 {
            here as f64 / seconds
        } else {
            0.0
        };
        let before = match resumed {
            0 => String::new(),
            n => format!(" ({n} of them before a resume)"),
        };
        to_stderr(format_args!(
            "{:>24}: {} done{before} in {seconds:.2} s ({rate:.0}/s)",
            self.label, self.total
        ));
    }
}

/// Writes `line` and its line break to standard error in one write, and
/// drops it if that fails (a progress line or a diagnostic is not worth
/// stopping for). Written in pieces (standard error is unbuffered), the
/// lines of two ranks under `mpirun`, which relays each write as it comes,
/// once shared a line: one's warning prefix, the other's whole warning,
/// then the rest.
pub fn to_stderr(line: std::fmt::Arguments) {
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}
