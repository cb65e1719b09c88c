//! What the store holds of constant-time audits (`cryptoscope ct`) for the subjects of a
//! run: shown under its speed table (`run`, `show`) and handed to its answers and report.

use crate::context::Ctx;
use cryptoscope_model::apps::ct::Audited;
use cryptoscope_model::ResultRow;

/// The latest constant-time audits the store holds for the subjects measured in some rows:
/// gathered once, printed under a speed table or handed to the answers.
pub(crate) struct CtAudits {
    /// Subjects with a median in the rows.
    measured: usize,
    /// Each audited subject, its latest audit run, and that audit's (operation, verdict)s.
    audited: std::collections::BTreeMap<String, (String, Vec<(String, String)>)>,
    /// (subject, operation, verdict, ct run) of every leak or timing difference found.
    flags: Vec<(String, String, String, String)>,
}

/// The latest `cryptoscope ct` audit (of the last 10) of each subject measured in `rows`.
/// `None` when nothing in `rows` was measured or the store cannot list its runs.
pub(crate) fn ct_audits(store: &mut cryptoscope_store::Store, rows: &[ResultRow]) -> Option<CtAudits> {
    let measured: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter(|r| r.median_ns.is_some())
        .map(|r| r.subject.as_str())
        .collect();
    if measured.is_empty() {
        return None;
    }
    let runs = store.runs().ok()?;
    let mut audited: std::collections::BTreeMap<String, (String, Vec<(String, String)>)> = Default::default();
    let mut flags: Vec<(String, String, String, String)> = Vec::new();
    for r in runs.iter().filter(|r| r.suites == "ct").take(10) {
        let Ok(run) = store.load(&r.id) else { continue };
        let mut here: std::collections::BTreeMap<String, (String, Vec<(String, String)>)> = Default::default();
        for a in Audited::all(&run.applications).filter(|a| {
            measured.contains(a.subject.as_str()) && !audited.contains_key(&a.subject) && a.verdict != "not audited"
        }) {
            here.entry(a.subject)
                .or_insert_with(|| (r.id.clone(), Vec::new()))
                .1
                .push((a.operation, a.verdict));
        }
        for (s, op, v) in cryptoscope_report::ct::flagged(&run.applications) {
            if here.contains_key(&s) {
                flags.push((s, op, v, r.id.clone()));
            }
        }
        audited.extend(here);
    }
    Some(CtAudits {
        measured: measured.len(),
        audited,
        flags,
    })
}

impl CtAudits {
    /// The lines under a speed table: how many subjects were audited and every finding.
    pub(crate) fn print(&self, ctx: &Ctx) {
        if self.audited.is_empty() {
            outln!(
                ctx,
                "\nConstant-time: none of these subjects has been audited yet (`cryptoscope ct`)."
            );
            return;
        }
        let subjects: std::collections::BTreeSet<&str> = self.flags.iter().map(|f| f.0.as_str()).collect();
        outln!(
            ctx,
            "\nConstant-time (latest `cryptoscope ct` audit of {} of the {} measured subjects): {} with findings{}",
            self.audited.len(),
            self.measured,
            subjects.len(),
            if self.flags.is_empty() { "." } else { ":" }
        );
        for (s, op, v, id) in &self.flags {
            outln!(ctx, "  {s} {op}: {v} (ct run {id})");
        }
    }

    /// (subject, verdict summary) per audited subject, for the answers: the verdict its
    /// operations share ("no leak found"), or each operation's that found something, and
    /// the audit run.
    pub(crate) fn summaries(&self) -> Vec<(String, String)> {
        self.audited
            .iter()
            .map(|(subject, (run, ops))| {
                const CLEAN: &str = "no leak found";
                let first = ops.first().map(|o| o.1.as_str()).unwrap_or_default();
                let verdict = if ops.iter().all(|o| o.1 == first) {
                    first.to_string()
                } else {
                    let mut parts: Vec<String> = ops
                        .iter()
                        .filter(|o| o.1 != CLEAN)
                        .map(|(op, v)| format!("{op} {v}"))
                        .collect();
                    if parts.len() < ops.len() {
                        parts.push(format!("others {CLEAN}"));
                    }
                    parts.join(", ")
                };
                (subject.clone(), format!("{verdict} (ct run {run})"))
            })
            .collect()
    }
}
