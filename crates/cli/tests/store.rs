//! The results store through the CLI: runs are committed, listed, shown, exported and
//! compared; bad references and unsupported databases are usage errors.

mod common;

use common::*;

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn runs_are_stored_listed_shown_exported_and_compared() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("results.db");
    let db = db.to_str().unwrap();
    let mut ids = Vec::new();
    for i in 0..2 {
        let json = tmp.path().join(format!("run{i}.json"));
        let o = cryptoscope()
            .args([
                "run",
                "--quick",
                "--quiet",
                "--alg",
                "X25519",
                "--provider",
                "openssl",
                "--db",
                db,
                "--json",
            ])
            .arg(&json)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        assert!(out(&o).contains(&format!("Store:   {db}")), "{}", out(&o));
        let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        ids.push(run["run_id"].as_str().unwrap().to_string());
    }
    let o = cryptoscope().args(["runs", "--db", db]).output().unwrap();
    assert!(o.status.success());
    for id in &ids {
        assert!(out(&o).contains(id.as_str()), "{}", out(&o));
    }
    assert!(out(&o).contains("2 runs in"));

    let o = cryptoscope().args(["show", "latest", "--db", db]).output().unwrap();
    assert!(
        o.status.success() && out(&o).contains(&ids[1]) && out(&o).contains("X25519"),
        "{}",
        out(&o)
    );
    // Question 5 against the earlier run: every one of its four operations has a verdict
    // (which one is the machine's business; their count is not).
    let o = cryptoscope()
        .args(["show", &ids[1], "--against", &ids[0], "--db", db])
        .output()
        .unwrap();
    let text = out(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    let at = text
        .find(&format!("Against run {}: ", ids[0]))
        .unwrap_or_else(|| panic!("{text}"));
    let counts: Vec<u64> = text[at..]
        .split(", ")
        .take(4)
        .map(|p| {
            p.rsplit(": ")
                .next()
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(counts.iter().sum::<u64>(), 4, "{text}");

    // The exported JSON equals the file the run wrote (same contract, from the database).
    let o = cryptoscope()
        .args(["export", &ids[0], "--format", "json", "--db", db])
        .output()
        .unwrap();
    let exported: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("run0.json")).unwrap()).unwrap();
    assert_eq!(exported["results"], written["results"]);
    assert_eq!(exported["environment"], written["environment"]);
    for (format, needle) in [
        ("csv", "algorithm,provider"),
        ("markdown", "| X25519 | openssl |"),
        ("github-benchmark", "\"unit\": \"ns\""),
    ] {
        let o = cryptoscope()
            .args(["export", "latest", "--format", format, "--db", db])
            .output()
            .unwrap();
        assert!(o.status.success() && out(&o).contains(needle), "{format}: {}", out(&o));
    }

    let o = cryptoscope()
        .args(["compare", &ids[0], &ids[1], "--db", db])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(
        text.contains("(baseline)") && text.contains("Test: bootstrap 95% CI of the ratio of medians"),
        "{text}"
    );
    assert!(text.contains("X25519/openssl/default"), "{text}");

    for args in [
        vec!["show", "nosuchrun", "--db", db],
        vec!["compare", ids[0].as_str(), "nosuchrun", "--db", db],
        vec!["export", "latest", "--format", "pdf", "--db", db],
        vec!["runs", "--db", "/nonexistent/dir/x.db"],
    ] {
        let o = cryptoscope().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
    }
}

#[test]
fn shards_split_the_selection_and_reassemble_as_a_group() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("shards.db");
    let mut seen: Vec<String> = Vec::new();
    for k in 1..=3 {
        let json = tmp.path().join(format!("s{k}.json"));
        let o = cryptoscope()
            .args([
                "run",
                "--quick",
                "--quiet",
                "--alg",
                "ML-KEM-768",
                "--alg",
                "X25519",
                "--shard",
                &format!("{k}/3"),
                "--group",
                "job7",
                "--db",
            ])
            .arg(&db)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for r in run["results"].as_array().unwrap() {
            let key = format!(
                "{} {}",
                r["subject"].as_str().unwrap(),
                r["operation"].as_str().unwrap()
            );
            assert!(!seen.contains(&key), "{key} measured by two shards");
            seen.push(key);
        }
    }
    // ML-KEM-768: 5 subjects x 3 operations; X25519: 3 subjects x 4 operations.
    assert_eq!(seen.len(), 27);
    let o = cryptoscope()
        .args(["export", "group:job7", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let merged: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        merged["results"].as_array().unwrap().len(),
        seen.len(),
        "the group holds what its shards measured"
    );
    let o = cryptoscope()
        .args(["report", "group:job7", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(tmp.path().join("g.html"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = cryptoscope()
        .args(["run", "--quick", "--shard", "0/3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `run --shard K/N` into a group again: a complete shard is not measured again; another
/// command line is refused before anything is written; `group` counts the shards.
#[test]
fn a_group_is_one_commands_shards_counted_by_group() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("g.db");
    let db = db.to_str().unwrap();
    let shard = |k: &str, alg: &str| {
        cryptoscope()
            .args([
                "run", "--quick", "--quiet", "--alg", alg, "--shard", k, "--group", "g", "--db", db,
            ])
            .arg("--json")
            .arg(tmp.path().join(format!("{}.json", k.replace('/', "-"))))
            .output()
            .unwrap()
    };
    let group = |more: &[&str]| {
        cryptoscope()
            .args(["group", "g", "--db", db])
            .args(more)
            .output()
            .unwrap()
    };
    assert_eq!(shard("1/2", "X25519").status.code(), Some(0));
    let o = group(&[]);
    assert_eq!(o.status.code(), Some(1), "shard 2 is missing: {}", out(&o));
    assert!(out(&o).contains("1 of 2 complete; missing: 2"), "{}", out(&o));
    // The same shard again: complete, nothing measured.
    let o = shard("1/2", "X25519");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        out(&o).starts_with("shard 1/2 of group g is complete (run "),
        "{}",
        out(&o)
    );
    // Another command line: refused, one line, nothing written.
    let o = shard("2/2", "ML-KEM-512");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(err(&o).trim().lines().count(), 1, "{}", err(&o));
    assert!(err(&o).starts_with("error: group g holds run "), "{}", err(&o));
    let o = cryptoscope().args(["runs", "--db", db]).output().unwrap();
    assert!(out(&o).contains("1 runs in"), "{}", out(&o));
    assert_eq!(shard("2/2", "X25519").status.code(), Some(0));
    let o = group(&["--shards", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).contains("2 of 2 complete\n"), "{}", out(&o));
    for (args, says) in [
        (vec!["group", "nope", "--db", db], "error: no run in group nope"),
        (
            vec!["group", "g", "--shards", "3", "--db", db],
            "error: --shards 3: the group's runs are shards of 2",
        ),
    ] {
        let o = cryptoscope().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(err(&o).starts_with(says), "{args:?}: {}", err(&o));
    }

    // Shard 2 moved to another CPU model: the group is then two machines, never merged.
    let c = rusqlite::Connection::open(db).unwrap();
    let id: String = c
        .query_row("SELECT id FROM runs WHERE command LIKE '%\"2/2\"%'", [], |r| r.get(0))
        .unwrap();
    c.execute(
        "INSERT INTO environments (hostname, cpu_model, json)
         SELECT 'node-b', 'Test CPU B', replace(json, cpu_model, 'Test CPU B') FROM environments
         WHERE id = (SELECT environment_id FROM runs WHERE id = ?1)",
        [&id],
    )
    .unwrap();
    c.execute(
        "UPDATE runs SET environment_id = last_insert_rowid() WHERE id = ?1",
        [&id],
    )
    .unwrap();
    drop(c);
    let o = cryptoscope().args(["show", "group:g", "--db", db]).output().unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("run group:g@Test CPU B"), "{}", out(&o));
    assert_eq!(
        out(&o).matches("\nmachine ").count() + usize::from(out(&o).starts_with("machine ")),
        2
    );
    let o = cryptoscope()
        .args(["export", "group:g", "--format", "json", "--db", db])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("ran on several machine types"), "{}", err(&o));
    let o = cryptoscope()
        .args(["export", "group:g@node-b", "--format", "json", "--db", db])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let part: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(part["environment"]["cpu_model"], "Test CPU B");
    let o = cryptoscope()
        .args(["compare", "group:g", "group:g", "--db", db])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        out(&o).matches("On ").count(),
        2,
        "a comparison per machine type: {}",
        out(&o)
    );
    let html = tmp.path().join("g.html");
    let o = cryptoscope()
        .args(["report", "group:g", "--db", db, "--out"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert!(std::fs::read_to_string(&html).unwrap().contains("Test CPU B"));
    let o = cryptoscope().args(["group", "g", "--db", db]).output().unwrap();
    assert!(out(&o).contains("2 machine types, reported apart"), "{}", out(&o));
}
