//! `ab` in-process: refusing what it cannot mean (every case an input error of one line,
//! before anything is measured or written), and the A B B A interleaving in epochs on a
//! recording of real workers (`fixtures/replay/ab-x25519.jsonl`), timed by a scripted clock
//! so that the same blocks are asked for on any machine under any load.

use crate::common::{all, cassette, db, exchanges, parse, replaying, stored};
use cryptoscope_engine::ab::{ab, cmd_ab, AbArgs};
use cryptoscope_engine::context::{Captured, Ctx, Time};
use cryptoscope_engine::stored::cmd_show;
use cryptoscope_engine::ui::UsageError;
use cryptoscope_measure::paired::Change;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

#[test]
fn bad_input_is_one_line_and_nothing_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("x.json");
    let db = dir.path().join("r.db");
    let kem = [
        "--alg",
        "ML-KEM-768",
        "ML-KEM-768/rustcrypto/default",
        "ML-KEM-768/pqclean/clean",
    ];
    let cases: &[(&[&str], &str)] = &[
        (
            &["X25519/rustcrypto/default", "SHA-256/rustcrypto/default"],
            "must be subjects of one algorithm",
        ),
        (
            &["X25519/rustcrypto/default", "X25519/nobody/default"],
            "unknown subject",
        ),
        (&["rustcrypto", "pqclean"], "or --alg"),
        (&[&kem[..], &["--op", "derive"]].concat(), "has no operation `derive`"),
        (&[&kem[..], &["--time", "0"]].concat(), "--time"),
        (&[&kem[..], &["--threshold", "2"]].concat(), "--threshold"),
        (&[&kem[..], &["--cpu", "4096"]].concat(), "--cpu 4096"),
    ];
    for (args, says) in cases {
        let mut words: Vec<&str> = args.to_vec();
        let (json_s, db_s) = (json.display().to_string(), db.display().to_string());
        words.extend(["--json", &json_s, "--db", &db_s, "--no-instructions"]);
        let a: AbArgs = parse(&words);
        let mut typed = vec!["ab"];
        typed.extend(&words);
        let (ctx, out) = replaying(&cassette(), None, &typed);
        let e = cmd_ab(&a, &ctx).expect_err(&format!("{args:?} refused"));
        assert!(e.is::<UsageError>(), "{args:?}: {e:#}");
        let text = e.to_string();
        assert!(text.contains(says), "{args:?}: {text}");
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        assert!(!out.stdout().contains("Stored as run"), "{args:?}: {}", out.stdout());
    }
    assert!(!json.exists(), "nothing written");
}

/// `ab --alg X25519 --op keypair,exchange rustcrypto aws-lc`, as recorded (README there).
fn ab_recording() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/ab-x25519.jsonl"
    ))
}

/// The median of the recorded blocks' samples (the pilots left out) of a subject's
/// operation, nanoseconds: what the test expects the verdict from.
fn recorded_median(subject: &str, op: &str) -> f64 {
    let mut ns: Vec<f64> = Vec::new();
    let mut pilots_seen = 0;
    for x in exchanges(&ab_recording()) {
        let args: Vec<&str> = x["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let arg = |k: &str| args.iter().position(|a| *a == k).map(|i| args[i + 1]);
        if args[0] != "measure" || arg("--subject") != Some(subject) {
            continue;
        }
        // The first two measure calls of each subject are its pilots (one per operation).
        pilots_seen += 1;
        if pilots_seen <= 2 || arg("--ops") != Some(op) {
            continue;
        }
        for e in x["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "measured")
        {
            ns.extend(
                e["samples"]["ns"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap()),
            );
        }
    }
    ns.sort_by(f64::total_cmp);
    ns[ns.len() / 2]
}

/// `ab WORDS` over the recording's pair and operations (in its order: each subject's calls
/// are replayed in turn), two scripted seconds at 62.5 ms a reading, with 1 ms blocks:
/// its arguments and a context replaying the recording.
fn replayed_ab(extra: &[&str]) -> (AbArgs, Ctx, Captured) {
    let mut words = vec![
        "--alg",
        "X25519",
        "--op",
        "keypair,exchange",
        "rustcrypto",
        "aws-lc",
        "--no-instructions",
        "--time",
        "2",
        "--block",
        "1",
    ];
    words.extend(extra);
    let a: AbArgs = parse(&words);
    let typed: Vec<&str> = std::iter::once("ab").chain(words.iter().copied()).collect();
    let (ctx, out) = replaying(&ab_recording(), None, &typed);
    (a, ctx.with_time(Time::scripted(Duration::from_micros(62_500))), out)
}

/// What was `cli/tests/ab.rs`'s `two_providers_are_interleaved_in_epochs_stored_and_printed`,
/// on recorded blocks: two seconds of a clock that moves 62.5 ms a reading cover two
/// epochs of one second; the quads, the verdict, the stored rows and `show` follow.
#[test]
fn two_providers_are_interleaved_in_epochs_stored_and_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("ab.json");
    let db_url = tmp.path().join("r.db").display().to_string();
    let (json_s, a_s, b_s) = (
        json.display().to_string(),
        "X25519/rustcrypto/default",
        "X25519/aws-lc/default",
    );
    let (a, ctx, out) = replayed_ab(&["--json", &json_s, "--db", &db_url]);
    assert_eq!(
        cmd_ab(&a, &ctx).unwrap_or_else(|e| panic!("{e:#}\n{}", out.stderr())),
        0
    );
    assert_eq!(ctx.workers.started(), 0);
    let text = out.stdout();
    assert!(
        text.contains(&format!("A: {a_s}")) && text.contains(&format!("B: {b_s}")),
        "{text}"
    );
    assert!(text.contains("Test: blocks in A B B A order"), "{text}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ops = doc["operations"].as_array().unwrap();
    let names: Vec<&str> = ops.iter().map(|o| o["operation"].as_str().unwrap()).collect();
    assert_eq!(names, ["keypair", "exchange"]);
    for op in ops {
        let name = op["operation"].as_str().unwrap();
        let quads = op["quads_ns"].as_array().unwrap();
        assert!(quads.len() >= 4, "at least four quads: {op}");
        assert_eq!(op["quads"], quads.len());
        // Epochs go up from 0, and the scripted two seconds reached the second one.
        let epochs: Vec<u64> = quads.iter().map(|q| q["epoch"].as_u64().unwrap()).collect();
        assert_eq!(epochs[0], 0);
        assert!(epochs.windows(2).all(|w| w[0] <= w[1]), "{epochs:?}");
        assert!(epochs.contains(&1), "{epochs:?}");
        for q in quads {
            for side in ["a", "b"] {
                assert!(q[side].as_array().unwrap().iter().all(|x| x.as_f64().unwrap() > 0.0));
            }
        }
        let (lo, r, hi) = (
            op["ci95_low"].as_f64().unwrap(),
            op["ratio"].as_f64().unwrap(),
            op["ci95_high"].as_f64().unwrap(),
        );
        assert!(lo <= r && r <= hi, "{op}");
        // The verdict the recorded blocks call for, and a ratio near their medians' ratio.
        let data = recorded_median(b_s, name) / recorded_median(a_s, name);
        let want = if data < 0.9 {
            "faster"
        } else if data > 1.1 {
            "slower"
        } else {
            panic!("the recording's {name} is too close to call ({data})")
        };
        assert_eq!(op["verdict"], want, "{op}");
        assert!(
            (r / data - 1.0).abs() < 0.1,
            "{name}: ratio {r} against the recording's {data}"
        );
    }
    assert_eq!(doc["setup"]["instructions_note"], "not counted (--no-instructions)");
    // Stored as a run: A's and B's rows, every block a visit of exactly its calls.
    let id = doc["run_id"].as_str().unwrap();
    let (stored_id, rows) = stored(&db_url).expect("a stored run");
    assert_eq!(stored_id, id);
    for op in ops {
        let name = op["operation"].as_str().unwrap().to_string();
        let want = 2 * op["quads"].as_u64().unwrap() as usize * op["calls_per_block"].as_u64().unwrap() as usize;
        for subject in [a_s, b_s] {
            let n = rows[&(subject.to_string(), name.clone())].len();
            assert_eq!(n, want, "{subject} {name}: samples stored against those in the quads");
        }
    }
    let (ctx, show) = crate::common::reading();
    assert_eq!(cmd_show(&ctx, id, None, None, &all(), &db(&db_url)).unwrap(), 0);
    assert!(show.stdout().contains("calls/block"), "{}", show.stdout());
}

/// `ab` as a value: the same replay read from what `ab()` returns — each operation's quads,
/// epochs and verdict, the run it stored — before anything is printed.
#[test]
fn the_comparison_is_a_value_before_it_is_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let (a, ctx, out) = replayed_ab(&["--db", &db_url]);
    let r = ab(&a, &ctx).unwrap().expect("both gates pass in the recording");
    assert_eq!(out.stdout(), "", "ab() prints nothing");
    assert_eq!(r.failure, None);
    assert_eq!(
        (r.setup.a.as_str(), r.setup.b.as_str()),
        ("X25519/rustcrypto/default", "X25519/aws-lc/default")
    );
    assert_eq!(r.operations.len(), 2);
    let keypair = &r.operations[0];
    assert_eq!(keypair.operation, "keypair");
    assert_eq!(keypair.quads, keypair.quads_ns.len());
    assert!(keypair.quads >= 4);
    assert!(
        keypair.epochs >= 2,
        "two scripted seconds cover two epochs of one: {}",
        keypair.epochs
    );
    let data =
        recorded_median("X25519/aws-lc/default", "keypair") / recorded_median("X25519/rustcrypto/default", "keypair");
    let want = if data < 1.0 { Change::Faster } else { Change::Slower };
    assert!(
        (data - 1.0).abs() > 0.1,
        "the recording's keypair is too close to call ({data})"
    );
    assert_eq!(keypair.verdict, Some(want));
    // Stored: the run, with the set-up and the comparison as its items.
    let (stored_id, _) = stored(&db_url).expect("a stored run");
    assert_eq!(stored_id, r.run.run_id);
    assert_eq!(r.run.applications.len(), 3, "the set-up and two operations");
    assert_eq!(ctx.workers.started(), 0);
}
