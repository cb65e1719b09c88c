//! What the replay tests share, in-process (`crates/engine/tests`) and through the binary
//! (`crates/cli/tests/replay.rs`): the recording's command line, a stored run's rows checked
//! whole, and what a resumed run must keep.

use serde_json::Value;
use std::collections::BTreeMap;

/// The command line `crates/engine/tests/fixtures/replay/kem-hash.jsonl` was recorded with.
pub const RUN: &[&str] = &[
    "run",
    "--alg",
    "SHA-256,SHA3-256,ML-KEM-768,X25519",
    "--provider",
    "rustcrypto,pqclean",
    "--quick",
    "--rounds",
    "2",
    "--samples",
    "40",
    "--lengths",
    "64,1024",
    "--quiet",
];

/// A stored run's rows, by (subject, operation): the raw nanosecond samples (empty for rows
/// without numbers).
pub type Rows = BTreeMap<(String, String), Vec<f64>>;

/// The run id and rows of an exported run (`export RUN --format json`), each checked whole:
/// its samples all there, its median theirs, stored once.
pub fn rows_of(run: &Value) -> (String, Rows) {
    let mut rows = Rows::new();
    for r in run["results"].as_array().expect("results") {
        let ns: Vec<f64> = r["raw_ns"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_f64().expect("a sample")).collect())
            .unwrap_or_default();
        if let Some(m) = r["median_ns"].as_f64() {
            assert_eq!(r["samples"].as_u64().expect("samples") as usize, ns.len(), "{r}");
            let mut s = ns.clone();
            s.sort_by(f64::total_cmp);
            let n = s.len();
            let median = if n % 2 == 1 {
                s[n / 2]
            } else {
                (s[n / 2 - 1] + s[n / 2]) / 2.0
            };
            assert!(
                (median - m).abs() <= 1e-6 * m.abs().max(1.0),
                "median {m} vs samples' {median}: {r}"
            );
        } else {
            assert_ne!(r["gate"], "pass", "a passing row without a number: {r}");
        }
        let key = (
            r["subject"].as_str().expect("subject").to_string(),
            r["operation"].as_str().expect("operation").to_string(),
        );
        assert!(rows.insert(key, ns).is_none(), "a result stored twice: {r}");
    }
    (run["run_id"].as_str().expect("run_id").to_string(), rows)
}

/// After attempt `attempt` of a run stopped at an exact point: a complete row (both visits)
/// stays as it was, a row of the first visit alone keeps it in front (the resume merges the
/// second in), and every row is whole visits of the uninterrupted run `full`.
pub fn check_kept(attempt: usize, seen: &Rows, rows: &Rows, full: &Rows) {
    for (key, ns) in seen {
        let now = rows.get(key).map(|r| &r[..ns.len().min(r.len())]);
        assert_eq!(now, Some(&ns[..]), "attempt {attempt}: {key:?} lost or changed");
    }
    for (key, ns) in rows {
        let whole = &full[key];
        assert!(
            [20, 40].contains(&ns.len()) && ns[..] == whole[..ns.len()],
            "attempt {attempt}: {key:?} is not whole visits of the recording"
        );
    }
}
