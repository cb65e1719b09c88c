//! `run --resume` end to end: a run killed with SIGKILL, then resumed, loses nothing it
//! stored, never stores a half-written result, never measures a stored result again, and
//! ends complete with every result exactly once. (Many kills at exact points, on SQLite and
//! PostgreSQL: tests/replay.rs.)

mod common;

use common::*;

use serde_json::Value;
use std::process::{Command, Stdio};

/// Subjects of the suite the test runs (`--suite hash`, every provider).
const HASH_SUBJECTS: usize = 14;

/// End to end with real workers: the run is killed (SIGKILL) as soon as it says it stored
/// its first subject, then resumed to the end. Where exactly the kill lands depends on the
/// machine, so only what holds wherever it lands is asserted; kills at exact points, many
/// times over, are the replay tier's (tests/replay.rs).
#[test]
fn killed_after_its_first_subject_and_resumed_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("resume.db").display().to_string();
    let args = |resume: bool| -> Vec<String> {
        let mut v: Vec<String> = if resume {
            vec!["run".into(), "--resume".into(), "latest".into()]
        } else {
            [
                "run",
                "--provider",
                "rustcrypto",
                "--suite",
                "hash",
                "--quick",
                "--rounds",
                "1",
                "--lengths",
                "64,1024",
                "--samples",
                "40",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        };
        v.extend([
            "--db".into(),
            db.clone(),
            "--json".into(),
            tmp.path().join("run.json").display().to_string(),
        ]);
        v
    };
    // Every process of this run carries the mark (workers inherit it): none may outlive it.
    let mark = format!("resume-test-{}", std::process::id());
    let mut child = Command::new(bin())
        .args(args(false))
        .env("CRYPTOSCOPE_VECTORS", vectors())
        .env("CRYPTOSCOPE_TEST_MARK", &mark)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Readiness from what the run says: its first `[k/n] measure S: ...` line comes after
    // S's results are stored. Read until then, kill, and drain the rest.
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let said = lines.by_ref().map_while(Result::ok).find(|l| l.contains("] measure "));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(said.is_some(), "the run ended without measuring: {status}");
    lines.for_each(drop);
    // Its long-lived workers end with it: standard input closed, or their next write fails.
    // Polled; 30 s is a bound, not a wait.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !marked(&mark).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(marked(&mark), Vec::<u32>::new(), "workers outlived the killed run");
    let (id, before) = stored(&db).expect("the first subject was stored before the kill");
    assert!(!before.is_empty());
    let o = Command::new(bin())
        .args(args(true))
        .env("CRYPTOSCOPE_VECTORS", vectors())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let (id2, rows) = stored(&db).unwrap();
    assert_eq!(id, id2, "a resume continues the same run");
    assert_eq!(
        rows.len(),
        HASH_SUBJECTS * 2,
        "every hash subject, both lengths, once: {:?}",
        rows.keys()
    );
    for (k, ns) in &before {
        assert_eq!(rows.get(k), Some(ns), "{k:?} was measured again or changed");
    }
    assert!(rows.values().all(|ns| !ns.is_empty()));
    let o = cryptoscope().args(["runs", "--db", &db]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("complete"));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(tmp.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(file["results"].as_array().unwrap().len(), HASH_SUBJECTS * 2);
}

/// The processes whose environment holds `CRYPTOSCOPE_TEST_MARK=mark`.
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("CRYPTOSCOPE_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/environ"))
                        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The subjects whose every operation (`ops` of them) is stored with the same number of
/// samples: stopped between two visits. One stopped while its visit's rows were being
/// stored (one transaction a row) starts again when resumed, by design.
fn between_visits(rows: &Rows, ops: usize) -> std::collections::BTreeSet<String> {
    let mut counts: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for ((subject, _), ns) in rows {
        counts.entry(subject).or_default().push(ns.len());
    }
    counts
        .into_iter()
        .filter(|(_, n)| n.len() == ops && n.iter().all(|&x| x == n[0]))
        .map(|(s, _)| s.to_string())
        .collect()
}

/// A multi-round run killed between two visits continues from its next visit: the samples
/// each row stored are kept, in front, and every row ends with exactly the samples asked for
/// (`--samples 600` over 3 rounds: 200 a visit), none measured twice. Where the kill lands
/// depends on the machine: it is sent once a subject's visit is stored whole (polled), and
/// what is asserted holds wherever it lands after that; a subject caught while its rows
/// were being stored is measured again from the start, as the design says.
#[test]
fn killed_between_rounds_continues_from_the_next_visit() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("rounds.db").display().to_string();
    let json = tmp.path().join("run.json").display().to_string();
    let mark = format!("rounds-test-{}", std::process::id());
    let mut child = Command::new(bin())
        .args([
            "run",
            "--alg",
            "ML-KEM-512",
            "--quick",
            "--rounds",
            "3",
            "--samples",
            "600",
        ])
        .args(["--db", &db, "--json", &json])
        .env("CRYPTOSCOPE_VECTORS", vectors())
        .env("CRYPTOSCOPE_TEST_MARK", &mark)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once its first visit is stored (polled), long before its last.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while stored(&db).is_none_or(|(_, rows)| between_visits(&rows, 3).is_empty()) {
        assert!(std::time::Instant::now() < deadline, "no visit stored whole in 120 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !marked(&mark).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (id, before) = stored(&db).unwrap();
    let o = cryptoscope().args(["runs", "--db", &db]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("incomplete"),
        "the run ended before the kill: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        before.values().any(|ns| ns.len() < 600),
        "a row was stored between visits"
    );

    let o = cryptoscope()
        .args(["run", "--resume", "latest", "--db", &db, "--json", &json])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let (id2, after) = stored(&db).unwrap();
    assert_eq!(id, id2);
    // ML-KEM-512: 5 implementations x 3 operations.
    assert_eq!(after.len(), 15, "{:?}", after.keys());
    for (k, ns) in &after {
        assert_eq!(ns.len(), 600, "{k:?}: {} samples, not 600", ns.len());
    }
    let whole = between_visits(&before, 3);
    assert!(
        !whole.is_empty(),
        "no subject stopped between visits: {:?}",
        before.keys()
    );
    for (k, ns) in before.iter().filter(|(k, _)| whole.contains(&k.0)) {
        assert!(
            after[k].starts_with(ns),
            "{k:?}: the {} samples stored before the kill are gone",
            ns.len()
        );
    }
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for r in file["results"].as_array().unwrap() {
        assert_eq!(r["visits"], serde_json::json!([200, 200, 200]), "{}", r["subject"]);
    }
}
