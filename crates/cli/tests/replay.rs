//! The replay tier through the binary (docs/testing.md): what only a process shows, on the
//! recorded worker exchanges of `crates/engine/tests/fixtures/replay` with no provider
//! started — the recording named by `CRYPTOSCOPE_REPLAY` (a broken one is a one-line error,
//! exit 2) and a real SIGKILL at exact points of a run, resumed, on SQLite and PostgreSQL.
//! Rounds, merging visits, exports, the report and `compare`'s verdicts are checked
//! in-process by `crates/engine/tests/engine/replay.rs`.

mod common;

use common::*;

#[allow(dead_code)]
#[path = "common/pg.rs"]
mod pg;
use std::path::{Path, PathBuf};

fn cassette() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../engine/tests/fixtures/replay/kem-hash.jsonl"
    ))
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

use cryptoscope_testkit::replay::RUN;

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
        cryptoscope_testkit::replay::check_kept(attempt, &seen, &rows, &full);
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
