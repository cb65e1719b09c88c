//! Hand-made rows and runs for the report's unit tests (charts, answers, comparisons).

use crate::{GateStatus, ResultRow, RunConfig, RunFile};
use cryptoscope_model::descriptor::{Descriptor, Randomness, Sizes};

/// A passing row of `algorithm` by `provider` (implementation "default"), `operation`
/// taking `cycles` (and as many nanoseconds).
pub(crate) fn row(algorithm: &str, family: &str, provider: &str, operation: &str, cycles: f64) -> ResultRow {
    let d = Descriptor::catalogued(
        algorithm,
        provider,
        "default",
        "1".into(),
        "-".into(),
        Sizes {
            public_key: 0,
            secret_key: 0,
            ciphertext: 0,
            shared_secret: 0,
        },
        Randomness::Internal,
    );
    let mut r = ResultRow::without_numbers(&d, operation, GateStatus::Pass, "");
    r.subject = format!("{algorithm}/{provider}");
    r.family = family.into();
    r.median_cycles = Some(cycles);
    r.median_ns = Some(cycles);
    r
}

/// A run of `rows`.
pub(crate) fn run(rows: Vec<ResultRow>) -> RunFile {
    run_of("test", rows)
}

/// A run `id` of `rows`, with an empty configuration and environment.
pub(crate) fn run_of(id: &str, rows: Vec<ResultRow>) -> RunFile {
    RunFile {
        schema: crate::SCHEMA.into(),
        run_id: id.into(),
        started_at: String::new(),
        finished_at: String::new(),
        tool_version: String::new(),
        command: Default::default(),
        config: RunConfig::default(),
        environment: Default::default(),
        results: rows,
        applications: Vec::new(),
    }
}
