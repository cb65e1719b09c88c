//! `cryptoscope memory`: heap, stack and sizes per operation, through the real workers. The
//! expectations are the published observations of the PQC-KEM profiling thesis (PQClean
//! KEMs allocate nothing on the heap; OpenSSL key exchange allocates) and the descriptors'
//! sizes.
mod common;
use common::*;

#[test]
fn memory_reports_heap_stack_and_sizes_per_operation() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("mem.json");
    let o = cryptoscope()
        .args([
            "memory",
            "--quiet",
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
    assert!(out.contains("heap peak") && out.contains("stack"), "{out}");
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = run["results"].as_array().unwrap();
    // ML-KEM-768 clean and avx2 x 3 operations, X25519 OpenSSL x 4.
    assert_eq!(rows.len(), 10);
    for r in rows {
        assert_eq!(r["gate"], "pass", "{r}");
        assert!(r["median_cycles"].is_null(), "the memory pass does not time");
        // Three calls, or one when the first took over 5 s (the worker's rule for slow
        // operations, which a heavily loaded guest can trigger for fast ones too).
        let calls = r["memory_calls"].as_u64().unwrap();
        assert!(calls == 3 || calls == 1, "{r}");
        let stack = r["stack_bytes"].as_u64().unwrap();
        assert!(stack > 100 && stack < 1 << 20, "{r}");
        if r["provider"] == "pqclean" {
            assert_eq!(r["heap_allocations"], 0, "PQClean allocates nothing: {r}");
            assert_eq!(r["heap_peak_bytes"], 0);
            assert_eq!(r["sizes"]["public_key"], 1184);
            let code = r["code_bytes"].as_u64().unwrap();
            assert!(code > 1000, "{r}");
            assert!(r["code_bytes_method"].as_str().unwrap().contains("PQCLEAN_MLKEM768_"));
        } else if r["operation"] == "derive" {
            // EVP_PKEY_derive on a context made beforehand: whatever it allocates is counted.
            assert!(r["heap_allocations"].as_u64().is_some(), "{r}");
        } else {
            assert!(r["heap_allocations"].as_u64().unwrap() > 0, "OpenSSL allocates: {r}");
            assert!(r["heap_peak_bytes"].as_u64().unwrap() > 0);
            assert!(r["code_bytes"].is_null(), "OpenSSL's code is shared between algorithms");
        }
    }
    // Bad input: one line, exit 2.
    let o = cryptoscope().args(["memory", "--calls", "0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = cryptoscope()
        .args(["memory", "--alg", "ML-KEM-769"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("did you mean"), "{}", stderr_of(&o));
    assert!(
        !tmp.path().join("results").exists() || std::fs::read_dir(tmp.path().join("results")).unwrap().next().is_none(),
        "no partial writes on bad input"
    );
}
