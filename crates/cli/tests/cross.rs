//! The tool off x86-64, under qemu-user (issue 34): the AArch64 build of `cryptoscope` and
//! its workers, and the PQClean worker built for s390x (big-endian) behind our x86-64 CLI.
//!
//! scripts/test.sh cross-builds both and names their directories in
//! `CRYPTOSCOPE_AARCH64_DIR` and `CRYPTOSCOPE_S390X_DIR`; without them these tests record a
//! skip (a failure on CI, where the test command always builds them). Nothing here reads a
//! timing: the verdicts are gates (known-answer digests), availability and labels.

mod common;

use common::{cryptoscope, stdout_of, vectors};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The directory named by `var`, with `cryptoscope`'s binaries for another architecture.
fn cross_dir(var: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            cryptoscope_testkit::needs_setup(&format!("{what} ({var}, set by scripts/test.sh)"));
            None
        }
    }
}

/// The AArch64 `cryptoscope` under qemu-aarch64, its workers under the same runner, with
/// the repository's vectors and a scratch directory for builds.
fn aarch64(dir: &Path, args: &[&str]) -> Output {
    let bin = dir.join("cryptoscope");
    assert!(bin.is_file(), "{} is missing: the cross build failed", bin.display());
    Command::new("qemu-aarch64")
        .arg(&bin)
        .args(args)
        .env("CRYPTOSCOPE_WORKER_RUNNER", "qemu-aarch64")
        .env("CRYPTOSCOPE_VECTORS", vectors())
        .env(
            "CRYPTOSCOPE_BUILDS",
            std::env::temp_dir().join("cryptoscope-test-no-builds-aarch64"),
        )
        .output()
        .expect("qemu-aarch64 runs (scripts/setup.sh installs qemu-user)")
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {:?}\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The catalogue, then one subject of every (family, provider) there passes `verify` with a
/// single KAT, emulated; x86-64's vector strategies are listed as unavailable, with why.
#[test]
fn the_aarch64_tool_lists_and_verifies_every_family_and_provider_under_qemu() {
    let Some(dir) = cross_dir("CRYPTOSCOPE_AARCH64_DIR", "the aarch64 build") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let list = tmp.path().join("list.json");
    let o = aarch64(&dir, &["list", "--all", "-q", "--json", list.to_str().unwrap()]);
    ok(&o, "list");
    let subjects: Vec<Value> = serde_json::from_slice(&std::fs::read(&list).unwrap()).unwrap();
    let status = |s: &Value| s["availability"]["status"].as_str().unwrap_or_default().to_string();
    // Our ciphers: NEON here, x86-64's SSSE3/AVX2/AVX-512/AES-NI/VAES/GFNI code listed, unavailable.
    for s in subjects
        .iter()
        .filter(|s| s["provider"] == "cryptoscope" && s["family"] == "cipher")
    {
        let imp = s["implementation"].as_str().unwrap();
        let x86 = ["ssse3", "avx", "aesni", "vaes", "gfni"]
            .iter()
            .any(|f| imp.contains(f));
        if x86 {
            assert_eq!(status(s), "unavailable", "{s}");
            let why = s["availability"]["reason"].as_str().unwrap();
            assert!(why.contains("x86_64 code, not in this aarch64 build"), "{why}");
        } else {
            assert_eq!(status(s), "available", "{s}");
        }
    }
    assert!(subjects
        .iter()
        .any(|s| s["implementation"] == "vperm-neon" && status(s) == "available"));
    // One available subject per (family, provider), the slow McEliece key generations aside.
    let mut picked: Vec<(String, String, String, String)> = Vec::new();
    for s in subjects.iter().filter(|s| status(s) == "available") {
        let key = (
            s["family"].as_str().unwrap().to_string(),
            s["provider"].as_str().unwrap().to_string(),
        );
        let alg = s["algorithm"].as_str().unwrap();
        if alg.contains("McEliece") || picked.iter().any(|p| (p.0.clone(), p.1.clone()) == key) {
            continue;
        }
        picked.push((
            key.0,
            key.1,
            alg.to_string(),
            s["implementation"].as_str().unwrap().to_string(),
        ));
    }
    let providers: std::collections::BTreeSet<&str> = picked.iter().map(|p| p.1.as_str()).collect();
    for p in ["liboqs", "pqclean", "aws-lc", "rustcrypto", "openssl", "cryptoscope"] {
        assert!(
            providers.contains(p),
            "no available subject of {p} on aarch64: {providers:?}"
        );
    }
    let families: std::collections::BTreeSet<&str> = picked.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        families.into_iter().collect::<Vec<_>>(),
        ["aead", "cipher", "hash", "kem", "kex", "sig"]
    );
    for (family, provider, alg, imp) in &picked {
        let o = aarch64(
            &dir,
            &[
                "verify",
                "-q",
                "--kat",
                "single",
                "--suite",
                family,
                "--alg",
                alg,
                "--provider",
                provider,
                "--impl",
                imp,
            ],
        );
        ok(&o, &format!("verify {alg}/{provider}/{imp}"));
        let out = stdout_of(&o);
        assert!(
            out.contains("PASS") && out.contains(" 0 failed"),
            "{alg}/{provider}/{imp}:\n{out}"
        );
    }
}

/// `run --quick` of ML-KEM-768 and X25519 on the emulated tool: gated and measured, and the
/// results file, the summary and the store row (read back by the x86-64 tool) all say the
/// timings are emulated; nothing is set against published cycles.
#[test]
fn an_emulated_quick_run_is_labelled_in_its_file_and_store_row() {
    let Some(dir) = cross_dir("CRYPTOSCOPE_AARCH64_DIR", "the aarch64 build") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (json, db) = (tmp.path().join("run.json"), tmp.path().join("store.db"));
    let o = aarch64(
        &dir,
        &[
            "run",
            "--quick",
            "--alg",
            "ML-KEM-768",
            "--alg",
            "X25519",
            "--json",
            json.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
    );
    ok(&o, "run --quick");
    let out = stdout_of(&o);
    assert!(out.contains("median ticks"), "{out}");
    assert!(
        out.contains("not compared with published figures: qemu-aarch64"),
        "{out}"
    );
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let env = &run["environment"];
    assert_eq!(env["arch"], "aarch64");
    let label = env["emulated"].as_str().expect("environment.emulated");
    assert!(label.contains("emulated — timings are not this machine's"), "{label}");
    assert!(env["generic_timer_hz"].as_f64().is_some_and(|hz| hz > 0.0), "{env}");
    let results = run["results"].as_array().unwrap();
    for alg in ["ML-KEM-768", "X25519"] {
        assert!(
            results.iter().any(|r| r["algorithm"] == alg && r["gate"] == "pass"),
            "{alg} not measured"
        );
    }
    // Under emulation the counters are off: every figure is the generic timer's.
    assert!(
        results.iter().all(|r| r["cycle_source"] == "generic-timer-ticks"),
        "{results:?}"
    );
    // The store row, read by this machine's own build.
    let id = run["run_id"].as_str().unwrap();
    let shown = cryptoscope()
        .args(["show", id, "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    ok(&shown, "show");
    let text = stdout_of(&shown);
    assert!(text.contains("EMULATED: qemu-aarch64"), "{text}");
}

/// PQClean's clean ML-KEM, NTRU and Classic McEliece built for s390x, big-endian, pass
/// their known-answer gate behind our x86-64 CLI: the worker protocol, the NIST DRBG and
/// the KAT digests on a big-endian machine.
#[test]
fn pqclean_on_big_endian_s390x_reproduces_the_kat_digests() {
    let Some(dir) = cross_dir("CRYPTOSCOPE_S390X_DIR", "the s390x PQClean worker") else {
        return;
    };
    assert!(
        dir.join("cryptoscope-worker-pqclean").is_file(),
        "no s390x worker in {}",
        dir.display()
    );
    let o = cryptoscope()
        .env("CRYPTOSCOPE_WORKER_DIR", &dir)
        .env("CRYPTOSCOPE_WORKER_RUNNER", "qemu-s390x -L /usr/s390x-linux-gnu")
        .args([
            "verify",
            "-q",
            "--kat",
            "single",
            "--provider",
            "pqclean",
            "--impl",
            "clean",
        ])
        .args(["--alg", "ML-KEM-512", "--alg", "ML-KEM-768", "--alg", "ML-KEM-1024"])
        .args([
            "--alg",
            "NTRU-HPS-2048-509",
            "--alg",
            "NTRU-HRSS-701",
            "--alg",
            "Classic-McEliece-348864",
        ])
        .output()
        .unwrap();
    ok(&o, "verify on s390x");
    let out = stdout_of(&o);
    for alg in [
        "ML-KEM-512 ",
        "ML-KEM-768 ",
        "ML-KEM-1024 ",
        "NTRU-HPS-2048-509 ",
        "NTRU-HRSS-701 ",
        "Classic-McEliece-348864 ",
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(alg))
            .unwrap_or_else(|| panic!("{alg}missing:\n{out}"));
        assert!(line.contains("PASS") && line.contains("KAT digest matches"), "{line}");
    }
    assert!(out.contains("6 passed, 0 failed"), "{out}");
}
