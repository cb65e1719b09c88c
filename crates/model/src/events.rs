//! What a worker reports: one JSON line per [`Event`], written as soon as it exists, read by
//! the parent; with [`crate::protocol::Request`] (what the parent asks), the whole worker
//! protocol, typed both ways.

use crate::descriptor::{Descriptor, Operation};
use cryptoscope_measure::{CycleSource, SampleSet};
use serde::{Deserialize, Serialize};

/// One named check and its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

impl Check {
    pub fn pass(name: &str, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: true,
            detail: detail.into(),
        }
    }
    pub fn fail(name: &str, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: false,
            detail: detail.into(),
        }
    }
}

/// All checks run on one subject.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    pub checks: Vec<Check>,
    /// How the subject treats invalid public input (an ML-KEM encapsulation key failing
    /// FIPS 203's modulus check, a point off the curve): a verdict beside the gate, never
    /// part of it, e.g. "does not validate ek". `None` where nothing was probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_check: Option<String>,
}

impl GateReport {
    /// Passed iff at least one check ran and none failed.
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.ok)
    }

    /// One line: the first failure's reason, or the list of checks passed.
    pub fn detail(&self) -> String {
        if let Some(f) = self.checks.iter().find(|c| !c.ok) {
            return format!("{}: {}", f.name, f.detail);
        }
        self.checks
            .iter()
            .map(|c| c.detail.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A test that failed, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFailure {
    pub id: String,
    pub detail: String,
}

/// One implementation's result on one file. Every test is counted once: passed (valid and
/// invalid tests answered as expected), acceptable (Wycheproof `acceptable` tests, which
/// pass accepted or rejected), failed, or skipped (the harness cannot present the test).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOutcome {
    pub passed: usize,
    pub acceptable: usize,
    pub failed: usize,
    pub skipped: usize,
    pub failures: Vec<TestFailure>,
    /// What was skipped or checked only in part, and why; one line each.
    pub notes: Vec<String>,
}

/// Heap use of one call, from the preload library (its C layout is the library's).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeapStats {
    /// Successful allocation calls.
    pub allocations: u64,
    /// Frees of blocks allocated during the call.
    pub frees: u64,
    /// Sum of the sizes requested.
    pub bytes_requested: u64,
    /// Most bytes of the call's blocks live at one time.
    pub peak_live: u64,
    /// Bytes of the call's blocks still live when it returned.
    pub live_at_end: u64,
    /// Blocks the counter had no room to track (then the figures are too low).
    pub untracked: u64,
}

/// How the samples of an operation were timed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClockInfo {
    pub cycle_source: CycleSource,
    pub tsc_hz: Option<f64>,
    pub overhead_cycles: f64,
    pub overhead_ns: f64,
    /// "available" or "not supported: REASON" (the kernel's reason).
    pub perf_status: String,
}

/// The raw measurement of one operation of one subject.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpMeasurement {
    pub subject: String,
    pub operation: Operation,
    pub clock: ClockInfo,
    /// The CPU the worker was pinned to, if any.
    pub cpu: Option<usize>,
    pub samples: SampleSet,
}

/// Heap and stack of one operation of one subject (the memory pass).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpMemory {
    pub subject: String,
    pub operation: Operation,
    /// Counted calls (after one warm-up call); each figure is the largest of them.
    pub calls: usize,
    /// Stack high-water mark of the operation, bytes, the harness's own frames subtracted.
    pub stack_bytes: u64,
    /// The harness's frames that were subtracted, bytes.
    pub harness_stack_bytes: u64,
    pub heap: HeapStats,
}

/// Calls completed by each thread of a throughput run (`scale`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaleRun {
    pub subject: String,
    pub operation: Operation,
    pub threads: usize,
    /// Calls each thread completed.
    pub per_thread: Vec<u64>,
    /// Each thread's time from the common start to its last completed call, seconds.
    pub seconds: Vec<f64>,
}

/// One perf event counted around calls of an operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterReading {
    /// perf name: cycles, instructions, cache-misses, branch-misses, page-faults, task-clock, …
    pub event: String,
    /// "ok", or "not supported: REASON" with the kernel's reason (never a zero).
    pub status: String,
    /// Per call, net of the counting overhead.
    pub median: Option<f64>,
    pub mean: Option<f64>,
    /// The median count of the reads around an empty call, subtracted above.
    pub overhead: Option<f64>,
}

/// Counters of one operation of one subject.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpCounters {
    pub subject: String,
    pub operation: Operation,
    /// Counted calls (after one warm-up call).
    pub calls: usize,
    pub readings: Vec<CounterReading>,
}

/// One probed internal function during one operation: measured by the timing wrappers
/// compiled into our own builds (`cryptoscope micro`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbedFunction {
    /// Short name (namespace prefix removed), e.g. `poly_Rq_mul`.
    pub function: String,
    /// Mean calls per operation the wrapper saw (calls from inside the function's own
    /// source file bypass the wrapper, so this can be below callgrind's count).
    pub calls_per_op: f64,
    /// Median over the counted operations of (ticks inside ÷ calls), net of the probe's
    /// own cost; `None` when the operation never called the function.
    pub ticks_per_call: Option<f64>,
    /// Median ticks per operation spent inside the function (net).
    pub ticks_per_op: Option<f64>,
}

/// Probes of one operation of one subject.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpProbes {
    pub subject: String,
    pub operation: Operation,
    /// Counted operations (after one warm-up call).
    pub calls: usize,
    /// "TSC" (reference cycles) or "ns".
    pub unit: String,
    /// Ticks one probe around nothing measures, subtracted per call.
    pub overhead: f64,
    /// Median ticks of the whole operation, measured around it with the same clock.
    pub op_ticks: f64,
    pub functions: Vec<ProbedFunction>,
}

/// An operation the constant-time audit ran under memcheck, and what it marked secret.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CtAudited {
    pub subject: String,
    pub operation: String,
    /// What was marked secret ("the whole secret key", "the key and 512 plaintext bytes").
    pub secret: String,
    /// The worker saw valgrind (otherwise the marks did nothing).
    pub under_valgrind: bool,
}

/// A dudect measurement: Welch's t between fixed and random secret inputs.
pub use crate::apps::ct::CtStat;

/// One line of worker output.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    Describe {
        subjects: Vec<Descriptor>,
    },
    Gate {
        subject: String,
        report: GateReport,
    },
    Verify {
        subject: String,
        check: Check,
    },
    Measured(OpMeasurement),
    Memory(OpMemory),
    Scaled(ScaleRun),
    Counters(OpCounters),
    Probes(OpProbes),
    CtAudited(CtAudited),
    CtStat(CtStat),
    /// One subject's result on a vector file brought by the user (`verify-file`).
    FileVerified {
        subject: String,
        outcome: FileOutcome,
    },
    /// An operation failed while being measured (it gets no number).
    OpFailed {
        subject: String,
        operation: Operation,
        error: String,
    },
    Done,
}
