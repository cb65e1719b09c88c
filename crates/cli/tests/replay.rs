//! The replay tier (docs/testing.md): the run pipeline on recorded worker exchanges, with
//! no provider started. `fixtures/replay/kem-hash.jsonl` was recorded once from a real run
//! (its README says how); rounds, merging visits, the store, resuming after a kill at an
//! exact point, exports, the report and `compare`'s verdicts are checked on those samples,
//! so every assertion holds on any machine under any load.

mod common;

use common::*;

#[allow(dead_code)]
#[path = "common/pg.rs"]
mod pg;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn cassette() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/kem-hash.jsonl"
    ))
}

/// The recorded exchanges, one JSON value per line.
fn exchanges(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (subject, operation) -> the recorded nanosecond samples of every visit, in order.
fn recorded(path: &Path) -> Rows {
    let mut m = Rows::new();
    for x in exchanges(path) {
        for e in x["events"].as_array().unwrap() {
            if e["type"] == "measured" {
                let k = (
                    e["subject"].as_str().unwrap().to_string(),
                    e["operation"].as_str().unwrap().to_string(),
                );
                let ns = e["samples"]["ns"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap());
                m.entry(k).or_default().extend(ns);
            }
        }
    }
    m
}

/// A worker directory holding files with the workers' names that cannot be run: the
/// catalogue finds its providers, and a call that started a worker would fail loudly.
fn no_workers(dir: &Path) -> PathBuf {
    let d = dir.join("workers");
    std::fs::create_dir_all(&d).unwrap();
    for w in ["pqclean", "rustcrypto"] {
        std::fs::write(d.join(format!("cryptoscope-worker-{w}")), "not a program").unwrap();
    }
    d
}

/// The recorded run's command line, replayed.
const RUN: &[&str] = &[
    "run",
    "--alg",
    "SHA-256,SHA3-256,ML-KEM-768,X25519",
    "--provider",
    "rustcrypto,pqclean",
    "--quick",
    "--rounds",
    "2",
    "--samples",
    "40",
    "--lengths",
    "64,1024",
    "--quiet",
];

fn replay(tmp: &Path, cassette: &Path, args: &[&str], db: &str, kill_at: Option<usize>) -> std::process::Output {
    let mut c = cryptoscope();
    c.args(args)
        .args(["--db", db, "--json"])
        .arg(tmp.join("run.json"))
        .env("CRYPTOSCOPE_REPLAY", cassette)
        .env("CRYPTOSCOPE_WORKER_DIR", no_workers(tmp));
    if let Some(k) = kill_at {
        c.env("CRYPTOSCOPE_REPLAY_KILL_AT", k.to_string());
    }
    c.output().unwrap()
}

#[test]
fn rounds_merge_the_recorded_visits_into_stored_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db").display().to_string();
    let o = replay(tmp.path(), &cassette(), RUN, &db, None);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = recorded(&cassette());
    assert_eq!(
        want.len(),
        17,
        "3 KEMs x 3 operations, X25519's 4, 2 hashes x 2 lengths recorded"
    );
    // The run file: every row is the recording's two visits, in order, and says so.
    let file: Value = serde_json::from_str(&std::fs::read_to_string(tmp.path().join("run.json")).unwrap()).unwrap();
    let rows = file["results"].as_array().unwrap();
    assert_eq!(rows.len(), want.len());
    for r in rows {
        let k = (
            r["subject"].as_str().unwrap().to_string(),
            r["operation"].as_str().unwrap().to_string(),
        );
        let ns: Vec<f64> = r["raw_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(ns, want[&k], "{k:?}");
        assert_eq!(r["visits"], serde_json::json!([20, 20]), "{k:?}");
        assert_eq!(r["samples"], 40, "{k:?}");
        assert_eq!(r["gate"], "pass", "{k:?}");
    }
    // The store holds the same rows.
    let (_, stored) = stored(&db).unwrap();
    assert_eq!(stored, want);
    // Exports and the report carry every subject.
    for (format, needle) in [("csv", "ML-KEM-768,pqclean,avx2"), ("markdown", "| X25519 |")] {
        let o = cryptoscope()
            .args(["export", "latest", "--format", format, "--db", &db])
            .output()
            .unwrap();
        assert!(o.status.success(), "{format}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(needle), "{format}: {text}");
        assert_eq!(text.matches("SHA3-256").count(), 2, "{format}: {text}");
    }
    let html = tmp.path().join("report.html");
    let o = cryptoscope()
        .args(["report", "latest", "--db", &db, "--out"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    for s in ["pqclean", "X25519", "rustcrypto", "<svg"] {
        assert!(page.contains(s), "the report lacks {s}");
    }
}

#[test]
fn a_missing_or_broken_recording_is_a_one_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db").display().to_string();
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"worker\": 1}\n").unwrap();
    for c in [tmp.path().join("absent.jsonl"), bad] {
        let o = replay(tmp.path(), &c, RUN, &db, None);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("CRYPTOSCOPE_REPLAY="), "{err}");
    }
    // A call the recording does not hold fails that subject, saying so.
    let o = replay(
        tmp.path(),
        &cassette(),
        &[
            "run",
            "--alg",
            "ML-KEM-512",
            "--provider",
            "pqclean",
            "--impl",
            "clean",
            "--quick",
            "--quiet",
        ],
        &db,
        None,
    );
    assert_ne!(o.status.code(), Some(0));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("no recorded exchange"), "{text}");
}

/// A recording with every sample of `subject` multiplied by `factor`.
fn slowed(from: &Path, to: &Path, subject: &str, factor: f64) {
    let mut out = String::new();
    for mut x in exchanges(from) {
        for e in x["events"].as_array_mut().unwrap() {
            if e["type"] == "measured" && e["subject"] == subject {
                for field in ["cycles", "ns"] {
                    for v in e["samples"][field].as_array_mut().unwrap() {
                        *v = (v.as_f64().unwrap() * factor).into();
                    }
                }
            }
        }
        out.push_str(&x.to_string());
        out.push('\n');
    }
    std::fs::write(to, out).unwrap();
}

#[test]
fn a_slowed_subject_is_called_slower_and_nothing_else_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db").display().to_string();
    let slow = tmp.path().join("slow.jsonl");
    slowed(&cassette(), &slow, "ML-KEM-768/pqclean/clean", 2.0);
    let mut ids = Vec::new();
    for c in [cassette(), slow] {
        let o = replay(tmp.path(), &c, RUN, &db, None);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        ids.push(stored(&db).unwrap().0);
    }
    let o = cryptoscope()
        .args(["compare", &ids[0], &ids[1], "--db", &db])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("3 slower, 0 faster, 14 no significant change"), "{text}");
    for line in text
        .lines()
        .filter(|l| l.contains("slower") && l.contains("ML-KEM-768"))
    {
        assert!(line.contains("pqclean") && line.contains("clean"), "{line}");
    }
}

/// Killed at exact points (the k-th measure call of each attempt), resumed each time: what
/// was stored stays as it was, nothing is stored twice, and the end is exactly the
/// uninterrupted run.
fn kill_and_resume(db: &str, tmp: &Path) {
    let full = {
        let other = tmp.join("full.db").display().to_string();
        let o = replay(tmp, &cassette(), RUN, &other, None);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        stored(&other).unwrap().1
    };
    let resume: &[&str] = &["run", "--resume", "latest", "--quiet"];
    let mut seen = Rows::new();
    let mut run_id: Option<String> = None;
    // 12 measure calls in the whole run (6 subjects, 2 rounds): killed at the 3rd (round
    // one: nothing stored), the 9th (three subjects stored), then on the resumes at their
    // 2nd and 1st calls.
    for (attempt, k) in [3, 9, 2, 1].into_iter().enumerate() {
        let args = if run_id.is_some() { resume } else { RUN };
        let o = replay(tmp, &cassette(), args, db, Some(k));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(o.status.signal(), Some(9), "attempt {attempt} was not killed: {o:?}");
        let Some((id, rows)) = stored(db) else {
            assert_eq!(attempt, 0, "attempt {attempt}: the run is gone");
            // Killed before the run was recorded: the next attempt starts it again.
            continue;
        };
        if let Some(prev) = &run_id {
            assert_eq!(&id, prev, "a resume continues the same run");
        }
        run_id = Some(id);
        // A complete row (both visits) stays as it was; a row of the first visit alone
        // keeps it in front and gets the second merged in (the resume continues from the
        // next visit).
        for (key, ns) in &seen {
            let now = rows.get(key).map(|r| &r[..ns.len().min(r.len())]);
            assert_eq!(now, Some(&ns[..]), "attempt {attempt}: {key:?} lost or changed");
        }
        for (key, ns) in &rows {
            let whole = &full[key];
            assert!(
                [20, 40].contains(&ns.len()) && ns[..] == whole[..ns.len()],
                "attempt {attempt}: {key:?} is not whole visits of the recording"
            );
        }
        seen = rows;
    }
    let complete = seen.values().filter(|ns| ns.len() == 40).count();
    assert!(
        complete > 0 && complete < full.len(),
        "the kills came mid-run: {complete} complete rows"
    );
    let o = replay(tmp, &cassette(), resume, db, None);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stored(db).unwrap().1, full, "the resumed run is the uninterrupted one");
    let o = cryptoscope().args(["runs", "--db", db]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("complete"));
    let o = replay(tmp, &cassette(), resume, db, None);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to resume"));
}

#[test]
fn killed_at_exact_points_and_resumed_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    kill_and_resume(&tmp.path().join("resume.db").display().to_string(), tmp.path());
}

#[test]
fn the_same_with_postgresql() {
    let _serial = serial();
    let Some(server) = pg::or_skip(pg::PgServer::start()) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    kill_and_resume(&server.url, tmp.path());
}
