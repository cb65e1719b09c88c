//! The results store in-process, on runs replayed from the recording: runs are committed,
//! listed, shown, exported and compared; shards split a selection and a group reassembles
//! them, per machine type; bad references and unreachable databases are input errors.

use crate::common::{all, cassette, db, reading, run, X25519};
use cryptoscope_engine::groups::cmd_group;
use cryptoscope_engine::stored::{cmd_compare, cmd_export, cmd_report, cmd_runs, cmd_show, CompareArgs};
use cryptoscope_engine::ui::UsageError;
use serde_json::Value;
use std::path::Path;

/// A run of `words` replaying the recording into `db_url`, its results file at `json`: the
/// run's id.
fn replayed(words: &[&str], db_url: &str, json: &Path) -> String {
    let (code, out) = run(&cassette(), words, db_url, json);
    assert_eq!(code, 0, "{}{}", out.stdout(), out.stderr());
    assert!(out.stdout().contains(&format!("Store:   {db_url}")), "{}", out.stdout());
    let file: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    file["run_id"].as_str().unwrap().to_string()
}

/// A command's output, which must succeed.
fn ok(r: anyhow::Result<i32>, out: &cryptoscope_engine::context::Captured) -> String {
    match r {
        Ok(0) => out.stdout(),
        other => panic!(
            "{:?}: {}{}",
            other.map_err(|e| e.to_string()),
            out.stdout(),
            out.stderr()
        ),
    }
}

/// An input error's message (exit status 2 at the CLI).
fn refused(r: anyhow::Result<i32>) -> String {
    let e = r.expect_err("refused");
    assert!(e.is::<UsageError>(), "{e:#}");
    e.to_string()
}

fn compare_args(words: &[&str]) -> CompareArgs {
    crate::common::parse(words)
}

#[test]
fn runs_are_stored_listed_shown_exported_and_compared() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("results.db").display().to_string();
    let ids: Vec<String> = (0..2)
        .map(|i| replayed(X25519, &db_url, &tmp.path().join(format!("run{i}.json"))))
        .collect();
    let (ctx, out) = reading();
    let text = ok(cmd_runs(&ctx, None, &db(&db_url)), &out);
    for id in &ids {
        assert!(text.contains(id.as_str()), "{text}");
    }
    assert!(text.contains("2 runs in"), "{text}");

    let (ctx, out) = reading();
    let text = ok(cmd_show(&ctx, "latest", None, None, &all(), &db(&db_url)), &out);
    assert!(text.contains(&ids[1]) && text.contains("X25519"), "{text}");
    // Question 5 against the earlier run: the same samples, so every one of its four
    // operations is "no significant change".
    let (ctx, out) = reading();
    let text = ok(cmd_show(&ctx, &ids[1], None, Some(&ids[0]), &all(), &db(&db_url)), &out);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = text
        .find(&format!("Against run {}: ", ids[0]))
        .unwrap_or_else(|| panic!("{text}"));
    let counts: Vec<(u64, String)> = text[at..]
        .split(", ")
        .take(4)
        .map(|p| {
            let p = p.rsplit(": ").next().unwrap();
            let (n, what) = p.split_once(' ').unwrap();
            (n.parse().unwrap(), what.to_string())
        })
        .collect();
    assert_eq!(counts.iter().map(|c| c.0).sum::<u64>(), 4, "{text}");
    assert!(
        counts
            .iter()
            .any(|(n, what)| *n == 4 && what.starts_with("no significant change")),
        "identical samples: {text}"
    );

    // The exported JSON equals the file the run wrote (same contract, from the database).
    let (ctx, out) = reading();
    let exported: Value =
        serde_json::from_str(&ok(cmd_export(&ctx, &ids[0], "json", None, &all(), &db(&db_url)), &out)).unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(tmp.path().join("run0.json")).unwrap()).unwrap();
    assert_eq!(exported["results"], written["results"]);
    assert_eq!(exported["environment"], written["environment"]);
    for (format, needle) in [
        ("csv", "algorithm,provider"),
        ("markdown", "| X25519 | rustcrypto |"),
        ("github-benchmark", "\"unit\": \"ns\""),
    ] {
        let (ctx, out) = reading();
        let text = ok(cmd_export(&ctx, "latest", format, None, &all(), &db(&db_url)), &out);
        assert!(text.contains(needle), "{format}: {text}");
    }

    let (ctx, out) = reading();
    let text = ok(
        cmd_compare(&ctx, &compare_args(&[&ids[0], &ids[1], "--db", &db_url])),
        &out,
    );
    assert!(
        text.contains("(baseline)") && text.contains("Test: bootstrap 95% CI of the ratio of medians"),
        "{text}"
    );
    assert!(text.contains("X25519/rustcrypto/default"), "{text}");

    let (ctx, _) = reading();
    let d = db(&db_url);
    assert!(refused(cmd_show(&ctx, "nosuchrun", None, None, &all(), &d)).contains("nosuchrun"));
    assert!(!refused(cmd_compare(
        &ctx,
        &compare_args(&[&ids[0], "nosuchrun", "--db", &db_url])
    ))
    .is_empty());
    assert!(refused(cmd_export(&ctx, "latest", "pdf", None, &all(), &d)).contains("pdf"));
    let missing = refused(cmd_runs(&ctx, None, &db("/nonexistent/dir/x.db")));
    assert!(missing.contains("/nonexistent/dir/x.db"), "{missing}");
}

/// `run --shard K/3 --group job7` over the recording's six subjects.
fn shard_words(k: &str) -> Vec<String> {
    [
        "run",
        "--quick",
        "--quiet",
        "--rounds",
        "2",
        "--samples",
        "40",
        "--alg",
        "SHA-256,SHA3-256,ML-KEM-768,X25519",
        "--provider",
        "rustcrypto,pqclean",
        "--lengths",
        "64,1024",
        "--shard",
        k,
        "--group",
        "job7",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn shards_split_the_selection_and_reassemble_as_a_group() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("shards.db").display().to_string();
    let mut seen: Vec<String> = Vec::new();
    for k in 1..=3 {
        let words = shard_words(&format!("{k}/3"));
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let json = tmp.path().join(format!("s{k}.json"));
        replayed(&words, &db_url, &json);
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for r in file["results"].as_array().unwrap() {
            let key = format!(
                "{} {}",
                r["subject"].as_str().unwrap(),
                r["operation"].as_str().unwrap()
            );
            assert!(!seen.contains(&key), "{key} measured by two shards");
            seen.push(key);
        }
    }
    // ML-KEM-768: 3 subjects x 3 operations; X25519's 4; two hashes x two lengths.
    assert_eq!(seen.len(), 17);
    let (ctx, out) = reading();
    let merged: Value = serde_json::from_str(&ok(
        cmd_export(&ctx, "group:job7", "json", None, &all(), &db(&db_url)),
        &out,
    ))
    .unwrap();
    assert_eq!(
        merged["results"].as_array().unwrap().len(),
        seen.len(),
        "the group holds what its shards measured"
    );
    let (ctx, out) = reading();
    let html = tmp.path().join("g.html");
    ok(
        cmd_report(&ctx, &["group:job7".into()], Some(&html), &db(&db_url)),
        &out,
    );
    assert!(std::fs::read_to_string(&html).unwrap().contains("ML-KEM-768"));
    // Shard 0 of 3 does not exist.
    let args: cryptoscope_engine::args::RunArgs = crate::common::parse(&["--quick", "--shard", "0/3", "--db", &db_url]);
    let (ctx, _) = crate::common::replaying(&cassette(), None, &["run", "--quick", "--shard", "0/3"]);
    assert!(refused(cryptoscope_engine::run::cmd_run(&args, &ctx)).contains("0/3"));
}

/// `run --shard K/N` into a group again: a complete shard is not measured again; another
/// command line is refused before anything is written; `group` counts the shards; a shard
/// on another machine type is kept apart.
#[test]
fn a_group_is_one_commands_shards_counted_by_group() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("g.db").display().to_string();
    let shard = |k: &str, alg: &str| {
        let words = [
            "run",
            "--quick",
            "--quiet",
            "--rounds",
            "2",
            "--alg",
            alg,
            "--provider",
            "rustcrypto",
            "--shard",
            k,
            "--group",
            "g",
        ];
        let json = tmp.path().join(format!("{}.json", k.replace('/', "-")));
        let mut all_words: Vec<&str> = words.to_vec();
        let json_s = json.display().to_string();
        all_words.extend(["--db", &db_url, "--json", &json_s]);
        let (ctx, out) = crate::common::replaying(&cassette(), None, &all_words);
        let args: cryptoscope_engine::args::RunArgs = crate::common::parse(&all_words[1..]);
        let r = cryptoscope_engine::run::cmd_run(&args, &ctx);
        assert_eq!(ctx.workers.started(), 0);
        (r, out)
    };
    let group = |shards: Option<usize>| {
        let (ctx, out) = reading();
        (cmd_group(&ctx, "g", shards, &db(&db_url)), out)
    };
    assert_eq!(shard("1/2", "X25519,SHA-256").0.unwrap(), 0);
    let (r, out) = group(None);
    assert_eq!(r.unwrap(), 1, "shard 2 is missing: {}", out.stdout());
    assert!(out.stdout().contains("1 of 2 complete; missing: 2"), "{}", out.stdout());
    // The same shard again: complete, nothing measured.
    let (r, out) = shard("1/2", "X25519,SHA-256");
    assert_eq!(r.unwrap(), 0, "{}", out.stderr());
    assert!(
        out.stdout().starts_with("shard 1/2 of group g is complete (run "),
        "{}",
        out.stdout()
    );
    // Another command line: refused, one line, nothing written.
    let e = refused(shard("2/2", "ML-KEM-512").0);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.starts_with("group g holds run "), "{e}");
    let (ctx, out) = reading();
    assert!(ok(cmd_runs(&ctx, None, &db(&db_url)), &out).contains("1 runs in"));
    assert_eq!(shard("2/2", "X25519,SHA-256").0.unwrap(), 0);
    let (r, out) = group(Some(2));
    assert_eq!(r.unwrap(), 0, "{}", out.stdout());
    assert!(out.stdout().contains("2 of 2 complete\n"), "{}", out.stdout());
    let (ctx, _) = reading();
    assert!(refused(cmd_group(&ctx, "nope", None, &db(&db_url))).starts_with("no run in group nope"));
    assert!(refused(cmd_group(&ctx, "g", Some(3), &db(&db_url)))
        .starts_with("--shards 3: the group's runs are shards of 2"));

    // Shard 2 moved to another CPU model: the group is then two machines, never merged.
    let c = rusqlite::Connection::open(&db_url).unwrap();
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
    let (ctx, out) = reading();
    let text = ok(cmd_show(&ctx, "group:g", None, None, &all(), &db(&db_url)), &out);
    assert!(text.contains("run group:g@Test CPU B"), "{text}");
    assert_eq!(
        text.matches("\nmachine ").count() + usize::from(text.starts_with("machine ")),
        2
    );
    let (ctx, _) = reading();
    assert!(refused(cmd_export(&ctx, "group:g", "json", None, &all(), &db(&db_url)))
        .contains("ran on several machine types"));
    let (ctx, out) = reading();
    let part: Value = serde_json::from_str(&ok(
        cmd_export(&ctx, "group:g@node-b", "json", None, &all(), &db(&db_url)),
        &out,
    ))
    .unwrap();
    assert_eq!(part["environment"]["cpu_model"], "Test CPU B");
    let (ctx, out) = reading();
    let text = ok(
        cmd_compare(&ctx, &compare_args(&["group:g", "group:g", "--db", &db_url])),
        &out,
    );
    assert_eq!(text.matches("On ").count(), 2, "a comparison per machine type: {text}");
    let html = tmp.path().join("g.html");
    let (ctx, out) = reading();
    ok(cmd_report(&ctx, &["group:g".into()], Some(&html), &db(&db_url)), &out);
    assert!(std::fs::read_to_string(&html).unwrap().contains("Test CPU B"));
    let (ctx, out) = reading();
    cmd_group(&ctx, "g", None, &db(&db_url)).unwrap();
    assert!(
        out.stdout().contains("2 machine types, reported apart"),
        "{}",
        out.stdout()
    );
}
