//! `cryptoscope profile`: exact, repeatable instruction counts under callgrind, a call tree
//! rooted at the profiled call, and clean errors for bad input and failing subjects.

mod common;

use common::*;
use serde_json::Value;

fn valgrind_present() -> bool {
    let ok = std::process::Command::new("valgrind").arg("--version").output().is_ok();
    if !ok {
        cryptoscope_testkit::needs_setup("valgrind");
    }
    ok
}

fn profile(dir: &std::path::Path, name: &str, extra: &[&str]) -> Value {
    let json = dir.join(name);
    let out = cryptoscope()
        .args([
            "profile",
            "--quiet",
            "--alg",
            "NTRU-HRSS-701",
            "--provider",
            "pqclean",
            "--impl",
            "clean",
        ])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "cryptoscope.profile/1");
    v
}

#[test]
fn two_profiles_count_identical_instructions() {
    if !valgrind_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = profile(dir.path(), "a.json", &["--op", "keypair", "--calls", "2"]);
    let b = profile(dir.path(), "b.json", &["--op", "keypair", "--calls", "2"]);
    let (pa, pb) = (&a["profiles"][0], &b["profiles"][0]);
    assert_eq!(pa["operation"], "keypair");
    let total = pa["total_instructions"].as_u64().unwrap();
    assert!(total > 1_000_000, "{total}");
    assert_eq!(
        total,
        pb["total_instructions"].as_u64().unwrap(),
        "counts must repeat exactly"
    );
    // The tree starts at the profiled call, which holds every counted instruction.
    let root = &pa["tree"][0];
    assert_eq!(root["name"], "cryptoscope_profiled_op");
    assert!((root["share"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    // Key generation inverts polynomials: the monitored inversions are there, called once
    // per key pair, and the functions table excludes the harness's callers of the root.
    let mon: Vec<&Value> = pa["monitored"].as_array().unwrap().iter().collect();
    let find = |n: &str| mon.iter().find(|f| f["short_name"] == n).copied();
    let r2 = find("poly_R2_inv").expect("poly_R2_inv is profiled");
    assert_eq!(r2["calls_per_op"].as_f64().unwrap(), 1.0);
    assert!(find("poly_Rq_mul").is_some());
    let names: Vec<&str> = pa["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("lang_start") || *n == "main"),
        "{names:?}"
    );
    // PQClean is compiled with line tables: the hottest function has annotated lines with
    // their source text.
    let hot = &pa["hottest"];
    let lines = hot["lines"].as_array().unwrap();
    assert!(!lines.is_empty(), "{hot}");
    assert!(lines.iter().any(|l| l["source"].is_string()));
}

#[test]
fn bad_input_is_a_usage_error() {
    for args in [
        vec!["profile", "--alg", "NTRU-HRSS-701", "--op", "sign"],
        vec!["profile", "--alg", "NTRU-HRSS-701", "--calls", "0"],
        vec!["profile", "--alg", "NOPE-KEM"],
        vec!["profile", "--alg", "X25519", "--op", "encaps"],
    ] {
        let out = cryptoscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn a_subject_failing_its_gate_is_not_profiled() {
    if !valgrind_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    vectors_with_wrong_digest(dir.path(), "NTRU-HRSS-701");
    let out = cryptoscope()
        .env("CRYPTOSCOPE_VECTORS", dir.path())
        .args([
            "profile",
            "--quiet",
            "--alg",
            "NTRU-HRSS-701",
            "--provider",
            "pqclean",
            "--impl",
            "clean",
        ])
        .args(["--op", "encaps"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not profiled"));
    assert!(out.stdout.is_empty());
}
