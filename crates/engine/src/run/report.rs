//! Where a run's results go, as they are made and when the run ends (criterion's
//! `Report`/`Reports` shape): the results database row by row, so an interrupted run keeps
//! what it measured; then the results file, the HTML report and the terminal summary.

use crate::context::Ctx;
use crate::stored::write_report;
use anyhow::{Context, Result};
use cryptoscope_model::{ResultRow, RunFile};
use cryptoscope_store::Store;
use std::path::Path;

/// Takes a run's results as they come.
pub(crate) trait Reporter {
    /// One row, as soon as it exists (again after each visit of a multi-round run).
    fn result(&mut self, row: &ResultRow);
}

/// The results database: every row committed when it arrives. A failure to store is kept
/// (the first one) and said at the end; the run goes on and its file holds everything.
pub(crate) struct StoreReporter {
    pub(crate) store: Store,
    run_id: String,
    pub(crate) error: Option<String>,
}

impl StoreReporter {
    pub(crate) fn new(store: Store, run_id: &str) -> StoreReporter {
        StoreReporter {
            store,
            run_id: run_id.to_string(),
            error: None,
        }
    }

    /// Records the end of the run (and the machine's stability when timing ran).
    pub(crate) fn finish(&mut self, run: &RunFile, timing: bool) {
        if timing {
            if let Err(e) = self.store.set_environment(&self.run_id, &run.environment) {
                self.error.get_or_insert(e.to_string());
            }
        }
        if let Err(e) = self.store.finish_run(&self.run_id, &run.finished_at) {
            self.error.get_or_insert(e.to_string());
        }
    }
}

impl Reporter for StoreReporter {
    fn result(&mut self, row: &ResultRow) {
        if let Err(e) = self.store.add_result(&self.run_id, row) {
            self.error.get_or_insert(e.to_string());
        }
    }
}

/// Writes the results file; failing to is an error (the database may not hold everything).
pub(crate) fn write_results_file(run: &RunFile, out_file: &Path) -> Result<()> {
    let text = serde_json::to_string(run)?;
    std::fs::write(out_file, text).with_context(|| format!("writing {}", out_file.display()))
}

/// Writes the HTML report beside the results file; returns what to say about it (its path,
/// or why it was not written — a report is never worth losing the run for).
pub(crate) fn write_html_beside(ctx: &Ctx, run: &RunFile, ct: &[(String, String)], out_file: &Path) -> String {
    let report_file = out_file.with_extension("html");
    let extras = crate::stored::report_extras(ctx, ct.to_vec());
    match write_report(std::slice::from_ref(run), &extras, &report_file) {
        Ok(()) => report_file.display().to_string(),
        Err(e) => format!("not written ({e})"),
    }
}
