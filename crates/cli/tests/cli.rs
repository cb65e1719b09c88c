//! The `cryptoscope` binary, driven as a user would: usage errors, the catalogue, the gate
//! end to end (including a gate that must fail), and a short measured run.

mod common;

use common::*;

#[test]
fn help_teaches_the_commands() {
    let o = cryptoscope().arg("--help").output().unwrap();
    assert!(o.status.success());
    let s = stdout_of(&o);
    for w in ["list", "verify", "run", "Exit codes"] {
        assert!(s.contains(w), "--help lacks {w}");
    }
    let o = cryptoscope().args(["run", "--help"]).output().unwrap();
    for w in [
        "--quick",
        "--samples",
        "--time-budget",
        "--cpu",
        "--json",
        "--alg",
        "--provider",
        "--suite",
    ] {
        assert!(stdout_of(&o).contains(w), "run --help lacks {w}");
    }
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    for args in [
        vec!["run", "--bogus-flag"],
        vec!["verify", "--alg", "ML-KEM-786"],
        vec!["run", "--provider", "libqos", "--quick"],
        vec!["run", "--suite", "hashes"],
        vec!["run", "--quick", "--samples", "0"],
        vec!["run", "--quick", "--time-budget", "-1"],
        vec!["run", "--quick", "--cpu", "4096"],
        vec!["list", "--alg", "X25519", "--provider", "liboqs"],
    ] {
        let o = cryptoscope().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr_of(&o));
        assert!(!stderr_of(&o).contains("panicked"), "{args:?}");
    }
    // One line, the first of clap's or ours (what each says is checked in-process:
    // crates/engine/tests/engine/selection.rs).
    let o = cryptoscope().args(["verify", "--alg", "ML-KEM-786"]).output().unwrap();
    assert_eq!(stderr_of(&o).trim().lines().count(), 1, "{}", stderr_of(&o));
}

#[test]
fn list_json_holds_the_whole_catalogue() {
    let o = cryptoscope().args(["list", "--json", "--all"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let subjects: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let has = |alg: &str, provider: &str, imp: &str| {
        subjects.iter().any(|s| {
            s["algorithm"] == alg && s["provider"] == provider && (imp.is_empty() || s["implementation"] == imp)
        })
    };
    // The catalogue the foundation issue asks for.
    for alg in ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"] {
        for (p, i) in [
            ("liboqs", ""),
            ("pqclean", "clean"),
            ("pqclean", "avx2"),
            ("aws-lc", ""),
            ("rustcrypto", ""),
        ] {
            assert!(has(alg, p, i), "{alg} {p} {i}");
        }
    }
    for alg in [
        "Classic-McEliece-348864",
        "Classic-McEliece-6960119",
        "Classic-McEliece-6960119f",
        "Classic-McEliece-8192128",
        "Classic-McEliece-8192128f",
    ] {
        for (p, i) in [("liboqs", ""), ("pqclean", "clean"), ("pqclean", "avx2")] {
            assert!(has(alg, p, i), "{alg} {p} {i}");
        }
    }
    for alg in ["NTRU-HRSS-701", "NTRU-HPS-4096-821"] {
        assert!(has(alg, "pqclean", "clean") && has(alg, "pqclean", "avx2"), "{alg}");
    }
    for alg in ["HQC-128", "BIKE-L1", "FrodoKEM-640-AES", "sntrup761"] {
        assert!(has(alg, "liboqs", ""), "{alg}");
    }
    for p in ["aws-lc", "rustcrypto", "openssl"] {
        assert!(has("X25519", p, "") && has("P-256", p, ""), "{p}");
    }
    assert!(has("FFDHE-2048", "openssl", ""));
    let o = cryptoscope().arg("list").output().unwrap();
    assert!(stdout_of(&o).contains("subjects; sizes in bytes"));
}

#[test]
fn verify_passes_and_cross_checks_aws_lc() {
    let o = cryptoscope()
        .args([
            "verify",
            "--alg",
            "ML-KEM-768",
            "--alg",
            "X25519",
            "--kat",
            "single",
            "--quiet",
        ])
        .output()
        .unwrap();
    let out = stdout_of(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr_of(&o));
    assert!(out.contains("0 failed"), "{out}");
    let aws = out
        .lines()
        .find(|l| l.starts_with("ML-KEM-768") && l.contains("aws-lc"))
        .unwrap();
    assert!(
        aws.contains("PASS") && aws.contains("decapsulate correctly with"),
        "{aws}"
    );
}

#[test]
fn a_wrong_published_digest_fails_the_gate_with_exit_1() {
    // Copy the vectors and corrupt one published digest: the implementation is now "wrong"
    // relative to the data and must be reported FAILED and never measured.
    let tmp = tempfile::tempdir().unwrap();
    vectors_with_wrong_digest(tmp.path(), "NTRU-HRSS-701");
    let json = tmp.path().join("run.json");
    let o = cryptoscope()
        .args([
            "run",
            "--quick",
            "--quiet",
            "--alg",
            "NTRU-HRSS-701",
            "--impl",
            "clean",
            "--vectors",
        ])
        .arg(tmp.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stdout_of(&o));
    assert!(
        stdout_of(&o).contains("FAIL: kat: KAT digest mismatch"),
        "{}",
        stdout_of(&o)
    );
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for r in run["results"].as_array().unwrap() {
        assert_eq!(r["gate"], "fail");
        assert!(
            r["median_cycles"].is_null() && r["samples"] == 0,
            "a failed subject gets no number"
        );
    }
    // A malformed vector file is bad input: exit 2, one line.
    std::fs::write(tmp.path().join("kex/p256-ecdh.json"), "{ \"tests\": [ {").unwrap();
    let o = cryptoscope()
        .args(["verify", "--alg", "P-256", "--vectors"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("malformed vector file"), "{}", stderr_of(&o));
}

#[test]
fn quick_run_writes_the_documented_json() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("out/run.json");
    let o = cryptoscope()
        .args([
            "run",
            "--quick",
            "--alg",
            "ML-KEM-768",
            "--alg",
            "X25519",
            "--provider",
            "pqclean",
            "--provider",
            "openssl",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout_of(&o), stderr_of(&o));
    let out = stdout_of(&o);
    assert!(out.contains("median cycles") && out.contains("Results:"), "{out}");
    assert!(
        stderr_of(&o).contains("[1/"),
        "progress lines when stderr is not a terminal"
    );
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(run["schema"], "cryptoscope.run/1");
    assert!(run["run_id"].is_string() && run["started_at"].as_str().unwrap().ends_with('Z'));
    let env = &run["environment"];
    // The preflight: a look of about 200 ms, the same PMU status as the environment's, and
    // every warning with its fix (whether there are any depends on the machine).
    let pf = &env["preflight"];
    assert!(pf["look_ms"].as_f64().unwrap() >= 199.0, "{pf}");
    assert_eq!(pf["pmu"], env["perf_core_cycles"], "{pf}");
    for w in pf["warnings"].as_array().unwrap() {
        assert!(
            !w["what"].as_str().unwrap().is_empty() && !w["fix"].as_str().unwrap().is_empty(),
            "{w}"
        );
        assert!(
            stderr_of(&o).contains(w["what"].as_str().unwrap()),
            "each warning is said: {w}"
        );
    }
    let results = run["results"].as_array().unwrap();
    // ML-KEM-768 pqclean clean+avx2 (3 ops each) + X25519 openssl (4 ops: keypair, derive,
    // validate, exchange).
    assert_eq!(results.len(), 10, "{results:?}");
    // Every field of every row is checked in-process (engine/tests/engine/replay.rs,
    // `the_results_file_holds_every_documented_field`); here, that real workers gave
    // numbers from a real clock.
    for r in results {
        assert_eq!(r["gate"], "pass", "{r}");
        assert!(r["median_cycles"].as_f64().unwrap() > 0.0, "{r}");
        assert!(["tsc-reference-cycles", "perf-core-cycles"].contains(&r["cycle_source"].as_str().unwrap()));
    }
    let sizes = &results.iter().find(|r| r["algorithm"] == "ML-KEM-768").unwrap()["sizes"];
    // FIPS 203, Table 3.
    assert_eq!(
        (sizes["public_key"].as_u64(), sizes["ciphertext"].as_u64()),
        (Some(1184), Some(1088))
    );
}

/// `CRYPTOSCOPE_WORKER_RUNNER`: workers start under the runner (here a shell script that
/// notes its arguments and runs them, standing in for `qemu-aarch64 -L …`), and the gate
/// passes through it.
#[test]
fn workers_start_under_the_runner_prefix() {
    let d = tempfile::tempdir().unwrap();
    let (wrap, log) = (d.path().join("wrap.sh"), d.path().join("ran.txt"));
    std::fs::write(&wrap, format!("echo \"$@\" >> '{}'\nexec \"$@\"\n", log.display())).unwrap();
    let o = cryptoscope()
        .env("CRYPTOSCOPE_WORKER_RUNNER", format!("sh {}", wrap.display()))
        .args([
            "verify",
            "--alg",
            "X25519",
            "--provider",
            "rustcrypto",
            "--kat",
            "single",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout_of(&o), stderr_of(&o));
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        ran.contains("cryptoscope-worker-rustcrypto"),
        "the runner started the worker: {ran:?}"
    );
}
