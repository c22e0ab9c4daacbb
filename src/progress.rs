//! Progress reporting: indicatif bars on a terminal, plain log lines
//! otherwise (CI logs, pipes), silence in tests. Callers report per chunk of
//! work, never per position.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Where progress goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Bars on standard error if it is a terminal, else one line per stage.
    Auto,
    /// Nothing at all.
    Quiet,
}

impl Progress {
    /// Starts a stage of `total` units of work (positions) under `label`.
    pub fn stage(self, label: String, total: u64) -> Stage {
        let bar = match self {
            Progress::Auto if std::io::stderr().is_terminal() => {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>24} [{bar:30}] {human_pos}/{human_len} {per_sec:0} eta {eta}",
                    )
                    .expect("static template")
                    .progress_chars("=> "),
                );
                bar.set_prefix(label.clone());
                Some(bar)
            }
            _ => None,
        };
        Stage {
            bar,
            label,
            total,
            start: Instant::now(),
            log: self == Progress::Auto,
        }
    }

    /// Prints a line of its own (not a bar), unless quiet.
    pub fn line(self, text: &str) {
        if self == Progress::Auto {
            let _ = writeln!(std::io::stderr(), "{text}");
        }
    }
}

/// One stage of work in progress.
pub struct Stage {
    bar: Option<ProgressBar>,
    label: String,
    total: u64,
    start: Instant,
    log: bool,
}

impl Stage {
    /// Records `n` more units done.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    /// Ends the stage; off a terminal, logs one line with its rate.
    pub fn finish(self) {
        let secs = self.start.elapsed().as_secs_f64();
        match self.bar {
            Some(bar) => bar.finish_and_clear(),
            None if self.log => {
                let rate = if secs > 0.0 {
                    self.total as f64 / secs
                } else {
                    0.0
                };
                let _ = writeln!(
                    std::io::stderr(),
                    "{:>24}: {} done in {secs:.2} s ({rate:.0}/s)",
                    self.label,
                    self.total
                );
            }
            None => {}
        }
    }
}
