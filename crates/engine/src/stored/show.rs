//! `runs`, `show` and `export`: the stored runs listed, one shown as `run` showed it, one
//! exported.

use super::{open_store, write_output};

use crate::args::{DbArg, FilterArgs};
use crate::context::Ctx;
use crate::ui::usage;
use anyhow::Result;
use cryptoscope_model::RunFile;
use cryptoscope_report::table;

pub fn cmd_runs(ctx: &Ctx, prune: Option<usize>, db: &DbArg) -> Result<i32> {
    let mut store = open_store(ctx, db)?;
    if let Some(keep) = prune {
        // The newest `keep` runs stay; older ones go with everything stored under them.
        let runs = store.runs().map_err(|e| usage(e.to_string()))?;
        let old: Vec<&str> = runs.iter().skip(keep).map(|r| r.id.as_str()).collect();
        for id in &old {
            store.delete_run(id).map_err(|e| usage(e.to_string()))?;
        }
        outln!(
            ctx,
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
    out!(
        ctx,
        "{}",
        table::render(
            &["run", "name", "group", "started", "machine", "suites", "measured", "failed", "results", "status"],
            &rows,
            &[false, false, false, false, false, false, true, true, true, false]
        )
    );
    outln!(ctx, "{} runs in {}", runs.len(), store.location());
    Ok(0)
}

pub fn cmd_show(
    ctx: &Ctx,
    run: &str,
    baseline: Option<&str>,
    against: Option<&str>,
    filter: &FilterArgs,
    db: &DbArg,
) -> Result<i32> {
    let mut store = open_store(ctx, db)?;
    // A group on several machine types is shown a part per type, each with its machine.
    let parts = store.load_all(run).map_err(|e| usage(e.to_string()))?;
    let previous = match against {
        None => None,
        Some(a) => {
            let mut p = store.load(a).map_err(|e| usage(e.to_string()))?;
            filter.apply(&mut p)?;
            Some(p)
        }
    };
    for (i, mut r) in parts.into_iter().enumerate() {
        if i > 0 {
            outln!(ctx, "\n");
        }
        filter.apply(&mut r)?;
        show_one(ctx, &mut store, &r, baseline, previous.as_ref());
    }
    Ok(0)
}

/// One run (or one machine type's part of a group) as `show` prints it.
fn show_one(
    ctx: &Ctx,
    store: &mut cryptoscope_store::Store,
    r: &RunFile,
    baseline: Option<&str>,
    previous: Option<&RunFile>,
) {
    let e = &r.environment;
    outln!(
        ctx,
        "run {}  started {}  finished {}",
        r.run_id,
        r.started_at,
        if r.finished_at.is_empty() {
            "(incomplete)"
        } else {
            &r.finished_at
        }
    );
    outln!(
        ctx,
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
    if let Some(x) = &e.emulated {
        outln!(ctx, "EMULATED: {x}");
    }
    if let Some(p) = &e.preflight {
        for w in &p.warnings {
            outln!(ctx, "preflight warning: {} (fix: {})", w.what, w.fix);
        }
    }
    outln!(ctx, "command: {}", r.command.display());
    // Runs of application drivers (ct, tls, tunnel, tahoe) have no primitive results: no
    // empty speed table for them.
    if !r.results.is_empty() || r.applications.is_empty() {
        out!(ctx, "\n{}", table::results(&r.results));
    }
    // The families' own tables, as `run` prints them.
    for t in crate::run::summary::family_tables(&r.results, r.environment.core_per_tsc) {
        out!(ctx, "\n{t}");
    }
    // Application drivers' tables.
    for t in cryptoscope_report::apps::tables(&r.applications) {
        out!(ctx, "\n{t}");
    }
    crate::run::summary::stored_extras(ctx, r);
    if let Some(b) = baseline.or(r.config.baseline.as_deref()) {
        match table::speedups(&r.results, b) {
            Some(t) => out!(ctx, "\nSpeed-up against {b}:\n{t}"),
            None => outln!(ctx, "\nNo measured subject of this run is the baseline `{b}`."),
        }
    }
    let ct = super::ct_audits(store, &r.results)
        .map(|c| c.summaries())
        .unwrap_or_default();
    crate::run::summary::print_answers(ctx, r, &ct, previous);
}

pub fn cmd_export(
    ctx: &Ctx,
    run: &str,
    format: &str,
    out: Option<&std::path::Path>,
    filter: &FilterArgs,
    db: &DbArg,
) -> Result<i32> {
    let mut store = open_store(ctx, db)?;
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
            if write_output(ctx, p, &text)? {
                errln!(ctx, "wrote {}", p.display());
            }
        }
        None => out!(ctx, "{text}"),
    }
    Ok(0)
}
