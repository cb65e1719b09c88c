//! `cryptoscope ab A B`: did B make it faster? Two subjects of one algorithm timed in short
//! interleaved blocks (A B B A, …) on one pinned CPU, each pair of blocks sharing one moment
//! of the machine, and judged by the paired test of `cryptoscope_measure::paired`. Exact
//! instruction counts are shown beside the verdict, never mixed into it.
//!
//! Both subjects are gated first (a failure is exit code 1 and nothing is measured). Blocks
//! go to long-lived workers (`serve`), which keep each subject's prepared inputs, so a
//! block costs one request; both subjects of one provider share one worker process. The
//! rows of A and B (each block one visit) and the comparison are stored as a run, every few
//! seconds while it runs, so an interruption keeps what was measured.

use crate::context::Ctx;
use crate::gated::{gated, GateOptions, Gated};
use anyhow::Result;
use clap::Args;
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_catalogue::{names, Operation};
use cryptoscope_measure::clock::{Clock, ClockChoice};
use cryptoscope_measure::paired::{self, is_b, Quad};
use cryptoscope_measure::sampler::Plan;
use cryptoscope_measure::stats::median;
use cryptoscope_model::apps::ab::{Compared, Setup};
use cryptoscope_model::apps::Item;
use cryptoscope_model::protocol::Request;
use cryptoscope_model::{ResultRow, RunFile, SCHEMA};
use cryptoscope_worker::Event;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::args::{store_location, DbArg, GateArgs};
use crate::catalog::Catalogue;
use crate::gating::Verdict;
use crate::run::measure::{merge_visits, row_from};
use crate::stored::open_db;
use crate::ui::usage;
use crate::workers::Outcome;

/// `ab --help`'s examples and how to read the result.
pub const AFTER_HELP: &str = "Examples:
  cryptoscope add examples/byo-mlkem512 --alg ML-KEM-512 --flags -O2 --flags \"-O2 -DCS_EXTRA_WORK=12\"
  cryptoscope ab --alg ML-KEM-512 build/byo_mlkem512-gcc12-O2 build/byo_mlkem512-gcc12-O2_DCS_EXTRA_WORK=12
  cryptoscope ab --alg X25519 openssl-3.0 openssl-3.5 --time 60
  cryptoscope ab ML-KEM-768/liboqs/dispatch ML-KEM-768/aws-lc/default --op encaps --json ab.json

A is the reference: B/A above 1 means B is slower. The verdict is from time alone, a change only when the \
whole 95% interval lies beyond --threshold; exact instruction counts (valgrind) are printed beside it. \
Run it with the machine as it is: the pairing is what copes with another load (docs/ab.md).
Exit codes: 0 ok, 1 a subject failed its gate or while measured (or B slower with --fail-on-slower), 2 bad input.";

#[derive(Args, Clone)]
pub struct AbArgs {
    /// The subject taken as the reference: ALG/PROVIDER/IMPL as `list` names it, or
    /// PROVIDER/IMPL or PROVIDER with --alg (e.g. build/byo_mlkem512-gcc12-O2, openssl-3.5).
    #[arg(value_name = "A")]
    pub(crate) a: String,
    /// The subject judged against A, named the same ways; of the same algorithm.
    #[arg(value_name = "B")]
    pub(crate) b: String,
    /// The algorithm, when A or B is named without it.
    #[arg(long = "alg", value_name = "NAME")]
    pub(crate) alg: Option<String>,
    /// Operations to compare (repeatable or comma-separated; default every operation).
    #[arg(long, value_name = "OP", value_delimiter = ',')]
    pub(crate) op: Vec<String>,
    /// Seconds of interleaved timing, all operations together (at least four A B B A quads
    /// of every operation are taken, whatever it says).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub(crate) time: f64,
    /// Length of one block, milliseconds: short enough that two neighbouring blocks see
    /// the machine at the same speed, long enough to hold many calls.
    #[arg(long, value_name = "MS", default_value_t = 25.0)]
    pub(crate) block: f64,
    /// Changes smaller than this fraction are never called faster or slower.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.01)]
    pub(crate) threshold: f64,
    /// The CPU both subjects run on (default: the machine's last CPU).
    #[arg(long, value_name = "N")]
    pub(crate) cpu: Option<usize>,
    /// Skip the exact instruction counts (valgrind callgrind), shown beside the verdict.
    #[arg(long)]
    pub(crate) no_instructions: bool,
    /// Also write the comparison as JSON (`-`: standard output, after the table).
    #[arg(long, value_name = "FILE|-")]
    pub(crate) json: Option<std::path::PathBuf>,
    /// Exit 1 when B is slower than A in any operation (for CI jobs).
    #[arg(long)]
    pub(crate) fail_on_slower: bool,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
    #[command(flatten)]
    pub(crate) db: DbArg,
}

/// The test, stated with every result.
fn test_text(threshold: f64, epochs: usize) -> String {
    let unit = if epochs >= paired::MIN_EPOCHS {
        format!(
            "each of the {epochs} epochs (worker processes restarted between them) one figure, the 20%-trimmed mean of its quads; \
             ratio B/A = 20%-trimmed mean over epochs with a percentile-bootstrap 95% CI over epochs"
        )
    } else {
        "ratio B/A = 20%-trimmed mean over quads with a percentile-bootstrap 95% CI over quads".to_string()
    };
    format!(
        "blocks in A B B A order on one CPU, each block's median; per quad the mean log ratio of B's blocks to A's; \
         {unit} (2,000 resamples); a change is called only if the whole interval lies beyond ±{:.1}%",
        threshold * 100.0
    )
}

/// `A` or `B` resolved to one catalogued subject.
fn resolve(cat: &Catalogue, spec: &str, alg: Option<&str>) -> Result<Descriptor> {
    if let Some(d) = cat.subjects.iter().find(|d| d.id.eq_ignore_ascii_case(spec)) {
        return Ok(d.clone());
    }
    let alg = alg.map(|a| names::algorithm(a).map_or(a.to_string(), |i| i.name.to_string()));
    let (provider, implementation) = match spec.split_once('/') {
        Some((p, i)) => (p, Some(i)),
        None => (spec, None),
    };
    // `openssl-3.0` names the system build when its version is 3.0.
    let provider_matches = |d: &Descriptor| {
        d.provider.eq_ignore_ascii_case(provider)
            || names::versioned_name(provider).is_some_and(|(base, v)| {
                d.provider == base && names::major_minor(&d.provider_version).as_deref() == Some(v)
            })
    };
    let found: Vec<&Descriptor> = cat
        .subjects
        .iter()
        .filter(|d| alg.as_deref().is_none_or(|a| d.algorithm == a))
        .filter(|d| provider_matches(d) && implementation.is_none_or(|i| d.implementation == i))
        .collect();
    match found.as_slice() {
        [d] => Ok((*d).clone()),
        [] => {
            let hint = names::did_you_mean(spec, cat.subjects.iter().map(|d| d.id.as_str()))
                .map(|h| format!(" (did you mean `{h}`?)"))
                .unwrap_or_default();
            let how = if alg.is_none() {
                "; name it as `list` does (ALG/PROVIDER/IMPL), or give --alg"
            } else {
                ""
            };
            Err(usage(format!("ab: unknown subject `{spec}`{hint}{how}")))
        }
        many => Err(usage(format!(
            "ab: `{spec}` names {} subjects ({}{}): give ALG/PROVIDER/IMPL{}",
            many.len(),
            many.iter()
                .take(4)
                .map(|d| d.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if many.len() > 4 { ", …" } else { "" },
            if alg.is_none() { " or --alg" } else { "" }
        ))),
    }
}

/// How the blocks are taken.
struct Blocks<'a> {
    cat: &'a Catalogue,
    cpu: Option<usize>,
    tsc_hz: Option<f64>,
    timeout: Duration,
    run_start_unix_ms: f64,
    /// A block's time limit (generous: blocks end at their number of calls).
    budget: Duration,
}

impl Blocks<'_> {
    /// One block: `calls` timed calls of `op` (after one discarded call), as a row.
    fn take(&self, d: &Descriptor, v: &Verdict, op: Operation, calls: usize) -> Result<ResultRow, String> {
        let budget = self.budget;
        let bin = self.cat.worker(&d.provider).ok_or("worker vanished")?;
        let plan = Plan {
            min_samples: calls,
            max_samples: calls,
            target_rel_ci: 0.0,
            budget,
            // At least one call is made and discarded: caches hold this subject again.
            warmup: Duration::from_nanos(1),
            floor_samples: calls,
        };
        let request = Request::Measure {
            subject: d.id.clone(),
            plan,
            budget: budget.as_secs_f64(),
            ops: Some(vec![op]),
            cpu: self.cpu,
            tsc_hz: self.tsc_hz.map(f64::round),
            force_tsc: false,
        };
        let mut row = None;
        let mut failed = None;
        let outcome = self
            .cat
            .transport
            .call(bin, &request, self.timeout, &mut |ev| match ev {
                Event::Measured(m) => row = Some(row_from(d, v, m, self.run_start_unix_ms)),
                Event::OpFailed { error, .. } => failed = Some(error),
                _ => {}
            });
        match (outcome, row, failed) {
            (_, _, Some(e)) => Err(format!("{} {} failed while measuring: {e}", d.id, op.as_str())),
            (Outcome::Completed, Some(r), None) if !r.raw_ns.is_empty() => Ok(r),
            (Outcome::Completed, _, None) => Err(format!("{} {}: the worker measured nothing", d.id, op.as_str())),
            (o, _, None) => Err(format!("{} {}: {}", d.id, op.as_str(), o.describe())),
        }
    }
}

/// One operation's quads so far, and A's and B's block rows.
struct Track {
    op: Operation,
    calls: usize,
    quads: Vec<Quad>,
    rows: [Vec<ResultRow>; 2],
}

impl Track {
    /// Takes one quad in `epoch`: A B B A in even epochs, B A A B in odd ones (so that the
    /// first block after the workers restart is A's as often as B's).
    fn quad(&mut self, blocks: &Blocks, pair: &[Descriptor; 2], v: [&Verdict; 2], epoch: u32) -> Result<(), String> {
        let mut fig = [[0.0; 2]; 2];
        for pos in 0..4 {
            let which = usize::from(is_b(pos)) ^ (epoch as usize & 1);
            let row = blocks.take(&pair[which], v[which], self.op, self.calls)?;
            let mut ns = row.raw_ns.clone();
            fig[which][usize::from(pos >= 2)] = median(&mut ns);
            self.rows[which].push(row);
        }
        self.quads.push(Quad {
            a: fig[0],
            b: fig[1],
            epoch,
        });
        Ok(())
    }

    /// A's or B's row: every block one visit (statistics computed once, here).
    fn merged(&self, which: usize) -> Option<ResultRow> {
        merge_visits(self.rows[which].iter().cloned())
    }

    /// The point estimate so far, without its interval (for the progress line).
    fn ratio_now(&self) -> Option<f64> {
        let mut logs: Vec<f64> = self.quads.iter().filter_map(|q| q.log_ratio()).collect();
        (!logs.is_empty()).then(|| paired::trimmed_mean(&mut logs, paired::TRIM).exp())
    }

    fn compared(&self, threshold: f64) -> Compared {
        let p = paired::paired_ratio(&self.quads, threshold, 0xab);
        let side = |b: bool| {
            let mut v: Vec<f64> = self.quads.iter().flat_map(|q| if b { q.b } else { q.a }).collect();
            if v.is_empty() {
                f64::NAN
            } else {
                median(&mut v)
            }
        };
        Compared {
            operation: self.op.as_str().to_string(),
            calls_per_block: self.calls,
            a_ns: side(false),
            b_ns: side(true),
            ratio: p.map(|p| p.ratio),
            ci95_low: p.map(|p| p.ci95_low),
            ci95_high: p.map(|p| p.ci95_high),
            quads: self.quads.len(),
            epochs: self.quads.last().map_or(0, |q| q.epoch as usize + 1),
            verdict: p.map(|p| p.verdict),
            quads_ns: self.quads.clone(),
            ..Compared::default()
        }
    }
}

/// The subjects' operations to compare: `--op`, or every operation of A (B's are the same:
/// one algorithm).
fn operations(d: &Descriptor, asked: &[String]) -> Result<Vec<Operation>> {
    let all = d.operations().to_vec();
    if asked.is_empty() {
        return Ok(all);
    }
    let names: Vec<&str> = all.iter().map(|o| o.as_str()).collect();
    let mut out = Vec::new();
    for o in asked.iter().map(|o| o.trim()).filter(|o| !o.is_empty()) {
        let op = Operation::parse(o).filter(|op| all.contains(op)).ok_or_else(|| {
            usage(format!(
                "ab: {} has no operation `{o}` ({})",
                d.algorithm,
                names.join(", ")
            ))
        })?;
        if !out.contains(&op) {
            out.push(op);
        }
    }
    Ok(out)
}

fn check(a: &AbArgs) -> Result<()> {
    if !(a.time > 0.0 && a.time.is_finite()) {
        return Err(usage("ab: --time must be a positive number of seconds"));
    }
    if !(a.block >= 1.0 && a.block <= 10_000.0) {
        return Err(usage("ab: --block must be 1 to 10,000 milliseconds"));
    }
    if !(0.0..1.0).contains(&a.threshold) {
        return Err(usage("ab: --threshold must be a fraction in [0, 1), e.g. 0.01"));
    }
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("ab: --timeout must be a positive number of seconds"));
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(c) = a.cpu.filter(|&c| c >= n) {
        return Err(usage(format!("ab: --cpu {c}: this machine has CPUs 0..{}", n - 1)));
    }
    Ok(())
}

/// The run record of an A/B comparison, begun now (its items are added as they are stored).
fn ab_run_file(
    ctx: &Ctx,
    a: &AbArgs,
    clock: &Clock,
    cat: &Catalogue,
    pair: &[Descriptor; 2],
    cpu: Option<usize>,
    run_id: &str,
) -> RunFile {
    let (started_at, _) = crate::util::now_utc();
    let mut run = RunFile {
        schema: SCHEMA.into(),
        run_id: run_id.to_string(),
        started_at,
        finished_at: String::new(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: cryptoscope_model::RecordedCommand::new(ctx.args.iter()),
        config: Default::default(),
        environment: crate::run::environment(clock, cat),
        results: Vec::new(),
        applications: Vec::new(),
    };
    crate::run::preflight(&mut run.environment, cpu, clock, ctx);
    run.config.algorithms = vec![pair[0].algorithm.clone()];
    run.config.providers = vec![pair[0].provider.clone(), pair[1].provider.clone()];
    run.config.cpu = cpu;
    run.config.kat_depth = a.gate.kat.clone().unwrap_or_else(|| "single".into());
    run.config.time_budget_s = a.time;
    run
}

/// A and B resolved (two subjects of one algorithm, or the same one twice: an A/A run) and
/// gated; `None` when either failed its gate (it is said; nothing is measured: exit 1).
fn gated_pair(ctx: &Ctx, a: &AbArgs) -> Result<Option<(Gated, GateOptions)>> {
    let gate = GateOptions {
        depth: a.gate.kat.clone().unwrap_or_else(|| "single".into()),
        ..GateOptions::of(ctx, &a.gate, true)?
    };
    let pick = |cat: &Catalogue| -> Result<Vec<Descriptor>> {
        let da = resolve(cat, &a.a, a.alg.as_deref())?;
        let db = resolve(cat, &a.b, a.alg.as_deref().or(Some(&da.algorithm)))?;
        if da.algorithm != db.algorithm {
            return Err(usage(format!(
                "ab: A and B must be subjects of one algorithm; {} is {} and {} is {}",
                da.id, da.algorithm, db.id, db.algorithm
            )));
        }
        Ok(vec![da, db])
    };
    let (gated, pb) = gated(ctx, &gate, pick, |_| 2)?;
    pb.finish();
    if gated.picked[0].id == gated.picked[1].id {
        errln!(
            ctx,
            "note: A and B are the same subject ({}): an A/A run, which shows the test's own noise",
            gated.picked[0].id
        );
    }
    // Both must pass: a comparison with one side unmeasured means nothing.
    let mut failed = false;
    for d in gated.picked.iter().filter(|d| !gated.passed(d)) {
        let v = gated.verdict(d);
        errln!(
            ctx,
            "ab: {} {}: {} (nothing measured)",
            d.id,
            v.status.as_str(),
            v.detail
        );
        failed = true;
    }
    Ok((!failed).then_some((gated, gate)))
}

/// `cryptoscope ab`: 0, 1 when a subject failed its gate or while measured (or B is slower
/// with --fail-on-slower), 2 for bad input.
/// What `ab` found: its run (stored, with the set-up and each comparison as its items), the
/// set-up, each operation compared, and what ended the interleaving early, if anything.
pub struct AbRun {
    pub run: RunFile,
    pub setup: Setup,
    pub operations: Vec<Compared>,
    /// A block that failed: the quads before it stand, and `ab` exits 1.
    pub failure: Option<String>,
}

/// `ab` up to its verdicts, stored, nothing written but its progress and messages; `None`
/// when A or B failed its gate (said on the context's error output).
pub fn ab(a: &AbArgs, ctx: &Ctx) -> Result<Option<AbRun>> {
    check(a)?;
    let mut store = open_db(ctx, &store_location(&ctx.env, a.db.as_deref()))?;
    if let Some(p) = &a.json {
        if p.as_os_str() != "-" {
            crate::util::check_writable(p).map_err(usage)?;
        }
    }
    let Some((gated, gate)) = gated_pair(ctx, a)? else {
        return Ok(None);
    };
    let (cat, verdicts, timeout) = (&gated.cat, &gated.verdicts, gate.timeout);
    let pair = [gated.picked[0].clone(), gated.picked[1].clone()];
    let (da, db) = (&pair[0], &pair[1]);
    let ops = operations(da, &a.op)?;

    cat.transport.set_long_lived(true);
    let clock = Clock::new(ClockChoice::Auto);
    let cpu = a
        .cpu
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get() - 1));
    let run_id = crate::util::run_id();
    let start_ms = crate::util::unix_ms();
    let mut run = ab_run_file(ctx, a, &clock, cat, &pair, cpu, &run_id);
    store.begin_run(&run).map_err(|e| usage(e.to_string()))?;
    let mut setup = Setup {
        a: da.id.clone(),
        b: db.id.clone(),
        algorithm: da.algorithm.clone(),
        cpu,
        block_ms: a.block,
        time_s: a.time,
        elapsed_s: None,
        threshold: a.threshold,
        test: test_text(a.threshold, 0),
        clock: Some(clock.source().label().to_string()),
        instructions_note: None,
    };
    let blocks = Blocks {
        cat,
        cpu,
        tsc_hz: clock.tsc_hz(),
        timeout,
        run_start_unix_ms: start_ms,
        budget: Duration::from_secs_f64(a.block / 1e3 * 50.0).max(Duration::from_secs(10)),
    };
    let timed = interleave(&blocks, &pair, verdicts, &ops, a, ctx, &mut |tracks, elapsed| {
        setup.elapsed_s = Some(elapsed);
        save(ctx, &mut store, &run_id, &mut setup, tracks, &Counts::new(), false);
    });
    let (tracks, failure) = timed;
    let counts = if failure.is_some() {
        Counts::new()
    } else if a.no_instructions {
        setup.instructions_note = Some("not counted (--no-instructions)".into());
        Counts::new()
    } else {
        instructions(cat, &pair, &ops, timeout, ctx, &mut setup)
    };
    let compared = save(ctx, &mut store, &run_id, &mut setup, &tracks, &counts, true);
    let _ = store.finish_run(&run_id, &crate::util::now_utc().0);
    run.applications = std::iter::once(setup.to_app("setup"))
        .chain(compared.iter().map(|c| c.to_app(c.operation.clone())))
        .collect();
    Ok(Some(AbRun {
        run,
        setup,
        operations: compared,
        failure,
    }))
}

/// `ab`: the table and where it is stored, the JSON file; exit 1 when a subject failed its
/// gate, a block failed, or (with `--fail-on-slower`) B is slower.
pub fn cmd_ab(a: &AbArgs, ctx: &Ctx) -> Result<i32> {
    let Some(r) = ab(a, ctx)? else {
        return Ok(1);
    };
    let run_id = &r.run.run_id;
    out!(ctx, "{}", cryptoscope_report::ab::summary(&r.run.applications));
    outln!(ctx, "Stored as run {run_id} (`cryptoscope show {run_id}`).");
    if let Some(p) = &a.json {
        let doc = serde_json::json!({"run_id": run_id, "setup": r.setup, "operations": r.operations});
        crate::stored::write_output(ctx, p, &serde_json::to_string_pretty(&doc)?)?;
    }
    if let Some(e) = &r.failure {
        errln!(ctx, "ab: {e}");
        return Ok(1);
    }
    let slower = r
        .operations
        .iter()
        .filter(|c| c.verdict == Some(paired::Change::Slower))
        .count();
    if a.fail_on_slower && slower > 0 {
        errln!(
            ctx,
            "ab: B is slower than A in {slower} operation(s) (--fail-on-slower)"
        );
        return Ok(1);
    }
    Ok(0)
}

type Tracks = Vec<Track>;
/// Epochs a run is divided into (each at least a second).
const EPOCHS: u32 = 20;
/// Instructions per (side, operation).
type Counts = BTreeMap<(usize, String), crate::counters::Instructions>;

/// Times the operations in A B B A quads until the time is spent (and every operation has
/// its minimum of quads). Returns what was measured and, if a block failed, why.
fn interleave(
    blocks: &Blocks,
    pair: &[Descriptor; 2],
    verdicts: &BTreeMap<String, Verdict>,
    ops: &[Operation],
    a: &AbArgs,
    ctx: &Ctx,
    save: &mut dyn FnMut(&Tracks, f64),
) -> (Tracks, Option<String>) {
    let quiet = ctx.quiet;
    let block = Duration::from_secs_f64(a.block / 1e3);
    let v = |i: usize| &verdicts[&pair[i].id];
    let mut tracks: Tracks = Vec::new();
    // A pilot block of each side sets the calls per block from the slower one's speed
    // (and warms both: prepared inputs, caches, the worker processes).
    for &op in ops {
        let mut per_call: f64 = 0.0;
        for (i, d) in pair.iter().enumerate() {
            let pilot = Plan {
                target_rel_ci: 0.0,
                ..Plan::quick(block.max(Duration::from_millis(50)))
            };
            match pilot_call(blocks, d, v(i), op, pilot) {
                Ok(t) => per_call = per_call.max(t),
                Err(e) => return (tracks, Some(e)),
            }
        }
        let calls = ((block.as_nanos() as f64 / per_call.max(1.0)).round() as usize).clamp(1, 100_000);
        tracks.push(Track {
            op,
            calls,
            quads: Vec::new(),
            rows: [Vec::new(), Vec::new()],
        });
    }
    let clock = &ctx.time;
    let start = clock.now();
    let elapsed = || clock.now().saturating_sub(start);
    let time = Duration::from_secs_f64(a.time);
    // About twenty epochs, each at least a second: the workers restart between them.
    let epoch_len = (time / EPOCHS).max(Duration::from_secs(1));
    let mut epoch = 0u32;
    let mut epoch_start = clock.now();
    let pb = crate::ui::progress_bar(a.time.ceil() as u64, ctx);
    let lines = !quiet && !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let (mut saved, mut said) = (clock.now(), 0);
    loop {
        let enough = tracks.iter().all(|t| t.quads.len() >= paired::MIN_QUADS);
        if elapsed() >= time && enough {
            break;
        }
        if clock.now().saturating_sub(epoch_start) >= epoch_len {
            blocks.cat.transport.retire_long_lived();
            epoch += 1;
            epoch_start = clock.now();
        }
        for t in tracks.iter_mut() {
            if let Err(e) = t.quad(blocks, pair, [v(0), v(1)], epoch) {
                // The incomplete quad is left out of the test; its blocks' rows are kept.
                pb.finish_and_clear();
                save(&tracks, elapsed().as_secs_f64());
                return (tracks, Some(e));
            }
        }
        let el = elapsed().as_secs_f64();
        pb.set_position((el as u64).min(a.time.ceil() as u64));
        let t0 = &tracks[0];
        let msg = match t0.ratio_now() {
            Some(r) => format!(
                "{} ×{r:.3} after {} quads in {} epochs",
                t0.op.as_str(),
                t0.quads.len(),
                epoch + 1
            ),
            None => format!("{} {} quads", t0.op.as_str(), t0.quads.len()),
        };
        pb.set_message(msg.clone());
        if lines && el as usize / 10 > said {
            said = el as usize / 10;
            errln!(ctx, "[{el:.0} s of {:.0} s] {msg}", a.time);
        }
        if clock.now().saturating_sub(saved) > Duration::from_secs(5) {
            save(&tracks, el);
            saved = clock.now();
        }
    }
    pb.finish_and_clear();
    save(&tracks, elapsed().as_secs_f64());
    (tracks, None)
}

/// One pilot block: the median time per call, nanoseconds.
fn pilot_call(blocks: &Blocks, d: &Descriptor, v: &Verdict, op: Operation, plan: Plan) -> Result<f64, String> {
    let bin = blocks.cat.worker(&d.provider).ok_or("worker vanished")?;
    let request = Request::Measure {
        subject: d.id.clone(),
        budget: plan.budget.as_secs_f64() * 4.0,
        plan,
        ops: Some(vec![op]),
        cpu: blocks.cpu,
        tsc_hz: blocks.tsc_hz.map(f64::round),
        force_tsc: false,
    };
    let mut t = None;
    let mut failed = None;
    let outcome = blocks
        .cat
        .transport
        .call(bin, &request, blocks.timeout, &mut |ev| match ev {
            Event::Measured(m) => t = row_from(d, v, m, 0.0).median_ns,
            Event::OpFailed { error, .. } => failed = Some(error),
            _ => {}
        });
    match (outcome, t, failed) {
        (_, _, Some(e)) => Err(format!("{} {} failed while measuring: {e}", d.id, op.as_str())),
        (Outcome::Completed, Some(t), None) => Ok(t),
        (o, _, None) => Err(format!("{} {}: {}", d.id, op.as_str(), o.describe())),
    }
}

/// Exact instructions per call of every compared operation of A and B, keyed by (side,
/// operation); what kept them from being counted goes into the set-up's note.
fn instructions(
    cat: &Catalogue,
    pair: &[Descriptor; 2],
    ops: &[Operation],
    timeout: Duration,
    ctx: &Ctx,
    setup: &mut Setup,
) -> Counts {
    let quiet = ctx.quiet;
    let mut out = Counts::new();
    let found = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        setup.instructions_note = Some("not counted: valgrind is not installed".into());
        return out;
    }
    for (i, d) in pair.iter().enumerate() {
        if !quiet {
            errln!(ctx, "instructions {} (callgrind)", d.id);
        }
        match crate::counters::instructions(ctx, cat, d, timeout) {
            Ok(m) => {
                for (op, r) in m {
                    match r {
                        Ok(n) if ops.iter().any(|o| o.as_str() == op) => {
                            out.insert((i, op), n);
                        }
                        Ok(_) => {}
                        Err((_, why)) => setup.instructions_note = Some(format!("{}: {why}", d.id)),
                    }
                }
            }
            Err(e) => setup.instructions_note = Some(format!("{}: {e}", d.id)),
        }
    }
    out
}

/// Stores the comparison so far (with its blocks' medians) and, with `rows`, A's and B's
/// rows with every sample; returns the comparison.
fn save(
    ctx: &Ctx,
    store: &mut cryptoscope_store::Store,
    run_id: &str,
    setup: &mut Setup,
    tracks: &Tracks,
    counts: &Counts,
    rows: bool,
) -> Vec<Compared> {
    let threshold = setup.threshold;
    let epochs = tracks
        .iter()
        .filter_map(|t| t.quads.last())
        .map(|q| q.epoch as usize + 1)
        .max()
        .unwrap_or(0);
    setup.test = test_text(threshold, epochs);
    let mut compared = Vec::new();
    let mut error = None;
    let mut keep = |r: std::result::Result<(), cryptoscope_store::StoreError>| {
        if let Err(e) = r {
            error.get_or_insert(e.to_string());
        }
    };
    keep(store.add_app_result(run_id, &setup.to_app("setup")));
    for t in tracks {
        for row in (0..2).filter(|_| rows).filter_map(|i| t.merged(i)) {
            keep(store.add_result(run_id, &row));
        }
        let mut c = t.compared(threshold);
        let side = |i: usize| counts.get(&(i, c.operation.clone()));
        (c.a_instructions, c.a_instructions_spread) = (side(0).map(|n| n.per_call), side(0).and_then(|n| n.spread));
        (c.b_instructions, c.b_instructions_spread) = (side(1).map(|n| n.per_call), side(1).and_then(|n| n.spread));
        keep(store.add_app_result(run_id, &c.to_app(c.operation.clone())));
        compared.push(c);
    }
    if let Some(e) = error {
        errln!(ctx, "warning: could not store the comparison: {e}");
    }
    compared
}
