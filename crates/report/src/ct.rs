//! Constant-time audit results (`cryptoscope ct`): the terminal table, with each subject's
//! latest speed beside its verdict, and the findings listed under it.

use crate::table::render;
use crate::AppResult;
use serde_json::Value;

/// The driver name under which audit items are stored.
pub const DRIVER: &str = "ct";

/// memcheck's cell: "clean", "3 branch, 1 index", or why it did not run.
fn memcheck_cell(m: &Value) -> String {
    match m["status"].as_str() {
        Some("clean") => {
            // Findings that are not leaks: an AEAD open's decision, declared public values.
            let f = m["findings"].as_array().cloned().unwrap_or_default();
            let parts: Vec<String> = [
                ("decision", "decision"),
                ("public", "public"),
                ("rejection", "rejection"),
            ]
            .iter()
            .filter_map(|(k, label)| {
                let n = f.iter().filter(|x| x["kind"] == *k).count();
                match n {
                    0 => None,
                    1 => Some(format!("1 {label}")),
                    n if *k == "decision" => Some(format!("{n} decisions")),
                    n => Some(format!("{n} {label}")),
                }
            })
            .collect();
            if parts.is_empty() {
                "clean".into()
            } else {
                format!("clean ({})", parts.join(", "))
            }
        }
        Some("findings") => {
            let f = m["findings"].as_array().cloned().unwrap_or_default();
            let count = |k: &str| f.iter().filter(|x| x["kind"] == k).count();
            let mut parts = Vec::new();
            for k in [
                "branch",
                "index",
                "value",
                "uninitialised",
                "memory",
                "other",
                "public",
                "rejection",
            ] {
                let n = count(k);
                if n > 0 {
                    parts.push(format!("{n} {k}"));
                }
            }
            parts.join(", ")
        }
        Some("failed") => {
            let e = m["error"].as_str().unwrap_or("?");
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
        Some(s) => s.to_string(),
        None => "-".into(),
    }
}

/// dudect's cell: "|t| 3.1", "|t| 48.1 LEAK", "|t| 5.2 unconfirmed (2.0)".
fn dudect_cell(d: &Value) -> String {
    let runs = d["runs"].as_array().cloned().unwrap_or_default();
    let t = |i: usize| runs.get(i).and_then(|r| r["result"]["max_t"].as_f64());
    match d["status"].as_str() {
        Some("pass") => t(0).map_or("-".into(), |t| format!("{t:.1}")),
        Some("leak") if d["inconclusive"].is_string() => {
            format!("{:.1} / {:.1} declared", t(0).unwrap_or(0.0), t(1).unwrap_or(0.0))
        }
        Some("leak") => format!("{:.1} / {:.1}", t(0).unwrap_or(0.0), t(1).unwrap_or(0.0)),
        Some("unconfirmed") => format!("{:.1}, then {:.1}", t(0).unwrap_or(0.0), t(1).unwrap_or(0.0)),
        Some("failed") => "failed".into(),
        Some("not run") => "not run (slow)".into(),
        _ => "-".into(),
    }
}

fn speed_cell(s: &Value) -> String {
    match s["median_ns"].as_f64() {
        Some(ns) if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        Some(ns) if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        Some(ns) => format!("{ns:.0} ns"),
        None => "-".into(),
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
    for a in apps.iter().filter(|a| a.driver == DRIVER && a.item != "setup") {
        let d = &a.data;
        let subject = d["subject"].as_str().unwrap_or("?");
        let op = d["operation"].as_str().unwrap_or("?");
        let dd = &d["dudect"];
        rows.push(vec![
            subject.to_string(),
            op.to_string(),
            if d["verdict"] == "not audited" && d["gate"] != "pass" {
                format!("gate {}", d["gate"].as_str().unwrap_or("?"))
            } else {
                memcheck_cell(&d["memcheck"])
            },
            dudect_cell(&dd["warm"]),
            dudect_cell(&dd["cold"]),
            d["verdict"].as_str().unwrap_or("?").to_string(),
            speed_cell(&d["speed"]),
        ]);
        if let Some(all) = d["memcheck"]["findings"].as_array() {
            // Declared public values: one line per declaration, naming the functions.
            let mut declared: Vec<(String, String, Vec<String>, usize)> = Vec::new();
            for x in all.iter().filter(|x| x["declared"].is_string()) {
                let kind = x["kind"].as_str().unwrap_or("?").to_string();
                let what = x["declared"].as_str().unwrap_or("?").to_string();
                let func = x["function"].as_str().unwrap_or("?").to_string();
                match declared.iter_mut().find(|(k, w, _, _)| *k == kind && *w == what) {
                    Some((_, _, fs, n)) => {
                        *n += 1;
                        if !fs.contains(&func) {
                            fs.push(func);
                        }
                    }
                    None => declared.push((kind, what, vec![func], 1)),
                }
            }
            for (kind, what, fs, n) in declared {
                notes.push(format!(
                    "{subject} {op}: {n} {kind} finding{} (declared: {what}) in {}",
                    if n == 1 { "" } else { "s" },
                    fs.join(", ")
                ));
            }
            let f: Vec<&Value> = all.iter().filter(|x| !x["declared"].is_string()).collect();
            let shown = if all_findings { f.len() } else { 5 };
            for x in f.iter().take(shown) {
                let what = match x["kind"].as_str().unwrap_or("?") {
                    "decision" => "accept/reject decision (a branch on the verification result)".to_string(),
                    "value" => "value (not an address or branch)".to_string(),
                    "uninitialised" => format!(
                        "traced to memory never written ({}; memcheck keeps one origin per value, so the secret may reach it too)",
                        x["origin"].as_str().unwrap_or("origin unknown")
                    ),
                    k => format!("secret-dependent {k}"),
                };
                notes.push(format!(
                    "{subject} {op}: {what} in {} ({}; {}×)",
                    x["function"].as_str().unwrap_or("?"),
                    x["location"].as_str().unwrap_or("no line information"),
                    x["count"].as_u64().unwrap_or(1),
                ));
            }
            if f.len() > shown {
                notes.push(format!(
                    "{subject} {op}: … and {} more (the JSON and the HTML report have all)",
                    f.len() - shown
                ));
            }
        }
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
    apps.iter()
        .filter(|a| a.driver == DRIVER && a.item != "setup")
        .filter_map(|a| {
            let v = a.data["verdict"].as_str()?;
            (v.starts_with("leak") || v.starts_with("timing")).then(|| {
                (
                    a.data["subject"].as_str().unwrap_or("?").to_string(),
                    a.data["operation"].as_str().unwrap_or("?").to_string(),
                    v.to_string(),
                )
            })
        })
        .collect()
}
