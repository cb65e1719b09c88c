//! What a run prints when it ends: its tables (the same family tables `show` prints), then
//! the totals, the failures with their causes, the machine and its stability, and the
//! answers (`cryptoscope_report::answers`).

use super::settings::Settings;
use crate::context::Ctx;
use crate::scale;
use crate::stored::ct_audits;
use cryptoscope_measure::clock::{Clock, CycleSource};
use cryptoscope_model::{GateStatus, ResultRow, RunFile};
use cryptoscope_report::answers::{self, Against};
use cryptoscope_report::table;
use cryptoscope_store::Store;

/// The families' own tables (throughput of hashes, cipher strategies, AEAD), those that
/// have rows in `results`: printed by `run` and by `show` alike.
pub(crate) fn family_tables(results: &[ResultRow], core_per_tsc: Option<f64>) -> Vec<String> {
    [
        table::throughput(results),
        cryptoscope_report::cipher::table(results, core_per_tsc),
        cryptoscope_report::aead::table(results),
        cryptoscope_report::sig::table(results),
    ]
    .into_iter()
    .flatten()
    .filter(|t| !t.is_empty())
    .collect()
}

/// The tables of a finished run, in the order `run` has always printed them. Returns the
/// constant-time verdicts the store holds for the measured subjects, for the answers;
/// `quiet` (no answers) prints them under the speed table instead.
pub(crate) fn tables(s: &Settings, run: &RunFile, store: &mut Store, ctx: &Ctx) -> Vec<(String, String)> {
    let quiet = ctx.quiet;
    let results = &run.results;
    let mut ct = Vec::new();
    if s.timing {
        out!(ctx, "{}", table::results(results));
        if let Some(audits) = ct_audits(store, results) {
            if quiet {
                audits.print(ctx);
            }
            ct = audits.summaries();
        }
        if let Some(b) = s.args.baseline.as_deref() {
            if let Some(t) = table::speedups(results, b) {
                out!(ctx, "\nSpeed-up against {b}:\n{t}");
            }
        }
        for t in family_tables(results, run.environment.core_per_tsc) {
            out!(ctx, "\n{t}");
        }
    }
    if let Some(t) = table::counters(results) {
        out!(ctx, "\n{t}");
    }
    if let Some(ss) = s.scale {
        let e = &run.environment;
        out!(
            ctx,
            "{}",
            scale::table(results, &ss.threads, e.logical_cpus, e.physical_cores, e.smt)
        );
    }
    if s.with_memory {
        if s.timing {
            outln!(ctx);
        }
        out!(ctx, "{}", memory_section(results, s.args.memory_calls));
    }
    ct
}

/// The answers of a run (`ct`: the stored constant-time verdicts of its subjects), against
/// `previous` when one is given (`show --against`), else the repository's published
/// figures when they can be read.
pub(crate) fn print_answers(ctx: &Ctx, run: &RunFile, ct: &[(String, String)], previous: Option<&RunFile>) {
    if !run.results.iter().any(|r| r.median_cycles.is_some()) {
        return;
    }
    let published = crate::stored::published_figures(&ctx.env);
    let against = match previous {
        Some(p) => Against::Run(p),
        None if published.is_empty() => Against::Nothing,
        None => Against::Published(&published),
    };
    out!(ctx, "\n{}", answers::terminal(&answers::answers(run, ct, against)));
}

/// The heap and stack table with what its columns mean; `calls`: the calls each figure is
/// the largest of.
pub(crate) fn memory_section(results: &[ResultRow], calls: usize) -> String {
    format!(
        "{}Heap: malloc-family calls inside the operation (after one warm-up call), bytes requested, most bytes live at once. \
Stack: high-water mark below the stack pointer at the call (painted stack). Largest of {calls} calls. Code: text of the \
implementation's own named functions where they can be told apart (see --json for what was summed).\n",
        table::memory(results)
    )
}

/// What `show` prints of a stored run beyond its speed and family tables, as `run` printed
/// it: counters, heap and stack when the run measured them, and the machine's stability.
pub(crate) fn stored_extras(ctx: &Ctx, run: &RunFile) {
    let results = &run.results;
    if let Some(t) = table::counters(results) {
        out!(ctx, "\n{t}");
    }
    if let Some(calls) = results.iter().filter_map(|r| r.memory_calls).max() {
        out!(ctx, "\n{}", memory_section(results, calls));
    }
    if let Some(m) = answers::machine(results) {
        out!(ctx, "\n{}", answers::machine_terminal(&m));
    }
}

/// The totals, the failed subjects with their causes, the machine and its stability.
/// Returns whether any subject failed (exit code 1).
pub(crate) fn totals(ctx: &Ctx, s: &Settings, run: &RunFile, clock: &Clock) -> bool {
    let results = &run.results;
    let failed = results.iter().filter(|r| r.gate.is_failure()).count();
    let measured = results
        .iter()
        .filter(|r| r.median_ns.is_some() || (!s.timing && (r.stack_bytes.is_some() || r.scaling.is_some())))
        .count();
    let e = &run.environment;
    let timing_note = if s.timing {
        clock_note(clock, e.core_per_tsc)
    } else {
        String::new()
    };
    outln!(
        ctx,
        "\n{} operations measured, {} failed, {} unavailable.{timing_note}",
        measured,
        failed,
        results.iter().filter(|r| r.gate == GateStatus::Unavailable).count(),
    );
    // Each failed subject once, with its cause: what a user must look at first.
    let mut seen = std::collections::BTreeSet::new();
    let causes: Vec<String> = results
        .iter()
        .filter(|r| !matches!(r.gate, GateStatus::Pass | GateStatus::Unavailable) && seen.insert(r.subject.clone()))
        .map(|r| format!("  {} [{}] {}", r.subject, r.gate.as_str(), r.gate_detail))
        .collect();
    if !causes.is_empty() {
        outln!(ctx, "{} subjects failed (exit code 1):", causes.len());
        for c in &causes {
            outln!(ctx, "{c}");
        }
    }
    outln!(
        ctx,
        "Machine: {} ({} logical CPUs{}), PMU: {}.",
        e.cpu_model.as_deref().unwrap_or("unknown CPU"),
        e.logical_cpus,
        e.hypervisor
            .as_deref()
            .map(|h| format!(", hypervisor {h}"))
            .unwrap_or_default(),
        e.perf_core_cycles
    );
    if let Some(x) = &e.emulated {
        outln!(ctx, "EMULATED: {x}.");
    }
    // Said once: the run's sentence and the operations longest off their fast level (the
    // shifts themselves are in the results file and the report).
    if let Some(m) = answers::machine(results) {
        out!(ctx, "{}", answers::machine_terminal(&m));
    }
    failed > 0
}

/// What the cycle figures are: the clock, its rate, the overhead subtracted, and the core's
/// rate against the TSC where it was estimated.
fn clock_note(clock: &Clock, core_per_tsc: Option<f64>) -> String {
    format!(
        " Cycles: {}{}; timer overhead {:.0} cycles subtracted.{}",
        clock.source().label(),
        clock
            .tsc_hz()
            .map(|h| format!(" at {:.3} GHz", h / 1e9))
            .unwrap_or_default(),
        clock.overhead_cycles(),
        match (clock.source(), core_per_tsc) {
            (CycleSource::TscReferenceCycles, Some(r)) => format!(
                " The core ran at about {r:.2} × the TSC's rate (a dependent-addition chain timed with the \
                 TSC; no PMU): core cycles ≈ these × {r:.2}."
            ),
            _ => String::new(),
        }
    )
}
