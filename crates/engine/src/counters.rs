//! `run --counters` and `run --instructions`: perf_event_open counters around each call
//! of each operation (in the subject's worker, apart from timing), and the exact
//! instruction count per call under callgrind: with fixed-seed randomness (the figure runs
//! compare), and how much it varies from call to call under real randomness (the spread that
//! tells a changed code path from rejection sampling drawing again).

use crate::context::Ctx;
use anyhow::{Context, Result};
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_measure::perf::EVENTS;
use cryptoscope_model::{CounterFigure, GateStatus, ResultRow};
use cryptoscope_worker::Event;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::catalog::Catalogue;
use crate::workers::Outcome;

/// Counters of one operation, or why there are none.
pub type OpOutcome = std::result::Result<Vec<CounterFigure>, (GateStatus, String)>;
/// Exact instructions per call of one operation, or why there are none.
pub type InstrOutcome = std::result::Result<Instructions, (GateStatus, String)>;

/// Calls profiled with real randomness for the spread (after one warm-up).
pub const SPREAD_CALLS: u64 = 5;

/// The instruction figures of one operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instructions {
    /// Mean instructions per call with the harness's fixed-seed randomness.
    pub per_call: f64,
    /// (max − min) / min of the instructions of [`SPREAD_CALLS`] calls with real randomness.
    pub spread: Option<f64>,
}

/// The relative spread (max − min) / min of per-call instruction counts; none without
/// counts (or with a call that counted nothing).
pub fn spread(per_call: &[u64]) -> Option<f64> {
    let (min, max) = (*per_call.iter().min()?, *per_call.iter().max()?);
    (min > 0).then(|| (max - min) as f64 / min as f64)
}

/// Parses `cycles,instructions,…`; unknown names are errors with a suggestion.
pub fn parse_events(list: &str) -> std::result::Result<Vec<String>, String> {
    let known: Vec<&str> = EVENTS.iter().map(|e| e.0).collect();
    let mut out: Vec<String> = Vec::new();
    for e in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let e = e.to_ascii_lowercase();
        if !known.contains(&e.as_str()) {
            let hint = cryptoscope_catalogue::names::did_you_mean(&e, known.iter().copied())
                .map(|h| format!(" (did you mean `{h}`?)"))
                .unwrap_or_default();
            return Err(format!(
                "--counters: unknown event `{e}`{hint}; events: {}",
                known.join(", ")
            ));
        }
        if !out.contains(&e) {
            out.push(e);
        }
    }
    if out.is_empty() {
        return Err(format!("--counters needs at least one event: {}", known.join(", ")));
    }
    Ok(out)
}

fn failure(outcome: &Outcome, pass: &str) -> (GateStatus, String) {
    match outcome {
        Outcome::TimedOut(t) => (
            GateStatus::Timeout,
            format!("timed out after {} s in the {pass}", t.as_secs()),
        ),
        Outcome::Crashed(sig) => (GateStatus::Crashed, format!("crashed in the {pass}: {sig}")),
        o => (GateStatus::Crashed, format!("{pass}: {}", o.describe())),
    }
}

/// Counts `events` around `calls` calls of every operation of one gated subject.
pub fn measure(
    cat: &Catalogue,
    d: &Descriptor,
    events: &[String],
    calls: usize,
    timeout: Duration,
) -> Result<BTreeMap<String, OpOutcome>> {
    let bin = cat.worker(&d.provider).context("worker vanished")?;
    let request = cryptoscope_model::protocol::Request::Counters {
        subject: d.id.clone(),
        events: events.to_vec(),
        calls,
        ops: None,
    };
    let mut out: BTreeMap<String, OpOutcome> = BTreeMap::new();
    let outcome = cat.transport.call(bin, &request, timeout, &mut |ev| match ev {
        Event::Counters(c) => {
            let figures = c
                .readings
                .into_iter()
                .map(|r| CounterFigure {
                    event: r.event,
                    status: r.status,
                    median: r.median,
                    mean: r.mean,
                    calls: c.calls,
                })
                .collect();
            out.insert(c.operation.as_str().to_string(), Ok(figures));
        }
        Event::OpFailed { operation, error, .. } => {
            out.insert(
                operation.as_str().to_string(),
                Err((GateStatus::Fail, format!("failed in the counters pass: {error}"))),
            );
        }
        _ => {}
    });
    if outcome != Outcome::Completed {
        let f = failure(&outcome, "counters pass");
        for o in d.operations() {
            out.entry(o.as_str().to_string()).or_insert_with(|| Err(f.clone()));
        }
    }
    Ok(out)
}

/// Exact instructions per call of every operation of one gated subject (callgrind, three
/// profiled calls after one warm-up with fixed-seed randomness), and their spread over
/// [`SPREAD_CALLS`] calls with real randomness (a second callgrind run, one dump per call).
pub fn instructions(
    ctx: &Ctx,
    cat: &Catalogue,
    d: &Descriptor,
    timeout: Duration,
) -> Result<BTreeMap<String, InstrOutcome>> {
    let bin = cat.worker(&d.provider).context("worker vanished")?;
    let s = crate::profile::Settings {
        calls: 3,
        warmup: 1,
        timeout,
        min_share: 0.0,
        depth: 0,
        top: 0,
    };
    let random = crate::profile::Settings {
        calls: SPREAD_CALLS,
        ..s.clone()
    };
    let mut out = BTreeMap::new();
    for op in d.operations() {
        let counted = crate::profile::run_callgrind(bin, d, op, &s).and_then(|p| {
            let parts = crate::profile::run_callgrind_calls(bin, d, op, &random, false)?;
            let totals: Vec<u64> = parts.iter().map(|p| p.total).collect();
            Ok(Instructions {
                per_call: p.total as f64 / s.calls as f64,
                spread: spread(&totals),
            })
        });
        let r = match counted {
            Ok(i) => Ok(i),
            // A limit of valgrind here (AVX-512 from -march=native), not a fault of the
            // subject: its timings stand, it just gets no instruction count.
            Err(e) if e.to_string().contains(crate::profile::UNDECODABLE) => {
                errln!(ctx, "note: no instruction count: {e}");
                continue;
            }
            Err(e) if e.is::<crate::profile::SubjectFailed>() => Err((GateStatus::Crashed, e.to_string())),
            Err(e) => return Err(e),
        };
        out.insert(op.as_str().to_string(), r);
    }
    Ok(out)
}

/// Puts an operation's counters and instruction count into its row; a failure of either
/// pass makes the row a failure.
pub fn apply(row: &mut ResultRow, counters: Option<&OpOutcome>, instructions: Option<&InstrOutcome>) {
    match counters {
        Some(Ok(c)) => row.counters = Some(c.clone()),
        Some(Err((status, detail))) if row.gate == GateStatus::Pass => {
            *row = ResultRow::without_numbers_like(row, *status, detail.clone());
        }
        _ => {}
    }
    match instructions {
        Some(Ok(n)) => {
            row.instructions = Some(n.per_call);
            row.instructions_spread = n.spread;
        }
        Some(Err((status, detail))) if row.gate == GateStatus::Pass => {
            *row = ResultRow::without_numbers_like(row, *status, detail.clone());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_lists_are_checked() {
        assert_eq!(
            parse_events("cycles, task-clock,cycles").unwrap(),
            ["cycles", "task-clock"]
        );
        let e = parse_events("cycels").unwrap_err();
        assert!(e.contains("did you mean `cycles`"), "{e}");
        assert!(parse_events(" , ").is_err());
    }

    #[test]
    fn spread_is_the_range_over_the_smallest_count() {
        assert_eq!(spread(&[1000, 1000, 1000]), Some(0.0), "a fixed path");
        // Rejection sampling drew again in one call: (1100 - 1000) / 1000.
        assert_eq!(spread(&[1000, 1100, 1050]), Some(0.1));
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[0, 5]), None, "a call that counted nothing");
    }

    #[test]
    fn both_figures_reach_the_row() {
        let d = cryptoscope_catalogue::descriptor::Descriptor::catalogued(
            "ML-DSA-65",
            "pqclean",
            "clean",
            "-".into(),
            "-".into(),
            cryptoscope_catalogue::descriptor::Sizes {
                public_key: 1952,
                secret_key: 4032,
                ciphertext: 3309,
                shared_secret: 0,
            },
            cryptoscope_catalogue::descriptor::Randomness::Harness,
        );
        let mut row = ResultRow::without_numbers(&d, "sign", GateStatus::Pass, "");
        let n = Instructions {
            per_call: 1234.5,
            spread: Some(0.25),
        };
        apply(&mut row, None, Some(&Ok(n)));
        assert_eq!((row.instructions, row.instructions_spread), (Some(1234.5), Some(0.25)));
    }
}
