//! `compare`: runs side by side, a run against its history on this machine, or against
//! published figures.

use super::{open_store, write_output};

use crate::args::{DbArg, FilterArgs};
use crate::context::{Ctx, Env};
use crate::ui::usage;
use crate::util;
use anyhow::Result;
use cryptoscope_model::RunFile;
use cryptoscope_report::compare::{self as report_compare, Comparison, Statistic};
use cryptoscope_report::history::{self, HistoryComparison};
use std::path::PathBuf;

/// The repository's published-figures file.
pub(crate) fn published_path(env: &Env, flag: Option<&std::path::Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = env.path("CRYPTOSCOPE_PUBLISHED") {
        return Ok(p);
    }
    let vectors = util::vectors_dir(env, None)?;
    Ok(vectors.join("../reference/published.json"))
}

pub fn cmd_published(
    ctx: &Ctx,
    runs: &[String],
    file: Option<&std::path::Path>,
    json: Option<&std::path::Path>,
    db: &DbArg,
) -> Result<i32> {
    if runs.len() != 1 {
        return Err(usage("compare --published takes one run"));
    }
    let path = published_path(&ctx.env, file)?;
    let text = std::fs::read_to_string(&path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let entries = cryptoscope_report::published::parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let mut store = open_store(ctx, db)?;
    let run = store.load(&runs[0]).map_err(|e| usage(e.to_string()))?;
    if let Some(why) = cryptoscope_report::published::withheld(&run) {
        outln!(ctx, "Run {}: {why}.", run.run_id);
        return Ok(0);
    }
    let m = cryptoscope_report::published::matches(&entries, &run.results);
    if m.is_empty() {
        outln!(
            ctx,
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
    out!(
        ctx,
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

/// `cryptoscope compare`'s flags.
#[derive(clap::Args, Clone)]
pub struct CompareArgs {
    /// Two or more runs (id, unique prefix, `latest` or `latest~N`, N runs before it); one
    /// with --published or --history.
    #[arg(num_args = 1.., required = true)]
    pub(crate) runs: Vec<String>,
    /// Print our cycles next to every matching published figure (default file: the
    /// repository's reference/published.json, with sources and CPUs).
    #[arg(long)]
    pub(crate) published: bool,
    /// Published-figures file for --published.
    #[arg(long, value_name = "FILE")]
    pub(crate) published_file: Option<PathBuf>,
    /// Compare the one run given with the last K runs before it on the same machine (host
    /// and CPU) that measured the same operations, instead of with another run: a change is
    /// called only where the run lies outside the spread those K runs show between
    /// themselves (a 99% prediction interval) and beyond --threshold, so the machine's own
    /// noise is learned, not guessed. Fewer than 3 such runs give no verdict for that
    /// operation. In CI: `compare latest --history 10 --fail-on-slower`.
    #[arg(long, value_name = "K")]
    pub(crate) history: Option<usize>,
    /// The run the others are compared with (default: the first given). `--baseline` is
    /// its older name; on `run` and `show`, `--baseline` names an implementation.
    #[arg(long = "reference", visible_alias = "baseline", value_name = "RUN")]
    pub(crate) baseline: Option<String>,
    /// Changes smaller than this fraction are never called faster or slower.
    #[arg(long, default_value_t = 0.05, value_name = "FRACTION")]
    pub(crate) threshold: f64,
    /// Compare cycle counts instead of nanoseconds (same machine only).
    #[arg(long)]
    pub(crate) cycles: bool,
    /// What to compare: median (typical cost), p5 or min (the machine's fast level;
    /// steadier on noisy shared machines).
    #[arg(long, default_value = "median", value_parser = ["median", "p5", "min"])]
    pub(crate) statistic: String,
    /// Also write the comparison as JSON (`-`: standard output, after the table).
    #[arg(long, value_name = "FILE|-")]
    pub(crate) json: Option<PathBuf>,
    /// Exit 1 when any operation is slower than in the baseline, or with --history than in
    /// its history (for CI jobs).
    #[arg(long)]
    pub(crate) fail_on_slower: bool,
    #[command(flatten)]
    pub(crate) filter: FilterArgs,
    #[command(flatten)]
    pub(crate) db: DbArg,
}

/// What `compare` found, before it is written anywhere: `cmd_compare` renders it, a test
/// reads its verdicts.
pub enum Compared {
    /// Two or more runs, the first (or `--reference`) the baseline.
    Runs(Comparison),
    /// Groups that ran on several machine types: each type's parts compared with each other.
    PerMachine(Vec<OnMachine>),
    /// One run against the runs before it on its machine (`--history K`).
    History(HistoryComparison),
}

/// One machine type of a per-machine comparison.
pub enum OnMachine {
    /// Only one run of the type: nothing to compare it with.
    Alone {
        machine: String,
        run: String,
    },
    Compared {
        machine: String,
        comparison: Comparison,
    },
}

impl Compared {
    /// How many operations are slower than their baseline or history.
    pub fn slower(&self) -> usize {
        match self {
            Compared::Runs(c) => report_compare::tally(c).1,
            Compared::PerMachine(m) => m
                .iter()
                .map(|o| match o {
                    OnMachine::Compared { comparison, .. } => report_compare::tally(comparison).1,
                    OnMachine::Alone { .. } => 0,
                })
                .sum(),
            Compared::History(h) => history::tally(h).1,
        }
    }

    /// The tables, as `compare` prints them.
    pub fn render(&self) -> String {
        match self {
            Compared::Runs(c) => report_compare::render(c),
            Compared::PerMachine(m) => m
                .iter()
                .map(|o| match o {
                    OnMachine::Alone { machine, run } => {
                        format!("On {machine}: only {run}, nothing to compare it with.\n\n")
                    }
                    OnMachine::Compared { machine, comparison } => {
                        format!("On {machine}:\n{}\n", report_compare::render(comparison))
                    }
                })
                .collect(),
            Compared::History(h) => history::render(h),
        }
    }

    /// The `--json` document: the comparison, the list of each machine type's, or the
    /// history comparison.
    pub fn json(&self) -> Result<String> {
        Ok(match self {
            Compared::Runs(c) => serde_json::to_string_pretty(c)?,
            Compared::PerMachine(m) => {
                let all: Vec<&Comparison> = m
                    .iter()
                    .filter_map(|o| match o {
                        OnMachine::Compared { comparison, .. } => Some(comparison),
                        OnMachine::Alone { .. } => None,
                    })
                    .collect();
                serde_json::to_string_pretty(&all)?
            }
            Compared::History(h) => serde_json::to_string_pretty(h)?,
        })
    }
}

pub fn cmd_compare(ctx: &Ctx, a: &CompareArgs) -> Result<i32> {
    if a.published {
        if a.history.is_some() {
            return Err(usage(
                "--history and --published do not go together: --published compares one run with published \
                 figures, --history with its own earlier runs",
            ));
        }
        return cmd_published(ctx, &a.runs, a.published_file.as_deref(), a.json.as_deref(), &a.db);
    }
    let c = compare(ctx, a)?;
    out!(ctx, "{}", c.render());
    if let Some(p) = &a.json {
        write_output(ctx, p, &c.json()?)?;
    }
    let slower = c.slower();
    Ok(if a.fail_on_slower && slower > 0 {
        let against = if matches!(c, Compared::History(_)) {
            "their history"
        } else {
            "the baseline"
        };
        errln!(
            ctx,
            "compare: {slower} operation(s) slower than {against} (--fail-on-slower)"
        );
        1
    } else {
        0
    })
}

/// `compare` without `--published`: the stored runs named, side by side or against their
/// history. Warnings go to the context's error output; nothing else is written.
pub fn compare(ctx: &Ctx, a: &CompareArgs) -> Result<Compared> {
    let threshold = a.threshold;
    if !(0.0..1.0).contains(&threshold) {
        return Err(usage("--threshold must be a fraction in [0, 1), e.g. 0.05"));
    }
    let statistic =
        Statistic::parse(&a.statistic).ok_or_else(|| usage(format!("unknown statistic `{}`", a.statistic)))?;
    if let Some(k) = a.history {
        return against_history(ctx, a, k, statistic).map(Compared::History);
    }
    if a.runs.len() < 2 {
        return Err(usage(
            "compare needs two or more runs (or one with --published or --history K)",
        ));
    }
    let mut store = open_store(ctx, &a.db)?;
    let mut sets = Vec::new();
    for r in &a.runs {
        sets.push(store.load_all(r).map_err(|e| usage(e.to_string()))?);
    }
    if sets.iter().any(|s| s.len() > 1) {
        return per_machine(a, sets, statistic).map(Compared::PerMachine);
    }
    let mut loaded: Vec<RunFile> = Vec::new();
    for (r, mut set) in a.runs.iter().zip(sets) {
        let mut run = set.remove(0);
        a.filter.apply(&mut run)?;
        if loaded.iter().any(|l| l.run_id == run.run_id) {
            // `compare latest latest`: nothing can differ but the noise of the bootstrap.
            errln!(
                ctx,
                "warning: run {} is given more than once (as `{r}`): it is compared with itself",
                run.run_id
            );
        }
        loaded.push(run);
    }
    let base = match a.baseline.as_deref() {
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
    Ok(Compared::Runs(report_compare::compare(
        &loaded, base, threshold, a.cycles, statistic,
    )))
}

/// `compare group:A group:B` where a group ran on several machine types: each type's parts
/// are compared with each other, never with another machine's.
fn per_machine(a: &CompareArgs, sets: Vec<Vec<RunFile>>, statistic: Statistic) -> Result<Vec<OnMachine>> {
    if a.baseline.is_some() {
        return Err(usage(
            "--reference does not apply to groups on several machine types: each type is compared on its own, \
             the first run given as the reference",
        ));
    }
    let machine = |r: &RunFile| r.environment.cpu_model.clone().unwrap_or_else(|| "unknown CPU".into());
    let mut types: Vec<String> = Vec::new();
    for r in sets.iter().flatten() {
        if !types.contains(&machine(r)) {
            types.push(machine(r));
        }
    }
    let mut all = Vec::new();
    for t in types {
        let mut runs: Vec<RunFile> = sets.iter().flatten().filter(|r| machine(r) == t).cloned().collect();
        if runs.len() < 2 {
            all.push(OnMachine::Alone {
                machine: t,
                run: runs[0].run_id.clone(),
            });
            continue;
        }
        for r in &mut runs {
            a.filter.apply(r)?;
        }
        let comparison = report_compare::compare(&runs, 0, a.threshold, a.cycles, statistic);
        all.push(OnMachine::Compared { machine: t, comparison });
    }
    Ok(all)
}

/// `compare RUN --history K`: RUN against the runs before it on its machine.
fn against_history(ctx: &Ctx, a: &CompareArgs, k: usize, statistic: Statistic) -> Result<HistoryComparison> {
    if k == 0 {
        return Err(usage(format!(
            "--history needs at least one run ({} or more give verdicts), e.g. --history 10",
            history::MIN_HISTORY
        )));
    }
    if a.runs.len() != 1 {
        return Err(usage(format!(
            "compare --history takes one run (e.g. `latest`), compared with the runs before it; {} given",
            a.runs.len()
        )));
    }
    if a.baseline.is_some() {
        return Err(usage(
            "--reference does not apply with --history: the run's history is its reference",
        ));
    }
    let mut store = open_store(ctx, &a.db)?;
    let mut run = store.load(&a.runs[0]).map_err(|e| usage(e.to_string()))?;
    a.filter.apply(&mut run)?;
    let past = history_of(&mut store, &run, k, a.cycles)?;
    let h = history::compare_history(&run, &past, k, a.threshold, a.cycles, statistic);
    if h.rows.is_empty() {
        return Err(usage(format!(
            "run {} has no passed, measured operation to compare",
            run.run_id
        )));
    }
    if h.rows.iter().all(|r| r.history.is_empty()) {
        return Err(usage(format!(
            "no run before {} on its machine, {}, measured any of its operations: no history to compare with",
            run.run_id, h.machine
        )));
    }
    Ok(h)
}

/// The stored runs before `run` on its machine (same host and CPU model), newest first,
/// loaded until each of its operations has `k` of them that passed and measured it (or the
/// runs run out). Shards of `run`'s own group are not its history.
fn history_of(store: &mut cryptoscope_store::Store, run: &RunFile, k: usize, cycles: bool) -> Result<Vec<RunFile>> {
    let host = run.environment.hostname.as_deref().unwrap_or("?");
    let cpu = run.environment.cpu_model.as_deref().unwrap_or("?");
    let listed = store.runs().map_err(|e| usage(e.to_string()))?;
    let group = match run.run_id.strip_prefix("group:") {
        Some(g) => g.to_string(),
        None => listed
            .iter()
            .find(|s| s.id == run.run_id)
            .map(|s| s.group.clone())
            .unwrap_or_default(),
    };
    // Newest first: everything after the run's newest shard is older.
    let Some(at) = listed.iter().position(|s| s.id == run.run_id || s.group == group) else {
        return Ok(Vec::new());
    };
    let mut past = Vec::new();
    for s in listed[at + 1..]
        .iter()
        .filter(|s| s.group != group && s.hostname == host && s.cpu_model == cpu)
    {
        past.push(store.load(&s.id).map_err(|e| usage(e.to_string()))?);
        if cryptoscope_report::history::complete(run, &past, k, cycles) {
            break;
        }
    }
    Ok(past)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
    use cryptoscope_model::{GateStatus, ResultRow, RunConfig, RunFile};

    /// A stored run of one operation whose samples the test sets: `scale` times a fixed
    /// spread of 200 samples around 1000 ns, measured on `host`.
    fn stored_on(store: &mut cryptoscope_store::Store, id: &str, started: &str, scale: f64, host: Option<&str>) {
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
        let environment = cryptoscope_measure::env::Environment {
            hostname: host.map(String::from),
            ..Default::default()
        };
        let run = RunFile {
            schema: cryptoscope_model::SCHEMA.into(),
            run_id: id.into(),
            started_at: started.into(),
            finished_at: started.into(),
            tool_version: String::new(),
            command: Default::default(),
            config: RunConfig::default(),
            environment,
            results: Vec::new(),
            applications: Vec::new(),
        };
        store.begin_run(&run).unwrap();
        store.add_result(id, &row).unwrap();
        store.finish_run(id, started).unwrap();
    }

    fn stored(store: &mut cryptoscope_store::Store, id: &str, started: &str, scale: f64) {
        stored_on(store, id, started, scale, None)
    }

    /// `compare RUNS` with the defaults and the flags the test sets.
    fn args(db: &str, runs: &[&str], history: Option<usize>, fail: bool) -> CompareArgs {
        CompareArgs {
            runs: runs.iter().map(|r| r.to_string()).collect(),
            published: false,
            published_file: None,
            history,
            baseline: None,
            threshold: 0.05,
            cycles: false,
            statistic: "median".into(),
            json: None,
            fail_on_slower: fail,
            filter: FilterArgs::default(),
            db: DbArg { db: Some(db.into()) },
        }
    }

    /// A context that starts no worker and keeps what commands print.
    fn ctx() -> Ctx {
        Ctx::captured(crate::workers::Workers::live(std::path::PathBuf::new())).0
    }

    fn new_store(tmp: &tempfile::TempDir) -> (cryptoscope_store::Store, String) {
        let location = tmp.path().join("r.db").to_str().unwrap().to_string();
        (cryptoscope_store::Store::open_any(&location).unwrap(), location)
    }

    #[test]
    fn fail_on_slower_turns_a_slower_verdict_into_exit_1() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut store, db) = new_store(&tmp);
        stored(&mut store, "20260101T000000Z-aaaa", "2026-01-01T00:00:00.000Z", 1.0);
        stored(&mut store, "20260102T000000Z-bbbb", "2026-01-02T00:00:00.000Z", 1.0);
        stored(&mut store, "20260103T000000Z-cccc", "2026-01-03T00:00:00.000Z", 1.5);
        drop(store);
        let compare = |a: &str, b: &str, fail: bool| cmd_compare(&ctx(), &args(&db, &[a, b], None, fail)).unwrap();
        // latest~2 and latest~1: the same samples, no change.
        assert_eq!(compare("latest~2", "latest~1", true), 0);
        // 1.5 times slower: a verdict, an exit status only when asked for.
        assert_eq!(compare("latest~1", "latest", true), 1);
        assert_eq!(compare("latest~1", "latest", false), 0);
        // Faster is not a failure.
        assert_eq!(compare("latest", "latest~1", true), 0);
    }

    #[test]
    fn history_is_the_runs_before_on_the_same_machine() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut store, db) = new_store(&tmp);
        // Only the first run: nothing before it.
        stored(&mut store, "20260101T000000Z-a000", "2026-01-01T00:00:00.000Z", 1.0);
        let only = cmd_compare(&ctx(), &args(&db, &["latest"], Some(5), true)).unwrap_err();
        assert!(only.to_string().contains("no history to compare with"), "{only}");
        for (i, scale) in [1.0, 1.01, 0.99].into_iter().enumerate() {
            let id = format!("20260102T00000{i}Z-b00{i}");
            stored(&mut store, &id, &format!("2026-01-02T00:00:0{i}.000Z"), scale);
        }
        // Twice as slow, but on another machine: not this machine's history.
        stored_on(
            &mut store,
            "20260103T000000Z-c000",
            "2026-01-03T00:00:00.000Z",
            2.0,
            Some("other"),
        );
        stored(&mut store, "20260104T000000Z-d000", "2026-01-04T00:00:00.000Z", 1.5);
        stored(&mut store, "20260105T000000Z-e000", "2026-01-05T00:00:00.000Z", 1.0);
        drop(store);
        let history = |run: &str, k: usize, fail: bool| cmd_compare(&ctx(), &args(&db, &[run], Some(k), fail)).unwrap();
        // latest~1 (1.5×) against the four runs before it here (1, 1, 1.01, 0.99): slower.
        assert_eq!(history("latest~1", 10, true), 1);
        assert_eq!(history("latest~1", 10, false), 0);
        // latest (1.0×) has the 1.5× run in its history: wider noise, and not slower.
        assert_eq!(history("latest", 10, true), 0);
        // Two history runs: not enough for a verdict, not an error.
        assert_eq!(history("latest~1", 2, true), 0);
        // The run on the other machine has no history of its own machine.
        let other = cmd_compare(&ctx(), &args(&db, &["latest~2"], Some(5), false)).unwrap_err();
        assert!(other.to_string().contains("other (?)"), "{other}");
    }

    #[test]
    fn history_refuses_what_it_cannot_mean() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut store, db) = new_store(&tmp);
        stored(&mut store, "20260101T000000Z-aaaa", "2026-01-01T00:00:00.000Z", 1.0);
        stored(&mut store, "20260102T000000Z-bbbb", "2026-01-02T00:00:00.000Z", 1.0);
        drop(store);
        let refused = |a: CompareArgs| {
            let e = cmd_compare(&ctx(), &a).unwrap_err();
            assert!(e.is::<crate::ui::UsageError>(), "{e}");
            e.to_string()
        };
        assert!(refused(args(&db, &["latest"], Some(0), false)).contains("at least one run"));
        assert!(refused(args(&db, &["latest~1", "latest"], Some(5), false)).contains("takes one run"));
        let mut published = args(&db, &["latest"], Some(5), false);
        published.published = true;
        assert!(refused(published).contains("do not go together"));
        let mut reference = args(&db, &["latest"], Some(5), false);
        reference.baseline = Some("latest~1".into());
        assert!(refused(reference).contains("--reference"));
    }
}
