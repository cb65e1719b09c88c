//! `runs`, `show` and `export`: the stored runs listed, one shown as `run` showed it, one
//! exported.

use super::{open_store, write_output};

use crate::args::{DbArg, FilterArgs};
use crate::context::Ctx;
use crate::ui::usage;
use anyhow::Result;
use cryptoscope_model::RunFile;
use cryptoscope_report::table;
use cryptoscope_store::RunSummary;

/// What `runs` found or did: the stored runs, newest first, or what `--prune` removed.
pub enum Listing {
    Runs {
        runs: Vec<RunSummary>,
        /// The store, as it names itself.
        location: String,
    },
    Pruned {
        removed: Vec<String>,
        kept: usize,
        location: String,
    },
}

impl Listing {
    /// As `runs` prints it.
    pub fn render(&self) -> String {
        match self {
            Listing::Pruned {
                removed,
                kept,
                location,
            } => format!(
                "Pruned {} run{} from {location}; kept the newest {kept}.\n",
                removed.len(),
                if removed.len() == 1 { "" } else { "s" },
            ),
            Listing::Runs { runs, location } => {
                let rows: Vec<Vec<String>> = runs.iter().map(runs_row).collect();
                format!(
                    "{}{} runs in {location}\n",
                    table::render(
                        &[
                            "run", "name", "group", "started", "machine", "suites", "measured", "failed", "results",
                            "status"
                        ],
                        &rows,
                        &[false, false, false, false, false, false, true, true, true, false]
                    ),
                    runs.len()
                )
            }
        }
    }
}

/// One stored run's row of the `runs` table.
fn runs_row(r: &RunSummary) -> Vec<String> {
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
}

/// The stored runs, or with `prune` the newest `prune` kept and the older ones removed with
/// everything stored under them.
pub fn runs(ctx: &Ctx, prune: Option<usize>, db: &DbArg) -> Result<Listing> {
    let mut store = open_store(ctx, db)?;
    let runs = store.runs().map_err(|e| usage(e.to_string()))?;
    let location = store.location().to_string();
    let Some(keep) = prune else {
        return Ok(Listing::Runs { runs, location });
    };
    let removed: Vec<String> = runs.iter().skip(keep).map(|r| r.id.clone()).collect();
    for id in &removed {
        store.delete_run(id).map_err(|e| usage(e.to_string()))?;
    }
    Ok(Listing::Pruned {
        kept: runs.len().min(keep),
        removed,
        location,
    })
}

/// `runs`: the table, or what was pruned.
pub fn cmd_runs(ctx: &Ctx, prune: Option<usize>, db: &DbArg) -> Result<i32> {
    out!(ctx, "{}", runs(ctx, prune, db)?.render());
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

/// A stored run in one of `export`'s formats: the run as it was read (and narrowed by the
/// filter) and its text.
pub struct Exported {
    pub run: RunFile,
    pub text: String,
}

/// `run` of the store in `format` (json, csv, markdown, github-benchmark), nothing written.
pub fn export(ctx: &Ctx, run: &str, format: &str, filter: &FilterArgs, db: &DbArg) -> Result<Exported> {
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
    Ok(Exported { run: r, text })
}

/// `export`: the text on standard output, or in `out`.
pub fn cmd_export(
    ctx: &Ctx,
    run: &str,
    format: &str,
    out: Option<&std::path::Path>,
    filter: &FilterArgs,
    db: &DbArg,
) -> Result<i32> {
    let text = export(ctx, run, format, filter, db)?.text;
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
