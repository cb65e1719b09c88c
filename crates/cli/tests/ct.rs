//! The constant-time audit, calibrated on known cases: a deliberately leaky early-exit
//! compare (testbed) and the table-driven GIFT and Camellia strategies (secret-indexed
//! tables) must be flagged; the same compare without a branch and the bitsliced and
//! fixsliced strategies must pass. Expected verdicts come from how the code is written
//! (crates/providers/testbed, crates/ciphers), not from running it.
//!
//! These verdicts come from memcheck, which follows secret bits through the program and so
//! decides the same on any machine under any load. dudect's verdicts depend on timing: its
//! calibration (the same cases, modelled) is tested on controlled timings in
//! crates/worker/src/ct.rs and its confirmation rule in crates/engine/src/ct.rs; here a live
//! dudect run is checked for its plumbing only (docs/testing.md).

mod common;

use common::*;
use serde_json::Value;

/// `cryptoscope ct ARGS --json`: its items.
fn audit(args: &[&str]) -> Vec<Value> {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("ct.json");
    let o = cryptoscope()
        .arg("ct")
        .args(args)
        .args(["--quick", "--quiet", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("verdict"), "{out}");
    let items: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    items
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["item"] != "setup")
        .map(|i| i["data"].clone())
        .collect()
}

/// The memcheck audit of a selection.
fn memcheck(args: &[&str]) -> Vec<Value> {
    let mut a = args.to_vec();
    a.extend(["--method", "memcheck"]);
    audit(&a)
}

fn find<'a>(items: &'a [Value], subject: &str, op: &str) -> &'a Value {
    items
        .iter()
        .find(|i| i["subject"] == subject && i["operation"] == op)
        .unwrap_or_else(|| panic!("no item for {subject} {op}"))
}

fn findings(v: &Value) -> Vec<Value> {
    v["memcheck"]["findings"].as_array().cloned().unwrap_or_default()
}

#[test]
fn an_early_exit_compare_is_flagged_and_its_fix_passes() {
    let items = memcheck(&["--provider", "testbed", "--impl", "early-exit,constant-compare"]);
    let leaky = find(&items, "SHA-256/testbed/early-exit", "hash");
    let f = findings(leaky);
    assert!(
        f.iter()
            .any(|x| x["kind"] == "branch" && x["function"].as_str().unwrap().contains("early_exit_equal")),
        "{leaky}"
    );
    assert!(f[0]["location"].as_str().unwrap().starts_with("lib.rs:"), "{leaky}");
    assert_eq!(leaky["verdict"], "leak (memcheck)", "{leaky}");
    let fixed = find(&items, "SHA-256/testbed/constant-compare", "hash");
    assert_eq!(fixed["memcheck"]["status"], "clean", "{fixed}");
    assert!(findings(fixed).is_empty(), "{fixed}");
    assert_eq!(fixed["verdict"], "no leak found (one method)", "{fixed}");
    // A speed run of the same subjects shows the stored audit's verdict beside the numbers.
    let tmp = tempfile::tempdir().unwrap();
    let o = cryptoscope()
        .args([
            "run",
            "--provider",
            "testbed",
            "--impl",
            "early-exit,constant-compare",
            "--quick",
            "--quiet",
            "--rounds",
            "1",
            "--lengths",
            "64",
            "--json",
        ])
        .arg(tmp.path().join("speed.json"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("SHA-256/testbed/early-exit hash: leak (memcheck)"),
        "{out}"
    );
    assert!(!out.contains("constant-compare hash: "), "{out}");
}

#[test]
fn an_early_exit_tag_compare_is_flagged_and_its_fix_passes() {
    let items = memcheck(&["--provider", "testbed", "--impl", "early-exit-tag,constant-tag"]);
    for op in ["open", "open-forged"] {
        // The byte-by-byte compare of a 16-byte tag: one branch site, reached once per byte
        // (all 16 compared, with a valid tag and with one whose last byte is wrong).
        let leaky = find(&items, "ChaCha20-Poly1305/testbed/early-exit-tag", op);
        assert!(
            findings(leaky).iter().any(|x| x["kind"] == "branch"
                && x["function"].as_str().unwrap().contains("early_exit_equal")
                && x["count"] == 16),
            "{op}: {leaky}"
        );
        assert_eq!(leaky["verdict"], "leak (memcheck)", "{op}: {leaky}");
        // The constant-time compare: only the accept/reject decision, tested once.
        let fixed = find(&items, "ChaCha20-Poly1305/testbed/constant-tag", op);
        assert_eq!(fixed["memcheck"]["status"], "clean", "{op}: {fixed}");
        assert!(
            findings(fixed)
                .iter()
                .all(|x| x["kind"] == "decision" && x["count"] == 1),
            "{op}: {fixed}"
        );
        assert_eq!(fixed["verdict"], "no leak found (one method)", "{op}: {fixed}");
    }
    // Sealing involves no comparison: both pass.
    for s in ["early-exit-tag", "constant-tag"] {
        let seal = find(&items, &format!("ChaCha20-Poly1305/testbed/{s}"), "seal");
        assert_eq!(seal["memcheck"]["status"], "clean", "{seal}");
    }
}

#[test]
fn table_strategies_are_flagged_and_bitsliced_ones_pass() {
    let items = memcheck(&[
        "--alg",
        "GIFT-64,Camellia-128",
        "--provider",
        "cryptoscope",
        "--impl",
        "table,bitsliced-avx2,fixsliced,aesni-avx",
    ]);
    for s in ["GIFT-64/cryptoscope/table", "Camellia-128/cryptoscope/table"] {
        let e = find(&items, s, "encrypt");
        assert!(
            findings(e)
                .iter()
                .any(|x| x["kind"] == "index" || x["kind"] == "branch"),
            "{s}: {e}"
        );
        assert_eq!(e["verdict"], "leak (memcheck)", "{s}: {e}");
    }
    // Camellia's table key schedule indexes its S-box tables with key bytes too.
    let ks = find(&items, "Camellia-128/cryptoscope/table", "key-schedule");
    assert!(!findings(ks).is_empty(), "{ks}");
    for s in ["GIFT-64/cryptoscope/bitsliced-avx2", "GIFT-64/cryptoscope/fixsliced"] {
        for op in ["key-schedule", "encrypt"] {
            let e = find(&items, s, op);
            assert_eq!(e["memcheck"]["status"], "clean", "{s} {op}: {e}");
            assert!(findings(e).is_empty(), "{s} {op}: {e}");
        }
    }
    // Camellia in AES-NI: its encryption passes memcheck.
    let e = find(&items, "Camellia-128/cryptoscope/aesni-avx", "encrypt");
    assert_eq!(e["memcheck"]["status"], "clean", "{e}");
}

#[test]
fn key_generation_and_encapsulation_are_audited_with_marked_randomness() {
    let items = memcheck(&["--alg", "ML-KEM-768", "--provider", "pqclean", "--impl", "clean"]);
    // Key generation: every report is in the rejection sampling of the public matrix from
    // ρ, which FIPS 203 publishes in the encapsulation key (reference/ct-declassified.json).
    let kp = find(&items, "ML-KEM-768/pqclean/clean", "keypair");
    let f = findings(kp);
    assert!(
        !f.is_empty(),
        "memcheck sees the public matrix's rejection sampling: {kp}"
    );
    assert!(
        f.iter().all(|x| x["kind"] == "public"
            && x["function"].as_str().unwrap().contains("rej_uniform")
            && x["declared_source"].as_str().unwrap().contains("FIPS 203")),
        "{kp}"
    );
    assert_eq!(kp["memcheck"]["status"], "clean", "{kp}");
    assert!(
        kp["memcheck"]["secret"].as_str().unwrap().contains("randomness"),
        "{kp}"
    );
    // Encapsulation: the matrix comes from the public key, the rest is constant-time.
    let enc = find(&items, "ML-KEM-768/pqclean/clean", "encaps");
    assert_eq!(enc["memcheck"]["status"], "clean", "{enc}");
    assert!(findings(enc).is_empty(), "{enc}");
    // AWS-LC draws its own randomness: only decapsulation can be audited.
    let o = cryptoscope()
        .args([
            "ct",
            "--alg",
            "ML-KEM-768",
            "--provider",
            "aws-lc",
            "--method",
            "memcheck",
            "--quick",
            "--quiet",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("decaps") && !out.contains(" keypair ") && !out.contains(" encaps "),
        "{out}"
    );
}

/// Live dudect, plumbing only: every test runs, its samples arrive in both classes with
/// their labels and a finite statistic, warm and (for a block cipher) cold. Which status
/// it reaches is the machine's business, so any of dudect's statuses is accepted.
#[test]
fn dudect_runs_deliver_labelled_statistics() {
    let items = audit(&[
        "--alg",
        "SHA-256,GIFT-64",
        "--provider",
        "testbed,cryptoscope",
        "--impl",
        "early-exit,constant-compare,table",
        "--method",
        "dudect",
        "--samples",
        "2000",
        "--time-budget",
        "1",
    ]);
    let want = [
        ("SHA-256/testbed/early-exit", "hash", &["warm"][..]),
        ("SHA-256/testbed/constant-compare", "hash", &["warm"]),
        ("GIFT-64/cryptoscope/table", "encrypt", &["warm", "cold"]),
    ];
    for (subject, op, temps) in want {
        let item = find(&items, subject, op);
        assert_eq!(item["memcheck"]["status"], "not run", "{item}");
        for t in temps {
            let d = &item["dudect"][t];
            let status = d["status"].as_str().unwrap_or_default();
            assert!(["pass", "leak", "unconfirmed"].contains(&status), "{subject} {t}: {d}");
            let runs = d["runs"].as_array().unwrap();
            assert_eq!(runs.len(), if status == "pass" { 1 } else { 2 }, "{d}");
            for r in runs {
                assert_eq!(r["subject"], subject);
                assert_eq!(r["operation"], op);
                assert_eq!(r["cold"], *t == "cold");
                assert!(["TSC ticks", "ns"].contains(&r["unit"].as_str().unwrap()), "{r}");
                assert!(!r["classes"].as_str().unwrap().is_empty());
                let res = &r["result"];
                // At least 200 calls whatever the budget (the worker's floor), both classes.
                assert!(res["samples"].as_u64().unwrap() >= 200, "{res}");
                assert!(
                    res["n_fixed"].as_u64().unwrap() > 0 && res["n_random"].as_u64().unwrap() > 0,
                    "{res}"
                );
                assert!(res["max_t"].as_f64().unwrap().is_finite(), "{res}");
                assert!(res["mean_fixed"].as_f64().unwrap() > 0.0, "{res}");
            }
        }
        assert!(!item["verdict"].as_str().unwrap().is_empty());
    }
}

#[test]
fn bad_ct_arguments_are_usage_errors() {
    for args in [
        &["ct", "--method", "guess"][..],
        &["ct", "--samples", "10"],
        &["ct", "--alg", "GIFT-63"],
    ] {
        let o = cryptoscope().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
