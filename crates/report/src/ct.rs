//! Constant-time audit results (`cryptoscope ct`): the terminal table, with each subject's
//! latest speed beside its verdict, and the findings listed under it.

use crate::table::render;
use crate::AppResult;
use cryptoscope_model::apps::ct::{Audited, Dudect, Finding, Memcheck, Speed};

pub use cryptoscope_model::apps::ct::DRIVER;

/// How many of these findings are of this kind.
fn count(f: &[Finding], kind: &str) -> usize {
    f.iter().filter(|x| x.kind == kind).count()
}

/// memcheck's cell: "clean", "3 branch, 1 index", or why it did not run.
fn memcheck_cell(m: &Memcheck) -> String {
    let f = m.findings();
    match m.status.as_str() {
        "clean" => {
            // Findings that are not leaks: an AEAD open's decision, declared public values.
            let parts: Vec<String> = ["decision", "public", "rejection"]
                .iter()
                .filter_map(|k| match count(f, k) {
                    0 => None,
                    1 => Some(format!("1 {k}")),
                    n if *k == "decision" => Some(format!("{n} decisions")),
                    n => Some(format!("{n} {k}")),
                })
                .collect();
            if parts.is_empty() {
                "clean".into()
            } else {
                format!("clean ({})", parts.join(", "))
            }
        }
        "findings" => [
            "branch",
            "index",
            "value",
            "uninitialised",
            "memory",
            "other",
            "public",
            "rejection",
        ]
        .iter()
        .filter_map(|k| match count(f, k) {
            0 => None,
            n => Some(format!("{n} {k}")),
        })
        .collect::<Vec<_>>()
        .join(", "),
        "failed" => {
            let e = m.error.as_deref().unwrap_or("?");
            if let Some(i) = e.find("cpu lacks") {
                // Valgrind's virtual CPU has no AVX-512 (and, in 3.19, no VAES or GFNI).
                format!("not run: valgrind's CPU {}", &e[i + 4..])
            } else if e.contains("unknown subject") {
                // Subjects named after the path they pick at run time (the SHA-3
                // candidates) pick another one on valgrind's CPU.
                "not run: valgrind's CPU takes another path".into()
            } else {
                format!("failed: {e}")
            }
        }
        "" => "-".into(),
        s => s.to_string(),
    }
}

/// dudect's cell: "|t| 3.1", "|t| 48.1 LEAK", "|t| 5.2 unconfirmed (2.0)".
fn dudect_cell(d: Option<&Dudect>) -> String {
    let Some(d) = d else { return "-".into() };
    let t = |i: usize| d.t(i).unwrap_or(0.0);
    match d.status.as_str() {
        "pass" => d.t(0).map_or("-".into(), |t| format!("{t:.1}")),
        "leak" if d.inconclusive.is_some() => format!("{:.1} / {:.1} declared", t(0), t(1)),
        "leak" => format!("{:.1} / {:.1}", t(0), t(1)),
        "unconfirmed" => format!("{:.1}, then {:.1}", t(0), t(1)),
        "failed" => "failed".into(),
        "not run" => "not run (slow)".into(),
        _ => "-".into(),
    }
}

fn speed_cell(s: Option<&Speed>) -> String {
    match s.and_then(|s| s.median_ns) {
        Some(ns) if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        Some(ns) if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        Some(ns) => format!("{ns:.0} ns"),
        None => "-".into(),
    }
}

/// The lines under the table for one item's findings: declared public values one line per
/// declaration, naming the functions; then the others (at most five unless `all`).
fn finding_notes(a: &Audited, all: bool, notes: &mut Vec<String>) {
    let Some(found) = a.memcheck.as_ref().and_then(|m| m.findings.as_deref()) else {
        return;
    };
    let (subject, op) = (&a.subject, &a.operation);
    let mut declared: Vec<(&str, &str, Vec<&str>, usize)> = Vec::new();
    for x in found {
        let Some(what) = x.declared.as_deref() else { continue };
        let func = x.function.as_str();
        match declared.iter_mut().find(|(k, w, _, _)| *k == x.kind && *w == what) {
            Some((_, _, fs, n)) => {
                *n += 1;
                if !fs.contains(&func) {
                    fs.push(func);
                }
            }
            None => declared.push((&x.kind, what, vec![func], 1)),
        }
    }
    for (kind, what, fs, n) in declared {
        notes.push(format!(
            "{subject} {op}: {n} {kind} finding{} (declared: {what}) in {}",
            if n == 1 { "" } else { "s" },
            fs.join(", ")
        ));
    }
    let f: Vec<&Finding> = found.iter().filter(|x| x.declared.is_none()).collect();
    let shown = if all { f.len() } else { 5 };
    for x in f.iter().take(shown) {
        let what = match x.kind.as_str() {
            "decision" => "accept/reject decision (a branch on the verification result)".to_string(),
            "value" => "value (not an address or branch)".to_string(),
            "uninitialised" => format!(
                "traced to memory never written ({}; memcheck keeps one origin per value, so the secret may reach it too)",
                x.origin.as_deref().unwrap_or("origin unknown")
            ),
            k => format!("secret-dependent {k}"),
        };
        notes.push(format!(
            "{subject} {op}: {what} in {} ({}; {}×)",
            x.function,
            x.location.as_deref().unwrap_or("no line information"),
            x.count,
        ));
    }
    if f.len() > shown {
        notes.push(format!(
            "{subject} {op}: … and {} more (the JSON and the HTML report have all)",
            f.len() - shown
        ));
    }
}

/// The header and rows of the audit table, and the findings under it (at most five per
/// operation unless `all_findings`).
pub fn rows(apps: &[AppResult], all_findings: bool) -> (Vec<&'static str>, Vec<Vec<String>>, Vec<String>) {
    let header = vec![
        "subject",
        "operation",
        "memcheck",
        "dudect |t|",
        "|t| cold cache",
        "verdict",
        "latest speed",
    ];
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for a in Audited::all(apps) {
        let dd = a.dudect.as_ref();
        rows.push(vec![
            a.subject.clone(),
            a.operation.clone(),
            if a.verdict == "not audited" && a.gate != "pass" {
                format!("gate {}", a.gate)
            } else {
                a.memcheck.as_ref().map_or("-".into(), memcheck_cell)
            },
            dudect_cell(dd.and_then(|d| d.get("warm"))),
            dudect_cell(dd.and_then(|d| d.get("cold"))),
            a.verdict.clone(),
            speed_cell(a.speed.as_ref()),
        ]);
        finding_notes(&a, all_findings, &mut notes);
    }
    (header, rows, notes)
}

/// What the columns mean.
pub const LEGEND: &str = "memcheck: distinct secret-dependent branches and memory indices found by valgrind with the \
secrets marked undefined (a \"branch\" is memcheck's \"conditional jump or move\": a conditional move on a secret, \
constant-time on current x86, is reported too, so look at the code; a \"value\" is another operand memcheck wants defined, e.g. an AVX2 shift count: a register, not an address; \"uninitialised\" is a branch, index or value whose undefined bits valgrind traces (--track-origins) to memory the implementation never wrote rather than to the marked secret: a read of uninitialised memory, and a place where memcheck cannot judge the secret, since it keeps one origin per value (dudect then decides); in an AEAD open, branches reached once per call are its \"decision\": the verification result, public by definition, tested where it is made and on its way out; a byte-by-byte tag compare branches once per byte and stays a branch; \"public\" and \"rejection\" are what reference/ct-declassified.json declares with the specification's words: a public key, a public matrix seed's expansion, the test of a discarded candidate). dudect |t|: Welch's t between fixed and random secret inputs (the largest over the cropped \
and second-order tests); above 4.5 it is measured again, and \"a / b\" means both runs agreed on a leak; \"declared\" means a declared public value makes the time vary, so dudect cannot tell a leak from it here (inconclusive, not counted).";

/// The audit table and, under it, every finding with its function and source line.
pub fn table(apps: &[AppResult]) -> String {
    let (header, rows, notes) = rows(apps, false);
    if rows.is_empty() {
        return String::new();
    }
    let right: Vec<bool> = header
        .iter()
        .map(|h| h.contains("|t|") || h.contains("speed"))
        .collect();
    let mut out = render(&header, &rows, &right);
    out.push('\n');
    out.push_str(LEGEND);
    out.push('\n');
    if !notes.is_empty() {
        out.push_str("\nFindings:\n");
        for n in notes {
            out.push_str("  ");
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}

/// The latest verdict per subject in these items: (subject, operation, verdict) for every
/// audited operation whose verdict is not "no leak found".
pub fn flagged(apps: &[AppResult]) -> Vec<(String, String, String)> {
    Audited::all(apps)
        .filter(|a| a.verdict.starts_with("leak") || a.verdict.starts_with("timing"))
        .map(|a| (a.subject, a.operation, a.verdict))
        .collect()
}
