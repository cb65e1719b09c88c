//! `cryptoscope micro`: the internal functions Seed 001 monitored, across every subject of
//! an algorithm. Calls per operation and instructions per call come from callgrind (exact,
//! every provider whose symbols can be seen); cycles per call come from the timing probes
//! compiled into our own builds (`crate::probes`), read around real operations.

use anyhow::{Context, Result};
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_catalogue::Operation;
use cryptoscope_report::table;
use cryptoscope_worker::{builds, Event, OpProbes};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

use crate::profile::{self, OpProfile};
use crate::workers::{self, Outcome};

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
    worker: &Path,
    d: &Descriptor,
    ops: &[Operation],
    calls: usize,
    timeout: Duration,
) -> std::result::Result<Vec<OpProbes>, String> {
    let list: Vec<&str> = ops.iter().map(|o| o.as_str()).collect();
    let args = vec![
        "probes".to_string(),
        "--subject".into(),
        d.id.clone(),
        "--calls".into(),
        calls.to_string(),
        "--ops".into(),
        list.join(","),
    ];
    let mut got = Vec::new();
    let mut failed = Vec::new();
    let outcome = workers::call_env(
        worker,
        &args,
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
