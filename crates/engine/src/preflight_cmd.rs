//! `cryptoscope preflight`: the machine's state as a run would record it, with what in it
//! makes numbers worse and the command that would change it. Nothing is changed.

use crate::context::Ctx;
use crate::ui::usage;
use anyhow::Result;
use cryptoscope_measure::clock::{Clock, ClockChoice};
use cryptoscope_measure::preflight;
use std::path::Path;

/// Reads the machine (a one-second look at its load), prints one line per finding and one per
/// warning, and with `json` writes the findings (`-`: standard output). Exit 0, or 2 for a
/// CPU the machine does not have.
pub fn cmd_preflight(ctx: &Ctx, cpu: Option<usize>, json: Option<&Path>) -> Result<i32> {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(c) = cpu.filter(|c| *c >= logical) {
        return Err(usage(format!(
            "--cpu {c}: this machine has CPUs 0 to {} (those this process may use)",
            logical - 1
        )));
    }
    let clock = Clock::new(ClockChoice::Auto);
    // A longer look than a run's 200 ms: /proc/stat counts in 10 ms ticks.
    let p = preflight::run(cpu, std::time::Duration::from_secs(1), clock.perf_status());
    let text = serde_json::to_string_pretty(&p)?;
    if json == Some(Path::new("-")) {
        outln!(ctx, "{text}");
        return Ok(0);
    }
    for l in preflight::lines(&p) {
        outln!(ctx, "{l}");
    }
    if p.warnings.is_empty() {
        outln!(ctx, "nothing here makes numbers worse that a setting could change");
    }
    if let Some(f) = json {
        std::fs::write(f, text + "\n").map_err(|e| usage(format!("--json {}: {e}", f.display())))?;
    }
    Ok(0)
}
