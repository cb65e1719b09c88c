//! The cipher suite: every strategy of our GIFT and Camellia passes the published vectors,
//! the ECB/CTR/canary checks and 10,000-pair cross-checks against the naive strategy and
//! the independent implementations (RustCrypto, OpenSSL); a wrong published answer fails
//! every implementation of that cipher; a malformed vector file is a usage error; `run
//! --suite cipher` measures the key schedule, every exposed inner function, one block, ECB
//! and CTR, and marks which strategies index memory with secret data.

mod common;

use common::*;

#[test]
fn every_strategy_passes_its_gate_with_cross_checks() {
    let out = cryptoscope()
        .args(["verify", "--quiet", "--suite", "cipher"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("FAIL"), "{text}");
    let ours = |alg: &str| -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with(&format!("{alg} ")) && l.contains(" cryptoscope ") && l.contains("PASS"))
            .collect()
    };
    // Our strategies per cipher (x86-64 with AVX2, AES-NI and VAES: every one runs here).
    for (alg, at_least) in [
        ("GIFT-64", 4),
        ("GIFT-128", 4),
        ("GIFTb-128", 2),
        ("Camellia-128", 3),
        ("Camellia-256", 3),
    ] {
        let lines = ours(alg);
        assert!(lines.len() >= at_least, "{alg}: {lines:?}\n{text}");
        for l in &lines {
            // Every strategy but the naive one is cross-checked against it; Camellia and
            // GIFT-128 also against RustCrypto (and OpenSSL for Camellia).
            if !l.contains(" naive ") {
                assert!(l.contains("agree with cryptoscope/naive"), "{l}");
            }
            if alg.starts_with("Camellia") {
                assert!(
                    l.contains("agree with rustcrypto/camellia") && l.contains("agree with openssl/OpenSSL 3"),
                    "{l}"
                );
            }
            if alg == "GIFT-128" {
                assert!(l.contains("agree with rustcrypto/gift-cipher"), "{l}");
            }
        }
    }
}

#[test]
fn a_wrong_published_answer_fails_every_implementation_and_a_malformed_file_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    let v = d.path().join("vectors");
    vectors_copy(&v);
    let p = v.join("block-ciphers/camellia.json");
    let text = std::fs::read_to_string(&p).unwrap();
    // RFC 3713's Camellia-128 example, last digit changed.
    let wrong = text.replacen(
        "67673138549669730857065648eabe43",
        "67673138549669730857065648eabe42",
        1,
    );
    assert_ne!(wrong, text);
    std::fs::write(&p, wrong).unwrap();
    let out = verify_with_vectors(&v, &["--quiet", "--alg", "Camellia-128"]);
    assert_eq!(out.status.code(), Some(1));
    let t = String::from_utf8_lossy(&out.stdout);
    // Every implementation this CPU runs (RustCrypto, OpenSSL and at least our naive, table
    // and AES-NI strategies); the others are unavailable for the CPU's sake.
    let lines: Vec<&str> = t.lines().filter(|l| l.starts_with("Camellia-128 ")).collect();
    let (unavailable, ran): (Vec<&str>, Vec<&str>) = lines.iter().partition(|l| l.contains("unavailable"));
    assert!(ran.len() >= 5, "{t}");
    assert!(ran.iter().all(|l| l.contains("FAIL") && l.contains("row 1")), "{t}");
    assert!(unavailable.iter().all(|l| l.contains("cpu lacks")), "{t}");

    std::fs::write(
        v.join("block-ciphers/gift.json"),
        "{\"vectors\": [{\"cipher\": \"GIFT-64\"}]}",
    )
    .unwrap();
    let out = verify_with_vectors(&v, &["--alg", "GIFT-64"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("gift.json"), "{err}");
}

#[test]
fn the_cipher_suite_measures_each_function_and_marks_secret_tables() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    // The HTML report is written beside the JSON.
    let html = d.path().join("r.html");
    let out = cryptoscope()
        .args([
            "run",
            "--quick",
            "--rounds",
            "1",
            "--suite",
            "cipher",
            "--provider",
            "cryptoscope",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("Block ciphers") && text.contains("secret tables") && text.contains("qemu-aarch64"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["results"].as_array().unwrap();
    let measured = |subject: &str, op: &str| {
        rows.iter()
            .find(|r| r["subject"] == subject && r["operation"] == op)
            .and_then(|r| r["median_cycles"].as_f64())
            .unwrap_or_else(|| panic!("{subject} {op} not measured"))
    };
    // Strategies this CPU cannot run (AVX-512, VAES, GFNI) are listed as unavailable, for
    // the CPU's sake, and so is the NEON strategy (AArch64 code); none is measured, every
    // other one is.
    let mut subjects: Vec<&str> = rows
        .iter()
        .filter(|r| {
            if r["gate"] == "unavailable" {
                let why = r["gate_detail"].as_str().unwrap_or("");
                let neon = r["implementation"] == "vperm-neon";
                assert!(
                    if neon {
                        why.starts_with("aarch64 code, not in this x86_64 build")
                    } else {
                        why.contains("cpu lacks")
                    },
                    "{r}"
                );
                assert!(r["median_cycles"].is_null(), "{r}");
                false
            } else {
                true
            }
        })
        .filter_map(|r| r["subject"].as_str())
        .collect();
    subjects.dedup();
    assert!(subjects.len() >= 14, "{subjects:?}");
    for s in &subjects {
        let r = rows.iter().find(|r| r["subject"] == *s).unwrap();
        let c = &r["cipher"];
        let (block, batch) = (c["block_bytes"].as_u64().unwrap(), c["batch"].as_u64().unwrap());
        assert!(measured(s, "keysched") > 0.0);
        assert!(measured(s, &format!("block:{block}")) > 0.0);
        assert!(measured(s, "ecb:4096") > 0.0 && measured(s, "ctr:4096") > 0.0);
        // An inner function can cost less than the timer's overhead varies by: its corrected
        // median may then be 0 on a busy machine (seen once in CI), never negative.
        for f in c["functions"].as_array().unwrap() {
            let op = format!("{}:{}", f.as_str().unwrap(), block * batch);
            assert!(measured(s, &op) >= 0.0, "{s} {op}");
        }
        // Tables indexed by secret data: the naive and table strategies, and only they.
        let strategy = r["implementation"].as_str().unwrap();
        let tables = strategy == "naive" || strategy == "table";
        assert_eq!(c["secret_indexing"].as_bool(), Some(tables), "{s}");
    }
    // The inner functions the studies measured are there.
    let gift = rows
        .iter()
        .find(|r| r["subject"] == "GIFT-128/cryptoscope/naive")
        .unwrap();
    assert_eq!(
        gift["cipher"]["functions"],
        serde_json::json!(["subcells", "permbits", "addroundkey"])
    );
    let cam = rows
        .iter()
        .find(|r| r["subject"] == "Camellia-128/cryptoscope/naive")
        .unwrap();
    assert_eq!(cam["cipher"]["functions"], serde_json::json!(["feistel", "fl"]));
    // Both shapes of a many-block strategy are measured. (Which is cheaper per byte is the
    // machine's to say, and BENCHMARKS.md's to record: no ratio is asserted here.)
    let bulk = subjects
        .iter()
        .find(|s| s.starts_with("GIFT-128/cryptoscope/bitsliced-avx2"))
        .unwrap();
    assert!(measured(bulk, "ecb:4096") >= 0.0 && measured(bulk, "block:16") >= 0.0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<h3>Block ciphers</h3>") && page.contains("Camellia-128: cycles per byte"),
        "report lacks the cipher section"
    );
}

#[test]
fn an_unknown_strategy_gets_a_suggestion() {
    let out = cryptoscope()
        .args([
            "run",
            "--suite",
            "cipher",
            "--alg",
            "GIFT-128",
            "--impl",
            "cryptoscope/tabel",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("did you mean `cryptoscope/table`"), "{err}");
}
