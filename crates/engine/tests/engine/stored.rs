//! The stored-run commands as people use them, in-process on runs replayed from the
//! recording: runs addressed as `latest~N` or by name, `compare` warning when a run is
//! compared with itself and taking its reference by either flag, `--out -`, filters that
//! narrow like `run` selects, `runs --prune`, `run --json -` and `run --resume` refusing
//! flags it would ignore.

use crate::common::{all, cassette, db, parse, reading, replaying, run, X25519};
use cryptoscope_engine::args::{FilterArgs, RunArgs};
use cryptoscope_engine::context::Captured;
use cryptoscope_engine::stored::{self, cmd_compare, cmd_export, cmd_report, cmd_runs, cmd_show, CompareArgs};
use cryptoscope_engine::ui::UsageError;

/// Two stored runs of X25519 in a new database, the older named `first`: the database, the
/// `runs` listing and the ids, newest first.
fn two_runs(tmp: &tempfile::TempDir) -> (String, String, Vec<String>) {
    let db_url = tmp.path().join("r.db").display().to_string();
    for named in [true, false] {
        let mut words = X25519.to_vec();
        if named {
            words.extend(["--name", "first"]);
        }
        let (code, out) = run(&cassette(), &words, &db_url, &tmp.path().join("r.json"));
        assert_eq!(code, 0, "{}", out.stderr());
    }
    let runs = ok(runs_of(&db_url, None));
    let ids: Vec<String> = runs
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("20"))
        .map(String::from)
        .collect();
    assert_eq!(ids.len(), 2, "{runs}");
    (db_url, runs, ids)
}

/// What a command wrote, with its result.
type Done = (anyhow::Result<i32>, Captured);

fn runs_of(db_url: &str, prune: Option<usize>) -> Done {
    let (ctx, out) = reading();
    (cmd_runs(&ctx, prune, &db(db_url)), out)
}

fn show(db_url: &str, run: &str, filter: &FilterArgs) -> Done {
    let (ctx, out) = reading();
    (cmd_show(&ctx, run, None, None, filter, &db(db_url)), out)
}

fn export(db_url: &str, run: &str, format: &str, filter: &FilterArgs) -> Done {
    let (ctx, out) = reading();
    (cmd_export(&ctx, run, format, None, filter, &db(db_url)), out)
}

fn compare(db_url: &str, words: &[&str]) -> Done {
    let mut w = words.to_vec();
    w.extend(["--db", db_url]);
    let args: CompareArgs = parse(&w);
    let (ctx, out) = reading();
    (cmd_compare(&ctx, &args), out)
}

/// A run replaying the recording, in-process; the words as typed (what the run records).
fn run_words(words: &[&str]) -> Done {
    let (ctx, out) = replaying(&cassette(), None, words);
    let args: RunArgs = parse(&words[1..]);
    (cryptoscope_engine::run::cmd_run(&args, &ctx), out)
}

/// Standard output of a command that succeeded.
fn ok((r, out): Done) -> String {
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

/// The message of an input error (exit status 2 at the CLI), one line.
fn refused((r, _): Done) -> String {
    let e = r.expect_err("refused");
    assert!(e.is::<UsageError>(), "{e:#}");
    let text = e.to_string();
    assert_eq!(text.lines().count(), 1, "{text}");
    text
}

#[test]
fn compare_addresses_runs_back_from_the_latest_and_warns_on_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let (db_url, runs, ids) = two_runs(&tmp);
    let text = ok(show(&db_url, "latest~1", &all()));
    assert!(text.contains(&ids[1]), "latest~1 is the run before the latest: {text}");
    // A named run is addressed by its name; names are unique and cannot pass for an id.
    assert!(ok(show(&db_url, "first", &all())).contains(&ids[1]));
    assert!(
        runs.lines().any(|l| l.starts_with(&ids[1]) && l.contains(" first ")),
        "{runs}"
    );
    for (name, why) in [("first", "is taken by run"), ("2026-run", "starting with a letter")] {
        let mut words = X25519.to_vec();
        words.extend(["--name", name, "--db", &db_url]);
        assert!(refused(run_words(&words)).contains(why), "{name}");
    }
    let (r, out) = compare(&db_url, &["latest~1", "latest"]);
    assert_eq!(r.unwrap(), 0);
    assert!(!out.stderr().contains("itself"), "{}", out.stderr());
    let (r, out) = compare(&db_url, &["latest", &ids[0]]);
    assert_eq!(r.unwrap(), 0);
    assert!(out.stderr().contains("compared with itself"), "{}", out.stderr());
    assert!(
        refused(show(&db_url, "latest~2", &all())).contains("latest~2"),
        "only two runs"
    );
}

#[test]
fn compare_takes_its_reference_run_by_either_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (db_url, _, ids) = two_runs(&tmp);
    for flag in ["--reference", "--baseline"] {
        let text = ok(compare(&db_url, &[&ids[0], &ids[1], flag, &ids[1]]));
        assert!(
            text.lines().any(|l| l.contains(&ids[1]) && l.contains("(baseline)")),
            "{flag}: {text}"
        );
    }
}

#[test]
fn outputs_filters_pruning_and_resume_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let (db_url, runs, ids) = two_runs(&tmp);
    // `--out -` is standard output; a directory that does not exist is refused, not made.
    let (ctx, out) = reading();
    let r = cmd_report(&ctx, &[], Some(std::path::Path::new("-")), &db(&db_url));
    assert!(ok((r, out)).starts_with("<!DOCTYPE html>"));
    let missing = tmp.path().join("no/such/dir/r.html");
    let (ctx, out) = reading();
    let e = refused((cmd_report(&ctx, &[], Some(&missing), &db(&db_url)), out));
    assert!(e.contains("does not exist") && !tmp.path().join("no").exists(), "{e}");
    let (ctx, out) = reading();
    let r = cmd_export(
        &ctx,
        "latest",
        "csv",
        Some(std::path::Path::new("-")),
        &all(),
        &db(&db_url),
    );
    assert!(ok((r, out)).starts_with("algorithm,provider"));
    // show, export and compare narrow like run selects; a filter matching nothing is an error.
    let x25519: FilterArgs = parse(&["--alg", "x25519", "--provider", "rustcrypto"]);
    let text = ok(export(&db_url, "latest", "csv", &x25519));
    assert_eq!(text.lines().count(), 5, "header and four operations: {text}");
    assert!(refused(show(&db_url, "latest", &parse(&["--alg", "ML-KEM-768"]))).contains("matches the filter"));
    assert!(
        refused(export(&db_url, "latest", "csv", &parse(&["--provider", "liboqs"]))).contains("matches the filter")
    );
    assert!(refused(compare(&db_url, &["latest~1", "latest", "--impl", "avx2"])).contains("matches the filter"));
    // `runs` says what each run measured: X25519 alone is a key exchange.
    for id in &ids {
        assert!(
            runs.lines().any(|l| l.starts_with(id.as_str()) && l.contains(" kex ")),
            "{runs}"
        );
    }
    // Resuming repeats the stored command line: an extra flag is refused, not ignored.
    let e = refused(run_words(&[
        "run",
        "--resume",
        "latest",
        "--alg",
        "ML-KEM-768",
        "--db",
        &db_url,
    ]));
    assert!(e.contains("--alg would be ignored"), "{e}");
    // `runs --prune KEEP` keeps the newest KEEP runs and deletes the rest with their results.
    assert!(ok(runs_of(&db_url, Some(1))).contains("Pruned 1 run"));
    let runs = ok(runs_of(&db_url, None));
    assert!(
        runs.contains(&ids[0]) && !runs.contains(&ids[1]) && runs.contains("1 runs in"),
        "{runs}"
    );
    refused(export(&db_url, &ids[1], "json", &all()));
    // The same, read from what `runs` returns.
    let (ctx, _) = reading();
    match stored::runs(&ctx, None, &db(&db_url)).unwrap() {
        stored::Listing::Runs { runs, .. } => {
            let kept: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
            assert_eq!(kept, [ids[0].as_str()]);
            assert_eq!(runs[0].status, "complete");
        }
        stored::Listing::Pruned { .. } => panic!("no --prune given"),
    }
}

#[test]
fn run_json_dash_writes_the_results_file_and_nothing_else_to_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let mut words = X25519.to_vec();
    words.extend(["--json", "-", "--db", &db_url]);
    let text = ok(run_words(&words));
    let file: serde_json::Value = serde_json::from_str(&text).expect("standard output is the results file alone");
    assert_eq!(file["schema"], "cryptoscope.run/1");
    assert_eq!(
        file["results"].as_array().unwrap().len(),
        4,
        "keypair, derive, validate and exchange"
    );
    // Stored as ever, and no file written in place of `-`.
    assert!(!std::path::Path::new("-").exists());
    assert!(ok(runs_of(&db_url, None)).contains(file["run_id"].as_str().unwrap()));
}

#[test]
fn speedups_against_a_baseline_implementation() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let json = tmp.path().join("r.json").display().to_string();
    let words = [
        "run",
        "--quiet",
        "--quick",
        "--rounds",
        "2",
        "--samples",
        "40",
        "--alg",
        "ML-KEM-768",
        "--provider",
        "pqclean",
        "--baseline",
        "clean",
        "--db",
        &db_url,
        "--json",
        &json,
    ];
    let text = ok(run_words(&words));
    assert!(text.contains("Speed-up against clean:"), "{text}");
    // The AVX2 code against the portable code, for each of the three operations.
    assert_eq!(text.matches("pqclean avx2").count(), 3, "{text}");
    assert!(
        ok(show(&db_url, "latest", &all())).contains("Speed-up against clean:"),
        "the run remembers its baseline"
    );
    let mut words = words.to_vec();
    words[12] = "ref";
    assert!(refused(run_words(&words)).contains("--baseline ref"));
}

#[test]
fn resuming_what_does_not_exist_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("empty.db").display().to_string();
    refused(run_words(&[
        "run",
        "--resume",
        "20990101T000000Z-dead",
        "--db",
        &db_url,
    ]));
}
