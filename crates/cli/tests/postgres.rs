//! The PostgreSQL store, for real: a server from Debian's package on loopback, sharded
//! runs written into it by separate processes, reassembled into one group for export,
//! compare and report.

mod common;

use common::*;

#[allow(dead_code)]
#[path = "common/pg.rs"]
mod pg;

#[test]
fn sharded_runs_into_postgresql_reassemble_into_one_report() {
    let server = match pg::PgServer::start() {
        Ok(s) => s,
        Err(why) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "PostgreSQL test cannot run on CI: {why}"
            );
            eprintln!("skipped: {why}");
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    for k in 1..=2 {
        let o = cryptoscope()
            .args([
                "run",
                "--quick",
                "--quiet",
                "--alg",
                "X25519",
                "--alg",
                "ML-KEM-512",
                "--shard",
                &format!("{k}/2"),
                "--group",
                "pgjob",
                "--db",
                &server.url,
                "--json",
            ])
            .arg(tmp.path().join(format!("s{k}.json")))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains("group pgjob"));
    }
    let o = cryptoscope().args(["runs", "--db", &server.url]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 runs in postgresql://cryptoscope@127.0.0.1"));

    // The group holds every (subject, operation) once: ML-KEM-512 5x3 + X25519 3x2.
    let o = cryptoscope()
        .args(["export", "group:pgjob", "--format", "json", "--db", &server.url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = merged["results"].as_array().unwrap();
    assert_eq!(results.len(), 21);
    // What PostgreSQL returns equals what the shards wrote, raw samples included.
    let mut written = Vec::new();
    for k in 1..=2 {
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(format!("s{k}.json"))).unwrap()).unwrap();
        written.extend(run["results"].as_array().unwrap().clone());
    }
    for w in &written {
        let back = results
            .iter()
            .find(|r| r["subject"] == w["subject"] && r["operation"] == w["operation"])
            .unwrap();
        assert_eq!(back, w, "{} {}", w["subject"], w["operation"]);
    }

    let html = tmp.path().join("group.html");
    let o = cryptoscope()
        .args(["report", "group:pgjob", "--db", &server.url, "--out"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("8 of 8 subjects passed"),
        "both shards' subjects in one report"
    );
    let o = cryptoscope()
        .args(["compare", "group:pgjob", "group:pgjob", "--db", &server.url])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 slower, 0 faster, 21 no significant change"));

    // An unreachable server is bad input: exit 2, one line.
    drop(server);
    let o = cryptoscope()
        .args(["runs", "--db", "postgresql://cryptoscope@127.0.0.1:1/postgres"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: cannot open results database postgresql://"));
}
