//! `compare RUN --history K` through the CLI, on runs stored by real `cryptoscope run`
//! invocations that replay recorded worker exchanges (the replay tier, docs/testing.md): the
//! history's samples and the slowed run's are the recording's, so every verdict here is
//! decided by the test's data, never by the machine's speed.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn cassette() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/kem-hash.jsonl"
    ))
}

/// The recording's command line (fixtures/replay/README.md).
const RUN: &[&str] = &[
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

/// `cryptoscope run` replaying `recording` into `db`, with workers that cannot start.
fn replay(tmp: &Path, recording: &Path, db: &str) {
    let workers = tmp.join("workers");
    std::fs::create_dir_all(&workers).unwrap();
    for w in ["pqclean", "rustcrypto"] {
        std::fs::write(workers.join(format!("cryptoscope-worker-{w}")), "not a program").unwrap();
    }
    let o = cryptoscope()
        .args(RUN)
        .args(["--db", db, "--json"])
        .arg(tmp.join("run.json"))
        .env("CRYPTOSCOPE_REPLAY", recording)
        .env("CRYPTOSCOPE_WORKER_DIR", &workers)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
}

/// The recording with every sample of `subject` multiplied by `factor`.
fn slowed(to: &Path, subject: &str, factor: f64) {
    let mut out = String::new();
    for line in std::fs::read_to_string(cassette()).unwrap().lines() {
        let mut x: Value = serde_json::from_str(line).unwrap();
        for e in x["events"].as_array_mut().unwrap() {
            if e["type"] == "measured" && e["subject"] == subject {
                for field in ["cycles", "ns"] {
                    for v in e["samples"][field].as_array_mut().unwrap() {
                        *v = (v.as_f64().unwrap() * factor).into();
                    }
                }
            }
        }
        out.push_str(&x.to_string());
        out.push('\n');
    }
    std::fs::write(to, out).unwrap();
}

fn compare(db: &str, args: &[&str]) -> std::process::Output {
    cryptoscope()
        .arg("compare")
        .args(args)
        .args(["--db", db])
        .output()
        .unwrap()
}

#[test]
fn a_run_is_judged_against_the_spread_of_the_runs_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db").display().to_string();
    // Three runs of the recording (a history without spread), then one with PQClean's
    // clean ML-KEM-768 1.3 times slower.
    for _ in 0..3 {
        replay(tmp.path(), &cassette(), &db);
    }
    let slow = tmp.path().join("slow.jsonl");
    slowed(&slow, "ML-KEM-768/pqclean/clean", 1.3);
    replay(tmp.path(), &slow, &db);

    let json = tmp.path().join("history.json");
    let o = compare(
        &db,
        &[
            "latest",
            "--history",
            "5",
            "--fail-on-slower",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let text = stdout_of(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr_of(&o));
    assert!(
        text.contains("3 slower, 0 faster, 14 within the history's noise, 0 without enough history"),
        "{text}"
    );
    assert!(text.contains("noise ±0.0% from 3 runs"), "{text}");
    assert!(text.contains("Test: 99% prediction interval"), "{text}");
    for line in text.lines().filter(|l| l.contains('/')) {
        let slowed = line.starts_with("ML-KEM-768/pqclean/clean ");
        assert_eq!(line.ends_with("slower"), slowed, "{line}");
    }
    assert!(stderr_of(&o).contains("3 operation(s) slower than their history"));
    let h: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = h["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        17,
        "3 KEMs x 3 operations, X25519's 4, 2 hashes x 2 lengths"
    );
    for r in rows {
        assert_eq!(r["history"].as_array().unwrap().len(), 3, "{r}");
        let want = if r["subject"] == "ML-KEM-768/pqclean/clean" {
            "slower"
        } else {
            "within-noise"
        };
        assert_eq!(r["verdict"], want, "{r}");
    }
    assert_eq!(h["statistic"], "median");

    // The run before it has two runs before it: no verdict, and no failure.
    let o = compare(&db, &["latest~1", "--history", "5", "--fail-on-slower"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert_eq!(stdout_of(&o).matches("not enough history (2 of 3)").count(), 17);
    // The first run has none at all: a one-line error.
    let o = compare(&db, &["latest~3", "--history", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr_of(&o).trim().lines().count(), 1, "{}", stderr_of(&o));
    assert!(
        stderr_of(&o).contains("no history to compare with"),
        "{}",
        stderr_of(&o)
    );
}

#[test]
fn history_flags_that_cannot_mean_anything_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db").display().to_string();
    replay(tmp.path(), &cassette(), &db);
    for (args, needle) in [
        (vec!["latest", "--history", "0"], "at least one run"),
        (vec!["latest", "latest", "--history", "3"], "takes one run"),
        (vec!["latest", "--history", "3", "--published"], "do not go together"),
    ] {
        let o = compare(&db, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr_of(&o);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
