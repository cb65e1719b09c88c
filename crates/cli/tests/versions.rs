//! Versions side by side: the system's OpenSSL (`openssl`) and the versions built from
//! vendored sources (`openssl-3.5`, `openssl-4.0`), each its own worker. Each version lists
//! what it has and, as unavailable, what it lacks; the post-quantum subjects of the new
//! versions pass the same gate as every other implementation (the published KAT digests,
//! the FIPS 205 vectors); `--provider openssl-X.Y` names the system build when that is its
//! version, and an unknown version or a version without a working worker is a one-line
//! error with exit code 2, after the other versions were measured.

mod common;

use common::*;
use std::os::unix::fs::symlink;

/// `list` rows (algorithm, provider, version column, status) for these arguments.
fn list_rows(args: &[&str]) -> Vec<(String, String, String, String)> {
    let out = cryptoscope().args(["list", "--quiet"]).args(args).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    stdout_of(&out)
        .lines()
        .filter(|l| l.contains(" openssl"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let version = l
                .find("OpenSSL ")
                .map(|i| l[i..].split("  ").next().unwrap_or("").to_string());
            let status = if l.contains("unavailable") {
                "unavailable"
            } else {
                "available"
            };
            (
                f[0].to_string(),
                f[1].to_string(),
                version.unwrap_or_default(),
                status.to_string(),
            )
        })
        .collect()
}

/// The system OpenSSL's major.minor, from its X25519 subject.
fn system_version() -> String {
    let rows = list_rows(&["--provider", "openssl", "--alg", "X25519"]);
    let v = &rows.first().expect("the system OpenSSL offers X25519").2;
    let mm: Vec<&str> = v.trim_start_matches("OpenSSL ").split('.').take(2).collect();
    mm.join(".")
}

#[test]
fn each_version_lists_what_it_has_and_what_it_lacks() {
    let rows = list_rows(&[
        "--provider",
        "openssl",
        "--provider",
        "openssl-3.5",
        "--provider",
        "openssl-4.0",
        "--alg",
        "X25519",
        "--alg",
        "ML-KEM-768",
        "--alg",
        "ML-DSA-65",
    ]);
    for (p, v) in [("openssl-3.5", "OpenSSL 3.5."), ("openssl-4.0", "OpenSSL 4.0.")] {
        for alg in ["X25519", "ML-KEM-768", "ML-DSA-65"] {
            let row = rows.iter().find(|r| r.0 == alg && r.1 == p);
            let row = row.unwrap_or_else(|| panic!("{alg} from {p}: {rows:?}"));
            assert!(row.2.starts_with(v), "{row:?}");
            assert_eq!(row.3, "available", "{row:?}");
        }
    }
    // Debian 12's 3.0 has no ML-KEM or ML-DSA: listed, as unavailable, with its version.
    if system_version().as_str() < "3.5" {
        for alg in ["ML-KEM-768", "ML-DSA-65"] {
            let row = rows.iter().find(|r| r.0 == alg && r.1 == "openssl");
            let row = row.unwrap_or_else(|| panic!("{alg} from the system OpenSSL: {rows:?}"));
            assert_eq!(row.3, "unavailable", "{row:?}");
        }
    }
}

#[test]
fn the_new_versions_pass_the_gate() {
    let out = cryptoscope()
        .args(["verify", "--quiet", "--kat", "single"])
        .args(["--provider", "openssl-3.5", "--provider", "openssl-4.0"])
        .args([
            "--alg",
            "ML-KEM-768",
            "--alg",
            "ML-DSA-44",
            "--alg",
            "SLH-DSA-SHA2-128f",
        ])
        .args([
            "--alg",
            "X25519",
            "--alg",
            "Ed25519",
            "--alg",
            "AES-256-GCM",
            "--alg",
            "Camellia-128",
        ])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}\n{}", stderr_of(&out));
    for p in ["openssl-3.5", "openssl-4.0"] {
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(&format!(" {p} "))).collect();
        assert_eq!(lines.len(), 7, "{p}: {text}");
        assert!(lines.iter().all(|l| l.contains("PASS")), "{text}");
        // Reproduced from the harness's DRBG: the published digests themselves.
        for alg in ["ML-KEM-768", "ML-DSA-44"] {
            let l = lines.iter().find(|l| l.starts_with(alg)).unwrap();
            assert!(l.contains("KAT digest matches"), "{l}");
        }
        // Every Wycheproof file of the level is part of each version's gate.
        let l = lines.iter().find(|l| l.starts_with("ML-KEM-768")).unwrap();
        for f in ["test", "encaps_test", "keygen_seed_test", "semi_expanded_decaps_test"] {
            assert!(l.contains(&format!("mlkem_768_{f}.json: ")), "{l}");
        }
        let l = lines.iter().find(|l| l.starts_with("ML-DSA-44")).unwrap();
        for f in ["sign_seed", "sign_noseed", "verify"] {
            assert!(l.contains(&format!("mldsa_44_{f}_test.json: ")), "{l}");
        }
    }
}

#[test]
fn the_system_build_answers_to_its_version() {
    let v = system_version();
    let by_name = list_rows(&["--provider", "openssl", "--suite", "kex"]);
    let by_version = list_rows(&["--provider", &format!("openssl-{v}"), "--suite", "kex"]);
    assert!(!by_name.is_empty());
    assert_eq!(by_name, by_version);
}

#[test]
fn an_unknown_version_is_a_usage_error() {
    let out = cryptoscope()
        .args(["run", "--quick", "--provider", "openssl-4.1", "--alg", "X25519"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(line.contains("unknown version `openssl-4.1`"), "{err}");
    assert!(line.contains("openssl-3.5") && line.contains("openssl-4.0"), "{err}");
}

/// A version whose worker cannot start (as when its vendored build failed, which links it
/// to a stub that says so and exits 2): the other versions are measured and stored, then
/// a one-line error names it and the run exits 2.
#[test]
fn a_broken_version_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let real = bin().parent().unwrap().to_path_buf();
    for p in ["openssl", "openssl-3.5"] {
        let name = worker(p).file_name().unwrap().to_owned();
        symlink(real.join(&name), dir.path().join(name)).unwrap();
    }
    let stub = dir.path().join("cryptoscope-worker-openssl40");
    std::fs::write(
        &stub,
        "#!/bin/sh\necho 'error: openssl-4.0 was not built from its vendored sources: make failed' >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let json = dir.path().join("run.json");
    let out = cryptoscope()
        .env("CRYPTOSCOPE_WORKER_DIR", dir.path())
        .args(["run", "--quick", "--quiet", "--alg", "X25519"])
        .args(["--provider", "openssl-3.5", "--provider", "openssl-4.0", "--db"])
        .arg(dir.path().join("r.db"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("openssl-4.0") && errors[0].contains("make failed"),
        "{err}"
    );
    let results: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let measured = results["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["provider"] == "openssl-3.5" && r["algorithm"] == "X25519")
        .count();
    assert!(measured >= 3, "{results}");
}
