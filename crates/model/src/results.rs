//! The results contract: one run as written to its JSON file, one row per (subject,
//! operation), and the items of application drivers.

use crate::descriptor::{Descriptor, Sizes};
use crate::secrets::RecordedCommand;
use cryptoscope_measure::env::Environment;
use cryptoscope_measure::sampler::StopReason;
use cryptoscope_measure::CycleSource;
use serde::{Deserialize, Serialize};

/// Provider display order (the catalogue's canonical order).
pub const PROVIDER_ORDER: &[&str] = crate::names::PROVIDERS;

/// Schema identifier written at the top of every run file.
pub const SCHEMA: &str = "cryptoscope.run/1";

/// Outcome of the correctness gate for a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateStatus {
    Pass,
    Fail,
    Unavailable,
    Crashed,
    Timeout,
}

impl GateStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            GateStatus::Pass => "pass",
            GateStatus::Fail => "fail",
            GateStatus::Unavailable => "unavailable",
            GateStatus::Crashed => "crashed",
            GateStatus::Timeout => "timeout",
        }
    }

    /// Whether this outcome makes the run exit with status 1.
    pub fn is_failure(self) -> bool {
        matches!(self, GateStatus::Fail | GateStatus::Crashed | GateStatus::Timeout)
    }
}

/// The settings a run used.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunConfig {
    pub suites: Vec<String>,
    pub algorithms: Vec<String>,
    pub providers: Vec<String>,
    pub quick: bool,
    pub min_samples: usize,
    pub max_samples: usize,
    pub target_rel_ci: f64,
    /// Time budget per subject, seconds.
    pub time_budget_s: f64,
    pub cpu: Option<usize>,
    /// "single" or "all" KAT entries.
    pub kat_depth: String,
    pub timeout_s: f64,
    /// Visits per subject (`--rounds`); 1 in files written before rounds were recorded.
    #[serde(default = "one")]
    pub rounds: usize,
    /// Implementation speed-ups are expressed against (`run --baseline`), if any.
    #[serde(default)]
    pub baseline: Option<String>,
    /// The run's name (`run --name`), by which it can be addressed like its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn one() -> usize {
    1
}

/// One (subject, operation) result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultRow {
    pub subject: String,
    pub algorithm: String,
    pub family: String,
    pub provider: String,
    pub provider_version: String,
    pub implementation: String,
    pub algorithm_version: String,
    pub build: String,
    pub nist_level: Option<u8>,
    pub classical_bits: Option<u16>,
    pub operation: String,
    pub gate: GateStatus,
    pub gate_detail: String,
    /// The subject's treatment of invalid public input, as the gate probed it ("validates
    /// ek", "does not validate ek"): its own verdict, shown beside the gate's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_check: Option<String>,
    pub samples: usize,
    pub stop_reason: Option<StopReason>,
    pub median_cycles: Option<f64>,
    pub median_ns: Option<f64>,
    pub ci95_low_cycles: Option<f64>,
    pub ci95_high_cycles: Option<f64>,
    pub ci95_low_ns: Option<f64>,
    pub ci95_high_ns: Option<f64>,
    pub mean_cycles: Option<f64>,
    pub mean_ns: Option<f64>,
    pub stddev_cycles: Option<f64>,
    pub min_cycles: Option<f64>,
    pub max_cycles: Option<f64>,
    pub p5_cycles: Option<f64>,
    pub p95_cycles: Option<f64>,
    pub p99_cycles: Option<f64>,
    pub mad_cycles: Option<f64>,
    pub outliers: Option<usize>,
    pub severe_outliers: Option<usize>,
    pub cycle_source: Option<CycleSource>,
    pub overhead_cycles: Option<f64>,
    pub overhead_ns: Option<f64>,
    pub tsc_hz: Option<f64>,
    pub cpu: Option<usize>,
    pub sizes: Sizes,
    /// Overhead-corrected cycles of every sample, in the order taken.
    pub raw_cycles: Vec<f64>,
    /// Overhead-corrected nanoseconds of every sample, in the order taken.
    pub raw_ns: Vec<f64>,
    /// Lengths of the visits the samples were taken in (`run --rounds`), in order: the
    /// first `visits[0]` samples are the first visit, and so on. Empty for one visit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visits: Vec<usize>,
    /// When each sample started, seconds after the run started (same order as `raw_ns`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw_t_s: Vec<f64>,
    /// Memory pass (`cryptoscope memory`, `run --memory`): counted calls; every memory
    /// figure is the largest over them. `null` when the pass did not run.
    #[serde(default)]
    pub memory_calls: Option<usize>,
    /// Stack high-water mark of the operation, bytes (painted stack; harness frames
    /// subtracted).
    #[serde(default)]
    pub stack_bytes: Option<u64>,
    /// Heap allocation calls during the operation.
    #[serde(default)]
    pub heap_allocations: Option<u64>,
    /// Frees, during the operation, of blocks it allocated.
    #[serde(default)]
    pub heap_frees: Option<u64>,
    /// Bytes requested from the heap during the operation.
    #[serde(default)]
    pub heap_bytes: Option<u64>,
    /// Most heap bytes allocated by the operation and live at one time.
    #[serde(default)]
    pub heap_peak_bytes: Option<u64>,
    /// Heap bytes allocated by the operation and still live when it returned.
    #[serde(default)]
    pub heap_retained_bytes: Option<u64>,
    /// Code size of the implementation, bytes, where it can be determined.
    #[serde(default)]
    pub code_bytes: Option<u64>,
    /// What `code_bytes` counts.
    #[serde(default)]
    pub code_bytes_method: Option<String>,
    /// Throughput against threads (`cryptoscope scale`), one point per thread count.
    #[serde(default)]
    pub scaling: Option<Vec<ScalePoint>>,
    /// The knee: the fewest threads beyond which throughput grows by less than 10 %.
    #[serde(default)]
    pub scale_knee_threads: Option<usize>,
    /// perf_event_open counters per call (`run --counters`).
    #[serde(default)]
    pub counters: Option<Vec<CounterFigure>>,
    /// Exact instructions per call under valgrind callgrind, mean of the profiled calls
    /// (`run --instructions`).
    #[serde(default)]
    pub instructions: Option<f64>,
    /// How much the instruction count of one call varies under real randomness, from a
    /// second callgrind pass (`run --instructions`): (max − min) / min over its calls. 0 for
    /// a fixed code path; above 0 where the count varies by design (rejection sampling).
    #[serde(default)]
    pub instructions_spread: Option<f64>,
    /// Block ciphers: the strategy's block, key, batch, exposed functions and whether it
    /// indexes memory with secret data.
    #[serde(default)]
    pub cipher: Option<crate::descriptor::CipherInfo>,
}

/// One perf event counted around calls of an operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterFigure {
    pub event: String,
    /// "ok", or "not supported: REASON" (the kernel's reason); never a zero in its place.
    pub status: String,
    /// Per call, net of the counting overhead.
    pub median: Option<f64>,
    pub mean: Option<f64>,
    /// Counted calls.
    pub calls: usize,
}

/// Throughput of one operation on some number of threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalePoint {
    pub threads: usize,
    /// Sum over threads of calls / that thread's elapsed seconds.
    pub ops_per_s: f64,
    /// Calls each thread completed.
    pub per_thread: Vec<u64>,
    /// Longest thread time, seconds.
    pub seconds: f64,
    /// ops_per_s / (threads × ops_per_s at 1 thread); 1 is linear scaling.
    pub efficiency: Option<f64>,
    /// Fewest calls of a thread / most calls of a thread (1 = even).
    pub min_max_ratio: f64,
}

impl ScalePoint {
    /// The point for per-thread counts and times.
    pub fn new(threads: usize, per_thread: Vec<u64>, seconds: &[f64]) -> ScalePoint {
        let ops_per_s = per_thread
            .iter()
            .zip(seconds)
            .map(|(&n, &t)| if t > 0.0 { n as f64 / t } else { 0.0 })
            .sum();
        let (lo, hi) = per_thread
            .iter()
            .fold((u64::MAX, 0u64), |(lo, hi), &n| (lo.min(n), hi.max(n)));
        ScalePoint {
            threads,
            ops_per_s,
            per_thread,
            seconds: seconds.iter().copied().fold(0.0, f64::max),
            efficiency: None,
            min_max_ratio: if hi > 0 { lo as f64 / hi as f64 } else { 0.0 },
        }
    }
}

/// Fills each point's efficiency against the one-thread point and returns the knee: the
/// fewest threads beyond which no thread count gives 10 % more throughput.
pub fn finish_scaling(points: &mut [ScalePoint]) -> Option<usize> {
    points.sort_by_key(|p| p.threads);
    let one = points.iter().find(|p| p.threads == 1).map(|p| p.ops_per_s);
    for p in points.iter_mut() {
        p.efficiency = one.filter(|&o| o > 0.0).map(|o| p.ops_per_s / (p.threads as f64 * o));
    }
    points
        .iter()
        .enumerate()
        .find(|(i, p)| points[i + 1..].iter().all(|q| q.ops_per_s < 1.10 * p.ops_per_s))
        .map(|(_, p)| p.threads)
}

impl ResultRow {
    /// The gate's status with the input-validation verdict beside it, for tables:
    /// "pass", "pass (does not validate ek)".
    pub fn gate_label(&self) -> String {
        match &self.input_check {
            Some(c) => format!("{} ({c})", self.gate.as_str()),
            None => self.gate.as_str().to_string(),
        }
    }

    /// A row without numbers (failed, unavailable, crashed or timed-out subject).
    pub fn without_numbers(d: &Descriptor, operation: &str, gate: GateStatus, detail: impl Into<String>) -> ResultRow {
        ResultRow {
            subject: d.id.clone(),
            algorithm: d.algorithm.clone(),
            family: d.family.as_str().into(),
            provider: d.provider.clone(),
            provider_version: d.provider_version.clone(),
            implementation: d.implementation.clone(),
            algorithm_version: d.algorithm_version.clone(),
            build: d.build.clone(),
            nist_level: d.nist_level,
            classical_bits: d.classical_bits,
            operation: operation.into(),
            gate,
            gate_detail: detail.into(),
            input_check: None,
            samples: 0,
            stop_reason: None,
            median_cycles: None,
            median_ns: None,
            ci95_low_cycles: None,
            ci95_high_cycles: None,
            ci95_low_ns: None,
            ci95_high_ns: None,
            mean_cycles: None,
            mean_ns: None,
            stddev_cycles: None,
            min_cycles: None,
            max_cycles: None,
            p5_cycles: None,
            p95_cycles: None,
            p99_cycles: None,
            mad_cycles: None,
            outliers: None,
            severe_outliers: None,
            cycle_source: None,
            overhead_cycles: None,
            overhead_ns: None,
            tsc_hz: None,
            cpu: None,
            sizes: d.sizes,
            raw_cycles: Vec::new(),
            raw_ns: Vec::new(),
            visits: Vec::new(),
            raw_t_s: Vec::new(),
            memory_calls: None,
            stack_bytes: None,
            heap_allocations: None,
            heap_frees: None,
            heap_bytes: None,
            heap_peak_bytes: None,
            heap_retained_bytes: None,
            code_bytes: None,
            code_bytes_method: None,
            scaling: None,
            scale_knee_threads: None,
            counters: None,
            instructions: None,
            instructions_spread: None,
            cipher: d.cipher.clone(),
        }
    }

    /// A row without numbers for the same subject and operation as `r`.
    pub fn without_numbers_like(r: &ResultRow, gate: GateStatus, detail: impl Into<String>) -> ResultRow {
        // Any catalogued descriptor gives the blank fields; the identity is `r`'s.
        let any = Descriptor::catalogued(
            "X25519",
            "-",
            "-",
            String::new(),
            String::new(),
            r.sizes,
            crate::descriptor::Randomness::Harness,
        );
        ResultRow {
            subject: r.subject.clone(),
            algorithm: r.algorithm.clone(),
            family: r.family.clone(),
            provider: r.provider.clone(),
            provider_version: r.provider_version.clone(),
            implementation: r.implementation.clone(),
            algorithm_version: r.algorithm_version.clone(),
            build: r.build.clone(),
            nist_level: r.nist_level,
            classical_bits: r.classical_bits,
            cipher: r.cipher.clone(),
            ..ResultRow::without_numbers(&any, &r.operation, gate, detail)
        }
    }
}

/// A whole run, as written to the JSON file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFile {
    pub schema: String,
    pub run_id: String,
    pub started_at: String,
    pub finished_at: String,
    pub tool_version: String,
    /// The command line, with every secret masked ([`secrets`]).
    pub command: RecordedCommand,
    pub config: RunConfig,
    pub environment: Environment,
    pub results: Vec<ResultRow>,
    /// Results of application drivers (`cryptoscope tahoe`, ...), which are not
    /// (subject, operation) timings: one record per reported item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applications: Vec<AppResult>,
}

/// One item of an application driver's results: its driver (`tahoe`), a key unique in the
/// run (`blake3|5x1 MB|upload`, `setup`) and the figures as JSON.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AppResult {
    pub driver: String,
    pub item: String,
    pub data: serde_json::Value,
}

#[cfg(test)]
mod scaling_tests {
    use super::*;

    #[test]
    fn knee_and_efficiency() {
        let mut pts = vec![
            ScalePoint::new(4, vec![5_000, 5_000, 5_000, 5_000], &[1.0; 4]),
            ScalePoint::new(1, vec![10_000], &[1.0]),
            ScalePoint::new(2, vec![9_000, 11_000], &[1.0, 1.0]),
            ScalePoint::new(8, vec![2_600; 8], &[1.0; 8]),
        ];
        // 10k, 20k, 20k, 20.8k ops/s: no count beyond 2 gives 10 % more.
        assert_eq!(finish_scaling(&mut pts), Some(2));
        assert_eq!(pts[0].threads, 1);
        assert_eq!(pts[1].efficiency, Some(1.0));
        assert_eq!(pts[2].efficiency, Some(0.5));
        assert!((pts[1].min_max_ratio - 9.0 / 11.0).abs() < 1e-12);
        // Linear all the way: the knee is the last point.
        let mut lin: Vec<ScalePoint> = [1usize, 2, 4]
            .iter()
            .map(|&t| ScalePoint::new(t, vec![100; t], &vec![1.0; t]))
            .collect();
        assert_eq!(finish_scaling(&mut lin), Some(4));
        // A thread slower than the others' count is weighed by its own time.
        let p = ScalePoint::new(2, vec![3, 2], &[1.5, 2.0]);
        assert!((p.ops_per_s - 3.0).abs() < 1e-12);
    }
}
