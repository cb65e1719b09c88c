//! Faults: every way a subject can break is reported with its cause, the run goes on and
//! measures the sound subjects, and the exit code is 1. The subjects are the testbed
//! provider's deliberately broken SHA-256 wrappers (crates/providers/testbed).

mod common;

use common::*;

fn stdout_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn broken_subjects_are_reported_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("run.json");
    let db = tmp.path().join("faults.db");
    let o = cryptoscope()
        .args([
            "run",
            "--provider",
            "testbed",
            "--quick",
            "--quiet",
            "--rounds",
            "1",
            "--timeout",
            "15",
            "--memory-limit",
            "1",
            "--lengths",
            "64,4096",
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let out = stdout_of(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = run["results"].as_array().unwrap();
    let of = |imp: &str| -> Vec<&serde_json::Value> {
        rows.iter()
            .filter(|r| r["subject"] == format!("SHA-256/testbed/{imp}"))
            .collect()
    };
    // (implementation, gate status, words the cause must contain)
    let expected: &[(&str, &str, &[&str])] = &[
        ("segfault", "crashed", &["SIGSEGV", "gate"]),
        ("abort", "crashed", &["SIGABRT"]),
        ("hang", "timeout", &["timed out after 15 s"]),
        ("out-of-memory", "crashed", &["out of memory", "limit 1.0 GiB"]),
        ("overrun", "fail", &["outside its `digest` buffer", "canary"]),
        ("wrong-digest", "fail", &["known answers", "expected"]),
        ("crash-when-measured", "crashed", &["SIGSEGV", "while measuring"]),
    ];
    for (imp, status, words) in expected {
        let rs = of(imp);
        assert_eq!(rs.len(), 2, "{imp}: one row per length");
        for r in rs {
            assert_eq!(r["gate"], *status, "{imp}: {r}");
            let detail = r["gate_detail"].as_str().unwrap();
            for w in *words {
                assert!(detail.contains(w), "{imp}: `{detail}` lacks `{w}`");
            }
            assert!(r["median_ns"].is_null(), "{imp} got a number");
            // The summary names it with its cause.
            assert!(
                out.contains(&format!("SHA-256/testbed/{imp} [{status}]")),
                "{imp}: {out}"
            );
        }
    }
    // The sound subjects around them were measured.
    for imp in ["sound", "early-exit", "constant-compare"] {
        let rs = of(imp);
        assert_eq!(rs.len(), 2);
        for r in rs {
            assert_eq!(r["gate"], "pass", "{r}");
            assert!(r["median_ns"].as_f64().unwrap() > 0.0);
        }
    }
    assert!(out.contains("7 subjects failed (exit code 1):"), "{out}");
    // The store holds the same rows, failures with their causes.
    let o = cryptoscope()
        .args(["export", "latest", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stored: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let stored_rows = stored["results"].as_array().unwrap();
    assert_eq!(stored_rows.len(), rows.len());
    assert!(stored_rows
        .iter()
        .any(|r| r["gate"] == "crashed" && r["gate_detail"].as_str().unwrap().contains("out of memory")));
}

#[test]
fn the_testbed_is_never_selected_unless_named() {
    let o = cryptoscope().args(["list", "--json", "--all"]).output().unwrap();
    assert!(o.status.success());
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(list.as_array().unwrap().iter().all(|d| d["provider"] != "testbed"));
    let o = cryptoscope()
        .args(["list", "--json", "--provider", "testbed"])
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Ten SHA-256 subjects and two ChaCha20-Poly1305 ones (crates/providers/testbed).
    assert_eq!(list.as_array().unwrap().len(), 12);
}

#[test]
fn bad_memory_limit_is_a_usage_error() {
    let o = cryptoscope().args(["list", "--memory-limit", "-3"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
}
