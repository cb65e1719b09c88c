//! `run --resume`: a run killed with SIGKILL at random moments, many times, then resumed
//! each time, loses nothing it stored, never stores a half-written result, never measures a
//! stored result again, and ends complete with every result exactly once.

mod common;

use common::*;

#[allow(dead_code)]
#[path = "common/pg.rs"]
mod pg;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The run's rows, by (subject, operation): the raw nanosecond samples (empty for rows
/// without numbers), after checking each row is whole.
type Rows = BTreeMap<(String, String), Vec<f64>>;

/// Subjects of the suite the test runs (`--suite hash`, every provider).
const HASH_SUBJECTS: usize = 14;

fn stored(db: &str) -> Option<(String, Rows)> {
    if !db.starts_with("postgres") {
        let conn = rusqlite::Connection::open(db).ok()?;
        let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok", "the database is corrupt");
    }
    let o = cryptoscope()
        .args(["export", "latest", "--format", "json", "--db", db])
        .output()
        .unwrap();
    if !o.status.success() {
        // Killed before the run was recorded at all.
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("no run"), "{err}");
        return None;
    }
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut rows = BTreeMap::new();
    for r in run["results"].as_array().unwrap() {
        let ns: Vec<f64> = r["raw_ns"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect())
            .unwrap_or_default();
        if let Some(m) = r["median_ns"].as_f64() {
            // A whole row: its samples are all there and its statistics are theirs.
            assert_eq!(r["samples"].as_u64().unwrap() as usize, ns.len(), "{r}");
            let mut s = ns.clone();
            s.sort_by(f64::total_cmp);
            let n = s.len();
            let median = if n % 2 == 1 {
                s[n / 2]
            } else {
                (s[n / 2 - 1] + s[n / 2]) / 2.0
            };
            assert!(
                (median - m).abs() <= 1e-6 * m.abs().max(1.0),
                "median {m} vs samples' {median}: {r}"
            );
        } else {
            assert_ne!(r["gate"], "pass", "a passing row without a number: {r}");
        }
        let key = (
            r["subject"].as_str().unwrap().to_string(),
            r["operation"].as_str().unwrap().to_string(),
        );
        assert!(rows.insert(key, ns).is_none(), "a result stored twice: {r}");
    }
    Some((run["run_id"].as_str().unwrap().to_string(), rows))
}

#[test]
fn killed_at_random_moments_and_resumed_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    kill_and_resume(&tmp.path().join("resume.db").display().to_string(), tmp.path());
}

#[test]
fn the_same_with_postgresql() {
    let Some(server) = pg::or_skip(pg::PgServer::start()) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    kill_and_resume(&server.url, tmp.path());
}

fn kill_and_resume(db: &str, tmp: &std::path::Path) {
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
        v.extend(["--quiet".into(), "--db".into(), db.to_string()]);
        v.extend(["--json".into(), tmp.join("run.json").display().to_string()]);
        v
    };
    // Kill moments from a seed printed for reproduction.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("kill moments seed: {seed}");
    let mut x = seed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut seen: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut run_id: Option<String> = None;
    let mut kills = 0;
    for attempt in 0..16 {
        let started = run_id.is_some();
        let mut child = Command::new(bin())
            .args(args(started).into_iter().filter(|a| a != "--quiet"))
            .env("CRYPTOSCOPE_VECTORS", vectors())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The run's progress lines (`[k/n] measure S: ...` after S's results are stored),
        // read on their own thread so the child never blocks on a full pipe.
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // The kill moment: one attempt in five at a random time in the first 1.5 s (before
        // the store exists, while gating); the others a random 0-120 ms after the m-th (1-3)
        // subject's results were stored (mid-measurement of the next one).
        let m = 1 + (next() % 3) as usize;
        let (deadline, after_measured) = if next() % 5 == 0 {
            (Some(Duration::from_millis(100 + next() % 1_400)), None)
        } else {
            (None, Some((m, Duration::from_millis(next() % 120))))
        };
        // Whatever the machine's speed, the kill comes at the latest on the (m+1)-th subject
        // stored, and while the run has room for it, two subjects before its end: each
        // attempt but the last is killed, and 14 subjects give at least three kills (the
        // random moment above decides only where inside that window).
        let subjects_stored = seen
            .keys()
            .map(|(s, _)| s)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let latest = (m + 1).min(HASH_SUBJECTS.saturating_sub(subjects_stored + 2));
        let t0 = Instant::now();
        let mut measured = 0;
        let mut last = String::new();
        let mut armed: Option<Instant> = deadline.map(|d| t0 + d);
        let mut finished = false;
        loop {
            if child.try_wait().unwrap().is_some() {
                finished = true;
                break;
            }
            while let Ok(line) = rx.try_recv() {
                last = line.clone();
                if line.contains("] measure ") {
                    measured += 1;
                    if let Some((m, delay)) = after_measured {
                        if measured == m {
                            armed = Some(Instant::now() + delay);
                        }
                    }
                    if latest > 0 && measured >= latest {
                        armed = Some(Instant::now());
                    }
                }
            }
            if armed.is_some_and(|at| Instant::now() >= at) {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(300), "attempt {attempt} hangs");
            std::thread::sleep(Duration::from_millis(5));
        }
        if !finished {
            child.kill().unwrap(); // SIGKILL
        }
        let status = child.wait().unwrap();
        // A run that ended just before the signal counts as finished, not as a kill.
        let finished = finished || status.success();
        kills += usize::from(!finished);
        reader.join().unwrap();
        while let Ok(line) = rx.try_recv() {
            last = line;
        }
        let now = stored(db);
        eprintln!(
            "attempt {attempt}: {} after {:.2} s ({status}; last said {last:?}), {measured} subjects measured, {} results stored",
            if finished { "finished" } else { "killed" },
            t0.elapsed().as_secs_f64(),
            now.as_ref().map_or(0, |(_, r)| r.len())
        );
        let Some((id, rows)) = now else { continue };
        if let Some(prev) = &run_id {
            assert_eq!(&id, prev, "a resume must continue the same run");
        }
        run_id = Some(id);
        for (k, ns) in &seen {
            let now = rows
                .get(k)
                .unwrap_or_else(|| panic!("attempt {attempt}: {k:?} was stored and is gone"));
            assert_eq!(now, ns, "attempt {attempt}: {k:?} was measured again or changed");
        }
        seen = rows;
        if finished {
            break;
        }
    }
    eprintln!("{kills} kills; {} results stored before the last resume", seen.len());
    assert!(kills >= 3, "too few kills to test anything ({kills})");
    assert!(!seen.is_empty(), "no attempt got as far as storing a result");
    // The last resume runs to the end.
    let o = Command::new(bin())
        .args(args(run_id.is_some()))
        .env("CRYPTOSCOPE_VECTORS", vectors())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, rows) = stored(db).unwrap();
    assert_eq!(
        rows.len(),
        HASH_SUBJECTS * 2,
        "every hash subject, both lengths, once: {:?}",
        rows.keys()
    );
    for (k, ns) in &seen {
        assert_eq!(rows.get(k), Some(ns), "{k:?} changed after the final resume");
    }
    assert!(rows.values().all(|ns| !ns.is_empty()));
    // The run file and the store agree, and the run is complete.
    let o = cryptoscope().args(["runs", "--db", db]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("complete"), "{text}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(tmp.join("run.json")).unwrap()).unwrap();
    assert_eq!(file["results"].as_array().unwrap().len(), 28);
    // Resuming a complete run does nothing.
    let o = cryptoscope()
        .args(["run", "--resume", "latest", "--db", db])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to resume"));
}

#[test]
fn resuming_what_does_not_exist_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = cryptoscope()
        .args(["run", "--resume", "20990101T000000Z-dead", "--db"])
        .arg(tmp.path().join("empty.db"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
