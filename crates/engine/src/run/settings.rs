//! The settings of one run, derived once from its arguments (ripgrep's `HiArgs` shape):
//! every check of a flag, every default and every value computed from flags lives here, so
//! the passes read settled values and never a raw argument.

use super::measure;
use super::Resumed;
use crate::args::{gate_settings_depth, parse_shard, RunArgs};
use crate::catalog::Selection;
use crate::context::Ctx;
use crate::ui::usage;
use crate::{counters, profile, scale, util};
use anyhow::Result;
use cryptoscope_measure::clock::Clock;
use cryptoscope_measure::sampler::{Plan, MAX_SAMPLES};
use std::path::PathBuf;
use std::time::Duration;

/// Everything a run needs to know, checked.
pub(crate) struct Settings<'a> {
    /// The arguments, for what is passed through unchanged (flags of the memory and scale
    /// passes, the group, the baseline).
    pub(crate) args: &'a RunArgs,
    pub(crate) selection: Selection,
    pub(crate) quick: bool,
    /// perf events of the counters pass, if asked for.
    pub(crate) events: Option<Vec<String>>,
    pub(crate) vectors: PathBuf,
    /// KAT depth of the gate: "single" or "all".
    pub(crate) depth: String,
    pub(crate) run_id: String,
    pub(crate) started_at: String,
    /// Where the results file goes (its HTML report goes beside it).
    pub(crate) out_file: PathBuf,
    /// `--shard K/N`.
    pub(crate) shard: Option<(usize, usize)>,
    /// Per worker call: gate, each pass, each measurement.
    pub(crate) timeout: Duration,
    /// Visits per subject; never more than `--samples`.
    pub(crate) rounds: usize,
    /// `--lengths`: message lengths instead of a family's default ones (hashes).
    pub(crate) lengths: Option<Vec<u32>>,
    /// Time budget per subject.
    pub(crate) budget: Duration,
    pub(crate) with_memory: bool,
    /// Whether the timing pass runs (not for `memory` and `scale`).
    pub(crate) timing: bool,
    pub(crate) scale: Option<&'a scale::Settings>,
}

impl<'a> Settings<'a> {
    /// Checks every flag (a bad one is a usage error, exit code 2, before anything is
    /// measured or written) and derives the run's settings.
    pub(crate) fn from_args(ctx: &Ctx, a: &'a RunArgs, resumed: Option<&Resumed>) -> Result<Settings<'a>> {
        let selection = a.sel.selection()?;
        if let Some(n) = a.samples {
            if n == 0 || n > MAX_SAMPLES {
                return Err(usage(format!("--samples must be between 1 and {MAX_SAMPLES}")));
            }
        }
        if let Some(b) = a.time_budget {
            if !(b > 0.0 && b.is_finite()) {
                return Err(usage("--time-budget must be a positive number of seconds"));
            }
        }
        if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
            return Err(usage("--timeout must be a positive number of seconds"));
        }
        if a.rounds == 0 {
            return Err(usage("--rounds must be at least 1"));
        }
        if let Some(c) = a.cpu {
            let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
            if c >= n {
                return Err(usage(format!("--cpu {c}: this machine has CPUs 0..{}", n - 1)));
            }
        }
        let events = a
            .counters
            .as_deref()
            .map(counters::parse_events)
            .transpose()
            .map_err(usage)?;
        if a.instructions {
            profile::valgrind_version()?;
        }
        let vectors = util::vectors_dir(&ctx.env, a.gate.vectors.as_deref())?;
        let (started_at, run_id) = match resumed {
            Some(r) => (r.started_at.clone(), r.run_id.clone()),
            None => (util::now_utc().0, util::run_id()),
        };
        let out_file = out_file(a, &run_id)?;
        let shard = a.shard.as_deref().map(parse_shard).transpose()?;
        let lengths = a
            .lengths
            .as_deref()
            .map(|l| measure::parse_lengths(l).map_err(usage))
            .transpose()?;
        Ok(Settings {
            args: a,
            selection,
            quick: a.quick,
            events,
            vectors,
            depth: gate_settings_depth(&a.gate, a.quick),
            run_id,
            started_at,
            out_file,
            shard,
            timeout: Duration::from_secs_f64(a.gate.timeout),
            rounds: a.samples.map_or(a.rounds, |n| a.rounds.min(n)),
            lengths,
            budget: Duration::from_secs_f64(a.time_budget.unwrap_or(if a.quick { 1.0 } else { 12.0 })),
            with_memory: a.memory || a.memory_only,
            timing: !a.memory_only && a.scale.is_none(),
            scale: a.scale.as_ref(),
        })
    }

    /// Progress steps for `subjects` subjects: the gate and every pass that runs.
    pub(crate) fn steps(&self, subjects: usize) -> u64 {
        let a = self.args;
        (subjects
            * (1 + usize::from(self.timing)
                + usize::from(self.with_memory)
                + usize::from(self.scale.is_some())
                + usize::from(self.events.is_some())
                + usize::from(a.instructions))) as u64
    }

    /// What every worker's measuring call is handed; `stored` are the operations a resumed
    /// run keeps, per subject.
    pub(crate) fn measure_settings(
        &self,
        clock: &Clock,
        stored: std::collections::BTreeMap<String, Vec<String>>,
    ) -> measure::MeasureSettings {
        let a = self.args;
        let mut plan = if self.quick {
            Plan::quick(self.budget)
        } else {
            Plan::standard(self.budget)
        };
        if let Some(n) = a.samples {
            plan.min_samples = n;
            plan.max_samples = n;
            plan.floor_samples = n;
            plan.target_rel_ci = 0.0;
            plan.budget = Duration::from_secs(u64::MAX / 4);
        }
        measure::MeasureSettings {
            plan,
            budget: if a.samples.is_some() {
                Duration::from_secs(10 * 365 * 86_400)
            } else {
                self.budget
            },
            cpu: a.cpu,
            tsc_hz: clock.tsc_hz(),
            lengths: self.lengths.clone(),
            timeout: self.timeout,
            run_start_unix_ms: crate::util::unix_ms(),
            stored,
        }
    }
}

/// The results file of run `run_id`, checked writable now rather than after an hour of
/// measuring; no empty file is left behind if the run then stops on bad input.
fn out_file(a: &RunArgs, run_id: &str) -> Result<PathBuf> {
    // `--json -`: the results file on standard output.
    if a.json.as_deref().is_some_and(|f| f.as_os_str() == "-") {
        return Ok(PathBuf::from("-"));
    }
    let out_file = match &a.json {
        Some(f) => f.clone(),
        None => PathBuf::from("results").join(format!("{run_id}.json")),
    };
    if let Some(parent) = out_file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| usage(format!("cannot create {}: {e}", parent.display())))?;
    }
    let existed = out_file.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out_file)
        .map_err(|e| usage(format!("cannot write {}: {e}", out_file.display())))?;
    if !existed {
        let _ = std::fs::remove_file(&out_file);
    }
    Ok(out_file)
}
