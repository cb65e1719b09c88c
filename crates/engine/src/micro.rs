//! `cryptoscope micro`: the internal functions the PQC-KEM profiling thesis monitored,
//! across every subject of an algorithm. Calls per operation and instructions per call come
//! from callgrind (exact, every provider whose symbols can be seen); cycles per call come
//! from the timing probes compiled into our own builds (`crate::probes`), read around real
//! operations.

use crate::args::MicroArgs;
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::gated::{gated, GateOptions};
use crate::ui::{usage, Progress};
use crate::{micro, util};

use anyhow::{Context, Result};
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_catalogue::Operation;
use cryptoscope_report::table;
use cryptoscope_worker::{builds, Event, OpProbes};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

use crate::profile::{self, OpProfile};
use crate::workers::{Outcome, Workers};

/// One monitored function in one operation of one subject.
#[derive(Debug, Clone, Serialize)]
pub struct MicroRow {
    pub function: String,
    pub subject: String,
    pub operation: String,
    /// From callgrind (exact): calls per operation, inclusive instructions per call and the
    /// function's inclusive share of the operation's instructions.
    pub calls_per_op: Option<f64>,
    pub instructions_per_call: Option<f64>,
    pub instruction_share: Option<f64>,
    /// From the timing probes of our builds: calls the wrapper saw per operation, median
    /// cycles per call (net of the probe's cost) and the share of the operation's cycles.
    pub probed_calls_per_op: Option<f64>,
    pub cycles_per_call: Option<f64>,
    pub cycle_share: Option<f64>,
}

/// The monitored rows of one callgrind profile.
pub fn from_profile(p: &OpProfile) -> Vec<MicroRow> {
    p.monitored
        .iter()
        .map(|f| MicroRow {
            function: f.short_name.clone(),
            subject: p.subject.clone(),
            operation: p.operation.clone(),
            calls_per_op: Some(f.calls_per_op),
            instructions_per_call: f.instructions_per_call,
            instruction_share: Some(f.inclusive_share),
            probed_calls_per_op: None,
            cycles_per_call: None,
            cycle_share: None,
        })
        .collect()
}

/// Adds one operation's probe readings to `rows` (merging with callgrind's row).
pub fn add_probes(rows: &mut Vec<MicroRow>, p: &OpProbes) {
    for f in &p.functions {
        if f.calls_per_op == 0.0 {
            continue;
        }
        let share = f.ticks_per_op.filter(|_| p.op_ticks > 0.0).map(|t| t / p.op_ticks);
        let op = p.operation.as_str();
        match rows
            .iter_mut()
            .find(|r| r.function == f.function && r.subject == p.subject && r.operation == op)
        {
            Some(r) => {
                r.probed_calls_per_op = Some(f.calls_per_op);
                r.cycles_per_call = f.ticks_per_call;
                r.cycle_share = share;
            }
            None => rows.push(MicroRow {
                function: f.function.clone(),
                subject: p.subject.clone(),
                operation: op.to_string(),
                calls_per_op: None,
                instructions_per_call: None,
                instruction_share: None,
                probed_calls_per_op: Some(f.calls_per_op),
                cycles_per_call: f.ticks_per_call,
                cycle_share: share,
            }),
        }
    }
}

/// Reads the probes of one build subject around `calls` calls of each of `ops`.
pub fn probe(
    workers: &Workers,
    worker: &Path,
    d: &Descriptor,
    ops: &[Operation],
    calls: usize,
    timeout: Duration,
) -> std::result::Result<Vec<OpProbes>, String> {
    let request = cryptoscope_model::protocol::Request::Probes {
        subject: d.id.clone(),
        calls,
        ops: Some(ops.to_vec()),
    };
    let mut got = Vec::new();
    let mut failed = Vec::new();
    let outcome = workers.call_env(
        worker,
        &request,
        &[(builds::PROBES_ENV, std::ffi::OsStr::new("1"))],
        timeout,
        &mut |e| match e {
            Event::Probes(p) => got.push(p),
            Event::OpFailed { operation, error, .. } => failed.push(format!("{}: {error}", operation.as_str())),
            _ => {}
        },
    );
    if outcome != Outcome::Completed {
        return Err(format!("{}: probes pass {}", d.id, outcome.describe()));
    }
    if let Some(f) = failed.first() {
        return Err(format!("{}: {f}", d.id));
    }
    Ok(got)
}

/// The manifest of a build subject (provider `build`), if it is one.
pub fn manifest(d: &Descriptor) -> Option<builds::Manifest> {
    if d.provider != "build" {
        return None;
    }
    builds::list()
        .into_iter()
        .map(|(_, m)| m)
        .find(|m| m.algorithm == d.algorithm && m.label == d.implementation)
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}

/// The table for people, with `*` where the wrapper saw fewer calls than callgrind.
pub fn render(rows: &[MicroRow]) -> (String, bool) {
    let mut partial = false;
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let short = match (r.calls_per_op, r.probed_calls_per_op) {
                (Some(c), Some(p)) => p + 1e-9 < c,
                _ => false,
            };
            partial |= short;
            vec![
                r.function.clone(),
                r.subject.clone(),
                r.operation.clone(),
                opt(r.calls_per_op, profile::count),
                opt(r.instructions_per_call, |x| table::group(x.round())),
                opt(r.instruction_share, profile::pct),
                opt(r.probed_calls_per_op, |x| {
                    format!("{}{}", profile::count(x), if short { "*" } else { "" })
                }),
                opt(r.cycles_per_call, |x| table::group(x.round())),
                opt(r.cycle_share, profile::pct),
            ]
        })
        .collect();
    let t = table::render(
        &[
            "function",
            "subject",
            "op",
            "calls/op",
            "instr/call",
            "instr share",
            "probed calls/op",
            "cycles/call",
            "cycle share",
        ],
        &body,
        &[false, false, false, true, true, true, true, true, true],
    );
    (t, partial)
}

/// Sorts rows in the study's order of functions, then by subject and operation.
pub fn sort(rows: &mut [MicroRow]) {
    let pos = |f: &str| {
        cryptoscope_catalogue::names::MONITORED_FUNCTIONS
            .iter()
            .position(|m| *m == f)
            .unwrap_or(usize::MAX)
    };
    let op = |o: &str| Operation::parse(o);
    rows.sort_by(|a, b| {
        (pos(&a.function), &a.subject, op(&a.operation)).cmp(&(pos(&b.function), &b.subject, op(&b.operation)))
    });
}

/// Writes the JSON document (schema `cryptoscope.micro/1`).
pub fn write_json(path: &Path, rows: &[MicroRow], notes: &[String], unit: &str) -> Result<()> {
    let doc = serde_json::json!({
        "schema": "cryptoscope.micro/1",
        "cycles": unit,
        "rows": rows,
        "notes": notes,
    });
    std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}

/// What `micro` found over its subjects.
#[derive(Default)]
struct Found {
    rows: Vec<micro::MicroRow>,
    notes: Vec<String>,
    failures: Vec<String>,
    /// The probes' time unit ("TSC" or nanoseconds).
    unit: String,
    /// The probe's own cost per call, subtracted.
    probe_cost: Option<f64>,
    /// Subjects without probes (not our builds).
    unprobed: Vec<String>,
}

/// One operation of a subject under callgrind: its monitored functions' rows, or why not.
#[allow(clippy::too_many_arguments)]
fn counted(
    worker: &std::path::Path,
    d: &cryptoscope_catalogue::Descriptor,
    op: cryptoscope_catalogue::Operation,
    settings: &profile::Settings,
    tool: &str,
    pb: &mut Progress,
    rows: &mut Vec<micro::MicroRow>,
    notes: &mut Vec<String>,
    failures: &mut Vec<String>,
) -> Result<()> {
    let label = format!("callgrind {} {}", d.id, op.as_str());
    pb.message(&label);
    match profile::run_callgrind(worker, d, op, settings) {
        Ok(p) => {
            let prof = profile::summarise(d, op, tool, &p, settings);
            pb.step(&label, &format!("{} monitored", prof.monitored.len()));
            rows.extend(micro::from_profile(&prof));
        }
        Err(e) if e.to_string().contains(profile::UNDECODABLE) => {
            pb.step(&label, "not countable here");
            notes.push(e.to_string());
        }
        Err(e) if e.is::<profile::SubjectFailed>() => {
            pb.step(&label, "failed");
            failures.push(e.to_string());
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// The table of monitored functions, with what its columns are, and the notes.
fn print_found(ctx: &Ctx, a: &MicroArgs, found: &mut Found, tool: &str) {
    let Found {
        rows,
        notes,
        unit,
        probe_cost,
        unprobed,
        ..
    } = found;
    micro::sort(rows);
    let alg = a.sel.alg.join(", ");
    if rows.is_empty() {
        outln!(
            ctx,
            "No monitored function ({}) was seen in {alg}.",
            cryptoscope_catalogue::names::MONITORED_FUNCTIONS.join(", ")
        );
    } else {
        let (t, partial) = micro::render(rows);
        out!(ctx, "{t}");
        if !a.no_instructions {
            outln!(ctx,
                "calls/op, instr/call (inclusive) and instr share: {tool} callgrind, exact, {} counted call(s) per operation after {} warm-up, fixed-seed randomness.",
                a.profiled_calls, a.warmup
            );
        }
        let clock = cryptoscope_measure::Clock::new(cryptoscope_measure::clock::ClockChoice::Tsc);
        let hz = clock
            .tsc_hz()
            .map(|h| format!(" at {:.3} GHz", h / 1e9))
            .unwrap_or_default();
        if let Some(cost) = probe_cost {
            let what = if unit == "TSC" {
                format!("TSC reference cycles{hz}")
            } else {
                "nanoseconds".into()
            };
            outln!(ctx,
                "cycles/call and cycle share: timing probes in our builds, {what}, median of {} operations, the probe's own {cost:.0} subtracted per call.",
                a.calls
            );
        }
        if partial {
            outln!(ctx, "* the wrapper saw fewer calls than callgrind: calls made from inside the function's own source file do not go through it.");
        }
    }
    if !unprobed.is_empty() {
        outln!(
            ctx,
            "No cycles for {}: only our own builds carry probes (cryptoscope build --alg {alg}, or add).",
            unprobed.join(", ")
        );
    }
    for n in notes.iter() {
        outln!(ctx, "note: {n}");
    }
}

/// The probes of one gated subject (builds made with them), into `found`; a subject without
/// probes is listed as such.
fn probe_subject(
    found: &mut Found,
    cat: &Catalogue,
    d: &Descriptor,
    d_ops: &[Operation],
    calls: usize,
    timeout: Duration,
    pb: &mut Progress,
) {
    let Some(worker) = cat.worker(&d.provider) else {
        found.failures.push(format!("{}: worker vanished", d.id));
        return;
    };
    match micro::manifest(d) {
        Some(m) if !d_ops.is_empty() => {
            for n in &m.probe_notes {
                found.notes.push(format!("{}: {n}", d.id));
            }
            if m.probes.is_empty() {
                pb.step(&format!("probes {}", d.id), "none");
                return;
            }
            let label = format!("probes {}", d.id);
            pb.message(&label);
            match micro::probe(&cat.transport, worker, d, d_ops, calls, timeout) {
                Ok(list) => {
                    pb.step(&label, &format!("{} operations", list.len()));
                    for p in &list {
                        found.unit = p.unit.clone();
                        found.probe_cost = Some(p.overhead);
                        micro::add_probes(&mut found.rows, p);
                    }
                }
                Err(e) => {
                    pb.step(&label, "failed");
                    found.failures.push(e);
                }
            }
        }
        Some(_) => {}
        None => found.unprobed.push(d.id.clone()),
    }
}

pub fn cmd_micro(a: &MicroArgs, ctx: &Ctx) -> Result<i32> {
    if a.sel.alg.is_empty() {
        return Err(usage("micro needs --alg NAME (e.g. --alg NTRU-HRSS-701)"));
    }
    let selection = a.sel.selection()?;
    let ops = crate::profile::parse_ops(&a.op)?;
    if a.calls == 0 || a.profiled_calls == 0 {
        return Err(usage("--calls and --profiled-calls must be at least 1"));
    }
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    let json = a
        .json
        .as_ref()
        .map(|p| util::check_writable(p).map_err(usage))
        .transpose()?;
    let tool = if a.no_instructions {
        String::new()
    } else {
        profile::valgrind_version()?
    };
    // Build subjects load their probed libraries in every worker this command starts
    // (so the gate checks the code that is timed); callgrind counts the plain library.
    ctx.workers
        .set_worker_env(cryptoscope_worker::builds::PROBES_ENV, std::ffi::OsStr::new("1"));
    let wanted = |d: &cryptoscope_catalogue::Descriptor| -> Vec<cryptoscope_catalogue::Operation> {
        d.operations()
            .iter()
            .copied()
            .filter(|o| ops.as_ref().is_none_or(|v| v.contains(o)))
            .collect()
    };
    let pick = |cat: &Catalogue| -> Result<Vec<cryptoscope_catalogue::Descriptor>> {
        let picked = selection.pick(cat)?;
        if picked.iter().all(|d| wanted(d).is_empty()) {
            return Err(usage("no selected subject has the requested operation"));
        }
        Ok(picked)
    };
    let steps = |picked: &[cryptoscope_catalogue::Descriptor]| {
        picked
            .iter()
            .map(|d| 1 + if a.no_instructions { 0 } else { wanted(d).len() } + usize::from(d.provider == "build"))
            .sum::<usize>() as u64
    };
    let gate = GateOptions::of(ctx, &a.gate, true)?;
    let (gated, mut pb) = gated(ctx, &gate, pick, steps)?;
    let (cat, timeout) = (&gated.cat, gate.timeout);
    let settings = profile::Settings {
        calls: a.profiled_calls,
        warmup: a.warmup,
        timeout,
        min_share: 0.0,
        depth: 0,
        top: 0,
    };
    let (failures, notes) = gated.not_passed("measured");
    let mut found = Found {
        unit: "TSC".into(),
        failures,
        ..Found::default()
    };
    for n in &notes {
        errln!(ctx, "note: {n}");
    }
    for d in gated.picked.iter().filter(|d| gated.passed(d)) {
        let worker = cat.worker(&d.provider).context("worker vanished")?;
        let d_ops = wanted(d);
        if !a.no_instructions {
            for op in &d_ops {
                counted(
                    worker,
                    d,
                    *op,
                    &settings,
                    &tool,
                    &mut pb,
                    &mut found.rows,
                    &mut found.notes,
                    &mut found.failures,
                )?;
            }
        }
        probe_subject(&mut found, cat, d, &d_ops, a.calls, timeout, &mut pb);
    }
    pb.finish();
    print_found(ctx, a, &mut found, &tool);
    let Found {
        rows,
        notes,
        failures,
        unit,
        ..
    } = &found;
    if let Some(path) = json {
        micro::write_json(&path, rows, notes, unit).map_err(|e| usage(e.to_string()))?;
        errln!(ctx, "Wrote {}", path.display());
    }
    for f in failures.iter() {
        errln!(ctx, "error: {f}");
    }
    Ok(if failures.is_empty() { 0 } else { 1 })
}
