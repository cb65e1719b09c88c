//! The run pipeline in-process on recorded worker exchanges (`fixtures/replay`): rounds,
//! merging visits, the store, exports, the report, `compare` and `compare --history`, and
//! resuming after a stop at an exact point. Every sample is the recording's, so every
//! verdict here is decided by the test's data on any machine under any load; no process is
//! started.

use crate::common::{all, cassette, db, parse, reading, recorded, replaying, run, slowed, stored, Rows};
use cryptoscope_engine::args::RunArgs;
use cryptoscope_engine::context::Captured;
use cryptoscope_engine::run::{measure_run, Ran};
use cryptoscope_engine::stored::{self, cmd_compare, cmd_export, cmd_report, cmd_runs, CompareArgs, Compared};
use cryptoscope_engine::ui::UsageError;
use cryptoscope_engine::workers::Stopped;
use cryptoscope_report::compare::Verdict;
use cryptoscope_testkit::replay::RUN;
use serde_json::Value;

/// `compare WORDS --db DB`, in-process: its exit code (or error) and what it wrote.
fn compare(db_url: &str, words: &[&str]) -> (anyhow::Result<i32>, Captured) {
    let mut w: Vec<&str> = words.to_vec();
    w.extend(["--db", db_url]);
    let args: CompareArgs = parse(&w);
    let (ctx, out) = reading();
    (cmd_compare(&ctx, &args), out)
}

#[test]
fn rounds_merge_the_recorded_visits_into_stored_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let json = tmp.path().join("run.json");
    let (code, out) = run(&cassette(), RUN, &db_url, &json);
    assert_eq!(code, 0, "{}", out.stderr());
    let want = recorded(&cassette());
    assert_eq!(
        want.len(),
        17,
        "3 KEMs x 3 operations, X25519's 4, 2 hashes x 2 lengths recorded"
    );
    // The run file: every row is the recording's two visits, in order, and says so.
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
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
    // The command line the run recorded is the one it was given.
    assert_eq!(file["command"][1], "run");
    assert_eq!(file["command"][3], "SHA-256,SHA3-256,ML-KEM-768,X25519");
    // The store holds the same rows.
    let (_, stored_rows) = stored(&db_url).unwrap();
    assert_eq!(stored_rows, want);
    // Exports and the report carry every subject.
    for (format, needle) in [("csv", "ML-KEM-768,pqclean,avx2"), ("markdown", "| X25519 |")] {
        let (ctx, out) = reading();
        assert_eq!(
            cmd_export(&ctx, "latest", format, None, &all(), &db(&db_url)).unwrap(),
            0,
            "{format}"
        );
        let text = out.stdout();
        assert!(text.contains(needle), "{format}: {text}");
        assert_eq!(text.matches("SHA3-256").count(), 2, "{format}: {text}");
    }
    let html = tmp.path().join("report.html");
    let (ctx, out) = reading();
    assert_eq!(
        cmd_report(&ctx, &["latest".into()], Some(&html), &db(&db_url)).unwrap(),
        0,
        "{}",
        out.stderr()
    );
    let page = std::fs::read_to_string(&html).unwrap();
    for s in ["pqclean", "X25519", "rustcrypto", "<svg"] {
        assert!(page.contains(s), "the report lacks {s}");
    }
    // `runs` lists it, complete.
    let (ctx, out) = reading();
    assert_eq!(cmd_runs(&ctx, None, &db(&db_url)).unwrap(), 0);
    assert!(out.stdout().contains("complete"), "{}", out.stdout());
}

#[test]
fn a_missing_or_broken_recording_is_a_usage_error_and_a_missing_exchange_fails_the_subject() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"worker\": 1}\n").unwrap();
    for c in [tmp.path().join("absent.jsonl"), bad.clone()] {
        let e = cryptoscope_engine::workers::Workers::replaying(tmp.path().into(), &c, None)
            .err()
            .expect("refused");
        assert!(e.is::<UsageError>(), "{e}");
        assert!(e.to_string().starts_with(&c.display().to_string()), "{e}");
    }
    assert!(format!(
        "{}",
        cryptoscope_engine::workers::Workers::replaying(tmp.path().into(), &bad, None)
            .err()
            .unwrap()
    )
    .contains("line 1"));
    // A call the recording does not hold fails that subject, saying so.
    let db_url = tmp.path().join("r.db").display().to_string();
    let words = [
        "run",
        "--alg",
        "ML-KEM-512",
        "--provider",
        "pqclean",
        "--impl",
        "clean",
        "--quick",
        "--quiet",
    ];
    let (ctx, out) = replaying(&cassette(), None, &words);
    let mut w: Vec<&str> = words[1..].to_vec();
    w.extend(["--db", &db_url, "--json", "-"]);
    let args: cryptoscope_engine::args::RunArgs = parse(&w);
    let code = cryptoscope_engine::run::cmd_run(&args, &ctx);
    let text = format!("{}{}", out.stdout(), out.stderr());
    assert!(
        !matches!(code, Ok(0)),
        "a subject with no recorded exchange passed: {text}"
    );
    let text = match code {
        Err(e) => format!("{text}{e:#}"),
        Ok(_) => text,
    };
    assert!(text.contains("no recorded exchange"), "{text}");
}

#[test]
fn a_slowed_subject_is_called_slower_and_nothing_else_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let slow = tmp.path().join("slow.jsonl");
    slowed(&cassette(), &slow, "ML-KEM-768/pqclean/clean", 2.0);
    let mut ids = Vec::new();
    for c in [cassette(), slow] {
        let (code, out) = run(&c, RUN, &db_url, &tmp.path().join("run.json"));
        assert_eq!(code, 0, "{}", out.stderr());
        ids.push(stored(&db_url).unwrap().0);
    }
    let (code, out) = compare(&db_url, &[&ids[0], &ids[1]]);
    assert_eq!(code.unwrap(), 0, "no --fail-on-slower: a verdict, not a failure");
    let text = out.stdout();
    assert!(text.contains("3 slower, 0 faster, 14 no significant change"), "{text}");
    for line in text
        .lines()
        .filter(|l| l.contains("slower") && l.contains("ML-KEM-768"))
    {
        assert!(line.contains("pqclean") && line.contains("clean"), "{line}");
    }
    let (code, _) = compare(&db_url, &[&ids[0], &ids[1], "--fail-on-slower"]);
    assert_eq!(code.unwrap(), 1, "--fail-on-slower turns the verdict into exit 1");
    // The same, read from the comparison itself rather than its table: every operation of
    // the slowed subject, and nothing else, is slower, at twice the baseline's time.
    let (ctx, out) = reading();
    let found = stored::compare(&ctx, &parse(&[&ids[0], &ids[1], "--db", &db_url])).unwrap();
    assert_eq!(out.stdout(), "", "compare() writes nothing");
    let Compared::Runs(c) = &found else {
        panic!("two runs of one machine are compared as runs")
    };
    assert_eq!((c.runs.len(), c.baseline, c.rows.len()), (2, 0, 17));
    for row in &c.rows {
        let cell = &row.cells[1];
        let slowed = row.subject == "ML-KEM-768/pqclean/clean";
        assert_eq!(
            cell.verdict == Verdict::Slower,
            slowed,
            "{} {}",
            row.subject,
            row.operation
        );
        if slowed {
            let r = cell.ratio.unwrap();
            assert!((r - 2.0).abs() < 1e-9, "{} {}: ratio {r}", row.subject, row.operation);
        } else {
            assert_eq!(cell.verdict, Verdict::NoSignificantChange, "{}", row.subject);
        }
    }
    assert_eq!(found.slower(), 3);
}

#[test]
fn a_run_is_judged_against_the_spread_of_the_runs_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let file = tmp.path().join("run.json");
    // Three runs of the recording (a history without spread), then one with PQClean's
    // clean ML-KEM-768 1.3 times slower.
    for _ in 0..3 {
        assert_eq!(run(&cassette(), RUN, &db_url, &file).0, 0);
    }
    let slow = tmp.path().join("slow.jsonl");
    slowed(&cassette(), &slow, "ML-KEM-768/pqclean/clean", 1.3);
    assert_eq!(run(&slow, RUN, &db_url, &file).0, 0);

    let json = tmp.path().join("history.json");
    let (code, out) = compare(
        &db_url,
        &[
            "latest",
            "--history",
            "5",
            "--fail-on-slower",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let text = out.stdout();
    assert_eq!(code.unwrap(), 1, "{text}{}", out.stderr());
    assert!(
        text.contains("3 slower, 0 faster, 14 within the history's noise, 0 without enough history"),
        "{text}"
    );
    assert!(text.contains("noise ±0.0% from 3 runs"), "{text}");
    assert!(text.contains("Test: 99% prediction interval"), "{text}");
    for line in text.lines().filter(|l| l.contains('/')) {
        let slowed = line.starts_with("ML-KEM-768/pqclean/clean ");
        assert_eq!(line.ends_with("slower"), slowed, "{line}");
    }
    assert!(out.stderr().contains("3 operation(s) slower than their history"));
    let h: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = h["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        17,
        "3 KEMs x 3 operations, X25519's 4, 2 hashes x 2 lengths"
    );
    for r in rows {
        assert_eq!(r["history"].as_array().unwrap().len(), 3, "{r}");
        let want = if r["subject"] == "ML-KEM-768/pqclean/clean" {
            "slower"
        } else {
            "within-noise"
        };
        assert_eq!(r["verdict"], want, "{r}");
    }
    assert_eq!(h["statistic"], "median");

    // The run before it has two runs before it: no verdict, and no failure.
    let (code, out) = compare(&db_url, &["latest~1", "--history", "5", "--fail-on-slower"]);
    assert_eq!(code.unwrap(), 0, "{}", out.stderr());
    assert_eq!(out.stdout().matches("not enough history (2 of 3)").count(), 17);
    // The first run has none at all: an input error.
    let (code, _) = compare(&db_url, &["latest~3", "--history", "5"]);
    let e = code.unwrap_err();
    assert!(e.is::<UsageError>(), "{e}");
    assert!(e.to_string().contains("no history to compare with"), "{e}");
    assert_eq!(e.to_string().lines().count(), 1, "{e}");
}

#[test]
fn history_flags_that_cannot_mean_anything_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    assert_eq!(run(&cassette(), RUN, &db_url, &tmp.path().join("run.json")).0, 0);
    for (args, needle) in [
        (vec!["latest", "--history", "0"], "at least one run"),
        (vec!["latest", "latest", "--history", "3"], "takes one run"),
        (vec!["latest", "--history", "3", "--published"], "do not go together"),
    ] {
        let (code, _) = compare(&db_url, &args);
        let e = code.unwrap_err();
        assert!(e.is::<UsageError>(), "{args:?}: {e}");
        assert_eq!(e.to_string().lines().count(), 1, "{args:?}: {e}");
        assert!(e.to_string().contains(needle), "{args:?}: {e}");
    }
}

/// One attempt of `words` replaying the recording into `db_url`, stopped as its `k`-th
/// `measure` call starts: the command unwinds from that point, as a kill would end it.
fn stopped_at(db_url: &str, words: &[&str], k: usize) {
    let mut all: Vec<&str> = words.to_vec();
    all.extend(["--db", db_url, "--json", "-"]);
    let (ctx, out) = replaying(&cassette(), Some(k), &all);
    let args: cryptoscope_engine::args::RunArgs = parse(&all[1..]);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cryptoscope_engine::run::cmd_run(&args, &ctx)
    }));
    let Err(payload) = r else {
        panic!(
            "{words:?} at {k}: the replay did not stop the run: {:?}\n{}\n{}",
            r.map(|c| c.map_err(|e| e.to_string())),
            out.stdout(),
            out.stderr()
        )
    };
    assert_eq!(payload.downcast_ref::<Stopped>().map(|s| s.0), Some(k));
    assert_eq!(ctx.workers.started(), 0);
}

/// Stopped at exact points (the k-th measure call of each attempt), resumed each time: what
/// was stored stays as it was, nothing is stored twice, and the end is exactly the
/// uninterrupted run.
#[test]
fn stopped_at_exact_points_and_resumed_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("resume.db").display().to_string();
    let full = {
        let other = tmp.path().join("full.db").display().to_string();
        assert_eq!(run(&cassette(), RUN, &other, &tmp.path().join("full.json")).0, 0);
        stored(&other).unwrap().1
    };
    let resume: &[&str] = &["run", "--resume", "latest", "--quiet"];
    let mut seen = Rows::new();
    let mut run_id: Option<String> = None;
    // 12 measure calls in the whole run (6 subjects, 2 rounds): stopped at the 3rd (round
    // one: nothing stored), the 9th (three subjects stored), then on the resumes at their
    // 2nd and 1st calls.
    for (attempt, k) in [3, 9, 2, 1].into_iter().enumerate() {
        let words = if run_id.is_some() { resume } else { RUN };
        stopped_at(&db_url, words, k);
        let Some((id, rows)) = stored(&db_url) else {
            assert_eq!(attempt, 0, "attempt {attempt}: the run is gone");
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
        "the stops came mid-run: {complete} complete rows"
    );
    let (code, out) = run(&cassette(), resume, &db_url, &tmp.path().join("resumed.json"));
    assert_eq!(code, 0, "{}", out.stderr());
    assert_eq!(
        stored(&db_url).unwrap().1,
        full,
        "the resumed run is the uninterrupted one"
    );
    let (code, out) = run(&cassette(), resume, &db_url, &tmp.path().join("again.json"));
    assert_eq!(code, 0);
    assert!(out.stdout().contains("nothing to resume"), "{}", out.stdout());
}

/// Several runs in one process at once, each with its own context: none sees another's
/// workers, output or store.
#[test]
fn commands_run_side_by_side_in_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let want = recorded(&cassette());
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let dir = tmp.path().to_path_buf();
                s.spawn(move || {
                    let db_url = dir.join(format!("p{i}.db")).display().to_string();
                    let (code, out) = run(&cassette(), RUN, &db_url, &dir.join(format!("p{i}.json")));
                    assert_eq!(code, 0, "{}", out.stderr());
                    stored(&db_url).unwrap().1
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), want);
        }
    });
}

/// A measured row of the results file has every documented field (docs/json.md), its
/// samples timed in the run (increasing within each visit), and a median inside its
/// interval and its range.
fn assert_documented_row(r: &Value) {
    let t: Vec<f64> = r["raw_t_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(t.len(), r["raw_ns"].as_array().unwrap().len(), "{r}");
    assert!(t.iter().all(|x| (0.0..600.0).contains(x)), "{t:?}");
    let mut at = 0;
    for v in r["visits"].as_array().unwrap() {
        let v = v.as_u64().unwrap() as usize;
        assert!(t[at..at + v].windows(2).all(|w| w[1] > w[0]), "{r}");
        at += v;
    }
    for k in [
        "algorithm",
        "provider",
        "implementation",
        "build",
        "operation",
        "gate",
        "gate_detail",
        "samples",
        "median_cycles",
        "median_ns",
        "ci95_low_cycles",
        "ci95_high_cycles",
        "mean_cycles",
        "stddev_cycles",
        "min_cycles",
        "max_cycles",
        "p95_cycles",
        "outliers",
        "cycle_source",
        "overhead_cycles",
        "sizes",
        "raw_cycles",
    ] {
        assert!(r.get(k).is_some(), "result lacks {k}: {r}");
    }
    assert_eq!(r["gate"], "pass");
    let n = r["samples"].as_u64().unwrap();
    assert_eq!(r["raw_cycles"].as_array().unwrap().len() as u64, n);
    let med = r["median_cycles"].as_f64().unwrap();
    assert!(med > 0.0);
    assert!(r["ci95_low_cycles"].as_f64().unwrap() <= med && med <= r["ci95_high_cycles"].as_f64().unwrap());
    assert!(r["min_cycles"].as_f64().unwrap() <= med && med <= r["max_cycles"].as_f64().unwrap());
    assert!(["tsc-reference-cycles", "perf-core-cycles"].contains(&r["cycle_source"].as_str().unwrap()));
}

/// What was `cli/tests/cli.rs`'s `quick_run_writes_the_documented_json` about the file's
/// content: the schema, the machine and its preflight, the stability verdict over every
/// measured operation, every row documented, and the sizes FIPS 203 gives ML-KEM-768.
#[test]
fn the_results_file_holds_every_documented_field() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let json = tmp.path().join("out/run.json");
    let (code, out) = run(&cassette(), RUN, &db_url, &json);
    assert_eq!(code, 0, "{}", out.stderr());
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(run["schema"], "cryptoscope.run/1");
    assert!(run["run_id"].is_string() && run["started_at"].as_str().unwrap().ends_with('Z'));
    let env = &run["environment"];
    for k in [
        "cpu_model",
        "logical_cpus",
        "kernel",
        "perf_core_cycles",
        "compilers",
        "libraries",
        "cpu_flags",
    ] {
        assert!(!env[k].is_null(), "environment.{k}");
    }
    // The preflight: the same PMU status as the environment's, every warning with its fix.
    let pf = &env["preflight"];
    assert_eq!(pf["pmu"], env["perf_core_cycles"], "{pf}");
    for w in pf["warnings"].as_array().unwrap() {
        assert!(
            !w["what"].as_str().unwrap().is_empty() && !w["fix"].as_str().unwrap().is_empty(),
            "{w}"
        );
    }
    // The stability verdict: its method stated, every measured operation examined.
    let st = &env["stability"];
    assert!(st["method"].as_str().unwrap().contains("binary segmentation"), "{st}");
    assert_eq!(st["operations"], 17);
    assert_eq!(st["stable"], st["shifted_operations"] == 0);
    assert_eq!(run["config"]["rounds"], 2);
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 17);
    results.iter().for_each(assert_documented_row);
    // FIPS 203, Table 3: ML-KEM-768's encapsulation key and ciphertext.
    for r in results.iter().filter(|r| r["algorithm"] == "ML-KEM-768") {
        let sizes = &r["sizes"];
        assert_eq!(
            (sizes["public_key"].as_u64(), sizes["ciphertext"].as_u64()),
            (Some(1184), Some(1088)),
            "{r}"
        );
    }
}

/// `run` as a value: measured and stored, the run is read before anything about it is
/// written, and what `conclude` writes is that same run.
#[test]
fn a_run_is_a_value_before_it_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let db_url = tmp.path().join("r.db").display().to_string();
    let json = tmp.path().join("run.json");
    let mut words: Vec<&str> = RUN.to_vec();
    let json_s = json.display().to_string();
    words.extend(["--db", &db_url, "--json", &json_s]);
    let (ctx, out) = replaying(&cassette(), None, &words);
    let args: RunArgs = parse(&words[1..]);
    let Ran::Measured(m) = measure_run(&args, &ctx).unwrap() else {
        panic!("a new run measures")
    };
    assert_eq!(m.run_file.results.len(), 17);
    assert!(m.run_file.results.iter().all(|r| r.median_ns.is_some()));
    assert_eq!(m.store_error(), None);
    assert!(m.absent().is_empty());
    assert_eq!(m.group, m.run_file.run_id, "no group: its own");
    // Stored already, written nowhere yet.
    let (stored_id, stored_rows) = stored(&db_url).unwrap();
    assert_eq!(stored_id, m.run_file.run_id);
    assert_eq!(stored_rows.len(), 17);
    assert!(!json.exists());
    assert_eq!(out.stdout(), "");
    // Through text, as the file is (serde_json reads a float back to within an ulp).
    let value: Value = serde_json::from_str(&serde_json::to_string(&m.run_file).unwrap()).unwrap();
    assert_eq!(m.conclude(&ctx).unwrap(), 0);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(file, value, "the file is the run that was returned");
    assert!(out.stdout().contains("Results: "), "{}", out.stdout());
    assert_eq!(ctx.workers.started(), 0);
}
