//! What a run prints when it ends: its tables (the same family tables `show` prints), then
//! the totals, the failures with their causes, the machine and its stability.

use super::settings::Settings;
use crate::ct_cmd::ct_beside_speed;
use crate::scale;
use cryptoscope_measure::clock::{Clock, CycleSource};
use cryptoscope_measure::env::Stability;
use cryptoscope_measure::shifts::Shift;
use cryptoscope_model::{GateStatus, ResultRow, RunFile};
use cryptoscope_report::table;
use cryptoscope_store::Store;

/// The families' own tables (throughput of hashes, cipher strategies, AEAD), those that
/// have rows in `results`: printed by `run` and by `show` alike.
pub(crate) fn family_tables(results: &[ResultRow], core_per_tsc: Option<f64>) -> Vec<String> {
    [
        table::throughput(results),
        cryptoscope_report::cipher::table(results, core_per_tsc),
        cryptoscope_report::aead::table(results),
    ]
    .into_iter()
    .flatten()
    .filter(|t| !t.is_empty())
    .collect()
}

/// The tables of a finished run, in the order `run` has always printed them.
pub(crate) fn tables(s: &Settings, run: &RunFile, store: &mut Store) {
    let results = &run.results;
    if s.timing {
        print!("{}", table::results(results));
        ct_beside_speed(store, results);
        if let Some(b) = s.args.baseline.as_deref() {
            if let Some(t) = table::speedups(results, b) {
                print!("\nSpeed-up against {b}:\n{t}");
            }
        }
        for t in family_tables(results, run.environment.core_per_tsc) {
            print!("\n{t}");
        }
    }
    if let Some(t) = table::counters(results) {
        print!("\n{t}");
    }
    if let Some(ss) = s.scale {
        let e = &run.environment;
        print!(
            "{}",
            scale::table(results, &ss.threads, e.logical_cpus, e.physical_cores, e.smt)
        );
    }
    if s.with_memory {
        if s.timing {
            println!();
        }
        print!("{}", memory_section(results, s.args.memory_calls));
    }
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
pub(crate) fn stored_extras(run: &RunFile) {
    let results = &run.results;
    if let Some(t) = table::counters(results) {
        print!("\n{t}");
    }
    if let Some(calls) = results.iter().filter_map(|r| r.memory_calls).max() {
        print!("\n{}", memory_section(results, calls));
    }
    let (shifts, stability) = super::measure::shifts_of(results);
    if !shifts.is_empty() {
        println!();
        print_shifts(results, &shifts, &stability);
    }
}

/// The totals, the failed subjects with their causes, the machine and its stability.
/// Returns whether any subject failed (exit code 1).
pub(crate) fn totals(
    s: &Settings,
    run: &RunFile,
    clock: &Clock,
    shifts: &[(usize, Vec<Shift>)],
    stability: &Stability,
) -> bool {
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
    println!(
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
        println!("{} subjects failed (exit code 1):", causes.len());
        for c in &causes {
            println!("{c}");
        }
    }
    println!(
        "Machine: {} ({} logical CPUs{}), PMU: {}.",
        e.cpu_model.as_deref().unwrap_or("unknown CPU"),
        e.logical_cpus,
        e.hypervisor
            .as_deref()
            .map(|h| format!(", hypervisor {h}"))
            .unwrap_or_default(),
        e.perf_core_cycles
    );
    if !shifts.is_empty() {
        print_shifts(results, shifts, stability);
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

/// The operations whose speed changed while being measured (the first five).
fn print_shifts(results: &[ResultRow], shifts: &[(usize, Vec<Shift>)], stability: &Stability) {
    println!(
        "Unstable machine: {} of {} operations changed speed by 10% or more while being measured (largest x{:.2}); \
the report gives each operation's share of samples off its fast level. {}:",
        stability.shifted_operations,
        stability.operations,
        stability.largest_change,
        if shifts.len() > 5 { "The first five" } else { "When" }
    );
    for (i, sh) in shifts.iter().take(5) {
        let r = &results[*i];
        let when: Vec<String> = sh
            .iter()
            .map(|s| {
                let t = r
                    .raw_t_s
                    .get(s.at)
                    .map(|t| format!("{t:.1} s into the run"))
                    .unwrap_or_default();
                format!("x{:.2} at sample {} ({t})", s.after / s.before, s.at)
            })
            .collect();
        println!("  {} {}: {}", r.subject, r.operation, when.join(", "));
    }
}
