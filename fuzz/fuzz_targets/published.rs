//! `published::parse`: the published-figures JSON (reference/published.json), then what
//! `cryptoscope compare --published` does with it: matching against measured rows and the
//! "ours versus theirs" table.
#![no_main]

use cryptoscope_report::published::{matches, parse, table};
use cryptoscope_model::ResultRow;
use libfuzzer_sys::fuzz_target;

/// A measured row of ours: everything empty but the identity and the medians.
const ROW: &str = r#"{
    "subject": "", "algorithm": "", "family": "kem", "provider": "pqclean",
    "provider_version": "1", "implementation": "", "algorithm_version": "1", "build": "",
    "nist_level": null, "classical_bits": null, "operation": "", "gate": "pass",
    "gate_detail": "", "samples": 3, "stop_reason": null, "median_cycles": null,
    "median_ns": null, "ci95_low_cycles": null, "ci95_high_cycles": null,
    "ci95_low_ns": null, "ci95_high_ns": null, "mean_cycles": null, "mean_ns": null,
    "stddev_cycles": null, "min_cycles": null, "max_cycles": null, "p5_cycles": null,
    "p95_cycles": null, "p99_cycles": null, "mad_cycles": null, "outliers": null,
    "severe_outliers": null, "cycle_source": null, "overhead_cycles": null,
    "overhead_ns": null, "tsc_hz": null, "cpu": null,
    "sizes": {"public_key": 0, "secret_key": 0, "ciphertext": 0, "shared_secret": 0},
    "raw_cycles": [], "raw_ns": []
}"#;

fn row(algorithm: &str, implementation: &str, operation: &str, cycles: f64) -> ResultRow {
    let mut r: ResultRow = serde_json::from_str(ROW).expect("a hand-written row");
    r.subject = format!("{algorithm}/x/{implementation}");
    r.algorithm = algorithm.into();
    r.implementation = implementation.into();
    r.operation = operation.into();
    r.median_cycles = Some(cycles);
    r.median_ns = Some(cycles / 3.0);
    r
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(entries) = parse(text) else { return };
    assert!(!entries.is_empty());
    // Rows that match every entry, under our operation names and kinds of code.
    let mut rows = Vec::new();
    for (i, e) in entries.iter().take(16).enumerate() {
        for op in [e.operation.as_str(), "exchange", "ecb:4096", "ctr:4096", "hash:64"] {
            for imp in [e.implementation.as_str(), "clean", "avx2", "table"] {
                rows.push(row(&e.algorithm, imp, op, 1000.0 + i as f64));
            }
        }
    }
    let m = matches(&entries, &rows);
    for x in &m {
        // Ours is finite and theirs finite and positive, so the ratio is a number (a
        // published figure of 1e-311 cycles gives an infinite one, which is what it is).
        assert!(x.our_cycles.is_finite() && !x.ratio.is_nan() && x.ratio >= 0.0, "{x:?}");
    }
    let _ = table(&m, "fuzz CPU", "cycles");
});
