//! Results files written by earlier versions still load (fixtures/README.md): the file of
//! commit 484b580 as it is, and as each earlier version's files were shaped.

use cryptoscope_model::{GateStatus, RunFile};
use serde_json::Value;

const FILE: &str = include_str!("fixtures/run-484b580.json");

/// Fields each earlier version lacked, newest first: a file of that version is the fixture
/// without these and every field listed after them (older versions lacked more).
/// (commit, row fields, config fields, environment fields) it added.
type Added = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

const ADDED: &[Added] = &[
    // (commit, row fields, config fields, environment fields); `applications` is the run's.
    ("93335e8", &["cipher"], &[], &["core_per_tsc"]),
    ("c471e42", &[], &[], &[]),
    ("d4071d1", &["counters", "instructions"], &[], &[]),
    ("4f80c26", &["scaling", "scale_knee_threads"], &[], &[]),
    (
        "04b3844",
        &[
            "memory_calls",
            "stack_bytes",
            "heap_allocations",
            "heap_frees",
            "heap_bytes",
            "heap_peak_bytes",
            "heap_retained_bytes",
            "code_bytes",
            "code_bytes_method",
        ],
        &[],
        &[],
    ),
    ("6e11925", &["raw_t_s"], &["baseline"], &["stability"]),
    ("7a343c5", &["visits"], &["rounds"], &[]),
];

#[test]
fn the_file_an_earlier_version_wrote_loads_with_every_figure() {
    let json: Value = serde_json::from_str(FILE).unwrap();
    let run: RunFile = serde_json::from_str(FILE).expect("the file of 484b580 loads");
    assert_eq!(run.run_id, json["run_id"].as_str().unwrap());
    assert_eq!(run.results.len(), 6);
    assert_eq!(
        run.command.display(),
        "/work/main/target/release/cryptoscope run --quick --alg X25519 --db postgresql://"
    );
    for (row, want) in run.results.iter().zip(json["results"].as_array().unwrap()) {
        assert_eq!(row.subject, want["subject"].as_str().unwrap());
        assert_eq!(row.operation, want["operation"].as_str().unwrap());
        assert_eq!(row.gate, GateStatus::Pass);
        assert_eq!(row.median_cycles, want["median_cycles"].as_f64());
        assert_eq!(row.raw_ns.len(), want["raw_ns"].as_array().unwrap().len());
        assert_eq!(row.visits.len(), want["visits"].as_array().map_or(0, Vec::len));
    }
    assert_eq!(run.config.rounds, json["config"]["rounds"].as_u64().unwrap() as usize);
}

#[test]
fn files_shaped_as_every_earlier_version_load() {
    let mut json: Value = serde_json::from_str(FILE).unwrap();
    for (commit, rows, config, env) in ADDED {
        // Older than `commit`: without what it added (and, cumulatively, everything newer).
        for r in json["results"].as_array_mut().unwrap() {
            for f in *rows {
                r.as_object_mut().unwrap().remove(*f);
            }
        }
        for f in *config {
            json["config"].as_object_mut().unwrap().remove(*f);
        }
        for f in *env {
            json["environment"].as_object_mut().unwrap().remove(*f);
        }
        if *commit == "c471e42" {
            json.as_object_mut().unwrap().remove("applications");
        }
        let run: RunFile = serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("before {commit}: {e}"));
        assert_eq!(run.results.len(), 6, "before {commit}");
        assert!(run.applications.is_empty());
        assert!(run.results.iter().all(|r| r.median_cycles.is_some()));
    }
    // The oldest shape: one visit, no baseline, no stability verdict, no memory figures.
    let run: RunFile = serde_json::from_value(json).unwrap();
    assert_eq!(run.config.rounds, 1);
    assert!(run.config.baseline.is_none());
    assert!(run.environment.stability.is_none() && run.environment.core_per_tsc.is_none());
    assert!(run.results.iter().all(|r| r.visits.is_empty() && r.raw_t_s.is_empty()));
    assert!(run
        .results
        .iter()
        .all(|r| r.stack_bytes.is_none() && r.cipher.is_none()));
}
