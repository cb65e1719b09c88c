//! The build matrix and bring-your-own implementations: PQClean sources compiled with gcc
//! and clang into isolated builds that pass the same KAT gate; a user's directory with the
//! NIST API added and gated; a deliberately broken copy fails the gate; a bad api.h is a
//! usage error.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// PQClean's NTRU-HRSS-701 sources as the pqcrypto-ntru crate ships them.
fn pqclean_ntru() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    for e in std::fs::read_dir(home.join("registry/src")).unwrap().flatten() {
        for c in std::fs::read_dir(e.path()).unwrap().flatten() {
            let n = c.file_name().to_string_lossy().into_owned();
            if n.starts_with("pqcrypto-ntru-") {
                return c.path().join("pqclean");
            }
        }
    }
    panic!("pqcrypto-ntru sources not found in the cargo registry");
}

/// A self-contained NIST-API directory: the scheme's files plus the hash it uses.
fn user_dir(to: &Path) {
    let src = pqclean_ntru();
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(src.join("crypto_kem/ntruhrss701/clean"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    for f in ["fips202.c", "fips202.h"] {
        std::fs::copy(src.join("common").join(f), to.join(f)).unwrap();
    }
}

/// The dynamic symbols the first build in `builds` exports (`nm -D --defined-only`).
fn exported_symbols(builds: &Path) -> String {
    let lib = std::fs::read_dir(builds)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("libkem.so");
    let nm = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .unwrap();
    String::from_utf8_lossy(&nm.stdout).into_owned()
}

fn cs(builds: &Path) -> assert_cmd::Command {
    let mut c = cryptoscope();
    c.env("CRYPTOSCOPE_BUILDS", builds);
    c
}

#[test]
fn gcc_and_clang_builds_pass_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("builds");
    let out = cs(&b)
        .args([
            "build",
            "--quiet",
            "--alg",
            "NTRU-HRSS-701",
            "--cc",
            "gcc,clang",
            "--flags",
            "-O1",
            "--variant",
            "clean",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("build/clean-gcc") && text.contains("build/clean-clang"),
        "{text}"
    );
    let out = cs(&b)
        .args(["verify", "--quiet", "--provider", "build", "--kat", "single"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.matches("PASS").count(), 2, "{text}");
    // Only the shim's entry points are visible in a build.
    let syms = exported_symbols(&b);
    assert!(
        syms.contains("cs_keypair") && !syms.contains("PQCLEAN_NTRUHRSS701"),
        "{syms}"
    );
}

#[test]
fn a_users_implementation_is_gated_and_a_broken_copy_fails() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("builds");
    let good = dir.path().join("ntru");
    user_dir(&good);
    let out = cs(&b)
        .args(["add", "--quiet", "--kat", "single", "--alg", "NTRU-HRSS-701"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("PASS"));

    // One byte fewer hashed into the shared secret: same sizes, wrong answers.
    let bad = dir.path().join("ntru_broken");
    user_dir(&bad);
    let kem = std::fs::read_to_string(bad.join("kem.c")).unwrap();
    let broken = kem.replacen(
        "sha3_256(k, rm, NTRU_OWCPA_MSGBYTES);",
        "sha3_256(k, rm, NTRU_OWCPA_MSGBYTES - 1);",
        1,
    );
    assert_ne!(kem, broken);
    std::fs::write(bad.join("kem.c"), broken).unwrap();
    let out = cs(&b)
        .args(["add", "--quiet", "--kat", "single", "--alg", "NTRU-HRSS-701"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL"));

    // A run measures the good one and never ranks the broken one.
    let json = dir.path().join("r.json");
    let out = cs(&b)
        .args([
            "run",
            "--quiet",
            "--quick",
            "--rounds",
            "1",
            "--provider",
            "build",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the broken build fails its gate");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for r in v["results"].as_array().unwrap() {
        let broken = r["implementation"].as_str().unwrap().starts_with("ntru_broken");
        assert_eq!(r["median_ns"].is_null(), broken, "{r}");
    }
}

/// The example shipped in the repository: ML-KEM-512 written from FIPS 203.
fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/byo-mlkem512")
}

#[test]
fn the_shipped_example_passes_and_a_copy_of_the_draft_standard_fails() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("builds");
    // All 100 KAT entries: the digest is liboqs's, from ../shared/vectors.
    let out = cs(&b)
        .args(["add", "--quiet", "--kat", "all", "--alg", "ML-KEM-512"])
        .arg(example_dir())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("PASS") && text.contains("100 entries"), "{text}");

    // The August 2023 draft (FIPS 203 ipd) derived (rho, sigma) = G(d) without the
    // parameter byte k; an implementation of the draft must fail against the final KATs.
    let bad = dir.path().join("mlkem512_draft");
    std::fs::create_dir_all(&bad).unwrap();
    for e in std::fs::read_dir(example_dir()).unwrap().flatten() {
        std::fs::copy(e.path(), bad.join(e.file_name())).unwrap();
    }
    let code = std::fs::read_to_string(bad.join("mlkem512.c")).unwrap();
    let draft = code.replacen("sha3_512(g, in, sizeof in);", "sha3_512(g, in, 32);", 1);
    assert_ne!(code, draft);
    std::fs::write(bad.join("mlkem512.c"), draft).unwrap();
    let out = cs(&b)
        .args(["add", "--quiet", "--kat", "single", "--alg", "ML-KEM-512"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL") && text.contains("digest"), "{text}");
}

#[test]
fn bad_api_headers_and_names_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("x");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("api.h"), "#define CRYPTO_BYTES 32\n").unwrap();
    for args in [
        vec![
            "add".to_string(),
            d.display().to_string(),
            "--alg".into(),
            "NTRU-HRSS-701".into(),
        ],
        vec![
            "add".to_string(),
            d.display().to_string(),
            "--alg".into(),
            "NTRU-HRSS-70".into(),
        ],
        vec![
            "add".to_string(),
            d.display().to_string(),
            "--alg".into(),
            "X25519".into(),
        ],
        vec![
            "build".to_string(),
            "--alg".into(),
            "NTRU-HRSS-701".into(),
            "--variant".into(),
            "neon".into(),
        ],
        vec![
            "build".to_string(),
            "--alg".into(),
            "NTRU-HRSS-701".into(),
            "--cc".into(),
            "no-such-cc".into(),
        ],
    ] {
        let out = cs(&dir.path().join("b")).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn micro_puts_probe_cycles_beside_callgrind_counts() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("builds");
    let out = cs(&b)
        .args([
            "build",
            "--quiet",
            "--alg",
            "NTRU-HRSS-701",
            "--cc",
            "gcc",
            "--flags",
            "-O1",
            "--variant",
            "clean",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json = dir.path().join("micro.json");
    let out = cs(&b)
        .args([
            "micro",
            "--quiet",
            "--alg",
            "NTRU-HRSS-701",
            "--provider",
            "build",
            "--calls",
            "5",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("cycles/call") && text.contains("TSC"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "cryptoscope.micro/1");
    let rows = v["rows"].as_array().unwrap();
    // Key generation inverts in S3 and R2 and multiplies in Rq (NTRU-HRSS's KeyGen).
    for f in ["poly_S3_inv", "poly_R2_inv", "poly_Rq_inv", "poly_Rq_mul"] {
        let r = rows
            .iter()
            .find(|r| r["function"] == f && r["operation"] == "keypair")
            .unwrap_or_else(|| panic!("no keypair row for {f}: {rows:?}"));
        // Two independent counts of the same calls: callgrind's and the wrapper's.
        assert_eq!(r["calls_per_op"], r["probed_calls_per_op"], "{r}");
        assert!(r["calls_per_op"].as_f64().unwrap() >= 1.0, "{r}");
        assert!(r["cycles_per_call"].as_f64().unwrap() > 0.0, "{r}");
        let share = r["cycle_share"].as_f64().unwrap();
        assert!(share > 0.0 && share <= 1.0, "{r}");
    }
    // Decapsulation never inverts.
    assert!(!rows
        .iter()
        .any(|r| r["operation"] == "decaps" && r["function"] == "poly_S3_inv"));

    // Bad input: micro without --alg is a usage error.
    let out = cs(&b).args(["micro"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn liboqs_sources_build_through_the_matrix_and_pass_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("builds");
    let out = cs(&b)
        .args([
            "build",
            "--quiet",
            "--alg",
            "ML-KEM-512",
            "--source",
            "liboqs",
            "--cc",
            "gcc",
            "--flags",
            "-O2",
            "--variant",
            "clean",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("build/liboqs_clean-gcc"), "{text}");
    // All 100 KAT entries of liboqs 0.13's digest (../shared/vectors).
    let out = cs(&b)
        .args(["verify", "--quiet", "--provider", "build", "--kat", "all"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.matches("PASS").count(), 1, "{text}");
    // liboqs's own symbols are hidden: only the shim's entry points are visible.
    let syms = exported_symbols(&b);
    assert!(syms.contains("cs_keypair") && !syms.contains("OQS_"), "{syms}");
    // A KEM liboqs does not have is a usage error.
    let out = cs(&b)
        .args(["build", "--alg", "NTRU-HRSS-701", "--source", "liboqs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
