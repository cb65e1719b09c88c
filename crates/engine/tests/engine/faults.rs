//! Faults in-process: the recording with calls that ended badly — a gate call that crashed,
//! one that timed out, a measure call that crashed after its first operation — is run as
//! recorded. Each broken subject is reported with its cause, in the run file, the store and
//! the summary; the sound subjects are measured as before; the exit code is 1. (The same
//! faults from real processes — signals, a hang, the memory limit, a buffer overrun — are
//! in `cli/tests/faults.rs`, on the testbed provider's broken subjects.)

use crate::common::{cassette, exchanges, parse, replaying, run, stored};
use cryptoscope_engine::listing::verify;
use cryptoscope_model::GateStatus;
use cryptoscope_testkit::replay::RUN;
use serde_json::{json, Value};

/// The recording with these calls ending as given: (command, subject, outcome, how many of
/// the call's events survive).
fn broken(to: &std::path::Path, faults: &[(&str, &str, Value, usize)]) {
    let mut out = String::new();
    for mut x in exchanges(&cassette()) {
        let subject = x["args"]
            .as_array()
            .and_then(|a| a.iter().position(|w| w == "--subject").map(|i| a[i + 1].clone()));
        for (command, s, outcome, keep) in faults {
            if x["args"][0] == *command && subject.as_ref().is_some_and(|v| v == s) {
                x["outcome"] = outcome.clone();
                let events = x["events"].as_array_mut().unwrap();
                events.truncate(*keep);
            }
        }
        out.push_str(&x.to_string());
        out.push('\n');
    }
    std::fs::write(to, out).unwrap();
}

/// Two gate calls that ended badly: SHA3-256's crashed, PQClean's AVX2 ML-KEM-768's timed out.
fn gate_faults() -> Vec<(&'static str, &'static str, Value, usize)> {
    vec![
        ("gate", "SHA3-256/rustcrypto/default", json!({"crashed": "SIGSEGV"}), 0),
        (
            "gate",
            "ML-KEM-768/pqclean/avx2",
            json!({"timed-out": {"secs": 15, "nanos": 0}}),
            0,
        ),
    ]
}

#[test]
fn broken_subjects_are_reported_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let recording = tmp.path().join("broken.jsonl");
    let mut faults = gate_faults();
    faults.push(("measure", "X25519/rustcrypto/default", json!({"crashed": "SIGABRT"}), 1));
    broken(&recording, &faults);
    let db = tmp.path().join("r.db").display().to_string();
    let json_file = tmp.path().join("run.json");
    let (code, out) = run(&recording, RUN, &db, &json_file);
    let text = out.stdout();
    assert_eq!(code, 1, "{text}\n{}", out.stderr());
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    let rows = file["results"].as_array().unwrap();
    let of = |s: &str| -> Vec<&Value> { rows.iter().filter(|r| r["subject"] == s).collect() };
    for (subject, status, words, n) in [
        ("SHA3-256/rustcrypto/default", "crashed", &["SIGSEGV"][..], 2),
        ("ML-KEM-768/pqclean/avx2", "timeout", &["timed out after 15 s"][..], 3),
    ] {
        let rs = of(subject);
        assert_eq!(rs.len(), n, "{subject}: a row per operation");
        for r in rs {
            assert_eq!(r["gate"], status, "{r}");
            assert!(r["median_ns"].is_null(), "{subject} got a number");
            for w in words {
                assert!(r["gate_detail"].as_str().unwrap().contains(w), "{r}");
            }
        }
        assert!(text.contains(&format!("{subject} [{status}]")), "{subject}: {text}");
    }
    // The measure call crashed after its first operation: that one is kept (its samples
    // are the recording's), the others say where the crash came.
    let x = of("X25519/rustcrypto/default");
    assert_eq!(x.len(), 4, "{x:?}");
    let crashed: Vec<&&Value> = x.iter().filter(|r| r["gate"] == "crashed").collect();
    assert!(!crashed.is_empty(), "{x:?}");
    for r in &crashed {
        let d = r["gate_detail"].as_str().unwrap();
        assert!(d.contains("SIGABRT") && d.contains("while measuring"), "{r}");
    }
    // The sound subjects were measured as in the recording.
    for s in [
        "SHA-256/rustcrypto/default",
        "ML-KEM-768/pqclean/clean",
        "ML-KEM-768/rustcrypto/default",
    ] {
        for r in of(s) {
            assert_eq!(r["gate"], "pass", "{r}");
            assert!(r["median_ns"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    assert!(text.contains("subjects failed (exit code 1):"), "{text}");
    // The store holds the same rows, failures with their causes.
    let (_, stored_rows) = stored(&db).unwrap();
    assert_eq!(stored_rows.len(), rows.len());
    // The report beside the run file lists the subjects that failed their gate, with the
    // cause, and only those (`cli/tests/report.rs` does the same for a KAT mismatch).
    let html = std::fs::read_to_string(tmp.path().join("run.html")).unwrap();
    assert!(html.contains(" of 6 subjects passed."), "six subjects in the recording");
    for (subject, status, detail) in [
        ("SHA3-256/rustcrypto/default", "CRASHED", "SIGSEGV"),
        ("ML-KEM-768/pqclean/avx2", "TIMEOUT", "timed out after 15 s"),
    ] {
        let cell = format!("<td>{subject}</td><td class=\"fail\">{status}</td><td>");
        let at = html
            .find(&cell)
            .unwrap_or_else(|| panic!("{subject} is not listed as {status}"));
        let reason = &html[at + cell.len()..];
        assert!(reason[..reason.find("</td>").unwrap()].contains(detail), "{subject}");
    }
    for sound in ["SHA-256/rustcrypto/default", "ML-KEM-768/pqclean/clean"] {
        assert!(
            !html.contains(&format!("<td>{sound}</td><td class=")),
            "{sound} is listed as failed"
        );
    }
}

/// `verify` as a value on the same faults: the two gate calls that ended badly fail their
/// subjects, the four others pass (a crash while measuring is not the gate's).
#[test]
fn verify_counts_the_gate_calls_that_ended_badly() {
    let tmp = tempfile::tempdir().unwrap();
    let recording = tmp.path().join("broken.jsonl");
    broken(&recording, &gate_faults());
    let words = [
        "--alg",
        "SHA-256,SHA3-256,ML-KEM-768,X25519",
        "--provider",
        "rustcrypto,pqclean",
    ];
    let typed: Vec<&str> = std::iter::once("verify").chain(words).collect();
    let (ctx, out) = replaying(&recording, None, &typed);
    let v = verify(&parse(&words), &parse(&[]), &ctx).unwrap();
    assert_eq!(v.counts(), (4, 2, 0));
    for (subject, status) in [
        ("SHA3-256/rustcrypto/default", GateStatus::Crashed),
        ("ML-KEM-768/pqclean/avx2", GateStatus::Timeout),
    ] {
        let d = v.gated.picked.iter().find(|d| d.id == subject).unwrap();
        assert_eq!(v.gated.verdict(d).status, status, "{subject}");
    }
    assert_eq!(out.stdout(), "", "verify() writes nothing");
    assert!(
        v.render().contains("4 passed, 2 failed, 0 unavailable"),
        "{}",
        v.render()
    );
    assert_eq!(ctx.workers.started(), 0);
}
