//! `cryptoscope ct`: the constant-time audit over the catalogue, and its figures beside the
//! speed tables.

use crate::args::CtArgs;
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::gated::{gated, GateOptions};
use crate::stored::open_app_store;
use crate::ui::{usage, Progress};
use crate::{ct, gating, util};
use anyhow::Result;
use cryptoscope_measure::clock::{Clock, ClockChoice};
use cryptoscope_model::apps::ct::{Audited, Dudect, Memcheck, Setup, Speed};
use cryptoscope_model::apps::Item;
use cryptoscope_model::{GateStatus, RunFile, SCHEMA};
use std::time::Duration;

/// What the audit of one subject needs: the catalogue, the declared public values, the
/// methods chosen and their settings.
struct Audit<'a> {
    cat: &'a Catalogue,
    decls: &'a [ct::Declared],
    tmp: &'a std::path::Path,
    timeout: Duration,
    dd: ct::DudectSettings,
    use_memcheck: bool,
    use_dudect: bool,
}

impl Audit<'_> {
    /// Audits one gated subject: memcheck once, then dudect per operation. Each operation's
    /// item goes to `sink` as soon as it exists; returns whether the subject crashed or timed
    /// out under memcheck.
    fn subject(&self, d: &cryptoscope_catalogue::Descriptor, pb: &Progress, sink: &mut dyn FnMut(Audited)) -> bool {
        pb.message(&format!("memcheck {}", d.id));
        let mc = if self.use_memcheck {
            Some(ct::memcheck(self.cat, d, self.decls, self.tmp, self.timeout))
        } else {
            None
        };
        let failed = matches!(&mc, Some(Err(e)) if e.starts_with("crashed") || e.starts_with("timed out"));
        for op in d.ct_operations() {
            sink(self.operation(d, op, mc.as_ref(), pb));
        }
        failed
    }

    /// One operation's item: memcheck's finding, dudect warm (and cold where tables show
    /// best), and the verdict over both.
    fn operation(
        &self,
        d: &cryptoscope_catalogue::Descriptor,
        op: &str,
        mc: Option<&std::result::Result<ct::MemcheckRun, String>>,
        pb: &Progress,
    ) -> Audited {
        let mcv = mc.map_or(Memcheck::status("not run"), |m| ct::memcheck_value(m, op));
        let mut dudects = std::collections::BTreeMap::new();
        if self.use_dudect {
            pb.message(&format!("dudect {} {op}", d.id));
            dudects.insert("warm".into(), ct::dudect(self.cat, d, op, false, &self.dd));
            // Table-driven code shows best with the caches evicted (the family says where).
            if d.family.info().ct_cold.contains(&op) {
                dudects.insert("cold".into(), ct::dudect(self.cat, d, op, true, &self.dd));
            }
        }
        // A declared public value that makes the time vary: a dudect leak here cannot be told
        // from it, and says so.
        let timing = ct::declared_timing(self.decls, &d.algorithm, op);
        if let Some(t) = &timing {
            for v in dudects.values_mut().filter(|v| v.status == "leak") {
                v.inconclusive = Some(t.clone());
            }
        }
        let dv: Vec<&Dudect> = dudects.values().collect();
        let verdict = ct::verdict(&mcv, &dv, timing.is_some());
        Audited {
            algorithm: Some(d.algorithm.clone()),
            provider: Some(d.provider.clone()),
            implementation: Some(d.implementation.clone()),
            verdict: verdict.into(),
            gate: "pass".into(),
            memcheck: Some(mcv),
            dudect: Some(dudects),
            ..ct::audited(d, op)
        }
    }
}

/// The items of a subject that failed its gate: not audited, with the gate's cause.
fn not_audited(d: &cryptoscope_catalogue::Descriptor, v: &gating::Verdict) -> Vec<Audited> {
    d.ct_operations()
        .into_iter()
        .map(|op| Audited {
            verdict: "not audited".into(),
            gate: v.status.as_str().into(),
            gate_detail: Some(v.detail.clone()),
            ..ct::audited(d, op)
        })
        .collect()
}

/// The audit's settings from its arguments: (samples, budget in seconds).
fn ct_settings(a: &CtArgs) -> Result<(u64, f64)> {
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    let samples = a.samples.unwrap_or(if a.quick { 20_000 } else { 100_000 });
    if samples < 2_000 {
        return Err(usage("--samples must be at least 2000"));
    }
    let budget = a.time_budget.unwrap_or(if a.quick { 2.0 } else { 10.0 });
    if !(budget > 0.0 && budget.is_finite()) {
        return Err(usage("--time-budget must be a positive number of seconds"));
    }
    Ok((samples, budget))
}

/// The run record of an audit: its settings echo and the machine.
fn ct_run_file(
    ctx: &Ctx,
    a: &CtArgs,
    run_id: &str,
    started_at: &str,
    picked: &[cryptoscope_catalogue::Descriptor],
    env: cryptoscope_measure::env::Environment,
) -> RunFile {
    RunFile {
        schema: SCHEMA.into(),
        run_id: run_id.to_string(),
        started_at: started_at.to_string(),
        finished_at: String::new(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: cryptoscope_model::RecordedCommand::new(ctx.args.iter()),
        config: cryptoscope_model::RunConfig {
            suites: vec!["ct".into()],
            algorithms: picked
                .iter()
                .map(|d| d.algorithm.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            quick: a.quick,
            rounds: 1,
            ..Default::default()
        },
        environment: env,
        results: Vec::new(),
        applications: Vec::new(),
    }
}

/// What `ct` audits: the selection, or with none named the whole catalogue (every family,
/// every algorithm).
fn audited(a: &CtArgs) -> Result<crate::catalog::Selection> {
    let no_selection = a.sel.suite.is_empty() && a.sel.alg.is_empty() && a.sel.provider.is_empty();
    let mut selection = a.sel.selection()?;
    if no_selection {
        selection.suites = cryptoscope_catalogue::names::suites()
            .iter()
            .map(|s| s.to_string())
            .collect();
        selection.all = true;
    }
    Ok(selection)
}

/// valgrind's version line, if it is installed; the memcheck method cannot run without it.
fn valgrind_for(memcheck: bool) -> Result<Option<String>> {
    let valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if memcheck && valgrind.is_none() {
        return Err(usage(
            "valgrind is not installed (the memcheck method needs it): run scripts/setup.sh, or use --method dudect",
        ));
    }
    Ok(valgrind)
}

pub fn cmd_ct(a: &CtArgs, ctx: &Ctx) -> Result<i32> {
    let selection = audited(a)?;
    let (samples, budget) = ct_settings(a)?;
    let use_memcheck = a.method != "dudect";
    let use_dudect = a.method != "memcheck";
    let decls = ct::declarations().map_err(usage)?;
    let valgrind = valgrind_for(use_memcheck)?;
    let (mut store, json_out) = open_app_store(ctx, a.db.as_deref(), a.json.as_ref())?;
    let gate = GateOptions::of(ctx, &a.gate, true)?;
    let (gated, mut pb) = gated(ctx, &gate, |cat| selection.pick(cat), |picked| picked.len() as u64 * 2)?;
    let (cat, picked, verdicts) = (&gated.cat, &gated.picked, &gated.verdicts);
    let (started_at, _) = util::now_utc();
    let run_id = util::run_id();
    let timeout = gate.timeout;
    let clock = Clock::new(ClockChoice::Tsc);
    let dd = ct::DudectSettings {
        samples,
        budget: Duration::from_secs_f64(budget),
        tsc_hz: clock.tsc_hz(),
        timeout,
    };
    let tmp = util::private_temp_dir("ct")?;
    // The run is recorded first and every item committed as soon as it exists, so an
    // interrupted audit keeps what it found.
    let mut env = cryptoscope_measure::env::capture(clock.tsc_hz(), clock.perf_status());
    if let Some(v) = &valgrind {
        env.libraries.insert("valgrind".into(), v.clone());
    }
    let mut run_file = ct_run_file(ctx, a, &run_id, &started_at, picked, env);
    let mut store_error: Option<String> = store.begin_run(&run_file).err().map(|e| e.to_string());
    let setup = Setup {
        valgrind: valgrind.clone(),
        methods: Some(a.method.clone()),
        dudect_samples: Some(samples),
        dudect_budget_s: Some(budget),
        threshold: Some(cryptoscope_measure::ttest::THRESHOLD),
        clock: Some(clock.source().label().into()),
        tsc_hz: clock.tsc_hz(),
        rest: Default::default(),
    };
    let mut items = vec![setup.to_app("setup")];
    if let Err(e) = store.add_app_result(&run_id, &items[0]) {
        store_error.get_or_insert(e.to_string());
    }
    let audit = Audit {
        cat,
        decls: &decls,
        tmp: &tmp.path,
        timeout,
        dd,
        use_memcheck,
        use_dudect,
    };
    let mut failed = 0;
    for d in picked {
        let v = &verdicts[&d.id];
        // Every item is committed as soon as it exists.
        let mut keep = |mut audited: Audited, attach: bool| {
            if attach {
                ct_attach_speed(&mut store, std::slice::from_mut(&mut audited));
            }
            let item = audited.stored();
            if let Err(e) = store.add_app_result(&run_id, &item) {
                store_error.get_or_insert(e.to_string());
            }
            items.push(item);
        };
        if v.status != GateStatus::Pass {
            if !matches!(v.status, GateStatus::Unavailable) {
                failed += 1;
            }
            pb.step(
                &format!("audit {}", d.id),
                &format!("not audited ({})", v.status.as_str()),
            );
            for item in not_audited(d, v) {
                keep(item, false);
            }
        } else {
            failed += usize::from(audit.subject(d, &pb, &mut |item| keep(item, true)));
            pb.step(&format!("audit {}", d.id), "done");
        }
    }
    pb.finish();
    run_file.finished_at = util::now_utc().0;
    if let Err(e) = store.finish_run(&run_id, &run_file.finished_at) {
        store_error.get_or_insert(e.to_string());
    }
    out!(ctx, "{}", cryptoscope_report::ct::table(&items));
    if let Some(p) = json_out {
        std::fs::write(&p, serde_json::to_string_pretty(&items)?)
            .map_err(|e| usage(format!("cannot write {}: {e}", p.display())))?;
        outln!(ctx, "JSON:    {}", p.display());
    }
    match store_error {
        None => outln!(
            ctx,
            "Store:   {} (run {run_id}; `cryptoscope report {run_id}`)",
            store.location()
        ),
        Some(e) => {
            errln!(ctx, "error: results not stored: {e}");
            return Ok(2);
        }
    }
    Ok(i32::from(failed > 0))
}

/// Adds to each audited item the latest speed the store holds for its subject (the most
/// recent of the last 20 runs that measured it).
pub(crate) fn ct_attach_speed(store: &mut cryptoscope_store::Store, items: &mut [Audited]) {
    let Ok(runs) = store.runs() else { return };
    let mut wanted: Vec<usize> = (0..items.len()).collect();
    for r in runs.iter().filter(|r| r.measured > 0).take(20) {
        if wanted.is_empty() {
            break;
        }
        let Ok(run) = store.load(&r.id) else { continue };
        wanted.retain(|&i| {
            let Some(speed_op) = ct::speed_operation(&items[i].operation) else {
                return false;
            };
            let subject = &items[i].subject;
            match run
                .results
                .iter()
                .find(|x| x.subject == *subject && x.operation == speed_op && x.median_ns.is_some())
            {
                Some(row) => {
                    items[i].speed = Some(Speed {
                        run: run.run_id.clone(),
                        operation: speed_op.into(),
                        median_ns: row.median_ns,
                        median_cycles: row.median_cycles,
                    });
                    false
                }
                None => true,
            }
        });
    }
}
