//! Plain-text tables for terminals: aligned columns, no colour codes (pipe-friendly).

use crate::{GateStatus, ResultRow};

/// Renders rows as an aligned table with a header and a rule.
pub fn render(header: &[&str], rows: &[Vec<String>], right_align: &[bool]) -> String {
    let n = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = width[i] - c.chars().count();
            if i > 0 {
                s.push_str("  ");
            }
            if right_align.get(i).copied().unwrap_or(false) {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                if i + 1 < cells.len() {
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (n - 1)));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

/// A number with thousands separators, no decimals ("1,234,567").
/// The first four cells of every per-result table: algorithm, provider, impl, op.
fn row_key(r: &ResultRow) -> Vec<String> {
    vec![
        r.algorithm.clone(),
        r.provider.clone(),
        r.implementation.clone(),
        r.operation.clone(),
    ]
}

pub fn group(x: f64) -> String {
    let s = format!("{:.0}", x.round());
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    format!("{sign}{out}")
}

/// Nanoseconds in a readable unit.
pub fn duration(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The count column's heading: "median ticks" where every row counted the AArch64 generic
/// timer's ticks (no cycle counter open to us), "median cycles" otherwise.
fn count_heading(rows: &[ResultRow]) -> &'static str {
    use cryptoscope_measure::CycleSource;
    let mut sources = rows.iter().filter_map(|r| r.cycle_source);
    let first = sources.next();
    if first == Some(CycleSource::GenericTimerTicks) && sources.all(|s| s == CycleSource::GenericTimerTicks) {
        "median ticks"
    } else {
        "median cycles"
    }
}

/// The summary table of a run: one line per (subject, operation).
pub fn results(rows: &[ResultRow]) -> String {
    let header = [
        "algorithm",
        "provider",
        "impl",
        "op",
        "gate",
        count_heading(rows),
        "±95% CI",
        "median time",
        "n",
        "outl.",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let (med, ci, time, n, outl) = match (r.gate, r.median_cycles) {
                (GateStatus::Pass, Some(m)) => {
                    let half = match (r.ci95_low_cycles, r.ci95_high_cycles) {
                        (Some(lo), Some(hi)) if m > 0.0 => format!("{:.1}%", (hi - lo) / 2.0 / m * 100.0),
                        _ => "-".into(),
                    };
                    (
                        group(m),
                        half,
                        r.median_ns.map(duration).unwrap_or_default(),
                        r.samples.to_string(),
                        r.outliers.map(|o| o.to_string()).unwrap_or_default(),
                    )
                }
                (GateStatus::Pass, None) => ("-".into(), String::new(), String::new(), String::new(), String::new()),
                (g, _) => {
                    let label = if g == GateStatus::Unavailable {
                        g.as_str().to_string()
                    } else {
                        g.as_str().to_uppercase()
                    };
                    (
                        format!("{label}: {}", short(&r.gate_detail, 70)),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                    )
                }
            };
            let mut cells = row_key(r);
            cells.extend([r.gate_label(), med, ci, time, n, outl]);
            cells
        })
        .collect();
    render(
        &header,
        &body,
        &[false, false, false, false, false, true, true, true, true, true],
    )
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

/// The memory table of a run: heap and stack per (subject, operation), sizes and code
/// size; rows without memory figures show their gate status instead.
pub fn memory(rows: &[ResultRow]) -> String {
    let header = [
        "algorithm",
        "provider",
        "impl",
        "op",
        "heap allocs",
        "heap bytes",
        "heap peak",
        "stack",
        "pk",
        "sk",
        "ct",
        "ss",
        "code",
    ];
    let n = |x: Option<u64>| x.map_or_else(|| "-".to_string(), |v| group(v as f64));
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = row_key(r);
            if r.stack_bytes.is_some() {
                cells.extend([
                    n(r.heap_allocations),
                    n(r.heap_bytes),
                    n(r.heap_peak_bytes),
                    n(r.stack_bytes),
                ]);
            } else {
                let why = if r.gate == GateStatus::Pass {
                    "not measured".to_string()
                } else {
                    r.gate.as_str().to_string()
                };
                cells.extend([why, String::new(), String::new(), String::new()]);
            }
            let s = &r.sizes;
            cells.extend([
                group(s.public_key as f64),
                group(s.secret_key as f64),
                if r.family == "kem" {
                    group(s.ciphertext as f64)
                } else {
                    "-".into()
                },
                group(s.shared_secret as f64),
                n(r.code_bytes),
            ]);
            cells
        })
        .collect();
    let right: Vec<bool> = (0..header.len()).map(|i| i >= 4).collect();
    render(&header, &table, &right)
}

/// Throughput of the hash rows of a run: bytes per call, cycles per byte and MiB/s (from
/// the median cycles and median time of each `hash:N` / `stream:N` operation). `None`
/// when the run has no hash rows.
pub fn throughput(rows: &[ResultRow]) -> Option<String> {
    let hashed: Vec<(&ResultRow, u64)> = rows
        .iter()
        .filter(|r| r.family == "hash")
        .filter_map(|r| {
            cryptoscope_model::descriptor::Operation::parse(&r.operation)
                .and_then(|o| o.message_bytes())
                .map(|n| (r, n))
        })
        .collect();
    if hashed.is_empty() {
        return None;
    }
    let header = ["algorithm", "provider", "impl", "op", "bytes", "cycles/byte", "MiB/s"];
    let table: Vec<Vec<String>> = hashed
        .iter()
        .map(|(r, n)| {
            let mut cells = row_key(r);
            cells.push(group(*n as f64));
            match (r.gate == GateStatus::Pass, r.median_cycles, r.median_ns) {
                (true, Some(c), Some(t)) if *n > 0 => {
                    cells.push(format!("{:.2}", c / *n as f64));
                    cells.push(format!("{:.1}", *n as f64 / (1u64 << 20) as f64 / (t * 1e-9)));
                }
                (true, _, _) => cells.extend(["-".into(), "-".into()]),
                (false, _, _) => cells.extend([r.gate.as_str().to_string(), String::new()]),
            }
            cells
        })
        .collect();
    let right: Vec<bool> = (0..header.len()).map(|i| i >= 4).collect();
    Some(format!(
        "Hash throughput (message bytes per call; stream:N feeds it in 64-byte updates):\n{}",
        render(&header, &table, &right)
    ))
}

/// The counters table of a run: exact instructions (callgrind) and the median of every
/// perf event per call; an event the machine lacks shows "n/s" and is explained once in
/// the footnote with the kernel's reason. `None` when the run counted nothing.
pub fn counters(rows: &[ResultRow]) -> Option<String> {
    let with_instr = rows.iter().any(|r| r.instructions.is_some());
    let mut events: Vec<String> = Vec::new();
    for r in rows {
        for c in r.counters.iter().flatten() {
            if !events.contains(&c.event) {
                events.push(c.event.clone());
            }
        }
    }
    if !with_instr && events.is_empty() {
        return None;
    }
    let mut header: Vec<String> = ["algorithm", "provider", "impl", "op"].map(String::from).to_vec();
    if with_instr {
        header.push("instructions (exact)".into());
    }
    header.extend(events.iter().cloned());
    let mut reasons: Vec<(String, String)> = Vec::new();
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = row_key(r);
            if r.gate != GateStatus::Pass {
                cells.push(r.gate.as_str().to_string());
                cells.resize(header.len(), String::new());
                return cells;
            }
            if with_instr {
                cells.push(r.instructions.map_or_else(|| "-".into(), |x| group(x.round())));
            }
            for e in &events {
                let c = r.counters.iter().flatten().find(|c| &c.event == e);
                cells.push(match c {
                    Some(c) if c.status == "ok" => c.median.map_or_else(|| "-".into(), |m| group(m.round())),
                    Some(c) => {
                        if !reasons.iter().any(|(n, _)| n == e) {
                            reasons.push((e.clone(), c.status.clone()));
                        }
                        "n/s".into()
                    }
                    None => "-".into(),
                });
            }
            cells
        })
        .collect();
    let head: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<bool> = (0..header.len()).map(|i| i >= 4).collect();
    let mut out = render(&head, &table, &right);
    let calls = rows
        .iter()
        .flat_map(|r| r.counters.iter().flatten())
        .map(|c| c.calls)
        .max();
    if let Some(n) = calls {
        out += &format!(
            "Counters: median per call over {n} calls after one warm-up, perf_event_open in user mode, the reads' own \
overhead subtracted (task-clock in ns).\n"
        );
    }
    if with_instr {
        out += "Instructions: exact count per call under valgrind callgrind, mean of the profiled calls, fixed-seed randomness.\n";
    }
    for (e, why) in reasons {
        out += &format!("n/s {e}: {why}\n");
    }
    Some(out)
}

/// Whether an implementation is portable reference code: `clean`, `ref`, or a build of them
/// (`clean-gcc12-O0`, `ref-clang14-O3`).
pub fn is_portable(implementation: &str) -> bool {
    matches!(implementation, "clean" | "ref")
        || implementation.starts_with("clean-")
        || implementation.starts_with("ref-")
}

/// Whether `r` is the baseline named by `spec`: an implementation (`clean`) or a
/// provider and implementation (`pqclean/clean`).
pub fn is_baseline(r: &ResultRow, spec: &str) -> bool {
    match spec.split_once('/') {
        Some((p, i)) => r.provider == p && r.implementation == i,
        None => r.implementation == spec,
    }
}

/// Speed-ups against a baseline implementation of the same algorithm (the study's
/// "speed-up relative to the reference"): median time of the baseline / median time of
/// the subject, per operation. `None` when no measured row is a baseline.
pub fn speedups(rows: &[ResultRow], spec: &str) -> Option<String> {
    let measured = |r: &&ResultRow| r.gate == GateStatus::Pass && r.median_ns.is_some();
    let mut body = Vec::new();
    for base in rows.iter().filter(measured).filter(|r| is_baseline(r, spec)) {
        let b = base.median_ns?;
        for r in rows
            .iter()
            .filter(measured)
            .filter(|r| r.algorithm == base.algorithm && r.operation == base.operation && r.subject != base.subject)
        {
            let t = r.median_ns?;
            body.push(vec![
                r.algorithm.clone(),
                r.operation.clone(),
                format!("{} {}", r.provider, r.implementation),
                duration(t),
                format!("{} {}", base.provider, base.implementation),
                duration(b),
                format!("×{:.2}", b / t),
            ]);
        }
    }
    if body.is_empty() {
        return None;
    }
    Some(render(
        &[
            "algorithm",
            "op",
            "subject",
            "median time",
            "baseline",
            "baseline time",
            "speed-up",
        ],
        &body,
        &[false, false, false, true, false, true, true],
    ))
}

#[cfg(test)]
mod tests {
    /// Rows that counted the generic timer's ticks say ticks, not cycles, in the heading.
    #[test]
    fn the_count_column_names_ticks_when_every_row_counted_ticks() {
        use cryptoscope_measure::CycleSource;
        let row = |source| {
            let mut r: crate::ResultRow = serde_json::from_value(serde_json::json!({
                "subject": "X25519/openssl/default", "algorithm": "X25519", "family": "kex", "provider": "openssl",
                "provider_version": "", "implementation": "default", "algorithm_version": "", "build": "",
                "operation": "derive", "gate": "pass", "gate_detail": "", "samples": 11, "median_ns": 5e4,
                "median_cycles": 2000.0, "raw_cycles": [], "raw_ns": [],
                "sizes": {"public_key": 0, "secret_key": 0, "ciphertext": 0, "shared_secret": 32}
            }))
            .unwrap();
            r.cycle_source = Some(source);
            r
        };
        let ticks = row(CycleSource::GenericTimerTicks);
        assert!(results(&[ticks.clone(), ticks.clone()]).contains("median ticks"));
        assert!(results(&[ticks, row(CycleSource::TscReferenceCycles)]).contains("median cycles"));
        assert!(results(&[row(CycleSource::PerfCoreCycles)]).contains("median cycles"));
    }

    use super::*;

    #[test]
    fn grouping_and_units() {
        assert_eq!(group(1234567.4), "1,234,567");
        assert_eq!(group(999.0), "999");
        assert_eq!(duration(1500.0), "1.50 µs");
        assert_eq!(duration(2.5e9), "2.50 s");
    }

    #[test]
    fn columns_align() {
        let t = render(&["a", "bb"], &[vec!["xxx".into(), "1".into()]], &[false, true]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "a    bb");
        assert_eq!(lines[2], "xxx   1");
    }

    #[test]
    fn speedups_against_a_baseline_implementation() {
        let d = |imp: &str| {
            cryptoscope_model::descriptor::Descriptor::catalogued(
                "ML-KEM-768",
                "pqclean",
                imp,
                "v".into(),
                "b".into(),
                cryptoscope_model::descriptor::Sizes {
                    public_key: 1184,
                    secret_key: 2400,
                    ciphertext: 1088,
                    shared_secret: 32,
                },
                cryptoscope_model::descriptor::Randomness::Harness,
            )
        };
        let row = |imp: &str, ns: f64| {
            let mut r = ResultRow::without_numbers(&d(imp), "encaps", GateStatus::Pass, "");
            r.median_ns = Some(ns);
            r
        };
        let rows = vec![row("clean", 140_000.0), row("avx2", 35_000.0)];
        let t = speedups(&rows, "clean").unwrap();
        assert!(t.contains("×4.00") && t.contains("pqclean avx2"), "{t}");
        assert!(speedups(&rows, "pqclean/clean").is_some());
        assert!(speedups(&rows, "ref").is_none());
    }
}
