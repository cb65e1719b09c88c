//! `run --counters` and `run --instructions`: software events count here, hardware events
//! this machine lacks are "not supported" with the kernel's reason (never zero), and the
//! exact instruction column repeats exactly.

mod common;

use common::*;
use serde_json::Value;

fn run(dir: &std::path::Path, name: &str, extra: &[&str]) -> Value {
    let json = dir.join(name);
    let out = cryptoscope()
        .env("CRYPTOSCOPE_DB", dir.join("r.db"))
        .args([
            "run",
            "--quiet",
            "--quick",
            "--rounds",
            "1",
            "--alg",
            "X25519",
            "--provider",
            "rustcrypto",
        ])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn software_events_count_and_missing_hardware_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let v = run(dir.path(), "c.json", &["--counters", "cycles,task-clock,page-faults"]);
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "keypair, derive, validate, exchange");
    for r in rows {
        let c = r["counters"].as_array().expect("counters in every row");
        let get = |e: &str| c.iter().find(|x| x["event"] == e).unwrap().clone();
        let tc = get("task-clock");
        assert_eq!(tc["status"], "ok");
        assert_eq!(tc["calls"], 101);
        // task-clock counts nanoseconds of CPU time: a scalar multiplication takes some
        // (RustCrypto's `validate` only copies 32 bytes: a few nanoseconds, maybe none).
        if r["operation"] != "validate" {
            assert!(tc["median"].as_f64().unwrap() > 0.0, "{tc}");
        }
        let cy = get("cycles");
        match cy["status"].as_str().unwrap() {
            "ok" => assert!(cy["median"].as_f64().unwrap() > 0.0),
            s => {
                assert!(s.starts_with("not supported: ") && s.len() > 15, "{s}");
                assert!(cy["median"].is_null(), "an unsupported event must have no number");
            }
        }
    }
}

#[test]
fn exact_instructions_repeat() {
    if std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_err()
    {
        cryptoscope_testkit::needs_setup("valgrind");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = run(dir.path(), "a.json", &["--instructions"]);
    let b = run(dir.path(), "b.json", &["--instructions"]);
    for (x, y) in a["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["results"].as_array().unwrap())
    {
        let n = x["instructions"].as_f64().unwrap();
        // A scalar multiplication is many instructions; RustCrypto's `validate` copies bytes.
        let least = if x["operation"] == "validate" { 1.0 } else { 10_000.0 };
        assert!(n >= least, "{x}");
        assert_eq!(n, y["instructions"].as_f64().unwrap(), "{}", x["operation"]);
        // X25519's ladder takes one path whatever the randomness: the spread pass ran and
        // found none.
        assert_eq!(x["instructions_spread"].as_f64(), Some(0.0), "{x}");
    }
}

#[test]
fn unknown_events_are_usage_errors() {
    let out = cryptoscope()
        .args(["run", "--quick", "--alg", "X25519", "--counters", "cycels"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean `cycles`"), "{err}");
}
