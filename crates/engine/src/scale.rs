//! `cryptoscope scale`: throughput of each operation on 1, 2, 4, … threads, every thread
//! with its own keys and buffers, in the subject's worker process.

use anyhow::{Context, Result};
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_catalogue::Operation;
use cryptoscope_model::{finish_scaling, GateStatus, ResultRow, ScalePoint};
use cryptoscope_worker::Event;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::catalog::Catalogue;
use crate::workers::Outcome;

/// What `scale` runs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub threads: Vec<usize>,
    pub duration: Duration,
    pub ops: Option<Vec<Operation>>,
}

/// Points and knee of one operation, or why there are none.
pub type OpOutcome = std::result::Result<(Vec<ScalePoint>, Option<usize>), (GateStatus, String)>;

/// The default thread counts: 1, 2, 4, … up to four times the logical CPUs.
pub fn default_threads(logical: usize) -> Vec<usize> {
    let mut v = vec![1];
    while v[v.len() - 1] < 4 * logical.max(1) {
        let next = (v[v.len() - 1] * 2).min(4 * logical.max(1));
        v.push(next);
    }
    v
}

/// Parses "1,2,4,8".
pub fn parse_threads(s: &str) -> std::result::Result<Vec<usize>, String> {
    let mut v: Vec<usize> = s
        .split(',')
        .map(|x| x.trim().parse::<usize>().ok().filter(|&n| (1..=4096).contains(&n)))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            format!("--threads {s}: expected a comma-separated list of counts from 1 to 4096, e.g. 1,2,4,8")
        })?;
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Runs every thread count of every selected operation of one gated subject.
pub fn measure(
    cat: &Catalogue,
    d: &Descriptor,
    s: &Settings,
    timeout: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<BTreeMap<String, OpOutcome>> {
    let bin = cat.worker(&d.provider).context("worker vanished")?;
    let mut out = BTreeMap::new();
    for op in d.operations() {
        if s.ops.as_ref().is_some_and(|o| !o.contains(&op)) {
            continue;
        }
        let mut points = Vec::new();
        let mut failure = None;
        for &t in &s.threads {
            progress(&format!("{} {} on {t} threads", d.id, op.as_str()));
            let request = cryptoscope_model::protocol::Request::Scale {
                subject: d.id.clone(),
                op,
                threads: t,
                duration: s.duration.as_secs_f64(),
            };
            let mut got = None;
            let outcome = cat.transport.call(bin, &request, timeout, &mut |ev| match ev {
                Event::Scaled(r) => got = Some(Ok(ScalePoint::new(r.threads, r.per_thread, &r.seconds))),
                Event::OpFailed { error, .. } => got = Some(Err(error)),
                _ => {}
            });
            match (outcome, got) {
                (Outcome::Completed, Some(Ok(p))) => points.push(p),
                (_, Some(Err(e))) => {
                    failure = Some((GateStatus::Fail, format!("failed on {t} threads: {e}")));
                    break;
                }
                (Outcome::TimedOut(d), _) => {
                    failure = Some((
                        GateStatus::Timeout,
                        format!("timed out after {} s on {t} threads", d.as_secs()),
                    ));
                    break;
                }
                (o, _) => {
                    failure = Some((GateStatus::Crashed, format!("on {t} threads: {}", o.describe())));
                    break;
                }
            }
        }
        let r = match failure {
            Some(f) => Err(f),
            None => {
                let knee = finish_scaling(&mut points);
                Ok((points, knee))
            }
        };
        out.insert(op.as_str().to_string(), r);
    }
    Ok(out)
}

/// Puts an operation's scaling into its row; a failure makes the row a failure.
pub fn apply(row: &mut ResultRow, outcome: Option<&OpOutcome>) {
    match outcome {
        Some(Ok((points, knee))) => {
            row.scaling = Some(points.clone());
            row.scale_knee_threads = *knee;
        }
        Some(Err((status, detail))) if row.gate == GateStatus::Pass => {
            *row = ResultRow::without_numbers_like(row, *status, detail.clone());
        }
        _ => {}
    }
}

/// Throughput per thread count, the knee and the evenness of threads, one line per
/// (subject, operation).
pub fn table(rows: &[ResultRow], threads: &[usize], logical: usize, cores: Option<usize>, smt: Option<bool>) -> String {
    let mut header: Vec<String> = ["algorithm", "provider", "impl", "op"].map(String::from).to_vec();
    header.extend(threads.iter().map(|t| format!("{t} thr ops/s")));
    header.extend(["eff. at knee", "knee", "min/max thr"].map(String::from));
    let mut out_rows = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.scaling.is_some() || r.gate != GateStatus::Pass)
    {
        let mut cells = vec![
            r.algorithm.clone(),
            r.provider.clone(),
            r.implementation.clone(),
            r.operation.clone(),
        ];
        match &r.scaling {
            Some(points) => {
                for t in threads {
                    cells.push(
                        points
                            .iter()
                            .find(|p| p.threads == *t)
                            .map(|p| cryptoscope_report::table::group(p.ops_per_s))
                            .unwrap_or_default(),
                    );
                }
                let at_knee = r
                    .scale_knee_threads
                    .and_then(|k| points.iter().find(|p| p.threads == k));
                cells.push(
                    at_knee
                        .and_then(|p| p.efficiency)
                        .map(|e| format!("{:.0}%", e * 100.0))
                        .unwrap_or_default(),
                );
                cells.push(r.scale_knee_threads.map(|k| k.to_string()).unwrap_or_default());
                cells.push(
                    points
                        .iter()
                        .map(|p| p.min_max_ratio)
                        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))))
                        .map(|x| format!("{x:.2}"))
                        .unwrap_or_default(),
                );
            }
            None => {
                cells.push(r.gate.as_str().to_string());
                cells.extend(std::iter::repeat_n(String::new(), threads.len() + 2));
            }
        }
        out_rows.push(cells);
    }
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<bool> = (0..h.len()).map(|i| i >= 4).collect();
    let mut s = cryptoscope_report::table::render(&h, &out_rows, &right);
    s.push_str(&format!(
        "Knee: the fewest threads beyond which no thread count gives 10% more throughput; this machine has {logical} logical CPUs{}.\n\
eff.: throughput / (threads x one-thread throughput). min/max thr: the least even thread count's fewest / most calls per thread.\n",
        match (cores, smt) {
            (Some(c), Some(true)) => format!(" on {c} cores (SMT on)"),
            (Some(c), _) => format!(" on {c} cores (no SMT)"),
            _ => String::new(),
        }
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists() {
        assert_eq!(default_threads(2), vec![1, 2, 4, 8]);
        assert_eq!(default_threads(3), vec![1, 2, 4, 8, 12]);
        assert_eq!(parse_threads("4, 1,2,2").unwrap(), vec![1, 2, 4]);
        assert!(parse_threads("0,1").is_err());
        assert!(parse_threads("a").is_err());
    }
}
