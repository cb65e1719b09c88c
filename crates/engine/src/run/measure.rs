//! `cryptoscope run`: gate, then measure every passing subject in its worker, then
//! summarise and write the run file.

use anyhow::{Context, Result};
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_catalogue::Operation;
use cryptoscope_measure::sampler::Plan;
use cryptoscope_measure::summarize;
use cryptoscope_model::protocol::Request;
use cryptoscope_model::{GateStatus, ResultRow, RunConfig};
use cryptoscope_worker::{Event, OpMeasurement};
use std::time::Duration;

use crate::catalog::Catalogue;
use crate::gating::Verdict;
use crate::workers::Outcome;

/// Measurement settings handed to every worker.
pub struct MeasureSettings {
    pub plan: Plan,
    pub budget: Duration,
    pub cpu: Option<usize>,
    pub tsc_hz: Option<f64>,
    /// `--lengths`: these message lengths instead of a family's default ones (hashes).
    pub lengths: Option<Vec<u32>>,
    pub timeout: Duration,
    /// When the run started, milliseconds since the Unix epoch (sample times are relative to it).
    pub run_start_unix_ms: f64,
    /// Operations already stored, per subject id (`run --resume`): not measured again.
    pub stored: std::collections::BTreeMap<String, Vec<String>>,
}

/// Parses `--lengths`: comma-separated N, A..B (inclusive) or A..B/STEP; at most 10,000
/// lengths of at most 1 GiB, in the order given, duplicates dropped.
pub fn parse_lengths(list: &str) -> std::result::Result<Vec<u32>, String> {
    const MAX_LEN: u64 = 1 << 30;
    const MAX_COUNT: usize = 10_000;
    let bad = |item: &str, why: &str| format!("--lengths: `{item}` {why} (e.g. 0..4096 or 64,1024..65536/1024)");
    let num = |item: &str, v: &str| -> std::result::Result<u64, String> {
        v.trim().parse::<u64>().map_err(|_| bad(item, "is not a length"))
    };
    let mut out: Vec<u32> = Vec::new();
    for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (range, step) = match item.split_once('/') {
            Some((r, st)) => (r, num(item, st)?),
            None => (item, 1),
        };
        if step == 0 {
            return Err(bad(item, "has step 0"));
        }
        let (a, b) = match range.split_once("..") {
            Some((a, b)) => (num(item, a)?, num(item, b)?),
            None if item.contains('/') => return Err(bad(item, "has a step but no range")),
            None => {
                let n = num(item, range)?;
                (n, n)
            }
        };
        if a > b {
            return Err(bad(item, "runs backwards"));
        }
        if b > MAX_LEN {
            return Err(bad(item, "goes beyond 1 GiB"));
        }
        let mut n = a;
        while n <= b {
            if !out.contains(&(n as u32)) {
                out.push(n as u32);
            }
            if out.len() > MAX_COUNT {
                return Err(format!("--lengths: more than {MAX_COUNT} lengths"));
            }
            n += step;
        }
    }
    if out.is_empty() {
        return Err(bad(list, "names no length"));
    }
    Ok(out)
}

/// A result row from a measured operation.
pub fn row_from(d: &Descriptor, verdict: &Verdict, m: OpMeasurement, run_start_unix_ms: f64) -> ResultRow {
    let mut r = ResultRow::without_numbers(d, m.operation.as_str(), GateStatus::Pass, verdict.detail.clone());
    r.input_check = verdict.input_check.clone();
    r.stop_reason = Some(m.samples.stop);
    r.cycle_source = Some(m.clock.cycle_source);
    r.overhead_cycles = Some(m.clock.overhead_cycles);
    r.overhead_ns = Some(m.clock.overhead_ns);
    r.tsc_hz = m.clock.tsc_hz;
    r.cpu = m.cpu;
    r.raw_cycles = m.samples.cycles;
    r.raw_ns = m.samples.ns;
    let offset_s = (m.samples.started_unix_ms - run_start_unix_ms) / 1e3;
    r.raw_t_s = m.samples.t_ns.iter().map(|t| offset_s + t / 1e9).collect();
    fill_statistics(&mut r);
    r
}

/// (Re)computes every statistic of a row from its raw samples.
pub fn fill_statistics(r: &mut ResultRow) {
    let c = summarize(&r.raw_cycles);
    let t = summarize(&r.raw_ns);
    let have_cycles = r.cycle_source != Some(cryptoscope_measure::CycleSource::MonotonicNs);
    let cyc = |x: f64| have_cycles.then_some(x);
    r.samples = c.samples;
    r.median_cycles = cyc(c.median);
    r.median_ns = Some(t.median);
    r.ci95_low_cycles = cyc(c.ci95_low);
    r.ci95_high_cycles = cyc(c.ci95_high);
    r.ci95_low_ns = Some(t.ci95_low);
    r.ci95_high_ns = Some(t.ci95_high);
    r.mean_cycles = cyc(c.mean);
    r.mean_ns = Some(t.mean);
    r.stddev_cycles = cyc(c.stddev);
    r.min_cycles = cyc(c.min);
    r.max_cycles = cyc(c.max);
    r.p5_cycles = cyc(c.p5);
    r.p95_cycles = cyc(c.p95);
    r.p99_cycles = cyc(c.p99);
    r.mad_cycles = cyc(c.mad);
    r.outliers = Some(c.outliers);
    r.severe_outliers = Some(c.severe_outliers);
}

/// Adds a later visit's row of the same (subject, operation) to `acc`: samples are
/// appended in time order and statistics recomputed; a failure in any visit makes the
/// whole row a failure (it never gets a number).
pub fn merge_visit(acc: &mut ResultRow, visit: ResultRow) {
    if append_visit(acc, visit) {
        fill_statistics(acc);
    }
}

/// Every visit of one (subject, operation), in time order, as one row: samples appended,
/// statistics computed once at the end (thousands of visits cost one summary, not one
/// each). `None` without visits.
pub fn merge_visits(visits: impl IntoIterator<Item = ResultRow>) -> Option<ResultRow> {
    let mut visits = visits.into_iter();
    let mut acc = visits.next()?;
    let mut appended = false;
    for v in visits {
        appended |= append_visit(&mut acc, v);
    }
    if appended && acc.gate == GateStatus::Pass {
        fill_statistics(&mut acc);
    }
    Some(acc)
}

/// `merge_visit` without the statistics; whether samples were appended.
fn append_visit(acc: &mut ResultRow, visit: ResultRow) -> bool {
    if acc.gate != GateStatus::Pass {
        return false;
    }
    if visit.gate != GateStatus::Pass || visit.median_ns.is_none() {
        *acc = visit;
        return false;
    }
    if acc.visits.is_empty() {
        acc.visits.push(acc.raw_ns.len());
    }
    acc.visits.push(visit.raw_ns.len());
    acc.raw_cycles.extend(visit.raw_cycles);
    acc.raw_ns.extend(visit.raw_ns);
    acc.raw_t_s.extend(visit.raw_t_s);
    acc.stop_reason = visit.stop_reason;
    true
}

/// The operations a run measures of a subject: `--lengths` when given and its family's work
/// grows with a length (`FamilyInfo::at_length`), else the descriptor's own.
pub fn operations(d: &Descriptor, lengths: Option<&[u32]>) -> Vec<Operation> {
    match (lengths, d.family.info().at_length) {
        (Some(l), Some(at)) => l.iter().flat_map(|&n| at(n)).collect(),
        _ => d.operations().to_vec(),
    }
}

/// The worker request measuring `ops` of `d`; `skipped`: some of its operations are stored
/// and left out.
fn measure_request(d: &Descriptor, s: &MeasureSettings, ops: &[Operation], skipped: bool) -> Request {
    let listed = skipped || (d.family.info().at_length.is_some() && s.lengths.is_some());
    Request::Measure {
        subject: d.id.clone(),
        plan: s.plan.clone(),
        budget: s.budget.as_secs_f64(),
        ops: listed.then(|| ops.to_vec()),
        cpu: s.cpu,
        // Whole hertz, as a command line has always carried it.
        tsc_hz: s.tsc_hz.map(f64::round),
        force_tsc: false,
    }
}

/// A visit of `d` that a resumed run does not make, its rows being stored
/// ([`workers::skip_stored`]).
pub fn skip_visit(cat: &Catalogue, d: &Descriptor, s: &MeasureSettings) {
    if let Some(bin) = cat.worker(&d.provider) {
        cat.transport
            .skip_stored(bin, &measure_request(d, s, &operations(d, s.lengths.as_deref()), false));
    }
}

/// Measures one gated subject; returns one row per operation (measured or not). `sink`
/// sees every row as soon as it exists (the store commits it then), so an interruption
/// loses at most the operation being measured.
pub fn measure(
    cat: &Catalogue,
    d: &Descriptor,
    verdict: &Verdict,
    s: &MeasureSettings,
    sink: &mut dyn FnMut(&mut ResultRow),
) -> Result<Vec<ResultRow>> {
    let mut ops = operations(d, s.lengths.as_deref());
    let skipped = match s.stored.get(&d.id) {
        Some(done) => {
            let before = ops.len();
            ops.retain(|o| !done.iter().any(|x| x == o.as_str()));
            before != ops.len()
        }
        None => false,
    };
    if ops.is_empty() {
        return Ok(Vec::new());
    }
    if verdict.status != GateStatus::Pass {
        let mut rows: Vec<ResultRow> = ops
            .iter()
            .map(|o| ResultRow {
                input_check: verdict.input_check.clone(),
                ..ResultRow::without_numbers(d, o.as_str(), verdict.status, verdict.detail.clone())
            })
            .collect();
        rows.iter_mut().for_each(&mut *sink);
        return Ok(rows);
    }
    let bin = cat.worker(&d.provider).context("worker vanished")?;
    let request = measure_request(d, s, &ops, skipped);
    let mut rows: Vec<ResultRow> = Vec::new();
    let outcome = cat.transport.call(bin, &request, s.timeout, &mut |ev| {
        let mut row = match ev {
            Event::Measured(m) => row_from(d, verdict, m, s.run_start_unix_ms),
            Event::OpFailed { operation, error, .. } => ResultRow::without_numbers(
                d,
                operation.as_str(),
                GateStatus::Fail,
                format!("failed while measuring: {error}"),
            ),
            _ => return,
        };
        sink(&mut row);
        rows.push(row);
    });
    if outcome != Outcome::Completed {
        let (status, detail) = match &outcome {
            Outcome::TimedOut(t) => (
                GateStatus::Timeout,
                format!("timed out after {} s while measuring", t.as_secs()),
            ),
            Outcome::Crashed(sig) => (GateStatus::Crashed, format!("crashed while measuring: {sig}")),
            o => (GateStatus::Crashed, o.describe()),
        };
        for o in &ops {
            if !rows.iter().any(|r| r.operation == o.as_str()) {
                let mut row = ResultRow::without_numbers(d, o.as_str(), status, detail.clone());
                sink(&mut row);
                rows.push(row);
            }
        }
    }
    rows.sort_by_key(|r| Operation::parse(&r.operation).map(|o| ops.iter().position(|x| *x == o)));
    Ok(rows)
}

/// The configuration echo written into the run file.
pub fn config_echo(
    sel: &crate::catalog::Selection,
    s: &MeasureSettings,
    quick: bool,
    depth: &str,
    rounds: usize,
    baseline: Option<String>,
) -> RunConfig {
    RunConfig {
        suites: sel.suites.clone(),
        algorithms: sel.algorithms.clone(),
        providers: sel.providers.clone(),
        quick,
        min_samples: s.plan.min_samples,
        max_samples: s.plan.max_samples,
        target_rel_ci: s.plan.target_rel_ci,
        time_budget_s: s.budget.as_secs_f64(),
        cpu: s.cpu,
        kat_depth: depth.into(),
        timeout_s: s.timeout.as_secs_f64(),
        rounds,
        baseline,
        name: None,
    }
}

/// Level shifts of every measured row, by the method of `cryptoscope_measure::shifts`
/// with the report's threshold: (row index, shifts). Also the stability verdict.
pub fn shifts_of(
    rows: &[ResultRow],
) -> (
    Vec<(usize, Vec<cryptoscope_measure::shifts::Shift>)>,
    cryptoscope_measure::env::Stability,
) {
    let ratio = cryptoscope_report::html::SHIFT_RATIO;
    let mut out = Vec::new();
    let mut largest: f64 = 1.0;
    let mut examined = 0;
    for (i, r) in rows.iter().enumerate() {
        if r.raw_ns.is_empty() {
            continue;
        }
        examined += 1;
        let sh = cryptoscope_measure::shifts::level_shifts(&r.raw_ns, ratio);
        for s in &sh {
            if s.before > 0.0 && s.after > 0.0 {
                largest = largest.max(s.after / s.before).max(s.before / s.after);
            }
        }
        if !sh.is_empty() {
            out.push((i, sh));
        }
    }
    let stability = cryptoscope_measure::env::Stability {
        stable: out.is_empty(),
        shifted_operations: out.len(),
        operations: examined,
        largest_change: largest,
        method: format!(
            "binary segmentation of block medians (Scott & Knott), a level change of {:.0}% or more counts",
            ratio * 100.0
        ),
    };
    (out, stability)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_lists_ranges_and_steps() {
        assert_eq!(parse_lengths("8,64").unwrap(), [8, 64]);
        assert_eq!(parse_lengths("0..3").unwrap(), [0, 1, 2, 3]);
        assert_eq!(parse_lengths("0..10/5, 5").unwrap(), [0, 5, 10]);
        assert_eq!(parse_lengths("0..4096").unwrap().len(), 4097);
        for bad in ["", "x", "5..1", "1/2", "0..10/0", "0..2000000000", "0..20000"] {
            assert!(parse_lengths(bad).is_err(), "{bad}");
        }
    }

    fn visit(ns: &[f64]) -> ResultRow {
        use cryptoscope_catalogue::descriptor::{Randomness, Sizes};
        let sizes = Sizes {
            public_key: 32,
            secret_key: 32,
            ciphertext: 0,
            shared_secret: 32,
        };
        let d = Descriptor::catalogued(
            "X25519",
            "openssl",
            "default",
            "3".into(),
            "-".into(),
            sizes,
            Randomness::Internal,
        );
        let mut r = ResultRow::without_numbers(&d, "exchange", GateStatus::Pass, "");
        r.raw_ns = ns.to_vec();
        r.raw_cycles = ns.iter().map(|x| x * 2.0).collect();
        r.raw_t_s = vec![0.0; ns.len()];
        fill_statistics(&mut r);
        r
    }

    #[test]
    fn merging_all_visits_at_once_equals_merging_one_at_a_time() {
        let visits = [visit(&[10.0, 11.0, 12.0]), visit(&[20.0, 21.0]), visit(&[30.0])];
        let mut one = visits[0].clone();
        for v in &visits[1..] {
            merge_visit(&mut one, v.clone());
        }
        let all = merge_visits(visits.iter().cloned()).unwrap();
        assert_eq!(all.visits, [3, 2, 1]);
        assert_eq!(all.raw_ns, [10.0, 11.0, 12.0, 20.0, 21.0, 30.0]);
        assert_eq!(all.median_ns, Some(16.0));
        assert_eq!(
            (all.visits.clone(), all.median_ns, all.samples),
            (one.visits, one.median_ns, one.samples)
        );
        // A failed visit makes the whole row the failure.
        let mut failed = visit(&[]);
        (failed.gate, failed.median_ns) = (GateStatus::Fail, None);
        let m = merge_visits([visits[0].clone(), failed, visits[1].clone()]).unwrap();
        assert_eq!((m.gate, m.median_ns), (GateStatus::Fail, None));
        assert!(merge_visits(std::iter::empty()).is_none());
    }
}
