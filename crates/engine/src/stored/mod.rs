//! Commands over stored runs: `runs`, `show`, `export` ([`show`]), `report`, `compare`
//! with runs, their history or published figures ([`compare`]), and opening the results
//! database.

mod audits;
mod compare;
mod show;

pub(crate) use audits::ct_audits;
pub(crate) use compare::published_path;
pub use compare::{cmd_compare, cmd_published, compare, CompareArgs, Compared, OnMachine};
pub use show::{cmd_export, cmd_runs, cmd_show, export, runs, Exported, Listing};

use crate::args::{store_location, DbArg};
use crate::context::{Ctx, Env};
use crate::ui::usage;
use crate::util;
use anyhow::Result;
use cryptoscope_model::RunFile;
use std::path::{Path, PathBuf};

/// Opens (creating if needed) the results database at `location`, a path or a PostgreSQL
/// server, and tells the user on stderr what opening it changed or warned about.
pub fn open_db(ctx: &Ctx, location: &str) -> Result<cryptoscope_store::Store> {
    let store = cryptoscope_store::Store::open_any(location).map_err(|e| usage(e.to_string()))?;
    for w in store.warnings() {
        errln!(ctx, "warning: {w}");
    }
    if let Some(m) = store.migrated() {
        let scrubbed = match m.scrubbed_commands {
            0 => "no stored command line held a password".to_string(),
            1 => "the password in 1 stored command line is now ***".to_string(),
            n => format!("the passwords in {n} stored command lines are now ***"),
        };
        errln!(
            ctx,
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
pub fn open_app_store(
    ctx: &Ctx,
    db: Option<&str>,
    json: Option<&PathBuf>,
) -> Result<(cryptoscope_store::Store, Option<PathBuf>)> {
    let json_out = json.map(|p| util::check_writable(p).map_err(usage)).transpose()?;
    let store = open_db(ctx, &store_location(&ctx.env, db))?;
    Ok((store, json_out))
}

/// Opens an existing results database for reading (a missing file is an input error).
pub(crate) fn open_store(ctx: &Ctx, db: &DbArg) -> Result<cryptoscope_store::Store> {
    let location = store_location(&ctx.env, db.as_deref());
    if !cryptoscope_store::is_server(&location) && !Path::new(&location).exists() {
        return Err(usage(format!(
            "no results database at {location} (run `cryptoscope run` first, or pass --db)"
        )));
    }
    open_db(ctx, &location)
}

/// Where a command's output goes: `-` is standard output; a file's directory must exist
/// (nothing is created silently where a typo would put it).
pub(crate) fn write_output(ctx: &Ctx, out: &std::path::Path, text: &str) -> Result<bool> {
    if out.as_os_str() == "-" {
        out!(ctx, "{text}");
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
pub(crate) fn published_figures(env: &Env) -> Vec<cryptoscope_report::published::Published> {
    published_path(env, None)
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| cryptoscope_report::published::parse(&t).ok())
        .unwrap_or_default()
}

/// What a report shows beyond its runs: the published figures, and the stored
/// constant-time verdicts (`ct`: subject, summary) of the runs' subjects.
pub(crate) fn report_extras(ctx: &Ctx, ct: Vec<(String, String)>) -> cryptoscope_report::html::Extras {
    cryptoscope_report::html::Extras {
        published: published_figures(&ctx.env),
        ct,
    }
}

pub fn cmd_report(ctx: &Ctx, runs: &[String], out: Option<&std::path::Path>, db: &DbArg) -> Result<i32> {
    let mut store = open_store(ctx, db)?;
    let refs: Vec<String> = if runs.is_empty() {
        vec!["latest".into()]
    } else {
        runs.to_vec()
    };
    let mut loaded = Vec::new();
    for r in &refs {
        // A group on several machine types is a run per type: never merged across machines.
        loaded.extend(store.load_all(r).map_err(|e| usage(e.to_string()))?);
    }
    let rows: Vec<cryptoscope_model::ResultRow> = loaded.iter().flat_map(|r| r.results.iter().cloned()).collect();
    let ct = ct_audits(&mut store, &rows).map(|c| c.summaries()).unwrap_or_default();
    let extras = report_extras(ctx, ct);
    match out {
        // Given: written exactly there (`-`: standard output).
        Some(p) => {
            if write_output(ctx, p, &cryptoscope_report::html::render_with(&loaded, &extras))? {
                outln!(ctx, "Report: {}", p.display());
            }
        }
        None => {
            let p = PathBuf::from(format!("results/report-{}.html", loaded[0].run_id));
            write_report(&loaded, &extras, &p)?;
            outln!(ctx, "Report: {}", p.display());
        }
    }
    Ok(0)
}
