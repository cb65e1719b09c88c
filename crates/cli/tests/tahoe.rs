//! The Tahoe-LAFS study end to end on a real loopback grid (the quick profile): the stock
//! hash and our package's SHA-256d give the same caps, BLAKE3 and Shabal-256 (a SHA-3
//! second-round candidate, the 2010 study's subject) different ones; every
//! process reports its hashing; literal caps involve none; results reach the store and
//! the report. The first run builds the Python environment (about a minute).

mod common;

use common::*;

/// The tests share one Python environment, which the first of them may be building.
static ENVIRONMENT: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn the_quick_study_runs_end_to_end_and_the_swap_takes() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    let _one = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let json = d.path().join("tahoe.json");
    let out = cryptoscope()
        .args([
            "tahoe",
            "--quiet",
            "--hash",
            "sha256d,sha256d-ours,blake3,shabal256",
            "--profile",
            "quick",
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{text}\n{}", stderr_of(&out));
    assert!(
        text.contains("swap check: stock and cryptoscope SHA-256d give the same cap"),
        "{text}"
    );
    assert!(
        text.contains("swap check: 3 different hashes give 3 different caps"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let caps: Vec<&str> = ["sha256d", "sha256d-ours", "blake3", "shabal256"]
        .iter()
        .map(|h| v["hashes"][h]["probe_cap"].as_str().unwrap())
        .collect();
    assert_eq!(caps[0], caps[1]);
    assert_ne!(caps[0], caps[2]);
    assert_ne!(caps[0], caps[3]);
    assert_ne!(caps[2], caps[3]);
    assert!(caps.iter().all(|c| c.starts_with("URI:CHK:")), "{caps:?}");
    assert!(v["hashes"]["blake3"]["implementation"]
        .as_str()
        .unwrap()
        .contains("cryptoscope.hashlib blake3"));
    let rows = v["rows"].as_array().unwrap();
    assert!(v["hashes"]["shabal256"]["implementation"]
        .as_str()
        .unwrap()
        .contains("Shabal-256"));
    assert_eq!(rows.len(), 4 * 4 * 2, "4 hashes x 4 vectors x 2 directions");
    for r in rows {
        let client = &r["processes"]["client"];
        let size = r["size"].as_u64().unwrap();
        if size <= 55 {
            // Literal caps: the data lives in the cap; the files are neither encoded nor
            // hashed. The counters cover the whole client process, though, and a CI run saw
            // 4 digests of 79 bytes land in a literal batch (Tahoe's own background work on
            // a freshly started grid), so a few hundred bytes of other hashing are allowed;
            // encoding even one file would hash far more (see the non-literal rows).
            assert_eq!(r["literal"], true, "{r}");
            assert!(client["bytes"].as_u64().unwrap() < 1024, "{r}");
        } else {
            assert_eq!(r["literal"], false, "{r}");
            assert!(client["digests"].as_u64().unwrap() > 0, "{r}");
            assert!(client["wall_ns"].as_u64().unwrap() > 0, "{r}");
            // An upload hashes at least the file's crypttext once.
            if r["direction"] == "upload" {
                let n = r["count"].as_u64().unwrap() * size;
                assert!(client["bytes"].as_u64().unwrap() >= n, "{r}");
            }
        }
    }
    // The stored run renders: the study's table is in the report.
    let html = d.path().join("report.html");
    let rep = cryptoscope()
        .args(["report", "latest", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&html)
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", stderr_of(&rep));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Tahoe-LAFS: time spent hashing"), "no Tahoe section");
    assert!(page.contains("1x8 MB upload: client time hashing"));
    let runs = cryptoscope().args(["runs", "--db"]).arg(&db).output().unwrap();
    assert!(stdout_of(&runs).contains("tahoe"), "{}", stdout_of(&runs));
}

#[test]
fn an_unknown_hash_or_bad_vector_is_a_usage_error() {
    let _serial = serial(); // binds ports, starts daemons or creates namespaces
    let _one = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    for (args, want) in [
        (vec!["--hash", "sha256d,md4"], "unknown hash `md4`"),
        (vec!["--hash", "md5"], "gives 16-byte digests"),
        (vec!["--vectors", "3xbig"], "bad vector `3xbig`"),
        (vec!["--shares", "2,4,4"], "does not fit 3 storage nodes"),
    ] {
        let out = cryptoscope()
            .args(["tahoe", "--quiet", "--db"])
            .arg(&db)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        assert!(stderr_of(&out).contains(want), "{args:?}: {}", stderr_of(&out));
    }
}
