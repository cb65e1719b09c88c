//! Exporters of a run: CSV and Markdown for people and spreadsheets, and the JSON format
//! github-action-benchmark reads (`customSmallerIsBetter`: `[{name, unit, value, range,
//! extra}]`), so CI users can track regressions.

use crate::{table, GateStatus, ResultRow, RunFile};
use serde_json::json;

const CSV_COLUMNS: &[&str] = &[
    "algorithm",
    "provider",
    "implementation",
    "operation",
    "gate",
    "samples",
    "median_cycles",
    "ci95_low_cycles",
    "ci95_high_cycles",
    "median_ns",
    "mean_cycles",
    "stddev_cycles",
    "min_cycles",
    "max_cycles",
    "p95_cycles",
    "outliers",
    "cycle_source",
    "overhead_cycles",
    "public_key",
    "secret_key",
    "ciphertext",
    "shared_secret",
    "heap_allocations",
    "heap_bytes",
    "heap_peak_bytes",
    "heap_retained_bytes",
    "stack_bytes",
    "code_bytes",
    "scale_knee_threads",
    "instructions",
    "provider_version",
    "build",
    "gate_detail",
    "input_check",
    "instructions_spread",
];

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn cell(r: &ResultRow, column: &str) -> String {
    let v = serde_json::to_value(r).unwrap_or_default();
    let x = match column {
        "public_key" | "secret_key" | "ciphertext" | "shared_secret" => &v["sizes"][column],
        c => &v[c],
    };
    match x {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One CSV line per (subject, operation); raw samples are left to the JSON export.
pub fn csv(run: &RunFile) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    for r in &run.results {
        let line: Vec<String> = CSV_COLUMNS.iter().map(|c| csv_field(&cell(r, c))).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// A Markdown report of one run: provenance, then one table row per (subject, operation).
pub fn markdown(run: &RunFile) -> String {
    let e = &run.environment;
    let source = run
        .results
        .iter()
        .find_map(|r| r.cycle_source)
        .map(|s| s.label())
        .unwrap_or("no measurement");
    let mut out = format!(
        "# cryptoscope run {}\n\n- started {} on {} ({}, {} logical CPUs)\n- cycles: {}{}; PMU: {}\n\n",
        run.run_id,
        run.started_at,
        e.hostname.as_deref().unwrap_or("?"),
        e.cpu_model.as_deref().unwrap_or("unknown CPU"),
        e.logical_cpus,
        source,
        e.tsc_hz
            .map(|h| format!(" (TSC {:.3} GHz)", h / 1e9))
            .unwrap_or_default(),
        e.perf_core_cycles
    );
    out.push_str("| algorithm | provider | impl | op | gate | median cycles | ±95% CI | median time | n |\n");
    out.push_str("| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n");
    for r in &run.results {
        let (med, ci, t, n) = match (r.gate, r.median_cycles) {
            (GateStatus::Pass, Some(m)) => (
                table::group(m),
                match (r.ci95_low_cycles, r.ci95_high_cycles) {
                    (Some(lo), Some(hi)) if m > 0.0 => format!("{:.1}%", (hi - lo) / 2.0 / m * 100.0),
                    _ => "-".into(),
                },
                r.median_ns.map(table::duration).unwrap_or_default(),
                r.samples.to_string(),
            ),
            _ => (
                format!(
                    "{}: {}",
                    r.gate.as_str().to_uppercase(),
                    r.gate_detail.replace('|', "/")
                ),
                String::new(),
                String::new(),
                String::new(),
            ),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {med} | {ci} | {t} | {n} |\n",
            r.algorithm,
            r.provider,
            r.implementation,
            r.operation,
            r.gate_label()
        ));
    }
    out
}

/// github-action-benchmark's `customSmallerIsBetter` JSON: one entry per measured
/// (subject, operation), value = median nanoseconds, range = half the 95% CI; and, where
/// the run counted them (`run --instructions`), one more with the exact instructions per
/// call (unit `instructions`, a figure that moves only when the code path does).
pub fn github_benchmark(run: &RunFile) -> String {
    let instructions = |r: &ResultRow| {
        let n = r.instructions?;
        Some(json!({
            "name": format!("{} {} (instructions)", r.subject, r.operation),
            "unit": "instructions",
            "value": n.round(),
            "range": "± 0",
            "extra": format!("exact per call under callgrind, fixed-seed randomness; spread under real randomness {}, run {}",
                r.instructions_spread.map(|s| format!("{:.2}%", s * 100.0)).unwrap_or_else(|| "not measured".into()),
                run.run_id),
        }))
    };
    let entries: Vec<serde_json::Value> = run
        .results
        .iter()
        .filter(|r| r.gate == GateStatus::Pass)
        .flat_map(|r| {
            let time = r.median_ns.map(|m| {
                let range = match (r.ci95_low_ns, r.ci95_high_ns) {
                    (Some(lo), Some(hi)) => format!("± {:.1}", (hi - lo) / 2.0),
                    _ => "± 0".into(),
                };
                json!({
                    "name": format!("{} {}", r.subject, r.operation),
                    "unit": "ns",
                    "value": (m * 10.0).round() / 10.0,
                    "range": range,
                    "extra": format!("median {} cycles ({}), n={}, run {}",
                        r.median_cycles.map(table::group).unwrap_or_else(|| "-".into()),
                        r.cycle_source.map(|s| s.label()).unwrap_or("-"), r.samples, run.run_id),
                })
            });
            time.into_iter().chain(instructions(r))
        })
        .collect();
    serde_json::to_string_pretty(&entries).unwrap_or_else(|_| "[]".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunConfig;
    use cryptoscope_model::descriptor::{Descriptor, Randomness, Sizes};

    fn sample_run() -> RunFile {
        let d = Descriptor::catalogued(
            "ML-KEM-768",
            "pqclean",
            "avx2",
            "pqcrypto-mlkem 0.1.1".into(),
            "cc -O3, \"quoted\"".into(),
            Sizes {
                public_key: 1184,
                secret_key: 2400,
                ciphertext: 1088,
                shared_secret: 32,
            },
            Randomness::Harness,
        );
        let mut ok = ResultRow::without_numbers(&d, "encaps", GateStatus::Pass, "kat ok");
        ok.median_cycles = Some(51191.0);
        ok.median_ns = Some(25600.0);
        ok.ci95_low_ns = Some(25500.0);
        ok.ci95_high_ns = Some(25700.0);
        ok.samples = 40;
        ok.stack_bytes = Some(17_368);
        ok.heap_allocations = Some(0);
        let bad = ResultRow::without_numbers(&d, "decaps", GateStatus::Fail, "kat: digest | mismatch");
        RunFile {
            schema: crate::SCHEMA.into(),
            run_id: "r1".into(),
            started_at: "2026-11-22T00:00:00Z".into(),
            finished_at: String::new(),
            tool_version: "0.1.0".into(),
            command: Default::default(),
            config: RunConfig::default(),
            environment: Default::default(),
            results: vec![ok, bad],
            applications: Vec::new(),
        }
    }

    #[test]
    fn csv_quotes_and_keeps_columns() {
        let text = csv(&sample_run());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("algorithm,provider,implementation,operation,gate,samples,median_cycles"));
        assert!(lines[1].contains("\"cc -O3, \"\"quoted\"\"\""), "{}", lines[1]);
        assert!(
            lines[1].starts_with("ML-KEM-768,pqclean,avx2,encaps,pass,40,51191"),
            "{}",
            lines[1]
        );
        let header: Vec<&str> = lines[0].split(',').collect();
        let stack = header.iter().position(|c| *c == "stack_bytes").unwrap();
        let heap = header.iter().position(|c| *c == "heap_allocations").unwrap();
        let fields: Vec<&str> = lines[1].split(',').collect();
        assert_eq!((fields[stack], fields[heap]), ("17368", "0"), "memory columns");
        assert!(
            lines[2].contains(",fail,0,,"),
            "a failed subject has empty statistics: {}",
            lines[2]
        );
    }

    #[test]
    fn github_benchmark_lists_only_passing_measurements() {
        let v: serde_json::Value = serde_json::from_str(&github_benchmark(&sample_run())).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0]["name"], "ML-KEM-768/pqclean/avx2 encaps");
        assert_eq!(a[0]["unit"], "ns");
        assert_eq!(a[0]["value"], 25600.0);
        assert_eq!(a[0]["range"], "± 100.0");
    }

    #[test]
    fn github_benchmark_adds_the_instruction_count_where_counted() {
        let mut run = sample_run();
        run.results[0].instructions = Some(123_456.4);
        run.results[0].instructions_spread = Some(0.0);
        // A failed row's count is not exported.
        run.results[1].instructions = Some(1.0);
        let v: serde_json::Value = serde_json::from_str(&github_benchmark(&run)).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[1]["name"], "ML-KEM-768/pqclean/avx2 encaps (instructions)");
        assert_eq!(
            (a[1]["unit"].as_str(), a[1]["value"].as_f64()),
            (Some("instructions"), Some(123_456.0))
        );
        assert!(a[1]["extra"]
            .as_str()
            .unwrap()
            .contains("spread under real randomness 0.00%"));
        assert!(csv(&run)
            .lines()
            .next()
            .unwrap()
            .ends_with(",input_check,instructions_spread"));
    }

    #[test]
    fn markdown_escapes_pipes_and_shows_failures() {
        let m = markdown(&sample_run());
        assert!(
            m.contains("| ML-KEM-768 | pqclean | avx2 | encaps | pass | 51,191 |"),
            "{m}"
        );
        assert!(m.contains("FAIL: kat: digest / mismatch"), "{m}");
    }
}
