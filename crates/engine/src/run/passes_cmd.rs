//! `memory` and `scale`: runs with one pass (heap and stack, or threads) instead of the
//! timing rounds, stored like any run.

use crate::args::{MemoryArgs, RunArgs, ScaleArgs};
use crate::context::Ctx;
use crate::scale;
use crate::ui::usage;
use anyhow::Result;
use std::time::Duration;

use super::cmd_run;

/// `memory` is `run` with only the memory pass.
pub fn cmd_memory(m: &MemoryArgs, ctx: &Ctx) -> Result<i32> {
    if m.calls == 0 {
        return Err(usage("--calls must be at least 1"));
    }
    let a = RunArgs {
        memory: true,
        memory_only: true,
        memory_calls: m.calls,
        ..RunArgs::for_pass(&m.sel, &m.gate, m.quick, m.json.clone(), &m.db)
    };
    cmd_run(&a, ctx)
}

/// `scale` is `run` with only the throughput pass.
pub fn cmd_scale(sa: &ScaleArgs, ctx: &Ctx) -> Result<i32> {
    let logical = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let threads = match &sa.threads {
        Some(t) => scale::parse_threads(t).map_err(usage)?,
        None => scale::default_threads(logical),
    };
    let duration = sa.duration.unwrap_or(if sa.quick { 0.5 } else { 2.0 });
    if !(duration > 0.0 && duration.is_finite() && duration <= 3600.0) {
        return Err(usage("--duration must be a positive number of seconds (at most 3600)"));
    }
    let ops = if sa.op.is_empty() {
        None
    } else {
        Some(
            sa.op
                .iter()
                .map(|o| {
                    cryptoscope_catalogue::Operation::parse(o)
                        .ok_or_else(|| usage(format!("unknown operation `{o}` (keypair, encaps, decaps, exchange)")))
                })
                .collect::<Result<Vec<_>>>()?,
        )
    };
    let a = RunArgs {
        scale: Some(scale::Settings {
            threads,
            duration: Duration::from_secs_f64(duration),
            ops,
        }),
        ..RunArgs::for_pass(&sa.sel, &sa.gate, sa.quick, sa.json.clone(), &sa.db)
    };
    cmd_run(&a, ctx)
}
