//! `cryptoscope ab A B` end to end with real workers. The blocks, quads, epochs and what is
//! stored and printed are checked in-process on recorded blocks (`engine/tests/engine/ab.rs`), the
//! verdicts themselves on synthetic streams in `cryptoscope_measure::paired`. What is exact
//! here is exact by nature: the instruction counts of two builds of the example, one with
//! extra work in its hot loop.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn example_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/byo-mlkem512")
}

fn has_valgrind() -> bool {
    std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `ab` with a short time and small blocks (the plumbing, not a measurement).
fn ab(builds: Option<&Path>, args: &[&str], json: &Path) -> std::process::Output {
    let mut c = cryptoscope();
    if let Some(b) = builds {
        c.env("CRYPTOSCOPE_BUILDS", b);
    }
    c.args(["ab", "--quiet", "--time", "1", "--block", "5", "--json"])
        .arg(json)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_example_pair_differs_in_instructions_and_identical_builds_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("builds");
    let o = cryptoscope()
        .env("CRYPTOSCOPE_BUILDS", &b)
        .args([
            "add",
            "--quiet",
            "--kat",
            "single",
            "--alg",
            "ML-KEM-512",
            "--flags",
            "-O2",
        ])
        .args(["--flags", "-O2 -DCS_EXTRA_WORK=12", "--flags", "-O2 -DCS_SAME"])
        .arg(example_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout_of(&o), stderr_of(&o));
    let base = stdout_of(&o)
        .lines()
        .find_map(|l| {
            l.split_whitespace()
                .next()
                .filter(|s| s.ends_with("-O2"))
                .map(String::from)
        })
        .expect("the -O2 build is listed");
    let slowed = format!("{base}_DCS_EXTRA_WORK=12");
    let same = format!("{base}_DCS_SAME");
    if !has_valgrind() {
        cryptoscope_testkit::needs_setup("valgrind");
        return;
    }
    let json = dir.path().join("slowed.json");
    let o = ab(Some(&b), &[&base, &slowed, "--op", "decaps"], &json);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let op = &doc["operations"][0];
    assert_eq!(op["operation"], "decaps");
    // 12 dependent multiply-adds per Keccak round, more instructions on every call:
    // exact, whatever the machine's speed.
    let (ia, ib) = (
        op["a_instructions"].as_f64().unwrap(),
        op["b_instructions"].as_f64().unwrap(),
    );
    assert!(ib > ia, "{ia} {ib}");
    assert_eq!(op["a_instructions_spread"], 0.0, "decapsulation has one path");
    assert!(
        stdout_of(&o).contains("(fixed path: the code differs)"),
        "{}",
        stdout_of(&o)
    );

    let json = dir.path().join("same.json");
    let o = ab(Some(&b), &[&base, &same, "--op", "decaps"], &json);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let op = &doc["operations"][0];
    assert_eq!(op["a_instructions"], op["b_instructions"]);
    assert!(stdout_of(&o).contains("same count"), "{}", stdout_of(&o));
}

#[test]
fn a_gate_failure_is_exit_1_and_a_crash_keeps_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = dir.path().join("vectors");
    vectors_with_wrong_digest(&vectors, "ML-KEM-512");
    let json = dir.path().join("x.json");
    let o = cryptoscope()
        .env("CRYPTOSCOPE_VECTORS", &vectors)
        .args(["ab", "--quiet", "--time", "1", "--json"])
        .arg(&json)
        .args(["ML-KEM-512/pqclean/clean", "ML-KEM-512/liboqs/dispatch"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("nothing measured"), "{}", stderr_of(&o));
    assert!(!json.exists());

    // Passes its gate, crashes when measured: one line, exit 1, the run and what was
    // measured before the crash stored.
    let o = ab(
        None,
        &[
            "SHA-256/rustcrypto/default",
            "SHA-256/testbed/crash-when-measured",
            "--op",
            "hash:64",
            "--no-instructions",
        ],
        &json,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("crash"), "{}", stderr_of(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc["operations"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["verdict"].is_null()));
    assert!(stored(test_db().to_str().unwrap()).is_some(), "the run is stored");
}
