//! The run engine: settings derived once from the arguments, the subjects picked, the gate,
//! the passes (memory, scale, counters, instructions, timing), rounds and resume, and the
//! reporters that take the results as they come and when the run ends.
//!
//! `cryptoscope run`, `memory` and `scale` all come here; the commands only build
//! [`RunArgs`].

pub(crate) mod measure;
pub(crate) mod passes;
mod passes_cmd;
mod report;
mod select;
mod settings;
pub(crate) mod shards;
pub(crate) mod summary;
mod timing;

use crate::args::{run_group, store_location, RunArgs};
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::gated;
use crate::stored::open_db;
use crate::ui::{usage, Progress};
use anyhow::Result;
use cryptoscope_measure::clock::{Clock, ClockChoice};
use cryptoscope_measure::env::Environment;
use cryptoscope_model::{ResultRow, RunFile, SCHEMA};
pub use passes_cmd::{cmd_memory, cmd_scale};
use report::StoreReporter;
use settings::Settings;

/// How `run --resume` reads a stored command line back into [`RunArgs`]: the binary's own
/// parser, `Some` only for a `cryptoscope run` command line (the engine does not know the
/// whole command line). The binary hands it over in the context ([`Ctx::run_parser`]).
pub type RunParser = fn(&[String]) -> Option<RunArgs>;

/// A run being resumed: its id, start and group, and the rows it stored.
pub(crate) struct Resumed {
    pub(crate) run_id: String,
    pub(crate) started_at: String,
    pub(crate) rows: Vec<ResultRow>,
}

/// `run --resume RUN`: the stored command line of RUN, parsed again, run under RUN's id
/// with what it stored kept.
pub fn cmd_resume(reference: &str, a: &RunArgs, ctx: &Ctx) -> Result<i32> {
    // The stored command line decides what is measured: any other flag would be ignored,
    // so it is refused rather than dropped without a word.
    if let Some(extra) = flags_besides_resume(ctx.args.iter().skip(1).cloned()) {
        return Err(usage(format!(
            "run --resume repeats the stored command line; {extra} would be ignored: drop it (or start a new run)"
        )));
    }
    let location = store_location(&ctx.env, a.db.as_deref());
    let mut store = open_db(ctx, &location)?;
    let id = store.resolve(reference).map_err(|e| usage(e.to_string()))?;
    continue_run(store, location, id, a, ctx)
}

/// Resumes run `id` of `store` (at `location`) with its stored command line; `a` gives
/// only where its results file goes.
fn continue_run(
    mut store: cryptoscope_store::Store,
    location: String,
    id: String,
    a: &RunArgs,
    ctx: &Ctx,
) -> Result<i32> {
    let quiet = ctx.quiet;
    let status = store
        .runs()
        .map_err(|e| usage(e.to_string()))?
        .into_iter()
        .find(|r| r.id == id)
        .map(|r| r.status)
        .unwrap_or_default();
    let prev = store.load_run(&id).map_err(|e| usage(e.to_string()))?;
    if status == "complete" {
        outln!(
            ctx,
            "Run {id} is complete: nothing to resume (`cryptoscope show {id}`)."
        );
        return Ok(0);
    }
    let mut orig = match ctx.run_parser.and_then(|parse| parse(&prev.command)) {
        Some(r) => r,
        None => {
            return Err(usage(format!(
                "run {id} was not made by `cryptoscope run` (command: {}), so it cannot be resumed",
                prev.command.display()
            )))
        }
    };
    if orig.resume.is_some() {
        return Err(usage(format!(
            "run {id} stored a resume command line; cannot resume it"
        )));
    }
    // The database is where the run is now, whatever the original command said.
    orig.db.db = Some(location);
    // And the results file goes where this command says, when it says.
    if a.json.is_some() {
        orig.json = a.json.clone();
    }
    let stored = prev.results.len();
    if !quiet {
        errln!(
            ctx,
            "resuming run {id} ({stored} results stored): {}",
            prev.command.iter().skip(1).cloned().collect::<Vec<_>>().join(" ")
        );
    }
    drop(store);
    run(
        &orig,
        ctx,
        Some(Resumed {
            run_id: id,
            started_at: prev.started_at,
            rows: prev.results,
        }),
    )
}

/// The first flag of a `run --resume` command line other than those resuming takes:
/// `--resume`, `--db` and `--json` (where the run and its file are now), `--quiet`/`-q` and
/// `--memory-limit`.
fn flags_besides_resume(argv: impl Iterator<Item = String>) -> Option<String> {
    const KEPT: &[&str] = &["--resume", "--db", "--json", "--quiet", "-q", "--memory-limit"];
    argv.skip_while(|a| a != "run")
        .skip(1)
        // `-` alone is a value (`--json -`: standard output), not a flag.
        .filter(|a| a.starts_with('-') && a != "-")
        .map(|a| a.split('=').next().unwrap_or_default().to_string())
        .find(|f| !KEPT.contains(&f.as_str()))
}

/// `cryptoscope run`: a new run, or `--resume` of an interrupted one.
pub fn cmd_run(a: &RunArgs, ctx: &Ctx) -> Result<i32> {
    match &a.resume {
        Some(r) => cmd_resume(r, a, ctx),
        None => run(a, ctx, None),
    }
}

/// One run from its arguments to its exit code: 0, 1 when a subject failed its gate (or
/// crashed, or timed out), 2 when results could not be stored.
pub(crate) fn run(a: &RunArgs, ctx: &Ctx, resumed: Option<Resumed>) -> Result<i32> {
    match measured(a, ctx, resumed)? {
        Ran::Ended(code) => Ok(code),
        Ran::Measured(m) => m.conclude(ctx),
    }
}

/// What [`measure_run`] comes back with.
pub enum Ran<'a> {
    /// Measured and stored; nothing written about it yet.
    Measured(Box<Measured<'a>>),
    /// Ended before measuring anything new (a group's shard already complete, or continued
    /// under its earlier run and concluded there), with its exit code.
    Ended(i32),
}

/// A run measured and stored, before anything about it is written: [`Measured::conclude`]
/// writes the results file, the tables, the report and where everything went, as `run`
/// does; a caller may read the run first.
pub struct Measured<'a> {
    /// The run's record: its command, settings, machine and every result row.
    pub run_file: RunFile,
    /// The group the run belongs to (its own id when it has none).
    pub group: String,
    s: Settings<'a>,
    out: StoreReporter,
    gated: gated::Gated,
    clock: Clock,
}

impl Measured<'_> {
    /// Why some of its results could not be stored (all are in the run file), if so.
    pub fn store_error(&self) -> Option<&str> {
        self.out.error.as_deref()
    }

    /// The providers asked for by name that were missing or broken, and why.
    pub fn absent(&self) -> Vec<(String, String)> {
        self.gated.cat.named_but_missing(&self.s.selection.providers)
    }

    /// Writes what `run` writes when it ends; its exit code.
    pub fn conclude(mut self, ctx: &Ctx) -> Result<i32> {
        conclude(
            ctx,
            &self.s,
            &self.run_file,
            &mut self.out,
            &self.gated.cat,
            &self.clock,
            &self.group,
        )
    }
}

/// `run` (not `--resume`) up to the end of measuring: the run is stored and returned, and
/// nothing about it written but its progress and warnings.
pub fn measure_run<'a>(a: &'a RunArgs, ctx: &Ctx) -> Result<Ran<'a>> {
    if a.resume.is_some() {
        return Err(usage("measure_run does not resume a run: use cmd_run"));
    }
    measured(a, ctx, None)
}

/// The run measured and stored, or ended early.
fn measured<'a>(a: &'a RunArgs, ctx: &Ctx, resumed: Option<Resumed>) -> Result<Ran<'a>> {
    let s = Settings::from_args(ctx, a, resumed.as_ref())?;
    ctx.workers.set_long_lived(!a.fresh_workers);
    let location = store_location(&ctx.env, a.db.as_deref());
    let mut store = open_db(ctx, &location)?;
    if resumed.is_none() {
        // A group is one command's shards: a shard it holds is continued, not measured again.
        let group = run_group(&ctx.env, a.group.as_deref(), &s.run_id);
        match shards::join(
            &mut store,
            &group,
            &cryptoscope_model::RecordedCommand::new(ctx.args.iter()),
        )? {
            shards::Join::New => {}
            shards::Join::Complete(id) => {
                outln!(
                    ctx,
                    "{} of group {group} is complete (run {id}): nothing to measure (`cryptoscope show {id}`).",
                    shards::which(a.shard.as_deref())
                );
                return Ok(Ran::Ended(0));
            }
            shards::Join::Resume(id) => {
                // Said even with --quiet: a job's log must tell why it measured less.
                errln!(
                    ctx,
                    "{} of group {group} was started before (run {id}) and did not finish: continuing it",
                    shards::which(a.shard.as_deref())
                );
                return continue_run(store, location, id, a, ctx).map(Ran::Ended);
            }
        }
    }
    if let (Some(name), None) = (&a.name, &resumed) {
        check_name(name)?;
        if let Some(id) = store.named(name).map_err(|e| usage(e.to_string()))? {
            return Err(usage(format!("the name {name} is taken by run {id}: choose another")));
        }
    }
    let mut split = None;
    let selected = gated::select(ctx, |cat| {
        let p = select::pick(&s, cat, resumed.as_ref(), ctx)?;
        let todo = p.todo.clone();
        split = Some(p);
        Ok(todo)
    })?;
    let picked = split.expect("picked");
    let clock = Clock::new(ClockChoice::Auto);
    let measure = s.measure_settings(&clock, picked.stored_ops);
    let mut run_file = RunFile {
        schema: SCHEMA.into(),
        run_id: s.run_id.clone(),
        started_at: s.started_at.clone(),
        finished_at: String::new(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: cryptoscope_model::RecordedCommand::new(ctx.args.iter()),
        config: measure::config_echo(&s.selection, &measure, s.quick, &s.depth, s.rounds, a.baseline.clone()),
        environment: environment(&clock, &selected.cat),
        results: Vec::new(),
        applications: Vec::new(),
    };
    preflight(&mut run_file.environment, measure.cpu, &clock, ctx);
    let group = run_group(&ctx.env, a.group.as_deref(), &s.run_id);
    run_file.config.name = a.name.clone();
    let mut out = StoreReporter::new(store, &s.run_id);
    if resumed.is_some() {
        out.store.reopen_run(&s.run_id).map_err(|e| usage(e.to_string()))?;
    } else {
        out.store
            .begin_run_in_group(&run_file, &group)
            .map_err(|e| usage(e.to_string()))?;
    }

    let mut pb = Progress::new(s.steps(selected.picked.len()), ctx);
    let gate = gated::GateOptions {
        vectors: s.vectors.clone(),
        depth: s.depth.clone(),
        timeout: s.timeout,
    };
    let gated = selected.gate(&gate, &mut pb);
    let (cat, subjects, verdicts) = (&gated.cat, &gated.picked, &gated.verdicts);
    let extras = passes::Extras::measure(ctx, &s, cat, subjects, verdicts, &mut pb)?;
    let timing = timing::Pass {
        cat,
        picked: subjects,
        verdicts,
        extras: &extras,
        settings: &measure,
        partial: &picked.partial,
    };
    let mut rows = timing.run(&s, &mut pb, &mut out)?;
    pb.finish();

    run_file.finished_at = crate::util::now_utc().0;
    if resumed.is_some() {
        // Stored rows first in catalogue order, as an uninterrupted run would list them.
        rows.extend(picked.kept);
        rows.sort_by_key(|r| picked.order.iter().position(|id| *id == r.subject));
    }
    run_file.results = rows;
    // Did the machine hold its speed? Level shifts in any operation's samples say no.
    let (_, stability) = measure::shifts_of(&run_file.results);
    if s.timing {
        run_file.environment.stability = Some(stability);
    }
    out.finish(&run_file, s.timing);
    Ok(Ran::Measured(Box::new(Measured {
        run_file,
        group,
        s,
        out,
        gated,
        clock,
    })))
}

/// A finished run's outputs: the results file (or the results on standard output), the
/// tables and answers, the HTML report, where everything went; its exit code: 0, 1 when a
/// subject failed, 2 when results could not be stored or a provider asked for was missing.
fn conclude(
    ctx: &Ctx,
    s: &Settings,
    run_file: &RunFile,
    out: &mut StoreReporter,
    cat: &Catalogue,
    clock: &Clock,
    group: &str,
) -> Result<i32> {
    if s.out_file.as_os_str() == "-" {
        return results_on_stdout(ctx, run_file, out);
    }
    report::write_results_file(run_file, &s.out_file)?;

    let ct = summary::tables(s, run_file, &mut out.store, ctx);
    let failed = summary::totals(ctx, s, run_file, clock);
    if s.timing && !ctx.quiet {
        summary::print_answers(ctx, run_file, &ct, None);
    }
    let report_note = report::write_html_beside(ctx, run_file, &ct, &s.out_file);
    outln!(ctx, "Results: {}", s.out_file.display());
    outln!(ctx, "Report:  {report_note}");
    let run_id = &s.run_id;
    match &out.error {
        None if group != run_id.as_str() => outln!(
            ctx,
            "Store:   {} (run {run_id}, group {group}; `cryptoscope report group:{group}`)",
            out.store.location()
        ),
        None => outln!(
            ctx,
            "Store:   {} (run {run_id}; `cryptoscope show {run_id}`)",
            out.store.location()
        ),
        Some(e) => {
            errln!(
                ctx,
                "error: some results could not be stored in {}: {e} (all are in {})",
                out.store.location(),
                s.out_file.display()
            );
            return Ok(2);
        }
    }
    // A provider named with --provider whose worker is missing or broken (a vendored
    // version whose build failed): the others were measured, and the run says so and
    // exits 2.
    let absent = cat.named_but_missing(&s.selection.providers);
    for (p, why) in &absent {
        errln!(ctx, "error: provider {p} was asked for but is unavailable: {why}");
    }
    Ok(if !absent.is_empty() {
        2
    } else if failed {
        1
    } else {
        0
    })
}

/// `run --json -`: the results file is the whole of standard output (the tables, the report
/// and the store's lines are for a terminal; the progress and warnings stay on standard
/// error). The exit code is the run's as ever.
fn results_on_stdout(ctx: &Ctx, run_file: &RunFile, out: &StoreReporter) -> Result<i32> {
    outln!(ctx, "{}", serde_json::to_string(run_file)?);
    if let Some(e) = &out.error {
        errln!(
            ctx,
            "error: some results could not be stored in {}: {e} (all are on standard output)",
            out.store.location()
        );
        return Ok(2);
    }
    Ok(i32::from(run_file.results.iter().any(|r| r.gate.is_failure())))
}

/// A run name: letters, digits, `.`, `_` and `-`, starting with a letter, and not one of the
/// words that address runs (`latest`, `last`), so that it can never be read as a run id, a
/// prefix of one, `latest~N` or a group.
fn check_name(name: &str) -> Result<()> {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !name.starts_with("latest")
        && !name.starts_with("last");
    if ok {
        Ok(())
    } else {
        Err(usage(format!(
            "--name {name}: letters, digits, `.`, `_` and `-`, starting with a letter (and not latest or last)"
        )))
    }
}

/// The machine's state, looked at for 200 ms before anything is measured, kept in the
/// environment: one warning line each for what makes numbers worse, with its fix.
pub(crate) fn preflight(env: &mut Environment, cpu: Option<usize>, clock: &Clock, ctx: &Ctx) {
    let quiet = ctx.quiet;
    let look = std::time::Duration::from_millis(200);
    let p = cryptoscope_measure::preflight::run(cpu, look, clock.perf_status());
    if !quiet {
        for w in &p.warnings {
            errln!(ctx, "warning: {} (fix: {})", w.what, w.fix);
        }
    }
    env.preflight = Some(p);
}

/// The machine as the run sees it, with the compilers and the provider libraries' versions.
pub(crate) fn environment(clock: &Clock, cat: &Catalogue) -> Environment {
    let mut env = cryptoscope_measure::env::capture(clock.tsc_hz(), clock.perf_status());
    env.compilers
        .insert("rustc".into(), cryptoscope_worker::build_info::RUSTC.into());
    env.compilers
        .insert("cc".into(), cryptoscope_worker::build_info::C_COMPILER.into());
    let mut versions: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    for d in &cat.subjects {
        versions
            .entry(d.provider.clone())
            .or_default()
            .insert(d.provider_version.clone());
    }
    for (provider, v) in versions {
        env.libraries
            .insert(provider, v.into_iter().collect::<Vec<_>>().join("; "));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::flags_besides_resume;

    fn extra(line: &str) -> Option<String> {
        flags_besides_resume(line.split_whitespace().map(String::from))
    }

    #[test]
    fn resume_refuses_flags_it_would_ignore() {
        assert_eq!(extra("-q run --resume latest --db r.db"), None);
        assert_eq!(extra("run --resume=latest --quiet --memory-limit 8"), None);
        // `-` is standard output, the value of --json, not a flag.
        assert_eq!(extra("run --resume latest --json -"), None);
        assert_eq!(extra("run --resume latest --alg X25519"), Some("--alg".into()));
        assert_eq!(extra("run --resume latest --samples=3"), Some("--samples".into()));
    }
}
