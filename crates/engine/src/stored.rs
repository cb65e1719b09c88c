//! Commands over stored runs: `runs`, `show`, `export`, `report`, `compare` (with runs or
//! published figures), and opening the results database.

use crate::args::*;
use crate::ui::*;
use crate::*;
use anyhow::Result;
use cryptoscope_model::RunFile;
use cryptoscope_report::table;
use std::path::{Path, PathBuf};

/// Opens (creating if needed) the results database at `location`, a path or a PostgreSQL
/// server, and tells the user on stderr what opening it changed or warned about.
pub fn open_db(location: &str) -> Result<cryptoscope_store::Store> {
    let store = cryptoscope_store::Store::open_any(location).map_err(|e| usage(e.to_string()))?;
    for w in store.warnings() {
        eprintln!("warning: {w}");
    }
    if let Some(m) = store.migrated() {
        let scrubbed = match m.scrubbed_commands {
            0 => "no stored command line held a password".to_string(),
            1 => "the password in 1 stored command line is now ***".to_string(),
            n => format!("the passwords in {n} stored command lines are now ***"),
        };
        eprintln!(
            "note: results database {} upgraded from schema version {} to {}; {scrubbed}",
            store.location(),
            m.from,
            m.to
        );
    }
    Ok(store)
}

/// Opens the results database of a command that stores items (`ct` and the application
/// drivers) and checks its `--json` file can be written, before any work.
pub fn open_app_store(db: Option<&str>, json: Option<&PathBuf>) -> Result<(cryptoscope_store::Store, Option<PathBuf>)> {
    let json_out = json.map(|p| util::check_writable(p).map_err(usage)).transpose()?;
    let store = open_db(&store_location(db))?;
    Ok((store, json_out))
}

/// Opens an existing results database for reading (a missing file is an input error).
pub(crate) fn open_store(db: &DbArg) -> Result<cryptoscope_store::Store> {
    let location = store_location(db.as_deref());
    if !cryptoscope_store::is_server(&location) && !Path::new(&location).exists() {
        return Err(usage(format!(
            "no results database at {location} (run `cryptoscope run` first, or pass --db)"
        )));
    }
    open_db(&location)
}

/// Where a command's output goes: `-` is standard output; a file's directory must exist
/// (nothing is created silently where a typo would put it).
pub(crate) fn write_output(out: &std::path::Path, text: &str) -> Result<bool> {
    if out.as_os_str() == "-" {
        print!("{text}");
        return Ok(false);
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(usage(format!(
                "cannot write {}: the directory {} does not exist",
                out.display(),
                dir.display()
            )));
        }
    }
    std::fs::write(out, text).map_err(|e| usage(format!("cannot write {}: {e}", out.display())))?;
    Ok(true)
}

pub(crate) fn write_report(
    runs: &[RunFile],
    extras: &cryptoscope_report::html::Extras,
    out: &std::path::Path,
) -> Result<()> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(out, cryptoscope_report::html::render_with(runs, extras))
        .map_err(|e| usage(format!("cannot write {}: {e}", out.display())))
}

/// The published figures `compare --published` reads (`reference/published.json`, or
/// `$CRYPTOSCOPE_PUBLISHED`); none when the file cannot be found or read (a report or a
/// summary is never refused for want of them).
pub(crate) fn published_figures() -> Vec<cryptoscope_report::published::Published> {
    published_path(None)
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| cryptoscope_report::published::parse(&t).ok())
        .unwrap_or_default()
}

/// What a report shows beyond its runs: the published figures, and the stored
/// constant-time verdicts (`ct`: subject, summary) of the runs' subjects.
pub(crate) fn report_extras(ct: Vec<(String, String)>) -> cryptoscope_report::html::Extras {
    cryptoscope_report::html::Extras {
        published: published_figures(),
        ct,
    }
}

pub fn cmd_report(runs: &[String], out: Option<&std::path::Path>, db: &DbArg) -> Result<i32> {
    let mut store = open_store(db)?;
    let refs: Vec<String> = if runs.is_empty() {
        vec!["latest".into()]
    } else {
        runs.to_vec()
    };
    let mut loaded = Vec::new();
    for r in &refs {
        loaded.push(store.load(r).map_err(|e| usage(e.to_string()))?);
    }
    let rows: Vec<cryptoscope_model::ResultRow> = loaded.iter().flat_map(|r| r.results.iter().cloned()).collect();
    let ct = crate::ct_cmd::ct_audits(&mut store, &rows)
        .map(|c| c.summaries())
        .unwrap_or_default();
    let extras = report_extras(ct);
    match out {
        // Given: written exactly there (`-`: standard output).
        Some(p) => {
            if write_output(p, &cryptoscope_report::html::render_with(&loaded, &extras))? {
                println!("Report: {}", p.display());
            }
        }
        None => {
            let p = PathBuf::from(format!("results/report-{}.html", loaded[0].run_id));
            write_report(&loaded, &extras, &p)?;
            println!("Report: {}", p.display());
        }
    }
    Ok(0)
}

pub fn cmd_runs(prune: Option<usize>, db: &DbArg) -> Result<i32> {
    let mut store = open_store(db)?;
    if let Some(keep) = prune {
        // The newest `keep` runs stay; older ones go with everything stored under them.
        let runs = store.runs().map_err(|e| usage(e.to_string()))?;
        let old: Vec<&str> = runs.iter().skip(keep).map(|r| r.id.as_str()).collect();
        for id in &old {
            store.delete_run(id).map_err(|e| usage(e.to_string()))?;
        }
        println!(
            "Pruned {} run{} from {}; kept the newest {}.",
            old.len(),
            if old.len() == 1 { "" } else { "s" },
            store.location(),
            runs.len().min(keep)
        );
        return Ok(0);
    }
    let runs = store.runs().map_err(|e| usage(e.to_string()))?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                if r.name.is_empty() { "-".into() } else { r.name.clone() },
                if r.group == r.id { "-".into() } else { r.group.clone() },
                r.started_at.clone(),
                format!("{} ({})", r.hostname, r.cpu_model),
                r.suites.clone(),
                r.measured.to_string(),
                r.failed.to_string(),
                r.total.to_string(),
                if r.status == "running" {
                    "incomplete".into()
                } else {
                    r.status.clone()
                },
            ]
        })
        .collect();
    print!(
        "{}",
        table::render(
            &["run", "name", "group", "started", "machine", "suites", "measured", "failed", "results", "status"],
            &rows,
            &[false, false, false, false, false, false, true, true, true, false]
        )
    );
    println!("{} runs in {}", runs.len(), store.location());
    Ok(0)
}

pub fn cmd_show(
    run: &str,
    baseline: Option<&str>,
    against: Option<&str>,
    filter: &FilterArgs,
    db: &DbArg,
) -> Result<i32> {
    let mut store = open_store(db)?;
    let mut r = store.load(run).map_err(|e| usage(e.to_string()))?;
    filter.apply(&mut r)?;
    let previous = match against {
        None => None,
        Some(a) => {
            let mut p = store.load(a).map_err(|e| usage(e.to_string()))?;
            filter.apply(&mut p)?;
            Some(p)
        }
    };
    let e = &r.environment;
    println!(
        "run {}  started {}  finished {}",
        r.run_id,
        r.started_at,
        if r.finished_at.is_empty() {
            "(incomplete)"
        } else {
            &r.finished_at
        }
    );
    println!(
        "machine {} — {}, {} logical CPUs, {}; TSC {}; PMU: {}",
        e.hostname.as_deref().unwrap_or("?"),
        e.cpu_model.as_deref().unwrap_or("unknown CPU"),
        e.logical_cpus,
        e.kernel.as_deref().unwrap_or("?"),
        e.tsc_hz
            .map(|h| format!("{:.3} GHz", h / 1e9))
            .unwrap_or_else(|| "n/a".into()),
        e.perf_core_cycles
    );
    println!("command: {}", r.command.display());
    // Runs of application drivers (ct, tls, tunnel, tahoe) have no primitive results: no
    // empty speed table for them.
    if !r.results.is_empty() || r.applications.is_empty() {
        print!("\n{}", table::results(&r.results));
    }
    // The families' own tables, as `run` prints them.
    for t in crate::run::summary::family_tables(&r.results, r.environment.core_per_tsc) {
        print!("\n{t}");
    }
    // Application drivers' tables.
    for t in cryptoscope_report::apps::tables(&r.applications) {
        print!("\n{t}");
    }
    crate::run::summary::stored_extras(&r);
    if let Some(b) = baseline.or(r.config.baseline.as_deref()) {
        match table::speedups(&r.results, b) {
            Some(t) => print!("\nSpeed-up against {b}:\n{t}"),
            None => println!("\nNo measured subject of this run is the baseline `{b}`."),
        }
    }
    let ct = crate::ct_cmd::ct_audits(&mut store, &r.results)
        .map(|c| c.summaries())
        .unwrap_or_default();
    crate::run::summary::print_answers(&r, &ct, previous.as_ref());
    Ok(0)
}

pub fn cmd_export(
    run: &str,
    format: &str,
    out: Option<&std::path::Path>,
    filter: &FilterArgs,
    db: &DbArg,
) -> Result<i32> {
    let mut store = open_store(db)?;
    let mut r = store.load(run).map_err(|e| usage(e.to_string()))?;
    filter.apply(&mut r)?;
    let text = match format {
        "json" => serde_json::to_string_pretty(&r)?,
        "csv" => cryptoscope_report::export::csv(&r),
        "markdown" => cryptoscope_report::export::markdown(&r),
        "github-benchmark" => cryptoscope_report::export::github_benchmark(&r),
        f => return Err(usage(format!("unknown format `{f}`"))),
    };
    match out {
        Some(p) => {
            if write_output(p, &text)? {
                eprintln!("wrote {}", p.display());
            }
        }
        None => print!("{text}"),
    }
    Ok(0)
}

/// The repository's published-figures file.
pub(crate) fn published_path(flag: Option<&std::path::Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("CRYPTOSCOPE_PUBLISHED") {
        return Ok(PathBuf::from(p));
    }
    let vectors = util::vectors_dir(None)?;
    Ok(vectors.join("../reference/published.json"))
}

pub fn cmd_published(
    runs: &[String],
    file: Option<&std::path::Path>,
    json: Option<&std::path::Path>,
    db: &DbArg,
) -> Result<i32> {
    if runs.len() != 1 {
        return Err(usage("compare --published takes one run"));
    }
    let path = published_path(file)?;
    let text = std::fs::read_to_string(&path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let entries = cryptoscope_report::published::parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let mut store = open_store(db)?;
    let run = store.load(&runs[0]).map_err(|e| usage(e.to_string()))?;
    let m = cryptoscope_report::published::matches(&entries, &run.results);
    if m.is_empty() {
        println!(
            "No published figure in {} matches an operation measured in run {} (published: {}).",
            path.display(),
            run.run_id,
            entries
                .iter()
                .map(|e| e.algorithm.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(0);
    }
    let source = run
        .results
        .iter()
        .find_map(|r| r.cycle_source)
        .map(|c| c.label().to_string())
        .unwrap_or_else(|| "cycles".into());
    print!(
        "{}",
        cryptoscope_report::published::table(
            &m,
            run.environment.cpu_model.as_deref().unwrap_or("this machine"),
            &source
        )
    );
    if let Some(j) = json {
        let doc = serde_json::json!({"schema": "cryptoscope.published-comparison/1", "run": run.run_id, "matches": m});
        std::fs::write(j, serde_json::to_string_pretty(&doc)? + "\n")
            .map_err(|e| usage(format!("cannot write {}: {e}", j.display())))?;
    }
    Ok(0)
}

#[allow(clippy::too_many_arguments)]
pub fn cmd_compare(
    runs: &[String],
    baseline: Option<&str>,
    threshold: f64,
    cycles: bool,
    statistic: &str,
    json: Option<&std::path::Path>,
    fail_on_slower: bool,
    filter: &FilterArgs,
    db: &DbArg,
) -> Result<i32> {
    if !(0.0..1.0).contains(&threshold) {
        return Err(usage("--threshold must be a fraction in [0, 1), e.g. 0.05"));
    }
    if runs.len() < 2 {
        return Err(usage("compare needs two or more runs (or one with --published)"));
    }
    let mut store = open_store(db)?;
    let mut loaded: Vec<cryptoscope_model::RunFile> = Vec::new();
    for r in runs {
        let mut run = store.load(r).map_err(|e| usage(e.to_string()))?;
        filter.apply(&mut run)?;
        if loaded.iter().any(|l| l.run_id == run.run_id) {
            // `compare latest latest`: nothing can differ but the noise of the bootstrap.
            eprintln!(
                "warning: run {} is given more than once (as `{r}`): it is compared with itself",
                run.run_id
            );
        }
        loaded.push(run);
    }
    let base = match baseline {
        None => 0,
        Some(b) => {
            let id = if b.starts_with("group:") {
                b.to_string()
            } else {
                store.resolve(b).map_err(|e| usage(e.to_string()))?
            };
            loaded
                .iter()
                .position(|r| r.run_id == id)
                .ok_or_else(|| usage(format!("--reference {b} is not among the compared runs")))?
        }
    };
    let statistic = cryptoscope_report::compare::Statistic::parse(statistic)
        .ok_or_else(|| usage(format!("unknown statistic `{statistic}`")))?;
    let c = cryptoscope_report::compare::compare(&loaded, base, threshold, cycles, statistic);
    print!("{}", cryptoscope_report::compare::render(&c));
    if let Some(p) = json {
        write_output(p, &serde_json::to_string_pretty(&c)?)?;
    }
    let slower = cryptoscope_report::compare::tally(&c).1;
    Ok(if fail_on_slower && slower > 0 {
        eprintln!("compare: {slower} operation(s) slower than the baseline (--fail-on-slower)");
        1
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
    use cryptoscope_model::{GateStatus, ResultRow, RunConfig, RunFile};

    /// A stored run of one operation whose samples the test sets: `scale` times a fixed
    /// spread of 200 samples around 1000 ns.
    fn stored(store: &mut cryptoscope_store::Store, id: &str, started: &str, scale: f64) {
        let d = Descriptor::catalogued(
            "X25519",
            "openssl",
            "default",
            "3".into(),
            "-".into(),
            Sizes {
                public_key: 32,
                secret_key: 32,
                ciphertext: 0,
                shared_secret: 32,
            },
            Randomness::Internal,
        );
        let ns: Vec<f64> = (0..200).map(|i| scale * (1000.0 + f64::from(i % 10))).collect();
        let mut row = ResultRow::without_numbers(&d, "exchange", GateStatus::Pass, "");
        row.median_ns = Some(cryptoscope_measure::summarize(&ns).median);
        row.samples = ns.len();
        row.raw_ns = ns;
        let run = RunFile {
            schema: cryptoscope_model::SCHEMA.into(),
            run_id: id.into(),
            started_at: started.into(),
            finished_at: started.into(),
            tool_version: String::new(),
            command: Default::default(),
            config: RunConfig::default(),
            environment: Default::default(),
            results: Vec::new(),
            applications: Vec::new(),
        };
        store.begin_run(&run).unwrap();
        store.add_result(id, &row).unwrap();
        store.finish_run(id, started).unwrap();
    }

    #[test]
    fn fail_on_slower_turns_a_slower_verdict_into_exit_1() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.db");
        let location = path.to_str().unwrap().to_string();
        let mut store = cryptoscope_store::Store::open_any(&location).unwrap();
        stored(&mut store, "20260101T000000Z-aaaa", "2026-01-01T00:00:00.000Z", 1.0);
        stored(&mut store, "20260102T000000Z-bbbb", "2026-01-02T00:00:00.000Z", 1.0);
        stored(&mut store, "20260103T000000Z-cccc", "2026-01-03T00:00:00.000Z", 1.5);
        drop(store);
        let db = DbArg { db: Some(location) };
        let compare = |a: &str, b: &str, fail: bool| {
            let runs = [a.to_string(), b.to_string()];
            cmd_compare(
                &runs,
                None,
                0.05,
                false,
                "median",
                None,
                fail,
                &FilterArgs::default(),
                &db,
            )
            .unwrap()
        };
        // latest~2 and latest~1: the same samples, no change.
        assert_eq!(compare("latest~2", "latest~1", true), 0);
        // 1.5 times slower: a verdict, an exit status only when asked for.
        assert_eq!(compare("latest~1", "latest", true), 1);
        assert_eq!(compare("latest~1", "latest", false), 0);
        // Faster is not a failure.
        assert_eq!(compare("latest", "latest~1", true), 0);
    }
}
