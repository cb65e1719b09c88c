//! What every command shares in talking to the user: usage errors (exit code 2), the
//! progress bar, warnings about missing workers.

use crate::catalog::Catalogue;
use crate::context::{Ctx, Out};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// A usage or input error: exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Progress for long work: a bar with ETA on a terminal, one line per step otherwise
/// (logs, CI), nothing with `--quiet`.
pub struct Progress {
    pub(crate) bar: ProgressBar,
    out: Out,
    pub(crate) lines: bool,
    pub(crate) done: u64,
    pub(crate) total: u64,
}

impl Progress {
    pub(crate) fn new(total: u64, ctx: &Ctx) -> Progress {
        Progress {
            bar: progress_bar(total, ctx),
            out: ctx.out.clone(),
            lines: !ctx.quiet && !ctx.out.terminal(),
            done: 0,
            total,
        }
    }

    pub fn step(&mut self, what: &str, outcome: &str) {
        self.done += 1;
        self.bar.set_message(what.to_string());
        self.bar.inc(1);
        if self.lines {
            self.out
                .note(&format!("[{}/{}] {what}: {outcome}", self.done, self.total));
        }
    }

    /// Shows what is being done now (on the bar only).
    pub fn message(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// Advances the bar without a log line (intermediate rounds).
    pub(crate) fn step_quiet(&mut self) {
        self.bar.inc(0);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A progress bar on a terminal; hidden with `--quiet` or when messages go elsewhere.
pub(crate) fn progress_bar(len: u64, ctx: &Ctx) -> ProgressBar {
    if ctx.quiet || !ctx.out.terminal() {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

pub(crate) fn warn_missing(ctx: &Ctx, cat: &Catalogue) {
    for (p, why) in &cat.missing {
        errln!(ctx, "warning: provider {p} unavailable: {why}");
    }
}
